"""The computations of the fusion methods that learn (:mod:`irspec.builtin.fusion_learning`): each has a
``fit`` (the training queries' :class:`~irspec.builtin.kernels.fusion.Candidates` and their
:class:`Judged` in, the method's state out: one array per run) and a kernel (``compute(table, fusion,
state)``: one fused score per candidate).

Everything here reads a run's **hit list** for a query: its documents in rank order (the ranks of
:class:`~irspec.builtin.kernels.fusion.Candidates`, trec_eval's order), 1 for a relevant one (a judged
label of 1 or more, ranx's ``rel_lvl=1``), 0 for any other. A run's list for a query has ``n`` documents,
``p`` is a 0-based position in it, ``Q`` the number of training queries (a training query a run lacks is
an empty list, as ranx reads it). The formulas are ranx 0.3.21's, and :mod:`tests.test_fusion_ranx`
holds them to it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irspec.builtin.kernels.fusion import Candidates
from irspec.frozen import frozen

__all__ = [
    "BAYES_CUTS",
    "SEGFUSE_BOUNDS",
    "Judged",
    "bayesfuse",
    "bayesfuse_fit",
    "hit_lists",
    "mapfuse",
    "mapfuse_fit",
    "posfuse",
    "positions_fit",
    "probfuse",
    "probfuse_fit",
    "segfuse",
    "segfuse_fit",
    "slidefuse",
]

SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
"""SegFuse's segments: sizes ``10 · 2^(k-1) - 5`` (5, 10, 20, ... 2560), so positions 0-4, 5-14, ...
5114; a document ranked below 5,115 scores 0."""

BAYES_CUTS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)
"""BayesFuse's rank buckets (ranx's): positions 0-4, 5-9, 10-14, 15-19, 20-29, 30-99, ... 500-999."""

FLOOR_ODDS = float(np.log(0.001 / 0.999))
"""BayesFuse's log odds of a document a run did not retrieve, and of a bucket with no relevant document."""


@frozen
class Judged:
    """The judgments of the training queries' candidates: ``relevant`` (per candidate, a label of 1 or
    more) and ``totals`` (per query, how many documents the qrels judge relevant, retrieved or not)."""

    relevant: np.ndarray
    totals: np.ndarray


def lengths(table: Candidates) -> np.ndarray:
    """``(runs, queries)``: how many documents each run ranks for each query (every candidate after the
    borda normalisation, which ranks them all)."""
    if table.scores.shape[1] == 0:
        return np.zeros((table.runs, len(table.starts) - 1), dtype=np.int64)
    return np.add.reduceat(table.present.astype(np.int64), table.starts[:-1], axis=1)


def hit_lists(table: Candidates, judged: Judged, run: int) -> tuple[np.ndarray, np.ndarray]:
    """Run ``run``'s hit lists, ``(queries, longest)`` padded with 0, and their lengths."""
    sizes = lengths(table)[run]
    hits = np.zeros((len(sizes), int(sizes.max(initial=0))))
    here = table.present[run]
    hits[table.query_of[here], table.ranks[run][here]] = judged.relevant[here]
    return hits, sizes


def _per_run(table: Candidates, judged: Judged, fit: Any) -> tuple[np.ndarray, ...]:
    return tuple(fit(*hit_lists(table, judged, i)) for i in range(table.runs))


def _combsum(table: Candidates, score: Any) -> np.ndarray:
    """Σ over the runs that rank a candidate of ``score(run, positions, list lengths, scores)``."""
    query = table.query_of
    sizes = lengths(table)
    total = np.zeros(table.scores.shape[1])
    for i in range(table.runs):
        here = table.present[i]
        total[here] += score(i, table.ranks[i][here], sizes[i][query[here]], table.scores[i][here])
    return total


# --- ProbFuse (Lillis, Toolan, Collier & Dunnion, SIGIR 2006) -----------------------------------------


