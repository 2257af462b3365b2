"""irspec-usermodel's C/W/L measures against cwl_eval (the ``cwl-eval`` package, 1.0.12), called as
ir_measures 0.4.3 calls it: through ir_measures' own ``cwl_eval`` provider where it can be (depth 1000),
and through cwl_eval's classes with ir_measures' gain mapping where another depth is tested; then the
documented differences, each shown. Hand-checked values are in test_cwl.py.
"""

from __future__ import annotations

import math
import re

import pytest

pytest.importorskip("irspec_usermodel")
pytest.importorskip("ir_measures")
pytest.importorskip("cwl")

import ir_measures
import numpy as np

import irspec

# The random collections miss queries and leave documents unjudged on purpose: irspec's warnings say so.
pytestmark = pytest.mark.filterwarnings("ignore::irspec.IrspecWarning")


def value(spec: str, qrels, run, query: str = "q") -> float:
    return irspec.evaluate(qrels, run, spec).per_query()[query][str(irspec.parse(spec))]


# --------------------------------------------------------------------------------------------------
# Differential: cwl_eval, as ir_measures calls it.


def random_collection(seed: int, nq: int = 30, long_query: bool = False):
    """Qrels and a run with every awkward case: graded, negative and out-of-range labels, unjudged
    documents, tied scores, queries with nothing relevant, everything relevant, no judged document
    retrieved, a qrels query missing from the run and a run query missing from the qrels.

    Each query's documents are inserted in trec_eval's order for ties (docno descending), so that
    ir_measures' stable sort by score gives irspec's ranking (see test_ties_...)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(nq):
        q = f"q{i}"
        docs = [f"d{j}" for j in range(int(rng.integers(1, 30)))]
        labels = rng.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3, 4, 6], size=len(docs))
        if i % 7 == 0:
            labels[:] = 0  # nothing relevant
        if i % 7 == 1:
            labels[:] = 4  # everything at the top grade
        judged = rng.random(len(docs)) < 0.8
        qrels[q] = {d: int(lab) for d, lab, j in zip(docs, labels, judged, strict=True) if j} or {"only": 0}
        if i % 7 == 2:
            continue  # a qrels query missing from the run
        pool = docs + [f"u{j}" for j in range(int(rng.integers(0, 10)))]  # u*: unjudged
        ranked = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
        scores = rng.integers(0, 5, size=len(ranked)).astype(float)  # many ties
        run[q] = {
            str(d): float(s)
            for d, s in sorted(zip(ranked, scores, strict=True), key=lambda x: x[0], reverse=True)
        }
    run["not-in-qrels"] = {"d1": 1.0}
    if long_query:  # longer than cwl_eval's depth of 1000
        q = f"q{nq}"
        qrels[q] = {f"d{j:04d}": int(j % 3) for j in range(0, 1200, 2)}
        run[q] = {f"d{j:04d}": float(j % 7) for j in reversed(range(1200))}
    return qrels, run


GAIN_RANGES = [(0, 1), (0, 3), (1, 4), (-1, 2)]


def specs_for(lo: int, hi: int) -> list[str]:
    """ir_measures spellings (which irspec reads too) of every C/W/L measure, at one gain range."""
    g = f"min_rel={lo},max_rel={hi}"
    return [
        f"BPM(T=1,{g})@1",
        f"BPM(T=2.5,{g})@10",
        f"BPM(T=0.5,{g})@2000",
        f"INST(T=1,{g})",
        f"INST(T=3,{g})",
        f"INSQ(T=1,{g})",
        f"INSQ(T=2.5,{g})",
        f"NERR8({g})@1",
        f"NERR8({g})@5",
        f"NERR9({g})@3",
        f"NERR9({g})@20",
        f"NERR10(p=0.9,{g})",
        f"NERR10(p=0.5,{g})",
        f"NERR10(p=1,{g})",
        f"NERR10(p=0,{g})",
        f"NERR11(T=1,{g})",
        f"NERR11(T=2,{g})",
        f"SDCG({g})@1",
        f"SDCG({g})@10",
        f"SDCG({g})@2000",
    ]


def irm_measure(spec: str):
    """ir_measures' measure for a spec in its syntax. Built through its Python API rather than
    ir_measures.parse_measure, which cannot read a negative number (min_rel=-1)."""
    name, args, cutoff = re.fullmatch(r"(\w+)(?:\((.*)\))?(?:@(\d+))?", spec).groups()
    params = {}
    for arg in filter(None, (args or "").split(",")):
        key, text = arg.split("=")
        params[key] = float(text) if "." in text else int(text)
    measure = getattr(ir_measures, name)(**params)
    return measure @ int(cutoff) if cutoff else measure


def cwl_values(specs: list[str], qrels, run) -> dict[tuple[str, str], tuple[float, float]]:
    """(spec, query) -> (EU, ETU) from ir_measures' cwl_eval provider."""
    measures = {irm_measure(s): s for s in specs}
    out = {}
    for m in ir_measures.cwl_eval.iter_calc(list(measures), qrels, run):
        out[measures[m.measure], m.query_id] = (
            float(m.value),
            float(getattr(m, "expected_total_utility", 0.0)),
        )
    return out


