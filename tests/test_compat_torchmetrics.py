"""``irspec.compat.torchmetrics`` against torchmetrics itself: the same arguments, errors and values.

Every expected value is torchmetrics 1.9's, computed on the same input side by side (or arithmetic
written out in a test). The random inputs reach the corners: queries of 1 to 30 documents (beyond
torch's 16-row stable sorting), indexes that are negative, sparse and shuffled across batches, several
``update`` calls, scores tied, at 0 and below (which average precision, reciprocal rank, precision and
recall do not count) and outside [0, 1] (AUROC's sigmoid), targets of every dtype torchmetrics takes,
graded, negative and float targets for nDCG, queries with no positive (or no negative) target under
each ``empty_target_action``, ``ignore_index``, ``top_k`` beyond a query's size, ``adaptive_k`` and every
aggregation.

Tied scores: torchmetrics orders them as ``torch.topk`` and ``torch.argsort`` leave them (unspecified);
the drop-in keeps their input order. So the data of :func:`batches` ties only documents whose targets
are equal (the order among them changes nothing), and :func:`test_ties_with_different_targets_keep_input_order`
ties any documents and compares with torchmetrics given scores that break the ties in input order. nDCG
averages over ties and AUROC counts a tie as a diagonal step: both are compared on any ties.
"""

from __future__ import annotations

import functools
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import irspec.compat.torchmetrics as dropin
from irspec.compat.torchmetrics import backend
from irspec.compat.torchmetrics import functional as dropin_functional

# torch and torchmetrics, imported by the module's first test (the fixture below), not at collection:
# every pytest-xdist worker collects this module, and their imports took ~1.3 s of each (issue 35).
torch: Any = None
torchmetrics: Any = None
reference: Any = None  # torchmetrics.retrieval
reference_functional: Any = None  # torchmetrics.functional.retrieval


@pytest.fixture(scope="module", autouse=True)
def _torchmetrics() -> None:
    global torch, torchmetrics, reference, reference_functional
    torch = pytest.importorskip("torch")
    torchmetrics = pytest.importorskip("torchmetrics")
    import torchmetrics.functional.retrieval as reference_functional
    import torchmetrics.retrieval as reference


ATOL = 2e-6  # both return float32; torchmetrics computes in float32, the drop-in in float64
SEEDS = range(12)
ACTIONS = ("neg", "pos", "skip", "error")
AGGREGATIONS = ("mean", "median", "min", "max", "custom")


def custom_aggregation(values: Any, dim: Any = None) -> Any:
    """A callable aggregation, as torchmetrics' tests write one."""
    return (values**2).mean() if dim is None else (values**2).mean(dim=dim)


# --------------------------------------------------------------------------------------------------
# Random inputs


def batches(
    seed: int,
    targets: str = "binary",
    ties: str = "same-target",
    empty: float = 0.2,
    ignore: int | None = None,
) -> list[tuple[Any, Any, Any]]:
    """Rows of random queries, shuffled and cut into one to three ``update`` batches of tensors
    ``(indexes, preds, target)``.

    ``targets``: ``binary`` (int64), ``bool``, ``int32``, ``float01`` (floats 0 and 1), ``half`` (floats
    0, 0.5 and 1), ``graded`` (0..4), ``negative`` (-1..3), ``float`` (uniform). ``ties``:
    ``same-target`` (scores from a small palette, tied only where targets are equal), ``any`` (ties
    across targets; scores never 0), ``none`` (normal draws, some exactly 0). ``empty``: the share of
    queries whose targets are all 0 (and as many all 1). ``ignore``: a target value put in now and then.

    Each draw is made once (:func:`_drawn`; the ~1,300 tests draw ~100 distinct ones); every call gets
    its own copies of the tensors, so that nothing a metric did to one test's could reach another's.
    """
    return [(i.clone(), p.clone(), t.clone()) for i, p, t in _drawn(seed, targets, ties, empty, ignore)]


