"""irspec.recsys.read_tables (irspec.recsys.tables): interaction tables read into the matrices of
irspec.evaluate_topk over one index of users and items, and evaluate_topk's user_ids=.

Expected matrices are built in the tests from the rows as written (a dict of (user, item) -> label, the
index sorted by hand); expected values come from evaluate_topk on matrices built here independently of
the reader, and from arithmetic written out.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scipy.sparse as sp

import irspec
from irspec.errors import InputError
from irspec.recsys import Columns, read_tables

TEST = {"user": ["u2", "u1", "u1", "u3"], "item": ["c", "a", "b", "a"], "rating": [3, 5, 4, 1]}
RECS = {"user": ["u1", "u2", "u1", "u2", "u3"], "item": ["c", "c", "a", "a", "d"], "rank": [2, 1, 1, 2, 1]}
TRAIN = {"user": ["u1", "u2", "u2", "u4"], "item": ["d", "a", "a", "e"]}  # u2-a twice: one interaction


def _parquet(tmp_path, name, data):
    path = tmp_path / name
    pl.DataFrame(data).write_parquet(path)
    return str(path)


def test_one_index_for_every_table(tmp_path):
    tables = read_tables(
        _parquet(tmp_path, "test.parquet", TEST),
        _parquet(tmp_path, "recs.parquet", RECS),
        _parquet(tmp_path, "train.parquet", TRAIN),
    )
    assert tables.user_ids == ("u1", "u2", "u3", "u4")
    assert tables.item_ids == ("a", "b", "c", "d", "e")
    expected = np.zeros((4, 5), dtype=np.int64)
    for u, i, r in zip(TEST["user"], TEST["item"], TEST["rating"], strict=True):
        expected[tables.user_ids.index(u), tables.item_ids.index(i)] = r
    assert (tables.test.toarray() == expected).all()
    # u1: a then c; u2: c then a; u3: d; u4 (only in training): no list
    assert tables.top_items.tolist() == [[0, 2], [2, 0], [3, -1], [-1, -1]]
    assert tables.train.toarray().tolist() == [
        [0, 0, 0, 1, 0],
        [1, 0, 0, 0, 0],
        [0, 0, 0, 0, 0],
        [0, 0, 0, 0, 1],
    ]
    assert tables.popularity is None


def test_frames_polars_pandas_and_integer_ids():
    test = pd.DataFrame({"user": [10, 2, 2], "item": [7, 7, 9], "label": [1, 2, 1]})
    recs = pl.DataFrame({"user": [2, 2, 10], "item": [9, 8, 7], "score": [0.5, 0.9, 0.1]})
    tables = read_tables(test, recs)
    assert tables.user_ids == ("2", "10")  # integers sorted as numbers, reported as text
    assert tables.item_ids == ("7", "8", "9")
    assert tables.test.toarray().tolist() == [[2, 0, 1], [1, 0, 0]]
    assert tables.top_items.tolist() == [[1, 2], [0, -1]]  # by score, highest first


def test_equal_scores_rank_the_lower_item_index_first():
    recs = pl.DataFrame({"user": ["u"] * 3, "item": ["z", "b", "m"], "score": [1.0, 1.0, 2.0]})
    tables = read_tables(pl.DataFrame({"user": ["u"], "item": ["b"]}), recs)
    assert [tables.item_ids[i] for i in tables.top_items[0]] == ["m", "b", "z"]


def test_columns_named_otherwise():
    test = pl.DataFrame({"uid": ["x"], "movie": [3], "stars": [4]})
    recs = pl.DataFrame({"uid": ["x"], "movie": [3], "pos": [1]})
    tables = read_tables(test, recs, columns=Columns(user="uid", item="movie", label="stars", rank="pos"))
    assert tables.test.toarray().tolist() == [[4]] and tables.top_items.tolist() == [[0]]


def test_without_a_label_column_every_interaction_is_relevant():
    tables = read_tables(pl.DataFrame({"user": [1, 1], "item": [1, 2], "timestamp": [5, 6]}))
    assert tables.test.toarray().tolist() == [[1, 1]]


def test_results_carry_the_users_own_ids(tmp_path):
    """evaluate_topk(user_ids=) equals the evaluation by row numbers, renamed; on a case worked by hand."""
    tables = read_tables(
        _parquet(tmp_path, "test.parquet", TEST),
        _parquet(tmp_path, "recs.parquet", RECS),
        _parquet(tmp_path, "train.parquet", TRAIN),
    )
    # the same data as matrices built here, rows u1..u4, columns a..e
    test = sp.csr_array(np.array([[5, 4, 0, 0, 0], [0, 0, 3, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]]))
    train = sp.csr_array(np.array([[0, 0, 0, 1, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]))
    top = np.array([[0, 2], [2, 0], [3, -1], [-1, -1]])
    by_row = irspec.evaluate_topk(test, top, "nDCG@2, R@2", exclude=train)
    named = irspec.evaluate_topk(
        tables.test, tables.top_items, "nDCG@2, R@2", exclude=tables.train, user_ids=tables.user_ids
    )
    assert by_row.query_ids == ("0", "1", "2") and named.query_ids == ("u1", "u2", "u3")
    np.testing.assert_array_equal(named.values, by_row.values)
    # u1: a (gain 5) at 1, c not held out; ideal a, b (4): 5 / (5 + 4 / log2 3)
    u1 = 5 / (5 + 4 / math.log2(3))
    assert named.values[:, 0].tolist() == pytest.approx([u1, 1.0, 0.0])  # u2: a excluded, c at 1
    assert named.aggregate()["nDCG@2"] == pytest.approx((u1 + 1) / 3)


def test_user_ids_in_order_as_text_and_in_warnings():
    test = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1]]))
    train = sp.csr_array(np.array([[0, 0], [1, 1], [0, 0]]))
    with pytest.warns(irspec.IrspecWarning, match="'bob'"):
        res = irspec.evaluate_topk(
            test, np.array([[0, 1], [0, 1], [1, 0]]), "P@1", exclude=train, user_ids=["carol", "bob", "al"]
        )
    assert res.query_ids == ("al", "bob", "carol")
    assert res.values[:, 0].tolist() == [1.0, 0.0, 1.0]
    assert any("('bob')" in w for w in res.warnings)  # bob's list is empty once training items are gone


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["a"], "user_ids has 1 ids, test_matrix 2 users"),
        (["a", "a"], "names two rows 'a'"),
        ("ab", "not a string"),
    ],
)
def test_bad_user_ids(ids, message):
    with pytest.raises(InputError, match=message):
        irspec.evaluate_topk(sp.csr_array(np.eye(2, dtype=int)), np.array([[0], [1]]), "P@1", user_ids=ids)


HOSTILE = [
    (
        "no user column",
        {"test": {"usr": [1], "item": [1]}},
        "test.parquet: no column 'user' (columns: 'usr', 'item')",
    ),
    ("float ids", {"test": {"user": [1.5], "item": [1]}}, "test.parquet: column 'user' holds Float64"),
    (
        "null item",
        {"test": {"user": [1, 2], "item": [1, None]}},
        "test.parquet: row 1: column 'item' is empty",
    ),
    (
        "duplicate pair",
        {"test": {"user": [1, 2, 1], "item": [4, 4, 4]}},
        "test.parquet: row 2: user and item repeat row 0's",
    ),
    (
        "NaN label",
        {"test": {"user": [1, 2], "item": [1, 1], "label": [1.0, float("nan")]}},
        "row 1: label nan",
    ),
    ("negative rating", {"test": {"user": [1, 2], "item": [1, 1], "rating": [-1, 2]}}, "row 0: rating -1.0"),
    (
        "half stars",
        {"test": {"user": [1], "item": [1], "rating": [4.5]}},
        "row 0: rating 4.5: labels are integers",
    ),
    ("text label", {"test": {"user": [1], "item": [1], "label": ["x"]}}, "column 'label' holds String"),
    (
        "text and integer ids",
        {"test": {"user": ["1"], "item": [1]}, "recs": {"user": [1], "item": [1], "rank": [1]}},
        "column 'user' holds text in",
    ),
    ("no rank or score", {"recs": {"user": [1], "item": [1]}}, "recs.parquet: no column 'rank' or 'score'"),
    ("rank 0", {"recs": {"user": [1, 1], "item": [1, 2], "rank": [1, 0]}}, "recs.parquet: row 1: rank 0.0"),
    (
        "rank twice",
        {"recs": {"user": [1, 1], "item": [1, 2], "rank": [1, 1]}},
        "row 1: rank 1 is given twice",
    ),
    ("score inf", {"recs": {"user": [1], "item": [1], "score": [float("inf")]}}, "row 0: score inf"),
    (
        "item twice",
        {"recs": {"user": [1, 1], "item": [1, 1], "rank": [1, 2]}},
        "recs.parquet: row 1: user and item",
    ),
]


@pytest.mark.parametrize(("case", "tables", "message"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_tables_are_refused_with_file_and_row(tmp_path, case, tables, message):
    test = tables.get("test", {"user": [1], "item": [1]})
    recs = tables.get("recs", {"user": [1], "item": [1], "rank": [1]})
    with pytest.raises(InputError) as raised:
        read_tables(_parquet(tmp_path, "test.parquet", test), _parquet(tmp_path, "recs.parquet", recs))
    assert message in str(raised.value)


def test_not_parquet_and_not_a_frame(tmp_path):
    (tmp_path / "t.txt").write_text("user item\n")
    with pytest.raises(InputError, match=r"t\.txt: cannot read as Parquet"):
        read_tables(str(tmp_path / "t.txt"))
    with pytest.raises(InputError, match="test must be a Parquet file's path or a polars or pandas"):
        read_tables({"user": [1]})


def test_several_systems_share_one_index_and_one_catalogue():
    # system b recommends item "z", which no other table has: it joins the catalogue of both systems
    test = pl.DataFrame({"user": ["u1", "u2"], "item": ["x", "y"]})
    a = pl.DataFrame({"user": ["u1", "u2"], "item": ["x", "x"], "rank": [1, 1]})
    b = pl.DataFrame({"user": ["u1", "u2"], "item": ["z", "y"], "rank": [1, 1]})
    found = irspec.recsys.evaluate_tables(test, {"a": a, "b": b}, "P@1, Coverage@1")
    assert [r.run_name for r in found] == ["a", "b"]
    assert [r.query_ids for r in found] == [("u1", "u2"), ("u1", "u2")]
    assert [r.column("P@1").tolist() for r in found] == [[1.0, 0.0], [0.0, 1.0]]
    assert [r.aggregate()["Coverage@1"] for r in found] == [1 / 3, 2 / 3]  # x, y, z: one catalogue
    tables = read_tables(test, None, None, tops=[a, b])
    assert tables.top_items is None and tables.item_ids == ("x", "y", "z") and len(tables.tops) == 2


def test_evaluate_tables_propensity_needs_training_interactions():
    test = pl.DataFrame({"user": [1, 2, 3], "item": [1, 2, 3]})
    top = pl.DataFrame({"user": [1, 2, 3], "item": [1, 1, 1], "rank": [1, 1, 1]})
    with pytest.raises(irspec.errors.EvaluationError, match="fitted to the training interactions"):
        irspec.recsys.evaluate_tables(test, {"m": top}, "PSP@1", propensity=(0.55, 1.5))
    # an empty training table has no training point: Jain et al.'s model needs N >= 3 (ln N - 1 > 0)
    with pytest.raises(irspec.errors.EvaluationError, match=r"at least 3 training users.*the table has 0"):
        irspec.recsys.evaluate_tables(test, {"m": top}, "PSP@1", exclude=test.head(0), propensity=(0.55, 1.5))
    with pytest.raises(InputError, match="a recommendations table of tops is None"):
        read_tables(test, None, None, tops=[None])


@pytest.mark.parametrize("training", ["exclude", "popularity"])
def test_propensity_counts_the_training_tables_users_alone(training):
    """Jain et al.'s N is the training points: the users of the training table (pyxclib's rows of the
    training matrix), not the shared index's, whose users 5 and 6 are only in the held-out and
    recommendations tables (cold start). pyxclib's compute_inv_propesity, written out:
    1/p = 1 + (ln N - 1) (B + 1)^A (N_l + B)^-A, with N = 3 and item 1's N_l = 0 (no user trained on it);
    irspec took N = 5, the index's users."""
    test = pl.DataFrame({"user": [1, 2, 3, 5, 6], "item": [1, 2, 3, 1, 1]})
    top = pl.DataFrame({"user": [1, 2, 3, 5, 6], "item": [1, 1, 1, 1, 1], "rank": [1, 1, 1, 1, 1]})
    train = pl.DataFrame({"user": [1, 2, 3, 3], "item": [2, 2, 3, 2]})
    (res,) = irspec.recsys.evaluate_tables(
        test, {"m": top}, "PSP@1", propensity=(0.55, 1.5), **{training: train}
    )
    n, a, b = 3, 0.55, 1.5
    inverse = 1 + (math.log(n) - 1) * (b + 1) ** a * (0 + b) ** -a  # item 1's 1/p
    # PSP@1: 1/p of the top item when relevant: item 1 is relevant for users 1, 5 and 6
    assert res.query_ids == ("1", "2", "3", "5", "6")
    assert res.column("PSP@1").tolist() == pytest.approx([inverse, 0.0, 0.0, inverse, inverse], rel=1e-12)


