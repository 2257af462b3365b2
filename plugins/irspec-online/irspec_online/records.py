"""Search interaction logs' records: their format, their checks and summaries, JSON Lines, the log's
counts, the data object the metrics use, and how the metrics' values are summed (:func:`summed`).

One record per query issue (a search results page shown)::

    {"session": "s1", "query": "mars", "timestamp": "2024-05-01T10:00:00Z",
     "results": ["d3", "d7", "d1"], "clicks": [{"doc": "d7", "rank": 2, "dwell": 45.5}]}

``session``
    The session id (a string; a number is read as its text). Required.
``query``
    The query text. Required (may be empty).
``timestamp``
    When the query was issued: Unix seconds (a number), ISO 8601 text (``2024-05-01T10:00:00Z``; a time
    without an offset is UTC) or, in a DataFrame or Parquet, a datetime (naive means UTC). Required.
``results``
    The document ids shown, in rank order; ``[]`` for a page with no results. Required.
``clicks``
    Optional, default none: a list of ``{"doc": ID, "rank": R, "dwell": SECONDS}``. ``rank`` (1-based,
    below 2**31) may be left out when ``doc`` is among the results (its position there); ``dwell``
    (seconds, >= 0) may be left out or null when unknown. A document among the results may be clicked
    only at its own rank; one not among them (an ad) at any, and its click counts as a click on the page
    (the best rank clicked, the dwell) but on no result: interleaving, click models, counterfactual
    estimates and swap counts read only the clicks whose document is the result at their rank.

A log is JSON Lines (one record per line; ``.gz`` or gzip's magic bytes: decompressed; ``-``: standard
input; :func:`jsonl_records`), Parquet (a file or a directory of part files, columns named as the keys;
``clicks`` a list of structs), a polars DataFrame or LazyFrame, a pandas DataFrame, a Spark DataFrame, or
records in memory (:mod:`irspec_online.sources` opens each). Every form is read in batches of whole
records, and each record is reduced at once to the few numbers the metrics need (:data:`SUMMARY`), so
memory holds one batch of records and the summaries, never the file; every form goes through the same
record checks (:func:`summarise`), and the summaries become an :class:`InteractionLog`
(:func:`assemble`). The same pass counts each query text's issues and clicked issues
(:class:`QueryCounts`, one entry per distinct query), for the log's "non-metrics": its top queries and
its queries per hour or day (:meth:`InteractionLog.tables`). Every problem is an
:class:`irspec.InputError` naming the file and line (JSON Lines) or row (frames, Parquet).

The plugin's lowest module: the reader (:mod:`irspec_online.log`), the kernels, the A/B test, the
streamed pass and Spark build on it, and it imports none of them.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import heapq
import io
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from irspec import InputError, InputTable
from irspec.plugin_api import bounded_lines, quote

__all__ = [
    "CLICK",
    "COLUMNS",
    "MATCHED",
    "RANK_LIMIT",
    "REQUIRED",
    "SHOWN",
    "SUFFIXES",
    "SUMMARY",
    "TOP_QUERIES",
    "Clicks",
    "HourCounts",
    "InteractionLog",
    "KeyTwice",
    "Matched",
    "QueryCounts",
    "Ranker",
    "Shown",
    "Slots",
    "as_float",
    "assemble",
    "batched",
    "bytes_keys",
    "checked_records",
    "columns_of",
    "empty_lists",
    "exact_sum",
    "first_repeat",
    "is_paths",
    "jsonl_records",
    "key_of",
    "keys_of",
    "once",
    "stem",
    "summarise",
    "summary_schema",
    "summed",
    "text_keys",
    "top_table",
    "whole",
]

SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".parquet", ".pq")
"""File name endings of interaction logs (a directory is read as a Parquet dataset)."""

PARQUET_SUFFIXES = (".parquet", ".pq")

TOP_QUERIES = 10
"""How many of the most frequent query texts a log's "Top queries" table lists."""

HOUR_SPAN = 2 * 86400.0
"""A log spanning at most this many seconds has its queries counted per hour; a longer one, per day."""

EVERY_DAY = 36_600
"""A log spanning at most this many days (a century) lists each of them in its table of queries per day,
those without queries too; a longer one (a time far off, mistyped) lists its days with queries alone, so
that the table stays as long as the log has days."""

COLUMNS = (
    "session",
    "query",
    "timestamp",
    "results",
    "clicks",
    "origins",
    "propensities",
    "user",
    "qid",
    "swap",
)
REQUIRED = COLUMNS[:4]

CLICK = pl.Struct(
    {"rank": pl.Int32, "team": pl.Int8, "rank_a": pl.Int32, "rank_b": pl.Int32, "p_a": pl.Float64, "new_rank": pl.Int32,
     "logging_p": pl.Float64}
)  # fmt: skip
"""A clicked result as the interleaving and counterfactual metrics see it (a click whose document is the
result at its rank: one on a document not among the results, such as an ad, is none): its rank, the
origin the record's ``origins`` gives it (``team``: 0 a, 1 b, -1 none; ``rank_a``, ``rank_b``: 0
unknown; ``p_a``: NaN unknown) and, when the log is read with a ranking to estimate (:class:`Ranker`),
the rank that ranking gives its document (``new_rank``: 0 when it does not rank it); ``logging_p`` the
probability with which the logger put the document in that slot (the record's ``propensities``; NaN when
it has none)."""

MATCHED = pl.Struct({"rank": pl.Int32, "weight": pl.Float64})
"""A slot where the ranking to estimate puts the document the log shows there, and the inverse of the
probability with which the logger put it there (a randomised logger's record has ``propensities``)."""

SHOWN = pl.Struct({"rank": pl.Int32})
"""The rank the ranking to estimate gives a document the record shows (only those it ranks, in order)."""

