"""Beyond-accuracy metrics of recommenders: the per-user popularity-bias metrics (ARP@k, APLT@k,
Novelty@k) and the catalogue-level ones (Coverage@k, Gini@k, Entropy@k), whose one value per run the
result model, reports and comparisons carry beside the means.

References: arithmetic written out by hand on a small case; plain Python over random data (lists built
user by user, counted with ``collections.Counter``, the Gini index by its mean absolute difference
rather than its sorted form); and RecTools 0.19.0's ``CatalogCoverage``, ``AvgRecPopularity`` and
``MeanInvUserFreq``, from the ``pip install --target`` folder ``IRSPEC_RECTOOLS_PATH`` names (as
``scripts/test`` installs it: RecTools pins numpy below 2, so it is not installed into the environment).
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats as scipy_stats

import irspec
from irspec.data import read_qrels
from irspec.errors import EvaluationError, InputError, IrspecError
from irspec.evaluation.systems import combine
from irspec.experiment.agreement import agreement_of
from irspec.experiment.records import Compare
from irspec.report import data as report_data

ALL = "Coverage@2, Gini@2, Entropy@2, ARP@2, APLT@2, APLT(head=0.8)@2, Novelty@2"


def _small():
    """3 users, 4 items; every user has a held-out item, so all three are evaluated."""
    test = sp.csr_array(np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]))
    top = np.array([[0, 1, 3], [0, 2, 1], [0, 1, 2]])
    train = sp.csr_array(np.array([[1, 0, 0, 0], [1, 0, 0, 1], [1, 1, 0, 0]]))
    return test, top, train


def test_by_hand():
    test, top, train = _small()
    res = irspec.evaluate_topk(test, top, ALL, popularity=train)
    got = res.aggregate()
    # top 2: u0 [0, 1], u1 [0, 2], u2 [0, 1]: item 0 three times, 1 twice, 2 once, 3 never
    assert got["Coverage@2"] == pytest.approx(3 / 4)
    # counts ascending 0, 1, 2, 3 (n = 4, total 6): ((-3)*0 + (-1)*1 + 1*2 + 3*3) / (3 * 6)
    assert got["Gini@2"] == pytest.approx(10 / 18)
    assert got["Entropy@2"] == pytest.approx(
        -(0.5 * math.log2(0.5) + 2 / 6 * math.log2(2 / 6) + 1 / 6 * math.log2(1 / 6))
    )
    # training popularity: item 0 three users, item 1 one, item 2 none, item 3 one; 3 training users
    assert res.per_query()["1"]["ARP@2"] == pytest.approx((3 + 0) / 2)
    assert got["ARP@2"] == pytest.approx(((3 + 1) / 2 + (3 + 0) / 2 + (3 + 1) / 2) / 3)
    # head at 20% of 5 interactions: item 0 (nothing more popular); items 1 and 3 have 3 more popular
    # interactions, not below 1: tail, as is item 2. Every list is half tail.
    assert got["APLT@2"] == pytest.approx(0.5)
    # head at 80% (4): items 1 and 3, tied, have 3 more popular interactions, below 4: head, both
    assert [v["APLT(head=0.8)@2"] for v in res.per_query().values()] == pytest.approx([0, 0.5, 0])
    # -log2(3/3) = 0 for item 0; items 1 and 2 (cold: one user) -log2(1/3)
    assert got["Novelty@2"] == pytest.approx(math.log2(3) / 2)


def test_catalogue_values_are_per_run_not_per_user():
    test, top, train = _small()
    res = irspec.evaluate_topk(test, top, "nDCG@2, Coverage@2, ARP@2", popularity=train)
    assert res.catalogue == {"Coverage@2": pytest.approx(0.75)}
    assert np.isnan(res.column("Coverage@2")).all()
    assert all(set(row) == {"nDCG@2", "ARP@2"} for row in res.per_query().values())
    assert set(res.to_frame()["metric"].unique()) == {"nDCG@2", "ARP@2"}
    assert "Coverage@2" not in res.to_frame(wide=True).columns
    csv = report_data.to_delimited([res], per_query=True)
    assert [line for line in csv.splitlines() if "Coverage" in line] == ["run,all,Coverage@2,0.75"]
    doc = json.loads(report_data.to_json([res], per_query=True))
    assert doc["runs"][0]["aggregate"]["Coverage@2"] == 0.75
    assert "Coverage@2" not in doc["runs"][0]["per_query"]["0"]
    text = str(res.show())  # the t intervals: none for a value per run, no error
    assert "Coverage@2" in text and "0.7500" in text
    assert "0.7500 [" not in text and "| 0.7500 |" in res.show()._repr_markdown_()


def test_compare_leaves_catalogue_metrics_out_with_a_note():
    test, top, _ = _small()
    metrics = "nDCG@2, Coverage@2, Gini@2"
    a = irspec.evaluate_topk(test, top, metrics, name="a")
    b = irspec.evaluate_topk(test, top[:, ::-1].copy(), metrics, name="b")
    found = irspec.compare([a, b])
    assert [c.metric for c in found.comparisons] == ["nDCG@2"]
    assert any("Coverage@2, Gini@2: catalogue-level" in note for note in found.notes)
    assert "catalogue-level" in str(found)
    with pytest.raises(EvaluationError, match="metrics: Gini@2 is catalogue-level, one value per run"):
        irspec.compare([a, b], metrics="nDCG@2, Gini@2")  # asked for: no pairs to test, said at once


def _three_runs(metrics):
    """Three recommenders' results on random data, each a list per user."""
    rng = np.random.default_rng(8)
    test, _ = _random_matrices(rng, 50, 30)
    return [
        irspec.evaluate_topk(test, np.array([rng.permutation(30)[:10] for _ in range(50)]), metrics, name=n)
        for n in ("a", "b", "c")
    ]