def test_features_are_read_over_the_index_without_adding_to_it(tmp_path):
    # items of the index: a, b, c, d (TEST and RECS); z is in no other table, b has no row
    features = {
        "item": ["c", "z", "a", "d"],
        "year": [1999, 2001, 1980, 2020],
        "drama": [True, False, False, True],
        "embedding": [[0.5, -1.0], [9.0, 9.0], [1.5, 0.0], [0.0, 2.0]],
    }
    tables = read_tables(pl.DataFrame(TEST), pl.DataFrame(RECS), features=pl.DataFrame(features))
    assert tables.item_ids == ("a", "b", "c", "d")  # z not added: no list holds it
    expected = np.array(
        [
            [1980, 0, 1.5, 0.0],  # a
            [0, 0, 0, 0],  # b: no row, no feature
            [1999, 1, 0.5, -1.0],  # c
            [2020, 1, 0.0, 2.0],  # d
        ]
    )
    np.testing.assert_array_equal(tables.features, expected)
    assert tables.expected is None


def test_expected_items_are_read_over_the_index_without_adding_to_it():
    expected = {"user": ["u1", "u1", "u3", "u9", "u2", "u1"], "item": ["a", "c", "z", "a", "d", "a"]}
    tables = read_tables(pl.DataFrame(TEST), pl.DataFrame(RECS), expected=pl.DataFrame(expected))
    assert tables.user_ids == ("u1", "u2", "u3") and tables.item_ids == ("a", "b", "c", "d")
    # u1: a (twice: once) and c; u2: d; u3-z and u9-a passed over (no such item, no such user)
    want = np.zeros((3, 4), dtype=bool)
    want[0, [0, 2]] = want[1, 3] = True
    np.testing.assert_array_equal(tables.expected.toarray(), want)


