"""The evaluation context: what a metric kernel computes from, and nothing about how it was built.

A :class:`Context` is a run joined with the qrels and put in ranked order, as flat numpy arrays in which
each query is a contiguous segment; it offers the pieces kernels share (relevance masks, the relevant
rows, cutoffs, per-query counts) and caches them, so ten metrics at one relevance level share one
selection of relevant rows. :class:`QueryView` is one query's data for a metric written as a plain
per-query function. :class:`Options` are the evaluation's options, which kernels read too.

This module is the kernels' whole interface to evaluation: :mod:`irspec.builtin.kernels` and plugins' kernels
import from here, never from the modules that build contexts (:mod:`irspec.evaluation.ranking`: joining,
ranking) and call kernels through the registry (:mod:`irspec.evaluation.compute`). It knows nothing of
files, frames or the registry's plugins.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from irspec.errors import EvaluationError, quote
from irspec.frozen import frozen
from irspec.spec import syntax
from irspec.spec.registry import MAX_COUNT, Metric

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "UNJUDGED",
    "Context",
    "IndexedQrels",
    "Options",
    "QueryView",
    "rank_log2",
    "safe_divide",
    "segment_counts",
    "segment_cumsum",
    "segment_rows",
]


UNJUDGED = np.iinfo(np.int64).min // 2
"""Label given to a retrieved document that is absent from the qrels (negative, so never relevant)."""

MissingQueries = Literal["zero", "skip", "error"]


@frozen
class Options:
    """Options that apply to a whole evaluation (trec_eval's flag in brackets).

    ``relevance_level`` [-l]: the default ``rel`` of every metric. ``depth`` [-M]: keep the top
    ``depth`` documents of each ranking. ``judged_only`` [-J]: drop unjudged and negative-label
    documents before measuring. ``missing_queries`` [-c is ``zero``]: what a qrels query absent from
    the run gets: ``zero`` (scored as an empty ranking, as trec_eval -c scores it: 0 on most measures;
    counted in the mean), ``skip``, or ``error``.
    ``collection_size``: the number of documents in the collection, for fall-out.
    ``judged_warning``: a run whose mean Judged@10 (over the queries it answers) is below this gets a
    warning that its scores are likely underestimated; ``None`` or 0 for none. Not a trec_eval option,
    and not in :meth:`as_dict`, which lists what changes the values.
    """

    relevance_level: int = 1
    depth: int | None = None
    judged_only: bool = False
    missing_queries: MissingQueries = "zero"
    collection_size: int | None = None
    judged_warning: float | None = 0.5

    def __post_init__(self) -> None:
        # Counts stop at MAX_COUNT, as a metric's integer parameters do: exact in float64 and int64, where
        # the kernels use them, and beyond any real collection (a larger depth would cut nothing).
        # trec_eval takes -l 0 (every judged document is relevant) and -M 0 (empty rankings). Below 0,
        # its measures disagree on what is relevant (P counts documents absent from the qrels, its
        # relevant-retrieved count does not): no defined value to give, so irspec refuses.
        _check_count("relevance_level", self.relevance_level, minimum=0)
        # a flag, strictly: "false" from a config file is a true string, and turned on -J in silence
        if not isinstance(self.judged_only, (bool, np.bool_)):
            raise EvaluationError(f"judged_only must be True or False, got {quote(self.judged_only)}")
        if self.depth is not None:
            _check_count("depth", self.depth, minimum=0)
        if self.missing_queries not in ("zero", "skip", "error"):
            raise EvaluationError(
                f"missing_queries must be zero, skip or error, got {quote(self.missing_queries)}"
            )
        if self.collection_size is not None:
            _check_count("collection_size", self.collection_size)
        j = self.judged_warning
        if j is not None and (isinstance(j, bool) or not isinstance(j, (int, float)) or not 0 <= j <= 1):
            raise EvaluationError(f"judged_warning must be a number from 0 to 1 (or None), got {j!r}")

    def as_dict(self) -> dict[str, Any]:
        """The options as a plain dict (for JSON output)."""
        return {
            "relevance_level": self.relevance_level,
            "depth": self.depth,
            "judged_only": self.judged_only,
            "missing_queries": self.missing_queries,
            "collection_size": self.collection_size,
        }


def _check_count(name: str, value: Any, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise EvaluationError(
            f"{name} must be an integer >= {minimum} and <= {MAX_COUNT}, got {quote(value)}"
        )


class IndexedQrels(Protocol):
    """What a :class:`Context` reads from the qrels it was built with (the engine's
    :class:`~irspec.evaluation.index.QrelsIndex` provides it): each query's position, labels grouped by query and
    sorted descending within it, and the relevant and judged non-relevant counts per level."""

    # read-only (properties), so that a class with a dict or an ndarray subtype provides them
    @property
    def position(self) -> Mapping[str, int]: ...
    @property
    def labels(self) -> np.ndarray: ...
    @property
    def offsets(self) -> np.ndarray: ...
    @property
    def frame(self) -> pl.DataFrame:
        """The qrels' rows (query, docno, label): what a per-query metric's judgments come from."""
        ...

    def counts(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(R, N) per query, in the qrels' own query order."""
        ...


# --------------------------------------------------------------------------------------------------
# The per-run context that kernels compute from.


class Context:
    """A run joined with the qrels: flat arrays with one contiguous segment per query.

    Attributes every kernel may use (``nq`` queries, ``m`` ranked documents in all):

    ``query_ids`` (a sequence of nq ids, in the order of the segments: not necessarily sorted), ``offsets``
    (nq + 1 segment bounds), ``seg`` (m, query index of each row), ``rank`` (m, 1-based rank within its
    query), ``label`` (m, qrels label; :data:`UNJUDGED` for documents absent from the qrels), ``n`` (nq,
    ranking lengths), ``qrels`` (the :class:`IndexedQrels`), ``qpos`` (nq, each query's position in the
    qrels index; given as ``qpos`` by a builder that has it, else looked up by id), ``options``, and
    ``inputs`` (read in place of the qrels, see :meth:`input`).

    ``seg`` and ``rank`` are built on first use: most kernels only need them at a few rows (the
    relevant ones, the top k), which :meth:`seg_of`, :meth:`rank_of` and :meth:`top_rows` give without
    touching every row.
    """

    def __init__(
        self,
        query_ids: Sequence[str],
        offsets: np.ndarray,
        label: np.ndarray,
        qrels: IndexedQrels,
        options: Options,
        frame: Any = None,
        inputs: Mapping[str, Any] | None = None,
        qpos: np.ndarray | None = None,
    ) -> None:
        self.query_ids = query_ids
        self.nq = len(query_ids)
        self.offsets = offsets
        self.label = label
        self.n = np.diff(offsets)
        self.qrels = qrels
        # qpos: each query's position, when the builder knows it without looking every id up (a
        # recommender's users: a hundred thousand dict lookups would cost more than its metrics)
        self.qpos = np.array([qrels.position[q] for q in query_ids], dtype=np.int64) if qpos is None else qpos
        self.options = options
        self.frame = frame  # the ranked polars frame, for per-query plugin metrics
        self.missing: np.ndarray | None = None  # queries absent from the run, under missing_queries="zero"
        self.inputs: Mapping[str, Any] = dict(inputs or {})  # inputs read in place of the qrels, by kind
        self._cache: dict[Any, Any] = {}

    def input(self, kind: str, missing: str | None = None) -> Any:
        """The data object of the input ``kind`` that was read in place of the qrels (an
        :class:`~irspec.spec.definitions.InputReader` with ``as_qrels``, such as qrels with subtopics): what
        a metric that declares ``needs=kind`` computes from beside the ranking. Without it, an
        :class:`~irspec.errors.EvaluationError` saying ``missing`` (what to give instead), or by default
        that the qrels' reader of that kind was not used."""
        try:
            return self.inputs[kind]
        except KeyError:
            raise EvaluationError(
                missing
                or f"no {kind!r} input was read for this evaluation (read: {sorted(self.inputs) or 'none'}): "
                f"give the qrels in the form the {kind!r} reader reads"
            ) from None

    @cached_property
    def seg(self) -> np.ndarray:
        """Per row: the index of its query (int32: a run has < 2**31 queries)."""
        return np.repeat(np.arange(self.nq, dtype=np.int32), self.n)

    @cached_property
    def rank(self) -> np.ndarray:
        """Per row: its 1-based rank within its query (int32)."""
        rank = np.arange(1, len(self.label) + 1, dtype=np.int32)
        rank -= np.repeat(self.offsets[:-1].astype(np.int32), self.n)
        return rank

    def seg_of(self, rows: np.ndarray) -> np.ndarray:
        """The query index of each of ``rows`` (row indices, or a bool mask over rows), as ``seg[rows]``
        gives it, without building ``seg`` when it is not there yet."""
        if "seg" in self.__dict__:
            return self.seg[rows]
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return (np.searchsorted(self.offsets, rows, side="right") - 1).astype(np.int32)

    def rank_of(self, rows: np.ndarray, seg: np.ndarray | None = None) -> np.ndarray:
        """The 1-based rank of each of ``rows`` (indices or a bool mask), as ``rank[rows]``; ``seg`` is
        their :meth:`seg_of`, when the caller has it."""
        if "rank" in self.__dict__:
            return self.rank[rows]
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        seg = self.seg_of(rows) if seg is None else seg
        return (rows - self.offsets[seg] + 1).astype(np.int32)

    # --- parameters -----------------------------------------------------------------------------
    def level(self, metric: Metric) -> int:
        """The relevance level of ``metric``: its ``rel`` parameter, or the evaluation's."""
        return relevance_level(metric, self.options)

    def value(self, metric: Metric, name: str) -> Any:
        """A parameter's value; one evaluated per query (a float array) when it uses ``R``."""
        if name not in metric.definition.param_names:
            return None  # a kernel shared by metrics that lack the parameter (GMAP uses AP's)
        v = metric.get(name)
        if isinstance(v, syntax.Expr.__args__):
            R = self.R(self.level(metric)).astype(np.float64)
            # Per query, arithmetic over R may divide by zero (10/R with R = 0) or overflow (R*1e308):
            # the float results (inf, NaN) are given their meaning by the caller, without numpy's warnings.
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return np.broadcast_to(np.asarray(syntax.evaluate_expr(v, {"R": R}), np.float64), (self.nq,))
        return v

    def cutoff(self, metric: Metric, name: str = "k") -> np.ndarray | None:
        """The cutoff per query as an int array, or ``None`` for the whole ranking.

        A cutoff computed from ``R`` is rounded down. Where it is below 1 or NaN (``P@R`` with R = 0,
        ``P@(R-100)``, ``P@((R-R)/(R-R))``) it is 0, and cutoff metrics give 0 for that query. Where it
        is above :data:`~irspec.spec.registry.MAX_COUNT` or infinite (``nDCG@(R*1e19)``, ``P@(10/R)`` with
        R = 0) it is MAX_COUNT: a cutoff past every ranking means the whole ranking, as trec_eval's
        ``P.100000`` does. (A metric that divides by k, such as P, then divides by MAX_COUNT; constant
        cutoffs are never above it, the binder refuses them.)
        """
        v = self.value(metric, name)
        if v is None:
            return None
        if isinstance(v, np.ndarray):
            v = np.floor(np.nan_to_num(v, nan=0.0) + 1e-9)  # 1e-9: (0.3*R)*10 is not quite integral
            return np.clip(v, 0, MAX_COUNT).astype(np.int64)
        return np.full(self.nq, v, dtype=np.int64)

    # --- per-query qrels counts -----------------------------------------------------------------
    def R(self, level: int) -> np.ndarray:
        """Relevant documents of each query in the qrels (label >= level)."""
        return self.qrels.counts(level)[0][self.qpos]

    def N(self, level: int) -> np.ndarray:
        """Judged non-relevant documents of each query in the qrels (0 <= label < level)."""
        return self.qrels.counts(level)[1][self.qpos]

    # --- per-row masks and running counts -------------------------------------------------------
    def relevant(self, level: int) -> np.ndarray:
        """Bool per ranked row: label >= level."""
        key = ("rel", level)
        if key not in self._cache:
            self._cache[key] = self.label >= level
        return self._cache[key]

    def judged_nonrelevant(self, level: int) -> np.ndarray:
        """Bool per ranked row: judged and 0 <= label < level."""
        key = ("nonrel", level)
        if key not in self._cache:
            self._cache[key] = (self.label >= 0) & (self.label < level)
        return self._cache[key]

    def judged(self) -> np.ndarray:
        """Bool per ranked row: the document has a label >= 0 in the qrels."""
        return self.label >= 0

    def relevant_rows(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, nth): the relevant rows in rank order, and each one's 1-based place among its query's
        relevant rows. Kernels that only look at relevant documents (AP, IPrec, infAP) work on these few
        rows rather than on every retrieved document."""
        key = ("relevant-rows", level)
        if key not in self._cache:
            rows = np.flatnonzero(self.relevant(level))
            self._cache[key] = (rows, self.before(rows, rows) + 1)
        return self._cache[key]

    def relevant_labels(self, level: int) -> np.ndarray:
        """The labels of the :meth:`relevant_rows`, in their order: ``label[rows]``, which a context
        that knows its few labelled rows gives without every row's label."""
        return self.label[self.relevant_rows(level)[0]]

    def before(self, marked: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For each of ``rows``: how many of the ``marked`` rows (sorted indices) of the same query lie above it."""
        first = np.searchsorted(marked, self.offsets[:-1])  # each query's first marked row
        return np.searchsorted(marked, rows) - first[self.seg_of(rows)]

    def running_sum(self, values: np.ndarray) -> np.ndarray:
        """Per row: the sum of ``values`` over its query's rows up to and including it."""
        return segment_cumsum(values, self.offsets)

    def seg_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each query's rows."""
        return np.bincount(self.seg, weights=values, minlength=self.nq)

    def top(self, k: np.ndarray) -> np.ndarray:
        """Bool per row: within the top ``k[query]`` of its query."""
        mask = np.zeros(len(self.label), dtype=bool)
        mask[self.top_rows(k)] = True
        return mask

    def top_rows(self, k: np.ndarray) -> np.ndarray:
        """The rows within the top ``k[query]`` of their query, in order (cached: P@10 and nDCG@10
        share them). Built from the segment bounds: 50,000 rows for @10, whatever the run's length."""
        key = ("top", k.tobytes())
        if key not in self._cache:
            self._cache[key] = segment_rows(self.offsets[:-1], np.minimum(np.maximum(k, 0), self.n))
        return self._cache[key]

    def count(self, mask: np.ndarray, k: np.ndarray | None = None) -> np.ndarray:
        """Rows satisfying ``mask`` per query, within the top ``k`` (per-query array) when given."""
        rows = np.flatnonzero(mask)
        seg = self.seg_of(rows)
        if k is not None:
            # Test the cutoff on the selected rows only (few, for relevant documents), not on all rows.
            seg = seg[self.rank_of(rows, seg) <= k[seg]]
        return np.bincount(seg, minlength=self.nq).astype(np.int64)

    def count_judged(self, k: np.ndarray | None = None) -> np.ndarray:
        """Rows with a label >= 0 per query, within the top ``k`` when given: ``count(judged(), k)``,
        which a context that knows its few judged rows gives without a mask over every row."""
        return self.count(self.judged(), k)

    def relevant_places(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(seg, rank) of the :meth:`relevant_rows`, cached: AP, IPrec, bpref and P@k all need them."""
        key = ("relevant-places", level)
        if key not in self._cache:
            rows, _ = self.relevant_rows(level)
            seg = self.seg_of(rows)
            self._cache[key] = (seg, self.rank_of(rows, seg))
        return self._cache[key]

    def count_relevant(self, level: int, k: np.ndarray | None = None) -> np.ndarray:
        """Relevant documents per query (within the top ``k`` when given), from the cached relevant
        rows: a dozen P@k share one selection instead of scanning every row each."""
        seg, rank = self.relevant_places(level)
        if k is not None:
            seg = seg[rank <= k[seg]]
        return np.bincount(seg, minlength=self.nq).astype(np.int64)

    def first_rank(self, mask: np.ndarray) -> np.ndarray:
        """Rank of the first row satisfying ``mask`` per query; 0 where there is none."""
        out = np.zeros(self.nq, dtype=np.int64)
        rows = np.flatnonzero(mask)
        if len(rows):
            segs = self.seg_of(rows)
            first = np.concatenate(([True], segs[1:] != segs[:-1]))
            out[segs[first]] = self.rank_of(rows[first], segs[first])
        return out

    def nth_rank(self, mask: np.ndarray, nth: np.ndarray) -> np.ndarray:
        """Rank of the ``nth`` (per query, 1-based) row satisfying ``mask``; 0 where there are fewer."""
        rows = np.flatnonzero(mask)
        counts = np.bincount(self.seg_of(rows), minlength=self.nq)
        starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
        ok = (nth >= 1) & (nth <= counts)
        out = np.zeros(self.nq, dtype=np.int64)
        out[ok] = self.rank_of(rows[starts[ok] + nth[ok] - 1])
        return out

    def ideal_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Every qrels label of the evaluated queries, each query's sorted descending: (labels, offsets)."""
        if "ideal" not in self._cache:
            q = self.qrels
            starts, ends = q.offsets[self.qpos], q.offsets[self.qpos + 1]
            lengths = ends - starts
            offsets = np.concatenate(([0], np.cumsum(lengths)))
            self._cache["ideal"] = (q.labels[segment_rows(starts, lengths)], offsets)
        return self._cache["ideal"]


def relevance_level(metric: Metric, options: Options) -> int:
    """The relevance level of ``metric``: its ``rel`` parameter, or the evaluation's (``options``)."""
    rel = metric.get("rel") if "rel" in metric.definition.param_names else None
    return options.relevance_level if rel is None else rel


def segment_rows(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[q], ..., starts[q] + lengths[q] - 1`` for each q in turn, concatenated."""
    ends = np.cumsum(lengths)
    # index = its segment's start + its place within the segment
    shift = np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths)
    return np.arange(ends[-1] if len(ends) else 0, dtype=np.int64) + shift


def segment_counts(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """How many of ``mask``'s values are true in each segment ``offsets[q]:offsets[q + 1]`` (64-bit):
    a running count read at the bounds, three times as fast as a reduction segment by segment, with no
    per-value array of segments (what ``bincount`` would need)."""
    running = np.zeros(len(mask) + 1, dtype=np.int32 if len(mask) < 1 << 31 else np.int64)
    np.cumsum(mask, dtype=running.dtype, out=running[1:])
    return (running[offsets[1:]] - running[offsets[:-1]]).astype(np.int64)


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` that restart at each segment ``offsets[q]:offsets[q + 1]``, each added
    from the segment's first value on, left to right, as trec_eval's per-query loop adds.

    One cumulative sum over every segment, less the sum before each segment, rounds differently: a
    query's value would then depend on which queries precede it in the context (the run's order, or
    the block of queries it is evaluated with). Segments are padded into rows of a matrix instead, one
    matrix per power-of-two length class (at most twice the values), and summed along the rows.
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.empty(len(values))
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    lengths = np.diff(offsets).astype(np.int64)
    width_class = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    width_class[lengths == 0] = -1
    for w in np.unique(width_class[width_class >= 0]).tolist():
        chosen = np.flatnonzero(width_class == w)
        valid = np.arange(1 << w) < lengths[chosen, None]
        rows = segment_rows(starts[chosen], lengths[chosen])  # in the row-major order of `valid`
        padded = np.zeros(valid.shape)
        padded[valid] = values[rows]
        out[rows] = np.cumsum(padded, axis=1)[valid]
    return out


LOG2_TABLE = 1 << 17
"""The integers up to which :func:`rank_log2` reads the C library's logarithms from a table."""

_log2_table = np.full(1, np.nan)  # _log2_table[i] = log2(i), grown on demand; [0] is never read


def rank_log2(x: np.ndarray) -> np.ndarray:
    """log2 of integers >= 1 (ranks and counts, as floats or integers), as the C library's ``log2``
    gives it: trec_eval's discounts are computed with it, and so is Python's :func:`math.log2`, which
    the pure-Python evaluation (:mod:`irspec.evaluation.pure`) uses. numpy's own ``log2`` differs from
    it in the last bit for some integers (1621 is the first on an x86 machine with AVX-512), which moves
    a sum of discounts by as much, and a value printed at trec_eval's last digit when it is on a
    rounding boundary.

    Up to :data:`LOG2_TABLE`, the values come from a table of :func:`math.log2` made once per process
    and grown to the largest integer asked for (a power of two: 1 ms for the first 16,384); beyond it,
    from numpy, which no ranking that short reaches."""
    global _log2_table
    index = np.asarray(x).astype(np.int64)
    top = int(index.max(initial=0))
    table = _log2_table
    if top >= len(table) and len(table) <= LOG2_TABLE:
        size = min(1 << max(top, 255).bit_length(), LOG2_TABLE + 1)
        table = np.empty(size)
        table[0] = np.nan
        table[1:] = np.fromiter(map(math.log2, range(1, size)), np.float64, size - 1)
        _log2_table = table
    if top < len(table):
        return table[index]
    return np.where(index < len(table), table[np.minimum(index, len(table) - 1)], np.log2(index))


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` per query, 0 where ``den`` is 0 (no relevant documents, empty ranking)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


# --------------------------------------------------------------------------------------------------
# The simple per-query form for plugins.


@frozen
class QueryView:
    """One query's data, for a metric written as a plain per-query function.

    ``labels`` are the qrels labels of the ranked documents in rank order (``None`` for unjudged),
    ``docnos`` and ``scores`` the ranking itself, ``qrels`` the query's judgments, and
    ``relevance_level`` the level that applies to the metric.
    """

    query_id: str
    docnos: tuple[str, ...]
    scores: tuple[float, ...]
    labels: tuple[int | None, ...]
    qrels: Mapping[str, int]
    relevance_level: int

    @property
    def R(self) -> int:
        """Relevant documents of the query in the qrels."""
        return sum(1 for v in self.qrels.values() if v >= self.relevance_level)
