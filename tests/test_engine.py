"""The engine's options, query handling and the per-query plugin form, on hand-checkable data."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irspec
import irspec.data
import irspec.evaluation.evaluate
import irspec.evaluation.index
import irspec.evaluation.ranking
from irspec.evaluation.context import Options
from irspec.spec.plugins import build_registry, get_plugin_manager
from irspec.spec.registry import MetricDef, Param

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": -1}, "q2": {"x": 1}, "q3": {"y": 0}}
RUN = {
    "q1": {"a": 0.9, "b": 0.8, "u": 0.8, "c": 0.1},  # ties b/u: docno descending puts u before b
    "q2": {"z": 1.0, "x": 0.5},
    "q9": {"k": 1.0},  # not in the qrels
}


def test_tie_break_is_docno_descending():
    # ranking of q1: a(2), u(unjudged), b(0), c(1): relevant at ranks 1 and 4
    res = irspec.evaluate(QRELS, RUN, ["AP", "P@2", "RR", "unj@2"], missing_queries="skip")
    q1 = res.per_query()["q1"]
    assert q1["AP"] == pytest.approx((1 / 1 + 2 / 4) / 2)
    assert q1["P@2"] == pytest.approx(0.5)
    assert q1["unj@2"] == pytest.approx(0.5)


def test_missing_queries_zero_counts_them_in_the_mean():
    res = irspec.evaluate(QRELS, RUN, ["P@1", "NumQ", "NumRel"])
    assert res.query_ids == ("q1", "q2", "q3")
    assert res.per_query()["q3"] == {"P@1": 0.0, "NumQ": 1.0, "NumRel": 0.0}
    assert res.aggregate()["P@1"] == pytest.approx(1 / 3)
    assert res.aggregate()["NumQ"] == 3


def test_a_missing_query_scores_what_its_empty_ranking_scores():
    """trec_eval -c evaluates a qrels query the run lacks on an empty ranking (trec_eval.c's bogus_ranking):
    each measure's own rule for an empty ranking decides, not a blanket 0. q2 has x (1), w (3) and v (0)
    judged, so R = 2 at level 1 and the ideal ranking is w, x, v."""
    qrels = {"q1": {"a": 1}, "q2": {"x": 1, "w": 3, "v": 0}}
    res = irspec.evaluate(
        qrels,
        {"q1": {"a": 1.0, "b": 0.5}},
        ["P@5", "AP", "NumQ", "NumRel", "Accuracy", "SL", "yaap", "IDCG", "NumRet"],
    )
    q2 = res.per_query()["q2"]
    assert q2["P@5"] == 0.0 and q2["AP"] == 0.0 and q2["NumRet"] == 0.0
    assert q2["NumQ"] == 1.0 and q2["NumRel"] == 2.0
    # Accuracy: no pair of a relevant and a non-relevant document to order, undefined, so left out of the
    # mean (q1: a above the unjudged b, 1), where a 0 would rank retrieving nothing below retrieving junk
    assert math.isnan(q2["Accuracy"]) and res.aggregate()["Accuracy"] == 1.0
    # SL: nothing relevant retrieved in a ranking of n = 0 documents: n + 1 = 1, never 0 (the best value)
    assert q2["SL"] == 1.0
    # yaap: m_yaap.c's log((1 + 0) / (1 + R - 0)) on the empty ranking
    assert q2["yaap"] == pytest.approx(math.log(1 / 3), abs=1e-15)
    # IDCG: a property of the judgments: gains 3, 1, 0 at ranks 1..3, log2 discounts
    assert q2["IDCG"] == pytest.approx(3 / math.log2(2) + 1 / math.log2(3), abs=1e-12)


def test_missing_queries_skip_and_error():
    res = irspec.evaluate(QRELS, RUN, "P@1", missing_queries="skip")
    assert res.query_ids == ("q1", "q2")
    with pytest.raises(irspec.EvaluationError, match="q3"):
        irspec.evaluate(QRELS, RUN, "P@1", missing_queries="error")


def test_run_queries_absent_from_qrels_are_reported():
    res = irspec.evaluate(QRELS, RUN, "P@1")
    assert any("1 query not in the qrels" in w for w in res.warnings)


def test_relevance_level_and_rel_parameter():
    res = irspec.evaluate(QRELS, RUN, ["NumRel", "NumRel(rel=1)"], relevance_level=2, missing_queries="skip")
    assert res.per_query()["q1"] == {"NumRel": 1.0, "NumRel(rel=1)": 2.0}


def test_depth_and_judged_only():
    res = irspec.evaluate(QRELS, RUN, ["NumRet", "P"], depth=2, missing_queries="skip")
    assert res.per_query()["q1"] == {"NumRet": 2.0, "P": 0.5}
    res = irspec.evaluate(QRELS, RUN, ["NumRet", "RR"], judged_only=True, missing_queries="skip")
    # q1 without u: a, b, c; q2 without z: x first
    assert res.per_query()["q1"]["NumRet"] == 3
    assert res.per_query()["q2"]["RR"] == 1.0


def test_judged_only_emptied_ranking_is_defined():
    res = irspec.evaluate(
        {"q": {"a": 1}}, {"q": {"zz": 1.0}}, ["IPrec@0.5", "11pt", "P@5", "nDCG"], judged_only=True
    )
    assert res.per_query()["q"] == {"IPrec@0.5": 0.0, "11pt": 0.0, "P@5": 0.0, "nDCG": 0.0}


def test_all_negative_labels_give_zero():
    res = irspec.evaluate(
        {"q": {"a": -1, "b": -2}}, {"q": {"a": 1.0, "b": 0.5}}, ["AP", "nDCG", "Bpref", "infAP"]
    )
    assert all(v == 0.0 for v in res.per_query()["q"].values())


def test_per_query_values_from_r_expressions():
    # q1: R = 2 (a, c); P@R = relevant in top 2 / 2 = 0.5; q2: R = 1, ranking z, x: P@R = 0
    res = irspec.evaluate(QRELS, RUN, "P@R", missing_queries="skip")
    assert res.column("P@R").tolist() == [0.5, 0.0]


def test_sl_unfound_skip_is_left_out_of_the_mean():
    res = irspec.evaluate(
        {"a": {"x": 1}, "b": {"y": 1}}, {"a": {"x": 1.0}, "b": {"z": 1.0}}, ["SL", "SL(unfound=skip)"]
    )
    assert res.per_query()["b"]["SL"] == 2.0
    assert math.isnan(res.per_query()["b"]["SL(unfound=skip)"])
    assert res.aggregate()["SL(unfound=skip)"] == 1.0


def test_fallout_needs_collection_size():
    with pytest.raises(irspec.EvaluationError, match="collection size"):
        irspec.evaluate(QRELS, RUN, "Fallout")
    res = irspec.evaluate(QRELS, RUN, "Fallout@2", collection_size=10, missing_queries="skip")
    assert res.per_query()["q1"]["Fallout@2"] == pytest.approx(1 / 8)  # u is non-relevant; 10 - R(2)


def test_bad_options_are_errors():
    # level 0 and depth 0 are trec_eval's -l 0 and -M 0 (tests/test_trec_exact.py); below 0 they are errors
    for kwargs in (
        {"relevance_level": -1},
        {"depth": -1},
        {"relevance_level": True},
        {"missing_queries": "maybe"},
    ):
        with pytest.raises(irspec.EvaluationError):
            Options(**kwargs)


def test_per_query_function_plugin_matches_vectorised_kernel():
    """A third party's simple per-query function goes through the same engine."""

    def precision_at(query, metric):
        k = metric.get("k")
        top = query.labels[:k]
        return sum(1 for v in top if v is not None and v >= query.relevance_level) / k

    definition = MetricDef(
        "SlowP",
        "precision, per query",
        (Param("k", "int", 10, "cutoff", minimum=1),),
        at="k",
        per_query=precision_at,
    )

    class Plugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(definition)

    pm = get_plugin_manager(load_entry_points=False)
    pm.register(Plugin(), name="slow")
    registry = build_registry(pm)
    slow = registry.parse("SlowP@2")
    fast = registry.parse("P@2")
    res = irspec.evaluate(QRELS, RUN, slow + fast, missing_queries="skip")
    assert res.column("SlowP@2").tolist() == res.column("P@2").tolist()


def test_presorted_and_shuffled_runs_rank_alike(tmp_path):
    """A run file already in score order (blocks out of query order, tied scores) takes the engine's
    presorted path; the same lines shuffled take the general sort. Both must give trec_eval's ranking."""
    import random

    rng = random.Random(7)
    qrels_lines, run_lines = [], []
    for q in ("q10", "q2", "q1"):  # file order differs from the string order of query ids
        docs = [f"d{i:03d}" for i in range(40)]
        for d in docs:
            if rng.random() < 0.4:
                qrels_lines.append(f"{q} 0 {d} {rng.randint(0, 3)}")
        scores = sorted((rng.choice([1.0, 0.5, 0.25, 0.125]) for _ in docs), reverse=True)
        run_lines += [
            f"{q} Q0 {d} {r} {s} tag" for r, (d, s) in enumerate(zip(docs, scores, strict=True), start=1)
        ]
    (tmp_path / "qrels").write_text("\n".join(qrels_lines) + "\n")
    (tmp_path / "sorted.run").write_text("\n".join(run_lines) + "\n")
    shuffled = run_lines[:]
    rng.shuffle(shuffled)
    (tmp_path / "shuffled.run").write_text("\n".join(shuffled) + "\n")
    specs = ["AP", "nDCG@10", "P@5", "RR", "relstring@12"]
    a = irspec.evaluate(tmp_path / "qrels", tmp_path / "sorted.run", specs).per_query()
    b = irspec.evaluate(tmp_path / "qrels", tmp_path / "shuffled.run", specs).per_query()
    assert a == b
    # trec_eval's order by hand for q2: score descending, then docno descending among equal scores.
    labels = {d: int(v) for q, _, d, v in (line.split() for line in qrels_lines) if q == "q2"}
    rows = [line.split() for line in run_lines if line.startswith("q2 ")]
    ranked = sorted(rows, key=lambda r: (-float(r[4]), [-ord(c) for c in r[2]]))
    expected = "".join(str(labels[r[2]]) if r[2] in labels else "-" for r in ranked[:12])
    assert a["q2"]["relstring@12"] == expected


def _slow_precision_registry():
    """A registry with a per-query plugin metric (SlowP), which reads the ranked rows themselves."""

    def precision_at(query, metric):
        k = metric.get("k")
        return sum(1 for v in query.labels[:k] if v is not None and v >= query.relevance_level) / k

    class Plugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(
                MetricDef(
                    "SlowP",
                    "precision",
                    (Param("k", "int", 10, "cutoff", minimum=1),),
                    at="k",
                    per_query=precision_at,
                )
            )

    pm = get_plugin_manager(load_entry_points=False)
    pm.register(Plugin(), name="slow")
    return build_registry(pm)


@pytest.mark.parametrize("seed", range(40))
def test_results_do_not_depend_on_the_order_of_run_lines(seed):
    """The engine ranks a run file already in trec_eval's order by moving only its tied rows, and
    anything else by a full sort; queries come out in id order either way. The same run given in
    dict order, in score order with its queries shuffled, and with every line shuffled (queries
    interleaved, some absent from the qrels) must give identical results, under every option."""
    import polars as pl
    from randomdata import random_case

    rng = np.random.default_rng(seed)
    qrels, run = random_case(seed)
    queries = list(run)
    rng.shuffle(queries)
    # scores descending, tied documents in random order (as a run file's rank column may have them)
    presorted = {
        q: dict(sorted(((d, run[q][d]) for d in rng.permutation(list(run[q]))), key=lambda x: -x[1]))
        for q in queries
    }
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rows = [rows[i] for i in rng.permutation(len(rows))]
    interleaved = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    metrics = _slow_precision_registry().parse(
        "AP nDCG@10 P@5 SlowP@5 RR bpref Rprec infAP relstring@10 NumRet"
    )
    for options in (
        Options(),
        Options(depth=3),
        Options(judged_only=True, relevance_level=2),
        Options(depth=7, judged_only=True, missing_queries="skip"),
    ):
        results = [
            irspec.evaluation.evaluate.evaluate_many(qrels, [r], metrics, options=options)[0]
            for r in (run, presorted, irspec.data.Run.from_frame(interleaved))
        ]
        first = results[0]
        assert list(first.query_ids) == sorted(first.query_ids)
        for other in results[1:]:
            assert other.query_ids == first.query_ids
            assert other.texts == first.texts
            np.testing.assert_array_equal(other.values, first.values)


def test_rows_seg_and_rank_without_the_per_row_arrays():
    """seg_of, rank_of and top_rows work from the segment bounds; they must agree with the per-row
    arrays, empty rankings included (judged_only empties q2 here, and q3 is missing from the run)."""
    from irspec.evaluation.index import index_qrels
    from irspec.evaluation.ranking import build_context

    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"u": 1.0}, "q4": {"d": 1.0, "e": 0.5}}
    qrels = {"q1": {"a": 1, "c": 0}, "q2": {"x": 1}, "q3": {"y": 1}, "q4": {"d": 0, "e": 2}}
    options = Options(judged_only=True)
    ctx, _ = build_context(index_qrels(irspec.data.read_qrels(qrels)), irspec.data.read_run(run), options)
    assert ctx.query_ids == ["q1", "q2", "q4", "q3"]  # run order, then the missing queries
    assert ctx.n.tolist() == [2, 0, 2, 0]
    rows = np.array([3, 0, 2, 1])
    mask = np.array([True, False, False, True])
    seg, rank = ctx.seg_of(rows).tolist(), ctx.rank_of(rows).tolist()
    mask_seg, mask_rank = ctx.seg_of(mask).tolist(), ctx.rank_of(mask).tolist()
    top = ctx.top_rows(np.array([1, 5, 0, 2])).tolist()
    assert "seg" not in vars(ctx) and "rank" not in vars(ctx)  # nothing so far built the per-row arrays
    assert ctx.seg.tolist() == [0, 0, 2, 2] and ctx.rank.tolist() == [1, 2, 1, 2]
    assert (seg, rank) == ([2, 0, 2, 0], [2, 1, 1, 2])
    assert (mask_seg, mask_rank) == ([0, 2], [1, 2])
    assert top == [0]  # k=1 in q1, q2 is empty, k=0 in q4
    assert ctx.top(np.array([2, 2, 1, 2])).tolist() == [True, True, True, False]


