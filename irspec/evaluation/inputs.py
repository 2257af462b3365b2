"""Inputs other than qrels and runs, read by plugins, and the metrics computed from them.

Most metrics are computed from qrels and a run (``needs="run"``, the engine's :class:`~irspec.evaluation.context.Context`
path). A plugin may register an :class:`~irspec.InputReader` for another kind of input through the
``irspec_register_readers`` hook, and metrics that declare ``needs=<that name>``. Evaluating them is the
same for every kind, and knows nothing of any plugin:

1. the metrics are bound and must all need the same input kind;
2. the registry gives the reader of that kind, whose ``read(source)`` returns the plugin's data object
   (:class:`~irspec.spec.definitions.InputData`; its optional members are the protocols beside it);
3. each metric's ``compute(data, metric)`` returns one float per item of ``data.ids`` (NaN where the metric
   leaves an item out, as a session-level rate does for all but one query of a session);
4. the values form an ordinary :class:`~irspec.evaluation.result.Result`, with ``data.ids`` as its rows, so every
   output format, aggregate (mean/sum skip NaN) and plan works on it unchanged;
5. ``options`` (a plan section a plugin registers, such as irspec-online's ``ab:``) go to the reader as
   keywords, and a data object with a ``compare(metrics, values)`` method
   (:class:`~irspec.spec.definitions.SupportsCompare`: a log read for an A/B test) compares within the input: the
   :class:`~irspec.InputTable` values and warnings it returns join the result's tables and warnings;
6. ``per_query=False`` (no row per item wanted) is passed to the reader as ``per_query=False``; a reader
   that can stream returns an object with ``evaluate(metrics) -> (aggregates, tables, warnings)``
   (:class:`~irspec.spec.definitions.SupportsStreaming`), which
   makes one pass in bounded memory, and the result is a :class:`~irspec.evaluation.result.StreamedResult`:
   those aggregates as given, and no rows.

>>> res = irspec.evaluate_input("interactions.jsonl", "CTR, Abandonment")   # doctest: +SKIP
>>> res.aggregate()                                                           # doctest: +SKIP
{'CTR': 0.62, 'Abandonment': 0.25}
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from irspec.errors import EvaluationError
from irspec.evaluation.compute import bind_metrics, resolve
from irspec.evaluation.context import Options
from irspec.evaluation.judgments import read_input
from irspec.evaluation.result import Result, StreamedResult
from irspec.spec.definitions import SupportsCompare, SupportsStreaming, SupportsTables
from irspec.spec.plugins import get_registry
from irspec.spec.registry import Metric

__all__ = ["evaluate_input", "input_kind", "read_input"]


def input_kind(metrics: Iterable[Metric]) -> str:
    """The one input kind that ``metrics`` need; :class:`EvaluationError` when they need several."""
    kinds: dict[str, Metric] = {}
    for m in metrics:
        kinds.setdefault(m.definition.needs, m)
    if not kinds:
        raise EvaluationError("no metrics to compute")
    if len(kinds) > 1:
        shown = "; ".join(f"{m} needs {k!r}" for k, m in kinds.items())
        raise EvaluationError(f"the metrics need different inputs ({shown}); evaluate them separately")
    return next(iter(kinds))


def evaluate_input(
    source: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    kind: str | None = None,
    name: str | None = None,
    options: Mapping[str, Any] | None = None,
    per_query: bool = True,
) -> Result | StreamedResult:
    """Evaluate metrics computed from an input other than qrels and runs, such as an interaction log.

    ``metrics`` are spec texts or bound metrics that all declare the same ``needs``; ``kind`` (default:
    that input kind) picks the registered :class:`~irspec.InputReader`, which reads ``source``. Returns an
    :class:`~irspec.evaluation.result.Result` whose rows are the items of the data object's ``ids`` and whose name is
    ``name``, else the data object's ``name``, else the file's stem. ``options`` go to the reader
    (:func:`read_input`); a data object's ``compare`` adds its tables and warnings (step 5 above).
    ``per_query=False`` asks for the aggregates only, streamed by a reader that can (step 6 above):
    a :class:`~irspec.evaluation.result.StreamedResult`.
    """
    bound = bind_metrics(metrics)
    needed = input_kind(bound)
    if kind is None:
        kind = needed
    elif needed.lower() != kind.lower():
        wrong = next(m for m in bound if m.definition.needs.lower() != kind.lower())
        raise EvaluationError(
            f"{wrong} is computed from a {wrong.definition.needs!r} input, not from a {kind!r} input"
        )
    if kind == "run" or get_registry().reader(kind).as_qrels:
        raise EvaluationError(f"{bound[0]} is computed from qrels and a run; use irspec.evaluate")
    data = read_input(kind, source, {**(options or {}), **({} if per_query else {"per_query": False})})
    if name is None:
        name = getattr(data, "name", None) or _stem(source) or kind
    where = getattr(data, "source", None) or (
        str(source) if isinstance(source, (str, os.PathLike)) else f"<{kind}>"
    )
    if isinstance(data, SupportsStreaming):  # streamed: the aggregates, no rows
        aggregate, tables, warnings = data.evaluate(tuple(bound))
        return StreamedResult(
            str(name), str(where), tuple(bound), aggregate, Options(), tuple(warnings), tuple(tables)
        )
    ids = tuple(str(i) for i in data.ids)
    values = np.empty((len(ids), len(bound)))
    for j, m in enumerate(bound):
        column = np.asarray(resolve(m.definition.compute)(data, m), dtype=np.float64)
        if column.shape != (len(ids),):
            raise EvaluationError(f"metric {m} returned shape {column.shape}, expected ({len(ids)},)")
        values[:, j] = column
    warnings = tuple(getattr(data, "warnings", ()))
    tables = tuple(data.tables()) if isinstance(data, SupportsTables) else ()
    if isinstance(data, SupportsCompare):
        more_tables, more_warnings = data.compare(tuple(bound), values)
        tables, warnings = tables + tuple(more_tables), warnings + tuple(more_warnings)
    return Result(str(name), str(where), tuple(bound), ids, values, Options(), warnings, tables=tables)


def _stem(source: Any) -> str | None:
    if not isinstance(source, (str, os.PathLike)):
        return None
    base = os.path.basename(os.fspath(source))
    base = base.removesuffix(".gz")
    return Path(base).stem or None
