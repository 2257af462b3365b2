"""The evaluation engine: runs evaluated against qrels into a :class:`Result` each.

A run is joined with the qrels and ranked (:mod:`irspec.evaluation.ranking`), its metrics computed by
their kernels (:mod:`irspec.evaluation.compute`), and the values form a :class:`Result`. A run too large
for memory is evaluated block by block (:mod:`irspec.data.stream`) and the blocks made one result.
Knows nothing of plans, reports or the command line.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irspec.data import read_run
from irspec.data.frames import make_frame
from irspec.data.stream import RunBlocks, open_run, parse_memory
from irspec.errors import EvaluationError, IrspecWarning
from irspec.evaluation.compute import bind_metrics, compute_metric, judgment_coverage, resolve
from irspec.evaluation.context import Options
from irspec.evaluation.index import QrelsIndex, index_qrels, sub_index
from irspec.evaluation.judgments import Judgments, read_judgments
from irspec.evaluation.means import aggregate_values
from irspec.evaluation.notes import coverage_note, coverage_notes, level_warnings
from irspec.evaluation.ranking import build_context
from irspec.spec.registry import Metric

__all__ = [
    "Result",
    "Part",
    "evaluate_part",
    "evaluate_parts",
    "finish",
    "evaluate_many",
    "issue_warnings",
    "distinct_names",
    "collect_warnings",
    "results_frame",
]

# --------------------------------------------------------------------------------------------------
# Results.


@dataclass(frozen=True, eq=False)
class Result:
    """The evaluation of one run: per-query values and their aggregates, keyed by canonical text.

    ``values`` is a (queries × metrics) float array in the order of ``query_ids`` and ``metrics``; a NaN
    marks a query a metric leaves out (``SL(unfound=skip)``). A text-valued metric (``relstring``) has
    NaN there, its strings in ``texts``, and NaN as its aggregate. ``warnings`` say what the values rest
    on that the user may not expect: queries the run lacks or has beyond the qrels, a run without
    lines, a relevance level at which nothing is relevant, a name shared with another run.
    """

    run_name: str
    run_source: str
    metrics: tuple[Metric, ...]
    query_ids: tuple[str, ...]
    values: np.ndarray
    options: Options
    warnings: tuple[str, ...] = ()
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    judged_at_10: float | None = None
    """The run's mean Judged@10 over the queries it answers (see :func:`judged_at_10`), whatever the
    metrics; ``None`` when not computed (a result not from qrels and a run) or no query was answered."""
    tables: tuple[Any, ...] = ()
    """What an input other than a run offers beside its metrics (:class:`~irspec.spec.definitions.InputTable`,
    a log's top queries say), from its data object's ``tables()``; reports render and plot them."""
    runid: str | None = None
    """The run's own runid (:attr:`irspec.data.Run.runid`), which trec_eval's ``runid`` line prints;
    ``None`` when its input has none. ``run_name`` is what every output calls the run."""
    _aggregate: dict[str, float] = field(default_factory=dict, repr=False)

    def aggregate(self) -> dict[str, float]:
        """Summary value per metric: mean, sum or geometric mean over queries, as the metric says."""
        if not self._aggregate:
            for j, m in enumerate(self.metrics):
                self._aggregate[str(m)] = aggregate_values(self.values[:, j], m.aggregate)
        return dict(self._aggregate)

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``{query_id: {metric: value}}`` for every evaluated query (a string for a text metric)."""
        names = [str(m) for m in self.metrics]
        out = {q: dict(zip(names, row.tolist())) for q, row in zip(self.query_ids, self.values)}
        for name, texts in self.texts.items():
            for q, text in zip(self.query_ids, texts):
                out[q][name] = text
        return out

    def column(self, metric: Metric | str) -> np.ndarray:
        """One metric's per-query values, aligned with ``query_ids``."""
        key = str(metric)
        for j, m in enumerate(self.metrics):
            if str(m) == key:
                return self.values[:, j]
        raise KeyError(key)

    def to_frame(self, wide: bool = False, backend: str = "polars") -> Any:
        """The per-query values as a data frame (see :func:`results_frame`): long, one row per query and
        metric (``run, query_id, metric, value``), or ``wide``, one row per query and a column per metric.
        ``backend`` is ``"polars"`` or ``"pandas"`` (installed separately)."""
        return results_frame([self], wide=wide, backend=backend)


def results_frame(results: Sequence[Result], *, wide: bool = False, backend: str = "polars") -> Any:
    """The per-query values of ``results`` as one data frame, runs one after another, queries in id order.

    Long (default): columns ``run, query_id, metric, value``, one row per query and metric, metrics in
    the order evaluated. A text-valued metric (``relstring``) has a null ``value`` and its string in a
    ``text`` column, which is there only when some metric has text values. ``wide``: columns ``run,
    query_id`` and one per metric (a text metric's column holds strings; a metric some run lacks is
    null for it). An undefined value (a NaN, such as ``SL(unfound=skip)`` leaves) is null.
    ``backend``: ``"polars"`` or ``"pandas"``.
    """
    names: list[str] = []  # every metric of every result, first seen first
    for res in results:
        names.extend(str(m) for m in res.metrics if str(m) not in names)
    texts = {name for res in results for name in res.texts}
    if wide:
        columns: dict[str, list[Any]] = {"run": [], "query_id": []}
        columns.update((name, []) for name in names)
        for res in results:
            columns["run"] += [res.run_name] * len(res.query_ids)
            columns["query_id"] += list(res.query_ids)
            own = {str(m): j for j, m in enumerate(res.metrics)}
            for name in names:
                if name in res.texts:
                    columns[name] += list(res.texts[name])
                elif name in own:
                    columns[name] += res.values[:, own[name]].tolist()
                else:
                    columns[name] += [None] * len(res.query_ids)
        types = {"run": "str", "query_id": "str"} | {name: "str" if name in texts else "float" for name in names}
        return make_frame(columns, types, backend)
    columns = {"run": [], "query_id": [], "metric": [], "value": []}
    if texts:
        columns["text"] = []
    for res in results:
        keys = [str(m) for m in res.metrics]
        nq, nm = len(res.query_ids), len(keys)
        columns["run"] += [res.run_name] * (nq * nm)
        columns["query_id"] += np.repeat(np.asarray(res.query_ids, dtype=object), nm).tolist()
        columns["metric"] += keys * nq
        columns["value"] += res.values.ravel().tolist()  # row-major: query by query, metrics in order
        if texts:
            strings: list[str | None] = [None] * (nq * nm)
            for j, key in enumerate(keys):
                if key in res.texts:
                    strings[j::nm] = res.texts[key]
            columns["text"] += strings
    types = {"run": "str", "query_id": "str", "metric": "str", "value": "float", "text": "str"}
    return make_frame(columns, types, backend)



def evaluate_many(
    qrels: Any,
    runs: Iterable[Any],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    options: Options | None = None,
    columns: Mapping[str, str] | None = None,
    memory: str | int | None = None,
    **kwargs: Any,
) -> list[Result]:
    """Evaluate several runs against one qrels, which is read and indexed once. ``columns`` names the
    columns of qrels and runs given as frames (see :func:`irspec.read_qrels`); ``memory`` as in
    :func:`irspec.evaluate`; ``kwargs`` are :class:`Options`' fields when ``options`` is not given."""
    options = options or Options(**kwargs)
    if memory is not None:
        parse_memory(memory)  # a bad size fails before any reading
    bound = bind_metrics(metrics, qrels.qrels if isinstance(qrels, Judgments) else qrels)
    if not bound:
        raise EvaluationError("no metrics to compute")
    # A metric over another input (a plugin's log, say) goes through irspec.evaluation.inputs; one over qrels read
    # by a plugin (with subtopics) gets that input beside the ordinary qrels.
    judgments = read_judgments(qrels, bound, columns)
    index = judgments.index if isinstance(qrels, Judgments) else index_qrels(judgments.qrels)
    inputs = judgments.inputs
    results = distinct_names([_evaluate_source(index, r, bound, options, memory, columns, inputs) for r in runs])
    issue_warnings(collect_warnings(results))
    return results


def distinct_names(results: Sequence[Result]) -> list[Result]:
    """``results`` with every run name made unique, so that no output shows two rows of one name.

    The first run of a name keeps it; the others become ``name (2)``, ``name (3)``, ... (skipping a
    label another run already has), in the order given; every run of a shared name gets a warning
    that says which file has which label.
    """
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        groups.setdefault(r.run_name, []).append(i)
    taken = set(groups)
    out = list(results)
    for name, members in groups.items():
        if len(members) < 2:
            continue
        labels, k = [name], 2
        for _ in members[1:]:
            while f"{name} ({k})" in taken:
                k += 1
            labels.append(f"{name} ({k})")
            taken.add(labels[-1])
        which = [f"{label!r} ({results[i].run_source})" for label, i in zip(labels, members)]
        text = f"{len(members)} runs are named {name!r}; labelled " + ", ".join(which[:-1]) + " and " + which[-1]
        for label, i in zip(labels, members):
            out[i] = dataclasses.replace(results[i], run_name=label, warnings=(*results[i].warnings, text))
    return out


def collect_warnings(results: Iterable[Any]) -> list[str]:
    """The warnings of ``results``, each once, in order: one about the qrels (a relevance level at
    which nothing is relevant) or about two runs is on every result it concerns."""
    return list(dict.fromkeys(w for r in results for w in r.warnings))


# irspec's own directory (this module is one level down in it): frames from files below it are irspec's
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def issue_warnings(messages: Iterable[str]) -> None:
    """Issue ``messages`` as :class:`~irspec.errors.IrspecWarning`, attributed to the first caller
    outside irspec (the line of the user's code that asked for the evaluation)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    for text in messages:
        warnings.warn(text, IrspecWarning, stacklevel=level)


def _evaluate_source(
    index: QrelsIndex,
    src: Any,
    metrics: list[Metric],
    options: Options,
    memory: Any,
    columns: Any = None,
    inputs: Mapping[str, Any] | None = None,
) -> Result:
    """One run, read whole or, when it is too large for ``memory``, in blocks."""
    name, source, runid, parts = evaluate_parts(index, src, metrics, options, memory, columns, inputs)
    return finish(index, name, source, parts, metrics, options, inputs, runid=runid)


@dataclass(frozen=True)
class Part:
    """A run, or a part of one (a block of a streamed run, a batch of queries), evaluated on its own:
    the values of the queries it answers that the qrels know, with what :func:`finish` needs to make
    the whole run's :class:`Result` of any number of parts: the queries each answers, its rows, and its
    judgment coverage. The per-query values do not depend on the other queries (kernels compute each
    query on its own), so the parts' values together are the whole run's."""

    result: Result | None
    """The answered queries' values (``None`` when the qrels know none of them); its warnings are void."""
    coverage: tuple[list[str], np.ndarray, np.ndarray]
    """:func:`judgment_coverage` of the answered queries."""
    seen: frozenset[str]
    """Every query id of the part, those the qrels lack too."""
    rows: int


_NO_COVERAGE: tuple[list[str], np.ndarray, np.ndarray] = ([], np.zeros(0), np.zeros(0, dtype=np.int64))


def evaluate_part(
    index: QrelsIndex,
    run: Any,
    metrics: list[Metric],
    options: Options,
    inputs: Mapping[str, Any] | None = None,
    *,
    narrow: bool = False,
) -> Part:
    """``run`` (a :class:`~irspec.data.Run`, or a block of one) evaluated as a :class:`Part`. With
    ``narrow``, against an index of the judgments of its own queries only (a streamed run's block:
    joining each block with every judgment would cost the whole qrels a block)."""
    ids = frozenset(run.query_blocks[0].to_list())
    known = [q for q in ids if q in index.position]
    if not known:
        return Part(None, _NO_COVERAGE, ids, run.frame.height)
    coverage: list[Any] = []
    own = sub_index(index, known) if narrow and len(known) < len(index.query_ids) else index
    skip = dataclasses.replace(options, missing_queries="skip")  # the whole run's missing queries: finish()
    result = _evaluate_run(own, run, metrics, skip, coverage, inputs)
    return Part(result, coverage[0], ids, run.frame.height)


def evaluate_parts(
    index: QrelsIndex,
    src: Any,
    metrics: list[Metric],
    options: Options,
    memory: Any = None,
    columns: Any = None,
    inputs: Mapping[str, Any] | None = None,
) -> tuple[str, str, str | None, list[Part]]:
    """A run's name, source, runid and :class:`Part`: one when it is read whole, one a block when it is
    too large for ``memory`` (:mod:`irspec.data.stream`)."""
    run = open_run(src, memory, columns=columns)
    if not isinstance(run, RunBlocks):
        return run.name, run.source, run.runid, [evaluate_part(index, run, metrics, options, inputs)]
    parts: list[Part] = []
    with run:
        for block in run:
            if block is None:  # the run is not grouped: what was read is void, its partitions follow
                parts = []
                continue
            parts.append(evaluate_part(index, block, metrics, options, inputs, narrow=True))
    return run.name, run.source, run.runid, parts


def finish(
    index: QrelsIndex,
    name: str,
    source: str,
    parts: Sequence[Part],
    metrics: Sequence[Metric],
    options: Options,
    inputs: Mapping[str, Any] | None = None,
    *,
    runid: str | None = None,
) -> Result:
    """The :class:`Result` of a run evaluated in ``parts`` (each query in one part): their values, the
    qrels queries none of them answers as ``options.missing_queries`` says, and the whole run's
    warnings (queries missing or unknown, coverage, relevance levels); ``runid`` the run's own."""
    seen = frozenset().union(*(p.seen for p in parts))
    rows = sum(p.rows for p in parts)
    missing = sorted(set(index.query_ids) - seen)
    extra = {q for q in seen if q not in index.position}
    notes = coverage_notes(index, source, extra, missing, rows == 0, options)
    notes += level_warnings(index, options, metrics)
    answered = [p for p in parts if p.result is not None]
    judged, note = coverage_note(source, [p.coverage for p in answered], options)
    notes += note
    results = [p.result for p in answered if p.result is not None]
    if missing and options.missing_queries == "zero":  # scored as trec_eval -c scores them
        results.append(_evaluate_run(sub_index(index, missing), read_run({}), list(metrics), options, inputs=inputs))
    query_ids = [q for r in results for q in r.query_ids]
    order = sorted(range(len(query_ids)), key=query_ids.__getitem__)
    values = np.concatenate([r.values for r in results]) if results else np.empty((0, len(metrics)))
    texts = {key: [t for r in results for t in r.texts[key]] for key in (results[0].texts if results else {})}
    return Result(
        name,
        source,
        tuple(metrics),
        tuple([query_ids[i] for i in order]),
        values[order],
        options,
        tuple(notes),
        {key: tuple(strings[i] for i in order) for key, strings in texts.items()},
        judged_at_10=judged,
        runid=runid,
    )


def _evaluate_run(
    index: QrelsIndex,
    run: Any,
    metrics: list[Metric],
    options: Options,
    coverage: list[Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> Result:
    ctx, notes = build_context(index, run, options, inputs)
    notes += level_warnings(index, options, metrics)
    parts = judgment_coverage(ctx)
    if coverage is not None:  # a block of a streamed run: the whole run's coverage is told once
        coverage.append(parts)
        judged = None
    else:
        judged, note = coverage_note(run.source, [parts], options)
        notes += note
    values = np.empty((ctx.nq, len(metrics)))
    texts: dict[str, list[str]] = {}
    for j, m in enumerate(metrics):
        if m.aggregate == "none":
            strings = [str(t) for t in resolve(m.definition.compute)(ctx, m)]
            if ctx.missing is not None:
                for i in ctx.missing:
                    strings[i] = ""
            texts[str(m)] = strings
            values[:, j] = np.nan
            continue
        # A query the run does not answer (missing_queries="zero") has an empty ranking in the context, and
        # is scored as one, as trec_eval -c scores it (its "bogus ranking"): each metric's own rule for an
        # empty ranking decides (0 for most, NumQ 1, NumRel R, Accuracy undefined).
        values[:, j] = compute_metric(ctx, m)
    # The context lists queries in the run's order; results list them sorted by id.
    order = sorted(range(ctx.nq), key=ctx.query_ids.__getitem__)
    return Result(
        run.name,
        run.source,
        tuple(metrics),
        tuple([ctx.query_ids[i] for i in order]),
        values[order],
        options,
        tuple(notes),
        {name: tuple(strings[i] for i in order) for name, strings in texts.items()},
        judged_at_10=judged,
        runid=run.runid,
    )


