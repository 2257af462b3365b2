"""The declarations of irspec-usermodel's metrics, registered through irspec's plugin hook.

Written only against irspec's public plugin API (``irspec.hookimpl``, ``irspec.MetricDef``,
``irspec.Param``), as any third party would. Importing this module is cheap: the kernels are named as
``"module:function"`` strings and imported when a metric is evaluated.
"""

from __future__ import annotations

from typing import Literal

import irspec
from irspec import MetricDef, Param
from irspec.plugin_api import UNIT, Metric

K = "irspec_usermodel.kernels"
CWL = "irspec_usermodel.cwl"


def _cutoff() -> Param:
    return Param(
        "k",
        "int",
        None,
        "rank cutoff: only the top k documents count (default: the whole ranking)",
        minimum=1,
    )


def _max_grade(default: int | None, what: str) -> Param:
    return Param("max_grade", "int", default, what, minimum=1, maximum=30)


ERR = MetricDef(
    "ERR",
    "expected reciprocal rank (cascade user model, graded relevance)",
    (
        _cutoff(),
        _max_grade(
            4,
            "the highest relevance grade g_max (labels above it count as g_max); 4 as in the TREC Web track",
        ),
    ),
    at="k",
    compute=f"{K}:err",
    per_query=f"{K}:err_reference",
    doc="""ERR@k = Σ_{r<=k} (1/r) · R_r · Π_{i<r} (1 − R_i), with R_i = (2^g_i − 1) / 2^g_max the probability
that the user is satisfied by the document at rank i, g_i its label clipped to [0, g_max] (negative and
unjudged documents: 0). g_max is fixed per evaluation (parameter max_grade, default 4 as in the TREC Web
track's gdeval), not taken from each query's labels, so that scores of different queries and systems
share one scale. Query ids may be any strings. Reference: Chapelle, Metzler, Zhang & Grinspan,
"Expected reciprocal rank for graded relevance", CIKM 2009.""",
    bounds=UNIT,
)


def _ranx_persistence(values: list[str]) -> list[dict[str, float]]:
    """ranx's ``rbp.95``: the digits after the dot are the decimals of the persistence (p = 0.95), as ranx
    reads them (``float("0." + digits)``); never a cutoff, which ``@`` gives (``RBP@10``, as in ir_measures)."""
    out = []
    for v in values:
        if not v.isdigit():
            raise ValueError(
                f"ranx's rbp.<digits> is RBP with p = 0.<digits> (rbp.95 is RBP(p=0.95)), not {v!r}"
            )
        out.append({"p": float("0." + v)})
    return out


# One spec per value, and no trec_eval name echoed (irspec.spec.definitions.echoes_text): trec_eval has no rbp.95.
_ranx_persistence.per_value = True  # type: ignore[attr-defined]


def _rbp_better(metric: Metric) -> Literal["higher", "neither"]:
    """RBP: higher is better; its residual measures what the judgments leave unknown, which no direction
    improves (as trec_eval's rbp_resid, irspec's built-in, is declared)."""
    return "neither" if metric.get("residual") else "higher"


RBP = MetricDef(
    "RBP",
    "rank-biased precision (patient user model), or its residual",
    (
        Param(
            "p",
            "float",
            0.8,
            "persistence: the probability that the user goes on from one rank to the next",
            minimum=0,
            maximum=1,
            exclusive_minimum=True,
            shown=True,  # 0.8 here and in ir_measures, 0.9 in trec_eval's rbp, none in ranx: always say which
        ),
        _cutoff(),
        Param(
            "rel",
            "int",
            None,
            "relevance level of binary RBP: labels >= rel are relevant (default: the evaluation's relevance_level)",
            minimum=1,
        ),
        _max_grade(
            None,
            "graded RBP: a document's relevance is min(label, max_grade) / max_grade (default: binary RBP)",
        ),
        Param("residual", "bool", False, "give the residual (the most RBP could still grow) instead of RBP"),
    ),
    at="k",
    positional="p",
    dotted=_ranx_persistence,
    compute=f"{K}:rbp",
    better=_rbp_better,
    doc="""RBP = (1 − p) Σ_{i<=m} r_i p^(i−1) over the top m = min(n, k) documents of a ranking of n (m = n
without a cutoff), with r_i = 1 for a label >= rel and 0 otherwise (binary, the paper's form), or
r_i = min(label, max_grade) / max_grade when max_grade is given (graded; the paper allows any r_i in
[0, 1]). Unjudged documents (absent from the qrels or with a negative label) count as r_i = 0.

RBP(residual=true) = (1 − p) Σ_{unjudged i<=m} p^(i−1) + p^m: how much RBP would grow if every unjudged
document in the top m, and every document below rank m, were fully relevant. So 0 <= RBP <= RBP +
residual <= 1, and with every one of the top m documents judged the residual is exactly p^m. Report
"RBP + residual" as Moffat & Zobel do (0.352 + 0.081). Unlike trec_eval's rbp_resid (irspec's built-in,
p = 0.9 by default), the residual is not set to 0 when every retrieved document is judged: the
documents below the ranking are unknown too. Default p = 0.8, the paper's middle setting.
Reference: Moffat & Zobel, "Rank-biased precision for measurement of retrieval effectiveness", ACM TOIS
27(1), 2008.""",
    bounds=UNIT,
)

