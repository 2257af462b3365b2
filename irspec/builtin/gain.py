"""Graded-relevance metrics: (normalised) discounted cumulative gain and its parts."""

from __future__ import annotations

from collections.abc import Callable

from irspec.builtin._common import TREC_CUTOFFS, cutoff, kernel, plain, short_float
from irspec.errors import ParameterError
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import (
    NONNEGATIVE,
    UNIT,
    Alias,
    GainMap,
    Metric,
    MetricDef,
    MetricGroup,
    Param,
    each,
)

K = "gain"


def _dcg_param() -> Param:
    return Param(
        "dcg",
        "choice",
        "log2",
        "gain and discount: log2 (gain = label, discount log2(i+1)), exp-log2 (gain 2^label − 1), "
        "jk (Järvelin–Kekäläinen: no discount at rank 1, log2(i) from rank 2)",
        choices=("log2", "exp-log2", "jk"),
    )


def _gains_param() -> Param:
    return Param(
        "gains",
        "gains",
        None,
        "gain of each label, e.g. {0:0,1:1,2:3}; labels not listed gain what dcg gives them (l, or 2^l - 1 under exp-log2)",
    )


def trec_gains(metric: str, trec: str) -> Callable[[list[str]], list[dict]]:
    """The reader of trec_eval's ``trec.1=3,2=9,4=4.5`` (``ndcg``, ``dcg``, ``ideal_dcg``): one spec of
    ``metric`` whose gains are those label=gain pairs."""

    def read(values: list[str]) -> list[dict]:
        items = {}
        for v in values:
            label, sep, gain = v.partition("=")
            try:
                if not sep or int(label) in items:
                    raise ValueError
                items[int(label)] = float(gain)
            except ValueError:
                raise ParameterError(
                    metric, "gains", f"{v!r} is not a new label=gain (as in {trec}.1=3,2=9)"
                ) from None
        return [{"gains": GainMap(tuple(sorted(items.items())))}]

    return read


def _trec_gain_name(trec: str, cut: str | None) -> Callable[[Metric], str | None]:
    """trec_eval's name of a gain measure: ``trec``, ``trec_1=3,2=9`` with gains, ``cut_10`` with a
    cutoff (where trec_eval has a cut form), None for what trec_eval lacks (both, or another parameter)."""

    def name(metric: Metric) -> str | None:
        k, gains = metric.get("k"), metric.get("gains")
        if not plain(metric, "k", "gains") or (k is not None and gains is not None):
            return None
        if gains is not None:
            return f"{trec}_" + ",".join(f"{lab}={short_float(g)}" for lab, g in gains.items)
        if k is None:
            return trec
        return f"{cut}_{k}" if cut is not None and isinstance(k, int) else None

    return name


_FORMULA = """gain(l) = l for l > 0 and 0 otherwise (dcg=log2; trec_eval's ndcg), 2^l − 1 (dcg=exp-log2;
Burges et al., ICML 2005), or gains[l] when ``gains`` is given (labels not listed gain as without it: l, or 2^l − 1 under exp-log2). Discount:
log2(i + 1) at rank i, or for dcg=jk 1 at rank 1 and log2(i) from rank 2 (Järvelin & Kekäläinen,
TOIS 2002)."""

NDCG = MetricDef(
    "nDCG",
    "normalised discounted cumulative gain",
    (cutoff(), _dcg_param(), _gains_param()),
    at="k",
    compute=kernel(K, "ndcg"),
    trec_name=_trec_gain_name("ndcg", "ndcg_cut"),
    dotted=trec_gains("nDCG", "ndcg"),
    doc="""nDCG@k = DCG@k / IDCG@k, 0 when IDCG = 0. DCG@k = Σ_{i<=k} gain(label_i) / discount(i) over the
ranking; IDCG@k is the DCG of all the query's qrels labels sorted in decreasing gain. Unjudged documents
gain 0. nDCG ignores the relevance level. """
    + _FORMULA,
    bounds=UNIT,
)

DCG = MetricDef(
    "DCG",
    "discounted cumulative gain (unnormalised)",
    (cutoff(), _dcg_param(), _gains_param()),
    at="k",
    compute=kernel(K, "dcg"),
    trec_name=_trec_gain_name("dcg", None),
    dotted=trec_gains("DCG", "dcg"),
    doc="DCG@k = Σ_{i<=k} gain(label_i) / discount(i). " + _FORMULA,
    bounds=NONNEGATIVE,
)

IDCG = MetricDef(
    "IDCG",
    "ideal discounted cumulative gain: the DCG of the best possible ranking",
    (cutoff(), _dcg_param(), _gains_param()),
    at="k",
    compute=kernel(K, "idcg"),
    trec_name=_trec_gain_name("ideal_dcg", None),
    better="neither",  # a property of the qrels
    doc="IDCG@k: the DCG@k of the query's qrels labels sorted by decreasing gain. " + _FORMULA,
)

CG = MetricDef(
    "CG",
    "cumulative gain: the sum of gains, without discount",
    (cutoff(), _gains_param()),
    at="k",
    compute=kernel(K, "cg"),
    doc="""CG@k = Σ_{i<=k} gain(label_i), gain(l) = l for l > 0 (or gains[l]). Reference: Järvelin &
Kekäläinen, TOIS 2002.""",
    bounds=NONNEGATIVE,
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register the DCG family."""
    register(
        NDCG, aliases=[Alias("ndcg_cut", dotted=each("k")), Alias("ndcg_burges", fixed={"dcg": "exp-log2"})]
    )
    register(DCG, aliases=["discounted_cumulative_gain"])
    register(IDCG, aliases=[Alias("ideal_dcg", dotted=trec_gains("IDCG", "ideal_dcg"))])
    register(CG, aliases=["cumulative_gain"])
    register(
        MetricGroup("trec:ndcg_cut", ("ndcg_cut." + ",".join(TREC_CUTOFFS),), "trec_eval's default ndcg_cut")
    )
