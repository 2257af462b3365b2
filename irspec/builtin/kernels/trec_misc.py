"""Kernels of trec_eval's remaining measures (definitions in :mod:`irspec.builtin.trec_misc`).

Each follows trec_eval 10's C source, quirks included where trec_eval's own outputs show them (the
docstrings say which); where trec_eval's behaviour is undefined irspec gives a defined value instead.
"""

from __future__ import annotations

import numpy as np

from irspec.builtin.kernels.gain import gain_of
from irspec.evaluation.context import UNJUDGED, Context, rank_log2, safe_divide, segment_cumsum
from irspec.spec.registry import Metric


def utility(ctx: Context, metric: Metric) -> np.ndarray:
    """a·relret + b·(n − relret) + c·(R − relret) + d·(C + relret − n − R), C the collection size (or 0)."""
    level = ctx.level(metric)
    nrr = ctx.count_relevant(level).astype(np.float64)
    n = ctx.n.astype(np.float64)
    R = ctx.R(level).astype(np.float64)
    size = float(ctx.options.collection_size or 0)
    a, b, c, d = (metric.get(x) for x in "abcd")
    return a * nrr + b * (n - nrr) + c * (R - nrr) + d * (size + nrr - n - R)


def bin_g(ctx: Context, metric: Metric) -> np.ndarray:
    """(1/R) Σ over relevant retrieved of 1 / log2(2 + documents above it that are not relevant)."""
    level = ctx.level(metric)
    _, nth = ctx.relevant_rows(level)
    seg, rank = ctx.relevant_places(level)
    term = 1.0 / rank_log2(2 + rank - nth)
    return safe_divide(np.bincount(seg, weights=term, minlength=ctx.nq), ctx.R(level))


