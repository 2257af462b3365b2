"""torchmetrics' retrieval metrics, every query at once: its definitions, computed as whole-array operations.

torchmetrics (1.9) groups the rows by ``indexes`` and then computes each query in a Python loop, one small
tensor at a time: the loop is where its time goes (torchmetrics issue 2287). Here the rows are grouped by
query and ranked within it by one sort (:func:`blocks`, :class:`Queries`), and every metric is a few
reductions over that order, written once against :class:`~.backend.Ops`: numpy on the CPU, torch on
the tensors' device. On the CPU the queries are taken a block of rows at a time (whole queries): a
block's temporaries stay in the cache.

The definitions are torchmetrics', not trec_eval's (``irspec.evaluate`` computes trec_eval's):

- a query's documents are ranked by score; torchmetrics orders tied scores as ``torch.topk`` or
  ``torch.argsort`` leave them, which is unspecified (on the CPU, neither is stable beyond a few rows).
  Here tied documents keep their input order (the order of ``update`` calls, then of rows), so a value
  never depends on the library's sort. nDCG averages the gains of tied documents (its definition, as
  scikit-learn's ``ndcg_score``), so it does not depend on their order at all, nor does AUROC but
  through which tied documents a top k keeps;
- average precision, reciprocal rank, precision and recall count a relevant document only where its
  score is above 0; average precision divides by the relevant documents found within the top k (not by
  all of the query's); precision@k divides by k even when the query has fewer documents, unless
  ``adaptive_k``; nDCG's gain is the target itself (not 2^target - 1), graded and negative targets
  included; R-precision, hit rate, fall-out and the precision-recall curve count every document;
- a query with no positive target (fall-out: no negative one) is an *empty* query, valued by
  ``empty_target_action`` (the metric classes'); AUROC is 0 for a query whose top k lacks a 0 or a 1.

Scores are compared as float32, as torchmetrics keeps them. Every value is computed in float64 and
returned in float32, as torchmetrics returns it (it computes in float32: the two differ in the last bits).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from irspec.compat.torchmetrics.backend import Ops, descending_key
from irspec.compat.torchmetrics.checks import topk_size

__all__ = [
    "Queries",
    "aggregate",
    "auroc",
    "average_precision",
    "blocks",
    "curve_ks",
    "curve_values",
    "fall_out",
    "hit_rate",
    "normalized_dcg",
    "precision",
    "r_precision",
    "recall",
    "recall_at_fixed_precision",
    "reciprocal_rank",
]


Rows = tuple[Any, Any, Any]
"""``(indexes, preds, target)``: flat arrays of one length."""


class Queries:
    """Rows in query order, each query's rows contiguous and ranked.

    ``preds`` and ``target`` are the rows; ``ids`` each row's query (0, 1, ..., sorted), ``pos`` its
    0-based place in its query; ``starts`` each query's first row, ``sizes`` its number of rows (int64),
    ``count`` the number of queries, ``longest`` the largest size.
    """

    def __init__(self, ops: Ops, ids: Any, preds: Any, target: Any, count: int | None = None) -> None:
        """Rows already in order, ``ids`` their queries (0, 1, ..., each present, sorted; ``count`` of them,
        counted when not given)."""
        self.ops, self.ids, self.preds, self.target = ops, ids, preds, target
        self.route: Any = None  # where the rows came from, for a caller that returns results there
        self.starts, self.sizes = _segments(ops, _changes(ops, ids))
        self.count = len(self.starts) if count is None else count
        self.first_rows = self.starts[ids]  # each row's query's first row
        self.pos = ops.arange(len(ids), ids) - self.first_rows
        self.longest = int(ops.item(self.sizes.max()))

    @classmethod
    def ranked(cls, ops: Ops, indexes: Any, preds: Any, target: Any) -> Queries:
        """Rows grouped by query (equal ``indexes`` contiguous, ascending), ranked within each query by
        score, descending, tied scores in their present order."""
        ids = ops.cumsum(_changes(ops, indexes)) - 1
        q = cls(ops, ids, preds, target)
        order = q.order_by(descending_key(ops, preds), 32)
        q.preds, q.target = preds[order], target[order]
        return q

    def order_by(self, key: Any, bits: int) -> Any:
        """The order of the rows that ranks each query's rows by ``key`` (int64 in [0, 2**bits)),
        ascending, equal keys in their present order; each query keeps its rows."""
        return _sorted_by(self.ops, key, bits, self.pos, self.longest, self.ids, self.count, self.first_rows)

    def sum(self, x: Any) -> Any:
        """Per query, the sum of ``x`` over its rows (:meth:`~.backend.Ops.segment_sum`)."""
        return self.ops.segment_sum(x, self.starts, self.ids, self.count)

    def add(self, rows: Any, weights: Any = None) -> Any:
        """Per query, the sum of ``weights`` (one per row of ``rows``; 1 each when None) over its rows
        among ``rows``, in float64."""
        return self.ops.scatter_sum(self.ids[rows], weights, self.count)

    def top(self, k: Any) -> Any:
        """Whether each row is within its query's top ``k`` (a number, or one per query); None when every
        row is (``k`` None: all of them)."""
        if k is None or (isinstance(k, int) and k >= self.longest):
            return None
        return self.pos < (k if isinstance(k, int) else k[self.ids])

    def rank_among(self, rows: Any) -> Any:
        """For each of ``rows`` (ascending), its 1-based place among those of its query."""
        ops = self.ops
        ids = self.ids[rows]
        first = _changes(ops, ids)
        return ops.arange(len(rows), rows) - ops.flatnonzero(first)[ops.cumsum(first) - 1] + 1

    def floats(self, x: Any) -> Any:
        """``x`` as float64."""
        return self.ops.cast(x, self.ops.float64)

    def ratio(self, num: Any, den: Any) -> Any:
        """``num / den``, 0 where ``den`` is 0 (no division by zero is evaluated)."""
        zero = den == 0
        return self.ops.where(zero, 0.0, num / (den + zero))


def _and(mask: Any, other: Any) -> Any:
    """``mask & other``, ``other`` None meaning every row."""
    return mask if other is None else mask & other


def _bit_length(n: int) -> int:
    """Bits to write 0, ..., n - 1."""
    return max(int(n) - 1, 0).bit_length()


def _sorted_by(
    ops: Ops,
    key: Any,
    bits: int,
    pos: Any,
    longest: int,
    ids: Any = None,
    count: int = 1,
    first_rows: Any = None,
) -> Any:
    """The order of rows by (``ids``, ``key``), rows of equal ones in the order of ``pos`` (their place
    in their query, distinct within it, below ``longest``; ``first_rows`` each row's query's first row).

    One sort of distinct int64 numbers, each a row's query, key and place packed into 63 bits: their
    order is the rows', and the place in each sorted number says which row it is (numpy sorts numbers
    several times faster than it sorts their indices). Where they do not fit, two stable sorts."""
    if bits == 64:  # a key that may take every bit: from its lowest value, in as many bits as it spans
        key = key - key.min()
        bits = int(ops.item(key.max())).bit_length()
    id_bits, place_bits = _bit_length(count), _bit_length(longest)
    if id_bits + bits + place_bits <= 63:
        packed = key << place_bits
        packed |= pos
        if ids is not None:
            packed |= ids << (bits + place_bits)
        place = ops.sort(packed)
        place &= (1 << place_bits) - 1
        if first_rows is not None:
            place += first_rows  # each query keeps its rows: the row is its query's first plus the place
        return place
    order = ops.argsort(key)
    return order if ids is None else order[ops.argsort(ids[order])]


def _segments(ops: Ops, first: Any) -> tuple[Any, Any]:
    """The first row and the size of each segment, ``first`` marking each segment's first row."""
    starts = ops.flatnonzero(first)
    return starts, ops.concat([starts[1:], ops.full(1, len(first), ops.int64, starts)]) - starts


