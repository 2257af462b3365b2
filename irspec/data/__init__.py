"""Qrels and runs as immutable, columnar polars DataFrames, whatever they were read from.

Input formats (see METRICS.md, "Input formats"):

- qrels: ``qid iter docno label``, exactly 4 fields; ``label`` an integer (negative allowed).
- run: ``qid iter docno rank score [runid]``, at least 5 fields; ``rank`` must be present but is
  ignored, ``score`` must be a finite number, fields after ``runid`` are ignored (as trec_eval does:
  its own test file ``results.trunc`` has them).

The package has one module per kind of source and this one for what they make:

- :mod:`irspec.data.trec`: TREC text files (paths, ``-`` for standard input, open files, gzip), with
  a fast path and a slow one that names the bad line;
- :mod:`irspec.data.objects`: pytrec_eval's ``{qid: {docno: value}}`` dicts, pandas or polars
  DataFrames and polars LazyFrames (ir_measures', PyTerrier's or any named columns), and iterables of
  named tuples (ir_measures' and ir_datasets' ``Qrel``, ``TrecQrel``, ``ScoredDoc``);
- :mod:`irspec.data.parquet`: Parquet files (read with projection, no text on the way) and Arrow data,
  through the DataFrame reader;
- :mod:`irspec.data.kinds`: what qrels and runs are to all of them (the value column, the fields);
- here: :class:`Qrels` and :class:`Run`, :func:`read_qrels` and :func:`read_run` that pick the reader,
  and the checks every source goes through: finite scores, and duplicates, found by sorting one 64-bit
  hash of ``(query, docno)`` per row (:func:`pair_keys`; equal pairs always hash equal, a collision
  only costs an exact re-check). A docno may appear only once per query. Qrels are then sorted by
  query and docno; runs keep source order.

Every problem is an :class:`~irspec.errors.InputError` naming the source (and for a file the 1-based
physical line) and the query.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from irspec.data.kinds import QRELS, RUN, Kind
from irspec.data.objects import (
    MappingScores,
    frame_from_dataframe,
    frame_from_mapping,
    frame_from_rows,
    frame_runid,
    is_dataframe,
    is_named_tuples,
    mapping_scores,
    non_finite_message,
)
from irspec.errors import InputError, InputTypeError, quote
from irspec.frozen import frozen
from irspec.lazy import lazy_module

# The readers of files (TREC text, Parquet, Arrow, ir_datasets) and of top-k arrays are imported by the
# functions that read those: a run or qrels of dicts (the pytrec_eval drop-in, an Evaluator in a training
# loop) is read without them (~0.7 ms of a BEIR evaluation's start).
if TYPE_CHECKING:
    import polars as pl

    from irspec.data.trec import Source, Text
else:
    pl = lazy_module("polars")

__all__ = ["Qrels", "Run", "checked", "read_qrels", "read_run", "sniff_kind", "split_kinds"]


# --------------------------------------------------------------------------------------------------
# Qrels and Run


@frozen(eq=False)
class Qrels:
    """Relevance judgments.

    ``frame`` has columns ``query`` (String), ``docno`` (String), ``label`` (Int64) and ``line``
    (UInt32, the 1-based line in ``source``; null for dict or DataFrame input), sorted by query then
    docno, one row per judgment; a docno appears at most once per query.
    """

    frame: pl.DataFrame
    source: str

    @classmethod
    def read(
        cls, path_or_file: Source, *, source: str | None = None, columns: Mapping[str, str] | None = None
    ) -> Qrels:
        """Read a TREC qrels file (``qid iter docno label``) or a Parquet file: a path, ``"-"`` for
        standard input, or an open file. ``source`` overrides the name used in error messages;
        ``columns`` names a Parquet file's columns as :meth:`from_frame` takes them."""
        from irspec.data.parquet import is_parquet, read_parquet
        from irspec.data.trec import read_text

        if is_parquet(path_or_file):
            name = source or os.fspath(path_or_file)
            return cls(
                checked(read_parquet(path_or_file, QRELS, name, columns)[0], QRELS, name, "row")[0], name
            )
        _no_columns(columns, source or path_or_file)
        return cls.of_text(read_text(path_or_file, QRELS, source))

    @classmethod
    def of_text(cls, text: Text) -> Qrels:
        """Qrels of a TREC file read (:func:`~irspec.data.trec.read_text`), checked."""
        return cls(checked(text.frame, QRELS, text.source)[0], text.source)

    @classmethod
    def from_dict(cls, d: Mapping[str, Mapping[str, int]]) -> Qrels:
        """Qrels from pytrec_eval's shape ``{qid: {docno: label}}``; labels must be integers."""
        read = frame_from_mapping(d, QRELS, "<dict>")
        return cls(checked(read.frame, QRELS, "<dict>", distinct=read.distinct)[0], "<dict>")

    @classmethod
    def from_frame(
        cls, df: Any, *, source: str = "<DataFrame>", columns: Mapping[str, str] | None = None
    ) -> Qrels:
        """Qrels from a pandas or polars DataFrame or a polars LazyFrame with ir_measures' columns
        (``query_id, doc_id, relevance``), PyTerrier's (``qid, docno, label``), or those ``columns`` maps
        irspec's names (``query``, ``docno``, ``label``) to; other columns are ignored. ``source`` names
        it in messages."""
        frame = frame_from_dataframe(df, QRELS, source, columns)
        return cls(checked(frame, QRELS, source)[0], source)

    @classmethod
    def from_rows(cls, rows: Iterable[Any], *, columns: Mapping[str, str] | None = None) -> Qrels:
        """Qrels from named tuples such as ir_measures' ``Qrel(query_id, doc_id, relevance)`` or
        ir_datasets' ``TrecQrel`` (its ``iteration`` is ignored); fields are found as a frame's columns."""
        frame = frame_from_rows(rows, QRELS, "<rows>", columns)
        return cls(checked(frame, QRELS, "<rows>")[0], "<rows>")

    @cached_property
    def query_ids(self) -> list[str]:
        """The judged query ids, sorted."""
        return _query_ids(self.frame)

    def __len__(self) -> int:
        """The number of judgments."""
        return self.frame.height

    def __repr__(self) -> str:
        return f"Qrels(source={self.source!r}, queries={len(self.query_ids)}, judgments={len(self)})"


