"""Simulation for design: with a known better ranking, interleaving finds it with fewer query issues than
an A/B test at the same power (the ratio measured here is the one docs/how-to/online-experiments.md
gives); the analytic power agrees with whole simulated experiments; a simulated log evaluates to the
preference simulated; users made from judgments have ERR's attractiveness."""

from __future__ import annotations

import functools
import hashlib
import json
from fractions import Fraction
from pathlib import Path

import pytest

pytest.importorskip("irspec_online")

import numpy as np
from designs import known_better
from irspec_online import plugin
from irspec_online.interleaving import implementation
from irspec_online.simulation import (
    Design,
    Simulation,
    from_qrels,
    logged,
    logged_records,
    monte_carlo,
    simulate,
)

import irspec
from irspec.cli import main
from irspec.testing import registered_plugin

DEMO = Path(__file__).resolve().parents[3] / "specs" / "demo"


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


MEASURED = {  # query issues the A/B test (CTR) needs / interleaving needs, for 80% power at alpha 0.05
    ("pbm", "team-draft"): 9.3,
    ("pbm", "optimized"): 22.6,
    ("pbm", "probabilistic"): 6.5,
    ("dbn", "team-draft"): 16.3,
    ("dbn", "optimized"): 47.8,
}
"""The ratios docs/how-to/online-experiments.md gives, as benchmarks/interleaving_ratio.py measures them
(seed 1; seeds 2 and 3 gave 8.4 and 9.4, 21.4 and 21.0, 6.2 and 5.6, 10.8 and 15.7, 36.6 and 41.2; DBN
users and probabilistic interleaving gave 13.9, 14.4 and 14.6, left out of the tests for time): each test
holds its seed-1 value within 40%, and that interleaving needs at least 3 times less traffic."""


@functools.cache
def simulated(users, method):
    """A design with a known better ranking (bank 512) and its power simulated at seed 1: made once for the
    traffic test's case and the analytic power's test, which simulate the same (DBN, team-draft)."""
    model, a, b = known_better(users)
    design = Design(model, a, b, method=method, bank=512)
    return design, simulate(design, sessions=300_000, seed=1)


@pytest.mark.parametrize(("users", "method"), list(MEASURED))
def test_interleaving_finds_a_known_better_ranking_with_less_traffic(users, method):
    design, power = simulated(users, method)
    assert power.ab_mean[1] > power.ab_mean[0] and power.il_mean > 0  # both see B better
    assert power.ratio > 3 and power.ratio == pytest.approx(MEASURED[(users, method)], rel=0.4), power.ratio
    # at the traffic interleaving needs, whole experiments: it finds B about 80% of the time, A/B far less
    n = int(power.il_needed)
    found_ab, found_il = monte_carlo(design, n, 200, seed=2)
    assert found_il > 0.65 and found_ab < found_il - 0.3, (found_ab, found_il)


def test_the_analytic_power_agrees_with_whole_experiments():
    design, power = simulated("dbn", "team-draft")  # Design's default method
    sim = Simulation(design, 5)  # the experiments' users, made once for both traffics
    for n in (int(power.il_needed / 2), int(power.ab_needed / 4)):
        found_ab, found_il = monte_carlo(design, n, 200, seed=5, simulation=sim)
        assert found_ab == pytest.approx(power.ab_power(n), abs=0.09)
        assert found_il == pytest.approx(power.il_power(n), abs=0.09)


