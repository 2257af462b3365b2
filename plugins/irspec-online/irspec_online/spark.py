"""Online metrics on a Spark DataFrame: the plugin's own record checks and kernels, run by Spark.

``pip install 'irspec-online[spark]'``. Nothing here is a second implementation of a metric: Spark
partitions the log by the key each metric depends on and runs :mod:`irspec_online.kernels` on every group
through Arrow.

1. ``mapInArrow``: each batch of records is checked and summarised by :func:`irspec_online.columnar.summarise`,
   a batch of columns at a time as a Parquet file's (a bad record becomes a problem row; the driver raises
   the first as an :class:`irspec.InputError`).
2. ``groupBy(bucket of session).applyInArrow``: each bucket of whole sessions (:func:`_buckets`, a Python
   call each) has its rows numbered (the rows' ids, ``SESSION:I``) and every metric that depends
   on one session's rows computed on them.
3. ``groupBy(bucket of time unit).applyInArrow``: ``QueriesPer(minute|hour|day)``, on whole units' rows.

Click models and counterfactual estimates the same way: the records made click-model sessions
(:func:`irspec_online.clickmodels.session_rows`) on the workers and merged into distinct ones by Spark
(:func:`click_sessions`), whose every EM iteration runs the model's own E step
(:meth:`~irspec_online.clickmodels.ClickModel._statistics`) per partition, the sums reduced by Spark
(:class:`SparkSessions`; PBM and UBM count their cells per partition once, in one job); a swap experiment's counts per partition (:func:`swap_counts`); and a
counterfactual estimate's sums (:class:`irspec_online.counterfactual.Tally`) per partition of the
summaries (:func:`estimates`).

>>> per_row = evaluate(spark.read.parquet("s3://logs/2024/"), "CTR, Abandonment")  # doctest: +SKIP
>>> aggregate(per_row)                                                              # doctest: +SKIP
{'Abandonment': 0.25, 'CTR': 0.5}
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, cast

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

import irspec
from irspec import EvaluationError, InputError, Metric
from irspec.plugin_api import input_kind, settle_spark_worker
from irspec_online.ab import ABTest, Design, analyse, check_metrics, combine, partial_sums
from irspec_online.clickmodels import RANKS, Sessions, Vocabulary, added, held_out, session_rows, swap_tally
from irspec_online.columnar import Rows, summarise
from irspec_online.counterfactual import Estimate, Estimating, Tally, is_counterfactual
from irspec_online.kernels import bound_kernel, group_seconds, kernel_of
from irspec_online.records import (
    SUMMARY,
    TOP_QUERIES,
    InteractionLog,
    Ranker,
    assemble,
    columns_of,
    summary_schema,
)
from irspec_online.settings import Online

__all__ = [
    "ROWS_PER_BUCKET",
    "SparkSessions",
    "aggregate",
    "click_sessions",
    "compare",
    "estimates",
    "evaluate",
    "local_summaries",
    "summaries",
    "swap_counts",
    "top_queries",
    "unit_sums",
]

WHERE = "<Spark DataFrame>"
ROW = "Spark row id"  # monotonically_increasing_id: increases with the frame's order, not a row count

_SPARK_TYPES = {pl.String: "string", pl.Float64: "double", pl.Int64: "long", pl.Int32: "int", pl.Int8: "tinyint",
                pl.Boolean: "boolean"}  # fmt: skip


def _spark_type(dtype: Any) -> str:
    """A summary column's Spark SQL type (the clicked slots: an array of structs)."""
    if isinstance(dtype, pl.List) and not isinstance(dtype.inner, pl.Struct):
        return f"array<{_SPARK_TYPES[dtype.inner]}>"
    if isinstance(dtype, pl.List):
        inner = dtype.inner
        fields = ",".join(f"{f.name}:{_SPARK_TYPES[f.dtype]}" for f in inner.fields)  # type: ignore[union-attr]
        return f"array<struct<{fields}>>"
    return _SPARK_TYPES[dtype]


def _for_spark(table: pa.Table) -> pa.Table:
    """``table`` with its large lists (polars' lists) as lists, which Spark's Arrow reader takes."""
    fields = [
        pa.field(f.name, pa.list_(f.type.value_type)) if pa.types.is_large_list(f.type) else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields))


_SUMMARY_SCHEMA = ", ".join(f"`{c}` {_spark_type(t)}" for c, t in SUMMARY.items())