@functools.cache
def _drawn(
    seed: int, targets: str, ties: str, empty: float, ignore: int | None
) -> list[tuple[Any, Any, Any]]:
    """:func:`batches`' draw, kept."""
    rng = np.random.default_rng(seed)
    n_queries = int(rng.integers(1, 40))
    ids = rng.choice(np.arange(-1000, 1000), size=n_queries, replace=False)
    rows = []
    for qid in ids:
        size = int(rng.integers(1, 31))
        if targets in ("graded", "negative"):
            low = -1 if targets == "negative" else 0
            t = rng.integers(low, 5 if targets == "graded" else 4, size=size).astype(np.float64)
        elif targets == "float":
            t = rng.random(size)
        elif targets == "half":
            t = rng.choice([0.0, 0.5, 1.0], size=size)
        else:
            t = (rng.random(size) < rng.random()).astype(np.float64)
        kind = rng.random()
        if kind < empty:
            t[:] = 0
        elif kind < 2 * empty and targets not in ("graded", "negative", "float"):
            t[:] = 1
        if ties == "same-target":
            # equal scores only for equal targets: r * 9 + t is one-to-one on (r, t) for t in -1..5
            levels = np.round(t * 2).astype(np.int64) + 2
            p = (rng.integers(0, 4, size=size) * 9 + levels) / 20.0 - 0.45
            if targets in ("float",):
                p = rng.normal(0.3, 0.6, size=size)
        elif ties == "any":
            p = rng.choice([-0.75, -0.25, 0.25, 0.5, 0.75, 1.0], size=size)
        else:
            p = rng.normal(0.4, 0.8, size=size)
            p[rng.random(size) < 0.1] = 0.0
        rows.append((np.full(size, qid), p, t))
    index = np.concatenate([r[0] for r in rows]).astype(np.int64)
    preds = np.concatenate([r[1] for r in rows]).astype(np.float32)
    target = np.concatenate([r[2] for r in rows])
    if ignore is not None:
        target[rng.random(len(target)) < 0.1] = ignore
    order = rng.permutation(len(index))
    index, preds, target = index[order], preds[order], target[order]
    dtype = {
        "binary": torch.int64,
        "graded": torch.int64,
        "negative": torch.int64,
        "bool": torch.bool,
        "int32": torch.int32,
    }.get(targets, torch.float32)
    if ignore is not None and dtype == torch.bool:
        dtype = torch.int64
    cuts = np.sort(
        rng.choice(np.arange(1, len(index)), size=min(int(rng.integers(0, 3)), len(index) - 1), replace=False)
    )
    out = []
    for i, p, t in zip(np.split(index, cuts), np.split(preds, cuts), np.split(target, cuts), strict=True):
        out.append(
            (torch.from_numpy(i.copy()), torch.from_numpy(p.copy()), torch.from_numpy(t.copy()).to(dtype))
        )
    return out


def broken_ties(batch_list: list[tuple[Any, Any, Any]]) -> list[tuple[Any, Any, Any]]:
    """The same batches, each query's scores replaced by distinct ones in the drop-in's order (score
    descending, then input order): above 0 where the score was, in (-1, 0) where it was below 0 (the
    data of ``ties="any"`` has no 0), so that every definition sees the same ranking and the same
    scores above 0, without a tie."""
    index = torch.cat([b[0] for b in batch_list]).numpy()
    preds = torch.cat([b[1] for b in batch_list]).numpy().astype(np.float64)
    new = np.empty(len(index))
    for qid in np.unique(index):
        rows = np.flatnonzero(index == qid)
        ranked = rows[np.lexsort((np.arange(len(rows)), -preds[rows]))]
        size = len(rows)
        for r, row in enumerate(ranked):
            new[row] = 1 - (r + 1) / (size + 2) if preds[row] > 0 else -(r + 1) / (size + 2)
    out, start = [], 0
    for i, _, t in batch_list:
        out.append((i, torch.from_numpy(new[start : start + len(i)].astype(np.float32)), t))
        start += len(i)
    return out


# --------------------------------------------------------------------------------------------------
# Running both


def outcome(
    module: Any, name: str, kwargs: dict[str, Any], batch_list: list[tuple[Any, Any, Any]]
) -> tuple[Any, ...]:
    """``module``'s metric ``name`` made with ``kwargs``, given each batch by ``forward`` and then
    computed: ``("ok", the batches' values, the value)`` or ``("raise", type, message)``."""
    try:
        metric = getattr(module, name)(**kwargs)
        steps = [metric(p, t, indexes=i) for i, p, t in batch_list]
        return ("ok", steps, metric.compute())
    except Exception as e:  # the exception itself is what is compared
        return ("raise", type(e), str(e))


def values(x: Any) -> Any:
    """A result as nested lists of floats (tensors, tuples of tensors, lists of them)."""
    if isinstance(x, (tuple, list)):
        return [values(v) for v in x]
    return np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float64).tolist()


