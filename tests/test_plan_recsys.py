"""A plan's ``recsys`` section: recommenders evaluated from interaction tables (``irspec run``), compared
user by user and reported as any plan's runs, on the shipped MovieLens-shaped data set
(``specs/movielens/``, ``specs/recsys.yaml``).

References: the per-user values are checked against plain Python and RecTools in
``tests/test_recsys_movielens.py``; here the plan must give what the Python calls give on the same tables
(``read_tables`` and ``evaluate_topk``, one index for both models), its comparisons scipy's paired t-test
over the users, and its mistakes located at their lines (exit 2, nothing written).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from jsonschema import Draft202012Validator

import irspec
from irspec.errors import PlanError
from irspec.plan.execute import run_plan, write_outputs
from irspec.plan.load import load_plan, schema
from irspec.plan.model import RecsysSection

SPECS = Path(__file__).resolve().parents[1] / "specs"
DATA = SPECS / "movielens"
METRICS = "nDCG@10, R@20, HitRate@10, MAP@10, Coverage@10, Gini@10, ARP@10, Novelty@10, PSP@5, PSnDCG@5"


@pytest.fixture
def data(tmp_path):
    """The data set copied beside the plans a test writes (tmp_path/movielens)."""
    shutil.copytree(DATA, tmp_path / "movielens", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return tmp_path


def _write(where: Path, text: str) -> Path:
    path = where / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _expected(empty_users="skip"):
    tables = irspec.recsys.read_tables(
        DATA / "test.parquet",
        None,
        DATA / "train.parquet",
        tops=[DATA / "popularity.parquet", DATA / "cooccurrence.parquet"],
    )
    # fitted to the training table's users (N the training points), not every user of the index
    p = irspec.recsys.jain_propensity(
        tables.train[np.flatnonzero(np.diff(tables.train.indptr))], A=0.55, B=1.5
    )
    return [
        irspec.evaluate_topk(
            tables.test,
            top,
            METRICS,
            exclude=tables.train,
            popularity=tables.train,
            propensity=p,
            empty_users=empty_users,
            name=name,
            user_ids=tables.user_ids,
        )
        for name, top in zip(("popularity", "cooccurrence"), tables.tops, strict=True)
    ]


def test_the_shipped_plan_validates_and_gives_the_python_calls_values(tmp_path):
    plan = load_plan(SPECS / "recsys.yaml", [f"output[{i}].path={tmp_path}/{i}" for i in (1, 2, 3)])
    assert plan.qrels is None and plan.run_names == ("popularity", "cooccurrence")
    assert plan.recsys == RecsysSection(
        DATA / "test.parquet", DATA / "train.parquet", DATA / "train.parquet", (0.55, 1.5), "skip", ()
    )
    # every table is an input that no output may overwrite, each once
    assert len(plan.inputs) == 5
    assert set(map(str, plan.inputs)) == {
        str(SPECS / "recsys.yaml"),
        *(str(DATA / f"{n}.parquet") for n in ("popularity", "cooccurrence", "test", "train")),
    }
    report = run_plan(plan)
    for ours, theirs in zip(report.results, _expected(), strict=True):
        assert ours.run_name == theirs.run_name and ours.query_ids == theirs.query_ids
        np.testing.assert_array_equal(ours.values, theirs.values)
        assert ours.catalogue == theirs.catalogue
    # randomization over users, Holm: every per-user metric compared, the catalogue-level ones noted
    compared = {str(c.metric) for c in report.comparisons}
    assert compared == {"nDCG@10", "R@20", "Success@10", "AP@10", "ARP@10", "Novelty@10", "PSP@5", "PSnDCG@5"}
    assert any("Coverage@10, Gini@10: catalogue-level" in n for n in report.notes)
    stdout = io.StringIO()
    written = write_outputs(report, stdout=stdout)
    assert [p.name for p in written] == ["1", "2", "3"]
    assert "popularity (baseline)" in stdout.getvalue() and "225 queries" in stdout.getvalue()
    doc = json.loads((tmp_path / "1").read_text())
    assert [r["name"] for r in doc["runs"]] == ["popularity", "cooccurrence"]
    assert len(doc["runs"][1]["per_query"]) == 225 and "3" in doc["runs"][1]["per_query"]  # users by id
    roles = {(f["role"], f["name"]): f["path"] for f in doc["provenance"]["inputs"]}
    assert roles[("recsys", "test")] == str(DATA / "test.parquet")
    assert roles[("recsys", "exclude")] == roles[("recsys", "popularity")] == str(DATA / "train.parquet")
    assert roles[("run", "cooccurrence")] == str(DATA / "cooccurrence.parquet")
    assert "| cooccurrence |" in (tmp_path / "2").read_text()
    assert "<svg" in (tmp_path / "3").read_text()  # the page's per-user figures drawn


def test_the_schema_takes_the_shipped_plan_and_recsys_in_place_of_qrels():
    import yaml

    validator = Draft202012Validator(schema())
    assert validator.is_valid(yaml.safe_load((SPECS / "recsys.yaml").read_text()))
    assert validator.is_valid({"recsys": {"test": "t", "runs": ["r"]}, "metrics": "nDCG@10"})
    assert not validator.is_valid({"recsys": {"test": "t"}, "metrics": "nDCG@10"})
    assert not validator.is_valid(
        {"recsys": {"test": "t", "runs": ["r"], "empty_users": "all"}, "metrics": "P@5"}
    )
    assert not validator.is_valid({"runs": ["r"], "metrics": "nDCG@10"})  # qrels, still, without recsys


def test_compared_by_a_t_test_over_users_as_scipy_does(data):
    plan = _write(
        data,
        """recsys:
  test: movielens/test.parquet
  runs:
    - {name: pop, path: movielens/popularity.parquet}
    - {name: cooc, path: movielens/cooccurrence.parquet}
  exclude: movielens/train.parquet
