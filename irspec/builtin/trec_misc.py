"""trec_eval's remaining measures, so that ``-m all_trec`` is complete.

Their definitions follow trec_eval 10's source (m_utility.c, m_binG.c, m_G.c, m_ndcg_rel.c,
m_Rndcg.c, m_rbp.c, m_unj.c, m_yaap.c); see each docstring.
"""

from __future__ import annotations

from irspec.builtin._common import cutoff, kernel, plain, rel, short_float
from irspec.hookspecs import hookimpl
from irspec.registry import Metric, MetricDef, MetricGroup, Param

K = "trec_misc"


def _utility_trec(metric: Metric) -> str | None:
    if not plain(metric, "a", "b", "c", "d"):
        return None
    if not metric.params:
        return "utility"
    return "utility_" + ",".join(short_float(metric.get(n)) for n in "abcd")


UTILITY = MetricDef(
    "utility",
    "set utility: a·relret + b·nonrelret + c·relnotret + d·nonrelnotret",
    (
        Param("a", "float", 1.0, "weight of each relevant retrieved document"),
        Param("b", "float", -1.0, "weight of each non-relevant retrieved document"),
        Param("c", "float", 0.0, "weight of each relevant document not retrieved"),
        Param("d", "float", 0.0, "weight of each non-relevant document not retrieved"),
        rel(),
    ),
    compute=kernel(K, "utility"),
    trec_name=_utility_trec,
    dotted=lambda values: [dict(zip("abcd", values))],
    doc="""utility = a·|rel ∩ ret| + b·|ret \\ rel| + c·|rel \\ ret| + d·|nonrel \\ ret| with trec_eval's
default coefficients (1, −1, 0, 0); trec_eval's ``utility.a,b,c,d`` sets all four. The last term
needs the number of non-relevant documents not retrieved, which trec_eval takes as the judged
non-relevant ones. Reference: TREC filtering track (Hull & Robertson 1999).""",
)

BIN_G = MetricDef(
    "binG",
    "trec_eval's binary gain G",
    (rel(),),
    compute=kernel(K, "bin_g"),
    trec_name=lambda m: "binG" if not m.params else None,
    doc="""trec_eval's binG: G with every relevant document gaining 1.""",
)

G = MetricDef(
    "G",
    "trec_eval's normalised gain G",
    (),
    compute=kernel(K, "g"),
    trec_name=lambda m: "G" if not m.params else None,
    doc="""trec_eval's G (m_G.c).""",
)

NDCG_REL = MetricDef(
    "ndcg_rel",
    "trec_eval's nDCG averaged over the relevant documents",
    (),
    compute=kernel(K, "ndcg_rel"),
    trec_name=lambda m: "ndcg_rel" if not m.params else None,
    doc="""trec_eval's ndcg_rel (m_ndcg_rel.c).""",
)

RNDCG = MetricDef(
    "Rndcg",
    "trec_eval's nDCG at rank R",
    (),
    compute=kernel(K, "rndcg"),
    trec_name=lambda m: "Rndcg" if not m.params else None,
    doc="""trec_eval's Rndcg (m_Rndcg.c).""",
)

RBP_RESID = MetricDef(
    "rbp_resid",
    "residual of rank-biased precision",
    (Param("p", "float", 0.8, "persistence", minimum=0, maximum=1, exclusive_minimum=True),),
    compute=kernel(K, "rbp_resid"),
    trec_name=lambda m: "rbp_resid" if not m.params else None,
    doc="""The RBP residual (m_rbp.c).""",
)

UNJ = MetricDef(
    "unj",
    "trec_eval's unjudged count in the top k",
    (cutoff(required=True),),
    at="k",
    compute=kernel(K, "unjudged"),
    trec_name=lambda m: f"unj_{m.get('k')}" if plain(m, "k") and isinstance(m.get("k"), int) else None,
    doc="""trec_eval's unj_k (m_unj.c).""",
)


@hookimpl
def irspec_register_metrics(register) -> None:
    """Register trec_eval's remaining measures."""
    register(UTILITY)
    register(BIN_G)
    register(G)
    register(NDCG_REL)
    register(RNDCG)
    register(RBP_RESID)
    register(UNJ, aliases=["unjudged"])
    register(MetricGroup("trec:unj", ("unj.5,10,20",), "trec_eval's default unj"))
