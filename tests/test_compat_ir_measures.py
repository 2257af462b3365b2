"""``irspec.compat.ir_measures`` against ir_measures 0.4.3 itself, side by side.

Expected values come from ir_measures (its default pipeline: pytrec_eval, msmarco, compat...), run on the
same inputs; the light measure objects (used where ir_measures is not installed) are compared with
ir_measures' registry and printed forms; the drop-in without ir_measures runs in a subprocess where
``import ir_measures`` fails. ir_measures' own test suite runs in ``tests/test_ir_measures_suite.py``.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from randomdata import random_case, untied
from trecdicts import pytrec_safe

im = pytest.importorskip("ir_measures")
pd = pytest.importorskip("pandas")
from ir_measures.measures.base import _NOT_PROVIDED  # noqa: E402

import irspec  # noqa: E402
import irspec.compat.ir_measures as dropin  # noqa: E402
from irspec.compat import ir_measures_objects as light  # noqa: E402

# Forms of every measure irspec computes first (SHARED), as ir_measures' users write them.
SHARED_FORMS = [
    "P@5", "P(rel=2)@10", "P(judged_only=True)@5", "R@100", "R@5", "RR", "RR(rel=2)", "Rprec", "Rprec(rel=2)",
    "AP", "AP@10", "AP(rel=2)", "AP(judged_only=True)", "nDCG", "nDCG@10", "nDCG(judged_only=True)@10",
    "nDCG(gains={0:0,1:1,2:3,3:3,4:7})@10", "Bpref", "Bpref(rel=2)", "infAP", "NumQ", "NumRel", "NumRet",
    "NumRet(rel=1)", "NumRet(rel=2)", "SetAP", "SetF", "SetF(beta=0.5)", "SetP", "SetP(relative=True)", "SetR",
    "Success@1", "Success@10", "IPrec@0.2", "IPrec@0.5", "IPrec(rel=2)@0.0",
]  # fmt: skip
UNTIED_FORMS = ["RR@10", "RR(rel=2)@5", "Compat(p=0.8)"]
"""Measures whose ir_measures provider (msmarco, compat) breaks score ties its own way: compared on runs
without ties (irspec breaks them as trec_eval does, for every measure)."""

TOL = 1e-12


def _records(qrels: dict, run: dict) -> tuple[list, list]:
    """The same data as ir_measures' named tuples."""
    q = [im.Qrel(qid, d, lab) for qid, docs in qrels.items() for d, lab in docs.items()]
    r = [im.ScoredDoc(qid, d, s) for qid, docs in run.items() for d, s in docs.items()]
    return q, r


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL


# ---------------------------------------------------------------------------------------------------------
# Measure objects


def test_the_drop_in_measures_are_ir_measures_own_classes() -> None:
    from ir_measures import nDCG

    mine = dropin.nDCG @ 10
    assert isinstance(mine, im.Measure) and isinstance(mine, type(nDCG))
    assert mine == nDCG @ 10 and nDCG @ 10 == mine and hash(mine) == hash(nDCG @ 10)
    assert str(mine) == repr(mine) == "nDCG@10"
    assert dropin.MAP is dropin.AP and dropin.NumRelRet == im.NumRelRet
    assert pickle.loads(pickle.dumps(mine)) == mine
    # results are keyed by the measures given, found with either kind
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": 0.9}}
    found = dropin.calc_aggregate([nDCG @ 10, dropin.AP], qrels, run)
    assert found[mine] == found[nDCG @ 10] and found[im.AP] == 0.5


def _light_params(measure: object) -> dict:
    def value(v: object) -> object:
        return None if v is _NOT_PROVIDED or v is light.NOT_PROVIDED else v

    return {
        k: (info.dtype, info.required, value(info.choices), value(info.default))
        for k, info in measure.SUPPORTED_PARAMS.items()  # type: ignore[attr-defined]
    }


def test_light_registry_equals_ir_measures_registry() -> None:
    assert set(light.registry) == set(im.measures.registry)
    groups = {}
    for name, theirs in im.measures.registry.items():
        mine = light.registry[name]
        groups.setdefault(id(theirs), set()).add(id(mine))
        assert type(mine).__name__ == type(theirs).__name__, name
        assert (mine.NAME, mine.AT_PARAM, mine.DEFAULT, mine.params) == (
            theirs.NAME,
            theirs.AT_PARAM,
            theirs.DEFAULT,
            theirs.params,
        ), name
        assert _light_params(mine) == _light_params(theirs), name
        assert type(mine.aggregator()).__name__ == type(theirs.aggregator()).__name__, name
        assert str(mine) == str(theirs), name
    # aliases are one object in both
    assert all(len(ids) == 1 for ids in groups.values())


