"""Several sets of judgments (irspec.experiment.agreement, `irspec eval --agreement`, `qrels:` as a mapping).

Expected values come from outside irspec: the runs' means from pytrec_eval, Kendall's tau from scipy,
significance from scipy's paired t-test with statsmodels' Holm correction, label agreement from
scikit-learn and the krippendorff package, counts from plain Python over the qrels files.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import shutil
import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from cli_run import Done, irspec_cli
from trecdicts import read_trec_dict

import irspec
from irspec.data import Qrels
from irspec.errors import EvaluationError, PlanError
from irspec.experiment.agreement import agreement_of
from irspec.experiment.records import Compare
from irspec.plan.execute import render_outputs, run_plan
from irspec.plan.load import load_plan

pytrec_eval = importlib.import_module("pytrec_eval")
krippendorff = importlib.import_module("krippendorff")

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "specs" / "demo"
SETS = {"human": DEMO / "qrels.txt", "llm": DEMO / "qrels.llm.txt"}
RUNS = {name: DEMO / "runs" / f"{name}.run" for name in ("bm25", "dense", "hybrid", "random")}
MEASURES = {"P@10": "P_10", "nDCG@10": "ndcg_cut_10"}


def _reference_scores() -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """{set: {run: {metric: per-query values in qrels query order}}} by pytrec_eval (trec_eval -c: every
    qrels query, a run missing one scoring 0; the demo runs answer every query)."""
    out = {}
    for name, path in SETS.items():
        qrels = read_trec_dict(path, "qrels")
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values()))
        out[name] = {}
        for run, run_path in RUNS.items():
            got = evaluator.evaluate(read_trec_dict(run_path, "run"))
            out[name][run] = {m: np.array([got[q][t] for q in sorted(qrels)]) for m, t in MEASURES.items()}
    return out


@pytest.fixture(scope="module")
def demo() -> irspec.experiment.agreement.Agreement:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)  # the random run is mostly unjudged
        return irspec.agreement(
            {k: str(v) for k, v in SETS.items()}, {k: str(v) for k, v in RUNS.items()}, "P@10, nDCG@10"
        )


def test_rankings_swaps_and_significance_against_references(demo):
    ref = _reference_scores()
    means = {
        s: {r: {m: float(v.mean()) for m, v in by_m.items()} for r, by_m in by_r.items()}
        for s, by_r in ref.items()
    }
    runs = list(RUNS)
    # significance: scipy's paired t-test on every pair, Holm over the 6 pairs of each metric (statsmodels,
    # imported here, not at collection: ~0.3 s of each worker, issue 35)
    from statsmodels.stats.multitest import multipletests

    significant = {}
    for s in SETS:
        for m in MEASURES:
            pairs = list(itertools.combinations(runs, 2))
            p = [scipy.stats.ttest_rel(ref[s][a][m], ref[s][b][m]).pvalue for a, b in pairs]
            reject = multipletests(p, alpha=0.05, method="holm")[0]
            significant.update({(s, m, a, b): bool(r) for (a, b), r in zip(pairs, reject, strict=True)})
    for r in demo.rankings:
        x = [means["human"][run][r.metric] for run in runs]
        y = [means["llm"][run][r.metric] for run in runs]
        assert r.kendall_tau == pytest.approx(scipy.stats.kendalltau(x, y).statistic)
    expected_swaps = set()
    for m in MEASURES:
        for a, b in itertools.combinations(runs, 2):
            h = means["human"][a][m] - means["human"][b][m]
            g = means["llm"][a][m] - means["llm"][b][m]
            if h * g < 0:
                expected_swaps.add((m, a, b, significant[("human", m, a, b)], significant[("llm", m, a, b)]))
    assert {
        (s.metric, s.run_1, s.run_2, s.significant_a, s.significant_b) for s in demo.swaps
    } == expected_swaps
    assert expected_swaps  # the demo's second set is made to swap bm25 and dense
    changes = {
        (m, a, b)
        for (s, m, a, b), v in significant.items()
        if s == "human" and v != significant[("llm", m, a, b)]
    }
    assert {(c.metric, c.run_a, c.run_b) for c in demo.significance} == changes
    for s, run, metric, mean in demo.means:
        assert mean == pytest.approx(means[s][run][metric], abs=1e-12)


def test_labels_against_references(demo):
    human, llm = read_trec_dict(SETS["human"], "qrels"), read_trec_dict(SETS["llm"], "qrels")
    pairs = [(q, d) for q in human for d in human[q] if d in llm.get(q, {})]
    a = np.array([human[q][d] for q, d in pairs])
    b = np.array([llm[q][d] for q, d in pairs])
    (found,) = demo.labels
    n_human = sum(len(v) for v in human.values())
    n_llm = sum(len(v) for v in llm.values())
    assert (found.common, found.only_a, found.only_b) == (
        len(pairs),
        n_human - len(pairs),
        n_llm - len(pairs),
    )
    sk = importlib.import_module("sklearn.metrics")  # here, not at collection: ~0.4 s a worker (issue 35)
    grades = list(range(a.min(), a.max() + 1))
    assert found.kappa == pytest.approx(sk.cohen_kappa_score(a, b))
    assert found.kappa_quadratic == pytest.approx(
        sk.cohen_kappa_score(a, b, labels=grades, weights="quadratic")
    )
    assert found.alpha_ordinal == pytest.approx(
        krippendorff.alpha(reliability_data=[a, b], level_of_measurement="ordinal")
    )
    assert found.binary_kappa == pytest.approx(sk.cohen_kappa_score(a >= 1, b >= 1))
    assert found.agreement == pytest.approx(np.mean(a == b))
    counts = Counter(zip(a.tolist(), b.tolist(), strict=True))
    assert {
        (found.labels[i], found.labels[j]): n
        for i, row in enumerate(found.confusion)
        for j, n in enumerate(row)
        if n
    } == counts


def _result_set(qrels: dict, runs: dict, metrics: str = "P@2"):
    return list(irspec.evaluate(qrels, runs, metrics, judged_warning=None).values())


def test_identical_sets_agree_fully():
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 0, "d4": 1}}
    runs = {
        "a": {"q1": {"d1": 3, "d2": 2}, "q2": {"d4": 1, "d1": 0.5}},
        "b": {"q1": {"d2": 3, "d3": 1}, "q2": {"d1": 1}},
        "c": {"q1": {"d3": 3}, "q2": {"d5": 1}},
    }
    res = _result_set(qrels, runs)
    q = Qrels.from_dict(qrels)
    found = agreement_of({"x": res, "y": res}, {"x": q, "y": q}, Compare())
    # a P@2 = (1/2 + 1/2) / 2 = 1/2, b = (1/2 + 0) / 2 = 1/4, c = (1/2 + 0) / 2 = 1/4: b and c tie
    (r,) = found.rankings
    assert r.kendall_tau == pytest.approx(1.0)
    assert r.tau_ap_a is None and r.tau_ap_b is None  # tied means: tau_AP undefined, said in a note
    assert any("tau_AP" in n and "tied" in n for n in found.notes)
    assert found.swaps == () and found.significance == ()
    (lab,) = found.labels
    assert (lab.common, lab.kappa, lab.kappa_quadratic, lab.alpha_ordinal) == (5, 1.0, 1.0, 1.0)


def test_disjoint_judgments_are_undefined_not_a_crash():
    qa = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
    qb = {"q1": {"d5": 1}, "q2": {"d6": 0, "d7": 2}}
    runs = {
        "a": {"q1": {"d1": 3, "d5": 2}, "q2": {"d3": 1}},
        "b": {"q1": {"d5": 3}, "q2": {"d7": 1, "d3": 0}},
    }
    found = agreement_of(
        {"a": _result_set(qa, runs), "b": _result_set(qb, runs)},
        {"a": Qrels.from_dict(qa), "b": Qrels.from_dict(qb)},
        None,
    )
    (lab,) = found.labels
    assert (lab.common, lab.only_a, lab.only_b) == (0, 3, 3)
    assert lab.kappa is lab.kappa_quadratic is lab.alpha_ordinal is lab.agreement is lab.binary_kappa is None
    assert lab.labels == () and lab.confusion == ()
    assert any("no query-document pair is judged in both sets" in n for n in found.notes)
    # two systems: a P@2 under a = (1/2 + 1/2)/2, b = (0 + 1/2)/2; under b: a = (1/2 + 0)/2, b = (1/2 + 1/2)/2
    (r,) = found.rankings
    assert r.kendall_tau == pytest.approx(-1.0) and r.tau_ap_a == pytest.approx(-1.0) and r.swaps == 1
    (s,) = found.swaps
    assert (s.run_1, s.run_2, s.significant_a, s.significant_b) == ("a", "b", None, None)  # nothing compared
    text = str(found)
    assert "-" in text and "no query-document pair" in text
    json.loads(found.to_json())  # undefined values are null, never NaN


def test_every_format_and_frame(demo):
    text, md, tex, html = str(demo), demo.to_markdown(), demo.to_latex(), demo._repr_html_()
    for out in (text, md, tex, html):
        assert "Agreement between system rankings" in out and "Significance that does not hold" in out
    assert "\\begin{tabular}" in tex and "| metric |" in md and "<table" in html
    doc = json.loads(demo.to_json())
    assert doc["sets"] == ["human", "llm"] and len(doc["rankings"]) == 2
    for table in ("rankings", "swaps", "labels", "significance", "means"):
        frame = demo.to_frame(table=table)
        assert frame.height == len(getattr(demo, table))
    with pytest.raises(EvaluationError, match="table must be one of"):
        demo.to_frame(table="nope")


def test_the_report_layer_presents_the_agreement(demo):
    """The tables are report's (report/agreement.py, beside report/power.py), made from the agreement's
    attributes; the agreement's own renderings and a plan's combined output are those tables."""
    from irspec import report
    from irspec.report.agreement import agreement_sections, judged_sets_text

    sections = agreement_sections(demo, decimals=3)
    assert demo.sections(decimals=3) == sections
    assert [heading for heading, _, _ in sections][:3] == [
        "Agreement between system rankings",
        "Swapped pairs of runs",
        "Agreement between labels",
    ]
    assert demo.to_table(decimals=3) == report.text.plain_tables(sections, notes=demo.notes)
    assert judged_sets_text({"human": "H\n", "llm": "L\n"}, demo, "markdown", decimals=3) == (
        "## qrels: human\n\nH\n\n## qrels: llm\n\nL\n\n## Agreement between the sets of judgments\n"
        + report.markdown.plain_tables(sections, notes=demo.notes)
    )
    with pytest.raises(
        EvaluationError, match="reported in the table, json, markdown, latex formats, not html"
    ):
        judged_sets_text({}, demo, "html")


def test_agreement_needs_two_sets_and_two_runs():
    q = {"q1": {"d1": 1}}
    with pytest.raises(EvaluationError, match="at least two sets"):
        irspec.agreement({"only": q}, {"a": {"q1": {"d1": 1}}, "b": {"q1": {"d1": 1}}}, "P@1")
    with pytest.raises(EvaluationError, match="at least 2 runs"):
        irspec.agreement({"x": q, "y": q}, {"a": {"q1": {"d1": 1}}}, "P@1")


def test_agreement_plots(demo):
    importlib.import_module("matplotlib")
    found = irspec.report.plots.render_agreement(demo, formats=("svg",))
    assert [p.name for p in found] == ["agreement-P_at_10-human-llm", "agreement-nDCG_at_10-human-llm"]
    assert all(p.svg.startswith(b"<?xml") for p in found)


# --------------------------------------------------------------------------------------------------
# The command line


def _process(*args: str) -> subprocess.CompletedProcess[str]:
    """``irspec ARGS`` in a process of its own, in the demo's folder."""
    return subprocess.run(
        [sys.executable, "-m", "irspec", *args], check=False, capture_output=True, text=True, cwd=DEMO
    )


