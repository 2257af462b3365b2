"""irspec.Evaluator: qrels read once, runs and top-k arrays evaluated again and again, batches combined.

The reference of every value here is ``irspec.evaluate`` of the same data as pytrec_eval's dicts, which
the differential tests hold equal to trec_eval and pytrec_eval: an Evaluator must give exactly what it
gives (``==`` on every float), whatever the shape the data came in.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from randomdata import random_case

import irspec
from irspec.errors import EvaluationError, InputError

METRICS = (
    "P@5, P@10, R@100, AP, nDCG@10, nDCG, RR, RR@10, bpref, Rprec, Success@5, Judged@10, NumRet, NumRelRet"
)


@pytest.fixture(autouse=True)
def _quiet() -> None:
    warnings.simplefilter("ignore", irspec.IrspecWarning)


def same(a: irspec.Result, b: irspec.Result) -> None:
    """Two results hold the same queries, metrics and values to the last bit, and equal means."""
    assert a.query_ids == b.query_ids
    assert [str(m) for m in a.metrics] == [str(m) for m in b.metrics]
    np.testing.assert_array_equal(a.values, b.values)
    assert a.aggregate() == b.aggregate()


def as_topk(
    run: dict[str, dict[str, float]], rng: np.random.Generator, pad: object
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The run as top-k arrays, each row's documents in random column order, short rows padded with
    ``pad`` (and a score that must be ignored)."""
    qids = [q for q, docs in run.items()]
    k = max((len(d) for d in run.values()), default=0)
    docs = np.full((len(qids), max(k, 1)), pad, dtype=object)
    scores = np.full(docs.shape, np.inf)
    for i, q in enumerate(qids):
        items = list(run[q].items())
        for j, col in enumerate(rng.permutation(len(items))):
            docs[i, col], scores[i, col] = items[j]
    return qids, docs, scores


def integer_ids(qrels: dict, run: dict, rng: np.random.Generator) -> tuple[dict, dict]:
    """The case with every docno replaced by a distinct non-negative integer's text ("9" > "10" as strings)."""
    names = sorted({d for docs in (*qrels.values(), *run.values()) for d in docs})
    number = dict(zip(names, rng.permutation(len(names) * 7)[: len(names)].tolist(), strict=True))
    return (
        {q: {str(number[d]): v for d, v in docs.items()} for q, docs in qrels.items()},
        {q: {str(number[d]): v for d, v in docs.items()} for q, docs in run.items()},
    )


@pytest.mark.parametrize("seed", range(12))
def test_evaluate_equals_irspec_evaluate(seed: int, tmp_path) -> None:
    qrels, run = random_case(seed)
    ev = irspec.Evaluator(qrels, METRICS)
    for _ in range(2):  # again: nothing of the first call is kept that changes the second
        same(ev.evaluate(run), irspec.evaluate(qrels, run, METRICS))
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 0 {s!r} sys\n" for q, docs in run.items() for d, s in docs.items()))
    got, want = ev.evaluate(str(path)), irspec.evaluate(qrels, str(path), METRICS)
    same(got, want)
    assert (got.run_name, got.run_source, got.warnings) == (want.run_name, want.run_source, want.warnings)
    assert got.to_frame().equals(want.to_frame())
    many = ev.evaluate({"a": run, "b": str(path)})
    assert isinstance(many, irspec.ResultSet) and list(many) == ["a", "b"]
    for name in many:
        same(many[name], irspec.evaluate(qrels, {"a": run, "b": str(path)}, METRICS)[name])


@pytest.mark.parametrize(
    "options", [{"relevance_level": 2}, {"depth": 3}, {"judged_only": True}, {"missing_queries": "skip"}]
)
def test_options_are_those_of_irspec_evaluate(options: dict) -> None:
    qrels, run = random_case(7)
    same(
        irspec.Evaluator(qrels, METRICS, **options).evaluate(run),
        irspec.evaluate(qrels, run, METRICS, **options),
    )


@pytest.mark.parametrize("seed", range(10))
def test_topk_integer_ids_with_padding_equals_dicts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = integer_ids(*random_case(seed), rng)
    run = {q: docs for q, docs in run.items() if docs}  # an empty row is a query the run lacks
    qids, docs, scores = as_topk(run, rng, pad=-1)
    ev = irspec.Evaluator(qrels, METRICS)
    got = ev.evaluate_topk(np.array(qids), docs.astype(np.int64), scores)
    same(got, irspec.evaluate(qrels, run, METRICS))
    assert got.run_source == "<topk>"


