"""A reproduction's measures (:mod:`irspec.experiment.reproduce`) in every format: text, Markdown,
LaTeX, JSON and a self-contained HTML page with its figures.

The reproduction is read by its attributes (``kind``, ``metrics``, ``baseline``, ``advanced``, ``er``,
``delta_ri``, ...), as the other steps' objects are: the step computes, this module presents. One list
of sections (:func:`sections`: a heading, a header row and rows of text) feeds the text, Markdown,
LaTeX and HTML renderers, so that they show the same numbers. The warnings are in the JSON and the
HTML page; the command line prints them on standard error beside the text, Markdown and LaTeX.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from irspec.data.frames import make_frame
from irspec.report import plots
from irspec.report.latex import latex_escape, one_line
from irspec.report.markdown import markdown_escape
from irspec.report.model import Block, Cell, Column, Row
from irspec.report.svg import inline

__all__ = ["READINGS", "render", "reproduce_sections", "reproduction_record", "sections", "topic_frame"]

FORMATS = ("text", "markdown", "latex", "json", "html")

READINGS = (
    ("KTU", "Kendall's tau union of the document orderings per topic, averaged; 1: the same ordering"),
    ("RBO", "rank-biased overlap of the rankings per topic, averaged; 1: the same documents on top"),
    ("RMSE", "root mean square error of the per-topic scores; 0: the same scores"),
    ("nRMSE", "RMSE divided by its largest value for the original's scores; 0: the same scores"),
    ("p", "t-test of the original against the reproduced scores; large: no significant difference"),
    ("ER", "effect ratio: the reproduced mean improvement over the original's; 1: the same improvement"),
    ("ΔRI", "delta relative improvement, original minus reproduced; 0: the same relative improvement"),
)
"""Each measure and the reading its authors give (Breuer et al., SIGIR 2020)."""

Section = tuple[str, list[str], list[list[str]]]


def _number(value: float | None, decimals: int) -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{decimals}f}"


def _title(rep: Any) -> str:
    where = "the same qrels" if rep.kind == "reproducibility" else "another collection's qrels"
    return f"{rep.kind.capitalize()} on {where}"


def _pairs_line(rep: Any, name: Callable[[str], str] = str) -> list[str]:
    """Each pair as a line, its run names as ``name`` gives them (escaped for the format)."""
    return [f"{p.role}: {name(p.original)} reproduced by {name(p.reproduced)}" for p in rep.pairs]


def _topics(b: Any, a: Any) -> str:
    """How many topics each pair's document order compares: those both its runs rank, which may
    differ between the pairs (a reproduction without some topics)."""
    if len(b.query_ids) == len(a.query_ids):
        return f"{len(b.query_ids)} topics"
    return f"baseline {len(b.query_ids)} topics, advanced {len(a.query_ids)}"


def sections(rep: Any, decimals: int = 4) -> list[Section]:
    """The report's tables: document order (same qrels only), per-topic scores, overall effects."""
    out: list[Section] = []
    b, a = rep.baseline, rep.advanced
    if rep.kind == "reproducibility":
        out.append(
            (
                f"Document order (RBO p={rep.rbo_p:g}, depth {rep.depth}; KTU cut at {rep.depth}; "
                f"{_topics(b, a)})",
                ["measure", "baseline", "advanced"],
                [
                    ["KTU", _number(b.ktu_mean, decimals), _number(a.ktu_mean, decimals)],
                    ["RBO", _number(b.rbo_mean, decimals), _number(a.rbo_mean, decimals)],
                ],
            )
        )
        out.append(
            (
                "Per-topic scores (paired t-test)",
                ["metric", "RMSE B", "RMSE A", "nRMSE B", "nRMSE A", "p B", "p A"],
                [
                    [
                        m,
                        _number(b.rmse[m], decimals),
                        _number(a.rmse[m], decimals),
                        _number(b.nrmse[m], decimals),
                        _number(a.nrmse[m], decimals),
                        _number(b.p_value[m], decimals),
                        _number(a.p_value[m], decimals),
                    ]
                    for m in rep.metrics
                ],
            )
        )
    else:
        out.append(
            (
                "Scores (unpaired t-test)",
                ["metric", "p B", "p A"],
                [[m, _number(b.p_value[m], decimals), _number(a.p_value[m], decimals)] for m in rep.metrics],
            )
        )
    out.append(
        (
            "Overall effects",
            ["metric", "ER", "ΔRI"],
            [[m, _number(rep.er[m], decimals), _number(rep.delta_ri[m], decimals)] for m in rep.metrics],
        )
    )
    return out


