"""TREC text files, read into frames: the fast path, the slow path and the messages that name a bad line.

Fields are separated by runs of whitespace (space, tab, CR, VT, FF, as C's ``isspace``). Blank lines
and lines whose first non-blank character is ``#`` are skipped; a ``#`` later in a line is data (docnos
like ``msmarco_v2.1_doc_50_2286987788#13_3087841662``). Files may be gzip-compressed (recognised by
their magic bytes, not their name); ``-`` is standard input. Every bad line is an
:class:`~irspec.errors.InputError` naming the source, the 1-based physical line and the query.

How reading works, and why (a 5,000,000-line run on 2 cores; benchmarks/README.md has the numbers):

1. A plain file is memory-mapped for a few memchr-fast scans, and polars then reads it by path (no
   copy of the whole file in Python); other inputs are read a piece at a time (gunzipped a piece at a
   time). A line longer than :data:`~irspec.lines.MAX_LINE` (1 MiB: binary data, ``/dev/zero``) is an
   error naming it, raised before it is held whole (the scans are a few searches per MiB). If the content is
   split by single spaces, or by single tabs with no space anywhere, and no line starts with one, it
   goes to the fast path as it is (a numpy scan checks this: an empty field would shift the columns
   after it). Otherwise (CR, VT, FF, tabs mixed with spaces, doubled or leading blanks) whitespace is
   first normalised with numpy, in chunks: every run of blanks becomes one space, leading blanks go,
   newlines stay, so line numbers do not change.
2. Fast path: polars' CSV reader with typed columns (score Float64, label and rank Int64), about
   0.3 s. Polars turns an empty field into null and a blank line into an all-null row, so "no nulls in
   the required columns" proves every line is a well-formed data line, and row ``i`` is physical line
   ``i + 1``. If some line starts with ``#``, polars skips those lines (``comment_prefix``) and the
   numbers of the other lines are counted from the bytes with numpy.
3. Any doubt (a parse error, a null) sends the bytes to the slow path: whitespace
   normalised, every column read as text, one row per physical line, comment and blank rows masked,
   casts that turn bad values into nulls. The earliest bad line is then diagnosed on its own in Python,
   so the message is exact. A file that is merely untidy (blank lines, indented comments, double
   spaces) is read correctly by the slow path, only more slowly.

The checks every input kind shares (finite scores, duplicates) are :mod:`irspec.data`'s.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, NamedTuple, Union

import numpy as np

from irspec.data.kinds import QRELS, RUN, Kind
from irspec.errors import InputError, InputTypeError, label_out_of_range, quote
from irspec.lazy import lazy_module
from irspec.lines import MAX_LINE, READ_SIZE, check_lines, count_newlines

if TYPE_CHECKING:
    import mmap
    import zlib

    import polars as pl
else:
    pl = lazy_module("polars")
    # extension modules, loaded by a large file (mapped) or a gzipped one: most small runs need neither
    mmap = lazy_module("mmap")
    zlib = lazy_module("zlib")

Source = Union[str, "os.PathLike[str]", IO[bytes], IO[str]]
if TYPE_CHECKING:
    Buffer = Union[bytes, mmap.mmap]  # noqa: UP007

GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of gzip data: how a compressed file is told, whatever its name."""
BOM = b"\xef\xbb\xbf"
"""UTF-8's byte order mark, dropped from the start of a file."""
# C isspace() minus newline: what trec_eval accepts between fields.
_WS_CHARS = " \t\r\x0b\x0c"
_WS_SPLIT = r"[ \t\r\x0b\x0c]+"  # compiled by re when first used: the small and numpy readers never use it
_WS_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
_NORMALISE_CHUNK = 1 << 18
GUNZIP_OUT = 16 << 20
"""The most decompressed at once: big enough that a file's pieces join cheaply, small enough to hold."""


