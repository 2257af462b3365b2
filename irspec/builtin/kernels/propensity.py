"""Kernels of the propensity-scored metrics (definitions in :mod:`irspec.builtin.propensity`).

The propensities come from the context's ``"propensity"`` input, which :mod:`irspec.recsys.matrices`
gives the evaluation: an object with ``weights`` (1/p per item, by item index) and the held-out
matrix as CSR arrays (``indptr``, ``indices``, ``labels``), whose rows are the users whose query ids
are their row numbers and whose columns are the items whose docnos are their column numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irspec.errors import EvaluationError
from irspec.evaluation.context import Context, rank_log2, safe_divide, segment_rows
from irspec.spec.registry import Metric


def psp(ctx: Context, metric: Metric) -> np.ndarray:
    """PSP@k: the weights of the relevant items in the top k, summed, over k."""
    k = ctx.cutoff(metric, "k")
    assert k is not None  # the cutoff is required
    seg, _, weight = _found(ctx, metric, k)
    return safe_divide(np.bincount(seg, weights=weight, minlength=ctx.nq), k)


def psdcg(ctx: Context, metric: Metric) -> np.ndarray:
    """PSDCG@k: the weights of the relevant items in the top k, discounted by log2(rank + 1)."""
    k = ctx.cutoff(metric, "k")
    assert k is not None
    seg, rank, weight = _found(ctx, metric, k)
    return np.bincount(seg, weights=weight / rank_log2(rank + 1), minlength=ctx.nq)


def psndcg(ctx: Context, metric: Metric) -> np.ndarray:
    """PSnDCG@k: PSDCG@k over the unweighted ideal DCG of min(k, R) relevant items."""
    k = ctx.cutoff(metric, "k")
    assert k is not None
    found = psdcg(ctx, metric)
    best = np.minimum(k, ctx.R(ctx.level(metric)))
    # Σ_{l <= n} 1/log2(l + 1) for every n the queries need, from one running sum
    sums = np.concatenate(([0.0], np.cumsum(1.0 / rank_log2(np.arange(2, int(best.max(initial=0)) + 2)))))
    return safe_divide(found, sums[best])


def _found(ctx: Context, metric: Metric, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, rank, weight) of each relevant item in each query's top k: of the ranking, or with
    ``ideal=true`` of the best top k (the relevant items by decreasing weight)."""
    data = _input(ctx, metric)
    level = ctx.level(metric)
    if metric.get("ideal"):
        return _ideal(ctx, data, level, k)
    rows, _ = ctx.relevant_rows(level)
    seg, rank = ctx.relevant_places(level)
    kept = rank <= k[seg]
    rows, seg, rank = rows[kept], seg[kept], rank[kept]
    # only the relevant rows of the top k need their item: their docnos are the items' column numbers
    docnos = ctx.frame.get_column("docno").gather(rows).to_list() if len(rows) else []
    items = _numbers(docnos, "item", metric)
    if len(items) and items.max() >= len(data.weights):
        raise EvaluationError(
            f"{metric}: item {int(items.max())} has no propensity ({len(data.weights)} items given)"
        )
    return seg, rank, data.weights[items]


def _ideal(ctx: Context, data: Any, level: int, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    users = _numbers(ctx.query_ids, "user", None)
    starts, ends = data.indptr[users], data.indptr[users + 1]
    entries = segment_rows(starts, ends - starts)
    seg = np.repeat(np.arange(ctx.nq), ends - starts)
    relevant = data.labels[entries] >= level
    seg, weight = seg[relevant], data.weights[data.indices[entries[relevant]]]
    order = np.lexsort((-weight, seg))  # by query, then by decreasing weight
    seg, weight = seg[order], weight[order]
    first = np.searchsorted(seg, np.arange(ctx.nq))
    rank = np.arange(len(seg)) - first[seg] + 1
    kept = rank <= k[seg]
    return seg[kept], rank[kept], weight[kept]


def _input(ctx: Context, metric: Metric) -> Any:
    return ctx.input(
        "propensity",
        f"{metric} weighs each item by its inverse propensity: give propensity= to irspec.evaluate_topk "
        "or irspec.evaluate_scores (irspec.recsys.jain_propensity(train_matrix) is Jain et al.'s model), "
        "or that model's A,B with the training interactions (--propensity A,B to irspec eval --recsys, "
        "recsys.propensity in a plan)",
    )


def _numbers(ids: Sequence[str], what: str, metric: Metric | None) -> np.ndarray:
    """Ids that are row or column numbers, as integers."""
    try:
        return np.array([int(x) for x in ids], dtype=np.int64)
    except ValueError:
        bad = next(x for x in ids if not x.lstrip("-").isdigit())
        raise EvaluationError(
            f"{metric or 'a propensity-scored metric'}: {what} id {bad!r} is not a {what} number "
            "(propensity-scored metrics are computed on irspec.evaluate_topk's users and items)"
        ) from None
