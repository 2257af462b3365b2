"""Log records checked and summarised a batch of columns at a time: the fast path of the forms that come
as Arrow columns (Parquet, pandas and polars frames).

:mod:`irspec_online.records` defines the checks and summaries record by record (:func:`~irspec_online.records.summarise`,
:func:`~irspec_online.records.checked_records`); that definition cost some 30 µs of CPU a record, a
Python function call per value. Here a batch's columns (:class:`Rows`) are checked at once, with numpy over the
Arrow arrays: types, ranges, list lengths, nulls and NaN, rank-less clicks looked up among their results;
the rows that pass are summarised at once, the same numbers the records' path gives (the tests hold the two
equal, value for value). A row the columns cannot vouch for goes to the record-by-record path: a bad one is
named by it (file, row, field, what was expected) exactly as it always was, and a good one the columns
flagged (a datetime after the year 2255, say) is summarised there. A batch whose column types are not ones read here
(ISO text or nanosecond timestamps, booleans where numbers belong, anything unusual) is read record by
record whole.

pyarrow is optional (the parquet extra): it is imported only where a batch of Arrow columns is read, which
only a form read through it hands over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from irspec_online import records
from irspec_online.records import (
    CLICK,
    MATCHED,
    SHOWN,
    QueryCounts,
    Ranker,
    bytes_keys,
    empty_lists,
    summary_schema,
)

__all__ = ["Rows", "Sessions", "list_array", "sessions", "summarise"]

_INT32 = 2**31
"""The ranks a summary holds (:data:`~irspec_online.records.CLICK`'s Int32): larger ones go the records' way."""
_EXACT = 2**53
"""Microseconds beyond which a datetime's seconds are not one float division away (the records' way)."""


@dataclass(frozen=True)
class Rows:
    """A batch of log records as Arrow columns: ``table`` (a pyarrow Table or RecordBatch of the log's
    columns), each row's line or row number (``numbers``), and ``plain``, which gives the rows at some
    positions (None: all) as plain records the way the form hands them over (polars' ``to_dicts``; by
    default Arrow's ``to_pylist``), for the record-by-record path. Iterated, it is the ``(number,
    record)`` pairs every reader of records takes."""

    table: Any
    numbers: np.ndarray
    plain: Callable[[np.ndarray | None], list[Any]] | None = None

    def __len__(self) -> int:
        return len(self.numbers)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        return iter(self.records())

    def records(self, rows: np.ndarray | None = None) -> list[tuple[int, Any]]:
        """``(number, record)`` of the rows at positions ``rows`` (default all), in order."""
        numbers = self.numbers if rows is None else self.numbers[rows]
        if self.plain is not None:
            plain = self.plain(rows)
        elif rows is None:
            plain = self.table.to_pylist()
        else:
            import pyarrow as pa

            plain = self.table.take(pa.array(rows, type=pa.int64())).to_pylist()
        return list(zip(numbers.tolist(), plain, strict=True))


# --------------------------------------------------------------------------------------------------
# The summaries of a batch


def summarise(
    batch: Any,
    where: str,
    unit: str = "line",
    *,
    problems: list | None = None,
    queries: QueryCounts | None = None,
    fields: Mapping[str, str] | None = None,
    ranker: Ranker | None = None,
    offset: int = 0,
) -> pl.DataFrame:
    """:func:`irspec_online.records.summarise` of a batch, the same arguments, the same frame: a batch of
    :class:`Rows` at once where its columns allow, plain records (and the rows the columns do not vouch
    for) record by record. A log read to estimate a ranking (``ranker``) gets that ranking's ranks of its
    documents by a join of the batch's results with the ranking (:meth:`~irspec_online.records.Ranker.columns`)."""
    fields = dict(fields or {})
    read = _read(batch.table, fields, ranker) if isinstance(batch, Rows) else None
    if read is None:
        return records.summarise(batch, where, unit, problems=problems, queries=queries, fields=fields,
                                 ranker=ranker, offset=offset)  # fmt: skip
    good = ~read.bad
    slow = None
    if read.bad.any():  # named (or summarised) by the records' own checks, in the records' order
        slow = records.summarise(batch.records(np.flatnonzero(read.bad)), where, unit, problems=problems,
                                 queries=queries, fields=fields, ranker=ranker, offset=offset)  # fmt: skip
    frame = read.summary(good, batch.numbers[good] + offset, queries, fields, ranker)
    return frame if slow is None or slow.height == 0 else pl.concat([frame, slow]).sort("line")