class Text(NamedTuple):
    """A TREC file, read."""

    frame: pl.DataFrame
    """Columns query, docno, <value>, line (1-based, UInt32) in file order; every line well-formed, not
    yet checked for finiteness and duplicates."""
    source: str
    """The name that messages give the input."""
    name: str | None
    """A run's name: its file's stem (:func:`stem`), else (standard input, a stream without a file name)
    its runid; None for qrels, or when there is neither."""
    runid: str | None = None
    """A run's runid: the 6th field of its last data line, as trec_eval keeps it; None for qrels or
    when no line has one."""


def read_text(src: Source, kind: Kind, source: str | None = None) -> Text:
    """Read TREC qrels or a TREC run (``kind``) from a path, ``"-"`` for standard input, or an open file.
    ``source`` overrides the name used in error messages."""
    return _text(_read_raw(src, source, kind), kind)


def text_of(data: bytes, kind: Kind, source: str) -> Text:
    """What :func:`read_text` reads from a file named ``source`` whose content is ``data`` (read already,
    not compressed): the general reader of a file a small reader (:mod:`irspec.data.small`) read."""
    return _text(_Raw(data, source, stem(source)), kind)


def _text(raw: _Raw, kind: Kind) -> Text:
    frame = _parse(raw, kind)
    runid = _runid(raw.data, frame) if kind is RUN else None
    return Text(frame, raw.name, (raw.stem or runid) if kind is RUN else None, runid)


def parse_text(data: bytes, kind: Kind, source: str) -> Text:
    """Qrels or a run (``kind``) from TREC text already in memory and decompressed: a whole file, or a
    chunk of whole lines of one (the streaming reader's, :mod:`irspec.data.stream`; its line numbers count
    from the chunk's start). A run's ``runid`` is the runid of the chunk's last data line, or None (its
    ``name`` too: a chunk has no file name)."""
    frame = _parse(_Raw(data, source, None), kind)
    runid = _runid(data, frame) if kind is RUN else None
    return Text(frame, source, runid, runid)


# --------------------------------------------------------------------------------------------------
# Getting the bytes


class _Raw:
    """The content of an input, decompressed."""

    # a plain class: a dataclass compiles three methods as the module loads (~0.3 ms of every command
    # that reads a file, issue 35)
    __slots__ = ("data", "name", "path", "stem")

    def __init__(self, data: Buffer, name: str, stem: str | None, path: str | None = None) -> None:
        self.data = data  # bytes, or a read-only mmap of a plain file
        self.name = name  # for messages
        self.stem = stem  # for a run's name
        self.path = path  # a file polars may read itself because it holds exactly ``data``


def _read_raw(src: Any, source: str | None, kind: Kind | None = None) -> _Raw:
    if isinstance(src, (str, os.PathLike)):
        path = os.fspath(src)
        if path == "-":
            name = source or "<stdin>"
            raw = _Raw(_read_stream(sys.stdin.buffer, name, kind), name, stem(name))
        else:
            name = source or path
            try:
                raw = _read_file(path, name)
            except FileNotFoundError:
                raise InputError("no such file", source=name) from None
            except IsADirectoryError:
                raise InputError("is a directory, not a file", source=name) from None
            except OSError as e:
                raise InputError(f"cannot read: {e.strerror or e}", source=name) from None
    elif hasattr(src, "read"):
        fname = getattr(src, "name", None)
        name = source or (fname if isinstance(fname, str) else "<stream>")
        raw = _Raw(_read_stream(src, name, kind), name, stem(name))
    else:
        raise InputTypeError(
            f"expected a path, '-' or an open file, got {type(src).__name__} {quote(src, 40)}"
        )
    if raw.data[:3] == BOM:
        raw = _Raw(bytes(raw.data[3:]), raw.name, raw.stem)
    return raw


_READ_WHOLE = 16 << 20
"""A regular file of at most this many bytes is read whole, and polars parses the bytes in hand (a
tenth faster than it reads the file itself); a larger one is mapped, its first MiB checked first."""


