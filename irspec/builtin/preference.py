"""Compat and Accuracy: how well a ranking agrees with the order the judgments prefer (ir_measures' measures)."""

from __future__ import annotations

from irspec.builtin._common import cutoff, kernel, rel
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import UNIT, MetricDef, Param

K = "preference"

COMPAT = MetricDef(
    "Compat",
    "compatibility: rank-biased overlap of the ranking with the ideal ranking most like it",
    (
        Param("p", "float", 0.95, "persistence: the weight of depth i is p^(i-1)", minimum=0, maximum=1),
        Param("normalize", "bool", True, "divide by the ideal ranking's own overlap with itself"),
        rel(),
    ),
    compute=kernel(K, "compat"),
    doc="""Compat = RBO(r, I) / RBO(I, I), with RBO(a, b) = Σ_{i=1..D} p^(i-1) |a_{:i} ∩ b_{:i}| / i
divided by Σ_{i=1..D} p^(i-1): the rank-biased overlap of the ranking r (n documents) with the ideal
ranking I (the m documents with a label >= rel: higher labels first, and within a label the retrieved
documents in the run's order, then the others), to depth D = max(n, m). normalize=false gives
RBO(r, I) itself. 0 when no document is relevant (m = 0) or the ranking and the ideal are empty.
The run's order is irspec's (score descending, then docno descending, as every measure). Reference:
Clarke, Vtyurina & Smucker, "Assessing top-k preferences", ACM TOIS 39(3), 2021 (and Webber, Moffat &
Zobel, "A similarity measure for indefinite rankings", ACM TOIS 28(4), 2010, for RBO); the parameters
and their defaults are ir_measures' (p = 0.95, normalized).""",
)

ACCURACY = MetricDef(
    "Accuracy",
    "pairwise accuracy: the share of (relevant, non-relevant) pairs in the top k ranked in that order",
    (cutoff(), rel()),
    at="k",
    compute=kernel(K, "accuracy"),
    doc="""Accuracy@k = 1 − Σ_{r relevant in top k} a_r / (K · N), with K the relevant and N the
non-relevant documents in the top k (unjudged documents are non-relevant) and a_r the non-relevant
documents ranked above r: the probability that a relevant document of the top k ranks above a
non-relevant one of the top k. The whole ranking without a cutoff. Undefined (NaN, left out of the
mean) when the top k has no relevant or no non-relevant document, and so for a query the run lacks (an
empty ranking, as trec_eval -c scores such a query). A diagnostic of a ranker's
training (does it order the pairs it retrieves?), not of retrieval quality: documents not retrieved
play no part. Reference: ir_measures' Accuracy (MacAvaney, Macdonald & Ounis, "Streamlining
evaluation with ir-measures", ECIR 2022).""",
    bounds=UNIT,
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register Compat and Accuracy."""
    register(COMPAT, aliases=["compatibility"])
    register(ACCURACY, aliases=["pairwise_accuracy"])
