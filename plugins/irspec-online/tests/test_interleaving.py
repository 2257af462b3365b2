"""Interleaving: the lists each method serves, the credit it gives clicks, its fidelity (a user who clicks
at random prefers neither ranking), and the interleaving test of a log (counts, the bootstrap over users,
the sign test over queries), in memory and streamed.

Expected values come from the papers' definitions computed here (every coin sequence of team-draft
enumerated, every list and assignment of probabilistic interleaving, the linear program's constraints
evaluated), from hand arithmetic, and from scipy (the binomial test); never from the code under test.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from fractions import Fraction

import pytest

pytest.importorskip("irspec_online")

import numpy as np
import polars as pl
from irspec_online import plugin
from irspec_online.interleaving import CREDITS, Balanced, Optimized, Probabilistic, TeamDraft, _numpy_sum
from irspec_online.log import read_log
from irspec_online.records import Clicks
from scipy.optimize import linprog
from scipy.stats import binomtest

import irspec
from irspec.testing import registered_plugin

A = ["d1", "d2", "d3", "d4", "d5", "d6"]
B = ["d3", "d1", "d7", "d2", "d8", "d4"]


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


class Coins:
    """A stand-in for a Generator's ``random()``: the coin outcomes given, in order (0.0 heads for a)."""

    def __init__(self, flips):
        self.flips = list(flips)
        self.used = 0

    def random(self):
        self.used += 1
        return self.flips.pop(0) if self.flips else 0.0


def clicks_of(rows):
    """:class:`Clicks` of rows, each a list of ``(rank, team, rank_a, rank_b, p_a)``."""
    start = np.cumsum([0] + [len(r) for r in rows])
    flat = [c for r in rows for c in r] or [(0, 0, 0, 0, 0.0)]
    cols = list(zip(*flat, strict=True))
    n = len([c for r in rows for c in r])
    return Clicks(
        start, *(np.array(col[:n]) for col in cols), np.zeros(n, dtype=np.int32), np.full(n, np.nan)
    )


def slot_clicks(served, ranks):
    """The clicked slots (1-based ``ranks``) of a served list, with their origins."""
    return [
        (r, served.team[r - 1], served.rank_a[r - 1], served.rank_b[r - 1], served.p_a[r - 1]) for r in ranks
    ]


# --------------------------------------------------------------------------------------------------
# The lists served


def test_team_draft_by_hand():
    # coin: a first, then b first, then a first
    served = TeamDraft().interleave(A, B, Coins([0.1, 0.9, 0.1]), 6)
    assert served.docs == ("d1", "d3", "d7", "d2", "d4", "d8")
    assert served.team == (0, 1, 1, 0, 0, 1)
    assert served.rank_a == (1, 3, 7, 2, 4, 7)  # d7, d8: not in a's top 6
    assert served.rank_b == (2, 1, 3, 4, 6, 5)
    assert all(math.isnan(p) for p in served.p_a)


@pytest.mark.parametrize("seed", range(30))
def test_team_draft_keeps_the_teams_balanced_and_each_pick_the_captains_best(seed):
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(12)]
    a, b = list(rng.permutation(docs)[:8]), list(rng.permutation(docs)[:8])
    served = TeamDraft().interleave(a, b, np.random.default_rng(seed), 8)
    assert len(set(served.docs)) == len(served.docs)
    for k in range(1, len(served.docs) + 1):
        picks = served.team[:k]
        assert abs(picks.count(0) - picks.count(1)) <= 1  # the teams never differ by more than one
        captain = a if served.team[k - 1] == 0 else b
        best = next(d for d in captain if d not in served.docs[: k - 1])
        assert served.docs[k - 1] == best


def test_balanced_by_hand():
    served = Balanced().interleave(A, B, Coins([0.9]), 6)  # b first
    # b1 d3, a1 d1, b2 (d1: placed), a2 d2, b3 d7, a3 (d3: placed), b4 (d2: placed), a4 d4, b5 d8
    assert served.docs == ("d3", "d1", "d2", "d7", "d4", "d8")
    assert set(served.team) == {-1}


def test_probabilistic_by_hand():
    """Two documents, tau = 1: a ranks x, y; b ranks y, x. The coin picks a, whose softmax (1, 1/2)/1.5
    draws y (u = 0.9 > 2/3); then b is left y... no: y left both, so x is drawn whoever is picked."""
    served = Probabilistic(irspec.plugin_api.parse_method("pi(tau=1)", "interleaving method")).interleave(
        ["x", "y"], ["y", "x"], SeededChoices([0.1, 0.9, 0.6, 0.2]), 2
    )
    assert served.docs == ("y", "x")
    # slot 1: P_a(y) = (1/2)/(3/2) = 1/3, P_b(y) = 1/(3/2) = 2/3: a drew it with probability 1/3
    # slot 2: x alone is left in both: 1/2
    assert served.p_a == pytest.approx((1 / 3, 1 / 2))
    assert served.team == (0, 1)