def _ideal(ctx: Context, metric: Metric) -> tuple[np.ndarray, np.ndarray]:
    """Positive ideal gains per query, descending: (gains, offsets)."""
    labels, offsets = ctx.ideal_labels()
    g = gain_of(labels, metric)
    seg = np.repeat(np.arange(ctx.nq), np.diff(offsets))
    keep = g > 0
    g, seg = g[keep], seg[keep]
    order = np.lexsort((-g, seg))
    counts = np.bincount(seg, minlength=ctx.nq)
    return g[order], np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def _ideal_at_rank(ctx: Context, ideal: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """For each ranked row, the ideal gain at the same rank (0 past the end of the ideal list)."""
    size = np.diff(offsets)[ctx.seg]
    pos = ctx.rank - 1
    out = np.zeros(len(ctx.rank))
    ok = pos < size
    out[ok] = ideal[offsets[ctx.seg[ok]] + pos[ok]]
    return out


def g(ctx: Context, metric: Metric) -> np.ndarray:
    """trec_eval's G (m_G.c): Σ_{g_i ≠ 0} g_i / log2(2 + cost_i − gained_i), over the ideal total.

    cost_i = Σ_{k<=i} max(I_k, 1) with I the ideal gains (0 past their end); gained_i = Σ_{k<=i} g_k.
    """
    gains = gain_of(ctx.label, metric)
    ideal, offsets = _ideal(ctx, metric)
    cost = ctx.running_sum(np.maximum(_ideal_at_rank(ctx, ideal, offsets), 1.0))
    gained = ctx.running_sum(gains)
    nz = gains != 0
    # cost and gained are sums of gains, not integers under a gains map: numpy's logarithm, not
    # rank_log2's table of integers. Past 2**53 (a label of 10**17) the two sums round to one double, and
    # log2(0) is -inf, a term of -0.0, as trec_eval's doubles give it: no warning of numpy's for it
    with np.errstate(divide="ignore"):
        term = gains[nz] / np.log2(2.0 + cost[nz] - gained[nz])
    total_ideal = np.bincount(np.repeat(np.arange(ctx.nq), np.diff(offsets)), weights=ideal, minlength=ctx.nq)
    return safe_divide(np.bincount(ctx.seg[nz], weights=term, minlength=ctx.nq), total_ideal)


def _dcg_prefix(ctx: Context, metric: Metric) -> np.ndarray:
    """Per ranked row: DCG of its query's ranking down to that row."""
    return ctx.running_sum(gain_of(ctx.label, metric) / rank_log2(ctx.rank + 1))


def _ideal_prefix(ideal: np.ndarray, offsets: np.ndarray, nq: int) -> np.ndarray:
    seg = np.repeat(np.arange(nq), np.diff(offsets))
    rank = np.arange(len(ideal)) - offsets[seg] + 1
    return segment_cumsum(ideal / rank_log2(rank + 1), offsets)


def ndcg_rel(ctx: Context, metric: Metric) -> np.ndarray:
    """trec_eval's ndcg_rel (m_ndcg_rel.c): nDCG averaged over the Rg positive-gain documents.

    Each retrieved positive-gain document at rank i adds DCG_i / IDCG_min(i, Rg); each one not retrieved
    adds DCG_n / IDCG_Rg; the sum is divided by Rg.
    """
    gains = gain_of(ctx.label, metric)
    ideal, offsets = _ideal(ctx, metric)
    Rg = np.diff(offsets)
    if len(ideal) == 0:
        return np.zeros(ctx.nq)
    ip = _ideal_prefix(ideal, offsets, ctx.nq)
    dcg = _dcg_prefix(ctx, metric)
    hit = gains > 0
    seg = ctx.seg_of(hit)
    at = np.minimum(ctx.rank_of(hit, seg), Rg[seg])
    term = safe_divide(dcg[hit], ip[offsets[seg] + at - 1])
    found = np.bincount(seg, minlength=ctx.nq)
    dcg_n = ctx.seg_sum(gains / rank_log2(ctx.rank + 1))
    idcg_full = np.where(Rg > 0, ip[np.maximum(offsets[1:] - 1, 0)], 0.0)
    # (Rg - found) * DCG_n first, then / IDCG_Rg, as m_ndcg_rel.c rounds it (the other order differs in
    # the last bit on about one query in a hundred)
    total = np.bincount(seg, weights=term, minlength=ctx.nq) + safe_divide((Rg - found) * dcg_n, idcg_full)
    return np.where(total > 0, safe_divide(total, Rg), 0.0)


def rndcg(ctx: Context, metric: Metric) -> np.ndarray:
    """trec_eval's Rndcg (m_Rndcg.c): mean nDCG at the ranks where the ideal gain changes.

    With b each boundary (the cumulative count of each distinct positive gain, descending), a point
    DCG_min(b, n) / IDCG_b; plus DCG_n / IDCG_Rg when n >= Rg + 2 (trec_eval's own condition). 0 when the
    query has no relevant document at the relevance level.
    """
    ideal, offsets = _ideal(ctx, metric)
    R = ctx.R(ctx.level(metric))
    out = np.zeros(ctx.nq)
    if len(ideal) == 0:
        return out
    Rg = np.diff(offsets)
    seg_i = np.repeat(np.arange(ctx.nq), Rg)
    last = np.ones(len(ideal), dtype=bool)
    last[:-1] = (ideal[1:] != ideal[:-1]) | (seg_i[1:] != seg_i[:-1])
    ip = _ideal_prefix(ideal, offsets, ctx.nq)
    dcg = _dcg_prefix(ctx, metric)
    rows = np.flatnonzero(last)
    q = seg_i[rows]
    b = rows - offsets[q] + 1
    at = np.minimum(b, ctx.n[q])
    dcg_at = (
        np.where(at > 0, dcg[np.maximum(ctx.offsets[q] + at - 1, 0)], 0.0)
        if len(dcg)
        else np.zeros(len(rows))
    )
    points = safe_divide(dcg_at, ip[rows])
    total = np.bincount(q, weights=points, minlength=ctx.nq)
    count = np.bincount(q, minlength=ctx.nq).astype(np.float64)
    extra = (ctx.n >= Rg + 2) & (Rg > 0)
    if extra.any():
        e = np.flatnonzero(extra)
        dcg_n = dcg[ctx.offsets[e + 1] - 1]
        total[e] += dcg_n / ip[offsets[e + 1] - 1]
        count[e] += 1
    out = safe_divide(total, count)
    return np.where(R > 0, out, 0.0)


def rbp_resid(ctx: Context, metric: Metric) -> np.ndarray:
    """trec_eval's rbp_resid: p^n + (1 − p) Σ over unjudged ranks i of p^(i−1); 0 when all are judged.

    The powers are trec_eval's running product (1, p, p·p, ...: each the previous times p), which is
    not always ``p**i`` to the last bit, and the sum is taken before it is multiplied by 1 − p.
    """
    p = metric.get("p")
    unjudged = ctx.label < 0
    # cumprod is sequential: powers[i] = powers[i-1] * p exactly as the C loop multiplies.
    powers = np.cumprod(np.concatenate(([1.0], np.full(int(ctx.n.max(initial=0)), p))))
    seen = ctx.seg_sum(np.where(unjudged, powers[ctx.rank - 1], 0.0))
    has = ctx.count(unjudged) > 0
    return np.where(has, powers[ctx.n] + (1 - p) * seen, 0.0)


def unjudged(ctx: Context, metric: Metric) -> np.ndarray:
    """Documents in the top k without a label >= 0 (absent, or negative), divided by k."""
    k = ctx.cutoff(metric)
    assert k is not None  # k is a required parameter of unjudged
    return safe_divide(ctx.count(ctx.label < 0, k), k)


def relstring(ctx: Context, metric: Metric) -> list[str]:
    """Per query, a character per top-k document: label digit, '>' above 9, '-' absent, '.' negative."""
    k = ctx.cutoff(metric)
    assert k is not None  # k is a required parameter of relstring
    top = ctx.top_rows(k)
    label = ctx.label[top]
    chars = np.where(label > 9, ord(">"), ord("0") + np.clip(label, 0, 9))
    chars = np.where(label < 0, ord("."), chars)
    chars = np.where(label == UNJUDGED, ord("-"), chars).astype(np.uint8)
    counts = np.bincount(ctx.seg_of(top), minlength=ctx.nq)
    ends = np.cumsum(counts)
    data = chars.tobytes()
    return [data[e - c : e].decode("ascii") for c, e in zip(counts.tolist(), ends.tolist(), strict=True)]
