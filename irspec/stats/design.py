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
    topic x system two-way ANOVA without replication (:func:`irspec.stats.significance.residual_variance`, the
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
and the target ``power`` strictly between 0 and 1 and the target power above ``alpha`` (a test has power
``alpha`` when there is no difference at all: below it no difference is the smallest detectable, and any
number of topics reaches it), ``2 <= n <= 10**9`` topics and ``2 <= m <= 10**9`` systems, a standard
deviation or variance finite and >= 0; anything else raises :class:`~irspec.errors.EvaluationError`
naming the argument. A zero standard deviation (or variance) means every difference is detected with
certainty: power 1, 2 topics needed (the fewest a t-test or an F test over topics can use), and a
minimum detectable difference of 0. So does a difference so large that scipy's noncentral distributions
return NaN (the power is then 1 to the last bit, as argued in :func:`_t_power` and :func:`_anova_power`);
a difference so small that more than 10**9 topics would be needed is an error that says so.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

from scipy.optimize import brentq
from scipy.stats import chi2, ncf, nct, ncx2, norm
from scipy.stats import f as f_dist
from scipy.stats import t as t_dist

from irspec.errors import EvaluationError, quote

__all__ = [
    "MIN_TOPICS",
    "anova_detectable",
    "anova_noncentrality",
    "anova_power",
    "anova_topics",
    "check_target",
    "t_detectable",
    "t_normal_topics",
    "t_power",
    "t_topics",
]

MIN_TOPICS = 2
"""The fewest topics a paired t-test (or an F test over topics) can use: one degree of freedom."""

_MAX_TOPICS = 10**9
"""A topic count beyond any collection: a requirement above it is reported as an error, not searched, and
a count above it (of topics or systems) is refused (scipy takes them as doubles, exact to 2**53)."""

_FAR = 20.0
"""How many critical values (and at least how many standard deviations) past it the noncentral
statistic's mean lies where its power is 1 to the last bit (:func:`_t_power`, :func:`_anova_power`)."""


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
    # not ppf(1 - alpha / 2): 1 - alpha / 2 rounds to 1 for a tiny alpha
    crit = _critical(_quietly(lambda: t_dist.isf(alpha / 2, df)), alpha, "t")
    shift = effect * math.sqrt(n)
    # T' = (Z + shift) / sqrt(V / df) < crit needs Z < -shift / 2 or V / df > (shift / 2 crit) ** 2: once
    # shift >= 20 max(crit, 1), each has a probability below 1e-22 (V is chi-square; df = 1 is the widest),
    # so the power is 1 to the last bit, where scipy returns NaN both ways (a huge delta, a tiny sd)
    if shift >= _FAR * max(crit, 1.0):
        return 1.0
    # scipy's noncentral t returns NaN far in a tail (df ~1000, noncentrality ~10); each tail is then
    # taken from the mirrored distribution, P(T'(s) <= -c) = P(T'(-s) >= c), which stays finite there
    upper = _finite(lambda: nct.sf(crit, df, shift), lambda: nct.cdf(-crit, df, -shift))
    lower = _finite(lambda: nct.cdf(-crit, df, shift), lambda: nct.sf(crit, df, -shift))
    return min(1.0, upper + lower)


def _quietly(way: Callable[[], Any]) -> float:
    """``way()``, a value of scipy's distributions, without the RuntimeWarnings scipy prints where it
    cannot compute one (with its own source lines, before irspec's message): it gives NaN or an
    infinity there, which the callers check and explain."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(way())


def _finite(*ways: Callable[[], float]) -> float:
    """The first finite value of ``ways`` (the same probability computed two ways)."""
    for way in ways:
        value = _quietly(way)
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
    check_target(power, alpha)
    z_alpha = float(norm.isf(alpha / 2))
    z_beta = float(norm.isf(1 - power))
    # x * x, not x ** 2: a tiny delta makes x too large to square, which is inf here, an OverflowError there
    x = (z_alpha + z_beta) * sd / delta
    return x * x + z_alpha**2 / 2 if sd > 0 else 0.0


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
    check_target(power, alpha)
    if sd == 0:
        return 0.0
    return sd * _solve(lambda e: _t_power(e, n, alpha) - power)


def anova_noncentrality(min_range: float, variance: float, n: int) -> float:
    """Sakai's worst-case noncentrality of the one-way ANOVA with ``n`` topics per system:
    ``lambda = n * min_range ** 2 / (2 * variance)`` (the best and the worst system ``min_range``
    apart, every other system midway). ``variance`` must be > 0. A range too large to square gives inf."""
    return n * (min_range * min_range) / (2 * variance)


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
    crit = _critical(_quietly(lambda: f_dist.isf(alpha, df1, df2)), alpha, "F")
    # F' = (X / df1) / (V / df2) < crit, X noncentral chi-square, needs (Z + sqrt(lam)) ** 2 < lam / 4 (so
    # Z < -sqrt(lam) / 2) or V / df2 > lam / (4 crit df1): once lam >= 20 ** 2 max(crit df1, 1), each has a
    # probability below 1e-22, so the power is 1 to the last bit, where scipy returns NaN (a huge range)
    if lam >= _FAR**2 * max(crit * df1, 1.0):
        return 1.0
    # ncf is a Poisson mixture of central Fs, and moves at most lam / 2 of its mass off the central one:
    # below 1e-20 the power is the central F's (alpha) to the last bit, where scipy's ncf.sf gives
    # -0.95 at lam = 0 and 0.0 at a subnormal lam (a range whose square underflows)
    if lam < 1e-20:
        return float(f_dist.sf(crit, df1, df2))
    value = _quietly(lambda: ncf.sf(crit, df1, df2, lam))
    if not math.isfinite(value):
        raise EvaluationError(
            "the noncentral F distribution could not be evaluated here (scipy returned NaN)"
        )
    return min(1.0, value)


def anova_topics(
    min_range: float, variance: float, systems: int, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """The fewest topics (at least 2) with which the one-way ANOVA over ``systems`` systems detects a
    range ``min_range`` at ``alpha`` with at least ``power``: the chi-square approximation, then the
    smallest ``n`` whose exact noncentral-F power reaches ``power``. ``variance == 0``: 2."""
    _positive("min_range", min_range)
    _deviation("variance", variance)
    _systems(systems)
    _probability("alpha", alpha)
    _probability("power", power)
    check_target(power, alpha)
    if variance == 0:
        return MIN_TOPICS
    df1 = systems - 1
    crit = _critical(_quietly(lambda: chi2.isf(alpha, df1)), alpha, "chi-square")
    # the lambda at which the test with phi_E infinite (a chi-square) has the target power
    lam = _solve(lambda x: _quietly(lambda: ncx2.sf(crit, df1, x)) - power)
    start = (
        2 * variance * lam / min_range / min_range
    )  # inf, not a ZeroDivisionError, when min_range ** 2 underflows
    return _fewest(
        lambda n: _anova_power(anova_noncentrality(min_range, variance, n), systems, n, alpha) >= power,
        start,
        "the one-way ANOVA",
    )


def anova_detectable(
    variance: float, systems: int, n: int, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The minimum detectable range between the best and the worst of ``systems`` systems with ``n``
    topics at ``alpha`` and ``power``: ``sqrt(2 * variance * lambda / n)`` for the ``lambda`` whose
    power is exactly ``power``. ``variance == 0``: 0.0."""
    _deviation("variance", variance)
    _systems(systems)
    _topics("n", n)
    _probability("alpha", alpha)
    _probability("power", power)
    check_target(power, alpha)
    if variance == 0:
        return 0.0
    lam = _solve(lambda x: _anova_power(x, systems, n, alpha) - power)
    return math.sqrt(2 * variance * lam / n)


# --------------------------------------------------------------------------------------------------
# searches


def _critical(value: float, alpha: float, distribution: str) -> float:
    """``value``, a critical value scipy computed for ``alpha``, if it is one (finite, > 0): far below any
    alpha in use (1e-20 for F, 1e-300 for t) scipy returns inf or -inf, which would make every power 0."""
    if not 0 < value < math.inf:
        raise EvaluationError(
            f"alpha ({alpha:g}) is too small: scipy gives no critical value of the {distribution} distribution for it"
        )
    return value


def _fewest(enough: Callable[[int], bool], start: float, design: str) -> int:
    """The smallest ``n >= 2`` with ``enough(n)`` (true from some ``n`` on: power grows with the
    topics), searched from the approximation ``start``: a galloping search brackets it, then
    bisection, so a poor start costs a few more steps, never a wrong answer. A start past
    :data:`_MAX_TOPICS` (inf for a vanishing difference) is an error at once: that far out the
    approximation is the exact count to within a topic."""
    if not start <= _MAX_TOPICS:
        raise EvaluationError(
            f"{design} would need more than {_MAX_TOPICS:,} topics; the difference is too small to design for"
        )
    guess = max(MIN_TOPICS, math.ceil(start))
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
                raise EvaluationError(
                    f"{design} would need more than {_MAX_TOPICS:,} topics; the difference is too small to design for"
                )
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
            raise EvaluationError(
                "no difference reaches the target power (the target is too close to 1, or alpha too small for the topics)"
            )
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
        raise EvaluationError(
            f"{name} must be a finite number > 0 (the minimum difference of interest), got {value!r}"
        )


def _deviation(name: str, value: object) -> None:
    x = _number(name, value)
    if not 0 <= x < math.inf:
        raise EvaluationError(f"{name} must be a finite number >= 0, got {value!r}")


def _probability(name: str, value: object) -> None:
    x = _number(name, value)
    if not 0 < x < 1:
        raise EvaluationError(f"{name} must be strictly between 0 and 1, got {value!r}")


def check_target(power: float, alpha: float) -> None:
    """Raise unless the target ``power`` is above ``alpha``: a test has power ``alpha`` when there is no
    difference at all, so no difference is the smallest it detects at a lower target, and any number of
    topics reaches it."""
    if not power > alpha:
        raise EvaluationError(
            f"the target power ({power:g}) must be more than alpha ({alpha:g}): a test has power alpha "
            "when there is no difference at all"
        )


def _whole(name: str, value: object, minimum: int, what: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not minimum <= int(value) <= _MAX_TOPICS
    ):
        raise EvaluationError(
            f"{name} must be an integer >= {minimum} and <= {_MAX_TOPICS:,} ({what}), not {quote(value)}"
        )


def _topics(name: str, value: object) -> None:
    _whole(name, value, MIN_TOPICS, "a test over topics needs at least 2")


def _systems(value: object) -> None:
    _whole("systems", value, 2, "an ANOVA compares at least 2 systems")