def _probabilistic_with_choice(a, b, rng, depth, tau=3.0):
    """Hofmann et al.'s probabilistic interleaving, each ranking's document drawn by numpy's
    ``Generator.choice`` over its softmax of the documents left: the docs, teams and p_a of each slot."""
    weight = [{d: 1.0 / (r + 1) ** tau for r, d in enumerate(dict.fromkeys(x[:depth]))} for x in (a, b)]
    left = [dict(w) for w in weight]
    docs, team, p_a = [], [], []
    while len(docs) < depth and (left[0] or left[1]):
        totals = [np.array(list(w.values())).sum() for w in left]
        use_a = totals[1] == 0 or (totals[0] > 0 and rng.random() < 0.5)
        names = list(weight[0 if use_a else 1])
        p = np.array([left[0 if use_a else 1].get(d, 0.0) for d in names])
        doc = names[int(rng.choice(len(names), p=p / p.sum()))]
        pa, pb = (w[doc] / t if doc in w else 0.0 for w, t in zip(weight, totals, strict=True))
        docs.append(doc)
        team.append(0 if use_a else 1)
        p_a.append(pa / (pa + pb))
        for w in left:
            w.pop(doc, None)
    return tuple(docs), tuple(team), tuple(p_a)


def test_probabilistic_draws_as_the_generators_choice_does():
    """Each ranking's document is the one ``Generator.choice`` draws from its softmax, from the same random
    numbers (a simulation's bank of lists, and so its figures, rest on them), for random rankings and seeds."""
    rng = np.random.default_rng(5)
    for seed in range(300):
        # rankings of a dozen documents, and a fifth of them of up to 60 (numpy sums 8 values or more in
        # eight running sums), under several softmax exponents
        pool = 12 if seed % 5 else 60
        a = [f"d{d}" for d in rng.permutation(pool)[: int(rng.integers(1, pool))]]
        b = [f"d{d}" for d in rng.permutation(pool)[: int(rng.integers(1, pool))]]
        depth = int(rng.integers(1, pool - 1))
        tau = [3.0, 1.0, 0.5, 7.0][seed % 4]
        method = Probabilistic(
            irspec.plugin_api.parse_method(f"probabilistic(tau={tau})", "interleaving method")
        )
        served = method.interleave(a, b, np.random.default_rng(seed), depth)
        docs, team, p_a = _probabilistic_with_choice(a, b, np.random.default_rng(seed), depth, tau)
        assert (served.docs, served.team, served.p_a) == (docs, team, p_a)  # to the bit


def test_the_plain_sum_is_numpys_to_the_bit():
    """Probabilistic interleaving sums its weights as ``np.sum`` does (pairwise), in plain Python: the
    same bits for every length (the three ways numpy sums: under 8, up to 128, halves beyond)."""
    rng = np.random.default_rng(11)
    for n in [*range(0, 140), 255, 256, 257, 1000, 1037]:
        for scale in (1.0, 1e-3, 1e12):
            values = rng.random(n) ** 7 * scale * rng.choice([-1.0, 1.0], n)
            assert _numpy_sum(values.tolist()) == values.sum(), n


def test_optimized_draws_as_the_generators_choice_does():
    """Optimized interleaving serves the allowed list that ``Generator.choice`` draws with the solved
    distribution's probabilities, from the same random number, for random rankings, seeds and credits."""
    rng = np.random.default_rng(9)
    for seed in range(120):
        a = [f"d{d}" for d in rng.permutation(10)[: int(rng.integers(1, 10))]]
        b = [f"d{d}" for d in rng.permutation(10)[: int(rng.integers(1, 10))]]
        depth = int(rng.integers(1, 7))
        credit = CREDITS[seed % 3]
        method = Optimized(irspec.plugin_api.parse_method(f"optimized({credit})", "interleaving method"))
        lists, p = method.distribution(a, b, depth)
        for draw in range(3):  # the pair's distribution solved once, drawn from again
            want = lists[int(np.random.default_rng([seed, draw]).choice(len(lists), p=p))]
            assert method.interleave(a, b, np.random.default_rng([seed, draw]), depth).docs == tuple(want)


class SeededChoices(Coins):
    """``random()`` and ``choice(n, p=...)`` from given uniforms (inverse CDF)."""

    def choice(self, n, p):
        u = self.random()
        return int(np.searchsorted(np.cumsum(p), u, side="right"))


@pytest.mark.parametrize("method", [TeamDraft(), Balanced(), Probabilistic(), Optimized()])
def test_each_method_is_deterministic_for_a_seed(method):
    first = [method.interleave(A, B, np.random.default_rng(7), 6) for _ in range(2)]
    assert first[0] == first[1]
    others = {method.interleave(A, B, np.random.default_rng(s), 6).docs for s in range(40)}
    assert len(others) > 1  # and the seed does draw


