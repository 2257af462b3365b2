"""``irspec.compat.pytrec_eval`` against pytrec_eval itself: the same names, keys, rules and values.

Every expected value comes from pytrec_eval (pytrec-eval-terrier, its trec_eval 9), run on the same
input, or from arithmetic written out in the test. The random data is ``tests/randomdata.py``'s: ties,
graded and negative labels, unjudged documents, empty rankings, queries only in the qrels or only in
the run. Two inputs on which pytrec_eval has no defined answer are given to it differently, and checked
on their own below: an empty ranking that is the first query it evaluates (it reads stale memory or
crashes; the run is reordered so that a non-empty ranking comes first), and a query whose labels are all
negative (uninitialised memory; ``random_case`` draws none unless asked).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import math
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from randomdata import random_case
from trecdicts import differences, pytrec_safe

import irspec
import irspec.compat.pytrec_eval as compat
from irspec.errors import IrspecError

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-12
SEEDS = range(16)

# Measure sets, each given to one evaluator on both sides. Every measure pytrec_eval has is in
# all_trec; the others give parameters (cutoffs where trec_eval 9 and 10 round differently, both
# spellings, nicknames). A key both sets would give (11pt_avg, set_F, utility) needs its own evaluator.
MEASURE_SETS = {
    "all_trec": {"all_trec"},
    "cutoffs": {
        "P.1,2,3,250", "P_7", "recall.1,2,50", "ndcg_cut.1,4", "map_cut.3,7", "relative_P.2,3", "success.2,3",
        "iprec_at_recall.0.15,0.25,0.33,0.45,0.67", "Rprec_mult.0.3,0.5,1.5,3",
    },
    "11pt_avg": {"11pt_avg.0.15,0.35,0.45,0.85"},
    "set_F": {"set_F.0.25"},
    "utility": {"utility.1,2,3,4"},
    "official": {"official", "ndcg_cut_10"},
}  # fmt: skip
OPTIONS = [(level, judged) for level in (1, 2, 3) for judged in (False, True)]


@functools.cache
def _case(seed: int) -> tuple[dict, dict]:
    """``random_case(seed)`` with its run made ``pytrec_safe``, drawn once for the module: the tests below
    run once a reader (conftest's ``_reader``) and draw the same seeds, and neither evaluator changes the
    dicts it is given (``test_qrels_are_read_once_at_construction``)."""
    qrels, run = random_case(seed)
    return qrels, pytrec_safe(qrels, run)


@functools.cache
def _pytrec_eval(seed: int, measures: frozenset[str], level: int, judged: bool = False) -> dict:
    """pytrec_eval's answer on ``_case(seed)``, computed once: it does not depend on the reader irspec is
    run with (conftest's ``_reader``), so the second reader's test compares with the same answer."""
    qrels, run = _case(seed)
    return pytrec_eval.RelevanceEvaluator(qrels, set(measures), level, judged).evaluate(run)


@pytest.mark.parametrize("level,judged", OPTIONS, ids=[f"l{lv}-{'J' if j else 'noJ'}" for lv, j in OPTIONS])
@pytest.mark.parametrize("name", list(MEASURE_SETS))
def test_values_keys_and_queries_equal_pytrec_eval(name: str, level: int, judged: bool) -> None:
    measures = MEASURE_SETS[name]
    nan = empty = 0
    for seed in SEEDS:
        qrels, run = _case(seed)
        expected = _pytrec_eval(seed, frozenset(measures), level, judged)
        got = compat.RelevanceEvaluator(qrels, measures, level, judged).evaluate(run)
        problems = differences(got, expected)
        assert not problems, f"random_case({seed}): " + "; ".join(problems[:5])
        nan += sum(math.isnan(v) for values in expected.values() for v in values.values())
        empty += sum(1 for q in expected if not run[q])
    assert empty > 0  # the corners were reached
    assert nan > 0 or name not in ("all_trec", "official")  # iprec_at_recall_0.00 of an empty ranking


PURE_SETS = {
    "beir": {f"{m}.1,3,5,10,100,1000" for m in ("map_cut", "ndcg_cut", "recall", "P")},
    "defaults": {"P", "recall", "map_cut", "ndcg_cut", "map", "ndcg", "recip_rank"},
}


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("name", list(PURE_SETS))
def test_the_pure_python_path_equals_pytrec_eval(
    name: str, level: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The measures a fresh process computes without numpy (irspec.evaluation.pure), there: in this
    process numpy is loaded, and the drop-in would use the engine, which the test above compares."""
    monkeypatch.setattr(compat, "_pure_first", lambda: True)
    for seed in SEEDS:
        qrels, run = _case(seed)
        expected = _pytrec_eval(seed, frozenset(PURE_SETS[name]), level)
        evaluator = compat.RelevanceEvaluator(qrels, PURE_SETS[name], level)
        problems = differences(evaluator.evaluate(run), expected)
        assert not problems, f"random_case({seed}): " + "; ".join(problems[:5])
        assert not evaluator._engine_loaded


def test_an_empty_ranking_first_scores_as_anywhere_else() -> None:
    """An empty ranking that is the first query pytrec_eval evaluates gets, from irspec, the values
    pytrec_eval gives it elsewhere in the run (pytrec_eval itself misreads it there)."""
    checked = 0
    for seed in SEEDS:
        qrels, run = random_case(seed)
        empty = [q for q, docs in run.items() if not docs and qrels.get(q)]
        if not empty or len(run) < 2:
            continue
        first = {empty[0]: {}, **{q: d for q, d in run.items() if q != empty[0]}}
        last = {**{q: d for q, d in run.items() if q != empty[0]}, empty[0]: {}}
        expected = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(pytrec_safe(qrels, last))
        got = compat.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(first)
        assert list(got) == [q for q in first if qrels.get(q)]
        assert not differences({empty[0]: got[empty[0]]}, {empty[0]: expected[empty[0]]})
        checked += 1
    assert checked >= 3


def test_iprec_at_recall_is_trec_eval_9s() -> None:
    """iprec_at_recall and 11pt_avg are pytrec_eval's (trec_eval 9's c = floor(x·R + 0.9)), not
    irspec.evaluate's (trec_eval 10's lround(x·R)).

    R = 3, relevant at ranks 1 and 4 of 4 (the third is not retrieved); P@1 = 1, P@4 = 0.5.
    x = 0.4: trec_eval 9 c = floor(1.2 + 0.9) = 2 -> P@4 = 0.5; trec_eval 10 c = lround(1.2) = 1 -> 1.0.
    11pt_avg: c = 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3 -> (4 · 1 + 4 · 0.5 + 3 · 0) / 11; at x = 0.7,
    0.7·3 + 0.9 is 2.9999999999999996 in double, so c = 2 (trec_eval 10: c = 0, 0, 1, 1, 1, 2, 2, 2, 2,
    3, 3 -> (5 · 1 + 4 · 0.5) / 11).
    """
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "n": 0}}
    run = {"q": {"a": 4.0, "n": 3.0, "z": 2.0, "b": 1.0}}
    measures = {"iprec_at_recall.0.4", "11pt_avg"}
    got = compat.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert got == pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert got == {"q": {"iprec_at_recall_0.40": 0.5, "11pt_avg": pytest.approx(6 / 11, abs=TOL)}}
    trec10 = irspec.evaluate(qrels, run, "iprec_at_recall.0.4, 11pt_avg").per_query()["q"]
    assert trec10 == {"IPrec@0.4": 1.0, "11pt": pytest.approx(7 / 11, abs=TOL)}


