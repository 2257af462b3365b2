"""irspec-usermodel's C/W/L measures: BPM, INST, INSQ, NERR8..NERR11, SDCG.

Hand-checked values, one tiny ranking per measure with the arithmetic written out; the gain mapping,
required and refused cutoffs, ir_measures' spellings and the command line. The differential tests
against cwl_eval are in test_cwl_differential.py.
"""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("irspec_usermodel")


import irspec

# The random collections miss queries and leave documents unjudged on purpose: irspec's warnings say so.
pytestmark = pytest.mark.filterwarnings("ignore::irspec.IrspecWarning")


# One ranking: a (label 1), b (0), c (2), u (unjudged). With max_rel=2 the gains are g = 0.5, 0, 1, 0.
QRELS = {"q": {"a": 1, "b": 0, "c": 2, "d": 2}}
RUN = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "u": 1.0}}


def value(spec: str, qrels=QRELS, run=RUN, query: str = "q") -> float:
    res = irspec.evaluate(qrels, run, spec)
    return res.per_query()[query][str(irspec.parse(spec))]


# --------------------------------------------------------------------------------------------------
# Hand-checked: W(i) = reach(i) / Σ reach, reach(i) = Π_{j<i} C(j); EU = Σ W(i) g(i).


def test_bpm_by_hand():
    # T = 1.5, K = 3: gain so far .5, .5, 1.5: C = 1, 1, 0 (rank 3 is both the budget and the goal).
    # W = 1/3 on ranks 1..3: EU = (.5 + 0 + 1) / 3; ETU = the gain of the three, 1.5.
    assert value("BPM(T=1.5, max_rel=2)@3") == pytest.approx(1.5 / 3, abs=1e-15)
    assert value("BPM(T=1.5, max_rel=2, utility=total)@3") == pytest.approx(1.5, abs=1e-15)
    # T = 1, K = 2: C(1) = 1 (.5 < 1 and 1 < 2), C(2) = 0 (2 documents read): EU = (.5 + 0) / 2
    assert value("BPM(max_rel=2)@2") == pytest.approx(0.25, abs=1e-15)
    # depth 3, and neither budget runs out by then: C = 1, 1, 1, W = 1/3 each, EU = 1.5 / 3; no one stops
    # by rank 3, so L = 1·(1 - 1) = 0 everywhere and ETU = 0 (cwl_eval's L ends at the depth).
    assert value("BPM(T=100, max_rel=2, depth=3)@50") == pytest.approx(0.5, abs=1e-15)
    assert value("BPM(T=100, max_rel=2, depth=3, utility=total)@50") == 0.0
    # the brief's spelling: K as a keyword
    assert value("BPM(T=1, K=2, max_rel=2)") == value("BPM(max_rel=2)@2")


def test_inst_by_hand():
    # depth 3. T = 1; T_i = 1 - gain so far = .5, .5, -.5.
    # C(1) = ((1 + 1 + .5 - 1) / (1 + 1 + .5))^2 = (1.5/2.5)^2 = 9/25; C(2) = (2.5/3.5)^2 = 25/49.
    # reach = 1, 9/25, 9/49; Σ = 1891/1225. EU = (.5 + 0 + 9/49) / (1891/1225) = 1675/3782.
    assert value("INST(max_rel=2, depth=3)") == pytest.approx(1675 / 3782, abs=1e-15)


def test_insq_by_hand():
    # depth 3, T = 1: C(i) = ((i + 1) / (i + 2))^2: 4/9, 9/16. reach = 1, 4/9, 1/4; Σ = 61/36.
    # EU = (.5 + 0 + 1/4) / (61/36) = 27/61.
    assert value("INSQ(max_rel=2, depth=3)") == pytest.approx(27 / 61, abs=1e-15)


