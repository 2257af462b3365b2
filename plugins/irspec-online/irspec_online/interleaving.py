"""Interleaving: two rankings merged into one list to serve, and the clicks on it credited to either.

An interleaving method (registered through irspec's ``irspec_register_interleaving`` hook, see
:mod:`irspec_online.plugin`) is a class built from its bound spec (:class:`irspec.plugin_api.Method`) with
two methods:

``interleave(a, b, rng, depth)``
    the list to serve for one query from rankings ``a`` and ``b`` (document ids, best first), at most
    ``depth`` long, drawn with ``rng`` (a seeded :class:`numpy.random.Generator`): a :class:`Served` list,
    which records each slot's origin (:data:`ORIGIN_KEYS`): its ``team`` (``a`` or ``b``: the ranking that
    contributed it, for team-draft and probabilistic interleaving), its ranks in ``a`` and ``b``
    (``rank_a``, ``rank_b``; ``depth + 1`` for a document a ranking does not place in its top ``depth``)
    and, for probabilistic interleaving, ``p_a``, the probability that ``a`` contributed it given the list;
``outcome(clicks)``
    per impression, the preference its clicks express, from the origins of the clicked slots
    (:class:`irspec_online.records.Clicks`, every impression's at once): +1 when they prefer ``b``, -1 when they prefer ``a``, 0
    for a tie, or the expected value over the random assignments (probabilistic interleaving).

and, optionally, ``interleave`` in two steps, for many lists of one query (a simulation's bank,
:class:`irspec_online.simulation.Simulation`): ``prepare(a, b, depth)``, what depends on the rankings
alone, computed once, and ``draw(prepared, rng)``, the list ``interleave(a, b, rng, depth)`` gives. The
methods here have both.

The methods, each after its paper:

* **Team-draft** (Radlinski, Kurup and Joachims, "How does clickthrough data reflect retrieval quality?",
  CIKM 2008): the rankings pick in turn like captains choosing teams, a coin deciding who picks first
  whenever both have picked as often; each picks its best document not yet in the list. A click counts
  for the team of its slot; the team with more clicks wins.
* **Balanced** (Joachims, "Optimizing search engines using clickthrough data", KDD 2002; "Evaluating
  retrieval performance using clickthrough data", 2003): the two rankings' tops are merged so that every
  prefix of the list holds the top ``ka`` of ``a`` and the top ``kb`` of ``b`` with ``|ka - kb| <= 1``,
  a coin choosing which goes first. With ``l`` the lowest clicked slot and ``k`` the better of its
  document's ranks in ``a`` and ``b``, each ranking is credited with the clicked documents in its top
  ``k``; the one with more wins.
* **Probabilistic** (Hofmann, Whiteson and de Rijke, "A probabilistic method for inferring preferences
  from clicks", CIKM 2011): each ranking is a softmax over its documents, ``P(d) ~ 1 / rank(d)^tau``
  (``tau = 3``); for each slot a coin picks a ranking, which draws a document from its softmax, and the
  document leaves both. The outcome is marginalised over the assignments that could have produced the
  list: given the list, slot ``j`` came from ``a`` with probability ``P_a(d_j) / (P_a(d_j) + P_b(d_j))``
  (each softmax renormalised over the documents not yet placed), independently of the other slots, so
  the expected outcome ``P(b gets more clicks) - P(a gets more clicks)`` is computed exactly.
* **Optimized** (Radlinski and Craswell, "Optimized interleaving for online retrieval evaluation", WSDM
  2013): the lists allowed are those whose every slot holds the best remaining document of ``a`` or of
  ``b``; a distribution over them is found by linear programming such that a user who clicks at random
  prefers neither ranking at any rank (for every rank ``k``, the expected credit of a click at ``k`` is
  0), the most sensitive of these (each list weighted by the chance that a click, at rank ``k`` with
  probability ``~ 1/k``, is not a tie, times the entropy of how such clicks split between the rankings).
  Where no distribution is unbiased (binary credit leaves none for some pairs of rankings), the least
  biased, by the sum over ranks of ``|expected credit of a click at k|``, and the most sensitive of those.
  A click on document ``d`` gives ``b`` the credit ``rank_a(d) - rank_b(d)`` (``linear``), the sign of it
  (``binary``) or ``1/rank_b(d) - 1/rank_a(d)`` (``inverse``); the sum's sign is the outcome.

Every method is deterministic for a seed: the same rankings and ``rng`` give the same list.
"""

from __future__ import annotations

import bisect
import math
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from irspec import InputError, InputTable, plugin_api
from irspec.plugin_api import quote
from irspec_online.records import Clicks, summed
from irspec_online.settings import Interleaving

__all__ = [
    "NO_TEAM",
    "ORIGIN_KEYS",
    "TEAM_A",
    "TEAM_B",
    "Balanced",
    "InterleavingTest",
    "KeySums",
    "Optimized",
    "Probabilistic",
    "Served",
    "Tally",
    "TeamDraft",
    "implementation",
    "interleaving_table",
    "outcomes",
]

TEAM_A, TEAM_B, NO_TEAM = 0, 1, -1
TEAM_NAMES = {TEAM_A: "a", TEAM_B: "b"}
ORIGIN_KEYS = ("team", "rank_a", "rank_b", "p_a")
"""The keys of a slot's origin, as a log record's ``origins`` holds them: ``team`` (``"a"``, ``"b"`` or
null), ``rank_a``, ``rank_b`` (1-based; ``depth + 1``: not in that ranking's top ``depth``) and ``p_a``
(probabilistic interleaving: the probability that ``a`` contributed the slot, given the list)."""


