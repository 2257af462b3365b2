"""Warnings: what an evaluation rests on that its user may not expect, said in every output.

A run without lines, qrels queries missing from a run (how many, which, what they scored), a relevance
level at which no document is relevant, and two runs of one name (made distinct in every output). The
expected values are hand arithmetic on the small qrels below; the trec_eval behaviour they mirror is
noted where it applies (trec_eval 10 with -c scores a missing query as an empty ranking: 0 on most measures).
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest

import irspec
from irspec.cli import main
from irspec.data import Run
from irspec.evaluation.evaluate import distinct_names, evaluate_many
from irspec.evaluation.evaluated import collect_warnings
from irspec.report import to_html

# Seven queries, labels 0..3. q1's d1 is relevant at every level up to 3, q2's d3 at level 1 only.
QRELS = "q1 0 d1 3\nq1 0 d2 0\nq2 0 d3 1\n" + "".join(f"q{i} 0 d{i}0 2\n" for i in range(3, 8))
# Answers q1 (relevant d1 at rank 1) and q2 (non-relevant d9 at rank 1, relevant d3 at rank 2) only.
RUN = "q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\nq2 Q0 d9 1 2.0 bm25\nq2 Q0 d3 2 1.0 bm25\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "bm25.run").write_text(RUN)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "bm25.run").write_text(
        RUN
    )  # another file of the name bm25 (runs are named by their file)
    return tmp_path


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def warning_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("irspec: warning: ")]


def quiet(fn, *args, **kwargs):
    """Call ``fn`` with irspec's Python warnings silenced (the tests of those are below)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        return fn(*args, **kwargs)


# --------------------------------------------------------------------------------------------------
# A run with no lines


@pytest.mark.parametrize(
    "text", ["", "\n\n  \n", "# a comment\n# another\n"], ids=["empty", "blank", "comments"]
)
def test_a_run_file_without_lines_warns(files, capsys, text):
    (files / "none.run").write_text(text)
    code, out, err = cli(
        capsys, "eval", files / "qrels.txt", files / "none.run", "-m", "P.1", "--format", "trec"
    )
    assert code == 0
    assert out == "P_1                   \tall\t0.0000\n"  # 7 queries, each scored 0
    (line,) = warning_lines(err)
    assert line == (
        f"irspec: warning: {files / 'none.run'}: the run has no lines; all 7 queries of the qrels are scored as "
        "empty rankings (0 on most measures) and counted in the means (missing_queries='zero', trec_eval -c)"
    )


def test_an_empty_dict_run_warns(files):
    res = quiet(irspec.evaluate, str(files / "qrels.txt"), {}, "P@1", missing_queries="skip")
    assert res.warnings == (
        "<dict>: the run has no lines; all 7 queries of the qrels are left out of the means (missing_queries='skip')",
    )
    assert res.query_ids == ()


def test_a_run_with_lines_does_not_say_it_has_none(files):
    res = quiet(irspec.evaluate, str(files / "qrels.txt"), str(files / "bm25.run"), "P@1")
    assert not any("no lines" in w for w in res.warnings)


# --------------------------------------------------------------------------------------------------
# Qrels queries missing from a run; one default for every format


def test_missing_queries_say_how_many_which_and_what_they_scored(files):
    res = quiet(irspec.evaluate, str(files / "qrels.txt"), str(files / "bm25.run"), "P@1")
    assert res.warnings == (
        f"{files / 'bm25.run'}: 5 of the 7 queries of the qrels are missing from the run ('q3', 'q4', 'q5', 'q6', "
        "'q7'): scored as empty rankings (0 on most measures) and counted in the means (missing_queries='zero', "
        "trec_eval -c)",
    )
    assert res.aggregate()["P@1"] == pytest.approx(1 / 7)  # q1 1, q2 0, q3..q7 0
    skipped = quiet(
        irspec.evaluate, str(files / "qrels.txt"), str(files / "bm25.run"), "P@1", missing_queries="skip"
    )
    assert skipped.warnings[0].endswith("'q7'): left out of the means (missing_queries='skip')")
    assert skipped.aggregate()["P@1"] == pytest.approx(1 / 2)  # q1 1, q2 0