def test_power_leaves_catalogue_metrics_out_with_a_note_or_refuses_them():
    runs = _three_runs("nDCG@5, Coverage@5, Gini@5")
    found = irspec.power(runs, delta=0.05)
    assert {p.metric for p in found.pairs} == {"nDCG@5"} and [a.metric for a in found.anova] == ["nDCG@5"]
    assert any(n.startswith("Coverage@5, Gini@5: catalogue-level") for n in found.notes)
    with pytest.raises(EvaluationError, match="metrics: Coverage@5 is catalogue-level"):
        irspec.power(runs, metrics="Coverage@5")
    # the comparisons' own pairs: the compare step left the catalogue metrics out already
    assert {p.metric for p in irspec.power(irspec.compare(runs)).pairs} == {"nDCG@5"}


def test_agreement_ranks_runs_by_catalogue_values():
    metrics = "nDCG@5, Coverage@5"
    rng = np.random.default_rng(9)
    test, _ = _random_matrices(rng, 50, 30)
    other = sp.csr_array((rng.random((50, 30)) < 0.04).astype(np.int64))  # other users held out, other items
    # each run draws from its own share of the catalogue, so their coverages differ
    lists = {n: np.array([rng.permutation(8 + 4 * j)[:8] for _ in range(50)]) for j, n in enumerate("abcd")}
    results = {
        s: [irspec.evaluate_topk(q, top, metrics, name=n) for n, top in lists.items()]
        for s, q in (("one", test), ("two", other))
    }
    qrels = {
        s: read_qrels({str(u): {str(i): 1 for i in q[[u], :].indices} for u in range(50) if q[[u], :].nnz})
        for s, q in (("one", test), ("two", other))
    }
    found = agreement_of(results, qrels, Compare())
    ranked = {r.metric: r for r in found.rankings}
    assert set(ranked) == {"nDCG@5", "Coverage@5"}
    coverage = [[r.aggregate()["Coverage@5"] for r in results[s]] for s in ("one", "two")]
    assert ranked["Coverage@5"].kendall_tau == pytest.approx(scipy_stats.kendalltau(*coverage).statistic)
    assert any(n.startswith("Coverage@5: catalogue-level") for n in found.notes)
    assert all(s.significant_a is None for s in found.swaps if s.metric == "Coverage@5")
    means = {(row[0], row[1], row[2]): row[3] for row in found.means}
    assert means[("two", "c", "Coverage@5")] == results["two"][2].aggregate()["Coverage@5"]


