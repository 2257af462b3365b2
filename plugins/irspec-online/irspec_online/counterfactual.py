"""Counterfactual estimates: a new ranking's click metrics estimated from the log of another ranking, by
inverse propensity scoring (IPS).

A click on a document the log shows at rank ``r`` is evidence about the rank ``r'`` the new ranking gives
it. Two kinds of propensity make the evidence unbiased:

* **Examination** (position bias, Joachims, Swaminathan and Schnabel, "Unbiased learning-to-rank with
  biased feedback", WSDM 2017): users examine rank ``r`` with probability ``theta_r`` and click what they
  examine with a probability of the document alone (the position-based model). A click at ``r`` then
  stands for ``theta_r'/theta_r`` clicks at ``r'``: per query issue, ``IPS = sum over clicks of
  lambda(r') theta_r' / theta_r``, whose mean is unbiased for the new ranking's expected ``sum_r'
  lambda(r') P(click at r')`` over the documents the log shows (a document the new ranking places in its
  top that the log never shows is never clicked: the share of such places is warned about). The
  ``theta`` come from a position-based model fitted to the log (``irspec clickmodel fit --model pbm``)
  or from a swap experiment (``--model swap``: Joachims et al.'s swap interventions, section 5 of the
  paper), and only their ratios matter.
* **A randomised logger** (result randomisation; Li, Kim and Zitouni, "Toward predicting the outcome of
  an A/B experiment for search relevance", WSDM 2015): the logger put the document of each slot ``k``
  there with a known probability ``p_k`` (the record's ``propensities``). A click at ``k`` counts when
  the new ranking puts that document at ``k`` too, weighted ``1/p_k`` (the independent-position IPS of
  ranking off-policy evaluation); no position-bias model is needed.

The estimators (``IPS``, ``ClippedIPS``, ``SNIPS``, each of a measure ``lambda``):

* ``ctr@k``: clicks on the new ranking's top ``k`` per query issue (for one click per issue at most,
  its click-through rate at ``k``); ``rr@k``: the reciprocal rank of the clicks, ``sum 1/r'``;
  ``click@k``: the clicks at rank ``k`` exactly.
* ``IPS``: the mean of the per-issue sums above; its variance the sample variance over the query issues
  (taken as independent), a normal interval.
* ``ClippedIPS``: each weight at most ``clip`` (default 10): less variance, a downward bias where the
  weights were larger (Strehl et al. 2010; Joachims et al. clip the propensities likewise).
* ``SNIPS``, self-normalised (Swaminathan and Joachims, "The self-normalized estimator for counterfactual
  learning", NeurIPS 2015), for a randomised logger: per rank ``k``, the weighted clicks divided by the
  sum of the weights of the query issues where the new ranking agrees with the log at ``k`` (whose
  expectation is 1: the control variate), ``sum_k lambda(k) (sum_i c_ik w_ik) / (sum_i w_ik)``;
  its variance by the delta method. With examination propensities alone no such control variate is
  observable (whether a result was examined is not logged), so SNIPS needs the logger's propensities.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from irspec import EvaluationError, InputError, InputTable
from irspec.plugin_api import quote
from irspec_online.clickmodels import json_data, load, not_a_number
from irspec_online.rankings import rankings, run_name
from irspec_online.records import MIN_PROPENSITY, Ranker, summed

__all__ = [
    "ESTIMATORS",
    "MEASURES",
    "Estimate",
    "Estimating",
    "Propensities",
    "Tally",
    "estimates_table",
    "is_counterfactual",
    "ranker_of",
    "values",
]

MEASURES = ("ctr", "rr", "click")
ESTIMATORS = ("IPS", "ClippedIPS", "SNIPS")


def ranker_of(run: Any, depth: int = 1000) -> Ranker:
    """The ranking to estimate (a run: TREC text, Parquet, dicts, a frame; ``{query: [doc, ...]}``), each
    query's documents with their 1-based ranks, for the log's reader (:func:`irspec_online.records.summarise`)."""
    return Ranker({q: {d: r + 1 for r, d in enumerate(docs)} for q, docs in rankings(run, depth).items()})


def is_counterfactual(metric: Any) -> bool:
    """Whether a bound metric is a counterfactual estimate (``IPS``, ``ClippedIPS``, ``SNIPS``)."""
    return metric.definition.name in ESTIMATORS


@dataclass(frozen=True)
class Estimating:
    """What a log is read to estimate (a plan's ``online: {counterfactual: ...}``): the ranking's ``name``
    and its ranks (``ranker``), the examination propensities (``theta``, or None: a randomised logger's
    only) and the intervals' ``confidence``."""

    name: str
    ranker: Ranker
    theta: Propensities | None
    confidence: float = 0.95

    @classmethod
    def of(cls, settings: Any) -> Estimating | None:
        """From :class:`irspec_online.settings.Counterfactual` settings (None: nothing to estimate)."""
        if settings is None:
            return None
        run = settings.run
        name = run_name(run, "new") if isinstance(run, str) else "new"
        return cls(name, ranker_of(run), Propensities.of(settings.propensity), settings.confidence)


@dataclass(frozen=True)
class Propensities:
    """The examination probability of each rank, rank 1 first (``theta``); only ratios matter. NaN at a
    rank is unknown (a click model's, fitted to a log that never showed that rank): as past the list's end,
    a click there, or moved there, is left out and counted ``beyond``."""

    theta: np.ndarray
    source: str = "<propensities>"

    @classmethod
    def of(cls, given: Any) -> Propensities | None:
        """From a list (rank 1 first), a click model's JSON file (``irspec clickmodel fit``: a PBM's or a swap
        experiment's exam, ``null`` where unknown; a UBM's with no click above), ``{"propensities": [...]}``,
        or None (none)."""
        if given is None or isinstance(given, Propensities):
            return given
        data, where = json_data(given, "propensities' JSON")
        if isinstance(data, Mapping) and "params" in data:
            model = load(given if isinstance(given, str) else data)
            theta = getattr(model, "propensities", None)
            if theta is None:
                raise InputError(
                    f"a {model.name} model has no examination per rank: fit a pbm (or a swap experiment)",
                    where,
                )
            theta = np.asarray(theta, dtype=np.float64)
            low = theta < MIN_PROPENSITY  # NaN, unknown, is not low: its clicks are left out (values)
            if low.any():
                ranks = ", ".join(str(r) for r in (np.flatnonzero(low) + 1)[:5].tolist())
                raise InputError(
                    f"the {model.name} model's examination at rank {ranks} is below {MIN_PROPENSITY:g} (0: no "
                    "click there in the log it was fitted to): a click there cannot be weighed; fit it to a log "
                    "with clicks at every rank",
                    where,
                )
            return cls(theta, where)
        if isinstance(data, Mapping):
            data = data.get("propensities")
        found = not_a_number(data) if isinstance(data, list) else None
        if found is not None:
            raise InputError(
                f"propensities must be a list of probabilities, rank 1 first, got {quote(found[0])} in it",
                where,
            )
        try:
            theta = np.array(data, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("propensities must be a list of probabilities, rank 1 first", where) from None
        if theta.ndim != 1 or len(theta) == 0 or not ((theta >= MIN_PROPENSITY) & (theta <= 1)).all():
            wrong = np.flatnonzero(~((theta >= MIN_PROPENSITY) & (theta <= 1))) if theta.ndim == 1 else []
            at = f", got {quote(float(theta[wrong[0]]))} at rank {wrong[0] + 1}" if len(wrong) else ""
            raise InputError(
                f"propensities must be a list of probabilities from {MIN_PROPENSITY:g} to 1, rank 1 first{at}",
                where,
            )
        return cls(theta, where)


def _lambda(measure: str, k: int, ranks: np.ndarray) -> np.ndarray:
    """The measure's weight of a click at each (new) rank (0: outside it)."""
    inside = (ranks >= 1) & (ranks <= k)
    if measure == "rr":
        return np.where(inside, 1.0 / np.maximum(ranks, 1), 0.0)
    if measure == "click":
        return (ranks == k).astype(np.float64)
    return inside.astype(np.float64)


def values(log: Any, metric: Any, theta: Propensities | None) -> tuple[np.ndarray, dict[str, int]]:
    """Per row of ``log`` (read with the ranking to estimate), the estimator's term for the metric: NaN for
    a row the ranking does not rank, or one with a click no propensity weighs (SNIPS: a row of no
    randomised logger); and what was found on the way (``unranked`` rows, ``clipped`` weights of clicks the
    estimate reads, ``beyond`` clicks outside the propensities' ranks), for the table."""
    estimator, measure, k = metric.definition.name, metric.get("measure"), metric.get("k")
    found = {"unranked": int((log.ranked == 0).sum()), "clipped": 0, "beyond": 0}
    if estimator == "SNIPS":
        _randomised(metric, int((log.ranked == 2).sum()), int((log.ranked == 1).sum()))
        y, x, rows = _snips_parts(log, k)
        mean_x = x.mean(axis=0) if len(x) else np.zeros(k)
        scale = np.where(
            mean_x > 0, _lambda(measure, k, np.arange(1, k + 1)) / np.where(mean_x > 0, mean_x, 1.0), 0.0
        )
        out = np.full(len(log), np.nan)
        out[rows] = y @ scale
        return out, found
    clicks = log.clicks
    random = ~np.isnan(clicks.logging_p)  # a randomised logger's click: it counts where the rankings agree
    w_random = np.where(clicks.new_rank == clicks.rank, 1.0 / np.where(random, clicks.logging_p, 1.0), 0.0)
    if theta is not None:  # examination: a click at r stands for theta_r' / theta_r clicks at r'
        t = theta.theta
        # a rank past the list's end, or NaN there: no examination known (index len(t): past the end)
        unknown = np.append(np.isnan(t), True)
        at_rank = np.minimum(clicks.rank, len(t) + 1) - 1
        at_new = np.minimum(clicks.new_rank, len(t) + 1) - 1
        beyond = unknown[at_rank] | ((clicks.new_rank >= 1) & unknown[at_new])
        needed = (clicks.new_rank >= 1) & (
            _lambda(measure, k, clicks.new_rank) > 0
        )  # clicks the measure reads
        found["beyond"] = int((beyond & ~random & needed).sum())
        ratio = t[np.clip(clicks.new_rank - 1, 0, len(t) - 1)] / t[np.clip(clicks.rank - 1, 0, len(t) - 1)]
        w_exam = np.where((clicks.new_rank >= 1) & ~beyond, ratio, 0.0)
    elif (log.ranked == 1).any():
        raise EvaluationError(
            f"{metric}: the log's records have no logger's propensities: give the examination propensities (irspec "
            "clickmodel fit --model pbm, or swap on a swap experiment; --propensity; online: counterfactual: propensity)"
        )
    else:
        w_exam = np.full(len(clicks.rank), np.nan)
    weight = np.where(random, w_random, w_exam)
    at = np.where(random, clicks.rank, clicks.new_rank)
    unweighed = clicks.per_row(np.isnan(weight) * 1.0) > 0
    kept = (log.ranked > 0) & ~unweighed
    read = _lambda(measure, k, at)
    if estimator == "ClippedIPS":
        # only the clicks the estimate reads: one the measure weighs 0 (outside @k) or of a row left out
        # changes nothing whatever its weight
        found["clipped"] = int(((weight > metric.get("clip")) & (read > 0) & kept[clicks.row]).sum())
        weight = np.minimum(weight, metric.get("clip"))
    term = clicks.per_row(np.where(np.isnan(weight), 0.0, weight) * read)
    return np.where(kept, term, np.nan), found


def support(log: Any, measure: str, k: int) -> np.ndarray:
    """Per row whose query the new ranking ranks, the share of the places the measure reads (its top ``k``;
    ``click``: rank ``k``) whose document the row shows: where it does not, no click can stand for the new
    ranking's, and IPS misses them (SNIPS borrows them from the rows where it shows them). NaN elsewhere."""
    ranks = log.shown_new.rank
    places = (ranks == k) if measure == "click" else (ranks <= k)
    shown = log.shown_new.per_row(places * 1.0)
    needed = np.minimum(k, log.new_length) if measure != "click" else (log.new_length >= k) * 1
    return np.where((log.ranked > 0) & (needed > 0), shown / np.maximum(needed, 1), np.nan)


def _randomised(metric: Any, randomised: int, deterministic: int) -> None:
    """Refuse SNIPS of a log with no randomised logger's records and some of a deterministic one."""
    if not randomised and deterministic:
        raise EvaluationError(
            f"{metric} needs a randomised logger's propensities (the records' propensities): with examination "
            "propensities alone no control variate is observable; estimate IPS or ClippedIPS"
        )


def _snips_parts(log: Any, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of a randomised logger whose query the new ranking ranks (a boolean mask), and per such
    row (``n x k``) the weighted clicks ``y`` at each rank where the new ranking agrees with the log and
    the weights ``x`` there (the control variate, whose expectation is 1)."""
    clicks, matched = log.clicks, log.matched
    rows = log.ranked == 2
    index = np.cumsum(rows) - 1
    y, x = np.zeros((int(rows.sum()), k)), np.zeros((int(rows.sum()), k))
    keep = rows[matched.row] & (matched.rank <= k)
    x[index[matched.row[keep]], matched.rank[keep] - 1] = matched.weight[keep]
    agree = (
        (clicks.new_rank == clicks.rank) & ~np.isnan(clicks.logging_p) & (clicks.rank <= k) & rows[clicks.row]
    )
    y[index[clicks.row[agree]], clicks.rank[agree] - 1] = 1.0 / clicks.logging_p[agree]
    return y, x, rows


@dataclass(frozen=True)
class Estimate:
    """A counterfactual estimate: the ``metric``, its ``value`` over ``rows`` query issues, its standard
    error and interval at ``confidence``, and what it rests on: ``support``, the share of the places the
    measure reads whose document the log shows (:func:`support`: below 1, IPS misses the clicks the others
    would get, SNIPS borrows them from where they were shown); ``unranked`` rows whose query the new ranking
    lacks, ``clipped`` weights (of clicks the estimate reads), ``beyond`` clicks outside the propensities' ranks."""

    metric: str
    value: float
    se: float
    ci_low: float
    ci_high: float
    rows: int
    support: float
    unranked: int
    clipped: int
    beyond: int
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


class Tally:
    """What an estimate adds up over the rows, part by part (the whole log, or a streamed pass's
    partitions): for IPS and ClippedIPS the sum and sum of squares of the terms; for SNIPS, per rank,
    the sums of the weighted clicks ``Y`` and weights ``X`` and every product of them (k x k), whose delta
    method gives the variance; a few numbers per metric, never a row.

    The IPS terms' sum, whose mean is the estimate, is added as the metric's mean is (``exact``:
    :func:`~irspec_online.records.summed`): a log given whole in its rows' order, as
    ``irspec.Result.aggregate`` adds them, so that the table's estimate is the mean beside it to the bit;
    a log given in parts (``exact=True``: a streamed pass's partitions, Spark's) exactly, the same however
    it was cut."""

    def __init__(
        self, metric: Any, theta: Propensities | None, confidence: float, exact: bool = False
    ) -> None:
        self.metric, self.theta, self.confidence = metric, theta, confidence
        self.exact = exact
        k = metric.get("k")
        self.n = 0
        self.sum: float | Fraction | int = 0.0
        self.squares = 0.0
        self.y, self.x = np.zeros(k), np.zeros(k)
        self.yy, self.xx, self.xy = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k))
        self.found = {"unranked": 0, "clipped": 0, "beyond": 0}
        self.deterministic = 0
        self.support = [0.0, 0]

    def add(self, log: Any) -> None:
        """Add a part of the log (read with the ranking to estimate)."""
        shown = support(log, self.metric.get("measure"), self.metric.get("k"))
        shown = shown[~np.isnan(shown)]
        self.support = [self.support[0] + float(shown.sum()), self.support[1] + len(shown)]
        if self.metric.definition.name != "SNIPS":
            terms, found = values(log, self.metric, self.theta)
            for key in self.found:
                self.found[key] += found[key]
            defined = terms[~np.isnan(terms)]
            self.n += len(defined)
            self.sum = summed(self.sum, defined, self.exact)
            self.squares += float((defined**2).sum())
            return
        y, x, rows = _snips_parts(log, self.metric.get("k"))
        self.found["unranked"] += int((log.ranked == 0).sum())
        self.deterministic += int((log.ranked == 1).sum())
        self.n += int(rows.sum())
        self.y += y.sum(axis=0)
        self.x += x.sum(axis=0)
        self.yy += y.T @ y
        self.xx += x.T @ x
        self.xy += y.T @ x

    _SUMS = ("n", "sum", "squares", "y", "x", "yy", "xx", "xy", "deterministic")

    def sums(self) -> dict[str, Any]:
        """What the tally has added up, as numbers, arrays and dicts of them that add (a Spark partition's
        part: :func:`irspec_online.spark.estimates` adds the parts up and :meth:`absorb` takes the total)."""
        return {**{k: getattr(self, k) for k in self._SUMS}, "found": dict(self.found),
                "support": tuple(self.support)}  # fmt: skip

    def absorb(self, sums: Mapping[str, Any]) -> None:
        """Add another tally's :meth:`sums` to this one."""
        for k in self._SUMS:
            setattr(self, k, getattr(self, k) + sums[k])
        for k, v in sums["found"].items():
            self.found[k] += v
        self.support = [self.support[0] + sums["support"][0], self.support[1] + sums["support"][1]]

    def estimate(self) -> Estimate:
        """The estimate, its standard error and interval."""
        from scipy.special import ndtri  # norm.ppf's function, without importing scipy.stats

        n = self.n
        if self.metric.definition.name != "SNIPS":
            value = float(self.sum) / n if n else math.nan
            variance = (self.squares - n * value * value) / (n - 1) / n if n > 1 else math.nan
        else:
            _randomised(self.metric, self.n, self.deterministic)
            value, variance = self._snips()
        se = math.sqrt(max(variance, 0.0)) if not math.isnan(variance) else math.nan
        z = float(ndtri(1 - (1 - self.confidence) / 2))
        covered = self.support[0] / self.support[1] if self.support[1] else math.nan
        return Estimate(str(self.metric), value, se, value - z * se, value + z * se, n, covered,
                        self.found["unranked"], self.found["clipped"], self.found["beyond"], self.confidence)  # fmt: skip

    def _snips(self) -> tuple[float, float]:
        """``sum_k lambda_k Y_k / X_k`` and its delta-method variance: the influence of a row is
        ``sum_k lambda_k (y_k - R_k x_k) / mean(x_k)``, whose variance follows from the sums of products."""
        n = self.n
        k = self.metric.get("k")
        lam = _lambda(self.metric.get("measure"), k, np.arange(1, k + 1))
        used = self.x > 0
        if n < 2 or not used.any():
            return math.nan, math.nan
        ratio = np.where(used, self.y / np.where(used, self.x, 1.0), 0.0)
        value = float((lam * ratio).sum())
        a = np.where(used, lam / np.where(used, self.x / n, 1.0), 0.0)  # d value / d mean(y_k)
        b = -a * ratio  # d value / d mean(x_k)
        # the influence's mean is 0; its second moment: E[(a.y + b.x)^2]
        second = (a @ self.yy @ a + 2 * a @ self.xy @ b + b @ self.xx @ b) / n
        mean = (a @ self.y + b @ self.x) / n
        return value, float((second - mean * mean) / (n - 1))

    @property
    def value(self) -> float:
        """The estimate (the mean a streamed pass reports)."""
        return self.estimate().value


COLUMNS = (
    "metric",
    "estimate",
    "SE",
    "CI low",
    "CI high",
    "query issues",
    "support",
    "unranked",
    "clipped",
    "beyond",
)


def estimates_table(estimates: Sequence[Estimate], run: str) -> InputTable:
    """The estimates as a report table, a row per metric."""
    level = f"{estimates[0].confidence:.0%}"
    return InputTable(
        f"Counterfactual: {run}",
        tuple(c.replace("CI", f"{level} CI") for c in COLUMNS),
        tuple(
            (e.metric, e.value, e.se, e.ci_low, e.ci_high, e.rows, e.support, e.unranked, e.clipped, e.beyond)
            for e in estimates
        ),
        description=f"The ranking {run} estimated from the log: the estimate per query issue, its standard error and "
        "normal interval (query issues taken as independent); support: the share of the places the measure reads "
        f"whose document the log shows (below 1, IPS misses what {run} would get there); query issues whose query it "
        "does not rank (left out), clicks the estimate reads whose weight was clipped, clicks at ranks the "
        "propensities do not cover (left out).",
    )
