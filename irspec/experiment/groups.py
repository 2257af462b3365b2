"""Query groups: each run's mean per group of topics, with its 95% t interval, beside the macro mean over
the groups and the micro mean over all queries.

>>> tables = irspec.by_group(res, "topics/groups.tsv")           # doctest: +SKIP
>>> grouped = irspec.with_groups(many, {"q1": "short", "q2": ["short", "rare"]})   # doctest: +SKIP

Groups come from a file of lines ``query_id group`` (whitespace-separated; the group is the rest of the
line, so it may hold spaces; blank lines and lines starting with ``#`` are skipped), from a mapping
``{query_id: group or [groups]}``, or from a pandas Series indexed by query id. A query may belong to
several groups: one line (or one list entry) per group. For group *g* with queries *Q_g* that the run
has a value for, ``mean_g = sum(x_q for q in Q_g) / |Q_g|`` (added left to right in query-id order, as
every irspec mean) and its interval is Student's t, ``mean_g ± t(0.975, |Q_g| - 1) · s_g / sqrt |Q_g|``
(:func:`irspec.stats.student.mean_t_interval`); a group of one query has no interval (shown as ``-``, ``null`` in
JSON). The macro mean is the mean of the group means; the micro mean is the run's own mean over all its
queries, with its interval. Queries of the results in no group, and group queries the results lack, are
warned about (how many, the first few); neither is dropped silently.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from irspec.errors import EvaluationError, InputError, quote
from irspec.evaluation.means import aggregate_values
from irspec.evaluation.result import Result
from irspec.experiment.standardize import read_small_text, results_of, shaped_like
from irspec.frozen import frozen
from irspec.spec.definitions import InputTable
from irspec.stats.student import mean_t_interval

__all__ = ["TITLE", "GroupTable", "as_groups", "by_group", "read_groups", "with_groups"]

TITLE = "Query groups"
"""The start of every group table's title (``Query groups: nDCG@10``)."""

COLUMNS = ("group", "queries", "mean", "95% CI low", "95% CI high")


@frozen
class GroupTable(InputTable):
    """One run's group means of one ``metric``: a row per group (``group, queries, mean, low, high``),
    then the macro and the micro mean. An undefined interval is NaN here and ``null`` in JSON."""

    metric: str = ""

    def as_dict(self) -> dict[str, Any]:
        """As :meth:`InputTable.as_dict`, with ``metric``, and NaN (an undefined interval) as ``None``."""
        doc = super().as_dict()
        doc["rows"] = [[None if isinstance(v, float) and math.isnan(v) else v for v in r] for r in self.rows]
        doc["metric"] = self.metric
        return doc