def test_tables_of_features_and_expected_items_give_the_matrices_values(tmp_path):
    rng = np.random.default_rng(5)
    users, items = 25, 30
    test = sp.csr_array(rng.random((users, items)) < 0.2, dtype=np.int64)
    top = np.array([rng.permutation(items)[:8] for _ in range(users)])
    genres = (rng.random((items, 6)) < 0.3).astype(np.int64)
    expects = np.array([rng.permutation(items)[:4] for _ in range(users)])
    r, c = test.nonzero()
    test_path = _parquet(tmp_path, "t.parquet", {"user": r, "item": c})
    recs = {
        "user": np.repeat(np.arange(users), 8),
        "item": top.ravel(),
        "rank": np.tile(np.arange(1, 9), users),
    }
    genre_table = {"item": np.arange(items), **{f"g{j}": genres[:, j] for j in range(6)}}
    expect_table = {"user": np.repeat(np.arange(users), 4), "item": expects.ravel()}
    recs_path = _parquet(tmp_path, "r.parquet", recs)
    spec = "ILD@8, ILD(distance=jaccard)@8, Serendipity(expected=items)@8, nDCG@8"
    (res,) = irspec.recsys.evaluate_tables(
        test_path,
        {"m": recs_path},
        spec,
        features=_parquet(tmp_path, "f.parquet", genre_table),
        expected=_parquet(tmp_path, "e.parquet", expect_table),
    )
    tables = read_tables(test_path, recs_path)
    assert tables.user_ids == tuple(map(str, range(users))) and tables.item_ids == tuple(
        map(str, range(items))
    )
    ref = irspec.evaluate_topk(test, top, spec, features=genres, expected=expects)
    assert res.aggregate() == pytest.approx(ref.aggregate(), rel=1e-12, abs=0)


