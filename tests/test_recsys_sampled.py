"""irspec.recsys.sampled (irspec/recsys/sampling.py): sampled ranks by hand, Krichene and Rendle's correction checked against its
definition by enumerating every sample, and the paper's headline effect (sampling reverses two models)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

import irspec
import irspec.recsys
from irspec.errors import InputError, ParameterError
from irspec.recsys.sampling import correction, rank_distribution, sampled


def _hand_case() -> tuple[sp.csr_array, np.ndarray, sp.csr_array]:
    # user 0: item 2 relevant, item 4 held out as judged non-relevant (explicit 0), item 0 excluded;
    # user 1: item 3 relevant, item 1 ties with it and has the lower index, so it ranks above
    test = sp.csr_array(([1, 0, 1], ([0, 0, 1], [2, 4, 3])), shape=(2, 6))
    train = sp.csr_array(([1], ([0], [0])), shape=(2, 6))
    scores = np.array([[9.0, 5.0, 3.0, 7.0, 8.0, 3.0], [1.0, 2.0, 0.5, 2.0, 0.0, 4.0]])
    return test, scores, train


def test_ranks_by_hand_when_every_candidate_is_sampled():
    test, scores, train = _hand_case()
    res = sampled(test, scores, 3, "HitRate@2, nDCG@3, AP", exclude=train, seed=7)
    # user 0's candidates: 1, 3, 5 (0 excluded, 2 and 4 held out); above item 2 (score 3): 1 and 3;
    # item 5 ties at 3 with a higher index, so below. User 1's candidates: 0, 1, 2, 4, 5 (3 only held
    # out); above item 3 (score 2): 5 (score 4) and 1 (tied, lower index)
    assert res.users.tolist() == [0, 1]
    assert res.items.tolist() == [2, 3]
    assert res.candidates.tolist() == [4, 6]  # the paper's N: the item and its candidate negatives
    assert res.exact_rank.tolist() == [3, 3]
    assert sorted(res.negatives[0].tolist()) == [1, 3, 5]
    assert res.sampled_rank[0] == 3  # every candidate drawn: the sampled rank is the exact one
    assert res.metrics["HitRate@2"].exact.tolist() == [0.0, 0.0]
    assert res.metrics["nDCG@3"].exact.tolist() == [0.5, 0.5]  # 1 / log2(3 + 1)
    assert res.metrics["AP"].exact == pytest.approx([1 / 3, 1 / 3])


@pytest.mark.parametrize("seed", range(12))
def test_sampled_rank_counts_the_drawn_negatives_above(seed):
    test, scores, train = _hand_case()
    res = sampled(test, scores, 2, "AP", exclude=train, seed=seed)
    above = [{1, 3}, {5, 1}]  # by hand, from the scores above
    for user in (0, 1):
        drawn = res.negatives[user].tolist()
        assert len(set(drawn)) == 2
        assert set(drawn) <= ({1, 3, 5} if user == 0 else {0, 1, 2, 4, 5})
        assert res.sampled_rank[user] == 1 + len(above[user] & set(drawn))
        assert res.metrics["AP"].sampled[user] == pytest.approx(1 / res.sampled_rank[user])


def test_the_seed_decides_the_negatives_and_chunks_read_alike():
    rng = np.random.default_rng(3)
    test = sp.random(40, 300, density=0.02, random_state=4, format="csr", data_rvs=lambda k: np.ones(k))
    scores = rng.random((40, 300))
    one = sampled(test, scores, 20, seed=5)
    again = sampled(test, (scores[i : i + 7] for i in range(0, 40, 7)), 20, seed=5)
    other = sampled(test, scores, 20, seed=6)
    assert np.array_equal(one.negatives, again.negatives)
    assert np.array_equal(one.sampled_rank, again.sampled_rank)
    assert one.table() == again.table()
    assert not np.array_equal(one.negatives, other.negatives)
    assert np.array_equal(one.exact_rank, other.exact_rank)  # exact ranks do not depend on the sample


def _enumerated(candidates: int, n: int) -> np.ndarray:
    """P(r | R) by listing every set of n negatives among the candidates - 1 (independent of scipy)."""
    law = np.zeros((candidates, n + 1))
    subsets = list(itertools.combinations(range(candidates - 1), n))
    for big_r in range(1, candidates + 1):
        for subset in subsets:  # negatives 0 .. R-2 are the ones ranked above the relevant item
            law[big_r - 1, sum(1 for j in subset if j < big_r - 1)] += 1
    return law / len(subsets)


def _ap(ranks: np.ndarray) -> np.ndarray:
    return 1.0 / ranks


def _hit3(ranks: np.ndarray) -> np.ndarray:
    return (ranks <= 3).astype(float)


@pytest.mark.parametrize(("metric", "exact"), [("AP", _ap), ("HitRate@3", _hit3)])
def test_the_correction_is_what_the_paper_defines(metric, exact):
    candidates, n = 12, 4
    law = _enumerated(candidates, n)
    assert np.allclose(rank_distribution(candidates, n), law)
    big_r = np.arange(1, candidates + 1)
    small_r = np.arange(1, n + 2)
    truth = exact(big_r.astype(float))

    def bias2(x: np.ndarray) -> float:  # mean over R of (E[x(r) | R] - M(R))^2
        return float(np.mean((law @ x - truth) ** 2))

    def variance(x: np.ndarray) -> float:  # mean over R of Var[x(r) | R]
        return float(np.mean(law @ x**2 - (law @ x) ** 2))

    raw = exact(small_r.astype(float))
    minimal = correction(metric, candidates, n, gamma=0.0)
    traded = correction(metric, candidates, n, gamma=0.1)
    # minimal bias: less bias than the raw metric, and than any perturbation of it
    assert bias2(minimal) < bias2(raw)
    rng = np.random.default_rng(0)
    for _ in range(50):
        assert bias2(minimal) <= bias2(minimal + 1e-3 * rng.standard_normal(n + 1)) + 1e-12

    # bias-variance: the paper's objective (1 - gamma) weighting is its closed form's; the minimiser of
    # sum_R p(R) [bias^2 + gamma var] with p uniform, checked against perturbations
    def objective(x: np.ndarray) -> float:
        return bias2(x) + 0.1 * variance(x)

    assert objective(traded) < objective(raw)
    for _ in range(50):
        assert objective(traded) <= objective(traded + 1e-3 * rng.standard_normal(n + 1)) + 1e-12
    assert variance(traded) < variance(minimal)


def _model(test: sp.csr_array, ranks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Scores that put each user's relevant item at the given exact rank, the other items at random."""
    users, items = test.shape
    scores = np.empty((users, items))
    for user in range(users):
        relevant = int(test.indices[test.indptr[user]])
        others = rng.permutation(np.delete(np.arange(items), relevant))
        order = np.insert(others, ranks[user] - 1, relevant)
        scores[user, order] = np.arange(items, 0, -1)
    return scores


