"""The computations of irspec-diversity's metrics, as TREC's ndeval (version 4.5) computes them.

Every metric is computed query by query from the run's ranking (irspec's: score descending, then docno
descending, which is ndeval's ``-traditional`` order) and the query's :class:`~irspec_diversity.subtopics.Topic`.
The arithmetic follows ndeval step by step (the same sums in the same order, the same divisions), so
that the values are ndeval's to the last bit: a sum taken in another order can change a tie in the
greedy ideal ranking, and with it the normalisation.

Shared by all of them: a document's *score* at rank r is Σ_{j relevant} (1 − α)^{c_j}, over the
subtopics j it is relevant to (in the order of the subtopic ids), where c_j counts the documents
relevant to j ranked above it. A query none of whose subtopics has a relevant document scores 0 on
every metric.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irspec.plugin_api import Context
from irspec_diversity.subtopics import SubtopicQrels, Topic

DEPTH = 20
"""ndeval's depth: the cutoff measures are computed for k <= 20 (it reports 5, 10 and 20)."""

Ranked = Sequence[tuple[int, ...]]
"""A ranking as the subtopics each document is relevant to (indices into the topic's subtopics)."""


def _scores(ranked: Ranked, subtopics: int, alpha: float) -> list[float]:
    """The score of each ranked document: Σ_{j relevant} (1 − α)^{c_j}, updated as ndeval does."""
    gain = [1.0] * subtopics
    keep = 1.0 - alpha
    out = []
    for subs in ranked:
        score = 0.0
        for j in subs:
            score += gain[j]
            gain[j] *= keep
        out.append(score)
    return out


def _ideal_scores(topic: Topic, alpha: float, limit: int | None) -> list[float]:
    """The scores of ndeval's ideal ranking, to ``limit`` documents (all relevant ones for ``None``).

    Greedy, as ndeval builds it: at each rank the judged document of the highest score, ties going to
    the greatest docno; the gains of its subtopics then shrink by (1 − α). Documents relevant to no
    subtopic score 0 and come last, where they change no value.

    Documents relevant to the same subtopics always score alike, and of those the greatest docno left
    goes first; so each rank scores each distinct set of subtopics once (at most 2^S of them, however
    many documents), and a tie between two sets goes to the one whose next docno is greater.
    """
    groups: dict[tuple[int, ...], list[str]] = {}
    for d, js in topic.relevant.items():
        groups.setdefault(js, []).append(d)
    sets = list(groups)
    left = [sorted(groups[js]) for js in sets]  # ascending: the last is the next to go
    gain = [1.0] * topic.subtopics
    keep = 1.0 - alpha
    out: list[float] = []
    for _ in range(len(topic.relevant) if limit is None else min(limit, len(topic.relevant))):
        best, where = -1.0, -1
        for u, js in enumerate(sets):
            if left[u]:
                score = 0.0
                for j in js:
                    score += gain[j]
                if score > best or (score == best and left[u][-1] > left[where][-1]):
                    best, where = score, u
        left[where].pop()
        for j in sets[where]:
            gain[j] *= keep
        out.append(best)
    return out


_DISCOUNT = [1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, DEPTH)]
"""ndeval's DCG discount at the 0-based rank i: log 2 / log(i + 2), which is 1 at the first rank."""


def _discounted(value: float, i: int) -> float:
    return value * _DISCOUNT[i]


def _reciprocal(value: float, i: int) -> float:
    return value / (i + 1)


def _curve(
    scores: list[float], subtopics: int, alpha: float, weigh: Callable[[float, int], float]
) -> tuple[list[float], list[float]]:
    """(run, ideal ideal): per rank i < DEPTH, Σ_{r<=i} weigh(score_r, r) and the same over the "ideal
    ideal" ranking in which every document covers every subtopic (score S (1 − α)^r), ndeval's
    collection-independent normaliser."""
    run = [0.0] * DEPTH
    for i, score in enumerate(scores[:DEPTH]):
        run[i] = weigh(score, i)
    ideal_ideal = []
    gain = float(subtopics)
    for i in range(DEPTH):
        ideal_ideal.append(weigh(gain, i))
        gain *= 1.0 - alpha
    for i in range(1, DEPTH):
        run[i] += run[i - 1]
        ideal_ideal[i] += ideal_ideal[i - 1]
    return run, ideal_ideal


def _stored(curve: tuple[list[float], list[float]], i: int) -> float:
    """The value ndeval keeps at rank i: divided by the ideal ideal from the second rank on (its loop
    starts there), and so the operands of its collection-dependent (n-) ratios."""
    run, ideal_ideal = curve
    return run[i] if i == 0 else run[i] / ideal_ideal[i]


def _independent(weigh: Callable[[float, int], float]) -> Callable[[Topic, Ranked, Any], float]:
    """alpha-DCG@k or ERR-IA@k: the run's curve over the ideal ideal one (at every k, the first too)."""

    def measure(topic: Topic, ranked: Ranked, metric: Any) -> float:
        alpha, k = metric.get("alpha"), metric.get("k")
        run, ideal_ideal = _curve(_scores(ranked[:k], topic.subtopics, alpha), topic.subtopics, alpha, weigh)
        return run[k - 1] / ideal_ideal[k - 1]

    return measure


def _dependent(weigh: Callable[[float, int], float]) -> Callable[[Topic, Ranked, Any], float]:
    """alpha-nDCG@k or nERR-IA@k: ndeval's stored run value over the ideal ranking's, 0 where the run's is 0."""

    def measure(topic: Topic, ranked: Ranked, metric: Any) -> float:
        alpha, k = metric.get("alpha"), metric.get("k")
        run = _curve(_scores(ranked[:k], topic.subtopics, alpha), topic.subtopics, alpha, weigh)
        if run[0][k - 1] == 0:
            return 0.0
        best = _curve(_ideal_scores(topic, alpha, k), topic.subtopics, alpha, weigh)
        return _stored(run, k - 1) / _stored(best, k - 1)

    return measure


