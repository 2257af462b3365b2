"""irspec diff (irspec.diff): two runs compared query by query.

Expected values come from hand arithmetic on the small files below (written out at each assertion) and,
for the per-query values on the demo data, from trec_eval 10's own ``-q`` output; the rankings (score
descending, then docno descending) are trec_eval's rule applied by hand.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
from browser import chromium, dump_dom, headless
from shared_data import TREC_EVAL_TEST

import irspec
from irspec.cli import main

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "specs" / "demo"
TREC_DATA = TREC_EVAL_TEST

QRELS = """\
q1 0 d1 1
q1 0 d2 0
q1 0 d3 2
q1 0 d4 1
q2 0 e1 1
q2 0 e2 1
q3 0 f1 1
"""
# A's q1: d1 (rel), d2 (not), d3 (rel), x9 (unjudged)
RUN_A = """\
q1 Q0 d1 1 3.0 A
q1 Q0 d2 2 2.0 A
q1 Q0 d3 3 1.0 A
q1 Q0 x9 4 0.5 A
q2 Q0 e1 1 2.0 A
q2 Q0 zz 2 1.0 A
q3 Q0 f1 1 1.0 A
"""
# B's q1: d2 first; y1 and d4 tie at 4.0, so docno descending puts y1 (unjudged) before d4 whatever the
# rank column says; then d1. B's q2: e1 and e2 tie, e2 first. B has no q3.
RUN_B = """\
q1 Q0 d2 1 5.0 B
q1 Q0 d4 2 4.0 B
q1 Q0 y1 3 4.0 B
q1 Q0 d1 4 1.0 B
q2 Q0 e1 1 3.0 B
q2 Q0 e2 2 3.0 B
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    return tmp_path


