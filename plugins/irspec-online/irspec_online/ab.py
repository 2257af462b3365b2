"""Online A/B tests: a log's arms compared on its metrics, at the unit of randomisation.

A log whose records carry an arm (``arm``, or the key the :class:`Design` names) is an A/B test. Every
metric's per-row values (the kernels' output, NaN where a metric leaves a row out) are first summed per
unit of randomisation (a ``user``, a ``session`` or a ``query`` issue): a unit's numerator is the sum
of its rows' values and its denominator the number of its rows with a value (:func:`partial_sums`,
:func:`combine`). The metric of an arm is then the ratio of the means of those sums, which is the
metric's value over the arm's rows (CTR = clicked issues / issues, Abandonment = abandoned sessions /
sessions), and the arms are compared unit against unit:

* a metric whose denominator is 1 in every unit (the metric's own unit is the unit of randomisation:
  CTR with query issues, Abandonment with sessions) is a per-unit mean: **Welch's t-test** on the units'
  values;
* any other metric is a ratio of per-unit sums (CTR with users: a user's clicked issues / issues):
  the **delta method** (Deng, Knoblich & Lu, "Applying the delta method in metric analytics: a practical
  guide with novel ideas", KDD 2018, section 3) gives the variance of the ratio of means,

      Var(Ybar / Xbar) ~= (s_Y^2 - 2 r s_XY + r^2 s_X^2) / (n Xbar^2),      r = Ybar / Xbar,

  with the sample (co)variances of the units' sums, and the difference of two arms' ratios is normal
  with the sum of their variances.

The relative difference ``r_t / r_c - 1`` has the delta-method variance ``Var(r_t) / r_c^2 +
r_t^2 Var(r_c) / r_c^4`` (same paper, section 3.3) in both cases. Every p-value is then adjusted over the
family (all the test's comparisons, or each metric's) with :func:`irspec.plugin_api.adjust` (Holm by default),
and the units per arm are checked against the expected split: a **sample-ratio mismatch** is a
chi-square goodness-of-fit p below ``srm_alpha`` (0.001), a warning in every output.

The statistics need only each arm's moments of the units' sums (:class:`Moments`: the number of units
and the sums of y, x, y^2, x^2 and x y), kept exactly (integers: the values are 0/1 and counts), so the
same :func:`partial_sums` runs on a whole log in memory, on each bucket of whole sessions on Spark
(:func:`irspec_online.spark.unit_sums`) and on each partition of a streamed log
(:mod:`irspec_online.streaming`), and every path gives the same numbers to the bit, whatever the order
in which units arrive.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from irspec import EvaluationError, InputError, InputTable, plugin_api
from irspec.plugin_api import quote
from irspec_online.kernels import group_seconds
from irspec_online.records import as_float, exact_sum  # exact_sum: defined there, named here still

__all__ = [
    "ABComparison",
    "ABTest",
    "Design",
    "Moments",
    "SampleRatio",
    "add_moments",
    "analyse",
    "arm_moments",
    "combine",
    "exact_sum",
    "partial_sums",
]

UNITS = ("user", "session", "query")
CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")
FAMILIES = ("all", "per-metric")
KEYS = ("baseline", "unit", "arm", "user", "split", "confidence", "correction", "family", "srm_alpha")


@dataclass(frozen=True)
class Design:
    """An A/B test's settings (a plan's ``ab:`` section), defaults filled in.

    ``baseline`` is the control arm's name; ``unit`` the unit of randomisation (``user``, ``session`` or
    ``query``: a query issue); ``arm`` and ``user`` the records' keys (columns) holding each record's arm
    and user; ``split`` the expected share of units per arm (``{arm: weight}``, normalised; default equal);
    ``confidence`` of the intervals; ``correction`` (``holm``, ``bonferroni``, ``bh``, ``by``, ``none``) over
    the ``family`` (``all`` comparisons of the test, or ``per-metric``); ``srm_alpha`` the p-value under which
    the units per arm are a sample-ratio mismatch.
    """

    baseline: str
    unit: str = "user"
    arm: str = "arm"
    user: str = "user"
    split: Mapping[str, float] | None = None
    confidence: float = 0.95
    correction: str = "holm"
    family: str = "all"
    srm_alpha: float = 0.001

    def __post_init__(self) -> None:
        for name in ("baseline", "arm", "user"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise EvaluationError(f"ab.{name} must be a non-empty string, not {getattr(self, name)!r}")
        _choice("unit", self.unit, UNITS)
        _choice("correction", self.correction, CORRECTIONS)
        _choice("family", self.family, FAMILIES)
        for name in ("confidence", "srm_alpha"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
                raise EvaluationError(f"ab.{name} must be a number strictly between 0 and 1, not {value!r}")
        if self.split is not None:
            if not isinstance(self.split, Mapping) or len(self.split) < 2:
                raise EvaluationError(
                    f"ab.split must map two or more arms to their weights, not {self.split!r}"
                )
            for arm, w in self.split.items():
                if isinstance(w, bool) or not isinstance(w, numbers.Real) or not 0 < as_float(w) < math.inf:
                    raise EvaluationError(
                        f"ab.split: the weight of arm {quote(arm)} must be a positive number, not {quote(w)}"
                    )
            object.__setattr__(self, "split", {str(a): float(w) for a, w in self.split.items()})

    @classmethod
    def of(cls, options: Mapping[str, Any] | Design) -> Design:
        """A design from a plan's ``ab:`` mapping (an unknown key is a :class:`~irspec.EvaluationError`)."""
        if isinstance(options, Design):
            return options
        unknown = sorted(set(options) - set(KEYS))
        if unknown:
            raise EvaluationError(f"ab: unknown setting {unknown[0]!r} (the settings are {', '.join(KEYS)})")
        if "baseline" not in options:
            raise EvaluationError("ab: give the baseline (control) arm, such as baseline: control")
        return cls(**options)

    @property
    def fields(self) -> dict[str, str]:
        """The records' keys read for the test, by role: the arm's, and the user's when it is the unit."""
        return {"arm": self.arm, "user": self.user} if self.unit == "user" else {"arm": self.arm}

    def as_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for JSON)."""
        return {**asdict(self), "split": dict(self.split) if self.split else None}

    def compare(
        self, log: Any, metrics: Sequence[Any], values: np.ndarray
    ) -> tuple[tuple[InputTable, ...], tuple[str, ...]]:
        """The test of the arms of ``log`` (an :class:`~irspec_online.records.InteractionLog` read whole
        with this design) from each metric's per-row ``values``: its tables and warnings, which
        :meth:`InteractionLog.compare <irspec_online.records.InteractionLog.compare>` returns."""
        test = analyse(combine([partial_sums(log, metrics, values, self)], log.source), metrics, self)
        return test.tables(), test.warnings


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise EvaluationError(f"ab.{name} must be one of {', '.join(allowed)}, not {value!r}")


# --------------------------------------------------------------------------------------------------
# The units' sums


def check_metrics(metrics: Sequence[Any]) -> None:
    """Refuse a metric that depends on a time unit's rows (``QueriesPer(hour)``): no arm's unit holds it."""
    for m in metrics:
        if group_seconds(m) is not None:
            raise EvaluationError(
                f"{m} counts the queries of a time unit, which no arm owns: an A/B test cannot compare it"
            )


def partial_sums(log: Any, metrics: Sequence[Any], values: np.ndarray, design: Design) -> pl.DataFrame:
    """Per (unit, arm) of the rows of ``log`` (an :class:`~irspec_online.records.InteractionLog` holding whole
    sessions), each metric's numerator ``n{j}`` (the sum of its values) and denominator ``d{j}`` (its rows
    with a value); ``values`` holds one column per metric, one row per log row.

    A session whose rows name two arms (or, with users as the unit, two users) is an
    :class:`~irspec.InputError`: a session metric's value could not be given to one unit. With query
    issues as the unit and no session metric, a session may span arms.
    """
    check_metrics(metrics)
    arm = pl.Series("arm", log.labels["arm"], dtype=pl.String)
    if design.unit == "query":
        unit = pl.Series("unit", log.ids, dtype=pl.String)
    elif design.unit == "session":
        unit = pl.Series("unit", log.sessions, dtype=pl.String).gather(log.session)
    else:
        unit = pl.Series("unit", log.labels["user"], dtype=pl.String)
    session = pl.Series("session", log.session)
    frame = pl.DataFrame([session, unit, arm])
    # A session metric's value (NaN on all but a session's first row) belongs to the whole session, so
    # the session must be in one arm; with query issues as units and row metrics only, it need not be.
    if design.unit != "query" or np.isnan(values).any():
        _one_per_session(frame, log, "arm", design.arm)
    if design.unit == "user":
        _one_per_session(frame, log, "unit", design.user)
    sums = {}
    for j in range(len(metrics)):
        column = values[:, j]
        defined = ~np.isnan(column)
        sums[f"n{j}"] = np.where(defined, column, 0.0)
        sums[f"d{j}"] = defined.astype(np.float64)
    frame = pl.DataFrame([unit, arm]).with_columns(**{k: pl.Series(v) for k, v in sums.items()})
    return frame.group_by("unit", "arm").agg(pl.all().sum())


def _one_per_session(frame: pl.DataFrame, log: Any, column: str, key: str) -> None:
    mixed = frame.group_by("session").agg(
        pl.col(column).n_unique().alias("k"), pl.col(column).unique().sort().alias("v")
    )
    bad = mixed.filter(pl.col("k") > 1).sort("session")
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(f"session {log.sessions[row['session']]!r} has records of two {key} values ({row['v'][0]!r} and "
                         f"{row['v'][1]!r}); an A/B test needs each session in one", log.source)  # fmt: skip


def combine(parts: Iterable[pl.DataFrame], where: str) -> pl.DataFrame:
    """The units' sums from partial sums (of batches, sessions or Spark partitions), one row per unit,
    sorted by unit id: the same rows in the same order whatever way the log was cut. A unit in two arms
    is an :class:`~irspec.InputError`."""
    frames = [p for p in parts if p.height]
    if not frames:
        raise InputError("the log has no records", where)
    partial = pl.concat(frames)
    sums = partial.group_by("unit", "arm").agg(pl.exclude("unit", "arm").sum())
    arms = sums.group_by("unit").agg(pl.col("arm").n_unique().alias("k"), pl.col("arm").sort().alias("arms"))
    bad = arms.filter(pl.col("k") > 1).sort("unit")
    if bad.height:
        unit, names = bad.row(0)[0], bad.row(0)[2]
        raise InputError(
            f"unit {unit!r} is in two arms ({names[0]!r} and {names[1]!r}): units must be randomised to one arm",
            where,
        )
    return sums.sort("unit")


# --------------------------------------------------------------------------------------------------
# The statistics


@dataclass(frozen=True)
class ABComparison:
    """One metric compared between arm ``a`` and the baseline arm ``b``, on units of randomisation.

    ``mean_a``/``mean_b`` are the arms' values (ratios of the means of the units' sums), ``difference``
    ``mean_a - mean_b`` with its interval ``ci_low``..``ci_high``, ``relative`` ``mean_a / mean_b - 1``
    with its delta-method interval; ``test`` is ``welch`` (a per-unit mean: Welch's t, ``df`` its
    Welch-Satterthwaite degrees of freedom) or ``delta`` (a ratio: the delta method, normal ``statistic``,
    ``df`` None). ``p_adjusted`` is ``p_value`` after ``correction`` over ``family`` (``family_size``
    comparisons). Undefined numbers are None.
    """

    metric: str
    a: str
    b: str
    unit: str
    test: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    relative: float | None
    relative_ci_low: float | None
    relative_ci_high: float | None
    confidence: float
    statistic: float | None
    df: float | None
    p_value: float
    p_adjusted: float = math.nan
    correction: str = "holm"
    family: str = "all"
    family_size: int = 1

    def as_dict(self) -> dict[str, Any]:
        """All fields as a plain, JSON-serialisable dict."""
        return asdict(self)


@dataclass(frozen=True)
class SampleRatio:
    """The units per arm against the expected split: Pearson's chi-square goodness of fit (``statistic``,
    ``df`` = arms - 1, ``p_value``); ``mismatch`` when ``p_value < alpha``."""

    arms: tuple[str, ...]
    units: tuple[int, ...]
    expected: tuple[float, ...]
    statistic: float
    df: int
    p_value: float
    alpha: float

    @property
    def mismatch(self) -> bool:
        """Whether the units per arm are unlikely under the expected split."""
        return self.p_value < self.alpha

    def warning(self) -> str | None:
        """The warning every output shows on a mismatch, else None."""
        if not self.mismatch:
            return None
        counts = ", ".join(f"{a} {n}" for a, n in zip(self.arms, self.units, strict=True))
        return (f"sample ratio mismatch: units per arm {counts} against the expected split (chi-square {self.statistic:.4g}, "
                f"df {self.df}, p = {self.p_value:.3g} < {self.alpha}): the assignment or the logging is broken, the "
                "comparison is not to be trusted")  # fmt: skip


@dataclass(frozen=True)
class ABTest:
    """An A/B test's outcome: its design, the comparisons (each treatment arm against the baseline on
    each metric) and the sample-ratio check."""

    design: Design
    comparisons: tuple[ABComparison, ...]
    sample_ratio: SampleRatio
    warnings: tuple[str, ...] = field(default=())

    def tables(self) -> tuple[InputTable, ...]:
        """The test as report tables: one per treatment arm, then the sample-ratio check."""
        return (*_comparison_tables(self), _sample_ratio_table(self.sample_ratio, self.design))

    def as_dict(self) -> dict[str, Any]:
        """The test as JSON-ready data."""
        s = self.sample_ratio
        return {"design": self.design.as_dict(), "comparisons": [c.as_dict() for c in self.comparisons],
                "sample_ratio": {**asdict(s), "mismatch": s.mismatch}, "warnings": list(self.warnings)}  # fmt: skip


@dataclass(frozen=True)
class Moments:
    """An arm's units, for one metric, as exact sums: ``n`` units, the sums of their numerators ``y`` and
    denominators ``x``, of ``y^2``, ``x^2`` and ``x y``. Integers (or fractions) with no rounding, so
    moments added batch by batch, partition by partition or on Spark are the same numbers in any order,
    and everything the tests need follows from them (:func:`ratio_moments`)."""

    n: int
    sy: Fraction | int
    sx: Fraction | int
    syy: Fraction | int
    sxx: Fraction | int
    sxy: Fraction | int

    @classmethod
    def of(cls, num: np.ndarray, den: np.ndarray) -> Moments:
        """The moments of units with numerators ``num`` and denominators ``den``."""
        return cls(
            len(num),
            exact_sum(num),
            exact_sum(den),
            exact_sum(num, num),
            exact_sum(den, den),
            exact_sum(num, den),
        )

    def __add__(self, other: Moments) -> Moments:
        return Moments(
            *(getattr(self, f) + getattr(other, f) for f in ("n", "sy", "sx", "syy", "sxx", "sxy"))
        )

    @property
    def per_unit(self) -> bool:
        """Whether every denominator is 1 (a per-unit mean): sum x = n and sum x^2 = n for counts x >= 0."""
        return self.sx == self.n and self.sxx == self.n


def arm_moments(sums: pl.DataFrame, count: int) -> dict[str, list[Moments]]:
    """Per arm, the :class:`Moments` of each of ``count`` metrics, from units' sums (:func:`combine`)."""
    out = {}
    for (arm,), part in sums.partition_by("arm", as_dict=True, maintain_order=True).items():
        out[arm] = [Moments.of(part[f"n{j}"].to_numpy(), part[f"d{j}"].to_numpy()) for j in range(count)]
    return out


