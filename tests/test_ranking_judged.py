"""A run whose queries are blocks not yet in order (a pytrec_eval dict) is ranked by placing only its
judged documents: each block's scores sorted and searched, ties among them broken by docno text.

The reference is the full ranking (every row put in order, ties by docno descending), which the engine
takes when too many judged documents tie; the differential tests hold both to trec_eval's and
pytrec_eval's values. A per-query plugin metric still sees every document in ranked order.
"""

from __future__ import annotations

import pytest
from randomdata import random_case
from test_topk_integer import METRICS, _quiet, same  # noqa: F401  (_quiet: an autouse fixture)

import irspec
import irspec.evaluation.ranking
from irspec.spec.registry import MetricDef


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("options", [{}, {"depth": 4}, {"judged_only": True}, {"relevance_level": 2}])
def test_placing_the_judged_equals_ranking_every_row(seed: int, options: dict, monkeypatch) -> None:
    qrels, run = random_case(seed)
    placed = irspec.evaluate(qrels, run, METRICS, **options)
    monkeypatch.setattr(irspec.evaluation.ranking, "_TIED_JUDGED", 0)  # every row put in order
    same(placed, irspec.evaluate(qrels, run, METRICS, **options))


@pytest.mark.parametrize("seed", range(8))
def test_scores_one_float32_apart_are_placed_exactly(seed: int, monkeypatch) -> None:
    # distinct doubles of one single-precision rounding (1.0 and 1.00000001): ranked by the doubles
    qrels, run = random_case(seed, near_ties=True)
    placed = irspec.evaluate(qrels, run, METRICS)
    monkeypatch.setattr(irspec.evaluation.ranking, "_TIED_JUDGED", 0)
    same(placed, irspec.evaluate(qrels, run, METRICS))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("near_ties", [False, True])
def test_the_exact_search_after_the_matrix_is_sorted_in_place(
    seed: int, near_ties: bool, monkeypatch
) -> None:
    # The float32 pass declined (as when many judged documents share a rounding): the caller's matrix is
    # sorted in place, so the tie groups must come from the rows as given (rows_of), not from the matrix.
    qrels, run = random_case(seed, near_ties=near_ties)
    monkeypatch.setattr(irspec.evaluation.ranking, "_coarse_places", lambda *args: None)
    exact = irspec.evaluate(qrels, run, METRICS)
    monkeypatch.setattr(irspec.evaluation.ranking, "_TIED_JUDGED", 0)  # every row put in order
    same(exact, irspec.evaluate(qrels, run, METRICS))


def test_ties_with_unjudged_documents_by_docno_text() -> None:
    # not in order (0.1 before 0.5); the 0.5 tie ranks d9 > d30 > d3 > d100 by text, descending
    run = {"q": {"low": 0.1, "d3": 0.5, "d100": 0.5, "d9": 0.5, "d30": 0.5, "top": 0.9}}
    qrels = {"q": {"d3": 1, "d100": 1, "top": 0}}
    res = irspec.evaluate(qrels, run, "RR, AP, P@3, NumRelRet")
    # ranking: top (0), d9, d30, d3 (1, rank 4), d100 (1, rank 5), low: RR 1/4, AP (1/4 + 2/5) / 2
    assert res.per_query()["q"] == {"RR": 1 / 4, "AP": (1 / 4 + 2 / 5) / 2, "P@3": 0.0, "NumRelRet": 2.0}


def recorder() -> tuple[dict[str, tuple], object]:
    """A plugin whose per-query metric ``Record`` keeps the ranking each query shows it (docnos, scores,
    labels) in the dict returned beside it, by query id."""
    seen: dict[str, tuple] = {}

    def record(query, metric):
        seen[query.query_id] = (query.docnos, query.scores, query.labels)
        return float(len(query.docnos))

    definition = MetricDef("Record", "the ranking a plugin sees", (), per_query=record)

    class Plugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(definition)

    return seen, Plugin()


def test_a_per_query_plugin_metric_sees_every_document_in_ranked_order(irspec_plugin) -> None:
    seen, plugin = recorder()
    metric = irspec_plugin(plugin).parse("Record")
    run = {"q": {"low": 0.1, "d3": 0.5, "d100": 0.5, "d9": 0.5, "top": 0.9}, "r": {"b": 0.2, "a": 0.7}}
    irspec.evaluate({"q": {"d3": 1, "top": 0}, "r": {"b": 2}}, run, metric)
    assert seen["q"] == (
        ("top", "d9", "d3", "d100", "low"),
        (0.9, 0.5, 0.5, 0.5, 0.1),
        (0, None, 1, None, None),
    )
    assert seen["r"] == (("a", "b"), (0.7, 0.2), (None, 2))


