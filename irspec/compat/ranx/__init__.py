"""ranx 0.3.21's API on irspec's evaluation: code written against ranx changes one line.

>>> from irspec.compat import ranx                      # was: import ranx
>>> qrels = ranx.Qrels({"q1": {"d1": 1, "d2": 2}})
>>> run = ranx.Run({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}, name="bm25")
>>> round(float(ranx.evaluate(qrels, run, "ndcg@5")), 4)
0.8597

``Qrels`` and ``Run`` (from dicts, files, DataFrames, Parquet), ``evaluate`` (ranx's metric strings,
values and ties), ``compare`` and its ``Report`` (the table as ranx prints it, LaTeX, dicts, frames,
ranx's tests), ``fuse``, ``normalize`` and ``optimize_fusion`` (irspec's fusion by ranx's names). What
departs from ranx, and why: ``docs/coming-from/ranx.md``. Importing this package loads neither ranx,
numba nor numpy: a ``Run`` made loads numpy and polars, the first evaluation irspec's engine.
"""

from irspec.compat.ranx._comparisons import Report, compare
from irspec.compat.ranx._fusing import OptimizationReport, fuse, normalize, optimize_fusion
from irspec.compat.ranx._scoring import evaluate
from irspec.compat.ranx._structures import Qrels, Run

SUBMODULES: tuple[str, ...] = (
    "data_structures", "data_structures.qrels", "data_structures.run", "fusion", "metrics", "normalization",
)  # fmt: skip
"""The submodules named as ranx's (``ranx.metrics``, ...), for code that imports them."""

__all__ = [
    "OptimizationReport", "Qrels", "Report", "Run", "compare", "evaluate", "fuse", "normalize", "optimize_fusion",
]  # fmt: skip
