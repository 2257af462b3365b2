"""irspec.evaluation.spark on a real local Spark (pyspark, Java 17): the same values as the in-memory engine.

Expected values come from :func:`irspec.evaluate` on the same data as dicts (itself held to trec_eval
and pytrec_eval by test_conformance.py and test_differential.py), never from the Spark path itself.
One SparkSession serves the whole file (local[2], two shuffle partitions, no UI); each evaluation
is a few Spark jobs, so the random cases are joined into one frame per option set rather than
evaluated one by one.
"""

from __future__ import annotations

import gc
import json
import math
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspark")

import pyarrow as pa

import irspec
from irspec.errors import EvaluationError, InputError, IrspecWarning, SpecError, quote
from irspec.evaluation import spark as irs
from irspec.evaluation import workers as worker_state
from irspec.evaluation.workers import spark_workers
from irspec.stats import significance

sys.path.insert(0, str(Path(__file__).parent))
from randomdata import random_case

# Every trec_eval measure (mean, sum and geometric-mean aggregates, the text-valued relstring), bpref
# with an expression, a cutoff that grows with R, and a metric with its own relevance level.
METRICS = "all_trec, bpref(10+R), P@R, P(rel=2)@10, RR(rel=3)"


@pytest.fixture(scope="session")
def spark():
    session = irs.session(
        "local[2]",
        {
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": "1g",
        },
        app_name="irspec-tests",
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _joined_cases(seeds, **kwargs):
    """Several random cases as one (qrels, run), query ids prefixed by the seed so they stay apart."""
    qrels, run = {}, {}
    for seed in seeds:
        q, r = random_case(seed, **kwargs)
        qrels.update({f"s{seed}:{qid}": docs for qid, docs in q.items()})
        run.update({f"s{seed}:{qid}": docs for qid, docs in r.items()})
    return qrels, run


def _qrels_frame(spark, qrels, names=("query_id", "doc_id", "relevance")):
    rows = [(q, d, label) for q, docs in qrels.items() for d, label in docs.items()]
    return spark.createDataFrame(rows, f"{names[0]} string, {names[1]} string, {names[2]} long")


def _run_frame(spark, runs, names=("query_id", "doc_id", "score")):
    """A frame of ``{run name: {qid: {docno: score}}}``, with a ``run`` column."""
    rows = [(name, q, d, s) for name, run in runs.items() for q, docs in run.items() for d, s in docs.items()]
    return spark.createDataFrame(rows, f"run string, {names[0]} string, {names[1]} string, {names[2]} double")


def _same(got: dict, want: dict) -> None:
    """Equal dicts of floats (NaN equal to NaN: relstring's aggregate), exactly, or of strings."""
    assert got.keys() == want.keys()
    for key in want:
        a, b = got[key], want[key]
        if isinstance(b, dict):
            _same(a, b)
        elif isinstance(b, float) and math.isnan(b):
            assert isinstance(a, float) and math.isnan(a), key
        else:
            assert a == b, (key, a, b)


def _second_run(run, seed):
    """Another run over the same queries: scores permuted within each query, every third query dropped."""
    rng = np.random.default_rng(seed)
    out = {}
    for i, (q, docs) in enumerate(sorted(run.items())):
        if i % 3 == 2:
            continue
        scores = rng.permutation(list(docs.values())) if docs else []
        out[q] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
    return out


OPTION_SETS = [
    {},
    {"depth": 7, "relevance_level": 2},
    {"judged_only": True, "missing_queries": "skip"},
    {"depth": 0, "relevance_level": 0, "collection_size": 5000},
]


@pytest.mark.parametrize(
    "options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_equals_the_in_memory_engine_per_query_and_aggregate(spark, options):
    qrels, run_a = _joined_cases(range(8), all_negative=True, near_ties=True)
    runs = {"a": run_a, "b": _second_run(run_a, 1)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        # cached: results() and aggregate() read the rows evaluated once (a Spark job costs ~0.25 s)
        per_query = irs.evaluate(
            _qrels_frame(spark, qrels), _run_frame(spark, runs), METRICS, **options
        ).cache()
        got = irs.results(per_query)
        want = [irspec.evaluate(qrels, runs[name], METRICS, **options) for name in ("a", "b")]
    assert [r.run_name for r in got] == ["a", "b"]
    for g, w in zip(got, want, strict=True):
        assert g.query_ids == w.query_ids
        assert [str(m) for m in g.metrics] == [str(m) for m in w.metrics]
        _same(g.per_query(), w.per_query())
        _same(g.aggregate(), w.aggregate())
        assert g.options == w.options
    _same(irs.aggregate(per_query, run="b"), want[1].aggregate())
    per_query.unpersist()


def test_any_number_of_buckets_gives_the_same_values(spark):
    qrels, run = _joined_cases(range(20, 24))
    q, r = _qrels_frame(spark, qrels), _run_frame(spark, {"run": run})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        one = irs.results(irs.evaluate(q, r, "official", partitions=1))[0]
        many = irs.results(irs.evaluate(q, r, "official", partitions=13))[0]
        want = irspec.evaluate(qrels, run, "official")
    _same(one.per_query(), want.per_query())
    _same(many.per_query(), want.per_query())
    _same(many.aggregate(), want.aggregate())


def test_pyterrier_columns_and_integer_ids(spark):
    qrels = spark.createDataFrame([(1, 10, 1), (1, 11, 0), (2, 20, 2)], "qid int, docno long, label int")
    run = spark.createDataFrame(
        [(1, 11, 2.0), (1, 10, 1.0), (2, 21, 5.0), (2, 20, 4.0)], "qid int, docno long, score float"
    )
    per_query = irs.evaluate(qrels, run, "P@1, AP")
    # Hand arithmetic: query 1 ranks 11 (non-relevant) then 10 (relevant): P@1 = 0, AP = 1/2.
    # Query 2 ranks 21 (unjudged) then 20 (relevant, R = 1): P@1 = 0, AP = 1/2.
    assert irs.results(per_query)[0].per_query() == {
        "1": {"P@1": 0.0, "AP": 0.5},
        "2": {"P@1": 0.0, "AP": 0.5},
    }
    assert irs.aggregate(per_query) == {"P@1": 0.0, "AP": 0.5}
    assert sorted(per_query.columns) == ["metric", "query_id", "run", "text", "value"]


def test_columns_mapping_and_a_named_single_run(spark):
    qrels = spark.createDataFrame([("t1", "x", 1), ("t1", "y", 0)], "topic string, doc string, rel int")
    run = spark.createDataFrame([("t1", "y", 3.0), ("t1", "x", 3.0)], "topic string, doc string, sim double")
    columns = {"query": "topic", "docno": "doc", "label": "rel", "score": "sim"}
    per_query = irs.evaluate(qrels, run, "P@1, relstring", columns=columns, run_name="bm25")
    (result,) = irs.results(per_query)
    # A tie at 3.0 is broken by docno descending: y (non-relevant) before x.
    assert result.run_name == "bm25"
    assert result.per_query() == {"t1": {"P@1": 0.0, "relstring@10": "01"}}
    rows = per_query.filter("metric = 'relstring@10'").collect()
    assert [(r.text, math.isnan(r.value)) for r in rows] == [("01", True)]


def test_groupby_mean_works_on_the_frame(spark):
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}
    per_query = irs.evaluate(_qrels_frame(spark, qrels), _run_frame(spark, {"r": run}), "P@1")
    # q1 ranks b (non-relevant) first: 0; q2 ranks c (relevant): 1; mean 0.5.
    assert per_query.groupBy("metric").mean("value").collect()[0][1] == 0.5


def test_results_feed_the_significance_tests(spark):
    qrels, run_a = _joined_cases(range(30, 33))
    runs = {"a": run_a, "b": _second_run(run_a, 2)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        a, b = irs.results(irs.evaluate(_qrels_frame(spark, qrels), _run_frame(spark, runs), "AP"))
        want_a, want_b = (irspec.evaluate(qrels, runs[n], "AP") for n in ("a", "b"))
    got = significance.paired(a.column("AP"), b.column("AP"))
    want = significance.paired(want_a.column("AP"), want_b.column("AP"))
    assert (got.p_value, got.mean_difference) == (want.p_value, want.mean_difference)


def test_missing_queries_error_is_raised_on_the_driver(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}, "q2": {"b": 1}})
    run = _run_frame(spark, {"r": {"q1": {"a": 1.0}}})
    with pytest.raises(
        EvaluationError, match=r"<Spark run 'r'>: 1 qrels query is missing from the run \('q2'\)"
    ):
        irs.evaluate(qrels, run, "AP", missing_queries="error")


def test_missing_and_unknown_queries_are_warned_about(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}, "q2": {"b": 1}})
    run = _run_frame(spark, {"r": {"q1": {"a": 1.0}, "q9": {"z": 1.0}}})
    with pytest.warns(IrspecWarning) as caught:
        irs.evaluate(qrels, run, "AP")
    texts = [str(w.message) for w in caught]
    assert "<Spark run 'r'>: 1 query not in the qrels ignored ('q9')" in texts
    assert any(
        t.startswith("<Spark run 'r'>: 1 of the 2 queries of the qrels is missing from the run ('q2')")
        for t in texts
    )


