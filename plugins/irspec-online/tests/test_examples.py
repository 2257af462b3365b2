"""Each command of issue 37's sketch, run as a user runs it (``python -m irspec`` in a fresh process, the
plugin found through its entry point) on the example logs that ship with the plugin (``examples/``), its
output checked against arithmetic on the log and the run files written here; and the shipped logs are
exactly what ``examples/make_examples.py`` makes."""

from __future__ import annotations

import gzip
import json
import math
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("irspec_online")

import numpy as np
from scipy.stats import binomtest

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
DEMO = HERE.parents[2] / "specs" / "demo"
BM25, DENSE = str(DEMO / "runs" / "bm25.run"), str(DEMO / "runs" / "dense.run")


USER = {k: v for k, v in os.environ.items() if k != "IRSPEC_DISABLE_PLUGIN_AUTOLOAD"}
"""A user's environment: plugins load (irspec's own tests switch that off in this process)."""


def irspec(*argv: str, cwd: Path) -> str:
    """``irspec ARGV`` in a fresh process in ``cwd``: its standard output (a failure shows its error)."""
    done = subprocess.run([sys.executable, "-m", "irspec", *argv], cwd=cwd, env=USER, capture_output=True, check=False,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def records(name: str) -> list[dict]:
    with gzip.open(EXAMPLES / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def ranking(path: str) -> dict[str, list[str]]:
    """A run file's documents per query, best first (by score, then document id descending: trec_eval's)."""
    rows = defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            q, _, d, _, score, _ = line.split()
            rows[q].append((float(score), d))
    return {q: [d for _, d in sorted(docs, reverse=True)] for q, docs in rows.items()}


def table(report: dict, title: str) -> list[dict]:
    (found,) = [t for t in report["tables"] if t["title"].endswith(title)]
    return [dict(zip(found["columns"], row, strict=True)) for row in found["rows"]]


def test_interleave_two_runs_team_draft(tmp_path):
    """``irspec interleave bm25.run dense.run --method team-draft --seed 1 -o serve.jsonl``: a list per
    query, each slot's origin the rank of its document in each run (depth + 1 where a run's top lacks it),
    each slot the best document its team had left, the teams' sizes never more than 1 apart; the same
    seed the same bytes, another seed other lists."""
    irspec(
        "interleave", BM25, DENSE, "--method", "team-draft", "--seed", "1", "-o", "serve.jsonl", cwd=tmp_path
    )
    served = [json.loads(line) for line in (tmp_path / "serve.jsonl").read_text().splitlines()]
    a, b = ranking(BM25), ranking(DENSE)
    assert sorted(s["qid"] for s in served) == sorted(set(a) & set(b))
    for s in served:
        top_a, top_b = a[s["qid"]][:10], b[s["qid"]][:10]
        assert len(set(s["results"])) == len(s["results"]) == 10 and set(s["results"]) <= set(top_a) | set(
            top_b
        )
        count = {"a": 0, "b": 0}
        for slot, (doc, origin) in enumerate(zip(s["results"], s["origins"], strict=True)):
            assert origin["rank_a"] == (top_a.index(doc) + 1 if doc in top_a else 11)
            assert origin["rank_b"] == (top_b.index(doc) + 1 if doc in top_b else 11)
            own = top_a if origin["team"] == "a" else top_b
            assert doc == next(d for d in own if d not in s["results"][:slot])  # its team's best left
            count[origin["team"]] += 1
            assert abs(count["a"] - count["b"]) <= 1
    again = irspec("interleave", BM25, DENSE, "--method", "team-draft", "--seed", "1", cwd=tmp_path)
    assert again == (tmp_path / "serve.jsonl").read_text()
    assert irspec("interleave", BM25, DENSE, "--method", "team-draft", "--seed", "2", cwd=tmp_path) != again


def test_online_interleaving_of_the_example_log(tmp_path):
    """``irspec online interleaved.jsonl.gz -m "interleaving(team-draft)"``: the wins, ties, preference and
    sign test equal team-draft's credit counted here from each record's clicks and origins."""
    report = json.loads(irspec("online", str(EXAMPLES / "interleaved.jsonl.gz"), "-m", "interleaving(team-draft)",
                               "-f", "json", cwd=tmp_path))  # fmt: skip
    outcomes, per_query = [], defaultdict(list)
    for rec in records("interleaved.jsonl.gz"):
        teams = [rec["origins"][rec["results"].index(c["doc"])]["team"] for c in rec["clicks"]]
        if teams:
            outcome = int(np.sign(teams.count("b") - teams.count("a")))
            outcomes.append(outcome)
            per_query[rec["query"]].append(outcome)
    (row,) = table(report, "Interleaving: b against a")
    assert (row["impressions"], row["clicked"]) == (2000, len(outcomes))
    assert (row["b wins"], row["a wins"], row["ties"]) == (
        outcomes.count(1),
        outcomes.count(-1),
        outcomes.count(0),
    )
    assert row["preference"] == pytest.approx(np.mean(outcomes), abs=1e-15)
    assert report["means"]["Interleaving"] == pytest.approx(np.mean(outcomes), abs=1e-15)
    q_b = sum(np.mean(v) > 0 for v in per_query.values())
    q_a = sum(np.mean(v) < 0 for v in per_query.values())
    assert (row["queries b"], row["queries a"]) == (q_b, q_a)
    assert row["p (sign)"] == pytest.approx(binomtest(q_b, q_a + q_b, 0.5).pvalue, rel=1e-12)
    assert row["95% CI low"] < row["preference"] < row["95% CI high"]


def test_clickmodel_fit_of_the_example_log(tmp_path):
    """``irspec clickmodel fit logged.jsonl.gz --model dbn -o dbn.json``: a DBN's parameters for every
    query-document pair the log shows, probabilities all, and its held-out fit when asked."""
    said = irspec("clickmodel", "fit", str(EXAMPLES / "logged.jsonl.gz"), "--model", "dbn", "-o", "dbn.json",
                  cwd=tmp_path)  # fmt: skip
    fitted = json.loads((tmp_path / "dbn.json").read_text())
    assert fitted["model"] == "DBN" and said == ""
    shown = {(r["query"], d) for r in records("logged.jsonl.gz") for d in r["results"][:10]}
    for name in ("attr", "sat"):
        got = {(q, d): v for q, docs in fitted["params"][name].items() for d, v in docs.items()}
        assert got.keys() == shown and all(0 < v < 1 for v in got.values())
    assert 0 < fitted["params"]["cont"] < 1
    irspec("clickmodel", "fit", str(EXAMPLES / "logged.jsonl.gz"), "--model", "dbn", "--holdout", "0.25",
           "-o", "held.json", cwd=tmp_path)  # fmt: skip
    evaluation = json.loads((tmp_path / "held.json").read_text())["evaluation"]
    assert evaluation["log_likelihood"] < 0 and evaluation["perplexity"] > 1


def test_online_counterfactual_of_the_example_logs(tmp_path):
    """``irspec online logged.jsonl.gz --counterfactual dense.run -m "IPS(ctr)@10" --propensity pbm.json``
    (a PBM fitted to the swap experiment's log): each click at rank r of a document dense ranks r' <= 10
    counts exam[r'] / exam[r], the mean over query issues and its standard error computed here; and SNIPS
    from the randomised logger's log, whose records carry their propensities."""
    irspec(
        "clickmodel", "fit", str(EXAMPLES / "swap.jsonl.gz"), "--model", "pbm", "-o", "pbm.json", cwd=tmp_path
    )
    exam = json.loads((tmp_path / "pbm.json").read_text())["params"]["exam"]
    report = json.loads(irspec("online", str(EXAMPLES / "logged.jsonl.gz"), "--counterfactual", DENSE, "-m",
                               "IPS(ctr)@10, IPS(rr)@10", "--propensity", "pbm.json", "-f", "json", cwd=tmp_path))  # fmt: skip
    new = {q: docs[:10] for q, docs in ranking(DENSE).items()}
    ctr, rr = [], []
    for rec in records("logged.jsonl.gz"):
        top = new[rec["qid"]]
        clicks = [(rec["results"].index(c["doc"]) + 1, top.index(c["doc"]) + 1) for c in rec["clicks"]
                  if c["doc"] in top]  # fmt: skip
        ctr.append(sum(exam[n - 1] / exam[r - 1] for r, n in clicks))
        rr.append(sum(exam[n - 1] / exam[r - 1] / n for r, n in clicks))
    rows = {row["metric"]: row for row in table(report, "Counterfactual: dense")}
    for metric, values in (("IPS@10", ctr), ("IPS(measure=rr)@10", rr)):
        row = rows[metric]
        assert row["estimate"] == pytest.approx(np.mean(values), rel=1e-12)
        assert row["SE"] == pytest.approx(np.std(values, ddof=1) / math.sqrt(len(values)), rel=1e-9)
        assert row["query issues"] == 2000
    # the randomised logger: a click counts 1/p where dense puts its document in its slot
    report = json.loads(irspec("online", str(EXAMPLES / "shuffled.jsonl.gz"), "--counterfactual", DENSE, "-m",
                               "IPS(ctr)@10, SNIPS(ctr)@10", "-f", "json", cwd=tmp_path))  # fmt: skip
    ips = []
    for rec in records("shuffled.jsonl.gz"):
        top = new[rec["qid"]]
        slots = [rec["results"].index(c["doc"]) for c in rec["clicks"]]
        ips.append(
            sum(1 / rec["propensities"][s] for s in slots if s < len(top) and top[s] == rec["results"][s])
        )
    rows = {row["metric"]: row for row in table(report, "Counterfactual: dense")}
    assert rows["IPS@10"]["estimate"] == pytest.approx(np.mean(ips), rel=1e-12)
    snips = rows["SNIPS@10"]
    assert snips["95% CI low"] < snips["estimate"] < snips["95% CI high"] and snips["support"] < 1


def test_the_issues_counterfactual_line_on_parquet_logs(tmp_path):
    """Issue 37's line as written, ``irspec online logs/*.parquet --counterfactual new.run -m "ips(ctr@10),
    snips(ctr@10)" --propensity pbm.json``, on the randomised logger's example log written to two Parquet
    files: the same estimates as the canonical spelling of the JSON Lines log, IPS's computed here (a click
    counts 1/p where the new ranking puts its document in its slot)."""
    pl = pytest.importorskip("polars", reason="deliberate: the Parquet logs are written with polars")
    rows = records("shuffled.jsonl.gz")
    (tmp_path / "logs").mkdir()
    pl.DataFrame(rows[:900]).write_parquet(tmp_path / "logs" / "a.parquet")
    pl.DataFrame(rows[900:]).write_parquet(tmp_path / "logs" / "b.parquet")
    (tmp_path / "new.run").write_text(Path(DENSE).read_text())
    irspec(
        "clickmodel", "fit", str(EXAMPLES / "swap.jsonl.gz"), "--model", "pbm", "-o", "pbm.json", cwd=tmp_path
    )
    done = subprocess.run(
        'irspec online logs/*.parquet --counterfactual new.run -m "ips(ctr@10), snips(ctr@10)" '
        "--propensity pbm.json -f json",
        shell=True, cwd=tmp_path, env=USER | {"PATH": f"{Path(sys.executable).parent}:{USER['PATH']}"},
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = {row["metric"]: row for row in table(json.loads(done.stdout), "Counterfactual: new")}
    canonical = json.loads(irspec("online", str(EXAMPLES / "shuffled.jsonl.gz"), "--counterfactual", "new.run",
                                  "-m", "IPS(ctr)@10, SNIPS(ctr)@10", "-f", "json", cwd=tmp_path))  # fmt: skip
    want = {row["metric"]: row for row in table(canonical, "Counterfactual: new")}
    assert got.keys() == {"IPS@10", "SNIPS@10"}
    for metric, row in got.items():
        assert row.pop("metric") == want[metric].pop("metric")
        assert row == pytest.approx(want[metric], rel=1e-12)
    top = {q: docs[:10] for q, docs in ranking(DENSE).items()}
    ips = [
        sum(1 / rec["propensities"][s] for s in (rec["results"].index(c["doc"]) for c in rec["clicks"])
            if s < len(top[rec["qid"]]) and top[rec["qid"]][s] == rec["results"][s])
        for rec in rows
    ]  # fmt: skip
    assert got["IPS@10"]["estimate"] == pytest.approx(np.mean(ips), rel=1e-12)
    assert got["IPS@10"]["query issues"] == len(rows) == 2000


def dbn_ctr(attr: list[float], cont: float) -> float:
    """A DBN user's probability of clicking a list of these attractivenesses: no click at ranks i.. is
    ``N_i = (1 - a_i) (1 - cont + cont N_{i+1})``, the user leaving after a rank without a click with
    probability 1 - cont (satisfaction matters only after a click)."""
    none = 1.0
    for i, a in enumerate(reversed(attr)):
        none = (1 - a) * (none if i == 0 else (1 - cont + cont * none))
    return 1 - none


def test_simulate_with_a_fitted_click_model(tmp_path):
    """``irspec simulate --clickmodel dbn.json --runs bm25.run dense.run --sessions 1e5``: each arm's CTR
    the DBN's, computed here from the JSON (a pair the log never showed: the mean of its parameters), and
    the traffic each design needs for 80% power from the means and variances it reports."""
    irspec(
        "clickmodel",
        "fit",
        str(EXAMPLES / "logged.jsonl.gz"),
        "--model",
        "dbn",
        "-o",
        "dbn.json",
        cwd=tmp_path,
    )
    report = json.loads(irspec("simulate", "--clickmodel", "dbn.json", "--runs", BM25, DENSE, "--sessions", "1e5",
                               "-f", "json", cwd=tmp_path))  # fmt: skip
    params = json.loads((tmp_path / "dbn.json").read_text())["params"]
    attr = params["attr"]
    unseen = np.mean([v for docs in attr.values() for v in docs.values()])
    a, b = ranking(BM25), ranking(DENSE)
    queries = sorted(set(a) & set(b))
    for arm, run in enumerate((a, b)):
        want = np.mean([dbn_ctr([attr.get(q, {}).get(d, unseen) for d in run[q][:10]], params["cont"])
                        for q in queries])  # fmt: skip
        se = math.sqrt(report["ab_variance"][arm] / 1e5)
        assert report["ab_mean"][arm] == pytest.approx(want, abs=4 * se)
    z = 1.959963984540054 + 0.8416212335729143  # alpha 0.05 two-sided, power 0.8
    va, vb = report["ab_variance"]
    delta = report["ab_mean"][1] - report["ab_mean"][0]
    assert report["ab_needed"] == pytest.approx(2 * z**2 * (va + vb) / delta**2, rel=1e-6)
    assert report["ratio"] == pytest.approx(report["ab_needed"] / report["il_needed"])


def test_the_shipped_logs_are_what_make_examples_makes(tmp_path):
    subprocess.run(
        [sys.executable, str(EXAMPLES / "make_examples.py"), str(tmp_path)], env=USER, check=True, timeout=300
    )
    for name in ("interleaved", "logged", "swap", "shuffled"):
        made = gzip.decompress((tmp_path / f"{name}.jsonl.gz").read_bytes())
        assert made == gzip.decompress((EXAMPLES / f"{name}.jsonl.gz").read_bytes()), name
