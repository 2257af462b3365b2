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
  job over the distinct (run, query) pairs: it also raises ``missing_queries="error"`` on the driver
  and issues the warnings :func:`irspec.evaluate` issues about missing and unknown queries. That job
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

import numpy as np
import polars as pl
import pyarrow as pa
from pyspark.errors import PythonException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from irspec.data import Run
from irspec.data.objects import CONVENTIONS, ROLES
from irspec.errors import EvaluationError, InputError, IrspecError, quote
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import MissingQueries, Options
from irspec.evaluation.evaluate import evaluate_many, issue_warnings
from irspec.evaluation.judgments import read_judgments, reads_qrels
from irspec.evaluation.notes import first_few, missing_text, queries_text
from irspec.evaluation.result import Result
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

    On a local master the Python workers run this interpreter (which has irspec), unless
    ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` says otherwise; on a cluster irspec must be
    installed where the workers run."""
    config = dict(config or {})
    chosen = os.environ.get("PYSPARK_PYTHON")
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
        if master.startswith("local") and not chosen:
            config.setdefault("spark.pyspark.python", sys.executable)
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
    rows are held in memory by one Python worker. Before returning, one job collects the distinct
    (run, query) pairs (see the module docstring); the evaluation itself runs when the frame is used.
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
    else:
        q, query = _normalised(qrels, "qrels", "label", columns), "query_id"
    r = _normalised(run, "run", "score", columns, run_name)
    runs, notes = _coverage(q, query, r, run_name if "run" not in _present(run, columns) else None, options)
    evaluate_bucket = _bucket_evaluator(runs, names, options)
    # A dry run on empty inputs, on the driver: metrics that need another input, or options that the
    # engine refuses, fail here with irspec's own error rather than inside a Spark task.
    try:
        evaluate_bucket(_empty_arrow(q), _empty_arrow(r))
    except RuntimeError as e:
        raise _task_error(e) from None
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

    def bucket(column: str) -> Any:
        # both query columns hold strings, so a query's qrels and run rows hash alike
        return F.pmod(F.xxhash64(column), F.lit(n)).alias("bucket")

    with warnings.catch_warnings():
        # pyspark checks the pandas version for every Arrow UDF; irspec's hands it Arrow tables only.
        warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
        per_query = (
            q.groupBy(bucket(query))
            .cogroup(r.groupBy(bucket("query_id")))
            .applyInArrow(lambda _key, left, right: evaluate_bucket(left, right), schema=OUTPUT_SCHEMA)
        )
    described = json.dumps({"metrics": names, "options": options.as_dict(), "warnings": notes})
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
    q: DataFrame, query: str, r: DataFrame, single: str | None, options: Options
) -> tuple[list[str], dict[str, list[str]]]:
    """The run names (sorted; ``[single]`` for a frame without a run column) after checking which qrels
    queries each run lacks and which of its queries the qrels lack: an error under
    ``missing_queries="error"``, otherwise the warnings :func:`irspec.evaluate` issues, which are
    returned too, by run name (``""``: about every run), for :func:`results`."""
    # the qrels' queries and the run's (run, query) pairs in one collection: one Spark job fewer, and
    # each job is ~0.25 s on a small input (issue 35)
    both = _arrow(
        q.select(
            F.lit(None).cast("string").alias("run"),
            F.col(query).alias("query_id"),
            F.lit(True).alias("judged"),
        )
        .unionByName(r.select("run", "query_id", F.lit(False).alias("judged")))
        .distinct()
    )
    judged: set[str] = set()
    answered: dict[str, set[str]] = {}
    for name, qid, in_qrels in zip(
        *(both.column(c).to_pylist() for c in ("run", "query_id", "judged")), strict=True
    ):
        if in_qrels:
            judged.add(qid)
        else:
            answered.setdefault(name, set()).add(qid)
    if None in answered:
        raise InputError("the run column has a null run name", "<Spark run>")
    runs = [single] if single is not None else sorted(answered)
    notes: dict[str, list[str]] = {"": []}
    for name in runs:
        source = f"<Spark run {name!r}>"
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
    if not judged:
        notes[""].append("qrels <Spark qrels> has no judgments")
    if not runs:
        notes[""].append("<Spark run>: the run frame has no rows, so no run is evaluated")
    issue_warnings([text for texts in notes.values() for text in texts])
    return runs, notes


def _arrow(frame: DataFrame) -> pa.Table:
    """``frame`` collected to the driver as an Arrow table."""
    return frame.toArrow()


def _empty_arrow(frame: DataFrame) -> pa.Table:
    return to_arrow_schema(frame.schema).empty_table()


def _bucket_evaluator(runs: Sequence[str], metric_names: Sequence[str], options: Options) -> Any:
    """The function each bucket of queries is evaluated with in a Python worker: Arrow tables of the
    bucket's qrels and run rows in, the per-query rows of every run out (:data:`OUTPUT_SCHEMA`)."""
    runs = list(runs)
    metric_names = list(metric_names)

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
            inputs = [_checked(f"<Spark run {n!r}>", Run.from_frame, parts.get(n, empty), n) for n in runs]
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
    """A qrels file as a Spark DataFrame (``query_id, iteration, doc_id, relevance``): Parquet (by its
    ``.parquet`` suffix, or a directory of Parquet files) with the columns :func:`evaluate` takes, or
    TREC text ``qid iter docno label`` (plain or compressed, as Spark reads text), fields split on
    whitespace. The second field is kept as ir_measures keeps it, ``iteration`` (a string): qrels with
    subtopics hold the subtopic there, which a plugin's reader (irspec-diversity's) reads; ordinary
    metrics ignore it, as every TREC reader of irspec does."""
    fields = {0: "query_id", 1: "iteration", 2: "doc_id", 3: "relevance"}
    return _read(spark, path, ("query_id", "doc_id", "relevance"), fields, 4, "long")


def read_run(spark: SparkSession, path: str, name: str | None = None) -> DataFrame:
    """A run file as a Spark DataFrame (``query_id, doc_id, score``): Parquet, or TREC text ``qid iter
    docno rank score [runid]`` (the rank is ignored, as everywhere in irspec). With ``name``, a ``run``
    column holds it, so that frames of several runs can be united and evaluated together."""
    frame = _read(
        spark, path, ("query_id", "doc_id", "score"), {0: "query_id", 2: "doc_id", 4: "score"}, 5, "double"
    )
    return frame if name is None else frame.withColumn("run", F.lit(name))


def _read(
    spark: SparkSession,
    path: str,
    names: tuple[str, ...],
    fields: dict[int, str],
    least: int,
    value_type: str,
) -> DataFrame:
    """Parquet as it is, or TREC text: each non-blank line split on whitespace. A line with too few (or,
    for qrels, too many) fields, or a value that is no number, leaves a null that the bucket's reader
    reports with its query and docno, rather than a row silently dropped."""
    if path.rstrip("/").endswith(".parquet") or os.path.isdir(path):
        return spark.read.parquet(path)
    # TREC's blanks (data.py's rule): spaces, tabs, CR, VT, FF; a line starting with "#" is a comment.
    text = F.regexp_replace(F.col("value"), r"^[ \t\r\x0b\x0c]+|[ \t\r\x0b\x0c]+$", "")
    lines = (
        spark.read.text(path)
        .select(text.alias("line"))
        .filter((F.col("line") != "") & ~F.col("line").startswith("#"))
    )
    parts = F.split(F.col("line"), r"[ \t\r\x0b\x0c]+")
    fits = F.size(parts) >= least if value_type == "double" else F.size(parts) == least
    columns = []
    for i, name in fields.items():
        field = F.get(parts, i)
        if name == names[2]:
            field = F.when(fits, field.try_cast(value_type))
        columns.append(field.alias(name))
    return lines.select(*columns)


# --------------------------------------------------------------------------------------------------
# Back on the driver: the per-query values as Results.


def results(per_query: DataFrame | pa.Table) -> list[Result]:
    """The per-query frame (a Spark DataFrame, or its Arrow collection) as one :class:`Result` per run,
    sorted by run name: what :mod:`irspec.stats.significance`, :mod:`irspec.compare` and the reports take.

    Queries are in sorted order and metrics in the order they were asked for, as in a Result of
    :func:`irspec.evaluate`; so are the aggregates, computed by the same function."""
    table, described = _collected(per_query)
    frame = cast(pl.DataFrame, pl.from_arrow(table))  # a table's, not a column's
    names = described.get("metrics") or list(dict.fromkeys(frame.get_column("metric").to_list()))
    options = Options(**described["options"]) if "options" in described else Options()
    bound = tuple(get_registry().parse(n)[0] for n in names)
    out = []
    for key, part in sorted(frame.partition_by("run", as_dict=True).items()):
        query_ids = sorted(set(part.get_column("query_id").to_list()))
        position = {qid: i for i, qid in enumerate(query_ids)}
        column = {name: j for j, name in enumerate(names)}
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
        run_name = key[0]
        notes = described.get("warnings", {})
        said = (*notes.get(run_name, ()), *notes.get("", ()))
        out.append(
            Result(
                run_name, f"<Spark run {run_name!r}>", bound, tuple(query_ids), values, options, said, texts
            )
        )
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
        described = (per_query.schema.field("metric").metadata or {}).get(_METADATA_KEY.encode())
    else:
        field = per_query.schema["metric"]
        described = field.metadata.get(_METADATA_KEY)
        try:
            table = per_query.select(*OUTPUT_SCHEMA.fieldNames()).toArrow()
        except PythonException as e:
            raise _task_error(e) from None
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
        reason = re.sub(r"^row \d+: ", "", e.reason)
        raise RuntimeError(
            f"{_TASK_ERROR} (InputError): {InputError(reason, source, None, e.query)}"
        ) from None
    except IrspecError as e:
        raise RuntimeError(f"{_TASK_ERROR} (EvaluationError): {e}") from None


def _task_error(error: Exception) -> Exception:
    """The irspec error a Spark task raised (see :func:`_checked`), or ``error`` itself."""
    found = re.search(re.escape(_TASK_ERROR) + r" \((\w+)\): (.*)", str(error))
    if found is None:
        return error
    cls = InputError if found.group(1) == "InputError" else EvaluationError
    return cls(found.group(2).strip())
