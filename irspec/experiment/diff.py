"""Two runs compared query by query (``irspec diff``, :func:`diff`): where B wins and loses against A, and why.

>>> found = irspec.diff("qrels.txt", "bm25.run", "dense.run", "nDCG@10, AP")   # doctest: +SKIP
>>> found.losses(5), found.gains(5)          # the queries dense loses and wins most on nDCG@10  # doctest: +SKIP
>>> found                                    # in a notebook: the table and each query's rankings  # doctest: +SKIP

The per-query values are the engine's (:func:`~irspec.evaluation.evaluate.evaluate_many`, the two runs
against one reading of the qrels), never recomputed here; the rankings are the engine's too
(:func:`~irspec.evaluation.ranking.build_context`: score descending, then docno descending, as
trec_eval ranks, with ``depth`` applied). What this module adds is the reading a researcher does next:
the queries sorted by their difference on the first metric, and for each its top k of both runs side
by side (each document's label and its rank in the other run), the relevant documents one run has in
its top k and the other has not, and the unjudged documents of each top k. It computes; rendering is
:mod:`irspec.report.diff`'s, as :mod:`irspec.report.power` renders :mod:`irspec.experiment.power`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np
import polars as pl

from irspec.data import Run, read_run
from irspec.errors import EvaluationError, InputError, quote
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import UNJUDGED, MissingQueries, Options
from irspec.evaluation.evaluate import evaluate_many, issue_warnings
from irspec.evaluation.judgments import read_judgments
from irspec.evaluation.notes import first_few, queries_text
from irspec.evaluation.ranking import build_context
from irspec.frozen import frozen
from irspec.report import diff as render
from irspec.spec.registry import Metric

__all__ = ["Diff", "Document", "QueryDiff", "check_comparable", "diff"]


@frozen
class Document:
    """One document of a run's top k: its ``docno``, its qrels ``label`` (``None``: unjudged), whether
    it is ``relevant`` (label at or above the relevance level), its ``rank`` in this run and its rank
    in the other run (``other``; ``None``: the other run does not retrieve it, within the depth)."""

    docno: str
    rank: int
    label: int | None
    relevant: bool
    other: int | None

    @property
    def judged(self) -> bool:
        """Whether the qrels judge it: a label of 0 or more (a negative label is pooled but unjudged, as
        ``Judged@k`` counts it)."""
        return self.label is not None and self.label >= 0


@frozen
class QueryDiff:
    """One query: both runs' values of each metric (``a``, ``b``, in the order of :attr:`Diff.metrics`;
    NaN where a metric leaves the query out), the top k of each run (``top_a``, ``top_b``), the
    relevant documents B has in its top k and A has not (``gained``) and the other way round
    (``lost``), and how many documents of each top k are unjudged (absent from the qrels, or labelled
    below 0: pooled but unjudged, as ``Judged@k`` reads them)."""

    query_id: str
    a: tuple[float, ...]
    b: tuple[float, ...]
    top_a: tuple[Document, ...]
    top_b: tuple[Document, ...]
    gained: tuple[str, ...]
    lost: tuple[str, ...]
    unjudged_a: int
    unjudged_b: int

    @property
    def delta(self) -> tuple[float, ...]:
        """B minus A, per metric."""
        return tuple(b - a for a, b in zip(self.a, self.b, strict=True))


@frozen(eq=False)
class Diff:
    """Two runs compared query by query: :func:`diff`'s answer.

    ``queries`` holds every compared query in query-id order; :meth:`losses` and :meth:`gains` give
    them sorted by how much B loses or gains against A on the first metric (in the metric's direction:
    for a lower-is-better metric a rise is a loss), and :meth:`ordered` the losses, then the gains,
    then the queries neither. ``means_a`` and ``means_b`` are the runs' means over the queries compared
    (the engine's means, as evaluated, unless ``missing_queries="skip"`` leaves out a query one run
    lacks: then over the queries both runs answer, as the rest of the comparison). ``top`` is how many documents of each ranking each query shows.

    It renders itself: ``str()`` (text), :meth:`to_markdown`, :meth:`to_json`, :meth:`to_html` (a
    self-contained page) and, in a notebook, the page's interactive fragment (``_repr_html_``).
    """

    run_a: str
    run_b: str
    source_a: str
    source_b: str
    metrics: tuple[Metric, ...]
    queries: tuple[QueryDiff, ...]
    means_a: Mapping[str, float]
    means_b: Mapping[str, float]
    top: int
    options: Options
    warnings: tuple[str, ...] = ()
    shown: int | None = field(default=None)
    """How many losses and gains the text and Markdown show by default (``None``: every one)."""

    @property
    def metric(self) -> Metric:
        """The metric the queries are sorted by: the first."""
        return self.metrics[0]

    def gain(self, query: QueryDiff) -> float:
        """How much better B is than A on :attr:`metric` for ``query`` (negative: a loss; NaN: undefined)."""
        d = query.delta[0]
        return -d if self.metric.better == "lower" else d

    def losses(self, n: int | None = None) -> list[QueryDiff]:
        """The queries B does worse on, the largest loss first (ties by query id); the first ``n``."""
        found = sorted((q for q in self.queries if self.gain(q) < 0), key=self.gain)
        return found if n is None else found[:n]

    def gains(self, n: int | None = None) -> list[QueryDiff]:
        """The queries B does better on, the largest gain first (ties by query id); the first ``n``."""
        found = sorted((q for q in self.queries if self.gain(q) > 0), key=lambda q: -self.gain(q))
        return found if n is None else found[:n]

    def unchanged(self) -> list[QueryDiff]:
        """The queries neither run does better on (equal values, or undefined ones), by query id."""
        return [q for q in self.queries if not (self.gain(q) < 0 or self.gain(q) > 0)]

    def ordered(self, n: int | None = None) -> list[QueryDiff]:
        """The largest losses, then the largest gains (the first ``n`` of each), then, when ``n`` is
        ``None``, the queries neither run does better on."""
        return self.losses(n) + self.gains(n) + (self.unchanged() if n is None else [])

    def to_text(self, *, queries: int | None = 10, decimals: int = 4) -> str:
        """Aligned text: the means, the ``queries`` largest losses and gains (``None``: all), and each
        shown query's rankings side by side with the reasons."""
        return render.to_text(self, queries=queries, decimals=decimals)

    def to_markdown(self, *, queries: int | None = 10, decimals: int = 4) -> str:
        """Markdown: what :meth:`to_text` shows, as GitHub tables."""
        return render.to_markdown(self, queries=queries, decimals=decimals)

    def to_json(self, *, queries: int | None = None) -> str:
        """JSON: the runs, metrics and means, and every query (or the ``queries`` largest losses and
        gains) with its values, differences, rankings and reasons, in :meth:`ordered` order."""
        return render.to_json(self, queries=queries)

    def to_html(self, *, queries: int | None = None, decimals: int = 4) -> str:
        """A self-contained HTML page (inline style and script, nothing fetched): the query table,
        sortable by any column, and a click on a query shows its two rankings side by side."""
        return render.to_html(self, queries=queries, decimals=decimals)

    def _repr_html_(self) -> str:
        return render.fragment(self, queries=self.shown, decimals=4)

    def _repr_markdown_(self) -> str:
        return self.to_markdown(queries=self.shown if self.shown is not None else 10)

    def __str__(self) -> str:
        return self.to_text(queries=self.shown if self.shown is not None else 10)

    def __repr__(self) -> str:
        metrics = ", ".join(map(str, self.metrics))
        return f"Diff({self.run_a!r} -> {self.run_b!r}, metrics=[{metrics}], queries={len(self.queries)})"


