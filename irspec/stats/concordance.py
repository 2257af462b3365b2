"""Agreement statistics on plain arrays: between two rankings of systems, and between two sets of labels.

Rankings (one score per system, the same systems in the same order in both arrays):

:func:`kendall_tau_b`
    Kendall's τ-b, which corrects for ties (Kendall, *Biometrika* 1945):
    ``τ_b = (P - Q) / sqrt((n0 - n1) (n0 - n2))`` over the ``n0 = n(n-1)/2`` pairs of systems, with
    ``P``/``Q`` the concordant/discordant pairs and ``n1``/``n2`` the pairs tied in ``x``/``y``.
    scipy's ``kendalltau`` (variant ``b``) is its test reference.
:func:`tau_ap`
    Yilmaz, Aslam & Robertson's AP correlation (SIGIR 2008), asymmetric: the ranking ``other`` is read
    from its top down and each system is checked against the ``reference`` ranking,
    ``τ_AP = 2/(N-1) · Σ_{i=2..N} C(i)/(i-1) - 1`` where ``C(i)`` is the number of systems above rank
    ``i`` in ``other`` that are also above that system in ``reference``. A swap near the top costs more
    than one near the bottom. The top is the highest score: for a measure where lower is better, the
    caller negates both arrays so that the best system comes first. Defined only for rankings without
    ties (with ties the order of ``other`` and the "correct" pairs of ``reference`` are not defined;
    Urbano & Marrero's τ_AP-b, SIGIR 2017, is one way out that irspec does not take): tied scores give
    NaN, never a guess.
:func:`swapped_pairs`
    The pairs of systems the two rankings order in opposite directions (a tie in one is no swap).

Ties. The scores are means, each a float sum over topics divided by their number (trec_eval's rule,
:mod:`irspec.evaluation.means`): two runs whose means are equal as rationals can differ in the last bits
(P@5 values 0.2, 0.2, 0.8 and 0.8, 0.2, 0.2 add up to sums one ulp apart). So two scores are tied when
they differ by at most :data:`TIE_TOLERANCE` (1e-12) of the larger magnitude, in all three functions
alike. Each addition of a sequential sum rounds by at most half an ulp, so a mean of ``n`` values carries
a relative error of at most about ``n · 1.1e-16`` (typically ``√n · 1.1e-16``): 1e-12 covers the worst
case up to about 9,000 topics and the typical one far beyond, while two means that truly differ by less
than 1e-12 of their size are no ordering an experiment can support. ``tolerance=0`` compares exactly.

Labels (one label per commonly judged query-document pair, ``a[i]`` and ``b[i]`` of the same pair; any
integers, computed from sums over the pairs and the distinct labels, in memory bounded by the number of
pairs whatever the labels' values: no matrix over every grade from the lowest to the highest):

:func:`cohen_kappa`
    Cohen's κ (*Educ. Psychol. Meas.* 1960) and its weighted form (Cohen, *Psychol. Bull.* 1968):
    ``κ = 1 - Σ w_ij O_ij / Σ w_ij E_ij`` over the confusion matrix ``O`` (proportions) and the matrix
    ``E`` expected by chance from its margins; unweighted ``w_ij = [i != j]``, linear ``|i-j|`` and
    quadratic ``(i-j)^2``, where ``i``, ``j`` are the label *values* (grades): labels 0 and 2 are two
    apart even when no pair was labelled 1. A grade nobody used has zero margins and adds nothing to either
    sum, so both are taken over the labels seen: ``Σ w O`` is the mean weight of the pairs' two labels,
    and ``Σ w E`` the mean weight of every label of ``a`` against every label of ``b`` (unweighted: one
    less the chance of equal labels, ``Σ_l p_a(l) p_b(l)``; linear: each gap between neighbouring labels
    times the chance that it separates the two, from the cumulative margins; quadratic: ``Var(a) +
    Var(b) + (mean(a) - mean(b))^2``). scikit-learn's ``cohen_kappa_score`` with ``labels`` every integer
    from the lowest label to the highest is its test reference.
:func:`krippendorff_alpha_ordinal`
    Krippendorff's α for two coders and ordinal labels (Krippendorff, *Content Analysis*, 2004, ch. 11;
    "Computing Krippendorff's alpha-reliability", 2011): ``α = 1 - (n-1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck``
    over the coincidence matrix ``o`` (each pair counted both ways, ``n = 2N`` values, ``n_c`` its
    margins), with the ordinal distance ``δ_ck = Σ_{g=c..k} n_g - (n_c + n_k)/2``. That distance is
    ``m_k - m_c``, with ``m_c = Σ_{g<c} n_g + n_c/2`` the mid-rank of value ``c`` among the ``n``, so both
    sums are of squared differences and need no matrix: ``Σ o_ck δ²_ck = 2 Σ_i (m(a_i) - m(b_i))^2`` and
    ``Σ n_c n_k δ²_ck = 2n Σ_c n_c (m_c - m̄)^2``. The ``krippendorff`` package is its test reference.
:func:`confusion_matrix`
    The labels seen in either set (sorted) and the counts of each pair of labels.

Undefined values are NaN (fewer than two systems, a constant ranking, labels of one value only); the
callers say why. Labels are kept as they are: a negative label (trec_eval reads it as not relevant) is
its own category here, below 0; :func:`binary` maps labels to relevant (``label >= level``) or not, as
trec_eval's relevance level does, for the binary agreement.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "TIE_TOLERANCE",
    "WEIGHTS",
    "binary",
    "cohen_kappa",
    "confusion_matrix",
    "has_ties",
    "kendall_tau_b",
    "krippendorff_alpha_ordinal",
    "swapped_pairs",
    "tau_ap",
]

WEIGHTS = ("none", "linear", "quadratic")
"""The weightings :func:`cohen_kappa` knows."""

TIE_TOLERANCE = 1e-12
"""Two scores of a ranking differing by at most this fraction of the larger magnitude are tied: means
that are equal as rationals but were added in another order (see the module docstring, "Ties")."""


def _pair(x: object, y: object, what: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"{what} must be two 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError(f"{what} must be finite numbers")
    return a, b


def _signs(v: np.ndarray, tolerance: float) -> np.ndarray:
    """``sign(v[i] - v[j])`` for every pair ``i < j``, as one flat array; 0 for two scores within
    ``tolerance`` of the larger magnitude (tied, :data:`TIE_TOLERANCE`)."""
    i, j = np.triu_indices(len(v), k=1)
    difference = v[i] - v[j]
    signs = np.sign(difference)
    signs[np.abs(difference) <= tolerance * np.maximum(np.abs(v[i]), np.abs(v[j]))] = 0.0
    return signs


def _tolerance(tolerance: float) -> float:
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, not {tolerance!r}")
    return float(tolerance)


def kendall_tau_b(x: object, y: object, *, tolerance: float = TIE_TOLERANCE) -> float:
    """Kendall's τ-b between the systems' scores ``x`` and ``y`` (see the module docstring); scores
    within ``tolerance`` of each other (relative) are tied. NaN when fewer than two systems or either
    ranking is constant."""
    a, b = _pair(x, y, "scores")
    sa, sb = _signs(a, _tolerance(tolerance)), _signs(b, tolerance)
    n0 = len(sa)
    tied_a = int(np.count_nonzero(sa == 0))
    tied_b = int(np.count_nonzero(sb == 0))
    if n0 == 0 or tied_a == n0 or tied_b == n0:
        return math.nan
    return float(np.sum(sa * sb)) / math.sqrt((n0 - tied_a) * (n0 - tied_b))


def has_ties(scores: object, *, tolerance: float = TIE_TOLERANCE) -> bool:
    """Whether two of ``scores`` are tied (within ``tolerance`` of the larger magnitude, as
    :func:`kendall_tau_b` and :func:`tau_ap` tell ties)."""
    v, _ = _pair(scores, scores, "scores")
    return bool(np.any(_signs(v, _tolerance(tolerance)) == 0))


def tau_ap(reference: object, other: object, *, tolerance: float = TIE_TOLERANCE) -> float:
    """Yilmaz et al.'s τ_AP of the ranking by ``other``'s scores against the ranking by ``reference``'s
    (higher score ranks higher; see the module docstring); NaN with fewer than two systems or any tie
    (two scores within ``tolerance`` of each other, relative).

    ``tau_ap(ref, other)`` and ``tau_ap(other, ref)`` differ in general: the first weighs the top of
    ``other``'s ranking. For a measure where lower is better, pass ``-ref`` and ``-other``: the top is
    the best system.
    """
    ref, oth = _pair(reference, other, "scores")
    n = len(ref)
    if n < 2 or has_ties(ref, tolerance=tolerance) or has_ties(oth, tolerance=tolerance):
        return math.nan
    order = np.argsort(-oth, kind="stable")  # other's ranking, top first
    ranked = ref[order]
    total = 0.0
    for i in range(1, n):
        # systems above rank i in `other` that `reference` also puts above this one (no two within the
        # tolerance, so a plain comparison orders them as the tolerant one would)
        correct = int(np.count_nonzero(ranked[:i] > ranked[i]))
        total += correct / i
    return 2.0 * total / (n - 1) - 1.0


def swapped_pairs(x: object, y: object, *, tolerance: float = TIE_TOLERANCE) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, of systems that ``x`` and ``y`` order in opposite directions
    (a pair within ``tolerance`` of each other, relative, in either is tied: no swap)."""
    a, b = _pair(x, y, "scores")
    i, j = np.triu_indices(len(a), k=1)
    swapped = _signs(a, _tolerance(tolerance)) * _signs(b, tolerance) < 0
    return [(int(p), int(q)) for p, q in zip(i[swapped], j[swapped], strict=True)]


