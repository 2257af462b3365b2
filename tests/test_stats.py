"""Tests of irspec.stats.significance against independent references.

References used: scipy (ttest_rel, wilcoxon, binomtest, permutation_test, bootstrap, studentized_range),
statsmodels (multipletests, OLS residual mean square) and brute-force enumerations written here with
exact integer / Fraction arithmetic.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as st

from irspec.errors import EvaluationError, IrspecError
from irspec.stats import resampling
from irspec.stats import significance as stats

# --------------------------------------------------------------------------------------------------
# data


def grid_pair(seed: int, n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """P@10-like scores (k/10) of two systems, with many tied differences and zeros."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 11, n)
    b = np.clip(a + rng.integers(-3, 3, n), 0, 10)
    return a / 10, b / 10


def continuous_pair(seed: int, n: int = 30, shift: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = rng.random(n)
    return b + shift + rng.normal(0, 0.1, n), b


def brute_force_sign_flip_p(a_int: np.ndarray, b_int: np.ndarray) -> Fraction:
    """Exact two-sided Fisher p over all 2**n sign vectors, on integers."""
    d = [int(x) - int(y) for x, y in zip(a_int, b_int, strict=True)]
    observed = abs(sum(d))
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(d))
        if abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed
    )
    return Fraction(hits, 2 ** len(d))


def with_generator(function, *args, seed: int, **kwargs):
    """Call a scipy resampling function with a seeded Generator, whatever scipy calls the argument."""
    try:
        return function(*args, rng=np.random.default_rng(seed), **kwargs)
    except TypeError:  # scipy < 1.15 calls it random_state
        return function(*args, random_state=np.random.default_rng(seed), **kwargs)


def scipy_bootstrap(d: np.ndarray, resamples: int, seed: int, method: str):
    return with_generator(st.bootstrap, (d,), np.mean, seed=seed, n_resamples=resamples, method=method)


# --------------------------------------------------------------------------------------------------
# paired t


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_t_matches_scipy_ttest_rel(seed: int, confidence: float) -> None:
    a, b = continuous_pair(seed)
    ref = st.ttest_rel(a, b)
    ci = ref.confidence_interval(confidence_level=confidence)
    r = stats.paired(a, b, test="t", confidence=confidence)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-8)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-8)
    assert r.df == ref.df == len(a) - 1
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-8)
    assert r.ci_method == "t" and r.null == "mean difference is 0"


def test_other_tests_report_the_t_interval() -> None:
    a, b = continuous_pair(3)
    ci = st.ttest_rel(a, b).confidence_interval()
    for test in ("randomization", "wilcoxon", "sign"):
        r = stats.paired(a, b, test=test)
        assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-8)
        assert r.ci_method == "t"


# --------------------------------------------------------------------------------------------------
# randomization


@pytest.mark.parametrize("seed", [0, 5, 11])
def test_exact_randomization_equals_brute_force_on_tied_grid_data(seed: int) -> None:
    a, b = grid_pair(seed)
    r = stats.paired(a, b, test="randomization", permutations=2**16)
    expected = brute_force_sign_flip_p(np.rint(a * 10), np.rint(b * 10))
    assert r.exact and r.permutations == 2**16 and r.mc_se == 0.0 and r.seed is None
    # the denominator is a power of two, so the float is exact
    assert Fraction(r.p_value) == expected


def test_ties_at_the_observed_statistic_are_counted() -> None:
    # the data behind the ranx complaint: many permuted sums equal the observed one
    a, b = grid_pair(5)
    d = [int(x) for x in np.rint((a - b) * 10)]
    observed = abs(sum(d))
    sums = [
        abs(sum(s * x for s, x in zip(signs, d, strict=True)))
        for signs in itertools.product((1, -1), repeat=len(d))
    ]
    strictly_greater = sum(s > observed for s in sums)
    equal = sum(s == observed for s in sums)
    assert equal > 2  # the data set really exercises ties
    r = stats.paired(a, b, test="randomization", permutations=2**16)
    assert r.p_value == (strictly_greater + equal) / 2**16
    assert r.p_value > strictly_greater / 2**16


@pytest.mark.parametrize("seed", [1, 2])
def test_exact_randomization_matches_scipy_permutation_test(seed: int) -> None:
    a, b = grid_pair(seed, n=12)
    ref = st.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    r = stats.paired(a, b, test="randomization", permutations=10_000)
    assert r.exact and r.permutations == 2**12
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)


def test_monte_carlo_randomization_agrees_with_exact_and_scipy() -> None:
    a, b = grid_pair(5)
    exact = float(brute_force_sign_flip_p(np.rint(a * 10), np.rint(b * 10)))
    r = stats.paired(a, b, test="randomization", permutations=20_000, seed=3)
    assert not r.exact and r.permutations == 20_000 and r.seed == 3
    assert r.mc_se == pytest.approx(math.sqrt(r.p_value * (1 - r.p_value) / 20_000))
    assert abs(r.p_value - exact) < 4 * r.mc_se
    ref = with_generator(
        st.permutation_test,
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        seed=0,
        permutation_type="samples",
        n_resamples=20_000,
        vectorized=True,
    )
    assert abs(r.p_value - ref.pvalue) < 6 * r.mc_se


