"""The power step: how much the comparisons of evaluated runs can detect, and how many topics a stated
difference needs (Sakai's topic set size design).

>>> found = irspec.power(results, delta=0.02)                 # doctest: +SKIP
>>> print(found)                  # the power table              # doctest: +SKIP
>>> found.to_frame("polars")      # one row per comparison       # doctest: +SKIP

:func:`power` takes evaluated results (as :func:`irspec.compare` does) or the
:class:`~irspec.experiment.compare.Comparisons` made from them, and returns a :class:`PowerAnalysis`: per
comparison (run ``a`` against ``b`` on one metric, per-query scores paired by query id) the paired
t-test design, and per metric the one-way ANOVA design over all runs (on the queries every run has).
The statistics are :mod:`irspec.stats.design`'s on plain arrays; the tables are the report layer's
(:func:`irspec.report.power.power_sections`), so this module sits above report.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from irspec import report
from irspec.data.frames import check_backend, make_frame
from irspec.errors import EvaluationError, quote, suggest
from irspec.evaluation.means import aggregate_values
from irspec.evaluation.result import Result
from irspec.experiment.compare import (
    Comparisons,
    common_matrix,
    left_out_notes,
    log_scale_note,
    metrics_to_compare,
    named_results,
)
from irspec.frozen import frozen
from irspec.report import power as power_report
from irspec.stats import design
from irspec.stats import significance as stats
from irspec.stats.resampling import quantise

__all__ = ["AnovaPower", "PairPower", "PowerAnalysis", "PowerCurve", "power"]

_DECIMALS = 10
"""Differences are rounded to this many places before their deviation, as irspec.stats.significance does, so that
floating-point noise (``0.8 - 0.7 != 0.1``) does not make a deviation out of nothing."""


@frozen
class PairPower:
    """The paired t-test design of one comparison: run ``a`` against ``b`` on ``metric``, over the ``n``
    queries both have (paired by query id, undefined values left out), with the observed
    ``mean_difference`` (``a - b``) and ``sd_difference`` (the standard deviation of the per-query
    differences, ``n - 1`` in the denominator). ``achieved_power``: the power to detect the analysis'
    ``delta`` with these ``n`` topics; ``detectable``: the minimum detectable difference at the target
    power; ``topics_needed``: the topics ``delta`` needs at alpha and the target power. Without a delta
    the first and last are ``None``."""

    metric: str
    a: str
    b: str
    n: int
    mean_difference: float
    sd_difference: float
    achieved_power: float | None
    detectable: float
    topics_needed: int | None

    def as_dict(self) -> dict[str, Any]:
        """All fields as a plain, JSON-serialisable dict."""
        return dataclasses.asdict(self)


@frozen
class AnovaPower:
    """The one-way ANOVA design of one metric over all ``runs``, on the ``n`` queries every run has:
    ``residual_variance`` is the two-way ANOVA's (topics x runs, without replication), the one Tukey's
    HSD uses. ``achieved_power``: the power to detect a range of ``delta`` between the best and worst
    run with these ``n`` topics; ``detectable``: the minimum detectable range at the target power;
    ``topics_needed``: the topics a range of ``delta`` needs. Without a delta, ``None``."""

    metric: str
    runs: tuple[str, ...]
    n: int
    residual_variance: float
    achieved_power: float | None
    detectable: float
    topics_needed: int | None

    def as_dict(self) -> dict[str, Any]:
        """All fields as a plain, JSON-serialisable dict (``runs`` a list)."""
        return {**dataclasses.asdict(self), "runs": list(self.runs)}


@frozen
class PowerCurve:
    """Power against the number of topics, for one comparison or one metric's ANOVA: ``label`` names
    it, ``design`` is ``"t"`` or ``"anova"``; ``power[i]`` is the power with ``topics[i]`` topics,
    ``at_hand`` the topics the data has and ``needed`` the topics delta needs."""

    label: str
    design: str
    topics: tuple[int, ...]
    power: tuple[float, ...]
    at_hand: int
    needed: int | None


@frozen
class PowerAnalysis:
    """What :func:`power` finds: a :class:`PairPower` per comparison and an :class:`AnovaPower` per
    metric, for the minimum difference of interest ``delta`` (``None``: only the minimum detectable
    differences), significance level ``alpha`` and target ``power``.

    ``str()`` (or :meth:`to_table`) is the text table, :meth:`to_markdown`, :meth:`to_latex` and the
    notebook's HTML the same tables, :meth:`as_dict`/:meth:`to_json` the JSON a plan writes,
    :meth:`to_frame` a data frame, :meth:`curves` the power curves the plots draw.
    """

    pairs: tuple[PairPower, ...]
    anova: tuple[AnovaPower, ...]
    delta: float | None
    alpha: float
    power: float
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.to_table()

    def to_table(self, *, decimals: int = 4) -> str:
        """The power tables as aligned text, each under its heading, with what the columns mean."""
        return report.text.plain_tables(
            power_report.power_sections(self, decimals=decimals), notes=self.notes
        )

    def to_markdown(self, *, decimals: int = 4) -> str:
        """The power tables as Markdown."""
        return report.markdown.plain_tables(
            power_report.power_sections(self, decimals=decimals), notes=self.notes
        )

    def to_latex(self, *, decimals: int = 4) -> str:
        r"""The power tables as LaTeX (booktabs) ``table`` environments."""
        return report.latex.plain_tables(
            power_report.power_sections(self, decimals=decimals), notes=self.notes
        )

    def _repr_html_(self) -> str:
        return report.html.fragment(sections=power_report.power_sections(self))

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def as_dict(self) -> dict[str, Any]:
        """``{"delta", "alpha", "power", "pairs": [...], "anova": [...], "notes": [...]}``, plain data."""
        return {
            "delta": self.delta,
            "alpha": self.alpha,
            "power": self.power,
            "pairs": [p.as_dict() for p in self.pairs],
            "anova": [a.as_dict() for a in self.anova],
            "notes": list(self.notes),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`as_dict` as JSON text (undefined numbers are ``null``)."""
        return json.dumps(self.as_dict(), indent=indent, allow_nan=False) + "\n"

    def to_frame(self, backend: str = "polars", *, design: str = "t") -> Any:
        """A data frame of the paired t-test rows (``design="t"``, one per comparison) or of the ANOVA
        rows (``design="anova"``, one per metric; ``runs`` joined by commas). ``backend`` is
        ``"polars"`` or ``"pandas"``."""
        check_backend(backend)
        if design not in ("t", "anova"):
            raise EvaluationError(f"design must be 't' or 'anova', not {design!r}")
        kind = PairPower if design == "t" else AnovaPower
        rows = self.pairs if design == "t" else self.anova
        fields = dataclasses.fields(kind)
        columns = {f.name: [_cell(getattr(r, f.name)) for r in rows] for f in fields}
        types = {f.name: "str" if f.name == "runs" else str(f.type).split(" | ")[0] for f in fields}
        return make_frame(columns, types, backend)

    def curves(self, *, points: int = 60) -> list[PowerCurve]:
        """The power curves for ``delta`` (none without one, or without a comparison): per comparison and per metric's ANOVA,
        the power at about ``points`` topic counts from 2 to past the larger of twice the topics at
        hand and the topics delta needs (at most 10,000); ``points`` an integer >= 2, and more points than
        topic counts in that range give every count (10**9 points are not drawn: the grid is the same)."""
        if isinstance(points, bool) or not isinstance(points, numbers.Integral) or points < 2:
            raise EvaluationError(f"points must be an integer >= 2, not {quote(points)}")
        if self.delta is None or not (self.pairs or self.anova):  # nothing designed: its notes say why
            return []
        wanted = [r.topics_needed or 0 for r in (*self.pairs, *self.anova)] + [
            2 * r.n for r in (*self.pairs, *self.anova)
        ]
        top = min(10_000, max(10, math.ceil(1.15 * max(wanted))))
        # one point per topic count at most: spaced under 1 apart, they round to every count already
        count = min(int(points), top - design.MIN_TOPICS + 1)
        grid = tuple(sorted({round(float(x)) for x in np.linspace(design.MIN_TOPICS, top, count)}))
        out = []
        for p in self.pairs:
            values = tuple(design.t_power(self.delta, p.sd_difference, n, alpha=self.alpha) for n in grid)
            out.append(PowerCurve(f"{p.metric}: {p.a} vs {p.b}", "t", grid, values, p.n, p.topics_needed))
        for a in self.anova:
            values = tuple(
                design.anova_power(self.delta, a.residual_variance, len(a.runs), n, alpha=self.alpha)
                for n in grid
            )
            out.append(
                PowerCurve(
                    f"{a.metric}: ANOVA over {len(a.runs)} runs", "anova", grid, values, a.n, a.topics_needed
                )
            )
        return out


