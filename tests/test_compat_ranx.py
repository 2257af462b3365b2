"""``irspec.compat.ranx`` against ranx 0.3.21 itself: the same orders, values, reports and files.

ranx runs in a process of its own (``tests/fixtures/ranx_reference.py``) from the folder named by
``IRSPEC_RANX_PATH`` (``pip install --target DIR ranx==0.3.21``, as ``.ci/run`` does): installed beside
ir_measures it changes ir_measures' providers. One call answers every job of this module, in ranx's
process of the test worker (tests/ranx_process.py: numba's compilation costs seconds a process). Every
expected value is ranx's, or arithmetic written in the test.

The random cases are adversarial: tied scores (one decimal, or integers) in rankings of up to 40
documents (numba's quicksort moves ties past each other above 15), graded and negative labels, unjudged
documents, queries whose judgments have no relevant document or no document at all, empty rankings,
cutoffs beyond the ranking, relevance levels 1 and 2.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ranx_process

from irspec.compat import ranx
from irspec.testing import registered_plugin

SCRIPT = Path(__file__).parent / "fixtures" / "ranx_reference.py"
TOL = 1e-12

NAMES = [
    "hits", "hit_rate", "precision", "recall", "f1", "mrr", "map", "dcg", "dcg_burges", "ndcg", "ndcg_burges",
]  # fmt: skip
METRICS = (
    [f"{n}@{k}" for n in NAMES for k in (1, 3, 5, 10, 20)]
    + NAMES
    + ["r-precision", "rbp.8", "rbp.95", "rbp@5"]
    + [f"{n}@5-l2" for n in NAMES]
    + ["r-precision-l2", "ndcg-l2", "rbp.9-l2"]
)
PER_QUERY = ["bpref", "bpref-l2"]  # see the reference script: ranx's bpref is right one query at a time


def random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Judgments and a run over the same queries (ranx needs that), shuffled key orders."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in rng.permutation(12):
        pool = [f"d{i}" for i in rng.permutation(45)]
        judged = int(rng.integers(0, 10))
        labels = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=judged)
        if q % 5 == 0:
            labels = np.minimum(labels, 0)  # no relevant document
        qrels[f"q{q}"] = {pool[i]: int(v) for i, v in enumerate(labels)}
        depth = int(rng.choice([0, 1, 4, 12, 15, 16, 17, 25, 40]))
        docs = rng.permutation(pool[: max(depth + 3, 1)])[:depth]
        kind = q % 3
        if kind == 0:
            scores = rng.integers(0, 4, depth).astype(float)
        elif kind == 1:
            scores = np.round(rng.uniform(0, 2, depth), 1)
        else:
            scores = rng.uniform(-1, 1, depth)
        run[f"q{q}"] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
    # ranx can build no Qrels or Run whose every query is empty: one document each at least
    if not any(qrels.values()):
        qrels["q0"] = {"d0": 1}
    if not any(run.values()):
        run["q0"] = {"d0": 1.0}
    return qrels, run


def comparison_case(seed: int) -> tuple[dict[str, dict[str, int]], list[dict[str, dict[str, float]]]]:
    """Judgments of 60 queries and 4 or 5 runs, some of them better than others (so that some
    differences are significant), every query judged and ranked."""
    rng = np.random.default_rng(100 + seed)
    qrels = {f"q{q:02d}": {f"d{i}": int(rng.choice([0, 1, 2])) for i in range(12)} for q in range(60)}
    runs = []
    for r in range(4 + seed % 2):
        run = {}
        for q, docs in qrels.items():
            ids = list(docs) + [f"u{i}" for i in range(8)]
            scores = rng.normal(size=len(ids)) + r * 0.4 * np.array([docs.get(d, 0) for d in ids])
            run[q] = {d: float(round(s, 3)) for d, s in zip(ids, scores, strict=True)}
        runs.append(run)
    return qrels, runs


RUN_NAMES = ["bm25", "dense", "hybrid_1", "rerank", "model_5"]
COMPARISONS: list[tuple[str, dict[str, Any]]] = [
    ("student", {}),
    ("student", {"max_p": 0.05, "rounding_digits": 4}),
    ("tukey", {"max_p": 0.05}),
    ("student", {"show_percentages": True}),
    ("tukey", {"rounding_digits": 2, "show_percentages": True}),
    ("fisher", {"max_p": 0.05}),
]

SEEDS = range(12)
CASES = [random_case(s) for s in SEEDS]


def jobs() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for qrels, run in CASES:
        # ranx evaluates dicts only if no query is empty (it cannot type an empty array of rows)
        full = [q for q in qrels if qrels[q] and run[q]]
        for as_, qs in (("objects", list(qrels)), ("dicts", full)):
            out.append(
                {
                    "kind": "evaluate",
                    "as": as_,
                    "qrels": {q: qrels[q] for q in qs},
                    "run": {q: run[q] for q in qs},
                    "metrics": METRICS,
                    "per_query": PER_QUERY,
                }
            )
        for how in ("dict", "add_score", "add_multi", "make_comparable", "from_df"):
            out.append({"kind": "order", "run": run, "how": how})
    for seed in range(3):  # long rankings: numba's quicksort partitions many levels deep
        rng = np.random.default_rng(300 + seed)
        long = {}
        for q in range(6):
            n = int(rng.integers(100, 700))
            scores = rng.integers(0, [3, 20, 200, 5000][q % 4], n).astype(float)
            long[f"q{q}"] = {f"d{i}": float(v) for i, v in zip(rng.permutation(n), scores, strict=True)}
        for how in ("dict", "add_score"):
            out.append({"kind": "order", "run": long, "how": how})
    for seed, (test, options) in enumerate(COMPARISONS):
        qrels, runs = comparison_case(seed)
        out.append(
            {
                "kind": "compare",
                "qrels": qrels,
                "runs": runs,
                "names": RUN_NAMES[: len(runs)],
                "metrics": ["ndcg@10", "map@100", "mrr", "precision@5", "recall@20-l2", "bpref"][
                    : 2 + seed % 5
                ],
                "options": {"stat_test": test, **options},
            }
        )
    for seed, (method, norm, params) in enumerate(FUSIONS):
        out.append(
            {"kind": "fuse", "runs": fusion_runs(seed), "method": method, "norm": norm, "params": params}
        )
    for seed, norm in enumerate(
        ["min-max", "max", "sum", "zmuv", "rank", "min-max-inverted"]
    ):  # borda: ranx fails
        out.append({"kind": "normalize", "run": fusion_runs(seed)[0], "norm": norm})
    for method, metric in OPTIMIZED:
        qrels, runs = comparison_case(7)
        out.append(
            {
                "kind": "optimize",
                "qrels": qrels,
                "runs": runs[:3],
                "method": method,
                "norm": "min-max",
                "metric": metric,
            }
        )
    return out


def fusion_runs(seed: int) -> list[dict[str, dict[str, float]]]:
    """Three runs over the same queries, without tied scores (a method that reads ranks ranks ties by
    irspec's rule, not by ranx's sort), documents in one run only among them. Condorcet is left to
    tests/test_fusion_ranx.py, which fixes the order ranx takes its candidates in (a set's)."""
    rng = np.random.default_rng(200 + seed)
    runs = []
    for _ in range(3):
        run = {}
        for q in range(6):
            docs = rng.choice(20, size=int(rng.integers(1, 12)), replace=False)
            run[f"q{q}"] = {
                f"d{d}": float(s) for d, s in zip(docs, rng.uniform(-1, 3, len(docs)), strict=True)
            }
        runs.append(run)
    return runs


FUSIONS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("wsum", "min-max", {"weights": [0.2, 0.5, 0.3]}),
    ("rrf", "min-max", {}),
    ("rrf", None, {"k": 10}),
    ("sum", "zmuv", {}),
    ("mnz", "max", {}),
    ("gmnz", "sum", {"gamma": 0.4}),
    ("isr", "rank", {}),
    ("bordafuse", "min-max", {}),
    ("rbc", "min-max", {"phi": 0.7}),
    ("mixed", "min-max", {"weights": [0.5, 0.3, 0.2]}),
    ("max", "min-max-inverted", {}),
]
OPTIMIZED = [("rrf", "ndcg@10"), ("wsum", "map@100"), ("logn_isr", "mrr")]