def test_monte_carlo_p_has_phipson_smyth_form_and_is_never_zero() -> None:
    b = np.linspace(0.1, 0.6, 40)
    a = b + 0.2  # overwhelming, constant improvement: no random flip reaches it
    B = 5_000
    r = stats.paired(a, b, test="randomization", permutations=B)
    assert r.p_value == 1 / (B + 1)
    for seed in range(3):
        r = stats.paired(*grid_pair(seed, n=25), test="randomization", permutations=B, seed=seed)
        hits = r.p_value * (B + 1)
        assert hits == pytest.approx(round(hits), abs=1e-6) and round(hits) >= 1


def test_randomization_is_deterministic_and_seed_dependent() -> None:
    a, b = continuous_pair(7, n=60, shift=0.02)
    p1 = stats.paired(a, b, test="randomization", seed=1).p_value
    assert stats.paired(a, b, test="randomization", seed=1).p_value == p1
    others = {stats.paired(a, b, test="randomization", seed=s).p_value for s in (2, 3, 4)}
    assert others != {p1}
    r = stats.paired(a, b, test="randomization", seed=1)
    assert all(abs(p - p1) < 8 * r.mc_se for p in others)


def test_results_do_not_depend_on_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = continuous_pair(8, n=37, shift=0.02)
    scores = np.vstack([a, b, (a + b) / 2])
    before = (
        stats.paired(a, b, test="randomization", permutations=3_001).p_value,
        stats.paired(a, b, test="randomization", permutations=2**12).p_value,
        stats.paired(a[:12], b[:12], test="randomization", permutations=2**12).p_value,
        stats.paired(a, b, test="bootstrap", permutations=3_001).as_dict(),
        [r.p_value for r in stats.tukey(scores, randomized=True, permutations=3_001)],
    )
    monkeypatch.setattr(resampling, "_CHUNK_ELEMENTS", 50)
    after = (
        stats.paired(a, b, test="randomization", permutations=3_001).p_value,
        stats.paired(a, b, test="randomization", permutations=2**12).p_value,
        stats.paired(a[:12], b[:12], test="randomization", permutations=2**12).p_value,
        stats.paired(a, b, test="bootstrap", permutations=3_001).as_dict(),
        [r.p_value for r in stats.tukey(scores, randomized=True, permutations=3_001)],
    )
    assert before == after


def test_large_scores_lower_the_decimals_without_overflow() -> None:
    rng = np.random.default_rng(4)
    b = rng.integers(10**14, 10**15, 12).astype(float)
    a = b + rng.integers(-(10**12), 10**12, 12)
    r = stats.paired(a, b, test="randomization")
    assert r.decimals < 10 and r.exact
    expected = brute_force_sign_flip_p(np.rint(a), np.rint(b))
    assert r.p_value == pytest.approx(float(expected), abs=1e-12)
    assert stats.paired(a, b).p_value == pytest.approx(st.ttest_rel(a, b).pvalue, rel=1e-9)


def test_speed_smoke_many_queries() -> None:
    # the brief's workload: 5 runs x 5000 queries x 4 metrics, 10,000 flips each (not timed)
    rng = np.random.default_rng(0)
    for _metric in range(4):
        runs = rng.random((5, 5000))
        for other in runs[1:]:
            r = stats.paired(runs[0], other, test="randomization")
            assert 0 < r.p_value <= 1 and r.permutations == 10_000


# --------------------------------------------------------------------------------------------------
# bootstrap


def test_percentile_interval_from_the_documented_index_matrix() -> None:
    a, b = continuous_pair(9, n=25)
    d = a - b
    B, seed = 2_000, 17
    idx = np.random.default_rng(seed).integers(0, d.size, size=(B, d.size))
    means = d[idx].mean(axis=1)
    expected = np.percentile(means, [2.5, 97.5])
    low, high = stats.bootstrap_ci(d, resamples=B, seed=seed, method="percentile")
    assert (low, high) == pytest.approx(tuple(expected), abs=1e-9)
    # the bootstrap test reports the same interval and the shifted-bootstrap p from those resamples
    r = stats.paired(a, b, test="bootstrap", permutations=B, seed=seed, bootstrap="percentile")
    assert (r.ci_low, r.ci_high) == pytest.approx(tuple(expected), abs=1e-9)
    hits = np.count_nonzero(np.abs(means - d.mean()) >= abs(d.mean()) - 1e-12)
    assert r.p_value == pytest.approx((hits + 1) / (B + 1))
    assert r.ci_method == "percentile" and not r.exact and r.seed == seed


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize("n", [40, 200])
def test_bootstrap_interval_matches_scipy_on_the_same_resamples(method: str, n: int) -> None:
    rng = np.random.default_rng(n)
    d = rng.normal(0.01, 0.2, n) ** 3 * 10  # skewed, so BCa differs from percentile
    ref = scipy_bootstrap(d, 4_000, 5, "BCa" if method == "bca" else "percentile")
    got = stats.bootstrap_ci(d, resamples=4_000, seed=5, method=method)
    ci = ref.confidence_interval
    assert got == pytest.approx((ci.low, ci.high), abs=1e-8)


