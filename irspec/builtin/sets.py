"""Set-based and cutoff metrics: precision, recall, F, relative precision, success, judged, fall-out."""

from __future__ import annotations

import math

from irspec.builtin._common import TREC_CUTOFFS, cutoff, kernel, plain, rel, trec_name_for
from irspec.errors import ParameterError
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import UNIT, Alias, Metric, MetricDef, MetricGroup, Param, Redirect, each

K = "sets"

# ir_measures writes set_relative_P as SetP(relative=True) (and SetRelP, its alias, as the same measure):
# on both P and relP, relative= chooses between them.
RELATIVE = (Redirect("relative", "relP", when=True), Redirect("relative", "P", when=False))
# Recommender toolkits often divide Recall@k by min(k, R), the most a top k can hold: that is relP@k.
TRUNCATED = (Redirect("truncated", "relP", when=True), Redirect("truncated", "R", when=False))

PRECISION = MetricDef(
    "P",
    "precision: relevant retrieved / retrieved (at k, or of the whole list)",
    (cutoff(), rel()),
    at="k",
    compute=kernel(K, "precision"),
    trec_name=trec_name_for("set_P", "P"),
    redirects=RELATIVE,
    doc="""P@k = |relevant in top k| / k, with k in the denominator even when fewer than k documents are
retrieved (trec_eval's P_k). Without a cutoff, P = |relevant retrieved| / |retrieved| (trec_eval's
set_P; 0 for an empty ranking). Reference: Manning, Raghavan & Schütze, Introduction to IR, 8.3.""",
    bounds=UNIT,
)

RECALL = MetricDef(
    "R",
    "recall: relevant retrieved / relevant (at k, or of the whole list)",
    (cutoff(), rel()),
    at="k",
    compute=kernel(K, "recall"),
    trec_name=trec_name_for("set_recall", "recall"),
    redirects=TRUNCATED,
    doc="""R@k = |relevant in top k| / R, with R the number of relevant documents in the qrels (0 when
R = 0). Without a cutoff, the recall of the whole list (trec_eval's set_recall; recall_k with one).
Many recommender toolkits divide by min(k, R) instead (Liang et al.'s "Recall@k" of VAE-CF, pyxclib's
recall at ground truth size): ``R(truncated=true)@k`` reads as that measure, relP@k.
Reference: Manning, Raghavan & Schütze, Introduction to IR, 8.3.""",
    bounds=UNIT,
)


def _f_trec(metric: Metric) -> str | None:
    if not plain(metric, "beta") or metric.get("k") is not None:
        return None
    b2 = metric.get("beta") ** 2
    return "set_F" if b2 == 1 else None


def _beta_from_trec(value: str) -> float:
    """trec_eval's set_F.x takes x = beta squared."""
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not x > 0 or not math.isfinite(x):
        raise ParameterError("F", "beta", f"set_F.{value}: expected beta squared, a number > 0")
    return math.sqrt(x)


def _beta_from_ir_measures(x: float) -> float:
    """ir_measures' SetF(beta=x) is trec_eval's set_F.x: its beta is beta squared."""
    if not x > 0 or not math.isfinite(x):
        raise ValueError(
            f"got {x!r}; ir_measures' beta is trec_eval's set_F parameter, beta squared, a number > 0"
        )
    return math.sqrt(x)


F = MetricDef(
    "F",
    "F-measure: weighted harmonic mean of precision and recall",
    (
        # beta² must stay finite in float64 (beta < 1.3e154); from beta = 1e8 on, F is recall to the last
        # digit anyway, so 1e100 forbids nothing meaningful.
        Param(
            "beta",
            "float",
            1.0,
            "weight of recall relative to precision",
            minimum=0,
            maximum=1e100,
            exclusive_minimum=True,
        ),
        cutoff(),
        rel(),
    ),
    at="k",
    compute=kernel(K, "f_measure"),
    trec_name=_f_trec,
    # trec_eval's set_F reads a list but uses its first value (set_F.0.25,2 is set_F.0.25).
    dotted=lambda values: [{"beta": _beta_from_trec(values[0])}],
    doc="""F_beta = (1 + beta²)·P·R / (beta²·P + R) over the whole list (or the top k), 0 when P = R = 0.
trec_eval's set_F.x uses x = beta², so F(beta=2) equals set_F.4. Reference: van Rijsbergen,
Information Retrieval (1979), ch. 7.""",
    bounds=UNIT,
)