def _diff(files, metrics="P@2, AP", **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = irspec.diff(files / "qrels.txt", str(files / "a.run"), str(files / "b.run"), metrics, **kw)
    return found, [str(w.message) for w in caught]


def _cli(files, *args, second="b.run"):
    """``irspec diff`` on the files above (A, then B unless ``second`` says), with ``args``."""
    return main(["diff", str(files / "qrels.txt"), str(files / "a.run"), str(files / second), *args])


def _by_id(found):
    return {q.query_id: q for q in found.queries}


def test_values_differences_and_order_by_hand(files):
    found, _ = _diff(files)
    q = _by_id(found)
    # P@2 (relevant: label >= 1): A q1 d1, d2 -> 1/2; B q1 d2, y1 -> 0/2; q2 A e1, zz -> 1/2, B e2, e1 -> 2/2;
    # q3 A f1 -> 1/2, B lacks q3: an empty ranking (trec_eval -c) -> 0.
    # AP: A q1 R=3, relevant at 1 and 3: (1/1 + 2/3)/3 = 5/9; B q1 relevant at 3 and 4: (1/3 + 2/4)/3 = 5/18;
    # q2 R=2: A e1 at 1: (1/1)/2 = 1/2; B at 1 and 2: (1 + 1)/2 = 1; q3: A 1, B 0.
    assert q["q1"].a == pytest.approx((0.5, 5 / 9)) and q["q1"].b == pytest.approx((0.0, 5 / 18))
    assert q["q2"].a == pytest.approx((0.5, 0.5)) and q["q2"].b == pytest.approx((1.0, 1.0))
    assert q["q3"].a == pytest.approx((0.5, 1.0)) and q["q3"].b == pytest.approx((0.0, 0.0))
    assert q["q1"].delta == pytest.approx((-0.5, 5 / 18 - 5 / 9))
    # losses on P@2: q1 and q3 both -0.5 (ties by query id); the one gain q2 (+0.5)
    assert [x.query_id for x in found.losses()] == ["q1", "q3"]
    assert [x.query_id for x in found.gains()] == ["q2"]
    assert [x.query_id for x in found.ordered()] == ["q1", "q3", "q2"]
    assert [x.query_id for x in found.ordered(1)] == ["q1", "q2"]
    # the means: P@2 A (0.5 + 0.5 + 0.5)/3, B (0 + 1 + 0)/3
    assert found.means_a["P@2"] == pytest.approx(0.5) and found.means_b["P@2"] == pytest.approx(1 / 3)


def test_rankings_side_by_side_labels_and_ranks_in_the_other_run(files):
    found, _ = _diff(files, top=3)
    q1 = _by_id(found)["q1"]
    # A's top 3: d1 (label 1, B ranks it 4th), d2 (0, B's 1st), d3 (2, B lacks it)
    assert [(d.docno, d.rank, d.label, d.relevant, d.other) for d in q1.top_a] == [
        ("d1", 1, 1, True, 4),
        ("d2", 2, 0, False, 1),
        ("d3", 3, 2, True, None),
    ]
    # B's top 3: d2, then the tie at 4.0 by docno descending: y1 (unjudged; A lacks it), d4 (1; A lacks it)
    assert [(d.docno, d.rank, d.label, d.relevant, d.other) for d in q1.top_b] == [
        ("d2", 1, 0, False, 2),
        ("y1", 2, None, False, None),
        ("d4", 3, 1, True, None),
    ]
    # relevant in B's top 3 and not in A's: d4; in A's top 3 and not in B's: d1 (B's 4th) and d3
    assert q1.gained == ("d4",) and q1.lost == ("d1", "d3")
    assert (q1.unjudged_a, q1.unjudged_b) == (0, 1)  # x9 is A's 4th, below the top 3
    q2 = _by_id(found)["q2"]
    assert [d.docno for d in q2.top_b] == ["e2", "e1"]  # the tie at 3.0, docno descending
    assert _by_id(found)["q3"].top_b == ()


def test_depth_cuts_both_rankings_before_anything_is_compared(files):
    found, _ = _diff(files, top=3, depth=3)
    q1 = _by_id(found)["q1"]
    assert q1.top_a[0].other is None  # B ranks d1 4th: below depth 3, not retrieved
    # AP at depth 3: B q1 keeps d2, y1, d4: (1/3)/3
    assert q1.b[1] == pytest.approx(1 / 9)


def test_a_lower_is_better_metric_counts_a_rise_as_a_loss(files):
    found, _ = _diff(files, "SL")
    # SL, the rank of the first relevant document: q1 A 1, B 3 (d4) -> +2, worse; q2 1 and 1
    q = _by_id(found)
    assert q["q1"].delta == (2.0,)
    assert [x.query_id for x in found.losses()] == ["q1"] and found.gains() == []


def test_values_equal_trec_eval_per_query():
    """Both sides' per-query values against trec_eval 10's own printed output on its test data: a is
    results.test (out.test.aq), b results.trunc, which lacks topic 302 (out.test.aqc, ``-c``)."""
    if not TREC_DATA.is_dir():
        pytest.skip("../shared/trec_eval_test is absent")
    qrels, a, b = TREC_DATA / "qrels.test", TREC_DATA / "results.test", TREC_DATA / "results.trunc"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)  # b lacks a query: said, and scored 0
        found = irspec.diff(qrels, str(a), str(b), "nDCG@10, AP, P@5")
    names = {"ndcg_cut_10": 0, "map": 1, "P_5": 2}
    for out, side in (("out.test.aq", "a"), ("out.test.aqc", "b")):
        expected = {}
        for line in (TREC_DATA / out).read_text().splitlines():
            measure, qid, value = line.split()
            if qid != "all" and measure in names:
                expected[(qid, names[measure])] = float(value)
        got = {(q.query_id, j): getattr(q, side)[j] for q in found.queries for j in range(3)}
        assert set(got) == set(expected) and len(got) == 3 * 3  # topics 301-303, 302 0 on b's side
        for key, value in expected.items():
            assert abs(got[key] - value) <= 5e-5, (side, key)  # trec_eval prints 4 decimals


def test_runs_of_different_query_sets_say_which_and_what_is_done(files):
    found, caught = _diff(files)
    said = [w for w in caught if "lacks" in w]
    assert said == [
        f"b ({files / 'b.run'}) lacks 1 query that a answers ('q3'): scored there as an empty ranking "
        "(0 on most measures), as trec_eval -c does"
    ]
    assert said[0] in found.warnings
    skipped, caught = _diff(files, missing_queries="skip")
    assert [q.query_id for q in skipped.queries] == ["q1", "q2"]
    assert any("lacks 1 query that a answers ('q3'): left out of the comparison" in w for w in caught)


def test_the_same_run_twice_is_a_warning_and_nothing_differs(files):
    found, caught = _diff_same(files)
    assert any("the same run is given twice" in w for w in caught)
    assert found.losses() == [] and found.gains() == []
    assert "no query differs on P@2" in str(found)


