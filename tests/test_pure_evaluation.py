"""The pure-Python evaluation (``irspec.evaluation.pure``) gives the engine's values, bit for bit.

The pytrec_eval drop-in computes BEIR's measures there while numpy is not loaded (a fresh process), and
with the engine once it is; a user must not be able to tell which ran. The engine is the reference
here, run through the same drop-in on the same dicts, on ``tests/randomdata.py``'s adversarial cases
(ties, -0.0 and 0.0, graded and negative labels, unjudged documents, empty rankings, queries without a
relevant document) and on rankings deep enough that numpy's ``log2`` and the C library's part (rank
1621 on an AVX-512 machine). pytrec_eval itself is compared with both paths in
``tests/test_compat_pytrec_eval.py``; the seeds' worked examples are checked by hand below.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from randomdata import random_case

import irspec
import irspec.compat.pytrec_eval as compat
from irspec.errors import InputError
from irspec.evaluation import pure
from irspec.evaluation.context import LOG2_TABLE, rank_log2

PURE_SETS = {
    "beir": {f"{m}.1,3,5,10,100,1000" for m in ("map_cut", "ndcg_cut", "recall", "P")},
    "defaults": {"P", "recall", "map_cut", "ndcg_cut", "map", "ndcg", "recip_rank"},
    "odd cutoffs": {
        "P.1,2,7,250,9007199254740992",
        "recall.4,5000",
        "ndcg_cut.1,2,3,1621,2000",
        "map_cut.13",
    },
}


def _both(qrels, run, measures, monkeypatch, level: int = 1) -> tuple[dict, dict]:
    """The drop-in's result computed by the pure-Python path and by the engine, from one evaluator each."""
    results = []
    for first in (True, False):
        monkeypatch.setattr(compat, "_pure_first", lambda first=first: first)
        evaluator = compat.RelevanceEvaluator(qrels, measures, relevance_level=level)
        results.append(evaluator.evaluate(run))
        assert evaluator._engine_loaded is not first  # the pure-Python path ran, or the engine
    return results[0], results[1]


def _same_bits(got: dict, expected: dict) -> None:
    assert list(got) == list(expected)
    for q in expected:
        assert list(got[q]) == list(expected[q]), q
        for key, value in expected[q].items():
            assert got[q][key].hex() == value.hex(), (q, key, got[q][key], value)


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("name", list(PURE_SETS))
def test_random_cases_give_the_engines_values_bit_for_bit(name, level, monkeypatch) -> None:
    compared = 0
    for seed in range(40):
        qrels, run = random_case(seed, all_negative=seed % 5 == 0, near_ties=seed % 3 == 0)
        if seed % 4 == 1:  # integer scores, alone or among floats
            run = {
                q: {d: int(s * 4) if i % 2 else s for i, (d, s) in enumerate(docs.items())}
                for q, docs in run.items()
            }
        got, expected = _both(qrels, run, PURE_SETS[name], monkeypatch, level)
        _same_bits(got, expected)
        compared += sum(len(v) for v in expected.values())
    assert compared > 1000


