"""Online A/B tests (irspec_online.ab): a hand-derived delta-method example, Welch's t against scipy and
statsmodels, the delta method against a large bootstrap over units, the sample-ratio check against
scipy.stats.chisquare, the same test from every form of a log, the errors, and every report format."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from irspec_online import ab, plugin
from irspec_online.ab import Design, Moments, analyse, ratio_moments
from irspec_online.kernels import kernel_of
from online_logs import polars_frame, write_jsonl

import irspec
from irspec.testing import registered_plugin

T0 = 1_714_521_600.0


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def rec(session, user, arm, clicked, t=0.0, results=3):
    docs = [f"d{i}" for i in range(results)]
    return {"session": session, "user": user, "arm": arm, "query": "q", "timestamp": T0 + t, "results": docs,
            "clicks": [{"doc": "d0", "dwell": 40}] if clicked else []}  # fmt: skip


# Control: u1 2 issues (1 clicked), u2 1 issue (clicked), u3 1 issue (none).
# Treatment: u4 2 issues (both clicked), u5 2 issues (1 clicked), u6 1 issue (none).
HAND = [
    rec("s1", "u1", "control", True), rec("s1", "u1", "control", False, 10),
    rec("s2", "u2", "control", True),
    rec("s3", "u3", "control", False),
    rec("s4", "u4", "treatment", True), rec("s4", "u4", "treatment", True, 10),
    rec("s5", "u5", "treatment", False), rec("s5b", "u5", "treatment", True, 20),
    rec("s6", "u6", "treatment", False),
]  # fmt: skip


def ab_test(source, specs, **design):
    res = irspec.evaluate_input(source, specs, options={"ab": {"baseline": "control", **design}})
    return res


def comparisons(source, specs, **design):
    """The A/B comparisons of ``source`` as dicts, through the plugin's Python entry (the log's compare)."""
    from irspec_online.log import read_log

    log = read_log(source, ab={"baseline": "control", **design})
    bound = irspec.parse_many(specs)
    values = np.column_stack([kernel_of(m)(log, m) for m in bound])
    return ab.analyse(
        ab.combine([ab.partial_sums(log, bound, values, log.design)], log.source), bound, log.design
    )


def test_hand_derived_delta_method(tmp_path):
    """CTR per user: control Y = (1, 1, 0) clicked issues, X = (2, 1, 1) issues; treatment Y = (2, 1, 0),
    X = (2, 2, 1). By hand (sample moments, ddof 1):
    control:   r = (2/3)/(4/3) = 1/2; s_YY = 1/3, s_XX = 1/3, s_XY = 1/6;
               Var = (1/3 - 2(1/2)(1/6) + (1/4)(1/3)) / (3 (4/3)^2) = (1/4) / (16/3) = 3/64
    treatment: r = 1/(5/3) = 3/5; s_YY = 1, s_XX = 1/3, s_XY = 1/2;
               Var = (1 - 2(3/5)(1/2) + (9/25)(1/3)) / (3 (5/3)^2) = 0.52 / (25/3) = 0.0624
    difference 0.1, se = sqrt(3/64 + 0.0624), z = 0.1 / se, p = erfc(|z| / sqrt 2);
    relative 0.6/0.5 - 1 = 0.2, Var = 0.0624/0.25 + 0.36 (3/64) / 0.0625 = 0.2496 + 0.27 = 0.5196."""
    test = comparisons(write_jsonl(HAND, tmp_path / "ab.jsonl"), "CTR", unit="user")
    (c,) = test.comparisons
    se = math.sqrt(3 / 64 + 0.0624)
    assert c.test == "delta" and (c.n_a, c.n_b) == (3, 3)
    assert c.mean_b == pytest.approx(0.5, rel=1e-15) and c.mean_a == pytest.approx(0.6, rel=1e-15)
    assert c.difference == pytest.approx(0.1, rel=1e-12)
    assert c.statistic == pytest.approx(0.1 / se, rel=1e-12)
    assert c.p_value == pytest.approx(math.erfc(0.1 / se / math.sqrt(2)), rel=1e-12)
    z = 1.959963984540054  # the standard normal's 0.975 quantile
    assert (c.ci_low, c.ci_high) == pytest.approx((0.1 - z * se, 0.1 + z * se), rel=1e-12)
    assert c.relative == pytest.approx(0.2, rel=1e-12)
    assert c.relative_ci_high - c.relative == pytest.approx(z * math.sqrt(0.5196), rel=1e-12)
    assert c.p_adjusted == c.p_value and c.family_size == 1  # one comparison: Holm changes nothing


def test_hand_sample_ratio_and_session_unit(tmp_path):
    """Sessions as units: control has 3 sessions, treatment 4 (s5 and s5b): chi-square against 1:1 is
    ((3 - 3.5)^2 + (4 - 3.5)^2) / 3.5 = 1/7, df 1. Abandonment is one value per session: Welch's t."""
    test = comparisons(write_jsonl(HAND, tmp_path / "ab.jsonl"), "Abandonment", unit="session")
    s = test.sample_ratio
    assert s.units == (3, 4) and s.df == 1 and s.statistic == pytest.approx(1 / 7, rel=1e-14)
    assert s.p_value == pytest.approx(math.erfc(math.sqrt(1 / 7) / math.sqrt(2)), rel=1e-12)  # chi2(1) tail
    (c,) = test.comparisons
    # control sessions abandoned: s1 no, s2 no, s3 yes -> 1/3; treatment s4 no, s5 yes, s5b no, s6 yes -> 1/2
    assert c.test == "welch" and c.mean_b == pytest.approx(1 / 3) and c.mean_a == pytest.approx(1 / 2)