def add_moments(total: dict[str, list[Moments]], more: dict[str, list[Moments]]) -> dict[str, list[Moments]]:
    """Moments of two disjoint sets of units (two partitions of a log), added arm by arm."""
    out = dict(total)
    for arm, ms in more.items():
        out[arm] = [a + b for a, b in zip(out[arm], ms, strict=True)] if arm in out else list(ms)
    return out


def analyse(
    moments: dict[str, list[Moments]] | pl.DataFrame, metrics: Sequence[Any], design: Design
) -> ABTest:
    """Compare every arm with ``design.baseline`` on every metric, from each arm's :class:`Moments` (or
    the units' sums of :func:`combine`); the p-values adjusted over the design's family, and the sample
    ratio checked."""
    if isinstance(moments, pl.DataFrame):
        moments = arm_moments(moments, len(metrics))
    arms = sorted(moments)
    if design.baseline not in arms:
        raise EvaluationError(
            f"ab.baseline {design.baseline!r} is not an arm of the log (its arms are {', '.join(arms)})"
        )
    if len(arms) < 2:
        raise EvaluationError(f"the log has one arm only ({arms[0]}): an A/B test needs two or more")
    raw = [
        _compare(str(m), moments[a][j], moments[design.baseline][j], a, design)
        for a in arms if a != design.baseline for j, m in enumerate(metrics)
    ]  # fmt: skip
    ratio = sample_ratio(arms, [moments[a][0].n for a in arms], design)
    warning = ratio.warning()
    return ABTest(design, _adjusted(raw, design), ratio, (warning,) if warning else ())


