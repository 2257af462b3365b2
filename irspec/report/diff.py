"""A query-by-query comparison of two runs (:func:`irspec.diff`) in every format: text, Markdown, JSON
and a self-contained HTML page, whose body is also what a notebook shows.

Text and Markdown are sections of the table model, ``(heading, description, block)``, rendered by
:func:`.text.plain_tables` and :func:`.markdown.plain_tables` as the power tables are: the means, the
largest losses and gains, and each shown query's two rankings side by side under a sentence that
says why. The page is the jinja2 template ``templates/diff.html.j2`` (autoescaped): the query table,
sortable by any column, and every query's rankings, one shown at a time when its row is clicked.

It reads the diff (:class:`irspec.experiment.diff.Diff`) by its attributes and methods, as the power
tables read a power analysis: the step computes, this module presents.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from irspec.report import markdown, text
from irspec.report.html import template
from irspec.report.marks import direction
from irspec.report.model import Block, Cell, Column, Row, check_decimals

__all__ = ["diff_sections", "fragment", "to_html", "to_json", "to_markdown", "to_text"]

NOT_RETRIEVED = "not retrieved"
UNJUDGED = "unjudged"


def _number(value: float, decimals: int, *, sign: bool = False) -> Cell:
    if math.isnan(value):
        return Cell("-", None)
    return Cell(f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}", value)


def _label(doc: Any) -> str:
    return UNJUDGED if doc.label is None else str(doc.label)


def _other(doc: Any) -> str:
    return NOT_RETRIEVED if doc.other is None else str(doc.other)


def _names(found: Any) -> tuple[str, str]:
    """The runs' names as column headers: ``A`` and ``B`` beside them when the names alone are equal."""
    a, b = found.run_a, found.run_b
    return (f"{a} (A)", f"{b} (B)") if a == b else (a, b)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def why(found: Any, query: Any) -> str:
    """One sentence on what changed in the top k of ``query``: relevant documents gained and lost, and
    the unjudged documents of each run's top k."""
    k = found.top
    a, b = found.run_a, found.run_b

    def docs(names: Sequence[str]) -> str:
        return f" ({', '.join(names)})" if names else ""

    return (
        f"{b} has {_count(len(query.gained), 'relevant document')} in its top {k} that {a} has not{docs(query.gained)}, "
        f"and lacks {len(query.lost)} that {a} has{docs(query.lost)}; unjudged in the top {k}: "
        f"{a} {query.unjudged_a}, {b} {query.unjudged_b}"
    )


def headline(found: Any, query: Any, decimals: int) -> str:
    """``q17: nDCG@10 0.8000 -> 0.2000 (-0.6000)``: the query and its values on the sorting metric."""
    a, b, d = (
        _number(v, decimals, sign=s).text
        for v, s in ((query.a[0], False), (query.b[0], False), (query.delta[0], True))
    )
    return f"{query.query_id}: {found.metric} {a} -> {b} ({d})"


def _query_block(found: Any, queries: Sequence[Any], decimals: int) -> Block:
    """A row per query: each metric's A, B and B minus A, the relevant documents gained and lost in the
    top k, and the unjudged documents of each top k."""
    a, b = _names(found)
    columns = [Column("query", "Query", "left")]
    for m in found.metrics:
        columns += [
            Column(f"{m} {a}", f"{m} {a}"),
            Column(f"{m} {b}", f"{m} {b}"),
            Column(f"Δ {m}", f"Δ {m}"),
        ]
    k = found.top
    columns += [
        Column(f"gained@{k}", f"Relevant gained in the top {k}"),
        Column(f"lost@{k}", f"Relevant lost from the top {k}"),
        Column(f"unjudged {a}", f"Unjudged in {a}'s top {k}"),
        Column(f"unjudged {b}", f"Unjudged in {b}'s top {k}"),
    ]
    rows = []
    for q in queries:
        cells = [Cell(q.query_id)]
        for va, vb, d in zip(q.a, q.b, q.delta, strict=True):
            cells += [_number(va, decimals), _number(vb, decimals), _number(d, decimals, sign=True)]
        cells += [
            Cell(str(len(q.gained)), len(q.gained)),
            Cell(str(len(q.lost)), len(q.lost)),
            Cell(str(q.unjudged_a), q.unjudged_a),
            Cell(str(q.unjudged_b), q.unjudged_b),
        ]
        rows.append(Row(tuple(cells)))
    return Block(tuple(columns), tuple(rows))


def _means_block(found: Any, decimals: int) -> Block:
    """A row per metric: both runs' means, B minus A, and on how many queries B is better, worse, equal."""
    a, b = _names(found)
    columns = (
        Column("metric", "Metric", "left"),
        Column(a, a),
        Column(b, b),
        Column("Δ", "Δ"),
        Column("better", f"Queries {b} is better on"),
        Column("worse", f"Queries {b} is worse on"),
        Column("equal", "Queries equal (or undefined)"),
    )
    rows = []
    for j, m in enumerate(found.metrics):
        key = str(m)
        mean_a, mean_b = found.means_a[key], found.means_b[key]
        deltas = [q.delta[j] for q in found.queries]
        up, down = (sum(d > 0 for d in deltas), sum(d < 0 for d in deltas))
        if m.better == "lower":
            up, down = down, up
        better, worse = (Cell(str(up), up), Cell(str(down), down))
        if m.better == "neither":  # a count: higher is not better
            better, worse = Cell("-"), Cell("-")
        equal = len(deltas) - up - down
        rows.append(
            Row(
                (
                    Cell(key),
                    _number(mean_a, decimals),
                    _number(mean_b, decimals),
                    _number(mean_b - mean_a, decimals, sign=True),
                    better,
                    worse,
                    Cell(str(equal), equal),
                )
            )
        )
    return Block(columns, tuple(rows))