@pytest.mark.parametrize("seed", range(10))
def test_topk_string_ids_through_corpus_positions_equals_dicts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = random_case(seed)
    run = {q: docs for q, docs in run.items() if docs}
    corpus = np.array(sorted({d for docs in run.values() for d in docs}) or ["unused"])
    position = {d: i for i, d in enumerate(corpus.tolist())}
    qids, docs, scores = as_topk(run, rng, pad="")
    index = np.vectorize(lambda d: position.get(d, -1), otypes=[np.int64])(docs)
    same(
        irspec.Evaluator(qrels, METRICS).evaluate_topk(qids, index, scores, corpus_ids=corpus),
        irspec.evaluate(qrels, run, METRICS),
    )


@pytest.mark.parametrize("seed", range(6))
def test_topk_full_rows_of_strings_equal_dicts(seed: int) -> None:
    """Rows of one length (a retriever's k), strings as numpy's fixed-width and as objects, float32 scores."""
    rng = np.random.default_rng(seed)
    qrels, run = random_case(seed, n_queries=8)
    k = 3
    run = {q: dict(list(docs.items())[:k]) for q, docs in run.items() if len(docs) >= k}
    assert run, "every seed here draws rankings of 3 documents or more"
    qids, docs, scores = as_topk(run, rng, pad="")
    scores32 = scores.astype(np.float32)
    want = irspec.evaluate(
        qrels, {q: {d: float(np.float32(s)) for d, s in docs_.items()} for q, docs_ in run.items()}, METRICS
    )
    ev = irspec.Evaluator(qrels, METRICS)
    same(ev.evaluate_topk(qids, docs.astype(str), scores32), want)
    same(ev.evaluate_topk(np.array(qids, dtype=object), docs, scores32), want)


class DLPackOnly:
    """An array seen only through DLPack, as a framework's tensor offers it (numpy's own capsule)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: object) -> object:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array.__dlpack_device__()


class ArrayLike:
    """An object numpy reads through ``__array__`` (pandas, a CPU torch tensor)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self._array if dtype is None else self._array.astype(dtype)


def test_topk_takes_dlpack_and_array_protocols() -> None:
    qrels = {"1": {"10": 1, "9": 2}, "2": {"7": 1}}
    ids = np.array([[10, 9, 3], [7, -1, -1]])
    scores = np.array([[0.5, 0.5, 0.9], [0.1, 0.0, 0.0]], dtype=np.float32)
    ev = irspec.Evaluator(qrels, "nDCG@10, P@2")
    want = irspec.evaluate(qrels, {"1": {"10": 0.5, "9": 0.5, "3": 0.9}, "2": {"7": 0.1}}, "nDCG@10, P@2")
    same(ev.evaluate_topk(np.array([1, 2]), DLPackOnly(ids), DLPackOnly(scores)), want)
    same(ev.evaluate_topk(ArrayLike(np.array([1, 2])), ArrayLike(ids), ArrayLike(scores)), want)


def test_topk_hand_checked() -> None:
    """Ties by docno descending as strings ("9" before "10"), -1 skipped, one query the qrels lack."""
    qrels = {"q": {"9": 1, "10": 1, "5": 0}}
    ev = irspec.Evaluator(qrels, "P@1, RR, AP, NumRet")
    res = ev.evaluate_topk(
        ["q", "other"],
        np.array([[10, -1, 9, 5], [1, 2, 3, 4]]),
        np.array([[1.0, 7.0, 1.0, 0.5], [1, 2, 3, 4.0]]),
    )
    # ranking of q: 9 (1.0, "9" > "10"), 10 (1.0), 5: relevant at ranks 1 and 2
    assert res.per_query() == {"q": {"P@1": 1.0, "RR": 1.0, "AP": 1.0, "NumRet": 3.0}}
    assert any("'other'" in w and "not in the qrels" in w for w in res.warnings)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_batches_combine_to_the_whole(seed: int, missing: str) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = integer_ids(*random_case(seed, n_queries=10), rng)
    run = {q: docs for q, docs in run.items() if docs}
    ev = irspec.Evaluator(qrels, METRICS, missing_queries=missing)
    qids = list(run)
    cut = sorted(rng.choice(len(qids) + 1, size=2).tolist())
    batches = [qids[: cut[0]], qids[cut[0] : cut[1]], qids[cut[1] :]]
    parts = []
    for i, batch in enumerate(batches):
        sub = {q: run[q] for q in batch}
        if i == 1:
            parts.append(ev.evaluate(sub))  # evaluate() and evaluate_topk() results combine alike
        else:
            q, d, s = as_topk(sub, rng, pad=-1)
            parts.append(ev.evaluate_topk(q, d.astype(np.int64), s))
    whole = ev.combine(parts)
    want = irspec.evaluate(qrels, run, METRICS, missing_queries=missing)
    same(whole, want)
    assert whole.to_frame().drop("run").equals(want.to_frame().drop("run"))
    assert whole.per_query() == want.per_query()
    assert whole.judged_at_10 == want.judged_at_10