@frozen(eq=False)
class Run:
    """A ranked run.

    ``frame`` has columns ``query`` (String), ``docno`` (String), ``score`` (Float64, finite) and
    ``line`` (UInt32 1-based source line, or null for dict or DataFrame input), in source order; a
    docno appears at most once per query. The rank column of a TREC file is not kept: rankings come
    from the scores. ``name`` is the file's stem (``bm25`` for ``runs/bm25.run.gz``), wherever a run
    comes from a file; without a file name (standard input, Arrow data, a DataFrame) the runid, else
    ``"run"``.
    """

    frame: pl.DataFrame
    name: str
    source: str
    keys: np.ndarray | None = field(default=None, repr=False)
    """:func:`pair_keys` of ``frame``, kept from the duplicate check so the evaluation need not hash again."""
    runid: str | None = None
    """The run's own name inside its input, as trec_eval's ``runid`` prints it: a TREC file's 6th field
    (of its last data line), a Parquet file's, Arrow data's or a DataFrame's ``run`` column; None when it
    has none."""
    blocks: tuple[pl.Series, np.ndarray] | None = field(default=None, repr=False)
    """The rows' blocks of one query id each, ``(ids, lengths)``, when the reader knew them (a dict, a
    top k); see :attr:`query_blocks`."""
    empty: tuple[str, ...] = field(default=(), repr=False)
    """The query ids given with no document (a dict's empty ranking, a top k's row of ``-1``): they have
    no rows, and are evaluated as queries the run lacks, but the input named them, so that
    :meth:`irspec.Evaluator.combine` refuses one of them in another batch, as one call refuses a query
    given twice."""

    @cached_property
    def query_blocks(self) -> tuple[pl.Series, np.ndarray]:
        """Runs of adjacent rows with one query id, as ``(ids, lengths)`` (an id may head several blocks
        in a run not grouped by query): the reader's, or found by comparing neighbouring rows."""
        if self.blocks is not None:
            return self.blocks
        return value_runs(self.frame.get_column("query"))

    @classmethod
    def read(
        cls, path_or_file: Source, *, source: str | None = None, columns: Mapping[str, str] | None = None
    ) -> Run:
        """Read a TREC run file (``qid iter docno rank score [runid]``) or a Parquet file: a path,
        ``"-"`` for standard input, or an open file. ``source`` overrides the name used in error
        messages; ``columns`` names a Parquet file's columns as :meth:`from_frame` takes them."""
        from irspec.data.parquet import is_parquet, read_parquet
        from irspec.data.trec import read_text, stem

        if is_parquet(path_or_file):
            name = source or os.fspath(path_or_file)
            frame, runid = read_parquet(path_or_file, RUN, name, columns)
            frame, keys = checked(frame, RUN, name, "row")
            return cls(frame, stem(name) or runid or "run", name, keys, runid)
        _no_columns(columns, source or path_or_file)
        return cls.of_text(read_text(path_or_file, RUN, source))

    @classmethod
    def of_text(cls, text: Text) -> Run:
        """The run of a TREC file read (:func:`~irspec.data.trec.read_text`), checked."""
        frame, keys = checked(text.frame, RUN, text.source)
        return cls(frame, text.name or "run", text.source, keys, text.runid)

    @classmethod
    def from_dict(cls, d: Mapping[str, Mapping[str, float]], name: str = "run") -> Run:
        """A run from pytrec_eval's shape ``{qid: {docno: score}}``; scores must be finite numbers."""
        read = frame_from_mapping(d, RUN, "<dict>")
        frame, keys = checked(read.frame, RUN, "<dict>", distinct=read.distinct, blocks=read.blocks)
        return cls(frame, name, "<dict>", keys, blocks=read.blocks, empty=read.empty)

    @classmethod
    def from_topk(
        cls, query_ids: Any, doc_ids: Any, scores: Any, *, corpus_ids: Any = None, name: str = "run"
    ) -> Run:
        """A run from a retriever's top k as arrays: query ids (n), document ids and scores (n × k);
        ``-1`` ids skipped, ``corpus_ids`` the ids by position when ``doc_ids`` are positions
        (:mod:`irspec.data.arrays`). Its source is ``<topk>``, and errors name the row."""
        from irspec.data.arrays import SOURCE as TOPK
        from irspec.data.arrays import frame_from_topk

        top = frame_from_topk(query_ids, doc_ids, scores, corpus_ids)
        blocks = top.blocks
        keys = pair_keys(top.frame, blocks)
        top.check_distinct(keys)
        return cls(top.frame, name, TOPK, keys, blocks=blocks, empty=top.empty)

    @classmethod
    def from_frame(cls, df: Any, name: str | None = None, *, columns: Mapping[str, str] | None = None) -> Run:
        """A run from a pandas or polars DataFrame or a polars LazyFrame with ir_measures' columns
        (``query_id, doc_id, score``), PyTerrier's (``qid, docno, score``), or those ``columns`` maps
        irspec's names (``query``, ``docno``, ``score``) to; other columns, such as a rank, are ignored,
        but for a ``run`` column, read as Arrow data's and a Parquet file's: the run's runid, which names
        it (unless ``name`` does; else it is ``run``), and a frame whose ``run`` column names several
        runs is an :class:`~irspec.errors.InputError` (one run per frame: several go in a mapping
        ``{name: run}``), never merged into one."""
        frame, keys = checked(frame_from_dataframe(df, RUN, "<DataFrame>", columns), RUN, "<DataFrame>")
        runid = frame_runid(df, "<DataFrame>")
        return cls(frame, name or runid or "run", "<DataFrame>", keys, runid)

    @classmethod
    def from_rows(
        cls, rows: Iterable[Any], name: str = "run", *, columns: Mapping[str, str] | None = None
    ) -> Run:
        """A run from named tuples such as ir_measures' or ir_datasets' ``ScoredDoc(query_id, doc_id,
        score)``; fields are found as a frame's columns."""
        frame, keys = checked(frame_from_rows(rows, RUN, "<rows>", columns), RUN, "<rows>")
        return cls(frame, name, "<rows>", keys)

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


