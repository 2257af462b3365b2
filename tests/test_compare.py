"""Tests of the compare step (irspec.experiment.compare, irspec.experiment.records) and its API, ``irspec.compare``.

Expected values come from outside the code under test: scipy's ``ttest_rel`` and statsmodels'
``multipletests`` on per-query values read back from the results, :func:`irspec.stats.significance` (tested against
scipy and statsmodels in test_stats.py) on hand-aligned vectors, and the plan path for the same settings.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import irspec
from irspec.errors import EvaluationError, IrspecError
from irspec.experiment.compare import Comparisons, compare_results
from irspec.experiment.records import CORRECTIONS, FAMILIES, TESTS, Compare, Comparison
from irspec.plan import load_plan, render_outputs, run_plan
from irspec.stats import significance as stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_result

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "specs" / "demo"
RUNS = ["bm25", "dense", "hybrid", "random"]
METRICS = ["nDCG@10", "AP", "P@10", "bpref(10+R)", "Rprec(recall=0.3)"]


@pytest.fixture(scope="module")
def demo_results() -> dict[str, irspec.evaluation.result.Result]:
    """The demo runs, each evaluated on its own with irspec.evaluate (names from the files' run tags)."""
    out = {}
    for name in RUNS:
        res = irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / f"{name}.run"), METRICS)
        assert res.run_name == name
        out[name] = res
    return out


