"""torchmetrics' retrieval metrics, every query at once: code written against torchmetrics changes one line.

>>> from irspec.compat.torchmetrics import RetrievalNormalizedDCG  # was: from torchmetrics.retrieval import ...
>>> import numpy as np
>>> metric = RetrievalNormalizedDCG(top_k=2)
>>> metric.update(np.array([0.9, 0.2, 0.4, 0.8]), np.array([1, 0, 2, 0]), indexes=np.array([0, 0, 1, 1]))
>>> round(float(metric.compute()), 4)
0.8155

The classes are torchmetrics 1.9's (``RetrievalMAP``, ``RetrievalMRR``, ``RetrievalNormalizedDCG``,
``RetrievalPrecision``, ``RetrievalRecall``, ``RetrievalHitRate``, ``RetrievalFallOut``,
``RetrievalRPrecision``, ``RetrievalAUROC``, ``RetrievalPrecisionRecallCurve``,
``RetrievalRecallAtFixedPrecision``), with its arguments (``top_k``, ``adaptive_k``, ``max_k``,
``max_fpr``, ``min_precision``, ``empty_target_action``, ``ignore_index``, ``aggregation``), checks,
errors and values; where torchmetrics is installed they are ``torchmetrics.Metric`` subclasses with its
states, so DDP and Lightning work unchanged. The functional forms are in
:mod:`irspec.compat.torchmetrics.functional` (``torchmetrics.functional.retrieval``'s). They take torch
tensors, on any device, or numpy arrays.

torchmetrics computes each query in a Python loop; here the rows are sorted once and every query is
computed by whole-array operations (:mod:`.retrieval`, which also says how its definitions differ from
trec_eval's, and how tied scores are ordered).

Importing this package loads neither numpy nor torch: a class or function is loaded when first named,
and torch when torchmetrics is installed or a tensor is given.
"""

from __future__ import annotations

from irspec.lazy import lazy_names

_LAZY = {
    "RetrievalAUROC": "irspec.compat.torchmetrics.metrics",
    "RetrievalFallOut": "irspec.compat.torchmetrics.metrics",
    "RetrievalHitRate": "irspec.compat.torchmetrics.metrics",
    "RetrievalMAP": "irspec.compat.torchmetrics.metrics",
    "RetrievalMRR": "irspec.compat.torchmetrics.metrics",
    "RetrievalNormalizedDCG": "irspec.compat.torchmetrics.metrics",
    "RetrievalPrecision": "irspec.compat.torchmetrics.metrics",
    "RetrievalPrecisionRecallCurve": "irspec.compat.torchmetrics.metrics",
    "RetrievalRPrecision": "irspec.compat.torchmetrics.metrics",
    "RetrievalRecall": "irspec.compat.torchmetrics.metrics",
    "RetrievalRecallAtFixedPrecision": "irspec.compat.torchmetrics.metrics",
    "retrieval_auroc": "irspec.compat.torchmetrics.functional",
    "retrieval_average_precision": "irspec.compat.torchmetrics.functional",
    "retrieval_fall_out": "irspec.compat.torchmetrics.functional",
    "retrieval_hit_rate": "irspec.compat.torchmetrics.functional",
    "retrieval_normalized_dcg": "irspec.compat.torchmetrics.functional",
    "retrieval_precision": "irspec.compat.torchmetrics.functional",
    "retrieval_precision_recall_curve": "irspec.compat.torchmetrics.functional",
    "retrieval_r_precision": "irspec.compat.torchmetrics.functional",
    "retrieval_recall": "irspec.compat.torchmetrics.functional",
    "retrieval_reciprocal_rank": "irspec.compat.torchmetrics.functional",
}

__all__ = [
    "RetrievalAUROC",
    "RetrievalFallOut",
    "RetrievalHitRate",
    "RetrievalMAP",
    "RetrievalMRR",
    "RetrievalNormalizedDCG",
    "RetrievalPrecision",
    "RetrievalPrecisionRecallCurve",
    "RetrievalRPrecision",
    "RetrievalRecall",
    "RetrievalRecallAtFixedPrecision",
    "retrieval_auroc",
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_precision_recall_curve",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]

__getattr__, __dir__ = lazy_names(globals(), _LAZY, submodules=("functional",))
