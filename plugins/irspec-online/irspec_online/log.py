"""The reader of the ``log`` input: :func:`read_log`, which irspec calls for a log (``irspec.evaluate_input``,
a plan's ``log:`` key) and which reads it whole, or streamed when no row per query issue is wanted.

The records' format, their checks and the data object the metrics use are :mod:`irspec_online.records`';
the forms a log comes in, :mod:`irspec_online.sources`'; the streamed pass, :mod:`irspec_online.streaming`';
an A/B test of the log's arms, :mod:`irspec_online.ab`'. This module is the plugin's top: nothing of the
plugin imports it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

import polars as pl

from irspec_online.ab import Design
from irspec_online.analysis import Analysis
from irspec_online.columnar import summarise
from irspec_online.counterfactual import Estimating
from irspec_online.records import QueryCounts, assemble, summary_schema
from irspec_online.settings import Online
from irspec_online.sources import open_source
from irspec_online.streaming import LogStream, check_rows, rows_hint

__all__ = ["BATCH_SIZE", "read_log"]

BATCH_SIZE = 16_384
"""Records read at a time: the memory of reading is this many records plus the summaries (16,384 read
faster, and in half the memory, than 65,536, which made pyarrow hold some 500 MiB on a 6M-record file)."""


def read_log(
    source: Any,
    *,
    batch_size: int = BATCH_SIZE,
    ab: Mapping[str, Any] | None = None,
    per_query: bool = True,
    memory: int | None = None,
    online: Mapping[str, Any] | None = None,
) -> Any:
    """Read an interaction log, ``batch_size`` records at a time (the forms of ``source``:
    :mod:`irspec_online.records`); the values do not depend on ``batch_size``.

    ``ab`` (a plan's ``ab:`` section, see :class:`irspec_online.ab.Design`) reads the log for an A/B
    test: each record's arm (and user, when the user is the unit) is read and checked as well, and the
    log's :meth:`~irspec_online.records.InteractionLog.compare` compares the arms.

    ``online`` (a plan's ``online:`` section, :class:`irspec_online.settings.Online`) sets how the log's
    ``Interleaving`` metrics are tested and what its counterfactual estimates compare.

    ``per_query=False`` (no row per query issue is wanted) returns a
    :class:`~irspec_online.streaming.LogStream` instead, read only when evaluated, in one streamed pass
    and bounded memory. Otherwise the log is read whole, and a log whose rows would not fit the memory
    budget (``memory`` bytes, else irspec's default) is refused before it swaps.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    design = Design.of(ab) if ab is not None else None
    settings = Online.of(online)
    estimating = Estimating.of(settings.counterfactual)
    ranker = estimating.ranker if estimating is not None else None
    fields = design.fields if design is not None else {}
    opened = open_source(source, batch_size, fields, ranker)
    if not per_query:
        return LogStream(opened.name, opened.where, opened, fields, design, rows=rows_hint(source),
                         settings=settings, estimating=estimating)  # fmt: skip
    queries = QueryCounts()
    top = None
    if (
        opened.summaries is not None
    ):  # a Spark DataFrame is summarised by Spark, and its queries counted there
        frames = list(opened.summaries)
        check_rows(sum(f.height for f in frames), memory, opened.where)
        top = opened.top_queries() if opened.top_queries is not None else None
    else:
        frames = []
        rows = 0
        for batch in opened.batches:
            frames.append(summarise(batch, opened.where, opened.unit, queries=queries, fields=fields,
                                    ranker=ranker, offset=opened.offset))  # fmt: skip
            rows += frames[-1].height
            check_rows(rows, memory, opened.where)
    empty = pl.DataFrame(schema=summary_schema(fields))
    log = assemble(pl.concat(frames) if frames else empty, opened.name, opened.where)
    return dataclasses.replace(log, top_queries=queries.top() if top is None else top, design=design,
                               online=functools.partial(_analysed, settings), estimating=estimating)  # fmt: skip


def _analysed(settings: Online, log: Any, metrics: Any, values: Any) -> Any:
    """The interleaving test and counterfactual estimates of a log read whole (:class:`Analysis`)."""
    analysis = Analysis.of(settings, metrics, log.estimating)
    analysis.add(log, values)
    return analysis.finish()
