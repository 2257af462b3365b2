"""torchmetrics' functional retrieval metrics (``torchmetrics.functional.retrieval``): one query's value.

Each takes ``preds`` and ``target`` of one shape (flattened: one query) and returns a float32 scalar:
a 0-d tensor on the inputs' device for tensors, a numpy float32 for numpy arrays. Arguments, checks,
errors and values are torchmetrics 1.9's (:mod:`.retrieval` says where its definitions differ from
trec_eval's, and where tied scores are ordered).
"""

from __future__ import annotations

from typing import Any

from irspec.compat.torchmetrics import checks
from irspec.compat.torchmetrics import retrieval as kernels
from irspec.compat.torchmetrics.backend import Route

__all__ = [
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


def _query(preds: Any, target: Any, allow_non_binary_target: bool = False) -> kernels.Queries:
    """``preds`` and ``target`` checked and ranked as one query (its ``route`` says where it is computed)."""
    route = Route(preds, target)
    preds = route.io.asarray(preds)
    target = route.io.asarray(target, like=preds)
    preds, target = checks.check_functional_inputs(route.io, preds, target, allow_non_binary_target)
    preds, target = route.inward(preds), route.inward(target)
    ops = route.ops
    q = kernels.Queries.ranked(ops, ops.zeros(len(preds), ops.int64, preds), preds, target)
    q.route = route
    return q


def _out(q: kernels.Queries, values: Any) -> Any:
    """Values computed as float32, of the inputs' kind."""
    return q.route.outward(q.ops.cast(values, q.ops.float32))


def _scalar(q: kernels.Queries, values: Any) -> Any:
    """The one query's value as float32 (a 0-d tensor, or a numpy float32)."""
    return _out(q, values)[0]


def _positive_k(top_k: Any) -> None:
    """Average precision's and reciprocal rank's own check of ``top_k``, as torchmetrics writes it, then
    ``torch.topk``'s, which torchmetrics calls on every query (a negative or float ``top_k`` fails there)."""
    if not isinstance(top_k, int) and top_k <= 0:
        raise ValueError(f"Argument ``top_k`` has to be a positive integer or None, but got {top_k}.")
    checks.topk_size(top_k)


def _size(q: kernels.Queries) -> int:
    return len(q.pos)


def retrieval_average_precision(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Average precision: the mean of the precisions at the relevant documents (target and score above 0)
    within the top ``top_k``; 0 without one.

    >>> import numpy as np
    >>> float(retrieval_average_precision(np.array([0.2, 0.3, 0.5]), np.array([True, False, True])))
    0.8333333...
    """
    q = _query(preds, target)
    top_k = top_k or _size(q)
    _positive_k(top_k)
    return _scalar(q, kernels.average_precision(q, top_k))


def retrieval_reciprocal_rank(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Reciprocal rank: 1 / the rank of the first relevant document (target and score above 0) within the
    top ``top_k``; 0 without one."""
    q = _query(preds, target)
    top_k = top_k or _size(q)
    _positive_k(top_k)
    return _scalar(q, kernels.reciprocal_rank(q, top_k))


def retrieval_precision(preds: Any, target: Any, top_k: int | None = None, adaptive_k: bool = False) -> Any:
    """Precision@k: the targets (scores above 0) within the top ``top_k``, over ``top_k``; ``top_k`` is
    the number of documents when None, or with ``adaptive_k`` when there are fewer."""
    q = _query(preds, target)
    checks.check_adaptive_k(adaptive_k)
    if top_k is None or (adaptive_k and top_k > _size(q)):
        top_k = _size(q)
    checks.check_top_k(top_k)
    return _scalar(q, kernels.precision(q, top_k))


def retrieval_recall(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Recall@k: the targets (scores above 0) within the top ``top_k``, over all the targets; 0 without
    a positive target."""
    q = _query(preds, target)
    checks.check_top_k(top_k)
    return _scalar(q, kernels.recall(q, top_k))


def retrieval_hit_rate(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Hit rate@k: 1 when a positive target is within the top ``top_k``, else 0."""
    q = _query(preds, target)
    checks.check_top_k(top_k)
    return _scalar(q, kernels.hit_rate(q, top_k))


def retrieval_fall_out(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Fall-out@k: the non-relevant documents within the top ``top_k``, over all the non-relevant ones;
    0 without one."""
    q = _query(preds, target)
    checks.check_top_k(top_k)
    return _scalar(q, kernels.fall_out(q, top_k))


def retrieval_r_precision(preds: Any, target: Any) -> Any:
    """R-precision: the targets within the top R, over R, the number of relevant documents; 0 without
    one."""
    q = _query(preds, target)
    return _scalar(q, kernels.r_precision(q))


def retrieval_normalized_dcg(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """nDCG@k: DCG over ideal DCG within the top ``top_k``, the gain being the target itself (graded and
    negative targets taken), tied scores sharing their mean gain; 0 when the ideal DCG is 0.

    >>> import numpy as np
    >>> preds, target = np.array([0.1, 0.2, 0.3, 4, 70]), np.array([10, 0, 0, 1, 5])
    >>> round(float(retrieval_normalized_dcg(preds, target)), 4)
    0.6957
    """
    q = _query(preds, target, allow_non_binary_target=True)
    checks.check_top_k(top_k)
    return _scalar(q, kernels.normalized_dcg(q, top_k))


def retrieval_auroc(preds: Any, target: Any, top_k: int | None = None, max_fpr: float | None = None) -> Any:
    """AUROC of the top ``top_k`` documents (with ``max_fpr``, the McClish-standardised partial area up
    to that false positive rate); 0 when they lack a relevant or a non-relevant document."""
    q = _query(preds, target)
    top_k = top_k or _size(q)
    checks.check_top_k(top_k)
    return _scalar(q, kernels.auroc(q, top_k, max_fpr))


def retrieval_precision_recall_curve(
    preds: Any, target: Any, max_k: int | None = None, adaptive_k: bool = False
) -> tuple[Any, Any, Any]:
    """Precision and recall at k = 1, ..., ``max_k`` (the number of documents when None), and those k
    (with ``adaptive_k``, k stops at the number of documents): ``(precisions, recalls, top_k)``."""
    q = _query(preds, target)
    checks.check_adaptive_k(adaptive_k)
    if max_k is None:
        max_k = _size(q)
    checks.check_top_k(max_k, name="max_k")
    precisions, recalls = kernels.curve_values(q, max_k, adaptive_k)
    return (
        _out(q, precisions[0]),
        _out(q, recalls[0]),
        q.route.outward(kernels.curve_ks(q, max_k, adaptive_k)),
    )
