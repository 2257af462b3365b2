"""Differential tests: irspec's per-query values against pytrec_eval's on random data.

pytrec_eval (package pytrec-eval-terrier) runs the C code of an older trec_eval. For every measure
both have, irspec must give pytrec_eval's per-query value within 1e-4 under the same relevance level,
depth (-M) and judged-only (-J) options, with ``missing_queries="skip"``: pytrec_eval evaluates exactly
the run queries that the qrels know, as trec_eval without -c does (checked below, in
``test_pytrec_eval_query_set_semantics``).

What is not compared to pytrec_eval, and why:

- ``iprec_at_recall`` and ``11pt_avg``: pytrec_eval's trec_eval picks the c-th relevant document with
  c = floor(x·R + 0.9); trec_eval 10 (irspec's reference) uses c = lround(x·R). These are checked
  against trec_eval 10's algorithm (m_iprec_at_recall.c, m_11pt_avg.c) written out in this file.
- Inputs pytrec_eval cannot take: a qrels query whose labels are all negative (it crashes with a
  segmentation fault), a run query with an empty ranking (segmentation fault), and a ranking that
  judged-only empties (it returns NaN for iprec_at_recall_0.00 and 11pt_avg, from 0/0). Those queries
  are left out of pytrec_eval's input; irspec gets them all, and the tests below check that it gives
  its defined values there: 0 for every measure, except the counts (num_ret, num_rel) and utility,
  which are what their formulas give.
- pytrec_eval has no -M: the run is cut to its top M (score descending, docno descending) before it
  is given to pytrec_eval, and irspec gets the whole run with ``depth=M``.
- pytrec_eval's trec_eval keeps scores in a C ``float``; trec_eval 10 in a ``double``. Scores that
  differ only beyond single precision (``near_ties``) are given to pytrec_eval re-scored by their
  double-precision ranking; the main comparison's random scores never differ only there.

A measure irspec does not implement yet (NotImplementedError, or its kernel module missing) is marked
xfail(strict=False) with reason "not implemented yet", so the suite runs; an XPASS means it arrived.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import randomdata
from randomdata import judged_only_ranking, random_case, ranked, truncate

import irspec
import irspec.data.small

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-4
SEEDS = tuple(range(32))
LEVELS = (1, 2, 3)
DEPTHS = (None, 5, 40)
JUDGED = (False, True)
OPTION_GRID = [(lv, m, j) for lv in LEVELS for m in DEPTHS for j in JUDGED]

# Cutoffs: small ones (where short rankings and ties matter) and one past most rankings.
_CUTS = "1,2,3,5,10,20,100,250"

# family id -> (trec_eval measure text, given as is to pytrec_eval and to irspec.parse_many(trec=True);
#               pytrec_eval's key when it differs from irspec's trec_name)
FAMILIES: dict[str, tuple[str, str | None]] = {
    "map": ("map", None),
    "map_cut": (f"map_cut.{_CUTS}", None),
    "P": (f"P.{_CUTS}", None),
    "recall": (f"recall.{_CUTS}", None),
    "ndcg": ("ndcg", None),
    "ndcg_cut": (f"ndcg_cut.{_CUTS}", None),
    "recip_rank": ("recip_rank", None),
    "Rprec": ("Rprec", None),
    "Rprec_mult": ("Rprec_mult.0.2,0.4,0.5,0.6,0.8,1.0,1.2,1.5,2.0,3.0", None),
    "bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "set_P": ("set_P", None),
    "set_recall": ("set_recall", None),
    "set_F": ("set_F", None),
    "set_F.4": ("set_F.4", "set_F"),  # trec_eval's parameter is beta squared: F(beta=2)
    "set_F.0.25": ("set_F.0.25", "set_F"),  # F(beta=0.5)
    "set_map": ("set_map", None),
    "set_relative_P": ("set_relative_P", None),
    "relative_P": (f"relative_P.{_CUTS}", None),
    "success": ("success.1,2,3,5,10", None),
    "num_ret": ("num_ret", None),
    "num_rel": ("num_rel", None),
    "num_rel_ret": ("num_rel_ret", None),
    "num_nonrel_judged_ret": ("num_nonrel_judged_ret", None),
    "utility": ("utility", None),
    "binG": ("binG", None),
    "G": ("G", None),
    "ndcg_rel": ("ndcg_rel", None),
    "Rndcg": ("Rndcg", None),
}

# Families whose pytrec_eval key collides with another's: each gets its own evaluator.
_OWN_EVALUATOR = {f for f, (_, key) in FAMILIES.items() if key is not None}


# --------------------------------------------------------------------------------------------------
# Which families irspec implements (decided once, at collection).

_PROBE_QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": -1}, "q2": {"x": 1}}
_PROBE_RUN = {"q1": {"a": 1.0, "b": 2.0, "e": 0.5, "d": 0.1}, "q2": {"y": 1.0, "x": 0.5}}


def _not_implemented(exc: BaseException) -> bool:
    """A NotImplementedError, or a kernel module that does not exist yet."""
    if isinstance(exc, NotImplementedError):
        return True
    return isinstance(exc, ModuleNotFoundError) and (exc.name or "").startswith("irspec")


@functools.cache
def _metrics(text: str) -> tuple:
    return tuple(irspec.parse_many([text], trec=True))


def _probe(text: str) -> BaseException | None:
    try:
        irspec.evaluate(_PROBE_QRELS, _PROBE_RUN, list(_metrics(text)), missing_queries="skip")
    except Exception as e:
        return e
    return None


_PROBED = {fam: _probe(text) for fam, (text, _) in FAMILIES.items()}
NOT_IMPLEMENTED = {fam: e for fam, e in _PROBED.items() if e is not None and _not_implemented(e)}


def _family_param(fam: str, *rest, id_: str | None = None):
    marks = []
    if fam in NOT_IMPLEMENTED:
        e = NOT_IMPLEMENTED[fam]
        marks.append(pytest.mark.xfail(strict=False, reason=f"not implemented yet ({type(e).__name__}: {e})"))
    return pytest.param(fam, *rest, marks=marks, id=id_ or fam)


def _opt_id(level: int, depth: int | None, judged: bool) -> str:
    return f"L{level}-M{depth if depth is not None else 'all'}-{'J' if judged else 'noJ'}"


# --------------------------------------------------------------------------------------------------
# Inputs and both evaluators' outputs, computed once per (seed, options).


@functools.cache
def _case(seed: int, near_ties: bool = False) -> tuple[dict, dict]:
    return random_case(seed, all_negative=True, near_ties=near_ties)


@functools.cache
def _plain_case(seed: int) -> tuple[dict, dict]:
    """``random_case(seed)`` (no query whose labels are all negative), drawn once for the module's tests
    (they run once a reader); neither evaluator changes the dicts it is given."""
    return random_case(seed)


@functools.cache
def _cut_rankings(seed: int, depth: int | None) -> dict[str, list[str]]:
    """Each run query's ranking of ``_case(seed)`` cut to ``depth`` (-M), in trec_eval's order: computed once
    for the module's tests, not once a query and option (ranking the whole run again for each left-out
    query was a fifth of this file's time). Callers do not change the lists."""
    _, run = _case(seed)
    return {q: ranked(docs) for q, docs in truncate(run, depth).items()}