def _adjusted(raw: list[ABComparison], design: Design) -> tuple[ABComparison, ...]:
    families: dict[str, list[int]] = {}
    for i, c in enumerate(raw):
        families.setdefault("all" if design.family == "all" else c.metric, []).append(i)
    out = list(raw)
    for members in families.values():
        # plugin_api.adjust loads scipy on first use: reading a log, with no A/B test, never does
        adjusted = plugin_api.adjust([raw[i].p_value for i in members], design.correction)
        for i, p in zip(members, adjusted, strict=True):
            out[i] = replace(raw[i], p_adjusted=float(p), correction=design.correction, family=design.family,
                             family_size=len(members))  # fmt: skip
    return tuple(out)


def ratio_moments(m: Moments, where: str = "") -> tuple[float, float, int]:
    """The ratio of means ``r = mean(y) / mean(x)`` of ``n`` units and its delta-method variance
    ``(s_yy - 2 r s_xy + r^2 s_xx) / (n mean(x)^2)`` with the sample (co)variances (ddof 1;
    Deng et al. 2018, section 3), computed exactly from the :class:`Moments` and rounded once. With every
    denominator 1 the variance is ``s_yy / n``, the variance of a mean."""
    n = m.n
    if n < 2:
        raise EvaluationError(f"{where}: an arm needs two or more units to estimate a variance, it has {n}")
    if m.sx == 0:
        raise EvaluationError(f"{where}: the metric has no value in any unit of an arm")
    r = Fraction(m.sy) / Fraction(m.sx)
    s_yy, s_xx, s_xy = (
        Fraction(n * q - a * b, n * (n - 1))
        for q, a, b in ((m.syy, m.sy, m.sy), (m.sxx, m.sx, m.sx), (m.sxy, m.sy, m.sx))
    )
    mean_x = Fraction(m.sx) / n
    variance = (s_yy - 2 * r * s_xy + r * r * s_xx) / (n * mean_x * mean_x)
    return float(r), float(max(variance, Fraction(0))), n


