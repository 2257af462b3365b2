"""ranx's ``ranx.metrics``: each metric as a function of judgments and rankings given as ranx's arrays
of (document id, value) rows per query (a numba typed list, a 3-D array, a list of 2-D arrays; the
rankings ranked as given), or as ``Qrels``/``Run`` and dicts, returning the per-query values.

Each is :func:`irspec.compat.ranx.evaluate`'s metric of the same name (``precision(qrels, run, 5)`` is
``precision@5``), computed by irspec (see :mod:`irspec.compat.ranx._scoring`).
"""

from __future__ import annotations

from typing import Any

from irspec.compat.ranx._scoring import per_query

__all__ = [
    "average_precision", "bpref", "dcg", "dcg_burges", "f1", "hit_rate", "hits", "ndcg", "ndcg_burges",
    "precision", "r_precision", "rank_biased_precision", "recall", "reciprocal_rank",
]  # fmt: skip


def _values(name: str, qrels: Any, run: Any, k: float, rel_lvl: int) -> Any:
    if k < 0:
        raise AssertionError("k must be grater or equal to 0")
    text = name + (f"@{int(k)}" if k else "") + (f"-l{rel_lvl}" if rel_lvl != 1 else "")
    return per_query(qrels, run, [text])[text]


def hits(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """The number of relevant documents in the top k (k = 0: the whole ranking), per query."""
    return _values("hits", qrels, run, k, rel_lvl)


def hit_rate(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """1 where a relevant document is in the top k, else 0, per query."""
    return _values("hit_rate", qrels, run, k, rel_lvl)


def precision(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """Precision at k (k = 0: of the whole ranking), per query."""
    return _values("precision", qrels, run, k, rel_lvl)


def recall(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """Recall at k, per query."""
    return _values("recall", qrels, run, k, rel_lvl)


def f1(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """The harmonic mean of precision and recall at k, per query."""
    return _values("f1", qrels, run, k, rel_lvl)


def r_precision(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """Precision at rank R (the number of relevant documents), per query; ``k`` is ignored."""
    return _values("r-precision", qrels, run, 0, rel_lvl)


def reciprocal_rank(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """1 / the rank of the first relevant document in the top k (0 if none), per query."""
    return _values("mrr", qrels, run, k, rel_lvl)


def average_precision(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """Average precision of the top k (divided by R), per query."""
    return _values("map", qrels, run, k, rel_lvl)


def dcg(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """DCG at k (gain = label, log2(i + 1) discount), per query."""
    return _values("dcg", qrels, run, k, rel_lvl)


def dcg_burges(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """DCG at k with gain 2^label − 1, per query."""
    return _values("dcg_burges", qrels, run, k, rel_lvl)


def ndcg(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """nDCG at k (gain = label), per query."""
    return _values("ndcg", qrels, run, k, rel_lvl)


def ndcg_burges(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """nDCG at k with gain 2^label − 1, per query."""
    return _values("ndcg_burges", qrels, run, k, rel_lvl)


def bpref(qrels: Any, run: Any, k: int = 0, rel_lvl: int = 1) -> Any:
    """Bpref, per query; ``k`` is ignored."""
    return _values("bpref", qrels, run, 0, rel_lvl)


def rank_biased_precision(qrels: Any, run: Any, p: float, rel_lvl: int = 1) -> Any:
    """Rank-biased precision of persistence ``p`` (graded: the labels are the gains), per query."""
    text = f"rbp.{repr(float(p)).partition('.')[2]}" + (f"-l{rel_lvl}" if rel_lvl != 1 else "")
    return per_query(qrels, run, [text])[text]