def _all_negative(labels: Mapping[str, int]) -> bool:
    return bool(labels) and all(v < 0 for v in labels.values())


@functools.cache
def _pytrec_inputs(
    seed: int, depth: int | None, judged: bool, near_ties: bool = False
) -> tuple[dict, dict, frozenset]:
    """(qrels, run) safe for pytrec_eval, and the queries irspec evaluates that were left out."""
    qrels, run = _case(seed, near_ties)
    cut = truncate(run, depth)
    left_out: set[str] = set()
    q2: dict = {}
    for q, labels in qrels.items():
        if not labels:
            continue
        if _all_negative(labels):  # pytrec_eval: segmentation fault
            if cut.get(q):
                left_out.add(q)
            continue
        q2[q] = labels
    r2: dict = {}
    for q, docs in cut.items():
        if not docs:  # pytrec_eval: segmentation fault; trec_eval: the query has no line at all
            continue
        if near_ties:  # pytrec_eval's trec_eval keeps scores as float: give it the double ranking
            docs = {d: float(len(docs) - i) for i, d in enumerate(ranked(docs))}
        if judged and q in q2 and not judged_only_ranking(ranked(docs), q2[q]):
            left_out.add(q)  # pytrec_eval: NaN from 0/0 in iprec_at_recall / 11pt_avg
            continue
        r2[q] = docs
    return q2, r2, frozenset(left_out)


@functools.cache
def _pytrec(
    seed: int, level: int, depth: int | None, judged: bool, near_ties: bool = False
) -> dict[str, dict[str, dict[str, float]]]:
    """pytrec_eval's per-query values, by family: {family: {qid: {key: value}}}."""
    qrels, run, _ = _pytrec_inputs(seed, depth, judged, near_ties)
    out: dict[str, dict] = {}
    shared = [text for fam, (text, _) in FAMILIES.items() if fam not in _OWN_EVALUATOR]
    groups = [(sorted(f for f in FAMILIES if f not in _OWN_EVALUATOR), shared)]
    groups += [([f], [FAMILIES[f][0]]) for f in sorted(_OWN_EVALUATOR)]
    for fams, texts in groups:
        ev = pytrec_eval.RelevanceEvaluator(
            qrels, set(texts), relevance_level=level, judged_docs_only_flag=judged
        )
        values = ev.evaluate(run)
        for f in fams:
            out[f] = values
    return out


