"""The import rules of irspec/, read from the source with :mod:`ast`.

Every ``import`` in a module of ``irspec/`` is an arrow, wherever it sits: at the top, under
``if TYPE_CHECKING:`` or inside a function (an import moved into a function to keep ``import irspec``
light is still a dependency). The rules, in the order a reader meets them:

1. No cycle between irspec modules. A module named in a ``_LAZY`` table (the face's, ``plugin_api``'s:
   imported by name on first use) is an arrow too, from inside a function.
2. :data:`LAYERS` is the house, bottom to top: a module may import modules of lower layers, and of its
   own layer only inside its own package (``kernels.sets`` -> ``kernels.gain``). So the spec and the
   registry know nothing of files, kernels know the context and not the engine, stats know nothing of
   the engine, the engine nothing of plans, reports or the command line, reports nothing of plans.
   Nothing imports the package face ``irspec/__init__``: ``import irspec`` or
   ``from irspec import parse_many`` inside the library is an arrow to the top layer
   (``from irspec import spec`` names a submodule and is an arrow to it).
3. The layers below :data:`FIRST_HEAVY_LAYER` import none of :data:`HEAVY`.
4. Laziness lives at the edges: only :data:`LAZY_EDGES` import irspec modules or :data:`HEAVY` modules
   inside functions; everywhere else they are imported at the top, where a reader sees them. The face,
   ``plugin_api`` and the CLI (:data:`EDGES`) import, at module level, only the light layers.
5. The shipped plugins (``plugins/*/irspec_*``) import of irspec only the face and ``irspec.plugin_api``;
   each has no import cycle, follows its own small :data:`PLUGIN_LAYERS` (its declarations, which
   irspec imports whenever it builds a registry, import nothing heavy), and imports inside functions
   only what :data:`PLUGIN_LAZY` lists, with the reason.
6. The old paths of moved modules (:data:`DEPRECATED`, kept for one release with a DeprecationWarning)
   are a layer at the top that nothing inside the package imports; an old name a package keeps in its
   ``_MOVED`` table is an arrow as a ``_LAZY`` table's is, exempt from rule 4 only (it loads where the
   old path is used).

:data:`PENDING` lists arrows that break a rule while other work removes them (none today);
it must match exactly, so an entry disappears as soon as its arrow does.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

import irspec

# The layers of irspec/, bottom to top; names are modules or packages relative to irspec/.
DEPRECATED: tuple[str, ...] = (
    "agreements",
    "comparison",
    "comparisons",
    "concordance",
    "context",
    "datasets",
    "definitions",
    "design",
    "engine",
    "evaluation.engine",
    "evaluation.results",
    "evaluator",
    "frames",
    "groups",
    "hookspecs",
    "inputs",
    "kernels",
    "plots",
    "plugins",
    "power_analysis",
    "registry",
    "resampling",
    "results",
    "spark",
    "stream",
    "systems",
    "zscores",
)
"""The old paths of modules that moved (``irspec.spark``, now ``irspec.evaluation.spark``), each kept for
one release as a module that imports where its names went and warns (``irspec.lazy.moved_module``,
``moved_names``). They sit in a layer of their own at the top, and nothing inside the package imports
them (:func:`test_nothing_imports_a_deprecated_path`); the list is held equal to the modules that call
those functions, so that it exempts nothing else."""

LAYERS: list[tuple[str, ...]] = [
    ("evaluation", "experiment", "fusion"),  # packages whose __init__ is only a docstring
    (
        "errors",
        "version",
        "progress",
        "lazy",
        "frozen",
    ),  # leaves: errors, the version string, terminal progress, names loaded on first use, value classes
    ("lines",),  # lines of bounded length, read a piece at a time (every reader of lines)
    (
        "evaluation.workers",
    ),  # what irspec's functions do first in a Spark worker (pyspark imported on a call)
    ("spec.syntax",),  # metric-spec text -> syntax tree -> canonical text
    ("spec",),  # the package: the old names of irspec.spec the module (spec.syntax's), kept for a release
    ("spec.definitions",),  # what plugins declare (Param, MetricDef, ...) and the bound Metric
    ("spec.registry",),  # the name table; binds syntax trees to metric definitions
    ("spec.fusion",),  # fusion specs bound to registered fusion methods
    ("spec.hooks",),  # the pluggy hooks
    ("spec.manager",),  # pluggy's plugin manager, made only when a plugin is to be loaded
    ("spec.plugins", "builtin"),  # the registry of the plugins; the built-in metrics' declarations
    (
        "spec.catalog",
        "spec.methods",
    ),  # the metrics and the registry as `irspec parse --json` and `irspec metrics` show them; method specs bound
    ("testing",),  # the pytest fixture that registers a plugin for one test
    (
        "stats.resampling",
        "stats.student",
        "stats.outcome",
        "data.frames",
        "data.kinds",
        "data.keys",
    ),  # resampling; the t quantile; a test's record; frames out; qrels or run; keys of docnos' bytes
    (
        "data.trec",
        "data.objects",
        "data.arrays",
        "data.parquet",
        "data.datasets",
    ),  # TREC text; dicts, DataFrames; Parquet, Arrow; irds:
    ("data",),  # Qrels and Run, read_qrels and read_run, the checks every input goes through
    ("data.small",),  # small TREC files and dicts of qrels read without polars (for evaluation)
    ("data.plain",),  # large clean TREC runs (and their qrels) read by numpy alone (for evaluation)
    ("data.stream",),  # a run too large for memory, read as blocks of whole queries; the memory budget
    ("evaluation.context", "evaluation.means"),  # what kernels compute from; trec_eval's means
    (
        "evaluation.pure",
    ),  # P, recall, AP, nDCG and RR of small dicts in pure Python (the pytrec_eval drop-in's)
    (
        "stats.significance",
        "stats.design",
        "stats.concordance",
        "stats.similarity",
    ),  # significance tests, corrections, effect sizes; power and topic set size design; agreement statistics;
    # rank similarity of two lists (RBO, KTU, Jaccard)
    (
        "stats",
    ),  # the package: the old names of irspec.stats the module (significance's, outcome's), for a release
    ("builtin.kernels",),  # the built-in metrics' numpy computations
    ("evaluation.index",),  # the qrels indexed once for any number of runs
    ("evaluation.notes",),  # the warnings' text: queries a run lacks or adds, relevance levels, judged share
    ("evaluation.ranking",),  # a run joined with the qrels and ranked as trec_eval ranks: the Context
    ("evaluation.compute",),  # metrics bound; their kernels called on a context (through the registry)
    ("evaluation.judgments",),  # the qrels, or a plugin's input read in place of them, for any number of runs
    (
        "evaluation.evaluated",
    ),  # what every result is to its readers (reports read results only through it); frames, warnings
    (
        "evaluation.similarity",
    ),  # rank similarity of two runs (RBO, KTU, Jaccard) per query: irspec.similarity
    ("experiment.records",),  # the compare step's records: its settings and one comparison
    ("report.svg", "report.figures"),  # an SVG chart writer; what the figures draw, computed from results
    ("report.charts",),  # the figures written as SVG
    ("report.plots",),  # the figures as files: SVG, and PNG drawn with matplotlib
    ("report",),  # every output format and the notebook display, from results (Evaluated) and comparisons
    ("fusion.engine",),  # runs fused into one by a fusion spec, block by block (irspec fuse, irspec.fuse)
    ("evaluation.result",),  # one run's values and means: irspec.Result, shown in a notebook through report
    ("evaluation.parts",),  # a run evaluated in parts (blocks, batches) and the parts made one Result
    ("evaluation.evaluate",),  # runs evaluated against qrels read once: names made distinct, warnings issued
    ("evaluation.inputs",),  # plugin input kinds (an interaction log), evaluated into a Result
    ("evaluation.workers",),  # what irspec's functions do first in a Spark worker (pyspark loaded on a call)
    (
        "evaluation.spark",
    ),  # Spark DataFrames evaluated by the engine, bucket by bucket (irspec[spark]; imports pyspark)
    (
        "experiment.standardize",
    ),  # standardised scores: z per topic from reference runs or trec_eval's -Z file
    ("experiment.groups",),  # per-group means with their intervals, macro and micro means
    ("evaluation.result_set",),  # several runs' results as one mapping (ResultSet); irspec.evaluate
    ("evaluation.systems",),  # systems of several runs (seeds): the mean per topic, the runs' spread
    (
        "evaluation.evaluator",
    ),  # qrels and metrics prepared once: runs, top-k arrays and batches evaluated again and again
    (
        "recsys.propensity",
        "recsys.features",
        "recsys.ranked",
        "recsys.matrices",
        "recsys.tables",
        "recsys.sampling",
    ),  # recommenders: propensities; items' features, expected items; sparse matrices evaluated; tables read; sampled metrics
    ("recsys",),  # the recsys package's face: its public names, loaded on first use
    (
        "fusion.tuning",
    ),  # a fusion spec's parameters searched on training queries; cross-validation over folds
    ("experiment.compare",),  # the compare step: runs paired by query id, corrections; renders through report
    ("experiment.power",),  # the power step: power and topics needed for comparisons; renders through report
    ("experiment.agreement",),  # several sets of judgments: rankings, labels and significance compared
    ("experiment.diff",),  # two runs query by query: losses, gains and why; renders through report
    ("experiment.reproduce",),  # reproductions measured (Breuer et al.): KTU, RBO, RMSE, ER, ΔRI, t-tests
    ("plan.model", "plan.problems"),  # plans: the validated plan; problems with their lines
    ("plan.resolve",),  # the checks a schema cannot make
    ("plan.load",),  # YAML with lines, overrides, the schema
    ("plan.execute",),  # running a plan and writing its outputs
    ("plan",),  # the plan package's face: its public names
    ("compat",),  # other libraries' APIs (pytrec_eval's) on irspec's evaluation
    ("plugin_api",),  # what a plugin author imports besides the face; its heavy names load on first use
    DEPRECATED,  # the old paths of moved modules, kept for one release: each imports where its names went
    ("cli",),  # the command line
    ("__main__",),  # python -m irspec
    ("__init__",),  # the face: `import irspec`
]

FIRST_HEAVY_LAYER = "data.kinds"
"""Layers below this one (the spec, registry, plugins) import no heavy module: parsing stays cheap."""

HEAVY = {
    "numpy",
    "polars",
    "scipy",
    "yaml",
    "jsonschema",
    "matplotlib",
    "jinja2",
    "pandas",
    "pyarrow",
    "ir_datasets",
    "pyspark",
    "torch",
    "torchmetrics",
}
"""Third-party modules that cost a noticeable part of a second to import."""

LAZY_EDGES = {
    "data": "the readers of files and of top-k arrays are imported by the functions that read them: a run "
    "and qrels of dicts (the pytrec_eval drop-in, an Evaluator in a training loop) are read without them",
    "data.small": "the general reader of TREC text (data.trec) is imported only when a small file needs it",
    "evaluation.result": "a result's frame and notebook display (evaluated, report.notebook) are imported "
    "when asked for: the pytrec_eval drop-in and a training loop's Evaluator never show a result",
    "spec.plugins": "pluggy's plugin manager (spec.manager) is made only when a plugin is to be loaded: "
    "the built-ins' registry is built without pluggy",
    "__init__": "the face: the entry points load on first use so that `import irspec` stays light",
    "cli": "each subcommand imports what it runs, so `irspec parse` loads no numpy",
    "report.plots": "matplotlib is imported only when a PNG is drawn (the plots output): the HTML report needs none",
    "plan.resolve": "the plots output's error without matplotlib is the figures' code's, loaded only then; "
    "the power section's check is stats.design's (scipy.optimize), loaded for a plan with one",
    "stats.significance": "scipy.stats loads for the Wilcoxon and sign tests and Tukey's HSD only: the t-test's "
    "distribution is scipy.special's, and scipy.stats costs several times its import (issue 35's demo)",
    "report.html": "jinja2 loads only when an HTML page is rendered, so text-only runs do not load it",
    "data.frames": "to_frame imports polars or pandas (optional) only when a frame is asked for",
    "report": "a command renders one format: the package's face (its _LAZY table), irspec eval's format_results and "
    "the notebook display load a renderer when its format is asked for, so `irspec eval --format trec` loads no table code",
    "report.model": "a table with bootstrap intervals loads stats.significance (scipy); t intervals and others do not",
    "data.datasets": "ir_datasets is optional (irspec[datasets]) and slow to import: loaded only when an irds: id is read",
    "plan.execute": "a plan loads the steps it has when it runs: compare, power, agreement and groups (scipy), "
    "standardising, the figures and a log, so that "
    "`irspec eval`, which runs as a plan, starts as fast as it evaluates; irspec.evaluation.spark (pyspark, optional: "
    "irspec[spark]) for an `engine: {spark: ...}` plan",
    "compat": "a drop-in is imported where the library it replaces was: the engine loads with its first evaluator",
    "evaluation.parts": "a file's readers (numpy's, the streaming one) load for a file only: a run of dicts (the "
    "pytrec_eval drop-in, an Evaluator in a training loop) evaluates without them (issue 35)",
    "evaluation.judgments": "qrels read by numpy load its reader with the run it read, for which it is imported already",
    "plan": "the package's face loads each module on first use (its _LAZY table), so that `irspec eval` loads neither "
    "YAML nor the JSON Schema",
    "recsys": "the package's face loads each module on first use (its _LAZY table): `irspec.recsys` loads no scipy",
    "evaluation.workers": "pyspark and pyarrow load on a call: plugin_api names settle_spark_worker, and the "
    "documentation builds without pyspark",
    "plugin_api": "plugins' declarations import it whenever a registry is built: the context, spilling and corrections load on first use",
}
"""The modules (or packages) that may import irspec or heavy modules inside functions, and why."""

EDGES = ("__init__", "cli", "plugin_api")
"""The modules others import for their names (the face, the authors' module) or run (the CLI): at
module level they import only the light layers, below :data:`FIRST_HEAVY_LAYER`."""

PENDING: dict[tuple[str, str, str], str] = {}
"""(rule, importer, imported) -> the work that removes it. It must match exactly: an entry whose arrow
is gone fails the test, so the list only shrinks."""


ROOT = Path(irspec.__file__).resolve().parent


@dataclass(frozen=True)
class Arrow:
    """One import: ``source`` imports ``target`` (both dotted names without the ``irspec.`` prefix, or a
    third-party top-level name), at ``line``; ``lazy`` when inside a function."""

    source: str
    target: str
    path: str
    line: int
    lazy: bool
    internal: bool
    moved: bool = False
    """Named by a ``_MOVED`` table: an old name kept for a release, loaded where it was asked for."""


def module_names(root: Path) -> dict[str, Path]:
    """Every module under ``root`` by its name relative to the package (``kernels.gain``; a package's
    ``__init__`` by the package's name, the root's own by ``__init__``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str:
    """The module a dotted name (relative to the package) lands in: itself, else its longest known prefix."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return "__init__"


def arrows(root: Path, package: str = "irspec") -> list[Arrow]:
    """Every import of every module under ``root`` (the package directory named ``package``)."""
    modules = module_names(root)
    found = []
    base_dir = root.parent
    for source, path in modules.items():
        tree = parsed(path)
        is_package = path.name == "__init__.py"
        here = source.split(".") if source != "__init__" else []
        lazy_lines = imports_in_functions(tree)
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from the importing module's package
                    base = here if is_package else here[:-1]
                    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    prefix = ".".join([package, *base, *([node.module] if node.module else [])])
                else:
                    prefix = node.module or ""
                # `from irspec import spec` imports the submodule; `from irspec import parse` the face
                targets = (
                    [f"{prefix}.{alias.name}" for alias in node.names]
                    if prefix.startswith(package)
                    else [prefix]
                )
            for target in targets:
                lazy = node.lineno in lazy_lines
                where = path.relative_to(base_dir).as_posix()
                if target == package or target.startswith(package + "."):
                    inner = target[len(package) + 1 :]
                    found.append(
                        Arrow(
                            source,
                            _resolve(inner, modules) if inner else "__init__",
                            where,
                            node.lineno,
                            lazy,
                            True,
                        )
                    )
                else:
                    found.append(Arrow(source, target.split(".")[0], where, node.lineno, lazy, False))
        for line, target, moved in lazy_table(tree):  # imported by name on first use: arrows all the same
            where = path.relative_to(base_dir).as_posix()
            if target.startswith(package + "."):
                inner = _resolve(target[len(package) + 1 :], modules)
                found.append(Arrow(source, inner, where, line, True, True, moved))
            else:
                found.append(Arrow(source, target.split(".")[0], where, line, True, False, moved))
    return found


@functools.cache
def repository_arrows(root: Path, package: str = "irspec") -> tuple[Arrow, ...]:
    """:func:`arrows` of a package directory, read once per process: the rules' tests only read those of
    irspec and of the shipped plugins, and each of them reading irspec's modules again cost 2 s of CPU
    (issue 35)."""
    return tuple(arrows(root, package))


def parsed(path: Path) -> ast.Module:
    """The syntax tree of the module at ``path``, parsed once per text (the trees are only read)."""
    return _parse(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def _parse(text: str, filename: str) -> ast.Module:
    return ast.parse(text, filename)


def imports_in_functions(tree: ast.Module) -> set[int]:
    """The lines of the imports inside a function (at any depth, a class or function within it too), in
    one pass over the tree."""
    lines = set()
    todo: list[tuple[ast.AST, bool]] = [(tree, False)]
    while todo:
        node, inside = todo.pop()
        inside = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if inside and isinstance(node, (ast.Import, ast.ImportFrom)):
            lines.add(node.lineno)
        todo.extend((child, inside) for child in ast.iter_child_nodes(node))
    return lines


def lazy_table(tree: ast.Module) -> list[tuple[int, str, bool]]:
    """The modules a module-level ``_LAZY`` table (name -> module, read by the module's ``__getattr__``,
    as the face's and ``plugin_api``'s are) or ``_MOVED`` table (old names kept for a release, read the
    same way: ``irspec.stats.paired``) names, with the line of each and whether it is ``_MOVED``'s. Any
    string of the table's value that names an irspec module counts (``dict.fromkeys(names, module)``)."""
    out = []
    for node in tree.body:
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            else getattr(node, "target", None)
        )
        if not isinstance(target, ast.Name) or node.value is None:
            continue
        if target.id == "_LAZY" and isinstance(node.value, ast.Dict):
            out += [
                (v.lineno, v.value, False)
                for v in node.value.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            ]
        elif target.id == "_MOVED":
            out += [
                (v.lineno, v.value, True)
                for v in ast.walk(node.value)
                if isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.startswith("irspec.")
            ]
    return out


def layer_of(module: str, layers: list[tuple[str, ...]]) -> int:
    """The index of the layer that holds ``module`` (a layer entry names a module or a whole package; the
    longest entry that names it or a package above it decides)."""
    # the most specific entry wins: "builtin" holds the declarations, "builtin.kernels" (higher) the kernels
    best = max(
        (
            (len(name), i)
            for i, names in enumerate(layers)
            for name in names
            if module == name or module.startswith(name + ".")
        ),
        default=None,
    )
    if best is None:
        raise LookupError(module)
    return best[1]


def _package(module: str) -> str:
    return module.split(".")[0]


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (``[a, b, ..., a]``) among ``edges``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def violations(
    found: Sequence[Arrow], layers: list[tuple[str, ...]], first_heavy: str = FIRST_HEAVY_LAYER
) -> dict[tuple[str, str, str], str]:
    """Every arrow that breaks rules 2-4, keyed (rule, importer, imported), with a sentence saying why."""
    heavy_from = next(i for i, names in enumerate(layers) if first_heavy in names)
    out: dict[tuple[str, str, str], str] = {}
    for a in found:
        if a.source == a.target:
            continue
        src = layer_of(a.source, layers)
        where = f"{a.path}:{a.line}"
        if a.internal:
            dst = layer_of(a.target, layers)
            if dst > src or (dst == src and _package(a.source) != _package(a.target)):
                face = (
                    " (the package face: import from the module that defines the name)"
                    if a.target == "__init__"
                    else ""
                )
                out[("layer", a.source, a.target)] = (
                    f"{where}: {a.source} (layer {src}) imports {a.target} (layer {dst}){face}"
                )
        elif a.target in HEAVY and src < heavy_from:
            out[("heavy", a.source, a.target)] = (
                f"{where}: {a.source} is below {first_heavy} and imports {a.target}"
            )
        if (
            a.lazy
            and not a.moved  # an old name kept for a release loads where it is asked for, not at an edge
            and (a.internal or a.target in HEAVY)
            and not {_package(a.source), a.source} & set(LAZY_EDGES)
        ):
            out[("lazy", a.source, a.target)] = (
                f"{where}: {a.source} imports {a.target} inside a function; import it at the top"
            )
        edge_top = _package(a.source) in EDGES and not a.lazy
        if edge_top and (a.target in HEAVY or (a.internal and layer_of(a.target, layers) >= heavy_from)):
            out[("edge", a.source, a.target)] = (
                f"{where}: {a.source} imports {a.target} at module level; load it lazily"
            )
    return out


def _internal_edges(
    found: Sequence[Arrow], pending: dict[tuple[str, str, str], str] | None = None
) -> dict[str, set[str]]:
    skip = {(src, dst) for _, src, dst in pending or {}}
    edges: dict[str, set[str]] = {}
    for a in found:
        if a.internal and a.source != a.target and (a.source, a.target) not in skip:
            edges.setdefault(a.source, set()).add(a.target)
    return edges


# --------------------------------------------------------------------------------------------------
# The rules, on irspec itself.


def test_every_module_is_in_a_layer():
    unplaced = []
    for name in module_names(ROOT):
        try:
            layer_of(name, LAYERS)
        except LookupError:
            unplaced.append(name)
    assert unplaced == [], f"modules in no layer of LAYERS (add them where they belong): {unplaced}"


def test_no_import_cycle():
    cycle = find_cycle(_internal_edges(repository_arrows(ROOT), PENDING))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_arrow_follows_the_layers():
    found = violations(repository_arrows(ROOT), LAYERS)
    new = {k: v for k, v in found.items() if k not in PENDING}
    assert new == {}, "\n".join(sorted(new.values()))
    gone = sorted(set(PENDING) - set(found))
    assert gone == [], f"PENDING entries whose arrow is gone (remove them): {gone}"


def test_kernels_import_the_context_not_the_engine():
    # the rule the layers give, stated on its own so that a failure reads plainly
    kernel_targets = {
        a.target for a in repository_arrows(ROOT) if a.source.startswith("builtin.kernels") and a.internal
    }
    assert {t for t in kernel_targets if t.startswith("evaluation")} == {"evaluation.context"}


def test_the_engine_knows_no_reports():
    # The report layer sits below the result classes, which show themselves in a notebook through it, so the
    # layers alone would let the engine import a report: only the results' display does, through one module.
    found = {
        (a.source, a.target)
        for a in repository_arrows(ROOT)
        if a.internal
        and a.source.startswith("evaluation")
        and a.source not in DEPRECATED  # evaluation.results, an old path: it names report.notebook's Shown
        and (a.target == "report" or a.target.startswith("report."))
    }
    assert found == {("evaluation.result", "report.notebook"), ("evaluation.result_set", "report.notebook")}


def deprecated_paths(root: Path) -> list[str]:
    """The modules under ``root`` kept at an old path: those that call ``moved_module`` or ``moved_names``."""
    out = []
    for name, path in module_names(root).items():
        for node in ast.walk(parsed(path)):
            called = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            if called and node.func.id in ("moved_module", "moved_names"):
                out.append(name)
                break
    return sorted(out)


def test_the_deprecated_paths_are_the_modules_kept_at_an_old_path():
    assert deprecated_paths(ROOT) == sorted(DEPRECATED)


def test_nothing_imports_a_deprecated_path():
    # an old path warns whoever imports it, and is gone after a release: the package uses the new ones
    found = sorted(
        f"{a.path}:{a.line}: {a.source} imports {a.target}"
        for a in repository_arrows(ROOT)
        if a.internal and a.target in DEPRECATED and a.source != a.target
    )
    assert found == []


# --------------------------------------------------------------------------------------------------
# The rules, on the shipped plugins (rule 5).

PLUGINS = ROOT.parent / "plugins"

PLUGIN_LAYERS: dict[str, list[tuple[str, ...]]] = {
    "irspec_usermodel": [
        ("__init__",),  # the version
        ("plugin",),  # the declarations; the kernels named by "module:function" strings
        ("kernels", "cwl"),  # ERR, RBP, NCG; the C/W/L measures: numpy, from the context
    ],
    "irspec_diversity": [
        ("__init__",),  # the version
        ("plugin",),  # the declarations; the reader and the kernels named by strings
        ("subtopics",),  # qrels with subtopics: the reader and its data object
        ("kernels",),  # ndeval's arithmetic, query by query
    ],
    "irspec_online": [
        ("__init__",),  # the version
        ("plugin",),  # the declarations; the reader and the kernels named by strings
        ("arguments",),  # the subcommands' arguments, argparse alone: irspec --help declares them all
        ("settings",),  # a plan's online: section (the interleaving test, counterfactual estimates), checked
        (
            "records",
        ),  # the record format, its checks and summaries, JSON Lines, the log's counts, InteractionLog
        ("columnar",),  # the same checks and summaries a batch of Arrow columns at a time
        ("interleaving", "clickmodels", "rankings"),  # interleaving; click models; runs as rankings
        ("counterfactual",),  # IPS, clipped IPS, SNIPS of a new ranking from a log; their intervals
        ("kernels", "simulation"),  # the metrics' numpy computations; simulated users for design
        ("ab", "analysis"),  # A/B tests: exact moments, the statistics; a log's other tests
        ("streaming", "spark"),  # a log larger than memory in one pass; the same kernels on Spark
        ("sources",),  # the forms a log comes in, opened as batches of records
        ("clickstream",),  # a log's click-model sessions in bounded memory, models fitted to them
        ("log", "commands"),  # read_log, the reader irspec calls; the plugin's subcommands
    ],
}
"""Each shipped plugin's modules, bottom to top: a module imports modules of lower layers only."""

PLUGIN_FIRST_HEAVY = {
    "irspec_usermodel": "kernels",
    "irspec_diversity": "subtopics",
    "irspec_online": "records",
}
"""The layers below these (the declarations) import nothing heavy: irspec imports them whenever it builds
its registry, to parse a spec."""

PLUGIN_LAZY: dict[tuple[str, str, str], str] = {
    (
        "irspec_online",
        "sources",
        "spark",
    ): "pyspark is optional (the spark extra): loaded for a Spark DataFrame",
    (
        "irspec_online",
        "sources",
        "pyarrow",
    ): "optional (the parquet and pandas extras): loaded for the forms read through Arrow",
    ("irspec_online", "streaming", "pyarrow"): "optional (the parquet extra): counts a Parquet log's rows",
    (
        "irspec_online",
        "columnar",
        "pyarrow",
    ): "optional (the parquet extra): only Arrow's forms read through it",
    ("irspec_online", "clickstream", "spark"): "optional (the spark extra): a Spark frame's fit",
    ("irspec_online", "ab", "scipy"): "loaded when an A/B test is analysed, not whenever a log is read",
    ("irspec_online", "interleaving", "scipy"): "loaded to optimize lists or test, not to read a log",
    ("irspec_online", "simulation", "scipy"): "loaded to compute a power, not to simulate",
    ("irspec_online", "simulation", "pyarrow"): "optional (the parquet extra): a simulated log made a frame",
    ("irspec_online", "counterfactual", "scipy"): "loaded for an estimate's interval, not to read a log",
}
"""(plugin, module, imported) -> why the import is inside a function; every other import of a plugin is at
the top of its module."""

PUBLIC = ("__init__", "plugin_api")
"""What a plugin imports of irspec: the face and the authors' module."""


def plugin_packages() -> dict[str, Path]:
    """The package directory of each plugin shipped in ``plugins/``, by import name."""
    return {p.parent.name: p.parent for p in sorted(PLUGINS.glob("irspec-*/irspec_*/__init__.py"))}


def irspec_imports(root: Path) -> list[tuple[str, str, str]]:
    """``(module, target, where)`` for each import of irspec in the package at ``root``: the irspec
    module it imports (``plugin_api``, ``spec.registry``), ``__init__`` for the face."""
    inside = module_names(ROOT)
    out = []
    for source, path in module_names(root).items():
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                if name == "irspec" or name.startswith("irspec."):
                    target = (
                        _resolve(name.removeprefix("irspec."), inside) if name != "irspec" else "__init__"
                    )
                    out.append((source, target, f"{path.relative_to(root.parent).as_posix()}:{node.lineno}"))
    return out


def plugin_problems(
    root: Path, layers: list[tuple[str, ...]], first_heavy: str, lazy: dict[tuple[str, str, str], str]
) -> list[str]:
    """Everything rule 5 finds wrong with the plugin package at ``root``."""
    package = root.name
    problems = [
        f"{where}: {source} imports irspec.{target}; a plugin imports the face and irspec.plugin_api only"
        for source, target, where in irspec_imports(root)
        if target not in PUBLIC
    ]
    found = repository_arrows(root, package)
    cycle = find_cycle(_internal_edges(found))
    if cycle:
        problems.append(f"{package}: import cycle: " + " -> ".join(cycle))
    problems += [
        text
        for (rule, _, _), text in violations(found, layers, first_heavy).items()
        if rule in ("layer", "heavy")
    ]
    problems += [
        f"{a.path}:{a.line}: {a.source} imports {a.target} inside a function; import it at the top"
        for a in found
        if a.lazy and (package, a.source, a.target) not in lazy
    ]
    return sorted(set(problems))


def test_every_plugin_and_module_is_in_a_layer():
    assert sorted(plugin_packages()) == sorted(PLUGIN_LAYERS)
    for package, root in plugin_packages().items():
        unplaced = []
        for name in module_names(root):
            try:
                layer_of(name, PLUGIN_LAYERS[package])
            except LookupError:
                unplaced.append(name)
        assert unplaced == [], f"modules of {package} in no layer of PLUGIN_LAYERS: {unplaced}"


@pytest.mark.parametrize("package", sorted(PLUGIN_LAYERS))
def test_a_plugin_imports_the_face_and_the_authors_module_and_follows_its_layers(package):
    root = plugin_packages()[package]
    assert plugin_problems(root, PLUGIN_LAYERS[package], PLUGIN_FIRST_HEAVY[package], PLUGIN_LAZY) == []


def test_every_lazy_import_of_a_plugin_is_still_there():
    lazy = {
        (package, a.source, a.target)
        for package, root in plugin_packages().items()
        for a in repository_arrows(root, package)
        if a.lazy
    }
    assert sorted(set(PLUGIN_LAZY) - lazy) == []


# --------------------------------------------------------------------------------------------------
# The checker itself, on small made-up packages: it must see what it is meant to see.


def _package_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "irspec"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_checker_reports_a_cycle(tmp_path):
    root = _package_tree(
        tmp_path,
        {
            "engine.py": "from irspec.context import Context\n",
            "context.py": "def f():\n    from irspec import engine\n",
        },
    )
    assert find_cycle(_internal_edges(arrows(root))) in (
        ["context", "engine", "context"],
        ["engine", "context", "engine"],
    )


# The made-up packages' house: the real one's shape, on the old flat names.
TOY_LAYERS = [
    ("errors",),
    ("spec",),
    ("registry",),
    ("context",),
    ("stats",),
    ("kernels",),
    ("engine",),
    ("report",),
    ("plan",),
    ("cli",),
    ("__init__",),
]


def test_checker_reports_forbidden_arrows(tmp_path):
    root = _package_tree(
        tmp_path,
        {
            "spec.py": "import numpy\n",
            "registry.py": "from irspec import spec\n",  # a submodule: allowed
            "engine.py": "import irspec\nfrom irspec import parse_many\n",
            "kernels/__init__.py": "",
            "kernels/gain.py": "from irspec.engine import Context\n",
            "kernels/sets.py": "from irspec.kernels.gain import x\nfrom irspec.kernels import gain\n",
            "stats.py": "def f():\n    from irspec.engine import Result\n",
            "report.py": "if True:\n    from irspec.plan import Comparison\n",
            "plan.py": "",
            "cli.py": "import numpy\ndef main():\n    import polars\n    from irspec import plan\n",
        },
    )
    found = violations(arrows(root), TOY_LAYERS, "context")
    assert set(found) == {
        ("heavy", "spec", "numpy"),
        ("layer", "engine", "__init__"),
        ("layer", "kernels.gain", "engine"),
        ("layer", "stats", "engine"),
        ("lazy", "stats", "engine"),
        ("layer", "report", "plan"),
        ("edge", "cli", "numpy"),
    }
    assert "the package face" in found[("layer", "engine", "__init__")]
    assert found[("layer", "kernels.gain", "engine")].startswith("irspec/kernels/gain.py:1: ")


def test_checker_places_a_module_by_its_longest_entry():
    # "builtin" holds the declarations low, "builtin.kernels" the kernels higher up
    layers = [("builtin",), ("context",), ("builtin.kernels",)]
    assert [
        layer_of(m, layers) for m in ("builtin", "builtin.sets", "builtin.kernels", "builtin.kernels.gain")
    ] == [0, 0, 2, 2]
    with pytest.raises(LookupError):
        layer_of("built", layers)


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("from . import gain", "kernels.gain"),
        ("from .gain import x", "kernels.gain"),
        ("from .. import context", "context"),
        ("from ..registry import Metric", "registry"),
    ],
)
def test_checker_resolves_relative_imports(tmp_path, text, target):
    root = _package_tree(
        tmp_path,
        {
            "context.py": "",
            "registry.py": "",
            "kernels/__init__.py": "",
            "kernels/gain.py": "",
            "kernels/sets.py": text + "\n",
        },
    )
    assert [a.target for a in arrows(root) if a.source == "kernels.sets"] == [target]


