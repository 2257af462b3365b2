"""A log's click-model sessions read in bounded memory, and click models fitted and evaluated on them.

The log is read a batch of records at a time in any form irspec-online reads (:mod:`irspec_online.sources`,
the records checked as every reader checks them), each batch made click-model sessions
(:meth:`irspec_online.clickmodels.Sessions.of_records`) and merged into a table of distinct sessions with
weights (:meth:`~irspec_online.clickmodels.Sessions.compact`) whenever the rows held pass ``chunk_rows``:
memory holds the distinct sessions (with their pairs' vocabulary), not the log. A click model then
iterates over that table (:meth:`irspec_online.clickmodels.ClickModel.fit`).

Sessions can be held out for evaluation: a query issue is held out when a key of its session id
(:func:`irspec_online.records.key_of`) falls in the ``holdout`` share, so that the split is the same
whatever the order or form of the log, and a held-out session is evaluated only when its query was
seen in training (PyClick's rule) and it shows a result (a session without results has nothing to
evaluate; its query is not read, as a session's query is taken from its first result's pair).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irspec import EvaluationError, InputError
from irspec_online import columnar
from irspec_online.clickmodels import (
    ITERATIONS,
    RANKS,
    ClickModel,
    Sessions,
    Swap,
    Vocabulary,
    held_out_rows,
    model_of,
    swap_tally,
)
from irspec_online.sources import open_source

__all__ = ["CHUNK_ROWS", "Fitted", "fit", "read_sessions", "swap_counts"]

CHUNK_ROWS = 1 << 18
"""Sessions held beside the compacted table before it is compacted again (some 30 MiB, and as much again
to compact them), or half the table's rows if that is more."""
BATCH = 16_384


def read_sessions(
    source: Any, holdout: float = 0.0, chunk_rows: int = CHUNK_ROWS
) -> tuple[Sessions, Sessions]:
    """The click-model sessions of a log, ``(train, held out)``, each compacted (distinct sessions with
    their weights), sharing one vocabulary; the held-out ones only those that show a result, of queries
    seen in training (by a session that shows one)."""
    if not 0 <= holdout < 1:
        raise EvaluationError(f"the held-out share must be at least 0 and below 1, got {holdout}")
    if _is_spark(source):  # Spark reads and merges the sessions, its workers run the E steps
        from irspec_online.spark import click_sessions

        return click_sessions(source, holdout)
    opened = open_source(source, BATCH)
    vocabulary = Vocabulary()
    train, test = _Held(vocabulary, chunk_rows), _Held(vocabulary, chunk_rows)
    for batch in opened.batches:
        made = columnar.sessions(batch, opened.where, opened.unit, RANKS)
        sessions = Sessions.of_batch(made, vocabulary)
        if not holdout:
            train.add(sessions)
            continue
        held = held_out_rows(made.session.to_list(), holdout)
        train.add(_rows(sessions, ~held))
        test.add(_rows(sessions, held))
    trained = train.table()
    tested = test.table()
    if len(trained) == 0:
        if len(tested):  # every session held out: the log has records, none left to fit
            raise InputError(
                f"no session is left to fit: the held-out share, {holdout:g}, took all {len(tested):,} of the "
                "log's distinct sessions; hold out less",
                opened.where,
            )
        raise InputError("the log has no records to fit", opened.where)
    if len(tested):  # only the queries seen in training (a session's query: its first pair's)
        query = np.array([q for q, _ in vocabulary.pairs()] + [""], dtype=object)
        seen = set(query[trained.pairs[:, 0]].tolist()) - {""}
        tested = _rows(tested, np.array([q in seen for q in query[tested.pairs[:, 0]].tolist()], dtype=bool))
    return trained, tested


def _is_spark(source: Any) -> bool:
    return type(source).__module__.split(".")[0] == "pyspark"


def _rows(sessions: Sessions, keep: np.ndarray) -> Sessions:
    return Sessions(sessions.pairs[keep], sessions.clicks[keep], sessions.length[keep], sessions.weight[keep],
                    sessions.vocabulary, sessions.compacted)  # fmt: skip