def _changes(ops: Ops, x: Any) -> Any:
    """Per row of a sorted ``x``, whether it differs from the row before (the first row does)."""
    return ops.concat([ops.full(min(len(x), 1), True, bool, x), x[1:] != x[:-1]])


def _ends(ops: Ops, x: Any) -> Any:
    """Per row of a sorted ``x``, whether it differs from the row after (the last row does)."""
    return ops.concat([x[1:] != x[:-1], ops.full(min(len(x), 1), True, bool, x)])


def blocks(ops: Ops, parts: list[Rows]) -> Iterator[Queries]:
    """The rows of ``parts`` (the batches of ``update``, in order) grouped by query, ascending by index, a
    query's rows in input order, then ranked: as :class:`Queries` of about ``ops.block_rows`` rows each
    (whole queries, in order), or of all of them.

    Batches whose rows are already in query order, one after the other (a query's rows in one batch, or
    running on into the next), are cut into blocks where they lie: only a query that runs from one batch
    into the next is copied, not the batches (on the CPU, a large new array costs more to map than the
    metrics cost to compute). Others are put end to end and sorted by index."""
    parts = [p for p in parts if len(p[0])]
    size = ops.block_rows
    in_order = all(_ascending(p[0]) for p in parts) and all(
        bool(a[0][-1] <= b[0][0]) for a, b in itertools.pairwise(parts)
    )
    if size is None or not in_order:
        indexes, preds, target = _joined(ops, parts)
        if not in_order:
            rows = len(indexes)
            order = _sorted_by(ops, indexes, 64, ops.arange(rows, indexes), rows)
            indexes, preds, target = indexes[order], preds[order], target[order]
        if size is None:  # on a device: one block of everything
            yield Queries.ranked(ops, indexes, preds, target)
            return
        parts = [(indexes, preds, target)]
    yield from _sorted_blocks(ops, parts, size)


