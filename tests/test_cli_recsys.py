"""``irspec eval --recsys TEST --topk RECS``: interaction tables (Parquet files on disk) evaluated by the
real command line, in process (irspec.cli.main) and as ``python -m irspec``.

Expected values come from irspec.evaluate_topk on matrices the tests build from the same rows with their
own index (numpy's sorted unique ids), and from arithmetic written out on a tiny case.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp

import irspec
from irspec.cli import main

METRICS = "nDCG@10, R@20, HitRate@10, AP(den=min)@10, Coverage@10, ARP@10, Novelty@10"


def _movielens(folder: Path, seed: int = 3) -> dict[str, pl.DataFrame]:
    """A MovieLens-shaped split written as Parquet: integer ratings 1-5 held out, training interactions,
    and a model's top 30 with scores (some of them training items); string user ids, integer item ids."""
    rng = np.random.default_rng(seed)
    users, items = 80, 60
    popularity = rng.pareto(1.5, items) + 0.05
    seen = rng.random((users, items)) < 0.15 * popularity / popularity.mean()
    held = seen & (rng.random((users, items)) < 0.25)
    train = seen & ~held
    u, i = np.nonzero(held)
    test = pl.DataFrame(
        {"user": [f"user{x:03d}" for x in u], "item": 1000 + i, "rating": rng.integers(1, 6, len(u))}
    )
    tu, ti = np.nonzero(train)
    training = pl.DataFrame({"user": [f"user{x:03d}" for x in tu], "item": 1000 + ti, "timestamp": tu * 7})
    scores = rng.normal(size=(users, items)) + 2 * held
    top = np.argsort(-scores, axis=1, kind="stable")[:, :30]
    ru = np.repeat(np.arange(users), 30)
    recs = pl.DataFrame(
        {"user": [f"user{x:03d}" for x in ru], "item": 1000 + top.ravel(), "score": scores[ru, top.ravel()]}
    )
    frames = {"test": test, "train": training, "recs": recs}
    for name, frame in frames.items():
        frame.write_parquet(folder / f"{name}.parquet")
    return frames


