"""irspec.power (the power step on evaluated runs), its tables in every format, the power-curves plot,
the plan's ``power`` section and ``irspec power``.

Expected values: the per-query differences are rebuilt here from ``Result.per_query()`` by query id,
their standard deviation by :mod:`statistics`, the powers by statsmodels' ``TTestPower`` and
``FTestAnovaPower`` (conventions in tests/test_power_design.py), the residual variance by
statsmodels' two-way ANOVA.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import irspec
from irspec.errors import EvaluationError, PlanError
from irspec.plan import load_plan, render_outputs, run_plan

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_run import Done, irspec_cli
from synthetic import make_result

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "specs" / "demo"
RUNS = ["bm25", "dense", "hybrid"]
METRICS = ["nDCG@10", "AP"]


def _statsmodels_power() -> tuple[Any, Any]:
    """statsmodels' powers of the paired t-test and of the one-way ANOVA: imported by the tests that use
    them, not at collection (~0.3 s of each pytest-xdist worker, issue 35)."""
    power = importlib.import_module("statsmodels.stats.power")
    return power.TTestPower(), power.FTestAnovaPower()


@pytest.fixture(scope="module")
def demo_results() -> dict[str, irspec.evaluation.result.Result]:
    return {
        n: irspec.evaluate(str(DEMO / "qrels.txt"), str(DEMO / "runs" / f"{n}.run"), METRICS) for n in RUNS
    }


def _differences(ra, rb, metric: str) -> list[float]:
    a, b = ra.per_query(), rb.per_query()
    return [a[q][metric] - b[q][metric] for q in sorted(set(a) & set(b))]


def test_pairs_against_statsmodels(demo_results):
    TT, _ = _statsmodels_power()
    found = irspec.power(demo_results, delta=0.05, alpha=0.05, power=0.8, baseline="bm25")
    assert [(p.metric, p.a, p.b) for p in found.pairs] == [
        (m, r, "bm25") for m in METRICS for r in ("dense", "hybrid")
    ]
    for p in found.pairs:
        d = _differences(demo_results[p.a], demo_results["bm25"], p.metric)
        sd = statistics.stdev(d)
        assert p.n == len(d) == 50
        assert p.sd_difference == pytest.approx(sd, rel=1e-9)
        assert p.mean_difference == pytest.approx(statistics.fmean(d), abs=1e-12)
        assert p.achieved_power == pytest.approx(TT.power(0.05 / sd, 50, 0.05), rel=1e-9)
        assert TT.power(p.detectable / sd, 50, 0.05) == pytest.approx(0.8, abs=1e-9)
        assert (
            TT.power(0.05 / sd, p.topics_needed, 0.05) >= 0.8 > TT.power(0.05 / sd, p.topics_needed - 1, 0.05)
        )


def test_anova_against_statsmodels(demo_results):
    _, FA = _statsmodels_power()
    pd = importlib.import_module("pandas")
    smf = importlib.import_module("statsmodels.formula.api")
    from statsmodels.stats.anova import anova_lm

    found = irspec.power(demo_results, delta=0.05)
    assert [a.metric for a in found.anova] == METRICS
    for a in found.anova:
        rows = [
            {"score": v[a.metric], "system": name, "topic": q}
            for name, res in demo_results.items()
            for q, v in res.per_query().items()
        ]
        table = anova_lm(smf.ols("score ~ C(system) + C(topic)", data=pd.DataFrame(rows)).fit())
        variance = float(table.loc["Residual", "mean_sq"])
        assert a.residual_variance == pytest.approx(variance, rel=1e-9)
        assert a.runs == tuple(RUNS) and a.n == 50
        f = 0.05 / math.sqrt(2 * 3 * variance)  # FTestAnovaPower: nobs = m n, k_groups = m
        assert a.achieved_power == pytest.approx(FA.power(f, 3 * 50, 0.05, 3), rel=1e-8)
        k = a.topics_needed
        assert FA.power(f, 3 * k, 0.05, 3) >= 0.8 > FA.power(f, 3 * (k - 1), 0.05, 3)


def test_comparisons_give_their_pairs(demo_results):
    compared = irspec.compare(demo_results, baseline="dense")
    found = irspec.power(compared, delta=0.02)
    assert [(p.metric, p.a, p.b) for p in found.pairs] == [(c.metric, c.a, c.b) for c in compared]
    assert [p.n for p in found.pairs] == [c.n for c in compared]
    with pytest.raises(EvaluationError, match="baseline and metrics come from the comparisons"):
        irspec.power(compared, delta=0.02, baseline="bm25")


def test_without_delta_only_the_detectable_differences(demo_results):
    found = irspec.power(demo_results)
    assert all(p.achieved_power is None and p.topics_needed is None and p.detectable > 0 for p in found.pairs)
    assert found.curves() == []
    assert "delta not given" not in found.to_table()  # the table says "-" for what needs delta
    assert " - " in found.to_table()


def test_identical_runs_are_detected_with_certainty():
    qids = [f"q{i}" for i in range(6)]
    values = np.array([0.1, 0.5, 0.3, 0.0, 1.0, 0.7])
    a, b = make_result("a", qids, values), make_result("b", qids, values + 0.2)
    found = irspec.power([a, b], delta=0.01)
    (pair, _) = found.pairs  # AP and P@10
    # a constant difference (0.2, up to floating-point noise) has sd 0: power 1, 2 topics, detectable 0
    assert pair.sd_difference == 0.0
    assert (pair.achieved_power, pair.topics_needed, pair.detectable) == (1.0, 2, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"delta": 0.0}, "delta must be a finite number > 0"),
        ({"delta": -0.1}, "delta must be a finite number > 0"),
        ({"alpha": 1.0}, "alpha must be a number strictly between 0 and 1"),
        ({"power": 0.0}, "power must be a number strictly between 0 and 1"),
        ({"baseline": "bm52"}, "did you mean 'bm25'"),
    ],
)
def test_bad_arguments(demo_results, kwargs, message):
    with pytest.raises(EvaluationError, match=message):
        irspec.power(demo_results, **kwargs)


def test_too_few_topics_in_common():
    a = make_result("a", ["q1", "q2"], [0.1, 0.2])
    b = make_result("b", ["q2", "q3"], [0.1, 0.2])
    with pytest.raises(EvaluationError, match="1 queries in common; a power analysis needs at least 2"):
        irspec.power([a, b], delta=0.1)


def test_every_format(demo_results):
    found = irspec.power(demo_results, delta=0.05, baseline="bm25")
    text = found.to_table()
    assert "Power of the paired t-tests" in text and "Power of the one-way ANOVA over all runs" in text
    p = found.pairs[0]
    row = next(line for line in text.splitlines() if line.startswith("nDCG@10") and " dense " in line)
    assert row.split()[-1] == str(p.topics_needed) and f"{p.achieved_power:.3f}" in row
    assert "| nDCG@10 | dense | bm25 | 50 |" in found.to_markdown()
    latex = found.to_latex()
    assert r"\begin{tabular}{lllrrrrrr}" in latex and r"$\Delta$" in latex
    html = found._repr_html_()
    assert "<table" in html and "Power of the one-way ANOVA" in html
    doc = json.loads(found.to_json())
    assert doc["delta"] == 0.05 and doc["pairs"][0]["topics_needed"] == p.topics_needed
    assert doc["anova"][0]["runs"] == RUNS
    frame = found.to_frame("polars")
    assert frame.height == 4 and frame["topics_needed"].to_list() == [q.topics_needed for q in found.pairs]
    assert found.to_frame("polars", design="anova")["runs"].to_list() == ["bm25, dense, hybrid"] * 2


def test_curves_read_the_design(demo_results):
    TT, _ = _statsmodels_power()
    found = irspec.power(demo_results, delta=0.05, baseline="bm25")
    curves = found.curves(points=30)
    assert [c.design for c in curves] == ["t"] * 4 + ["anova"] * 2
    c, p = curves[0], found.pairs[0]
    assert (
        c.at_hand == 50
        and c.needed == p.topics_needed
        and c.topics[0] == 2
        and c.topics[-1] >= p.topics_needed
    )
    sd = p.sd_difference
    assert c.power == pytest.approx([TT.power(0.05 / sd, n, 0.05) for n in c.topics], rel=1e-9)


def test_curves_with_absurd_points(demo_results):
    # 10**9 points were drawn by np.linspace (8 GB) to be rounded to at most 10,000 topic counts
    found = irspec.power(demo_results, delta=0.05, baseline="bm25")
    top = found.curves(points=30)[0].topics[-1]
    every = list(range(2, top + 1))  # more points than counts: every count from 2 to the top
    for points in (top - 1, 10**9, int("9" * 400)):
        assert [list(c.topics) for c in found.curves(points=points)] == [every] * 6
    for points in (1, 0, -5, 2.5, True):
        with pytest.raises(EvaluationError, match="points must be an integer >= 2"):
            found.curves(points=points)


def test_power_plot(demo_results):
    from irspec.report import plots

    found = irspec.power(demo_results, delta=0.05, baseline="bm25")
    (plot,) = plots.render_power(found.curves(), target=0.8)
    assert plot.name == "power-curves" and plot.svg.startswith(b"<?xml") and plot.png.startswith(b"\x89PNG")
    assert plots.render_power([], target=0.8) == []


# --------------------------------------------------------------------------------------------------
# plans and the command line


def _plan(tmp_path: Path, extra: str, outputs: str = "[{format: table}]") -> Path:
    shutil.copytree(DEMO, tmp_path / "demo", dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.py"))
    runs = "\n".join(f"  - {{name: {n}, path: demo/runs/{n}.run}}" for n in RUNS)
    path = tmp_path / "plan.yaml"
    path.write_text(
        f"qrels: demo/qrels.txt\nruns:\n{runs}\nmetrics: {json.dumps(METRICS)}\n{extra}\noutput: {outputs}\n"
    )
    return path


def test_plan_power_section_in_every_output(tmp_path, demo_results):
    outputs = "[{format: table}, {format: json, path: r.json}, {format: markdown}, {format: latex}, {format: html, path: r.html}]"
    report = run_plan(
        load_plan(_plan(tmp_path, "compare: {baseline: bm25}\npower: {delta: 0.05, power: 0.9}", outputs))
    )
    expected = irspec.power(irspec.compare(demo_results, baseline="bm25"), delta=0.05, power=0.9)
    assert report.power.pairs == expected.pairs and report.power.anova == expected.anova
    texts = [text for _, text in render_outputs(report)]
    assert all("Power of the paired t-tests" in t for t in (texts[0], texts[2], texts[3], texts[4]))
    assert json.loads(texts[1])["power"]["pairs"][0]["topics_needed"] == expected.pairs[0].topics_needed
    assert 'id="power"' in texts[4]


def test_plan_power_needs_compare(tmp_path):
    with pytest.raises(PlanError, match="add a compare section"):
        load_plan(_plan(tmp_path, "power: {delta: 0.05}"))
    with pytest.raises(PlanError, match=re.escape("power.delta")):
        load_plan(_plan(tmp_path, "compare: {}\npower: {delta: 0}"))


def _process(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``irspec ARGS`` in a fresh process: what a command that ran before it in the same process loaded
    is not there."""
    return subprocess.run(
        [sys.executable, "-m", "irspec", *args], check=False, capture_output=True, text=True, cwd=cwd
    )


