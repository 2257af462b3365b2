"""The fusion methods' numpy computations, from the candidates of a block of queries.

:class:`Candidates` is what every method computes from (as :class:`~irspec.evaluation.context.Context` is
for a metric): every document that any run retrieved for a query is a candidate, candidates are grouped
by query (``starts``) and, within a query, in descending docno order (trec_eval's tie order); each run
gives each candidate its normalised score (``scores``, ``NaN`` where the run did not retrieve it) and its
0-based rank (``ranks``, ``-1`` there). A kernel returns one fused score per candidate.

The normalisations (:func:`normalise`, :func:`borda_fill`) are ranx 0.3.21's, to the formula:

======================  ============================================================================
``min-max``             ``(s - min) / max(max - min, 1e-9)``
``min-max-inverted``    ``(max - s) / max(max - min, 1e-9)`` (for distances: the smallest is best)
``max``                 ``s / max(max, 1e-9)``
``sum``                 ``(s - min) / max(Σ (s_j - min), 1e-9)`` (ranx: ``sum - n * min``, the same real)
``zmuv``                ``(s - mean) / max(std, 1e-9)`` (the population standard deviation)
``rank``                ``1 - r / n`` (``r`` the 0-based rank, ``n`` the run's documents for the query)
``borda``               ``1 - r / c`` for a document the run ranks, ``0.5 - (n - 1) / (2c)`` for one it
                        does not (``c`` the query's candidates); every run then scores every candidate
``none``                the scores as they are
======================  ============================================================================

``sum`` and ``zmuv`` add the scores less the query's minimum (the mean is min + Σ (s_j - min) / n), which
ranx does not: on large scores close together its sums cancel and lose digits that these keep.

Ranks follow trec_eval's order: score descending, then docno descending (ranx's order of tied scores is
that of numba's unstable quicksort, which no user can predict). A run's ranks are those of its
normalised scores: the same as its raw scores' for every normalisation but ``min-max-inverted``
(reversed) and ``borda`` (the documents the run did not retrieve follow, in candidate order).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cmp_to_key
from typing import Any

import numpy as np

from irspec.frozen import frozen

__all__ = ["Candidates", "borda_fill", "normalise"]

FLOOR = 1e-9
"""ranx's smallest denominator: a run whose scores are all equal normalises to zeros, not NaN."""


@frozen
class Candidates:
    """The candidates of a block of queries (see the module's docstring): ``scores`` and ``ranks`` are
    ``(runs, candidates)``, ``starts`` the ``queries + 1`` offsets of each query's candidates, ``counts``
    ``(runs, queries)`` how many documents each run retrieved for each query (before ``borda`` gave
    every candidate a score). ``queries`` (the block's query ids, in order) and ``docnos`` (each
    candidate's) are sequences of strings (polars Series), for a method that learns from judgments."""

    scores: np.ndarray
    ranks: np.ndarray
    starts: np.ndarray
    counts: np.ndarray
    queries: Any = None
    docnos: Any = None

    @property
    def runs(self) -> int:
        """The number of runs fused."""
        return int(self.scores.shape[0])

    @property
    def present(self) -> np.ndarray:
        """``(runs, candidates)``: whether each run scores each candidate."""
        return self.ranks >= 0

    @property
    def hits(self) -> np.ndarray:
        """How many runs score each candidate (CombMNZ's multiplier)."""
        return self.present.sum(axis=0)

    @property
    def sizes(self) -> np.ndarray:
        """The number of candidates of each query."""
        return np.diff(self.starts)

    @property
    def query_of(self) -> np.ndarray:
        """Each candidate's query, as an index into the block's queries."""
        return np.repeat(np.arange(len(self.starts) - 1), self.sizes)

    def zeroed(self) -> np.ndarray:
        """``scores`` with 0 where a run lacks a candidate (CombSUM's reading of a missing score)."""
        return np.where(self.present, self.scores, 0.0)


# --- normalisations ------------------------------------------------------------------------------