def test_a_bad_row_inside_a_task_is_an_input_error(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}})
    run = spark.createDataFrame(
        [("q1", "a", 1.0), ("q1", "a", 2.0)], "query_id string, doc_id string, score double"
    )
    per_query = irs.evaluate(qrels, run, "AP")
    with pytest.raises(InputError, match=r"^<Spark run 'run'>: query 'q1': duplicate docno 'a'$"):
        irs.aggregate(per_query)


def test_a_nan_score_inside_a_task_is_an_input_error(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}})
    run = spark.createDataFrame([("q1", "a", float("nan"))], "query_id string, doc_id string, score double")
    with pytest.raises(InputError, match=r"<Spark run 'run'>: query 'q1': NaN score for docno 'a'"):
        irs.aggregate(irs.evaluate(qrels, run, "AP"))


def test_bad_frames_are_input_errors_naming_the_columns(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}})
    run = spark.createDataFrame([("q1", "a", "high")], "query_id string, doc_id string, score string")
    with pytest.raises(InputError, match=r"<Spark run>: column 'score' must hold numbers, not string"):
        irs.evaluate(qrels, run, "AP")
    nameless = spark.createDataFrame([("q1", "a")], "query_id string, doc string")
    with pytest.raises(
        InputError,
        match=r"<Spark qrels>: no column for docno, label \(expected doc_id/docno or relevance/label; the frame has query_id, doc\)",
    ):
        irs.evaluate(nameless, run, "AP")
    with pytest.raises(InputError, match=r"columns= names \['qid'\]"):
        irs.evaluate(qrels, run, "AP", columns={"qid": "query_id"})
    with pytest.raises(InputError, match="expected a Spark DataFrame, got dict"):
        irs.evaluate({"q1": {"a": 1}}, run, "AP")


