"""One rule names a run read from a file, wherever it is given: its file's stem (``bm25`` for
``runs/bm25.run.gz``), on the command line, in ``irspec.evaluate``'s list, in a plan's glob and among a
system's runs; its runid column is kept for trec_eval's ``runid`` line. ``--format trec`` with several
runs starts each run's lines with ``runid all NAME``, as trec_eval's ``-m runid`` prints it.

The runs below share one runid (``tagA``), as the seeds of one system or a toolkit's default tag do;
the expected names are the files' names, written out; the values are pytrec_eval's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import pytrec_eval
from cli_run import Done, irspec_cli
from trecdicts import read_trec_dict

import irspec
from irspec.plan import load_plan, render_outputs, run_plan

DEMO = Path(__file__).resolve().parents[1] / "specs" / "demo"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """first.run and second.run (the demo's bm25 and dense), and seeds/s1.run and s2.run (colbert's first
    two seeds), every line with the runid tagA."""
    shutil.copy(DEMO / "qrels.txt", tmp_path / "qrels.txt")
    (tmp_path / "seeds").mkdir()
    for source, target in (("bm25.run", "first.run"), ("dense.run", "second.run"),
                           ("seeds/colbert-seed1.run", "seeds/s1.run"), ("seeds/colbert-seed2.run", "seeds/s2.run")):  # fmt: skip
        lines = (DEMO / "runs" / source).read_text().splitlines()
        (tmp_path / target).write_text(
            "".join(" ".join([*line.split()[:5], "tagA"]) + "\n" for line in lines)
        )
    return tmp_path


def _p5(files: Path, run: str) -> float:
    qrels = read_trec_dict(files / "qrels.txt", "qrels")
    got = pytrec_eval.RelevanceEvaluator(qrels, {"P_5"}).evaluate(read_trec_dict(files / run, "run"))
    return sum(v["P_5"] for v in got.values()) / len(qrels)


def _irspec(capsys, files: Path, *args: str) -> Done:
    return irspec_cli(capsys, *args, cwd=files)


def test_the_command_line_names_runs_by_their_files(files, capsys):
    done = _irspec(
        capsys,
        files,
        "eval",
        "qrels.txt",
        "first.run",
        "second.run",
        "--system",
        "sys=seeds/*.run",
        "-m",
        "P@5",
        "-f",
        "json",
    )
    assert done.returncode == 0, done.stderr
    assert "named" not in done.stderr  # no two runs of one name, though every file says tagA
    doc = json.loads(done.stdout)
    assert [r["name"] for r in doc["runs"]] == ["first", "second", "sys"]
    assert [r["name"] for r in doc["runs"][2]["system"]["runs"]] == ["s1", "s2"]
    assert doc["runs"][0]["aggregate"]["P@5"] == pytest.approx(_p5(files, "first.run"), abs=1e-12)


def test_evaluate_names_runs_by_their_files(files, monkeypatch):
    monkeypatch.chdir(files)
    assert list(irspec.evaluate("qrels.txt", ["first.run", "second.run"], "P@5")) == ["first", "second"]
    assert irspec.evaluate("qrels.txt", "first.run", "P@5").run_name == "first"
    many = irspec.evaluate("qrels.txt", {"mine": "first.run", "sys": "seeds/*.run"}, "P@5")
    assert list(many) == ["mine", "sys"] and [r.run_name for r in many["sys"].runs] == ["s1", "s2"]


def test_a_plan_names_runs_by_their_files(files):
    (files / "plan.yaml").write_text(
        "qrels: qrels.txt\nruns: ['*.run']\nsystems: [{name: sys, runs: seeds/*.run}]\nmetrics: [P@5]\n"
        "compare: {baseline: first}\noutput: [{format: json}]\n"
    )
    report = run_plan(load_plan(files / "plan.yaml"))
    assert [r.run_name for r in report.results] == ["first", "second", "sys"]
    (text,) = [t for _, t in render_outputs(report)]
    assert [r["name"] for r in json.loads(text)["runs"][2]["system"]["runs"]] == ["s1", "s2"]


def test_trec_format_starts_each_run_with_its_runid_line(files, capsys):
    done = _irspec(capsys, files, "eval", "qrels.txt", "first.run", "second.run", "-m", "P@5", "-f", "trec")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"runid                 \tall\tfirst\nP_5                   \tall\t{_p5(files, 'first.run'):.4f}\n"
        f"runid                 \tall\tsecond\nP_5                   \tall\t{_p5(files, 'second.run'):.4f}\n"
    )
    # per query too: the runid line comes before the run's lines, not after them
    lines = _irspec(
        capsys, files, "eval", "-q", "qrels.txt", "first.run", "second.run", "-m", "P@5", "-f", "trec"
    ).stdout.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("runid")]
    assert heads == [0, len(lines) // 2] and lines[1].startswith("P_5") and lines[1].split("\t")[1] != "all"


def test_one_run_keeps_trec_evals_runid_line(files, capsys):
    """trec_eval 10 prints the runid column (``runid all tagA``) with its official measures; so does
    irspec for one run, and no runid line without them, byte for byte as trec_eval."""
    official = _irspec(capsys, files, "eval", "qrels.txt", "first.run", "-f", "trec").stdout
    assert official.splitlines()[0] == "runid                 \tall\ttagA"
    assert _irspec(capsys, files, "eval", "qrels.txt", "first.run", "-m", "P@5", "-f", "trec").stdout == (
        f"P_5                   \tall\t{_p5(files, 'first.run'):.4f}\n"
    )