def _irspec(capsys, *args: str) -> Done:
    """``irspec ARGS`` in this process, in the demo's folder."""
    return irspec_cli(capsys, *args, cwd=DEMO)


def test_cli_agreement_in_any_order_as_json():
    done = _process(
        "eval",
        "runs/bm25.run",
        "qrels.txt",
        "runs/dense.run",
        "qrels.llm.txt",
        "-m",
        "P@10",
        "--agreement",
        "-f",
        "json",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert list(doc["qrels_sets"]) == ["qrels", "qrels.llm"]
    ((s),) = doc["agreement"]["swaps"]
    assert (s["run_1"], s["run_2"]) == ("bm25", "dense")
    assert doc["agreement"]["compare"]["test"] == "t" and doc["agreement"]["compare"]["correction"] == "holm"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["qrels.txt", "runs/bm25.run", "runs/dense.run"],
            "at least 2 qrels files and 2 runs; got 1 qrels and 2 runs",
        ),
        (["qrels.txt", "qrels.llm.txt", "runs/bm25.run"], "got 2 qrels and 1 runs"),
        (["qrels.txt", "qrels.llm.txt", "runs/bm25.run", "runs/dense.run", "-f", "csv"], "not --format csv"),
        (["qrels.txt", "qrels.txt", "runs/bm25.run", "runs/dense.run"], "qrels is given twice"),
        (["qrels.txt", "nothere.txt", "runs/bm25.run", "runs/dense.run"], "nothere.txt"),
        # the runs have per-topic means under each set: no one -Z file to write
        (
            ["qrels.txt", "qrels.llm.txt", "runs/bm25.run", "runs/dense.run", "--write-z", "z.txt"],
            "--agreement does not take --write-z",
        ),
        (
            [
                "qrels.txt",
                "qrels.llm.txt",
                "runs/bm25.run",
                "runs/dense.run",
                "-c",
                "--missing-queries",
                "skip",
            ],
            "contradicts --missing-queries skip",
        ),
    ],
)
def test_cli_agreement_errors(args, message, capsys):
    done = _irspec(capsys, "eval", *args, "-m", "P@10", "--agreement")
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.startswith("irspec: error: ") and message in done.stderr and done.stderr.count("\n") == 1
    )