def _read_file(path: str, name: str) -> _Raw:
    """A small regular file is read whole (:data:`_READ_WHOLE`). A larger one is mapped, not read: the
    checks scan the map, and polars reads the file itself (saves a copy of the whole file: time and
    peak memory). Anything else (a pipe, a device) is read as a stream."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if stat.S_ISREG(st.st_mode) and 0 < st.st_size <= _READ_WHOLE:
            return _checked_raw(f.read(st.st_size), name)
        if stat.S_ISREG(st.st_mode) and st.st_size > 0:
            head = f.read(MAX_LINE + 1)
            if head[:2] != GZIP_MAGIC:
                # binary garbage is told from its first MiB, before the file is mapped: MAP_POPULATE reads
                # every page (a 1 GB file of NUL bytes made a 1.1 GB peak)
                check_lines(head, name)
            try:
                # MAP_POPULATE (Linux) maps every page in one call: the checks read them all anyway, and
                # one call is much cheaper than a page fault per 4 KiB.
                if hasattr(mmap, "MAP_POPULATE"):
                    flags = mmap.MAP_SHARED | mmap.MAP_POPULATE
                    data: Buffer = mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ)
                else:  # Windows, macOS
                    data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                pass
            else:
                return _checked_raw(data, name, path)
        return _Raw(_read_stream(f, name), name, stem(name))


def _checked_raw(data: Buffer, name: str, path: str | None = None) -> _Raw:
    """A file's whole content, gunzipped if it is gzip, its lines checked; ``path`` the file polars may
    read itself (text that is not gzip)."""
    if data[:2] == GZIP_MAGIC:
        pieces = (data[i : i + READ_SIZE] for i in range(0, len(data), READ_SIZE))
        return _Raw(_checked_join(gunzip(pieces, name), name), name, stem(name))
    check_lines(data, name)
    return _Raw(data, name, stem(name), None if path is None else os.path.abspath(path))


def _read_stream(f: IO[bytes] | IO[str], name: str, kind: Kind | None = None) -> bytes:
    """All of a stream (gunzipped if it is gzip), read a piece at a time with its lines checked as they
    come: an endless line (``/dev/zero``, a gzip bomb) is refused after about a MiB, not held whole; with
    the ``kind`` of its content, its first lines are parsed as soon as they have come, so that a stream
    that is no TREC text (``yes``) is refused at its first line, not read to its end."""
    pieces = _byte_pieces(f)
    head = b""
    for piece in pieces:  # two bytes tell gzip; a pipe may give fewer at first
        head += piece
        if len(head) >= 2:
            break
    text = itertools.chain([head], pieces)
    check = None if kind is None else lambda data: check_head(data, kind, name)
    return _checked_join(gunzip(text, name) if head[:2] == GZIP_MAGIC else text, name, check)


def check_head(data: Buffer, kind: Kind, source: str) -> None:
    """Parse the whole lines among the first :data:`HEAD_CHECK` bytes of ``data`` as ``kind`` (a TREC
    error names its line): a stream's start, checked before the rest is read or spooled, so that a
    stream of no TREC text (``yes``) is refused at its first line rather than at its end, which an endless
    one never reaches."""
    head = bytes(data[:HEAD_CHECK])
    lines = head[: head.rfind(b"\n") + 1]
    check_lines(lines, source)
    _parse(_Raw(lines, source, None), kind)


def _byte_pieces(f: IO[bytes] | IO[str]) -> Iterator[bytes]:
    """``f``'s content, :data:`~irspec.lines.READ_SIZE` at a time, as bytes (text is encoded as UTF-8)."""
    while piece := f.read(READ_SIZE):
        if isinstance(piece, str):
            yield piece.encode("utf-8")
        elif isinstance(piece, (bytes, bytearray, memoryview)):
            yield bytes(piece)
        else:
            raise TypeError(f"{type(f).__name__}.read() returned {type(piece).__name__}")


