"""irspec-online on a real local Spark (the session-scoped ``spark`` fixture of conftest.py; no mock):
the same values, row by row and in aggregate, as the in-memory evaluation of the same log, and the
definitions computed record by record; located errors from Spark's workers."""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("irspec_online")
pytest.importorskip("pyspark", reason="the Spark tests need pyspark: pip install 'irspec-online[spark]'")
pytest.importorskip("pyarrow", reason="the Spark tests need pyarrow: pip install 'irspec-online[spark]'")

import numpy as np
from irspec_online import plugin
from irspec_online import spark as online_spark
from irspec_online.clickmodels import held_out
from irspec_online.clickstream import fit
from online_logs import SPECS, expected, polars_frame, random_log, write_jsonl

import irspec
from irspec.evaluation.workers import spark_workers
from irspec.testing import registered_plugin

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # pyspark 4.x's note on pandas 3


@pytest.fixture(autouse=True)
def online():
    with registered_plugin(plugin) as registry:
        yield registry


def spark_frame(spark, records):
    return spark.createDataFrame(polars_frame(records).to_arrow())


def per_row(frame) -> dict[tuple[str, str], float]:
    return {(r["id"], r["metric"]): r["value"] for r in frame.collect()}


@contextlib.contextmanager
def shuffle_partitions(spark, n):
    """The session's ``spark.sql.shuffle.partitions`` set to ``n`` (None: left as it is): as many buckets
    of sessions and of time units as the kernels get a call for."""
    before = spark.conf.get("spark.sql.shuffle.partitions")
    if n is not None:
        spark.conf.set("spark.sql.shuffle.partitions", str(n))
    try:
        yield
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


@pytest.mark.parametrize(
    ("seed", "partitions", "per_bucket"), [(31, None, None), (32, 1, None), (34, 7, None), (35, 1, 10)]
)
def test_spark_gives_the_in_memory_values_row_by_row(
    spark, tmp_path, monkeypatch, seed, partitions, per_bucket
):
    """Whatever the number of buckets of sessions and time units: the fixture's two, all in one, seven, or
    one task's worth of sessions in buckets of at most 10 query issues (16 buckets)."""
    records = random_log(seed, n=160)
    local = irspec.evaluate_input(write_jsonl(records, tmp_path / "log.jsonl"), SPECS)
    if per_bucket is not None:
        monkeypatch.setattr(online_spark, "ROWS_PER_BUCKET", per_bucket)
    # cached: the rows collected and the aggregate read the values computed once (a Spark job costs ~0.25 s)
    with shuffle_partitions(spark, partitions):
        values = online_spark.evaluate(spark_frame(spark, records), SPECS).cache()
        got = per_row(values)
    want = {
        (q, str(m)): local.values[i, j]
        for i, q in enumerate(local.query_ids)
        for j, m in enumerate(local.metrics)
    }
    assert got.keys() == want.keys()
    differ = [k for k in want if not (got[k] == want[k] or (math.isnan(got[k]) and math.isnan(want[k])))]
    assert differ == []
    aggregated = online_spark.aggregate(values)
    assert aggregated == local.aggregate()  # exact: counts and 0/1 sum exactly
    assert aggregated == pytest.approx(expected(records), rel=1e-15)
    values.unpersist()


def test_the_plugins_spark_functions_settle_their_workers(spark):
    """Each function the plugin hands Spark calls irspec.plugin_api.settle_spark_worker first, so pyspark's
    collection after each task skips the worker's imports (issue 35): after an evaluation in eight buckets,
    every worker that loaded irspec is settled."""
    with shuffle_partitions(spark, 8):
        online_spark.evaluate(spark_frame(spark, random_log(36, n=40)), SPECS).collect()
    workers = spark_workers(spark)
    assert any(w["irspec"] for w in workers)
    assert all(w["settled"] for w in workers if w["irspec"]), workers