ALGEBRA = [
    "nDCG@10", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='log2')@10", "nDCG(gains={0:0,1:1,2:5})@5", "AP(rel=2)",
    "AP(rel=1)", "P(rel=2)@5", "P(judged_only=True)@5", "IPrec@0.2", "IPrec(rel=2)@0.5", "SetF(beta=0.5)",
    "SetRelP", "NumRelRet", "RBP(p=0.5,rel=2)@10", "BPM(T=2.0,max_rel=3)@10", "Compat(p=0.8,normalize=False)",
    "alpha_nDCG(alpha=0.25)@20", "α_nDCG@20", "MRR@10", "Precision@3",
]  # fmt: skip


@pytest.mark.parametrize("text", ALGEBRA)
def test_light_measures_print_and_compare_as_ir_measures(text: str) -> None:
    theirs = im.parse_measure(text)
    mine = light.parse_measure(text)
    assert type(mine).__module__ == light.__name__
    assert str(mine) == str(theirs) and repr(mine) == repr(theirs)
    assert mine == light.parse_measure(str(theirs)) and hash(mine) == hash(light.parse_measure(str(theirs)))
    name = text.split("(")[0].split("@")[0]
    assert mine(**theirs.params) == mine and str(light.registry[name](**theirs.params)) == str(theirs)
    for key in theirs.SUPPORTED_PARAMS:
        assert mine[key] == theirs[key] or (mine[key] is light.NOT_PROVIDED and theirs[key] is _NOT_PROVIDED)
    assert pickle.loads(pickle.dumps(mine)) == mine


def test_light_algebra() -> None:
    P, nDCG = light.registry["P"], light.registry["nDCG"]
    assert str(P(rel=2) @ 5) == "P(rel=2)@5" and str(nDCG(cutoff=20) @ 10) == "nDCG@10"
    assert (P @ 5) != (P @ 10) and (light.registry["Precision"] @ 5) == (P @ 5) and P @ 5 != "P@5"
    with pytest.raises(AssertionError, match="invalid param cutoff='x'"):
        (P @ "x").validate_params()
    with pytest.raises(AssertionError, match="unsupported params found"):
        P(foo=1).validate_params()


PARSE = [
    "AP", "MAP", "P@10", "nDCG@10", "P(rel=2)@10", 'nDCG(dcg="exp-log2")@10', 'nDCG(dcg="exp-log2", cutoff=20)@10',
    'nDCG(dcg="exp-log2", cutoff=20)', "nDCG(gains={0:1,1:2})", "nDCG(gains={1: 2, 0: 1})@5", "IPrec@0.2",
    "IPrec(rel=2, recall=0.4)@0.2", "IPrec(rel=2, recall=0.4)", "SetRelP", "NumRelRet",
]  # fmt: skip
PARSE_ERRORS = ["nDCG(10)", "nDCG@10; AP", "import os", "foo@10", "nDCG(dcg=log2)", "nDCG[1]", "P@x.y", ""]


@pytest.mark.parametrize("text", PARSE)
def test_parse_measure_reads_as_ir_measures(text: str) -> None:
    theirs = im.parse_measure(text)
    for parse in (light.parse_measure, dropin.parse_measure):
        mine = parse(text)
        assert str(mine) == str(theirs) and mine.params == theirs.params
    assert dropin.parse_measure(text) == theirs and isinstance(dropin.parse_measure(text), dropin._Routed)
    assert dropin.parse_measure(theirs) is theirs


@pytest.mark.parametrize("text", PARSE_ERRORS)
def test_parse_measure_refuses_as_ir_measures(text: str) -> None:
    try:
        im.parse_measure(text)
    except Exception as e:
        expected = type(e)
    else:
        pytest.fail(f"ir_measures reads {text!r}")
    with pytest.raises(expected):
        dropin.parse_measure(text)
    with pytest.raises(expected):
        light.parse_measure(text)


TREC = [
    "map", "P_5", "P_5,10", "P.5", "P", "ndcg", "ndcg_cut.10", "ndcg_cut_5,10", "ndcg_cut", "set_P",
    "set_recall", "set_F", "set_relative_P", "set_map", "set_F.1.0,0.5,2.4", "official", "success",
    "iprec_at_recall", "recall.5", "num_rel_ret", "recip_rank", "all_trec", "set",
]  # fmt: skip