def plan_report(tmp_path: Path, compare: str, outputs: str = "[{format: table, content: comparisons}]"):
    """The demo plan, with the given compare section and outputs, loaded and run."""
    shutil.copytree(DEMO, tmp_path / "demo", dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.py"))
    runs = "\n".join(f"  - {{name: {n}, path: demo/runs/{n}.run}}" for n in RUNS)
    text = f"qrels: demo/qrels.txt\nruns:\n{runs}\nmetrics: {json.dumps(METRICS)}\ncompare: {compare}\noutput: {outputs}\n"
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return run_plan(load_plan(path))


# --------------------------------------------------------------------------------------------------
# irspec.compare on evaluated results, against the plan and against scipy


SETTINGS = [
    ({"baseline": "bm25"}, "{baseline: bm25, test: t, correction: holm, alpha: 0.05}"),
    (
        {"test": "randomization", "permutations": 500, "seed": 3, "correction": "bh", "family": "all"},
        "{test: randomization, permutations: 500, seed: 3, correction: bh, family: all}",
    ),
    ({"baseline": "dense", "test": "tukey", "alpha": 0.01}, "{baseline: dense, test: tukey, alpha: 0.01}"),
    ({"test": "wilcoxon", "correction": "none"}, "{test: wilcoxon, correction: none}"),
]


@pytest.mark.parametrize(
    ("kwargs", "section"), SETTINGS, ids=["t-holm", "randomization-bh-all", "tukey", "wilcoxon"]
)
def test_compare_gives_what_a_plan_with_the_same_settings_gives(demo_results, tmp_path, kwargs, section):
    found = irspec.compare(list(demo_results.values()), **kwargs)
    report = plan_report(tmp_path, section)
    assert isinstance(found, Comparisons)
    assert found.settings == report.plan.compare
    assert len(found) == len(report.comparisons) > 0
    for mine, theirs in zip(found, report.comparisons, strict=True):
        assert mine.as_dict() == theirs.as_dict()  # every field, p-values to the last bit
    assert found.notes == report.notes
    ((_, table),) = render_outputs(report)
    assert str(found) == found.to_table() == table


def test_a_paired_t_p_value_is_scipys_ttest_rel_and_holm_is_statsmodels(demo_results):
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    found = irspec.compare(demo_results, baseline="bm25", test="t", correction="holm")
    base = demo_results["bm25"].per_query()
    ap = [c for c in found if c.metric == "AP"]
    assert [(c.a, c.b) for c in ap] == [("dense", "bm25"), ("hybrid", "bm25"), ("random", "bm25")]
    expected = []
    for c in ap:
        run = demo_results[c.a].per_query()
        qids = sorted(base)  # paired by query id, whatever order the results hold them in
        x = np.array([run[q]["AP"] for q in qids])
        y = np.array([base[q]["AP"] for q in qids])
        t = ttest_rel(x, y)
        # irspec rounds the differences to 10 decimals first (test_stats.py): a relative 1e-6 in the tail
        assert c.p_value == pytest.approx(t.pvalue, rel=1e-6, abs=1e-300)
        assert c.statistic == pytest.approx(t.statistic, rel=1e-9)
        assert c.mean_difference == pytest.approx(
            float(np.mean(x - y)), abs=1e-9
        )  # differences rounded to 1e-10
        assert c.mean_a == pytest.approx(demo_results[c.a].aggregate()["AP"], abs=1e-12)
        assert (c.n, c.left_out, c.df) == (50, 0, 49)
        expected.append(t.pvalue)
    holm = multipletests(expected, method="holm")[1]
    assert [c.p_adjusted for c in ap] == pytest.approx(list(holm), rel=1e-6, abs=1e-300)
    assert all(c.family_size == 3 and c.significant == (c.p_adjusted <= 0.05) for c in ap)


def test_a_mapping_names_the_runs_and_leaves_the_results_alone(demo_results):
    renamed = {"first": demo_results["bm25"], "second": demo_results["dense"]}
    found = irspec.compare(renamed, baseline="first", metrics="AP")
    assert [(c.metric, c.a, c.b) for c in found] == [("AP", "second", "first")]
    assert [r.run_name for r in found.results] == ["first", "second"]
    assert demo_results["bm25"].run_name == "bm25"
    unnamed = irspec.compare([demo_results["bm25"], demo_results["dense"]], baseline="bm25", metrics="AP")
    assert dataclasses.replace(found[0], a="dense", b="bm25") == unnamed[0]


def test_queries_left_out_are_notes_of_the_comparisons_and_of_their_table():
    a = make_result("a", ["q1", "q2", "q3", "q4", "q5"], [0.1, 0.2, 0.3, 0.4, 0.5], missing="skip")
    b = make_result("b", ["q5", "q4", "q2", "q1", "q6"], [0.9, 0.6, 0.3, 0.2, 0.0], missing="skip")
    found = irspec.compare([a, b], baseline="a", metrics="AP")
    note = (
        "b vs a: compared on the 4 queries both runs answer (1 only in b, 1 only in a; missing_queries: skip)"
    )
    assert found.notes == (note,) and (found[0].n, found[0].left_out) == (4, 2)
    assert str(found).endswith(f"; 4 queries).\nnote: {note}\n")
    assert found.as_dict()["notes"] == [note]


def test_metrics_selects_the_comparisons_of_those_metrics(demo_results):
    everything = irspec.compare(demo_results, baseline="bm25")
    some = irspec.compare(demo_results, baseline="bm25", metrics=["ap", irspec.parse("P@10")])
    assert [c.metric for c in some] == ["AP"] * 3 + ["P@10"] * 3  # in the results' order of metrics
    assert list(some) == [c for c in everything if c.metric in ("AP", "P@10")]  # per-metric families


def test_comparisons_is_an_immutable_sequence_with_json(demo_results):
    found = irspec.compare(demo_results, baseline="bm25", metrics="AP, nDCG@10")
    assert isinstance(found[0], Comparison) and found[1:] == found.comparisons[1:] and len(found) == 6
    assert next(reversed(found)) == found[-1] and found.index(found[2]) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.notes = ("changed",)
    doc = json.loads(found.to_json())
    assert doc == found.as_dict()
    assert doc["compare"] == {
        "baseline": "bm25",
        "test": "t",
        "permutations": 10000,
        "seed": 42,
        "correction": "holm",
        "alpha": 0.05,
        "family": "per-metric",
        "baselines": ["bm25"],
    }
    assert [d["a"] for d in doc["comparisons"]] == ["dense", "hybrid", "random"] * 2


def test_the_json_is_the_plans_comparisons_json(demo_results, tmp_path):
    report = plan_report(tmp_path, "{baseline: hybrid}", "[{format: json, content: comparisons}]")
    ((_, text),) = render_outputs(report)
    plan_doc = json.loads(text)
    mine = irspec.compare(demo_results, baseline="hybrid").as_dict()
    assert {k: plan_doc[k] for k in mine} == mine


# --------------------------------------------------------------------------------------------------
# The record's columns

# The columns of a comparison in every output (JSON keys, CSV header, data frames), as published: written
# out here, not read from the code, so that a change to the record that moves or drops one fails.
PUBLISHED_COLUMNS = [
    "metric",
    "a",
    "b",
    "test",
    "null",
    "n",
    "left_out",
    "mean_a",
    "mean_b",
    "mean_difference",
    "relative_change",
    "ci_low",
    "ci_high",
    "confidence",
    "ci_method",
    "effect_size",
    "hedges_g",
    "wins",
    "ties",
    "losses",
    "statistic",
    "df",
    "p_value",
    "p_adjusted",
    "significant",
    "direction",
    "alpha",
    "correction",
    "family",
    "family_size",
    "permutations",
    "exact",
    "seed",
    "mc_se",
]


def test_every_output_shows_the_published_columns_in_order(demo_results):
    from irspec import report

    found = irspec.compare(demo_results, baseline="bm25", test="randomization", permutations=500)
    assert list(found[0].as_dict()) == PUBLISHED_COLUMNS
    assert [list(c) for c in json.loads(found.to_json())["comparisons"]] == [PUBLISHED_COLUMNS] * len(found)
    assert report.comparisons_delimited(found.comparisons).splitlines()[0] == ",".join(PUBLISHED_COLUMNS)
    assert (
        report.comparisons_delimited(()) == ",".join(PUBLISHED_COLUMNS) + "\n"
    )  # a header when there are none


def test_a_comparison_is_the_tests_record_with_the_runs_names():
    """One record: a Comparison has every field of stats' ComparisonResult (declared there once) and
    shows all of them but the rounding (``decimals``), with the step's own: names, metric, family."""
    from irspec.stats.outcome import ComparisonResult, PairResult

    test_fields = [f.name for f in dataclasses.fields(ComparisonResult)]
    assert issubclass(Comparison, ComparisonResult) and issubclass(PairResult, ComparisonResult)
    assert [f.name for f in dataclasses.fields(Comparison)][: len(test_fields)] == test_fields
    assert set(Comparison.COLUMNS) == {f.name for f in dataclasses.fields(Comparison)} - {"decimals"}
    assert (
        stats.ComparisonResult is ComparisonResult and stats.PairResult is PairResult
    )  # where they always were


# --------------------------------------------------------------------------------------------------
# Data frames


def test_to_frame_polars_has_one_row_per_comparison_and_every_field(demo_results):
    import polars as pl

    found = irspec.compare(demo_results, baseline="bm25", test="tukey")
    frame = found.to_frame("polars")
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == PUBLISHED_COLUMNS
    assert frame.height == len(found) == 15
    assert frame.row(4, named=True) == found[4].as_dict()
    assert frame.schema["p_value"] == pl.Float64 and frame.schema["wins"] == pl.Int64
    assert frame.schema["significant"] == pl.Boolean and frame.schema["metric"] == pl.Utf8
    empty = Comparisons((), Compare()).to_frame()  # the default backend; same columns and types
    assert empty.height == 0 and empty.schema == frame.schema


def test_to_frame_pandas_or_a_clear_error(demo_results, monkeypatch):
    found = irspec.compare(demo_results, baseline="bm25", metrics="AP")
    try:
        import pandas  # noqa: F401  (statsmodels, a test dependency, brings it)
    except ImportError:  # pragma: no cover
        pass
    else:
        frame = found.to_frame("pandas")
        assert list(frame.columns) == PUBLISHED_COLUMNS
        assert frame.to_dict("records") == [c.as_dict() for c in found]
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(IrspecError, match=r"^to_frame\(backend='pandas'\) needs pandas: pip install pandas"):
        found.to_frame("pandas")
    with pytest.raises(
        IrspecError, match=r"backend must be one of polars, pandas, not 'panda'; did you mean 'pandas'\?"
    ):
        found.to_frame("panda")


def test_comparing_imports_no_pandas_and_keeps_irspec_compare_a_function():
    # (polars comes with the engine, which made the results; pandas only with to_frame("pandas"))
    code = textwrap.dedent(
        """
        import sys
        import irspec
        import irspec.experiment.records, irspec.experiment.compare, irspec.plan, irspec.report
        sys.path.insert(0, "tests")
        from synthetic import make_result
        found = irspec.compare([make_result("a", ["q1", "q2", "q3"], [0.1, 0.5, 0.3]),
                                make_result("b", ["q1", "q2", "q3"], [0.2, 0.4, 0.9])])
        text = str(found) + found.to_json()
        assert callable(irspec.compare) and not isinstance(irspec.compare, type(sys)), irspec.compare
        print(sorted(m for m in ("pandas",) if m in sys.modules))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --------------------------------------------------------------------------------------------------
# Bad arguments: each error names the argument and what it accepts


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"test": "tt"},
            "test must be one of t, randomization, bootstrap, wilcoxon, sign, tukey, randomized-tukey, not 'tt'; did you mean 't'?",
        ),
        (
            {"correction": "hlm"},
            "correction must be one of none, bonferroni, holm, bh, by, not 'hlm'; did you mean 'holm'?",
        ),
        ({"family": "al"}, "family must be one of per-metric, all, not 'al'; did you mean 'all'?"),
        (
            {"baseline": "bm52"},
            "baseline 'bm52' is not one of the runs: bm25, dense, hybrid, random; did you mean 'bm25'?",
        ),
        ({"baseline": ""}, "baseline must be a run's name or None, not ''"),
        ({"alpha": 0}, "alpha must be a number strictly between 0 and 1, not 0"),
        ({"alpha": 1.5}, "alpha must be a number strictly between 0 and 1, not 1.5"),
        ({"alpha": True}, "alpha must be a number strictly between 0 and 1, not True"),
        ({"alpha": float("nan")}, "alpha must be a number strictly between 0 and 1, not nan"),
        ({"permutations": 0}, "permutations must be an integer >= 1, not 0"),
        ({"seed": -1}, "seed must be an integer >= 0, not -1"),
        (
            {"test": "tukey", "correction": "holm"},
            "test 'tukey' adjusts over all pairs of runs itself; give correction None or 'none', not 'holm'",
        ),
        (
            {"test": "randomized-tukey", "family": "all"},
            "test 'randomized-tukey' adjusts over the pairs of runs of each metric; family must be 'per-metric'",
        ),
        (
            {"metrics": "nDCG@20"},
            "metrics: nDCG@20 is not among the evaluated metrics of bm25; did you mean 'nDCG@10'?",
        ),
        (
            {"metrics": "MRR"},
            "metrics: RR is not among the evaluated metrics of bm25; they are nDCG@10, AP, P@10, Bpref(nonrel=10+R), Rprec(recall=0.3)",
        ),
    ],
)
def test_bad_arguments_are_named_errors(demo_results, kwargs, message):
    with pytest.raises(EvaluationError) as info:
        irspec.compare(demo_results, **kwargs)
    assert str(info.value) == message


def test_bad_results_are_named_errors(demo_results):
    bm25, dense = demo_results["bm25"], demo_results["dense"]
    cases = [
        ([bm25], "comparing needs at least 2 runs, got 1"),
        ({}, "comparing needs at least 2 runs, got 0"),
        ([bm25, "dense.run"], "results[1] is a str, not an evaluated result (irspec.evaluate returns one)"),
        ({"a": bm25, "b": 3}, "results['b'] is a int, not an evaluated result (irspec.evaluate returns one)"),
        (
            "bm25.run",
            "results must be a sequence of evaluated results (irspec.evaluate returns one) or a mapping {name: result}, not str",
        ),
        (
            [bm25, bm25],
            "runs must have distinct names to be compared; 'bm25' is given more than once (name them with a mapping {name: result})",
        ),
    ]
    for results, message in cases:
        with pytest.raises(EvaluationError) as info:
            irspec.compare(results)
        assert str(info.value) == message
    other = irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / "dense.run"), "AP")
    with pytest.raises(
        EvaluationError, match=r"^run dense was not evaluated on nDCG@10, P@10, .* \(run bm25 was\)"
    ):
        irspec.compare([bm25, other])
    with pytest.raises(
        EvaluationError, match=r"^metrics: relstring@10 has text values; there is nothing to test$"
    ):
        irspec.compare(
            [
                irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / n), "relstring")
                for n in ("bm25.run", "dense.run")
            ],
            metrics="relstring",
        )
    assert isinstance(info.value, IrspecError) and dense.run_name == "dense"


def test_the_plan_schema_offers_exactly_the_settings_the_compare_step_accepts():
    from irspec.plan import schema

    properties = schema()["properties"]["compare"]["properties"]
    assert TESTS[: len(stats.TESTS)] == stats.TESTS and CORRECTIONS == stats.ADJUST_METHODS
    assert tuple(properties["test"]["enum"]) == TESTS
    assert tuple(properties["correction"]["enum"]) == CORRECTIONS
    assert tuple(properties["family"]["enum"]) == FAMILIES
    defaults = Compare()
    assert {
        k: properties[k]["default"] for k in ("test", "permutations", "seed", "correction", "alpha", "family")
    } == {k: getattr(defaults, k) for k in ("test", "permutations", "seed", "correction", "alpha", "family")}


# --------------------------------------------------------------------------------------------------
# The compare step on hand-made results: pairing by query id, Tukey, families, seeds


def test_comparisons_pair_queries_by_id_not_by_position():
    rng = np.random.default_rng(3)
    qids = [f"q{i:02d}" for i in range(30)]
    base = rng.random(30)
    better = base + 0.05 + rng.normal(0, 0.02, 30)
    order = rng.permutation(30)
    a = make_result("base", qids, base)
    b = make_result("new", [qids[i] for i in order], better[order])  # same scores, shuffled query order
    (c_ap, c_p), notes = compare_results([a, b], Compare(baseline="base", test="t", correction="none"))
    expected = stats.paired(better, base, test="t")
    positional = stats.paired(better[order], base, test="t")
    assert c_ap.a == "new" and c_ap.b == "base" and c_ap.metric == "AP" and c_p.metric == "P@10"
    assert c_ap.p_value == expected.p_value and c_ap.mean_difference == expected.mean_difference
    assert (c_ap.wins, c_ap.ties, c_ap.losses) == (expected.wins, expected.ties, expected.losses)
    assert c_ap.p_value != positional.p_value
    assert c_ap.mean_a == pytest.approx(better.mean()) and c_ap.mean_b == pytest.approx(base.mean())
    assert notes == []


def test_tukey_pairs_queries_by_id_and_orients_against_the_baseline():
    rng = np.random.default_rng(5)
    qids = [f"q{i}" for i in range(20)]
    scores = rng.random((3, 20)) + np.array([[0.0], [0.1], [0.3]])
    results = []
    for k, name in enumerate(["x", "base", "z"]):
        order = rng.permutation(20)
        results.append(make_result(name, [qids[i] for i in order], scores[k][order]))
    comparisons, _ = compare_results(results, Compare(baseline="base", test="tukey", correction="none"))
    aligned = stats.tukey(scores)  # rows aligned by construction: x, base, z
    ap = [c for c in comparisons if c.metric == "AP"]
    assert [(c.a, c.b) for c in ap] == [("x", "base"), ("z", "base")]
    x_vs_base = next(p for p in aligned if (p.a, p.b) == (0, 1))
    base_vs_z = next(p for p in aligned if (p.a, p.b) == (1, 2))
    # the plan's matrix has the queries in id order (q0, q1, q10, ...): same numbers up to rounding
    assert ap[0].p_value == pytest.approx(x_vs_base.p_value, rel=1e-12)
    assert ap[0].mean_difference == pytest.approx(x_vs_base.mean_difference)
    assert ap[1].p_value == pytest.approx(base_vs_z.p_value, rel=1e-12) and ap[
        1
    ].mean_difference == pytest.approx(-base_vs_z.mean_difference)
    assert ap[1].ci_low == pytest.approx(-base_vs_z.ci_high) and ap[1].ci_high == pytest.approx(
        -base_vs_z.ci_low
    )
    assert ap[1].p_adjusted == ap[1].p_value and ap[1].correction == "tukey-hsd" and ap[1].family_size == 3
    assert (
        ap[1].effect_size is not None
        and ap[1].effect_size > 0
        and ap[1].wins + ap[1].ties + ap[1].losses == 20
    )


def test_skip_compares_on_shared_queries_and_says_so():
    a = make_result("a", ["q1", "q2", "q3", "q4", "q5"], [0.1, 0.2, 0.3, 0.4, 0.5], missing="skip")
    b = make_result("b", ["q5", "q4", "q2", "q1", "q6"], [0.9, 0.6, 0.3, 0.2, 0.0], missing="skip")
    comparisons, notes = compare_results([a, b], Compare(baseline="a", correction="none"))
    c = comparisons[0]
    assert (c.n, c.left_out) == (4, 2)
    assert c.mean_difference == pytest.approx(np.mean([0.2 - 0.1, 0.3 - 0.2, 0.6 - 0.4, 0.9 - 0.5]))
    assert notes == [
        "b vs a: compared on the 4 queries both runs answer (1 only in b, 1 only in a; missing_queries: skip)"
    ]


def test_fewer_than_two_shared_queries_is_a_clear_error():
    a = make_result("a", ["q1", "q2"], [0.1, 0.2], missing="skip")
    b = make_result("b", ["q2", "q3"], [0.3, 0.4], missing="skip")
    with pytest.raises(
        EvaluationError, match=r"cannot compare b with a on AP: need at least 2 paired queries"
    ):
        compare_results([a, b], Compare(baseline="a"))


@pytest.mark.parametrize("family", ["per-metric", "all"])
def test_the_correction_runs_over_the_stated_family(family):
    rng = np.random.default_rng(11)
    qids = [f"q{i}" for i in range(25)]
    results = [make_result(n, qids, rng.random((25, 2)) + s) for n, s in [("a", 0), ("b", 0.05), ("c", 0.1)]]
    comparisons, _ = compare_results(results, Compare(test="t", correction="holm", family=family))
    assert [(c.metric, c.a, c.b) for c in comparisons][:3] == [
        ("AP", "a", "b"),
        ("AP", "a", "c"),
        ("AP", "b", "c"),
    ]
    groups = [comparisons] if family == "all" else [comparisons[:3], comparisons[3:]]
    for group in groups:
        adjusted = stats.adjust([c.p_value for c in group], method="holm")
        assert [c.p_adjusted for c in group] == list(adjusted)
        assert all(c.family_size == len(group) and c.family == family for c in group)
        assert all(c.significant == (c.p_adjusted <= 0.05) for c in group)


def test_seeded_tests_carry_their_permutations_and_seed_and_repeat_exactly():
    rng = np.random.default_rng(2)
    qids = [f"q{i}" for i in range(40)]
    results = [make_result("a", qids, rng.random(40)), make_result("b", qids, rng.random(40))]
    compare = Compare(baseline="a", test="randomization", permutations=2000, seed=9)
    first, _ = compare_results(results, compare)
    again, _ = compare_results(results, compare)
    assert first == again
    assert first[0].permutations == 2000 and first[0].seed == 9 and first[0].mc_se > 0 and not first[0].exact


def test_the_means_of_a_comparison_are_trec_evals_left_to_right_means():
    """mean_a and mean_b are the runs' aggregates to the last bit: per-query values added left to right in
    query-id order, then divided (trec_eval's rule), not numpy's pairwise mean."""
    rng = np.random.default_rng(3)
    qids = [f"q{i:03d}" for i in range(200)]
    a, b = rng.integers(0, 21, 200) / 20, rng.integers(0, 21, 200) / 20
    expected = []
    for values in (a, b):
        total = 0.0
        for v in values:  # qids are already in sorted order
            total += float(v)
        expected.append(total / len(values))
    assert expected[0] != float(np.mean(a)) or expected[1] != float(np.mean(b))  # the data tells them apart
    res = [make_result("a", qids, a, metrics=("P@20",)), make_result("b", qids, b, metrics=("P@20",))]
    (c,) = irspec.compare(res, baseline="b")
    assert (c.mean_a, c.mean_b) == tuple(expected)
    assert (c.mean_a, c.mean_b) == (res[0].aggregate()["P@20"], res[1].aggregate()["P@20"])


# --------------------------------------------------------------------------------------------------
# Several baselines (compare.baselines)


def _values(res, metric: str) -> np.ndarray:
    """One metric's per-query values of a result, by sorted query id (read through per_query)."""
    rows = res.per_query()
    return np.array([rows[q][metric] for q in sorted(rows)])


def test_two_baselines_each_pair_once_against_ttest_rel_and_holm_per_metric(demo_results):
    """Every run against bm25, then against dense; bm25 and dense once (dense vs bm25). Each p is
    scipy's ttest_rel on the two runs' per-query values; p_adjusted is statsmodels' Holm over the five
    comparisons of the metric (the family stated: per-metric, across both baselines)."""
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    found = irspec.compare(demo_results, baselines=["bm25", "dense"], metrics=["AP", "nDCG@10"])
    pairs = [(c.a, c.b) for c in found if c.metric == "AP"]
    assert pairs == [
        ("dense", "bm25"),
        ("hybrid", "bm25"),
        ("random", "bm25"),
        ("hybrid", "dense"),
        ("random", "dense"),
    ]
    assert found.settings.baselines == ("bm25", "dense") and found.settings.baseline is None
    for metric in ("AP", "nDCG@10"):
        mine = [c for c in found if c.metric == metric]
        expected = [
            ttest_rel(_values(demo_results[c.a], metric), _values(demo_results[c.b], metric)).pvalue
            for c in mine
        ]
        assert [c.p_value for c in mine] == pytest.approx(expected, rel=1e-9)
        holm = multipletests(expected, method="holm")[1]
        assert [c.p_adjusted for c in mine] == pytest.approx(list(holm), rel=1e-9)
        assert {c.family_size for c in mine} == {5} and {c.family for c in mine} == {"per-metric"}
    assert "over the 5 comparisons of each metric, across the 2 baselines" in found.to_table()


def test_two_baselines_family_all_is_bh_over_every_comparison(demo_results):
    """family all: one correction (here Benjamini-Hochberg, statsmodels' fdr_bh) over the ten comparisons
    of both metrics."""
    from statsmodels.stats.multitest import multipletests

    found = irspec.compare(
        demo_results, baselines=["bm25", "dense"], metrics=["AP", "P@10"], correction="bh", family="all"
    )
    assert len(found) == 10
    expected = multipletests([c.p_value for c in found], method="fdr_bh")[1]
    assert [c.p_adjusted for c in found] == pytest.approx(list(expected), rel=1e-12)
    assert {c.family_size for c in found} == {10}
    assert "Benjamini-Hochberg correction over all 10 comparisons, across the 2 baselines" in found.to_table()


def test_one_baseline_in_a_list_is_the_single_baseline(demo_results):
    """baselines=[bm25] and baseline=bm25 are the same settings and the same comparisons (arrow marks)."""
    one = irspec.compare(demo_results, baseline="bm25", metrics="AP")
    listed = irspec.compare(demo_results, baselines=["bm25"], metrics="AP")
    assert one.settings == listed.settings and one.comparisons == listed.comparisons
    assert one.settings.as_dict()["baselines"] == ["bm25"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"baseline": "bm25", "baselines": ["dense"]},
            "give baseline ('bm25') or baselines (['dense']), not both",
        ),
        ({"baselines": ["bm25", "bm25"]}, "baselines name 'bm25' more than once"),
        (
            {"baselines": ["bm25", "dens"]},
            "baseline 'dens' is not one of the runs: bm25, dense, hybrid, random; did you mean 'dense'?",
        ),
        ({"baselines": "bm25"}, "baselines must be a list of run names, not 'bm25'"),
        ({"baselines": ["bm25", ""]}, "baselines must be run names, not ''"),
    ],
)
def test_bad_baselines_are_errors(demo_results, kwargs, message):
    with pytest.raises(EvaluationError) as e:
        irspec.compare(demo_results, metrics="AP", **kwargs)
    assert str(e.value) == message


