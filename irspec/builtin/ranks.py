"""Rank-based metrics: average precision, reciprocal rank, R-precision, interpolated precision."""

from __future__ import annotations

import math

from irspec.builtin._common import TREC_CUTOFFS, cutoff, kernel, plain, rel, short_float, trec_name_for
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import (
    MAX_COUNT,
    NONNEGATIVE,
    UNIT,
    Alias,
    Metric,
    MetricDef,
    MetricGroup,
    Param,
    each,
)

K = "ranks"

AP = MetricDef(
    "AP",
    "average precision: mean of P@i over the ranks i of relevant documents, divided by R",
    (
        cutoff(),
        rel(),
        Param(
            "den",
            "choice",
            "R",
            "denominator: R (trec_eval's), min (min(k, R): RecBole's, implicit's, Spark's MAP@k), "
            "hits (the relevant documents in the top k: torchmetrics' RetrievalMAP)",
            choices=("R", "min", "hits"),
        ),
    ),
    at="k",
    compute=kernel(K, "average_precision"),
    trec_name=trec_name_for("map", "map_cut"),
    doc="""AP = (1/R) Σ_{i: doc i relevant, i <= k} P@i. The denominator is R, the number of relevant
documents in the qrels (not min(R, k)), as trec_eval's map and map_cut_k; 0 when R = 0. MAP is its mean
over queries. Reference: Buckley & Voorhees, "Evaluating evaluation measure stability", SIGIR 2000;
Manning et al., Introduction to IR, 8.4.

Recommender toolkits write MAP@k with other denominators, which the parameter ``den`` names:
``AP(den=min)@k`` divides by min(k, R), the most any top k can hold (RecBole's and implicit's MAP@k,
Spark's ``meanAveragePrecisionAt``, ml_metrics' ``apk``), so that a perfect top k scores 1 even when
R > k; ``AP(den=hits)@k`` divides by the relevant documents found in the top k (torchmetrics'
``RetrievalMAP(top_k=k)``), the mean precision at the hits alone. Every form is 0 where its
denominator is. Without a cutoff, min(k, R) is R.""",
    bounds=UNIT,
)

GMAP = MetricDef(
    "GMAP",
    "geometric mean of AP over queries (per-query values are AP)",
    (rel(),),
    aggregate="gmean",
    compute=kernel(K, "average_precision"),
    trec_name=lambda m: "gm_map" if not m.params else None,
    doc="""GMAP = exp(mean(log(max(AP_q, 1e-5)))): the geometric mean rewards improving the hardest
topics. Per-query values are AP; the floor of 1e-5 is trec_eval's. Reference: Robertson, "On GMAP",
CIKM 2006.""",
)

RR = MetricDef(
    "RR",
    "reciprocal rank of the first relevant document",
    (cutoff(), rel()),
    at="k",
    compute=kernel(K, "reciprocal_rank"),
    trec_name=trec_name_for("recip_rank", None),
    doc="""RR = 1 / rank of the first relevant document (within the top k), 0 if there is none. MRR is
its mean. Reference: Voorhees, "The TREC-8 question answering track report", 1999.""",
    bounds=UNIT,
)


def _rprec_trec(metric: Metric) -> str | None:
    if not plain(metric, "mult"):
        return None
    mult = metric.get("mult")
    return "Rprec" if mult is None else f"Rprec_mult_{mult:.2f}"


RPREC = MetricDef(
    "Rprec",
    "R-precision: precision at rank R (or at a recall level, or at a multiple of R)",
    (
        Param(
            "recall",
            "float",
            None,
            "precision at the first rank where recall reaches this",
            minimum=0,
            maximum=1,
        ),
        # mult·R is a rank: past MAX_COUNT it could not be one, and the kernel's float arithmetic overflows.
        Param(
            "mult",
            "float",
            None,
            "precision at rank floor(mult·R + 0.9) (trec_eval's Rprec_mult)",
            minimum=0,
            maximum=MAX_COUNT,
            exclusive_minimum=True,
        ),
        rel(),
    ),
    compute=kernel(K, "r_precision"),
    trec_name=_rprec_trec,
    doc="""Rprec = |relevant in top min(R, n)| / R (trec_eval's Rprec; 0 when R = 0). Equal to P@R when
n >= R.
Rprec(recall=x): precision at the first rank where recall reaches x, 0 if it never does (the seed
variant; x = 0 gives the precision at rank 1).
Rprec(mult=m): precision at rank c = floor(m·R + 0.9); when c > n, |relevant retrieved| / c; 0 when
c = 0 (trec_eval's Rprec_mult_m). Reference: Buckley & Voorhees 2000; Manning et al. 8.4.""",
    bounds=UNIT,
)


def trec9() -> Param:
    """trec_eval 9's way of finding the c-th relevant document, for IPrec and 11pt (pytrec_eval's)."""
    return Param(
        "trec9",
        "bool",
        False,
        "trec_eval 9's rule, as pytrec_eval computes it: c = floor(x·R + 0.9) rather than trec_eval 10's "
        "lround(x·R), and NaN (trec_eval's 0/0) rather than 0 on an empty ranking where c = 0",
    )


