"""irspec-diversity on a real local Spark (pyspark, Java 17): the values of :func:`irspec.evaluate` on the
same qrels with subtopics, bit for bit, per query and in aggregate.

Spark reads the qrels with subtopics as the engine does in-process: each bucket's rows go through
:func:`irspec.evaluation.judgments.read_judgments`, so the plugin's reader and kernels run in the Spark workers. The
in-process values are the reference (held to pyndeval's by test_ndeval_reference.py); one case is held
to pyndeval here too. The workers load the installed plugin by its entry point, as a user's would.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

import irspec
from irspec.errors import InputError, IrspecWarning

pytest.importorskip(
    "irspec_diversity",
    reason="irspec-diversity is not installed: pip install -e plugins/irspec-diversity[test]",
)
pytest.importorskip("pyspark", reason="the Spark tests need pyspark: pip install 'irspec[spark]'")

import irspec_diversity.plugin
from test_ndeval_reference import random_collection, reference

from irspec.evaluation import spark as irs

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # pyspark 4.x's note on pandas 3

METRICS = (
    "alpha_nDCG@5, alpha_nDCG(alpha=0.3)@20, alpha_DCG@10, ERR_IA@20, nERR_IA(alpha=0.9)@10, NRBP(beta=0.8), "
    "nNRBP, P_IA@10, P_IA(judged_only=true)@5, StRecall@10, AP_IA, StRecall(rel=2)@20, P@10, nDCG@20"
)


@pytest.fixture(scope="module")
def spark():
    session = irs.session(
        "local[2]",
        {
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": "1g",
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    # irspec's test session switches entry-point plugins off (tests/conftest.py) and the workers inherit
    # that; they load the installed plugin as a user's workers do. (Python functions made from here on
    # carry this environment to their workers.)
    environment = session.sparkContext.environment
    before = environment.get("IRSPEC_DISABLE_PLUGIN_AUTOLOAD")
    environment["IRSPEC_DISABLE_PLUGIN_AUTOLOAD"] = ""
    yield session
    if before is None:
        environment.pop("IRSPEC_DISABLE_PLUGIN_AUTOLOAD")
    else:
        environment["IRSPEC_DISABLE_PLUGIN_AUTOLOAD"] = before


def joined(seeds):
    """Several random collections as one: qrels rows (query, subtopic, docno, label) and a run, query
    ids prefixed by the seed so they stay apart."""
    qrels, run = [], {}
    for seed in seeds:
        q, r = random_collection(np.random.default_rng(seed))
        qrels += [(f"s{seed}:{qid}", s, d, label) for qid, s, d, label in q]
        run.update({f"s{seed}:{qid}": docs for qid, docs in r.items()})
    return qrels, run


def subtopic_frame(spark, qrels, subtopic="subtopic_id"):
    return spark.createDataFrame(qrels, f"query_id string, {subtopic} string, doc_id string, relevance long")


def run_frame(spark, runs):
    rows = [(name, q, d, s) for name, run in runs.items() for q, docs in run.items() for d, s in docs.items()]
    return spark.createDataFrame(rows, "run string, query_id string, doc_id string, score double")


def same(got, want) -> None:
    """Equal results to the last bit: per-query values (NaN equal to NaN) and aggregates."""
    assert got.query_ids == want.query_ids
    assert [str(m) for m in got.metrics] == [str(m) for m in want.metrics]
    np.testing.assert_array_equal(got.values, want.values)
    assert got.aggregate() == want.aggregate()


OPTION_SETS = [
    {},
    {"relevance_level": 2, "depth": 12},
    {"judged_only": True, "missing_queries": "skip"},
]


@pytest.mark.parametrize(
    "options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_spark_gives_the_in_process_values(irspec_plugin, spark, options):
    irspec_plugin(irspec_diversity.plugin)
    qrels, run_a = joined(range(6))
    # another run: the first one upside down, without the queries q1 of each collection
    runs = {
        "a": run_a,
        "b": {q: {d: -s for d, s in docs.items()} for q, docs in run_a.items() if not q.endswith(":q1")},
    }
    frame = pl.DataFrame(qrels, schema=["query_id", "subtopic_id", "doc_id", "relevance"], orient="row")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        want = [irspec.evaluate(frame, runs[name], METRICS, **options) for name in ("a", "b")]
        per_query = irs.evaluate(
            subtopic_frame(spark, qrels), run_frame(spark, runs), METRICS, partitions=3, **options
        )
        got = irs.results(per_query)
    assert [r.run_name for r in got] == ["a", "b"]
    for g, w in zip(got, want, strict=True):
        same(g, w)


def test_pyndeval_s_values_on_spark(irspec_plugin, spark):
    """Independent of the in-process path: ndeval's own values (pyndeval), on a run without ties (pyndeval
    breaks ties its own way)."""
    irspec_plugin(irspec_diversity.plugin)
    rng = np.random.default_rng(12)
    qrels, run = random_collection(rng)
    run = {q: {d: float(i) for i, d in enumerate(rng.permutation(list(docs)))} for q, docs in run.items()}
    expected = reference(qrels, run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        per_query = irs.evaluate(
            subtopic_frame(spark, qrels, "iteration"),
            run_frame(spark, {"r": run}),
            "alpha_nDCG@10, NRBP, P_IA@20, StRecall@10, AP_IA",
        )
        (got,) = irs.results(per_query)
    compared = 0
    for query, values in expected.items():
        mine = got.per_query()[query]
        assert mine["alpha_nDCG@10"] == values["alpha-nDCG@10"]
        assert mine["NRBP"] == values["NRBP"]
        assert mine["P_IA@20"] == values["P-IA@20"]
        assert mine["StRecall@10"] == values["strec@10"]
        assert mine["AP_IA"] == values["MAP-IA"]
        compared += 1
    assert compared >= 5


def test_a_bad_judgment_in_a_task_is_an_input_error(irspec_plugin, spark):
    irspec_plugin(irspec_diversity.plugin)
    qrels = subtopic_frame(spark, [("1", "1", "a", 1), ("1", "1", "a", 0)])
    run = run_frame(spark, {"r": {"1": {"a": 1.0}}})
    with pytest.raises(
        InputError, match=r"^<Spark qrels>: document 'a' is judged twice for subtopic '1' of query '1'"
    ):
        irs.aggregate(irs.evaluate(qrels, run, "alpha_nDCG@20"))
    nameless = spark.createDataFrame([("1", "a", 1)], "topic string, doc_id string, relevance long")
    with pytest.raises(InputError, match=r"<Spark qrels>: no column for query \(expected query_id/qid"):
        irs.evaluate(nameless, run, "alpha_nDCG@20")


def test_a_plan_with_engine_spark(irspec_plugin, spark, tmp_path):
    """A plan's qrels file with subtopics, read by Spark (its second field, the subtopic, kept as
    ``iteration``), gives the embedded plan's results."""
    from irspec.plan import load_plan, run_plan

    irspec_plugin(irspec_diversity.plugin)
    qrels, run = joined(range(20, 23))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} {s} {d} {label}\n" for q, s, d, label in qrels))
    (tmp_path / "run.txt").write_text(
        "".join(f"{q} Q0 {d} 0 {s} sys\n" for q, docs in run.items() for d, s in docs.items())
    )
    plan = (
        f"qrels: {tmp_path / 'qrels.txt'}\nruns:\n  - {{name: sys, path: {tmp_path / 'run.txt'}}}\n"
        "metrics: [alpha_nDCG@20, ERR_IA@10, NRBP, P@5]\noutput:\n  - {format: table}\n"
    )
    (tmp_path / "embedded.yaml").write_text(plan)
    (tmp_path / "spark.yaml").write_text(plan + "engine: {spark: {partitions: 2}}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        (want,) = run_plan(load_plan(tmp_path / "embedded.yaml")).results
        (got,) = run_plan(load_plan(tmp_path / "spark.yaml")).results
    same(got, want)
