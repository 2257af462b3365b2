"""Qrels and runs in Parquet files, and Arrow data, read column by column without going through text.

A Parquet file is recognised by its magic bytes (``PAR1`` at both ends), not by its name. Its columns
are found as a DataFrame's are (:mod:`irspec.data.objects`: ir_measures' ``query_id, doc_id,
relevance | score``, PyTerrier's ``qid, docno, label | score``, or ``columns=``), and it is read through
the same reader as a polars LazyFrame, so only those columns are read (projection: a rank, a text or an
embedding column costs nothing) and a value is checked as a DataFrame's is. A run may also have a
``run`` column holding its runid (a file is still named by its stem, as a TREC file is). The frame's ``line`` is the 0-based row, so that the checks every
input goes through (finite scores, one docno per query, :mod:`irspec.data`) name the row.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

from irspec.data.kinds import RUN, Kind
from irspec.data.objects import RUN_COLUMN, frame_from_dataframe, one_runid
from irspec.errors import InputError
from irspec.lazy import lazy_module

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = ["RUN_COLUMN", "is_arrow", "is_parquet", "read_arrow", "read_parquet"]

_MAGIC = b"PAR1"


def is_parquet(src: Any) -> TypeGuard[str | os.PathLike[str]]:
    """Whether ``src`` is the path of a regular Parquet file: ``PAR1`` at its start and its end. A text
    file could start with ``PAR1`` (a query id), but not also end with it without a newline."""
    if not isinstance(src, (str, os.PathLike)) or os.fspath(src) == "-":
        return False
    try:
        if not stat.S_ISREG(os.stat(src).st_mode):  # a pipe (<(zcat run.gz)): reading would consume it
            return False
        with open(src, "rb") as f:
            if f.read(4) != _MAGIC:
                return False
            f.seek(-4, os.SEEK_END)
            return f.read(4) == _MAGIC
    except OSError:  # missing, unreadable, too short to seek back: the text reader says what is wrong
        return False


def read_parquet(
    path: str | os.PathLike[str],
    kind: Kind,
    source: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> tuple[pl.DataFrame, str | None]:
    """The frame of a Parquet file of qrels or a run (``kind``), and the run's runid from its ``run``
    column (None without one)."""
    source = source or os.fspath(path)
    try:
        lazy = pl.scan_parquet(os.fspath(path))
        lazy.collect_schema()  # reads the footer: a damaged file fails here, before any column
    except (pl.exceptions.PolarsError, OSError) as e:
        raise InputError(f"cannot read as Parquet: {_first_line(e)}", source) from None
    return _read_table(lazy, kind, source, columns, "file")


def is_arrow(obj: Any) -> bool:
    """Whether ``obj`` is Arrow data: a pyarrow ``Table``, ``RecordBatch`` or ``RecordBatchReader``, or
    anything with the Arrow PyCapsule stream interface (asked without importing pyarrow). DataFrames
    have that interface too; :func:`irspec.data.read_run` asks about them first."""
    return hasattr(obj, "__arrow_c_stream__") and not isinstance(obj, (pl.Series, pl.DataFrame))


def read_arrow(
    obj: Any, kind: Kind, source: str = "<Arrow>", columns: Mapping[str, str] | None = None
) -> tuple[pl.DataFrame, str | None]:
    """The frame of Arrow data (:func:`is_arrow`) of qrels or a run, and the run's name."""
    try:
        table = pl.DataFrame(obj)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as e:
        raise InputError(f"cannot read as Arrow data: {_first_line(e)}", source) from None
    return _read_table(table.lazy(), kind, source, columns, "table")


def _read_table(
    lazy: pl.LazyFrame, kind: Kind, source: str, columns: Mapping[str, str] | None, holder: str
) -> tuple[pl.DataFrame, str | None]:
    """A table's frame, with 0-based rows as its ``line``, and its run name (the runid of its ``run``
    column; several in one ``holder``, a file or a table, are refused)."""
    try:
        frame = frame_from_dataframe(lazy, kind, source, columns)
        has_name = kind is RUN and RUN_COLUMN in lazy.collect_schema().names()
        name = (
            one_runid(lazy.select(RUN_COLUMN).collect().get_column(RUN_COLUMN), source, holder)
            if has_name
            else None
        )
    except (pl.exceptions.PolarsError, OSError) as e:
        raise InputError(f"cannot read: {_first_line(e)}", source) from None
    return frame.with_columns(pl.int_range(0, pl.len(), dtype=pl.UInt32).alias("line")), name


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