def test_the_rules_of_queries_and_measures_are_pytrec_evals() -> None:
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}, "q3": {}, "q4": {"d": 1}}
    run = {"q9": {"a": 1.0}, "q2": {"c": 1.0, "x": 3}, "q1": {"b": 2.0, "a": 1.0}, "q3": {"a": 1.0}, "q4": {}}
    cases = [
        {"map", "P.5"},
        set(),  # every judged query, no keys
        ["runid", "relstring", "num_q"],  # a list, and measures that are text in trec_eval
        {"P", "P.5"},  # a bare name beside the same name with parameters: the parameters alone
        {"P_5", "P.10", "ndcg_cut_3", "ndcg_cut.3"},  # both spellings, merged
        {"map.5", "Rprec_3", "P_5x"},  # parameters a measure does not take are ignored; text after them too
        {"set", "official"},
        {"gm_map", "gm_bpref"},  # trec_eval's per-query log terms
    ]
    for measures in cases:
        for level in (1, 2):
            expected = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
            got = compat.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
            assert not differences(got, expected), (measures, level, differences(got, expected))
    assert list(got) == ["q2", "q1", "q4"]  # the run's order, its judged queries only
    for empty_run in ({}, None):
        assert compat.RelevanceEvaluator(qrels, {"map"}).evaluate(empty_run) == {}
        assert pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(empty_run) == {}
    assert compat.RelevanceEvaluator({}, {"map"}).evaluate(run) == {}
    assert pytrec_eval.RelevanceEvaluator({}, {"map"}).evaluate(run) == {}


