"""The declarations of irspec-diversity: ndeval's measures under ir_measures' names, and the reader of
qrels with subtopics, registered through irspec's plugin hooks.

Written only against irspec's public plugin API, as any third party would. Importing this module is
cheap: the kernels and the reader are named as ``"module:function"`` strings.
"""

from __future__ import annotations

import irspec
from irspec import Alias, InputReader, MetricDef, Param

K = "irspec_diversity.kernels"
INPUT = "subtopics"
"""The input the metrics need: qrels with subtopics, read in place of the qrels."""

_REFERENCES = {
    "alpha": 'Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon, "Novelty and diversity in '
    'information retrieval evaluation", SIGIR 2008',
    "err": 'Chapelle, Metzler, Zhang & Grinspan, "Expected reciprocal rank for graded relevance", CIKM 2009 '
    "(made intent-aware as Agrawal et al. WSDM 2009 do)",
    "nrbp": 'Clarke, Kolla & Vechtomova, "An effectiveness measure for ambiguous and underspecified queries", '
    "ICTIR 2009",
    "ia": 'Agrawal, Gollapudi, Halverson & Ieong, "Diversifying search results", WSDM 2009',
    "strec": 'Zhai, Cohen & Lafferty, "Beyond independent relevance: methods and evaluation metrics for '
    'subtopic retrieval", SIGIR 2003',
}

_COMMON = """Notation: S is the number of the query's subtopics with a relevant document (a subtopic judged
only non-relevant is ignored, as ndeval ignores it); a document is relevant to subtopic j when its label
for j is >= rel; its score at rank r is g_r = Σ_{j relevant} (1 − α)^{c_j}, with c_j the documents
relevant to j above it (subtopics taken in the order of their ids). A query with S = 0 scores 0.
Computed as TREC's ndeval 4.5 computes it (arithmetic in its order), on irspec's ranking: score
descending, then docno descending (ndeval's -traditional order). Needs qrels with subtopics
(topic subtopic docno label)."""


def _k() -> Param:
    return Param(
        "k", "int", 20, "rank cutoff (ndeval computes these measures to depth 20)", minimum=1, maximum=20
    )


def _alpha() -> Param:
    return Param(
        "alpha",
        "float",
        0.5,
        "redundancy intolerance α: a subtopic's gain shrinks by (1 − α) per document covering it",
        minimum=0,
        maximum=1,
    )


def _rel() -> Param:
    return Param(
        "rel",
        "int",
        None,
        "labels >= rel are relevant to their subtopic (default: the evaluation's relevance level)",
        minimum=1,
    )


def _judged_only() -> Param:
    return Param(
        "judged_only",
        "bool",
        False,
        "drop the documents the query's qrels do not list before measuring (ndeval's; one listed with "
        "negative labels alone stays, which -J drops)",
    )


def _metric(name: str, summary: str, params: tuple[Param, ...], kernel: str, doc: str) -> MetricDef:
    return MetricDef(
        name,
        summary,
        params,
        at="k" if any(p.name == "k" for p in params) else None,
        compute=f"{K}:{kernel}",
        needs=INPUT,
        doc=doc + "\n" + _COMMON,
    )


ALPHA_NDCG = _metric(
    "alpha_nDCG",
    "α-nDCG@k: novelty-aware nDCG over subtopics, normalised by the greedy ideal ranking",
    (_k(), _alpha(), _rel(), _judged_only()),
    "alpha_ndcg",
    f"""alpha_nDCG@k = α-DCG'@k / ideal α-DCG'@k (0 when the run's is 0), with α-DCG'@k = Σ_{{r<=k}} g_r / log2(r + 1)
(divided by the ideal-ideal sum below from k = 2 on, which ndeval does to both and which cancels). The
ideal ranking is ndeval's greedy approximation over every judged document of the query: at each rank the
document of the highest score, ties to the greatest docno. Reference: {_REFERENCES["alpha"]}.""",
)

ALPHA_DCG = _metric(
    "alpha_DCG",
    "α-DCG@k over the 'ideal ideal' (every document covers every subtopic)",
    (_k(), _alpha(), _rel(), _judged_only()),
    "alpha_dcg",
    f"""alpha_DCG@k = Σ_{{r<=k}} g_r / log2(r + 1) / Σ_{{r<=k}} S (1 − α)^(r−1) / log2(r + 1): ndeval's
collection-independent normalisation. At k = 1 irspec divides too (ndeval leaves its first rank
undivided; it reports only 5, 10 and 20). Reference: {_REFERENCES["alpha"]}.""",
)

