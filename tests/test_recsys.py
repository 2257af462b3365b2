"""irspec.evaluate_topk and irspec.evaluate_scores (irspec.recsys.matrices): a scipy.sparse users × items
matrix of held-out interactions, recommendations as item indices or scores, training items excluded.

Expected values come from pytrec_eval, given the same data as dicts built here, and from plain Python
written out in the tests (each user's list filtered and cut by hand, the top k of scores by a sort).
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
import pytrec_eval
import scipy.sparse as sp

import irspec
from irspec.errors import EvaluationError, InputError
from irspec.recsys import matrices

METRICS = "nDCG@5, nDCG@10, P@5, R@10, AP@10, RR@10, Success@5"
TREC = {"ndcg_cut_5", "ndcg_cut_10", "P_5", "recall_10", "map_cut_10", "recip_rank", "success_5"}


def _data(seed: int, users: int = 60, items: int = 40, k: int = 15, graded: bool = True):
    """Held-out and training matrices and a top-k array, adversarially: empty users, explicit zeros,
    graded labels, -1 padding, recommended training items, rows that are all -1."""
    rng = np.random.default_rng(seed)
    dense = rng.random((users, items))
    held = np.where(dense < 0.08, rng.integers(1, 4 if graded else 2, size=dense.shape), 0)
    zeros = (dense >= 0.08) & (dense < 0.1)  # judged non-relevant: stored zeros
    train = (dense > 0.85).astype(np.int64)
    held[5] = 0  # a user with nothing held out
    zeros[5] = False
    rows, cols = np.nonzero((held > 0) | zeros)
    test = sp.csr_array((held[rows, cols], (rows, cols)), shape=(users, items))
    assert test.nnz > np.count_nonzero(held)  # explicit zeros are stored
    top = np.array([rng.permutation(items)[:k] for _ in range(users)])
    top[rng.random(top.shape) < 0.1] = -1
    top[7] = -1  # a user given no recommendation
    return test, sp.csr_array(train), top


def _lists(test, train, top, exclude: bool):
    """Each user's list as the tests read it: -1 dropped, training items dropped when ``exclude``."""
    out = {}
    for u in range(test.shape[0]):
        seen = set(train[[u], :].indices.tolist()) if exclude else set()
        out[u] = [int(i) for i in top[u] if i != -1 and int(i) not in seen]
    return out


def _pytrec(test, lists, users, k_run: int = 1000):
    qrels = {}
    for u in users:
        row = test[[u], :]
        qrels[str(u)] = {str(i): int(v) for i, v in zip(row.indices.tolist(), row.data.tolist(), strict=True)}
    run = {str(u): {str(i): float(len(lists[u]) - j) for j, i in enumerate(lists[u][:k_run])} for u in users}
    ev = pytrec_eval.RelevanceEvaluator(qrels, TREC)
    return ev.evaluate(run)


def _users_with_relevant(test, level: int = 1):
    return [u for u in range(test.shape[0]) if (test[[u], :].data >= level).any()]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("exclude", [False, True])
def test_topk_equals_pytrec_eval_on_the_same_dicts(seed, exclude):
    test, train, top = _data(seed)
    res = irspec.evaluate_topk(test, top, METRICS, exclude=train if exclude else None)
    users = _users_with_relevant(test)
    want = _pytrec(test, _lists(test, train, top, exclude), users)
    assert res.query_ids == tuple(sorted(str(u) for u in users))
    names = {
        "nDCG@5": "ndcg_cut_5",
        "nDCG@10": "ndcg_cut_10",
        "P@5": "P_5",
        "R@10": "recall_10",
        "AP@10": "map_cut_10",
        "Success@5": "success_5",
    }
    got = res.per_query()
    for u in users:
        for ours, theirs in names.items():
            # pytrec_eval leaves out a query without a retrieved document: every measure is 0 there
            expected = want.get(str(u), {}).get(theirs, 0.0)
            assert got[str(u)][ours] == pytest.approx(expected, abs=1e-12), (u, ours)