def test_origins_are_what_a_log_record_holds():
    served = TeamDraft().interleave(A, B, Coins([0.1, 0.9, 0.1]), 6)
    assert served.origins()[:2] == [
        {"team": "a", "rank_a": 1, "rank_b": 2},
        {"team": "b", "rank_a": 3, "rank_b": 1},
    ]
    p = Probabilistic().interleave(A, B, np.random.default_rng(1), 6).origins()
    assert all(set(o) == {"team", "rank_a", "rank_b", "p_a"} and 0 <= o["p_a"] <= 1 for o in p)
    json.dumps(p)  # plain values


# --------------------------------------------------------------------------------------------------
# Credit, by hand


def test_team_draft_credit():
    served = TeamDraft().interleave(A, B, Coins([0.1, 0.9, 0.1]), 6)  # teams a b b a a b
    rows = [[], slot_clicks(served, [1]), slot_clicks(served, [2, 3]), slot_clicks(served, [1, 2]),
            slot_clicks(served, [1, 4, 6])]  # fmt: skip
    assert TeamDraft().outcome(clicks_of(rows)).tolist() == [0, -1, 1, 0, -1]


def test_balanced_credit():
    served = Balanced().interleave(A, B, Coins([0.9]), 6)  # d3 d1 d2 d7 d4 d8
    # clicks on d3 and d7: the lowest, d7, has ranks a 7, b 3, so k = 3: a's top 3 (d1 d2 d3) holds one
    # clicked document (d3), b's top 3 (d3 d1 d7) two: b wins
    # a click on d2 (slot 3): ranks a 2, b 4, so k = 2: a's top 2 holds d2 (1), b's top 2 none: a wins
    # a click on d3 alone: ranks a 3, b 1, so k = 1: a's top 1 (d1) holds none, b's (d3) one: b wins
    # clicks on d1 and d2: d2's ranks a 2, b 4, so k = 2: a's top 2 holds both, b's top 2 (d3 d1) one: a wins
    rows = [
        slot_clicks(served, [1, 4]),
        slot_clicks(served, [3]),
        slot_clicks(served, [1]),
        slot_clicks(served, [2, 3]),
    ]
    assert Balanced().outcome(clicks_of(rows)).tolist() == [1, -1, 1, -1]


def test_optimized_credit():
    served = Optimized().interleave(A, B, np.random.default_rng(0), 6)
    rows = [slot_clicks(served, [r]) for r in range(1, 7)]
    expected = [np.sign(served.rank_a[r - 1] - served.rank_b[r - 1]) for r in range(1, 7)]  # linear credit
    assert Optimized().outcome(clicks_of(rows)).tolist() == expected
    inverse = Optimized(irspec.plugin_api.parse_method("optimized(inverse)", "interleaving method"))
    both = clicks_of([slot_clicks(served, [1, 2])])
    ra, rb = served.rank_a[:2], served.rank_b[:2]
    assert inverse.outcome(both)[0] == np.sign(sum(1 / b - 1 / a for a, b in zip(ra, rb, strict=True)))


def test_probabilistic_outcome_is_the_expectation_over_assignments():
    """Brute force: every assignment of the clicked slots to a or b, weighted by the slots' p_a."""
    rng = np.random.default_rng(3)
    rows = []
    for _ in range(50):
        k = int(rng.integers(0, 5))
        rows.append([(j + 1, int(rng.integers(0, 2)), 1, 1, float(rng.random())) for j in range(k)])
    got = Probabilistic().outcome(clicks_of(rows))
    for row, value in zip(rows, got, strict=True):
        expected = 0.0
        for assignment in itertools.product((0, 1), repeat=len(row)):  # 0: a, 1: b
            p = math.prod(c[4] if t == 0 else 1 - c[4] for c, t in zip(row, assignment, strict=True))
            expected += p * np.sign(sum(assignment) - (len(row) - sum(assignment)))
        assert value == pytest.approx(expected, abs=1e-12)


# --------------------------------------------------------------------------------------------------
# Fidelity: a random clicker prefers neither


EXAMINE = (
    0.9,
    0.7,
    0.5,
    0.4,
    0.3,
    0.2,
)  # a random clicker: clicks rank r with this probability, any document


def expected_random_outcome(method, served_lists):
    """The exact expected outcome of a random clicker over ``(probability, served)`` lists: every subset of
    slots clicked, weighted by EXAMINE."""
    total = 0.0
    for p_list, served in served_lists:
        n = len(served.docs)
        for clicked in itertools.product((0, 1), repeat=n):
            p = math.prod(EXAMINE[r] if c else 1 - EXAMINE[r] for r, c in enumerate(clicked))
            ranks = [r + 1 for r, c in enumerate(clicked) if c]
            total += p_list * p * method.outcome(clicks_of([slot_clicks(served, ranks)]))[0]
    return total