@pytest.mark.parametrize("method", ["team-draft", "probabilistic", "optimized"])
def test_each_list_of_the_bank_is_drawn_with_its_own_seed(method):
    """List i of query q's bank is the method's list drawn with numpy's generator seeded by the
    simulation's seed and the keys of "bank", q and i (blake2b, as irspec_online.records.key_of makes
    them): the same bank in every process, whatever the queries or the bank's size."""
    model, a, b = known_better("pbm", queries=6)
    sim = Simulation(Design(model, a, b, method=method, bank=5), seed=3)
    interleaver = implementation(method)
    names = sim.model.vocabulary.pairs()  # the simulation's codes of the pairs

    def key(text):
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")

    for j, q in enumerate(sim.design.queries):
        for i in range(5):
            rng = np.random.default_rng([3, key("bank"), key(q), key(str(i))])
            served = interleaver.interleave(a[q], b[q], rng, 10)
            shown = [names[c][1] for c in sim.bank_pairs[j, i, : sim.bank_length[j, i]].tolist()]
            assert tuple(shown) == served.docs, (q, i)
            assert sim.bank_origin["team"][j, i, : len(shown)].tolist() == list(served.team)


def test_a_simulation_given_is_the_designs_with_the_seed():
    model, a, b = known_better("pbm", queries=6)
    design = Design(model, a, b, bank=4)
    sim = Simulation(design, 3)
    assert simulate(design, 2000, seed=3, simulation=sim) == simulate(design, 2000, seed=3)
    assert monte_carlo(design, 300, 3, seed=3, simulation=sim) == monte_carlo(design, 300, 3, seed=3)
    with pytest.raises(irspec.EvaluationError, match="not the design's with this seed"):
        monte_carlo(design, 300, 3, seed=4, simulation=sim)
    with pytest.raises(irspec.EvaluationError, match="not the design's with this seed"):
        simulate(Design(model, a, b, bank=4), 2000, seed=3, simulation=sim)


@pytest.mark.parametrize("ranking", ["a", "b"])
def test_a_ranking_that_lists_a_document_twice_is_refused(ranking):
    """The interleavers take a ranking's first ``depth`` distinct documents: with a repeat in the top they
    reached a document the simulation's users did not know, and a KeyError came out of Simulation."""
    model, a, b = known_better("pbm", queries=3)
    rankings = {"a": dict(a), "b": dict(b)}
    top = rankings[ranking]["q1"]
    rankings[ranking]["q1"] = [top[0]] * 6 + [d for d in top if d != top[0]]
    with pytest.raises(
        irspec.EvaluationError, match=rf"ranking {ranking} lists document '{top[0]}' twice for query 'q1'"
    ):
        Design(model, rankings["a"], rankings["b"], bank=5)


def test_a_random_ranking_pair_gives_no_power():
    """A against itself: no difference to find; the power is alpha/2 (one direction) at any traffic."""
    model, a, _ = known_better("pbm")
    power = simulate(Design(model, a, a, bank=16), sessions=50_000, seed=1)
    assert power.ab_mean[0] == pytest.approx(power.ab_mean[1], abs=0.01)
    assert power.il_mean == pytest.approx(0.0, abs=0.02)


def test_a_simulated_log_evaluates_to_the_simulated_preference():
    model, a, b = known_better("dbn")
    design = Design(model, a, b, bank=64)
    sim = Simulation(design, 1)  # the logs' users and the power's, made once
    records = sim.log(20_000, np.random.default_rng(3))
    res = irspec.evaluate_input(records, "Interleaving, CTR", per_query=False)
    row = dict(zip(res.tables[-1].columns, res.tables[-1].rows[0], strict=True))
    power = simulate(design, sessions=300_000, seed=1, simulation=sim)
    se = np.sqrt(power.il_variance / row["clicked"])
    assert row["preference"] == pytest.approx(power.il_mean, abs=4 * se)
    assert row["p (users)"] < 0.01  # over 60 queries the sign test has too little power to say as much
    assert row["queries b"] > row["queries a"]
    ab = sim.log(20_000, np.random.default_rng(4), interleaved=False)
    test = irspec.evaluate_input(ab, "CTR", options={"ab": {"baseline": "a", "unit": "query"}})
    comparison = next(t for t in test.tables if t.title.startswith("A/B test"))
    assert comparison.rows[0][5] == pytest.approx(power.ab_mean[1], abs=0.02)  # arm b's CTR