def test_exclusion_happens_before_the_cut():
    # user 0 holds out item 3; items 0 and 1, recommended first, are training items
    test = sp.csr_array(np.array([[0, 0, 0, 1]]))
    train = sp.csr_array(np.array([[1, 1, 0, 0]]))
    top = np.array([[0, 1, 3, 2]])
    assert irspec.evaluate_topk(test, top, "P@1").aggregate() == {"P@1": 0.0}
    res = irspec.evaluate_topk(test, top, "P@1, RR", exclude=train)
    assert res.aggregate() == {"P@1": 1.0, "RR": 1.0}  # 3 moved up to rank 1
    assert "exclude: 2 training interactions, removed before the cut" in res.run_source


def test_users_without_a_held_out_item_are_skipped_or_zero():
    test = sp.csr_array((np.array([1, 0]), (np.array([0, 2]), np.array([1, 1]))), shape=(4, 3))
    top = np.array([[1, 0], [1, 0], [1, 0], [0, 2]])
    skipped = irspec.evaluate_topk(test, top, "P@1, NumRet")
    assert skipped.query_ids == ("0",)  # user 2's only item is an explicit zero: no relevant item
    zero = irspec.evaluate_topk(test, top, "P@1, NumRet", empty_users="zero")
    assert zero.query_ids == ("0", "1", "2", "3")
    assert zero.per_query()["3"] == {"P@1": 0.0, "NumRet": 0.0}
    assert zero.aggregate()["P@1"] == 1 / 4
    with pytest.raises(EvaluationError, match="empty_users must be skip or zero"):
        irspec.evaluate_topk(test, top, "P@1", empty_users="error")


def test_relevance_level_decides_who_has_a_relevant_item():
    test = sp.csr_array(np.array([[1, 2, 0], [1, 0, 0]]))
    top = np.array([[0, 1], [0, 1]])
    res = irspec.evaluate_topk(test, top, "P@1, P@2", relevance_level=2)
    assert res.query_ids == ("0",)
    assert res.aggregate() == {"P@1": 0.0, "P@2": 0.5}


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok"])
def test_every_sparse_format_reads_alike(fmt):
    test, train, top = _data(11)
    want = irspec.evaluate_topk(test, top, METRICS, exclude=train)
    got = irspec.evaluate_topk(test.asformat(fmt), top, METRICS, exclude=train.asformat(fmt))
    assert got.query_ids == want.query_ids
    np.testing.assert_array_equal(got.values, want.values)
    old_style = irspec.evaluate_topk(
        sp.csr_matrix(test), top.astype(np.int32), METRICS, exclude=sp.coo_matrix(train)
    )
    np.testing.assert_array_equal(old_style.values, want.values)


def _stored_twice(fmt: str, labels: tuple[int, int]):
    """User 0 of a 1 × 4 matrix with item 2 stored twice (``labels``) and item 1 once, in ``fmt``."""
    if fmt == "coo":
        return sp.coo_array(
            (np.array([*labels, 1]), (np.array([0, 0, 0]), np.array([2, 2, 1]))), shape=(1, 4)
        )
    if fmt == "csr":  # non-canonical: the indices unsorted, item 2 twice
        return sp.csr_array(
            (np.array([labels[0], 1, labels[1]]), np.array([2, 1, 2]), np.array([0, 3])), (1, 4)
        )
    if fmt == "csc":  # column 2 holds row 0 twice: made CSR, both entries stay
        return sp.csc_array((np.array([1, *labels]), np.array([0, 0, 0]), np.array([0, 0, 1, 3, 3])), (1, 4))
    # bsr: two 1 × 1 blocks at column 2
    return sp.bsr_array(
        (np.array([1, *labels]).reshape(3, 1, 1), np.array([1, 2, 2]), np.array([0, 3])), (1, 4)
    )


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "bsr"])
@pytest.mark.parametrize("labels", [(1, 1), (1, -1)])
def test_a_held_out_pair_stored_twice_is_refused(fmt, labels):
    """scipy adds repeated entries up (two logged 1s would read as a label 2, a 1 and a -1 as no entry
    at all), where the held-out table refuses a repeated pair: the matrix's is refused too, naming it."""
    test = _stored_twice(fmt, labels)
    message = r"user 0, item 2: stored twice in test_matrix"
    with pytest.raises(InputError, match=message):
        irspec.evaluate_topk(test, np.array([[2, 1]]), "nDCG@2")
    with pytest.raises(InputError, match=message):
        irspec.evaluate_scores(test, np.array([[0.0, 1.0, 2.0, 3.0]]), "nDCG@2")
    with pytest.raises(InputError, match=message):
        irspec.recsys.sampled(test, np.array([[0.0, 1.0, 2.0, 3.0]]), n=1, metrics="AP")