JOBS = jobs()


def run_ranx(jobs: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """ranx's answers to ``jobs``, or a skip when ``IRSPEC_RANX_PATH`` is not set."""
    return ranx_process.answers(SCRIPT, jobs, tmp_path_factory)


@pytest.fixture(autouse=True)
def installed_plugins() -> Any:
    """ranx's rbp is irspec-usermodel's RBP: the installed plugins are loaded (tests/conftest.py leaves
    them out of every other test)."""
    with registered_plugin(load_entry_points=True):
        yield


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    return run_ranx(JOBS, tmp_path_factory)


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None or math.isnan(a) or math.isnan(b):
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def plain(values: Any) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in np.asarray(values, dtype=float).tolist()]


@pytest.mark.parametrize("index", [i for i, j in enumerate(JOBS) if j["kind"] == "evaluate"])
def test_evaluate_equals_ranx(answers: list[Any], index: int) -> None:
    job, expected = JOBS[index], answers[index]
    if job["as"] == "objects":
        qrels: Any = ranx.Qrels(job["qrels"])
        run: Any = ranx.Run(job["run"])
        queries = sorted(job["qrels"])
    else:
        qrels, run, queries = job["qrels"], job["run"], list(job["qrels"])
    got = ranx.evaluate(qrels, run, METRICS + PER_QUERY, return_mean=False)
    bad = []
    for m in METRICS + PER_QUERY:
        mine, theirs = plain(got[m]), expected[m]
        for q, a, b in zip(queries, mine, theirs, strict=True):
            if not close(a, b):
                bad.append(f"{m} {q}: {a} != ranx's {b}")
    assert not bad, f"{len(bad)} differences: " + "; ".join(bad[:8])


