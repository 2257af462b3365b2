"""Small inputs read without polars: TREC files of a few megabytes, and pytrec_eval's dicts of qrels.

Polars takes about a third of a second to import, several times trec_eval's whole process on a run of
50 topics, while reading such a run takes milliseconds in plain Python. The readers here read the
common, clean case and nothing else: a TREC file of ASCII text whose fields are split by single
spaces (or single tabs), every line a data line with as many fields as the others, a run grouped by
query, numbers written as digits (with a sign, a point and an exponent); qrels given as a dict of dicts
of string ids and integer labels. Anything else (a comment or a blank line, gzip, a bad or non-finite
value, a duplicate, a run whose queries are spread over the file, ...) makes them return ``None``, and
the caller reads the input with the general reader, which says what is wrong, in its words: these
readers never raise.

What they make is what the engine evaluates without polars:

- :class:`SmallQrels`, a :class:`~irspec.data.Qrels` whose columns are plain lists and arrays, one row
  for each row of the general reader's frame (sorted by query, then docno): the engine's index is
  built from them (:class:`~irspec.evaluation.index.QrelsIndex`);
- :class:`TextRun`, a run file held as pytrec_eval's dicts are (:class:`~irspec.data.MappingRun`), so
  that its judged documents are looked up in them.

Each makes the general reader's object, from the same bytes (or the same columns, for a dict), when
something asks for it (``SmallQrels.frame``, ``TextRun.run``: a per-query plugin metric, a run read as
a frame against small qrels), so that whatever the engine does with it is what it does with the
general reader's. :func:`small_inputs` tells whether files are small enough for reading them here to
cost less than polars' import.
"""

from __future__ import annotations

import io
import operator
import os
import stat
from collections.abc import Callable, Iterable
from functools import cached_property
from itertools import islice, pairwise
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import numpy as np

from irspec.data import MappingRun, Qrels, Run, checked
from irspec.data.kinds import INT64, QRELS, RUN, Kind
from irspec.data.objects import MappingScores, encodable, no_lines
from irspec.lazy import lazy_module
from irspec.lines import MAX_LINE

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = [
    "SMALL_BELOW",
    "SmallQrels",
    "TextRun",
    "qrels_of_mapping",
    "read_regular",
    "small_inputs",
    "small_qrels",
    "small_run",
]

SMALL_BELOW = 4 << 20
"""Files of at most this many bytes in all are read by this module's readers (:func:`small_inputs`):
a 50-topic run of 1,000 documents is 1.7 MB. Python reads such text at ~15 MB/s (splitting, numbers,
dicts), polars at ~250 MB/s after an import of ~0.3 s: above a few MB, polars is the faster."""

_BYTES_A_JUDGMENT = 16
"""What a judgment weighs against :data:`SMALL_BELOW` in a dict of qrels (a line of a qrels file holds
some 20 bytes): :func:`qrels_of_mapping` reads up to 262,144 judgments."""

_OTHER_BYTES = (b"\0", b"\r", b"\x0b", b"\x0c")
"""Bytes the small readers leave to the general one: a NUL (refused there, naming its line), and the
whitespace besides spaces, tabs and line ends (normalised there first)."""

_LABEL_DIGITS = b"0123456789+-"
"""The characters of a label read here: Python's ``int`` reads text of these alone exactly as polars does
(a sign and digits; no ``0x`` or ``1_000``)."""


def small_inputs(sources: Iterable[Any]) -> bool:
    """Whether every one of ``sources`` is a path to a regular file, and together they hold at most
    :data:`SMALL_BELOW` bytes: then reading them here costs less than importing polars."""
    total = 0
    for src in sources:
        if not isinstance(src, (str, os.PathLike)):
            return False
        try:
            st = os.stat(src)
        except (OSError, ValueError):
            return False
        total += st.st_size
        if not stat.S_ISREG(st.st_mode) or total > SMALL_BELOW:
            return False
    return True


