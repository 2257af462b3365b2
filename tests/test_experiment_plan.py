"""The documentation's whole experiment (docs/how-to/baselines-and-seeds.md), ``specs/experiment.yaml``, end
to end: two baselines, a system of three seeds, two sets of judgments and the power of each comparison, on
the demo data. Every number checked here is recomputed from an independent source: pytrec_eval's per-query
nDCG@10 (trec_eval's ndcg_cut_10), scipy's Kendall tau-b, scikit-learn's Cohen's kappa and statsmodels'
TTestPower."""

from __future__ import annotations

import glob
from pathlib import Path
from statistics import mean, stdev

import pytest
import pytrec_eval
import scipy.stats
from trecdicts import read_trec_dict

from irspec.plan import load_plan, run_plan

SPECS = Path(__file__).resolve().parent.parent / "specs"
DEMO = SPECS / "demo"


def _ndcg10(qrels: dict, run_path: Path) -> dict[str, float]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    return {q: v["ndcg_cut_10"] for q, v in evaluator.evaluate(read_trec_dict(run_path, "run")).items()}


@pytest.fixture(scope="module")
def report():
    return run_plan(load_plan(SPECS / "experiment.yaml"))


@pytest.fixture(scope="module")
def reference():
    """Per set of judgments, each system's per-topic nDCG@10: a run's from pytrec_eval, the colbert
    system's the mean of its three seeds' per topic."""
    seeds = sorted(glob.glob(str(DEMO / "runs" / "seeds" / "colbert-seed*.run")))
    assert len(seeds) == 3
    out = {}
    for name, path in (("human", DEMO / "qrels.txt"), ("llm", DEMO / "qrels.llm.txt")):
        qrels = read_trec_dict(path, "qrels")
        systems = {r: _ndcg10(qrels, DEMO / "runs" / f"{r}.run") for r in ("bm25", "dense", "hybrid")}
        per_seed = [_ndcg10(qrels, Path(s)) for s in seeds]
        systems["colbert"] = {q: mean(s[q] for s in per_seed) for q in per_seed[0]}
        out[name] = (systems, per_seed)
    return out


def test_each_set_evaluates_the_runs_and_the_system_of_seeds(report, reference):
    assert [name for name, _ in report.by_qrels] == ["human", "llm"]
    for name, sub in report.by_qrels:
        systems, per_seed = reference[name]
        got = {res.run_name: res for res in sub.results}
        assert list(got) == ["bm25", "dense", "hybrid", "colbert"]
        for system, values in systems.items():
            per_query = got[system].per_query()
            assert all(per_query[q]["nDCG@10"] == pytest.approx(v, abs=1e-12) for q, v in values.items())
        spread = got["colbert"].spread()["nDCG@10"]
        seed_means = [mean(s.values()) for s in per_seed]
        assert spread.sd == pytest.approx(stdev(seed_means), abs=1e-12)
        # two baselines, each pair once: bm25 and dense against the two others, and dense against bm25
        pairs = {frozenset((c.a, c.b)) for c in sub.comparisons if c.metric == "nDCG@10"}
        assert len(pairs) == 5


def test_the_agreement_of_the_two_sets(report, reference):
    order = ["bm25", "dense", "hybrid", "colbert"]
    human = [mean(reference["human"][0][s].values()) for s in order]
    llm = [mean(reference["llm"][0][s].values()) for s in order]
    ranking = next(r for r in report.agreement.rankings if r.metric == "nDCG@10")
    assert ranking.kendall_tau == pytest.approx(scipy.stats.kendalltau(human, llm).statistic, abs=1e-12)
    swapped = {(s.run_1, s.run_2) for s in report.agreement.swaps if s.metric == "nDCG@10"}
    assert swapped == {
        (a, b)
        for i, a in enumerate(order)
        for b in order[i + 1 :]
        if (human[i] - human[order.index(b)]) * (llm[i] - llm[order.index(b)]) < 0
    }
    h, m = read_trec_dict(DEMO / "qrels.txt", "qrels"), read_trec_dict(DEMO / "qrels.llm.txt", "qrels")
    common = [(q, d) for q in h for d in h[q] if d in m.get(q, {})]
    labels = report.agreement.labels[0]
    assert labels.common == len(common)
    x, y = [h[q][d] for q, d in common], [m[q][d] for q, d in common]
    from sklearn.metrics import cohen_kappa_score  # here, not at collection: ~0.4 s a worker (issue 35)

    assert labels.kappa == pytest.approx(cohen_kappa_score(x, y), abs=1e-12)


