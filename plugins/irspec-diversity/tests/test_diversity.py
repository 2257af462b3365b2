"""irspec-diversity: every metric on a tiny ranking with the arithmetic written out, the greedy ideal
ranking's tie rule, the spellings, the reader's errors and the command line."""

from __future__ import annotations

import importlib
import math
import os
import re
import subprocess
import sys

import polars as pl
import pytest

import irspec

pytest.importorskip(
    "irspec_diversity",
    reason="irspec-diversity is not installed: pip install -e plugins/irspec-diversity[test]",
)

import irspec_diversity.plugin

# Query 1: subtopic 1 has a (1), b (2) relevant and c (0) not; subtopic 2 has b and d; subtopic 3 only a
# non-relevant e, so it is ignored: S = 2. Query 2 has no relevant subtopic.
QRELS = """\
1 1 a 1
1 1 b 2
1 1 c 0
1 2 b 1
1 2 d 1
1 3 e 0
2 1 z 0
"""
# Ranked b, x (unjudged), d, a (a and d tie at 1.0: docno descending puts d first), c.
RUN = {"1": {"b": 3.0, "x": 2.0, "a": 1.0, "d": 1.0, "c": 0.5}, "2": {"z": 1.0}}
# Scores with alpha = 0.5: b 1 + 1 = 2 (both gains halve), x 0, d 0.5 (subtopic 2's gain), a 0.5, c 0.
# Greedy ideal: b (2), then a and d tie at 0.5 and the greater docno, d, goes first: 2, 0.5, 0.5.
LOG2_3 = math.log2(3)


@pytest.fixture
def qrels_file(tmp_path):
    path = tmp_path / "qrels.diversity.txt"
    path.write_text(QRELS)
    return str(path)


def values(specs: str, qrels_file: str, run=RUN, **options) -> dict:
    return irspec.evaluate(qrels_file, run, specs, **options).per_query()