def random_ab_log(seed: int, users: int = 60, arms=("control", "treatment")) -> list[dict]:
    """Users in arms (unequal sizes), 1-3 sessions each, 1-4 issues per session, zero-result pages, clicks
    with and without dwell, identical values across users (ties)."""
    rng = np.random.default_rng(seed)
    out = []
    for u in range(users):
        arm = arms[int(rng.integers(0, len(arms)))]
        for s in range(int(rng.integers(1, 4))):
            for q in range(int(rng.integers(1, 5))):
                n = int(rng.choice([0, 1, 3]))
                p = 0.3 + 0.15 * arms.index(arm)
                clicks = (
                    [{"doc": "d0", "dwell": None if rng.random() < 0.3 else float(rng.choice([5, 30, 90]))}]
                    if n and rng.random() < p
                    else []
                )
                out.append({"session": f"u{u}s{s}", "user": f"u{u}", "arm": arm, "query": f"q{q}",
                            "timestamp": T0 + 3600 * u + 600 * s + q, "results": [f"d{i}" for i in range(n)], "clicks": clicks})  # fmt: skip
    return out


def per_unit_values(records, unit, value):
    """Per unit of each arm, the mean of ``value(record)`` over its records (the per-unit means)."""
    units: dict[tuple[str, str], list[float]] = {}
    for r in records:
        key = r["user"] if unit == "user" else r["session"]
        units.setdefault((r["arm"], key), []).append(value(r))
    return {
        arm: [sum(v) / len(v) for (a, _), v in sorted(units.items()) if a == arm]
        for arm in ("control", "treatment")
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_welch_equals_scipy_and_statsmodels(tmp_path, seed):
    """With query issues as units CTR is a 0/1 per unit: Welch's t-test. scipy.stats.ttest_ind
    (equal_var=False) and statsmodels' CompareMeans give the statistic, df, p and interval."""
    from scipy.stats import ttest_ind
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    records = random_ab_log(seed)
    test = comparisons(write_jsonl(records, tmp_path / "ab.jsonl"), "CTR ZRR", unit="query")
    for c, value in zip(
        test.comparisons, (lambda r: float(bool(r["clicks"])), lambda r: float(not r["results"])), strict=True
    ):
        x = [value(r) for r in records if r["arm"] == "treatment"]
        y = [value(r) for r in records if r["arm"] == "control"]
        ref = ttest_ind(x, y, equal_var=False)
        assert c.test == "welch"
        assert c.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert c.df == pytest.approx(ref.df, rel=1e-10)
        assert c.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        assert (c.ci_low, c.ci_high) == pytest.approx(tuple(ref.confidence_interval(0.95)), rel=1e-9)
        sm = CompareMeans(DescrStatsW(np.array(x)), DescrStatsW(np.array(y)))
        t, p, df = sm.ttest_ind(usevar="unequal")
        assert (c.statistic, c.p_value, c.df) == pytest.approx((t, p, df), rel=1e-9)
        assert (c.ci_low, c.ci_high) == pytest.approx(sm.tconfint_diff(usevar="unequal"), rel=1e-9)


def test_a_metric_averaged_per_user_is_a_ratio_of_sums(tmp_path):
    """With users as units, CTR is clicked issues / issues of each arm (not a mean of user CTRs)."""
    records = random_ab_log(4)
    test = comparisons(write_jsonl(records, tmp_path / "ab.jsonl"), "CTR", unit="user")
    (c,) = test.comparisons
    for arm, mean in (("treatment", c.mean_a), ("control", c.mean_b)):
        issues = [r for r in records if r["arm"] == arm]
        assert mean == pytest.approx(sum(bool(r["clicks"]) for r in issues) / len(issues), rel=1e-14)
    assert c.test == "delta"


def test_delta_method_agrees_with_a_large_bootstrap_over_units():
    """The delta-method standard error of a difference of ratios against the standard deviation of 4,000
    bootstrap replicates over units (seed 5). The bootstrap's own relative error is about
    1 / sqrt(2 (B - 1)) = 1.1% here, and the delta method's first-order error is O(1/n) with 3,000 and
    2,000 units: 4% is more than three of the bootstrap's standard errors."""
    rng = np.random.default_rng(5)
    arms = {}
    for name, n, p in (("treatment", 3000, 0.32), ("control", 2000, 0.3)):
        den = rng.integers(1, 12, n).astype(float)  # issues per user, skewed below
        den[rng.random(n) < 0.1] *= 5
        arms[name] = (rng.binomial(den.astype(int), p).astype(float), den)
    (ra, va, _), (rb, vb, _) = (ratio_moments(Moments.of(*arms[a])) for a in ("treatment", "control"))
    boot = np.empty(4000)
    for b in range(len(boot)):
        r = []
        for a in ("treatment", "control"):
            y, x = arms[a]
            pick = rng.integers(0, len(y), len(y))
            r.append(y[pick].sum() / x[pick].sum())
        boot[b] = r[0] - r[1]
    assert math.sqrt(va + vb) == pytest.approx(boot.std(ddof=1), rel=0.04)
    assert ra - rb == pytest.approx(np.mean(boot), abs=0.2 * boot.std())  # the ratio's bias is O(1/n)


def test_relative_difference_agrees_with_a_bootstrap():
    """The delta-method variance of r_t / r_c - 1 against 4,000 bootstrap replicates (seed 6), 4% as above."""
    rng = np.random.default_rng(6)
    data = {}
    for name, n in (("treatment", 2500), ("control", 2500)):
        den = rng.integers(1, 8, n).astype(float)
        data[name] = (rng.binomial(den.astype(int), 0.4 if name == "control" else 0.44).astype(float), den)
    units = pl.DataFrame({
        "unit": [f"{a}{i}" for a in data for i in range(len(data[a][0]))],
        "arm": [a for a in data for _ in range(len(data[a][0]))],
        "n0": np.concatenate([data[a][0] for a in data]), "d0": np.concatenate([data[a][1] for a in data]),
    })  # fmt: skip
    (c,) = analyse(units.sort("unit"), irspec.parse_many("CTR"), Design("control")).comparisons
    boot = np.empty(4000)
    for b in range(len(boot)):
        r = {}
        for a, (y, x) in data.items():
            pick = rng.integers(0, len(y), len(y))
            r[a] = y[pick].sum() / x[pick].sum()
        boot[b] = r["treatment"] / r["control"] - 1
    z = 1.959963984540054
    assert (c.relative_ci_high - c.relative) / z == pytest.approx(boot.std(ddof=1), rel=0.04)


@pytest.mark.parametrize(
    ("split", "counts"),
    [
        (None, (30, 45)),
        ({"control": 1, "treatment": 2}, (30, 45)),
        ({"control": 1, "treatment": 1, "spare": 1}, (30, 45, 0)),
    ],
)
def test_sample_ratio_equals_scipy_chisquare(split, counts):
    from irspec_online.ab import sample_ratio
    from scipy.stats import chisquare

    design = Design("control", split=split)
    got = sample_ratio(["control", "treatment"], counts[:2], design)
    names = sorted(split) if split else ["control", "treatment"]
    arms = ("control", "treatment", "spare")[: len(counts)]  # the spare arm only where the split has it
    observed = [dict(zip(arms, counts, strict=True))[a] for a in names]
    weights = np.array([split[a] for a in names], dtype=float) if split else np.ones(2)
    ref = chisquare(observed, sum(observed) * weights / weights.sum())
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def mismatched(tmp_path):
    # 40 treatment users against 10 control users: chi-square 18, p = 2.2e-5 < 0.001
    records = [
        rec(f"s{u}", f"u{u}", "control" if u < 10 else "treatment", u % 3 == 0, t=u) for u in range(50)
    ]
    return write_jsonl(records, tmp_path / "srm.jsonl")


def test_a_sample_ratio_mismatch_is_a_warning_in_every_output(tmp_path):
    from irspec.report import format_results, to_html, to_latex, to_markdown

    res = ab_test(mismatched(tmp_path), "CTR")
    (warning,) = res.warnings
    assert warning.startswith("sample ratio mismatch: units per arm control 10, treatment 40")
    for text in (
        format_results([res], "table"),
        to_markdown([res]),
        to_latex([res]),
        to_html([res]),
        format_results([res], "json"),
    ):
        assert "MISMATCH" in text
    assert "sample ratio mismatch" in json.loads(format_results([res], "json"))["warnings"][0]


def test_holm_over_the_family_of_all_comparisons(tmp_path):
    """Three arms, two metrics: a family of four; Holm by hand on the raw p-values."""
    test = comparisons(
        write_jsonl(random_ab_log(8, arms=("control", "a", "b")), tmp_path / "ab.jsonl"),
        "CTR Abandonment",
        unit="user",
    )
    raw = [c.p_value for c in test.comparisons]
    order = sorted(range(4), key=lambda i: raw[i])
    holm, running = [0.0] * 4, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (4 - rank) * raw[i]))
        holm[i] = running
    assert [c.p_adjusted for c in test.comparisons] == pytest.approx(holm, rel=1e-14)
    assert {c.family_size for c in test.comparisons} == {4}
    per_metric = comparisons(tmp_path / "ab.jsonl", "CTR Abandonment", unit="user", family="per-metric")
    assert {c.family_size for c in per_metric.comparisons} == {2}