def _rankings_block(found: Any, query: Any) -> Block:
    """The two top-k lists side by side: rank, then each run's docno, its label and its rank in the other."""
    a, b = _names(found)
    columns = (
        Column("rank", "Rank"),
        Column(a, a, "left"),
        Column("label", "Label", "left"),
        Column(f"in {b}", f"Rank in {b}", "left"),
        Column(b, b, "left"),
        Column("label ", "Label", "left"),
        Column(f"in {a}", f"Rank in {a}", "left"),
    )
    rows = []
    for i in range(max(len(query.top_a), len(query.top_b))):
        cells = [Cell(str(i + 1), i + 1)]
        for docs in (query.top_a, query.top_b):
            if i < len(docs):
                d = docs[i]
                cells += [Cell(d.docno), Cell(_label(d)), Cell(_other(d))]
            else:
                cells += [Cell(""), Cell(""), Cell("")]
        rows.append(Row(tuple(cells)))
    return Block(columns, tuple(rows))


def _title(found: Any) -> str:
    return f"{found.run_b} against {found.run_a}"


def _summary(found: Any) -> str:
    """What was compared, on what, sorted how."""
    level = found.options.relevance_level
    depth = found.options.depth
    cut = f", rankings cut at depth {depth}" if depth is not None else ""
    return (
        f"{found.run_b} ({found.source_b}) against {found.run_a} ({found.source_a}) on "
        f"{len(found.queries)} {'query' if len(found.queries) == 1 else 'queries'}: Δ is {found.run_b} minus {found.run_a}; "
        f"queries sorted by {found.metric} (largest losses, then largest gains); relevant: label >= {level}{cut}."
    )


def diff_sections(found: Any, *, queries: int | None = 10, decimals: int = 4) -> list[tuple[str, str, Block]]:
    """The diff as ``(heading, description, block)`` sections: the means, the ``queries`` largest
    losses and gains (``None``: every one), and each of those queries' rankings side by side."""
    check_decimals(decimals)
    losses, gains = found.losses(queries), found.gains(queries)
    m, a, b = found.metric, found.run_a, found.run_b
    # a loss is B below A where a higher value is better, above it where a lower one is (Fallout)
    worse, better = ("above", "below") if direction(m) < 0 else ("below", "above")
    sections = [("Means", "", _means_block(found, decimals))]
    for heading, chosen in (
        (f"Largest losses ({b} {worse} {a} on {m})", losses),
        (f"Largest gains ({b} {better} {a} on {m})", gains),
    ):
        if chosen:
            sections.append((heading, "", _query_block(found, chosen, decimals)))
    for q in losses + gains:
        sections.append((headline(found, q, decimals), why(found, q), _rankings_block(found, q)))
    return sections


def _notes(found: Any) -> list[str]:
    return [f"warning: {w}" for w in found.warnings]


def to_text(found: Any, *, queries: int | None = 10, decimals: int = 4) -> str:
    """Aligned text: a summary line, the warnings, then :func:`diff_sections`."""
    head = [f"irspec diff: {_summary(found)}"]
    if not (found.losses() or found.gains()):
        head.append(f"no query differs on {found.metric}")
    head += _notes(found)
    return (
        "\n".join(head) + "\n" + text.plain_tables(diff_sections(found, queries=queries, decimals=decimals))
    )


def to_markdown(found: Any, *, queries: int | None = 10, decimals: int = 4) -> str:
    """Markdown: the summary, the warnings as a list, then :func:`diff_sections` as GitHub tables."""
    head = [f"**irspec diff**: {markdown.markdown_escape(_summary(found))}"]
    if not (found.losses() or found.gains()):
        head += ["", markdown.markdown_escape(f"No query differs on {found.metric}.")]
    if found.warnings:
        head += [""] + [f"- warning: {markdown.markdown_escape(w)}" for w in found.warnings]
    return (
        "\n".join(head)
        + "\n"
        + markdown.plain_tables(diff_sections(found, queries=queries, decimals=decimals))
    )


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value


def _document(doc: Any) -> dict[str, Any]:
    return {
        "docno": doc.docno,
        "rank": doc.rank,
        "label": doc.label,
        "relevant": doc.relevant,
        "other_rank": doc.other,
    }


def _change(found: Any, query: Any) -> str:
    g = found.gain(query)
    return "loss" if g < 0 else "gain" if g > 0 else "none"