def test_cli_agreement_takes_eval_flags_and_gives_provenance(capsys):
    # irspec eval --agreement runs as a plan with several sets of judgments: a --system is a row under
    # each set and a run of the rankings compared, and each set's JSON carries the provenance, as every
    # JSON does (README), naming that set's qrels file
    done = _irspec(
        capsys,
        "eval",
        "qrels.txt",
        "qrels.llm.txt",
        "runs/bm25.run",
        "runs/dense.run",
        "--system",
        "colbert=runs/seeds/colbert-seed*.run",
        "-m",
        "P@10",
        "--agreement",
        "-f",
        "json",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    for name, found in doc["qrels_sets"].items():
        assert [r["name"] for r in found["runs"]] == ["bm25", "dense", "colbert"]
        inputs = [(i["role"], i["name"], i["path"]) for i in found["provenance"]["inputs"]]
        assert inputs[:3] == [
            ("qrels", None, f"{name}.txt"),
            ("run", "bm25", "runs/bm25.run"),
            ("run", "dense", "runs/dense.run"),
        ]
    assert {frozenset((s["run_1"], s["run_2"])) for s in doc["agreement"]["swaps"]} == {
        frozenset(("bm25", "dense")),
        frozenset(("bm25", "colbert")),
    }


def test_cli_agreement_says_a_warning_once(capsys):
    # at level 4 neither set has a relevant document (their labels go up to 3): one sentence, said once
    done = _irspec(
        capsys,
        "eval",
        "qrels.txt",
        "qrels.llm.txt",
        "runs/bm25.run",
        "runs/dense.run",
        "-m",
        "P@10",
        "--agreement",
        "-l",
        "4",
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stderr.count("irspec: warning: relevance level 4 (P@10): no document in the qrels is relevant")
        == 1
    )


# --------------------------------------------------------------------------------------------------
# Plans


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copytree(DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return tmp_path


def _plan(directory: Path, text: str) -> Path:
    path = directory / "plan.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


PLAN = """
qrels: {human: demo/qrels.txt, llm: demo/qrels.llm.txt}
runs: [demo/runs/bm25.run, demo/runs/dense.run, demo/runs/hybrid.run]
metrics: [P@10]
compare: {baseline: bm25, test: t, correction: holm}
output:
  - {format: table}
  - {format: json, path: out.json}
  - {format: html, path: out.html}
"""


def test_plan_with_two_sets(workspace):
    plan = load_plan(_plan(workspace, PLAN))
    assert [n for n, _ in plan.qrels_sets] == ["human", "llm"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        report = run_plan(plan)
    rendered = {o.format: text for o, text in render_outputs(report)}
    assert "== qrels: human ==" in rendered["table"] and "== qrels: llm ==" in rendered["table"]
    doc = json.loads(rendered["json"])
    assert list(doc["qrels_sets"]) == ["human", "llm"]
    # each set's comparisons are the plan's (against the baseline), so a swap of dense and hybrid,
    # not compared with each other, is marked unknown rather than guessed
    for s in report.agreement.swaps:
        compared = "bm25" in (s.run_1, s.run_2)
        assert (s.significant_a is not None) == compared
    assert "Agreement between the sets of judgments" in rendered["html"]
    assert doc["qrels_sets"]["llm"]["comparisons"]  # compared under the second set too


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "qrels: {human: demo/qrels.txt}\nruns: [demo/runs/bm25.run, demo/runs/dense.run]\nmetrics: [P@10]\n",
            "qrels: {'human': 'demo/qrels.txt'} does not have enough properties",
        ),
        (
            "qrels: {human: demo/qrels.txt, llm: demo/nope.txt}\nruns: [demo/runs/bm25.run, demo/runs/dense.run]\nmetrics: [P@10]\n",
            "qrels.llm",
        ),
        (
            "qrels: {human: demo/qrels.txt, llm: demo/qrels.llm.txt}\nruns: [demo/runs/bm25.run]\nmetrics: [P@10]\n",
            "at least 2 runs",
        ),
        (
            "qrels: {human: demo/qrels.txt, llm: demo/qrels.llm.txt}\nruns: [demo/runs/bm25.run, demo/runs/dense.run]\n"
            "metrics: [P@10]\noutput: [{format: csv}]\n",
            "not csv",
        ),
    ],
)
def test_plan_problems_with_several_sets(workspace, text, message):
    with pytest.raises(PlanError) as info:
        load_plan(_plan(workspace, text))
    assert any(message in p for p in info.value.problems), info.value.problems