def test_a_query_in_two_batches_is_refused() -> None:
    ev = irspec.Evaluator({"q1": {"a": 1}, "q2": {"b": 1}}, "AP")
    one = ev.evaluate_topk(["q1", "q2"], [["a"], ["b"]], [[1.0], [1.0]])
    two = ev.evaluate_topk(["q2"], [["c"]], [[1.0]])
    with pytest.raises(EvaluationError, match="query 'q2' is in result 0 and in result 1"):
        ev.combine([one, two])
    other = irspec.Evaluator({"q1": {"a": 1}}, "AP").evaluate_topk(["q1"], [["a"]], [[1.0]])
    with pytest.raises(EvaluationError, match="not made by this evaluator"):
        ev.combine([other])


@pytest.mark.parametrize(
    ("empty", "query"),
    [
        pytest.param(lambda ev: ev.evaluate({"q1": {}, "q2": {"b": 1.0}}), "q1", id="dict"),
        pytest.param(lambda ev: ev.evaluate({1: {}, 2: {"b": 1.0}}), "1", id="dict-integer-ids"),
        pytest.param(
            lambda ev: ev.evaluate_topk(["q1", "q2"], [[-1, -1], [7, -1]], [[0.0, 0.0], [1.0, 0.0]]),
            "q1",
            id="topk-all-minus-1",
        ),
        pytest.param(
            lambda ev: ev.evaluate_topk(["q1", "q2"], np.empty((2, 0), dtype=np.int64), np.empty((2, 0))),
            "q1",
            id="topk-no-columns",
        ),
    ],
)
@pytest.mark.parametrize("empty_first", [True, False])
def test_an_empty_ranking_in_one_batch_is_a_query_given(empty, query: str, empty_first: bool) -> None:
    # One call refuses a query given twice; two batches that give it twice, one of them as an empty
    # ranking, must too: taking the other batch's value would make the combination differ from any
    # single call on the same data.
    qrels = {"q1": {"a": 1}, "1": {"a": 1}, "q2": {"b": 1}, "2": {"b": 1}}
    ev = irspec.Evaluator(qrels, "AP")
    with pytest.raises(InputError, match="is given twice"):  # one call: refused
        ev.evaluate_topk([query, query], [[-1], [7]], [[0.0], [1.0]])
    gone = empty(ev)
    again = ev.evaluate_topk(["q1", "1"], [["a"], ["a"]], [[1.0], [1.0]])
    results, where = ([gone, again], 0) if empty_first else ([again, gone], 1)
    with pytest.raises(EvaluationError) as raised:
        ev.combine(results)
    assert str(raised.value) == (
        f"combine: query {query!r} is in result 0 and in result 1 "
        f"(as an empty ranking in result {where}, which is a query given too)"
    )


def test_missing_queries_error_is_told_by_the_whole() -> None:
    ev = irspec.Evaluator({"q1": {"a": 1}, "q2": {"b": 1}}, "AP", missing_queries="error")
    with pytest.raises(EvaluationError, match="missing from the run"):
        ev.evaluate_topk(["q1"], [["a"]], [[1.0]])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((["q"], [["a", "b"]], [[1.0, np.nan]]), "row 0, column 1: NaN score"),
        ((["q"], [["a", "b"]], [[1.0, np.inf]]), "row 0, column 1: infinite score"),
        (
            (["q", "r"], [["a", "b"], ["c", "c"]], [[1, 2], [3, 4]]),
            "query 'r': row 1: doc id 'c' is given twice",
        ),
        (
            (["q", "r"], [[1, -1, -1], [3, 5, 3]], [[1.0, 2.0, 3.0]] * 2),
            "query 'r': row 1: doc id '3' is given twice",
        ),
        ((["q"], np.array([[2**40, 7, 2**40]]), [[1.0, 2.0, 3.0]]), "doc id '1099511627776' is given twice"),
        ((["q", "q"], [["a"], ["b"]], [[1.0], [2.0]]), "query 'q' is given twice .rows 0 and 1."),
        ((["q"], [["a", "b"]], [[1.0]]), "shapes do not match"),
        ((["q", "r"], [["a"]], [[1.0]]), "shapes do not match"),
        ((["q"], [[["a"]]], [[[1.0]]]), "must be 2-D"),
        (([["q"]], [["a"]], [[1.0]]), "query_ids must be 1-D"),
        ((["q"], [[3, -2]], [[1.0, 2.0]]), "row 0, column 1: doc id -2"),
        (
            (["q"], [["a", None]], [[1.0, 2.0]]),
            r"row 0, column 1: doc ids must be strings \(or integers\), got None",
        ),
        ((["q"], [["a"]], [["high"]]), "scores must be numbers"),
        ((["q"], [[1.5]], [[1.0]]), "doc_ids must hold strings or integers"),
    ],
)
def test_topk_bad_input_names_the_row(args: tuple, message: str) -> None:
    ev = irspec.Evaluator({"q": {"a": 1}}, "AP")
    with pytest.raises(InputError, match=message):
        ev.evaluate_topk(*args)