def _cli(capsys, *args: str) -> Done:
    """``irspec ARGS`` in this process, run from the repository's root (``specs/demo.yaml`` and the like)."""
    return irspec_cli(capsys, *args, cwd=ROOT)


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex", "json"])
def test_cli_power_prints_every_format_in_a_fresh_process(fmt):
    """Each format in a process of its own: the table's renderer was reached as an attribute of
    irspec.report, there only once some other command had imported it (a traceback on main)."""
    runs = [str(DEMO / "runs" / f"{n}.run") for n in RUNS]
    done = _process("power", "--from", str(DEMO / "qrels.txt"), *runs, "-m", "AP", "-f", fmt)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "AP" in done.stdout


def test_cli_power_from_a_plan_and_from_files(tmp_path, demo_results, capsys):
    done = _cli(
        capsys,
        "power",
        str(_plan(tmp_path, "compare: {baseline: bm25}\npower: {delta: 0.05}")),
        "--delta",
        "0.02",
        "-f",
        "json",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    expected = irspec.power(demo_results, delta=0.02, baseline="bm25")
    assert doc["delta"] == 0.02 and [p["topics_needed"] for p in doc["pairs"]] == [
        p.topics_needed for p in expected.pairs
    ]
    runs = [str(DEMO / "runs" / f"{n}.run") for n in RUNS]
    for order in ([*runs, str(DEMO / "qrels.txt")], [str(DEMO / "qrels.txt"), *runs]):
        done = _cli(capsys, "power", "--delta", "0.02", "--from", *order, "-m", "nDCG@10", "-f", "json")
        assert done.returncode == 0, done.stderr
        assert [p["topics_needed"] for p in json.loads(done.stdout)["pairs"]] == [
            p.topics_needed for p in irspec.power(demo_results, delta=0.02, metrics="nDCG@10").pairs
        ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--delta", "abc", "specs/demo.yaml"], "--delta must be a number, not 'abc'"),
        (["--delta", "-1", "specs/demo.yaml"], "--delta must be a number > 0"),
        (["--power", "1.5", "specs/demo.yaml"], "--power must be a number strictly between 0 and 1"),
        (["--from", "nothere.txt", "specs/demo/runs/bm25.run"], "nothere.txt"),
        (["--from", "specs/demo/runs/bm25.run", "specs/demo/runs/dense.run"], "exactly one qrels file"),
        (["--from", "specs/demo/qrels.txt", "specs/demo/runs/bm25.run"], "at least 2 runs"),
        (["specs/demo.yaml", "--from", "specs/demo/qrels.txt"], "give a plan or --from"),
        ([], "give a plan or --from"),
    ],
)
def test_cli_errors_are_one_line(args, message, capsys):
    done = _cli(capsys, "power", *args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irspec: error:") and message in lines[0]
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--delta", "5e-324"],
            "would need more than 1,000,000,000 topics; the difference is too small to design for",
        ),
        (["--delta", "1e-160"], "would need more than 1,000,000,000 topics"),  # its square overflowed
        (["--power", "1e-300"], "the target power (1e-300) must be more than alpha (0.05)"),
        (["--power", "0.01", "--delta", "0.02"], "the target power (0.01) must be more than alpha (0.05)"),
        (["--alpha", "0.5", "--power", "0.5"], "the target power (0.5) must be more than alpha (0.5)"),
    ],
)
def test_cli_hostile_numbers_are_one_line(args, message, capsys):
    # issue 21: a subnormal --delta was an OverflowError, --power 1e-300 a root finder's ValueError
    runs = [str(DEMO / "runs" / f"{n}.run") for n in RUNS]
    done = _cli(capsys, "power", "--from", str(DEMO / "qrels.txt"), *runs, "-m", "AP", *args)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irspec: error:") and message in lines[0], done.stderr[
        -2000:
    ]
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"delta": 5e-324}, "would need more than 1,000,000,000 topics"),
        ({"power": 1e-300}, r"the target power \(1e-300\) must be more than alpha \(0.05\)"),
        ({"power": 0.04, "alpha": 0.05}, r"the target power \(0.04\) must be more than alpha \(0.05\)"),
    ],
)
def test_api_hostile_numbers_are_evaluation_errors(demo_results, kwargs, message):
    with pytest.raises(EvaluationError, match=message):
        irspec.power(demo_results, **kwargs)


