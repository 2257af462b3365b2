"""Kernel of bpref and bpref-X (definitions in :mod:`irspec.builtin.bpref`)."""

from __future__ import annotations

import numpy as np

from irspec.evaluation.context import Context, safe_divide
from irspec.spec.registry import Metric


def bpref(ctx: Context, metric: Metric) -> np.ndarray:
    """(1/R) Σ_{r relevant retrieved} (1 − min(k_r, X) / min(N, X)), terms 1 when min(N, X) = 0."""
    level = ctx.level(metric)
    rows, _ = ctx.relevant_rows(level)
    R = ctx.R(level).astype(np.float64)
    N = ctx.N(level).astype(np.float64)
    X = np.asarray(ctx.value(metric, "nonrel"), dtype=np.float64)
    # Per query, nonrel=10/R may be inf (R = 0: every judged non-relevant document counts, as for any
    # X >= N); a NaN (0/0) or X <= 0 counts none. fmax takes 0 over NaN.
    X = np.broadcast_to(np.fmax(X, 0.0), (ctx.nq,))
    # judged non-relevant documents ranked above each row (the row itself is relevant, so not counted)
    above = ctx.before(np.flatnonzero(ctx.judged_nonrelevant(level)), rows).astype(np.float64)
    seg, _ = ctx.relevant_places(level)
    cap = np.minimum(N, X)[seg]
    term = np.where(cap > 0, 1.0 - safe_divide(np.minimum(above, X[seg]), cap), 1.0)
    return safe_divide(np.bincount(seg, weights=term, minlength=ctx.nq), R)
