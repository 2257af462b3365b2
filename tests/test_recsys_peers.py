"""irspec.evaluate_topk against the evaluators of RecBole 1.2.1 and Microsoft Recommenders 1.2.1, run on
the same lists: equal where their definition is irspec's, and each difference named and tested.

RecBole runs in a child process from the ``pip install --target`` folder ``IRSPEC_RECBOLE_PATH`` names,
with the environment's torch: its collector (``Collector.eval_batch_collect``, given scores that rank
each user's list first) finds the hits, its metrics' ``metric_info`` give the per-user values at every
cutoff and its ``Evaluator`` the means. RecBole 1.2.1 still names ``np.float``, the alias of ``float``
that numpy 1.24 removed; the child restores that alias before importing it, and nothing else.
Recommenders' ``python_evaluation`` functions run in this process from ``IRSPEC_RECOMMENDERS_PATH``
(pandas, numpy and scikit-learn are the environment's). ``scripts/test`` installs both folders.

Named differences, each tested:
- RecBole's MAP@k and Recommenders' ``map_at_k`` divide by min(k, |R|): irspec's ``AP(den=min)@k``; irspec's
  ``AP@k`` (trec_eval's map_cut) divides by |R|, as Recommenders' ``map`` (cut at k) does.
- Recommenders' ``ndcg_at_k`` discounts by the natural logarithm: the base cancels in DCG / IDCG, so its
  values are irspec's nDCG@k up to rounding (``score_type="raw"``: nDCG@k's gains; ``"exp"``:
  ``nDCG(dcg=exp-log2)@k``).
- Both take every held-out interaction as relevant (RecBole binary; Recommenders' recall and precision
  count every rating), as irspec does at relevance level 1 when every label is 1 or more.
Values are compared to 1e-12: the peers sum in other orders (cumulative sums over every cutoff).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import irspec

RECBOLE = r"""
import json, sys
import numpy as np
np.float = float  # RecBole 1.2.1's metrics name np.float, the alias of float that numpy 1.24 removed
import torch
from recbole.evaluator import Collector, Evaluator

def answer(data):
    names, cutoffs = data["metrics"], data["cutoffs"]
    config = {"metrics": names, "topk": cutoffs, "metric_decimal_place": 15, "eval_args": {"mode": "full"},
              "device": "cpu"}
    scores = torch.full((data["users"], data["items"]), -1e9)
    top = torch.tensor(data["top"])
    scores.scatter_(1, top, torch.arange(top.shape[1], 0, -1, dtype=torch.float32).expand(top.shape).contiguous())
    collector = Collector(config)
    collector.eval_batch_collect(scores, None, torch.tensor(data["pos_u"]), torch.tensor(data["pos_i"]))
    struct = collector.get_data_struct()
    evaluator = Evaluator(config)
    per_user = {}
    for name, metric in evaluator.metric_class.items():
        hits, lengths = metric.used_info(struct)
        args = (hits,) if name in ("hit", "mrr", "precision") else (hits, lengths)
        per_user[name] = metric.metric_info(*args).tolist()
    means = {key: float(value) for key, value in evaluator.evaluate(struct).items()}
    return {"per_user": per_user, "means": means}

