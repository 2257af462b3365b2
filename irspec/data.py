"""Qrels and runs as immutable, columnar polars DataFrames, and the readers that build them.

Input formats (see METRICS.md, "Input formats"):

- qrels: ``qid iter docno label``, exactly 4 fields; ``label`` an integer (negative allowed).
- run: ``qid iter docno rank score [runid]``, at least 5 fields; ``rank`` must be present but is
  ignored, ``score`` must be a finite number, fields after ``runid`` are ignored (as trec_eval does:
  its own test file ``results.trunc`` has them).

Fields are separated by runs of whitespace (space, tab, CR, VT, FF, as C's ``isspace``). Blank lines
and lines whose first non-blank character is ``#`` are skipped; a ``#`` later in a line is data (docnos
like ``msmarco_v2.1_doc_50_2286987788#13_3087841662``). Files may be gzip-compressed (recognised by
their magic bytes, not their name); ``-`` is standard input. A docno may appear only once per query.
Every problem is an :class:`~irspec.errors.InputError` naming the source, the 1-based physical line
and the query.

How reading works, and why (a 5,000,000-line run on 2 cores; benchmarks/README.md has the numbers):

1. A plain file is memory-mapped for a few memchr-fast scans, and polars then reads it by path (no
   copy of the whole file in Python); other inputs are read whole (and gunzipped). If the content is
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
4. Both paths end in the same checks: finite scores, and duplicates, found by sorting one 64-bit hash
   of ``(query, docno)`` per row (equal pairs always hash equal; a collision only costs an exact
   re-check). Qrels are then sorted by query and docno; runs keep file order.
"""

from __future__ import annotations

import math
import mmap
import numbers
import os
import re
import stat
import sys
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Union

import numpy as np

from irspec.datasets import is_dataset_id, qrels_frame
from irspec.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

__all__ = ["Qrels", "Run", "read_qrels", "read_run"]

Source = Union[str, "os.PathLike[str]", IO[bytes], IO[str]]  # noqa: UP007 (a runtime alias on 3.10)
Buffer = Union[bytes, mmap.mmap]  # noqa: UP007

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
# C isspace() minus newline: what trec_eval accepts between fields.
_WS_CHARS = " \t\r\x0b\x0c"
_WS_SPLIT = re.compile(r"[ \t\r\x0b\x0c]+")
_WS_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
_NORMALISE_CHUNK = 1 << 18


def _pl() -> Any:
    """polars, imported on first use so that ``import irspec`` stays light."""
    import polars

    return polars


@dataclass(frozen=True)
class _Format:
    kind: str  # "qrels" or "run"
    value: str  # name of the value column: "label" or "score"
    value_field: int  # 0-based index of the value among the fields
    min_fields: int
    max_fields: int | None
    expected: str

    def count_ok(self, n: int) -> bool:
        return n >= self.min_fields and (self.max_fields is None or n <= self.max_fields)


_QRELS = _Format("qrels", "label", 3, 4, 4, "4 fields 'qid iter docno label'")
_RUN = _Format("run", "score", 4, 5, None, "at least 5 fields 'qid iter docno rank score [runid]'")


# --------------------------------------------------------------------------------------------------
# The two objects


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments.

    ``frame`` has columns ``query`` (String), ``docno`` (String), ``label`` (Int64) and ``line``
    (UInt32, the 1-based line in ``source``; null for dict or DataFrame input), sorted by query then
    docno, one row per judgment; a docno appears at most once per query.
    """

    frame: pl.DataFrame
    source: str

    @classmethod
    def read(cls, path_or_file: Source, *, source: str | None = None) -> Qrels:
        """Read a TREC qrels file (``qid iter docno label``): a path, ``"-"`` for standard input, or an
        open file. ``source`` overrides the name used in error messages."""
        raw = _read_raw(path_or_file, source)
        frame = _parse(raw, _QRELS)
        return cls(_finish(frame, _QRELS, raw.name)[0], raw.name)

    @classmethod
    def from_dict(cls, d: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Qrels from pytrec_eval's shape ``{qid: {docno: label}}``; labels must be integers."""
        frame = _frame_from_dict(d, _QRELS, "<dict>")
        return cls(_finish(frame, _QRELS, "<dict>")[0], "<dict>")

    @classmethod
    def from_frame(cls, df: Any, *, source: str = "<DataFrame>") -> Qrels:
        """Qrels from a pandas or polars DataFrame with columns ``query_id``, ``doc_id`` and
        ``relevance`` (other columns are ignored); ``source`` names it in messages."""
        frame = _frame_from_frame(df, _QRELS, source)
        return cls(_finish(frame, _QRELS, source)[0], source)

    @cached_property
    def query_ids(self) -> list[str]:
        """The judged query ids, sorted."""
        return _query_ids(self.frame)

    def __len__(self) -> int:
        """The number of judgments."""
        return self.frame.height

    def __repr__(self) -> str:
        return f"Qrels(source={self.source!r}, queries={len(self.query_ids)}, judgments={len(self)})"


