"""Qrels with subtopics: TREC's ``topic subtopic docno label`` lines, or a frame with a subtopic column.

The reader registered as the ``subtopics`` input (with ``as_qrels``: it is read from the source given as
the qrels). Its :class:`SubtopicQrels` gives irspec ordinary qrels (``qrels``: each document's highest
label over its subtopics, so that a document relevant to any subtopic is relevant, as ndeval's own
non-intent-aware MAP has it), and the diversity kernels each query's judgments per subtopic
(:meth:`SubtopicQrels.topic`).
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from irspec import InputError
from irspec.plugin_api import (
    Qrels,
    bounded_lines,
    is_dataset_id,
    label_out_of_range,
    named_rows,
    qrels_records,
    quote,
)

__all__ = ["COLUMNS", "SubtopicQrels", "Topic", "read_subtopic_qrels"]

COLUMNS: dict[str, tuple[str, ...]] = {
    "query": ("query_id", "qid", "query"),
    "subtopic": ("subtopic_id", "iteration", "subtopic"),
    "docno": ("doc_id", "docno"),
    "label": ("relevance", "label"),
}
"""The names a frame's (or a named tuple's) columns may have, first found first: ir_measures'
(``query_id, iteration, doc_id, relevance``: ir_measures reads a diversity qrels file's second field as
``iteration``), ir_datasets' ``TrecSubQrel`` and pyndeval's ``SubtopicQrel`` (``subtopic_id``),
PyTerrier's (``qid, docno, label``) and irspec's own names."""


@dataclass(frozen=True)
class Topic:
    """One query's judgments at one relevance level, as ndeval uses them.

    ``subtopics`` is the number of subtopics with at least one relevant document (ndeval's
    "actual subtopics"; a subtopic judged only non-relevant is ignored). ``relevant`` maps each
    document relevant to some subtopic to the indices (ascending, from 0) of those subtopics, in the
    order of the subtopic ids; ``per_subtopic`` counts the relevant documents of each; ``judged`` is
    every docno judged for the query, relevant or not.
    """

    subtopics: int
    relevant: Mapping[str, tuple[int, ...]]
    per_subtopic: tuple[int, ...]
    judged: frozenset[str]


class SubtopicQrels:
    """Qrels with subtopics, read by :func:`read_subtopic_qrels`.

    ``frame`` has columns ``query``, ``subtopic``, ``docno`` (strings) and ``label`` (Int64), one row
    per judgment; ``qrels`` are the ordinary qrels irspec evaluates every metric with (a document's
    highest label over its subtopics); ``ids`` the query ids; ``source`` the file (or ``<DataFrame>``).
    """

    def __init__(self, frame: pl.DataFrame, source: str) -> None:
        self.frame = frame
        self.source = source
        best = frame.group_by("query", "docno").agg(pl.col("label").max())
        self.qrels = Qrels.from_frame(
            best, source=source, columns={"query": "query", "docno": "docno", "label": "label"}
        )
        self.ids = tuple(self.qrels.frame.get_column("query").unique(maintain_order=True).to_list())
        self._rows: dict[str, list[tuple[str, str, int]]] = {}
        for q, s, d, label in frame.iter_rows():
            self._rows.setdefault(q, []).append((s, d, label))
        self._topics: dict[tuple[str, int], Topic] = {}

    def topic(self, query: str, rel: int) -> Topic:
        """The judgments of ``query`` with labels >= ``rel`` counted relevant (cached per level)."""
        key = (query, rel)
        if key not in self._topics:
            self._topics[key] = _topic(self._rows.get(query, []), rel)
        return self._topics[key]


def _topic(rows: list[tuple[str, str, int]], rel: int) -> Topic:
    # ndeval adds a document's gains subtopic by subtopic in the order of the subtopic numbers; sums of
    # floats depend on that order (to the last bit, which decides ties in the greedy ideal ranking), so
    # the subtopics are taken in the order of their ids: numerically when every id is an integer.
    relevant_ids = {s for s, _, label in rows if label >= rel}
    numeric = all(re.fullmatch(r"-?[0-9]+", s) for s in relevant_ids)
    order = sorted(relevant_ids, key=(lambda s: (int(s), s)) if numeric else None)
    index = {s: i for i, s in enumerate(order)}
    relevant: dict[str, list[int]] = {}
    per_subtopic = [0] * len(order)
    for s, d, label in rows:
        if label >= rel:
            relevant.setdefault(d, []).append(index[s])
            per_subtopic[index[s]] += 1
    return Topic(
        len(order),
        {d: tuple(sorted(js)) for d, js in relevant.items()},
        tuple(per_subtopic),
        frozenset(d for _, d, _ in rows),
    )


def read_subtopic_qrels(source: Any) -> SubtopicQrels:
    """Qrels with subtopics from a TREC file (``topic subtopic docno label``, gzip too), a pandas or polars
    DataFrame with a subtopic column (:data:`COLUMNS`), an iterable of named tuples with such fields
    (ir_datasets' ``TrecSubQrel``, ir_measures' ``Qrel`` with ``iteration``, pyndeval's
    ``SubtopicQrel``), ``irds:<id>`` (a diversity task of ir_datasets, such as
    ``irds:clueweb09/en/trec-web-2009/diversity``), or a :class:`SubtopicQrels` (returned as is).

    Labels are integers, negative ones included (never relevant). A (query, subtopic, docno) judged
    twice is an :class:`~irspec.InputError` naming both lines, as is a line without four fields.
    """
    if isinstance(source, SubtopicQrels):
        return source
    if is_dataset_id(source):
        return _checked(_from_rows(qrels_records(source), source), source, "record")
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return _checked(_read_text(path), path, "line")
    if hasattr(source, "to_pandas") or hasattr(source, "iloc"):  # a polars or pandas DataFrame
        frame = source if isinstance(source, pl.DataFrame) else _from_pandas(source)
        return _checked(_columns(frame, frame.columns, "<DataFrame>"), "<DataFrame>", "row")
    if isinstance(source, Iterable):
        return _checked(_from_rows(source), "<rows>", "row")
    raise InputError(
        f"expected qrels with subtopics (a path, a DataFrame or named tuples), got {type(source).__name__}",
        "<subtopics>",
    )


def _read_text(path: str) -> pl.DataFrame:
    rows: dict[str, list[Any]] = {"query": [], "subtopic": [], "docno": [], "label": [], "line": []}
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for number, line in bounded_lines(f, path):  # binary data is refused, not held whole
                fields = line.split()
                if not fields or fields[0].startswith("#"):
                    continue
                if len(fields) != 4:
                    raise InputError(
                        f"expected 4 fields (topic subtopic docno label), got {len(fields)}",
                        path,
                        line=number,
                    )
                label = _label(fields[3], path, number)
                for key, value in zip(
                    ("query", "subtopic", "docno", "label", "line"), (*fields[:3], label, number), strict=True
                ):
                    rows[key].append(value)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason})", path) from None
    return pl.DataFrame(
        rows,
        schema={
            "query": pl.String,
            "subtopic": pl.String,
            "docno": pl.String,
            "label": pl.Int64,
            "line": pl.Int64,
        },
    )


_INTEGER = re.compile(r"[+-]?[0-9]+")
"""A label as irspec's qrels readers read one: ASCII digits with a sign (Python's ``int`` also takes
``1_0``, spaces and other scripts' digits, which they refuse)."""


