"""Systems made of several runs of one method (seeds, folds): one result per system, the mean per topic.

>>> res = irspec.evaluate("qrels.txt", {"bm25": "bm25.run", "dense": ["s1.run", "s2.run", "s3.run"]}, "AP")  # doctest: +SKIP
>>> res["dense"].aggregate(), res["dense"].spread()["AP"].sd, res["dense"].runs   # doctest: +SKIP

Each run is evaluated as any run is; a system's value of a metric on a topic is then the mean of its
runs' values there (:func:`combine`), and the tests of the compare step run over topics on those
means, unchanged: a :class:`SystemResult` is a :class:`~irspec.evaluation.result.Result`, so every report,
interval, comparison and frame takes it as it is, and it keeps its runs' own results in ``runs``.

Averaging per topic before testing treats the seed as noise (:data:`SEED_CAVEAT`): a significant
difference says the method's mean over these seeds differs, not that another seed would differ too;
:meth:`SystemResult.spread` reports how far the runs' own means lie apart, so that a reader can judge.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from irspec.data.trec import stem
from irspec.errors import EvaluationError
from irspec.evaluation import result_set as results
from irspec.evaluation.evaluate import issue_warnings, one_mapping_run
from irspec.evaluation.evaluated import collect_warnings
from irspec.evaluation.means import aggregate_values
from irspec.evaluation.result import Result, handed_over
from irspec.frozen import frozen

__all__ = ["SEED_CAVEAT", "Spread", "SystemResult", "combine", "evaluate", "expand_runs", "systems_of"]

SEED_CAVEAT = (
    "averaging per topic treats the seed as noise: a significant difference is about the method's mean "
    "over these runs, not about another seed"
)
"""The caveat every output states beside a system of several runs (see the module docstring)."""


class Spread(NamedTuple):
    """How far a system's runs lie apart on one metric: the number of ``runs``, the ``mean`` of their
    means over the system's topics (:meth:`SystemResult.run_aggregates`), their sample standard deviation ``sd`` (n - 1 in the denominator; ``None`` for one run) and
    the lowest and highest run mean (``low``, ``high``)."""

    runs: int
    mean: float
    sd: float | None
    low: float
    high: float


@frozen(eq=False, repr=False)  # a Result's short repr, not every field's
class SystemResult(Result):
    """A system of several runs: per topic and metric the mean of its runs' values, with the runs' own
    results in ``runs`` (in the order given). Everything a :class:`~irspec.evaluation.result.Result` does, it does
    on the means; :attr:`averaged` says in words what was averaged, :meth:`spread` how far apart the
    runs' means are."""

    runs: tuple[Result, ...] = ()

    @property
    def averaged(self) -> str:
        """``"dense: mean of 3 runs per topic (s1, s2, s3); averaging per topic treats the seed as noise..."``."""
        names = ", ".join(r.run_name for r in self.runs)
        return f"{self.run_name}: mean of {len(self.runs)} runs per topic ({names}); {SEED_CAVEAT}"

    def run_aggregates(self) -> list[dict[str, float]]:
        """Each run's aggregates (:meth:`~irspec.evaluation.result.Result.aggregate`, trec_eval's means)
        over the system's topics, those every run answers, in the order of ``runs``: the means whose
        mean is the system's (up to a value a metric leaves undefined in one run, which leaves the
        system's undefined on that topic). Under ``missing_queries: skip`` a run may answer topics
        another does not; its mean over all of them would not be one the system averages."""
        return [dict(means) for means in self._run_means]

    @functools.cached_property
    def _run_means(self) -> list[dict[str, float]]:
        # made once: spread() and as_dict() both read them, and a report asks for both
        return [r.aggregate_over(self.query_ids) for r in self.runs]

    def spread(self) -> dict[str, Spread]:
        """Per metric (canonical text) of the system, the :class:`Spread` of its runs' means over the
        system's topics (:meth:`run_aggregates`); text-valued metrics have none."""
        out = {}
        aggregates = self._run_means
        for m in self.metrics:
            # none for a text metric, nor for one its runs lack: a standardised system's z-scores come from
            # its means, and its runs keep their own values (a run's z-score may be undefined)
            if m.aggregate == "none" or any(str(m) not in a for a in aggregates):
                continue
            means = np.array([a[str(m)] for a in aggregates], dtype=float)
            sd = float(np.std(means, ddof=1)) if len(means) > 1 else None
            mean = aggregate_values(means, "mean")
            out[str(m)] = Spread(len(means), mean, sd, float(means.min()), float(means.max()))
        return out

    def as_dict(self) -> dict[str, Any]:
        """What JSON says of the system beside its means: what was averaged, each run's name, source and
        means over the system's topics (:meth:`run_aggregates`), and the spread per metric (``sd``
        ``None`` for one run)."""
        keys = [str(m) for m in self.metrics]  # a run may hold more (a plan's plot values)
        return {
            "averaged": self.averaged,
            "runs": [
                {
                    "name": r.run_name,
                    "path": r.run_source,
                    "aggregate": _clean({k: v for k, v in means.items() if k in keys}),
                }
                for r, means in zip(self.runs, self._run_means, strict=True)
            ],
            "spread": {k: s._asdict() for k, s in self.spread().items()},
        }


