"""Runs evaluated against qrels read once: the entry point, each run a :class:`~irspec.evaluation.result.Result`.

:func:`evaluate_many` binds the metrics, reads the judgments (:mod:`irspec.evaluation.judgments`) and
indexes them once, evaluates each run (whole or in blocks: :mod:`irspec.evaluation.parts`), makes
the runs' names distinct (:func:`distinct_names`) and issues their warnings (:func:`issue_warnings`,
attributed to the user's line). Knows nothing of plans, reports or the command line.
"""

from __future__ import annotations

import dataclasses
import io
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import FrameType
from typing import Any

from irspec.data import read_run
from irspec.data.plain import PlainReading
from irspec.data.small import small_inputs
from irspec.data.stream import closing_early, parse_memory, read_early
from irspec.errors import EvaluationError, InputTypeError, IrspecWarning, quote
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import Options
from irspec.evaluation.evaluated import collect_warnings
from irspec.evaluation.index import QrelsIndex, index_qrels
from irspec.evaluation.judgments import Judgments, read_judgments
from irspec.evaluation.notes import summarised
from irspec.evaluation.parts import evaluate_parts, finish
from irspec.evaluation.result import Result
from irspec.spec.registry import Metric

__all__ = ["distinct_names", "evaluate_many", "issue_warnings", "one_mapping_run", "several_runs"]


def evaluate_many(
    qrels: Any,
    runs: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    options: Options | None = None,
    columns: Mapping[str, str] | None = None,
    memory: str | int | None = None,
    **kwargs: Any,
) -> list[Result]:
    """Evaluate several runs against one qrels, which is read and indexed once: a result per run, in
    the order given.

    ``runs`` is what :func:`irspec.evaluate` takes as its run, always giving a list: a list or tuple of
    runs (an empty one gives ``[]``), a mapping ``{name: run}`` (the names label the results), or one
    run (a path, a ``{qid: {docno: score}}`` dict, a frame, an open file); an iterator of runs (a
    generator) is read one run at a time, as it comes. ``columns`` names the columns of qrels and runs
    given as frames, Arrow data or Parquet files (see :func:`irspec.read_qrels`); ``memory`` as in
    :func:`irspec.evaluate`; ``kwargs`` are :class:`Options`' fields when ``options`` is not given (both is an error)."""
    if options is None:
        options = Options(**kwargs)
    elif kwargs:
        # one of them would have to lose: the keywords were dropped silently (depth=1 beside options=)
        given = ", ".join(f"{k}=" for k in sorted(kwargs))
        raise EvaluationError(
            f"options given both as options= and as keywords ({given}): give them one way, "
            f"e.g. options=dataclasses.replace(options, {min(kwargs)}=...)"
        )
    runs = _runs(runs, columns)
    if memory is not None:
        parse_memory(memory)  # a bad size fails before any reading
    bound = bind_metrics(metrics, qrels.qrels if isinstance(qrels, Judgments) else qrels)
    if not bound:
        raise EvaluationError("no metrics to compute")
    # A metric over another input (a plugin's log, say) goes through irspec.evaluation.inputs; one over qrels read
    # by a plugin (with subtopics) gets that input beside the ordinary qrels.
    # Small files (a few MB in all) are read and evaluated without polars: its import would cost more.
    # Runs given lazily (a generator) are taken one at a time, as they come: never weighed, all read so.
    small = columns is None and isinstance(runs, (list, tuple)) and small_inputs([qrels, *runs])
    first: list[Any] = []
    if (
        isinstance(runs, (list, tuple))
        and runs
        and columns is None
        and not (small or isinstance(qrels, Judgments))
    ):
        # a large first run is read on worker threads while the qrels are read
        first = [read_early(runs[0], memory)]
        runs = [*first, *runs[1:]]
    with closing_early(first):
        # a run begun by numpy wants qrels read without polars too (its import is what it spares)
        plain = any(isinstance(r, PlainReading) for r in first)
        judgments = read_judgments(qrels, bound, columns, small=small, plain=plain)
        index = judgments.index if isinstance(qrels, Judgments) else index_qrels(judgments.qrels)
        inputs = judgments.inputs
        results = distinct_names(
            [_evaluate_source(index, r, bound, options, memory, columns, inputs, small) for r in runs]
        )
    issue_warnings(summarised(collect_warnings(results)))
    return results


