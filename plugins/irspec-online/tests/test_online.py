"""irspec-online: the log reader, the online metrics, and logs in irspec's evaluation and plans.

The example log (``examples/interactions.jsonl``) is small enough to check by hand; random logs are
checked against the definitions computed here record by record. The plugin is registered for each test
with irspec.testing, so the tests hold whether or not it is installed with its entry point.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import io
import json
import math
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("irspec_online")

import numpy as np
import polars as pl
from irspec_online import plugin
from irspec_online.log import read_log
from irspec_online.records import HourCounts, QueryCounts

import irspec
from irspec.testing import registered_plugin

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "interactions.jsonl"
DEMO = HERE.parents[2] / "specs" / "demo"


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def record(session, t, results, clicks=(), query="q"):
    return {
        "session": session,
        "query": query,
        "timestamp": t,
        "results": list(results),
        "clicks": list(clicks),
    }


# --------------------------------------------------------------------------------------------------
# The example log, by hand


def test_the_example_log_by_hand():
    # s1: mars planet (click d2, 45 s), mars rover (none) | s2: no results, then a click of 12.5 s
    # s3: one query, no click | s4 (next day): clicks on d10 (120 s) and d9 (dwell unknown)
    res = irspec.evaluate_input(EXAMPLE, "CTR CTR@1 ZRR Abandonment SessionSuccess SessionSuccess(10)")
    assert res.run_name == "interactions"
    assert res.query_ids == ("s1:1", "s1:2", "s2:1", "s2:2", "s3:1", "s4:1")
    assert res.aggregate() == {
        "CTR": 3 / 6,  # s1:1, s2:2, s4:1 have a click
        "CTR@1": 1 / 6,  # only d9, at rank 1 of s4:1
        "ZRR": 1 / 6,  # s2:1
        "Abandonment": 1 / 4,  # s3
        "SessionSuccess": 2 / 4,  # s1 (45 s), s4 (120 s); s2's 12.5 s is too short
        "SessionSuccess(dwell=10)": 3 / 4,
    }
    per = res.per_query()
    assert per["s1:1"]["Abandonment"] == 0.0 and math.isnan(per["s1:2"]["Abandonment"])  # per session
    assert per["s3:1"]["Abandonment"] == 1.0


def test_queries_per_unit_by_hand():
    res = irspec.evaluate_input(EXAMPLE, "QueriesPer QueriesPer(minute) QueriesPer(hour) QueriesPer(day)")
    assert res.aggregate() == {
        "QueriesPer": 6 / 4,  # 2, 2, 1, 1 queries in the four sessions
        "QueriesPer(unit=minute)": 6 / 5,  # 10:00, 10:01, 10:05 (2), 11:30, 09:00 next day
        "QueriesPer(unit=hour)": 6 / 3,  # 10h (4), 11h (1), 09h next day (1)
        "QueriesPer(unit=day)": 6 / 2,  # May 1st (5), May 2nd (1)
    }


def test_days_are_utc_calendar_days():
    log = [
        record("a", "2024-05-01T23:30:00Z", ["d"]),
        record("a", "2024-05-02T01:30:00+02:00", ["d"]),  # 23:30 UTC on May 1st
        record("b", "2024-05-02T00:30:00", ["d"]),  # no offset: UTC
    ]
    res = irspec.evaluate_input(log, "QueriesPer(day) QueriesPer(hour)")
    assert res.aggregate() == {"QueriesPer(unit=day)": 1.5, "QueriesPer(unit=hour)": 1.5}


# --------------------------------------------------------------------------------------------------
# Against the definitions, record by record


def _random_log(seed: int, n: int = 300) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        results = [f"d{j}" for j in range(int(rng.integers(0, 6)))]
        clicks = []
        for j, doc in enumerate(results):
            if rng.random() < 0.25:
                dwell = None if rng.random() < 0.2 else float(rng.integers(0, 90))
                clicks.append(
                    {"doc": doc, "dwell": dwell}
                    if rng.random() < 0.5
                    else {"doc": doc, "rank": j + 1, "dwell": dwell}
                )
        t = 1_714_550_000 + float(rng.integers(0, 4 * 86400))
        out.append(record(f"s{int(rng.integers(0, 60))}", t, results, clicks, query=f"query {i}"))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_metrics_match_their_definitions_on_random_logs(seed):
    log = _random_log(seed)
    res = irspec.evaluate_input(
        log, "CTR CTR@2 ZRR Abandonment SessionSuccess(30) QueriesPer QueriesPer(hour)"
    )
    agg = res.aggregate()
    sessions: dict[str, list[dict]] = {}
    for r in log:
        sessions.setdefault(r["session"], []).append(r)
    hours: dict[int, int] = {}
    for r in log:
        hours[int(r["timestamp"] // 3600)] = hours.get(int(r["timestamp"] // 3600), 0) + 1

    def rank(r, c):
        return c.get("rank") or r["results"].index(c["doc"]) + 1

    assert agg["CTR"] == pytest.approx(sum(bool(r["clicks"]) for r in log) / len(log))
    assert agg["CTR@2"] == pytest.approx(
        sum(any(rank(r, c) <= 2 for c in r["clicks"]) for r in log) / len(log)
    )
    assert agg["ZRR"] == pytest.approx(sum(not r["results"] for r in log) / len(log))
    abandoned = [not any(r["clicks"] for r in s) for s in sessions.values()]
    assert agg["Abandonment"] == pytest.approx(sum(abandoned) / len(sessions))
    success = [
        any(c["dwell"] is not None and c["dwell"] >= 30 for r in s for c in r["clicks"])
        for s in sessions.values()
    ]
    assert agg["SessionSuccess"] == pytest.approx(sum(success) / len(sessions))
    assert agg["QueriesPer"] == pytest.approx(len(log) / len(sessions))
    assert agg["QueriesPer(unit=hour)"] == pytest.approx(len(log) / len(hours))
    assert len(res.query_ids) == len(log)


def test_rows_are_sorted_by_session_then_time_whatever_the_file_order():
    log = [
        record("b", 30, ["d"]),
        record("a", 20, ["d"]),
        record("b", 10, ["d"], query="first"),
        record("a", 5, []),
    ]
    data = read_log(log)
    assert data.ids == ("a:1", "a:2", "b:1", "b:2")
    assert data.line.tolist() == [4, 2, 3, 1]  # b:1 is the record of "first", the third
    assert data.n_results.tolist() == [0, 1, 1, 1]


def test_a_log_of_several_files_is_in_the_files_order_then_their_lines(tmp_path):
    """Three query issues of one session at one time: "first" (clicked) and "second" on lines 1 and 2 of
    the first file, "third" (no results) on line 1 of the second. By the documented order (by time, then by
    order in the input: the files' order, then their lines) s1:1 is "first", s1:2 "second", s1:3 "third",
    whatever the files' forms; the streamed pass's parts are in that order too."""
    first = record("s1", 0, ["x"], [{"doc": "x", "rank": None}], query="first")
    second, third = record("s1", 0, ["x"], query="second"), record("s1", 0, [], query="third")
    pytest.importorskip("pyarrow", reason="Parquet logs need pyarrow: pip install 'irspec-online[parquet]'")
    (tmp_path / "a.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(third) + "\n")
    schema = {
        "results": pl.List(pl.String),
        "clicks": pl.List(pl.Struct({"doc": pl.String, "rank": pl.Int64})),
    }
    for name, rows in (("a", [first, second]), ("b", [third])):  # columns of the types read a batch at a time
        pl.DataFrame(rows, schema_overrides=schema).write_parquet(tmp_path / f"{name}.parquet")
    want = {"s1:1": (1.0, 0.0), "s1:2": (0.0, 0.0), "s1:3": (0.0, 1.0)}  # (CTR, ZRR)
    for a, b in (("a.jsonl", "b.jsonl"), ("a.parquet", "b.parquet"), ("a.jsonl", "b.parquet")):
        paths = [str(tmp_path / a), str(tmp_path / b)]
        res = irspec.evaluate_input(paths, "CTR, ZRR")
        assert dict(zip(res.query_ids, map(tuple, res.values.tolist()), strict=True)) == want, (a, b)
        assert read_log(paths).line.tolist() == [1, 2, 3]
        stream = read_log(paths, per_query=False)
        parts = list(stream._summaries(QueryCounts(), HourCounts()))  # what the pass spreads over partitions
        assert stream._part(pl.concat(parts)).n_results.tolist() == [1, 1, 0], (a, b)


def test_a_dwell_time_equal_to_the_threshold_is_a_success_and_an_unknown_one_never_is():
    log = [
        record("a", 1, ["d1"], [{"doc": "d1", "dwell": 30}]),
        record("b", 1, ["d1"], [{"doc": "d1", "dwell": None}]),
        record("c", 1, ["d1"], [{"doc": "d1"}]),
    ]
    res = irspec.evaluate_input(log, "SessionSuccess SessionSuccess(0)")
    assert res.per_query()["a:1"]["SessionSuccess"] == 1.0
    assert res.aggregate() == {"SessionSuccess": 1 / 3, "SessionSuccess(dwell=0)": 1 / 3}


# --------------------------------------------------------------------------------------------------
# Reading: formats and errors


def test_gzip_and_standard_input(tmp_path, monkeypatch):
    gz = tmp_path / "log.jsonl.gz"
    gz.write_bytes(gzip.compress(EXAMPLE.read_bytes()))
    assert irspec.evaluate_input(gz, "CTR").aggregate() == {"CTR": 0.5}
    assert irspec.evaluate_input(gz, "CTR").run_name == "log"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes())))
    assert irspec.evaluate_input("-", "ZRR").aggregate() == {"ZRR": 1 / 6}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d"]', "not valid JSON"),
        ('["s", "q"]', "expected a JSON object per line, got a list"),
        ('{"query": "q", "timestamp": 1, "results": []}', "missing required key 'session'"),
        ('{"session": "s", "query": "q", "timestamp": "yesterday", "results": []}', "not ISO 8601"),
        ('{"session": "s", "query": "q", "timestamp": true, "results": []}', "timestamp must be"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": "d1 d2"}', "results must be a list"),
        ('{"session": "s", "query": 7, "timestamp": 1, "results": []}', "query must be a string"),
        # a document shown twice: which rank would its click be at? A key twice: which value is meant?
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1", "d2", "d2"]}',
         "results show 'd2' twice (ranks 2 and 3)"),
        ('{"session": "s", "query": "q", "query": "r", "timestamp": 1, "results": ["d1"]}',
         "the key 'query' twice in one object: which one is meant?"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1"], "clicks": [{"doc": "d1", "doc": "d2"}]}',
         "the key 'doc' twice in one object"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1"], "clicks": [{"doc": "d9"}]}',
         "'d9' is not among the results shown"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1"], "clicks": [{"doc": "d1", "dwell": -3}]}',
         "dwell must be a number of seconds >= 0"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1"], "clicks": [{"doc": "d1", "rank": 0}]}',
         "rank must be an integer >= 1"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1", "d2"], "clicks": [{"doc": "d1", "rank": 2}]}',
         "document 'd1' clicked at rank 2, where the results show 'd2' (and 'd1' at rank 1)"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1", "d2"], "clicks": [{"doc": "d1", "rank": 3}]}',
         "document 'd1' clicked at rank 3, below the 2 results (they show 'd1' at rank 1)"),
        # each of these ended in a traceback (a date out of range; the JSON parser's recursion; encoding)
        ('{"session": "s", "query": "q", "timestamp": 1e300, "results": ["d1"]}',
         "timestamp 1e+300 is out of range: Unix seconds from -62135596800 (year 1) to 253402300799"),
        ('{"session": "s", "query": "q", "timestamp": -1e18, "results": ["d1"]}', "timestamp -1e+18 is out of range"),
        ('{"session": "s", "query": "q", "timestamp": 99999999999999999999999, "results": ["d1"]}', "is out of range"),
        # integers past a float's range: math.isfinite's OverflowError
        ('{"session": "s", "query": "q", "timestamp": 1' + "0" * 400 + ', "results": ["d1"]}', "is out of range"),
        ('{"session": "s", "query": "q", "timestamp": -1' + "0" * 400 + ', "results": ["d1"]}', "is out of range"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1"], "clicks": [{"doc": "d1", "dwell": 1' + "0" * 400 + "}]}",
         "dwell must be a number of seconds >= 0 (or null), got 1000"),
        ("[" * 100_000 + "]" * 100_000, "not a log record: JSON nested too deeply"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d1"], "propensities": [1e-300]}',
         "propensities[0] must be at least 1e-100, got 1e-300: its weight, 1 / p, is squared"),  # SE's overflow
        ('{"session": "s", "query": "q\\ud800", "timestamp": 1, "results": ["d1"]}', "query 'q\\ud800' is not valid Unicode"),
        ('{"session": "s", "query": "q", "timestamp": 1, "results": ["d\\udc00"]}', "results[0] 'd\\udc00' is not valid Unicode (a lone surrogate)"),
    ],
)  # fmt: skip
def test_a_bad_record_is_an_input_error_naming_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    good = json.dumps(record("s", 0, ["d"]))
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(irspec.InputError) as info:
        irspec.evaluate_input(path, "CTR")
    assert info.value.line == 3 and info.value.source == str(path)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}:3: ")


def test_an_empty_or_missing_log_is_an_input_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(irspec.InputError, match="no records"):
        irspec.evaluate_input(empty, "CTR")
    with pytest.raises(irspec.InputError, match="no such file"):
        irspec.evaluate_input(tmp_path / "nope.jsonl", "CTR")


def test_a_click_with_a_rank_may_be_on_a_document_not_shown():
    res = irspec.evaluate_input([record("s", 0, ["d1"], [{"doc": "ad", "rank": 3}])], "CTR CTR@2")
    assert res.aggregate() == {"CTR": 1.0, "CTR@2": 0.0}


# --------------------------------------------------------------------------------------------------
# Log metrics in irspec: the input kind, plans, outputs


def test_log_metrics_declare_the_log_input(online):
    assert {d.needs for n, d in online.definitions.items() if d.plugin == "irspec_online.plugin"} == {"log"}
    assert online.reader("log").plugin == "irspec_online.plugin"
    assert online.reader("LOG").suffixes == (
        ".jsonl",
        ".jsonl.gz",
        ".ndjson",
        ".ndjson.gz",
        ".parquet",
        ".pq",
    )


def test_log_metrics_are_not_evaluated_on_runs_and_inputs_do_not_mix():
    with pytest.raises(irspec.EvaluationError, match=r"CTR is computed from a 'log' input.*evaluate_input"):
        irspec.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "nDCG CTR")
    with pytest.raises(irspec.EvaluationError, match="different inputs"):
        irspec.evaluate_input(EXAMPLE, "CTR nDCG@10")
    with pytest.raises(irspec.EvaluationError, match=re.escape("use irspec.evaluate")):
        irspec.evaluate_input(EXAMPLE, "nDCG@10")


def _plan(tmp_path: Path, text: str) -> Path:
    shutil.copy(EXAMPLE, tmp_path / "interactions.jsonl")
    shutil.copytree(DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_plan_with_only_a_log(tmp_path):
    from irspec.plan import load_plan, render_outputs, run_plan

    path = _plan(
        tmp_path,
        "log: interactions.jsonl\nmetrics: CTR, Abandonment, QueriesPer(hour)\n"
        "output: [{format: table, per_query: true, intervals: none}, {format: json, path: out.json}, {format: csv}]\n",
    )
    plan = load_plan(path)
    assert plan.qrels is None and plan.runs == () and plan.log == tmp_path / "interactions.jsonl"
    report = run_plan(plan)
    assert report.results == () and len(report.inputs) == 1
    table, doc, csv = (text for _, text in render_outputs(report))
    assert "interactions  all    0.5000       0.2500" in table
    assert json.loads(doc)["runs"][0]["aggregate"] == {
        "CTR": 0.5,
        "Abandonment": 0.25,
        "QueriesPer(unit=hour)": 2.0,
    }
    assert "interactions,all,CTR,0.5" in csv


def test_a_plan_with_a_log_beside_runs_compares_the_runs_and_reports_the_log(tmp_path):
    from irspec.plan import load_plan, render_outputs, run_plan

    path = _plan(
        tmp_path,
        "qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run, demo/runs/dense.run]\nlog: interactions.jsonl\n"
        "metrics: [nDCG@10, CTR]\ncompare: {baseline: bm25}\noutput: [{format: table}, {format: json}, {format: html}]\n",
    )
    report = run_plan(load_plan(path))
    assert [r.run_name for r in report.results] == ["bm25", "dense"]
    assert [str(m) for m in report.results[0].metrics] == ["nDCG@10"]
    assert {c.metric for c in report.comparisons} == {"nDCG@10"}
    assert [str(m) for m in report.inputs[0].metrics] == ["CTR"]
    table, doc, page = (text for _, text in render_outputs(report))
    assert "bm25 (baseline)" in table and "interactions  0.5000" in table
    assert "2 runs, 1 log, 2 metrics" in page  # the log is not counted as a run
    data = json.loads(doc)
    assert data["metrics"] == ["nDCG@10", "CTR"]
    assert [r["name"] for r in data["runs"]] == ["bm25", "dense", "interactions"]


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("log: interactions.jsonl\nmetrics: [CTR, nDCG@10]\n", ["nDCG@10 is computed from qrels and runs"]),
        ("qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nmetrics: [nDCG@10, CTR]\n",
         ["CTR is computed from an interaction log; give one with the log key"]),
        ("qrels: demo/qrels.txt\nruns: [demo/runs/bm25.run]\nlog: interactions.jsonl\nmetrics: nDCG@10\n",
         ["log: no metric of the plan is computed from the log"]),
        ("log: interactions.jsonl\nmetrics: CTR\ncompare: {}\n", ["compare: comparing needs runs"]),
        ("log: nothere.jsonl\nmetrics: CTR\n", ["log: log file not found"]),
        ("log: interactions.jsonl\nqrels: demo/qrels.txt\nmetrics: CTR\n", ["missing required key 'runs'"]),
    ],
)  # fmt: skip
def test_plan_problems_with_logs(tmp_path, text, fragments):
    from irspec.plan import load_plan

    path = _plan(tmp_path, text)
    with pytest.raises(irspec.PlanError) as info:
        load_plan(path)
    problems = "\n".join(info.value.problems)
    for fragment in fragments:
        assert fragment in problems


def test_a_log_plan_without_the_plugin_says_what_is_missing(tmp_path):
    from irspec.plan import load_plan
    from irspec.spec.plugins import build_registry, get_plugin_manager, use_registry

    path = _plan(tmp_path, "log: interactions.jsonl\nmetrics: CTR\n")
    with (
        use_registry(build_registry(get_plugin_manager(load_entry_points=False))),
        pytest.raises(irspec.PlanError, match="unknown metric 'CTR'"),
    ):
        load_plan(path)


# --------------------------------------------------------------------------------------------------
# The plugin as a package


def test_declaring_the_metrics_imports_neither_numpy_nor_the_reader():
    import subprocess
    import sys

    code = (
        "import sys, irspec_online.plugin; "
        "print(sorted(m for m in ('numpy', 'irspec_online.records', 'irspec_online.log', 'irspec_online.kernels') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_installed_entry_point_is_found_with_its_distribution(monkeypatch):
    try:
        dist = importlib.metadata.distribution("irspec-online")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("irspec-online is importable but not installed")
    from irspec.spec.plugins import get_plugin_manager, plugin_report

    monkeypatch.delenv("IRSPEC_LOAD_PLUGINS", raising=False)
    pm = get_plugin_manager(load_entry_points=True)
    (entry,) = [r for r in plugin_report(pm) if r["name"] == "online"]
    assert entry["distribution"] == f"irspec-online {dist.version}"
    assert entry["readers"] == ["log"]
    assert entry["metrics"] == ["Abandonment", "CTR", "ClippedIPS", "IPS", "Interleaving", "QueriesPer", "SNIPS",
                                "SessionSuccess", "ZRR"]  # fmt: skip
    assert entry["interleaving"] == ["Balanced", "Optimized", "Probabilistic", "TeamDraft"]
    assert entry["click_models"] == ["CM", "DBN", "DCM", "PBM", "Swap", "UBM"]
    assert entry["commands"] == ["clickmodel", "interleave", "online", "simulate"]


def test_timestamps_in_the_example_are_what_the_comments_say():
    data = read_log(str(EXAMPLE))
    first = datetime.fromtimestamp(data.time[0], tz=timezone.utc)
    assert first == datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc)
    assert data.sessions == ("s1", "s2", "s3", "s4")
