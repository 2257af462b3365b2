"""Old import paths: a public module or name that moved keeps its old path for one release, with a
DeprecationWarning naming the new one (ARCHITECTURE.md, invariants; CHANGELOG.md, Deprecated).

The old paths and the names each module had come from the repository's history, not from the code
under test: ``git log --diff-filter=DR --name-status`` (the house's move into sub-packages, e52960e; the
engine split, ca4d711 and 812cf0f; irspec/stats.py and irspec/spec.py turned into packages), each old
module's ``__all__`` (or its public definitions) at its last commit, and the README's and the docs'
imports over time (``import irspec.spark``, ``from irspec import design``, ``from irspec import stats``).
The checks run in a fresh interpreter (one for the module), each forgetting the old modules first, so
that every old module is imported (and warns) for the first time and nothing is left behind in this
process's ``sys.modules``.

:data:`RELEASE_0_1_0` then holds the public module paths and face names of irspec 0.1.0: removing or
moving one without a module at the old path fails here, before a user finds out.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import irspec

ROOT = Path(irspec.__file__).resolve().parent.parent

# old module -> (the module it became, the public names it had)
MOVED_MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "irspec.comparison": (
        "irspec.experiment.records",
        ("TESTS", "TUKEY_TESTS", "CORRECTIONS", "FAMILIES", "Compare", "Comparison"),
    ),
    "irspec.comparisons": (
        "irspec.experiment.compare",
        ("Comparisons", "compare", "compare_results", "comparison_pairs", "common_matrix", "metrics_to_compare", "named_results"),
    ),
    "irspec.concordance": (
        "irspec.stats.concordance",
        ("kendall_tau_b", "tau_ap", "swapped_pairs", "cohen_kappa", "krippendorff_alpha_ordinal", "confusion_matrix", "binary", "WEIGHTS"),
    ),
    "irspec.context": (
        "irspec.evaluation.context",
        ("Options", "Context", "QueryView", "IndexedQrels", "UNJUDGED", "segment_rows", "segment_cumsum", "safe_divide"),
    ),
    "irspec.datasets": (
        "irspec.data.datasets",
        ("PREFIX", "is_dataset_id", "check_qrels", "qrels_records", "qrels_frame", "official_specs", "parse_specs"),
    ),
    "irspec.definitions": (
        "irspec.spec.definitions",
        ("ParamKind", "Aggregate", "Better", "MAX_COUNT", "MAX_GAIN", "RESERVED_INPUTS", "Param", "MetricDef", "Alias", "Redirect", "MetricGroup", "InputReader", "InputTable", "UNIT", "NONNEGATIVE", "Metric", "GainMap", "each", "echoes_text"),
    ),
    "irspec.design": (
        "irspec.stats.design",
        ("MIN_TOPICS", "t_power", "t_topics", "t_detectable", "t_normal_topics", "anova_power", "anova_topics", "anova_detectable", "anova_noncentrality", "check_target"),
    ),
    "irspec.evaluator": ("irspec.evaluation.evaluator", ("Evaluator",)),
    "irspec.frames": ("irspec.data.frames", ("BACKENDS", "check_backend", "make_frame")),
    "irspec.groups": (
        "irspec.experiment.groups",
        ("GroupTable", "read_groups", "as_groups", "by_group", "with_groups", "TITLE"),
    ),
    "irspec.hookspecs": (
        "irspec.spec.hooks",
        ("hookspec", "hookimpl", "irspec_register_metrics", "irspec_register_readers"),
    ),
    "irspec.inputs": ("irspec.evaluation.inputs", ("evaluate_input", "input_kind", "read_input")),
    "irspec.kernels": ("irspec.builtin.kernels", ()),
    "irspec.kernels.bpref": ("irspec.builtin.kernels.bpref", ("bpref",)),
    "irspec.kernels.counts": (
        "irspec.builtin.kernels.counts",
        ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"),
    ),
    "irspec.kernels.gain": ("irspec.builtin.kernels.gain", ("gain_of", "discount", "dcg", "idcg", "ndcg", "cg")),
    "irspec.kernels.preference": ("irspec.builtin.kernels.preference", ("compat", "accuracy")),
    "irspec.kernels.ranks": (
        "irspec.builtin.kernels.ranks",
        ("average_precision", "reciprocal_rank", "r_precision", "iprec_at", "interpolated_precision", "eleven_point", "search_length", "INFAP_EPSILON", "inferred_ap", "yaap"),
    ),
    "irspec.kernels.sets": (
        "irspec.builtin.kernels.sets",
        ("precision", "recall", "f_measure", "relative_precision", "success", "judged", "fallout", "set_ap"),
    ),
    "irspec.kernels.trec_misc": (
        "irspec.builtin.kernels.trec_misc",
        ("utility", "bin_g", "g", "ndcg_rel", "rndcg", "rbp_resid", "unjudged", "relstring"),
    ),
    "irspec.plots": (
        "irspec.report.plots",
        ("IPREC_SPECS", "MISSING_MATPLOTLIB", "ROC_CUTOFFS", "CONFUSION_K", "JITTER_SEED", "Confusion", "FigureData", "figure_specs", "figure_data", "Plot", "require_matplotlib", "precision_recall", "render", "render_files", "group_figure", "power_figure", "render_power", "agreement_figure", "render_agreement"),
    ),
    "irspec.plugins": (
        "irspec.spec.plugins",
        ("DEFAULT_PLUGINS", "ENTRY_POINT_GROUP", "PluginManager", "get_plugin_manager", "build_registry", "get_registry", "use_registry", "plugin_report"),
    ),
    "irspec.power_analysis": (
        "irspec.experiment.power",
        ("PairPower", "AnovaPower", "PowerCurve", "PowerAnalysis", "power"),
    ),
    "irspec.registry": (
        "irspec.spec.registry",
        ("Param", "MetricDef", "UNIT", "NONNEGATIVE", "Alias", "Redirect", "MetricGroup", "InputReader", "InputTable", "Metric", "Register", "Registry", "each", "MAX_COUNT", "MAX_GAIN", "GainMap", "ParamKind", "Aggregate", "Better", "DATASET_MEASURES", "JUDGED_ONLY", "SHIPPED_PLUGIN_NAMES", "REFUSED_SPELLINGS"),
    ),
    "irspec.resampling": (
        "irspec.stats.resampling",
        ("MAX_DECIMALS", "MAX_RESAMPLES", "quantise", "sign_flip_exact", "sign_flip_hits", "bootstrap_sums", "tukey_ranges"),
    ),
    "irspec.spark": (
        "irspec.evaluation.spark",
        ("evaluate", "aggregate", "results", "session", "read_qrels", "read_run", "OUTPUT_SCHEMA", "MAX_PARTITIONS"),
    ),
    "irspec.stream": (
        "irspec.data.stream",
        ("Partitions", "RunBlocks", "default_memory", "open_run", "parse_memory", "spill_directory"),
    ),
    "irspec.systems": (
        "irspec.evaluation.systems",
        ("SEED_CAVEAT", "Spread", "SystemResult", "combine", "expand_runs", "evaluate", "systems_of"),
    ),
    "irspec.zscores": (
        "irspec.experiment.standardize",
        ("StandardizedMetric", "ZTable", "read_small_text", "results_of", "shaped_like", "standardize", "read_z", "z_table", "SETTINGS_TITLE"),
    ),
}  # fmt: skip

_RESULTS = {
    "Result": "irspec.evaluation.result.Result",
    "ResultSet": "irspec.evaluation.result_set.ResultSet",
    "Shown": "irspec.report.notebook.Shown",
    "evaluate": "irspec.evaluation.result_set.evaluate",
    "evaluate_input": "irspec.evaluation.inputs.evaluate_input",
    "several_runs": "irspec.evaluation.evaluate.several_runs",
    "one_mapping_run": "irspec.evaluation.evaluate.one_mapping_run",
}
_ENGINE = {
    "Result": "irspec.evaluation.result.Result",
    "Part": "irspec.evaluation.parts.Part",
    "evaluate_part": "irspec.evaluation.parts.evaluate_part",
    "evaluate_parts": "irspec.evaluation.parts.evaluate_parts",
    "finish": "irspec.evaluation.parts.finish",
    "evaluate_many": "irspec.evaluation.evaluate.evaluate_many",
    "issue_warnings": "irspec.evaluation.evaluate.issue_warnings",
    "distinct_names": "irspec.evaluation.evaluate.distinct_names",
    "collect_warnings": "irspec.evaluation.evaluated.collect_warnings",
    "results_frame": "irspec.evaluation.evaluated.results_frame",
}
# old module, split -> each public name it had -> where that object is now
SPLIT_MODULES: dict[str, dict[str, str]] = {
    "irspec.engine": {
        **_ENGINE,
        "Options": "irspec.evaluation.context.Options",
        "bind_metrics": "irspec.evaluation.compute.bind_metrics",
        "compute_metric": "irspec.evaluation.compute.compute_metric",
        "QrelsIndex": "irspec.evaluation.index.QrelsIndex",
        "index_qrels": "irspec.evaluation.index.index_qrels",
        "build_context": "irspec.evaluation.ranking.build_context",
        "Judgments": "irspec.evaluation.judgments.Judgments",
        "read_judgments": "irspec.evaluation.judgments.read_judgments",
        "reads_qrels": "irspec.evaluation.judgments.reads_qrels",
        "read_input": "irspec.evaluation.judgments.read_input",
    },
    "irspec.evaluation.engine": _ENGINE,
    "irspec.results": _RESULTS,
    "irspec.evaluation.results": _RESULTS,
    "irspec.agreements": {
        **{
            n: f"irspec.experiment.agreement.{n}"
            for n in ("Agreement", "RankingAgreement", "Swap", "LabelAgreement", "SignificanceChange")
        },
        "agreement": "irspec.experiment.agreement.agreement",
        "agreement_of": "irspec.experiment.agreement.agreement_of",
        # renamed when the presentation went to the report layer (96284a1): same signature, same output
        "combine": "irspec.report.agreement.judged_sets_text",
        "COMBINED_FORMATS": "irspec.report.agreement.COMBINED_FORMATS",
    },
}

# a name of a module that became a package (irspec/stats.py -> irspec/stats/) -> where it is now
MOVED_NAMES: dict[str, str] = {
    **{
        f"irspec.stats.{n}": f"irspec.stats.significance.{n}"
        for n in (
            "TESTS", "ADJUST_METHODS", "BOOTSTRAP_METHODS", "ZERO_METHODS", "NULL_HYPOTHESES", "paired",
            "adjust", "tukey", "residual_variance", "bootstrap_ci", "INTERVAL_METHODS", "mean_ci",
        )
    },
    "irspec.stats.ComparisonResult": "irspec.stats.outcome.ComparisonResult",
    "irspec.stats.PairResult": "irspec.stats.outcome.PairResult",
    **{
        f"irspec.spec.{n}": f"irspec.spec.syntax.{n}"
        for n in (
            "Number", "Symbol", "String", "BinOp", "Neg", "DictLit", "ListLit", "Expr", "SpecNode",
            "parse_syntax", "expr_text", "evaluate_expr", "free_symbols",
        )
    },
    "irspec.plan.Compare": "irspec.experiment.records.Compare",
    "irspec.plan.Comparison": "irspec.experiment.records.Comparison",
    "irspec.plan.compare_results": "irspec.experiment.compare.compare_results",
}  # fmt: skip

# `git ls-tree -r 7bca1b0 irspec` (the tree of 0.1.0, the CHANGELOG's first version): its public modules
RELEASE_0_1_0: tuple[str, ...] = (
    "irspec", "irspec.builtin", "irspec.builtin.bpref", "irspec.builtin.counts", "irspec.builtin.fusion",
    "irspec.builtin.fusion_learning", "irspec.builtin.gain", "irspec.builtin.groups", "irspec.builtin.kernels",
    "irspec.builtin.kernels.bpref", "irspec.builtin.kernels.counts", "irspec.builtin.kernels.fusion",
    "irspec.builtin.kernels.fusion_learning", "irspec.builtin.kernels.gain", "irspec.builtin.kernels.preference",
    "irspec.builtin.kernels.ranks", "irspec.builtin.kernels.sets", "irspec.builtin.kernels.trec_misc",
    "irspec.builtin.preference", "irspec.builtin.ranks", "irspec.builtin.sets", "irspec.builtin.trec_misc",
    "irspec.cli", "irspec.compat", "irspec.compat.pytrec_eval", "irspec.data", "irspec.data.arrays",
    "irspec.data.datasets", "irspec.data.frames", "irspec.data.kinds", "irspec.data.objects", "irspec.data.parquet",
    "irspec.data.stream", "irspec.data.trec", "irspec.errors", "irspec.evaluation", "irspec.evaluation.compute",
    "irspec.evaluation.context", "irspec.evaluation.evaluate", "irspec.evaluation.evaluated",
    "irspec.evaluation.evaluator", "irspec.evaluation.index", "irspec.evaluation.inputs",
    "irspec.evaluation.judgments", "irspec.evaluation.means", "irspec.evaluation.notes", "irspec.evaluation.parts",
    "irspec.evaluation.ranking", "irspec.evaluation.result", "irspec.evaluation.result_set",
    "irspec.evaluation.similarity", "irspec.evaluation.spark", "irspec.evaluation.systems", "irspec.experiment",
    "irspec.experiment.agreement", "irspec.experiment.compare", "irspec.experiment.diff", "irspec.experiment.groups",
    "irspec.experiment.power", "irspec.experiment.records", "irspec.experiment.reproduce",
    "irspec.experiment.standardize", "irspec.fusion", "irspec.fusion.engine", "irspec.fusion.tuning", "irspec.lazy",
    "irspec.lines", "irspec.plan", "irspec.plan.execute", "irspec.plan.load", "irspec.plan.model",
    "irspec.plan.problems", "irspec.plan.resolve", "irspec.plugin_api", "irspec.progress", "irspec.report",
    "irspec.report.agreement", "irspec.report.data", "irspec.report.diff", "irspec.report.files",
    "irspec.report.formats", "irspec.report.html", "irspec.report.latex", "irspec.report.markdown",
    "irspec.report.marks", "irspec.report.model", "irspec.report.notebook", "irspec.report.origin",
    "irspec.report.parquet", "irspec.report.plots", "irspec.report.power", "irspec.report.reproduce",
    "irspec.report.text", "irspec.report.trec", "irspec.spec", "irspec.spec.catalog", "irspec.spec.definitions",
    "irspec.spec.fusion", "irspec.spec.hooks", "irspec.spec.plugins", "irspec.spec.registry", "irspec.spec.syntax",
    "irspec.stats", "irspec.stats.concordance", "irspec.stats.design", "irspec.stats.outcome",
    "irspec.stats.resampling", "irspec.stats.significance", "irspec.stats.similarity", "irspec.stats.student",
    "irspec.testing", "irspec.version",
)  # fmt: skip
# irspec.__all__ at 7bca1b0
FACE_0_1_0: tuple[str, ...] = (
    "Alias", "EvaluationError", "Evaluator", "Fusion", "FusionDef", "InputError", "InputReader", "InputTable",
    "IrspecError", "IrspecWarning", "Metric", "MetricDef", "MetricGroup", "Param", "ParameterError", "PlanError",
    "PowerAnalysis", "RegistryError", "Reproduction", "Result", "ResultSet", "Similarity", "SpecError",
    "SpecSyntaxError", "UnknownMetricError", "__version__", "agreement", "by_group", "compare", "cross_fuse", "diff",
    "evaluate", "evaluate_input", "evaluate_many", "fuse", "hookimpl", "load_plan", "metrics", "parse", "parse_many",
    "power", "read_qrels", "read_run", "reproduce", "run_plan", "similarity", "standardize", "tune_fusion",
    "with_groups",
)  # fmt: skip

# The child: each check in its own catch_warnings, in this file (so a warning's filename says whose line it
# blames), the old modules forgotten first (so that each check imports them as old code would, the first
# time), a JSON line of what it saw.
CHILD = r"""
import importlib, json, sys, warnings
checks, old_paths = json.loads(sys.argv[1]), json.loads(sys.argv[2])