def test_bad_metrics_and_options_fail_before_any_task(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}})
    run = _run_frame(spark, {"r": {"q1": {"a": 1.0}}})
    with pytest.raises(SpecError, match="unknown metric"):
        irs.evaluate(qrels, run, "nDCG@10, nosuchmetric")
    with pytest.raises(EvaluationError, match="depth must be an integer"):
        irs.evaluate(qrels, run, "AP", depth=-1)
    with pytest.raises(EvaluationError, match="partitions must be a positive integer"):
        irs.evaluate(qrels, run, "AP", partitions=0)
    for huge in (2**63, int("9" * 400)):  # the bucket is xxhash64 mod partitions, a Java long (issue 21)
        with pytest.raises(
            EvaluationError,
            match=r"partitions must be a positive integer <= 9,223,372,036,854,775,807, got \d+",
        ) as info:
            irs.evaluate(qrels, run, "AP", partitions=huge)
        assert len(str(info.value)) < 200


def test_the_plan_schema_bounds_partitions_as_spark_does():
    from irspec.plan import schema

    spark_schema = schema()["properties"]["engine"]["properties"]["spark"]["properties"]["partitions"]
    assert spark_schema["maximum"] == irs.MAX_PARTITIONS == 2**63 - 1


def test_aggregate_needs_a_run_name_when_the_frame_holds_several(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}})
    run = _run_frame(spark, {"r1": {"q1": {"a": 1.0}}, "r2": {"q1": {"b": 1.0}}})
    per_query = irs.evaluate(qrels, run, "P@1")
    with pytest.raises(EvaluationError, match=r"holds 2 runs \('r1', 'r2'\); pass run="):
        irs.aggregate(per_query)
    assert irs.aggregate(per_query, run="r1") == {"P@1": 1.0}
    assert irs.aggregate(per_query, run="r2") == {"P@1": 0.0}


