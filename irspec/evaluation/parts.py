"""A run evaluated in parts (blocks of a streamed run, batches of queries) and the parts made one result.

:func:`evaluate_part` evaluates a run, or a part of one, as a :class:`Part`: the values of the queries
it answers, with what the whole run's warnings need. :func:`evaluate_parts` opens a run whole or,
when it is too large for the memory budget, as blocks of whole queries (:mod:`irspec.data.stream`);
:func:`finish` makes any number of parts the run's :class:`~irspec.evaluation.result.Result`: their
values in query-id order, the qrels queries none answers, and the whole run's warnings said once.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from irspec.data import MappingRun, mapping_run
from irspec.data.objects import MappingScores
from irspec.evaluation.compute import compute_metric, judgment_coverage, resolve
from irspec.evaluation.context import Context, Options
from irspec.evaluation.index import QrelsIndex, sub_index
from irspec.evaluation.notes import coverage_note, coverage_notes, level_warnings
from irspec.evaluation.ranking import build_context
from irspec.evaluation.result import Result, handed_over
from irspec.frozen import frozen
from irspec.spec.registry import Metric

__all__ = ["Part", "context_values", "evaluate_part", "evaluate_parts", "finish"]


@frozen
class Part:
    """A run, or a part of one (a block of a streamed run, a batch of queries), evaluated on its own:
    the values of the queries it answers that the qrels know, with what :func:`finish` needs to make
    the whole run's :class:`Result` of any number of parts: the queries each answers, its rows, and its
    judgment coverage. The per-query values do not depend on the other queries (kernels compute each
    query on its own), so the parts' values together are the whole run's."""

    result: Result | None
    """The answered queries' values (``None`` when the qrels know none of them); its warnings are void."""
    coverage: tuple[list[str], np.ndarray, np.ndarray]
    """:func:`~irspec.evaluation.compute.judgment_coverage` of the answered queries."""
    seen: frozenset[str]
    """Every query id of the part with a document, those the qrels lack too."""
    rows: int
    empty: frozenset[str] = frozenset()
    """The query ids the part gives with no document (a dict's empty ranking, a top k's row of ``-1``):
    evaluated as queries the run lacks, but given (:attr:`irspec.data.Run.empty`)."""


_NO_COVERAGE: tuple[list[str], np.ndarray, np.ndarray] = ([], np.zeros(0), np.zeros(0, dtype=np.int64))

_NO_RUN = MappingRun(
    {}, MappingScores([], [], np.zeros(0, dtype=np.int64), np.zeros(0), np.dtype(np.float64)), "run"
)
"""A run of no document (``{}``), what the qrels queries no part answers are evaluated as."""


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
    # a run of dicts, or read by numpy, has its query ids as a list
    listed = getattr(run, "mapping", None) or getattr(run, "plain", None)
    ids = frozenset(listed.query_ids if listed is not None else run.query_blocks[0].to_list())
    empty = frozenset(run.empty)
    known = [q for q in ids if q in index.position]
    if not known:
        return Part(None, _NO_COVERAGE, ids, len(run), empty)
    coverage: list[Any] = []
    own = sub_index(index, known) if narrow and len(known) < len(index.query_ids) else index
    skip = dataclasses.replace(options, missing_queries="skip")  # the whole run's missing queries: finish()
    result = _evaluate_run(own, run, metrics, skip, coverage, inputs)
    return Part(result, coverage[0], ids, len(run), empty)