def built(how: str, data: dict[str, dict[str, float]]) -> ranx.Run:
    """A Run made as the reference script makes it for ``how``."""
    if how == "dict":
        return ranx.Run(data)
    if how == "add_score":
        run = ranx.Run()
        for q, docs in data.items():
            for d, s in docs.items():
                run.add_score(q, d, s)
        run.sort()
        return run
    if how == "add_multi":
        run = ranx.Run(data)
        first = next(q for q, docs in data.items() if docs)
        run.add_multi([first], [list(data[first])], [list(data[first].values())])
        return run
    if how == "make_comparable":
        return ranx.Run(data).make_comparable(ranx.Qrels({q: {"x": 1} for q in [*list(data)[1:], "extra"]}))
    import pandas as pd

    rows = [(q, d, s) for q, docs in data.items() for d, s in docs.items()]
    return ranx.Run.from_df(pd.DataFrame(rows, columns=["q_id", "doc_id", "score"]))


@pytest.mark.parametrize("index", [i for i, j in enumerate(JOBS) if j["kind"] == "order"])
def test_run_order_equals_ranx(answers: list[Any], index: int) -> None:
    """ranx's sort, ties included (numba's quicksort above 15 documents), however the run was made:
    from a dict, a document at a time, sorted again after add_multi or make_comparable, from a frame."""
    how, data = JOBS[index]["how"], JOBS[index]["run"]
    run = built(how, data)
    expected = answers[index]
    if how == "add_multi":
        # ranx's add_multi garbles the ids of the query it adds (numba reads its strings' memory wrongly):
        # the other queries, sorted again, are compared
        del expected[next(q for q, docs in data.items() if docs)]
    assert {q: list(run[q]) for q in run.get_query_ids() if q in expected} == expected


def test_the_cases_reach_the_corners() -> None:
    ties_long = sum(
        1
        for _, run in CASES
        for docs in run.values()
        if len(docs) > 15 and len(set(docs.values())) < len(docs)
    )
    no_relevant = sum(
        1 for qrels, _ in CASES for docs in qrels.values() if not any(v >= 1 for v in docs.values())
    )
    empty = sum(1 for _, run in CASES for docs in run.values() if not docs)
    assert ties_long > 20 and no_relevant > 10 and empty > 3


def compare_of(job: dict[str, Any]) -> ranx.Report:
    runs = [ranx.Run(r, name=n) for n, r in zip(job["names"], job["runs"], strict=True)]
    return ranx.compare(ranx.Qrels(job["qrels"]), runs, job["metrics"], **job["options"])


COMPARE_JOBS = [i for i, j in enumerate(JOBS) if j["kind"] == "compare"]


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # scipy's Tukey, as in ranx
@pytest.mark.parametrize("index", COMPARE_JOBS)
def test_compare_report_equals_ranx(answers: list[Any], index: int) -> None:
    """The printed table, the LaTeX, the dict and the frame are ranx's (the randomization test's p-values
    are ranx's procedure with other random draws: within 0.05 of ranx's, and the table the same when no
    p-value is near max_p)."""
    job, expected = JOBS[index], answers[index]
    report = compare_of(job)
    got = json.loads(json.dumps(report.to_dict(), default=float))
    if job["options"]["stat_test"] == "fisher":
        for a in job["names"]:
            for b, ps in got[a]["comparisons"].items():
                for m, p in ps.items():
                    assert abs(p - expected["dict"][a]["comparisons"][b][m]) <= 0.05, (a, b, m)
                    got[a]["comparisons"][b][m] = expected["dict"][a]["comparisons"][b][m]
    assert_same(got, expected["dict"])
    assert json.loads(json.dumps(report.to_dataframe().to_dict("list"), default=float)) == expected["frame"]
    near = any(
        abs(p - job["options"].get("max_p", 0.01)) < 0.05
        for a in job["names"]
        for ps in expected["dict"][a]["comparisons"].values()
        for p in ps.values()
        if p is not None
    )
    if job["options"]["stat_test"] != "fisher" or not near:
        assert str(report) == expected["str"]
        assert report.to_latex() == expected["latex"]