class SmallQrels(Qrels):
    """Qrels read without polars (:func:`small_qrels`, :func:`qrels_of_mapping`): their rows as plain
    columns, sorted by query, then docno, as the general reader's frame has them, row for row. The frame
    itself is made when first asked for, by the general reader."""

    def __init__(
        self,
        source: str,
        columns: tuple[list[str], np.ndarray, list[str], np.ndarray],
        general: Callable[[], Qrels],
    ) -> None:
        object.__setattr__(self, "source", source)
        query_ids, codes, docnos, labels = columns
        object.__setattr__(self, "query_ids", query_ids)
        object.__setattr__(self, "plain", (query_ids, codes, labels, docnos))
        object.__setattr__(self, "_general", general)

    _general: Callable[[], Qrels]
    plain: tuple[list[str], np.ndarray, np.ndarray, list[str]]
    """``(query_ids, codes, labels, docnos)``: the judged query ids sorted, and for each row its query's
    code (its place among them), its label and its docno."""

    @cached_property
    def frame(self) -> Any:  # a field of Qrels, made here when first asked for
        """The general reader's frame of the same input."""
        return self._general().frame

    def subset(self, rows: np.ndarray) -> SmallQrels:
        """The qrels of ``rows`` alone (ascending; each query's rows all or none): what
        ``Qrels(self.frame[rows], self.source)`` is, made without polars."""
        _, codes, labels, docnos = self.plain
        kept = codes[rows]
        present = np.unique(kept)
        query_ids = [self.query_ids[c] for c in present.tolist()]
        columns = (
            query_ids,
            np.searchsorted(present, kept),
            [docnos[i] for i in rows.tolist()],
            labels[rows],
        )
        return SmallQrels(self.source, columns, lambda: Qrels(self.frame[rows], self.source))

    def __len__(self) -> int:
        return len(self.plain[3])

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as the general reader's Qrels (its frame made now): what it stands for, without the
        # function that makes the frame, which no pickle holds
        return Qrels, (self.frame, self.source)


class TextRun(MappingRun):
    """A run file read without polars (:func:`small_run`), held as pytrec_eval's dicts are: the engine
    looks its judged documents up in them. Its :attr:`run` is the general reader's, of the same bytes,
    made when first asked for."""

    def __init__(self, read: MappingScores, text: tuple[str, str, str | None, bytes]) -> None:
        name, source, runid, data = text
        super().__init__({}, read, name)
        self.source = source
        self.runid = runid
        self._data = data

    @cached_property
    def run(self) -> Run:
        """The general reader's run of the same file."""
        from irspec.data.trec import text_of

        return Run.of_text(text_of(self._data, RUN, self.source))

    @property
    def mapping_given(self) -> dict[str, Any]:
        """The run as pytrec_eval's dict of dicts."""
        return {
            q: {d.decode(): s for d, s in docs.items()}
            for q, docs in zip(self.mapping.query_ids, self.mapping.docs, strict=True)
        }


def small_qrels(src: Any) -> SmallQrels | None:
    """Qrels from the file at ``src``, read without polars; ``None`` when ``src`` is not the path of a
    regular file of at most :data:`SMALL_BELOW` bytes of clean text (see the module's docstring), for
    the general reader to read."""
    found = _read(src, QRELS)
    return None if found is None else _qrels(*found)


def small_run(src: Any) -> TextRun | None:
    """A run from the file at ``src``, read without polars; ``None`` as for :func:`small_qrels`."""
    found = _read(src, RUN)
    return None if found is None else _run(*found)


def _read(src: Any, kind: Kind) -> tuple[bytes, str, _Layout] | None:
    """The content of the file at ``src``, its name and its layout (:func:`_layout`), when it is small."""
    found = read_regular(src, SMALL_BELOW, lambda f, size: f.read())
    if found is None:
        return None
    data, source = found
    layout = _layout(data, kind)
    return None if layout is None else (data, source, layout)


_T = TypeVar("_T")


