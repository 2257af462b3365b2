"""The evaluation of one run: per-query values and their means, keyed by canonical metric text.

A :class:`Result` holds a run's values (queries × metrics), its warnings and what its input shows
beside them; its means are derived from the values (:mod:`irspec.evaluation.means`, trec_eval's
sums). It is the one result class: ``irspec.Result``, what the engine makes and every caller gets,
shown in a notebook (``_repr_html_``, ``_repr_markdown_``, :meth:`~Result.show`) by the report layer's
:class:`~irspec.report.notebook.Shown`, which reads it as any
:class:`~irspec.evaluation.evaluated.Evaluated`: the report layer sits below this module and knows
no result class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irspec.evaluation.context import Options
from irspec.evaluation.evaluated import results_frame
from irspec.evaluation.means import aggregate_values
from irspec.report.notebook import Shown
from irspec.spec.registry import Metric

__all__ = ["Result"]


@dataclass(frozen=True, eq=False, repr=False)  # a short repr, below: not every query and value
class Result:
    """The evaluation of one run: per-query values and their aggregates, keyed by canonical text.

    ``values`` is a (queries × metrics) float array in the order of ``query_ids`` and ``metrics``; a NaN
    marks a query a metric leaves out (``SL(unfound=skip)``). A text-valued metric (``relstring``) has
    NaN there, its strings in ``texts``, and NaN as its aggregate. ``warnings`` say what the values rest
    on that the user may not expect: queries the run lacks or has beyond the qrels, a run without
    lines, a relevance level at which nothing is relevant, a name shared with another run.

    In a notebook it shows a table of its means with 95% t intervals (:meth:`show` for others).
    """

    run_name: str
    run_source: str
    metrics: tuple[Metric, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    options: Options
    warnings: tuple[str, ...] = ()
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    judged_at_10: float | None = None
    """The run's mean Judged@10 over the queries it answers (see :func:`judged_at_10`), whatever the
    metrics; ``None`` when not computed (a result not from qrels and a run) or no query was answered."""
    tables: tuple[Any, ...] = ()
    """What an input other than a run offers beside its metrics (:class:`~irspec.spec.definitions.InputTable`,
    a log's top queries say), from its data object's ``tables()``; reports render and plot them."""
    runid: str | None = None
    """The run's own runid (:attr:`irspec.data.Run.runid`), which trec_eval's ``runid`` line prints;
    ``None`` when its input has none. ``run_name`` is what every output calls the run."""
    _aggregate: dict[str, float] = field(default_factory=dict, repr=False)

    def aggregate(self) -> dict[str, float]:
        """Summary value per metric: mean, sum or geometric mean over queries, as the metric says."""
        if not self._aggregate:
            for j, m in enumerate(self.metrics):
                self._aggregate[str(m)] = aggregate_values(self.values[:, j], m.aggregate)
        return dict(self._aggregate)

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``{query_id: {metric: value}}`` for every evaluated query (a string for a text metric)."""
        names = [str(m) for m in self.metrics]
        out = {q: dict(zip(names, row.tolist())) for q, row in zip(self.query_ids, self.values)}
        for name, texts in self.texts.items():
            for q, text in zip(self.query_ids, texts):
                out[q][name] = text
        return out

    def column(self, metric: Metric | str) -> np.ndarray:
        """One metric's per-query values, aligned with ``query_ids``."""
        key = str(metric)
        for j, m in enumerate(self.metrics):
            if str(m) == key:
                return self.values[:, j]
        raise KeyError(key)

    def to_frame(self, wide: bool = False, backend: str = "polars") -> Any:
        """The per-query values as a data frame (see :func:`results_frame`): long, one row per query and
        metric (``run, query_id, metric, value``), or ``wide``, one row per query and a column per metric.
        ``backend`` is ``"polars"`` or ``"pandas"`` (installed separately)."""
        return results_frame([self], wide=wide, backend=backend)

    def show(self, *, intervals: str | None = "t", decimals: int = 4) -> Shown:
        """The result as a notebook shows it, with ``intervals`` ``"t"``, ``"bootstrap"`` or ``None``."""
        return Shown((self,), intervals=intervals, decimals=decimals)

    def _repr_html_(self) -> str:
        return self.show()._repr_html_()

    def _repr_markdown_(self) -> str:
        return self.show()._repr_markdown_()

    def __str__(self) -> str:
        # print(res) in a plain REPL: the table a ResultSet prints, one row
        return str(self.show(intervals=None))

    def __repr__(self) -> str:
        # a result holds a queries x metrics array and every query id: a REPL shows what it is, not them
        metrics = ", ".join(map(str, self.metrics))
        return f"{type(self).__name__}({self.run_name!r}, metrics=[{metrics}], queries={len(self.query_ids)})"
