"""Standardised scores (irspec.experiment.standardize): z = (x - mean_t) / sd_t per topic, trec_eval's -Z file.

Expected values come from hand arithmetic written out here, from numpy/scipy computed independently in
the test (np.mean, np.std(ddof=1), scipy.stats.norm.cdf), and from trec_eval 10's own output on a
checked-in fixture (tests/fixtures/zscores/trec_eval_Z.txt, made by /tmp/te/trec_eval outside the tests).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

import irspec
from irspec.cli import main
from irspec.errors import EvaluationError, InputError
from irspec.experiment.standardize import StandardizedMetric, read_z, z_table

FIX = Path(__file__).parent / "fixtures" / "zscores"


def _runs(values: dict[str, list[float]], metric: str = "P@2") -> list:
    """Results whose per-query P@2 equals the given values: two documents per query, ranked so."""
    qrels = {
        f"q{i:02d}": {"r1": 1, "r2": 1} for i in range(len(next(iter(values.values()))))
    }  # q00, q01: id order is index order
    runs = {}
    for name, xs in values.items():
        run = {}
        for i, x in enumerate(xs):
            rel = round(x * 2)  # P@2 of 0, 0.5, 1: that many relevant documents on top
            docs = ["r1", "r2"][:rel] + ["n1", "n2"][: 2 - rel]
            run[f"q{i:02d}"] = {d: 10.0 - k for k, d in enumerate(docs)}
        runs[name] = run
    return list(irspec.evaluate(qrels, runs, metric).values())


def test_hand_worked_z_scores():
    # P@2 per query: a = [1, 0.5, 0], b = [0.5, 0.5, 1], c = [0, 0.5, 0.5]
    # q00: mean 0.5, sample sd sqrt((0.25 + 0 + 0.25) / 2) = 0.5 -> z = 1, 0, -1
    # q01: every run 0.5: sd 0, each value is the mean -> z = 0
    # q02: mean 0.5, sd sqrt((0.25 + 0.25 + 0) / 2) = 0.5 -> z = -1, 1, 0
    runs = _runs({"a": [1, 0.5, 0], "b": [0.5, 0.5, 1], "c": [0, 0.5, 0.5]})
    z = irspec.standardize(runs)
    assert [list(r.values[:, 0]) for r in z] == [[1.0, 0.0, -1.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]]
    assert [r.aggregate()["z(P@2)"] for r in z] == [0.0, 1 / 3, -1 / 3]
    assert str(z[0].metrics[0]) == "z(P@2)"


def test_against_numpy_and_scipy_on_random_runs():
    rng = np.random.default_rng(7)
    values = {name: rng.choice([0.0, 0.5, 1.0], size=12).tolist() for name in "abcde"}
    values["a"][3] = values["b"][3] = values["c"][3] = values["d"][3] = values["e"][3] = 0.5  # one sd-0 topic
    runs = _runs(values)
    matrix = np.array([values[n] for n in "abcde"])  # runs x topics
    mean, sd = matrix.mean(axis=0), matrix.std(axis=0, ddof=1)
    expected = np.divide(matrix - mean, sd, out=np.zeros_like(matrix), where=sd > 0)
    z = irspec.standardize(runs)
    got = np.array([r.values[:, 0] for r in z])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    phi = irspec.standardize(runs, cdf=True)
    np.testing.assert_allclose(
        np.array([r.values[:, 0] for r in phi]), scipy.stats.norm.cdf(expected), rtol=0, atol=1e-15
    )
    assert str(phi[0].metrics[0]) == "Phi(z(P@2))"


def test_written_file_round_trips(tmp_path):
    rng = np.random.default_rng(3)
    runs = _runs({name: rng.choice([0.0, 0.5, 1.0], size=8).tolist() for name in "abcd"})
    path = tmp_path / "z.txt"
    path.write_text(z_table(runs).to_text())
    direct = irspec.standardize(runs)
    from_file = irspec.standardize(runs, reference=path)
    for a, b in zip(direct, from_file, strict=True):
        assert np.array_equal(a.values, b.values)  # bit for bit
    first = path.read_text().splitlines()[0].split()
    assert first[:2] == ["q00", "P_2"]  # trec_eval's measure name


def test_trec_eval_fixture(capsys):
    """trec_eval 10 printed tests/fixtures/zscores/trec_eval_Z.txt for
    ``trec_eval -q -c -Z zscores.txt -m ndcg_cut.10 -m map -m P.5 -m recip_rank -m num_ret qrels.txt run.txt``
    (run outside the tests; trec_eval is not in the repository): an independent source, including
    topics whose sd is 0 and whose value equals the mean (z = 0) and z-scores of a count (num_ret)."""
    args = [
        "eval",
        str(FIX / "qrels.txt"),
        str(FIX / "run.txt"),
        "-q",
        "-f",
        "trec",
        "-Z",
        str(FIX / "zscores.txt"),
    ]
    for m in ("ndcg_cut.10", "map", "P.5", "recip_rank", "num_ret"):
        args += ["-m", m]
    assert main(args) == 0
    got = sorted(capsys.readouterr().out.splitlines())
    assert got == sorted((FIX / "trec_eval_Z.txt").read_text().splitlines())


def test_the_query_count_is_not_standardised(tmp_path, capsys):
    """trec_eval 10 needs num_q's lines in the -Z file but prints, as its summary, the number of queries
    (m_num_q.c's own average, whatever z-scores the file would give) and no value per query: it printed
    exactly these lines for these files (run outside the tests)."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq2 Q0 d3 1 1 r\n")
    (tmp_path / "z").write_text("q1 num_q 0 2\nq2 num_q 5 0.5\nq1 P_1 0.5 0.25\nq2 P_1 0.5 0.25\n")
    files = [str(tmp_path / n) for n in ("qrels", "run")]
    assert (
        main(["eval", *files, "-q", "-f", "trec", "-Z", str(tmp_path / "z"), "-m", "num_q", "-m", "P.1"]) == 0
    )
    assert capsys.readouterr().out.splitlines() == [
        "ZP_1                   \tq1\t2.0000",
        "ZP_1                   \tq2\t-2.0000",
        "Znum_q                 \tall\t2.0000",
        "ZP_1                   \tall\t0.0000",
    ]
    (tmp_path / "z").write_text("q1 P_1 0.5 0.25\nq2 P_1 0.5 0.25\n")  # trec_eval: -1000000; irspec: an error
    assert main(["eval", *files, "-f", "trec", "-Z", str(tmp_path / "z"), "-m", "num_q"]) == 2
    assert "no mean and sd for measure 'num_q'" in capsys.readouterr().err


