"""evaluate_topk with integer document ids: joined with the qrels by the numbers, ranked without a sort
of every row, and still exactly what the same data as dicts of strings give.

An integer id is its decimal text: 7 is the docno "7", never "007" or "07"; ties are broken by docno
descending as text ("9" before "10"). The references are ``irspec.evaluate`` of the same data as dicts
with ``str(id)`` docnos (held equal to trec_eval and pytrec_eval by the differential tests) and, for the
hand-checked cases, arithmetic written out here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from randomdata import random_case

import irspec
import irspec.evaluation.ranking
from irspec.spec.registry import MetricDef, Param

METRICS = "P@5, P@10, R@100, AP, nDCG@10, nDCG, RR, bpref, Rprec, Judged@10, NumRet, NumRelRet, NumRel"


@pytest.fixture(autouse=True)
def _quiet() -> None:
    warnings.simplefilter("ignore", irspec.IrspecWarning)


def same(a: irspec.Result, b: irspec.Result) -> None:
    assert a.query_ids == b.query_ids
    np.testing.assert_array_equal(a.values, b.values)
    assert a.aggregate() == b.aggregate()


def as_dicts(qids, docs, scores) -> dict:
    """The top k as pytrec_eval's dict, ids as their decimal text, -1 left out."""
    return {
        str(q): {str(int(d)): float(s) for d, s in zip(row, srow, strict=True) if int(d) != -1}
        for q, row, srow in zip(qids, docs.tolist(), scores.tolist(), strict=True)
    }


def test_an_integer_id_is_its_decimal_text_not_a_number() -> None:
    # "007" and "08" are not 7 and 8; "7" and "12" are 7 and 12
    qrels = {"q": {"007": 1, "7": 1, "08": 1, "12": 0, "x9": 1, "100": 1}}
    ev = irspec.Evaluator(qrels, "NumRelRet, NumRet, RR, P@4, Judged@4")
    res = ev.evaluate_topk(["q"], np.array([[8, 12, 7, 9]]), np.array([[0.9, 0.8, 0.7, 0.6]]))
    # ranking 8 (unjudged), 12 (judged non-relevant), 7 (relevant), 9 (unjudged): one relevant at rank 3
    assert res.per_query()["q"] == {
        "NumRelRet": 1.0,
        "NumRet": 4.0,
        "RR": 1 / 3,
        "P@4": 1 / 4,
        "Judged@4": 2 / 4,
    }


def test_ties_go_by_docno_text_descending() -> None:
    # one score for all: ranked by docno descending as text, "9" > "11" > "100" > "10"
    ev = irspec.Evaluator({"q": {"10": 1, "11": 1}, "r": {"9": 1}}, "RR, AP, P@2")
    res = ev.evaluate_topk(["q", "r"], np.array([[10, 100, 9, 11], [10, 100, 9, 11]]), np.full((2, 4), 0.5))
    # q: 9, 11 (relevant, rank 2), 100, 10 (relevant, rank 4): RR 1/2, AP (1/2 + 2/4) / 2, P@2 1/2
    assert res.per_query()["q"] == {"RR": 0.5, "AP": (1 / 2 + 2 / 4) / 2, "P@2": 0.5}
    # r: "9" first
    assert res.per_query()["r"] == {"RR": 1.0, "AP": 1.0, "P@2": 0.5}


def test_ids_of_nineteen_digits_and_more_are_matched_by_text() -> None:
    big = 2**64 - 1
    qrels = {"q": {str(big): 1, "1000000000000000000": 1, "5": 0}}
    ev = irspec.Evaluator(qrels, "NumRelRet, RR")
    res = ev.evaluate_topk(["q"], np.array([[5, big]], dtype=np.uint64), np.array([[2.0, 1.0]]))
    assert res.per_query()["q"] == {"NumRelRet": 1.0, "RR": 0.5}
    res = ev.evaluate_topk(["q"], np.array([[10**18, 5]], dtype=np.int64), np.array([[2.0, 1.0]]))
    assert res.per_query()["q"] == {"NumRelRet": 1.0, "RR": 1.0}


def test_docnos_too_large_to_key_by_number() -> None:
    # 18-digit docnos in 64 queries: query code x bound would not fit in 64 bits, the text is joined
    qrels = {f"q{i}": {"999999999999999999": 1, str(i): 1} for i in range(64)}
    rng = np.random.default_rng(3)
    qids = [f"q{i}" for i in range(64)]
    docs = np.stack([rng.permutation(np.r_[np.arange(8), 999999999999999999]) for _ in qids])
    scores = rng.integers(0, 3, docs.shape).astype(np.float64)
    ev = irspec.Evaluator(qrels, METRICS)
    same(ev.evaluate_topk(qids, docs, scores), irspec.evaluate(qrels, as_dicts(qids, docs, scores), METRICS))