def test_a_log_is_bucketed_by_task_and_at_most_rows_per_bucket_query_issues_a_bucket(spark):
    """One bucket of sessions per task of the shuffle, more where a bucket would hold more than
    ROWS_PER_BUCKET (100,000) query issues: ceil(rows / 100,000)."""
    frame = spark.range(1)
    with shuffle_partitions(spark, 4):
        assert [online_spark._buckets(frame, rows) for rows in (1, 400_000, 400_001, 10**9)] == [
            4,
            4,
            5,
            10_000,
        ]


def test_a_parquet_log_read_by_spark_and_a_spark_frame_in_evaluate_input(spark, tmp_path):
    records = random_log(33, n=120)
    polars_frame(records).write_parquet(tmp_path / "log.parquet")
    local = irspec.evaluate_input(tmp_path / "log.parquet", SPECS)
    from_spark = irspec.evaluate_input(spark.read.parquet(str(tmp_path / "log.parquet")), SPECS)
    assert from_spark.query_ids == local.query_ids
    np.testing.assert_array_equal(from_spark.values, local.values)
    assert online_spark.aggregate(online_spark.evaluate(spark.read.parquet(str(tmp_path / "log.parquet")), "CTR@3 QueriesPer(day)")) == {
        "CTR@3": local.aggregate()["CTR@3"], "QueriesPer(unit=day)": local.aggregate()["QueriesPer(unit=day)"]}  # fmt: skip


def test_a_bad_record_on_spark_is_a_located_input_error(spark):
    good = {"session": "s", "query": "q", "timestamp": 1.0, "results": ["d1"], "clicks": []}
    frame = spark_frame(spark, [good, dict(good, session="t", timestamp=math.nan), good])
    with pytest.raises(
        irspec.InputError,
        match=r"^<Spark DataFrame>: Spark row id \d+: timestamp is not a finite number, got nan$",
    ):
        online_spark.evaluate(frame, "CTR")
    shown_twice = spark_frame(spark, [good, dict(good, results=["d1", "d2", "d1"])])
    with pytest.raises(
        irspec.InputError,
        match=r"^<Spark DataFrame>: Spark row id \d+: results show 'd1' twice \(ranks 1 and 3\)$",
    ):
        online_spark.evaluate(shown_twice, "CTR")
    with pytest.raises(irspec.InputError, match=r"^<Spark DataFrame>: missing required column 'results'"):
        online_spark.evaluate(frame.drop("results"), "CTR")
    with pytest.raises(irspec.InputError, match="the log has no records"):
        online_spark.evaluate(frame.limit(0), "CTR")
    with pytest.raises(irspec.EvaluationError, match="different inputs"):
        online_spark.evaluate(frame, "CTR nDCG@10")


@pytest.mark.parametrize(("unit", "partitions"), [("user", None), ("query", 5)])
def test_an_ab_test_on_spark_equals_the_embedded_one(spark, tmp_path, unit, partitions):
    """The units' sums computed by Spark (per bucket of sessions, then added per unit) give the same test,
    to the bit, as the in-memory log: the same units in the same order, sums that are exact in any order."""
    import polars as pl
    from irspec_online.ab import combine, partial_sums
    from irspec_online.kernels import kernel_of
    from irspec_online.log import read_log
    from test_ab import random_ab_log

    records = random_ab_log(21, users=50, arms=("control", "a", "b"))
    frame = polars_frame(records).with_columns(
        pl.Series("who", [r["user"] for r in records]), pl.Series("arm", [r["arm"] for r in records])
    )
    design = {"baseline": "control", "unit": unit, "user": "who"}
    specs = "CTR CTR@1 ZRR Abandonment SessionSuccess QueriesPer"
    with shuffle_partitions(spark, partitions):
        on_spark = online_spark.compare(spark.createDataFrame(frame.to_arrow()), specs, design)
        sums = online_spark.unit_sums(spark.createDataFrame(frame.to_arrow()), specs, design)
    log = read_log(frame, ab=design)
    bound = irspec.parse_many(specs)
    values = np.column_stack([kernel_of(m)(log, m) for m in bound])
    embedded_sums = combine([partial_sums(log, bound, values, log.design)], "log")
    assert sums.equals(embedded_sums)
    local = irspec.evaluate_input(frame, specs, options={"ab": design})
    assert [t for t in local.tables if t.title.startswith(("A/B", "Sample"))] == list(on_spark.tables())
    assert len(on_spark.comparisons) == 2 * len(bound)


