"""A run too large for memory, read as blocks of whole queries: evaluation in bounded memory, exactly.

Every offline metric depends on one query's ranking and judgments only, so a run can be evaluated a
few queries at a time and the per-query values put together: they are the same, bit for bit, as
those of the whole run at once (the engine merges them; means are then summed in sorted query order
as always). This module knows nothing of metrics: it turns a run file into :class:`~irspec.data.Run`
blocks, each holding every line of its queries, and decides when that is needed.

- **When.** :func:`open_run` reads a run whole (today's fast path) when it is small (at most
  :data:`STREAM_ABOVE`, 16 MiB of text) and its estimated working set fits the memory budget
  (``memory=``, ``--memory 1GiB``; :func:`default_memory` otherwise); larger runs stream, being both
  faster and smaller so (:data:`BLOCK_CAP`). The estimate is the in-memory path's, measured: about
  :data:`WORKING_SET_FACTOR` bytes per byte of run text (a scattered run's sort costs the most), on
  top of what the process holds already; a block takes about :data:`BLOCK_FACTOR` bytes per byte.
  Only files and standard input stream; dicts, DataFrames and :class:`~irspec.data.Run` objects are
  in memory already.
- **Grouped runs** (all lines of a query together, in any query order: how TREC runs are written)
  are read in chunks of about ``block_bytes`` of text, ending at a line end; each chunk's complete
  queries form a block, and the last query, which may go on in the next chunk, is carried over.
- **Scattered runs.** Whether the run is grouped is learnt while reading: a query id that comes back
  after its lines ended proves it is not. The blocks read so far are then void (the iterator yields
  :data:`DISCARD` to say so) and the file is read again from the start: whole, when it is at most
  :data:`SCATTERED_WHOLE` and fits the budget so, else each chunk's rows written to one of
  a number of temporary Arrow files chosen by a hash of the query id; each partition, read back,
  holds every line of its queries and is one block. Reading twice costs the prefix read before the
  discovery; a shuffled run is found out in its first chunk. The temporary directory (and a spooled
  standard input) is removed by :meth:`RunBlocks.close`, on success, error or Ctrl-C alike. A
  temporary directory without room (``TMPDIR`` on a small disk) is an
  :class:`~irspec.errors.EvaluationError` naming it and what helps (:func:`_temporary_error`).
- **Both cores.** Each chunk is read and parsed (polars, which releases the GIL) on worker threads,
  two chunks of a grouped run at once (:data:`PARSERS`), while the blocks before are made and checked
  on another and the caller ranks and evaluates the block before those: a few chunks more in memory,
  the same blocks in the same order, and an error in a chunk raised when the caller reaches it.
- **Checks.** Each chunk goes through the reader's own parser (:mod:`irspec.data`), its line numbers
  shifted to the file's, so a bad line is named as the in-memory reader names it. Duplicates and
  scores are checked per block, which holds every line of its queries. A streamed run reports the
  first problem it meets in reading order: a duplicate early in the file may be reported before a
  malformed line near its end, which the in-memory reader would report first. In a scattered run the
  problems of every partition are gathered and the one on the earliest line is raised.
- **The name.** The file's stem, as a run read whole is named (standard input's: the runid of its last
  data line); ``runid`` is that runid, as trec_eval keeps it.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import errno
import io
import itertools
import math
import os
import re
import sys
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from irspec.data import Run, checked, plain, read_run, value_runs
from irspec.data.kinds import RUN
from irspec.data.parquet import is_parquet
from irspec.data.plain import PlainReading, PlainRun, small_plain_run
from irspec.data.small import TextRun
from irspec.data.trec import BOM, GZIP_MAGIC, HEAD_CHECK, check_head, gunzip, parse_text, stem
from irspec.errors import EvaluationError, InputError, quote
from irspec.lazy import lazy_module
from irspec.lines import MAX_LINE, READ_SIZE, LineLimit, check_lines
from irspec.progress import Progress

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = [
    "DISCARD",
    "Discard",
    "Partitions",
    "RunBlocks",
    "SortedSpill",
    "closing_early",
    "default_memory",
    "open_run",
    "open_runs",
    "open_together",
    "parse_memory",
    "read_early",
    "reads_plain",
    "spill_directory",
    "spill_frame",
]

WORKING_SET_FACTOR = 5.0
"""Peak bytes of memory per byte of run text when a run is evaluated whole: measured 2.1 for a 5M-line
run grouped by query and 4.2 shuffled (benchmarks/README.md), rounded up."""

BLOCK_FACTOR = 10.0
"""Peak bytes of memory per byte of a streamed block's text: the chunk read, its parsed rows, the rows
carried over and the evaluation of the block; measured 9 (8, 16 and 32 MB blocks of a 5M-line run)."""

PARTITION_FACTOR = 9.0
"""Peak bytes of memory per byte of text of a chunk being spread over the partitions (parsed, split):
measured 7-9 (53 and 128 MB chunks of a 20M-line shuffled run)."""

GZIP_RATIO = 8
"""A gzip file's text is taken to be this many times its size (runs compress 4-8 times): an estimate
on the large side, so that a compressed run streams rather than swaps."""

MIN_BLOCK = 1 << 20
"""The smallest block of text read at once, whatever the budget: below it, the overhead per block
dominates and memory is not saved."""

BLOCK_CAP = 8 << 20
"""The largest block of text, 8 MiB, whatever the budget: blocks of 8-16 MiB evaluate fastest
(measured on a 5M-line run, grouped 2.4-2.7 s and shuffled 3.7 s, against 4.1 s and 8.2 s whole:
the arrays of a block stay in the caches, a scattered block sorts fewer rows); with two chunks parsed
at once (:data:`PARSERS`), 8 MiB blocks took less CPU time than 16 MiB ones, at ~100 MiB less peak
memory (a grouped 5M-line run: 1.73 s of CPU and 275-291 MiB, against 1.83-1.99 s and 359-394 MiB)."""

BLOCKS_AT_LEAST = 16
"""A streamed file is read in at least this many blocks (of at least :data:`MIN_BLOCK`): a run of 35 MB
(1M lines) in blocks of 2.2 MB rather than 8 MiB peaked at 173 MiB rather than 234, in the same time;
a run of 128 MiB or more has blocks of :data:`BLOCK_CAP`."""

FIRST_PART = 8
"""A grouped run's first chunk is this fraction of a block (then each twice the one before, up to a
block): the evaluation waits for the first chunk's reading, parsing and checking alone, so a small
one starts it sooner (a 5M-line run's first block of 16 MiB blocks is ready after 19-24 ms rather than
87-104 ms)."""

STREAM_ABOVE = 16 << 20
"""Run files above this size (16 MiB of text) are streamed even when they would fit the budget
whole, being faster so and smaller; smaller ones are read whole (one block would be the whole run).
A 1M-line run (35 MB) grouped by query took 1.6 s at 286 MiB whole and 1.3 s at 192 MiB streamed."""

SCATTERED_WHOLE = 64 << 20
"""A run of at most this size (64 MiB of text) found not grouped by query while it streams is read
whole, when it fits the budget so, rather than spread over partitions on disk (which costs more time
than the memory saved is worth at this size)."""

SPREAD_CAP = 64 << 20
"""The largest chunk of a scattered run spread over the partitions at once: fewer, larger partition
files."""

DEFAULT_CAP = 2 << 30
"""The default budget's ceiling, 2 GiB: blocks larger than a few hundred megabytes evaluate no faster."""