BAD_FEATURES = [
    ("text", {"item": ["a"], "genre": ["drama"]}, "column 'genre' holds String: each column but the item's"),
    ("item twice", {"item": ["a", "b", "a"], "x": [1, 2, 3]}, "features.parquet: row 2: item 'a' repeats"),
    (
        "nan",
        {"item": ["a", "b"], "x": [1.0, float("nan")]},
        "row 1: column 'x': a feature that is not a finite",
    ),
    ("null", {"item": ["a", "b"], "x": [None, 1.0]}, "row 0: column 'x': a feature that is not a finite"),
    ("ragged", {"item": ["a", "b"], "v": [[1.0, 2.0], [3.0]]}, "row 1: column 'v': a list of 2 numbers"),
    ("item alone", {"item": ["a", "b"]}, "no feature: the table has the column 'item' alone"),
    ("ids of the other kind", {"item": [1, 2], "x": [1, 2]}, "column 'item' holds integers where the other"),
    ("no item column", {"movie": ["a"], "x": [1]}, "no column 'item'"),
]


@pytest.mark.parametrize(("case", "features", "message"), BAD_FEATURES, ids=[b[0] for b in BAD_FEATURES])
def test_bad_features_are_refused_with_the_table_and_row(tmp_path, case, features, message):
    path = _parquet(tmp_path, "features.parquet", features)
    with pytest.raises(InputError) as raised:
        read_tables(pl.DataFrame(TEST), pl.DataFrame(RECS), features=path)
    assert message in str(raised.value) and "features.parquet" in str(raised.value)


def test_bad_expected_items_are_refused_with_the_table_and_row(tmp_path):
    path = _parquet(tmp_path, "expected.parquet", {"user": ["u1", None], "item": ["a", "b"]})
    with pytest.raises(InputError, match=r"expected\.parquet: row 1: column 'user' is empty"):
        read_tables(pl.DataFrame(TEST), pl.DataFrame(RECS), expected=path)
