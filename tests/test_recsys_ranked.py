"""irspec.recsys.ranked: the context built straight from the CSR matrix and the top-k array, which
irspec.evaluate_topk takes when every evaluated user has a list with its -1 padding after the items.

The reference is the engine's general path, given the same data as dicts built here (each user's list
filtered by hand, scores k, k - 1, ... by place): per-user values, means, Judged@10 and warnings must be
identical, bit for bit; and, for the inputs only irspec.evaluate_topk gives (propensities, popularity,
the catalogue), the general path of evaluate_topk itself, taken when a list has a hole (a -1 before an
item), which ranks the same items.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import irspec
from irspec.errors import InputError
from irspec.evaluation.compute import bind_metrics
from irspec.evaluation.context import UNJUDGED, Options
from irspec.evaluation.parts import context_values
from irspec.recsys import matrices, ranked
from irspec.spec.registry import MetricDef, Param

METRICS = (
    "nDCG@5, nDCG@10, nDCG, nDCG(dcg=exp-log2)@10, nDCG(gains={0:0,1:1,2:5,3:9})@10, P@5, P@R, R@10, AP@10, AP, "
    "AP(den=min)@10, RR@10, Success@5, relP@10, Bpref, infAP, Rprec, Judged@10, NumRet, "
    "NumRel, IPrec(recall=0.2), Accuracy@5, P(judged_only=true)@5, nDCG(judged_only=true)@10"
)


def _data(seed: int, users: int = 80, items: int = 50, k: int = 12):
    """Graded held-out labels with explicit zeros (judged non-relevant), a user with nothing held out,
    training items, and lists whose -1 padding comes after their items (some lists full, some short)."""
    rng = np.random.default_rng(seed)
    dense = rng.random((users, items))
    held = np.where(dense < 0.1, rng.integers(1, 4, size=dense.shape), 0)
    zeros = (dense >= 0.1) & (dense < 0.13)
    held[3], zeros[3] = 0, False
    rows, cols = np.nonzero((held > 0) | zeros)
    test = sp.csr_array((held[rows, cols], (rows, cols)), shape=(users, items))
    top = np.array([rng.permutation(items)[:k] for _ in range(users)])
    seen = dense > 0.85
    seen[np.arange(users), top[:, 0]] = False  # each list keeps an item once the training items are out
    train = sp.csr_array(seen.astype(np.int64))
    short = rng.integers(1, k + 1, size=users)
    top[np.arange(k)[None, :] >= short[:, None]] = -1
    return test, train, top


def _lists(top, train=None):
    out = {}
    for u, row in enumerate(top.tolist()):
        seen = set() if train is None else set(train[[u], :].indices.tolist())
        out[u] = [i for i in row if i >= 0 and i not in seen]
    return out


def _reference(test, lists, k, metrics, level=1):
    """The engine's general path on dicts: a user with an item at ``level`` or above is a query."""
    qrels, run = {}, {}
    for u in range(test.shape[0]):
        row = test[[u], :]
        if not (row.data >= level).any():
            continue
        qrels[str(u)] = dict(zip(map(str, row.indices.tolist()), map(int, row.data.tolist()), strict=True))
        run[str(u)] = {str(i): float(k - j) for j, i in enumerate(lists[u])}
    return irspec.evaluate(qrels, run, metrics, relevance_level=level, judged_warning=None)


def _same(a, b):
    assert a.query_ids == b.query_ids
    np.testing.assert_array_equal(a.values, b.values)  # NaN where NaN, every other value bit for bit
    assert a.texts == b.texts
    assert a.judged_at_10 == b.judged_at_10
    assert a.warnings == b.warnings
    assert a.options == b.options


@pytest.fixture
def direct(monkeypatch):
    """How many contexts were built from the matrices (the real function, counted)."""
    calls = []
    real = matrices.matrix_context

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(matrices, "matrix_context", counted)
    return calls


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [1, 2])
def test_the_direct_context_equals_the_engine_on_dicts(seed, level, direct):
    test, _, top = _data(seed)
    got = irspec.evaluate_topk(test, top, METRICS, relevance_level=level)
    assert direct == [1]
    _same(got, _reference(test, _lists(top), top.shape[1], METRICS, level))


def test_full_lists_take_the_direct_context(direct):
    test, _, top = _data(9)
    full = np.array([np.random.default_rng(u).permutation(test.shape[1])[:12] for u in range(len(top))])
    got = irspec.evaluate_topk(test, full, METRICS)
    assert direct == [1]
    _same(got, _reference(test, _lists(full), full.shape[1], METRICS))


@pytest.mark.parametrize("seed", range(3))
def test_training_items_removed_then_the_direct_context(seed, direct):
    test, train, top = _data(seed)
    got = irspec.evaluate_topk(test, top, METRICS, exclude=train)
    assert direct == [1]
    _same(got, _reference(test, _lists(top, train), top.shape[1], METRICS))


