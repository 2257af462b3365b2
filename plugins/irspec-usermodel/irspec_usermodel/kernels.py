"""The computations of irspec-usermodel's metrics (declarations and formulas in :mod:`irspec_usermodel.plugin`).

``err`` and ``rbp`` are vectorised: each computes every query of a run at once from the flat arrays of an
:class:`irspec.plugin_api.Context` (one contiguous segment per query). ``err_reference`` is ERR written
straight from the paper, one query at a time, and the tests hold the two equal. ``ncg`` is a plain
per-query function: the engine calls it once per query with an :class:`irspec.plugin_api.QueryView`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import irspec
from irspec.plugin_api import Context, QueryView


def _within(ctx: Context, metric: Any) -> np.ndarray | None:
    """Per row: inside the cutoff k (``None`` when there is no cutoff)."""
    k = ctx.cutoff(metric)
    return None if k is None else ctx.top(k)


def err(ctx: Context, metric: Any) -> np.ndarray:
    """ERR@k = Σ_r (1/r) R_r Π_{i<r} (1 − R_i), R = (2^g − 1) / 2^g_max, for every query at once."""
    g_max = metric.get("max_grade")
    grade = np.clip(ctx.label, 0, g_max)  # unjudged rows carry a large negative label: grade 0
    stop = (np.exp2(grade) - 1.0) / 2.0**g_max  # < 1, so log(1 - stop) is finite
    inside = _within(ctx, metric)
    if inside is not None:
        stop = np.where(inside, stop, 0.0)
    log_go_on = np.log1p(-stop)
    # Π_{i<r} (1 − R_i) as exp of a running sum within each query, excluding the row itself.
    reach = np.exp(ctx.running_sum(log_go_on) - log_go_on)
    return ctx.seg_sum(reach * stop / ctx.rank)


def err_reference(query: QueryView, metric: Any) -> float:
    """ERR of one query, as the paper's algorithm 2 writes it: p = 1; for each rank, add p·R/r, p *= 1 − R."""
    g_max = metric.get("max_grade")
    k = metric.get("k")
    labels = query.labels if k is None else query.labels[:k]
    p, total = 1.0, 0.0
    for r, label in enumerate(labels, start=1):
        g = min(max(label if label is not None else 0, 0), g_max)
        stop = (2.0**g - 1.0) / 2.0**g_max
        total += p * stop / r
        p *= 1.0 - stop
    return total


def rbp(ctx: Context, metric: Any) -> np.ndarray:
    """RBP = (1 − p) Σ r_i p^(i−1) over the top min(n, k), or its residual (see the definition)."""
    p = metric.get("p")
    max_grade = metric.get("max_grade")
    if max_grade is None:
        relevance = ctx.relevant(ctx.level(metric)).astype(np.float64)
    else:
        if metric.get("rel") is not None:
            raise irspec.ParameterError(
                "RBP", "rel", "rel is for binary RBP; graded RBP (max_grade) uses the labels"
            )
        relevance = np.clip(ctx.label, 0, max_grade) / max_grade
    weight = (1.0 - p) * np.power(p, ctx.rank - 1.0)
    inside = _within(ctx, metric)
    if inside is None:
        inside = np.ones(len(ctx.rank), dtype=bool)
    if not metric.get("residual"):
        return ctx.seg_sum(np.where(inside, relevance * weight, 0.0))
    unjudged = ctx.label < 0
    k = ctx.cutoff(metric)
    depth = ctx.n if k is None else np.minimum(ctx.n, k)
    return ctx.seg_sum(np.where(inside & unjudged, weight, 0.0)) + np.power(p, depth.astype(np.float64))


def ncg(query: QueryView, metric: Any) -> float:
    """NCG@k = CG@k / ideal CG@k for one query (0 when the ideal is 0)."""
    k = metric.get("k")
    gains = metric.get("gains")
    table = gains.as_dict() if gains is not None else {}

    def gain(label: int | None) -> float:
        if label is None:
            return 0.0
        return float(table.get(label, max(label, 0)))

    ranked = query.labels if k is None else query.labels[:k]
    found = sum(gain(label) for label in ranked)
    best = sorted((gain(label) for label in query.qrels.values()), reverse=True)
    ideal = sum(g for g in (best if k is None else best[:k]) if g > 0)
    return found / ideal if ideal > 0 else 0.0