# --------------------------------------------------------------------------------------------------
# Click-model sessions of a batch


@dataclass(frozen=True)
class Sessions:
    """Click-model sessions of a batch's good records, in input order, before their pairs are coded: each
    row's ``number`` (line or row), ``query`` and ``session`` (texts), its top results (``docs``, every
    row's one after the other, ``length`` per row) and the ranks clicked among them (``clicks``, ``n x
    ranks``, bool)."""

    number: np.ndarray
    query: pl.Series
    session: pl.Series
    docs: pl.Series
    length: np.ndarray
    clicks: np.ndarray

    def __len__(self) -> int:
        return len(self.number)

    @classmethod
    def merged(cls, parts: list[Sessions]) -> Sessions:
        """The sessions of ``parts`` (of one batch) in input order."""
        kept = [p for p in parts if len(p)]
        if len(kept) <= 1:
            return kept[0] if kept else parts[0]
        parts = kept
        number = np.concatenate([p.number for p in parts])
        order = np.argsort(number, kind="stable")
        length = np.concatenate([p.length for p in parts])
        start = _starts(length)[order]
        take = length[order]
        items = np.repeat(start, take) + np.arange(take.sum()) - np.repeat(np.cumsum(take) - take, take)
        return cls(number[order], pl.concat([p.query for p in parts])[order], pl.concat([p.session for p in parts])[order],
                   pl.concat([p.docs for p in parts])[items], take, np.concatenate([p.clicks for p in parts])[order])  # fmt: skip


def sessions(batch: Any, where: str, unit: str, ranks: int, problems: list | None = None) -> Sessions:
    """The click-model sessions of a batch of records (:class:`Rows`, or plain ``(number, record)`` pairs),
    each record checked as every reader checks it (a bad one an :class:`irspec.InputError`, or its problem
    in ``problems``): per good record its query, session, top ``ranks`` results and the ranks clicked among
    them (a click's rank, or its document's position among the results)."""
    read = _read(batch.table, {}) if isinstance(batch, Rows) else None
    if read is None:
        return _record_sessions(list(batch), where, unit, ranks, problems)
    fast = read.sessions(~read.bad, batch.numbers, ranks)
    if not read.bad.any():
        return fast
    slow = _record_sessions(batch.records(np.flatnonzero(read.bad)), where, unit, ranks, problems)
    return Sessions.merged([fast, slow])


def _checked(
    batch: list[tuple[int, Any]], where: str, unit: str, problems: list | None
) -> Iterator[tuple[int, Any, list[int]]]:
    """Each good record's number, the record and its ranks clicked (:func:`irspec_online.records.checked_records`)."""
    for number, rec in batch:
        for _, clicked in records.checked_records([(number, rec)], where, unit, problems):
            yield number, rec, clicked


def _record_sessions(
    batch: list[tuple[int, Any]], where: str, unit: str, ranks: int, problems: list | None
) -> Sessions:
    """The sessions of plain records, record by record (:func:`irspec_online.records.checked_records`)."""
    number, query, session, docs, length, clicks = [], [], [], [], [], []
    for n, rec, clicked in _checked(batch, where, unit, problems):
        shown = rec["results"][:ranks]
        number.append(n)
        query.append(rec["query"])
        session.append(str(rec["session"]))
        docs.extend(shown)
        length.append(len(shown))
        row = [False] * ranks
        for rank in clicked:
            if rank <= len(shown):
                row[rank - 1] = True
        clicks.append(row)
    return Sessions(np.array(number, dtype=np.int64), pl.Series(query, dtype=pl.String),
                    pl.Series(session, dtype=pl.String), pl.Series(docs, dtype=pl.String),
                    np.array(length, dtype=np.int64), np.array(clicks, dtype=bool).reshape(len(length), ranks))  # fmt: skip


# --------------------------------------------------------------------------------------------------
# A batch's columns, checked


class _Unread(Exception):
    """A column of a type this module does not read: the batch goes the records' way."""