def test_a_spark_log_has_the_top_queries_of_the_same_log_read_locally(spark, tmp_path):
    """The top queries (issues and CTR per query text, ties in text order) that Spark counts equal those
    counted while a JSON Lines file is summarised, and every other table too."""
    records = random_log(7, n=200)
    local = irspec.evaluate_input(write_jsonl(records, tmp_path / "log.jsonl"), SPECS)
    from_spark = irspec.evaluate_input(spark_frame(spark, records), SPECS)
    assert [t.title for t in from_spark.tables] == [t.title for t in local.tables]
    assert from_spark.tables[0].title == "Top queries" and from_spark.tables[0].rows == local.tables[0].rows
    # by hand: the most issued text, counted from the records
    counts = {}
    for r in records:
        counts[r["query"]] = counts.get(r["query"], 0) + 1
    first = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    assert from_spark.tables[0].rows[0][:2] == first


def test_interleaving_on_spark_equals_the_local_experiment(spark, tmp_path):
    """The shipped interleaved log as a Spark frame: team-draft's outcome per query issue computed by
    Spark's workers (spark.evaluate), and the experiment's test from summaries made on Spark
    (evaluate_input), equal the log read from its file, to the bit."""
    import polars as pl

    example = EXAMPLES / "interleaved.jsonl.gz"
    pl.read_ndjson(example).write_parquet(tmp_path / "log.parquet")
    frame = spark.read.parquet(str(tmp_path / "log.parquet"))
    local = irspec.evaluate_input(example, "Interleaving(team-draft), CTR")
    on_spark = irspec.evaluate_input(frame, "Interleaving(team-draft), CTR")
    assert on_spark.query_ids == local.query_ids
    np.testing.assert_array_equal(on_spark.values, local.values)
    assert on_spark.tables[-1].title == "Interleaving: b against a"
    assert on_spark.tables[-1].rows == local.tables[-1].rows
    want = {(q, "Interleaving"): v for q, v in zip(local.query_ids, local.values[:, 0], strict=True)}
    got = per_row(online_spark.evaluate(frame, "Interleaving(team-draft)"))
    assert got.keys() == want.keys()
    assert all(got[k] == want[k] or (math.isnan(got[k]) and math.isnan(want[k])) for k in want)


