"""ranx's ``ranx.fusion``: each fusion method as a function of runs (already normalised, as ranx's
functions take them) and its parameters, returning the fused :class:`Run` under ranx's name for it,
and the training functions of the methods that learn (one array per run). Each is
:func:`irspec.compat.ranx.fuse` without normalisation, so irspec's fusion computes it."""

from __future__ import annotations

from typing import Any

from irspec.compat.ranx._fusing import fuse, train
from irspec.compat.ranx._structures import Qrels, Run

__all__ = [
    "bayesfuse", "bayesfuse_train", "bordafuse", "comb_anz", "comb_gmnz", "comb_max", "comb_med", "comb_min",
    "comb_mnz", "comb_sum", "condorcet", "isr", "log_isr", "logn_isr", "mapfuse", "mapfuse_train", "mixed",
    "posfuse", "posfuse_train", "probfuse", "probfuse_train", "rbc", "rrf", "segfuse", "segfuse_train",
    "slidefuse", "slidefuse_train", "weighted_bordafuse", "weighted_condorcet", "wmnz", "wsum",
]  # fmt: skip


def _fused(runs: list[Run], method: str, name: str, **params: Any) -> Run:
    run = fuse(runs, None, method, params)
    run.name = name
    return run


def comb_sum(runs: list[Run], name: str = "comb_sum") -> Run:
    """CombSUM: the sum of a document's scores."""
    return _fused(runs, "sum", name)


def comb_max(runs: list[Run], name: str = "comb_max") -> Run:
    """CombMAX: a document's largest score."""
    return _fused(runs, "max", name)


def comb_min(runs: list[Run], name: str = "comb_min") -> Run:
    """CombMIN: a document's smallest score."""
    return _fused(runs, "min", name)


def comb_med(runs: list[Run], name: str = "comb_med") -> Run:
    """CombMED: the median of a document's scores."""
    return _fused(runs, "med", name)


def comb_anz(runs: list[Run], name: str = "comb_anz") -> Run:
    """CombANZ: the sum of a document's scores over the number of runs that retrieved it."""
    return _fused(runs, "anz", name)


def comb_mnz(runs: list[Run], name: str = "comb_mnz") -> Run:
    """CombMNZ: the sum of a document's scores times the number of runs that retrieved it."""
    return _fused(runs, "mnz", name)


def comb_gmnz(runs: list[Run], gamma: float, name: str = "comb_gmnz") -> Run:
    """CombGMNZ: CombMNZ with that number raised to ``gamma``."""
    return _fused(runs, "gmnz", name, gamma=gamma)


def rrf(runs: list[Run], k: int = 60, name: str = "rrf") -> Run:
    """Reciprocal rank fusion: the sum of 1 / (k + rank)."""
    return _fused(runs, "rrf", name, k=k)


def isr(runs: list[Run], name: str = "isr") -> Run:
    """Inverse square rank: the number of runs over the sum of squared ranks."""
    return _fused(runs, "isr", name)


def log_isr(runs: list[Run], name: str = "log_isr") -> Run:
    """Log inverse square rank."""
    return _fused(runs, "log_isr", name)


def logn_isr(runs: list[Run], sigma: float = 0.01, name: str = "logn_isr") -> Run:
    """LogN inverse square rank, with ``sigma``."""
    return _fused(runs, "logn_isr", name, sigma=sigma)


def rbc(runs: list[Run], phi: float, name: str = "rbc") -> Run:
    """Rank-biased centroids, of persistence ``phi``."""
    return _fused(runs, "rbc", name, phi=phi)


def bordafuse(runs: list[Run], name: str = "bordafuse") -> Run:
    """BordaFuse: the sum of Borda counts."""
    return _fused(runs, "bordafuse", name)


def weighted_bordafuse(runs: list[Run], weights: list[float], name: str = "weighted_bordafuse") -> Run:
    """Weighted BordaFuse."""
    return _fused(runs, "w_bordafuse", name, weights=weights)