def test_shipped_agreement_plan_validates():
    plan = load_plan(ROOT / "specs" / "agreement.yaml")
    assert [n for n, _ in plan.qrels_sets] == ["human", "llm"] and len(plan.runs) == 4
    assert plan.qrels == plan.qrels_sets[0][1]


def test_the_page_shows_every_sets_results_and_comparisons(workspace):
    """The HTML report of two sets of judgments: each set's results table (the means pytrec_eval gives
    under that set) and comparisons table, titled with its name, before the agreement."""
    plan = load_plan(_plan(workspace, PLAN))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        report = run_plan(plan)
    (page,) = [text for o, text in render_outputs(report) if o.format == "html"]
    reference = _reference_scores()
    starts = [page.index(f'<h2 id="{ident}">{title}</h2>') for ident, title in (
        ("results-human", "Results: human"), ("comparisons-human", "Comparisons: human"),
        ("results-llm", "Results: llm"), ("comparisons-llm", "Comparisons: llm"),
        ("agreement", "Agreement between the sets of judgments"))]  # fmt: skip
    assert starts == sorted(starts)
    parts = {"human": page[starts[0] : starts[1]], "llm": page[starts[2] : starts[3]]}
    for name, part in parts.items():
        assert part.count('<table class="results">') == 1
        for run in ("bm25", "dense", "hybrid"):
            mean = reference[name][run]["P@10"].mean()
            (row,) = re.findall(rf'<tr><td class="text">{run}\b.*', part)
            assert re.search(rf"</td><td[^>]*>{mean:.4f}\b", row), (name, row)
    # each set's comparisons (against bm25) under its own heading
    assert [
        page[a:b].count('<table class="comparisons">')
        for a, b in ((starts[1], starts[2]), (starts[3], starts[4]))
    ] == [1, 1]


