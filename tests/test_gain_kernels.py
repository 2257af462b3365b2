"""irspec.builtin.kernels.gain: the ideal DCG of labels no higher than 1 (implicit feedback, binary
judgments), read from a table of running sums at min(R, k), must be what the general path gives, bit for
bit (trec_eval's values rest on it).

The general path computes each term 1/discount(i) in one array with every other query's terms, and adds a
query's terms with ``bincount``, one after another from 0. The first test adds them so, written here, for
every length up to 10,000 (each query's terms after a varying number of another's, so that they sit at
varying places in the array), and compares the table with each sum; the others compare the two paths
through the public API, on the recommender's context and on the engine's: the general path is taken
with a gains map that changes no gain (``gains={1:1}``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import irspec
from irspec.builtin.kernels import gain
from irspec.evaluation.compute import bind_metrics

LONGEST = 10_000


@pytest.mark.parametrize("dcg", ["log2", "jk"])
def test_the_table_is_each_sequential_sum(dcg: str) -> None:
    (metric,) = bind_metrics(f"IDCG(dcg={dcg})")
    table = gain.ideal_table(LONGEST, metric)
    assert table.shape == (LONGEST + 1,) and table[0] == 0.0
    rng = np.random.default_rng(36)
    direct = np.empty(LONGEST + 1)
    for m in range(LONGEST + 1):
        before = int(rng.integers(0, 17))  # another query's ranks first: this one's terms start there
        rank = np.concatenate((np.arange(1, before + 1), np.arange(1, m + 1)))
        if dcg == "log2":
            discount = np.log2(rank + 1.0)
        else:  # Järvelin and Kekäläinen's: 1 at rank 1, log2(i) from rank 2
            discount = np.where(rank < 2, 1.0, np.log2(np.maximum(rank, 2)))
        seg = np.repeat([0, 1], [before, m])
        direct[m] = np.bincount(seg, weights=1.0 / discount, minlength=2)[1]
    differ = np.flatnonzero(table != direct)
    assert not len(differ), f"lengths {differ[:10].tolist()}: {table[differ[:3]]} != {direct[differ[:3]]}"


def _pairs(metrics: str) -> tuple[str, str]:
    """The metrics as given, and each with ``gains={1:1}`` (the general path, the same gains)."""
    names = [m.strip() for m in metrics.split(",")]
    general = []
    for name in names:
        base, _, cut = name.partition("@")
        if "(" in base:
            base = base[:-1] + ", gains={1:1})"
        else:
            base += "(gains={1:1})"
        general.append(base + ("@" + cut if cut else ""))
    return ", ".join(names), ", ".join(general)


METRICS = (
    "IDCG, IDCG@1, IDCG@10, IDCG@333, IDCG@1000, IDCG@R, IDCG(dcg=jk)@500, IDCG(dcg=exp-log2)@100, nDCG@50"
)


def _same(binary: irspec.Result, general: irspec.Result) -> None:
    assert binary.query_ids == general.query_ids
    # bit for bit: the values' bytes, not a tolerance
    assert binary.values.tobytes() == general.values.tobytes()
    assert list(binary.aggregate().values()) == list(general.aggregate().values())


@pytest.mark.parametrize("zeros", [False, True])
def test_recommender_context_binary_and_general_paths_agree(zeros: bool) -> None:
    # users with 0 to 1,200 held-out items (720,600 labels), and with zeros: judged non-relevant items
    # (explicit zeros, and -1) among them, so that a user's count of 1s is not its number of labels
    rng = np.random.default_rng(7)
    users, items = 1_201, 1_400
    indptr = np.concatenate(([0], np.cumsum(np.arange(users))))
    indices = np.concatenate([rng.choice(items, size=n, replace=False) for n in range(users)])
    data = np.ones(len(indices), dtype=np.int64)
    if zeros:
        data[rng.random(len(data)) < 0.3] = 0
        data[rng.random(len(data)) < 0.05] = -1
    test = sp.csr_array((data, indices, indptr), shape=(users, items))
    top = np.array([rng.permutation(items)[:40] for _ in range(users)])
    binary_metrics, general_metrics = _pairs(METRICS)
    binary = irspec.evaluate_topk(test, top, binary_metrics)
    general = irspec.evaluate_topk(test, top, general_metrics)
    _same(binary, general)
    assert binary.values[:, 0].max() > 100  # IDCG of the largest user: the table's far end is read


def test_engine_context_binary_and_general_paths_agree() -> None:
    rng = np.random.default_rng(11)
    qrels, run = {}, {}
    for q in range(60):
        docs = [f"d{i}" for i in rng.permutation(3_000)[: int(rng.integers(0, 2_500))]]
        qrels[f"q{q}"] = {d: int(rng.choice([1, 1, 0, -1])) for d in docs}
        run[f"q{q}"] = {f"d{i}": float(rng.random()) for i in rng.permutation(3_000)[:200]}
    binary_metrics, general_metrics = _pairs(METRICS)
    binary = irspec.evaluate(qrels, {"r": run}, binary_metrics)["r"]
    general = irspec.evaluate(qrels, {"r": run}, general_metrics)["r"]
    _same(binary, general)


def test_an_exp_gain_beyond_a_double_is_an_error_naming_the_label() -> None:
    # 2^1100 - 1 is beyond a double: DCG and IDCG were inf, nDCG inf / inf = NaN, with numpy's overflow
    # warning and no error. 2^1023 - 1 is the last gain a double holds, and a gains map sets any label's.
    qrels = {"q": {"a": 1100, "b": 1, "c": 3}}
    run = {"q": {"a": 1.0, "b": 2.0, "c": 3.0}}
    with pytest.raises(irspec.EvaluationError, match=r"label 1100 would gain 2\^1100 - 1, beyond a double"):
        irspec.evaluate(qrels, run, "nDCG(dcg=exp-log2)")
    top = irspec.evaluate({"q": {"a": 1023}}, {"q": {"a": 1.0}}, "DCG(dcg=exp-log2)").aggregate()
    assert top == {"DCG(dcg=exp-log2)": 2.0**1023 - 1}
    mapped = irspec.evaluate(qrels, run, "DCG(dcg=exp-log2,gains={1100:5})").per_query()["q"]
    # c (2^3 - 1 = 7) at rank 1, b (1) at 2, a (5, the map's) at 3; the C library's log2, as the kernels'
    assert mapped["DCG(dcg=exp-log2,gains={1100:5})"] == 7 / 1.0 + 1 / math.log2(3) + 5 / math.log2(4)
