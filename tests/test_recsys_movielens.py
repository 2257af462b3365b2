"""Issue 36's whole example, end to end, on the MovieLens-shaped data set that ships in ``specs/movielens/``
(``make_movielens.py``): two models' top-50 tables, the training ratings excluded, the ten metrics of the
issue, propensities, frames, a comparison, a score matrix's own top k, sampled metrics and the command
line.

References, never the code under test: RecTools 0.19.0 (``NDCG``, ``Recall``, ``HitRate``, ``MAP``,
``CatalogCoverage``, ``AvgRecPopularity``, ``MeanInvUserFreq``), from the ``pip install --target`` folder
``IRSPEC_RECTOOLS_PATH`` names; implicit's ``ranking_metrics_at_k`` (its nDCG and MAP); pyxclib's P@5,
nDCG@5 and propensity-scored metrics on this data set, computed from its source outside the repository
and kept (``tests/fixtures/pyxclib/make_movielens.py`` and ``movielens.json``); scipy's paired t-test; and the rest (Gini, the propensity-scored metrics, ranks against sampled negatives) as plain
Python written out here, user by user, from the tables read with polars.
"""

from __future__ import annotations

import json
import math
import runpy
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
import scipy.stats

import irspec

DATA = Path(__file__).resolve().parents[1] / "specs" / "movielens"
MAKE = runpy.run_path(str(DATA / "make_movielens.py"))  # run_path writes no bytecode beside it
METRICS = "nDCG@10, R@20, HitRate@10, MAP@10, Coverage@10, Gini@10, ARP@10, Novelty@10, PSP@5, PSnDCG@5"
MODELS = ("popularity", "cooccurrence")


@pytest.fixture(scope="module")
def tables():
    """The tables as matrices over one index (the models' lists both read with it), and the plain data."""
    found = irspec.recsys.read_tables(
        DATA / "test.parquet",
        None,
        DATA / "train.parquet",
        tops=[DATA / f"{m}.parquet" for m in MODELS],
    )
    return found


@pytest.fixture(scope="module")
def plain():
    """The same data as plain Python: each user's relevant held-out items, training items and lists."""
    test = pl.read_parquet(DATA / "test.parquet")
    train = pl.read_parquet(DATA / "train.parquet")
    relevant: dict[int, set[int]] = {}
    for u, i in test.filter(pl.col("label") == 1).select("user", "item").iter_rows():
        relevant.setdefault(u, set()).add(i)
    trained: dict[int, set[int]] = {}
    for u, i in train.select("user", "item").iter_rows():
        trained.setdefault(u, set()).add(i)
    lists = {}
    for model in MODELS:
        recs = pl.read_parquet(DATA / f"{model}.parquet").sort("user", "rank")
        by_user: dict[int, list[int]] = {}
        for u, i in recs.select("user", "item").iter_rows():
            if i not in trained.get(u, set()):  # the training items removed before the cut
                by_user.setdefault(u, []).append(i)
        lists[model] = by_user
    users = sorted(set(test["user"]) | set(train["user"]))
    items = sorted(set(test["item"]) | set(train["item"]))
    popularity = Counter(train.select("user", "item").unique()["item"].to_list())
    return {
        "relevant": relevant,
        "trained": trained,
        "lists": lists,
        "users": users,
        "items": items,
        "popularity": popularity,
        "train_users": train["user"].n_unique(),
    }


@pytest.fixture(scope="module")
def results(tables):
    """The issue's call, model by model."""
    p = irspec.recsys.jain_propensity(tables.train, A=0.55, B=1.5)
    return {
        model: irspec.evaluate_topk(
            tables.test,
            top,
            METRICS,
            exclude=tables.train,
            propensity=p,
            popularity=tables.train,
            name=model,
            user_ids=tables.user_ids,
        )
        for model, top in zip(MODELS, tables.tops, strict=True)
    }


def test_the_data_set_is_what_its_script_writes(tmp_path):
    MAKE["make_movielens"](tmp_path)
    for name in ("train", "test", *MODELS):
        ours = pl.read_parquet(tmp_path / f"{name}.parquet")
        assert ours.equals(pl.read_parquet(DATA / f"{name}.parquet")), name


