"""Inputs read in place of the qrels (``InputReader(..., as_qrels=True)``): the reader's data object gives
the qrels of every metric and, through ``ctx.input(kind)``, its own data to the metrics that need it.

A toy plugin here: "pairs" qrels, whose lines ``query docno label weight`` carry a weight per judgment;
``WeightedHits@k`` sums the weights of the top k documents (k = 2 by default, shown: ``WeightedHits@2``). Its expected values are written out by hand.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import irspec
from irspec import InputReader, MetricDef, Param
from irspec.data import Qrels, read_qrels, read_run
from irspec.evaluation.evaluate import evaluate_many
from irspec.evaluation.judgments import Judgments, read_judgments


class Weighted:
    def __init__(self, rows):
        self.weights = {(q, d): float(w) for q, d, _, w in rows}
        self.qrels = read_qrels({q: {d: int(label) for qq, d, label, _ in rows if qq == q} for q, *_ in rows})
        self.ids = tuple(sorted({q for q, *_ in rows}))


def read_weighted(source):
    if isinstance(source, list):
        return Weighted(source)
    with open(source, encoding="utf-8") as f:
        return Weighted([line.split() for line in f if line.strip()])


def weighted_hits(ctx, metric):
    data = ctx.input("weighted")
    docnos = ctx.frame.get_column("docno").to_list()
    out = np.zeros(ctx.nq)
    for i, q in enumerate(ctx.query_ids):
        top = docnos[ctx.offsets[i] : ctx.offsets[i + 1]][: metric.get("k")]
        out[i] = sum(data.weights.get((q, d), 0.0) for d in top)
    return out


class Plugin:
    @irspec.hookimpl
    def irspec_register_readers(self, register):
        register(InputReader("weighted", read_weighted, as_qrels=True))
        register(InputReader("plain", read_weighted))

    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        k = Param("k", "int", 2, "cutoff", minimum=1)
        register(
            MetricDef(
                "WeightedHits", "weights of the top k", (k,), at="k", needs="weighted", compute=weighted_hits
            )
        )
        register(
            MetricDef(
                "PlainHits",
                "not over qrels",
                (k,),
                at="k",
                needs="plain",
                compute=lambda data, m: np.zeros(1),
            )
        )


ROWS = [["q1", "a", "1", "0.5"], ["q1", "b", "0", "2"], ["q1", "c", "2", "0.25"], ["q2", "z", "1", "1"]]
RUN = {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}, "q2": {"y": 1.0}}


def test_a_metric_gets_the_input_and_ordinary_metrics_its_qrels(irspec_plugin):
    irspec_plugin(Plugin())
    res = irspec.evaluate(ROWS, RUN, "WeightedHits WeightedHits@3 P@2 NumRel")
    assert res.per_query() == {
        # ranking b, a, c: weights 2 + 0.5 = 2.5 in the top 2, + 0.25 in the top 3
        "q1": {"WeightedHits@2": 2.5, "WeightedHits@3": 2.75, "P@2": 0.5, "NumRel": 2.0},
        "q2": {"WeightedHits@2": 0.0, "WeightedHits@3": 0.0, "P@2": 0.0, "NumRel": 1.0},
    }


def test_read_once_for_several_runs(irspec_plugin, tmp_path):
    irspec_plugin(Plugin())
    path = tmp_path / "weighted.txt"
    path.write_text("".join(" ".join(r) + "\n" for r in ROWS))
    metrics = [irspec.parse("WeightedHits@1")]
    judgments = read_judgments(str(path), metrics)
    assert isinstance(judgments, Judgments) and set(judgments.inputs) == {"weighted"}
    assert read_judgments(judgments, metrics) is judgments
    plain = read_judgments(read_qrels({"q1": {"a": 1}}), ["P@5"])
    with pytest.raises(irspec.EvaluationError, match="read without the 'weighted' input the metrics need"):
        evaluate_many(plain, [RUN], metrics)
    first, second = evaluate_many(judgments, [RUN, {"q1": {"c": 1.0}, "q2": {"z": 1.0}}], metrics)
    assert first.column("WeightedHits@1").tolist() == [2.0, 0.0]
    assert second.column("WeightedHits@1").tolist() == [0.25, 1.0]


def test_ordinary_metrics_read_ordinary_qrels_unchanged(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("q1 0 a 1\n")
    judgments = read_judgments(str(path), [irspec.parse("P@5")])
    assert judgments.inputs == {} and isinstance(judgments.qrels, Qrels)
    assert judgments.qrels.frame.rows() == read_qrels(str(path)).frame.rows()


def test_inputs_not_read_as_qrels_are_refused(irspec_plugin):
    irspec_plugin(Plugin())
    with pytest.raises(
        irspec.EvaluationError, match="PlainHits@2 is computed from a 'plain' input, not from qrels and runs"
    ):
        irspec.evaluate(ROWS, RUN, "PlainHits")
    with pytest.raises(
        irspec.EvaluationError, match=re.escape("computed from qrels and a run; use irspec.evaluate")
    ):
        irspec.evaluate_input(ROWS, "WeightedHits")


def test_a_kernel_asking_for_an_input_not_read_is_told_which(irspec_plugin):
    irspec_plugin(Plugin())
    from irspec.evaluation.context import Options
    from irspec.evaluation.index import index_qrels
    from irspec.evaluation.ranking import build_context

    ctx, _ = build_context(index_qrels(read_qrels({"q1": {"a": 1}})), read_run({"q1": {"a": 1.0}}), Options())
    with pytest.raises(
        irspec.EvaluationError, match=r"no 'weighted' input was read for this evaluation \(read: none\)"
    ):
        ctx.input("weighted")


def test_a_streamed_run_gets_the_input_in_every_block(irspec_plugin, tmp_path):
    irspec_plugin(Plugin())
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q{q} Q0 d{i} {i} {100 - i} r\n" for q in (1, 2) for i in range(40000)))
    rows = [["q1", "d0", "1", "1.5"], ["q2", "d1", "1", "4"]]
    res = irspec.evaluate(rows, str(run), "WeightedHits", memory="1MiB")
    assert res.per_query() == {"q1": {"WeightedHits@2": 1.5}, "q2": {"WeightedHits@2": 4.0}}


def test_a_plan_reads_its_qrels_with_the_plugin(irspec_plugin, tmp_path):
    from irspec.plan import load_plan, run_plan

    irspec_plugin(Plugin())
    (tmp_path / "weighted.txt").write_text("".join(" ".join(r) + "\n" for r in ROWS))
    (tmp_path / "a.run").write_text("q1 Q0 b 1 3 a\nq1 Q0 a 2 2 a\nq2 Q0 z 1 1 a\n")
    (tmp_path / "plan.yaml").write_text(
        "qrels: weighted.txt\nruns:\n  - {name: a, path: a.run}\nmetrics: [WeightedHits, P@2]\noutput:\n  - {format: table}\n"
    )
    (result,) = run_plan(load_plan(tmp_path / "plan.yaml")).results
    # b (2) and a (0.5) in q1's top 2; z (1) in q2's
    assert result.per_query() == {
        "q1": {"WeightedHits@2": 2.5, "P@2": 0.5},
        "q2": {"WeightedHits@2": 1.0, "P@2": 0.5},
    }
