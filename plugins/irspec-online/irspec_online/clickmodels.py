"""Click models (Chuklin, Markov and de Rijke, "Click Models for Web Search", 2015): fitted to a log by EM
(or by counting, where the model has a closed form), evaluated by log-likelihood and perplexity, and
used to simulate users.

A model is registered through irspec's ``irspec_register_click_models`` hook (:mod:`irspec_online.plugin`)
as a :class:`ClickModel` subclass, built from its bound spec. Sessions are a compact table
(:class:`Sessions`): per query issue, the codes of its (query, document) pairs at ranks 1..``RANKS`` and
which were clicked, identical sessions merged into one with a weight. Every model is vectorised over the
sessions with numpy, and each EM iteration is one pass over the table chunk by chunk
(:meth:`Sessions.chunks`), so that a table on disk (:mod:`irspec_online.clickstream`) is fitted in
bounded memory by the same code. PBM and UBM, whose E step reads each result on its own, make one pass
into cells (a pair, an examination parameter, a click: :class:`_Cells`) and iterate over those.

The models, their parameters and their updates (``alpha``: attractiveness of a query-document pair,
``gamma``: examination or continuation; ``E``, ``A``, ``S``, ``C``: examined, attracted, satisfied, clicked):

* **PBM**, position-based (Craswell et al., WSDM 2008; Richardson et al. 2007): ``P(C_r) = alpha_qd
  gamma_r``. EM: a click gives ``A = E = 1``; no click gives ``P(A = 1 | C = 0) = alpha (1 - gamma) /
  (1 - alpha gamma)`` and ``P(E = 1 | C = 0) = gamma (1 - alpha) / (1 - alpha gamma)``.
* **CM**, cascade (Craswell et al., WSDM 2008): the user scans down and stops at the first click;
  ``alpha_qd`` = clicks / impressions over the ranks down to the first click (a closed form).
* **DCM**, dependent click (Guo, Liu and Wang, WSDM 2009): after a click at rank ``r`` the user goes on
  with probability ``lambda_r``; with the last click taken as satisfying, ``alpha_qd`` is counted over
  the ranks down to the last click (all of a session without clicks) and ``lambda_r`` is the share of
  clicks at ``r`` that are not the last (closed forms).
* **UBM**, user browsing (Dupret and Piwowarski, SIGIR 2008): ``P(C_r) = alpha_qd gamma_{r, r'}`` with
  ``r'`` the rank of the previous click (0: none); EM as PBM's.
* **DBN**, dynamic Bayesian network (Chapelle and Zhang, WWW 2009): examine, be attracted (``alpha``),
  click, be satisfied (``sigma_qd``) and stop, or go on with probability ``gamma``. EM with the exact
  posteriors: for an unclicked result after the last click (every result of a session without a
  click), ``P(A = 1 | C) = alpha (1 - e) / (1 - e car)`` with ``e = P(E_r = 1 | C_<r)`` and ``car`` the
  probability of a click at or below ``r`` once ``r`` is examined; for the last click, ``P(S = 1 | C) =
  sigma / (1 - (1 - sigma) gamma car_{r+1})``; ``gamma``'s from the posterior of each transition
  ``(E_r = 1, S_r = 0) -> E_{r+1}`` by a forward and a backward pass.

Every estimate is ``(1 + numerator) / (2 + denominator)``, a Beta(1, 1) prior that gives an unseen pair
0.5, the EM ones at most ``1 - 1e-6``, 50 EM iterations from 0.5: PyClick's conventions, so that the
parameters equal PyClick's (``tests/test_clickmodels.py``, on a log PyClick fitted; its DBN with three
of its departures from the model mended, listed in ``tests/reference/pyclick_reference.py``). One
departure: an examination parameter no result of the log fell under (PBM's at a rank below every page of
the log, UBM's at a rank and previous click never seen together), which PyClick leaves at the prior's 0.5,
is unknown here: NaN, ``null`` in the JSON, so that IPS leaves out the clicks it would weigh
(:mod:`irspec_online.counterfactual`) rather than weigh them by a made-up 0.5. A simulation refuses the
ranks the log never showed; a held-out session's probabilities read an unknown examination as 0.5, as
PyClick's do.
Log-likelihood and perplexity are computed as PyClick computes them (``LogLikelihood``: the mean over
sessions of the mean log of each result's click probability given the clicks above it; ``Perplexity``:
per rank, ``2 ** -(mean log2 P(observed click))`` with unconditional click probabilities, and their mean),
with two departures. A rank's perplexity is over the sessions that show a result there, and the mean
over the ranks the sessions show (:meth:`ClickModel.perplexity`; PyClick divides by every session and
averages over 10 ranks, a rank never shown counting 1). CM's probability given the clicks above is the
model's (Chuklin et al., section 4.1: ``attr`` down to the first click, then no click certain and a click
impossible, floored at :data:`PROB_MIN`), where PyClick's ``CM.get_conditional_click_probs`` gives the
unconditional one above the first click and ``PROB_MIN`` to every result below it.
"""

from __future__ import annotations

import copy
import json
import pkgutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from irspec import EvaluationError, InputError, IrspecError, plugin_api
from irspec_online import columnar
from irspec_online.records import RANK_LIMIT, KeyTwice, checked_records, key_of, keys_of, once, whole

__all__ = [
    "CM",
    "DBN",
    "DCM",
    "ITERATIONS",
    "PBM",
    "PROB_MAX",
    "RANKS",
    "UBM",
    "ClickModel",
    "Sessions",
    "Swap",
    "Vocabulary",
    "added",
    "held_out",
    "held_out_rows",
    "json_data",
    "load",
    "model_of",
    "session_rows",
    "swap_tally",
]

RANKS = 10
"""The results of a session a click model reads (PyClick's ``MAX_RANK_DEFAULT``): the top 10."""
ITERATIONS = 50
"""EM iterations (PyClick's ``EMInference.ITERATION_NUM``)."""
PROB_MAX = 1 - 1e-6
"""The largest value an EM estimate takes (PyClick's ``ParamEM.PROB_MIN`` from 1), so that no
probability of a click or of none is 0."""
PROB_MIN = 1e-6
"""The cascade model's probability of a click below a session's first click, which the model makes
impossible (PyClick's ``CM.PROB_MIN``): a floor, so that the log-likelihood of a log with such clicks is
finite (and each of them costs ``log(1e-6)``)."""
PRIOR = 0.5
"""The Beta(1, 1) prior's mean: every estimate's start, and what a prediction (a held-out session's
probabilities, a simulation) reads for an examination parameter the fit left unknown (NaN)."""


# --------------------------------------------------------------------------------------------------
# Sessions