def test_team_draft_fidelity_exactly():
    """Every sequence of coins, equally likely: the expected outcome of a random clicker is 0 (Radlinski et
    al.'s design; Hofmann et al.'s fidelity)."""
    lists = []
    for flips in itertools.product((0.1, 0.9), repeat=4):
        coins = Coins(flips)
        served = TeamDraft().interleave(A, B, coins, 6)
        assert coins.used <= 4
        lists.append((1 / 16, served))
    assert expected_random_outcome(TeamDraft(), lists) == pytest.approx(0.0, abs=1e-12)


def test_probabilistic_fidelity_exactly():
    """Every list probabilistic interleaving can serve, with its probability computed here from the paper
    (each slot: half a's softmax and half b's, over the documents left), its p_a likewise; a random
    clicker's expected marginalised outcome is 0."""
    a, b, tau = ["x", "y", "z"], ["z", "x", "w"], 3.0
    docs = sorted(set(a) | set(b))
    method = Probabilistic()
    lists = []
    for order in itertools.permutations(docs, 3):
        p_list, p_a, left = 1.0, [], set(docs)
        for d in order:
            pa = _softmax(a, left, tau).get(d, 0.0)
            pb = _softmax(b, left, tau).get(d, 0.0)
            p_list *= 0.5 * pa + 0.5 * pb
            p_a.append(pa / (pa + pb) if pa + pb else 0.5)
            left.discard(d)
        if p_list:
            served = type("S", (), {"docs": order, "team": (0,) * 3, "rank_a": (1,) * 3, "rank_b": (1,) * 3,
                                     "p_a": tuple(p_a)})  # fmt: skip
            lists.append((p_list, served))
    assert sum(p for p, _ in lists) == pytest.approx(1.0)
    assert expected_random_outcome(method, lists) == pytest.approx(0.0, abs=1e-12)


def _softmax(ranking, left, tau):
    w = {d: 1 / (r + 1) ** tau for r, d in enumerate(ranking) if d in left}
    total = sum(w.values())
    return {d: v / total for d, v in w.items()} if total else {}


@pytest.mark.parametrize("credit", ["linear", "binary", "inverse"])
def test_optimized_distribution_gives_a_random_click_no_credit_at_any_rank(credit):
    """Radlinski and Craswell's constraint, evaluated here: for every rank k, the lists' credits of a click
    at k, weighted by their probabilities, sum to 0."""
    method = Optimized(irspec.plugin_api.parse_method(f"optimized({credit})", "interleaving method"))
    lists, p = method.distribution(A, B, 6)
    ra = {d: r + 1 for r, d in enumerate(A)}
    rb = {d: r + 1 for r, d in enumerate(B)}
    assert p.sum() == pytest.approx(1.0) and (p >= 0).all()
    for k in range(6):
        a_rank = np.array([ra.get(ls[k], 7) for ls in lists], dtype=float)
        b_rank = np.array([rb.get(ls[k], 7) for ls in lists], dtype=float)
        c = {
            "linear": a_rank - b_rank,
            "binary": np.sign(a_rank - b_rank),
            "inverse": 1 / b_rank - 1 / a_rank,
        }[credit]
        assert float(p @ c) == pytest.approx(0.0, abs=1e-9)
    for ls in lists:  # each slot the best remaining of a or b
        for k, d in enumerate(ls):
            best = {next(x for x in r if x not in ls[:k]) for r in (A, B)}
            assert d in best


def least_bias(credit):
    """The least ``sum_k |sum_L p_L credit[L, k]|`` over distributions ``p`` of the lists (rows), by a linear
    program of its own over ``(p, t)``: ``t_k`` at least the bias at ``k`` and at least its negation."""
    lists, ranks = credit.shape
    solved = linprog(np.r_[np.zeros(lists), np.ones(ranks)],
                     A_ub=np.block([[credit.T, -np.eye(ranks)], [-credit.T, -np.eye(ranks)]]), b_ub=np.zeros(2 * ranks),
                     A_eq=np.r_[np.ones(lists), np.zeros(ranks)][None, :], b_eq=[1.0], bounds=(0, None))  # fmt: skip
    return solved.fun


def credits_of(lists, a, b, depth, credit):
    """Each list's credit for b of a click at each rank, from the rankings' top ``depth``."""
    ra = {d: r + 1 for r, d in enumerate(a[:depth])}
    rb = {d: r + 1 for r, d in enumerate(b[:depth])}
    at_a = np.array([[ra.get(d, depth + 1) for d in ls] for ls in lists], dtype=float)
    at_b = np.array([[rb.get(d, depth + 1) for d in ls] for ls in lists], dtype=float)
    return {"linear": at_a - at_b, "binary": np.sign(at_a - at_b), "inverse": 1 / at_b - 1 / at_a}[credit]


