"""``irspec.evaluation.engine``, the engine until irspec 0.1.0, its names since in the modules of
:mod:`irspec.evaluation`: kept for one release, importing it warns (a :class:`DeprecationWarning`) naming
each name's new module; each name is that module's own object."""

from irspec.evaluation.evaluate import distinct_names, evaluate_many, issue_warnings
from irspec.evaluation.evaluated import collect_warnings, results_frame
from irspec.evaluation.parts import Part, evaluate_part, evaluate_parts, finish
from irspec.evaluation.result import Result
from irspec.lazy import moved_names

__all__ = [
    "Part",
    "Result",
    "collect_warnings",
    "distinct_names",
    "evaluate_many",
    "evaluate_part",
    "evaluate_parts",
    "finish",
    "issue_warnings",
    "results_frame",
]

moved_names(__name__, globals())
