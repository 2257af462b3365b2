"""Parameter search for fusion (irspec.tune_fusion, irspec.cross_fuse, irspec fuse --optimize): the
grids, the choice, training queries only, provenance, errors; and ranx 0.3.21's optimize_fusion as the
reference on random runs (in its own process, as in test_fusion_ranx.py)."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from cli_run import irspec_cli
from test_fusion_ranx import run_ranx  # the reference's process, shared with the fusion methods' test

import irspec
from irspec.errors import EvaluationError
from irspec.fusion.engine import fusion_of
from irspec.fusion.tuning import fusion_of_search, grid_of

LEVELS = [round(0.1 * i, 1) for i in range(11)]


def test_default_grids_are_ranx_s():
    assert [t["k"] for t in grid_of(fusion_of("rrf(norm=none)"), 2)] == list(range(10, 101, 10))
    assert grid_of(fusion_of("gmnz(gamma=1)"), 2) == [{}]  # set by the user: nothing searched
    gammas = [t["gamma"] for t in grid_of(searched_spec("gmnz"), 2)]
    assert gammas == [round(x, 2) for x in np.arange(0.01, 1.01, 0.01)]
    assert [t["segments"] for t in grid_of(searched_spec("probfuse"), 2)] == list(range(1, 101))
    assert [t["w"] for t in grid_of(searched_spec("slidefuse"), 2)] == list(range(1, 101))
    assert grid_of(searched_spec("posfuse"), 2) == [{}]  # learns, searches nothing: trained once


def searched_spec(text: str):
    return irspec.fusion.tuning.parse_fusion(text, irspec.get_registry(), searched=True)


@pytest.mark.parametrize(("runs", "count"), [(2, 11), (3, 66), (4, 286)])
def test_weight_vectors_are_every_one_summing_to_one(runs: int, count: int):
    vectors = [t["weights"] for t in grid_of(searched_spec("wsum"), runs)]
    assert len(vectors) == count == math.comb(10 + runs - 1, runs - 1)  # compositions of 10 tenths
    assert all(abs(sum(v) - 1) < 1e-9 for v in vectors)
    if runs == 3:
        # ranx's float test sum(v) == 1.0 drops these four; irspec keeps them (its docs say so)
        ranx = [v for v in itertools.product(LEVELS, repeat=3) if sum(v) == 1.0]
        assert len(ranx) == 62
        assert (0.2, 0.7, 0.1) in vectors and (0.2, 0.7, 0.1) not in ranx


A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"a": 2.0, "b": 1.0}}
B = {"q1": {"c": 3.0, "b": 2.0, "a": 1.0}, "q2": {"b": 2.0, "a": 1.0}}


def test_the_best_trial_wins_and_a_later_one_wins_a_tie():
    # q1 judges a relevant: AP 1 when a is first. wsum on min-max scores: A gives a 1, b .5, c 0; B gives
    # c 1, b .5, a 0. a scores w_A, b .5, c w_B: a is first (AP 1) when w_A > .5, and ties with b at .5
    # with c (all at .5: trec_eval's docno order puts c, b, a: AP 1/3); below .5 c leads, then b, then a
    # (AP 1/3). The last of the best, (1.0, 0.0), wins.
    tuned = irspec.tune_fusion([A, B], "wsum", "AP", {"q1": {"a": 1}})
    assert dict(tuned.fusion.params)["weights"] == (1.0, 0.0)
    scores = dict(tuned.trials)
    assert scores["WSum(weights=[0.6,0.4])"] == 1.0
    assert scores["WSum(weights=[0.5,0.5])"] == pytest.approx(1 / 3)
    assert scores["WSum(weights=[0.4,0.6])"] == pytest.approx(1 / 3)
    assert tuned.score == 1.0 and tuned.metric == "AP" and tuned.queries == ("q1",)


def test_only_the_training_queries_are_evaluated():
    # q2 is fused but not judged by the training qrels: the same trials score the same with it or without
    with_q2 = irspec.tune_fusion([A, B], "wsum", "AP", {"q1": {"a": 1}})
    without = irspec.tune_fusion([{"q1": A["q1"]}, {"q1": B["q1"]}], "wsum", "AP", {"q1": {"a": 1}})
    assert with_q2.trials == without.trials


def test_tuned_spec_fuses_and_its_provenance_says_how():
    tuned = irspec.tune_fusion([A, B], "wsum", "AP", {"q1": {"a": 1}})
    run = irspec.fuse([A, B], tuned)
    assert run.source == (
        "<fused: WSum(weights=[1,0]) of run (#1), run (#2); tuned for AP on 1 queries of <dict> (11 trials, "
        "best 1.0000)>"
    )
    assert tuned.provenance()["parameters"] == {"weights": [1.0, 0.0]}
    assert run.frame.filter(run.frame["query"] == "q1").get_column("docno").to_list() == ["a", "b", "c"]


def test_nothing_to_tune_is_refused():
    with pytest.raises(EvaluationError, match="nothing to tune"):
        irspec.tune_fusion([A, B], "rrf(k=60)", "AP", {"q1": {"a": 1}})
    with pytest.raises(EvaluationError, match="nothing to tune"):
        irspec.tune_fusion([A, B], "sum", "AP", {"q1": {"a": 1}})


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("official", "one metric to optimise, got 'official': 29 metrics"),  # it tuned for NumQ, the first
        ("AP, P@10", "one metric to optimise, got 'AP, P@10': 2 metrics (AP, P@10)"),  # and for AP alone
        ("NumRet", "NumRet cannot be optimised: it has no better direction"),
        ("IDCG", "IDCG cannot be optimised"),
    ],
)
def test_optimising_a_set_a_list_or_a_count_is_refused(tmp_path, capsys, metric, message):
    with pytest.raises(EvaluationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        irspec.tune_fusion([A, B], "wsum", metric, {"q1": {"a": 1}})
    a, b = write(tmp_path / "a.run", A), write(tmp_path / "b.run", B)
    (tmp_path / "train.qrels").write_text("q1 0 a 1\n")
    out = tmp_path / "f.run"
    proc = irspec_cli(capsys, "fuse", a, b, "--method", "wsum", "--optimize", metric, "--qrels",
                      str(tmp_path / "train.qrels"), "-o", str(out))  # fmt: skip
    assert proc.returncode == 2 and message in proc.stderr and not out.exists()
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"qrels: {tmp_path / 'train.qrels'}\nruns: [{a}]\nmetrics: [AP]\n"
        f"fused:\n  - {{name: f, method: wsum, runs: [{a}, {b}], optimize: '{metric}', train: {tmp_path / 'train.qrels'}}}\n"
    )
    proc = irspec_cli(capsys, "validate", str(plan))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def random_runs(seed: int, queries: int = 12) -> tuple[list[dict], dict]:
    """Three runs retrieving every document of a pool of 25 with continuous scores (no ties in a
    weighted sum, whose order ranx leaves to its unstable sort), and qrels judging every query."""
    rng = np.random.default_rng(seed)
    runs = [
        {f"q{q}": {f"d{d}": float(rng.normal()) for d in range(25)} for q in range(queries)} for _ in range(3)
    ]
    qrels = {
        f"q{q}": {f"d{d}": int(rng.random() < 0.25) for d in range(25)} | {"d0": 1} for q in range(queries)
    }
    return runs, qrels


def test_cross_validation_tunes_each_fold_on_the_others():
    runs, qrels = random_runs(7)
    run, tuned = irspec.cross_fuse(runs, "wsum", "AP", qrels, folds=3, seed=1)
    assert len(tuned) == 4  # one per fold, then the one tuned on every judged query
    order = np.random.default_rng(1).permutation(12)
    queries = sorted(qrels)
    for f in range(3):
        held = {queries[i] for i in order[f::3]}
        rest = {q: j for q, j in qrels.items() if q not in held}
        again = irspec.tune_fusion(runs, "wsum", "AP", rest)
        assert tuned[f].fusion == again.fusion and set(tuned[f].queries) == set(rest)
        fold = irspec.fuse([{q: r[q] for q in held} for r in runs], again.fusion)
        ours = run.frame.filter(run.frame["query"].is_in(list(held)))
        assert ours.select("query", "docno", "score").equals(fold.frame.select("query", "docno", "score"))
    assert "3-fold cross-validation over 12 queries" in run.source


def test_cross_validation_needs_enough_queries():
    with pytest.raises(EvaluationError, match="cannot make 5 folds"):
        irspec.cross_fuse([A, B], "wsum", "AP", {"q1": {"a": 1}}, folds=5)


@pytest.mark.parametrize("folds", [1, 2.5, True, "3"])
def test_folds_that_are_not_a_whole_number_of_two_or_more_are_refused(folds):
    """2.5 gave Python's TypeError ('float' object cannot be interpreted as an integer)."""
    with pytest.raises(EvaluationError, match="a whole number of folds, two or more"):
        irspec.cross_fuse([A, B], "wsum", "AP", {"q1": {"a": 1}}, folds=folds)


