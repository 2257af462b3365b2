"""Click models: their parameters equal PyClick's on a log PyClick fitted (``reference/``), their EM
statistics equal the exact posteriors computed here by enumerating every hidden state of small sessions,
their closed forms equal counts by hand, what they simulate has the click probabilities they state, and
what ``irspec clickmodel fit`` writes reads back.

PyClick is not installed here: ``reference/pyclick_reference.py`` ran it outside the repository on
``reference/clicklog.jsonl.gz`` (a simulated log) and wrote ``reference/pyclick_values.json`` with the
commit it ran.
"""

from __future__ import annotations

import copy
import gzip
import itertools
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("irspec_online")

import numpy as np
import polars as pl
from irspec_online import plugin
from irspec_online.clickmodels import CM, DBN, DCM, PBM, UBM, Sessions, Vocabulary, _gather, load, model_of
from irspec_online.clickstream import fit, read_sessions
from irspec_online.records import jsonl_records
from irspec_online.simulation import Design

import irspec
from irspec.cli import main
from irspec.testing import registered_plugin

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference"
LOG = REFERENCE / "clicklog.jsonl.gz"
VALUES = REFERENCE / "pyclick_values.json"


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def sessions_of(rows, query="q"):
    """Sessions from ``(documents, clicked ranks 1-based)`` rows of one query."""
    records = [(i + 1, {"session": f"s{i}", "query": query, "timestamp": i, "results": docs,
                        "clicks": [{"doc": docs[r - 1], "rank": r} for r in clicked]})
               for i, (docs, clicked) in enumerate(rows)]  # fmt: skip
    return Sessions.of_records(records, "<test>")


# --------------------------------------------------------------------------------------------------
# PyClick's values


def pyclick():
    return json.loads(VALUES.read_text())


def split():
    """The data set split as PyClick's reference run split it: the first 75% train; the rest, of queries
    seen in training, held out."""
    records = list(jsonl_records(str(LOG)))
    cut = int(len(records) * 0.75)
    train = Sessions.of_records(records[:cut], str(LOG))
    seen = {rec["query"] for _, rec in records[:cut]}
    test = Sessions.of_records(
        [(n, r) for n, r in records[cut:] if r["query"] in seen], str(LOG), vocabulary=train.vocabulary
    )
    return train, test


def pair_values(model, name, reference):
    """A pair parameter of ``model`` and PyClick's, over every pair PyClick has one for."""
    ours, theirs = [], []
    values = getattr(model, name)
    for q, docs in reference.items():
        for d, v in docs.items():
            ours.append(values[model.vocabulary.codes[(q, d)]])
            theirs.append(v)
    return np.array(ours), np.array(theirs)


def pyclick_ubm_exam(model):
    """Our UBM's exam[r][r'] (r' the previous click's 1-based rank, 0: none) in PyClick's layout: column
    j is a previous click at 0-based rank j, and column M - 1 (9, for sessions of 10) is none."""
    return np.concatenate([model.exam[:, 1:10], model.exam[:, :1]], axis=1)


@pytest.mark.parametrize("name", ["PBM", "CM", "DCM", "UBM", "DBN"])
def test_parameters_log_likelihood_and_perplexity_equal_pyclicks(name):
    reference = pyclick()["models"]["DBN-fixed" if name == "DBN" else name]
    train, test = split()
    model = model_of(name.lower()).fit(train.compact())
    ours, theirs = pair_values(model, "attr", reference["params"]["attr"])
    assert np.abs(ours - theirs).max() < 1e-9
    if name in ("PBM", "UBM"):
        exam = pyclick_ubm_exam(model) if name == "UBM" else model.exam
        assert np.abs(exam - np.array(reference["params"]["exam"])).max() < 1e-9
    if name == "DCM":
        assert np.abs(model.cont - np.array(reference["params"]["cont"])).max() < 1e-12
    if name == "DBN":
        ours, theirs = pair_values(model, "sat", reference["params"]["sat"])
        assert np.abs(ours - theirs).max() < 1e-9
        assert model.cont == pytest.approx(reference["params"]["cont"], abs=1e-9)
    if name == "CM":  # PyClick's CM log-likelihood is not the conditional one: held to the model's
        assert reference["log_likelihood"] == pytest.approx(-10.4506, abs=1e-4)
        assert model.log_likelihood(test) == pytest.approx(cascade_log_likelihood(model, test), abs=1e-12)
    else:
        assert model.log_likelihood(test) == pytest.approx(reference["log_likelihood"], abs=1e-9)
    perplexity, per_rank = model.perplexity(test)
    assert perplexity == pytest.approx(reference["perplexity"], abs=1e-9)
    assert per_rank == pytest.approx(reference["perplexity_at_rank"], abs=1e-9)