class Vocabulary:
    """The (query, document) pairs of a log, each with a code (0, 1, ...), in the order first seen."""

    def __init__(self) -> None:
        self.codes: dict[tuple[str, str], int] = {}

    def code(self, query: str, doc: str) -> int:
        """The code of a pair, a new one when unseen."""
        key = (query, doc)
        found = self.codes.get(key)
        if found is None:
            found = self.codes[key] = len(self.codes)
        return found

    def codes_of(self, query: pl.Series, doc: pl.Series) -> np.ndarray:
        """The code of each pair ``(query[i], doc[i])``, new ones coded in the order first seen: each
        distinct pair looked up once."""
        if len(doc) == 0:
            return np.zeros(0, dtype=np.int64)
        found = (
            pl.DataFrame({"q": query, "d": doc}).with_row_index("i")
            .group_by("q", "d", maintain_order=True).agg("i")  # the pairs in the order first seen
        )  # fmt: skip
        code = self.code
        codes = np.fromiter((code(q, d) for q, d in zip(found["q"].to_list(), found["d"].to_list(), strict=True)),
                            dtype=np.int64, count=found.height)  # fmt: skip
        out = np.empty(len(doc), dtype=np.int64)
        out[found["i"].explode().to_numpy()] = np.repeat(codes, found["i"].list.len().to_numpy())
        return out

    def __len__(self) -> int:
        return len(self.codes)

    def pairs(self) -> list[tuple[str, str]]:
        """Every pair, in code order."""
        return list(self.codes)

    def nested(self, values: np.ndarray) -> dict[str, dict[str, float]]:
        """A value per pair as ``{query: {doc: value}}``."""
        out: dict[str, dict[str, float]] = {}
        for (q, d), v in zip(self.codes, values.tolist(), strict=False):
            out.setdefault(q, {})[d] = v
        return out


@dataclass
class Sessions:
    """Click-model sessions: ``pairs`` (n x :data:`RANKS`, int64) the codes of the pairs shown at each rank
    (-1 past a session's end), ``clicks`` (n x RANKS, bool), ``length`` (the results shown, at most RANKS)
    and ``weight`` (how many identical sessions each row stands for); ``vocabulary`` names the codes."""

    pairs: np.ndarray
    clicks: np.ndarray
    length: np.ndarray
    weight: np.ndarray
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    compacted: bool = False
    """Whether identical sessions are merged already (:meth:`compact`)."""

    def __len__(self) -> int:
        return len(self.length)

    @property
    def count(self) -> float:
        """The sessions the rows stand for."""
        return float(self.weight.sum())

    @property
    def valid(self) -> np.ndarray:
        """``(n, RANKS)``: whether each rank holds a result."""
        return np.arange(self.pairs.shape[1])[None, :] < self.length[:, None]

    def chunks(self, rows: int = 1 << 20) -> Iterator[Sessions]:
        """The table ``rows`` sessions at a time (a table in memory: itself, in slices)."""
        for start in range(0, len(self), rows):
            end = start + rows
            yield Sessions(self.pairs[start:end], self.clicks[start:end], self.length[start:end],
                           self.weight[start:end], self.vocabulary)  # fmt: skip

    def reduce(self, function: Any) -> Any:
        """``function`` of each chunk (:meth:`chunks`), the results :func:`added` up (None: no sessions).
        A table Spark holds (:class:`irspec_online.spark.SparkSessions`) does the same on its workers."""
        total = None
        for chunk in self.chunks():
            total = added(total, function(chunk))
        return total

    def compact(self) -> Sessions:
        """Identical sessions (the same pairs and clicks) merged into one row of their summed weight, in
        the order first seen (a hash group-by of polars over the rows' columns)."""
        if len(self) == 0 or self.compacted:
            return self
        ranks = self.pairs.shape[1]
        bits = (self.clicks.astype(np.int64) << np.arange(ranks, dtype=np.int64)).sum(
            axis=1
        )  # clicks as a mask
        columns = {f"p{r}": self.pairs[:, r] for r in range(ranks)} | {"clicks": bits, "length": self.length}
        merged = (
            pl.DataFrame({**columns, "weight": self.weight})
            .group_by(list(columns), maintain_order=True)
            .agg(pl.col("weight").sum())
        )
        pairs = merged.select([f"p{r}" for r in range(ranks)]).to_numpy().astype(np.int64).reshape(-1, ranks)
        mask = merged["clicks"].to_numpy()
        clicks = ((mask[:, None] >> np.arange(ranks, dtype=np.int64)) & 1).astype(bool)
        length, weight = merged["length"].to_numpy().astype(np.int64), merged["weight"].to_numpy()
        return Sessions(pairs, clicks, length, weight, self.vocabulary, compacted=True)

    @classmethod
    def empty(cls, vocabulary: Vocabulary | None = None) -> Sessions:
        """No sessions."""
        return cls(np.zeros((0, RANKS), dtype=np.int64), np.zeros((0, RANKS), dtype=bool), np.zeros(0, dtype=np.int64),
                   np.zeros(0), vocabulary if vocabulary is not None else Vocabulary())  # fmt: skip

    @classmethod
    def of_records(cls, records: Iterable[tuple[int, Any]], where: str, unit: str = "line",
                   vocabulary: Vocabulary | None = None) -> Sessions:  # fmt: skip
        """The sessions of log records (each ``(line or row, record)``, or a batch of Arrow columns:
        :class:`irspec_online.columnar.Rows`), checked as every reader of the log checks them: a session per
        query issue, its top :data:`RANKS` results and the clicks on them (a click's rank, or its
        document's position among the results)."""
        return cls.of_batch(columnar.sessions(records, where, unit, RANKS), vocabulary)

    @classmethod
    def of_batch(cls, batch: columnar.Sessions, vocabulary: Vocabulary | None = None) -> Sessions:
        """The sessions of a batch's (:func:`irspec_online.columnar.sessions`), their pairs coded in
        ``vocabulary`` (new pairs in the order first seen)."""
        vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        n = len(batch)
        pairs = np.full((n, RANKS), -1, dtype=np.int64)
        rows = np.repeat(np.arange(n), batch.length)
        ranks = np.arange(len(rows)) - np.repeat(np.cumsum(batch.length) - batch.length, batch.length)
        pairs[rows, ranks] = vocabulary.codes_of(batch.query.gather(rows), batch.docs)
        return cls(pairs, batch.clicks, batch.length, np.ones(n), vocabulary)

    @classmethod
    def concat(cls, parts: Sequence[Sessions]) -> Sessions:
        """Sessions of several tables of one vocabulary, one after the other."""
        if not parts:
            return cls.empty()
        return cls(np.concatenate([p.pairs for p in parts]), np.concatenate([p.clicks for p in parts]),
                   np.concatenate([p.length for p in parts]), np.concatenate([p.weight for p in parts]),
                   parts[0].vocabulary)  # fmt: skip


def session_rows(
    records: Iterable[tuple[int, Any]], where: str, unit: str = "line", problems: list | None = None
) -> Iterator[tuple[Any, list[str], list[bool]]]:
    """Each record (``(line or row, record)``, checked as every reader checks them; a bad one's problem in
    ``problems``, given one: :func:`~irspec_online.records.checked_records`) as a click-model session: the
    record, its top :data:`RANKS` results and whether each of the :data:`RANKS` ranks was clicked (a
    click's rank, or its document's position among the results)."""
    for rec, ranks in checked_records(records, where, unit, problems):
        shown = rec["results"][:RANKS]
        clicked = [False] * RANKS
        for rank in ranks:
            if rank <= len(shown):
                clicked[rank - 1] = True
        yield rec, shown, clicked