def test_many_missing_queries_list_the_first_few_then_how_many_more():
    qrels = {f"q{i}": {"d": 1} for i in range(10, 20)}
    res = quiet(irspec.evaluate, qrels, {"q10": {"d": 1.0}}, "P@1")
    listed = "('q11', 'q12', 'q13', 'q14', 'q15' and 4 more)"  # q11..q19 lack answers: 5 shown, 4 more
    assert f"9 of the 10 queries of the qrels are missing from the run {listed}" in res.warnings[0]


def test_one_missing_query_is_singular():
    res = quiet(irspec.evaluate, {"a": {"d": 1}, "b": {"d": 1}}, {"a": {"d": 1.0}}, "P@1")
    assert "1 of the 2 queries of the qrels is missing from the run ('b')" in res.warnings[0]


@pytest.mark.parametrize("fmt", ["trec", "json", "table", "csv"])
def test_every_format_scores_missing_queries_0_by_default(files, capsys, fmt):
    # trec_eval 10 without -c stops at q3 (exit 4); irspec scores it as trec_eval -c does: P@1 = 1/7
    code, out, err = cli(
        capsys, "eval", files / "qrels.txt", files / "bm25.run", "-m", "P.1", "--format", fmt
    )
    assert code == 0 and len(warning_lines(err)) == 1
    if fmt == "trec":
        assert out == "P_1                   \tall\t0.1429\n"
    elif fmt == "json":
        assert json.loads(out)["runs"][0]["aggregate"]["P@1"] == pytest.approx(1 / 7)
        assert json.loads(out)["options"]["missing_queries"] == "zero"
    elif fmt == "csv":
        assert out.splitlines()[1].split(",")[:3] == ["bm25", "all", "P@1"]
        assert float(out.splitlines()[1].split(",")[3]) == pytest.approx(1 / 7)
    else:
        assert out.splitlines()[2].split()[:2] == ["bm25", "0.1429"]


def test_c_gives_the_default_and_skip_is_still_available(files, capsys):
    base = [files / "qrels.txt", files / "bm25.run", "-m", "P.1", "--format", "trec"]
    assert cli(capsys, "eval", "-c", *base)[1] == "P_1                   \tall\t0.1429\n"
    assert (
        cli(capsys, "eval", "--missing-queries", "skip", *base)[1] == "P_1                   \tall\t0.5000\n"
    )


def test_c_contradicting_missing_queries_skip_is_a_usage_error(files, capsys):
    code, out, err = cli(
        capsys,
        "eval",
        "-c",
        "--missing-queries",
        "skip",
        files / "qrels.txt",
        files / "bm25.run",
        "-m",
        "P.1",
    )
    assert code == 2 and out == ""
    assert err == "irspec: error: -c scores missing queries 0; it contradicts --missing-queries skip\n"


# --------------------------------------------------------------------------------------------------
# A relevance level at which nothing is relevant


def test_a_level_above_every_label_warns_once_for_all_runs(files, capsys):
    code, _out, err = cli(
        capsys,
        "eval",
        "-l",
        "5",
        "-m",
        "P.1",
        "-m",
        "map",
        "-c",
        files / "qrels.txt",
        files / "bm25.run",
        files / "b" / "bm25.run",
    )
    assert code == 0
    level = [w for w in warning_lines(err) if "relevance level" in w]
    assert level == [
        "irspec: warning: relevance level 5 (P@1, AP): no document in the qrels is relevant (no label >= 5; "
        "the highest is 3), so every query has R = 0"
    ]


def test_the_highest_label_is_not_warned_about(files):
    res = quiet(irspec.evaluate, str(files / "qrels.txt"), str(files / "bm25.run"), "P@1", relevance_level=3)
    assert not any("relevance level" in w for w in res.warnings)
    assert res.aggregate()["P@1"] == pytest.approx(1 / 7)  # d1 (label 3) is still relevant


def test_a_metric_rel_above_every_label_is_named():
    qrels, run = {"a": {"d": 2}}, {"a": {"d": 1.0}}
    res = quiet(irspec.evaluate, qrels, run, ["P@1", "P(rel=4)@1"])
    assert res.warnings == (
        "relevance level 4 (P(rel=4)@1): no document in the qrels is relevant (no label >= 4; the highest is 2), "
        "so every query has R = 0",
    )
    assert res.aggregate() == {"P@1": 1.0, "P(rel=4)@1": 0.0}


