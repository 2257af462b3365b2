"""Kernels of the DCG family (definitions in :mod:`irspec.builtin.gain`)."""

from __future__ import annotations

import numpy as np

from irspec.errors import EvaluationError
from irspec.evaluation.context import Context, rank_log2, safe_divide, segment_counts
from irspec.spec.registry import Metric


def gain_of(labels: np.ndarray, metric: Metric) -> np.ndarray:
    """The gain of each label: the label (log2, jk), 2^label − 1 (exp-log2), or the gains map.

    Non-positive labels (non-relevant, negative, unjudged) gain 0 unless a gains map says otherwise.
    """
    names = metric.definition.param_names
    gains = metric.get("gains") if "gains" in names else None
    base = np.maximum(labels, 0).astype(np.float64)
    if "dcg" in names and metric.get("dcg") == "exp-log2":
        # 2^label - 1 is beyond a double from label 1024 on: inf, and nDCG inf / inf (NaN), silently;
        # refused unless a gains map gives that label its gain
        listed = [label for label, _ in gains.items] if gains is not None else []
        over = (base > _EXP_LABEL_MAX) & ~np.isin(labels, listed)
        if over.any():
            label = int(labels[np.flatnonzero(over)[0]])
            raise EvaluationError(
                f"{metric}: label {label} would gain 2^{label} - 1, beyond a double (dcg=exp-log2 takes labels "
                f"up to {_EXP_LABEL_MAX}; a gains map gives a label its gain)"
            )
        with np.errstate(over="ignore"):  # a label the gains map sets, replaced below
            base = np.exp2(base) - 1.0
    if gains is not None:
        for label, gain in gains.items:
            base = np.where(labels == label, gain, base)
    return base


_EXP_LABEL_MAX = 1023
"""The largest label whose exp-log2 gain, 2^label - 1, a double holds."""


def discount(ranks: np.ndarray, metric: Metric) -> np.ndarray:
    """log2(i + 1), or for dcg=jk 1 at rank 1 and log2(i) from rank 2 (the C library's logarithms, as
    trec_eval's: :func:`~irspec.evaluation.context.rank_log2`)."""
    if "dcg" in metric.definition.param_names and metric.get("dcg") == "jk":
        return np.where(ranks < 2, 1.0, rank_log2(np.maximum(ranks, 2)))
    return rank_log2(ranks + 1)


def _dcg(ctx: Context, metric: Metric, with_discount: bool = True) -> np.ndarray:
    k = ctx.cutoff(metric)
    if "gains" not in metric.definition.param_names or metric.get("gains") is None:
        # Without a gains map a label below 1 gains 0, so only the rows labelled 1 or more add anything:
        # the relevant rows at level 1 (few, and cached for AP, P and R), not every row of a top 100.
        # Leaving out terms of 0 leaves each query's sum as it was, bit for bit.
        seg, rank = ctx.relevant_places(1)
        label = ctx.relevant_labels(1)
        if k is not None:
            kept = rank <= k[seg]
            seg, rank, label = seg[kept], rank[kept], label[kept]
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
    k = ctx.cutoff(metric)
    if metric.get("gains") is None and (not len(labels) or int(labels.max()) <= 1):
        return _binary_idcg(labels, offsets, k, metric)
    n = np.diff(offsets)
    seg = np.repeat(np.arange(ctx.nq), n)
    g = gain_of(labels, metric)
    if metric.get("gains") is not None:
        # The ideal ranking orders by gain, which a gains map may not keep monotone in the label;
        # otherwise gains grow with labels, and the labels are already sorted descending per query.
        g = g[np.lexsort((-g, seg))]
    rank = np.arange(len(g)) - offsets[seg] + 1
    g = np.where(g > 0, g, 0.0) / discount(rank, metric)
    if k is not None:
        g = np.where(rank <= k[seg], g, 0.0)
    return np.bincount(seg, weights=g, minlength=ctx.nq)


def _binary_idcg(labels: np.ndarray, offsets: np.ndarray, k: np.ndarray | None, metric: Metric) -> np.ndarray:
    """:func:`_idcg` where no label is above 1 and no gains map is given (implicit feedback, binary
    judgments): a query's gains are 1 (1, and 2^1 − 1) at its first c ranks, c its labels of 1 (sorted
    descending, they come first), and 0 after them, so its ideal DCG is Σ_{i <= min(c, k)} 1/discount(i),
    read from one table of running sums rather than a pass over every label for each term.

    The general path adds a query's terms with ``bincount``, one after another from 0 in rank order
    (a zero where the label or the cutoff gives none, which changes no sum); ``cumsum`` adds the same
    terms in the same order, so that each value is that path's, bit for bit (tests/test_gain_kernels.py
    holds the two equal for every length up to 10,000). A pairwise sum (``np.sum``) would not be."""
    if len(labels) and int(labels.min()) >= 1:
        count = np.diff(offsets)
    else:
        count = segment_counts(labels > 0, offsets)  # each query's labels of 1
    if k is not None:
        count = np.minimum(count, k)
    return ideal_table(int(count.max()) if len(count) else 0, metric)[count]


def ideal_table(longest: int, metric: Metric) -> np.ndarray:
    """The ideal DCG of c gains of 1 for every c from 0 to ``longest``: Σ_{i <= c} 1/discount(i), each
    added to the sum before it, left to right (``cumsum``)."""
    table = np.zeros(longest + 1)
    np.cumsum(1.0 / discount(np.arange(1, longest + 1), metric), out=table[1:])
    return table


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