def test_bca_matches_scipy_with_independent_streams() -> None:
    a, b = continuous_pair(10, n=50)
    d = a - b
    ref = scipy_bootstrap(d, 20_000, 123, "BCa").confidence_interval
    low, high = stats.bootstrap_ci(d, resamples=20_000, seed=999, method="bca")
    assert abs(low - ref.low) < 0.005 and abs(high - ref.high) < 0.005


def test_bca_falls_back_to_percentile_when_undefined() -> None:
    # one resample of [0, 1] that is [0, 0] or [1, 1] lies entirely on one side of the observed mean,
    # so the BCa bias correction is infinite; seed 0 draws such a resample
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bca = stats.bootstrap_ci([0.0, 1.0], resamples=1, seed=0, method="bca")
    assert bca == stats.bootstrap_ci([0.0, 1.0], resamples=1, seed=0, method="percentile")
    assert bca[0] == bca[1] in (0.0, 1.0)


# --------------------------------------------------------------------------------------------------
# Wilcoxon and sign


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("correction", [False, True])
@pytest.mark.parametrize("seed", [0, 3])
def test_wilcoxon_matches_scipy_on_rounded_differences(zero_method: str, correction: bool, seed: int) -> None:
    a, b = grid_pair(seed, n=30)
    d_rounded = np.round(a - b, 10)
    r = stats.paired(a, b, test="wilcoxon", zero_method=zero_method, correction=correction)
    # ties and zeros: irspec's "auto" resolves to the asymptotic method
    ref = st.wilcoxon(d_rounded, zero_method=zero_method, correction=correction, method="asymptotic")
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert not r.exact and r.null == "median difference is 0 (symmetric distribution)"


def test_wilcoxon_rounding_restores_ties_broken_by_float_noise() -> None:
    # 0.8-0.7 and 0.3-0.2 are both 0.1 but differ in floating point; unrounded, scipy ranks them apart
    a = np.array([0.8, 0.3, 0.5, 0.9, 0.4, 0.6, 0.7])
    b = np.array([0.7, 0.2, 0.7, 0.6, 0.1, 0.5, 0.3])
    r = stats.paired(a, b, test="wilcoxon", wilcoxon_method="asymptotic")
    ref = st.wilcoxon(np.round(a - b, 10), method="asymptotic")
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_wilcoxon_exact_equals_brute_force_without_ties() -> None:
    a, b = continuous_pair(4, n=10, shift=0.05)
    r = stats.paired(a, b, test="wilcoxon")  # auto: no ties, no zeros, n <= 50 -> exact
    assert r.exact
    d = np.round(a - b, 10)
    ranks = st.rankdata(np.abs(d))
    total = ranks.sum()
    w_plus = ranks[d > 0].sum()
    dist = [
        sum(r_ for r_, s in zip(ranks, signs, strict=True) if s)
        for signs in itertools.product((0, 1), repeat=len(d))
    ]
    centre = total / 2
    expected = sum(abs(w - centre) >= abs(w_plus - centre) - 1e-9 for w in dist) / len(dist)
    assert r.p_value == pytest.approx(expected, rel=1e-12)
    assert r.statistic == min(w_plus, total - w_plus)
    assert r.p_value == pytest.approx(st.wilcoxon(d, method="exact").pvalue, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_sign_test_matches_binomtest_and_brute_force(seed: int) -> None:
    a, b = grid_pair(seed, n=20)
    r = stats.paired(a, b, test="sign")
    wins, losses = int(np.sum(a - b > 1e-9)), int(np.sum(a - b < -1e-9))
    assert (r.wins, r.losses, r.ties) == (wins, losses, 20 - wins - losses)
    assert r.p_value == pytest.approx(st.binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-12)
    m = wins + losses
    k = min(wins, losses)
    expected = min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2**m)
    assert r.p_value == pytest.approx(expected, rel=1e-12)
    assert r.statistic == wins and r.null == "P(a>b) = P(a<b)"


def test_the_sign_p_value_is_the_exact_binomial_tail_and_binomtests():
    # exact: twice the tail of Binomial(n, 1/2) up to the smaller count, in fractions, for every split of
    # up to 60 (the extremes too, where the p-value is 2**-59); and scipy's binomtest up to 400
    for n in range(1, 61):
        for wins in range(n + 1):
            m = min(wins, n - wins)
            exact = min(Fraction(1), 2 * Fraction(sum(math.comb(n, i) for i in range(m + 1)), 2**n))
            assert stats.sign_p_value(wins, n - wins) == pytest.approx(float(exact), rel=1e-14, abs=0)
    for n in (61, 99, 100, 257, 400):
        for wins in range(n + 1):
            want = st.binomtest(wins, n, 0.5).pvalue
            assert stats.sign_p_value(wins, n - wins) == pytest.approx(want, rel=1e-13, abs=0), (wins, n)
    assert stats.sign_p_value(0, 0) == stats.sign_p_value(7, 7) == stats.sign_p_value(1, 0) == 1.0
    assert stats.sign_p_value(0, 2000) == st.binomtest(0, 2000, 0.5).pvalue == 0.0  # below the smallest float
    assert stats.sign_p_value(np.int64(3), np.int64(9)) == pytest.approx(
        st.binomtest(3, 12, 0.5).pvalue, rel=1e-13
    )
    for wins, losses in ((-1, 3), (2.5, 3), (3, None)):
        with pytest.raises(EvaluationError, match="wins and losses must be counts"):
            stats.sign_p_value(wins, losses)  # type: ignore[arg-type]