@pytest.mark.parametrize(
    "measures,error",
    [({"nDCG@10"}, ValueError), ({"ndcg_cut_10", "bogus"}, ValueError), ({"prefs"}, ValueError),
     ({"qrels_jg"}, ValueError), ({"P.abc"}, ValueError), ({5}, TypeError)],
)  # fmt: skip
def test_unknown_measures_fail_at_construction_as_in_pytrec_eval(measures: set, error: type) -> None:
    qrels = {"q": {"a": 1}}
    with pytest.raises(error) as theirs:
        pytrec_eval.RelevanceEvaluator(qrels, measures)
    with pytest.raises(error) as ours:
        compat.RelevanceEvaluator(qrels, measures)
    if error is ValueError:  # the first measure it meets is named: with several, either may be
        assert str(ours.value).startswith("unsupported measure ")
        assert (
            str(ours.value) == str(theirs.value)
            or len(measures) > 1
            or measures & set(compat.supported_nicknames)
        )


def test_a_relevance_level_below_1_is_a_type_error() -> None:
    """0 is refused by both. pytrec_eval reads a negative level as 2**32 + level, so -1 becomes
    4294967295 there (nothing relevant), and crashes on bpref (tests/test_hostile_api.py runs it): the
    drop-in refuses it as it refuses 0, saying so. A level beyond a C int pytrec_eval refuses too."""
    with pytest.raises(TypeError, match="positive"):
        pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"map"}, relevance_level=0)
    for level in (0, -1):
        with pytest.raises(TypeError, match="positive"):
            compat.RelevanceEvaluator({"q": {"a": 1}}, {"map"}, relevance_level=level)
    with pytest.raises(TypeError, match="4294967295, at which nothing is relevant"):
        compat.RelevanceEvaluator({"q": {"a": 1}}, {"map"}, relevance_level=-1)
    for evaluator in (pytrec_eval.RelevanceEvaluator, compat.RelevanceEvaluator):
        with pytest.raises(TypeError):
            evaluator({"q": {"a": 1}}, {"map"}, relevance_level=2**31)
    with pytest.raises(TypeError):
        compat.RelevanceEvaluator({"q": {"a": 1}}, {"map"}, relevance_level=1.5)
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"map"}, relevance_level=1.5)


@pytest.mark.parametrize(
    "measure", ["P.0", "recall.0.5", "P.5,05", "ndcg.2", "G.1", "iprec_at_recall.0.1,0.10"]
)
def test_parameters_pytrec_eval_cannot_use_are_a_value_error(measure: str) -> None:
    """trec_eval 9 refuses these when pytrec_eval evaluates, and pytrec_eval then aborts the process: a
    ValueError here, at construction. pytrec_eval is not run on them: it would end the test run."""
    with pytest.raises(ValueError, match=measure.split(".")[0]):
        compat.RelevanceEvaluator({"q": {"a": 1}}, {measure})


BEYOND_RANGE = ["set_F.0", "set_F.0,3", "Rprec_mult.0", "Rprec_mult.0,0.2,1.5", "11pt_avg.2", "11pt_avg.0,0.5,1.05,3",
                "iprec_at_recall.1.5", "iprec_at_recall.0.2,1.01,1.05,1.1,1.5,2,1000", "utility.1", "utility.1,2,3,4,5"]  # fmt: skip