def test_entries_in_any_order_read_as_the_canonical_matrix():
    """A COO matrix in no order and a CSR one with unsorted indices, each pair once: the canonical
    matrix's values (the check costs only for matrices that are not canonical, and finds nothing)."""
    test, train, top = _data(5)
    want = irspec.evaluate_topk(test, top, METRICS, exclude=train)
    coo = test.tocoo()
    order = np.random.default_rng(0).permutation(coo.nnz)
    shuffled = sp.coo_array((coo.data[order], (coo.row[order], coo.col[order])), shape=test.shape)
    assert not shuffled.has_canonical_format
    got = irspec.evaluate_topk(shuffled, top, METRICS, exclude=train)
    np.testing.assert_array_equal(got.values, want.values)
    unsorted = sp.csr_array(shuffled.tocsc())  # CSR whose indices are not sorted within rows
    got = irspec.evaluate_topk(unsorted, top, METRICS, exclude=train)
    np.testing.assert_array_equal(got.values, want.values)


def test_a_training_pair_stored_twice_is_one_interaction():
    """The training matrices (exclude=, popularity=) say which pairs are stored: a pair twice is one
    interaction, as a repeated row of a training table is and as jain_propensity counts it."""
    test = sp.csr_array(np.array([[0, 0, 1, 0], [0, 0, 0, 1]]))
    once = sp.coo_array((np.ones(3, int), (np.array([0, 1, 1]), np.array([0, 0, 1]))), shape=(2, 4))
    twice = sp.coo_array((np.ones(4, int), (np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1]))), shape=(2, 4))
    top = np.array([[0, 1], [1, 0]])
    for train in (once, twice):
        # item 0's popularity is its 2 users (3 if the pair stored twice counted twice), item 1's 1:
        # each list's mean (2 + 1) / 2
        assert irspec.evaluate_topk(test, top, "ARP@2", popularity=train).aggregate() == {"ARP@2": 1.5}
        # user 0's list without item 0 is [1]: P@1 0 (item 2 is held out); user 1's is empty
        res = irspec.evaluate_topk(test, top, "P@1", exclude=train)
        assert res.values.ravel().tolist() == [0.0, 0.0]


def test_float_labels_must_be_whole():
    coo = sp.coo_array((np.array([2.0]), (np.array([0]), np.array([2]))), shape=(1, 3))
    res = irspec.evaluate_topk(coo, np.array([[2]]), "nDCG@1, NumRel(rel=2)")
    assert res.aggregate()["NumRel(rel=2)"] == 1.0
    floats = sp.csr_array(np.array([[0.0, 4.0, 1.0]]))
    assert irspec.evaluate_topk(floats, np.array([[1, 2]]), "NumRel(rel=4)").aggregate() == {
        "NumRel(rel=4)": 1.0
    }
    with pytest.raises(InputError, match=r"user 0, item 1: label 4.5 is not an integer"):
        irspec.evaluate_topk(sp.csr_array(np.array([[0, 4.5]])), np.array([[1]]), "P@1")


@pytest.mark.parametrize("label", [1.0, 3.0, 0.0, -2.0])
def test_one_float_label_for_every_entry_reads_as_that_integer(label):
    """Implicit feedback's matrix of 1.0 (one label for every stored entry), made integers without the
    check of each label: the same values as the matrix of integers."""
    test, _, top = _data(3)
    ints = sp.csr_array((np.full(test.nnz, int(label)), test.indices, test.indptr), shape=test.shape)
    floats = sp.csr_array((np.full(test.nnz, label), test.indices, test.indptr), shape=test.shape)
    metrics = "nDCG@5, AP@5, NumRel, NumRel(rel=3), Judged@5"
    want = irspec.evaluate_topk(ints, top, metrics, empty_users="zero")
    got = irspec.evaluate_topk(floats, top, metrics, empty_users="zero")
    assert got.query_ids == want.query_ids
    np.testing.assert_array_equal(got.values, want.values)


