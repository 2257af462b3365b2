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

import operator
import os
import stat
from collections.abc import Callable, Iterable
from functools import cached_property
from itertools import compress, islice, pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from irspec.data import MappingRun, Qrels, Run, checked
from irspec.data.kinds import INT64, QRELS, RUN, Kind
from irspec.data.objects import MappingScores, encodable, no_lines
from irspec.data.trec import stem, text_of
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

_DIGITS = {QRELS.kind: b"0123456789+-", RUN.kind: b"0123456789+-.eE"}
"""The characters of a value read here: Python's ``int`` and ``float`` read text of these alone exactly
as polars does (a sign, digits, a point, an exponent; no ``inf``, ``nan``, ``0x`` or ``1_000``)."""


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


def _read(src: Any, kind: Kind) -> tuple[bytes, str, list[bytes], int] | None:
    """The content of the file at ``src``, its name and its fields (:func:`_fields`), when it is small."""
    if not isinstance(src, (str, os.PathLike)):
        return None
    source = os.fspath(src)
    try:
        with open(source, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > SMALL_BELOW:
                return None
            data = f.read()
    except (OSError, ValueError):
        return None
    found = _fields(data, kind)
    return None if found is None else (data, source, *found)


def _fields(data: bytes, kind: Kind) -> tuple[list[bytes], int] | None:
    """Every field of ``data`` and how many each line has, when every line is a data line of that many
    fields split by single spaces (or single tabs, with no space anywhere): what the general reader's
    fast path reads as it is. ASCII only, no NUL, CR, VT or FF, no blank or comment line, no line
    longer than :data:`~irspec.lines.MAX_LINE`, no empty field (a separator at the start or end of a
    line, or two in a row); anything else is ``None``, for the general reader (its slow path, or its
    error). The lines are found once, by numpy, and every check is made on them."""
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
    per_line = np.diff(np.searchsorted(seps, ends), prepend=0)
    width = int(per_line[0]) + 1
    if not kind.count_ok(width) or not bool((per_line == width - 1).all()):
        return None
    first, last = seps[:: width - 1], seps[width - 2 :: width - 1]
    if (first == starts).any() or (last == ends - 1).any() or (np.diff(seps) == 1).any():
        return None  # an empty field: a line starting or ending with its separator, or two in a row
    tokens = data.split()  # bytes: half the cost of text, and a run's docnos stay bytes (TextRun)
    return tokens, width


def _values(tokens: list[bytes], kind: Kind) -> list[Any] | None:
    """The value field of every line, as Python reads it (``int`` or ``float``); ``None`` where one is
    written otherwise than :data:`_DIGITS` allows, or Python cannot read it."""
    if b"".join(tokens).translate(None, _DIGITS[kind.kind]):
        return None
    try:
        return list(map(int if kind is QRELS else float, tokens))
    except ValueError:
        return None


def _blocks(ids: list[Any]) -> tuple[list[Any], list[int]] | None:
    """The distinct values of ``ids`` in their order and the length of each one's run of rows, when each
    value's rows are one run (the rows grouped by it); ``None`` otherwise."""
    # where a row's value differs from the row's before it: comparisons of neighbours, in C
    starts = [0, *compress(range(1, len(ids)), map(operator.ne, ids, islice(ids, 1, None)))]
    distinct = [ids[i] for i in starts]
    if len(set(distinct)) < len(distinct):  # a value in two runs of rows: not grouped by it
        return None
    starts.append(len(ids))
    return distinct, [b - a for a, b in pairwise(starts)]


def _qrels(data: bytes, source: str, tokens: list[bytes], width: int) -> SmallQrels | None:
    labels = _values(tokens[3::4], QRELS)
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
    return SmallQrels(source, columns, lambda: Qrels.of_text(text_of(data, QRELS, source)))


def _columns(
    queries: list[str], docnos: list[str], labels: list[int]
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """:attr:`SmallQrels.plain`'s columns of rows sorted by query."""
    found = _blocks(queries)
    assert found is not None  # sorted rows are grouped
    query_ids, lengths = found
    codes = np.repeat(np.arange(len(query_ids), dtype=np.int64), lengths)
    return query_ids, codes, docnos, np.array(labels, dtype=np.int64)


def _text(tokens: list[bytes]) -> list[str]:
    return list(map(bytes.decode, tokens))


def _run(data: bytes, source: str, tokens: list[bytes], width: int) -> TextRun | None:
    floats = _values(tokens[4::width], RUN)
    if floats is None:
        return None
    scores = np.array(floats, dtype=np.float64)
    if not np.isfinite(scores).all():  # 1e400: the general reader says what it reads as
        return None
    queries, docnos = tokens[0::width], tokens[2::width]
    found = _blocks(queries)
    if found is None:
        return None
    distinct, lengths = found
    docs, at = [], 0
    for n in lengths:  # each query's docnos (bytes: encoded) and scores, as a dict of pytrec_eval's
        docs.append(dict(zip(docnos[at : at + n], floats[at : at + n], strict=True)))
        at += n
        if len(docs[-1]) != n:
            return None  # a docno twice in a query: the general reader names it
    lengths_array = np.array(lengths, dtype=np.int64)
    read = MappingScores(_text(distinct), docs, lengths_array, scores, scores.dtype, encoded=True)
    runid = tokens[-width + 5].decode() if width >= 6 else None  # the last line's, as trec_eval keeps it
    return TextRun(read, (stem(source) or runid or "run", source, runid, data))


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
