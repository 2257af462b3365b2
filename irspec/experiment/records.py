"""The records of the compare step: the settings of a comparison (:class:`Compare`) and one comparison
of two runs on one metric (:class:`Comparison`, the test's record of :mod:`irspec.stats.outcome` with the
runs' names, the metric and the correction over its family).

They are plain data, kept apart from the code that makes them (:mod:`irspec.experiment.compare`) so that the
report layer can read them without depending on the step that renders itself through it: report
imports this module, :mod:`irspec.experiment.compare` imports report, and no circle forms."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, ClassVar

from irspec.errors import EvaluationError, quote, suggest
from irspec.frozen import frozen
from irspec.stats.outcome import ComparisonResult
from irspec.stats.resampling import MAX_RESAMPLES, RESAMPLES_WHY

__all__ = ["CORRECTIONS", "FAMILIES", "TESTS", "TUKEY_TESTS", "Compare", "Comparison"]

TUKEY_TESTS: tuple[str, ...] = ("tukey", "randomized-tukey")
"""The tests that compare all runs at once and adjust over all pairs of runs themselves."""

# The names below are irspec.stats.significance' (TESTS, ADJUST_METHODS), written out so that the records need no
# scipy; tests/test_compare.py holds them equal to stats' and to the plan schema's.
TESTS: tuple[str, ...] = ("t", "randomization", "bootstrap", "wilcoxon", "sign", *TUKEY_TESTS)
"""Every test a comparison may use: the two-run tests of :func:`irspec.stats.significance.paired`, then the Tukey tests."""

CORRECTIONS: tuple[str, ...] = ("none", "bonferroni", "holm", "bh", "by")
"""The multiple-comparison corrections (those of :func:`irspec.stats.significance.adjust`)."""

FAMILIES: tuple[str, ...] = ("per-metric", "all")
"""The families a correction runs over: the comparisons of one metric, or every comparison."""


@frozen
class Compare:
    """The settings of a comparison (a plan's ``compare`` section), every default filled in.

    ``baseline`` is ``None`` for all pairs of runs. ``baselines`` names several baselines: each is compared
    with every other run, and two baselines with each other once. Either may be given; once made, a
    single baseline is in both (``baseline="bm25"`` and ``baselines=("bm25",)`` are the same settings),
    and with several ``baseline`` is ``None`` and ``baselines`` holds them all. ``correction`` ``None`` means the test's own default:
    ``holm``, or ``none`` for the Tukey tests, which adjust for all pairs of runs themselves (so they take
    no other correction, and only the ``per-metric`` family). Bad values raise an
    :class:`~irspec.errors.EvaluationError` naming the setting and what it accepts.
    """

    baseline: str | None = None
    test: str = "t"
    permutations: int = 10_000
    seed: int = 42
    correction: str | None = None
    alpha: float = 0.05
    family: str = "per-metric"
    baselines: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._settle_baselines()
        _choice("test", self.test, TESTS)
        default = "none" if self.test in TUKEY_TESTS else "holm"
        object.__setattr__(self, "correction", default if self.correction is None else self.correction)
        _choice("correction", self.correction, CORRECTIONS)
        _choice("family", self.family, FAMILIES)
        if self.test in TUKEY_TESTS and self.correction != "none":
            raise EvaluationError(
                f"test {self.test!r} adjusts over all pairs of runs itself; give correction None or 'none', "
                f"not {self.correction!r}"
            )
        if self.test in TUKEY_TESTS and self.family != "per-metric":
            raise EvaluationError(
                f"test {self.test!r} adjusts over the pairs of runs of each metric; family must be 'per-metric'"
            )
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, numbers.Real) or not 0 < self.alpha < 1:
            raise EvaluationError(f"alpha must be a number strictly between 0 and 1, not {self.alpha!r}")
        _whole("permutations", self.permutations, 1)
        if self.permutations > MAX_RESAMPLES:
            raise EvaluationError(
                f"permutations must be an integer >= 1 and <= {MAX_RESAMPLES:,} ({RESAMPLES_WHY}), not {quote(self.permutations)}"
            )
        _whole("seed", self.seed, 0)

    def _settle_baselines(self) -> None:
        """Check ``baseline`` and ``baselines`` and make them agree (see the class docstring)."""
        if self.baseline is not None and (not isinstance(self.baseline, str) or not self.baseline):
            raise EvaluationError(f"baseline must be a run's name or None, not {self.baseline!r}")
        given = self.baselines
        if isinstance(given, str) or not isinstance(given, (list, tuple)):
            raise EvaluationError(f"baselines must be a list of run names, not {given!r}")
        for name in given:
            if not isinstance(name, str) or not name:
                raise EvaluationError(f"baselines must be run names, not {name!r}")
        twice = sorted({n for n in given if list(given).count(n) > 1})
        if twice:
            raise EvaluationError(f"baselines name {', '.join(map(repr, twice))} more than once")
        if self.baseline is not None and given and tuple(given) != (self.baseline,):
            raise EvaluationError(
                f"give baseline ({self.baseline!r}) or baselines ({list(given)!r}), not both"
            )
        names = (self.baseline,) if self.baseline is not None else tuple(given)
        object.__setattr__(self, "baselines", names)
        object.__setattr__(self, "baseline", names[0] if len(names) == 1 else None)

    def as_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for JSON output)."""
        out = dataclasses.asdict(self)
        out["baselines"] = list(self.baselines)
        return out


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if isinstance(value, str) and value in allowed:
        return
    close = suggest(value, allowed, n=1) if isinstance(value, str) else []
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise EvaluationError(f"{name} must be one of {', '.join(allowed)}, not {value!r}{hint}")


def _whole(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise EvaluationError(f"{name} must be an integer >= {minimum}, not {value!r}")


@frozen
class Comparison(ComparisonResult):
    """One significance comparison of run ``a`` with run ``b`` on one metric, on ``d = a - b``: the
    test's :class:`~irspec.stats.outcome.ComparisonResult` (every field of it, made with
    :meth:`~irspec.stats.outcome.ComparisonResult.extended`) with the runs' names, the metric and the
    correction over its family.

    With a baseline, ``b`` is the baseline, so a positive ``mean_difference`` and ``effect_size`` (paired
    Cohen's d) mean that run ``a`` scored higher. ``wins``, ``ties`` and ``losses`` count the queries on
    which ``a`` is better, equal and worse in the metric's direction (``Metric.better``: a win
    is a lower value of search length or fall-out, a higher one otherwise, counts included); the sign
    test's ``statistic`` stays the number of queries where ``a`` is higher. ``relative_change`` is
    ``mean_a / mean_b - 1`` of the metric's summaries: ``mean_difference / mean_b``, or for a geometric
    mean (GMAP), compared on logarithms, ``exp(mean_difference) - 1``; ``None`` when ``mean_b`` is 0 and
    for a z-score (``z(nDCG@10)``), whose 0 is the reference runs' mean, not an absence of quality
    (:func:`irspec.experiment.compare.relative_change`). ``p_value`` is the test's own
    p-value and ``p_adjusted`` the one after ``correction`` over ``family`` (``family_size``
    comparisons); ``significant`` is ``p_adjusted <= alpha``. For the Tukey tests both p-values are the
    family-wise adjusted one (the test adjusts over all pairs of runs), and effect sizes and
    wins/ties/losses are computed on the same aligned queries. ``n`` is the number of queries compared
    and ``left_out`` how many were not (a query only one run answered under ``missing_queries: skip``,
    or a value a metric leaves undefined); ``mean_a`` and ``mean_b`` are the runs' means over the ``n``
    queries. Undefined numbers are ``None``, never NaN.

    :data:`COLUMNS` are the fields every output shows, in their order (JSON, CSV, data frames); the
    test's ``decimals`` is not among them.
    """

    metric: str
    a: str
    b: str
    left_out: int
    mean_a: float
    mean_b: float
    p_adjusted: float
    correction: str
    family: str
    family_size: int

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "metric", "a", "b", "test", "null", "n", "left_out", "mean_a", "mean_b", "mean_difference", "relative_change",
        "ci_low", "ci_high", "confidence", "ci_method", "effect_size", "hedges_g", "wins", "ties", "losses", "statistic",
        "df", "p_value", "p_adjusted", "significant", "direction", "alpha", "correction", "family", "family_size", "permutations",
        "exact", "seed", "mc_se",
    )  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        """The :data:`COLUMNS` as a plain, JSON-serialisable dict, in their order."""
        return {name: getattr(self, name) for name in self.COLUMNS}
