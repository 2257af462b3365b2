"""The built-in fusion methods that learn: ProbFuse, SegFuse, SlideFuse, PosFuse, MAPFuse and BayesFuse,
as in ranx 0.3.21, registered through the ``irspec_register_fusion`` hook with a ``fit`` step.

Each is trained on judged queries before it fuses (``irspec.fuse(runs, spec, qrels=TRAIN)``, ``irspec
fuse ... --qrels TRAIN``): ``fit`` reads each run's **hit lists** on the training queries (its documents
in rank order, 1 for a label of 1 or more, 0 otherwise) and estimates, per run, how likely a document
at each position is relevant; fusing adds up, over the runs that retrieved a document, that estimate at
the document's position. Notation: ``p`` a 0-based position in a run's list of ``n`` documents for a
query, ``Q`` the number of training queries, ``s_i`` a document's normalised score in run ``i``.

**Which queries train.** The training queries are the queries of the training qrels that some run
retrieved documents for: a training query a run lacks is an empty list for that run (ranx, which refuses
runs and qrels whose queries differ, reads one the same way once it is given an empty ranking). Every
query of the runs is then fused, the training ones included: evaluate the fused run on other queries
(see docs/how-to/fusion.md, "Tuning without leakage").

**Positions.** A run's positions are its ranks as irspec ranks (score descending, then docno
descending), after the normalisation: for ``norm=min-max-inverted`` the reversed order, for ``borda``
the order borda gives every candidate. ranx takes positions from its dicts' order, which is its sorted
order for the other normalisations (and tests/test_fusion_ranx.py holds irspec to it there) but, after
those two, is not the order it trains on; irspec trains and fuses on the same ranks.

The kernels are in :mod:`irspec.builtin.kernels.fusion_learning`.
"""

from __future__ import annotations

from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import FusionDef, Param, Register

_K = "irspec.builtin.kernels.fusion_learning:"

LILLIS_2010 = (
    "Lillis, Zhang, Toolan, Collier, Leonard & Dunnion, Estimating probabilities for effective data "
    "fusion, SIGIR 2010"
)

METHODS: tuple[tuple[FusionDef, tuple[str, ...]], ...] = (
    (
        FusionDef(
            "ProbFuse",
            "the probability of relevance of each segment of a run's list, learned on judged queries",
            _K + "probfuse",
            params=(
                Param(
                    "segments", "int", None, "the number x of segments of each list", minimum=1, required=True
                ),
            ),
            fit=_K + "probfuse_fit",
            grid=(("segments", tuple(range(1, 101))),),
            doc="Σ_i P_i,k / k, k the 1-based segment of the document in run i's list, each list of n "
            "documents cut into x segments of ceil(n/x) (the last shorter or empty); P_i,k = (1/Q) Σ_q "
            "(relevant documents in segment k of q) / (documents in it), ranx's probfuse_all (unjudged "
            "documents count as not relevant; a segment shorter than ceil(n/x) divides by its own "
            "length). Lillis, Toolan, Collier & Dunnion, ProbFuse: a probabilistic approach to data "
            "fusion, SIGIR 2006.",
        ),
        ("prob_fuse",),
    ),
    (
        FusionDef(
            "SegFuse",
            "the probability of relevance of segments of growing size, times the normalised score",
            _K + "segfuse",
            fit=_K + "segfuse_fit",
            doc="Σ_i P_i,k × (s_i + 1), k the segment of the document's position, segments of sizes "
            "10·2^(k-1) - 5 (positions 0-4, 5-14, 15-34, ... up to 5,114; 0 below); P_i,k = (1/Q) Σ_q "
            "(relevant documents in segment k of q) / (the segment's size). Shokouhi, Segmentation of "
            "Search Engine Results for Effective Data-Fusion, ECIR 2007.",
        ),
        ("seg_fuse",),
    ),
    (
        FusionDef(
            "SlideFuse",
            "PosFuse's probabilities averaged over a window around the document's position",
            _K + "slidefuse",
            params=(
                Param("w", "int", None, "the window: w positions on each side", minimum=0, required=True),
            ),
            fit=_K + "positions_fit",
            grid=(("w", tuple(range(1, 101))),),
            doc="Σ_i (1 / (b - a + 1)) Σ_{j=a..b} P_i,j with a = max(p - w, 0), b = min(p + w, n - 1), "
            "P_i,j PosFuse's probability of position j (0 beyond the training lists). Lillis, Toolan, "
            "Collier & Dunnion, Extending Probabilistic Data Fusion Using Sliding Windows, ECIR 2008.",
        ),
        ("slide_fuse",),
    ),
    (
        FusionDef(
            "PosFuse",
            "the probability of relevance of each position of a run's list, learned on judged queries",
            _K + "posfuse",
            fit=_K + "positions_fit",
            doc="Σ_i P_i,p; P_i,p = (training queries with a relevant document at position p of run i) "
            "/ (training queries whose list of run i reaches p); 0 beyond the longest training list. "
            f"{LILLIS_2010}.",
        ),
        ("pos_fuse",),
    ),
    (
        FusionDef(
            "MAPFuse",
            "each run's mean average precision on judged queries, divided by the document's rank",
            _K + "mapfuse",
            fit=_K + "mapfuse_fit",
            doc="Σ_i MAP_i / (p + 1), MAP_i run i's mean AP over the training queries (a query a run "
            f"lacks, or one without relevant documents, has AP 0, as in ranx). {LILLIS_2010}.",
        ),
        ("map_fuse",),
    ),
    (
        FusionDef(
            "BayesFuse",
            "the sum of the runs' log odds of relevance at the document's rank, learned on judged queries",
            _K + "bayesfuse",
            fit=_K + "bayesfuse_fit",
            doc="Σ_i log(P_i,b / (1 - P_i,b)), b the bucket of the document's position in run i (0-4, "
            "5-9, 10-14, 15-19, 20-29, 30-99, 100-199, 200-499, 500-999), P_i,b the mean over the training "
            "queries of the bucket's precision, 0 read as 0.001 and 1 as 0.999; a run that did not "
            "retrieve the document adds log(0.001/0.999), and so does one that ranks it below 1,000 "
            "(where ranx reads past its array: irspec's choice). Aslam & Montague, Models for "
            "Metasearch, SIGIR 2001 (the naive-Bayes combination, with ranx's buckets).",
        ),
        ("bayes_fuse",),
    ),
)
"""Every built-in method that learns, with its aliases (ranx's names are their canonical names' lower case)."""


@builtin_hookimpl
def irspec_register_fusion(register: Register) -> None:
    """Register the built-in fusion methods that learn."""
    for method, aliases in METHODS:
        register(method, aliases=aliases)
