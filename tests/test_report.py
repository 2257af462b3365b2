"""Tests of irspec.report's reports for people: LaTeX and Markdown tables (against checked-in golden
files), the self-contained HTML page, provenance, plan outputs in those formats, atomic plot
directories, and progress on standard error.

The golden files under ``tests/fixtures/report/`` come from the small collection beside them (8
queries, 4 runs) with run names full of LaTeX and Markdown specials. After a deliberate change of the
output, regenerate them with ``IRSPEC_UPDATE_GOLDEN=1 python -m pytest tests/test_report.py`` and read
the diff.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from browser import chromium, dump_dom, headless, started

from irspec import report
from irspec.cli import main
from irspec.errors import IrspecError, PlanError
from irspec.evaluation.evaluate import evaluate_many
from irspec.experiment.compare import compare_results
from irspec.experiment.records import Compare
from irspec.plan import load_plan, render_outputs, run_plan, write_outputs
from irspec.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "report"
RUNS = {"base": "bm25_base", "better": "neural&co #1", "worse": "50% @home", "same": "tie_run"}
METRICS = ["nDCG@5", "AP", "P@5", "ndcg_rel", "SL", "NumRelRet"]
NOTE = "an example note: 100% of the queries compared"


@functools.cache
def fixture_results() -> tuple:
    results = evaluate_many(str(FIXTURES / "qrels.txt"), [str(FIXTURES / f"{f}.run") for f in RUNS], METRICS)
    return tuple(
        dataclasses.replace(r, run_name=name) for r, name in zip(results, RUNS.values(), strict=True)
    )


@functools.cache
def compared(baseline: str | None) -> tuple:
    compare = Compare(baseline=baseline, test="t", correction="holm")
    comparisons, _ = compare_results(fixture_results(), compare)
    return comparisons, compare


def _marks(baseline: str | None) -> dict:
    comparisons, compare = compared(baseline)
    return {"comparisons": comparisons, "compare": compare, "notes": (NOTE,)}


GOLDEN = {
    "baseline.tex": lambda: report.to_latex(fixture_results(), **_marks("bm25_base")),
    "baseline.md": lambda: report.to_markdown(fixture_results(), **_marks("bm25_base")),
    "letters.tex": lambda: report.to_latex(fixture_results(), **_marks(None), decimals=3),
    "letters.md": lambda: report.to_markdown(fixture_results(), **_marks(None), decimals=3),
    "comparisons.tex": lambda: report.to_latex(
        fixture_results(), **_marks("bm25_base"), content="comparisons"
    ),
    "comparisons.md": lambda: report.to_markdown(
        fixture_results(), **_marks("bm25_base"), content="comparisons"
    ),
    "plain.tex": lambda: report.to_latex(fixture_results()[:3]),
}


# --------------------------------------------------------------------------------------------------
# LaTeX and Markdown


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_latex_and_markdown_match_their_golden_files(name):
    text = GOLDEN[name]()
    path = FIXTURES / f"golden_{name}"
    if os.environ.get("IRSPEC_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), (
        f"regenerate with IRSPEC_UPDATE_GOLDEN=1 and read the diff of {path.name}"
    )


def test_the_fixture_exercises_every_kind_of_mark():
    """Significantly better and worse than the baseline, not significant, ties for best, lower-is-better."""
    comparisons, _ = compared("bm25_base")
    significant = {(c.a, c.metric): c.mean_difference > 0 for c in comparisons if c.significant}
    assert True in significant.values() and False in significant.values()
    assert any(not c.significant for c in comparisons)
    marks = report.significance_marks(fixture_results(), *compared("bm25_base"))
    assert marks.cells[("neural&co #1", "AP")] == "better" and marks.cells[("50% @home", "AP")] == "worse"
    assert ("tie_run", "AP") not in marks.cells


def test_latex_table_structure():
    tex = GOLDEN["baseline.tex"]()
    assert (
        tex.count(r"\begin{table}") == 1
        and r"\toprule" in tex
        and r"\midrule" in tex
        and r"\bottomrule" in tex
    )
    rows = [line.strip() for line in tex.splitlines() if line.strip().endswith(r"\\")]
    header, body = rows[0], rows[1:]
    assert header.startswith("Run & ") and len(body) == len(RUNS)  # runs as rows
    assert [r.split(" & ")[0] for r in body] == [
        r"bm25\_base (baseline)",
        r"neural\&co \#1",
        r"50\% @home",
        r"tie\_run",
    ]
    assert r"ndcg\_rel" in header  # metrics as columns, escaped
    caption = re.search(r"\\caption\{(.*)\}", tex).group(1)
    for words in ("paired t-test", "Holm correction", r"$\alpha = 0.05$", "8 queries", r"bm25\_base"):
        assert words in caption
    assert r"\textbf{1.0000}" in tex  # SL: lower is better, so the 1.0000 of neural&co #1 is the best
    assert "32" in tex and r"\textbf{32}" not in tex  # NumRelRet: all equal, nothing in bold
    assert "% note: " + NOTE in tex


def test_letters_name_the_runs_beaten_in_run_order():
    marks = report.significance_marks(fixture_results(), *compared(None))
    assert marks.letter == {"bm25_base": "a", "neural&co #1": "b", "50% @home": "c", "tie_run": "d"}
    for (run, _metric), letters in marks.cells.items():
        assert letters == "".join(sorted(letters))
        assert marks.letter[run] not in letters
    comparisons, _ = compared(None)
    for c in comparisons:
        if c.significant and c.metric != "SL":
            winner, loser = (c.a, c.b) if c.mean_difference > 0 else (c.b, c.a)
            assert marks.letter[loser] in marks.cells[(winner, c.metric)]


@pytest.mark.parametrize(
    "text, escaped",
    [
        ("bm25_base", r"bm25\_base"),
        ("50% @home", r"50\% @home"),
        ("a&b #1", r"a\&b \#1"),
        ("$x^2$ {y} ~z", r"\$x\textasciicircum{}2\$ \{y\} \textasciitilde{}z"),
        ("back\\slash", r"back\textbackslash{}slash"),
        ("<|>", r"\textless{}\textbar{}\textgreater{}"),
        ("a--b", "a-{}-b"),
        ("two\nlines", "two lines"),
    ],
)
def test_latex_escape(text, escaped):
    assert report.latex_escape(text) == escaped


@pytest.mark.parametrize(
    "text, escaped",
    [
        ("a|b", r"a\|b"),
        ("bm25_base", r"bm25\_base"),
        ("*x*", r"\*x\*"),
        ("a&lt;b", "a&amp;lt;b"),
        ("<b>", "&lt;b&gt;"),
    ],
)
def test_markdown_escape(text, escaped):
    assert report.markdown_escape(text) == escaped


def test_markdown_table_is_well_formed_with_a_legend():
    md = GOLDEN["baseline.md"]()
    lines = md.splitlines()
    table = [line for line in lines if line.startswith("|")]
    widths = {len(re.split(r"(?<!\\)\|", line)) for line in table}
    assert len(widths) == 1  # every row has as many cells as the header (escaped | do not split)
    assert table[1].startswith("|:---|") and len(table) == 2 + len(RUNS)
    legend = lines[len(table) + 1]
    assert "**bold**" in legend and "significantly better/worse than bm25\\_base" in legend
    assert (
        "paired t-test" in legend
        and "Holm correction" in legend
        and "α = 0.05" in legend
        and "8 queries" in legend
    )


def test_best_value_ties_are_all_bold():
    import numpy as np

    from irspec.evaluation.context import Options
    from irspec.evaluation.result import Result

    metric = __import__("irspec").parse("AP")
    results = [
        Result(n, n, (metric,), ("q1", "q2"), np.array([[v], [v]]), Options())
        for n, v in [("a", 0.5), ("b", 0.5), ("c", 0.25)]
    ]
    md = report.to_markdown(results)
    assert md.count("**0.5000**") == 2 and "**0.2500**" not in md


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_tables_compile_with_pdflatex(tmp_path):
    body = (
        GOLDEN["baseline.tex"]()
        + GOLDEN["letters.tex"]()
        + GOLDEN["comparisons.tex"]()
        + GOLDEN["plain.tex"]()
    )
    doc = "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,landscape]{geometry}\n"
    (tmp_path / "doc.tex").write_text(
        doc + "\\begin{document}\n" + body + "\\end{document}\n", encoding="utf-8"
    )
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    log = (tmp_path / "doc.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    assert "Undefined control sequence" not in log and "Missing character" not in log
    assert (tmp_path / "doc.pdf").stat().st_size > 0
    if shutil.which("pdftotext"):  # the escaped names print as the names themselves
        subprocess.run(["pdftotext", "-layout", "doc.pdf", "doc.txt"], cwd=tmp_path, check=True, timeout=60)
        text = (tmp_path / "doc.txt").read_text(encoding="utf-8")
        for name in [*RUNS.values(), "ndcg_rel", "nDCG@5"]:
            assert name.replace("_", " ") in text, name  # LaTeX draws \_ as a rule: no text to extract


# --------------------------------------------------------------------------------------------------
# Plans with the new outputs


def workspace(tmp_path: Path, outputs: str, compare: str = "{baseline: base}") -> Path:
    for f in FIXTURES.glob("*.run"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(FIXTURES / "qrels.txt", tmp_path / "qrels.txt")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "qrels: qrels.txt\nruns: ['*.run']\nmetrics: [nDCG@5, AP, P@5]\n"
        f"compare: {compare}\noutput:\n" + textwrap.indent(textwrap.dedent(outputs).strip(), "  ") + "\n",
        encoding="utf-8",
    )
    return plan


def test_plan_writes_latex_markdown_and_html(tmp_path):
    plan = workspace(
        tmp_path,
        """
        - {format: latex, path: out/table.tex, decimals: 3}
        - {format: markdown, path: out/table.md}
        - {format: html, path: out/report.html}
        - {format: latex, path: out/comparisons.tex, content: comparisons}
        """,
    )
    written = write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    assert [p.name for p in written] == ["table.tex", "table.md", "report.html", "comparisons.tex"]
    tex = (tmp_path / "out" / "table.tex").read_text(encoding="utf-8")
    assert "(baseline)" in tex and r"\dagger" in tex and re.search(r"\b0\.\d{3} &", tex)
    assert "| base (baseline) |" in (tmp_path / "out" / "table.md").read_text(encoding="utf-8")
    assert r"$p_{\mathrm{adj}}$" in (tmp_path / "out" / "comparisons.tex").read_text(encoding="utf-8")
    mode = stat.S_IMODE((tmp_path / "out" / "report.html").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # readable like any file, not private as a mkstemp file would be


def _references(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", html, flags=re.IGNORECASE)


def test_html_is_one_self_contained_file(tmp_path):
    plan = workspace(tmp_path, "- {format: html, path: report.html}")
    write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "http://" not in html and "https://" not in html
    for ref in _references(html):
        assert ref.startswith(("#", "data:")), ref
    for fetching in ("<link", "<iframe", "@import", "url(", " src="):
        assert fetching not in html.lower()
    # one style sheet and one script, both the page's own, and a policy that allows those two alone
    assert html.count("<style>") == 1 and html.count("<script") == 1 and "<script>" in html
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
    policy = unescape(policy)
    assert policy.startswith("default-src 'none'; ") and "unsafe" not in policy
    for tag in ("style", "script"):
        inline = re.search(rf"<{tag}>(.*?)</{tag}>", html, flags=re.DOTALL).group(1)
        digest = base64.b64encode(hashlib.sha256(inline.encode("utf-8")).digest()).decode("ascii")
        assert f"{tag}-src 'sha256-{digest}'" in policy
    # the tables, and the comparisons with p-values and effect sizes
    assert 'class="results"' in html and 'class="comparisons"' in html
    for head in ("Cohen&#39;s d", "p adj.", "95% CI", "W/T/L"):
        assert head in html
    figures = re.findall(r"<svg .*?</svg>", html, flags=re.DOTALL)
    # the PR and ROC curves, AP histograms, confusion matrices, then differences and distributions per metric
    assert len(figures) == 1 + 3 + 3 * 2
    for svg in figures:
        ET.fromstring(svg)  # well-formed, inline
        assert not re.search(r"""href=["'](?!#)""", svg)  # links within the page only