class _Held:
    """Sessions gathered batch by batch, compacted whenever those added since the last compaction pass
    ``chunk_rows`` rows or half the compacted table's (compacted whenever the rows held passed
    ``chunk_rows``, a table of distinct sessions near that size was compacted whole every few batches, and
    one larger at every batch). The table is the same whenever it is compacted: the distinct sessions in
    the order first seen, their weights whole numbers."""

    def __init__(self, vocabulary: Vocabulary, chunk_rows: int) -> None:
        self.parts: list[Sessions] = []
        self.rows = 0
        self.compacted = 0
        self.vocabulary = vocabulary
        self.chunk_rows = chunk_rows

    def add(self, sessions: Sessions) -> None:
        self.parts.append(sessions)
        self.rows += len(sessions)
        if self.rows - self.compacted > max(self.chunk_rows, self.compacted // 2):
            self.parts = [Sessions.concat(self.parts).compact()]
            self.rows = self.compacted = len(self.parts[0])

    def table(self) -> Sessions:
        joined = Sessions.concat(self.parts) if self.parts else Sessions.empty(self.vocabulary)
        joined.vocabulary = self.vocabulary
        return joined.compact()


@dataclass(frozen=True)
class Fitted:
    """A model fitted to a log's sessions, and its evaluation on the held-out ones (None without)."""

    model: ClickModel
    train: Sessions
    test: Sessions
    log_likelihood: float | None
    perplexity: float | None
    perplexity_at_rank: list[float] | None

    def as_json(self) -> dict[str, Any]:
        """The model's JSON (:meth:`~irspec_online.clickmodels.ClickModel.as_json`) with its evaluation."""
        out = self.model.as_json()
        out["evaluation"] = {"held_out_sessions": self.test.count, "log_likelihood": self.log_likelihood,
                             "perplexity": self.perplexity, "perplexity_at_rank": self.perplexity_at_rank}  # fmt: skip
        return out


def fit(source: Any, model: Any = "dbn", holdout: float = 0.0, iterations: int = ITERATIONS) -> Fitted:
    """Fit a click model (a spec: ``"pbm"``, ``"dbn"``, ...) to a log (any form irspec-online reads),
    ``holdout`` of its sessions held out and evaluated (log-likelihood and perplexity:
    :meth:`~irspec_online.clickmodels.ClickModel.perplexity` says where they depart from PyClick's); a swap
    experiment's propensities (``"swap"``) counted from its records."""
    if iterations < 1:
        raise EvaluationError(f"iterations must be at least 1, got {iterations}")
    made = model_of(model)
    if isinstance(made, Swap):
        shown, clicked = swap_counts(source, made.ranks)
        return Fitted(made.fit_counts(shown, clicked), Sessions.empty(), Sessions.empty(), None, None, None)
    train, test = read_sessions(source, holdout)
    fitted = made.fit(train, iterations)
    if len(test) == 0:
        return Fitted(fitted, train, test, None, None, None)
    perplexity, per_rank = fitted.perplexity(test)
    return Fitted(fitted, train, test, fitted.log_likelihood(test), perplexity, per_rank)


def swap_counts(source: Any, ranks: int) -> tuple[np.ndarray, np.ndarray]:
    """A swap experiment's counts: per rank ``k`` (index ``k - 1``), the query issues whose top result was
    swapped with rank ``k`` (the record's ``swap``; 1: none) and those of them with a click at ``k``."""
    if _is_spark(source):  # counted batch by batch on Spark's workers, by swap_tally
        from irspec_online.spark import swap_counts as on_spark

        shown, clicked = on_spark(source, ranks)
        where = "<Spark DataFrame>"
    else:
        opened = open_source(source, BATCH)
        shown, clicked = np.zeros(ranks), np.zeros(ranks)
        where = opened.where
        for batch in opened.batches:
            where = opened.where
            part = swap_tally(batch, where, opened.unit, ranks)
            shown, clicked = shown + part[0], clicked + part[1]
    if not shown.any():
        raise InputError("no record has a swap (the rank its top result was swapped with: 1 for none)", where)
    return shown, clicked
