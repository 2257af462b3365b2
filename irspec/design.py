"""Power and topic set size design, on plain numbers: how many topics an experiment needs, and what the
topics at hand can detect.

Two designs, both from Sakai, "Topic set size design", Information Retrieval Journal 19(3), 2016
(after Nagata's sample size design), and his "Laboratory Experiments in Information Retrieval"
(Springer 2018), ch. 6:

Paired t-test (two runs, :func:`t_power`, :func:`t_topics`, :func:`t_detectable`)
    The one-sample t-test, two-sided, on the per-topic differences ``d = a - b`` of ``n`` topics. With
    the true mean difference ``delta`` and standard deviation ``sigma_d`` of the differences, the
    effect size is ``e = delta / sigma_d`` and ``t = mean(d) / (sd(d) / sqrt(n))`` follows a
    noncentral t with ``n - 1`` degrees of freedom and noncentrality ``e * sqrt(n)``. With
    ``c = t_{1 - alpha/2, n - 1}`` (the central t's critical value), the power is

        ``power = P(T' >= c) + P(T' <= -c)``,  ``T' ~ nct(n - 1, e * sqrt(n))``

    (both tails, as statsmodels' ``TTestPower`` computes it). The topics needed for ``delta`` at
    ``alpha`` and a target power ``1 - beta`` start from the normal approximation

        ``n0 = ((z_{alpha/2} + z_beta) / e) ** 2 + z_{alpha/2} ** 2 / 2``

    (``z_p`` the upper ``p`` quantile of the standard normal), and are then the smallest ``n >= 2``
    whose exact noncentral-t power reaches the target. The minimum detectable difference with ``n``
    topics is ``sigma_d`` times the effect size whose power is exactly the target.

One-way ANOVA over ``m`` systems (:func:`anova_power`, :func:`anova_topics`, :func:`anova_detectable`)
    Sakai's design for ``m`` systems: the F test of equal means with ``phi_A = m - 1`` and
    ``phi_E = m (n - 1)`` degrees of freedom. ``sigma^2`` is the residual variance of the
    topic x system two-way ANOVA without replication (:func:`irspec.stats.residual_variance`, the
    variance Tukey's HSD uses). The minimum detectable range ``minD`` between the best and the worst
    system is met in the worst case, every other system at the middle of the two, where the
    noncentrality is

        ``lambda = n * minD ** 2 / (2 * sigma ** 2)``

    and ``power = P(F' >= F_{1 - alpha}(phi_A, phi_E))``, ``F' ~ ncf(phi_A, phi_E, lambda)``. (In
    statsmodels' ``FTestAnovaPower`` terms: ``nobs = m * n``, ``k_groups = m`` and effect size
    ``f = minD / sqrt(2 * m * sigma ** 2)``, since it takes ``lambda = f ** 2 * nobs``.) The topics
    needed start from the chi-square approximation (``phi_E`` infinite: the ``lambda`` at which a
    noncentral chi-square with ``phi_A`` degrees of freedom reaches the target power), then the smallest
    ``n >= 2`` whose exact power reaches it.

Defined values and errors, the same in every function: ``delta``/``min_range`` must be > 0, ``alpha``
and the target ``power`` strictly between 0 and 1, ``n >= 2`` topics and ``m >= 2`` systems, a standard
deviation or variance finite and >= 0; anything else raises :class:`~irspec.errors.EvaluationError`
naming the argument. A zero standard deviation (or variance) means every difference is detected with
certainty: power 1, 2 topics needed (the fewest a t-test or an F test over topics can use), and a
minimum detectable difference of 0.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

from scipy.optimize import brentq
from scipy.stats import f as f_dist
from scipy.stats import chi2, ncf, nct, ncx2, norm
from scipy.stats import t as t_dist

from irspec.errors import EvaluationError

__all__ = [
    "MIN_TOPICS",
    "t_power",
    "t_topics",
    "t_detectable",
    "t_normal_topics",
    "anova_power",
    "anova_topics",
    "anova_detectable",
    "anova_noncentrality",
]

MIN_TOPICS = 2
"""The fewest topics a paired t-test (or an F test over topics) can use: one degree of freedom."""

_MAX_TOPICS = 10**9
"""A topic count beyond any collection: a requirement above it is reported as an error, not searched."""


def t_power(delta: float, sd: float, n: int, *, alpha: float = 0.05) -> float:
    """The power of the two-sided paired t-test with ``n`` topics to detect a true mean difference
    ``delta`` when the per-topic differences have standard deviation ``sd`` (formula in the module
    docstring). ``sd == 0``: 1.0."""
    _positive("delta", delta)
    _deviation("sd", sd)
    _topics("n", n)
    _probability("alpha", alpha)
    if sd == 0:
        return 1.0
    return _t_power(delta / sd, n, alpha)


def _t_power(effect: float, n: int, alpha: float) -> float:
    df = n - 1
    crit = float(t_dist.ppf(1 - alpha / 2, df))
    shift = effect * math.sqrt(n)
    # scipy's noncentral t returns NaN far in a tail (df ~1000, noncentrality ~10); each tail is then
    # taken from the mirrored distribution, P(T'(s) <= -c) = P(T'(-s) >= c), which stays finite there
    upper = _finite(lambda: nct.sf(crit, df, shift), lambda: nct.cdf(-crit, df, -shift))
    lower = _finite(lambda: nct.cdf(-crit, df, shift), lambda: nct.sf(crit, df, -shift))
    return min(1.0, upper + lower)


def _finite(*ways: Callable[[], float]) -> float:
    """The first finite value of ``ways`` (the same probability computed two ways)."""
    for way in ways:
        value = float(way())
        if math.isfinite(value):
            return value
    raise EvaluationError("the noncentral t distribution could not be evaluated here (scipy returned NaN)")


def t_normal_topics(delta: float, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The normal approximation to the topics a paired t-test needs (not rounded):
    ``((z_{alpha/2} + z_beta) / (delta / sd)) ** 2 + z_{alpha/2} ** 2 / 2``, the start of
    :func:`t_topics`' search. ``sd == 0``: 0.0."""
    _positive("delta", delta)
    _deviation("sd", sd)
    _probability("alpha", alpha)
    _probability("power", power)
    z_alpha = float(norm.isf(alpha / 2))
    z_beta = float(norm.isf(1 - power))
    return ((z_alpha + z_beta) * sd / delta) ** 2 + z_alpha**2 / 2 if sd > 0 else 0.0