# --- ranx's optimize_fusion ---------------------------------------------------------------------------

RANX_CASES = [
    {"method": "wsum", "norm": "min-max", "seed": 1},
    {"method": "wsum", "norm": "zmuv", "seed": 2},
    {"method": "mixed", "norm": "min-max", "seed": 3},
    {"method": "gmnz", "norm": "min-max", "seed": 4},
]


def ranx_jobs() -> list[dict]:
    """The jobs of ranx's optimize_fusion (tests/fixtures/ranx_fuse.py), one per case of RANX_CASES; also
    sent by tests/warm_ranx.py, whose answers the fixture then reads."""
    cases = []
    for c in RANX_CASES:
        runs, qrels = random_runs(c["seed"])
        cases.append(
            {
                "runs": runs,
                "qrels": qrels,
                "method": c["method"],
                "norm": c["norm"],
                "metric": "map",
                "optimize": True,
            }
        )
    return cases


@pytest.fixture(scope="module")
def ranx_optimized(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return run_ranx(ranx_jobs(), tmp_path_factory)


def ranx_trials(method: str) -> list[dict]:
    """ranx's trials in its order: its weight vectors (float sum exactly 1.0) or its γ grid."""
    if method == "gmnz":
        return [{"gamma": round(x, 2)} for x in np.arange(0.01, 1.01, 0.01)]
    return [{"weights": v} for v in itertools.product(LEVELS, repeat=3) if sum(v) == 1.0]


@pytest.mark.parametrize(
    "index", range(len(RANX_CASES)), ids=[f"{c['method']}-{c['norm']}" for c in RANX_CASES]
)
def test_search_agrees_with_ranx_optimize_fusion(ranx_optimized: list[dict], index: int):
    case = RANX_CASES[index]
    runs, qrels = random_runs(case["seed"])
    tuned = irspec.tune_fusion(runs, f"{case['method']}(norm={case['norm']})", "AP", qrels)
    reference = ranx_optimized[index]
    ours = {}
    for values, (_, score) in zip(
        grid_of(searched_spec(f"{case['method']}(norm={case['norm']})"), 3), tuned.trials, strict=True
    ):
        ours[tuple(values.get("weights", ())) or values.get("gamma")] = score
    theirs = ranx_trials(case["method"])
    assert len(theirs) == len(reference["results"])
    for trial, score in zip(theirs, reference["results"], strict=True):
        key = tuple(trial["weights"]) if "weights" in trial else trial["gamma"]
        assert math.isclose(ours[key], score, rel_tol=1e-9, abs_tol=1e-12), (trial, ours[key], score)
    chosen = dict(tuned.fusion.params)
    name = "weights" if "weights" in reference["best"] else "gamma"
    if name == "weights" and tuple(chosen[name]) not in {tuple(t["weights"]) for t in theirs}:
        # irspec chose one of the vectors ranx's float test drops: it must do at least as well
        assert tuned.score >= max(reference["results"])
    else:
        expected = reference["best"][name]
        assert (tuple(chosen[name]) if name == "weights" else chosen.get(name, 1.0)) == (
            tuple(expected) if name == "weights" else expected
        )


# --- the command line ---------------------------------------------------------------------------------


def write(path, run: dict) -> str:
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.items() for d, s in docs.items()))
    return str(path)