metrics: nDCG@10, R@20
compare: {baseline: pop, test: t, correction: none}
""",
    )
    report = run_plan(load_plan(plan))
    pop, cooc = report.results
    assert pop.query_ids == cooc.query_ids
    for c in report.comparisons:
        name = str(c.metric)
        assert (c.a, c.b) == ("cooc", "pop")
        expected = scipy.stats.ttest_rel(cooc.column(name), pop.column(name)).pvalue
        assert c.p_value == pytest.approx(expected, rel=1e-9) and c.n == len(pop.query_ids)


def test_empty_users_zero_counts_every_user_and_an_override_sets_it(data):
    text = (SPECS / "recsys.yaml").read_text().replace("movielens/", str(data / "movielens") + "/")
    plan = load_plan(_write(data, text), ["recsys.empty_users=zero"])
    assert plan.recsys is not None and plan.recsys.empty_users == "zero"
    report = run_plan(plan)
    for ours, theirs in zip(report.results, _expected("zero"), strict=True):
        assert len(ours.query_ids) == 600  # every user of the index: 225 with a relevant item, 375 at 0
        np.testing.assert_array_equal(ours.values, theirs.values)


def test_features_and_expected_items_tables(data):
    import polars as pl

    tables = irspec.recsys.read_tables(
        DATA / "test.parquet", DATA / "cooccurrence.parquet", DATA / "train.parquet"
    )
    items = np.array([int(i) for i in tables.item_ids])
    rng = np.random.default_rng(4)
    embedding = rng.normal(size=(len(items), 3))
    # rows in another order than the index, and an item no table names (passed over)
    order = rng.permutation(len(items))
    pl.DataFrame(
        {
            "item": np.append(items[order], 10**9),
            "v": np.vstack([embedding[order], [[1.0, 1.0, 1.0]]]).tolist(),
        }
    ).write_parquet(data / "emb.parquet")
    expects = tables.top_items[:, :5]  # what each user expects: the model's own top 5
    u, k = np.nonzero(expects >= 0)
    user_col = np.array([int(x) for x in tables.user_ids])[u]
    pl.DataFrame({"user": user_col, "item": items[expects[u, k]]}).write_parquet(data / "exp.parquet")
    plan = _write(
        data,
        """recsys:
  test: movielens/test.parquet
  runs: [movielens/cooccurrence.parquet]
  exclude: movielens/train.parquet
  features: emb.parquet
  expected: exp.parquet