def cascade_log_likelihood(model, sessions):
    """The cascade model's log-likelihood written out, session by session: the mean over sessions of the
    mean over a session's results of ``log P(C_r | C_<r)``, which is ``attr`` (a click) or ``1 - attr``
    down to the first click, 1 for no click below it and 1e-6 for a click below it (impossible under the
    model, floored). Every session stands for its weight."""
    total = count = 0.0
    for i in range(len(sessions)):
        n, logs, stopped = int(sessions.length[i]), 0.0, False
        for r in range(n):
            clicked = bool(sessions.clicks[i, r])
            if stopped:
                logs += math.log(1e-6) if clicked else 0.0
                continue
            attr = model.attr[sessions.pairs[i, r]]
            logs += math.log(attr if clicked else 1 - attr)
            stopped = clicked
        total += sessions.weight[i] * logs / n
        count += sessions.weight[i]
    return total / count


def test_released_pyclick_dbn_departs_from_the_model_as_its_reference_says():
    """PyClick's DBN as released (DBN_FIXES in reference/pyclick_reference.py) against the mended one, which
    ours equals: on this log (simulated with continuation 0.85) the released one finds a continuation near 1
    and attractiveness up to 0.49 away, and fits the held-out sessions worse."""
    values = pyclick()["models"]
    released, mended = values["DBN"], values["DBN-fixed"]
    attr = max(abs(released["params"]["attr"][q][d] - v) for q, docs in mended["params"]["attr"].items()
               for d, v in docs.items())  # fmt: skip
    assert attr == pytest.approx(0.4878, abs=1e-4)
    assert released["params"]["cont"] > 0.999 and mended["params"]["cont"] == pytest.approx(0.8679, abs=1e-4)
    assert mended["log_likelihood"] > released["log_likelihood"]  # -0.2707 against -0.2930
    assert mended["perplexity"] < released["perplexity"]


def test_the_reference_was_made_by_the_commit_and_data_it_names():
    values = pyclick()
    assert values["pyclick_commit"] == "98e7e460231b2b607bf58b2f16a4fd1124cee042"
    assert values["train_sessions"] == 3000 and values["em_iterations"] == 50
    with gzip.open(LOG, "rt") as f:
        assert sum(1 for _ in f) == 4000


# --------------------------------------------------------------------------------------------------
# Closed forms, by hand


ROWS = [
    (["a", "b", "c"], [2]),
    (["a", "b", "c"], [1, 3]),
    (["b", "a", "c"], []),
    (["c", "a"], [2]),
]


def test_cascade_by_hand():
    """attr = (1 + clicks) / (2 + impressions) over the ranks down to the first click (all without one)."""
    model = CM().fit(sessions_of(ROWS))
    # a: seen (down to the first click) in rows 1, 2, 3, 4: clicked in 2 and 4; b: rows 1, 3: clicked in 1;
    # c: rows 3, 4 (row 2's c is below its first click): never clicked
    expected = {"a": (1 + 2) / (2 + 4), "b": (1 + 1) / (2 + 2), "c": (1 + 0) / (2 + 2)}
    assert {d: model.attr[model.vocabulary.codes[("q", d)]] for d in "abc"} == expected


