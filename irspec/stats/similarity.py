"""Rank similarity between two rankings of one query: RBO, KTU and Jaccard, and how they are named.

The measures compare two lists of document ids, best first, and know no qrels:

- ``RBO(p=0.95)@1000``: rank-biased overlap truncated at a depth and normalised by the weights it used
  (Clarke et al., TOIS 2021, as ``repro_eval`` computes it for Breuer et al., SIGIR 2020)::

      RBO = sum_{d=1..k} p^(d-1) * |A[:d] & B[:d]| / d  /  sum_{d=1..k} p^(d-1)

  where a list shorter than ``d`` contributes all it has. Two equal lists of at least ``k`` documents
  score 1; Webber et al.'s un-normalised sum (the ``rbo`` package's ``rbo(k, p)``) is this times
  ``1 - p^k`` for two lists of at least ``k`` documents each.
- ``KTU@1000``: Kendall's tau "union" as ``repro_eval`` computes it: both lists cut at ``k``, each
  document given its position in the sorted union of the two lists, and Kendall's tau-b between the
  two sequences of positions, rank by rank. Since the union is sorted by document id, this correlates
  the document ids' string order at each rank; it is not the correlation of the two orderings of the
  union (a reversed ranking does not score -1). irspec keeps it so that the values equal those papers
  report (docs/reference/exactness.md). ``repro_eval`` fails on lists of different lengths; irspec
  cuts both to the shorter one.
- ``Jaccard@10``: ``|A[:k] & B[:k]| / |A[:k] | B[:k]|`` (the whole lists without a cutoff).

The names are written in the metric-spec grammar (``name(params)@cutoff``, :mod:`irspec.spec.syntax`)
and bound here, not in the metric registry: a similarity compares two runs and needs no qrels, so it is
no metric an evaluation could compute. :func:`parse_similarity` gives :class:`SimilarityMeasure` values,
whose ``str()`` is the canonical text (defaults omitted, as a metric's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from irspec.errors import ParameterError, SpecError, SpecSyntaxError, suggest
from irspec.frozen import frozen
from irspec.spec import syntax
from irspec.stats.concordance import kendall_tau_b

__all__ = [
    "MEASURES",
    "RBO_DEPTH",
    "RBO_P",
    "SimilarityMeasure",
    "jaccard",
    "ktu",
    "parse_similarity",
    "rbo",
]

RBO_P = 0.95
"""``repro_eval``'s default persistence of RBO (its ``RBO_P``)."""
RBO_DEPTH = 1000
"""``repro_eval``'s default RBO depth and KTU cut (its ``RBO_DEPTH`` and ``RUN_LENGTH``)."""

MEASURES = {"rbo": "RBO", "ktu": "KTU", "jaccard": "Jaccard"}
"""The similarity measures by lower-case name, to their canonical spelling."""

_DEFAULT_CUTOFF = {"RBO": RBO_DEPTH, "KTU": RBO_DEPTH, "Jaccard": None}


@frozen
class SimilarityMeasure:
    """One bound similarity measure: ``name`` (``RBO``, ``KTU`` or ``Jaccard``), RBO's ``p`` and the
    ``cutoff`` (the depth; ``None`` for the whole rankings). ``str()`` is the canonical text."""

    name: str
    cutoff: int | None
    p: float | None = None

    def __str__(self) -> str:
        text = self.name
        if self.p is not None and self.p != RBO_P:
            text += f"(p={syntax.format_number(self.p)})"
        if self.cutoff is not None and self.cutoff != _DEFAULT_CUTOFF[self.name]:
            text += f"@{self.cutoff}"
        return text

    def compute(self, a: Sequence[str], b: Sequence[str]) -> float:
        """The measure between two rankings, best first."""
        if self.name == "RBO":
            assert self.p is not None and self.cutoff is not None
            return rbo(a, b, self.p, self.cutoff)
        if self.name == "KTU":
            return ktu(a, b, self.cutoff)
        return jaccard(a, b, self.cutoff)


