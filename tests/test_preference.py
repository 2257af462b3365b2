"""Compat and Accuracy (irspec.builtin.preference): worked by hand, and against ir_measures on random data.

The hand-checked values are arithmetic written out below. The differential tests give ir_measures'
own providers (``compat``, ``accuracy``: Python, no trec_eval) the random cases of ``tests/randomdata.py``
(ties, graded, zero and negative labels, unjudged documents, queries without relevant documents or only
negative labels, rankings of 1 to ~300 documents), re-scored n, n-1, ..., 1 in trec_eval's order
(score descending, docno descending): both providers break score ties their own way (Compat by docno
ascending, Accuracy by the order of the input), while irspec ranks as trec_eval for every measure.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from randomdata import random_case, untied

import irspec

im = pytest.importorskip("ir_measures")

# One query: a (label 2), x (unjudged), b (1), c (0) retrieved in that order; d (1) judged, not retrieved.
QRELS = {"q1": {"a": 2, "b": 1, "c": 0, "d": 1}, "q2": {"e": 0}, "q3": {"f": 1}}
RUN = {"q1": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}, "q2": {"e": 1.0, "g": 0.5}, "q3": {}}


def _values(spec: str, qrels=QRELS, run=RUN) -> dict[str, float]:
    result = irspec.evaluate(qrels, run, spec)
    return {q: v[str(irspec.parse(spec))] for q, v in result.per_query().items()}


def test_compat_by_hand():
    # Ideal ranking at level 1: a (label 2), then the label-1 documents, the retrieved b before d:
    # I = [a, b, d], m = 3; ranking r = [a, x, b, c], n = 4; depth D = max(4, 3) = 4.
    # Overlaps of the prefixes: depth 1 {a} -> 1; 2 {a,x} ∩ {a,b} -> 1; 3 {a,x,b} ∩ {a,b,d} -> 2; 4 -> 2.
    # With p = 0.5 the weights p^(i-1) are 1, 1/2, 1/4, 1/8:
    #   Σ w_i O_i / i = 1 + 1/4 + 1/6 + 1/16 = 71/48
    #   Σ w_i = 15/8, so RBO = 71/90
    #   the ideal against itself: min(i, 3)/i = 1, 1, 1, 3/4: Σ = 1 + 1/2 + 1/4 + 3/32 = 59/32
    #   normalised: (71/48) / (59/32) = 142/177
    assert _values("Compat(p=0.5)")["q1"] == pytest.approx(142 / 177, abs=1e-15)
    assert _values("Compat(p=0.5,normalize=false)")["q1"] == pytest.approx(71 / 90, abs=1e-15)
    # q2 has no relevant document, q3 an empty ranking: 0
    assert _values("Compat")["q2"] == 0.0
    assert _values("Compat")["q3"] == 0.0


def test_compat_default_parameters_by_hand():
    # p = 0.95 (ir_measures' default), same overlaps 1, 1, 2, 2 and ideal self-overlaps 1, 1, 1, 3/4.
    p = 0.95
    w = [p**i for i in range(4)]
    overlap = w[0] * 1 / 1 + w[1] * 1 / 2 + w[2] * 2 / 3 + w[3] * 2 / 4
    best = w[0] + w[1] + w[2] + w[3] * 3 / 4
    assert _values("Compat")["q1"] == pytest.approx(overlap / best, abs=1e-15)
    # at level 2 only a is relevant: I = [a], m = 1, overlaps 1 at every depth 1..4, self-overlap 1/i
    assert _values("Compat(rel=2)")["q1"] == pytest.approx(1.0, abs=1e-15)


def test_compat_ideal_puts_higher_labels_first():
    # b (label 1) at rank 1, a (label 2) at rank 2: I = [a, b]. Overlaps: depth 1 {b} ∩ {a} = 0, depth 2 -> 2.
    # p = 0.5: Σ w O / i = 0 + (1/2)(2/2) = 1/2; ideal: 1 + (1/2)(2/2) = 3/2; Compat = 1/3.
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    assert _values("Compat(p=0.5)", qrels, run)["q"] == pytest.approx(1 / 3, abs=1e-15)


def test_tied_scores_rank_as_trec_eval_for_both():
    # a and b tie: trec_eval's order puts the larger docno first, b then a (ir_measures' Compat would
    # put a first, its Accuracy would keep the input's order: a deliberate difference, docs/reference/exactness.md).
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    # Compat, p = 0.5: I = [a], D = 2; overlaps 0 ({b} ∩ {a}) then 1: Σ = (1/2)(1/2) = 1/4;
    # the ideal against itself: 1 + (1/2)(1/2) = 5/4; Compat = 1/5
    assert _values("Compat(p=0.5)", qrels, run)["q"] == pytest.approx(1 / 5, abs=1e-15)
    # Accuracy: a has one non-relevant document above it; K = N = 1: 1 - 1/1 = 0
    assert _values("Accuracy", qrels, run)["q"] == 0.0


def test_accuracy_by_hand():
    # q1 at level 1: a relevant (0 non-relevant above), x non-relevant (unjudged), b relevant (1 above),
    # c non-relevant. K = 2 relevant, N = 2 non-relevant: 1 - (0 + 1) / (2 * 2) = 3/4.
    assert _values("Accuracy")["q1"] == 0.75
    # top 2: a, x: K = 1, N = 1, nothing misordered: 1
    assert _values("Accuracy@2")["q1"] == 1.0
    # top 1: a alone, no pair: undefined
    assert math.isnan(_values("Accuracy@1")["q1"])
    # level 2: only a is relevant, N = 3, nothing above it: 1
    assert _values("Accuracy(rel=2)")["q1"] == 1.0
    # q2: no relevant document: undefined. q3 has no ranking: a query the run lacks is scored as its empty
    # ranking (missing_queries="zero", trec_eval's -c), which has no pair to order: undefined too
    assert math.isnan(_values("Accuracy")["q2"]) and math.isnan(_values("Accuracy")["q3"])
    # x, a, c, b, y: a has 1 non-relevant above, b 2; K = 2, N = 3: 1 - 3/6 = 1/2
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"x": 5.0, "a": 4.0, "c": 3.0, "b": 2.0, "y": 1.0}}
    assert _values("Accuracy", qrels, run)["q"] == 0.5


def test_accuracy_mean_leaves_undefined_queries_out():
    assert irspec.evaluate(QRELS, RUN, "Accuracy").aggregate()["Accuracy"] == 0.75  # q2 and q3 are NaN
    skipped = irspec.evaluate(QRELS, RUN, "Accuracy", missing_queries="skip")
    assert skipped.aggregate()["Accuracy"] == 0.75  # q1 alone: q2 is NaN, q3 left out


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize(
    "p,normalize", [(0.95, True), (0.95, False), (0.5, True), (0.8, False), (1.0, True), (0.0, True)]
)
def test_compat_equals_ir_measures(seed, p, normalize):
    qrels, run = random_case(seed, all_negative=True)
    run = untied(run)
    measure = im.Compat(p=p, normalize=normalize)
    shared = set(qrels) & set(run)
    # ir_measures' pipeline also gives the qrels queries the run lacks its default, 0 (irspec too, as -c)
    theirs = {m.query_id: m.value for m in im.iter_calc([measure], qrels, run) if m.query_id in shared}
    spec = f"Compat(p={p},normalize={str(normalize).lower()})"
    ours = irspec.evaluate(qrels, run, spec).per_query()
    assert set(theirs) == shared
    for q in shared:
        assert ours[q][str(irspec.parse(spec))] == pytest.approx(theirs[q], rel=1e-12, abs=1e-14), q


def _accuracy_reference(measure, qrels: dict, run: dict, q: str) -> float:
    """ir_measures' Accuracy of one query; NaN where it gives none (no relevant document in the top k)
    or stops with ZeroDivisionError (no non-relevant document in the top k): no pair to order."""
    try:
        got = [m.value for m in im.iter_calc([measure], {q: qrels[q]}, {q: run[q]})]
    except ZeroDivisionError:
        return math.nan
    return got[0] if got else math.nan


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("cutoff,rel", [(None, 1), (None, 2), (1, 1), (3, 1), (10, 2), (50, 1)])
def test_accuracy_equals_ir_measures(seed, cutoff, rel):
    qrels, run = random_case(seed, all_negative=True)
    run = untied(run)
    measure = im.Accuracy(rel=rel) if cutoff is None else im.Accuracy(rel=rel) @ cutoff
    spec = f"Accuracy(rel={rel})" + ("" if cutoff is None else f"@{cutoff}")
    ours = irspec.evaluate(qrels, run, spec).per_query()
    for q in sorted(set(qrels) & set(run)):
        expected = _accuracy_reference(measure, qrels, run, q)
        mine = ours[q][str(irspec.parse(spec))]
        if math.isnan(expected):
            assert math.isnan(mine), q
        else:
            assert mine == expected, q  # the same integer counts, one division: bit for bit


def test_the_accuracy_differential_reaches_defined_and_undefined_queries():
    seen = {"defined": 0, "nan": 0}
    for seed in range(20):
        qrels, run = random_case(seed, all_negative=True)
        run = untied(run)
        for q in set(qrels) & set(run):
            value = _accuracy_reference(im.Accuracy @ 3, qrels, run, q)
            seen["nan" if math.isnan(value) else "defined"] += 1
    assert seen["defined"] > 20 and seen["nan"] > 20, seen