def test_nerr8_by_hand():
    # k = 3: C(1) = 1 - .5, C(2) = 1 - 0, C(3) = 0. reach = 1, .5, .5; Σ = 2. EU = (.5 + 0 + .5) / 2.
    assert value("NERR8(max_rel=2)@3") == pytest.approx(0.5, abs=1e-15)
    # L(1) = 1 (1 - .5) = .5, L(2) = .5 (1 - 1) = 0, L(3) = .5 (1 - 0); ETU = .5 (.5) + .5 (1.5) = 1.
    assert value("NERR8(max_rel=2, utility=total)@3") == pytest.approx(1.0, abs=1e-15)


def test_nerr9_by_hand():
    # k = 3: C(1) = (1/2)(.5) = 1/4, C(2) = (2/3)(1) = 2/3. reach = 1, 1/4, 1/6; Σ = 17/12.
    # EU = (.5 + 0 + 1/6) / (17/12) = 8/17.
    assert value("NERR9(max_rel=2)@3") == pytest.approx(8 / 17, abs=1e-15)


def test_nerr10_by_hand():
    # p = .5: C = .5 (1 - g) = 1/4, 1/2, 0 (c has gain 1: the user stops there, whatever the depth).
    # reach = 1, 1/4, 1/8; Σ = 11/8. EU = (.5 + 0 + 1/8) / (11/8) = 5/11.
    assert value("NERR10(0.5, max_rel=2)") == pytest.approx(5 / 11, abs=1e-15)


def test_nerr11_by_hand():
    # T = 1: C(i) = ((i + 1) / (i + 2))^2 (1 - g(i)): (4/9)(1/2) = 2/9, (9/16)(1) = 9/16, 0.
    # reach = 1, 2/9, 1/8; Σ = 97/72. EU = (.5 + 0 + 1/8) / (97/72) = 45/97.
    assert value("NERR11(max_rel=2)") == pytest.approx(45 / 97, abs=1e-15)


def test_sdcg_by_hand():
    # k = 3: C(1) = log2 2 / log2 3, C(2) = log2 3 / log2 4: reach = 1, 1/log2 3, 1/2, the DCG discounts.
    # EU = (.5 + 0 + 1/2) / (1 + 1/log2 3 + 1/2): DCG@3 over the DCG@3 of three documents of gain 1.
    assert value("SDCG(max_rel=2)@3") == pytest.approx(1.0 / (1.5 + 1 / math.log2(3)), abs=1e-15)
    assert value("SDCG(dcg='log2', max_rel=2)@3") == value("SDCG(max_rel=2)@3")


def test_gains_follow_ir_measures_mapping_of_labels():
    # NERR8@1 examines rank 1 only: its value is the gain of the first document.
    # min_rel 1, max_rel 3: label -> (clip(max(label, 0), 1, 3) - 1) / 2; unjudged 0.
    labels = {"n": -1, "z": 0, "one": 1, "two": 2, "three": 3, "five": 5}
    qrels = {d: {d: lab} for d, lab in labels.items()} | {"unj": {"other": 3}}
    run = {q: {q if q != "unj" else "nowhere": 1.0} for q in qrels}
    got = irspec.evaluate(qrels, run, "NERR8(min_rel=1, max_rel=3)@1").per_query()
    expected = {"n": 0.0, "z": 0.0, "one": 0.0, "two": 0.5, "three": 1.0, "five": 1.0, "unj": 0.0}
    assert {q: v["NERR8(max_rel=3,min_rel=1)@1"] for q, v in got.items()} == expected
    # the defaults (0, 1): binary gains at label >= 1
    got = irspec.evaluate(qrels, run, "NERR8@1").per_query()
    assert {q: v["NERR8@1"] for q, v in got.items()} == {**expected, "one": 1.0, "two": 1.0}


def test_a_query_with_nothing_relevant_and_a_missing_query_score_zero():
    qrels = {"none": {"a": 0, "b": -1}, "missing": {"a": 1}}
    run = {"none": {"a": 2.0, "b": 1.0, "c": 0.5}}
    specs = "BPM@10 INST INSQ NERR8@10 NERR9@10 NERR10 NERR11 SDCG@10"
    for query, row in irspec.evaluate(qrels, run, specs).per_query().items():
        assert set(row.values()) == {0.0}, query


