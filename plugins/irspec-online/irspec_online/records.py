"""Search interaction logs' records: their format, their checks and summaries, JSON Lines, the log's
counts, and the data object the metrics use.

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
    Optional, default none: a list of ``{"doc": ID, "rank": R, "dwell": SECONDS}``. ``rank`` (1-based) may
    be left out when ``doc`` is among the results (its position there); ``dwell`` (seconds, >= 0) may be
    left out or null when unknown.

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
import gzip
import heapq
import io
import itertools
import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from irspec import InputError, InputTable
from irspec.plugin_api import bounded_lines, quote

__all__ = [
    "COLUMNS",
    "REQUIRED",
    "SUFFIXES",
    "SUMMARY",
    "TOP_QUERIES",
    "HourCounts",
    "InteractionLog",
    "QueryCounts",
    "assemble",
    "batched",
    "columns_of",
    "jsonl_records",
    "stem",
    "summarise",
    "summary_schema",
    "top_table",
]

SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".parquet", ".pq")
"""File name endings of interaction logs (a directory is read as a Parquet dataset)."""

PARQUET_SUFFIXES = (".parquet", ".pq")

TOP_QUERIES = 10
"""How many of the most frequent query texts a log's "Top queries" table lists."""

HOUR_SPAN = 2 * 86400.0
"""A log spanning at most this many seconds has its queries counted per hour; a longer one, per day."""

COLUMNS = ("session", "query", "timestamp", "results", "clicks")
REQUIRED = COLUMNS[:4]

SUMMARY = {
    "session": pl.String,
    "time": pl.Float64,
    "line": pl.Int64,
    "n_results": pl.Int64,
    "first_click": pl.Int64,
    "best_dwell": pl.Float64,
}
"""One query issue as the metrics see it: its session, time (Unix seconds), line (or row) in the input,
number of results, the best rank clicked (0: no click) and the longest known dwell time of its clicks
(NaN: none known). Every online metric is a function of these columns."""


@dataclass(frozen=True, eq=False)
class InteractionLog:
    """A read interaction log: one row per query issue, sorted by session, then time, then input order.

    Per row (``n`` rows): ``ids`` (``"SESSION:I"``, the I-th query of the session, 1-based; the rows of an
    evaluation result), ``session`` (index into ``sessions``), ``first_in_session`` (bool), ``time`` (Unix
    seconds, float), ``n_results``, ``line`` (1-based line in the file, or row of a frame),
    ``first_click`` (the best rank clicked, 0 when nothing was clicked) and ``best_dwell`` (the longest
    known dwell time of the row's clicks, seconds; NaN when none is known). ``sessions`` holds the session
    ids in order. ``top_queries`` holds the most frequent query texts as ``(query, issues, clicked
    issues)``, most issued first (ties: by text); empty when the reader did not count them (Spark).
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

    def __len__(self) -> int:
        return len(self.ids)

    def tables(self) -> list[InputTable]:
        """The log's non-metrics: its top queries (with their CTR) and its queries per hour or day."""
        found = [_per_unit_table(self.time)]
        if self.top_queries:
            found.insert(0, top_table(self.top_queries))
        return found

    def compare(self, metrics: Any, values: np.ndarray) -> tuple[tuple[InputTable, ...], tuple[str, ...]]:
        """The A/B test of the log's arms (when it was read with ``ab=``), from each metric's per-row
        ``values``: its tables and warnings (``irspec.evaluate_input`` adds both to the result)."""
        if self.design is None:
            return (), ()
        return self.design.compare(self, metrics, values)  # the design knows the test, the log its rows


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
        first to the last: units without queries show 0."""
        hourly = self.last - self.first <= HOUR_SPAN
        unit, hours, shown = ("hour", 1, "%Y-%m-%d %H:00") if hourly else ("day", 24, "%Y-%m-%d")
        counts: dict[int, int] = {}
        for slot, n in self.per_hour.items():  # a UTC day is 24 whole UTC hours
            counts[slot // hours] = counts.get(slot // hours, 0) + n
        start, end = min(counts), max(counts)
        rows = tuple(
            (datetime.fromtimestamp(u * hours * 3600.0, timezone.utc).strftime(shown), counts.get(u, 0))
            for u in range(start, end + 1)
        )
        return InputTable(
            f"Queries per {unit}",
            (f"{unit} (UTC)", "queries"),
            rows,
            chart="line",
            description=f"Query issues per calendar {unit} (UTC), from the log's first {unit} to its last.",
        )


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
) -> pl.DataFrame:
    """Check and reduce records, each ``(line or row number, record)``, to the :data:`SUMMARY` columns.

    A bad record is an :class:`~irspec.InputError` naming ``where`` and its ``unit`` (``line`` or ``row``);
    given a ``problems`` list, the bad records' ``(number, message)`` go there instead and the rest are
    summarised (a Spark worker cannot raise a located error to the driver). Given ``queries``, each good
    record's query text is counted there. ``fields`` maps a role (``arm``, ``user``) to the key read
    for it, a required non-empty string (or number) in every record, summarised as a column of that role.
    """
    fields = fields or {}
    cols: tuple[list, ...] = tuple([] for _ in range(6 + len(fields)))
    for number, rec in records:
        try:
            row = _summary(rec) + tuple(_label(rec, key) for key in fields.values())
        except _Bad as bad:
            if problems is None:
                raise _located(str(bad), where, unit, number) from None
            problems.append((number, str(bad)))
            continue
        for col, value in zip(cols, (row[0], row[1], number, *row[2:]), strict=True):
            col.append(value)
        if queries is not None:
            queries.add(rec["query"], row[3] > 0)
    schema = summary_schema(fields)
    return pl.DataFrame(dict(zip(schema, cols, strict=True)), schema=schema)


def _located(message: str, where: str, unit: str, number: int) -> InputError:
    if unit == "line":
        return InputError(message, where, number)
    return InputError(f"{unit} {number}: {message}", where)


class _Bad(Exception):
    """A record's problem, before it is located."""