@dataclass(frozen=True, eq=False)
class Run:
    """A ranked run.

    ``frame`` has columns ``query`` (String), ``docno`` (String), ``score`` (Float64, finite) and
    ``line`` (UInt32 1-based source line, or null for dict or DataFrame input), in source order; a
    docno appears at most once per query. The rank column of a TREC file is not kept: rankings come
    from the scores. ``name`` is the runid (6th field) of the last data line, else the file's stem,
    else ``"run"``.
    """

    frame: pl.DataFrame
    name: str
    source: str
    keys: np.ndarray | None = field(default=None, repr=False)
    """:func:`pair_keys` of ``frame``, kept from the duplicate check so the evaluation need not hash again."""

    @classmethod
    def read(cls, path_or_file: Source, *, source: str | None = None) -> Run:
        """Read a TREC run file (``qid iter docno rank score [runid]``): a path, ``"-"`` for standard
        input, or an open file. ``source`` overrides the name used in error messages."""
        raw = _read_raw(path_or_file, source)
        frame = _parse(raw, _RUN)
        name = _runid(raw.data, frame) or raw.stem or "run"
        frame, keys = _finish(frame, _RUN, raw.name)
        return cls(frame, name, raw.name, keys)

    @classmethod
    def from_dict(cls, d: Mapping[str, Mapping[str, float]], name: str = "run") -> Run:
        """A run from pytrec_eval's shape ``{qid: {docno: score}}``; scores must be finite numbers."""
        frame, keys = _finish(_frame_from_dict(d, _RUN, "<dict>"), _RUN, "<dict>")
        return cls(frame, name, "<dict>", keys)

    @classmethod
    def from_frame(cls, df: Any, name: str = "run") -> Run:
        """A run from a pandas or polars DataFrame with columns ``query_id``, ``doc_id`` and ``score``
        (other columns, such as a rank, are ignored)."""
        frame, keys = _finish(_frame_from_frame(df, _RUN, "<DataFrame>"), _RUN, "<DataFrame>")
        return cls(frame, name, "<DataFrame>", keys)

    @cached_property
    def query_ids(self) -> list[str]:
        """The query ids of the run, sorted."""
        return _query_ids(self.frame)

    def __len__(self) -> int:
        """The number of (query, docno) rows."""
        return self.frame.height

    def __repr__(self) -> str:
        return (
            f"Run(name={self.name!r}, source={self.source!r}, queries={len(self.query_ids)}, "
            f"rows={len(self)})"
        )


def read_qrels(src: Any) -> Qrels:
    """Qrels from a path, ``"-"`` (stdin), an open file, a ``{qid: {docno: label}}`` dict, a pandas or
    polars DataFrame, ``"irds:<id>"`` (an ir_datasets dataset's, see :mod:`irspec.datasets`), or a
    :class:`Qrels` (returned as is)."""
    if is_dataset_id(src):
        return Qrels.from_frame(qrels_frame(src), source=src)
    if isinstance(src, Qrels):
        return src
    if isinstance(src, Mapping):
        return Qrels.from_dict(src)
    if _is_dataframe(src):
        return Qrels.from_frame(src)
    if isinstance(src, Run):
        raise TypeError("read_qrels() was given a Run")
    return Qrels.read(src)


def read_run(src: Any) -> Run:
    """A run from a path, ``"-"`` (stdin), an open file, a ``{qid: {docno: score}}`` dict, a pandas or
    polars DataFrame, or a :class:`Run` (returned as is)."""
    if isinstance(src, Run):
        return src
    if isinstance(src, Mapping):
        return Run.from_dict(src)
    if _is_dataframe(src):
        return Run.from_frame(src)
    if isinstance(src, Qrels):
        raise TypeError("read_run() was given a Qrels")
    return Run.read(src)


# --------------------------------------------------------------------------------------------------
# Getting the bytes


