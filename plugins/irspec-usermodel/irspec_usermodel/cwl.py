"""The C/W/L measures' computations (declarations and formulas in :mod:`irspec_usermodel.plugin`).

Every C/W/L measure is a user model given by its continuation probability C(i): the chance that a user
who has just examined rank i goes on to rank i + 1. From C alone follow the weight of each rank,
W(i) = Π_{j<i} C(j) / Σ_{m=1..N} Π_{j<m} C(j) (the share of the user's attention rank i gets), and the
chance of stopping at rank i, L(i) = Π_{j<i} C(j) · (1 − C(i)). A measure reports the expected utility
per document examined, EU = Σ_i W(i) g(i), or the expected total utility, ETU = Σ_i L(i) Σ_{j<=i} g(j).

The conventions are cwl_eval's (Azzopardi, Thomas & Moffat, SIGIR 2019), as ir_measures calls it:

- gains: a label is clipped below at 0, then to [min_rel, max_rel], then scaled to
  (label − min_rel) / (max_rel − min_rel); an unjudged document gains 0;
- every document costs 1, so a budget of K is K documents;
- the ranking is cut, or padded with documents of gain 0, to exactly N = ``depth`` ranks (1000 by
  default, cwl_eval's): C, W and L run over all N ranks, the padding included, so a short ranking's
  weights are those of a user who reads on past its end and finds nothing.

The kernel works on blocks of queries at once, one row of N ranks per query; the sums that weigh the
ranks are taken per row in the same order cwl_eval takes them (a cumulative product, numpy's sum, a dot
product), so that values agree with its own to the last bit where the operations allow.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

import irspec
from irspec.plugin_api import UNJUDGED, Context

_BLOCK = 1 << 18  # ranks held at once: rows of N ranks per block (2 MiB per float matrix)

Continuation = Callable[[np.ndarray, np.ndarray, Any], np.ndarray]


def gains(ctx: Context, metric: Any) -> np.ndarray:
    """Per ranked row: the gain cwl_eval gives it, ``(clip(max(label, 0), min_rel, max_rel) − min_rel) /
    (max_rel − min_rel)``, and 0 for an unjudged document."""
    lo, hi = metric.get("min_rel"), metric.get("max_rel")
    if lo >= hi:
        raise irspec.ParameterError(metric.name, "min_rel", f"must be below max_rel ({lo} >= {hi})")
    label = np.clip(np.maximum(ctx.label, 0), lo, hi)
    return np.where(ctx.label == UNJUDGED, 0.0, (label - lo) / (hi - lo))


def measure(ctx: Context, metric: Any) -> np.ndarray:
    """EU (or ETU, with ``utility=total``) per query of the C/W/L measure ``metric``: the kernel of every
    one of them, given its continuation C(i) from :data:`CONTINUATIONS`."""
    return evaluate(ctx, metric, CONTINUATIONS[metric.name])


def evaluate(ctx: Context, metric: Any, continuation: Continuation) -> np.ndarray:
    """EU (or ETU) per query for the user model whose C(i) is ``continuation(gain, rank, metric)``, over
    a block of rows of N ranks (``rank`` is 1..N)."""
    depth = metric.get("depth")
    total = metric.get("utility") == "total"
    gain = gains(ctx, metric)
    keep = ctx.rank <= depth
    rows_per_block = max(1, _BLOCK // depth)
    rank = np.arange(1, depth + 1, dtype=np.float64)
    out = np.zeros(ctx.nq)
    for first in range(0, ctx.nq, rows_per_block):
        last = min(first + rows_per_block, ctx.nq)
        lo, hi = ctx.offsets[first], ctx.offsets[last]
        inside = keep[lo:hi]
        g = np.zeros((last - first, depth))
        g[ctx.seg[lo:hi][inside] - first, ctx.rank[lo:hi][inside] - 1] = gain[lo:hi][inside]
        out[first:last] = _utility(g, continuation(g, rank, metric), total)
    return out


def _utility(g: np.ndarray, c: np.ndarray, total: bool) -> np.ndarray:
    """EU = W·g or ETU = L·cumsum(g) for each row, from the gains ``g`` and continuations ``c``."""
    reach = np.cumprod(np.concatenate((np.ones((len(c), 1)), c[:, :-1]), axis=1), axis=1)  # Π_{j<i} C(j)
    if total:
        return _row_dots(reach * (1.0 - c), np.cumsum(g, axis=1))
    # W(1) = 1 / Σ reach, and W(i) = reach(i) · W(1), as cwl_eval forms them. The sums are taken one row
    # at a time: numpy sums a matrix's rows in another order than it sums a single vector.
    return _row_dots(np.stack([row * (1.0 / np.sum(row)) for row in reach]), g)


def _row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dot product of each row of ``a`` with the same row of ``b``, one vector at a time (as cwl_eval
    takes it, so the additions come in its order)."""
    return np.array([np.dot(x, y) for x, y in zip(a, b, strict=True)])