def test_the_sign_p_value_of_a_near_even_split_of_millions_is_exact():
    # 30 million queries, one from even: 1 less the even split's probability C(n, n/2) / 2**n (by
    # symmetry), from the log-gamma function; binomtest counts the even split as just as likely (its
    # tolerance of 1e-7 on the probabilities) and gives 1
    n = 30_000_000
    even = math.exp(math.lgamma(n + 1) - 2 * math.lgamma(n / 2 + 1) - n * math.log(2))
    assert stats.sign_p_value(n // 2 - 1, n // 2 + 1) == pytest.approx(1 - even, abs=1e-10)
    assert st.binomtest(n // 2 - 1, n, 0.5).pvalue == 1.0
    n = 10_000_000  # the tolerance does not reach the even split here: the same value as binomtest
    assert stats.sign_p_value(n // 2 - 1, n // 2 + 1) == pytest.approx(
        st.binomtest(n // 2 - 1, n, 0.5).pvalue, rel=1e-13
    )


# --------------------------------------------------------------------------------------------------
# effect sizes, counts, degenerate input


def test_effect_sizes_and_counts() -> None:
    a, b = continuous_pair(12, n=25)
    d = a - b
    r = stats.paired(a, b)
    cohen = d.mean() / d.std(ddof=1)
    assert r.mean_difference == pytest.approx(d.mean(), abs=1e-10)
    assert r.relative_change == pytest.approx(d.mean() / b.mean(), rel=1e-8)
    assert r.effect_size == pytest.approx(cohen, rel=1e-8)
    assert r.hedges_g == pytest.approx(cohen * (1 - 3 / (4 * 24 - 1)), rel=1e-8)
    assert (r.wins, r.ties, r.losses) == (int((d > 0).sum()), 0, int((d < 0).sum()))
    assert r.n == 25


def test_float_noise_is_a_tie_after_rounding() -> None:
    r = stats.paired([0.3, 0.8, 0.5], [0.1 + 0.2, 0.7, 0.5])
    assert (r.wins, r.ties, r.losses) == (1, 2, 0)
    r = stats.paired([0.3, 0.8, 0.5], [0.1 + 0.2, 0.7, 0.5], decimals=17)
    assert r.losses == 1  # at full precision the noise is a loss


@pytest.mark.parametrize("test", stats.TESTS)
def test_identical_systems_give_p_one_and_zero_effect(test: str) -> None:
    a, _ = grid_pair(0)
    r = stats.paired(a, a.copy(), test=test)
    assert r.p_value == 1.0 and r.statistic == 0.0
    assert r.mean_difference == 0.0 and r.effect_size == 0.0 and r.hedges_g == 0.0
    assert (r.ci_low, r.ci_high) == (0.0, 0.0)
    assert not r.significant
    json.dumps(r.as_dict(), allow_nan=False)


@pytest.mark.parametrize("test", stats.TESTS)
def test_constant_shift_is_defined_everywhere(test: str) -> None:
    b = np.linspace(0.0, 0.5, 8)
    a = b + 0.1  # sd of d is 0 (after rounding away 0.1 + x float noise)
    r = stats.paired(a, b, test=test, permutations=2**8)
    json.dumps(r.as_dict(), allow_nan=False)  # no NaN or inf anywhere
    assert r.effect_size is None and r.hedges_g is None
    assert r.mean_difference == pytest.approx(0.1)
    assert (r.ci_low, r.ci_high) == pytest.approx((0.1, 0.1))
    assert 0.0 <= r.p_value < 0.05
    if test == "t":
        assert r.statistic is None and r.p_value == 0.0
    if test == "randomization":
        assert r.exact and r.p_value == 2 / 2**8


def test_relative_change_is_none_when_baseline_mean_is_zero() -> None:
    r = stats.paired([0.1, 0.3], [0.0, 0.0])
    assert r.relative_change is None
    assert r.hedges_g == 0.0  # n = 2: J = 1 - 3/(4*1 - 1) = 0


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([0.1], [0.2], "at least 2"),
        ([], [], "at least 2"),
        ([0.1, 0.2], [0.1, 0.2, 0.3], "paired"),
        ([0.1, float("nan")], [0.1, 0.2], "NaN"),
        ([0.1, 0.2], [0.1, float("inf")], "NaN or infinite"),
        ([[0.1, 0.2]], [[0.1, 0.2]], "1-D"),
        (["x", "y"], [0.1, 0.2], "numbers"),
    ],
)
def test_bad_input_raises_evaluation_error(a, b, message: str) -> None:
    with pytest.raises(EvaluationError, match=message) as info:
        stats.paired(a, b)
    assert isinstance(info.value, IrspecError) and not isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "options",
    [
        {"test": "mann-whitney"},
        {"permutations": 0},
        {"permutations": True},
        {"permutations": 1.5},
        {"seed": -1},
        {"confidence": 1.0},
        {"alpha": 0},
        {"bootstrap": "basic"},
        {"zero_method": "drop"},
        {"wilcoxon_method": "permutation"},
        {"correction": "yes"},
        {"decimals": -1},
    ],
)
def test_bad_options_raise_evaluation_error(options: dict) -> None:
    with pytest.raises(EvaluationError):
        stats.paired([0.1, 0.2, 0.3], [0.2, 0.2, 0.1], **options)