@dataclass(frozen=True)
class Served:
    """A list to serve and each slot's origin (:data:`ORIGIN_KEYS`), slot by slot."""

    docs: tuple[str, ...]
    team: tuple[int, ...]
    rank_a: tuple[int, ...]
    rank_b: tuple[int, ...]
    p_a: tuple[float, ...]

    def origins(self) -> list[dict[str, Any]]:
        """Each slot's origin as a log record's ``origins`` holds it (keys that do not apply left out)."""
        out = []
        for team, ra, rb, p in zip(self.team, self.rank_a, self.rank_b, self.p_a, strict=True):
            origin: dict[str, Any] = {"team": TEAM_NAMES.get(team), "rank_a": ra, "rank_b": rb}
            if team == NO_TEAM:
                del origin["team"]
            if not math.isnan(p):
                origin["p_a"] = p
            out.append(origin)
        return out


def _ranks(ranking: Sequence[str], depth: int) -> dict[str, int]:
    """A ranking's top ``depth`` documents' 1-based ranks (a document given twice keeps its first)."""
    found: dict[str, int] = {}
    for doc in ranking:
        if len(found) == depth:
            break
        found.setdefault(doc, len(found) + 1)
    return found


def _tops(a: Sequence[str], b: Sequence[str], depth: int) -> tuple:
    """Both rankings' top ``depth`` documents' ranks (:func:`_ranks`), the documents in order, and
    ``depth``: what team-draft and balanced interleaving prepare for a pair of rankings."""
    ra, rb = _ranks(a, depth), _ranks(b, depth)
    return ra, rb, list(ra), list(rb), depth


def _numpy_sum(values: Sequence[float]) -> float:
    """``np.sum`` of float64 ``values`` to the bit, in plain Python: the reduction's start, 0.0, plus
    numpy's pairwise sum of them (:func:`_pairwise_sum`)."""
    return 0.0 + _pairwise_sum(values, 0, len(values))


def _pairwise_sum(values: Sequence[float], start: int, n: int) -> float:
    """numpy's pairwise summation of ``values[start:start + n]``: fewer than 8 added in turn to -0.0; up to
    128 in eight running sums, joined as a tree, the rest added after; more split in two at a multiple
    of 8 (numpy/_core/src/umath/loops_utils.h.src)."""
    if n < 8:
        total = -0.0  # numpy's start, which keeps a sum of negative zeros negative
        for i in range(start, start + n):
            total += values[i]
        return total
    if n <= 128:
        r0, r1, r2, r3, r4, r5, r6, r7 = values[start : start + 8]
        end = start + n - n % 8
        for i in range(start + 8, end, 8):
            r0 += values[i]
            r1 += values[i + 1]
            r2 += values[i + 2]
            r3 += values[i + 3]
            r4 += values[i + 4]
            r5 += values[i + 5]
            r6 += values[i + 6]
            r7 += values[i + 7]
        total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(end, start + n):
            total += values[i]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(values, start, half) + _pairwise_sum(values, start + half, n - half)


def _left(memo: dict, team: int, weights: list[float], gone: int, total: bool = False) -> Any:
    """Probabilistic interleaving's softmax over what is left of a ranking (``team``'s ``weights``, less
    the documents ``gone``, a bit each, by rank): the cumulative sums of its probabilities, each divided
    by the last (what ``rng.choice`` searches: flat where a document is gone), or with ``total`` the
    weights left's sum; kept in ``memo``, computed the first time."""
    key = team, gone, total
    if key not in memo:
        left = [0.0 if gone >> i & 1 else w for i, w in enumerate(weights)]  # a weight 1/r^tau is never 0
        if total:
            memo[key] = _numpy_sum([w for w in left if w])
        else:
            whole = _numpy_sum(left)
            cdf = []
            last = 0.0
            for w in left:
                last += w / whole
                cdf.append(last)
            memo[key] = [c / last for c in cdf]
    return memo[key]


def _served(docs: list[str], team: list[int], a: dict[str, int], b: dict[str, int], depth: int,
            p_a: list[float] | None = None) -> Served:  # fmt: skip
    absent = [depth + 1] * len(docs)  # the rank of a document a ranking does not place
    return Served(
        tuple(docs),
        tuple(team),
        tuple(map(a.get, docs, absent)),
        tuple(map(b.get, docs, absent)),
        tuple(p_a) if p_a is not None else (math.nan,) * len(docs),
    )


def _known(rank: np.ndarray) -> np.ndarray:
    """Ranks, an unknown one (0) past every known one."""
    return np.where(rank > 0, rank, np.iinfo(np.int32).max).astype(np.int64)


def _rankless(clicks: Clicks) -> np.ndarray:
    """Per clicked slot, whether its origin lacks a rank in ``a`` or in ``b`` (0: unknown)."""
    return (clicks.rank_a == 0) | (clicks.rank_b == 0)


def _team_outcome(clicks: Clicks) -> np.ndarray:
    """sign(clicks on b's slots - clicks on a's slots), per impression."""
    credit = np.where(clicks.team == TEAM_B, 1.0, np.where(clicks.team == TEAM_A, -1.0, 0.0))
    return np.sign(clicks.per_row(credit))


