"""irspec.stats.concordance against its references: scipy's kendalltau (τ-b), scikit-learn's cohen_kappa_score,
the krippendorff package, and hand arithmetic written out here (τ_AP has no library reference)."""

from __future__ import annotations

import importlib
import math
import warnings

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