def test_a_document_twice_among_padded_corpus_positions() -> None:
    # positions with -1 padding: the strings' path, its rows' documents where they stood in the matrix
    ev = irspec.Evaluator({"q": {"x": 1}}, "AP")
    corpus = ["x", "y", "z"]
    with pytest.raises(InputError, match="query 'r': row 1: doc id 'z' is given twice"):
        ev.evaluate_topk(["q", "r"], [[0, -1, 1], [2, -1, 2]], [[3.0, 0.0, 2.0]] * 2, corpus_ids=corpus)
    ev.evaluate_topk(
        ["q", "r"], [[0, -1, 1], [2, 1, -1]], [[3.0, 0.0, 2.0]] * 2, corpus_ids=corpus
    )  # no duplicate


def test_corpus_positions_beyond_the_corpus() -> None:
    ev = irspec.Evaluator({"q": {"a": 1}}, "AP")
    with pytest.raises(InputError, match=r"row 0, column 1: position 5 is beyond corpus_ids .2 ids."):
        ev.evaluate_topk(["q"], [[0, 5]], [[1.0, 0.5]], corpus_ids=["a", "b"])


def test_shared_between_threads() -> None:
    qrels, _ = random_case(3, n_queries=10)
    runs = [random_case(3, n_queries=10)[1]] + [random_case(s)[1] for s in range(20, 27)]
    ev = irspec.Evaluator(qrels, METRICS)
    want = [irspec.evaluate(qrels, r, METRICS) for r in runs]
    got: dict[int, irspec.Result] = {}

    def work(i: int) -> None:
        got[i] = ev.evaluate(runs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(runs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, w in enumerate(want):
        same(got[i], w)


def test_repr_says_what_it_holds() -> None:
    ev = irspec.Evaluator({"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}, "nDCG@10, AP", relevance_level=2)
    assert repr(ev) == (
        "Evaluator(qrels='<dict>': 2 queries, 3 judgments; metrics: nDCG@10, AP; relevance_level=2, "
        "missing_queries='zero')"
    )


def test_qrels_are_read_once(tmp_path) -> None:
    """The qrels file can go once the evaluator holds it: nothing reads it again."""
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\nq1 0 b 0\n")
    ev = irspec.Evaluator(str(path), "P@1")
    path.unlink()
    assert ev.evaluate({"q1": {"a": 2.0, "b": 1.0}}).aggregate() == {"P@1": 1.0}


def test_batches_evaluated_with_warn_false_leave_the_warnings_to_combine() -> None:
    """Each batch lacks the other batches' queries: it warned of them, once a batch, of a result about to
    be combined. With ``warn=False`` a batch keeps its warnings in its result and issues none; combine
    issues the whole's: of the three queries of the qrels, only q3 is in no batch."""
    ev = irspec.Evaluator({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}, "P@1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = ev.evaluate_topk(["q1"], [["a"]], [[1.0]], warn=False)
        second = ev.evaluate({"q2": {"b": 1.0}}, warn=False)
    assert caught == []
    assert "2 of the 3 queries of the qrels are missing from the run ('q2', 'q3')" in first.warnings[0]
    with pytest.warns(irspec.IrspecWarning) as issued:
        whole = ev.combine([first, second])
    assert [str(w.message) for w in issued] == list(whole.warnings)
    assert len(issued) == 1 and "1 of the 3 queries of the qrels is missing from the run ('q3')" in str(
        issued[0].message
    )
    assert whole.per_query() == {"q1": {"P@1": 1.0}, "q2": {"P@1": 1.0}, "q3": {"P@1": 0.0}}
    with pytest.warns(irspec.IrspecWarning, match=r"missing from the run \('q2', 'q3'\)"):
        ev.evaluate_topk(["q1"], [["a"]], [[1.0]])  # by default a batch warns as any result does
    with pytest.raises(EvaluationError, match="warn=False is for one run's batch"):
        ev.evaluate([{"q1": {"a": 1.0}}, {"q2": {"b": 1.0}}], warn=False)