def assemble(summary: pl.DataFrame, name: str, where: str) -> InteractionLog:
    """The :class:`InteractionLog` of summarised rows: sorted by session, time and input order, numbered
    within each session. A frame with an ``id`` column keeps those ids (a part of a log, on Spark)."""
    if summary.height == 0:
        raise InputError("the log has no records", where)
    summary = summary.sort("session", "time", "line", maintain_order=True)
    session = summary["session"]
    index = session.rle_id().to_numpy().astype(np.int64)
    first = np.ones(len(index), dtype=bool)
    first[1:] = index[1:] != index[:-1]
    if "id" in summary.columns:
        ids = summary["id"]
    else:
        position = pl.int_range(1, pl.len() + 1).over("session")
        ids = summary.select(pl.format("{}:{}", "session", position))[:, 0]
    labels = {c: tuple(summary[c].to_list()) for c in summary.columns if c not in SUMMARY and c != "id"}
    return InteractionLog(
        labels=labels,
        name=name,
        source=where,
        ids=tuple(ids.to_list()),
        sessions=tuple(session.filter(pl.Series(first)).to_list()),
        session=index,
        first_in_session=first,
        time=summary["time"].to_numpy(),
        n_results=summary["n_results"].to_numpy(),
        line=summary["line"].to_numpy(),
        first_click=summary["first_click"].to_numpy(),
        best_dwell=summary["best_dwell"].to_numpy(),
    )


# --------------------------------------------------------------------------------------------------
# One record


def _summary(rec: Any) -> tuple[str, float, int, int, float]:
    """(session, time, number of results, best rank clicked or 0, longest known dwell or NaN)."""
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
    first, dwell = _clicks(rec.get("clicks"), results)
    return session, _timestamp(rec["timestamp"]), len(results), first, dwell


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
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape such as "\ud800"
        raise _Bad(f"{what} {quote(text)} is not valid Unicode (a lone surrogate)") from None


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _timestamp(value: Any) -> float:
    if isinstance(value, datetime):  # a frame's datetime column; naive means UTC
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp()
    if isinstance(value, bool) or value is None:
        raise _Bad(f"timestamp must be Unix seconds or ISO 8601 text, got {_kind(value)}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise _Bad(f"timestamp is not a finite number, got {quote(value)}")
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


def _clicks(raw: Any, results: list[str]) -> tuple[int, float]:
    """The best (lowest) rank clicked, 0 for none, and the longest known dwell time, NaN for none."""
    if raw is None:
        return 0, math.nan
    if not isinstance(raw, list):
        raise _Bad(f"clicks must be a list, got {_kind(raw)}")
    first, longest = 0, -math.inf
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
        dwell = click.get("dwell")
        if dwell is not None:
            if (
                isinstance(dwell, bool)
                or not isinstance(dwell, (int, float))
                or not math.isfinite(dwell)
                or dwell < 0
            ):
                raise _Bad(f"{what}.dwell must be a number of seconds >= 0 (or null), got {quote(dwell)}")
            longest = max(longest, float(dwell))
        first = rank if first == 0 else min(first, rank)
    return first, (longest if longest >= 0 else math.nan)


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


def _parse_line(raw: bytes, path: str, number: int) -> Any:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason} at byte {e.start} of the line)", path, number) from None
    if not line.strip():
        return _BLANK
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} (column {e.colno})", path, number) from None


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
