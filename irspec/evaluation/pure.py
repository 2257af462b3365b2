"""Small evaluations in pure Python: P@k, R@k, AP, nDCG and RR of rankings given as dicts, without numpy.

A BEIR or MTEB evaluation asks the pytrec_eval drop-in for these measures of a few hundred queries, once,
in a process that may not have imported numpy yet; importing it takes longer than evaluating them here
(issue 35: 300 queries of 100 documents in ~15 ms, against ~50 ms for ``import numpy`` alone). The engine
(:mod:`irspec.evaluation.ranking` and the kernels) stays the one definition of every metric: this module
gives its values, bit for bit, for the inputs :func:`pure_rankings` accepts, which
``tests/test_pure_evaluation.py`` holds on random adversarial cases. It does so by computing what the
kernels compute in the order they compute it:

- a ranking is its documents by score descending, ties by docno descending;
- relevant means a label of at least the relevance level (>= 1); R counts the query's relevant labels;
- P@k = (relevant in the top k) / k; R@k = (relevant in the top k) / R;
- AP@k = (1/R) Σ over the i-th relevant document at rank r <= k of i / r, added in rank order;
- RR = 1 / the rank of the first relevant document;
- nDCG@k = DCG@k / IDCG@k, DCG@k = Σ over documents labelled >= 1 at rank r <= k of label / log2(r + 1)
  added in rank order, IDCG@k the same sum over the query's positive labels sorted descending; gains
  ignore the relevance level, as trec_eval's ``ndcg`` does. The logarithms are the C library's, as the
  kernels' are (:func:`irspec.evaluation.context.rank_log2`);
- each value is 0 where its denominator is (no relevant document, no positive label).

Only the documents labelled 1 or more are placed: a document's rank is one plus the scores above it
(two binary searches of the query's sorted scores) plus the equal scores of greater docnos, so a query
costs a sort of its scores and a few steps per relevant document.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import methodcaller
from typing import Any

from irspec.errors import encodable
from irspec.spec.definitions import MAX_COUNT

__all__ = ["KINDS", "PURE_LIMIT", "evaluate_pure", "pure_judgments", "pure_rankings"]

KINDS = frozenset({"P", "R", "AP", "nDCG", "RR"})
"""The metrics this module computes, by their irspec names, each with a cutoff or without."""

PURE_LIMIT = 1_000_000
"""The most documents, over every ranking, that an evaluation here is meant for. In a fresh process
(numpy's import counted), this module took 0.15 s where the engine took 0.34 for 100,000 documents
(BEIR's measures), 0.50 against 0.68 for 500,000, and 3.07 against 2.82 for 2,000,000 (issue 35's
benchmarks/README.md)."""

_INT64 = 1 << 63
_EXACT = 1 << 53  # integers up to this are the same numbers as doubles, as numpy reads them


def pure_judgments(judgments: Mapping[str, Any]) -> bool:
    """Whether ``judgments`` (string ids, checked by the caller) are dicts of ``int`` labels that are 64-bit
    integers, as the engine reads them; anything else (a label beyond, numpy integers) is the engine's."""
    inner = list(judgments.values())
    if set(map(type, inner)) - {dict}:
        return False
    labels = list(chain.from_iterable(map(methodcaller("values"), inner)))
    return set(map(type, labels)) <= {int} and (
        not labels or (min(labels) >= -_INT64 and max(labels) < _INT64)
    )


def pure_rankings(rankings: Mapping[str, Any], queries: Iterable[str], limit: int = PURE_LIMIT) -> bool:
    """Whether the rankings of ``queries`` are read here as the engine reads them, and hold at most
    ``limit`` documents in all: dicts of ``str`` docnos that UTF-8 can encode, to finite ``float`` scores
    or ``int`` scores of at most 2**53 in magnitude (the doubles they are; numpy reads the same). Anything
    else (numpy numbers, booleans, NaN, a mapping of another type) is the engine's, which reads it or
    says what is wrong."""
    total = 0
    isfinite = math.isfinite
    for q in queries:
        docs = rankings[q]
        if type(docs) is not dict:
            return False
        total += len(docs)
        if total > limit:
            return False
        if docs and (set(map(type, docs)) != {str} or not encodable("".join(docs))):
            return False
        values = docs.values()
        kinds = set(map(type, values))
        if kinds == {float}:
            if not all(map(isfinite, values)):
                return False
        elif kinds == {int} or kinds == {float, int}:
            for v in values:
                if not (isfinite(v) if type(v) is float else -_EXACT <= v <= _EXACT):
                    return False
        elif kinds:
            return False
    return True


def evaluate_pure(
    judgments: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Mapping[str, float]],
    queries: Sequence[str],
    metrics: Sequence[tuple[str, int | None]],
    level: int = 1,
) -> list[list[float]]:
    """The values of ``metrics`` (``(kind, cutoff)`` pairs, kind in :data:`KINDS`, cutoff ``None`` for the
    whole ranking or an integer from 1 to 2**53) for each of ``queries`` (judged by ``judgments``; a
    query without a ranking in ``rankings`` is scored as an empty one), one row per query in order.
    ``level`` is the lowest relevant label (>= 1). The inputs are those :func:`pure_judgments` and
    :func:`pure_rankings` accept."""
    for kind, k in metrics:
        if kind not in KINDS or not (k is None or 1 <= k <= MAX_COUNT):
            raise ValueError(f"not a metric of this module: {kind}@{k}")
    cutoffs = sorted({k for _, k in metrics if k is not None})
    rows = []
    for q in queries:
        labels = judgments[q]
        docs = rankings.get(q) or {}
        R = sum(map(level.__le__, labels.values()))
        hits = _hits(labels, docs)  # (rank, label) of each retrieved document labelled >= 1
        relevant = [r for r, label in hits if label >= level]
        # AP's running sum at each relevant document, DCG's at each positive one, IDCG's at each rank
        ap = _running([(i / r) for i, r in enumerate(relevant, 1)])
        dcg = _running([label / math.log2(r + 1.0) for r, label in hits])
        ideal = sorted((v for v in labels.values() if v > 0), reverse=True)
        idcg = _running([g / math.log2(i + 1.0) for i, g in enumerate(ideal, 1)])
        positive = [r for r, _ in hits]
        # how many relevant (and positive) documents each cutoff keeps
        within: dict[int | None, tuple[int, int]] = {
            k: (bisect_right(relevant, k), bisect_right(positive, k)) for k in cutoffs
        }
        within[None] = (len(relevant), len(positive))
        row = []
        for kind, k in metrics:
            found, gained = within[k]
            if kind == "P":
                row.append(found / k if k is not None else (found / len(docs) if docs else 0.0))
            elif kind == "R":
                row.append(found / R if R else 0.0)
            elif kind == "AP":
                row.append(ap[found] / R if R else 0.0)
            elif kind == "RR":
                first = relevant[0] if relevant and (k is None or relevant[0] <= k) else 0
                row.append(1.0 / first if first else 0.0)
            else:
                best = idcg[len(ideal) if k is None else min(k, len(ideal))]
                row.append(dcg[gained] / best if best else 0.0)
        rows.append(row)
    return rows


def _hits(labels: Mapping[str, int], docs: Mapping[str, float]) -> list[tuple[int, int]]:
    """(rank, label) of the documents of ``docs`` labelled 1 or more, by rank."""
    scores: list[float] | None = None
    hits = []
    for doc, label in labels.items():
        if label < 1:
            continue
        score = docs.get(doc)
        if score is None:
            continue
        if scores is None:
            scores = sorted(docs.values())
        end = bisect_right(scores, score)
        above = len(scores) - end
        if end - bisect_left(scores, score) > 1:  # ties: the greater docnos rank first
            above += sum(1 for other, s in docs.items() if s == score and other > doc)
        hits.append((above + 1, label))
    hits.sort()
    return hits


def _running(terms: list[float]) -> list[float]:
    """The running sums of ``terms`` from 0, left to right: ``[0, t0, t0 + t1, ...]``."""
    sums = [0.0]
    total = 0.0
    for t in terms:
        total += t
        sums.append(total)
    return sums