# INST squares its continuation as x·x over arrays; cwl_eval with pow() per value, which rounds
# differently in the last bit now and then (test_inst_squares_as_x_times_x): 1e-12 is many times that.
TOLERANCE = {"INST": 1e-12}


def assert_equal_to_cwl(specs: list[str], qrels, run) -> int:
    ref = cwl_values(specs, qrels, run)
    totals = [s.replace("(", "(utility=total,", 1) for s in specs]
    got = irspec.evaluate(qrels, run, specs + totals).per_query()
    compared = 0
    for spec, total in zip(specs, totals, strict=True):
        name, name_total = str(irspec.parse(spec)), str(irspec.parse(total))
        tol = TOLERANCE.get(spec.split("(")[0], 0.0)
        for q in qrels:
            eu, etu = ref[spec, q]
            assert abs(got[q][name] - eu) <= tol, (spec, q, got[q][name], eu)
            if q in run:  # ir_measures' records of a missing query carry no totals
                assert abs(got[q][name_total] - etu) <= tol * max(1.0, etu), (
                    total,
                    q,
                    got[q][name_total],
                    etu,
                )
            compared += 1
    return compared


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("lo,hi", GAIN_RANGES)
def test_equal_to_cwl_eval_through_ir_measures(seed, lo, hi):
    qrels, run = random_collection(seed)
    assert assert_equal_to_cwl(specs_for(lo, hi), qrels, run) == len(specs_for(lo, hi)) * len(qrels)


def test_equal_to_cwl_eval_on_a_ranking_longer_than_its_depth():
    qrels, run = random_collection(7, nq=4, long_query=True)
    assert assert_equal_to_cwl(specs_for(0, 2), qrels, run) > 0


def cwl_at_depth(spec: str, qrels, run, depth: int) -> dict[str, float]:
    """EU per query from cwl_eval's own classes at another depth (its max_depth), with ir_measures' gain
    mapping and conversion of the measure, exactly as ir_measures' provider calls them but for max_n."""
    from cwl.ruler.ranking import RankingMaker
    from ir_measures.providers.cwl_eval import CwlEvaluator, IrmQrelHandler

    m = irm_measure(spec)
    handler = IrmQrelHandler(None, m["min_rel"], m["max_rel"])
    for q, docs in qrels.items():
        for d, label in docs.items():
            handler.put_value(q, d, max(label, 0))
    out = {}
    for q, docs in run.items():
        if q not in qrels:
            continue
        maker = RankingMaker(
            q, handler, min_gain=0.0, max_gain=1.0, cost_dict=None, max_cost=1.0, min_cost=1.0, max_n=depth
        )
        for d in sorted(docs, key=lambda d: docs[d], reverse=True):  # stable: ties in insertion order
            maker.add(d, "_")
        out[q] = float(CwlEvaluator._irm_convert_to_measure(None, m).measure(maker.get_ranking()))
    return out


@pytest.mark.parametrize("depth", [1, 3, 17])
def test_the_depth_parameter_is_cwl_evals_max_depth(depth):
    qrels, run = random_collection(11)
    for spec in specs_for(0, 3):
        ours = irspec.evaluate(qrels, run, spec.replace("(", f"(depth={depth},", 1)).per_query()
        name = str(irspec.parse(spec.replace("(", f"(depth={depth},", 1)))
        tol = TOLERANCE.get(spec.split("(")[0], 0.0)
        for q, v in cwl_at_depth(spec, qrels, run, depth).items():
            assert abs(ours[q][name] - v) <= tol, (spec, depth, q)


# --------------------------------------------------------------------------------------------------
# Where irspec and cwl_eval (through ir_measures) differ, each shown.


def test_ties_are_ranked_by_docno_descending_where_ir_measures_keeps_the_runs_order():
    # a (gain 1) and b (gain 0) tie. irspec ranks b first (docno descending, as trec_eval); ir_measures
    # sorts by score alone, stably, so its cwl_eval sees the dict's order.
    qrels = {"q": {"a": 1, "b": 0}}
    a_first = {"q": {"a": 1.0, "b": 1.0}}
    b_first = {"q": {"b": 1.0, "a": 1.0}}
    ours = {value("NERR8@1", qrels, run) for run in (a_first, b_first)}
    assert ours == {0.0}  # b at rank 1, whatever the order given
    assert cwl_values(["NERR8(max_rel=1)@1"], qrels, a_first)["NERR8(max_rel=1)@1", "q"][0] == 1.0
    assert cwl_values(["NERR8(max_rel=1)@1"], qrels, b_first)["NERR8(max_rel=1)@1", "q"][0] == 0.0