@pytest.mark.parametrize(
    ("label", "shown"), [(np.nan, "nan"), (np.inf, "inf"), (1e20, r"1e\+20"), (2.5, "2.5")]
)
def test_one_float_label_for_every_entry_must_be_whole(label, shown):
    floats = sp.csr_array((np.full(3, label), np.array([0, 1, 2]), np.array([0, 2, 3])), shape=(2, 3))
    with pytest.raises(InputError, match=rf"user 0, item 0: label {shown} is not an integer"):
        irspec.evaluate_topk(floats, np.array([[0], [2]]), "P@1")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda t: irspec.evaluate_topk(t.toarray(), np.array([[0]] * 3), "P@1"),
            "must be a scipy.sparse matrix",
        ),
        (
            lambda t: irspec.evaluate_topk(t, np.array([[0]] * 2), "P@1"),
            "top_items has 2 rows, test_matrix 3 users",
        ),
        (lambda t: irspec.evaluate_topk(t, np.array([0, 1, 2]), "P@1"), "must be a 2-D integer array"),
        (lambda t: irspec.evaluate_topk(t, np.array([[0.5]] * 3), "P@1"), "must be a 2-D integer array"),
        (
            lambda t: irspec.evaluate_topk(t, np.array([[0], [4], [1]]), "P@1"),
            r"user 1, column 0: item 4 is not a column",
        ),
        (lambda t: irspec.evaluate_topk(t, np.array([[0], [-2], [1]]), "P@1"), "item -2 is not a column"),
        (lambda t: irspec.evaluate_topk(t, np.array([[0, 0]] * 3), "P@1"), "given twice"),
        (
            lambda t: irspec.evaluate_topk(t, np.array([[0]] * 3), "P@1", exclude=sp.csr_array((3, 5))),
            "exclude has shape",
        ),
        (lambda t: irspec.evaluate_scores(t, np.zeros((3, 5)), "P@1"), r"users × items \(4 items\)"),
        (
            lambda t: irspec.evaluate_scores(t, np.zeros((2, 4)), "P@1"),
            "scores have 2 rows, test_matrix 3 users",
        ),
        (lambda t: irspec.evaluate_scores(t, np.zeros((4, 4)), "P@1"), "more rows than test_matrix"),
        (
            lambda t: irspec.evaluate_scores(t, np.full((3, 4), np.nan), "P@1"),
            r"user 0, item 0: score nan is not finite",
        ),
        (
            lambda t: irspec.evaluate_topk(t, np.array([[0]] * 3), "P@1", propensity=[0.5] * 3),
            "one value per item",
        ),
        (
            lambda t: irspec.evaluate_topk(t, np.array([[0]] * 3), "P@1", propensity=[0.5, 0, 1, 1]),
            r"item 1: propensity 0.0",
        ),
    ],
)
def test_bad_inputs_name_what_was_expected(call, message):
    test = sp.csr_array(np.eye(3, 4, dtype=np.int64))
    with pytest.raises(InputError, match=message):
        call(test)


OUT_OF_BOUNDS = [
    ([[0, 1], [2, 9], [1, 0]], "user 1, column 1: item 9"),  # full lists
    ([[0, -1], [1, -1], [7, -1]], "user 2, column 0: item 7"),  # padded ones
    ([[-1, 5], [1, 0], [0, 1]], "user 0, column 1: item 5"),  # a -1 before an item
    ([[0, 1], [1, -3], [1, 0]], "user 1, column 1: item -3"),
]