def test_sampling_reverses_two_models_and_the_correction_does_not():
    users, items = 400, 2000
    rng = np.random.default_rng(11)
    test = sp.csr_array(
        (np.ones(users, int), (np.arange(users), rng.integers(0, items, users))), (users, items)
    )
    # A: the relevant item first for 30% of the users, far down (1500) for the rest;
    # B: at rank 5 for 20% of the users, at a middling 40 for the rest
    a = _model(test, np.where(np.arange(users) % 10 < 3, 1, 1500), rng)
    b = _model(test, np.where(np.arange(users) % 5 == 0, 5, 40), rng)
    res_a = sampled(test, a, 100, "HitRate@10", seed=1)
    res_b = sampled(test, b, 100, "HitRate@10", seed=1)
    ta, tb = res_a.table()["HitRate@10"], res_b.table()["HitRate@10"]
    assert ta["exact"] == pytest.approx(0.3) and tb["exact"] == pytest.approx(0.2)  # A > B
    # rank 40 of 1999 negatives: about 2 of 100 sampled ones above, a sampled hit almost always
    assert tb["sampled"] > 0.9 > 0.35 > ta["sampled"]  # sampled: B > A
    assert ta["corrected"] > tb["corrected"]  # corrected: A > B again
    assert abs(ta["corrected"] - 0.3) < abs(ta["sampled"] - 0.3) or abs(tb["corrected"] - 0.2) < abs(
        tb["sampled"] - 0.2
    )