def assert_same(got: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    """The drop-in's outcome is torchmetrics': the same exception, or the same values within ATOL."""
    if expected[0] == "raise" or got[0] == "raise":
        assert got[:1] == expected[:1] and got[1] is expected[1] and got[2] == expected[2], (got, expected)
        return
    np.testing.assert_allclose(_flat(got[1:]), _flat(expected[1:]), atol=ATOL, rtol=0)
    assert _shapes(got[2]) == _shapes(expected[2])


def _flat(x: Any) -> list[float]:
    out: list[float] = []

    def walk(v: Any) -> None:
        if isinstance(v, list):
            for w in v:
                walk(w)
        else:
            out.append(v)

    walk(values(x))
    return out


def _shapes(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return [_shapes(v) for v in x]
    return (tuple(x.shape), str(x.dtype))


# The classes and the arguments tried, beside empty_target_action, ignore_index and aggregation.
CLASSES: dict[str, list[dict[str, Any]]] = {
    "RetrievalMAP": [{}, {"top_k": 1}, {"top_k": 4}, {"top_k": 50}],
    "RetrievalMRR": [{}, {"top_k": 1}, {"top_k": 3}, {"top_k": 50}],
    "RetrievalPrecision": [{}, {"top_k": 1}, {"top_k": 5}, {"top_k": 50}, {"top_k": 5, "adaptive_k": True}, {"top_k": 50, "adaptive_k": True}],
    "RetrievalRecall": [{}, {"top_k": 1}, {"top_k": 5}, {"top_k": 50}],
    "RetrievalHitRate": [{}, {"top_k": 1}, {"top_k": 5}, {"top_k": 50}],
    "RetrievalFallOut": [{}, {"top_k": 1}, {"top_k": 5}, {"top_k": 50}],
    "RetrievalRPrecision": [{}],
    "RetrievalNormalizedDCG": [{}, {"top_k": 1}, {"top_k": 3}, {"top_k": 10}, {"top_k": 50}],
    "RetrievalAUROC": [{}, {"top_k": 3}, {"top_k": 10}, {"top_k": 50}, {"max_fpr": 0.3}, {"top_k": 10, "max_fpr": 0.5}],
    "RetrievalPrecisionRecallCurve": [{}, {"max_k": 1}, {"max_k": 7}, {"max_k": 40}, {"max_k": 7, "adaptive_k": True}, {"max_k": 40, "adaptive_k": True}],
    "RetrievalRecallAtFixedPrecision": [{"min_precision": 0.0}, {"min_precision": 0.5, "max_k": 5}, {"min_precision": 0.8}, {"min_precision": 1.0, "max_k": 40, "adaptive_k": True}],
}  # fmt: skip

TARGETS = {
    "RetrievalNormalizedDCG": ("binary", "graded", "negative", "float", "bool"),
    "RetrievalRPrecision": ("binary", "bool", "int32", "float01"),
}
BINARY_TARGETS = ("binary", "bool", "int32", "float01", "half")

# The metrics whose value depends on the order of tied scores (nDCG averages ties, AUROC steps over them).
ORDERED = sorted(set(CLASSES) - {"RetrievalNormalizedDCG", "RetrievalAUROC"})


def cases() -> list[tuple[str, dict[str, Any], int]]:
    return [(name, args, seed) for name, grid in CLASSES.items() for args in grid for seed in SEEDS]


def settings(seed: int, name: str) -> dict[str, Any]:
    """empty_target_action, ignore_index and aggregation for a seed (all of them over the seeds), and the
    targets."""
    rng = np.random.default_rng(1000 + seed)
    kinds = TARGETS.get(name, BINARY_TARGETS)
    action = ACTIONS[seed % len(ACTIONS)]
    aggregation = AGGREGATIONS[(seed // len(ACTIONS)) % len(AGGREGATIONS)]
    ignore = [None, None, -100, 1, 0][int(rng.integers(0, 5))]
    return {
        "targets": kinds[seed % len(kinds)],
        "empty_target_action": action,
        "aggregation": custom_aggregation if aggregation == "custom" else aggregation,
        "ignore_index": ignore,
    }


@pytest.mark.parametrize("name,args,seed", cases(), ids=[f"{n}-{a}-{s}" for n, a, s in cases()])
def test_classes_give_torchmetrics_values(
    name: str, args: dict[str, Any], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # odd seeds take the queries in blocks of a few rows, so that blocks end everywhere
    monkeypatch.setattr(backend.NumpyOps, "block_rows", 5 if seed % 2 else backend.NumpyOps.block_rows)
    s = settings(seed, name)
    data = batches(seed, targets=s["targets"], ignore=s["ignore_index"])
    kwargs = {**args, "empty_target_action": s["empty_target_action"], "ignore_index": s["ignore_index"]}
    if name != "RetrievalRecallAtFixedPrecision":
        kwargs["aggregation"] = s["aggregation"]
    got = outcome(dropin, name, kwargs, data)
    expected = outcome(reference, name, kwargs, data)
    assert_same(got, expected)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_the_torch_kernels_give_torchmetrics_values(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a GPU's tensors are computed by the torch kernels, where they are: run here on the CPU
    monkeypatch.setattr(backend, "CPU_TENSORS", "torch")
    for seed in range(4):
        for args in CLASSES[name]:
            s = settings(seed, name)
            data = batches(
                seed, targets=s["targets"], ties="any" if name == "RetrievalNormalizedDCG" else "same-target"
            )
            kwargs = {**args, "empty_target_action": s["empty_target_action"]}
            got = outcome(dropin, name, kwargs, data)
            expected = outcome(reference, name, kwargs, data)
            assert_same(got, expected)
    for fname, grid in FUNCTIONS.items():
        index, preds, target = batches(1, targets="graded" if "dcg" in fname else "binary")[0]
        rows = index == index[0]
        for args in grid:
            assert_same(
                _call(getattr(dropin_functional, fname), preds[rows], target[rows], args),
                _call(getattr(reference_functional, fname), preds[rows], target[rows], args),
            )


def test_a_large_input_in_blocks_gives_torchmetrics_values() -> None:
    # more rows than a block: whole queries to a block, the blocks' values joined in query order
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 120, size=3000)
    index = torch.from_numpy(rng.permutation(np.repeat(rng.permutation(10**6)[:3000], sizes)))
    preds = torch.from_numpy(rng.normal(size=len(index)).astype(np.float32))
    target = torch.from_numpy(rng.integers(0, 3, size=len(index)))
    assert len(index) > backend.NumpyOps.block_rows
    for name, args in [
        ("RetrievalMAP", {}),
        ("RetrievalNormalizedDCG", {"top_k": 10}),
        ("RetrievalMRR", {"top_k": 5}),
    ]:
        data = [(index, preds, target if name == "RetrievalNormalizedDCG" else target.clamp(max=1))]
        assert_same(
            outcome(dropin, name, args, data),
            outcome(reference, name, args, data),
        )


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("seed", SEEDS)
def test_ties_with_different_targets_keep_input_order(name: str, seed: int) -> None:
    s = settings(seed, name)
    data = batches(seed, targets=s["targets"], ties="any")
    args = CLASSES[name][seed % len(CLASSES[name])]
    kwargs = {**args, "empty_target_action": "neg"}
    got = outcome(dropin, name, kwargs, data)
    expected = outcome(reference, name, kwargs, broken_ties(data))
    assert_same(got, expected)


@pytest.mark.parametrize("name", ["RetrievalNormalizedDCG", "RetrievalAUROC"])
@pytest.mark.parametrize("seed", SEEDS)
def test_ndcg_and_auroc_take_any_ties(name: str, seed: int) -> None:
    # nDCG's value does not depend on the order of ties; AUROC's only through which tied documents a
    # top k cuts, so it is compared without one
    targets = ("graded", "negative", "binary")[seed % 3] if name == "RetrievalNormalizedDCG" else "binary"
    data = batches(seed, targets=targets, ties="any")
    args = (
        {"top_k": [None, 1, 3, 10][seed % 4]}
        if name == "RetrievalNormalizedDCG"
        else {"max_fpr": [None, 0.25][seed % 2]}
    )
    got = outcome(dropin, name, args, data)
    expected = outcome(reference, name, args, data)
    assert_same(got, expected)


def test_scores_compared_in_single_precision_as_torchmetrics_keeps_them() -> None:
    # 0.1 and 0.1 + 1e-12 are one float32: a tie, and nDCG averages the two gains
    preds = torch.tensor([0.1, 0.1 + 1e-12, 0.05], dtype=torch.float64)
    target = torch.tensor([0, 1, 0])
    index = torch.zeros(3, dtype=torch.long)
    for name in ("RetrievalNormalizedDCG", "RetrievalAUROC"):
        got = getattr(dropin, name)()(preds, target, indexes=index)
        assert abs(float(got) - float(getattr(reference, name)()(preds, target, indexes=index))) <= ATOL


# --------------------------------------------------------------------------------------------------
# Functional forms

FUNCTIONS: dict[str, list[dict[str, Any]]] = {
    "retrieval_average_precision": [{}, {"top_k": 1}, {"top_k": 4}, {"top_k": 50}],
    "retrieval_reciprocal_rank": [{}, {"top_k": 1}, {"top_k": 3}, {"top_k": 50}],
    "retrieval_precision": [{}, {"top_k": 2}, {"top_k": 50}, {"top_k": 50, "adaptive_k": True}],
    "retrieval_recall": [{}, {"top_k": 2}, {"top_k": 50}],
    "retrieval_hit_rate": [{}, {"top_k": 2}, {"top_k": 50}],
    "retrieval_fall_out": [{}, {"top_k": 2}, {"top_k": 50}],
    "retrieval_r_precision": [{}],
    "retrieval_normalized_dcg": [{}, {"top_k": 1}, {"top_k": 3}, {"top_k": 50}],
    "retrieval_auroc": [{}, {"top_k": 3}, {"top_k": 50}, {"max_fpr": 0.4}, {"top_k": 6, "max_fpr": 0.5}],
    "retrieval_precision_recall_curve": [{}, {"max_k": 3}, {"max_k": 40}, {"max_k": 40, "adaptive_k": True}],
}


def fcases() -> list[tuple[str, dict[str, Any], int]]:
    return [(name, args, seed) for name, grid in FUNCTIONS.items() for args in grid for seed in SEEDS]


@pytest.mark.parametrize("name,args,seed", fcases(), ids=[f"{n}-{a}-{s}" for n, a, s in fcases()])
def test_functions_give_torchmetrics_values(name: str, args: dict[str, Any], seed: int) -> None:
    kind = ("binary", "graded", "negative", "float")[seed % 4] if "dcg" in name else BINARY_TARGETS[seed % 5]
    if name == "retrieval_r_precision" and kind == "half":
        kind = "binary"
    for index, preds, target in batches(seed, targets=kind):
        for qid in torch.unique(index)[:5]:
            rows = index == qid
            p, t = preds[rows], target[rows]
            ours = _call(getattr(dropin_functional, name), p, t, args)
            theirs = _call(getattr(reference_functional, name), p, t, args)
            assert_same(ours, theirs)


def _call(fn: Any, preds: Any, target: Any, args: dict[str, Any]) -> tuple[Any, ...]:
    try:
        result = fn(preds, target, **args)
        return ("ok", result, result)
    except Exception as e:  # compared
        return ("raise", type(e), str(e))


def test_numpy_arrays_give_the_values_tensors_give() -> None:
    # the numpy kernels are the torch kernels' twin: held equal on every function and input kind
    for seed in SEEDS:
        for name, grid in FUNCTIONS.items():
            kind = "graded" if "dcg" in name else "binary"
            index, preds, target = batches(seed, targets=kind)[0]
            rows = index == index[0]
            for args in grid:
                from_tensors = getattr(dropin_functional, name)(preds[rows], target[rows], **args)
                from_arrays = getattr(dropin_functional, name)(
                    preds[rows].numpy(), target[rows].numpy(), **args
                )
                np.testing.assert_allclose(_flat(from_arrays), _flat(from_tensors), atol=1e-12, rtol=0)


# --------------------------------------------------------------------------------------------------
# Arguments and errors: torchmetrics' exceptions, types and messages

BAD_CLASS_ARGS = [
    ("RetrievalMAP", {"empty_target_action": "casual"}),
    ("RetrievalMAP", {"ignore_index": -100.0}),
    ("RetrievalMAP", {"aggregation": "mode"}),
    ("RetrievalMAP", {"top_k": -1.5}),
    ("RetrievalMRR", {"top_k": -2.0}),
    ("RetrievalPrecision", {"top_k": 0}),
    ("RetrievalPrecision", {"top_k": 4.0}),
    ("RetrievalPrecision", {"adaptive_k": None}),
    ("RetrievalRecall", {"top_k": -10}),
    ("RetrievalHitRate", {"top_k": 2.5}),
    ("RetrievalFallOut", {"top_k": 0}),
    ("RetrievalNormalizedDCG", {"top_k": -1}),
    ("RetrievalAUROC", {"max_fpr": 1}),
    ("RetrievalAUROC", {"top_k": 0}),
    ("RetrievalPrecisionRecallCurve", {"max_k": 0}),
    ("RetrievalPrecisionRecallCurve", {"adaptive_k": 1}),
    ("RetrievalRecallAtFixedPrecision", {"min_precision": 2.0}),
    ("RetrievalRecallAtFixedPrecision", {"min_precision": 1}),
    ("RetrievalMAP", {"unknown": 1}),
]


@pytest.mark.parametrize("name,args", BAD_CLASS_ARGS, ids=[f"{n}-{a}" for n, a in BAD_CLASS_ARGS])
def test_bad_arguments_raise_torchmetrics_errors(name: str, args: dict[str, Any]) -> None:
    assert_same(_made(dropin, name, args), _made(reference, name, args))


def _made(module: Any, name: str, args: dict[str, Any]) -> tuple[Any, ...]:
    try:
        getattr(module, name)(**args)
        return ("ok", [], torch.zeros(()))
    except Exception as e:  # compared
        return ("raise", type(e), str(e))


def _small() -> tuple[Any, Any, Any]:
    """Two queries of two documents, ``(indexes, preds, target)``: tensors made inside a test, since torch
    is not imported at collection."""
    return torch.tensor([0, 0, 1, 1]), torch.tensor([0.5, 0.2, 0.9, 0.1]), torch.tensor([1, 0, 0, 1])


# Each bad update's (preds, target, indexes), made from _small()'s (i, p, t).
BAD_UPDATES: list[tuple[str, Callable[[Any, Any, Any], tuple[Any, Any, Any]]]] = [
    ("none indexes", lambda i, p, t: (p, t, None)),
    ("shapes", lambda i, p, t: (p, t, torch.tensor([0, 0, 1]))),
    ("int32 indexes", lambda i, p, t: (p, t, i.int())),
    ("bool preds", lambda i, p, t: (p > 0.3, t, i)),
    ("int preds", lambda i, p, t: ((p * 10).long(), t, i)),
    ("target dtype", lambda i, p, t: (p, t.to(torch.int16), i)),
    ("target not binary", lambda i, p, t: (p, t * 2, i)),
    ("target negative", lambda i, p, t: (p, -t, i)),
    ("empty", lambda i, p, t: (p[:0], t[:0], i[:0])),
    ("scalar", lambda i, p, t: (p[0], t[0], i[0])),
]


@pytest.mark.parametrize("what,made", BAD_UPDATES, ids=[b[0] for b in BAD_UPDATES])
@pytest.mark.parametrize("name", ["RetrievalMAP", "RetrievalNormalizedDCG", "RetrievalPrecisionRecallCurve"])
def test_bad_updates_raise_torchmetrics_errors(
    name: str, what: str, made: Callable[[Any, Any, Any], tuple[Any, Any, Any]]
) -> None:
    preds, target, indexes = made(*_small())

    def run(module: Any) -> tuple[Any, ...]:
        return outcome(module, name, {}, [(indexes, preds, target)])

    assert_same(run(dropin), run(reference))


# Each bad call's (preds, target), made from _small()'s (p, t), and its arguments.
BAD_CALLS: list[tuple[str, Callable[[Any, Any], tuple[Any, Any]], dict[str, Any]]] = [
    ("shapes", lambda p, t: (p, t[:3]), {}),
    ("empty", lambda p, t: (p[:0], t[:0]), {}),
    ("bool preds", lambda p, t: (p > 0.3, t), {}),
    ("target not binary", lambda p, t: (p, t * 3), {}),
    ("top_k negative", lambda p, t: (p, t), {"top_k": -10}),
    ("top_k float", lambda p, t: (p, t), {"top_k": 4.0}),
    ("top_k negative float", lambda p, t: (p, t), {"top_k": -1.0}),
    ("adaptive_k", lambda p, t: (p, t), {"adaptive_k": None}),
    ("max_k", lambda p, t: (p, t), {"max_k": 0}),
    ("float targets R-precision", lambda p, t: (p, t.float()), {}),
    ("top_k negative, no positive target", lambda p, t: (p, t * 0), {"top_k": -10}),
    ("top_k float, no positive target", lambda p, t: (p, t * 0), {"top_k": 4.0}),
]


@pytest.mark.parametrize("what,made,args", BAD_CALLS, ids=[b[0] for b in BAD_CALLS])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_bad_calls_raise_torchmetrics_errors(
    name: str, what: str, made: Callable[[Any, Any], tuple[Any, Any]], args: dict[str, Any]
) -> None:
    preds, target = made(*_small()[1:])
    fn_ours, fn_theirs = getattr(dropin_functional, name), getattr(reference_functional, name)
    import inspect

    args = {k: v for k, v in args.items() if k in inspect.signature(fn_theirs).parameters}
    assert_same(_call(fn_ours, preds, target, args), _call(fn_theirs, preds, target, args))


@pytest.mark.parametrize("top_k", [-1, 2.0])
@pytest.mark.parametrize("name", ["RetrievalMAP", "RetrievalMRR"])
def test_a_top_k_torch_refuses_fails_when_a_query_is_computed(name: str, top_k: Any) -> None:
    # torchmetrics takes them, and fails in torch.topk, for a query with a positive target only
    indexes, preds, target = _small()
    for t in (target, target * 0):
        data = [(indexes, preds, t)]
        assert_same(
            outcome(dropin, name, {"top_k": top_k}, data), outcome(reference, name, {"top_k": top_k}, data)
        )


def test_compute_before_update_is_torchmetrics_error() -> None:
    def run(module: Any) -> tuple[Any, ...]:
        try:
            with pytest.warns(UserWarning):
                module.RetrievalMAP().compute()
            return ("ok", [], torch.zeros(()))
        except ValueError as e:
            return ("raise", type(e), str(e))

    assert_same(run(dropin), run(reference))


# --------------------------------------------------------------------------------------------------
# The life cycle: a torchmetrics Metric


def test_a_torchmetrics_metric_with_its_states_and_life_cycle() -> None:
    data = batches(3, targets="graded", ties="any")
    ours, theirs = dropin.RetrievalNormalizedDCG(top_k=5), reference.RetrievalNormalizedDCG(top_k=5)
    assert isinstance(ours, torchmetrics.Metric)
    assert set(ours._defaults) == set(theirs._defaults) == {"indexes", "preds", "target"}
    assert ours._reductions.keys() == theirs._reductions.keys()
    for i, p, t in data:
        ours.update(p, t, indexes=i)
        theirs.update(p, t, indexes=i)
    assert abs(float(ours.compute()) - float(theirs.compute())) <= ATOL
    assert ours.state_dict() == {}
    clone = pickle.loads(pickle.dumps(ours))
    assert abs(float(clone.compute()) - float(ours.compute())) <= ATOL
    assert type(ours.clone()) is type(ours)
    torch.jit.script(ours)
    ours.reset()
    assert ours.indexes == [] and ours.update_count == 0
    # a MetricCollection of drop-ins, as torchmetrics users build them
    collection = torchmetrics.MetricCollection({"map": dropin.RetrievalMAP(), "mrr": dropin.RetrievalMRR()})
    i, p, t = batches(4)[0]
    got = collection(p, t, indexes=i)
    assert abs(float(got["map"]) - float(reference.RetrievalMAP()(p, t, indexes=i))) <= ATOL


def _ddp_worker(rank: int, world: int, port: int, data: list[Any], out: str) -> None:
    """One process of a two-process group (gloo, on the CPU): updates with its half of the batches,
    then computes over both processes' states."""
    # imported here as well: the module's global torch is set by its fixture (a forked child has it already)
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        metric = dropin.RetrievalMAP(top_k=5)
        for i, p, t in data[rank::world]:
            metric.update(p, t, indexes=i)
        value = metric.compute()
        torch.save(value, f"{out}.{rank}")
    finally:
        dist.destroy_process_group()


def test_states_gather_across_processes(tmp_path: Path) -> None:
    import torch.multiprocessing as mp

    rng = np.random.default_rng(7)
    data = [
        (
            torch.from_numpy(rng.integers(0, 30, 40)),
            torch.from_numpy(rng.random(40).astype(np.float32)),
            torch.from_numpy(rng.integers(0, 2, 40)),
        )
        for _ in range(4)
    ]
    port = 29500 + int(rng.integers(0, 400))
    # forked, not spawned: a spawned process imported torch and this module afresh (~6 s of CPU each, the
    # test's 9 s); a fork starts from this process' modules, as DataLoader's workers do, and the process
    # group (gloo, its own threads) is made in the children all the same
    mp.start_processes(
        _ddp_worker, args=(2, port, data, str(tmp_path / "value")), nprocs=2, join=True, start_method="fork"
    )
    whole = reference.RetrievalMAP(top_k=5)
    for i, p, t in data:
        whole.update(p, t, indexes=i)
    expected = float(whole.compute())
    for rank in range(2):
        assert abs(float(torch.load(tmp_path / f"value.{rank}")) - expected) <= ATOL


def test_lightning_logs_the_drop_in_as_it_logs_torchmetrics(tmp_path: Path) -> None:
    # self.log(name, metric): Lightning computes and resets the metric at the epoch's end
    lightning = pytest.importorskip("lightning")
    from torch.utils.data import DataLoader, TensorDataset

    class Ranker(lightning.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)
            self.ours = dropin.RetrievalNormalizedDCG(top_k=5)
            self.theirs = reference.RetrievalNormalizedDCG(top_k=5)

        def validation_step(self, batch: Any, batch_index: int) -> None:
            features, target, indexes = batch
            preds = self.layer(features).squeeze(-1)
            self.ours(preds, target, indexes=indexes)
            self.theirs(preds, target, indexes=indexes)
            self.log("ours", self.ours, on_epoch=True, batch_size=len(target))
            self.log("theirs", self.theirs, on_epoch=True, batch_size=len(target))

    generator = torch.Generator().manual_seed(0)
    rows = 600
    data = TensorDataset(
        torch.rand(rows, 4, generator=generator),
        torch.randint(0, 3, (rows,), generator=generator),
        torch.arange(rows) // 12,
    )
    torch.manual_seed(0)
    trainer = lightning.Trainer(
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    trainer.validate(Ranker(), dataloaders=DataLoader(data, batch_size=100), verbose=False)
    got = trainer.callback_metrics
    assert abs(float(got["ours"]) - float(got["theirs"])) <= ATOL
    assert 0 < float(got["ours"]) < 1


# --------------------------------------------------------------------------------------------------
# Without torch: numpy arrays, the same life cycle

ROOT = str(Path(dropin.__file__).resolve().parents[3])

NO_TORCH = """
import sys, json
sys.modules["torch"] = None  # import torch raises ImportError: torch is not installed
sys.modules["torchmetrics"] = None
import numpy as np
import irspec.compat.torchmetrics as tm
from irspec.compat.torchmetrics.functional import retrieval_normalized_dcg
def total(x):
    return sum(float(np.sum(v)) for v in x) if isinstance(x, tuple) else float(np.sum(x))
data = json.loads(sys.argv[1])
out = {}
for name, args in data["classes"]:
    metric = getattr(tm, name)(**args)
    steps = [metric(np.array(p, dtype=np.float32), np.array(t), indexes=np.array(i, dtype=np.int64)) for i, p, t in data["batches"]]
    value = metric.compute()
    assert isinstance(value, (np.floating, tuple)), type(value)
    out[name] = [[total(s) for s in steps], total(value)]
    metric.reset()
    assert metric.preds == []
out["function"] = float(retrieval_normalized_dcg(np.array([0.1, 0.2, 0.3, 4, 70], dtype=np.float32), np.array([10, 0, 0, 1, 5])))
print(json.dumps(out))
"""


def test_without_torch_numpy_arrays_go_through_the_same_life_cycle() -> None:
    import json

    data = batches(5, targets="binary")
    classes = [
        ("RetrievalMAP", {"top_k": 4}),
        ("RetrievalNormalizedDCG", {"aggregation": "median"}),
        ("RetrievalPrecision", {"top_k": 30, "adaptive_k": True, "empty_target_action": "skip"}),
        ("RetrievalFallOut", {}),
        ("RetrievalAUROC", {"max_fpr": 0.5}),
        ("RetrievalPrecisionRecallCurve", {"max_k": 5}),
    ]
    payload = {
        "classes": classes,
        "batches": [[i.tolist(), p.tolist(), t.tolist()] for i, p, t in data],
    }
    env = {**os.environ, "PYTHONPATH": ROOT}
    result = subprocess.run(
        [sys.executable, "-c", NO_TORCH, json.dumps(payload)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    for name, args in classes:
        metric = getattr(reference, name)(**args)
        steps = [_flat(metric(p, t, indexes=i)) for i, p, t in data]
        assert got[name][0] == pytest.approx([sum(s) for s in steps], abs=1e-5), name
        assert got[name][1] == pytest.approx(sum(_flat(metric.compute())), abs=1e-5), name
    assert got["function"] == pytest.approx(0.6957, abs=1e-4)


def test_importing_the_drop_in_loads_neither_torch_nor_numpy() -> None:
    code = (
        "import sys, json, irspec.compat.torchmetrics as tm\n"
        "tm.__all__\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'torchmetrics', 'numpy'})))\n"
        "import numpy as np\n"
        "from irspec.compat.torchmetrics.functional import retrieval_normalized_dcg\n"
        "retrieval_normalized_dcg(np.array([0.5, 0.2], dtype=np.float32), np.array([1, 0]))\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'torchmetrics'})))"
    )
    env = {**os.environ, "PYTHONPATH": ROOT}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    # nothing on import; numpy arrays computed without torch, although it is installed
    assert result.stdout.strip().splitlines()[-2:] == ["[]", "[]"]


def test_every_public_name_is_torchmetrics() -> None:
    assert set(dropin.__all__) == set(reference.__all__) | set(reference_functional.__all__)
    assert set(dir(dropin)) >= set(dropin.__all__)
    for name in reference.__all__:
        assert getattr(dropin, name).__name__ == name
        assert getattr(dropin, name).higher_is_better == getattr(reference, name).higher_is_better, name
        assert getattr(dropin, name).is_differentiable is False
    for name in reference_functional.__all__:
        assert re.sub(r"\s", "", str(_params(getattr(dropin_functional, name)))) == re.sub(
            r"\s", "", str(_params(getattr(reference_functional, name)))
        )


def _params(fn: Any) -> list[tuple[str, Any]]:
    import inspect

    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_class_arguments_are_torchmetrics() -> None:
    for name in reference.__all__:
        assert _params(getattr(dropin, name).__init__) == _params(getattr(reference, name).__init__), name


@pytest.mark.parametrize("module", ["irspec.compat.torchmetrics", "irspec.compat.torchmetrics.functional"])
def test_the_docstrings_examples_run(module: str) -> None:
    import doctest
    import importlib

    found = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert found.attempted > 0 and found.failed == 0


@pytest.mark.parametrize("max_fpr", [1.5, 2.0, 0.0, -0.5])
def test_auroc_refuses_a_false_positive_rate_outside_0_to_1(max_fpr):
    # torchmetrics' own check lets a float through (its condition is inverted) and fails later on an index;
    # the drop-in gave -0.3333 or -inf: an error naming the argument, in torchmetrics' words, for both forms
    import torch

    preds, target = torch.tensor([0.9, 0.2, 0.6, 0.4]), torch.tensor([1, 0, 0, 1])
    indexes = torch.tensor([0, 0, 0, 0])
    message = re.escape(f"Arguments `max_fpr` should be a float in range (0, 1], but got: {max_fpr}")
    with pytest.raises(ValueError, match=message):
        dropin_functional.retrieval_auroc(preds, target, max_fpr=max_fpr)
    with pytest.raises(ValueError, match=message):
        dropin.RetrievalAUROC(max_fpr=max_fpr)(preds, target, indexes=indexes)