def test_the_data_set_has_the_shapes_of_a_temporal_split(plain):
    test = pl.read_parquet(DATA / "test.parquet")
    train = pl.read_parquet(DATA / "train.parquet")
    assert len(plain["users"]) == 600 and len(plain["items"]) == 900
    assert train["timestamp"].max() < test["timestamp"].min()  # split by time
    assert set(train["rating"].unique()) == set(test["rating"].unique()) == {1, 2, 3, 4, 5}
    assert (test["label"] == (test["rating"] >= 4).cast(pl.Int8)).all()
    assert len(set(test["user"]) - set(train["user"])) > 0  # users who arrived after the cut
    assert len(set(test["item"]) - set(train["item"])) == 20  # movies released after it
    counts = sorted(plain["popularity"].values(), reverse=True)
    assert sum(counts[: len(counts) // 5]) > 0.5 * sum(counts)  # a long tail: a fifth holds most
    # the popularity model shows everyone the same 50 movies, the training ones among them
    pop = pl.read_parquet(DATA / "popularity.parquet")
    assert pop.group_by("rank").agg(pl.col("item").n_unique())["item"].max() == 1
    assert sum(map(len, plain["trained"].values())) == train.height


def test_users_counted_as_documented(results, plain):
    # skip (the default): the users with a relevant held-out item, and no other
    for res in results.values():
        assert sorted(res.query_ids) == sorted(str(u) for u in plain["relevant"])
    assert len(plain["relevant"]) < len(plain["users"])


def test_zero_counts_every_user(tables, plain):
    zero = irspec.evaluate_topk(
        tables.test,
        tables.tops[1],
        "R@20",
        exclude=tables.train,
        empty_users="zero",
        user_ids=tables.user_ids,
    )
    skip = irspec.evaluate_topk(tables.test, tables.tops[1], "R@20", exclude=tables.train)
    assert len(zero.query_ids) == len(plain["users"])
    n = len(plain["relevant"])
    assert zero.aggregate()["R@20"] == pytest.approx(skip.aggregate()["R@20"] * n / len(plain["users"]))


def _ndcg(ranked, relevant, k):
    dcg = sum(1 / math.log2(r + 2) for r, i in enumerate(ranked[:k]) if i in relevant)
    return dcg / sum(1 / math.log2(r + 2) for r in range(min(k, len(relevant))))


def _ap(ranked, relevant, k):
    hits, total = 0, 0.0
    for r, i in enumerate(ranked[:k], start=1):
        if i in relevant:
            hits += 1
            total += hits / r
    return total / len(relevant)


@pytest.mark.parametrize("model", MODELS)
def test_accuracy_by_hand(results, plain, model):
    res = results[model]
    for user, relevant in plain["relevant"].items():
        ranked = plain["lists"][model].get(user, [])
        row = res.per_query()[str(user)]
        assert row["nDCG@10"] == pytest.approx(_ndcg(ranked, relevant, 10), abs=1e-12)
        assert row["R@20"] == pytest.approx(len(set(ranked[:20]) & relevant) / len(relevant), abs=1e-12)
        assert row["Success@10"] == float(bool(set(ranked[:10]) & relevant))
        assert row["AP@10"] == pytest.approx(_ap(ranked, relevant, 10), abs=1e-12)


def _gini(counts):
    """The Gini index by its mean absolute difference over every pair of items (not the sorted form)."""
    x = np.asarray(counts, dtype=np.float64)
    n = len(x)
    return np.abs(x[:, None] - x[None, :]).sum() / (2 * n * x.sum()) * n / (n - 1)


@pytest.mark.parametrize("model", MODELS)
def test_beyond_accuracy_by_hand(results, plain, model):
    res = results[model]
    evaluated = [plain["lists"][model].get(u, [])[:10] for u in plain["relevant"]]
    shown = Counter(i for items in evaluated for i in items)
    catalogue = plain["items"]
    assert res.catalogue["Coverage@10"] == pytest.approx(len(shown) / len(catalogue), abs=1e-12)
    assert res.catalogue["Gini@10"] == pytest.approx(_gini([shown[i] for i in catalogue]), abs=1e-12)
    popularity, trained = plain["popularity"], len(plain["trained"])
    for user, items in zip(plain["relevant"], evaluated, strict=True):
        row = res.per_query()[str(user)]
        assert row["ARP@10"] == pytest.approx(sum(popularity[i] for i in items) / len(items), abs=1e-9)
        novelty = sum(-math.log2(max(popularity[i], 1) / trained) for i in items) / len(items)
        assert row["Novelty@10"] == pytest.approx(novelty, abs=1e-12)


@pytest.mark.parametrize("model", MODELS)
def test_propensity_scored_by_hand(results, plain, model):
    # Jain et al.'s model written out: N the users of the shared index (the training matrix's rows)
    n = len(plain["users"])
    c = (math.log(n) - 1) * (1.5 + 1) ** 0.55
    inverse = {i: 1 + c * (plain["popularity"][i] + 1.5) ** -0.55 for i in plain["items"]}
    res = results[model]
    for user, relevant in plain["relevant"].items():
        top = plain["lists"][model].get(user, [])[:5]
        gains = [inverse[i] if i in relevant else 0.0 for i in top]
        row = res.per_query()[str(user)]
        assert row["PSP@5"] == pytest.approx(sum(gains) / 5, abs=1e-12)
        dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
        ideal = sum(1 / math.log2(r + 2) for r in range(min(5, len(relevant))))
        assert row["PSnDCG@5"] == pytest.approx(dcg / ideal, abs=1e-12)


@pytest.mark.parametrize("model", MODELS)
def test_equal_to_rectools(results, plain, rectools, model):
    import pandas as pd

    columns, metrics = rectools.Columns, rectools.metrics
    reco = pd.DataFrame(
        [(u, i, r) for u, items in plain["lists"][model].items() for r, i in enumerate(items, start=1)],
        columns=[columns.User, columns.Item, columns.Rank],
    )
    held = pd.DataFrame(
        [(u, i) for u, items in plain["relevant"].items() for i in items],
        columns=[columns.User, columns.Item],
    )
    train = pd.DataFrame(
        [(u, i) for u, items in plain["trained"].items() for i in items], columns=[columns.User, columns.Item]
    )
    res = results[model]
    per_user = {
        "nDCG@10": metrics.NDCG(k=10, divide_by_achievable=True).calc_per_user(reco, held),
        "R@20": metrics.Recall(k=20).calc_per_user(reco, held),
        "Success@10": metrics.HitRate(k=10).calc_per_user(reco, held),
        "AP@10": metrics.MAP(k=10).calc_per_user(reco, held),
    }
    for name, theirs in per_user.items():
        ours = dict(zip(res.query_ids, res.column(name), strict=True))
        for user in plain["relevant"]:  # a user RecTools has no list for counts 0 with irspec
            assert ours[str(user)] == pytest.approx(float(theirs.get(user, 0.0)), abs=1e-12), (name, user)
    # the popularity metrics over the users evaluated: RecTools' reco restricted to them
    evaluated = reco[reco[columns.User].isin(list(plain["relevant"]))]
    coverage = metrics.CatalogCoverage(k=10, normalize=True).calc(evaluated, np.array(plain["items"]))
    assert res.catalogue["Coverage@10"] == pytest.approx(coverage, abs=1e-12)
    for name, metric in (
        ("ARP@10", metrics.AvgRecPopularity(k=10)),
        ("Novelty@10", metrics.MeanInvUserFreq(k=10)),
    ):
        theirs = metric.calc_per_user(evaluated, train)
        ours = dict(zip(res.query_ids, res.column(name), strict=True))
        for user in plain["relevant"]:
            assert ours[str(user)] == pytest.approx(float(theirs[user]), abs=1e-9), (name, user)


class _Lists:
    """A stand-in for an implicit model whose recommend() gives the shipped lists (by matrix row)."""

    def __init__(self, top: np.ndarray) -> None:
        self.top = top

    def recommend(self, userid, user_items, N=10, **_):
        ids = self.top[np.asarray(userid), :N].astype(np.int32)
        return ids, np.zeros(ids.shape, dtype=np.float32)


def test_equal_to_implicit(tables, results):
    evaluation = pytest.importorskip(
        "implicit.evaluation", reason="implicit is a test dependency (irspec[test])"
    )
    # implicit reads every stored entry as relevant (the label-0 ratings left out) and wants int32 indices
    test = sp.csr_matrix((tables.test.toarray() >= 1).astype(np.float64))
    train = sp.csr_matrix(tables.train.toarray().astype(np.float64))
    top = tables.tops[1]
    # implicit asks the model for lists without the training items: the lists with them removed
    kept = np.full_like(top, -1)
    for u in range(len(top)):
        row = [i for i in top[u] if i >= 0 and not train[u, i]]
        kept[u, : len(row)] = row
    theirs = evaluation.ranking_metrics_at_k(_Lists(kept), train, test, K=10, show_progress=False)
    res = irspec.evaluate_topk(tables.test, top, "nDCG@10, AP(den=min)@10", exclude=tables.train)
    assert res.aggregate()["nDCG@10"] == pytest.approx(theirs["ndcg"], rel=1e-12)
    assert res.aggregate()["AP(den=min)@10"] == pytest.approx(theirs["map"], rel=1e-12)
    # the MAP@10 is trec_eval's (divided by R), implicit's divided by min(10, R): not equal
    assert results["cooccurrence"].aggregate()["AP@10"] < theirs["map"]


def test_frames_and_comparison(results):
    frame = results["cooccurrence"].to_frame()
    assert frame.columns[:4] == ["run", "query_id", "metric", "value"]
    assert set(frame["metric"]) == {
        "nDCG@10",
        "R@20",
        "Success@10",
        "AP@10",
        "ARP@10",
        "Novelty@10",
        "PSP@5",
        "PSnDCG@5",
    }
    a, b = results["cooccurrence"], results["popularity"]
    with pytest.raises(
        irspec.errors.EvaluationError, match=r"irspec.compare\(\[res_a, res_b\], baseline='popularity'\)"
    ):
        irspec.compare(a, b)  # the shorthand: said how to spell it
    found = irspec.compare([b, a], baseline="popularity", test="t")
    rows = {str(c.metric): c for c in found}
    assert a.query_ids == b.query_ids  # the same users, in one order: paired row by row below
    for name in ("nDCG@10", "R@20", "PSnDCG@5"):
        expected = scipy.stats.ttest_rel(a.column(name), b.column(name)).pvalue
        assert rows[name].p_value == pytest.approx(expected, rel=1e-9)
        assert rows[name].mean_a - rows[name].mean_b == pytest.approx(
            float(np.mean(a.column(name) - b.column(name))), abs=1e-12
        )
    assert rows["nDCG@10"].p_value < 0.05 and rows["nDCG@10"].mean_a > rows["nDCG@10"].mean_b
    assert "Coverage@10" not in rows and any("catalogue-level" in n for n in found.notes)


@pytest.fixture(scope="module")
def scores(plain):
    """The co-occurrence model's scores of every movie for every user (the script's own function)."""
    train = pl.read_parquet(DATA / "train.parquet")
    users, items = np.asarray(plain["users"]), np.asarray(plain["items"])
    return MAKE["cooccurrence_scores"](train["user"].to_numpy(), train["item"].to_numpy(), users, items)


def test_scores_give_the_shipped_lists(tables, results, scores):
    res = irspec.evaluate_scores(
        tables.test, scores, "nDCG@10, R@20, HitRate@10", exclude=tables.train, user_ids=tables.user_ids
    )
    expected = results["cooccurrence"]
    assert res.query_ids == expected.query_ids
    for name in ("nDCG@10", "R@20", "Success@10"):
        np.testing.assert_array_equal(res.column(name), expected.column(name))
    chunks = (scores[i : i + 97] for i in range(0, len(scores), 97))
    again = irspec.evaluate_scores(tables.test, chunks, "nDCG@10", exclude=tables.train)
    assert again.aggregate()["nDCG@10"] == expected.aggregate()["nDCG@10"]


def test_sampled(tables, plain, scores):
    found = irspec.recsys.sampled(
        tables.test, scores, n=100, metrics="HitRate@10", exclude=tables.train, seed=3
    )
    held = np.zeros(tables.test.shape, dtype=bool)  # every held-out item, relevant or not: no negative
    held[np.repeat(np.arange(len(plain["users"])), np.diff(tables.test.indptr)), tables.test.indices] = True
    excluded = tables.train.toarray() > 0
    for k in range(0, len(found.users), 37):  # the exact rank, by hand: candidates above the item
        u, i = int(found.users[k]), int(found.items[k])
        candidates = ~held[u] & ~excluded[u]
        above = candidates & (
            (scores[u] > scores[u, i]) | ((scores[u] == scores[u, i]) & (np.arange(len(scores[u])) < i))
        )
        assert found.exact_rank[k] == 1 + above.sum()
        assert found.candidates[k] == 1 + candidates.sum()
        negatives = found.negatives[u][found.negatives[u] >= 0]
        assert len(negatives) == 100 and not (held[u, negatives] | excluded[u, negatives]).any()
        assert found.sampled_rank[k] == 1 + np.isin(np.flatnonzero(above), negatives).sum()
    means = found.table()["HitRate@10"]
    assert means["exact"] == pytest.approx(float(np.mean(found.exact_rank <= 10)))
    assert means["sampled"] >= means["exact"]  # a sampled rank is never worse than the exact one
    assert abs(means["corrected"] - means["exact"]) < abs(means["sampled"] - means["exact"])


def test_command_line(tmp_path, results):
    out = tmp_path / "per-user.csv"
    cmd = [
        sys.executable, "-m", "irspec", "eval", "--recsys", str(DATA / "test.parquet"),
        "--topk", str(DATA / "cooccurrence.parquet"), "--exclude", str(DATA / "train.parquet"),
        "-m", "nDCG@10, Coverage@10", "-q", "-f", "csv", "-o", str(out),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    frame = pl.read_csv(out, schema_overrides={"query": pl.String})
    per_user = frame.filter((pl.col("metric") == "nDCG@10") & (pl.col("query") != "all"))
    expected = dict(
        zip(results["cooccurrence"].query_ids, results["cooccurrence"].column("nDCG@10"), strict=True)
    )
    assert dict(zip(per_user["query"], per_user["value"], strict=True)) == pytest.approx(expected, abs=1e-4)
    coverage = frame.filter(pl.col("metric") == "Coverage@10")
    assert coverage["value"].to_list() == pytest.approx(
        [results["cooccurrence"].catalogue["Coverage@10"]], abs=1e-4
    )


PYXCLIB = json.loads((Path(__file__).parent / "fixtures" / "pyxclib" / "movielens.json").read_text())


@pytest.mark.parametrize("model", MODELS)
def test_equal_to_pyxclib(tables, model):
    """pyxclib's values on this data set (tests/fixtures/pyxclib/make_movielens.py: kept, with the script
    that computed them from pyxclib's own source): means over every user (``empty_users="zero"``),
    the normalised forms a ratio of two means."""
    kept = PYXCLIB["models"][model]
    p = irspec.recsys.jain_propensity(tables.train, A=PYXCLIB["A"], B=PYXCLIB["B"])
    top = tables.tops[MODELS.index(model)]
    spec = "P@5, nDCG@5, PSP@5, PSP(ideal=true)@5, PSnDCG@5, PSnDCG(ideal=true)@5"
    res = irspec.evaluate_topk(tables.test, top, spec, exclude=tables.train, propensity=p, empty_users="zero")
    means = res.aggregate()
    assert means["P@5"] == pytest.approx(kept["precision"][4], rel=1e-12)
    assert means["PSP@5"] == pytest.approx(kept["psp"][4], rel=1e-12)
    assert means["PSP(ideal=true)@5"] == pytest.approx(kept["psp_ideal"][4], rel=1e-12)
    assert means["PSP@5"] / means["PSP(ideal=true)@5"] == pytest.approx(kept["psprecision"][4], rel=1e-12)
    # pyxclib keeps its nDCGs in float32
    assert means["nDCG@5"] == pytest.approx(kept["ndcg"][4], rel=1e-6)
    assert means["PSnDCG@5"] == pytest.approx(kept["psndcg_mean"][4], rel=1e-6)
    assert means["PSnDCG(ideal=true)@5"] == pytest.approx(kept["psndcg_ideal"][4], rel=1e-6)
    ratio = means["PSnDCG@5"] / means["PSnDCG(ideal=true)@5"]
    assert ratio == pytest.approx(kept["psndcg"][4], rel=1e-6)


@pytest.mark.parametrize("training", ["--exclude", "--popularity"])
def test_command_line_propensity_gives_pyxclibs_values(tmp_path, capsys, training):
    """``--propensity A,B`` fits Jain et al.'s model to the training table (--popularity's, else
    --exclude's) as a plan's ``recsys.propensity`` does: pyxclib's PSP@5 and PSnDCG@5 on this data set,
    with N the training table's users.

    pyxclib's kept values were computed from a training matrix over the shared index (its N the
    index's 600 users, 10 of whom only have held-out ratings), where Jain et al.'s N is the training
    points, the 590 users of the training table. pyxclib's 1/p = 1 + C (N_l + B)^-A is affine in
    C = (ln N - 1) (B + 1)^A, so its PSP@5 is P@5 + C G and its PSnDCG@5 nDCG@5 + C H, with G and H
    free of N (pyxclib's nDCG@5 and PSnDCG@5 divide by the same ideal DCG): its values at N = 590
    follow from those kept at 600 by the ratio of the two Cs."""
    from irspec.cli import main

    kept = PYXCLIB["models"]["popularity"]
    tables = ("test", "train", "popularity", "cooccurrence")
    index = len(set().union(*(pl.read_parquet(DATA / f"{t}.parquet")["user"].to_list() for t in tables)))
    trained = pl.read_parquet(DATA / "train.parquet")["user"].n_unique()
    assert (index, trained) == (600, 590)
    ratio = (math.log(trained) - 1) / (math.log(index) - 1)
    psp = kept["precision"][4] + ratio * (kept["psp"][4] - kept["precision"][4])
    psndcg = kept["ndcg"][4] + ratio * (kept["psndcg_mean"][4] - kept["ndcg"][4])
    out = tmp_path / "means.json"
    args = [
        "eval", "--recsys", str(DATA / "test.parquet"), "--topk", str(DATA / "popularity.parquet"),
        "--exclude", str(DATA / "train.parquet"), "--propensity", f"{PYXCLIB['A']},{PYXCLIB['B']}",
        "--empty-users", "zero", "-m", "PSP@5, PSnDCG@5", "-f", "json", "-o", str(out),
    ]  # fmt: skip
    if training == "--popularity":
        args += ["--popularity", str(DATA / "train.parquet")]
    assert main(args) == 0, capsys.readouterr().err
    text = out.read_text()
    means = {m: json.loads(text)["runs"][0]["aggregate"][m] for m in ("PSP@5", "PSnDCG@5")}
    assert means["PSP@5"] == pytest.approx(psp, rel=1e-9)
    assert means["PSnDCG@5"] == pytest.approx(psndcg, rel=1e-6)  # pyxclib's float32
    assert means["PSP@5"] != pytest.approx(kept["psp"][4], rel=1e-6)  # N = 600 was not it


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--propensity", "0.55"],
            "--propensity '0.55': expected A,B, two finite numbers > 0, such as 0.55,1.5",
        ),
        (["--propensity", "0.55,nan", "--exclude", "t"], "--propensity '0.55,nan': expected A,B"),
        (["--propensity", "0,1.5", "--exclude", "t"], "--propensity '0,1.5': expected A,B"),
        (
            ["--propensity", "0.55,1.5"],
            "--propensity: the model is fitted to the training interactions: give ",
        ),
        ([], "PSP@5 weighs each item by its inverse propensity: give propensity= to irspec.evaluate_topk"),
    ],
)
def test_command_line_propensity_refused(capsys, extra, message):
    from irspec.cli import main

    args = [
        "eval",
        "--recsys",
        str(DATA / "test.parquet"),
        "--topk",
        str(DATA / "popularity.parquet"),
        *extra,
    ]
    assert main([*args, "-m", "PSP@5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"irspec: error: {message}") and "Traceback" not in err