class DeferredRun:
    """A run the engine evaluates from columns of its own (:class:`MappingRun`'s dicts, a file read by
    numpy), whose :class:`Run` (``run``: the general reader's, its frame and keys) is made only when
    something asks for them."""

    @property
    def run(self) -> Run:
        """The general reader's :class:`Run` (each subclass makes its own, once)."""
        raise NotImplementedError

    @property
    def frame(self) -> pl.DataFrame:
        """The general reader's frame of the run."""
        return self.run.frame

    @property
    def keys(self) -> np.ndarray | None:
        """Its :func:`pair_keys`."""
        return self.run.keys


class MappingRun(DeferredRun):
    """A run given as pytrec_eval's ``{qid: {docno: score}}`` dict, as the engine evaluates it: its
    scores read (:func:`~irspec.data.objects.mapping_scores`) and its docnos left in the dicts, where
    the judged ones are looked up; the :class:`Run` (its frame, every docno a row) is made only when
    something asks for it (a per-query plugin metric, many tied judged documents). Made by
    :func:`mapping_run`, for evaluation only: :func:`read_run` still reads a dict as a :class:`Run`."""

    source = "<dict>"
    runid: str | None = None

    def __init__(self, d: dict[str, Any], read: MappingScores, name: str = "run") -> None:
        self.mapping = read
        self.name = name
        self._dict = d

    @property
    def mapping_given(self) -> dict[str, Any]:
        """The dict it was read from."""
        return self._dict

    @cached_property
    def run(self) -> Run:
        """The dict read as :class:`Run` reads it."""
        return Run.from_dict(self._dict, self.name)

    @cached_property
    def query_blocks(self) -> tuple[pl.Series, np.ndarray]:
        """As :attr:`Run.query_blocks`: each query with a document, one block each."""
        return pl.Series("query", self.mapping.query_ids, dtype=pl.String), self.mapping.lengths

    @property
    def empty(self) -> tuple[str, ...]:
        """As :attr:`Run.empty`: the queries given with an empty dict."""
        return self.mapping.empty

    def __len__(self) -> int:
        return len(self.mapping.scores)


