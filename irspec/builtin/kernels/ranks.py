"""Kernels of the rank-based metrics (definitions in :mod:`irspec.builtin.ranks`)."""

from __future__ import annotations

import numpy as np

from irspec.evaluation.context import UNJUDGED, Context, safe_divide
from irspec.spec.registry import MAX_COUNT, Metric


def average_precision(ctx: Context, metric: Metric) -> np.ndarray:
    """AP = (1/R) Σ over relevant ranks i <= k of P@i."""
    level = ctx.level(metric)
    _, nth = ctx.relevant_rows(level)
    seg, rank = ctx.relevant_places(level)
    prec = nth / rank
    k = ctx.cutoff(metric)
    if k is not None:
        prec = np.where(rank <= k[seg], prec, 0.0)
    total = np.bincount(seg, weights=prec, minlength=ctx.nq)
    den = ctx.value(metric, "den")  # None for GMAP, which shares this kernel: trec_eval's R
    if den == "hits":
        return safe_divide(total, np.bincount(seg, weights=prec > 0, minlength=ctx.nq))
    if den == "min" and k is not None:
        return safe_divide(total, np.minimum(k, ctx.R(level)))
    return safe_divide(total, ctx.R(level))


def reciprocal_rank(ctx: Context, metric: Metric) -> np.ndarray:
    """1 / rank of the first relevant document within the top k; 0 if none."""
    first = ctx.first_rank(ctx.relevant(ctx.level(metric)))
    k = ctx.cutoff(metric)
    if k is not None:
        first = np.where(first <= k, first, 0)
    return safe_divide(first > 0, first)


def r_precision(ctx: Context, metric: Metric) -> np.ndarray:
    """Rprec, or its recall= and mult= variants (see the definition)."""
    level = ctx.level(metric)
    rel = ctx.relevant(level)
    R = ctx.R(level)
    recall, mult = metric.get("recall"), metric.get("mult")
    if mult is not None:
        # trec_eval's Rprec_mult: cutoff floor(mult*R + 0.9), and relret / c past the end of the list.
        # Capped as every cutoff is (Context.cutoff): past MAX_COUNT it means the whole ranking.
        c = np.minimum(np.floor(mult * R + 0.9), MAX_COUNT).astype(np.int64)
        return safe_divide(ctx.count_relevant(level, c), c)
    if recall is not None:
        # the first rank where recall reaches x is the rank of the ceil(x*R)-th relevant document;
        # 1e-9 keeps 0.3*10 = 3.0000000000000004 from asking for a 4th.
        need = np.ceil(recall * R - 1e-9).astype(np.int64)
        at = np.where(need == 0, np.minimum(ctx.n, 1), ctx.nth_rank(rel, need))
        hits = np.where(need == 0, ctx.count_relevant(level, np.ones(ctx.nq, np.int64)), need)
        return np.where(R > 0, safe_divide(hits, at), 0.0)
    return safe_divide(ctx.count_relevant(level, np.minimum(R, ctx.n)), R)


