"""Evaluate Spark DataFrames of qrels and runs with irspec's own engine (``pip install 'irspec[spark]'``).

>>> from irspec.evaluation import spark as irs
>>> per_query = irs.evaluate(qrels_sdf, run_sdf, "nDCG@10, AP")   # run, query_id, metric, value, text
>>> irs.aggregate(per_query)                                     # the same dict as Result.aggregate()

Design. Every offline metric depends on one query's ranking and judgments only, so an evaluation splits
by query exactly. Each query id is hashed into one of ``partitions`` buckets; Spark co-groups the
qrels rows and the run rows of a bucket (``cogroup(...).applyInArrow``: one shuffle, Arrow tables
handed to Python without a row-by-row conversion), and each bucket, thousands of queries at a time
rather than one call per query, is evaluated by :func:`irspec.evaluation.evaluate.evaluate_many`: the same
reading checks, join, ranking and kernels as the in-memory path, never a second implementation of a
metric in Spark SQL. So the per-query values are those of :func:`irspec.evaluate` on the same data,
bit for bit:

- ties are broken inside the engine as trec_eval does (score descending, then docno descending), since
  a query's whole ranking is always in one bucket;
- ``depth`` and ``judged_only`` cut each ranking there too;
- qrels that a plugin reads in place of the ordinary ones (qrels with subtopics) are read in each bucket
  by :func:`irspec.evaluation.judgments.read_judgments`, as in-process: the plugin's reader and kernels run in the
  workers (where the plugin must be installed), on whole queries;
- a qrels query absent from a run is absent from that run's rows of its bucket, so the engine scores it
  0 (``missing_queries="zero"``) or leaves it out (``"skip"``) just as it would with the whole run; a
  run with no row at all in a bucket is evaluated as an empty run there. Which runs a frame holds is
  known only globally, so their names (and which queries each answers) are collected first, one small
  job over the distinct (run, query) pairs and the qrels' highest label: it also raises
  ``missing_queries="error"`` on the driver and issues the warnings :func:`irspec.evaluate` issues
  about missing and unknown queries and about a relevance level at which no document is relevant
  (not the one on a run's Judged@10, which would need every query's top 10 on the driver: a
  :class:`Result` of :func:`results` has no ``judged_at_10``). A run left with no query to evaluate
  (``missing_queries="skip"`` and none of the qrels' queries, or qrels without judgments) has no row;
  :func:`results` gives it a Result without queries, as :func:`irspec.evaluate` does. That job
  reads the run's source once, and the evaluation once more: Spark re-reads whatever a frame comes
  from, and for a TREC text file (:func:`read_run`) that means splitting every line twice. irspec
  does not cache the frame behind the caller's back (it would hold a copy of the run on the cluster
  until the caller's session ends); for a large text run, ``persist()`` it, or write it once as
  Parquet, which Spark reads column by column (the benchmark's Parquet runs take half the time).

The per-query frame is small (queries × metrics × runs rows). :func:`aggregate` and :func:`results`
collect it and pass each metric's values, in query-id order, through
:func:`irspec.evaluation.means.aggregate_values` (trec_eval's left-to-right sum, the geometric mean's floor):
the same aggregates as :meth:`~irspec.evaluation.result.Result.aggregate`, to the last bit. Spark's own
``groupBy("metric").mean()`` sums in another order (and keeps NaN), so it may differ in the last digit.

Input columns are ir_measures' (``query_id``, ``doc_id``, ``relevance`` | ``score``) or PyTerrier's
(``qid``, ``docno``, ``label`` | ``score``), with an optional ``run`` column holding several runs in
one frame; ``columns={"query": ..., "docno": ..., "label": ..., "score": ..., "run": ...}`` names
others. This module is the only one that imports pyspark; ``import irspec`` never loads it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast
from urllib.parse import unquote, urlparse

import numpy as np
import polars as pl
import pyarrow as pa
from pyspark import SparkConf, SparkContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from irspec.data import Run
from irspec.data.kinds import QRELS, RUN, Kind
from irspec.data.objects import CONVENTIONS, ROLES
from irspec.data.trec import CARRIAGE_RETURN
from irspec.errors import EvaluationError, InputError, IrspecError, label_out_of_range, quote
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import MissingQueries, Options
from irspec.evaluation.evaluate import evaluate_many, issue_warnings
from irspec.evaluation.judgments import read_judgments, reads_qrels
from irspec.evaluation.notes import first_few, levels_without_relevant, missing_text, queries_text
from irspec.evaluation.result import Result
from irspec.evaluation.workers import settle_spark_worker
from irspec.spec.definitions import Metric
from irspec.spec.plugins import get_registry

__all__ = [
    "MAX_PARTITIONS",
    "OUTPUT_SCHEMA",
    "aggregate",
    "evaluate",
    "read_qrels",
    "read_run",
    "results",
    "session",
]

MAX_PARTITIONS = 2**63 - 1
"""The most query buckets (``partitions``): a query's bucket is its xxhash64 modulo ``partitions``, a
Java long in Spark (2**63 failed in py4j's ``lit``); past the number of queries every count is the same
(each query its own bucket)."""

OUTPUT_SCHEMA = T.StructType(
    [
        T.StructField("run", T.StringType(), False),
        T.StructField("query_id", T.StringType(), False),
        T.StructField("metric", T.StringType(), False),
        T.StructField("value", T.DoubleType(), True),
        T.StructField("text", T.StringType(), True),
    ]
)
"""The per-query frame: one row per (run, query, metric). ``value`` is NaN and ``text`` holds the string
for a text-valued metric (``relstring``); ``text`` is null for every other metric."""

# The names irspec reads a column by, and the spellings it recognises without ``columns=``.
# The spellings the DataFrame readers accept (ir_measures', PyTerrier's), for each of irspec's names.
_SPELLINGS: dict[str, tuple[str, ...]] = {
    **{role: tuple(dict.fromkeys(c[role] for c in CONVENTIONS.values())) for role in ROLES},
    "run": ("run",),
}
# Inside the buckets the frames carry the column names irspec's DataFrame readers take.
_INNER = {**CONVENTIONS["ir_measures"], "run": "run"}
_METADATA_KEY = "irspec"


def session(
    master: str | None = None, config: Mapping[str, Any] | None = None, app_name: str = "irspec"
) -> SparkSession:
    """The active SparkSession, or a new one for ``master`` (any Spark master URL, e.g. ``local[4]``)
    with ``config`` (Spark properties) applied.

    On a local master (``master``, or without one the master Spark's own configuration gives, by
    default ``local[*]``) the Python workers of a new session run this interpreter (which has irspec),
    unless ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` says otherwise; on a cluster irspec must be
    installed where the workers run."""
    config = dict(config or {})
    chosen = os.environ.get("PYSPARK_PYTHON")
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    if not chosen and "spark.pyspark.python" not in config and _local_master(master, config):
        config["spark.pyspark.python"] = sys.executable
    for key, value in config.items():
        builder = builder.config(key, value if isinstance(value, str) else json.dumps(value))
    python = config.get("spark.pyspark.python")
    if chosen or python is None:
        return builder.getOrCreate()
    # A context made in this process takes its workers' interpreter from PYSPARK_PYTHON as it is made,
    # else "python3" from PATH, which need not be this one (a virtual environment's Python run without
    # its bin on PATH: an IDE, cron, a notebook's kernel); the property alone is read by spark-submit.
    os.environ["PYSPARK_PYTHON"] = str(python)
    try:
        return builder.getOrCreate()
    finally:
        del os.environ["PYSPARK_PYTHON"]


def _local_master(master: str | None, config: Mapping[str, Any]) -> bool:
    """Whether the session :func:`session` makes runs on a local master: ``master``, else the one Spark
    would take (``spark.master`` from ``config``, spark-submit's arguments or spark-defaults.conf,
    else ``local[*]``). False when a session exists already: its workers' interpreter is chosen."""
    if master is None:
        if SparkContext._active_spark_context is not None:
            return False
        if "spark.master" not in config:
            # the JVM the session then uses, started here: its SparkConf holds what it was launched
            # with (spark-submit's --master, spark-defaults.conf; local[*] when nothing says)
            SparkContext._ensure_initialized()
        master = str(config.get("spark.master") or SparkConf().get("spark.master", "local[*]"))
    return master.startswith("local")


def evaluate(
    qrels: DataFrame,
    run: DataFrame,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    relevance_level: int = 1,
    depth: int | None = None,
    judged_only: bool = False,
    missing_queries: MissingQueries = "zero",
    collection_size: int | None = None,
    columns: Mapping[str, str] | None = None,
    run_name: str = "run",
    partitions: int | None = None,
    sources: Mapping[str, str] | None = None,
) -> DataFrame:
    """Evaluate the run(s) of the Spark DataFrame ``run`` against ``qrels``: a Spark DataFrame of
    :data:`OUTPUT_SCHEMA` (``run, query_id, metric, value, text``).

    The options are :func:`irspec.evaluate`'s. ``run`` may hold several runs in a ``run`` column;
    without one it is one run called ``run_name``. ``columns`` maps irspec's names (``query``,
    ``docno``, ``label``, ``score``, ``run``) to the frames' own. Metrics over qrels that a plugin reads
    in place of the ordinary ones (irspec-diversity's, from qrels with subtopics) get ``qrels`` as that
    reader takes a frame: each bucket's rows, with every column, go through
    :func:`irspec.evaluation.judgments.read_judgments` as a frame given to :func:`irspec.evaluate` does (the query
    column is found by ir_measures' or PyTerrier's name; ``columns`` then names the run's columns).
    ``partitions`` is the number of
    query buckets evaluated as separate tasks (default: ``spark.sql.shuffle.partitions``); each bucket's
    rows are held in memory by one Python worker. ``sources`` says how warnings, errors and each
    :class:`Result`'s ``run_source`` name a run, by its name (a plan gives its files' paths); by
    default ``<Spark run 'NAME'>``. Before returning, one job collects the distinct (run, query) pairs
    and the qrels' highest label (see the module docstring); the evaluation itself runs when the frame
    is used.
    """
    options = Options(relevance_level, depth, judged_only, missing_queries, collection_size)
    bound = bind_metrics(metrics)
    names = [str(m) for m in bound]
    if not names:
        raise EvaluationError("no metrics to compute")
    if any(reads_qrels(m.definition.needs) for m in bound):
        # qrels a plugin reads in place of the ordinary ones (with subtopics): its reader finds its own
        # columns in each bucket's rows, as it does in a frame given to irspec.evaluate
        q, query = _as_read(qrels)
        label = _present(qrels, None).get("label")
        if label is not None and not isinstance(q.schema[label].dataType, T.NumericType):
            label = None  # the plugin's reader says what is wrong with it, in a task
    else:
        q, query, label = _normalised(qrels, "qrels", "label", columns), "query_id", "relevance"
    r = _normalised(run, "run", "score", columns, run_name)
    single = run_name if "run" not in _present(run, columns) else None
    named = dict(sources or {})
    # refused before the first Spark job (_coverage's), as unknown metrics and bad options are
    # cast: Spark has a value for every setting it defines (200 unless set)
    n = (
        partitions
        if partitions is not None
        else int(cast(str, q.sparkSession.conf.get("spark.sql.shuffle.partitions")))
    )
    # at most a Java long (MAX_PARTITIONS): a larger literal failed in py4j
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_PARTITIONS:
        raise EvaluationError(
            f"partitions must be a positive integer <= {MAX_PARTITIONS:,}, got {quote(partitions)}"
        )
    runs, notes, empty = _coverage(q, query, label, r, single, options, bound, named)
    evaluate_bucket = _bucket_evaluator(runs, names, options, named)
    # A dry run on empty inputs, on the driver: metrics that need another input, or options that the
    # engine refuses, fail here with irspec's own error rather than inside a Spark task.
    try:
        evaluate_bucket(_empty_arrow(q), _empty_arrow(r))
    except RuntimeError as e:
        raise _task_error(e) from None

    def task(_key: Any, qrels_table: pa.Table, run_table: pa.Table) -> pa.Table:
        settle_spark_worker()
        return evaluate_bucket(qrels_table, run_table)

    def bucket(column: str) -> Any:
        # both query columns hold strings, so a query's qrels and run rows hash alike
        return F.pmod(F.xxhash64(column), F.lit(n)).alias("bucket")

    with warnings.catch_warnings():
        # pyspark checks the pandas version for every Arrow UDF; irspec's hands it Arrow tables only.
        warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
        per_query = (
            q.groupBy(bucket(query))
            .cogroup(r.groupBy(bucket("query_id")))
            .applyInArrow(task, schema=OUTPUT_SCHEMA)
        )
    described = json.dumps(
        {
            "metrics": names,
            "options": options.as_dict(),
            "warnings": notes,
            # a run with no query to evaluate has no row: results() makes its Result from these
            "empty": empty,
            "sources": {n: named[n] for n in runs if n in named},
        }
    )
    return per_query.withColumn(
        "metric", F.col("metric").alias("metric", metadata={_METADATA_KEY: described})
    )


def _present(frame: DataFrame, columns: Mapping[str, str] | None) -> dict[str, str]:
    """Which of irspec's column names ``frame`` has, mapped to its own column name."""
    found = {}
    for name, spellings in _SPELLINGS.items():
        if columns and name in columns:
            found[name] = columns[name]
            continue
        hit = next((s for s in spellings if s in frame.columns), None)
        if hit is not None:
            found[name] = hit
    return found


def _normalised(
    frame: DataFrame, what: str, value: str, columns: Mapping[str, str] | None, run_name: str | None = None
) -> DataFrame:
    """``frame`` with the inner column names and types, or an :class:`InputError` naming what is wrong."""
    if not isinstance(frame, DataFrame):
        raise InputError(f"expected a Spark DataFrame, got {type(frame).__name__}", f"<Spark {what}>")
    unknown = sorted(set(columns or {}) - set(_SPELLINGS))
    if unknown:
        raise InputError(
            f"columns= names {unknown}; the names it may map are {sorted(_SPELLINGS)}", f"<Spark {what}>"
        )
    found = _present(frame, columns)
    types = dict(frame.dtypes)
    missing = [k for k in ("query", "docno", value) if k not in found or found[k] not in types]
    if missing:
        wanted = " or ".join(
            "/".join(_SPELLINGS[k]) if not (columns and k in columns) else repr(columns[k]) for k in missing
        )
        raise InputError(
            f"no column for {', '.join(missing)} (expected {wanted}; the frame has {', '.join(frame.columns)})",
            f"<Spark {what}>",
        )
    fields = {f.name: f.dataType for f in frame.schema.fields}
    out = []
    for key in ("query", "docno"):
        dtype = fields[found[key]]
        if not isinstance(dtype, (T.StringType, T.IntegralType)):
            raise InputError(
                f"column {found[key]!r} must hold strings (or integers), not {dtype.simpleString()}",
                f"<Spark {what}>",
            )
        out.append(F.col(found[key]).cast("string").alias(_INNER[key]))
    out.append(_value_column(frame, found[value], fields[found[value]], value, what))
    if what == "run":
        if "run" in found:
            out.append(F.col(found["run"]).cast("string").alias("run"))
        else:
            out.append(F.lit(run_name).alias("run"))
    return frame.select(*out)


def _as_read(frame: DataFrame) -> tuple[DataFrame, str]:
    """Qrels for a plugin's reader (:func:`irspec.evaluation.judgments.read_judgments`): every column as it is, but
    the query column (ir_measures' or PyTerrier's name) as strings, and that column's name."""
    if not isinstance(frame, DataFrame):
        raise InputError(f"expected a Spark DataFrame, got {type(frame).__name__}", "<Spark qrels>")
    query = _present(frame, None).get("query")
    if query is None:
        raise InputError(
            f"no column for query (expected {'/'.join(_SPELLINGS['query'])}; the frame has {', '.join(frame.columns)})",
            "<Spark qrels>",
        )
    return frame.withColumn(query, F.col(query).cast("string")), query


def _value_column(frame: DataFrame, name: str, dtype: T.DataType, value: str, what: str) -> Any:
    """The label or score column, cast where the cast loses nothing; the engine's readers check the rest
    (an integral float label, a finite score) row by row."""
    numeric = isinstance(dtype, T.NumericType)
    if not numeric:
        raise InputError(f"column {name!r} must hold numbers, not {dtype.simpleString()}", f"<Spark {what}>")
    if value == "label":
        return (
            F.col(name).cast("long" if isinstance(dtype, T.IntegralType) else "double").alias(_INNER[value])
        )
    return F.col(name).cast("double").alias(_INNER[value])


def _coverage(
    q: DataFrame,
    query: str,
    label: str | None,
    r: DataFrame,
    single: str | None,
    options: Options,
    metrics: Sequence[Metric],
    sources: Mapping[str, str],
) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The run names (sorted; ``[single]`` for a frame without a run column) after checking which qrels
    queries each run lacks and which of its queries the qrels lack: an error under
    ``missing_queries="error"``, otherwise the warnings :func:`irspec.evaluate` issues (with those on
    relevance levels at which no qrels document is relevant), which are returned too, by run name
    (``""``: about every run), for :func:`results`; and the runs that have no query to evaluate."""
    # the qrels' queries with their highest label and the run's (run, query) pairs in one collection:
    # one Spark job fewer, and each job is ~0.25 s on a small input (issue 35)
    top = F.max(label).cast("double") if label is not None else F.lit(None).cast("double")
    both = _arrow(
        q.groupBy(F.col(query).alias("query_id"))
        .agg(top.alias("top"))
        .select(F.lit(None).cast("string").alias("run"), "query_id", F.lit(True).alias("judged"), "top")
        .unionByName(
            r.select(
                "run", "query_id", F.lit(False).alias("judged"), F.lit(None).cast("double").alias("top")
            ).distinct()
        )
    )
    judged: set[str] = set()
    answered: dict[str, set[str]] = {}
    tops: list[float] = []
    for name, qid, in_qrels, highest in zip(
        *(both.column(c).to_pylist() for c in ("run", "query_id", "judged", "top")), strict=True
    ):
        if in_qrels:
            judged.add(qid)
            if highest is not None:
                tops.append(highest)
        else:
            answered.setdefault(name, set()).add(qid)
    if None in answered:
        raise InputError("the run column has a null run name", "<Spark run>")
    runs = [single] if single is not None else sorted(answered)
    notes: dict[str, list[str]] = {"": []}
    empty = []
    for name in runs:
        source = sources.get(name, f"<Spark run {name!r}>")
        notes[name] = []
        mine = answered.get(name, set())
        missing = sorted(judged - mine)
        if missing and options.missing_queries == "error":
            raise EvaluationError(
                f"{source}: {len(missing)} qrels quer{'y is' if len(missing) == 1 else 'ies are'} missing from "
                f"the run ({first_few(missing)}) and missing_queries is 'error'"
            )
        extra = sorted(mine - judged)
        if extra:
            notes[name].append(
                f"{source}: {queries_text(len(extra))} not in the qrels ignored ({first_few(extra)})"
            )
        if missing or not mine:
            notes[name].append(missing_text(source, not mine, missing, len(judged), options))
        if not judged or (options.missing_queries == "skip" and not mine & judged):
            empty.append(name)
    if not judged:
        notes[""].append("qrels <Spark qrels> has no judgments")
    # a float label's fraction is the tasks' error to report (the bucket's reader refuses it)
    notes[""] += levels_without_relevant(int(max(tops)) if tops else None, options, metrics)
    if not runs:
        notes[""].append("<Spark run>: the run frame has no rows, so no run is evaluated")
    issue_warnings([text for texts in notes.values() for text in texts])
    return runs, notes, empty


def _arrow(frame: DataFrame) -> pa.Table:
    """``frame`` collected to the driver as an Arrow table, with an irspec error that Spark raised (a
    task's, or a bad TREC line's) raised here as itself."""
    try:
        return frame.toArrow()
    except Exception as e:  # Spark has many classes of error: one carrying irspec's is raised as it
        error = _task_error(e)
        if error is e:
            raise
        raise error from None


def _empty_arrow(frame: DataFrame) -> pa.Table:
    return to_arrow_schema(frame.schema).empty_table()


def _bucket_evaluator(
    runs: Sequence[str], metric_names: Sequence[str], options: Options, sources: Mapping[str, str]
) -> Any:
    """The function each bucket of queries is evaluated with in a Python worker: Arrow tables of the
    bucket's qrels and run rows in, the per-query rows of every run out (:data:`OUTPUT_SCHEMA`)."""
    runs = list(runs)
    metric_names = list(metric_names)
    named = {n: sources.get(n, f"<Spark run {n!r}>") for n in runs}

    def evaluate_bucket(qrels_table: pa.Table, run_table: pa.Table) -> pa.Table:
        # Worker-side warnings (a bucket without judgments, say) say nothing about the whole
        # evaluation; the driver has issued the ones that do.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the engine's own reading: ordinary qrels, or a plugin's read in place of them
            qrels = _checked("<Spark qrels>", read_judgments, pl.from_arrow(qrels_table), metric_names)
            frame = cast(pl.DataFrame, pl.from_arrow(run_table))  # a table's, not a column's
            parts = {key[0]: part for key, part in frame.partition_by("run", as_dict=True).items()}
            empty = frame.clear()
            inputs = [_checked(named[n], Run.from_frame, parts.get(n, empty), n) for n in runs]
            evaluated = _checked("<Spark>", evaluate_many, qrels, inputs, metric_names, options=options)
        return pa.concat_tables(
            [_rows(name, res) for name, res in zip(runs, evaluated, strict=True)]
            or [OUTPUT_ARROW.empty_table()]
        )

    return evaluate_bucket


OUTPUT_ARROW = pa.schema(
    [
        pa.field("run", pa.string(), False),
        pa.field("query_id", pa.string(), False),
        pa.field("metric", pa.string(), False),
        pa.field("value", pa.float64()),
        pa.field("text", pa.string()),
    ]
)


def _rows(run_name: str, result: Result) -> pa.Table:
    """A :class:`Result` as rows of :data:`OUTPUT_SCHEMA`, metric by metric."""
    nq, names = len(result.query_ids), [str(m) for m in result.metrics]
    texts: list[str | None] = []
    for name in names:
        texts.extend(result.texts.get(name, (None,) * nq))
    return pa.table(
        {
            "run": pa.array([run_name] * (nq * len(names)), pa.string()),
            "query_id": pa.array(list(result.query_ids) * len(names), pa.string()),
            "metric": pa.array(np.repeat(np.array(names, dtype=object), nq), pa.string()),
            "value": pa.array(result.values.T.ravel(), pa.float64()),
            "text": pa.array(texts, pa.string()),
        },
        schema=OUTPUT_ARROW,
    )


# --------------------------------------------------------------------------------------------------
# Files read by Spark.


def read_qrels(spark: SparkSession, path: str) -> DataFrame:
    """A qrels file as a Spark DataFrame (``query_id, iteration, doc_id, relevance``): Parquet with the
    columns :func:`evaluate` takes, or TREC text ``qid iter docno label`` (plain or compressed, as Spark
    reads text), fields split on whitespace (see :func:`read_run` for which is which, and for what a
    bad line gives). The second field is kept as ir_measures keeps it, ``iteration`` (a string): qrels
    with subtopics hold the subtopic there, which a plugin's reader (irspec-diversity's) reads;
    ordinary metrics ignore it, as every TREC reader of irspec does."""
    fields = {0: "query_id", 1: "iteration", 2: "doc_id", 3: "relevance"}
    return _read(spark, path, QRELS, fields)


def read_run(spark: SparkSession, path: str, name: str | None = None) -> DataFrame:
    """A run file as a Spark DataFrame (``query_id, doc_id, score``): Parquet, or TREC text ``qid iter
    docno rank score [runid]`` (the rank is ignored, as everywhere in irspec). With ``name``, a ``run``
    column holds it, so that frames of several runs can be united and evaluated together.

    A local path is Parquet when its files are (they begin with ``PAR1``; a file named ``.parquet``
    that is not is an error), TREC text otherwise; a local directory is read whole, as Spark writes
    one (``part-*`` files, those named ``_*`` or ``.*`` left out), and must hold one kind of file. Any
    other path (``hdfs://``, ``s3a://``, a glob) is Parquet when it ends in ``.parquet``. A path that
    does not exist is an :class:`InputError`. A text line is checked as irspec's own TREC reader checks
    it (the number of fields, a score or label written as it reads numbers, no NUL byte, no carriage
    return before the line's end: lines end at a newline, with or without one before it) when Spark
    reads it: the job :func:`evaluate` runs first finds a qrels line's, :func:`results` a run line's.
    The :class:`InputError` names the file, the query and the line's text (Spark does not know line
    numbers)."""
    frame = _read(spark, path, RUN, {0: "query_id", 2: "doc_id", 4: "score"})
    return frame if name is None else frame.withColumn("run", F.lit(name))


# The numbers irspec's TREC readers take (polars' casts): a decimal with an optional exponent, or an
# infinity or NaN in any case; a label's, an integer. Spark's casts follow Java's, which also take
# 1.5d, 1.5F and hexadecimal 0x1p3: the text is checked before it is cast.
_SCORE_TEXT = r"^[+-]?(([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))$"
_LABEL_TEXT = r"^[+-]?[0-9]+$"
_BLANKS = "[ \\t\\r\\x0b\\x0c]"
_READ_ERROR = "irspec TREC line error: "


def _read(spark: SparkSession, path: str, kind: Kind, fields: dict[int, str]) -> DataFrame:
    """Parquet as it is, or TREC text: each non-blank line split on whitespace. A bad line (see
    :func:`read_run`) makes its value column raise an error that :func:`results` turns into irspec's,
    rather than a row silently dropped."""
    try:
        if _is_parquet(path):
            return spark.read.parquet(path)
        # lines end at "\n" alone, as irspec's reader reads them: Spark's own default also ends one at a lone
        # "\r", where the reader refuses a carriage return that does not end its line (CARRIAGE_RETURN)
        raw = spark.read.text(path, lineSep="\n").select("value", F.col("_metadata.file_path").alias("file"))
    except IrspecError:
        raise
    except Exception as e:  # Spark's own: a path that does not exist, a file that is no Parquet
        raise _read_error(e, path) from None
    # TREC's blanks (data.py's rule): spaces, tabs, CR, VT, FF; a line starting with "#" is a comment.
    text = F.regexp_replace(F.col("value"), f"^{_BLANKS}+|{_BLANKS}+$", "")
    lines = raw.select(text.alias("line"), "file").filter(
        (F.col("line") != "") & ~F.col("line").startswith("#")
    )
    parts = F.split(F.col("line"), f"{_BLANKS}+")
    count = F.size(parts)
    value = F.get(parts, kind.value_field)
    if kind is QRELS:
        cast_value = value.try_cast("long")
        problem = F.when(~value.rlike(_LABEL_TEXT), "value").when(cast_value.isNull(), "range")
    else:
        tried = value.try_cast("double")
        # a signed NaN, which polars reads and Spark's cast does not (its infinities it reads in any case)
        cast_value = F.when(tried.isNull() & value.rlike("(?i)^[+-]nan$"), F.lit(float("nan"))).otherwise(
            tried
        )
        problem = F.when(~value.rlike(_SCORE_TEXT), "value")
    fits = count >= kind.min_fields
    if kind.max_fields is not None:
        fits = fits & (count <= kind.max_fields)
    # a line's blanks at either end are gone: a "\r" left is followed by more of the line
    problem = (
        F.when(F.col("line").contains("\u0000"), "nul")
        .when(F.col("line").contains("\r"), "return")
        .when(~fits, "count")
        .otherwise(problem)
    )
    described = F.to_json(F.struct(F.lit(kind.kind).alias("kind"), "file", "line", problem.alias("problem")))
    checked = F.when(problem.isNotNull(), F.raise_error(F.concat(F.lit(_READ_ERROR), described))).otherwise(
        cast_value
    )
    columns = [
        (checked if i == kind.value_field else F.get(parts, i)).alias(name) for i, name in fields.items()
    ]
    return lines.select(*columns)


def _is_parquet(path: str) -> bool:
    """Whether ``path`` is read as Parquet (see :func:`read_run`), or an :class:`InputError`."""
    scheme = urlparse(path).scheme
    if scheme not in ("", "file"):
        return path.rstrip("/").endswith(".parquet")  # hdfs://, s3a://: not listed from here
    local = unquote(urlparse(path).path) if scheme else path
    if os.path.isfile(local):
        if _magic(local):
            return True
        if local.endswith(".parquet"):
            raise InputError("named .parquet but not Parquet (a Parquet file begins with PAR1)", path)
        return False
    if not os.path.isdir(local):
        return local.rstrip("/").endswith(".parquet")  # a glob, or a path Spark says is missing
    files = [
        os.path.join(top, f)
        for top, dirs, names in os.walk(local)
        for f in names
        if not f.startswith(("_", "."))
        and not any(part.startswith(("_", ".")) for part in os.path.relpath(top, local).split(os.sep)[1:])
    ]
    if not files:
        raise InputError("the directory holds no data file (only names beginning _ or .)", path)
    kinds = {_magic(f): f for f in files}
    if len(kinds) > 1:
        raise InputError(
            f"the directory holds Parquet files ({quote(kinds[True])}) and others ({quote(kinds[False])}): "
            "read them apart",
            path,
        )
    return next(iter(kinds))


def _magic(path: str) -> bool:
    """Whether the file ``path`` begins as Parquet does."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path) from None


def _read_error(error: Exception, path: str) -> Exception:
    """Spark's error on reading ``path`` as irspec's, where it is one irspec can word."""
    text = str(error)
    if "PATH_NOT_FOUND" in text:
        return InputError("no such file or directory", path)
    if "CANNOT_READ_FILE_FOOTER" in text or "is not a Parquet file" in text:
        return InputError("not a Parquet file (Spark could not read its footer)", path)
    return error


def _line_error(described: Mapping[str, Any]) -> InputError:
    """The :class:`InputError` of a bad TREC line that Spark found (:func:`_read`): what irspec's own
    reader says of it, with the line's text where that says its number."""
    kind = QRELS if described.get("kind") == "qrels" else RUN
    text, problem = str(described.get("line") or ""), described.get("problem")
    fields = re.split(f"{_BLANKS}+", text)
    query = fields[0] or None
    file = str(described.get("file") or f"<Spark {kind.kind}>")
    if file.startswith("file:"):  # a local file's URI, as Spark names it: its path
        file = unquote(urlparse(file).path)
    if problem == "nul":
        reason, query = "a NUL byte: binary data, not text", None
    elif problem == "return":
        reason, query = CARRIAGE_RETURN, None
    elif problem == "count":
        reason = f"expected {kind.expected}, got {len(fields)}"
    elif problem == "range":
        reason = label_out_of_range(fields[kind.value_field])
    else:
        what = "label must be an integer" if kind is QRELS else "score must be a number"
        reason = f"{what}, got {quote(fields[kind.value_field])}"
    return InputError(f"{reason} (in the line {quote(text)})", file, None, query)


# --------------------------------------------------------------------------------------------------
# Back on the driver: the per-query values as Results.


def results(per_query: DataFrame | pa.Table) -> list[Result]:
    """The per-query frame (a Spark DataFrame, or its Arrow collection ``per_query.toArrow()``) as one
    :class:`Result` per run, sorted by run name: what :mod:`irspec.stats.significance`,
    :mod:`irspec.compare` and the reports take.

    Queries are in sorted order and metrics in the order they were asked for, as in a Result of
    :func:`irspec.evaluate`; so are the aggregates, computed by the same function. A run with no query
    to evaluate (``missing_queries="skip"`` and none of the qrels' queries, or qrels without judgments)
    has no row, and a Result without queries, as in memory. A frame filtered by the caller gives what
    it holds: a run, a query or a metric without rows left (``where("metric != 'AP'")``) is not in the
    Results, whose aggregates are those of the rows kept."""
    table, described = _collected(per_query)
    frame = cast(pl.DataFrame, pl.from_arrow(table))  # a table's, not a column's
    present = list(dict.fromkeys(frame.get_column("metric").to_list()))
    recorded = described.get("metrics") or []
    # the metrics asked for, in their order, less those the caller filtered out (none when no run has a row)
    kept = [n for n in recorded if n in present or not present]
    names = [*kept, *(n for n in present if n not in recorded)]
    options = Options(**described["options"]) if "options" in described else Options()
    bound = tuple(get_registry().parse(n)[0] for n in names)
    column = {name: j for j, name in enumerate(names)}
    notes = described.get("warnings", {})
    sources = described.get("sources", {})
    parts = {key[0]: part for key, part in frame.partition_by("run", as_dict=True).items()}
    out = []
    for run_name in sorted({*parts, *described.get("empty", ())}):
        part = parts.get(run_name, frame.clear())
        query_ids = sorted(set(part.get_column("query_id").to_list()))
        position = {qid: i for i, qid in enumerate(query_ids)}
        rows = np.array([position[x] for x in part.get_column("query_id").to_list()], dtype=np.int64)
        cols = np.array([column[x] for x in part.get_column("metric").to_list()], dtype=np.int64)
        values = np.full((len(query_ids), len(names)), np.nan)
        values[rows, cols] = part.get_column("value").to_numpy()
        texts = {}
        for name in (str(m) for m in bound if m.aggregate == "none"):
            sub = part.filter(pl.col("metric") == name)
            by_query = dict(
                zip(sub.get_column("query_id").to_list(), sub.get_column("text").to_list(), strict=True)
            )
            texts[name] = tuple(by_query.get(qid) or "" for qid in query_ids)
        said = (*notes.get(run_name, ()), *notes.get("", ()))
        source = sources.get(run_name, f"<Spark run {run_name!r}>")
        out.append(Result(run_name, source, bound, tuple(query_ids), values, options, said, texts))
    return out


def aggregate(per_query: DataFrame | pa.Table, run: str | None = None) -> dict[str, float]:
    """The aggregates of one run of the per-query frame: the same dict as ``Result.aggregate()``.

    ``run`` names the run when the frame holds several."""
    found = results(per_query)
    if run is not None:
        found = [r for r in found if r.run_name == run]
        if not found:
            raise EvaluationError(f"no run {run!r} in the per-query frame")
    if len(found) != 1:
        names = ", ".join(repr(r.run_name) for r in found)
        raise EvaluationError(
            f"the per-query frame holds {len(found)} runs ({names}); pass run=... or use results()"
        )
    return found[0].aggregate()


def _collected(per_query: DataFrame | pa.Table) -> tuple[pa.Table, dict[str, Any]]:
    """The per-query rows on the driver and what :func:`evaluate` recorded about them (the metrics in
    order, the options), with an irspec error raised in a Spark task raised here as itself."""
    if isinstance(per_query, pa.Table):
        table = per_query
        found = per_query.schema.field("metric").metadata or {}
        # Spark's toArrow() keeps a column's metadata as its own JSON under this key
        spark_json = found.get(b"SPARK::metadata::json")
        described = found.get(_METADATA_KEY.encode()) or (
            json.loads(spark_json).get(_METADATA_KEY) if spark_json else None
        )
    else:
        field = per_query.schema["metric"]
        described = field.metadata.get(_METADATA_KEY)
        table = _arrow(per_query.select(*OUTPUT_SCHEMA.fieldNames()))
    return table, (json.loads(described) if described else {})


_TASK_ERROR = "irspec error in a Spark task"


def _checked(source: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, with an irspec error re-raised as one line that Spark carries to the
    driver (it wraps a task's exception in its own, with the worker's traceback) and :func:`_collected`
    turns back into the irspec error. An input error names ``source`` rather than the reader's
    ``<DataFrame>``, and no row number: a row of a bucket is no row the user can find."""
    try:
        return fn(*args, **kwargs)
    except InputError as e:
        reason = re.sub(r" in row \d+$", "", re.sub(r"^row \d+: ", "", e.reason))
        raise RuntimeError(
            f"{_TASK_ERROR} (InputError): {InputError(reason, source, None, e.query)}"
        ) from None
    except IrspecError as e:
        raise RuntimeError(f"{_TASK_ERROR} (EvaluationError): {e}") from None


def _task_error(error: Exception) -> Exception:
    """The irspec error a Spark task raised (see :func:`_checked`), or a bad TREC line's that Spark
    found reading it (:func:`_read`), or ``error`` itself."""
    text = str(error)
    at = text.find(_READ_ERROR)
    if at >= 0:
        try:
            described, _ = json.JSONDecoder().raw_decode(text, at + len(_READ_ERROR))
        except ValueError:
            return error
        return _line_error(described)
    found = re.search(re.escape(_TASK_ERROR) + r" \((\w+)\): (.*)", text)
    if found is None:
        return error
    cls = InputError if found.group(1) == "InputError" else EvaluationError
    return cls(found.group(2).strip())
