"""A recommender's lists put into an evaluation :class:`~irspec.evaluation.context.Context` straight
from the arrays: the held-out CSR matrix and the users × k top-k array, with no qrels or run frame made
and no join.

Each list's length is found by :func:`scan_lists` (with the top k's bounds, in one pass), and each
held-out item's place in its user's list by :func:`look_up` (a chunk of users' lists written into a
dense buffer at their items, which also shows an item given twice), on one thread or a few at once, a
block of users each; each user's number of relevant items comes from the row's stored labels, and the
ranking is the list's own order. The context keeps the labels of the items found, and makes the array of
every list entry's label, and the users' ids as text, only when they are read. The context
is the one the engine builds from the same data as qrels and a run
(:meth:`irspec.Evaluator.evaluate_topk`), so that every kernel computes what it computes there;
:mod:`irspec.recsys.matrices` falls back to that path where this one would have to say what the
engine's warnings say (a user whose list is empty).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any, NamedTuple, TypeVar, overload

import numpy as np
import scipy.sparse

from irspec.errors import InputError
from irspec.evaluation.context import UNJUDGED, Context, Options, segment_counts, segment_rows
from irspec.lazy import lazy_module

pl = lazy_module("polars")

__all__ = [
    "BUFFER_ENTRIES",
    "LIST_ROWS",
    "WORKERS",
    "DecimalIds",
    "ListScan",
    "MatrixQrels",
    "check_distinct",
    "decimal_texts",
    "list_lengths",
    "look_up",
    "matrix_context",
    "scan_lists",
    "stored_at",
    "text_order",
    "workers",
]

T = TypeVar("T")

BUFFER_ENTRIES = 1 << 22
"""Entries of the dense buffer :func:`stored_at` and :func:`look_up` spread a chunk of users' rows into
(rows × items): small enough to stay in the processor's last-level cache, large enough that a chunk is
hundreds of users (each chunk costs a dozen numpy calls) and that numpy asks the kernel for huge pages
for it (from 4 MiB: 16-bit places take 8 MiB). Against 2M entries, 100,000 users' top 100 took 0.5-4 ms
less where the process had memory to reuse, and 8 ms less in a fresh process that read its data from a
file (5,600 pages of fresh memory touched where 10,000; benchmarks/README.md)."""

LIST_ROWS = 1 << 13
"""Rows of the top-k array :func:`scan_lists` reads at a time (its masks stay in the cache)."""

WORKERS: int | None = 1
"""Threads that :func:`list_lengths` and :func:`look_up` work on, each a block of users (numpy's
gathers, scatters and comparisons release the GIL, so that blocks can run on cores of their own):
``1``, the default, the calling thread alone; ``None`` as many as the cores this process may run on, at
most 4; or a number. One by default because on a machine whose cores are busy the threads only take
turns (a 2-core machine shared with other jobs: 100,000 users' top 100 in 1.25x the time of one thread,
benchmarks/README.md); give more where cores are idle. The values do not depend on it: a user's are
found from its own row and list only."""


def workers() -> int:
    """The number of threads :data:`WORKERS` asks for."""
    if WORKERS is not None:
        return max(1, int(WORKERS))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def _blocks(n: int, step: int) -> list[tuple[int, int]]:
    """0..n in one block per worker (fewer when there are fewer chunks), each a whole number of chunks
    of ``step`` rows, so that a chunk's buffer rows are its users' positions in it whatever the block."""
    chunks = -(-n // step)
    per = max(1, -(-chunks // workers())) * step
    return [(start, min(n, start + per)) for start in range(0, n, per)]


def _in_blocks(work: Callable[[int, int], T], blocks: list[tuple[int, int]]) -> list[T]:
    """``work(start, stop)`` of every block, in the blocks' order; on threads when there are several."""
    if len(blocks) <= 1:
        return [work(start, stop) for start, stop in blocks]
    with ThreadPoolExecutor(len(blocks) - 1) as pool:
        rest = [pool.submit(work, start, stop) for start, stop in blocks[1:]]
        first = work(*blocks[0])  # the calling thread takes a block too, rather than waiting idle
        return [first] + [done.result() for done in rest]


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
        got = buffer.take(at)
        buffer[here] = 0
        hit = np.flatnonzero(got != 0)  # a boolean's nonzero is several times faster than a uint16's
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


class ListScan(NamedTuple):
    """What :func:`scan_lists` finds in a top-k array."""

    lengths: np.ndarray | None
    """Each row's number of items (64-bit), or ``None`` for a hole (see :func:`list_lengths`)."""
    smallest: int
    """The smallest entry (0 when there is none)."""
    largest: int
    """The largest entry (-1 when there is none)."""