def summaries(
    frame: DataFrame, fields: Mapping[str, str] | None = None, ranker: Ranker | None = None
) -> DataFrame:
    """The :data:`~irspec_online.records.SUMMARY` rows of a Spark DataFrame of log records, checked, with a
    column per role of ``fields`` (an A/B test's ``arm`` and ``user``: role -> the frame's column); read
    with the ranking a counterfactual estimate estimates (``ranker``), as a file's records are.

    A bad record is an :class:`irspec.InputError` naming its ``monotonically_increasing_id`` (which follows
    the frame's order); an empty frame is one too. The result is cached: it is read once per metric group.
    """
    return _counted_summaries(frame, fields, ranker)[0]


def _counted_summaries(
    frame: DataFrame, fields: Mapping[str, str] | None = None, ranker: Ranker | None = None
) -> tuple[DataFrame, int]:
    """:func:`summaries`, and how many rows they are (query issues), counted by the job that checks them."""
    fields = dict(fields or {})
    wanted = columns_of(frame.columns, WHERE, tuple(fields.values()))
    schema = ", ".join(f"`{c}` {_spark_type(t)}" for c, t in summary_schema(fields).items())

    def summarise_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        settle_spark_worker()
        for batch in batches:
            problems: list[tuple[int, str]] = []
            records = Rows(batch.select(wanted), batch.column("__row").to_numpy().astype(np.int64))
            rows = summarise(records, WHERE, ROW, problems=problems, fields=fields, ranker=ranker)
            bad = pl.DataFrame({"line": [n for n, _ in problems], "problem": [p for _, p in problems]},
                               schema={"line": pl.Int64, "problem": pl.String})  # fmt: skip
            yield from _for_spark(pl.concat([rows, bad], how="diagonal").to_arrow()).to_batches()

    summary = (
        frame.select(*wanted, F.monotonically_increasing_id().alias("__row"))
        .mapInArrow(summarise_batches, f"{schema}, problem string")
        .cache()
    )
    # the first bad record by row id and the good ones' count: one Spark job says whether a record is bad
    # and how many there are (a job each cost ~0.25 s on a small log: issue 35)
    bad = F.col("problem").isNotNull()
    found = summary.agg(
        F.min(F.when(bad, F.struct("line", "problem"))).alias("first"), F.count(F.when(~bad, 1)).alias("rows")
    ).first()
    first, rows = (found["first"], found["rows"]) if found is not None else (None, 0)
    if first is not None:
        raise InputError(f"{ROW} {first['line']}: {first['problem']}", WHERE)
    if not rows:
        raise InputError("the log has no records", WHERE)
    return summary.drop("problem"), int(rows)


def local_summaries(
    frame: DataFrame, fields: Mapping[str, str] | None = None, ranker: Ranker | None = None
) -> Iterator[pl.DataFrame]:
    """The summaries of a Spark DataFrame brought to the driver (for ``irspec.evaluate_input``: they are a
    few numbers per query issue, not the records)."""
    yield pl.from_arrow(summaries(frame, fields, ranker).toArrow())


def top_queries(frame: DataFrame, k: int = TOP_QUERIES) -> tuple[tuple[str, int, int], ...]:
    """The ``k`` most issued query texts of a Spark DataFrame of log records, as ``(query, issues,
    clicked issues)`` with ties in text order: what :class:`~irspec_online.records.QueryCounts` counts while
    it summarises a file, counted by Spark (one job; the driver receives ``k`` rows). A query issue is
    clicked when its ``clicks`` list is not empty (records are checked by :func:`summaries`)."""
    clicks = F.col("clicks") if "clicks" in frame.columns else F.lit(None)
    clicked = F.when(clicks.isNull(), 0).when(F.size(clicks) > 0, 1).otherwise(0)
    rows = (
        frame.groupBy("query")
        .agg(F.count(F.lit(1)).alias("issues"), F.sum(clicked).alias("clicked"))
        .orderBy(F.col("issues").desc(), F.col("query").asc())
        .limit(k)
        .collect()
    )
    return tuple((r["query"], int(r["issues"]), int(r["clicked"])) for r in rows)


