"""Kernels of the set and cutoff metrics (definitions in :mod:`irspec.builtin.sets`)."""

from __future__ import annotations

import numpy as np

from irspec.errors import EvaluationError
from irspec.evaluation.context import Context, safe_divide
from irspec.spec.registry import Metric


def _relevant_in(ctx: Context, metric: Metric) -> tuple[np.ndarray, np.ndarray | None]:
    """(relevant documents within the cutoff, the cutoff) per query."""
    k = ctx.cutoff(metric)
    return ctx.count_relevant(ctx.level(metric), k), k


def precision(ctx: Context, metric: Metric) -> np.ndarray:
    """P@k = rel(top k) / k (k even when n < k); without k, rel retrieved / n."""
    rel, k = _relevant_in(ctx, metric)
    return safe_divide(rel, ctx.n if k is None else k)


def recall(ctx: Context, metric: Metric) -> np.ndarray:
    """R@k = rel(top k) / R; 0 when R = 0."""
    rel, _ = _relevant_in(ctx, metric)
    return safe_divide(rel, ctx.R(ctx.level(metric)))


def f_measure(ctx: Context, metric: Metric) -> np.ndarray:
    """F_beta = (1 + b²) P R / (b² P + R); 0 when P = R = 0."""
    rel, k = _relevant_in(ctx, metric)
    p = safe_divide(rel, ctx.n if k is None else k)
    r = safe_divide(rel, ctx.R(ctx.level(metric)))
    b2 = beta_squared(metric.get("beta"))
    return safe_divide((1 + b2) * p * r, b2 * p + r)


def beta_squared(beta: float) -> float:
    """``beta²`` to 15 significant digits. trec_eval's ``set_F.x`` is F with ``beta² = x``, read as
    ``F(beta=√x)``, and ``√x`` squared is ``x`` only within two units in the last place: enough to print
    0.2188 where trec_eval prints 0.2187 (an F of exactly 0.21875 either side). Any ``x`` written with up to 15
    significant digits is recovered exactly, as trec_eval reads it; no other F changes by more than 1e-15
    of itself."""
    return float(f"{beta * beta:.15g}")


def relative_precision(ctx: Context, metric: Metric) -> np.ndarray:
    """relP@k = rel(top k) / min(k, R); without k, rel retrieved / min(n, R)."""
    rel, k = _relevant_in(ctx, metric)
    return safe_divide(rel, np.minimum(ctx.n if k is None else k, ctx.R(ctx.level(metric))))


def success(ctx: Context, metric: Metric) -> np.ndarray:
    """1 if a relevant document is in the top k."""
    rel, _ = _relevant_in(ctx, metric)
    return (rel > 0).astype(np.float64)


def judged(ctx: Context, metric: Metric) -> np.ndarray:
    """Fraction of the top k (or the whole ranking) that has a label >= 0."""
    k = ctx.cutoff(metric)
    return safe_divide(ctx.count_judged(k), ctx.n if k is None else k)


def fallout(ctx: Context, metric: Metric) -> np.ndarray:
    """Non-relevant in the top k / (collection size − R); with ``judged``, judged non-relevant in the
    top k / judged non-relevant in the qrels."""
    k = ctx.cutoff(metric)
    level = ctx.level(metric)
    if metric.get("judged"):
        return safe_divide(ctx.count(ctx.judged_nonrelevant(level), k), ctx.N(level))
    size = metric.get("collection_size") or ctx.options.collection_size
    if size is None:
        raise EvaluationError(
            f"{metric} needs the collection size: give Fallout(collection_size=N) or the collection_size option"
        )
    nonrel = ctx.count(~ctx.relevant(level), k)
    return safe_divide(nonrel, np.maximum(size - ctx.R(level), 0))


def set_ap(ctx: Context, metric: Metric) -> np.ndarray:
    """trec_eval's set_map: set precision × set recall, computed as relret² / (n·R) (one rounding, as
    trec_eval; the product of the two quotients can differ in the last bit)."""
    level = ctx.level(metric)
    rel = ctx.count_relevant(level).astype(np.float64)
    return safe_divide(rel * rel, ctx.n.astype(np.float64) * ctx.R(level))
