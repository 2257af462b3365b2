"""trec_eval's means, to the last bit: how a metric's per-query values become its one number.

Every aggregate irspec prints (a result's means, a system's spread, the compare step's ``mean_a`` and
``mean_b``, Spark's :func:`~irspec.evaluation.spark.aggregate`, a log's streamed means checked against
them) goes through :func:`aggregate_values`; never numpy's pairwise ``mean``. Plain numpy, nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["GMEAN_FLOOR", "aggregate_columns", "aggregate_values", "floored_logs", "sequential_sum"]


def aggregate_values(values: np.ndarray, how: str) -> float:
    """Combine per-query values: ``mean`` and ``sum`` skip NaN; ``gmean`` floors values at 1e-5.

    Values but none defined (every one NaN: ``SL(unfound=skip)`` where no query finds a relevant
    document) give NaN, undefined, never a number a ranking would read as a score; no values at all (an
    evaluation of no queries) give 0.0, as trec_eval prints for a measure over no queries. trec_eval's own
    measures are never NaN, so their means are trec_eval's either way.

    trec_eval's rule, to the last bit: the values are added one after another in the order given (the
    caller's query order; a :class:`~irspec.evaluation.result.Result` lists queries sorted by id, as
    trec_eval visits them), then the sum is divided by their number. A pairwise or compensated sum (numpy's ``mean``, ``math.fsum``)
    rounds differently and moves a printed fourth decimal now and then. ``gmean`` adds the logarithms
    the same way and takes ``exp`` of their mean, with the C library's ``log`` and ``exp``.
    """
    if how == "none":
        return math.nan
    v = values[~np.isnan(values)]
    if len(v) == 0:
        return 0.0 if len(values) == 0 else math.nan
    if how == "gmean":
        return math.exp(sequential_sum(floored_logs(v)) / len(v))
    total = sequential_sum(v)
    return total if how == "sum" else total / len(v)


def floored_logs(values: np.ndarray) -> np.ndarray:
    """log(max(v, 1e-5)) of each value, with the C library's ``log`` (numpy's can differ in the last bit):
    the terms a geometric mean adds (GMAP's, trec_eval's gm_map). NaN stays NaN."""
    floored = np.maximum(values, GMEAN_FLOOR).tolist()
    return np.array([math.log(x) if x == x else math.nan for x in floored], dtype=np.float64)


def aggregate_columns(values: np.ndarray, hows: Sequence[str]) -> list[float]:
    """:func:`aggregate_values` of each column of ``values`` (queries × metrics), ``hows[j]`` saying how
    column ``j`` combines: the same numbers, bit for bit. The means and sums of columns without NaN (the
    usual case) are added in one pass down the columns, each column's sum as sequential as alone."""
    simple = [j for j, how in enumerate(hows) if how in ("mean", "sum")] if len(values) else []
    if simple:  # those without NaN
        defined = ~np.isnan(values[:, simple]).any(axis=0)
        simple = [j for j, ok in zip(simple, defined.tolist(), strict=True) if ok]
    found: dict[int, float] = {}
    if simple:
        totals = np.add.accumulate(values[:, simple], axis=0)[-1].tolist()
        found = {j: t if hows[j] == "sum" else t / len(values) for j, t in zip(simple, totals, strict=True)}
    return [found[j] if j in found else aggregate_values(values[:, j], how) for j, how in enumerate(hows)]


GMEAN_FLOOR = 1e-5
"""trec_eval's MIN_GEO_MEAN: the floor of a value entering a geometric mean (a 0 would make it 0)."""


def sequential_sum(values: np.ndarray) -> float:
    """``((v0 + v1) + v2) + ...``: left to right in float64, as a C loop adds; 0.0 when empty.

    ``np.add.accumulate`` is sequential by definition (each partial sum is an output), unlike
    ``np.sum``, which adds pairwise.
    """
    if len(values) == 0:
        return 0.0
    return float(np.add.accumulate(np.asarray(values, dtype=np.float64))[-1])