@pytest.mark.parametrize("text", TREC)
def test_parse_trec_measure_reads_as_ir_measures(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    theirs = im.parse_trec_measure(text)
    said = capsys.readouterr().out
    assert [str(m) for m in dropin.parse_trec_measure(text)] == [str(m) for m in theirs]
    assert capsys.readouterr().out == said  # the measures it skips, named as ir_measures names them
    assert dropin.parse_trec_measure(text) == theirs


@pytest.mark.parametrize("text", ["gm_map", "utility", "P_x", "ndcg.5", "foo", "map_cut.a"])
def test_parse_trec_measure_refuses_as_ir_measures(text: str) -> None:
    with pytest.raises(ValueError):
        im.parse_trec_measure(text)
    with pytest.raises(ValueError):
        dropin.parse_trec_measure(text)


def test_readers_read_as_ir_measures(tmp_path: Path) -> None:
    qrels_text = "1 0 A 1\n\n1 x B 0\n2 0 A -1\n"
    run_text = "1 Q0 A 1 1.5 r\n1 Q0 B 2 0.25 r\n\n2 Q0 C 1 -3 r\n"
    (tmp_path / "q.txt").write_text(qrels_text)
    with gzip.open(tmp_path / "r.txt.gz", "wt") as f:
        f.write(run_text)
    cases = [
        (qrels_text, "read_trec_qrels"),
        (str(tmp_path / "q.txt"), "read_trec_qrels"),
        (run_text, "read_trec_run"),
        (str(tmp_path / "r.txt.gz"), "read_trec_run"),
    ]
    for source, reader in cases:
        theirs = list(getattr(im, reader)(source))
        assert list(getattr(dropin, reader)(source)) == theirs
        assert list(getattr(light, reader)(source)) == theirs
        with open(tmp_path / "q.txt") as f:
            assert list(light.read_trec_qrels(f)) == list(im.read_trec_qrels(str(tmp_path / "q.txt")))
    assert light.Qrel._fields == im.Qrel._fields and light.Qrel._field_defaults == im.Qrel._field_defaults
    assert light.ScoredDoc._fields == im.ScoredDoc._fields and light.Metric._fields == im.Metric._fields
    assert light.CalcResults._fields == im.CalcResults._fields
    with pytest.raises(ValueError):
        list(light.read_trec_run("1 Q0 A 1 1.5\n"))


# ---------------------------------------------------------------------------------------------------------
# Values, beside ir_measures' own


def _inputs(qrels: dict, run: dict, kind: str) -> tuple[object, object]:
    q, r = _records(qrels, run)
    if kind == "dicts":
        return qrels, run
    if kind == "records":
        return q, r
    if kind == "iterators":
        return iter(q), iter(r)
    return pd.DataFrame(q), pd.DataFrame(r)


@pytest.mark.parametrize("kind", ["dicts", "records", "iterators", "frames"])
@pytest.mark.parametrize("seed", range(6))
def test_values_equal_ir_measures(seed: int, kind: str) -> None:
    """With empty rankings among the dicts' (a query given with no document, which pytrec_eval scores as an
    empty ranking: NumQ 1, NumRel R; records and frames have no row to give one), a non-empty one first:
    pytrec_eval misreads an empty ranking it evaluates first (tests/trecdicts.py's pytrec_safe)."""
    qrels, run = random_case(seed)
    run = pytrec_safe(qrels, run)
    for forms, this_run in ((SHARED_FORMS, run), (UNTIED_FORMS, untied(run))):
        measures = [im.parse_measure(t) for t in forms]
        # each measure alone in ir_measures: together, its pytrec_eval provider may compute a plain nDCG
        # with another nDCG's gains (test_ir_measures_gives_plain_nDCG_another_measures_gains)
        q, r = _inputs(qrels, this_run, "dicts" if kind == "dicts" else "records")
        theirs = {m: im.calc_aggregate([m], q, r)[m] for m in measures}
        their_rows = {
            (x.query_id, str(x.measure)): x.value for m in measures for x in im.iter_calc([m], q, r)
        }
        mine = dropin.calc_aggregate(measures, *_inputs(qrels, this_run, kind))
        assert list(mine) == measures  # the measures given, in their order
        for m in measures:
            assert type(mine[m]) is float and _close(mine[m], theirs[m]), (str(m), mine[m], theirs[m])
        my_rows = list(dropin.iter_calc(measures, *_inputs(qrels, this_run, kind)))
        assert {(x.query_id, str(x.measure)) for x in my_rows} == set(their_rows)
        assert all(_close(x.value, their_rows[x.query_id, str(x.measure)]) for x in my_rows)
        assert all(isinstance(x, im.Metric) for x in my_rows)


def test_the_random_cases_hold_judged_empty_rankings() -> None:
    """test_values_equal_ir_measures compares empty rankings: its cases have judged ones."""
    cases = [random_case(seed) for seed in range(6)]
    assert sum(1 for qrels, run in cases for q, docs in run.items() if not docs and q in qrels) >= 2


def test_an_empty_ranking_is_scored_not_defaulted() -> None:
    """A query given with no document is scored as an empty ranking, as ir_measures' pytrec_eval scores it
    (NumQ 1, NumRel R, IPrec@0.0 0/0), not given the DEFAULT of a query the run lacks (q3 here)."""
    qrels = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"d": 1}, "q3": {"e": 1}}
    run = {"q1": {"a": 1.0, "c": 0.5}, "q2": {}}
    measures = [im.NumQ, im.NumRel, im.IPrec @ 0.0, im.AP, im.NumRet]
    theirs = im.calc_aggregate(measures, qrels, run)
    mine = dropin.calc_aggregate(measures, qrels, run)
    assert all(_close(mine[m], theirs[m]) for m in measures), (mine, theirs)
    assert mine[im.NumQ] == 2.0 and mine[im.NumRel] == 3.0 and math.isnan(mine[im.IPrec @ 0.0])  # by hand
    rows = {(x.query_id, str(x.measure)): x.value for x in dropin.iter_calc(measures, qrels, run)}
    their_rows = {(x.query_id, str(x.measure)): x.value for x in im.iter_calc(measures, qrels, run)}
    assert rows.keys() == their_rows.keys() and all(_close(rows[k], their_rows[k]) for k in rows)
    assert rows["q2", "NumQ"] == 1.0 and math.isnan(rows["q2", "IPrec@0.0"]) and rows["q3", "NumQ"] == 0.0