def diff(
    qrels: Any,
    run_a: Any,
    run_b: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    top: int = 10,
    depth: int | None = None,
    relevance_level: int = 1,
    missing_queries: MissingQueries = "zero",
    queries: int | None = None,
) -> Diff:
    """Compare run B with run A query by query: both runs' values and B minus A on each metric, the
    queries sorted by B's largest losses and gains on the first metric, and for each query the ``top``
    documents of both rankings with their labels and their ranks in the other run, the relevant
    documents gained and lost in the top ``top``, and the unjudged documents of each.

    ``qrels``, ``run_a`` and ``run_b`` are what :func:`irspec.evaluate` takes (paths, dicts, frames,
    :class:`~irspec.data.Run` objects); ``metrics`` a spec text (``"nDCG@10, AP"``) or a list. ``depth``
    cuts both rankings before anything is measured (trec_eval ``-M``; a document below it is "not
    retrieved"); ``relevance_level`` is trec_eval's ``-l``. A qrels query one run answers and the other
    does not is scored as an empty ranking under ``missing_queries="zero"`` (trec_eval ``-c``) and left
    out under ``"skip"``; a warning names such queries either way. ``queries`` is how many losses and
    gains ``str()`` and the notebook show (``None``: all in the notebook, 10 each in text).

    Errors: an empty run, a text-valued metric (``relstring``: nothing to subtract), a first metric
    with no better direction (a count: nothing to call a loss), qrels that judge no query of either run
    (empty qrels, or another collection's), or, under ``"skip"``, no query of both. The same input
    given twice is a warning (every difference is 0).
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise EvaluationError(f"top must be an integer >= 1 (documents shown per ranking), got {quote(top)}")
    if queries is not None and (isinstance(queries, bool) or not isinstance(queries, int) or queries < 1):
        raise EvaluationError(f"queries must be an integer >= 1 or None, got {quote(queries)}")
    options = Options(
        relevance_level=relevance_level, depth=depth, missing_queries=missing_queries, judged_warning=0.5
    )
    bound = bind_metrics(metrics, qrels)
    if not bound:
        raise EvaluationError("no metrics to compare")
    check_comparable(bound)
    judgments = read_judgments(qrels, bound)
    runs = [read_run(run_a), read_run(run_b)]
    for run in runs:
        if len(run) == 0:
            raise EvaluationError(f"{run.source}: the run is empty (no lines): nothing to compare")
    _check_shared(judgments.qrels, runs, options)
    notes = []
    if _same(run_a, run_b, runs):
        given = runs[0].source if runs[0].source == runs[1].source else f"{runs[0].source}, {runs[1].source}"
        notes.append(f"the same run is given twice ({given}): every difference is 0")
    first, second = evaluate_many(judgments, runs, bound, options=options)
    notes += _coverage(judgments.qrels.query_ids, runs, (first.run_name, second.run_name), options)
    issue_warnings(notes)
    index = judgments.index
    tops = [_ranked(index, run, options) for run in runs]
    compared = _compared(first, second, tops, top, options.relevance_level)
    return Diff(
        first.run_name,
        second.run_name,
        first.run_source,
        second.run_source,
        tuple(bound),
        compared,
        _means(first, compared),
        _means(second, compared),
        top,
        options,
        tuple(dict.fromkeys([*first.warnings, *second.warnings, *notes])),
        queries,
    )


def check_comparable(metrics: Sequence[Metric]) -> None:
    """Raise an :class:`~irspec.errors.EvaluationError` when ``metrics`` cannot be compared query by
    query: a text-valued one (nothing to subtract), or a first one, which sorts the queries, with no
    better direction (a count: no loss or gain)."""
    for m in metrics:
        if m.definition.aggregate == "none":
            raise EvaluationError(
                f"{m}: a text-valued metric (one string per query) has no difference to compare; "
                "give metrics with numeric values"
            )
    if metrics[0].better == "neither":
        raise EvaluationError(
            f"{metrics[0]}: the queries are sorted by the first metric, and {metrics[0].name} has no better "
            "direction (a count), so nothing is a loss or a gain: put a metric such as nDCG@10 first"
        )


def _check_shared(qrels: Any, runs: Sequence[Run], options: Options) -> None:
    """Raise an :class:`~irspec.errors.InputError` naming the qrels when the comparison would hold no
    query that a run answers: means of 0 over no queries (or over queries neither run answers) look
    like a result and compare nothing."""
    judged = set(qrels.query_ids)
    if not judged:
        raise InputError(
            "the qrels have no judgments: expected the judgments of the runs' queries", qrels.source
        )
    answered = [judged.intersection(r.query_ids) for r in runs]
    if not answered[0] | answered[1]:
        ours = sorted(set(runs[0].query_ids) | set(runs[1].query_ids))
        raise InputError(
            f"no query of the qrels is in either run (the qrels' {first_few(sorted(judged))}; the runs' "
            f"{first_few(ours)}): expected the judgments of the runs' queries",
            qrels.source,
        )
    if options.missing_queries == "skip" and not answered[0] & answered[1]:
        raise InputError(
            f"no query of the qrels is answered by both runs ({first_few(sorted(answered[0] | answered[1]))} "
            "by one), and missing_queries='skip' leaves out the others: nothing to compare",
            qrels.source,
        )


def _same(a: Any, b: Any, runs: Sequence[Run]) -> bool:
    """Whether the two runs are one input: one object, or one file under two names."""
    if a is b:
        return True
    if isinstance(a, (str, os.PathLike)) and isinstance(b, (str, os.PathLike)) and "-" not in (a, b):
        try:
            return os.path.samefile(a, b)
        except OSError:
            return False
    return runs[0].frame.equals(runs[1].frame)


def _coverage(
    judged: Sequence[str], runs: Sequence[Run], names: tuple[str, str], options: Options
) -> list[str]:
    """A warning for the qrels queries one run answers and the other does not: which, and what they get."""
    known = set(judged)
    answered = [set(r.query_ids) & known for r in runs]
    fate = (
        "scored there as an empty ranking (0 on most measures), as trec_eval -c does"
        if options.missing_queries == "zero"
        else "left out of the comparison (missing_queries='skip')"
    )
    out = []
    for i, j in ((1, 0), (0, 1)):
        only = sorted(answered[j] - answered[i])
        if only:
            out.append(
                f"{names[i]} ({runs[i].source}) lacks {queries_text(len(only))} that {names[j]} answers "
                f"({first_few(only)}): {fate}"
            )
    return out


def _ranked(index: Any, run: Run, options: Options) -> pl.DataFrame:
    """The run as the engine ranks it (depth applied): ``query, docno, rank, label`` (label null when
    unjudged), one row per ranked document."""
    ctx, _ = build_context(index, run, options)
    label = ctx.label.astype(np.float64)
    label[ctx.label == UNJUDGED] = np.nan  # null once cast below
    frame = pl.DataFrame(
        {
            "query": pl.Series(ctx.query_ids, dtype=pl.String).gather(np.repeat(np.arange(ctx.nq), ctx.n)),
            "docno": ctx.frame.get_column("docno") if len(ctx.label) else [],
            "rank": ctx.rank.astype(np.int64),
            "label": label,
        },
        schema={"query": pl.String, "docno": pl.String, "rank": pl.Int64, "label": pl.Float64},
        nan_to_null=True,
    )
    return frame.with_columns(pl.col("label").cast(pl.Int64))


def _compared(
    first: Any, second: Any, ranked: Sequence[pl.DataFrame], top: int, level: int
) -> tuple[QueryDiff, ...]:
    """Every query both results hold (in id order), with its values and the two top-``top`` lists."""
    rows_b = {q: i for i, q in enumerate(second.query_ids)}
    lists = [_tops(ranked[i], ranked[1 - i], top, level) for i in (0, 1)]
    out = []
    for i, q in enumerate(first.query_ids):
        j = rows_b.get(q)
        if j is None:  # under missing_queries="skip", a query one run lacks
            continue
        top_a, top_b = lists[0].get(q, ()), lists[1].get(q, ())
        shown_a, shown_b = {d.docno for d in top_a}, {d.docno for d in top_b}
        out.append(
            QueryDiff(
                q,
                tuple(first.values[i].tolist()),
                tuple(second.values[j].tolist()),
                top_a,
                top_b,
                tuple(d.docno for d in top_b if d.relevant and d.docno not in shown_a),
                tuple(d.docno for d in top_a if d.relevant and d.docno not in shown_b),
                sum(not d.judged for d in top_a),
                sum(not d.judged for d in top_b),
            )
        )
    return tuple(out)


def _means(result: Any, compared: Sequence[QueryDiff]) -> dict[str, float]:
    """``result``'s means over the ``compared`` queries (a query only one run answers, under
    ``missing_queries="skip"``, is not compared, and its value would put a difference into the means that
    no compared query has)."""
    kept = {q.query_id for q in compared}
    return result.aggregate_over([q for q in result.query_ids if q in kept])


def _tops(own: pl.DataFrame, other: pl.DataFrame, top: int, level: int) -> dict[str, tuple[Document, ...]]:
    """Each query's top ``top`` documents of ``own``, with their ranks in ``other``."""
    shown = own.filter(pl.col("rank") <= top).join(
        other.select("query", "docno", pl.col("rank").alias("other")),
        on=["query", "docno"],
        how="left",
        maintain_order="left",
    )
    out: dict[str, list[Document]] = {}
    for q, docno, rank, label, elsewhere in shown.select(
        "query", "docno", "rank", "label", "other"
    ).iter_rows():
        relevant = label is not None and label >= level
        out.setdefault(q, []).append(Document(docno, rank, label, relevant, elsewhere))
    return {q: tuple(docs) for q, docs in out.items()}