def _ascending(x: Any) -> bool:
    return bool((x[1:] >= x[:-1]).all())


def _joined(ops: Ops, parts: list[Rows]) -> Rows:
    """Runs of rows end to end."""
    if len(parts) == 1:
        return parts[0]
    indexes, preds, target = (ops.concat([p[i] for p in parts]) for i in range(3))
    return indexes, preds, target


def _sorted_blocks(ops: Ops, parts: list[Rows], size: int) -> Iterator[Queries]:
    """Blocks of about ``size`` rows of ``parts`` (numpy arrays), each part in query order and the parts
    one after the other."""
    carry: list[Rows] = []  # the pieces of the last query so far: it may go on in the next part
    for indexes, preds, target in parts:
        if carry:
            same = int(np.searchsorted(indexes, carry[0][0][-1], side="right"))
            if same:
                carry.append((indexes[:same], preds[:same], target[:same]))
                indexes, preds, target = indexes[same:], preds[same:], target[same:]
            if not len(indexes):
                continue
            yield Queries.ranked(ops, *_joined(ops, carry))
        last = int(np.searchsorted(indexes, indexes[-1], side="left"))  # the last query's first row
        # blocks end at the first query start at or after each multiple of the size
        starts = np.flatnonzero(_changes(ops, indexes[:last]))
        after = np.searchsorted(starts, np.arange(size, last, size))
        cuts = [0, *np.unique(starts[after[after < len(starts)]]).tolist(), last]
        for begin, end in itertools.pairwise(cuts):
            if end > begin:
                yield Queries.ranked(ops, indexes[begin:end], preds[begin:end], target[begin:end])
        carry = [(indexes[last:], preds[last:], target[last:])]
    if carry:
        yield Queries.ranked(ops, *_joined(ops, carry))


# --------------------------------------------------------------------------------------------------
# The metrics: one value per query, as float64. ``top_k`` None means all of the query's rows.


def _relevant_rows(q: Queries, top_k: Any) -> Any:
    """Average precision's and reciprocal rank's rows: target and score above 0, within the top
    ``top_k`` (``torch.topk``'s argument, whose errors it raises where torchmetrics would: for a query with
    a positive target)."""
    mask = (q.target > 0) & (q.preds > 0)
    if top_k:
        k = topk_size(top_k) if bool((q.sum(q.target) != 0).any()) else 0
        mask = _and(mask, q.top(k))
    return q.ops.flatnonzero(mask)


