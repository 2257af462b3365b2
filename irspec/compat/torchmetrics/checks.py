"""torchmetrics' checks of a retrieval metric's inputs and arguments, with its exceptions and messages.

Code that catches torchmetrics' errors, and torchmetrics' own tests, match them by type and text: every
message here is torchmetrics 1.9's, word for word, raised at the same point (its argument checks are
kept as written, including those that let a value through: ``RetrievalMAP(top_k=-1)`` is accepted
and fails when computed, as there). Arrays are numpy arrays or torch tensors (:mod:`.backend`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irspec.compat.torchmetrics.backend import Ops

__all__ = [
    "EMPTY_ACTIONS",
    "check_adaptive_k",
    "check_aggregation",
    "check_empty_target_action",
    "check_functional_inputs",
    "check_ignore_index",
    "check_inputs",
    "check_top_k",
    "topk_size",
]

EMPTY_ACTIONS = ("error", "skip", "neg", "pos")
AGGREGATIONS = ("mean", "median", "min", "max")


def check_empty_target_action(value: Any) -> None:
    """``empty_target_action`` is one of :data:`EMPTY_ACTIONS`."""
    if value not in EMPTY_ACTIONS:
        raise ValueError(f"Argument `empty_target_action` received a wrong value `{value}`.")


def check_ignore_index(value: Any) -> None:
    """``ignore_index`` is an integer or None."""
    if value is not None and not isinstance(value, int):
        raise ValueError("Argument `ignore_index` must be an integer or None.")


def check_aggregation(value: Any) -> None:
    """``aggregation`` is mean, median, min, max or a callable."""
    if not (value in AGGREGATIONS or callable(value)):
        raise ValueError(
            "Argument `aggregation` must be one of `mean`, `median`, `min`, `max` or a custom callable function"
            f"which takes tensor of values, but got {value}."
        )


def check_top_k(value: Any, name: str = "top_k") -> None:
    """A positive integer or None (the check of most metrics; MAP's and MRR's are their own)."""
    if value is not None and not (isinstance(value, int) and value > 0):
        raise ValueError(f"`{name}` has to be a positive integer or None")


def check_adaptive_k(value: Any) -> None:
    """``adaptive_k`` is a bool."""
    if not isinstance(value, bool):
        raise ValueError("`adaptive_k` has to be a boolean")


def topk_size(k: Any) -> int:
    """``k`` as ``torch.topk`` takes it (average precision and reciprocal rank pass theirs through):
    a float is a ``TypeError``, a negative number a ``RuntimeError``, torch's own errors."""
    if not isinstance(k, (int, np.integer)):
        raise TypeError(f"topk(): argument 'k' (position 1) must be int, not {type(k).__name__}")
    if k < 0:
        raise RuntimeError("selected index k out of range")
    return int(k)


def _is_floating(ops: Ops, x: Any) -> bool:
    return ops.is_floating(x)


def _target_and_preds(ops: Ops, preds: Any, target: Any, allow_non_binary_target: bool) -> tuple[Any, Any]:
    """torchmetrics' type checks: target of booleans, 32- or 64-bit integers or floats (in [0, 1] unless
    ``allow_non_binary_target``), preds of floats; returned flat, preds as float32 and target as float32
    or int64."""
    if not ops.is_label_integer(target) and not _is_floating(ops, target):
        raise ValueError("`target` must be a tensor of booleans, integers or floats")
    if not _is_floating(ops, preds):
        raise ValueError("`preds` must be a tensor of floats")
    if not allow_non_binary_target and (bool(target.max() > 1) or bool(target.min() < 0)):
        raise ValueError("`target` must contain `binary` values")
    target = ops.cast(target, ops.float32 if _is_floating(ops, target) else ops.int64)
    return ops.cast(preds, ops.float32).reshape(-1), target.reshape(-1)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape)


def check_functional_inputs(
    ops: Ops, preds: Any, target: Any, allow_non_binary_target: bool = False
) -> tuple[Any, Any]:
    """A functional metric's ``preds`` and ``target``: the same shape, not empty nor a scalar, and of the
    types :func:`_target_and_preds` takes."""
    if _shape(preds) != _shape(target):
        raise ValueError("`preds` and `target` must be of the same shape")
    if not _size(preds) or not _shape(preds):
        raise ValueError("`preds` and `target` must be non-empty and non-scalar tensors")
    return _target_and_preds(ops, preds, target, allow_non_binary_target)


def _size(x: Any) -> int:
    return int(np.prod(_shape(x)))


def check_inputs(
    ops: Ops,
    indexes: Any,
    preds: Any,
    target: Any,
    allow_non_binary_target: bool = False,
    ignore_index: int | None = None,
) -> tuple[Any, Any, Any]:
    """A metric's ``update`` arguments: the same shape, ``indexes`` of 64-bit integers, the rows whose
    target is ``ignore_index`` removed, then not empty, and the types of :func:`_target_and_preds`;
    returned flat (indexes int64)."""
    if indexes is None:
        raise ValueError("Argument `indexes` cannot be None")
    if _shape(indexes) != _shape(preds) or _shape(preds) != _shape(target):
        raise ValueError("`indexes`, `preds` and `target` must be of the same shape")
    if indexes.dtype != ops.int64:
        raise ValueError("`indexes` must be a tensor of long integers")
    if ignore_index is not None:
        keep = target != ignore_index
        indexes, preds, target = indexes[keep], preds[keep], target[keep]
    if not _size(indexes) or not _shape(indexes):
        raise ValueError("`indexes`, `preds` and `target` must be non-empty and non-scalar tensors")
    preds, target = _target_and_preds(ops, preds, target, allow_non_binary_target)
    return indexes.reshape(-1), preds, target