@pytest.mark.parametrize("exclude", [False, True])
@pytest.mark.parametrize("kind", [np.int32, np.int64])
@pytest.mark.parametrize(("lists", "where"), OUT_OF_BOUNDS)
def test_an_item_out_of_bounds_is_named_with_or_without_exclude(exclude, kind, lists, where):
    """Without exclude= the bounds are checked in the pass that counts the lists (scan_lists), with it
    before the training items are removed: the same message either way."""
    test = sp.csr_array(np.eye(3, 4, dtype=np.int64))
    train = sp.csr_array((3, 4), dtype=np.int64) if exclude else None
    with pytest.raises(
        InputError, match=rf"{where} is not a column of test_matrix \(0 to 3, or -1 for none\)"
    ):
        irspec.evaluate_topk(test, np.array(lists, dtype=kind), "P@1", exclude=train)


@pytest.mark.parametrize("exclude", [False, True])
@pytest.mark.parametrize("kind", [np.uint16, np.uint64])
def test_an_unsigned_item_out_of_bounds_is_named_as_given(exclude, kind):
    test = sp.csr_array(np.eye(3, 4, dtype=np.int64))
    train = sp.csr_array((3, 4), dtype=np.int64) if exclude else None
    top = np.array([[0, 1], [2, np.iinfo(kind).max], [1, 0]], dtype=kind)
    with pytest.raises(InputError, match=rf"user 1, column 1: item {np.iinfo(kind).max} is not a column"):
        irspec.evaluate_topk(test, top, "P@1", exclude=train)


def test_scores_need_k_for_a_metric_without_a_fixed_cutoff():
    test = sp.csr_array(np.eye(3, 4, dtype=np.int64))
    with pytest.raises(EvaluationError, match=r"AP has no fixed cutoff.*give k="):
        irspec.evaluate_scores(test, np.zeros((3, 4)), "AP, P@2")
    res = irspec.evaluate_scores(test, np.eye(3, 4), "AP, P@2", k=4)
    assert res.aggregate() == {"AP": 1.0, "P@2": 0.5}


def _top_by_sort(scores: np.ndarray, k: int, train=None) -> np.ndarray:
    """Each row's top k by (score descending, item ascending), training items left out: a full sort."""
    out = np.full((len(scores), k), -1, dtype=np.int64)
    for u, line in enumerate(scores):
        row = line.tolist()  # Python's numbers: integers exact at any size, negated without wrapping
        seen = set(train[[u], :].indices.tolist()) if train is not None else set()
        ranked = sorted((i for i in range(len(row)) if i not in seen), key=lambda i: (-row[i], i))[:k]
        out[u, : len(ranked)] = ranked
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [1, 7, 40, 45])
def test_top_items_ties_break_by_item_index(seed, k):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, size=(30, 40)).astype(np.float32)  # ties everywhere
    _, train, _ = _data(seed, users=30, items=40)
    np.testing.assert_array_equal(matrices.top_items(scores, k), _top_by_sort(scores, k))
    np.testing.assert_array_equal(matrices.top_items(scores, k, train), _top_by_sort(scores, k, train))


INTEGER_SCORES = [np.uint8, np.uint16, np.uint64, np.int8, np.int32, np.int64]


@pytest.mark.parametrize("kind", INTEGER_SCORES)
@pytest.mark.parametrize("k", [1, 3, 8])
def test_integer_scores_rank_as_integers(kind, k):
    """Integer scores of every type, their extremes included, are ranked as the integers they are:
    negated, an unsigned score wraps and int64's minimum stays itself, and made float64, two int64
    scores above 2**53 tie. The same order with exclude= as without (excluded items aside)."""
    info = np.iinfo(kind)
    values = [info.min, info.min + 1, 0, 1, info.max - 1, info.max]
    if info.bits == 64:
        values += [2**53, 2**53 + 1]  # one float64 apart from nothing: 2**53 + 1 is not a float64
    rng = np.random.default_rng(info.bits + info.min % 7)
    scores = np.array(rng.choice(np.array(values, dtype=object), size=(25, 8)).tolist(), dtype=kind)
    _, train, _ = _data(1, users=25, items=8)
    np.testing.assert_array_equal(matrices.top_items(scores, k), _top_by_sort(scores, k))
    np.testing.assert_array_equal(matrices.top_items(scores, k, train), _top_by_sort(scores, k, train))