def _compare(metric: str, arm: Moments, base: Moments, name: str, design: Design) -> ABComparison:
    # scipy.special's functions, which scipy.stats' norm and t call (the same bits), without importing
    # scipy.stats: several times as slow to import, and paid by every `irspec online` with an A/B test
    from scipy.special import ndtr, ndtri, stdtr, stdtrit

    where = f"{metric}, {name} against {design.baseline}"
    (ra, va, na), (rb, vb, nb) = ratio_moments(arm, where), ratio_moments(base, where)
    per_unit = arm.per_unit and base.per_unit
    diff, se = ra - rb, math.sqrt(va + vb)
    level = 1 - (1 - design.confidence) / 2
    # Welch: the variance of each mean is s^2/n, its degrees of freedom Welch-Satterthwaite's; else normal
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1)) if per_unit and se > 0 else None
    statistic = diff / se if se > 0 else None
    if statistic is None:
        p = 1.0 if diff == 0 else 0.0
    else:
        tail = stdtr(df, -abs(statistic)) if df is not None else ndtr(-abs(statistic))
        p = float(min(1.0, 2 * tail))
    half = float(stdtrit(df, level) if df is not None else ndtri(level)) * se
    rel = rel_low = rel_high = None
    if rb != 0:
        rel = ra / rb - 1
        rel_half = float(ndtri(level)) * math.sqrt(va / rb**2 + ra**2 * vb / rb**4)
        rel_low, rel_high = rel - rel_half, rel + rel_half
    return ABComparison(
        metric, name, design.baseline, design.unit, "welch" if per_unit else "delta", na, nb, ra, rb, diff,
        diff - half, diff + half, rel, rel_low, rel_high, design.confidence, statistic, df, p,
    )  # fmt: skip