def _labels(a: object, b: object) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a)
    y = np.asarray(b)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"labels must be two 1-d arrays of one length, got shapes {x.shape} and {y.shape}")
    if x.size and not (np.issubdtype(x.dtype, np.integer) and np.issubdtype(y.dtype, np.integer)):
        raise ValueError("labels must be integers")
    return x.astype(np.int64), y.astype(np.int64)


def confusion_matrix(a: object, b: object) -> tuple[list[int], np.ndarray]:
    """The labels found in ``a`` or ``b``, sorted, and the matrix of counts: row = ``a``'s label,
    column = ``b``'s label."""
    x, y = _labels(a, b)
    labels = np.union1d(x, y)
    counts = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(counts, (np.searchsorted(labels, x), np.searchsorted(labels, y)), 1)
    return [int(v) for v in labels], counts


def _distinct(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The labels seen in ``x`` or ``y`` (sorted, as floats measured from the lowest: their differences
    are the grades' distances) and the index of each of ``x``'s and ``y``'s labels among them."""
    values, where = np.unique(np.concatenate([x, y]), return_inverse=True)
    grades = values.astype(np.float64) - float(values[0]) if len(values) else values.astype(np.float64)
    return grades, where[: len(x)], where[len(x) :]


def cohen_kappa(a: object, b: object, weights: str = "none") -> float:
    """Cohen's κ between the labels ``a`` and ``b`` of the same items, ``weights`` ``"none"``,
    ``"linear"`` or ``"quadratic"`` (see the module docstring); NaN with no items, or when chance
    alone explains every agreement (both sets give every item one and the same label).

    Memory grows with the number of items and distinct labels, never with the labels' values: a label
    of 100000 beside 0..3 costs what a label of 4 does."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}")
    x, y = _labels(a, b)
    n = x.size
    if n == 0:
        return math.nan
    grades, ia, ib = _distinct(x, y)
    count_a = np.bincount(ia, minlength=len(grades))
    count_b = np.bincount(ib, minlength=len(grades))
    # n times each sum of the module docstring (n Σ w O and n Σ w E, over counts, not proportions)
    if weights == "none":
        observed = float(n * int(np.count_nonzero(ia != ib)))
        chance = float(n * n - int(np.dot(count_a, count_b)))
    elif weights == "linear":
        observed = n * float(np.sum(np.abs(grades[ia] - grades[ib])))
        below_a, below_b = np.cumsum(count_a)[:-1], np.cumsum(count_b)[:-1]  # labels up to each gap
        separated = below_a * (n - below_b) + below_b * (n - below_a)  # (a, b) pairs the gap lies between
        chance = float(np.sum(np.diff(grades) * separated.astype(np.float64)))
    else:
        observed = n * float(np.sum((grades[ia] - grades[ib]) ** 2))
        mean_a, mean_b = float(np.mean(grades[ia])), float(np.mean(grades[ib]))
        spread_a = float(np.sum((grades[ia] - mean_a) ** 2))
        spread_b = float(np.sum((grades[ib] - mean_b) ** 2))
        chance = n * (spread_a + spread_b) + n * n * (mean_a - mean_b) ** 2
    if chance == 0.0:
        return math.nan
    return 1.0 - observed / chance


def krippendorff_alpha_ordinal(a: object, b: object) -> float:
    """Krippendorff's ordinal α between two coders' labels ``a`` and ``b`` of the same items, none
    missing (see the module docstring); NaN with fewer than one item or a single label value overall.
    Memory grows with the number of items, never with the labels' values."""
    x, y = _labels(a, b)
    if x.size == 0:
        return math.nan
    grades, ia, ib = _distinct(x, y)
    if len(grades) < 2:
        return math.nan
    margins = np.bincount(ia, minlength=len(grades)) + np.bincount(ib, minlength=len(grades))
    n = float(margins.sum())  # every value, both coders': 2N
    midrank = np.cumsum(margins) - margins / 2.0  # the ordinal distance is the difference of mid-ranks
    disagreement = 2.0 * float(np.sum((midrank[ia] - midrank[ib]) ** 2))
    centre = float(np.sum(margins * midrank)) / n
    chance = 2.0 * n * float(np.sum(margins * (midrank - centre) ** 2))
    return 1.0 - (n - 1.0) * disagreement / chance


def binary(labels: object, level: int = 1) -> np.ndarray:
    """1 for a label at least ``level`` (relevant, as trec_eval's relevance level reads it), else 0."""
    x = np.asarray(labels)
    return (x >= level).astype(np.int64)
