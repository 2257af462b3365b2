"""Kernels of the per-user popularity-bias metrics (definitions in :mod:`irspec.builtin.popularity`).

They read each user's list from the context's ``"recommendations"`` input (``items``: the top k of
every user of the test matrix by row number, ``-1`` padding) and the items' training popularity from
its ``"popularity"`` input (``counts``: users per item; ``users``: users with a training interaction),
both given by :mod:`irspec.recsys.matrices`. A user's query id is its row number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irspec.builtin.kernels.propensity import _numbers
from irspec.evaluation.context import Context
from irspec.spec.registry import Metric


def arp(ctx: Context, metric: Metric) -> np.ndarray:
    """ARP@k: the mean training popularity of each user's top k."""
    counts = popularity_input(ctx, metric).counts.astype(np.float64)
    return _list_mean(ctx, metric, counts)


def aplt(ctx: Context, metric: Metric) -> np.ndarray:
    """APLT@k: the share of each user's top k in the long tail."""
    counts = popularity_input(ctx, metric).counts
    return _list_mean(ctx, metric, (~head_items(counts, metric.get("head"))).astype(np.float64))


def novelty(ctx: Context, metric: Metric) -> np.ndarray:
    """Novelty@k: the mean self-information -log2(φ(i)/|U|) of each user's top k."""
    data = popularity_input(ctx, metric)
    # a cold item counts as one user's, so that its self-information is finite (RecTools' convention)
    return _list_mean(ctx, metric, -np.log2(np.maximum(data.counts, 1) / max(data.users, 1)))


def head_items(counts: np.ndarray, share: float) -> np.ndarray:
    """Which items are in the head: taken in decreasing popularity until they hold ``share`` of all
    interactions, ties with the last taken included (an item is in when the items strictly more popular
    than it hold less than ``share``)."""
    total = counts.sum()
    ascending = np.sort(counts)
    running = np.concatenate(([0], np.cumsum(ascending)))
    more_popular = total - running[np.searchsorted(ascending, counts, side="right")]
    return (more_popular < share * total) & (counts > 0)


def lists(ctx: Context, metric: Metric, data: Any) -> np.ndarray:
    """The top k of each of the context's users (rows in the context's order), ``-1`` padding."""
    users = _numbers(list(ctx.query_ids), "user", metric)
    k = metric.get("k")
    return data.items[users, :k]


def _list_mean(ctx: Context, metric: Metric, per_item: np.ndarray) -> np.ndarray:
    """Each user's mean of ``per_item`` over the items of their top k (NaN for an empty list)."""
    top = lists(ctx, metric, recommendations(ctx, metric))
    present = top >= 0
    values = np.where(present, per_item[np.where(present, top, 0)], 0.0)
    n = present.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, values.sum(axis=1) / n, np.nan)


def recommendations(ctx: Context, metric: Metric) -> Any:
    """The context's ``"recommendations"`` input: every user's whole list, which only
    :func:`irspec.evaluate_topk` and :func:`irspec.evaluate_scores` give."""
    return ctx.input(
        "recommendations",
        f"{metric} reads each user's whole list: evaluate it with irspec.evaluate_topk or irspec.evaluate_scores, "
        "irspec eval --recsys or a plan's recsys section",
    )


def popularity_input(ctx: Context, metric: Metric) -> Any:
    """The context's ``"popularity"`` input: the items' training users (``popularity=``)."""
    return ctx.input(
        "popularity",
        f"{metric} weighs items by their training popularity: give the training interactions "
        "(popularity=train_matrix to irspec.evaluate_topk or irspec.evaluate_scores, --popularity TRAIN to "
        "irspec eval --recsys, recsys.popularity in a plan)",
    )