_TOSS = object()
"""Where a team-draft list drawn so far tosses another coin (:meth:`TeamDraft.draw`)."""


class TeamDraft:
    """Team-draft interleaving (Radlinski, Kurup and Joachims, CIKM 2008): see the module docstring."""

    def __init__(self, method: Any = None) -> None:
        self.method = method

    def interleave(self, a: Sequence[str], b: Sequence[str], rng: np.random.Generator, depth: int) -> Served:
        """Captains pick in turn, a coin deciding who picks first whenever both have picked as often;
        until a ranking has nothing left to give (as the paper's algorithm) or the list is ``depth`` long."""
        return self.draw(self.prepare(a, b, depth), rng)

    def prepare(self, a: Sequence[str], b: Sequence[str], depth: int) -> tuple:
        """The rankings' tops and their ranks (see the module docstring), and the lists drawn, by their
        coins (:meth:`draw`)."""
        return *_tops(a, b, depth), {}

    def draw(self, prepared: tuple, rng: np.random.Generator) -> Served:
        """:meth:`interleave`'s list, from what :meth:`prepare` computed. A list is its coins' (one whenever
        both captains have picked as often), and is kept by them as first made, each coin's place marked
        (_TOSS): a bank's lists of a query are a few dozen, each drawn hundreds of times (issue 35)."""
        made = prepared[-1]
        coins: tuple[bool, ...] = ()
        while (known := made.get(coins)) is _TOSS:
            coins += (rng.random() < 0.5,)
        return known if known is not None else self._made(prepared, coins, rng)

    def _made(self, prepared: tuple, coins: tuple[bool, ...], rng: np.random.Generator) -> Served:
        """The list whose first coins are ``coins``, the others tossed with ``rng``; kept in ``prepared``."""
        ra, rb, la, lb, depth, made = prepared
        na, nb = len(la), len(lb)  # the lengths, and the picks below, counted once (a bank is 10^4 lists)
        docs: list[str] = []
        team: list[int] = []
        placed: set[str] = set()
        tossed: list[bool] = []
        ia = ib = picks_a = picks_b = 0
        while picks_a + picks_b < depth:
            while ia < na and la[ia] in placed:
                ia += 1
            while ib < nb and lb[ib] in placed:
                ib += 1
            if ia == na or ib == nb:
                break
            if picks_a == picks_b:
                made[tuple(tossed)] = _TOSS
                tossed.append(coins[len(tossed)] if len(tossed) < len(coins) else rng.random() < 0.5)
            if picks_a < picks_b or (picks_a == picks_b and tossed[-1]):
                doc = la[ia]
                team.append(TEAM_A)
                picks_a += 1
            else:
                doc = lb[ib]
                team.append(TEAM_B)
                picks_b += 1
            docs.append(doc)
            placed.add(doc)
        made[tuple(tossed)] = served = _served(docs, team, ra, rb, depth)
        return served

    UNCREDITED = "has no team"
    """What :meth:`uncredited` finds of a clicked slot's origin (:func:`outcomes` refuses it)."""

    def uncredited(self, clicks: Clicks) -> np.ndarray:
        """Per clicked slot, whether its origin has no team, by which the outcome credits it."""
        return clicks.team == NO_TEAM

    def outcome(self, clicks: Clicks) -> np.ndarray:
        """The team with more clicks wins."""
        return _team_outcome(clicks)


class Balanced:
    """Balanced interleaving (Joachims 2002, 2003): see the module docstring."""

    def __init__(self, method: Any = None) -> None:
        self.method = method

    def interleave(self, a: Sequence[str], b: Sequence[str], rng: np.random.Generator, depth: int) -> Served:
        """The tops of ``a`` and ``b`` merged, ``ka`` and ``kb`` at most one apart, a coin for the first."""
        return self.draw(self.prepare(a, b, depth), rng)

    def prepare(self, a: Sequence[str], b: Sequence[str], depth: int) -> tuple:
        """The rankings' tops and their ranks (see the module docstring)."""
        return _tops(a, b, depth)

    def draw(self, prepared: tuple, rng: np.random.Generator) -> Served:
        """:meth:`interleave`'s list, from what :meth:`prepare` computed."""
        ra, rb, la, lb, depth = prepared
        a_first = rng.random() < 0.5
        docs: list[str] = []
        placed: set[str] = set()
        ka = kb = 0
        while len(docs) < depth and (ka < len(la) or kb < len(lb)):
            if kb == len(lb) or (ka < len(la) and (ka < kb or (ka == kb and a_first))):
                doc = la[ka]
                ka += 1
            else:
                doc = lb[kb]
                kb += 1
            if doc not in placed:
                docs.append(doc)
                placed.add(doc)
        return _served(docs, [NO_TEAM] * len(docs), ra, rb, depth)

    UNCREDITED = "lacks rank_a or rank_b"
    """What :meth:`uncredited` finds of a clicked slot's origin (:func:`outcomes` refuses it)."""

    def uncredited(self, clicks: Clicks) -> np.ndarray:
        """Per clicked slot, whether its origin lacks a rank in ``a`` or in ``b``."""
        return _rankless(clicks)

    def outcome(self, clicks: Clicks) -> np.ndarray:
        """With ``k`` the better rank (in ``a`` or ``b``) of the lowest clicked slot's document, the ranking
        with more clicked documents in its top ``k`` wins."""
        if len(clicks.rank) == 0:
            return np.zeros(clicks.n)
        imp = clicks.row
        rank_a, rank_b = _known(clicks.rank_a), _known(clicks.rank_b)
        last = np.zeros(clicks.n, dtype=np.int64)  # each impression's last click (clicks in slot order)
        has = np.diff(clicks.start) > 0
        last[has] = clicks.start[1:][has] - 1
        k = np.minimum(rank_a, rank_b)[last]
        hits_a = clicks.per_row((rank_a <= k[imp]).astype(np.float64))
        hits_b = clicks.per_row((rank_b <= k[imp]).astype(np.float64))
        return np.sign(hits_b - hits_a)