def test_unsigned_and_large_scores_by_hand():
    """The hunter's cases: item 1 has the highest uint8 score 5 (rank 1, RR 1); int64's minimum is the
    lowest score; 2**53 + 1 ranks above 2**53 with exclude= as without."""
    test = sp.csr_array(np.array([[0, 1, 0, 0]]))
    scores = np.array([[0, 5, 3, 1]], dtype=np.uint8)
    assert matrices.top_items(scores, 4).tolist() == [[1, 2, 3, 0]]
    assert irspec.evaluate_scores(test, scores, "RR@4").aggregate() == {"RR@4": 1.0}
    lowest = np.array([[np.iinfo(np.int64).min, 5, 3, 1]])
    assert matrices.top_items(lowest, 4).tolist() == [[1, 2, 3, 0]]
    large = np.array([[2**53, 2**53 + 1, 0, 7]], dtype=np.int64)
    without_3 = sp.csr_array(np.array([[0, 0, 0, 1]]))
    assert matrices.top_items(large, 2).tolist() == [[1, 0]]
    assert matrices.top_items(large, 2, without_3).tolist() == [[1, 0]]
    assert matrices.top_items(large, 4, without_3).tolist() == [[1, 0, 2, -1]]


def test_an_excluded_item_never_displaces_a_score_at_the_types_lowest():
    """An excluded item's score is put at its type's lowest value, which a real score may have too:
    the real one is kept first (item 2 scores 0, item 0 is excluded, and 0 is uint8's lowest)."""
    scores = np.array([[9, 5, 0, 7]], dtype=np.uint8)
    exclude = sp.csr_array(np.array([[1, 0, 0, 0]]))
    assert matrices.top_items(scores, 3, exclude).tolist() == [[3, 1, 2]]
    assert matrices.top_items(scores, 4, exclude).tolist() == [[3, 1, 2, -1]]
    lowest = np.array([[0, np.iinfo(np.int64).min, 0, 0]], dtype=np.int64)
    assert matrices.top_items(lowest, 3, sp.csr_array(np.array([[1, 0, 1, 0]]))).tolist() == [[3, 1, -1]]


@pytest.mark.parametrize("kind", [np.uint8, np.int64])
def test_integer_scores_in_chunks_equal_their_top_k_evaluated(kind, monkeypatch):
    test, train, _ = _data(4)
    rng = np.random.default_rng(4)
    base = 2**60 if kind is np.int64 else 0
    scores = (base + rng.integers(0, 6, size=test.shape)).astype(kind)  # ties, and beyond 2**53 in int64
    _chunks_equal_their_top_k(test, scores, train, monkeypatch)


def _chunks_equal_their_top_k(test, scores, train, monkeypatch):
    """``scores`` evaluated in chunks of 7 users, made or given in 13s, equal their top 10 found by a
    sort; the chunks given, as returned."""
    want = irspec.evaluate_topk(test, _top_by_sort(scores, 10, train), METRICS)
    monkeypatch.setattr(matrices, "CHUNK_ENTRIES", 7 * test.shape[1])
    chunked = irspec.evaluate_scores(test, scores, METRICS, exclude=train)
    np.testing.assert_array_equal(chunked.values, want.values)
    given = irspec.evaluate_scores(
        test, (scores[i : i + 13] for i in range(0, len(scores), 13)), METRICS, exclude=train
    )
    np.testing.assert_array_equal(given.values, want.values)
    return given