def test_html_draws_its_figures_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    plan = workspace(tmp_path, "- {format: html, path: report.html}")
    report_ = run_plan(load_plan(plan))
    ((_, html),) = render_outputs(report_)
    assert "No plots" not in html and html.count('<svg class="chart"') == 10


def test_plots_without_matplotlib_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    from irspec.report import plots

    with pytest.raises(
        IrspecError, match=re.escape("plots need matplotlib (an irspec dependency): pip install matplotlib")
    ):
        plots.require_matplotlib()
    plan = workspace(tmp_path, "- {format: plots, path: out/plots}")
    with pytest.raises(PlanError) as info:
        load_plan(plan)
    assert info.value.problems == [
        f"{plan}:6: output[0].format: plots need matplotlib (an irspec dependency): pip install matplotlib"
    ]


@pytest.mark.parametrize(
    "output, message",
    [
        (
            "{format: latex, per_query: true}",
            "output[0].per_query: per_query true is not available with this format",
        ),
        (
            "{format: html, content: comparisons}",
            "output[0].content: content 'comparisons' is not available with this format",
        ),
        ("{format: plots}", "output[0]: missing required key 'path'"),
        ("{format: markdown, decimals: 11}", "output[0].decimals: 11 is greater than the maximum of 10"),
        (
            "{format: pdf}",
            "output[0].format: 'pdf' is not one of: table, json, csv, tsv, trec, latex, markdown, html, plots, parquet",
        ),
    ],
)
def test_plan_output_problems(tmp_path, output, message):
    plan = workspace(tmp_path, f"- {output}")
    with pytest.raises(PlanError) as info:
        load_plan(plan)
    assert info.value.problems == [f"{plan}:6: {message}"]