def _matrices(frames: dict[str, pl.DataFrame]):
    """The tables as matrices over the test's own index: every id of every table, sorted."""
    user_ids = np.unique(np.concatenate([f["user"].to_numpy() for f in frames.values()]))
    item_ids = np.unique(np.concatenate([f["item"].to_numpy() for f in frames.values()]))
    shape = (len(user_ids), len(item_ids))

    def rows(f):
        return np.searchsorted(user_ids, f["user"].to_numpy()), np.searchsorted(
            item_ids, f["item"].to_numpy()
        )

    test = sp.csr_array((frames["test"]["rating"].to_numpy(), rows(frames["test"])), shape=shape)
    r, c = rows(frames["train"])
    train = sp.csr_array((np.ones(len(r), dtype=np.int64), (r, c)), shape=shape)
    top = np.full((shape[0], 30), -1)
    recs = frames["recs"].sort(["user", "score"], descending=[False, True])
    for user, group in recs.group_by("user", maintain_order=True):
        top[np.searchsorted(user_ids, user[0])] = np.searchsorted(item_ids, group["item"].to_numpy())
    return test, train, top, [str(x) for x in user_ids]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _json(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("level", [1, 4])
def test_values_equal_evaluate_topk_on_matrices_built_here(folder, capsys, level):
    frames = _movielens(folder)
    test, train, top, user_ids = _matrices(frames)
    argv = ["eval", "--recsys", "test.parquet", "--topk", "recs.parquet", "--exclude", "train.parquet"]
    argv += ["--popularity", "train.parquet", "-m", METRICS, "-f", "json", "-q", "-l", str(level)]
    doc = _json(capsys, argv)
    expected = irspec.evaluate_topk(
        test, top, METRICS, exclude=train, popularity=train, relevance_level=level
    )
    (run,) = doc["runs"]
    assert run["name"] == "recs"
    assert run["aggregate"] == pytest.approx(expected.aggregate(), rel=1e-12)
    # per user, by the user's own id (the matrices' rows are the sorted ids here too)
    by_row = {user_ids[int(q)]: row for q, row in zip(expected.query_ids, expected.values, strict=True)}
    assert sorted(run["per_query"]) == sorted(by_row)
    for user, values in run["per_query"].items():
        for m, v in zip(expected.metrics, by_row[user], strict=True):
            if not m.catalogue:
                assert values[str(m)] == pytest.approx(v, rel=1e-12)


def test_item_features_and_expected_items_from_tables(folder, capsys):
    frames = _movielens(folder)
    test, train, top, _ = _matrices(frames)
    items = np.unique(np.concatenate([f["item"].to_numpy() for f in frames.values()]))
    rng = np.random.default_rng(8)
    genres = rng.random((len(items), 5)) < 0.3  # a row per item of the index, in its order
    pl.DataFrame({"item": items, **{f"g{j}": genres[:, j] for j in range(5)}}).write_parquet("genres.parquet")
    popular = items[np.argsort(-np.asarray(train.sum(axis=0)).ravel(), kind="stable")][:10]
    users = frames["test"]["user"].unique().sort().to_list()
    pl.DataFrame({"user": np.repeat(users, 10), "item": np.tile(popular, len(users))}).write_parquet(
        "exp.parquet"
    )
    spec = "ILD@10, ILD(distance=jaccard)@10, Serendipity(expected=items)@10"
    argv = ["eval", "--recsys", "test.parquet", "--topk", "recs.parquet", "--exclude", "train.parquet"]
    argv += ["--features", "genres.parquet", "--expected", "exp.parquet", "-m", spec, "-f", "json"]
    doc = _json(capsys, argv)
    # everyone expects the 10 most popular items: as the items' indices in the matrices' order
    expects = np.tile(np.searchsorted(items, popular), (test.shape[0], 1))
    expected = irspec.evaluate_topk(
        test, top, spec, exclude=train, features=genres.astype(int), expected=expects
    )
    assert doc["runs"][0]["aggregate"] == pytest.approx(expected.aggregate(), rel=1e-12)
    roles = {(e["role"], e["name"]): e["path"] for e in doc["provenance"]["inputs"]}
    assert (
        roles[("recsys", "features")] == "genres.parquet" and roles[("recsys", "expected")] == "exp.parquet"
    )


def test_a_tiny_case_by_hand(folder, capsys):
    """Two users, three items. Ann held out x (2) and y (1), Bo held out z (1); Bo trained on x.
    Lists: Ann y, z, x; Bo x, z. nDCG@2 of Ann: y (gain 1) at 1, ideal x (2), y (1):
    1 / (2 + 1/log2 3); Bo: x removed, z at 1: 1. Coverage@2: y, z of 3 items."""
    pl.DataFrame({"user": ["ann", "ann", "bo"], "item": ["x", "y", "z"], "label": [2, 1, 1]}).write_parquet(
        "t.parquet"
    )
    pl.DataFrame({"user": ["ann", "ann", "ann", "bo", "bo"], "item": ["y", "z", "x", "x", "z"],
                  "rank": [1, 2, 3, 1, 2]}).write_parquet("r.parquet")  # fmt: skip
    pl.DataFrame({"user": ["bo"], "item": ["x"]}).write_parquet("tr.parquet")
    argv = ["eval", "--recsys", "t.parquet", "--topk", "r.parquet", "--exclude", "tr.parquet"]
    doc = _json(capsys, [*argv, "-m", "nDCG@2, Coverage@2", "-f", "json", "-q"])
    ann = 1 / (2 + 1 / math.log2(3))
    assert doc["runs"][0]["per_query"] == {"ann": {"nDCG@2": pytest.approx(ann)}, "bo": {"nDCG@2": 1.0}}
    assert doc["runs"][0]["aggregate"] == {"nDCG@2": pytest.approx((ann + 1) / 2), "Coverage@2": 2 / 3}
    # the usual table: a row per user with -q, the run's means, the catalogue value
    capsys.readouterr()
    assert main([*argv, "-m", "nDCG@2, Coverage@2", "-q", "--ci", "none"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["run", "query", "nDCG@2", "Coverage@2"]
    assert lines[2].split() == ["r", "ann", f"{ann:.4f}", "-"]
    assert lines[4].split() == ["r", "all", f"{(ann + 1) / 2:.4f}", "0.6667"]


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "markdown", "latex", "trec", "table"])
def test_formats_to_a_file(folder, capsys, fmt):
    _movielens(folder)
    argv = ["eval", "--recsys", "test.parquet", "--topk", "recs.parquet", "-m", "nDCG@10, Coverage@10"]
    assert main([*argv, "-f", fmt, "-o", "out.txt"]) == 0
    capsys.readouterr()
    assert main([*argv, "-f", fmt]) == 0
    assert Path("out.txt").read_text() == capsys.readouterr().out


def test_empty_users_zero_and_columns(folder, capsys):
    pl.DataFrame({"uid": [1, 2], "iid": [5, 6], "stars": [0, 3]}).write_parquet("t.parquet")
    pl.DataFrame({"uid": [1, 2], "iid": [6, 6], "pos": [1, 1]}).write_parquet("r.parquet")
    argv = ["eval", "--recsys", "t.parquet", "--topk", "r.parquet", "-m", "P@1", "-f", "json", "-q"]
    argv += ["--columns", "user=uid,item=iid,label=stars,rank=pos"]
    assert _json(capsys, argv)["runs"][0]["per_query"] == {"2": {"P@1": 1.0}}  # user 1: nothing relevant
    doc = _json(capsys, [*argv, "--empty-users", "zero"])
    assert doc["runs"][0]["per_query"] == {"1": {"P@1": 0.0}, "2": {"P@1": 1.0}}


def test_python_m_irspec(folder):
    frames = _movielens(folder)
    test, train, top, _ = _matrices(frames)
    out = subprocess.run(
        [sys.executable, "-m", "irspec", "eval", "--recsys", "test.parquet", "--topk", "recs.parquet",
         "--exclude", "train.parquet", "-m", "nDCG@10, Coverage@10", "-f", "json"],
        capture_output=True, text=True, check=True, cwd=folder,
    )  # fmt: skip
    expected = irspec.evaluate_topk(test, top, "nDCG@10, Coverage@10", exclude=train).aggregate()
    assert json.loads(out.stdout)["runs"][0]["aggregate"] == pytest.approx(expected, rel=1e-12)


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


HOSTILE = [
    ("missing column", {"t": {"usr": [1], "item": [1]}}, [], "t.parquet: no column 'user'"),
    ("bad type", {"t": {"user": [1.5], "item": [1]}}, [], "t.parquet: column 'user' holds Float64"),
    ("duplicate pair", {"t": {"user": [1, 1], "item": [2, 2]}}, [], "t.parquet: row 1: user and item repeat"),
    ("negative rating", {"t": {"user": [1], "item": [2], "rating": [-2]}}, [], "t.parquet: row 0: rating -2"),
    ("output is an input", {}, ["-o", "r.parquet"], "cannot write 'r.parquet': it is an input"),
    ("output is the training table", {}, ["--exclude", "tr.parquet", "-o", "tr.parquet"], "cannot write 'tr"),
    ("z-scores", {}, ["--write-z", "z.txt"], "--recsys does not take --write-z"),
    ("not parquet", {}, ["--exclude", "notes.txt"], "notes.txt: cannot read as Parquet"),
    ("a flag of runs", {}, ["-J"], "--recsys does not take -J/--judged-only"),
    ("qrels too", {}, ["qrels.txt"], "--recsys reads tables, not qrels and runs"),
    ("no metrics", {}, ["NO-M"], "--recsys needs the metrics"),
    ("bad columns", {}, ["--columns", "usr=u"], "--columns 'usr=u': expected ROLE=NAME"),
    ("unknown metric", {}, ["-m", "nDGC@10"], "nDGC"),
]


@pytest.mark.parametrize(("case", "tables", "extra", "message"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_inputs_exit_2_and_write_nothing(folder, capsys, case, tables, extra, message):
    pl.DataFrame(tables.get("t", {"user": [1], "item": [2]})).write_parquet("t.parquet")
    pl.DataFrame({"user": [1], "item": [2], "rank": [1]}).write_parquet("r.parquet")
    pl.DataFrame({"user": [1], "item": [3]}).write_parquet("tr.parquet")
    Path("notes.txt").write_text("not a table\n")
    before = _digest(folder)
    measures = [] if "NO-M" in extra or "-m" in extra else ["-m", "P@1"]
    argv = [
        "eval",
        "--recsys",
        "t.parquet",
        "--topk",
        "r.parquet",
        *measures,
        *(a for a in extra if a != "NO-M"),
    ]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("irspec: error: ") and err.count("\n") == 1 and message in err, err
    assert _digest(folder) == before


RECSYS_ONLY = [
    (["--exclude", "nowhere.parquet"], "--exclude"),
    (["--popularity", "nowhere.parquet"], "--popularity"),
    (["--propensity", "0.55,1.5"], "--propensity"),
    (["--features", "nowhere.parquet"], "--features"),
    (["--expected", "nowhere.parquet"], "--expected"),
    (["--empty-users", "zero"], "--empty-users"),
    (["--empty-users", "skip"], "--empty-users"),  # the default's value, given: refused all the same
    (["--columns", "user=uid"], "--columns"),
    (
        [
            "--exclude",
            "a",
            "--popularity",
            "b",
            "--propensity",
            "1,1",
            "--empty-users",
            "zero",
            "--columns",
            "x",
        ],
        "--exclude, --popularity, --propensity, --empty-users, --columns need --recsys",
    ),
]


@pytest.mark.parametrize(("extra", "named"), RECSYS_ONLY, ids=[" ".join(r[0][::2]) for r in RECSYS_ONLY])
def test_recommendation_options_without_recsys_are_refused(folder, capsys, extra, named):
    """The reverse of "--recsys does not take ...": an option only recommendations read, given with
    qrels and runs, would be ignored (its file never read, however missing); it stops the command."""
    Path("qrels.txt").write_text("q1 0 d1 1\n")
    Path("run.txt").write_text("q1 Q0 d1 1 1.0 r\n")
    before = _digest(folder)
    capsys.readouterr()
    assert main(["eval", "qrels.txt", "run.txt", "-m", "P@1", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irspec: error: ") and err.count("\n") == 1, err
    assert named in err and "need" in err and "--recsys" in err, err
    assert _digest(folder) == before


def test_provenance_hashes_every_table_that_shaped_the_values(folder, capsys):
    frames = _movielens(folder)
    frames["train"].head(40).write_parquet("popular.parquet")  # popularity from other rows than exclude's
    argv = ["eval", "--recsys", "test.parquet", "--topk", "recs.parquet", "--exclude", "train.parquet"]
    argv += ["--popularity", "popular.parquet", "-m", "nDCG@10, ARP@10", "-f", "json"]
    entries = _json(capsys, argv)["provenance"]["inputs"]
    found = {(e["role"], e["name"], e["path"]): e for e in entries}
    # as a plan's recsys section lists its tables: by their keys
    expected = {
        ("recsys", "test", "test.parquet"),
        ("run", "recs", "recs.parquet"),
        ("recsys", "exclude", "train.parquet"),
        ("recsys", "popularity", "popular.parquet"),
    }
    assert set(found) == expected
    for (_, _, path), entry in found.items():
        data = Path(path).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data)
    # without them, no entry: only what was read is listed
    doc = _json(
        capsys, ["eval", "--recsys", "test.parquet", "--topk", "recs.parquet", "-m", "P@5", "-f", "json"]
    )
    assert [(e["role"], e["name"]) for e in doc["provenance"]["inputs"]] == [
        ("run", "recs"),
        ("recsys", "test"),
    ]