def test_a_click_on_a_document_not_among_the_results_is_no_results_click():
    """An ad (a document not among the results, clicked at any rank) is no click on the result at its
    rank. The cascade model: a, b shown twice, once with an ad clicked at a's rank 1, once below the
    results; no result clicked, so attr = (1 + 0) / (2 + 2) for both (the first ad had made a clicked:
    (1 + 1) / (2 + 1)). A swap experiment: the top result t clicked at rank 1 in its one issue without a
    swap; swapped to rank 2 twice, clicked there once, the other issue with only an ad clicked at rank 2:
    exam_2 = (1 / 2) / (1 / 1). Read record by record and a batch of columns at a time (a polars frame)."""
    shown = {"query": "q", "timestamp": 0, "results": ["a", "b"]}
    cascade = [
        {**shown, "session": "s1", "clicks": [{"doc": "ad", "rank": 1}]},
        {**shown, "session": "s2", "clicks": [{"doc": "ad", "rank": 3}]},
    ]
    swapped = {"query": "q", "timestamp": 0, "results": ["u", "t"], "swap": 2}
    swaps = [
        {"session": "s1", "query": "q", "timestamp": 0, "results": ["t", "u"], "swap": 1, "clicks": [{"doc": "t", "rank": 1}]},
        {**swapped, "session": "s2", "clicks": [{"doc": "ad", "rank": 2}]},
        {**swapped, "session": "s3", "clicks": [{"doc": "t", "rank": 2}]},
    ]  # fmt: skip
    for form in (list, pl.DataFrame):
        model = fit(form(cascade), "cm").model
        assert {d: model.attr[model.vocabulary.codes[("q", d)]] for d in "ab"} == {"a": 1 / 4, "b": 1 / 4}
        swap = fit(form(swaps), "swap").model
        assert (swap.shown[:3].tolist(), swap.clicked[:3].tolist()) == ([1, 2, 0], [1, 1, 0])
        assert swap.exam[1] == 0.5


def test_a_swap_past_the_lists_end_is_refused_and_pandas_nulls_are_no_swap():
    """A swap to rank 5 of a one-result list was counted as shown at rank 5 (exam 0 there); and pandas,
    which holds a column of integers with nulls as floats (NaN: no swap), had its swaps refused as floats
    where every other form fitted them."""
    pd = pytest.importorskip("pandas")
    swaps = [
        {"session": "s1", "query": "q", "timestamp": 0, "results": ["t", "u"], "swap": 1, "clicks": [{"doc": "t"}]},
        {"session": "s2", "query": "q", "timestamp": 1, "results": ["u", "t"], "swap": 2, "clicks": [{"doc": "t"}]},
        {"session": "s3", "query": "q", "timestamp": 2, "results": ["t", "u"], "swap": None, "clicks": []},
    ]  # fmt: skip
    want = fit(swaps, "swap").model
    for form in (pl.DataFrame, pd.DataFrame):
        got = fit(form(swaps), "swap").model
        assert (got.shown.tolist(), got.clicked.tolist()) == (want.shown.tolist(), want.clicked.tolist())
    past = {"session": "s4", "query": "q", "timestamp": 3, "results": ["t"], "swap": 5, "clicks": []}
    for form in (list, pl.DataFrame, pd.DataFrame):
        with pytest.raises(irspec.InputError, match=r"\b4: swap 5: the top result cannot have been swapped "
                           r"with rank 5 of 1 results$"):  # fmt: skip
            fit(form([*swaps, past]), "swap")


def test_cascade_log_likelihood_by_hand():
    """Each result's click probability given the clicks above it: attr down to the first click, then
    certain no click (1) or an impossible click (floored at 1e-6); attr a = b = 1/2 and c = 1/4, as above."""
    sessions = sessions_of(ROWS)
    model = CM().fit(sessions)
    half, c_none = math.log(0.5), math.log(0.75)
    per_session = [
        (half + half + 0.0) / 3,  # a not clicked, b clicked, c below the click: no click, certain
        (half + 0.0 + math.log(1e-6)) / 3,  # a clicked; b: no click, certain; c: a click CM cannot explain
        (half + half + c_none) / 3,  # no click: b, a, c each not clicked
        (c_none + half) / 2,  # c not clicked, a clicked
    ]
    assert model.log_likelihood(sessions) == pytest.approx(sum(per_session) / 4, rel=1e-14)