NCG = MetricDef(
    "NCG",
    "normalised cumulative gain: CG@k over the ideal CG@k",
    (
        _cutoff(),
        Param(
            "gains",
            "gains",
            None,
            "gain of each label, e.g. {1:0,2:1,3:3}; labels not listed gain their own value",
        ),
    ),
    at="k",
    per_query=f"{K}:ncg",
    doc="""NCG@k = CG@k / ICG@k, 0 when ICG@k = 0. CG@k = Σ_{i<=k} gain(label_i) over the ranking (unjudged and
non-positive labels gain 0 unless gains says otherwise), ICG@k the same sum over the k highest gains among
the query's qrels labels. Order within the top k does not matter: NCG@k measures how much of the
attainable gain the top k hold (recall-like, for first-stage rankers). Reference: the TREC Deep Learning
track overviews (Craswell et al., TREC 2020 and 2021), which report NCG@100 and NCG@1000. Computed in
irspec's per-query function form.""",
    bounds=UNIT,
)


# --------------------------------------------------------------------------------------------------
# The C/W/L measures, with cwl_eval's conventions and ir_measures' names and parameters.

_CWL = """

C/W/L (Moffat et al.): C(i) is the probability that a user who has examined rank i goes on to rank
i + 1. The weight of rank i is W(i) = Π_{j<i} C(j) / Σ_{m<=N} Π_{j<m} C(j), and the probability of
stopping there L(i) = Π_{j<i} C(j) · (1 − C(i)), over exactly N = depth ranks (1000, cwl_eval's
default: a longer ranking is cut, a shorter one padded with documents of gain 0). The value is the
expected utility per document examined, EU = Σ_i W(i) g(i): what cwl_eval reports first and
ir_measures reports; utility=total gives the expected total utility ETU = Σ_i L(i) Σ_{j<=i} g(j)
instead (L sums to 1 − Π_{i<=N} C(i): a user still reading at rank N adds nothing to ETU, as in
cwl_eval). Gains: g = (clip(max(label, 0), min_rel, max_rel) − min_rel) / (max_rel − min_rel), 0 for an
unjudged document (min_rel 0 and max_rel 1 by default: binary gains at label >= 1); every document
costs 1. Reference for the conventions: Azzopardi, Thomas & Moffat, "cwl_eval: an evaluation tool for
information retrieval", SIGIR 2019; irspec matches cwl_eval 1.0.12 as ir_measures 0.4.3 calls it."""


def _cwl_params() -> tuple[Param, ...]:
    return (
        Param("min_rel", "int", 0, "labels up to min_rel gain 0 (negative labels are 0 first)"),
        Param(
            "max_rel",
            "int",
            1,
            "labels from max_rel up gain 1; the default 1 gives binary gains (label >= 1); "
            "set it to the top grade for graded gains",
        ),
        Param(
            "depth",
            "int",
            1000,
            "ranks the user model runs over: the ranking is cut, or padded with zero gain, to depth "
            "(cwl_eval's max_depth)",
            minimum=1,
            maximum=1_000_000,
        ),
        Param(
            "utility",
            "choice",
            "rate",
            "rate: expected utility per document (EU, as ir_measures reports); total: expected total utility (ETU)",
            choices=("rate", "total"),
        ),
    )


def _goal() -> Param:
    return Param(
        "T",
        "float",
        1.0,
        "the total gain the user wants (in gain units, 1 = one fully relevant document)",
        minimum=0,
        exclusive_minimum=True,
    )


def _required_cutoff(name: str = "k") -> Param:
    return Param(name, "int", None, "the most documents the user examines", minimum=1, required=True)


BPM = MetricDef(
    "BPM",
    "bejeweled player model (static): stops at T gain or K documents, whichever comes first",
    (_goal(), _required_cutoff("K"), *_cwl_params()),
    at="K",
    positional="T",
    compute=f"{CWL}:measure",
    doc="""BPM(T)@K, static version: the user reads on while the gain so far is below T and fewer than K
documents (K cost units, one per document) have been read. C(i) = 1 if Σ_{j<=i} g(j) < T and i < K,
else 0; so with s the first rank where either budget runs out (s <= K; s = depth if neither does),
W(i) = 1/s for i <= s, EU = (Σ_{i<=s} g(i)) / s, and ETU = Σ_{i<=s} g(i) when a budget runs out by
the depth (0 otherwise, see L below). Reference: Zhang, Liu, Li, Zhang, Xu & Ma, "Evaluating web
search with a bejeweled player model", SIGIR 2017 (T is its benefit budget E_b, K its cost budget
E_c)."""
    + _CWL,
)

