"""Results as a Parquet file: long rows ``run, query_id, metric, value, text``.

The per-query rows (with ``per_query``) are :func:`irspec.evaluation.evaluated.results_frame`'s, the frame
``Result.to_frame()`` gives: one per run, query and metric, query by query; then one row per run and
metric for the aggregate, whose ``query_id`` is null: Parquet is typed, so the aggregate needs no
made-up query id (the CSV's ``all`` could be a real query's). ``value`` (Float64) is the value of
:meth:`Result.per_query` or :meth:`Result.aggregate`, null where that is NaN (a query a metric leaves
out, the aggregate of a text metric), as in ``to_frame``; ``text`` (String) holds a text-valued
metric's per-query string (``relstring``), where ``value`` is null, and is null on every other row. The
file always has the five columns, so that readers need not ask which there are.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import polars as pl

from irspec.evaluation.evaluated import Evaluated, results_frame

__all__ = ["parquet_frame", "to_parquet"]

# Any: polars' cast() takes a Mapping keyed by str | Selector | ... (invariant in the key) of its
# DataTypeClass, which mypy does not see pl.String as
SCHEMA: dict[Any, Any] = {
    "run": pl.String,
    "query_id": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "text": pl.String,
}
"""The columns of the file, in order."""


def to_parquet(results: Sequence[Evaluated], *, per_query: bool = False) -> bytes:
    """The Parquet file (zstd-compressed) of :func:`parquet_frame`."""
    buf = io.BytesIO()
    parquet_frame(results, per_query=per_query).write_parquet(buf, compression="zstd")
    return buf.getvalue()


def parquet_frame(results: Sequence[Evaluated], *, per_query: bool = False) -> pl.DataFrame:
    """Every result's rows (see the module docstring) as one polars DataFrame of :data:`SCHEMA`."""
    parts = [pl.DataFrame(schema=SCHEMA)]
    if per_query:
        rows = results_frame(results)
        parts.append(
            rows if "text" in rows.columns else rows.with_columns(pl.lit(None, pl.String).alias("text"))
        )
    for res in results:
        aggregate = res.aggregate()
        parts.append(
            pl.DataFrame(
                {
                    "run": [res.run_name] * len(aggregate),
                    "query_id": [None] * len(aggregate),
                    "metric": list(aggregate),
                    "value": list(aggregate.values()),
                    "text": [None] * len(aggregate),
                },
                schema=SCHEMA,
            ).with_columns(pl.col("value").fill_nan(None))
        )
    return pl.concat([part.select(list(SCHEMA)).cast(SCHEMA) for part in parts], how="vertical")
