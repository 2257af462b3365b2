"""The array operations the retrieval kernels use, for numpy arrays and for torch tensors.

The kernels (:mod:`irspec.compat.torchmetrics.retrieval`) are written once against :class:`Ops` and
run as numpy or as torch. :class:`Route` decides which: numpy for numpy arrays and for tensors on the
CPU (their numpy views, without a copy: numpy's sorts and gathers are several times torch's there),
torch for tensors on any other device, where the work stays. Only the operations whose spelling
differs between the two libraries are here; indexing, arithmetic and comparisons are written as usual.

torch is imported only by :class:`TorchOps`, made for the first tensor (:func:`ops_for`).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["NumpyOps", "Ops", "Route", "TorchOps", "descending_key", "is_tensor", "ops_for", "torch_ops"]


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a torch tensor, without importing torch when it is not loaded (a tensor cannot
    exist before torch is)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "device")


class Ops:
    """What :class:`NumpyOps` and :class:`TorchOps` both provide (arrays are ``Any``: either kind)."""

    name: str
    float32: Any
    float64: Any
    int64: Any
    block_rows: int | None
    """How many rows the kernels take at a time (whole queries; None: all at once). On the CPU a block's
    temporaries stay in the cache and are reused rather than newly mapped, which is most of the time of
    large inputs."""

    def asarray(self, x: Any, like: Any = None) -> Any:
        """``x`` as an array of this library (on ``like``'s device); an array of it is returned as is."""
        raise NotImplementedError

    def arange(self, n: int, like: Any) -> Any:
        """0, ..., n - 1 (int64)."""
        raise NotImplementedError

    def zeros(self, shape: int | tuple[int, ...], dtype: Any, like: Any) -> Any:
        """Zeros of ``dtype`` on ``like``'s device."""
        raise NotImplementedError

    def full(self, n: int, value: Any, dtype: Any, like: Any) -> Any:
        """``n`` times ``value``."""
        raise NotImplementedError

    def cast(self, x: Any, dtype: Any) -> Any:
        """``x`` as ``dtype`` (not copied when it is one)."""
        raise NotImplementedError

    def is_floating(self, x: Any) -> bool:
        """Whether ``x`` holds floating-point numbers."""
        raise NotImplementedError

    def is_label_integer(self, x: Any) -> bool:
        """Whether ``x`` holds the integers torchmetrics takes as targets: bool, 32- or 64-bit integers."""
        raise NotImplementedError

    def argsort(self, x: Any) -> Any:
        """Stable ascending order of ``x`` (equal values keep their order)."""
        raise NotImplementedError

    def sort(self, x: Any) -> Any:
        """int64 ``x`` in ascending order (numpy: in place; numpy sorts numbers several times faster
        than it sorts their indices)."""
        raise NotImplementedError

    def float_bits(self, x: Any) -> Any:
        """float32 ``x``'s bits as int32 (a view where it can be)."""
        raise NotImplementedError

    def cumsum(self, x: Any) -> Any:
        """Running sums of a 1-D array (of a bool array: int64 counts)."""
        raise NotImplementedError

    def segment_sum(self, x: Any, starts: Any, ids: Any, count: int) -> Any:
        """Sum of ``x`` over each segment: rows ``starts[i]`` to ``starts[i + 1] - 1``, every row's segment
        being ``ids`` (sorted); no segment is empty. Integers add up as int64, bools are counted, floats
        add up in float64. Each segment adds its own rows, so a small segment's sum loses nothing to the
        large sums of the others (a difference of running sums would)."""
        raise NotImplementedError

    def scatter_sum(self, ids: Any, weights: Any, count: int) -> Any:
        """Per segment 0, ..., count - 1, the sum of ``weights`` (1 each when None) over the rows of
        ``ids``, in float64."""
        raise NotImplementedError

    def where(self, condition: Any, x: Any, y: Any) -> Any:
        """``x`` where ``condition`` holds, else ``y`` (either may be a number)."""
        raise NotImplementedError

    def flatnonzero(self, mask: Any) -> Any:
        """The indices where a 1-D ``mask`` is true."""
        raise NotImplementedError

    def concat(self, parts: list[Any]) -> Any:
        """Arrays end to end, along their first dimension."""
        raise NotImplementedError

    def sigmoid32(self, x: Any) -> Any:
        """The logistic function of float32 ``x``, in float32 (where large scores tie at 1, as in
        torchmetrics' AUROC)."""
        raise NotImplementedError

    def log2(self, x: Any) -> Any:
        """Base-2 logarithm."""
        raise NotImplementedError

    def lower_median(self, x: Any, dim: int | None) -> Any:
        """torch's median: the lower of the two middle values (numpy's averages them)."""
        raise NotImplementedError

    def item(self, x: Any) -> Any:
        """A 0-d array's value as a Python number."""
        return x.item()


class NumpyOps(Ops):
    """:class:`Ops` of numpy arrays."""

    name = "numpy"
    float32 = np.float32
    float64 = np.float64
    int64 = np.int64
    block_rows = 1 << 17

    def asarray(self, x: Any, like: Any = None) -> Any:
        return x if isinstance(x, np.ndarray) else np.asarray(x)

    def arange(self, n: int, like: Any) -> Any:
        return np.arange(n, dtype=np.int64)

    def zeros(self, shape: int | tuple[int, ...], dtype: Any, like: Any) -> Any:
        return np.zeros(shape, dtype=dtype)

    def full(self, n: int, value: Any, dtype: Any, like: Any) -> Any:
        return np.full(n, value, dtype=dtype)

    def cast(self, x: Any, dtype: Any) -> Any:
        return x.astype(dtype, copy=False)

    def is_floating(self, x: Any) -> bool:
        return bool(np.issubdtype(x.dtype, np.floating))

    def is_label_integer(self, x: Any) -> bool:
        return x.dtype in (np.bool_, np.int32, np.int64)

    def argsort(self, x: Any) -> Any:
        return np.argsort(x, kind="stable")

    def sort(self, x: Any) -> Any:
        x.sort()
        return x

    def float_bits(self, x: Any) -> Any:
        return np.ascontiguousarray(x, dtype=np.float32).view(np.int32)

    def cumsum(self, x: Any) -> Any:
        return np.cumsum(x, dtype=np.int64 if x.dtype == np.bool_ else None)

    def segment_sum(self, x: Any, starts: Any, ids: Any, count: int) -> Any:
        if not count:
            return np.zeros(0, dtype=np.float64 if self.is_floating(x) else np.int64)
        dtype = np.float64 if self.is_floating(x) else np.int64
        return np.add.reduceat(x, starts, dtype=dtype)

    def scatter_sum(self, ids: Any, weights: Any, count: int) -> Any:
        return np.bincount(ids, weights=weights, minlength=count).astype(np.float64, copy=False)

    def where(self, condition: Any, x: Any, y: Any) -> Any:
        return np.where(condition, x, y)

    def flatnonzero(self, mask: Any) -> Any:
        return np.flatnonzero(mask)

    def concat(self, parts: list[Any]) -> Any:
        return np.concatenate(parts)

    def sigmoid32(self, x: Any) -> Any:
        x = np.ascontiguousarray(x, dtype=np.float32)
        torch = sys.modules.get("torch")
        if torch is not None:  # torch's own values, bit for bit, as torchmetrics ties them
            return torch.sigmoid(torch.from_numpy(x)).numpy()
        with np.errstate(over="ignore"):
            one = np.float32(1)
            return one / (one + np.exp(-x))

    def log2(self, x: Any) -> Any:
        return np.log2(x)

    def lower_median(self, x: Any, dim: int | None) -> Any:
        if dim is None:
            flat = np.sort(x, axis=None)
            return flat[(len(flat) - 1) // 2]
        return np.take(np.sort(x, axis=dim), (x.shape[dim] - 1) // 2, axis=dim)


class TorchOps(Ops):
    """:class:`Ops` of torch tensors, on the device of the tensors given."""

    name = "torch"
    block_rows = None  # a device computes a whole input at once

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.float32 = torch.float32
        self.float64 = torch.float64
        self.int64 = torch.int64

    def asarray(self, x: Any, like: Any = None) -> Any:
        torch = self.torch
        if isinstance(x, torch.Tensor):
            return x
        device = like.device if isinstance(like, torch.Tensor) else None
        if isinstance(x, np.ndarray):
            return torch.from_numpy(x).to(device) if device is not None else torch.from_numpy(x)
        return torch.as_tensor(x, device=device)

    def arange(self, n: int, like: Any) -> Any:
        return self.torch.arange(n, dtype=self.torch.int64, device=like.device)

    def zeros(self, shape: int | tuple[int, ...], dtype: Any, like: Any) -> Any:
        return self.torch.zeros(shape, dtype=dtype, device=like.device)

    def full(self, n: int, value: Any, dtype: Any, like: Any) -> Any:
        return self.torch.full((n,), value, dtype=dtype, device=like.device)

    def cast(self, x: Any, dtype: Any) -> Any:
        return x.to(dtype)

    def is_floating(self, x: Any) -> bool:
        return bool(x.is_floating_point())

    def is_label_integer(self, x: Any) -> bool:
        return x.dtype in (self.torch.bool, self.torch.int32, self.torch.int64)

    def argsort(self, x: Any) -> Any:
        return self.torch.sort(x, stable=True)[1]

    def sort(self, x: Any) -> Any:
        return self.torch.sort(x)[0]

    def float_bits(self, x: Any) -> Any:
        return x.to(self.torch.float32).contiguous().view(self.torch.int32)

    def cumsum(self, x: Any) -> Any:
        return self.torch.cumsum(x, 0, dtype=self.torch.int64 if x.dtype == self.torch.bool else None)

    def segment_sum(self, x: Any, starts: Any, ids: Any, count: int) -> Any:
        dtype = self.torch.float64 if x.is_floating_point() else self.torch.int64
        return self.torch.zeros(count, dtype=dtype, device=x.device).index_add_(0, ids, x.to(dtype))

    def scatter_sum(self, ids: Any, weights: Any, count: int) -> Any:
        out = self.torch.zeros(count, dtype=self.torch.float64, device=ids.device)
        if weights is None:
            weights = self.torch.ones(len(ids), dtype=self.torch.float64, device=ids.device)
        return out.index_add_(0, ids, weights.to(self.torch.float64))

    def where(self, condition: Any, x: Any, y: Any) -> Any:
        return self.torch.where(condition, x, y)

    def flatnonzero(self, mask: Any) -> Any:
        return self.torch.nonzero(mask).flatten()

    def concat(self, parts: list[Any]) -> Any:
        return self.torch.cat(parts)

    def sigmoid32(self, x: Any) -> Any:
        return self.torch.sigmoid(x.to(self.torch.float32))

    def log2(self, x: Any) -> Any:
        return self.torch.log2(x)

    def lower_median(self, x: Any, dim: int | None) -> Any:
        return x.median() if dim is None else x.median(dim=dim).values


def descending_key(ops: Ops, x: Any) -> Any:
    """An int64 key of float32 ``x`` in [0, 2**32) that orders as ``x`` descending: equal floats have
    equal keys (0.0 and -0.0 too), NaN comes first (where torch's descending sort puts it)."""
    x = x + 0.0  # -0.0 made 0.0
    if bool((x != x).any()):
        x = ops.where(x != x, float("nan"), x)  # one NaN
    bits = ops.float_bits(x)
    # a float's bits order as a signed integer once a negative float's magnitude bits are flipped
    ascending = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    return (2**31 - 1) - ops.cast(ascending, ops.int64)


_NUMPY = NumpyOps()
_TORCH: list[TorchOps] = []


def torch_ops() -> TorchOps:
    """The :class:`TorchOps` (torch imported on first use)."""
    if not _TORCH:
        _TORCH.append(TorchOps())
    return _TORCH[0]


def ops_for(*arrays: Any) -> Ops:
    """:class:`TorchOps` when any of ``arrays`` is a tensor, else :class:`NumpyOps`."""
    return torch_ops() if any(is_tensor(a) for a in arrays) else _NUMPY


CPU_TENSORS = "numpy"
"""What computes on tensors on the CPU: ``numpy`` (their views), or ``torch`` (the tests set it, to run
the torch kernels that a GPU runs on a machine without one)."""


class Route:
    """Where a computation on ``arrays`` runs: :attr:`io` are the operations of the inputs (their checks,
    and the kind of the results), :attr:`ops` those computed with: numpy for numpy arrays and for tensors
    on the CPU, viewed without a copy, torch on any other device. ``like`` is an input, for results made
    from nothing (on its device)."""

    def __init__(self, *arrays: Any) -> None:
        self.io = ops_for(*arrays)
        on_cpu = all(a.device.type == "cpu" for a in arrays if is_tensor(a))
        self.ops: Ops = _NUMPY if on_cpu and CPU_TENSORS == "numpy" else self.io
        self.like = arrays[0]

    def inward(self, x: Any) -> Any:
        """An input as :attr:`ops` computes on it (a CPU tensor's numpy view)."""
        return x.detach().numpy() if self.ops is _NUMPY and is_tensor(x) else x

    def outward(self, x: Any) -> Any:
        """A result as the inputs were: a tensor (on the CPU) of what numpy computed for tensors."""
        if self.io is self.ops:
            return x
        x = np.asarray(x)
        return torch_ops().torch.from_numpy(x if x.flags.c_contiguous else x.copy())