def test_a_plots_path_that_is_a_file_is_a_problem(tmp_path):
    pytest.importorskip("matplotlib")
    plan = workspace(tmp_path, "- {format: plots, path: taken}")
    (tmp_path / "taken").write_text("a file\n")
    with pytest.raises(PlanError, match="is a file; plots are written into a directory"):
        load_plan(plan)


def test_decimals_apply_to_the_text_table(tmp_path):
    plan = workspace(tmp_path, "- {format: table, decimals: 2}")
    ((_, table),) = render_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    assert re.search(r"base \(baseline\)\s+0\.\d\d\s", table) and not re.search(
        r"\d\.\d{3}", table.split("\n\n")[0]
    )


def test_cli_eval_formats_latex_and_markdown(capsys):
    args = [
        "eval",
        str(FIXTURES / "qrels.txt"),
        str(FIXTURES / "base.run"),
        str(FIXTURES / "better.run"),
        "-m",
        "AP, P@5",
    ]
    assert main([*args, "--format", "latex", "--decimals", "3"]) == 0
    tex = capsys.readouterr().out
    assert r"\begin{tabular}{lrr}" in tex and "base & 0." in tex and r"\textbf{" in tex
    assert main([*args, "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("| Run | AP | P@5 |\n|:---|---:|---:|\n| base |")
    assert report.format_results(fixture_results(), "markdown") == report.to_markdown(fixture_results())


# --------------------------------------------------------------------------------------------------
# Provenance


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_provenance_in_plan_json_and_html_hashes_every_input(tmp_path):
    import platform

    import numpy

    import irspec

    plan = workspace(
        tmp_path,
        "- {format: json, path: r.json}\n- {format: html, path: r.html}\n- {format: json, path: c.json, content: comparisons}",
        compare="{baseline: base, test: randomization, permutations: 200, seed: 7}",
    )
    write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    for name in ("r.json", "c.json"):
        prov = json.loads((tmp_path / name).read_text())["provenance"]
        assert prov["irspec"] == irspec.__version__ and prov["numpy"] == numpy.__version__
        assert prov["python"] == platform.python_version()
        assert prov["metrics"] == ["nDCG@5", "AP", "P@5"]
        assert prov["options"]["missing_queries"] == "zero" and prov["compare"]["permutations"] == 200
        assert prov["seeds"] == {"compare.seed": 7}
        assert prov["plan"] == str(plan)
        by_role = [(f["role"], f["name"], Path(f["path"]).name) for f in prov["inputs"]]
        assert by_role == [("plan", None, "plan.yaml"), ("qrels", None, "qrels.txt")] + [
            ("run", stem, f"{stem}.run") for stem in sorted(RUNS)
        ]
        for f in prov["inputs"]:
            assert f["sha256"] == hashlib.sha256(Path(f["path"]).read_bytes()).hexdigest()
            assert f["bytes"] == Path(f["path"]).stat().st_size
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    for f in [plan, tmp_path / "qrels.txt", *tmp_path.glob("*.run")]:
        assert _sha(f) in html


def test_provenance_in_eval_json(capsys, monkeypatch):
    qrels, run = FIXTURES / "qrels.txt", FIXTURES / "base.run"
    assert main(["eval", str(qrels), str(run), "-m", "AP", "--format", "json"]) == 0
    prov = json.loads(capsys.readouterr().out)["provenance"]
    assert [(f["role"], f["sha256"]) for f in prov["inputs"]] == [("qrels", _sha(qrels)), ("run", _sha(run))]
    assert prov["seeds"] == {} and prov["compare"] is None and prov["plan"] is None

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(run.read_bytes())))
    assert main(["eval", str(qrels), "-", "-m", "AP", "--format", "json"]) == 0
    prov = json.loads(capsys.readouterr().out)["provenance"]
    assert prov["inputs"][1] == {
        "role": "run",
        "name": prov["inputs"][1]["name"],
        "path": "-",
        "bytes": None,
        "sha256": None,
    }


def test_provenance_gives_the_date_and_every_package_version(tmp_path):
    from datetime import datetime, timedelta, timezone
    from importlib import metadata

    before = datetime.now(timezone.utc).replace(microsecond=0)
    plan = workspace(tmp_path, "- {format: json, path: r.json}\n- {format: html, path: r.html}")
    write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    prov = json.loads((tmp_path / "r.json").read_text())["provenance"]
    assert before <= datetime.fromisoformat(prov["date"]) <= before + timedelta(minutes=5)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert f"<dt>Date</dt><dd>{prov['date']}</dd>" in html
    versions = re.search(r"<dt>Versions</dt><dd>(.*?)</dd>", html).group(1)
    for dist in (
        "matplotlib",
        "jinja2",
        "numpy",
        "polars",
        "scipy",
        "pyyaml",
        "jsonschema",
        "lark",
        "pluggy",
    ):
        assert prov[dist] == metadata.version(dist)
        assert f"{dist} {metadata.version(dist)}" in versions
    assert f"python {sys.version.split()[0]}" in versions


def _seeds_shown(page: str) -> str:
    return re.search(r"<dt>Seeds</dt><dd>(.*?)</dd>", page).group(1)


def test_seeds_none_used_never_stands_beside_a_seed_that_was_used(tmp_path):
    from irspec.report import plots

    results, prov = list(fixture_results()), {"inputs": [], "seeds": {}}
    assert _seeds_shown(report.to_html(results, provenance=prov)) == "none used"
    # the bootstrap intervals draw with a seed the plan's provenance cannot know; the page names it
    page = report.to_html(results, provenance=prov, intervals="bootstrap")
    assert "seed 42" in page and _seeds_shown(page) == "intervals.seed = 42"
    assert _seeds_shown(report.to_html(results, provenance=prov, intervals="t")) == "none used"
    # so do the distributions' jittered dots, and a randomization test's seed stays beside them
    drawn = plots.render(results[:2], formats=("svg",))
    page = report.to_html(results, provenance={"inputs": [], "seeds": {"compare.seed": 7}}, plots=drawn)
    assert _seeds_shown(page) == "compare.seed = 7, plots.seed = 0"