def held_out(session: Any, holdout: float) -> bool:
    """Whether a query issue of this session id is held out: a key of the id in the ``holdout`` share,
    the same in every process and whatever the log's order or form."""
    return (key_of(str(session)) & 0xFFFFFFFF) / 2**32 < holdout


def held_out_rows(sessions: list[str], holdout: float) -> np.ndarray:
    """:func:`held_out` of each session id (texts), at once."""
    return (keys_of(sessions) & 0xFFFFFFFF) / 2**32 < holdout


def swap_tally(
    records: Iterable[tuple[int, Any]], where: str, unit: str, ranks: int, problems: list | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`swap_counts` of some records (``(line or row, record)``), each checked (a bad record's
    problem in ``problems``, given one, else an :class:`irspec.InputError`)."""
    shown, clicked = np.zeros(ranks), np.zeros(ranks)
    for number, rec in records:
        for _, ranks_clicked in checked_records([(number, rec)], where, unit, problems):
            k = whole(rec.get("swap"))  # pandas' integers with nulls are floats
            if k is None:
                continue
            shown_here = len(rec["results"])
            problem = None
            if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= ranks:
                problem = f"swap must be a rank from 1 to {ranks}, got {plugin_api.quote(k)}"
            elif k > shown_here:
                problem = (
                    f"swap {k}: the top result cannot have been swapped with rank {k} of {shown_here} results"
                )
            if problem is not None:
                if problems is None:
                    raise InputError(f"{unit} {number}: {problem}", where)
                problems.append((number, problem))
                continue
            shown[k - 1] += 1
            clicked[k - 1] += k in ranks_clicked
    return shown, clicked


def added(total: Any, part: Any) -> Any:
    """Two sums of the same shape added (numbers, arrays, and tuples or dicts of them; ``None`` is
    nothing yet): how the parts of an E step or an evaluation, a chunk's or a Spark partition's, are
    reduced into one."""
    if total is None:
        return part
    if isinstance(part, dict):
        return {k: added(total[k], v) for k, v in part.items()}
    if isinstance(part, tuple):
        return tuple(added(t, v) for t, v in zip(total, part, strict=True))
    return total + part


class _Counted(Vocabulary):
    """A vocabulary's size without its pairs: all an E step reads of it, light to send to a Spark worker."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def __len__(self) -> int:
        return self.size


def _gather(values: np.ndarray, pairs: np.ndarray, unseen: float = 0.5) -> np.ndarray:
    """Each pair's value (a pair past the end of the table, or -1: ``unseen``)."""
    # one gather from the values with ``unseen`` appended, where an unknown pair points: the check of the
    # pairs made once, not twice, and no second pass to put ``unseen`` in (a simulation gathers every step)
    n = len(values)
    known = (pairs >= 0) & (pairs < n)
    return np.append(values, unseen)[np.where(known, pairs, n)]


def _estimate(numerator: np.ndarray, denominator: np.ndarray, cap: bool) -> np.ndarray:
    """``(1 + num) / (2 + den)``, an EM estimate at most :data:`PROB_MAX`."""
    value = (1.0 + numerator) / (2.0 + denominator)
    return np.minimum(value, PROB_MAX) if cap else value


def _sum_by(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(index, weights=values, minlength=size)[:size]


def _last_click(clicks: np.ndarray) -> np.ndarray:
    """Each session's last clicked rank (0-based), -1 for none."""
    last = np.full(len(clicks), -1, dtype=np.int64)
    for r in range(clicks.shape[1]):  # a column at a time: numpy reduces many short rows (axis=1) slowly
        last[clicks[:, r]] = r
    return last


def _first_click(clicks: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Each session's first clicked rank (0-based), its length for none."""
    ranks = np.where(clicks, np.arange(clicks.shape[1])[None, :], clicks.shape[1] + 1)
    return np.minimum(ranks.min(axis=1), length)


# --------------------------------------------------------------------------------------------------
# The models


class ClickModel:
    """A click model: its parameters, :meth:`fit` to sessions, :meth:`probabilities` of their clicks,
    :meth:`simulate` clicks on lists, and its parameters as JSON (:meth:`as_json`, :func:`load`).

    ``attr`` holds a value per pair of the vocabulary; subclasses add theirs. Subclasses implement
    :meth:`_statistics` (one E step over a chunk: the numerators and denominators of each parameter),
    :meth:`_update` (the M step), :meth:`probabilities` and :meth:`simulate`.
    """

    name = "ClickModel"
    em = True
    """Whether the model is fitted by EM (iterations; its estimates capped at :data:`PROB_MAX`), or
    counted once (closed forms)."""

    def __init__(self, method: Any = None, ranks: int = RANKS) -> None:
        self.method = method
        self.ranks = ranks
        self.vocabulary = Vocabulary()
        self.attr = np.zeros(0)
        self.iterations = 0
        self.sessions = 0.0
        self.unseen: dict[str, float] | None = None
        """What :meth:`for_pairs` gives a pair the model has no parameters for, by parameter (None: the
        mean of the model's)."""

    def _start(self, pairs: int) -> None:
        self.attr = np.full(pairs, 0.5)

    def fit(self, sessions: Sessions | Any, iterations: int = ITERATIONS) -> ClickModel:
        """Fit the model to ``sessions`` (a :class:`Sessions`, or anything with a ``vocabulary`` and a
        ``reduce`` such as :meth:`Sessions.reduce`: a Spark frame's, :class:`irspec_online.spark.SparkSessions`):
        ``iterations`` EM iterations from 0.5, over the distinct sessions (identical ones merged first:
        :meth:`Sessions.compact`); a closed form: one counting pass. Each E step is :meth:`_statistics` of
        every chunk of sessions, added up."""
        self.vocabulary = sessions.vocabulary
        self._start(len(self.vocabulary))
        self.iterations = iterations if self.em else 1
        self.sessions = self._iterate(sessions, self.iterations)
        return self

    def _iterate(self, sessions: Sessions | Any, rounds: int) -> float:
        """``rounds`` E and M steps from the start values (:meth:`fit`); the sessions read, by weight."""
        if self.em and isinstance(sessions, Sessions):
            sessions = sessions.compact()
        count = 0.0
        for _ in range(rounds):
            totals, count = sessions.reduce(self._light()._expectations) or ({}, 0.0)
            self._update(totals)
        return count

    def _light(self) -> ClickModel:
        """The model as an E step or an evaluation reads it: its parameters, its vocabulary's size alone
        (what a Spark worker is sent each iteration; the pairs' names stay here)."""
        light = copy.copy(self)
        light.vocabulary = _Counted(len(self.vocabulary))
        return light

    def _expectations(self, chunk: Sessions) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], float]:
        """One chunk's part of an E step: :meth:`_statistics`, and the sessions it stands for."""
        return self._statistics(chunk), chunk.count

    def _statistics(self, chunk: Sessions) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        raise NotImplementedError

    def _update(self, stats: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> None:
        for name, (num, den) in stats.items():
            setattr(self, name, _estimate(num, den, self.em))

    def _attr(self, chunk: Sessions) -> np.ndarray:
        return _gather(self.attr, chunk.pairs)

    _PAIRED = ("attr",)
    """The parameters held per query-document pair."""

    def for_pairs(
        self, pairs: Sequence[tuple[str, str]], unseen: Mapping[str, float] | None = None
    ) -> ClickModel:
        """A copy of the fitted model over another vocabulary, ``pairs`` (codes 0, 1, ... in that order):
        each pair's parameters as fitted, a pair the model never saw given ``unseen[name]`` (default: the
        mean of that parameter over the model's pairs, 0.5 without any)."""
        copy = type(self)(self.method, self.ranks)
        copy.__dict__.update({k: v for k, v in self.__dict__.items() if k not in self._PAIRED})
        copy.vocabulary = Vocabulary()
        codes = np.array([self.vocabulary.codes.get(p, -1) for p in pairs], dtype=np.int64)
        for p in pairs:
            copy.vocabulary.code(*p)
        unseen = unseen if unseen is not None else self.unseen or {}
        for name in self._PAIRED:
            fitted = getattr(self, name)
            default = unseen.get(name, float(fitted.mean()) if len(fitted) else 0.5)
            setattr(copy, name, _gather(fitted, codes, default))
        return copy

    @property
    def known_ranks(self) -> int:
        """How many ranks, from the top, the model has parameters for (a position model: those the log it
        was fitted to showed a result at); a simulation refuses lists longer."""
        return self.ranks

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        """``(full, conditional)``, each ``(n, RANKS)``: each result's probability of a click, and the
        probability of what was observed there (a click or none) given the clicks above it."""
        raise NotImplementedError

    def simulate(self, pairs: np.ndarray, length: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Clicks ``(n, RANKS)`` of simulated users on lists of pairs (-1: past the end)."""
        raise NotImplementedError

    def log_likelihood(self, sessions: Sessions | Any) -> float:
        """The log-likelihood (PyClick's form): the mean over sessions of the mean over a session's results
        of the log of the probability of what was observed there given the clicks above it (``sessions``: a
        :class:`Sessions`, or a table with its ``reduce``, as :meth:`fit` takes). A session without
        results has no results to average over: it is left out (NaN for no session with a result)."""
        total, _, _, count = sessions.reduce(self._light()._evaluation)
        return float(total / count) if count else float("nan")

    def perplexity(self, sessions: Sessions | Any) -> tuple[float, list[float]]:
        """The perplexity (Chuklin, Markov and de Rijke, section 4.2): per rank ``r``, ``2 ** -(sum log2
        P(observed at r) / sessions showing r)`` with each result's unconditional click probability, over
        the sessions that show a result at ``r``; and the mean over the ranks the sessions show. The list
        goes down to the deepest rank shown (every session shows the ranks above its last), so a rank no
        session shows is neither listed nor averaged: PyClick divides every rank's sum by all the sessions
        and averages over its 10 ranks, where a rank never shown counts 1, which flatters every model on
        pages of fewer results. NaN and no ranks for no sessions."""
        _, logs, shown, _ = sessions.reduce(self._light()._evaluation)
        depth = int(np.count_nonzero(shown))  # ranks 1..depth: a session shows a prefix of the ranks
        if not depth:
            return float("nan"), []
        per_rank = 2.0 ** (-logs[:depth] / shown[:depth])
        return float(per_rank.mean()), [float(p) for p in per_rank]

    def _evaluation(self, chunk: Sessions) -> tuple[float, np.ndarray, np.ndarray, float]:
        """One chunk's sums of :meth:`log_likelihood` and :meth:`perplexity`: the weighted sum over its
        sessions of the mean log of the conditional probabilities, per rank the weighted sum of the log2
        of the unconditional ones and the weight of the sessions showing that rank, and the sessions it
        stands for that show a result."""
        full, conditional = self.probabilities(chunk)
        valid = chunk.valid
        shown = chunk.length > 0
        sums = np.where(valid, np.log(np.where(valid, conditional, 1.0)), 0.0).sum(axis=1)
        logs = np.divide(sums, chunk.length, out=np.zeros(len(sums)), where=shown)  # none: not 0 / 0
        observed = np.where(chunk.clicks, full, 1 - full)
        seen = valid & (observed > 0)
        logs2 = np.where(seen, np.log2(np.where(seen, observed, 1.0)), 0.0)
        weight = chunk.weight
        return float((logs * weight).sum()), weight @ logs2, weight @ valid, float(weight[shown].sum())

    # the parameters as JSON

    def params(self) -> dict[str, Any]:
        """The parameters, JSON-ready: per pair ``{query: {doc: value}}``, per rank a list (``null``: an
        examination the fit left unknown)."""
        return {"attr": self.vocabulary.nested(self.attr)}

    def as_json(self) -> dict[str, Any]:
        """The fitted model as :func:`load` reads it back."""
        return {"model": self.name, "spec": str(self.method) if self.method is not None else self.name,
                "ranks": self.ranks, "iterations": self.iterations, "sessions": self.sessions,
                "params": self.params()}  # fmt: skip

    def _read(self, params: Mapping[str, Any], where: str) -> None:
        self.attr = self._read_pairs(params, "attr", where)

    def _read_pairs(self, params: Mapping[str, Any], name: str, where: str) -> np.ndarray:
        nested = params.get(name)
        if not isinstance(nested, Mapping):
            raise InputError(f"params.{name} must map each query to {{document: value}}", where)
        values = np.full(len(self.vocabulary), 0.5)
        for q, docs in nested.items():
            if not isinstance(docs, Mapping):
                raise InputError(f"params.{name}.{q}: expected {{document: value}}", where)
            for d, v in docs.items():
                code = self.vocabulary.code(q, d)
                if code >= len(values):
                    values = np.concatenate([values, np.full(code + 1 - len(values), 0.5)])
                values[code] = _probability(v, f"params.{name}.{q}.{d}", where)
        return values

    def _read_ranks(
        self, params: Mapping[str, Any], name: str, where: str, shape: tuple[int, ...], unknown: bool = False
    ) -> np.ndarray:
        """A per-rank parameter of the given ``shape``: probabilities, and ``null`` (NaN) where ``unknown``
        values may be (an examination the fit never saw: :func:`_json_ranks`)."""
        found = not_a_number(params.get(name), unknown) if name in params else (None,)
        if found is not None:
            raise InputError(
                f"params.{name} must be a list of {shape[0]} probabilities, got {plugin_api.quote(found[0])} in it"
                if name in params and isinstance(params[name], list)
                else f"params.{name} must be a list of {shape[0]} probabilities",
                where,
            )
        try:
            values = np.array(params[name], dtype=np.float64)  # null: NaN
        except (TypeError, ValueError):  # lists of uneven lengths
            raise InputError(f"params.{name} must be a list of {shape[0]} probabilities", where) from None
        if values.shape != shape:
            raise InputError(
                f"params.{name} must be probabilities of shape {list(shape)}, got {values.shape}", where
            )
        wrong = ~((values >= 0) & (values <= 1) | (unknown & np.isnan(values)))
        if wrong.any():
            bad = float(values[wrong][0])
            raise InputError(
                f"params.{name} must be probabilities (0 to 1), got {plugin_api.quote(bad)}", where
            )
        return values


def _json_ranks(values: np.ndarray) -> list[Any]:
    """A per-rank parameter as JSON: its values, ``null`` where unknown (NaN, which ``json`` would write as
    ``NaN``, no JSON)."""
    listed = values.astype(object)
    listed[np.isnan(values)] = None
    return listed.tolist()


def _probability(value: Any, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(f"{what} must be a probability, got {plugin_api.quote(value)}", where)
    return float(value)


class _Cells:
    """Results as the position models' E step reads them: each distinct cell (a pair, an examination
    parameter, clicked or not; ``keys`` sorted, ``(pair * parameters + parameter) * 2 + clicked``) with the
    weights of its sessions summed, and the sessions they come from (``count``). Two add up (``+``: a
    chunk's and a Spark partition's merged, as :func:`added` merges sums)."""

    def __init__(self, keys: np.ndarray, weights: np.ndarray, count: float) -> None:
        self.keys, self.weights, self.count = keys, weights, count

    @classmethod
    def of(cls, keys: np.ndarray, weights: np.ndarray, count: float) -> _Cells:
        """The cells of ``keys`` (one per result, any order), their ``weights`` summed per cell."""
        unique, inverse = np.unique(keys, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights=weights, minlength=len(unique))
        return cls(unique, summed.astype(np.float64, copy=False), count)  # (no keys: numpy's int64 zeros)

    def __add__(self, other: _Cells) -> _Cells:
        return _Cells.of(np.concatenate([self.keys, other.keys]), np.concatenate([self.weights, other.weights]),
                         self.count + other.count)  # fmt: skip

    def split(self, parameters: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(pair, parameter, clicked, weight)`` of each cell, for a model of ``parameters`` examination
        parameters."""
        clicked, rest = self.keys % 2 == 1, self.keys // 2
        return rest // parameters, rest % parameters, clicked, self.weights


class PBM(ClickModel):
    """The position-based model: ``P(C_r = 1) = attr_qd * exam_r``."""

    name = "PBM"

    def _start(self, pairs: int) -> None:
        super()._start(pairs)
        self.exam = np.full(self.ranks, 0.5)

    def _gamma(self, chunk: Sessions) -> tuple[np.ndarray, np.ndarray]:
        """Each result's examination probability (an unknown one: :data:`PRIOR`), and the index of the
        parameter it is."""
        index = np.broadcast_to(np.arange(self.ranks)[None, :], chunk.pairs.shape)
        return self._examination()[index], index

    def _examination(self) -> np.ndarray:
        """The examination parameters as a prediction reads them: an unknown one (NaN) as :data:`PRIOR`."""
        return np.where(np.isnan(self.exam), PRIOR, self.exam)

    def _possible(self) -> np.ndarray:
        """Which examination parameters a session can reach (all of PBM's)."""
        return np.ones(self.exam.shape, dtype=bool)

    @property
    def known_ranks(self) -> int:
        """The ranks from the top with an examination parameter the fit saw (a rank below every page of the
        log it was fitted to has none)."""
        known = (~np.isnan(self.exam) & self._possible()).reshape(self.ranks, -1).any(axis=1)
        return int(np.argmin(known)) if not known.all() else self.ranks

    def _iterate(self, sessions: Sessions | Any, rounds: int) -> float:
        """The EM of :meth:`ClickModel.fit`, reading the sessions once: this model's E step reads each
        result on its own, by its pair, its examination parameter and whether it was clicked, so the
        sessions are counted once into those cells (:class:`_Cells`: one pass, one Spark job for a table
        Spark holds) and every EM iteration runs on the cells, whose number is bounded by the pairs and the
        parameters whatever the log's size. The same estimates as an E step over every session, up to the
        order of the sums over them (the cells' weights are counts, summed exactly in any order)."""
        cells: _Cells | None = sessions.reduce(self._light()._cells)
        if cells is None:  # no sessions: no cells
            cells = _Cells.of(np.zeros(0, dtype=np.int64), np.zeros(0), 0.0)
        found = cells.split(self.exam.size)
        for _ in range(rounds):
            self._update(self._cell_statistics(*found))
        # a parameter no result fell under kept the prior's 0.5, no examination the log shows: unknown (a
        # PBM fitted to pages of 5 results weighed IPS's clicks moved to ranks 6-10 by 0.5)
        _, parameter, _, _ = found
        seen = np.zeros(self.exam.size, dtype=bool)
        seen[parameter] = True
        unseen = ~seen.reshape(self.exam.shape) & self._possible()
        self.exam = np.where(unseen, np.nan, self.exam)
        return cells.count

    def _cells(self, chunk: Sessions) -> _Cells:
        """A chunk's results as cells: (pair, examination parameter, clicked) with their weights summed."""
        index = self._gamma(chunk)[1]
        valid = chunk.valid
        keys = ((chunk.pairs * self.exam.size + index) * 2 + chunk.clicks)[valid]
        return _Cells.of(keys, np.broadcast_to(chunk.weight[:, None], valid.shape)[valid], chunk.count)

    def _statistics(self, chunk: Sessions) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return self._cell_statistics(*self._cells(chunk).split(self.exam.size))

    def _cell_statistics(
        self, pairs: np.ndarray, index: np.ndarray, click: np.ndarray, w: np.ndarray
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """One E step over cells: each cell's posteriors of attractiveness and examination (1 where
        clicked), weighted, summed per pair and per examination parameter."""
        alpha, gamma = self.attr[pairs], self.exam.ravel()[index]
        both = 1 - alpha * gamma
        a_post = np.where(click, 1.0, alpha * (1 - gamma) / both)
        e_post = np.where(click, 1.0, gamma * (1 - alpha) / both)
        n, size = len(self.vocabulary), self.exam.size
        return {
            "attr": (_sum_by(pairs, a_post * w, n), _sum_by(pairs, w, n)),
            "exam": (_sum_by(index, e_post * w, size).reshape(self.exam.shape),
                     _sum_by(index, w, size).reshape(self.exam.shape)),
        }  # fmt: skip

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        full = self._attr(sessions) * self._gamma(sessions)[0]
        return full, np.where(sessions.clicks, full, 1 - full)

    def simulate(self, pairs: np.ndarray, length: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        valid = np.arange(pairs.shape[1])[None, :] < length[:, None]
        p = _gather(self.attr, pairs) * self._examination()[None, : pairs.shape[1]]
        return valid & (rng.random(pairs.shape) < p)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "exam": _json_ranks(self.exam)}

    def _read(self, params: Mapping[str, Any], where: str) -> None:
        super()._read(params, where)
        self.exam = self._read_ranks(params, "exam", where, (self.ranks,), unknown=True)

    @property
    def propensities(self) -> np.ndarray:
        """The examination probability per rank, rank 1 first (IPS's propensities)."""
        return self.exam


class UBM(PBM):
    """The user browsing model: ``P(C_r = 1) = attr_qd * exam[r][r']`` with ``r'`` the rank (1-based) of
    the previous click, 0 for none."""

    name = "UBM"

    def _start(self, pairs: int) -> None:
        ClickModel._start(self, pairs)
        self.exam = np.full((self.ranks, self.ranks + 1), 0.5)

    def _gamma(self, chunk: Sessions) -> tuple[np.ndarray, np.ndarray]:
        r = np.arange(chunk.pairs.shape[1])[None, :]
        last = np.where(chunk.clicks, r + 1, 0)  # 1-based rank of a click, 0 for none
        previous = np.zeros_like(last)
        previous[:, 1:] = np.maximum.accumulate(last, axis=1)[:, :-1]
        index = r * (self.ranks + 1) + previous
        return self._examination().ravel()[index], index

    def _possible(self) -> np.ndarray:
        """``exam[r][r']`` with the previous click above the rank (``r' <= r``, 0-based ``r``): the others
        are never read, and keep PyClick's 0.5."""
        return np.arange(self.ranks + 1)[None, :] <= np.arange(self.ranks)[:, None]

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        alpha = self._attr(sessions)
        exam = self._examination()
        given = alpha * self._gamma(sessions)[0]
        conditional = np.where(sessions.clicks, given, 1 - given)
        # the full probability (PyClick's): sum over the previous click p of P(C_p) P(no click between | p)
        # P(C_r | p), with p = 0 for none
        n, ranks = sessions.pairs.shape
        full = np.zeros((n, ranks))
        for r in range(ranks):
            total = np.zeros(n)
            for p in range(r + 1):  # p: 1-based rank of the previous click, 0: none
                before = full[:, p - 1] if p else np.ones(n)
                between = np.ones(n)
                for b in range(p, r):
                    between *= 1 - alpha[:, b] * exam[b, p]
                total += before * between * alpha[:, r] * exam[r, p]
            full[:, r] = total
        return full, conditional

    def simulate(self, pairs: np.ndarray, length: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        alpha = _gather(self.attr, pairs)
        exam = self._examination()
        clicks = np.zeros(pairs.shape, dtype=bool)
        previous = np.zeros(len(pairs), dtype=np.int64)
        for r in range(pairs.shape[1]):
            clicks[:, r] = (r < length) & (rng.random(len(pairs)) < alpha[:, r] * exam[r, previous])
            previous = np.where(clicks[:, r], r + 1, previous)
        return clicks

    def _read(self, params: Mapping[str, Any], where: str) -> None:
        ClickModel._read(self, params, where)
        self.exam = self._read_ranks(params, "exam", where, (self.ranks, self.ranks + 1), unknown=True)

    @property
    def propensities(self) -> np.ndarray:
        """The examination probability per rank with no click above (UBM's column 0)."""
        return self.exam[:, 0]


def _cascade(alpha: np.ndarray, length: np.ndarray, rng: np.random.Generator, cont: np.ndarray) -> np.ndarray:
    """Clicks of cascade users: down the list, each result clicked with its attractiveness; after a click
    at rank ``r`` going on with probability ``cont[r]`` (0: the cascade model, which stops)."""
    clicks = np.zeros(alpha.shape, dtype=bool)
    going = np.ones(len(alpha), dtype=bool)
    for r in range(alpha.shape[1]):
        clicks[:, r] = going & (r < length) & (rng.random(len(alpha)) < alpha[:, r])
        going &= ~clicks[:, r] | (rng.random(len(alpha)) < cont[r])
    return clicks


class CM(ClickModel):
    """The cascade model: the user examines down to the first click and stops; ``attr_qd`` = clicks /
    impressions over the ranks down to the first click (every rank of a session without one). A click below
    the first, which the model cannot give, is left out of the fit and has probability :data:`PROB_MIN` in
    the log-likelihood."""

    name = "CM"
    em = False

    def _statistics(self, chunk: Sessions) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        first = _first_click(chunk.clicks, chunk.length)
        counted = chunk.valid & (np.arange(chunk.pairs.shape[1])[None, :] <= first[:, None])
        w = np.where(counted, chunk.weight[:, None], 0.0)
        pairs = np.where(counted, chunk.pairs, 0).ravel()
        n = len(self.vocabulary)
        return {"attr": (_sum_by(pairs, (w * chunk.clicks).ravel(), n), _sum_by(pairs, w.ravel(), n))}

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        alpha = np.where(sessions.valid, self._attr(sessions), 0.0)
        above = np.ones_like(alpha)
        above[:, 1:] = np.cumprod(1 - alpha, axis=1)[:, :-1]
        full = alpha * above
        first = _first_click(sessions.clicks, sessions.length)
        after = np.arange(alpha.shape[1])[None, :] > first[:, None]
        # Given the clicks above it (Chuklin et al., section 4.1): down to the first click no click above
        # means the result is examined, so P(C_r = 1 | C_<r) = alpha_r, not the unconditional
        # alpha_r prod(1 - alpha_above) (PyClick's get_conditional_click_probs gives that); below the first
        # click the user has stopped, no click is certain (1) and a click impossible: PROB_MIN, a floor
        # that keeps the log finite where a log has clicks CM cannot explain (the fit reads a session only
        # down to its first click, as CM sees it).
        given = np.where(sessions.clicks, alpha, 1 - alpha)
        return full, np.where(after, np.where(sessions.clicks, PROB_MIN, 1.0), given)

    def simulate(self, pairs: np.ndarray, length: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return _cascade(_gather(self.attr, pairs), length, rng, np.zeros(pairs.shape[1]))


class DCM(ClickModel):
    """The dependent click model: ``attr_qd`` counted down to the last click (a session without one: every
    rank), ``cont_r`` the share of clicks at rank ``r`` after which the user clicked again."""

    name = "DCM"
    em = False

    def _start(self, pairs: int) -> None:
        super()._start(pairs)
        self.cont = np.full(self.ranks, 0.5)

    def _statistics(self, chunk: Sessions) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        r = np.arange(chunk.pairs.shape[1])[None, :]
        last = _last_click(chunk.clicks)
        last_or_all = np.where(last >= 0, last, chunk.length)
        counted = chunk.valid & (r <= last_or_all[:, None])
        w = np.where(counted, chunk.weight[:, None], 0.0)
        pairs = np.where(counted, chunk.pairs, 0).ravel()
        n = len(self.vocabulary)
        again = chunk.clicks & (r != last[:, None])
        return {
            "attr": (_sum_by(pairs, (w * chunk.clicks).ravel(), n), _sum_by(pairs, w.ravel(), n)),
            "cont": (chunk.weight @ again, chunk.weight @ chunk.clicks),  # weighted column sums, by BLAS
        }

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        alpha = self._attr(sessions)
        n, ranks = alpha.shape
        full = np.zeros((n, ranks))
        conditional = np.zeros((n, ranks))
        exam_full = np.ones(n)
        exam = np.ones(n)
        for r in range(ranks):
            a, cont, clicked = alpha[:, r], self.cont[r], sessions.clicks[:, r]
            full[:, r] = a * exam_full
            exam_full = exam_full * (cont * a + 1 - a)
            p_click = a * exam
            conditional[:, r] = np.where(clicked, p_click, 1 - p_click)
            exam = np.where(clicked, cont, exam * (1 - a) / (1 - p_click))
        return full, conditional

    def simulate(self, pairs: np.ndarray, length: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return _cascade(_gather(self.attr, pairs), length, rng, self.cont)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "cont": self.cont.tolist()}

    def _read(self, params: Mapping[str, Any], where: str) -> None:
        super()._read(params, where)
        self.cont = self._read_ranks(params, "cont", where, (self.ranks,))


class DBN(ClickModel):
    """The dynamic Bayesian network model: attractiveness ``attr_qd``, satisfaction ``sat_qd`` and one
    continuation probability ``cont``, fitted by EM with the exact posteriors (the module docstring)."""

    name = "DBN"
    _PAIRED = ("attr", "sat")

    def _start(self, pairs: int) -> None:
        super()._start(pairs)
        self.sat = np.full(pairs, 0.5)
        self.cont = 0.5

    def _passes(self, chunk: Sessions) -> dict[str, np.ndarray]:
        """The forward and backward quantities of every session and rank (``n x (RANKS + 1)`` each):
        ``filtered`` ``P(E_r = 1 | C_<r)``, ``exam`` ``P(E_r = 1)``, ``car`` ``P(a click at or below r |
        E_r = 1)``, ``b1`` and ``b0`` ``P(C_>=r | E_r = 1 or 0)``."""
        alpha, sigma = self._attr(chunk), _gather(self.sat, chunk.pairs)
        passes = self._rank_major(np.ascontiguousarray(alpha.T), np.ascontiguousarray(sigma.T), chunk)
        session_major = {
            name: np.ascontiguousarray(passes[name].T) for name in ("filtered", "exam", "car", "b1", "b0")
        }
        return {"alpha": alpha, "sigma": sigma, **session_major}

    def _rank_major(self, at: np.ndarray, st: np.ndarray, chunk: Sessions) -> dict[str, np.ndarray]:
        """:meth:`_passes`' quantities rank-major (``(RANKS + 1) x n``), from the sessions' attractiveness
        ``at`` and satisfaction ``st`` rank-major (``RANKS x n``, C order); with them, ``1 -`` each
        (``not_alpha``, ``not_sigma``), and the sessions' ``valid`` and ``clicks``, rank-major too."""
        gamma = self.cont
        ranks, n = at.shape
        # Rank by rank over rank-major copies, each rank's values contiguous: a column of the sessions'
        # arrays is read with a stride, and the passes took about twice as long (issue 35). The same arithmetic,
        # so the same bits.
        valid, click = np.ascontiguousarray(chunk.valid.T), np.ascontiguousarray(chunk.clicks.T)
        # each row written below before it is read, but the first (forward) or the last (backward), 1: the
        # rest left unfilled (filling them took a tenth of an E step)
        filtered, exam = np.empty((ranks + 1, n)), np.empty((ranks + 1, n))
        filtered[0] = exam[0] = 1.0
        # 1 - alpha and 1 - sigma, each used three times a rank, made once for every rank
        not_at, not_st = 1 - at, 1 - st
        for r in range(ranks):
            a, s, e, not_a, not_s = at[r], st[r], filtered[r], not_at[r], not_st[r]
            filtered[r + 1] = np.where(click[r], gamma * not_s, e * gamma * not_a / (1 - e * a))
            exam[r + 1] = exam[r] * gamma * (not_s * a + 1 - a)
        car, b1, b0 = np.empty((ranks + 1, n)), np.empty((ranks + 1, n)), np.empty((ranks + 1, n))
        car[ranks], b1[ranks], b0[ranks] = 0.0, 1.0, 1.0
        for r in range(ranks - 1, -1, -1):
            a, s, v, c, not_a, not_s = at[r], st[r], valid[r], click[r], not_at[r], not_st[r]
            car[r] = np.where(v, a + not_a * gamma * car[r + 1], 0.0)
            go_on = gamma * b1[r + 1] + (1 - gamma) * b0[r + 1]
            b1[r] = np.where(v, np.where(c, a * (s * b0[r + 1] + not_s * go_on), not_a * go_on), 1.0)
            b0[r] = np.where(v & c, 0.0, b0[r + 1])
        return {"alpha": at, "sigma": st, "not_alpha": not_at, "not_sigma": not_st, "valid": valid, "clicks": click,
                "filtered": filtered, "exam": exam, "car": car, "b1": b1, "b0": b0}  # fmt: skip

    def _statistics(self, chunk: Sessions) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        # Every value computed rank-major, as the passes leave them (each rank's values contiguous: the
        # session-major copies of the passes and their strided columns took a third of an E step, issue
        # 35); the same expressions of the same operands, so the same values. What is summed is laid out
        # session-major first, as it was made before: a sum adds in memory order.
        codes = chunk.pairs.T  # each value gathered where it goes, rank-major
        p = self._rank_major(
            np.ascontiguousarray(_gather(self.attr, codes)),
            np.ascontiguousarray(_gather(self.sat, codes)),
            chunk,
        )
        alpha, sigma, gamma, valid, click = p["alpha"], p["sigma"], self.cont, p["valid"], p["clicks"]
        w = chunk.weight[None, :]
        ranks = alpha.shape[0]
        r = np.arange(ranks)[:, None]
        last = _last_click(chunk.clicks)[None, :]
        e, car = p["filtered"][:ranks], p["car"]
        # attractiveness: 1 for a click; after the last click alpha (1 - e) / (1 - e car); else 0
        a_post = np.where(click, 1.0, np.where(r > last, alpha * (1 - e) / (1 - e * car[:ranks]), 0.0))
        # satisfaction: for the last click sigma / (1 - (1 - sigma) gamma car_{r+1}); other clicks 0
        s_post = np.where(r == last, sigma / (1 - p["not_sigma"] * gamma * car[1:]), 0.0)
        # continuation: the posterior of (E_r = 1, S_r = 0, E_{r+1} = z), each rank
        b1, b0 = p["b1"][1:], p["b0"][1:]
        go = np.where(click, alpha * p["not_sigma"], p["not_alpha"]) * e
        f101, f100 = go * gamma * b1, go * (1 - gamma) * b0
        f110 = np.where(click, e * alpha * sigma * b0, 0.0)
        f000 = np.where(click, 0.0, (1 - e) * b0)
        total = f101 + f100 + f110 + f000
        wv = np.where(valid, w, 0.0)
        clicked = np.where(valid & click, w, 0.0)
        pairs = np.where(chunk.valid, chunk.pairs, 0).ravel()
        n = len(self.vocabulary)

        def flat(x: np.ndarray) -> np.ndarray:
            """A rank-major array's values session after session."""
            return np.ascontiguousarray(x.T).ravel()

        return {
            "attr": (_sum_by(pairs, flat(a_post * wv), n), _sum_by(pairs, flat(wv), n)),
            "sat": (_sum_by(pairs, flat(s_post * clicked), n), _sum_by(pairs, flat(clicked), n)),
            "cont": (
                np.array(flat(wv * f101 / total).sum()),
                np.array(flat(wv * (f100 + f101) / total).sum()),
            ),
        }

    def _update(self, stats: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> None:
        super()._update(stats)
        self.cont = float(self.cont)

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        p = self._passes(sessions)
        ranks = p["alpha"].shape[1]
        full = p["alpha"] * p["exam"][:, :ranks]
        given = p["alpha"] * p["filtered"][:, :ranks]
        return full, np.where(sessions.clicks, given, 1 - given)

    def simulate(self, pairs: np.ndarray, length: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        alpha, sigma = _gather(self.attr, pairs), _gather(self.sat, pairs)
        clicks = np.zeros(pairs.shape, dtype=bool)
        going = np.ones(len(pairs), dtype=bool)
        for r in range(pairs.shape[1]):
            u = rng.random((3, len(pairs)))
            clicks[:, r] = going & (r < length) & (u[0] < alpha[:, r])
            satisfied = clicks[:, r] & (u[1] < sigma[:, r])
            going &= ~satisfied & (u[2] < self.cont)
        return clicks

    def params(self) -> dict[str, Any]:
        return {**super().params(), "sat": self.vocabulary.nested(self.sat), "cont": self.cont}

    def _read(self, params: Mapping[str, Any], where: str) -> None:
        super()._read(params, where)
        self.sat = self._read_pairs(params, "sat", where)
        if len(self.sat) < len(self.attr):
            self.sat = np.concatenate([self.sat, np.full(len(self.attr) - len(self.sat), 0.5)])
        self.attr = np.concatenate([self.attr, np.full(len(self.sat) - len(self.attr), 0.5)])
        self.cont = _probability(params.get("cont"), "params.cont", where)


class Swap(PBM):
    """Examination propensities from a swap experiment (Joachims, Swaminathan and Schnabel, WSDM 2017,
    section 5): query issues whose production ranking had its top result swapped with the one at rank
    ``k`` (the record's ``swap``: ``k``, 1 for no swap), ``k`` drawn uniformly; the top document is then
    shown at ``k``, so ``exam_k / exam_1`` = its click rate at ``k`` over its click rate at 1. ``exam_1`` is
    1 (only the ratios matter to IPS). Not a model of documents: it neither simulates nor predicts clicks."""

    name = "Swap"
    em = False

    def fit(self, sessions: Any, iterations: int = ITERATIONS) -> ClickModel:
        """Swap experiments are counted from the log's records (:func:`irspec_online.clickstream.fit`)."""
        raise EvaluationError(
            "a swap experiment is fitted from its log's records: irspec clickmodel fit --model swap"
        )

    def fit_counts(self, shown: np.ndarray, clicked: np.ndarray) -> Swap:
        """``exam_k = (clicked[k] / shown[k]) / (clicked[1] / shown[1])`` from the query issues ``shown``
        with the top result at rank ``k`` (index ``k - 1``) and the clicks on it there."""
        if shown[0] == 0 or clicked[0] == 0:
            raise EvaluationError(
                "a swap experiment needs query issues without a swap (swap 1) whose top result was clicked"
            )
        rate = np.divide(clicked, shown, out=np.full(len(shown), np.nan), where=shown > 0)
        self.exam = rate / rate[0]
        self.shown, self.clicked = shown, clicked
        self.sessions = float(shown.sum())
        return self

    def probabilities(self, sessions: Sessions) -> tuple[np.ndarray, np.ndarray]:
        raise EvaluationError("a swap experiment's propensities are no model of documents' clicks")

    def simulate(self, pairs: np.ndarray, length: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise EvaluationError("a swap experiment's propensities are no model of documents' clicks")

    def params(self) -> dict[str, Any]:
        return {
            "attr": {},
            "exam": _json_ranks(self.exam),  # null: a rank no query issue swapped its top result to
            "shown": self.shown.tolist(),
            "clicked": self.clicked.tolist(),
        }

    def _read(self, params: Mapping[str, Any], where: str) -> None:
        self.exam = self._read_ranks(params, "exam", where, (self.ranks,), unknown=True)
        self.shown = np.array(params.get("shown", [0] * self.ranks), dtype=np.float64)
        self.clicked = np.array(params.get("clicked", [0] * self.ranks), dtype=np.float64)


# --------------------------------------------------------------------------------------------------
# Registered models, fitted models read back


def model_of(spec: Any) -> ClickModel:
    """A new, unfitted model of a click-model spec (``"dbn"``, a bound :class:`irspec.plugin_api.Method`)."""
    method = plugin_api.parse_method(spec, "click model")
    compute = method.definition.compute
    cls = compute if callable(compute) else pkgutil.resolve_name(compute)
    return cls(method)


def json_data(source: Any, what: str) -> tuple[Any, str]:
    """``(data, where)`` of a JSON file (a path), or of the data given (``where``: ``<what>``); a file that is
    missing or no JSON is an :class:`irspec.InputError` naming it and what it was to be (``what``: "a click
    model's JSON")."""
    if not isinstance(source, str):
        return source, f"<{what}>"
    try:
        with open(source, encoding="utf-8") as f:
            return json.load(f, object_pairs_hook=once), source
    except FileNotFoundError:
        raise InputError("no such file", source) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"not {what}: {e}", source) from None
    except KeyTwice as e:
        key = plugin_api.quote(e.args[0])
        raise InputError(
            f"not {what}: the key {key} twice in one object: which one is meant?", source
        ) from None
    except RecursionError:
        raise InputError(f"not {what}: JSON nested too deeply", source) from None


def not_a_number(data: Any, unknown: bool = False) -> tuple[Any] | None:
    """The first value of ``data`` (a number, or lists of them, nested) that is not a real number, as a
    1-tuple (it may be ``None``), or ``None`` when there is none. ``null`` is one where ``unknown``. numpy
    would read ``true`` as 1 and ``"0.5"`` as 0.5 without a word."""
    if isinstance(data, list):
        for item in data:
            found = not_a_number(item, unknown)
            if found is not None:
                return found
        return None
    if (data is None and unknown) or (isinstance(data, (int, float)) and not isinstance(data, bool)):
        return None
    return (data,)


def load(source: str | Mapping[str, Any]) -> ClickModel:
    """A fitted model from :meth:`ClickModel.as_json`'s JSON (a file, or the mapping)."""
    data, where = json_data(source, "a click model's JSON")
    if not isinstance(data, Mapping) or not isinstance(data.get("params"), Mapping):
        raise InputError("not a click model's JSON (irspec clickmodel fit writes one): no params", where)
    try:
        model = model_of(data.get("spec") or data.get("model"))
    except IrspecError as e:
        raise InputError(f"not a click model's JSON: {e}", where) from None
    ranks = data.get("ranks", RANKS)
    if not isinstance(ranks, int) or isinstance(ranks, bool) or not 1 <= ranks <= RANK_LIMIT:
        raise InputError(
            f"ranks must be an integer from 1 to {RANK_LIMIT}, got {plugin_api.quote(ranks)}", where
        )
    model.ranks = ranks
    model._start(0)
    model._read(data["params"], where)
    model.iterations = int(data.get("iterations", 0))
    model.sessions = float(data.get("sessions", 0))
    return model