def assert_same(got: Any, expected: Any, where: str = "") -> None:
    """Equal dicts, floats within TOL (None for NaN)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and list(got) == list(expected), where
        for k in expected:
            assert_same(got[k], expected[k], f"{where}/{k}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            assert_same(g, e, f"{where}[{i}]")
    elif isinstance(expected, float) or expected is None:
        g = None if isinstance(got, float) and math.isnan(got) else got
        assert close(g, expected), f"{where}: {got} != ranx's {expected}"
    else:
        assert got == expected, f"{where}: {got!r} != ranx's {expected!r}"


def test_compare_keeps_each_runs_values_as_ranx_does() -> None:
    qrels, runs = comparison_case(0)
    run = ranx.Run(runs[0], name="a")
    report = ranx.compare(ranx.Qrels(qrels), [run, ranx.Run(runs[1])], ["ndcg@10", "mrr"])
    assert report.model_names == ["a", "run_2"]
    assert set(run.scores) == {"ndcg@10", "mrr"} and len(run.scores["mrr"]) == 60
    assert run.mean_scores["mrr"] == pytest.approx(report.results["a"]["mrr"], abs=TOL)


@pytest.mark.parametrize("index", [i for i, j in enumerate(JOBS) if j["kind"] in ("fuse", "normalize")])
def test_fuse_and_normalize_equal_ranx(answers: list[Any], index: int) -> None:
    job, expected = JOBS[index], answers[index]
    if job["kind"] == "fuse":
        found = ranx.fuse([ranx.Run(r) for r in job["runs"]], job["norm"], job["method"], job["params"])
    else:
        found = ranx.normalize(ranx.Run(job["run"], name="r"), job["norm"])
    assert found.name == expected["name"]
    got = found.to_dict()
    assert list(got) == list(expected["run"])
    for q, docs in expected["run"].items():
        assert got[q].keys() == docs.keys(), q
        for d, s in docs.items():
            assert math.isclose(got[q][d], s, rel_tol=1e-9, abs_tol=1e-9), (q, d, got[q][d], s)


@pytest.mark.parametrize("index", [i for i, j in enumerate(JOBS) if j["kind"] == "optimize"])
def test_optimize_fusion_chooses_ranxs_parameters(answers: list[Any], index: int) -> None:
    job, expected = JOBS[index], answers[index]
    runs = [ranx.Run(r) for r in job["runs"]]
    found = ranx.optimize_fusion(ranx.Qrels(job["qrels"]), runs, job["norm"], job["method"], job["metric"])
    assert json.loads(json.dumps(found)) == expected
    chosen, report = ranx.optimize_fusion(
        ranx.Qrels(job["qrels"]),
        runs,
        job["norm"],
        job["method"],
        job["metric"],
        return_optimization_report=True,
    )
    assert chosen == found and len(report.configs) == len(report.results) > 1


def test_the_t_test_is_scipys() -> None:
    """ranx's t-test is scipy's ttest_rel; the drop-in's p-values (irspec's Student's t) equal it to 1e-12."""
    from scipy import stats

    from irspec.compat.ranx._comparisons import _paired_t

    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(2, 200))
        a = rng.random(n)
        b = a + rng.normal(rng.normal() * 0.1, 0.2, n) * (rng.random(n) < 0.8)
        assert math.isclose(_paired_t(a, b), stats.ttest_rel(a, b).pvalue, rel_tol=1e-12)
    assert math.isnan(_paired_t([1.0, 2.0], [1.0, 2.0])) and _paired_t([1.0, 2.0], [0.0, 1.0]) == 0.0


def test_importing_the_drop_in_loads_no_numpy() -> None:
    code = "import sys; from irspec.compat import ranx; print(sorted({'numpy', 'polars', 'scipy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_module_docstring_example() -> None:
    """ndcg@5 of d1 (label 1) then d2 (label 2): (1 + 2/log2 3) / (2 + 1/log2 3)."""
    import doctest

    import irspec.compat.ranx as module

    assert doctest.testmod(module).failed == 0
    assert ranx.evaluate(
        ranx.Qrels({"q1": {"d1": 1, "d2": 2}}), ranx.Run({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}), "ndcg@5"
    ) == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=TOL)
