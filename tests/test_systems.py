"""Tests of systems of several runs (irspec.evaluation.systems): the per-topic mean, the spread of the runs' means,
and that such a system is reported and compared as any run.

Expected values: hand arithmetic written out below (reciprocal ranks of tiny runs), numpy's mean and
sample sd over the runs' per-topic values read back through ``per_query`` (not through the code under
test), scipy's ``ttest_rel`` on those per-topic means, and statsmodels' ``multipletests`` for Holm's
correction over the family the output claims.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from cli_run import Done, irspec_cli

import irspec
from irspec.errors import EvaluationError, IrspecError
from irspec.evaluation.systems import SEED_CAVEAT, SystemResult, combine
from irspec.plan import load_plan, render_outputs, run_plan

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "specs" / "demo"
SEEDS = [str(DEMO / "runs" / "seeds" / f"colbert-seed{s}.run") for s in (1, 2, 3)]

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}
# reciprocal ranks: r1 q1 1, q2 1/2; r2 q1 1/3, q2 1; r3 q1 1/2, q2 0 (its relevant document unretrieved)
R1 = {"q1": {"d1": 3.0, "x": 2.0}, "q2": {"x": 3.0, "d2": 2.0}}
R2 = {"q1": {"x": 3.0, "y": 2.0, "d1": 1.0}, "q2": {"d2": 3.0}}
R3 = {"q1": {"x": 3.0, "d1": 2.0}, "q2": {"x": 3.0, "y": 2.0}}


def tiny() -> SystemResult:
    return combine("sys", [irspec.evaluate(QRELS, r, "RR") for r in (R1, R2, R3)])


def test_per_topic_mean_and_spread_by_hand():
    system = tiny()
    # q1: (1 + 1/3 + 1/2) / 3 = 11/18; q2: (1/2 + 1 + 0) / 3 = 1/2
    assert system.per_query() == {"q1": {"RR": pytest.approx(11 / 18)}, "q2": {"RR": pytest.approx(1 / 2)}}
    # the mean over topics: (11/18 + 9/18) / 2 = 5/9
    assert system.aggregate()["RR"] == pytest.approx(5 / 9, rel=1e-15)
    # the runs' means 3/4, 2/3, 1/4 (mean 5/9): deviations 7/36, 4/36, -11/36; sum of squares 186/1296;
    # sample variance 93/1296; sd sqrt(93)/36
    spread = system.spread()["RR"]
    assert spread.runs == 3 and spread.low == 0.25 and spread.high == 0.75
    assert spread.mean == pytest.approx(5 / 9, rel=1e-15)
    assert spread.sd == pytest.approx(math.sqrt(93) / 36, rel=1e-12)
    assert system.averaged == f"sys: mean of 3 runs per topic (run, run, run); {SEED_CAVEAT}"


def test_one_run_has_no_sd():
    one = combine("one", [irspec.evaluate(QRELS, R1, "RR")])
    assert one.spread()["RR"].sd is None and one.aggregate()["RR"] == 0.75


def test_a_system_behaves_as_a_result():
    system = tiny()
    assert isinstance(system, irspec.Result)
    frame = system.to_frame(wide=True)
    assert frame["RR"].to_list() == pytest.approx([11 / 18, 1 / 2])
    assert (
        "sys: sd of 3 runs" in system._repr_markdown_() and "mean of 3 runs per topic" in system._repr_html_()
    )
    assert [r.aggregate()["RR"] for r in system.runs] == [0.75, pytest.approx(2 / 3), 0.25]


def test_missing_topic_under_skip_is_left_out_with_a_warning():
    runs = [irspec.evaluate(QRELS, r, "RR", missing_queries="skip") for r in (R1, {"q1": {"d1": 1.0}})]
    system = combine("sys", runs)
    assert system.query_ids == ("q1",) and system.aggregate()["RR"] == 1.0
    assert any(
        "1 topics not answered by every one of its 2 runs are left out (q2; missing_queries: skip)" in w
        for w in system.warnings
    )
    # under zero, the run that lacks q2 scores 0 there: q2 = (1/2 + 0) / 2
    zero = combine("sys", [irspec.evaluate(QRELS, r, "RR") for r in (R1, {"q1": {"d1": 1.0}})])
    assert zero.per_query()["q2"]["RR"] == pytest.approx(0.25)


def test_under_skip_the_spread_is_of_the_runs_means_over_the_systems_topics():
    """Under skip, R1 answers q1 and q2, the other run q1 alone: the system is q1, (1 + 1/3) / 2 = 2/3. The
    spread was each run's mean over its own topics, R1's (1 + 1/2) / 2 = 3/4, so the system's mean was not
    the mean of the runs' means shown beneath it. Over the system's topic: R1 1, the other 1/3."""
    other = {"q1": {"x": 3.0, "y": 2.0, "d1": 1.0}}
    runs = [irspec.evaluate(QRELS, r, "RR", missing_queries="skip") for r in (R1, other)]
    system = combine("sys", runs)
    assert system.aggregate()["RR"] == pytest.approx(2 / 3, rel=1e-15)
    spread = system.spread()["RR"]
    assert (spread.low, spread.high) == (pytest.approx(1 / 3), 1.0)
    assert spread.mean == pytest.approx(system.aggregate()["RR"], rel=1e-15)
    # the sample sd of 1 and 1/3: |1 - 1/3| / sqrt(2)
    assert spread.sd == pytest.approx((2 / 3) / math.sqrt(2), rel=1e-12)
    assert [r["aggregate"]["RR"] for r in system.as_dict()["runs"]] == [1.0, pytest.approx(1 / 3)]
    assert runs[0].aggregate()["RR"] == 0.75  # the run itself keeps its own mean over its own topics


def test_one_file_twice_in_a_system_is_a_warning(tmp_path, capsys):
    """The same run file twice in a system (by one path or two) is allowed, as a run given twice to
    irspec eval is, but said: that run weighs twice in the mean per topic and the spread counts it twice
    (here an sd of 0 for two "runs" that are one)."""
    seed = DEMO / "runs" / "seeds" / "colbert-seed1.run"
    twice = f"system colbert: {seed} is given twice (2 of its 2 runs)"
    with pytest.warns(irspec.IrspecWarning, match=re.escape(twice)):
        found = irspec.evaluate(str(DEMO / "qrels.txt"), {"colbert": [str(seed), str(seed)]}, "AP")
    assert any(w.startswith(twice) for w in found["colbert"].warnings)
    assert found["colbert"].spread()["AP"].sd == 0.0
    shutil.copy(seed, tmp_path / "copy.run")  # the same content in another file is two runs: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", irspec.IrspecWarning)
        other = irspec.evaluate(
            str(DEMO / "qrels.txt"), {"colbert": [str(seed), str(tmp_path / "copy.run")]}, "AP"
        )
    assert not other["colbert"].warnings
    done = _cli(
        capsys,
        "eval",
        "specs/demo/qrels.txt",
        "specs/demo/runs/bm25.run",
        "--system",
        "colbert=specs/demo/runs/seeds/colbert-seed1.run,./specs/demo/runs/seeds/colbert-seed1.run,"
        "specs/demo/runs/seeds/colbert-seed2.run",
        "-m",
        "AP",
    )
    assert done.returncode == 0, done.stderr
    assert (
        "irspec: warning: system colbert: specs/demo/runs/seeds/colbert-seed1.run is given twice (2 of its 3 "
        "runs): that run weighs twice in the mean per topic, and the spread counts it as 2 runs\n"
    ) in done.stderr


def test_runs_on_other_metrics_cannot_be_combined():
    with pytest.raises(EvaluationError, match="evaluated on other metrics"):
        combine("sys", [irspec.evaluate(QRELS, R1, "RR"), irspec.evaluate(QRELS, R2, "AP")])
    with pytest.raises(EvaluationError, match="has no runs"):
        combine("sys", [])


@pytest.fixture(scope="module")
def demo():
    """bm25, dense and the colbert system (three seeds, given as a glob) evaluated together."""
    many = irspec.evaluate(
        str(DEMO / "qrels.txt"),
        {
            "bm25": str(DEMO / "runs" / "bm25.run"),
            "dense": str(DEMO / "runs" / "dense.run"),
            "colbert": str(DEMO / "runs" / "seeds" / "colbert-seed*.run"),
        },
        "AP, nDCG@10",
    )
    return many


def test_demo_system_means_match_numpy_over_the_seeds(demo):
    colbert = demo["colbert"]
    assert isinstance(colbert, SystemResult) and [r.run_name for r in colbert.runs] == [
        "colbert-seed1",
        "colbert-seed2",
        "colbert-seed3",
    ]
    seeds = [irspec.evaluate(str(DEMO / "qrels.txt"), path, "AP, nDCG@10").per_query() for path in SEEDS]
    for metric in ("AP", "nDCG@10"):
        per_seed = np.array([[s[q][metric] for q in sorted(s)] for s in seeds])
        mine = colbert.per_query()
        assert [mine[q][metric] for q in sorted(mine)] == pytest.approx(
            per_seed.mean(axis=0).tolist(), rel=1e-12
        )
        means = per_seed.mean(axis=1)
        spread = colbert.spread()[metric]
        assert spread.sd == pytest.approx(float(np.std(means, ddof=1)), rel=1e-9)
        assert (spread.low, spread.high) == pytest.approx((means.min(), means.max()), rel=1e-12)


def test_demo_system_compared_with_two_baselines_against_scipy_and_statsmodels(demo):
    """The comparisons of the system run over topics on its per-topic means: ttest_rel on numpy's means
    of the seeds' values; Holm over the three comparisons of each metric, as the legend says."""
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    found = irspec.compare(demo, baselines=["bm25", "dense"])
    assert [(c.a, c.b) for c in found if c.metric == "AP"] == [
        ("dense", "bm25"),
        ("colbert", "bm25"),
        ("colbert", "dense"),
    ]
    seeds = [irspec.evaluate(str(DEMO / "qrels.txt"), path, "AP, nDCG@10").per_query() for path in SEEDS]
    for metric in ("AP", "nDCG@10"):
        values = {
            name: np.array([row[metric] for _, row in sorted(demo[name].per_query().items())])
            for name in ("bm25", "dense")
        }
        values["colbert"] = np.array([[s[q][metric] for q in sorted(s)] for s in seeds]).mean(axis=0)
        mine = [c for c in found if c.metric == metric]
        p = [ttest_rel(values[c.a], values[c.b]).pvalue for c in mine]
        assert [c.p_value for c in mine] == pytest.approx(p, rel=1e-8)
        assert [c.p_adjusted for c in mine] == pytest.approx(
            list(multipletests(p, method="holm")[1]), rel=1e-8
        )
    assert "Holm correction over the 3 comparisons of each metric, across the 2 baselines" in str(
        found.show(intervals=None)
    )


