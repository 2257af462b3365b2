"""A run's result (irspec.evaluation.result): one class, whoever made it, shown in a notebook; its means
derived from its values, never carried along; a streamed input's means a result of their own.

Expected values are written out here as arithmetic on the judgments and runs given.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

import irspec
from irspec import report
from irspec.evaluation.evaluate import evaluate_many
from irspec.evaluation.result import StreamedResult

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}
RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 1.0}, "q3": {"d": 1.0}}  # P@1: 1, 0, 1


def test_every_way_of_evaluating_a_run_gives_the_one_result_class():
    made = [
        irspec.evaluate(QRELS, RUN, "P@1"),
        irspec.evaluate(QRELS, {"r": RUN}, "P@1")["r"],
        irspec.Evaluator(QRELS, "P@1").evaluate(RUN),
        irspec.Evaluator(QRELS, "P@1").evaluate_topk(["q1"], [["a", "b"]], [[2.0, 1.0]]),
        evaluate_many(QRELS, [RUN], "P@1")[0],
        irspec.evaluate_many(QRELS, [RUN], "P@1")[0],
        dataclasses.replace(irspec.evaluate(QRELS, RUN, "P@1"), run_name="renamed"),
    ]
    for res in made:
        assert type(res) is irspec.Result
        assert "<table" in res._repr_html_() and "P@1" in res._repr_markdown_()
        assert repr(res).startswith("Result(")


def test_a_result_of_the_engine_shows_its_means_in_a_notebook():
    res = evaluate_many(QRELS, [RUN], "P@1", judged_warning=None)[0]
    assert res.aggregate() == {"P@1": (1.0 + 0.0 + 1.0) / 3}
    assert "0.6667" in res._repr_markdown_() and "0.6667" in str(res)


def test_the_means_are_those_of_the_values():
    res = irspec.evaluate(QRELS, RUN, "P@1, NumRet")
    assert res.aggregate() == {"P@1": (1.0 + 0.0 + 1.0) / 3, "NumRet": 2.0 + 1.0 + 1.0}


def test_a_replaced_result_has_the_means_of_its_own_values():
    """dataclasses.replace() makes a new result whose means are its new values': the means asked for
    before (and kept) on the old one do not travel with it."""
    res = irspec.evaluate(QRELS, RUN, "P@1")
    assert res.aggregate() == {"P@1": 2 / 3}
    halved = dataclasses.replace(res, values=np.array([[1.0], [0.0], [0.5]]))
    assert halved.aggregate() == {"P@1": (1.0 + 0.0 + 0.5) / 3}
    fewer = dataclasses.replace(res, query_ids=res.query_ids[:1], values=res.values[:1])
    assert fewer.aggregate() == {"P@1": 1.0}
    assert res.aggregate() == {"P@1": 2 / 3}  # the original keeps its own


def test_a_results_values_are_read_only_so_its_means_cannot_disagree_with_them():
    """A frozen result's array was writable: written, its per-query values changed and its mean (cached)
    did not. Writing raises now, through ``values`` and through a column alike."""
    res = irspec.evaluate(QRELS, RUN, "P@1")
    assert res.aggregate() == {"P@1": (1.0 + 0.0 + 1.0) / 3}
    for write in (lambda: res.values.__setitem__((1, 0), 1.0), lambda: res.column("P@1").__setitem__(1, 1.0)):
        with pytest.raises(ValueError, match="read-only"):
            write()
    assert res.per_query()["q2"] == {"P@1": 0.0} and res.aggregate() == {"P@1": 2 / 3}
    from irspec.evaluation.systems import combine

    system = combine("s", [res, irspec.evaluate(QRELS, RUN, "P@1")])
    assert not system.values.flags.writeable and all(not r.values.flags.writeable for r in system.runs)


def test_a_result_made_of_the_callers_array_copies_it():
    """The caller's array stays the caller's: writable, and written afterwards it changes nothing in the
    result (whose mean is (1 + 0 + 1) / 3 of the values given)."""
    res = irspec.evaluate(QRELS, RUN, "P@1")
    mine = np.array([[1.0], [0.0], [1.0]])
    made = dataclasses.replace(res, values=mine)
    mine[1, 0] = 1.0  # the caller's own array: still writable
    assert made.values.tolist() == [[1.0], [0.0], [1.0]] and made.aggregate() == {"P@1": 2 / 3}
    assert not np.shares_memory(made.values, mine)
    again = dataclasses.replace(made, run_name="again")  # a read-only array is shared, not copied
    assert again.values is made.values


def test_a_copied_or_unpickled_result_keeps_its_values_read_only():
    """numpy gives a writable array back from a pickle or a deep copy: the result makes it read-only."""
    res = irspec.evaluate(QRELS, RUN, "P@1")
    res.aggregate()  # its means cached, and carried along
    for other in (pickle.loads(pickle.dumps(res)), copy.deepcopy(res), copy.copy(res)):
        assert not other.values.flags.writeable
        assert other.values.tolist() == [[1.0], [0.0], [1.0]] and other.aggregate() == {"P@1": 2 / 3}


def test_the_means_returned_are_a_copy():
    res = irspec.evaluate(QRELS, RUN, "P@1")
    res.aggregate()["P@1"] = 99.0
    assert res.aggregate() == {"P@1": 2 / 3}


# A toy input read in one streamed pass: its reader takes per_query, and with per_query=False returns an
# object whose evaluate() gives each metric's mean (here made up, so that none could come from rows).
class Counted:
    ids: tuple[str, ...] = ()

    def evaluate(self, metrics):
        return {str(m): 0.25 for m in metrics}, (), ("counted in one pass",)


class Listed:
    def __init__(self):
        self.ids = ("a", "b")


def read_counts(source, per_query=True):
    return Listed() if per_query else Counted()


def ones(data, metric):
    return np.ones(len(data.ids))


class CountsPlugin:
    @irspec.hookimpl
    def irspec_register_readers(self, register):
        register(irspec.InputReader("counts", read_counts, summary="counts"))

    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        register(irspec.MetricDef("Ones", "1 per item", needs="counts", compute=ones))


def test_a_streamed_input_is_a_result_of_its_own_with_the_means_it_was_given(irspec_plugin):
    irspec_plugin(CountsPlugin())
    whole = irspec.evaluate_input("x", "Ones", name="n")
    assert type(whole) is irspec.Result and whole.aggregate() == {"Ones": 1.0}
    res = irspec.evaluate_input("x", "Ones", name="n", per_query=False)
    assert type(res) is StreamedResult and not isinstance(res, irspec.Result)
    assert res.aggregate() == {"Ones": 0.25}  # given, not derived (no rows to derive them from)
    assert res.query_ids == () and res.values.shape == (0, 1) and res.per_query() == {}
    assert res.warnings == ("counted in one pass",) and res.judged_at_10 is None
    assert res.to_frame().height == 0
    assert dataclasses.replace(res, run_name="m").aggregate() == {"Ones": 0.25}
    assert repr(res) == "StreamedResult('n', metrics=[Ones], means only)"
    # shown, and rendered by every report, as a result is: its means, no per-query rows
    assert "0.2500" in res._repr_markdown_() and "0.2500" in str(res) and "0.2500" in res._repr_html_()
    assert json.loads(report.to_json([res], per_query=True))["runs"][0]["aggregate"] == {"Ones": 0.25}
    assert report.to_trec([res], per_query=True).split() == ["Ones", "all", "0.2500"]


def test_a_result_pickles_and_loads_in_another_process(tmp_path):
    """Its metrics pickle by name and parameters (their definitions hold lambdas, which pickle refuses)
    and find their definitions in the registry of the process that loads them."""
    res = irspec.evaluate(QRELS, RUN, "P@1, nDCG@2, AP, utility.1,-1,0,0.5, official", judged_warning=None)
    back = pickle.loads(pickle.dumps(res))
    assert back.metrics == res.metrics and [m.trec_name for m in back.metrics] == [
        m.trec_name for m in res.metrics
    ]
    assert back.query_ids == res.query_ids and np.array_equal(back.values, res.values, equal_nan=True)
    assert copy.deepcopy(res).aggregate() == res.aggregate()
    path = tmp_path / "result.pickle"
    path.write_bytes(pickle.dumps(res))
    code = f"import pickle; r = pickle.load(open({str(path)!r}, 'rb')); print(r.aggregate()['P@1'], r.metrics[3].trec_name)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(res.aggregate()["P@1"]), "utility_1,-1,0,0.5"]


def test_a_plugin_metric_pickles_by_value_and_loads_where_its_plugin_is_not(irspec_plugin):
    """A Spark worker, say, whose registry has not the plugin the driver registered."""

    class Plugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(irspec.MetricDef("Twice", "P@1 again", compute="irspec.builtin.kernels.sets:precision"))

    registry = irspec_plugin(Plugin(), name="twice")
    (metric,) = registry.parse("Twice")
    (builtin,) = registry.parse("P@5")
    data, by_name = pickle.dumps(metric), pickle.dumps(builtin)
    irspec_plugin()  # the plugin gone
    back = pickle.loads(data)
    assert back == metric and back.definition.plugin == "twice"
    assert pickle.loads(by_name).definition is irspec.spec.plugins.get_registry().definitions["P"]


def test_a_text_metric_of_a_run_without_evaluated_queries_keeps_its_empty_strings(tmp_path, capsys):
    """A run answering none of the qrels' queries (skipped), or qrels without judgments: no query is
    evaluated, and relstring has no string to show; trec_eval's format printed its per-query lines by
    looking the metric's strings up, and failed (KeyError) when the result had none."""
    import warnings

    from irspec.cli import main

    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "r.run").write_text("2 Q0 a 1 1.0 t\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        res = irspec.evaluate(
            str(tmp_path / "q.txt"), str(tmp_path / "r.run"), "relstring@10, P@5", missing_queries="skip"
        )
    assert res.query_ids == () and res.texts == {"relstring@10": ()}
    # no query: no per-query line; relstring has no summary line (trec_eval prints none), P@5's mean of no query
    assert report.to_trec([res], per_query=True).split() == ["P_5", "all", "0.0000"]
    for qrels, extra in (("q.txt", ["--missing-queries", "skip"]), ("empty.txt", [])):
        argv = [
            "eval",
            "-q",
            "-m",
            "relstring@10",
            *extra,
            "--format",
            "trec",
            str(tmp_path / qrels),
            str(tmp_path / "r.run"),
        ]
        assert main(argv) == 0
        assert capsys.readouterr().out == ""