def normalise(scores: np.ndarray, starts: np.ndarray, ranks: np.ndarray, norm: str) -> np.ndarray:
    """One run's scores normalised per query: ``scores`` grouped by query (``starts``, the offsets of
    the run's queries, each non-empty) with their 0-based ``ranks``. ``borda`` is :func:`borda_fill`'s,
    on the candidates: here it leaves the scores as they are."""
    if norm in ("none", "borda") or scores.size == 0:
        return scores
    lengths = np.diff(starts)
    heads = starts[:-1]
    if norm == "rank":
        return 1.0 - ranks / np.repeat(lengths, lengths)
    if norm == "max":
        return scores / np.maximum(np.repeat(np.maximum.reduceat(scores, heads), lengths), FLOOR)
    low = np.repeat(np.minimum.reduceat(scores, heads), lengths)
    # sum and zmuv add the scores less the query's minimum, not the scores: ranx's sum - n * min and
    # sum / n cancel on large scores close together (1e6 + 2e-7, 1e6 + 1e-7, 1e6, ...), losing most digits
    shifted = scores - low
    if norm == "sum":
        return shifted / np.maximum(np.repeat(np.add.reduceat(shifted, heads), lengths), FLOOR)
    if norm == "zmuv":
        deviation = shifted - np.repeat(np.add.reduceat(shifted, heads) / lengths, lengths)
        std = np.sqrt(np.add.reduceat(deviation * deviation, heads) / lengths)
        return deviation / np.maximum(np.repeat(std, lengths), FLOOR)
    if norm in ("min-max", "min-max-inverted"):
        high = np.repeat(np.maximum.reduceat(scores, heads), lengths)
        span = np.maximum(high - low, FLOOR)
        return (high - scores) / span if norm == "min-max-inverted" else shifted / span
    raise AssertionError(f"unknown normalisation {norm!r}")  # the spec's choices are checked at binding


def borda_fill(table: Candidates) -> Candidates:
    """ranx's borda normalisation on the candidates: a run's ranked document scores ``1 - r / c``, every
    other candidate ``0.5 - (n - 1) / (2c)`` and the ranks after the run's own, in candidate order."""
    sizes = np.repeat(table.sizes, table.sizes).astype(np.float64)
    query = table.query_of
    scores = np.empty_like(table.scores)
    ranks = table.ranks.copy()
    for i in range(table.runs):
        here = table.ranks[i] >= 0
        counts = table.counts[i][query]
        missing = ~here
        before = np.cumsum(missing) - missing  # missing candidates before this one, over the block
        first = np.concatenate(([0], np.cumsum(missing)))[table.starts[:-1]]  # ... before each query
        ranks[i] = np.where(here, table.ranks[i], counts + before - np.repeat(first, table.sizes))
        scores[i] = np.where(here, 1.0 - table.ranks[i] / sizes, 0.5 - (counts - 1) / (2.0 * sizes))
    return Candidates(scores, ranks, table.starts, table.counts, table.queries, table.docnos)


# --- the CombSUM family (Fox & Shaw 1993; Lee 1997) ---------------------------------------------


def _weights(table: Candidates, fusion: Any) -> np.ndarray:
    weights = fusion.get("weights")
    return np.ones(table.runs) if weights is None else np.asarray(weights, dtype=np.float64)


def comb_sum(table: Candidates, fusion: Any) -> np.ndarray:
    """Σ s_i over the runs that retrieved the document."""
    return table.zeroed().sum(axis=0)


def comb_max(table: Candidates, fusion: Any) -> np.ndarray:
    """max s_i over the runs that retrieved the document."""
    return np.where(table.present, table.scores, -np.inf).max(axis=0)


def comb_min(table: Candidates, fusion: Any) -> np.ndarray:
    """min s_i over the runs that retrieved the document."""
    return np.where(table.present, table.scores, np.inf).min(axis=0)


def comb_med(table: Candidates, fusion: Any) -> np.ndarray:
    """The median of s_i over the runs that retrieved the document."""
    return np.nanmedian(np.where(table.present, table.scores, np.nan), axis=0)


def comb_anz(table: Candidates, fusion: Any) -> np.ndarray:
    """CombSUM / h (h the number of runs that retrieved the document)."""
    return comb_sum(table, fusion) / table.hits


def comb_mnz(table: Candidates, fusion: Any) -> np.ndarray:
    """CombSUM × h."""
    return comb_sum(table, fusion) * table.hits


def comb_gmnz(table: Candidates, fusion: Any) -> np.ndarray:
    """CombSUM × h^γ."""
    return comb_sum(table, fusion) * table.hits.astype(np.float64) ** fusion.get("gamma")