def evaluate_parts(
    index: QrelsIndex,
    src: Any,
    metrics: list[Metric],
    options: Options,
    memory: Any = None,
    columns: Any = None,
    inputs: Mapping[str, Any] | None = None,
    *,
    small: bool = False,
) -> tuple[str, str, str | None, list[Part]]:
    """A run's name, source, runid and :class:`Part`: one when it is read whole, one a block when it is
    too large for ``memory`` (:mod:`irspec.data.stream`); a small file read without polars when
    ``small`` (:mod:`irspec.data.small`)."""
    # A dict of dicts is evaluated from its dicts (MappingRun) when it can be: read_run's Run of it
    # would make a column of every docno, and most of them are judged nowhere. One read already, by a
    # caller that asks whether it could be (the pytrec_eval drop-in), is taken as it is when it looked
    # up this index's judged docnos.
    mapping = src.mapping if isinstance(src, MappingRun) else None
    if mapping is not None and mapping.wanted is not None and mapping.wanted is not index.judged_by_query():
        src = src.mapping_given
    from_dicts = (
        src
        if isinstance(src, MappingRun)
        else mapping_run(src, wanted=index.judged_by_query())
        if isinstance(src, Mapping)
        else None
    )
    if from_dicts is not None:
        return (
            from_dicts.name,
            from_dicts.source,
            from_dicts.runid,
            [evaluate_part(index, from_dicts, metrics, options, inputs)],
        )
    # A file's readers, imported for a file only: a run of dicts (the pytrec_eval drop-in, an
    # Evaluator in a training loop) evaluates without them. A small file may be read already, without
    # polars (irspec.data.stream.open_runs).
    from irspec.data.plain import PlainReading, PlainRun, read_plain, small_plain_run
    from irspec.data.stream import DISCARD, RunBlocks, open_run, reads_plain

    read_already: PlainRun | MappingRun | None = None
    if isinstance(src, PlainRun):
        read_already = src
    elif small and columns is None:
        read_already = small_plain_run(src)
    # A large clean run file read by numpy (begun by read_early, or now), no polars: each part evaluated
    # while the next ones are read; the parts are void if it turns out not to be clean
    reading = None
    if isinstance(src, PlainReading):
        reading = src
    elif read_already is None and columns is None and reads_plain(src, memory):
        reading = read_plain(os.fspath(src))
    if reading is not None:
        src = reading.path
        if index.plain_keys is None:  # judgments not keyed so (docnos not ASCII, keys alike)
            reading.close()
        else:
            try:
                read = [evaluate_part(index, part, metrics, options, inputs) for part in reading.parts()]
            finally:  # an error evaluating a part: the reading stopped, not left waiting for a taker
                reading.close()
            if reading.whole:
                return reading.name, src, reading.runid, read
    run = read_already if read_already is not None else open_run(src, memory, columns=columns)
    if not isinstance(run, RunBlocks):
        return run.name, run.source, run.runid, [evaluate_part(index, run, metrics, options, inputs)]
    parts: list[Part] = []
    with run:
        for block in run:
            if block is DISCARD:  # the run is not grouped: what was read is void, its partitions follow
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
        results.append(
            _evaluate_run(sub_index(index, missing), _NO_RUN, list(metrics), options, inputs=inputs)
        )
    query_ids = [q for r in results for q in r.query_ids]
    order = sorted(range(len(query_ids)), key=query_ids.__getitem__)
    values = np.concatenate([r.values for r in results]) if results else np.empty((0, len(metrics)))
    # a text metric keeps its (empty) strings when no query is evaluated: every report looks them up
    keys = [str(m) for m in metrics if m.aggregate == "none"]
    texts = {key: [t for r in results for t in r.texts[key]] for key in keys}
    return Result(
        name,
        source,
        tuple(metrics),
        tuple([query_ids[i] for i in order]),
        handed_over(values[order]),
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
    parts = judgment_coverage(ctx)
    if coverage is not None:  # a part of a run: the whole run's warnings are told once, by finish()
        coverage.append(parts)
        judged = None
    else:
        notes += level_warnings(index, options, metrics)
        judged, note = coverage_note(run.source, [parts], options)
        notes += note
    values, texts = context_values(ctx, metrics)
    # The context lists queries in the run's order; results list them sorted by id.
    order = sorted(range(ctx.nq), key=ctx.query_ids.__getitem__)
    return Result(
        run.name,
        run.source,
        tuple(metrics),
        tuple([ctx.query_ids[i] for i in order]),
        handed_over(values[order]),
        options,
        tuple(notes),
        {name: tuple(strings[i] for i in order) for name, strings in texts.items()},
        judged_at_10=judged,
        runid=run.runid,
    )


def context_values(ctx: Context, metrics: Sequence[Metric]) -> tuple[np.ndarray, dict[str, list[str]]]:
    """Every metric's values from ``ctx`` (queries in the context's order × metrics), and the text
    metrics' strings by metric: what a run's evaluation computes once its context is built, for a
    caller that builds the context itself (:mod:`irspec.recsys.matrices`, from a sparse matrix)."""
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
    return values, texts