def test_as_dict_is_plain_json() -> None:
    a, b = continuous_pair(13)
    for test in stats.TESTS:
        r = stats.paired(a, b, test=test)
        d = r.as_dict()
        assert json.loads(json.dumps(d, allow_nan=False)) == d
        assert d["test"] == test and d["null"] == stats.NULL_HYPOTHESES[test]
        assert d["significant"] == (d["p_value"] <= d["alpha"])


# --------------------------------------------------------------------------------------------------
# multiple comparisons


@pytest.mark.parametrize("m", [1, 2, 5, 17])
@pytest.mark.parametrize("seed", [0, 1])
def test_adjust_matches_statsmodels(m: int, seed: int) -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(seed)
    p = rng.random(m) ** 3
    if m > 2:
        p[1] = p[2]  # a tie
        p[0] = 1.0
    names = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh", "by": "fdr_by"}
    for ours, theirs in names.items():
        expected = multitest.multipletests(p, method=theirs)[1]
        got = stats.adjust(p, method=ours)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
        assert np.all(got <= 1.0) and np.all(got >= p)
        order = np.argsort(p)
        assert np.all(np.diff(got[order]) >= 0)  # monotone in the raw p-values
    np.testing.assert_array_equal(stats.adjust(p, method="none"), p)


def test_adjust_edge_cases() -> None:
    assert stats.adjust([]).size == 0
    assert stats.adjust([0.04]).tolist() == [0.04]
    np.testing.assert_allclose(stats.adjust([0.01, 0.04, 0.03], "holm"), [0.03, 0.06, 0.06])
    for bad in ([0.1, 1.2], [float("nan")], [[0.1]]):
        with pytest.raises(EvaluationError):
            stats.adjust(bad)
    with pytest.raises(EvaluationError, match="method"):
        stats.adjust([0.1], method="fdr_bh")


# --------------------------------------------------------------------------------------------------
# Tukey HSD


def two_way_mse(x: np.ndarray) -> float:
    """Residual mean square of score ~ system + topic, from statsmodels OLS on a dummy design."""
    sm = pytest.importorskip("statsmodels.api")
    k, n = x.shape
    rows = []
    for i in range(k):
        for j in range(n):
            rows.append([1.0] + [float(i == s) for s in range(1, k)] + [float(j == t) for t in range(1, n)])
    return float(sm.OLS(x.ravel(), np.array(rows)).fit().mse_resid)


def test_tukey_matches_two_way_anova_and_studentized_range() -> None:
    rng = np.random.default_rng(21)
    k, n = 4, 25
    x = rng.random(n)[None, :] + np.array([0.0, 0.05, 0.1, 0.12])[:, None] + rng.normal(0, 0.1, (k, n))
    mse = two_way_mse(x)
    df = (k - 1) * (n - 1)
    q_crit = st.studentized_range.ppf(0.95, k, df)
    results = stats.tukey(x)
    assert [(r.a, r.b) for r in results] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    for r in results:
        diff = x[r.a].mean() - x[r.b].mean()
        q = abs(diff) / math.sqrt(mse / n)
        assert r.mean_difference == pytest.approx(diff, abs=1e-10)
        assert r.statistic == pytest.approx(q, rel=1e-7)
        assert r.p_value == pytest.approx(st.studentized_range.sf(q, k, df), rel=1e-6)
        half = q_crit * math.sqrt(mse / n)
        assert (r.ci_low, r.ci_high) == pytest.approx((diff - half, diff + half), rel=1e-7)
        assert r.df == df and r.method == "tukey-hsd"
        json.dumps(r.as_dict(), allow_nan=False)


def test_tukey_with_two_systems_is_the_paired_t_test() -> None:
    a, b = continuous_pair(22, n=20)
    ref = st.ttest_rel(a, b)
    (r,) = stats.tukey(np.vstack([a, b]))
    assert r.statistic == pytest.approx(math.sqrt(2) * abs(ref.statistic), rel=1e-8)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-6)
    ci = ref.confidence_interval()
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-6)


