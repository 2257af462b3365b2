"""Standardised scores: each per-query value as a z-score against a reference set of runs.

(``irspec.standardize`` is the entry point; a module of that name would hide the function.)

>>> z = irspec.standardize(many)                          # reference: the runs themselves  # doctest: +SKIP
>>> z = irspec.standardize(res, reference="zscores.txt")  # trec_eval's -Z file            # doctest: +SKIP
>>> z = irspec.standardize(res, reference=[bm25, dense], cdf=True)                        # doctest: +SKIP

Webber, Moffat & Zobel ("Score standardization for inter-collection comparison of retrieval
systems", SIGIR 2008) score a run on topic *t* by how far it lies from the reference systems on that
topic, in units of their spread::

    z(x) = (x - mean_t) / sd_t          and, with cdf=True,  Phi(z(x))  (the standard normal CDF, in [0, 1])

The means and deviations come from reference runs (their per-topic mean and *sample* standard
deviation, n - 1 in the denominator, as Sakai's "Laboratory Experiments in IR" computes them) or from a
file in trec_eval's ``-Z`` format: one line ``query_id measure mean sd`` per topic and measure, the
measure by trec_eval's name (``ndcg_cut_10``) or irspec's canonical text for one trec_eval lacks.
:func:`z_table` writes that file from reference runs, so that reading it back gives the same z-scores.

trec_eval 10's ``-Z`` is the compatibility target: it applies ``(x - mean) / sd`` without the CDF
(``cdf=False`` is the default here too), averages the z-scores as it averages the raw values, and
prints each measure's name with a ``Z`` prefix. Where trec_eval prints ``-1000000`` (a topic or measure
missing from the file; a topic whose ``sd`` is 0 and whose value differs from the mean), irspec raises
an error that says which; a topic with ``sd`` 0 and the value equal to the mean gets z = 0, as in
trec_eval. The count of queries (``num_q``) is not standardised: trec_eval needs its lines in the file but
prints, as its summary, the number of queries whatever they say (and no value per query), so its values
stay 1 a query. A standardised metric prints as ``z(nDCG@10)`` (``Phi(z(nDCG@10))`` with the CDF), and the
results carry a table stating the reference set and the mapping, which every report shows.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np

from irspec.errors import EvaluationError, InputError, quote, suggest
from irspec.evaluation.means import sequential_sum
from irspec.evaluation.result import Result
from irspec.frozen import frozen
from irspec.lines import read_bounded
from irspec.spec.definitions import InputTable, Metric

__all__ = [
    "SETTINGS_TITLE",
    "StandardizedMetric",
    "ZTable",
    "read_small_text",
    "read_z",
    "results_of",
    "shaped_like",
    "standardize",
    "z_table",
]

SETTINGS_TITLE = "Standardized scores"
"""The title of the table that states a standardisation's reference set and mapping."""


@frozen
class StandardizedMetric(Metric):
    """A metric whose per-query values are z-scores of ``base`` (mapped through the standard normal CDF
    when ``cdf``). It prints as ``z(base)`` or ``Phi(z(base))``, never as the raw metric; it keeps the
    base's definition (which way is better, its parameters) and its aggregate (trec_eval's -Z averages
    z-scores as it averages the raw values)."""

    base: Metric | None = None
    cdf: bool = False

    @classmethod
    def of(cls, base: Metric, cdf: bool = False) -> StandardizedMetric:
        """The standardised form of ``base``."""
        if isinstance(base, StandardizedMetric):
            raise EvaluationError(f"{base} is already standardised")
        if base.catalogue:
            raise EvaluationError(
                f"{base}: cannot standardise it: it is catalogue-level, one value per run and none per topic "
                "(user) to standardise; evaluate it apart"
            )
        if base.aggregate not in ("mean", "sum"):
            why = (
                "it has text values, no numbers"
                if base.aggregate == "none"
                else "its aggregate is a geometric mean (standardise the arithmetic-mean measure instead)"
            )
            raise EvaluationError(f"{base}: cannot standardise it: {why}")
        # z-scores have no bounds, Phi(z) lies in [0, 1]: the base's bounds (MetricDef.bounds) do not hold
        definition = dataclasses.replace(base.definition, bounds=(0.0, 1.0) if cdf else (None, None))
        return cls(base.name, base.params, definition, base.trec_text, base, cdf)

    @property
    def trec_prefix(self) -> str:
        """What trec_eval's -Z prints before the measure's name."""
        return "Z"

    def __str__(self) -> str:
        z = f"z({self.base})"
        return f"Phi({z})" if self.cdf else z