def test_optimized_without_an_unbiased_distribution_draws_from_the_least_biased():
    """Binary credit on these rankings: no distribution of the allowed lists gives a random click no
    credit at every rank (the constraints alone are infeasible); the one drawn from is biased 1 (a click at
    rank 3 credits b), the least possible, where serving one list always was biased 3."""
    a, b = ["d7", "d4", "d3", "d5", "d0"], ["d4", "d3", "d1", "d5", "d6"]
    method = Optimized(irspec.plugin_api.parse_method("optimized(binary)", "interleaving method"))
    lists, p = method.distribution(a, b, 4)
    credit = credits_of(lists, a, b, 4, "binary")
    unbiased = linprog(np.zeros(len(lists)), A_eq=np.vstack([np.ones(len(lists)), credit.T]),
                       b_eq=np.r_[1.0, np.zeros(4)], bounds=(0, 1))  # fmt: skip
    assert unbiased.status == 2  # infeasible
    assert least_bias(credit) == pytest.approx(1.0, abs=1e-12)
    assert np.abs(p @ credit).sum() == pytest.approx(1.0, abs=1e-9)
    assert p.sum() == pytest.approx(1.0) and (p >= 0).all()
    again_lists, again = method.distribution(a, b, 4)
    assert again_lists == lists and again.tobytes() == p.tobytes()  # deterministic


@pytest.mark.parametrize("credit", ["linear", "binary", "inverse"])
def test_optimized_distribution_is_the_least_biased_one_on_random_rankings(credit):
    """On 60 random pairs of rankings of 8 documents, depth 3 to 5: the distribution's bias is the least
    possible (0 where an unbiased one exists, which every pair has but for binary credit)."""
    rng = np.random.default_rng(12)
    method = Optimized(irspec.plugin_api.parse_method(f"optimized({credit})", "interleaving method"))
    docs = [f"d{i}" for i in range(8)]
    biased = 0
    for _ in range(60):
        a, b = list(rng.permutation(docs)[:5]), list(rng.permutation(docs)[:5])
        depth = int(rng.integers(3, 6))
        lists, p = method.distribution(a, b, depth)
        credit_of = credits_of(lists, a, b, depth, credit)
        least = least_bias(credit_of)
        assert np.abs(p @ credit_of).sum() == pytest.approx(least, abs=1e-9), (a, b, depth)
        biased += least > 1e-9
    assert (biased > 0) == (credit == "binary")  # 4 of the 60 pairs for binary credit


def random_clicker_log(seed, impressions, method="team-draft", queries=20, users=50):
    """Records of interleaved lists of the demo runs' rankings, clicked by a random clicker (EXAMINE)."""
    rng = np.random.default_rng(seed)
    implementation = {"team-draft": TeamDraft(), "probabilistic": Probabilistic()}[method]
    rankings = {q: (list(rng.permutation(30)[:6].astype(str)), list(rng.permutation(30)[:6].astype(str)))
                for q in range(queries)}  # fmt: skip
    out = []
    for i in range(impressions):
        q = int(rng.integers(0, queries))
        served = implementation.interleave(*rankings[q], rng, 6)
        ranks = [r + 1 for r in range(len(served.docs)) if rng.random() < EXAMINE[r]]
        out.append({"session": f"s{seed}-{i}", "query": f"q{q}", "timestamp": i, "results": list(served.docs),
                    "clicks": [{"doc": served.docs[r - 1], "rank": r} for r in ranks], "origins": served.origins(),
                    "user": f"u{int(rng.integers(0, users))}"})  # fmt: skip
    return out


def test_team_draft_fidelity_over_many_seeds():
    """200 experiments of 300 impressions each, a random clicker: the mean preference over the seeds is 0
    within its standard error, and each test rejects (p < 0.05) at most as often as a 5% test may (the
    upper end of a 99.9% binomial interval)."""
    prefs, p_users, p_sign = [], [], []
    for seed in range(200):
        res = irspec.evaluate_input(
            random_clicker_log(seed, 300),
            "Interleaving(team-draft)",
            options={"online": {"interleaving": {"replicates": 200, "seed": seed}}},
        )
        row = dict(zip(res.tables[-1].columns, res.tables[-1].rows[0], strict=True))
        prefs.append(row["preference"])
        p_users.append(row["p (users)"])
        p_sign.append(row["p (sign)"])
    prefs = np.array(prefs)
    assert abs(prefs.mean()) < 3 * prefs.std(ddof=1) / math.sqrt(len(prefs))
    upper = _binomial_upper(200, 0.05)
    assert sum(p < 0.05 for p in p_users) <= upper
    assert sum(p < 0.05 for p in p_sign) <= upper


def _binomial_upper(n, p, level=0.999):
    """The smallest count c with P(Binomial(n, p) <= c) >= level."""
    from scipy.stats import binom

    return int(binom.ppf(level, n, p))