def test_nDCG_exp_log2_equals_gdeval_to_its_printed_digits() -> None:
    q, r = _graded(7)
    measure = im.nDCG(dcg="exp-log2") @ 10
    theirs = {x.query_id: x.value for x in im.gdeval.iter_calc([measure], q, r)}
    mine = {x.query_id: x.value for x in dropin.iter_calc([measure], q, r)}
    assert set(mine) == set(theirs) and all(abs(mine[k] - theirs[k]) < 1e-5 for k in theirs)


@pytest.mark.parametrize("seed", range(4))
def test_ERR_equals_gdeval_to_its_printed_digits(seed: int) -> None:
    """ir_measures computes ERR@k with gdeval (the drop-in sends it there); irspec's own, the
    irspec-usermodel plugin's, gives gdeval's values to the five decimals gdeval prints, negative labels
    (0 in both) included."""
    pytest.importorskip(
        "irspec_usermodel", reason="irspec-usermodel is not installed (plugins/, README's test command)"
    )
    from irspec.testing import registered_plugin

    q, r = _graded(seed)
    assert any(x.relevance < 0 for x in q) and any(x.relevance == 4 for x in q)
    for k in (5, 20):
        theirs = {x.query_id: x.value for x in im.gdeval.iter_calc([im.ERR @ k], q, r)}
        with registered_plugin(load_entry_points=True):
            mine = irspec.evaluate(q, r, f"ERR@{k}").per_query()
        assert set(mine) == set(theirs) and all(abs(mine[x][f"ERR@{k}"] - theirs[x]) < 1e-5 for x in theirs)


def test_iter_calc_order_is_ir_measures() -> None:
    """Each query's measures together, the run's order of queries; then the judged queries the run lacks
    at the measure's DEFAULT, sorted by measure then query, as ir_measures' Evaluator yields them."""
    qrels = {"b": {"x": 1}, "a": {"x": 1, "y": 0}, "c": {"z": 2}, "0": {"x": 0}}
    run = {"c": {"z": 1.0}, "a": {"y": 2.0, "x": 1.0}, "zz": {"x": 1.0}}
    measures = [dropin.P @ 1, dropin.NumQ, dropin.AP]
    got = [(m.query_id, str(m.measure), m.value) for m in dropin.iter_calc(measures, qrels, run)]
    assert got == [
        ("c", "P@1", 1.0), ("c", "NumQ", 1.0), ("c", "AP", 1.0),
        ("a", "P@1", 0.0), ("a", "NumQ", 1.0), ("a", "AP", 0.5),
        ("0", "AP", 0.0), ("b", "AP", 0.0), ("0", "NumQ", 0.0), ("b", "NumQ", 0.0), ("0", "P@1", 0.0), ("b", "P@1", 0.0),
    ]  # fmt: skip
    theirs = {(m.query_id, str(m.measure), m.value) for m in im.iter_calc(measures, qrels, run)}
    assert set(got) == theirs
    agg = dropin.calc_aggregate(measures, qrels, run)
    assert (
        agg
        == im.calc_aggregate(measures, qrels, run)
        == {dropin.P @ 1: 0.25, dropin.NumQ: 2.0, dropin.AP: 0.375}
    )
    aggregated, per_query = dropin.calc(measures, qrels, run)
    assert aggregated == agg and [(m.query_id, str(m.measure), m.value) for m in per_query] == got


