"""Aligned text tables for a terminal: results (with significance marks and a legend when runs were
compared) and one row per comparison."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from irspec.progress import terminal_columns
from irspec.report.marks import WON_TIED_LOST, letters_text
from irspec.report.model import (
    BRIEF_COLUMNS,
    Block,
    Cell,
    Table,
    averaged_legend,
    build_comparisons,
    build_results,
    input_blocks,
    interval_legend,
)

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = [
    "comparison_legend",
    "comparison_rows",
    "comparisons_table",
    "input_tables",
    "marked_table",
    "plain_tables",
    "render",
    "terminal_width",
    "to_table",
]


def _align(block: Block, rows: list[list[str]]) -> list[str]:
    """The header (the columns' keys), a rule and ``rows``, each column as wide as its widest cell."""
    return _aligned([c.key for c in block.columns], [c.align == "left" for c in block.columns], rows)


def _aligned(header: list[str], left: list[bool], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(cells, widths, left, strict=True)
        )

    return [s.rstrip() for s in [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]]


def _fitted(block: Block, rows: list[list[str]], labels: int, width: int) -> list[str]:
    """A results block that fits ``width`` columns of a terminal, when its row per run is wider: a row
    per metric and a column per run (when it has no per-query rows), and in either layout the value
    columns split into groups that fit, each group a table of its own with the label columns."""
    header = [c.key for c in block.columns]
    left = [c.align == "left" for c in block.columns]
    if labels == 1:  # means only: transposed, a metric per row
        header, rows = (
            ["metric", *(r[0] for r in rows)],
            [[h, *(r[j] for r in rows)] for j, h in enumerate(header) if j],
        )
        left = [True] + [False] * (len(header) - 1)
    cells = [header, *rows]
    sizes = [max(len(r[i]) for r in cells) for i in range(len(header))]
    fixed = sum(sizes[:labels]) + 2 * (labels - 1)
    groups: list[list[int]] = [[]]
    used = fixed
    for i in range(labels, len(header)):
        if groups[-1] and used + 2 + sizes[i] > width:
            groups.append([])
            used = fixed
        groups[-1].append(i)
        used += 2 + sizes[i]
    out: list[str] = []
    for group in groups:
        keep = [*range(labels), *group]
        if out:
            out.append("")
        out += _aligned(
            [header[i] for i in keep], [left[i] for i in keep], [[r[i] for i in keep] for r in rows]
        )
    return out


def terminal_width(stream: Any) -> int | None:
    """The columns of the terminal ``stream`` writes to (``COLUMNS`` if set, else the terminal's size),
    or ``None`` when it is no terminal: a file or a pipe gets every table as it is, byte for byte."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return None
    return terminal_columns()


def _label(text: str, letter: str, baseline: bool) -> str:
    return f"({letter}) {text}" if letter else text + " (baseline)" if baseline else text


def render(table: Table, *, arrows: tuple[str, str] = ("▲", "▼"), width: int | None = None) -> str:
    """A table as aligned text. Marks follow the values (``arrows`` for better/worse than the
    baseline, else letters), padded so that the values stay aligned, and a legend explains them.

    ``width`` (a terminal's columns; ``None``: no limit) fits a results table wider than it: a row per
    metric and a column per run, in groups of columns that fit (:func:`_fitted`)."""
    up, down = arrows

    def shown(marks: str) -> str:
        return (up if marks == "better" else down) if table.baseline is not None and marks else marks

    marks_width = max(
        (len(shown(c.marks)) for b in table.blocks for r in b.rows for c in r.cells if c.marks), default=1
    )
    lines: list[str] = []
    for block in table.blocks:
        labels = sum(c.align == "left" for c in block.columns) if table.kind == "results" else 0
        rows = []
        for row in block.rows:
            cells = [c.text for c in row.cells]
            if labels:
                cells[0] = _label(cells[0], row.letter, row.baseline)
                if table.marked or table.interval:
                    cells[labels:] = [
                        _value(c, shown(c.marks).ljust(marks_width) if table.marked else "")
                        for c in row.cells[labels:]
                    ]
            rows.append(cells)
        if lines:
            lines.append("")
        aligned = _align(block, rows)
        if width is not None and labels and max(map(len, aligned)) > width:
            aligned = _fitted(block, rows, labels, width)
        lines.extend(aligned)
    legends = [
        text for text in (_legend(table, up, down), interval_legend(table), averaged_legend(table)) if text
    ]
    if legends or table.notes:  # a table of no comparisons has no legend, and its notes say why
        lines += ["", *legends, *(f"note: {n}" for n in table.notes)]
    return "\n".join(lines) + "\n"


def _value(cell: Cell, marks: str) -> str:
    """A value, its marks (padded, so that the values of a column stay aligned) and its interval."""
    return " ".join(part for part in (cell.text, marks, cell.interval) if part)


def _legend(table: Table, up: str, down: str) -> str:
    if table.method is None:
        return ""
    if table.kind == "comparisons":
        return comparison_legend(table)
    if table.baseline is not None:
        what = f"{up}/{down}: significantly better/worse than {table.baseline}"
    else:
        what = letters_text(dict(table.letters), table.baselines)
    return f"{what} ({table.method.text()})."


def comparison_legend(table: Table) -> str:
    """The sentence under a comparisons table: what its columns mean and how it was tested."""
    assert table.method is not None
    return (
        f"diff = mean a - mean b with its {table.confidence:.0%} CI ({table.ci_method}); d = paired Cohen's d; "
        f"{WON_TIED_LOST}; * = adjusted p <= {table.method.alpha:g} ({table.method.text()})."
    )


def to_table(
    results: Sequence[Evaluated],
    *,
    per_query: bool = False,
    decimals: int = 4,
    intervals: str | None = None,
    width: int | None = None,
) -> str:
    """An aligned text table: runs as rows (with per-query rows under each run), metrics as columns;
    ``intervals`` (``"t"`` or ``"bootstrap"``) puts the 95% confidence interval after each mean;
    ``width`` (a terminal's columns) fits a wider table to it, as :func:`render` does.

    Results with different metrics (a plan's runs and its log) get one table each, a blank line apart;
    the tables an input offers beside its metrics (a log's top queries) follow (:func:`input_tables`).
    """
    if not results:
        return ""
    table = render(
        build_results(results, decimals=decimals, per_query=per_query, intervals=intervals), width=width
    )
    return table + input_tables(results, decimals=decimals)


def input_tables(results: Sequence[Evaluated], *, decimals: int = 4) -> str:
    """The results' input tables (:func:`~irspec.report.model.input_blocks`) as aligned text, each under
    its heading and after a blank line; ``""`` when there are none."""
    return _sections(input_blocks(results, decimals=decimals), described=False)


def plain_tables(sections: Sequence[tuple[str, str, Block]], *, notes: Sequence[str] = ()) -> str:
    """Tables of the model as ``(heading, description, block)`` (the power tables,
    :func:`irspec.report.power.power_sections`) as aligned text: each under its heading and after a
    blank line, its description under it, then ``notes``; ``""`` when there are none."""
    text = _sections(sections, described=True)
    return text + "".join(f"note: {n}\n" for n in notes) if text else ""


def _sections(sections: Sequence[tuple[str, str, Block]], *, described: bool) -> str:
    out = []
    for heading, description, block in sections:
        out += ["", heading, *_align(block, [[c.text for c in r.cells] for r in block.rows])]
        if described and description:
            out.append(description)
    return "\n".join(out) + "\n" if out else ""


def marked_table(
    results: Sequence[Evaluated],
    comparisons: Sequence[Any],
    compare: Any,
    *,
    notes: Sequence[str] = (),
    per_query: bool = False,
    arrows: tuple[str, str] = ("▲", "▼"),
    decimals: int = 4,
    intervals: str | None = None,
    width: int | None = None,
) -> str:
    """The text table with significance marks after the values, and a legend; ``intervals`` and
    ``width`` as in :func:`to_table`.

    With a baseline, ``arrows`` (▲/▼) after a run's value: significantly better/worse than the baseline.
    Without one, each run gets a letter and a value is followed by the letters of the runs it is
    significantly better than. The tables the results carry follow, as after :func:`to_table`'s.
    """
    table = build_results(
        results,
        comparisons,
        compare,
        decimals=decimals,
        per_query=per_query,
        notes=notes,
        intervals=intervals,
    )
    return render(table, arrows=arrows, width=width) + input_tables(results, decimals=decimals)


def comparison_rows(comparisons: Sequence[Any], *, decimals: int = 4) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the comparison table: difference, interval, effect size, W/T/L, p, adjusted p."""
    (block,) = build_comparisons((), comparisons, None, decimals=decimals).blocks
    return [c.key for c in block.columns], [[c.text for c in r.cells] for r in block.rows]


def comparisons_table(
    results: Sequence[Evaluated],
    comparisons: Sequence[Any],
    compare: Any,
    *,
    notes: Sequence[str] = (),
    decimals: int = 4,
) -> str:
    """One aligned row per comparison: the difference, its interval, effect size, W/T/L, p and adjusted p."""
    return render(
        build_comparisons(
            results, comparisons, compare, decimals=decimals, columns=BRIEF_COLUMNS, notes=notes
        )
    )