def t_topics(delta: float, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """The fewest topics (at least 2) with which the paired t-test detects ``delta`` at ``alpha`` with
    at least ``power``, the differences having standard deviation ``sd``: the normal approximation
    (:func:`t_normal_topics`), then the smallest ``n`` whose exact noncentral-t power reaches ``power``."""
    start = t_normal_topics(delta, sd, alpha=alpha, power=power)
    if sd == 0:
        return MIN_TOPICS
    effect = delta / sd
    return _fewest(lambda n: _t_power(effect, n, alpha) >= power, start, "the paired t-test")


def t_detectable(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The minimum detectable difference: the true mean difference the paired t-test with ``n`` topics
    detects at ``alpha`` with exactly ``power``, when the differences have standard deviation ``sd``
    (``sd`` times the effect size solving ``power(e) = power``). ``sd == 0``: 0.0."""
    _deviation("sd", sd)
    _topics("n", n)
    _probability("alpha", alpha)
    _probability("power", power)
    if sd == 0:
        return 0.0
    return sd * _solve(lambda e: _t_power(e, n, alpha) - power)


def anova_noncentrality(min_range: float, variance: float, n: int) -> float:
    """Sakai's worst-case noncentrality of the one-way ANOVA with ``n`` topics per system:
    ``lambda = n * min_range ** 2 / (2 * variance)`` (the best and the worst system ``min_range``
    apart, every other system midway). ``variance`` must be > 0."""
    return n * min_range**2 / (2 * variance)


def anova_power(min_range: float, variance: float, systems: int, n: int, *, alpha: float = 0.05) -> float:
    """The power of the one-way ANOVA F test over ``systems`` systems with ``n`` topics to detect a
    range ``min_range`` between the best and the worst system, with residual variance ``variance``
    (formula in the module docstring). ``variance == 0``: 1.0."""
    _positive("min_range", min_range)
    _deviation("variance", variance)
    _systems(systems)
    _topics("n", n)
    _probability("alpha", alpha)
    if variance == 0:
        return 1.0
    return _anova_power(anova_noncentrality(min_range, variance, n), systems, n, alpha)


def _anova_power(lam: float, systems: int, n: int, alpha: float) -> float:
    df1, df2 = systems - 1, systems * (n - 1)
    crit = float(f_dist.isf(alpha, df1, df2))
    return min(1.0, float(ncf.sf(crit, df1, df2, lam)))


def anova_topics(min_range: float, variance: float, systems: int, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """The fewest topics (at least 2) with which the one-way ANOVA over ``systems`` systems detects a
    range ``min_range`` at ``alpha`` with at least ``power``: the chi-square approximation, then the
    smallest ``n`` whose exact noncentral-F power reaches ``power``. ``variance == 0``: 2."""
    _positive("min_range", min_range)
    _deviation("variance", variance)
    _systems(systems)
    _probability("alpha", alpha)
    _probability("power", power)
    if variance == 0:
        return MIN_TOPICS
    df1 = systems - 1
    crit = float(chi2.isf(alpha, df1))
    # the lambda at which the test with phi_E infinite (a chi-square) has the target power
    lam = _solve(lambda x: float(ncx2.sf(crit, df1, x)) - power)
    start = 2 * variance * lam / min_range**2
    return _fewest(
        lambda n: _anova_power(anova_noncentrality(min_range, variance, n), systems, n, alpha) >= power,
        start,
        "the one-way ANOVA",
    )


def anova_detectable(variance: float, systems: int, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The minimum detectable range between the best and the worst of ``systems`` systems with ``n``
    topics at ``alpha`` and ``power``: ``sqrt(2 * variance * lambda / n)`` for the ``lambda`` whose
    power is exactly ``power``. ``variance == 0``: 0.0."""
    _deviation("variance", variance)
    _systems(systems)
    _topics("n", n)
    _probability("alpha", alpha)
    _probability("power", power)
    if variance == 0:
        return 0.0
    lam = _solve(lambda x: _anova_power(x, systems, n, alpha) - power)
    return math.sqrt(2 * variance * lam / n)


# --------------------------------------------------------------------------------------------------
# searches


def _fewest(enough: Callable[[int], bool], start: float, design: str) -> int:
    """The smallest ``n >= 2`` with ``enough(n)`` (true from some ``n`` on: power grows with the
    topics), searched from the approximation ``start``: a galloping search brackets it, then
    bisection, so a poor start costs a few more steps, never a wrong answer."""
    guess = min(max(MIN_TOPICS, math.ceil(start)), _MAX_TOPICS)
    if enough(guess):
        hi, step = guess, 1
        lo = guess - step
        while lo >= MIN_TOPICS and enough(lo):
            hi, step = lo, step * 2
            lo = max(MIN_TOPICS - 1, hi - step)  # MIN_TOPICS - 1 stands for "too few", never tried
    else:
        lo, step = guess, 1
        hi = guess + step
        while not enough(hi):
            if hi >= _MAX_TOPICS:
                raise EvaluationError(f"{design} would need more than {_MAX_TOPICS:,} topics; the difference is too small to design for")
            lo, step = hi, step * 2
            hi = min(_MAX_TOPICS, lo + step)
    while hi - lo > 1:  # invariant: not enough(lo), enough(hi)
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _solve(gap: Callable[[float], float]) -> float:
    """The root ``x > 0`` of an increasing ``gap`` (a power minus its target), bracketed by doubling."""
    hi = 1.0
    while gap(hi) < 0:
        hi *= 2
        if hi > 1e12:
            raise EvaluationError("no effect size reaches the target power (the target is too close to 1)")
    return float(brentq(gap, 0.0, hi, xtol=1e-14, rtol=1e-12))


# --------------------------------------------------------------------------------------------------
# input checks


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(float(value)):
        raise EvaluationError(f"{name} must be a number, not {value!r}")
    return float(value)


def _positive(name: str, value: object) -> None:
    x = _number(name, value)
    if not 0 < x < math.inf:
        raise EvaluationError(f"{name} must be a finite number > 0 (the minimum difference of interest), got {value!r}")


def _deviation(name: str, value: object) -> None:
    x = _number(name, value)
    if not 0 <= x < math.inf:
        raise EvaluationError(f"{name} must be a finite number >= 0, got {value!r}")


def _probability(name: str, value: object) -> None:
    x = _number(name, value)
    if not 0 < x < 1:
        raise EvaluationError(f"{name} must be strictly between 0 and 1, got {value!r}")


def _whole(name: str, value: object, minimum: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise EvaluationError(f"{name} must be an integer >= {minimum} ({what}), not {value!r}")


def _topics(name: str, value: object) -> None:
    _whole(name, value, MIN_TOPICS, "a test over topics needs at least 2")


def _systems(value: object) -> None:
    _whole("systems", value, 2, "an ANOVA compares at least 2 systems")
