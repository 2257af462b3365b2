"""The computations of irspec-online's metrics (declarations in :mod:`irspec_online.plugin`).

Each kernel takes the :class:`~irspec_online.records.InteractionLog` and the bound metric and returns one
float per query issue (row of the log). A rate over query issues gives every row its 0 or 1; a rate over
sessions (or time units) gives its value to the first row of each session (unit) and NaN to the others,
so that the mean irspec reports, which skips NaN, is the rate over sessions (units).

Every kernel depends on the rows of one group only: a session's, or (:func:`group_seconds`) a time
unit's. Run on a part of a log that holds whole groups, a kernel gives exactly the values it gives those
rows in the whole log; this is how :mod:`irspec_online.spark` runs these same functions on each group of a
Spark DataFrame.
"""

from __future__ import annotations

import pkgutil
from typing import Any

import numpy as np

from irspec import EvaluationError
from irspec_online.counterfactual import values
from irspec_online.interleaving import implementation, outcomes
from irspec_online.records import InteractionLog

SECONDS = {"minute": 60.0, "hour": 3600.0, "day": 86400.0}


def kernel_of(metric: Any) -> Any:
    """The kernel function of a bound metric (its definition's ``compute``, imported when a string)."""
    compute = metric.definition.compute
    return compute if callable(compute) else pkgutil.resolve_name(compute)


def bound_kernel(metric: Any) -> Any:
    """The metric's kernel as a function of the log alone, with what it looks up in irspec's registry (an
    interleaving method's implementation) looked up here: for a Spark worker, another process, whose
    registry may lack the plugin's methods (plugins not loaded there, or registered in the driver alone)."""
    kernel = kernel_of(metric)
    if kernel is interleaving:
        method = implementation(metric.get("method"))
        return lambda log: outcomes(log, method)
    return lambda log: kernel(log, metric)


def group_seconds(metric: Any) -> float | None:
    """The length of the time unit whose rows a metric's value depends on, or None for one session's."""
    if metric.definition.name == "QueriesPer":
        return SECONDS.get(metric.get("unit"))
    return None


def _per_session(log: InteractionLog, row_values: np.ndarray) -> np.ndarray:
    """A session's value (any of its rows true) on its first row; NaN on the others."""
    hit = np.bincount(log.session, weights=row_values.astype(np.float64), minlength=len(log.sessions)) > 0
    return np.where(log.first_in_session, hit[log.session].astype(np.float64), np.nan)


def _clicked(log: InteractionLog, k: int | None = None) -> np.ndarray:
    """Per row: was a result clicked (one ranked <= k)."""
    clicked = log.first_click > 0
    return clicked if k is None else clicked & (log.first_click <= k)


def ctr(log: InteractionLog, metric: Any) -> np.ndarray:
    """1 for a query issue with at least one click (within the top k), else 0."""
    return _clicked(log, metric.get("k")).astype(np.float64)


def zero_result(log: InteractionLog, metric: Any) -> np.ndarray:
    """1 for a query issue that showed no results, else 0."""
    return (log.n_results == 0).astype(np.float64)


def abandonment(log: InteractionLog, metric: Any) -> np.ndarray:
    """Per session (on its first row): 1 when none of its query issues got a click."""
    return 1.0 - _per_session(log, _clicked(log))  # NaN stays NaN off the first rows


def session_success(log: InteractionLog, metric: Any) -> np.ndarray:
    """Per session (on its first row): 1 when some click has a dwell time of at least ``dwell`` seconds."""
    with np.errstate(invalid="ignore"):
        satisfied = log.best_dwell >= metric.get("dwell")  # NaN (no known dwell) is never >=
    return _per_session(log, satisfied)


def queries_per(log: InteractionLog, metric: Any) -> np.ndarray:
    """Per session or per active time unit (on its first row): its number of query issues."""
    seconds = group_seconds(metric)
    if seconds is None:
        group = log.session
    else:
        # Calendar units in UTC: a day runs from midnight to midnight, UTC.
        _, group = np.unique(np.floor(log.time / seconds), return_inverse=True)
        group = group.reshape(-1)
    counts = np.bincount(group)
    _, first = np.unique(group, return_index=True)
    out = np.full(len(log), np.nan)
    out[first] = counts[group[first]]
    return out


def interleaving(log: InteractionLog, metric: Any) -> np.ndarray:
    """Per interleaved query issue with a click, the preference its clicks express for ``b`` over ``a``
    (+1, -1, 0; probabilistic interleaving's expectation), under the metric's method; NaN on the others."""
    return outcomes(log, metric.get("method"))


def estimate(log: InteractionLog, metric: Any) -> np.ndarray:
    """Per query issue, the counterfactual estimator's term (IPS, ClippedIPS, SNIPS: their mean is the
    estimate of the new ranking's measure), NaN for one the estimate leaves out."""
    if log.estimating is None:
        raise EvaluationError(
            f"{metric} estimates a ranking from the log: give it (irspec online --counterfactual "
            "RUN; a plan's online: counterfactual: run; options={'online': {'counterfactual': ...}})"
        )
    return values(log, metric, log.estimating.theta)[0]