REL_P = MetricDef(
    "relP",
    "relative precision: relevant in top k / min(k, R)",
    (cutoff(), rel()),
    at="k",
    compute=kernel(K, "relative_precision"),
    trec_name=trec_name_for("set_relative_P", "relative_P"),
    redirects=RELATIVE + TRUNCATED,
    doc="""relP@k = |relevant in top k| / min(k, R): precision normalised by the best achievable at k
(trec_eval's relative_P_k). Without a cutoff, |relevant retrieved| / min(n, R) (set_relative_P). 0 when
R = 0. ir_measures calls the latter SetRelP, and writes it SetP(relative=True): both read as relP
(and SetP(relative=False) as P). It is also recall with the denominator min(k, R), which recommender
toolkits call Recall@k: ``R(truncated=true)@k`` reads as relP@k (and ``relP(truncated=false)`` as R).""",
    bounds=UNIT,
)

SUCCESS = MetricDef(
    "Success",
    "1 if a relevant document is in the top k, else 0",
    (cutoff(required=True), rel()),
    at="k",
    compute=kernel(K, "success"),
    trec_name=trec_name_for(None, "success"),
    doc="""Success@k = 1 if any of the top k documents is relevant, else 0 (trec_eval's success_k). Recommender
toolkits call its mean over users the hit rate (HitRate@k, HR@k: RecBole's ``hit``, Microsoft
Recommenders' ``hit_ratio_at_k``), which read as Success@k.""",
    bounds=UNIT,
)

JUDGED = MetricDef(
    "Judged",
    "fraction of the top k that is judged",
    (cutoff(),),
    at="k",
    compute=kernel(K, "judged"),
    better="neither",  # a diagnostic of the judgments, not of the run's quality
    doc="""Judged@k = |top k documents with a label >= 0 in the qrels| / k (the whole list without a
cutoff; 0 for an empty ranking). A low value warns that a run's scores rest on unjudged documents
(Sakai 2007; ir_measures' Judged).""",
    bounds=UNIT,
)

FALLOUT = MetricDef(
    "Fallout",
    "fall-out: non-relevant retrieved / non-relevant in the collection",
    (
        cutoff(),
        Param("collection_size", "int", None, "number of documents in the collection", minimum=1),
        Param(
            "judged", "bool", False, "count judged non-relevant documents only (no collection size needed)"
        ),
        rel(),
    ),
    at="k",
    compute=kernel(K, "fallout"),
    better="lower",
    doc="""Fallout@k = |non-relevant in top k| / (C − R), with C the collection size (parameter
collection_size, or the evaluation option of the same name) and non-relevant meaning not relevant
(judged or not). Without a cutoff, over the whole list. Fallout(judged=true)@k counts judged documents
only: |judged non-relevant in top k| / |judged non-relevant in the qrels|, for when the collection size
is not known (the plots' ROC curve then uses it). Reference: Salton & McGill (1983).""",
    bounds=UNIT,
)

SET_MAP = MetricDef(
    "SetAP",
    "set average precision: set precision × set recall",
    (rel(),),
    compute=kernel(K, "set_ap"),
    trec_name=lambda m: "set_map" if not m.params else None,
    doc="""SetAP = P × R over the whole retrieved set (trec_eval's set_map: the average precision an
unranked set would get if its relevant documents were spread evenly).""",
    bounds=UNIT,
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register the set and cutoff metrics."""
    register(PRECISION, aliases=["precision", "SetP", "set_P"])
    register(RECALL, aliases=[Alias("recall", dotted=each("k")), "SetR", "set_recall"])
    # ir_measures' SetF(beta=x) runs trec_eval's set_F.x, whose x is beta squared: SetF(beta=4) is F(beta=2).
    register(
        F,
        aliases=[
            "F1",
            Alias("SetF", keywords={"beta": _beta_from_ir_measures}),
            Alias("set_F", dotted=F.dotted),
            "F-measure",
        ],
    )
    register(
        REL_P,
        aliases=[Alias("relative_P", dotted=each("k")), "set_relative_P", "relative_precision", "SetRelP"],
    )
    register(
        SUCCESS, aliases=["HitRate", "hit_rate", "HR"]
    )  # not "hits": ranx's hits@k counts the relevant documents (registry.REFUSED_SPELLINGS)
    register(JUDGED, aliases=["judged_fraction"])
    register(FALLOUT, aliases=["fall-out"])
    register(SET_MAP, aliases=["set_map"])
    defaults = {
        "P": TREC_CUTOFFS,
        "recall": TREC_CUTOFFS,
        "relative_P": TREC_CUTOFFS,
        "success": ("1", "5", "10"),
    }
    for name, values in defaults.items():
        register(MetricGroup(f"trec:{name}", (f"{name}.{','.join(values)}",), f"trec_eval's default {name}"))