def unit_sums(
    frame: DataFrame, metrics: str | Metric | Iterable[str | Metric], ab: Mapping[str, Any] | Design
) -> pl.DataFrame:
    """An A/B test's units' sums (:func:`irspec_online.ab.combine`: one row per unit of randomisation,
    sorted), computed by Spark: each bucket of whole sessions (:func:`_buckets`) gets every metric's
    kernel and :func:`~irspec_online.ab.partial_sums`, Spark adds the partial sums per unit and arm, and
    the driver receives one row per unit and arm."""
    design = Design.of(ab)
    bound = _bind(metrics)
    check_metrics(bound)
    summary, rows = _counted_summaries(frame, design.fields)
    sums_schema = "unit string, arm string" + "".join(
        f", n{j} double, d{j} double" for j in range(len(bound))
    )

    def per_bucket(table: pa.Table) -> pa.Table:
        settle_spark_worker()
        log = assemble(pl.from_arrow(table), "log", WHERE)
        values = np.column_stack([kernel_of(m)(log, m) for m in bound])
        table = partial_sums(log, bound, values, design).to_arrow()
        return table.cast(
            pa.schema([(f.name, pa.string() if f.name in ("unit", "arm") else f.type) for f in table.schema])
        )

    buckets = _bucket("session", _buckets(frame, rows))
    partial = summary.groupBy(buckets).applyInArrow(per_bucket, sums_schema)
    totals = partial.groupBy("unit", "arm").agg(*[F.sum(c).alias(c) for c in partial.columns[2:]])
    return combine([pl.from_arrow(totals.toArrow())], WHERE)


def compare(
    frame: DataFrame, metrics: str | Metric | Iterable[str | Metric], ab: Mapping[str, Any] | Design
) -> ABTest:
    """The A/B test of a Spark DataFrame's arms (:func:`irspec_online.ab.analyse` on :func:`unit_sums`):
    the same numbers as ``irspec.evaluate_input(log, metrics, options={"ab": ab})`` on the same log."""
    design = Design.of(ab)
    return analyse(unit_sums(frame, metrics, design), _bind(metrics), design)


ROWS_PER_BUCKET = 100_000
"""The most query issues in a bucket of sessions, when the log has more than
``spark.sql.shuffle.partitions`` times as many: what one Python call holds in memory (its summaries, the
``InteractionLog`` and the values: some 25 MiB for 100,000 query issues) stays bounded whatever the log's
size."""