# --------------------------------------------------------------------------------------------------
# The test of a log


def test_the_log_test_by_hand():
    served = TeamDraft().interleave(A, B, Coins([0.1, 0.9, 0.1]), 6)  # teams a b b a a b
    rec = {"query": "q", "timestamp": 0, "results": list(served.docs), "origins": served.origins()}
    records = [
        {**rec, "session": "s1", "user": "u1", "clicks": [{"doc": "d1"}]},  # a
        {**rec, "session": "s2", "user": "u1", "clicks": [{"doc": "d3"}, {"doc": "d7"}]},  # b
        {**rec, "session": "s3", "user": "u2", "clicks": [{"doc": "d3"}], "query": "r"},  # b
        {**rec, "session": "s4", "user": "u2", "clicks": [{"doc": "d1"}, {"doc": "d3"}], "query": "r"},  # tie
        {**rec, "session": "s5", "user": "u3", "clicks": []},  # no click
        {
            **{k: v for k, v in rec.items() if k != "origins"},
            "session": "s6",
            "clicks": [{"doc": "d1"}],
        },  # not interleaved
    ]
    res = irspec.evaluate_input(
        records, "Interleaving", options={"online": {"interleaving": {"replicates": 500}}}
    )
    assert res.aggregate() == {"Interleaving": (-1 + 1 + 1 + 0) / 4}
    table = res.tables[-1]
    assert table.title == "Interleaving: b against a"
    row = dict(zip(table.columns, table.rows[0], strict=True))
    assert {k: row[k] for k in ("impressions", "clicked", "b wins", "a wins", "ties", "preference")} == {
        "impressions": 5, "clicked": 4, "b wins": 2, "a wins": 1, "ties": 1, "preference": 0.25}  # fmt: skip
    # per query: q has -1 and +1 (a tie), r has +1 and 0 (b): one query for b, none for a
    assert (row["queries b"], row["queries a"], row["queries tied"]) == (1, 0, 1)
    assert row["p (sign)"] == binomtest(1, 1, 0.5).pvalue
    # the bootstrap over users: u1 sums -1 + 1 = 0 over 2 outcomes, u2 1 + 0 = 1 over 2; a replicate draws a
    # Poisson(1) weight for each (one per distinct (sum, count), in sorted order, from the seed)
    w = np.random.default_rng(0).poisson(np.array([[1.0], [1.0]]), size=(2, 500))
    drawn = np.array([2.0, 2.0]) @ w > 0  # a replicate that draws neither user has no value
    replicates = (np.array([0.0, 1.0]) @ w[:, drawn]) / (np.array([2.0, 2.0]) @ w[:, drawn])
    assert (row["95% CI low"], row["95% CI high"]) == tuple(np.quantile(replicates, [0.025, 0.975]))


def test_a_click_on_a_document_not_among_the_results_is_no_results_click():
    """An ad (a document not among the results, which the log allows at any rank) clicked at a result's
    rank or below the results expresses no preference: of s1 (a click on b's y), s2 (an ad below the
    results) and s3 (an ad at x's rank, a's) only s1 has an outcome, +1; the test counts one impression
    clicked, won by b. The same read record by record, a batch of columns at a time (a polars frame) and
    streamed."""
    o = [{"team": "a", "rank_a": 1, "rank_b": 2}, {"team": "b", "rank_a": 2, "rank_b": 1}]
    rec = {"query": "q", "timestamp": 0, "results": ["x", "y"], "origins": o}
    records = [
        {**rec, "session": "s1", "clicks": [{"doc": "y", "rank": None}]},
        {**rec, "session": "s2", "clicks": [{"doc": "ad-7", "rank": 3}]},
        {**rec, "session": "s3", "clicks": [{"doc": "ad-9", "rank": 1}]},
    ]
    options = {"online": {"interleaving": {"replicates": 10}}}
    for source in (records, pl.DataFrame(records)):
        for per_query in (True, False):
            res = irspec.evaluate_input(source, "Interleaving", options=options, per_query=per_query)
            assert res.aggregate() == {"Interleaving": 1.0}
            row = dict(zip(res.tables[-1].columns, res.tables[-1].rows[0], strict=True))
            assert {k: row[k] for k in ("impressions", "clicked", "b wins", "a wins", "ties")} == {
                "impressions": 3, "clicked": 1, "b wins": 1, "a wins": 0, "ties": 0}  # fmt: skip
            if per_query:
                values = dict(zip(res.query_ids, res.values[:, 0].tolist(), strict=True))
                assert values == pytest.approx({"s1:1": 1.0, "s2:1": math.nan, "s3:1": math.nan}, nan_ok=True)


