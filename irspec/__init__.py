"""irspec: evaluate ranked retrieval.

The public API lives here. Importing :mod:`irspec` is cheap: the spec parser (lark), numerical code
(numpy, scipy), readers and YAML are imported when first used, so tools can embed the parser.

>>> import irspec
>>> m = irspec.parse("ndcg@10")
>>> str(m)
'nDCG@10'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from irspec.hookspecs import hookimpl
from irspec.registry import Alias, InputReader, Metric, MetricDef, MetricGroup, Param

if TYPE_CHECKING:
    from collections.abc import Iterable

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "parse",
    "parse_many",
    "metrics",
    "evaluate",
    "evaluate_input",
    "load_plan",
    "run_plan",
    "read_qrels",
    "read_run",
    "hookimpl",
    "Metric",
    "MetricDef",
    "MetricGroup",
    "Param",
    "Alias",
    "InputReader",
    "IrspecError",
    "SpecError",
    "SpecSyntaxError",
    "UnknownMetricError",
    "ParameterError",
    "RegistryError",
    "InputError",
    "EvaluationError",
    "PlanError",
    "IrspecWarning",
]


def parse(text: str) -> Metric:
    """Parse and bind one metric spec, such as ``"ndcg@10"`` or ``"bpref(10+R)"``.

    Returns an immutable :class:`Metric`; ``str()`` of it is the canonical text. Text that stands for
    several metrics (``"P.5,10"``, ``"official"``, ``"P@5 map"``) is an error here: use
    :func:`parse_many`.
    """
    from irspec.plugins import get_registry

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
    from irspec.plugins import get_registry

    return get_registry().parse(text, trec=trec)


def metrics() -> dict[str, MetricDef]:
    """Every registered metric definition, by canonical name."""
    from irspec.plugins import get_registry

    return dict(get_registry().definitions)


def __getattr__(name: str) -> Any:
    # Heavier parts load on first use, so `import irspec` stays light.
    if name == "evaluate":
        from irspec.engine import evaluate

        return evaluate
    if name == "evaluate_input":
        from irspec.inputs import evaluate_input

        return evaluate_input
    if name in ("load_plan", "run_plan"):
        from irspec import plan

        return getattr(plan, name)
    if name in ("read_qrels", "read_run", "Qrels", "Run"):
        from irspec import data

        return getattr(data, name)
    if name in ("stats", "data", "engine", "plan", "report", "inputs", "testing"):
        import importlib

        return importlib.import_module(f"irspec.{name}")
    raise AttributeError(f"module 'irspec' has no attribute {name!r}")