def _nrbp_of(scores: list[float], subtopics: int, alpha: float, beta: float) -> float:
    total, decay = 0.0, 1.0
    for score in scores:
        total += score * decay
        decay *= beta
    return total * ((1 - (1 - alpha) * beta) / subtopics)


def _nrbp(topic: Topic, ranked: Ranked, metric: Any) -> float:
    alpha, beta = metric.get("alpha"), metric.get("beta")
    return _nrbp_of(_scores(ranked, topic.subtopics, alpha), topic.subtopics, alpha, beta)


def _nnrbp(topic: Topic, ranked: Ranked, metric: Any) -> float:
    alpha, beta = metric.get("alpha"), metric.get("beta")
    if 1 - (1 - alpha) * beta == 0:
        # alpha 0 and beta 1: NRBP's factor is 0, the run's and the ideal's alike (ndeval divides 0 by
        # 0); the factor cancels in their ratio, which is that of the sums it multiplies (with beta 1,
        # undiscounted)
        run, ideal = (
            sum(s) for s in (_scores(ranked, topic.subtopics, alpha), _ideal_scores(topic, alpha, None))
        )
        return run / ideal if ideal else 0.0
    ideal = _nrbp_of(_ideal_scores(topic, alpha, None), topic.subtopics, alpha, beta)
    return _nrbp(topic, ranked, metric) / ideal


def _p_ia(topic: Topic, ranked: Ranked, metric: Any) -> float:
    k = metric.get("k")
    pairs = sum(len(subs) for subs in ranked[:k])
    return pairs / (k * topic.subtopics)


def _st_recall(topic: Topic, ranked: Ranked, metric: Any) -> float:
    covered = {j for subs in ranked[: metric.get("k")] for j in subs}
    return len(covered) / topic.subtopics


def _ap_ia(topic: Topic, ranked: Ranked, metric: Any) -> float:
    found = [0] * topic.subtopics
    total = [0.0] * topic.subtopics
    for i, subs in enumerate(ranked):
        for j in subs:
            found[j] += 1
            total[j] += found[j] / (i + 1)
    value = 0.0
    for j, relevant in enumerate(topic.per_subtopic):
        value += total[j] / relevant  # every subtopic of a Topic has a relevant document
    return value / topic.subtopics


def _each_query(ctx: Context, metric: Any, measure: Callable[[Topic, Ranked, Any], float]) -> np.ndarray:
    """``measure`` of every query of the context (0 for a query with no relevant subtopic), given the
    top k documents of a metric with a cutoff k, the whole ranking otherwise."""
    data: SubtopicQrels = ctx.input("subtopics")
    rel = ctx.level(metric)
    judged_only = "judged_only" in metric.definition.param_names and metric.get("judged_only")
    k = metric.get("k") if "k" in metric.definition.param_names else None
    # only the docnos of the top k rows are gathered (a run's 1000 per query are not needed at k = 20)
    top = np.arange(len(ctx.label)) if k is None or judged_only else ctx.top_rows(np.full(ctx.nq, k))
    docnos = ctx.frame.get_column("docno").gather(top).to_list() if len(top) else []
    bounds = np.searchsorted(top, ctx.offsets)
    out = np.zeros(ctx.nq)
    for i, query in enumerate(ctx.query_ids):
        topic = data.topic(query, rel)
        if topic.subtopics == 0:
            continue
        ranked = docnos[bounds[i] : bounds[i + 1]]
        if judged_only:
            ranked = [d for d in ranked if d in topic.judged][:k]
        out[i] = measure(topic, [topic.relevant.get(d, ()) for d in ranked], metric)
    return out


def alpha_dcg(ctx: Context, metric: Any) -> np.ndarray:
    """alpha-DCG@k per query (ndeval's collection-independent normalisation)."""
    return _each_query(ctx, metric, _independent(_discounted))


def alpha_ndcg(ctx: Context, metric: Any) -> np.ndarray:
    """alpha-nDCG@k per query."""
    return _each_query(ctx, metric, _dependent(_discounted))


def err_ia(ctx: Context, metric: Any) -> np.ndarray:
    """ERR-IA@k per query (ndeval's collection-independent normalisation)."""
    return _each_query(ctx, metric, _independent(_reciprocal))


def nerr_ia(ctx: Context, metric: Any) -> np.ndarray:
    """nERR-IA@k per query."""
    return _each_query(ctx, metric, _dependent(_reciprocal))


def nrbp(ctx: Context, metric: Any) -> np.ndarray:
    """NRBP per query, over the whole ranking."""
    return _each_query(ctx, metric, _nrbp)


def nnrbp(ctx: Context, metric: Any) -> np.ndarray:
    """nNRBP per query: NRBP over the ideal ranking's NRBP."""
    return _each_query(ctx, metric, _nnrbp)


def p_ia(ctx: Context, metric: Any) -> np.ndarray:
    """Intent-aware precision at k per query."""
    return _each_query(ctx, metric, _p_ia)


def st_recall(ctx: Context, metric: Any) -> np.ndarray:
    """Subtopic recall at k per query."""
    return _each_query(ctx, metric, _st_recall)


def ap_ia(ctx: Context, metric: Any) -> np.ndarray:
    """Intent-aware average precision per query, over the whole ranking."""
    return _each_query(ctx, metric, _ap_ia)