def test_command_line_optimize_prints_and_fuses_the_choice(tmp_path, capsys):
    a, b = write(tmp_path / "a.run", A), write(tmp_path / "b.run", B)
    (tmp_path / "train.qrels").write_text("q1 0 a 1\n")
    out = tmp_path / "f.run"
    proc = irspec_cli(
        capsys,
        "fuse",
        a,
        b,
        "--method",
        "wsum",
        "--optimize",
        "AP",
        "--qrels",
        str(tmp_path / "train.qrels"),
        "-o",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert "irspec: chose WSum(weights=[1,0]): tuned for AP on 1 queries of" in proc.stderr
    assert out.read_text().splitlines()[0].split()[2] == "a"
    record = json.loads((tmp_path / "f.run.provenance.json").read_text())
    assert record["method"] == "WSum(weights=[1,0])" and record["parameters"] == {"weights": [1.0, 0.0]}
    assert record["metric"] == "AP" and record["score"] == 1.0 and record["trials"] == 11
    assert record["training_queries"] == 1 and record["runs"] == [a, b]


@pytest.mark.parametrize(
    "how", [["--method", "wsum", "--optimize", "AP"], ["--method", "probfuse(segments=2)"]]
)
def test_command_line_reads_standard_input_once_when_it_trains_first(tmp_path, capsys, how):
    # Tuning and training read the runs before fusing them; standard input can be read only once.
    a, b = write(tmp_path / "a.run", A), write(tmp_path / "b.run", B)
    (tmp_path / "train.qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    args = [*how, "--qrels", str(tmp_path / "train.qrels")]
    from_file = irspec_cli(capsys, "fuse", a, b, *args, "-o", str(tmp_path / "file.run"))
    assert from_file.returncode == 0, from_file.stderr
    piped = subprocess.run(
        [sys.executable, "-m", "irspec", "fuse", "-", b, *args, "-o", str(tmp_path / "piped.run")],
        input=Path(a).read_text(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert piped.returncode == 0, piped.stderr
    assert (tmp_path / "piped.run").read_text() == (tmp_path / "file.run").read_text()


def test_command_line_optimize_without_qrels(tmp_path, capsys):
    a, b = write(tmp_path / "a.run", A), write(tmp_path / "b.run", B)
    out = tmp_path / "f.run"
    proc = irspec_cli(capsys, "fuse", a, b, "--method", "wsum", "--optimize", "AP", "-o", str(out))
    assert proc.returncode == 2 and not out.exists()
    assert (
        proc.stderr
        == "irspec: error: --optimize searches parameters on training queries: give them with --qrels TRAIN\n"
    )


# --- plans ----------------------------------------------------------------------------------------------

DEMO = Path(__file__).resolve().parent.parent / "specs" / "demo"
BM25, DENSE, QRELS = str(DEMO / "runs/bm25.run"), str(DEMO / "runs/dense.run"), str(DEMO / "qrels.txt")


def plan_file(tmp_path: Path, fused: str) -> str:
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"qrels: {QRELS}\nruns: [{BM25}, {DENSE}]\nfused:\n{fused}metrics: AP\n")
    return str(plan)


def test_a_plan_tunes_by_cross_validation_by_default(tmp_path: Path):
    plan = plan_file(
        tmp_path, "  - {name: w, runs: [bm25, dense], method: 'wsum(norm=zmuv)', optimize: AP, folds: 3}\n"
    )
    report = irspec.run_plan(irspec.load_plan(plan))
    found = {r.run_name: r.aggregate() for r in report.results}
    expected, _ = irspec.cross_fuse({"bm25": BM25, "dense": DENSE}, "wsum(norm=zmuv)", "AP", QRELS, folds=3)
    assert found["w"] == irspec.evaluate(QRELS, expected, "AP").aggregate()


def test_a_plan_that_tunes_on_the_queries_it_reports_is_refused(tmp_path: Path):
    plan = plan_file(
        tmp_path, f"  - {{name: w, runs: [bm25, dense], method: wsum, optimize: AP, train: {QRELS}}}\n"
    )
    with pytest.raises(EvaluationError) as caught:
        irspec.run_plan(irspec.load_plan(plan))
    text = str(caught.value)
    assert (
        text.startswith(f"{plan}: fused[0] (line 4): the training qrels")
        and "judge 50 of the queries the plan reports" in text
    )


def test_a_plan_trains_on_other_queries(tmp_path: Path):
    judged = irspec.read_qrels(QRELS).frame
    queries = sorted(set(judged.get_column("query")))
    train, test = queries[::2], queries[1::2]
    (tmp_path / "train.qrels").write_text(
        "".join(
            f"{q} 0 {d} {lab}\n"
            for q, d, lab in judged.select("query", "docno", "label").iter_rows()
            if q in train
        )
    )
    (tmp_path / "test.qrels").write_text(
        "".join(
            f"{q} 0 {d} {lab}\n"
            for q, d, lab in judged.select("query", "docno", "label").iter_rows()
            if q in test
        )
    )
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"qrels: test.qrels\nruns: [{BM25}, {DENSE}]\nfused:\n"
        "  - {name: p, runs: [bm25, dense], method: 'probfuse', optimize: AP, train: train.qrels}\nmetrics: AP\n"
    )
    report = irspec.run_plan(irspec.load_plan(str(plan)))
    found = {r.run_name: r.aggregate() for r in report.results}
    tuned = irspec.tune_fusion(
        {"bm25": BM25, "dense": DENSE}, "probfuse", "AP", str(tmp_path / "train.qrels")
    )
    expected = irspec.evaluate(
        str(tmp_path / "test.qrels"), irspec.fuse({"bm25": BM25, "dense": DENSE}, tuned), "AP"
    )
    assert found["p"] == expected.aggregate()


def test_a_plans_tuning_problems_are_located(tmp_path: Path):
    plan = plan_file(
        tmp_path,
        "  - {name: a, runs: [bm25, dense], method: 'rrf(k=60)', optimize: AP}\n"
        "  - {name: b, runs: [bm25, dense], method: rrf, train: x.qrels}\n"
        "  - {name: c, runs: [bm25, dense], method: wsum}\n"
        "  - {name: d, runs: [bm25, dense], method: posfuse, train: x.qrels, folds: 3}\n",
    )
    with pytest.raises(irspec.PlanError) as caught:
        irspec.load_plan(plan)
    text = str(caught.value)
    assert "plan.yaml:4: fused[0].optimize: RRF(k=60) has nothing to tune" in text
    assert "plan.yaml:5: fused[1].train: RRF learns nothing and searches nothing" in text
    assert "plan.yaml:6: fused[2].method: WSum: parameter 'weights': required" in text
    assert "plan.yaml:7: fused[3].folds: folds cross-validate over the plan's queries" in text


# --- training reads the training queries' rows only, in bounded memory --------------------------------


def big_runs(tmp_path: Path) -> tuple[list[str], dict]:
    """Three run files of 40 queries (the second not grouped by query) and qrels judging 10 of them."""
    rng = np.random.default_rng(5)
    paths = []
    for i in range(3):
        lines = [
            f"q{q} Q0 d{d} 0 {float(rng.integers(0, 4))!r} r{i}\n"
            for q in range(40)
            for d in rng.choice(30, int(rng.integers(3, 20)), replace=False)
        ]
        path = tmp_path / f"r{i}.run"
        path.write_text("".join(lines[::-1] if i == 1 else lines))
        paths.append(str(path))
    qrels = {f"q{q}": {f"d{d}": int(d % 3 == 0) for d in range(0, 30, 2)} for q in range(0, 40, 4)}
    return paths, qrels


def test_training_runs_keep_the_judged_queries_rows_however_they_are_read(tmp_path: Path):
    from irspec.fusion.engine import training_runs

    paths, qrels = big_runs(tmp_path)
    judged = irspec.read_qrels(qrels)
    whole, names = training_runs(paths, fusion_of("probfuse(segments=2)"), judged)
    streamed, same = training_runs(paths, fusion_of("probfuse(segments=2)"), judged, memory=1)
    assert names == same == ["r0", "r1", "r2"]
    for run, a, b in zip(paths, whole, streamed, strict=True):
        assert set(a.get_column("query")) == set(qrels)  # only the judged queries' rows
        expected = irspec.read_run(run).frame.filter(irspec.read_run(run).frame["query"].is_in(list(qrels)))
        assert sorted(a.select("query", "docno", "score").rows()) == sorted(
            expected.select("query", "docno", "score").rows()
        )
        assert sorted(b.select("query", "docno", "score").rows()) == sorted(
            a.select("query", "docno", "score").rows()
        )


@pytest.mark.parametrize("spec", ["probfuse(segments=3)", "bayesfuse", "slidefuse(w=2, norm=borda)"])
def test_a_method_that_learns_trains_alike_in_blocks(tmp_path: Path, spec: str):
    from irspec.fusion.engine import fuse_to_file

    paths, qrels = big_runs(tmp_path)
    whole, blocks = tmp_path / "whole.run", tmp_path / "blocks.run"
    fuse_to_file(paths, spec, str(whole), qrels=qrels)
    fuse_to_file(paths, spec, str(blocks), qrels=qrels, memory=1)
    # fused a partition of queries at a time, the queries come in another order
    assert sorted(blocks.read_text().splitlines()) == sorted(whole.read_text().splitlines())
    in_memory = irspec.fuse(paths, spec, qrels=qrels)
    assert len(whole.read_text().splitlines()) == in_memory.frame.height


def test_parameter_search_reads_alike_in_blocks(tmp_path: Path):
    paths, qrels = big_runs(tmp_path)
    whole = irspec.tune_fusion(paths, "wsum(norm=zmuv)", "nDCG@5", qrels)
    streamed = irspec.tune_fusion(paths, "wsum(norm=zmuv)", "nDCG@5", qrels, memory=1)
    from_dicts = irspec.tune_fusion([irspec.read_run(p) for p in paths], "wsum(norm=zmuv)", "nDCG@5", qrels)
    assert whole.fusion == streamed.fusion == from_dicts.fusion
    assert whole.trials == streamed.trials == from_dicts.trials and len(whole.trials) == 66
    assert whole.queries == tuple(sorted(qrels))


def adversarial_runs(seed: int) -> tuple[list[dict], dict]:
    """Three runs over a pool of 30 documents, scores rounded to a tenth (ties), each lacking some
    queries and some empty; qrels with graded and negative labels, judging some queries no run has."""
    rng = np.random.default_rng(seed)
    runs = [
        {
            f"q{q}": {f"d{d}": round(float(rng.normal()), 1) for d in rng.choice(30, int(rng.integers(0, 30)), replace=False)}
            for q in range(10)
            if rng.random() < 0.85
        }
        for _ in range(3)
    ]  # fmt: skip
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(-1, 3)) for d in range(0, 30, 2)} | {"d1": 1} for q in range(12)
    }
    return runs, qrels


