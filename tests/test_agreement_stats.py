"""irspec.stats.concordance against its references: scipy's kendalltau (τ-b), scikit-learn's cohen_kappa_score,
the krippendorff package, and hand arithmetic written out here (τ_AP has no library reference)."""

from __future__ import annotations

import functools
import importlib
import itertools
import math
import operator
import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats

from irspec.stats import concordance as cc

krippendorff = importlib.import_module("krippendorff")


def _scores(rng: np.random.Generator, n: int) -> np.ndarray:
    """Adversarial system means: few distinct values (ties), sometimes all equal."""
    kind = rng.integers(0, 4)
    if kind == 0:
        return np.full(n, 0.25)
    if kind == 1:
        return rng.integers(0, 3, n) / 4.0
    return rng.random(n)


# --- Kendall's tau-b -----------------------------------------------------------------------------


def test_kendall_tau_b_by_hand():
    # x = 1 2 3 4, y = 1 3 2 4: one discordant pair (2,3) of 6 -> (5 - 1) / 6
    assert cc.kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # ties: x = 1 1 2, y = 1 2 3: pairs (0,1) tied in x, (0,2) and (1,2) concordant
    # tau_b = 2 / sqrt((3 - 1) * (3 - 0)) = 2 / sqrt(6)
    assert cc.kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))


