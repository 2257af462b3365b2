"""Recommender spellings of the accuracy metrics (HitRate@k, R(truncated=true)@k, AP(den=...)@k) and the
propensity-scored metrics (PSP@k, PSDCG@k, PSnDCG@k) with Jain et al.'s propensity model.

References: plain Python written out here, user by user, on random adversarial data (graded labels,
explicit zeros, padding, relevance levels); and pyxclib's own values (kunaldahiya/pyxclib at commit
5d130862df91a06d03b296ad264c89b037c33db7, not on PyPI), computed outside the repository by
``tests/fixtures/pyxclib/make_reference.py`` on data drawn there and stored beside them in
``tests/fixtures/pyxclib/reference.json``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import irspec
from irspec.errors import EvaluationError

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "pyxclib" / "reference.json").read_text())


def _data(seed: int, users: int = 80, items: int = 30, k: int = 12):
    rng = np.random.default_rng(seed)
    dense = rng.random((users, items))
    labels = np.where(dense < 0.15, rng.integers(0, 4, size=dense.shape), -9)  # -9: not held out
    rows, cols = np.nonzero(labels >= 0)  # label 0: a stored, explicit zero
    test = sp.csr_array((labels[rows, cols], (rows, cols)), shape=(users, items))
    top = np.array([rng.permutation(items)[:k] for _ in range(users)])
    top[rng.random(top.shape) < 0.15] = -1
    return test, top


def _per_user(test, top, level: int):
    """Each user with a relevant item: (its list without padding, its relevant items)."""
    out = {}
    for u in range(test.shape[0]):
        row = test[[u], :]
        relevant = {int(i) for i, v in zip(row.indices, row.data, strict=True) if v >= level}
        if relevant:
            out[str(u)] = ([int(i) for i in top[u] if i != -1], relevant)
    return out


def _ap(ranked, relevant, k, den):
    hits, total = 0, 0.0
    for rank, item in enumerate(ranked[:k], start=1):
        if item in relevant:
            hits += 1
            total += hits / rank
    d = {"R": len(relevant), "min": min(k, len(relevant)), "hits": hits}[den]
    return total / d if d else 0.0


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("level", [1, 2])
def test_recsys_spellings_equal_their_formulas(seed, level):
    test, top = _data(seed)
    specs = [f"{name}(rel={level})@{k}" for k in (1, 3, 10) for name in ("HitRate", "R", "AP")]
    specs += [f"R(truncated=true, rel={level})@{k}" for k in (1, 3, 10)]
    specs += [f"AP(den={den}, rel={level})@{k}" for k in (1, 3, 10) for den in ("min", "hits")]
    res = irspec.evaluate_topk(test, top, specs, relevance_level=level)
    got = res.per_query()
    users = _per_user(test, top, level)
    assert set(got) == set(users)
    for u, (ranked, relevant) in users.items():
        for k in (1, 3, 10):
            found = len(set(ranked[:k]) & relevant)
            assert got[u][f"Success(rel={level})@{k}"] == float(found > 0)
            assert got[u][f"R(rel={level})@{k}"] == pytest.approx(found / len(relevant), abs=1e-15)
            assert got[u][f"relP(rel={level})@{k}"] == pytest.approx(found / min(k, len(relevant)), abs=1e-15)
            for den in ("R", "min", "hits"):
                name = f"AP(rel={level})@{k}" if den == "R" else f"AP(den={den},rel={level})@{k}"
                assert got[u][name] == pytest.approx(_ap(ranked, relevant, k, den), abs=1e-15), (u, name)


class _Lists:
    """A stand-in for an implicit model: its recommend() gives the lists it was made with, as implicit's
    ranking_metrics_at_k asks for them (a batch of users, N items each)."""

    def __init__(self, top: np.ndarray) -> None:
        self.top = top

    def recommend(self, userid, user_items, N=10, **_):
        ids = self.top[np.asarray(userid), :N].astype(np.int32)  # -1 pads, as implicit's own lists
        return ids, np.zeros(ids.shape, dtype=np.float32)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("K", [1, 5, 10, 20])
def test_equal_to_implicit_ranking_metrics_at_k(seed, K):
    evaluation = pytest.importorskip(
        "implicit.evaluation", reason="implicit is a test dependency (irspec[test])"
    )
    rng = np.random.default_rng(seed)
    users, items = 120, 60
    draw = rng.random((users, items))
    test = sp.csr_matrix((draw < 0.08).astype(np.float64))  # held out and trained on: disjoint, as a split
    train = sp.csr_matrix((draw > 0.9).astype(np.float64))
    # lists of K items, some of them held out: without the training items, as a model filters them
    top = np.array(
        [rng.permutation(np.setdiff1d(np.arange(items), train[[u]].indices))[:K] for u in range(users)]
    )
    for u in range(users):
        held = test[[u]].indices
        if len(held):
            top[u, rng.integers(0, K, size=2)] = rng.choice(held, 2)
    top = np.array([list(dict.fromkeys(row.tolist())) + [-1] * (K - len(set(row.tolist()))) for row in top])
    theirs = evaluation.ranking_metrics_at_k(_Lists(top), train, test, K=K, show_progress=False)
    res = irspec.evaluate_topk(test, top, f"nDCG@{K}, AP(den=min)@{K}, relP@{K}, NumRel", exclude=train)
    means = res.aggregate()
    assert means[f"nDCG@{K}"] == pytest.approx(theirs["ndcg"], rel=1e-12)
    assert means[f"AP(den=min)@{K}"] == pytest.approx(theirs["map"], rel=1e-12)
    # implicit's precision is a ratio of sums: the hits of every user over Σ min(K, R)
    best = np.minimum(K, res.column("NumRel"))
    assert (res.column(f"relP@{K}") * best).sum() / best.sum() == pytest.approx(
        theirs["precision"], rel=1e-12
    )


def test_ap_denominators_by_hand():
    # relevant: items 1, 2, 3 (R = 3); list 1, 9, 2 at k = 2 finds item 1 at rank 1 only
    test = sp.csr_array(
        (np.ones(3, dtype=np.int64), (np.zeros(3, dtype=np.int64), np.array([1, 2, 3]))), shape=(1, 10)
    )
    top = np.array([[1, 9, 2]])
    res = irspec.evaluate_topk(test, top, "AP@2, AP(den=min)@2, AP(den=hits)@2, AP(den=min)").aggregate()
    assert res == {
        "AP@2": 1 / 3,
        "AP(den=min)@2": 1 / 2,
        "AP(den=hits)@2": 1.0,
        "AP(den=min)": (1 + 2 / 3) / 3,
    }


def test_gmap_keeps_trec_eval_s_denominator():
    test, top = _data(0)
    res = irspec.evaluate_topk(test, top, "GMAP, AP").per_query()
    assert all(v["GMAP"] == v["AP"] for v in res.values())


# --- propensity-scored metrics ------------------------------------------------------------------


def _matrix(part: dict) -> sp.csr_array:
    indices = np.asarray(part["indices"], dtype=np.int64)
    data = np.ones(len(indices), dtype=np.int64)
    return sp.csr_array((data, indices, np.asarray(part["indptr"])), shape=tuple(part["shape"]))


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=lambda c: f"seed{c['seed']}-A{c['A']}-B{c['B']}")
def test_jain_propensity_equals_pyxclib(case):
    p = irspec.recsys.jain_propensity(_matrix(case["train"]), A=case["A"], B=case["B"])
    np.testing.assert_allclose(1 / p, case["inv_propensity"], rtol=1e-13)


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=lambda c: f"seed{c['seed']}-A{c['A']}-B{c['B']}")
def test_propensity_scored_metrics_equal_pyxclib(case):
    test, train, top = _matrix(case["test"]), _matrix(case["train"]), np.asarray(case["top"])
    ks = range(1, REFERENCE["k"] + 1)
    specs = [f"{m}@{k}" for k in ks for m in ("PSP", "PSP(ideal=true)", "PSnDCG", "PSnDCG(ideal=true)")]
    propensity = irspec.recsys.jain_propensity(train, A=case["A"], B=case["B"])
    # pyxclib means over every test point, those without a label too (0): empty_users="zero"
    means = irspec.evaluate_topk(test, top, specs, propensity=propensity, empty_users="zero").aggregate()
    for k in ks:
        psp, ideal = means[f"PSP@{k}"], means[f"PSP(ideal=true)@{k}"]
        assert psp == pytest.approx(case["psp"][k - 1], rel=1e-12)
        assert ideal == pytest.approx(case["psp_ideal"][k - 1], rel=1e-12)
        assert psp / ideal == pytest.approx(case["psprecision"][k - 1], rel=1e-12)
        assert psp / ideal == pytest.approx(case["metrics_eval"][2][k - 1], rel=1e-12)
        # pyxclib's _ndcg keeps its means in float32: equal to 1e-6
        ndcg, best = means[f"PSnDCG@{k}"], means[f"PSnDCG(ideal=true)@{k}"]
        assert ndcg == pytest.approx(case["psndcg_mean"][k - 1], rel=2e-6)
        assert best == pytest.approx(case["psndcg_ideal"][k - 1], rel=2e-6)
        assert ndcg / best == pytest.approx(case["psndcg"][k - 1], rel=4e-6)


def test_propensity_scored_metrics_by_hand():
    # user 0 holds out items 0 (p = 0.5), 1 (p = 0.25) and 2 (p = 1); its list: 3, 2, 1
    test = sp.csr_array(np.array([[1, 1, 1, 0], [0, 0, 0, 0]]))
    top = np.array([[3, 2, 1], [0, 1, 2]])
    p = np.array([0.5, 0.25, 1.0, 0.1])
    res = irspec.evaluate_topk(
        test, top, "PSP@3, PSDCG@3, PSnDCG@3, PSP(ideal=true)@2, PSDCG(ideal=true)@3", propensity=p
    ).per_query()
    assert res == {
        "0": {
            "PSP@3": pytest.approx((1 + 4) / 3),
            "PSDCG@3": pytest.approx(1 / math.log2(3) + 4 / math.log2(4)),
            "PSnDCG@3": pytest.approx(
                (1 / math.log2(3) + 4 / math.log2(4)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
            ),
            "PSP(ideal=true)@2": pytest.approx((4 + 2) / 2),
            "PSDCG(ideal=true)@3": pytest.approx(4 + 2 / math.log2(3) + 1 / math.log2(4)),
        }
    }


@pytest.mark.parametrize("seed", range(3))
def test_psdcg_equals_its_formula(seed):
    test, top = _data(seed)
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 1, test.shape[1])
    res = irspec.evaluate_topk(test, top, "PSDCG@5, PSDCG(rel=2)@10", propensity=p).per_query()
    for u, (ranked, relevant) in _per_user(test, top, 1).items():
        want = sum(1 / p[i] / math.log2(j + 2) for j, i in enumerate(ranked[:5]) if i in relevant)
        assert res[u]["PSDCG@5"] == pytest.approx(want, rel=1e-13)
    for u, (ranked, relevant) in _per_user(test, top, 2).items():
        want = sum(1 / p[i] / math.log2(j + 2) for j, i in enumerate(ranked[:10]) if i in relevant)
        assert res[u]["PSDCG(rel=2)@10"] == pytest.approx(want, rel=1e-13)


def test_propensity_scored_metrics_need_propensities():
    test = sp.csr_array(np.eye(3, dtype=np.int64))
    with pytest.raises(
        EvaluationError, match=r"PSP@1 weighs each item by its inverse propensity: give propensity="
    ):
        irspec.evaluate_topk(test, np.array([[0], [1], [2]]), "PSP@1")
    with pytest.raises(EvaluationError, match="give propensity="):
        irspec.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "PSnDCG@5")


def test_jain_propensity_counts_users_not_values():
    ratings = sp.csr_array(np.array([[5, 0], [3, 0], [0, 4], [1, 0]]))
    binary = sp.csr_array(np.array([[1, 0], [1, 0], [0, 1], [1, 0]]))
    np.testing.assert_array_equal(
        irspec.recsys.jain_propensity(ratings), irspec.recsys.jain_propensity(binary)
    )
    C = (math.log(4) - 1) * 2.5**0.55  # N = 4 users
    want = [1 / (1 + C * (n + 1.5) ** -0.55) for n in (3, 1)]
    np.testing.assert_allclose(irspec.recsys.jain_propensity(binary), want, rtol=1e-15)
    with pytest.raises(EvaluationError, match="at least 3 users"):
        irspec.recsys.jain_propensity(sp.csr_array(np.eye(2)))
    with pytest.raises(EvaluationError, match="A must be a positive number"):
        irspec.recsys.jain_propensity(binary, A=0)


@pytest.mark.parametrize("seed", range(4))
def test_dcg_from_the_relevant_rows_equals_every_row_summed(seed):
    # DCG, nDCG and CG without a gains map add only the rows labelled 1 or more; a gains map that
    # gives each label its own value takes the path that adds every row: the same values, bit for bit
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(-1, 4)) for d in rng.choice(60, 25, replace=False)}
        for q in range(30)
    }
    run = {
        f"q{q}": {f"d{d}": float(rng.integers(0, 5)) for d in rng.choice(60, 40, replace=False)}
        for q in range(30)
    }
    identity = "{-1:0,0:0,1:1,2:2,3:3}"
    for spec in ("nDCG@10", "nDCG", "DCG@5", "CG@20", "nDCG(dcg=exp-log2)@10", "nDCG(dcg=jk)@3"):
        name, _, at = spec.partition("@")
        mapped = f"{name[:-1]},gains={identity})" if name.endswith(")") else f"{name}(gains={identity})"
        mapped += f"@{at}" if at else ""
        if "exp-log2" in spec:  # a map gives the gain itself: 2^label - 1
            mapped = mapped.replace(identity, "{-1:0,0:0,1:1,2:3,3:7}").replace("dcg=exp-log2,", "")
        res = irspec.evaluate(qrels, run, [spec, mapped])
        np.testing.assert_array_equal(res.values[:, 0], res.values[:, 1], err_msg=f"{spec} vs {mapped}")