@pytest.mark.parametrize("unit", ["user", "session", "query"])
def test_every_form_and_batch_size_gives_the_same_test(tmp_path, unit):
    """JSON Lines, Parquet, polars (eager and lazy) and pandas, read 7 records at a time: the same bits."""
    from irspec_online.log import read_log

    records = random_ab_log(9)
    frame = polars_frame(records).with_columns(
        pl.Series("user", [r["user"] for r in records]), pl.Series("arm", [r["arm"] for r in records])
    )
    frame.write_parquet(tmp_path / "ab.parquet")
    specs = "CTR CTR@1 ZRR Abandonment SessionSuccess QueriesPer"
    forms = [
        write_jsonl(records, tmp_path / "ab.jsonl"),
        tmp_path / "ab.parquet",
        frame,
        frame.lazy(),
        frame.to_pandas(),
    ]
    seen = []
    for form in forms:
        log = read_log(form, batch_size=7, ab={"baseline": "control", "unit": unit})
        res = irspec.evaluate_input(form, specs, options={"ab": {"baseline": "control", "unit": unit}})
        seen.append([t.rows for t in res.tables if t.title.startswith(("A/B", "Sample"))])
        assert log.design.unit == unit
    assert all(s == seen[0] for s in seen[1:])


def test_bad_designs_and_logs_are_clear_errors(tmp_path):
    path = write_jsonl(HAND, tmp_path / "ab.jsonl")
    with pytest.raises(
        irspec.EvaluationError, match=re.escape("ab.baseline 'ctrl' is not an arm of the log")
    ):
        irspec.evaluate_input(path, "CTR", options={"ab": {"baseline": "ctrl"}})
    with pytest.raises(
        irspec.EvaluationError, match=re.escape("ab.unit must be one of user, session, query")
    ):
        irspec.evaluate_input(path, "CTR", options={"ab": {"baseline": "control", "unit": "visit"}})
    with pytest.raises(irspec.EvaluationError, match="unknown setting 'arms'"):
        irspec.evaluate_input(path, "CTR", options={"ab": {"baseline": "control", "arms": "x"}})
    with pytest.raises(
        irspec.EvaluationError, match=r"QueriesPer\(unit=hour\) counts the queries of a time unit"
    ):
        irspec.evaluate_input(path, "QueriesPer(hour)", options={"ab": {"baseline": "control"}})
    with pytest.raises(irspec.InputError, match=r"ab.jsonl:1: missing required key 'variant'"):
        irspec.evaluate_input(path, "CTR", options={"ab": {"baseline": "control", "arm": "variant"}})
    moved = [dict(r, arm="treatment") if r["session"] == "s2" else r for r in HAND] + [
        rec("s2b", "u2", "control", False)
    ]
    with pytest.raises(irspec.InputError, match="unit 'u2' is in two arms"):
        irspec.evaluate_input(
            write_jsonl(moved, tmp_path / "two.jsonl"), "CTR", options={"ab": {"baseline": "control"}}
        )
    split = write_jsonl(
        [dict(r, arm="treatment") if r["timestamp"] > T0 else r for r in HAND], tmp_path / "split.jsonl"
    )
    with pytest.raises(irspec.InputError, match="session 's1' has records of two arm values"):
        irspec.evaluate_input(
            split, "CTR Abandonment", options={"ab": {"baseline": "control", "unit": "query"}}
        )
    # query issues randomised and only row metrics: a session may span the arms
    assert irspec.evaluate_input(
        split, "CTR", options={"ab": {"baseline": "control", "unit": "query"}}
    ).tables


