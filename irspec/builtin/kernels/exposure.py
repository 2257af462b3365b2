"""Kernels of the catalogue-level metrics (definitions in :mod:`irspec.builtin.exposure`).

Each takes the run's ``"recommendations"`` input (:mod:`irspec.recsys.matrices`: ``items``, every
test user's list by row number, ``-1`` padding; ``users``, the evaluated users' rows; ``n_items``, the
catalogue's size) and returns one float for the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irspec.spec.registry import Metric


def coverage(data: Any, metric: Metric) -> float:
    """Coverage@k: the share of the catalogue in some evaluated user's top k."""
    return float(np.count_nonzero(recommended(data, metric)) / data.n_items)


def gini(data: Any, metric: Metric) -> float:
    """Gini@k: the Gini index of the items' recommendation counts, never-recommended items included."""
    counts = np.sort(recommended(data, metric)).astype(np.float64)
    n, total = len(counts), counts.sum()
    if total == 0:
        return float("nan")
    if n == 1:
        return 0.0
    return float(np.dot(2 * np.arange(1, n + 1) - n - 1, counts) / ((n - 1) * total))


def entropy(data: Any, metric: Metric) -> float:
    """Entropy@k: the Shannon entropy, in bits, of the share of recommendations each item gets."""
    counts = recommended(data, metric)
    total = counts.sum()
    if total == 0:
        return float("nan")
    p = counts[counts > 0] / total
    return float(-np.dot(p, np.log2(p)))


def recommended(data: Any, metric: Metric) -> np.ndarray:
    """How many evaluated users' top k hold each item of the catalogue (by item index)."""
    top = data.items[data.users, : metric.get("k")]
    return np.bincount(top[top >= 0], minlength=data.n_items)
