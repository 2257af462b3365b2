"""Sampled metrics, raw and corrected: each held-out item ranked against ``n`` sampled negatives, as many
recommender papers evaluate, beside its exact rank among all items, and Krichene and Rendle's correction.

Krichene and Rendle (KDD 2020, "On Sampled Metrics for Item Recommendation"; CACM 65(7), 2022) show that
a metric computed on the sampled rank can order two models otherwise than the same metric on the exact
rank, even in expectation. Their correction replaces the metric's value at each sampled rank ``r`` by a
value ``x[r]`` chosen so that its expectation over the sampling, given the exact rank ``R``, is close to
the exact metric ``M(R)``.

The notation (the paper's): ``N`` the relevant item and its user's candidate negatives (items neither
held out nor excluded), ``n`` the negatives sampled among the ``N - 1``, ``R`` in 1..N the exact rank of a relevant item among the candidates
and itself, ``r`` in 1..n+1 its sampled rank. Negatives are drawn uniformly without replacement, so ``r -
1`` follows the hypergeometric law: ``P(r | R) = C(R-1, r-1) C(N-R, n-r+1) / C(N-1, n)`` (the paper's
binomial is this law's with-replacement approximation; here the law is exact).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.special

from irspec.errors import InputError, ParameterError
from irspec.frozen import frozen
from irspec.recsys.matrices import _chunks, _csr, checked_scores

__all__ = ["SampledMetric", "SampledResult", "correction", "rank_distribution", "sampled"]

_METRIC = re.compile(r"(?P<name>HitRate|nDCG)@(?P<k>[1-9][0-9]*)|(?P<ap>AP)")


@frozen
class SampledMetric:
    """One metric's values per held-out (user, item) pair: ``exact`` on the exact rank, ``sampled`` on the
    sampled rank as papers report it, ``corrected`` Krichene and Rendle's estimate from the sampled rank."""

    exact: np.ndarray
    sampled: np.ndarray
    corrected: np.ndarray

    def means(self) -> dict[str, float]:
        """The three means over the pairs: ``{"exact": ..., "sampled": ..., "corrected": ...}``."""
        return {
            "exact": float(self.exact.mean()) if self.exact.size else 0.0,
            "sampled": float(self.sampled.mean()) if self.sampled.size else 0.0,
            "corrected": float(self.corrected.mean()) if self.corrected.size else 0.0,
        }


@frozen
class SampledResult:
    """What :func:`sampled` finds: one row per held-out relevant (user, item) pair, the negatives drawn per
    user, and each metric's values (:class:`SampledMetric`)."""

    users: np.ndarray
    """The pairs' users (row numbers of the held-out matrix)."""
    items: np.ndarray
    """The pairs' relevant items (column numbers)."""
    exact_rank: np.ndarray
    """``R``: 1 + the candidates that rank above the item (over all items neither held out nor excluded)."""
    sampled_rank: np.ndarray
    """``r``: 1 + the user's sampled negatives that rank above the item."""
    candidates: np.ndarray
    """``N``: the relevant item and its user's candidate negatives (items neither held out nor excluded),
    the exact rank's range 1..N."""
    negatives: np.ndarray
    """The negatives sampled, users × n (a row of -1 for a user without a relevant held-out item)."""
    metrics: Mapping[str, SampledMetric]
    """Each metric's values, by its name as given."""
    n: int
    gamma: float
    seed: int | None

    def table(self) -> dict[str, dict[str, float]]:
        """Each metric's means: ``{metric: {"exact": ..., "sampled": ..., "corrected": ...}}``."""
        return {name: values.means() for name, values in self.metrics.items()}