def _key(metric: Metric) -> str:
    """A metric's name in a -Z file: trec_eval's, else irspec's canonical text."""
    return metric.trec_name or str(metric)


@frozen
class ZTable:
    """Per-topic means and standard deviations, ``(query_id, measure) -> (mean, sd)``, with where each
    came from (``lines``: the file's 1-based line, for messages) and a description of the ``reference``."""

    entries: Mapping[tuple[str, str], tuple[float, float]]
    reference: str
    source: str | None = None
    lines: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def _where(self, key: tuple[str, str]) -> str:
        line = self.lines.get(key)
        return f"{self.source}:{line}" if self.source is not None and line is not None else self.reference

    def apply(self, res: Result, metrics: Sequence[Metric], cdf: bool) -> np.ndarray:
        """``res``'s values of ``metrics`` as z-scores (a NaN stays NaN); raises when a query or measure
        is missing from the table, or a topic's sd is 0 and the run's value is not the mean."""
        out = np.full((len(res.query_ids), len(metrics)), np.nan)
        for j, m in enumerate(metrics):
            name = _key(m)
            values = res.column(m)
            missing = [q for q in res.query_ids if (q, name) not in self.entries]
            if missing:
                shown = ", ".join(quote(q) for q in missing[:5]) + (
                    f" and {len(missing) - 5} more" if len(missing) > 5 else ""
                )
                raise InputError(
                    f"no mean and sd for measure {name!r} of {len(missing)} quer{'y' if len(missing) == 1 else 'ies'} "
                    f"of {res.run_name} ({shown})",
                    self.source if self.source is not None else self.reference,
                )
            if m.name == "NumQ":  # trec_eval's num_q sums to the number of queries whatever the file says
                out[:, j] = values
                continue
            for i, (q, x) in enumerate(zip(res.query_ids, values.tolist(), strict=True)):
                if math.isnan(x):
                    continue
                mean, sd = self.entries[(q, name)]
                if sd == 0.0:
                    if x != mean:
                        raise EvaluationError(
                            f"{self._where((q, name))}: query {quote(q)}, {name}: the standard deviation is 0 and "
                            f"{res.run_name} scores {x!r}, not the mean {mean!r}: its z-score is undefined"
                        )
                    z = 0.0
                else:
                    z = (x - mean) / sd
                out[i, j] = normal_cdf(z) if cdf else z
        return out

    def to_text(self) -> str:
        """The table in trec_eval's -Z format, sorted by query and measure; numbers as Python's shortest
        round-tripping text, so that reading the file back gives the same z-scores."""
        return "".join(f"{q} {m} {mean!r} {sd!r}\n" for (q, m), (mean, sd) in sorted(self.entries.items()))