def _checked_join(pieces: Iterable[bytes], name: str, on_head: Callable[[bytes], Any] | None = None) -> bytes:
    """The pieces joined, every line checked (:func:`~irspec.lines.check_lines`): reading stops as soon
    as the last line has gone on for more than :data:`~irspec.lines.MAX_LINE` bytes without an end.
    ``on_head`` is given what has come once it holds :data:`HEAD_CHECK` bytes (:func:`check_head`)."""
    parts = []
    tail = 0  # bytes of the last line, not yet ended
    size = 0
    for piece in pieces:
        parts.append(piece)
        size += len(piece)
        end = piece.rfind(b"\n")
        tail = tail + len(piece) if end < 0 else len(piece) - end - 1
        if tail > MAX_LINE:
            break
        if on_head is not None and size >= HEAD_CHECK and size > tail:
            head = b"".join(parts)
            on_head(head)
            on_head = None
            parts = [head]
    data = b"".join(parts)
    check_lines(data, name)
    return data


HEAD_CHECK = 1 << 20
"""The bytes of a stream's first lines parsed before the rest is read or spooled (:func:`check_head`)."""


def gunzip(pieces: Iterable[Buffer], source: str, out_size: int = GUNZIP_OUT) -> Iterator[bytes]:
    """The decompressed content of gzip data given in pieces, every member (``cat a.gz b.gz`` is valid
    gzip), at most ``out_size`` bytes at a time: a few MB of compressed zeros hold gigabytes, which must
    reach the line check a piece at a time. Plain zlib: faster than :mod:`gzip`. Corrupt or cut data is
    an :class:`~irspec.errors.InputError` naming ``source``."""
    try:
        yield from _inflate(iter(pieces), out_size)
    except (EOFError, zlib.error) as e:
        raise InputError(f"corrupt gzip data: {e}", source=source) from None


def _inflate(pieces: Iterator[Buffer], out_size: int) -> Iterator[bytes]:
    d = zlib.decompressobj(wbits=31)
    pending: Buffer = b""  # compressed input not yet given to ``d``
    while True:
        if not pending:
            out = d.decompress(b"", out_size)  # output zlib holds back from the last call, if any
            if out:
                yield out
                continue
            pending = next(pieces, b"")
            if not pending:
                break
        out = d.decompress(pending, out_size)
        pending = d.unconsumed_tail
        if out:
            yield out
        if d.eof:
            rest = d.unused_data
            while len(rest) < 2 and (more := next(pieces, b"")):  # two bytes tell another member
                rest += bytes(more)
            if not rest:
                return
            if rest[:2] != GZIP_MAGIC:  # gzip allows trailing zero padding, nothing else
                for tail in itertools.chain([rest], pieces):
                    if bytes(tail).strip(b"\x00"):
                        raise EOFError("trailing garbage after the compressed data")
                return
            d, pending = zlib.decompressobj(wbits=31), rest
    if not d.eof:
        raise EOFError("compressed data ended before the end-of-stream marker")


def stem(name: str) -> str | None:
    """A run's name from its file name, the one rule wherever a run comes from a file (the command line,
    ``irspec.evaluate``, a plan's globs, a system's runs): ``bm25`` for ``runs/bm25.run.gz``; None for
    a name that is no file's (``<stdin>``)."""
    if name.startswith("<") and name.endswith(">"):
        return None
    # pathlib's name and stem, read with os.path: pathlib's import (with urllib.parse's and ipaddress's)
    # is ~3% of a small evaluation (tests/test_data.py holds the two equal)
    parts = os.path.splitdrive(name)[1].replace(os.altsep or os.sep, os.sep).split(os.sep)
    base = next((part for part in reversed(parts) if part not in ("", ".")), "")  # as PurePath parses
    if base.endswith(".gz"):
        base = base[:-3]
    dot = base.rfind(".")
    return (base[:dot] if 0 < dot < len(base) - 1 else base) or None


# --------------------------------------------------------------------------------------------------
# Parsing


def _normalise(data: Buffer) -> bytes:
    """Every run of whitespace becomes one space and leading whitespace goes; newlines stay, so physical
    line numbers do not change. Vectorised with numpy, in cache-sized chunks (less memory, no slower)."""
    parts = []
    view = memoryview(data)
    # True when the byte before the chunk is a space or a newline (or the chunk starts the file): a
    # space there is then dropped.
    after_blank = True
    for start in range(0, len(view), _NORMALISE_CHUNK):
        c = np.frombuffer(
            bytes(view[start : start + _NORMALISE_CHUNK]).translate(_WS_TO_SPACE), dtype=np.uint8
        )
        space = c == 32
        drop = np.empty_like(space)
        drop[0] = after_blank
        np.logical_or(space[:-1], c[:-1] == 10, out=drop[1:])
        np.logical_and(space, drop, out=drop)
        parts.append(c[~drop].tobytes())
        after_blank = bool(c[-1] == 32 or c[-1] == 10)
    view.release()
    return b"".join(parts)


