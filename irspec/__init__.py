"""irspec: evaluate ranked retrieval.

The public API lives here. Importing :mod:`irspec` is cheap: the spec parser (lark), numerical code
(numpy, scipy), readers and YAML are imported when first used, so tools can embed the parser. This
module is the face of the package: modules inside irspec never import it (they import the module that
defines a name), and it loads the heavy modules lazily through ``_LAZY`` (ARCHITECTURE.md).

>>> import irspec
>>> m = irspec.parse("ndcg@10")
>>> str(m)
'nDCG@10'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irspec.errors import (
    EvaluationError,
    InputError,
    IrspecError,
    IrspecWarning,
    ParameterError,
    PlanError,
    RegistryError,
    SpecError,
    SpecSyntaxError,
    UnknownMetricError,
)
from irspec.lazy import lazy_names
from irspec.spec.plugins import get_registry
from irspec.spec.registry import (
    Alias,
    Fusion,
    FusionDef,
    InputReader,
    InputTable,
    Metric,
    MetricDef,
    MetricGroup,
    Param,
)
from irspec.version import __version__

if TYPE_CHECKING:
    from collections.abc import Iterable


__all__ = [
    "Alias",
    "EvaluationError",
    "Evaluator",
    "Fusion",
    "FusionDef",
    "InputError",
    "InputReader",
    "InputTable",
    "IrspecError",
    "IrspecWarning",
    "Metric",
    "MetricDef",
    "MetricGroup",
    "Param",
    "ParameterError",
    "PlanError",
    "PowerAnalysis",
    "RegistryError",
    "Reproduction",
    "Result",
    "ResultSet",
    "Similarity",
    "SpecError",
    "SpecSyntaxError",
    "UnknownMetricError",
    "__version__",
    "agreement",
    "by_group",
    "compare",
    "cross_fuse",
    "diff",
    "evaluate",
    "evaluate_input",
    "evaluate_many",
    "evaluate_scores",
    "evaluate_topk",
    "fuse",
    "hookimpl",
    "load_plan",
    "metrics",
    "parse",
    "parse_many",
    "power",
    "read_qrels",
    "read_run",
    "reproduce",
    "run_plan",
    "similarity",
    "standardize",
    "tune_fusion",
    "with_groups",
]


def parse(text: str) -> Metric:
    """Parse and bind one metric spec, such as ``"ndcg@10"`` or ``"bpref(10+R)"``.

    Returns an immutable :class:`Metric`; ``str()`` of it is the canonical text. Text that stands for
    several metrics (``"P.5,10"``, ``"official"``, ``"P@5 map"``) is an error here: use
    :func:`parse_many`.
    """
    found = get_registry().parse(text)
    if len(found) != 1:
        raise SpecError(f"{text!r} names {len(found)} metrics; use irspec.parse_many for a list")
    return found[0]


def parse_many(text: str | Iterable[str], *, trec: bool = False) -> list[Metric]:
    """Parse and bind a list of specs: one text with commas or whitespace between specs, or several texts.

    trec_eval's multi-value forms (``P.5,10``) and groups (``official``, ``all_trec``) expand in place;
    duplicates are dropped, first occurrence kept. ``trec=True`` reads bare trec_eval names with
    trec_eval's default parameters (``P`` is ``P.5,10,...,1000``), as its ``-m`` flag does.
    """
    return get_registry().parse(text, trec=trec)


def metrics() -> dict[str, MetricDef]:
    """Every registered metric definition, by canonical name."""
    return dict(get_registry().definitions)


# The entry points that need numpy, polars, scipy or YAML, by the module that defines them: each module
# is imported when one of its names is first used, so `import irspec` stays light. A new heavy entry
# point is one line here (and one in __all__).
_LAZY: dict[str, str] = {
    "hookimpl": "irspec.spec.hooks",  # marks as pluggy marks, without importing pluggy
    "evaluate": "irspec.evaluation.systems",  # results.evaluate, with systems of several runs
    "Result": "irspec.evaluation.result",
    "ResultSet": "irspec.evaluation.result_set",
    "evaluate_many": "irspec.evaluation.evaluate",
    "Evaluator": "irspec.evaluation.evaluator",
    "evaluate_input": "irspec.evaluation.inputs",
    "compare": "irspec.experiment.compare",
    "diff": "irspec.experiment.diff",
    "standardize": "irspec.experiment.standardize",
    "by_group": "irspec.experiment.groups",
    "with_groups": "irspec.experiment.groups",
    "power": "irspec.experiment.power",
    "PowerAnalysis": "irspec.experiment.power",
    "agreement": "irspec.experiment.agreement",
    "reproduce": "irspec.experiment.reproduce",
    "Reproduction": "irspec.experiment.reproduce",
    "similarity": "irspec.evaluation.similarity",
    "Similarity": "irspec.evaluation.similarity",
    "load_plan": "irspec.plan.load",
    "run_plan": "irspec.plan.execute",
    "fuse": "irspec.fusion.engine",
    "tune_fusion": "irspec.fusion.tuning",
    "cross_fuse": "irspec.fusion.tuning",
    "read_qrels": "irspec.data",
    "read_run": "irspec.data",
    "Qrels": "irspec.data",
    "Run": "irspec.data",
    "evaluate_topk": "irspec.recsys.matrices",  # recommenders: a sparse users × items matrix
    "evaluate_scores": "irspec.recsys.matrices",
}
# Sub-packages reachable as attributes (`irspec.plan.load_plan`) without an import statement; a module
# inside one is imported by its own name (`import irspec.stats.significance`).
_SUBMODULES = (
    "spec",
    "builtin",
    "data",
    "stats",
    "evaluation",
    "experiment",
    "report",
    "plan",
    "compat",
    "fusion",
    "recsys",
    "testing",
    "plugin_api",
)


__getattr__, __dir__ = lazy_names(globals(), _LAZY, _SUBMODULES)
