r"""LaTeX tables (booktabs): the results with the best value of each metric in bold and significance
marks as superscripts, or one row per comparison; the caption states the test, correction, alpha and
number of queries. The preamble needs ``\usepackage{booktabs}``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from irspec.report.marks import WON_TIED_LOST
from irspec.report.model import (
    Block,
    Cell,
    Row,
    Table,
    averaged_legend,
    build_table,
    input_blocks,
    interval_legend,
    marks_legend,
)

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = ["input_tables", "latex_escape", "plain_tables", "render", "to_latex"]

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # not special, but the default OT1 font encoding prints these as other glyphs
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped, for a table cell or a caption.

    ``@`` needs no escaping outside macro names; a line break becomes a space, and ``--`` stays two
    hyphens (not an en dash).
    """
    escaped = "".join(_LATEX_SPECIALS.get(ch, ch) for ch in " ".join(str(text).splitlines()))
    return escaped.replace("--", "-{}-").replace("--", "-{}-")


def one_line(text: str) -> str:
    """``text`` on one line, its line breaks made spaces: for a ``%`` comment, which ends at the
    line's end, so a name holding a line break would go on as LaTeX (``\\input{...}`` read a file), and
    for a heading of a text report."""
    return " ".join(str(text).splitlines())


def _number(text: str) -> str:
    """A number's text with a real minus sign; an undefined value (``-``) as an en dash."""
    return "$-$" + text[1:] if text.startswith("-") and text != "-" else ("--" if text == "-" else text)


def _p(cell: Cell) -> str:
    """A p-value, ``1.2e-05`` as ``$1.2 \\times 10^{-5}$``."""
    if "e" not in cell.text:
        return cell.text
    mantissa, exponent = cell.text.split("e")
    return f"${mantissa} \\times 10^{{{int(exponent)}}}$"


_MARKS = {"better": r"$\dagger$", "worse": r"$\downarrow$"}
_ALIGN = {"left": "l", "right": "r", "center": "c"}
_HEADER = "% irspec {} table; the preamble needs \\usepackage{{booktabs}}"


def _label(row: Row) -> str:
    """A run's row label: ``bm25 (baseline)``, ``(a) bm25`` when runs are lettered, or the name."""
    name = latex_escape(row.cells[0].text)
    return name + " (baseline)" if row.baseline else f"({row.letter}) {name}" if row.letter else name


def _results(table: Table) -> list[str]:
    out = [_HEADER.format("results"), r"\begin{table}[tbp]", r"  \centering"]
    caption = [f"Mean over {table.queries}."]
    if table.any_best:
        caption.append("The best value of each metric is in bold.")
    if table.marked:
        dagger_arrow = r"\textsuperscript{$\dagger$}/\textsuperscript{$\downarrow$}"
        caption.append(marks_legend(table, latex_escape, dagger_arrow, r"$\alpha = {:g}$"))
    if table.interval:
        caption.append(latex_escape(interval_legend(table)))
    if table.averaged:
        caption.append(latex_escape(averaged_legend(table)))
    out.append(r"  \caption{" + " ".join(caption) + "}")
    for n, block in enumerate(table.blocks):
        # a value and its marks in two columns (r@{}l), so that the numbers align
        marked = block.marked
        metrics = block.columns[1:]
        if n:
            out.append(r"  \medskip")
        out.append(r"  \begin{tabular}{l" + ("r@{}l" if marked else "r") * len(metrics) + "}")
        out.append(r"    \toprule")
        heads = [latex_escape(c.title) for c in metrics]
        if marked:
            heads = [r"\multicolumn{2}{c}{" + h + "}" for h in heads]
        out.append(f"    {block.columns[0].title} & " + " & ".join(heads) + r" \\")
        out.append(r"    \midrule")
        for row in block.rows:
            cells = [_label(row)]
            for cell in row.cells[1:]:
                text = _number(cell.text)
                if cell.bold:
                    text = r"\textbf{" + text + "}"
                if cell.interval:
                    text += r" {\scriptsize " + cell.interval.replace("-", "$-$") + "}"
                if marked:
                    mark = _MARKS.get(cell.marks, cell.marks) if table.baseline is not None else cell.marks
                    text += " &" + (r" \textsuperscript{" + mark + "}" if mark else "")
                cells.append(text)
            out.append("    " + " & ".join(cells) + r" \\")
        out.append(r"    \bottomrule")
        out.append(r"  \end{tabular}")
    return out


_COMPARISON_HEADS = {
    "metric": "Metric", "a": "Run", "b": "vs.", "mean a": "Mean", "mean b": "Mean vs.", "diff": r"$\Delta$",
    "CI": "CI", "rel": "Rel.", "d": "$d$", "W/T/L": "W/T/L", "n": "$n$", "p": "$p$",
    "p adj": r"$p_{\mathrm{adj}}$", "sig": "",
}  # fmt: skip

_COMPARISON_CELLS = {
    "metric": lambda c: latex_escape(c.text),
    "a": lambda c: latex_escape(c.text),
    "b": lambda c: latex_escape(c.text),
    "CI": lambda c: c.text.replace("-", "$-$") if c.text != "-" else "--",
    "rel": lambda c: _number(c.text).replace("%", r"\%"),
    "W/T/L": lambda c: c.text,
    "n": lambda c: c.text,
    "p": _p,
    "p adj": _p,
    "sig": lambda c: "$*$" if c.text else "",
}


