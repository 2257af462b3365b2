"""Results and comparisons as data: one JSON document, or long-format CSV/TSV rows."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from irspec.evaluation.evaluated import collect_warnings
from irspec.experiment.records import Comparison

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = ["comparisons_delimited", "to_delimited", "to_json", "to_jsonl"]

SUMMARY_QUERY = "all"
"""The ``query_id`` of a summary record in JSON lines (ir_measures' ``SUMMARY_QID``)."""


def _clean(value: float | str) -> float | str | None:
    """A value as JSON holds it: an undefined one (NaN) is ``null``; a text metric's string stays."""
    return None if isinstance(value, float) and math.isnan(value) else value


def to_json(results: Sequence[Evaluated], *, per_query: bool = False, extra: dict | None = None) -> str:
    """One JSON document: metrics (canonical), options, warnings, and per run its aggregate (and per query)
    and, for a run evaluated against qrels, its Judged@10 (``judged_at_10``).

    ``warnings`` at the top lists every warning once; each run's entry has its own ``warnings`` too.
    """
    first = results[0] if results else None
    names: list[str] = []  # every metric of every result (a log's beside the runs'), first seen first
    for res in results:
        names.extend(str(m) for m in res.metrics if str(m) not in names)
    doc: dict[str, Any] = {
        "metrics": names,
        "options": first.options.as_dict() if first else {},
        "warnings": collect_warnings(results),
        "runs": [],
    }
    for res in results:
        entry: dict[str, Any] = {
            "name": res.run_name,
            "path": res.run_source,
            "warnings": list(res.warnings),
            "aggregate": {name: _clean(v) for name, v in res.aggregate().items()},  # NaN is not JSON
        }
        if res.judged_at_10 is not None:  # the run's judgment coverage, not a metric asked for
            entry["judged_at_10"] = res.judged_at_10
        if res.tables:  # what an input offers beside its metrics (a log's top queries)
            entry["tables"] = [t.as_dict() for t in res.tables]
        if getattr(
            res, "runs", ()
        ):  # a system of several runs (irspec.evaluation.systems, above report): its runs and spread
            entry["system"] = res.as_dict()  # type: ignore[attr-defined]  # a SystemResult's, a layer above
        if per_query:
            entry["per_query"] = {
                q: {k: _clean(v) for k, v in row.items()} for q, row in res.per_query().items()
            }
        doc["runs"].append(entry)
    if extra:
        doc.update(extra)
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def to_jsonl(results: Sequence[Evaluated], *, per_query: bool = False) -> str:
    """JSON lines in ir_measures' record shape: ``{"query_id": ..., "measure": ..., "value": ...}`` per
    query and metric (with ``per_query``), then each metric's summary with ``query_id`` ``"all"``; without
    ``per_query``, the summaries alone as ``{"measure": ..., "value": ...}`` (as ``ir_measures -o jsonl``
    prints them). With several runs every record starts with ``"run"``. An undefined value is ``null``;
    a text-valued metric (``relstring``) has its string per query and no summary.
    """
    lines = []
    for res in results:
        head = {"run": res.run_name} if len(results) > 1 else {}
        if per_query:
            for qid, row in res.per_query().items():
                for name, v in row.items():
                    value = _clean(v)
                    lines.append(
                        json.dumps(
                            {**head, "query_id": qid, "measure": name, "value": value}, allow_nan=False
                        )
                    )
        where = {"query_id": SUMMARY_QUERY} if per_query else {}
        aggregate = res.aggregate()
        for m in res.metrics:
            if m.aggregate != "none":
                record = {**head, **where, "measure": str(m), "value": _clean(aggregate[str(m)])}
                lines.append(json.dumps(record, allow_nan=False))
    return "".join(line + "\n" for line in lines)


def to_delimited(results: Sequence[Evaluated], *, sep: str = ",", per_query: bool = False) -> str:
    """Long-format CSV/TSV: ``run, query, metric, value`` rows (``query`` is ``all`` for the summary); an
    undefined value (NaN), a query's or a summary's, is an empty field."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
    writer.writerow(["run", "query", "metric", "value"])
    for res in results:
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in enumerate(res.metrics):
                    if m.catalogue:  # one value per run: its "all" row below
                        continue
                    v = res.values[i, j]
                    writer.writerow([res.run_name, qid, str(m), "" if math.isnan(v) else repr(float(v))])
        for name, v in res.aggregate().items():
            writer.writerow([res.run_name, "all", name, "" if math.isnan(v) else repr(float(v))])
    return buf.getvalue()


def comparisons_delimited(comparisons: Sequence[Comparison], *, sep: str = ",") -> str:
    """CSV/TSV of the comparisons: one row each, the columns of a comparison (``Comparison.COLUMNS``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
    fields = Comparison.COLUMNS
    writer.writerow(fields)
    for c in comparisons:
        row = []
        for name in fields:
            v = getattr(c, name)
            if v is None:
                v = ""
            elif isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, float):
                v = repr(v)
            row.append(v)
        writer.writerow(row)
    return buf.getvalue()