def test_a_system_averages_its_runs_catalogue_values():
    runs = _three_runs("nDCG@5, Coverage@5, Gini@5")
    system = combine("seeds", runs)
    for metric in ("Coverage@5", "Gini@5"):
        each = [r.aggregate()[metric] for r in runs]
        assert system.aggregate()[metric] == pytest.approx(sum(each) / 3)
        assert system.spread()[metric].sd == pytest.approx(float(np.std(each, ddof=1)))


def test_zero_users_counted_in_the_catalogue_and_no_per_user_value():
    test = sp.csr_array(np.array([[1, 0, 0], [0, 0, 0]]))
    top = np.array([[0], [2]])
    skip = irspec.evaluate_topk(test, top, "P@1, Coverage@1")
    zero = irspec.evaluate_topk(test, top, "P@1, Coverage@1", empty_users="zero")
    assert skip.aggregate()["Coverage@1"] == pytest.approx(1 / 3)
    assert zero.aggregate()["Coverage@1"] == pytest.approx(2 / 3)
    assert np.isnan(zero.column("Coverage@1")).all() and list(zero.column("P@1")) == [1, 0]


def test_scores_and_topk_agree_and_exclusion_counts():
    rng = np.random.default_rng(3)
    test, train = _random_matrices(rng, 40, 25)
    scores = rng.random((40, 25))
    via_scores = irspec.evaluate_scores(test, scores, ALL, exclude=train, popularity=train)
    top = np.argsort(-scores, axis=1, kind="stable")
    via_top = irspec.evaluate_topk(test, top, ALL, exclude=train, popularity=train)
    assert via_scores.aggregate() == pytest.approx(via_top.aggregate())


def test_errors_name_what_is_missing():
    test, top, _ = _small()
    with pytest.raises(EvaluationError, match="popularity=train_matrix"):
        irspec.evaluate_topk(test, top, "ARP@2")
    with pytest.raises(InputError, match="popularity has shape"):
        irspec.evaluate_topk(test, top, "ARP@2", popularity=sp.csr_array((2, 4)))
    with pytest.raises(EvaluationError, match="catalogue-level metric"):
        irspec.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "Coverage@5")
    with pytest.raises(IrspecError, match="k"):
        irspec.parse("Coverage")  # no list length: required


def test_registry_declares_the_scope():
    (coverage,) = irspec.parse_many("coverage@10")
    assert coverage.catalogue and str(coverage) == "Coverage@10"
    assert "judged_only" not in coverage.definition.param_names  # it reads lists, not judged rankings
    (arp,) = irspec.parse_many("ARP@10")
    assert not arp.catalogue and "judged_only" in arp.definition.param_names


def _random_matrices(rng, users, items):
    held = rng.random((users, items)) < 0.12
    test = sp.csr_array(held.astype(np.int64))
    train = sp.csr_array(((rng.random((users, items)) ** 2 < 0.2) & ~held).astype(np.int64))
    return test, train


def _lists(test, top, train, k):
    """Each evaluated user's top k, user by user: padding skipped, training items removed, cut at k."""
    out = {}
    for u in range(test.shape[0]):
        if test[[u], :].nnz == 0:
            continue
        seen = set(train[[u], :].indices.tolist())
        out[u] = [int(i) for i in top[u] if i != -1 and int(i) not in seen][:k]
    return out


def _head(popularity: Counter, items: int, share: float) -> set[int]:
    total = sum(popularity.values())
    head, before = set(), 0
    for level in sorted({popularity[i] for i in range(items)}, reverse=True):
        same = [i for i in range(items) if popularity[i] == level]
        if level > 0 and before < share * total:
            head.update(same)
        before += level * len(same)
    return head