SUMMARY = {
    "session": pl.String,
    "time": pl.Float64,
    "line": pl.Int64,
    "n_results": pl.Int64,
    "first_click": pl.Int64,
    "best_dwell": pl.Float64,
    "query_key": pl.Int64,
    "user_key": pl.Int64,
    "interleaved": pl.Boolean,
    "clicked": pl.List(CLICK),
    "ranked": pl.Int8,
    "matched": pl.List(MATCHED),
    "shown_new": pl.List(SHOWN),
    "new_length": pl.Int32,
}
"""One query issue as the metrics see it: its session, time (Unix seconds), line (or row) in the input,
number of results, the best rank clicked (0: no click) and the longest known dwell time of its clicks
(NaN: none known); a key of its query text and of its user (the ``user`` key, else the session:
:func:`text_keys`), whether it served an interleaved list (it has ``origins``), its clicked results
(:data:`CLICK`, in rank order, each once; an ad's click counts for the best rank and dwell, never as a
result's), whether the ranking to estimate (:class:`Ranker`) ranks its query (``ranked``: 0 no, 1 yes, 2
yes and the record has the logger's ``propensities``), and the slots where that ranking agrees with the
log (:data:`MATCHED`: only for a record with the logger's ``propensities``), the ranks that ranking gives the documents shown (:data:`SHOWN`) and
how many it ranks for the query. Every online metric is a function of these columns."""


@dataclass(frozen=True, eq=False)
class InteractionLog:
    """A read interaction log: one row per query issue, sorted by session, then time, then input order.

    Per row (``n`` rows): ``ids`` (``"SESSION:I"``, the I-th query of the session, 1-based; the rows of an
    evaluation result; empty in a part of a streamed pass, :func:`assemble`), ``session`` (index into
    ``sessions``), ``first_in_session`` (bool), ``time`` (Unix seconds, float), ``n_results``, ``line``
    (1-based line in the file, or row of a frame; in a log of several files, after the lines of the files
    before its own: the input's order), ``first_click`` (the best rank clicked, 0 when nothing was clicked)
    and ``best_dwell`` (the longest known dwell time of the row's clicks, seconds; NaN when
    none is known). ``sessions`` holds the session ids in order. ``top_queries`` holds the most frequent
    query texts as ``(query, issues, clicked issues)``, most issued first (ties: by text); empty when the
    reader did not count them (Spark).
    """

    name: str
    source: str
    ids: tuple[str, ...]
    sessions: tuple[str, ...]
    session: np.ndarray
    first_in_session: np.ndarray
    time: np.ndarray
    n_results: np.ndarray
    line: np.ndarray
    first_click: np.ndarray
    best_dwell: np.ndarray
    top_queries: tuple[tuple[str, int, int], ...] = ()
    labels: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """Per row, the text of each extra field read for an A/B test (``arm``, ``user``; see
    :func:`read_log`'s ``ab``), keyed by its role."""
    design: Any = None
    """The A/B test's :class:`~irspec_online.ab.Design` when the log was read for one, else None: its
    ``compare(log, metrics, values)`` tests the arms (:meth:`compare`)."""
    query_key: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Per row, a key of its query text (:func:`text_keys`)."""
    user_key: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Per row, a key of its user (the record's ``user``, else its session)."""
    interleaved: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=bool))
    """Per row, whether it served an interleaved list (the record has ``origins``)."""
    clicks: Any = None
    """Every row's clicked slots (:class:`Clicks`)."""
    ranked: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    """Per row, whether the ranking to estimate ranks its query: 0 no, 1 yes, 2 yes and the record has
    the logger's propensities (a randomised logger's)."""
    matched: Any = None
    """Every row's slots where the ranking to estimate agrees with the log (:class:`Matched`)."""
    shown_new: Any = None
    """Every row's ranks (in the ranking to estimate) of the documents it shows (:class:`Shown`)."""
    new_length: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    """Per row, how many documents the ranking to estimate ranks for its query."""
    estimating: Any = None
    """What the log was read to estimate (:class:`irspec_online.counterfactual.Estimating`), or None."""
    online: Any = None
    """Called as ``online(log, metrics, values)`` by :meth:`compare`: the tables and warnings of the
    interleaving test and counterfactual estimates (set by :func:`irspec_online.log.read_log`: the
    :class:`~irspec_online.analysis.Analysis` of the reader's ``online`` settings), or None."""

    def __len__(self) -> int:
        return len(self.session)

    def tables(self) -> list[InputTable]:
        """The log's non-metrics: its top queries (with their CTR) and its queries per hour or day."""
        found = [_per_unit_table(self.time)]
        if self.top_queries:
            found.insert(0, top_table(self.top_queries))
        return found

    def compare(self, metrics: Any, values: np.ndarray) -> tuple[tuple[InputTable, ...], tuple[str, ...]]:
        """The A/B test of the log's arms (when it was read with ``ab=``) and its interleaving test and
        counterfactual estimates, from each metric's per-row ``values``: their tables and warnings
        (``irspec.evaluate_input`` adds both to the result)."""
        tables: tuple[InputTable, ...] = ()
        warnings: tuple[str, ...] = ()
        if self.design is not None:  # the design knows the test, the log its rows
            tables, warnings = self.design.compare(self, metrics, values)
        if self.online is not None:  # the interleaving test, the counterfactual estimates
            more, also = self.online(self, metrics, values)
            tables, warnings = (*tables, *more), (*warnings, *also)
        return tables, warnings


class Slots:
    """Slots of ``n`` rows (query issues), each row's in rank order: row ``i``'s are ``start[i]:start[i +
    1]`` of the per-slot arrays, one per field of the struct :attr:`FIELDS` (a :data:`SUMMARY` list
    column's items, the column :attr:`COLUMN`)."""

    FIELDS: pl.Struct
    COLUMN: str
    start: np.ndarray

    @classmethod
    def of(cls, column: pl.Series) -> Any:
        """The slots of a :data:`SUMMARY` list column."""
        counts = column.list.len().fill_null(0).to_numpy().astype(np.int64)
        flat = column.explode().struct.unnest().drop_nulls("rank")
        start = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=start[1:])
        return cls(start, *(flat[name].to_numpy() for name in cls.FIELDS.to_schema()))

    def column(self) -> pl.Series:
        """The slots as a :data:`SUMMARY` list column (what :meth:`of` reads)."""
        schema = self.FIELDS.to_schema()
        flat = pl.DataFrame({name: getattr(self, name) for name in schema}, schema=schema)
        rows = pl.Series(self.row, dtype=pl.Int64)
        lists = flat.select(pl.struct(pl.all()).alias("s")).with_columns(row=rows).group_by("row").agg("s")
        every = pl.DataFrame({"row": np.arange(self.n)}, schema={"row": pl.Int64})
        joined = every.join(lists, on="row", how="left", maintain_order="left")
        return joined["s"].fill_null([]).cast(pl.List(self.FIELDS)).alias(self.COLUMN)

    @property
    def n(self) -> int:
        """The number of rows."""
        return len(self.start) - 1

    @property
    def row(self) -> np.ndarray:
        """Per slot, the index of its row."""
        return np.repeat(np.arange(self.n), np.diff(self.start))

    def per_row(self, values: np.ndarray) -> np.ndarray:
        """The sum of ``values`` (one per slot) over each row's slots."""
        return np.bincount(self.row, weights=values, minlength=self.n)