def _deep_case(seed: int) -> tuple[dict, dict]:
    """Rankings of 1,500 to 4,000 documents with relevant ones throughout, and ideal lists of up to 2,500
    positive labels: ranks where numpy's log2 and the C library's differ."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(3):
        n = int(rng.integers(1500, 4000))
        docs = [f"d{i}" for i in range(n)]
        scores = rng.choice([0.5, 0.25, 0.125, -0.0, 0.0, 1.0], n) if q == 0 else rng.normal(size=n)
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        labels = rng.integers(-1, 4, n)
        qrels[f"q{q}"] = {d: int(lab) for d, lab in zip(docs, labels, strict=True) if rng.random() < 0.8}
        qrels[f"q{q}"].update({f"unretrieved{i}": 2 for i in range(int(rng.integers(0, 500)))})
    # one relevant document at a rank whose log2(rank + 1) numpy gives a bit off (and a sum of one term
    # keeps that bit): nDCG is 1 / log2(rank + 1)
    for rank in (1620, 3241, 7956):
        run[f"at{rank}"] = {f"d{i:05d}": float(-i) for i in range(1, rank + 11)}
        qrels[f"at{rank}"] = {f"d{rank:05d}": 1}
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_deep_rankings_give_the_engines_values_bit_for_bit(seed, monkeypatch) -> None:
    qrels, run = _deep_case(seed)
    measures = {"ndcg", "ndcg_cut.1621,1622,3000", "map", "P.2000", "recall.1700", "recip_rank"}
    got, expected = _both(qrels, run, measures, monkeypatch)
    _same_bits(got, expected)


def test_the_engines_logarithms_of_ranks_are_the_c_librarys() -> None:
    """What makes the two paths agree: rank_log2 is math.log2 (the C library's log2, trec_eval's) for
    every integer the table holds, numpy's log2 beyond."""
    x = np.arange(1, LOG2_TABLE + 1)
    assert rank_log2(x).tolist() == [math.log2(v) for v in x.tolist()]
    beyond = np.array([LOG2_TABLE + 1, 10**9, 3, 2**40])
    assert rank_log2(beyond).tolist() == [*np.log2(beyond[:2]).tolist(), math.log2(3), 40.0]
    assert rank_log2(np.array([2.0, 5.0])).tolist() == [1.0, math.log2(5)]


def test_the_seeds_worked_examples() -> None:
    """Seed 004: AP with relevant documents at ranks 2, 3, 6, 10, 11, 12 of R = 6 is 0.5035. Seed 003:
    query A's labels 5, 2, 4 in rank order, B's 5, 2, 4, 0, 1: DCG@3 of A 8.26 over an ideal 8.52, DCG@5
    of B 8.65 over 8.95 (the seed divides those rounded sums: 0.9694 and 0.9664; unrounded, 8.26186 /
    8.52372 = 0.9693 and 8.64871 / 8.95440 = 0.9659, as tests/test_seed_examples.py records). Seed 001:
    relevant at ranks 1, 3, 6, 10, 15 of R = 10: P@3 = 0.67, P@10 = 0.4, AP = 0.29, recall@15 = 0.5."""
    ranking = {f"d{i:02d}": 100.0 - i for i in range(1, 16)}  # d01 first
    ap_labels = {f"d{i:02d}": 1 for i in (2, 3, 6, 10, 11, 12)}
    [[ap]] = pure.evaluate_pure({"q": ap_labels}, {"q": ranking}, ["q"], [("AP", None)])
    assert round(ap, 4) == 0.5035
    a = {"d01": 5, "d02": 2, "d03": 4}
    b = {"d01": 5, "d02": 2, "d03": 4, "d04": 0, "d05": 1}
    [[n3]] = pure.evaluate_pure({"a": a}, {"a": ranking}, ["a"], [("nDCG", 3)])
    [[n5]] = pure.evaluate_pure({"b": b}, {"b": ranking}, ["b"], [("nDCG", 5)])
    assert (round(n3, 4), round(n5, 4)) == (0.9693, 0.9659)
    labels = {f"d{i:02d}": 1 for i in (1, 3, 6, 10, 15)} | {f"other{i}": 1 for i in range(5)}
    metrics = [("P", 3), ("P", 10), ("AP", None), ("R", 15), ("RR", None), ("P", None)]
    [values] = pure.evaluate_pure({"q": labels}, {"q": ranking}, ["q"], metrics)
    assert [round(v, 2) for v in values] == [0.67, 0.4, 0.29, 0.5, 1.0, 0.33]


def test_ties_rank_by_docno_descending_and_ignore_the_sign_of_zero() -> None:
    ranking = {"a": 0.0, "c": -0.0, "b": 0.0, "z": -1.0}  # c, b, a by docno; then z
    rr = [pure.evaluate_pure({"q": {d: 1}}, {"q": ranking}, ["q"], [("RR", None)])[0][0] for d in "cbaz"]
    assert rr == [1.0, 1 / 2, 1 / 3, 1 / 4]