def _label(text: str, path: str, number: int) -> int:
    if _INTEGER.fullmatch(text) is None:
        raise InputError(f"label {quote(text)} is not an integer", path, line=number)
    label = int(text)
    if not -(2**63) <= label < 2**63:  # the frame's Int64 column would refuse it with a traceback
        raise InputError(label_out_of_range(text), path, line=number)
    return label


def _from_pandas(df: Any) -> pl.DataFrame:
    return pl.from_pandas(df.reset_index(drop=True))


def _from_rows(rows: Iterable[Any], source: str = "<rows>") -> pl.DataFrame:
    fields, records = named_rows(rows, source, "named tuples with subtopic fields")
    data = {name: [getattr(r, name) for r in records] for name in fields}
    return _columns(pl.DataFrame(data, strict=False), list(fields), source)


def _columns(frame: pl.DataFrame, names: Iterable[str], source: str) -> pl.DataFrame:
    """The four columns, found by :data:`COLUMNS`, as strings and an integer label, with a row number."""
    present = list(names)
    chosen = {}
    for role, options in COLUMNS.items():
        found = next((n for n in options if n in present), None)
        if found is None:
            raise InputError(
                f"no {role} column: expected one of {', '.join(options)} (columns: {', '.join(present)})",
                source,
            )
        chosen[role] = found
    out = frame.select(
        *(pl.col(chosen[r]).cast(pl.String).alias(r) for r in ("query", "subtopic", "docno")),
        pl.col(chosen["label"]).alias("label"),
    ).with_row_index("line", offset=1)
    label = out.get_column("label")
    if label.dtype.is_float():
        bad = out.filter(label.is_not_null() & (label != label.round()))
        if bad.height:
            row = bad.row(0, named=True)
            raise InputError(f"label {row['label']} is not an integer", source, line=row["line"], unit="row")
    elif not label.dtype.is_integer() and label.len():
        raise InputError(f"labels must be integers, got {label.dtype}", source)
    return out.with_columns(pl.col("label").cast(pl.Int64), pl.col("line").cast(pl.Int64))


def _checked(frame: pl.DataFrame, source: str, unit: str) -> SubtopicQrels:
    """Every value present, no judgment twice; then the :class:`SubtopicQrels`."""
    for name in ("query", "subtopic", "docno", "label"):
        nulls = frame.filter(pl.col(name).is_null())
        if nulls.height:
            raise InputError(f"no {name}", source, line=nulls.item(0, "line"), unit=unit)
    twice = frame.filter(pl.struct("query", "subtopic", "docno").is_duplicated())
    if twice.height:
        first = twice.row(0, named=True)
        same = (
            twice.filter(
                (pl.col("query") == first["query"])
                & (pl.col("subtopic") == first["subtopic"])
                & (pl.col("docno") == first["docno"])
            )
            .get_column("line")
            .to_list()
        )
        raise InputError(
            f"document {quote(first['docno'])} is judged twice for subtopic {quote(first['subtopic'])} of query "
            f"{quote(first['query'])} ({unit}s {same[0]} and {same[1]})",
            source,
        )
    return SubtopicQrels(frame.drop("line"), source)