def test_a_plan_reads_each_set_of_judgments_once(workspace, monkeypatch):
    """Each qrels file of a plan with two sets is read once: for its runs and for the label statistics
    (counted at the TREC text reader, which every qrels file goes through)."""
    import irspec.data.trec

    reads: Counter[str] = Counter()
    real = irspec.data.trec.read_text

    def counting(src, kind, source=None):
        if kind.kind == "qrels":
            reads[Path(src).name] += 1
        return real(src, kind, source)

    monkeypatch.setattr(irspec.data.trec, "read_text", counting)
    plan = load_plan(_plan(workspace, PLAN))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        report = run_plan(plan)
    assert report.agreement.labels[0].common > 0  # the labels were compared
    assert reads == {"qrels.txt": 1, "qrels.llm.txt": 1}


# --------------------------------------------------------------------------------------------------
# Ties, directions, systems, undefined values


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_means_equal_as_rationals_are_tied(tmp_path):
    """Three runs, three queries, five documents each; P@5 per query is (relevant among the five) / 5.
    Under a: X 1/5, 1/5, 1/5; Y 4/5 each; Z 1 each. Under b: X 1/5, 1/5, 4/5 and Y 4/5, 1/5, 1/5 (both
    2/5 exactly, but their float sums 0.2 + 0.2 + 0.8 and 0.8 + 0.2 + 0.2 differ in the last bit); Z 1.
    Exact means a = (1/5, 4/5, 1), b = (2/5, 2/5, 1): scipy's τ-b, no swap (X and Y tie under b), and
    τ_AP undefined with a note."""
    relevant_a = {"X": (1, 1, 1), "Y": (4, 4, 4), "Z": (5, 5, 5)}
    relevant_b = {"X": (1, 1, 4), "Y": (4, 1, 1), "Z": (5, 5, 5)}

    def qrels(relevant: dict[str, tuple[int, ...]]) -> list[str]:
        return [
            f"q{q + 1} 0 {run}{d} {int(d < k)}"
            for run, counts in relevant.items()
            for q, k in enumerate(counts)
            for d in range(5)
        ]

    runs = {
        run: _write(
            tmp_path / f"{run}.run",
            [f"q{q} Q0 {run}{d} {d + 1} {10 - d} {run}" for q in (1, 2, 3) for d in range(5)],
        )
        for run in "XYZ"
    }
    sets = {
        "a": _write(tmp_path / "a.txt", qrels(relevant_a)),
        "b": _write(tmp_path / "b.txt", qrels(relevant_b)),
    }
    found = irspec.agreement(sets, runs, "P@5")
    (r,) = found.rankings
    expected = scipy.stats.kendalltau([1, 4, 5], [2, 2, 5]).statistic  # the exact means, in fifths
    assert r.kendall_tau == pytest.approx(expected) and r.kendall_tau == pytest.approx(2 / 6**0.5)
    assert r.swaps == 0 and found.swaps == ()
    assert r.tau_ap_a is r.tau_ap_b is r.tau_ap_mean is None
    assert any("tau_AP a vs b undefined: tied means" in n for n in found.notes)


