"""How closely a reproduction came to the original (``irspec.reproduce``, ``irspec reproduce``).

Breuer et al., "How to Measure the Reproducibility of System-oriented IR Experiments" (SIGIR 2020),
and their ``repro_eval`` package, whose values these equal (``tests/test_reproduce.py``): an original
baseline and advanced run, and their reproductions,

- on the same qrels (*reproducibility* in the paper's and ``repro_eval``'s terms, its
  ``RpdEvaluator``): per run pair, the document orderings (Kendall's tau union, KTU, and rank-biased
  overlap, RBO, per topic and averaged: :mod:`irspec.stats.similarity`), the per-topic scores (RMSE,
  and RMSE normalised by its largest value for the original's scores, nRMSE) and the paired t-test's
  p-value; and the overall effects, the effect ratio ER and delta relative improvement ΔRI;
- on another collection's qrels (*replicability*, ``RplEvaluator``): the topics differ, so only the
  overall effects and the unpaired (Student's) t-test's p-value.

The readings the authors give: KTU and RBO near 1 (the same orderings), RMSE near 0 (the same
per-topic scores), ER near 1 (the same improvement of the advanced over the baseline run; below 1 a
smaller one, above 1 a larger one), ΔRI near 0 (the same relative improvement; above 0 a smaller one,
below 0 a larger one), and a large p-value (no significant difference between the original and the
reproduced scores). Where irspec departs from ``repro_eval`` (runs with different topics, depths) the
documentation's exactness page says so.

The per-topic scores are those of every query of the qrels: a query a run lacks scores 0 (trec_eval
``-c``, as ``repro_eval``'s evaluation through ir_measures scores it), and a run's queries that the
qrels lack are ignored. The document orderings are compared on the queries both runs of a pair rank;
a run's other queries are left out, and the result's warnings name them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import field, replace
from typing import Any

import numpy as np
from scipy.special import stdtr

from irspec.data import Qrels, Run, read_qrels, read_run
from irspec.errors import EvaluationError, InputError, IrspecWarning, quote
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import Options
from irspec.evaluation.evaluate import evaluate_many
from irspec.evaluation.evaluated import collect_warnings
from irspec.evaluation.means import aggregate_values
from irspec.evaluation.notes import first_few
from irspec.evaluation.result import Result
from irspec.evaluation.similarity import rankings, same_source_note, shared_queries
from irspec.frozen import frozen
from irspec.report import reproduce as rendering
from irspec.spec.registry import Metric
from irspec.stats.similarity import RBO_DEPTH, RBO_P, ktu, rbo

__all__ = ["MAX_DEPTH", "PairReproduction", "Reproduction", "reproduce"]

KINDS = ("reproducibility", "replicability")

MAX_DEPTH = 1_000_000
"""The deepest RBO and KTU cut a reproduction takes: RBO adds a weight per rank to the depth, past the
rankings' end too, so a depth of 10^12 ran for ever (repro_eval's is 1,000)."""


@frozen
class PairReproduction:
    """An original run against its reproduction (the baseline pair, or the advanced pair).

    ``query_ids`` are the topics both runs rank; ``ktu`` and ``rbo`` their per-topic values in that
    order (empty on another collection). ``rmse``, ``nrmse`` (None on another collection) and
    ``p_value`` by metric (canonical text).
    """

    role: str
    original: str
    reproduced: str
    query_ids: tuple[str, ...]
    ktu: np.ndarray = field(repr=False)
    rbo: np.ndarray = field(repr=False)
    rmse: dict[str, float] | None
    nrmse: dict[str, float] | None
    p_value: dict[str, float]

    @property
    def ktu_mean(self) -> float | None:
        """KTU averaged over the topics (NaN topics left out); None on another collection."""
        return _mean(self.ktu) if self.query_ids else None

    @property
    def rbo_mean(self) -> float | None:
        """RBO averaged over the topics; None on another collection."""
        return _mean(self.rbo) if self.query_ids else None


@frozen
class Reproduction:
    """The measures of one reproduction (see the module docstring): ``baseline`` and ``advanced``
    pairs, and per metric the effect ratio ``er`` and delta relative improvement ``delta_ri``.

    ``kind`` is ``"reproducibility"`` (the same qrels) or ``"replicability"`` (another collection's);
    ``rbo_p`` and ``depth`` RBO's persistence and depth (KTU's cut too). Print it, or render it with
    :meth:`render` (``text``, ``markdown``, ``latex``, ``json``, ``html``); :meth:`to_frame` gives the
    per-topic KTU and RBO.
    """

    kind: str
    metrics: tuple[str, ...]
    baseline: PairReproduction
    advanced: PairReproduction
    er: dict[str, float]
    delta_ri: dict[str, float]
    rbo_p: float = RBO_P
    depth: int = RBO_DEPTH
    warnings: tuple[str, ...] = ()

    @property
    def pairs(self) -> tuple[PairReproduction, PairReproduction]:
        """The baseline and the advanced pair."""
        return (self.baseline, self.advanced)

    def as_dict(self) -> dict[str, Any]:
        """The measures as plain data (JSON's shape; NaN as None)."""
        return rendering.reproduction_record(self)

    def render(self, fmt: str = "text", decimals: int = 4) -> str:
        """The report in ``fmt``: ``text``, ``markdown``, ``latex``, ``json`` or ``html``."""
        return rendering.render(self, fmt, decimals)

    def to_frame(self, backend: str = "polars") -> Any:
        """Per-topic KTU and RBO: columns ``pair, query_id, KTU, RBO``."""
        return rendering.topic_frame(self, backend)

    def __str__(self) -> str:
        return self.render("text")

    def _repr_markdown_(self) -> str:
        return self.render("markdown")


def reproduce(
    qrels: Any,
    original: Sequence[Any],
    reproduced: Sequence[Any],
    metrics: Any,
    *,
    reproduced_qrels: Any = None,
    p: float = RBO_P,
    depth: int = RBO_DEPTH,
    options: Options | None = None,
) -> Reproduction:
    """Measure how closely ``reproduced`` runs reproduce ``original`` ones (Breuer et al., SIGIR 2020).

    ``original`` and ``reproduced`` are each ``(baseline, advanced)``: anything :func:`irspec.read_run`
    reads. ``metrics``: specs as :func:`irspec.evaluate` takes them, each a per-topic score in [0, 1]
    averaged by a mean (``nDCG@10, AP``). Without ``reproduced_qrels`` the reproduction is on the same
    collection (KTU, RBO, RMSE, nRMSE, paired t-test, ER, ΔRI); with it, on another collection
    (ER, ΔRI, unpaired t-test). ``p`` and ``depth``: RBO's persistence and depth (``repro_eval``'s
    0.95 and 1000), ``depth`` also KTU's cut.

    ``options``: the evaluation's :class:`~irspec.evaluation.context.Options` (relevance level, depth
    cut, judged documents only: a plan's ``options``), except that a query of the qrels that a run
    lacks always scores 0 on every metric (trec_eval ``-c``, as ``repro_eval`` scores it). KTU and RBO
    compare the queries both runs of a pair rank, and a warning names the others, left out. An empty
    run is an error; the same file given twice is a warning.
    """
    originals, reproductions = _pair("original", original), _pair("reproduced", reproduced)
    if not 0 < p <= 1 or isinstance(p, bool):
        raise EvaluationError(f"RBO's p must be a number in (0, 1], got {p!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        # RBO sums a weight per rank to the depth, past the rankings' end too
        raise EvaluationError(f"the depth must be a whole number from 1 to {MAX_DEPTH:,}, got {quote(depth)}")
    bound = _comparable(metrics, qrels)
    # the pairs' scores are compared topic by topic: every topic of the qrels has one in every run
    options = replace(options or Options(), missing_queries="zero")
    judged = read_qrels(qrels)
    judged_rep = judged if reproduced_qrels is None else read_qrels(reproduced_qrels)
    runs = [read_run(r) for r in (*originals, *reproductions)]
    ranked = [rankings(r) for r in runs]  # an empty run fails here, naming it
    for run, its_qrels in zip(runs, (judged, judged, judged_rep, judged_rep), strict=True):
        _check_topics(run, its_qrels)
    notes = [n for n in [same_source_note(*runs)] if n]
    with warnings.catch_warnings():
        # Their warnings are issued once below, with this comparison's own.
        warnings.simplefilter("ignore", IrspecWarning)
        if reproduced_qrels is None:
            results = evaluate_many(judged, runs, bound, options=options)
        else:
            results = evaluate_many(judged, runs[:2], bound, options=options)
            results += evaluate_many(judged_rep, runs[2:], bound, options=options)
    b_orig, a_orig, b_rep, a_rep = results
    names = [r.run_name for r in results]
    notes.extend(collect_warnings(results))
    keys = [str(m) for m in bound]
    if reproduced_qrels is None:
        kind = "reproducibility"
        scored, left = shared_queries([(r.run_name, r.query_ids) for r in results])
        notes.extend(left)
        orig_side = rep_side = scored
        pairs = []
        for role, i in (("baseline", 0), ("advanced", 1)):
            pair = _same_collection(role, names[i], names[i + 2], results[i], results[i + 2], keys, scored)
            ranked_common, left_ranked = shared_queries(
                [(names[i], ranked[i]), (names[i + 2], ranked[i + 2])]
            )
            notes.extend(left_ranked)
            pairs.append(_with_order(pair, ranked[i], ranked[i + 2], ranked_common, p, depth))
    else:
        kind = "replicability"
        orig_side, left_o = shared_queries([(names[0], b_orig.query_ids), (names[1], a_orig.query_ids)])
        rep_side, left_r = shared_queries([(names[2], b_rep.query_ids), (names[3], a_rep.query_ids)])
        notes.extend(left_o + left_r)
        pairs = [
            _other_collection(
                role, names[i], names[i + 2], results[i], results[i + 2], keys, orig_side, rep_side
            )
            for role, i in (("baseline", 0), ("advanced", 1))
        ]
    er, dri = {}, {}
    for key in keys:
        bo, ao = _scores(b_orig, key, orig_side), _scores(a_orig, key, orig_side)
        br, ar = _scores(b_rep, key, rep_side), _scores(a_rep, key, rep_side)
        er[key] = _ratio(_mean(ar - br), _mean(ao - bo))
        dri[key] = _relative(_mean(ao), _mean(bo)) - _relative(_mean(ar), _mean(br))
        notes.extend(_undefined_effects(key, er[key], dri[key], _mean(bo), _mean(br)))
    for note in notes:
        warnings.warn(note, IrspecWarning, stacklevel=2)
    return Reproduction(kind, tuple(keys), pairs[0], pairs[1], er, dri, p, depth, tuple(notes))


def _undefined_effects(key: str, er: float, dri: float, base_orig: float, base_rep: float) -> list[str]:
    """Why an effect is not a finite number (repro_eval's value, kept): a ratio over 0, which a table
    would otherwise show as a bare ``inf`` or ``NaN``."""
    out = []
    if not math.isfinite(er):
        out.append(
            f"ER of {key} is {er}: the original advanced run's mean improvement over its baseline is 0"
        )
    if not math.isfinite(dri):
        zero = [who for who, mean in (("original", base_orig), ("reproduced", base_rep)) if mean == 0]
        out.append(
            f"ΔRI of {key} is {dri}: the {' and the '.join(zero)} baseline's mean {key} is 0, and a relative "
            "improvement over 0 is a division by 0"
        )
    return out


def _pair(what: str, runs: Sequence[Any]) -> tuple[Any, Any]:
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or len(runs) != 2:
        raise EvaluationError(f"{what} must be two runs, the baseline and the advanced one")
    return runs[0], runs[1]


def _check_topics(run: Run, qrels: Qrels) -> None:
    """Raise an :class:`~irspec.errors.InputError` when ``qrels`` judge nothing, or ``run`` ranks none
    of their topics: it would score 0 on every topic, share none for KTU and RBO, and make the relative
    improvement a division by 0 (ΔRI -inf), measures of nothing reproduced."""
    topics = qrels.query_ids
    if not topics:
        raise InputError(
            "the qrels have no judgments: expected the judgments of the runs' topics", qrels.source
        )
    if set(topics).isdisjoint(run.query_ids):
        raise InputError(
            f"the run ranks none of the {len(topics)} topics of the qrels {qrels.source!r} ({first_few(topics)}; "
            f"the run's: {first_few(run.query_ids)}): expected a run of those topics",
            run.source,
        )


def _comparable(metrics: Any, qrels: Any) -> list[Metric]:
    """The metrics bound, each one a reproduction can compare: a per-topic score in [0, 1] averaged by
    a mean, computed from a run (nRMSE's largest error assumes [0, 1]; a count or a text has no
    effect ratio)."""
    bound = bind_metrics(metrics, qrels)
    if not bound:
        raise EvaluationError("no metrics to compare")
    for m in bound:
        d = m.definition
        if d.aggregate != "mean" or tuple(d.bounds) != (0.0, 1.0) or d.needs != "run":
            raise EvaluationError(
                f"{m}: cannot be compared in a reproduction: its per-topic values are not scores in "
                f"[0, 1] averaged by a mean (RMSE, nRMSE and the effect ratio read them so)"
            )
        if m.better != "higher":
            # ER and ΔRI read an advanced run's gain over its baseline as an improvement: with a lower-is-
            # better metric their readings turn round (a ΔRI below 0 would be a larger effect)
            raise EvaluationError(
                f"{m}: cannot be compared in a reproduction: "
                f"{'a lower value is better' if m.better == 'lower' else 'no value is better'}, where the "
                "effect ratio and ΔRI read a higher score as an improvement"
            )
    return list(bound)


def _scores(result: Result, key: str, topics: Sequence[str]) -> np.ndarray:
    """``result``'s scores of ``key`` on ``topics``, each defined: a score undefined on a topic (NaN:
    ``Accuracy`` of a query the run lacks) would leave it out of some measures (RMSE, ER) and not others
    (a t-test's NaN), so it is an error naming the topic."""
    column = result.column(key)
    where = {q: i for i, q in enumerate(result.query_ids)}
    scores = np.array([column[where[q]] for q in topics], dtype=np.float64)
    undefined = np.isnan(scores)
    if undefined.any():
        first = topics[int(np.argmax(undefined))]
        raise EvaluationError(
            f"{key}: undefined for run {result.run_name} on {int(undefined.sum())} topic(s), first "
            f"{first!r} (a query the run lacks?): a reproduction's measures need a score on every topic"
        )
    return scores


def _same_collection(
    role: str, name_o: str, name_r: str, orig: Result, rep: Result, keys: list[str], topics: list[str]
) -> PairReproduction:
    rmse, nrmse, p_value = {}, {}, {}
    for key in keys:
        o, r = _scores(orig, key, topics), _scores(rep, key, topics)
        rmse[key] = math.sqrt(_mean((o - r) ** 2))
        largest = math.sqrt(_mean(np.maximum(o, 1 - o) ** 2))
        nrmse[key] = _ratio(rmse[key], largest)
        p_value[key] = _p_value(o, r, paired=True)
    empty = np.empty(0)
    return PairReproduction(role, name_o, name_r, (), empty, empty, rmse, nrmse, p_value)


def _with_order(
    pair: PairReproduction,
    orig: dict[str, list[str]],
    rep: dict[str, list[str]],
    topics: list[str],
    p: float,
    depth: int,
) -> PairReproduction:
    ktus = np.array([ktu(orig[q], rep[q], depth) for q in topics], dtype=np.float64)
    rbos = np.array([rbo(rep[q], orig[q], p, depth) for q in topics], dtype=np.float64)
    return PairReproduction(
        pair.role,
        pair.original,
        pair.reproduced,
        tuple(topics),
        ktus,
        rbos,
        pair.rmse,
        pair.nrmse,
        pair.p_value,
    )


def _other_collection(
    role: str,
    name_o: str,
    name_r: str,
    orig: Result,
    rep: Result,
    keys: list[str],
    orig_topics: list[str],
    rep_topics: list[str],
) -> PairReproduction:
    p_value = {
        key: _p_value(_scores(orig, key, orig_topics), _scores(rep, key, rep_topics), paired=False)
        for key in keys
    }
    empty = np.empty(0)
    return PairReproduction(role, name_o, name_r, (), empty, empty, None, None, p_value)


def _p_value(a: np.ndarray, b: np.ndarray, *, paired: bool) -> float:
    """The two-sided t-test's p-value (paired, or Student's unpaired with equal variances, as
    ``repro_eval`` runs them); 1 where the two samples are equal, whose t is 0/0: nothing differs."""
    if len(a) == len(b) and np.array_equal(a, b):
        return 1.0
    # scipy.stats' ttest_rel and ttest_ind, their statistic as they compute it and their tail,
    # 2 * t.sf(|t|), from the function t.sf calls: scipy.stats, several times as slow to import, is
    # then not loaded by a reproduction (issue 35)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if paired:
            d = a - b
            df = len(d) - 1.0
            t = np.mean(d) / np.sqrt(_variance(d) / len(d))
        else:
            df = np.float64(len(a) + len(b) - 2)  # two samples of one: 0 / 0, NaN
            # a sample of one adds no squared deviation to the pooled variance (its own is undefined)
            va, vb = (_variance(x) if len(x) > 1 else 0.0 for x in (a, b))
            pooled = ((len(a) - 1) * va + (len(b) - 1) * vb) / df
            t = (np.mean(a) - np.mean(b)) / np.sqrt(pooled * (1.0 / len(a) + 1.0 / len(b)))
        return float(2.0 * stdtr(df, -np.abs(t)))


def _variance(x: np.ndarray) -> np.floating[Any]:
    """The sample variance as scipy.stats' t-tests compute it: the second central moment, times
    ``n / (n - 1)``."""
    return np.mean((x - np.mean(x)) ** 2) * np.divide(len(x), len(x) - 1.0)  # one value: 0 * inf, NaN


def _mean(values: np.ndarray) -> float:
    return float(aggregate_values(np.asarray(values, dtype=np.float64), "mean"))


def _ratio(num: float, den: float) -> float:
    # repro_eval divides numpy floats: 0/0 is NaN and x/0 an infinity, not an error.
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(num) / np.float64(den))


def _relative(advanced: float, baseline: float) -> float:
    return _ratio(advanced - baseline, baseline)