def test_tukey_degenerate_scores() -> None:
    a, _ = grid_pair(1)
    for randomized in (False, True):
        same = stats.tukey(np.vstack([a, a, a]), randomized=randomized, permutations=500)
        assert all(r.p_value == 1.0 and r.mean_difference == 0.0 for r in same)
    shifted = stats.tukey(np.vstack([a, a + 0.1, a]))  # perfectly additive: MSE is 0
    assert [r.p_value for r in shifted] == [0.0, 1.0, 0.0]
    assert shifted[0].statistic is None and shifted[1].statistic == 0.0
    for r in shifted:
        json.dumps(r.as_dict(), allow_nan=False)
    with pytest.raises(EvaluationError, match="at least 2 systems"):
        stats.tukey([a])
    with pytest.raises(EvaluationError, match="at least 2 topics"):
        stats.tukey([[0.1], [0.2]])
    with pytest.raises(EvaluationError, match="2-D"):
        stats.tukey(a)
    with pytest.raises(EvaluationError, match="NaN"):
        stats.tukey([[0.1, float("nan")], [0.2, 0.3]])


def test_randomized_tukey_with_two_systems_is_the_sign_flip_test() -> None:
    # with two systems, shuffling within a topic is a sign flip and the range is |difference|
    a, b = grid_pair(5)
    exact = float(brute_force_sign_flip_p(np.rint(a * 10), np.rint(b * 10)))
    (r,) = stats.tukey(np.vstack([a, b]), randomized=True, permutations=20_000, seed=1)
    assert abs(r.p_value - exact) < 4 * r.mc_se
    assert r.statistic == pytest.approx(abs(a.mean() - b.mean()))
    assert r.p_value * 20_001 == pytest.approx(round(r.p_value * 20_001))


def test_randomized_tukey_properties() -> None:
    rng = np.random.default_rng(23)
    latent = rng.random(30)[None, :] + rng.normal(0, 0.25, (5, 30)) + np.linspace(0, 0.3, 5)[:, None]
    x = np.rint(np.clip(latent, 0, 1) * 10) / 10  # grid-valued, so permuted ranges tie
    r1 = stats.tukey(x, randomized=True, permutations=4_000, seed=3)
    assert [r.p_value for r in stats.tukey(x, randomized=True, permutations=4_000, seed=3)] == [
        r.p_value for r in r1
    ]
    # family-wise: a larger gap never gets a larger p; every p at least 1/(B+1)
    by_gap = sorted(r1, key=lambda r: abs(r.mean_difference))
    assert all(p.p_value >= q.p_value for p, q in itertools.pairwise(by_gap))
    assert all(r.p_value >= 1 / 4_001 and r.ci_low is None for r in r1)
    # it controls the family, so it is no more liberal than the pairwise randomization test
    for r in r1:
        pairwise = stats.paired(x[r.a], x[r.b], test="randomization", permutations=4_000, seed=3)
        assert r.p_value >= pairwise.p_value - 4 * pairwise.mc_se
    # and it agrees roughly with the parametric HSD (on these 30 grid-valued topics the largest gap
    # between the two, measured with 200,000 permutations, is 0.108)
    parametric = stats.tukey(x)
    assert max(abs(r.p_value - s.p_value) for r, s in zip(r1, parametric, strict=True)) < 0.15


@pytest.mark.parametrize("randomized", [False, True])
def test_a_tukey_pair_is_a_whole_comparison_in_the_order_asked(randomized) -> None:
    """A pair of the family carries what a paired comparison does (effect sizes, wins/ties/losses, the
    relative change: here from numpy and counting), and ``pairs`` orients a pair without changing
    the family: (2, 0) is (0, 2) mirrored, to the bit."""
    rng = np.random.default_rng(31)
    x = np.rint(rng.random((3, 24)) * 10) / 10 + np.array([[0.0], [0.05], [0.2]])
    kwargs = {"randomized": randomized, "permutations": 2_000, "seed": 4, "alpha": 0.01}
    every = {(r.a, r.b): r for r in stats.tukey(x, **kwargs)}
    (back, ahead) = stats.tukey(x, pairs=[(2, 0), (0, 2)], **kwargs)
    assert (back.a, back.b, ahead.a, ahead.b) == (2, 0, 0, 2)
    assert ahead == every[(0, 2)]
    assert back.p_value == ahead.p_value and back.statistic == ahead.statistic
    assert back.mean_difference == -ahead.mean_difference
    if randomized:
        assert back.ci_low is back.ci_high is back.confidence is back.ci_method is None
    else:
        assert (back.ci_low, back.ci_high) == (-ahead.ci_high, -ahead.ci_low) and back.ci_method == "tukey"
    for r in (back, ahead):
        d = np.round(x[r.a] - x[r.b], 10)
        assert (r.wins, r.ties, r.losses) == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
        assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert r.hedges_g == pytest.approx(r.effect_size * (1 - 3 / (4 * (d.size - 1) - 1)), rel=1e-12)
        assert r.relative_change == pytest.approx(d.mean() / x[r.b].mean(), rel=1e-12)
        assert r.n == 24 and r.alpha == 0.01 and r.significant == (r.p_value <= 0.01) and r.exact is False
        assert r.test == r.method == ("randomized-tukey-hsd" if randomized else "tukey-hsd")
        assert r.null == stats.NULL_HYPOTHESES[r.test]
        json.dumps(r.as_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([(0, 0)], r"two different rows of the 3 systems \(0 to 2\), not \(0, 0\)"),
        ([(0, 3)], r"two different rows of the 3 systems \(0 to 2\), not \(0, 3\)"),
        ([(-1, 1)], r"not \(-1, 1\)"),
        ([(0, 1.5)], r"pairs must be \(a, b\) row indices of the scores, not \(0, 1.5\)"),
        ([(0, 1, 2)], r"pairs must be \(a, b\) row indices"),
        ([0], r"pairs must be \(a, b\) row indices of the scores, not 0"),
    ],
)
def test_tukey_refuses_pairs_that_are_not_two_rows(pairs, message) -> None:
    x = np.random.default_rng(2).random((3, 5))
    with pytest.raises(EvaluationError, match=message):
        stats.tukey(x, pairs=pairs)


