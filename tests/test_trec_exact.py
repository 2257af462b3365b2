"""trec_eval 10 to the last printed digit: the rules behind values on a rounding boundary.

Every expected value here is trec_eval's rule written out in plain Python floats (a C loop's order of
operations), or trec_eval's printed output for the case; none comes from irspec.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import irspec
from irspec.cli import main
from irspec.evaluation.means import aggregate_columns, aggregate_values


def _write(tmp_path, qrels: dict[str, dict[str, int]], run: dict[str, list[str]]) -> tuple[str, str]:
    """Qrels and a run file (documents ranked in list order, query blocks in the dict's order)."""
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("".join(f"{qid} 0 {d} {lab}\n" for qid, docs in qrels.items() for d, lab in docs.items()))
    r.write_text(
        "".join(
            f"{qid} Q0 {d} {i + 1} {1000 - i} r\n" for qid, docs in run.items() for i, d in enumerate(docs)
        )
    )
    return str(q), str(r)


def _trec(capsys, *args: str) -> dict[tuple[str, str], str]:
    assert main(["eval", "--format", "trec", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    return {(name.strip(), qid): value for name, qid, value in (line.split("\t") for line in lines)}


def _c_sum(values) -> float:
    total = 0.0  # trec_eval's accumulator: one double, added to query after query
    for v in values:
        total += v
    return total


# --- the summary mean ---------------------------------------------------------------------------


def test_summary_mean_adds_queries_left_to_right_in_id_order(tmp_path, capsys):
    # 8 queries with 20, 12, 6, 3, 15, 0, 12, 13 relevant documents in their top 20: P_20 is k/20.
    # Added left to right in query-id order and divided by 8 this is 0.50625 - a hair above, so
    # trec_eval prints 0.5063; numpy's mean (and math.fsum) land a hair below and print 0.5062.
    counts = [20, 12, 6, 3, 15, 0, 12, 13]
    qids = [f"q{i}" for i in range(8)]
    qrels = {q: {f"d{j}": int(j < k) for j in range(20)} for q, k in zip(qids, counts, strict=True)}
    run = {q: [f"d{j}" for j in range(20)] for q in reversed(qids)}  # file order is not the sum's order
    expected = _c_sum(k / 20 for k in counts) / 8
    assert f"{expected:6.4f}" == "0.5063"
    assert f"{float(np.mean([k / 20 for k in counts])):6.4f}" == "0.5062"  # why the rule matters
    out = _trec(capsys, "-m", "P.20", *_write(tmp_path, qrels, run))
    assert out[("P_20", "all")] == "0.5063"
    for fmt in ("json", "csv"):  # the mean does not depend on the output format
        assert main(["eval", "--format", fmt, "-m", "P@20", *_write(tmp_path, qrels, run)]) == 0
        assert repr(expected) in capsys.readouterr().out


def test_aggregate_values_is_the_sequential_sum_over_n():
    rng = np.random.default_rng(7)
    for n in (1, 2, 9, 17, 1000, 5001):
        v = rng.integers(0, 1001, n) / rng.integers(1, 1001, n)
        assert aggregate_values(v, "mean") == _c_sum(v.tolist()) / n
        assert aggregate_values(v, "sum") == _c_sum(v.tolist())


def test_a_mean_of_values_none_defined_is_undefined_and_of_no_values_zero():
    # values, every one NaN (SL(unfound=skip) where no query finds a relevant document): no number is
    # the mean of nothing defined; 0.0 would rank a lower-is-better run first. No values at all (no
    # query evaluated): 0.0, as trec_eval prints a measure's mean over 0 queries (num_q 0, map 0.0000).
    undefined = np.array([np.nan, np.nan])
    for how in ("mean", "sum", "gmean"):
        assert math.isnan(aggregate_values(undefined, how))
        assert aggregate_values(np.array([]), how) == 0.0
    found = aggregate_columns(np.array([[np.nan, 0.5], [np.nan, 0.25]]), ["mean", "mean"])
    assert math.isnan(found[0]) and found[1] == 0.375
    assert aggregate_columns(np.empty((0, 2)), ["mean", "sum"]) == [0.0, 0.0]


def test_a_results_columns_aggregated_at_once_are_each_the_c_loops():
    # A result's means in one pass down its columns (aggregate_columns) must be what trec_eval's loop
    # adds for each column alone; NaN (skipped), sums, geometric means and texts keep their own rules.
    rng = np.random.default_rng(8)
    hows = ["mean", "sum", "gmean", "none", "mean", "mean"]
    for n in (0, 1, 2, 9, 17, 1000):
        values = rng.integers(0, 1001, (n, len(hows))) / rng.integers(1, 1001, (n, len(hows)))
        if n > 1:
            values[1, 4] = np.nan
        found = aggregate_columns(values, hows)
        for j in (0, 5):
            assert found[j] == (_c_sum(values[:, j].tolist()) / n if n else 0.0)
        assert found[1] == _c_sum(values[:, 1].tolist())
        kept = [v for v in values[:, 4].tolist() if not math.isnan(v)]
        assert found[4] == (_c_sum(kept) / len(kept) if kept else 0.0)
        assert found[2] == aggregate_values(values[:, 2], "gmean")
        assert math.isnan(found[3])


def test_geometric_mean_sums_logs_left_to_right():
    v = np.array([0.3, 0.0, 0.71, 1e-7, 0.5, 0.25, 0.9, 0.11, 0.42, 0.05])
    expected = math.exp(_c_sum(math.log(max(x, 0.00001)) for x in v) / len(v))  # trec_eval's MIN_GEO_MEAN
    assert aggregate_values(v, "gmean") == expected


# --- per-query values ---------------------------------------------------------------------------


def test_set_map_is_relret_squared_over_ret_times_rel(tmp_path, capsys):
    # 10 retrieved, 3 of them relevant, 16 relevant: trec_eval's rr*rr/(ret*rel) is 9/160, the double
    # nearest 0.05625, and prints 0.0563 (trec_eval 10 does); (3/10)*(3/16) lands a hair below: 0.0562.
    qrels = {"1": {f"r{j}": 1 for j in range(16)}}
    run = {"1": ["r0", "r1", "r2"] + [f"n{j}" for j in range(7)]}
    assert f"{3.0 * 3.0 / (10.0 * 16.0):6.4f}" == "0.0563"
    assert f"{(3 / 10) * (3 / 16):6.4f}" == "0.0562"
    out = _trec(capsys, "-q", "-m", "set_map", *_write(tmp_path, qrels, run))
    assert out[("set_map", "1")] == "0.0563"
    assert (
        irspec.evaluate(qrels, {"1": {d: -i for i, d in enumerate(run["1"])}}, "set_map").aggregate()["SetAP"]
        == 9.0 / 160.0
    )


def _c_set_f(x: float, rel_ret: int, ret: int, rel: int) -> float:
    p, r = rel_ret / ret, rel_ret / rel  # m_set_F.c: (x + 1) P R / (x P + R), x as atof reads it
    return (x + 1.0) * p * r / (x * p + r)


@pytest.mark.parametrize("x", ["2.5", "0.5", "3", "2", "0.25", "4", "1.7", "0.123", "7.25", "10"])
def test_set_f_takes_x_as_written_not_the_square_of_its_root(tmp_path, capsys, x):
    # set_F.x is F with beta² = x; irspec reads it as F(beta=√x), and (√2.5)² is 2.5000000000000004: with
    # 1 of 6 relevant documents retrieved alone, trec_eval's F is a hair below 0.21875 and prints 0.2187
    # (trec_eval 10 does), where that x printed 0.2188
    assert (
        f"{_c_set_f(2.5, 1, 1, 6):6.4f}" == "0.2187"
        and f"{_c_set_f(2.5000000000000004, 1, 1, 6):6.4f}" == "0.2188"
    )
    qrels = {f"q{rel}": {f"r{j}": 1 for j in range(rel)} for rel in (1, 2, 6, 30)}
    run = {
        f"q{rel}": ["r0"] + [f"n{j}" for j in range(ret - 1)]
        for rel, ret in ((1, 3), (2, 1), (6, 1), (30, 1))
    }
    out = _trec(capsys, "-q", "-m", f"set_F.{x}", *_write(tmp_path, qrels, run))
    for rel, ret in ((1, 3), (2, 1), (6, 1), (30, 1)):
        assert out[(f"set_F_{x}", f"q{rel}")] == f"{_c_set_f(float(x), 1, ret, rel):6.4f}", (x, rel)
    ranked = {q: {d: -i for i, d in enumerate(docs)} for q, docs in run.items()}
    values = irspec.evaluate(qrels, ranked, f"set_F.{x}").per_query()
    assert [next(iter(v.values())) for _, v in sorted(values.items())] == [
        _c_set_f(float(x), 1, ret, rel) for rel, ret in ((1, 3), (2, 1), (30, 1), (6, 1))
    ]


def test_interpolated_precision_is_one_of_the_quotients_exactly_with_many_queries():
    # Relevant documents at ranks 154-160 of 160: IPrec at every recall point is max_j j/(153+j) =
    # 7/160, which prints 0.0437; any arithmetic on it (lifting segments apart) can flip it to 0.0438.
    nq = 3000
    docs = [f"d{i:03d}" for i in range(160)]
    qrels = {f"q{i:04d}": dict.fromkeys(docs[153:], 1) for i in range(nq)}
    run = {q: {d: 160.0 - j for j, d in enumerate(docs)} for q in qrels}
    res = irspec.evaluate(qrels, run, "IPrec@1.0, IPrec@0.5, 11pt")
    assert f"{7 / 160:6.4f}" == "0.0437"
    assert (res.column("IPrec@1") == 7 / 160).all()
    assert (res.column("IPrec@0.5") == 7 / 160).all()
    # 11pt_avg: trec_eval adds the points from the last to the first, then divides by 11.
    assert (res.column("11pt") == _c_sum([7 / 160] * 11) / 11).all()


def test_eleven_point_sums_points_from_the_last():
    # 12 retrieved, the relevant ones at ranks 1-9 and 11 (R = 10).
    ranking = [f"r{i}" for i in range(1, 10)] + ["x1", "r10", "x2"]
    qrels = {"1": {f"r{i}": 1 for i in range(1, 11)}}
    run = {"1": {d: float(len(ranking) - i) for i, d in enumerate(ranking)}}
    rel_ranks = [i + 1 for i, d in enumerate(ranking) if d in qrels["1"]]
    prec = [(j + 1) / r for j, r in enumerate(rel_ranks)]
    iprec = []
    for x in [i / 10 for i in range(11)]:
        c = round(x * 10)  # x*10 is never half-way here, so lround and round agree
        iprec.append(max(prec[max(c - 1, 0) :]))
    expected = _c_sum(reversed(iprec)) / 11
    assert _c_sum(iprec) / 11 != expected  # the order shows in the last bit for this ranking
    assert irspec.evaluate(qrels, run, "11pt").aggregate()["11pt"] == expected


def test_rbp_resid_uses_the_running_product(tmp_path):
    # trec_eval: cur_p starts at 1 and is multiplied by p at each rank; the residual is
    # cur_p (after n ranks) + (1 - p) * (the sum of cur_p at the unjudged ranks).
    p, n = 0.9, 60
    unjudged = [i for i in range(n) if i % 3 == 0]
    qrels = {"1": {f"d{i}": i % 2 for i in range(n) if i not in unjudged}}
    run = {"1": {f"d{i}": float(n - i) for i in range(n)}}
    cur, total = 1.0, 0.0
    for i in range(n):
        if i in unjudged:
            total += cur
        cur *= p
    expected = cur + (1 - p) * total
    powers = p ** float(n) + _c_sum((1 - p) * p ** float(i) for i in unjudged)
    assert powers != expected  # the power form differs from the C loop in the last bit here
    assert irspec.evaluate(qrels, run, "rbp_resid").aggregate()["rbp_resid"] == expected


# --- printed names and flags (as trec_eval 10 prints them) ---------------------------------------


@pytest.mark.parametrize(
    ("measure", "printed", "canonical"),
    [
        ("utility.1,-1,-2,0.5", "utility_1,-1,-2,0.5", "utility(c=-2,d=0.5)"),
        ("ndcg.1=1.0,2=3", "ndcg_1=1.0,2=3", "nDCG(gains={1:1,2:3})"),
        ("set_F.2", "set_F_2", "F(beta=1.4142135623730951)"),
        ("set_F.0.25,2", "set_F_0.25,2", "F(beta=0.5)"),  # trec_eval uses the first value only
        ("set_F.1.0", "set_F_1.0", "F"),
        ("11pt_avg.0.2,.5,.8", "11pt_avg_0.2,.5,.8", "11pt(points=[0.2,0.5,0.8])"),
        ("P.05,10.0", "P_5", "P@5"),  # a cutoff list is printed formatted, one measure each
        ("map_cut.0005", "map_cut_5", "AP@5"),
        ("Rprec_mult.0.5", "Rprec_mult_0.50", "Rprec(mult=0.5)"),
        ("dcg", "dcg", "DCG"),  # trec_eval 10 prints dcg and ideal_dcg by the names they are asked by
        ("ideal_dcg", "ideal_dcg", "IDCG"),
    ],
)
def test_trec_names_are_printed_as_trec_eval_prints_them(measure, printed, canonical):
    first = irspec.parse_many([measure], trec=True)[0]
    assert first.trec_name == printed
    assert str(first) == canonical  # the canonical text (other formats) is unchanged


@pytest.mark.parametrize(
    ("measure", "printed"),
    [
        ("dcg.0=8,3=5", ["dcg_0=8,3=5           \tq0\t11.1546", "dcg_0=8,3=5           \tq1\t1.2619",
                         "dcg_0=8,3=5           \tall\t6.2083"]),
        ("ideal_dcg.0=8,3=5", ["ideal_dcg_0=8,3=5     \tq0\t11.1546", "ideal_dcg_0=8,3=5     \tq1\t2.0000",
                               "ideal_dcg_0=8,3=5     \tall\t6.5773"]),
    ],
)  # fmt: skip
def test_dcg_and_ideal_dcg_take_trec_eval_s_gain_maps(tmp_path, capsys, measure, printed):
    # trec_eval 10 printed these lines for -c -q -m MEASURE on these files (one measure a run: given both
    # gain maps at once it aborts with a double free); a gain for level 0 counts in the ideal ranking too
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("q0 0 d0 0\nq0 0 d1 3\nq1 0 d2 2\n")
    r.write_text("q0 Q0 d0 1 1 r\nq0 Q0 d1 2 0.5 r\nq1 Q0 d9 1 1 r\nq1 Q0 d2 2 0.5 r\n")
    assert main(["eval", "--format", "trec", "-c", "-q", "-m", measure, str(q), str(r)]) == 0
    assert capsys.readouterr().out.splitlines() == printed


def test_runid_prints_trec_eval_s_runid_line(tmp_path, capsys):
    # trec_eval 10 prints "runid all r" before P_5 for -m runid -m P.5 (its runid is a line, not a measure)
    files = _write(tmp_path, {"1": {"a": 1, "b": 0}}, {"1": ["a", "b", "c"]})
    assert main(["eval", "--format", "trec", "-m", "runid", "-m", "P.5", *files]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "runid                 \tall\tr",
        "P_5                   \tall\t0.2000",
    ]
    assert main(["eval", "--format", "trec", "-m", "runid", *files]) == 2
    assert "ask for a measure too" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["-m", "P.5", "-m", "P.10"], ["P_5"]),
        (["-m", "P", "-m", "P.5"], ["P_5"]),
        (["-m", "P.5", "-m", "P"], ["P_5"]),
        (["-m", "ndcg_cut.5", "-m", "ndcg_cut"], ["ndcg_cut_5"]),
        (["-m", "utility.1,0,0,0", "-m", "utility.2,0,0,0"], ["utility_1,0,0,0"]),
    ],
)
def test_the_first_parameter_list_of_a_measure_wins(tmp_path, capsys, args, printed):
    files = _write(tmp_path, {"1": {"a": 1, "b": 0}}, {"1": ["a", "b", "c"]})
    assert [name for name, _ in _trec(capsys, *args, *files)] == printed


