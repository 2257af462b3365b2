"""The built-in fusion methods: every method of ranx 0.3.21 that does not learn, registered through the
``irspec_register_fusion`` hook as a third party's would be.

Notation, per query: ``s_i`` a document's score in run ``i`` after the normalisation (``norm``), ``r_i``
its 1-based rank there, ``h`` the number of runs that retrieved it, ``c`` the number of candidates (the
documents any run retrieved), ``n_i`` the number of documents run ``i`` retrieved, ``w_i`` run ``i``'s
weight. A document a run did not retrieve takes no part in that run's term, unless said otherwise. Each
method's ``doc`` gives its formula and the paper that defines it; where ranx, whose results irspec's are
held equal to (``tests/test_fusion_ranx.py``), reads a paper one way among several, the doc says so.
The kernels are in :mod:`irspec.builtin.kernels.fusion`.
"""

from __future__ import annotations

from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import FusionDef, Param, Register

_K = "irspec.builtin.kernels.fusion:"

# ranx 0.3.21's optimize_fusion grids: steps of 0.01 from 0.01 to 1, 10 to 100 by 10, and each weight in
# steps of 0.1 from 0 to 1 (the vectors summing to 1; see irspec.fusion.tuning)
HUNDREDTHS = tuple(round(0.01 * i, 2) for i in range(1, 101))
TENTHS = tuple(round(0.1 * i, 1) for i in range(11))
WEIGHTS_GRID = (("weights", TENTHS),)

FOX_SHAW = "Fox & Shaw, Combination of Multiple Searches, TREC-2 (1993)"
WU = "Wu & Crestani, Data fusion with estimated weights, CIKM 2002"


def _weights(required: bool) -> Param:
    return Param(
        "weights",
        "floats",
        None,
        "one weight per run, in the order of the runs" + ("" if required else " (default: all 1)"),
        required=required,
    )