def test_a_metric_without_relevance_levels_is_not_warned_about():
    # nDCG reads gains from the labels; -l does not change it, so a high level is nothing to warn of
    res = quiet(irspec.evaluate, {"a": {"d": 2}}, {"a": {"d": 1.0}}, "nDCG", relevance_level=5)
    assert res.warnings == ()


# --------------------------------------------------------------------------------------------------
# Two runs with one name


def test_two_files_of_one_name_get_distinct_labels_in_every_format(files, capsys):
    argv = [
        "eval",
        files / "qrels.txt",
        files / "bm25.run",
        files / "b" / "bm25.run",
        "-m",
        "P.1",
        "-c",
        "--ci",
        "none",
    ]
    outputs = {}
    for fmt in ("table", "json", "csv", "trec", "latex", "markdown"):
        code, out, err = cli(capsys, *argv, "--format", fmt)
        assert code == 0
        outputs[fmt] = out
        dup = [w for w in warning_lines(err) if "named" in w]
        assert dup == [
            f"irspec: warning: 2 runs are named 'bm25'; labelled 'bm25' ({files / 'bm25.run'}) and "
            f"'bm25 (2)' ({files / 'b' / 'bm25.run'})"
        ]
    assert [line.split("  ")[0] for line in outputs["table"].splitlines()[2:]] == ["bm25", "bm25 (2)"]
    assert [r["name"] for r in json.loads(outputs["json"])["runs"]] == ["bm25", "bm25 (2)"]
    assert [line.split(",")[0] for line in outputs["csv"].splitlines()[1:]] == ["bm25", "bm25 (2)"]
    assert "bm25 (2)" in outputs["latex"] and "bm25 (2)" in outputs["markdown"]
    code, out, _ = cli(capsys, *argv, "-m", "official", "--format", "trec")
    assert [line.split("\t")[2] for line in out.splitlines() if line.startswith("runid")] == [
        "bm25",
        "bm25 (2)",
    ]


def test_the_same_file_twice_gets_distinct_labels(files):
    a = str(files / "bm25.run")
    results = quiet(evaluate_many, str(files / "qrels.txt"), [a, a], "P@1")
    assert [r.run_name for r in results] == ["bm25", "bm25 (2)"]
    assert [r.aggregate() for r in results] == [{"P@1": pytest.approx(1 / 7)}] * 2


def test_a_label_already_taken_is_skipped():
    runs = [Run.from_dict({"a": {"d": 1.0}}, name=n) for n in ("x", "x", "x (2)", "y")]
    results = quiet(evaluate_many, {"a": {"d": 1}}, runs, "P@1")
    assert [r.run_name for r in results] == ["x", "x (3)", "x (2)", "y"]
    assert results[3].warnings == ()
    assert results[0].warnings == ("2 runs are named 'x'; labelled 'x' (<dict>) and 'x (3)' (<dict>)",)


def test_distinct_names_leaves_distinct_names_alone():
    runs = [Run.from_dict({"a": {"d": 1.0}}, name=n) for n in ("x", "y")]
    results = quiet(evaluate_many, {"a": {"d": 1}}, runs, "P@1")
    assert distinct_names(results) == results


# --------------------------------------------------------------------------------------------------
# JSON and HTML carry the warnings; Python issues them as IrspecWarning


def test_json_has_every_warning_once_and_each_run_its_own(files, capsys):
    _code, out, err = cli(
        capsys,
        "eval",
        "-l",
        "5",
        "-m",
        "P.1",
        files / "qrels.txt",
        files / "bm25.run",
        files / "b" / "bm25.run",
        "--format",
        "json",
    )
    doc = json.loads(out)
    level = (
        "relevance level 5 (P@1): no document in the qrels is relevant (no label >= 5; the highest is 3), "
        "so every query has R = 0"
    )
    missing_a = next(w for w in doc["warnings"] if w.startswith(f"{files / 'bm25.run'}: 5 of the 7"))
    assert doc["warnings"].count(level) == 1
    assert len(doc["warnings"]) == 4  # a's missing queries, the level, b's missing queries, the names
    assert [w.removeprefix("irspec: warning: ") for w in warning_lines(err)] == doc["warnings"]
    assert missing_a in doc["runs"][0]["warnings"] and level in doc["runs"][0]["warnings"]
    assert level in doc["runs"][1]["warnings"] and missing_a not in doc["runs"][1]["warnings"]