def forget():
    for name in list(sys.modules):
        if any(name == old or name.startswith(old + ".") for old in old_paths):
            parent, _, child = name.rpartition(".")
            del sys.modules[name]
            if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
                delattr(sys.modules[parent], child)

def resolve(dotted):
    if dotted in sys.modules:  # a module, by its own name: a package's attribute for it may be gone,
        return sys.modules[dotted]  # forget() having deleted it through an old path to the same package
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)

def attempt(code, names):
    forget()
    scope = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(code, __file__, "exec"), scope)
        except Exception as e:
            return {"error": f"{type(e).__name__}: {e}"}
    out = {"warnings": [[w.category.__name__, str(w.message), w.filename] for w in caught]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out["same"] = {n: scope[n] is resolve(target) for n, target in names.items()}
    return out

print(json.dumps({key: attempt(code, names) for key, (code, names) in checks.items()}))
"""


def _run_checks(tmp_path: Path, checks: dict[str, tuple[str, dict[str, str]]]) -> dict:
    """Each check, ``key: (code, {name the code binds: where that object is now})``, run in one fresh
    interpreter; what each saw: its warnings (category, message, file) and whether each name is the
    object at its new path."""
    child = tmp_path / "old_code.py"
    child.write_text(CHILD, encoding="utf-8")
    env = dict(os.environ, IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            str(child),
            json.dumps(checks),
            json.dumps(sorted({*MOVED_MODULES, *SPLIT_MODULES})),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _one_deprecation(seen: dict, child: Path, *names: str) -> None:
    """One DeprecationWarning, blaming the old code's own line, naming each of ``names``."""
    assert "error" not in seen, seen
    assert len(seen["warnings"]) == 1, seen["warnings"]
    category, message, filename = seen["warnings"][0]
    assert category == "DeprecationWarning" and Path(filename) == child, seen["warnings"]
    for name in names:
        assert name in message, (name, message)


def _spark_or_skip(old: str) -> None:
    if old == "irspec.spark" and importlib.util.find_spec("pyspark") is None:
        pytest.skip("irspec.spark is irspec.evaluation.spark, which needs pyspark: pip install -e '.[spark]'")


def _moved_checks(old: str) -> dict[str, tuple[str, dict[str, str]]]:
    """The checks of a moved module: imported, its names imported from it, and (a module at the top)
    imported from the face."""
    new, names = MOVED_MODULES[old]
    checks = {
        "import": (f"import {old} as module\nimport {new} as new", {"module": f"{new.rpartition('.')[0]}.{new.rpartition('.')[2]}"}),
        "from": (f"from {old} import {', '.join(names)}" if names else "pass", {n: f"{new}.{n}" for n in names}),
    }  # fmt: skip
    if old.count(".") == 1:  # `from irspec import design`, as the README once showed
        checks["face"] = (f"from irspec import {old.rpartition('.')[2]} as module", {"module": new})
    return checks


def _name_checks() -> dict[str, tuple[str, dict[str, str]]]:
    """The checks of the names of modules that became packages: imported from the package, and read as
    its attribute."""
    checks = {}
    for old, new in MOVED_NAMES.items():
        package, _, name = old.rpartition(".")
        checks[f"from {old}"] = (f"from {package} import {name}", {name: new})
        checks[f"attribute {old}"] = (f"import {package}\nvalue = {old}", {"value": new})
    return checks


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """Every check of the tests below, run in one fresh interpreter (as each test's two or three checks
    were: each check forgets the old modules first, so it imports them as old code would, the first
    time; an interpreter a test took 0.2 s of CPU: issue 35): what each saw, by test and check, and the
    child's file, which the warnings blame."""
    folder = tmp_path_factory.mktemp("old_code")
    checks = {
        f"moved {old} {key}": check for old in MOVED_MODULES for key, check in _moved_checks(old).items()
    }
    checks |= {f"split {old}": ("from " + old + " import " + ", ".join(SPLIT_MODULES[old]), SPLIT_MODULES[old]) for old in SPLIT_MODULES}  # fmt: skip
    checks |= {f"names {key}": check for key, check in _name_checks().items()}
    return _run_checks(folder, checks), folder / "old_code.py"


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_a_moved_module_is_there_at_its_old_path_warning(old, seen):
    _spark_or_skip(old)
    new, names = MOVED_MODULES[old]
    found, child = seen
    got = {key: found[f"moved {old} {key}"] for key in _moved_checks(old)}
    _one_deprecation(got["import"], child, old, new)
    assert got["import"]["same"] == {"module": True}  # the module itself, not a copy
    if names:
        assert got["from"]["same"] == dict.fromkeys(names, True)
    if "face" in got:
        _one_deprecation(got["face"], child, old, new)
        assert got["face"]["same"] == {"module": True}


@pytest.mark.parametrize("old", sorted(SPLIT_MODULES))
def test_a_split_module_is_there_at_its_old_path_warning_where_each_name_went(old, seen):
    names = SPLIT_MODULES[old]
    found, child = seen
    homes = {target.rpartition(".")[0] for target in names.values()}
    _one_deprecation(found[f"split {old}"], child, old, *homes)
    assert found[f"split {old}"]["same"] == dict.fromkeys(names, True)


def test_a_name_of_a_module_that_became_a_package_is_there_warning(seen):
    found, child = seen
    for old, new in MOVED_NAMES.items():
        for form in ("from", "attribute"):
            got = found[f"names {form} {old}"]
            _one_deprecation(got, child, old, new)
            assert all(got["same"].values()), (old, got)


def test_every_public_module_and_face_name_of_the_last_release_is_there():
    # A module of 0.1.0 moved or removed without a module at its old path (irspec.lazy.moved_module) fails
    # here; after a release of warnings an old path may go, and this list with it, on purpose.
    missing = [m for m in RELEASE_0_1_0 if importlib.util.find_spec(m) is None]
    assert missing == []
    assert [n for n in FACE_0_1_0 if n not in irspec.__all__] == []


def test_importing_irspec_loads_no_old_path():
    code = "import irspec, sys; print(sorted(m for m in sys.modules if m.startswith('irspec')))"
    env = dict(os.environ, IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    loaded = set(eval(out.stdout))  # a list of strings, printed by the child
    assert loaded.isdisjoint(MOVED_MODULES) and loaded.isdisjoint(SPLIT_MODULES)
