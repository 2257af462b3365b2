"""Kernels of the DCG family (definitions in :mod:`irspec.builtin.gain`)."""

from __future__ import annotations

import numpy as np

from irspec.evaluation.context import Context, safe_divide
from irspec.spec.registry import Metric


def gain_of(labels: np.ndarray, metric: Metric) -> np.ndarray:
    """The gain of each label: the label (log2, jk), 2^label − 1 (exp-log2), or the gains map.

    Non-positive labels (non-relevant, negative, unjudged) gain 0 unless a gains map says otherwise.
    """
    names = metric.definition.param_names
    gains = metric.get("gains") if "gains" in names else None
    base = np.maximum(labels, 0).astype(np.float64)
    if "dcg" in names and metric.get("dcg") == "exp-log2":
        base = np.exp2(base) - 1.0
    if gains is not None:
        for label, gain in gains.items:
            base = np.where(labels == label, gain, base)
    return base


def discount(ranks: np.ndarray, metric: Metric) -> np.ndarray:
    """log2(i + 1), or for dcg=jk 1 at rank 1 and log2(i) from rank 2."""
    if "dcg" in metric.definition.param_names and metric.get("dcg") == "jk":
        return np.where(ranks < 2, 1.0, np.log2(np.maximum(ranks, 2)))
    return np.log2(ranks + 1.0)


def _dcg(ctx: Context, metric: Metric, with_discount: bool = True) -> np.ndarray:
    k = ctx.cutoff(metric)
    if "gains" not in metric.definition.param_names or metric.get("gains") is None:
        # Without a gains map a label below 1 gains 0, so only the rows labelled 1 or more add anything:
        # the relevant rows at level 1 (few, and cached for AP, P and R), not every row of a top 100.
        # Leaving out terms of 0 leaves each query's sum as it was, bit for bit.
        rows, _ = ctx.relevant_rows(1)
        seg, rank = ctx.relevant_places(1)
        if k is not None:
            kept = rank <= k[seg]
            rows, seg, rank = rows[kept], seg[kept], rank[kept]
        label = ctx.label[rows]
    elif k is None:
        label, rank, seg = ctx.label, ctx.rank, ctx.seg
    else:  # only the top k count: select them first, a few rows of millions for @10
        top = ctx.top_rows(k)
        seg = ctx.seg_of(top)
        label, rank = ctx.label[top], ctx.rank_of(top, seg)
    g = gain_of(label, metric)
    if with_discount:
        g = g / discount(rank, metric)
    return np.bincount(seg, weights=g, minlength=ctx.nq)


def _idcg(ctx: Context, metric: Metric) -> np.ndarray:
    labels, offsets = ctx.ideal_labels()
    n = np.diff(offsets)
    seg = np.repeat(np.arange(ctx.nq), n)
    g = gain_of(labels, metric)
    if metric.get("gains") is not None:
        # The ideal ranking orders by gain, which a gains map may not keep monotone in the label;
        # otherwise gains grow with labels, and the labels are already sorted descending per query.
        g = g[np.lexsort((-g, seg))]
    rank = np.arange(len(g)) - offsets[seg] + 1
    g = np.where(g > 0, g, 0.0) / discount(rank, metric)
    k = ctx.cutoff(metric)
    if k is not None:
        g = np.where(rank <= k[seg], g, 0.0)
    return np.bincount(seg, weights=g, minlength=ctx.nq)


def dcg(ctx: Context, metric: Metric) -> np.ndarray:
    """DCG@k = Σ_{i<=k} gain_i / discount(i)."""
    return _dcg(ctx, metric)


def idcg(ctx: Context, metric: Metric) -> np.ndarray:
    """The DCG of the ideal ranking of the query's qrels labels."""
    return _idcg(ctx, metric)


def ndcg(ctx: Context, metric: Metric) -> np.ndarray:
    """DCG / IDCG, 0 when IDCG = 0."""
    return safe_divide(_dcg(ctx, metric), _idcg(ctx, metric))


def cg(ctx: Context, metric: Metric) -> np.ndarray:
    """Σ_{i<=k} gain_i."""
    return _dcg(ctx, metric, with_discount=False)