def sampled(
    test_matrix: Any,
    scores: Any,
    n: int = 100,
    metrics: str | Sequence[str] = ("HitRate@10", "nDCG@10", "AP"),
    *,
    exclude: Any = None,
    seed: int | None = 0,
    gamma: float = 0.1,
) -> SampledResult:
    """Evaluate ``scores`` against ``n`` sampled negatives per user, raw and corrected, beside the exact
    metric over all items (Krichene and Rendle, KDD 2020).

    ``test_matrix``: scipy.sparse users × items, the held-out interactions; a stored value above 0 is a
    relevant item, every stored entry (an explicit 0 too) is held out and never sampled as a negative.
    ``scores``: users × items, a dense array or an iterable of row chunks in the users' order (as
    :func:`~irspec.recsys.evaluate_scores` takes them: numbers, integers compared as integers, a NaN or
    infinite score an :class:`~irspec.errors.InputError` naming the user and item). ``exclude``: the
    training interactions, never sampled and not counted in the exact rank.

    **Sampling**: for each user with a relevant held-out item, ``n`` negatives uniformly without
    replacement from its candidates (items neither held out nor excluded), from
    ``numpy.random.default_rng(seed)``, users in order; the same ``seed`` draws the same negatives.
    Each relevant item is ranked against those negatives alone (the user's other held-out items are
    neither negatives nor competitors), so each (user, item) pair is one evaluation, as in the paper.

    **Ranks and ties**: an item ranks above the relevant item ``i`` when its score is higher, or equal and
    its index lower (the order of :func:`~irspec.recsys.evaluate_scores`). Exact and sampled ranks follow
    the same total order, so that ``P(r | R)`` is exactly hypergeometric.

    **Metrics** on a rank ``R`` of a single relevant item: ``HitRate@k`` = ``[R <= k]`` (recall of the
    one item); ``nDCG@k`` = ``1 / log2(R + 1)`` if ``R <= k`` else 0; ``AP`` = ``1 / R``.

    **The correction**: the paper's bias-variance correction (their section 4, "CLS"), with weights
    ``p(R)`` uniform over 1..N, at a trade-off ``gamma``: the values ``x[r]``,
    r = 1..n+1, minimising ``sum_R p(R) [(E[x(r) | R] - M(R))^2 + gamma Var[x(r) | R]]``, whose solution
    is ``x = ((1 - gamma) AᵀA + gamma diag(c))⁻¹ Aᵀ b`` with ``A[R, r] = sqrt(p(R)) P(r | R)``,
    ``b[R] = sqrt(p(R)) M(R)`` and ``c[r] = sum_R p(R) P(r | R)``. ``gamma=0`` is the paper's
    minimal-bias correction, the least-squares problem ``min_x sum_R (E[x(r) | R] - M(R))^2`` (solved
    by ``numpy.linalg.lstsq``); it is nearly unbiased but, with a large catalogue, its values swing by
    orders of magnitude from one sampled rank to the next (``P(r | R)`` is nearly collinear across R),
    so that a mean over a few thousand users is noise: the default ``gamma=0.1`` trades a little bias
    for a usable variance. The correction depends on ``N``: computed once per distinct candidate count.

    Raises :class:`~irspec.errors.InputError` for malformed inputs (a score that is not finite, a
    (user, item) pair the held-out matrix stores twice) or a user with fewer than ``n`` candidates,
    :class:`~irspec.errors.ParameterError` for an unknown metric or ``gamma`` outside [0, 1].
    """
    test = _csr(test_matrix, "test_matrix")
    users_count, items_count = test.shape
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"n must be a positive integer (negatives per user), got {n!r}", "<n>")
    if not 0.0 <= gamma <= 1.0:
        raise ParameterError("sampled", "gamma", f"must be in [0, 1], got {gamma!r}")
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    names = [part.strip() for name in names for part in name.split(",") if part.strip()]
    for name in names:
        _metric(name)
    excluded = None if exclude is None else _csr(exclude, "exclude", test.shape)
    rng = np.random.default_rng(seed)
    negatives = np.full((users_count, n), -1, dtype=np.int64)
    pairs_users: list[np.ndarray] = []
    pairs_items: list[np.ndarray] = []
    exact: list[np.ndarray] = []
    sampled_ranks: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    index = np.arange(items_count)
    start = 0
    for given in _chunks(scores, items_count):
        chunk = checked_scores(given, start)  # as evaluate_scores refuses them: a NaN or infinite score
        for row in range(len(chunk)):
            user = start + row
            if user >= users_count:
                raise InputError(f"scores have more rows than test_matrix's {users_count} users", "<scores>")
            lo, hi = test.indptr[user], test.indptr[user + 1]
            relevant = test.indices[lo:hi][test.data[lo:hi] > 0]
            if relevant.size == 0:
                continue
            candidate = np.ones(items_count, dtype=bool)
            candidate[test.indices[lo:hi]] = False
            if excluded is not None:
                candidate[excluded.indices[excluded.indptr[user] : excluded.indptr[user + 1]]] = False
            pool = np.flatnonzero(candidate)
            if pool.size < n:
                raise InputError(
                    f"user {user}: {pool.size} candidate items (neither held out nor excluded), fewer than "
                    f"n={n} negatives to sample",
                    "<test_matrix>",
                )
            drawn = rng.choice(pool, size=n, replace=False)
            negatives[user] = drawn
            line = chunk[row]  # integers compared as integers (a float64 would tie those above 2**53)
            mine = line[relevant]
            # above[j, i]: candidate i ranks above relevant item j (higher score, or tied and a lower index)
            above = (line[None, :] > mine[:, None]) | (
                (line[None, :] == mine[:, None]) & (index < relevant[:, None])
            )
            pairs_users.append(np.full(relevant.size, user, dtype=np.int64))
            pairs_items.append(relevant.astype(np.int64))
            exact.append(1 + (above & candidate).sum(axis=1))
            sampled_ranks.append(1 + above[:, drawn].sum(axis=1))
            counts.append(np.full(relevant.size, pool.size + 1, dtype=np.int64))  # the paper's N: + the item
        start += len(chunk)
    if start != users_count:
        raise InputError(f"scores have {start} rows, test_matrix {users_count} users", "<scores>")
    users = _joined(pairs_users)
    big_r = _joined(exact)
    small_r = _joined(sampled_ranks)
    population = _joined(counts)
    values: dict[str, SampledMetric] = {}
    for name in names:
        corrected = np.zeros(small_r.size)
        for size in np.unique(population):
            mask = population == size
            corrected[mask] = correction(name, int(size), n, gamma)[small_r[mask] - 1]
        values[name] = SampledMetric(
            exact=_metric(name)(big_r), sampled=_metric(name)(small_r), corrected=corrected
        )
    return SampledResult(
        users=users,
        items=_joined(pairs_items),
        exact_rank=big_r,
        sampled_rank=small_r,
        candidates=population,
        negatives=negatives,
        metrics=values,
        n=int(n),
        gamma=float(gamma),
        seed=seed,
    )