@pytest.mark.parametrize("weak", ["query_only", "docno_only"])
def test_hash_collisions_fall_back_to_the_strings(monkeypatch, weak):
    """The join works on 64-bit hashes of (query, docno) but never trusts them: with a hash that
    collides for every document of a query (the qrels keys are not unique) or across queries (a run
    row matches a judgment of another query), results must not change."""

    from randomdata import random_case

    qrels, run = random_case(3, n_queries=8)
    # docnos unique across queries (so that hashing the docno alone gives unique qrels keys), and the
    # first query retrieves documents judged for another one
    qrels = {q: {f"{q}/{d}": v for d, v in docs.items()} for q, docs in qrels.items()}
    run = {q: {f"{q}/{d}": s for d, s in docs.items()} for q, docs in run.items()}
    first, other = [q for q in run if q in qrels][:2]
    run[first].update(dict.fromkeys(list(qrels[other])[:3], 0.5))
    metrics = ["AP", "nDCG@10", "P@5", "bpref", "relstring@10"]
    expected = irspec.evaluate(qrels, run, metrics).per_query()

    def weak_keys(frame, blocks=None):
        column = "query" if weak == "query_only" else "docno"
        return frame.get_column(column).hash().to_numpy()

    monkeypatch.setattr(irspec.data, "pair_keys", weak_keys)  # for the reader's keys of the run
    monkeypatch.setattr(irspec.evaluation.index, "pair_keys", weak_keys)  # for the index of the qrels
    monkeypatch.setattr(irspec.evaluation.ranking, "pair_keys", weak_keys)  # for a run read without keys
    irspec.evaluation.index._INDEX_CACHE.clear()
    q, r = irspec.data.read_qrels(qrels), irspec.data.read_run(run)
    np.testing.assert_array_equal(r.keys, weak_keys(r.frame))  # the weak hash is in use
    assert irspec.evaluation.index.index_qrels(q).keys_unique == (weak == "docno_only")
    assert irspec.evaluate(q, r, metrics).per_query() == expected