def _separator(data: Buffer) -> str | None:
    """The one separator the fast path can split ``data`` on, or None if whitespace must be normalised
    first. Polars reads an empty field wherever a line starts with the separator or two separators meet,
    and every field after it lands one column late: a run's rank would be read as its score. Whether
    that happens is found by a scan rather than by the fast path's null checks, because a run's fast
    path does not read the iter and rank columns at all."""
    # Single-byte searches are memchr-fast.
    if any(data.find(ch) >= 0 for ch in (b"\r", b"\x0b", b"\x0c")):
        return None
    sep = " "
    if data.find(b"\t") >= 0:
        if data.find(b" ") >= 0:
            return None
        sep = "\t"  # tab-separated, no spaces at all
    return None if _empty_fields(data, ord(sep)) else sep


CARRIAGE_RETURN = (
    "a carriage return (\\r) inside the line: lines ended by \\r alone (classic Mac OS) are not read as "
    "lines; convert them to newlines (tr '\\r' '\\n')"
)
"""The message of a line with a carriage return followed by more of it (every reader's, Spark's too)."""


def _check_carriage_returns(data: Buffer, source: str) -> None:
    """Refuse a carriage return followed, on its line, by more than blanks. One before a newline (a
    Windows line end) or among trailing blanks is a blank, as trec_eval reads it. But trec_eval reads a
    file whose lines end in ``\\r`` alone as one line, of which it takes the first record's six fields and
    ignores the rest: every other document would be dropped without a word."""
    if data.find(b"\r") < 0:  # memchr: the normalised files with other blanks are not scanned
        return
    a = np.frombuffer(data, dtype=np.uint8)
    for start in range(0, len(a), _NORMALISE_CHUNK):
        returns = np.flatnonzero(a[start : start + _NORMALISE_CHUNK] == 13) + start
        after = returns + 1
        # most are a Windows line end's: only the others are looked at, one by one
        for at in returns[(after < len(a)) & (a[np.minimum(after, len(a) - 1)] != 10)].tolist():
            end = data.find(b"\n", at)
            rest = bytes(data[at : end if end >= 0 else len(data)])
            if rest.translate(None, b" \t\r\x0b\x0c"):
                raise InputError(CARRIAGE_RETURN, source, 1 + count_newlines(data, at))


def _empty_fields(data: Buffer, sep: int) -> bool:
    """Whether some line of ``data`` starts with byte ``sep`` or has two in a row. Numpy over
    cache-sized slices: ~0.03 s for 180 MB, where ``bytes.find`` of a two-byte needle takes ~0.3 s."""
    a = np.frombuffer(data, dtype=np.uint8)
    if len(a) and a[0] == sep:
        return True
    for start in range(1, len(a), _NORMALISE_CHUNK):
        c = a[start - 1 : start + _NORMALISE_CHUNK]  # one byte of overlap: pairs across the seam count
        at_sep = c == sep
        if ((at_sep[:-1] | (c[:-1] == 10)) & at_sep[1:]).any():
            return True
    return False


def _columns(n: int) -> list[str]:
    return [f"column_{i}" for i in range(1, n + 1)]


def _csv(
    source: Buffer | str,
    schema: dict[str, Any],
    separator: str = " ",
    comment_prefix: str | None = None,
    columns: list[str] | None = None,
) -> pl.DataFrame:
    return pl.read_csv(
        source,  # type: ignore[arg-type]  # an mmap reads as bytes; polars' annotation leaves it out
        separator=separator,
        has_header=False,
        schema=schema,
        columns=columns,
        quote_char=None,
        comment_prefix=comment_prefix,
        truncate_ragged_lines=True,
        extra_columns="ignore",
        missing_columns="insert",
        raise_if_empty=False,
        glob=False,
    )