class Probabilistic:
    """Probabilistic interleaving (Hofmann, Whiteson and de Rijke, CIKM 2011): see the module docstring.
    ``tau`` is the softmax's exponent (the method's parameter, default 3)."""

    def __init__(self, method: Any = None) -> None:
        self.method = method
        self.tau = float(method.get("tau")) if method is not None else 3.0

    def interleave(self, a: Sequence[str], b: Sequence[str], rng: np.random.Generator, depth: int) -> Served:
        """For each slot a coin picks a ranking, which draws from its softmax over the documents left; the
        document leaves both. Each slot's ``p_a`` is the probability that ``a`` drew it, given the list."""
        return self.draw(self.prepare(a, b, depth), rng)

    def prepare(self, a: Sequence[str], b: Sequence[str], depth: int) -> tuple:
        """The rankings' tops, their ranks, weights and the weights' sums (see the module docstring): a
        third of drawing a list."""
        ra, rb = _ranks(a, depth), _ranks(b, depth)
        docs_a, docs_b = list(ra), list(rb)
        weight_a = [1.0 / r**self.tau for r in ra.values()]
        weight_b = [1.0 / r**self.tau for r in rb.values()]
        index_a = {d: i for i, d in enumerate(docs_a)}
        index_b = {d: i for i, d in enumerate(docs_b)}
        totals = _numpy_sum(weight_a), _numpy_sum(weight_b)
        # and what a slot computes from the documents left, kept as the draws compute it (_left)
        return ra, rb, docs_a, docs_b, weight_a, weight_b, index_a, index_b, totals, depth, {}

    def draw(self, prepared: tuple, rng: np.random.Generator) -> Served:
        """:meth:`interleave`'s list, from what :meth:`prepare` computed."""
        ra, rb, docs_a, docs_b, weight_a, weight_b, index_a, index_b, totals, depth, memo = prepared
        total_a, total_b = totals
        docs: list[str] = []
        team: list[int] = []
        p_a: list[float] = []
        # Plain floats, not numpy arrays of ten: numpy's operations on them were most of a simulation's
        # bank of lists (issue 35). The same numbers to the bit, so the same lists from the same seeds
        # (tests/test_interleaving.py holds them to Generator.choice): what numpy sums it sums pairwise
        # (_numpy_sum), and what it divides or accumulates element by element is the same IEEE arithmetic.
        # The documents gone from each ranking are bits of gone_a and gone_b, and what a slot computes from
        # them is kept (_left): a bank's lists of a query pass through the same few (issue 35).
        count_a, count_b = len(docs_a), len(docs_b)
        gone_a = gone_b = 0
        while len(docs) < depth and (count_a or count_b):
            use_a = total_b == 0 or (total_a > 0 and rng.random() < 0.5)
            cdf = _left(memo, TEAM_A, weight_a, gone_a) if use_a else _left(memo, TEAM_B, weight_b, gone_b)
            # rng.choice(len(weights), p=weights / sum)'s draw, without its checks of p: the first of the
            # cumulative sums of p, divided by the last, above a uniform (searchsorted's side="right")
            doc = (docs_a if use_a else docs_b)[bisect.bisect_right(cdf, rng.random())]
            pa = weight_a[index_a[doc]] / total_a if doc in index_a else 0.0
            pb = weight_b[index_b[doc]] / total_b if doc in index_b else 0.0
            docs.append(doc)
            team.append(TEAM_A if use_a else TEAM_B)
            p_a.append(pa / (pa + pb))
            # what is left of each ranking, counted, and its weight: the documents left, summed again
            if doc in index_a:
                gone_a |= 1 << index_a[doc]
                count_a -= 1
                total_a = _left(memo, TEAM_A, weight_a, gone_a, total=True)
            if doc in index_b:
                gone_b |= 1 << index_b[doc]
                count_b -= 1
                total_b = _left(memo, TEAM_B, weight_b, gone_b, total=True)
        return _served(docs, team, ra, rb, depth, p_a)

    UNCREDITED = "has neither p_a nor team"
    """What :meth:`uncredited` finds of a clicked slot's origin (:func:`outcomes` refuses it)."""

    def uncredited(self, clicks: Clicks) -> np.ndarray:
        """Per clicked slot, whether its origin has neither ``p_a`` nor ``team``."""
        return np.isnan(clicks.p_a) & (clicks.team == NO_TEAM)

    def outcome(self, clicks: Clicks) -> np.ndarray:
        """``P(b gets more clicks) - P(a gets more clicks)`` over the assignments of the clicked slots, each
        from ``a`` with its ``p_a`` independently; the realised teams where ``p_a`` is unknown."""
        p = np.where(np.isnan(clicks.p_a), np.where(clicks.team == TEAM_A, 1.0, 0.0), clicks.p_a)
        counts = np.diff(clicks.start)
        width = int(counts.max()) if clicks.n else 0
        # dist[i, width + d]: the probability that b's clicks minus a's are d after the slots seen so far
        dist = np.zeros((clicks.n, 2 * width + 1))
        dist[:, width] = 1.0
        imp = clicks.row
        position = np.arange(len(p)) - clicks.start[imp]
        for j in range(width):
            at = position == j
            rows, pa = imp[at], p[at]
            before = dist[rows]
            after = np.zeros_like(before)
            after[:, :-1] += before[:, 1:] * pa[:, None]  # a's click: d - 1
            after[:, 1:] += before[:, :-1] * (1 - pa)[:, None]  # b's click: d + 1
            dist[rows] = after
        return dist[:, width + 1 :].sum(axis=1) - dist[:, :width].sum(axis=1)


