"""Counterfactual estimates: on simulated logs where the new ranking's value is known exactly (the users'
click model gives each rank's click probability), the intervals of IPS (examination propensities, a
deterministic logger; the logger's propensities, a randomised one) and of SNIPS cover the truth at their
nominal rate over many seeds; clipping only lowers IPS; a swap experiment recovers the examination
propensities; the values by hand; the streamed pass equals the one in memory; the command line."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

pytest.importorskip("irspec_online")

import numpy as np
import polars as pl
from irspec_online import plugin
from irspec_online.clickmodels import Vocabulary, load, model_of
from irspec_online.clickstream import fit
from irspec_online.counterfactual import Propensities
from irspec_online.simulation import Design, Simulation, logged, logged_frame, truth
from scipy.stats import binom

import irspec
from irspec.cli import main
from irspec.testing import registered_plugin


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def world(seed=1, queries=20, docs=10):
    """PBM users (examination 1/r^0.8), a logging ranking A (random) and a better one B (by attractiveness),
    each a permutation of the same ten documents per query."""
    rng = np.random.default_rng(seed)
    model = model_of("pbm")
    model._start(0)
    model.vocabulary = Vocabulary()
    for q in range(queries):
        for d in range(docs):
            model.vocabulary.code(f"q{q}", f"d{d}")
    model.attr = rng.uniform(0.05, 0.6, queries * docs)
    model.exam = 1 / np.arange(1, 11) ** 0.8
    a = {f"q{q}": [f"d{d}" for d in rng.permutation(docs)] for q in range(queries)}
    b = {
        f"q{q}": [f"d{d}" for d in np.argsort(-model.attr[q * docs : (q + 1) * docs])] for q in range(queries)
    }
    return Simulation(Design(model, a, b, bank=2)), b


def estimate(records, spec, b, theta=None):
    options = {"online": {"counterfactual": {"run": b, "propensity": theta}}}
    res = irspec.evaluate_input(records, spec, options=options, per_query=False)
    return dict(zip(res.tables[-1].columns, res.tables[-1].rows[0], strict=True))


COVERAGE = {
    "ranking": ("IPS(ctr)@5", "IPS(rr)", "IPS(click)@3"),  # a deterministic logger: examination propensities
    "shuffle": ("IPS(ctr)@5", "SNIPS(ctr)@5", "SNIPS(rr)"),  # a randomised one: the logger's propensities
}


@pytest.mark.parametrize("logger", list(COVERAGE))
def test_the_interval_covers_the_truth_at_its_nominal_rate(logger):
    """200 logs of 2,000 query issues each, simulated with different seeds: each estimate's 95% interval
    holds the new ranking's true value in a share of them within the central 99.9% of Binomial(200, 0.95),
    and its standardised errors centre on 0 (no bias). Each log is a frame made from the simulation's
    arrays (:func:`logged_frame`: :func:`logged`'s records, test_a_logged_frame_is_the_logged_records),
    read a batch of columns at a time."""
    sim, b = world()
    specs = COVERAGE[logger]
    metrics = [irspec.parse(s) for s in specs]
    true = [truth(sim, m.get("measure"), m.get("k")) for m in metrics]
    options = {
        "online": {
            "counterfactual": {
                "run": b,
                "propensity": sim.model.exam.tolist() if logger == "ranking" else None,
            }
        }
    }
    covered = np.zeros(len(specs))
    errors = []
    for seed in range(200):
        log = logged_frame(sim, 2000, np.random.default_rng(1000 + seed), logger)
        res = irspec.evaluate_input(log, ", ".join(specs), options=options, per_query=False)
        rows = res.tables[-1].rows
        covered += [row[3] <= t <= row[4] for row, t in zip(rows, true, strict=True)]
        errors.append([(row[1] - t) / row[2] for row, t in zip(rows, true, strict=True)])
    low, high = binom.ppf(0.0005, 200, 0.95), binom.ppf(0.9995, 200, 0.95)
    assert ((low <= covered) & (covered <= high)).all(), dict(zip(specs, covered, strict=True))
    assert (np.abs(np.mean(errors, axis=0)) < 4 / math.sqrt(200)).all(), np.mean(errors, axis=0)


@pytest.mark.parametrize("logger", ["ranking", "shuffle", "swap"])
def test_a_logged_frame_is_the_logged_records(logger):
    """The frame of a log drawn from a seed holds, row by row and value for value, the records drawn from
    the same seed; read with a ranking to estimate (a batch of columns at a time, the records one by one),
    it gives the records' estimates to the bit."""
    sim, b = world()
    records = logged(sim, 3000, np.random.default_rng(11), logger)
    frame = logged_frame(sim, 3000, np.random.default_rng(11), logger)
    assert frame.to_dicts() == records
    assert frame.schema == pl.DataFrame(records).schema
    specs = "IPS(ctr)@5, ClippedIPS(rr, clip=2), IPS(click)@3" + (
        ", SNIPS(ctr)@5" if logger == "shuffle" else ""
    )
    theta = None if logger == "shuffle" else sim.model.exam.tolist()
    options = {"online": {"counterfactual": {"run": b, "propensity": theta}}}
    for per_query in (False, True):
        want = irspec.evaluate_input(records, specs, options=options, per_query=per_query)
        got = irspec.evaluate_input(frame, specs, options=options, per_query=per_query)
        assert got.tables[-1].rows == want.tables[-1].rows and got.aggregate() == want.aggregate()


def test_clipping_lowers_ips_and_a_clip_above_every_weight_changes_nothing():
    sim, b = world()
    records = logged(sim, 5000, np.random.default_rng(3), "ranking")
    theta = sim.model.exam.tolist()
    ips = estimate(records, "IPS(ctr)@10", b, theta)
    largest = max(theta) / min(theta)
    assert (
        estimate(records, f"ClippedIPS(ctr, clip={largest + 1})@10", b, theta)["estimate"] == ips["estimate"]
    )
    clipped = estimate(records, "ClippedIPS(ctr, clip=1.5)@10", b, theta)
    assert clipped["estimate"] < ips["estimate"] and clipped["clipped"] > 0


def test_clipped_counts_only_the_clicks_the_estimate_reads():
    """theta = (1, 0.5, 0.1, 0.1, 0.9), clip 2: s1's click on c (logged rank 3, new rank 5) weighs 0.9 / 0.1
    = 9 but lies outside @2, so it is read by @5 alone; s2's click on x (logged rank 2, new rank 1) weighs
    1 / 0.5 = 2, not above the clip. By hand: @2 reads (0 + 2) / 2 and clips nothing; @5 reads
    (min(9, 2) + 2) / 2 and clips one weight."""
    theta = [1, 0.5, 0.1, 0.1, 0.9]
    run = {"q": ["x", "y", "z", "w", "c"]}
    records = [
        {"session": "s1", "query": "q", "timestamp": 0, "results": ["a", "b", "c"], "clicks": [{"doc": "c"}]},
        {"session": "s2", "query": "q", "timestamp": 1, "results": ["a", "x"], "clicks": [{"doc": "x"}]},
    ]
    options = {"online": {"counterfactual": {"run": run, "propensity": theta}}}
    for spec, value, clipped in (
        ("ClippedIPS(ctr, clip=2)@2", 1.0, 0),
        ("ClippedIPS(ctr, clip=2)@5", 2.0, 1),
    ):
        for per_query in (True, False):  # the log read whole, and streamed
            table = irspec.evaluate_input(records, spec, options=options, per_query=per_query).tables[-1]
            row = dict(zip(table.columns, table.rows[0], strict=True))
            assert (row["estimate"], row["clipped"]) == (pytest.approx(value), clipped), (spec, per_query)


def test_ips_by_hand():
    """theta = (1, 0.5, 0.25): a click at logged rank 3 on a document the new ranking puts first weighs
    1 / 0.25 = 4; at logged rank 1 on one it puts third, 0.25 / 1."""
    b = {"q": ["d3", "d2", "d1"]}
    records = [
        {
            "session": "s1",
            "query": "q",
            "timestamp": 0,
            "results": ["d1", "d2", "d3"],
            "clicks": [{"doc": "d3"}],
        },
        {
            "session": "s2",
            "query": "q",
            "timestamp": 1,
            "results": ["d1", "d2", "d3"],
            "clicks": [{"doc": "d1"}],
        },
        {"session": "s3", "query": "q", "timestamp": 2, "results": ["d1", "d2", "d3"], "clicks": []},
        {
            "session": "s4",
            "query": "other",
            "timestamp": 3,
            "results": ["x"],
            "clicks": [{"doc": "x"}],
        },  # not ranked
    ]
    options = {"online": {"counterfactual": {"run": b, "propensity": [1, 0.5, 0.25]}}}
    res = irspec.evaluate_input(records, "IPS(ctr)@3, IPS(ctr)@1, IPS(rr), IPS(click)@3", options=options)
    assert res.aggregate() == pytest.approx(
        {
            "IPS@3": (4 + 0.25 + 0) / 3,
            "IPS@1": 4 / 3,
            "IPS(measure=rr)@10": (4 + 0.25 / 3) / 3,
            "IPS(measure=click)@3": 0.25 / 3,
        }
    )
    row = next(t for t in res.tables if t.title.startswith("Counterfactual")).rows[0]
    values = np.array([4.0, 0.25, 0.0])
    assert row[2] == pytest.approx(values.std(ddof=1) / math.sqrt(3))  # the standard error
    assert row[6] == 1.0  # support: each row shows the new ranking's top 3
    assert row[7] == 1 and any("1 query issues of queries" in w for w in res.warnings)


def test_a_record_names_its_query_by_qid_else_by_its_text_in_every_form(tmp_path):
    """qid ``7`` and ``7.0`` (pandas' integers with nulls) name run query ``7``; a null qid, pandas' NaN
    too, leaves the query text to name it (``str()`` made it the query ``"None"``); a boolean is refused.
    A click at logged rank 1 on d1, which q1's ranking puts first (weight 1) and ``None``'s second."""
    pd = pytest.importorskip("pandas")
    run = {
        "q1": ["d1", "d2"],
        "None": ["d2", "d1"],
        "nan": ["d2", "d1"],
        "7": ["d1", "d2"],
        "7.0": ["d2", "d1"],
    }
    options = {"online": {"counterfactual": {"run": run, "propensity": [1, 0.5]}}}

    def logged(qid, query="q1"):
        return {"session": "s", "query": query, "qid": qid, "timestamp": 0, "results": ["d1", "d2"],
                "clicks": [{"doc": "d1"}]}  # fmt: skip

    for qid, query in [(None, "q1"), (7, "x"), (7.0, "x")]:
        records = [logged(qid, query), {**logged(None), "session": "t"}]
        frames = [records, pl.DataFrame(records, strict=False), pd.DataFrame(records)]
        for form in frames:
            assert irspec.evaluate_input(form, "IPS(ctr)@2", options=options).aggregate() == {"IPS@2": 1.0}, (
                qid,
                form,
            )
    with pytest.raises(
        irspec.InputError, match=r"<records>:1: qid must be a non-empty string, got a boolean"
    ):
        irspec.evaluate_input([logged(True)], "IPS(ctr)@2", options=options)


def test_snips_by_hand():
    """A randomised logger (propensities 1/2 per slot): per rank, the weighted clicks where the rankings agree
    over the weights there."""
    b = {"q": ["d1", "d2"]}
    p = [0.5, 0.5]
    records = [
        {"session": "s1", "query": "q", "timestamp": 0, "results": ["d1", "d2"], "clicks": [{"doc": "d1"}], "propensities": p},
        {"session": "s2", "query": "q", "timestamp": 1, "results": ["d2", "d1"], "clicks": [{"doc": "d2"}], "propensities": p},
        {"session": "s3", "query": "q", "timestamp": 2, "results": ["d1", "d2"], "clicks": [], "propensities": p},
    ]  # fmt: skip
    options = {"online": {"counterfactual": {"run": b}}}
    res = irspec.evaluate_input(records, "SNIPS(ctr)@2, IPS(ctr)@2", options=options)
    # rank 1: s1 and s3 agree (weights 2, 2), s1 clicked: 2 / 4; rank 2: the same rows, no click there
    # IPS: s1's click weighs 2, s2's (where the rankings disagree) 0: (2 + 0 + 0) / 3
    assert res.aggregate() == pytest.approx({"SNIPS@2": 0.5, "IPS@2": 2 / 3})
    streamed = irspec.evaluate_input(records, "SNIPS(ctr)@2, IPS(ctr)@2", options=options, per_query=False)
    assert streamed.aggregate() == pytest.approx(res.aggregate())


def test_a_click_on_a_document_not_among_the_results_is_no_evidence():
    """An ad (a document not among the results, clicked at any rank) is no result's click. A randomised
    logger (p = 1/2 per slot), new ranking (x, y): s1's click on x weighs 2; s2's too, its ad below the
    results adds nothing (it was NaN, and s2 left out); s3 clicked nothing: IPS@2 = (2 + 2 + 0) / 3 over 3
    query issues. Examination propensities (1, 0.5), new ranking (y, x): an ad at x's rank 1 stands for no
    click on x (it stood for 0.5 / 1 at x's new rank 2), s2's click on y for 1 / 0.5 at rank 1: IPS@2 =
    (0 + 2) / 2. The same record by record and a batch of columns at a time (a polars frame)."""
    rand = {"query": "q", "timestamp": 0, "results": ["x", "y"], "propensities": [0.5, 0.5]}
    randomised = [
        {**rand, "session": "s1", "clicks": [{"doc": "x", "rank": None}]},
        {**rand, "session": "s2", "clicks": [{"doc": "x", "rank": None}, {"doc": "ad", "rank": 3}]},
        {**rand, "session": "s3", "clicks": []},
    ]
    shown = {"query": "q", "timestamp": 0, "results": ["x", "y"]}
    deterministic = [
        {**shown, "session": "s1", "clicks": [{"doc": "ad", "rank": 1}]},
        {**shown, "session": "s2", "clicks": [{"doc": "y", "rank": 2}]},
    ]
    cases = [(randomised, ["x", "y"], None, 4 / 3, 3), (deterministic, ["y", "x"], [1, 0.5], 1.0, 2)]
    for records, new, theta, value, rows in cases:
        options = {"online": {"counterfactual": {"run": {"q": new}, "propensity": theta}}}
        for source in (records, pl.DataFrame(records)):
            res = irspec.evaluate_input(source, "IPS(ctr)@2", options=options)
            row = dict(zip(res.tables[-1].columns, res.tables[-1].rows[0], strict=True))
            assert (row["estimate"], row["query issues"]) == (pytest.approx(value), rows), type(source)
            assert res.warnings == ()


@pytest.mark.parametrize("name", ["pbm", "ubm", "swap"])
def test_a_rank_the_fitted_log_never_showed_weighs_no_click(tmp_path, name):
    """A position model fitted to pages of 2 results knows no examination at rank 3, nor does a swap
    experiment that swapped its top result to rank 2 alone: the new ranking (x, b, a) moves the clicks on a
    (s1's at rank 1, s3's at rank 2) to rank 3, left out and counted beyond (with a warning), as a list of
    propensities 2 long leaves them out; s2's click on b stays at rank 2, weight exam_2 / exam_2 = 1; s4
    has none: IPS@3 = (0 + 1 + 0 + 0) / 4 whatever the fitted values. (PBM and UBM weighed a's clicks by
    the prior's 0.5 at rank 3; the swap experiment's file had NaN there, no JSON, which was refused.)"""
    page = {"query": "q", "timestamp": 0, "results": ["a", "b"], "swap": 1}
    swapped = {**page, "results": ["b", "a"], "swap": 2}  # the top result, a, at rank 2
    records = [
        {**page, "session": "s1", "clicks": [{"doc": "a"}]},
        {**page, "session": "s2", "clicks": [{"doc": "b"}]},
        {**swapped, "session": "s3", "clicks": [{"doc": "a"}]},
        {**swapped, "session": "s4", "clicks": []},
    ]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(fit(records, name).as_json(), allow_nan=False))
    theta = load(str(path)).propensities
    run = {"q": ["x", "b", "a"]}
    for propensity in (str(path), theta[:2].tolist()):  # the model's file; its known ranks as a list
        for per_query in (True, False):
            options = {"online": {"counterfactual": {"run": run, "propensity": propensity}}}
            res = irspec.evaluate_input(records, "IPS(ctr)@3", options=options, per_query=per_query)
            row = dict(zip(res.tables[-1].columns, res.tables[-1].rows[0], strict=True))
            assert (row["estimate"], row["query issues"], row["beyond"]) == (pytest.approx(1 / 4), 4, 2)
            assert res.warnings == ("IPS@3: 2 clicks at ranks the propensities do not cover are left out",)


