"""What a plugin author imports from irspec, besides the face: the one module a plugin needs.

A plugin's modules import :mod:`irspec` (``irspec.hookimpl``, ``irspec.MetricDef``, the errors,
``irspec.parse_many``, ``irspec.evaluate_input``) and this module, never the modules inside irspec, which
may move (``docs/how-to/write-a-plugin.md``, the plugin guide; ``tests/test_architecture.py`` holds the shipped
plugins to it). Named ``plugin_api`` rather than ``plugin``, which a reader would take for
``irspec.spec.plugins``, the plugin manager.

Importing it is as light as ``import irspec``: a plugin's declarations import it when irspec builds its
registry, so the names that need numpy, polars or scipy (the context, spilling to disk, corrections,
qrels) load on first use (``_LAZY``), as the face's entry points do.

**Declarations** (light): :data:`hookimpl`; :class:`MetricDef`, :class:`Param`, :class:`Alias`,
:class:`MetricGroup` and :func:`each` (trec_eval's dotted form), :data:`UNIT` and :data:`NONNEGATIVE`
(a metric's ``bounds``); :class:`InputReader` and :class:`InputTable` for inputs other than qrels and
runs; :class:`PlanSection`, a plan section for a reader's options (``irspec_register_plan_sections``);
:class:`Metric`, a bound spec; :class:`FusionDef`, a method of fusing runs (``irspec_register_fusion``),
and :class:`Fusion`, a bound fusion spec; :class:`InterleavingDef` and :class:`ClickModelDef`, methods of
online evaluation (``irspec_register_interleaving``, ``irspec_register_click_models``), :class:`Method`, a
bound method spec, and :func:`parse_method`, which binds one; :class:`Command`, a subcommand of the command
line (``irspec_register_commands``).

**Input data objects** (light; ``typing.Protocol``): :class:`InputData` (``ids``, and the optional
``name``, ``source``, ``warnings``), :class:`SupportsTables` (``tables()``), :class:`SupportsCompare`
(``compare(metrics, values)``), :class:`SupportsStreaming` (``evaluate(metrics)``), and
:class:`QrelsData` (``qrels``: a reader registered with ``as_qrels=True``).

**The context** (numpy): :class:`Context` (a run joined with the qrels and ranked, the vectorised
kernels' input), :class:`QueryView` (one query, the per-query form's input), :class:`Options`,
:data:`UNJUDGED` (the label of a retrieved document the qrels do not judge), :func:`safe_divide`.

**Fusion** (numpy): :class:`Candidates`, what a fusion method's kernel computes from (every document
some run retrieved for a query, with each run's normalised score and rank).

**Inputs** (polars): :class:`Qrels` (``Qrels.from_frame``: qrels derived from a richer input);
:func:`is_dataset_id` and :func:`qrels_records` (an ir_datasets dataset's qrels, ``irds:<id>``);
:func:`input_kind` (the one input kind that bound metrics need); :func:`named_rows` (an input given
as named tuples: their fields and items, checked as irspec's readers check them).

**Spilling to disk and the memory budget** (polars): :class:`Partitions` (rows spread over temporary
Arrow files by a hash of a key column, read back a partition at a time), :func:`spill_directory` (a
temporary directory removed on error and Ctrl-C), :func:`default_memory` and :func:`parse_memory` (the
budget irspec evaluates within, and ``"1GiB"`` read as bytes).

**Writing files** (light): :class:`Inputs` (the files a command reads) and :func:`write_all_atomic`
(outputs written all or none, none over an input: the guard every command's outputs pass, which a
:class:`Command`'s ``run`` writes through) and :func:`check_writable` (the same checks, before anything
is read).

**Corrections and tests** (scipy): :func:`adjust`, p-values adjusted for multiple comparisons
(``holm``, ``bonferroni``, ``bh``, ``by``, ``none``), as ``irspec.compare`` adjusts them; and
:func:`sign_p_value`, the exact sign test's p-value, as ``irspec.compare``'s sign test computes it.

**Spark** (light; pyspark on a call): :func:`settle_spark_worker`, which every function a plugin hands
Spark to run in its Python workers calls first, as irspec's own do (the worker's collections then skip
its imports).

**Text and messages** (light): :func:`bounded_lines` (a file's lines, refused at the first one too
long to be text, naming it), :func:`quote` (a value from the input, cut short for a message) and
:func:`label_out_of_range` (the message of a label beyond 64 bits, as irspec's qrels readers give it).
"""