def _relevant_precisions(ctx: Context, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P@rank at each relevant row, in rank order per query: (precision, start, count), where query
    q's relevant rows are ``precision[start[q] : start[q] + count[q]]``."""
    key = ("relevant-precision", level)
    if key not in ctx._cache:
        _, nth = ctx.relevant_rows(level)
        seg, rank = ctx.relevant_places(level)
        counts = np.bincount(seg, minlength=ctx.nq)
        start = np.concatenate(([0], np.cumsum(counts)))[:-1]
        ctx._cache[key] = (nth / rank, start, counts)
    return ctx._cache[key]


def iprec_at(ctx: Context, level: int, x: float, trec9: bool = False) -> np.ndarray:
    """Interpolated precision at recall x, trec_eval 10's rule, or trec_eval 9's (see the IPrec definition).

    The largest P@j over the relevant ranks j at or below the c-th relevant document's, c = x·R rounded:
    a maximum of the very quotients trec_eval compares, so the value is one of them, bit for bit.
    """
    prec, start, relret = _relevant_precisions(ctx, level)
    R = ctx.R(level)
    v = x * R
    if trec9:
        # trec_eval 9 casts x*R + 0.9 to long: the sum in double, then truncated (it is >= 0)
        c = np.floor(v + 0.9).astype(np.int64)
    else:
        # trec_eval 10 rounds x*R half away from zero (C's lround) to find how many relevant documents
        # must be seen; floor(v + 0.5) would differ when v + 0.5 rounds up in floating point.
        whole = np.trunc(v)
        c = np.where(v - whole >= 0.5, whole + 1, whole).astype(np.int64)
    ok = np.flatnonzero((R > 0) & (c <= relret) & (relret > 0))
    out = np.zeros(ctx.nq)
    if len(ok):
        first = start[ok] + np.maximum(c[ok] - 1, 0)
        # One maximum per range [first, end of the query's relevant rows): reduceat takes the ranges
        # between consecutive indices, so the (first, end) pairs are interleaved and every second
        # result kept; the sentinel lets the last range end at the array's end.
        bounds = np.column_stack((first, start[ok] + relret[ok])).ravel()
        out[ok] = np.maximum.reduceat(np.append(prec, 0.0), bounds)[::2]
    if trec9:
        # With c = 0 trec_eval takes the precision at the end of the ranking as its start: 0/0 there
        # when the ranking is empty (trec_eval 10 too; irspec's default rule defines it as 0).
        out[(c == 0) & (ctx.n == 0)] = np.nan
    return out


def interpolated_precision(ctx: Context, metric: Metric) -> np.ndarray:
    """IPrec@x."""
    return iprec_at(ctx, ctx.level(metric), metric.get("recall"), metric.get("trec9"))


def eleven_point(ctx: Context, metric: Metric) -> np.ndarray:
    """Mean of IPrec over the recall points (default 0.0, 0.1, ..., 1.0).

    Summed as trec_eval sums them, from the last point to the first, then divided by their number.
    """
    points = metric.get("points") or tuple(i / 10 for i in range(11))
    level, trec9 = ctx.level(metric), metric.get("trec9")
    total = np.zeros(ctx.nq)
    for x in reversed(points):
        total = total + iprec_at(ctx, level, x, trec9)
    return total / len(points)


def search_length(ctx: Context, metric: Metric) -> np.ndarray:
    """Rank of the first relevant document; n + 1 (or NaN with unfound=skip) when there is none."""
    first = ctx.first_rank(ctx.relevant(ctx.level(metric))).astype(np.float64)
    fill = np.nan if metric.get("unfound") == "skip" else ctx.n + 1.0
    return np.where(first > 0, first, fill)


INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON, which keeps 0/0 out of the estimate


def inferred_ap(ctx: Context, metric: Metric) -> np.ndarray:
    """infAP (Yilmaz & Aslam 2006) exactly as trec_eval's m_infap.c computes it.

    For the relevant document at 0-based rank j, with rel, nonrel and unj the relevant, judged
    non-relevant and pooled-unjudged (negative label) documents above it, the term is 1 at j = 0 and
    otherwise 1/(j+1) + j/(j+1) · (rel+nonrel+unj)/j · (rel+ε)/(rel+nonrel+2ε). Documents absent from the
    qrels take a rank but count in none of the three. infAP = Σ terms / R.
    """
    level = ctx.level(metric)
    rows, nth = ctx.relevant_rows(level)
    pooled_unjudged = np.flatnonzero((ctx.label < 0) & (ctx.label != UNJUDGED))
    rel_above = (nth - 1).astype(np.float64)
    nonrel_above = ctx.before(np.flatnonzero(ctx.judged_nonrelevant(level)), rows).astype(np.float64)
    unj_above = ctx.before(pooled_unjudged, rows).astype(np.float64)
    seg, rank = ctx.relevant_places(level)
    j = (rank - 1).astype(np.float64)
    eps = INFAP_EPSILON
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (j + 1) + (j / (j + 1)) * ((rel_above + nonrel_above + unj_above) / j) * (
            (rel_above + eps) / (rel_above + nonrel_above + 2 * eps)
        )
    term = np.where(j == 0, 1.0, term)
    return safe_divide(np.bincount(seg, weights=term, minlength=ctx.nq), ctx.R(level))


def yaap(ctx: Context, metric: Metric) -> np.ndarray:
    """trec_eval's yaap: ln((1 + S) / (1 + R − S)) with S = Σ over relevant ranks of P@r (= AP·R)."""
    level = ctx.level(metric)
    _, nth = ctx.relevant_rows(level)
    seg, rank = ctx.relevant_places(level)
    S = np.bincount(seg, weights=nth / rank, minlength=ctx.nq)
    R = ctx.R(level)
    return np.where(R > 0, np.log((1 + S) / (1 + R - S)), 0.0)