def rbo(a: Sequence[str], b: Sequence[str], p: float = RBO_P, depth: int = RBO_DEPTH) -> float:
    """Rank-biased overlap of ``a`` and ``b`` to ``depth``, normalised by the weights summed (see the
    module docstring): 1 for two equal lists of at least ``depth`` documents, 0 for disjoint ones."""
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    overlap = 0
    score = 0.0
    normalizer = 0.0
    weight = 1.0
    # Summed in rank order with the weight multiplied step by step, as repro_eval does, so that the
    # values agree to the last bits rather than to a rounding error.
    listed = min(depth, max(len(a), len(b)))
    for i in range(listed):
        if i < len(a):
            x = a[i]
            seen_a.add(x)
            overlap += x in seen_b
        if i < len(b):
            y = b[i]
            seen_b.add(y)
            overlap += y in seen_a
        score += weight * overlap / (i + 1)
        normalizer += weight
        weight *= p
    # Past both lists the overlap stays as it is: the same steps, in the same order, by numpy's
    # accumulations, which run element after element as the loop does (a run of 100 documents at depth
    # 1000 took 900 steps of Python), a block at a time (any depth in bounded memory)
    for start in range(listed, depth, _BLOCK):
        end = min(start + _BLOCK, depth)
        weights = np.multiply.accumulate(np.concatenate(([weight], np.full(end - start - 1, p))))
        terms = weights * overlap / np.arange(start + 1, end + 1, dtype=np.float64)
        score = float(np.add.accumulate(np.concatenate(([score], terms)))[-1])
        normalizer = float(np.add.accumulate(np.concatenate(([normalizer], weights)))[-1])
        weight = float(weights[-1]) * p
    return score / normalizer


_BLOCK = 1 << 16
"""The ranks past both lists that :func:`rbo` sums at once."""


def ktu(a: Sequence[str], b: Sequence[str], depth: int | None = RBO_DEPTH) -> float:
    """Kendall's tau "union" of ``a`` and ``b`` cut at ``depth``, as ``repro_eval`` computes it (see the
    module docstring); both lists cut to the shorter one; NaN with fewer than two ranks in common."""
    n = min(len(a), len(b), len(a) if depth is None else depth)
    if n < 2:
        return math.nan
    # Positions in the sorted union order the ids as the union's sort does: the ids' string order.
    union, codes = np.unique(np.array(list(a[:n]) + list(b[:n]), dtype=object), return_inverse=True)
    del union
    return kendall_tau_b(codes[:n].astype(float), codes[n:].astype(float))


def jaccard(a: Sequence[str], b: Sequence[str], depth: int | None = None) -> float:
    """``|A & B| / |A | B|`` of the top ``depth`` of each list (the whole lists for ``None``); NaN when
    both are empty."""
    top_a = set(a if depth is None else a[:depth])
    top_b = set(b if depth is None else b[:depth])
    union = len(top_a | top_b)
    return len(top_a & top_b) / union if union else math.nan


def parse_similarity(text: str | Sequence[str]) -> list[SimilarityMeasure]:
    """Similarity measures from spec text (``"RBO(p=0.9)@100, KTU@100, Jaccard@10"``, or a list of
    texts): the metric-spec grammar, names bound to :data:`MEASURES`. Duplicates dropped, first kept.

    Raises :class:`~irspec.errors.SpecSyntaxError` (with the position) for text off the grammar and
    :class:`~irspec.errors.SpecError` or :class:`~irspec.errors.ParameterError` for an unknown name, a
    parameter the measure lacks or a value out of range.
    """
    texts = [text] if isinstance(text, str) else list(text)
    found: list[SimilarityMeasure] = []
    for item in texts:
        for node in syntax.parse_syntax(item):
            measure = _bind(node, item)
            if measure not in found:
                found.append(measure)
    if not found:
        raise SpecError("no similarity measures given")
    return found


def _bind(node: syntax.SpecNode, text: str) -> SimilarityMeasure:
    name = MEASURES.get(node.name.lower())
    if name is None:
        close = suggest(node.name, list(MEASURES.values()))
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise SpecSyntaxError(
            text,
            node.start,
            f"unknown similarity measure {node.name!r}{hint}; known: {', '.join(MEASURES.values())}",
        )
    if node.args:
        raise ParameterError(name, None, "takes its parameters by name, as p=0.9")
    p: float | None = RBO_P if name == "RBO" else None
    for key, value in node.kwargs:
        if name != "RBO" or key.lower() != "p":
            raise ParameterError(name, key, "unknown parameter" + ("; RBO takes p" if name == "RBO" else ""))
        p = _number(value, name, key)
        if not 0 < p <= 1:
            raise ParameterError(name, key, f"must be a number in (0, 1], got {syntax.format_number(p)}")
    cutoff = _DEFAULT_CUTOFF[name]
    if node.cutoff is not None:
        depth = _number(node.cutoff, name, "@")
        if depth != int(depth) or depth < 1:
            raise ParameterError(name, "@", f"the cutoff must be a whole number >= 1, got {depth!r}")
        cutoff = int(depth)
    return SimilarityMeasure(name, cutoff, p)


def _number(expr: syntax.Expr, name: str, key: str) -> float:
    try:
        value = syntax.evaluate_expr(expr, {})
    except Exception:
        value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(name, key, f"must be a number, got {syntax.expr_text(expr)!r}")
    return value