def test_an_evaluator_is_reused_across_runs() -> None:
    qrels, run = random_case(1, empty_rankings=False)
    measures = [im.nDCG @ 10, im.AP, im.R @ 100]
    ev = dropin.evaluator(measures, qrels)
    assert isinstance(ev, dropin.IrspecEvaluator)
    theirs = im.evaluator(measures, qrels)
    for this_run in (run, untied(run), {q: dict(list(d.items())[:3]) for q, d in run.items()}):
        mine, ref = ev.calc_aggregate(this_run), theirs.calc_aggregate(this_run)
        assert all(_close(mine[m], ref[m]) for m in measures)
    assert (im.nDCG @ 10).calc_aggregate(qrels, run) == (dropin.nDCG @ 10).calc_aggregate(qrels, run)


def _graded(seed: int) -> tuple[list, list]:
    """Labels -1 to 4 and distinct scores, numeric query ids: gdeval stops on a label above 4 and on a query
    id that is not a number (a negative label it counts as 0)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    q = [
        im.Qrel(str(i), f"d{j}", int(rng.integers(-1, 5)))
        for i in range(20)
        for j in rng.choice(50, 25, replace=False)
    ]
    r = [
        im.ScoredDoc(str(i), f"d{j}", float(rng.random()))
        for i in range(20)
        for j in rng.choice(50, 30, replace=False)
    ]
    return q, r


def test_ir_measures_gives_plain_nDCG_another_measures_gains() -> None:
    """ir_measures' pytrec_eval provider puts a plain nDCG into whichever pytrec_eval call it makes first,
    and one with other gains may be that call: nDCG's value then depends on the measures beside it and
    their order. The drop-in gives nDCG its own value whatever is beside it."""
    qrels, run = {"q": {"a": 1, "b": 2, "c": 0}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    gains = im.nDCG(gains={0: 0, 1: 1, 2: 10}) @ 10
    alone = im.calc_aggregate([im.nDCG], qrels, run)[im.nDCG]
    assert im.pytrec_eval.evaluator([gains, im.nDCG], qrels).calc_aggregate(run)[im.nDCG] != alone
    assert dropin.calc_aggregate([gains, im.nDCG], qrels, run)[im.nDCG] == alone
    assert dropin.calc_aggregate([im.nDCG, gains], qrels, run)[im.nDCG] == alone


def test_measures_irspec_defines_otherwise_go_to_ir_measures_providers() -> None:
    q, r = _graded(2)
    for m in (im.Judged @ 10, im.ERR @ 10):
        assert not dropin.PROVIDER.supports(m)
        assert dropin.calc_aggregate([m, im.P @ 5], q, r)[m] == im.calc_aggregate([m], q, r)[m]


def _integer_ids(qrels: dict, run: dict) -> tuple[dict, dict, dict]:
    """The case with each query id made an integer (as pd.read_csv reads numeric topics), and the map
    from the string ids to them."""
    number = {q: 7 * i + 3 for i, q in enumerate(sorted(set(qrels) | set(run)))}
    return (
        {number[q]: docs for q, docs in qrels.items()},
        {number[q]: docs for q, docs in run.items()},
        number,
    )


@pytest.mark.parametrize("kind", ["dicts", "records", "iterators", "frames"])
def test_integer_query_ids_are_read_as_their_decimal_text(kind: str) -> None:
    """ir_measures' pytrec_eval provider refuses integer query ids ("Expected string as key."); the drop-in
    reads them as irspec does, as their decimal text, and gives them back as the qrels give them. The
    values are ir_measures' on the same data with string ids."""
    qrels, run = random_case(3, empty_rankings=False)
    int_qrels, int_run, number = _integer_ids(qrels, run)
    measures = [im.AP, im.nDCG @ 10, im.P(rel=2) @ 5, im.NumQ, im.NumRel, im.R @ 100]
    q, r = _records(qrels, run)
    theirs = {m: im.calc_aggregate([m], q, r)[m] for m in measures}
    their_rows = {
        (number[x.query_id], str(x.measure)): x.value for m in measures for x in im.iter_calc([m], q, r)
    }
    with pytest.raises(TypeError, match="Expected string as key"):
        im.calc_aggregate([im.AP], *_inputs(int_qrels, int_run, "frames"))
    mine = dropin.calc_aggregate(measures, *_inputs(int_qrels, int_run, kind))
    assert all(_close(mine[m], theirs[m]) for m in measures), (mine, theirs)
    my_rows = list(dropin.iter_calc(measures, *_inputs(int_qrels, int_run, kind)))
    assert all(type(x.query_id) is int for x in my_rows)
    assert {(x.query_id, str(x.measure)) for x in my_rows} == set(their_rows)
    assert all(_close(x.value, their_rows[x.query_id, str(x.measure)]) for x in my_rows)