@dataclass(frozen=True)
class Clicks(Slots):
    """The clicked results of ``n`` rows, each once (:data:`CLICK`'s fields): ``rank``, ``team`` (0:
    ``a``, 1: ``b``, -1: none), ``rank_a`` and ``rank_b`` (0: unknown), ``p_a`` (NaN: unknown),
    ``new_rank`` (0: not ranked) and ``logging_p`` (NaN: unknown)."""

    FIELDS = CLICK
    COLUMN = "clicked"
    start: np.ndarray
    rank: np.ndarray
    team: np.ndarray
    rank_a: np.ndarray
    rank_b: np.ndarray
    p_a: np.ndarray
    new_rank: np.ndarray
    logging_p: np.ndarray


@dataclass(frozen=True)
class Matched(Slots):
    """The slots of ``n`` rows where a ranking to estimate puts the logged document where it was shown,
    with the inverse of its logging probability (:data:`MATCHED`'s fields: ``rank``, ``weight``)."""

    FIELDS = MATCHED
    COLUMN = "matched"
    start: np.ndarray
    rank: np.ndarray
    weight: np.ndarray


@dataclass(frozen=True)
class Shown(Slots):
    """The ranks the ranking to estimate gives the documents each of ``n`` rows shows (:data:`SHOWN`)."""

    FIELDS = SHOWN
    COLUMN = "shown_new"
    start: np.ndarray
    rank: np.ndarray


class QueryCounts:
    """Issues and clicked issues per query text, counted as records are summarised; memory holds one
    entry per distinct query text, never the records."""

    def __init__(self) -> None:
        self.issued: dict[str, int] = {}
        self.clicked: dict[str, int] = {}

    def add(self, query: str, clicked: bool) -> None:
        """Count one issue of ``query``."""
        self.issued[query] = self.issued.get(query, 0) + 1
        if clicked:
            self.clicked[query] = self.clicked.get(query, 0) + 1

    def add_counts(self, queries: list[str], issued: list[int], clicked: list[int]) -> None:
        """Count ``issued[i]`` issues of ``queries[i]``, ``clicked[i]`` of them with a click (a batch's
        counts, each distinct query once)."""
        for query, n, c in zip(queries, issued, clicked, strict=True):
            self.issued[query] = self.issued.get(query, 0) + n
            if c:
                self.clicked[query] = self.clicked.get(query, 0) + c

    def top(self, k: int = TOP_QUERIES) -> tuple[tuple[str, int, int], ...]:
        """The ``k`` most issued queries as ``(query, issues, clicked issues)``; ties in text order."""
        best = heapq.nsmallest(k, self.issued.items(), key=lambda item: (-item[1], item[0]))
        return tuple((q, n, self.clicked.get(q, 0)) for q, n in best)


def top_table(top: tuple[tuple[str, int, int], ...]) -> InputTable:
    """The log's "Top queries" table from :meth:`QueryCounts.top`'s ``(query, issues, clicked issues)``."""
    return InputTable(
        "Top queries",
        ("query", "issues", "CTR"),
        tuple((q, n, c / n) for q, n, c in top),
        chart="bar",
        description=f"The {len(top)} most frequent query texts (exact text), how often each was issued, and the "
        "share of those issues with a click.",
    )