@pytest.mark.parametrize("high", [5, 2**16, 2**20, 2**32 - 1])
def test_stable_argsort_of_query_codes_matches_numpys_stable_sort(high):
    from irspec.evaluation.ranking import _stable_argsort

    codes = np.random.default_rng(high % 1000).integers(0, high, 20_000, dtype=np.int64)
    np.testing.assert_array_equal(_stable_argsort(codes), np.argsort(codes, kind="stable"))
    assert len(_stable_argsort(codes[:0])) == 0


@pytest.mark.parametrize("seed", range(6))
def test_query_codes_by_lookup_and_by_join_agree(monkeypatch, seed):
    """build_context finds a run's query codes by dict lookups for up to _FEW_BLOCKS blocks and by a join
    above: the two paths give the same results (a shuffled run has a block per row, so both are used)."""
    from randomdata import random_case

    qrels, run = random_case(seed)
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rows = [rows[i] for i in np.random.default_rng(seed).permutation(len(rows))]  # queries scattered
    frame = {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], "score": [r[2] for r in rows]}
    import polars as pl

    shuffled = pl.DataFrame(frame)
    metrics = "AP, nDCG@10, P@5, bpref, NumRet, relstring@10"
    by_lookup = irspec.evaluate(qrels, shuffled, metrics)
    monkeypatch.setattr(irspec.evaluation.ranking, "_FEW_BLOCKS", 0)
    by_join = irspec.evaluate(qrels, shuffled, metrics)
    assert by_join.per_query() == by_lookup.per_query()
    assert by_join.per_query() == irspec.evaluate(qrels, run, metrics).per_query()