@pytest.mark.parametrize(
    "run",
    [
        {"q": {"a": np.float64(1.0), "b": 2.0}},  # numpy scores
        {"q": {"a": True, "b": 2.0}},  # a boolean
        {"q": {"a": 2**53 + 1, "b": 2.0}},  # an integer that is not its double
        {"q": {"a": 1.0, 7: 2.0}},  # a docno that is not a string
        {"q": {"a": 1.0, "b\udc80": 2.0}},  # a lone surrogate
        {"q": {"a": float("nan"), "b": 2.0}},  # NaN
        {"q": {"a": float("inf")}},
        {"q": {"a": "1.0"}},  # a score that is a string
    ],
    ids=["numpy", "bool", "beyond-2**53", "int-docno", "surrogate", "nan", "inf", "str"],
)
def test_what_the_pure_path_does_not_read_is_the_engines(run, monkeypatch) -> None:
    """The same answer, or the same error, as the engine alone gives."""
    qrels = {"q": {"a": 1, "b": 0}}
    assert not pure.pure_rankings(run, ["q"])
    outcomes = []
    for first in (True, False):
        monkeypatch.setattr(compat, "_pure_first", lambda first=first: first)
        try:
            outcomes.append(compat.RelevanceEvaluator(qrels, {"P.1", "ndcg"}).evaluate(run))
        except (TypeError, InputError) as e:
            outcomes.append((type(e), str(e)))
    assert outcomes[0] == outcomes[1]


def test_measures_labels_and_options_the_pure_path_does_not_take(monkeypatch) -> None:
    monkeypatch.setattr(compat, "_pure_first", lambda: True)
    qrels = {"q": {"a": 1, "b": 0}}
    assert compat.RelevanceEvaluator(qrels, {"P.5", "ndcg"})._pure is not None
    assert compat.RelevanceEvaluator(qrels, {"P.5", "bpref"})._pure is None  # another measure
    assert compat.RelevanceEvaluator(qrels, {"P.5"}, judged_docs_only_flag=True)._pure is None
    assert compat.RelevanceEvaluator({"q": {"a": np.int64(1)}}, {"P.5"})._pure is None
    assert compat.RelevanceEvaluator(qrels, {"P.9007199254740993"})._pure is None  # beyond 2**53
    with pytest.raises(ValueError, match="label=gain pairs"):
        compat.RelevanceEvaluator(qrels, {"ndcg.1"})
    with pytest.raises(ValueError, match="cutoffs must be distinct integers >= 1"):
        compat.RelevanceEvaluator(qrels, {"P.0"})
    assert not pure.pure_judgments({"q": {"a": 2**63}})
    assert pure.pure_judgments({"q": {"a": 2**63 - 1, "b": -(2**63)}})
    assert not pure.pure_rankings({"q": {"a": 1.0, "b": 2.0}}, ["q"], limit=1)


def test_a_fresh_process_evaluates_without_numpy_and_gives_the_engines_values(tmp_path) -> None:
    """BEIR's evaluation of a SciFact-shaped collection in a new process: numpy is never imported, and
    the values are those of the engine in this one."""
    qrels, run = random_case(7)
    qrels = {q: labels for q, labels in qrels.items() if labels}
    path = tmp_path / "case.json"
    path.write_text(json.dumps({"qrels": qrels, "run": run}))
    measures = sorted(PURE_SETS["beir"])
    code = f"""
import json, sys
import irspec.compat.pytrec_eval as pytrec_eval
d = json.load(open({str(path)!r}))
got = pytrec_eval.RelevanceEvaluator(d["qrels"], {measures!r}).evaluate(d["run"])
print(json.dumps(["numpy" in sys.modules, {{q: {{k: v.hex() for k, v in r.items()}} for q, r in got.items()}}]))
"""
    env = dict(os.environ, IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1")
    env["PYTHONPATH"] = (
        str(Path(irspec.__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    numpy_loaded, got = json.loads(done.stdout)
    assert not numpy_loaded
    expected = compat.RelevanceEvaluator(qrels, set(measures)).evaluate(run)  # numpy is loaded here
    assert got == {q: {k: v.hex() for k, v in r.items()} for q, r in expected.items()}