def mapping_run(
    d: Any, name: str = "run", wanted: Mapping[str, list[str]] | None = None
) -> MappingRun | None:
    """``d`` as a :class:`MappingRun` when it is a ``dict`` of ``dict`` that
    :func:`~irspec.data.objects.mapping_scores` reads (looking up the ``wanted`` docnos of each query);
    ``None`` otherwise (:func:`read_run` reads it)."""
    read = mapping_scores(d, wanted)
    return None if read is None else MappingRun(d, read, name)


def read_qrels(src: Any, *, columns: Mapping[str, str] | None = None) -> Qrels:
    """Qrels from a path (TREC text or Parquet), ``"-"`` (stdin), an open file, a ``{qid: {docno: label}}``
    dict, a pandas or polars DataFrame or polars LazyFrame, Arrow data (a pyarrow Table), an iterable of
    named tuples (``Qrel``, ``TrecQrel``), ``"irds:<id>"`` (an ir_datasets dataset's, see :mod:`irspec.data.datasets`), or a :class:`Qrels`
    (returned as is). ``columns`` names a frame's columns (:meth:`Qrels.from_frame`)."""
    from irspec.data.datasets import is_dataset_id, qrels_frame

    if is_dataset_id(src):
        return Qrels.from_frame(qrels_frame(src), source=src)
    return _read(Qrels, src, "read_qrels", columns)


