"""Inputs other than qrels and runs (irspec.evaluation.inputs), with a toy reader plugin defined here.

The path is general: nothing here (or in irspec) knows irspec-online. A plugin registers a reader for an
input kind and metrics that need it; ``evaluate_input`` asks the registry for the reader, and plans name
a ``log`` input that the reader registered as ``log`` reads.
"""

from __future__ import annotations

import json
import math
import re
import textwrap

import numpy as np
import pytest

import irspec
from irspec import EvaluationError, InputReader, MetricDef, Param, PlanError
from irspec.testing import registered_plugin


class Visits:
    """The toy input: one visit per line, ``VISITOR SECONDS``; items are the visits."""

    def __init__(self, ids, visitor, seconds, name=None):
        self.ids = ids
        self.visitor = visitor
        self.seconds = seconds
        if name:
            self.name = name


def read_visits(source):
    if isinstance(source, list):  # records in memory
        rows = source
    else:
        with open(source, encoding="utf-8") as f:
            rows = [line.split() for line in f if line.strip()]
    ids = tuple(f"v{i + 1}" for i in range(len(rows)))
    return Visits(ids, np.array([r[0] for r in rows]), np.array([float(r[1]) for r in rows]))


def long_visit(data, metric):
    return (data.seconds >= metric.get("t")).astype(float)


def per_visitor_total(data, metric):
    """A per-visitor value on each visitor's first visit, NaN elsewhere: the mean is over visitors."""
    out = np.full(len(data.ids), np.nan)
    _, first = np.unique(data.visitor, return_index=True)
    for i in first:
        out[i] = data.seconds[data.visitor == data.visitor[i]].sum()
    return out


def make_plugin(kind: str = "visits"):
    class VisitsPlugin:
        @irspec.hookimpl
        def irspec_register_readers(self, register):
            register(InputReader(kind, read_visits, suffixes=(".visits",), summary="visits"))

        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(
                MetricDef(
                    "LongVisit",
                    "visits of at least t seconds",
                    (Param("t", "float", 60.0, "threshold", minimum=0),),
                    positional="t",
                    needs=kind,
                    compute=long_visit,
                )
            )
            register(MetricDef("VisitorTime", "seconds per visitor", needs=kind, compute=per_visitor_total))

    return VisitsPlugin()


@pytest.fixture
def visits(tmp_path, irspec_plugin):
    irspec_plugin(make_plugin())
    path = tmp_path / "week.visits"
    path.write_text("ann 30\nbob 90\nann 75\ncid 10\n", encoding="utf-8")
    return path


def test_evaluate_input_reads_with_the_registered_reader_and_returns_a_result(visits):
    res = irspec.evaluate_input(visits, "LongVisit LongVisit(20) VisitorTime")
    assert res.run_name == "week" and res.run_source == str(visits)
    assert res.query_ids == ("v1", "v2", "v3", "v4")
    assert res.values[:, 0].tolist() == [0.0, 1.0, 1.0, 0.0]
    assert res.aggregate() == {"LongVisit": 0.5, "LongVisit(t=20)": 0.75, "VisitorTime": (105 + 90 + 10) / 3}
    assert math.isnan(res.per_query()["v3"]["VisitorTime"])  # ann's second visit: left out
    assert res.options == irspec.evaluation.context.Options()


def test_evaluate_input_takes_records_a_name_and_an_explicit_kind(visits):
    res = irspec.evaluate_input([["x", "100"]], [irspec.parse("LongVisit")], kind="VISITS", name="today")
    assert res.run_name == "today" and res.run_source == "<VISITS>"
    assert res.aggregate() == {"LongVisit": 1.0}