def read_groups(path: str | os.PathLike[str]) -> dict[str, tuple[str, ...]]:
    """``{group: query ids}`` from a file of ``query_id group`` lines, groups in order of first appearance.
    Raises :class:`~irspec.errors.InputError` naming the line for a line without a group or a line
    given twice."""
    source = str(path)
    text = read_small_text(path, "groups file")
    groups: dict[str, list[str]] = {}
    seen: dict[tuple[str, str], int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split(None, 1)
        if len(parts) != 2:
            raise InputError(f"expected 'query_id group', found only {quote(parts[0])}", source, n)
        query, group = parts[0], parts[1].strip()
        if (query, group) in seen:
            raise InputError(
                f"query {quote(query)} is in group {quote(group)} already (line {seen[(query, group)]})",
                source,
                n,
            )
        seen[(query, group)] = n
        groups.setdefault(group, []).append(query)
    if not groups:
        raise InputError("the groups file has no lines 'query_id group'", source)
    return {g: tuple(qs) for g, qs in groups.items()}


def as_groups(groups: Any) -> dict[str, tuple[str, ...]]:
    """``{group: query ids}`` from a path (:func:`read_groups`), a mapping ``{query_id: group or [groups]}``,
    or a pandas Series indexed by query id (anything with ``items()``)."""
    if isinstance(groups, (str, os.PathLike)):
        return read_groups(groups)
    items = groups.items() if hasattr(groups, "items") else None
    if items is None:
        raise EvaluationError(
            f"groups must be a file, a mapping query id -> group, or a Series, not {type(groups).__name__}"
        )
    out: dict[str, list[str]] = {}
    for query, group in items:
        for g in [group] if isinstance(group, str) or not isinstance(group, Iterable) else group:
            out.setdefault(str(g), []).append(str(query))
    if not out:
        raise EvaluationError("groups: no query is in a group")
    return {g: tuple(qs) for g, qs in out.items()}


def _row(name: str, values: np.ndarray, bounds: tuple[float | None, float | None]) -> tuple[Any, ...]:
    """``(name, n, mean, low, high)`` of ``values``, the interval cut at the metric's ``bounds``; NaN for
    what is undefined (no values, one value)."""
    n = len(values)
    if n == 0:
        return (name, 0, math.nan, math.nan, math.nan)
    mean = aggregate_values(values, "mean")
    low, high = mean_t_interval(values, mean=mean, bounds=bounds) if n >= 2 else (math.nan, math.nan)
    return (name, n, mean, low, high)


def _queries(n: int) -> str:
    return f"{n} quer{'y' if n == 1 else 'ies'}"


def _some(items: Sequence[str]) -> str:
    head = ", ".join(repr(q) for q in items[:5])
    return head + (f" and {len(items) - 5} more" if len(items) > 5 else "")


def by_group(res: Result, groups: Any) -> list[GroupTable]:
    """One :class:`GroupTable` per metric of ``res`` whose aggregate is a mean (a sum or a geometric mean
    has no group means; a catalogue-level metric, one value per run, no query's value): each group's mean with its 95% t interval and number of queries, the macro
    mean over the groups and the micro mean over all queries. ``groups`` as :func:`as_groups` takes it."""
    return _group_tables(res, as_groups(groups))


def _group_tables(res: Result, table: Mapping[str, Sequence[str]]) -> list[GroupTable]:
    index = {q: i for i, q in enumerate(res.query_ids)}
    tables = []
    for j, m in enumerate(res.metrics):
        if m.aggregate != "mean" or m.catalogue:  # a catalogue metric has no query's value to group
            continue
        column = res.values[:, j]
        bounds = m.definition.bounds if m.definition is not None else (None, None)
        rows = []
        for g, queries in table.items():
            rows_of = sorted(
                index[q] for q in set(queries) if q in index
            )  # query-id order, as the run's mean
            values = column[rows_of]
            rows.append(_row(g, values[~np.isnan(values)], bounds))
        means = np.array([r[2] for r in rows if r[1] > 0])
        macro = (
            f"macro mean over {len(means)} groups",
            len(means),
            aggregate_values(means, "mean") if len(means) else math.nan,
            math.nan,
            math.nan,
        )
        micro = _row("micro mean over all queries", column[~np.isnan(column)], bounds)
        tables.append(
            GroupTable(
                f"{TITLE}: {m}",
                COLUMNS,
                (*rows, macro, micro),
                description=(
                    "per group: the mean over its queries with its 95% t interval; macro: the mean of the group means "
                    "(its queries column counts groups); micro: the mean over all the run's queries"
                ),
                metric=str(m),
            )
        )
    return tables


def coverage_warnings(res: Result, groups: Mapping[str, Sequence[str]]) -> list[str]:
    """What the groups and ``res`` do not share: its queries in no group, group queries it lacks."""
    grouped = {q for qs in groups.values() for q in qs}
    ungrouped = sorted(set(res.query_ids) - grouped)
    absent = sorted(grouped - set(res.query_ids))
    out = []
    if ungrouped:
        out.append(
            f"{res.run_name}: {_queries(len(ungrouped))} in no group ({_some(ungrouped)}): in the micro mean only"
        )
    if absent:
        out.append(
            f"{res.run_name}: {_queries(len(absent))} of the groups without a result ({_some(absent)}): left out of their groups"
        )
    return out


def with_groups(results: Result | Sequence[Result] | Mapping[str, Result], groups: Any) -> Any:
    """Each of ``results`` with its :func:`by_group` tables beside its metrics (every report shows them,
    and the plots draw them) and a warning for the queries the groups and the run do not share.

    ``results`` is what :func:`irspec.evaluate` returns (one result, or a :class:`irspec.ResultSet`), or
    a mapping ``{name: result}`` or a sequence of results; what comes back has the same shape."""
    table = as_groups(groups)
    out = []
    for res in results_of(results):
        warnings = tuple(w for w in coverage_warnings(res, table) if w not in res.warnings)
        out.append(
            dataclasses.replace(
                res, tables=res.tables + tuple(_group_tables(res, table)), warnings=res.warnings + warnings
            )
        )
    return shaped_like(results, out)