def test_integer_query_ids_beside_ir_measures_own_providers(registered: None) -> None:
    """ir_measures' Python providers (judged here) give integer ids back as they are: the drop-in's ids are
    the same objects' kind, so that the fallback pipeline's records of a query are one query's (and a
    judged query the run lacks is given its DEFAULT once), in ir_measures' order (by number)."""
    qrels = pd.DataFrame(
        {"query_id": [10, 10, 9, 1], "doc_id": ["a", "b", "c", "d"], "relevance": [1, 0, 1, 1]}
    )
    run = pd.DataFrame({"query_id": [10, 10], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    measures = [im.AP, im.Judged @ 10]
    judged = [(x.query_id, x.value) for x in im.judged.iter_calc([im.Judged @ 10], qrels, run)]
    assert judged == [(10, 1.0), (1, 0.0), (9, 0.0)]  # missing queries sorted by number
    ap = [(10, "AP", 0.5), (1, "AP", 0.0), (9, "AP", 0.0)]  # hand arithmetic: a at rank 2 of 2
    # the drop-in's pipeline, and ir_measures' own with irspec first
    for calc in (dropin.iter_calc, im.iter_calc):
        got = [(x.query_id, str(x.measure), x.value) for x in calc(measures, qrels, run)]
        assert sorted(got, key=str) == sorted(ap + [(q, "Judged@10", v) for q, v in judged], key=str)
        assert [x for x in got if x[1] == "AP"] == ap
    assert im.calc_aggregate([im.AP, im.NumQ], qrels, run) == {im.AP: 0.5 / 3, im.NumQ: 1.0}


def test_a_query_id_the_drop_in_cannot_match_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the run's ids not matched with irspec's (here, integers compared with their text unconverted),
    the drop-in says so, rather than give every query its DEFAULT."""
    monkeypatch.setattr(dropin, "_id_text", lambda q: q)
    with pytest.raises(irspec.IrspecError, match=r"query ids \['1'\] were evaluated but not found"):
        dropin.calc_aggregate([im.AP], {"1": {"a": 1}}, {1: {"a": 1.0}})


def test_empty_inputs_as_ir_measures() -> None:
    qrels = {"0": {"D0": 1, "D1": 0}, "1": {"D0": 1}}
    run = {"0": {"D0": 0.5, "D1": 0.7}}
    P5 = dropin.P @ 5
    for q, r in (
        (qrels, []),
        ([], run),
        ([], []),
        (pd.DataFrame(columns=["query_id", "doc_id", "relevance"]), run),
    ):
        theirs, mine = im.calc_aggregate([P5], q, r), dropin.calc_aggregate([P5], q, r)
        assert _close(mine[P5], theirs[P5])
        assert set(dropin.iter_calc([P5], q, r)) == set(im.iter_calc([P5], q, r))
    with pytest.raises(ValueError, match=r"DataFrame missing columns: \['doc_id'\]"):
        dropin.calc_aggregate([P5], pd.DataFrame({"query_id": ["0"], "docno": ["A"], "relevance": [1]}), run)
    with pytest.raises(ValueError, match="unknown run format"):
        dropin.calc_aggregate([P5], qrels, object())


def test_a_pair_given_twice_is_refused_where_ir_measures_keeps_the_last_row() -> None:
    """A departure (docs/coming-from/ir_measures.md): irspec refuses a document twice in a query, here
    diversity qrels (a row per subtopic, an iteration column); ir_measures keeps the last row's label."""
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "1"],
            "iteration": ["1", "2", "1"],
            "doc_id": ["a", "a", "b"],
            "relevance": [1, 0, 1],
        }
    )
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    measures = [im.AP, im.P @ 1]
    # by hand, with a's last label (0): b relevant at rank 2, R = 1
    assert im.calc_aggregate(measures, qrels, run) == {im.AP: 0.5, im.P @ 1: 0.0}
    with pytest.raises(irspec.InputError, match="query '1': duplicate docno 'a'"):
        dropin.calc_aggregate(measures, qrels, run)
    # the documented way to ir_measures' reading
    last = qrels.drop_duplicates(["query_id", "doc_id"], keep="last")
    assert dropin.calc_aggregate(measures, last, run) == im.calc_aggregate(measures, qrels, run)
    # a run's document twice: ir_measures keeps its last score (0.5, below b: b relevant at rank 1)
    twice = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 0.5]})
    assert im.calc_aggregate(measures, last, twice) == {im.AP: 1.0, im.P @ 1: 1.0}
    with pytest.raises(irspec.InputError, match="query '1': duplicate docno 'a'"):
        dropin.calc_aggregate(measures, last, twice)


