"""Beyond accuracy, per user: intra-list diversity (ILD@k) and serendipity (Serendipity@k).

Each is a value of one user's list (the top k after the training items are removed), averaged over
users like any accuracy metric, so per-user values, means, intervals and comparisons are the usual
ones. They read what a ranking of judged items does not show from the context's inputs, which
:func:`irspec.evaluate_topk` and :func:`irspec.evaluate_scores` give: each user's whole list
(``"recommendations"``), the items' features or a distance function (``features=``, for ILD), and
what a user would expect (``expected=``, or the items' training popularity, ``popularity=``, for
serendipity). A user whose list is empty (every item excluded) has no value (NaN, left out of the mean).
"""

from __future__ import annotations

from irspec.builtin._common import kernel, rel
from irspec.builtin.popularity import list_cutoff
from irspec.spec.hooks import builtin_hookimpl
from irspec.spec.registry import NONNEGATIVE, UNIT, MetricDef, Param

K = "beyond"

DISTANCES = ("cosine", "hamming", "jaccard", "given")
"""The ``distance`` of ILD: computed from an items × features matrix, or ``given`` as a function."""

EXPECTED = ("popularity", "items")
"""What a user expects, for Serendipity: the popular items (RecTools' form), or ``items`` given per user."""

_LIST = """L_u is user u's top k after the training items are removed (|L_u| <= k: fewer when the list is
short)."""

ILD = MetricDef(
    "ILD",
    "intra-list diversity: the mean distance between two items of a user's top k (item features given)",
    (
        list_cutoff(),
        Param(
            "distance",
            "choice",
            "cosine",
            "the distance between two items: from the features= matrix (cosine, hamming, jaccard), "
            "or given, the function passed as features=",
            choices=DISTANCES,
        ),
    ),
    at="k",
    compute=kernel(K, "ild"),
    doc=f"""ILD@k = (2 / (|L_u| (|L_u| - 1))) Σ_{{i < j}} d(L_u[i], L_u[j]), the mean distance over the
|L_u| (|L_u| - 1) / 2 pairs of items of the list, averaged over users; 0 for a list of one item (no two
items differ), undefined (NaN, left out of the mean) for an empty one. {_LIST} The distance d comes
from ``features=`` of :func:`irspec.evaluate_topk` / :func:`irspec.evaluate_scores`: an items × features
matrix (numpy or scipy.sparse; a row per column of the test matrix), with ``distance`` one of
``cosine`` (the default: 1 - cos(x_i, x_j); an item whose features are all zero shares nothing, cosine 0),
``hamming`` (the number of features whose values differ: RecTools' ``PairwiseHammingDistanceCalculator``)
and ``jaccard`` (1 - |A ∩ B| / |A ∪ B| of the sets of non-zero features; two items without any, 1); or
``ILD(distance=given)@k`` with ``features=`` a function ``d(a, b)`` of two equal-length integer arrays of
item indices that returns their distances (a precomputed items × items matrix ``D`` is
``lambda a, b: D[a, b]``). RecTools' ``IntraListDiversity`` is ``ILD(distance=hamming)@k`` (its
docstring divides by k (k - 1); its code, as irspec, averages over the pairs the list has). Reference:
Ziegler, McNee, Konstan & Lausen, "Improving recommendation lists through topic diversification", WWW
2005 (intra-list similarity); Vargas & Castells, "Rank and relevance in novelty and diversity metrics
for recommender systems", RecSys 2011.""",
    bounds=NONNEGATIVE,
)

SERENDIPITY = MetricDef(
    "Serendipity",
    "serendipity: the relevant and unexpected items of a user's top k, over the list's length",
    (
        list_cutoff(),
        Param(
            "expected",
            "choice",
            "popularity",
            "what a user expects: the popular items (popularity=, RecTools' form) or items given per user "
            "(expected=)",
            choices=EXPECTED,
        ),
        rel(),
    ),
    at="k",
    compute=kernel(K, "serendipity"),
    doc=f"""Serendipity@k = (1/|L_u|) Σ_{{j = 1}}^{{|L_u|}} rel(L_u[j]) · unexp(u, L_u[j], j), averaged over
users: relevance times unexpectedness. {_LIST} rel is 1 for an item held out for u at the relevance
level, else 0.

``expected=popularity`` (the default) is RecTools' ``Serendipity``: unexp = max(0, (N + 1 - j) / N -
(N + 1 - r(i)) / N), the chance of the item's rank j in the user's list against the chance of its
popularity rank r(i) in anyone's (N the catalogue's size, the test matrix's columns; r(i) the dense rank,
1 the most, of the item's training users in the matrix given as ``popularity=``, equal counts sharing a
rank; an item without training interactions is unexpected to the full). RecTools' docstring divides by
k; its code, as irspec, by the number of items the list has.

``Serendipity(expected=items)@k``: unexp = 1 when the item is not among those the user was expected to
be shown, 0 when it is, from ``expected=`` of :func:`irspec.evaluate_topk` (a users × items sparse matrix
whose stored entries are each user's expected items, or a users × m array of item indices, -1 padding:
a primitive recommender's lists, such as the most popular items). This is Ge et al.'s unexpected set
(the items a primitive model does not recommend), its useful items counted over the list's length.

References: Ge, Delgado-Battenfeld & Jannach, "Beyond accuracy: evaluating recommender systems by
coverage and serendipity", RecSys 2010; Kaminskas & Bridge, "Diversity, serendipity, novelty, and
coverage: a survey and empirical analysis of beyond-accuracy objectives in recommender systems", ACM
TiiS 2016; RecTools' ``Serendipity``.""",
    bounds=UNIT,
)


@builtin_hookimpl
def irspec_register_metrics(register) -> None:
    """Register intra-list diversity and serendipity."""
    register(ILD, aliases=["IntraListDiversity"])
    register(SERENDIPITY)