def sample_ratio(arms: Sequence[str], units: Sequence[int], design: Design) -> SampleRatio:
    """Pearson's chi-square goodness of fit of the units per arm against ``design.split`` (equal shares by
    default): ``sum((O - E)^2 / E)`` with ``E = N * share``, ``arms - 1`` degrees of freedom."""
    from scipy.special import chdtrc  # chi2.sf's function (the same bits for df >= 1: two arms or more)

    split = design.split or dict.fromkeys(arms, 1.0)
    extra = sorted(set(arms) - set(split))
    if extra:
        raise EvaluationError(
            f"ab.split has no weight for arm {extra[0]!r} of the log (its arms: {', '.join(sorted(split))})"
        )
    names = sorted(split)
    counts = np.array([dict(zip(arms, units, strict=True)).get(a, 0) for a in names], dtype=np.float64)
    weights = np.array([split[a] for a in names])
    expected = counts.sum() * weights / weights.sum()
    statistic = float(np.sum((counts - expected) ** 2 / expected))
    df = len(names) - 1
    return SampleRatio(tuple(names), tuple(int(c) for c in counts), tuple(float(e) for e in expected), statistic, df,
                       float(chdtrc(df, statistic)), design.srm_alpha)  # fmt: skip


# --------------------------------------------------------------------------------------------------
# Report tables