def normal_cdf(z: float) -> float:
    """The standard normal CDF, ``Phi(z) = erfc(-z / sqrt 2) / 2`` (erfc keeps the lower tail accurate)."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def read_z(path: str | os.PathLike[str]) -> ZTable:
    """Read a file in trec_eval's -Z format: ``query_id measure mean sd`` per line, whitespace-separated
    (blank lines are skipped). Raises :class:`~irspec.errors.InputError` naming the line for a line
    without exactly four fields, a number that does not parse or is not finite, a negative sd, or a
    (query, measure) given twice."""
    source = str(path)
    text = read_small_text(path, "z-score file")
    entries: dict[tuple[str, str], tuple[float, float]] = {}
    lines: dict[tuple[str, str], int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(f"expected 4 fields 'query_id measure mean sd', found {len(fields)}", source, n)
        q, m, mean, sd = (
            fields[0],
            fields[1],
            _number(fields[2], "mean", source, n),
            _number(fields[3], "sd", source, n),
        )
        if sd < 0:
            raise InputError(f"the standard deviation must not be negative, got {fields[3]}", source, n)
        if (q, m) in entries:
            raise InputError(
                f"query {quote(q)}, measure {quote(m)} given twice (first at line {lines[(q, m)]})", source, n
            )
        entries[(q, m)], lines[(q, m)] = (mean, sd), n
    if not entries:
        raise InputError("the z-score file has no lines", source)
    return ZTable(entries, f"file {source}", source, lines)


def read_small_text(path: str | os.PathLike[str], what: str) -> str:
    """A small UTF-8 text file (a -Z file, a groups file), or an :class:`InputError` that says why not
    (a line too long to be text among them: ``/dev/zero`` is refused, not read without end)."""
    try:
        with open(path, "rb") as f:
            return read_bounded(f, str(path)).decode("utf-8")
    except OSError as e:
        raise InputError(f"cannot read the {what}: {e.strerror or e}", str(path)) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason} at byte {e.start})", str(path)) from None


def _number(text: str, what: str, source: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"the {what} must be a number, got {quote(text)}", source, line) from None
    if not math.isfinite(value):
        raise InputError(f"the {what} must be finite, got {quote(text)}", source, line)
    return value


def z_table(reference: Sequence[Result], metrics: Sequence[Metric] | None = None) -> ZTable:
    """Per-topic means and sample standard deviations (n - 1) of ``reference`` runs' values of ``metrics``
    (default: the first run's metrics that can be standardised), over the runs that have a value for
    the topic; at least two are needed. The mean is added left to right, as every irspec mean is; a
    topic where every reference run scores the same has that score as its mean and sd 0."""
    runs = list(reference)
    if len(runs) < 2:
        raise EvaluationError(
            f"standardising needs at least 2 reference runs to estimate a deviation, got {len(runs)}"
        )
    chosen = list(metrics) if metrics is not None else _standardisable(runs[0].metrics)
    entries: dict[tuple[str, str], tuple[float, float]] = {}
    for m in chosen:
        per_query: dict[str, list[float]] = {}
        for res in runs:
            if m not in res.metrics:
                raise EvaluationError(f"reference run {res.run_name} has no {m}")
            for q, x in zip(res.query_ids, res.column(m).tolist(), strict=True):
                if not math.isnan(x):
                    per_query.setdefault(q, []).append(x)
        for q, xs in per_query.items():
            if len(xs) < 2:
                raise EvaluationError(
                    f"query {quote(q)}, {m}: only {len(xs)} reference run has a value; a deviation needs 2"
                )
            entries[(q, _key(m))] = _mean_sd(np.asarray(xs))
    names = ", ".join(res.run_name for res in runs)
    return ZTable(entries, f"runs {names}")


def _mean_sd(x: np.ndarray) -> tuple[float, float]:
    if np.all(x == x[0]):  # no rounding noise: the runs scoring the mean get z = 0 exactly
        return float(x[0]), 0.0
    mean = sequential_sum(x) / len(x)
    return mean, math.sqrt(sequential_sum((x - mean) ** 2) / (len(x) - 1))


def _standardisable(metrics: Iterable[Metric]) -> list[Metric]:
    return [m for m in metrics if m.aggregate in ("mean", "sum") and not isinstance(m, StandardizedMetric)]


def standardize(
    results: Result | Sequence[Result] | Mapping[str, Result],
    reference: str
    | os.PathLike[str]
    | Sequence[Result]
    | Sequence[str]
    | Mapping[str, Result]
    | ZTable
    | None = None,
    *,
    cdf: bool = False,
) -> Any:
    """``results`` with every metric's per-query values replaced by z-scores, ``(x - mean_t) / sd_t`` per
    topic t (then ``Phi(z)``, the standard normal CDF, with ``cdf``); still results, so every report,
    comparison and interval works on them. Metrics print as ``z(nDCG@10)``.

    ``results`` is what :func:`irspec.evaluate` returns (one result, or a :class:`irspec.ResultSet`),
    or a mapping ``{name: result}`` or a sequence of results. ``reference``: ``None`` (the runs of
    ``results`` themselves, at least two), the names of some of those runs (``["bm25", "dense"]``, as a
    plan's ``reference`` gives them), other results (a sequence or mapping of runs), a
    :class:`ZTable`, or the path of a file in trec_eval's -Z format (:func:`read_z`). A geometric-mean
    or text metric cannot be standardised (an error says so). Returns what it was given: one result, a
    ResultSet, a dict with the same keys, or a list. The first result carries a table (titled
    :data:`SETTINGS_TITLE`) that states the reference set and the mapping, so every report shows them.
    """
    runs = results_of(results)
    if not runs:
        raise EvaluationError("no results to standardise")
    metrics = list(runs[0].metrics)
    for m in metrics:
        StandardizedMetric.of(m, cdf)  # refuses a geometric mean or a text metric
    table = _reference_table(reference, runs, metrics)
    z_metrics = tuple(StandardizedMetric.of(m, cdf) for m in metrics)
    out = []
    for i, res in enumerate(runs):
        if list(res.metrics) != metrics:
            raise EvaluationError(
                f"standardise runs evaluated on the same metrics: {res.run_name} differs from {runs[0].run_name}"
            )
        values = table.apply(res, metrics, cdf)
        tables = res.tables + ((settings_table(table, cdf),) if i == 0 else ())
        out.append(dataclasses.replace(res, metrics=z_metrics, values=values, texts={}, tables=tables))
    return shaped_like(results, out)


def results_of(results: Any) -> list[Result]:
    """The results of ``results`` given in any shape :func:`irspec.evaluate` returns or takes: one
    result, a :class:`irspec.ResultSet` or another mapping ``{name: result}`` (its values), or a
    sequence of results. Anything else is an :class:`EvaluationError` that says what was expected."""
    if isinstance(results, Result):
        return [results]
    if isinstance(results, Mapping):
        found = list(results.values())
    elif isinstance(results, Iterable) and not isinstance(results, (str, bytes)):
        found = list(results)
    else:
        found = [results]
    for res in found:
        if not isinstance(res, Result):
            raise EvaluationError(
                f"expected results (what irspec.evaluate returns: a result, a ResultSet, a mapping or a list of "
                f"results), got {type(res).__name__} {str(res)[:40]!r}"
            )
    return found


def shaped_like(given: Any, out: list[Result]) -> Any:
    """``out`` (one result per result of ``given``, in :func:`results_of`'s order) in the shape ``given``
    had: one result, a ResultSet (this layer cannot import it: any mapping with ``results`` is rebuilt
    from them), a dict with the same keys, or a list."""
    if isinstance(given, Result):
        return out[0]
    if isinstance(given, Mapping):
        if hasattr(given, "results"):
            rebuild: Any = type(given)  # a ResultSet, whose constructor takes the results
            return rebuild(tuple(out))
        return dict(zip(given, out, strict=True))
    return out


def _reference_table(reference: Any, runs: list[Result], metrics: list[Metric]) -> ZTable:
    if reference is None:
        return z_table(runs, metrics)
    if isinstance(reference, ZTable):
        return reference
    if isinstance(reference, (str, os.PathLike)):
        return read_z(reference)
    given = list(reference.values()) if isinstance(reference, Mapping) else list(reference)
    if given and all(isinstance(r, str) for r in given):
        return z_table(_named(given, runs), metrics)
    return z_table(results_of(given), metrics)


def _named(names: Sequence[str], runs: Sequence[Result]) -> list[Result]:
    """The runs of ``runs`` named ``names`` (a reference given by run names, as a plan gives it), in the
    order of ``runs``: the order in which the reference's means are added."""
    by_name = {res.run_name: res for res in runs}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        close = suggest(unknown[0], by_name, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise EvaluationError(
            f"reference {unknown[0]!r} is not a run of the results{hint} (the runs are {', '.join(by_name)})"
        )
    return [res for res in runs if res.run_name in names]


def settings_table(table: ZTable, cdf: bool) -> InputTable:
    """The table that states a standardisation: its reference set, the sd used, and the mapping."""
    mapping = (
        "Phi(z), the standard normal CDF of z (values in [0, 1])" if cdf else "none: z itself (trec_eval -Z)"
    )
    sd = (
        "as given in the file"
        if table.source is not None
        else "sample standard deviation over the reference runs (n - 1)"
    )
    rows = (
        ("reference", table.reference),
        ("z", "(x - mean of the topic) / sd of the topic"),
        ("sd", sd),
        ("mapping", mapping),
    )
    return InputTable(
        SETTINGS_TITLE,
        ("setting", "value"),
        rows,
        description="how the scores were standardised (Webber et al., SIGIR 2008)",
    )