def _comparisons(table: Table) -> list[str]:
    (block,) = table.blocks
    out = [_HEADER.format("comparisons"), r"\begin{table}[tbp]", r"  \centering"]
    if table.method is not None:
        test, correction, alpha, queries = table.method
        out.append(
            "  \\caption{"
            + f"Pairwise comparisons: $\\Delta$ = mean $-$ mean vs.\\ with its {table.confidence:.0%} CI "
            f"({latex_escape(table.ci_method)}); $d$ = paired Cohen's $d$; {latex_escape(WON_TIED_LOST)}; "
            f"$*$: adjusted $p \\le {alpha:g}$ ({latex_escape(test)}; {latex_escape(correction)}; {queries}).".replace(
                "%", r"\%"
            )
            + (" " + latex_escape(averaged_legend(table)) if table.averaged else "")
            + "}"
        )
    out.append(r"  \begin{tabular}{" + "".join(_ALIGN[c.align] for c in block.columns) + "}")
    out.append(r"    \toprule")
    out.append("    " + " & ".join(_COMPARISON_HEADS[c.key] for c in block.columns) + r" \\")
    out.append(r"    \midrule")
    for row in block.rows:
        cells = [
            _COMPARISON_CELLS.get(col.key, lambda c: _number(c.text))(cell)
            for col, cell in zip(block.columns, row.cells, strict=True)
        ]
        out.append("    " + " & ".join(cells) + r" \\")
    out.append(r"    \bottomrule")
    out.append(r"  \end{tabular}")
    return out


def render(table: Table) -> str:
    """A table as a LaTeX ``table`` environment, its notes as comments after it."""
    out = _results(table) if table.kind == "results" else _comparisons(table)
    out.append(r"\end{table}")
    out.extend(f"% note: {' '.join(n.splitlines())}" for n in table.notes)
    return "\n".join(out) + "\n"


def to_latex(
    results: Sequence[Evaluated],
    *,
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    notes: Sequence[str] = (),
    decimals: int = 4,
    content: str = "results",
    intervals: str | None = None,
) -> str:
    r"""A LaTeX ``table`` (booktabs): runs as rows, metrics as columns, the best value of each column in
    bold, significance marks as superscripts, and a caption stating the test, correction, alpha and
    number of queries.

    With a baseline, a dagger marks a run significantly better than the baseline and a down arrow one
    significantly worse; without one, each run has a letter and a value carries the letters of the runs
    it is significantly better than, as IR papers do. The marks have a column of their own (``r@{}l``)
    so that the numbers of a column stay aligned. The preamble needs ``\usepackage{booktabs}``.
    ``intervals`` (``"t"`` or ``"bootstrap"``) puts the 95% confidence interval of each mean beside it,
    in a smaller size. ``content="comparisons"`` gives one row per comparison instead.
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
    return render(table) + (input_tables(results, decimals=decimals) if content == "results" else "")


def input_tables(results: Sequence[Evaluated], *, decimals: int = 4) -> str:
    """The tables the results carry beside their metrics (:func:`~irspec.report.model.input_blocks`: a
    log's top queries, query groups, a standardisation's settings) as LaTeX ``table`` environments after
    the results (:func:`plain_tables`); ``""`` when there are none."""
    blocks = input_blocks(results, decimals=decimals)
    return "\n" + plain_tables(blocks) if blocks else ""


_GREEK = {"Δ": r"\Delta", "τ": r"\tau", "κ": r"\kappa", "α": r"\alpha", "β": r"\beta", "σ": r"\sigma"}


def plain_tables(sections: Sequence[tuple[str, str, Block]], *, notes: Sequence[str] = ()) -> str:
    r"""Tables of the model as ``(heading, description, block)`` (the power tables) as LaTeX ``table``
    environments (booktabs), the heading and description as the caption, names escaped and numbers
    with a real minus sign; ``notes`` as comments after them. ``""`` when there are none."""

    def text(t: str) -> str:
        out = latex_escape(t)  # Greek letters pass through it, then become math: pdflatex's fonts lack them
        for letter, command in _GREEK.items():
            out = out.replace(letter, f"${command}$")
        return out

    out: list[str] = []
    for heading, description, block in sections:
        caption = text(heading + (f". {description}" if description else ""))
        out += [
            _HEADER.format(latex_escape(heading)),
            r"\begin{table}[tbp]",
            r"  \centering",
            "  \\caption{" + caption + "}",
        ]
        out.append(r"  \begin{tabular}{" + "".join(_ALIGN[c.align] for c in block.columns) + "}")
        out += [
            r"    \toprule",
            "    " + " & ".join(text(c.title) for c in block.columns) + r" \\",
            r"    \midrule",
        ]
        for row in block.rows:
            cells = [
                text(c.text) if col.align == "left" else _number(c.text)
                for col, c in zip(block.columns, row.cells, strict=True)
            ]
            out.append("    " + " & ".join(cells) + r" \\")
        out += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}"]
    if out:
        out.extend(f"% note: {' '.join(n.splitlines())}" for n in notes)
    return "\n".join(out) + "\n" if out else ""
