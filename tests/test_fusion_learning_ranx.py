"""irspec's fusion methods that learn against ranx 0.3.21 (its ``*_train`` then ``fuse``), on random runs.

As in tests/test_fusion_ranx.py, ranx runs in a process of its own (``tests/fixtures/ranx_fuse.py``, from
``IRSPEC_RANX_PATH``), which trains each case on its training qrels and fuses. The runs have tied
scores, documents one run alone retrieved, depths from 1 to 60 (so that ProbFuse's segments, SegFuse's
first four and BayesFuse's first six buckets all see documents), and queries a run lacks; the training
qrels judge some of the runs' queries (one a run lacks, one without a relevant document) and a query
no run retrieved for, which is no training query. Every query of the runs is fused, training ones
included. Same documents per query, scores within 1e-9.

Left out: the borda and min-max-inverted normalisations, after which ranx's positions (its dicts'
order) are not the order it trains on (irspec trains and fuses on its ranks: test_fusion_learning.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_fusion_ranx import (
    assert_same_as_ranx,
    run_ranx,
)  # the reference's process, shared with the other methods' test

import irspec

METHODS: list[tuple[str, dict]] = [
    ("probfuse", {"segments": 1}),
    ("probfuse", {"segments": 3}),
    ("probfuse", {"segments": 7}),
    ("segfuse", {}),
    ("slidefuse", {"w": 0}),
    ("slidefuse", {"w": 2}),
    ("posfuse", {}),
    ("mapfuse", {}),
    ("bayesfuse", {}),
]
NORMS = ["min-max", "max", "sum", "zmuv", "rank", "none"]


def random_case(seed: int, ties: bool) -> tuple[list[dict], dict]:
    """Three runs over eight queries of a pool of 90 documents, and training qrels."""
    rng = np.random.default_rng(100 + seed)
    runs = []
    for _ in range(3):
        run = {}
        for q in range(8):
            if rng.random() < 0.2:
                continue  # this run lacks the query
            depth = int(rng.integers(1, 61))
            docs = rng.choice(90, size=depth, replace=False)
            scores = np.round(rng.uniform(0, 3, depth), 1) if ties else rng.uniform(-1, 3, depth)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    qrels: dict[str, dict[str, int]] = {}
    for q in range(5):  # q0..q4 judged; q5..q7 fused but not trained on
        labels = rng.choice([0, 0, 1, 2], size=30) if q != 2 else np.zeros(30, dtype=int)
        docs = rng.choice(90, size=30, replace=False)
        qrels[f"q{q}"] = {f"d{d}": int(r) for d, r in zip(docs, labels, strict=True)}
    qrels["q99"] = {"d1": 1}  # judged, retrieved by no run: not a training query
    return runs, qrels


def training(runs: list[dict], qrels: dict) -> dict:
    """The training qrels as ranx must be given them: the queries some run retrieved documents for."""
    return {q: docs for q, docs in qrels.items() if any(q in r for r in runs)}


def cases() -> list[dict]:
    out = []
    for seed in range(2):
        for ties in (True, False):
            runs, qrels = random_case(seed, ties)
            for method, params in METHODS:
                # only SegFuse reads scores; the others read positions, which every norm here keeps
                for norm in NORMS if method == "segfuse" or seed == 0 else ["none", "zmuv"]:
                    out.append(
                        {"runs": runs, "qrels": qrels, "method": method, "norm": norm, "params": params}
                    )
    return out


CASES = cases()


@pytest.fixture(scope="module")
def ranx_fused(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    cases = [dict(c, qrels=training(c["runs"], c["qrels"])) for c in CASES]
    return run_ranx(cases, tmp_path_factory)


def spec_text(case: dict) -> str:
    args = [f"norm={case['norm']}"] + [f"{k}={v}" for k, v in case["params"].items()]
    return f"{case['method']}({', '.join(args)})"


def test_cases_cover_every_learning_method():
    assert {c["method"] for c in CASES} == {
        "probfuse",
        "segfuse",
        "slidefuse",
        "posfuse",
        "mapfuse",
        "bayesfuse",
    }
    runs, qrels = random_case(0, True)
    assert set(training(runs, qrels)) == {"q0", "q1", "q2", "q3", "q4"}  # q99 is no training query
    assert any(q not in r for r in runs for q in ("q0", "q1", "q2", "q3", "q4"))  # a run lacks one
    assert max(len(d) for r in runs for d in r.values()) > 30


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{spec_text(c)}-{i}" for i, c in enumerate(CASES)])
def test_learned_fusion_equals_ranx(ranx_fused: list[dict], index: int):
    case = CASES[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)  # the runs lack queries on purpose
        fused = irspec.fuse(case["runs"], spec_text(case), qrels=case["qrels"])
    assert_same_as_ranx(fused, ranx_fused[index])
