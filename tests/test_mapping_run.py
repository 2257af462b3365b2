"""A run given as pytrec_eval's dicts is evaluated from its dicts (``irspec.data.MappingRun``): its
scores read as the frame's score column, each query's judged documents looked up in its own dict and
placed among its scores, its docnos made a column only when something needs them.

The reference is the same run read by ``irspec.read_run`` (a :class:`~irspec.Run`, every docno a row of
its frame), which the engine ranks as it ranks a file; the differential tests hold that path to
trec_eval's and pytrec_eval's values. Inputs the dict reader refuses or converts raise or read as they
did before.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from randomdata import _pool
from test_ranking_judged import recorder
from test_topk_integer import METRICS, _quiet, same  # noqa: F401  (_quiet: an autouse fixture)

import irspec
import irspec.data
import irspec.evaluation.ranking
from irspec.data import mapping_run

_PALETTE = [0.0, -0.0, 1.0, -1.0, 0.5, 2.25, 1e-3, 10.0, -0.5, 3.0]
_NEAR = [1.0, 1.0000000000000002, 1.00000001, 0.3, 0.1 + 0.2, 2.0, 2.0000001]


def dict_case(seed: int, *, ties: str = "palette", width: int = 40) -> tuple[dict, dict]:
    """Queries of ``width/2 + 1`` to ``width`` documents (so the dicts are read from the dicts, not
    as a frame), docnos whose text order is not numeric, labels -1..4 on retrieved documents and on
    others, scores from a small palette (``ties="palette"``: most documents tie, judged with
    unjudged), distinct doubles of one float32 (``"near"``) or random (``"none"``); a query only in
    the qrels, one only in the run, one with an empty dict, one with no relevant document."""
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    run: dict = {}
    for i in range(int(rng.integers(4, 9))):
        q = f"q{i}" if i % 3 else str(i * 7)
        n = int(rng.integers(width // 2 + 1, width + 1))
        pool = _pool(rng, n + 10)
        if ties == "palette":
            scores = rng.choice(_PALETTE, n).tolist()
        elif ties == "near":
            scores = rng.choice(_NEAR, n).tolist()
        else:
            scores = rng.random(n).tolist()
        run[q] = dict(zip(pool[:n], scores, strict=True))
        judged = rng.choice(pool, min(int(rng.integers(1, 20)), len(pool)), replace=False).tolist()
        qrels[q] = {d: int(rng.choice([-1, 0, 0, 1, 2, 3, 4])) for d in judged}
    qrels["qrels-only"] = {"x1": 1, "x2": 0}
    run["run-only"] = {"y1": 0.5, "y2": 0.7}
    run["empty"] = {}
    qrels["empty"] = {"z": 1}
    first = next(iter(qrels))
    qrels[first] = dict.fromkeys(qrels[first], 0)  # nothing relevant
    return qrels, run


@pytest.fixture
def reads(monkeypatch) -> list:
    """Every dict read as a Run (the frame's path), recorded; not the empty one that the qrels queries
    a run lacks are scored with."""
    made: list = []
    from_dict = irspec.data.Run.from_dict.__func__

    def recorded(cls, d, name="run"):
        if d:
            made.append(d)
        return from_dict(cls, d, name)

    monkeypatch.setattr(irspec.data.Run, "from_dict", classmethod(recorded))
    return made


def frame_path(qrels: dict, run: dict, metrics: str = METRICS, **options) -> irspec.Result:
    return irspec.evaluate(qrels, irspec.read_run(run), metrics, **options)


OPTIONS = [
    {},
    {"depth": 4},
    {"depth": 0},
    {"judged_only": True},
    {"relevance_level": 2},
    {"missing_queries": "skip"},
]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("ties", ["palette", "near", "none"])
@pytest.mark.parametrize("options", OPTIONS)
def test_dicts_equal_the_frame_path(seed: int, ties: str, options: dict, reads: list) -> None:
    qrels, run = dict_case(seed, ties=ties)
    placed = irspec.evaluate(qrels, run, METRICS, **options)
    assert reads == []  # read from the dicts: no frame made
    same(placed, frame_path(qrels, run, **options))


@pytest.mark.parametrize("width", [1, 2, 3, 300])
@pytest.mark.parametrize("options", [{}, {"depth": 2}, {"judged_only": True}])
def test_rankings_of_every_length_equal_the_frame_path(width: int, options: dict, reads: list) -> None:
    for seed in range(3):
        qrels, run = dict_case(seed, width=width)
        placed = irspec.evaluate(qrels, run, METRICS, **options)
        assert reads == []
        same(placed, frame_path(qrels, run, **options))
        reads.clear()


@pytest.mark.parametrize("seed", range(6))
def test_dicts_already_ranked_equal_the_frame_path(seed: int, reads: list) -> None:
    # each dict in descending order of score (a ranking turned into a dict): ranked, ties left in place
    qrels, run = dict_case(seed)
    run = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])) for q, docs in run.items()}
    placed = irspec.evaluate(qrels, run, METRICS)
    assert reads == []
    same(placed, frame_path(qrels, run))


@pytest.mark.parametrize("seed", range(6))
def test_many_tied_judged_documents_take_the_frame_path(seed: int, reads: list, monkeypatch) -> None:
    qrels, run = dict_case(seed)
    reference = frame_path(qrels, run)
    monkeypatch.setattr(irspec.evaluation.ranking, "_TIED_JUDGED", 0)
    reads.clear()
    same(irspec.evaluate(qrels, run, METRICS), reference)
    assert len(reads) == 1  # the frame made, once


def test_rankings_of_very_unequal_lengths_take_the_frame_path(reads: list) -> None:
    """A matrix of the blocks would be mostly padding, and large (more than _SMALL_MATRIX entries)."""
    qrels, run = dict_case(3)
    run["long"] = {f"l{i}": float(i % 7) for i in range(70_000)}
    qrels["long"] = {"l3": 2, "l10": 1, "l400": 0, "l69999": 3, "nowhere": 1}
    placed = irspec.evaluate(qrels, run, METRICS)
    assert len(reads) == 1
    same(placed, frame_path(qrels, run))


def test_small_rankings_of_unequal_lengths_are_read_from_their_dicts(reads: list) -> None:
    """Mostly padding, but a small matrix: cheaper than the run's frame. Most documents tie, so their
    docnos are taken for the ties, all at once."""
    for seed in range(4):
        reads.clear()  # (the frame path's own reading, below)
        qrels, run = dict_case(seed)
        run["long"] = {f"l{i}": float(i % 7) for i in range(500)}
        run["short"] = {"s1": 1.0}
        qrels["long"] = {"l3": 2, "l10": 1, "l400": 0, "nowhere": 1}
        qrels["short"] = {"s1": 1, "s2": 2}
        placed = irspec.evaluate(qrels, run, METRICS)
        assert reads == []
        same(placed, frame_path(qrels, run))


def test_a_single_document_and_a_qrels_without_the_runs_queries() -> None:
    for qrels, run in [
        ({"q": {"a": 1}}, {"q": {"a": 0.5}}),
        ({"q": {"a": 1}}, {"r": {"a": 0.5}}),
        ({"q": {"a": 1}, "r": {"b": 2}}, {"q": {"b": 0.5}, "r": {"b": 0.1, "c": 0.1}}),
    ]:
        same(irspec.evaluate(qrels, run, METRICS), frame_path(qrels, run))


def test_scores_of_mixed_types_convert_as_the_frame_reads_them(reads: list) -> None:
    qrels = {"q": {"a": 1, "b": 2, "c": 0, "d": 1}, "r": {"x": 1, "y": 1}}
    big = 2**62 + 1  # not a double: rounded the same way wherever it is read
    for run in [
        {
            "q": {"a": 1.0, "b": 2, "c": True, "d": np.float32(0.1), "e": np.int64(big)},
            "r": {"x": 3, "y": 3.0},
        },
        {"q": {"a": 1, "b": 2, "c": big, "d": big + 1, "e": 0}, "r": {"x": 3, "y": 3}},
        {"q": {"a": np.float64(0.5), "b": 0.5, "c": 0.25, "d": 1e300}, "r": {"x": -0.0, "y": 0.0}},
    ]:
        reads.clear()
        placed = irspec.evaluate(qrels, run, METRICS)
        assert reads == []
        same(placed, frame_path(qrels, run))


@pytest.mark.parametrize(
    "run",
    [
        {"q": {"a": 1.0, 7: 0.5}},  # an integer docno: its decimal text
        {"q": {"a": 1.0, "7": 0.5}, 3: {"a": 1.0}},  # an integer query id
        {"q": {"b": np.float32(1.5), "a": 2.0}},  # float32 scores first: not read from the dicts
        {"q": {"a": 2**70, "b": 1.0}},  # an integer beyond 64 bits first
    ],
)
def test_ids_and_scores_the_dict_reader_converts_read_as_before(run: dict) -> None:
    assert mapping_run(run) is None
    qrels = {"q": {"a": 1, "7": 2}, "3": {"a": 1}}
    same(irspec.evaluate(qrels, run, METRICS), frame_path(qrels, run))


@pytest.mark.parametrize(
    "run",
    [
        {"q": {"a": 1.0, "b": math.nan}},
        {"q": {"a": 1.0, "b": math.inf}},
        {"q": {"a": 1.0, "b": "0.5"}},
        {"q": {"a": 1.0, "b": None}},
        {"q": {"a": True, "b": False}},
        {"q": {"a": 1.0, (1, 2): 0.5}},
        {"q": {"a": 1.0, "1": 0.5, 1: 0.25}},
        {"q": {"a": 1.0}, "r": [("a", 1.0)]},
        {("q",): {"a": 1.0}},
    ],
)
def test_what_the_dict_reader_refuses_is_refused_as_before(run: dict) -> None:
    with pytest.raises(irspec.IrspecError) as before:
        irspec.read_run(run)
    with pytest.raises(irspec.IrspecError) as now:
        irspec.evaluate({"q": {"a": 1}}, run, METRICS)
    assert str(now.value) == str(before.value)
    assert type(now.value) is type(before.value)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", [{}, {"depth": 5}, {"judged_only": True}])
def test_a_per_query_plugin_metric_sees_the_frame_paths_ranking(
    seed: int, options: dict, irspec_plugin
) -> None:
    # the run has a query the qrels lack: the frame made for the plugin leaves its rows out
    qrels, run = dict_case(seed)
    seen, plugin = recorder()
    metrics = irspec_plugin(plugin).parse("Record, " + METRICS)
    placed = irspec.evaluate(qrels, run, metrics, **options)
    from_dicts = dict(seen)
    seen.clear()
    reference = irspec.evaluate(qrels, irspec.read_run(run), metrics, **options)
    assert from_dicts == seen
    same(placed, reference)


@pytest.mark.parametrize("seed", range(4))
def test_an_evaluator_reused_and_batches_equal_the_frame_path(seed: int) -> None:
    qrels, run = dict_case(seed, ties="near")
    ev = irspec.Evaluator(qrels, METRICS)
    for _ in range(2):
        same(ev.evaluate(run), frame_path(qrels, run))
    queries = list(run)
    half = len(queries) // 2
    parts = [
        ev.evaluate({q: run[q] for q in queries[:half]}),
        ev.evaluate({q: run[q] for q in queries[half:]}),
    ]
    same(ev.combine(parts), frame_path(qrels, run))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("level", [1, 2])
def test_the_pytrec_eval_module_equals_the_frame_path(seed: int, flag: bool, level: int) -> None:
    import irspec.compat.pytrec_eval as compat

    qrels, run = dict_case(seed)
    measures = {"ndcg_cut.10", "map", "recall.100", "P.5", "recip_rank", "bpref", "num_ret"}
    ev = compat.RelevanceEvaluator(qrels, measures, relevance_level=level, judged_docs_only_flag=flag)
    got = ev.evaluate(run)
    reference = irspec.evaluate(
        qrels,
        irspec.read_run({q: docs for q, docs in run.items() if docs and q in qrels}),
        "nDCG@10, AP, R@100, P@5, RR, bpref, NumRet",
        relevance_level=level,
        judged_only=flag,
        missing_queries="skip",
    ).per_query()
    for q, row in reference.items():
        assert [
            got[q][k] for k in ("ndcg_cut_10", "map", "recall_100", "P_5", "recip_rank", "bpref", "num_ret")
        ] == list(row.values())


def test_scores_beyond_single_precision_are_placed_without_a_warning() -> None:
    # placed by their float32 roundings first (inf beyond 3.4e38): order kept, numpy's overflow silent
    run = {"q": {"a": 1e300, "b": -1e300, "c": 1e299, "d": 0.5, "e": 1e300}}
    qrels = {"q": {"a": 1, "c": 2, "b": 1}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        placed = irspec.evaluate(qrels, run, METRICS)
    same(placed, frame_path(qrels, run))


def test_dicts_read_for_other_qrels_are_looked_up_again() -> None:
    # the judged documents were looked up as the dicts were read, for another index: not used
    from irspec.evaluation.context import Options
    from irspec.evaluation.index import QrelsIndex
    from irspec.evaluation.ranking import build_context

    qrels, run = dict_case(5)
    other, _ = dict_case(6)
    index = QrelsIndex(irspec.read_qrels(qrels))
    made = mapping_run(run, wanted=QrelsIndex(irspec.read_qrels(other)).judged_by_query())
    assert made is not None and made.mapping.found is not None
    ctx, _ = build_context(index, made, Options())
    reference, _ = build_context(index, irspec.read_run(run), Options())
    assert ctx.query_ids == reference.query_ids
    np.testing.assert_array_equal(ctx.offsets, reference.offsets)
    np.testing.assert_array_equal(ctx.label, reference.label)


@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 9, 100, 128, 129, 1000])
def test_the_places_searched_in_sorted_rows_are_numpys_searchsorted(width: int) -> None:
    # rows padded with +inf as the blocks' matrix is, values below, inside, tied with and above them
    from irspec.evaluation.ranking import _first_places

    rng = np.random.default_rng(width)
    srt = np.sort(rng.choice([0.0, 1.0, 2.0, 3.0, np.inf], (6, width)), axis=1)
    jrow = rng.integers(0, 6, 200)
    value = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0], 200)
    expected = [int(np.searchsorted(srt[r], v, side="left")) for r, v in zip(jrow, value, strict=True)]
    assert _first_places(srt, jrow, value).tolist() == expected


def test_a_defaultdict_of_dicts_as_pytrec_eval_parse_run_makes_is_read_from_its_dicts(reads: list) -> None:
    import collections

    qrels, run = dict_case(2)
    parsed = collections.defaultdict(dict, run)
    placed = irspec.evaluate(qrels, parsed, METRICS)
    assert reads == []
    same(placed, frame_path(qrels, run))
