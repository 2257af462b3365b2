"""A recommender's lists put into an evaluation :class:`~irspec.evaluation.context.Context` straight
from the arrays: the held-out CSR matrix and the users × k top-k array, with no qrels or run frame made
and no join.

Each list entry's label is found by a look-up in its user's CSR row (:func:`stored_at`: a few users'
rows at a time spread into a dense buffer, then read at the list's items, all users of the chunk in
one numpy operation), each user's number of relevant items comes from the row's stored labels, and the
ranking is the list's own order. The context is the one the engine builds from the same data as qrels
and a run (:meth:`irspec.Evaluator.evaluate_topk`), so that every kernel computes what it computes
there; :mod:`irspec.recsys.matrices` falls back to that path where this one would have to say what
the engine's warnings say (a user whose list is empty).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse

from irspec.errors import InputError
from irspec.evaluation.context import UNJUDGED, Context, Options, segment_rows
from irspec.lazy import lazy_module

pl = lazy_module("polars")

__all__ = ["BUFFER_ENTRIES", "MatrixQrels", "check_distinct", "matrix_context", "stored_at", "text_order"]

BUFFER_ENTRIES = 1 << 21
"""Entries of the dense buffer :func:`stored_at` spreads a chunk of users' rows into (rows × items):
small enough to stay in the processor's cache, large enough that a chunk is many users."""