def _diff_same(files):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = irspec.diff(files / "qrels.txt", str(files / "a.run"), str(files / "a.run"), "P@2")
    return found, [str(w.message) for w in caught]


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "relstring@3"], "relstring@3: a text-valued metric (one string per query) has no difference"),
        (
            ["-m", "NumRet"],
            "NumRet: the queries are sorted by the first metric, and NumRet has no better direction",
        ),
        (["--top", "0"], "top must be an integer >= 1"),
        (["--queries", "0"], "queries must be an integer >= 1"),
        (["-m", "P@2", "-m", "nDCG@"], "nDCG@"),
    ],
)
def test_bad_arguments_are_one_line_errors_and_write_nothing(files, capsys, args, message):
    out = files / "out.html"
    code = _cli(files, *args, "-f", "html", "-o", str(out))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("irspec: error: ") and message in err and "Traceback" not in err
    assert sorted(p.name for p in files.iterdir()) == ["a.run", "b.run", "qrels.txt"]  # no page, no temporary


def test_an_empty_run_is_an_error_naming_it(files, capsys):
    (files / "empty.run").write_text("")
    code = _cli(files, second="empty.run")
    err = capsys.readouterr().err
    assert (
        code == 2
        and err == f"irspec: error: {files / 'empty.run'}: the run is empty (no lines): nothing to compare\n"
    )


@pytest.mark.parametrize(
    "qrels, extra, reason",
    [
        ("", [], "the qrels have no judgments: expected the judgments of the runs' queries"),
        ("# judged later\n", [], "the qrels have no judgments: expected the judgments of the runs' queries"),
        (
            "zz 0 d1 1\nzy 0 d2 1\n",
            [],
            "no query of the qrels is in either run (the qrels' 'zy', 'zz'; the runs' 'q1', 'q2', 'q3'): "
            "expected the judgments of the runs' queries",
        ),
        # A answers q3 and B does not: under skip no query is left to compare
        (
            "q3 0 f1 1\n",
            ["--missing-queries", "skip"],
            "no query of the qrels is answered by both runs ('q3' by one), and missing_queries='skip' leaves "
            "out the others: nothing to compare",
        ),
    ],
)
def test_qrels_that_judge_none_of_the_runs_queries_are_an_error_naming_them(
    files, capsys, qrels, extra, reason
):
    # Means of 0.0000 over 0 queries (or over queries neither run answers) compare nothing: refused,
    # naming the qrels, where a warning would scroll past above a table that looks like a result.
    (files / "qrels.txt").write_text(qrels)
    out = files / "out.txt"
    code = _cli(files, *extra, "-o", str(out))
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err == f"irspec: error: {files / 'qrels.txt'}: {reason}\n"
    assert not out.exists()
    with pytest.raises(irspec.InputError, match=re.escape(reason)):  # the library refuses alike
        _diff(files, missing_queries="skip" if extra else "zero")


def test_output_into_a_missing_directory_is_refused_as_the_help_says(files, capsys):
    # -o writes as a shell's > would, into a directory that exists: refused before anything is read,
    # nothing made; --help says so.
    code = _cli(files, "-o", str(files / "no" / "such" / "out.txt"))
    err = capsys.readouterr().err
    assert (
        code == 2
        and err
        == f"irspec: error: cannot write {str(files / 'no' / 'such' / 'out.txt')!r}: no such directory: {str(files / 'no' / 'such')!r}\n"
    )
    assert not (files / "no").exists()
    with pytest.raises(SystemExit):
        main(["diff", "--help"])
    assert "its directory must exist" in " ".join(capsys.readouterr().out.split())


def test_the_same_file_twice_on_the_command_line_warns(files, capsys):
    assert _cli(files, "-m", "P@2", second="a.run") == 0
    captured = capsys.readouterr()
    assert (
        f"irspec: warning: the same run is given twice ({files / 'a.run'}): every difference is 0"
        in captured.err
    )
    assert "no query differs on P@2" in captured.out


def test_text_output(files, capsys):
    assert _cli(files, "-m", "P@2", "--top", "3", "--decimals", "2") == 0
    out = capsys.readouterr().out
    assert (
        "Largest losses (b below a on P@2)\nquery  P@2 a  P@2 b  Δ P@2  gained@3  lost@3  unjudged a  unjudged b\n"
        in out
    )
    assert "\nq1      0.50   0.00  -0.50         1       2           0           1\n" in out
    assert "q1: P@2 0.50 -> 0.00 (-0.50)\n" in out
    assert "   2  d2  0      1              y1  unjudged  not retrieved\n" in out
    assert (
        "b has 1 relevant document in its top 3 that a has not (d4), and lacks 2 that a has (d1, d3); "
        "unjudged in the top 3: a 0, b 1"
    ) in out