INST = MetricDef(
    "INST",
    "INST: an adaptive C/W/L measure whose user wants T units of gain",
    (_goal(), *_cwl_params()),
    positional="T",
    compute=f"{CWL}:measure",
    doc="""INST(T): C(i) = ((i + T + T_i − 1) / (i + T + T_i))², T_i = T − Σ_{j<=i} g(j) the gain still
wanted after rank i: the more gain found, the sooner the user stops. No cutoff: the model runs to the
depth. Reference: Moffat, Bailey, Scholer & Thomas, "INST: an adaptive metric for information retrieval
evaluation", ADCS 2015."""
    + _CWL,
)

INSQ = MetricDef(
    "INSQ",
    "INSQ: INST's predecessor, with a continuation that ignores the gain found",
    (_goal(), *_cwl_params()),
    positional="T",
    compute=f"{CWL}:measure",
    doc="""INSQ(T): C(i) = ((i + 2T − 1) / (i + 2T))², the same for every ranking. No cutoff: the model runs
to the depth. Reference: Moffat, Scholer & Thomas, "Models and metrics: IR evaluation as a user
process", ADCS 2012."""
    + _CWL,
)

_NERR = """Reference: Azzopardi, Mackenzie & Moffat, "ERR is not C/W/L: exploring the relationship between
expected reciprocal rank and other metrics", ICTIR 2021 (ir_measures' NERR8..NERR11 are its equations'
numbers, as cwl_eval's NERReq8..NERReq11)."""

NERR8 = MetricDef(
    "NERR8",
    "not (but nearly) ERR, gain-based stopping truncated at k",
    (_required_cutoff(), *_cwl_params()),
    at="k",
    compute=f"{CWL}:measure",
    doc="""NERR8@k: C(i) = 1 − g(i) for i < k, C(i) = 0 from rank k on: ERR's cascade (a document of gain g
satisfies the user with probability g) as a C/W/L measure, read at most to rank k. """
    + _NERR
    + _CWL,
)

NERR9 = MetricDef(
    "NERR9",
    "not (but nearly) ERR, gain-based stopping and a reciprocal-rank discount, truncated at k",
    (_required_cutoff(), *_cwl_params()),
    at="k",
    compute=f"{CWL}:measure",
    doc="""NERR9@k: C(i) = (i / (i + 1)) (1 − g(i)) for i < k, C(i) = 0 from rank k on: the cascade of
NERR8 with reciprocal rank's continuation i/(i + 1). """
    + _NERR
    + _CWL,
)

NERR10 = MetricDef(
    "NERR10",
    "not (but nearly) ERR, gain-based stopping with RBP's persistence p",
    (
        Param(
            "p",
            "float",
            0.9,
            "persistence: the probability of going on past a document of gain 0",
            minimum=0,
            maximum=1,
        ),
        *_cwl_params(),
    ),
    positional="p",
    compute=f"{CWL}:measure",
    doc="""NERR10(p): C(i) = p (1 − g(i)): RBP's patient user who also stops when satisfied. No cutoff: the
model runs to the depth. """
    + _NERR
    + _CWL,
)

NERR11 = MetricDef(
    "NERR11",
    "not (but nearly) ERR, gain-based stopping with INSQ's goal T",
    (_goal(), *_cwl_params()),
    positional="T",
    compute=f"{CWL}:measure",
    doc="""NERR11(T): C(i) = ((i + 2T − 1) / (i + 2T))² (1 − g(i)): INSQ's user who also stops when
satisfied. No cutoff: the model runs to the depth. """
    + _NERR
    + _CWL,
)

SDCG = MetricDef(
    "SDCG",
    "scaled DCG: DCG@k over the DCG@k of k fully relevant documents",
    (
        _required_cutoff(),
        Param("dcg", "choice", "log2", "the discount (only log2, as in ir_measures)", choices=("log2",)),
        *_cwl_params(),
    ),
    at="k",
    compute=f"{CWL}:measure",
    doc="""SDCG@k: C(i) = log2(i + 1) / log2(i + 2) for i < k, 0 from rank k on; so W(i) = (1 / log2(i + 1)) /
Σ_{j<=k} 1 / log2(j + 1) for i <= k, and EU = DCG@k (gains g, discount 1/log2(i + 1)) divided by the
DCG@k of k documents of gain 1: nDCG that assumes at least k fully relevant documents exist, so it does
not depend on the qrels' other documents. (cwl_eval names it NDCG-k; for k above the depth, the
continuation is cut at the depth.) Reference: Järvelin & Kekäläinen, "Cumulated gain-based evaluation
of IR techniques", ACM TOIS 2002; the scaling, cwl_eval's."""
    + _CWL,
)

CWL_MEASURES = (BPM, INST, INSQ, NERR8, NERR9, NERR10, NERR11, SDCG)


@irspec.hookimpl
def irspec_register_metrics(register) -> None:
    """Register ERR, RBP, NCG and the C/W/L measures."""
    register(ERR, aliases=["expected_reciprocal_rank"])
    register(RBP, aliases=["rank_biased_precision"])
    register(NCG, aliases=["normalised_cumulative_gain", "normalized_cumulative_gain"])
    for definition in CWL_MEASURES:
        register(definition)
