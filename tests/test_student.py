"""Student's t in plain Python (``irspec.stats.student``) against scipy.stats.t, its reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp

from irspec.stats import significance
from irspec.stats.student import mean_t_interval, mean_t_intervals, t_quantile, t_sf

DFS = [1, 2, 3, 4, 5, 7, 9, 10, 19, 29, 30, 49, 50, 99, 100, 101, 249, 999, 4999, 0.5, 2.5]
PS = [0.55, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995, 0.99999, 0.025, 0.3, 0.001]


@pytest.mark.parametrize("df", DFS)
def test_quantile_equals_scipy(df: float) -> None:
    for p in PS:
        assert t_quantile(p, df) == pytest.approx(float(sp.t.ppf(p, df)), rel=1e-12, abs=0), (p, df)


@pytest.mark.parametrize("df", DFS)
def test_upper_tail_equals_scipy(df: float) -> None:
    for t in [0.0, 1e-3, 0.5, 1.0, 1.96, 3.0, 10.0, 100.0, 1e4, -0.5, -3.0]:
        assert t_sf(t, df) == pytest.approx(float(sp.t.sf(t, df)), rel=1e-12, abs=0), (t, df)


def test_many_degrees_of_freedom_stay_close() -> None:
    # half the degrees of freedom goes through Stirling's series from 50 on; a log of a million query
    # issues still agrees to 1e-10, far below any printed digit
    for df in [10**4, 10**5, 10**6]:
        for p in [0.6, 0.975, 0.999]:
            assert t_quantile(p, df) == pytest.approx(float(sp.t.ppf(p, df)), rel=1e-10), (p, df)


def test_hand_checkable_quantiles() -> None:
    # closed forms: df = 1 is Cauchy, t = tan(pi (p - 1/2)); df = 2 gives t = (2p - 1) sqrt(2 / (4p(1 - p)))
    for p in [0.6, 0.9, 0.975]:
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-13)
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p))), rel=1e-13)
    assert t_quantile(0.5, 7) == 0.0


def test_the_interval_a_table_shows_equals_scipys() -> None:
    rng = np.random.default_rng(3)
    for n in [2, 3, 10, 50, 300]:
        x = rng.random(n)
        m, s = x.mean(), x.std(ddof=1)
        half = float(sp.t.ppf(0.975, n - 1)) * s / math.sqrt(n)
        assert mean_t_interval(x) == pytest.approx((m - half, m + half), rel=1e-12)
        assert significance.mean_ci(x) == mean_t_interval(x)  # one implementation
    assert mean_t_interval(np.array([0.25, 0.25, 0.25])) == (0.25, 0.25)  # constant values: a point
    assert mean_t_interval(np.array([0.0, 0.1]), bounds=(0.0, 1.0))[0] == 0.0  # cut at the metric's bounds


def test_many_intervals_at_once_are_each_rows_own_to_the_bit() -> None:
    # A table's means in one call (mean_t_intervals) must print what each alone would: numpy sums a
    # contiguous row as it sums a vector. Rows of all kinds: random, graded, rounded, constant, large.
    rng = np.random.default_rng(11)
    for trial in range(200):
        n, k = int(rng.integers(2, 2000)), int(rng.integers(1, 30))
        rows = [
            rng.random((k, n)),
            rng.integers(0, 4, (k, n)) / 3.0,
            np.round(rng.random((k, n)), 3),
            rng.normal(0.0, 1e3, (k, n)),
        ][trial % 4]
        rows[0] = rows[0, 0]  # a constant row: a point
        means = rows.mean(axis=1)
        lows, highs = mean_t_intervals(rows.T.copy().T, means)  # a column-major matrix too
        for i in range(k):
            assert (lows[i], highs[i]) == mean_t_interval(rows[i], mean=means[i])
        # and the formula itself, against scipy's quantile
        sd = rows.std(axis=1, ddof=1)
        half = float(sp.t.ppf(0.975, n - 1)) * sd[1:] / math.sqrt(n)
        np.testing.assert_allclose(highs[1:], means[1:] + half, rtol=1e-12, atol=1e-12)
        assert lows[0] == highs[0] == means[0]


@pytest.mark.parametrize(("p", "df"), [(0.0, 3), (1.0, 3), (0.5, 0), (float("nan"), 3)])
def test_out_of_range_is_refused(p: float, df: float) -> None:
    with pytest.raises(ValueError, match="0 < p < 1 and df > 0"):
        t_quantile(p, df)
