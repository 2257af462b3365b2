"""Simulated users for design: how much traffic an A/B test and an interleaving experiment need to tell
two rankings apart, and logs of simulated sessions.

Users are a fitted click model (:mod:`irspec_online.clickmodels`) clicking the lists they are shown:
each query issue picks a query (uniformly among those both rankings answer, or by ``weights``), is shown
ranking A's top ``depth`` or B's (an A/B test: half the traffic each) or a list interleaving both (drawn
from a bank of ``bank`` lists the interleaving method made for the query), and clicks as the model says.
A document the model has no parameters for gets the mean of the model's (see
:meth:`~irspec_online.clickmodels.ClickModel.for_pairs`).

**Power.** The query issues are independent, so each design's per-issue outcome (A/B: the metric, CTR or
clicks, in each arm; interleaving: the preference of the clicks, +1 B, -1 A, 0, NaN without a click) is
simulated once, ``sessions`` issues per design (the two arms with common random numbers, which estimate
the small difference between them closely), and its mean and variance give the power of a two-sided
test at level ``alpha`` for any traffic ``n`` by the normal approximation: the A/B test compares two
means of ``n/2`` issues each (Welch), the interleaving test the mean outcome of the issues with a click
against 0. The traffic each needs for a power (``n = ((z_{1-alpha/2} + z_power) s / delta)^2`` in the
design's terms) and their ratio say how much interleaving saves (Chapelle, Joachims, Radlinski and Yue,
"Large-scale validation and analysis of interleaved search evaluation", TOIS 2012: one to two orders of
magnitude). :func:`monte_carlo` checks an analytic power by running whole experiments.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

import irspec
from irspec import EvaluationError
from irspec.plugin_api import quote
from irspec_online.clickmodels import ClickModel, Sessions, Vocabulary, model_of
from irspec_online.columnar import list_array
from irspec_online.interleaving import implementation
from irspec_online.records import Clicks, first_repeat, key_of

__all__ = [
    "LOGGERS",
    "Design",
    "Power",
    "Simulation",
    "from_qrels",
    "logged",
    "logged_frame",
    "logged_records",
    "monte_carlo",
    "simulate",
    "truth",
]

METRICS = ("ctr", "clicks")
"""What the A/B test compares per query issue: ``ctr`` (whether it got a click) or ``clicks`` (how many)."""


def _generator(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, *map(_key, parts)])


def _key(part: str) -> int:
    """A seed's part: a text's key as an unsigned 64-bit number."""
    return key_of(part) & 0xFFFFFFFFFFFFFFFF


def _words(value: int) -> list[int]:
    """The 32-bit words numpy's :class:`~numpy.random.SeedSequence` makes of a non-negative integer in its
    entropy, least significant first (``[0]`` for 0): the words of a list of integers, concatenated, are
    the list's, and an array of them seeds the same generator without numpy converting each integer."""
    value = int(value)
    words = [value & 0xFFFFFFFF]
    while value > 0xFFFFFFFF:
        value >>= 32
        words.append(value & 0xFFFFFFFF)
    return words


