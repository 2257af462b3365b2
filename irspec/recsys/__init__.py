"""Recommender and extreme-classification evaluation: held-out interactions as a sparse matrix.

- :mod:`~irspec.recsys.matrices`: :func:`evaluate_topk` (a users × k array of recommended items) and
  :func:`evaluate_scores` (a score matrix, dense or in row chunks, whose top k is found here) against a
  scipy.sparse users × items matrix, with the training interactions excluded; also ``irspec.evaluate_topk``
  and ``irspec.evaluate_scores``;
- :mod:`~irspec.recsys.propensity`: :func:`jain_propensity`, Jain et al.'s propensity model, for the
  propensity-scored metrics (PSP@k, PSnDCG@k);
- :mod:`~irspec.recsys.tables`: :func:`read_tables`, interaction tables (Parquet files, polars or pandas
  frames) read into those matrices over one index of users and items, the users' ids kept, and
  :func:`evaluate_tables`, several systems' tables read and evaluated over that one index;
- :mod:`~irspec.recsys.sampling`: :func:`sampled`, each held-out item ranked against n sampled negatives,
  raw, exact and corrected as Krichene and Rendle (KDD 2020) define the correction.

The names load with their module on first use, as ``import irspec``'s do (scipy is not loaded by
``import irspec.recsys``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irspec.lazy import lazy_names

if TYPE_CHECKING:
    from irspec.recsys.matrices import evaluate_scores, evaluate_topk, top_items
    from irspec.recsys.propensity import jain_propensity
    from irspec.recsys.sampling import SampledMetric, SampledResult, sampled
    from irspec.recsys.tables import Columns, Tables, evaluate_tables, read_tables

_LAZY: dict[str, str] = {
    "evaluate_topk": "irspec.recsys.matrices",
    "evaluate_scores": "irspec.recsys.matrices",
    "top_items": "irspec.recsys.matrices",
    "jain_propensity": "irspec.recsys.propensity",
    "sampled": "irspec.recsys.sampling",
    "SampledMetric": "irspec.recsys.sampling",
    "SampledResult": "irspec.recsys.sampling",
    "read_tables": "irspec.recsys.tables",
    "evaluate_tables": "irspec.recsys.tables",
    "Columns": "irspec.recsys.tables",
    "Tables": "irspec.recsys.tables",
}

__all__ = [
    "Columns",
    "SampledMetric",
    "SampledResult",
    "Tables",
    "evaluate_scores",
    "evaluate_tables",
    "evaluate_topk",
    "jain_propensity",
    "read_tables",
    "sampled",
    "top_items",
]

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