def _irspec(
    seed: int, level: int, depth: int | None, judged: bool, near_ties: bool = False
) -> dict[str, object]:
    """irspec's per-query values by family: {family: {qid: {trec key: value}}}, or the exception raised;
    computed once for each of the readers the test runs with (conftest's ``_reader`` fixture sets
    irspec.data.small.SMALL_BELOW, part of the key: without it the general reader's tests read the small
    one's values, issue 35). The dicts go to irspec.evaluate as a pytrec_eval user gives them, which reads
    them as dicts whatever SMALL_BELOW says; with the general reader, irspec is given them read by it
    (``read_qrels``, ``read_run``: frames, and the frame's ranking)."""
    return _irspec_values(seed, level, depth, judged, near_ties, irspec.data.small.SMALL_BELOW)


@functools.cache
def _read_generally(seed: int, near_ties: bool) -> tuple[irspec.Qrels, irspec.Run]:
    qrels, run = _case(seed, near_ties)
    return irspec.read_qrels(qrels), irspec.read_run(run)


@functools.cache
def _irspec_values(
    seed: int, level: int, depth: int | None, judged: bool, near_ties: bool, readers: int
) -> dict[str, object]:
    qrels, run = _read_generally(seed, near_ties) if readers == 0 else _case(seed, near_ties)
    out: dict[str, object] = {}
    # The small reader's call is the one test_iprec_and_11pt_follow_trec_eval_10 makes (the same dicts
    # and options): its iprec and 11pt metrics go in it, rather than in a call of their own (a third of
    # this file's evaluations). The general reader's test gives the dicts, not the frames read here.
    trec10 = [m for m, _, _ in _trec10_specs()] if readers != 0 and not near_ties else []

    def run_families(fams: list[str], extra: list) -> None:
        metrics, owner = [], {}
        for f in fams:
            for m in _metrics(FAMILIES[f][0]):
                metrics.append(m)
                owner[m] = f
        res = irspec.evaluate(
            qrels,
            run,
            metrics + extra,
            relevance_level=level,
            depth=depth,
            judged_only=judged,
            missing_queries="skip",
        )
        for f in fams:
            out[f] = {}
        # each metric's family, key and column once, not once a query (hashing a metric and its
        # trec_name per value cost ~8% of this file's time)
        where = []
        for m in res.metrics:
            fam = owner.get(m)  # None for the iprec and 11pt metrics (extra)
            if fam is not None:
                where.append((out[fam], FAMILIES[fam][1] or m.trec_name, str(m)))
        per_query = res.per_query()
        for qid, row in per_query.items():
            for values, key, column in where:
                values.setdefault(qid, {})[key] = row[column]
        if extra:
            out[_TREC10] = per_query

    working = [f for f in FAMILIES if f not in NOT_IMPLEMENTED]
    try:
        run_families(working, trec10)
    except Exception:  # _check_against_trec10 then evaluates the iprec and 11pt metrics itself
        for f in working:
            try:
                run_families([f], [])
            except Exception as e:
                out[f] = e
    for f in NOT_IMPLEMENTED:
        try:
            run_families([f], [])
        except Exception as e:
            out[f] = e
    return out


def _repro(seed: int, qid: str, level: int, depth: int | None, judged: bool, near_ties: bool = False) -> str:
    qrels, run = _case(seed, near_ties)
    q = qrels.get(qid, {})
    r = run.get(qid, {})
    text = f"qrels={{{qid!r}: {q!r}}}, run={{{qid!r}: {r!r}}}"
    if len(text) > 1500:
        text = (
            f"(seed {seed}, query {qid!r}: {len(q)} judgments, {len(r)} retrieved; "
            f"randomdata.random_case({seed}, all_negative=True, near_ties={near_ties}))"
        )
    return f"relevance_level={level}, depth={depth}, judged_only={judged}: {text}"


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return False
    return abs(a - b) <= TOL


# --------------------------------------------------------------------------------------------------
# The comparison with pytrec_eval.


def _compare(family: str, options: list[tuple[int, int | None, bool]], near_ties: bool) -> list[str]:
    mismatches: list[str] = []
    for level, depth, judged in options:
        for seed in SEEDS:
            mine = _irspec(seed, level, depth, judged, near_ties)[family]
            if isinstance(mine, BaseException):
                raise mine
            theirs = _pytrec(seed, level, depth, judged, near_ties)[family]
            for qid, expected_row in theirs.items():
                assert qid in mine, f"seed {seed}: irspec did not evaluate query {qid!r}, pytrec_eval did"
                for key, got in mine[qid].items():
                    assert key in expected_row, f"pytrec_eval has no {key!r} (keys: {sorted(expected_row)})"
                    want = expected_row[key]
                    if not _close(got, want):
                        mismatches.append(
                            f"{key} seed={seed} query={qid}: irspec {got!r} vs pytrec_eval {want!r}; "
                            + _repro(seed, qid, level, depth, judged, near_ties)
                        )
    return mismatches


@pytest.mark.parametrize("level,depth,judged", [pytest.param(*o, id=_opt_id(*o)) for o in OPTION_GRID])
@pytest.mark.parametrize("family", [_family_param(f) for f in FAMILIES])
def test_matches_pytrec_eval(family: str, level: int, depth: int | None, judged: bool) -> None:
    mismatches = _compare(family, [(level, depth, judged)], near_ties=False)
    assert not mismatches, f"{len(mismatches)} disagreements, first ones:\n" + "\n".join(mismatches[:8])