def test_level_zero_counts_every_judged_document(tmp_path, capsys):
    files = _write(tmp_path, {"1": {"a": 0, "b": 1, "c": -1, "d": 0}}, {"1": ["a", "x", "b", "c", "d"]})
    out = _trec(capsys, "-l", "0", "-m", "P.5", "-m", "num_rel", "-m", "num_rel_ret", *files)
    # a, b and d are judged (labels >= 0): all three relevant at level 0; c (-1) and x are not.
    assert out == {("num_rel", "all"): "3", ("num_rel_ret", "all"): "3", ("P_5", "all"): f"{3 / 5:6.4f}"}


def test_depth_zero_empties_every_ranking(tmp_path, capsys):
    files = _write(tmp_path, {"1": {"a": 1}}, {"1": ["a", "b"]})
    out = _trec(capsys, "-M", "0", "-m", "P.10", "-m", "num_ret", *files)
    assert out == {("num_ret", "all"): "0", ("P_10", "all"): "0.0000"}


def test_negative_level_is_refused(tmp_path, capsys):
    files = _write(tmp_path, {"1": {"a": 1}}, {"1": ["a"]})
    assert main(["eval", "-l", "-1", "-m", "P.10", *files]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irspec: error: relevance_level must be an integer >= 0") and err.count("\n") == 1