def test_html_shows_the_warnings_above_the_results(files):
    results = quiet(
        evaluate_many, str(files / "qrels.txt"), [str(files / "bm25.run")] * 2, "P@1", relevance_level=9
    )
    html = to_html(results)
    box = html.index('<section class="warnings"')
    assert box < html.index('<h2 id="results">')
    assert '<h2 id="warnings">3 warnings</h2>' in html
    assert "no label &gt;= 9" in html  # escaped
    assert '<a href="#warnings">Warnings</a>' in html
    assert 'class="warnings"' not in to_html(
        quiet(evaluate_many, {"a": {"d": 1}}, [{"a": {"d": 1.0}}], "P@1")
    )


def test_python_issues_irspec_warnings_from_the_callers_line(files):
    with pytest.warns(irspec.IrspecWarning, match=r"5 of the 7 queries of the qrels are missing") as record:
        irspec.evaluate(str(files / "qrels.txt"), str(files / "bm25.run"), "P@1")
    assert [w.filename for w in record] == [__file__]
    assert issubclass(irspec.IrspecWarning, UserWarning)


def test_warnings_can_be_made_errors(files):
    with warnings.catch_warnings():
        warnings.simplefilter("error", irspec.IrspecWarning)
        with pytest.raises(irspec.IrspecWarning, match="no lines"):
            irspec.evaluate(str(files / "qrels.txt"), {}, "P@1")


def test_the_cli_prints_warnings_once_and_issues_no_python_warning(files, capsys):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        code, _, err = cli(capsys, "eval", files / "qrels.txt", files / "bm25.run", "-m", "P.1")
    assert code == 0 and [w for w in record if issubclass(w.category, irspec.IrspecWarning)] == []
    assert len(warning_lines(err)) == 1 and "IrspecWarning" not in err


# --------------------------------------------------------------------------------------------------
# Plans


def test_a_plan_reports_its_warnings_in_json_and_html(files, capsys):
    plan = files / "plan.yaml"
    plan.write_text(
        "qrels: qrels.txt\n"
        "runs: [{name: one, path: bm25.run}, {name: two, path: b/bm25.run}]\n"
        "metrics: [P@1]\n"
        "options: {relevance_level: 4}\n"
        "compare: {baseline: one}\n"
        "output:\n"
        "  - {format: json, path: out/results.json}\n"
        "  - {format: json, path: out/comparisons.json, content: comparisons}\n"
        "  - {format: html, path: out/report.html}\n"
    )
    code, _, err = cli(capsys, "run", plan)
    assert code == 0
    printed = [w.removeprefix("irspec: warning: ") for w in warning_lines(err)]
    assert len(printed) == 3  # a's and b's missing queries, and level 4 once
    assert json.loads((files / "out/results.json").read_text())["warnings"] == printed
    assert json.loads((files / "out/comparisons.json").read_text())["warnings"] == printed
    html = (files / "out/report.html").read_text()
    assert '<h2 id="warnings">3 warnings</h2>' in html and "no label &gt;= 4" in html


def test_a_plan_built_with_one_name_twice_gets_distinct_labels(files):
    plan = files / "plan.yaml"
    plan.write_text(
        "qrels: qrels.txt\nruns: [{name: one, path: bm25.run}, {name: two, path: b/bm25.run}]\nmetrics: [P@1]\n"
    )
    loaded = irspec.load_plan(plan)
    same = dataclasses.replace(loaded, runs=tuple(dataclasses.replace(r, name="one") for r in loaded.runs))
    report = quiet(irspec.run_plan, same)
    assert [r.run_name for r in report.results] == ["one", "one (2)"]
    assert any(w.startswith("2 runs are named 'one'") for w in report.warnings)
    assert collect_warnings(report.results) == list(report.warnings)


# --------------------------------------------------------------------------------------------------
# Judgment coverage: Judged@10 on every result, a warning when the top 10 is mostly unjudged

# q1 judges d1 (relevant) and d2; q2 judges d3. The run ranks, for q1, d1 then nine documents the qrels
# do not know (u1..u9), and for q2 d3 then u10..u18: one judged document in each top 10.
COVERAGE_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
SPARSE_RUN = "".join(
    f"{q} Q0 {d} {r + 1} {10 - r} sparse\n"
    for q, docs in (
        ("q1", ["d1"] + [f"u{i}" for i in range(1, 10)]),
        ("q2", ["d3"] + [f"u{i}" for i in range(10, 19)]),
    )
    for r, d in enumerate(docs)
)
# Judged@10 = 1/10 for each query, so 0.1 on average; P@10 = 1/10 for each query as well.
SPARSE_WARNING = (
    "only 10% of the run's top 10 documents are in the qrels (under 50%; Judged@10 = 0.10), so its scores "
    "are likely underestimated (unjudged documents count as non-relevant)"
)