def test_queries_limits_the_losses_and_gains_shown(files, capsys):
    assert _cli(files, "-m", "P@2", "--queries", "1") == 0
    out = capsys.readouterr().out
    assert "q1: P@2" in out and "q3: P@2" not in out and "q2: P@2" in out
    assert _cli(files, "-m", "P@2", "-f", "json", "--queries", "1") == 0
    assert [q["query_id"] for q in json.loads(capsys.readouterr().out)["queries"]] == ["q1", "q2"]
    assert (
        _cli(files, "-m", "P@2", "-f", "json") == 0
    )  # every query in JSON by default: losses, gains, then the rest
    assert [q["query_id"] for q in json.loads(capsys.readouterr().out)["queries"]] == ["q1", "q3", "q2"]


def test_json_output(files):
    found, _ = _diff(files, "P@2, SL(unfound=skip)", top=3)
    body = json.loads(found.to_json())
    assert body["run_a"]["name"] == "a" and body["sorted_by"] == "P@2" and body["top"] == 3
    assert body["counts"] == {"queries": 3, "losses": 2, "gains": 1, "unchanged": 0}
    q1 = body["queries"][0]
    assert q1["query_id"] == "q1" and q1["change"] == "loss"
    assert q1["values"]["P@2"] == {"a": 0.5, "b": 0.0, "delta": -0.5}
    assert q1["top_b"][1] == {"docno": "y1", "rank": 2, "label": None, "relevant": False, "other_rank": None}
    assert q1["gained"] == ["d4"] and q1["lost"] == ["d1", "d3"] and q1["unjudged"] == {"a": 0, "b": 1}
    # SL(unfound=skip) leaves out B's q3 (no relevant document retrieved): undefined, null in JSON
    q3 = next(q for q in body["queries"] if q["query_id"] == "q3")
    assert q3["values"]["SL(unfound=skip)"] == {"a": 1.0, "b": None, "delta": None}


def test_markdown_output(files):
    found, _ = _diff(files, "P@2", top=3)
    md = found.to_markdown()
    assert "| query | P@2 a | P@2 b | Δ P@2 | gained@3 | lost@3 | unjudged a | unjudged b |" in md
    assert "| 2 | d2 | 0 | 1 | y1 | unjudged | not retrieved |" in md
    assert md == found._repr_markdown_()


def test_the_notebook_shows_the_pages_fragment(files):
    found, _ = _diff(files, "P@2", top=3)
    page = found.to_html()
    shown = found._repr_html_()
    assert shown.startswith('<div class="irspec-diff">') and shown.strip() in page
    assert page.startswith("<!DOCTYPE html>")
    # self-contained: no address to fetch anything from
    assert not re.search(r"""(src|href)\s*=|https?://|@import""", page)


def test_html_escapes_what_the_inputs_say(tmp_path):
    (tmp_path / "qrels.txt").write_text("q<1> 0 <b>x</b> 1\n")
    (tmp_path / "a.run").write_text("q<1> Q0 <b>x</b> 1 1.0 A\n")
    (tmp_path / "b.run").write_text("q<1> Q0 </script> 1 1.0 B\n")
    page = irspec.diff(
        tmp_path / "qrels.txt", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "P@1"
    ).to_html()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert page.count("</script>") == 1  # the page's own script's end only


# --------------------------------------------------------------------------------------------------
# The page in a browser: a script run after loading sorts the table by a column and clicks a query, as
# a user would, then writes what the page shows into the body, for --dump-dom to read.

