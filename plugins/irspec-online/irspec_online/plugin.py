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
from irspec.plugin_api import NONNEGATIVE, UNIT, ClickModelDef, Command, InterleavingDef, PlanSection

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
    (
        Param(
            "k",
            "int",
            None,
            "count only clicks at ranks <= k, a result's or an ad's (default: any click)",
            minimum=1,
        ),
    ),
    at="k",
    needs="log",
    compute=f"{K}:ctr",
    doc="""CTR@k = |query issues with a click at a rank <= k| / |query issues|, over every query issue of the
log (a results page shown), pages with no results included (they cannot be clicked). A click counts at
its rank whatever was clicked there, a result or an ad (a document not among the results): the page's
positions, as web search logs count them; interleaving and the counterfactual estimates read only the
results' clicks. Per query
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


INTERLEAVING = MetricDef(
    "Interleaving",
    "interleaving: the preference of an interleaved list's clicks for ranking b over a (+1 b, -1 a, 0 tie)",
    (
        Param(
            "method",
            "str",
            "team-draft",
            "the interleaving method the lists were served with (a registered one: team-draft, balanced, "
            "probabilistic, optimized), which credits the clicks",
        ),
    ),
    positional="method",
    needs="log",
    compute=f"{K}:interleaving",
    better="neither",
    doc="""Interleaving(method) = per query issue that served an interleaved list (its record has origins, one
per result: the ranking each slot came from, its ranks in a and b) and got a click, the outcome its clicks
give under the method's credit rule: +1 when they prefer b, -1 when they prefer a, 0 for a tie (probabilistic
interleaving: the expected outcome over the assignments that could have made the list); NaN for the others.
The mean is the preference of b over a (Chapelle et al.'s Δ_AB is half of it). Every output also shows the
interleaving test: wins, losses, ties, the preference's bootstrap interval over users and the sign test over
queries (a plan's online: interleaving: sets them).""",
    bounds=(-1.0, 1.0),
)

_MEASURE = Param(
    "measure",
    "choice",
    "ctr",
    "what is estimated: ctr (clicks on the top k per query issue), rr (the reciprocal rank of the clicks) or "
    "click (the clicks at rank k)",
    choices=("ctr", "rr", "click"),
)
_CUTOFF = Param(
    "k", "int", 10, "the new ranking's depth estimated (ctr, rr) or the rank (click)", minimum=1, maximum=100
)
_ESTIMATE_DOC = """The new ranking is the counterfactual one the log is read with (online: counterfactual: run; irspec
online --counterfactual). Per query issue whose query it ranks, the sum over the clicks of lambda(r') w, with r' the
rank the new ranking gives the clicked document and lambda the measure's weight (ctr: 1 for r' <= k; rr: 1/r';
click: 1 at r' = k), and w the click's weight: theta_r' / theta_r from examination propensities (a fitted PBM's or a
swap experiment's; Joachims, Swaminathan and Schnabel, WSDM 2017), or, for a randomised logger's record (its
propensities), 1 / p for a click where the new ranking agrees with the log (p the logger's probability for that
slot), 0 elsewhere. The mean over query issues is the estimate; every output also shows its standard error and
interval. """

IPS = MetricDef(
    "IPS",
    "inverse propensity scoring: a new ranking's clicks estimated from the log of another",
    (_MEASURE, _CUTOFF),
    at="k",
    positional="measure",
    needs="log",
    compute=f"{K}:estimate",
    doc=_ESTIMATE_DOC
    + "Unbiased where the propensities are right and the new ranking's documents were shown.",
    bounds=NONNEGATIVE,
)

CLIPPED_IPS = MetricDef(
    "ClippedIPS",
    "clipped IPS: each click's weight at most clip (less variance, some downward bias)",
    (
        _MEASURE,
        _CUTOFF,
        Param("clip", "float", 10.0, "the largest weight of a click", minimum=0, exclusive_minimum=True),
    ),
    at="k",
    positional="measure",
    needs="log",
    compute=f"{K}:estimate",
    doc=_ESTIMATE_DOC
    + "Each weight w is min(w, clip) (Strehl et al. 2010; Joachims et al. clip the propensities).",
    bounds=NONNEGATIVE,
)

SNIPS = MetricDef(
    "SNIPS",
    "self-normalised IPS, of a randomised logger's log: per rank, weighted clicks over the weights",
    (_MEASURE, _CUTOFF),
    at="k",
    positional="measure",
    needs="log",
    compute=f"{K}:estimate",
    doc=_ESTIMATE_DOC
    + "Self-normalised (Swaminathan and Joachims, NeurIPS 2015): per rank k, the weighted clicks where "
    "the new ranking agrees with the log divided by the sum of those weights (the control variate, of expectation 1), "
    "summed with lambda; needs the records' propensities (a randomised logger), with the delta method's variance.",
    bounds=NONNEGATIVE,
)

INTERLEAVING_METHODS = (
    InterleavingDef(
        "TeamDraft",
        "team-draft interleaving: the rankings pick in turn, a coin deciding who picks first at each round",
        "irspec_online.interleaving:TeamDraft",
        doc="Radlinski, Kurup and Joachims, How does clickthrough data reflect retrieval quality?, CIKM 2008. "
        "Each ranking picks its best document not yet in the list, the one with fewer picks first, a coin "
        "deciding when both have picked as often; a click counts for the team of its slot, the team with more "
        "clicks wins.",
    ),
    InterleavingDef(
        "Balanced",
        "balanced interleaving: the rankings' tops merged, a coin choosing which goes first",
        "irspec_online.interleaving:Balanced",
        doc="Joachims, Optimizing search engines using clickthrough data, KDD 2002. Every prefix of the list holds "
        "the top ka of a and the top kb of b, |ka - kb| <= 1; with k the better rank of the lowest clicked "
        "document in a or b, the ranking with more clicked documents in its top k wins.",
    ),
    InterleavingDef(
        "Probabilistic",
        "probabilistic interleaving: slots drawn from each ranking's softmax, outcomes marginalised",
        "irspec_online.interleaving:Probabilistic",
        (
            Param(
                "tau",
                "float",
                3.0,
                "the softmax's exponent: P(d) ~ 1 / rank(d)^tau",
                minimum=0,
                exclusive_minimum=True,
                # every weight 1 / rank^tau stays a positive float down to rank 100,000, the longest list
                # irspec interleave serves: a weight of 0 would mark a document as drawn already
                maximum=50,
            ),
        ),
        positional="tau",
        doc="Hofmann, Whiteson and de Rijke, A probabilistic method for inferring preferences from clicks, CIKM "
        "2011. For each slot a coin picks a ranking, which draws a document from its softmax over the documents "
        "not yet placed; the outcome is the expectation over the assignments that could have produced the list.",
    ),
    InterleavingDef(
        "Optimized",
        "optimized interleaving: the most sensitive unbiased distribution of allowed lists (a linear program)",
        "irspec_online.interleaving:Optimized",
        (
            Param(
                "credit",
                "choice",
                "linear",
                "the credit of a click on d: linear rank_a(d) - rank_b(d), its sign (binary), or 1/rank_b(d) - "
                "1/rank_a(d) (inverse)",
                choices=("linear", "binary", "inverse"),
            ),
        ),
        positional="credit",
        doc="Radlinski and Craswell, Optimized interleaving for online retrieval evaluation, WSDM 2013. Lists whose "
        "every slot holds the best remaining document of a or b, served with the probabilities that make a random "
        "clicker's expected credit 0 at every rank and the comparison most sensitive; the sign of the clicked "
        "documents' summed credit is the outcome.",
    ),
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


ONLINE = PlanSection(
    "online",
    reader="log",
    summary="online: sets how the log's interleaving is tested and what a counterfactual estimate compares",
    schema={
        "description": "How the `log`'s interleaving experiment is tested (its `Interleaving` metrics) and what its "
        "counterfactual estimates (`IPS`, `ClippedIPS`, `SNIPS`) compare (needs irspec-online).",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "interleaving": {
                "description": "The interleaving test: a Poisson bootstrap over users, a sign test over queries.",
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "replicates": {"description": "Bootstrap replicates (default 1000).", "type": "integer",
                                   "minimum": 1, "maximum": 1000000},
                    "seed": {"description": "The bootstrap's seed (default 0).", "type": "integer", "minimum": 0},
                    "confidence": {"description": "Confidence level of the interval (default 0.95).", "type": "number",
                                   "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                },
            },
            "counterfactual": {
                "description": "A new ranking estimated from the log of another.",
                "type": "object",
                "additionalProperties": False,
                "required": ["run"],
                "properties": {
                    "run": {"description": "The ranking to estimate: a TREC run file (its query ids are the records' "
                            "qid, else their query text).", "type": "string", "minLength": 1},
                    "propensity": {"description": "The examination probability per rank: a JSON file written by "
                                   "`irspec clickmodel fit` (a PBM or a swap experiment), or a list, rank 1 first.",
                                   "anyOf": [{"type": "string", "minLength": 1},
                                             {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0,
                                                                         "maximum": 1}, "minItems": 1}]},
                    "clip": {"description": "Deprecated: give ClippedIPS its clip, ClippedIPS(ctr, clip=2)@10 (10 alone is accepted).", "type": "number",
                             "exclusiveMinimum": 0},
                    "confidence": {"description": "Confidence level of the intervals (default 0.95).",
                                   "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                },
            },
        },
    },
)  # fmt: skip
"""A plan's ``online:`` section (:class:`irspec_online.settings.Online`), passed to
:func:`irspec_online.log.read_log` as ``online=``."""


_CM = "irspec_online.clickmodels"

CLICK_MODELS = (
    ClickModelDef(
        "PBM",
        "position-based model: a click is an examination of the rank and an attractive document",
        f"{_CM}:PBM",
        doc="Craswell, Zoeter, Taylor and Ramsey, An experimental comparison of click position-bias models, WSDM "
        "2008 (after Richardson et al. 2007). P(C_r = 1) = attr(q, d) exam(r); fitted by EM. Its exam per rank "
        "are the propensities of IPS estimates (Joachims, Swaminathan and Schnabel, WSDM 2017); a rank below every "
        "page of the log has none (null), and IPS leaves out the clicks there.",
    ),
    ClickModelDef(
        "CM",
        "cascade model: the user scans down and stops at the first click",
        f"{_CM}:CM",
        doc="Craswell, Zoeter, Taylor and Ramsey, WSDM 2008. attr(q, d) = clicks / impressions over the ranks down "
        "to the first click (every rank of a session without one): a closed form.",
    ),
    ClickModelDef(
        "DCM",
        "dependent click model: after a click the user goes on with a probability of its rank",
        f"{_CM}:DCM",
        doc="Guo, Liu and Wang, Efficient multiple-click models in web search, WSDM 2009. With the last click taken "
        "as satisfying: attr(q, d) counted down to the last click, cont(r) = the share of clicks at r that are not "
        "the last: closed forms.",
    ),
    ClickModelDef(
        "UBM",
        "user browsing model: examination depends on the rank and the previous click's rank",
        f"{_CM}:UBM",
        doc="Dupret and Piwowarski, A user browsing model to predict search engine click data from past "
        "observations, SIGIR 2008. P(C_r = 1) = attr(q, d) exam(r, r'), r' the previous click's rank (0: none); "
        "fitted by EM; an exam(r, r') no result of the log fell under is unknown (null).",
    ),
    ClickModelDef(
        "DBN",
        "dynamic Bayesian network: examine, be attracted, click, be satisfied and stop, or go on",
        f"{_CM}:DBN",
        doc="Chapelle and Zhang, A dynamic Bayesian network click model for web search ranking, WWW 2009. "
        "attr(q, d), sat(q, d) and one continuation cont; fitted by EM with the exact posteriors (a forward and a "
        "backward pass over each session).",
    ),
    ClickModelDef(
        "Swap",
        "a swap experiment: examination propensities per rank from swapping the top result with rank k",
        f"{_CM}:Swap",
        doc="Joachims, Swaminathan and Schnabel, Unbiased learning-to-rank with biased feedback, WSDM 2017, section 5. "
        "Query issues whose top result was swapped with the one at rank k (the record's swap: k; 1 for none), k "
        "uniform: exam(k) / exam(1) = the top result's click rate at k / its click rate at 1. The propensities of IPS "
        "estimates (irspec online --propensity).",
    ),
)

C = "irspec_online.commands"
A = "irspec_online.arguments"  # argparse alone: --help declares every command

COMMANDS = (
    Command(
        "interleave",
        "interleave two runs into the lists to serve, each slot's origin recorded (irspec-online)",
        declare=f"{A}:declare_interleave",
        run=f"{C}:run_interleave",
        roles={
            "run_a": "input",
            "run_b": "input",
            "method": "other",
            "seed": "other",
            "depth": "other",
            "output": "output",
        },
        description="Interleave two runs, query by query, into the lists to serve (team-draft, balanced, "
        "probabilistic or optimized interleaving), each slot's origin recorded for crediting the clicks: one "
        "JSON line per query both runs answer. Deterministic for a seed: a query's list depends on the seed and "
        "the query alone.",
    ),
    Command(
        "online",
        "a log's online metrics, interleaving test, A/B test and counterfactual estimates (irspec-online)",
        declare=f"{A}:declare_online",
        run=f"{C}:run_online",
        roles={
            "logs": "input",
            "measures": "other",
            "ab": "other",
            "unit": "other",
            "replicates": "other",
            "seed": "other",
            "confidence": "other",
            "counterfactual": "input",
            "propensity": "input",
            "clip": "other",
            "format": "other",
            "decimals": "other",
            "output": "output",
        },
        description="Evaluate an interaction log (JSON Lines or Parquet; several files are one log) in one streamed "
        "pass, in bounded memory: its online metrics' means, top queries and queries per unit of time, and the "
        "tests its metrics and options ask for: Interleaving(method) (wins, ties, losses, the preference with "
        "its bootstrap interval over users, the sign test over queries), an A/B test of its arms (--ab), "
        "IPS(ctr)@k estimates of another ranking (--counterfactual, --propensity).",
    ),
    Command(
        "clickmodel",
        "fit a click model (PBM, cascade, DCM, UBM, DBN) to a log (irspec-online)",
        declare=f"{A}:declare_clickmodel",
        run=f"{C}:run_clickmodel",
        roles={
            "action": "other",
            "logs": "input",
            "model": "other",
            "iterations": "other",
            "holdout": "other",
            "output": "output",
        },
        description="Fit a click model to an interaction log (JSON Lines or Parquet; several files are one log), "
        "read in bounded memory: its parameters per query-document pair and per rank as JSON, which irspec simulate "
        "and irspec online --propensity read. With --holdout, a share of the sessions is held out and the model's "
        "log-likelihood and perplexity on them are reported (PyClick's measures; the perplexity over the ranks the "
        "held-out sessions show).",
    ),
    Command(
        "simulate",
        "simulated users of two rankings: the traffic an A/B test and interleaving need (irspec-online)",
        declare=f"{A}:declare_simulate",
        run=f"{C}:run_simulate",
        roles={
            "clickmodel": "input",
            "qrels": "input",
            "model": "other",
            "runs": "input",
            "sessions": "other",
            "method": "other",
            "metric": "other",
            "depth": "other",
            "alpha": "other",
            "power": "other",
            "seed": "other",
            "log": "output",
            "log_sessions": "other",
            "log_design": "other",
            "format": "other",
            "output": "output",
        },
        description="Simulate users of two rankings with a click model (one irspec clickmodel fit wrote, or one made "
        "from judgments), in an A/B test and in an interleaving experiment: the power of each for a range of "
        "traffic, and the query issues each needs to tell the rankings apart (their ratio: how much interleaving "
        "saves). --log writes a simulated log to try the other commands on.",
    ),
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
    register(INTERLEAVING, aliases=["interleaved_preference"])
    register(IPS, aliases=["inverse_propensity_scoring"])
    register(CLIPPED_IPS, aliases=["clipped_ips", "cips"])
    register(SNIPS, aliases=["self_normalised_ips", "self_normalized_ips"])


@irspec.hookimpl
def irspec_register_interleaving(register) -> None:
    """Register the interleaving methods."""
    for method, aliases in zip(INTERLEAVING_METHODS, (["team-draft", "tdi"], ["balanced-interleaving"],
                                                      ["probabilistic", "pi"], ["optimized", "oi"]), strict=True):  # fmt: skip
        register(method, aliases=aliases)


@irspec.hookimpl
def irspec_register_plan_sections(register) -> None:
    """Register the plan's ``ab:`` and ``online:`` sections, for the ``log`` reader."""
    register(AB)
    register(ONLINE)


@irspec.hookimpl
def irspec_register_commands(register) -> None:
    """Register irspec-online's subcommands: ``irspec interleave``, ``irspec online``."""
    for command in COMMANDS:
        register(command)


@irspec.hookimpl
def irspec_register_click_models(register) -> None:
    """Register the click models."""
    for model, aliases in zip(CLICK_MODELS, (["position-based"], ["cascade"], ["dependent-click"],
                                             ["user-browsing"], ["dynamic-bayesian-network"], ["swap-intervention"]),
                              strict=True):  # fmt: skip
        register(model, aliases=aliases)