@pytest.mark.parametrize("orderings_table", [True, False])
def test_randomized_tukey_matches_the_exact_permutation_distribution(monkeypatch, orderings_table) -> None:
    """Three systems, five topics: all 6**5 ways of shuffling the systems within the topics can be
    enumerated, which gives the exact p of each pair; the Monte Carlo p must be within its error,
    whether permutations draw one of the orderings of the systems per topic or shuffle each topic."""
    if not orderings_table:
        monkeypatch.setattr(resampling, "_MAX_ORDERED_SYSTEMS", 2)
    x = np.array(
        [
            [0.4, 0.0, 0.1, 0.7, 0.4],
            [0.7, 0.9, 0.6, 0.7, 0.6],
            [0.5, 0.2, 0.7, 0.4, 0.4],
        ]
    )
    k = np.rint(x * 10).astype(int)
    ranges = []
    for orders in itertools.product(list(itertools.permutations(range(3))), repeat=x.shape[1]):
        sums = sum(k[list(order), t] for t, order in enumerate(orders))
        ranges.append(sums.max() - sums.min())
    ranges = np.array(ranges)
    results = stats.tukey(x, randomized=True, permutations=20_000, seed=5)
    assert [(r.a, r.b) for r in results] == [(0, 1), (0, 2), (1, 2)]
    for r in results:
        gap = abs(k[r.a].sum() - k[r.b].sum())
        exact = float(np.mean(ranges >= gap))
        assert 0.05 < exact < 0.9  # p-values worth checking: 0.068, 0.824, 0.414
        assert abs(r.p_value - exact) < 4 * r.mc_se + 1 / 20_001, (r.a, r.b, r.p_value, exact)


# --------------------------------------------------------------------------------------------------
# house rules


def test_evaluating_loads_neither_stats_nor_scipy() -> None:
    # stats imports scipy at its top; evaluation (irspec eval, the benchmark) must not pay for it
    code = (
        "import sys, irspec\n"
        "irspec.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0, 'b': 0.5}}, 'AP, nDCG@10')\n"
        "print(sorted(m for m in ('irspec.stats.significance', 'scipy') if m in sys.modules))"
    )
    root = Path(stats.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "IRSPEC_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, cwd=root
    )
    assert proc.stdout.strip() == "[]", proc.stderr


def test_public_names_have_docstrings() -> None:
    for name in stats.__all__:
        obj = getattr(stats, name)
        if callable(obj):
            assert obj.__doc__, name


def test_mean_ci_is_cut_at_the_bounds_given():
    """scipy's t interval of [1, 1, 0.5] passes 1; cut at (0, 1) its upper end is 1, its lower end scipy's."""
    x = [1.0, 1.0, 0.5]
    low, high = st.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=st.sem(x))
    assert high > 1
    assert stats.mean_ci(x) == pytest.approx((low, high))
    assert stats.mean_ci(x, bounds=(0.0, 1.0)) == pytest.approx((low, 1.0))
    assert stats.mean_ci(x, bounds=(0.9, None)) == pytest.approx((0.9, high))


