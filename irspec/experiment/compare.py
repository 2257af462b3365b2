"""The compare step: significance comparisons between evaluated runs.

>>> found = irspec.compare(results, baseline="bm25", test="randomization")   # doctest: +SKIP
>>> print(found)                       # the text table a plan prints        # doctest: +SKIP
>>> found.to_frame("polars")           # one row per comparison               # doctest: +SKIP

:func:`compare` takes :class:`~irspec.evaluation.result.Result` objects (from :func:`irspec.evaluate`,
:func:`~irspec.evaluation.evaluate.evaluate_many` or a plan's report) and returns :class:`Comparisons`; plans call
:func:`compare_results` with their :class:`~irspec.experiment.records.Compare` settings, the same path.

Comparisons pair per-query scores **by query id**, never by position. When every run is scored on every
query (``missing_queries: zero``) the pairs are complete; otherwise a pair of runs is compared on the
queries both answer, and a note says how many were left out. Corrections apply over the stated family
(the comparisons of one metric, or all of them); the Tukey tests adjust over all pairs of runs
themselves. The statistics are :mod:`irspec.stats.significance`'; the text table is the report layer's
(:func:`irspec.report.comparisons_table`), so this module sits above report, while the records it makes
(:mod:`irspec.experiment.records`) sit below it, where report can read them.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any, overload

import numpy as np

from irspec import report
from irspec.data.frames import check_backend, make_frame
from irspec.errors import EvaluationError, suggest
from irspec.evaluation.means import aggregate_values, floored_logs
from irspec.evaluation.result import Result
from irspec.experiment.records import TUKEY_TESTS, Compare, Comparison
from irspec.experiment.standardize import StandardizedMetric
from irspec.frozen import frozen
from irspec.progress import Progress
from irspec.report.notebook import Shown
from irspec.spec.plugins import get_registry
from irspec.spec.registry import Metric
from irspec.stats import significance as stats

__all__ = [
    "Comparisons",
    "common_matrix",
    "compare",
    "compare_results",
    "compare_settings",
    "comparison_pairs",
    "left_out_notes",
    "log_scale_note",
    "metrics_to_compare",
    "named_results",
    "relative_change",
    "tested_values",
]


@frozen
class Comparisons(Sequence[Comparison]):
    """The comparisons of some runs: an immutable sequence of :class:`~irspec.experiment.records.Comparison`,
    with the ``settings`` that made them, the ``notes`` worth telling (queries left out) and the
    ``results`` compared.

    ``str()`` (or :meth:`to_table`) is the text table a plan prints for its comparisons,
    :meth:`as_dict`/:meth:`to_json` the JSON a plan writes, :meth:`to_frame` a data frame.
    """

    comparisons: tuple[Comparison, ...]
    settings: Compare
    notes: tuple[str, ...] = ()
    results: tuple[Result, ...] = field(default=(), repr=False, compare=False)

    @overload
    def __getitem__(self, index: int) -> Comparison: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Comparison, ...]: ...

    def __getitem__(self, index: int | slice) -> Comparison | tuple[Comparison, ...]:
        return self.comparisons[index]

    def __len__(self) -> int:
        return len(self.comparisons)

    def __iter__(self) -> Iterator[Comparison]:
        return iter(self.comparisons)

    def __str__(self) -> str:
        return self.to_table()

    def to_table(self, *, decimals: int = 4) -> str:
        """One aligned row per comparison and a legend naming the test, correction and alpha, then the
        notes: the table of a plan's ``{format: table, content: comparisons}`` output."""
        return report.comparisons_table(
            self.results, self.comparisons, self.settings, notes=self.notes, decimals=decimals
        )

    def as_dict(self) -> dict[str, Any]:
        """``{"compare": settings, "comparisons": [every field of each], "notes": [...]}``, plain data."""
        return {
            "compare": self.settings.as_dict(),
            "comparisons": [c.as_dict() for c in self.comparisons],
            "notes": list(self.notes),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`as_dict` as JSON text (undefined numbers are ``null``)."""
        return json.dumps(self.as_dict(), indent=indent, allow_nan=False) + "\n"

    def show(self, *, intervals: str | None = "t", decimals: int = 4) -> Shown:
        """The comparisons as a notebook shows them: the runs' means (with 95% ``intervals``, ``"t"``,
        ``"bootstrap"`` or ``None``) and their significance marks, then one row per comparison."""
        return Shown(
            self.results, self.comparisons, self.settings, self.notes, intervals=intervals, decimals=decimals
        )

    def _repr_html_(self) -> str:
        return self.show()._repr_html_()

    def _repr_markdown_(self) -> str:
        return self.show()._repr_markdown_()

    def to_frame(self, backend: str = "polars") -> Any:
        """A long data frame: one row per comparison, the fields of
        :class:`~irspec.experiment.records.Comparison` as columns (its ``COLUMNS``; undefined numbers null).

        ``backend`` is ``"polars"`` (an irspec dependency) or ``"pandas"`` (installed separately, and
        imported only here).
        """
        check_backend(backend)
        types = {f.name: f.type for f in dataclasses.fields(Comparison)}
        columns = {name: [getattr(c, name) for c in self.comparisons] for name in Comparison.COLUMNS}
        # the column types from Comparison's annotations ("float | None" is a float column with nulls)
        return make_frame(
            columns, {name: str(types[name]).split(" | ")[0] for name in Comparison.COLUMNS}, backend
        )


def compare(
    results: Sequence[Result] | Mapping[str, Result],
    baseline: str | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    family: str = "per-metric",
    permutations: int = 10_000,
    seed: int = 42,
    metrics: str | Metric | Sequence[str | Metric] | None = None,
    baselines: Sequence[str] = (),
) -> Comparisons:
    """Compare evaluated runs for significance, per metric, on per-query scores paired by query id.

    ``results``: :class:`~irspec.evaluation.result.Result` objects (from :func:`irspec.evaluate`,
    :func:`~irspec.evaluation.evaluate.evaluate_many` or a plan's report), named by their ``run_name``; or a mapping
    ``{name: result}`` that names them. ``baseline``: the run every other run is compared with (as
    ``b``); ``None`` compares every pair of runs in order. ``baselines``: several such runs, each compared
    with every other run (two baselines with each other once, the later as ``b``). ``test``: ``t`` (paired t-test),
    ``randomization``, ``bootstrap``, ``wilcoxon``, ``sign``, ``tukey`` or ``randomized-tukey``.
    ``correction`` (``none``, ``bonferroni``, ``holm``, ``bh``, ``by``; ``None``: holm, or none for the
    Tukey tests, which adjust over all pairs themselves) applies over ``family`` (``per-metric`` or
    ``all``); a comparison is significant when its adjusted p-value is at most ``alpha``.
    ``permutations`` and ``seed``: the budget and seed of the randomization, bootstrap and randomised
    Tukey tests. ``metrics``: which of the results' metrics to compare (spec texts or bound metrics);
    default every one with a numeric aggregate but the catalogue-level ones (Coverage@k: one value per
    run, no per-user pairs), which the notes name.

    Raises :class:`~irspec.errors.EvaluationError` naming the argument at fault: an unknown test or
    correction (with a "did you mean"), a baseline that is not one of the runs, alpha outside (0, 1),
    fewer than two runs, runs with the same name, metrics not evaluated for every run, or a
    catalogue-level metric asked for.
    """
    if isinstance(baseline, Result):  # compare(res_a, res_b): the results go in one sequence
        raise EvaluationError(
            "compare takes the results as one sequence or mapping, then the baseline's name: "
            f"irspec.compare([res_a, res_b], baseline={baseline.run_name!r}), not compare(res_a, res_b)"
        )
    settings = compare_settings(
        baseline=baseline,
        test=test,
        permutations=permutations,
        seed=seed,
        correction=correction,
        alpha=alpha,
        family=family,
        baselines=baselines,
    )
    runs = named_results(results)
    found, notes = compare_results(runs, settings, metrics=metrics)
    return Comparisons(tuple(found), settings, tuple(notes), tuple(runs))


def named_results(results: Sequence[Result] | Mapping[str, Result]) -> list[Result]:
    """The results as a list, each checked to be a :class:`Result`; a mapping's keys become their names."""
    if isinstance(results, Mapping):
        items: list[tuple[str, str | None, Result]] = [(f"results[{k!r}]", k, r) for k, r in results.items()]
    elif isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise EvaluationError(
            f"results must be a sequence of evaluated results (irspec.evaluate returns one) or a mapping "
            f"{{name: result}}, not {type(results).__name__}"
        )
    else:
        items = [(f"results[{i}]", None, r) for i, r in enumerate(results)]
    out = []
    for where, name, res in items:
        if not isinstance(res, Result):
            raise EvaluationError(
                f"{where} is a {type(res).__name__}, not an evaluated result (irspec.evaluate returns one)"
            )
        if name is not None and not isinstance(name, str):
            raise EvaluationError(f"{where}: run names must be strings, not {type(name).__name__}")
        out.append(res if name is None or name == res.run_name else dataclasses.replace(res, run_name=name))
    return out


CATALOGUE_WHY = "catalogue-level, one value per run from every user's list together and none per user"
"""Why a catalogue-level metric (``Metric.catalogue``) has no per-user pairs: the words of every error
and note that leaves one out of a test, a power design or a per-user combination."""


def metrics_to_compare(
    results: Sequence[Result], metrics: Any, notes: list[str] | None = None
) -> tuple[Metric, ...]:
    """The metrics to compare: those asked for (each evaluated for every run), or every metric of the
    first run with a numeric aggregate (a text-valued metric such as relstring has nothing to test:
    ``notes`` says it is left out).
    A catalogue-level metric (item coverage: one value per run) has no per-query pairs to test: asked
    for, it is an error naming it; among every metric, it is left out, and ``notes`` says so."""
    first = results[0].metrics
    if metrics is None:
        chosen = tuple(m for m in first if m.aggregate != "none" and not m.catalogue)
        if notes is not None:
            notes.extend(left_out_notes(first))
    else:
        asked = [metrics] if isinstance(metrics, (str, Metric)) else list(metrics)
        chosen = ()
        for item in asked:
            found = [item] if isinstance(item, Metric) else get_registry().parse(item)
            for m in found:
                if m not in first:
                    names = [str(x) for x in first]
                    close = suggest(str(m), names, n=1)
                    hint = f"; did you mean {close[0]!r}?" if close else f"; they are {', '.join(names)}"
                    raise EvaluationError(
                        f"metrics: {m} is not among the evaluated metrics of {results[0].run_name}{hint}"
                    )
                if m.aggregate == "none":
                    raise EvaluationError(f"metrics: {m} has text values; there is nothing to test")
                if m.catalogue:
                    raise EvaluationError(
                        f"metrics: {m} is {CATALOGUE_WHY}: there is nothing to pair, test or design for"
                    )
                chosen += () if m in chosen else (m,)
    for res in results[1:]:
        missing = [str(m) for m in chosen if m not in res.metrics]
        if missing:
            raise EvaluationError(
                f"run {res.run_name} was not evaluated on {', '.join(missing)} (run {results[0].run_name} was); "
                "compare runs evaluated on the same metrics"
            )
    return chosen


def compare_settings(*, baselines: Sequence[str] = (), **settings: Any) -> Compare:
    """The :class:`~irspec.experiment.records.Compare` of :func:`compare`'s keyword arguments (and
    :func:`irspec.agreement`'s), which checks them: ``baselines`` given as a list made a tuple, any other
    value checked as given (a str names one baseline)."""
    return Compare(baselines=tuple(baselines) if isinstance(baselines, list) else baselines, **settings)  # type: ignore[arg-type]


RESAMPLING_TESTS = ("randomization", "bootstrap", "randomized-tukey")
"""The tests whose p-values (and the bootstrap's intervals) come from ``permutations`` resamples."""


def few_resamples_note(compare: Compare) -> str | None:
    """The note for a resampling test given fewer resamples than put one in each tail at ``alpha``
    (``permutations * alpha / 2 < 1``: under 40 at 0.05), or None. Its p-values cannot go below
    ``1 / (permutations + 1)`` and its intervals' bounds are the extreme resamples: a zero-width interval
    that excluded the estimate, from one resample, was printed as a 95% one without a word."""
    b, alpha = compare.permutations, compare.alpha
    if compare.test not in RESAMPLING_TESTS or b * alpha / 2 >= 1:
        return None
    return (
        f"{b:,} resample{'s are' if b != 1 else ' is'} too few for {compare.test} at alpha = {alpha:g}: "
        f"fewer than one falls in each tail (under {2 / alpha:,.0f}), so its p-values and intervals mean "
        f"little; give {Compare.permutations:,} (the default) or more"
    )


def left_out_notes(metrics: Sequence[Metric]) -> list[str]:
    """The notes that name the metrics among ``metrics`` no test compares nor design designs: text-valued
    ones (relstring) and catalogue-level ones (Coverage@k); none when every one is compared."""
    out = []
    texts = [str(m) for m in metrics if m.aggregate == "none"]
    if texts:
        out.append(f"{', '.join(texts)}: text values, no numbers to test; not compared")
    unpaired = [str(m) for m in metrics if m.catalogue and m.aggregate != "none"]
    if unpaired:
        out.append(
            f"{', '.join(unpaired)}: catalogue-level, one value per run and none per user, so there are no "
            "pairs to test; not compared"
        )
    return out


def compare_results(
    results: Sequence[Result], compare: Compare, *, metrics: Any = None
) -> tuple[list[Comparison], list[str]]:
    """The comparisons ``compare`` asks for between ``results`` (one per run), and notes.

    Per metric: every run against each of ``compare.baselines`` (the baseline as ``b``; see
    :func:`comparison_pairs`), or every pair of runs in order; or Tukey's HSD over all runs. Scores are paired by query id. The correction is applied over
    ``compare.family``. ``metrics`` as in :func:`compare`.
    """
    names = [r.run_name for r in results]
    if len(results) < 2:
        raise EvaluationError(f"comparing needs at least 2 runs, got {len(results)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise EvaluationError(
            f"runs must have distinct names to be compared; {', '.join(map(repr, twice))} is given more than once "
            "(name them with a mapping {name: result})"
        )
    pairs = comparison_pairs(names, compare.baselines)
    notes: list[str] = []
    chosen = metrics_to_compare(results, metrics, notes)
    logs = log_scale_note(chosen, "compared")
    if logs:
        notes.append(logs)
    few = few_resamples_note(compare)
    if few:
        notes.append(few)
    out: list[Comparison] = []

    steps = len(chosen) * (1 if compare.test in TUKEY_TESTS else len(pairs))
    with Progress(f"comparing runs ({compare.test})", steps) as progress:
        if compare.test in TUKEY_TESTS:
            for metric in chosen:
                out.extend(
                    _tukey_comparisons(results, metric, pairs, compare, notes, first=metric is chosen[0])
                )
                progress.advance()
            return out, notes
        tested: list[tuple[stats.ComparisonResult, dict[str, Any]]] = []
        told: set[tuple[int, int]] = set()
        for metric in chosen:
            for i, j in pairs:
                x, y, left_out = _aligned(results[i], results[j], metric, notes, told, (i, j))
                try:
                    r = stats.paired(
                        x,
                        y,
                        test=compare.test,
                        permutations=compare.permutations,
                        seed=compare.seed,
                        alpha=compare.alpha,
                    )
                except EvaluationError as e:
                    raise EvaluationError(
                        f"cannot compare {names[i]} with {names[j]} on {metric}: {e}"
                        + _undefined_runs([results[i], results[j]], metric)
                    ) from None
                runs = {"metric": str(metric), "a": names[i], "b": names[j], "left_out": left_out,
                        "mean_a": aggregate_values(x, "mean"), "mean_b": aggregate_values(y, "mean")}  # fmt: skip
                tested.append((r, {**runs, **_in_metric_terms(metric, r)}))
                progress.advance()
    adjusted = _adjusted([r.p_value for r, _ in tested], [runs["metric"] for _, runs in tested], compare)
    for (r, runs), (p, size) in zip(tested, adjusted, strict=True):
        out.append(
            Comparison.extended(
                r,
                **runs,
                p_adjusted=p,
                significant=p <= compare.alpha,
                correction=compare.correction,
                family=compare.family,
                family_size=size,
            )
        )
    return out, notes


def comparison_pairs(names: Sequence[str], baselines: Sequence[str] = ()) -> list[tuple[int, int]]:
    """The pairs ``(a, b)`` of run indices to compare: with ``baselines``, every run against each
    baseline in turn (the baseline as ``b``), a pair of baselines only once (against the earlier one);
    without, every pair of runs in order. Raises :class:`EvaluationError` for a baseline not among
    ``names``."""
    for base in baselines:
        if base not in names:
            close = suggest(base, list(names), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise EvaluationError(f"baseline {base!r} is not one of the runs: {', '.join(names)}{hint}")
    if not baselines:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    pairs: list[tuple[int, int]] = []
    done: set[frozenset[int]] = set()
    for base in baselines:
        b = names.index(base)
        for i in range(len(names)):
            if i != b and frozenset((i, b)) not in done:
                done.add(frozenset((i, b)))
                pairs.append((i, b))
    return pairs


def _adjusted(p_values: list[float], metrics: list[str], compare: Compare) -> list[tuple[float, int]]:
    """Each p-value after ``compare.correction`` over its family (the comparisons of its metric, or all
    of them), with the size of that family."""
    if compare.family == "all":
        groups = [list(range(len(p_values)))]
    else:
        by_metric: dict[str, list[int]] = {}
        for k, metric in enumerate(metrics):
            by_metric.setdefault(metric, []).append(k)
        groups = list(by_metric.values())
    assert compare.correction is not None  # Compare.__post_init__ set the test's default
    out: dict[int, tuple[float, int]] = {}
    for group in groups:
        adjusted = stats.adjust([p_values[k] for k in group], method=compare.correction)
        for k, p in zip(group, adjusted, strict=True):
            out[k] = (float(p), len(group))
    return [out[k] for k in range(len(p_values))]


def _undefined_runs(results: Sequence[Result], metric: Any) -> str:
    """Why too few queries could be paired, when the reason is a run whose ``metric`` is undefined
    (NaN) on every query it has, so that its mean is undefined too: ``"; A: undefined on every query"``."""
    empty = [r.run_name for r in results if len(r.query_ids) and np.isnan(r.column(metric)).all()]
    if not empty:
        return ""
    return f" ({', '.join(empty)}: undefined on every query, so {'its mean is' if len(empty) == 1 else 'their means are'} undefined)"


def _aligned(
    ra: Any, rb: Any, metric: Any, notes: list[str], told: set[tuple[int, int]], key: tuple[int, int]
) -> tuple[Any, Any, int]:
    """Two runs' values of ``metric`` on the queries both have, matched by query id."""
    qa = np.asarray(ra.query_ids, dtype=str)
    qb = np.asarray(rb.query_ids, dtype=str)
    common, ia, ib = np.intersect1d(qa, qb, assume_unique=True, return_indices=True)
    x = tested_values(metric, ra.column(metric)[ia])
    y = tested_values(metric, rb.column(metric)[ib])
    one_sided = len(qa) + len(qb) - 2 * len(common)
    if one_sided and key not in told:
        told.add(key)
        notes.append(
            f"{ra.run_name} vs {rb.run_name}: compared on the {len(common)} queries both runs answer "
            f"({len(qa) - len(common)} only in {ra.run_name}, {len(qb) - len(common)} only in {rb.run_name}; "
            f"missing_queries: {ra.options.missing_queries})"
        )
    defined = np.isfinite(x) & np.isfinite(y)
    if not defined.all():
        notes.append(
            f"{metric}: {ra.run_name} vs {rb.run_name}: {int((~defined).sum())} queries where the metric is "
            "undefined for one run left out"
        )
        x, y = x[defined], y[defined]
    return x, y, int(len(qa) + len(qb) - len(common) - len(x))


def _tukey_comparisons(
    results: Sequence[Result],
    metric: Metric,
    pairs: list[tuple[int, int]],
    compare: Compare,
    notes: list[str],
    *,
    first: bool,
) -> list[Comparison]:
    """Tukey HSD (parametric or randomised) over all runs on the queries every run has, for ``pairs``;
    the note of queries left out is made once, for the ``first`` metric."""
    names = [r.run_name for r in results]
    matrix = common_matrix(results, metric)
    total = len(set().union(*(map(str, r.query_ids) for r in results)))  # every query some run has
    if matrix.shape[1] < total and first:
        notes.append(
            f"{compare.test}: compared on the {matrix.shape[1]} queries every run answers "
            f"(missing_queries: {results[0].options.missing_queries})"
        )
    defined = np.all(np.isfinite(matrix), axis=0)
    if not defined.all():
        notes.append(
            f"{metric}: {int((~defined).sum())} queries where the metric is undefined for some run left out"
        )
        matrix = matrix[:, defined]
    try:
        found = stats.tukey(
            matrix,
            randomized=compare.test == "randomized-tukey",
            permutations=compare.permutations,
            seed=compare.seed,
            alpha=compare.alpha,
            pairs=pairs,
        )
    except EvaluationError as e:
        raise EvaluationError(
            f"cannot compare the runs on {metric}: {e}{_undefined_runs(results, metric)}"
        ) from None
    out = []
    for p in found:
        x, y = matrix[p.a], matrix[p.b]
        interval: dict[str, Any] = {}
        if p.ci_low is None:
            # the randomised HSD has no simultaneous interval: the pair's t interval, said to be unadjusted
            t = stats.paired(x, y, test="t")
            interval = {
                "ci_low": t.ci_low,
                "ci_high": t.ci_high,
                "confidence": t.confidence,
                "ci_method": "t (not adjusted)",
            }
        out.append(
            Comparison.extended(
                p,
                metric=str(metric),
                a=names[p.a],
                b=names[p.b],
                left_out=int(total - matrix.shape[1]),
                mean_a=aggregate_values(x, "mean"),
                mean_b=aggregate_values(y, "mean"),
                test=compare.test,
                p_adjusted=p.p_value,
                correction=p.test,
                family="all pairs of runs, per metric",
                family_size=len(results) * (len(results) - 1) // 2,
                **interval,
                **_in_metric_terms(metric, p),
            )
        )
    return out


def relative_change(metric: Metric, outcome: stats.ComparisonResult) -> float | None:
    """The relative change of run a's mean over run b's in ``metric``, from a test of its
    :func:`tested_values`: ``a / b - 1`` of the two summaries.

    For an arithmetic mean, the test's own ``mean_difference / mean_b`` (``None`` when ``mean_b`` is 0).
    For a geometric mean (GMAP), tested on logarithms, ``exp(mean_difference) - 1``: the difference of
    mean logarithms is the logarithm of the geometric means' ratio, while dividing it by a mean
    logarithm (negative below 1) would flip its sign. ``None`` for a z-score (``z(nDCG@10)``, a
    :class:`~irspec.experiment.standardize.StandardizedMetric` without the CDF): its 0 is the reference
    systems' mean, not an absence of quality, so a ratio to it means nothing. ``Phi(z(...))`` keeps the
    ratio: its values lie in [0, 1], 0 the worst."""
    if metric.aggregate == "gmean":
        return math.expm1(outcome.mean_difference)
    if isinstance(metric, StandardizedMetric) and not metric.cdf:
        return None
    return outcome.relative_change


def _in_metric_terms(metric: Metric, outcome: stats.ComparisonResult) -> dict[str, Any]:
    """The fields of a test's ``outcome`` restated for ``metric``: its :func:`relative_change`, and wins and
    losses in the metric's direction. The test counts a query as a win where a's value is the higher;
    where a lower value is better (search length, fall-out) that is a loss. A metric better neither way
    (a count) keeps the test's count: a win is a higher value."""
    changes: dict[str, Any] = {"relative_change": relative_change(metric, outcome)}
    if metric.better == "lower":
        changes.update(wins=outcome.losses, losses=outcome.wins)
    return changes


def tested_values(metric: Metric, values: np.ndarray) -> np.ndarray:
    """The per-query values of ``metric`` that a test or a design compares: the values themselves, or for
    a geometric mean (GMAP, gm_bpref) the logarithms it averages, log(max(v, 1e-5)) with the C library's
    log. A geometric mean's per-query values are its base metric's (AP's), whose arithmetic mean is
    that metric (MAP): a test of them would be MAP's test under GMAP's name. A difference of mean
    logarithms is the logarithm of the two geometric means' ratio."""
    return floored_logs(values) if metric.aggregate == "gmean" else values


def log_scale_note(metrics: Sequence[Metric], what: str) -> str | None:
    """The note that the geometric means among ``metrics`` are ``what`` (compared, designed) on the
    logarithms they average; ``None`` when there is none."""
    names = [str(m) for m in metrics if m.aggregate == "gmean"]
    if not names:
        return None
    return (
        f"{', '.join(names)}: {what} on log(max(value, 1e-5)) per query, the logarithms a geometric mean "
        "averages: means, differences and intervals are of those logarithms (exp of a mean is the geometric "
        "mean; exp of a difference, the ratio of two)"
    )


def common_matrix(results: Sequence[Result], metric: Metric) -> np.ndarray:
    """The runs' values of ``metric`` as a ``runs x queries`` matrix over the queries every run has,
    matched by query id (in sorted query-id order), as :func:`tested_values` gives them; undefined
    values stay NaN."""
    common = np.asarray(results[0].query_ids, dtype=str)
    for r in results[1:]:
        common = np.intersect1d(common, np.asarray(r.query_ids, dtype=str), assume_unique=True)
    rows = []
    for r in results:
        q = np.asarray(r.query_ids, dtype=str)
        order = np.argsort(q)
        pos = order[np.searchsorted(q, common, sorter=order)]
        rows.append(tested_values(metric, r.column(metric)[pos]))
    return np.vstack(rows)
