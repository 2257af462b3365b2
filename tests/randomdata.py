"""Random qrels/run pairs, in pytrec_eval's dict shape, for differential tests.

``random_case(seed)`` draws one ``(qrels, run)`` pair from a numpy Generator seeded with ``seed``, built
to reach the corners where evaluators disagree:

- graded labels 0..4, some negative labels (-1: pooled but unjudged), and retrieved documents that are
  absent from the qrels (unjudged);
- heavy score ties: a query's scores come from a palette of one to five values, so the tie-break
  (docno descending, by strcmp) decides most of the ranking; optionally (``near_ties=True``) scores
  that are distinct doubles but one single-precision float (1.0 and 1.00000001);
- docnos whose string order differs from their numeric order (``d9`` > ``d10`` > ``d1``), mixed case
  (``D`` < ``d`` in ASCII) and, now and then, a non-ASCII letter (strcmp compares UTF-8 bytes, which
  order like code points);
- queries with no relevant document at any level, queries only in the qrels, queries only in the run,
  rankings of 0 to 3 documents and rankings of up to ~300;
- optionally (``all_negative=True``) a query whose every label is negative.

A ranking of length 0 is a query with an empty dict in the run: the same as a query absent from the
run for trec_eval (it has no line), and pytrec_eval crashes on it (see ``tests/test_differential.py``).

Helpers: ``ranked`` orders a query's documents as trec_eval does, ``truncate`` applies trec_eval's -M,
``judged_only_ranking`` applies -J to a ranking, ``untied`` re-scores a run without ties in trec_eval's
order (for a reference that breaks ties its own way).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["KINDS", "judged_only_ranking", "random_case", "ranked", "truncate", "untied"]

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

KINDS = ("normal", "no_relevant", "qrels_only", "run_only", "short", "long", "empty_ranking", "all_negative")
"""The kinds of query ``random_case`` draws (``all_negative`` only when asked for)."""

# Score palettes: few distinct values, so ties are the rule. Includes 0.0 and -0.0 (equal: a tie) and
# negative scores; no two values are equal in single precision unless equal in double.
_PALETTE = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.25, 1e-3, 10.0, -0.5, 3.0, 0.25, 7.5, -2.0])
# Near ties: distinct doubles that are one value in single precision (trec_eval keeps scores as C float).
_NEAR_TIES = np.array([1.0, 1.0000000000000002, 1.00000001, 0.3, 0.1 + 0.2, 2.0, 2.0000001])

# Label distribution of a judged document (label, weight).
_LABELS = np.array([-1, 0, 1, 2, 3, 4])
_LABEL_P = np.array([0.08, 0.44, 0.2, 0.12, 0.09, 0.07])


def _docno(rng: np.random.Generator, i: int) -> str:
    """A docno for document number ``i`` in one of several styles whose string order is not numeric."""
    style = rng.integers(0, 9)
    if style == 0:
        return f"d{i}"  # d1 < d10 < d100 < d2 as strings
    if style == 1:
        return f"D{i}"  # uppercase sorts before lowercase
    if style == 2:
        return f"doc-{i:03d}"
    if style == 3:
        return str(i)  # bare numbers: "9" > "10"
    if style == 4:
        return f"AP88{i % 7}-{i}"
    if style == 5:
        return f"d{i}x"
    if style == 6:
        return f"d{i}.{i % 3}"
    if style == 7:
        return f"clueweb-{i % 5}-{i}"
    return f"d\u00e9{i}" if rng.random() < 0.5 else f"z{i}"  # a non-ASCII docno now and then


def _pool(rng: np.random.Generator, size: int) -> list[str]:
    """``size`` distinct docnos."""
    out: list[str] = []
    seen: set[str] = set()
    numbers = rng.permutation(np.arange(1, 4 * size + 20))
    for i in numbers:
        d = _docno(rng, int(i))
        if d not in seen:
            seen.add(d)
            out.append(d)
        if len(out) == size:
            break
    return out


def _scores(rng: np.random.Generator, n: int, near_ties: bool) -> np.ndarray:
    """``n`` scores with heavy ties.

    Unless ``near_ties``, two scores are equal in single precision only if they are equal doubles, so
    the ranking does not depend on the precision an evaluator keeps scores in.
    """
    mode = rng.random()
    if mode < 0.7:
        k = int(rng.integers(1, 6))
        palette = rng.choice(_PALETTE, size=k, replace=False)
        if near_ties:
            palette = np.concatenate(
                (palette, rng.choice(_NEAR_TIES, size=int(rng.integers(2, 5)), replace=False))
            )
        return rng.choice(palette, size=n)
    if mode < 0.9:
        return np.round(rng.normal(0.0, 2.0, size=n), 1)  # one decimal: ties among ~40 values
    scores = rng.random(n)  # few or no ties
    return scores if near_ties else scores.astype(np.float32).astype(np.float64)


def _length(rng: np.random.Generator, kind: str) -> int:
    if kind == "short":
        return int(rng.integers(0, 4))
    if kind == "long":
        return int(rng.integers(100, 301))
    u = rng.random()
    if u < 0.2:
        return int(rng.integers(0, 4))
    if u < 0.85:
        return int(rng.integers(4, 60))
    return int(rng.integers(60, 301))


def _query_ids(rng: np.random.Generator, n: int) -> list[str]:
    """Query ids whose string order is not numeric either (q10 < q9), unique."""
    ids: list[str] = []
    for i in rng.permutation(np.arange(1, 3 * n + 5))[:n]:
        ids.append(f"q{i}" if rng.random() < 0.6 else str(300 + int(i)))
    return list(dict.fromkeys(ids))


def random_case(
    seed: int,
    *,
    n_queries: int | None = None,
    all_negative: bool = False,
    empty_rankings: bool = True,
    near_ties: bool = False,
) -> tuple[Qrels, Run]:
    """One random ``(qrels, run)`` pair: ``{qid: {docno: label}}`` and ``{qid: {docno: score}}``.

    ``all_negative`` allows queries whose labels are all negative; ``empty_rankings`` allows run
    queries with an empty dict; ``near_ties`` adds scores that differ as doubles but are equal in
    single precision (trec_eval reads scores into a C float). Same seed, same pair.
    """
    rng = np.random.default_rng(seed)
    nq = n_queries if n_queries is not None else int(rng.integers(3, 11))
    kinds = ["normal", "normal", "normal", "no_relevant", "qrels_only", "run_only", "short", "long"]
    if empty_rankings:
        kinds.append("empty_ranking")
    if all_negative:
        kinds.append("all_negative")
    qrels: Qrels = {}
    run: Run = {}
    for qid in _query_ids(rng, nq):
        kind = str(rng.choice(kinds))
        n = 0 if kind == "empty_ranking" else _length(rng, kind)
        extra = int(rng.integers(0, 30))  # judged documents the run does not retrieve
        pool = _pool(rng, n + extra + 1)
        retrieved, unretrieved = pool[:n], pool[n:]
        if kind != "qrels_only":
            scores = _scores(rng, n, near_ties)
            run[qid] = {d: float(s) for d, s in zip(retrieved, scores, strict=True)}
        if kind == "run_only":
            continue
        judged_share = rng.uniform(0.2, 1.0)
        judged = [d for d in retrieved if rng.random() < judged_share]
        judged += unretrieved[: int(rng.integers(0, len(unretrieved) + 1))]
        if not judged:
            judged = [unretrieved[0]]  # every qrels query has at least one judgment
        if kind == "no_relevant":
            labels = rng.choice(np.array([-1, 0]), size=len(judged), p=[0.15, 0.85])
            if (labels < 0).all():
                labels[0] = 0
        elif kind == "all_negative":
            labels = np.full(len(judged), -1)
        else:
            labels = rng.choice(_LABELS, size=len(judged), p=_LABEL_P)
            if not all_negative and (labels < 0).all():
                labels[0] = 0
        qrels[qid] = {d: int(v) for d, v in zip(judged, labels, strict=True)}
    return qrels, run


def ranked(docs: Mapping[str, float]) -> list[str]:
    """A query's docnos in trec_eval's order: score descending, then docno descending (strcmp).

    Python compares str by code point, which is the order strcmp gives their UTF-8 bytes.
    """
    return sorted(docs, key=lambda d: (docs[d], d), reverse=True)


def untied(run: Mapping[str, Mapping[str, float]]) -> Run:
    """Each non-empty ranking re-scored n, n-1, ..., 1 in trec_eval's order: the same ranking for any
    evaluator, whatever its tie-break."""
    return {
        q: {d: float(len(docs) - i) for i, d in enumerate(ranked(docs))} for q, docs in run.items() if docs
    }


def truncate(run: Mapping[str, Mapping[str, float]], depth: int | None) -> Run:
    """trec_eval's -M: each query keeps its top ``depth`` documents (all when ``depth`` is None)."""
    if depth is None:
        return {q: dict(docs) for q, docs in run.items()}
    return {q: {d: docs[d] for d in ranked(docs)[:depth]} for q, docs in run.items()}


def judged_only_ranking(ranking: list[str], labels: Mapping[str, int]) -> list[str]:
    """trec_eval's -J on one ranking: keep the documents with a label >= 0, in order."""
    return [d for d in ranking if labels.get(d, -1) >= 0]
