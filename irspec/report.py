"""Formatting evaluation results: terminal table, JSON, CSV/TSV, and trec_eval's own lines.

Formatters return text and write nothing; :func:`write_atomic` puts text into a file so that a failed
run never leaves a half-written file behind.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from irspec.engine import Result

__all__ = ["FORMATS", "format_results", "to_json", "to_trec", "to_delimited", "to_table", "write_atomic"]

FORMATS = ("table", "json", "csv", "tsv", "trec")
"""Output formats of ``irspec eval``."""

# trec_eval prints these only in the summary: a per-query num_q or geometric mean means nothing.
_SUMMARY_ONLY = {"NumQ", "GMAP", "gm_bpref"}


def _label(metric: Any, trec: bool) -> str:
    return (metric.trec_name or str(metric)) if trec else str(metric)


def _number(value: float, metric: Any) -> str:
    if math.isnan(value):
        return "nan"
    if metric.aggregate == "sum" and float(value).is_integer():
        return str(int(value))
    return f"{value:6.4f}"


# trec_eval prints measures in the order of its internal table (measures.c), not the order asked.
TREC_ORDER = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring "
    "recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel Rndcg ndcg_cut "
    "map_cut relative_P success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret yaap rbp "
    "rbp_resid unj"
).split()
_TREC_RANK = {name: i for i, name in enumerate(TREC_ORDER)}


def trec_order(metrics: Sequence[Any]) -> list[Any]:
    """Metrics in trec_eval's output order (cutoffs ascending); those trec_eval lacks keep their order, last."""

    def key(item: tuple[int, Any]) -> tuple[int, float, int]:
        i, m = item
        name = m.trec_name
        if name is None:
            return (len(TREC_ORDER), 0.0, i)
        if name in _TREC_RANK:
            return (_TREC_RANK[name], 0.0, i)
        root, _, param = name.rpartition("_")
        while root and root not in _TREC_RANK:
            root, _, more = root.rpartition("_")
            param = f"{more}_{param}"
        try:
            value = float(param)
        except ValueError:
            value = 0.0
        return (_TREC_RANK.get(root, len(TREC_ORDER)), value, i)

    return [m for _, m in sorted(enumerate(metrics), key=key)]


def to_trec(results: Sequence[Result], *, per_query: bool = False, runid: bool = False, summary: bool = True) -> str:
    """trec_eval's output: ``measure<TAB>qid<TAB>value`` lines, the name left-aligned to 22 columns.

    Per-query lines come first (queries in order, each with its measures), then the summary (``all``);
    ``runid`` adds trec_eval's ``runid all NAME`` line, as its official and all_trec sets do.
    """
    lines: list[str] = []
    for res in results:
        ordered = [(res.metrics.index(m), m) for m in trec_order(res.metrics)]
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in ordered:
                    if m.name in _SUMMARY_ONLY or math.isnan(res.values[i, j]):
                        continue
                    lines.append(f"{_label(m, True):<22}\t{qid}\t{_number(res.values[i, j], m)}")
        if summary:
            if runid:
                lines.append(f"{'runid':<22}\tall\t{res.run_name}")
            agg = res.aggregate()
            for _, m in ordered:
                lines.append(f"{_label(m, True):<22}\tall\t{_number(agg[str(m)], m)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value


def to_json(results: Sequence[Result], *, per_query: bool = False, extra: dict | None = None) -> str:
    """One JSON document: metrics (canonical), options, warnings, and per run its aggregate (and per query)."""
    first = results[0] if results else None
    doc: dict[str, Any] = {
        "metrics": [str(m) for m in first.metrics] if first else [],
        "options": first.options.as_dict() if first else {},
        "warnings": [w for r in results for w in r.warnings],
        "runs": [],
    }
    for res in results:
        entry: dict[str, Any] = {"name": res.run_name, "path": res.run_source, "aggregate": res.aggregate()}
        if per_query:
            entry["per_query"] = {
                q: {k: _clean(v) for k, v in row.items()} for q, row in res.per_query().items()
            }
        doc["runs"].append(entry)
    if extra:
        doc.update(extra)
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def to_delimited(results: Sequence[Result], *, sep: str = ",", per_query: bool = False) -> str:
    """Long-format CSV/TSV: ``run, query, metric, value`` rows (``query`` is ``all`` for the summary)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
    writer.writerow(["run", "query", "metric", "value"])
    for res in results:
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in enumerate(res.metrics):
                    v = res.values[i, j]
                    writer.writerow([res.run_name, qid, str(m), "" if math.isnan(v) else repr(float(v))])
        for name, v in res.aggregate().items():
            writer.writerow([res.run_name, "all", name, repr(float(v))])
    return buf.getvalue()


def to_table(results: Sequence[Result], *, per_query: bool = False, decimals: int = 4) -> str:
    """An aligned text table: runs as rows (with per-query rows under each run), metrics as columns."""
    if not results:
        return ""
    metrics = results[0].metrics
    header = ["run", "query"] if per_query else ["run"]
    header += [str(m) for m in metrics]
    rows: list[list[str]] = []

    def fmt(v: float, m: Any) -> str:
        if math.isnan(v):
            return "-"
        if m.aggregate == "sum" and float(v).is_integer():
            return str(int(v))
        return f"{v:.{decimals}f}"

    for res in results:
        agg = res.aggregate()
        if per_query:
            for i, qid in enumerate(res.query_ids):
                rows.append([res.run_name, qid] + [fmt(res.values[i, j], m) for j, m in enumerate(metrics)])
        rows.append([res.run_name] + (["all"] if per_query else []) + [fmt(agg[str(m)], m) for m in metrics])
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    text_cols = 2 if per_query else 1

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < text_cols else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]
    return "\n".join(s.rstrip() for s in out) + "\n"


def format_results(results: Sequence[Result], fmt: str, *, per_query: bool = False, runid: bool = False) -> str:
    """Format results in one of :data:`FORMATS`."""
    if fmt == "trec":
        return to_trec(results, per_query=per_query, runid=runid)
    if fmt == "json":
        return to_json(results, per_query=per_query)
    if fmt in ("csv", "tsv"):
        return to_delimited(results, sep="," if fmt == "csv" else "\t", per_query=per_query)
    if fmt == "table":
        return to_table(results, per_query=per_query)
    raise ValueError(f"unknown format {fmt!r}")


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, creating directories.

    Readers never see a half-written file, and an error leaves any previous file untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