ERR_IA = _metric(
    "ERR_IA",
    "intent-aware ERR@k (ndeval's), over the 'ideal ideal'",
    (_k(), _alpha(), _rel(), _judged_only()),
    "err_ia",
    f"""ERR_IA@k = Σ_{{r<=k}} g_r / r / Σ_{{r<=k}} S (1 − α)^(r−1) / r: ERR with a stopping probability α for a
relevant document, averaged over the S subtopics, and normalised as ndeval normalises it (collection
independent). At k = 1 irspec divides too (ndeval leaves its first rank undivided). Reference:
{_REFERENCES["err"]}.""",
)

NERR_IA = _metric(
    "nERR_IA",
    "intent-aware ERR@k normalised by the greedy ideal ranking",
    (_k(), _alpha(), _rel(), _judged_only()),
    "nerr_ia",
    f"""nERR_IA@k = ERR-IA'@k / ideal ERR-IA'@k (0 when the run's is 0), over ndeval's greedy ideal ranking
(see alpha_nDCG). Reference: {_REFERENCES["err"]}.""",
)

NRBP = _metric(
    "NRBP",
    "novelty- and rank-biased precision over the whole ranking",
    (
        _alpha(),
        Param(
            "beta",
            "float",
            0.5,
            "patience β: the probability of going on to the next rank",
            minimum=0,
            maximum=1,
        ),
        _rel(),
    ),
    "nrbp",
    f"""NRBP = (1 − (1 − α) β) / S · Σ_r β^(r−1) g_r, over the whole ranking (no cutoff). Reference:
{_REFERENCES["nrbp"]}.""",
)

NNRBP = _metric(
    "nNRBP",
    "NRBP over the NRBP of the greedy ideal ranking",
    NRBP.params,
    "nnrbp",
    f"""nNRBP = NRBP / NRBP of ndeval's greedy ideal ranking (see alpha_nDCG), over every relevant document.
(ndeval divides 0 by 0 for a query with S = 0; irspec gives 0.) Reference: {_REFERENCES["nrbp"]}.""",
)

P_IA = _metric(
    "P_IA",
    "intent-aware precision at k",
    (_k(), _rel(), _judged_only()),
    "p_ia",
    f"""P_IA@k = Σ_{{r<=k}} |subtopics document r is relevant to| / (k · S): P@k averaged over the subtopics
(a ranking shorter than k still divides by k). Reference: {_REFERENCES["ia"]}.""",
)

ST_RECALL = _metric(
    "StRecall",
    "subtopic recall at k: the share of subtopics the top k cover",
    (_k(), _rel()),
    "st_recall",
    f"""StRecall@k = |∪_{{r<=k}} subtopics document r is relevant to| / S. Reference: {_REFERENCES["strec"]}.""",
)

AP_IA = _metric(
    "AP_IA",
    "intent-aware average precision over the whole ranking",
    (_rel(), _judged_only()),
    "ap_ia",
    f"""AP_IA = (1/S) Σ_j AP_j, AP_j = Σ_{{r: relevant to j}} (relevant to j in the top r) / r / R_j, with R_j
the documents relevant to j in the qrels (ndeval's MAP-IA per query). Reference: {_REFERENCES["ia"]}.""",
)

# ir_measures' names are canonical; its α spellings and ndeval's own column names are aliases.
ALIASES: dict[MetricDef, tuple[str, ...]] = {
    ALPHA_NDCG: ("α_nDCG", "alpha-nDCG"),
    ALPHA_DCG: ("α_DCG", "alpha-DCG"),
    ERR_IA: ("ERR-IA",),
    NERR_IA: ("nERR-IA",),
    NRBP: (),
    NNRBP: (),
    P_IA: ("P-IA",),
    ST_RECALL: ("strec", "S_recall"),
    AP_IA: ("MAP_IA", "MAP-IA"),
}


@irspec.hookimpl
def irspec_register_readers(register) -> None:
    """Register the reader of qrels with subtopics (read in place of the qrels)."""
    register(
        InputReader(
            INPUT,
            "irspec_diversity.subtopics:read_subtopic_qrels",
            suffixes=(".txt", ".qrels", ".gz"),
            summary="qrels with subtopics: topic subtopic docno label lines, or a frame with a subtopic column",
            as_qrels=True,
        )
    )


@irspec.hookimpl
def irspec_register_metrics(register) -> None:
    """Register ndeval's measures."""
    for definition, aliases in ALIASES.items():
        register(definition, aliases=[Alias(a) for a in aliases])