CREDITS = ("linear", "binary", "inverse")
"""Optimized interleaving's credit functions (Radlinski and Craswell 2013, section 5)."""


class Optimized:
    """Optimized interleaving (Radlinski and Craswell, WSDM 2013): see the module docstring. ``credit``
    (``linear``, ``binary`` or ``inverse``) is the credit function; lists are drawn from the optimal
    distribution of the allowed lists, solved by :func:`scipy.optimize.linprog` (HiGHS), once per pair of
    rankings."""

    def __init__(self, method: Any = None) -> None:
        self.method = method
        self.credit = method.get("credit") if method is not None else "linear"
        # the last pairs of rankings': their allowed lists, and the cumulative distribution they are drawn from
        self._solved: dict[tuple, tuple[list[list[str]], np.ndarray]] = {}

    UNCREDITED = "lacks rank_a or rank_b"
    """What :meth:`uncredited` finds of a clicked slot's origin (:func:`outcomes` refuses it)."""

    def uncredited(self, clicks: Clicks) -> np.ndarray:
        """Per clicked slot, whether its origin lacks a rank in ``a`` or in ``b``."""
        return _rankless(clicks)

    def _credit(self, rank_a: np.ndarray, rank_b: np.ndarray) -> np.ndarray:
        """Credit for ``b`` of a click on each document (0 where a rank is unknown)."""
        known = (rank_a > 0) & (rank_b > 0)
        rank_a, rank_b = (
            np.where(known, rank_a, 1).astype(np.float64),
            np.where(known, rank_b, 1).astype(np.float64),
        )
        return np.where(known, self._credit_known(rank_a, rank_b), 0.0)

    def _credit_known(self, rank_a: np.ndarray, rank_b: np.ndarray) -> np.ndarray:
        if self.credit == "binary":
            return np.sign(rank_a - rank_b)
        if self.credit == "inverse":
            return 1.0 / rank_b - 1.0 / rank_a
        return rank_a - rank_b

    def allowed(self, a: Sequence[str], b: Sequence[str], depth: int) -> list[list[str]]:
        """Every list whose each slot holds the best document of ``a`` or of ``b`` not yet in it (prefix
        constraint), as long as the two tops together allow (at most ``depth``)."""
        ra, rb = _ranks(a, depth), _ranks(b, depth)
        la, lb = list(ra), list(rb)
        length = min(depth, len(set(la) | set(lb)))
        level: list[list[str]] = [[]]
        for _ in range(length):
            grown: list[list[str]] = []
            for prefix in level:
                placed = set(prefix)
                options = []
                for ranking in (la, lb):
                    best = next((d for d in ranking if d not in placed), None)
                    if best is not None and best not in options:
                        options.append(best)
                grown += [[*prefix, d] for d in options]
            if not grown:
                break
            level = grown
        return level

    def distribution(
        self, a: Sequence[str], b: Sequence[str], depth: int
    ) -> tuple[list[list[str]], np.ndarray]:
        """The allowed lists and the probability of serving each: a random clicker's expected credit is 0
        at every rank, and sensitivity is highest (see the module docstring)."""
        from scipy.optimize import linprog

        ra, rb = _ranks(a, depth), _ranks(b, depth)
        lists = self.allowed(a, b, depth)
        length = len(lists[0])
        credit = np.array(
            [
                self._credit(
                    np.array([ra.get(d, depth + 1) for d in ls]), np.array([rb.get(d, depth + 1) for d in ls])
                )
                for ls in lists
            ]
        ).reshape(len(lists), length)
        f = 1.0 / np.arange(1, length + 1)
        f = f / f.sum()  # a click at rank k with probability ~ 1/k
        w_b = (f * (credit > 0)).sum(axis=1)
        w_a = (f * (credit < 0)).sum(axis=1)
        split = np.divide(w_a, w_a + w_b, out=np.full(len(lists), 0.5), where=w_a + w_b > 0)
        entropy = -sum(np.where(q > 0, q * np.log2(np.where(q > 0, q, 1.0)), 0.0) for q in (split, 1 - split))
        sensitivity = (w_a + w_b) * entropy
        equality = np.vstack([np.ones(len(lists)), credit.T])
        target = np.zeros(length + 1)
        target[0] = 1.0
        solved = linprog(-sensitivity, A_eq=equality, b_eq=target, bounds=(0, 1), method="highs")
        p = solved.x if solved.success else _least_biased(credit, sensitivity)
        p = np.clip(p, 0.0, None)
        return lists, p / p.sum()

    def interleave(self, a: Sequence[str], b: Sequence[str], rng: np.random.Generator, depth: int) -> Served:
        """One list drawn from :meth:`distribution` (solved once for a pair of rankings: serving the same
        query again draws from the same distribution)."""
        return self.draw(self.prepare(a, b, depth), rng)

    def prepare(self, a: Sequence[str], b: Sequence[str], depth: int) -> tuple:
        """The rankings' ranks, the allowed lists and their cumulative distribution (see the module
        docstring)."""
        ra, rb = _ranks(a, depth), _ranks(b, depth)
        key = (tuple(ra), tuple(rb), depth)
        if key not in self._solved:
            if len(self._solved) > 1024:
                self._solved.clear()
            lists, p = self.distribution(a, b, depth)
            # what rng.choice(len(lists), p=p) computes before it draws, computed once: the cumulative
            # sums, divided by the last (with its checks of p, a third of a simulation's bank)
            cdf = p.cumsum()
            cdf /= cdf[-1]
            self._solved[key] = lists, cdf
        lists, cdf = self._solved[key]
        # the cumulative distribution as floats, searched by bisect (searchsorted's side="right": the same
        # list), and each list served kept as first drawn (a bank draws its few lists hundreds of times)
        return ra, rb, lists, cdf.tolist(), depth, {}

    def draw(self, prepared: tuple, rng: np.random.Generator) -> Served:
        """:meth:`interleave`'s list, from what :meth:`prepare` computed."""
        ra, rb, lists, cdf, depth, served = prepared
        i = bisect.bisect_right(cdf, rng.random())  # choice's draw: the same list
        if i not in served:
            served[i] = _served(list(lists[i]), [NO_TEAM] * len(lists[i]), ra, rb, depth)
        return served[i]

    def outcome(self, clicks: Clicks) -> np.ndarray:
        """The sign of the clicked documents' summed credit (positive: ``b``)."""
        return np.sign(clicks.per_row(self._credit(clicks.rank_a, clicks.rank_b)))


