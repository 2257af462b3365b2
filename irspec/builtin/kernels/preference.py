"""Kernels of Compat and Accuracy (definitions in :mod:`irspec.builtin.preference`)."""

from __future__ import annotations

import numpy as np

from irspec.evaluation.context import Context, safe_divide
from irspec.spec.registry import Metric


def compat(ctx: Context, metric: Metric) -> np.ndarray:
    """RBO of the ranking with its most compatible ideal ranking, over depth D = max(n, m), normalised by
    the ideal's RBO with itself unless ``normalize=false``.

    A document in both the ranking (at rank a) and the ideal (at place b) is in the overlap at every
    depth i >= max(a, b), so the overlap sum Σ_i p^(i-1) |overlap_i| / i is, per such document, the tail
    Σ_{i=max(a,b)..D} p^(i-1) / i: one lookup in the reversed running sums of those weights.
    """
    level = ctx.level(metric)
    p, normalize = float(metric.get("p")), metric.get("normalize")
    m = ctx.R(level).astype(np.int64)
    depth = np.maximum(ctx.n, m)
    seg, rank = ctx.relevant_places(level)
    rows, _ = ctx.relevant_rows(level)
    place = _ideal_places(ctx, seg, rank, ctx.label[rows])
    i = np.arange(1, int(depth.max(initial=0)) + 2, dtype=np.float64)
    powers = p ** (i - 1)
    # tail[x - 1] = Σ_{i >= x} p^(i-1) / i, summed from the far end so that small tails keep their digits.
    tail = np.concatenate((np.cumsum((powers / i)[::-1])[::-1], [0.0]))
    head = np.concatenate(([0.0], np.cumsum(powers)))  # head[x] = Σ_{i <= x} p^(i-1)
    first = np.maximum(rank, place)
    overlap = np.bincount(seg, weights=tail[first - 1] - tail[depth[seg]], minlength=ctx.nq)
    if normalize:
        # the ideal's overlap with itself is min(i, m) at depth i: Σ_{i<=m} p^(i-1) + m Σ_{m<i<=D} p^(i-1)/i
        return safe_divide(overlap, head[m] + m * (tail[m] - tail[depth]))
    return safe_divide(overlap, head[depth])


def _ideal_places(ctx: Context, seg: np.ndarray, rank: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The 1-based place in the ideal ranking of each relevant retrieved document (query ``seg``, rank
    ``rank``, label ``labels``): the query's judged documents with a higher label, plus the retrieved
    ones with the same label ranked above it, plus one."""
    ideal, offsets = ctx.ideal_labels()
    values = np.unique(np.concatenate((ideal, labels)))
    width = len(values)
    # One ascending key per (query, label descending): the ideal labels are sorted descending per query.
    ideal_key = np.repeat(np.arange(ctx.nq, dtype=np.int64), np.diff(offsets)) * width + (
        width - 1 - np.searchsorted(values, ideal)
    )
    key = seg.astype(np.int64) * width + (width - 1 - np.searchsorted(values, labels))
    higher = np.searchsorted(ideal_key, key, side="left") - offsets[seg]
    # Among retrieved documents of one query and label, the ideal keeps the run's order.
    order = np.lexsort((rank, -labels, seg))
    index = np.arange(len(order))
    new = np.ones(len(order), dtype=bool)
    new[1:] = key[order][1:] != key[order][:-1]
    before = np.empty(len(order), dtype=np.int64)
    before[order] = index - np.maximum.accumulate(np.where(new, index, 0))
    return higher + before + 1


def accuracy(ctx: Context, metric: Metric) -> np.ndarray:
    """1 − Σ_r (non-relevant above r) / (K·N) over the top k; NaN where K·N = 0."""
    level = ctx.level(metric)
    k = ctx.cutoff(metric)
    top = ctx.n if k is None else np.minimum(ctx.n, k)
    seg, rank = ctx.relevant_places(level)
    _, nth = ctx.relevant_rows(level)
    inside = rank <= top[seg]
    relevant = np.bincount(seg[inside], minlength=ctx.nq)
    misordered = np.bincount(seg[inside], weights=(rank - nth)[inside], minlength=ctx.nq)
    pairs = relevant * (top - relevant).astype(np.float64)
    out = np.full(ctx.nq, np.nan)
    np.divide(misordered, pairs, out=out, where=pairs > 0)
    return np.where(pairs > 0, 1.0 - out, np.nan)
