"""Reports: evaluation results and comparisons as text, LaTeX, Markdown, HTML, trec_eval lines, JSON
and CSV/TSV, and the files they are written to.

Every table format renders one table model (:mod:`.model`), built once from the results, the
comparisons and the settings that made them; the renderers only translate it into their markup:

``model``     the table model (:class:`~.model.Table`) and its two builders; ``marks`` significance
              marks and the words that explain them
``text``      aligned terminal tables; ``latex`` booktabs tables; ``markdown`` GitHub tables;
``html``      the self-contained HTML page, from the jinja2 template ``templates/report.html.j2``
``trec``      trec_eval's own lines; ``data`` JSON, JSON lines and CSV/TSV; ``parquet`` long rows in a
              Parquet file; ``formats`` ``irspec eval --format``
``origin``    provenance: versions, specs, options, seeds, SHA-256 of the inputs
``notebook``  results and comparisons as a notebook shows them (``Result.show()``, ``_repr_html_``)
``files``     atomic writes of a file or a directory of files

Formatters return text (Parquet: bytes) and write nothing. The report layer never evaluates or compares: it is given
results (and comparisons), and :mod:`irspec.report.plots` draws the figures from results it is given.
"""

from __future__ import annotations

from irspec.report.data import comparisons_delimited, to_delimited, to_json, to_jsonl
from irspec.report.files import check_writable, write_all_atomic, write_atomic, write_files_atomic
from irspec.report.formats import BINARY_FORMATS, FORMATS, format_results
from irspec.report.html import JudgedSet, to_html
from irspec.report.latex import latex_escape, to_latex
from irspec.report.markdown import markdown_escape, to_markdown
from irspec.report.marks import (
    CORRECTION_NAMES,
    TEST_NAMES,
    Marks,
    direction,
    letters,
    method_parts,
    method_text,
    query_count,
    significance_marks,
)
from irspec.report.origin import hash_in_background, provenance, sha256_file
from irspec.report.text import comparison_rows, comparisons_table, marked_table, to_table
from irspec.report.trec import TREC_ORDER, to_trec, trec_order

__all__ = [
    "BINARY_FORMATS",
    "CORRECTION_NAMES",
    "FORMATS",
    "TEST_NAMES",
    "TREC_ORDER",
    "JudgedSet",
    "Marks",
    "check_writable",
    "comparison_rows",
    "comparisons_delimited",
    "comparisons_table",
    "direction",
    "format_results",
    "hash_in_background",
    "latex_escape",
    "letters",
    "markdown_escape",
    "marked_table",
    "method_parts",
    "method_text",
    "provenance",
    "query_count",
    "sha256_file",
    "significance_marks",
    "to_delimited",
    "to_html",
    "to_json",
    "to_jsonl",
    "to_latex",
    "to_markdown",
    "to_table",
    "to_trec",
    "trec_order",
    "write_all_atomic",
    "write_atomic",
    "write_files_atomic",
]