def fused_from_scratch(runs: list[dict], spec: str, metric: str, qrels: dict, queries) -> float:
    """One trial as a user would make it by hand: the training queries' rows fused (trained on their
    judgments), then evaluated on them; a query the fused run lacks scores 0, as in the search."""
    keep = set(queries)
    training = [{q: docs for q, docs in run.items() if q in keep} for run in runs]
    judged = {q: j for q, j in qrels.items() if q in keep}
    definition = irspec.fusion.engine.fusion_of(spec).definition
    fused = irspec.fuse(training, spec, qrels=judged if definition.learns else None)
    result = irspec.evaluate(judged, fused, [metric], missing_queries="zero")
    return float(result.aggregate()[str(irspec.parse(metric))])


@pytest.mark.parametrize(
    ("spec", "metric"), [("wsum(norm=zmuv)", "AP"), ("wsum(norm=borda)", "nDCG@5"), ("probfuse", "P@5")]
)
def test_each_trial_scores_what_fusing_it_from_scratch_scores(spec: str, metric: str):
    # a search makes each normalisation's candidates once for all its trials: each trial must score what
    # its spec fused on its own scores, to the bit
    runs, qrels = adversarial_runs(11)
    tuned = irspec.tune_fusion(runs, spec, metric, qrels)
    trials = tuned.trials if spec != "probfuse" else tuned.trials[::9]  # 12 of its 100 trials
    assert len(trials) >= 11 and len({score for _, score in trials}) > 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)  # runs lack queries
        for text, score in trials:
            again = fused_from_scratch(runs, text, metric, qrels, tuned.queries)
            assert again == score or (math.isnan(again) and math.isnan(score)), text