def _is_mapping(x: Any) -> bool:
    # A run of a million queries asks this a million times: a dict's exact type first, which is far
    # cheaper than an abstract base class's check.
    return type(x) is dict or isinstance(x, Mapping)


def one_mapping_run(run: Mapping[Any, Any]) -> bool:
    """Whether the mapping ``run`` is one run in pytrec_eval's shape ``{qid: {docno: score}}`` rather
    than runs by name, told by its first value: a mapping of scores (or an empty one), or no value at
    all. One look, not one a query: a run of a million queries is asked this on every evaluation, and
    a value of another shape further on is an error of the dict's reader, naming its query."""
    first: Any = next(iter(run.values()), {})
    return _is_mapping(first) and not _is_mapping(next(iter(first.values()), None))


def _named_run(name: str, run: Any, columns: Mapping[str, str] | None) -> Any:
    """Run ``name`` of a mapping of runs, read; one that is no run says which, and why the mapping was
    taken for runs by name (``{"q1": [0.5, 0.2]}``, scores without their docnos, is one)."""
    try:
        read = read_run(run, columns=columns)
    except InputTypeError as e:
        raise InputTypeError(
            f"{e.reason} (a mapping is read as {{name: run}} when its values are not {{docno: score}} dicts)",
            f"run {quote(name)}",
        ) from None
    return dataclasses.replace(read, name=name)


def several_runs(run: Any, columns: Mapping[str, str] | None = None) -> Iterable[Any] | None:
    """The runs ``run`` stands for when it is several (``None`` when it is one), read one at a time.

    A mapping is one run in pytrec_eval's shape ``{qid: {docno: score}}`` when its values are mappings
    of scores, else ``{name: run}``; a list or tuple of paths, runs, dicts or frames is several runs (a
    list of tuples, such as ir_measures' ``ScoredDoc`` rows, is one run)."""
    if isinstance(run, Mapping):
        if one_mapping_run(run):
            return None
        for name in run:
            if not isinstance(name, str):
                raise EvaluationError(f"run names must be strings, not {type(name).__name__} ({name!r})")
        return (_named_run(name, r, columns) for name, r in run.items())
    if isinstance(run, (list, tuple)) and not any(isinstance(r, tuple) for r in run):
        if not run:
            raise EvaluationError("no runs to evaluate: the list of runs is empty")
        return run
    return None


def _runs(runs: Any, columns: Mapping[str, str] | None) -> Iterable[Any]:
    """The runs :func:`evaluate_many` evaluates, as :func:`several_runs` tells them. Iterating any other
    value would misread it: a mapping's keys taken for paths (its runs or its names dropped), a path's
    characters for paths, a frame's columns for runs."""
    if isinstance(runs, Iterator) and not isinstance(runs, io.IOBase):  # an open file is one run
        return runs
    if isinstance(runs, (list, tuple)) and not runs:
        return runs
    several = several_runs(runs, columns)
    return [runs] if several is None else several


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
        which = [f"{label!r} ({results[i].run_source})" for label, i in zip(labels, members, strict=True)]
        text = (
            f"{len(members)} runs are named {name!r}; labelled " + ", ".join(which[:-1]) + " and " + which[-1]
        )
        for label, i in zip(labels, members, strict=True):
            out[i] = dataclasses.replace(results[i], run_name=label, warnings=(*results[i].warnings, text))
    return out


# irspec's own directory (this module is one level down in it): frames from files below it are irspec's
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def issue_warnings(messages: Iterable[str]) -> None:
    """Issue ``messages`` as :class:`~irspec.errors.IrspecWarning`, attributed to the first caller
    outside irspec (the line of the user's code that asked for the evaluation)."""
    level = 2
    frame: FrameType | None = sys._getframe(1)
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
    small: bool = False,
) -> Result:
    """One run, read whole or, when it is too large for ``memory``, in blocks (or without polars when
    ``small``: :mod:`irspec.data.small`)."""
    name, source, runid, parts = evaluate_parts(
        index, src, metrics, options, memory, columns, inputs, small=small
    )
    return finish(index, name, source, parts, metrics, options, inputs, runid=runid)