def test_a_session_without_results_is_not_evaluated():
    """It has no result to average a log over (its 0 / 0 made the log-likelihood NaN), nor any rank:
    CM's attr a = b = 1/2 (above); the other session does not click a and clicks b."""
    model = CM().fit(sessions_of(ROWS))
    sessions = sessions_of([(["a", "b"], [2]), ([], [])])
    model = model.for_pairs(sessions.vocabulary.pairs())
    assert model.log_likelihood(sessions) == pytest.approx(math.log(0.5), rel=1e-14)
    perplexity, per_rank = model.perplexity(sessions)  # unconditional: P(no click on a), P(click on b) 1/4
    assert per_rank == pytest.approx([2.0, 4.0], rel=1e-14) and perplexity == pytest.approx(3.0, rel=1e-14)


def test_perplexity_is_over_the_sessions_and_ranks_shown_by_hand():
    """A rank's perplexity is over the sessions that show a result there, and the mean over the ranks
    shown: PBM with attr a = 1/2, b = 1/4 and exam 1, 1/2 on a page of two (a clicked) and one of one (b
    not clicked). Rank 1: P = 1/2 and 3/4; rank 2, the first page's alone: P(b not clicked) = 1 - 1/8."""
    model = load(
        {"model": "PBM", "params": {"attr": {"q": {"a": 0.5, "b": 0.25}}, "exam": [1, 0.5] + [0.5] * 8}}
    )
    sessions = sessions_of([(["a", "b"], [1]), (["b"], [])])
    perplexity, per_rank = model.for_pairs(sessions.vocabulary.pairs()).perplexity(sessions)
    want = [(0.5 * 0.75) ** -0.5, 1 / 0.875]
    assert per_rank == pytest.approx(want, rel=1e-14)  # no ranks 3 to 10: no session shows them
    assert perplexity == pytest.approx(sum(want) / 2, rel=1e-14)


def test_dcm_by_hand():
    """attr counted down to the last click (all without one); cont(r) = (1 + clicks at r not the last) /
    (2 + clicks at r)."""
    model = DCM().fit(sessions_of(ROWS))
    # a: rows 1 (rank 1, down to 2), 2 (clicked), 3 (no click: all), 4 (clicked): 2 of 4; b: rows 1
    # (clicked), 2, 3: 1 of 3; c: rows 2 (clicked), 3, 4 (rank 1, down to 2): 1 of 3
    expected = {"a": 3 / 6, "b": 2 / 5, "c": 2 / 5}
    assert {d: model.attr[model.vocabulary.codes[("q", d)]] for d in "abc"} == pytest.approx(expected)
    # clicks at rank 1: row 2 (not its last); rank 2: rows 1 and 4 (last); rank 3: row 2 (last)
    assert model.cont[:3].tolist() == [2 / 3, 1 / 4, 1 / 3]
    assert model.cont[3:].tolist() == [0.5] * 7


# --------------------------------------------------------------------------------------------------
# EM: the statistics are the exact posteriors


def _hidden_states(model, docs, clicks):
    """Every assignment of a DBN session's hidden variables (E, A, S per rank) consistent with its clicks,
    with its probability: the joint written out from Chapelle and Zhang's definition."""
    alpha = [model.attr[model.vocabulary.codes[("q", d)]] for d in docs]
    sigma = [model.sat[model.vocabulary.codes[("q", d)]] for d in docs]
    gamma = model.cont
    n = len(docs)
    for e, a, s in itertools.product(itertools.product((0, 1), repeat=n), repeat=3):
        p = 1.0 if e[0] else 0.0  # the first result is examined
        for r in range(n):
            if (e[r] and a[r]) != clicks[r] or (s[r] and not clicks[r]):
                p = 0.0
                break
            p *= alpha[r] if a[r] else 1 - alpha[r]
            if clicks[r]:
                p *= sigma[r] if s[r] else 1 - sigma[r]
            if r + 1 < n:
                go = e[r] and not s[r]
                p *= (gamma if e[r + 1] else 1 - gamma) if go else (0.0 if e[r + 1] else 1.0)
        if p:
            yield p, e, a, s


