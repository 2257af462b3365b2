"""Propensity-scored metrics of extreme classification: PSP@k, PSDCG@k and PSnDCG@k (Jain et al.).

A relevant item found counts 1/p, the inverse of its propensity p (the chance that a relevant item
was observed as relevant at all), so that finding the rare items of the long tail counts more than
finding the popular ones that every model finds. The propensities are an input of the evaluation
(``propensity=`` of :func:`irspec.evaluate_topk` and :func:`irspec.evaluate_scores`; Jain et al.'s model
is :func:`irspec.recsys.jain_propensity`), read by the kernels from the context.
"""

from __future__ import annotations

from irspec.builtin._common import cutoff, kernel, rel
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import NONNEGATIVE, MetricDef, Param

K = "propensity"

_REFERENCE = """Reference: Jain, Prabhu & Varma, "Extreme multi-label loss functions for recommendation,
tagging, ranking & other missing label applications", KDD 2016; pyxclib's ``xc_metrics``."""

_IDEAL_NOTE = """``ideal=true`` gives the value of the best top k instead: the user's relevant items
in decreasing 1/p. pyxclib reports the normalised form as a ratio of means, the mean of the metric
over the mean of its ideal (``aggregate()["PSP@5"] / aggregate()["PSP(ideal=true)@5"]``), which is not
a mean over users and is computed from the two means."""


def _ideal() -> Param:
    return Param(
        "ideal",
        "bool",
        False,
        "the value of the best top k (the relevant items by decreasing 1/p), pyxclib's normaliser",
    )


PSP = MetricDef(
    "PSP",
    "propensity-scored precision: the relevant items in the top k, each weighted 1/p, over k",
    (cutoff(required=True), rel(), _ideal()),
    at="k",
    compute=kernel(K, "psp"),
    doc=f"""PSP@k = (1/k) Σ_{{j <= k, item j relevant}} 1/p_j, with p_j the propensity of the item at
rank j (relevance binary at the relevance level; pyxclib weighs by the stored label, the same for 0/1
labels). {_IDEAL_NOTE} {_REFERENCE}""",
    bounds=NONNEGATIVE,
)

PSDCG = MetricDef(
    "PSDCG",
    "propensity-scored DCG: the relevant items in the top k, each weighted 1/p, discounted by log2(j+1)",
    (cutoff(required=True), rel(), _ideal()),
    at="k",
    compute=kernel(K, "psdcg"),
    doc=f"""PSDCG@k = Σ_{{j <= k, item j relevant}} (1/p_j) / log2(j + 1). {_IDEAL_NOTE} {_REFERENCE}""",
    bounds=NONNEGATIVE,
)

PSNDCG = MetricDef(
    "PSnDCG",
    "propensity-scored nDCG: PSDCG@k over the DCG@k of min(k, R) relevant items without weights",
    (cutoff(required=True), rel(), _ideal()),
    at="k",
    compute=kernel(K, "psndcg"),
    doc=f"""PSnDCG@k = PSDCG@k / Σ_{{l = 1}}^{{min(k, R)}} 1/log2(l + 1), Jain et al.'s normalisation (by the
binary ideal DCG, not by the weighted one, so values are not bounded by 1); 0 when R = 0.
{_IDEAL_NOTE} {_REFERENCE}""",
    bounds=NONNEGATIVE,
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register the propensity-scored metrics."""
    # No pyxclib spellings as aliases: its psprecision and psndcg are the ratios of means (see ideal).
    register(PSP)
    register(PSDCG)
    register(PSNDCG)
