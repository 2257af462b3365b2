"""The exact-integer machinery under :mod:`irspec.stats.significance`: quantising scores and drawing permutations
and bootstrap resamples.

Scores become integers ``K = round(x * 10**decimals)`` (:func:`quantise`), so that every permuted or
resampled sum is an exact int64: ties with the observed statistic are counted exactly, and a p-value
does not depend on summation order, machine or thread count. Random draws come in memory-bounded blocks
whose size does not change the generator's stream, so the same seed gives the same numbers everywhere.

These are the inner loops of the sign-flip (randomization) test, the paired bootstrap and the
randomised Tukey HSD; the statistics built on them, and their documentation, are in :mod:`irspec.stats.significance`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from irspec.errors import EvaluationError

__all__ = [
    "MAX_DECIMALS",
    "MAX_RESAMPLES",
    "bootstrap_sums",
    "quantise",
    "sign_flip_exact",
    "sign_flip_hits",
    "tukey_ranges",
]

MAX_RESAMPLES = 10_000_000
"""The most random sign vectors, shuffles or bootstrap resamples one test draws: a plan's
``compare.permutations`` (the schema's maximum), :func:`irspec.compare`'s ``permutations`` and
:mod:`irspec.stats.significance`' ``permutations`` and ``resamples``. With B draws the Monte Carlo standard error of
a p-value p is sqrt(p (1 - p) / B): at 10**7 under 5% of p for every p above 5e-5 (0.05 corrected over
1,000 comparisons), and the smallest p it gives is 1e-7. More draws refine no p-value a reader uses,
while 10**7 already take seconds per comparison (a bootstrap over 50 topics ~8 s, proportionally more
for more topics): a larger count is a slip that would run for hours."""

MAX_DECIMALS = 300
"""The most decimals scores are rounded to before they become integers (:func:`quantise`):
``10.0 ** decimals`` must be a float (at most 1.8e308), and a double holds no 17th significant digit to
round, so 300 refuses only a slip (400 was an OverflowError)."""

RESAMPLES_WHY = "more draws refine no p-value a reader uses"
"""Why a count past :data:`MAX_RESAMPLES` is refused, for the messages that say so."""

# Bound on n * max|K|: every sum of quantised values, and ``S - 2x`` in the sign-flip test, then
# stays well inside int64.
_INT_LIMIT = 2**60

# Elements per block of random draws; bounds memory (about 8 bytes each) without affecting results,
# because every generator call below yields the same stream however it is split.
_CHUNK_ELEMENTS = 1 << 20

# Most systems for which the randomised Tukey HSD draws each topic's shuffle as one of the n! orderings
# of the systems (8! = 40,320 orderings); with more, each permutation shuffles every topic itself.
_MAX_ORDERED_SYSTEMS = 8

# Row r of this table holds the 8 bits of the byte value r, least significant first.
_BYTE_BITS = (np.arange(256)[:, None] >> np.arange(8)) & 1


def quantise(values: np.ndarray, decimals: int) -> tuple[np.ndarray, float, int]:
    """Integers ``K`` and ``scale`` with ``values ~ K / scale``, rounded to ``decimals`` decimals.

    The decimals are lowered when needed so that a sum over the last axis of ``|K|`` fits in 60 bits;
    the rounding then still keeps about 15 significant digits of the largest value.
    """
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest == math.inf:
        # finite scores whose differences overflow (1e308 - -1e308): no test can use them
        raise EvaluationError(
            "the differences of the scores overflow a double (scores beyond ±1e307?): there is nothing to test"
        )
    length = values.shape[-1]
    used = decimals
    if largest > 0:
        used = min(decimals, math.floor(math.log10(_INT_LIMIT / (length * largest))))
    scale = 10.0**used
    return np.rint(values * scale).astype(np.int64), scale, used


def sign_flip_exact(k: np.ndarray) -> float:
    """Exact two-sided sign-flip p-value: the share of all 2**n sign vectors whose |sum| >= observed.

    Flipping every sign maps a vector to one with the same |sum|, so the last query's sign is held
    fixed and the other 2**(n-1) vectors are enumerated: the share is the same, at half the cost.
    """
    total = int(k.sum())
    head = k[:-1]
    table, offsets = _byte_tables(head)
    count = 1 << head.size
    chunk = max(1024, _CHUNK_ELEMENTS // max(1, offsets.size))
    hits = 0
    shifts = 8 * np.arange(offsets.size, dtype=np.int64)
    for start in range(0, count, chunk):
        codes = np.arange(start, min(count, start + chunk), dtype=np.int64)
        # byte p of the vector's code says which of queries 8p..8p+7 are flipped
        packed = (codes[:, None] >> shifts) & 255
        flipped = table[packed + offsets].sum(axis=1)
        hits += int(np.count_nonzero(np.abs(total - 2 * flipped) >= abs(total)))
    return hits / count


def sign_flip_hits(k: np.ndarray, permutations: int, rng: np.random.Generator) -> int:
    """How many of ``permutations`` random sign vectors give |sum| >= the observed |sum|.

    Each vector is ceil(n/8) bytes of ``rng.bytes``; bit t (least significant first) of byte p flips
    query 8p + t. Sums are exact int64, so ties with the observed statistic are counted.
    """
    total = int(k.sum())
    table, offsets = _byte_tables(k)
    width = offsets.size
    # a multiple of 4 rows keeps every request a whole number of 32-bit words, so blocks concatenate
    # to the same stream as one big draw
    rows = max(4, (_CHUNK_ELEMENTS // width) // 4 * 4)
    hits = 0
    for start in range(0, permutations, rows):
        m = min(rows, permutations - start)
        packed = np.frombuffer(rng.bytes(m * width), dtype=np.uint8).reshape(m, width)
        flipped = table[packed + offsets].sum(axis=1)
        hits += int(np.count_nonzero(np.abs(total - 2 * flipped) >= abs(total)))
    return hits


def _byte_tables(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lookup tables turning a packed flip pattern into the sum of the flipped values.

    Entry ``256 p + v`` of the flat table is the sum of ``k[8p + t]`` over the set bits t of byte value
    v, so one gather per byte replaces eight multiply-adds per query.
    """
    width = -(-k.size // 8)
    padded = np.zeros(8 * width, dtype=np.int64)
    padded[: k.size] = k
    table = (padded.reshape(width, 8) @ _BYTE_BITS.T).ravel()
    return table, 256 * np.arange(width, dtype=np.int64)


def bootstrap_sums(k: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Exact int64 sums of ``resamples`` paired-bootstrap resamples of ``k``."""
    n = k.size
    rows = max(1, _CHUNK_ELEMENTS // n)
    sums = np.empty(resamples, dtype=np.int64)
    for start in range(0, resamples, rows):
        m = min(rows, resamples - start)
        sums[start : start + m] = k[rng.integers(0, n, size=(m, n))].sum(axis=1)
    return sums


def tukey_ranges(k: np.ndarray, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Range (max - min) of the system sums after shuffling systems within each topic, per permutation.

    A shuffle of one topic is one of the ``n_sys!`` orderings of the systems, each equally likely. For a
    few systems a permutation draws one ordering index per topic and, slot by slot, gathers the score
    that ordering puts there: three times faster than shuffling each topic's scores in place (numpy's
    per-row shuffle has a fixed cost per topic and permutation), and the gathers stay in cache.
    """
    n_sys, n_top = k.shape
    rows = max(1, _CHUNK_ELEMENTS // (n_sys * n_top))
    by_topic = np.ascontiguousarray(k.T)
    ranges = np.empty(permutations, dtype=np.int64)
    if n_sys <= _MAX_ORDERED_SYSTEMS:
        orders = np.array(list(itertools.permutations(range(n_sys))))  # (n_sys!, n_sys)
        flat = by_topic.ravel()
        first = np.arange(n_top, dtype=np.int64) * n_sys  # topic t's scores start at flat[first[t]]
        sums = np.empty((rows, n_sys), dtype=np.int64)
        for start in range(0, permutations, rows):
            m = min(rows, permutations - start)
            chosen = rng.integers(0, len(orders), size=(m, n_top))
            for slot in range(n_sys):
                # the system that each drawn ordering puts in this slot, then its score in that topic
                np.sum(flat[orders[:, slot][chosen] + first], axis=1, out=sums[:m, slot])
            ranges[start : start + m] = sums[:m].max(axis=1) - sums[:m].min(axis=1)
        return ranges
    for start in range(0, permutations, rows):
        m = min(rows, permutations - start)
        block = np.broadcast_to(by_topic, (m, n_top, n_sys)).copy()
        rng.permuted(block, axis=2, out=block)
        sums = block.sum(axis=1)
        ranges[start : start + m] = sums.max(axis=1) - sums.min(axis=1)
    return ranges