@pytest.mark.parametrize("clicks", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 0, 1), (0, 0, 1), (1, 1, 1)])
def test_dbn_statistics_are_the_exact_posteriors(clicks):
    docs = ["a", "b", "c"]
    model = DBN()
    model.vocabulary = Vocabulary()
    for d in docs:
        model.vocabulary.code("q", d)
    model.attr, model.sat, model.cont = np.array([0.6, 0.3, 0.45]), np.array([0.2, 0.7, 0.5]), 0.8
    session = Sessions(np.array([[0, 1, 2] + [-1] * 7]), np.array([list(map(bool, clicks)) + [False] * 7]),
                       np.array([3]), np.array([1.0]), model.vocabulary)  # fmt: skip
    stats = model._statistics(session)
    states = list(_hidden_states(model, docs, clicks))
    total = sum(p for p, *_ in states)
    for r in range(3):
        p_attracted = sum(p for p, e, a, s in states if a[r]) / total
        assert stats["attr"][0][r] == pytest.approx(p_attracted, abs=1e-12)
        if clicks[r]:
            assert stats["sat"][0][r] == pytest.approx(
                sum(p for p, e, a, s in states if s[r]) / total, abs=1e-12
            )
    # continuation: transitions (E_r = 1, S_r = 0) -> E_{r+1} over ranks 1, 2; the last rank's, whose next
    # result does not exist, counts with its prior (PyClick's convention, which leaves the fixed point)
    went = sum(p for p, e, a, s in states for r in range(2) if e[r] and not s[r] and e[r + 1]) / total
    could = sum(p for p, e, a, s in states for r in range(3) if e[r] and not s[r]) / total
    at_last = sum(p for p, e, a, s in states if e[2] and not s[2]) / total
    assert stats["cont"][0] == pytest.approx(went + at_last * model.cont, abs=1e-12)
    assert stats["cont"][1] == pytest.approx(could, abs=1e-12)


@pytest.mark.parametrize("model_class", [PBM, UBM])
def test_position_models_statistics_are_the_exact_posteriors(model_class):
    """P(A = 1 | C = 0) and P(E = 1 | C = 0) for independent A and E, by enumeration."""
    model = model_class()
    session = sessions_of([(["a", "b", "c"], [2])])
    model.vocabulary = session.vocabulary
    model._start(3)
    model.attr = np.array([0.3, 0.6, 0.2])
    stats = model._statistics(session)
    gamma, index = model._gamma(session)
    for r, (clicked, alpha) in enumerate(zip((0, 1, 0), (0.3, 0.6, 0.2), strict=True)):
        g = gamma[0, r]
        states = [(pa * pe, a, e) for a, pa in ((1, alpha), (0, 1 - alpha)) for e, pe in ((1, g), (0, 1 - g))
                  if (a and e) == clicked]  # fmt: skip
        total = sum(p for p, *_ in states)
        assert stats["attr"][0][r] == pytest.approx(sum(p for p, a, e in states if a) / total)
        assert stats["exam"][0].ravel()[index[0, r]] == pytest.approx(
            sum(p for p, a, e in states if e) / total
        )


# --------------------------------------------------------------------------------------------------
# Simulation and fitting recover each other


@pytest.mark.parametrize("name", ["pbm", "cm", "dcm", "ubm", "dbn"])
def test_simulated_clicks_have_the_models_probabilities(name):
    """Each rank's click rate over 200,000 simulated sessions of one list is the model's unconditional
    click probability there, within 5 standard errors."""
    model = model_of(name).fit(split()[0])
    pairs = np.tile(np.arange(10), (200_000, 1))
    clicks = model.simulate(pairs, np.full(200_000, 10), np.random.default_rng(1))
    one = Sessions(
        pairs[:1], np.zeros((1, 10), dtype=bool), np.array([10]), np.array([1.0]), model.vocabulary
    )
    full, _ = model.probabilities(one)
    rate = clicks.mean(axis=0)
    assert np.abs(rate - full[0]).max() < 5 * np.sqrt(full[0] * (1 - full[0]) / 200_000).max()