def _parse(raw: _Raw, kind: Kind) -> pl.DataFrame:
    """Columns query, docno, <value>, line in file order, every line well-formed (not yet checked:
    finiteness and duplicates)."""
    data = raw.data
    csv_source: Buffer | str | None = raw.path
    sep = _separator(data)
    if sep is None:
        _check_carriage_returns(data, raw.name)
        data = csv_source = _normalise(data)
        sep = " "
    comments = _has_comment_lines(data)
    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        # Polars maps the file itself; our scans are done, so let our mapping's pages go rather than
        # count the file twice in the peak memory (they come back if the slow path needs them).
        data.madvise(mmap.MADV_DONTNEED)
    frame = _parse_fast(data, kind, sep, csv_source, comments)
    if frame is None:
        frame = _parse_slow(data if data is not raw.data else _normalise(data), kind, raw.name)
    return frame


def _has_comment_lines(data: Buffer) -> bool:
    """Whether a line starts with ``#`` (leading blanks are gone once normalised). The two-byte search
    is only made when there is a ``#`` at all."""
    return data.find(b"#") >= 0 and (data[:1] == b"#" or data.find(b"\n#") >= 0)


def _parse_fast(
    data: Buffer,
    kind: Kind,
    separator: str = " ",
    csv_source: Buffer | str | None = None,
    comments: bool | None = None,
) -> pl.DataFrame | None:
    """The frame if every line is a well-formed data line or a comment line, else None (without saying
    why). ``csv_source`` is what polars reads if not ``data`` itself: the file that holds it.
    ``comments`` says whether a line starts with ``#``, if already known: polars then skips such lines,
    and the line numbers of the others are counted from the bytes."""
    if comments is None:
        comments = _has_comment_lines(data)
    c = _columns(5)
    schema: dict[str, type[pl.DataType]] = dict.fromkeys(c, pl.String)
    schema[c[3]] = pl.Int64  # typed columns parse faster than text
    keep = None
    if kind is RUN:
        schema[c[4]] = pl.Float64
        # A score in the 5th field proves the 2nd and 4th are there; iter and rank are ignored, so
        # they are not materialised (a fifth less memory and time for a 5M-line run).
        keep = [c[0], c[2], c[4]]
    try:
        df = _csv(
            data if csv_source is None else csv_source, schema, separator, "#" if comments else None, keep
        )
    except pl.exceptions.PolarsError:
        return None
    required = [k for k in c[: kind.min_fields] if k in df.columns]
    nulls = df.null_count().row(0, named=True)
    if any(nulls[k] for k in required):
        return None
    if kind.max_fields == 4 and nulls[c[4]] != df.height:  # qrels keep every column: 4 fields exactly
        return None
    if comments:
        numbers = pl.Series("line", _non_comment_lines(data))
        if len(numbers) != df.height:  # polars and we disagree on what a comment line is: play safe
            return None
    else:  # made by polars: its first numpy column would import numpy.ma (6 ms)
        numbers = pl.int_range(1, df.height + 1, dtype=pl.UInt32, eager=True).alias("line")
    # The frame put together from its columns, not by a query (a sixth of a small run's checks)
    return pl.DataFrame(
        [
            df.get_column(c[0]).alias("query"),
            df.get_column(c[2]).alias("docno"),
            df.get_column(c[kind.value_field]).alias(kind.value),
            numbers,
        ]
    )


def _non_comment_lines(data: Buffer) -> np.ndarray:
    """1-based numbers (UInt32) of the lines that do not start with ``#``."""
    a = np.frombuffer(data, dtype=np.uint8)
    if len(a) == 0:
        return np.zeros(0, dtype=np.uint32)
    starts = np.flatnonzero(a == 10) + 1
    starts = starts[starts < len(a)]  # a final newline starts no line
    comment = np.empty(len(starts) + 1, dtype=bool)
    comment[0] = a[0] == 35
    comment[1:] = a[starts] == 35
    return (np.flatnonzero(~comment) + 1).astype(np.uint32)