def test_an_ab_section_in_a_plan(tmp_path):
    """A plan with `log:` and `ab:` shows the test in its outputs; the JSON carries the tables."""
    from irspec.plan.execute import render_outputs, run_plan
    from irspec.plan.load import load_plan

    write_jsonl(random_ab_log(10), tmp_path / "ab.jsonl")
    (tmp_path / "plan.yaml").write_text(
        "log: ab.jsonl\nmetrics: [CTR, Abandonment]\nab: {baseline: control, unit: user, correction: bonferroni}\n"
        "output:\n  - {format: table}\n  - {format: markdown, path: out.md}\n  - {format: latex, path: out.tex}\n"
        "  - {format: json, path: out.json}\n",
        encoding="utf-8",
    )
    report = run_plan(load_plan(str(tmp_path / "plan.yaml")))
    rendered = {o.format: text for o, text in render_outputs(report)}
    assert all("A/B test: treatment against control (unit: user)" in text for text in rendered.values())
    doc = json.loads(rendered["json"])
    table = next(t for r in doc["runs"] for t in r.get("tables", ()) if t["title"].startswith("A/B"))
    assert "bonferroni over all" in table["description"]


def test_the_ab_section_is_the_plugins_and_joins_the_plan_schema_after_log():
    """The ab: section comes from this plugin (irspec_register_plan_sections), not irspec's own schema: the
    plan schema with the plugin loaded has it after log, its settings are Design's, each described, and
    an object closed but the split (arm -> weight)."""
    from irspec.plan import schema
    from irspec.plan.model import SCHEMA_PATH

    own = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert "ab" not in own["properties"]
    keys = list(schema()["properties"])
    assert keys[keys.index("log") + 1] == "ab"  # (then online:, this plugin's other section)
    assert [k for k in keys if k not in ("ab", "online")] == list(own["properties"])
    section = schema()["properties"]["ab"]
    assert list(section["properties"]) == list(ab.KEYS) and section["required"] == ["baseline"]
    settings = section["properties"]
    choices = {"unit": ab.UNITS, "correction": ab.CORRECTIONS, "family": ab.FAMILIES}
    assert {k: sorted(settings[k]["enum"]) for k in choices} == {k: sorted(v) for k, v in choices.items()}
    assert section["additionalProperties"] is False and settings["split"]["additionalProperties"] == {
        "type": "number",
        "exclusiveMinimum": 0,
    }
    assert section["description"] and all(s["description"] for s in settings.values())