@pytest.mark.parametrize("seed", range(300))
def test_kendall_tau_b_against_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    x, y = _scores(rng, n), _scores(rng, n)
    if rng.random() < 0.1:
        y = x.copy()  # identical rankings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input
        expected = scipy.stats.kendalltau(x, y, variant="b").statistic
    got = cc.kendall_tau_b(x, y)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_kendall_tau_b_degenerate():
    assert math.isnan(cc.kendall_tau_b([0.3], [0.5]))
    assert math.isnan(cc.kendall_tau_b([], []))
    assert cc.kendall_tau_b([0.1, 0.2], [0.5, 0.4]) == -1.0
    with pytest.raises(ValueError, match="one length"):
        cc.kendall_tau_b([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        cc.kendall_tau_b([1, float("nan")], [1, 2])


# --- tau_AP --------------------------------------------------------------------------------------


def test_tau_ap_by_hand():
    # reference A > B > C > D (scores 4 3 2 1); other ranks B > A > C > D
    ref = [4, 3, 2, 1]
    top_swap = [3, 4, 2, 1]
    # other's ranking: B, A, C, D. i=2: A, above it B, which ref puts below A -> C(2) = 0
    # i=3: C, above it B, A, both above C in ref -> C(3) = 2; i=4: D, 3 above, all correct -> C(4) = 3
    # tau_AP = 2/3 * (0/1 + 2/2 + 3/3) - 1 = 1/3
    assert cc.tau_ap(ref, top_swap) == pytest.approx(1 / 3)
    # the same swap at the bottom: A, B, D, C. C(2) = 1, C(3) = 2 (D below A, B in ref), C(4) = 2
    # (of A, B, D above C only A, B are above it in ref) -> 2/3 * (1 + 1 + 2/3) - 1 = 7/9
    bottom_swap = [4, 3, 1, 2]
    assert cc.tau_ap(ref, bottom_swap) == pytest.approx(7 / 9)
    # Kendall's tau cannot tell the two apart: one discordant pair of six, (5 - 1) / 6
    assert cc.kendall_tau_b(ref, top_swap) == cc.kendall_tau_b(ref, bottom_swap) == pytest.approx(2 / 3)


def test_tau_ap_asymmetric_by_hand():
    # ref 1 > 2 > 3 (scores 3 2 1), other 2 > 3 > 1 (scores 1 3 2)
    # other's ranking: s2, s3, s1. i=2: s3, above it s2, ref has s2 above s3 -> 1;
    # i=3: s1, above it s2, s3, ref has neither above s1 -> 0. tau_AP = 2/2 * (1/1 + 0/2) - 1 = 0
    assert cc.tau_ap([3, 2, 1], [1, 3, 2]) == pytest.approx(0.0)
    # the other way: ranking by [3,2,1]: s1, s2, s3 checked against [1,3,2] (s2 > s3 > s1)
    # i=2: s2, above it s1, which [1,3,2] puts below s2 -> 0; i=3: s3, above it s1 (below s3: no),
    # s2 (above s3: yes) -> 1. tau_AP = 2/2 * (0/1 + 1/2) - 1 = -1/2
    assert cc.tau_ap([1, 3, 2], [3, 2, 1]) == pytest.approx(-0.5)


def _tau_ap_from_pairs(ref: np.ndarray, other: np.ndarray) -> float:
    """The paper's definition read as a sum over ranks, written independently: for each system at rank
    i > 1 in other, the fraction of the systems ranked above it there that ref also ranks above it."""
    n = len(ref)
    rank_other = {s: r for r, s in enumerate(sorted(range(n), key=lambda s: -other[s]))}
    by_rank = sorted(range(n), key=lambda s: rank_other[s])
    fractions = []
    for i in range(1, n):
        s = by_rank[i]
        above = by_rank[:i]
        fractions.append(sum(1 for t in above if ref[t] > ref[s]) / len(above))
    return 2 * sum(fractions) / (n - 1) - 1


@pytest.mark.parametrize("seed", range(200))
def test_tau_ap_properties_on_random_rankings(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 15))
    ref = rng.permutation(n).astype(float)
    other = rng.permutation(n).astype(float)
    got = cc.tau_ap(ref, other)
    assert got == pytest.approx(_tau_ap_from_pairs(ref, other))
    assert -1.0 - 1e-12 <= got <= 1.0 + 1e-12
    assert cc.tau_ap(ref, ref) == pytest.approx(1.0)
    assert cc.tau_ap(ref, -ref) == pytest.approx(-1.0)
    if n == 2:  # two systems: tau_AP is Kendall's tau
        assert got == pytest.approx(cc.kendall_tau_b(ref, other))


def test_tau_ap_undefined_with_ties_or_one_system():
    assert math.isnan(cc.tau_ap([1, 1, 2], [1, 2, 3]))
    assert math.isnan(cc.tau_ap([1, 2, 3], [0.5, 0.5, 0.1]))
    assert math.isnan(cc.tau_ap([1], [1]))


def test_swapped_pairs():
    # x ranks 0 > 1 > 2 > 3; y puts 0 last and 3 first, with 1 and 2 tied: every pair is reversed
    # except (1, 2), which is tied in y and so no swap
    assert cc.swapped_pairs([4, 3, 2, 1], [3, 4, 4, 5]) == [(0, 1), (0, 2), (0, 3), (1, 3), (2, 3)]
    assert cc.swapped_pairs([1, 2], [1, 2]) == []


# --- ties of means added in another order --------------------------------------------------------


def _float_mean(values: list[Fraction]) -> float:
    """A mean as trec_eval (and irspec) computes it: the values as floats added left to right, then
    divided by their number."""
    return functools.reduce(operator.add, [float(v) for v in values]) / len(values)


def _dense_ranks(exact: list[Fraction]) -> list[int]:
    """Exact means as integer ranks (equal means, equal ranks): what scipy is given, so that it sees the
    ties of the rationals and nothing of floats."""
    order = sorted(set(exact))
    return [order.index(v) for v in exact]


def test_means_equal_as_rationals_are_tied():
    # P@5 values 0.2, 0.2, 0.8 and 0.8, 0.2, 0.2: both means are 2/5, but the float sums differ in the
    # last bit (1.2000000000000002 and 1.2)
    x = [_float_mean([Fraction(1, 5), Fraction(1, 5), Fraction(4, 5)]), 0.8]
    y = [_float_mean([Fraction(4, 5), Fraction(1, 5), Fraction(1, 5)]), 0.8]
    tied = [x[0], y[0]]
    assert tied[0] != tied[1]  # the premise: the floats differ
    assert cc.has_ties(tied) and not cc.has_ties(tied, tolerance=0.0)
    assert cc.swapped_pairs(tied, [0.1, 0.2]) == []  # a tie in one ranking is no swap
    assert math.isnan(cc.tau_ap(tied, [0.1, 0.2])) and math.isnan(cc.kendall_tau_b(tied, [0.1, 0.2]))
    with pytest.raises(ValueError, match="tolerance"):
        cc.kendall_tau_b([1, 2], [1, 2], tolerance=-1.0)


def _rational_case(seed: int) -> tuple[list[list[Fraction]], list[float], list[float]]:
    """Runs' P@5-like values per topic (fifths) under two sets, often a shared pool reordered, so that
    equal means are added in different orders: the exact means per set, and the float means x, y."""
    rng = np.random.default_rng(seed)
    systems, topics = int(rng.integers(2, 7)), int(rng.integers(2, 9))
    pool = [Fraction(int(k), 5) for k in rng.integers(0, 6, topics)]

    def run_values() -> list[Fraction]:
        if rng.random() < 0.6:  # the shared pool reordered: equal means, other float sums
            return [pool[i] for i in rng.permutation(topics)]
        return [Fraction(int(k), 5) for k in rng.integers(0, 6, topics)]

    sets = [[run_values() for _ in range(systems)] for _ in range(2)]
    exact = [[sum(v, Fraction(0)) / topics for v in runs] for runs in sets]
    x, y = ([_float_mean(v) for v in runs] for runs in sets)
    return exact, x, y


RATIONAL_SEEDS = range(150)


@pytest.mark.parametrize("seed", RATIONAL_SEEDS)
def test_rankings_of_float_means_against_scipy_on_exact_rationals(seed):
    """τ-b equals scipy's on the exact means, the swaps are the pairs the exact means order oppositely,
    and τ_AP is undefined exactly where the exact means tie (else the paper's definition on them)."""
    exact, x, y = _rational_case(seed)
    systems = len(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant ranking
        expected = scipy.stats.kendalltau(_dense_ranks(exact[0]), _dense_ranks(exact[1])).statistic
    got = cc.kendall_tau_b(x, y)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)
    swaps = [
        (i, j)
        for i, j in itertools.combinations(range(systems), 2)
        if (exact[0][i] - exact[0][j]) * (exact[1][i] - exact[1][j]) < 0
    ]
    assert cc.swapped_pairs(x, y) == swaps
    exact_ties = any(len(set(e)) < systems for e in exact)
    assert (cc.has_ties(x) or cc.has_ties(y)) == exact_ties
    if exact_ties:
        assert math.isnan(cc.tau_ap(x, y)) and math.isnan(cc.tau_ap(y, x))
    else:
        assert cc.tau_ap(x, y) == pytest.approx(_tau_ap_from_pairs(exact[0], exact[1]))


def test_the_rational_cases_hold_ties_that_floats_miss():
    """The premise of the test above: many of its cases have means equal as rationals and unequal as
    floats (else it would test nothing an exact float comparison gets wrong)."""
    missed = 0
    for seed in RATIONAL_SEEDS:
        exact, x, y = _rational_case(seed)
        for e, v in zip(exact, (x, y), strict=True):
            missed += any(e[i] == e[j] and v[i] != v[j] for i, j in itertools.combinations(range(len(v)), 2))
    assert missed >= 10


# --- labels --------------------------------------------------------------------------------------


def _labels(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Adversarial graded labels: negatives, gaps in the grades, one label only, identical sets."""
    grades = rng.choice([[0, 1], [0, 1, 2, 3], [-1, 0, 2], [0, 4], [2]][rng.integers(0, 5)], size=None)
    a = rng.choice(np.atleast_1d(grades), n)
    kind = rng.integers(0, 3)
    if kind == 0:
        b = a.copy()
    elif kind == 1:
        b = rng.choice(np.atleast_1d(grades), n)
    else:  # partial agreement: some labels moved by one grade
        b = a + rng.integers(-1, 2, n) * (rng.random(n) < 0.3)
    return a.astype(np.int64), b.astype(np.int64)


def test_cohen_kappa_by_hand():
    # a = 0 0 1 1, b = 0 1 1 1: observed agreement 3/4; margins a (1/2, 1/2), b (1/4, 3/4)
    # chance agreement 1/2 * 1/4 + 1/2 * 3/4 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert cc.cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(0.5)
    # quadratic, grades 0..2: a = 0 2, b = 0 1. observed: (0,0), (2,1) each 1/2; weight of (2,1) = 1
    # expected = outer((1/2, 0, 1/2), (1/2, 1/2, 0)): (0,1) 1/4 w 1, (2,0) 1/4 w 4, (2,1) 1/4 w 1
    # kappa = 1 - (1/2) / (1/4 + 1 + 1/4) = 1 - 1/3 = 2/3
    assert cc.cohen_kappa([0, 2], [0, 1], weights="quadratic") == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", range(300))
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_cohen_kappa_against_sklearn(seed, weights):
    rng = np.random.default_rng(seed)
    a, b = _labels(rng, int(rng.integers(1, 40)))
    grades = list(range(int(min(a.min(), b.min())), int(max(a.max(), b.max())) + 1))
    sklearn_metrics = importlib.import_module("sklearn.metrics")  # not at collection: ~0.4 s a worker
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns when kappa is 0/0
        expected = sklearn_metrics.cohen_kappa_score(
            a, b, labels=grades, weights=None if weights == "none" else weights
        )
    got = cc.cohen_kappa(a, b, weights)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_krippendorff_by_hand():
    # a = 0 1, b = 0 0: coincidences o_00 = 2 (the first item, both ways), o_01 = o_10 = 1; n_0 = 3, n_1 = 1,
    # n = 4. ordinal delta_01 = (n_0 + n_1) - (n_0 + n_1) / 2 = 2, squared 4.
    # alpha = 1 - (n - 1) * (o_01 + o_10) * 4 / (2 * n_0 * n_1 * 4) = 1 - 3 * 2 / 6 = 0
    assert cc.krippendorff_alpha_ordinal([0, 1], [0, 0]) == pytest.approx(0.0)


@pytest.mark.parametrize("seed", range(300))
def test_krippendorff_against_package(seed):
    rng = np.random.default_rng(seed)
    a, b = _labels(rng, int(rng.integers(1, 40)))
    got = cc.krippendorff_alpha_ordinal(a, b)
    if len(np.union1d(a, b)) < 2:
        with pytest.raises(ValueError):  # the package refuses a single value; irspec says undefined
            krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="ordinal")
        assert math.isnan(got)
        return
    expected = krippendorff.alpha(
        reliability_data=np.vstack([a, b]).astype(float), level_of_measurement="ordinal"
    )
    assert got == pytest.approx(expected, abs=1e-10)


def _kappa_from_pairs(a: list[int], b: list[int], weight) -> Fraction:
    """Cohen's weighted κ by its definition over pairs, exactly: one less the mean weight of each item's
    two labels over the mean weight of every label of ``a`` against every label of ``b`` (the chance
    pairing of the margins)."""
    observed = Fraction(sum(weight(p, q) for p, q in zip(a, b, strict=True)), len(a))
    chance = Fraction(sum(weight(p, q) for p in a for q in b), len(a) ** 2)
    return 1 - observed / chance


def test_kappa_and_alpha_with_a_huge_label():
    """A label of 10**9 beside grades 0..3: no matrix over every grade between (it would need 8e18
    bytes); the values are the definitions' (κ by pairs, exactly; α the krippendorff package's)."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 60)
    b = a.copy()
    b[rng.random(60) < 0.3] = rng.integers(0, 4)
    a[[3, 10]] = 10**9
    b[[3, 20]] = 10**9
    weights = {
        "none": lambda p, q: int(p != q),
        "linear": lambda p, q: abs(p - q),
        "quadratic": lambda p, q: (p - q) ** 2,
    }
    tracemalloc.start()
    try:
        got = {w: cc.cohen_kappa(a, b, w) for w in weights}
        alpha = cc.krippendorff_alpha_ordinal(a, b)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # a few arrays of 120 values, not a matrix of the grades
    for w, fn in weights.items():
        assert got[w] == pytest.approx(float(_kappa_from_pairs(a.tolist(), b.tolist(), fn)), abs=1e-12)
    expected = krippendorff.alpha(
        reliability_data=np.vstack([a, b]).astype(float), level_of_measurement="ordinal"
    )
    assert alpha == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_kappa_with_a_wide_gap_against_sklearn(weights):
    # grades 0..3 and 200: scikit-learn's matrix over the 201 grades between is still small
    rng = np.random.default_rng(3)
    a = np.append(rng.integers(0, 4, 40), [200, 200, 1])
    b = np.append(rng.integers(0, 4, 40), [200, 2, 200])
    sk = importlib.import_module("sklearn.metrics")
    expected = sk.cohen_kappa_score(
        a, b, labels=range(0, 201), weights=None if weights == "none" else weights
    )
    assert cc.cohen_kappa(a, b, weights) == pytest.approx(expected, abs=1e-12)


def test_labels_with_no_common_pairs_are_undefined():
    assert math.isnan(cc.cohen_kappa([], []))
    assert math.isnan(cc.cohen_kappa(np.array([], dtype=int), np.array([], dtype=int), "quadratic"))
    assert math.isnan(cc.krippendorff_alpha_ordinal(np.array([], dtype=int), np.array([], dtype=int)))
    labels, counts = cc.confusion_matrix(np.array([], dtype=int), np.array([], dtype=int))
    assert labels == [] and counts.shape == (0, 0)


def test_confusion_matrix_and_binary():
    labels, counts = cc.confusion_matrix([0, 2, 2, -1], [0, 1, 2, 0])
    assert labels == [-1, 0, 1, 2]
    # rows a, columns b: (-1, 0), (0, 0), (2, 1), (2, 2)
    assert counts.tolist() == [[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1]]
    assert cc.binary([-1, 0, 1, 3], level=1).tolist() == [0, 0, 1, 1]
    assert cc.binary([-1, 0, 1, 3], level=2).tolist() == [0, 0, 0, 1]
    with pytest.raises(ValueError, match="integers"):
        cc.cohen_kappa([0.5], [1])
    with pytest.raises(ValueError, match="weights"):
        cc.cohen_kappa([0], [1], "cubic")
