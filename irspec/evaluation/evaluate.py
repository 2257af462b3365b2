"""Runs evaluated against qrels read once: the entry point, each run a :class:`~irspec.evaluation.result.Result`.

:func:`evaluate_many` binds the metrics, reads the judgments (:mod:`irspec.evaluation.judgments`) and
indexes them once, evaluates each run (whole or in blocks: :mod:`irspec.evaluation.parts`), makes
the runs' names distinct (:func:`distinct_names`) and issues their warnings (:func:`issue_warnings`,
attributed to the user's line). Knows nothing of plans, reports or the command line.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from types import FrameType
from typing import Any

from irspec.data.plain import PlainReading
from irspec.data.small import small_inputs
from irspec.data.stream import closing_early, parse_memory, read_early
from irspec.errors import EvaluationError, IrspecWarning
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import Options
from irspec.evaluation.evaluated import collect_warnings
from irspec.evaluation.index import QrelsIndex, index_qrels
from irspec.evaluation.judgments import Judgments, read_judgments
from irspec.evaluation.notes import summarised
from irspec.evaluation.parts import evaluate_parts, finish
from irspec.evaluation.result import Result
from irspec.spec.registry import Metric

__all__ = ["distinct_names", "evaluate_many", "issue_warnings"]


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