def _parse_slow(data: Buffer, kind: Kind, source: str) -> pl.DataFrame:
    """Read normalised bytes one row per physical line; raise for the first bad line."""
    c = _columns(5)
    try:
        df = _csv(data, dict.fromkeys(c, pl.String))
    except pl.exceptions.PolarsError as e:
        _raise_undecodable(data, source, e)
    df = df.with_row_index("line", offset=1)
    value_dtype = pl.Int64 if kind is QRELS else pl.Float64
    is_data = pl.col(c[0]).is_not_null() & ~pl.col(c[0]).str.starts_with("#")
    bad_count = pl.any_horizontal([pl.col(k).is_null() for k in c[: kind.min_fields]])
    if kind.max_fields == 4:
        bad_count = bad_count | pl.col(c[4]).is_not_null()
    value = pl.col(c[kind.value_field]).cast(value_dtype, strict=False)
    df = df.filter(is_data).with_columns(value.alias(kind.value), bad_count.alias("_bad"))
    bad = df.filter(pl.col("_bad") | pl.col(kind.value).is_null())
    if bad.height:
        line = int(bad["line"].min())  # type: ignore[arg-type]  # a non-empty UInt32 column's min is an int
        _diagnose(_line_text(data, line), kind, source, line)
    return df.select(
        pl.col(c[0]).alias("query"),
        pl.col(c[2]).alias("docno"),
        pl.col(kind.value),
        pl.col("line").cast(pl.UInt32),
    )


def _line_text(data: Buffer, line: int) -> str:
    """Physical line ``line`` (1-based) of ``data``."""
    if line <= 4096:  # the common case (an early bad line, the first data line): no full scan
        start = 0
        for _ in range(line - 1):
            start = data.find(b"\n", start) + 1
        end = data.find(b"\n", start)
    else:
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        start = int(newlines[line - 2]) + 1
        end = int(newlines[line - 1]) if line - 1 < len(newlines) else -1
    return data[start : end if end >= 0 else len(data)].decode("utf-8", errors="replace")


def _last_data_line(data: Buffer) -> str:
    """The last line that is neither blank nor a comment, found from the end (no scan of the file)."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1  # this line's start (its own newline, if any, excluded)
        text = data[start:end].decode("utf-8", errors="replace").strip(_WS_CHARS + "\n")
        if text and not text.startswith("#"):
            return text
        end = start
    return ""


def _diagnose(text: str, kind: Kind, source: str, line: int) -> None:
    """Raise the InputError that says what is wrong with this one data line."""
    fields = re.split(_WS_SPLIT, text.strip(_WS_CHARS))
    query = fields[0] if fields and fields[0] else None
    if not kind.count_ok(len(fields)):
        raise InputError(f"expected {kind.expected}, got {len(fields)}", source, line, query)
    raw = fields[kind.value_field]
    if kind is QRELS:
        if re.fullmatch(r"[+-]?[0-9]+", raw):  # an integer, but beyond 64 bits
            raise InputError(label_out_of_range(raw), source, line, query)
        raise InputError(f"label must be an integer, got {quote(raw)}", source, line, query)
    raise InputError(f"score must be a number, got {quote(raw)}", source, line, query)


def _raise_undecodable(data: Buffer, source: str, error: Exception) -> None:
    text = bytes(data)  # an mmap has no count()
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as e:
        line = text.count(b"\n", 0, e.start) + 1
        raise InputError("not UTF-8 text", source, line) from None
    raise InputError(f"cannot parse: {error}", source) from None


def _runid(data: Buffer, frame: pl.DataFrame) -> str | None:
    """The 6th field of the last data line, if it has one: trec_eval keeps the last line's tag, and
    ``--format trec`` prints the same runid line."""
    if frame.height == 0:
        return None
    fields = re.split(_WS_SPLIT, _last_data_line(data).strip(_WS_CHARS))
    return fields[5] if len(fields) >= 6 else None
