"""Search interaction logs: the JSON Lines format, its reader, and the data object the metrics use.

One JSON object per line, one line per query issue (a search results page shown)::

    {"session": "s1", "query": "mars", "timestamp": "2024-05-01T10:00:00Z",
     "results": ["d3", "d7", "d1"], "clicks": [{"doc": "d7", "rank": 2, "dwell": 45.5}]}

``session``
    The session id (a string; a number is read as its text). Required.
``query``
    The query text. Required (may be empty).
``timestamp``
    When the query was issued: Unix seconds (a number) or ISO 8601 text (``2024-05-01T10:00:00Z``; a time
    without an offset is UTC). Required.
``results``
    The document ids shown, in rank order; ``[]`` for a page with no results. Required.
``clicks``
    Optional, default none: a list of ``{"doc": ID, "rank": R, "dwell": SECONDS}``. ``rank`` (1-based) may
    be left out when ``doc`` is among the results (its position there); ``dwell`` (seconds, >= 0) may be
    left out or null when unknown.

Other keys are ignored. Blank lines are skipped. A file ending in ``.gz`` (or starting with gzip's magic
bytes) is decompressed; ``-`` is standard input. Every problem is an :class:`irspec.InputError` naming
the file and line.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from irspec import InputError

__all__ = ["SUFFIXES", "InteractionLog", "read_log"]

SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")
"""File name endings of interaction logs."""


@dataclass(frozen=True, eq=False)
class InteractionLog:
    """A read interaction log: one row per query issue, sorted by session, then time, then file order.

    Per row (``n`` rows): ``ids`` (``"SESSION:I"``, the I-th query of the session, 1-based; the rows of an
    evaluation result), ``session`` (index into ``sessions``), ``first_in_session`` (bool), ``time`` (Unix
    seconds, float), ``queries`` (text), ``n_results``, ``line`` (1-based line in the file). Per click (in
    row order): ``click_row`` (its row), ``click_rank`` (1-based), ``click_dwell`` (seconds; NaN when
    unknown). ``sessions`` holds the session ids in order.
    """

    name: str
    source: str
    ids: tuple[str, ...]
    sessions: tuple[str, ...]
    session: np.ndarray
    first_in_session: np.ndarray
    time: np.ndarray
    queries: tuple[str, ...]
    n_results: np.ndarray
    line: np.ndarray
    click_row: np.ndarray
    click_rank: np.ndarray
    click_dwell: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)


def read_log(source: str | os.PathLike[str] | Iterable[Mapping[str, Any]]) -> InteractionLog:
    """Read an interaction log from a JSON Lines file (plain or gzip; ``-`` for standard input), or from
    records already in memory (an iterable of dicts, each one line's object)."""
    if isinstance(source, (str, os.PathLike)):
        where = os.fspath(source)
        records = list(_records_from_file(where))
        name = _stem(where)
    else:
        where = "<records>"
        records = []
        for i, rec in enumerate(source, start=1):
            if not isinstance(rec, Mapping):
                raise InputError(f"expected a mapping per record, got {type(rec).__name__}", where, i)
            records.append((i, rec))
        name = "log"
    return _build(records, where, name)


def _stem(path: str) -> str:
    if path == "-":
        return "stdin"
    base = os.path.basename(path)
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if base.endswith(suffix):
            return base[: -len(suffix)] or base
    return Path(base.removesuffix(".gz")).stem or base


def _records_from_file(path: str) -> Iterable[tuple[int, Mapping[str, Any]]]:
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a log file", path) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise InputError(f"not a valid gzip file: {e}", path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason} at byte {e.start})", path) from None
    for number, line in enumerate(io.StringIO(text), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"not valid JSON: {e.msg} (column {e.colno})", path, number) from None
        if not isinstance(rec, dict):
            raise InputError(f"expected a JSON object per line, got {_kind(rec)}", path, number)
        yield number, rec


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _timestamp(value: Any, where: str, line: int) -> float:
    if isinstance(value, bool) or value is None:
        raise InputError(f"timestamp must be Unix seconds or ISO 8601 text, got {_kind(value)}", where, line)
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InputError("timestamp is not a finite number", where, line)
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"  # Python 3.10's fromisoformat does not read "Z"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise InputError(f"timestamp {value!r} is not ISO 8601 (such as 2024-05-01T10:00:00Z)", where, line) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    raise InputError(f"timestamp must be Unix seconds or ISO 8601 text, got {_kind(value)}", where, line)