def test_boolean_labels_are_refused_where_ir_measures_reads_true_as_1() -> None:
    """A departure (docs/coming-from/ir_measures.md): a column or mapping of booleans given for labels is
    refused, as irspec refuses it (a mask given for labels, most likely); ir_measures computes with True
    as 1 and False as 0."""
    run = {"1": {"a": 2.0, "b": 1.0}}
    as_ints = {"1": {"a": 0, "b": 1}}
    theirs = im.calc_aggregate([im.AP], as_ints, run)
    assert theirs == {im.AP: 0.5}  # by hand: b relevant at rank 2
    as_bools = {"1": {"a": False, "b": True}}
    frame = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [False, True]})
    records = [im.Qrel("1", "a", False), im.Qrel("1", "b", True)]
    for qrels, message in (
        (as_bools, "label must be an integer, got False for docno 'a'"),
        (frame, "column 'relevance' must hold integers, not Boolean"),
        (records, "column 'relevance' must hold integers, not Boolean"),
    ):
        assert im.calc_aggregate([im.AP], qrels, run) == theirs
        with pytest.raises(irspec.InputError, match=message):
            dropin.calc_aggregate([im.AP], qrels, run)
    assert dropin.calc_aggregate([im.AP], frame.astype({"relevance": int}), run) == theirs


# ---------------------------------------------------------------------------------------------------------
# irspec inside ir_measures


@pytest.fixture
def registered():
    dropin.register()
    yield
    dropin.unregister()


def _pytrec_disagrees() -> tuple[dict, dict]:
    """Scores that differ beyond single precision: pytrec_eval (C floats) ties them and breaks the tie by
    docno descending, putting the non-relevant 'b' first; irspec ranks the relevant 'a' first."""
    return {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0000000001, "b": 1.0}}


def test_register_puts_irspec_first_in_ir_measures_pipeline(registered: None) -> None:
    qrels, run = _pytrec_disagrees()
    assert (
        im.DefaultPipeline.providers[0] is dropin.PROVIDER
        and im.providers.registry["irspec"] is dropin.PROVIDER
    )
    dropin.register()
    assert im.DefaultPipeline.providers.count(dropin.PROVIDER) == 1
    assert isinstance(im.evaluator([im.RR], qrels), dropin.IrspecEvaluator)
    assert im.calc_aggregate([im.RR], qrels, run) == {im.RR: 1.0}  # irspec's; pytrec_eval's is 0.5
    assert im.pytrec_eval.calc_aggregate([im.RR], qrels, run) == {im.RR: 0.5}
    assert im.calc_aggregate([im.Judged @ 10], qrels, run) == {
        im.Judged @ 10: 1.0
    }  # ir_measures' judged provider
    dropin.unregister()
    assert dropin.PROVIDER not in im.DefaultPipeline.providers and "irspec" not in im.providers.registry
    assert im.calc_aggregate([im.RR], qrels, run) == {im.RR: 0.5}


def test_the_drop_in_computes_through_irspec() -> None:
    qrels, run = _pytrec_disagrees()
    assert dropin.calc_aggregate([dropin.RR], qrels, run) == {dropin.RR: 1.0}
    assert im.calc_aggregate([im.RR], qrels, run) == {im.RR: 0.5}