def test_tukey_with_two_baselines_keeps_all_pairs_adjustment(demo_results):
    """Tukey adjusts over all 6 pairs of the 4 runs; only the baselines' 5 pairs are reported, with the
    same p-values as in the all-pairs comparison."""
    every = {(c.a, c.b): c for c in irspec.compare(demo_results, test="tukey", metrics="AP")}
    some = irspec.compare(demo_results, test="tukey", baselines=["bm25", "dense"], metrics="AP")
    assert len(some) == 5 and {c.family_size for c in some} == {6}
    for c in some:
        same = every.get((c.a, c.b)) or every[(c.b, c.a)]
        assert c.p_value == pytest.approx(same.p_value, rel=1e-12)


def test_two_baseline_marks_are_letters_with_a_legend(demo_results):
    """A value carries the letters of the runs it is significantly better than; the legend names the
    baselines' letters; markdown, LaTeX and the HTML fragment say the same."""
    found = irspec.compare(demo_results, baselines=["bm25", "dense"], metrics="AP")
    shown = found.show(intervals=None)
    text = str(shown)
    hybrid = next(line for line in text.splitlines() if line.startswith("(c) hybrid"))
    assert hybrid.split()[3:5] == [
        "0.6776",
        "ab",
    ]  # on AP, the one metric compared, hybrid beats both baselines
    assert "every run compared with each baseline, bm25 (a) and dense (b)" in text
    assert "every run compared with each baseline, bm25 (a) and dense (b)" in shown._repr_markdown_()
    assert "every run compared with each baseline, bm25 (a) and dense (b)" in shown._repr_html_()
    latex = irspec.report.to_latex(list(found.results), comparisons=found, compare=found.settings)
    assert "across the 2 baselines" in latex and r"\textsuperscript{ab}" in latex