def test_a_huge_delta_is_detected_with_certainty(demo_results):
    found = irspec.power(demo_results, delta=1e300)
    assert {p.achieved_power for p in found.pairs} == {1.0} and {p.topics_needed for p in found.pairs} == {2}
    assert {a.achieved_power for a in found.anova} == {1.0}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("{delta: 0.05, power: 0.01}", "power.power: the target power (0.01) must be more than alpha (0.05)"),
        ("{delta: 0.05, alpha: 0.9}", "power.alpha: the target power (0.8) must be more than alpha (0.9)"),
        ("{delta: " + "9" * 400 + "}", "power.delta: " + "9" * 77 + "... is no finite number"),
    ],
)
def test_plan_power_hostile_numbers_are_problems_with_their_line(tmp_path, section, message):
    path = _plan(tmp_path, f"compare: {{baseline: bm25}}\npower: {section}")
    with pytest.raises(PlanError) as info:
        load_plan(path)
    assert len(info.value.problems) == 1
    assert info.value.problems[0].startswith(f"{path}:") and message in info.value.problems[0]


def test_cli_plan_without_compare(tmp_path, capsys):
    path = _plan(tmp_path, "")
    done = _cli(capsys, "power", str(path), "--delta", "0.05")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"irspec: error: {path}: a power analysis designs the plan's comparisons; it needs a compare section and at least 2 runs"
    ]


def test_a_plans_infinite_delta_is_refused_when_the_plan_is_checked(tmp_path):
    # .inf passed the schema's exclusive minimum: validate said ok, and run stopped later without naming
    # the key
    with pytest.raises(
        PlanError, match=re.escape("power.delta: delta must be a finite number > 0, not .inf")
    ):
        load_plan(_plan(tmp_path, "compare: {}\npower: {delta: .inf}"))


def test_an_alpha_without_an_f_critical_value_fails_before_any_pair_is_designed(demo_results, monkeypatch):
    # --alpha 1e-300 took minutes before its error: each pair's minimum detectable difference was solved
    # first, on scipy's noncentral t far in its tail, and only then did the ANOVA find no F critical value
    from irspec.stats import design

    def designed(*args, **kwargs):
        raise AssertionError("a pair was designed before the ANOVA's alpha was checked")

    monkeypatch.setattr(design, "t_detectable", designed)
    with pytest.raises(
        EvaluationError, match=r"alpha \(1e-300\) is too small: scipy gives no critical value of the F"
    ):
        irspec.power(demo_results, delta=0.05, alpha=1e-300)