def test_a_pair_the_table_lacks_gets_the_unseen_value():
    """Each pair's value, read pair by pair: its entry in the table, or ``unseen`` for -1 (no document)
    and for a pair past the table's end (one the fitted model never saw), in tables of 0, 1 and 7."""
    rng = np.random.default_rng(4)
    for size in (0, 1, 7):
        values = rng.random(size)
        pairs = rng.integers(-1, size + 3, (40, 5))
        want = [[values[p] if 0 <= p < size else 0.25 for p in row] for row in pairs.tolist()]
        assert _gather(values, pairs, 0.25).tolist() == want


def test_dbn_fit_recovers_the_parameters_it_simulated():
    truth = DBN()
    truth.vocabulary = Vocabulary()
    docs = [f"d{i}" for i in range(10)]
    for d in docs:
        truth.vocabulary.code("q", d)
    rng = np.random.default_rng(3)
    truth.attr, truth.sat, truth.cont = rng.uniform(0.2, 0.8, 10), rng.uniform(0.2, 0.8, 10), 0.7
    n = 100_000
    pairs = np.array([rng.permutation(10) for _ in range(n)])  # every document at every rank
    clicks = truth.simulate(pairs, np.full(n, 10), rng)
    fitted = DBN().fit(Sessions(pairs, clicks, np.full(n, 10), np.ones(n), truth.vocabulary).compact())
    assert np.abs(fitted.attr - truth.attr).max() < 0.03
    assert np.abs(fitted.sat - truth.sat).max() < 0.05
    assert fitted.cont == pytest.approx(0.7, abs=0.02)


# --------------------------------------------------------------------------------------------------
# Sessions, JSON, the command


def test_sessions_merge_identical_ones_and_fit_the_same():
    train = split()[0]
    doubled = Sessions.concat([train, train])
    merged = doubled.compact()
    assert len(merged) == len(train.compact()) and merged.count == 2 * train.count
    once, twice = DBN().fit(train), DBN().fit(doubled)
    assert np.abs(DBN().fit(merged).attr - twice.attr).max() < 1e-12
    assert not np.allclose(once.attr, twice.attr, atol=1e-6)  # the prior weighs less against twice the data


SHORT = [
    (["a", "b"], [1]),
    (["b", "a", "c"], [1, 2]),
    (["c", "a"], []),
    (["a", "c", "b"], [3]),
]
"""Pages of at most 3 results: ranks 4-10 never shown."""


def seen_cells(rows, ranks=10):
    """The examination cells some result of ``rows`` (``(documents, clicked ranks)``) falls under, counted
    here: PBM's rank ``r``; UBM's ``(r, r')`` with ``r'`` the rank of the click before ``r`` (0: none)."""
    pbm, ubm = np.zeros(ranks, dtype=bool), np.zeros((ranks, ranks + 1), dtype=bool)
    for docs, clicked in rows:
        for r in range(1, len(docs) + 1):
            pbm[r - 1] = True
            ubm[r - 1, max([c for c in clicked if c < r], default=0)] = True
    return pbm, ubm