def test_irspec_validate_and_run_take_a_plan_with_ab(tmp_path, capsys):
    from irspec.cli import main

    write_jsonl(random_ab_log(10), tmp_path / "ab.jsonl")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "log: ab.jsonl\nmetrics: [CTR]\nab: {baseline: control, unit: session}\n", encoding="utf-8"
    )
    assert main(["validate", str(plan)]) == 0
    assert capsys.readouterr().out == "ok: 0 runs, a log, 1 metric\n"
    assert main(["run", str(plan)]) == 0
    assert "A/B test: treatment against control (unit: session)" in capsys.readouterr().out
    plan.write_text("log: ab.jsonl\nmetrics: [CTR]\nab: {baseline: control, unit: visit}\n", encoding="utf-8")
    assert main(["validate", str(plan)]) == 2
    assert capsys.readouterr().err.startswith(f"irspec: error: {plan}:3: ab.unit: ")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_latex_tables_of_the_demo_ab_test_compile(tmp_path):
    """The demo A/B log's LaTeX output (results, top queries, queries per hour, the A/B test and the
    sample-ratio table) compiles with pdflatex, and prints the test's heading."""
    from irspec.report import to_latex

    demo = Path(__file__).parent.parent / "examples" / "ab.jsonl"
    res = irspec.evaluate_input(demo, "CTR, Abandonment", options={"ab": {"baseline": "control"}})
    doc = "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,landscape,a3paper]{geometry}\n"
    (tmp_path / "doc.tex").write_text(
        doc + "\\begin{document}\n" + to_latex([res]) + "\\end{document}\n", encoding="utf-8"
    )
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    log = (tmp_path / "doc.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    assert "Undefined control sequence" not in log
    if shutil.which("pdftotext"):
        subprocess.run(["pdftotext", "-layout", "doc.pdf", "doc.txt"], cwd=tmp_path, check=True, timeout=60)
        assert "A/B test: treatment against control (unit: user)" in (tmp_path / "doc.txt").read_text(
            encoding="utf-8"
        )


def test_degenerate_metrics_are_defined_and_reach_json(tmp_path):
    """ZRR is 0 in every unit of both arms (every page has results): no variance, a difference of 0,
    p = 1, no statistic, and no relative difference (0 / 0), shown as - in text and null in JSON."""
    from irspec.report import format_results

    res = ab_test(write_jsonl(HAND, tmp_path / "ab.jsonl"), "ZRR CTR", unit="user")
    c = comparisons(tmp_path / "ab.jsonl", "ZRR CTR", unit="user").comparisons[0]
    assert (c.difference, c.p_value, c.statistic, c.relative, c.ci_low, c.ci_high) == (
        0.0,
        1.0,
        None,
        None,
        0.0,
        0.0,
    )
    doc = json.loads(format_results([res], "json"))
    row = next(t for t in doc["runs"][0]["tables"] if t["title"].startswith("A/B"))["rows"][0]
    assert row[0] == "ZRR" and row[6] is None
    assert "ZRR         0.0000      0.0000       0.0000   0.0000     0.0000         -" in format_results(
        [res], "table"
    )


@pytest.mark.parametrize(
    "weight", [10**400, float("nan"), float("inf"), 0, -1], ids=["400 digits", "nan", "inf", "0", "-1"]
)
def test_a_split_weight_past_a_float_or_not_positive_is_a_clear_error(weight):
    # an integer of 400 digits made math.isfinite raise OverflowError (issue 21)
    with pytest.raises(
        irspec.EvaluationError, match=r"ab.split: the weight of arm 'a' must be a positive number, not "
    ) as info:
        Design("a", split={"a": weight, "b": 1})
    assert len(str(info.value)) < 200