def test_cutoffs_are_required_where_ir_measures_requires_them_and_refused_elsewhere():
    for spec in ("BPM", "SDCG", "NERR8", "NERR9"):
        with pytest.raises(irspec.ParameterError, match="required"):
            irspec.parse(spec)
    for spec in ("INST@10", "INSQ@10", "NERR10@10", "NERR11@10"):
        with pytest.raises(irspec.ParameterError, match="no @"):
            irspec.parse(spec)


def test_min_rel_must_be_below_max_rel():
    with pytest.raises(irspec.ParameterError, match="min_rel"):
        irspec.evaluate(QRELS, RUN, "INST(min_rel=2, max_rel=2)")


def test_ir_measures_spellings_parse_to_the_same_measure():
    # every name and parameter form ir_measures 0.4.3 accepts for these (cutoff as @; the keyword
    # cutoff= is the registry's concern); the defaults T=1, p=0.9, min_rel=0, dcg=log2 drop out.
    same = {
        "BPM(T=1,max_rel=3)@1000": "BPM(max_rel=3)@1000",
        "BPM(T=1,K=1000)": "BPM@1000",
        "BPM(T=2.5,min_rel=1,max_rel=3)@10": "BPM(T=2.5,max_rel=3,min_rel=1)@10",
        "INST(T=1)": "INST",
        "INST(T=2,max_rel=3)": "INST(T=2,max_rel=3)",
        "INSQ(T=1.0,min_rel=0,max_rel=2)": "INSQ(max_rel=2)",
        "NERR8(max_rel=3)@10": "NERR8(max_rel=3)@10",
        "NERR9(min_rel=0,max_rel=1)@5": "NERR9@5",
        "NERR10(p=0.9)": "NERR10",
        "NERR10(p=0.5,max_rel=4)": "NERR10(max_rel=4,p=0.5)",
        "NERR11(T=1)": "NERR11",
        "SDCG@10": "SDCG@10",
        "SDCG(dcg='log2',max_rel=3)@10": "SDCG(max_rel=3)@10",
        'SDCG(dcg="log2")@10': "SDCG@10",
    }
    for text, canonical in same.items():
        assert str(irspec.parse(text)) == canonical, text


def test_the_command_line_reads_ir_measures_spellings(tmp_path, capsys):
    from irspec.cli import main

    (tmp_path / "qrels.txt").write_text("q 0 a 1\nq 0 b 0\nq 0 c 2\nq 0 d 2\n")
    (tmp_path / "run.txt").write_text(
        "".join(f"q Q0 {d} {i} {s} r\n" for i, (d, s) in enumerate(RUN["q"].items(), 1))
    )
    specs = "BPM(T=1,K=1000), INST(T=1), NERR8@10, NERR9@10, NERR10(p=0.9), NERR11(T=1), SDCG@10"
    assert (
        main(
            ["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", specs, "--format", "jsonl"]
        )
        == 0
    )
    got = {r["measure"]: r["value"] for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(got) == {"BPM@1000", "INST", "NERR8@10", "NERR9@10", "NERR10", "NERR11", "SDCG@10"}
    # binary gains (max_rel 1): a and c gain 1. BPM with T = 1 stops at a, rank 1: EU = 1; NERR8 too.
    assert got["BPM@1000"] == got["NERR8@10"] == 1.0


def test_irspec_metrics_lists_them_with_the_plugin(capsys):
    # registered here by module (an installed package shows "[usermodel: irspec-usermodel 0.1.0]")
    from irspec.cli import main

    assert main(["metrics"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name in ("BPM", "INST", "INSQ", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG"):
        assert any(line.startswith(f"{name}(") and "[irspec_usermodel.plugin" in line for line in lines), name