metrics: ILD@10, Serendipity(expected=items)@10, nDCG@10
output: [{format: json, path: out.json}]
""",
    )
    report = run_plan(load_plan(plan))
    spec = "ILD@10, Serendipity(expected=items)@10, nDCG@10"
    theirs = irspec.evaluate_topk(
        tables.test, tables.top_items, spec, exclude=tables.train, features=embedding, expected=expects
    )
    (ours,) = report.results
    assert ours.aggregate() == pytest.approx(theirs.aggregate(), rel=1e-12, abs=0)
    mine = dict(zip(ours.query_ids, ours.values.tolist(), strict=True))  # users by their ids
    for q, row in zip(theirs.query_ids, theirs.values.tolist(), strict=True):  # users by their rows
        np.testing.assert_allclose(mine[tables.user_ids[int(q)]], row, rtol=1e-12, atol=0)
    write_outputs(report)
    doc = json.loads((data / "out.json").read_text())
    roles = {(f["role"], f["name"]) for f in doc["provenance"]["inputs"]}
    assert {("recsys", "features"), ("recsys", "expected")} <= roles


def test_score_tables_and_column_names(data):
    import polars as pl

    recs = pl.read_parquet(data / "movielens" / "cooccurrence.parquet")
    # a score table under other column names: the highest score first, as the ranks were
    scored = recs.select(uid=pl.col("user"), movie=pl.col("item"), s=100 - pl.col("rank").cast(pl.Float64))
    scored.write_parquet(data / "scored.parquet")
    for name in ("test", "train"):
        pl.read_parquet(data / "movielens" / f"{name}.parquet").rename(
            {"user": "uid", "item": "movie"}
        ).write_parquet(data / f"{name}.parquet")
    plan = _write(
        data,
        """recsys:
  test: test.parquet
  runs: [scored.parquet]
  exclude: train.parquet
  columns: {user: uid, item: movie, score: s}
metrics: [nDCG@10, R@20]
""",
    )
    (ours,) = run_plan(load_plan(plan)).results
    theirs = irspec.evaluate_topk(*_tables_topk(), "nDCG@10, R@20", exclude=_train(), user_ids=_ids())
    assert ours.run_name == "scored" and ours.query_ids == theirs.query_ids
    np.testing.assert_array_equal(ours.values, theirs.values)


def _read():
    return irspec.recsys.read_tables(
        DATA / "test.parquet", DATA / "cooccurrence.parquet", DATA / "train.parquet"
    )


def _tables_topk():
    t = _read()
    return t.test, t.top_items


def _train():
    return _read().train


def _ids():
    return _read().user_ids


@pytest.mark.parametrize(
    "text, messages",
    [
        (
            """qrels: q.txt
recsys: {test: movielens/test.parquet, runs: [movielens/popularity.parquet]}
metrics: nDCG@10
""",
            [":1: qrels: a plan with recsys evaluates recommendations from its tables"],
        ),
        (
            """recsys:
  test: movielens/tset.parquet
  runs: [movielens/nothing*.parquet]
metrics: nDCG@10
""",
            [
                ":2: recsys.test: table file not found:",
                ":3: recsys.runs[0]: glob 'movielens/nothing*.parquet' matches no file",
            ],
        ),
        (
            """recsys:
  test: movielens/test.parquet
  runs: [movielens/popularity.parquet]
  propensity: {A: .nan}
metrics: PSP@5
""",
            [
                ":4: recsys.propensity: the propensity model is fitted to the training interactions: give "
                "recsys.popularity or recsys.exclude",
                ":4: recsys.propensity.A: A must be a finite number > 0, not nan",
            ],
        ),
        (
            """recsys:
  test: movielens/test.parquet
  runs: [movielens/popularity.parquet]
  empty_users: none
  colums: {user: u}
metrics: nDCG@10
""",
            [
                ":4: recsys.empty_users: 'none' is not one of: skip, zero",
                ":5: recsys.colums: unknown key 'colums'; did you mean 'columns'?",
            ],
        ),
        (
            """recsys:
  test: movielens/test.parquet
  runs: [{name: a, path: movielens/popularity.parquet}, {name: a, path: movielens/cooccurrence.parquet}]