def test_the_metrics_must_all_need_the_kind_asked_for(visits):
    with pytest.raises(EvaluationError, match="different inputs"):
        irspec.evaluate_input(visits, "LongVisit nDCG")
    with pytest.raises(
        EvaluationError, match="LongVisit is computed from a 'visits' input, not from a 'log' input"
    ):
        irspec.evaluate_input(visits, "LongVisit", kind="log")
    with pytest.raises(
        EvaluationError, match=re.escape("computed from qrels and a run; use irspec.evaluate")
    ):
        irspec.evaluate_input(visits, "AP")
    with pytest.raises(
        EvaluationError, match="LongVisit is computed from a 'visits' input, not from qrels and runs"
    ):
        irspec.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "AP LongVisit")


def test_a_kind_without_a_reader_is_a_clear_error(irspec_plugin):
    class OnlyMetric:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(
                MetricDef("Orphan", "needs an input nobody reads", needs="telemetry", compute=long_visit)
            )

    irspec_plugin(OnlyMetric())
    with pytest.raises(EvaluationError, match="no installed plugin reads 'telemetry' inputs"):
        irspec.evaluate_input("anything", "Orphan")


def test_a_reader_or_metric_that_breaks_the_contract_is_named(irspec_plugin, tmp_path):
    class Broken:
        @irspec.hookimpl
        def irspec_register_readers(self, register):
            register(InputReader("bad", lambda source: [1, 2, 3]))
            register(InputReader("short", lambda source: Visits(("a", "b"), None, None)))

        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(MetricDef("OnBad", "x", needs="bad", compute=lambda d, m: np.zeros(3)))
            register(MetricDef("OnShort", "x", needs="short", compute=lambda d, m: np.zeros(3)))

    irspec_plugin(Broken(), name="broken-plugin")
    with pytest.raises(
        EvaluationError, match="'bad' reader of plugin 'broken-plugin' returned a list without the ids"
    ):
        irspec.evaluate_input("x", "OnBad")
    with pytest.raises(EvaluationError, match=r"OnShort returned shape \(3,\), expected \(2,\)"):
        irspec.evaluate_input("x", "OnShort")


