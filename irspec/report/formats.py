"""``irspec eval --format``: one entry point to every format of plain results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = ["BINARY_FORMATS", "FORMATS", "WITH_INTERVALS", "format_results"]

FORMATS = ("table", "json", "jsonl", "csv", "tsv", "trec", "latex", "markdown", "parquet")
"""Output formats of ``irspec eval``."""

BINARY_FORMATS = ("parquet",)
"""The formats :func:`format_results` gives as bytes: for a file, never a terminal."""

WITH_INTERVALS = ("table", "latex", "markdown")
"""The formats that can show a confidence interval beside each mean."""

DEFAULT_INTERVALS = ("table", "markdown", "html")
"""The formats that show each mean's 95% t interval unless told not to (LaTeX only when asked: a paper's
table is laid out by its author)."""


def default_intervals(fmt: str, intervals: str | None) -> str | None:
    """The intervals a ``fmt`` output shows when asked for ``intervals``: ``None`` (not said) is ``"t"``
    in :data:`DEFAULT_INTERVALS` and none elsewhere; ``"none"`` is none."""
    if intervals is None:
        return "t" if fmt in DEFAULT_INTERVALS else None
    return None if intervals == "none" else intervals


def format_results(
    results: Sequence[Evaluated],
    fmt: str,
    *,
    per_query: bool = False,
    runid: bool = False,
    decimals: int = 4,
    provenance: dict[str, Any] | None = None,
    intervals: str | None = None,
    width: int | None = None,
    summary: bool = True,
) -> str | bytes:
    """Format results in one of :data:`FORMATS`; ``provenance`` (see :func:`~irspec.report.provenance`)
    goes into JSON. Text, except for :data:`BINARY_FORMATS` (bytes). ``summary=False`` leaves the
    ``all`` lines out of trec_eval's format, as its ``-n`` does (a ``ValueError`` in the others).

    ``decimals`` applies to the table, LaTeX and Markdown; LaTeX and Markdown show the aggregates only.
    ``intervals`` (``"t"`` or ``"bootstrap"``) puts the 95% confidence interval beside each mean, in the
    formats of :data:`WITH_INTERVALS` (a ``ValueError`` in the others). ``width`` (a terminal's columns)
    fits a wider table to it (:func:`~irspec.report.text.render`); the other formats ignore it.
    """
    if intervals is not None and fmt not in WITH_INTERVALS:
        raise ValueError(
            f"confidence intervals are shown in the {', '.join(WITH_INTERVALS)} formats, not in {fmt}"
        )
    if not summary and fmt != "trec":
        raise ValueError(f"the summary is left out of trec_eval's format (trec), not of {fmt}")
    # Each renderer is imported for its own format only: `irspec eval --format trec` loads no table code.
    if fmt == "jsonl":
        from irspec.report.data import to_jsonl

        return to_jsonl(results, per_query=per_query)
    if fmt == "trec":
        from irspec.report.trec import to_trec

        return to_trec(results, per_query=per_query, runid=runid, summary=summary)
    if fmt == "json":
        from irspec.report.data import to_json

        return to_json(results, per_query=per_query, extra={"provenance": provenance} if provenance else None)
    if fmt == "latex":
        from irspec.report.latex import to_latex

        return to_latex(results, decimals=decimals, intervals=intervals)
    if fmt == "markdown":
        from irspec.report.markdown import to_markdown

        return to_markdown(results, decimals=decimals, intervals=intervals)
    if fmt in ("csv", "tsv"):
        from irspec.report.data import to_delimited

        return to_delimited(results, sep="," if fmt == "csv" else "\t", per_query=per_query)
    if fmt == "parquet":
        from irspec.report.parquet import to_parquet

        return to_parquet(results, per_query=per_query)
    if fmt == "table":
        from irspec.report.text import to_table

        return to_table(results, per_query=per_query, decimals=decimals, intervals=intervals, width=width)
    raise ValueError(f"unknown format {fmt!r}")