def test_the_bootstrap_over_users_agrees_with_the_cluster_robust_standard_error():
    """A log of 50 users of many query issues each, whose outcomes are correlated within a user: the
    bootstrap's spread equals the standard error of a mean of ratios clustered by user (the delta method,
    computed here from each user's sums), within 10%, and far exceeds the one that takes query issues as
    independent."""
    rng = np.random.default_rng(4)
    records, i = [], 0
    for u in range(50):
        lean = rng.normal(0, 0.6)  # a user's own taste: correlated outcomes
        for _ in range(int(rng.integers(20, 80))):
            served = TeamDraft().interleave(A, B, rng, 6)
            prefer_b = rng.random() < 1 / (1 + np.exp(-lean))
            slot = next(r for r, t in enumerate(served.team) if t == (1 if prefer_b else 0))
            records.append({"session": f"s{i}", "user": f"u{u}", "query": f"q{i % 7}", "timestamp": i,
                            "results": list(served.docs), "origins": served.origins(),
                            "clicks": [{"doc": served.docs[slot]}]})  # fmt: skip
            i += 1
    res = irspec.evaluate_input(
        records, "Interleaving", options={"online": {"interleaving": {"replicates": 4000}}}
    )
    row = dict(zip(res.tables[-1].columns, res.tables[-1].rows[0], strict=True))
    outcomes = res.column("Interleaving")
    order = {r["session"]: j for j, r in enumerate(records)}
    users = np.array([int(records[order[q.split(":")[0]]]["user"][1:]) for q in res.query_ids])
    s = np.bincount(users, weights=outcomes)
    n = np.bincount(users).astype(float)
    mean = s.sum() / n.sum()
    clustered = math.sqrt(((s - mean * n) ** 2).sum()) / n.sum()
    width = (row["95% CI high"] - row["95% CI low"]) / (2 * 1.96)
    assert width == pytest.approx(clustered, rel=0.1)
    assert width > 2 * outcomes.std() / math.sqrt(len(outcomes))


@pytest.mark.parametrize("method", ["team-draft", "probabilistic"])
def test_the_streamed_test_equals_the_one_in_memory(method):
    records = random_clicker_log(11, 800, method=method)
    spec = f"Interleaving({method})"
    whole = irspec.evaluate_input(records, spec)
    streamed = irspec.evaluate_input(records, spec, per_query=False)
    (row_whole,), (row_streamed,) = whole.tables[-1].rows, streamed.tables[-1].rows
    assert row_streamed[:6] == row_whole[:6]  # counts
    assert row_streamed[6:] == pytest.approx(row_whole[6:], rel=1e-12)  # the same sums, in another order
    key = str(irspec.parse(spec))
    # whole outcomes (team-draft): the same bits; fractions (probabilistic): the exact mean against the
    # mean of the values added left to right, the same to the last bits
    assert streamed.aggregate()[key] == pytest.approx(whole.aggregate()[key], rel=1e-15)
    if method == "team-draft":
        assert streamed.aggregate()[key] == whole.aggregate()[key]


def test_the_tables_preference_is_the_mean_beside_it_to_the_bit(tmp_path):
    """Probabilistic outcomes are fractions, whose float64 sum depends on the order of adding. In memory
    the preference adds them as the result's mean does (left to right in the rows' order: Python's sum
    here); streamed, whatever its partitions, exactly (the outcomes' Fractions summed here), as the pass's
    mean does. The preference was a pairwise numpy sum, a few bits off both."""
    records = random_clicker_log(11, 800, method="probabilistic")
    spec = "Interleaving(probabilistic)"
    key = str(irspec.parse(spec))
    whole = irspec.evaluate_input(records, spec)
    outcomes = [v for v in whole.values[:, 0].tolist() if not math.isnan(v)]
    in_order = sum(outcomes) / len(outcomes)  # Python's sum of floats: one after another
    exact = float(sum(map(Fraction, outcomes), Fraction(0))) / len(outcomes)
    assert in_order != exact  # this log's outcomes round apart: the test tells the two ways apart
    assert whole.tables[-1].rows[0][6] == whole.aggregate()[key] == in_order
    for chunk_rows, partitions in ((100, 3), (10_000, 2)):  # spread over partitions; one chunk, whole
        stream = read_log(records, batch_size=50, per_query=False)
        cut = dataclasses.replace(stream, chunk_rows=chunk_rows, partitions=partitions)
        means, tables, _ = cut.evaluate(irspec.parse_many(spec))
        assert tables[-1].rows[0][6] == means[key] == exact


def test_a_bad_origin_is_located():
    rec = {"session": "s", "query": "q", "timestamp": 0, "results": ["d1", "d2"], "clicks": []}
    for origins, message in [
        ([{"team": "a"}], "origins must be a list with one entry per result (2), got a list of 1"),
        ([{"team": "c"}, {}], 'origins[0].team must be "a", "b" or null'),
        ([{}, {"rank_a": 0}], "origins[1].rank_a must be an integer >= 1"),
        ([{}, {"p_a": 1.5}], "origins[1].p_a must be a probability"),
    ]:
        with pytest.raises(irspec.InputError, match=re.escape(message)):
            irspec.evaluate_input([{**rec, "origins": origins}], "Interleaving")