def test_hand_worked_file(tmp_path):
    # q0 P@2 = 1 with mean 0.25, sd 0.5 -> (1 - 0.25) / 0.5 = 1.5; q1 P@2 = 0 with mean 0.5, sd 0.25 -> -2
    (res,) = _runs({"a": [1, 0]})
    path = tmp_path / "z.txt"
    path.write_text("q00 P_2 0.25 0.5\n\nq01\tP_2   0.5 0.25\n")
    z = irspec.standardize(res, reference=path)
    assert list(z.values[:, 0]) == [1.5, -2.0]
    assert z.aggregate()["z(P@2)"] == (1.5 - 2.0) / 2
    assert "file " + str(path) in dict(z.tables[-1].rows)["reference"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q0 P_2 0.5\n", "z.txt:1: expected 4 fields"),
        ("q0 P_2 0.5 0.1\nq1 P_2 x 0.1\n", "z.txt:2: the mean must be a number"),
        ("q0 P_2 0.5 -1\n", "z.txt:1: the standard deviation must not be negative"),
        ("q0 P_2 0.5 nan\n", "z.txt:1: the sd must be finite"),
        ("q0 P_2 0.5 1\nq0 P_2 0.5 1\n", "z.txt:2: query 'q0', measure 'P_2' given twice (first at line 1)"),
        ("\n", "the z-score file has no lines"),
    ],
)
def test_malformed_files(tmp_path, text, message):
    path = tmp_path / "z.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_z(path)


def test_missing_topic_and_sd_zero_are_errors(tmp_path):
    (res,) = _runs({"a": [1, 0]})
    path = tmp_path / "z.txt"
    path.write_text("q00 P_2 0.5 0.5\n")  # trec_eval would print -1000000 for q1
    with pytest.raises(InputError, match=r"no mean and sd for measure 'P_2' of 1 query of a \('q01'\)"):
        irspec.standardize(res, reference=path)
    path.write_text("q00 P_2 0.5 0.5\nq01 P_2 0.5 0\n")  # sd 0 and the value 0 is not the mean 0.5
    with pytest.raises(EvaluationError, match=r"z.txt:2: query 'q01', P_2: the standard deviation is 0"):
        irspec.standardize(res, reference=path)


def test_cannot_standardise_a_geometric_mean_or_one_run():
    runs = _runs({"a": [1, 0], "b": [0.5, 0.5]}, metric="GMAP")
    with pytest.raises(EvaluationError, match="geometric mean"):
        irspec.standardize(runs)
    with pytest.raises(EvaluationError, match="at least 2 reference runs"):
        irspec.standardize(_runs({"a": [1, 0]}))