@pytest.mark.parametrize("measure", BEYOND_RANGE)
def test_parameters_irspec_refuses_but_trec_eval_9_computes_are_pytrec_evals(measure: str) -> None:
    """Parameters irspec's own specs refuse as meaningless, which trec_eval 9 computes: F with beta² = 0
    (P), Rprec at mult 0 (rank 0: 0), recall levels above 1 (0, or the value at recall 1 for a small R
    when x < 1.1), utility without its 4 coefficients (0.0). The drop-in gives pytrec_eval's values."""
    for seed in SEEDS:
        qrels, run = _case(seed)
        for level in (1, 2):
            expected = _pytrec_eval(seed, frozenset({measure}), level)
            got = compat.RelevanceEvaluator(qrels, {measure}, level).evaluate(run)
            problems = differences(got, expected)
            assert not problems, f"random_case({seed}), level {level}: " + "; ".join(problems[:5])
    with pytest.raises(IrspecError):  # irspec's own spelling of the same stays refused
        irspec.parse_many(measure, trec=True)


def test_a_query_whose_labels_are_all_negative_has_r_0() -> None:
    """pytrec_eval reads uninitialised memory there; irspec gives the values of a query with R = 0
    (docs/reference/exactness.md): nothing relevant, so 0 for every measure but the counts and the log terms.
    The ranking: a (label -1, pooled but unjudged), z (absent from the qrels), b (label -2)."""
    qrels = {"q": {"a": -1, "b": -2}}
    run = {"q": {"a": 3.0, "z": 2.0, "b": 1.0}}
    got = compat.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)["q"]
    counts = {"num_q": 1.0, "num_ret": 3.0, "num_rel": 0.0, "num_rel_ret": 0.0, "num_nonrel_judged_ret": 0.0}
    logs = {"gm_map": math.log(1e-5), "gm_bpref": math.log(1e-5)}
    # utility's default coefficients (1, -1, 0, 0): 0 relevant retrieved, 3 others: -3
    assert got == {k: counts.get(k, logs.get(k, -3.0 if k == "utility" else 0.0)) for k in got}
    assert len(got) == len(pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"all_trec"}).evaluate(run)["q"])