def _shown_readings(rep: Any) -> list[tuple[str, str]]:
    if rep.kind == "reproducibility":
        return list(READINGS)
    return [r for r in READINGS if r[0] in ("p", "ER", "ΔRI")]


def _text(rep: Any, decimals: int) -> str:
    lines = [_title(rep), *(f"  {line}" for line in _pairs_line(rep, one_line)), ""]
    for heading, header, rows in sections(rep, decimals):
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines.append(heading)
        for row in [header, *rows]:
            cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
            lines.append("  ".join(cells).rstrip())
        lines.append("")
    lines.append("B: baseline, A: advanced.")
    lines.extend(f"{name}: {text}." for name, text in _shown_readings(rep))
    return "\n".join(lines) + "\n"


def _markdown(rep: Any, decimals: int) -> str:
    lines = [f"## {_title(rep)}", "", *(f"- {line}" for line in _pairs_line(rep, markdown_escape)), ""]
    for heading, header, rows in sections(rep, decimals):
        lines += [f"### {heading}", "", "| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
    lines.append("B: baseline, A: advanced. " + " ".join(f"**{n}**: {t}." for n, t in _shown_readings(rep)))
    return "\n".join(lines) + "\n"


def _latex(rep: Any, decimals: int) -> str:
    out = [f"% {_title(rep)}: " + "; ".join(_pairs_line(rep, one_line))]
    for heading, header, rows in sections(rep, decimals):
        cells = [[latex_escape(c.replace("ΔRI", "DRI")) for c in r] for r in [header, *rows]]
        cells[0] = [c.replace("DRI", r"$\Delta$RI") for c in cells[0]]
        out += [
            r"\begin{table}[t]",
            r"\centering",
            f"\\caption{{{latex_escape(heading)}}}",
            r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
            r"\toprule",
            " & ".join(cells[0]) + r" \\",
            r"\midrule",
            *(" & ".join(r) + r" \\" for r in cells[1:]),
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    return "\n".join(out)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def reproduction_record(rep: Any) -> dict[str, Any]:
    """The reproduction as plain data: every measure, per-topic KTU and RBO, the readings, the
    warnings; a value that is not finite (an effect ratio over no improvement) is ``None``."""

    def pair(p: Any) -> dict[str, Any]:
        record: dict[str, Any] = {"original": p.original, "reproduced": p.reproduced}
        if rep.kind == "reproducibility":
            record["KTU"] = _clean(p.ktu_mean)
            record["RBO"] = _clean(p.rbo_mean)
            record["per_topic"] = {
                q: {"KTU": _clean(float(k)), "RBO": _clean(float(r))}
                for q, k, r in zip(p.query_ids, p.ktu, p.rbo, strict=True)
            }
            record["RMSE"] = {m: _clean(v) for m, v in p.rmse.items()}
            record["nRMSE"] = {m: _clean(v) for m, v in p.nrmse.items()}
        record["p_value"] = {m: _clean(v) for m, v in p.p_value.items()}
        return record

    return {
        "kind": rep.kind,
        "test": "paired t-test" if rep.kind == "reproducibility" else "unpaired t-test",
        "metrics": list(rep.metrics),
        "rbo": {"p": rep.rbo_p, "depth": rep.depth},
        "baseline": pair(rep.baseline),
        "advanced": pair(rep.advanced),
        "ER": {m: _clean(v) for m, v in rep.er.items()},
        "delta_RI": {m: _clean(v) for m, v in rep.delta_ri.items()},
        "readings": dict(_shown_readings(rep)),
        "warnings": list(rep.warnings),
    }


def _html(rep: Any, decimals: int) -> str:
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(_title(rep))}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
        "table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{padding:.2rem .6rem;"
        "border-bottom:1px solid #ddd}td{text-align:right;font-variant-numeric:tabular-nums}"
        "td:first-child,th:first-child,td.text{text-align:left}.warning{color:#9a6700}figure{margin:1rem 0}"
        "figure svg{display:block;max-width:100%;height:auto}"
        "</style></head><body>",
        f"<h1>{esc(_title(rep))}</h1>",
        "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in _pairs_line(rep)) + "</ul>",
    ]
    parts += [f'<p class="warning">warning: {esc(w)}</p>' for w in rep.warnings]
    for heading, header, rows in sections(rep, decimals):
        parts.append(f"<h2>{esc(heading)}</h2><table><thead><tr>")
        parts.append("".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead><tbody>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows]
        parts.append("</tbody></table>")
    parts.append(
        "<h2>Readings</h2><table><tbody>"
        + "".join(
            f'<tr><th>{esc(n)}</th><td class="text">{esc(t)}</td></tr>' for n, t in _shown_readings(rep)
        )
        + "</tbody></table>"
    )
    for plot in plots.reproduction_figures(rep):
        # inline, as the report shows its figures: their text is the page's, a value shows on hover
        parts.append(
            f'<figure id="plot-{esc(plot.name)}">{inline(plot.svg or b"")}'
            f"<figcaption>{esc(plot.description)}</figcaption></figure>"
        )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def render(rep: Any, fmt: str = "text", decimals: int = 4) -> str:
    """The reproduction in ``fmt`` (one of :data:`FORMATS`), values to ``decimals`` places."""
    if fmt == "json":
        return json.dumps(reproduction_record(rep), indent=2, ensure_ascii=False) + "\n"
    renderers = {"text": _text, "markdown": _markdown, "latex": _latex, "html": _html}
    if fmt not in renderers:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return renderers[fmt](rep, decimals)


