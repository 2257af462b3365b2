"""GitHub-flavoured Markdown tables: the results with the content and marks of the LaTeX table and a
legend, or one row per comparison."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from irspec.report.model import (
    Block,
    Row,
    Table,
    averaged_legend,
    build_table,
    input_blocks,
    interval_legend,
    marks_legend,
)
from irspec.report.text import comparison_legend

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = ["MARKS", "markdown_escape", "plain_tables", "render", "to_markdown"]

MARKS = {"better": "†", "worse": "↓"}
"""The marks of a value significantly better or worse than the baseline's (Markdown and HTML)."""

_ALIGN = {"left": ":---", "right": "---:", "center": ":---:"}


def markdown_escape(text: str) -> str:
    """``text`` safe in a GitHub-flavoured Markdown table cell: no emphasis, links, HTML or cell breaks."""
    entities = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
    out = []
    for ch in " ".join(str(text).splitlines()):
        if ch in entities:
            out.append(entities[ch])
        elif ch in "\\`*_[]|#~":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _label(row: Row) -> str:
    name = markdown_escape(row.cells[0].text)
    return name + " (baseline)" if row.baseline else f"({row.letter}) {name}" if row.letter else name


def _results(table: Table) -> list[str]:
    lines: list[str] = []
    for block in table.blocks:
        if lines:
            lines.append("")
        lines.append(
            f"| {block.columns[0].title} | "
            + " | ".join(markdown_escape(c.title) for c in block.columns[1:])
            + " |"
        )
        lines.append("|" + "|".join(_ALIGN[c.align] for c in block.columns) + "|")
        for row in block.rows:
            cells = [_label(row)]
            for cell in row.cells[1:]:
                text = f"**{cell.text}**" if cell.bold else cell.text
                if cell.marks:
                    text += f"<sup>{MARKS[cell.marks] if table.baseline is not None else cell.marks}</sup>"
                if cell.interval:
                    text += f" {cell.interval}"
                cells.append(text)
            lines.append("| " + " | ".join(cells) + " |")
    legend = [f"Mean over {table.queries}."]
    if table.any_best:
        legend.append("The best value of each metric is in **bold**.")
    if table.marked:
        legend.append(marks_legend(table, markdown_escape, "<sup>†</sup>/<sup>↓</sup>", "α = {:g}"))
    if table.interval:
        legend.append(markdown_escape(interval_legend(table)))
    if table.averaged:
        legend.append(markdown_escape(averaged_legend(table)))
    return [*lines, "", " ".join(legend)]


def _plain(block: Block) -> list[str]:
    """A block as a Markdown table, headed by its columns' keys, each cell's text as it is."""
    lines = ["| " + " | ".join(markdown_escape(c.key) for c in block.columns) + " |"]
    lines.append("|" + "|".join(_ALIGN[c.align] for c in block.columns) + "|")
    for row in block.rows:
        # names (and the sig mark) escaped; the numbers need no escaping
        cells = [
            markdown_escape(c.text) if col.align != "right" else c.text
            for col, c in zip(block.columns, row.cells, strict=True)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _comparisons(table: Table) -> list[str]:
    (block,) = table.blocks
    lines = _plain(block)
    if table.method is None:
        return lines
    legend = markdown_escape(comparison_legend(table)).replace("&lt;=", "≤")
    if table.averaged:
        legend += " " + markdown_escape(averaged_legend(table))
    return [*lines, "", legend]


def render(table: Table) -> str:
    """A table as Markdown, its legend and notes after it."""
    lines = _results(table) if table.kind == "results" else _comparisons(table)
    if table.notes:  # a table of no comparisons has no legend, and its notes say why
        lines += [""] + [f"- note: {markdown_escape(n)}" for n in table.notes]
    return "\n".join(lines) + "\n"


def to_markdown(
    results: Sequence[Evaluated],
    *,
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    notes: Sequence[str] = (),
    decimals: int = 4,
    content: str = "results",
    intervals: str | None = None,
) -> str:
    """A GitHub-flavoured Markdown table with the content and marks of :func:`~irspec.report.to_latex`,
    and a legend.

    The best value of each metric is in bold; ``†``/``↓`` after a value: significantly better/worse than
    the baseline; without a baseline, superscript letters name the runs a value is significantly
    better than. ``intervals`` (``"t"`` or ``"bootstrap"``) puts the 95% confidence interval after each
    mean. ``content="comparisons"`` gives one row per comparison instead.
    """
    table = build_table(
        results,
        comparisons=comparisons,
        compare=compare,
        notes=notes,
        decimals=decimals,
        content=content,
        intervals=intervals,
    )
    if content != "results":
        return render(table)
    return render(table) + input_tables(results, decimals=decimals)


def input_tables(results: Sequence[Evaluated], *, decimals: int = 4) -> str:
    """The results' input tables (a log's top queries, :func:`~irspec.report.model.input_blocks`) as
    Markdown, each under a heading and its description; ``""`` when there are none."""
    return plain_tables(input_blocks(results, decimals=decimals))


def plain_tables(sections: Sequence[tuple[str, str, Block]], *, notes: Sequence[str] = ()) -> str:
    """Tables of the model as ``(heading, description, block)`` (an input's tables, the power tables)
    as Markdown, each under a heading and its description, then ``notes``; ``""`` when there are none."""
    lines: list[str] = []
    for heading, description, block in sections:
        lines += ["", f"**{markdown_escape(heading)}**", "", *_plain(block)]
        if description:
            lines += ["", markdown_escape(description)]
    if lines and notes:
        lines += [""] + [f"- note: {markdown_escape(n)}" for n in notes]
    return "\n".join(lines) + "\n" if lines else ""