_CLICK = """<script>
window.addEventListener("load", () => {
  const root = document.querySelector(".irspec-diff");
  const table = root.querySelector("table.diff-queries");
  const heads = [...table.tHead.rows[0].cells];
  heads.find(h => h.textContent.startsWith("Δ P@2")).click();  // ascending: the largest losses first
  const sorted = [...table.tBodies[0].rows].map(r => r.cells[0].textContent);
  [...table.tBodies[0].rows].find(r => r.cells[0].textContent === "q2").click();
  const open = [...root.querySelectorAll("section.diff-query")].filter(s => !s.hidden);
  const cells = [...open[0].querySelectorAll("tbody td")].filter(td => td.className && td.className !== "gap");
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify({
    sorted: sorted,
    open: open.map(s => s.querySelector("h3").textContent),
    selected: [...table.querySelectorAll("tr.selected")].map(r => r.cells[0].textContent),
    kinds: cells.map(td => [td.textContent, td.className]),
    colours: cells.map(td => getComputedStyle(td).backgroundColor),
  });
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.skipif(chromium() is None, reason="no headless Chromium installed")
def test_the_page_sorts_and_shows_a_clicked_querys_rankings_in_headless_chromium(files):
    out = files / "diff.html"
    assert _cli(files, "-m", "P@2", "--top", "3", "-f", "html", "-o", str(out)) == 0
    page = out.read_text(encoding="utf-8")
    clicked = files / "clicked.html"
    clicked.write_text(page.replace("</body>", _CLICK + "</body>"), encoding="utf-8")
    window = ("--window-size=1280,1000", "--virtual-time-budget=5000")
    dom = dump_dom(clicked, *window)
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    measured = json.loads(found.group(1).replace("&quot;", '"').replace("&gt;", ">").replace("&amp;", "&"))
    assert measured["sorted"] == ["q1", "q3", "q2"]  # Δ P@2: -0.5, -0.5 (in their order), +0.5
    assert measured["open"] == ["q2: P@2 0.5000 -> 1.0000 (+0.5000)"] and measured["selected"] == ["q2"]
    # q2: A e1 (relevant; B's 2nd: one place higher in A), zz (unjudged; B lacks it); B e2, e1 (relevant)
    assert measured["kinds"] == [
        ["e1", "left rel"],
        ["1", "left rel"],
        ["2 ▲1", "left moved"],
        ["e2", "left rel"],
        ["1", "left rel"],
        ["not retrieved", "left absent"],
        ["zz", "left unjudged"],
        ["unjudged", "left unjudged"],
        ["not retrieved", "left absent"],
        ["e1", "left rel"],
        ["1", "left rel"],
        ["1 ▼1", "left moved"],
    ]
    colours = dict(zip((k for _, k in measured["kinds"]), measured["colours"], strict=True))
    assert colours["left rel"] != colours["left unjudged"]  # the labels are coloured apart
    shot = files / "shot.png"
    headless(clicked, *window, f"--screenshot={shot}", text=False)
    assert shot.exists() and shot.stat().st_size > 10_000


# --------------------------------------------------------------------------------------------------
# A plan's diff section


def _plan(files, diff: str) -> Path:
    plan = files / "plan.yaml"
    plan.write_text(
        f"qrels: qrels.txt\nruns: [a.run, b.run]\nmetrics: [P@2, AP]\ncompare: {{baseline: a}}\n"
        f"diff:\n{diff}output:\n  - {{format: json, path: out/results.json}}\n"
    )
    return plan


def test_a_plans_diff_is_written_beside_its_outputs_as_irspec_diff_renders_it(files, capsys):
    plan = _plan(files, "  - {a: a, b: b, path: out/diff.html, top: 3}\n  - {a: a, b: b, format: json}\n")
    assert main(["run", str(plan)]) == 0
    captured = capsys.readouterr()
    found, _ = _diff(files, top=3)
    assert (files / "out" / "diff.html").read_text(encoding="utf-8") == found.to_html()
    assert json.loads(captured.out)["queries"][0]["values"]["P@2"] == {"a": 0.5, "b": 0.0, "delta": -0.5}
    assert (files / "out" / "results.json").exists()  # the plan's own output, beside it
    assert "lacks 1 query that a answers ('q3')" in captured.err  # the diff's warning, said once
    assert captured.err.count("lacks 1 query that a answers") == 1


def test_a_plans_diff_names_the_runs_as_the_plan_names_them(files, capsys):
    # the diff read the runs' files and named them by their stems, where every other report of the plan
    # uses the plan's names (two files of one stem would have read alike)
    plan = files / "plan.yaml"
    plan.write_text(
        "qrels: qrels.txt\nruns:\n  - {name: baseline, path: a.run}\n  - {name: neural, path: b.run}\n"
        "metrics: [P@2]\ndiff:\n  - {a: baseline, b: neural, format: json}\n"
        "output:\n  - {format: json, path: out/results.json}\n"
    )
    assert main(["run", str(plan)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["run_a"]["name"], doc["run_b"]["name"]) == ("baseline", "neural")


def test_a_plans_diff_problems_name_their_lines(files, capsys):
    plan = _plan(
        files,
        "  - {a: a, b: c}\n  - {a: a, b: b, metrics: [relstring]}\n  - {a: a, b: b, path: qrels.txt}\n",
    )
    assert main(["validate", str(plan)]) == 2
    err = capsys.readouterr().err
    assert f"{plan}:6: diff[0].b: 'c' is not a run of this plan" in err
    assert f"{plan}:7: diff[1].metrics: relstring@10: a text-valued metric" in err
    assert f"{plan}:8: diff[2].path: '{files / 'qrels.txt'}' is an input of this plan" in err
    assert not (files / "out").exists()


def _diff_of(folder: Path, qrels: str, a: str, b: str, metrics: str, **options):
    """``irspec.diff`` of runs A and B (TREC text) over ``qrels``, written into ``folder``, warnings quiet."""
    folder.mkdir()
    for name, text in (("qrels.txt", qrels), ("A.run", a), ("B.run", b)):
        (folder / name).write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irspec.diff(
            str(folder / "qrels.txt"), str(folder / "A.run"), str(folder / "B.run"), metrics, **options
        )


def test_a_negative_label_is_unjudged_as_judged_at_k_reads_it(tmp_path):
    """d is labelled -1 (pooled but unjudged): B's top 2 (d, a) has one unjudged document, as its
    Judged@2 of 1/2 says; A's (a, x) has x, absent from the qrels."""
    found = _diff_of(
        tmp_path / "neg",
        "q1 0 a 1\nq1 0 d -1\n",
        "q1 Q0 a 1 2 A\nq1 Q0 x 2 1 A\n",
        "q1 Q0 d 1 2 B\nq1 Q0 a 2 1 B\n",
        "AP, Judged@2",
        top=2,
    )
    (q,) = found.queries
    assert (q.b[1], q.unjudged_a, q.unjudged_b) == (0.5, 1, 1)
    assert q.top_b[0].label == -1 and not q.top_b[0].judged