MAX_MEMORY = 1 << 60
"""The largest budget, 1 EiB: past any machine's memory (the largest have tens of TiB), where every
budget reads runs alike; a larger number is a slip, and as a float it would overflow."""

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip
_SIZE = r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*$"
"""A memory size's text (compiled by ``re`` when a size is first given: most commands give none)."""
_HASH_SEED = 0x1F2E3D4C


# --------------------------------------------------------------------------------------------------
# The budget


def parse_memory(value: str | int) -> int:
    """A memory size in bytes from ``value``: an integer of bytes, or a number and a unit (``500MB``,
    ``1.5GiB``; kB, MB, GB, TB are powers of 1000, KiB, MiB, GiB, TiB of 1024, case ignored); at most
    :data:`MAX_MEMORY`. The number is read exactly (as a decimal, not a float)."""
    import decimal  # the streaming machinery's modules are imported where used: a small run needs none

    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise EvaluationError(f"memory must be a size such as '500MB' or '1GiB', got {quote(value)}")
    if isinstance(value, int):
        exact: decimal.Decimal | int = value
    else:
        match = re.match(_SIZE, value)
        if match is None:
            where = _first_bad(value)
            raise EvaluationError(
                f"memory {quote(value)}: unexpected {value[where : where + 1]!r} at position {where + 1}; "
                "expected a number and a unit, such as '500MB' or '1GiB'"
            )
        number, unit = match.groups()
        if unit.lower() not in _UNITS:
            raise EvaluationError(
                f"memory {quote(value)}: unknown unit {quote(unit)} at position {match.start(2) + 1}; "
                "expected B, kB, MB, GB, TB, KiB, MiB, GiB or TiB"
            )
        # A decimal, not a float: 400 nines are no float's (inf), and the product is exact to 28 digits,
        # more than the bound has
        exact = decimal.Decimal(number) * _UNITS[unit.lower()]
    if exact > MAX_MEMORY:
        raise EvaluationError(
            f"memory {quote(value)}: more than 1 EiB ({MAX_MEMORY} bytes), past any machine's memory"
        )
    size = math.floor(exact)
    if size <= 0:
        raise EvaluationError(f"memory must be more than 0 bytes, got {quote(value)}")
    return size


def _first_bad(text: str) -> int:
    """Where ``text`` stops being a size: the first character after a number and letters."""
    number = re.match(r"\s*(\d+(?:\.\d*)?|\.\d+)", text)
    if number is None:
        return len(text) - len(text.lstrip())
    unit = re.match(r"\s*[A-Za-z]*\s*", text[number.end() :])
    return number.end() + (unit.end() if unit else 0)