def _clean(values: Mapping[str, float]) -> dict[str, float | None]:
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in values.items()}


def combine(name: str, runs: Sequence[Result]) -> SystemResult:
    """The system ``name`` made of ``runs`` (evaluated on the same metrics and options): per topic the
    mean of the runs' values, added left to right in the order given and divided by their number.

    The system's topics are those every run has. A topic only some runs have (possible only under
    ``missing_queries: skip``, since ``zero`` scores a missing topic 0 in each run and ``error`` stops)
    is left out, as a run's missing topic is under ``skip``, and a warning names it; a value a metric
    leaves undefined in one run (NaN) leaves the system's value undefined on that topic. A text-valued
    metric (relstring) has no mean: its values stay undefined and it has no texts. A catalogue-level
    metric (Coverage@k: one value per run, none per topic) is the mean of the runs' values, undefined
    when one run's is. One file given as several of the runs is allowed, with a warning: it weighs
    that many times in the mean.
    """
    if not runs:
        raise EvaluationError(f"system {name!r} has no runs")
    first = runs[0]
    for r in runs[1:]:
        if r.metrics != first.metrics:
            raise EvaluationError(
                f"system {name!r}: run {r.run_name} was evaluated on other metrics than {first.run_name}"
            )
        if r.options != first.options:
            raise EvaluationError(
                f"system {name!r}: run {r.run_name} was evaluated with other options than {first.run_name}"
            )
    common = set(first.query_ids).intersection(*(r.query_ids for r in runs[1:]))
    query_ids = tuple(q for q in first.query_ids if q in common)
    total = np.zeros((len(query_ids), len(first.metrics)))
    for r in runs:  # one run after another, so the sum's order is the runs' order, whatever numpy does
        position = {q: i for i, q in enumerate(r.query_ids)}
        total = total + r.values[[position[q] for q in query_ids]]
    warnings = list(collect_warnings(runs))
    dropped = sorted(set().union(*(r.query_ids for r in runs)) - common)
    if dropped:
        shown = ", ".join(dropped[:5]) + (", ..." if len(dropped) > 5 else "")
        warnings.append(
            f"system {name}: {len(dropped)} topics not answered by every one of its {len(runs)} runs are left out "
            f"({shown}; missing_queries: {first.options.missing_queries})"
        )
    warnings.extend(_repeated_files(name, runs))
    judged = [r.judged_at_10 for r in runs]
    catalogue = {}
    for m in first.metrics:
        if m.catalogue:  # each run's one value is its aggregate: the system's is their mean
            each = np.array([r.catalogue.get(str(m), np.nan) for r in runs], dtype=float)
            catalogue[str(m)] = float("nan") if np.isnan(each).any() else aggregate_values(each, "mean")
    return SystemResult(
        run_name=name,
        run_source=", ".join(r.run_source for r in runs),
        metrics=first.metrics,
        query_ids=query_ids,
        values=handed_over(total / len(runs)),
        options=first.options,
        warnings=tuple(warnings),
        judged_at_10=None if None in judged else aggregate_values(np.array(judged, dtype=float), "mean"),
        runs=tuple(runs),
        catalogue=catalogue,
    )