options: {depth: 10, relevance_level: 2}
metrics: nDCG@10
compare: {baseline: b}
""",
            [
                ":3: recsys.runs[1].name: duplicate run name 'a'",
                ":4: options.depth: depth has no meaning for recommendations; of the options a plan with "
                "recsys takes relevance_level",
                ":6: compare.baseline: baseline 'b' is not a run of this plan",
            ],
        ),
        (
            """recsys: {test: movielens/test.parquet, runs: [movielens/popularity.parquet]}
metrics: nDCG@10
compare: {}
""",
            [":3: compare: comparing needs at least 2 runs; the plan has 1"],
        ),
        (
            """recsys: {test: movielens/test.parquet, runs: [movielens/popularity.parquet, movielens/cooc*]}
metrics: nDCG@10, Coverage@10, Gini@10
standardize: true
""",
            [
                ":3: standardize: Coverage@10, Gini@10: catalogue-level, one value per system and none per "
                "user, so there is nothing to standardise"
            ],
        ),
        (
            """recsys: {runs: [movielens/popularity.parquet]}
metrics: nDCG@10
""",
            [":1: recsys: missing required key 'test'"],
        ),
        (
            """recsys:
  test: movielens/test.parquet
  runs: [movielens/popularity.parquet]
  features: movielens/genres.parquet
metrics: ILD@10
""",
            [":4: recsys.features: table file not found:", "genres.parquet"],
        ),
        (
            """recsys: {test: movielens/test.parquet, runs: [movielens/popularity.parquet]}
metrics: nDCG@10
output: [{format: json, path: movielens/test.parquet}]
""",
            [":3: output[0].path:", "is an input of this plan; it would be overwritten"],
        ),
    ],
)
def test_mistakes_are_located(data, text, messages):
    with pytest.raises(PlanError) as found:
        load_plan(_write(data, text))
    said = str(found.value)
    for message in messages:
        assert message in said, said


def test_a_bad_table_stops_the_command_with_exit_2_and_nothing_written(data):
    plan = _write(
        data,
        """recsys:
  test: movielens/test.parquet
  runs: [movielens/popularity.parquet, {name: wrong, path: movielens/train.parquet}]
metrics: nDCG@10
output: [{format: json, path: out/results.json}]
""",
    )
    done = subprocess.run(
        [sys.executable, "-m", "irspec", "run", str(plan)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"irspec: error: {data}/movielens/train.parquet: no column 'rank' or 'score' to order the "
        "recommendations (columns: 'user', 'item', 'rating', 'timestamp')"
    ]
    assert not (data / "out").exists()


def test_groups_power_and_standardize_take_users_as_topics(data):
    import polars as pl

    users = sorted(set(pl.read_parquet(data / "movielens" / "test.parquet")["user"]))
    (data / "groups.txt").write_text("".join(f"{u} {'odd' if u % 2 else 'even'}\n" for u in users))
    plan = _write(
        data,
        """recsys:
  test: movielens/test.parquet
  runs: [movielens/popularity.parquet, movielens/cooccurrence.parquet]
  exclude: movielens/train.parquet
metrics: [nDCG@10]
compare: {baseline: popularity}
power: {delta: 0.02}
groups: groups.txt
""",
    )
    report = run_plan(load_plan(plan))
    assert report.power is not None and report.power.as_dict()
    out = io.StringIO()
    write_outputs(report, stdout=out)
    n = len(report.results[0].query_ids)
    assert "Query groups: nDCG@10" in out.getvalue()
    assert f"micro mean over all queries      {n}" in out.getvalue()
    text = plan.read_text().replace("power: {delta: 0.02}\ngroups: groups.txt\n", "standardize: true\n")
    z = run_plan(load_plan(_write(data, text)))
    a, b = (res.values[:, 0] for res in z.results)  # z-scores over the two systems: opposite, user by user
    assert np.allclose(a, -b) and z.results[0].query_ids == z.results[1].query_ids
