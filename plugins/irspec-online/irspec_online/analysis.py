"""What a log's evaluation adds beside its metrics' means: the interleaving test of its ``Interleaving``
metrics (and, later in this module, the counterfactual estimates' intervals), as report tables.

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

from irspec import InputTable
from irspec_online.interleaving import Tally, interleaving_table
from irspec_online.settings import Online

__all__ = ["Analysis", "is_interleaving"]


def is_interleaving(metric: Any) -> bool:
    """Whether a bound metric is an ``Interleaving`` metric (a test is made of it)."""
    return metric.definition.name == "Interleaving"


class Analysis:
    """The tests of one evaluation's metrics, added up part by part (see the module docstring)."""

    def __init__(self, settings: Online, metrics: Sequence[Any]) -> None:
        self.settings = settings
        self.metrics = list(metrics)
        self.tallies = {
            j: Tally(settings.interleaving) for j, m in enumerate(self.metrics) if is_interleaving(m)
        }

    @classmethod
    def of(cls, settings: Online | None, metrics: Sequence[Any]) -> Analysis:
        """The analysis of ``metrics`` under ``settings`` (None: the defaults)."""
        return cls(settings if settings is not None else Online(), metrics)

    def add(self, log: Any, values: np.ndarray, columns: Sequence[int] | None = None) -> None:
        """Add a part of the log (whole sessions): ``values`` holds a column per metric of ``columns``
        (positions in the analysis' metrics; default all), a row per row of ``log``."""
        columns = list(range(len(self.metrics))) if columns is None else list(columns)
        for i, j in enumerate(columns):
            if j in self.tallies:
                self.tallies[j].add(log.query_key, log.user_key, values[:, i], log.interleaved)

    def finish(self) -> tuple[tuple[InputTable, ...], tuple[str, ...]]:
        """The tables and warnings of the tests."""
        if not self.tallies:
            return (), ()
        tests = [self.tallies[j].test(str(self.metrics[j])) for j in sorted(self.tallies)]
        warnings = tuple(
            f"{t.metric}: no query issue of the log served an interleaved list (its records have no origins)"
            for t in tests
            if t.impressions == 0
        )
        return (interleaving_table(tests),), warnings