def test_skipped_queries_leave_the_means_as_the_queries_compared(tmp_path):
    """missing_queries skip: A answers q1 and q2, B q1 and q3; only q1 is compared (AP 1/2 for both:
    the relevant a at rank 2), so the means are 1/2 and 1/2, not each run's own (3/4 and 1/4)."""
    found = _diff_of(
        tmp_path / "skip",
        "q1 0 a 1\nq2 0 a 1\nq3 0 a 1\n",
        "q1 Q0 x 1 2 A\nq1 Q0 a 2 1 A\nq2 Q0 a 1 1 A\n",
        "q1 Q0 x 1 2 B\nq1 Q0 a 2 1 B\nq3 Q0 x 1 1 B\n",
        "AP",
        missing_queries="skip",
    )
    assert [q.query_id for q in found.queries] == ["q1"]
    assert (found.means_a["AP"], found.means_b["AP"]) == (0.5, 0.5)


def test_a_lower_is_better_metric_heads_its_gains_with_b_below_a(tmp_path):
    """Fallout@1: A puts the non-relevant b first (1/9 of the 9 non-relevant documents of a collection
    of 10), B the relevant a (0): B gains by being below A."""
    found = _diff_of(
        tmp_path / "low",
        "q1 0 a 1\nq1 0 b 0\n",
        "q1 Q0 b 1 2 A\nq1 Q0 a 2 1 A\n",
        "q1 Q0 a 1 2 B\nq1 Q0 b 2 1 B\n",
        "Fallout(collection_size=10)@1",
    )
    assert [q.query_id for q in found.gains()] == ["q1"]
    headings = [line for line in str(found).splitlines() if line.startswith("Largest")]
    assert headings == ["Largest gains (B below A on Fallout(collection_size=10)@1)"]
    # the page colours a change for the worse: not this fall of Fallout, but a fall of AP
    delta = re.compile(r'<td class="(\w*)" data-v="[^"]*">([-+][0-9.]+)</td>')
    assert delta.findall(found.to_html()) == [("", "-0.1111")]
    worse = _diff_of(
        tmp_path / "high", "q1 0 a 1\nq1 0 b 0\n", "q1 Q0 a 1 2 A\nq1 Q0 b 2 1 A\n", "q1 Q0 b 1 2 B\nq1 Q0 a 2 1 B\n", "AP"
    )  # fmt: skip
    assert delta.findall(worse.to_html()) == [("neg", "-0.5000")]