def test_two_baseline_plan_json_has_every_comparison_once(tmp_path):
    report = plan_report(tmp_path, "{baselines: [bm25, dense], test: t}", "[{format: json, path: out.json}]")
    ((_, text),) = render_outputs(report)
    doc = json.loads(text)
    assert doc["compare"]["baselines"] == ["bm25", "dense"] and doc["compare"]["family"] == "per-metric"
    keys = [(c["metric"], frozenset((c["a"], c["b"]))) for c in doc["comparisons"]]
    assert len(keys) == len(set(keys)) == 5 * len(METRICS)
    assert {c["family"] for c in doc["comparisons"]} == {"per-metric"}


@pytest.mark.parametrize(
    ("compare", "message"),
    [
        (
            "{baselines: [bm25, dnse]}",
            "compare.baselines[1]: baseline 'dnse' is not a run of this plan; did you mean 'dense'?",
        ),
        ("{baseline: bm25, baselines: [dense]}", "compare.baselines: give baseline or baselines, not both"),
        ("{baselines: [bm25, bm25]}", "compare.baselines"),
    ],
)
def test_bad_plan_baselines(tmp_path, compare, message):
    with pytest.raises(IrspecError) as e:
        plan_report(tmp_path, compare)
    assert message in str(e.value)


# --------------------------------------------------------------------------------------------------
# An enormous resampling count (issue 21): refused by one bound everywhere, not run for hours

