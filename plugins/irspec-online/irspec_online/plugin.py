"""irspec-online's plugin: the ``log`` input reader and the online metrics computed from it.

Registered through irspec's public hooks only: ``irspec_register_readers`` adds the reader of search
interaction logs (JSON Lines, Parquet or DataFrames, see :mod:`irspec_online.log`), ``irspec_register_metrics`` adds metrics
that declare ``needs="log"``, so irspec evaluates them on a log (``irspec.evaluate_input``, or a plan's
``log:`` key) rather than on qrels and runs, and ``irspec_register_plan_sections`` adds a plan's ``ab:``
section, the A/B test the reader takes as its ``ab`` option. Importing this module imports neither numpy
nor the reader.
"""

from __future__ import annotations

import irspec
from irspec import InputReader, MetricDef, Param
from irspec.plugin_api import NONNEGATIVE, UNIT, PlanSection

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
"satisfied click" threshold of web search studies. """
    + _PER_SESSION,
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


AB = PlanSection(
    "ab",
    reader="log",
    summary="an A/B test compares the arms of a log",
    schema={
        "description": "An online A/B test of the `log`'s arms (needs irspec-online): every log metric of arm against arm, aggregated to the unit of randomisation first; Welch's t-test for a metric with one value per unit, the delta method (Deng et al., KDD 2018) for a ratio of per-unit sums (CTR per user), a sample-ratio-mismatch check (chi-square), and the p-values corrected as in `compare`. Shown in every output after the log's metrics.",
        "type": "object",
        "additionalProperties": False,
        "required": ["baseline"],
        "properties": {
            "baseline": {
                "description": "The control arm: every other arm is compared with it.",
                "type": "string",
                "minLength": 1,
            },
            "unit": {
                "description": "The unit of randomisation: `user` (each record's `user` key), `session`, or `query` (a query issue). Default user.",
                "enum": ["user", "session", "query"],
            },
            "arm": {
                "description": "The records' key (column) holding the arm. Default `arm`.",
                "type": "string",
                "minLength": 1,
            },
            "user": {
                "description": "The records' key (column) holding the user, read when the unit is `user`. Default `user`.",
                "type": "string",
                "minLength": 1,
            },
            "split": {
                "description": "The expected share of units per arm, as weights (`{control: 1, treatment: 1}`); default equal.",
                "type": "object",
                "additionalProperties": {"type": "number", "exclusiveMinimum": 0},
                "minProperties": 2,
            },
            "confidence": {
                "description": "Confidence level of the intervals. Default 0.95.",
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
            },
            "correction": {
                "description": "Multiple-comparison correction over `family`: none, bonferroni, holm (default), bh or by.",
                "enum": ["none", "bonferroni", "holm", "bh", "by"],
            },
            "family": {
                "description": "The p-values corrected together: `all` (every arm and metric of the test; default) or `per-metric`.",
                "enum": ["all", "per-metric"],
            },
            "srm_alpha": {
                "description": "A chi-square p-value of the units per arm under this is a sample-ratio mismatch, warned about in every output. Default 0.001.",
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
            },
        },
    },
)
"""A plan's ``ab:`` section: an A/B test of the ``log``'s arms (:class:`irspec_online.ab.Design`), its value
passed to :func:`irspec_online.log.read_log` as ``ab=``. Its settings' names and choices are
:data:`irspec_online.ab.KEYS` and the choices :class:`~irspec_online.ab.Design` checks (the plugin's
tests hold them equal)."""


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


@irspec.hookimpl
def irspec_register_plan_sections(register) -> None:
    """Register the plan's ``ab:`` section, for the ``log`` reader."""
    register(AB)