def _least_biased(credit: np.ndarray, sensitivity: np.ndarray) -> np.ndarray:
    """The distribution over the lists (``credit``: a row per list, its credit for ``b`` of a click at each
    rank) whose bias, the sum over ranks of ``|expected credit of a click at k|``, is least, and among
    those the most sensitive: two linear programs over ``(p, t)`` with ``t_k >= +-(credit[:, k] @ p)``."""
    from scipy.optimize import linprog

    # When no distribution meets Radlinski and Craswell's equalities (binary credit can leave none), they
    # are relaxed to their distance from 0, |bias_k| summed over the ranks: a relaxation of this plugin's,
    # not taken from the paper. A linear program takes each |bias_k| as a variable t_k bounded below
    # by bias_k and -bias_k. (Each list's own total |credit| is not the bias, whose terms of opposite sign
    # cancel across lists: minimising it served one list only, biased 3 where 1 was achievable.)
    lists, ranks = credit.shape
    above = np.block([[credit.T, -np.eye(ranks)], [-credit.T, -np.eye(ranks)]])
    sums_to_one = np.r_[np.ones(lists), np.zeros(ranks)][None, :]
    bias = np.r_[np.zeros(lists), np.ones(ranks)]
    least = linprog(bias, A_ub=above, b_ub=np.zeros(2 * ranks), A_eq=sums_to_one, b_eq=[1.0], bounds=(0, None),
                    method="highs")  # fmt: skip
    # Among the least biased, the most sensitive, as the unbiased case chooses: the bias capped at the least
    # found. HiGHS is deterministic, so the same rankings give the same distribution.
    best = linprog(np.r_[-sensitivity, np.zeros(ranks)], A_ub=np.vstack([above, bias]),
                   b_ub=np.r_[np.zeros(2 * ranks), least.fun], A_eq=sums_to_one, b_eq=[1.0], bounds=(0, None),
                   method="highs")  # fmt: skip
    return (best if best.success else least).x[:lists]


# --------------------------------------------------------------------------------------------------
# A log's interleaved impressions: outcomes, and the test over queries and users


def implementation(spec: Any) -> Any:
    """The implementation of an interleaving method spec (``"team-draft"``, ``"probabilistic(tau=5)"``, a
    bound :class:`irspec.plugin_api.Method`): its registered class, built from the bound spec."""
    method = plugin_api.parse_method(spec, "interleaving method")
    compute = method.definition.compute
    return (compute if callable(compute) else pkgutil.resolve_name(compute))(method)


def outcomes(log: Any, spec: Any) -> np.ndarray:
    """Per row of ``log`` (an :class:`~irspec_online.records.InteractionLog`), the preference its clicks
    express for ``b`` over ``a`` under the method ``spec`` (or its :func:`implementation`, built already):
    in [-1, 1], NaN for a row that served no interleaved list or got no click (it expresses none)."""
    method = spec if hasattr(spec, "outcome") else implementation(spec)
    _check_credited(log, method)
    values = method.outcome(log.clicks)
    clicked = np.diff(log.clicks.start) > 0
    return np.where(log.interleaved & clicked, values, np.nan)


