"""Query groups (irspec.experiment.groups): per-group means with 95% t intervals, macro and micro means.

Expected values: hand arithmetic written out here, and numpy/scipy (np.mean, scipy.stats.t.interval with
scipy.stats.sem) computed independently on random data.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

import irspec
from irspec.cli import main
from irspec.errors import InputError
from irspec.experiment.groups import by_group, read_groups, with_groups


def _result(values: list[float]):
    """A result whose per-query P@2 is ``values`` (each 0, 0.5 or 1), queries q0, q1, ..."""
    qrels = {f"q{i}": {"r1": 1, "r2": 1} for i in range(len(values))}
    run = {}
    for i, x in enumerate(values):
        rel = round(x * 2)
        docs = ["r1", "r2"][:rel] + ["n1", "n2"][: 2 - rel]
        run[f"q{i}"] = {d: 10.0 - k for k, d in enumerate(docs)}
    return irspec.evaluate(qrels, run, "P@2")


def test_hand_worked_groups():
    # P@2: q0 = 1, q1 = 0.5, q2 = 0, q3 = 1
    # group A = {q0, q1}: mean 0.75, s = sqrt(((0.25)^2 + (0.25)^2) / 1) = 0.353553..., t(0.975, 1) = 12.7062047
    #   half width = 12.7062047 * 0.353553 / sqrt 2 = 3.17655 -> [-2.42655, 3.92655], cut at P's bounds
    #   [0, 1] (MetricDef.bounds) -> [0, 1]
    # group B = {q2}: mean 0, one query: no interval
    # macro = (0.75 + 0) / 2 = 0.375; micro = (1 + 0.5 + 0 + 1) / 4 = 0.625
    res = _result([1, 0.5, 0, 1])
    (table,) = by_group(res, {"q0": "A", "q1": "A", "q2": "B"})
    rows = {r[0]: r for r in table.rows}
    _name, n, mean, low, high = rows["A"]
    assert (n, mean) == (2, 0.75)
    assert (low, high) == (0.0, 1.0)
    assert rows["B"][1:3] == (1, 0.0) and math.isnan(rows["B"][3]) and math.isnan(rows["B"][4])
    macro, micro = table.rows[-2], table.rows[-1]
    assert macro[1:3] == (2, 0.375)
    assert micro[1:3] == (4, 0.625)
    assert table.as_dict()["rows"][1][3] is None  # JSON: the undefined interval is null


def test_against_scipy_on_random_data():
    rng = np.random.default_rng(5)
    values = rng.choice([0.0, 0.5, 1.0], size=40).tolist()
    res = _result(values)
    groups = {f"q{i}": ["even" if i % 2 == 0 else "odd"] + (["small"] if i < 7 else []) for i in range(40)}
    (table,) = by_group(res, groups)
    rows = {r[0]: r for r in table.rows}
    for name, members in (("even", range(0, 40, 2)), ("odd", range(1, 40, 2)), ("small", range(7))):
        x = np.array([values[i] for i in members])
        low, high = scipy.stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=scipy.stats.sem(x))
        low, high = max(low, 0.0), min(high, 1.0)  # cut at P's bounds
        assert rows[name][1] == len(x)
        assert math.isclose(rows[name][2], x.mean(), abs_tol=1e-12)
        assert math.isclose(rows[name][3], low, abs_tol=1e-12) and math.isclose(
            rows[name][4], high, abs_tol=1e-12
        )
    means = [rows[g][2] for g in ("even", "odd", "small")]
    assert math.isclose(table.rows[-2][2], np.mean(means), abs_tol=1e-12)
    assert math.isclose(table.rows[-1][2], np.mean(values), abs_tol=1e-12)


def test_file_and_warnings(tmp_path):
    path = tmp_path / "groups.tsv"
    path.write_text("# query group\nq0\tshort queries\nq1 short queries\nq0 rare\n\nq9 rare\n")
    assert read_groups(path) == {"short queries": ("q0", "q1"), "rare": ("q0", "q9")}
    res = _result([1, 0.5, 0])
    (grouped,) = with_groups([res], path)
    assert any("1 query in no group ('q2')" in w for w in grouped.warnings)
    assert any("1 query of the groups without a result ('q9')" in w for w in grouped.warnings)
    assert grouped.tables[0].title == "Query groups: P@2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q0\n", "g.tsv:1: expected 'query_id group'"),
        ("q0 a\nq0 a\n", "g.tsv:2: query 'q0' is in group 'a' already"),
        ("# x\n", "no lines"),
    ],
)
def test_malformed_files(tmp_path, text, message):
    path = tmp_path / "g.tsv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_groups(path)


def test_every_shape_evaluate_returns():
    """What irspec.evaluate returns for several runs (a ResultSet), a dict, a list, or one result: each
    comes back in its own shape, every run with its group table (hand arithmetic as above: group A =
    {q0, q1}, mean (1 + 0.5) / 2 = 0.75 for the first run, (0 + 0) / 2 = 0 for the second)."""
    one, two = _result([1, 0.5, 0, 1]), dataclasses.replace(_result([0, 0, 1, 1]), run_name="other")
    many = irspec.ResultSet((one, two))
    groups = {"q0": "A", "q1": "A", "q2": "B", "q3": "B"}
    for given, kind in ((many, irspec.ResultSet), (dict(many), dict), ([one, two], list)):
        grouped = with_groups(given, groups)
        assert type(grouped) is kind
        found = list(grouped.values()) if kind is not list else grouped
        assert [[r[:3] for r in res.tables[-1].rows[:1]] for res in found] == [
            [("A", 2, 0.75)],
            [("A", 2, 0.0)],
        ]
    assert with_groups(one, groups).tables[-1].rows[0][:3] == ("A", 2, 0.75)


def test_pandas_series():
    pd = importlib.import_module("pandas")
    res = _result([1, 0.5, 0, 1])
    (table,) = by_group(res, pd.Series({"q0": "A", "q1": "A", "q2": "B", "q3": "B"}))
    assert [r[:3] for r in table.rows[:2]] == [("A", 2, 0.75), ("B", 2, 0.5)]


def test_every_format_shows_groups(tmp_path, capsys):
    demo = Path(__file__).parent.parent / "specs" / "demo"
    path = tmp_path / "g.tsv"
    path.write_text("".join(f"q{i:02d} {'head' if i <= 25 else 'tail'}\n" for i in range(1, 51)))
    base = [
        "eval",
        str(demo / "qrels.txt"),
        str(demo / "runs" / "bm25.run"),
        "-m",
        "nDCG@10",
        "--groups",
        str(path),
    ]
    for fmt, needle in (
        ("table", "macro mean over 2 groups"),
        ("markdown", "Query groups: nDCG@10"),
        ("latex", "macro mean over 2 groups"),
    ):
        assert main([*base, "-f", fmt]) == 0
        assert needle in capsys.readouterr().out, fmt
    assert main([*base, "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["runs"][0]["tables"][0]["metric"] == "nDCG@10"


def test_plan_sections_and_plot(tmp_path):
    """A plan with ``standardize`` and ``groups``: its results are z-scores with group tables, and the
    plots include the group figure; the z-scores equal irspec.standardize's on the same runs."""
    demo = Path(__file__).parent.parent / "specs" / "demo"
    (tmp_path / "g.tsv").write_text(
        "".join(f"q{i:02d} {'head' if i <= 25 else 'tail'}\n" for i in range(1, 51))
    )
    plan = tmp_path / "p.yaml"
    plan.write_text(
        f"qrels: {demo / 'qrels.txt'}\nruns:\n"
        + "".join(
            f"  - {{name: {n}, path: {demo / 'runs' / (n + '.run')}}}\n" for n in ("bm25", "dense", "hybrid")
        )
        + "metrics: [nDCG@10]\nstandardize: {reference: [bm25, dense]}\ngroups: g.tsv\n"
        + "output:\n  - {format: plots, path: out}\n"
    )
    report = irspec.run_plan(irspec.load_plan(str(plan)))
    raw = irspec.evaluate(
        str(demo / "qrels.txt"),
        {n: str(demo / "runs" / f"{n}.run") for n in ("bm25", "dense", "hybrid")},
        "nDCG@10",
    )
    expected = irspec.standardize(raw, reference=[raw["bm25"], raw["dense"]])
    for got, want in zip(report.results, expected.values(), strict=True):
        assert str(got.metrics[0]) == "z(nDCG@10)" and np.array_equal(got.values, want.values)
        assert [t.title for t in got.tables if getattr(t, "metric", "")] == ["Query groups: z(nDCG@10)"]
    importlib.import_module("matplotlib")
    from irspec.plan.execute import write_outputs

    write_outputs(report)
    assert (tmp_path / "out" / "groups-z_nDCG_at_10.svg").exists()
