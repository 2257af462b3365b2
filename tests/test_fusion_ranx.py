"""irspec's fusion methods against ranx 0.3.21's ``fuse``, the reference, on random runs.

ranx runs in a process of its own (``tests/fixtures/ranx_fuse.py``), from the folder named by
``IRSPEC_RANX_PATH`` (``pip install --target DIR ranx==0.3.21``, as ``.ci/run`` does): installed beside
ir_measures, ranx changes the providers ir_measures uses, which other tests rely on. One call runs every
case of this module, in ranx's process of the test worker, which the other fusion tests' cases share
(tests/ranx_process.py), since numba's compilation costs seconds per process. Without the variable the
tests skip, which CI (IRSPEC_STRICT_SKIPS=1) turns into a failure.

The runs have tied scores, documents that one run alone retrieved, different depths, and queries that a
run lacks (ranx refuses runs whose queries differ: the reference is given an empty ranking for them,
which is what irspec reads a missing query as). Two orders that ranx leaves to chance are fixed to
irspec's in the reference (see the script): tied scores rank by descending docno, and the candidates
start in descending docno order. Every fused run has the same documents per query as ranx's and
scores within 1e-9.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import ranx_process

import irspec

SCRIPT = Path(__file__).parent / "fixtures" / "ranx_fuse.py"

# ranx's method name and its parameters. The methods that read ranks are left out in two cases where
# ranx's ranks are not the order of the normalised scores: after min-max-inverted with tied scores (ranx
# sorts again, with an unstable sort) and after borda (ranx ranks in the order borda_norm stores the
# documents: the candidates', not the scores'); test_fusion.py holds irspec's reading of both.
METHODS: list[tuple[str, dict]] = [
    ("sum", {}),
    ("max", {}),
    ("min", {}),
    ("med", {}),
    ("anz", {}),
    ("mnz", {}),
    ("gmnz", {"gamma": 0.7}),
    ("rrf", {}),
    ("rrf", {"k": 5}),
    ("isr", {}),
    ("log_isr", {}),
    ("logn_isr", {}),
    ("logn_isr", {"sigma": 0.5}),
    ("rbc", {"phi": 0.8}),
    ("bordafuse", {}),
    ("w_bordafuse", {"weights": [0.5, 1.5, 1.0]}),
    ("condorcet", {}),
    ("w_condorcet", {"weights": [0.2, 0.5, 0.4]}),
    ("wsum", {"weights": [0.3, 0.5, 0.2]}),
    ("wmnz", {"weights": [0.3, 0.5, 0.2]}),
    ("mixed", {"weights": [0.3, 0.5, 0.2]}),
]
RANK_BASED = {
    "rrf",
    "isr",
    "log_isr",
    "logn_isr",
    "rbc",
    "bordafuse",
    "w_bordafuse",
    "condorcet",
    "w_condorcet",
}
NORMS = ["min-max", "max", "sum", "zmuv", "rank", "borda", "min-max-inverted", "none"]


TYING_WEIGHTS = [0.76, 0.3, 0.88, 0.58, 0.16]
"""Weights of five runs two sides of which add up to one real number, 0.76 + 0.58 = 0.3 + 0.88 + 0.16. Added
as ranx adds them, each side apart in the runs' order, both are 1.3399999999999999: a Condorcet vote that
ties, the first document ahead. The total less one side is 1.3400000000000003, the other side ahead."""


def random_runs(seed: int, ties: bool, count: int = 3) -> list[dict[str, dict[str, float]]]:
    """``count`` runs over a few queries: depths from 1 to 14 of a pool of 16 documents (so that many are
    in one run only), some queries missing from a run, scores with ties (one decimal) or without."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(count):
        run = {}
        for q in range(6):
            if rng.random() < 0.2:
                continue  # this run lacks the query
            depth = int(rng.integers(1, 15))
            docs = rng.choice(16, size=depth, replace=False)
            if ties:
                scores = np.round(rng.uniform(-1, 3, depth), 1) if q % 2 else rng.integers(0, 3, depth) * 1.0
            else:
                scores = rng.uniform(-1, 3, depth)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs


def cases() -> list[dict]:
    out = []
    for seed in range(3):
        for ties in (True, False):
            runs = random_runs(seed, ties)
            for method, params in METHODS:
                for norm in NORMS:
                    if method in RANK_BASED and (norm == "borda" or (ties and norm == "min-max-inverted")):
                        continue  # ranx's ranks there are not the scores' (test_fusion.py holds irspec's)
                    out.append({"runs": runs, "method": method, "norm": norm, "params": params})
        # weighted votes that tie as ranx adds them (each side apart): five runs
        for norm in ("none", "min-max-inverted"):
            runs = random_runs(seed, ties=False, count=5)
            out.append(
                {"runs": runs, "method": "w_condorcet", "norm": norm, "params": {"weights": TYING_WEIGHTS}}
            )
    # 0.2 + 0.7 (0.8999999999999999) against 0.9, as ranx adds them: b, the third run's first, is ahead; the
    # total less 0.2 + 0.7 is 0.8999999999999999 too, a tie, which put a ahead
    two = {"q1": {"a": 2.0, "b": 1.0}}
    out.append(
        {
            "runs": [two, two, {"q1": {"b": 2.0, "a": 1.0}}],
            "method": "w_condorcet",
            "norm": "none",
            "params": {"weights": [0.2, 0.7, 0.9]},
        }
    )
    return out


CASES = cases()


def run_ranx(cases: list[dict], tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """ranx's fused runs of ``cases`` (tests/fixtures/ranx_fuse.py, in ranx's process: tests/ranx_process.py),
    or a skip when ``IRSPEC_RANX_PATH`` is not set."""
    return ranx_process.answers(SCRIPT, cases, tmp_path_factory)


@pytest.fixture(scope="module")
def ranx_fused(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return run_ranx(CASES, tmp_path_factory)


def spec_text(case: dict) -> str:
    """The case as an irspec spec, in ranx's spelling (``w_bordafuse(weights=[...], norm=min-max)``)."""
    args = [f"norm={case['norm']}"] + [f"{k}={v}" for k, v in case["params"].items()]
    return f"{case['method']}({', '.join(args)})"


def assert_same_as_ranx(fused: irspec.data.Run, reference: dict[str, dict[str, float]]) -> None:
    """The same documents per query as ranx's fused run, and scores within 1e-9."""
    ours: dict[str, dict[str, float]] = {}
    for q, d, s in fused.frame.select("query", "docno", "score").iter_rows():
        ours.setdefault(q, {})[d] = s
    theirs = {q: docs for q, docs in reference.items() if docs}
    assert ours.keys() == theirs.keys()
    for q in theirs:
        assert ours[q].keys() == theirs[q].keys(), q
        for d, s in theirs[q].items():
            assert math.isclose(ours[q][d], s, rel_tol=1e-9, abs_tol=1e-9), (q, d, ours[q][d], s)


def test_cases_cover_every_method_and_normalisation():
    assert {c["method"] for c in CASES} == {m for m, _ in METHODS}
    assert {c["norm"] for c in CASES} == set(NORMS)
    assert len(CASES) > 700


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{spec_text(c)}-{i}" for i, c in enumerate(CASES)])
def test_fused_run_equals_ranx(ranx_fused: list[dict], index: int):
    case = CASES[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)  # the runs lack queries on purpose
        fused = irspec.fuse(case["runs"], spec_text(case))
    assert_same_as_ranx(fused, ranx_fused[index])