def _buckets(frame: DataFrame, rows: int) -> int:
    """How many buckets the sessions of a log of ``rows`` query issues are hashed into: one per task of the
    shuffle (``spark.sql.shuffle.partitions``), more where a bucket would hold more than
    :data:`ROWS_PER_BUCKET`. One Python call per session (``groupBy(session)``) cost some 7 ms each, which
    a log of millions of sessions paid millions of times."""
    # cast: Spark has a value for every setting it defines (200 unless set)
    tasks = int(cast(str, frame.sparkSession.conf.get("spark.sql.shuffle.partitions")))
    return max(tasks, -(-rows // ROWS_PER_BUCKET))


def _bucket(key: str | Column, buckets: int) -> Column:
    """The bucket of ``key`` (a session, a time unit) among ``buckets``: its xxhash64 modulo ``buckets``, as
    ``irspec.evaluation.spark.evaluate`` buckets queries, so that a bucket holds whole sessions (units)."""
    return F.pmod(F.xxhash64(key), F.lit(buckets))


def evaluate(frame: DataFrame, metrics: str | Metric | Iterable[str | Metric]) -> DataFrame:
    """Per query issue and metric, the value: a Spark DataFrame of ``id`` (``SESSION:I``), ``metric``
    (canonical text) and ``value`` (NaN where the metric leaves the row out), equal to the rows of
    ``irspec.evaluate_input`` on the same log. Sessions, and the time units of ``QueriesPer(unit)``, are
    computed a bucket of whole ones at a time (:func:`_buckets`)."""
    bound = _bind(metrics)
    by_session = [m for m in bound if group_seconds(m) is None]
    summary, n = _counted_summaries(frame)
    buckets = _buckets(frame, n)
    value_types = "".join(f", v{j} double" for j in range(len(by_session)))
    kernels = [bound_kernel(m) for m in by_session]  # looked up here, in the driver's registry

    def per_bucket(table: pa.Table) -> pa.Table:
        settle_spark_worker()
        log = assemble(pl.from_arrow(table), "log", WHERE)
        return pa.table({**_rows(log), **{f"v{j}": kernel(log) for j, kernel in enumerate(kernels)}})

    rows = (
        summary.groupBy(_bucket("session", buckets))
        .applyInArrow(per_bucket, f"id string, {_SUMMARY_SCHEMA}{value_types}")
        .cache()
    )
    parts = []
    if by_session:
        pairs = [
            F.struct(F.lit(str(m)).alias("metric"), F.col(f"v{j}").alias("value"))
            for j, m in enumerate(by_session)
        ]
        parts.append(
            rows.select("id", F.explode(F.array(*pairs)).alias("p")).select("id", "p.metric", "p.value")
        )
    for m in bound:
        if (seconds := group_seconds(m)) is not None:
            parts.append(_per_unit(rows.select("id", *SUMMARY), m, seconds, buckets))
    out = parts[0]
    for part in parts[1:]:
        out = out.unionByName(part)
    return out


def _per_unit(rows: DataFrame, metric: Metric, seconds: float, buckets: int) -> DataFrame:
    def per_bucket(table: pa.Table) -> pa.Table:
        settle_spark_worker()
        log = assemble(pl.from_arrow(table), "log", WHERE)
        return pa.table({"id": list(log.ids), "value": kernel_of(metric)(log, metric)})

    unit = F.floor(F.col("time") / F.lit(seconds))
    values = rows.groupBy(_bucket(unit, buckets)).applyInArrow(per_bucket, "id string, value double")
    return values.select("id", F.lit(str(metric)).alias("metric"), "value")


def aggregate(per_row: DataFrame) -> dict[str, float]:
    """The mean of each metric over the rows where it has a value (NaN skipped), as
    ``Result.aggregate()``: the online metrics' values are counts and 0/1, so Spark's sums are exact and
    the means equal the in-memory ones to the bit; but for ``Interleaving(probabilistic)``, whose
    outcomes are fractions that Spark adds in its own order: equal to the last bits."""
    sums = (
        per_row.where(~F.isnan("value"))
        .groupBy("metric")
        .agg(F.sum("value").alias("s"), F.count("value").alias("n"))
    )
    return {r["metric"]: r["s"] / r["n"] for r in sorted(sums.collect(), key=lambda r: r["metric"])}


def _rows(log: InteractionLog) -> dict[str, Any]:
    """The log's rows, sorted and with their ids, as Arrow columns (:data:`SUMMARY` and ``id``)."""
    return {
        "id": list(log.ids),
        "session": [log.sessions[i] for i in log.session.tolist()],
        "time": log.time,
        "line": log.line,
        "n_results": log.n_results,
        "first_click": log.first_click,
        "best_dwell": log.best_dwell,
        "query_key": log.query_key,
        "user_key": log.user_key,
        "interleaved": log.interleaved,
        "clicked": _for_spark(pa.table({"c": log.clicks.column().to_arrow()}))["c"],
        "ranked": log.ranked,
        "matched": _for_spark(pa.table({"c": log.matched.column().to_arrow()}))["c"],
        "shown_new": _for_spark(pa.table({"c": log.shown_new.column().to_arrow()}))["c"],
        "new_length": log.new_length,
    }


def _bind(metrics: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    items = [metrics] if isinstance(metrics, (str, Metric)) else list(metrics)
    bound = [b for m in items for b in ([m] if isinstance(m, Metric) else irspec.parse_many(m))]
    if input_kind(bound) != "log":
        raise EvaluationError(f"{bound[0]} is not computed from an interaction log")
    return bound


# --------------------------------------------------------------------------------------------------
# Click models and counterfactual estimates: the same kernels, per partition, the sums reduced by Spark


def _reduced(frame: DataFrame, part: Callable[[Iterator[pa.RecordBatch]], Any]) -> Any:
    """``part`` of each partition's batches (a sum, or None for none), the sums :func:`added` up by
    Spark (``treeReduce``: the driver receives one); None for no partition with a sum."""

    def pickled(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        settle_spark_worker()
        total = part(batches)
        if total is not None:
            yield pa.RecordBatch.from_pydict(
                {"part": [pickle.dumps(total)]}, pa.schema([("part", pa.binary())])
            )

    sums = frame.mapInArrow(pickled, "part binary").rdd.map(lambda row: pickle.loads(row["part"]))
    try:
        return sums.treeReduce(added)
    except ValueError:  # an empty RDD (Spark's message), no partition had a row
        return None


def _raise_problem(problems: DataFrame) -> None:
    """The first bad record (by its row id) of a frame of ``line`` and ``problem`` rows, as an InputError."""
    bad = problems.where(F.col("problem").isNotNull()).orderBy("line").limit(1).collect()
    if bad:
        raise InputError(f"{ROW} {bad[0]['line']}: {bad[0]['problem']}", WHERE)


def _records(batch: pa.RecordBatch, wanted: list[str]) -> list[tuple[int, Any]]:
    """A batch's records with their row ids (``__row``)."""
    return list(zip(batch.column("__row").to_pylist(), batch.select(wanted).to_pylist(), strict=True))


def _numbered(frame: DataFrame) -> tuple[DataFrame, list[str]]:
    wanted = columns_of(frame.columns, WHERE, ())
    return frame.select(*wanted, F.monotonically_increasing_id().alias("__row")), wanted


class SparkSessions:
    """Click-model sessions held by Spark: a cached frame of distinct sessions (``pairs``, the codes of the
    pairs at ranks 1..RANKS, -1 past the end; ``clicks``, a mask, rank 1 its lowest bit; ``length``;
    ``weight``) and the pairs' :class:`~irspec_online.clickmodels.Vocabulary` on the driver. A click model
    fits it and evaluates on it as on a :class:`~irspec_online.clickmodels.Sessions` (its :meth:`reduce`)."""

    def __init__(
        self, frame: DataFrame, vocabulary: Vocabulary, rows: int | None = None, count: float | None = None
    ) -> None:
        """``rows`` and ``count``, where the caller knows them (:func:`click_sessions` does), are the
        frame's rows and its weights' sum: given, ``len()`` and :attr:`count` start no Spark job."""
        self.frame = frame.select("pairs", "clicks", "length", "weight")
        self.vocabulary = vocabulary
        self._rows = rows
        self._count = count

    def __len__(self) -> int:
        if self._rows is None:
            self._rows = self.frame.count()
        return self._rows

    @property
    def count(self) -> float:
        """The sessions the rows stand for (their weights' sum)."""
        if self._count is None:
            self._count = float(self.frame.agg(F.sum("weight")).first()[0] or 0.0)
        return self._count

    def reduce(self, function: Callable[[Sessions], Any]) -> Any:
        """``function`` of each batch of sessions, on the workers, the results :func:`added` up (as
        :meth:`Sessions.reduce <irspec_online.clickmodels.Sessions.reduce>` does for a table in memory;
        ``function`` is sent to the workers, so it holds the model's parameters, not its vocabulary)."""

        def part(batches: Iterator[pa.RecordBatch]) -> Any:
            total = None
            for batch in batches:
                if batch.num_rows:
                    total = added(total, function(_sessions(batch)))
            return total

        return _reduced(self.frame, part)


def _sessions(batch: pa.RecordBatch) -> Sessions:
    """A batch of a :class:`SparkSessions` frame as the :class:`Sessions` the models read."""
    pairs = batch.column("pairs").flatten().to_numpy().astype(np.int64).reshape(-1, RANKS)
    mask = batch.column("clicks").to_numpy()
    clicks = ((mask[:, None] >> np.arange(RANKS, dtype=np.int64)) & 1).astype(bool)
    length = batch.column("length").to_numpy().astype(np.int64)
    return Sessions(
        pairs, clicks, length, batch.column("weight").to_numpy().astype(np.float64), compacted=True
    )


_SESSION_TYPES = "query string, docs array<string>, clicks long, length long, held boolean"


def click_sessions(frame: DataFrame, holdout: float = 0.0) -> tuple[SparkSessions, SparkSessions]:
    """The click-model sessions of a Spark DataFrame of log records, ``(train, held out)``, as
    :func:`irspec_online.clickstream.read_sessions` reads a file's: each record checked and made a session
    on the workers (a bad one an :class:`irspec.InputError` naming its row id), identical sessions merged by
    Spark, the pairs coded on the driver (the model's parameters are per pair: the driver holds them
    anyway) in (query, document) order, the held-out sessions only those that show a result, of queries
    seen in training."""
    numbered, wanted = _numbered(frame)

    def sessions_of(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        settle_spark_worker()
        for batch in batches:
            problems: list[tuple[int, str]] = []
            rows = list(session_rows(_records(batch, wanted), WHERE, ROW, problems))
            masks = [sum(1 << r for r, c in enumerate(clicked) if c) for _, _, clicked in rows]
            yield pa.RecordBatch.from_pydict(
                {
                    "query": [rec["query"] for rec, _, _ in rows] + [None] * len(problems),
                    "docs": [shown for _, shown, _ in rows] + [None] * len(problems),
                    "clicks": masks + [None] * len(problems),
                    "length": [len(shown) for _, shown, _ in rows] + [None] * len(problems),
                    "held": [held_out(rec["session"], holdout) for rec, _, _ in rows]
                    + [None] * len(problems),
                    "line": [None] * len(rows) + [n for n, _ in problems],
                    "problem": [None] * len(rows) + [p for _, p in problems],
                },
                _ARROW_SESSIONS,
            )

    made = numbered.mapInArrow(sessions_of, f"{_SESSION_TYPES}, line long, problem string").cache()
    try:
        _raise_problem(made)
        distinct = (
            made.where(F.col("problem").isNull())
            .groupBy("query", "docs", "clicks", "length", "held")
            .agg(F.count(F.lit(1)).cast("double").alias("weight"))
        )
        # One collection, per query: its documents (for the pairs' codes) and its sessions in training and
        # held out. The driver then knows whether there is anything to fit, which queries training saw, and
        # both tables' sizes, which a count each made Spark compute again (issue 35: 14 of a fit's 35 jobs).
        # As read_sessions reads a file's: a session's query is its first result's pair's, so a session
        # without results names no query. Held out, it is not evaluated (it has no result to give a
        # probability, and divided the log-likelihood by 0); in training it is a session of the fit but
        # does not make its query seen.
        shows = F.col("length") > 0
        train_only, held_only = ~F.col("held"), F.col("held") & shows
        per_query = distinct.groupBy("query").agg(
            # a set of result lists first: a query's sessions mostly share a few
            F.array_sort(F.array_distinct(F.flatten(F.collect_set("docs")))).alias("docs"),
            F.count(F.when(train_only, 1)).alias("train_rows"),
            F.sum(F.when(train_only, F.col("weight"))).alias("train_weight"),
            F.count(F.when(train_only & shows, 1)).alias("train_shown"),
            F.count(F.when(held_only, 1)).alias("test_rows"),
            F.sum(F.when(held_only, F.col("weight"))).alias("test_weight"),
        )
        table = per_query.toArrow()
        # the pairs coded in (query, document) order: Python's order of strings is Spark's (UTF-8's bytes)
        queries = table.column("query").to_pylist()
        order = sorted(range(table.num_rows), key=lambda i: (queries[i] is not None, queries[i] or ""))
        table = table.take(pa.array(order, pa.int64()))
        vocabulary = Vocabulary()
        for q, docs in zip(table.column("query").to_pylist(), table.column("docs").to_pylist(), strict=True):
            for d in docs:
                vocabulary.code(q, d)
        if not pc.any(pc.greater(table.column("train_rows"), 0)).as_py():
            raise InputError("the log has no records to fit", WHERE)
        seen = pc.greater(table.column("train_shown"), 0)
        sizes = {name: pc.sum(table.column(name)).as_py() or 0 for name in ("train_rows", "train_weight")}
        for name in ("test_rows", "test_weight"):  # the held-out sessions evaluated: of the queries seen
            sizes[name] = pc.sum(pc.filter(table.column(name), seen)).as_py() or 0
        codes = frame.sparkSession.sparkContext.broadcast(vocabulary.codes)

        def coded(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            settle_spark_worker()
            known = codes.value
            for batch in batches:
                queries = batch.column("query").to_pylist()
                pairs = [[known[(q, d)] for d in docs] + [-1] * (RANKS - len(docs))
                         for q, docs in zip(queries, batch.column("docs").to_pylist(), strict=True)]  # fmt: skip
                yield pa.RecordBatch.from_pydict(
                    {"query": queries, "pairs": pairs, "clicks": batch.column("clicks"),
                     "length": batch.column("length"), "weight": batch.column("weight"), "held": batch.column("held")},
                    _ARROW_CODED,
                )  # fmt: skip

        table_frame = distinct.mapInArrow(
            coded, "query string, pairs array<long>, clicks long, length long, weight double, held boolean"
        ).cache()
        train = table_frame.where(~F.col("held"))
        # the queries training saw, from the driver: the held-out sessions a filter of the cached table
        known = frame.sparkSession.createDataFrame(table.filter(seen).select(["query"]))
        test = table_frame.where(F.col("held") & shows).join(known, "query", "left_semi")
    finally:
        made.unpersist()
    return (
        SparkSessions(train, vocabulary, sizes["train_rows"], float(sizes["train_weight"])),
        SparkSessions(test, vocabulary, sizes["test_rows"], float(sizes["test_weight"])),
    )


_ARROW_SESSIONS = pa.schema([("query", pa.string()), ("docs", pa.list_(pa.string())), ("clicks", pa.int64()),
                             ("length", pa.int64()), ("held", pa.bool_()), ("line", pa.int64()),
                             ("problem", pa.string())])  # fmt: skip
_ARROW_CODED = pa.schema([("query", pa.string()), ("pairs", pa.list_(pa.int64())), ("clicks", pa.int64()),
                          ("length", pa.int64()), ("weight", pa.float64()), ("held", pa.bool_())])  # fmt: skip


def swap_counts(frame: DataFrame, ranks: int) -> tuple[np.ndarray, np.ndarray]:
    """A swap experiment's counts (:func:`irspec_online.clickstream.swap_counts`) of a Spark DataFrame:
    :func:`~irspec_online.clickstream.swap_tally` of each partition's records, added up by Spark."""
    numbered, wanted = _numbered(frame)

    def part(batches: Iterator[pa.RecordBatch]) -> Any:
        total, problems = None, []
        for batch in batches:
            total = added(total, swap_tally(_records(batch, wanted), WHERE, ROW, ranks, problems))
        # a partition's first problem goes with its counts (lists add up by joining): the driver raises the first
        return None if total is None else {"counts": total, "problems": sorted(problems)[:1]}

    reduced = _reduced(numbered, part)
    if reduced is None:
        return np.zeros(ranks), np.zeros(ranks)
    if reduced["problems"]:
        number, problem = min(reduced["problems"])
        raise InputError(f"{ROW} {number}: {problem}", WHERE)
    return reduced["counts"]


def estimates(
    frame: DataFrame, metrics: str | Metric | Iterable[str | Metric], counterfactual: Mapping[str, Any]
) -> list[Estimate]:
    """Counterfactual estimates of a Spark DataFrame's log (``IPS``, ``ClippedIPS``, ``SNIPS``): its records
    summarised with the ranking to estimate on the workers (:func:`summaries`), each partition's
    :class:`~irspec_online.counterfactual.Tally` of them made there and the tallies added up by Spark, so
    the driver holds a few numbers per metric. ``counterfactual`` is a plan's ``online: counterfactual:``
    (``run``, ``propensity``, ``confidence``); the estimates equal the counterfactual table of
    ``irspec.evaluate_input`` on the same log to the last bits (an IPS estimate's sum is exact here, as a
    streamed pass's is, whatever the partitions; in memory it adds the rows in their order)."""
    bound = _bind(metrics)
    other = [m for m in bound if not is_counterfactual(m)]
    if other:
        raise EvaluationError(f"{other[0]} is not a counterfactual estimate (IPS, ClippedIPS, SNIPS)")
    estimating = Estimating.of(Online.of({"counterfactual": counterfactual}).counterfactual)
    if estimating is None:  # the settings' own check names what is missing; this is for the type checker
        raise EvaluationError("a counterfactual estimate needs the ranking to estimate (run)")
    summary = summaries(frame, ranker=estimating.ranker)
    theta, confidence = estimating.theta, estimating.confidence

    def part(batches: Iterator[pa.RecordBatch]) -> Any:
        tallies = [Tally(m, theta, confidence, exact=True) for m in bound]  # exact: any partitioning
        rows = 0
        for batch in batches:
            if batch.num_rows:
                log = assemble(pl.from_arrow(pa.Table.from_batches([batch])), "log", WHERE)
                for tally in tallies:
                    tally.add(log)
                rows += batch.num_rows
        return tuple(t.sums() for t in tallies) if rows else None  # a tuple adds up term by term

    reduced = _reduced(summary, part)
    tallies = [Tally(m, theta, confidence, exact=True) for m in bound]
    for tally, sums in zip(tallies, reduced or [None] * len(bound), strict=True):
        if sums is not None:
            tally.absorb(sums)
    return [t.estimate() for t in tallies]