@pytest.mark.parametrize("seed", range(6))
def test_against_plain_python(seed):
    rng = np.random.default_rng(seed)
    users, items, k = 60, 35, int(rng.integers(1, 9))
    test, train = _random_matrices(rng, users, items)
    top = np.array([rng.permutation(items)[:12] for _ in range(users)])
    top[rng.random(top.shape) < 0.1] = -1
    share = float(rng.choice([0.2, 0.5, 0.8]))
    spec = f"Coverage@{k}, Gini@{k}, Entropy@{k}, ARP@{k}, APLT(head={share})@{k}, Novelty@{k}"
    res = irspec.evaluate_topk(test, top, spec, exclude=train, popularity=train)
    lists = _lists(test, top, train, k)
    shown = Counter(i for items_ in lists.values() for i in items_)
    total = sum(shown.values())
    got = res.aggregate()
    assert got[f"Coverage@{k}"] == pytest.approx(len(shown) / items)
    counts = [shown[i] for i in range(items)]
    gap = sum(abs(x - y) for x in counts for y in counts)
    assert got[f"Gini@{k}"] == pytest.approx(gap / (2 * (items - 1) * total))
    assert got[f"Entropy@{k}"] == pytest.approx(
        -sum(c / total * math.log2(c / total) for c in shown.values())
    )
    rows, cols = train.nonzero()
    popularity = Counter(cols.tolist())
    trained = len(set(rows.tolist()))
    head = _head(popularity, items, share)
    per_user = res.per_query()
    for u, items_ in lists.items():
        row = per_user[str(u)]
        if not items_:
            assert math.isnan(row[f"ARP@{k}"])
            continue
        assert row[f"ARP@{k}"] == pytest.approx(sum(popularity[i] for i in items_) / len(items_))
        assert row[str(irspec.parse(f"APLT(head={share})@{k}"))] == pytest.approx(
            sum(i not in head for i in items_) / len(items_)
        )
        novelty = sum(-math.log2(max(popularity[i], 1) / trained) for i in items_) / len(items_)
        assert row[f"Novelty@{k}"] == pytest.approx(novelty)


@pytest.mark.parametrize("seed", range(4))
def test_against_rectools(rectools, seed):
    import pandas as pd

    rng = np.random.default_rng(100 + seed)
    users, items, k = 70, 40, int(rng.integers(1, 10))
    test, train = _random_matrices(rng, users, items)
    top = np.array([rng.permutation(items)[:15] for _ in range(users)])
    res = irspec.evaluate_topk(
        test, top, f"Coverage@{k}, ARP@{k}, Novelty@{k}", exclude=train, popularity=train
    )
    lists = _lists(test, top, train, 15)  # the lists a model shows, training items filtered out
    columns = rectools.Columns
    reco = pd.DataFrame(
        [(u, i, r) for u, items_ in lists.items() for r, i in enumerate(items_, start=1)],
        columns=[columns.User, columns.Item, columns.Rank],
    )
    rows, cols = train.nonzero()
    prev = pd.DataFrame({columns.User: rows, columns.Item: cols})
    metrics = rectools.metrics
    coverage = metrics.CatalogCoverage(k=k, normalize=True).calc(reco, np.arange(items))
    assert res.aggregate()[f"Coverage@{k}"] == pytest.approx(coverage, abs=1e-12)
    for name, metric in (("ARP", metrics.AvgRecPopularity(k=k)), ("Novelty", metrics.MeanInvUserFreq(k=k))):
        theirs = metric.calc_per_user(reco, prev)
        ours = res.column(f"{name}@{k}")
        for qid, value in zip(res.query_ids, ours, strict=True):
            if int(qid) in theirs.index and not math.isnan(theirs[int(qid)]):
                assert value == pytest.approx(theirs[int(qid)], abs=1e-12)
            else:
                assert math.isnan(value)


def test_standardising_refuses_them_and_groups_leave_them_out(tmp_path):
    runs = _three_runs("nDCG@5, Coverage@5")
    with pytest.raises(EvaluationError, match="Coverage@5: cannot standardise it: it is catalogue-level"):
        irspec.standardize(runs, reference=runs)
    groups = tmp_path / "groups.txt"
    groups.write_text("".join(f"{u} {'odd' if u % 2 else 'even'}\n" for u in range(50)))
    assert [t.metric for t in irspec.by_group(runs[0], groups)] == ["nDCG@5"]  # no user has a Coverage