def scan_lists(items: np.ndarray) -> ListScan:
    """Each row's number of items, its ``-1`` (none) padding after them (:func:`list_lengths`), and the
    array's smallest and largest entries (the caller's check that every entry is an item or ``-1``), in
    one pass over the lists, :data:`LIST_ROWS` rows at a time. A block with an entry below 0 is counted
    in its rows that end with one alone (a model's lists are mostly full: their masks and sums are not
    made); that they hold all of the block's entries below 0 shows that no other row has a hole."""
    n, k = items.shape
    if not items.size:
        return ListScan(np.full(n, k, dtype=np.int64), 0, -1)
    lengths = np.full(n, k, dtype=np.int64)
    total = np.int16 if k < 1 << 15 else np.int64

    def count(start: int, stop: int) -> tuple[bool, int, int]:
        smallest, largest = [], []  # each block's
        for s in range(start, stop, LIST_ROWS):
            block = items[s : min(stop, s + LIST_ROWS)]
            smallest.append(int(block.min()))
            largest.append(int(block.max()))
            if smallest[-1] >= 0:
                continue
            none = block < 0
            short = np.flatnonzero(none[:, -1])
            padding = none[short]
            if (padding[:, :-1] > padding[:, 1:]).any():  # a -1 followed by an item
                return False, 0, 0
            # summed as bytes into 16 bits: twice as fast as count_nonzero along the rows
            nones = padding.view(np.int8).sum(axis=1, dtype=total)
            if int(nones.sum()) != np.count_nonzero(none):  # a -1 in a row that ends with an item
                return False, 0, 0
            lengths[s + short] = k - nones
        return True, min(smallest), max(largest)

    found = _in_blocks(count, _blocks(n, LIST_ROWS))
    if not all(whole for whole, _, _ in found):  # a hole stopped the count: the bounds read whole
        return ListScan(None, int(items.min()), int(items.max()))
    return ListScan(lengths, min(f[1] for f in found), max(f[2] for f in found))


def list_lengths(items: np.ndarray) -> np.ndarray | None:
    """Each row's number of items, its ``-1`` (none) padding after them; ``None`` when a row has a ``-1``
    before an item (a hole: the row's places are then not its ranks)."""
    return scan_lists(items).lengths