def _comparison_tables(test: ABTest) -> list[InputTable]:
    d = test.design
    arms = sorted({c.a for c in test.comparisons})
    level = f"{d.confidence:.0%}"
    family = "all the test's comparisons" if d.family == "all" else "each metric's comparisons"
    found = []
    for arm in arms:
        rows = tuple(
            (c.metric, c.difference, c.ci_low, c.ci_high, c.mean_b, c.mean_a, _none(c.relative), _none(c.relative_ci_low),
             _none(c.relative_ci_high), c.test, c.n_b, c.n_a, c.p_value, c.p_adjusted)
            for c in test.comparisons if c.a == arm
        )  # fmt: skip
        mismatch = " SAMPLE RATIO MISMATCH: see the warning." if test.sample_ratio.mismatch else ""
        found.append(InputTable(
            f"A/B test: {arm} against {d.baseline} (unit: {d.unit})",
            ("metric", "difference", f"{level} CI low", f"{level} CI high", d.baseline, arm, "relative",
             "rel. CI low", "rel. CI high", "test", f"units {d.baseline}", f"units {arm}", "p", "p adj"),
            rows,
            description=f"Each metric of arm {arm} minus arm {d.baseline}, on the units of randomisation ({d.unit}s): "
            "welch = Welch's t-test on the units' values, delta = the delta method for a ratio of per-unit sums "
            f"(Deng et al. 2018); relative = {arm} / {d.baseline} - 1; p adj: {d.correction} over {family}.{mismatch}",
        ))  # fmt: skip
    return found


def _none(value: float | None) -> float:
    return math.nan if value is None else value


def _sample_ratio_table(s: SampleRatio, design: Design) -> InputTable:
    total = sum(s.units)
    verdict = f"MISMATCH (p = {s.p_value:.3g} < {s.alpha})" if s.mismatch else f"ok (p = {s.p_value:.3g})"
    rows = tuple((a, n, e, n / total, e / total) for a, n, e in zip(s.arms, s.units, s.expected, strict=True))
    return InputTable(
        f"Sample ratio: {verdict}",
        ("arm", "units", "expected units", "share", "expected share"),
        rows,
        description=f"Units of randomisation ({design.unit}s) per arm against the expected split: chi-square "
        f"{s.statistic:.4g}, df {s.df}, p {s.p_value:.3g}; a p under {s.alpha} is a sample-ratio mismatch.",
    )
