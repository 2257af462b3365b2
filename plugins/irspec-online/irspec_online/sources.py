"""The forms an interaction log comes in, each opened as batches of ``(line or row, record)``.

A file is JSON Lines or Parquet; a frame is polars (eager or lazy), pandas or Spark; anything else
iterable is records in memory. Each form yields plain records in batches, which
:func:`irspec_online.records.summarise` checks and reduces the same way whatever the form; a Spark DataFrame
is summarised by Spark (:mod:`irspec_online.spark`) and arrives as summaries. pandas, pyarrow and pyspark
are imported only for the forms that need them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from irspec import InputError
from irspec_online.columnar import Rows
from irspec_online.records import PARQUET_SUFFIXES, batched, columns_of, is_paths, jsonl_records, stem


@dataclass(frozen=True)
class Opened:
    """A log ready to be read: its name, where it is (for messages), whether it counts lines or rows,
    and either its batches of records or (from Spark) its summaries."""

    name: str
    where: str
    unit: str
    batches: Iterable[list[tuple[int, Any]]] = ()
    summaries: Iterable[pl.DataFrame] | None = None
    top_queries: Any = None
    """From Spark: a callable giving the log's top queries (counted by Spark, not while summarising)."""
    offset: int = 0
    """What the summaries add to a record's line or row to place it in the input (:class:`Chained`: the
    files before the one being read); 0 for one file or frame."""


def open_source(
    source: Any, batch_size: int, fields: Mapping[str, str] | None = None, ranker: Any = None
) -> Any:
    """Open ``source`` (a path, several paths, a frame or records) as batches of ``batch_size`` records; a
    frame's columns named in ``fields`` (role -> key: an A/B test's arm and user) are read besides the
    log's. Several paths (a list or tuple of them: ``logs/*.parquet``) are one log, read file after file
    (:class:`Chained`). A Spark DataFrame arrives summarised, read with ``ranker`` (the ranking a
    counterfactual estimate estimates: :class:`irspec_online.records.Ranker`), which the other forms'
    readers are given as they summarise."""
    fields = fields or {}
    extra = tuple(fields.values())
    if is_paths(source):
        return Chained([open_source(p, batch_size, fields, ranker) for p in source])
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path != "-" and (os.path.isdir(path) or path.lower().endswith(PARQUET_SUFFIXES)):
            return Opened(stem(path), path, "row", _parquet_batches(path, batch_size, extra))
        return Opened(stem(path), path, "line", batched(jsonl_records(path), batch_size))
    module = type(source).__module__.split(".")[0]
    if isinstance(source, pl.DataFrame):
        return Opened(
            "log",
            "<polars DataFrame>",
            "row",
            _polars_batches(source.lazy(), "<polars DataFrame>", batch_size, extra),
        )
    if isinstance(source, pl.LazyFrame):
        return Opened(
            "log",
            "<polars LazyFrame>",
            "row",
            _polars_batches(source, "<polars LazyFrame>", batch_size, extra),
        )
    if module == "pandas":
        return Opened("log", "<pandas DataFrame>", "row", _pandas_batches(source, batch_size, extra))
    if module == "pyspark":
        from irspec_online.spark import local_summaries, top_queries

        summaries = local_summaries(source, fields, ranker)
        return Opened(
            "log", "<Spark DataFrame>", "row", summaries=summaries, top_queries=lambda: top_queries(source)
        )
    if isinstance(source, Mapping) or not isinstance(source, Iterable):
        raise InputError(
            f"expected a log file, a DataFrame or an iterable of records, got {type(source).__name__}"
        )
    return Opened("log", "<records>", "line", batched(enumerate(source, start=1), batch_size))


class Chained:
    """Several files read as one log, one after the other: its ``where`` and ``unit`` are the file's being
    read (each batch's problems name their own file and line or row), and its ``offset`` the lines (rows)
    of the files before it, which the summaries add to each record's own: the input's order is the files'
    in the list, then the lines' in each (each file's own numbers, from 1, put a session's records of one
    time in line order across the files)."""

    def __init__(self, parts: list[Opened]) -> None:
        self.parts = parts
        self.name = parts[0].name if len(parts) == 1 else "log"
        self.where, self.unit = parts[0].where, parts[0].unit
        self.offset = 0
        self.summaries = None
        self.top_queries = None

    @property
    def batches(self) -> Iterator[list[tuple[int, Any]]]:
        """The files' batches, in order (``where``, ``unit`` and ``offset`` follow the file)."""
        self.offset = 0
        for part in self.parts:
            self.where, self.unit = part.where, part.unit
            last = 0
            for batch in part.batches:
                last = _last_number(batch) or last
                yield batch
            self.offset += last