def _check_credited(log: Any, method: Any) -> None:
    """Refuse a log where a click on an interleaved list cannot be credited as ``method`` credits clicks:
    its slot's origin lacks what the method reads (a balanced list's origins have no team, a team-draft
    list's written by hand may have no ranks). Credited as a tie, such clicks would pull the preference
    towards 0 without a word. A method registered without ``uncredited`` is not checked."""
    uncredited = getattr(method, "uncredited", None)
    if uncredited is None or not len(log.clicks.rank):
        return
    bad = uncredited(log.clicks) & log.interleaved[log.clicks.row]
    if not bad.any():
        return
    first = int(np.argmax(bad))
    row = int(log.clicks.row[first])
    what = getattr(method, "UNCREDITED", "lacks what the method credits a click by")
    name = method.method if getattr(method, "method", None) is not None else type(method).__name__
    more = int(bad.sum()) - 1
    raise InputError(
        f"session {quote(log.sessions[log.session[row]])}: the origin of the result clicked at rank "
        f"{int(log.clicks.rank[first])} {what}, by which {name} interleaving credits a click"
        + (f" ({more:,} more such clicks)" if more else "")
        + ": were the lists made by another method, or their origins written without it?",
        log.source,
    )


class Tally:
    """What an interleaving test adds up over the rows (in one piece or partition by partition): the
    outcomes' counts and sum, each query's sum and count of outcomes (by its key), each user's (by its
    key). Memory: a row per distinct query and per distinct user (:class:`KeySums`), never a row per query
    issue.

    The outcomes' sum, whose mean is the preference, is added as the metric's mean is (``exact``:
    :func:`~irspec_online.records.summed`): a log given whole, in its rows' order, as
    ``irspec.Result.aggregate`` adds them, so that the table's preference is the ``Interleaving`` mean
    beside it to the bit; a log given in parts (``exact=True``: a streamed pass's partitions) exactly, as
    the pass's means are, the same however it was cut."""

    def __init__(self, settings: Interleaving, exact: bool = False) -> None:
        self.settings = settings
        self.exact = exact
        self.interleaved = self.clicked = 0
        self.wins_a = self.wins_b = self.ties = 0
        self.total: float | Fraction | int = 0.0
        self.queries = KeySums()
        self.users = KeySums()

    def add(
        self, query_key: np.ndarray, user_key: np.ndarray, values: np.ndarray, interleaved: np.ndarray
    ) -> None:
        """Add rows: their query and user keys, outcomes (NaN: none) and whether each was interleaved."""
        self.interleaved += int(interleaved.sum())
        defined = ~np.isnan(values)
        v = values[defined]
        self.clicked += len(v)
        self.wins_a += int((v < 0).sum())
        self.wins_b += int((v > 0).sum())
        self.ties += int((v == 0).sum())
        self.total = summed(self.total, v, self.exact)
        self.queries.add(*_grouped(query_key[defined], v))
        self.users.add(*_grouped(user_key[defined], v))

    def bootstrap(self) -> np.ndarray:
        """The preference in each replicate of a Poisson bootstrap over users (Hanley and MacGibbon 2006;
        Chamandy et al. 2012), NaN for a replicate that draws no user.

        Every user's outcomes are summed first (``S_u``, over ``N_u`` query issues); a replicate weighs
        each user by a Poisson(1) draw, and the users of equal ``(S_u, N_u)`` together by a Poisson(k) draw,
        k their number, which is the same in distribution: so the replicates cost one draw per distinct
        ``(S, N)`` (a few hundred with whole outcomes, however many users) rather than per user. The draws
        come from the seed, over the groups in sorted order: the same log gives the same interval, read in
        one piece or partition by partition."""
        replicates = self.settings.replicates
        _, sums, counts = self.users.table()
        groups = pl.DataFrame({"s": sums, "n": counts}).group_by("s", "n").len().sort("s", "n")
        s, n, k = (groups[c].to_numpy().astype(np.float64) for c in ("s", "n", "len"))
        rng = np.random.default_rng(self.settings.seed)
        total, drawn = np.zeros(replicates), np.zeros(replicates)
        for at in range(0, len(k), 4096):  # a block of groups at a time: (block, replicates) draws
            w = rng.poisson(k[at : at + 4096, None], size=(len(k[at : at + 4096]), replicates))
            total += s[at : at + 4096] @ w
            drawn += n[at : at + 4096] @ w
        return np.divide(total, drawn, out=np.full(replicates, np.nan), where=drawn > 0)

    def test(self, metric: str) -> InterleavingTest:
        """The experiment's outcome: counts, the preference and its bootstrap interval and p-value, the
        queries won by each ranking and the sign test over them."""
        _, sums, counts = self.queries.table()
        per_query = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        q_b, q_a = int((per_query > 0).sum()), int((per_query < 0).sum())
        q_tied = len(per_query) - q_a - q_b
        sign_p = plugin_api.sign_p_value(q_b, q_a)
        preference = float(self.total) / self.clicked if self.clicked else math.nan
        replicate = self.bootstrap()
        replicate = replicate[~np.isnan(replicate)]
        alpha = 1 - self.settings.confidence
        if len(replicate):
            low, high = (float(x) for x in np.quantile(replicate, [alpha / 2, 1 - alpha / 2]))
            boot_p = float(min(1.0, 2 * min(np.mean(replicate <= 0), np.mean(replicate >= 0))))
        else:
            low = high = boot_p = math.nan
        return InterleavingTest(metric, self.interleaved, self.clicked, self.wins_b, self.wins_a, self.ties,
                                preference, low, high, boot_p, q_b, q_a, q_tied, sign_p, self.settings)  # fmt: skip