def test_the_streamed_estimates_equal_the_ones_in_memory():
    sim, b = world()
    records = logged(sim, 4000, np.random.default_rng(5), "shuffle")
    specs = "IPS(ctr)@5, SNIPS(rr), ClippedIPS(click, clip=3)@2"
    options = {"online": {"counterfactual": {"run": b}}}
    whole = irspec.evaluate_input(records, specs, options=options)
    streamed = irspec.evaluate_input(records, specs, options=options, per_query=False)
    assert streamed.aggregate() == pytest.approx(whole.aggregate(), rel=1e-12)
    for mine, theirs in zip(streamed.tables[-1].rows, whole.tables[-1].rows, strict=True):
        assert mine[0] == theirs[0] and mine[1:] == pytest.approx(theirs[1:], rel=1e-12)


def test_an_estimate_is_the_mean_beside_it_to_the_bit():
    """IPS terms are fractions, whose float64 sum depends on the order of adding: in memory the estimate
    adds them as the result's mean does (left to right in the rows' order: Python's sum here), streamed
    exactly (their Fractions summed here), as the pass's mean does. It was a pairwise numpy sum, a few bits
    off both."""
    sim, b = world()
    records = logged(sim, 2000, np.random.default_rng(1), "ranking")
    specs = "IPS(rr)@5, ClippedIPS(ctr, clip=2)@5"
    options = {"online": {"counterfactual": {"run": b, "propensity": list(1 / np.arange(1, 11) ** 0.8)}}}
    whole = irspec.evaluate_input(records, specs, options=options)
    streamed = irspec.evaluate_input(records, specs, options=options, per_query=False)
    for j, metric in enumerate(whole.metrics):
        terms = [v for v in whole.values[:, j].tolist() if not math.isnan(v)]
        in_order = sum(terms) / len(terms)  # Python's sum of floats: one after another
        exact = float(sum(map(Fraction, terms), Fraction(0))) / len(terms)
        assert whole.tables[-1].rows[j][1] == whole.aggregate()[str(metric)] == in_order
        assert streamed.tables[-1].rows[j][1] == streamed.aggregate()[str(metric)] == exact
    assert in_order != exact  # ClippedIPS's terms round apart on this log: the test tells the ways apart


