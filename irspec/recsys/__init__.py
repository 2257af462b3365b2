"""Recommender and extreme-classification evaluation: held-out interactions as a sparse matrix.

- :mod:`~irspec.recsys.matrices`: :func:`evaluate_topk` (a users × k array of recommended items) and
  :func:`evaluate_scores` (a score matrix, dense or in row chunks, whose top k is found here) against a
  scipy.sparse users × items matrix, with the training interactions excluded; also ``irspec.evaluate_topk``
  and ``irspec.evaluate_scores``;
- :mod:`~irspec.recsys.propensity`: :func:`jain_propensity`, Jain et al.'s propensity model, for the
  propensity-scored metrics (PSP@k, PSnDCG@k).

The names load with their module on first use, as ``import irspec``'s do (scipy is not loaded by
``import irspec.recsys``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irspec.lazy import lazy_names

if TYPE_CHECKING:
    from irspec.recsys.matrices import evaluate_scores, evaluate_topk, top_items
    from irspec.recsys.propensity import jain_propensity

_LAZY: dict[str, str] = {
    "evaluate_topk": "irspec.recsys.matrices",
    "evaluate_scores": "irspec.recsys.matrices",
    "top_items": "irspec.recsys.matrices",
    "jain_propensity": "irspec.recsys.propensity",
}

__all__ = ["evaluate_scores", "evaluate_topk", "jain_propensity", "top_items"]

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