def test_a_metric_computed_user_by_user_reads_the_same_lists(irspec_plugin, direct):
    """A per-query plugin metric sees each user's items, scores, labels and judgments as the engine's
    frames give them."""

    def digest(view, metric):
        found = sum(
            s for s, lab in zip(view.scores, view.labels, strict=True) if lab is not None and lab >= 1
        )
        judged = sum(view.qrels.values()) / 7
        return found + judged + int(view.docnos[0]) / 1000 + len(view.docnos) / 100

    class Plugin:
        @irspec.hookimpl
        def irspec_register_metrics(self, register):
            register(
                MetricDef(
                    "Digest",
                    "a per-query function",
                    (Param("k", "int", 10, "cutoff"),),
                    at="k",
                    per_query=digest,
                )
            )

    irspec_plugin(Plugin())
    test, _, top = _data(5)
    got = irspec.evaluate_topk(test, top, "Digest, nDCG@10")
    assert direct == [1]
    _same(got, _reference(test, _lists(top), top.shape[1], "Digest, nDCG@10"))


def test_inputs_only_topk_gives_equal_the_general_path(direct):
    """Propensity-scored, popularity and catalogue metrics: the direct context against evaluate_topk's
    general path, taken for the same lists with a hole moved into each (a -1 before an item)."""
    test, train, top = _data(7)
    metrics = (
        "PSP@5, PSnDCG@5, PSDCG(ideal=true)@5, ARP@10, APLT@10, Novelty@10, Coverage@10, Gini@10, nDCG@10"
    )
    propensity = irspec.recsys.jain_propensity(train)
    holes = np.full((top.shape[0], top.shape[1] + 1), -1)
    holes[:, 0] = top[:, 0]
    holes[:, 2:] = top[:, 1:]  # column 1 is the hole
    args = {"exclude": train, "propensity": propensity, "popularity": train, "empty_users": "zero"}
    got = irspec.evaluate_topk(test, top, metrics, **args)
    assert direct == [1]
    general = irspec.evaluate_topk(test, holes, metrics, **args)
    assert direct == [1]
    _same(got, general)
    assert got.catalogue == general.catalogue
    assert got.aggregate() == general.aggregate()


def test_users_skipped_or_zero_through_the_direct_context(direct):
    test, _, top = _data(2)
    skipped = irspec.evaluate_topk(test, top, "nDCG@10, R@10")
    zero = irspec.evaluate_topk(test, top, "nDCG@10, R@10", empty_users="zero")
    assert direct == [1, 1]
    assert "3" not in skipped.query_ids and zero.per_query()["3"] == {"nDCG@10": 0.0, "R@10": 0.0}


def test_a_repeated_item_is_named_by_its_user():
    test, _, top = _data(1)
    top[4, :3] = [9, 9, 2]
    with pytest.raises(InputError, match=r"user 4: item 9 is given twice"):
        irspec.evaluate_topk(test, top, "P@5")


@pytest.mark.parametrize("buffer", [1, 64, 1 << 21])
def test_stored_at_finds_what_a_set_finds(buffer, monkeypatch):
    """Every stored (row, item) among the lists, with its entry, whatever the chunk (a row at a time,
    a few rows, all of them), indices unsorted and rows chosen out of order."""
    monkeypatch.setattr(ranked, "BUFFER_ENTRIES", buffer)
    rng = np.random.default_rng(3)
    matrix = sp.csr_array(rng.random((30, 20)) < 0.3, dtype=np.int64)
    perm = [
        rng.permutation(np.arange(a, b)) for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:], strict=True)
    ]
    matrix.indices = matrix.indices[np.concatenate(perm)]  # the same entries, unsorted within rows
    rows = rng.permutation(30)[:25]
    items = np.array([rng.permutation(21)[:9] - 1 for _ in rows])  # -1 among them
    flat, entry = ranked.stored_at(matrix, items, rows)
    expected = [
        (r * 9 + c, e)
        for r, u in enumerate(rows.tolist())
        for c, i in enumerate(items[r].tolist())
        for e in range(matrix.indptr[u], matrix.indptr[u + 1])
        if matrix.indices[e] == i
    ]
    assert list(zip(flat.tolist(), entry.tolist(), strict=True)) == expected


def test_stored_at_with_more_entries_in_a_chunk_than_16_bits_hold():
    matrix = sp.csr_array(np.ones((2, 40_000), dtype=np.int64))
    items = np.array([[39_999, 5, -1], [0, -1, -1]])
    flat, entry = ranked.stored_at(matrix, items)
    assert flat.tolist() == [0, 1, 3] and entry.tolist() == [39_999, 5, 40_000]