def test_the_t_tests_distribution_is_scipy_stats_t_to_the_last_bit():
    # the paired t-test reads Student's t from scipy.special (scipy.stats loads only for the tests that
    # need it): its p-values and interval half-widths are scipy.stats.t's own, bit for bit
    rng = np.random.default_rng(7)
    for _ in range(2000):
        n = int(rng.integers(2, 5000))
        mean, sd = float(rng.normal(0, 0.2)), float(rng.uniform(0.01, 0.5))
        t, p = stats._t_test(mean, sd, n)
        assert p == float(2.0 * st.t.sf(abs(t), n - 1))
        confidence = float(rng.choice([0.9, 0.95, 0.99]))
        low, high = stats._t_interval(mean, sd, n, confidence)
        half = float(st.t.ppf(0.5 + confidence / 2.0, n - 1)) * sd / math.sqrt(n)
        assert (low, high) == (mean - half, mean + half)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_auto_with_ties_or_zeros_is_the_exact_signed_rank_distribution(zero_method: str) -> None:
    """With tied |d| or zeros, "auto" enumerates the signs of the non-zero differences when the budget
    allows: scipy's own permutation method, exhaustive (n_resamples=inf), gives the same p and statistic.
    The normal approximation gave 0.0455 for four equal differences, below the least p any four signs
    can give (2/16).

    scipy's own exhaustive method computes the statistic once per sign pattern (2**(n-1) calls of ~0.5 ms
    at n = 12), so the reference for every sample is the same test vectorised: scipy's permutation_test,
    exhaustive over the signs, of scipy's Wilcoxon statistic min(T+, T-) (the smaller it is, the more
    extreme: "less"; the null is symmetric, so this is the two-sided p scipy's method gives). The first
    samples are held to scipy's method itself too, which gives the same p to the bit."""
    rng = np.random.default_rng(5)
    compared = 0

    def statistic(x: np.ndarray, axis: int) -> np.ndarray:
        return st.wilcoxon(x, zero_method=zero_method, axis=axis, method="asymptotic").statistic

    for _ in range(150):
        n = int(rng.integers(2, 13))
        d = rng.choice([0.0, 0.1, -0.1, 0.2, -0.2, 0.3], n)
        if np.count_nonzero(d) == 0:
            continue
        r = stats.paired(d, np.zeros(n), test="wilcoxon", zero_method=zero_method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the asymptotic statistic's small-sample note
            exhaustive = st.permutation_test(
                (d,),
                statistic,
                permutation_type="samples",
                n_resamples=np.inf,
                alternative="less",
                vectorized=True,
            )
        p = float(exhaustive.pvalue)
        if compared < 10 and n <= 9:
            scipy_own = st.wilcoxon(
                d, zero_method=zero_method, method=st.PermutationMethod(n_resamples=np.inf)
            )
            assert p == float(scipy_own.pvalue), d
        assert r.p_value == pytest.approx(p, rel=1e-12, abs=1e-15), d
        assert r.statistic == pytest.approx(float(exhaustive.statistic)), d
        compared += 1
    assert compared > 100
    four = stats.paired([0.1] * 4, [0.0] * 4, test="wilcoxon")
    assert (four.p_value, four.exact) == (0.125, True)
    # beyond the budget, the tie-corrected normal approximation, as before
    wide = stats.paired([0.1] * 6, [0.0] * 6, test="wilcoxon", permutations=32)
    assert not wide.exact
    assert wide.p_value == pytest.approx(float(st.wilcoxon([0.1] * 6, method="asymptotic").pvalue))


def test_the_direction_is_the_tests_own() -> None:
    """A sign test is significant for the run that wins most queries, and Wilcoxon's for the larger signed
    rank sum, whatever the mean difference says: here a's mean is higher, b wins 9 of 10 queries."""
    a = [1.0] + [0.0] * 9
    b = [0.0] + [0.1] * 9
    sign = stats.paired(a, b, test="sign")
    assert sign.mean_difference > 0 and sign.direction == -1
    assert sign.p_value == pytest.approx(st.binomtest(1, 10).pvalue)
    w = stats.paired([1.0, 1.0] + [-0.1] * 18, [0.0] * 20, test="wilcoxon")
    d = np.array([1.0, 1.0] + [-0.1] * 18)
    ranks = st.rankdata(np.abs(d))
    assert w.mean_difference > 0 and w.direction == np.sign(ranks[d > 0].sum() - ranks[d < 0].sum()) == -1
    assert stats.paired(a, b, test="t").direction == 1


def test_tukey_p_values_in_the_far_tail_are_bounded_not_zero() -> None:
    """Far in the tail scipy's studentized range gives 0 or a floor near 1e-13; the p reported is then
    Bonferroni's bound m P(|t| >= q/√2), from scipy's t, which is at least the true p and at most m times
    it; with two systems it is the paired t-test's p, exactly."""
    rng = np.random.default_rng(0)
    n = 501
    base = rng.random(n)
    x = np.vstack(
        [
            base + rng.normal(0, 0.1, n),
            base + 0.05 + rng.normal(0, 0.1, n),
            base + 0.1 + rng.normal(0, 0.1, n),
        ]
    )
    for r in stats.tukey(x):
        single = 2 * st.t.sf(r.statistic / math.sqrt(2), r.df)
        assert single <= r.p_value * (1 + 1e-9) and r.p_value <= 3 * single * (1 + 1e-9)
        assert r.p_value > 0
    a = rng.random(40)
    b = a + 0.3 + rng.normal(0, 0.01, 40)
    (pair,) = stats.tukey(np.vstack([a, b]))
    assert pair.p_value == pytest.approx(st.ttest_rel(np.round(a - b, 10), np.zeros(40)).pvalue, rel=1e-9)
    assert 0 < pair.p_value < 1e-11


def test_differences_that_overflow_are_an_error() -> None:
    with pytest.raises(EvaluationError, match="overflow"):
        stats.paired([1e308, 0.0], [-1e308, 1.0])
