"""``irspec.engine``, the engine until irspec 0.1.0, its names since in the modules of
:mod:`irspec.evaluation`: kept for one release, importing it warns (a :class:`DeprecationWarning`) naming
each name's new module; each name is that module's own object."""

from irspec.evaluation.compute import bind_metrics, compute_metric
from irspec.evaluation.context import Options
from irspec.evaluation.evaluate import distinct_names, evaluate_many, issue_warnings
from irspec.evaluation.evaluated import collect_warnings, results_frame
from irspec.evaluation.index import QrelsIndex, index_qrels
from irspec.evaluation.judgments import Judgments, read_input, read_judgments, reads_qrels
from irspec.evaluation.parts import Part, evaluate_part, evaluate_parts, finish
from irspec.evaluation.ranking import build_context
from irspec.evaluation.result import Result
from irspec.lazy import moved_names

__all__ = [
    "Judgments",
    "Options",
    "Part",
    "QrelsIndex",
    "Result",
    "bind_metrics",
    "build_context",
    "collect_warnings",
    "compute_metric",
    "distinct_names",
    "evaluate_many",
    "evaluate_part",
    "evaluate_parts",
    "finish",
    "index_qrels",
    "issue_warnings",
    "read_input",
    "read_judgments",
    "reads_qrels",
    "results_frame",
]

moved_names(__name__, globals())