def _repeated_files(name: str, runs: Sequence[Result]) -> list[str]:
    """A warning for each file that is more than one of the system's runs (the same path, or two paths
    of one file): allowed, as a run given twice to ``irspec eval`` is, but rarely meant, since that run
    weighs double in the mean per topic and the spread of the runs looks smaller than it is."""
    seen: dict[str, list[str]] = {}
    for r in runs:
        if r.run_source and os.path.isfile(r.run_source):  # a frame or a dict has no file to repeat
            seen.setdefault(os.path.realpath(r.run_source), []).append(r.run_source)
    out = []
    for sources in seen.values():
        if len(sources) > 1:
            times = "twice" if len(sources) == 2 else f"{len(sources)} times"
            out.append(
                f"system {name}: {sources[0]} is given {times} ({len(sources)} of its {len(runs)} runs): that run "
                f"weighs {times} in the mean per topic, and the spread counts it as {len(sources)} runs"
            )
    return out


def expand_runs(name: str, runs: Any) -> list[str]:
    """A system's run paths: a glob (expanded, sorted; it must match a file) or a list of paths and
    globs. Raises :class:`EvaluationError` naming the system and the pattern that matches nothing."""
    items = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)
    out: list[str] = []
    for item in items:
        text = os.fspath(item)
        if any(c in text for c in "*?[") and not os.path.exists(text):
            matches = sorted(
                p for p in glob.glob(os.path.expanduser(text), recursive=True) if os.path.isfile(p)
            )
            if not matches:
                raise EvaluationError(f"system {name!r}: {text!r} matches no file")
            out.extend(matches)
        else:
            out.append(text)
    if not out:
        raise EvaluationError(f"system {name!r} has no runs")
    return out


def evaluate(qrels: Any, run: Any, metrics: Any, **options: Any) -> Result | results.ResultSet:
    """:func:`irspec.evaluation.result_set.evaluate` (``irspec.evaluate``), where a mapping's value may be a list of
    runs, or a glob: one system of several runs (:func:`combine`), named by its key.

    ``irspec.evaluate(qrels, {"bm25": "bm25.run", "dense": ["s1.run", "s2.run", "s3.run"]}, "AP")``
    evaluates the four runs against the qrels read once and returns ``bm25`` and the system ``dense``.
    Anything else is passed through unchanged.
    """
    groups = systems_of(run)
    if groups is None:
        return results.evaluate(qrels, run, metrics, **options)
    flat: dict[str, Any] = {}
    members: dict[str, list[str]] = {}
    for name, value in run.items():
        if name not in groups:
            flat[name] = value
            continue
        paths = groups[name]
        members[name] = [f"{name}[{i}]" for i in range(len(paths))]
        flat.update(zip(members[name], paths, strict=True))
    evaluated = results.evaluate(qrels, flat, metrics, **options)
    assert isinstance(evaluated, results.ResultSet)
    out: list[Result] = []
    for name in run:
        if name in members:
            parts = [
                dataclasses.replace(evaluated[k], run_name=stem(evaluated[k].run_source) or k)
                for k in members[name]
            ]
            out.append(combine(name, parts))
            # what combining found (a file given twice, topics left out), said as the runs' warnings were
            issue_warnings(w for w in out[-1].warnings if w not in evaluated.warnings)
        else:
            out.append(evaluated[name])
    return results.ResultSet(tuple(out))


def systems_of(run: Any) -> dict[str, list[str]] | None:
    """The systems in a mapping of runs (values that are lists of paths, or globs), each with its paths;
    ``None`` when there are none."""
    if not isinstance(run, Mapping) or one_mapping_run(run):
        return None
    found = {}
    for name, value in run.items():
        if (
            isinstance(value, (list, tuple))
            and value
            and all(isinstance(v, (str, os.PathLike)) for v in value)
        ) or (isinstance(value, str) and any(c in value for c in "*?[") and not os.path.exists(value)):
            found[name] = expand_runs(name, value)
    return found or None
