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
results (and comparisons), and the figures are drawn from results it is given: :mod:`irspec.report.figures`
computes what they show, :mod:`irspec.report.charts` writes them as SVG, :mod:`irspec.report.plots` as files
(the PNG with matplotlib).
"""

from __future__ import annotations

from irspec.lazy import lazy_names

# Each public name by the module that defines it, imported on first use: a command renders one format,
# and loading every renderer (HTML's jinja2 setup, LaTeX, Markdown, Parquet, provenance) cost
# `irspec eval` more than its evaluation of a TREC run (issue 23).
_LAZY: dict[str, str] = {
    "comparisons_delimited": "irspec.report.data",
    "to_delimited": "irspec.report.data",
    "to_json": "irspec.report.data",
    "to_jsonl": "irspec.report.data",
    "check_writable": "irspec.report.files",
    "write_all_atomic": "irspec.report.files",
    "write_atomic": "irspec.report.files",
    "write_files_atomic": "irspec.report.files",
    "BINARY_FORMATS": "irspec.report.formats",
    "FORMATS": "irspec.report.formats",
    "format_results": "irspec.report.formats",
    "JudgedSet": "irspec.report.html",
    "to_html": "irspec.report.html",
    "latex_escape": "irspec.report.latex",
    "to_latex": "irspec.report.latex",
    "markdown_escape": "irspec.report.markdown",
    "to_markdown": "irspec.report.markdown",
    "CORRECTION_NAMES": "irspec.report.marks",
    "TEST_NAMES": "irspec.report.marks",
    "Marks": "irspec.report.marks",
    "direction": "irspec.report.marks",
    "letters": "irspec.report.marks",
    "method_parts": "irspec.report.marks",
    "method_text": "irspec.report.marks",
    "query_count": "irspec.report.marks",
    "significance_marks": "irspec.report.marks",
    "hash_in_background": "irspec.report.origin",
    "provenance": "irspec.report.origin",
    "sha256_file": "irspec.report.origin",
    "comparison_rows": "irspec.report.text",
    "comparisons_table": "irspec.report.text",
    "marked_table": "irspec.report.text",
    "to_table": "irspec.report.text",
    "TREC_ORDER": "irspec.report.trec",
    "to_trec": "irspec.report.trec",
    "trec_order": "irspec.report.trec",
}

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

# Its modules too, by name (`report.text.plain_tables`): a module of the package is an attribute of it only
# once something has imported it, and which has depends on the command (`irspec power` failed so).
_MODULES = (
    "agreement", "data", "diff", "files", "formats", "html", "latex", "markdown", "marks", "model", "notebook",
    "origin", "parquet", "plots", "power", "reproduce", "text", "trec",
)  # fmt: skip

__getattr__, __dir__ = lazy_names(globals(), _LAZY, _MODULES)