@pytest.mark.parametrize(
    ("method", "origin", "lacks"),
    [
        # a balanced or optimized list's origins have ranks and no team: probabilistic interleaving read
        # the missing team as b's (p_a 0), a click on a's top document a win for b
        ("probabilistic", {"rank_a": 1, "rank_b": 2}, "has neither p_a nor team"),
        ("team-draft", {"rank_a": 1, "rank_b": 2}, "has no team"),
        # a team-draft list's origins written without ranks: every click was a tie
        ("balanced", {"team": "a"}, "lacks rank_a or rank_b"),
        ("optimized", {"team": "a", "rank_a": 1}, "lacks rank_a or rank_b"),
    ],
)
def test_a_click_the_method_cannot_credit_is_refused_not_made_a_tie_or_a_win(method, origin, lacks):
    other = {"team": "b", "rank_a": 2, "rank_b": 1, "p_a": 0.5}
    records = [
        {"session": f"s{i}", "query": "q", "timestamp": i, "results": ["d1", "d2"],
         "origins": [origin, other], "clicks": [{"doc": "d2"}, {"doc": "d1"}] if i else [{"doc": "d2"}]}
        for i in range(3)
    ]  # fmt: skip
    # s0's click is on the slot whose origin is whole; s1's second click, on rank 1, is the first refused
    message = f"session 's1': the origin of the result clicked at rank 1 {lacks}, by which"
    with pytest.raises(irspec.InputError, match=re.escape(message) + r".*\(1 more such clicks\)"):
        irspec.evaluate_input(records, f"Interleaving({method})")
    # the same origins on a query issue with no click on that slot are no matter: a click on d2, b's top
    # (p_a 1/2: b's click or a's, equally likely)
    fine = irspec.evaluate_input(records[:1], f"Interleaving({method})").aggregate()
    assert list(fine.values()) == [0.0 if method == "probabilistic" else 1.0]


def test_a_log_without_interleaving_says_so():
    rec = {"session": "s", "query": "q", "timestamp": 0, "results": ["d1"], "clicks": [{"doc": "d1"}]}
    res = irspec.evaluate_input([rec], "Interleaving")
    assert math.isnan(res.aggregate()["Interleaving"]) or res.aggregate()["Interleaving"] == 0.0
    assert any("no query issue of the log served an interleaved list" in w for w in res.warnings)


def test_a_bound_kernel_needs_no_registry_where_it_runs():
    """What spark.evaluate gives a worker (kernels.bound_kernel): the method looked up where it is bound,
    so that it computes the outcomes in a process whose registry has no interleaving method (a worker
    where plugins are not loaded), the same as the kernel run where the plugin is registered."""
    from irspec_online.kernels import bound_kernel, interleaving
    from irspec_online.records import assemble, summarise

    from irspec.spec.plugins import build_registry, get_plugin_manager, use_registry

    rng = np.random.default_rng(8)
    records = []
    for i in range(40):
        served = TeamDraft().interleave(A, B, rng, 6)
        clicks = [{"doc": d} for d in served.docs if rng.random() < 0.3]
        records.append({"session": f"s{i}", "query": f"q{i % 3}", "timestamp": i, "results": list(served.docs),
                        "origins": served.origins(), "clicks": clicks})  # fmt: skip
    log = assemble(summarise(enumerate(records, 1), "<records>"), "log", "<records>")
    metric = irspec.parse("Interleaving(team-draft)")
    want = interleaving(log, metric)
    kernel = bound_kernel(metric)
    with use_registry(build_registry(get_plugin_manager(load_entry_points=False))):  # no plugin at all
        with pytest.raises(irspec.SpecError, match="unknown interleaving method"):
            interleaving(log, metric)
        np.testing.assert_array_equal(kernel(log), want)
    assert (~np.isnan(want)).sum() > 10


def test_too_few_bootstrap_replicates_for_the_interval_are_warned_of():
    """One replicate printed a p-value of 0 and an interval of one point, excluding the estimate."""
    records = [
        {"session": f"s{i}", "query": "q", "timestamp": i, "results": ["d1", "d2"],
         "origins": [{"team": "a"}, {"team": "b"}], "clicks": [{"doc": "d2" if i % 3 else "d1"}]}
        for i in range(30)
    ]  # fmt: skip
    for replicates, warned in [(1, True), (39, True), (40, False)]:
        options = {"online": {"interleaving": {"replicates": replicates}}}
        res = irspec.evaluate_input(records, "Interleaving(team-draft)", options=options)
        found = [w for w in res.warnings if "too few for a 95% interval" in w]
        assert bool(found) == warned, (replicates, res.warnings)
