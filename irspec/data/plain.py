"""Large run files of clean text read by numpy alone: no polars import, no frame.

A run of a few tens of megabytes (a million lines) read by the general reader costs polars' import
(~0.1 s of one core, before any line is read) and its parse. When the file is of the clean, common shape
that :mod:`irspec.data.small` reads (ASCII, fields split by single spaces or single tabs, every line a
data line of as many fields as the others, a run grouped by query), and its scores are plain decimals
(``-?[0-9]+(\\.[0-9]+)?``, at most 8 characters on most lines), numpy finds the lines and fields, and
reads the query ids, docnos and scores into arrays (:class:`PlainRun`): the docnos as zero-padded
bytes, compared as text where the engine needs them (a judged document's match, a tie), and the
scores as the general reader reads them, bit for bit (a decimal of at most 15 digits is an exact
integer divided by an exact power of ten, one correctly rounded division: the double nearest to it,
as every reader rounds). Anything else makes :func:`plain_run` return ``None``: a comment, a blank line,
gzip, a score written otherwise, a query id whose lines are apart, a docno twice in a query, ...;
the caller then reads the file as before, with the general reader, which says what is wrong in its
own words: this reader never raises.

A small run (a few megabytes, :mod:`irspec.data.small`'s size) is read here too, first and whole, in the
caller's thread (:func:`small_plain_run`): numpy's passes over its bytes cost less than the small
reader's Python over its lines. :func:`read_plain` begins the reading of a larger one on a worker thread
(numpy releases the GIL in its loops), for a caller that reads the qrels meanwhile (:func:`irspec.data.stream.read_early`), then evaluates the run a
part at a time (:class:`PlainReading`: about 4 MiB of text's whole queries, each evaluated while the next
is read). The engine evaluates a :class:`PlainRun` from its arrays
(:func:`irspec.evaluation.ranking.build_context`); whatever asks for the run's frame (a per-query plugin
metric) gets the general reader's, of the same file, read then.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator, Sequence
from functools import cached_property
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple, cast, overload

import numpy as np

from irspec.data import DeferredRun, Qrels, Run, read_run
from irspec.data.keys import pair_keys, text_hash
from irspec.data.kinds import QRELS, RUN, Kind
from irspec.data.small import SmallQrels, TextRun, read_regular, small_run
from irspec.data.trec import stem, text_of
from irspec.lines import MAX_LINE

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "PLAIN_ABOVE",
    "PLAIN_BELOW",
    "PLAIN_FACTOR",
    "READS_SMALL",
    "PlainColumns",
    "PlainReading",
    "PlainRun",
    "pair_keys",
    "plain_qrels",
    "plain_run",
    "read_plain",
    "small_plain_run",
    "text_hash",
]

PLAIN_ABOVE = 4 << 20
"""Run files of more than this many bytes may be read here a part at a time, on a worker thread
(:func:`read_plain`); smaller ones (:mod:`irspec.data.small`'s ``SMALL_BELOW``, the same size) are read
here whole, in the caller's thread, when :data:`READS_SMALL` (:func:`small_plain_run`)."""

READS_SMALL = True
"""Whether a small run file (one :func:`~irspec.data.small.small_inputs` weighs as small) is read here
first, whole, before :mod:`irspec.data.small` reads what this reader does not (:func:`small_plain_run`)."""

PLAIN_BELOW = 64 << 20
"""Run files of at most this many bytes may be read here; larger ones stream (:mod:`irspec.data.stream`)
as before (measured there at every size; this reader's parts would hold as little memory at any size,
but have been measured on runs of up to a million lines)."""

PLAIN_FACTOR = 2.0
"""Bytes of memory per byte of run text asked of the budget for a run read here, on the large side: its
parts are evaluated as they are read (a few read ahead, :data:`_AHEAD`), so the process's peak grew by
0.8 bytes a byte of the 1M-line run (74 MiB, of which the interpreter and modules ~45)."""

_SLICE = 1 << 20
"""Bytes of text scanned at a time: the positions of a slice's separators (8 bytes each) and the fields'
gathered bytes stay small (the whole file's would be ~50 MB for a 1M-line run)."""

_SMALL_SLICE = 256 << 10
"""The slices of a small file read whole (:func:`small_plain_run`): its first read in a process pays a page
fault for every page its temporaries first take (~2 µs each here), and a slice a quarter the size takes
0.84x the time of a 50-topic run's read (790 faults where 2,130)."""

_PART = 4 << 20
"""Bytes of text whose queries make a part of a run (:class:`PlainReading`): the caller evaluates a part
while the next ones are read; a few parts cost no more to evaluate than the whole (a 1M-line run in 2 to
8 parts: 41-44 ms of CPU, whole 45)."""

_PAD = 64
"""Zero bytes after the text: a field is gathered as a window of up to this many bytes from its start."""

_WIDEST = 64
"""Query ids and docnos of more bytes than this are left to the general reader."""

_LONG_SCORES = 1 / 16
"""At most this share of the lines may have scores longer than 8 characters (read one by one in Python);
with more, the general reader is faster."""

_DECIMAL = rb"-?[0-9]+(?:\.[0-9]+)?"
"""The scores read here; what else a reader takes (``1e5``, ``+1``, ``.5``, ``inf``) is the general
reader's."""


def _lanes(count: np.ndarray) -> np.ndarray:
    """The mask of a word's first ``count`` bytes (little-endian: its lowest), for counts from 0 to 8:
    arithmetic rather than a table's look-up (a gather costs several times the instructions), numpy
    shifting by 64 or more to 0."""
    return (np.uint64(1) << (count.astype(np.uint64) << np.uint64(3))) - np.uint64(1)


_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_ZEROS = np.uint64(0x3030303030303030)  # '0' in every byte
_DOTS = np.uint64(0x2E2E2E2E2E2E2E2E)  # '.'
_AT_LEAST_0 = np.uint64(0x5050505050505050)  # b + 0x50 has its top bit set when b >= '0'
_ABOVE_9 = np.uint64(0x4646464646464646)  # b + 0x46 has its top bit set when b > '9'
_PLACES = np.uint64(0x0001020304050607)  # (1 << 8p) times this holds p in its top byte
_POWERS = 10.0 ** np.arange(23)
"""Exact powers of ten (up to 1e22, the last a double holds exactly)."""


class PlainColumns(NamedTuple):
    """A run's columns as :func:`plain_run` reads them, lines in file order."""

    query_ids: list[str]
    """Each query's id, in file order (each query's lines are one block)."""
    lengths: np.ndarray
    """Its number of lines (int64)."""
    docnos: np.ndarray
    """Each line's docno, bytes zero-padded to a multiple of 8 (``S8``, ``S16``, ...)."""
    scores: np.ndarray
    """Each line's score (float64)."""
    hashes: np.ndarray
    """Each line's docno's :func:`text_hash` (the engine keys the pairs with it)."""


class PlainRun(DeferredRun):
    """A run file read by numpy (:func:`plain_run`), or a part of one (:class:`PlainReading`): its columns
    (:attr:`plain`), evaluated from them. Its :attr:`run` is made when something asks for it (a
    per-query plugin metric, too many judged documents in ties): the general reader's, of the same file;
    of a part, the run of the part's own lines (``first_line`` the first one's number)."""

    def __init__(
        self, columns: PlainColumns, source: str, runid: str | None, first_line: int | None = None
    ) -> None:
        self.plain = columns
        self.source = source
        self.runid = runid
        self.name = stem(source) or runid or "run"
        self.empty: tuple[str, ...] = ()
        self.first_line = first_line

    @cached_property
    def run(self) -> Run:
        """The general reader's run of the same file; of a part, of its lines alone, as the general
        reader reads them (a clean file's lines are all data lines: the part's are numbered on from
        ``first_line``). The whole file's run in a part's place counted every query of the file once
        per part that asked for it, and gave a per-query metric other queries' documents."""
        if self.first_line is None:
            return read_run(self.source)
        import polars as pl

        c = self.plain
        ids = pl.Series("query", c.query_ids, dtype=pl.String)
        rows = len(c.scores)
        frame = pl.DataFrame(
            [
                ids.gather(np.repeat(np.arange(len(ids)), c.lengths)),
                pl.Series("docno", c.docnos.astype(str), dtype=pl.String),  # ASCII: the padding dropped
                pl.Series("score", c.scores, dtype=pl.Float64),
                pl.Series("line", np.arange(self.first_line, self.first_line + rows), dtype=pl.UInt32),
            ]
        )
        return Run(frame, self.name, self.source, runid=self.runid, blocks=(ids, c.lengths))

    @property
    def query_blocks(self) -> tuple[pl.Series, np.ndarray]:
        """As :attr:`Run.query_blocks`."""
        return self.run.query_blocks

    def __len__(self) -> int:
        return len(self.plain.scores)


class PlainReading:
    """A run file being read by numpy on a worker thread (:func:`read_plain`), a part at a time: each
    part a :class:`PlainRun` of whole queries, in file order, made while the caller evaluates the parts
    before it (:meth:`parts`). Whether the file was of the clean shape is known at the end
    (:attr:`whole`): when it was not, the parts are void and the file is the general reader's."""

    def __init__(self, path: str) -> None:
        import queue
        import threading

        self.path = path
        self.name = stem(path) or "run"
        self.runid: str | None = None
        self.whole = False
        """Whether every line was read (the parts are the whole run), once :meth:`parts` is over."""
        self._parts: queue.Queue[PlainRun | _End] = queue.Queue(maxsize=_AHEAD)
        self._stop = threading.Event()  # threading imported here: the small path never needs it
        self._thread = threading.Thread(target=self._read, name="irspec-plain", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        end = _End(None, False)
        try:
            for part in _parts(self.path, self._stop):
                if isinstance(part, _End):
                    end = part
                    break
                self._parts.put(part)
        except Exception:  # what numpy could not read (a MemoryError, say) the general reader reads
            pass
        finally:
            self._parts.put(end)  # whatever happened: the caller is never left waiting

    def parts(self) -> Iterator[PlainRun]:
        """The run's parts as they are read; then :attr:`whole` and :attr:`runid` say how it ended."""
        while True:
            item = self._parts.get()
            if isinstance(item, _End):
                self.whole, self.runid = item.whole, item.runid
                self.name = stem(self.path) or self.runid or "run"
                return
            yield item

    def close(self) -> None:
        """Stop the reading and wait for it to end (nothing is left behind: a reading raises nothing)."""
        self._stop.set()
        while self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._parts.get(timeout=0.01)  # what was read and never asked for: let the reader go on


class _End:
    """The end of a reading: the runid, and whether every line was read (else the parts are void). A
    plain class, as :class:`_Block`: a NamedTuple costs ~0.15 ms to define, paid by every command."""

    __slots__ = ("runid", "whole")

    def __init__(self, runid: str | None, whole: bool) -> None:
        self.runid, self.whole = runid, whole


_AHEAD = 4
"""Parts read ahead of the caller at most (a part holds some 4 MiB of text's columns)."""


def read_plain(path: str) -> PlainReading:
    """The run file at ``path`` begun by numpy on a worker thread (:class:`PlainReading`)."""
    return PlainReading(path)


def plain_qrels(src: Any) -> SmallQrels | None:
    """Qrels from the file at ``src`` read by numpy, as :func:`~irspec.data.small.small_qrels` reads
    them (a :class:`~irspec.data.small.SmallQrels`, rows sorted by query, then docno), for a file of
    at most :data:`PLAIN_BELOW` bytes of the same clean shape, labels written as integers of at most 8
    characters (``-?[0-9]+``); ``None`` otherwise, for the general reader."""
    found = _text(src)
    if found is None:
        return None
    a, size, source = found
    sep = _separator(a[:size])
    if sep is None:
        return None
    found_lines = _scan(a, 0, size, sep, size, QRELS)
    if found_lines is None:
        return None
    _, starts, ends, seps = found_lines
    words = _words(a)
    query = _gathered(words, starts, seps[:, 0])
    docno = _gathered(words, seps[:, 1] + 1, seps[:, 2])
    first, end = seps[:, 2] + 1, ends
    length = end - first
    if query is None or docno is None or int(length.max()) > 8:
        return None
    labels = _decimals(words[first] & _lanes(length), length, fractions=False)
    if labels is None:
        return None
    bounds = _bounds(query)
    ids = _ids(query, bounds)
    texts = docno.view(f"S{docno.shape[1] * 8}").ravel()
    lengths = np.diff(bounds)
    # the general reader's order, by query id, then docno (as text: the bytes of ASCII)
    ranks = {q: i for i, q in enumerate(sorted(set(ids)))}
    block_rank = np.fromiter(map(ranks.__getitem__, ids), np.int64, len(ids))
    code = np.repeat(block_rank, lengths)
    same = code[1:] == code[:-1]
    if len(set(ids)) == len(ids) and not (same & (texts[1:] <= texts[:-1])).any():
        # each query's lines together, their docnos ascending (the usual qrels file): the blocks put in
        # order of query id, no sort of the docnos' text
        perm = np.argsort(block_rank)
        taken = lengths[perm]
        order = np.repeat(bounds[:-1][perm] - (np.cumsum(taken) - taken), taken) + np.arange(len(code))
    else:
        order = np.lexsort((texts, code))
    code, texts, labels = code[order], texts[order], labels[order]
    if ((code[1:] == code[:-1]) & (texts[1:] == texts[:-1])).any():
        return None  # a docno twice in a query: the general reader names it
    data = bytes(a[:size])
    # docnos as strings when first read (a list, to the Qrels' readers)
    columns = (sorted(ranks), code, cast("list[str]", _Texts(texts)), labels.astype(np.int64))
    return SmallQrels(source, columns, lambda: Qrels.of_text(text_of(data, QRELS, source)))


class _Texts(Sequence[str]):
    """Docnos as strings, made from their bytes (``texts``, kept for :func:`text_hash`) when first read:
    a run read here joins the qrels by the bytes, and only a run of dicts looks them up as strings."""

    def __init__(self, texts: np.ndarray) -> None:
        self.texts = texts
        self._strings: list[str] | None = None

    def _list(self) -> list[str]:
        if self._strings is None:
            self._strings = [t.decode() for t in self.texts.tolist()]
        return self._strings

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        return self._list()[i]

    def __len__(self) -> int:
        return len(self.texts)

    def __eq__(self, other: object) -> bool:
        return self._list() == (other._list() if isinstance(other, _Texts) else other)

    __hash__ = None  # type: ignore[assignment]  # a sequence of strings, compared as a list


def plain_run(src: Any, slice_bytes: int | None = None) -> PlainRun | None:
    """The run in the file at ``src`` read by numpy (see the module's docstring), or ``None`` when it is
    not a regular file of at most :data:`PLAIN_BELOW` bytes of that clean shape: the general reader's.
    Read whole, in the caller's thread (:func:`read_plain` reads on a worker, a part at a time), in slices
    of ``slice_bytes`` (by default :data:`_SLICE`)."""
    if not isinstance(src, (str, os.PathLike)):
        return None
    path = os.fspath(src)
    parts: list[PlainRun] = []
    try:
        for part in _parts(path, _GO_ON, slice_bytes):
            if isinstance(part, _End):
                return _joined(parts, path, part.runid) if part.whole and parts else None
            parts.append(part)
    except Exception:  # as on a worker (PlainReading): what numpy could not read, the general reader reads
        return None
    return None


def small_plain_run(src: Any) -> PlainRun | TextRun | None:
    """A small run file (one :func:`~irspec.data.small.small_inputs` weighed) read without polars: by
    numpy (:func:`plain_run`) when it is of the clean shape read here, whose scores are plain decimals,
    else by :func:`~irspec.data.small.small_run`; ``None`` for the general reader.

    numpy reads a 50-topic run of 50,000 lines in about half the time of the small reader's Python
    (benchmarks/README.md, issue 35), and in the caller's thread: a worker would start a thread and
    ``concurrent.futures`` for a read of a few milliseconds. Where the engine cannot evaluate it from its
    arrays (queries of very unequal lengths, many judged documents in ties), it reads the file's frame,
    as it does the small reader's run's in those cases."""
    run = plain_run(src, _SMALL_SLICE) if READS_SMALL else None
    return run if run is not None else small_run(src)


class _GoOn:
    """A stop event never set: a reading in the caller's thread (:func:`plain_run`) runs to its end."""

    __slots__ = ()

    def is_set(self) -> bool:
        return False


_GO_ON = _GoOn()


def _text(src: Any) -> tuple[np.ndarray, int, str] | None:
    """The bytes of the file at ``src`` with :data:`_PAD` zeros after them, their number and the file's
    name; ``None`` when it is not a regular file of 1 to :data:`PLAIN_BELOW` bytes, or not ASCII."""
    found = read_regular(src, PLAIN_BELOW, _padded)
    if found is None:
        return None
    padded, source = found
    if padded is None:
        return None
    buffer, size = padded
    if int(buffer[:size].max()) >= 128:  # not ASCII (a byte-order mark, gzip, UTF-8)
        return None
    return buffer, size, source


def _padded(f: Any, size: int) -> tuple[np.ndarray, int] | None:
    """The ``size`` bytes of ``f`` and zeros after them, read in place (no copy to pad them; only the
    padding zeroed); ``None`` for an empty file or one read short."""
    if size == 0:
        return None
    buffer = np.empty(size + _PAD, dtype=np.uint8)
    buffer[size:] = 0
    return (buffer, size) if f.readinto(buffer.data[:size]) == size else None


def _separator(text: np.ndarray) -> int | None:
    """The one separator of ``text``: a space, or a tab where there is no space; ``None`` for both."""
    if np.count_nonzero(text == 9):
        return None if np.count_nonzero(text == 32) else 9
    return 32


def _bounds(query: np.ndarray) -> np.ndarray:
    """Where each block of lines of one query id (words, a row a line) begins, and the last ends."""
    change = np.flatnonzero((query[1:] != query[:-1]).any(axis=1)) + 1
    return np.concatenate(([0], change, [len(query)])).astype(np.int64)


def _ids(query: np.ndarray, bounds: np.ndarray) -> list[str]:
    """The query id of each block."""
    return [bytes(row).rstrip(b"\0").decode() for row in query.view(np.uint8)[bounds[:-1]]]


def _parts(path: str, stop: Any, slice_bytes: int | None = None) -> Iterator[PlainRun | _End]:
    """The parts of the run file at ``path`` (:class:`PlainReading`), then its :class:`_End`. Its slices
    are read in file order (:func:`_read_parts`); the queries of about
    :data:`_PART` bytes of text make a part, the last one carried over to the next (its lines may go on);
    a part is checked on its own (no docno twice in a query), and against those before it (no query
    come back). ``stop`` (an event) ends the reading early."""
    try:
        f = open(path, "rb")  # noqa: SIM115  (closed below, after the slices that read it)
    except OSError:
        yield _End(None, False)
        return
    with f:
        size = os.fstat(f.fileno()).st_size
        step = _SLICE if slice_bytes is None else slice_bytes  # (read at the call: tests set _SLICE)
        cuts = _cuts(f.fileno(), size, step)
        if cuts is None or not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            yield _End(None, False)
            return
        yield from _read_parts(f.fileno(), path, cuts, stop, step)


def _cuts(fd: int, size: int, slice_bytes: int) -> list[int] | None:
    """Where the slices of a file of ``size`` bytes begin (and the last ends): about ``slice_bytes``
    apart, each after a line end; ``None`` for a file empty, too large, or with a line longer than
    :data:`~irspec.lines.MAX_LINE` (the general reader names it)."""
    if not 0 < size <= PLAIN_BELOW:
        return None
    cuts = [0]
    while size - cuts[-1] > slice_bytes:
        at = cuts[-1] + slice_bytes
        for span in (4096, MAX_LINE + 1):
            found = os.pread(fd, span, at).find(b"\n")
            if found >= 0:
                break
        if found < 0:
            return None
        cuts.append(at + found + 1)
    if cuts[-1] < size:
        cuts.append(size)
    return cuts


def _read_parts(
    fd: int, source: str, cuts: list[int], stop: Any, slice_bytes: int
) -> Iterator[PlainRun | _End]:
    """:func:`_parts` of the file open as ``fd``, in slices between ``cuts``, read one after another on
    the reading's thread: with the caller evaluating the parts on its own, two threads keep the two cores
    busy (slices read on two threads more were no faster, and slower under load: 0.317 s against 0.310,
    median of 21 whole processes)."""
    size = cuts[-1]
    buffer = np.empty(slice_bytes + MAX_LINE + 1 + _PAD, dtype=np.uint8)  # read into, slice after slice

    def read(span: tuple[int, int]) -> _Block | None:
        start, end = span
        n = end - start
        if os.preadv(fd, [buffer.data[:n]], start) != n:
            return None
        buffer[n : n + _PAD] = 0
        text = buffer[:n]
        if int(text.max()) >= 128:  # not ASCII (a byte-order mark, gzip, UTF-8)
            return None
        sep = _separator(text)
        if sep is None:  # both: the general reader normalises the whitespace
            return None
        return _slice(buffer[: n + _PAD], 0, n, sep, n if end == size else -1)

    seen: set[str] = set()
    fields = sep = 0
    line = 1  # the number of a part's first line: every line of a clean file is a data line
    held: list[_Block] = []  # read, not yet in a part
    held_bytes = 0
    final = None
    for i, piece in enumerate(map(read, pairwise(cuts))):
        if stop.is_set() or piece is None or (fields and (piece.fields, piece.sep) != (fields, sep)):
            yield _End(None, False)
            return
        fields, sep, final = piece.fields, piece.sep, piece
        held.append(piece)
        held_bytes += cuts[i + 1] - cuts[i]
        last = i == len(cuts) - 2
        if held_bytes < _PART and not last:
            continue
        block = _together(held)
        # the last query may go on in the next slice: kept for the next part
        done = len(block.ids) if last else len(block.ids) - 1
        held = [] if last else [_tail(block, done)]
        held_bytes = 0
        if done == 0:
            continue
        rows = int(block.lengths[:done].sum())
        ids, lengths = block.ids[:done], block.lengths[:done]
        if not seen.isdisjoint(ids) or len(set(ids)) < done:
            yield _End(None, False)  # a query come back: not grouped, the general reader's
            return
        seen.update(ids)
        # a docno twice in a query (or two keys alike, next to never): the general reader tells
        hashes = block.hashes[:rows]
        if not _distinct(pair_keys(hashes, np.repeat(np.arange(done, dtype=np.uint64), lengths))):
            yield _End(None, False)
            return
        columns = PlainColumns(ids, lengths, block.docnos[:rows], block.scores[:rows], hashes)
        yield PlainRun(columns, source, None, first_line=line)
        line += rows
    if final is None:
        yield _End(None, False)
        return
    # the last line's tag is the runid, as trec_eval keeps it
    yield _End(final.tag, True)


class _Block:
    """Lines of whole queries (but the last, maybe) read from one slice or more: their ids and lengths,
    each line's docno, score and docno's hash; how many fields each line has, the last line's 6th field,
    and the byte between fields (of a slice)."""

    __slots__ = ("docnos", "fields", "hashes", "ids", "lengths", "scores", "sep", "tag")

    def __init__(
        self,
        ids: list[str],
        lengths: np.ndarray,
        docnos: np.ndarray,
        scores: np.ndarray,
        hashes: np.ndarray,
        fields: int = 0,
        tag: str | None = None,
        sep: int = 0,
    ) -> None:
        self.ids, self.lengths, self.docnos, self.scores, self.hashes = ids, lengths, docnos, scores, hashes
        self.fields, self.tag, self.sep = fields, tag, sep


def _distinct(keys: np.ndarray) -> bool:
    """Whether no two of ``keys`` are equal: sorted (numpy 2's vectorised sort of 64-bit integers, a
    quarter of :func:`~irspec.data.all_distinct`'s time on a part's 115,000 keys) and neighbours compared."""
    keys = np.sort(keys)
    return not bool((keys[1:] == keys[:-1]).any())


def _together(blocks: list[_Block]) -> _Block:
    """Blocks one after the other as one, a query whose lines go on from one to the next made one."""
    if len(blocks) == 1:
        return blocks[0]
    ids: list[str] = []
    lengths: list[int] = []  # a few dozen queries a slice: Python's lists are quick enough
    for b in blocks:
        counts = b.lengths.tolist()
        if ids and b.ids[0] == ids[-1]:
            lengths[-1] += counts[0]
            ids += b.ids[1:]
            lengths += counts[1:]
        else:
            ids += b.ids
            lengths += counts
    return _Block(
        ids,
        np.array(lengths, dtype=np.int64),
        np.concatenate([b.docnos for b in blocks]),  # of several widths: the widest's
        np.concatenate([b.scores for b in blocks]),
        np.concatenate([b.hashes for b in blocks]),
    )


def _tail(block: _Block, done: int) -> _Block:
    """The lines of ``block``'s queries after the first ``done``."""
    rows = int(block.lengths[:done].sum())
    return _Block(
        block.ids[done:], block.lengths[done:], block.docnos[rows:], block.scores[rows:], block.hashes[rows:]
    )


def _joined(parts: list[PlainRun], source: str, runid: str | None) -> PlainRun:
    """Parts of a run as one run."""
    columns = [p.plain for p in parts]
    return PlainRun(
        PlainColumns(
            [q for c in columns for q in c.query_ids],
            np.concatenate([c.lengths for c in columns]),
            np.concatenate([c.docnos for c in columns]),
            np.concatenate([c.scores for c in columns]),
            np.concatenate([c.hashes for c in columns]),
        ),
        source,
        runid,
    )


def _slice(a: np.ndarray, start: int, end: int, sep: int, size: int) -> _Block | None:
    # ``size``: the end of the file's text (-1 when ``a[start:end]`` is not its last slice)
    """The lines of ``a[start:end]`` (:func:`_scan`) read (:func:`_fields`) as a block, or ``None``."""
    found = _scan(a, start, end, sep, size)
    if found is None:
        return None
    fields, starts, ends, seps = found
    piece = _fields(a, starts, ends, seps)
    if piece is None:
        return None
    query, docno, scores = piece
    bounds = _bounds(query)  # a block a query
    ids = _ids(query, bounds)
    docnos = docno.view(f"S{docno.shape[1]}").ravel()
    row = seps[-1]
    tag = bytes(a[row[4] + 1 : ends[-1] if fields == 6 else row[5]]).decode() if fields >= 6 else None
    return _Block(ids, np.diff(bounds), docnos, scores, text_hash(docnos), fields, tag, sep)


def _scan(
    a: np.ndarray, start: int, end: int, sep: int, size: int, kind: Kind = RUN
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
    """The lines of ``a[start:end]`` (whole lines): how many fields each has, where each begins and ends,
    where its separators are (a row a line); ``None`` unless every line is a data line of a run of as
    many fields as the first (as many as a line of ``kind`` may have), split by single ``sep`` bytes, with no other byte below 33 (no NUL, CR,
    VT, FF), none empty, none longer than :data:`~irspec.lines.MAX_LINE`, none a comment.

    The bytes below 33 are found once; when every line has as many fields, they come a line at a time
    (its separators, then its end), so the lines' separators are a reshape of them, not a selection:
    the line ends counted, and each row's last one of them, prove it."""
    chunk = a[start:end]
    blank_bytes = chunk < 33
    # no two blank bytes in a row (an empty field, a blank line), none first (a leading separator)
    if blank_bytes[0] or (blank_bytes[1:] & blank_bytes[:-1]).any():
        return None
    blank = np.flatnonzero(blank_bytes)
    lines = int(np.count_nonzero(chunk == 10))
    if len(blank) != lines + int(np.count_nonzero(chunk == sep)):
        return None  # another byte below 33
    if end == size and (len(blank) == 0 or blank[-1] != end - start - 1 or chunk[-1] != 10):
        blank = np.append(blank, end - start)  # the last line has no line end: its end is the text's
        lines += 1
    if lines == 0 or len(blank) % lines:
        return None
    fields = len(blank) // lines
    if not kind.count_ok(fields):
        return None
    rows = blank.reshape(lines, fields)
    ends = rows[:, -1]
    inside = ends < len(chunk)
    if np.count_nonzero(chunk[ends[inside]] == 10) != lines - (0 if inside.all() else 1):
        return None  # some line of more fields, another of fewer
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if (chunk[starts] == ord("#")).any() or int((ends - starts).max()) > MAX_LINE:
        return None
    return fields, starts + start, ends + start, rows[:, :-1] + start


def _fields(
    a: np.ndarray, starts: np.ndarray, ends: np.ndarray, seps: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The query ids, docnos and scores of a slice's lines (:func:`_scan`), or ``None``."""
    words = _words(a)
    query = _gathered(words, starts, seps[:, 0])
    docno = _gathered(words, seps[:, 1] + 1, seps[:, 2])
    scores = _scores(a, words, seps[:, 3] + 1, ends if seps.shape[1] == 4 else seps[:, 4])
    if query is None or docno is None or scores is None:
        return None
    return query, docno.view(np.uint8), scores


def _words(a: np.ndarray) -> np.ndarray:
    """The 8 bytes from each offset of ``a`` as a little-endian word (a view: word ``i`` is ``a[i:i+8]``)."""
    return np.ndarray((len(a) - 7,), dtype="<u8", buffer=a, strides=(1,))


def _gathered(words: np.ndarray, first: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """The fields from ``first`` to ``end`` as rows of words, zero-padded (``None`` when one is longer
    than :data:`_WIDEST`): each word read at its offset, its bytes past the field zeroed."""
    length = end - first
    count = -(-int(length.max()) // 8)
    if count * 8 > _WIDEST:
        return None
    out = np.empty((len(first), count), dtype=np.uint64)
    for j in range(count):
        out[:, j] = words[first + 8 * j] & _lanes(np.clip(length - 8 * j, 0, 8))
    return out


def _scores(a: np.ndarray, words: np.ndarray, first: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """The score fields ``a[first:end]`` read as the general reader reads them, when every one is a
    plain decimal (:data:`_DECIMAL`); ``None`` otherwise. Those of at most 8 characters are read a
    word each by integer arithmetic on their bytes (no loop over characters); longer ones one by one."""
    length = end - first
    out = np.empty(len(first), dtype=np.float64)
    short = length <= 8
    if not short.all():
        long = np.flatnonzero(~short)
        if len(long) > _LONG_SCORES * len(first):
            return None
        for i, f, e in zip(long.tolist(), first[long].tolist(), end[long].tolist(), strict=True):
            token = bytes(a[f:e])
            # (compiled at the first long score, and kept by re: most runs have none)
            if re.fullmatch(_DECIMAL, token) is None or len(token.replace(b"-", b"").replace(b".", b"")) > 15:
                return None
            out[i] = float(token)
        first, length = first[short], length[short]
    value = _decimals(words[first] & _lanes(length), length)
    if value is None:
        return None
    out[short] = value
    return out


def _decimals(word: np.ndarray, length: np.ndarray, fractions: bool = True) -> np.ndarray | None:
    """Plain decimals of at most 8 characters, each a little-endian word of its bytes (zero past its
    ``length``), as doubles; ``None`` when one is not :data:`_DECIMAL`. The sign is taken off, the point
    found (the lowest byte of the word equal to ``.``) and taken out (the bytes after it moved down one),
    and the digits read at once, 8 to a word (the SWAR reading of simdjson's
    ``parse_eight_digits_unrolled``): an integer below 10**8, divided by the power of ten of its digits
    after the point, exactly rounded. A few dozen passes over the words, none over their characters.
    Without ``fractions``, integers alone (a label): one written with a point is ``None``."""
    u3, u8 = np.uint64(3), np.uint64(8)
    # (in place where it can be: each pass over a slice's words costs as much as its arithmetic)
    negative = (word & np.uint64(0xFF)) == np.uint64(ord("-"))
    sign = negative.astype(np.uint64)
    word = word >> (sign << u3)
    length = length.astype(np.uint64)
    length -= sign
    # the point: the lowest zero byte of word ^ '.'s (a byte past the end is 0 ^ '.', not zero); its
    # place read off the lowest set bit (0x80 << 8p) by a multiplication that puts p in the top byte
    x = word ^ _DOTS
    zero = x - _ONES
    np.invert(x, out=x)
    zero &= x
    zero &= _HIGHS
    has_dot = zero != 0
    if not fractions and has_dot.any():
        return None
    zero &= np.negative(zero)  # its lowest set bit (negation modulo 2**64)
    point = zero >> np.uint64(7)
    point *= _PLACES
    point >>= np.uint64(56)
    np.copyto(point, length, where=~has_dot)
    kept = _lanes(point)
    digits = word & kept
    word >>= u8
    np.invert(kept, out=kept)
    word &= kept
    digits |= word
    count = length - has_dot
    decimals = length - point
    decimals -= np.uint64(1)
    decimals *= has_dot
    if not count.all() or (has_dot & ((point == 0) | (decimals == 0))).any():
        return None  # "", "-", ".5", "5."
    # every byte of the digits a digit, '0' <= b <= '9' (bytes are ASCII: no carry between them)
    lanes = _lanes(count)
    lanes &= _HIGHS
    above = digits + _ABOVE_9
    np.invert(above, out=above)
    above &= digits + _AT_LEAST_0
    above &= lanes
    if not np.array_equal(above, lanes):
        return None
    # the digits in the word's top bytes, '0's before them: eight digits, the first the most significant
    missing = u8 - count
    eight = digits << (missing << u3)
    fill = _lanes(missing)
    fill &= _ZEROS
    eight |= fill
    eight -= _ZEROS
    eight = eight * np.uint64(10) + (eight >> u8)
    low = np.uint64(0x000000FF000000FF)
    number = (eight & low) * np.uint64(100 + (1000000 << 32))
    eight >>= np.uint64(16)
    eight &= low
    eight *= np.uint64(1 + (10000 << 32))
    number += eight
    number >>= np.uint64(32)
    value = number.astype(np.float64)
    value /= _POWERS[decimals]
    np.negative(value, out=value, where=negative)
    return value