def look_up(
    test: scipy.sparse.csr_array, items: np.ndarray, lengths: np.ndarray, users: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which of ``test``'s stored entries are in their row's list of ``items`` (C-ordered, a row per row
    of ``test``, ``lengths[r]`` items first and ``-1`` after them), and where: ``(entries, places,
    rows)``, the entries ascending, each one's place in its list (0 the first) and its row. ``test`` has
    each entry once. Raises :class:`~irspec.errors.InputError` for an item twice in the list of one of
    ``users`` (rows, ascending), naming the first such user and its smallest repeated item.

    A chunk of users' lists is written into a dense buffer (a row per user, a column per item and one
    more, where a row's ``-1`` entries go), each entry its place, and read back: every entry reads its
    own place exactly when no other entry of its row has its item, so that the entries that read
    another's are the repeated items and all but one of each row's ``-1`` entries. The chunk's held-out
    items are then read in the same buffer: what they read is their place in the list when the chunk
    wrote it. The buffer is not cleared between chunks: each chunk writes its places shifted by k times
    its number in a cycle of chunks, so that what an earlier chunk wrote reads as no place, and it is
    cleared once a cycle. Each list entry is written once and read once: no sort of each list to check
    it, and no look-up of each list entry in the held-out rows."""
    n, k = items.shape
    width = test.shape[1] + 1
    step = max(1, BUFFER_ENTRIES // width)
    # the smallest type in which a cycle is at least 64 chunks (a clear of the buffer every 64 or more)
    kind = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if np.iinfo(t).max // k >= 64)
    cycle = int(np.iinfo(kind).max) // k
    indptr, indices = test.indptr, test.indices
    read = np.empty(test.nnz, dtype=kind)  # each held-out entry's place (k or more: none)
    # the -1 entries of a row all write one spot: all but one of them read another's place
    others = np.maximum(k - lengths - 1, 0)
    spot = np.int32 if step * width < 1 << 31 else np.int64
    lists = items.reshape(-1)

    def chunks(start: int, stop: int) -> tuple[list[int], np.ndarray, np.ndarray]:
        buffer = np.zeros(step * width, dtype=kind)
        places = np.tile(np.arange(1, k + 1, dtype=kind), step)
        own = np.empty(step * k, dtype=kind)
        # each list entry's row's first spot: 64-bit, which numpy's put and take read without a
        # conversion; flat, as the lists are read, so that one addition of two arrays makes the spots
        row_start = np.repeat(np.arange(0, step * width, width, dtype=np.int64), k)
        spots, differ = np.empty(step * k, dtype=np.int64), np.empty(step * k, dtype=bool)
        first, last = int(indptr[start]), int(indptr[stop])
        rows = np.arange(stop - start, dtype=spot) % step  # each user's row in its chunk's buffer
        held = np.repeat(rows * width, np.diff(indptr[start : stop + 1]))
        held += indices[first:last]
        expected = np.add.reduceat(others[start:stop], np.arange(0, stop - start, step)).tolist()
        bounds = [*indptr[start : stop + 1 : step].tolist(), last]  # each chunk's entries
        repeated = []
        for c, s in enumerate(range(start, stop, step)):
            size = (min(stop, s + step) - s) * k
            # whole arrays for a whole chunk: a slice of each is a view made for nothing
            whole = size == step * k
            mine = own if whole else own[:size]
            shift = (c % cycle) * k
            if c and not shift:
                buffer.fill(0)  # a new cycle: the last one's places would read as this one's
            np.add(places if whole else places[:size], shift, out=mine)
            # a -1 goes to its row's previous row's extra column, never an item's (in the first row,
            # index -1: the last row's extra column)
            at = np.add(
                lists[s * k : s * k + size], row_start if whole else row_start[:size], out=spots[:size]
            )
            buffer[at] = mine
            if np.count_nonzero(np.not_equal(buffer.take(at), mine, out=differ[:size])) != expected[c]:
                repeated.append(s)
            a, b = bounds[c], bounds[c + 1]
            # mode="wrap": no index is out of range, and "raise" would copy into a buffer first; the
            # method, not np.take, whose Python wrapper costs a millisecond over a thousand chunks
            found = buffer.take(held[a - first : b - first], out=read[a:b], mode="wrap")
            # unsigned: a place of this chunk becomes 0 to k - 1, anything else k or more
            np.subtract(found, shift + 1, out=found)
        # the entries found, and each one's row: its chunk's first, and its row in the chunk's buffer
        hit = np.flatnonzero(read[first:last] < k)
        chunk = np.searchsorted(np.array(bounds[:-1], dtype=np.int64), hit + first, side="right") - 1
        return repeated, hit + first, start + chunk * step + held[hit] // width

    done = _in_blocks(chunks, _blocks(n, step))
    for s in sorted(s for repeated, _, _ in done for s in repeated):
        chosen = users[np.searchsorted(users, s) : np.searchsorted(users, s + step)]
        check_distinct(items[chosen], chosen)  # the chunk's evaluated users: raises for the first
    entries = np.concatenate([found for _, found, _ in done]) if done else np.zeros(0, dtype=np.int64)
    rows = np.concatenate([row for _, _, row in done]) if done else np.zeros(0, dtype=np.int64)
    return entries, read[entries].astype(np.int64), rows.astype(np.int64, copy=False)


def decimal_texts(numbers: np.ndarray) -> list[str]:
    """The decimal text of each non-negative integer (``str`` of each, in order), made with numpy: the
    digits written into one block of text, a space in place of each leading zero and after each
    number, which one ``split`` cuts into the strings (100,000 users' ids in 0.6x the time of ``str``
    called on each)."""
    numbers = np.asarray(numbers)
    if not len(numbers):
        return []
    width = len(str(int(numbers.max())))
    rest = numbers.astype(np.int32 if width < 10 else np.int64)  # 32-bit division is the faster
    text = np.full((len(numbers), width + 1), ord(" "), dtype=np.uint8)
    for j in range(width - 1, -1, -1):
        digit = rest % 10
        rest //= 10
        # a digit where the number has one (the last place always: 0 is "0"), else a space
        text[:, j] = np.where((digit > 0) | (rest > 0) | (j == width - 1), ord("0") + digit, ord(" "))
    return text.tobytes().decode("ascii").split()


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


class DecimalIds(Sequence[str]):
    """The decimal text of each of ``numbers`` (non-negative integers), as a sequence: made by
    :func:`decimal_texts` when an id is first read, all at once; its length is known before. A
    recommender's users are the context's queries by these ids, which an evaluation that only
    aggregates its values never reads (100,000 of them: some 5 ms)."""

    def __init__(self, numbers: np.ndarray) -> None:
        self._numbers = numbers

    @cached_property
    def _texts(self) -> list[str]:
        return decimal_texts(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self._texts[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)


class MatrixQrels:
    """The held-out matrix's rows of the evaluated users as the engine's indexed qrels
    (:class:`~irspec.evaluation.context.IndexedQrels`): the ``n``-th evaluated user at position ``n``,
    its labels in its segment sorted descending; the frame of (query, docno, label) rows made only for
    a metric computed query by query."""

    def __init__(self, test: scipy.sparse.csr_array, users: np.ndarray, ids: Sequence[str]) -> None:
        self._test = test
        self.users = users
        self.query_ids = ids
        lengths = np.diff(test.indptr)[users]
        self.offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        # the users left out have no stored entry (as usual: nothing held out): the users' segments are
        # the matrix's entries in order, with no gather of them
        whole = self.offsets[-1] == test.nnz
        self._entries = None if whole else segment_rows(test.indptr[users], lengths)
        self._lengths = lengths
        self._by_level: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @cached_property
    def query_of(self) -> np.ndarray:
        """Each stored label's user (its position)."""
        return np.repeat(np.arange(len(self.users), dtype=np.int64), self._lengths)

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
                pl.Series("query", list(self.query_ids), dtype=pl.String).gather(self.query_of),
                pl.Series("docno", self._test.indices[entries]).cast(pl.String),
                pl.Series("label", self._stored, dtype=pl.Int64),
            ]
        )

    def counts(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(R, N) per user: relevant (label >= level) and judged non-relevant (0 <= label < level)."""
        if level not in self._by_level:
            stored = self._stored
            if not len(stored) or stored.min() >= level:  # every label relevant (implicit feedback)
                rel, nonrel = np.diff(self.offsets), np.zeros(len(self.users), dtype=np.int64)
            else:
                rel = segment_counts(stored >= level, self.offsets)
                nonrel = segment_counts((stored >= 0) & (stored < level), self.offsets)
            self._by_level[level] = (rel, nonrel)
        return self._by_level[level]


class _ListFrame:
    """The ranked rows as the engine's ranked frame has them (query, docno, score), made when a column
    is first asked for (the propensity kernels read the items of a few rows; a per-query metric all)."""

    def __init__(
        self, lists: np.ndarray, rows: np.ndarray | None, lengths: np.ndarray, ids: Sequence[str], width: int
    ) -> None:
        self._lists, self._rows, self._lengths, self._ids, self._width = lists, rows, lengths, ids, width

    @property
    def height(self) -> int:
        return int(self._lengths.sum())

    @cached_property
    def _items(self) -> np.ndarray:
        """Every list's items, one list after another (the lists' -1 padding left out)."""
        lists = self._lists if self._rows is None else self._lists[self._rows]
        if self._lengths.sum() == lists.size:
            return lists.reshape(-1)
        return lists[np.arange(lists.shape[1]) < self._lengths[:, None]]

    def get_column(self, name: str) -> Any:
        if name == "docno":
            return pl.Series("docno", self._items).cast(pl.String)
        if name == "query":
            seg = np.repeat(np.arange(len(self._lengths)), self._lengths)
            return pl.Series("query", list(self._ids), dtype=pl.String).gather(seg)
        if name == "score":
            # the engine's scores of a list: k, k - 1, ... by the place in the list given (width k)
            return pl.Series("score", self._scores, dtype=pl.Float64)
        raise KeyError(name)

    @cached_property
    def _scores(self) -> np.ndarray:
        starts = np.concatenate(([0], np.cumsum(self._lengths)))[:-1]
        place = np.arange(self.height) - np.repeat(starts, self._lengths)
        return (self._width - place).astype(np.float64)


class _MatrixContext(Context):
    """The context of :func:`matrix_context`, which knows its few labelled rows (the held-out items
    found in the lists) with each one's user, rank and label: the relevant and judged rows, their
    users, ranks and labels are taken from those, not found by comparing every row's label (ten million
    of them for a hundred thousand users' top 100) and searching the rows' segments. The same arrays,
    of the same types: every other row's label is :data:`~irspec.evaluation.context.UNJUDGED`, below
    any level (a level is never negative: :class:`~irspec.evaluation.context.Options` refuses it); the
    array of every row's label is made when first read, which the kernels of the usual metrics never do."""

    _label: np.ndarray | None

    def __init__(
        self,
        *args: Any,
        labelled: np.ndarray,
        users: np.ndarray,
        ranks: np.ndarray,
        labels: np.ndarray,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        # the labelled rows ascending, and each one's user (the context's query index, ascending too),
        # rank (int32, as Context.rank_of gives it) and label
        self._labelled, self._users, self._ranks, self._labels = labelled, users, ranks, labels

    @property  # a Context's attribute, made when first read
    def label(self) -> np.ndarray:
        """Every row's label (see :class:`~irspec.evaluation.context.Context`)."""
        if self._label is None:
            label = np.full(int(self.offsets[-1]), UNJUDGED, dtype=np.int64)
            label[self._labelled] = self._labels
            self._label = label
        return self._label

    @label.setter
    def label(self, label: np.ndarray | None) -> None:
        # Context.__init__ assigns the value matrix_context gives: None, made when read
        self._label = label

    def _at_least(self, level: int) -> tuple[np.ndarray, ...]:
        """The labelled rows with a label >= ``level``, and their users, ranks and labels."""
        key = ("at-least", level)
        if key not in self._cache:
            every = (self._labelled, self._users, self._ranks, self._labels)
            chosen = self._labels >= level
            # every label at the level (implicit feedback): the arrays as they are, not copied
            self._cache[key] = every if chosen.all() else tuple(a[chosen] for a in every)
        return self._cache[key]

    def _mask(self, rows: np.ndarray) -> np.ndarray:
        mask = np.zeros(int(self.offsets[-1]), dtype=bool)
        mask[rows] = True
        return mask

    def relevant(self, level: int) -> np.ndarray:
        key = ("rel", level)
        if key not in self._cache:
            self._cache[key] = self._mask(self._at_least(level)[0])
        return self._cache[key]

    def judged(self) -> np.ndarray:
        if "judged" not in self._cache:
            self._cache["judged"] = self._mask(self._at_least(0)[0])
        return self._cache["judged"]

    def count_judged(self, k: np.ndarray | None = None) -> np.ndarray:
        # Judged@10, which every result carries: the judged rows' users and ranks are known
        _, users, ranks, _ = self._at_least(0)
        seg = users.astype(np.int32)
        if k is not None:
            seg = seg[ranks <= k[seg]]
        return np.bincount(seg, minlength=self.nq).astype(np.int64)

    def relevant_rows(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        key = ("relevant-rows", level)
        if key not in self._cache:
            rows, users, _, _ = self._at_least(level)
            # each row's place among its user's relevant rows: its index less its user's first one's
            first = np.ones(len(users), dtype=bool)
            np.not_equal(users[1:], users[:-1], out=first[1:])
            starts = np.flatnonzero(first)
            nth = np.arange(1, len(rows) + 1) - starts[np.cumsum(first) - 1]
            self._cache[key] = (rows, nth)
        return self._cache[key]

    def relevant_places(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        key = ("relevant-places", level)
        if key not in self._cache:
            _, users, ranks, _ = self._at_least(level)
            self._cache[key] = (users.astype(np.int32), ranks)
        return self._cache[key]

    def relevant_labels(self, level: int) -> np.ndarray:
        return self._at_least(level)[3]

    def ideal_labels(self) -> tuple[np.ndarray, np.ndarray]:
        # the qrels hold the evaluated users' labels alone, in the context's order (qpos 0, 1, ...): the
        # gather of every user's segment would copy them as they are
        return self.qrels.labels, self.qrels.offsets


def matrix_context(
    test: scipy.sparse.csr_array,
    items: np.ndarray,
    lengths: np.ndarray,
    users: np.ndarray,
    options: Options,
    inputs: dict[str, Any],
) -> Context:
    """The context of the evaluated ``users``' lists (rows of ``test``, ascending): ``items``, the top-k
    array of every row of ``test`` (C-ordered; each row's ``lengths`` items first, ``-1`` only after
    them, at least one item in each evaluated row), against ``test``'s rows of those users; in the
    users' order (as row numbers), labels found by :func:`look_up`, which refuses an item given twice."""
    entries, places, row = look_up(test, items, lengths, users)  # row: each found entry's user
    every = len(users) == items.shape[0]
    if not every:
        position = np.full(items.shape[0], -1, dtype=np.int64)
        position[users] = np.arange(len(users))
        row = position[row]
        evaluated = row >= 0
        row, entries, places = row[evaluated], entries[evaluated], places[evaluated]
        lengths = lengths[users]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    found = offsets[row] + places  # a list's items come first: its place is its rank - 1
    # the entries are by user, then by item: sorted by row, the users stay as they are
    order = np.argsort(found)
    ids = DecimalIds(users)
    qrels = MatrixQrels(test, users, ids)
    frame = _ListFrame(items, None if every else users, lengths, ids, items.shape[1])
    return _MatrixContext(
        ids,
        offsets,
        None,  # every row's label: made when first read (_MatrixContext.label)
        qrels,
        options,
        frame,
        inputs,
        qpos=np.arange(len(users)),
        labelled=found[order],
        users=row,
        ranks=(places[order] + 1).astype(np.int32),
        labels=test.data[entries[order]],
    )
