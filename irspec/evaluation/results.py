"""``irspec.evaluation.results``, results and their display until irspec 0.1.0, its names since in
:mod:`irspec.evaluation.result`, :mod:`irspec.evaluation.result_set`, :mod:`irspec.evaluation.evaluate`,
:mod:`irspec.evaluation.inputs` and :mod:`irspec.report.notebook`: kept for one release, importing it warns
(a :class:`DeprecationWarning`) naming each name's new module; each name is that module's own object."""

from irspec.evaluation.evaluate import one_mapping_run, several_runs
from irspec.evaluation.inputs import evaluate_input
from irspec.evaluation.result import Result
from irspec.evaluation.result_set import ResultSet, evaluate
from irspec.lazy import moved_names
from irspec.report.notebook import Shown

__all__ = [
    "Result",
    "ResultSet",
    "Shown",
    "evaluate",
    "evaluate_input",
    "one_mapping_run",
    "several_runs",
]

moved_names(__name__, globals())