def test_reader_functions_may_be_module_strings_imported_late(irspec_plugin, tmp_path, monkeypatch):
    (tmp_path / "irspec_test_late_reader.py").write_text(
        "import types\n"
        "def read(source):\n"
        "    return types.SimpleNamespace(ids=('a', 'b'), name='late')\n"
        "def ones(data, metric):\n"
        "    return [1.0] * len(data.ids)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    class Late:
        @irspec.hookimpl
        def irspec_register_readers(self, register):
            register(InputReader("late", "irspec_test_late_reader:read"))

        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(MetricDef("Ones", "1 per item", needs="late", compute="irspec_test_late_reader:ones"))

    irspec_plugin(Late())
    res = irspec.evaluate_input("whatever", "Ones")
    assert (res.run_name, res.query_ids, res.aggregate()) == ("late", ("a", "b"), {"Ones": 1.0})


# --------------------------------------------------------------------------------------------------
# Reports of mixed results (a plan's runs and its log)


def test_tables_and_json_take_results_with_different_metrics(visits):
    from irspec.report import to_json, to_table

    log = irspec.evaluate_input(visits, "LongVisit")
    run = irspec.evaluate({"q1": {"d": 1}}, {"q1": {"d": 1.0}}, "P@1 AP")
    table = to_table([run, log])
    first, second = table.split("\n\n")
    assert first.splitlines()[0].split() == ["run", "P@1", "AP"]
    assert second.splitlines()[0].split() == ["run", "LongVisit"]
    assert to_table([run, run]).count("\n\n") == 0  # one table when the metrics agree
    doc = json.loads(to_json([run, log]))
    assert doc["metrics"] == ["P@1", "AP", "LongVisit"]
    assert doc["runs"][1]["aggregate"] == {"LongVisit": 0.5}


# --------------------------------------------------------------------------------------------------
# Plans: the log key (read by the reader registered as "log")


def _plan(tmp_path, text: str):
    (tmp_path / "week.visits").write_text("ann 30\nbob 90\nann 75\ncid 10\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n", encoding="utf-8")
    (tmp_path / "a.run").write_text(
        "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\n", encoding="utf-8"
    )
    (tmp_path / "b.run").write_text(
        "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d3 1 1.0 b\n", encoding="utf-8"
    )
    path = tmp_path / "plan.yaml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_a_plan_may_name_only_a_log(tmp_path, irspec_plugin):
    from irspec.plan import load_plan, render_outputs, run_plan

    irspec_plugin(make_plugin("log"))
    plan = load_plan(_plan(tmp_path, "log: week.visits\nmetrics: LongVisit, VisitorTime\n"))
    assert (plan.qrels, plan.runs, plan.log) == (None, (), tmp_path / "week.visits")
    report = run_plan(plan)
    assert report.results == ()
    (log,) = report.inputs
    assert log.aggregate() == {"LongVisit": 0.5, "VisitorTime": 205 / 3}
    ((_, table),) = render_outputs(report)
    assert table.splitlines()[2].split() == ["week", "0.5000", "68.3333"]


def test_a_plan_may_name_a_log_beside_runs(tmp_path, irspec_plugin):
    from irspec.plan import load_plan, run_plan

    irspec_plugin(make_plugin("log"))
    path = _plan(
        tmp_path,
        "qrels: qrels.txt\nruns: [a.run, b.run]\nlog: week.visits\nmetrics: [RR, LongVisit]\ncompare: {}\n",
    )
    report = run_plan(load_plan(path))
    assert [(r.run_name, r.aggregate()) for r in report.results] == [("a", {"RR": 1.0}), ("b", {"RR": 0.75})]
    assert [c.metric for c in report.comparisons] == ["RR"]
    assert report.inputs[0].aggregate() == {"LongVisit": 0.5}


def test_a_plan_log_needs_a_reader_named_log(tmp_path, irspec_plugin):
    from irspec.plan import load_plan

    irspec_plugin(make_plugin("visits"))  # metrics that need "visits": a plan cannot name that input
    with pytest.raises(PlanError) as info:
        load_plan(_plan(tmp_path, "log: week.visits\nmetrics: LongVisit\n"))
    problems = "\n".join(info.value.problems)
    assert "LongVisit is computed from a 'visits' input, which a plan cannot name" in problems
    assert "no metric of the plan is computed from the log" in problems


@pytest.mark.parametrize(
    ("doc", "ok"),
    [
        ({"log": "l.jsonl", "metrics": "CTR"}, True),
        ({"log": "l.jsonl", "qrels": "q", "runs": ["a"], "metrics": "CTR"}, True),
        ({"log": "l.jsonl", "qrels": "q", "metrics": "CTR"}, False),
        ({"log": "l.jsonl", "runs": ["a"], "metrics": "CTR"}, False),
        ({"log": "", "metrics": "CTR"}, False),
        ({"metrics": "CTR"}, False),
        ({"log": "l.jsonl"}, False),
    ],
)
def test_the_schema_takes_a_log_instead_of_or_beside_qrels_and_runs(doc, ok):
    from jsonschema import Draft202012Validator

    from irspec.plan import schema

    assert Draft202012Validator(schema()).is_valid(doc) is ok


def test_missing_qrels_or_runs_are_reported_by_name(tmp_path):
    from irspec.plan import load_plan

    with pytest.raises(PlanError) as info:
        load_plan(_plan(tmp_path, "log: week.visits\nruns: [a.run]\nmetrics: AP\n"))
    assert any(p.endswith("missing required key 'qrels'") for p in info.value.problems)


def test_registered_plugin_and_the_fixture_leave_nothing_behind():
    with pytest.raises(irspec.UnknownMetricError):
        irspec.parse("LongVisit")
    with registered_plugin(make_plugin()):
        assert str(irspec.parse("LongVisit(30)")) == "LongVisit(t=30)"
    with pytest.raises(irspec.UnknownMetricError):
        irspec.parse("LongVisit")
