"""Kernels of intra-list diversity and serendipity (definitions in :mod:`irspec.builtin.beyond`).

They read each user's list from the context's ``"recommendations"`` input (``items``: every test user's
top k by row number, ``-1`` padding at the end; ``n_items``, the catalogue's size), and beside it the
``"features"`` input (``matrix``, items × features as CSR, or ``function``, a distance of item pairs),
the ``"expected"`` input (a users × items CSR of each user's expected items) or the ``"popularity"``
input (``counts``: training users per item), all given by :mod:`irspec.recsys.matrices`. A user's query id
is its row number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from irspec.builtin.kernels.popularity import lists, popularity_input, recommendations
from irspec.builtin.kernels.propensity import _numbers
from irspec.errors import EvaluationError
from irspec.evaluation.context import Context
from irspec.spec.registry import Metric

PAIR_ENTRIES = 1 << 22
"""Feature entries the pairs of one block of users may gather (each pair's two rows): the pairs of
every user's list are made a block of users at a time, so that memory stays bounded by this, not by
users × k²."""

Distance = Callable[[np.ndarray, np.ndarray], np.ndarray]


def ild(ctx: Context, metric: Metric) -> np.ndarray:
    """ILD@k: the mean distance over the pairs of items of each user's top k."""
    top = lists(ctx, metric, recommendations(ctx, metric))
    data = ctx.input(
        "features",
        f"{metric} measures distances between items: give features= (an items × features matrix, or a "
        "distance function with ILD(distance=given)) to irspec.evaluate_topk or irspec.evaluate_scores, or "
        "the items' features table (--features ITEMS to irspec eval --recsys, recsys.features in a plan)",
    )
    distance, per_row = _distance(data, metric)
    n = (top >= 0).sum(axis=1)
    first, second = np.triu_indices(top.shape[1], 1)  # every pair of places i < j of a list
    total = np.zeros(ctx.nq)
    step = max(1, PAIR_ENTRIES // max(1, 2 * per_row * len(first)))
    for start in range(0, ctx.nq, step):
        block = top[start : start + step]
        a, b = block[:, first], block[:, second]
        present = (a >= 0) & (b >= 0)
        if not present.any():  # lists of one item: no pair to ask a distance function about
            continue
        user = np.nonzero(present)[0]
        total[start : start + len(block)] = np.bincount(
            user, weights=distance(a[present], b[present]), minlength=len(block)
        )
    pairs = n * (n - 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        # one item: no pair, and no two items that differ (RecTools' 0); no item: no value
        return np.where(n == 0, np.nan, np.where(n == 1, 0.0, total / pairs))


def serendipity(ctx: Context, metric: Metric) -> np.ndarray:
    """Serendipity@k: relevance times unexpectedness, summed over each user's top k, over its length."""
    data = recommendations(ctx, metric)
    top = lists(ctx, metric, data)
    n = (top >= 0).sum(axis=1)
    seg, rank = ctx.relevant_places(ctx.level(metric))
    kept = rank <= top.shape[1]
    seg, rank = seg[kept], rank[kept].astype(np.int64)
    items = top[seg, rank - 1]
    if metric.get("expected") == "items":
        expected = ctx.input(
            "expected",
            f"{metric} counts the items a user did not expect: give expected= (a users × items sparse "
            "matrix, or a users × m array of item indices) to irspec.evaluate_topk or irspec.evaluate_scores, "
            "or a table of them (--expected EXPECTED to irspec eval --recsys, recsys.expected in a plan)",
        )
        users = _numbers(list(ctx.query_ids), "user", metric)[seg]
        unexpected = (~_stored(expected, users, items)).astype(np.float64)
    else:
        counts = popularity_input(ctx, metric).counts
        size = data.n_items
        # the chance of the item's place in the user's list against that of its popularity rank in
        # anyone's (RecTools' form); an item nobody trained on is not expected at all
        anyone = np.where(counts > 0, (size + 1 - _dense_rank(counts)) / size, 0.0)
        unexpected = np.maximum((size + 1 - rank) / size - anyone[items], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.bincount(seg, weights=unexpected, minlength=ctx.nq) / n, np.nan)


def _dense_rank(counts: np.ndarray) -> np.ndarray:
    """Each item's rank by decreasing count among the distinct counts of the items with one (1 the most
    popular; equal counts share a rank, the next count takes the next rank)."""
    levels = np.unique(counts[counts > 0])
    return len(levels) - np.searchsorted(levels, counts)


def _stored(matrix: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Whether a CSR matrix (indices sorted) stores each (row, col)."""
    keys = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr)) * matrix.shape[1]
    keys += matrix.indices
    if not len(keys):
        return np.zeros(len(rows), dtype=bool)
    wanted = rows.astype(np.int64) * matrix.shape[1] + cols
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return keys[at] == wanted


def _distance(data: Any, metric: Metric) -> tuple[Distance, int]:
    """The distance of item pairs ``metric`` asks for, from the ``"features"`` input, and the feature
    entries one pair gathers (per item, on average), which sizes the blocks of pairs."""
    kind = metric.get("distance")
    if kind == "given":
        if data.function is None:
            raise EvaluationError(
                f"{metric} calls a distance function, but features= is a matrix: spell the metric "
                "ILD(distance=cosine|hamming|jaccard)@k, or give features= a function d(a, b)"
            )
        return _given(data.function, metric), 1
    if data.matrix is None:
        raise EvaluationError(
            f"{metric} computes {kind} distances from an items × features matrix, but features= is a "
            f"function: spell the metric ILD(distance=given)@{metric.get('k')}"
        )
    features = data.matrix
    per_row = max(1, features.nnz // max(1, features.shape[0]))
    if kind == "hamming":
        return _hamming(features), per_row
    if kind == "jaccard":
        present = features.copy()
        present.data = np.ones_like(present.data)  # the matrix holds no explicit zero (recsys.features)
        sizes = np.diff(present.indptr).astype(np.float64)
        return _jaccard(present, sizes), per_row
    norms = np.sqrt(np.asarray(features.multiply(features).sum(axis=1), dtype=np.float64).ravel())
    return _cosine(features, norms), per_row


def _row_dots(matrix: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dot product of row a[j] and row b[j] of a sparse matrix, for each j."""
    return np.asarray(matrix[a].multiply(matrix[b]).sum(axis=1), dtype=np.float64).ravel()


def _cosine(features: Any, norms: np.ndarray) -> Distance:
    def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        scale = norms[a] * norms[b]
        cos = np.divide(_row_dots(features, a, b), scale, out=np.zeros(len(a)), where=scale > 0)
        return np.maximum(1.0 - cos, 0.0)  # rounding may leave 1 - cos a hair below 0 for equal items

    return distance


def _hamming(features: Any) -> Distance:
    def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        differ = features[a] - features[b]
        differ.eliminate_zeros()  # equal values subtract to an exact zero: not a difference
        return np.diff(differ.indptr).astype(np.float64)

    return distance


def _jaccard(present: Any, sizes: np.ndarray) -> Distance:
    def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        both = _row_dots(present, a, b)
        either = sizes[a] + sizes[b] - both
        return 1.0 - np.divide(both, either, out=np.zeros(len(a)), where=either > 0)

    return distance


def _given(function: Distance, metric: Metric) -> Distance:
    def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        try:
            found = np.asarray(function(a, b), dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise EvaluationError(f"{metric}: the distance function's result is not numbers ({e})") from None
        if found.shape != a.shape:
            raise EvaluationError(
                f"{metric}: the distance function returned shape {found.shape} for {len(a)} pairs: it "
                "takes two arrays of item indices and returns one distance per pair"
            )
        bad = ~np.isfinite(found)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise EvaluationError(
                f"{metric}: the distance function gave {found[j]} for items {int(a[j])} and {int(b[j])}: "
                "distances must be finite"
            )
        return found

    return distance