def _last_number(batch: Any) -> int:
    """The line or row of a batch's last record (0 for none): a file's records come in their order."""
    if isinstance(batch, Rows):
        return int(batch.numbers[-1]) if len(batch) else 0
    return int(batch[-1][0]) if batch else 0


def _numbered(batches: Iterable[list[dict]]) -> Iterator[list[tuple[int, Any]]]:
    """Number the rows of consecutive batches from 1."""
    start = 1
    for rows in batches:
        yield list(enumerate(rows, start=start))
        start += len(rows)


def _numbered_rows(tables: Iterable[tuple[Any, Any]]) -> Iterator[Rows]:
    """Batches of Arrow columns (each ``(table, plain)``: :class:`~irspec_online.columnar.Rows`) numbered
    from 1, row after row."""
    start = 1
    for table, plain in tables:
        yield Rows(table, np.arange(start, start + table.num_rows, dtype=np.int64), plain)
        start += table.num_rows


def _polars_batches(
    frame: pl.LazyFrame, where: str, size: int, extra: tuple[str, ...]
) -> Iterator[list[tuple[int, Any]]]:
    wanted = columns_of(frame.collect_schema().names(), where, extra)
    # The streaming engine hands over batches as it goes: a scan_parquet/scan_ndjson frame is never
    # held whole.
    chunks = frame.select(wanted).collect_batches(chunk_size=size, engine="streaming")
    try:
        import pyarrow  # noqa: F401 (the columns are checked at once through Arrow when it is there)
    except ImportError:
        return _numbered(chunk.to_dicts() for chunk in _rechunk(chunks, size))
    return _numbered_rows((chunk.to_arrow(), _dicts(chunk)) for chunk in _rechunk(chunks, size))


def _dicts(chunk: pl.DataFrame) -> Any:
    """The rows of a polars chunk at some positions (None: all) as polars makes them records."""
    return lambda rows: (chunk if rows is None else chunk[rows]).to_dicts()


def _rechunk(chunks: Iterable[pl.DataFrame], size: int) -> Iterator[pl.DataFrame]:
    """Chunks of at most ``size`` rows (the streaming engine may hand over larger ones)."""
    for chunk in chunks:
        for offset in range(0, chunk.height, size):
            yield chunk.slice(offset, size)


def _pandas_batches(frame: Any, size: int, extra: tuple[str, ...]) -> Iterator[list[tuple[int, Any]]]:
    pa = _pyarrow("a pandas DataFrame")
    where = "<pandas DataFrame>"
    wanted = columns_of([str(c) for c in frame.columns], where, extra)

    def tables() -> Iterator[tuple[Any, None]]:
        for offset in range(0, len(frame), size):
            part = frame.iloc[offset : offset + size][wanted]
            try:  # through Arrow: list columns come out as lists, numbers as Python numbers
                yield pa.Table.from_pandas(part, preserve_index=False), None
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
                # OverflowError: an object column's integer past 64 bits, which Arrow cannot hold
                raise InputError(
                    f"rows {offset + 1}-{offset + len(part)}: cannot read the columns: {e}", where
                ) from None

    return _numbered_rows(tables())


def _parquet_batches(path: str, size: int, extra: tuple[str, ...]) -> Iterator[list[tuple[int, Any]]]:
    _pyarrow("a Parquet log")
    import pyarrow as pa
    import pyarrow.dataset as ds

    if not os.path.exists(path):
        raise InputError("no such file", path)
    try:
        dataset = ds.dataset(path, format="parquet")
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"not a Parquet file or dataset: {e}", path) from None
    wanted = columns_of(dataset.schema.names, path, extra)

    def tables() -> Iterator[tuple[Any, None]]:
        # Projection: only the log's columns are read, a batch at a time, file after file in the dataset's
        # order, each through its own reader without pre-buffering: memory is about one batch. (The
        # dataset's scanner, even with little read-ahead, held some 750 MiB reading a million records of
        # nested lists, interleaved lists' origins, where this holds under 100 MiB above the libraries.)
        import pyarrow.parquet as pq

        for file in dataset.files:
            with pq.ParquetFile(file, pre_buffer=False) as reader:
                for batch in reader.iter_batches(batch_size=size, columns=wanted):
                    if batch.num_rows:
                        yield batch, None

    return _numbered_rows(tables())


def _pyarrow(what: str) -> Any:
    try:
        import pyarrow
    except ImportError:
        raise InputError(f"reading {what} needs pyarrow: pip install 'irspec-online[parquet]'") from None
    return pyarrow
