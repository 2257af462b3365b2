"""What a log's evaluation adds beside its metrics' means: the interleaving test of its ``Interleaving``
metrics and the intervals of its counterfactual estimates (``IPS``, ``ClippedIPS``, ``SNIPS``), as report
tables.

:class:`Analysis` is made for one evaluation's metrics (:meth:`Analysis.of`), given the rows' values part
by part (:meth:`Analysis.add`: the whole log in memory, or one partition of a streamed pass at a time) and
asked for its tables at the end (:meth:`Analysis.finish`), so that both paths give the same tables from
the same sums. An :class:`~irspec_online.records.InteractionLog` read by :func:`irspec_online.log.read_log`
carries its :class:`~irspec_online.settings.Online` settings, whose analysis its ``compare`` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irspec import EvaluationError, InputTable
from irspec_online import counterfactual
from irspec_online.counterfactual import estimates_table, is_counterfactual
from irspec_online.interleaving import Tally, interleaving_table
from irspec_online.settings import Interleaving, Online

__all__ = ["Analysis", "is_interleaving"]


def is_interleaving(metric: Any) -> bool:
    """Whether a bound metric is an ``Interleaving`` metric (a test is made of it)."""
    return metric.definition.name == "Interleaving"


class Analysis:
    """The tests and estimates of one evaluation's metrics, added up part by part (the module docstring)."""

    def __init__(
        self, settings: Online, metrics: Sequence[Any], estimating: Any = None, exact: bool = False
    ) -> None:
        self.settings = settings
        self.metrics = list(metrics)
        self.estimating = estimating
        self.tallies = {
            j: Tally(settings.interleaving, exact) for j, m in enumerate(self.metrics) if is_interleaving(m)
        }
        estimates = [j for j, m in enumerate(self.metrics) if is_counterfactual(m)]
        if estimates and estimating is None:
            raise EvaluationError(
                f"{self.metrics[estimates[0]]} estimates a ranking from the log: give it (irspec online "
                "--counterfactual RUN; a plan's online: counterfactual: run)"
            )
        self.estimates = {
            j: counterfactual.Tally(self.metrics[j], estimating.theta, estimating.confidence, exact)
            for j in estimates
        }

    @classmethod
    def of(
        cls, settings: Online | None, metrics: Sequence[Any], estimating: Any = None, exact: bool = False
    ) -> Analysis:
        """The analysis of ``metrics`` under ``settings`` (None: the defaults), estimating ``estimating``'s
        ranking (:class:`irspec_online.counterfactual.Estimating`) for its counterfactual metrics. Its
        means (the preference, an IPS estimate) are summed as the evaluation's means are: ``exact`` for a
        streamed pass's partitions, else in the rows' order, as ``irspec.Result.aggregate`` adds them
        (:func:`irspec_online.records.summed`)."""
        return cls(settings if settings is not None else Online(), metrics, estimating, exact)

    def add(self, log: Any, values: np.ndarray, columns: Sequence[int] | None = None) -> None:
        """Add a part of the log (whole sessions): ``values`` holds a column per metric of ``columns``
        (positions in the analysis' metrics; default all), a row per row of ``log``."""
        columns = list(range(len(self.metrics))) if columns is None else list(columns)
        for i, j in enumerate(columns):
            if j in self.tallies:
                self.tallies[j].add(log.query_key, log.user_key, values[:, i], log.interleaved)
            if j in self.estimates:
                self.estimates[j].add(log)

    def means(self) -> dict[str, float]:
        """The counterfactual metrics' estimates, by canonical text (what a streamed pass reports for them:
        SNIPS is a ratio of sums, not a mean of the partitions' terms)."""
        return {str(self.metrics[j]): tally.estimate().value for j, tally in self.estimates.items()}

    def finish(self) -> tuple[tuple[InputTable, ...], tuple[str, ...]]:
        """The tables and warnings of the tests and estimates."""
        tables: list[InputTable] = []
        warnings: list[str] = []
        if self.tallies:
            tests = [self.tallies[j].test(str(self.metrics[j])) for j in sorted(self.tallies)]
            warnings += [
                f"{t.metric}: no query issue of the log served an interleaved list (its records have no origins)"
                for t in tests
                if t.impressions == 0
            ]
            b, level = self.settings.interleaving.replicates, self.settings.interleaving.confidence
            if b * (1 - level) / 2 < 1:  # one replicate made an interval of one point and a p-value of 0
                warnings.append(
                    f"Interleaving: {b:,} bootstrap replicate{'s are' if b != 1 else ' is'} too few for a "
                    f"{level:.0%} interval: fewer than one falls in each tail (under {2 / (1 - level):,.0f}), so "
                    f"its interval and p-value mean little; give {Interleaving.replicates:,} (the default) or more"
                )
            tables.append(interleaving_table(tests))
        if self.estimates:
            estimates = [self.estimates[j].estimate() for j in sorted(self.estimates)]
            tables.append(estimates_table(estimates, self.estimating.name))
            for e in estimates:
                if e.unranked:
                    warnings.append(
                        f"{e.metric}: {e.unranked} query issues of queries {self.estimating.name} does not rank "
                        "are left out"
                    )
                if e.beyond:
                    warnings.append(
                        f"{e.metric}: {e.beyond} clicks at ranks the propensities do not cover are left out"
                    )
        return tuple(tables), tuple(warnings)
