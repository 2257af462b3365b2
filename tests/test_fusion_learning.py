"""The fusion methods that learn, checked by hand; their errors; irspec's choices where ranx's differ.

Two runs and training qrels small enough to follow on paper:

    run A  q1: a (3), b (2), c (1)    q2: d (2), a (1)
    run B  q1: b (5), c (4), e (1)    q2: d (1)
    qrels  q1: a, c relevant          q2: d relevant

so the hit lists (1 = relevant, in rank order) are A: q1 [1, 0, 1], q2 [1, 0]; B: q1 [0, 1, 0], q2 [1],
over Q = 2 training queries. ranx's agreement on random runs is in test_fusion_learning_ranx.py.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from cli_run import irspec_cli

import irspec
from irspec.errors import EvaluationError, InputError

A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"d": 2.0, "a": 1.0}}
B = {"q1": {"b": 5.0, "c": 4.0, "e": 1.0}, "q2": {"d": 1.0}}
QRELS = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"d": 2}}
FLOOR = math.log(0.001 / 0.999)


def fused(spec: str, runs: list | None = None, qrels: dict | None = None) -> dict[str, dict[str, float]]:
    run = irspec.fuse(runs or [A, B], spec, qrels=qrels or QRELS)
    out: dict[str, dict[str, float]] = {}
    for q, d, s in run.frame.select("query", "docno", "score").iter_rows():
        out.setdefault(q, {})[d] = s
    return out


# Learned per run (worked out in each case's comment), then summed over the runs that rank a document.
HAND = [
    (
        # P_p: A [2/2, 0/2, 1/1] = [1, 0, 1]; B [1/2, 1/1, 0/1] = [0.5, 1, 0]
        "posfuse",
        {"q1": {"a": 1.0, "b": 0 + 0.5, "c": 1 + 1, "e": 0.0}, "q2": {"d": 1 + 0.5, "a": 0.0}},
    ),
    (
        # 2 segments of ceil(n/2): A q1 [1,0][1] -> 0.5, 1; q2 [1][0] -> 1, 0: P_A = [0.75, 0.5];
        # B q1 [0,1][0] -> 0.5, 0; q2 [1][] -> 1, (empty): P_B = [0.75, 0]; score P_k / k (k 1-based)
        "probfuse(segments=2)",
        {
            "q1": {"a": 0.75, "b": 0.75 + 0.75, "c": 0.5 / 2 + 0.75, "e": 0 / 2},
            "q2": {"d": 0.75 + 0.75, "a": 0.5 / 2},
        },
    ),
    (
        # AP: A q1 (1/1 + 2/3)/2 = 5/6, q2 1: MAP 11/12; B q1 (1/2)/2 = 1/4, q2 1: MAP 5/8; MAP / rank
        "mapfuse",
        {
            "q1": {"a": 11 / 12, "b": 11 / 12 / 2 + 5 / 8, "c": 11 / 12 / 3 + 5 / 8 / 2, "e": 5 / 8 / 3},
            "q2": {"d": 11 / 12 + 5 / 8, "a": 11 / 12 / 2},
        },
    ),
    (
        # PosFuse's P (A [1, 0, 1], B [0.5, 1, 0]) averaged over positions p-1..p+1 within the list
        "slidefuse(w=1)",
        {
            "q1": {
                "a": (1 + 0) / 2,
                "b": (1 + 0 + 1) / 3 + (0.5 + 1) / 2,
                "c": (0 + 1) / 2 + (0.5 + 1 + 0) / 3,
                "e": (1 + 0) / 2,
            },
            "q2": {"d": (1 + 0) / 2 + 0.5 / 1, "a": (1 + 0) / 2},
        },
    ),
    (
        # first segment, positions 0-4 (size 5): P_A = (2/5 + 1/5)/2 = 0.3, P_B = (1/5 + 1/5)/2 = 0.2;
        # times (min-max score + 1): A q1 a 1, b 0.5, c 0; B q1 b 1, c 0.75, e 0; q2 A d 1, a 0; B d 0
        "segfuse",
        {
            "q1": {"a": 0.3 * 2, "b": 0.3 * 1.5 + 0.2 * 2, "c": 0.3 * 1 + 0.2 * 1.75, "e": 0.2 * 1},
            "q2": {"d": 0.3 * 2 + 0.2 * 1, "a": 0.3 * 1},
        },
    ),
    (
        # bucket 0-4: precision A (2/5 + 1/5)/2 = 0.3, B 0.2: log odds log(3/7), log(1/4); a run that
        # lacks the document adds log(0.001/0.999)
        "bayesfuse",
        {
            "q1": {
                "a": math.log(3 / 7) + FLOOR,
                "b": math.log(3 / 7) + math.log(1 / 4),
                "c": math.log(3 / 7) + math.log(1 / 4),
                "e": FLOOR + math.log(1 / 4),
            },
            "q2": {"d": math.log(3 / 7) + math.log(1 / 4), "a": math.log(3 / 7) + FLOOR},
        },
    ),
]


def close(ours: dict, expected: dict) -> bool:
    return ours.keys() == expected.keys() and all(
        ours[q].keys() == expected[q].keys()
        and all(math.isclose(ours[q][d], v, rel_tol=1e-12, abs_tol=1e-12) for d, v in expected[q].items())
        for q in expected
    )


@pytest.mark.parametrize(("spec", "expected"), HAND, ids=[s for s, _ in HAND])
def test_each_learning_method_by_hand(spec: str, expected: dict):
    assert close(fused(spec), expected), fused(spec)


def test_every_learning_method_has_a_hand_test_and_a_paper():
    learning = {n: d for n, d in irspec.get_registry().fusions.items() if d.learns}
    assert set(learning) == {"ProbFuse", "SegFuse", "SlideFuse", "PosFuse", "MAPFuse", "BayesFuse"}
    assert {irspec.fusion.engine.fusion_of(s).name for s, _ in HAND} == set(learning)
    for method in learning.values():
        assert any(str(y) in method.doc for y in range(1990, 2030)), method.name


def test_only_training_queries_train():
    # q3 is fused but not judged; judging it (all relevant) must not change what was learned from q1, q2
    runs = [A | {"q3": {"x": 1.0, "y": 0.5}}, B | {"q3": {"y": 2.0}}]
    plain = fused("posfuse", runs)
    assert plain["q3"] == {"x": 1.0, "y": 0.0 + 0.5}  # A's P_0 = 1, B's P_0 = 0.5: learned on q1, q2 only
    assert close({q: plain[q] for q in ("q1", "q2")}, HAND[0][1])


def test_a_query_judged_but_retrieved_by_no_run_does_not_train():
    assert close(fused("posfuse", qrels=QRELS | {"q9": {"a": 1}}), HAND[0][1])


def test_inverted_normalisation_trains_and_fuses_on_the_reversed_ranks():
    # irspec's reading: positions are the ranks after the normalisation, in training and in fusing
    negated = [{q: {d: -s for d, s in docs.items()} for q, docs in r.items()} for r in (A, B)]
    assert close(fused("posfuse(norm=min-max-inverted)"), fused("posfuse", negated))


def test_bayesfuse_below_rank_1000_counts_as_not_retrieved():
    long_a = {"q1": {f"d{i:04d}": 2000.0 - i for i in range(1001)}}
    qrels = {"q1": {"d0000": 1}}
    out = fused("bayesfuse", [long_a, {"q1": {"d1000": 1.0}}], qrels)["q1"]
    # run A's rank 1001 (position 1000) adds the floor, as a document A lacks would
    b_first = math.log(0.001 / 0.999)  # B's bucket 0 holds no relevant document: precision 0 -> 0.001
    assert math.isclose(out["d1000"], FLOOR + b_first, rel_tol=1e-12)
    a_first = math.log((1 / 5) / (4 / 5))
    assert math.isclose(out["d0000"], a_first + FLOOR, rel_tol=1e-12)


def test_a_learning_method_without_qrels_is_refused():
    with pytest.raises(EvaluationError, match="learns from judged queries"):
        irspec.fuse([A, B], "posfuse")


def test_training_qrels_sharing_no_query_are_refused():
    with pytest.raises(InputError, match="share no query with the runs"):
        irspec.fuse([A, B], "mapfuse", qrels={"q7": {"a": 1}})


def test_required_parameters():
    with pytest.raises(irspec.ParameterError, match="segments"):
        irspec.fuse([A, B], "probfuse", qrels=QRELS)
    with pytest.raises(irspec.ParameterError, match="w"):
        irspec.fuse([A, B], "slidefuse", qrels=QRELS)


def test_provenance_names_the_training():
    run = irspec.fuse([A, B], "probfuse(segments=2)", qrels=QRELS)
    assert run.source == "<fused: ProbFuse(segments=2) of run (#1), run (#2); trained on 2 queries of <dict>>"


def write(path, run: dict) -> str:
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.items() for d, s in docs.items()))
    return str(path)


def test_command_line_trains_on_qrels(tmp_path):
    a, b = write(tmp_path / "a.run", A), write(tmp_path / "b.run", B)
    (tmp_path / "train.qrels").write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 d 2\n")
    out = tmp_path / "f.run"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "irspec",
            "fuse",
            a,
            b,
            "--method",
            "posfuse",
            "--qrels",
            str(tmp_path / "train.qrels"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    got = {}
    for line in out.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        got.setdefault(q, {})[d] = float(s)
    assert close(got, HAND[0][1])
    assert "trained on 2 queries" in proc.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "irspec: error: PosFuse learns from judged queries"),
        (["--qrels", "OTHER"], "irspec: error: "),
    ],
)
def test_command_line_errors(tmp_path, capsys, extra, message):
    a, b = write(tmp_path / "a.run", A), write(tmp_path / "b.run", B)
    (tmp_path / "other.qrels").write_text("q7 0 a 1\n")
    extra = [str(tmp_path / "other.qrels") if x == "OTHER" else x for x in extra]
    out = tmp_path / "f.run"
    proc = irspec_cli(capsys, "fuse", a, b, "--method", "posfuse", *extra, "-o", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith(message) and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()
    if extra:
        assert "other.qrels: the training qrels share no query" in proc.stderr


def test_training_qrels_for_a_method_that_learns_nothing_are_refused(tmp_path, capsys):
    # silently unused, they would let a user believe the fused run was trained on them
    with pytest.raises(EvaluationError, match="learns nothing, so the training qrels would not be used"):
        irspec.fuse([A, B], "rrf(k=60)", qrels=QRELS)
    a, b = write(tmp_path / "a.run", A), write(tmp_path / "b.run", B)
    (tmp_path / "train.qrels").write_text("q1 0 a 1\n")
    out = tmp_path / "f.run"
    proc = irspec_cli(
        capsys,
        "fuse",
        a,
        b,
        "--method",
        "rrf(k=60)",
        "--qrels",
        str(tmp_path / "train.qrels"),
        "-o",
        str(out),
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and not out.exists()
    assert proc.stderr.startswith("irspec: error: RRF learns nothing"), proc.stderr