def flat(value, path=""):
    """A click model's JSON as ``{path: leaf}`` (``/params/attr/q01/d3``, ``/params/exam[2]``)."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in flat(item, f"{path}/{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in flat(item, f"{path}[{i}]").items()}
    return {path: value}


@pytest.fixture(scope="module")
def logged(spark, tmp_path_factory):
    """The shipped log of a deterministic logger, as a Spark frame of three partitions."""
    import polars as pl

    path = tmp_path_factory.mktemp("logged") / "log.parquet"
    pl.read_ndjson(EXAMPLES / "logged.jsonl.gz").write_parquet(path)
    # cached: the fits read its partitions as made once, not the file read and shuffled again each; made
    # here (count() reads every partition), so that no test's jobs include making them
    frame = spark.read.parquet(str(path)).repartition(3).cache()
    frame.count()
    yield frame
    frame.unpersist()


@pytest.mark.parametrize("model", ["pbm", "cm", "dcm", "ubm", "dbn"])
def test_a_click_model_fitted_on_spark_equals_the_local_fit(logged, model):
    """Each model fitted to the shipped log as a Spark frame (its sessions made and merged by Spark, each EM
    iteration's E step run by the model's own kernel on the workers, the sums reduced by Spark) has the
    parameters, sessions and held-out fit of the same log fitted from its file, within 1e-9: only the
    order of the sums differs."""
    local = flat(fit(EXAMPLES / "logged.jsonl.gz", model, holdout=0.25, iterations=10).as_json())
    on_spark = flat(fit(logged, model, holdout=0.25, iterations=10).as_json())
    assert on_spark.keys() == local.keys()
    assert local["/evaluation/held_out_sessions"] > 400 and len(local) > 500
    for key, want in local.items():
        assert on_spark[key] == (
            pytest.approx(want, rel=1e-9, abs=1e-12) if isinstance(want, float) else want
        ), key


def test_a_click_model_on_spark_evaluates_the_held_out_sessions_the_local_fit_does(spark, tmp_path):
    """Held-out sessions without results are not evaluated (they divided the log-likelihood by 0 on Spark,
    which kept them when their query was seen), nor those of a query whose training sessions show no
    result (a file's reader takes a session's query from its first result): the held-out sessions counted
    here record by record, and the evaluation (pages of 1 to 3 results) the local fit's."""
    holdout, records, want = 0.3, [], 0
    for i in range(300):
        session, held = f"s{i}", held_out(f"s{i}", holdout)
        query = "z" if i % 5 == 0 else "q"
        if query == "z":  # results only where held out: training never shows z a result
            results = ["a", "b"] if held else []
        else:
            results = [] if i % 4 == 0 else ["a", "b", "c"][: 1 + i % 3]
        clicks = [{"doc": d} for d in results if (d == "b" and i % 3 == 0) or (d == "a" and i % 7 == 0)]
        records.append({"session": session, "query": query, "timestamp": 1714521600 + i, "results": results,
                        "clicks": clicks})  # fmt: skip
        want += held and query == "q" and bool(results)
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    local = fit(str(path), "pbm", holdout=holdout, iterations=5)
    on_spark = fit(spark.read.json(str(path)), "pbm", holdout=holdout, iterations=5)
    assert local.test.count == on_spark.test.count == want > 20
    assert math.isfinite(on_spark.log_likelihood) and len(on_spark.perplexity_at_rank) == 3
    local_json, spark_json = flat(local.as_json()), flat(on_spark.as_json())
    assert spark_json.keys() == local_json.keys()
    for key, value in local_json.items():
        assert spark_json[key] == (
            pytest.approx(value, rel=1e-9, abs=1e-12) if isinstance(value, float) else value
        ), key


@pytest.mark.parametrize("model", ["pbm", "ubm"])
def test_a_position_model_on_spark_reads_its_sessions_once_and_fits_the_local_values_to_the_bit(
    logged, model
):
    """PBM and UBM count their cells (pair, examination parameter, clicked) in one Spark job whatever the
    iterations, and fit the file's parameters: the same cells (their weights are counts, summed exactly),
    coded in another order, so the sums over them differ in the last bits at most."""
    context = logged.sparkSession.sparkContext
    jobs = {}  # the fixture's frame is cached already: the jobs counted below are the fits' alone
    for iterations in (2, 20):
        group = f"irspec-{model}-{iterations}"
        context.setJobGroup(group, f"{model}, {iterations} iterations")
        try:
            on_spark = fit(logged, model, iterations=iterations)
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)
        jobs[iterations] = len(context.statusTracker().getJobIdsForGroup(group))
        local = fit(EXAMPLES / "logged.jsonl.gz", model, iterations=iterations)
        want, got = flat(local.as_json()["params"]), flat(on_spark.as_json()["params"])
        assert got.keys() == want.keys()
        assert all(got[k] == pytest.approx(v, rel=1e-13, abs=0) for k, v in want.items())
    assert jobs[2] == jobs[20] > 0