def test_alpha_ndcg_and_alpha_dcg_by_hand(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    got = values("alpha_nDCG@3 alpha_DCG@3 alpha_nDCG@1", qrels_file)["1"]
    dcg = 2 / 1 + 0 / LOG2_3 + 0.5 / 2  # ranks 1..3: b, x, d
    assert got["alpha_nDCG@3"] == pytest.approx(dcg / (2 + 0.5 / LOG2_3 + 0.5 / 2), abs=1e-15)
    # the ideal ideal: every document covers both subtopics, S (1 - alpha)^(r-1) = 2, 1, 0.5
    assert got["alpha_DCG@3"] == pytest.approx(dcg / (2 + 1 / LOG2_3 + 0.5 / 2), abs=1e-15)
    assert got["alpha_nDCG@1"] == 1.0  # b is the ideal's first document too
    assert values("alpha_nDCG@3", qrels_file)["2"] == {"alpha_nDCG@3": 0.0}  # no relevant subtopic


def test_alpha_changes_the_gains(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    # alpha = 0.2: b 2 (gains 0.8, 0.8), x 0, d 0.8; ideal b 2, d 0.8, a 0.8.
    got = values("alpha_nDCG(alpha=0.2)@3", qrels_file)["1"]["alpha_nDCG(alpha=0.2)@3"]
    assert got == pytest.approx((2 + 0.8 / 2) / (2 + 0.8 / LOG2_3 + 0.8 / 2), abs=1e-15)


def test_err_ia_and_nerr_ia_by_hand(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    got = values("ERR_IA@3 nERR_IA@3", qrels_file)["1"]
    err = 2 / 1 + 0 / 2 + 0.5 / 3
    assert got["ERR_IA@3"] == pytest.approx(err / (2 / 1 + 1 / 2 + 0.5 / 3), abs=1e-15)  # = 0.8125
    assert got["ERR_IA@3"] == pytest.approx(0.8125, abs=1e-15)
    assert got["nERR_IA@3"] == pytest.approx(err / (2 / 1 + 0.5 / 2 + 0.5 / 3), abs=1e-15)


def test_nrbp_and_nnrbp_by_hand(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    got = values("NRBP nNRBP NRBP(beta=0.8)", qrels_file)["1"]
    # beta = 0.5: sum of beta^(r-1) g_r = 2 + 0 + 0.25 * 0.5 + 0.125 * 0.5 + 0 = 2.1875; times (1 - 0.5 * 0.5) / 2
    assert got["NRBP"] == 2.1875 * 0.375 == 0.8203125
    # the ideal: 2 + 0.5 * 0.5 + 0.25 * 0.5 = 2.375
    assert got["nNRBP"] == pytest.approx(2.1875 / 2.375, abs=1e-15)
    # beta = 0.8: 2 + 0.64 * 0.5 + 0.512 * 0.5 = 2.576; times (1 - 0.5 * 0.8) / 2 = 0.3
    assert got["NRBP(beta=0.8)"] == pytest.approx(2.576 * 0.3, abs=1e-15)


def test_nnrbp_where_nrbps_factor_is_0(irspec_plugin, tmp_path):
    # alpha 0 and beta 1 make NRBP's factor 1 - (1 - alpha) beta zero in the run's NRBP and the ideal's:
    # it divided 0 by 0 (a ZeroDivisionError; ndeval gives NaN). The factor cancels in the ratio, which
    # is that of the sums it multiplies: with beta 1 and alpha 0, every relevance a document covers.
    irspec_plugin(irspec_diversity.plugin)
    path = tmp_path / "q"
    path.write_text("q1 1 a 1\nq1 2 b 1\nq1 2 c 1\n")  # three (document, subtopic) pairs
    run = {"q1": {"a": 3.0, "x": 2.0, "c": 1.0}}  # covers two of them
    got = values("nNRBP(alpha=0,beta=1), NRBP(alpha=0,beta=1), nNRBP(alpha=0,beta=0.999999)", str(path), run)[
        "q1"
    ]
    assert got["nNRBP(alpha=0,beta=1)"] == 2 / 3
    assert got["NRBP(alpha=0,beta=1)"] == 0.0
    assert got["nNRBP(alpha=0,beta=0.999999)"] == pytest.approx(2 / 3, abs=1e-5)  # its limit


def test_p_ia_strecall_and_ap_ia_by_hand(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    got = values("P_IA@2 P_IA@5 P_IA@10 StRecall@1 AP_IA P@5", qrels_file)["1"]
    assert got["P_IA@2"] == 2 / (2 * 2)  # b covers both subtopics
    assert got["P_IA@5"] == (2 + 1 + 1) / (5 * 2)  # b, d, a
    assert got["P_IA@10"] == 4 / (10 * 2)  # a ranking of 5 still divides by k
    assert got["StRecall@1"] == 1.0
    # subtopic 1: b at 1, a at 4 of R = 2: (1/1 + 2/4) / 2; subtopic 2: b at 1, d at 3: (1/1 + 2/3) / 2
    assert got["AP_IA"] == pytest.approx(((1 + 2 / 4) / 2 + (1 + 2 / 3) / 2) / 2, abs=1e-15)
    # An ordinary metric sees a document relevant to any subtopic as relevant (its highest label).
    assert got["P@5"] == 3 / 5
    later = values("StRecall@1 StRecall@2 StRecall@3", qrels_file, run={"1": {"x": 3.0, "a": 2.0, "d": 1.0}})[
        "1"
    ]
    assert later == {"StRecall@1": 0.0, "StRecall@2": 0.5, "StRecall@3": 1.0}


def test_rel_and_judged_only(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    got = values("StRecall(rel=2)@1 P_IA(judged_only=true)@2 P_IA@2", qrels_file)["1"]
    assert got["StRecall(rel=2)@1"] == 1.0  # at level 2 only b on subtopic 1: S = 1
    # judged only: x is dropped, so the top 2 are b and d: 3 pairs
    assert got["P_IA(judged_only=true)@2"] == 3 / (2 * 2)
    assert got["P_IA@2"] == 2 / (2 * 2)


def test_the_greedy_ideal_breaks_ties_by_the_greater_docno(irspec_plugin, tmp_path):
    """ndeval's ideal ranking is greedy: here it is not the best one, and a run beats it."""
    irspec_plugin(irspec_diversity.plugin)
    path = tmp_path / "q"
    path.write_text("1 0 d0 1\n1 2 d0 1\n1 1 d1 1\n1 3 d1 1\n1 0 d2 1\n1 3 d2 1\n")
    # d0 {0, 2}, d1 {1, 3}, d2 {0, 3} all score 2 first; the greatest docno, d2, goes first, and then
    # d0 and d1 score 1.5 each. The run d0, d1 scores 2 and 2.
    got = irspec.evaluate(str(path), {"1": {"d0": 2.0, "d1": 1.0}}, "alpha_nDCG@2").aggregate()[
        "alpha_nDCG@2"
    ]
    assert got == pytest.approx((2 + 2 / LOG2_3) / (2 + 1.5 / LOG2_3), abs=1e-15)
    assert got > 1
    pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (the test extra) is the reference")
    rows = [tuple(line.split()) for line in path.read_text().splitlines()]
    reference = pyndeval.ndeval(
        [(q, s, d, int(r)) for q, s, d, r in rows],
        [("1", "d0", 2.0), ("1", "d1", 1.0)],
        measures=["alpha-nDCG@2"],
    )
    assert got == reference["1"]["alpha-nDCG@2"]


def test_the_mean_counts_queries_with_no_relevant_subtopic(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    res = irspec.evaluate(qrels_file, RUN, "NRBP")
    assert res.aggregate()["NRBP"] == (0.8203125 + 0.0) / 2  # ndeval's amean divides by both topics
    skipped = irspec.evaluate(qrels_file, {"1": RUN["1"]}, "NRBP", missing_queries="skip")
    assert skipped.aggregate()["NRBP"] == 0.8203125  # ndeval without -c: topics of the run only


def test_spellings(irspec_plugin):
    irspec_plugin(irspec_diversity.plugin)
    # 20 is the default cutoff, and shown: a table says the depth it measured
    assert str(irspec.parse("alpha_nDCG")) == "alpha_nDCG@20" == str(irspec.parse("alpha_nDCG@20"))
    assert str(irspec.parse("alpha_nDCG(alpha=0.5)@20")) == "alpha_nDCG@20"
    assert (
        str(irspec.parse("StRecall")) == "StRecall@20" and str(irspec.parse("NRBP")) == "NRBP"
    )  # NRBP: no cutoff
    assert str(irspec.parse("alpha-nDCG@10")) == "alpha_nDCG@10"
    assert str(irspec.parse("alpha_nDCG(alpha=0.3)@5")) == "alpha_nDCG(alpha=0.3)@5"
    assert str(irspec.parse("ERR-IA@5")) == "ERR_IA@5"
    assert str(irspec.parse("strec@10")) == "StRecall@10"
    assert str(irspec.parse("MAP_IA")) == "AP_IA" == str(irspec.parse("MAP-IA"))
    assert str(irspec.parse("NRBP(beta=0.8)")) == "NRBP(beta=0.8)"
    registry = irspec_plugin(irspec_diversity.plugin)
    names = {a if isinstance(a, str) else a.name for aliases in registry.aliases.values() for a in aliases}
    assert {"α_nDCG", "α_DCG", "MAP_IA"} <= names
    with pytest.raises(irspec.ParameterError):
        irspec.parse("alpha_nDCG@21")  # ndeval's depth is 20
    with pytest.raises(irspec.ParameterError):
        irspec.parse("alpha_nDCG(alpha=1.5)")


def test_frames_and_named_tuples(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    rows = [line.split() for line in QRELS.splitlines()]
    expected = values("alpha_nDCG@3 P@5", qrels_file)
    pandas = pytest.importorskip("pandas", reason="pandas (the test extra) is one of the frame forms")
    frame = pandas.DataFrame(
        {
            "query_id": [r[0] for r in rows],
            "iteration": [r[1] for r in rows],
            "doc_id": [r[2] for r in rows],
            "relevance": [int(r[3]) for r in rows],
        }
    )
    assert values("alpha_nDCG@3 P@5", frame) == expected
    formats = pytest.importorskip(
        "ir_datasets.formats", reason="ir_datasets (irspec[datasets]) names its tuples"
    )
    tuples = [formats.TrecSubQrel(r[0], r[2], int(r[3]), r[1]) for r in rows]
    assert values("alpha_nDCG@3 P@5", tuples) == expected
    polars_frame = pl.DataFrame(
        {
            "qid": [int(r[0]) for r in rows],
            "subtopic": [int(r[1]) for r in rows],
            "docno": [r[2] for r in rows],
            "label": [float(r[3]) for r in rows],
        }
    )
    assert values("alpha_nDCG@3 P@5", polars_frame) == expected


def test_rows_that_are_not_named_tuples_are_input_errors_naming_the_item():
    """A later item of another kind is an input error naming it, quoted short (it was an AttributeError);
    the first is looked at before the rest are read (a generator that fails past its first item shows it)."""
    from collections import namedtuple

    from irspec_diversity.subtopics import read_subtopic_qrels

    row = namedtuple("row", "query_id subtopic doc_id relevance")("q1", "1", "d1", 1)
    with pytest.raises(
        irspec.InputError, match=r"item 1: expected a tuple with the fields query_id, .*, got 'xxx"
    ) as e:
        read_subtopic_qrels([row, "x" * 10_000])
    assert len(str(e.value)) < 300

    def paths():
        yield "qrels.txt"
        raise AssertionError("read past the first item")

    with pytest.raises(
        irspec.InputError, match=r"expected named tuples with subtopic fields, got str 'qrels\.txt'"
    ):
        read_subtopic_qrels(paths())


def test_bad_input_is_located(irspec_plugin, tmp_path):
    irspec_plugin(irspec_diversity.plugin)
    bad = tmp_path / "bad.txt"
    bad.write_text("1 1 a 1\n1 a 1\n")
    with pytest.raises(
        irspec.InputError, match=r"bad.txt:2: expected 4 fields \(topic subtopic docno label\), got 3"
    ):
        irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    bad.write_text("1 1 a 1\n1 1 b x\n")
    with pytest.raises(irspec.InputError, match=r"bad.txt:2: label 'x' is not an integer"):
        irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    bad.write_text("1 1 a 1\n1 2 a 1\n1 1 a 0\n")
    with pytest.raises(
        irspec.InputError, match=r"'a' is judged twice for subtopic '1' of query '1' \(lines 1 and 3\)"
    ):
        irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    with pytest.raises(
        irspec.InputError, match="no subtopic column: expected one of subtopic_id, iteration, subtopic"
    ):
        irspec.evaluate(
            pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]}), RUN, "alpha_nDCG"
        )
    bad.write_bytes(b"1 1 a 1\n" + bytes(3 << 20) + b"\n")  # binary garbage: refused before it is held whole
    with pytest.raises(irspec.InputError, match=r"bad.txt:2: line longer than 1 MiB") as info:
        irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    assert len(str(info.value)) < 300
    bad.write_text("1 1 a 1\n1 1 b " + "x" * 100_000 + "\n")  # a long value is quoted short
    with pytest.raises(irspec.InputError, match=r"bad.txt:2: label 'xxx.*\.\.\.' is not an integer") as info:
        irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    assert len(str(info.value)) < 300
    # labels as the qrels readers read them: Python's int() took "1_0" as 10 and other scripts' digits,
    # and a label beyond 64 bits ended in a polars traceback
    for label in ("1_0", "\u0661", "0x1", "1.0"):
        bad.write_text(f"1 1 a 1\n1 1 b {label}\n")
        with pytest.raises(irspec.InputError, match=r"bad.txt:2: label .* is not an integer"):
            irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    bad.write_text("1 1 a 1\n1 1 b 99999999999999999999\n")
    with pytest.raises(
        irspec.InputError,
        match=r"bad.txt:2: label '99999999999999999999' is out of range \(labels are 64-bit",
    ):
        irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    bad.write_text("1 1 a -9223372036854775808\n1 1 b +9223372036854775807\n")  # the bounds are labels
    irspec.evaluate(str(bad), RUN, "alpha_nDCG")
    with pytest.raises(irspec.InputError, match=re.escape("row 2: label 0.5 is not an integer")):
        frame = pl.DataFrame(
            {"query_id": ["1", "1"], "iteration": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, 0.5]}
        )
        irspec.evaluate(frame, RUN, "alpha_nDCG")


def test_a_diversity_metric_is_not_an_input_of_its_own(irspec_plugin, qrels_file):
    irspec_plugin(irspec_diversity.plugin)
    with pytest.raises(
        irspec.EvaluationError, match=re.escape("computed from qrels and a run; use irspec.evaluate")
    ):
        irspec.evaluate_input(qrels_file, "alpha_nDCG")


def _cli(*args: str) -> subprocess.CompletedProcess:
    """``irspec ...`` as a user runs it, loading the installed plugin (irspec's test session disables
    entry-point plugins in its environment)."""
    env = {k: v for k, v in os.environ.items() if k != "IRSPEC_DISABLE_PLUGIN_AUTOLOAD"} | {
        "IRSPEC_LOAD_PLUGINS": "diversity"
    }
    return subprocess.run(
        [sys.executable, "-m", "irspec", *args], check=False, capture_output=True, text=True, env=env
    )


def test_the_command_line(qrels_file, tmp_path):
    importlib.import_module("irspec_diversity")
    run = tmp_path / "sys.txt"  # the run is named by its file
    run.write_text(
        "".join(
            f"{q} Q0 {d} {i} {s} sys\n" for q, docs in RUN.items() for i, (d, s) in enumerate(docs.items())
        )
    )
    done = _cli(
        "eval",
        qrels_file,
        str(run),
        "-m",
        "alpha_nDCG@20, ERR_IA@20, NRBP, P_IA@10, StRecall@10",
        "-q",
        "--ci",
        "none",
    )
    assert done.returncode == 0, done.stderr
    header, _, first, second, mean = (line.split() for line in done.stdout.splitlines())
    assert header == ["run", "query", "alpha_nDCG@20", "ERR_IA@20", "NRBP", "P_IA@10", "StRecall@10"]
    assert first[:2] == ["sys", "1"] and first[4:] == ["0.8203", "0.2000", "1.0000"]  # NRBP as by hand above
    assert second == ["sys", "2", "0.0000", "0.0000", "0.0000", "0.0000", "0.0000"]
    assert mean[:2] == ["sys", "all"] and mean[4] == "0.4102"  # (0.8203125 + 0) / 2
    listing = _cli("metrics")
    assert all(name in listing.stdout for name in ("alpha_nDCG", "ERR_IA", "NRBP", "P_IA", "StRecall"))
    (tmp_path / "bad.txt").write_text("1 1 a\n")
    failed = _cli("eval", str(tmp_path / "bad.txt"), str(run), "-m", "alpha_nDCG")
    assert failed.returncode == 2
    assert failed.stderr.strip().splitlines() == [
        f"irspec: error: {tmp_path / 'bad.txt'}:1: expected 4 fields (topic subtopic docno label), got 3"
    ]


def test_a_plan(irspec_plugin, qrels_file, tmp_path):
    from irspec.plan import load_plan, run_plan

    irspec_plugin(irspec_diversity.plugin)
    run = tmp_path / "sys.txt"  # the run is named by its file
    run.write_text(
        "".join(
            f"{q} Q0 {d} {i} {s} sys\n" for q, docs in RUN.items() for i, (d, s) in enumerate(docs.items())
        )
    )
    (tmp_path / "plan.yaml").write_text(
        f"qrels: {qrels_file}\nruns:\n  - {{name: sys, path: {run}}}\nmetrics: [NRBP, P_IA@5, P@5]\n"
        "output:\n  - {format: table}\n"
    )
    (result,) = run_plan(load_plan(tmp_path / "plan.yaml")).results
    assert result.per_query()["1"] == {"NRBP": 0.8203125, "P_IA@5": 0.4, "P@5": 0.6}  # as by hand above


def test_an_ir_datasets_diversity_task(irspec_plugin, qrels_file, monkeypatch):
    """irds:<id> qrels are ir_datasets' TrecSubQrel records (here from a stand-in for the download)."""
    formats = pytest.importorskip(
        "ir_datasets.formats", reason="ir_datasets (irspec[datasets]) names its tuples"
    )
    import irspec.data.datasets

    irspec_plugin(irspec_diversity.plugin)
    rows = [line.split() for line in QRELS.splitlines()]

    class Task:
        def has_qrels(self):
            return True

        def qrels_iter(self):
            return iter([formats.TrecSubQrel(q, d, int(label), s) for q, s, d, label in rows])

    monkeypatch.setattr(irspec.data.datasets, "_dataset", lambda src: Task())
    got = values("alpha_nDCG@3 P@5", "irds:clueweb09/en/trec-web-2009/diversity")
    assert got == values("alpha_nDCG@3 P@5", qrels_file)
