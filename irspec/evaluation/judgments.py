"""The judgments runs are evaluated with: the qrels, or an input a plugin reads in place of them.

:func:`read_judgments` reads them once for any number of runs into :class:`Judgments`: the ordinary
:class:`~irspec.data.Qrels` every metric sees and, for the metrics that need it, the data object of an
:class:`~irspec.spec.definitions.InputReader` with ``as_qrels`` (qrels with subtopics), which the
contexts carry (``Context.input``). :func:`read_input` calls any registered reader (a log's too).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from irspec.data import Qrels, read_qrels
from irspec.data.small import qrels_of_mapping, small_qrels
from irspec.errors import EvaluationError, IrspecError
from irspec.evaluation.compute import bind_metrics, resolve
from irspec.evaluation.index import QrelsIndex
from irspec.frozen import frozen
from irspec.spec.plugins import get_registry
from irspec.spec.registry import Metric

__all__ = ["Judgments", "read_input", "read_judgments", "reads_qrels"]


def read_input(kind: str, source: Any, options: Mapping[str, Any] | None = None) -> Any:
    """Read ``source`` with the input reader registered as ``kind``; returns the plugin's data object.

    ``source`` is usually a path; a reader may document other accepted objects (records in memory).
    ``options`` are passed to the reader as keywords (those it documents, such as a log's ``ab``).
    """
    reader = get_registry().reader(kind)
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    read = resolve(reader.read)
    data = read(source, **_accepted(read, dict(options or {}), reader))
    if not hasattr(data, "ids"):
        raise EvaluationError(
            f"the {reader.name!r} reader of plugin {reader.plugin!r} returned a {type(data).__name__} without "
            "the ids attribute every input object must have"
        )
    return data


def _accepted(read: Any, options: dict[str, Any], reader: Any) -> dict[str, Any]:
    """``options`` that ``read`` takes: ``per_query=False`` is dropped for a reader that cannot stream
    (it reads whole); any other option it does not take is an error."""
    try:
        params = inspect.signature(read).parameters
    except (TypeError, ValueError):  # a builtin without a signature: pass everything
        return options
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return options
    if "per_query" not in params:
        options.pop("per_query", None)
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise EvaluationError(
            f"the {reader.name!r} reader of plugin {reader.plugin!r} takes no option {unknown[0]!r}"
        )
    return options


@frozen
class Judgments:
    """Qrels as the engine evaluates them: the ordinary :class:`~irspec.data.Qrels` every metric sees,
    and the inputs read in place of them (``{kind: data object}``) for the metrics that need one (qrels
    with subtopics, say: :attr:`~irspec.spec.definitions.InputReader.as_qrels`). Read once with
    :func:`read_judgments` and given as the qrels of :func:`evaluate_many` for any number of runs."""

    qrels: Qrels
    inputs: Mapping[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def index(self) -> QrelsIndex:
        """The qrels indexed, once for these judgments (:class:`irspec.Evaluator` holds them)."""
        return QrelsIndex(self.qrels)


def reads_qrels(kind: str) -> bool:
    """Whether the input ``kind`` is read in place of the qrels (a registered reader with ``as_qrels``),
    so that its metrics are computed from qrels and runs."""
    try:
        return get_registry().reader(kind).as_qrels
    except IrspecError:  # "run", or a kind no plugin registers
        return False


def read_judgments(
    source: Any,
    metrics: str | Metric | Iterable[str | Metric],
    columns: Mapping[str, str] | None = None,
    *,
    small: bool = False,
    plain: bool = False,
) -> Judgments:
    """The judgments ``metrics`` (specs or bound metrics) are computed with, read from ``source`` (what
    :func:`read_qrels` takes).

    When every metric needs a run (``needs="run"``) this is :func:`read_qrels`, unchanged. When some
    need an input that a plugin reads in place of the qrels (an :class:`~irspec.spec.definitions.InputReader`
    with ``as_qrels``), ``source`` is read by that reader, and its data object's ``qrels`` are the
    qrels of every metric; a metric that needs another input is an :class:`EvaluationError`.
    With ``small``, a small file of clean text is read without polars
    (:func:`~irspec.data.small.small_qrels`; the caller weighed the inputs: :func:`~irspec.data.small.small_inputs`).
    A plain dict of qrels (string ids, ``int`` labels) is read without polars too
    (:func:`~irspec.data.small.qrels_of_mapping`), whatever its size up to a few hundred thousand judgments.
    With ``plain``, a file of clean text is read by numpy (:func:`~irspec.data.plain.plain_qrels`: for
    a run read so, whose evaluation imports no polars either).
    """
    metrics = bind_metrics(metrics, source.qrels if isinstance(source, Judgments) else source)
    kinds = sorted({m.definition.needs for m in metrics} - {"run"})
    if isinstance(source, Judgments):
        unread = [k for k in kinds if k not in source.inputs]
        if unread:
            raise EvaluationError(
                f"these judgments were read without the {unread[0]!r} input the metrics need"
            )
        return source
    for kind in kinds:
        if not get_registry().reader(kind).as_qrels:
            wrong = next(m for m in metrics if m.definition.needs == kind)
            raise EvaluationError(
                f"{wrong} is computed from a {kind!r} input, not from qrels and runs; "
                "use irspec.evaluate_input (or a plan's log key)"
            )
    if not kinds:
        read: Qrels | None = small_qrels(source) if small and columns is None else None
        if read is None and columns is None and type(source) is dict:
            # pytrec_eval's dict of plain ids and labels, read without polars: its import and a frame
            # built, sorted and checked were ~3 ms of each irspec.evaluate of a few queries
            read = qrels_of_mapping(source)
        if read is None and plain and columns is None:
            from irspec.data.plain import plain_qrels  # what a run read by numpy has imported already

            read = plain_qrels(source)
        return Judgments(read if read is not None else read_qrels(source, columns=columns))
    if len(kinds) > 1:
        raise EvaluationError(
            f"the metrics need qrels read as {' and as '.join(map(repr, kinds))}; evaluate them separately"
        )
    if columns is not None:
        raise EvaluationError(
            f"columns= names the columns of ordinary qrels; the {kinds[0]!r} reader finds its own"
        )
    data = read_input(kinds[0], source)
    qrels = getattr(data, "qrels", None)
    if not isinstance(qrels, Qrels):
        raise EvaluationError(
            f"the {kinds[0]!r} reader returned a {type(data).__name__} whose qrels attribute is not an irspec Qrels"
        )
    return Judgments(qrels, {kinds[0]: data})