def reproduce_sections(rep: Any, *, decimals: int = 4) -> list[tuple[str, str, Block]]:
    """The reproduction's tables as ``(heading, description, block)``, as a plan's HTML page shows a
    power analysis: the pairs and the readings in the first table's description."""
    lead = "; ".join(_pairs_line(rep)) + ". B: baseline, A: advanced. "
    readings = " ".join(f"{n}: {t}." for n, t in _shown_readings(rep))
    out = []
    for i, (heading, header, rows) in enumerate(sections(rep, decimals)):
        columns = tuple(Column(h, h, "left" if j == 0 else "right") for j, h in enumerate(header))
        block = Block(columns, tuple(Row(tuple(Cell(c) for c in r)) for r in rows))
        out.append((heading, (f"{_title(rep)}: {lead}{readings}" if i == 0 else ""), block))
    return out


def topic_frame(rep: Any, backend: str = "polars") -> Any:
    """Per-topic KTU and RBO of both pairs: columns ``pair, query_id, KTU, RBO`` (no rows on another
    collection)."""
    rows: dict[str, list[Any]] = {"pair": [], "query_id": [], "KTU": [], "RBO": []}
    for p in rep.pairs:
        rows["pair"] += [p.role] * len(p.query_ids)
        rows["query_id"] += list(p.query_ids)
        rows["KTU"] += list(np.asarray(p.ktu, dtype=float))
        rows["RBO"] += list(np.asarray(p.rbo, dtype=float))
    types = {"pair": "str", "query_id": "str", "KTU": "float", "RBO": "float"}
    return make_frame(rows, types, backend)