def rank_distribution(candidates: int, n: int) -> np.ndarray:
    """``P(r | R)`` as a ``candidates`` × ``n + 1`` array (row ``R - 1``, column ``r - 1``): the sampled
    rank's law given the exact rank, ``n`` negatives drawn uniformly without replacement from the
    ``candidates - 1`` (the hypergeometric law of how many are drawn from the ``R - 1`` above)."""
    above = np.arange(candidates, dtype=np.float64)[:, None]  # R - 1 negatives above the item
    drawn = np.arange(n + 1, dtype=np.float64)[None, :]  # r - 1 of them drawn
    below = candidates - 1 - above
    # log C(R-1, r-1) + log C(N-R, n-r+1) - log C(N-1, n), through gammaln: scipy.stats.hypergeom.pmf
    # takes about a minute for N = 20,000 and n = 100, this a fraction of a second
    log = (
        _log_choose(above, drawn)
        + _log_choose(below, n - drawn)
        - _log_choose(np.float64(candidates - 1), np.float64(n))
    )
    return np.exp(log)


def _log_choose(total: Any, chosen: Any) -> np.ndarray:
    """log C(total, chosen), -inf where chosen is outside 0..total."""
    total, chosen = np.broadcast_arrays(
        np.asarray(total, dtype=np.float64), np.asarray(chosen, dtype=np.float64)
    )
    out = np.full(total.shape, -np.inf)
    ok = (chosen >= 0) & (chosen <= total)
    t, c = total[ok], chosen[ok]
    out[ok] = scipy.special.gammaln(t + 1) - scipy.special.gammaln(c + 1) - scipy.special.gammaln(t - c + 1)
    return out


@functools.lru_cache(maxsize=64)
def _correction(name: str, candidates: int, n: int, gamma: float) -> np.ndarray:
    law = rank_distribution(candidates, n)
    a = law / np.sqrt(candidates)  # rows weighted by sqrt(p(R)), p uniform over 1..N: nothing is assumed of R
    b = _metric(name)(np.arange(1, candidates + 1)) / np.sqrt(candidates)
    if gamma == 0.0:
        # lstsq rather than the normal equations: AᵀA is ill-conditioned where few R reach a sampled rank
        x, *_ = np.linalg.lstsq(a, b, rcond=None)
    else:
        c = law.sum(axis=0) / candidates  # c[r] = sum_R p(R) P(r | R)
        x = np.linalg.solve((1.0 - gamma) * (a.T @ a) + gamma * np.diag(c), a.T @ b)
    x.setflags(write=False)
    return np.asarray(x)


def correction(metric: str, candidates: int, n: int, gamma: float = 0.1) -> np.ndarray:
    """Krichene and Rendle's corrected metric: its value at each sampled rank r = 1..n+1 (index ``r - 1``)
    for ``candidates`` items (the relevant one and the negatives it may be drawn against) and ``n`` negatives, at the bias-variance trade-off ``gamma`` (0: minimal bias).
    See :func:`sampled` for the formula."""
    _metric(metric)
    if n < 1 or candidates <= n:
        raise InputError(f"need 1 <= n < candidates, got n={n}, candidates={candidates}", "<correction>")
    return _correction(metric, int(candidates), int(n), float(gamma))


def _metric(name: str) -> Any:
    """The metric ``name`` as a function of a rank array."""
    match = _METRIC.fullmatch(name)
    if match is None:
        raise ParameterError(
            name, None, "sampled metrics are HitRate@k, nDCG@k and AP (k a positive integer)"
        )
    if match["ap"]:
        return lambda ranks: 1.0 / np.asarray(ranks, dtype=np.float64)
    k = int(match["k"])
    if match["name"] == "HitRate":
        return lambda ranks: (np.asarray(ranks) <= k).astype(np.float64)
    return lambda ranks: np.where(
        np.asarray(ranks) <= k, 1.0 / np.log2(np.asarray(ranks, dtype=np.float64) + 1), 0.0
    )


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