def test_scores_are_doubles_not_pytrec_evals_floats() -> None:
    """pytrec_eval reads scores into a C float: 1.0 and 1.0000000001 tie there (and docno descending
    puts b first); irspec ranks by the double (a first), as trec_eval 10 does."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0000000001, "b": 1.0}}
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run) == {"q": {"recip_rank": 0.5}}
    assert compat.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run) == {"q": {"recip_rank": 1.0}}


def test_nothing_is_warned_of() -> None:
    """irspec warns of queries the run lacks or has beyond the qrels, of sparse judgments (Judged@10) and
    of a relevance level at which nothing is relevant; pytrec_eval warns of nothing, nor does its drop-in."""
    qrels, run = random_case(3)
    sparse = {q: dict(list(labels.items())[:1]) for q, labels in qrels.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for judgments in (qrels, sparse):
            for level in (1, 9):
                ev = compat.RelevanceEvaluator(
                    judgments, {"all_trec"}, relevance_level=level, judged_docs_only_flag=True
                )
                assert ev.evaluate(run) and ev.evaluate(pytrec_safe(judgments, run))


def test_qrels_are_read_once_at_construction() -> None:
    """As in pytrec_eval, the evaluator keeps the judgments it was given: changing the dict afterwards
    changes nothing, and it evaluates any number of runs."""
    qrels = {"q": {"a": 1, "b": 0}}
    theirs, ours = pytrec_eval.RelevanceEvaluator(qrels, {"P.1"}), compat.RelevanceEvaluator(qrels, {"P.1"})
    qrels["q"]["b"] = 1
    for run in ({"q": {"a": 1.0, "b": 2.0}}, {"q": {"a": 3.0, "b": 2.0}}):
        assert ours.evaluate(run) == theirs.evaluate(run)
    assert "1 judged queries" in repr(ours) and "P_1" in repr(ours)


def test_module_attributes_are_pytrec_evals() -> None:
    assert compat.supported_measures == pytrec_eval.supported_measures
    assert compat.supported_nicknames == pytrec_eval.supported_nicknames
    assert set(compat.__all__) == set(pytrec_eval.__all__) | {"compute_aggregated_measure"}


def test_parse_qrel_and_parse_run_are_pytrec_evals() -> None:
    qrel_lines = ["q1 0 d1 1\n", "q1 0 d2 0", "  q2 0 d1 -1 \n", "q1\t0\td3\t2\n"]
    run_lines = ["q1 Q0 d1 1 2.5 tag\n", "q2 Q0 d1 1 -1e3 tag", "q1 Q0 d2 2 1 tag\n"]
    for ours, theirs, lines in [(compat.parse_qrel, pytrec_eval.parse_qrel, qrel_lines),
                                (compat.parse_run, pytrec_eval.parse_run, run_lines)]:  # fmt: skip
        got, expected = ours(lines), theirs(lines)
        assert got == expected and type(got) is type(expected) is collections.defaultdict
        assert got["absent"] == expected["absent"] == {}  # a defaultdict, as pytrec_eval's
        for bad, error in [
            ([*lines, lines[0]], AssertionError),
            (["q1 0 d1"], ValueError),
            ([""], ValueError),
        ]:
            with pytest.raises(error):
                theirs(bad)
            with pytest.raises(error):
                ours(bad)


def test_compute_aggregated_measure_is_pytrec_evals() -> None:
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 1000):
        values = rng.random(n).tolist()
        logs = np.log(np.maximum(values, 1e-5)).tolist()
        for measure, vals in [
            ("map", values),
            ("P_5", values),
            ("num_ret", values),
            ("gm_map", logs),
            ("gm_bpref", logs),
        ]:
            assert compat.compute_aggregated_measure(measure, vals) == pytrec_eval.compute_aggregated_measure(
                measure, vals
            )


@pytest.mark.in_a_child
def _child(code: str, env: dict[str, str]) -> Any:
    """What a fresh Python process running ``code`` with ``env`` prints last, read as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_needs_neither_pytrec_eval_nor_numpy() -> None:
    """The module imports with pytrec_eval unimportable and loads no numerical library until an evaluator
    is made; then it evaluates without pytrec_eval."""
    code = """
import importlib.abc, json, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("pytrec_eval", "pytrec_eval_ext"):
            raise ImportError("no " + name)
sys.meta_path.insert(0, Refuse())
import irspec.compat.pytrec_eval as pytrec_eval
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "polars", "pandas", "scipy", "pyarrow", "lark"})
scores = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"P.1", "map"}).evaluate({"q": {"a": 1.0, "b": 2.0}})
print(json.dumps([loaded, scores]))
"""
    env = dict(os.environ, IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1")
    env["PYTHONPATH"] = (
        str(Path(irspec.__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    )
    loaded, scores = _child(code, env)
    assert loaded == []
    assert scores == {"q": {"map": 0.5, "P_1": 0.0}}


_BEYOND_RANGE = {"set_F.0", "Rprec_mult.0,0.5", "iprec_at_recall.0.5,1.5,3", "11pt_avg.0.5,2"}


@pytest.mark.parametrize("measures", [*MEASURE_SETS.values(), _BEYOND_RANGE], ids=[*MEASURE_SETS, "beyond"])
def test_measures_mean_with_the_trec_eval_modules_alone_what_they_mean_with_everything(
    measures: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drop-in reads its measures with trec_eval_registry() (the six built-in modules of trec_eval's
    measures, no entry point searched): each key, its metric and that metric's definition are those the
    default registry gives, with this environment's plugins installed (the shipped three are)."""
    from irspec.spec import plugins

    def described(keys: list) -> list:
        return [
            (k.trec_name, k.log)
            + (
                (k.metric, k.metric.trec_name, [getattr(d, f.name) for f in dataclasses.fields(d)])
                if (d := k.metric and k.metric.definition)
                else (k.metric,)
            )
            for k in keys
        ]

    requested = compat._requested(measures)
    ours = compat._keys(requested)
    assert all(k.metric is None or k.metric.definition.plugin in plugins.TREC_EVAL_PLUGINS for k in ours)
    assert len(plugins.get_registry().definitions) > len(plugins.trec_eval_registry().definitions)
    monkeypatch.setattr(plugins, "trec_eval_registry", plugins.get_registry)
    theirs = compat._keys(requested)
    assert all(
        k.metric is None or k.metric.definition is plugins.get_registry().definitions[k.metric.name]
        for k in theirs
    )
    assert described(ours) == described(theirs)


def test_an_evaluation_builds_no_other_registry_and_imports_no_other_builtin_module() -> None:
    """In a fresh process with the shipped plugins installed: the drop-in's evaluator and evaluation
    search no entry point and import none of the other eight built-in modules; its metrics pickle by
    name, as every built-in metric does, and load as the default registry's."""
    code = """
import json, pickle, sys
import irspec.compat.pytrec_eval as pytrec_eval
from irspec.spec import plugins
evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"P.1", "ndcg_cut.3", "bpref", "map"})
scores = evaluator.evaluate({"q": {"a": 1.0, "b": 2.0}})
built = plugins._default_registry.cache_info().currsize
modules = sorted(m for m in sys.modules if m.startswith("irspec.builtin.") and ".kernels" not in m)
metric = evaluator._metrics[0]
again = pickle.loads(pickle.dumps(metric))
same = again == metric and again.definition is plugins.get_registry().definitions[metric.name]
print(json.dumps([built, modules, scores, same, len(pickle.dumps(metric)) < 200]))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRSPEC_")}
    built, modules, scores, same, small = _child(code, env)
    assert built == 0
    assert modules == sorted(["irspec.builtin._common", *irspec.spec.plugins.TREC_EVAL_PLUGINS])
    assert scores["q"]["P_1"] == 0.0 and scores["q"]["bpref"] == 1.0  # b, above a, is unjudged
    assert same and small


_BROKEN_PLUGIN_CHILD = """
import json
import irspec
import irspec.compat.pytrec_eval as pytrec_eval
scores = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"P.1", "map"}).evaluate({"q": {"a": 1.0, "b": 2.0}})
try:
    irspec.parse("P@1")
    refused = ""
except irspec.errors.RegistryError as e:
    refused = str(e)
print(json.dumps([scores, refused]))
"""


def test_a_plugin_that_fails_to_import_does_not_stop_the_drop_in(tmp_path: Path) -> None:
    """An installed plugin whose module raises on import: irspec's default registry names it in its error,
    and the drop-in, whose measures are the built-in trec_eval modules', evaluates as always."""
    info = tmp_path / "broken_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[irspec]\nbroken = broken_plugin_module\n")
    (tmp_path / "broken_plugin_module.py").write_text("raise ImportError('this plugin is broken')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRSPEC_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    scores, refused = _child(_BROKEN_PLUGIN_CHILD, env)
    assert scores == {"q": {"map": 0.5, "P_1": 0.0}}
    assert "plugin 'broken'" in refused and "this plugin is broken" in refused


@pytest.mark.parametrize("enabled", [True, False])
def test_making_an_evaluator_leaves_the_garbage_collector_as_it_was(enabled: bool) -> None:
    # the collector is paused while the first evaluator loads the engine (irspec.lazy.collector_paused)
    import gc

    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        evaluator = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1}}, {"map"})
        assert gc.isenabled() is enabled
        assert evaluator.evaluate({"q1": {"d1": 1.0, "d2": 0.5}}) == {"q1": {"map": 1.0}}
    finally:
        (gc.enable if was else gc.disable)()


@given(st.text(alphabet="._,0123456789x", max_size=12))
@example("_5x")
@example(".0.25,5.")
@example("_5,,6")
@example("_5.x")
@example("_0.5,1.")
@settings(max_examples=300, deadline=None)
def test_a_measures_parameters_are_read_as_pytrec_evals_pattern_reads_them(text):
    """The parameters after a measure's name, read by hand: pytrec_eval's pattern is the reference."""
    from irspec.compat.pytrec_eval import _parameters

    m = re.compile(r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)").match("P" + text, 1)
    assert _parameters("P" + text, 1) == (m.group(1) if m else None)


@pytest.mark.parametrize(
    ("option", "value"),
    [("relevance_level", "2"), ("relevance_level", None), ("judged_docs_only_flag", None)],
)
def test_an_option_that_is_no_integer_is_a_type_error_naming_it(option: str, value: object) -> None:
    # a TypeError, as pytrec_eval's C code raises, but naming the argument (Python's own message did not)
    from irspec.compat import pytrec_eval as dropin

    with pytest.raises(
        TypeError, match=f"Argument {option} should be an integer, got {type(value).__name__}"
    ):
        dropin.RelevanceEvaluator({"q": {"d": 1}}, {"map"}, **{option: value})