@pytest.mark.parametrize("name", ["pbm", "ubm"])
def test_an_examination_no_result_fell_under_is_unknown(tmp_path, capsys, name):
    """Fitted to pages of at most 3 results, a position model has no examination at ranks 4-10 (it kept
    the prior's 0.5 there, which IPS read as the users' examination): NaN, written as null and read back
    as NaN; UBM likewise at each (rank, previous click) never seen, its cells with the previous click at or
    below the rank (never read) PyClick's 0.5. A simulation refuses lists longer than the ranks seen;
    held-out sessions are evaluated as before, an unknown examination read as 0.5."""
    model = model_of(name).fit(sessions_of(SHORT))
    pbm, ubm = seen_cells(SHORT)
    if name == "pbm":
        assert np.isnan(model.exam).tolist() == (~pbm).tolist()
    else:
        impossible = np.arange(11)[None, :] > np.arange(10)[:, None]  # a previous click at or below the rank
        assert np.isnan(model.exam).tolist() == (~ubm & ~impossible).tolist()
        assert (model.exam[impossible] == 0.5).all()
    assert model.known_ranks == 3
    written = json.loads(json.dumps(model.as_json()))  # strict JSON: null, not NaN
    assert (
        np.isnan(np.array(written["params"]["exam"], dtype=float)).tolist() == np.isnan(model.exam).tolist()
    )
    (tmp_path / "m.json").write_text(json.dumps(written, allow_nan=False))
    again = load(str(tmp_path / "m.json"))
    np.testing.assert_array_equal(again.exam, model.exam)  # NaN where NaN
    a, b = {"q": ["a", "b", "c"]}, {"q": ["c", "b", "a"]}
    with pytest.raises(irspec.EvaluationError, match=r"depth must be at most 3: .* unknown below rank 3"):
        Design(again, a, b, depth=10)
    assert Design(again, a, b, depth=3).depth == 3
    longer = sessions_of([(["a", "b", "c", "d"], [4])], query="q")
    prior = copy.deepcopy(again)
    prior.exam = np.where(np.isnan(prior.exam), 0.5, prior.exam)
    ours = again.for_pairs(longer.vocabulary.pairs())
    assert ours.log_likelihood(longer) == prior.for_pairs(longer.vocabulary.pairs()).log_likelihood(longer)
    log = tmp_path / "short.jsonl"
    log.write_text("".join(json.dumps({"session": f"s{i}", "query": "q", "timestamp": i, "results": docs,
                                       "clicks": [{"doc": docs[r - 1], "rank": r} for r in clicked]}) + "\n"
                           for i, (docs, clicked) in enumerate(SHORT)))  # fmt: skip
    assert main(["clickmodel", "fit", str(log), "--model", name, "-o", str(tmp_path / "cli.json")]) == 0
    said = "examination unknown at rank 4, 5, 6, 7, 8, ... (the log has no result there to fit it by)"
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("name", ["pbm", "cm", "dcm", "ubm", "dbn"])
def test_a_fitted_model_reads_back_from_its_json(tmp_path, name):
    train, _ = split()
    model = model_of(name).fit(train, iterations=5)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model.as_json()))
    again = load(str(path))
    tested = Sessions.of_records(list(jsonl_records(str(LOG)))[3000:], str(LOG), vocabulary=again.vocabulary)
    ours = Sessions.of_records(list(jsonl_records(str(LOG)))[3000:], str(LOG), vocabulary=model.vocabulary)
    assert again.log_likelihood(tested) == pytest.approx(model.log_likelihood(ours), rel=1e-12)


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not a click model's JSON"),
    ('{"model": "nope", "params": {}}', "unknown click model 'nope'"),
    ('{"model": "PBM", "params": {"attr": {"q": {"d": 2}}, "exam": [0.5]}}', "params.attr.q.d must be a probability"),
    ('{"model": "PBM", "params": {"attr": {}, "exam": [0.5]}}', "params.exam must be probabilities of shape [10]"),
])  # fmt: skip
def test_a_bad_model_file_is_located(tmp_path, content, message):
    (tmp_path / "m.json").write_text(content)
    with pytest.raises(irspec.InputError, match=re_escape(message)):
        load(str(tmp_path / "m.json"))


def re_escape(text):
    import re

    return re.escape(text)


def test_the_held_out_split_and_the_command(tmp_path, capsys):
    train, test = read_sessions(str(LOG), holdout=0.25)
    assert 0.2 < test.count / (train.count + test.count) < 0.3
    fitted = fit(str(LOG), "pbm", holdout=0.25)
    assert fitted.log_likelihood == pytest.approx(fitted.model.log_likelihood(test))
    out = tmp_path / "pbm.json"
    assert main(["clickmodel", "fit", str(LOG), "--model", "pbm", "--holdout", "0.25", "-o", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["model"] == "PBM" and written["params"]["exam"] == pytest.approx(
        fitted.model.exam.tolist()
    )
    assert written["evaluation"]["log_likelihood"] == pytest.approx(fitted.log_likelihood)
    assert "fitted PBM to" in capsys.readouterr().err
    assert math.isclose(written["sessions"], train.count)