def test_exported_and_errors_name_what_was_expected():
    # the function: its module is named sampling, lest an import of a module "sampled" shadow it
    assert irspec.recsys.sampled is sampled
    test, scores, train = _hand_case()
    with pytest.raises(ParameterError, match="HitRate@k, nDCG@k and AP"):
        sampled(test, scores, 2, "MRR@10")
    with pytest.raises(InputError, match=r"user 0: 3 candidate items.*fewer than n=4"):
        sampled(test, scores, 4, exclude=train)
    with pytest.raises(ParameterError, match=r"gamma.*in \[0, 1\]"):
        sampled(test, scores, 2, gamma=2.0)
    with pytest.raises(InputError, match="scores have 1 rows, test_matrix 2 users"):
        sampled(test, scores[:1], 2)
    assert math.isclose(correction("HitRate@1", 10, 9, gamma=0.0)[0], 1.0)  # every negative drawn: exact


@pytest.mark.parametrize(("bad", "shown"), [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_a_score_that_is_not_finite_is_refused_as_evaluate_scores_refuses_it(bad, shown):
    """A NaN score compares false with everything, so nothing would rank above it (rank 1): refused
    with evaluate_scores' message, naming the user (its row in the whole matrix, chunks given) and item."""
    test, scores, train = _hand_case()
    scores = scores.copy()
    scores[1, 3] = bad
    message = rf"user 1, item 3: score {shown} is not finite"
    with pytest.raises(InputError, match=message):
        irspec.evaluate_scores(test, scores, "RR@6", exclude=train)
    with pytest.raises(InputError, match=message):
        sampled(test, scores, 3, "AP", exclude=train)
    with pytest.raises(InputError, match=message):
        sampled(test, iter([scores[:1], scores[1:]]), 3, "AP", exclude=train)
    with pytest.raises(InputError, match="scores must be a 2-D array of numbers"):
        sampled(test, scores.astype(str), 3, "AP")


def test_integer_scores_are_compared_as_integers():
    """Item 1 scores 2**53 + 1, the relevant item 0 2**53: a float64 makes them equal (2**53 + 1 is no
    float64), and the tie would put item 0 (the lower index) first; as integers item 1 is above, so the
    exact rank is 2, and so is the sampled one (every candidate drawn)."""
    test = sp.csr_array(np.array([[1, 0, 0, 0]]))
    scores = np.array([[2**53, 2**53 + 1, 0, 7]], dtype=np.int64)
    res = sampled(test, scores, 3, "AP")
    assert res.exact_rank.tolist() == [2]
    assert res.sampled_rank.tolist() == [2]
    unsigned = sampled(test, np.array([[3, 200, 255, 0]], dtype=np.uint8), 3, "AP")
    assert unsigned.exact_rank.tolist() == [3]  # 200 and 255 above 3


def test_the_rank_law_equals_scipys_hypergeometric_at_a_larger_size():
    # rank_distribution computes the law through gammaln for speed; scipy.stats' pmf is the reference
    import scipy.stats

    law = scipy.stats.hypergeom.pmf(np.arange(31)[None, :], 499, np.arange(500)[:, None], 30)
    assert np.allclose(rank_distribution(500, 30), law, rtol=1e-9, atol=1e-15)