HUGE = [10**7 + 1, 10**12, int("9" * 400)]


def test_the_bound_is_one_constant_in_the_schema_the_settings_and_stats():
    from irspec.plan import schema
    from irspec.stats.resampling import MAX_RESAMPLES

    assert (
        schema()["properties"]["compare"]["properties"]["permutations"]["maximum"] == MAX_RESAMPLES == 10**7
    )
    assert Compare(test="randomization", permutations=MAX_RESAMPLES).permutations == MAX_RESAMPLES


@pytest.mark.parametrize("count", HUGE, ids=["1e7 + 1", "1e12", "400 digits"])
@pytest.mark.parametrize("test", ["randomization", "bootstrap", "randomized-tukey"])
def test_compare_refuses_a_count_past_the_bound(demo_results, test, count):
    with pytest.raises(EvaluationError) as info:
        irspec.compare(demo_results, test=test, permutations=count)
    assert str(info.value).startswith("permutations must be an integer >= 1 and <= 10,000,000 (")
    assert len(str(info.value)) < 250


@pytest.mark.parametrize("count", HUGE, ids=["1e7 + 1", "1e12", "400 digits"])
def test_stats_refuses_a_count_past_the_bound(count):
    a, b = np.linspace(0, 1, 30), np.linspace(0, 1, 30) ** 2
    calls = [
        ("permutations", lambda: stats.paired(a, b, test="randomization", permutations=count)),
        ("permutations", lambda: stats.paired(a, b, test="bootstrap", permutations=count)),
        ("permutations", lambda: stats.tukey(np.stack([a, b, a * b]), randomized=True, permutations=count)),
        ("resamples", lambda: stats.bootstrap_ci(a - b, resamples=count)),
        ("resamples", lambda: stats.mean_ci(a, method="bootstrap", resamples=count)),
    ]
    for name, call in calls:
        with pytest.raises(EvaluationError) as info:
            call()
        assert str(info.value).startswith(f"{name} must be at most 10,000,000 (")
        assert len(str(info.value)) < 250