@dataclass
class _Raw:
    """The content of an input, decompressed."""

    data: Buffer  # bytes, or a read-only mmap of a plain file
    name: str  # for messages
    stem: str | None  # for a run's name
    path: str | None = None  # a file polars may read itself because it holds exactly ``data``


def _read_raw(src: Any, source: str | None) -> _Raw:
    if isinstance(src, (str, os.PathLike)):
        path = os.fspath(src)
        if path == "-":
            name = source or "<stdin>"
            raw = _Raw(sys.stdin.buffer.read(), name, _stem(name))
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
        data = src.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{type(src).__name__}.read() returned {type(data).__name__}")
        raw = _Raw(bytes(data), name, _stem(name))
    else:
        raise TypeError(f"expected a path, '-' or an open file, got {type(src).__name__}")
    if raw.data[:2] == _GZIP_MAGIC:
        try:
            raw = _Raw(_gunzip(raw.data), raw.name, raw.stem)
        except (EOFError, zlib.error) as e:
            raise InputError(f"corrupt gzip data: {e}", source=raw.name) from None
    if raw.data[:3] == _BOM:
        raw = _Raw(bytes(raw.data[3:]), raw.name, raw.stem)
    return raw


def _read_file(path: str, name: str) -> _Raw:
    """A regular file is mapped, not read: the checks scan the map, and polars reads the file itself
    (saves a copy of the whole file: time and peak memory)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if stat.S_ISREG(st.st_mode) and st.st_size > 0:
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
                return _Raw(data, name, _stem(name), os.path.abspath(path))
        return _Raw(f.read(), name, _stem(name))


def _gunzip(data: Buffer) -> bytes:
    """Decompress gzip data, all members (``cat a.gz b.gz`` is valid gzip). Plain zlib: faster than
    :func:`gzip.decompress`, and a single member is not copied again."""
    parts = []
    while data:
        d = zlib.decompressobj(wbits=31)
        parts.append(d.decompress(data))
        if not d.eof:
            raise EOFError("compressed data ended before the end-of-stream marker")
        data = d.unused_data
        if data[:2] != _GZIP_MAGIC:
            if data.strip(b"\x00"):  # gzip allows trailing zero padding, nothing else
                raise EOFError("trailing garbage after the compressed data")
            break
    return b"".join(parts)


def _stem(name: str) -> str | None:
    if name.startswith("<") and name.endswith(">"):
        return None
    base = Path(name).name
    if base.endswith(".gz"):
        base = base[:-3]
    return Path(base).stem or None


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
    pl = _pl()
    return pl.read_csv(
        source,
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


def _parse(raw: _Raw, fmt: _Format) -> pl.DataFrame:
    """Columns query, docno, <value>, line in file order, every line well-formed (not yet checked:
    finiteness and duplicates)."""
    data, csv_source = raw.data, raw.path
    sep = _separator(data)
    if sep is None:
        data = csv_source = _normalise(data)
        sep = " "
    comments = _has_comment_lines(data)
    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        # Polars maps the file itself; our scans are done, so let our mapping's pages go rather than
        # count the file twice in the peak memory (they come back if the slow path needs them).
        data.madvise(mmap.MADV_DONTNEED)
    frame = _parse_fast(data, fmt, sep, csv_source, comments)
    if frame is None:
        frame = _parse_slow(data if data is not raw.data else _normalise(data), fmt, raw.name)
    return frame


def _has_comment_lines(data: Buffer) -> bool:
    """Whether a line starts with ``#`` (leading blanks are gone once normalised). The two-byte search
    is only made when there is a ``#`` at all."""
    return data.find(b"#") >= 0 and (data[:1] == b"#" or data.find(b"\n#") >= 0)