def default_memory() -> int:
    """The default budget: half of the memory available now, at most :data:`DEFAULT_CAP` (2 GiB).

    Half of what is available (not of what is installed) leaves the other half to whatever else
    runs, so an ordinary laptop does not swap; beyond 2 GiB, larger blocks make evaluation no faster.
    """
    available = _available_memory()
    return DEFAULT_CAP if available is None else max(min(DEFAULT_CAP, available // 2), 64 << 20)


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", "rb") as f:  # Linux: MemAvailable counts reclaimable caches
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2  # macOS: half of installed
    except (ValueError, OSError, AttributeError):
        return None


def _resident() -> int:
    """The process's resident memory now, in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def _room(budget: int) -> int:
    """What the budget leaves for the run once what the process holds (interpreter, qrels) is counted."""
    return max(budget - _resident(), 0)


# --------------------------------------------------------------------------------------------------
# Choosing


def open_run(
    src: Any,
    memory: str | int | None = None,
    *,
    block_bytes: int | None = None,
    columns: Mapping[str, str] | None = None,
) -> Run | RunBlocks:
    """The run ``src`` (anything :func:`~irspec.data.read_run` takes, with its ``columns``: a Parquet file's
    names; a text file or standard input given ``columns`` is an error), read whole, or
    as :class:`RunBlocks` when it is a file or standard input whose working set would exceed ``memory``
    (bytes, or a size such as ``"1GiB"``; :func:`default_memory` when None). ``block_bytes`` forces
    streaming in blocks of about that much text. :class:`RunBlocks` are returned as they are."""
    if isinstance(src, RunBlocks):
        return src
    if not isinstance(src, (str, os.PathLike)):  # no budget to weigh: a Run, a frame, a dict is read whole
        if memory is not None:
            parse_memory(memory)  # but a bad size is an error all the same
        return read_run(src, columns=columns)
    budget = default_memory() if memory is None else parse_memory(memory)
    path = os.fspath(src)
    room = _room(budget)
    block = block_bytes or min(max(int(room / BLOCK_FACTOR), MIN_BLOCK), BLOCK_CAP)
    spread = min(max(int(room / PARTITION_FACTOR), block), SPREAD_CAP)
    if columns is not None or is_parquet(path):
        # Parquet is columns, not text: read whole (only the needed columns), by the names given; a text
        # file's fields are fixed, so columns= given for one is refused by the reader, never ignored
        return read_run(path, columns=columns)
    if path == "-":
        return _open_stdin(room, block, spread, forced=block_bytes is not None)
    size = _text_size(path)
    if size is None or (block_bytes is None and not _streams(size, room)):
        return read_run(path)  # small enough, or not a regular file: the reader says what is wrong
    if block_bytes is None:
        block = min(block, max(size // BLOCKS_AT_LEAST, MIN_BLOCK))
    # a scattered run that fits whole is read whole when found out (partitioning would cost more time)
    whole = block_bytes is None and size <= SCATTERED_WHOLE and size * WORKING_SET_FACTOR <= room
    return RunBlocks(path, path, block, spread, stem=stem(path), whole=whole)


def read_early(src: Any, memory: str | int | None = None) -> Any:
    """``src``, or, when it is a run file that streams (as :func:`open_run` reads it) with room to spare,
    its :class:`RunBlocks` begun (:meth:`RunBlocks.start`): for a caller about to read the qrels, so that
    the run's first blocks are read, parsed and checked on worker threads meanwhile (polars parses without
    the GIL while the caller's Python runs), rather than after. The caller hands it to whatever takes
    ``src`` (:func:`open_run` takes it as it is) and closes it if it never gets there (an error in the
    qrels).

    A run file of :data:`~irspec.data.plain.PLAIN_ABOVE` to :data:`~irspec.data.plain.PLAIN_BELOW` bytes,
    whose text fits half the room :data:`~irspec.data.plain.PLAIN_FACTOR` times over, is begun by numpy
    instead (:func:`~irspec.data.plain.read_plain`): read without polars, a part of whole queries at a
    time, when it is of the clean shape that reader reads, else opened at its turn
    (:func:`~irspec.evaluation.parts.evaluate_parts`), whole or streamed as :func:`open_run` chooses.

    Anything else is returned as it is, unread, and is opened at its turn: a small run (read whole, its
    errors after the qrels' as before), standard input, Parquet, what is not a path, a bad size, a
    budget without room to spare: the qrels, read meanwhile, must not change what :func:`open_run`
    chooses (block and spread sizes at their caps, a scattered run read whole or not), so its room is
    taken to be half what it is now."""
    room = _file_room(src, memory)
    if room is None:
        return src
    if _reads_plain(os.fspath(src), room // 2):
        # read by numpy if it is of the clean shape (no polars to import), else opened at its turn
        return plain.read_plain(os.fspath(src))
    size = _text_size(os.fspath(src))
    if size is None or not _streams(size, room):
        return src
    caps = (
        BLOCK_FACTOR * BLOCK_CAP,
        PARTITION_FACTOR * SPREAD_CAP,
        WORKING_SET_FACTOR * min(size, SCATTERED_WHOLE),
    )
    if room // 2 < max(caps):
        return src
    started = open_run(src, memory)
    return started.start() if isinstance(started, RunBlocks) else started


def reads_plain(src: Any, memory: str | int | None = None) -> bool:
    """Whether ``src`` is a run file that :mod:`irspec.data.plain` may read and the engine evaluate, a part
    at a time, within ``memory`` (as :func:`open_run` takes it): a path to a file of more than
    :data:`~irspec.data.plain.PLAIN_ABOVE` and at most :data:`~irspec.data.plain.PLAIN_BELOW` bytes,
    whose text fits the room :data:`~irspec.data.plain.PLAIN_FACTOR` times over (whether it is of the
    clean shape is the reader's to find)."""
    room = _file_room(src, memory)
    return room is not None and _reads_plain(os.fspath(src), room)


def _file_room(src: Any, memory: str | int | None) -> int | None:
    """The room the budget ``memory`` leaves, for a run file of text at ``src``; ``None`` for standard
    input, Parquet, what is not a path, or a bad size (said at its turn)."""
    if not isinstance(src, (str, os.PathLike)) or os.fspath(src) == "-" or is_parquet(src):
        return None
    try:
        return _room(default_memory() if memory is None else parse_memory(memory))
    except EvaluationError:
        return None


def _reads_plain(path: str, room: int) -> bool:
    size = _text_size(path)
    return (
        size is not None
        and plain.PLAIN_ABOVE < size <= plain.PLAIN_BELOW
        and size * plain.PLAIN_FACTOR <= room
    )


@contextlib.contextmanager
def closing_early(srcs: Sequence[Any]) -> Iterator[None]:
    """On exit, whatever of ``srcs`` :func:`read_early` began is closed (its reading stopped, its files
    removed): read or not, as when the qrels read meanwhile fail. Closing a run read already does nothing."""
    try:
        yield
    finally:
        for src in srcs:
            if isinstance(src, (RunBlocks, PlainReading)):
                src.close()


def open_together(
    srcs: Sequence[Any], memory: str | int | None = None, *, factor: float
) -> list[Run | RunBlocks]:
    """:func:`open_run` of each of ``srcs``, for a caller that works on all of them at once (fusion): read
    whole only when, together, they fit ``memory`` at ``factor`` bytes of memory per byte of their text;
    otherwise every file (and standard input) streams, in blocks small enough that a block of each,
    ``factor`` times over, fits. Parquet files and what is not a path are read whole, as by
    :func:`open_run`; so is a run of a caller that fits, unless :func:`open_run` would stream it alone."""
    budget = default_memory() if memory is None else parse_memory(memory)
    room = _room(budget)
    texts = [os.fspath(s) for s in srcs if _is_text_path(s)]
    if "-" not in texts and sum(_text_size(t) or 0 for t in texts) * factor <= room:
        return [open_run(s, memory) for s in srcs]
    block = min(max(int(room / (factor * len(texts))), MIN_BLOCK), BLOCK_CAP)
    return [open_run(s, memory, block_bytes=block if _is_text_path(s) else None) for s in srcs]


def _is_text_path(src: Any) -> bool:
    """Whether ``src`` names a file (or standard input) of text, which can stream."""
    return isinstance(src, (str, os.PathLike)) and not is_parquet(os.fspath(src))


def open_runs(
    paths: Sequence[Any], memory: str | int | None = None, *, small: bool = False
) -> Iterator[Run | RunBlocks | TextRun | PlainRun | PlainReading]:
    """:func:`open_run` of each path in ``paths``, in their order, for a caller that evaluates one run
    before it asks for the next: while it does, the next :data:`READ_AHEAD` runs are read on worker
    threads when they are small files (at most :data:`READ_AHEAD_BELOW` of text each, and twice their working
    sets within the budget's room).

    Reading is mostly polars' parsing, which releases the GIL, and evaluating a small run is mostly the
    caller's Python and numpy: overlapped, they keep two cores busy over a directory of runs (issue 23).
    A file read ahead costs its run's memory an evaluation or two early, hence the size limit; a larger
    run, a stream, standard input and anything not a path are opened at their turn, as
    :func:`open_run` does (and the runs after one are read ahead once it is reached). A run that fails
    to read raises its error when it is asked for, after the runs before it, as if read then. A
    callable in ``paths`` is a run made rather than read (a plan's fused run): it is called at its turn,
    so that only one such run is held at a time. With ``small``, a small file of clean text is read
    without polars, for evaluation (:func:`~irspec.data.plain.small_plain_run`), at its turn: in the
    caller's thread, since a worker would only save milliseconds and cost a thread pool's start."""
    if small:
        for path in paths:
            yield _open(_made(path), memory, small)
        return
    import concurrent.futures

    budget = default_memory() if memory is None else parse_memory(memory)
    with concurrent.futures.ThreadPoolExecutor(
        max_workers=READ_AHEAD, thread_name_prefix="irspec-read"
    ) as pool:
        ahead: dict[int, concurrent.futures.Future[Run | RunBlocks | TextRun | PlainRun | PlainReading]] = {}
        try:
            for i, path in enumerate(paths):
                reading = ahead.pop(i, None)
                loaded = _open(_made(path), memory, small) if reading is None else reading.result()
                room = _room(budget) // READ_AHEAD
                for j in range(i + 1, min(i + 1 + READ_AHEAD, len(paths))):
                    if j not in ahead:
                        if not _read_ahead(paths[j], room):
                            break  # opened at its turn; the runs after it are read ahead from there
                        ahead[j] = pool.submit(_read_early, paths[j], memory, small)
                yield loaded
                del loaded  # not held while the next ones are read
        finally:
            for reading in ahead.values():  # the caller stopped early (an error): what was read is dropped
                reading.cancel()


PARSERS = 2
"""How many chunks of a grouped run are parsed at once, each on a worker thread of its own: parsing a
chunk (reading, scanning, polars' parse) is the longest of a streamed run's three stages (then the
checks, then the evaluation), so two at once keep both cores busy where one left the stages waiting for
it. A scattered run's larger chunks (:data:`SPREAD_CAP`) are parsed one at a time."""

READ_AHEAD_BELOW = 16 << 20
"""Files of at most this much text are read ahead by :func:`open_runs`."""

READ_AHEAD = 2
"""How many small runs :func:`open_runs` reads ahead of the one being evaluated: two readers keep the
second core busy where one run's reading takes longer than the run before it takes to evaluate."""


def _read_early(
    src: Any, memory: str | int | None, small: bool = False
) -> Run | RunBlocks | TextRun | PlainRun | PlainReading:
    """:func:`open_run` of ``src`` on a worker of :func:`open_runs`, with the run's query blocks found
    there too (what the evaluation asks of a run first), rather than by the caller."""
    run = _open(src, memory, small)
    if isinstance(run, Run):
        run.query_blocks  # noqa: B018  (a cached property, computed here)
    return run


def _open(
    src: Any, memory: str | int | None, small: bool
) -> Run | RunBlocks | TextRun | PlainRun | PlainReading:
    """:func:`open_run` of ``src``, or with ``small`` the run :func:`~irspec.data.plain.small_plain_run` reads;
    a run begun by numpy (:func:`read_early`) as it is, for the evaluation to take over."""
    if isinstance(src, PlainReading):
        return src
    return (small_plain_run(src) if small else None) or open_run(src, memory)


def _made(src: Any) -> Any:
    """``src``, or the run it makes when it is a callable (:func:`open_runs`)."""
    return src() if callable(src) else src


_END = object()


def _ahead(items: Iterator[Any]) -> Iterator[Any]:
    """``items`` in their order, each next one computed on a worker thread while the caller holds the
    one before: an error computing it is raised when the caller asks for it, as if computed then. When
    the caller stops early, the item being computed is waited for and ``items`` closed (its files).
    An :class:`_Ahead` (begun already: :meth:`RunBlocks.start`) is taken over as it is."""
    ahead = items if isinstance(items, _Ahead) else _Ahead(items)
    try:
        yield from ahead
    finally:
        ahead.close()


class _Ahead:
    """The iterator of :func:`_ahead`, its first item computed from its making on: a run's first blocks
    are read while the caller does something else first (reads the qrels). :meth:`close` waits for the
    item being computed and closes ``items``; a generator not yet started would not run its own clean-up."""

    def __init__(self, items: Iterator[Any]) -> None:
        import concurrent.futures

        self._items = items
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="irspec-read")
        self._following: concurrent.futures.Future[Any] | None = self._pool.submit(next, items, _END)
        self._closed = False

    def __iter__(self) -> _Ahead:
        return self

    def __next__(self) -> Any:
        if self._following is None:
            raise StopIteration
        item = self._following.result()
        if item is _END:
            self._following = None
            raise StopIteration
        self._following = self._pool.submit(next, self._items, _END)
        return item  # not held here while the caller works on it and the next one is computed

    def close(self) -> None:
        """Stop: the item being computed waited for, nothing more computed, ``items`` closed (once)."""
        if self._closed:
            return
        self._closed = True
        if self._following is not None:
            self._following.cancel()
            self._following = None
        self._pool.shutdown(wait=True)
        close = getattr(self._items, "close", None)
        if close is not None:
            close()


def _read_ahead(path: str, room: int) -> bool:
    """Whether ``path`` is a small regular file of run text, worth reading ahead (:func:`open_runs`)."""
    if not isinstance(path, (str, os.PathLike)) or os.fspath(path) == "-":
        return False
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError):
        return False  # the reader says what is wrong, at its turn
    return size <= READ_AHEAD_BELOW and 2 * size * WORKING_SET_FACTOR <= room


def _streams(size: int, room: int) -> bool:
    """Whether ``size`` bytes of run text are better streamed: too large to evaluate whole within
    ``room`` bytes, or large enough for blocks to be faster (:data:`STREAM_ABOVE`)."""
    return size > STREAM_ABOVE or size * WORKING_SET_FACTOR > room


def _text_size(path: str) -> int | None:
    """The estimated size of a file's text (gzip counted at :data:`GZIP_RATIO`), None if not a file."""
    # a regular file alone is opened here: opening a FIFO connects to its writer, whom closing it then
    # ends (the reading's own open waited for another writer, forever)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            return size * GZIP_RATIO if f.read(2) == GZIP_MAGIC else size
    except OSError:
        return None


def _open_stdin(room: int, block: int, spread: int, forced: bool) -> Run | RunBlocks:
    """Standard input read whole if it need not stream, else spooled to a temporary file and streamed
    from it (a pipe cannot be read twice, and a scattered run is read twice)."""
    stdin = sys.stdin.buffer
    limit = min(int(room / WORKING_SET_FACTOR), STREAM_ABOVE)
    # two bytes at least, whatever the room: gzip is told by them (a budget at or below the process's
    # memory left a head of one byte, and gzip was read as text: "a NUL byte")
    head = stdin.read(max(limit + 1, 2))
    if head[:2] == GZIP_MAGIC:
        limit //= GZIP_RATIO
    if len(head) <= limit and not forced:
        return Run.read(io.BytesIO(head), source="<stdin>")
    what = "standard input"
    # Text is checked as it is spooled: an endless line (/dev/zero) would otherwise fill the disk, and
    # its first lines are parsed once they have come (check_head): an endless stream of no TREC text
    # (`yes`) would too. Gzip is checked as it is read back (the streaming reader's own check, on the text).
    lines = None if head[:2] == GZIP_MAGIC else LineLimit("<stdin>")
    start: bytearray | None = None if lines is None else bytearray()
    directory = _make_directory(what)
    copied = 0
    try:
        spooled = os.path.join(directory, "stdin")
        with open(spooled, "wb") as f:
            piece = head
            while piece:
                if lines is not None:
                    lines.feed(piece)
                if start is not None:
                    start += piece[: HEAD_CHECK - len(start)]
                    if len(start) >= HEAD_CHECK:
                        check_head(bytes(start), RUN, "<stdin>")
                        start = None
                f.write(piece)
                copied += len(piece)
                piece = stdin.read(READ_SIZE)
    except OSError as e:
        _remove_tree(directory)
        remedy = (
            f"standard input too large to read whole is copied there ({_size(copied)} so far): set TMPDIR to a "
            "directory with more room, give the run as a file (read where it is)"
        )
        if copied <= STREAM_ABOVE:
            remedy += f", or, if it is under {_size(STREAM_ABOVE)}, raise the memory budget (--memory) to read it whole"
        raise _temporary_error(e, os.path.dirname(directory), what, remedy) from None
    except BaseException:
        _remove_tree(directory)
        raise
    return RunBlocks(spooled, "<stdin>", block, spread, stem=None, directory=directory)


# --------------------------------------------------------------------------------------------------
# Reading in blocks


class _Scattered(Exception):
    """A query's lines came back after another query's: the run is not grouped by query."""


class Discard(enum.Enum):
    """The event :class:`RunBlocks` yields, between two blocks, when the run turns out not to be grouped
    by query: every block it yielded before is void (their queries come again, complete, in the blocks
    after it), so whatever a consumer made of them is to be thrown away. Its one member is
    :data:`DISCARD`; a consumer asks ``block is DISCARD``."""

    DISCARD = "discard what was read"


DISCARD = Discard.DISCARD
"""What a consumer of :class:`RunBlocks` compares each item with: the blocks before it are void."""


class RunBlocks:
    """A run file read as blocks of whole queries (:class:`~irspec.data.Run` objects).

    Iterating yields the blocks; :data:`DISCARD` means that the run turned out not to be grouped and
    every block before it is void (its queries come again, complete, in the blocks after it). ``name`` is
    the run's name (and ``runid`` its last data line's runid) once iteration is over. Use as a context manager, or call :meth:`close`: it removes
    the temporary files.
    """

    def __init__(
        self,
        path: str,
        source: str,
        block_bytes: int,
        spread_bytes: int | None = None,
        *,
        stem: str | None,
        directory: str | None = None,
        whole: bool = False,
    ) -> None:
        self.path = path
        self.whole = whole
        """Whether a run found scattered is read whole (:data:`SCATTERED_WHOLE`), not partitioned."""
        self.source = source
        self.block_bytes = max(int(block_bytes), 64)  # a few lines at least
        self.spread_bytes = max(
            int(spread_bytes or block_bytes), self.block_bytes
        )  # read at once to partition
        self.stem = stem
        self.name = stem or "run"
        self.partitions: int | None = None  # how many, once the run is partitioned
        self.directory: str | None = None  # the temporary files' directory, once there is one
        self._runid: str | None = None
        self._remover: weakref.finalize | None = None
        if directory is not None:
            self._own(directory)
        self._lines = 0
        self._queries = 0  # evaluated: counted when the consumer asks for the next block
        self._progress = Progress("streaming")
        self._early: _Ahead | None = None  # the first blocks, begun by start()

    @property
    def runid(self) -> str | None:
        """The runid of the last data line read, as trec_eval keeps it (None when no line has one)."""
        return self._runid

    def __enter__(self) -> RunBlocks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> RunBlocks:
        """Begin reading now: the first blocks are read, parsed and made on worker threads while the
        caller does something else (reads the qrels), and iteration takes them over. Memory holds what
        iteration would hold (two chunks parsing, a block made ahead); an error is raised when iteration
        reaches it. :meth:`close` stops the reading if iteration never comes."""
        if self._early is None:
            # the first chunk a whole block: it is not awaited (the caller reads the qrels meanwhile), and
            # the small first chunks that start an evaluation sooner are blocks and parses more
            self._early = _Ahead(self._grouped(first=self.block_bytes))
        return self

    def close(self) -> None:
        """Remove the temporary files (partitions, a spooled standard input); erase the progress line;
        stop a reading begun by :meth:`start` and never iterated."""
        if self._early is not None:
            self._early.close()
            self._early = None
        self._progress.close()
        if self._remover is not None:
            self._remover()

    def _own(self, directory: str) -> None:
        """Remove ``directory`` on :meth:`close`, and failing that when this object is collected or the
        interpreter exits: after Ctrl-C, polars may raise KeyboardInterrupt for the signal and Python
        again for the same signal, at the start of ``__exit__``, which then never runs."""
        self._remover = weakref.finalize(self, _remove_tree, directory)
        self.directory = directory

    def __iter__(self) -> Iterator[Run | Discard]:
        # Each block is made and checked (its keys hashed, duplicates sought: half the work besides the
        # evaluation) on a worker thread while the caller evaluates the block before it (issue 23).
        early, self._early = self._early, None
        try:
            yield from self._counted(_ahead(self._grouped() if early is None else early))
            return
        except _Scattered:
            pass
        yield DISCARD
        self._lines = self._queries = 0
        if self.whole:
            run = read_run(self.path)
            self.name, self._runid = self.stem or run.runid or "run", run.runid
            yield from self._counted(iter([(run, len(run.query_ids))]))
            return
        yield from self._counted(_ahead(self._partitioned()))

    def _counted(self, blocks: Iterator[tuple[Run, int]]) -> Iterator[Run]:
        for block, queries in blocks:
            yield block
            self._queries += queries

    # -- grouped -----------------------------------------------------------------------------------

    def _grouped(self, first: int | None = None) -> Iterator[tuple[Run, int]]:
        """The blocks of a run grouped by query, each of the queries whose lines end in its chunk (the
        first chunk of ``first`` bytes, of a :data:`FIRST_PART` of a block by default); raises
        :class:`_Scattered` when a query comes back."""
        done: set[str] = set()  # queries whose lines have ended
        carry: list[pl.DataFrame] = []  # lines of the last query read, which may go on
        carry_id: str | None = None
        carry_rows = 0
        first = self.block_bytes // FIRST_PART if first is None else first
        for frame in self._frames(self.block_bytes, first, PARSERS):
            values, counts = value_runs(frame.get_column("query"))
            names, lengths = values.to_list(), counts.tolist()
            if names[0] == carry_id:  # the carried query goes on
                carry.append(frame.slice(0, lengths[0]))
                carry_rows += lengths[0]
                frame, names, lengths = frame.slice(lengths[0]), names[1:], lengths[1:]
                if not names:
                    continue
            if carry_id is not None:
                done.add(carry_id)
            if len(set(names)) < len(names) or not done.isdisjoint(names):
                raise _Scattered
            last = frame.height - lengths[-1]
            done.update(names[:-1])
            complete = [*carry, frame.slice(0, last)]
            # the block's queries, each once, and their rows: known here, not sought again
            ids = names[:-1] if carry_id is None else [carry_id, *names[:-1]]
            rows = lengths[:-1] if carry_id is None else [carry_rows, *lengths[:-1]]
            carry, carry_id, carry_rows = [frame.slice(last)], names[-1], lengths[-1]
            yield self._block(pl.concat(complete), len(ids), blocks=(ids, rows))
        if carry_id is not None:
            yield self._block(pl.concat(carry), 1, blocks=([carry_id], [carry_rows]))

    # -- scattered ---------------------------------------------------------------------------------

    def _partitioned(self) -> Iterator[tuple[Run, int]]:
        what = "the run's lines"
        if self._remover is None:
            self._own(_make_directory(what))
        assert self.directory is not None  # for mypy: _own set it, now or before
        parts = self.partitions = self._partition_count()
        spread = Partitions(self.directory, parts, "query", what=what, remedy=self._remedy())
        for frame in self._frames(self.spread_bytes):
            spread.add(frame)
        problems: list[InputError] = []
        for frame in spread:
            try:
                block = self._block(frame, frame.get_column("query").n_unique(), grouped=False)
            except InputError as e:  # the earliest line of every partition's first problem is reported
                problems.append(e)
                continue
            if not problems:
                yield block
        if problems:
            raise min(problems, key=lambda e: e.line or 0)

    def _remedy(self) -> str:
        """What helps when the temporary directory has no room for the partitions."""
        size = _text_size(self.path) or 0
        remedy = (
            f"a run not grouped by query is spread over files there, about its size ({_size(size)}): "
            "set TMPDIR to a directory with that much room"
        )
        if size <= SCATTERED_WHOLE:
            remedy += f", raise the memory budget to {_size(_resident() + size * WORKING_SET_FACTOR)} (--memory, a plan's memory:) to read it whole"
        return remedy + ", or group its lines by query (sort -s -k1,1)"

    def _partition_count(self) -> int:
        """Enough partitions for each to be about one block: the text's size (estimated for gzip) over
        the block size, at least 2."""
        size = _text_size(self.path) or 0
        return max(2, math.ceil(size / self.block_bytes))

    # -- both --------------------------------------------------------------------------------------

    def _block(
        self,
        frame: pl.DataFrame,
        queries: int,
        grouped: bool = True,
        blocks: tuple[list[str], list[int]] | None = None,
    ) -> tuple[Run, int]:
        """A block of ``queries`` whole queries, checked (finite scores, no duplicate), as a Run. Rows
        not ``grouped`` by query (a partition's) are grouped once checked (each query's rows in the
        order read, so that a problem is the one found in that order): the evaluation ranks a query's
        rows as one block (a sort per query) and takes the run's query ids a block at a time, where
        scattered rows would be a block each (a sort of every row, and a set of every row's id).
        ``blocks``: the query ids of grouped rows, in order, and their rows (:attr:`Run.blocks`), which
        spare hashing every row's id and finding the blocks again."""
        given = None
        if blocks is not None:
            given = pl.Series("query", blocks[0], dtype=pl.String), np.array(blocks[1], dtype=np.int64)
        frame, keys = checked(frame, RUN, self.source, blocks=given)
        if not grouped:
            # by the ids' hashes: equal ids together, a tenth of a sort of the strings; two ids of one
            # hash (next to never) would only make more blocks, each evaluated exactly all the same
            frame = frame.with_row_index("_row").sort(pl.col("query").hash(), maintain_order=True)
            if keys is not None:
                keys = keys[frame.get_column("_row").to_numpy()]
            frame = frame.drop("_row")
        run = Run(frame, self.name, self.source, keys, self._runid, blocks=given)
        run.query_blocks  # noqa: B018  (found here, on the worker thread, rather than by the evaluation)
        return run, queries

    def _frames(self, size: int, first: int | None = None, parsers: int = 1) -> Iterator[pl.DataFrame]:
        """The rows (query, docno, score, line) of each chunk of about ``size`` bytes (the first of
        about ``first``: :func:`_chunks`), line numbers counted from the file's start; chunks without
        data lines are skipped. The run's name follows the last data line."""
        # Each chunk is read and parsed on a worker thread of its own (polars' parsing releases the
        # GIL), ahead of the thread that makes and checks the blocks (__iter__): one chunk more in memory.
        for frame, runid, read in _ahead(self._parsed(size, first, parsers)):
            self._lines = read
            where = os.path.basename(self.source)
            self._progress.update(
                detail=f"{self._lines:,} lines read, {self._queries:,} queries evaluated ({where})"
            )
            if frame.height:
                self._runid = runid
                self.name = self.stem or self._runid or "run"
                yield frame

    def _parsed(
        self, size: int, first: int | None = None, parsers: int = 1
    ) -> Iterator[tuple[pl.DataFrame, str | None, int]]:
        """Each chunk of about ``size`` bytes (the first of about ``first``) parsed: its rows, its last
        data line's runid, and the number of lines read up to its end, in file order; ``parsers`` chunks
        parsed at once, each on a worker thread (the next chunk is read while they parse), an error
        raised at its chunk's turn. Touches no state of the run: it runs ahead of the caller."""
        import concurrent.futures

        line = 1
        pending: collections.deque[tuple[concurrent.futures.Future[Any], int]] = collections.deque()
        pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=parsers, thread_name_prefix="irspec-read-parse"
        )
        try:
            for text, lines in _chunks(self.path, self.source, size, first):
                pending.append((pool.submit(self._parse, text, line), line + lines - 1))
                line += lines
                del text  # held by its parse alone
                if len(pending) >= parsers:
                    parsing, read = pending.popleft()
                    yield (*parsing.result(), read)
            while pending:
                parsing, read = pending.popleft()
                yield (*parsing.result(), read)
        finally:  # stopped early (an error, the caller gone): nothing is left parsing
            for parsing, _ in pending:
                parsing.cancel()
            pool.shutdown(wait=True)

    def _parse(self, text: bytes, first: int) -> tuple[pl.DataFrame, str | None]:
        """A chunk's rows, line numbers counted from the file's start, and its last data line's runid."""
        try:
            parsed = parse_text(text, RUN, self.source)
            frame, runid = parsed.frame, parsed.runid
        except InputError as e:
            if e.line is None or first == 1:
                raise
            raise InputError(e.reason, e.source, e.line + first - 1, e.query) from None
        if first > 1:
            frame = frame.with_columns((pl.col("line") + (first - 1)).cast(pl.UInt32))
        return frame, runid


class Partitions:
    """Rows spread over ``count`` temporary Arrow files by a hash of their ``key`` column, then read back
    one partition at a time: each partition holds every row of its keys (a query's lines, a session's
    query issues), whatever the order the rows came in. The files go in ``directory`` (its owner
    removes it) and each is removed as its partition is read."""

    def __init__(
        self, directory: str, count: int, key: str, *, what: str | None = None, remedy: str | None = None
    ) -> None:
        self.directory = directory
        self.count = count
        self.key = key
        self.what = what or f"rows spread by {key}"
        """What the rows are, for the error when the directory has no room for them."""
        self.remedy = remedy or "set TMPDIR to a directory with more room"
        """What helps then."""
        self._files: list[list[str]] = [[] for _ in range(count)]
        self._added = 0

    def add(self, frame: pl.DataFrame) -> None:
        """Spread ``frame``'s rows over the partitions (one file per partition it reaches). A write that
        fails (a full disk) is an :class:`~irspec.errors.EvaluationError` naming the directory."""
        part = (frame.get_column(self.key).hash(_HASH_SEED) % self.count).alias("_part")
        for (p,), rows in (
            frame.with_columns(part).partition_by("_part", as_dict=True, include_key=False).items()
        ):
            path = os.path.join(self.directory, f"{self.key}-{p}-{self._added}.arrow")
            self._files[p].append(path)  # listed first: a file cut short is removed with the others
            spill_frame(rows, path, self.what, self.remedy)
        self._added += 1

    def __iter__(self) -> Iterator[pl.DataFrame]:
        """Each partition that has rows, in partition order, its rows in the order they were added."""
        for paths in self._files:
            if not paths:
                continue
            frame = pl.concat([pl.read_ipc(p) for p in paths], rechunk=True)
            for p in paths:
                os.remove(p)  # the disk space goes as the partition is read
            yield frame


def spill_frame(
    frame: pl.DataFrame, path: str, what: str, remedy: str = "set TMPDIR to a directory with more room"
) -> None:
    """``frame`` written to the Arrow file ``path`` in a temporary directory; a write that fails (a
    full disk) is an :class:`~irspec.errors.EvaluationError` naming the directory, ``what`` it was
    writing, and ``remedy`` when there is no room."""
    # Written through a file opened once: polars, given a path, opens it twice, truncating the second
    # time, and ext4 then allocates its blocks at once (its guard for files replaced by truncation),
    # so that removing each small file later costs a synchronous discard on a disk mounted with it:
    # 3 ms a file on this project's machines, 30,000 files in a shuffled 5M-line run under a small
    # budget (benchmarks/README.md).
    with _spilling(os.path.dirname(path), what, remedy), open(path, "wb") as f:
        frame.write_ipc(f)


class SortedSpill:
    """An output too large for memory, made a partition at a time (:class:`Partitions` hands the keys
    out in hash order) and written back as if made at once, in key order: each key's chunk of bytes
    goes to one temporary file in ``directory`` as it comes (:meth:`add`), and :meth:`write_to` copies
    the chunks out sorted by key. Memory holds the keys and where their chunks are, not the bytes.

    Keys sort by code point, as polars sorts strings: a run fused in blocks is written in the query
    order of a run fused whole (:func:`irspec.fusion.engine.fuse_to_file`). A context manager: the
    file is closed on exit; its directory's owner removes it."""

    def __init__(
        self, directory: str, *, what: str, remedy: str = "set TMPDIR to a directory with more room"
    ) -> None:
        self.directory = directory
        self.what = what
        """What the bytes are, for the error when the directory has no room for them."""
        self.remedy = remedy
        self._path = os.path.join(directory, "sorted-spill")
        with _spilling(directory, what, remedy):
            self._file = open(self._path, "wb")  # noqa: SIM115  # it lives as long as the spill: closed by __exit__
        self._keys: list[str] = []
        self._sizes: list[int] = []

    def __enter__(self) -> SortedSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def add(self, keys: Sequence[str], sizes: Sequence[int], data: bytes) -> None:
        """``data`` holds the chunks of ``keys`` one after another, ``sizes`` bytes each; no key comes
        twice. A write that fails (a full disk) is an :class:`~irspec.errors.EvaluationError` naming
        the directory."""
        with _spilling(self.directory, self.what, self.remedy):
            self._file.write(data)
        self._keys.extend(keys)
        self._sizes.extend(sizes)

    def write_to(self, out: BinaryIO) -> None:
        """Every chunk, in key order, written to ``out``."""
        self._file.close()
        starts = [0, *itertools.accumulate(self._sizes)]
        with open(self._path, "rb") as spilled:
            for i in sorted(range(len(self._keys)), key=self._keys.__getitem__):
                spilled.seek(starts[i])
                out.write(spilled.read(self._sizes[i]))


@contextlib.contextmanager
def spill_directory() -> Iterator[str]:
    """A temporary directory for :class:`Partitions`, removed with its files on exit, error or Ctrl-C."""
    directory = _make_directory("rows spread over files")
    try:
        yield directory
    finally:
        _remove_tree(directory)


@contextlib.contextmanager
def _spilling(directory: str, what: str, remedy: str) -> Iterator[None]:
    """Writes of ``what`` into the spill ``directory`` (one of :func:`spill_directory`'s): an
    :class:`OSError` (a full disk) becomes :func:`_temporary_error`'s, naming the temporary directory it
    is in."""
    try:
        yield
    except OSError as e:
        raise _temporary_error(e, os.path.dirname(directory), what, remedy) from None


_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
"""What a write says when the disk, a quota or the limit on a file's size leaves no room."""


def _temporary_error(error: OSError, directory: str, what: str, remedy: str) -> EvaluationError:
    """The error for ``what`` that could not be written to the temporary ``directory``: names it and
    the reason, and when it is out of room, ``remedy``. Whoever made the temporary files removes them
    as the error goes up (:meth:`RunBlocks.close`, :func:`spill_directory`), before anyone reads it."""
    text = error.strerror or str(error)
    code = error.errno
    found = re.search(
        r"\s*\(os error (\d+)\)", text
    )  # polars' errors: "No space left on device (os error 28)"
    if found:
        code, text = code or int(found.group(1)), text[: found.start()] + text[found.end() :]
    message = f"cannot write {what} to the temporary directory {directory} (TMPDIR): {text}"
    if code in _NO_ROOM:
        message += f"; {remedy}"
    return EvaluationError(message + "; the temporary files are removed")


def _make_directory(what: str) -> str:
    """A new temporary directory (in TMPDIR) for ``what``, or the error that says why there is none."""
    import tempfile

    try:
        return tempfile.mkdtemp(prefix="irspec-")
    except OSError as e:
        raise _temporary_error(
            e, tempfile.gettempdir(), what, "set TMPDIR to a directory with room"
        ) from None


def _size(n: float) -> str:
    """``n`` bytes for a message, rounded up in the units :func:`parse_memory` reads: ``149 MiB``."""
    for unit in ("GiB", "MiB", "KiB"):
        scale = _UNITS[unit.lower()]
        if n >= scale:
            return f"{math.ceil(n / scale)} {unit}"
    return f"{math.ceil(n)} B"


def _remove_tree(directory: str) -> None:
    """Remove ``directory`` and its files. Tried again for up to a second: after Ctrl-C, a write that
    polars was making on its own threads may still create its file after the first listing."""
    import shutil

    for _ in range(100):
        shutil.rmtree(directory, ignore_errors=True)
        if not os.path.exists(directory):
            return
        time.sleep(0.01)


def _chunks(path: str, source: str, size: int, first: int | None = None) -> Iterator[tuple[bytes, int]]:
    """The text of a file (gunzipped if it is gzip, without a leading byte-order mark) in pieces of
    about ``size`` bytes that end at a line end (the last one where the file ends), each with the
    number of line ends it holds; the first piece of about ``first`` bytes when given, each next one
    twice the one before up to ``size``. A line longer than :data:`~irspec.lines.MAX_LINE` is refused
    by its number as it comes: one that does not end is not carried on without end."""
    try:
        f = open(path, "rb")  # noqa: SIM115  (a with below; only open()'s error is an InputError)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", source=source) from None
    with f:
        gzip = f.read(2) == GZIP_MAGIC
        f.seek(0)
        # A small first piece starts the pipeline (parse, check, evaluate) sooner: the consumer waits
        # for the first block's reading alone; later pieces grow to ``size``.
        want = min(first or size, size)
        compressed = iter(lambda: f.read(max(want // GZIP_RATIO, 1)), b"")
        pieces = gunzip(compressed, source, size) if gzip else iter(lambda: f.read(want), b"")
        line = 1  # the number of the first line of ``rest``
        rest = b""
        bom_checked = False
        for piece in pieces:
            buffer = rest + piece
            end = buffer.rfind(b"\n") + 1
            if (len(buffer) < want or end == 0) and len(buffer) - end <= MAX_LINE:
                rest = buffer  # too little, or no line end yet: read on
                continue
            check_lines(buffer, source, first_line=line)
            rest = buffer[end:]
            if not bom_checked:
                bom_checked = True
                if buffer[:3] == BOM:
                    buffer = buffer[3:]
                    end -= 3
            lines = _line_ends(buffer, end)
            line += lines
            want = min(2 * want, size)
            yield buffer[:end], lines
        if rest and not bom_checked and rest[:3] == BOM:
            rest = rest[3:]
        if rest:
            check_lines(rest, source, first_line=line)
            yield rest, _line_ends(rest, len(rest))


def _line_ends(text: bytes, end: int) -> int:
    """The number of line ends in ``text[:end]``: counted by numpy (a quarter of ``bytes.count``'s time
    on a 16 MiB chunk, without the GIL held: the chunks' thread is a streamed run's longest), a slice
    at a time so that the comparison's mask stays small (not one byte per byte of the chunk)."""
    data = np.frombuffer(text, dtype=np.uint8, count=end)
    return sum(int(np.count_nonzero(data[i : i + _COUNT_SLICE] == 10)) for i in range(0, end, _COUNT_SLICE))


_COUNT_SLICE = 1 << 18
"""Bytes compared at a time by :func:`_line_ends` (its mask fits the caches)."""