class HourCounts:
    """Query issues per UTC hour (and the first and last time), counted batch by batch: the log's
    "Queries per hour or day" table (:meth:`table`) from one count per hour the log spans."""

    def __init__(self) -> None:
        self.per_hour: dict[int, int] = {}
        self.first = math.inf
        self.last = -math.inf

    def add(self, time: np.ndarray) -> None:
        """Count query issues issued at ``time`` (Unix seconds)."""
        if len(time) == 0:
            return
        slots, counts = np.unique(np.floor(time / 3600.0).astype(np.int64), return_counts=True)
        for slot, n in zip(slots.tolist(), counts.tolist(), strict=True):
            self.per_hour[slot] = self.per_hour.get(slot, 0) + n
        self.first, self.last = min(self.first, float(time.min())), max(self.last, float(time.max()))

    def table(self) -> InputTable:
        """Query issues per calendar hour (a log of at most two days) or day, UTC, every unit from the
        first to the last: units without queries show 0 (but over :data:`EVERY_DAY` days)."""
        hourly = self.last - self.first <= HOUR_SPAN
        unit, hours, shown = ("hour", 1, "%Y-%m-%d %H:00") if hourly else ("day", 24, "%Y-%m-%d")
        counts: dict[int, int] = {}
        for slot, n in self.per_hour.items():  # a UTC day is 24 whole UTC hours
            counts[slot // hours] = counts.get(slot // hours, 0) + n
        start, end = min(counts), max(counts)
        every = end - start < EVERY_DAY
        rows = tuple(
            (datetime.fromtimestamp(u * hours * 3600.0, timezone.utc).strftime(shown), counts.get(u, 0))
            for u in (range(start, end + 1) if every else sorted(counts))
        )
        description = f"Query issues per calendar {unit} (UTC), from the log's first {unit} to its last."
        if not every:
            description += f" The log spans {end - start + 1:,} days: those without queries are left out."
        return InputTable(f"Queries per {unit}", (f"{unit} (UTC)", "queries"), rows, chart="line",
                          description=description)  # fmt: skip


def _per_unit_table(time: np.ndarray) -> InputTable:
    hours = HourCounts()
    hours.add(time)
    return hours.table()


def summary_schema(fields: Mapping[str, str]) -> dict[str, Any]:
    """:data:`SUMMARY` and a string column per extra field (its role: ``arm``, ``user``)."""
    return {**SUMMARY, **dict.fromkeys(fields, pl.String)}


def batched(records: Iterable[tuple[int, Any]], size: int) -> Iterator[list[tuple[int, Any]]]:
    """``records`` in lists of ``size``."""
    it = iter(records)
    while batch := list(itertools.islice(it, size)):
        yield batch


def summarise(
    records: Iterable[tuple[int, Any]],
    where: str,
    unit: str = "line",
    *,
    problems: list | None = None,
    queries: QueryCounts | None = None,
    fields: Mapping[str, str] | None = None,
    ranker: Ranker | None = None,
    offset: int = 0,
) -> pl.DataFrame:
    """Check and reduce records, each ``(line or row number, record)``, to the :data:`SUMMARY` columns.

    A bad record is an :class:`~irspec.InputError` naming ``where`` and its ``unit`` (``line`` or ``row``);
    given a ``problems`` list, the bad records' ``(number, message)`` go there instead and the rest are
    summarised (a Spark worker cannot raise a located error to the driver). Given ``queries``, each good
    record's query text is counted there. ``fields`` maps a role (``arm``, ``user``) to the key read
    for it, a required non-empty string (or number) in every record, summarised as a column of that role.
    Given a ``ranker``, each clicked slot's document gets the rank that ranking gives it (``new_rank``).
    ``offset`` is added to each number in the ``line`` column (not in a problem's: that names the file's
    own line): the lines of the files before this one in a log of several (:class:`irspec_online.sources.Chained`).
    """
    fields = fields or {}
    schema = summary_schema(fields)
    cols: dict[str, list] = {name: [] for name in schema}
    for number, rec in records:
        try:
            row = _summary(rec, ranker) + tuple(_label(rec, key) for key in fields.values())
        except _Bad as bad:
            if problems is None:
                raise _located(str(bad), where, unit, number) from None
            problems.append((number, str(bad)))
            continue
        for col, value in zip(cols.values(), (row[0], row[1], number + offset, *row[2:]), strict=True):
            col.append(value)
        if queries is not None:
            queries.add(rec["query"], row[3] > 0)
    for key in ("query_key", "user_key"):  # the texts' keys, a batch at once
        cols[key] = text_keys(cols[key])  # type: ignore[assignment]
    for name, dtype in schema.items():
        if isinstance(dtype, pl.List):
            cols[name] = _list_column(cols[name], dtype)  # type: ignore[assignment]
    # the frame made at once from its columns, in order (made, then given its list columns and put in
    # order, it was two more polars queries a batch, whose fixed cost was most of a small batch's time)
    return pl.DataFrame(cols, schema=schema)


def _list_column(rows: list[list[tuple]], dtype: pl.List) -> pl.Series:
    """A list-of-struct column from each row's tuples (each of the struct's fields, in order): made from
    flat columns and the rows' counts (building it from Python dicts was most of reading a log's time)."""
    struct = dtype.inner
    names = list(struct.to_schema())  # type: ignore[union-attr]
    flat = [value for row in rows for value in row]
    if not flat:  # no row has any (no clicks, no ranking to estimate): no polars query
        return empty_lists(len(rows), dtype)
    fields = {name: [t[i] for t in flat] for i, name in enumerate(names)}
    items = pl.DataFrame(fields, schema=struct.to_schema()).to_struct("s")  # type: ignore[union-attr]
    counts = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
    row = pl.Series("row", np.repeat(np.arange(len(rows)), counts), dtype=pl.Int64)
    # the rows that have items, in order, then one empty list that every other row takes: one polars
    # query (a join with every row, then nulls filled, was three more, whose fixed cost was most of a
    # small batch's time); gathered from one chunk (gathering across chunks was ten times slower)
    lists = pl.DataFrame([row, items]).group_by("row", maintain_order=True).agg("s")["s"].cast(dtype)
    some = counts > 0
    at = np.where(some, np.cumsum(some) - 1, len(lists))
    return lists.append(_empty_list(dtype)).rechunk()[at]  # [at]: gather() is a query, indexing is not


def empty_lists(n: int, dtype: pl.List) -> pl.Series:
    """``n`` empty lists of type ``dtype``."""
    return _empty_list(dtype).new_from_index(0, n)


@functools.cache
def _empty_list(dtype: pl.List) -> pl.Series:
    """One empty list of type ``dtype``, made once (making it cost more than the rest of a small batch's
    list column). Never changed: appended to others, never appended to."""
    return pl.Series([[]], dtype=dtype)


RANK_LIMIT = 100
"""The most ranks a click model's parameters may hold (its JSON's ``ranks``)."""


def checked_records(
    records: Iterable[tuple[int, Any]], where: str, unit: str = "line", problems: list | None = None
) -> Iterator[tuple[Any, list[int]]]:
    """Each record of ``records`` (``(line or row, record)``) checked as :func:`summarise` checks it (a bad
    record is an :class:`~irspec.InputError` naming ``where`` and its line or row; given a ``problems``
    list, its ``(number, message)`` goes there instead, as :func:`summarise`'s), with the ranks of the
    results clicked (1-based, in order, each once; an ad's click, on a document not among the results,
    is none)."""
    for number, rec in records:
        try:
            clicked = _summary(rec)[8]
        except _Bad as bad:
            if problems is None:
                raise _located(str(bad), where, unit, number) from None
            problems.append((number, str(bad)))
            continue
        yield rec, [c[0] for c in clicked]


def _located(message: str, where: str, unit: str, number: int) -> InputError:
    if unit == "line":
        return InputError(message, where, number)
    return InputError(f"{unit} {number}: {message}", where)


class _Bad(Exception):
    """A record's problem, before it is located."""


def assemble(summary: pl.DataFrame, name: str, where: str, ids: bool = True) -> InteractionLog:
    """The :class:`InteractionLog` of summarised rows: sorted by session, time and input order, numbered
    within each session. A frame with an ``id`` column keeps those ids (a part of a log, on Spark).
    ``ids=False`` leaves the rows' ids out (a part of a streamed pass, which reports no rows: making a
    text per query issue was a fifth of its time)."""
    if summary.height == 0:
        raise InputError("the log has no records", where)
    summary = summary.sort("session", "time", "line", maintain_order=True)
    session = summary["session"]
    index = session.rle_id().to_numpy().astype(np.int64)
    first = np.ones(len(index), dtype=bool)
    first[1:] = index[1:] != index[:-1]
    if "id" in summary.columns:
        named = summary["id"]
    elif ids:
        position = pl.int_range(1, pl.len() + 1).over("session")
        named = summary.select(pl.format("{}:{}", "session", position))[:, 0]
    else:
        named = pl.Series(dtype=pl.String)
    labels = {c: tuple(summary[c].to_list()) for c in summary.columns if c not in SUMMARY and c != "id"}
    return InteractionLog(
        labels=labels,
        name=name,
        source=where,
        ids=tuple(named.to_list()),
        sessions=tuple(session.filter(pl.Series(first)).to_list()),
        session=index,
        first_in_session=first,
        time=summary["time"].to_numpy(),
        n_results=summary["n_results"].to_numpy(),
        line=summary["line"].to_numpy(),
        first_click=summary["first_click"].to_numpy(),
        best_dwell=summary["best_dwell"].to_numpy(),
        query_key=summary["query_key"].to_numpy(),
        user_key=summary["user_key"].to_numpy(),
        interleaved=summary["interleaved"].to_numpy(),
        clicks=Clicks.of(summary["clicked"]),
        ranked=summary["ranked"].to_numpy(),
        matched=Matched.of(summary["matched"]),
        shown_new=Shown.of(summary["shown_new"]),
        new_length=summary["new_length"].to_numpy(),
    )


# --------------------------------------------------------------------------------------------------
# One record


def _summary(rec: Any, ranker: Ranker | None = None) -> tuple[Any, ...]:
    """(session, time, number of results, best rank clicked or 0, longest known dwell or NaN, the query's
    text, the user's (or the session's), whether it is interleaved, its clicked results, whether the ranking
    to estimate ranks its query, the matched slots, the ranks of the shown documents in that ranking, and
    how many it ranks)."""
    if not isinstance(rec, Mapping):
        raise _Bad(f"expected a JSON object per line, got {_kind(rec)}")
    for key in REQUIRED:
        if key not in rec:
            raise _Bad(f"missing required key {key!r}")
    session = _text_id(rec["session"], "session")
    query = rec["query"]
    if not isinstance(query, str):
        raise _Bad(f"query must be a string, got {_kind(query)}")
    results = rec["results"]
    if not isinstance(results, list) or not all(isinstance(d, str) for d in results):
        raise _Bad("results must be a list of document ids (strings)")
    # the set at C's speed on every record; the ranks, for the message, only where there is a repeat
    if len(set(results)) < len(results) and (twice := first_repeat(results)) is not None:
        raise _Bad(f"results show {quote(results[twice[1]])} twice (ranks {twice[0] + 1} and {twice[1] + 1})")
    first, dwell, ranks = _clicks(rec.get("clicks"), results)
    origins = _origins(rec.get("origins"), len(results))
    logging = _logging(rec.get("propensities"), len(results))
    user = rec.get("user")
    user = _text_id(user, "user") if user is not None else session
    new = ranker.ranks(rec) if ranker is not None else {}
    clicked = [_clicked(rank, origins, logging, results, new) for rank in ranks]
    matched = [(k + 1, 1 / p) for k, (d, p) in enumerate(zip(results, logging, strict=True))
               if new.get(d) == k + 1] if logging is not None else []  # fmt: skip
    shown_new = [(r,) for r in sorted(new[d] for d in set(results) if d in new)] if new else []
    return (session, _timestamp(rec["timestamp"]), len(results), first, dwell, query, user,
            origins is not None, clicked, (2 if logging is not None else 1) if new else 0, matched, shown_new,
            len(new))  # fmt: skip


def first_repeat(items: Sequence[Hashable]) -> tuple[int, int] | None:
    """Where the first item that repeats an earlier one is (0-based: the earlier's place, then its own), or
    None for none: a document a record's results show twice (a click on it could be at either rank), or
    a simulation's ranking lists twice."""
    first: dict[Hashable, int] = {}
    for i, item in enumerate(items):
        if item in first:
            return first[item], i
        first[item] = i
    return None


def key_of(text: str) -> int:
    """A 64-bit key of a text (a session id, to hold it out; the parts of a seed), the same in every process
    (Python's ``hash`` of a text is not: a Spark worker's would differ from the driver's)."""
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little", signed=True
    )