def test_every_format_says_what_was_averaged(demo):
    results = list(demo.results)
    found = irspec.compare(demo, baselines=["bm25", "dense"])
    said = "colbert: mean of 3 runs per topic (colbert-seed1, colbert-seed2, colbert-seed3)"
    kinds = {
        "text": irspec.report.marked_table(results, found, found.settings),
        "markdown": irspec.report.to_markdown(results, comparisons=found, compare=found.settings),
        "latex": irspec.report.to_latex(results, comparisons=found, compare=found.settings),
        "html": irspec.report.to_html(results, comparisons=found, compare=found.settings),
        "comparisons": irspec.report.comparisons_table(results, found, found.settings),
        "latex comparisons": irspec.report.to_latex(
            results, comparisons=found, compare=found.settings, content="comparisons"
        ),
    }
    for kind, text in kinds.items():
        assert said in text, kind
        assert "treats the seed as noise" in text, kind
    for kind in ("text", "markdown", "latex", "html"):
        assert "colbert: sd of 3 runs" in kinds[kind] and "colbert: min/max of 3 runs" in kinds[kind], kind
    doc = json.loads(irspec.report.to_json(results))
    system = doc["runs"][2]["system"]
    assert [r["name"] for r in system["runs"]] == ["colbert-seed1", "colbert-seed2", "colbert-seed3"]
    assert system["spread"]["AP"]["runs"] == 3 and system["averaged"].startswith(said)
    assert "system" not in doc["runs"][0]