from __future__ import annotations

from irspec.errors import label_out_of_range, quote
from irspec.lazy import lazy_names
from irspec.lines import bounded_lines
from irspec.spec.definitions import (
    NONNEGATIVE,
    UNIT,
    Alias,
    ClickModelDef,
    Command,
    Fusion,
    FusionDef,
    InputData,
    InputReader,
    InputTable,
    InterleavingDef,
    Method,
    Metric,
    MetricDef,
    MetricGroup,
    Param,
    PlanSection,
    QrelsData,
    SupportsCompare,
    SupportsStreaming,
    SupportsTables,
    each,
)

__all__ = [
    # declarations
    "hookimpl",
    "MetricDef",
    "Param",
    "Alias",
    "MetricGroup",
    "each",
    "UNIT",
    "NONNEGATIVE",
    "InputReader",
    "InputTable",
    "PlanSection",
    "Metric",
    "FusionDef",
    "Fusion",
    "InterleavingDef",
    "ClickModelDef",
    "Method",
    "parse_method",
    "Command",
    # input data objects
    "InputData",
    "QrelsData",
    "SupportsTables",
    "SupportsCompare",
    "SupportsStreaming",
    # the context
    "Context",
    "QueryView",
    "Options",
    "UNJUDGED",
    "safe_divide",
    # fusion
    "Candidates",
    # inputs
    "Qrels",
    "is_dataset_id",
    "qrels_records",
    "input_kind",
    "named_rows",
    # spilling to disk and the memory budget
    "Partitions",
    "spill_directory",
    "default_memory",
    "parse_memory",
    # writing files
    "Inputs",
    "write_all_atomic",
    "check_writable",
    # corrections and tests
    "adjust",
    "sign_p_value",
    # spark
    "settle_spark_worker",
    # text and messages
    "bounded_lines",
    "quote",
    "label_out_of_range",
]

# The names that need numpy, polars or scipy, by the module that defines them: imported when first
# used, so that importing this module (a plugin's declarations do, whenever irspec builds its registry)
# stays as light as `import irspec`.
_LAZY: dict[str, str] = {
    "hookimpl": "irspec.spec.hooks",  # marks as pluggy marks, without importing pluggy
    "Context": "irspec.evaluation.context",
    "QueryView": "irspec.evaluation.context",
    "Options": "irspec.evaluation.context",
    "UNJUDGED": "irspec.evaluation.context",
    "safe_divide": "irspec.evaluation.context",
    "Candidates": "irspec.builtin.kernels.fusion",
    "Qrels": "irspec.data",
    "is_dataset_id": "irspec.data.datasets",
    "qrels_records": "irspec.data.datasets",
    "input_kind": "irspec.evaluation.inputs",
    "named_rows": "irspec.data.objects",
    "parse_method": "irspec.spec.methods",  # light, but its first call builds the registry
    "Partitions": "irspec.data.stream",
    "spill_directory": "irspec.data.stream",
    "default_memory": "irspec.data.stream",
    "parse_memory": "irspec.data.stream",
    "adjust": "irspec.stats.significance",
    "sign_p_value": "irspec.stats.significance",
    "Inputs": "irspec.report.files",
    "write_all_atomic": "irspec.report.files",
    "check_writable": "irspec.report.files",
    "settle_spark_worker": "irspec.evaluation.workers",
}


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