def test_a_swap_experiment_recovers_the_examination_propensities():
    sim, _ = world(queries=40)
    records = logged(sim, 200_000, np.random.default_rng(7), "swap")
    swap = fit(records, "swap").model
    ratio = sim.model.exam / sim.model.exam[0]
    se = ratio * np.sqrt(1 / swap.clicked + 1 / swap.clicked[0])  # the ratio of two rates, roughly
    assert np.all(np.abs(swap.exam - ratio) < 4 * se), (swap.exam, ratio)


def test_propensities_of_a_fitted_pbm_give_an_estimate_near_the_truth(tmp_path):
    """A PBM fitted to a shuffled log (every document at every rank): its examination makes IPS of the
    deterministic log close to the truth (its own error aside)."""
    sim, b = world()
    pbm = fit(logged_frame(sim, 100_000, np.random.default_rng(8), "shuffle"), "pbm").model
    path = tmp_path / "pbm.json"
    path.write_text(json.dumps(pbm.as_json()))
    row = estimate(logged_frame(sim, 20_000, np.random.default_rng(9), "ranking"), "IPS(ctr)@5", b, str(path))
    assert row["estimate"] == pytest.approx(truth(sim, "ctr", 5), rel=0.03)
    assert load(str(path)).propensities.tolist() == pytest.approx(pbm.exam.tolist())