NEAR_TIE_OPTIONS = [(1, None, False), (2, 5, True), (3, 40, False)]


@pytest.mark.parametrize("family", [_family_param(f) for f in FAMILIES])
def test_matches_pytrec_eval_with_near_tied_scores(family: str) -> None:
    """Scores that are distinct doubles but one C float (1.0 and 1.00000001) are distinct, as in trec_eval 10.

    trec_eval 10 keeps a run's scores as ``double`` (trec_format.h, ``TEXT_RESULTS.sim``); the older
    trec_eval inside pytrec_eval keeps a ``float``, so it would tie them (test_scores_compare_in_double).
    pytrec_eval is therefore given the same ranking re-scored n, n-1, ..., 1 (the ranking computed in
    double precision by ``randomdata.ranked``), and irspec the original near-tied scores.
    """
    mismatches = _compare(family, NEAR_TIE_OPTIONS, near_ties=True)
    assert not mismatches, f"{len(mismatches)} disagreements, first ones:\n" + "\n".join(mismatches[:8])


def test_scores_compare_in_double() -> None:
    """1.00000001 ranks above 1.0 (trec_eval 10 reads scores into a double); pytrec_eval's copy ties them.

    Double precision: a (1.00000001) then b (1.0), the relevant b is second, RR = 0.5. pytrec_eval
    (a float, so one score; docno descending breaks the tie) puts b first: RR = 1.
    """
    qrels = {"q": {"b": 1, "a": 0}}
    run = {"q": {"a": 1.00000001, "b": 1.0}}
    assert irspec.evaluate(qrels, run, "recip_rank").per_query()["q"]["RR"] == 0.5
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"]
    assert theirs == 1.0, "pytrec_eval now keeps double scores: the re-scoring above is no longer needed"


@pytest.mark.parametrize("level,depth,judged", [pytest.param(*o, id=_opt_id(*o)) for o in OPTION_GRID])
def test_same_queries_as_pytrec_eval(level: int, depth: int | None, judged: bool) -> None:
    """With missing_queries="skip", irspec evaluates pytrec_eval's queries plus the ones left out of its input."""
    fam = next(
        f
        for f in FAMILIES
        if f not in NOT_IMPLEMENTED and not isinstance(_irspec(0, level, depth, judged)[f], BaseException)
    )
    for seed in SEEDS:
        mine = _irspec(seed, level, depth, judged)[fam]
        theirs = _pytrec(seed, level, depth, judged)[fam]
        _, _, left_out = _pytrec_inputs(seed, depth, judged)
        assert set(mine) == set(theirs) | left_out, f"seed {seed}"


