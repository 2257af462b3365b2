"""The qrels indexed once for evaluation, and shared by every run evaluated against them.

A :class:`QrelsIndex` holds what joining a run with the qrels and the kernels' counts need: the query
ids and their positions, the labels grouped by query (the ideal ranking), sorted 64-bit keys of the
(query, docno) pairs with a filter on their top bits, and the relevant and non-relevant counts per
relevance level. :func:`index_qrels` keeps the last index made, :func:`sub_index` indexes some of
its queries (a block of a streamed run, the queries a run lacks). Knows nothing of runs or metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from irspec.data import Qrels, pair_keys, value_runs
from irspec.data.keys import pair_keys as plain_pair_keys
from irspec.data.keys import text_hash
from irspec.evaluation.context import segment_rows
from irspec.lazy import lazy_module

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = ["FILTER_BITS", "IntegerKeys", "QrelsIndex", "index_qrels", "sub_index"]

FILTER_BITS = 22
"""At most this many bits of a (query, docno) key index :attr:`QrelsIndex.key_filter`: a one-byte-a-slot
table of at most 4 MiB (:func:`_filter_bits`), which tells most unjudged run rows so before a binary
search."""


class QrelsIndex:
    """A qrels set indexed for evaluation: query ids, labels grouped by query, join keys, counts per level.

    Built once per qrels and shared by every run evaluated against it.
    """

    def __init__(self, qrels: Any) -> None:
        plain = getattr(qrels, "plain", None)
        if plain is not None:  # qrels read without polars (irspec.data.small): their columns, row for row
            query_ids, q, labels, docnos = plain
            self._build(qrels, None, query_ids, q, labels, docnos)
            return
        frame = qrels.frame.select("query", "docno", "label")
        runs = _sorted_codes(frame.get_column("query"))
        if runs is not None:  # the reader's order (by query): each query's rows in one run of rows
            query_ids, q = runs
        else:
            query_ids = sorted(frame.get_column("query").unique().to_list())
            self.__dict__["query_codes"] = _query_codes(query_ids)
            q = (
                frame.join(self.query_codes, on="query", how="left", maintain_order="left")
                .get_column("qcode")
                .to_numpy()
            )
        self._build(
            qrels, frame, query_ids, q, frame.get_column("label").to_numpy().astype(np.int64, copy=False)
        )

    def _build(
        self,
        qrels: Any | None,
        frame: pl.DataFrame | None,
        query_ids: list[str],
        q: np.ndarray,
        labels: np.ndarray,
        docnos: list[str] | None = None,
    ) -> None:
        """Everything but the hashed keys (:attr:`_hashed`), from the rows' query codes ``q`` and labels;
        ``frame``, the rows' query, docno and label, is made from the qrels when first asked for if not
        given (``docnos``, the rows' docnos, given instead)."""
        if qrels is not None:
            self.qrels = qrels
        if frame is not None:
            self.__dict__["frame"] = frame
        self._docnos = docnos
        self._part_of: tuple[QrelsIndex, np.ndarray] | None = None
        self.query_ids = query_ids
        self.position = {qid: i for i, qid in enumerate(query_ids)}
        self.row_query = q
        self.row_label = labels
        order = _ideal_order(q, labels)  # by query, then label descending: the ideal ranking
        self.labels = labels[order]
        self.query_of = q[order]
        counts = np.bincount(q, minlength=len(query_ids))
        self.offsets = np.zeros(len(query_ids) + 1, np.int64)
        np.cumsum(counts, out=self.offsets[1:])
        self._by_level: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._numbers: IntegerKeys | bool | None = False  # not built yet
        self._rank_of_row: np.ndarray | None = None  # each row's place among the sorted keys, once asked
        self._judged: tuple[list[list[str]], np.ndarray] | None = None

    @cached_property
    def frame(self) -> pl.DataFrame:
        """The rows' query, docno and label (a frame: what joins with a run read as one, and what a
        per-query metric's judgments are read from)."""
        if self._part_of is not None:
            whole, rows = self._part_of
            return whole.frame[rows]
        return self.qrels.frame.select("query", "docno", "label")

    @cached_property
    def qrels(self) -> Any:
        """The qrels indexed (of an index of some of their queries, :func:`sub_index`: those rows)."""
        assert self._part_of is not None  # set by _build otherwise
        whole, rows = self._part_of
        return Qrels(whole.qrels.frame[rows], whole.qrels.source)

    def rows_of_whole(self, rows: np.ndarray) -> tuple[QrelsIndex, np.ndarray]:
        """The index of the whole qrels, and those of its rows that are ``rows`` of this one (of an
        index of some of their queries, :func:`sub_index`; this index and ``rows`` otherwise): where a
        row's docno is read without gathering this index's own frame."""
        index = self
        while index._part_of is not None:
            index, taken = index._part_of
            rows = taken[rows]
        return index, rows

    @cached_property
    def query_codes(self) -> pl.DataFrame:
        """Each query id with its code: what a run's query ids are joined with."""
        return _query_codes(self.query_ids)

    @cached_property
    def _hashed(self) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
        return _hashed_keys(pair_keys(self.frame))

    # The (query, docno) pairs hashed, for a run read as a frame: built on first use (a run of dicts
    # looks its judged documents up in its own dicts, and never needs them).
    @property
    def keys_unique(self) -> bool:
        """Whether the pairs' 64-bit keys (:func:`~irspec.data.pair_keys`) are distinct."""
        return self._hashed[0]

    @property
    def key_order(self) -> np.ndarray:
        """The qrels rows in the order of their keys."""
        return self._hashed[1]

    @property
    def sorted_keys(self) -> np.ndarray:
        """The keys, sorted."""
        return self._hashed[2]

    @property
    def key_filter(self) -> np.ndarray:
        """Whether any key has these top bits (:func:`_filter_bits` of them: :attr:`filter_shift`)."""
        return self._hashed[3]

    @property
    def filter_shift(self) -> np.uint64:
        """How far a key is shifted right for its slot in :attr:`key_filter`."""
        return np.uint64(64 - (self.key_filter.size.bit_length() - 1))

    @cached_property
    def plain_keys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The judgments as a run read by numpy (:class:`~irspec.data.plain.PlainRun`) is joined with
        them: each row's docno as zero-padded bytes, the rows in order of their (query code, docno) keys
        (:func:`~irspec.data.keys.pair_keys`), the keys sorted, and a filter on their top bits (as
        :attr:`key_filter`); ``None`` when a docno is not ASCII (no such run's docno equals it) or two
        keys are alike (the run's frame is joined then). Built on first use."""
        docnos = self._docnos if self._docnos is not None else self.frame.get_column("docno").to_list()
        # qrels read by numpy keep their docnos' bytes (irspec.data.plain): not encoded again
        texts = getattr(docnos, "texts", None)
        if texts is None:
            try:
                texts = np.array(docnos, dtype="S")
            except UnicodeEncodeError:
                return None
        width = -(-max(texts.dtype.itemsize, 1) // 8) * 8
        texts = texts.astype(f"S{width}")
        keys = plain_pair_keys(text_hash(texts), self.row_query)
        unique, order, sorted_keys, key_filter = _hashed_keys(keys)
        if not unique:
            return None
        return texts, order, sorted_keys, key_filter

    def integer_keys(self) -> IntegerKeys | None:
        """The judgments whose docno is an integer's decimal text, keyed by number (built on first use,
        for a top k of integer ids); ``None`` when the numbers are too large to key by."""
        if self._numbers is False:
            self._numbers = IntegerKeys.of(self)
        return self._numbers  # type: ignore[return-value]

    def judged_docnos(self) -> tuple[list[list[str]], np.ndarray]:
        """Each query's judged docnos (a list per query code) and their labels, query after query in
        that order (query code ``c``'s at ``offsets[c]:offsets[c + 1]``): a run given as dicts looks
        them up in its own (built on first use)."""
        if self._judged is None:
            labels, q = self.row_label, self.row_query
            if self._docnos is not None:  # qrels read without polars: sorted by query
                docnos = self._docnos
            else:
                column = self.frame.get_column("docno")
                if len(q) > 1 and bool((q[1:] < q[:-1]).any()):  # not in query order (the reader's)
                    order = np.argsort(q, kind="stable")
                    column, labels = column.gather(order), labels[order]
                docnos = column.to_list()
            lists = [docnos[a:b] for a, b in pairwise(self.offsets.tolist())]
            self._judged = (lists, labels)
        return self._judged

    @cached_property
    def _judged_by_id(self) -> dict[str, list[str]]:
        lists = self.judged_docnos()[0]
        return dict(zip(self.query_ids, lists, strict=True))

    def judged_by_query(self) -> dict[str, list[str]]:
        """:meth:`judged_docnos` by query id (the lists themselves)."""
        return self._judged_by_id

    def counts(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(R, N) per query: relevant (label >= level) and judged non-relevant (0 <= label < level)."""
        if level not in self._by_level:
            n = len(self.query_ids)
            rel = np.bincount(self.query_of[self.labels >= level], minlength=n)
            nonrel = np.bincount(self.query_of[(self.labels >= 0) & (self.labels < level)], minlength=n)
            self._by_level[level] = (rel.astype(np.int64), nonrel.astype(np.int64))
        return self._by_level[level]


class IntegerKeys:
    """The judgments whose docno is a non-negative integer's decimal text as written by ``str(int)``
    (no sign, no leading zero: ``"007"`` is not 7, since an integer id is read as its decimal text),
    keyed exactly by ``query code × bound + number``: a top k of integer ids is joined with the qrels by
    the numbers, never turning them into text."""

    def __init__(self, bound: int, keys: np.ndarray, labels: np.ndarray) -> None:
        self.bound = bound
        """One more than the largest number judged: a larger id is judged nowhere."""
        self.keys = keys
        """The sorted keys (int64)."""
        self.labels = labels
        """Each key's label."""
        self.filter = np.zeros(1 << FILTER_BITS, dtype=bool)
        self.filter[_slot(keys)] = True

    @classmethod
    def of(cls, index: QrelsIndex) -> IntegerKeys | None:
        docno = index.frame.get_column("docno")
        # at most 18 digits: below 2**63, so the cast cannot overflow
        decimal = docno.str.contains(r"^(?:0|[1-9][0-9]{0,17})$").fill_null(False).to_numpy()
        rows = np.flatnonzero(decimal)
        numbers = docno.filter(pl.Series(decimal)).cast(pl.Int64).to_numpy()
        bound = int(numbers.max()) + 1 if len(numbers) else 1
        if len(index.query_ids) * bound >= 2**62:
            return None  # no exact key fits in 64 bits: the ids' text is joined instead
        keys = index.row_query[rows] * bound + numbers
        order = np.argsort(keys)
        return cls(bound, keys[order], index.row_label[rows][order])

    def lookup(self, qcodes: np.ndarray, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The judged ones of (query code, integer id) pairs: their positions and labels. ``numbers``
        below 0 (no document) or above 2**63 are judged nowhere."""
        inside = (numbers >= 0) & (numbers < self.bound)
        # beyond the bound a key may wrap or meet another query's: ``inside`` rules those out
        with np.errstate(over="ignore"):
            keys = qcodes * self.bound + numbers.astype(np.int64, copy=False)
        # Most ids are judged nowhere: a 4 MiB table tells most of them so before the search.
        maybe = np.flatnonzero(self.filter[_slot(keys)] & inside)
        wanted = keys[maybe]
        if not len(self.keys):
            return maybe[:0], np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        found = self.keys[at] == wanted
        return maybe[found], self.labels[at[found]]


def _hashed_keys(
    keys: np.ndarray, unique: bool | None = None
) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
    """What :class:`QrelsIndex` keeps of the pairs' keys: whether they are distinct (``unique`` when
    known), the rows in key order, the keys sorted, the filter on their top bits (:func:`_filter_bits`)."""
    # The keys sorted, with the row each came from: a run row's judgment is found by binary search.
    key_order = np.argsort(keys)
    sorted_keys = keys[key_order]
    # Distinct (query, docno) pairs (the reader rejects duplicates) must have distinct keys for the
    # hashed join to be exact; when two collide, evaluation falls back to a join on the strings.
    if unique is None:
        unique = not bool((sorted_keys[1:] == sorted_keys[:-1]).any())
    # A one-byte-a-slot filter on the keys' top bits: most run rows are unjudged, and a lookup in a
    # table of 16-32 slots a key tells most of them so before the search (which then sees a few percent
    # of the rows).
    bits = _filter_bits(len(keys))
    key_filter = np.zeros(1 << bits, dtype=bool)
    key_filter[keys >> np.uint64(64 - bits)] = True
    return unique, key_order, sorted_keys, key_filter


def _sorted_codes(query: pl.Series) -> tuple[list[str], np.ndarray] | None:
    """The query ids and each row's query code, when the rows come in order of query id (each
    query's rows one run of rows, the runs ascending: the reader sorts qrels so); ``None`` otherwise."""
    values, lengths = value_runs(query)
    ids = values.to_list()
    if any(a >= b for a, b in pairwise(ids)):
        return None
    return ids, np.repeat(np.arange(len(ids), dtype=np.int64), lengths)


def _ideal_order(q: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The rows by query code, then label descending (ties in row order): ``lexsort((-labels, q))``,
    as one stable sort of a combined key when the codes and labels are few enough for one to fit."""
    if len(labels):
        low, high = int(labels.min()), int(labels.max())
        span = high - low + 1
        if (int(q.max()) + 1) * span < 2**62:
            return np.argsort(q * span + (high - labels), kind="stable")
    return np.lexsort((-labels, q))


def _slot(keys: np.ndarray) -> np.ndarray:
    """A key's slot in a filter of ``FILTER_BITS`` bits: its top bits after a multiplicative mix."""
    with np.errstate(over="ignore"):
        return (keys.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - FILTER_BITS)


_INDEX_CACHE: dict[int, QrelsIndex] = {}


def index_qrels(qrels: Any) -> QrelsIndex:
    """Index ``qrels`` (a :class:`~irspec.data.Qrels`), reusing the index for the same object."""
    key = id(qrels)
    idx = _INDEX_CACHE.get(key)
    if idx is None or idx.qrels is not qrels:
        idx = QrelsIndex(qrels)
        _INDEX_CACHE.clear()  # keep one: holding every qrels ever seen would leak memory
        _INDEX_CACHE[key] = idx
    return idx


def sub_index(index: QrelsIndex, query_ids: Sequence[str]) -> QrelsIndex:
    """The index of the judgments of ``query_ids`` only (each a query of ``index``): what
    ``QrelsIndex(Qrels(<those rows>))`` would be, made from ``index``'s keys and codes rather than by
    hashing and joining the rows again (once per block of a streamed run). Its key filter is its own,
    of fewer slots (:func:`_filter_bits`): as selective as the whole one, and small enough to stay in
    the caches while a block's rows are looked up in it."""
    codes = np.array(sorted(index.position[q] for q in query_ids), dtype=np.int64)
    rows = segment_rows(index.offsets[codes], index.offsets[codes + 1] - index.offsets[codes])
    if index._docnos is not None and "_hashed" not in index.__dict__:
        # qrels read without polars, and never hashed: the subset's columns, made without polars too
        return QrelsIndex(index.qrels.subset(rows))
    if index._rank_of_row is None:
        # made whole before it is kept: an index is shared between threads (an Evaluator's), and another
        # must never see the array before it is filled
        rank = np.empty(len(index.key_order), dtype=np.int64)
        rank[index.key_order] = np.arange(len(index.key_order), dtype=np.int64)
        index._rank_of_row = rank
    keys = index.sorted_keys[index._rank_of_row[rows]]
    query_ids = [index.query_ids[c] for c in codes.tolist()]  # sorted, as the codes are
    sub = QrelsIndex.__new__(QrelsIndex)
    # its qrels and frame (the whole ones' rows) gathered only if asked for: a streamed run's blocks
    # read their docnos from the whole frame (rows_of_whole)
    sub._build(None, None, query_ids, np.searchsorted(codes, index.row_query[rows]), index.row_label[rows])
    sub._part_of = (index, rows)
    # Distinct keys stay distinct in a subset; keys not proven distinct are tried again on their own.
    sub.__dict__["_hashed"] = _hashed_keys(keys, True if index.keys_unique else None)
    return sub


def _filter_bits(n: int) -> int:
    """Bits of a filter of ``n`` keys with 16-32 slots a key (4 Mi slots for qrels of some 250,000
    judgments: a few percent of unjudged rows pass), at most :data:`FILTER_BITS`: for a streamed block's
    ~12,000 keys 256 KiB, which a block's 240,000 lookups find in the caches (0.8 ms rather than 1.3 ms a
    block, with fewer rows passing); for small qrels (2,500 judgments) 64 KiB rather than 4 MiB."""
    return min(max(n, 1).bit_length() + 4, FILTER_BITS)


def _query_codes(query_ids: list[str]) -> pl.DataFrame:
    """Each query id with its code (its place in the sorted ids). Typed, so that an empty qrels (a
    null-typed column otherwise) still joins with a run; a range, not a numpy array: polars imports
    ``numpy.ma`` (10-15 ms) for the first numpy column it is given."""
    return pl.DataFrame(
        {"query": query_ids, "qcode": range(len(query_ids))}, schema={"query": pl.String, "qcode": pl.Int64}
    )