def keys_of(texts: list[str]) -> np.ndarray:
    """:func:`key_of` of each text, as int64."""
    digests = b"".join(
        [hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=8).digest() for t in texts]
    )
    return np.frombuffer(digests, dtype="<i8").astype(np.int64)


def text_keys(texts: list[str]) -> np.ndarray:
    """A 64-bit key of each text that tells texts apart (the query and user keys of the summaries, which
    group query issues by query and by user): :func:`bytes_keys` of their UTF-8 bytes."""
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    length = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    start = np.zeros(len(length), dtype=np.int64)
    np.cumsum(length[:-1], out=start[1:])
    return bytes_keys(np.frombuffer(b"".join(encoded), dtype=np.uint8), start, length)


_MIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))
_ODD = np.uint64(0x9E3779B97F4A7C15)


def _mixed(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser: a bijection that spreads every bit of ``h`` over all of them."""
    h = h ^ (h >> np.uint64(33))
    h = h * _MIX[0]
    h = h ^ (h >> np.uint64(33))
    h = h * _MIX[1]
    return h ^ (h >> np.uint64(33))


def bytes_keys(data: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """A 64-bit key (int64) of each byte string ``data[start[i] : start[i] + length[i]]``, computed for all
    at once with numpy (a hash a text at a time, :func:`key_of`'s, cost a microsecond a query issue): its
    length, then each 8 bytes (little-endian, the last zero-filled) mixed in turn (MurmurHash3's
    finaliser). The same in every process, on every machine, whatever the order of the texts."""
    n = len(length)
    h = _mixed(length.astype(np.uint64) ^ _ODD)
    if n == 0:
        return h.view(np.int64)
    words = (length + 7) // 8
    order = np.argsort(-words, kind="stable")  # the longest first: word k is the first rows' that have one
    longest = int(words[order[0]])
    padded = np.concatenate([data.astype(np.uint8, copy=False), np.zeros(8, dtype=np.uint8)])
    bytes8 = np.arange(8, dtype=np.int64)
    counts = np.bincount(words, minlength=longest + 1)
    remaining = n - np.cumsum(counts)  # rows with more than k words, for k = 0, 1, ...
    for k in range(longest):
        rows = order[: remaining[k]]
        at = start[rows] + 8 * k
        word = padded[at[:, None] + bytes8].view("<u8").ravel().astype(np.uint64)
        left = length[rows] - 8 * k
        short = left < 8  # the last word: the bytes past the text's end are not its own
        if short.any():
            keep = (np.uint64(1) << (np.uint64(8) * left[short].astype(np.uint64))) - np.uint64(1)
            word[short] &= keep
        h[rows] = _mixed((h[rows] ^ word) * _ODD)
    return h.view(np.int64)


class Ranker:
    """A ranking to estimate from a log (:mod:`irspec_online.counterfactual`): per record, the rank of each
    document it ranks for the record's query (its ``qid`` key, else its ``query`` text)."""

    def __init__(self, rankings: Mapping[str, Mapping[str, int]]) -> None:
        self.rankings = rankings
        self._columns: tuple[pl.DataFrame, pl.DataFrame] | None = None

    def ranks(self, rec: Mapping[str, Any]) -> Mapping[str, int]:
        """The rank of each document the ranking places for ``rec``'s query (empty: it has no such query):
        its ``qid`` (text, or an integer as its text), else, when it has none or a null one, its query text.
        Another value is refused: ``str()`` made ``null`` the query ``"None"`` and ``7.5`` ``"7.5"``."""
        qid = whole(rec.get("qid"))
        return self.rankings.get(rec["query"] if qid is None else _text_id(qid, "qid"), {})

    def columns(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The ranking as frames, for a batch of columns (:mod:`irspec_online.columnar`): ``(qid, doc,
        rank)``, a row per document it ranks, and ``(qid, new_length)``, a row per query with how many it
        ranks. Made once: every batch of the log joins them."""
        if self._columns is None:
            qids = list(self.rankings)
            lengths = [len(self.rankings[q]) for q in qids]
            pairs = pl.DataFrame(
                {
                    "qid": [q for q in qids for _ in self.rankings[q]],
                    "doc": [d for q in qids for d in self.rankings[q]],
                    "rank": [r for q in qids for r in self.rankings[q].values()],
                },
                schema={"qid": pl.String, "doc": pl.String, "rank": pl.Int64},
            )
            sizes = pl.DataFrame(
                {"qid": qids, "new_length": lengths}, schema={"qid": pl.String, "new_length": pl.Int64}
            )
            self._columns = (pairs, sizes)
        return self._columns

    def __getstate__(self) -> dict[str, Any]:
        # sent to Spark's workers without its frames, which each worker makes again at its first batch
        return {"rankings": self.rankings, "_columns": None}


_NO_ORIGIN = (-1, 0, 0, math.nan)


def _clicked(rank: int, origins: list[tuple] | None, logging: list[float] | None, results: list[str],
             new: Mapping[str, int]) -> tuple:  # fmt: skip
    """A clicked result's :data:`CLICK` fields, in order (``rank`` is among the results, whose origins and
    propensities, when the record has them, are one per result)."""
    team, rank_a, rank_b, p_a = origins[rank - 1] if origins is not None else _NO_ORIGIN
    new_rank = new.get(results[rank - 1], 0)
    logging_p = logging[rank - 1] if logging is not None else math.nan
    return rank, team, rank_a, rank_b, p_a, new_rank, logging_p


def _logging(raw: Any, shown: int) -> list[float] | None:
    """A randomised logger's ``propensities``: per result, the probability with which it put the document
    in that slot, in (0, 1]; None when the record has none."""
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != shown:
        raise _Bad(f"propensities must be a list with one probability per result ({shown}), got {_kind(raw)}"
                   + (f" of {len(raw)}" if isinstance(raw, list) else ""))  # fmt: skip
    for j, p in enumerate(raw):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
            raise _Bad(f"propensities[{j}] must be a probability above 0, got {quote(p)}")
        if p < MIN_PROPENSITY:
            raise _Bad(f"propensities[{j}] must be at least {MIN_PROPENSITY:g}, got {quote(p)}: its weight, "
                       "1 / p, is squared for the standard error")  # fmt: skip
    return [float(p) for p in raw]


MIN_PROPENSITY = 1e-100
"""The smallest propensity a log (or a click model's examination) may give: an estimate weighs a click by
1 / p and its standard error squares that weight, which overflows a float below about 1e-154 (1e-300 made
SNIPS's standard error NaN); 1e-100 leaves room for the sums of 1e100 rows."""


_TEAMS = {"a": 0, "b": 1, None: -1}


def _origins(raw: Any, shown: int) -> list[tuple[int, int, int, float]] | None:
    """An interleaved list's ``origins`` (one per result: ``{"team": "a"|"b", "rank_a": R, "rank_b": R,
    "p_a": P}``, each key optional) as ``(team, rank_a, rank_b, p_a)``; None when the record has none."""
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != shown:
        raise _Bad(f"origins must be a list with one entry per result ({shown}), got {_kind(raw)}"
                   + (f" of {len(raw)}" if isinstance(raw, list) else ""))  # fmt: skip
    out = []
    for j, origin in enumerate(raw):
        # The common case checked quickly; anything else (and every error's message) the long way below.
        if type(origin) is dict:
            # four lookups written out: a generator of them cost a third of reading an interleaved log
            get = origin.get
            team, ra, rb, p = get("team"), get("rank_a"), get("rank_b"), get("p_a")
            if ((team is None or type(team) is str) and team in _TEAMS
                    and (ra is None or (type(ra) is int and 0 < ra < 2**31))
                    and (rb is None or (type(rb) is int and 0 < rb < 2**31))
                    and (p is None or (type(p) is float and 0 <= p <= 1))):  # fmt: skip
                out.append((_TEAMS[team], ra or 0, rb or 0, math.nan if p is None else p))
                continue
        what = f"origins[{j}]"
        if not isinstance(origin, Mapping):
            raise _Bad(f'{what} must be an object such as {{"team": "a", "rank_a": 1, "rank_b": 3}}')
        team = origin.get("team")
        if not (team is None or isinstance(team, str)) or team not in _TEAMS:  # a list is unhashable
            raise _Bad(f'{what}.team must be "a", "b" or null, got {quote(team)}')
        ranks = []
        for key in ("rank_a", "rank_b"):
            r = origin.get(key)
            if isinstance(r, float) and r.is_integer():
                r = int(r)  # pandas holds integers with nulls as floats
            if r is not None and (isinstance(r, bool) or not isinstance(r, int) or not 1 <= r < 2**31):
                raise _Bad(f"{what}.{key} must be an integer >= 1 (or null), got {quote(r)}")
            ranks.append(r or 0)
        p = origin.get("p_a")
        if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1):
            raise _Bad(f"{what}.p_a must be a probability (or null), got {quote(p)}")
        out.append((_TEAMS[team], ranks[0], ranks[1], math.nan if p is None else float(p)))
    return out


def _label(rec: Mapping[str, Any], key: str) -> str:
    """An A/B test's field of a record (its arm, its user): a non-empty string, a number read as text."""
    if key not in rec:
        raise _Bad(f"missing required key {key!r} (the A/B test reads it)")
    return _text_id(rec[key], key)


def _text_id(value: Any, key: str) -> str:
    """An id (a session, an arm, a user): a non-empty string; a number is read as its text."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise _Bad(f"{key} must be a non-empty string, got {_kind(value)}")
    if isinstance(value, str) and not value.isascii():
        _check_unicode(value, key)
    return str(value)


def _check_unicode(text: str, what: str) -> None:
    if not _is_unicode(text):
        raise _Bad(f"{what} {quote(text)} is not valid Unicode (a lone surrogate)")


def _is_unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode: no lone surrogate (from a JSON escape such as ``"\\ud800"``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def whole(value: Any) -> Any:
    """``value``, but a float holding a whole number as that integer and NaN as ``None``: pandas holds a
    column of integers with nulls as floats, a null as NaN."""
    if isinstance(value, float) and (math.isnan(value) or value.is_integer()):
        return None if math.isnan(value) else int(value)
    return value


def as_float(value: Any) -> float:
    """A real number as a float: ±inf for an integer past a float's range (``float()`` of 400 digits
    raises ``OverflowError``, as ``math.isfinite`` of it does)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


TIME_RANGE = (-62_135_596_800.0, 253_402_300_799.0)
"""The Unix seconds a log's time may be: 0001-01-01 to 9999-12-31T23:59:59 UTC, the times a date can be
written for (a table of queries per day writes them)."""


def _timestamp(value: Any) -> float:
    if isinstance(value, datetime):  # a frame's datetime column; naive means UTC
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp()
    if isinstance(value, bool) or value is None:
        raise _Bad(f"timestamp must be Unix seconds or ISO 8601 text, got {_kind(value)}")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):  # an int is finite, however long
            raise _Bad(f"timestamp is not a finite number, got {quote(value)}")
        if not TIME_RANGE[0] <= value <= TIME_RANGE[1]:  # an int compared exactly, not made a float
            raise _Bad(
                f"timestamp {quote(value)} is out of range: Unix seconds from {TIME_RANGE[0]:.0f} (year 1) "
                f"to {TIME_RANGE[1]:.0f} (year 9999)"
            )
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"  # Python 3.10's fromisoformat does not read "Z"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise _Bad(f"timestamp {quote(value)} is not ISO 8601 (such as 2024-05-01T10:00:00Z)") from None
        return _timestamp(moment)
    raise _Bad(f"timestamp must be Unix seconds or ISO 8601 text, got {_kind(value)}")


def _clicks(raw: Any, results: list[str]) -> tuple[int, float, list[int]]:
    """The best (lowest) rank clicked, 0 for none, the longest known dwell time, NaN for none (both of every
    click, an ad's too), and the ranks of the results clicked, in order, each once: a click is a result's
    only where its document is the result at its rank (not an ad's, clicked at any rank)."""
    if raw is None:
        return 0, math.nan, []
    if not isinstance(raw, list):
        raise _Bad(f"clicks must be a list, got {_kind(raw)}")
    first, longest = 0, -math.inf
    ranks: set[int] = set()
    for j, click in enumerate(raw):
        what = f"clicks[{j}]"
        if not isinstance(click, Mapping):
            raise _Bad(f'{what} must be an object such as {{"doc": "d1", "dwell": 30}}')
        doc = click.get("doc")
        if not isinstance(doc, str):
            raise _Bad(f"{what}.doc must be a document id (a string)")
        rank = click.get("rank")
        if rank is None:
            if doc not in results:
                raise _Bad(
                    f"{what}: document {quote(doc)} is not among the results shown, and the click has no rank"
                )
            rank = results.index(doc) + 1
        elif isinstance(rank, float) and rank.is_integer() and rank >= 1:
            rank = int(rank)  # pandas holds a column of integers with nulls as floats
        elif isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise _Bad(f"{what}.rank must be an integer >= 1, got {quote(rank)}")
        if rank >= 2**31:  # a summary holds ranks as 32-bit integers, origins' ranks too
            raise _Bad(f"{what}.rank must be below 2**31, got {quote(rank)}")
        # a shown document clicked where another is shown, or below the list's end (a document not shown,
        # such as an ad, may be clicked at any rank)
        if rank <= len(results) and results[rank - 1] != doc and doc in results:
            raise _Bad(
                f"{what}: document {quote(doc)} clicked at rank {rank}, where the results show "
                f"{quote(results[rank - 1])} (and {quote(doc)} at rank {results.index(doc) + 1})"
            )
        if rank > len(results) and doc in results:
            raise _Bad(
                f"{what}: document {quote(doc)} clicked at rank {rank}, below the {len(results)} results "
                f"(they show {quote(doc)} at rank {results.index(doc) + 1})"
            )
        dwell = click.get("dwell")
        if dwell is not None:
            if (
                isinstance(dwell, bool)
                or not isinstance(dwell, (int, float))
                or not math.isfinite(as_float(dwell))
                or dwell < 0
            ):
                raise _Bad(f"{what}.dwell must be a number of seconds >= 0 (or null), got {quote(dwell)}")
            longest = max(longest, float(dwell))
        first = rank if first == 0 else min(first, rank)
        if rank <= len(results) and results[rank - 1] == doc:
            ranks.add(rank)
    return first, (longest if longest >= 0 else math.nan), sorted(ranks)


# --------------------------------------------------------------------------------------------------
# JSON Lines


def jsonl_records(path: str) -> Iterator[tuple[int, Any]]:
    """The records of a JSON Lines file (plain or gzip; ``-``: standard input) with their line numbers,
    read a line at a time by :func:`irspec.plugin_api.bounded_lines`, which refuses a line too long to be
    text before it is held whole: binary data, ``/dev/zero``)."""
    with _open_bytes(path) as f:
        number = 0
        try:
            for number, raw in bounded_lines(f, path):
                rec = _parse_line(raw, path, number)
                if rec is not _BLANK:
                    yield number, rec
        except (OSError, EOFError) as e:  # a gzip stream that is cut or corrupt
            raise InputError(f"not a valid gzip file: {e}", path, number + 1) from None


_BLANK = object()


class KeyTwice(Exception):
    """A key given twice in one JSON object (:func:`once`); its argument is the key."""


def once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, each key once: Python's json keeps the last of a key given twice,
    so ``{"query": "a", "query": "b"}`` would be read as ``b`` without a word."""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise KeyTwice(key)
            seen.add(key)
    return obj


_DECODE = json.JSONDecoder(object_pairs_hook=once).decode


def _parse_line(raw: bytes, path: str, number: int) -> Any:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason} at byte {e.start} of the line)", path, number) from None
    if not line.strip():
        return _BLANK
    try:
        rec = _DECODE(line)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} (column {e.colno})", path, number) from None
    except KeyTwice as e:
        raise InputError(
            f"the key {quote(e.args[0])} twice in one object: which one is meant?", path, number
        ) from None
    except RecursionError:
        raise InputError("not a log record: JSON nested too deeply", path, number) from None
    if _SURROGATE.search(raw):  # an escaped surrogate: a pair is one character, a lone one no text
        found = _lone_surrogate(rec, "")
        if found is not None:
            where, text = found
            raise InputError(f"{where or 'the record'} {quote(text)} is not valid Unicode (a lone surrogate)",
                             path, number)  # fmt: skip
    return rec


def _lone_surrogate(value: Any, where: str) -> tuple[str, str] | None:
    """The first text in ``value`` (a parsed record) holding a lone surrogate, and where: ``query``,
    ``results[1]``, ``clicks[0].doc``, a key itself; None for none."""
    items: list[tuple[str, Any]] = []
    if isinstance(value, str):
        if not _is_unicode(value):
            return where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            at = f"{where}.{k}" if where else str(k)
            items += [(at, k), (at, v)]  # the key itself, then its value
    elif isinstance(value, list):
        items = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
    for at, item in items:
        found = _lone_surrogate(item, at)
        if found is not None:
            return found
    return None


_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def _open_bytes(path: str) -> io.BufferedIOBase:
    try:
        f = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 (closed by the caller)
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a log file", path) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path) from None
    f = f if hasattr(f, "peek") else io.BufferedReader(f)
    if f.peek(2)[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=f, mode="rb")
    return f


def is_paths(source: Any) -> bool:
    """Whether ``source`` is several paths (a list or tuple of them): one log in several files."""
    return (
        isinstance(source, (list, tuple))
        and len(source) > 0
        and all(isinstance(p, (str, os.PathLike)) for p in source)
    )


def stem(path: str) -> str:
    """A log's name: its file name without the log suffix."""
    if path == "-":
        return "stdin"
    base = os.path.basename(path.rstrip("/"))
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if base.endswith(suffix):
            return base[: -len(suffix)] or base
    return Path(base.removesuffix(".gz")).stem or base


def columns_of(names: Iterable[str], where: str, extra: tuple[str, ...] = ()) -> list[str]:
    """The log columns a frame has, in :data:`COLUMNS` order, then the ``extra`` ones (an A/B test's arm
    and user); a missing required or extra one is an error."""
    have = set(names)
    for key in (*REQUIRED, *extra):
        if key not in have:
            raise InputError(
                f"missing required column {key!r} (the columns are {', '.join(sorted(have))})", where
            )
    return [c for c in COLUMNS if c in have] + [c for c in dict.fromkeys(extra) if c not in COLUMNS]


# --------------------------------------------------------------------------------------------------
# Sums of the metrics' values


def exact_sum(a: np.ndarray, b: np.ndarray | None = None) -> Fraction | int:
    """The exact sum of ``a`` (or of ``a * b``): in integers when the values are whole, else a fraction."""
    whole = np.all(a == np.floor(a)) and (b is None or np.all(b == np.floor(b)))
    if whole:
        ints = a.astype(np.int64)
        return int(np.sum(ints if b is None else ints * b.astype(np.int64), dtype=np.int64))
    if b is None:
        return _float_sum(a)
    return sum((Fraction(u) * Fraction(v) for u, v in zip(a.tolist(), b.tolist(), strict=True)), Fraction(0))


def _float_sum(a: np.ndarray) -> Fraction:
    """The exact sum of finite doubles, vectorised: each is ``m * 2**(e - 53)`` with ``m`` an integer of 53
    bits (:func:`numpy.frexp`), the ``m`` of one exponent are added in int64 in blocks of 512 (at most
    2**62), and the blocks' sums exactly, as Python integers."""
    mantissa, exponent = np.frexp(np.asarray(a, dtype=np.float64))
    m = (mantissa * 2.0**53).astype(np.int64)
    total = Fraction(0)
    for e in np.unique(exponent[m != 0]).tolist():
        part = m[exponent == e]
        padded = np.zeros(-(-len(part) // 512) * 512, dtype=np.int64)
        padded[: len(part)] = part
        blocks = padded.reshape(-1, 512).sum(axis=1)
        total += Fraction(sum(int(x) for x in blocks.tolist())) * Fraction(2) ** (int(e) - 53)
    return total


def summed(total: float | Fraction | int, values: np.ndarray, exact: bool) -> float | Fraction | int:
    """``total`` with ``values`` added: exactly (:func:`exact_sum`; a log added in parts, a streamed pass's
    partitions or Spark's, gives the same sum however it was cut), or in float64 one value after another
    after ``total``, as ``irspec.Result.aggregate`` adds a metric's values (a log added whole, its rows in
    their order, gives the very mean its result shows; ``np.add.accumulate`` adds in order, ``np.sum``
    pairwise)."""
    if exact:  # a float total taken exactly as well (float + Fraction would round to a float)
        return Fraction(total) + exact_sum(values)
    if not len(values):
        return total
    return float(np.add.accumulate(np.concatenate(([float(total)], values)))[-1])