@dataclass(frozen=True)
class Design:
    """What is simulated: a fitted click ``model``, the rankings ``a`` and ``b`` (``{query: [doc, ...]}``,
    best first, each document once), the interleaving ``method`` (a spec), the lists' ``depth``, the A/B
    test's ``metric`` (:data:`METRICS`), the ``bank`` of interleaved lists made per query, and optional
    query ``weights``."""

    model: ClickModel
    a: Mapping[str, Sequence[str]]
    b: Mapping[str, Sequence[str]]
    method: Any = "team-draft"
    depth: int = 10
    metric: str = "ctr"
    bank: int = 256
    weights: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise EvaluationError(
                f"the A/B test's metric must be one of {', '.join(METRICS)}, not {self.metric!r}"
            )
        if not 1 <= self.depth <= self.model.ranks:
            raise EvaluationError(
                f"depth must be from 1 to the model's {self.model.ranks} ranks, got {self.depth}"
            )
        known = self.model.known_ranks
        if self.depth > known:  # its users' examination there would be made up
            raise EvaluationError(
                f"depth must be at most {known}: the {self.model.name} model's examination is unknown "
                f"{f'below rank {known}' if known else 'at every rank'} (the log it was fitted to showed no "
                f"result there), got {self.depth}"
            )
        if not self.queries:
            raise EvaluationError("the two rankings answer no query in common")
        # A ranking lists a document once: the interleavers take the first `depth` distinct documents, which
        # with a repeat reach past the `depth` entries the simulation's users know (a KeyError, before)
        for name, ranking in (("a", self.a), ("b", self.b)):
            for q in self.queries:
                twice = first_repeat(ranking[q])
                if twice is not None:
                    raise EvaluationError(
                        f"ranking {name} lists document {quote(ranking[q][twice[1]])} twice for query "
                        f"{quote(q)}: a ranking lists each document once"
                    )

    @property
    def queries(self) -> list[str]:
        """The queries both rankings answer, sorted."""
        return sorted(set(self.a) & set(self.b))