print(json.dumps({key: answer(data) for key, data in json.load(sys.stdin).items()}))
"""
"""RecBole's answers to each job of a JSON object read from standard input, ``{key: answer}``: one child
for every test, which importing torch and RecBole made cost some 2.4 s of CPU (issue 35)."""

# RecBole's name -> irspec's spec at cutoff k
SAME = {
    "ndcg": "nDCG@{k}",
    "recall": "R@{k}",
    "map": "AP(den=min)@{k}",
    "hit": "Success@{k}",  # HitRate@k, its recommender spelling
    "precision": "P@{k}",
    "mrr": "RR@{k}",
}


def _data(seed: int, users: int = 60, items: int = 50, width: int = 20, graded: bool = False):
    """Held-out interactions (every user has one; graded 1 to 3 when ``graded``) and a full list of
    ``width`` distinct items per user, some of them held out."""
    rng = np.random.default_rng(seed)
    held = rng.random((users, items)) < 0.15
    held[np.arange(users), rng.integers(0, items, size=users)] = True
    labels = rng.integers(1, 4, size=held.shape) if graded else np.ones(held.shape, dtype=np.int64)
    test = sp.csr_array(np.where(held, labels, 0))
    top = np.array([rng.permutation(items)[:width] for _ in range(users)])
    return test, top


def _folder(variable: str, peer: str) -> str:
    """The ``pip install --target`` folder of a peer, which ``variable`` names (scripts/test sets it)."""
    path = os.environ.get(variable)
    if not path:
        pytest.skip(f"{peer} is the reference: set {variable} to a pip --target folder holding it")
    return path


def _job(seed: int, cutoffs: list[int] | None = None, metrics=tuple(SAME)) -> dict:
    """What RecBole is given for ``_data(seed)``: ``metrics`` at ``cutoffs`` (by default 1, 5, 10 and
    the lists' width)."""
    test, top = _data(seed)
    rows, cols = test.nonzero()
    return {
        "metrics": list(metrics),
        "cutoffs": cutoffs or [1, 5, 10, top.shape[1]],
        "users": test.shape[0],
        "items": test.shape[1],
        "top": top.tolist(),
        "pos_u": rows.tolist(),
        "pos_i": cols.tolist(),
    }


RECBOLE_JOBS = {
    **{f"per-user {seed}": _job(seed) for seed in range(3)},
    **{f"means {seed}": _job(seed, [5, 10]) for seed in (10, 11)},
    "map": _job(4, [5], metrics=("map",)),
}
"""Every call of RecBole the tests read, by key."""


@pytest.fixture(scope="module")
def recbole() -> dict:
    """RecBole's answers to :data:`RECBOLE_JOBS`, by key."""
    path = _folder("IRSPEC_RECBOLE_PATH", "RecBole 1.2.1")
    pytest.importorskip(
        "torch", reason="RecBole's evaluator runs on torch (scripts/test installs 2.13.0, CPU)"
    )
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", RECBOLE],
        input=json.dumps(RECBOLE_JOBS),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("seed", range(3))
def test_recbole_per_user_at_every_cutoff(recbole, seed):
    test, top = _data(seed)
    width = top.shape[1]
    theirs = recbole[f"per-user {seed}"]  # at 1, 5, 10 and width
    specs = [spec.format(k=k) for spec in SAME.values() for k in range(1, width + 1)]
    res = irspec.evaluate_topk(test, top, ", ".join(specs))
    users = [int(q) for q in res.query_ids]  # every user has a held-out item: all of them, by id as text
    for name, spec in SAME.items():
        values = np.array(theirs["per_user"][name])[users]  # users × cutoffs 1..width
        for k in range(1, width + 1):
            np.testing.assert_allclose(res.column(spec.format(k=k)), values[:, k - 1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_recbole_means_as_its_evaluator_gives_them(recbole, seed):
    test, top = _data(10 + seed)
    theirs = recbole[f"means {10 + seed}"]  # at 5 and 10
    means = irspec.evaluate_topk(
        test, top, ", ".join(spec.format(k=k) for spec in SAME.values() for k in (5, 10))
    ).aggregate()
    for name, spec in SAME.items():
        for k in (5, 10):
            assert theirs["means"][f"{name}@{k}"] == pytest.approx(means[spec.format(k=k)], abs=1e-12)


def test_recbole_map_is_ap_over_min_k_r_not_trec_evals(recbole):
    """Where a user has more relevant items than the cutoff, RecBole's MAP@k divides by k, irspec's
    AP@k (trec_eval's map_cut) by |R|: the difference, for those users and only them."""
    test, top = _data(4)
    theirs = np.array(recbole["map"]["per_user"]["map"])[:, 4]  # MAP at 5 alone
    res = irspec.evaluate_topk(test, top, "AP@5, AP(den=min)@5, NumRel")
    users = [int(q) for q in res.query_ids]
    many = res.column("NumRel") > 5
    assert many.any() and (~many).any()
    np.testing.assert_allclose(res.column("AP(den=min)@5"), theirs[users], rtol=0, atol=1e-12)
    trec = res.column("AP@5")
    np.testing.assert_allclose(trec[~many], theirs[users][~many], rtol=0, atol=1e-12)
    np.testing.assert_allclose(trec[many], theirs[users][many] * 5 / res.column("NumRel")[many], atol=1e-12)


@pytest.fixture(scope="module")
def recommenders():
    path = _folder("IRSPEC_RECOMMENDERS_PATH", "Microsoft Recommenders 1.2.1")
    sys.path.append(path)  # after the environment's packages: pandas, numpy, scikit-learn stay its own
    from recommenders.evaluation import python_evaluation

    return python_evaluation


def _frames(test, top):
    import pandas as pd

    rows, cols = test.nonzero()
    true = pd.DataFrame({"userID": rows, "itemID": cols, "rating": test[rows, cols].astype(float)})
    width = top.shape[1]
    pred = pd.DataFrame(
        {
            "userID": np.repeat(np.arange(top.shape[0]), width),
            "itemID": top.ravel(),
            "prediction": np.tile(np.arange(width, 0, -1), top.shape[0]).astype(float),
        }
    )
    return true, pred


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [1, 5, 10])
def test_recommenders_means(recommenders, seed, k):
    test, top = _data(20 + seed, graded=True)
    true, pred = _frames(test, top)
    res = irspec.evaluate_topk(
        test, top, f"nDCG@{k}, nDCG(dcg=exp-log2)@{k}, R@{k}, P@{k}, AP(den=min)@{k}, AP@{k}"
    ).aggregate()
    ev = recommenders
    expected = {
        f"nDCG@{k}": ev.ndcg_at_k(true, pred, k=k, score_type="raw"),
        f"nDCG(dcg=exp-log2)@{k}": ev.ndcg_at_k(true, pred, k=k, score_type="exp"),
        f"R@{k}": ev.recall_at_k(true, pred, k=k),
        f"P@{k}": ev.precision_at_k(true, pred, k=k),
        f"AP(den=min)@{k}": ev.map_at_k(true, pred, k=k),
        f"AP@{k}": ev.map(true, pred, k=k),
    }
    for spec, value in expected.items():
        assert res[spec] == pytest.approx(value, abs=1e-12), spec


def test_recommenders_binary_ndcg_is_ndcg_of_binary_labels(recommenders):
    """score_type="binary" (its default) gains 1 for every held-out item, whatever its rating: irspec's
    nDCG@k of the labels made 1."""
    test, top = _data(30, graded=True)
    true, pred = _frames(test, top)
    binary = test.copy()
    binary.data[:] = 1
    ours = irspec.evaluate_topk(binary, top, "nDCG@10").aggregate()["nDCG@10"]
    assert ours == pytest.approx(recommenders.ndcg_at_k(true, pred, k=10), abs=1e-12)
    graded = irspec.evaluate_topk(test, top, "nDCG@10").aggregate()["nDCG@10"]
    assert graded != pytest.approx(ours, abs=1e-6)  # the labels' grades change irspec's value