IPREC = MetricDef(
    "IPrec",
    "interpolated precision at a recall level",
    (
        Param("recall", "float", None, "recall level in [0, 1]", minimum=0, maximum=1, required=True),
        trec9(),
        rel(),
    ),
    at="recall",
    compute=kernel(K, "interpolated_precision"),
    # trec9 keeps the name: trec_eval 9 printed its value under the same one
    trec_name=lambda m: f"iprec_at_recall_{m.get('recall'):.2f}" if plain(m, "recall", "trec9") else None,
    doc="""IPrec@x = max over ranks i at or below the c-th relevant document of P@i, with
c = round-half-away-from-zero(x·R) (all ranks when c = 0), and 0 when c exceeds the relevant retrieved.
This is trec_eval 10's iprec_at_recall_x. trec_eval 9 (and pytrec_eval's bundled copy) used
c = floor(x·R + 0.9): IPrec(trec9=true) gives its values, with its NaN (a 0/0) for an empty ranking
where c = 0, which trec_eval 10 shares and irspec otherwise defines as 0. Reference: Manning et al.,
Introduction to IR, 8.4.""",
    bounds=UNIT,
)


def _points_trec(metric: Metric) -> str | None:
    if not plain(metric, "points", "trec9"):
        return None
    points = metric.get("points")
    return "11pt_avg" if points is None else "11pt_avg_" + ",".join(short_float(p) for p in points)


def _recall_points(values: list[str]) -> tuple[float, ...]:
    # The binder checks the range [0, 1] the parameter declares; NaN (not a number) is outside it.
    try:
        return tuple(float(v) for v in values)
    except ValueError:
        return (math.nan,)


ELEVEN_PT = MetricDef(
    "11pt",
    "mean interpolated precision at recall 0.0, 0.1, ..., 1.0",
    (
        Param(
            "points",
            "floats",
            None,
            "recall levels to average (default 0.0, 0.1, ..., 1.0)",
            minimum=0,
            maximum=1,
        ),
        trec9(),
        rel(),
    ),
    compute=kernel(K, "eleven_point"),
    trec_name=_points_trec,
    dotted=lambda values: [{"points": _recall_points(values)}],
    doc="""11pt = (1/11) Σ_{x in 0.0, 0.1, ..., 1.0} IPrec@x (trec_eval's 11pt_avg; with ``points``,
the mean over those recall levels; with trec9=true, of IPrec(trec9=true), as trec_eval 9 computes it).
Reference: Salton & McGill (1983); Manning et al. 8.4.""",
    bounds=UNIT,
)

SEARCH_LENGTH = MetricDef(
    "SL",
    "search length: rank of the first relevant document",
    (
        Param(
            "unfound",
            "choice",
            "n_plus_1",
            "a query with no relevant document retrieved: n_plus_1 (one past the end) or skip (left out of the mean)",
            choices=("n_plus_1", "skip"),
        ),
        rel(),
    ),
    compute=kernel(K, "search_length"),
    better="lower",
    doc="""SL = rank of the first relevant document (the user's effort in known-item search). A query
with no relevant document retrieved gets n + 1 (one past the end of its ranking) by default, or is
left out of the mean with unfound=skip (unfound=n_plus_1 is the default). Lower is better. Reference: Cooper, "Expected search length",
American Documentation 1968 (simplified to the first relevant document).""",
    bounds=NONNEGATIVE,
)

INF_AP = MetricDef(
    "infAP",
    "inferred average precision (Yilmaz & Aslam), robust to incomplete judgments",
    (rel(),),
    compute=kernel(K, "inferred_ap"),
    trec_name=lambda m: "infAP" if not m.params else None,
    doc="""infAP estimates AP from a random sample of judgments, treating unjudged documents (absent from
the qrels) as unsampled and documents with a negative label as pooled but unjudged, exactly as trec_eval
computes infAP. With complete judgments it equals AP. Reference: Yilmaz & Aslam, "Estimating average
precision with incomplete and imperfect judgments", CIKM 2006.""",
    bounds=UNIT,
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register the rank-based metrics."""
    register(AP, aliases=["MAP", "average_precision", Alias("map_cut", dotted=each("k"))])
    register(GMAP, aliases=["gm_map"])
    register(RR, aliases=["MRR", "recip_rank", "reciprocal_rank"])
    register(
        RPREC, aliases=["R-prec", "r-precision", "R_precision", Alias("Rprec_mult", dotted=each("mult"))]
    )
    register(IPREC, aliases=[Alias("iprec_at_recall", dotted=each("recall"))])
    register(ELEVEN_PT, aliases=[Alias("11pt_avg", dotted=ELEVEN_PT.dotted), "eleven_point"])
    register(SEARCH_LENGTH, aliases=["search_length"])
    register(INF_AP, aliases=["inferred_AP"])
    register(
        MetricGroup("trec:map_cut", ("map_cut." + ",".join(TREC_CUTOFFS),), "trec_eval's default map_cut")
    )
    mults = ",".join(f"{m / 10:.1f}" for m in range(2, 21, 2))
    register(MetricGroup("trec:Rprec_mult", (f"Rprec_mult.{mults}",), "trec_eval's default Rprec_mult"))
    recalls = ",".join(f"{r / 10:.1f}" for r in range(11))
    register(
        MetricGroup(
            "trec:iprec_at_recall", (f"iprec_at_recall.{recalls}",), "trec_eval's default iprec_at_recall"
        )
    )