def test_tau_ap_reads_a_lower_is_better_metric_from_its_best_run(tmp_path):
    """SL (search length; lower is better): each run ranks four documents of its own, and each set
    judges one of them relevant, so that SL is the rank of that document. Under a, A..D have SL 1, 2, 3,
    4; under b, 2, 1, 3, 4: the two best runs swap. Read best first (lowest SL), the swap is at the top:
    as in test_agreement_stats.test_tau_ap_by_hand, τ_AP = 2/3 (0/1 + 2/2 + 3/3) - 1 = 1/3 both ways
    (read worst first it would be the bottom's 7/9). τ-b is 4/6 either way."""
    sl_a = {"A": 1, "B": 2, "C": 3, "D": 4}
    sl_b = {"A": 2, "B": 1, "C": 3, "D": 4}
    runs = {
        run: _write(
            tmp_path / f"{run}.run",
            [f"q{q} Q0 {run}{d} {d} {10 - d} {run}" for q in (1, 2) for d in range(1, 5)],
        )
        for run in sl_a
    }
    sets = {
        name: _write(
            tmp_path / f"{name}.txt", [f"q{q} 0 {run}{k} 1" for q in (1, 2) for run, k in sl.items()]
        )
        for name, sl in (("a", sl_a), ("b", sl_b))
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant differences: the t-test's p is degenerate
        found = irspec.agreement(sets, runs, "SL")
    assert {(s, run): v for s, run, _, v in found.means} == {
        **{("a", k): float(v) for k, v in sl_a.items()},
        **{("b", k): float(v) for k, v in sl_b.items()},
    }
    (r,) = found.rankings
    assert r.tau_ap_a == pytest.approx(1 / 3) and r.tau_ap_b == pytest.approx(1 / 3)
    assert r.kendall_tau == pytest.approx(4 / 6)
    ((s),) = found.swaps
    assert (s.run_1, s.run_2, s.mean_1_a, s.mean_2_a, s.mean_1_b, s.mean_2_b) == (
        "A",
        "B",
        1.0,
        2.0,
        2.0,
        1.0,
    )


def test_agreement_takes_systems_and_compare_settings():
    """A system of three seeds is a run of the rankings, its value per topic the mean of its seeds'
    (pytrec_eval's values averaged here); baselines and family are irspec.compare's; any other keyword
    is an error naming it."""
    seeds = sorted(str(p) for p in (DEMO / "runs" / "seeds").glob("colbert-seed*.run"))
    runs = {"bm25": str(RUNS["bm25"]), "dense": str(RUNS["dense"]), "colbert": seeds}
    found = irspec.agreement(
        {k: str(v) for k, v in SETS.items()}, runs, "P@10", baselines=["bm25"], family="all"
    )
    assert found.compare.baselines == ("bm25",) and found.compare.family == "all"
    expected = {}
    for name, path in SETS.items():
        qrels = read_trec_dict(path, "qrels")
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"P_10"})
        per_run = {
            run: evaluator.evaluate(read_trec_dict(p, "run"))
            for run, p in (("bm25", RUNS["bm25"]), ("dense", RUNS["dense"]))
        }
        per_seed = [evaluator.evaluate(read_trec_dict(p, "run")) for p in seeds]
        for run, got in per_run.items():
            expected[(name, run)] = np.mean([got[q]["P_10"] for q in qrels])
        expected[(name, "colbert")] = np.mean([np.mean([s[q]["P_10"] for s in per_seed]) for q in qrels])
    got = {(s, run): v for s, run, _, v in found.means}
    assert got == pytest.approx(expected, abs=1e-12)
    (r,) = found.rankings
    order = ["bm25", "dense", "colbert"]
    assert r.kendall_tau == pytest.approx(
        scipy.stats.kendalltau(
            [expected[("human", k)] for k in order], [expected[("llm", k)] for k in order]
        ).statistic
    )
    # the comparisons were against the baseline only: dense vs colbert is not known
    assert all(c.a == "bm25" or c.b == "bm25" for c in found.significance)
    with pytest.raises(EvaluationError, match=r"unknown keyword argument 'dpeth' \(did you mean 'depth'\?\)"):
        irspec.agreement({k: str(v) for k, v in SETS.items()}, runs, "P@10", dpeth=10)
    with pytest.raises(EvaluationError, match="unknown keyword argument 'baseline_runs'"):
        irspec.agreement({k: str(v) for k, v in SETS.items()}, runs, "P@10", baseline_runs=["bm25"])


