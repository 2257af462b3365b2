"""ranx's ``ranx.data_structures``: ``Qrels``, ``Run``, ``Report``, ``OptimizationReport`` and
``FrozensetDict``, where code written against ranx imports them from."""

from irspec.compat.ranx._comparisons import FrozensetDict, Report
from irspec.compat.ranx._fusing import OptimizationReport
from irspec.compat.ranx._structures import Qrels, Run

__all__ = ["FrozensetDict", "OptimizationReport", "Qrels", "Report", "Run"]
