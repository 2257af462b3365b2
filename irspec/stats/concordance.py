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
    than one near the bottom. Defined only for rankings without ties (with ties the order of ``other``
    and the "correct" pairs of ``reference`` are not defined; Urbano & Marrero's τ_AP-b, SIGIR 2017,
    is one way out that irspec does not take): tied scores give NaN, never a guess.
:func:`swapped_pairs`
    The pairs of systems the two rankings order in opposite directions (a tie in one is no swap).

Labels (one label per commonly judged query-document pair, ``a[i]`` and ``b[i]`` of the same pair):

:func:`cohen_kappa`
    Cohen's κ (*Educ. Psychol. Meas.* 1960) and its weighted form (Cohen, *Psychol. Bull.* 1968):
    ``κ = 1 - Σ w_ij O_ij / Σ w_ij E_ij`` over the confusion matrix ``O`` (proportions) and the matrix
    ``E`` expected by chance from its margins; unweighted ``w_ij = [i != j]``, linear ``|i-j|`` and
    quadratic ``(i-j)^2``, where ``i``, ``j`` are the label *values* (grades): labels 0 and 2 are two
    apart even when no pair was labelled 1. scikit-learn's ``cohen_kappa_score`` with ``labels`` every
    integer from the lowest label to the highest is its test reference.
:func:`krippendorff_alpha_ordinal`
    Krippendorff's α for two coders and ordinal labels (Krippendorff, *Content Analysis*, 2004, ch. 11;
    "Computing Krippendorff's alpha-reliability", 2011): ``α = 1 - (n-1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck``
    over the coincidence matrix ``o`` (each pair counted both ways, ``n = 2N`` values, ``n_c`` its
    margins), with the ordinal distance ``δ_ck = Σ_{g=c..k} n_g - (n_c + n_k)/2``. The ``krippendorff``
    package is its test reference.
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
    "WEIGHTS",
    "binary",
    "cohen_kappa",
    "confusion_matrix",
    "kendall_tau_b",
    "krippendorff_alpha_ordinal",
    "swapped_pairs",
    "tau_ap",
]

WEIGHTS = ("none", "linear", "quadratic")
"""The weightings :func:`cohen_kappa` knows."""


def _pair(x: object, y: object, what: str) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"{what} must be two 1-d arrays of one length, got shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError(f"{what} must be finite numbers")
    return a, b


def _signs(v: np.ndarray) -> np.ndarray:
    """``sign(v[i] - v[j])`` for every pair ``i < j``, as one flat array."""
    i, j = np.triu_indices(len(v), k=1)
    return np.sign(v[i] - v[j])


def kendall_tau_b(x: object, y: object) -> float:
    """Kendall's τ-b between the systems' scores ``x`` and ``y`` (see the module docstring); NaN when
    fewer than two systems or either ranking is constant."""
    a, b = _pair(x, y, "scores")
    sa, sb = _signs(a), _signs(b)
    n0 = len(sa)
    tied_a = int(np.count_nonzero(sa == 0))
    tied_b = int(np.count_nonzero(sb == 0))
    if n0 == 0 or tied_a == n0 or tied_b == n0:
        return math.nan
    return float(np.sum(sa * sb)) / math.sqrt((n0 - tied_a) * (n0 - tied_b))


def tau_ap(reference: object, other: object) -> float:
    """Yilmaz et al.'s τ_AP of the ranking by ``other``'s scores against the ranking by ``reference``'s
    (higher score ranks higher; see the module docstring); NaN with fewer than two systems or any tie.

    ``tau_ap(ref, other)`` and ``tau_ap(other, ref)`` differ in general: the first weighs the top of
    ``other``'s ranking.
    """
    ref, oth = _pair(reference, other, "scores")
    n = len(ref)
    if n < 2 or len(np.unique(ref)) < n or len(np.unique(oth)) < n:
        return math.nan
    order = np.argsort(-oth, kind="stable")  # other's ranking, top first
    ranked = ref[order]
    total = 0.0
    for i in range(1, n):
        # systems above rank i in `other` that `reference` also puts above this one
        correct = int(np.count_nonzero(ranked[:i] > ranked[i]))
        total += correct / i
    return 2.0 * total / (n - 1) - 1.0


def swapped_pairs(x: object, y: object) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, of systems that ``x`` and ``y`` order in opposite directions."""
    a, b = _pair(x, y, "scores")
    i, j = np.triu_indices(len(a), k=1)
    swapped = np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) < 0
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


def cohen_kappa(a: object, b: object, weights: str = "none") -> float:
    """Cohen's κ between the labels ``a`` and ``b`` of the same items, ``weights`` ``"none"``,
    ``"linear"`` or ``"quadratic"`` (see the module docstring); NaN with no items, or when chance
    alone explains every agreement (both sets give every item one and the same label)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}")
    x, y = _labels(a, b)
    if x.size == 0:
        return math.nan
    low, high = int(min(x.min(), y.min())), int(max(x.max(), y.max()))
    k = high - low + 1  # every grade between the lowest and the highest, seen or not
    observed = np.zeros((k, k))
    np.add.at(observed, (x - low, y - low), 1.0)
    observed /= x.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grades = np.arange(k)
    distance = np.abs(grades[:, None] - grades[None, :]).astype(float)
    w = {"none": (distance > 0).astype(float), "linear": distance, "quadratic": distance**2}[weights]
    chance = float(np.sum(w * expected))
    if chance == 0.0:
        return math.nan
    return 1.0 - float(np.sum(w * observed)) / chance


def krippendorff_alpha_ordinal(a: object, b: object) -> float:
    """Krippendorff's ordinal α between two coders' labels ``a`` and ``b`` of the same items, none
    missing (see the module docstring); NaN with fewer than one item or a single label value overall."""
    x, y = _labels(a, b)
    labels, counts = confusion_matrix(x, y)
    if x.size == 0 or len(labels) < 2:
        return math.nan
    coincidence = (counts + counts.T).astype(float)  # each pair of values counted both ways
    margins = coincidence.sum(axis=1)
    n = margins.sum()
    cumulative = np.concatenate(([0.0], np.cumsum(margins)))
    c, k = np.meshgrid(np.arange(len(labels)), np.arange(len(labels)), indexing="ij")
    low, high = np.minimum(c, k), np.maximum(c, k)
    delta2 = (cumulative[high + 1] - cumulative[low] - (margins[c] + margins[k]) / 2.0) ** 2
    disagreement = float(np.sum(coincidence * delta2))
    chance = float(np.sum(np.outer(margins, margins) * delta2))
    return 1.0 - (n - 1.0) * disagreement / chance


def binary(labels: object, level: int = 1) -> np.ndarray:
    """1 for a label at least ``level`` (relevant, as trec_eval's relevance level reads it), else 0."""
    x = np.asarray(labels)
    return (x >= level).astype(np.int64)