def integer_case(seed: int) -> tuple[dict, list[str], np.ndarray, np.ndarray]:
    """A random case with integer docnos ("9" > "10" as text), as a top k padded with -1."""
    qrels, run = random_case(seed)
    rng = np.random.default_rng(seed)
    names = sorted({d for docs in (*qrels.values(), *run.values()) for d in docs})
    number = dict(zip(names, rng.permutation(len(names) * 7)[: len(names)].tolist(), strict=True))
    qrels = {q: {str(number[d]): v for d, v in docs.items()} for q, docs in qrels.items()}
    run = {q: {number[d]: s for d, s in docs.items()} for q, docs in run.items() if docs}
    qids = list(run)
    k = max((len(d) for d in run.values()), default=1)
    docs = np.full((len(qids), k), -1, dtype=np.int64)
    scores = np.full(docs.shape, np.nan)
    for i, q in enumerate(qids):
        for col, (d, s) in zip(rng.permutation(k), run[q].items(), strict=False):
            docs[i, col], scores[i, col] = d, s
    return qrels, qids, docs, scores


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("every_row_sorted", [False, True])
def test_random_ties_and_padding_equal_dicts(seed: int, every_row_sorted: bool, monkeypatch) -> None:
    qrels, qids, docs, scores = integer_case(seed)
    if every_row_sorted:  # as FAISS returns rows: score descending, the padding last
        order = np.argsort(np.where(docs == -1, np.inf, -scores), axis=1, kind="stable")
        docs, scores = np.take_along_axis(docs, order, 1), np.take_along_axis(scores, order, 1)
    want = irspec.evaluate(qrels, as_dicts(qids, docs, scores), METRICS)
    ev = irspec.Evaluator(qrels, METRICS)
    same(ev.evaluate_topk(qids, docs, scores), want)
    same(ev.evaluate_topk(qids, docs.astype(np.int32), scores), want)
    # every judged document in a tie compared by text is too many: each row is put in order instead
    monkeypatch.setattr(irspec.evaluation.ranking, "_TIED_JUDGED", 0)
    same(ev.evaluate_topk(qids, docs, scores), want)


@pytest.mark.parametrize("options", [{"depth": 3}, {"judged_only": True}, {"relevance_level": 2}])
def test_options_apply_to_the_integer_path(options: dict) -> None:
    qrels, qids, docs, scores = integer_case(5)
    same(
        irspec.Evaluator(qrels, METRICS, **options).evaluate_topk(qids, docs, scores),
        irspec.evaluate(qrels, as_dicts(qids, docs, scores), METRICS, **options),
    )


def test_float32_and_integer_scores() -> None:
    qrels, qids, docs, scores = integer_case(2)
    ev = irspec.Evaluator(qrels, METRICS)
    for given in (
        np.nan_to_num(scores).astype(np.float32),
        np.round(np.nan_to_num(scores) * 10).astype(np.int16),
    ):
        want = irspec.evaluate(qrels, as_dicts(qids, docs, given.astype(np.float64)), METRICS)
        same(ev.evaluate_topk(qids, docs, given), want)


def test_a_per_query_plugin_metric_sees_the_ranked_documents(irspec_plugin) -> None:
    """A plugin's per-query function gets the ranked docnos and scores: the frame the integer path
    did not make is made, in ranked order, when such a metric asks for it."""

    def ranked_docnos(query, metric):
        return float(int("".join(query.docnos[:3]) or "0")) + sum(query.scores[:3])

    definition = MetricDef(
        "Top3Text",
        "the top three docnos, run together",
        (Param("k", "int", 3, "unused", minimum=1),),
        per_query=ranked_docnos,
    )

    class Plugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(definition)

    metric = irspec_plugin(Plugin()).parse("Top3Text")
    ev = irspec.Evaluator({"q": {"10": 1}, "r": {"3": 1}}, metric)
    docs = np.array([[10, 100, 9, -1, 11], [3, 1, 2, -1, -1]])
    scores = np.array([[0.5, 0.5, 0.5, 0.0, 0.9], [1.0, 2.0, 3.0, 0.0, 0.0]])
    res = ev.evaluate_topk(["q", "r"], docs, scores)
    # q: 11 (0.9), then the tie 9, 100, 10 by text; r: 2 (3.0)... no: 2 has 3.0, 1 has 2.0, 3 has 1.0
    assert res.per_query()["q"]["Top3Text"] == 119100 + 0.9 + 0.5 + 0.5
    assert res.per_query()["r"]["Top3Text"] == 213 + 3.0 + 2.0 + 1.0