def test_a_model_file_examining_a_rank_with_probability_0_is_refused_naming_it(tmp_path):
    """A swap experiment with no click at a rank fits its examination there as 0: IPS could weigh no click
    there, and left those query issues out of the estimate with a numpy warning. Out-of-range values are
    named as such, not as a wrong shape."""
    sim, b = world()
    pbm = fit(logged_frame(sim, 2_000, np.random.default_rng(8), "shuffle"), "pbm").model
    written = pbm.as_json()
    written["params"]["exam"][9] = 0.0
    path = tmp_path / "pbm.json"
    path.write_text(json.dumps(written))
    log = logged_frame(sim, 200, np.random.default_rng(9), "ranking")
    with pytest.raises(
        irspec.InputError, match=r"examination at rank 10 is below 1e-100 \(0: no click there"
    ):
        estimate(log, "IPS(ctr)@10", b, str(path))
    written["params"]["exam"][9] = 1e-120  # above 0, below the bound: the rank is still named
    path.write_text(json.dumps(written))
    with pytest.raises(irspec.InputError, match=r"examination at rank 10 is below 1e-100"):
        estimate(log, "IPS(ctr)@10", b, str(path))
    written["params"]["exam"][0] = 1.5
    path.write_text(json.dumps(written))
    with pytest.raises(irspec.InputError, match=r"params.exam must be probabilities \(0 to 1\), got 1.5"):
        load(str(path))