def _cell(value: Any) -> Any:
    return ", ".join(value) if isinstance(value, tuple) else value


def power(
    results: Sequence[Result] | Mapping[str, Result] | Comparisons,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    baseline: str | None = None,
    metrics: Any = None,
) -> PowerAnalysis:
    """The power and topic set size design of the comparisons of evaluated runs.

    ``results``: evaluated results (a sequence named by their ``run_name``, or a mapping
    ``{name: result}``, as :func:`irspec.compare` takes them), or the
    :class:`~irspec.experiment.compare.Comparisons` made from them (then its pairs of runs and metrics are
    the ones designed for, and ``baseline``/``metrics`` must be left out). With results, every run is
    designed against ``baseline``, or every pair of runs in order without one; ``metrics`` as in
    :func:`irspec.compare`. ``delta`` is the minimum difference of interest on the metric's scale (a
    range between the best and the worst run for the ANOVA); ``alpha`` the significance level and
    ``power`` the target power (Sakai's usual 0.05 and 0.8). A catalogue-level metric (Coverage@k: one
    value per run, none per user) has no per-user scores to design a test on: among every metric it is
    left out and the analysis' ``notes`` say so; asked for in ``metrics``, it is an error naming it.

    Raises :class:`~irspec.errors.EvaluationError` naming the argument at fault: ``delta`` not > 0,
    ``alpha`` or ``power`` outside (0, 1), ``power`` not above ``alpha``, fewer than two runs, a baseline
    that is not one of them, or a pair of runs with fewer than 2 queries in common; and a ``delta`` so
    small that a design would need more than 10**9 topics.
    """
    if delta is not None:
        design.t_power(delta, 0.0, design.MIN_TOPICS)  # checks delta: a number > 0
    for name, value in (("alpha", alpha), ("power", power)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
            raise EvaluationError(f"{name} must be a number strictly between 0 and 1, not {value!r}")
    design.check_target(power, alpha)
    notes: list[str] = []
    runs, pairs = _pairs(results, baseline, metrics, notes)
    chosen = list(dict.fromkeys(metric for metric, _, _ in pairs))
    logs = log_scale_note(chosen, "designed")
    if logs:
        notes.append(f"{logs}; delta is such a difference")
    # Every pair's and every ANOVA's data first (their errors in this order), then the designs, the
    # ANOVA's first: its F distribution has no critical value for an alpha far smaller than the t's has
    # (below about 1e-20 for 50 topics), and its error then comes at once, where the pairs' designs at
    # such an alpha take minutes of scipy's noncentral t far in its tail.
    pair_data = [_pair_data(runs[i], runs[j], metric, notes) for metric, i, j in pairs]
    anova_data = [_anova_data(runs, metric, notes) for metric in chosen]
    anova = [_anova_power(*data, delta, alpha, power) for data in anova_data]
    rows = [_pair_power(*data, delta, alpha, power) for data in pair_data]
    return PowerAnalysis(
        tuple(rows),
        tuple(anova),
        None if delta is None else float(delta),
        float(alpha),
        float(power),
        tuple(notes),
    )


def _pairs(
    results: Any, baseline: str | None, metrics: Any, notes: list[str]
) -> tuple[list[Result], list[tuple[Any, int, int]]]:
    """The runs and the ``(metric, a, b)`` indices to design for; a catalogue-level metric among every
    metric is left out with a note (asked for, an error), as the compare step leaves it out."""
    if isinstance(results, Comparisons):
        if baseline is not None or metrics is not None:
            raise EvaluationError(
                "baseline and metrics come from the comparisons; give them to irspec.compare instead"
            )
        runs = list(results.results)
        notes.extend(left_out_notes(runs[0].metrics) if runs else ())
        names = [r.run_name for r in runs]
        by_text = {str(m): m for m in runs[0].metrics} if runs else {}
        return runs, [(by_text[c.metric], names.index(c.a), names.index(c.b)) for c in results]
    runs = named_results(results)
    if len(runs) < 2:
        raise EvaluationError(f"a power analysis needs at least 2 runs, got {len(runs)}")
    names = [r.run_name for r in runs]
    if baseline is not None and baseline not in names:
        close = suggest(baseline, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise EvaluationError(f"baseline {baseline!r} is not one of the runs: {', '.join(names)}{hint}")
    if baseline is not None:
        b = names.index(baseline)
        index = [(i, b) for i in range(len(runs)) if i != b]
    else:
        index = [(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    chosen = metrics_to_compare(runs, metrics, notes)
    return runs, [(m, i, j) for m in chosen for i, j in index]


def _defined(matrix: np.ndarray, what: str, notes: list[str]) -> np.ndarray:
    """The columns (queries) of ``matrix`` where every value is defined; a note when some are not."""
    defined = np.all(np.isfinite(matrix), axis=0)
    if not defined.all():
        notes.append(
            f"{what}: {int((~defined).sum())} queries where the metric is undefined for some run left out"
        )
    return matrix[:, defined]


def _pair_data(
    ra: Result, rb: Result, metric: Any, notes: list[str]
) -> tuple[Any, Result, Result, np.ndarray]:
    """A pair's scores on the queries both define, checked: ``(metric, ra, rb, matrix)``."""
    what = f"{metric}: {ra.run_name} vs {rb.run_name}"
    matrix = _defined(common_matrix([ra, rb], metric), what, notes)
    if matrix.shape[1] < design.MIN_TOPICS:
        raise EvaluationError(
            f"{what}: {matrix.shape[1]} queries in common; a power analysis needs at least 2"
        )
    return metric, ra, rb, matrix


def _pair_power(
    metric: Any, ra: Result, rb: Result, matrix: np.ndarray, delta: float | None, alpha: float, target: float
) -> PairPower:
    n = matrix.shape[1]
    k, scale, _ = quantise(matrix[0] - matrix[1], _DECIMALS)
    sd = float(np.std(k, ddof=1)) / scale  # on the integers: equal differences give exactly 0
    return PairPower(
        metric=str(metric),
        a=ra.run_name,
        b=rb.run_name,
        n=n,
        mean_difference=aggregate_values(matrix[0], "mean") - aggregate_values(matrix[1], "mean"),
        sd_difference=sd,
        achieved_power=None if delta is None else design.t_power(delta, sd, n, alpha=alpha),
        detectable=design.t_detectable(sd, n, alpha=alpha, power=target),
        topics_needed=None if delta is None else design.t_topics(delta, sd, alpha=alpha, power=target),
    )


def _anova_data(
    runs: Sequence[Result], metric: Any, notes: list[str]
) -> tuple[Any, Sequence[Result], np.ndarray]:
    """The runs' scores on the queries every run defines, checked: ``(metric, runs, matrix)``."""
    matrix = _defined(common_matrix(runs, metric), f"{metric}: ANOVA", notes)
    if matrix.shape[1] < design.MIN_TOPICS:
        raise EvaluationError(
            f"{metric}: {matrix.shape[1]} queries every run has; a power analysis needs at least 2"
        )
    return metric, runs, matrix


def _anova_power(
    metric: Any, runs: Sequence[Result], matrix: np.ndarray, delta: float | None, alpha: float, target: float
) -> AnovaPower:
    n, m = matrix.shape[1], matrix.shape[0]
    variance = stats.residual_variance(matrix, decimals=_DECIMALS)
    return AnovaPower(
        metric=str(metric),
        runs=tuple(r.run_name for r in runs),
        n=n,
        residual_variance=variance,
        achieved_power=None if delta is None else design.anova_power(delta, variance, m, n, alpha=alpha),
        detectable=design.anova_detectable(variance, m, n, alpha=alpha, power=target),
        topics_needed=None
        if delta is None
        else design.anova_topics(delta, variance, m, alpha=alpha, power=target),
    )