def test_a_swap_experiment_counted_on_spark_equals_the_local_counts(spark, tmp_path):
    import polars as pl

    pl.read_ndjson(EXAMPLES / "swap.jsonl.gz").write_parquet(tmp_path / "swap.parquet")
    frame = spark.read.parquet(str(tmp_path / "swap.parquet")).repartition(3)
    assert fit(frame, "swap").as_json() == fit(EXAMPLES / "swap.jsonl.gz", "swap").as_json()
    with pytest.raises(irspec.InputError, match="no record has a swap"):
        fit(frame.drop("swap"), "swap")


def test_a_bad_record_of_a_click_model_on_spark_is_a_located_input_error(spark):
    from pyspark.sql import functions as F

    good = {"session": "s", "query": "q", "timestamp": 1.0, "results": ["d1", "d2"], "clicks": []}
    frame = spark_frame(spark, [good, dict(good, session="t", timestamp=math.nan), good])
    for model in ("pbm", "swap"):  # the records' checks, every reader's
        with pytest.raises(
            irspec.InputError,
            match=r"^<Spark DataFrame>: Spark row id \d+: timestamp is not a finite number, got nan$",
        ):
            fit(frame, model)
    with pytest.raises(
        irspec.InputError, match=r"Spark row id \d+: swap must be a rank from 1 to 10, got 11"
    ):
        fit(spark_frame(spark, [good, good]).withColumn("swap", F.lit(11)), "swap")
    with pytest.raises(irspec.InputError, match="the log has no records to fit"):
        fit(frame.limit(0), "pbm")


@pytest.mark.parametrize(("name", "specs", "propensity"), [
    ("logged", "IPS(ctr)@10, IPS(rr)@10, ClippedIPS(ctr, clip=2)@10, IPS(click)@3", True),
    ("shuffled", "IPS(ctr)@10, SNIPS(ctr)@10, SNIPS(rr)@5", False),
])  # fmt: skip
def test_counterfactual_estimates_on_spark_equal_the_local_ones(spark, tmp_path, name, specs, propensity):
    """A counterfactual estimate of a Spark frame: through irspec.evaluate_input (the records summarised
    with the new ranking on Spark, the estimates made on the driver from the summaries) the table of
    the log read from its file, to the bit; by spark.estimates (each partition's tally made on its
    worker, the tallies added up by Spark) the same estimates within 1e-12."""
    import polars as pl

    pl.read_ndjson(EXAMPLES / f"{name}.jsonl.gz").write_parquet(tmp_path / "log.parquet")
    frame = spark.read.parquet(str(tmp_path / "log.parquet")).repartition(3)
    settings = {"run": str(Path(__file__).resolve().parents[3] / "specs" / "demo" / "runs" / "dense.run")}
    if propensity:
        settings["propensity"] = fit(EXAMPLES / "swap.jsonl.gz", "swap").as_json()["params"]["exam"]
    options = {"online": {"counterfactual": settings}}
    local = irspec.evaluate_input(EXAMPLES / f"{name}.jsonl.gz", specs, options=options)
    on_spark = irspec.evaluate_input(frame, specs, options=options)
    (want,) = [t for t in local.tables if t.title == "Counterfactual: dense"]
    (got,) = [t for t in on_spark.tables if t.title == "Counterfactual: dense"]
    assert got.rows == want.rows and len(want.rows) == len(irspec.parse_many(specs))
    estimates = online_spark.estimates(frame, specs, settings)
    for row, e in zip(want.rows, estimates, strict=True):
        assert (e.metric, e.rows, e.unranked, e.clipped, e.beyond) == (row[0], *row[5:6], *row[7:])
        assert [e.value, e.se, e.ci_low, e.ci_high, e.support] == pytest.approx(
            [*row[1:5], row[6]], rel=1e-12
        )
    with pytest.raises(irspec.EvaluationError, match="is not a counterfactual estimate"):
        online_spark.estimates(frame, "CTR", settings)
