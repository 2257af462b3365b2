"""Kernels of the counts (definitions in :mod:`irspec.builtin.counts`)."""

from __future__ import annotations

import numpy as np

from irspec.evaluation.context import Context
from irspec.spec.registry import Metric


def num_q(ctx: Context, metric: Metric) -> np.ndarray:
    """1 per evaluated query."""
    return np.ones(ctx.nq)


def num_ret(ctx: Context, metric: Metric) -> np.ndarray:
    """Documents retrieved."""
    return ctx.n.astype(np.float64)


def num_rel(ctx: Context, metric: Metric) -> np.ndarray:
    """Relevant documents in the qrels."""
    return ctx.R(ctx.level(metric)).astype(np.float64)


def num_rel_ret(ctx: Context, metric: Metric) -> np.ndarray:
    """Relevant documents retrieved."""
    return ctx.count_relevant(ctx.level(metric)).astype(np.float64)


def num_nonrel_judged_ret(ctx: Context, metric: Metric) -> np.ndarray:
    """Judged non-relevant documents retrieved."""
    return ctx.count(ctx.judged_nonrelevant(ctx.level(metric))).astype(np.float64)