def _parse_fast(
    data: Buffer,
    fmt: _Format,
    separator: str = " ",
    csv_source: Buffer | str | None = None,
    comments: bool | None = None,
) -> pl.DataFrame | None:
    """The frame if every line is a well-formed data line or a comment line, else None (without saying
    why). ``csv_source`` is what polars reads if not ``data`` itself: the file that holds it.
    ``comments`` says whether a line starts with ``#``, if already known: polars then skips such lines,
    and the line numbers of the others are counted from the bytes."""
    pl = _pl()
    if comments is None:
        comments = _has_comment_lines(data)
    c = _columns(5)
    schema = {name: pl.String for name in c}
    schema[c[3]] = pl.Int64  # typed columns parse faster than text
    keep = None
    if fmt is _RUN:
        schema[c[4]] = pl.Float64
        # A score in the 5th field proves the 2nd and 4th are there; iter and rank are ignored, so
        # they are not materialised (a fifth less memory and time for a 5M-line run).
        keep = [c[0], c[2], c[4]]
    try:
        df = _csv(data if csv_source is None else csv_source, schema, separator, "#" if comments else None, keep)
    except pl.exceptions.PolarsError:
        return None
    required = [k for k in c[: fmt.min_fields] if k in df.columns]
    nulls = df.null_count().row(0, named=True)
    if any(nulls[k] for k in required):
        return None
    if fmt.max_fields == 4 and nulls[c[4]] != df.height:  # qrels keep every column: 4 fields exactly
        return None
    if comments:
        line = pl.Series("line", _non_comment_lines(data))
        if len(line) != df.height:  # polars and we disagree on what a comment line is: play safe
            return None
    else:
        line = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).alias("line")
    return df.select(
        pl.col(c[0]).alias("query"),
        pl.col(c[2]).alias("docno"),
        pl.col(c[fmt.value_field]).alias(fmt.value),
        line,
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


def _parse_slow(data: Buffer, fmt: _Format, source: str) -> pl.DataFrame:
    """Read normalised bytes one row per physical line; raise for the first bad line."""
    pl = _pl()
    c = _columns(5)
    try:
        df = _csv(data, {name: pl.String for name in c})
    except pl.exceptions.PolarsError as e:
        _raise_undecodable(data, source, e)
    df = df.with_row_index("line", offset=1)
    value_dtype = pl.Int64 if fmt is _QRELS else pl.Float64
    is_data = pl.col(c[0]).is_not_null() & ~pl.col(c[0]).str.starts_with("#")
    bad_count = pl.any_horizontal([pl.col(k).is_null() for k in c[: fmt.min_fields]])
    if fmt.max_fields == 4:
        bad_count = bad_count | pl.col(c[4]).is_not_null()
    value = pl.col(c[fmt.value_field]).cast(value_dtype, strict=False)
    df = df.filter(is_data).with_columns(value.alias(fmt.value), bad_count.alias("_bad"))
    bad = df.filter(pl.col("_bad") | pl.col(fmt.value).is_null())
    if bad.height:
        line = int(bad["line"].min())
        _diagnose(_line_text(data, line), fmt, source, line)
    return df.select(
        pl.col(c[0]).alias("query"),
        pl.col(c[2]).alias("docno"),
        pl.col(fmt.value),
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


def _diagnose(text: str, fmt: _Format, source: str, line: int) -> None:
    """Raise the InputError that says what is wrong with this one data line."""
    fields = _WS_SPLIT.split(text.strip(_WS_CHARS))
    query = fields[0] if fields and fields[0] else None
    if not fmt.count_ok(len(fields)):
        raise InputError(f"expected {fmt.expected}, got {len(fields)}", source, line, query)
    raw = fields[fmt.value_field]
    if fmt is _QRELS:
        raise InputError(f"label must be an integer, got {raw!r}", source, line, query)
    raise InputError(f"score must be a number, got {raw!r}", source, line, query)


def _raise_undecodable(data: Buffer, source: str, error: Exception) -> None:
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError("not UTF-8 text", source, line) from None
    raise InputError(f"cannot parse: {error}", source) from None


def _runid(data: Buffer, frame: pl.DataFrame) -> str | None:
    """The 6th field of the last data line, if it has one: trec_eval keeps the last line's tag, and
    ``--format trec`` prints the same runid line."""
    if frame.height == 0:
        return None
    fields = _WS_SPLIT.split(_last_data_line(data).strip(_WS_CHARS))
    return fields[5] if len(fields) >= 6 else None


# --------------------------------------------------------------------------------------------------
# Checks shared by every input kind


def _finish(frame: pl.DataFrame, fmt: _Format, source: str) -> tuple[pl.DataFrame, np.ndarray | None]:
    """Check finiteness and duplicates (rows in source order); sort qrels. Returns the frame and, for
    a run, its :func:`pair_keys`."""
    pl = _pl()
    if fmt is _RUN and not frame.get_column("score").is_finite().all():
        q, d, s, line = frame.filter(~pl.col("score").is_finite()).row(0)
        what = "NaN score" if math.isnan(s) else f"infinite score {s!r} (scores must be finite)"
        raise InputError(f"{what} for docno {d!r}", source, line, q)
    keys = pair_keys(frame)
    _check_duplicates(frame, keys, source)
    if fmt is _QRELS:
        return _sort_qrels(frame), None
    return frame, keys


_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd 64-bit constant that mixes the docno hash in


def pair_keys(frame: pl.DataFrame) -> np.ndarray:
    """A 64-bit key per row from polars' hashes of ``query`` and ``docno``: equal pairs, equal keys.

    Used to find duplicates and, by the engine, to join runs with qrels (in one process: polars' hash
    seeds are fixed there). Two columns hashed separately and mixed in numpy cost a fraction of the
    memory of one polars expression over both.
    """
    keys = frame.get_column("docno").hash().to_numpy()
    if not keys.flags.writeable:  # a view of polars' buffer
        keys = keys.copy()
    with np.errstate(over="ignore"):
        keys *= _MIX
    keys ^= frame.get_column("query").hash().to_numpy()
    return keys


def all_distinct(keys: np.ndarray) -> bool:
    """Whether no two of ``keys`` are equal: sorted, no equal neighbours."""
    ordered = np.sort(keys)
    return not bool((ordered[1:] == ordered[:-1]).any())


def _sort_qrels(frame: pl.DataFrame) -> pl.DataFrame:
    """Sorted by query, then docno. A sort on two string columns is slow (1.6 s for 5M rows), and qrels
    files are nearly always sorted already, or grouped by query (in numeric order: 2 before 10) with
    docnos sorted within each query; a check and a stable sort on the query alone cover those."""
    if _is_sorted(frame):
        return frame
    by_query = frame.sort("query", maintain_order=True)
    if _is_sorted(by_query):
        return by_query
    return frame.sort("query", "docno")


def _is_sorted(frame: pl.DataFrame) -> bool:
    pl = _pl()
    q, d = pl.col("query"), pl.col("docno")
    nq, nd = q.shift(-1), d.shift(-1)
    # Strictly increasing (query, docno) pairs; there are no duplicates by now.
    return bool(frame.select(((nq > q) | ((nq == q) & (nd > d))).fill_null(True).all()).item())


def _check_duplicates(frame: pl.DataFrame, keys: np.ndarray, source: str) -> None:
    pl = _pl()
    if frame.height < 2:
        return
    # Equal (query, docno) pairs always hash equal, so distinct keys prove there is no duplicate.
    # Much cheaper than is_duplicated() on two string columns.
    if all_distinct(keys):
        return
    dup = frame.filter(~pl.struct("query", "docno").is_first_distinct())
    if dup.height == 0:  # a hash collision
        return
    q, d, line = dup.select("query", "docno", "line").row(0)
    first = frame.filter((pl.col("query") == q) & (pl.col("docno") == d))["line"][0]
    seen = f" (first on line {first})" if first is not None else ""
    raise InputError(f"duplicate docno {d!r}{seen}", source, line, q)


def _query_ids(frame: pl.DataFrame) -> list[str]:
    return frame.get_column("query").unique().sort().to_list()


# --------------------------------------------------------------------------------------------------
# dicts and DataFrames


def _frame_from_dict(d: Any, fmt: _Format, source: str) -> pl.DataFrame:
    pl = _pl()
    if not isinstance(d, Mapping):
        raise InputError(
            f"expected a mapping {{qid: {{docno: {fmt.value}}}}}, got {type(d).__name__}", source
        )
    queries: list[str] = []
    docnos: list[Any] = []
    values: list[Any] = []
    for q, docs in d.items():
        if not isinstance(q, str):
            raise InputError(f"query ids must be strings, got {q!r}", source)
        if not isinstance(docs, Mapping):
            raise InputError(
                f"expected a mapping docno -> {fmt.value}, got {type(docs).__name__}", source, query=q
            )
        docnos.extend(docs.keys())
        values.extend(docs.values())
        queries.extend([q] * len(docs))
    try:
        docno = pl.Series("docno", docnos, dtype=pl.String, strict=True)
    except (TypeError, pl.exceptions.PolarsError):
        i = next(i for i, x in enumerate(docnos) if not isinstance(x, str))
        raise InputError(f"docnos must be strings, got {docnos[i]!r}", source, query=queries[i]) from None
    dtype = pl.Int64 if fmt is _QRELS else pl.Float64
    try:
        arr = np.asarray(values) if values else np.zeros(0, dtype=np.int64)
    except (OverflowError, ValueError):  # ints beyond 64 bits, ragged nesting
        arr = np.asarray(values, dtype=object)
    if arr.ndim == 1 and arr.dtype.kind in ("iu" if fmt is _QRELS else "iuf"):
        value = pl.Series(fmt.value, arr)
    else:
        check = _is_label if fmt is _QRELS else _is_score
        i = next((i for i, x in enumerate(values) if not check(x)), None)
        if i is not None:
            raise InputError(_bad_value_message(fmt, values[i], docnos[i]), source, query=queries[i])
        value = pl.Series(fmt.value, [int(x) if fmt is _QRELS else float(x) for x in values])
    try:
        value = value.cast(dtype, strict=True)
    except pl.exceptions.PolarsError as e:
        raise InputError(f"{fmt.value}s out of range: {e}", source) from None
    return pl.DataFrame(
        [
            pl.Series("query", queries, dtype=pl.String),
            docno,
            value,
            pl.Series("line", [None] * len(queries), dtype=pl.UInt32),
        ]
    )


def _is_label(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def _is_score(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _bad_value_message(fmt: _Format, value: Any, docno: Any) -> str:
    if fmt is _QRELS:
        return f"label must be an integer, got {value!r} for docno {docno!r}"
    return f"score must be a number, got {value!r} for docno {docno!r}"


def _is_dataframe(obj: Any) -> bool:
    t = type(obj)
    return t.__name__ == "DataFrame" and t.__module__.split(".")[0] in ("pandas", "polars")


def _frame_from_frame(df: Any, fmt: _Format, source: str) -> pl.DataFrame:
    pl = _pl()
    wanted = ["query_id", "doc_id", "relevance" if fmt is _QRELS else "score"]
    if not _is_dataframe(df):
        raise InputError(f"expected a pandas or polars DataFrame, got {type(df).__name__}", source)
    missing = [c for c in wanted if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}; "
            f"expected columns {', '.join(wanted)}",
            source,
        )
    if isinstance(df, pl.DataFrame):
        cols = [df.get_column(c) for c in wanted]
    else:
        cols = [_series_from_pandas(df[c], c) for c in wanted]
    q, d, v = cols
    ids = [_id_column(s, source) for s in (q, d)]
    value = _value_column(v, fmt, ids, source)
    return pl.DataFrame(
        [
            ids[0].alias("query"),
            ids[1].alias("docno"),
            value.alias(fmt.value),
            pl.Series("line", [None] * len(value), dtype=pl.UInt32),
        ]
    )


def _series_from_pandas(s: Any, name: str) -> pl.Series:
    pl = _pl()
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iufb":
        return pl.Series(name, s.to_numpy())
    # Object, string or nullable extension columns: go through Python objects, nulls as None.
    return pl.Series(name, s.to_numpy(dtype=object, na_value=None), strict=False)


def _id_column(s: pl.Series, source: str) -> pl.Series:
    pl = _pl()
    if s.dtype == pl.String or s.dtype == pl.Categorical or isinstance(s.dtype, pl.Enum):
        out = s.cast(pl.String)
    elif s.dtype.is_integer():
        out = s.cast(pl.String)
    else:
        raise InputError(f"column {s.name!r} must hold strings (or integers), not {s.dtype}", source)
    if out.null_count():
        row = int(out.is_null().arg_true()[0])
        raise InputError(f"missing {s.name} in row {row}", source)
    return out


def _value_column(s: pl.Series, fmt: _Format, ids: list[pl.Series], source: str) -> pl.Series:
    pl = _pl()

    def fail(row: int, message: str) -> None:
        raise InputError(f"row {row}: {message} for docno {ids[1][row]!r}", source, query=ids[0][row])

    if s.null_count():
        fail(int(s.is_null().arg_true()[0]), f"missing {fmt.value}")
    if fmt is _QRELS:
        if s.dtype.is_integer():
            try:
                return s.cast(pl.Int64, strict=True)
            except pl.exceptions.PolarsError:
                fail(int((s > np.iinfo(np.int64).max).arg_true()[0]), "label out of range")
        if s.dtype.is_float():
            integral = s.is_finite() & (s == s.round(0)) & (s.abs() < 2.0**63)
            if integral.all():
                return s.cast(pl.Int64)
            row = int((~integral).arg_true()[0])
            fail(row, f"label must be an integer, got {s[row]!r}")
        raise InputError(f"column 'relevance' must hold integers, not {s.dtype}", source)
    if s.dtype.is_numeric() and s.dtype != pl.Boolean:
        return s.cast(pl.Float64)
    raise InputError(f"column 'score' must hold numbers, not {s.dtype}", source)