def test_a_method_that_writes_into_its_table_cannot_change_the_next_trial(irspec_plugin):
    from irspec.plugin_api import FusionDef, Param, hookimpl

    def scribble(table, fusion):
        fused = table.zeroed().sum(axis=0) * fusion.get("k")
        table.scores[:] = 0.0  # a careless kernel: the next trial's candidates must not see this
        table.ranks[:] = -1
        return fused

    class Plugin:
        @hookimpl
        def irspec_register_fusion(self, register):
            register(
                FusionDef(
                    "Scribble",
                    "CombSUM times k, writing over its table",
                    scribble,
                    params=(Param("k", "float", 1.0, "a factor"),),
                    grid=(("norm", ("min-max", "zmuv")), ("k", (1.0, -1.0, 2.0))),
                )
            )

    irspec_plugin(Plugin(), name="scribble-plugin")
    runs, qrels = random_runs(5)
    tuned = irspec.tune_fusion(runs, "scribble", "AP", qrels)
    assert len(tuned.trials) == 6  # each normalisation's candidates serve three trials
    for text, score in tuned.trials:
        assert score == fused_from_scratch(runs, text, "AP", qrels, tuned.queries), text
    assert dict(tuned.trials)["Scribble(k=-1)"] < dict(tuned.trials)["Scribble"]  # reversed: worse


