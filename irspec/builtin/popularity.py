"""Popularity bias of a recommender, per user: ARP@k, APLT@k and Novelty@k.

Each is a value of one user's list (the top k after the training items are removed), averaged over
users like any accuracy metric, so per-user values, means, intervals and comparisons are the usual
ones. An item's popularity is its number of training interactions: the users who interacted with it in
the matrix given as ``popularity=`` to :func:`irspec.evaluate_topk` or :func:`irspec.evaluate_scores`
(the training matrix, usually ``exclude=``'s). The kernels read it, and each user's list, from the
context's ``"popularity"`` and ``"recommendations"`` inputs. A user whose list is empty (every item
excluded) has no value (NaN, left out of the mean).

How the catalogue as a whole is used (coverage, Gini, entropy) is :mod:`irspec.builtin.exposure`: no
mean over users gives it.
"""

from __future__ import annotations

from irspec.builtin._common import kernel
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import NONNEGATIVE, UNIT, MetricDef, Param

K = "popularity"


def list_cutoff() -> Param:
    """The length of the list a value is computed from, set by ``@``; a fixed number."""
    return Param(
        "k", "int", None, "list length: the top k items of each user's list count", minimum=1, required=True
    )


_LIST = """L_u is user u's top k after the training items are removed (|L_u| <= k: fewer when the list is
short), and φ(i) item i's popularity, the number of users who interacted with i in the matrix given as
``popularity=``."""

ARP = MetricDef(
    "ARP",
    "average recommendation popularity: the mean popularity (training interactions) of a user's top k",
    (list_cutoff(),),
    at="k",
    compute=kernel(K, "arp"),
    doc=f"""ARP@k = (1/|L_u|) Σ_{{i ∈ L_u}} φ(i), averaged over users. {_LIST} Abdollahpouri et al. average
it over users, and so does irspec (it is a per-user metric, not a catalogue one); RecTools'
``AvgRecPopularity`` is the same. Lower means less popularity bias. Reference: Abdollahpouri, Burke &
Mobasher, "Managing popularity bias in recommender systems with personalized re-ranking", FLAIRS 2019.""",
    better="neither",
    bounds=NONNEGATIVE,
)

APLT = MetricDef(
    "APLT",
    "average percentage of long-tail items: the share of a user's top k outside the popular head",
    (
        list_cutoff(),
        Param(
            "head",
            "float",
            0.2,
            "the share of training interactions the head (the most popular items) accounts for",
            minimum=0.0,
            maximum=1.0,
        ),
    ),
    at="k",
    compute=kernel(K, "aplt"),
    doc=f"""APLT@k = |L_u ∩ Γ| / |L_u|, averaged over users, with Γ the long tail: the items outside the
head. The head is the most popular items, taken in decreasing popularity until they hold ``head`` (20%)
of all training interactions; items as popular as the last one taken are in the head too, so the split
does not depend on the order of ties. An item without training interactions is in the tail.
``APLT(head=0.8)@10`` is the Pareto split (a head of the items holding 80% of interactions). {_LIST}
Reference: Abdollahpouri, Burke & Mobasher, "Managing popularity bias in recommender systems with
personalized re-ranking", FLAIRS 2019.""",
    bounds=UNIT,
)

NOVELTY = MetricDef(
    "Novelty",
    "popularity-based novelty: the mean self-information -log2(share of users) of a user's top k",
    (list_cutoff(),),
    at="k",
    compute=kernel(K, "novelty"),
    doc=f"""Novelty@k = (1/|L_u|) Σ_{{i ∈ L_u}} -log2(φ(i) / |U|), averaged over users, with |U| the number of
users with a training interaction; an item without training interactions counts as one user's (its
self-information is finite), as RecTools' ``MeanInvUserFreq`` counts it, whose values these are. {_LIST}
Reference: Zhou et al., "Solving the apparent diversity-accuracy dilemma of recommender systems", PNAS
2010; Castells, Hurley & Vargas, "Novelty and diversity in recommender systems", Recommender Systems
Handbook 2015.""",
    bounds=NONNEGATIVE,
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register the per-user popularity-bias metrics."""
    register(ARP)
    register(APLT)
    register(NOVELTY)