def test_undefined_label_and_ranking_statistics_say_why():
    """Every label 1 in both sets: κ, α and binary κ are undefined (no disagreement is possible by chance)
    and a note says so; every run's P@2 is the same: τ is undefined, with a note. A second pair of sets
    with labels 1 and 2 (all relevant at level 1) leaves only the binary κ undefined."""
    same = {"q1": {"d1": 1, "d2": 1}, "q2": {"d1": 1}}
    graded = {"q1": {"d1": 2, "d2": 1}, "q2": {"d1": 1}}
    runs = {
        "a": {"q1": {"d1": 2, "d2": 1}, "q2": {"d1": 1}},
        "b": {"q1": {"d2": 2, "d1": 1}, "q2": {"d1": 1}},
    }
    found = agreement_of(
        {"x": _result_set(same, runs), "y": _result_set(same, runs), "z": _result_set(graded, runs)},
        {"x": Qrels.from_dict(same), "y": Qrels.from_dict(same), "z": Qrels.from_dict(graded)},
        None,
    )
    xy, xz, _ = found.labels
    assert xy.kappa is xy.kappa_quadratic is xy.alpha_ordinal is xy.binary_kappa is None
    assert xy.agreement == 1.0 and xz.kappa is not None and xz.binary_kappa is None
    notes = "\n".join(found.notes)
    assert "labels x vs y: all 3 commonly judged pairs have label 1 in both sets" in notes
    assert (
        "labels x vs z: all 3 commonly judged pairs are relevant (label >= 1) in both sets; bin kappa is undefined"
        in notes
    )
    assert "P@2: tau and tau_AP x vs y undefined: every run has the same mean under x and y" in notes
    assert "-" in str(found) and "bin kappa is undefined" in str(found)