def _plan(tmp_path: Path, systems: str, compare: str = "{baselines: [bm25, dense], test: t}") -> Path:
    shutil.copytree(DEMO, tmp_path / "demo", dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.py"))
    text = (
        "qrels: demo/qrels.txt\nruns:\n  - {name: bm25, path: demo/runs/bm25.run}\n  - {name: dense, path: demo/runs/dense.run}\n"
        f"systems: {systems}\nmetrics: [AP, P@10]\ncompare: {compare}\n"
        "output: [{format: json, path: out/results.json}, {format: html, path: out/report.html}]\n"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_plan_with_a_system_and_two_baselines_end_to_end(tmp_path):
    report = run_plan(
        load_plan(_plan(tmp_path, "[{name: colbert, runs: demo/runs/seeds/colbert-seed*.run}]"))
    )
    outputs = {o.format: text for o, text in render_outputs(report)}
    doc = json.loads(outputs["json"])
    assert [r["name"] for r in doc["runs"]] == ["bm25", "dense", "colbert"]
    assert doc["compare"]["baselines"] == ["bm25", "dense"] and doc["compare"]["family"] == "per-metric"
    keys = [(c["metric"], frozenset((c["a"], c["b"]))) for c in doc["comparisons"]]
    assert len(keys) == len(set(keys)) == 6  # 3 pairs (dense-bm25, colbert-bm25, colbert-dense) x 2 metrics
    assert {c["family_size"] for c in doc["comparisons"]} == {3}
    assert len(doc["runs"][2]["system"]["runs"]) == 3
    roles = [(i["role"], i["name"]) for i in doc["provenance"]["inputs"]]
    assert ("run", "colbert: colbert-seed2") in roles
    assert "mean of 3 runs per topic" in outputs["html"] and "across the 2 baselines" in outputs["html"]
    assert "2 runs, 1 system, 2 metrics" in outputs["html"]  # the header counts the system as one
    # a list of paths is the same system
    listed = "[{name: colbert, runs: [demo/runs/seeds/colbert-seed1.run, demo/runs/seeds/colbert-seed2.run, demo/runs/seeds/colbert-seed3.run]}]"
    again = run_plan(load_plan(_plan(tmp_path, listed)))
    assert again.results[2].aggregate() == report.results[2].aggregate()


@pytest.mark.parametrize(
    ("systems", "message"),
    [
        (
            "[{name: colbert, runs: demo/runs/nope*.run}]",
            "systems[0].runs[0]: glob 'demo/runs/nope*.run' matches no file",
        ),
        (
            "[{name: bm25, runs: demo/runs/seeds/colbert-seed*.run}]",
            "systems[0].name: duplicate name 'bm25'; runs[0] already uses it",
        ),
        ("[{name: colbert}]", "systems[0]"),
    ],
)
def test_bad_plan_systems(tmp_path, systems, message):
    with pytest.raises(IrspecError) as e:
        load_plan(_plan(tmp_path, systems))
    assert message in str(e.value)


def test_baseline_may_be_a_system(tmp_path):
    path = _plan(
        tmp_path, "[{name: colbert, runs: demo/runs/seeds/colbert-seed*.run}]", "{baseline: colbert}"
    )
    report = run_plan(load_plan(path))
    assert {c.b for c in report.comparisons} == {"colbert"}


def _cli(capsys, *args: str) -> Done:
    return irspec_cli(capsys, *args, cwd=ROOT)


def test_cli_system_flag(capsys):
    done = _cli(
        capsys,
        "eval",
        "specs/demo/qrels.txt",
        "specs/demo/runs/bm25.run",
        "--system",
        "colbert=specs/demo/runs/seeds/colbert-seed*.run",
        "-m",
        "AP",
        "-f",
        "json",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [r["name"] for r in doc["runs"]] == ["bm25", "colbert"] and len(
        doc["runs"][1]["system"]["runs"]
    ) == 3
    # the provenance names a system's runs as a plan's does (irspec eval runs as a plan)
    roles = [(i["role"], i["name"]) for i in doc["provenance"]["inputs"]]
    assert roles == [("qrels", None), ("run", "bm25")] + [
        ("run", f"colbert: colbert-seed{i}") for i in (1, 2, 3)
    ]
    bad = _cli(
        capsys, "eval", "specs/demo/qrels.txt", "specs/demo/runs/bm25.run", "--system", "colbert", "-m", "AP"
    )
    assert (
        bad.returncode == 2
        and bad.stderr.startswith("irspec: error: --system 'colbert': expected NAME=PATH")
        and bad.stdout == ""
    )
    none = _cli(
        capsys,
        "eval",
        "specs/demo/qrels.txt",
        "specs/demo/runs/bm25.run",
        "--system",
        "c=specs/demo/runs/x*.run",
        "-m",
        "AP",
    )
    assert (
        none.returncode == 2
        and none.stderr == "irspec: error: system 'c': 'specs/demo/runs/x*.run' matches no file\n"
    )


def test_demo_seed_runs_are_deterministic(tmp_path):
    """make_demo.py writes the same eight files again (the qrels, four runs, three seeds), byte for byte."""
    sys.path.insert(0, str(DEMO))
    try:
        from make_demo import make_demo
    finally:
        sys.path.remove(str(DEMO))
    make_demo(tmp_path)
    for path in [*sorted((DEMO / "runs").rglob("*.run")), DEMO / "qrels.txt"]:
        again = tmp_path / path.relative_to(DEMO)
        assert again.read_bytes() == path.read_bytes(), path.name


def _systems_only(tmp_path: Path, text: str) -> Path:
    shutil.copytree(DEMO, tmp_path / "demo", dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.py"))
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


SYSTEMS_ONLY = """\
qrels: demo/qrels.txt
systems:
  - {name: colbert, runs: demo/runs/seeds/colbert-seed*.run}
  - {name: lexical, runs: [demo/runs/bm25.run, demo/runs/dense.run]}
metrics: [AP]
compare: {test: t, correction: none}
"""


def test_a_plan_of_systems_alone(tmp_path):
    """A study of seeded systems needs no ``runs:``: the systems are evaluated, averaged and compared
    as in a plan with runs (scipy's ttest_rel on numpy's per-topic means of pytrec_eval's AP)."""
    import pytrec_eval
    from scipy.stats import ttest_rel
    from trecdicts import read_trec_dict

    report = run_plan(load_plan(_systems_only(tmp_path, SYSTEMS_ONLY)))
    assert [r.run_name for r in report.results] == ["colbert", "lexical"]
    qrels = read_trec_dict(DEMO / "qrels.txt", "qrels")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map"})

    def per_topic(paths: list[str]) -> np.ndarray:
        values = [evaluator.evaluate(read_trec_dict(Path(p), "run")) for p in paths]
        return np.array([[v[q]["map"] for q in sorted(qrels)] for v in values]).mean(axis=0)

    colbert, lexical = (
        per_topic(SEEDS),
        per_topic([str(DEMO / "runs" / f"{r}.run") for r in ("bm25", "dense")]),
    )
    assert report.results[0].aggregate()["AP"] == pytest.approx(colbert.mean(), rel=1e-12)
    assert report.results[1].aggregate()["AP"] == pytest.approx(lexical.mean(), rel=1e-12)
    (found,) = report.comparisons
    assert found.p_value == pytest.approx(ttest_rel(lexical, colbert).pvalue, rel=1e-8)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # neither runs nor systems: the runs are what is missing, as before
        ("qrels: demo/qrels.txt\nmetrics: [AP]\n", "missing required key 'runs'"),
        # systems need qrels as runs do
        (
            "systems: [{name: c, runs: demo/runs/seeds/colbert-seed*.run}]\nmetrics: [AP]\n",
            "missing required key 'qrels'",
        ),
        # one system alone cannot be compared
        (
            "qrels: demo/qrels.txt\nsystems: [{name: c, runs: demo/runs/seeds/colbert-seed*.run}]\nmetrics: [AP]\ncompare: {test: t}\n",
            "comparing needs at least 2 runs; the plan has 1",
        ),
    ],
)
def test_plans_of_systems_that_lack_something(tmp_path, text, message):
    with pytest.raises(IrspecError) as e:
        load_plan(_systems_only(tmp_path, text))
    assert message in str(e.value)


def test_several_sets_of_judgments_over_systems_alone(tmp_path):
    """Two systems are two rankings to agree on, with no ``runs:`` at all."""
    text = SYSTEMS_ONLY.replace(
        "qrels: demo/qrels.txt", "qrels: {human: demo/qrels.txt, llm: demo/qrels.llm.txt}"
    )
    report = run_plan(load_plan(_systems_only(tmp_path, text)))
    assert [name for name, _ in report.by_qrels] == ["human", "llm"]
    assert [r.run_name for r in report.by_qrels[1][1].results] == ["colbert", "lexical"]
    assert report.agreement is not None and report.agreement.sets == ("human", "llm")


def test_a_standardised_system_is_reported_without_its_runs_spread(tmp_path):
    # standardize: true with a system ended in a KeyError: the system's z-scores come from its means per
    # topic, its runs keep their own values (a run's z-score may be undefined where the reference runs
    # agree), so there is no spread of the runs for the z-scores, and every report is made
    plan = _plan(tmp_path, "[{name: colbert, runs: demo/runs/seeds/colbert-seed*.run}]")
    plan.write_text(plan.read_text().replace("compare:", "standardize: true\ncompare:"), encoding="utf-8")
    report = run_plan(load_plan(plan))
    system = report.results[2]
    assert [str(m) for m in system.metrics] == ["z(AP)", "z(P@10)"] and system.spread() == {}
    outputs = {o.format: text for o, text in render_outputs(report)}
    doc = json.loads(outputs["json"])["runs"][2]["system"]
    assert [r["name"] for r in doc["runs"]] == ["colbert-seed1", "colbert-seed2", "colbert-seed3"]
    assert doc["spread"] == {} and "mean of 3 runs per topic" in outputs["html"]