def test_checker_reads_a_lazy_table(tmp_path):
    root = _package_tree(
        tmp_path,
        {"engine.py": "", "spec.py": '_LAZY = {"run": "irspec.engine", "np": "numpy"}\n'},
    )
    found = [(a.source, a.target, a.lazy, a.internal) for a in arrows(root)]
    assert found == [("spec", "engine", True, True), ("spec", "numpy", True, False)]
    assert ("layer", "spec", "engine") in violations(arrows(root), TOY_LAYERS, "context")


def test_checker_reports_a_plugins_inner_imports_and_hidden_circle(tmp_path):
    root = tmp_path / "toyplugin"
    files = {
        "__init__.py": "",
        "plugin.py": "import numpy\nimport irspec\nfrom irspec.plugin_api import UNIT\n",
        "log.py": "from irspec.spec.registry import UNIT\nfrom toyplugin.reader import read\n",
        "reader.py": "from irspec import InputError\ndef read():\n    from toyplugin.log import UNIT\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    layers = [("__init__",), ("plugin",), ("log",), ("reader",)]
    problems = plugin_problems(root, layers, "log", {})
    assert sorted(p.split(": ", 1)[1] for p in problems) == [
        "import cycle: log -> reader -> log",
        "log (layer 2) imports reader (layer 3)",
        "log imports irspec.spec.registry; a plugin imports the face and irspec.plugin_api only",
        "plugin is below log and imports numpy",
        "reader imports log inside a function; import it at the top",
    ]
    assert (
        "toyplugin/log.py:1: log imports irspec.spec.registry; a plugin imports the face and irspec.plugin_api only"
        in problems
    )
