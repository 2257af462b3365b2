"""trec_eval's remaining measures, so that ``-m all_trec`` is complete.

Their definitions follow trec_eval 10's source (m_utility.c, m_binG.c, m_G.c, m_ndcg_rel.c,
m_Rndcg.c, m_rbp.c, m_unj.c, m_yaap.c); see each docstring.
"""

from __future__ import annotations

from irspec.builtin._common import cutoff, kernel, plain, rel, short_float
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import UNIT, Metric, MetricDef, MetricGroup, Param

K = "trec_misc"


def _weight(name: str, default: float, what: str) -> Param:
    # A weight times a count (up to MAX_COUNT) must stay finite in float64: 1e100 leaves ample room.
    return Param(name, "float", default, what, minimum=-1e100, maximum=1e100)


def _four(values: list[str]) -> list[str]:
    if len(values) != 4:
        raise ValueError(f"utility takes exactly 4 values a,b,c,d, got {len(values)}")
    return values


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
        _weight("a", 1.0, "weight of each relevant retrieved document"),
        _weight("b", -1.0, "weight of each non-relevant retrieved document"),
        _weight("c", 0.0, "weight of each relevant document not retrieved"),
        _weight("d", 0.0, "weight of each non-relevant document not retrieved"),
        rel(),
    ),
    compute=kernel(K, "utility"),
    trec_name=_utility_trec,
    dotted=lambda values: [dict(zip("abcd", _four(values), strict=True))],
    doc="""utility = a·relret + b·(n − relret) + c·(R − relret) + d·(C + relret − n − R), with C the
collection size (the collection_size option, trec_eval's -N; 0 when not given) and trec_eval's default
coefficients (1, −1, 0, 0); trec_eval's ``utility.a,b,c,d`` sets all four. The mean over queries is
reported. Reference: Hull & Robertson, "The TREC-8 filtering track final report", 1999.""",
)

BIN_G = MetricDef(
    "binG",
    "trec_eval's binary gain G",
    (rel(),),
    compute=kernel(K, "bin_g"),
    trec_name=lambda m: "binG" if not m.params else None,
    doc="""binG = (1/R) Σ over relevant retrieved documents of 1 / log2(2 + the documents above it that are
not relevant): trec_eval's binary G (m_binG.c). 0 when R = 0.""",
)

G = MetricDef(
    "G",
    "trec_eval's normalised gain G",
    (),
    compute=kernel(K, "g"),
    trec_name=lambda m: "G" if not m.params else None,
    doc="""G = Σ_{i: g_i ≠ 0} g_i / log2(2 + cost_i − gained_i), divided by the total ideal gain, where g_i is
the gain (label) at rank i, gained_i = Σ_{k<=i} g_k and cost_i = Σ_{k<=i} max(I_k, 1) with I the ideal
gains in decreasing order (0 past their end). trec_eval's G (m_G.c); equals binG for binary labels.""",
)

NDCG_REL = MetricDef(
    "ndcg_rel",
    "trec_eval's nDCG averaged over the relevant documents",
    (),
    compute=kernel(K, "ndcg_rel"),
    trec_name=lambda m: "ndcg_rel" if not m.params else None,
    doc="""ndcg_rel = (1/Rg) [Σ_{retrieved i with gain > 0} DCG_i / IDCG_min(i, Rg) + (Rg − found)·DCG_n /
IDCG_Rg], with Rg the judged documents of positive gain and found those retrieved: nDCG averaged over the
relevant documents (trec_eval's m_ndcg_rel.c). Gain = label; the relevance level is ignored.""",
)

RNDCG = MetricDef(
    "Rndcg",
    "trec_eval's nDCG at rank R",
    (),
    compute=kernel(K, "rndcg"),
    trec_name=lambda m: "Rndcg" if not m.params else None,
    doc="""Rndcg: the mean of nDCG at each rank b where the ideal gain changes (DCG_min(b, n) / IDCG_b), plus
DCG_n / IDCG_Rg when n >= Rg + 2, exactly as trec_eval's m_Rndcg.c (whose last condition skips
n = Rg + 1). 0 when R = 0 at the relevance level.""",
)

RBP_RESID = MetricDef(
    "rbp_resid",
    "residual of rank-biased precision",
    (
        Param(
            "p",
            "float",
            0.9,
            "persistence: the chance the user goes on to the next rank",
            minimum=0,
            maximum=1,
            exclusive_minimum=True,
        ),
    ),
    compute=kernel(K, "rbp_resid"),
    better="neither",
    trec_name=lambda m: "rbp_resid" if not m.params else None,
    doc="""rbp_resid = p^n + (1 − p) Σ over unjudged ranks i of p^(i−1): how much rank-biased precision
(Moffat & Zobel, TOIS 2008) could still grow if unjudged documents were relevant. trec_eval's
rbp_resid (m_rbp.c) with its convention that the residual is 0 when every retrieved document is judged.
Default p = 0.9, as trec_eval.""",
)

UNJ = MetricDef(
    "unj",
    "trec_eval's unjudged count in the top k",
    (cutoff(required=True),),
    at="k",
    compute=kernel(K, "unjudged"),
    better="neither",
    trec_name=lambda m: f"unj_{m.get('k')}" if plain(m, "k") and isinstance(m.get("k"), int) else None,
    doc="""unj@k = |top-k documents without a label >= 0 (absent from the qrels or negative)| / k, k in the
denominator even when n < k: trec_eval's unj_k (m_unjudged.c).""",
    bounds=UNIT,
)


RELSTRING = MetricDef(
    "relstring",
    "the relevance labels of the top k documents, as a string (per query, no summary)",
    (Param("k", "int", 10, "how many top documents to show", minimum=1),),
    at="k",
    aggregate="none",
    compute=kernel(K, "relstring"),
    # trec_eval prints its default, 10, as plain relstring (the canonical text shows it: relstring@10)
    trec_name=lambda m: (
        None if not plain(m, "k") else "relstring" if m.get("k") == 10 else f"relstring_{m.get('k')}"
    ),
    doc="""relstring@k: one character per top-k document: its label 0-9, '>' above 9, '-' when it is absent
from the qrels and '.' when its label is negative (pooled, unjudged). A display of the ranking for
debugging, trec_eval's relstring (m_relstring.c); it has no summary value.""",
)

YAAP = MetricDef(
    "yaap",
    "trec_eval's yet another AP: ln((1 + S) / (1 + R − S)), S = AP·R",
    (rel(),),
    compute=kernel("ranks", "yaap"),
    trec_name=lambda m: "yaap" if not m.params else None,
    doc="""yaap = ln((1 + S) / (1 + R − S)) with S = Σ over relevant ranks r of P@r (so S = AP·R); 0 when
R = 0. trec_eval's m_yaap.c (not part of all_trec).""",
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register trec_eval's remaining measures."""
    register(UTILITY)
    register(BIN_G)
    register(G)
    register(NDCG_REL)
    register(RNDCG)
    register(RBP_RESID)
    register(YAAP)
    register(RELSTRING)
    register(UNJ, aliases=["unjudged"])
    register(MetricGroup("trec:unj", ("unj.5,10,20",), "trec_eval's default unj"))
