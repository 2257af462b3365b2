"""The declarations of irspec-usermodel's metrics, registered through irspec's plugin hook.

Written only against irspec's public plugin API (``irspec.hookimpl``, ``irspec.MetricDef``,
``irspec.Param``), as any third party would. Importing this module is cheap: the kernels are named as
``"module:function"`` strings and imported when a metric is evaluated.
"""

from __future__ import annotations

import irspec
from irspec import MetricDef, Param

K = "irspec_usermodel.kernels"


def _cutoff() -> Param:
    return Param("k", "int", None, "rank cutoff: only the top k documents count (default: the whole ranking)", minimum=1)


def _max_grade(default: int | None, what: str) -> Param:
    return Param("max_grade", "int", default, what, minimum=1, maximum=30)


ERR = MetricDef(
    "ERR",
    "expected reciprocal rank (cascade user model, graded relevance)",
    (
        _cutoff(),
        _max_grade(4, "the highest relevance grade g_max (labels above it count as g_max); 4 as in the TREC Web track"),
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
)

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
        ),
        _cutoff(),
        Param(
            "rel",
            "int",
            None,
            "relevance level of binary RBP: labels >= rel are relevant (default: the evaluation's relevance_level)",
            minimum=1,
        ),
        _max_grade(None, "graded RBP: a document's relevance is min(label, max_grade) / max_grade (default: binary RBP)"),
        Param("residual", "bool", False, "give the residual (the most RBP could still grow) instead of RBP"),
    ),
    at="k",
    positional="p",
    compute=f"{K}:rbp",
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
)

NCG = MetricDef(
    "NCG",
    "normalised cumulative gain: CG@k over the ideal CG@k",
    (
        _cutoff(),
        Param("gains", "gains", None, "gain of each label, e.g. {1:0,2:1,3:3}; labels not listed gain their own value"),
    ),
    at="k",
    per_query=f"{K}:ncg",
    doc="""NCG@k = CG@k / ICG@k, 0 when ICG@k = 0. CG@k = Σ_{i<=k} gain(label_i) over the ranking (unjudged and
non-positive labels gain 0 unless gains says otherwise), ICG@k the same sum over the k highest gains among
the query's qrels labels. Order within the top k does not matter: NCG@k measures how much of the
attainable gain the top k hold (recall-like, for first-stage rankers). Reference: the TREC Deep Learning
track overviews (Craswell et al., TREC 2020 and 2021), which report NCG@100 and NCG@1000. Computed in
irspec's per-query function form.""",
)


@irspec.hookimpl
def irspec_register_metrics(register) -> None:
    """Register ERR, RBP and NCG."""
    register(ERR, aliases=["expected_reciprocal_rank"])
    register(RBP, aliases=["rank_biased_precision"])
    register(NCG, aliases=["normalised_cumulative_gain", "normalized_cumulative_gain"])
