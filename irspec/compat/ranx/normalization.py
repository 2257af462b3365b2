"""ranx's ``ranx.normalization``: a run's scores normalised per query, as new runs of the same name
(irspec's fusion normalisations; see :func:`irspec.compat.ranx.normalize`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from irspec.compat.ranx._fusing import check_norm, normalize
from irspec.compat.ranx._structures import Run

__all__ = ["borda_norm", "max_norm", "min_max_norm", "norm_switch", "rank_norm", "sum_norm", "zmuv_norm"]


def max_norm(run: Run) -> Run:
    """Scores divided by the query's largest."""
    return normalize(run, "max")


def min_max_norm(run: Run, invert: bool = False) -> Run:
    """Scores mapped to [0, 1] by the query's smallest and largest (``invert``: 1 for the smallest)."""
    return normalize(run, "min-max-inverted" if invert else "min-max")


def sum_norm(run: Run) -> Run:
    """Scores shifted by the query's smallest and divided by their sum."""
    return normalize(run, "sum")


def zmuv_norm(run: Run) -> Run:
    """Scores standardised: zero mean, unit variance per query."""
    return normalize(run, "zmuv")


def rank_norm(run: Run) -> Run:
    """Scores replaced by 1 − (rank − 1) / the query's number of documents."""
    return normalize(run, "rank")


def borda_norm(runs: list[Run]) -> list[Run]:
    """Each run's Borda scores over the documents any of ``runs`` retrieved for the query."""
    from irspec.compat.ranx._fusing import borda

    return borda(runs)


def norm_switch(method: str = "min-max") -> Callable[[Any], Any]:
    """The normalisation function of ``method`` (a ``ValueError`` for an unknown one)."""
    found: dict[str, Callable[[Any], Any]] = {
        "borda": borda_norm,
        "max": max_norm,
        "min-max": min_max_norm,
        "min-max-inverted": lambda run: min_max_norm(run, invert=True),
        "rank": rank_norm,
        "sum": sum_norm,
        "zmuv": zmuv_norm,
    }
    return found[check_norm(method)]