def to_json(found: Any, *, queries: int | None = None) -> str:
    """JSON: the runs, the metrics and their means, and the queries in :meth:`~irspec.experiment.diff.Diff.ordered`
    order (the ``queries`` largest losses and gains, or every query), each with its values, differences,
    change on the sorting metric, rankings (``other_rank`` null: not retrieved by the other run; ``label``
    null: unjudged) and the relevant documents gained and lost. An undefined value is null."""
    metrics = [str(m) for m in found.metrics]
    body = {
        "run_a": {"name": found.run_a, "source": found.source_a},
        "run_b": {"name": found.run_b, "source": found.source_b},
        "metrics": metrics,
        "sorted_by": metrics[0],
        "top": found.top,
        "options": found.options.as_dict(),
        "means": {
            key: {
                "a": _clean(found.means_a[key]),
                "b": _clean(found.means_b[key]),
                "delta": _clean(found.means_b[key] - found.means_a[key]),
            }
            for key in metrics
        },
        "counts": {
            "queries": len(found.queries),
            "losses": len(found.losses()),
            "gains": len(found.gains()),
            "unchanged": len(found.unchanged()),
        },
        "queries": [
            {
                "query_id": q.query_id,
                "change": _change(found, q),
                "values": {
                    key: {"a": _clean(a), "b": _clean(b), "delta": _clean(d)}
                    for key, a, b, d in zip(metrics, q.a, q.b, q.delta, strict=True)
                },
                "gained": list(q.gained),
                "lost": list(q.lost),
                "unjudged": {"a": q.unjudged_a, "b": q.unjudged_b},
                "top_a": [_document(d) for d in q.top_a],
                "top_b": [_document(d) for d in q.top_b],
            }
            for q in found.ordered(queries)
        ],
        "warnings": list(found.warnings),
    }
    return json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _moved(doc: Any, top: int) -> tuple[str, str]:
    """A document's mark against the other run: ``(css class, text)``; new to the other's top k, up or
    down the other ranking, or the same rank."""
    if doc.other is None:
        return "absent", NOT_RETRIEVED
    if doc.other > top:
        return "outside", f"{doc.other} (not in its top {top})"
    if doc.other == doc.rank:
        return "same", str(doc.other)
    # the arrow says where the document moved to here from the other run: up (a smaller rank) or down
    arrow = "▲" if doc.rank < doc.other else "▼"
    return "moved", f"{doc.other} {arrow}{abs(doc.other - doc.rank)}"


def _view(found: Any, queries: int | None, decimals: int) -> dict[str, Any]:
    """What the template shows: the query table's columns and rows (text and sort key per cell) and
    each query's rankings."""
    chosen = found.ordered(queries)
    block = _query_block(found, chosen, decimals)
    # each Δ column (after the query, a metric's A, B and Δ) with the sign of a change for the worse: a
    # fall where higher is better, a rise where lower is (Fallout); no colour where neither is
    worse = {3 + 3 * j: -direction(m) for j, m in enumerate(found.metrics)}
    rows = []
    for q, row in zip(chosen, block.rows, strict=True):
        cells = [
            (
                c.text,
                c.value if c.value is not None else c.text,
                "neg"
                if isinstance(c.value, float)
                and worse.get(i, 0)
                and c.value * worse[i] > 0
                and c.text.strip("+-0.")
                else "",
            )
            for i, c in enumerate(row.cells)
        ]
        rows.append({"query": q.query_id, "change": _change(found, q), "cells": cells})
    details = []
    for q in chosen:
        ranks = []
        for i in range(max(len(q.top_a), len(q.top_b))):
            pair: list[dict[str, Any] | None] = []
            for docs in (q.top_a, q.top_b):
                if i < len(docs):
                    d = docs[i]
                    css, mark = _moved(d, found.top)
                    kind = "unjudged" if not d.judged else "rel" if d.relevant else "nonrel"
                    pair.append(
                        {"docno": d.docno, "label": _label(d), "kind": kind, "css": css, "mark": mark}
                    )
                else:
                    pair.append(None)
            ranks.append((i + 1, pair))
        details.append(
            {
                "query": q.query_id,
                "headline": headline(found, q, decimals),
                "why": why(found, q),
                "ranks": ranks,
            }
        )
    a, b = _names(found)
    return {
        "columns": [(c.title, c.align) for c in block.columns],
        "rows": rows,
        "details": details,
        "means": _means_block(found, decimals),
        "run_a": a,
        "run_b": b,
        "summary": _summary(found),
        "warnings": list(found.warnings),
        "level": found.options.relevance_level,
        "top": found.top,
    }


def fragment(found: Any, *, queries: int | None = None, decimals: int = 4) -> str:
    """The page's body as a fragment with its own scoped style and script: what a notebook shows."""
    check_decimals(decimals)
    return template("diff.html.j2").render(view=_view(found, queries, decimals), page=False, title="")


def to_html(found: Any, *, queries: int | None = None, decimals: int = 4) -> str:
    """A self-contained HTML page (inline style and script, nothing fetched): :func:`fragment` under a title."""
    check_decimals(decimals)
    title = f"irspec diff: {_title(found)}"
    return template("diff.html.j2").render(view=_view(found, queries, decimals), page=True, title=title)