def test_inst_squares_as_x_times_x_where_cwl_eval_calls_pow():
    # The one arithmetic difference behind INST's tolerance: a value whose square rounds differently.
    values = np.random.default_rng(1).random(20_000)
    differs = sum(math.pow(v, 2.0) != v * v for v in values.tolist())
    assert differs > 0  # pow is not correctly rounded: x·x is, so the two disagree in the last bit
    qrels, run = random_collection(5)
    ref = cwl_values(["INST(T=1,max_rel=3)"], qrels, run)
    got = irspec.evaluate(qrels, run, "INST(max_rel=3)").per_query()
    gaps = [abs(got[q]["INST(max_rel=3)"] - ref["INST(T=1,max_rel=3)", q][0]) for q in qrels]
    assert max(gaps) < 1e-15


@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95, 0.97])
def test_rbp_equals_cwl_evals_binary_rbp_where_its_depth_changes_nothing(p):
    # ir_measures' RBP(rel=r, p=p) is cwl_eval's: weights p^(i-1) normalised over its 1000 ranks, so
    # (1 - p) / (1 - p^1000) where irspec's RBP has (1 - p): equal to 1e-12 while p^1000 is below that.
    qrels, run = random_collection(3)
    for rel in (1, 2):
        ref = cwl_values([f"RBP(rel={rel},p={p})"], qrels, run)
        got = irspec.evaluate(qrels, run, f"RBP({p}, rel={rel})").per_query()
        name = str(irspec.parse(f"RBP({p}, rel={rel})"))
        for q in qrels:
            assert got[q][name] == pytest.approx(ref[f"RBP(rel={rel},p={p})", q][0], abs=1e-12)


def test_rbp_differs_from_cwl_evals_by_its_normalisation_when_p_is_near_one():
    qrels, run = random_collection(3)
    p = 0.99
    ref = cwl_values([f"RBP(rel=1,p={p})"], qrels, run)
    got = irspec.evaluate(qrels, run, f"RBP({p})").per_query()
    relevant_somewhere = [q for q in run if q in qrels and got[q][f"RBP(p={p})"] > 0]
    assert relevant_somewhere
    for q in relevant_somewhere:
        theirs = ref[f"RBP(rel=1,p={p})", q][0]
        assert got[q][f"RBP(p={p})"] != pytest.approx(theirs, abs=1e-9)
        assert got[q][f"RBP(p={p})"] == pytest.approx(theirs * (1 - p**1000), abs=1e-12)


# ir_measures' cwl_eval provider also computes P, RR and AP (when asked for by provider): C/W/L views of
# trec_eval's measures, which irspec gives as its built-ins.


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("rel", [1, 2])
def test_cwl_evals_p_and_rr_equal_irspecs_built_in_ones(seed, rel):
    # Equal to 1e-12, not bit for bit: cwl_eval adds k weights of 1/k where trec_eval divides a count.
    qrels, run = random_collection(seed)
    specs = [f"P(rel={rel})@1", f"P(rel={rel})@5", f"P(rel={rel})@20", f"RR(rel={rel})"]
    ref = cwl_values(specs, qrels, run)
    got = irspec.evaluate(qrels, run, specs).per_query()
    for spec in specs:
        for q in qrels:
            assert got[q][str(irspec.parse(spec))] == pytest.approx(ref[spec, q][0], abs=1e-12), (spec, q)


@pytest.mark.parametrize("rel", [1, 2])
def test_cwl_evals_ap_divides_by_the_relevant_documents_retrieved(rel):
    # cwl_eval's AP weighs rank i by Σ_{j>=i} g(j)/j: its EU is Σ_{relevant i} P@i / (relevant retrieved),
    # where trec_eval's (and irspec's) divides by R, every relevant document in the qrels.
    qrels, run = random_collection(4)
    ref = cwl_values([f"AP(rel={rel})"], qrels, run)
    got = irspec.evaluate(qrels, run, f"AP(rel={rel}) NumRelRet(rel={rel}) NumRel(rel={rel})").per_query()
    differs = 0
    for q in qrels:
        names = (f"AP(rel={rel})", f"NumRelRet(rel={rel})", f"NumRel(rel={rel})")
        ap, relret, R = (got[q][str(irspec.parse(s))] for s in names)
        assert ref[f"AP(rel={rel})", q][0] * relret == pytest.approx(ap * R, abs=1e-12), q
        differs += relret < R and ap > 0
    assert differs > 0