def test_a_plans_search_scores_its_trials_at_the_plans_options(tmp_path: Path):
    """A plan reporting at relevance level 2 tunes for RR at level 2: its weights are the argmax, over the
    grid, of RR at level 2 on the training queries (each candidate fused and evaluated on its own). The
    search used level 1, whose best weights differ here. A Fallout objective reads the plan's
    collection_size (it failed: 'needs the collection size')."""
    rng = np.random.default_rng(13)
    qrels, runs = {}, [{}, {}]
    for q in range(20):
        docs = [f"d{d:03d}" for d in range(30)]
        qrels[f"q{q:02d}"] = {d: int(rng.integers(0, 4)) for d in rng.choice(docs, 15, replace=False)}
        for run in runs:
            chosen = rng.choice(docs, 20, replace=False)
            run[f"q{q:02d}"] = dict(zip(chosen, map(float, rng.random(20)), strict=True))
    paths = []
    for i, run in enumerate(runs):
        paths.append(tmp_path / f"r{i}.run")
        lines = [f"{q} Q0 {d} 1 {s!r} r{i}\n" for q, docs in run.items() for d, s in docs.items()]
        paths[-1].write_text("".join(lines))
    for name, keep in (("train", lambda q: q < "q10"), ("test", lambda q: q >= "q10")):
        lines = [f"{q} 0 {d} {label}\n" for q, docs in qrels.items() if keep(q) for d, label in docs.items()]
        (tmp_path / f"{name}.txt").write_text("".join(lines))
    train, test = str(tmp_path / "train.txt"), str(tmp_path / "test.txt")

    def best(metric: str, **options):
        trials = [g["weights"] for g in grid_of(fusion_of_search("wsum"), 2)]
        fused = [
            irspec.fuse([str(p) for p in paths], f"wsum(weights=[{','.join(map(str, w))}])") for w in trials
        ]
        scores = [irspec.evaluate(train, f, metric, **options).aggregate()[metric] for f in fused]
        top = max(scores) if "Fallout" not in metric else min(scores)
        return trials[max(i for i, s in enumerate(scores) if s == top)]  # a later trial wins a tie

    at_2, at_1 = best("RR", relevance_level=2), best("RR")
    assert at_2 != at_1
    for metric, options, expected in (
        ("RR", "{relevance_level: 2}", at_2),
        ("Fallout@10", "{collection_size: 1000}", best("Fallout@10", collection_size=1000)),
    ):
        plan = tmp_path / "plan.yaml"
        plan.write_text(
            f"qrels: {test}\nruns: [{paths[0]}, {paths[1]}]\nfused:\n"
            f"  - {{name: tuned, runs: [r0, r1], method: wsum, optimize: {metric}, train: {train}}}\n"
            f"metrics: {metric}\noptions: {options}\n"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = irspec.run_plan(irspec.load_plan(str(plan)))
        tuned = next(r for r in report.results if r.run_name == "tuned")
        assert f"WSum(weights=[{','.join(f'{w:g}' for w in expected)}])" in tuned.run_source, (
            metric,
            tuned.run_source,
        )