def read_run(src: Any, *, columns: Mapping[str, str] | None = None) -> Run:
    """A run from a path (TREC text or Parquet), ``"-"`` (stdin), an open file, a ``{qid: {docno: score}}``
    dict, a pandas or polars DataFrame or polars LazyFrame, Arrow data (a pyarrow Table), an iterable of
    named tuples (``ScoredDoc``), or a :class:`Run` (returned as is). ``columns`` names a frame's columns (:meth:`Run.from_frame`)."""
    return _read(Run, src, "read_run", columns)


def sniff_kind(path: str | os.PathLike[str]) -> str:
    """``"qrels"`` or ``"run"``: what the file at ``path`` holds, told by its content, for command lines
    that take both in any order (``irspec eval qrels.human qrels.llm runs/*.run --agreement``).

    A TREC text file (gzip too) by the fields of its first data line (comment lines start with ``#``):
    4 (``qid iter docno label``) is qrels, 5 or more a run; a Parquet file by its columns (``score`` is a
    run's, ``relevance`` or ``label`` qrels'); ``irds:<id>`` is qrels. Anything else is an
    :class:`~irspec.errors.InputError` naming the file (and line) and what was expected.
    """
    from irspec.data.datasets import is_dataset_id
    from irspec.data.parquet import is_parquet

    source = os.fspath(path)
    if is_dataset_id(source):
        return "qrels"
    if is_parquet(source):
        names = set(pl.read_parquet_schema(source))
        if "score" in names:
            return "run"
        if names & {"relevance", "label"}:
            return "qrels"
        raise InputError(
            "cannot tell qrels from a run: expected a 'score' column (a run) or 'relevance' or 'label' (qrels)",
            source,
        )
    try:
        with open(source, "rb") as f:
            head = f.read(1 << 16)
            if head[:2] == b"\x1f\x8b":
                import gzip  # only for gzip files

                f.seek(0)
                head = gzip.GzipFile(fileobj=f).read(1 << 16)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", source) from None
    except EOFError:
        raise InputError("corrupt gzip data", source) from None
    lines = head.split(b"\n")
    if len(head) == 1 << 16:
        lines = lines[:-1]  # the last may be cut off
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) == QRELS.min_fields:
            return "qrels"
        if RUN.count_ok(len(fields)):
            return "run"
        raise InputError(
            f"cannot tell qrels from a run: {len(fields)} fields, expected {QRELS.expected} (qrels) or {RUN.expected} (a run)",
            source,
            number,
        )
    raise InputError("cannot tell qrels from a run: no data line in its first 64 KiB", source)


def split_kinds(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[str], list[str]]:
    """``paths`` told apart by :func:`sniff_kind`, in the order given: ``(qrels, runs)``."""
    qrels: list[str] = []
    runs: list[str] = []
    for path in paths:
        (qrels if sniff_kind(path) == "qrels" else runs).append(os.fspath(path))
    return qrels, runs


_QrelsOrRun = TypeVar("_QrelsOrRun", Qrels, Run)


def _read(cls: type[_QrelsOrRun], src: Any, caller: str, columns: Mapping[str, str] | None) -> _QrelsOrRun:
    """``src`` as a ``cls``, by the reader its type calls for."""
    if isinstance(src, cls):
        return src
    if isinstance(src, Mapping):
        return cls.from_dict(src)
    if isinstance(src, (Qrels, Run)):  # the other one
        raise TypeError(f"{caller}() was given a {type(src).__name__}")
    if is_dataframe(src):
        return cls.from_frame(src, columns=columns)
    from irspec.data.parquet import is_arrow, read_arrow

    if is_arrow(src):  # before named tuples: a RecordBatchReader is an iterable too
        frame, name = read_arrow(src, QRELS if cls is Qrels else RUN, columns=columns)
        return _from_table(cls, frame, name, "<Arrow>")
    if is_named_tuples(src):
        return cls.from_rows(src, columns=columns)
    if not isinstance(src, (str, os.PathLike)) and not hasattr(src, "read"):
        what, value = ("qrels", "label") if cls is Qrels else ("a run", "score")
        raise InputTypeError(
            f"cannot read {what} from {quote(src, 40)} ({type(src).__name__}): expected a path, '-', an open file, "
            f"a dict {{qid: {{docno: {value}}}}}, a DataFrame, Arrow data or named tuples"
        )
    return cls.read(src, columns=columns)