# --------------------------------------------------------------------------------------------------
# A run file's ties put in docno order only where they hold a judged document (build_context: the
# labels in a tie of unjudged documents are the same in any order). The reference is the full ranking
# (every tie ordered), the same evaluation with the mask of judged rows dropped.


def _trec_text(run: dict, order: str, rng) -> str:
    """``run`` as TREC lines: ``grouped`` (each query's lines together, scores descending, ties in a
    random order), ``blocks`` (each query's lines together, in a random order) or ``scattered``."""
    lines = []
    for q, docs in run.items():
        items = list(docs.items())
        rng.shuffle(items)
        if order == "grouped":
            items.sort(key=lambda item: -item[1])
        lines += [f"{q} Q0 {d} {r + 1} {s!r} t\n" for r, (d, s) in enumerate(items)]
    if order == "scattered":
        rng.shuffle(lines)
    return "".join(lines)


def _every_tie_ordered(monkeypatch) -> None:
    rank = irspec.evaluation.ranking._rank
    monkeypatch.setattr(
        irspec.evaluation.ranking,
        "_rank",
        lambda codes, lengths, scores, docnos, wanted=None: rank(codes, lengths, scores, docnos),
    )


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("order", ["grouped", "blocks", "scattered"])
@pytest.mark.parametrize("options", [{}, {"depth": 4}, {"judged_only": True}, {"relevance_level": 2}])
def test_ties_ordered_only_where_judged_equal_every_tie_ordered(seed, order, options, tmp_path, monkeypatch):
    import numpy as np

    qrels, run = random_case(seed)
    # scores of one decimal: most documents tie, judged and unjudged, with graded and negative labels
    run = {q: {d: round(s, 1) for d, s in docs.items()} for q, docs in run.items()}
    path = tmp_path / "run.txt"
    path.write_text(_trec_text(run, order, np.random.default_rng(seed)))
    judged = irspec.evaluate(qrels, str(path), METRICS, **options)
    _every_tie_ordered(monkeypatch)
    same(judged, irspec.evaluate(qrels, str(path), METRICS, **options))


def test_a_per_query_plugin_metric_sees_every_tie_of_a_run_file_in_docno_order(irspec_plugin, tmp_path):
    seen, plugin = recorder()
    metric = irspec_plugin(plugin).parse("Record")
    # in order; the 0.5 tie holds unjudged documents only (d9, d30, d100 by text: d9, d30, d100)
    path = tmp_path / "run.txt"
    path.write_text(
        "q Q0 top 1 0.9 t\nq Q0 d100 2 0.5 t\nq Q0 d9 3 0.5 t\nq Q0 d30 4 0.5 t\nq Q0 j 5 0.1 t\n"
    )
    irspec.evaluate({"q": {"top": 1, "j": 0}}, str(path), metric)
    assert seen["q"] == (
        ("top", "d9", "d30", "d100", "j"),
        (0.9, 0.5, 0.5, 0.5, 0.1),
        (1, None, None, None, 0),
    )


@pytest.mark.parametrize("needles", [0, 1, 63, 64, 65, 4_500])
@pytest.mark.parametrize("haystack", [0, 1, 5_000])
def test_the_search_of_hashed_keys_finds_numpys_places(needles: int, haystack: int) -> None:
    """``_search`` sorts the needles first (numpy searches unsorted ones several times slower): the
    places are numpy's own, for 64-bit keys with the top bit set, needles repeated, below, between and
    above the haystack's keys, and keys found exactly."""
    import numpy as np

    rng = np.random.default_rng(needles * 7 + haystack)
    keys = np.sort(rng.integers(0, 2**64, haystack, dtype=np.uint64, endpoint=False))
    found = keys[rng.integers(0, haystack, needles // 2)] if haystack else np.zeros(0, dtype=np.uint64)
    others = rng.integers(0, 2**64, needles - len(found), dtype=np.uint64, endpoint=False)
    wanted = np.concatenate((found, others, found[:3]))
    rng.shuffle(wanted)
    places = irspec.evaluation.ranking._search(keys, wanted)
    assert places.tolist() == np.searchsorted(keys, wanted).tolist()
