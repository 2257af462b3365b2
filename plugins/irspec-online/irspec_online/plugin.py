"""irspec-online's plugin: the ``log`` input reader and the online metrics computed from it.

Registered through irspec's public hooks only: ``irspec_register_readers`` adds the reader of search
interaction logs (JSON Lines, Parquet or DataFrames, see :mod:`irspec_online.log`), and ``irspec_register_metrics`` adds metrics
that declare ``needs="log"``, so irspec evaluates them on a log (``irspec.evaluate_input``, or a plan's
``log:`` key) rather than on qrels and runs. Importing this module imports neither numpy nor the reader.
"""

from __future__ import annotations

import irspec
from irspec import InputReader, MetricDef, Param
from irspec.plugin_api import NONNEGATIVE, UNIT

K = "irspec_online.kernels"

LOG = InputReader(
    "log",
    "irspec_online.log:read_log",
    suffixes=(".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".parquet", ".pq"),
    summary="search interaction log (JSON Lines, Parquet, or a polars, pandas or Spark DataFrame): one query issue "
    "per record (session, query, timestamp, results, clicks)",
)

_PER_SESSION = """The value goes to the first query issue of each session (NaN on the others), so the mean
is over sessions."""

CTR = MetricDef(
    "CTR",
    "click-through rate: query issues with at least one click / query issues",
    (Param("k", "int", None, "count only clicks on the top k results (default: any click)", minimum=1),),
    at="k",
    needs="log",
    compute=f"{K}:ctr",
    doc="""CTR@k = |query issues with a click on a result ranked <= k| / |query issues|, over every query issue
of the log (a results page shown), pages with no results included (they cannot be clicked). Per query
issue: 1 or 0. This is the page-level click-through rate of web search logs; the seed text's "ratio of
users who click on a specific link to the number of total users who view a page".""",
    bounds=UNIT,
)

ZRR = MetricDef(
    "ZRR",
    "zero result rate: query issues that showed no results / query issues",
    (),
    needs="log",
    compute=f"{K}:zero_result",
    better="lower",
    doc="""ZRR = |query issues whose results list is empty| / |query issues|. A high rate points at a recall
problem, or at information the index does not hold.""",
    bounds=UNIT,
)

ABANDONMENT = MetricDef(
    "Abandonment",
    "session abandonment rate: sessions without a click / sessions",
    (),
    needs="log",
    compute=f"{K}:abandonment",
    better="lower",
    doc="""Abandonment = |sessions in which no query issue got a click| / |sessions|. """ + _PER_SESSION,
    bounds=UNIT,
)

SESSION_SUCCESS = MetricDef(
    "SessionSuccess",
    "session success rate: sessions with a click of long enough dwell time / sessions",
    (Param("dwell", "float", 30.0, "seconds of dwell time that make a click a success", minimum=0),),
    positional="dwell",
    needs="log",
    compute=f"{K}:session_success",
    doc="""SessionSuccess(dwell=t) = |sessions with at least one click whose dwell time is >= t seconds| /
|sessions|. A click without a dwell time never counts as a success. Default t = 30 s, the usual
"satisfied click" threshold of web search studies. """ + _PER_SESSION,
    bounds=UNIT,
)

QUERIES_PER = MetricDef(
    "QueriesPer",
    "queries per session, or per minute, hour or day",
    (
        Param(
            "unit",
            "choice",
            "session",
            "what queries are counted per: a session, or a calendar minute, hour or day (UTC)",
            choices=("session", "minute", "hour", "day"),
        ),
    ),
    positional="unit",
    needs="log",
    compute=f"{K}:queries_per",
    better="neither",
    doc="""QueriesPer(session) = |query issues| / |sessions|: the mean number of queries per session.
QueriesPer(minute|hour|day) = the mean number of query issues per calendar minute, hour or day (UTC) in
which at least one query was issued: units without queries are not counted, so this is the load while
the system is in use, not the total divided by the log's time span. The value goes to the first query
issue of each session or unit (NaN on the others).""",
    bounds=NONNEGATIVE,
)


@irspec.hookimpl
def irspec_register_readers(register) -> None:
    """Register the reader of interaction logs, as input kind ``log``."""
    register(LOG)


@irspec.hookimpl
def irspec_register_metrics(register) -> None:
    """Register the online metrics."""
    register(CTR, aliases=["click_through_rate", "clickthrough_rate"])
    register(ZRR, aliases=["zero_result_rate"])
    register(ABANDONMENT, aliases=["session_abandonment_rate", "abandonment_rate"])
    register(SESSION_SUCCESS, aliases=["session_success_rate"])
    register(QUERIES_PER, aliases=["queries_per_time_unit", "query_rate"])