@pytest.fixture
def sparse(tmp_path):
    (tmp_path / "qrels.txt").write_text(COVERAGE_QRELS)
    (tmp_path / "sparse.run").write_text(SPARSE_RUN)
    return tmp_path


def test_a_run_whose_top_10_is_mostly_unjudged_warns(sparse):
    with pytest.warns(irspec.IrspecWarning) as caught:
        res = irspec.evaluate(str(sparse / "qrels.txt"), str(sparse / "sparse.run"), "P@10")
    assert res.warnings == (f"{sparse / 'sparse.run'}: {SPARSE_WARNING}",)
    assert [str(w.message) for w in caught] == list(res.warnings)
    assert res.judged_at_10 == pytest.approx(0.1)
    # Computing Judged@10 adds no metric: the user asked for P@10 only.
    assert [str(m) for m in res.metrics] == ["P@10"]
    assert res.per_query() == {"q1": {"P@10": pytest.approx(0.1)}, "q2": {"P@10": pytest.approx(0.1)}}
    assert res.to_frame(wide=True).columns == ["run", "query_id", "P@10"]


def test_the_judged_warning_threshold_is_an_option(sparse):
    args = (str(sparse / "qrels.txt"), str(sparse / "sparse.run"), "P@10")
    assert irspec.evaluate(*args, judged_warning=0.1).warnings == ()  # 0.1 is not under 0.1
    assert irspec.evaluate(*args, judged_warning=None).warnings == ()
    assert irspec.evaluate(*args, judged_warning=0.0).judged_at_10 == pytest.approx(0.1)  # still computed
    notes = quiet(
        irspec.evaluate,
        str(sparse / "qrels.txt"),
        {"q1": {"d1": 2.0, "d2": 1.0, "u1": 0.5}},
        "P@1",
        judged_warning=0.7,
    ).warnings  # 2 of 3 judged: 67% < 70% (and a warning that q2 is missing)
    assert notes[-1].startswith("<dict>: only 67% of the run's top 10 documents are in the qrels (under 70%;")
    with pytest.raises(irspec.EvaluationError, match="judged_warning must be a number from 0 to 1"):
        irspec.evaluate(*args, judged_warning=1.5)


def test_a_short_ranking_of_judged_documents_does_not_warn(sparse):
    # Three judged documents: Judged@10 = 3/10 (the metric divides by 10), yet every document shown is
    # judged, so nothing is underestimated for want of judgments.
    res = irspec.evaluate(
        str(sparse / "qrels.txt"), {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}, "P@10"
    )
    assert res.warnings == ()
    assert res.judged_at_10 == pytest.approx((2 / 10 + 1 / 10) / 2)


def test_judged_at_10_leaves_out_the_queries_the_run_does_not_answer(sparse):
    # q2 is missing: scored as an empty ranking under missing_queries="zero", which is no evidence of
    # unjudged documents. q1's top 10 is d1, d2 and u1..u8: 2 of 10 judged.
    run = {"q1": {"d1": 10.0, "d2": 9.0, **{f"u{i}": 9.0 - i for i in range(1, 9)}}}
    res = quiet(irspec.evaluate, str(sparse / "qrels.txt"), run, "P@10")
    assert res.judged_at_10 == pytest.approx(0.2)
    assert any("only 20% of the run's top 10" in w for w in res.warnings)