def read_regular(src: Any, below: int, read: Callable[[BinaryIO, int], _T]) -> tuple[_T, str] | None:
    """``read(file, size)`` of the regular file at ``src`` of at most ``below`` bytes, and its name;
    ``None`` for a source that is not such a file, or one that cannot be read (the general reader
    says what is wrong with it)."""
    if not isinstance(src, (str, os.PathLike)):
        return None
    source = os.fspath(src)
    try:
        with open(source, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > below:
                return None
            return read(f, st.st_size), source
    except (OSError, ValueError):
        return None


class _Layout:
    """Where a clean file's lines and separators are (:func:`_layout`). (A plain class, as
    :class:`irspec.data.objects.MappingFrame`.)"""

    __slots__ = ("ends", "separator", "seps", "starts")

    separator: str
    """The one separator between fields (a space or a tab)."""
    starts: np.ndarray
    """Where each line begins."""
    ends: np.ndarray
    """Where each ends (its line end, or the end of the data)."""
    seps: np.ndarray
    """Where its separators are: a row a line, one column fewer than it has fields."""

    def __init__(self, separator: str, starts: np.ndarray, ends: np.ndarray, seps: np.ndarray) -> None:
        self.separator, self.starts, self.ends, self.seps = separator, starts, ends, seps

    @property
    def width(self) -> int:
        """How many fields each line has."""
        return int(self.seps.shape[1]) + 1

    def field(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Where field ``i`` (counted from 0) of every line begins and ends (the offset after it)."""
        first = self.starts if i == 0 else self.seps[:, i - 1] + 1
        return first, (self.ends if i == self.width - 1 else self.seps[:, i])

    def longest(self, i: int) -> int:
        """The length of field ``i`` in the line where it is longest."""
        first, end = self.field(i)
        return int((end - first).max())


def _layout(data: bytes, kind: Kind) -> _Layout | None:
    """Where every line and separator of ``data`` is, when every line is a data line of as many fields as
    the others, split by single spaces (or single tabs, with no space anywhere): what the general
    reader's fast path reads as it is. ASCII only, no NUL, CR, VT or FF, no blank or comment line, no
    line longer than :data:`~irspec.lines.MAX_LINE`, no empty field (a separator at the start or end of
    a line, or two in a row); anything else is ``None``, for the general reader (its slow path, or its
    error). The lines and separators are found once, by numpy, and every check is made on them."""
    if not data or not data.isascii() or any(data.find(c) >= 0 for c in _OTHER_BYTES):
        return None
    tab = data.find(b"\t") >= 0
    if tab and data.find(b" ") >= 0:
        return None
    a = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(a == 10)
    if data[-1:] != b"\n":
        ends = np.append(ends, len(a))
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts
    if lengths.min() == 0 or lengths.max() > MAX_LINE or (a[starts] == ord("#")).any():
        return None  # a blank line, a line too long (binary data?), a comment line
    seps = np.flatnonzero(a == (9 if tab else 32))
    width = int(np.searchsorted(seps, ends[0])) + 1  # the first line's fields
    if not kind.count_ok(width) or len(seps) != len(ends) * (width - 1):
        return None
    # As many separators as lines have, in all; taken ``width - 1`` a line, each row's within its own
    # line (after its start, before its end) exactly when every line has as many, and with no field
    # empty (none at a line's first or last byte, none next to another) exactly when the rows are so.
    rows = seps.reshape(len(ends), width - 1)
    if (
        not (rows[:, 0] > starts).all()
        or not (rows[:, -1] < ends - 1).all()
        or (width > 2 and not (np.diff(rows, axis=1) > 1).all())
    ):
        return None
    return _Layout("\t" if tab else " ", starts, ends, rows)


def _labels(tokens: list[bytes]) -> list[int] | None:
    """The label field of every line, as Python reads it; ``None`` where one is written otherwise than
    :data:`_LABEL_DIGITS` allows, or Python cannot read it."""
    if b"".join(tokens).translate(None, _LABEL_DIGITS):
        return None
    try:
        return list(map(int, tokens))
    except ValueError:
        return None


def _qrels(data: bytes, source: str, layout: _Layout) -> SmallQrels | None:
    tokens = data.split()  # a few thousand lines: plain Python is quick enough
    labels = _labels(tokens[3::4])
    if labels is None or not INT64[0] <= min(labels) <= max(labels) <= INT64[1]:
        return None
    queries, docnos = tokens[0::4], tokens[2::4]
    # sorted by query, then docno: bytes sort as the strings they are (ASCII) sort in polars
    keys = list(zip(queries, docnos, strict=True))
    if not all(map(operator.lt, keys, islice(keys, 1, None))):  # not sorted already, or a duplicate
        order = sorted(range(len(keys)), key=keys.__getitem__)
        keys = [keys[i] for i in order]
        if any(map(operator.eq, keys, islice(keys, 1, None))):
            return None  # a docno twice in a query: the general reader names it
        queries, docnos, labels = [k[0] for k in keys], [k[1] for k in keys], [labels[i] for i in order]
    columns = _columns(_text(queries), _text(docnos), labels)
    return SmallQrels(source, columns, lambda: _general_qrels(data, source))


def _general_qrels(data: bytes, source: str) -> Qrels:
    """The general reader's qrels of a file's bytes (``data``), read when first asked for."""
    from irspec.data.trec import text_of

    return Qrels.of_text(text_of(data, QRELS, source))


def _columns(
    queries: list[str], docnos: list[str], labels: list[int]
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """:attr:`SmallQrels.plain`'s columns of rows sorted by query."""
    ids = np.empty(len(queries), dtype=object)  # strings compared as Python compares them
    ids[:] = queries
    found = _grouped(ids)
    assert found is not None  # sorted rows are grouped
    query_ids, bounds = found
    codes = np.repeat(np.arange(len(query_ids), dtype=np.int64), np.diff(bounds))
    return query_ids, codes, docnos, np.array(labels, dtype=np.int64)


def _text(tokens: list[bytes]) -> list[str]:
    return list(map(bytes.decode, tokens))


def _run(data: bytes, source: str, layout: _Layout) -> TextRun | None:
    width = layout.width
    # The query, docno and score columns parsed by numpy's reader, in C: docnos as bytes (TextRun), each
    # as wide as the longest. Its numbers are Python's float (correctly rounded); what it refuses (a
    # thousands separator, a word) or reads as no finite number (nan, inf, 1e400) is the general
    # reader's, which says what it reads them as.
    fields = (0, 2, 4)
    dtype = [(f"f{i}", f"S{layout.longest(i)}") for i in fields[:2]] + [("f4", "f8")]
    try:
        table = np.loadtxt(
            # a text stream over the bytes, which numpy reads a block at a time (a StringIO of the whole
            # text holds four bytes a character: 2,500 more pages touched for a 1.7 MB run, ~4 ms)
            # as UTF-8, which reads ASCII (checked by _layout) as ASCII does, and whose codec is loaded
            io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"),
            dtype=dtype,
            usecols=fields,
            delimiter=layout.separator,
            comments=None,
            quotechar=None,
            ndmin=1,
        )
    except ValueError:
        return None
    scores = np.ascontiguousarray(table["f4"])
    if not np.isfinite(scores).all():
        return None
    queries = table["f0"]
    found = _grouped(queries)
    if found is None:
        return None
    distinct, bounds = found
    docnos, floats = table["f2"].tolist(), scores.tolist()
    docs = []
    for at, end in pairwise(bounds):  # each query's docnos (bytes: encoded) and scores, as pytrec_eval's
        docs.append(dict(zip(docnos[at:end], floats[at:end], strict=True)))
        if len(docs[-1]) != end - at:
            return None  # a docno twice in a query: the general reader names it
    lengths = np.diff(bounds)
    read = MappingScores(_text(distinct), docs, lengths, scores, scores.dtype, encoded=True)
    # the last line's run tag, as trec_eval keeps it
    if width >= 6:
        first, end = layout.field(5)
        runid = data[first[-1] : end[-1]].decode()
    else:
        runid = None
    from irspec.data.trec import stem

    return TextRun(read, (stem(source) or runid or "run", source, runid, data))


def _grouped(ids: np.ndarray) -> tuple[list[Any], np.ndarray] | None:
    """The distinct values of ``ids`` (a run's query column, bytes; qrels' query ids, strings in an
    array of objects) in their order and where each one's rows begin (and the last ends), when each
    value's rows are one run (the rows grouped by it); ``None`` otherwise. Neighbours are compared in C."""
    n = len(ids)
    starts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    bounds = np.concatenate(([0], starts, [n])).astype(np.int64)
    distinct = ids[bounds[:-1]].tolist()
    # a value in two runs of rows: not grouped by it (a set, not np.unique, which imports numpy.ma)
    if len(set(distinct)) < len(distinct):
        return None
    return distinct, bounds


def qrels_of_mapping(d: Any) -> SmallQrels | None:
    """Qrels from pytrec_eval's ``{qid: {docno: label}}``, read without polars: a ``dict`` of ``dict``
    with string ids (text UTF-8 can encode) and ``int`` labels within 64 bits; ``None`` for anything
    else, which :meth:`~irspec.data.Qrels.from_dict` reads (and says what is wrong with)."""
    if type(d) is not dict or not d or set(map(type, d)) != {str} or set(map(type, d.values())) != {dict}:
        return None
    if sum(map(len, d.values())) > SMALL_BELOW // _BYTES_A_JUDGMENT:  # polars sorts many faster
        return None
    queries: list[str] = []
    docnos: list[str] = []
    labels: list[Any] = []
    try:
        for q in sorted(d):
            docs = d[q]
            names = sorted(docs)  # a TypeError for docnos of several types: the general reader's case
            queries += [q] * len(names)
            docnos += names
            labels += map(docs.__getitem__, names)
    except TypeError:
        return None
    if not labels or set(map(type, docnos)) != {str} or set(map(type, labels)) != {int}:
        return None
    if not encodable("".join(queries)) or not encodable("".join(docnos)):
        return None
    if not INT64[0] <= min(labels) <= max(labels) <= INT64[1]:
        return None
    columns = _columns(queries, docnos, labels)

    def general() -> Qrels:
        # made from the columns, not the dict (which its owner may have changed since)
        frame = pl.DataFrame(
            [
                pl.Series("query", queries, dtype=pl.String),
                pl.Series("docno", docnos, dtype=pl.String),
                pl.Series("label", columns[3], dtype=pl.Int64),
                no_lines(len(labels)),
            ]
        )
        return Qrels(checked(frame, QRELS, "<dict>", distinct=True)[0], "<dict>")

    return SmallQrels("<dict>", columns, general)