def test_a_plans_plots_follow_its_collection_size(tmp_path):
    plan = workspace(tmp_path, "- {format: html, path: r.html}\n- {format: plots, path: plots}")
    write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    names = sorted(p.name for p in (tmp_path / "plots").iterdir())
    for stem in ("pr-curves", "roc-curves", "ap-histograms", "confusion-at-10"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "fall-out counts judged non-relevant documents only" in page
    assert _seeds_shown(page) == "plots.seed = 0"
    plan.write_text(plan.read_text().replace("compare:", "options: {collection_size: 5000}\ncompare:"))
    done = run_plan(load_plan(plan))
    assert done.figure_data.collection_size == 5000
    (_, page), _ = render_outputs(done)
    assert "fall-out counts non-relevant documents of a collection of 5,000" in page
    # the report layer is given what it draws; the plan's own metrics are all its results hold
    assert [str(m) for m in done.results[0].metrics] == ["nDCG@5", "AP", "P@5"]


def test_sha256_file_reads_in_chunks(tmp_path):
    path = tmp_path / "big.bin"
    data = os.urandom(3 * (1 << 20) + 17)
    path.write_bytes(data)
    assert report.sha256_file(path) == hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------------------
# Writing a directory atomically


def test_write_files_atomic_creates_or_updates_a_directory(tmp_path):
    target = tmp_path / "a" / "plots"
    assert report.write_files_atomic(target, {"x.svg": b"<svg/>", "x.png": b"png"}) == [
        target / "x.svg",
        target / "x.png",
    ]
    assert sorted(p.name for p in target.iterdir()) == ["x.png", "x.svg"]
    (target / "mine.txt").write_text("keep me\n")
    report.write_files_atomic(target, {"x.svg": b"<svg>2</svg>"})
    assert (target / "x.svg").read_bytes() == b"<svg>2</svg>" and (
        target / "mine.txt"
    ).read_text() == "keep me\n"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["plots"]  # no temporary directory left


def test_write_files_atomic_leaves_nothing_on_error(tmp_path):
    with pytest.raises(ValueError):
        report.write_files_atomic(tmp_path / "plots", {"ok.svg": b"1", "../escape.svg": b"2"})
    assert list(tmp_path.iterdir()) == []


def _tree(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_write_all_atomic_writes_every_output_or_none(tmp_path):
    (tmp_path / "old.txt").write_text("old\n")
    (tmp_path / "taken").mkdir()
    outputs = [
        (tmp_path / "old.txt", "new\n"),
        (tmp_path / "new" / "dir" / "x.txt", "x\n"),
        (tmp_path / "plots", {"p.svg": b"<svg/>", "p.png": b"png"}),
        (tmp_path / "taken", "a file where a directory is\n"),
    ]
    before = _tree(tmp_path)
    with pytest.raises(IrspecError) as info:
        report.write_all_atomic(outputs)
    assert str(info.value) == f"cannot write '{tmp_path / 'taken'}': is a directory"
    assert _tree(tmp_path) == before  # nothing new: no file, no temporary, no directory made for them
    assert (tmp_path / "old.txt").read_text() == "old\n"

    report.write_all_atomic(outputs[:3])
    assert _tree(tmp_path) == [
        "new",
        "new/dir",
        "new/dir/x.txt",
        "old.txt",
        "plots",
        "plots/p.png",
        "plots/p.svg",
        "taken",
    ]
    assert (tmp_path / "old.txt").read_text() == "new\n" and (
        tmp_path / "plots" / "p.png"
    ).read_bytes() == b"png"


def test_write_atomic_without_make_dirs_writes_only_into_a_directory_that_exists(tmp_path):
    with pytest.raises(IrspecError) as info:
        report.write_atomic(tmp_path / "a" / "b.txt", "x\n", make_dirs=False)
    assert (
        str(info.value) == f"cannot write '{tmp_path / 'a' / 'b.txt'}': no such directory: '{tmp_path / 'a'}'"
    )
    assert _tree(tmp_path) == []
    report.write_atomic(tmp_path / "b.txt", "x\n", make_dirs=False)
    assert _tree(tmp_path) == ["b.txt"]


@pytest.mark.parametrize(
    "case", ["an existing directory", "a missing directory", "under a regular file", "/nonexistent"]
)
def test_eval_output_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path, capsys, case):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("a file\n")
    target, why = {
        "an existing directory": (tmp_path / "adir", "is a directory"),
        "a missing directory": (
            tmp_path / "missing" / "sub" / "file",
            f"no such directory: '{tmp_path / 'missing' / 'sub'}'",
        ),
        "under a regular file": (
            tmp_path / "afile" / "sub" / "file",
            f"not a directory: '{tmp_path / 'afile'}'",
        ),
        "/nonexistent": (Path("/nonexistent/sub/file"), "no such directory: '/nonexistent/sub'"),
    }[case]
    if case == "/nonexistent" and Path("/nonexistent").exists():
        pytest.skip("/nonexistent exists on this machine")
    before = _tree(tmp_path)
    args = ["eval", str(FIXTURES / "qrels.txt"), str(FIXTURES / "base.run"), "-m", "AP", "-o", str(target)]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err == f"irspec: error: cannot write '{target}': {why}\n"
    assert captured.out == ""
    assert _tree(tmp_path) == before and not Path("/nonexistent").exists()
    # it is found before the evaluation: a run that cannot be read is not reached
    args[2] = str(tmp_path / "no.run")
    assert main(args) == 2 and "cannot write" in capsys.readouterr().err


def test_a_failed_plot_leaves_no_output(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from irspec.report import plots

    plan = workspace(tmp_path, "- {format: latex, path: out/t.tex}\n- {format: plots, path: out/plots}")

    def boom(*args, **kwargs):
        raise RuntimeError("the figure caught fire")

    monkeypatch.setattr(plots, "render_figures", boom)
    with pytest.raises(RuntimeError):
        write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------------------
# Progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal_and_erases_itself():
    stream = FakeTerminal()
    with Progress("evaluating runs", 2, stream=stream, interval=0) as progress:
        progress.update(detail="bm25")
        progress.advance()
        progress.update(detail="dense")
        progress.advance()
    out = stream.getvalue()
    assert "\rirspec: evaluating runs 0/2 bm25" in out and "\rirspec: evaluating runs 2/2 dense" in out
    assert out.endswith("\r") and "\n" not in out
    last = out.rstrip("\r").rsplit("\r", 1)[-1]
    assert last.strip() == ""  # the line is blanked at the end


def test_progress_is_silent_when_not_a_terminal():
    stream = io.StringIO()
    with Progress("evaluating runs", 2, stream=stream, interval=0) as progress:
        progress.advance(2)
    assert stream.getvalue() == ""


def test_plan_run_shows_progress_only_on_a_terminal(tmp_path, monkeypatch, capsys):
    plan = workspace(tmp_path, "- {format: json, path: r.json}")
    assert main(["run", str(plan)]) == 0
    assert capsys.readouterr().err == f"irspec: wrote {tmp_path / 'r.json'}\n"

    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["run", str(plan)]) == 0
    shown = terminal.getvalue()
    assert (
        "irspec: reading qrels" in shown
        and "irspec: evaluating runs 4/4" in shown
        and "comparing runs (t)" in shown
    )


def test_cli_eval_writes_nothing_but_results_to_a_pipe():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "irspec",
            "eval",
            str(FIXTURES / "qrels.txt"),
            str(FIXTURES / "base.run"),
            "-m",
            "AP",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.splitlines()[0].split() == ["run", "AP"]


# --------------------------------------------------------------------------------------------------
# The HTML page in a browser


@pytest.mark.skipif(chromium() is None, reason="no headless Chromium installed")
def test_html_renders_in_headless_chromium(tmp_path):
    plan = workspace(tmp_path, "- {format: html, path: report.html}")
    write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    shot = tmp_path / "shot.png"
    proc = headless(
        tmp_path / "report.html", "--hide-scrollbars", "--window-size=1280,1600", f"--screenshot={shot}"
    )
    assert shot.exists() and shot.stat().st_size > 10_000, proc.stderr[-2000:]
    dom = dump_dom(tmp_path / "report.html")
    assert (
        "irspec report: plan.yaml" in dom and "neural" not in dom
    )  # the fixture's runs are the file stems here
    assert dom.count("<tr") >= 1 + 4 + 1 + 3 * 3  # results rows and comparison rows were parsed as a table


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """Headless Chromium at 1280 x 900 pixels, driven through the DevTools protocol."""
    yield from started(tmp_path_factory)


def _demo_report(folder: Path) -> Path:
    """The demo plan's HTML report (4 runs, 5 metrics with long names, 50 queries), written in ``folder``."""
    demo = ROOT / "specs" / "demo"
    plan = folder / "demo.yaml"
    text = (ROOT / "specs" / "demo.yaml").read_text(encoding="utf-8").replace("demo/", f"{demo.as_posix()}/")
    plan.write_text(
        text.split("output:")[0] + "output:\n  - {format: html, path: report.html}\n", encoding="utf-8"
    )
    write_outputs(run_plan(load_plan(plan)), stdout=io.StringIO())
    return folder / "report.html"


# What the page shows of its figures, measured by the browser: each figure's box and visibility, the data
# marks without hover text, the links whose target is missing, and the page's width.
_FIGURES = """(() => {
  const charts = [...document.querySelectorAll("figure svg.chart")];
  const marks = charts.flatMap(c => [...c.querySelectorAll("*")].filter(e =>
      [...e.attributes].some(a => a.name.startsWith("data-") && !["data-series", "data-run"].includes(a.name))));
  const links = [...document.querySelectorAll("svg.chart a")].map(a => a.getAttribute("href"));
  return {
    figures: charts.map(c => { const r = c.getBoundingClientRect(), s = getComputedStyle(c);
      return [c.closest("figure").id, r.width, r.height, s.display !== "none" && s.visibility === "visible"]; }),
    marks: marks.length,
    untitled: marks.filter(e => !(e.firstElementChild && e.firstElementChild.tagName === "title"
                                  && e.firstElementChild.textContent.trim())).length,
    links: links.length,
    dangling: links.filter(h => !h.startsWith("#") || !document.getElementById(h.slice(1))).slice(0, 5),
    page: document.documentElement.scrollWidth, window: window.innerWidth,
    wide: [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
                                                            && !e.closest(".scroll")).map(e => e.tagName).slice(0, 5),
  };
})()"""


def _center(page, selector: str) -> tuple[float, float]:
    """Scroll the first element matching ``selector`` into view; its centre in the window."""
    return tuple(
        page.js(
            f"""(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: "center"}});
                 const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"""
        )
    )


def _mouse(page, kind: str, x: float, y: float) -> None:
    page.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left", clickCount=1)


@pytest.mark.skipif(chromium() is None, reason="no headless Chromium installed")
def test_the_reports_figures_in_headless_chromium(tmp_path, page):
    """The demo's report in Chromium at 1280 pixels: every figure drawn and visible, every data mark
    with hover text, every link from a topic's mark to an existing row, nothing wider than the window,
    no console error (a refusal of the page's content security policy would be one); hovering a bar
    shows its value, following it lands on the query's row, a legend entry hides and shows its run."""
    report_path = _demo_report(tmp_path)
    page.errors.clear()
    page.open(report_path.as_uri())
    found = page.js(_FIGURES)
    names = [name for name, *_ in found["figures"]]
    metrics = ["nDCG_at_10", "AP", "P_at_10", "Bpref_nonrel_10+R", "Rprec_recall_0.3"]
    assert names == [
        f"plot-{n}"
        for n in ["pr-curves", "roc-curves", "ap-histograms", "confusion-at-10"]
        + [f"{kind}-{m}" for m in metrics for kind in ("differences", "distributions")]
    ]
    for name, width, height, visible in found["figures"]:
        assert width > 300 and height > 150 and visible, name
    # PR 44 points, ROC 56, histograms 40 bars and 4 means, matrices 16 cells, per metric 150 bars,
    # 200 dots, 4 boxes and 4 means
    assert found["marks"] == 44 + 56 + 44 + 16 + 5 * (150 + 200 + 8)
    assert found["untitled"] == 0
    assert found["links"] == 5 * (150 + 200) and found["dangling"] == []
    assert found["page"] <= found["window"] == 1280 and found["wide"] == []
    assert page.errors == []
    shots = Path(os.environ.get("IRSPEC_REPORT_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(shots / "report.png", full=True)

    # hover: the tooltip shows the bar's value at once (its <title> lent meanwhile), then gives it back
    bar = "#plot-differences-AP a rect"
    title = page.js(f"document.querySelector({json.dumps(bar)}).firstElementChild.textContent")
    assert re.fullmatch(r"q\d\d: dense [0-9.]+ − bm25 [0-9.]+ = [+-][0-9.]+", title)
    x, y = _center(page, bar)
    _mouse(page, "mouseMoved", x, y)
    assert (
        page.js("(() => { const t = document.querySelector('.tip'); return !t.hidden && t.textContent; })()")
        == title
    )
    page.screenshot(shots / "report-hover.png")
    _mouse(page, "mouseMoved", 5, 5)
    assert page.js(f"document.querySelector({json.dumps(bar)}).firstElementChild.textContent") == title
    assert page.js("document.querySelector('.tip').hidden") is True

    # the keyboard's focus on a bar's link shows its value too, and leaving gives the title back
    page.js(f"document.querySelector({json.dumps(bar)}).parentElement.focus()")
    assert (
        page.js("(() => { const t = document.querySelector('.tip'); return !t.hidden && t.textContent; })()")
        == title
    )
    page.js("document.activeElement.blur()")
    assert page.js(f"document.querySelector({json.dumps(bar)}).firstElementChild.textContent") == title

    # a click follows the bar's link to its query's row of the per-query table
    query = title.split(":")[0]
    x, y = _center(page, bar)
    _mouse(page, "mousePressed", x, y)
    _mouse(page, "mouseReleased", x, y)
    target = page.wait_for("document.querySelector(':target') && document.querySelector(':target').id")
    assert target == f"query-{query}"
    assert page.js("document.querySelector(':target td').textContent") == query
    row = page.js("document.querySelector(':target').getBoundingClientRect().top")
    assert 0 <= row < 900  # scrolled into the window

    # the legend: a click hides dense's curve, another shows it again
    key = "#plot-pr-curves .key[data-series='1']"
    curve = "#plot-pr-curves .series[data-series='1']"
    for pressed, display in (("false", "none"), ("true", "inline")):
        x, y = _center(page, key)
        _mouse(page, "mousePressed", x, y)
        _mouse(page, "mouseReleased", x, y)
        assert page.js(f"document.querySelector({json.dumps(key)}).getAttribute('aria-pressed')") == pressed
        assert page.js(f"getComputedStyle(document.querySelector({json.dumps(curve)})).display") == display
    assert page.errors == []


def test_which_way_is_better_comes_from_the_metric_definition():
    """Bold and significance marks follow MetricDef.better, so a plugin's lower-is-better metric is
    shown the right way round, and a count is never called best."""
    import irspec
    from irspec.spec.plugins import build_registry, get_plugin_manager
    from irspec.spec.registry import MetricDef, RegistryError

    def first_relevant_rank(query, metric):
        ranks = [i for i, v in enumerate(query.labels, 1) if v is not None and v >= query.relevance_level]
        return ranks[0] if ranks else len(query.labels) + 1

    def plugin(better):
        class Plugin:
            @irspec.hookimpl
            def irspec_register_metrics(self, register):
                register(
                    MetricDef(
                        "Effort",
                        "rank of the first relevant document",
                        per_query=first_relevant_rank,
                        better=better,
                    )
                )

        pm = get_plugin_manager(load_entry_points=False)
        pm.register(Plugin(), name="effort")
        return build_registry(pm)

    assert [
        report.direction(m)
        for m in irspec.parse_many("AP SL Fallout NumRet NumRelRet NumNonrelJudgedRet Judged@10 unj@10")
    ] == [1, -1, -1, 0, 1, -1, 0, 0]
    effort = plugin("lower").parse("Effort")[0]
    assert report.direction(effort) == -1
    results = evaluate_many(str(FIXTURES / "qrels.txt"), [str(FIXTURES / f"{f}.run") for f in RUNS], [effort])
    values = {r.run_name: round(r.aggregate()["Effort"], 4) for r in results}
    best = min(values.values())
    assert best < max(values.values())  # the fixture's runs differ here
    table = report.to_markdown(results)
    bold = {float(x) for x in re.findall(r"\*\*([0-9.]+)\*\*", table)}
    assert bold == {best}
    with pytest.raises(RegistryError, match="better='smaller'"):
        plugin("smaller")


# --------------------------------------------------------------------------------------------------
# The HTML template escapes every text once


class _Texts(__import__("html.parser").parser.HTMLParser):
    """The text of every element of a page, by tag, as a browser would show it (entities decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.texts: dict[str, list[str]] = {}
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in ("meta", "img", "br"):
            self.stack.append(tag)
            self.texts.setdefault(tag, []).append("")

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_data(self, data):
        for tag in self.stack:
            self.texts[tag][-1] += data


def test_html_escapes_names_metrics_notes_and_warnings_once():
    run_name, metric_name, note = "<script>alert(1)</script>", "P<5&x", "a note & <b>not bold</b>"
    base = fixture_results()[:2]
    metric = dataclasses.replace(base[0].metrics[2], name=metric_name)  # P@5 under a name with & and <
    results = [
        dataclasses.replace(
            base[0], run_name=run_name, metrics=(*base[0].metrics[:2], metric, *base[0].metrics[3:])
        ),
        dataclasses.replace(
            base[1], metrics=(*base[1].metrics[:2], metric, *base[1].metrics[3:]), warnings=("w & <i>",)
        ),
    ]
    assert str(metric) == "P<5&x@5"
    page = report.to_html(
        results,
        notes=[note],
        title="T & <T>",
        provenance={"plan": "a&b.yaml", "metrics": [str(metric)], "inputs": []},
    )
    # no markup from the texts: the one script is the page's own
    assert page.count("<script") == 1 and "<b>" not in page and "<i>" not in page
    assert "&amp;amp;" not in page and "&amp;lt;" not in page  # and no text escaped twice
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "P&lt;5&amp;x@5" in page
    texts = _Texts()
    texts.feed(page)
    assert texts.tags.count("script") == 1
    assert texts.texts["title"] == ["T & <T>"] and texts.texts["h1"] == ["T & <T>"]
    assert "P<5&x@5" in texts.texts["th"]  # the results table's header, shown as written
    assert run_name in texts.texts["td"]  # the run's row label
    assert f"note: {note}" in texts.texts["li"] and "w & <i>" in texts.texts["li"]
    assert any(t.endswith("; plan a&b.yaml.") for t in texts.texts["p"])
    assert "P<5&x@5" in texts.texts["code"]  # the provenance's metrics


def test_plots_and_html_are_drawn_from_the_plans_one_evaluation(tmp_path, monkeypatch):
    """run_plan evaluates the metrics the figures declare (the precision-recall points among them) as an
    evaluation of their own; writing the html and plots outputs then evaluates nothing, and the results
    hold only the plan's metrics."""
    importlib.import_module("matplotlib")
    import irspec.evaluation.evaluate
    import irspec.evaluation.parts
    from irspec.report import plots

    plan = workspace(tmp_path, "- {format: html, path: report.html}\n- {format: plots, path: plots}")
    done = run_plan(load_plan(plan))
    assert [str(m) for m in done.results[0].metrics] == ["nDCG@5", "AP", "P@5"]
    assert list(done.results[0].aggregate()) == ["nDCG@5", "AP", "P@5"]
    alone = evaluate_many(str(tmp_path / "qrels.txt"), [str(tmp_path / "base.run")], list(plots.IPREC_SPECS))
    assert done.curves["base"] == list(alone[0].aggregate().values())

    def no(*args, **kwargs):
        raise AssertionError("the report layer evaluated")

    monkeypatch.setattr(irspec.evaluation.evaluate, "evaluate_many", no)
    monkeypatch.setattr(irspec.evaluation.parts, "_evaluate_run", no)
    write_outputs(done, stdout=io.StringIO())
    assert (tmp_path / "plots" / "pr-curves.svg").exists() and "Interpolated precision-recall" in (
        tmp_path / "report.html"
    ).read_text()


def test_a_plan_without_plots_evaluates_no_curves(tmp_path):
    done = run_plan(load_plan(workspace(tmp_path, "- {format: json, path: out.json}")))
    assert done.curves is None and [str(m) for m in done.results[0].metrics] == ["nDCG@5", "AP", "P@5"]


# --------------------------------------------------------------------------------------------------
# A table in a terminal


def _on_a_terminal(args: list[str], columns: int, cwd: Path) -> str:
    """What ``irspec ARGS`` prints to a real terminal (a pseudo-terminal) of ``columns`` columns."""
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS=str(columns))
    done = subprocess.Popen(
        [sys.executable, "-m", "irspec", *args], stdout=slave, stderr=subprocess.PIPE, cwd=cwd, env=env
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the terminal is closed once the process has exited
            break
        if not chunk:
            break
        out += chunk
    assert done.wait() == 0, done.stderr.read()
    done.stderr.close()
    os.close(master)
    return out.decode().replace("\r\n", "\n")  # a terminal ends lines with CR LF


def _pytrec_means(measures: set[str], run: Path) -> dict[str, float]:
    import pytrec_eval
    from trecdicts import read_trec_dict

    qrels = read_trec_dict(ROOT / "specs" / "demo" / "qrels.txt", "qrels")
    got = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(read_trec_dict(run, "run"))
    return {m: sum(v[m] for v in got.values()) / len(qrels) for m in measures}


def test_the_default_metrics_fit_a_terminal_of_80_columns():
    """``irspec eval`` without -m (trec_eval's official set, 29 metrics with intervals) in an
    80-column terminal: a row per metric, every line within 80 columns, the means pytrec_eval's; two
    runs side by side, the metrics in the same order as the one-row table gives them."""
    demo = ROOT / "specs" / "demo"
    shown = _on_a_terminal(["eval", "qrels.txt", "runs/bm25.run", "runs/dense.run"], 80, demo)
    table, legend = shown.split("\n\n")
    assert all(len(line) <= 80 for line in table.splitlines())
    lines = table.splitlines()
    assert lines[0].split() == ["metric", "bm25", "dense"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert len(rows) == 29 and list(rows)[:6] == ["NumQ", "NumRet", "NumRel", "NumRelRet", "AP", "GMAP"]
    for name, measure in (("AP", "map"), ("P@10", "P_10"), ("Rprec", "Rprec")):
        expected = [_pytrec_means({measure}, demo / "runs" / f"{r}.run")[measure] for r in ("bm25", "dense")]
        assert [rows[name][0], rows[name][3]] == [
            f"{x:.4f}" for x in expected
        ]  # each mean, then its interval
    assert legend.startswith("[low, high]: the 95% confidence interval")


def test_a_table_that_fits_and_a_pipe_are_unchanged():
    """A table narrower than the terminal keeps a row per run; piped (not a terminal), the wide table is
    printed as it is, a row per run, whatever COLUMNS says."""
    demo = ROOT / "specs" / "demo"
    narrow = _on_a_terminal(["eval", "qrels.txt", "runs/bm25.run", "-m", "P@10"], 80, demo)
    assert narrow.splitlines()[0].split() == ["run", "P@10"]
    piped = subprocess.run([sys.executable, "-m", "irspec", "eval", "qrels.txt", "runs/bm25.run"], capture_output=True,
                           check=True, text=True, cwd=demo, env=dict(os.environ, COLUMNS="80"))  # fmt: skip
    header = piped.stdout.splitlines()[0].split()
    assert (
        header[:3] == ["run", "NumQ", "NumRet"]
        and len(header) == 30
        and len(piped.stdout.splitlines()[2]) > 600
    )


def test_a_plans_marked_table_fits_the_terminal_too(tmp_path):
    """``irspec run`` prints its table (with significance marks) to a terminal of 72 columns: a row per
    metric, the marks beside the values, every line of the table within 72 columns."""
    for name in ("qrels.txt", "base.run", "better.run", "worse.run"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    (tmp_path / "plan.yaml").write_text(
        "qrels: qrels.txt\nruns: [base.run, better.run, worse.run]\nmetrics: [official]\n"
        "compare: {baseline: base, test: t, correction: none}\noutput: [{format: table}]\n"
    )
    shown = _on_a_terminal(["run", "plan.yaml"], 72, tmp_path)
    # three runs of 25-character cells do not fit beside the metric column: two, then the third
    first, second = (part.splitlines() for part in shown.split("\n\n")[:2])
    assert first[0].split() == ["metric", "base", "(baseline)", "better"] and second[0].split() == [
        "metric",
        "worse",
    ]
    assert all(len(line) <= 72 for line in first + second) and len(first) == len(second) == 2 + 29
    # on AP better beats the baseline and worse loses to it (test_the_fixture_exercises_every_kind_of_mark)
    (ap_first,), (ap_second,) = (
        [line for line in part if line.startswith("AP ")] for part in (first, second)
    )
    assert "▲" in ap_first and "▼" not in ap_first and "▼" in ap_second and "▲" not in ap_second


def test_json_holds_a_text_metric_and_an_undefined_mean(tmp_path, capsys):
    # relstring has no mean (NaN until now: "not JSON compliant", a traceback) and a string per query
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\nq2 Q0 d 1 1.0 r\n")
    assert (
        main(["eval", str(qrels), str(run), "-m", "relstring@3", "-m", "P@1", "--format", "json", "-q"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    (entry,) = doc["runs"]
    assert entry["aggregate"] == {"relstring@3": None, "P@1": 0.5}  # P@1: q1 1, q2 0
    assert entry["per_query"]["q1"] == {"relstring@3": "10", "P@1": 1.0}
    assert entry["per_query"]["q2"] == {"relstring@3": "-", "P@1": 0.0}


# Every text of every chart inside its figure, and no two texts (titles, ticks, axis labels, legends,
# topic names) on one another; the data's own labels (ROC's cutoff, a scatter's run names) may crowd.
_TEXTS = """(() => [...document.querySelectorAll("figure svg.chart")].map(chart => {
  const frame = chart.getBoundingClientRect();
  const boxes = [...chart.querySelectorAll("text")].filter(t => !t.closest(".series"))
      .map(t => [t.textContent, t.getBoundingClientRect()]);
  const outside = boxes.filter(([, r]) => r.left < frame.left - 1 || r.right > frame.right + 1
                                       || r.top < frame.top - 1 || r.bottom > frame.bottom + 1).map(([s]) => s);
  const over = [];
  boxes.forEach(([a, r], i) => boxes.slice(i + 1).forEach(([b, s]) => {
    const x = Math.min(r.right, s.right) - Math.max(r.left, s.left), y = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
    if (x > 1 && y > 1) over.push([a, b]);
  }));
  return [chart.closest("figure").id, outside.slice(0, 3), over.slice(0, 3)];
}))()"""


@pytest.mark.skipif(chromium() is None, reason="no headless Chromium installed")
def test_the_figures_of_ten_long_named_runs_are_readable(tmp_path, page):
    import irspec as face
    from irspec.evaluation.context import Options
    from irspec.evaluation.result import Result
    from irspec.report import figures, plots

    rng = np.random.default_rng(1)
    names = [f"run-{i:02d}-a-rather-long-system-name" for i in range(10)]
    bound = tuple(face.parse(m) for m in ("AP", "nDCG@10"))
    qids = tuple(f"topic-{i:03d}" for i in range(50))
    results = [Result(n, "x", bound, qids, rng.random((50, 2)), Options()) for n in names]
    curves = {n: sorted(rng.random(11), reverse=True) for n in names}
    cutoffs = (0, *figures.ROC_CUTOFFS)
    data = figures.FigureData(
        {n: [(k / 2000 * (1 + i / 10), min(1.0, k / 100)) for k in cutoffs] for i, n in enumerate(names)},
        {n: list(rng.random(50)) for n in names},
        {n: figures.Confusion(10, 50, 200 + i, 300 - i, 400, None) for i, n in enumerate(names)},
        None,
    )
    drawn = plots.render(results, curves=curves, data=data, formats=("svg",), anchor=lambda q: "#" + q)
    (tmp_path / "ten.html").write_text(report.to_html(results, plots=drawn), encoding="utf-8")
    page.errors.clear()
    page.open((tmp_path / "ten.html").as_uri())
    found = page.js(_TEXTS)
    assert len(found) == 4 + 2 * 2
    for name, outside, over in found:
        assert outside == [] and over == [], (name, outside, over)
    assert page.js("document.documentElement.scrollWidth") <= 1280 and page.errors == []


def test_names_with_line_breaks_stay_names_in_latex_comments_and_markdown_headings(tmp_path, monkeypatch):
    # a reproduction's run name (or a set of judgments') went raw into a LaTeX comment (its line break
    # ended the comment: what followed was LaTeX, and \input read a file when the table was compiled) and
    # into Markdown list items and headings (live HTML, a heading of its own). A plan now refuses such a
    # name; the Python API's names (a Run's) are escaped in every report.
    import warnings

    import irspec
    from irspec.data import read_run

    demo = Path(__file__).resolve().parents[1] / "specs" / "demo"
    evil = "human\n\\typeout{INJECTED}<img src=x onerror=alert(1)>\n## HEAD"
    runs = [
        read_run(str(demo / "runs" / n))
        for n in ("bm25.run", "dense.run", "seeds/colbert-seed1.run", "seeds/colbert-seed2.run")
    ]
    runs[1] = dataclasses.replace(runs[1], name=evil.replace("\\n", "\n").replace("\\\\", "\\"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        rep = irspec.reproduce(str(demo / "qrels.txt"), [runs[0], runs[2]], [runs[1], runs[3]], "AP")
    tex, md, text = rep.render("latex"), rep.render("markdown"), rep.render("text")
    assert not any(
        line.startswith(("\\typeout", "<img", "## HEAD")) for line in tex.splitlines() + text.splitlines()
    )
    assert "<img" not in md and "\n## HEAD" not in md
    assert "- baseline: bm25 reproduced by human \\\\typeout{INJECTED}&lt;img" in md
    monkeypatch.chdir(tmp_path)
    Path("plan.yaml").write_text(
        f'qrels: {{"{evil}": {demo / "qrels.txt"}, llm: {demo / "qrels.llm.txt"}}}\n'
        f"runs:\n  - {{name: bm25, path: {demo / 'runs' / 'bm25.run'}}}\n"
        f'  - {{name: "{evil}", path: {demo / "runs" / "dense.run"}}}\n'
        "metrics: [AP]\noutput:\n  - {format: latex, path: r.tex}\n"
    )
    assert main(["run", "plan.yaml"]) == 2 and not Path("r.tex").exists()


def test_sets_of_judgments_whose_names_differ_make_distinct_anchors(tmp_path, monkeypatch):
    # "a/b" and "a.b" made the same anchors ("comparisons-a-b"): 53 ids twice, and the second set's links
    # led to the first's tables; anchors are now the names percent-encoded, as a query's
    demo = Path(__file__).resolve().parents[1] / "specs" / "demo"
    monkeypatch.chdir(tmp_path)
    Path("plan.yaml").write_text(
        f'qrels: {{"a/b": {demo / "qrels.txt"}, "a.b": {demo / "qrels.llm.txt"}}}\n'
        f"runs: [{demo / 'runs' / 'bm25.run'}, {demo / 'runs' / 'dense.run'}]\nmetrics: [AP]\n"
        "compare: {baseline: bm25}\noutput:\n  - {format: html, path: r.html}\n"
    )
    assert main(["run", "plan.yaml"]) == 0
    page = Path("r.html").read_text(encoding="utf-8")
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    for anchor in set(re.findall(r'href="#([^"]+)"', page)):
        assert anchor in ids, anchor


def test_the_reports_page_names_every_built_in_metric_bolded_lower_or_never():
    """The guide said bold is "none for counts", but NumRelRet (better higher) and NumNonrelJudgedRet
    (better lower) are bolded: its lists of the metrics better lower and better neither way are held to
    the built-in definitions' ``better``, and the bold of a results table to those lists."""
    from synthetic import make_result

    from irspec.spec.plugins import get_registry

    text = (ROOT / "docs" / "how-to" / "reports.md").read_text(encoding="utf-8")
    marks = " ".join(text[text.index("**Marks.**") : text.index("## The HTML report")].split())
    lower_part = marks[marks.index("lower for fall-out") : marks.index("none for what")]
    neither_part = marks[marks.index("none for what") : marks.index("which has no bold value")]
    named = {part: set(re.findall(r"`([A-Za-z_]+)`", part)) for part in (lower_part, neither_part)}
    built_in = {
        d.name: d.better for d in get_registry().definitions.values() if d.plugin.startswith("irspec.")
    }
    assert all(isinstance(b, str) for b in built_in.values())  # none depends on its parameters
    assert named[lower_part] == {n for n, b in built_in.items() if b == "lower"}
    assert named[neither_part] == {n for n, b in built_in.items() if b == "neither"}

    qids = ["q1", "q2"]
    metrics = ("NumRelRet", "NumNonrelJudgedRet", "NumRet")
    a = make_result("a", qids, np.array([[3.0, 1.0, 10.0], [3.0, 1.0, 10.0]]), metrics=metrics)
    b = make_result("b", qids, np.array([[1.0, 4.0, 20.0], [1.0, 4.0, 20.0]]), metrics=metrics)
    table = report.to_markdown([a, b])
    rows = {
        line.split("|")[1].strip(): line
        for line in table.splitlines()
        if line.startswith("| a") or line.startswith("| b")
    }
    assert "**6**" in rows["a"] and "**2**" in rows["a"]  # NumRelRet highest, NumNonrelJudgedRet lowest
    assert "**" not in rows["b"]  # NumRet, better neither way: none bolded
