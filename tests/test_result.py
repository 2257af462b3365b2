"""A run's result (irspec.evaluation.result): one class, whoever made it, shown in a notebook.

Expected values are written out here as arithmetic on the judgments and runs given.
"""

from __future__ import annotations

import dataclasses

import irspec
from irspec.evaluation.evaluate import evaluate_many

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