def test_text_order_is_the_order_of_the_decimal_texts():
    numbers = np.array([0, 1, 2, 9, 10, 11, 19, 20, 99, 100, 101, 1000, 5, 55, 555, 12345])
    order = ranked.text_order(numbers)
    assert [str(n) for n in numbers[order]] == sorted(str(n) for n in numbers)


def _padded_lists(users, n_items, k, seed):
    """Distinct items per list, each list's -1 padding after its 1 to k items."""
    rng = np.random.default_rng(seed)
    items = np.argsort(rng.random((users, n_items)), axis=1)[:, :k]
    lengths = rng.integers(1, k + 1, size=users)
    items[np.arange(k) >= lengths[:, None]] = -1
    return items, lengths


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize(("buffer", "k"), [(1, 3), (1, 12), (200, 3), (1 << 21, 3), (1 << 21, 300)])
def test_look_up_finds_what_a_list_search_finds(workers, buffer, k, monkeypatch):
    """Each held-out entry found in its user's list, at its place, whatever the chunk (a user at a time,
    a few, all), the threads, and the cycles of the buffer's places (a user a chunk and k = 3: more
    chunks than a cycle of 8-bit places; k = 300: 16-bit ones)."""
    monkeypatch.setattr(ranked, "BUFFER_ENTRIES", buffer)
    monkeypatch.setattr(ranked, "WORKERS", workers)
    users, n_items = 400, max(20, k + 5)
    items, lengths = _padded_lists(users, n_items, k, seed=k)
    matrix = sp.csr_array(np.random.default_rng(1).random((users, n_items)) < 0.3, dtype=np.int64)
    entries, places, rows = ranked.look_up(matrix, items, lengths, np.arange(users))
    expected = []
    for u in range(users):
        listed = items[u, : lengths[u]].tolist()
        for e in range(matrix.indptr[u], matrix.indptr[u + 1]):
            if matrix.indices[e] in listed:
                expected.append((e, listed.index(matrix.indices[e]), u))
    assert list(zip(entries.tolist(), places.tolist(), rows.tolist(), strict=True)) == expected


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("buffer", [1 << 21, 301 * 1000])
def test_an_item_twice_deep_inside_a_large_chunk_is_refused(workers, buffer, monkeypatch):
    """A repeated item among thousands of users in one chunk (or the fourth of five chunks over two
    threads), in a chunk whose padded lists write their -1 entries to one spot per user: the first user
    with one is named, with its smallest repeated item, as a sort of each list names them."""
    monkeypatch.setattr(ranked, "BUFFER_ENTRIES", buffer)
    monkeypatch.setattr(ranked, "WORKERS", workers)
    users, n_items, k = 5_000, 300, 50
    items, _ = _padded_lists(users, n_items, k, seed=7)
    items[::3, 45:] = -1  # padding in every third list
    held = np.random.default_rng(8).random((users, n_items)) < 0.05
    held[[3_217, 4_100], 0] = True  # both users have something held out: both are evaluated
    test = sp.csr_array(held, dtype=np.int64)
    items[[3_217, 4_100]] = np.arange(2 * k).reshape(2, k) * 3  # two full lists
    items[3_217, 41] = items[3_217, 7]
    items[3_217, 30] = items[3_217, 2]
    items[4_100, 40] = items[4_100, 1]  # a later one is not named
    smallest = min(items[3_217, 7], items[3_217, 2])
    with pytest.raises(
        InputError, match=rf"^<top_items>: user 3217: item {smallest} is given twice in its list"
    ):
        irspec.evaluate_topk(test, items, "nDCG@10")


def test_the_lists_of_users_left_out_are_not_checked_on_either_path():
    """A user with nothing held out is not evaluated, and its list is not read: an item twice in it
    is let be, by the direct context as by the engine's path (taken for a list with a hole)."""
    test, _, top = _data(1)
    top[3, :3] = [9, 9, 2]  # user 3 has nothing held out
    holes = np.full((top.shape[0], top.shape[1] + 1), -1)
    holes[:, 0], holes[:, 2:] = top[:, 0], top[:, 1:]
    _same(irspec.evaluate_topk(test, top, METRICS), irspec.evaluate_topk(test, holes, METRICS))


@pytest.mark.parametrize("seed", range(3))
def test_threads_and_one_thread_give_the_same_result(seed, monkeypatch):
    test, train, top = _data(seed, users=300)
    monkeypatch.setattr(ranked, "BUFFER_ENTRIES", 51 * 7)  # 7 users a chunk: blocks of several chunks
    monkeypatch.setattr(ranked, "LIST_ROWS", 16)
    results = []
    for workers in (1, 2, 3):
        monkeypatch.setattr(ranked, "WORKERS", workers)
        results.append(irspec.evaluate_topk(test, top, METRICS, exclude=train, empty_users="zero"))
    _same(results[0], results[1])
    _same(results[0], results[2])