def average_precision(q: Queries, top_k: Any = None) -> Any:
    """The mean of the precisions at the relevant rows within ``top_k`` (0 without one)."""
    rows = _relevant_rows(q, top_k)
    precisions = q.floats(q.rank_among(rows)) / q.floats(q.pos[rows] + 1)
    return q.ratio(q.add(rows, precisions), q.add(rows))


def reciprocal_rank(q: Queries, top_k: Any = None) -> Any:
    """1 / the rank of the first relevant row within ``top_k`` (0 without one)."""
    rows = _relevant_rows(q, top_k)
    rows = rows[_changes(q.ops, q.ids[rows])]
    return q.add(rows, 1.0 / q.floats(q.pos[rows] + 1))


def _scored(q: Queries, k: Any) -> Any:
    """Per query, the sum of the targets whose score is above 0 within its top ``k``."""
    rows = q.ops.flatnonzero(_and((q.preds > 0) & (q.target != 0), q.top(k)))
    return q.add(rows, q.floats(q.target[rows]))


def precision(q: Queries, top_k: int | None = None, adaptive_k: bool = False) -> Any:
    """The targets (scores above 0) within the top ``k``, over ``k``: ``top_k``, or the query's size when
    ``top_k`` is None or, with ``adaptive_k``, larger than the query."""
    if top_k is not None and not adaptive_k:
        return _scored(q, top_k) / top_k
    k = q.sizes if top_k is None else q.ops.where(q.sizes < top_k, q.sizes, top_k)
    return _scored(q, top_k) / q.floats(k)


def recall(q: Queries, top_k: int | None = None) -> Any:
    """The targets (scores above 0) within the top ``top_k``, over the sum of the query's targets (0 when
    it is 0)."""
    return q.ratio(_scored(q, top_k), q.floats(q.sum(q.target)))


def _found(q: Queries, values: Any, k: Any) -> Any:
    """Per query, the sum of ``values`` (one per row) within its top ``k``."""
    rows = q.ops.flatnonzero(_and(values != 0, q.top(k)))
    return q.add(rows, q.floats(values[rows]))


def hit_rate(q: Queries, top_k: int | None = None) -> Any:
    """1 when the targets within the top ``top_k`` add up to more than 0, else 0."""
    return q.floats(_found(q, q.target, top_k) > 0)


def fall_out(q: Queries, top_k: int | None = None) -> Any:
    """The non-relevant (1 - target) within the top ``top_k``, over all of the query's (0 without any)."""
    negative = 1 - q.target
    return q.ratio(_found(q, negative, top_k), q.floats(q.sum(negative)))


def r_precision(q: Queries) -> Any:
    """The targets within the top R, over R, the sum of the query's targets (0 when R is 0).

    torchmetrics slices the ranking at R, which for float targets is a ``TypeError``: raised here too
    when a query has an R other than 0."""
    total = q.sum(q.target)
    if q.ops.is_floating(q.target) and bool((total != 0).any()):
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return q.ratio(_found(q, q.target, total), q.floats(total))


def normalized_dcg(q: Queries, top_k: int | None = None) -> Any:
    """DCG over the ideal DCG: the gain is the target, the discount 1 / log2(rank + 1) within ``top_k``;
    tied scores share the mean of their gains (scikit-learn's ``ndcg_score``, torchmetrics'
    definition); 0 where the ideal DCG is 0."""
    ops = q.ops
    within = q.top(top_k)
    rows = ops.arange(len(q.pos), q.pos) if within is None else ops.flatnonzero(within)
    discount = 1.0 / ops.log2(q.floats(q.pos[rows]) + 2.0)
    # groups of tied scores, each inside one query: the mean gain of a group times its discounts
    tied = _changes(ops, q.preds) | (q.pos == 0)
    tie_ids = ops.cumsum(tied) - 1
    tie_starts, tie_sizes = _segments(ops, tied)
    mean_gain = q.floats(ops.segment_sum(q.target, tie_starts, tie_ids, len(tie_starts))) / q.floats(
        tie_sizes
    )
    discounts = ops.scatter_sum(tie_ids[rows], discount, len(tie_starts))
    dcg = ops.scatter_sum(q.ids[tie_starts], mean_gain * discounts, q.count)
    return q.ratio(dcg, _ideal_dcg(q, rows, discount, q.sizes if top_k is None else top_k))


