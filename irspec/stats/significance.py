"""Significance tests, multiple-comparison corrections, effect sizes and intervals.

Everything here works on *paired* per-query scores: ``a[i]`` and ``b[i]`` are two systems' scores on the
same query (the caller aligns them by query id; nothing here pairs by position on its own). The
differences ``d = a - b`` are the unit of analysis.

Two-system comparisons (:func:`paired`):

``"t"`` (default)
    Paired t-test, two-sided; t, df = n - 1, p and a t confidence interval of the mean difference.
``"randomization"``
    Fisher's sign-flip test on the mean difference. Exact when all ``2**n`` sign vectors fit the
    budget, otherwise ``B`` random flips with ``p = (b + 1) / (B + 1)`` (Phipson & Smyth 2010), which is
    never 0. Permuted statistics are compared with the observed one on exact integers, so the many ties
    of grid-valued metrics such as P@10 are counted (a floating-point ``>=`` undercounts them).
``"bootstrap"``
    Paired bootstrap of the mean difference: percentile or BCa interval, and a shifted-bootstrap p-value
    that is *liberal* with few topics (Urbano et al., SIGIR 2019); hence not the default.
``"wilcoxon"``, ``"sign"``
    Tests of a different null (symmetry / median, and ``P(a>b) = P(a<b)``), not of the mean difference;
    Smucker, Allan & Carterette (CIKM 2007) advise against them for comparing mean effectiveness.

Several systems (:func:`tukey`): Tukey's HSD for the paired design (two-way ANOVA without replication,
systems x topics) and Carterette's randomised Tukey HSD (TOIS 2012). :func:`adjust` applies the
family-wise / false-discovery corrections (same numbers as statsmodels' ``multipletests``).

Numerical conventions shared by every function:

* Differences (or scores) are rounded to ``decimals`` decimal places before anything else, so that
  floating-point noise (``0.8 - 0.7 != 0.1``) neither breaks ties nor invents tiny variances. Internally
  they are held as integers ``K = round(d * 10**decimals)``; the decimals are lowered only if
  ``n * max|K|`` would not fit in 60 bits, which keeps every permutation and bootstrap sum an exact
  int64 and so makes the p-values independent of summation order, machine and thread count.
* Randomness comes only from ``numpy.random.default_rng(seed)``, drawn in a fixed order and in
  memory-bounded blocks whose size does not change the stream: the same seed gives the same p-value
  everywhere.
* Degenerate input never yields NaN: see :func:`paired` for the exact choices.

This module imports scipy at its top: ``import irspec`` stays light because the face loads
:mod:`irspec.stats.significance` only when it is first used (ARCHITECTURE.md, "Import lightness").
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

# Student's t from scipy.special, where scipy.stats.t takes it (stdtr, stdtrit: the same bits): the
# t-test, the commonest, then loads no scipy.stats, several times as slow to import (issue 35's demo);
# the Wilcoxon test and Tukey's HSD load it when they run (the sign test's tail is betainc).
from scipy.special import betainc, ndtr, ndtri, stdtr, stdtrit

from irspec.errors import EvaluationError, shorten
from irspec.stats.outcome import ComparisonResult, PairResult
from irspec.stats.resampling import (
    MAX_DECIMALS,
    MAX_RESAMPLES,
    RESAMPLES_WHY,
    bootstrap_sums,
    quantise,
    sign_flip_exact,
    sign_flip_hits,
    tukey_ranges,
)
from irspec.stats.student import mean_t_interval, within

__all__ = [
    "ADJUST_METHODS",
    "BOOTSTRAP_METHODS",
    "INTERVAL_METHODS",
    "NULL_HYPOTHESES",
    "TESTS",
    "ZERO_METHODS",
    "ComparisonResult",
    "PairResult",
    "adjust",
    "bootstrap_ci",
    "mean_ci",
    "paired",
    "residual_variance",
    "sign_p_value",
    "tukey",
]

#: The tests :func:`paired` offers, in the order a report would list them.
TESTS: tuple[str, ...] = ("t", "randomization", "bootstrap", "wilcoxon", "sign")

#: The corrections :func:`adjust` offers.
ADJUST_METHODS: tuple[str, ...] = ("none", "bonferroni", "holm", "bh", "by")

#: The bootstrap confidence-interval methods.
BOOTSTRAP_METHODS: tuple[str, ...] = ("bca", "percentile")

#: The intervals :func:`mean_ci` gives around one system's mean score.
INTERVAL_METHODS: tuple[str, ...] = ("t", "bootstrap")

#: Zero-difference handling of the Wilcoxon signed-rank test (as in ``scipy.stats.wilcoxon``).
ZERO_METHODS: tuple[str, ...] = ("wilcox", "pratt", "zsplit")

_WILCOXON_METHODS: tuple[str, ...] = ("auto", "exact", "asymptotic")

#: Plain-English null hypothesis of each test (and of the Tukey tests), as reported in ``ComparisonResult.null``.
NULL_HYPOTHESES: dict[str, str] = {
    "t": "mean difference is 0",
    "randomization": "mean difference is 0 (system labels exchangeable within each query)",
    "bootstrap": "mean difference is 0",
    "wilcoxon": "median difference is 0 (symmetric distribution)",
    "sign": "P(a>b) = P(a<b)",
    # the Tukey tests (:func:`tukey`, PairResult.test): one null for the whole family of pairs
    "tukey-hsd": "all runs have the same mean (studentized range over all pairs)",
    "randomized-tukey-hsd": "all runs have the same mean (studentized range over all pairs)",
}


# --------------------------------------------------------------------------------------------------
# public API


def paired(
    a: ArrayLike,
    b: ArrayLike,
    *,
    test: str = "t",
    permutations: int = 10_000,
    seed: int = 42,
    alpha: float = 0.05,
    confidence: float = 0.95,
    bootstrap: str = "bca",
    zero_method: str = "wilcox",
    correction: bool = False,
    wilcoxon_method: str = "auto",
    decimals: int = 10,
) -> ComparisonResult:
    """Compare two systems on aligned per-query scores with one two-sided significance test.

    Parameters
    ----------
    a, b:
        Per-query scores of systems A and B, 1-D, same length, same query order, finite.
    test:
        One of :data:`TESTS` (see the module docstring for what each one tests).
    permutations:
        Budget of the randomization test (exact enumeration when ``2**n <= permutations``, else this
        many random sign vectors) and number of resamples of the bootstrap test.
    seed:
        Seed of ``numpy.random.default_rng``; only the randomization and bootstrap tests use it.
    alpha:
        Level for ``significant`` (``p_value <= alpha``, the rule under which the Monte-Carlo p-value
        ``(b+1)/(B+1)`` has size at most ``alpha``).
    confidence:
        Level of the confidence interval of the mean difference.
    bootstrap:
        ``"bca"`` or ``"percentile"``: the interval reported by the bootstrap test.
    zero_method, correction, wilcoxon_method:
        Wilcoxon options, passed to ``scipy.stats.wilcoxon`` (``zero_method``, ``correction``, and
        ``method`` ``"exact"`` or ``"asymptotic"``). ``"auto"`` resolves here, not in scipy, so the
        answer does not change with the scipy version: exact when there are at most 50 non-zero
        differences, no zeros and no tied ``|d|``; with ties or zeros, the exact distribution of the
        signed ranks given them (every sign of the non-zero differences enumerated, as scipy 1.17's
        ``auto`` does with a ``PermutationMethod`` that can enumerate) when ``2**n <= permutations``
        for the ``n`` non-zero differences, where the normal approximation can give a p below the
        least any sign pattern can (0.046 for four equal differences, whose least is 0.125);
        asymptotic (tie-corrected normal) otherwise.
    decimals:
        Differences are rounded to this many decimals before testing and before counting
        wins/ties/losses (see the module docstring).

    Degenerate input
    ----------------
    * Identical systems (all ``d == 0``): every test gives ``p_value = 1.0`` and ``statistic = 0.0``;
      mean difference, effect sizes and the interval are all ``0.0``.
    * Constant non-zero differences (sd = 0): Cohen's d and t are infinite, so ``effect_size`` and
      ``hedges_g`` are ``None`` whatever the test, and the t-test reports ``statistic = None`` with
      ``p_value = 0.0`` (its limit as sd -> 0). The t interval is the zero-width ``[mean, mean]``. The
      other tests are well defined and computed as usual (the randomization test, for instance, gives
      ``2 / 2**n`` when it enumerates).
    * ``mean(b) == 0``: ``relative_change`` is ``None``.
    * ``n == 2``: Hedges' correction ``J = 1 - 3/(4 df - 1)`` is 0, so ``hedges_g`` is 0.0.

    Raises
    ------
    EvaluationError
        Fewer than 2 pairs, arrays of different lengths or shapes, non-finite scores, or an invalid
        option.
    """
    _choice("test", test, TESTS)
    _choice("bootstrap", bootstrap, BOOTSTRAP_METHODS)
    _choice("zero_method", zero_method, ZERO_METHODS)
    _choice("wilcoxon_method", wilcoxon_method, _WILCOXON_METHODS)
    permutations = _count("permutations", permutations)
    seed = _integer("seed", seed, minimum=0)
    decimals = _decimals(decimals)
    _unit_interval("alpha", alpha)
    _unit_interval("confidence", confidence)
    if not isinstance(correction, (bool, np.bool_)):
        raise EvaluationError(f"correction must be True or False, not {correction!r}")

    x = _vector("a", a)
    y = _vector("b", b)
    if x.shape != y.shape:
        raise EvaluationError(f"a and b must be paired per query: got {x.size} and {y.size} scores")
    _at_least_two(x.size, "paired queries")

    with np.errstate(over="ignore"):  # differences beyond a double: quantise says so
        k, scale, used_decimals = quantise(x - y, decimals)
    n = k.size
    total = int(k.sum())
    mean = total / (n * scale)
    dq = k / scale
    constant = bool(np.all(k == k[0]))
    # sd from the integers' constancy, not from floats, so constant differences give exactly 0
    sd = 0.0 if constant else float(np.std(dq, ddof=1))
    df = n - 1

    wins = int(np.count_nonzero(k > 0))
    losses = int(np.count_nonzero(k < 0))
    ties = n - wins - losses

    if sd > 0:
        d = mean / sd
        effect: float | None = d
        hedges: float | None = d * (1.0 - 3.0 / (4.0 * df - 1.0))
    elif total == 0:
        effect, hedges = 0.0, 0.0
    else:
        effect, hedges = None, None

    mean_b = float(np.mean(y))
    relative = mean / mean_b if mean_b != 0 else None

    ci_low, ci_high = _t_interval(mean, sd, n, confidence)
    ci_method = "t"
    statistic: float | None
    exact = False
    used_permutations: int | None = None
    used_seed: int | None = None
    mc_se = 0.0

    if test == "t":
        statistic, p_value = _t_test(mean, sd, n)
        exact = True
    elif test == "randomization":
        statistic = mean
        if 2**n <= permutations:
            p_value = sign_flip_exact(k)
            used_permutations, exact = 2**n, True
        else:
            rng = np.random.default_rng(seed)
            hits = sign_flip_hits(k, permutations, rng)
            p_value = (hits + 1) / (permutations + 1)
            mc_se = math.sqrt(p_value * (1.0 - p_value) / permutations)
            used_permutations, used_seed = permutations, seed
    elif test == "bootstrap":
        statistic = mean
        rng = np.random.default_rng(seed)
        sums = bootstrap_sums(k, permutations, rng)
        # shifted bootstrap: centre the resampled sums on the observed one to mimic the null
        hits = int(np.count_nonzero(np.abs(sums - total) >= abs(total)))
        p_value = (hits + 1) / (permutations + 1)
        mc_se = math.sqrt(p_value * (1.0 - p_value) / permutations)
        ci_low, ci_high = _bootstrap_interval(sums, total, dq, scale, confidence, bootstrap)
        ci_method = bootstrap
        used_permutations, used_seed = permutations, seed
    elif test == "wilcoxon":
        statistic, p_value, exact = _wilcoxon(dq, k, zero_method, correction, wilcoxon_method, permutations)
    else:  # sign
        statistic, p_value = _sign_test(wins, losses)
        exact = True

    if test == "sign":
        direction = (wins > losses) - (wins < losses)
    elif test == "wilcoxon":
        direction = _signed_rank_direction(k, zero_method)
    else:
        direction = (total > 0) - (total < 0)
    p_value = min(1.0, max(0.0, float(p_value)))
    return ComparisonResult(
        test=test,
        null=NULL_HYPOTHESES[test],
        n=n,
        statistic=None if statistic is None else float(statistic),
        p_value=p_value,
        alpha=float(alpha),
        significant=p_value <= alpha,
        mean_difference=float(mean),
        relative_change=None if relative is None else float(relative),
        confidence=float(confidence),
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        ci_method=ci_method,
        effect_size=None if effect is None else float(effect),
        hedges_g=None if hedges is None else float(hedges),
        wins=wins,
        ties=ties,
        losses=losses,
        df=df if test == "t" else None,
        permutations=used_permutations,
        exact=exact,
        seed=used_seed,
        mc_se=float(mc_se),
        decimals=used_decimals,
        direction=direction,
    )


def adjust(p_values: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons.

    ``method`` is one of :data:`ADJUST_METHODS`: ``"none"``, ``"bonferroni"``, ``"holm"`` (step-down,
    family-wise error), ``"bh"`` (Benjamini-Hochberg) or ``"by"`` (Benjamini-Yekutieli) false discovery
    rate. The results equal statsmodels' ``multipletests(p, method=...)[1]`` with ``bonferroni``,
    ``holm``, ``fdr_bh`` and ``fdr_by``: monotone in the raw p-values and clipped to 1. The output keeps
    the input order. Which p-values form the family (per metric, across metrics) is the caller's
    decision and should be reported with the results.

    Raises
    ------
    EvaluationError
        Unknown method, input not 1-D, or values outside [0, 1] (including NaN).
    """
    _choice("method", method, ADJUST_METHODS)
    try:
        p = np.asarray(p_values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"p-values must be numbers: {exc}") from None
    if p.ndim != 1:
        raise EvaluationError(f"p-values must be a 1-D sequence, got shape {p.shape}")
    if not np.all((p >= 0) & (p <= 1)):
        raise EvaluationError("p-values must lie in [0, 1] (no NaN)")
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)

    # stable sort so tied p-values keep a deterministic order (as statsmodels does)
    order = np.argsort(p, kind="mergesort")
    ranked = p[order]
    if method == "holm":
        stepped = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
    else:
        factor = m / np.arange(1, m + 1)
        if method == "by":
            factor = factor * np.sum(1.0 / np.arange(1, m + 1))
        # step-up: each adjusted value is the smallest scaled p at or above its rank
        stepped = np.minimum.accumulate((ranked * factor)[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def tukey(
    scores: ArrayLike,
    *,
    randomized: bool = False,
    permutations: int = 10_000,
    seed: int = 42,
    confidence: float = 0.95,
    decimals: int = 10,
    alpha: float = 0.05,
    pairs: Sequence[tuple[int, int]] | None = None,
) -> list[PairResult]:
    """All pairwise comparisons of several systems with family-wise control (Tukey's HSD).

    ``scores`` is a ``systems x topics`` matrix. Returns one :class:`PairResult` per pair: every
    ``i < j`` in the order (0,1), (0,2), ..., (1,2), ..., or the ``pairs`` asked for, each ``(a, b)``
    in either order (``d = x[a] - x[b]``); the family the p-values adjust over is always every pair.
    Each result carries the pair's effect sizes, wins/ties/losses and ``relative_change`` as
    :func:`paired` gives them (rounded to ``decimals``); ``significant`` is ``p_value <= alpha``.

    Parametric (``randomized=False``): the paired design is a two-way ANOVA without replication,
    ``x[i, j] = mu + system_i + topic_j + e``. The residual mean square is
    ``MSE = sum(e_ij**2) / ((k-1)(n-1))`` with ``e_ij = x_ij - mean_i. - mean_.j + mean..``;
    ``q = |mean_i - mean_j| / sqrt(MSE / n)`` and ``p = studentized_range.sf(q, k, (k-1)(n-1))`` (below
    1e-11, where scipy's tail is not accurate, Bonferroni's bound over the pairs: :func:`_range_tail`); the
    interval is ``diff +- q_crit * sqrt(MSE / n)`` with ``q_crit`` the ``confidence`` quantile.
    (``scipy.stats.tukey_hsd`` is one-way with independent groups: the wrong design for topics.) With
    ``MSE == 0`` a zero difference gets ``q = 0, p = 1``; a non-zero one ``statistic=None, p = 0.0`` and
    a zero-width interval.

    Randomised (``randomized=True``, Carterette, TOIS 2012): ``permutations`` times, shuffle the scores
    across systems independently within each topic and record the range (max - min) of the system
    means; ``p(i, j) = (#{range >= |mean_i - mean_j|} + 1) / (B + 1)``, compared on exact integers
    (scores rounded to ``decimals``) so ties count. Deterministic for a given ``seed``. No interval.

    Raises
    ------
    EvaluationError
        Not a 2-D matrix, fewer than 2 systems or 2 topics, non-finite scores, a pair that is not two
        different rows, or an invalid option.
    """
    permutations = _count("permutations", permutations)
    seed = _integer("seed", seed, minimum=0)
    decimals = _decimals(decimals)
    _unit_interval("confidence", confidence)
    _unit_interval("alpha", alpha)
    x = _score_matrix(scores)
    n_sys, n_top = x.shape
    wanted = _pairs(pairs, n_sys)

    k, scale, _ = quantise(x, decimals)
    row_sums = k.sum(axis=1)
    means = row_sums / (n_top * scale)
    method = "randomized-tukey-hsd" if randomized else "tukey-hsd"
    if randomized:
        ranges = np.sort(tukey_ranges(k, permutations, np.random.default_rng(seed)))
    else:
        df = (n_sys - 1) * (n_top - 1)
        half_width_unit = math.sqrt(_residual_mean_square(k, scale) / n_top)
        from scipy.stats import studentized_range

        q_crit = float(studentized_range.ppf(confidence, n_sys, df))

    results = []
    for i, j in wanted:
        diff = float(means[i] - means[j])
        test: dict[str, Any]
        if randomized:
            gap = abs(int(row_sums[i]) - int(row_sums[j]))
            hits = permutations - int(np.searchsorted(ranges, gap, side="left"))
            p = (hits + 1) / (permutations + 1)
            test = {"statistic": abs(diff), "p_value": float(p), "ci_low": None, "ci_high": None, "confidence": None,
                    "ci_method": None, "df": None, "permutations": permutations, "seed": seed,
                    "mc_se": math.sqrt(p * (1.0 - p) / permutations)}  # fmt: skip
        else:
            q: float | None
            if row_sums[i] == row_sums[j]:
                q, p = 0.0, 1.0
            elif half_width_unit == 0.0:
                q, p = None, 0.0
            else:
                q = abs(diff) / half_width_unit
                p = _range_tail(q, n_sys, df)
            test = {"statistic": q, "p_value": p, "ci_low": diff - q_crit * half_width_unit,
                    "ci_high": diff + q_crit * half_width_unit, "confidence": float(confidence), "ci_method": "tukey",
                    "df": df, "permutations": None, "seed": None, "mc_se": 0.0}  # fmt: skip
        # the pair's effect sizes and wins/ties/losses are the t-test's; its p and interval are replaced
        described = paired(x[i], x[j], test="t", confidence=confidence, alpha=alpha, decimals=decimals)
        results.append(
            PairResult.extended(
                described,
                a=i,
                b=j,
                test=method,
                null=NULL_HYPOTHESES[method],
                mean_difference=diff,
                exact=False,
                significant=test["p_value"] <= alpha,
                **test,
            )
        )
    return results


def bootstrap_ci(
    d: ArrayLike,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 42,
    method: str = "bca",
    decimals: int = 10,
) -> tuple[float, float]:
    """Paired-bootstrap confidence interval ``(low, high)`` of the mean of the differences ``d``.

    ``method`` is ``"percentile"`` or ``"bca"`` (bias-corrected and accelerated, Efron 1987, computed as
    ``scipy.stats.bootstrap`` does: jackknife acceleration, linear-interpolated percentiles). The
    resamples are the rows of ``default_rng(seed).integers(0, n, size=(resamples, n))``. Constant ``d``
    gives ``(mean, mean)``; if the BCa bias correction is infinite (the observed mean lies outside all
    resampled means, possible only for tiny ``n``) the percentile interval is returned instead of NaN.

    Raises
    ------
    EvaluationError
        Fewer than 2 values, non-finite values, or an invalid option.
    """
    _choice("method", method, BOOTSTRAP_METHODS)
    resamples = _count("resamples", resamples)
    seed = _integer("seed", seed, minimum=0)
    decimals = _decimals(decimals)
    _unit_interval("confidence", confidence)
    x = _vector("d", d)
    _at_least_two(x.size, "differences")
    k, scale, _ = quantise(x, decimals)
    sums = bootstrap_sums(k, resamples, np.random.default_rng(seed))
    return _bootstrap_interval(sums, int(k.sum()), k / scale, scale, confidence, method)


def mean_ci(
    values: ArrayLike,
    *,
    method: str = "t",
    confidence: float = 0.95,
    mean: float | None = None,
    resamples: int = 10_000,
    seed: int = 42,
    bounds: tuple[float | None, float | None] = (None, None),
) -> tuple[float, float]:
    """Confidence interval ``(low, high)`` of one system's mean score over its queries.

    ``method="t"``: Student's t interval, ``mean ± t(n-1) · s / √n``, centred on ``mean`` when given
    (the caller's exact mean, such as irspec's aggregate summed as trec_eval sums), else on the values'
    mean. ``method="bootstrap"``: the BCa bootstrap interval of :func:`bootstrap_ci` (``resamples``
    resamples drawn with ``seed``). Constant values give ``(mean, mean)``. The interval is cut at
    ``bounds``, the range of the values where they have one (a metric's ``MetricDef.bounds``): the true
    mean lies within it, so the cut interval holds the true mean exactly when the whole one does, and
    a symmetric t interval never shows a precision below 0.

    Raises
    ------
    EvaluationError
        Fewer than 2 values, non-finite values, or an invalid option.
    """
    _choice("method", method, INTERVAL_METHODS)
    _unit_interval("confidence", confidence)
    x = _vector("values", values)
    _at_least_two(x.size, "values")
    if method == "t":
        return mean_t_interval(x, confidence=confidence, mean=mean, bounds=bounds)
    return within(
        *bootstrap_ci(x, confidence=confidence, resamples=resamples, seed=seed, method="bca"), bounds
    )


# --------------------------------------------------------------------------------------------------
# the tests


def _t_interval(mean: float, sd: float, n: int, confidence: float) -> tuple[float, float]:
    if sd == 0.0:
        return mean, mean
    half = float(stdtrit(n - 1, 0.5 + confidence / 2.0)) * sd / math.sqrt(n)
    return mean - half, mean + half


def _t_test(mean: float, sd: float, n: int) -> tuple[float | None, float]:
    if sd == 0.0:
        # identical systems: nothing to test; constant shift: t is infinite and p its limit, 0
        return (0.0, 1.0) if mean == 0.0 else (None, 0.0)
    t = mean / (sd / math.sqrt(n))
    return t, float(2.0 * stdtr(n - 1, -abs(t)))


def _bootstrap_interval(
    sums: np.ndarray, total: int, dq: np.ndarray, scale: float, confidence: float, method: str
) -> tuple[float, float]:
    n = dq.size
    mean = total / (n * scale)
    if np.all(dq == dq[0]):
        return mean, mean
    theta = sums / (n * scale)
    tail = (1.0 - confidence) / 2.0
    levels = np.array([tail, 1.0 - tail])
    if method == "bca":
        # bias correction: share of resampled means below the observed one, ties counting half (as
        # scipy >= 1.11 does; grid-valued metrics tie often), compared on exact integers.
        # Acceleration: the jackknife, which for the mean reduces to the skewness of d.
        below = np.count_nonzero(sums < total) + np.count_nonzero(sums <= total)
        z0 = float(ndtri(below / (2.0 * sums.size)))
        # an infinite z0 (observed mean outside every resample; tiny n or B) makes BCa undefined:
        # keep the percentile levels rather than return NaN
        if math.isfinite(z0):
            dev = dq - mean
            a_hat = float(np.sum(dev**3) / (6.0 * np.sum(dev**2) ** 1.5))
            z = ndtri(levels)
            adjusted = ndtr(z0 + (z0 + z) / (1.0 - a_hat * (z0 + z)))
            if np.all(np.isfinite(adjusted)):
                levels = adjusted
    low, high = np.percentile(theta, 100.0 * levels)
    return float(low), float(high)


def _wilcoxon(
    dq: np.ndarray, k: np.ndarray, zero_method: str, correction: bool, method: str, permutations: int
) -> tuple[float, float, bool]:
    nonzero = k[k != 0]
    if nonzero.size == 0:
        # identical systems: scipy returns NaN (nothing left to rank) but there is no evidence at all
        return 0.0, 1.0, True
    no_ties = np.unique(np.abs(nonzero)).size == nonzero.size
    no_zeros = nonzero.size == k.size
    if method == "auto" and not (no_ties and no_zeros) and 2**nonzero.size <= permutations:
        return _signed_rank_exact(k, zero_method)
    if method == "auto":
        method = "exact" if (nonzero.size <= 50 and no_ties and no_zeros) else "asymptotic"
    from scipy.stats import wilcoxon

    try:
        res = wilcoxon(dq, zero_method=zero_method, correction=correction, method=method)
    except ValueError:
        if method != "asymptotic":
            raise
        # scipy < 1.11 spells it "approx"
        res = wilcoxon(dq, zero_method=zero_method, correction=correction, method="approx")
    exact = method == "exact" and no_ties and no_zeros
    return float(res.statistic), float(res.pvalue), exact


RANGE_TAIL_FLOOR = 1e-11
"""Below this, scipy's studentized range tail is no longer accurate (0 at 98 degrees of freedom where
the true p is 1e-18; a floor near 1e-13 at 1,000): :func:`_range_tail` gives a bound instead."""


def _range_tail(q: float, systems: int, df: int) -> float:
    """P(Q >= q) for the studentized range of ``systems`` means with ``df`` degrees of freedom. Where
    scipy's ``studentized_range.sf`` falls below :data:`RANGE_TAIL_FLOOR`, Bonferroni's bound over the
    m = k(k-1)/2 pairs instead: m P(|T_df| >= q/√2), since Q >= q only if some pair's t is at least
    q/√2. It is at least the true p and at most m times it (exact for two systems), where scipy's value
    can be 0 or a fixed floor."""
    from scipy.stats import studentized_range

    p = float(studentized_range.sf(q, systems, df))
    if p < RANGE_TAIL_FLOOR:
        pairs = systems * (systems - 1) // 2
        p = pairs * 2.0 * float(stdtr(df, -q / math.sqrt(2.0)))
    return min(1.0, max(0.0, p))


def _doubled_ranks(k: np.ndarray, zero_method: str) -> tuple[np.ndarray, np.ndarray]:
    """The differences ``k`` (integers) that Wilcoxon's test ranks, and twice their ranks by ``|k|``
    (integers: ties take their average rank): zeros dropped before ranking (``wilcox``), or ranked with
    the others (``pratt``, ``zsplit``)."""
    d = k[k != 0] if zero_method == "wilcox" else k
    _, inverse, counts = np.unique(np.abs(d), return_inverse=True, return_counts=True)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return d, (2 * starts + counts + 1)[inverse]


def _signed_rank_direction(k: np.ndarray, zero_method: str) -> int:
    """The sign of W+ - W-, the signed ranks' sum (a zero has no sign: ``zsplit``'s halves add alike to
    both sums)."""
    d, doubled = _doubled_ranks(k, zero_method)
    total = int(np.sum(np.sign(d) * doubled))
    return (total > 0) - (total < 0)


def _signed_rank_exact(k: np.ndarray, zero_method: str) -> tuple[float, float, bool]:
    """Wilcoxon's test from the exact distribution of the signed ranks given their ties and zeros: the
    share of the sign patterns of the non-zero differences whose |W+ - W-| is at least the observed
    one (a zero's rank has no sign to flip), counted on integers (:func:`sign_flip_exact`); the
    statistic min(W+, W-), scipy's, ``zsplit`` giving half of each zero's rank to both."""
    d, doubled = _doubled_ranks(k, zero_method)
    signed = np.sign(d) * doubled
    zeros = int(doubled[d == 0].sum()) if zero_method == "zsplit" else 0  # half to each side
    smaller = min(int(doubled[d > 0].sum()), int(doubled[d < 0].sum())) + zeros / 2
    return smaller / 2, sign_flip_exact(signed[signed != 0]), True


def _sign_test(wins: int, losses: int) -> tuple[float, float]:
    if wins + losses == 0:
        return 0.0, 1.0
    return float(wins), sign_p_value(wins, losses)


def sign_p_value(wins: int, losses: int) -> float:
    """The two-sided exact sign test's p-value for ``wins`` against ``losses`` (ties left out): with
    ``n = wins + losses`` and ``m = min(wins, losses)``, the probability under ``P(win) = P(loss) = 1/2``
    of a split at least as uneven,

        p = min(1, 2 * sum_{i=0..m} C(n, i) / 2**n),

    and 1 for an even split or none (Conover, *Practical Nonparametric Statistics*, 3rd ed., 1999,
    section 3.4). The binomial tail is the regularised incomplete beta function ``I_{1/2}(n - m, m + 1)``
    (``scipy.special.betainc``, Boost's): ``scipy.stats.binomtest(wins, n, 0.5)``'s p-value within a few
    units in the last place, without importing ``scipy.stats``, several times as slow to import (paid by
    every ``irspec online`` that interleaves, issue 35). One departure: binomtest counts as likely as the
    split seen any split whose probability is within a factor ``1 + 1e-7`` of it, which over some twenty
    million queries makes a split one or two from even count the even one too, and gives 1; this gives
    the exact value, 1 less the even split's probability."""
    if not all(isinstance(c, numbers.Integral) and c >= 0 for c in (wins, losses)):
        raise EvaluationError(f"wins and losses must be counts (integers >= 0), got {wins!r} and {losses!r}")
    n, m = wins + losses, min(wins, losses)
    if wins == losses:
        return 1.0
    return min(1.0, 2.0 * float(betainc(n - m, m + 1, 0.5)))


def residual_variance(scores: ArrayLike, *, decimals: int = 10) -> float:
    """The residual variance of the two-way ANOVA without replication (systems x topics), the one
    Tukey's HSD (:func:`tukey`) and Sakai's topic set size design (:mod:`irspec.stats.design`) use.

    ``scores`` is a ``systems x topics`` matrix; with ``x[i, j] = mu + system_i + topic_j + e``,
    ``V_E = sum(e_ij**2) / ((k-1)(n-1))`` where ``e_ij = x_ij - mean_i. - mean_.j + mean..``
    (Sakai, "Topic set size design", IRJ 2016). Scores are rounded to ``decimals`` places first, as in
    :func:`tukey`; exactly additive scores give 0.0.

    Raises
    ------
    EvaluationError
        Not a 2-D matrix, fewer than 2 systems or 2 topics, or non-finite scores.
    """
    decimals = _decimals(decimals)
    k, scale, _ = quantise(_score_matrix(scores), decimals)
    return _residual_mean_square(k, scale)


def _residual_mean_square(k: np.ndarray, scale: float) -> float:
    """The residual mean square of the quantised matrix ``k`` (scores times ``scale``)."""
    n_sys, n_top = k.shape
    xq = k / scale
    residuals = xq - xq.mean(axis=1, keepdims=True) - xq.mean(axis=0, keepdims=True) + xq.mean()
    # exactly additive scores (every interaction contrast zero on the integers) have MSE 0; floats
    # would leave ~1e-33 of noise and report an absurd q
    if not np.any(k - k[:, :1] - k[:1, :] + k[0, 0]):
        return 0.0
    return float(np.sum(residuals**2)) / ((n_sys - 1) * (n_top - 1))


def _score_matrix(scores: ArrayLike) -> np.ndarray:
    """``scores`` as a finite systems x topics matrix of at least 2 x 2."""
    try:
        x = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"scores must be a numeric systems x topics matrix: {exc}") from None
    if x.ndim != 2:
        raise EvaluationError(f"scores must be a 2-D systems x topics matrix, got shape {x.shape}")
    _at_least_two(x.shape[0], "systems")
    _at_least_two(x.shape[1], "topics")
    if not np.all(np.isfinite(x)):
        raise EvaluationError("scores contain NaN or infinite values")
    return x


# --------------------------------------------------------------------------------------------------
# input handling


def _vector(name: str, values: ArrayLike) -> np.ndarray:
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"{name} must be a sequence of numbers: {exc}") from None
    if x.ndim != 1:
        raise EvaluationError(f"{name} must be 1-D per-query scores, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise EvaluationError(f"{name} contains NaN or infinite scores")
    return x


def _pairs(pairs: Sequence[tuple[int, int]] | None, systems: int) -> list[tuple[int, int]]:
    """The pairs of rows :func:`tukey` reports: every ``i < j`` by default, else ``pairs``, checked."""
    if pairs is None:
        return [(i, j) for i in range(systems) for j in range(i + 1, systems)]
    out = []
    for pair in pairs:
        try:
            i, j = (operator.index(v) for v in pair)
        except (TypeError, ValueError):
            raise EvaluationError(
                f"pairs must be (a, b) row indices of the scores, not {shorten(repr(pair))}"
            ) from None
        if not (0 <= i < systems and 0 <= j < systems) or i == j:
            raise EvaluationError(
                f"pairs must be two different rows of the {systems} systems (0 to {systems - 1}), not {(i, j)}"
            )
        out.append((i, j))
    return out


def _at_least_two(count: int, what: str) -> None:
    if count < 2:
        raise EvaluationError(f"need at least 2 {what} to test, got {count}")


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise EvaluationError(f"{name} must be one of {options}, not {value!r}")


def _integer(name: str, value: object, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise EvaluationError(f"{name} must be an integer, not {value!r}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise EvaluationError(f"{name} must be an integer, not {value!r}") from None
    if number < minimum:
        raise EvaluationError(f"{name} must be at least {minimum}, got {number}")
    return number


def _decimals(value: object) -> int:
    """The decimals scores are rounded to: an integer from 0 to :data:`~irspec.stats.resampling.MAX_DECIMALS`."""
    number = _integer("decimals", value, minimum=0)
    if number > MAX_DECIMALS:
        raise EvaluationError(
            f"decimals must be at most {MAX_DECIMALS} (10**decimals must be a float), got {shorten(str(number))}"
        )
    return number


def _count(name: str, value: object) -> int:
    """A number of permutations or resamples: an integer from 1 to :data:`~irspec.stats.resampling.MAX_RESAMPLES`."""
    number = _integer(name, value, minimum=1)
    if number > MAX_RESAMPLES:
        raise EvaluationError(
            f"{name} must be at most {MAX_RESAMPLES:,} ({RESAMPLES_WHY}), got {shorten(str(number))}"
        )
    return number


def _unit_interval(name: str, value: object) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise EvaluationError(f"{name} must be a number strictly between 0 and 1, not {value!r}")
    if not 0.0 < float(value) < 1.0:
        raise EvaluationError(f"{name} must be strictly between 0 and 1, got {value!r}")
