"""Qrels and runs given as Python objects: pytrec_eval's ``{qid: {docno: value}}`` dicts and pandas or
polars DataFrames (columns ``query_id``, ``doc_id`` and ``relevance`` or ``score``).

Each becomes the frame a TREC file gives (columns query, docno, <value>, and a null line, since
there is no line to name); :mod:`irspec.data` then checks it as it checks a file. A bad value is an
:class:`~irspec.errors.InputError` naming the query and docno (and for a DataFrame the row).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from irspec.data.kinds import QRELS, Kind
from irspec.errors import InputError


def frame_from_mapping(d: Any, kind: Kind, source: str) -> pl.DataFrame:
    """The frame of ``{qid: {docno: value}}``: string ids, integer labels or real scores."""
    if not isinstance(d, Mapping):
        raise InputError(
            f"expected a mapping {{qid: {{docno: {kind.value}}}}}, got {type(d).__name__}", source
        )
    queries: list[str] = []
    docnos: list[Any] = []
    values: list[Any] = []
    for q, docs in d.items():
        if not isinstance(q, str):
            raise InputError(f"query ids must be strings, got {q!r}", source)
        if not isinstance(docs, Mapping):
            raise InputError(
                f"expected a mapping docno -> {kind.value}, got {type(docs).__name__}", source, query=q
            )
        docnos.extend(docs.keys())
        values.extend(docs.values())
        queries.extend([q] * len(docs))
    try:
        docno = pl.Series("docno", docnos, dtype=pl.String, strict=True)
    except (TypeError, pl.exceptions.PolarsError):
        i = next(i for i, x in enumerate(docnos) if not isinstance(x, str))
        raise InputError(f"docnos must be strings, got {docnos[i]!r}", source, query=queries[i]) from None
    dtype = pl.Int64 if kind is QRELS else pl.Float64
    try:
        arr = np.asarray(values) if values else np.zeros(0, dtype=np.int64)
    except (OverflowError, ValueError):  # ints beyond 64 bits, ragged nesting
        arr = np.asarray(values, dtype=object)
    if arr.ndim == 1 and arr.dtype.kind in ("iu" if kind is QRELS else "iuf"):
        value = pl.Series(kind.value, arr)
    else:
        check = _is_label if kind is QRELS else _is_score
        i = next((i for i, x in enumerate(values) if not check(x)), None)
        if i is not None:
            raise InputError(_bad_value_message(kind, values[i], docnos[i]), source, query=queries[i])
        value = pl.Series(kind.value, [int(x) if kind is QRELS else float(x) for x in values])
    try:
        value = value.cast(dtype, strict=True)
    except pl.exceptions.PolarsError as e:
        raise InputError(f"{kind.value}s out of range: {e}", source) from None
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


def _bad_value_message(kind: Kind, value: Any, docno: Any) -> str:
    if kind is QRELS:
        return f"label must be an integer, got {value!r} for docno {docno!r}"
    return f"score must be a number, got {value!r} for docno {docno!r}"


def is_dataframe(obj: Any) -> bool:
    """Whether ``obj`` is a pandas or polars DataFrame, told by its type's name so that pandas is
    never imported to ask."""
    t = type(obj)
    return t.__name__ == "DataFrame" and t.__module__.split(".")[0] in ("pandas", "polars")


def frame_from_dataframe(df: Any, kind: Kind, source: str) -> pl.DataFrame:
    """The frame of a pandas or polars DataFrame's ``query_id``, ``doc_id`` and value columns."""
    wanted = ["query_id", "doc_id", "relevance" if kind is QRELS else "score"]
    if not is_dataframe(df):
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
    value = _value_column(v, kind, ids, source)
    return pl.DataFrame(
        [
            ids[0].alias("query"),
            ids[1].alias("docno"),
            value.alias(kind.value),
            pl.Series("line", [None] * len(value), dtype=pl.UInt32),
        ]
    )


def _series_from_pandas(s: Any, name: str) -> pl.Series:
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iufb":
        return pl.Series(name, s.to_numpy())
    # Object, string or nullable extension columns: go through Python objects, nulls as None.
    return pl.Series(name, s.to_numpy(dtype=object, na_value=None), strict=False)


def _id_column(s: pl.Series, source: str) -> pl.Series:
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


def _value_column(s: pl.Series, kind: Kind, ids: list[pl.Series], source: str) -> pl.Series:

    def fail(row: int, message: str) -> None:
        raise InputError(f"row {row}: {message} for docno {ids[1][row]!r}", source, query=ids[0][row])

    if s.null_count():
        fail(int(s.is_null().arg_true()[0]), f"missing {kind.value}")
    if kind is QRELS:
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