def _ideal_dcg(q: Queries, rows: Any, discount: Any, k: Any) -> Any:
    """Per query, the DCG of its targets in descending order within the top ``k`` (``rows`` and their
    ``discount``: the rows within it). Integer targets of a few levels are counted, not sorted: a level's
    documents take the places after those of the higher levels."""
    ops = q.ops
    target = q.target
    if not ops.is_floating(target):
        top, low = int(ops.item(target.max())), int(ops.item(target.min()))
        levels = top - low + 1
        if levels <= 64 and q.count * levels <= 4 * len(target) + 64:
            counts = ops.scatter_sum(q.ids * levels + (top - target), None, q.count * levels)
            counts = counts.reshape(q.count, levels)  # [query, level], the highest level first
            before = counts.cumsum(1) - counts
            # the discounts of places 0, 1, ...: a level's gain over its places within the top k
            ranks = ops.arange(q.longest + 1, target)
            table = ops.concat(
                [ops.zeros(1, ops.float64, target), ops.cumsum(1.0 / ops.log2(q.floats(ranks[:-1]) + 2.0))]
            )
            limit = q.floats(k if not isinstance(k, int) else ops.full(q.count, k, ops.int64, target))[
                :, None
            ]
            end = _index(ops, _minimum(ops, before + counts, limit))
            start = _index(ops, _minimum(ops, before, limit))
            gains = q.floats(top - ops.arange(levels, target))[None, :]
            return ((table[end] - table[start]) * gains).sum(1)
        key, bits = top - target, (top - low).bit_length()
    else:
        key, bits = descending_key(ops, target), 32
    order = q.order_by(key, bits)
    return q.add(rows, q.floats(target[order][rows]) * discount)


def _minimum(ops: Ops, x: Any, y: Any) -> Any:
    return ops.where(x < y, x, y)


def _index(ops: Ops, x: Any) -> Any:
    return ops.cast(x, ops.int64)


def auroc(q: Queries, top_k: int | None = None, max_fpr: float | None = None) -> Any:
    """The area under the ROC curve of the top ``top_k`` rows (scikit-learn's: tied scores are one step,
    a diagonal); with ``max_fpr`` below 1, the partial area up to that false positive rate,
    McClish-standardised. 0 where the top k lacks a target of 0 or one of 1. A query whose top k has a
    score outside [0, 1] is scored by the sigmoids of its scores (in float32, where large scores tie), as
    torchmetrics' ``binary_auroc`` does. A target is positive when it is 1, negative otherwise."""
    # torchmetrics' own check lets any float through (its condition is inverted) and then fails on an
    # index past the curve; a partial area beyond a rate of 1 would come out negative or -inf here
    if max_fpr is not None and (isinstance(max_fpr, bool) or not 0 < max_fpr <= 1):
        raise ValueError(f"Arguments `max_fpr` should be a float in range (0, 1], but got: {max_fpr}")
    ops = q.ops
    within = q.top(top_k or None)
    if within is None:
        top = q
    else:  # the top k, as queries of their own (each keeps at least its first row)
        rows = ops.flatnonzero(within)
        top = Queries(ops, q.ids[rows], q.preds[rows], q.target[rows], q.count)
    valid = (top.sum(top.target == 0) > 0) & (top.sum(top.target == 1) > 0)
    logits = top.sum((top.preds < 0) | (top.preds > 1)) > 0
    scores = ops.where(logits[top.ids], ops.sigmoid32(top.preds), top.preds)
    positive = ops.cast(top.target == 1, ops.int64)
    # the curve: a point after each group of tied scores (the sigmoid keeps the order, and may tie more)
    ends = ops.flatnonzero(_ends(ops, top.ids) | _ends(ops, scores))
    tp = ops.cumsum(positive)
    tp = (tp - (tp[top.starts] - positive[top.starts])[top.ids])[ends]
    fp = top.pos[ends] + 1 - tp
    at = top.ids[ends]
    first = _changes(ops, at)
    positives = top.sum(positive)
    x = q.ratio(q.floats(fp), q.floats(top.sizes - positives)[at])
    y = q.ratio(q.floats(tp), q.floats(positives)[at])
    x0 = ops.where(first, 0.0, ops.concat([x[:1], x[:-1]]))
    y0 = ops.where(first, 0.0, ops.concat([y[:1], y[:-1]]))
    curve = Queries(ops, at, x, y, q.count)
    if max_fpr is None or max_fpr == 1:
        return ops.where(valid, curve.sum((x - x0) * (y + y0) / 2), 0.0)
    # each step cut at max_fpr (the step across it interpolated), as torchmetrics cuts the curve
    m = float(max_fpr)
    reach = ops.where(x <= m, x, m)
    y_reach = y0 + q.ratio(reach - x0, x - x0) * (y - y0)
    partial = curve.sum(ops.where(x0 <= m, (reach - x0) * (y0 + y_reach) / 2, 0.0))
    low = 0.5 * m**2
    return ops.where(valid, 0.5 * (1 + (partial - low) / (m - low)), 0.0)