def stored_at(
    matrix: scipy.sparse.csr_array, items: np.ndarray, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Which entries of ``items`` (a 2-D array of column numbers, ``-1`` for none) ``matrix`` stores in
    their row: ``(flat, entry)``, the entries' flat positions in ``items`` (ascending) and the index of
    each in ``matrix.data`` / ``matrix.indices``. ``rows``: the row of ``matrix`` of each row of
    ``items`` (by default the same row). ``matrix`` has each entry once (its indices need not be sorted).

    A chunk of rows is spread into a dense buffer (a row per user, a column per item and one more, the
    column ``-1`` reads, never set), read at the items, and cleared again: no sorted search of every
    entry, no users × items copy beyond the buffer."""
    n, k = items.shape
    width = matrix.shape[1] + 1
    if rows is None:
        starts, lengths = matrix.indptr[:-1][:n], np.diff(matrix.indptr)[:n]
        entries = np.arange(int(matrix.indptr[n]) if n else 0, dtype=np.int64)
    else:
        starts, lengths = matrix.indptr[rows], matrix.indptr[rows + 1] - matrix.indptr[rows]
        entries = segment_rows(starts, lengths)
    if n == 0 or k == 0 or not len(entries):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    step = max(1, BUFFER_ENTRIES // width)
    bounds = np.concatenate(([0], np.cumsum(lengths)))  # each row's first place in `entries`
    firsts = bounds[:n:step]
    lasts = bounds[np.minimum(np.arange(step, n + step, step), n)]
    most = int((lasts - firsts).max())
    # the buffer holds 1 + an entry's place within its chunk: 16 bits when every chunk has fewer entries
    buffer = np.zeros(step * width, dtype=np.uint16 if most < 1 << 16 else np.int64)
    # each entry's place in the buffer (its row within its chunk, its column), and each list entry's
    # row start: flat 32-bit indices, which numpy's take reads several times faster than 2-D fancy indexing
    spot = (np.repeat(np.arange(n, dtype=np.int64) % step, lengths) * width + matrix.indices[entries]).astype(
        np.int32
    )
    row_start = (np.arange(step, dtype=np.int32) * width)[:, None]
    index = np.empty((step, k), dtype=np.int32)
    flat: list[np.ndarray] = []
    found: list[np.ndarray] = []
    for c, start in enumerate(range(0, n, step)):
        stop = min(n, start + step)
        first, last = int(firsts[c]), int(lasts[c])
        here = spot[first:last]
        buffer[here] = np.arange(1, last - first + 1)
        # a -1 reads the previous row's extra column, never set (in the chunk's first row, index -1:
        # the buffer's last entry, the last row's extra column)
        at = np.add(items[start:stop], row_start[: stop - start], out=index[: stop - start], casting="unsafe")
        got = np.take(buffer, at)
        buffer[here] = 0
        hit = np.flatnonzero(got)
        flat.append(hit + start * k)
        found.append(entries[first + got.ravel()[hit].astype(np.int64) - 1])
    return np.concatenate(flat), np.concatenate(found)


def check_distinct(items: np.ndarray, users: np.ndarray) -> None:
    """No item twice in a row of ``items`` (``-1``, none, may repeat): each row sorted (in 32 bits,
    twice as fast), equal neighbours compared. ``users``: each row's user, for the message."""
    if items.shape[1] < 2 or not len(items):
        return
    ordered = items.astype(np.int32) if items.dtype.itemsize > 4 else items.copy()
    ordered.sort(axis=1)  # in place: np.sort would copy the copy
    same = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    bad = np.flatnonzero(same.any(axis=1))
    if len(bad):
        row = int(bad[0])
        item = int(ordered[row, 1:][same[row]][0])
        raise InputError(f"user {int(users[row])}: item {item} is given twice in its list", "<top_items>")


def text_order(numbers: np.ndarray) -> np.ndarray:
    """The order of non-negative integers by their decimal text (``"10"`` before ``"9"``), as the ids
    of a result are sorted, found with integers: each number's digits padded on the right to the
    longest one's length, a shorter text first among equal paddings ("1" before "10")."""
    numbers = np.asarray(numbers, dtype=np.int64)
    if not len(numbers):
        return np.zeros(0, dtype=np.int64)
    digits = np.ones(len(numbers), dtype=np.int64)
    bound = 10
    while bound <= numbers.max():
        digits += numbers >= bound
        bound *= 10
    longest = int(digits.max())
    padded = numbers * 10 ** (longest - digits)
    return np.lexsort((digits, padded))


class MatrixQrels:
    """The held-out matrix's rows of the evaluated users as the engine's indexed qrels
    (:class:`~irspec.evaluation.context.IndexedQrels`): the ``n``-th evaluated user at position ``n``,
    its labels in its segment sorted descending; the frame of (query, docno, label) rows made only for
    a metric computed query by query."""

    def __init__(self, test: scipy.sparse.csr_array, users: np.ndarray, ids: list[str]) -> None:
        self._test = test
        self.users = users
        self.query_ids = ids
        every = len(users) == test.shape[0]
        lengths = np.diff(test.indptr)[users]
        self.offsets = test.indptr.astype(np.int64) if every else np.concatenate(([0], np.cumsum(lengths)))
        self._entries = None if every else segment_rows(test.indptr[users], lengths)
        self.query_of = np.repeat(np.arange(len(users), dtype=np.int64), lengths)
        self._by_level: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @cached_property
    def position(self) -> dict[str, int]:
        """Each evaluated user's position, by id."""
        return {q: i for i, q in enumerate(self.query_ids)}

    @cached_property
    def _stored(self) -> np.ndarray:
        data = self._test.data
        return data if self._entries is None else data[self._entries]

    @cached_property
    def labels(self) -> np.ndarray:
        """Every user's labels, its segment sorted descending."""
        stored = self._stored
        if not len(stored) or stored.min() == stored.max():  # implicit feedback: nothing to sort
            return stored.astype(np.int64, copy=False)
        return stored[np.lexsort((-stored, self.query_of))].astype(np.int64, copy=False)

    @cached_property
    def frame(self) -> Any:
        """The (query, docno, label) rows, for a metric computed query by query (its judgments)."""
        entries = np.arange(len(self.query_of)) if self._entries is None else self._entries
        return pl.DataFrame(
            [
                pl.Series("query", self.query_ids, dtype=pl.String).gather(self.query_of),
                pl.Series("docno", self._test.indices[entries]).cast(pl.String),
                pl.Series("label", self._stored, dtype=pl.Int64),
            ]
        )

    def counts(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(R, N) per user: relevant (label >= level) and judged non-relevant (0 <= label < level)."""
        if level not in self._by_level:
            n, stored = len(self.users), self._stored
            rel = np.bincount(self.query_of[stored >= level], minlength=n)
            nonrel = np.bincount(self.query_of[(stored >= 0) & (stored < level)], minlength=n)
            self._by_level[level] = (rel.astype(np.int64), nonrel.astype(np.int64))
        return self._by_level[level]


class _ListFrame:
    """The ranked rows as the engine's ranked frame has them (query, docno, score), made when a column
    is first asked for (the propensity kernels read the items of a few rows; a per-query metric all)."""

    def __init__(self, items: np.ndarray, lengths: np.ndarray, ids: list[str], width: int) -> None:
        self._items, self._lengths, self._ids, self._width = items, lengths, ids, width

    @property
    def height(self) -> int:
        return len(self._items)

    def get_column(self, name: str) -> Any:
        if name == "docno":
            return pl.Series("docno", self._items).cast(pl.String)
        if name == "query":
            seg = np.repeat(np.arange(len(self._lengths)), self._lengths)
            return pl.Series("query", self._ids, dtype=pl.String).gather(seg)
        if name == "score":
            # the engine's scores of a list: k, k - 1, ... by the place in the list given (width k)
            return pl.Series("score", self._scores, dtype=pl.Float64)
        raise KeyError(name)

    @cached_property
    def _scores(self) -> np.ndarray:
        starts = np.concatenate(([0], np.cumsum(self._lengths)))[:-1]
        place = np.arange(len(self._items)) - np.repeat(starts, self._lengths)
        return (self._width - place).astype(np.float64)


def matrix_context(
    test: scipy.sparse.csr_array,
    lists: np.ndarray,
    lengths: np.ndarray,
    users: np.ndarray,
    options: Options,
    inputs: dict[str, Any],
) -> Context:
    """The context of the evaluated ``users``' lists: ``lists``, their rows of the top-k array (each
    row's ``lengths`` items first, ``-1`` only after them, at least one item in each), against
    ``test``'s rows of those users; in the users' order (as row numbers), labels found by
    :func:`stored_at`."""
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    full = offsets[-1] == lists.size
    ranked = lists.ravel() if full else lists[np.arange(lists.shape[1]) < lengths[:, None]]
    label = np.full(len(ranked), UNJUDGED, dtype=np.int64)
    flat, entry = stored_at(test, lists, None if len(users) == test.shape[0] else users)
    row, place = np.divmod(flat, lists.shape[1])
    label[offsets[row] + place] = test.data[entry]  # a list's items come first: its place is its rank - 1
    ids = np.asarray(users).astype(str).tolist()
    qrels = MatrixQrels(test, users, ids)
    frame = _ListFrame(ranked, lengths, ids, lists.shape[1])
    return Context(ids, offsets, label, qrels, options, frame, inputs, qpos=np.arange(len(users)))