def test_the_power_of_each_comparison(report, reference):
    systems, _ = reference["human"]
    found = next(
        p for p in report.by_qrels[0][1].power.pairs if (p.metric, p.a, p.b) == ("nDCG@10", "dense", "bm25")
    )
    d = [systems["dense"][q] - systems["bm25"][q] for q in systems["bm25"]]
    assert found.sd_difference == pytest.approx(
        stdev(d), rel=1e-9
    )  # pytrec_eval rounds its nDCG otherwise in the last bits
    from statsmodels.stats.power import TTestPower  # here, not at collection (issue 35)

    power = TTestPower().power(effect_size=0.05 / stdev(d), nobs=len(d), alpha=0.05, alternative="two-sided")
    assert found.achieved_power == pytest.approx(power, abs=1e-9)


def _power_dense_bm25(reference, name: str) -> float:
    """statsmodels' power of the paired t-test of dense against bm25 on nDCG@10 under one set (delta 0.05)."""
    from statsmodels.stats.power import TTestPower  # here, not at collection (issue 35)

    systems, _ = reference[name]
    d = [systems["dense"][q] - systems["bm25"][q] for q in systems["bm25"]]
    return TTestPower().power(effect_size=0.05 / stdev(d), nobs=len(d), alpha=0.05, alternative="two-sided")


# where each format starts a set's part, the agreement, and a power table
SET_HEADING = {"table": "== qrels: {} ==\n", "markdown": "## qrels: {}\n", "latex": "% qrels: {}\n"}
AGREEMENT = {"table": "== agreement ==\n", "markdown": "## Agreement between the sets of judgments\n",
             "latex": "% agreement between the sets of judgments\n"}  # fmt: skip
POWER_TABLE = {"table": "Power of the paired t-tests\n", "markdown": "**Power of the paired t-tests**",
               "latex": "% irspec Power of the paired t-tests table"}  # fmt: skip
ANOVA_TABLE = {"table": "Power of the one-way ANOVA over all runs\n", "markdown": "**Power of the one-way ANOVA over all runs**",
               "latex": "% irspec Power of the one-way ANOVA over all runs table"}  # fmt: skip


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_each_set_has_its_own_power_tables_once(report, reference, fmt):
    """Two sets of judgments: two power tables of each kind, each in its set's part, none after the
    agreement; the table's power of dense against bm25 is that set's (statsmodels)."""
    from irspec.plan import render_outputs

    (text,) = [t for o, t in render_outputs(report) if o.format == fmt]
    assert text.count(POWER_TABLE[fmt]) == 2 and text.count(ANOVA_TABLE[fmt]) == 2
    human, llm, agreement = (text.index(SET_HEADING[fmt].format("human")), text.index(SET_HEADING[fmt].format("llm")),
                             text.index(AGREEMENT[fmt]))  # fmt: skip
    parts = {"human": text[human:llm], "llm": text[llm:agreement]}
    assert all(part.count(POWER_TABLE[fmt]) == 1 for part in parts.values())
    if fmt == "table":
        for name, part in parts.items():
            row = next(line for line in part.splitlines() if line.split()[:3] == ["nDCG@10", "dense", "bm25"])
            assert row.split()[6] == f"{_power_dense_bm25(reference, name):.3f}"


def test_the_page_says_up_front_which_judgments_it_shows(report):
    from irspec.plan import render_outputs

    (page,) = [t for o, t in render_outputs(report) if o.format == "html"]
    before_tables = page[: page.index('<h2 id="results')]
    assert "human" in before_tables and "llm" in before_tables


def test_the_page_has_each_sets_power_tables_once(report):
    from irspec.plan import render_outputs

    (page,) = [t for o, t in render_outputs(report) if o.format == "html"]
    assert page.count("<h3>Power of the paired t-tests</h3>") == 2
    human, llm, agreement = (page.index(f'<h2 id="{i}">') for i in ("power-human", "power-llm", "agreement"))
    assert human < page.index("<h3>Power of the paired t-tests</h3>", human) < llm
    assert llm < page.index("<h3>Power of the paired t-tests</h3>", llm) < agreement