def test_every_shape_evaluate_returns_and_reference_by_name():
    """A ResultSet, a dict and a list of results each come back in their own shape; ``reference`` may
    name runs (as a plan does). Hand arithmetic: P@2 a = [1, 0], b = [0, 1], c = [0.5, 0.5]; the
    reference a and b: per topic mean 0.5 and sample sd sqrt(2 * 0.25 / 1) = sqrt(0.5); c scores the
    mean on both topics, z = 0; a scores (1 - 0.5) / sqrt(0.5) = sqrt(0.5) on q00."""
    runs = _runs({"a": [1, 0], "b": [0, 1], "c": [0.5, 0.5]})
    many = irspec.ResultSet(tuple(runs))
    for given, kind in ((many, irspec.ResultSet), (dict(many), dict), (runs, list)):
        z = irspec.standardize(given, reference=["a", "b"])
        assert type(z) is kind
        found = list(z.values()) if kind is not list else z
        assert [r.run_name for r in found] == ["a", "b", "c"]
        assert found[2].values[:, 0].tolist() == [0.0, 0.0]
        assert found[0].values[0, 0] == pytest.approx(math.sqrt(0.5), rel=1e-15)
    assert isinstance(irspec.standardize(runs[2], reference=runs[:2]), irspec.Result)
    with pytest.raises(
        EvaluationError, match=r"reference 'bm25' is not a run of the results \(the runs are a, b, c\)"
    ):
        irspec.standardize(many, reference=["a", "bm25"])
    with pytest.raises(EvaluationError, match=r"expected results .* got str"):
        irspec.standardize(["a", "b"])


def test_standardised_results_compare_like_any_metric():
    rng = np.random.default_rng(11)
    runs = _runs({name: rng.choice([0.0, 0.5, 1.0], size=10).tolist() for name in "abc"})
    z = irspec.standardize(runs)
    (c,) = [c for c in irspec.compare(z, baseline="a").comparisons if c.b == "a" and c.a == "b"]
    diff = z[1].values[:, 0] - z[0].values[:, 0]
    assert c.metric == "z(P@2)"
    assert math.isclose(
        c.p_value, scipy.stats.ttest_rel(z[1].values[:, 0], z[0].values[:, 0]).pvalue, rel_tol=1e-9
    )
    assert math.isclose(c.mean_difference, diff.mean(), abs_tol=1e-12)


def test_metric_identity():
    m = irspec.parse("P@2")
    assert StandardizedMetric.of(m) == StandardizedMetric.of(m)
    assert StandardizedMetric.of(m) != m and StandardizedMetric.of(m) != StandardizedMetric.of(m, cdf=True)
    assert StandardizedMetric.of(m).trec_name == "P_2"


def test_cli_write_z_then_read_it(tmp_path, capsys):
    demo = Path(__file__).parent.parent / "specs" / "demo"
    runs = [str(demo / "runs" / f"{n}.run") for n in ("bm25", "dense", "hybrid")]
    z = tmp_path / "z.txt"
    assert (
        main(
            [
                "eval",
                str(demo / "qrels.txt"),
                *runs,
                "-m",
                "nDCG@10",
                "--standardize",
                "-f",
                "json",
                "--write-z",
                str(z),
            ]
        )
        == 0
    )
    direct = capsys.readouterr().out
    assert main(["eval", str(demo / "qrels.txt"), *runs, "-m", "nDCG@10", "-Z", str(z), "-f", "json"]) == 0
    via_file = capsys.readouterr().out
    import json

    a, b = json.loads(direct), json.loads(via_file)
    assert [r["aggregate"] for r in a["runs"]] == [r["aggregate"] for r in b["runs"]]
    assert a["metrics"] == ["z(nDCG@10)"]
    assert a["runs"][0]["tables"][0]["title"] == "Standardized scores"


def test_cli_errors(tmp_path, capsys):
    demo = Path(__file__).parent.parent / "specs" / "demo"
    bad = tmp_path / "z.txt"
    bad.write_text("q01 ndcg_cut_10 0.5\n")
    assert (
        main(
            [
                "eval",
                str(demo / "qrels.txt"),
                str(demo / "runs" / "bm25.run"),
                "-m",
                "nDCG@10",
                "-Z",
                str(bad),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(f"irspec: error: {bad}:1: expected 4 fields") and err.count("\n") == 1
    assert main(["eval", str(demo / "qrels.txt"), str(demo / "runs" / "bm25.run"), "--z-cdf"]) == 2
    assert "--z-cdf maps z-scores" in capsys.readouterr().err