def test_a_plan_with_an_enormous_count_is_refused_at_once(tmp_path):
    # before: `irspec run` drew 10**12 sign vectors per comparison, for days
    shutil.copytree(DEMO, tmp_path / "demo", dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.py"))
    runs = "\n".join(f"  - {{name: {n}, path: demo/runs/{n}.run}}" for n in RUNS)
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"qrels: demo/qrels.txt\nruns:\n{runs}\nmetrics: [AP]\ncompare: {{baseline: bm25, test: randomization}}\n"
    )
    for count in HUGE:
        done = subprocess.run(
            [sys.executable, "-m", "irspec", "run", str(path), "--set", f"compare.permutations={count}"],
            check=False, capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 2 and done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert (
            len(lines) == 1 and "compare.permutations: " in lines[0] and "maximum of 10000000" in lines[0]
        ), done.stderr[-2000:]
        assert len(lines[0]) - len(str(path)) < 300


def test_a_geometric_mean_is_compared_on_the_logarithms_it_averages():
    """GMAP's per-query values are AP's: its row was MAP's test under GMAP's name. It is the paired t-test
    of log(max(AP, 1e-5)) (scipy on numpy's logs), whose exp(mean) is each run's GMAP, and a note says so."""
    import scipy.stats as st

    runs = {
        n: irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / f"{n}.run"), "AP, GMAP")
        for n in ("bm25", "dense")
    }
    found = irspec.compare(runs, baseline="bm25")
    ap, gmap = found
    logs = {n: np.log(np.maximum(r.column(r.metrics[0]), 1e-5)) for n, r in runs.items()}
    ref = st.ttest_rel(np.round(logs["dense"] - logs["bm25"], 10), np.zeros(len(logs["bm25"])))
    assert gmap.metric == "GMAP" and gmap.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert gmap.mean_difference == pytest.approx(np.mean(logs["dense"] - logs["bm25"]), abs=1e-10)
    assert np.exp(gmap.mean_a) == pytest.approx(runs["dense"].aggregate()["GMAP"], rel=1e-12)
    assert np.exp(gmap.mean_b) == pytest.approx(runs["bm25"].aggregate()["GMAP"], rel=1e-12)
    assert gmap.p_value != ap.p_value
    assert any(note.startswith("GMAP: compared on log(max(value, 1e-5))") for note in found.notes)
    power = irspec.power(runs, delta=0.05, baseline="bm25")
    row = next(r for r in power.pairs if r.metric == "GMAP")
    assert row.sd_difference == pytest.approx(np.std(logs["dense"] - logs["bm25"], ddof=1), rel=1e-9)
    assert any("GMAP: designed on log" in note for note in power.notes)


