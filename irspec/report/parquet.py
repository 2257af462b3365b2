"""Results as a Parquet file: long rows ``run, query_id, metric, value, text``.

One row per run, query and metric (with ``per_query``), query-major as the CSV output, then one row per
run and metric for the aggregate, whose ``query_id`` is null: Parquet is typed, so the aggregate needs
no made-up query id (the CSV's ``all`` could be a real query's). ``value`` (Float64) is the value
exactly as :meth:`Result.per_query` and :meth:`Result.aggregate` give it, NaN included (a query a
metric leaves out, and the aggregate of a text metric); ``text`` (String) holds a text-valued metric's
per-query string (``relstring``), where ``value`` is null, and is null on every other row. Built with
column operations, no loop over rows: a run of 100,000 queries writes as fast as a small one.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from irspec.engine import Result

__all__ = ["to_parquet", "results_frame"]

SCHEMA = {"run": pl.String, "query_id": pl.String, "metric": pl.String, "value": pl.Float64, "text": pl.String}
"""The columns of the file, in order."""


def to_parquet(results: Sequence[Result], *, per_query: bool = False) -> bytes:
    """The Parquet file (zstd-compressed) of :func:`results_frame`."""
    buf = io.BytesIO()
    results_frame(results, per_query=per_query).write_parquet(buf, compression="zstd")
    return buf.getvalue()


def results_frame(results: Sequence[Result], *, per_query: bool = False) -> pl.DataFrame:
    """Every result's rows (see the module docstring) as one polars DataFrame of :data:`SCHEMA`."""
    parts = []
    for res in results:
        if per_query:
            parts.append(_per_query_rows(res))
        parts.append(_aggregate_rows(res))
    return pl.concat(parts, how="vertical") if parts else pl.DataFrame(schema=SCHEMA)


def _per_query_rows(res: Result) -> pl.DataFrame:
    n_queries, n_metrics = res.values.shape
    names = [str(m) for m in res.metrics]
    queries = pl.Series(res.query_ids, dtype=pl.String)
    frame = pl.DataFrame(
        {
            "run": pl.repeat(res.run_name, n_queries * n_metrics, dtype=pl.String, eager=True),
            "query_id": queries.gather(np.repeat(np.arange(n_queries), n_metrics)),
            "metric": pl.Series(names, dtype=pl.String).gather(np.tile(np.arange(n_metrics), n_queries)),
            "value": res.values.reshape(-1).astype(np.float64),
            "text": pl.repeat(None, n_queries * n_metrics, dtype=pl.String, eager=True),
        },
        schema=SCHEMA,
    )
    for name, texts in res.texts.items():
        column = pl.Series(texts, dtype=pl.String).gather(np.repeat(np.arange(n_queries), n_metrics))
        is_text = pl.col("metric") == name
        frame = frame.with_columns(
            pl.when(is_text).then(column).otherwise(pl.col("text")).alias("text"),
            pl.when(is_text).then(None).otherwise(pl.col("value")).alias("value"),
        )
    return frame


def _aggregate_rows(res: Result) -> pl.DataFrame:
    aggregate = res.aggregate()
    return pl.DataFrame(
        {
            "run": [res.run_name] * len(aggregate),
            "query_id": [None] * len(aggregate),
            "metric": list(aggregate),
            "value": list(aggregate.values()),
            "text": [None] * len(aggregate),
        },
        schema=SCHEMA,
    )
