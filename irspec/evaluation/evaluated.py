"""What every result is to those who read it, and the two readings they all share.

:class:`Evaluated` is the protocol that a run's :class:`~irspec.evaluation.result.Result`, a system's
(:class:`~irspec.evaluation.systems.SystemResult`) and a streamed input's means
(:class:`~irspec.evaluation.result.StreamedResult`) meet: names, metrics, per-query values (none for
a streamed input), means, warnings, tables. Reports read results only through it, so that the
report layer sits below the result classes, which show themselves in a notebook through it.
:func:`results_frame` (per-query values as one data frame) and :func:`collect_warnings` (the
warnings of several results, each once) read any of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from irspec.data.frames import make_frame
from irspec.evaluation.context import Options
from irspec.spec.registry import Metric

__all__ = ["Evaluated", "collect_warnings", "results_frame"]


class Evaluated(Protocol):
    """An evaluated run (or system, or input) as every reader sees it.

    ``values`` is (queries × metrics), in the order of ``query_ids`` and ``metrics`` (no rows for a
    streamed input); ``aggregate()`` the means by canonical metric text; ``texts`` a text-valued
    metric's strings per query; ``warnings`` what the values rest on; ``tables`` what an input shows
    beside its metrics (:class:`~irspec.spec.definitions.InputTable`).
    """

    @property
    def run_name(self) -> str: ...
    @property
    def run_source(self) -> str: ...
    @property
    def metrics(self) -> tuple[Metric, ...]: ...
    @property
    def query_ids(self) -> tuple[str, ...]: ...
    @property
    def values(self) -> np.ndarray: ...
    @property
    def options(self) -> Options: ...
    @property
    def warnings(self) -> tuple[str, ...]: ...
    @property
    def texts(self) -> Mapping[str, tuple[str, ...]]: ...
    @property
    def judged_at_10(self) -> float | None: ...
    @property
    def tables(self) -> tuple[Any, ...]: ...
    @property
    def runid(self) -> str | None: ...

    def aggregate(self) -> dict[str, float]:
        """Summary value per metric (canonical text)."""
        ...

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``{query_id: {metric: value}}``."""
        ...

    def column(self, metric: Metric | str) -> np.ndarray:
        """One metric's per-query values, aligned with ``query_ids``."""
        ...


def results_frame(results: Sequence[Evaluated], *, wide: bool = False, backend: str = "polars") -> Any:
    """The per-query values of ``results`` as one data frame, runs one after another, queries in id order.

    Long (default): columns ``run, query_id, metric, value``, one row per query and metric, metrics in
    the order evaluated. A text-valued metric (``relstring``) has a null ``value`` and its string in a
    ``text`` column, which is there only when some metric has text values. ``wide``: columns ``run,
    query_id`` and one per metric (a text metric's column holds strings; a metric some run lacks is
    null for it). An undefined value (a NaN, such as ``SL(unfound=skip)`` leaves) is null. A
    catalogue-level metric (item coverage: one value per run, ``aggregate()``'s) has no rows.
    ``backend``: ``"polars"`` or ``"pandas"``.
    """
    names: list[str] = []  # every metric of every result, first seen first
    for res in results:
        names.extend(str(m) for m in res.metrics if str(m) not in names and not m.catalogue)
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
        types = {"run": "str", "query_id": "str"} | {
            name: "str" if name in texts else "float" for name in names
        }
        return make_frame(columns, types, backend)
    columns = {"run": [], "query_id": [], "metric": [], "value": []}
    if texts:
        columns["text"] = []
    for res in results:
        kept = [j for j, m in enumerate(res.metrics) if not m.catalogue]
        keys = [str(res.metrics[j]) for j in kept]
        nq, nm = len(res.query_ids), len(keys)
        columns["run"] += [res.run_name] * (nq * nm)
        columns["query_id"] += np.repeat(np.asarray(res.query_ids, dtype=object), nm).tolist()
        columns["metric"] += keys * nq
        columns["value"] += (
            res.values[:, kept].ravel().tolist()
        )  # row-major: query by query, metrics in order
        if texts:
            strings: list[str | None] = [None] * (nq * nm)
            for j, key in enumerate(keys):
                if key in res.texts:
                    strings[j::nm] = res.texts[key]
            columns["text"] += strings
    types = {"run": "str", "query_id": "str", "metric": "str", "value": "float", "text": "str"}
    return make_frame(columns, types, backend)


class Warned(Protocol):
    """What :func:`collect_warnings` reads: an evaluated run, or a plan's report."""

    @property
    def warnings(self) -> tuple[str, ...]: ...


def collect_warnings(results: Iterable[Warned]) -> list[str]:
    """The warnings of ``results``, each once, in order: one about the qrels (a relevance level at
    which nothing is relevant) or about two runs is on every result it concerns."""
    return list(dict.fromkeys(w for r in results for w in r.warnings))