def test_k_below_a_metrics_cutoff_warns():
    """k=2 keeps two items per user: R@6 counts the relevant items of the top 2 alone (user 0 has items
    1 and 3 relevant, its top 2 holds item 1: R 1/2; user 1's item 0 is last: R 0), which a warning
    says; k at or above every cutoff, or no k, says nothing."""
    test = sp.csr_array(np.array([[0, 1, 0, 1, 0, 0], [1, 0, 0, 0, 0, 0]]))
    scores = np.array([[6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6]], dtype=float)
    with pytest.warns(irspec.IrspecWarning, match=r"k=2 is below the cutoff of R@6, nDCG@3: .*the top 2"):
        res = irspec.evaluate_scores(test, scores, "R@6, P@1, nDCG@3, AP", k=2)
    assert res.aggregate()["R@6"] == (0.5 + 0.0) / 2
    assert any("k=2 is below the cutoff of R@6, nDCG@3" in w for w in res.warnings)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert irspec.evaluate_scores(test, scores, "R@6").aggregate() == {"R@6": 1.0}
        irspec.evaluate_scores(test, scores, "R@6, AP", k=6)


@pytest.mark.parametrize("seed", range(3))
def test_scores_equal_their_top_k_evaluated(seed, monkeypatch):
    test, train, _ = _data(seed)
    rng = np.random.default_rng(100 + seed)
    scores = np.round(rng.normal(size=test.shape), 1)  # many ties
    want = irspec.evaluate_topk(test, _top_by_sort(scores, 10, train), METRICS)
    whole = irspec.evaluate_scores(test, scores, METRICS, exclude=train)
    np.testing.assert_array_equal(whole.values, want.values)
    # chunks of any size, given or made, find the same top k
    given = _chunks_equal_their_top_k(test, scores, train, monkeypatch)
    assert "exclude:" in given.run_source


def test_scores_in_chunks_stay_in_bounded_memory():
    users, items = 6000, 2000  # 96 MB as float64, 48 MB as float32: never held whole
    rng = np.random.default_rng(0)
    test = sp.random_array((users, items), density=0.002, rng=rng, format="csr")
    test.data[:] = 1
    train = sp.random_array((users, items), density=0.01, rng=rng, format="csr")

    def chunks():
        for start in range(0, users, 250):
            yield np.random.default_rng(start).random((250, items), dtype=np.float32)

    irspec.evaluate_scores(test, chunks(), "nDCG@10", exclude=train)  # warm: registry, plugins, polars
    tracemalloc.start()
    try:
        irspec.evaluate_scores(test, chunks(), "nDCG@10", exclude=train)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a chunk is 2 MB (float32), its float64 copy with the training items sunk 4 MB, argpartition's
    # indices 4 MB: a few chunks' worth, whatever the number of users
    assert peak < 24 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_results_read_as_frames_and_compare():
    test, train, top = _data(3)
    a = irspec.evaluate_topk(test, top, "nDCG@10, R@10", exclude=train, name="a")
    b = irspec.evaluate_topk(test, top[:, ::-1].copy(), "nDCG@10, R@10", exclude=train, name="b")
    frame = a.to_frame()
    assert frame.columns == ["run", "query_id", "metric", "value"]
    assert frame.height == 2 * len(a.query_ids)
    found = irspec.compare({"a": a, "b": b}, baseline="a")
    rows = {c.metric: c for c in found}
    assert set(rows) == {"nDCG@10", "R@10"}
    means = {rows["nDCG@10"].a: rows["nDCG@10"].mean_a, rows["nDCG@10"].b: rows["nDCG@10"].mean_b}
    assert means == pytest.approx({"a": a.column("nDCG@10").mean(), "b": b.column("nDCG@10").mean()})


def test_no_judged_warning_for_items_not_held_out():
    # every item not held out is unjudged: no warning that the values rest on unjudged documents
    test, _, top = _data(2)
    top[7] = np.arange(15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = irspec.evaluate_topk(test, top, "nDCG@10")
    assert not res.warnings


def test_a_user_left_without_recommendations_is_named():
    # a list emptied by the exclusion is an empty ranking: 0, counted in the mean, and said
    test = sp.csr_array(np.array([[1, 0, 0], [0, 1, 0]]))
    train = sp.csr_array(np.array([[0, 0, 0], [1, 0, 1]]))
    with pytest.warns(irspec.IrspecWarning, match=r"\('1'\)"):
        res = irspec.evaluate_topk(test, np.array([[0, 2], [0, 2]]), "P@1", exclude=train)
    assert res.per_query() == {"0": {"P@1": 1.0}, "1": {"P@1": 0.0}}