def test_users_from_judgments_have_errs_attractiveness():
    model = from_qrels(str(DEMO / "qrels.txt"), "dbn")
    labels = {(q, d): g for q, d, g in (line.split()[0::2][:1] + line.split()[2:4] for line in
                                         (DEMO / "qrels.txt").read_text().splitlines())}  # fmt: skip
    top = max(int(g) for g in labels.values())
    for (q, d), g in list(labels.items())[:50]:
        expected = max((2 ** int(g) - 1) / 2**top, 0.02)
        assert model.attr[model.vocabulary.codes[(q, d)]] == expected
    assert model.cont == 0.9 and (model.sat == model.attr).all()
    unseen = model.for_pairs([("q01", "never-judged")])
    assert unseen.attr.tolist() == [0.02] and unseen.sat.tolist() == [0.02]


def test_users_from_judgments_with_a_label_of_1024_or_more(tmp_path):
    # valid qrels (irspec eval reads them); 2.0 ** 1024 overflowed. ERR's (2^g - 1) / 2^top in exact
    # integers, then rounded: 1 - 2^-1100 rounds to 1, and 2^-1 - 2^-1100 to 0.5
    path = tmp_path / "qrels.txt"
    path.write_text("q 0 top 1100\nq 0 mid 1099\nq 0 low 1\nq 0 zero 0\n")
    model = from_qrels(str(path), "pbm")
    got = {d: model.attr[model.vocabulary.codes[("q", d)]] for d in ("top", "mid", "low", "zero")}
    exact = {
        d: float(Fraction(2**g - 1, 2**1100))
        for d, g in (("top", 1100), ("mid", 1099), ("low", 1), ("zero", 0))
    }
    assert got == {d: max(v, 0.02) for d, v in exact.items()} and got["top"] == 1.0 and got["mid"] == 0.5


def test_the_simulate_command(tmp_path, capsys):
    out, log = tmp_path / "power.json", tmp_path / "sim.jsonl"
    runs = [str(DEMO / "runs" / "bm25.run"), str(DEMO / "runs" / "dense.run")]
    argv = ["simulate", "--qrels", str(DEMO / "qrels.txt"), "--model", "pbm", "--runs", *runs, "--sessions", "2e4",
            "--log", str(log), "--log-sessions", "500", "-f", "json", "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(out.read_text())
    assert report["sessions"] == 20_000 and report["design"]["users"] == "PBM"
    assert report["ratio"] == pytest.approx(report["ab_needed"] / report["il_needed"])
    assert [row["sessions"] for row in report["table"]] == [2, 20, 200, 2000, 20_000]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 500 and all(len(r["origins"]) == len(r["results"]) for r in lines)
    assert main(["simulate", "--qrels", str(DEMO / "qrels.txt"), "--runs", *runs, "--sessions", "2e4"]) == 0
    text = capsys.readouterr().out
    assert "query issues needed for power 0.8: A/B" in text and "interleaving power" in text
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["simulate", "--qrels", str(DEMO / "qrels.txt"), "--runs", *runs, "--sessions", "1.5"])
    assert exited.value.code == 2 and "expected a whole number of sessions" in capsys.readouterr().err


@pytest.mark.parametrize("design", ["interleaving", "ab", "ranking", "shuffle", "swap"])
def test_records_one_at_a_time_are_the_logs_records_drawn_alike(design):
    # irspec simulate --log writes the records as they are made (a log held whole took ~5 KB a query
    # issue); the draws are made at the call, so the generator is left where log() leaves it
    model, a, b = known_better("pbm", queries=12)
    sim = Simulation(Design(model, a, b, bank=16), seed=2)
    (one, two) = (np.random.default_rng(9), np.random.default_rng(9))
    if design in ("interleaving", "ab"):
        lazily = sim.records(300, one, interleaved=design == "interleaving")
        whole = sim.log(300, two, interleaved=design == "interleaving")
    else:
        lazily, whole = logged_records(sim, 300, one, design), logged(sim, 300, two, design)
    assert one.random() == two.random()  # drawn at the call, not as the records are read
    assert list(lazily) == whole and len(whole) == 300
