"""A reusable evaluator: the qrels read, checked and indexed once and the metrics bound once, for any
number of runs, a retriever's top-k arrays, and batches of queries.

Where ``irspec.evaluate`` reads the qrels on every call, an :class:`Evaluator` pays for them once, as
pytrec_eval's ``RelevanceEvaluator`` does: the shape of a training loop that evaluates a validation set
every epoch, or of a search over many runs.

>>> ev = irspec.Evaluator("qrels.txt", "nDCG@10, RR@10, R@100")           # doctest: +SKIP
>>> ev.evaluate("run.txt").aggregate()                                     # doctest: +SKIP
>>> D, I = index.search(query_vectors, 100)                                # doctest: +SKIP
>>> ev.evaluate_topk(query_ids, I, D, doc_ids=corpus_ids).aggregate()      # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from irspec.data import pair_keys
from irspec.data.arrays import SOURCE as TOPK
from irspec.data.arrays import TopK, frame_from_topk
from irspec.errors import EvaluationError
from irspec.evaluation import systems
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import MissingQueries, Options
from irspec.evaluation.evaluate import issue_warnings, several_runs
from irspec.evaluation.judgments import read_judgments
from irspec.evaluation.parts import Part, evaluate_part, evaluate_parts, finish
from irspec.evaluation.result import Result
from irspec.evaluation.result_set import ResultSet
from irspec.lazy import lazy_module
from irspec.spec.registry import Metric

if TYPE_CHECKING:
    import polars as pl
else:
    pl = lazy_module("polars")

__all__ = ["Evaluator"]


class Evaluator:
    """Qrels and metrics prepared once for evaluating any number of runs.

    ``qrels`` and ``metrics`` are what :func:`irspec.evaluate` takes, and so are the keyword options
    (``relevance_level``, ``depth``, ``judged_only``, ``missing_queries``, ``collection_size``,
    ``judged_warning``, ``columns``, ``memory``); the qrels are read, checked and indexed here, once.

    :meth:`evaluate` takes anything ``irspec.evaluate`` takes as a run and returns what it returns;
    :meth:`evaluate_topk` takes a retriever's top k as arrays; :meth:`combine` joins the results of
    several calls (batches of queries) into the result of all of them.

    An evaluator may be shared between threads: evaluating reads the prepared qrels and metrics and
    never changes them (the indexes it fills on first use hold the same values whichever thread fills
    them), and the record of what each result was made of, for :meth:`combine`, is kept under a lock.
    """

    def __init__(
        self,
        qrels: Any,
        metrics: str | Metric | Iterable[str | Metric],
        *,
        relevance_level: int = 1,
        depth: int | None = None,
        judged_only: bool = False,
        missing_queries: MissingQueries = "zero",
        collection_size: int | None = None,
        judged_warning: float | None = 0.5,
        columns: Mapping[str, str] | None = None,
        memory: str | int | None = None,
    ) -> None:
        self.options = Options(
            relevance_level, depth, judged_only, missing_queries, collection_size, judged_warning
        )
        self.metrics: tuple[Metric, ...] = tuple(bind_metrics(metrics, qrels))
        if not self.metrics:
            raise EvaluationError("no metrics to compute")
        self.columns = dict(columns) if columns is not None else None
        self.memory = memory
        self.judgments = read_judgments(qrels, self.metrics, self.columns)
        self._index = self.judgments.index  # built now, not by the first evaluation
        self._parts: weakref.WeakKeyDictionary[Result, tuple[Part, ...]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        qrels = self.judgments.qrels
        shown = ", ".join(map(str, self.metrics[:6])) + (
            f", ... ({len(self.metrics)} metrics)" if len(self.metrics) > 6 else ""
        )
        return (
            f"Evaluator(qrels={qrels.source!r}: {len(self._index.query_ids)} queries, {len(qrels)} judgments; "
            f"metrics: {shown}; relevance_level={self.options.relevance_level}, "
            f"missing_queries={self.options.missing_queries!r})"
        )

    def evaluate(self, run: Any, *, warn: bool = True) -> Result | ResultSet:
        """``irspec.evaluate(qrels, run, metrics, **options)`` with this evaluator's qrels, metrics and
        options: a :class:`~irspec.evaluation.result.Result` for one run, a :class:`~irspec.evaluation.result_set.ResultSet`
        for several (a mapping of names to runs or systems, a list).

        ``warn=False``: the result's warnings are kept (:attr:`~irspec.evaluation.result.Result.warnings`)
        but not issued, for a batch of queries that :meth:`combine` joins with others and warns of as a
        whole (each batch lacks the others' queries); one run only."""
        if several_runs(run, self.columns) is not None or systems.systems_of(run) is not None:
            if not warn:
                raise EvaluationError(
                    "warn=False is for one run's batch of queries, which combine() joins and warns of; "
                    "several runs are warned of as they are evaluated"
                )
            return systems.evaluate(
                self.judgments,
                run,
                self.metrics,
                **dataclasses.asdict(self.options),
                columns=self.columns,
                memory=self.memory,
            )
        name, source, runid, parts = evaluate_parts(
            self._index,
            run,
            list(self.metrics),
            self.options,
            self.memory,
            self.columns,
            self.judgments.inputs,
        )
        return self._finish(name, source, parts, runid, warn=warn)

    def evaluate_topk(
        self,
        query_ids: Any,
        doc_ids: Any,
        scores: Any,
        *,
        corpus_ids: Any = None,
        name: str = "run",
        warn: bool = True,
    ) -> Result:
        """The evaluation of a retriever's top k, given as arrays without dicts.

        ``query_ids``: 1-D, one id per row (strings or integers); ``doc_ids`` and ``scores``: 2-D, a row
        per query and a column per retrieved document. Numpy arrays, or anything numpy reads through
        ``__array__`` or DLPack (a CPU torch tensor, say, without irspec importing torch). Document ids are
        strings or integers (an integer is its decimal text, as in the qrels); an integer ``-1`` is
        FAISS's "no result" and is skipped with its score, in an object array too. Rows need not be
        sorted: documents are ranked by score descending, then docno descending, as everywhere. Equal to
        :meth:`evaluate` of the same data as a dict. A NaN or infinite score (or a longdouble beyond a
        double's range), a document twice in a row, a query twice, an id that is neither a string nor an
        integer, or shapes that do not match raise :class:`~irspec.errors.InputError` naming the row.

        ``corpus_ids``: the document ids by position, when ``doc_ids`` are positions (FAISS's ``I``):
        ``evaluate_topk(qids, I, D, corpus_ids=ids)`` is ``evaluate_topk(qids, ids[I], D)`` but for the
        ``-1`` entries, which ``ids[I]`` would silently turn into the last document.

        ``warn=False``: the result's warnings are kept but not issued, for a batch that :meth:`combine`
        joins with others and warns of as a whole (each batch lacks the others' queries: its own warning
        would say so, once a batch).
        """
        run = _TopKRun(frame_from_topk(query_ids, doc_ids, scores, corpus_ids), name)
        part = evaluate_part(self._index, run, list(self.metrics), self.options, self.judgments.inputs)
        return self._finish(name, run.source, [part], warn=warn)

    def combine(self, results: Sequence[Result], *, name: str | None = None) -> Result:
        """One result of the results of several :meth:`evaluate` or :meth:`evaluate_topk` calls of
        this evaluator, each on other queries (a validation set searched in batches): equal to
        evaluating all their queries at once, the qrels queries none of them has scored as
        ``missing_queries`` says. A query in two of them is an :class:`~irspec.errors.EvaluationError`,
        an empty ranking too (``{"q1": {}}``, a top-k row all ``-1``): the query was given, as twice in one call.
        ``name``: the result's run name (by default the first one's). The whole's warnings are issued
        here (the batches', of queries the others answer, are not the whole's: ``warn=False`` keeps them
        from being issued batch by batch)."""
        results = list(results)
        if not results:
            raise EvaluationError("combine: no results to combine")
        parts: list[Part] = []
        owner: dict[str, tuple[int, bool]] = {}  # query -> the result that gave it, and whether empty
        with self._lock:  # anything but a Result is none of them (and cannot be a weak key)
            found = [self._parts.get(r) if isinstance(r, Result) else None for r in results]
        for i, (res, own) in enumerate(zip(results, found, strict=True)):
            if own is None:
                raise EvaluationError(
                    f"combine: result {i} ({getattr(res, 'run_name', type(res).__name__)!r}) was not made by this "
                    "evaluator's evaluate() or evaluate_topk() of one run"
                )
            for part in own:
                # A query given with an empty ranking was given all the same: one call refuses it
                # twice, so batches must too, or the other batch's value would pass for the whole's.
                for q in sorted(part.seen | part.empty):
                    if q in owner:
                        raise EvaluationError(_twice(q, owner[q], (i, q in part.empty)))
                    owner[q] = (i, q in part.empty)
            parts.extend(own)
        first = results[0]
        return self._finish(name or first.run_name, first.run_source, parts, first.runid)

    def _finish(
        self, name: str, source: str, parts: list[Part], runid: str | None = None, *, warn: bool = True
    ) -> Result:
        result = finish(
            self._index, name, source, parts, self.metrics, self.options, self.judgments.inputs, runid=runid
        )
        if warn:
            issue_warnings(result.warnings)
        with self._lock:
            self._parts[result] = tuple(parts)
        return result


def _twice(query: str, first: tuple[int, bool], second: tuple[int, bool]) -> str:
    """The message of a query that two results of :meth:`Evaluator.combine` give, each ``(position,
    given as an empty ranking)``."""
    empty = [f"result {i}" for i, is_empty in (first, second) if is_empty]
    why = f" (as an empty ranking in {' and '.join(empty)}, which is a query given too)" if empty else ""
    return f"combine: query {query!r} is in result {first[0]} and in result {second[0]}{why}"


class _TopKRun:
    """A top k as a run (what :class:`~irspec.data.Run` gives the engine: ``frame``, ``keys``,
    ``query_blocks``, ``name``, ``source``, ``runid``, ``len``), its documents checked distinct in each
    row. The frame is made only when asked for: with integer ids the engine ranks the matrix and finds
    the labels by the numbers themselves (:attr:`top`), and never needs the ids' text."""

    source = TOPK
    runid: str | None = None

    def __init__(self, top: TopK, name: str = "run") -> None:
        self.top = top
        self.name = name
        self.query_blocks = top.blocks
        self.empty = top.empty
        if top.numbers is None:
            self._keys: np.ndarray | None = pair_keys(top.frame, self.query_blocks)
            top.check_distinct(self._keys)
        else:
            top.check_distinct(np.zeros(0, dtype=np.uint64))  # by the numbers: no keys needed
            self._keys = None

    @property
    def frame(self) -> pl.DataFrame:
        return self.top.frame

    @property
    def keys(self) -> np.ndarray | None:
        """The rows' pair keys when they were made (string ids); ``None`` otherwise."""
        return self._keys

    def __len__(self) -> int:
        return self.top.size