def condorcet(runs: list[Run], name: str = "condorcet") -> Run:
    """Condorcet fusion: documents ordered by pairwise majorities."""
    return _fused(runs, "condorcet", name)


def weighted_condorcet(runs: list[Run], weights: list[float], name: str = "weighted_condorcet") -> Run:
    """Weighted Condorcet fusion."""
    return _fused(runs, "w_condorcet", name, weights=weights)


def wsum(runs: list[Run], weights: list[float], name: str = "weighted_sum") -> Run:
    """The weighted sum of a document's scores."""
    return _fused(runs, "wsum", name, weights=weights)


def wmnz(runs: list[Run], weights: list[float], name: str = "wmnz") -> Run:
    """Weighted CombMNZ."""
    return _fused(runs, "wmnz", name, weights=weights)


def mixed(runs: list[Run], weights: list[float], name: str = "mixed") -> Run:
    """Mixed: weighted sum and rank fusion mixed."""
    return _fused(runs, "mixed", name, weights=weights)


def probfuse(runs: list[Run], probs: list[Any], name: str = "probfuse") -> Run:
    """ProbFuse with the segment probabilities of :func:`probfuse_train`."""
    return _fused(runs, "probfuse", name, probs=probs)


def probfuse_train(qrels: Qrels, runs: list[Run], n_segments: int) -> tuple[Any, ...]:
    """ProbFuse's probabilities of relevance of each run's ``n_segments`` segments."""
    return train(qrels, runs, f"probfuse(norm=none, segments={n_segments})")


def segfuse(runs: list[Run], probs: list[Any], name: str = "segfuse") -> Run:
    """SegFuse with the probabilities of :func:`segfuse_train`."""
    return _fused(runs, "segfuse", name, probs=probs)


def segfuse_train(qrels: Qrels, runs: list[Run]) -> tuple[Any, ...]:
    """SegFuse's probabilities of relevance of each run's segments (of growing size)."""
    return train(qrels, runs, "segfuse(norm=none)")


def slidefuse(runs: list[Run], probs: list[Any], w: int, name: str = "slidefuse") -> Run:
    """SlideFuse with the probabilities of :func:`slidefuse_train` and a window of ``w``."""
    return _fused(runs, "slidefuse", name, probs=probs, w=w)


def slidefuse_train(qrels: Qrels, runs: list[Run]) -> tuple[Any, ...]:
    """SlideFuse's probability of relevance of each position of each run (its window applies later)."""
    return train(qrels, runs, "slidefuse(norm=none, w=1)")  # the window is not learned


def posfuse(runs: list[Run], probs: list[Any], name: str = "posfuse") -> Run:
    """PosFuse with the probabilities of :func:`posfuse_train`."""
    return _fused(runs, "posfuse", name, probs=probs)


def posfuse_train(qrels: Qrels, runs: list[Run]) -> tuple[Any, ...]:
    """PosFuse's probability of relevance of each position of each run."""
    return train(qrels, runs, "posfuse(norm=none)")


def mapfuse(runs: list[Run], map_scores: list[float], name: str = "mapfuse") -> Run:
    """MAPFuse with each run's MAP of :func:`mapfuse_train`."""
    return _fused(runs, "mapfuse", name, map_scores=map_scores)


def mapfuse_train(qrels: Qrels, runs: list[Run]) -> list[float]:
    """Each run's MAP on ``qrels``."""
    return [float(v[0]) for v in train(qrels, runs, "mapfuse(norm=none)")]


def bayesfuse(runs: list[Run], log_odds: list[Any], name: str = "bayesfuse") -> Run:
    """BayesFuse with the log odds of :func:`bayesfuse_train`."""
    return _fused(runs, "bayesfuse", name, log_odds=log_odds)


def bayesfuse_train(qrels: Qrels, runs: list[Run]) -> tuple[Any, ...]:
    """BayesFuse's log odds of relevance of each run's segments."""
    return train(qrels, runs, "bayesfuse(norm=none)")