def wsum(table: Candidates, fusion: Any) -> np.ndarray:
    """Σ w_i s_i."""
    return (_weights(table, fusion)[:, None] * table.zeroed()).sum(axis=0)


def wmnz(table: Candidates, fusion: Any) -> np.ndarray:
    """(Σ s_i) × (Σ w_i), both over the runs that retrieved the document."""
    w = np.where(table.present, _weights(table, fusion)[:, None], 0.0)
    return table.zeroed().sum(axis=0) * w.sum(axis=0)


def mixed(table: Candidates, fusion: Any) -> np.ndarray:
    """(Σ w_i s_i) × √h."""
    return wsum(table, fusion) * np.sqrt(table.hits)


# --- rank-based ----------------------------------------------------------------------------------


def _by_rank(table: Candidates, value: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``value`` of the 1-based ranks summed over the runs that rank the document."""
    ranks = np.where(table.present, table.ranks, 0) + 1.0  # a lacking run's 1 is never used
    return np.where(table.present, value(ranks), 0.0).sum(axis=0)


def rrf(table: Candidates, fusion: Any) -> np.ndarray:
    """Σ 1 / (k + r_i) with r_i the 1-based rank."""
    k = fusion.get("k")
    return _by_rank(table, lambda r: 1.0 / (k + r))


def _isr_sum(table: Candidates) -> np.ndarray:
    return _by_rank(table, lambda r: 1.0 / r**2)


def isr(table: Candidates, fusion: Any) -> np.ndarray:
    """h × Σ 1 / r_i²."""
    return _isr_sum(table) * table.hits


def log_isr(table: Candidates, fusion: Any) -> np.ndarray:
    """log(h) × Σ 1 / r_i²."""
    return _isr_sum(table) * np.log(table.hits)


def logn_isr(table: Candidates, fusion: Any) -> np.ndarray:
    """log(h + σ) × Σ 1 / r_i²."""
    return _isr_sum(table) * np.log(table.hits + fusion.get("sigma"))


def rbc(table: Candidates, fusion: Any) -> np.ndarray:
    """Σ (1 - φ) φ^(r_i - 1)."""
    phi = fusion.get("phi")
    return _by_rank(table, lambda r: (1.0 - phi) * phi ** (r - 1.0))


def bordafuse(table: Candidates, fusion: Any) -> np.ndarray:
    """Σ w_i b_i with b_i = c - r_i + 1 for a ranked document, (c - n_i + 1) / 2 for one run i lacks."""
    sizes = np.repeat(table.sizes, table.sizes).astype(np.float64)
    counts = table.counts[:, table.query_of]
    points = np.where(table.present, sizes - table.ranks, (sizes - counts + 1) / 2.0)
    return (_weights(table, fusion)[:, None] * points).sum(axis=0)


def condorcet(table: Candidates, fusion: Any) -> np.ndarray:
    """c - p, p the document's 0-based place when the candidates are sorted by pairwise majority."""
    weights = [float(w) for w in _weights(table, fusion)]
    # A document a run lacks is below every one it ranks (ranx's 1,000,000th place), and between two
    # the run lacks, the run's vote goes to the second (ranx's comparison "x before y" is strict).
    places = np.where(table.present, table.ranks, np.iinfo(np.int64).max).T
    out = np.empty(table.scores.shape[1])
    for start, stop in zip(table.starts[:-1].tolist(), table.starts[1:].tolist(), strict=True):
        rows = places[start:stop].tolist()

        def order(x: int, y: int, rows: list = rows) -> int:
            # Each side's votes added apart, in the runs' order, as ranx adds them: the total minus one
            # side rounds otherwise, and weights whose two sides are equal as reals (0.2 + 0.7 and 0.9)
            # would tie in ranx and not here, or the other way round.
            ahead = behind = 0.0
            for w, a, b in zip(weights, rows[x], rows[y], strict=True):
                if a < b:
                    ahead += w
                else:
                    behind += w
            return -1 if ahead >= behind else 1

        ranked = sorted(range(stop - start), key=cmp_to_key(order))
        size = stop - start
        for place, candidate in enumerate(ranked):
            out[start + candidate] = size - place
    return out