def curve_values(q: Queries, max_k: int, adaptive_k: bool) -> tuple[Any, Any]:
    """Precision and recall at k = 1, ..., ``max_k`` of every query, as two (queries × max_k) arrays: the
    targets within its top k (all of them once k passes its size), over k (over its size beyond it, with
    ``adaptive_k``), and over the sum of its targets (recall 0 where that is 0)."""
    ops = q.ops
    target = q.floats(q.target)
    running = ops.cumsum(target)
    running = running - (running[q.starts] - target[q.starts])[q.ids]
    found = ops.zeros((q.count, max_k), ops.float64, target)
    keep = ops.flatnonzero(q.pos < max_k)
    found[q.ids[keep], q.pos[keep]] = running[keep]
    total = q.sum(target)[:, None]
    ks = (ops.arange(max_k, target) + 1)[None, :]
    beyond = ks > q.sizes[:, None]
    found = ops.where(beyond, total, found)
    k = ops.where(beyond, q.sizes[:, None], ks) if adaptive_k else ks
    return found / q.floats(k), q.ratio(found, total)


def curve_ks(q: Queries, max_k: int, adaptive_k: bool) -> Any:
    """The functional curve's k of each point: 1, ..., ``max_k``, stopping at the query's size with
    ``adaptive_k``."""
    ks = q.ops.arange(max_k, q.pos) + 1
    return q.ops.where(ks > q.sizes[0], q.sizes[0], ks) if adaptive_k else ks


def recall_at_fixed_precision(
    ops: Ops, precisions: Any, recalls: Any, top_k: Any, min_precision: float
) -> tuple[Any, Any]:
    """The largest recall whose precision is at least ``min_precision``, and the largest k that gives it;
    (0, ``len(top_k)``) when no precision is, and the k ``len(top_k)`` when the recall is 0."""
    ok = precisions >= min_precision
    if not bool(ok.any()):
        return recalls[0] * 0, top_k[0] * 0 + len(top_k)
    candidates = ops.where(ok, recalls, -1.0)
    best = candidates.max()
    k = top_k[ops.flatnonzero(candidates == best)[-1]]
    return best, (k * 0 + len(top_k)) if bool(best == 0) else k


# --------------------------------------------------------------------------------------------------
# Over queries.


def aggregate(ops: Ops, values: Any, aggregation: str | Callable[..., Any], dim: int | None = None) -> Any:
    """torchmetrics' aggregation of per-query values: their mean, median (the lower middle value, as
    torch's), min, max, or ``aggregation(values, dim=dim)``."""
    if aggregation == "mean":
        return values.mean() if dim is None else values.mean(dim)
    if aggregation == "median":
        return ops.lower_median(values, dim)
    if aggregation == "min":
        return values.min() if dim is None else _values(values.min(dim))
    if aggregation == "max":
        return values.max() if dim is None else _values(values.max(dim))
    assert callable(aggregation)
    return aggregation(values, dim=dim)


def _values(reduced: Any) -> Any:
    """torch's min and max along a dimension return (values, indices); numpy's the values."""
    return getattr(reduced, "values", reduced)