# --------------------------------------------------------------------------------------------------
# The continuation probabilities, C(i) for ranks i = 1..N (rows of gains g, ranks r).


def _cumulative(g: np.ndarray) -> np.ndarray:
    return np.cumsum(g, axis=1)


def c_bpm(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """BPM (static): go on while the gain so far is below T and the documents read are fewer than K."""
    return ((_cumulative(g) < metric.get("T")) & (r < metric.get("K"))).astype(np.float64)


def c_inst(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """INST: C(i) = ((i + T + T_i − 1) / (i + T + T_i))², T_i = T − (gain so far)."""
    t = metric.get("T")
    a = r + t + (t - _cumulative(g))
    # Squared as x·x over the whole block: cwl_eval squares each value with pow, which may differ in the
    # last bit (see _insq_continuation); INST agrees with it to about 1e-16, not bit for bit.
    return ((a - 1.0) / a) ** 2.0


def c_insq(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """INSQ: C(i) = ((i + 2T − 1) / (i + 2T))², the same for every query."""
    return np.broadcast_to(_insq_continuation(float(metric.get("T")), len(r)), g.shape)


@lru_cache(maxsize=64)
def _insq_continuation(t: float, depth: int) -> np.ndarray:
    # Squared with the C library's pow, one value at a time, as cwl_eval squares: numpy squares an array
    # as x·x, which rounds differently from pow in the last bit for about one value in a thousand.
    return _frozen([((i + 2.0 * t - 1.0) / (i + 2.0 * t)) ** 2.0 for i in range(1, depth + 1)])


def c_nerr8(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """NERR8@k: C(i) = 1 − g(i) for i < k, 0 from rank k on."""
    return np.where(r < metric.get("k"), 1.0 - g, 0.0)


def c_nerr9(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """NERR9@k: C(i) = (i / (i + 1)) (1 − g(i)) for i < k, 0 from rank k on."""
    return np.where(r < metric.get("k"), (r / (r + 1.0)) * (1.0 - g), 0.0)


def c_nerr10(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """NERR10: C(i) = p (1 − g(i))."""
    return metric.get("p") * (1.0 - g)


def c_nerr11(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """NERR11: C(i) = ((i + 2T − 1) / (i + 2T))² (1 − g(i))."""
    return c_insq(g, r, metric) * (1.0 - g)


def c_sdcg(g: np.ndarray, r: np.ndarray, metric: Any) -> np.ndarray:
    """SDCG@k: C(i) = log2(i + 1) / log2(i + 2) for i < k, 0 from rank k on."""
    return np.broadcast_to(_dcg_continuation(metric.get("k"), len(r)), g.shape)


@lru_cache(maxsize=64)
def _dcg_continuation(k: int, depth: int) -> np.ndarray:
    # Python's math.log(x, 2), as cwl_eval computes it: numpy's log may differ from it in the last bit.
    return _frozen(
        [math.log(i + 1, 2.0) / math.log(i + 2, 2.0) if i < k else 0.0 for i in range(1, depth + 1)]
    )


def _frozen(values: list[float]) -> np.ndarray:
    out = np.array(values, dtype=np.float64)
    out.flags.writeable = False  # shared through the cache
    return out


# --------------------------------------------------------------------------------------------------


CONTINUATIONS: dict[str, Continuation] = {
    "BPM": c_bpm,
    "INST": c_inst,
    "INSQ": c_insq,
    "NERR8": c_nerr8,
    "NERR9": c_nerr9,
    "NERR10": c_nerr10,
    "NERR11": c_nerr11,
    "SDCG": c_sdcg,
}
"""Each C/W/L measure's continuation, by the canonical name it is registered under."""