FIXTURES = Path(__file__).parent / "fixtures"


def test_trec_files_read_by_spark_give_the_file_results(spark, tmp_path):
    qrels, run = str(FIXTURES / "data_qrels.txt"), str(FIXTURES / "data_run.txt")
    per_query = irs.evaluate(irs.read_qrels(spark, qrels), irs.read_run(spark, run), "official, relstring")
    want = irspec.evaluate(qrels, run, "official, relstring")
    _same(irs.results(per_query)[0].per_query(), want.per_query())
    irs.read_run(spark, run).write.parquet(str(tmp_path / "run.parquet"))
    from_parquet = irs.evaluate(
        irs.read_qrels(spark, qrels), irs.read_run(spark, str(tmp_path / "run.parquet")), "official"
    )
    _same(irs.aggregate(from_parquet), irspec.evaluate(qrels, run, "official").aggregate())


def test_a_malformed_trec_line_is_reported_not_dropped(spark, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 1 high r\n")
    qrels = irs.read_qrels(spark, str(FIXTURES / "data_qrels.txt"))
    with pytest.raises(
        InputError,
        match=rf"^{bad}: query 'q1': score must be a number, got 'high' \(in the line 'q1 Q0 d2 1 high r'\)$",
    ):
        irs.aggregate(irs.evaluate(qrels, irs.read_run(spark, str(bad)), "AP"))


QRELS_LINES = "1 0 a 1\n1 0 b 0\n2 0 a 1\n"
RUN_LINES = "1 Q0 a 1 1.0\n1 Q0 b 2 0.5\n2 Q0 a 1 1\n"

# A bad line among good ones, in qrels or a run: Spark's casts (Java's rules) took 1.5d, 1.5F and 0x1p3
# as numbers, and a NUL byte as text; a wrong field count or a label beyond 64 bits was "missing label".
BAD_LINES = {
    "score 1.5d": ("run", "1 Q0 c 3 1.5d\n"),
    "score 1.5F": ("run", "1 Q0 c 3 1.5F\n"),
    "score 0x1p3": ("run", "1 Q0 c 3 0x1p3\n"),
    "score 1.5abc": ("run", "1 Q0 c 3 1.5abc\n"),
    "a NUL byte": ("run", "1 Q0 c\x00x 3 1\n"),
    # lines ended by "\r" alone: Spark ended a line there (its default), irspec's reader refuses them
    "run lines ended by a lone carriage return": ("run", "1 Q0 c 3 1\r1 Q0 d 4 0.5\r"),
    "qrels lines ended by a lone carriage return": ("qrels", "1 0 c 1\r1 0 d 0\r"),
    "run 4 fields": ("run", "1 Q0 c 3\n"),
    "qrels 3 fields": ("qrels", "1 0 c\n"),
    "qrels 5 fields": ("qrels", "1 0 c 1 extra\n"),
    "label 1.0": ("qrels", "1 0 c 1.0\n"),
    "label beyond 64 bits": ("qrels", "1 0 c 99999999999999999999\n"),
}


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bad_trec_line_is_refused_as_irspecs_own_reader_refuses_it(spark, tmp_path, case):
    kind, line = BAD_LINES[case]
    qrels, run = tmp_path / "q.txt", tmp_path / "r.run"
    qrels.write_text(QRELS_LINES + (line if kind == "qrels" else ""))
    run.write_text(RUN_LINES + (line if kind == "run" else ""))
    bad = qrels if kind == "qrels" else run
    # the expected reason is irspec's file reader's (its line number aside: Spark does not know it)
    with pytest.raises(InputError) as want:
        irspec.evaluate(str(qrels), str(run), "AP")
    assert want.value.source == str(bad) and want.value.line == 4
    with pytest.raises(InputError) as got:
        irs.aggregate(irs.evaluate(irs.read_qrels(spark, str(qrels)), irs.read_run(spark, str(run)), "AP"))
    assert got.value.source == str(bad) and got.value.query == want.value.query
    assert got.value.reason == f"{want.value.reason} (in the line {quote(line.strip())})"


def test_windows_line_ends_and_trailing_carriage_returns_are_read_as_irspecs_reader_reads_them(
    spark, tmp_path
):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.run"
    qrels.write_bytes(QRELS_LINES.replace("\n", "\r\n").encode())
    run.write_bytes(RUN_LINES.replace("\n", " \r\r \n").encode())
    got = irs.aggregate(
        irs.evaluate(irs.read_qrels(spark, str(qrels)), irs.read_run(spark, str(run)), "AP P@2")
    )
    _same(got, irspec.evaluate(str(qrels), str(run), "AP P@2").aggregate())
    # by hand: each query's one relevant document ranked first; P@2 counts it among 2
    assert got == {"AP": 1.0, "P@2": 0.5}


def test_a_null_query_id_in_a_frame_names_no_bucket_row(spark):
    qrels = _qrels_frame(spark, {"q1": {"a": 1}})
    run = spark.createDataFrame(
        [("q1", "a", 1.0), (None, "b", 2.0)], "query_id string, doc_id string, score double"
    )
    with pytest.raises(InputError, match=r"^<Spark run 'run'>: missing query_id$"):
        irs.aggregate(irs.evaluate(qrels, run, "AP"))


def test_a_directory_of_trec_text_is_read_as_text_and_missing_or_false_parquet_paths_are_named(
    spark, tmp_path
):
    # Spark's own text output: part files, and _SUCCESS and .crc files that are not data
    qrels, run = str(FIXTURES / "data_qrels.txt"), str(FIXTURES / "data_run.txt")
    written = tmp_path / "run_dir"
    spark.read.text(run).write.text(str(written))
    assert (written / "_SUCCESS").exists()
    got = irs.aggregate(irs.evaluate(irs.read_qrels(spark, qrels), irs.read_run(spark, str(written)), "AP"))
    _same(got, irspec.evaluate(qrels, run, "AP").aggregate())
    fake = tmp_path / "run.parquet"
    fake.write_text("q1 Q0 d1 1 0.5\n")
    with pytest.raises(InputError, match=rf"^{fake}: named .parquet but not Parquet"):
        irs.read_run(spark, str(fake))
    for missing in (tmp_path / "nowhere.run", tmp_path / "nowhere.parquet"):
        with pytest.raises(InputError, match=rf"^{missing}: no such file or directory$"):
            irs.read_run(spark, str(missing))
    mixed = tmp_path / "mixed"
    irs.read_run(spark, run).write.parquet(str(mixed))
    (mixed / "part-99999.txt").write_text("q1 Q0 d1 1 0.5\n")
    with pytest.raises(InputError, match=r"holds Parquet files .* and others"):
        irs.read_run(spark, str(mixed))


def _plan_text(engine: str) -> str:
    return f"""
qrels: {FIXTURES / "data_qrels.txt"}
runs:
  - {{name: base, path: {FIXTURES / "data_run.txt"}}}
  - {{name: messy, path: {FIXTURES / "data_run_messy.txt"}}}
metrics: [official, nDCG@10]
options: {{depth: 3}}
compare: {{baseline: base, test: randomization, seed: 3}}
{engine}
output:
  - {{format: table}}
"""


def test_a_plan_with_engine_spark_gives_the_embedded_plans_results(spark, tmp_path):
    from irspec.plan import load_plan, run_plan
    from irspec.plan.model import SparkEngine

    (tmp_path / "embedded.yaml").write_text(_plan_text(""))
    (tmp_path / "spark.yaml").write_text(
        _plan_text("engine: {spark: {config: {spark.sql.shuffle.partitions: 2}, partitions: 3}}")
    )
    plan = load_plan(tmp_path / "spark.yaml")
    assert plan.engine == SparkEngine(None, (("spark.sql.shuffle.partitions", 2),), 3)
    assert load_plan(tmp_path / "embedded.yaml").engine is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        want = run_plan(load_plan(tmp_path / "embedded.yaml"))
        got = run_plan(plan)
    assert [r.run_name for r in got.results] == ["base", "messy"]
    for g, w in zip(got.results, want.results, strict=True):
        _same(g.per_query(), w.per_query())
        _same(g.aggregate(), w.aggregate())
    assert [c.p_value for c in got.comparisons] == [c.p_value for c in want.comparisons]


def test_a_spark_plan_returns_every_run_with_its_file(spark, tmp_path):
    # More runs than the Spark frame of runs has columns (query_id, doc_id, score, run): each comes back,
    # in plan order, named by the plan and with its own file as its source.
    from irspec.plan import load_plan, run_plan

    runs = [tmp_path / f"r{i}.run" for i in range(6)]
    for path in runs:
        shutil.copy(FIXTURES / "data_run.txt", path)
    (tmp_path / "plan.yaml").write_text(
        f"qrels: {FIXTURES / 'data_qrels.txt'}\nruns: [r*.run]\nmetrics: [P@5]\n"
        "engine: {spark: {partitions: 2}}\noutput: [{format: table}]\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        got = run_plan(load_plan(tmp_path / "plan.yaml"))
        want = irspec.evaluate(str(FIXTURES / "data_qrels.txt"), [str(p) for p in runs], "P@5")
    assert [(r.run_name, r.run_source) for r in got.results] == [
        (f"r{i}", str(p)) for i, p in enumerate(runs)
    ]
    for g, w in zip(got.results, want.values(), strict=True):
        _same(g.per_query(), w.per_query())


def test_a_plan_engine_is_checked_by_the_schema(tmp_path):
    from irspec.errors import PlanError
    from irspec.plan import load_plan

    (tmp_path / "bad.yaml").write_text(_plan_text("engine: {spark: {master: 4, cores: 2}}"))
    with pytest.raises(PlanError) as caught:
        load_plan(tmp_path / "bad.yaml")
    text = str(caught.value)
    assert "engine.spark.master" in text and "cores" in text


WORKERS_PYTHON = """
import json, os, sys, traceback, warnings
sys.path.insert(0, ROOT)  # the driver's irspec is the one under test; the workers get no path from it
warnings.simplefilter("ignore")
from pyspark import SparkContext
from irspec.evaluation import spark as irs

def prefix(_):
    import sys
    import irspec.evaluation  # what irspec's tasks import
    yield sys.prefix

for master in MASTERS:
    # nothing of a session before is left for this one to take its workers' interpreter from: its
    # context reads PYSPARK_PYTHON as it is made, and the JVM's Python workers went with the last context
    assert "PYSPARK_PYTHON" not in os.environ and SparkContext._active_spark_context is None
    session = irs.session(master, {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"})
    try:
        session.sparkContext.setLogLevel("ERROR")
        found = session.sparkContext.parallelize([0], 1).mapPartitions(prefix).collect()[0]
    except Exception:  # this master's failure, in its own test; the next master is still checked
        found = traceback.format_exc()[-3000:]
    finally:
        session.stop()
    print(json.dumps([master, found]))
"""

# Without a master first: which master Spark gives is read from the JVM that session() starts for it, in
# this fresh process as in a user's script; a master named local needs no JVM to be told so.
MASTERS = (None, "local[1]")


@pytest.fixture(scope="module")
def workers_prefixes(tmp_path_factory):
    """The ``sys.prefix`` of the workers of a session made for each of :data:`MASTERS` (or why they ran
    nothing), one session after the other in one fresh process (a JVM started once, not once a master);
    and that process."""
    own_bin = os.path.dirname(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != own_bin)
    script = WORKERS_PYTHON.replace("MASTERS", repr(MASTERS)).replace(
        "ROOT", repr(str(FIXTURES.parent.parent))
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        cwd=tmp_path_factory.mktemp("workers"),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    found = dict(json.loads(line) for line in done.stdout.splitlines() if line.startswith("["))
    return found, done


@pytest.mark.parametrize("master", ["local[1]", None])
def test_a_local_sessions_workers_run_the_interpreter_that_made_it(workers_prefixes, master):
    """As a script run by a virtual environment's Python without that environment on PATH (an IDE, cron,
    a notebook's kernel) makes it: no ``PYSPARK_PYTHON``, the ``python3`` on PATH another interpreter,
    irspec not in the working directory. PySpark takes its workers' interpreter from ``PYSPARK_PYTHON``
    alone, else ``python3`` from PATH (at 33cc79e the workers of such a session ran that one, which had
    no irspec). Without a master, Spark's default one is local too (a plan's engine without
    ``master``): its workers ran PATH's python3 until the session looked at which master it gets.
    Both masters' sessions are made in one process (:func:`workers_prefixes`), the first stopped before
    the second is made: a context takes its interpreter as it is made, so the second chooses its own."""
    found, done = workers_prefixes
    assert done.returncode == 0, done.stderr[-3000:]
    assert found[master] == sys.prefix, found[master]


def test_a_run_without_evaluated_queries_has_its_result_as_in_memory(spark):
    # r1 answers none of the qrels' queries: skipped, it has no query and no row in the per-query frame
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    runs = {"r0": {"q1": {"a": 1.0}}, "r1": {"q9": {"a": 1.0}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        got = irs.results(
            irs.evaluate(
                _qrels_frame(spark, qrels), _run_frame(spark, runs), "AP, relstring", missing_queries="skip"
            )
        )
        want = {
            n: irspec.evaluate(qrels, r, "AP, relstring", missing_queries="skip") for n, r in runs.items()
        }
        alone = irs.evaluate(
            _qrels_frame(spark, qrels), _run_frame(spark, {"r1": runs["r1"]}), "AP", missing_queries="skip"
        )
        no_judgments = irs.evaluate(_qrels_frame(spark, {}), _run_frame(spark, {"r": runs["r0"]}), "AP")
        want_none = irspec.evaluate({}, runs["r0"], "AP")
    assert [r.run_name for r in got] == ["r0", "r1"]
    assert got[1].query_ids == want["r1"].query_ids == () and got[1].texts == want["r1"].texts
    for g in got:
        _same(g.aggregate(), want[g.run_name].aggregate())
    _same(irs.aggregate(alone), irspec.evaluate(qrels, runs["r1"], "AP", missing_queries="skip").aggregate())
    _same(irs.aggregate(no_judgments), want_none.aggregate())
    # a run the caller filters out is left out, as a filtered query or metric is
    assert [
        r.run_name
        for r in irs.results(
            irs.evaluate(_qrels_frame(spark, qrels), _run_frame(spark, runs), "AP").where("run != 'r0'")
        )
    ] == ["r1"]


def _plan_results(path):
    from irspec.plan import load_plan, run_plan

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IrspecWarning)
        report = run_plan(load_plan(path))
    return report, sorted({str(w.message) for w in caught})


def test_a_spark_plan_keeps_apart_runs_whatever_their_names_and_gives_memorys_warnings(spark, tmp_path):
    """A run named "a (1)" beside a system's two runs of stem "a" (once keyed "a (1)" too, which
    united two runs into one frame); a run that answers no query, skipped; a relevance level at which
    nothing is relevant: the plan's results and warnings are the in-memory plan's."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    (tmp_path / "a.run").write_text("1 Q0 a 1 2.0\n1 Q0 b 2 1.0\n2 Q0 z 1 1.0\n")
    (tmp_path / "sub" / "a.run").write_text("1 Q0 b 1 2.0\n1 Q0 a 2 1.0\n2 Q0 c 1 1.0\n")
    (tmp_path / "b.run").write_text("1 Q0 z 1 2.0\n2 Q0 y 1 2.0\n")
    (tmp_path / "none.run").write_text("7 Q0 a 1 2.0\n")
    body = (
        "qrels: q.txt\nruns:\n  - {name: 'a (1)', path: b.run}\n  - {name: n, path: none.run}\n"
        "systems:\n  - {name: sys, runs: [a.run, sub/a.run]}\n"
        "metrics: [AP, P@5, 'P(rel=2)@5']\noptions: {missing_queries: skip, judged_warning: null}\n"
    )
    (tmp_path / "mem.yaml").write_text(body)
    (tmp_path / "spark.yaml").write_text(body + "engine: {spark: {partitions: 2}}\n")
    want, want_warnings = _plan_results(tmp_path / "mem.yaml")
    got, got_warnings = _plan_results(tmp_path / "spark.yaml")
    assert [r.run_name for r in got.results] == [r.run_name for r in want.results]
    for g, w in zip(got.results, want.results, strict=True):
        assert (g.run_source, g.query_ids) == (w.run_source, w.query_ids)
        _same(g.aggregate(), w.aggregate())
    # Spark's warnings name the runs by their files, as memory's do (not by keys of its own)
    assert got_warnings == want_warnings and len(want_warnings) == 3


def test_a_relevance_level_without_relevant_documents_is_warned_about(spark):
    qrels = {"q1": {"a": 1, "b": 0}}
    run = {"q1": {"a": 1.0}}
    with pytest.warns(IrspecWarning) as caught:
        irspec.evaluate(qrels, run, "AP, P(rel=3)@5", relevance_level=2)
    want = {str(w.message) for w in caught}
    with pytest.warns(IrspecWarning) as caught:
        per_query = irs.evaluate(
            _qrels_frame(spark, qrels), _run_frame(spark, {"r": run}), "AP, P(rel=3)@5", relevance_level=2
        )
    assert {str(w.message) for w in caught} == want and len(want) == 2
    assert set(irs.results(per_query)[0].warnings) == want


def test_a_spark_plan_refuses_a_judged_warning_it_cannot_give(tmp_path):
    from irspec.errors import PlanError
    from irspec.plan import load_plan

    (tmp_path / "p.yaml").write_text(
        _plan_text("engine: {spark: {partitions: 2}}").replace(
            "options: {depth: 3}", "options: {depth: 3, judged_warning: 0.9}"
        )
    )
    with pytest.raises(PlanError, match=r"options.judged_warning.*Spark gives no Judged@10 warning"):
        load_plan(tmp_path / "p.yaml")
    (tmp_path / "p.yaml").write_text(
        _plan_text("engine: {spark: {partitions: 2}}").replace(
            "options: {depth: 3}", "options: {depth: 3, judged_warning: null}"
        )
    )
    assert load_plan(tmp_path / "p.yaml").options.judged_warning is None


def test_the_arrow_collection_gives_the_frames_results_and_a_filtered_metric_is_left_out(spark):
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q3": {"c": 1.0}}
    metrics = "P@5, AP, relstring@5, nDCG@3"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IrspecWarning)
        per_query = irs.evaluate(
            _qrels_frame(spark, qrels), _run_frame(spark, {"r": run}), metrics, depth=2, relevance_level=2
        ).cache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrspecWarning)
        want = irspec.evaluate(qrels, run, metrics, depth=2, relevance_level=2)
    assert caught
    for got in (irs.results(per_query)[0], irs.results(per_query.toArrow())[0]):
        assert [str(m) for m in got.metrics] == [str(m) for m in want.metrics]
        assert got.options == want.options
        assert set(got.warnings) == {str(w.message) for w in caught}
        _same(got.per_query(), want.per_query())
    # the caller's filter leaves AP out of the result, rather than a mean of no value
    kept = irs.aggregate(per_query.where("metric != 'AP'"))
    assert list(kept) == ["P@5", "relstring@5", "nDCG@3"]
    _same(kept, {k: v for k, v in want.aggregate().items() if k != "AP"})
    per_query.unpersist()


def test_irspecs_tasks_settle_their_workers_once_and_never_the_driver(spark):
    """pyspark's worker collects its garbage after every task: irspec's task functions freeze the worker's
    imports first, once (issue 35). On the driver, and on a second call, settle_spark_worker does nothing."""
    frozen = gc.get_freeze_count()
    worker_state.settle_spark_worker()
    assert gc.get_freeze_count() == frozen and not worker_state._settled
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 2}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}, "q3": {"e": 1.0}}
    # a task per bucket: every worker of this local[2] session runs irspec's task function
    irs.evaluate(_qrels_frame(spark, qrels), _run_frame(spark, {"r": run}), "P@1", partitions=8).collect()
    workers = spark_workers(spark)
    assert any(w["irspec"] for w in workers)
    # every worker that loaded irspec ran one of its tasks, which settled it: nothing else here loads it
    assert all(w["settled"] and w["frozen"] > 0 for w in workers if w["irspec"]), workers

    def settle_twice(batches):
        worker_state.settle_spark_worker()
        once = gc.get_freeze_count()
        made = [
            [n] for n in range(1000)
        ]  # new objects the collector tracks, which a second freeze would take
        worker_state.settle_spark_worker()
        for _ in batches:
            yield pa.RecordBatch.from_pydict(
                {"once": [once], "twice": [gc.get_freeze_count()], "made": [len(made)]}
            )

    twice = spark.range(0, 2, numPartitions=2).mapInArrow(settle_twice, "once long, twice long, made long")
    rows = twice.collect()
    # not another freeze: the frozen count may fall (frozen objects still go when nothing refers to them)
    assert rows and all(r["once"] > 0 and r["twice"] < r["once"] + r["made"] for r in rows), rows