def _no_columns(columns: Mapping[str, str] | None, src: Any) -> None:
    """A TREC text file's fields are fixed: ``columns`` there is a mistake, not something to ignore."""
    if columns is not None:
        name = src if isinstance(src, (str, os.PathLike)) else getattr(src, "name", "<file>")
        raise InputError(
            "columns= names the columns of a DataFrame, Arrow data or a Parquet file; a TREC text file's fields are fixed",
            os.fspath(name) if not isinstance(name, str) else name,
        )


def _from_table(cls: type[_QrelsOrRun], frame: pl.DataFrame, name: str | None, source: str) -> _QrelsOrRun:
    """A ``cls`` of a table's frame (rows for lines), checked."""
    made: Qrels | Run
    if cls is Qrels:
        made = Qrels(checked(frame, QRELS, source, "row")[0], source)
    else:
        frame, keys = checked(frame, RUN, source, "row")
        made = Run(frame, name or "run", source, keys, name)
    return made  # type: ignore[return-value]  # mypy does not narrow a constrained TypeVar by `cls is Qrels`


# --------------------------------------------------------------------------------------------------
# Checks shared by every input kind


def value_runs(column: pl.Series) -> tuple[pl.Series, np.ndarray]:
    """Runs of equal adjacent values of ``column``: ``(values, lengths)``, the lengths as int64. The run
    lengths' struct is taken apart at once (``unnest``): a field asked for by name is a query each."""
    runs = column.rle().struct.unnest()
    return runs.get_column("value").alias(column.name), runs.get_column("len").to_numpy().astype(np.int64)


def checked(
    frame: pl.DataFrame,
    kind: Kind,
    source: str,
    unit: str = "line",
    *,
    distinct: bool = False,
    blocks: tuple[pl.Series, np.ndarray] | None = None,
) -> tuple[pl.DataFrame, np.ndarray | None]:
    """The checks every reader's frame goes through (a streamed run's blocks too): finite scores, no
    duplicate docno in a query (rows in source order); qrels sorted. Returns the frame and, for a run,
    its :func:`pair_keys`. ``unit`` is what the ``line`` column counts: lines, or a table's rows.
    ``distinct``: the reader knows the (query, docno) pairs are distinct (a mapping's keys), so the
    duplicate check, a sort of every row's key, is skipped; ``blocks``, the rows' blocks of one query
    (:attr:`Run.query_blocks`), when the reader knows them, spare hashing every row's query id."""
    if kind is RUN and not _finite(frame.get_column("score")):
        q, d, s, line = frame.filter(~pl.col("score").is_finite()).row(0)
        raise InputError(f"{non_finite_message(s)} for docno {quote(d)}", source, line, q, unit=unit)
    keys = pair_keys(frame, blocks)
    if not distinct:
        _check_duplicates(frame, keys, source, unit, kind)
    if kind is QRELS:
        return _sort_qrels(frame), None
    return frame, keys


def _finite(scores: pl.Series) -> bool:
    """Whether every score is finite: numpy's test over polars' own buffer, a tenth of the time of a
    polars query on a small run (polars' where there are nulls, which its test passes over: the readers
    refuse a missing score before this)."""
    if scores.null_count() or scores.dtype != pl.Float64:
        return bool(scores.is_finite().all())
    return bool(np.isfinite(scores.to_numpy()).all())


_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd 64-bit constant that mixes the docno hash in