def test_marks_follow_the_side_a_sign_test_finds():
    """A wins one query by a lot, B the other nine by a little: the sign test is significant for B
    (binomtest: 0.0215), and the table marks A as worse, not better."""
    qids = [f"q{i}" for i in range(10)]
    a = make_result("A", qids, np.array([1.0] + [0.0] * 9), metrics=("P@10",))
    b = make_result("B", qids, np.array([0.0] + [0.1] * 9), metrics=("P@10",))
    found = irspec.compare([a, b], baseline="B", test="sign")
    assert found[0].significant and found[0].mean_difference > 0 and found[0].direction == -1
    from irspec.report.marks import significance_marks

    marks = significance_marks([a, b], list(found), found.settings)
    assert marks.cells == {("A", "P@10"): "worse"}


def test_tukey_counts_every_query_some_run_lacks():
    """A lacks q1 and B lacks q8 (missing_queries skip): two queries are left out, not one."""
    qids = [f"q{i}" for i in range(10)]
    rng = np.random.default_rng(3)
    a = make_result("A", [q for q in qids if q != "q1"], rng.random(9), metrics=("AP",), missing="skip")
    b = make_result("B", [q for q in qids if q != "q8"], rng.random(9), metrics=("AP",), missing="skip")
    for test in ("t", "tukey", "randomized-tukey"):
        found = irspec.compare([a, b], test=test, permutations=200)
        assert (found[0].n, found[0].left_out) == (8, 2), test


def test_a_geometric_means_relative_change_is_the_ratio_of_the_two_less_one():
    """GMAP is compared on logarithms, negative below 1: the difference divided by the baseline's mean
    logarithm flipped the sign (dense vs bm25 was -24%). The relative change is GMAP_a / GMAP_b - 1, from
    the runs' own GMAP aggregates (every run answers every demo query, so the pairs are all queries),
    for the paired tests and Tukey's alike, and every output shows it."""
    runs = {
        n: irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / f"{n}.run"), "GMAP")
        for n in ("bm25", "dense", "random")
    }
    gmap = {n: r.aggregate()["GMAP"] for n, r in runs.items()}
    for test in ("t", "tukey"):
        found = irspec.compare(runs, baseline="bm25", test=test)
        assert {c.a: c.relative_change for c in found} == {
            "dense": pytest.approx(gmap["dense"] / gmap["bm25"] - 1, rel=1e-8),
            "random": pytest.approx(gmap["random"] / gmap["bm25"] - 1, rel=1e-8),
        }, test
    assert gmap["dense"] > gmap["bm25"] and found[0].relative_change > 0
    assert json.loads(found.to_json())["comparisons"][0]["relative_change"] == found[0].relative_change
    shown = f"{gmap['dense'] / gmap['bm25'] - 1:+.1%}"
    assert shown in found._repr_html_()