USERS_HELD = 1 << 21
"""Keys new to a :class:`KeySums` held aside (some 50 MiB) before they are merged into its table, unless
the table holds four times as many."""


class KeySums:
    """Sums and counts per distinct key (a query's, a user's outcomes), added part by part (a partition's
    :func:`_grouped` sums at a time): a table sorted by key, which a part's known keys are added to in place
    (a search of the part's keys, not a sort of the table), and the part's new keys, held aside until they
    pass :data:`USERS_HELD` or a quarter of the table, then merged in. Memory: the distinct keys (24 bytes
    each) and at most a quarter more, however many parts. Each key's sum adds its parts' sums in the order
    they came, as a sum of them all at once (``np.bincount``) would: the same bits, merged early or late."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.int64)
        self.sums = np.zeros(0)
        self.counts = np.zeros(0)
        self.new: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.held = 0

    def add(self, keys: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> None:
        """Add a part's sums and counts, one per distinct key, keys sorted."""
        if len(self.keys):
            at = np.searchsorted(self.keys, keys)
            known = at < len(self.keys)
            known[known] = self.keys[at[known]] == keys[known]
            self.sums[at[known]] += sums[known]  # each key once in a part: no two adds to one slot
            self.counts[at[known]] += counts[known]
            keys, sums, counts = keys[~known], sums[~known], counts[~known]
        if len(keys):
            self.new.append((keys, sums, counts))
            self.held += len(keys)
            if self.held > max(USERS_HELD, len(self.keys) // 4):
                self._merge()

    def _merge(self) -> None:
        """The held keys (none of them in the table) merged into it."""
        if not self.new:
            return
        keys, sums, counts = _grouped(*_joined(self.new))
        at = np.searchsorted(self.keys, keys)
        self.keys = np.insert(self.keys, at, keys)
        self.sums = np.insert(self.sums, at, sums)
        self.counts = np.insert(self.counts, at, counts)
        self.new, self.held = [], 0

    def table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every distinct key, sorted, with its sum and count."""
        self._merge()
        return self.keys, self.sums, self.counts


def _grouped(keys: np.ndarray, values: np.ndarray, counts: np.ndarray | None = None):  # -> 3 arrays
    """Per distinct key, the sum of ``values`` and of ``counts`` (1 per value by default)."""
    unique, inverse = np.unique(keys, return_inverse=True)
    weights = np.ones(len(values)) if counts is None else counts
    sums = np.bincount(inverse, weights=values, minlength=len(unique)).astype(np.float64)
    return unique, sums, np.bincount(inverse, weights=weights, minlength=len(unique)).astype(np.float64)


def _joined(
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]


@dataclass(frozen=True)
class InterleavingTest:
    """An interleaving experiment's outcome on one metric (``Interleaving(method)``), ``b`` against ``a``.

    ``impressions`` served an interleaved list, ``clicked`` of them got a click; of those ``wins_b``
    preferred ``b``, ``wins_a`` ``a`` and ``ties`` neither (a probabilistic outcome counts by its sign).
    ``preference`` is the mean outcome over the clicked impressions, in [-1, 1] (positive: ``b`` is
    preferred; Chapelle et al.'s Δ_AB is half of it), with the percentile interval ``ci_low``..``ci_high``
    and two-sided p-value ``p_bootstrap`` of a Poisson bootstrap over users (:meth:`Tally.bootstrap`). Per query (its text), the
    mean outcome is a win for ``b`` (``queries_b``), for ``a`` (``queries_a``) or a tie; ``p_sign`` is the
    two-sided sign (binomial) test of the queries won by each.
    """

    metric: str
    impressions: int
    clicked: int
    wins_b: int
    wins_a: int
    ties: int
    preference: float
    ci_low: float
    ci_high: float
    p_bootstrap: float
    queries_b: int
    queries_a: int
    queries_tied: int
    p_sign: float
    settings: Interleaving = field(default_factory=Interleaving)

    def as_dict(self) -> dict[str, Any]:
        """All fields as a plain, JSON-serialisable dict."""
        out = dict(self.__dict__)
        out["settings"] = dict(self.settings.__dict__)
        return out


COLUMNS = ("metric", "impressions", "clicked", "b wins", "a wins", "ties", "preference", "CI low", "CI high",
           "p (users)", "queries b", "queries a", "queries tied", "p (sign)")  # fmt: skip


def interleaving_table(tests: Sequence[InterleavingTest]) -> InputTable:
    """The tests as a report table, a row per metric."""
    settings = tests[0].settings
    level = f"{settings.confidence:.0%}"
    return InputTable(
        "Interleaving: b against a",
        tuple(c.replace("CI", f"{level} CI") for c in COLUMNS),
        tuple(
            (
                t.metric,
                t.impressions,
                t.clicked,
                t.wins_b,
                t.wins_a,
                t.ties,
                t.preference,
                t.ci_low,
                t.ci_high,
                t.p_bootstrap,
                t.queries_b,
                t.queries_a,
                t.queries_tied,
                t.p_sign,
            )
            for t in tests
        ),
        description="Interleaved query issues, those with a click, and the ones whose clicks preferred b, a or "
        "neither; the preference is their mean outcome (+1 b, -1 a), with its interval and p-value from "
        f"{settings.replicates} Poisson bootstrap replicates over users (seed {settings.seed}); per query text, the "
        "queries whose mean outcome favours b or a, and the sign test over them.",
    )