@dataclass
class Simulation:
    """A design's users, ready to simulate: the model over the rankings' pairs, each query's lists."""

    design: Design
    seed: int = 0
    model: ClickModel = field(init=False)
    probability: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        d = self.design
        queries = d.queries
        pairs = sorted({(q, doc) for q in queries for ranking in (d.a, d.b) for doc in ranking[q][: d.depth]})
        self.model = d.model.for_pairs(pairs)
        code = self.model.vocabulary.codes
        self.lists = {name: _matrix([[code[(q, doc)] for doc in ranking[q][: d.depth]] for q in queries], d.depth)
                      for name, ranking in (("a", d.a), ("b", d.b))}  # fmt: skip
        weights = np.array([float((d.weights or {}).get(q, 1.0)) for q in queries])
        if not (weights >= 0).all() or weights.sum() <= 0:
            raise EvaluationError("query weights must be >= 0, and some > 0")
        self.probability = weights / weights.sum()
        interleaver = implementation(d.method)
        # each list drawn with its own generator, _generator(seed, "bank", q, str(i)), the texts' keys
        # computed once rather than once a list, and the seed given to numpy as the uint32 words it makes of
        # [seed, "bank", q, i] (_words): the same generator, made in half the time (issue 35). It is made as
        # default_rng makes it, Generator(PCG64(seed)), without default_rng's checks of its argument (a
        # quarter of making it); what depends on the rankings alone is computed once a query (_drawer)
        np.random.SeedSequence(self.seed)  # numpy's error for a seed it refuses, as default_rng gives it
        head = _words(self.seed) + _words(_key("bank"))
        tails = [_words(_key(str(i))) for i in range(d.bank)]
        generator, bit_generator = np.random.Generator, np.random.PCG64
        bank = []
        for q in queries:
            draw, start = _drawer(interleaver, list(d.a[q]), list(d.b[q]), d.depth), head + _words(_key(q))
            bank.append(
                [draw(generator(bit_generator(np.array(start + tail, dtype=np.uint32)))) for tail in tails]
            )
        # the lists' slots filled at once, row by row, past each list's end its fill (the arrays that lists
        # padded one by one made: a simulation's bank is tens of thousands of lists, issue 35)
        # (iterated by map and itertools: a third faster than generator expressions)
        served = list(itertools.chain.from_iterable(bank))
        length = np.fromiter(
            map(len, map(operator.attrgetter("docs"), served)), dtype=np.int64, count=len(served)
        )
        shape = (len(queries), d.bank, d.depth)

        def slots(name: str) -> Iterator[Any]:  # the served lists' values of the field, slot after slot
            return itertools.chain.from_iterable(map(operator.attrgetter(name), served))

        # each slot's query, its query's count of slots over, paired with the slot's document: its code
        owners = itertools.chain.from_iterable(map(itertools.repeat, queries, length.reshape(len(queries), -1).sum(axis=1).tolist()))  # fmt: skip
        pairs = map(code.__getitem__, zip(owners, slots("docs"), strict=True))
        self.bank_pairs = _filled(length, d.depth, pairs, -1, np.int64).reshape(shape)
        self.bank_length = length.reshape(len(queries), d.bank)
        self.bank_origin = {name: _filled(length, d.depth, slots(name), fill, dtype).reshape(shape)
                            for name, fill, dtype in (("team", -1, np.int64), ("rank_a", 0, np.int64),
                                                      ("rank_b", 0, np.int64), ("p_a", math.nan, np.float64))}  # fmt: skip
        self.interleaver = interleaver

    def _queries(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.choice(len(self.probability), size=n, p=self.probability)

    def ab(self, n: int, rng: np.random.Generator, common: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``n`` query issues shown A's lists and ``n`` shown B's: each issue's metric, per arm. ``common``
        gives both arms the same queries and random numbers (common random numbers: each arm's values are
        as likely as apart, and the difference of their means is estimated far more closely)."""
        out = []
        shared = (self._queries(n, rng), int(rng.integers(2**63))) if common else None
        for name in ("a", "b"):
            pairs, length = self.lists[name]
            q = shared[0] if shared else self._queries(n, rng)
            draws = np.random.default_rng(shared[1]) if shared else rng
            clicks = self.model.simulate(pairs[q], length[q], draws)
            out.append(
                clicks.any(axis=1).astype(np.float64)
                if self.design.metric == "ctr"
                else clicks.sum(axis=1) * 1.0
            )
        return out[0], out[1]

    def interleaved(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` query issues shown interleaved lists: each one's outcome (NaN without a click)."""
        q = self._queries(n, rng)
        j = rng.integers(0, self.design.bank, size=n)
        clicks = self.model.simulate(self.bank_pairs[q, j], self.bank_length[q, j], rng)
        rows, cols = np.nonzero(clicks)
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=start[1:])
        # the clicked slots' origins gathered at once, not each issue's whole list first (the same values),
        # by their places in the bank's arrays, counted once for the four
        at = (q[rows] * self.design.bank + j[rows]) * self.design.depth + cols
        origin = {k: v.reshape(-1)[at] for k, v in self.bank_origin.items()}
        clicked = Clicks(start, cols + 1, origin["team"], origin["rank_a"], origin["rank_b"], origin["p_a"],
                         np.zeros(len(rows), dtype=np.int64), np.full(len(rows), np.nan))  # fmt: skip
        values = self.interleaver.outcome(clicked)
        return np.where(clicks.any(axis=1), values, np.nan)

    def log(
        self, n: int, rng: np.random.Generator, interleaved: bool = True, start: float = 1714521600.0
    ) -> list[dict]:
        """``n`` simulated query issues as log records (interleaved lists with their origins, or an A/B
        test's, each issue its own user and session: ``arm`` ``a`` or ``b``): :meth:`records`, listed."""
        return list(self.records(n, rng, interleaved, start))

    def records(
        self, n: int, rng: np.random.Generator, interleaved: bool = True, start: float = 1714521600.0
    ) -> Iterator[dict]:
        """:meth:`log`'s records one at a time, drawn from ``rng`` now (the same draws, in the same order, as
        :meth:`log`): a log of millions is written as it is made, a record taking ~5 KB where the draws
        take a few hundred bytes a query issue."""
        q = self._queries(n, rng)
        j = arm = None  # the bank's list of each issue (interleaved), or its arm (an A/B test)
        if interleaved:
            j = rng.integers(0, self.design.bank, size=n)
            pairs, length = self.bank_pairs[q, j], self.bank_length[q, j]
        else:
            arm = rng.integers(0, 2, size=n)
            pa, la = self.lists["a"]
            pb, lb = self.lists["b"]
            pairs = np.where(arm[:, None] == 0, pa[q], pb[q])
            length = np.where(arm == 0, la[q], lb[q])
        clicks = self.model.simulate(pairs, length, rng)
        return self._records(n, q, j, arm, pairs, length, clicks, start)

    def _records(self, n: int, q: np.ndarray, j: np.ndarray | None, arm: np.ndarray | None, pairs: np.ndarray,
                 length: np.ndarray, clicks: np.ndarray, start: float) -> Iterator[dict]:  # fmt: skip
        queries = self.design.queries
        docs = self.model.vocabulary.pairs()
        for rows in _blocks(n):
            origin = (
                {k: v[q[rows], j[rows]].tolist() for k, v in self.bank_origin.items()}
                if j is not None
                else None
            )
            arms = arm[rows].tolist() if arm is not None else None
            for k, rec in _block_records(rows, pairs, length, clicks, q, queries, docs, start):
                results = rec["results"]
                if origin is not None:
                    team, rank_a, rank_b, p_a = (
                        origin["team"][k],
                        origin["rank_a"][k],
                        origin["rank_b"][k],
                        origin["p_a"][k],
                    )
                    rec["origins"] = [
                        {
                            **({"team": "ab"[team[r]]} if team[r] >= 0 else {}),
                            "rank_a": rank_a[r],
                            "rank_b": rank_b[r],
                            **({} if math.isnan(p_a[r]) else {"p_a": p_a[r]}),
                        }
                        for r in range(len(results))
                    ]
                elif arms is not None:
                    rec["arm"] = "ab"[arms[k]]
                yield rec


def _block_records(rows: slice, shown: np.ndarray, size: np.ndarray, clicks: np.ndarray, q: np.ndarray,
                   queries: Sequence[str], docs: Sequence[tuple[Any, str]], start: float) -> Iterator[tuple[int, dict]]:  # fmt: skip
    """The records of the rows ``rows`` (a block of :func:`_blocks`), each with its place in the block:
    session, user, query, timestamp, the results ``shown`` (their first ``size``) and the ``clicks`` on
    them, which every simulated log's records have. A block's values are made Python's at once (numpy's,
    read row by row, took most of the time)."""
    listed, sizes, clicked, which = (x[rows].tolist() for x in (shown, size, clicks, q))
    for k, i in enumerate(range(rows.start, rows.stop)):
        results = [docs[c][1] for c in listed[k][: sizes[k]]]
        yield (
            k,
            {
                "session": f"s{i}",
                "user": f"u{i}",
                "query": queries[which[k]],
                "qid": queries[which[k]],
                "timestamp": start + i,
                "results": results,
                "clicks": [{"doc": results[r], "rank": r + 1} for r, c in enumerate(clicked[k]) if c],
            },
        )


ROWS_AT_ONCE = 4096
"""The records made from a block of this many rows of the draws at a time (:func:`_blocks`)."""


def _blocks(n: int) -> Iterator[slice]:
    """The rows ``0..n`` a block of :data:`ROWS_AT_ONCE` at a time: whose values a record maker turns into
    Python's at once (``tolist``), memory a block's, however many records."""
    for at in range(0, n, ROWS_AT_ONCE):
        yield slice(at, min(n, at + ROWS_AT_ONCE))


LOGGERS = ("ranking", "shuffle", "swap")
"""How :meth:`Simulation.logged` shows ranking A: as it is, shuffled, or with a swap intervention."""


def logged(sim: Simulation, n: int, rng: np.random.Generator, logger: str = "ranking",
           start: float = 1714521600.0) -> list[dict]:  # fmt: skip
    """``n`` simulated query issues of ranking A served by a ``logger``: ``ranking`` shows A's top as it is;
    ``shuffle`` a uniformly random permutation of it (each document in each slot with probability 1/L,
    the records' ``propensities``); ``swap`` A's top with its first result swapped with the one at rank
    ``k``, uniform (Joachims et al.'s intervention; the records' ``swap: k``, 1 for none: a swap experiment,
    whose own randomisation covers too few rankings to estimate them by, so no ``propensities``). The logs
    of counterfactual estimates and swap experiments; :func:`logged_frame` gives the same log as a frame."""
    return list(logged_records(sim, n, rng, logger, start))


def logged_records(sim: Simulation, n: int, rng: np.random.Generator, logger: str = "ranking",
                   start: float = 1714521600.0) -> Iterator[dict]:  # fmt: skip
    """:func:`logged`'s records one at a time, drawn from ``rng`` now (the same draws as :func:`logged`):
    written as they are made, as :meth:`Simulation.records` are."""
    return _logged_records(_Logged.drawn(sim, n, rng, logger), sim, n, logger, start)


def _logged_records(draw: Any, sim: Simulation, n: int, logger: str, start: float) -> Iterator[dict]:
    queries, docs = sim.design.queries, sim.model.vocabulary.pairs()
    for rows in _blocks(n):
        propensity = draw.propensity[rows].tolist() if logger == "shuffle" else None
        swap = draw.swap[rows].tolist() if logger == "swap" else None
        for k, rec in _block_records(rows, draw.shown, draw.size, draw.clicks, draw.q, queries, docs, start):
            if propensity is not None:
                rec["propensities"] = propensity[k][: len(rec["results"])]
            if swap is not None:
                rec["swap"] = swap[k]
            yield rec


def logged_frame(sim: Simulation, n: int, rng: np.random.Generator, logger: str = "ranking",
                 start: float = 1714521600.0) -> pl.DataFrame:  # fmt: skip
    """:func:`logged`'s log, drawn the same from the same ``rng``, as a polars DataFrame of the records'
    columns (row ``i`` holds record ``i``'s values), made from the simulation's arrays a column at a time:
    no record is made, and the log's reader checks and summarises it a batch of columns at a time
    (:mod:`irspec_online.columnar`), where a list of records is read one by one. Needs pyarrow (the
    ``parquet`` extra)."""
    import pyarrow as pa

    draw = _Logged.drawn(sim, n, rng, logger)
    queries, docs = sim.design.queries, sim.model.vocabulary.pairs()
    names = np.array([doc for _, doc in docs] + [""], dtype=object)  # codes past the vocabulary: padding
    inside = np.arange(draw.shown.shape[1])[None, :] < draw.size[:, None]
    results = list_array(draw.size, pa.array(names[draw.shown[inside]].tolist(), pa.string()))
    row, col = np.nonzero(draw.clicks & inside)  # in row order, then rank order, as the records'
    clicked = pa.StructArray.from_arrays(
        [pa.array(names[draw.shown[row, col]].tolist(), pa.string()), pa.array(col + 1, pa.int64())],
        names=["doc", "rank"],
    )
    clicks = list_array(np.bincount(row, minlength=n), clicked)
    ids = np.arange(n).astype(str)
    query = np.array(queries, dtype=object)[draw.q].tolist()
    columns = {
        "session": pa.array(np.char.add("s", ids).tolist(), pa.string()),
        "user": pa.array(np.char.add("u", ids).tolist(), pa.string()),
        "query": pa.array(query, pa.string()),
        "qid": pa.array(query, pa.string()),
        "timestamp": pa.array(start + np.arange(n), pa.float64()),
        "results": results,
        "clicks": clicks,
    }
    if logger == "shuffle":
        columns["propensities"] = list_array(draw.size, pa.array(draw.propensity[inside], pa.float64()))
    if logger == "swap":
        columns["swap"] = pa.array(draw.swap, pa.int64())
    return pl.DataFrame(pl.from_arrow(pa.table(columns)))


@dataclass(frozen=True)
class _Logged:
    """What :func:`logged` draws: each query issue's query (``q``, an index into the design's queries),
    the codes of the documents shown (``shown``, ``n x depth``; a row's first ``size`` are shown), the
    rank swapped with the first (``swap``, 1 for none), each slot's logging probability (``propensity``)
    and the slots clicked (``clicks``)."""

    q: np.ndarray
    shown: np.ndarray
    size: np.ndarray
    swap: np.ndarray
    propensity: np.ndarray
    clicks: np.ndarray

    @classmethod
    def drawn(cls, sim: Simulation, n: int, rng: np.random.Generator, logger: str) -> _Logged:
        if logger not in LOGGERS:
            raise EvaluationError(f"the logger must be one of {', '.join(LOGGERS)}, not {logger!r}")
        pairs, length = sim.lists["a"]
        q = sim._queries(n, rng)
        shown = pairs[q].copy()
        size = length[q]
        swap = np.ones(n, dtype=np.int64)
        propensity = np.ones(shown.shape)
        if logger == "shuffle":
            keys = np.where(
                np.arange(shown.shape[1])[None, :] < size[:, None], rng.random(shown.shape), np.inf
            )
            shown = np.take_along_axis(shown, np.argsort(keys, axis=1), axis=1)
            propensity = np.repeat(1.0 / size[:, None], shown.shape[1], axis=1)
        elif logger == "swap":
            swap = (rng.random(n) * size).astype(np.int64) + 1
            rows = np.arange(n)
            top = shown[:, 0].copy()
            shown[:, 0] = shown[rows, swap - 1]
            shown[rows, swap - 1] = top
        clicks = sim.model.simulate(shown, size, rng)
        return cls(q, shown, size, swap, propensity, clicks)


def truth(sim: Simulation, measure: str, k: int, ranking: str = "b") -> float:
    """The expected measure (``ctr``: clicks on the top ``k``; ``rr``: sum of 1/rank of the clicks; ``click``:
    clicks at rank ``k``) per query issue of a ranking's lists under the simulation's users, exactly: each
    rank's unconditional click probability (:meth:`~irspec_online.clickmodels.ClickModel.probabilities`),
    weighted by the query probabilities."""
    pairs, length = sim.lists[ranking]
    full, _ = sim.model.probabilities(
        Sessions(pairs, np.zeros(pairs.shape, dtype=bool), length, np.ones(len(length)), sim.model.vocabulary)
    )
    r = np.arange(1, pairs.shape[1] + 1)
    weight = {"ctr": (r <= k) * 1.0, "rr": (r <= k) / r, "click": (r == k) * 1.0}[measure]
    full = np.where(np.arange(pairs.shape[1])[None, :] < length[:, None], full, 0.0)
    return float(sim.probability @ (full @ weight))


def _drawer(interleaver: Any, a: list[str], b: list[str], depth: int) -> Callable[[np.random.Generator], Any]:
    """The lists of one query drawn from ``a`` and ``b``, a generator a list: by the method's ``prepare``,
    once, and ``draw`` where it has them (:mod:`irspec_online.interleaving`), else by its ``interleave``."""
    if hasattr(interleaver, "prepare") and hasattr(interleaver, "draw"):
        return functools.partial(interleaver.draw, interleaver.prepare(a, b, depth))
    return lambda rng: interleaver.interleave(a, b, rng, depth)


def _filled(length: np.ndarray, depth: int, values: Iterable[Any], fill: Any, dtype: Any) -> np.ndarray:
    """A row of ``depth`` slots for each of ``length``: row ``i`` its ``length[i]`` of ``values`` (given
    row after row), then ``fill``; filled at once, not row by row (a simulation's bank is tens of
    thousands of lists, issue 35)."""
    out = np.full((len(length), depth), fill, dtype=dtype)
    out[np.arange(depth) < length[:, None]] = np.fromiter(values, dtype=dtype, count=int(length.sum()))
    return out


def _matrix(rows: list[list[int]], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` (each at most ``depth`` long) as a matrix padded with ``-1``, and their lengths."""
    length = np.array([len(r) for r in rows], dtype=np.int64)
    return _filled(length, depth, itertools.chain.from_iterable(rows), -1, np.int64), length


@dataclass(frozen=True)
class Power:
    """What a design's simulation says: the per-issue moments of each test and the traffic each needs.

    ``ab_mean`` and ``ab_variance`` are each arm's metric per query issue (A, B); ``il_mean`` and
    ``il_variance`` the interleaving outcome over the issues with a click, ``il_clicked`` their share.
    ``ab_needed`` and ``il_needed`` are the query issues each design needs for ``power`` at ``alpha``
    (the A/B test's both arms together); ``ratio`` is ``ab_needed / il_needed``. ``sessions`` issues
    were simulated per design."""

    sessions: int
    alpha: float
    power: float
    ab_mean: tuple[float, float]
    ab_variance: tuple[float, float]
    il_mean: float
    il_variance: float
    il_clicked: float

    @property
    def ab_needed(self) -> float:
        """Query issues (both arms) the A/B test needs: ``2 ((z_a + z_p) sqrt(v_a + v_b) / |d|)^2``."""
        delta = self.ab_mean[1] - self.ab_mean[0]
        return _needed(delta, sum(self.ab_variance), self.alpha, self.power, arms=2)

    @property
    def il_needed(self) -> float:
        """Query issues the interleaving test needs (those without a click included):
        ``((z_a + z_p) s / |m|)^2 / clicked share``."""
        return _needed(self.il_mean, self.il_variance, self.alpha, self.power, arms=1) / max(
            self.il_clicked, 1e-300
        )

    @property
    def ratio(self) -> float:
        """How many times more traffic the A/B test needs than interleaving for the same power."""
        return self.ab_needed / self.il_needed

    def ab_power(self, n: float) -> float:
        """The A/B test's power with ``n`` query issues, half per arm."""
        delta = self.ab_mean[1] - self.ab_mean[0]
        return _power(delta, math.sqrt(sum(self.ab_variance) / (n / 2)), self.alpha)

    def il_power(self, n: float) -> float:
        """The interleaving test's power with ``n`` query issues (a share ``il_clicked`` with a click)."""
        return _power(
            self.il_mean, math.sqrt(self.il_variance / max(n * self.il_clicked, 1e-300)), self.alpha
        )

    def table(self, traffic: Sequence[float]) -> list[tuple[float, float, float]]:
        """``(n, A/B power, interleaving power)`` for each traffic ``n``."""
        return [(n, self.ab_power(n), self.il_power(n)) for n in traffic]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            **self.__dict__,
            "ab_needed": self.ab_needed,
            "il_needed": self.il_needed,
            "ratio": self.ratio,
        }


def _z(p: float) -> float:
    # scipy.special's ndtri and ndtr are what scipy.stats' norm.ppf and norm.sf compute with (the same
    # bits): scipy.stats, several times as slow to import, is left to the simulations that test
    from scipy.special import ndtri

    return float(ndtri(p))


def _needed(delta: float, variance: float, alpha: float, power: float, arms: int) -> float:
    if delta == 0:
        return math.inf
    return arms * ((_z(1 - alpha / 2) + _z(power)) * math.sqrt(variance) / abs(delta)) ** 2


def _power(delta: float, se: float, alpha: float) -> float:
    """A two-sided normal test's power to find ``delta`` in its direction."""
    from scipy.special import ndtr

    if se == 0:
        return 1.0 if delta else alpha / 2
    return float(ndtr(abs(delta) / se - _z(1 - alpha / 2)))


def simulate(design: Design, sessions: int = 1_000_000, alpha: float = 0.05, power: float = 0.8,
             seed: int = 0, simulation: Simulation | None = None) -> Power:  # fmt: skip
    """Simulate ``sessions`` query issues per design (A/B: per arm) and compute the tests' power.
    ``simulation``: ``Simulation(design, seed)``, made already (see :func:`_made`)."""
    if sessions < 2:
        raise EvaluationError(f"simulate at least 2 sessions, not {sessions}")
    if not (0 < alpha < 1 and 0 < power < 1):
        raise EvaluationError("alpha and power must be strictly between 0 and 1")
    sim = _made(design, seed, simulation)
    rng = _generator(seed, "simulate")
    a, b = sim.ab(sessions, rng, common=True)
    outcome = sim.interleaved(sessions, rng)
    clicked = outcome[~np.isnan(outcome)]
    return Power(sessions, alpha, power, (float(a.mean()), float(b.mean())), (float(a.var(ddof=1)), float(b.var(ddof=1))),
                 float(clicked.mean()) if len(clicked) else 0.0, float(clicked.var(ddof=1)) if len(clicked) > 1 else 0.0,
                 len(clicked) / sessions)  # fmt: skip


def monte_carlo(
    design: Design,
    n: int,
    experiments: int,
    alpha: float = 0.05,
    seed: int = 0,
    simulation: Simulation | None = None,
) -> tuple[float, float]:
    """The share of ``experiments`` whole experiments of ``n`` query issues each that find B better (a
    two-sided test at ``alpha`` in B's direction): ``(A/B: Welch's t, interleaving: the t-test of the mean
    outcome against 0)``. ``simulation``: ``Simulation(design, seed)``, made already (see :func:`_made`)."""
    from scipy.stats import ttest_1samp, ttest_ind

    sim = _made(design, seed, simulation)
    found_ab = found_il = 0
    for e in range(experiments):
        rng = _generator(seed, "experiment", str(e))
        a, b = sim.ab(n // 2, rng)
        t = ttest_ind(b, a, equal_var=False)
        found_ab += bool(t.pvalue < alpha and t.statistic > 0)
        outcome = sim.interleaved(n, rng)
        clicked = outcome[~np.isnan(outcome)]
        if len(clicked) > 1 and clicked.var() > 0:
            t = ttest_1samp(clicked, 0.0)
            found_il += bool(t.pvalue < alpha and t.statistic > 0)
    return found_ab / experiments, found_il / experiments


def _made(design: Design, seed: int, simulation: Simulation | None) -> Simulation:
    """``Simulation(design, seed)``: ``simulation`` if given (its bank is most of the time a simulation of
    a few thousand query issues takes: experiments at several traffics, or a power and a log, share one),
    which must be that."""
    if simulation is None:
        return Simulation(design, seed)
    if simulation.design is not design or simulation.seed != seed:
        raise EvaluationError("the simulation given is not the design's with this seed")
    return simulation


UNJUDGED = 0.02
"""The attractiveness :func:`from_qrels` gives a document the qrels do not judge (and one judged 0):
users click a few of them."""


def from_qrels(
    qrels: Any, model: Any = "dbn", unjudged: float = UNJUDGED, continuation: float = 0.9
) -> ClickModel:
    """A click model whose users know the judgments: each judged pair's attractiveness (and, for DBN,
    satisfaction) is ERR's mapping of its label ``g``, ``(2^g - 1) / 2^g_max`` (Chapelle, Metzler, Zhang
    and Grinspan, CIKM 2009), at least ``unjudged`` (a pair the model does not know gets ``unjudged``
    too); examination falls as ``1 / r`` (PBM's and UBM's, each column), DCM's and DBN's continuation is
    ``continuation``. For simulations where the better ranking is known (the one the qrels prefer)."""
    frame = irspec.read_qrels(qrels).frame
    top = max(int(frame["label"].max()), 1)
    made = model_of(model)
    made._start(0)
    made.vocabulary = Vocabulary()
    values = []
    for q, d, g in zip(
        frame["query"].to_list(), frame["docno"].to_list(), frame["label"].to_list(), strict=True
    ):
        made.vocabulary.code(q, d)
        # (2^g - 1) / 2^top, written so that no power overflows (a label of 1024 did); the same bits for
        # labels up to 53, where both are exact
        values.append(max(2.0 ** (max(g, 0) - top) - 2.0**-top, unjudged))
    made.attr = np.array(values)
    ranks = made.ranks
    if hasattr(made, "sat"):
        made.sat = made.attr.copy()
    if isinstance(getattr(made, "cont", None), float):
        made.cont = continuation
    elif hasattr(made, "cont"):
        made.cont = np.full(ranks, continuation)
    if hasattr(made, "exam"):
        fall = 1.0 / np.arange(1, ranks + 1)
        made.exam = fall if made.exam.ndim == 1 else np.repeat(fall[:, None], ranks + 1, axis=1)
    made.iterations, made.sessions = 0, 0.0
    made.unseen = {"attr": unjudged, "sat": unjudged}
    return made