@pytest.mark.parametrize(("text", "message"), [
    # numpy read true as 1 and "0.2" as 0.2, and Python's json kept the last of a key given twice
    ("[true, 0.5, 0.2]", "propensities must be a list of probabilities, rank 1 first, got True in it"),
    ('[1, 0.5, "0.2"]', "propensities must be a list of probabilities, rank 1 first, got '0.2' in it"),
    ("[1, 0.5, null]", "propensities must be a list of probabilities, rank 1 first, got None in it"),
    ('{"propensities": [1, 0.5], "propensities": [0.5]}', "the key 'propensities' twice in one object"),
    ("[1, 0.5, 1.5]", "propensities must be a list of probabilities from 1e-100 to 1, rank 1 first, got 1.5 at rank 3"),
    ('{"model": "PBM", "params": {"attr": {}, "exam": [1, "0.5", 0.3]}}', "params.exam must be a list of 10 probabilities, got '0.5' in it"),
    ('{"model": "PBM", "params": {"attr": {}, "exam": [1, false, 0.3]}}', "params.exam must be a list of 10 probabilities, got False in it"),
    ('{"model": "PBM", "params": {"attr": {}, "exam": [1, 0.5], "exam": [1]}}', "the key 'exam' twice in one object"),
    ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
])  # fmt: skip
def test_a_propensity_file_holding_other_than_numbers_is_refused(tmp_path, text, message):
    path = tmp_path / "exam.json"
    path.write_text(text)
    with pytest.raises(irspec.InputError) as info:
        Propensities.of(str(path))
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value), str(info.value)


