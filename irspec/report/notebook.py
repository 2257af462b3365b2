"""Results (and comparisons) as a notebook shows them: the display every result class hands over to.

:class:`Shown` renders evaluated results (anything :class:`~irspec.evaluation.evaluated.Evaluated`:
a run's result, a system, a streamed input's means) and the comparisons made between them through
the table model and the renderers the HTML report and ``--format markdown`` use. The result classes'
``_repr_html_``, ``_repr_markdown_``, ``show()`` and ``str()`` return or call it; they know no
markup, and this module knows no result class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irspec.errors import EvaluationError
from irspec.evaluation.evaluated import Evaluated, collect_warnings
from irspec.frozen import frozen

# The table model and the renderers are imported by the methods that use them: every result class
# imports this module, and a command that never shows a result in a notebook (`irspec eval --format
# trec`) should not load the HTML, Markdown and text renderers for it (issue 23).

__all__ = ["Shown"]


@frozen
class Shown:
    """Results (and the comparisons made between them) as a notebook shows them: the means of every
    run with their 95% confidence intervals (``intervals``: ``"t"``, ``"bootstrap"`` or ``None``), the
    best of each metric in bold, significance marks, and the comparisons' table under them.

    ``_repr_html_`` and ``_repr_markdown_`` are what IPython displays; ``str()`` is the text table.
    """

    results: tuple[Evaluated, ...]
    comparisons: tuple[Any, ...] = ()
    compare: Any = None
    notes: tuple[str, ...] = ()
    intervals: str | None = "t"
    decimals: int = 4

    def __post_init__(self) -> None:
        from irspec.report.model import INTERVALS

        if self.intervals is not None and self.intervals not in INTERVALS:
            raise EvaluationError(
                f"intervals must be one of {', '.join(INTERVALS)} or None, not {self.intervals!r}"
            )

    def _table(self) -> Any:
        from irspec.report.model import build_results

        return build_results(
            self.results, self.comparisons, self.compare, decimals=self.decimals, intervals=self.intervals
        )

    def _compared(self, columns: Sequence[str]) -> Any:
        if not self.comparisons:
            return None
        from irspec.report.model import build_comparisons

        return build_comparisons(
            self.results,
            self.comparisons,
            self.compare,
            decimals=self.decimals,
            columns=columns,
            notes=self.notes,
        )

    def _repr_html_(self) -> str:
        from irspec.report import html as html_report  # not `html`: the standard library's name
        from irspec.report.model import FULL_COLUMNS, input_blocks

        tables = input_blocks(self.results, decimals=self.decimals)
        return html_report.fragment(
            self._table(), self._compared(FULL_COLUMNS), collect_warnings(self.results), tables=tables
        )

    def _repr_markdown_(self) -> str:
        from irspec.report import markdown
        from irspec.report.model import BRIEF_COLUMNS

        parts = [f"- warning: {markdown.markdown_escape(w)}\n" for w in collect_warnings(self.results)]
        parts.append(markdown.render(self._table()))
        parts.append(markdown.input_tables(self.results, decimals=self.decimals))
        compared = self._compared(BRIEF_COLUMNS)
        if compared is not None:
            parts.append("\n" + markdown.render(compared))
        return "".join(parts)

    def __str__(self) -> str:
        from irspec.report.model import BRIEF_COLUMNS
        from irspec.report.text import input_tables as text_input_tables
        from irspec.report.text import render as text_render

        text = text_render(self._table()) + text_input_tables(self.results, decimals=self.decimals)
        compared = self._compared(BRIEF_COLUMNS)
        return text if compared is None else text + "\n" + text_render(compared)