def test_the_judged_warning_is_in_every_output(sparse, capsys):
    qrels, run = sparse / "qrels.txt", sparse / "sparse.run"
    code, out, err = cli(capsys, "eval", qrels, run, "-m", "P@10", "--format", "json")
    assert code == 0
    assert warning_lines(err) == [f"irspec: warning: {run}: {SPARSE_WARNING}"]
    doc = json.loads(out)
    assert doc["warnings"] == [f"{run}: {SPARSE_WARNING}"] and doc["runs"][0]["warnings"] == doc["warnings"]
    assert list(doc["runs"][0]["aggregate"]) == ["P@10"] and doc["runs"][0]["judged_at_10"] == pytest.approx(
        0.1
    )
    code, out, err = cli(capsys, "eval", qrels, run, "-m", "P@10", "--judged-warning", "0")
    assert code == 0 and warning_lines(err) == []
    code, out, err = cli(capsys, "eval", qrels, run, "-m", "P@10", "--judged-warning", "0.05")
    assert code == 0 and warning_lines(err) == []
    html = to_html([quiet(irspec.evaluate, str(qrels), str(run), "P@10")])
    assert '<h2 id="warnings">1 warning</h2>' in html and "only 10% of the run&#39;s top 10" in html


def test_many_runs_under_the_judged_threshold_are_one_warning_on_standard_error(sparse, capsys):
    # Four runs of SPARSE_RUN's lines (each 10% judged in its top 10, Judged@10 = 0.10) and one whose
    # top 10s hold every judged document there is (q1: d1, d2; q2: d3: all shown are judged).
    qrels = sparse / "qrels.txt"
    sparse_runs = []
    for i in range(4):
        path = sparse / f"s{i}.run"
        path.write_text(SPARSE_RUN)
        sparse_runs.append(path)
    (sparse / "full.run").write_text("q1 Q0 d1 1 2 f\nq1 Q0 d2 2 1 f\nq2 Q0 d3 1 1 f\n")
    code, out, err = cli(
        capsys, "eval", qrels, *sparse_runs, sparse / "full.run", "-m", "P@10", "--format", "json"
    )
    assert code == 0
    assert warning_lines(err) == [
        "irspec: warning: 4 runs show under 50% of their top 10 documents in the qrels, so their scores are "
        "likely underestimated (unjudged documents count as non-relevant): "
        f"{sparse_runs[0]} (10%; Judged@10 = 0.10), {sparse_runs[1]} (10%; Judged@10 = 0.10), "
        f"{sparse_runs[2]} (10%; Judged@10 = 0.10) and 1 more"
    ]
    # The JSON keeps each run's own warning (data, not a message to read).
    doc = json.loads(out)
    assert doc["warnings"] == [f"{path}: {SPARSE_WARNING}" for path in sparse_runs]
    # One run under the threshold: its own warning, as before.
    code, out, err = cli(capsys, "eval", qrels, sparse_runs[0], sparse / "full.run", "-m", "P@10")
    assert warning_lines(err) == [f"irspec: warning: {sparse_runs[0]}: {SPARSE_WARNING}"]


def test_evaluate_many_warns_once_for_many_runs_under_the_judged_threshold(sparse):
    qrels = str(sparse / "qrels.txt")
    paths = []
    for i in range(3):
        (sparse / f"s{i}.run").write_text(SPARSE_RUN)
        paths.append(str(sparse / f"s{i}.run"))
    with pytest.warns(irspec.IrspecWarning) as caught:
        results = evaluate_many(qrels, paths, "P@10")
    assert [str(w.message) for w in caught] == [
        "3 runs show under 50% of their top 10 documents in the qrels, so their scores are likely "
        "underestimated (unjudged documents count as non-relevant): "
        + ", ".join(f"{p} (10%; Judged@10 = 0.10)" for p in paths)
    ]
    assert [r.warnings for r in results] == [(f"{p}: {SPARSE_WARNING}",) for p in paths]  # each its own


def test_a_coverage_warning_pickles_as_itself():
    import pickle

    from irspec.evaluation.notes import CoverageWarning, summarised

    w = CoverageWarning("r.run", 0.1, 0.5, 0.1)
    back = pickle.loads(pickle.dumps(w))
    assert back == w and isinstance(back, CoverageWarning) and (back.source, back.share) == ("r.run", 0.1)
    assert summarised([back, "other"]) == [w, "other"]


def test_a_plan_takes_the_judged_warning_option(sparse, capsys):
    plan = sparse / "plan.yaml"
    body = "qrels: qrels.txt\nruns: [{name: s, path: sparse.run}]\nmetrics: [P@10]\n"
    plan.write_text(body)
    assert any(SPARSE_WARNING in w for w in quiet(irspec.run_plan, irspec.load_plan(plan)).warnings)
    plan.write_text(body + "options: {judged_warning: null}\n")
    assert quiet(irspec.run_plan, irspec.load_plan(plan)).warnings == ()