@pytest.mark.parametrize(("written", "canonical"), [
    ("ips(ctr@10)", "IPS@10"),
    ("snips(ctr@10)", "SNIPS@10"),
    ("ips(rr@5)", "IPS(measure=rr)@5"),
    ("clipped_ips(click@3, clip=2)", "ClippedIPS(clip=2,measure=click)@3"),
])  # fmt: skip
def test_the_issues_spelling_is_the_canonical_one(written, canonical):
    """Issue 37 writes "ips(ctr@10)": the same metric as "IPS(ctr)@10", with one canonical text."""
    metric = irspec.parse(written)
    assert str(metric) == canonical and metric == irspec.parse(canonical)
    assert irspec.parse_many(f"{written}, {canonical}") == [metric]


def test_the_issues_spelling_given_a_cutoff_twice_is_refused():
    with pytest.raises(irspec.ParameterError, match="given twice"):
        irspec.parse("ips(ctr@10, k=5)")
    with pytest.raises(irspec.SpecSyntaxError, match="a second cutoff"):
        irspec.parse("ips(ctr@10)@5")


@pytest.mark.parametrize(("spec", "options", "message"), [
    ("IPS(ctr)", {}, "estimates a ranking from the log: give it"),
    ("IPS(ctr)", {"online": {"counterfactual": {"run": {"q": ["d1"]}}}}, "give the examination propensities"),
    ("SNIPS(ctr)", {"online": {"counterfactual": {"run": {"q": ["d1"]}, "propensity": [1.0]}}}, "needs a randomised logger"),
    ("IPS(ctr)", {"online": {"counterfactual": {"run": {"q": ["d1"]}, "propensity": [0.0]}}}, "probabilities from 1e-100 to 1"),
])  # fmt: skip
def test_what_an_estimate_needs_is_said(spec, options, message):
    records = [{"session": "s", "query": "q", "timestamp": 0, "results": ["d1"], "clicks": [{"doc": "d1"}]}]
    with pytest.raises(irspec.IrspecError, match=message):
        irspec.evaluate_input(records, spec, options=options)


def test_the_command_line(tmp_path, capsys):
    sim, b = world()
    log = tmp_path / "log.jsonl"
    log.write_text(
        "".join(json.dumps(r) + "\n" for r in logged(sim, 3000, np.random.default_rng(2), "ranking"))
    )
    run = tmp_path / "new.run"
    run.write_text(
        "".join(f"{q} Q0 {d} {r + 1} {10 - r} new\n" for q, docs in b.items() for r, d in enumerate(docs))
    )
    (tmp_path / "pbm.json").write_text(
        json.dumps({"model": "PBM", "params": {"attr": {}, "exam": sim.model.exam.tolist()}})
    )
    argv = ["online", str(log), "-m", "IPS(ctr)@10, ClippedIPS(ctr)@10", "--counterfactual", str(run),
            "--propensity", str(tmp_path / "pbm.json"), "-f", "json"]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    table = next(t for t in doc["tables"] if t["title"] == "Counterfactual: new")
    assert table["rows"][0][1] == pytest.approx(doc["means"]["IPS@10"])
    true = truth(sim, "ctr", 10)
    assert (
        table["rows"][0][3] - 3 * table["rows"][0][2] < true < table["rows"][0][4] + 3 * table["rows"][0][2]
    )