def test_pyterrier_experiment_runs_on_irspec(registered: None) -> None:
    """PyTerrier's pt.Experiment (no Java: pure-Python transformers over DataFrames) calls
    ir_measures.iter_calc, which the registration routes to irspec."""
    pt = pytest.importorskip("pyterrier")
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["a", "b"]})
    qrels = pd.DataFrame({"qid": ["1", "1", "2", "2"], "docno": ["a", "b", "c", "d"], "label": [1, 0, 2, 0]})
    res = pd.DataFrame(
        {
            "qid": ["1", "1", "2", "2", "2"],
            "docno": ["a", "b", "c", "d", "e"],
            "score": [1.0000000001, 1.0, 3.0, 2.0, 1.0],
        }
    )
    system = pt.Transformer.from_df(res)
    found = pt.Experiment([system], topics, qrels, eval_metrics=[im.RR, im.nDCG @ 10, "P_1"], names=["s"])
    row = found.iloc[0]
    assert row["RR"] == 1.0 and row["P_1"] == 1.0  # irspec's; pytrec_eval's would be 0.75 and 0.5
    assert (
        row["nDCG@10"]
        == dropin.calc_aggregate(
            [im.nDCG @ 10],
            qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"}),
            res.rename(columns={"qid": "query_id", "docno": "doc_id"}),
        )[im.nDCG @ 10]
    )
    per_query = pt.Experiment([system], topics, qrels, eval_metrics=[im.RR], perquery=True)
    assert dict(zip(per_query["qid"], per_query["value"], strict=True)) == {"1": 1.0, "2": 1.0}
    dropin.unregister()
    found = pt.Experiment([system], topics, qrels, eval_metrics=[im.RR], names=["s"])
    assert found.iloc[0]["RR"] == 0.75  # ir_measures' own pipeline again (pytrec_eval's float32 tie)


# ---------------------------------------------------------------------------------------------------------
# Without ir_measures


def test_the_drop_in_without_ir_measures() -> None:
    """With ``import ir_measures`` failing, the drop-in stands on its light objects and irspec alone; its
    values are ir_measures' (computed here, in this process, by ir_measures)."""
    qrels, run = random_case(4, empty_rankings=False)
    forms = ["nDCG@10", "AP", "P(rel=2)@5", "R@100", "NumRet(rel=1)", "IPrec@0.3", "SetRelP"]
    theirs = im.calc_aggregate([im.parse_measure(t) for t in forms], qrels, run)
    script = textwrap.dedent(
        """
        import json, sys
        sys.modules["ir_measures"] = None
        import irspec.compat.ir_measures as ir_measures
        from irspec.compat.ir_measures import nDCG, Judged
        from irspec.compat import ir_measures_objects
        qrels, run, forms = json.loads(sys.stdin.read())
        measures = [ir_measures.parse_measure(t) for t in forms]
        assert all(type(m).__module__ == ir_measures_objects.__name__ for m in measures)
        found = ir_measures.calc_aggregate(measures, qrels, run)
        rows = list(ir_measures.iter_calc([nDCG @ 10], qrels, run))
        assert all(type(r) is ir_measures.Metric for r in rows)
        judged = (Judged @ 10).calc_aggregate(qrels, run)
        try:
            ir_measures.gdeval
        except AttributeError as e:
            missing = str(e)
        print(json.dumps({"values": {str(m): v for m, v in found.items()}, "judged": judged, "missing": missing,
                          "numpy": "numpy" in sys.modules}))
        """
    )
    env_script = "import sys; sys.modules['ir_measures'] = None; import irspec.compat.ir_measures; print('numpy' in sys.modules)"
    light_import = subprocess.run(
        [sys.executable, "-c", env_script], capture_output=True, text=True, check=True
    )
    assert light_import.stdout.strip() == "False"  # the drop-in imports lightly
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps([qrels, run, forms]),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for m, v in theirs.items():
        assert _close(out["values"][str(m)], v), (str(m), out["values"][str(m)], v)
    assert 0.0 <= out["judged"] <= 1.0  # irspec's Judged (ir_measures' judged provider differs on purpose)
    assert "need ir_measures installed" in out["missing"]


def test_shared_measures_are_bound_once() -> None:
    """Every SHARED name binds in irspec, alone and with each parameter ir_measures declares."""
    for name in dropin.SHARED:
        measure = im.measures.registry[name]
        if (
            measure.SUPPORTED_PARAMS.get(measure.AT_PARAM, None) is not None
            and measure.SUPPORTED_PARAMS[measure.AT_PARAM].required
        ):
            measure = measure @ (0.5 if name == "IPrec" else 10)
        assert dropin.PROVIDER.supports(measure), name
    assert len(list(itertools.chain(dropin.SHARED))) == 18
