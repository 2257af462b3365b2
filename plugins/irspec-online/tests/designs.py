"""Simulated designs with a known better ranking, shared by tests/test_simulation.py and
benchmarks/interleaving_ratio.py (which measures the ratios the tests hold)."""

from __future__ import annotations

import numpy as np
from irspec_online.simulation import from_qrels

__all__ = ["known_better"]


def known_better(users="pbm", queries=60, docs=30, seed=7):
    """Users whose attractiveness is ERR's mapping of graded labels; B ranks by the labels (a little
    noise), A is B with some adjacent pairs of its top 10 swapped: B is better, by a little."""
    rng = np.random.default_rng(seed)
    labels = rng.choice([0, 0, 0, 0, 0, 0, 1, 1, 2, 3], size=(queries, docs))
    qrels = {f"q{q}": {f"d{d}": int(labels[q, d]) for d in range(docs)} for q in range(queries)}
    model = from_qrels(qrels, users, unjudged=0.02, continuation=0.9)  # PBM's examination: 1/rank
    a, b = {}, {}
    for q in range(queries):
        good = list(np.argsort(-(labels[q] + rng.normal(0, 0.3, docs))))
        worse = good.copy()
        for i in range(0, 10, 2):
            if rng.random() < 0.5:
                worse[i], worse[i + 1] = worse[i + 1], worse[i]
        b[f"q{q}"], a[f"q{q}"] = [f"d{d}" for d in good], [f"d{d}" for d in worse]
    return model, a, b
