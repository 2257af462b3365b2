"""The record of a paired comparison: what a significance test concludes about two systems' scores.

:class:`ComparisonResult` is one test of ``d = a - b`` (:func:`irspec.stats.significance.paired`);
:class:`PairResult` is the same record for one pair of a family of systems, the test adjusting over
all pairs (:func:`irspec.stats.significance.tukey`); the compare step's
:class:`~irspec.experiment.records.Comparison` is the same record again, with the runs' names, the
metric and the correction over its family. Each extends :class:`ComparisonResult` and is made from one
with :meth:`ComparisonResult.extended`, so the fields are declared once and never copied by hand.

Plain data: no numpy and no scipy, so that the compare step's records, and the report layer that
reads them, load neither (:mod:`irspec.stats.significance` imports scipy at its top).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from irspec.frozen import frozen

__all__ = ["ComparisonResult", "PairResult"]

_Extended = TypeVar("_Extended", bound="ComparisonResult")


@frozen
class ComparisonResult:
    """The outcome of one two-sided significance test plus effect sizes of ``d = a - b``.

    ``statistic`` is t for the t-test, the mean difference for the randomization and bootstrap tests,
    ``min(W+, W-)`` (scipy's convention) for Wilcoxon and the number of wins for the sign test.
    ``ci_low``/``ci_high`` bound the mean difference at level ``confidence``: a bootstrap interval
    (``ci_method`` ``"bca"`` or ``"percentile"``) for the bootstrap test, a t interval otherwise.
    ``exact`` is true when the p-value comes from the test's exact null distribution (t under
    normality, full enumeration, the binomial, the exact Wilcoxon distribution) rather than from random
    sampling or a large-sample approximation. ``permutations`` is the number of sign vectors or
    resamples actually used (``2**n`` for full enumeration), ``mc_se`` the Monte-Carlo standard error
    of ``p_value`` (0 when nothing was sampled), ``seed`` the seed when the result depended on it.
    ``significant`` is ``p_value <= alpha``. ``direction`` is the side the test's own evidence is on: 1
    for a, -1 for b, 0 for neither; the sign of the mean difference for the t, randomization, bootstrap
    and Tukey tests, of wins less losses for the sign test, and of W+ - W- for Wilcoxon's (a significant
    sign or signed-rank test can favour the run with the lower mean). ``wins``/``ties``/``losses`` count
    the differences above, at and below 0, and ``relative_change`` is ``mean_difference / mean(b)`` of
    the scores given; the compare step restates both in the metric's terms (its direction, a geometric
    mean's logarithms: :class:`~irspec.experiment.records.Comparison`). Quantities that are undefined for the data (see
    :func:`~irspec.stats.significance.paired`) are ``None``, never NaN; the interval is ``None`` only
    for a test that has none (the randomised Tukey HSD, :class:`PairResult`).
    """

    test: str
    null: str
    n: int
    statistic: float | None
    p_value: float
    alpha: float
    significant: bool
    mean_difference: float
    relative_change: float | None
    confidence: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    effect_size: float | None
    hedges_g: float | None
    wins: int
    ties: int
    losses: int
    df: int | None
    permutations: int | None
    exact: bool
    seed: int | None
    mc_se: float
    decimals: int
    direction: int

    def as_dict(self) -> dict[str, Any]:
        """All fields as a plain, JSON-serialisable dict (Python scalars and ``None`` only)."""
        return dataclasses.asdict(self)

    @classmethod
    def extended(cls: type[_Extended], outcome: ComparisonResult, **changes: Any) -> _Extended:
        """This record made from ``outcome``'s test fields and ``changes``: the fields ``cls`` adds (run
        names, a pair's rows) and any of the outcome's it gives another value (a family's ``test``)."""
        fields = {f.name: getattr(outcome, f.name) for f in dataclasses.fields(ComparisonResult)}
        return cls(**{**fields, **changes})


@frozen
class PairResult(ComparisonResult):
    """One pair ``(a, b)`` of systems (row indices of the score matrix) from
    :func:`~irspec.stats.significance.tukey`: the comparison of ``d = x[a] - x[b]``, its ``p_value``
    adjusted for the whole family of pairs.

    ``test`` (also ``method``) is ``"tukey-hsd"`` or ``"randomized-tukey-hsd"``. For the parametric HSD
    ``statistic`` is the studentized range ``q`` and ``ci_low``/``ci_high`` the simultaneous Tukey
    interval (``ci_method`` ``"tukey"``); for the randomised HSD ``statistic`` is ``|mean_difference|``
    (compared with the permuted ranges), the interval, its ``confidence`` and ``ci_method`` are
    ``None`` and ``mc_se`` is the Monte-Carlo standard error of ``p_value``. The effect sizes,
    ``relative_change`` and wins/ties/losses are those of the pair's differences, as
    :func:`~irspec.stats.significance.paired` gives them. ``exact`` is false for both: the parametric p
    is the tail of the studentized range, a double integral that scipy evaluates numerically (in an
    asymptotic form past 100,000 degrees of freedom), and the randomised p is sampled.
    """

    a: int
    b: int

    @property
    def method(self) -> str:
        """The Tukey test that made the pair (``test``)."""
        return self.test

    def as_dict(self) -> dict[str, Any]:
        """All fields, and ``method``, as a plain, JSON-serialisable dict."""
        return {**dataclasses.asdict(self), "method": self.method}
