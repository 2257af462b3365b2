"""Intra-list diversity (ILD@k) and serendipity (Serendipity@k) of recommenders' lists.

References: arithmetic written out by hand on a small case; scipy.spatial.distance's cosine and
Jaccard distances and plain Python loops over random data; and RecTools 0.19.0's
``IntraListDiversity`` (with its ``PairwiseHammingDistanceCalculator``) and ``Serendipity``, from the
``pip install --target`` folder ``IRSPEC_RECTOOLS_PATH`` names (the fixture of
``tests/test_recsys_catalogue.py``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial import distance as scipy_distance
from test_recsys_catalogue import _lists, _random_matrices

import irspec
from irspec.builtin.kernels import beyond
from irspec.errors import EvaluationError, InputError, IrspecError


def _small():
    """3 users, 4 items, each user with a held-out item; the items' features as RecTools' example."""
    test = sp.csr_array(np.array([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]]))
    top = np.array([[0, 1, 3], [0, 2, 1], [3, -1, -1]])
    train = sp.csr_array(np.array([[0, 0, 1, 0], [1, 0, 0, 1], [1, 1, 0, 0]]))
    features = np.array([[0, 0], [0, 1], [1, 1], [0, 0]])
    return test, top, train, features


def test_ild_by_hand():
    test, top, _, features = _small()
    spec = "ILD(distance=hamming)@3, ILD(distance=hamming)@2, ILD(distance=jaccard)@3, ILD@3"
    res = irspec.evaluate_topk(test, top, spec, features=features)
    got = res.per_query()
    # user 0 lists items 0, 1, 3 with features 00, 01, 00: pairs (0,1) 1 differs, (0,3) 0, (1,3) 1
    assert got["0"]["ILD(distance=hamming)@3"] == pytest.approx(2 / 3)
    assert got["0"]["ILD(distance=hamming)@2"] == pytest.approx(1.0)  # the one pair (0, 1)
    # user 1 lists 0, 2, 1: 00, 11, 01: distances 2, 1, 1
    assert got["1"]["ILD(distance=hamming)@3"] == pytest.approx(4 / 3)
    # Jaccard of the non-zero features: {} vs {1} 1 (nothing shared), {} vs {0,1} 1, {1} vs {0,1} 1/2
    assert got["1"]["ILD(distance=jaccard)@3"] == pytest.approx((1 + 1 + 0.5) / 3)
    # items 0 and 3 have no feature: they share nothing (1 apart), as far as either is from item 1
    assert got["0"]["ILD(distance=jaccard)@3"] == pytest.approx(1.0)
    # cosine: zero vectors have cosine 0 with anything; 01 vs 11 has cosine 1/sqrt(2)
    assert got["1"]["ILD@3"] == pytest.approx((1 + 1 + (1 - 1 / math.sqrt(2))) / 3)
    # user 2 lists one item: no pair, no two items that differ
    assert all(v == 0 for v in got["2"].values())


def test_serendipity_by_hand():
    test, top, train, _ = _small()
    spec = "Serendipity@3, Serendipity@1, Serendipity(expected=items)@3"
    expected = np.array([[0, -1], [1, 2], [2, 3]])
    res = irspec.evaluate_topk(test, top, spec, popularity=train, expected=expected)
    got = res.per_query()
    # training users per item: 2, 1, 1, 1; dense popularity ranks 1, 2, 2, 2; N = 4 items
    # user 0: items 0 (held out, rank 1) and 3 (held out, rank 3)
    # item 0: (4 + 1 - 1)/4 - (4 + 1 - 1)/4 = 0; item 3: (4 + 1 - 3)/4 - (4 + 1 - 2)/4 < 0, so 0
    assert got["0"]["Serendipity@3"] == 0
    # user 1: item 1 held out at rank 3: 2/4 - 3/4 < 0; user 2 lists item 3, not held out
    assert got["1"]["Serendipity@3"] == 0 and got["2"]["Serendipity@3"] == 0
    # expected items: user 0 expects item 0 but not 3: one of three items relevant and unexpected
    assert got["0"]["Serendipity(expected=items)@3"] == pytest.approx(1 / 3)
    assert got["1"]["Serendipity(expected=items)@3"] == 0  # item 1 was expected
    # a cold item at the top of a list is unexpected to the full: (4 + 1 - 1)/4 - 0
    cold = sp.csr_array(np.array([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]))
    res = irspec.evaluate_topk(test, top, "Serendipity@1", popularity=cold)
    assert res.per_query()["1"]["Serendipity@1"] == 0  # item 0 is the only popular one: rank 1
    assert res.per_query()["2"]["Serendipity@1"] == 0  # item 3 is cold but not held out for user 2
    res = irspec.evaluate_topk(test, np.array([[3], [1], [2]]), "Serendipity@1", popularity=cold)
    assert [v["Serendipity@1"] for v in res.per_query().values()] == [1, 1, 1]


def _features(rng, items, width, sparse=False):
    """Small integer features: many items equal on a feature (ties), some with none at all."""
    x = rng.integers(0, 3, (items, width)) * (rng.random((items, width)) < 0.5)
    x[rng.random(items) < 0.15] = 0
    return sp.csr_array(x) if sparse else x


@pytest.mark.parametrize("seed", range(5))
def test_against_scipy_and_plain_python(seed):
    rng = np.random.default_rng(seed)
    users, items, k = 50, 30, int(rng.integers(1, 9))
    test, train = _random_matrices(rng, users, items)
    top = np.array([rng.permutation(items)[:10] for _ in range(users)])
    top[rng.random(top.shape) < 0.1] = -1
    x = _features(rng, items, 5)
    spec = f"ILD@{k}, ILD(distance=jaccard)@{k}, ILD(distance=hamming)@{k}, Serendipity@{k}"
    res = irspec.evaluate_topk(test, top, spec, exclude=train, popularity=train, features=x)
    lists = _lists(test, top, train, k)
    counts = np.bincount(train.nonzero()[1], minlength=items)
    levels = sorted({int(c) for c in counts if c > 0}, reverse=True)
    for u, listed in lists.items():
        row = res.per_query()[str(u)]
        if not listed:
            assert all(math.isnan(v) for v in row.values())
            continue
        pairs = list(itertools.combinations(listed, 2))

        def mean(d, pairs=pairs):
            return sum(d(i, j) for i, j in pairs) / len(pairs) if pairs else 0.0

        def cosine(i, j):
            if not x[i].any() or not x[j].any():
                return 1.0
            return scipy_distance.cosine(x[i], x[j])

        def jaccard(i, j):
            return 1.0 if not (x[i].any() or x[j].any()) else scipy_distance.jaccard(x[i] > 0, x[j] > 0)

        assert row[f"ILD@{k}"] == pytest.approx(mean(cosine), abs=1e-12)
        assert row[str(irspec.parse(f"ILD(distance=jaccard)@{k}"))] == pytest.approx(mean(jaccard), abs=1e-12)
        hamming = mean(lambda i, j: sum(a != b for a, b in zip(x[i], x[j], strict=True)))
        assert row[str(irspec.parse(f"ILD(distance=hamming)@{k}"))] == pytest.approx(hamming, abs=1e-12)
        held = set(test[[u], :].indices.tolist())
        total = 0.0
        for rank, i in enumerate(listed, start=1):
            anyone = (items + 1 - (levels.index(counts[i]) + 1)) / items if counts[i] else 0.0
            total += max((items + 1 - rank) / items - anyone, 0.0) * (i in held)
        assert row[f"Serendipity@{k}"] == pytest.approx(total / len(listed), abs=1e-12)


def test_sparse_dense_function_and_blocks_agree(monkeypatch):
    rng = np.random.default_rng(11)
    test, _ = _random_matrices(rng, 40, 25)
    top = np.array([rng.permutation(25)[:8] for _ in range(40)])
    x = _features(rng, 25, 6)
    spec = "ILD@8, ILD(distance=hamming)@5, ILD(distance=jaccard)@8"
    dense = irspec.evaluate_topk(test, top, spec, features=x).values
    sparse = irspec.evaluate_topk(test, top, spec, features=sp.csr_array(x)).values
    assert np.allclose(dense, sparse, rtol=0, atol=1e-12)
    monkeypatch.setattr(beyond, "PAIR_ENTRIES", 1)  # a block of one user at a time
    assert np.allclose(irspec.evaluate_topk(test, top, spec, features=x).values, dense, rtol=0, atol=1e-12)
    matrix = np.abs(x[:, None, :] - x[None, :, :]).sum(axis=2)  # L1 distances, precomputed
    given = irspec.evaluate_topk(test, top, "ILD(distance=given)@8", features=lambda a, b: matrix[a, b])
    for u, listed in _lists(test, top, sp.csr_array(test.shape, dtype=np.int64), 8).items():
        pairs = list(itertools.combinations(listed, 2))
        assert given.per_query()[str(u)]["ILD(distance=given)@8"] == pytest.approx(
            sum(matrix[i, j] for i, j in pairs) / len(pairs)
        )


def test_expected_as_matrix_or_lists_and_scores():
    rng = np.random.default_rng(5)
    test, train = _random_matrices(rng, 40, 20)
    by_popularity = np.tile(
        np.argsort(-np.bincount(train.nonzero()[1], minlength=20), kind="stable")[:5], (40, 1)
    )
    as_matrix = sp.csr_array(
        (np.full(by_popularity.size, 7), (np.repeat(np.arange(40), 5), by_popularity.ravel())), shape=(40, 20)
    )
    scores = rng.random((40, 20))
    spec = "Serendipity(expected=items)@6, ILD@6"
    a = irspec.evaluate_scores(test, scores, spec, exclude=train, expected=by_popularity, features=np.eye(20))
    b = irspec.evaluate_scores(test, scores, spec, exclude=train, expected=as_matrix, features=np.eye(20))
    top = np.argsort(-scores, axis=1, kind="stable")
    c = irspec.evaluate_topk(test, top, spec, exclude=train, expected=by_popularity, features=np.eye(20))
    assert np.allclose(a.values, b.values, equal_nan=True) and np.allclose(a.values, c.values, equal_nan=True)
    expected = set(by_popularity[0].tolist())
    for u, listed in _lists(test, top, train, 6).items():
        held = set(test[[u], :].indices.tolist())
        want = sum(i in held and i not in expected for i in listed) / len(listed) if listed else math.nan
        assert a.per_query()[str(u)][str(irspec.parse("Serendipity(expected=items)@6"))] == pytest.approx(
            want, nan_ok=True
        )
        if listed:  # one-hot features: every pair 1 apart
            assert a.per_query()[str(u)]["ILD@6"] == (1.0 if len(listed) > 1 else 0.0)


def test_errors_name_what_is_missing_or_wrong():
    test, top, train, features = _small()
    with pytest.raises(EvaluationError, match="give features="):
        irspec.evaluate_topk(test, top, "ILD@2")
    with pytest.raises(EvaluationError, match="popularity=train_matrix"):
        irspec.evaluate_topk(test, top, "Serendipity@2")
    with pytest.raises(EvaluationError, match="give expected="):
        irspec.evaluate_topk(test, top, "Serendipity(expected=items)@2", popularity=train)
    with pytest.raises(EvaluationError, match=r"spell the metric ILD\(distance=given\)@2"):
        irspec.evaluate_topk(test, top, "ILD@2", features=lambda a, b: a - b)
    with pytest.raises(EvaluationError, match="features= is a matrix"):
        irspec.evaluate_topk(test, top, "ILD(distance=given)@2", features=features)
    with pytest.raises(EvaluationError, match="returned shape"):
        irspec.evaluate_topk(test, top, "ILD(distance=given)@2", features=lambda a, b: np.zeros(1))
    with pytest.raises(EvaluationError, match="gave nan for items 0 and 1"):
        irspec.evaluate_topk(
            test, top, "ILD(distance=given)@2", features=lambda a, b: np.full(len(a), np.nan)
        )
    with pytest.raises(InputError, match=r"features has shape \(3, 2\): one row per item"):
        irspec.evaluate_topk(test, top, "ILD@2", features=features[:3])
    bad = features.astype(float)
    bad[2, 1] = np.inf
    with pytest.raises(InputError, match="item 2, feature 1: inf is not finite"):
        irspec.evaluate_topk(test, top, "ILD@2", features=bad)
    with pytest.raises(InputError, match="expected has 2 rows"):
        irspec.evaluate_topk(test, top, "Serendipity(expected=items)@2", expected=np.zeros((2, 1), int))
    with pytest.raises(InputError, match="user 1, column 0: item 9"):
        irspec.evaluate_topk(test, top, "Serendipity(expected=items)@2", expected=np.array([[0], [9], [1]]))
    with pytest.raises(IrspecError, match="distance"):
        irspec.parse("ILD(distance=euclid)@10")
    with pytest.raises(InputError, match="features has shape"):  # before a score is read
        irspec.evaluate_scores(test, iter(()), "ILD@2", features=features[:3])


def test_a_distance_function_is_asked_about_pairs_only():
    test, top, _, _ = _small()
    asked = []

    def distance(a, b):
        asked.append(len(a))
        return np.ones(len(a))

    res = irspec.evaluate_topk(test, top[:, :1], "ILD(distance=given)@3", features=distance)
    assert asked == [] and res.aggregate() == {"ILD(distance=given)@3": 0.0}  # one item each: no pair


def test_spellings():
    spelled = ["IntraListDiversity@10", "ILD(distance=cosine)@10", "serendipity(expected=popularity)@5"]
    assert [str(irspec.parse(s)) for s in spelled] == ["ILD@10", "ILD@10", "Serendipity@5"]
    assert str(irspec.parse("ild(distance=hamming)@10")) == "ILD(distance=hamming)@10"


@pytest.mark.parametrize("seed", range(4))
def test_against_rectools(rectools, seed):
    import pandas as pd

    rng = np.random.default_rng(200 + seed)
    users, items, depth = 60, 30, 12
    test, train = _random_matrices(rng, users, items)
    train = train.tolil()
    train[0, :] = 1  # user 0: every item seen, an empty list (and no held-out item)
    train[1, 3:] = 1  # user 1: three items left, fewer than k
    test = test.tolil()
    test[0, :] = 0
    test[1, 3:] = 0
    test[2, :] = 0  # user 2: a list, no held-out item
    train, test = sp.csr_array(train, dtype=np.int64), sp.csr_array(test, dtype=np.int64)
    test.eliminate_zeros()
    scores = rng.integers(0, 4, (users, items))  # few distinct scores: ties everywhere
    x = _features(rng, items, 4)
    k = int(rng.integers(1, depth + 3))  # sometimes beyond every list's length
    spec = f"ILD(distance=hamming)@{k}, Serendipity@{k}"
    options = {"k": depth, "exclude": train, "popularity": train, "features": x}
    res = irspec.evaluate_scores(test, scores, spec, **options)
    zero = irspec.evaluate_scores(test, scores, spec, empty_users="zero", **options)
    # the documented order, made here: score descending, the lower item index first among ties
    lists = {}
    for u in range(users):
        seen = set(train[[u], :].indices.tolist())
        order = sorted((i for i in range(items) if i not in seen), key=lambda i, u=u: (-scores[u, i], i))
        lists[u] = order[:depth]
    columns = rectools.Columns
    reco = pd.DataFrame(
        [(u, i, r) for u, listed in lists.items() for r, i in enumerate(listed, start=1)],
        columns=[columns.User, columns.Item, columns.Rank],
    )
    metrics = rectools.metrics
    from rectools.metrics.distances import PairwiseHammingDistanceCalculator

    frame = pd.DataFrame(x.astype(float), index=pd.Index(range(items), name=columns.Item))
    ild = metrics.IntraListDiversity(k=k, distance_calculator=PairwiseHammingDistanceCalculator(frame))
    rows, cols = test.nonzero()
    interactions = pd.DataFrame({columns.User: rows, columns.Item: cols})
    rows, cols = train.nonzero()
    prev = pd.DataFrame({columns.User: rows, columns.Item: cols})
    theirs = {
        "ILD(distance=hamming)": ild.calc_per_user(reco),
        "Serendipity": metrics.Serendipity(k=k).calc_per_user(reco, interactions, prev, np.arange(items)),
    }
    for name, values in theirs.items():
        metric = str(irspec.parse(f"{name}@{k}"))
        for qid, value in zip(res.query_ids, res.column(metric), strict=True):
            assert value == pytest.approx(values[int(qid)], abs=1e-12), (metric, qid)
        assert 0 not in values.index  # user 0's list is empty: no row in RecTools, no value in irspec
    assert set(res.query_ids) == {str(u) for u in range(users) if test[[u], :].nnz}
    # users without a held-out item: RecTools' serendipity is 0 for them, as irspec's empty_users="zero"
    assert zero.per_query()["2"][f"Serendipity@{k}"] == theirs["Serendipity"][2] == 0


def test_users_by_id_and_users_without_held_out_items():
    test, top, _, features = _small()
    test = sp.csr_array(np.vstack([test.toarray(), np.zeros((1, 4), int)]))  # user 3: nothing held out
    top = np.vstack([top, [[1, 2, -1]]])
    spec = "ILD(distance=hamming)@3, Serendipity(expected=items)@3"
    given = {"features": features, "expected": np.array([[0], [1], [2], [3]])}
    by_row = irspec.evaluate_topk(test, top, spec, **given)
    named = irspec.evaluate_topk(test, top, spec, user_ids=["d", "c", "b", "a"], **given)
    assert named.per_query() == {
        "d": by_row.per_query()["0"],
        "c": by_row.per_query()["1"],
        "b": by_row.per_query()["2"],
    }
    zero = irspec.evaluate_topk(test, top, spec, empty_users="zero", **given)
    assert zero.per_query()["3"] == {str(m): 0.0 for m in zero.metrics}  # counted 0, as on every metric
