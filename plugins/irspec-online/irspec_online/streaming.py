"""Logs larger than memory: the online metrics' means, the log's tables and an A/B test in one streamed
pass, in bounded memory, equal to the in-memory evaluation's.

``irspec.evaluate_input(log, metrics, per_query=False)`` (and a plan whose outputs show no per-query
rows) reads the log with :func:`irspec_online.log.read_log` ``(per_query=False)``, which returns a
:class:`LogStream`: nothing is read until :meth:`LogStream.evaluate`, which

1. reads the log a batch of records at a time, as the in-memory reader does, checking and summarising
   each record (:func:`~irspec_online.records.summarise`) and counting its query text (top queries) and its
   UTC hour (queries per unit: :class:`~irspec_online.records.HourCounts`);
2. holds up to ``chunk_rows`` summaries (a few numbers per query issue), then spreads them over
   ``partitions`` temporary Arrow files by a hash of their session (and, for ``QueriesPer(minute|hour|
   day)``, of their time unit), with irspec's own :class:`irspec.plugin_api.Partitions`, the machinery that
   partitions a shuffled run by query: the log may come in any order, sessions spread over many batches;
3. reads back one partition at a time, which holds whole sessions (time units), runs the same kernels
   on it (:mod:`irspec_online.kernels`) and adds each metric's sum of values and count of values, and,
   for an A/B test, the arms' exact moments (:class:`irspec_online.ab.Moments`).

With users as the unit of an A/B test, a user's sessions may sit in different partitions: each
partition's sums per user and arm (:func:`irspec_online.ab.partial_sums`) are held up to a chunk, then
spread over as many temporary files again by a hash of the user; read back one partition at a time,
each holds every partial sum of its users, whose whole sums give the arms' moments.

A log that fits in one chunk is evaluated at once, without temporary files. Memory is the chunk, one
partition (about a ``partitions``-th of the log's summaries, or of its users' sums) and the counts per
distinct query text, never the records, a row per query issue nor a row per user.

**Exactness.** A mean is the sum of a metric's values divided by their number, and the pass keeps every
sum exactly (integers; fractions for a value that is not whole: :func:`~irspec_online.records.exact_sum`),
so that its means do not depend on how the log was cut. The in-memory :meth:`irspec.Result.aggregate`
adds the values left to right in the rows' order. Most online metrics' values are whole numbers (0 or 1,
counts of query issues, the outcomes of team-draft, balanced and optimized interleaving), whose float64
sums are exact in any order below 2**53, so the means are the same bits (``tests/test_streaming.py``
holds them equal on random logs in every form, with batches and chunks small enough to split every
session). ``Interleaving(probabilistic)``'s and the counterfactual estimates' values are fractions,
whose exact sum and left-to-right sum can round apart: those means can differ in the last bits (the
same bits would need every value added in the log's row order, which partitions by session hash do not
keep). The interleaving test and the estimates add their sums as the means do (exactly here: an
:class:`~irspec_online.analysis.Analysis` made ``exact``), so the tables equal the means.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from irspec import EvaluationError, InputError, InputTable
from irspec.plugin_api import Partitions, default_memory, spill_directory
from irspec_online.ab import (
    add_moments,
    analyse,
    arm_moments,
    check_metrics,
    combine,
    partial_sums,
)
from irspec_online.analysis import Analysis
from irspec_online.columnar import summarise
from irspec_online.kernels import group_seconds, kernel_of
from irspec_online.records import HourCounts, QueryCounts, assemble, exact_sum, is_paths, top_table

__all__ = ["CHUNK_ROWS", "PARTITIONS", "PARTITION_ROWS", "ROW_BYTES", "LogStream", "check_rows", "rows_hint"]

PARTITIONS = 64
"""The fewest temporary files a log's summaries are spread over once it is larger than a chunk; a larger
log gets one per :data:`PARTITION_ROWS` query issues (counted or estimated, :func:`rows_hint`)."""

PARTITION_ROWS = 250_000
"""Query issues per partition aimed at: the memory of evaluating one partition (its summaries, the
per-row arrays and ids of its sessions) stays some 50-100 MiB whatever the size of the log."""

CHUNK_ROWS = 1 << 19
"""Summaries (query issues) held before they are spread over the partitions: some 30-50 MiB."""

ROW_BYTES = 700
"""Memory per query issue of an in-memory evaluation (a result row: its id as a Python string and a
float per metric, and its summary), measured on 2M query issues (docs/reference/online-scale.md); the
estimate that :func:`check_rows` holds against the memory budget."""


def check_rows(rows: int, memory: int | None, where: str) -> None:
    """Refuse a per-query-issue evaluation whose rows would not fit the memory budget (``memory`` bytes,
    else irspec's default budget), before it swaps."""
    budget = memory if memory is not None else default_memory()
    if rows * ROW_BYTES > budget:
        raise EvaluationError(
            f"{where}: a row per query issue for more than {rows:,} query issues needs over {_size(rows * ROW_BYTES)}, "
            f"more than the memory budget of {_size(budget)} (--memory, a plan's options.memory, memory=): leave the "
            "per-query rows out (no -q, per_query, intervals or long formats), and the aggregates stream in bounded "
            "memory, or give a larger budget"
        )


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


@dataclass
class LogStream:
    """A log opened for a streamed evaluation (see the module docstring): no rows (``ids`` is empty), its
    ``name`` and ``source``, and :meth:`evaluate`, which makes the pass."""

    name: str
    source: str
    opened: Any
    fields: dict[str, str]
    design: Any = None
    partitions: int = PARTITIONS
    chunk_rows: int = CHUNK_ROWS
    rows: int | None = None
    """The log's query issues, counted (Parquet, frames) or estimated (JSON Lines), when known."""
    ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    settings: Any = None
    """The ``online`` settings (:class:`irspec_online.settings.Online`) of the interleaving test and the
    counterfactual estimates."""
    estimating: Any = None
    """What the log is read to estimate (:class:`irspec_online.counterfactual.Estimating`), or None."""

    def evaluate(
        self, metrics: Sequence[Any]
    ) -> tuple[dict[str, float], tuple[InputTable, ...], tuple[str, ...]]:
        """One pass over the log: each metric's mean (keyed by its canonical text), the log's tables (top
        queries, queries per unit, and an A/B test's) and warnings."""
        if self.design is not None:
            check_metrics(metrics)
        keys = _groupings(metrics)
        queries, hours = QueryCounts(), HourCounts()
        with contextlib.ExitStack() as stack:
            count = max(self.partitions, -(-(self.rows or 0) // PARTITION_ROWS))
            chunks = _chunks(self._summaries(queries, hours), self.chunk_rows)
            head = list(itertools.islice(chunks, 2))  # a second chunk or none: spread, or not
            if not head:
                raise InputError("the log has no records", self.source)
            # the temporary directory made for a log of several chunks alone (a log of one has no files:
            # making and removing the directory was a tenth of evaluating a small log, issue 35)
            directory = stack.enter_context(spill_directory()) if len(head) > 1 else ""
            spread = {key: Partitions(directory, count, key) for key in keys}
            # with users as the unit, a user's sessions may sit in several partitions: their sums are
            # spread by user (the partial sums' "unit" column) over as many partitions again
            by_user = self.design is not None and self.design.unit == "user" and len(head) > 1
            users = Partitions(directory, count, "unit") if by_user else None
            totals = _Totals(metrics, self.design, self.source, users, self.chunk_rows)
            # exact sums, as the means': the same tables however the log was cut into partitions
            totals.analysis = Analysis.of(self.settings, metrics, self.estimating, exact=True)
            if len(head) == 1:  # the whole log is one chunk: no temporary files
                for group in keys.values():
                    totals.add(self._part(head[0]), group)
            else:
                for chunk in _taken(head, chunks):  # one chunk held at a time
                    for key in keys:
                        spread[key].add(_keyed(chunk, key))
                    del chunk  # let it go before the next one is gathered
                for key, group in keys.items():
                    for part in spread[key]:
                        totals.add(self._part(part.drop(key) if key != "session" else part), group)
            ab_tables, ab_warnings = totals.ab_test()  # reads the users' partitions
        tables = (*_top(queries), hours.table())
        more_tables, more_warnings = totals.analysis.finish()
        # an estimate's mean is the analysis' (SNIPS is a ratio of sums, not a mean of the partitions' terms)
        means = {**totals.means(), **totals.analysis.means()}
        return means, (*tables, *ab_tables, *more_tables), (*ab_warnings, *more_warnings)

    def _summaries(self, queries: QueryCounts, hours: HourCounts) -> Iterator[pl.DataFrame]:
        if self.opened.summaries is not None:  # Spark summarised the records
            for frame in self.opened.summaries:
                hours.add(frame["time"].to_numpy())
                yield frame
            return
        for batch in self.opened.batches:
            ranker = self.estimating.ranker if self.estimating is not None else None
            frame = summarise(batch, self.opened.where, self.opened.unit, queries=queries, fields=self.fields,
                              ranker=ranker, offset=self.opened.offset)  # fmt: skip
            hours.add(frame["time"].to_numpy())
            yield frame

    def _part(self, frame: pl.DataFrame) -> Any:
        # the rows' ids only for an A/B test (query issues as its unit are named by them)
        log = assemble(frame, self.name, self.source, ids=self.design is not None)
        return dataclasses.replace(log, estimating=self.estimating)


def rows_hint(source: Any) -> int | None:
    """The query issues of a log, for the number of partitions: a Parquet file's or a frame's count, a
    JSON Lines file's size over 100 bytes a record (gzip: 8 times its size), else None."""
    if is_paths(source):
        hints = [rows_hint(p) for p in source]  # several files, one log
        return None if any(h is None for h in hints) else sum(h for h in hints if h is not None)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path == "-" or not os.path.exists(path):
            return None
        if os.path.isdir(path) or path.lower().endswith((".parquet", ".pq")):
            try:
                import pyarrow.dataset as ds

                return ds.dataset(path, format="parquet").count_rows()
            except Exception:  # an unreadable file is reported, located, by the reader itself
                return None
        return os.path.getsize(path) * (8 if path.lower().endswith(".gz") else 1) // 100
    if isinstance(source, pl.DataFrame) or type(source).__module__.split(".")[0] == "pandas":
        return len(source)
    return None


def _groupings(metrics: Sequence[Any]) -> dict[str, list[int]]:
    """The partition key of each metric (``session``, or ``unit_<seconds>`` for a time unit's metric),
    with the positions of the metrics it serves."""
    keys: dict[str, list[int]] = {}
    for j, m in enumerate(metrics):
        seconds = group_seconds(m)
        keys.setdefault("session" if seconds is None else f"unit_{seconds:g}", []).append(j)
    return keys


def _keyed(chunk: pl.DataFrame, key: str) -> pl.DataFrame:
    """The chunk with its partition key: the session's own column, or the time unit's number."""
    if key == "session":
        return chunk
    seconds = float(key.removeprefix("unit_"))
    # the unit's number as the kernels number it (kernels.queries_per: numpy's floor(time / seconds); a
    # polars expression divides by a literal as a product with its inverse, which can round the other
    # way), and no polars query a chunk and unit, whose fixed cost was most of a small chunk's
    unit = np.floor(chunk["time"].to_numpy() / seconds).astype(np.int64)
    return chunk.hstack([pl.Series(key, unit, dtype=pl.Int64)])


def _chunks(frames: Iterator[pl.DataFrame], rows: int) -> Iterator[pl.DataFrame]:
    """The frames gathered into chunks of at least ``rows`` rows (the last may be smaller)."""
    held: list[pl.DataFrame] = []
    count = 0
    for frame in frames:
        held.append(frame)
        count += frame.height
        if count >= rows:
            yield pl.concat(held)
            held, count = [], 0
    if held:
        yield pl.concat(held)


def _taken(head: list[pl.DataFrame], rest: Iterator[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    """The chunks of ``head``, each let go once yielded, then those of ``rest``."""
    while head:
        yield head.pop(0)
    yield from rest


def _top(queries: QueryCounts) -> tuple[InputTable, ...]:
    top = queries.top()
    return (top_table(top),) if top else ()


class _Totals:
    """What the pass adds up: each metric's exact sum of values and count of values, and an A/B test's
    arm moments. With users as the unit, the partial sums of each part of the log (one row per user and
    arm) are held up to ``chunk_rows`` rows, then spread over ``users`` (:class:`irspec.plugin_api.Partitions`
    by user), whose partitions, each holding every partial sum of its users, give the moments one at a
    time; without ``users`` (a log of one chunk) they are held."""

    def __init__(
        self, metrics: Sequence[Any], design: Any, where: str, users: Any = None, chunk_rows: int = CHUNK_ROWS
    ) -> None:
        self.metrics = list(metrics)
        self.design = design
        self.where = where
        self.users = users
        self.chunk_rows = chunk_rows
        self.sums: list[Any] = [0] * len(self.metrics)
        self.counts = [0] * len(self.metrics)
        self.rows = [0] * len(self.metrics)  # values, defined or not: none defined is an undefined mean
        self.moments: dict[str, list[Any]] = {}
        self.user_sums: list[pl.DataFrame] = []
        self.held = 0
        self.analysis: Any = None

    def add(self, log: Any, group: list[int]) -> None:
        """Add the metrics of ``group`` (positions) over a part of the log holding whole groups."""
        values = np.column_stack([kernel_of(self.metrics[j])(log, self.metrics[j]) for j in group])
        for i, j in enumerate(group):
            column = values[:, i]
            defined = column[~np.isnan(column)]
            self.sums[j] += exact_sum(defined)
            self.counts[j] += len(defined)
            self.rows[j] += len(column)
        if self.analysis is not None:  # the interleaving test, the counterfactual estimates
            self.analysis.add(log, values, group)
        if self.design is not None:  # check_metrics made every metric a session metric: one group
            self._add_ab(log, values)

    def _add_ab(self, log: Any, values: np.ndarray) -> None:
        partial = partial_sums(log, self.metrics, values, self.design)
        if self.design.unit == "user":  # a user's sessions may be in several partitions
            self.user_sums.append(partial)
            self.held += partial.height
            if self.users is not None and self.held >= self.chunk_rows:
                self._spread_users()
        else:  # sessions and query issues are whole in a partition
            self._add_moments([partial])

    def _spread_users(self) -> None:
        """The held partial sums of users written to their partitions, and let go."""
        if self.user_sums:
            self.users.add(pl.concat(self.user_sums))
        self.user_sums, self.held = [], 0

    def _add_moments(self, parts: list[pl.DataFrame]) -> None:
        """Add the arms' moments of units whose every partial sum is in ``parts``."""
        self.moments = add_moments(self.moments, arm_moments(combine(parts, self.where), len(self.metrics)))

    def means(self) -> dict[str, float]:
        """Each metric's mean, as :meth:`irspec.Result.aggregate` gives it (0.0 with no value at all,
        NaN with values but none defined)."""
        out = {}
        for m, total, n, rows in zip(self.metrics, self.sums, self.counts, self.rows, strict=True):
            if m.aggregate != "mean":
                raise EvaluationError(
                    f"{m} aggregates by {m.aggregate}; the streamed log evaluation takes means"
                )
            out[str(m)] = float(total) / n if n else (math.nan if rows else 0.0)
        return out

    def ab_test(self) -> tuple[tuple[InputTable, ...], tuple[str, ...]]:
        if self.design is None:
            return (), ()
        if self.design.unit == "user" and self.users is None:
            self._add_moments(self.user_sums)
        elif self.design.unit == "user":
            self._spread_users()
            for part in self.users:  # every partial sum of a user is in its partition
                self._add_moments([part])
        test = analyse(self.moments, self.metrics, self.design)
        return test.tables(), test.warnings