def test_a_huge_label_is_no_crash(tmp_path, capsys):
    """A label of 100000 beside 0..3: the label statistics over the labels seen (a matrix over every grade
    between would need 74.5 GiB); κ against scikit-learn's on the labels shifted into a small range is
    not possible (the weights are the distances), so against the definition by pairs, exactly."""
    a, b = [0, 1, 2, 3, 100000, 1], [0, 1, 3, 3, 100000, 100000]
    qa = [f"q{1 + i % 2} 0 d{i} {v}" for i, v in enumerate(a)]
    qb = [f"q{1 + i % 2} 0 d{i} {v}" for i, v in enumerate(b)]
    runs = {
        r: _write(tmp_path / f"{r}.run", [f"q{1 + d % 2} Q0 d{d} 1 {9 - d} {r}" for d in docs])
        for r, docs in (("r0", [0, 1, 4, 5]), ("r1", [2, 3, 4]))
    }
    done = irspec_cli(
        capsys,
        "eval",
        _write(tmp_path / "qa.txt", qa),
        _write(tmp_path / "qb.txt", qb),
        *runs.values(),
        "-m",
        "P@5",
        "--agreement",
        "-f",
        "json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (lab,) = json.loads(done.stdout)["agreement"]["labels"]
    observed = Fraction(sum((p - q) ** 2 for p, q in zip(a, b, strict=True)), len(a))
    chance = Fraction(sum((p - q) ** 2 for p in a for q in b), len(a) ** 2)
    assert lab["kappa_quadratic"] == pytest.approx(float(1 - observed / chance), abs=1e-12)
    assert lab["labels"] == [0, 1, 2, 3, 100000]


def test_the_confusion_matrix_of_many_distinct_labels_is_left_out_with_a_note():
    """150 distinct labels (one per document): κ and α are computed all the same (the quadratic κ here
    against scikit-learn over every grade between), but a 150 × 150 table is left out, and a note says so
    (its size would grow with the square of the judgments)."""
    from irspec.experiment.agreement import CONFUSION_LIMIT

    labels_a = {f"d{i}": i for i in range(150)}
    labels_b = {f"d{i}": (i + 1) % 150 for i in range(150)}
    qa, qb = {"q1": labels_a, "q2": {"x": 1}}, {"q1": labels_b, "q2": {"x": 1}}
    runs = {"r": {"q1": {"d1": 1.0}, "q2": {"x": 1.0}}, "s": {"q1": {"d2": 1.0}, "q2": {"x": 1.0}}}
    found = agreement_of(
        {"a": _result_set(qa, runs), "b": _result_set(qb, runs)},
        {"a": Qrels.from_dict(qa), "b": Qrels.from_dict(qb)},
        None,
    )
    (lab,) = found.labels
    assert CONFUSION_LIMIT < 150 and lab.labels == () and lab.confusion == ()
    assert "labels a vs b: 150 distinct labels; their confusion matrix is left out" in "\n".join(found.notes)
    sk = importlib.import_module("sklearn.metrics")
    a = [*labels_a.values(), 1]
    b = [*labels_b.values(), 1]
    expected = sk.cohen_kappa_score(a, b, labels=range(150), weights="quadratic")
    assert lab.kappa_quadratic == pytest.approx(expected, abs=1e-12)
    assert "Labels: a (rows) against b (columns)" not in str(found)