def _build(records: list[tuple[int, Mapping[str, Any]]], where: str, name: str) -> InteractionLog:
    if not records:
        raise InputError("the log has no records", where)
    rows = []  # (session, time, order, line, query, results, clicks)
    for order, (line, rec) in enumerate(records):
        for key in ("session", "query", "timestamp", "results"):
            if key not in rec:
                raise InputError(f"missing required key {key!r}", where, line)
        session = rec["session"]
        if isinstance(session, bool) or not isinstance(session, (str, int)) or session == "":
            raise InputError(f"session must be a non-empty string, got {_kind(session)}", where, line)
        query = rec["query"]
        if not isinstance(query, str):
            raise InputError(f"query must be a string, got {_kind(query)}", where, line)
        results = rec["results"]
        if not isinstance(results, list) or not all(isinstance(d, str) for d in results):
            raise InputError("results must be a list of document ids (strings)", where, line)
        clicks = _clicks(rec.get("clicks", []), results, where, line)
        rows.append((str(session), _timestamp(rec["timestamp"], where, line), order, line, query, results, clicks))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))

    sessions: list[str] = []
    session_index: list[int] = []
    first: list[bool] = []
    ids: list[str] = []
    position = 0
    for s, *_ in rows:
        if not sessions or sessions[-1] != s:
            sessions.append(s)
            position = 0
        position += 1
        session_index.append(len(sessions) - 1)
        first.append(position == 1)
        ids.append(f"{s}:{position}")
    click_row, click_rank, click_dwell = [], [], []
    for i, row in enumerate(rows):
        for rank, dwell in row[6]:
            click_row.append(i)
            click_rank.append(rank)
            click_dwell.append(dwell)
    return InteractionLog(
        name=name,
        source=where,
        ids=tuple(ids),
        sessions=tuple(sessions),
        session=np.asarray(session_index, dtype=np.int64),
        first_in_session=np.asarray(first, dtype=bool),
        time=np.asarray([r[1] for r in rows], dtype=np.float64),
        queries=tuple(r[4] for r in rows),
        n_results=np.asarray([len(r[5]) for r in rows], dtype=np.int64),
        line=np.asarray([r[3] for r in rows], dtype=np.int64),
        click_row=np.asarray(click_row, dtype=np.int64),
        click_rank=np.asarray(click_rank, dtype=np.int64),
        click_dwell=np.asarray(click_dwell, dtype=np.float64),
    )


def _clicks(raw: Any, results: list[str], where: str, line: int) -> list[tuple[int, float]]:
    """The clicks of one record as (rank, dwell) pairs."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(f"clicks must be a list, got {_kind(raw)}", where, line)
    out = []
    for j, click in enumerate(raw):
        what = f"clicks[{j}]"
        if not isinstance(click, dict):
            raise InputError(f"{what} must be an object such as {{\"doc\": \"d1\", \"dwell\": 30}}", where, line)
        doc = click.get("doc")
        if not isinstance(doc, str):
            raise InputError(f"{what}.doc must be a document id (a string)", where, line)
        rank = click.get("rank")
        if rank is None:
            if doc not in results:
                raise InputError(f"{what}: document {doc!r} is not among the results shown, and the click has no rank", where, line)
            rank = results.index(doc) + 1
        elif isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise InputError(f"{what}.rank must be an integer >= 1, got {rank!r}", where, line)
        dwell = click.get("dwell")
        if dwell is None:
            dwell = math.nan
        elif isinstance(dwell, bool) or not isinstance(dwell, (int, float)) or not math.isfinite(dwell) or dwell < 0:
            raise InputError(f"{what}.dwell must be a number of seconds >= 0 (or null), got {dwell!r}", where, line)
        out.append((rank, float(dwell)))
    return out