def test_a_z_scores_relative_change_is_none_and_a_cdfs_is_the_ratio():
    """A z-score's 0 is the reference runs' mean: dividing by a mean z near 0 gave -2055% for an
    improvement. It has no relative change (None, null, shown as -); Phi(z), in [0, 1] with 0 the worst,
    keeps mean difference / mean of the baseline, computed here from the standardised values."""
    runs = {
        n: irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / f"{n}.run"), "nDCG@10")
        for n in ("bm25", "dense", "hybrid")
    }
    found = irspec.compare(irspec.standardize(runs), baseline="bm25")
    assert [c.metric for c in found] == ["z(nDCG@10)"] * 2
    assert [c.relative_change for c in found] == [None, None]
    assert all(row["relative_change"] is None for row in json.loads(found.to_json())["comparisons"])
    from irspec.report.model import FULL_COLUMNS, build_comparisons

    (block,) = build_comparisons(
        list(runs.values()), list(found), found.settings, columns=FULL_COLUMNS
    ).blocks
    rel = FULL_COLUMNS.index("rel")
    assert [row.cells[rel].text for row in block.rows] == ["-", "-"]

    phi = irspec.standardize(runs, cdf=True)
    found = irspec.compare(phi, baseline="bm25")
    values = {n: r.column(r.metrics[0]) for n, r in phi.items()}
    for c in found:
        hand = (sum(values[c.a]) - sum(values["bm25"])) / sum(values["bm25"])
        assert c.relative_change == pytest.approx(hand, rel=1e-8)


@pytest.mark.parametrize("test", ["t", "sign", "tukey"])
def test_wins_and_losses_are_counted_in_the_metrics_direction(test):
    """Search length and fall-out are better lower: A's lower SL on three queries of four are three wins,
    not three losses. NumRet is better neither way: a higher value counts as a win, as before. The text
    table's W/T/L and its legend say the same."""
    qids = ["q1", "q2", "q3", "q4", "q5"]
    metrics = ("SL", "Fallout@10", "num_ret", "P@10")
    a = make_result("A", qids, np.array([1.0, 1.0, 1.0, 9.0, 4.0]), metrics=metrics)
    b = make_result("B", qids, np.array([2.0, 2.0, 2.0, 2.0, 4.0]), metrics=metrics)
    found = irspec.compare([a, b], baseline="B", test=test)
    # A is lower on q1-q3, higher on q4 and equal on q5
    assert {c.metric: (c.wins, c.ties, c.losses) for c in found} == {
        "SL": (3, 1, 1),
        "Fallout@10": (3, 1, 1),
        "NumRet": (1, 1, 3),
        "P@10": (1, 1, 3),
    }
    if test == "sign":  # the test's statistic stays the count of queries where A is higher
        assert [c.statistic for c in found] == [1.0] * 4
    table = str(found)
    assert " 3/1/1 " in table and "W/T/L = queries won, tied, lost in the metric's direction" in table


def test_text_valued_metrics_are_left_out_with_a_note_in_comparisons_and_power(tmp_path):
    """relstring has no numbers to test: a compare section of it alone compared nothing and said nothing
    (an empty table, an empty CSV, an empty power analysis, exit 0). Now every output of the comparisons
    and of the power analysis says it was left out, as a catalogue-level metric is."""
    shutil.copytree(DEMO, tmp_path / "demo", dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.py"))
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run, demo/runs/dense.run]\nmetrics: [relstring]\n"
        "compare: {baseline: bm25}\npower: {delta: 0.1}\noutput:\n"
        "  - {format: table, content: comparisons}\n  - {format: markdown, content: comparisons, path: c.md}\n"
        "  - {format: latex, content: comparisons, path: c.tex}\n  - {format: html, path: r.html}\n"
        "  - {format: json, path: r.json}\n",
        encoding="utf-8",
    )
    report = run_plan(load_plan(plan))
    note = "relstring@10: text values, no numbers to test; not compared"
    assert report.comparisons == () and report.notes == (note,)
    assert report.power is not None and report.power.notes == (note,) and report.power.curves() == []
    for output, text in render_outputs(report):
        assert note in text, output.format
    assert json.loads(render_outputs(report)[-1][1])["power"]["notes"] == [note]
    # beside a numeric metric, the numeric one is compared and the note still names relstring
    runs = {
        n: irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / f"{n}.run"), "relstring, P@10")
        for n in ("bm25", "dense")
    }
    found = irspec.compare(runs, baseline="bm25")
    assert [c.metric for c in found] == ["P@10"] and found.notes == (note,)
    assert irspec.power(runs, delta=0.1, baseline="bm25").notes == (note,)
    assert irspec.power(found, delta=0.1).notes == (note,)


@pytest.mark.parametrize(("test", "permutations", "noted"), [
    ("bootstrap", 1, True), ("randomization", 39, True), ("randomized-tukey", 10, True),
    ("bootstrap", 40, False), ("t", 1, False),
])  # fmt: skip
def test_a_resampling_test_given_too_few_resamples_for_its_alpha_says_so(
    demo_results, test, permutations, noted
):
    """One bootstrap resample gave a zero-width "95% CI" that excluded the estimate, without a word: with
    fewer than 2 / alpha resamples no tail holds one."""
    found = irspec.compare(demo_results, baseline="bm25", test=test, permutations=permutations, seed=1)
    notes = [n for n in found.notes if "too few for" in n]
    assert bool(notes) == noted
    if noted:
        assert notes[0].startswith(f"{permutations:,} resamples are too few for {test} at alpha = 0.05") or (
            permutations == 1 and notes[0].startswith("1 resample is too few")
        )
        assert "(under 40)" in notes[0] and notes[0] in found.to_table()