METHODS: tuple[tuple[FusionDef, tuple[str, ...]], ...] = (
    (
        FusionDef(
            "CombSUM",
            "the sum of the runs' scores",
            _K + "comb_sum",
            doc=f"Σ_i s_i (a run that lacks the document adds 0). {FOX_SHAW}.",
        ),
        ("sum", "comb_sum"),
    ),
    (
        FusionDef(
            "CombMAX",
            "the largest of the runs' scores",
            _K + "comb_max",
            doc=f"max_i s_i over the runs that retrieved the document. {FOX_SHAW}.",
        ),
        ("max", "comb_max"),
    ),
    (
        FusionDef(
            "CombMIN",
            "the smallest of the runs' scores",
            _K + "comb_min",
            doc=f"min_i s_i over the runs that retrieved the document (ranx's reading; a run that lacks "
            f"it does not make it 0). {FOX_SHAW}.",
        ),
        ("min", "comb_min"),
    ),
    (
        FusionDef(
            "CombMED",
            "the median of the runs' scores",
            _K + "comb_med",
            doc=f"median_i s_i over the runs that retrieved the document (the mean of the middle two for "
            f"an even count). {FOX_SHAW}.",
        ),
        ("med", "comb_med"),
    ),
    (
        FusionDef(
            "CombANZ",
            "the mean of the runs' scores, over the runs that retrieved the document",
            _K + "comb_anz",
            doc=f"(Σ_i s_i) / h. {FOX_SHAW}.",
        ),
        ("anz", "comb_anz"),
    ),
    (
        FusionDef(
            "CombMNZ",
            "the sum of the runs' scores times the number of runs that retrieved the document",
            _K + "comb_mnz",
            doc=f"(Σ_i s_i) × h. {FOX_SHAW}.",
        ),
        ("mnz", "comb_mnz"),
    ),
    (
        FusionDef(
            "CombGMNZ",
            "CombMNZ with the number of runs raised to a power",
            _K + "comb_gmnz",
            params=(Param("gamma", "float", None, "the exponent γ of h", required=True),),
            grid=(("gamma", HUNDREDTHS),),
            doc="(Σ_i s_i) × h^γ (γ = 1 is CombMNZ, γ = 0 CombSUM). Lee, Analyses of Multiple Evidence "
            "Combination, SIGIR 1997.",
        ),
        ("gmnz", "comb_gmnz"),
    ),
    (
        FusionDef(
            "RRF",
            "reciprocal rank fusion",
            _K + "rrf",
            params=(Param("k", "float", 60, "the constant added to each rank", minimum=0),),
            grid=(("k", tuple(range(10, 101, 10))),),
            doc="Σ_i 1 / (k + r_i), k = 60 by default. Cormack, Clarke & Büttcher, Reciprocal rank fusion "
            "outperforms Condorcet and individual rank learning methods, SIGIR 2009.",
        ),
        ("reciprocal_rank_fusion",),
    ),
    (
        FusionDef(
            "ISR",
            "inverse square rank",
            _K + "isr",
            doc="h × Σ_i 1 / r_i². Mourão, Martins & Magalhães, Multimodal medical information retrieval "
            "with unsupervised rank fusion, Computerized Medical Imaging and Graphics 39 (2015).",
        ),
        (),
    ),
    (
        FusionDef(
            "logISR",
            "inverse square rank, the number of runs damped by a logarithm",
            _K + "log_isr",
            doc="log(h) × Σ_i 1 / r_i² (a document one run alone retrieved scores 0, as in ranx). "
            "Mourão, Martins & Magalhães (2015).",
        ),
        ("log_isr",),
    ),
    (
        FusionDef(
            "lognISR",
            "logISR with a constant added to the number of runs",
            _K + "logn_isr",
            params=(Param("sigma", "float", 0.01, "the constant σ added to h", minimum=0, maximum=1),),
            grid=(("sigma", HUNDREDTHS),),
            doc="log(h + σ) × Σ_i 1 / r_i², σ = 0.01 by default. Mourão, Martins & Magalhães (2015).",
        ),
        ("logn_isr",),
    ),
    (
        FusionDef(
            "RBC",
            "rank-biased centroid",
            _K + "rbc",
            params=(
                Param(
                    "phi",
                    "float",
                    None,
                    "the persistence φ",
                    minimum=0,
                    maximum=1,
                    exclusive_minimum=True,
                    required=True,
                ),
            ),
            grid=(("phi", HUNDREDTHS),),
            doc="Σ_i (1 - φ) φ^(r_i - 1). Bailey, Moffat, Scholer & Thomas, Retrieval Consistency in the "
            "Presence of Query Variations, SIGIR 2017.",
        ),
        ("rank_biased_centroid",),
    ),
    (
        FusionDef(
            "BordaFuse",
            "Borda count: points by rank, shared among the documents a run did not retrieve",
            _K + "bordafuse",
            params=(_weights(False),),
            weighted=True,
            grid=WEIGHTS_GRID,
            doc="Σ_i w_i b_i, b_i = c - r_i + 1 for a document run i retrieved and (c - n_i + 1) / 2 for "
            "one it did not (the points left, shared equally). Aslam & Montague, Models for Metasearch, "
            "SIGIR 2001 (the weighted form: weights=[...], ranx's w_bordafuse).",
        ),
        ("borda_fuse", "w_bordafuse", "weighted_bordafuse"),
    ),
    (
        FusionDef(
            "Condorcet",
            "the candidates sorted by pairwise majority vote",
            _K + "condorcet",
            params=(_weights(False),),
            weighted=True,
            grid=WEIGHTS_GRID,
            doc="c - p, p the document's 0-based place when the candidates, in descending docno order, "
            "are sorted (Python's stable merge sort) with the comparison 'x before y when the runs that "
            "rank x above y weigh at least as much as the others' (a run ranks a document it retrieved "
            "above one it did not; of two it did not retrieve, its vote goes to the second, as in ranx; "
            "each side's weights added in the runs' order, as ranx adds them). With cycles the "
            "order depends on the starting order, which ranx leaves to a set's iteration; irspec starts "
            "from descending docno. Montague & Aslam, Condorcet fusion for improved retrieval, CIKM 2002 "
            "(the weighted form: weights=[...], ranx's w_condorcet).",
        ),
        ("w_condorcet", "weighted_condorcet"),
    ),
    (
        FusionDef(
            "WSum",
            "a weighted sum of the runs' scores",
            _K + "wsum",
            params=(_weights(True),),
            weighted=True,
            grid=WEIGHTS_GRID,
            doc="Σ_i w_i s_i (a run that lacks the document adds 0): the linear combination of Vogt & "
            "Cottrell, Fusion via a linear combination of scores, Information Retrieval 1 (1999).",
        ),
        ("weighted_sum", "linear"),
    ),
    (
        FusionDef(
            "WMNZ",
            "weighted CombMNZ",
            _K + "wmnz",
            params=(_weights(True),),
            weighted=True,
            grid=WEIGHTS_GRID,
            doc=f"(Σ_i s_i) × (Σ_i w_i), both over the runs that retrieved the document (ranx's reading). "
            f"{WU}.",
        ),
        (),
    ),
    (
        FusionDef(
            "Mixed",
            "a weighted sum times the square root of the number of runs",
            _K + "mixed",
            params=(_weights(True),),
            weighted=True,
            grid=WEIGHTS_GRID,
            doc=f"(Σ_i w_i s_i) × √h, over the runs that retrieved the document (ranx's reading). {WU}.",
        ),
        (),
    ),
)
"""Every built-in method with its aliases (ranx's names among them)."""


@builtin_hookimpl
def irspec_register_fusion(register: Register) -> None:
    """Register the built-in fusion methods."""
    for method, aliases in METHODS:
        register(method, aliases=aliases)