def pair_keys(frame: pl.DataFrame, blocks: tuple[pl.Series, np.ndarray] | None = None) -> np.ndarray:
    """A 64-bit key per row from polars' hashes of ``query`` and ``docno``: equal pairs, equal keys.

    Used to find duplicates and, by the engine, to join runs with qrels (in one process: polars' hash
    seeds are fixed there). Two columns hashed separately and mixed in numpy cost a fraction of the
    memory of one polars expression over both. Given the rows' ``blocks`` of one query id each, each
    id is hashed once (polars hashes a value alike wherever it stands).
    """
    keys = frame.get_column("docno").hash().to_numpy()
    if not keys.flags.writeable:  # a view of polars' buffer
        keys = keys.copy()
    with np.errstate(over="ignore"):
        keys *= _MIX
    if blocks is None:
        keys ^= frame.get_column("query").hash().to_numpy()
    else:
        keys ^= np.repeat(blocks[0].hash().to_numpy(), blocks[1])
    return keys


_TABLE_BITS = 22
"""At most this many bits of a key pick its slot in :func:`all_distinct`'s table (4 Mi slots, 16 MiB)."""


_SORT_BELOW = 4096
"""Fewer keys than this are sorted by :func:`all_distinct`, rather than put in its table once more."""


def all_distinct(keys: np.ndarray) -> bool:
    """Whether no two of 64-bit ``keys`` (hashes: :func:`pair_keys`) are equal. ``False`` may also mean
    that two differ only in bits the table does not see (a caller checks the rows themselves then).

    A sort of every key (the obvious way) was half the main thread's time on a 5M-line run. Instead each
    key goes to a slot of a table of at least twice their number, by its top bits; the last key written
    to a slot wins it, and a key is compared with its slot's winner by its low 32 bits. Equal keys share
    a slot: either both match the winner, and then more keys match winners than there are slots taken,
    or neither is the winner. The keys that do not match theirs (a fifth of them or so) go round again,
    multiplied by an odd constant (equal keys stay equal, distinct ones distinct) so that other bits pick
    their slots, until few enough are left to be sorted and their neighbours compared."""
    while len(keys) >= _SORT_BELOW:
        n = len(keys)
        bits = min(max((n - 1).bit_length() + 1, 4), _TABLE_BITS)
        slot = (keys >> np.uint64(64 - bits)).astype(np.intp)
        low = keys.astype(np.uint32)  # the low 32 bits
        table = np.zeros(1 << bits, dtype=np.uint32)
        table[slot] = low  # of several writes to one slot, the last one stays (numpy's fancy assignment)
        won = table[slot] == low
        del table
        taken = np.zeros(1 << bits, dtype=bool)
        taken[slot] = True
        if int(np.count_nonzero(won)) > int(np.count_nonzero(taken)):
            return False
        with np.errstate(over="ignore"):
            keys = keys[~won] * _MIX
    rest = np.sort(keys)
    return not bool((rest[1:] == rest[:-1]).any())


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
    q, d = pl.col("query"), pl.col("docno")
    nq, nd = q.shift(-1), d.shift(-1)
    # Strictly increasing (query, docno) pairs; there are no duplicates by now.
    return bool(frame.select(((nq > q) | ((nq == q) & (nd > d))).fill_null(True).all()).item())


def _check_duplicates(
    frame: pl.DataFrame, keys: np.ndarray, source: str, unit: str, kind: Kind = RUN
) -> None:
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
    seen = f" (first on {unit} {first})" if first is not None else ""
    # TREC's diversity qrels ("topic subtopic docno label") judge a document once per subtopic
    hint = (
        "; qrels with subtopics are read by the metrics that use them (irspec-diversity's)"
        if kind is QRELS
        else ""
    )
    raise InputError(f"duplicate docno {quote(d)}{seen}{hint}", source, line, q, unit=unit)


def _query_ids(frame: pl.DataFrame) -> list[str]:
    return frame.get_column("query").unique().sort().to_list()