class _Read:
    """A batch's columns, read and checked: ``bad`` flags the rows they do not vouch for."""

    def __init__(self, table: Any, fields: Mapping[str, str], ranker: Ranker | None = None) -> None:
        import pyarrow.compute as pc

        self.pc = pc
        n = table.num_rows
        self.n = n
        self.bad = np.zeros(n, dtype=bool)
        names = set(table.column_names)
        column = {name: _array(table, name) for name in names}
        self.session, bad = _texts(column["session"], n)
        self.bad |= bad
        query = column["query"]
        if not _is_text(query.type):
            raise _Unread
        self.query = query
        self.bad |= _nulls(query)
        self.time = self._time(column["timestamp"])
        results = column["results"]
        if not (_is_list(results.type) and _is_text(results.type.value_type)):
            raise _Unread
        self.n_results, null, self.results = _list(results)
        self.bad |= null | _any_per_row(_nulls(self.results), self.n_results)
        self.bad |= _twice(results, self.results, self.n_results)
        self.result_start = _starts(self.n_results)
        self._clicks(column.get("clicks"))
        self._origins(column.get("origins"))
        self._propensities(column.get("propensities"))
        user = column.get("user")
        self.user = None
        if user is not None and not _is_null_type(user.type):
            self.user, bad = _texts(user, n, optional=True)
            self.bad |= bad
        self.labels = {}
        for role, key in fields.items():
            self.labels[role], bad = _texts(column[key], n)
            self.bad |= bad
        self.qid = None
        if ranker is not None:
            self._qid(column.get("qid"))

    def _qid(self, col: Any) -> None:
        """The query each row's ranking is looked up by (:meth:`~irspec_online.records.Ranker.ranks`): its
        ``qid`` (text; a number as its text), else its query text."""
        import pyarrow as pa

        if col is None:
            self.qid = self.query
            return
        t = col.type
        if not (_is_text(t) or pa.types.is_integer(t)):
            raise _Unread  # the records' way reads any value as its text (str)
        self.bad |= _nulls(col)  # a null qid: the query text's, as the records' way reads it
        self.qid = col.cast(pa.large_string())

    # -- the columns ------------------------------------------------------------------------------

    def _time(self, col: Any) -> np.ndarray:
        """Unix seconds, as the records' ``_timestamp`` makes them: a number as a float; a datetime (naive:
        UTC) as its microseconds over a million (``datetime.timestamp``'s exact division)."""
        import pyarrow as pa

        t = col.type
        null = _nulls(col)
        if pa.types.is_floating(t) or pa.types.is_integer(t):
            value = _numbers(col)
            low, high = records.TIME_RANGE
            with np.errstate(invalid="ignore"):  # NaN: not finite, flagged
                self.bad |= null | ~np.isfinite(value) | (value < low) | (value > high)
            return value
        if pa.types.is_timestamp(t) and t.unit in ("s", "ms", "us"):
            scale = {"s": 10**6, "ms": 10**3, "us": 1}[t.unit]
            raw = col.cast(pa.int64()).fill_null(0).to_numpy()
            far = np.abs(raw) >= _EXACT // scale  # beyond the years 1685-2255: the records' way
            self.bad |= null | far
            return (np.where(far, 0, raw) * scale).astype(np.float64) / 1e6
        raise _Unread  # text (ISO 8601), nanoseconds, dates: the records' way

    def _clicks(self, col: Any) -> None:
        """Per click: its row, rank (looked up among the results when it has none), dwell (NaN: none) and
        whether it is a result's (its document the result at its rank: not an ad's)."""
        n = self.n
        if col is None or _is_null_type(col.type):
            self.click_row = np.zeros(0, dtype=np.int64)
            self.click_rank = np.zeros(0, dtype=np.int64)
            self.click_dwell = np.zeros(0)
            self.click_result = np.zeros(0, dtype=bool)
            return
        if not (_is_list(col.type) and _is_struct(col.type.value_type)):
            raise _Unread
        count, _, flat = _list(col)  # a null list: no clicks
        row = np.repeat(np.arange(n), count)
        item = _struct(flat)
        self.bad |= _any_per_row(_nulls(flat), count)
        doc = item.get("doc")
        if doc is None or not _is_text(doc.type):
            raise _Unread
        doc_null = _nulls(doc)
        rank, rank_null, rank_bad = _ranks(item.get("rank"), len(flat))
        dwell, dwell_null = _floats(item.get("dwell"), len(flat))
        wrong = doc_null | rank_bad | (~dwell_null & ~(np.isfinite(dwell) & (dwell >= 0)))
        self.bad |= _any_per_row(wrong, count)
        # a click within the results is the result's where its document is the one shown there; a shown
        # document clicked where another is shown is refused (records.py says which); one not shown, such
        # as an ad, may be clicked at any rank, and is no result's
        ranked = ~rank_null & ~doc_null & ~rank_bad
        placed = ranked.copy()
        placed[placed] = rank[placed] <= self.n_results[row[placed]]
        # below the list's end: a shown document's click is refused there too
        beyond = ranked & ~placed
        if beyond.any():
            shown_doc = self._positions(row[beyond], doc.filter(beyond)) > 0
            self.bad |= np.bincount(row[beyond][shown_doc], minlength=n) > 0
        on_result = np.zeros(len(flat), dtype=bool)
        if placed.any():
            import pyarrow as pa

            at = self.result_start[row[placed]] + rank[placed] - 1
            shown = self.results.take(pa.array(at, pa.int64()))
            same = _true(self.pc.equal(_large(shown), _large(doc.filter(placed))))
            on_result[placed] = same
            placed[placed] = ~same
            if placed.any():
                misplaced = self._positions(row[placed], doc.filter(placed)) > 0
                self.bad |= np.bincount(row[placed][misplaced], minlength=n) > 0
        lookup = rank_null & ~doc_null
        if lookup.any():  # a click without a rank counts at its document's first position among the results
            at = self._positions(row[lookup], doc.filter(lookup))
            self.bad |= np.bincount(row[lookup][at == 0], minlength=n) > 0  # not among them
            rank[lookup] = at
            on_result[lookup] = at > 0
        self.click_row, self.click_rank, self.click_result = row, rank, on_result
        self.click_dwell = np.where(dwell_null | np.isnan(dwell), -np.inf, dwell)  # NaN: a bad row's

    def _positions(self, rows: np.ndarray, docs: Any) -> np.ndarray:
        """The 1-based first position of each ``docs[i]`` among row ``rows[i]``'s results, 0 where absent."""
        import pyarrow as pa

        shown = np.unique(rows)
        take = self.n_results[shown]
        start = np.repeat(self.result_start[shown], take)
        position = np.arange(len(start)) - np.repeat(np.cumsum(take) - take, take)
        results = self.results.take(pa.array(start + position, pa.int64()))
        # the texts numbered (a null result gets a number of its own: no click's document is null), each
        # (row, document) pair a number, looked up in numpy: a polars group-by and join cost a small
        # batch more than the rest of its checks
        texts = pa.concat_arrays([_large(results), _large(docs)])
        code = texts.dictionary_encode(null_encoding="encode").indices.to_numpy().astype(np.int64)
        width = int(code.max()) + 1 if len(code) else 1
        pair, first = np.unique(np.repeat(shown, take) * width + code[: len(start)], return_index=True)
        wanted = rows * width + code[len(start) :]
        found = np.zeros(len(rows), dtype=np.int64)
        if len(pair):
            at = np.minimum(np.searchsorted(pair, wanted), len(pair) - 1)
            hit = pair[at] == wanted
            found[hit] = position[first[at[hit]]] + 1  # a pair's first occurrence: its first position
        return found

    def _origins(self, col: Any) -> None:
        """Per result of an interleaved row: its origin's team (0 a, 1 b, -1 none), ranks (0 unknown) and
        ``p_a`` (NaN unknown)."""
        import pyarrow as pa

        n = self.n
        if col is None or _is_null_type(col.type):
            self.interleaved = np.zeros(n, dtype=bool)
            self.origin_start = np.zeros(n, dtype=np.int64)
            self.origin_count = np.zeros(n, dtype=np.int64)
            empty = np.zeros(0, dtype=np.int64)
            self.team, self.rank_a, self.rank_b, self.p_a = empty, empty, empty, np.zeros(0)
            return
        if not (_is_list(col.type) and _is_struct(col.type.value_type)):
            raise _Unread
        count, null, flat = _list(col)
        self.interleaved = ~null
        self.origin_count, self.origin_start = count, _starts(count)
        self.bad |= ~null & (count != self.n_results)
        item = _struct(flat)
        m = len(flat)
        wrong = _nulls(flat)
        team = item.get("team")
        if team is None or _is_null_type(team.type):
            self.team = np.full(m, -1, dtype=np.int64)
        elif _is_text(team.type):
            a = _true(self.pc.equal(team, pa.scalar("a", team.type)))
            b = _true(self.pc.equal(team, pa.scalar("b", team.type)))
            none = _nulls(team)
            wrong |= ~(a | b | none)
            self.team = np.where(a, 0, np.where(b, 1, -1))
        else:
            raise _Unread
        ranks = []
        for key in ("rank_a", "rank_b"):
            rank, rank_null, rank_bad = _ranks(item.get(key), m)
            wrong |= rank_bad
            ranks.append(np.where(rank_null, 0, rank))
        self.rank_a, self.rank_b = ranks
        p, p_null = _floats(item.get("p_a"), m)
        wrong |= ~p_null & ~((p >= 0) & (p <= 1))
        self.p_a = np.where(p_null, np.nan, p)
        self.bad |= _any_per_row(wrong, count)

    def _propensities(self, col: Any) -> None:
        """Per result of a randomised logger's row: the probability it logged the document there."""
        import pyarrow as pa

        n = self.n
        if col is None or _is_null_type(col.type):
            self.logged = np.zeros(n, dtype=bool)
            self.logging_start = np.zeros(n, dtype=np.int64)
            self.logging_count = np.zeros(n, dtype=np.int64)
            self.logging_p = np.zeros(0)
            return
        t = col.type
        if not (_is_list(t) and (pa.types.is_floating(t.value_type) or pa.types.is_integer(t.value_type))):
            raise _Unread
        count, null, flat = _list(col)
        self.logged = ~null
        self.logging_count, self.logging_start = count, _starts(count)
        p = _numbers(flat)
        self.bad |= ~null & (count != self.n_results)
        self.bad |= _any_per_row(_nulls(flat) | ~((p >= records.MIN_PROPENSITY) & (p <= 1)), count)
        self.logging_p = p

    # -- what the good rows give --------------------------------------------------------------------

    def _unique_clicks(self, good: np.ndarray, results: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The good rows' clicked ranks (``results``: only the results', not an ad's), each once, sorted by
        row, then rank: ``(row, rank)``."""
        keep = good[self.click_row] & (self.click_result if results else True)
        code = np.unique(self.click_row[keep] * _INT32 + self.click_rank[keep])
        return code // _INT32, code % _INT32

    def summary(
        self,
        good: np.ndarray,
        numbers: np.ndarray,
        queries: QueryCounts | None,
        fields: Mapping[str, str],
        ranker: Ranker | None = None,
    ) -> pl.DataFrame:
        """The :data:`~irspec_online.records.SUMMARY` rows of the good rows (and their labels), their query
        texts counted in ``queries``; given the ranking to estimate, what it gives them (:meth:`_estimated`)."""
        import pyarrow as pa

        n = self.n
        row, rank = self._unique_clicks(good)  # every click, an ad's too: the best rank clicked
        first = np.zeros(n, dtype=np.int64)
        rows, at = np.unique(row, return_index=True)
        first[rows] = rank[at]
        dwell = np.full(n, -np.inf)
        np.maximum.at(dwell, self.click_row, self.click_dwell)
        dwell = np.where(dwell >= 0, dwell, np.nan)
        # the clicked results' origins and logging probabilities
        row, rank = self._unique_clicks(good, results=True)
        origin = self.interleaved[row] & (rank <= self.origin_count[row])
        at = np.where(origin, self.origin_start[row] + rank - 1, 0)

        def pick(values: np.ndarray, missing: Any) -> np.ndarray:
            """Each clicked slot's origin field (``missing`` where the slot has no origin)."""
            return np.where(origin, values[at] if len(values) else missing, missing)

        logged = self.logged[row] & (rank <= self.logging_count[row])
        at_p = np.where(logged, self.logging_start[row] + rank - 1, 0)
        logging_p = np.where(logged, self.logging_p[at_p] if len(self.logging_p) else np.nan, np.nan)
        m = len(numbers)
        if ranker is None:
            new_rank = np.zeros(len(row), dtype=np.int32)
            ranked, new_length = np.zeros(m, dtype=np.int8), np.zeros(m, dtype=np.int32)
            matched, shown_new = empty_lists(m, pl.List(MATCHED)), empty_lists(m, pl.List(SHOWN))
        else:
            new_rank, ranked, new_length, matched, shown_new = self._estimated(good, row, rank, ranker)
        slots = pa.StructArray.from_arrays(
            [pa.array(rank, pa.int32()), pa.array(pick(self.team, -1), pa.int8()),
             pa.array(pick(self.rank_a, 0), pa.int32()), pa.array(pick(self.rank_b, 0), pa.int32()),
             pa.array(pick(self.p_a, np.nan), pa.float64()), pa.array(new_rank, pa.int32()),
             pa.array(logging_p, pa.float64())],
            names=list(CLICK.to_schema()),  # type: ignore[union-attr]
        )  # fmt: skip
        per_row = np.bincount(row, minlength=n)[good]
        clicked = list_array(per_row, slots)
        indices = pa.array(np.flatnonzero(good), pa.int64())
        session = self.session.take(indices)
        query = self.query.take(indices)
        query_key, distinct, issues = _keyed(query)
        if queries is not None:
            clicks = np.bincount(issues, weights=first[good] > 0, minlength=len(distinct)).astype(np.int64)
            queries.add_counts(
                distinct, np.bincount(issues, minlength=len(distinct)).tolist(), clicks.tolist()
            )
        user = session if self.user is None else self.pc.coalesce(self.user.take(indices), session)
        # made with its types, in order (made, then cast and put in order, it was two more polars
        # queries a batch, whose fixed cost was most of a small batch's time)
        return pl.DataFrame({
            "session": pl.from_arrow(session),
            "time": self.time[good],
            "line": numbers.astype(np.int64),
            "n_results": self.n_results[good],
            "first_click": first[good],
            "best_dwell": dwell[good],
            "query_key": query_key,
            "user_key": _text_keys(user),
            "interleaved": self.interleaved[good],
            "clicked": pl.from_arrow(clicked),
            "ranked": ranked,
            "matched": matched,
            "shown_new": shown_new,
            "new_length": new_length,
            **{role: pl.from_arrow(self.labels[role].take(indices)) for role in fields},
        }, schema=summary_schema(fields))  # fmt: skip

    def _estimated(
        self, good: np.ndarray, row: np.ndarray, rank: np.ndarray, ranker: Ranker
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, pl.Series, pl.Series]:
        """What the ranking to estimate gives the good rows, as the records' ``_summary`` makes it: each
        clicked slot's (``row``, ``rank``) new rank (0: past the results, or not ranked), and per good row
        ``ranked`` (0: its query is not ranked, or ranked empty; 2: the row has the logger's propensities),
        ``new_length``, the ``matched`` slots (where the ranking puts the shown document at its slot, with
        the inverse of its logging probability) and ``shown_new`` (the ranks of its distinct documents the
        ranking ranks, ascending)."""
        import pyarrow as pa

        keep = np.flatnonzero(good)
        position = np.full(self.n, -1, dtype=np.int64)
        position[keep] = np.arange(len(keep))
        pairs, sizes = ranker.columns()
        qid = _series(self.qid.take(pa.array(keep, pa.int64())))
        new_length = (
            pl.DataFrame({"qid": qid})
            .join(sizes, on="qid", how="left", maintain_order="left")["new_length"]
            .fill_null(0)
            .to_numpy()
            .astype(np.int64)
        )
        ranked_rows = new_length > 0
        # every shown slot of a good row whose query is ranked: its row (among the good), offset, new rank
        take = np.where(ranked_rows, self.n_results[keep], 0)
        slot_row = np.repeat(np.arange(len(keep)), take)
        offset = np.arange(len(slot_row)) - np.repeat(np.cumsum(take) - take, take)
        at = np.repeat(self.result_start[keep], take) + offset
        slots = pl.DataFrame(
            {"qid": qid.gather(slot_row), "doc": _series(self.results.take(pa.array(at, pa.int64())))}
        )
        new = (
            slots.join(pairs, on=["qid", "doc"], how="left", maintain_order="left")["rank"]
            .fill_null(0)
            .to_numpy()
            .astype(np.int64)
        )
        slot_start = _starts(take)
        # the clicked slots: the new rank of the document shown there (a rank past the results: none)
        g = position[row]
        inside = ranked_rows[g] & (rank <= self.n_results[row])
        new_rank = np.zeros(len(row), dtype=np.int32)
        new_rank[inside] = new[slot_start[g[inside]] + rank[inside] - 1]
        logged = self.logged[keep]
        ranked = np.where(ranked_rows, np.where(logged, 2, 1), 0).astype(np.int8)
        # matched: a logged row's slots where the ranking puts the document at that very slot
        agree = logged[slot_row] & (new == offset + 1)
        p = self.logging_p[self.logging_start[keep][slot_row[agree]] + offset[agree]]
        matched_rows = np.bincount(slot_row[agree], minlength=len(keep))
        matched = _lists(
            matched_rows,
            pa.StructArray.from_arrays(
                [pa.array(offset[agree] + 1, pa.int32()), pa.array(1 / p, pa.float64())],
                names=list(MATCHED.to_schema()),  # type: ignore[union-attr]
            ),
        )
        # shown_new: the distinct ranks (a document's, however often shown) per row, ascending
        code = np.unique(slot_row[new > 0] * _INT32 + new[new > 0])
        shown_rows = np.bincount(code // _INT32, minlength=len(keep))
        shown_new = _lists(
            shown_rows,
            pa.StructArray.from_arrays([pa.array(code % _INT32, pa.int32())], names=list(SHOWN.to_schema())),  # type: ignore[union-attr]
        )
        return new_rank, ranked, new_length.astype(np.int32), matched, shown_new

    def sessions(self, good: np.ndarray, numbers: np.ndarray, ranks: int) -> Sessions:
        """The click-model sessions of the good rows: their top ``ranks`` results and the ranks clicked."""
        import pyarrow as pa

        row, rank = self._unique_clicks(good, results=True)
        shown = np.minimum(self.n_results, ranks)
        inside = rank <= shown[row]
        keep = np.flatnonzero(good)
        position = np.full(self.n, -1, dtype=np.int64)
        position[keep] = np.arange(len(keep))
        clicks = np.zeros((len(keep), ranks), dtype=bool)
        clicks[position[row[inside]], rank[inside] - 1] = True
        take = shown[keep]
        start = np.repeat(self.result_start[keep], take)
        offset = np.arange(len(start)) - np.repeat(np.cumsum(take) - take, take)
        docs = self.results.take(pa.array(start + offset, pa.int64()))
        indices = pa.array(keep, pa.int64())
        return Sessions(numbers[keep].astype(np.int64), _series(self.query.take(indices)),
                        _series(self.session.take(indices)), _series(docs), take.astype(np.int64), clicks)  # fmt: skip


def _read(table: Any, fields: Mapping[str, str], ranker: Ranker | None = None) -> _Read | None:
    """The batch's columns read and checked (with the ``qid`` a ``ranker`` looks rows up by), or None when
    a column's type is not one read here."""
    try:
        return _Read(table, fields, ranker)
    except _Unread:
        return None


# --------------------------------------------------------------------------------------------------
# Arrow arrays as numpy


def _array(table: Any, name: str) -> Any:
    """A column as one Arrow array (a Table's may come in chunks)."""
    import pyarrow as pa

    col = table.column(name)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def _is_text(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _is_list(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_list(t) or pa.types.is_large_list(t))


def _is_struct(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_struct(t))


def _is_null_type(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_null(t))


def _nulls(col: Any) -> np.ndarray:
    """Per value, whether it is null."""
    if col.null_count == 0:
        return np.zeros(len(col), dtype=bool)
    return col.is_null().to_numpy(zero_copy_only=False)


def _true(col: Any) -> np.ndarray:
    """A boolean array's values, null as false."""
    return col.fill_null(False).to_numpy(zero_copy_only=False)


def _numbers(col: Any) -> np.ndarray:
    """A numeric array as float64 (as Python's ``float`` of each value), null as NaN."""
    import pyarrow as pa

    if pa.types.is_integer(col.type):
        return np.where(_nulls(col), np.nan, col.fill_null(0).to_numpy().astype(np.float64))
    return col.cast(pa.float64()).to_numpy(zero_copy_only=False)


def _floats(col: Any, size: int) -> tuple[np.ndarray, np.ndarray]:
    """An optional numeric struct field as float64 and its nulls (absent: every value null)."""
    import pyarrow as pa

    if col is None or _is_null_type(col.type):
        return np.zeros(size), np.ones(size, dtype=bool)
    if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
        raise _Unread
    return _numbers(col), _nulls(col)


def _ranks(col: Any, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An optional rank field (integers, or floats holding them, as pandas keeps integers with nulls):
    its values (int64), nulls, and the values that are no rank from 1 to 2**31 - 1."""
    import pyarrow as pa

    if col is None or _is_null_type(col.type):
        return np.zeros(size, dtype=np.int64), np.ones(size, dtype=bool), np.zeros(size, dtype=bool)
    null = _nulls(col)
    if pa.types.is_integer(col.type):
        if pa.types.is_uint64(col.type):  # beyond int64: no rank here
            value = col.fill_null(0).to_numpy()
            big = value >= _INT32
            value = np.where(big, 0, value).astype(np.int64)
            return value, null, ~null & (big | (value < 1))
        value = col.fill_null(0).to_numpy().astype(np.int64)
        return value, null, ~null & ((value < 1) | (value >= _INT32))
    if pa.types.is_floating(col.type):
        value = _numbers(col)
        whole = np.isfinite(value) & (value == np.floor(value)) & (value >= 1) & (value < _INT32)
        return np.where(whole, value, 0).astype(np.int64), null, ~null & ~whole
    raise _Unread


def _texts(col: Any, n: int, optional: bool = False) -> tuple[Any, np.ndarray]:
    """An id column (a session, a user, an A/B test's arm) as text, a number as its decimal text, and the
    rows it fails: null (unless ``optional``) or empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if _is_text(t):
        empty = _true(pc.equal(pc.binary_length(col), 0))
    elif pa.types.is_integer(t):
        empty = np.zeros(n, dtype=bool)
    else:
        raise _Unread
    # one type for every id column, so that a user's may stand in for a missing one's (coalesce)
    return col.cast(pa.large_string()), empty if optional else empty | _nulls(col)


def _list(col: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    """A list column's lengths (0 for null), nulls and values, one after the other."""
    null = _nulls(col)
    count = col.value_lengths().fill_null(0).to_numpy().astype(np.int64)
    return count, null, col.flatten()


def _struct(col: Any) -> dict[str, Any]:
    """A struct array's fields by name, each null where the struct is."""
    return dict(zip([f.name for f in col.type], col.flatten(), strict=True))


def _starts(count: np.ndarray, total: bool = False) -> np.ndarray:
    """Where each row's items start, from their counts (``total``: with the end, one more)."""
    start = np.zeros(len(count) + 1, dtype=np.int64)
    np.cumsum(count, out=start[1:])
    return start if total else start[:-1]


def _any_per_row(flags: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per row, whether any of its items (``count`` per row, one after the other) is flagged."""
    if not flags.any():
        return np.zeros(len(count), dtype=bool)
    return np.bincount(np.repeat(np.arange(len(count)), count)[flags], minlength=len(count)) > 0


_TWICE_BY_POLARS = 4096
"""From this many results in a batch, the documents shown twice are found by polars (``list.n_unique``,
hashed in Rust: ~10 ms for a million results, where numpy took ~200 ms to number them); below it, by
numpy, whose ~50 µs a small batch beat polars' ~0.5 ms."""


def _twice(lists: Any, items: Any, count: np.ndarray) -> np.ndarray:
    """Per row of ``lists``, whether it lists an item twice (its ``items``, ``count`` per row, one after the
    other): a document shown twice, which the records' check names."""
    if len(items) < 2:
        return np.zeros(len(count), dtype=bool)
    if len(items) >= _TWICE_BY_POLARS:
        series = pl.Series(lists)
        return (series.list.n_unique() < series.list.len()).fill_null(False).to_numpy()
    code = items.dictionary_encode(null_encoding="encode").indices.to_numpy().astype(np.int64)
    width = int(code.max()) + 1
    pair = np.sort(np.repeat(np.arange(len(count), dtype=np.int64), count) * width + code)
    twice = np.zeros(len(count), dtype=bool)
    twice[pair[1:][pair[1:] == pair[:-1]] // width] = True
    return twice


def _keyed(texts: Any) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Each text's key (:func:`~irspec_online.records.text_keys`), the distinct texts, and each text's
    index among them (a batch's queries: a few distinct ones, counted and keyed once each)."""
    encoded = texts.dictionary_encode()
    index = encoded.indices.to_numpy().astype(np.int64)
    return _text_keys(encoded.dictionary)[index], encoded.dictionary.to_pylist(), index


def _text_keys(texts: Any) -> np.ndarray:
    """:func:`~irspec_online.records.text_keys` of an Arrow array of texts (no nulls), from its buffers."""
    import pyarrow as pa

    if len(texts) == 0:
        return np.zeros(0, dtype=np.int64)
    _, offsets, data = texts.buffers()
    kind = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    at = np.frombuffer(offsets, dtype=kind)[texts.offset : texts.offset + len(texts) + 1].astype(np.int64)
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    # only this array's bytes: a slice of a larger one shares its whole buffer
    return bytes_keys(raw[at[0] : at[-1]], at[:-1] - at[0], np.diff(at))


def _large(texts: Any) -> Any:
    """An Arrow array of texts as large strings, so that any two compare or join."""
    import pyarrow as pa

    return texts.cast(pa.large_string())


def _series(texts: Any) -> pl.Series:
    """An Arrow array of texts as a polars String series."""
    return pl.Series(pl.from_arrow(texts)).cast(pl.String)


def _lists(count: np.ndarray, items: Any) -> pl.Series:
    """A list column of ``count[i]`` items per row, the Arrow ``items`` one row's after the other."""
    return pl.Series(pl.from_arrow(list_array(count, items)))


def list_array(count: np.ndarray, items: Any) -> Any:
    """An Arrow list array of ``count[i]`` of the Arrow ``items`` per row, one row's after the other."""
    import pyarrow as pa

    return pa.ListArray.from_arrays(pa.array(_starts(count, total=True), pa.int32()), items)