def test_pytrec_eval_query_set_semantics() -> None:
    """What pytrec_eval does with queries only in the qrels or only in the run (mirrored by "skip")."""
    qrels = {"both": {"d1": 1}, "qrels_only": {"d1": 1}, "empty_judgments": {}}
    run = {"both": {"d1": 1.0}, "run_only": {"d1": 1.0}, "empty_judgments": {"d1": 1.0}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    assert set(theirs) == {"both"}
    mine = irspec.evaluate(qrels, run, "map", missing_queries="skip").per_query()
    assert set(mine) == {"both"}


# --------------------------------------------------------------------------------------------------
# Queries pytrec_eval cannot take: irspec's defined values.


def _defined_value(key: str, n: int, R: int, relret: int) -> float:
    """irspec's value for a query with no relevant document retrieved and (for most) nothing to rank.

    Counts are counts; utility is trec_eval's formula with its default coefficients (1, -1, 0, 0):
    relret - (n - relret). Every other measure is 0.
    """
    if key == "num_ret":
        return float(n)
    if key == "num_rel":
        return float(R)
    if key == "num_rel_ret":
        return float(relret)
    if key == "utility":
        return float(relret - (n - relret))
    return 0.0


@pytest.mark.parametrize("family", [_family_param(f) for f in FAMILIES])
def test_left_out_queries_get_defined_values(family: str) -> None:
    """Random queries left out of pytrec_eval's input (all labels negative; emptied by -J) under every option."""
    checked = 0
    for seed in SEEDS:
        qrels, _ = _case(seed)
        for level, depth, judged in OPTION_GRID:
            _, _, left_out = _pytrec_inputs(seed, depth, judged)
            if not left_out:
                continue
            mine = _irspec(seed, level, depth, judged)[family]
            if isinstance(mine, BaseException):
                raise mine
            for qid in left_out:
                labels = qrels[qid]
                ranking = _cut_rankings(seed, depth)[qid]
                if judged:
                    ranking = judged_only_ranking(ranking, labels)
                R = sum(1 for v in labels.values() if v >= level)
                relret = sum(1 for d in ranking if labels.get(d, -1) >= level)
                for key, got in mine[qid].items():
                    want = _defined_value(key, len(ranking), R, relret)
                    assert _close(got, want), f"{key}: irspec {got!r}, defined value {want!r}; " + _repro(
                        seed, qid, level, depth, judged
                    )
                    checked += 1
    assert checked > 0, "no left-out query in the random cases: widen SEEDS"


def _family_metrics(family: str) -> list:
    return list(_metrics(FAMILIES[family][0]))


def _by_key(res, family: str) -> dict[str, dict[str, float]]:
    key = FAMILIES[family][1]
    return {q: {key or m.trec_name: row[str(m)] for m in res.metrics} for q, row in res.per_query().items()}


@pytest.mark.parametrize("family", [_family_param(f) for f in FAMILIES])
def test_all_negative_labels(family: str) -> None:
    """A query whose every label is negative (pytrec_eval segfaults): nothing is relevant or judged."""
    qrels = {"neg": {"a": -1, "b": -1, "z": -2}, "ok": {"a": 1}}
    run = {"neg": {"a": 1.0, "b": 0.5, "c": 0.5}, "ok": {"a": 1.0}}
    for level in LEVELS:
        for judged in JUDGED:
            res = irspec.evaluate(
                qrels,
                run,
                _family_metrics(family),
                relevance_level=level,
                judged_only=judged,
                missing_queries="skip",
            )
            values = _by_key(res, family)
            assert "neg" in values, "irspec must evaluate a run query whose qrels labels are all negative"
            n = 0 if judged else 3
            for key, got in values["neg"].items():
                assert _close(got, _defined_value(key, n, 0, 0)), (key, got, level, judged)


@pytest.mark.parametrize("family", [_family_param(f) for f in FAMILIES])
def test_ranking_emptied_by_judged_only(family: str) -> None:
    """-J drops every retrieved document (pytrec_eval: NaN in iprec_at_recall_0.00): all 0 but num_rel."""
    qrels = {"q": {"r1": 1, "r2": 3, "n": 0, "p": -1}}
    run = {"q": {"u1": 3.0, "u2": 2.0, "p": 1.0}}
    for level in LEVELS:
        res = irspec.evaluate(qrels, run, _family_metrics(family), relevance_level=level, judged_only=True)
        values = _by_key(res, family)
        R = sum(1 for v in qrels["q"].values() if v >= level)
        for key, got in values["q"].items():
            assert _close(got, _defined_value(key, 0, R, 0)), (key, got, level)


@pytest.mark.parametrize("family", [_family_param(f) for f in FAMILIES])
def test_empty_ranking_is_a_missing_query(family: str) -> None:
    """``{qid: {}}`` in a run is a query without lines: skipped under "skip", zero under "zero"."""
    qrels = {"q": {"r1": 1, "n": 0}, "other": {"a": 1}}
    run = {"q": {}, "other": {"a": 1.0}}
    skipped = irspec.evaluate(qrels, run, _family_metrics(family), missing_queries="skip").per_query()
    assert set(skipped) == {"other"}
    zero = _by_key(irspec.evaluate(qrels, run, _family_metrics(family), missing_queries="zero"), family)
    assert set(zero) == {"q", "other"}
    for key, got in zero["q"].items():
        assert _close(got, _defined_value(key, 0, 1, 0)), (key, got)


# --------------------------------------------------------------------------------------------------
# iprec_at_recall and 11pt_avg against trec_eval 10's algorithm.


def lround(v: float) -> int:
    """C's lround for v >= 0: nearest integer, halves away from zero (exact: v - floor(v) is exact)."""
    f = math.floor(v)
    return int(f) + 1 if v - f >= 0.5 else int(f)


def trec10_iprec(relevant: list[bool], R: int, x: float) -> float:
    """trec_eval 10's iprec_at_recall_x for one ranking (m_iprec_at_recall.c), as a rule.

    c = lround(x·R). If c exceeds the relevant retrieved: 0. Otherwise the maximum of P@i over the ranks
    i from the c-th relevant document (the first when c = 0) to the end of the ranking; with no relevant
    document retrieved, relret / n = 0. For an empty ranking trec_eval computes 0/0 (NaN) when c = 0;
    irspec defines 0.
    """
    n = len(relevant)
    relret = sum(relevant)
    c = lround(x * R)
    if n == 0 or c > relret or relret == 0:
        return 0.0
    ranks = [i + 1 for i, r in enumerate(relevant) if r]
    start = ranks[max(c, 1) - 1]
    best, seen = 0.0, 0
    for i, r in enumerate(relevant, start=1):
        seen += r
        if i >= start:
            best = max(best, seen / i)
    return best


def trec10_11pt_avg(relevant: list[bool], R: int, points: tuple[float, ...]) -> float:
    """trec_eval 10's te_calc_11ptavg (m_11pt_avg.c), step by step, points in the order given.

    trec_eval does not sort 11pt_avg's parameters (meas_init.c reads them with get_double_params, unlike
    iprec_at_recall's cutoffs), and its single backward pass assumes ascending points: with points out
    of order the later ones are credited with the interpolated precision of the whole ranking. An empty
    ranking: trec_eval's 0/0; irspec's defined 0.
    """
    n = len(relevant)
    relret = sum(relevant)
    if n == 0:
        return 0.0
    cutoffs = [lround(x * R) for x in points]
    current = len(points) - 1
    while current >= 0 and cutoffs[current] > relret:
        current -= 1
    int_precis = relret / n
    rel_so_far = relret
    total = 0.0
    i = n
    while i > 0 and rel_so_far > 0:
        int_precis = max(int_precis, rel_so_far / i)
        if relevant[i - 1]:
            while current >= 0 and rel_so_far == cutoffs[current]:
                total += int_precis
                current -= 1
            rel_so_far -= 1
        i -= 1
    while current >= 0:
        total += int_precis
        current -= 1
    return total / len(points)


IPREC_POINTS = (
    "0",
    "0.05",
    "0.1",
    "0.15",
    "0.2",
    "0.25",
    "0.3",
    "0.35",
    "0.4",
    "0.45",
    "0.5",
    "0.55",
    "0.6",
    "0.65",
    "0.7",
    "0.75",
    "0.8",
    "0.85",
    "0.9",
    "0.95",
    "1",
)
ELEVEN = tuple(i / 10 for i in range(11))
PT_SETS = {
    "11pt_avg": ELEVEN,
    "11pt_avg.0.25,0.5,0.75": (0.25, 0.5, 0.75),
    "11pt_avg.0.15,0.35,0.45,0.85": (0.15, 0.35, 0.45, 0.85),
}
UNSORTED_PT_SETS = {"11pt_avg.0.75,0.25": (0.75, 0.25), "11pt_avg.0.9,0.1,0.5": (0.9, 0.1, 0.5)}


def _iprec_metrics(
    pt_sets: dict[str, tuple[float, ...]], with_iprec: bool = True
) -> list[tuple[object, str, tuple[float, ...]]]:
    """(bound metric, kind, recall points) for every iprec / 11pt spec tested."""
    out = []
    if with_iprec:
        for p in IPREC_POINTS:
            (m,) = irspec.parse_many([f"iprec_at_recall.{p}"], trec=True)
            out.append((m, "iprec", (float(p),)))
    for text, points in pt_sets.items():
        (m,) = irspec.parse_many([text], trec=True)
        out.append((m, "11pt", points))
    return out


@functools.cache
def _trec10_specs() -> list[tuple[object, str, tuple[float, ...]]]:
    """The specs test_iprec_and_11pt_follow_trec_eval_10 checks, made once: the small reader evaluates them
    with the families (``_irspec_values``)."""
    return _iprec_metrics(PT_SETS)


_TREC10 = "iprec and 11pt"
"""``_irspec_values``' key of the per-query values of :func:`_trec10_specs`, where it evaluated them."""


@functools.cache
def _trec10_values(
    seed: int, level: int, depth: int | None, judged: bool, specs: tuple
) -> dict[str, list[float]]:
    """trec_eval 10's values of ``specs`` (by the rules above) for each query of ``_case(seed)`` that both
    the run (not empty) and the qrels hold: computed once for the tests of both readers."""
    qrels, run = _case(seed)
    out = {}
    for qid, docs in run.items():
        if not docs or not qrels.get(qid):
            continue
        labels = qrels[qid]
        ranking = _cut_rankings(seed, depth)[qid]
        if judged:
            ranking = judged_only_ranking(ranking, labels)
        relevant = [labels.get(d, -1) >= level for d in ranking]
        R = sum(1 for v in labels.values() if v >= level)
        out[qid] = [
            trec10_iprec(relevant, R, points[0]) if kind == "iprec" else trec10_11pt_avg(relevant, R, points)
            for _, kind, points in specs
        ]
    return out


def _check_against_trec10(specs, level: int, depth: int | None, judged: bool) -> list[str]:
    mismatches = []
    for seed in SEEDS:
        qrels, run = _case(seed)
        readers = irspec.data.small.SMALL_BELOW
        done = None
        if specs is _trec10_specs():
            done = _irspec_values(seed, level, depth, judged, False, readers).get(_TREC10)
        if done is not None:
            per_query = done
        else:
            res = irspec.evaluate(
                qrels,
                run,
                [m for m, _, _ in specs],
                relevance_level=level,
                depth=depth,
                judged_only=judged,
                missing_queries="skip",
            )
            per_query = res.per_query()
        expected_queries = {q for q, docs in run.items() if docs and qrels.get(q)}
        assert set(per_query) == expected_queries, f"seed {seed}"
        wants = _trec10_values(seed, level, depth, judged, tuple(specs))
        for qid, row in per_query.items():
            for (m, _, _), want in zip(specs, wants[qid], strict=True):
                got = row[str(m)]
                if not _close(got, want):
                    mismatches.append(
                        f"{m.trec_name or m} seed={seed} query={qid}: irspec {got!r} vs trec_eval 10 {want!r}; "
                        + _repro(seed, qid, level, depth, judged)
                    )
    return mismatches


@pytest.mark.parametrize("level,depth,judged", [pytest.param(*o, id=_opt_id(*o)) for o in OPTION_GRID])
def test_iprec_and_11pt_follow_trec_eval_10(level: int, depth: int | None, judged: bool) -> None:
    mismatches = _check_against_trec10(_trec10_specs(), level, depth, judged)
    assert not mismatches, f"{len(mismatches)} disagreements, first ones:\n" + "\n".join(mismatches[:8])


def test_rules_agree_on_sorted_points() -> None:
    """Self-check of this file: the step-by-step 11pt_avg equals the mean of the iprec rule when sorted."""
    for seed in SEEDS[:8]:
        qrels, run = _case(seed)
        for q, docs in run.items():
            if not docs or not qrels.get(q):
                continue
            relevant = [qrels[q].get(d, -1) >= 1 for d in ranked(docs)]
            R = sum(1 for v in qrels[q].values() if v >= 1)
            for points in PT_SETS.values():
                mean = sum(trec10_iprec(relevant, R, x) for x in points) / len(points)
                assert trec10_11pt_avg(relevant, R, points) == pytest.approx(mean, abs=1e-12)


@pytest.mark.xfail(
    strict=True,
    reason="deliberate: irspec's 11pt(points=...) is the mean of IPrec at the given points in any order; "
    "trec_eval 10's single pass mis-credits points given out of ascending order (docs/reference/exactness.md)",
)
def test_11pt_avg_with_unsorted_points_follows_trec_eval_10() -> None:
    """``-m 11pt_avg.0.75,0.25``: trec_eval 10 keeps the order and its pass then credits 0.75 wrongly.

    R = 4, relevant at ranks 1, 4, 5, 10 of 10: lround(0.75·4) = 3, lround(0.25·4) = 1. trec_eval:
    0.25 gets the interpolated precision at the 1st relevant (1.0); 0.75 is never matched on the way
    up, so it gets the final interpolated precision (1.0): 11pt_avg_.75,.25 = 1.0. The mean of the two
    IPrec values would be (0.6 + 1.0) / 2 = 0.8. Random rankings as well, all options.
    """
    qrels = {"q": {"d01": 1, "d04": 1, "d05": 1, "d10": 1, "d02": 0}}
    run = {"q": {f"d{i:02d}": float(20 - i) for i in range(1, 11)}}
    relevant = [d in ("d01", "d04", "d05", "d10") for d in ranked(run["q"])]
    assert trec10_11pt_avg(relevant, 4, (0.75, 0.25)) == 1.0
    got = irspec.evaluate(qrels, run, irspec.parse_many(["11pt_avg.0.75,0.25"], trec=True)).per_query()["q"]
    assert list(got.values()) == [pytest.approx(1.0, abs=TOL)]
    specs = _iprec_metrics(UNSORTED_PT_SETS, with_iprec=False)
    mismatches = []
    for level, depth, judged in [(1, None, False), (2, 40, True)]:
        mismatches += _check_against_trec10(specs, level, depth, judged)
    assert not mismatches, f"{len(mismatches)} disagreements, first ones:\n" + "\n".join(mismatches[:8])


def test_iprec_rounding_examples() -> None:
    """Hand-checked cases of trec_eval 10's lround(x·R) against the old floor(x·R + 0.9).

    R = 4, relevant at ranks 1, 4, 5 and 10 (all four retrieved), 10 documents.
    P@1 = 1, P@4 = .5, P@5 = .6, P@10 = .4.
    x = 0.1: lround(0.4) = 0 -> max over all ranks = 1.0 (old rule: floor(1.3) = 1, also 1.0).
    x = 0.3: lround(1.2) = 1 -> max P from rank 1 = 1.0 (old: floor(2.1) = 2 -> 0.6).
    x = 0.375: lround(1.5) = 2 -> max P from rank 4 = 0.6.
    x = 0.6: lround(2.4) = 2 -> 0.6 (old: floor(3.3) = 3 -> 0.6).
    x = 0.9: lround(3.6) = 4 -> P from rank 10 = 0.4.
    """
    qrels = {"q": {"d01": 1, "d04": 1, "d05": 1, "d10": 1, "d02": 0}}
    run = {"q": {f"d{i:02d}": float(20 - i) for i in range(1, 11)}}
    res = irspec.evaluate(qrels, run, "iprec_at_recall.0.1,0.3,0.375,0.6,0.9", missing_queries="skip")
    got = [res.per_query()["q"][str(m)] for m in res.metrics]
    assert got == pytest.approx([1.0, 1.0, 0.6, 0.6, 0.4], abs=TOL)


def test_randomdata_is_deterministic_and_rich() -> None:
    """The generator gives the same pair for a seed, and the corners it promises do occur."""
    assert random_case(7) == random_case(7)
    seen = {
        "negative": 0,
        "unjudged": 0,
        "ties": 0,
        "qrels_only": 0,
        "run_only": 0,
        "empty": 0,
        "long": 0,
        "no_relevant": 0,
        "all_negative": 0,
        "short": 0,
        "string_order": 0,
    }
    for seed in SEEDS:
        qrels, run = _case(seed)
        for q, labels in qrels.items():
            seen["negative"] += any(v < 0 for v in labels.values())
            seen["qrels_only"] += q not in run
            seen["no_relevant"] += bool(labels) and max(labels.values()) < 1
            seen["all_negative"] += _all_negative(labels)
        for q, docs in run.items():
            seen["run_only"] += q not in qrels
            seen["empty"] += not docs
            seen["short"] += 0 < len(docs) <= 3
            seen["long"] += len(docs) >= 100
            seen["unjudged"] += any(d not in qrels.get(q, {}) for d in docs)
            seen["ties"] += len(set(docs.values())) < len(docs)
            order = ranked(docs)
            numeric_like = [d for d in order if d[1:].isdigit() and d[0] == "d"]
            seen["string_order"] += numeric_like != sorted(
                numeric_like, key=lambda d: (-docs[d], -int(d[1:]))
            )
    assert all(seen.values()), seen
    assert randomdata.KINDS


def test_iprec_trec9_rounding_examples() -> None:
    """trec9=true: trec_eval 9's floor(x·R + 0.9), on the ranking of the test above.

    x = 0.3: floor(1.2 + 0.9) = 2 -> max P from rank 4 = 0.6 (trec_eval 10: 1.0).
    x = 0.1: floor(0.4 + 0.9) = 1 -> max P from rank 1 = 1.0.
    x = 0.6: floor(2.4 + 0.9) = 3 -> max P from rank 5 = 0.6.
    x = 0.9: floor(3.6 + 0.9) = 4 -> P@10 = 0.4.
    11pt: c = 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4 for x = 0, 0.1, ..., 1: (1 + 1 + 1 + 0.6·5 + 0.4·3) / 11.
    """
    qrels = {"q": {"d01": 1, "d04": 1, "d05": 1, "d10": 1, "d02": 0}}
    run = {"q": {f"d{i:02d}": float(20 - i) for i in range(1, 11)}}
    specs = "IPrec(trec9=true)@0.3, IPrec(trec9=true)@0.1, IPrec(trec9=true)@0.6, IPrec(trec9=true)@0.9, 11pt(trec9=true)"
    res = irspec.evaluate(qrels, run, specs, missing_queries="skip")
    got = [res.per_query()["q"][str(m)] for m in res.metrics]
    assert got == pytest.approx([0.6, 1.0, 0.6, 0.4, (3 + 0.6 * 5 + 0.4 * 3) / 11], abs=1e-12)


@pytest.mark.parametrize("level,judged", [(1, False), (2, False), (1, True), (3, True)])
def test_iprec_and_11pt_trec9_equal_pytrec_eval(level: int, judged: bool) -> None:
    """IPrec(trec9=true) and 11pt(trec9=true) give pytrec_eval's iprec_at_recall and 11pt_avg (its trec_eval
    9's rule) within 1e-12, NaN included: pytrec_eval's 0/0 where judged-only empties a ranking and c = 0.

    Empty rankings are not given (pytrec_eval misreads one that is the first it evaluates; the compat
    tests cover them), nor queries whose labels are all negative (it reads uninitialised memory there).
    """
    points = "0,0.1,0.15,0.2,0.25,0.3,0.33,0.35,0.45,0.5,0.6,0.67,0.7,0.8,0.85,0.9,1"
    pt_sets = {
        "11pt_avg": "11pt(trec9=true)",
        "11pt_avg.0.15,0.35,0.45,0.85": "11pt(points=[0.15,0.35,0.45,0.85],trec9=true)",
    }
    specs = [f"IPrec(trec9=true)@{p}" for p in points.split(",")]
    compared = nan = 0
    for seed in SEEDS:
        qrels, run = _plain_case(seed)
        run = {q: docs for q, docs in run.items() if docs}
        expected: dict[str, dict[str, float]] = {}
        for text in [f"iprec_at_recall.{points}", *pt_sets]:  # 11pt_avg's key is the same for any points
            ev = pytrec_eval.RelevanceEvaluator(
                qrels, {text}, relevance_level=level, judged_docs_only_flag=judged
            )
            for q, values in ev.evaluate(run).items():
                for key, v in values.items():
                    expected.setdefault(q, {})[key if key != "11pt_avg" else text] = v
        res = irspec.evaluate(
            qrels,
            run,
            [*specs, *pt_sets.values()],
            relevance_level=level,
            judged_only=judged,
            missing_queries="skip",
            judged_warning=None,
        )
        assert set(res.query_ids) == set(expected), f"seed {seed}"
        keys = [f"iprec_at_recall_{float(p):.2f}" for p in points.split(",")] + list(pt_sets)
        for q, row in zip(res.query_ids, res.values.tolist(), strict=True):
            for key, v in zip(keys, row, strict=True):
                want = expected[q][key]
                where = f"{key} on {q}: random_case({seed}) without empty rankings, level {level}, judged {judged}"
                assert (math.isnan(v) and math.isnan(want)) or v == pytest.approx(want, abs=1e-12), where
                compared += 1
                nan += math.isnan(want)
    assert compared > 2000 and (nan > 0) == judged