def probfuse_fit(table: Candidates, judged: Judged, fusion: Any) -> tuple[np.ndarray, ...]:
    """Per run, P_k = (1/Q) Σ_q (relevant in segment k of q's list) / (documents in it), the list of
    ``n`` cut into ``segments`` segments of ceil(n / segments) documents (the last ones shorter or empty;
    an empty segment adds nothing)."""
    x = int(fusion.get("segments"))

    def fit(hits: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        width = -(-sizes // x)  # ceil
        p = np.arange(hits.shape[1])[None, :]
        valid = p < sizes[:, None]
        segment = p // np.maximum(width, 1)[:, None]
        size = np.minimum(width[:, None], sizes[:, None] - segment * width[:, None])
        share = np.where(valid, hits / np.maximum(size, 1), 0.0)
        return np.bincount(segment[valid], weights=share[valid], minlength=x)[:x] / max(len(sizes), 1)

    return _per_run(table, judged, fit)


def probfuse(table: Candidates, fusion: Any, state: tuple[np.ndarray, ...]) -> np.ndarray:
    """Σ_i P_k / (k + 1), k the segment of the document's position in run i's list (of ceil(n / x))."""

    def score(i: int, p: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        k = p // -(-n // len(state[i]))
        return state[i][k] / (k + 1)

    return _combsum(table, score)


# --- SegFuse (Shokouhi, ECIR 2007) -----------------------------------------------------------------------


def segfuse_fit(table: Candidates, judged: Judged, fusion: Any) -> tuple[np.ndarray, ...]:
    """Per run, P_k = (1/Q) Σ_q (relevant in segment k of q's list) / (the segment's nominal size)."""

    def fit(hits: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        width = min(hits.shape[1], int(SEGFUSE_BOUNDS[-1]))
        segment = np.searchsorted(SEGFUSE_BOUNDS, np.arange(width), side="right") - 1
        found = np.bincount(segment, weights=hits[:, :width].sum(axis=0), minlength=len(SEGFUSE_BOUNDS) - 1)
        return found / np.diff(SEGFUSE_BOUNDS) / max(len(sizes), 1)

    return _per_run(table, judged, fit)


def segfuse(table: Candidates, fusion: Any, state: tuple[np.ndarray, ...]) -> np.ndarray:
    """Σ_i P_k × (s_i + 1), k the segment of the document's position in run i, s_i its normalised score."""

    def score(i: int, p: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        inside = p < SEGFUSE_BOUNDS[-1]
        k = np.searchsorted(SEGFUSE_BOUNDS, np.where(inside, p, 0), side="right") - 1
        return np.where(inside, state[i][k], 0.0) * (s + 1.0)

    return _combsum(table, score)


# --- PosFuse and SlideFuse (Lillis et al., SIGIR 2010; ECIR 2008) ---------------------------------------


def positions_fit(table: Candidates, judged: Judged, fusion: Any) -> tuple[np.ndarray, ...]:
    """Per run and position p, P_p = (relevant documents at p) / (training queries whose list reaches p)."""

    def fit(hits: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        reach = (np.arange(hits.shape[1])[None, :] < sizes[:, None]).sum(axis=0)
        return hits.sum(axis=0) / np.maximum(reach, 1)

    return _per_run(table, judged, fit)


def posfuse(table: Candidates, fusion: Any, state: tuple[np.ndarray, ...]) -> np.ndarray:
    """Σ_i P_p, p the document's position in run i (0 beyond the training lists' longest)."""

    def score(i: int, p: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        padded = np.append(state[i], 0.0)  # positions the training lists never reached score 0
        return padded[np.minimum(p, len(state[i]))]

    return _combsum(table, score)


def slidefuse(table: Candidates, fusion: Any, state: tuple[np.ndarray, ...]) -> np.ndarray:
    """Σ_i the mean of P_j over the window j = max(p - w, 0) .. min(p + w, n - 1) of run i's list."""
    w = int(fusion.get("w"))

    def score(i: int, p: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        longest = int(n.max(initial=0))
        probs = np.zeros(max(longest, len(state[i])))
        probs[: len(state[i])] = state[i]  # positions the training lists never reached count as 0
        sums = np.concatenate(([0.0], np.cumsum(probs)))
        a, b = np.maximum(p - w, 0), np.minimum(p + w, n - 1)
        return (sums[b + 1] - sums[a]) / (b - a + 1)

    return _combsum(table, score)


# --- MAPFuse (Lillis et al., SIGIR 2010) -----------------------------------------------------------------


def mapfuse_fit(table: Candidates, judged: Judged, fusion: Any) -> tuple[np.ndarray, ...]:
    """Per run, its mean average precision over the training queries: AP_q = Σ_{p relevant} precision
    at p+1 / R_q (R_q the query's relevant documents in the qrels; 0 when it has none)."""
    totals = judged.totals.astype(np.float64)

    def fit(hits: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        precision = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1)
        found = (precision * hits).sum(axis=1)
        ap = np.divide(found, totals, out=np.zeros_like(found), where=totals > 0)
        return np.array([ap.mean() if len(ap) else 0.0])

    return _per_run(table, judged, fit)


def mapfuse(table: Candidates, fusion: Any, state: tuple[np.ndarray, ...]) -> np.ndarray:
    """Σ_i MAP_i / (p + 1), p the document's position in run i."""
    return _combsum(table, lambda i, p, n, s: state[i][0] / (p + 1.0))


# --- BayesFuse (Aslam & Montague, SIGIR 2001) -------------------------------------------------------------


def bayesfuse_fit(table: Candidates, judged: Judged, fusion: Any) -> tuple[np.ndarray, ...]:
    """Per run and rank bucket b (:data:`BAYES_CUTS`), the log odds log(P_b / (1 - P_b)), P_b the mean
    over the training queries of the bucket's precision (a P_b of 0 read as 0.001, a 1 - P_b of 0 too)."""

    def fit(hits: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        width = min(hits.shape[1], int(BAYES_CUTS[-1]))
        bucket = np.searchsorted(BAYES_CUTS, np.arange(width), side="right") - 1
        found = np.bincount(bucket, weights=hits[:, :width].sum(axis=0), minlength=len(BAYES_CUTS) - 1)
        precision = found / np.diff(BAYES_CUTS) / max(len(sizes), 1)
        precision = np.where(precision == 0, 0.001, precision)
        against = np.where(1 - precision == 0, 0.001, 1 - precision)
        return np.log(precision / against)

    return _per_run(table, judged, fit)


def bayesfuse(table: Candidates, fusion: Any, state: tuple[np.ndarray, ...]) -> np.ndarray:
    """Σ_i O_i, O_i the log odds of the bucket of the document's position in run i, or log(0.001/0.999)
    when run i did not retrieve it or ranks it below 1,000."""
    total = np.full(table.scores.shape[1], FLOOR_ODDS * table.runs)

    def score(i: int, p: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        inside = p < BAYES_CUTS[-1]
        b = np.searchsorted(BAYES_CUTS, np.where(inside, p, 0), side="right") - 1
        return np.where(inside, state[i][b], FLOOR_ODDS) - FLOOR_ODDS

    return total + _combsum(table, score)