@pytest.mark.parametrize("workers", [1, 2])
def test_list_lengths_counts_items_before_the_padding_and_finds_holes(workers, monkeypatch):
    monkeypatch.setattr(ranked, "WORKERS", workers)
    monkeypatch.setattr(ranked, "LIST_ROWS", 4)
    items, lengths = _padded_lists(30, 20, 6, seed=2)
    assert ranked.list_lengths(items).tolist() == lengths.tolist()
    assert ranked.list_lengths(np.arange(12).reshape(3, 4)).tolist() == [4, 4, 4]
    items[25] = [-1, 3, 4, -1, -1, -1]  # a -1 before an item, in the last block
    assert ranked.list_lengths(items) is None


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("rows", [3, 4, 64])
def test_scan_lists_finds_each_hole_and_the_bounds(workers, rows, monkeypatch):
    """Every hole is found: in a row that ends with -1 padding, and in one that ends with an item (whose
    -1 only the block's count of entries below 0 shows), in any block; the bounds are the array's."""
    monkeypatch.setattr(ranked, "WORKERS", workers)
    monkeypatch.setattr(ranked, "LIST_ROWS", rows)
    items, lengths = _padded_lists(30, 20, 6, seed=4)
    found = ranked.scan_lists(items)
    assert found.lengths.tolist() == lengths.tolist()
    assert (found.smallest, found.largest) == (int(items.min()), int(items.max()))
    full = np.arange(12).reshape(3, 4) + 5
    scanned = ranked.scan_lists(full)
    assert scanned.lengths.tolist() == [4, 4, 4] and (scanned.smallest, scanned.largest) == (5, 16)
    for row in range(30):
        for holey in ([-1, 3, 4, 7, 8, 9], [3, -1, 4, -1, -1, -1], [3, 4, 7, 8, -1, 9]):
            with_hole = items.copy()
            with_hole[row] = holey
            scanned = ranked.scan_lists(with_hole)
            assert scanned.lengths is None, (row, holey)
            assert (scanned.smallest, scanned.largest) == (int(with_hole.min()), int(with_hole.max()))
    out = items.copy()
    out[17, 0], out[3, 5] = -7, 99  # out of bounds: the caller refuses them
    assert ranked.scan_lists(out)[1:] == (-7, 99)
    assert ranked.scan_lists(np.zeros((4, 0), dtype=np.int32)).lengths.tolist() == [0, 0, 0, 0]


def test_a_label_beyond_64_bit_integers_is_refused():
    with pytest.raises(InputError, match=r"user 0, item 1: label 1e\+20 is not an integer"):
        irspec.evaluate_topk(sp.csr_array(np.array([[0, 1e20]])), np.array([[1]]), "P@1")


def test_decimal_texts_are_the_texts_str_gives():
    numbers = np.concatenate(
        [np.arange(1_200), [9, 10, 99, 100, 909, 1_000, 10**9 - 1, 10**9, 5 * 10**9, 2**62]],
        dtype=np.int64,
    )
    numbers = np.concatenate([numbers, np.random.default_rng(0).integers(0, 10**12, 500)])
    assert ranked.decimal_texts(numbers) == [str(n) for n in numbers.tolist()]
    assert ranked.decimal_texts(np.array([0])) == ["0"]
    assert ranked.decimal_texts(np.zeros(0, dtype=np.int64)) == []


def test_the_label_array_is_made_only_when_read_and_is_every_entrys_label():
    """The direct context's kernels of the usual metrics read the labelled rows alone; the array of
    every list entry's label is made when a kernel reads it, and is the held-out label of each entry
    (UNJUDGED where the user's row does not hold the item), written here entry by entry."""
    test, _, top = _data(5)
    lengths = ranked.list_lengths(top)
    users = np.flatnonzero(np.diff(test.indptr) > 0)
    users = users[lengths[users] > 0]
    ctx = ranked.matrix_context(test, top, lengths, users, Options(1, judged_warning=None), {})
    values = context_values(ctx, bind_metrics("nDCG@5, AP(den=min)@10, relP@10, R@5, Judged@10"))[0]
    assert np.isfinite(values).all()
    assert vars(ctx)["_label"] is None  # not made
    expected = []
    for u in users.tolist():
        row = dict(zip(test[[u], :].indices.tolist(), test[[u], :].data.tolist(), strict=True))
        expected += [row.get(i, UNJUDGED) for i in top[u, : lengths[u]].tolist()]
    assert ctx.label.dtype == np.int64 and ctx.label.tolist() == expected
    judged = ctx.count(ctx.label >= 0, np.full(ctx.nq, 10))
    assert ctx.count_judged(np.full(ctx.nq, 10)).tolist() == judged.tolist()
    rows, _ = ctx.relevant_rows(1)
    assert ctx.relevant_labels(1).tolist() == ctx.label[rows].tolist()
