"""Parquet out (``--format parquet``, plans' ``{format: parquet}``) and in (qrels and runs as Parquet
files, read without going through text)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import polars as pl
import pytest
from cli_run import irspec_cli
from randomdata import random_case

import irspec
from irspec.cli import build_parser, main
from irspec.report import FORMATS

SPECS = ["nDCG@10", "AP", "P@5", "SL(unfound=skip)", "relstring@5", "num_q", "gm_map"]


def write_trec(tmp_path: Path, qrels: dict, run: dict, runid: str = "sys") -> tuple[Path, Path]:
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(
        "".join(f"{qid} 0 {d} {label}\n" for qid, docs in qrels.items() for d, label in docs.items())
    )
    r.write_text(
        "".join(
            f"{qid} Q0 {d} {i} {score!r} {runid}\n"
            for qid, docs in run.items()
            for i, (d, score) in enumerate(docs.items())
        )
    )
    return q, r


def same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and type(a) is type(b)


def in_file(value: object) -> object:
    """A value as the Parquet output holds it: an undefined one (NaN) is null, as in ``to_frame``."""
    return None if isinstance(value, float) and math.isnan(value) else value


# --------------------------------------------------------------------------------------------------
# Out


@pytest.mark.parametrize("seed", [3, 11])
def test_per_query_parquet_reads_back_as_the_result(tmp_path, seed):
    qrels, run = random_case(seed)
    qrels["zz"], run["zz"] = {"found": 0, "lost": 1}, {"found": 1.0}  # SL(unfound=skip): NaN
    q, r = write_trec(tmp_path, qrels, run)
    out = tmp_path / "per_query.parquet"
    assert (
        main(
            [
                "eval",
                str(q),
                str(r),
                *(arg for s in SPECS for arg in ("-m", s)),
                "-q",
                "--format",
                "parquet",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    expected = irspec.evaluate(str(q), str(r), SPECS)
    df = pl.read_parquet(out)
    assert df.columns == ["run", "query_id", "metric", "value", "text"]
    assert df.schema["value"] == pl.Float64 and df.schema["query_id"] == pl.String
    per_query = df.filter(pl.col("query_id").is_not_null())
    got: dict[str, dict[str, object]] = {}
    for run_name, qid, metric, value, text in per_query.iter_rows():
        assert run_name == "run"  # the file's stem (its runid is sys)
        assert value is None or text is None  # never both
        got.setdefault(qid, {})[metric] = text if text is not None else value
    want = expected.per_query()
    assert list(got) == list(want)  # the result's query order
    for qid in want:
        assert list(got[qid]) == list(want[qid])
        assert all(same(in_file(want[qid][m]), got[qid][m]) for m in want[qid]), qid
    # SL(unfound=skip) leaves a query out: NaN in the result, null in the file
    assert math.isnan(want["zz"]["SL(unfound=skip)"]) and got["zz"]["SL(unfound=skip)"] is None
    aggregate = df.filter(pl.col("query_id").is_null())
    assert aggregate["metric"].to_list() == list(expected.aggregate())
    assert all(same(in_file(v), aggregate["value"][i]) for i, v in enumerate(expected.aggregate().values()))
    assert per_query.drop("text").equals(expected.to_frame().drop("text"))  # Result.to_frame's rows


def test_without_q_only_the_aggregates_are_written(tmp_path):
    q, r = write_trec(tmp_path, *random_case(5))
    out = tmp_path / "agg.parquet"
    assert (
        main(["eval", str(q), str(r), "-m", "AP", "-m", "P@10", "--format", "parquet", "-o", str(out)]) == 0
    )
    df = pl.read_parquet(out)
    expected = irspec.evaluate(str(q), str(r), ["AP", "P@10"]).aggregate()
    assert df.rows() == [("run", None, m, v, None) for m, v in expected.items()]


def test_two_runs_write_their_rows_one_after_the_other(tmp_path):
    q, r = write_trec(tmp_path, *random_case(7))
    r2 = tmp_path / "other.txt"
    r2.write_text(r.read_text().replace(" sys\n", " other\n"))
    out = tmp_path / "two.parquet"
    assert (
        main(["eval", str(q), str(r), str(r2), "-m", "AP", "-q", "--format", "parquet", "-o", str(out)]) == 0
    )
    runs = pl.read_parquet(out)["run"]
    assert runs.unique(maintain_order=True).to_list() == ["run", "other"]
    assert runs.value_counts().sort("run")["count"].to_list() == [len(runs) // 2] * 2


def test_parquet_to_a_terminal_is_refused(tmp_path, capsys):
    q, r = write_trec(tmp_path, *random_case(1))
    assert main(["eval", str(q), str(r), "-m", "AP", "--format", "parquet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "irspec: error: --format parquet writes a binary file, not text: give -o FILE\n"


def test_parquet_output_is_atomic(tmp_path, capsys):
    q, r = write_trec(tmp_path, *random_case(1))
    out = tmp_path / "old.parquet"
    out.write_bytes(b"previous")
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 nan x\n")
    assert main(["eval", str(q), str(r), str(bad), "-m", "AP", "--format", "parquet", "-o", str(out)]) == 2
    assert "NaN score" in capsys.readouterr().err
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "old.parquet", "qrels.txt", "run.txt"]


def test_the_cli_offers_every_report_format():
    action = next(
        a for a in build_parser()._subparsers._group_actions[0].choices["eval"]._actions if a.dest == "format"
    )
    assert tuple(action.choices) == FORMATS


def test_a_plan_writes_parquet(tmp_path):
    q, r = write_trec(tmp_path, *random_case(9))
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        textwrap.dedent(
            f"""\
            qrels: {q.name}
            runs: [{{name: mine, path: {r.name}}}]
            metrics: [AP, relstring@3]
            output:
              - {{format: parquet, path: out/results.parquet}}
            """
        )
    )
    assert main(["run", str(plan)]) == 0
    df = pl.read_parquet(tmp_path / "out" / "results.parquet")
    want = irspec.evaluate(str(q), str(r), ["AP", "relstring@3"]).per_query()
    rows = df.filter(pl.col("query_id").is_not_null())
    assert rows.height == 2 * len(want)  # per query by default, as json and csv
    assert set(rows["run"]) == {"mine"}
    texts = rows.filter(pl.col("metric") == "relstring@3")
    assert dict(zip(texts["query_id"], texts["text"], strict=True)) == {
        k: v["relstring@3"] for k, v in want.items()
    }


def test_a_plan_parquet_output_needs_a_path(tmp_path, capsys):
    q, r = write_trec(tmp_path, *random_case(9))
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"qrels: {q.name}\nruns: [{r.name}]\nmetrics: [AP]\noutput:\n  - {{format: parquet}}\n")
    assert main(["validate", str(plan)]) == 2
    err = capsys.readouterr().err
    assert "output[0]" in err and "path" in err


# --------------------------------------------------------------------------------------------------
# In


def long(d: dict, value: str) -> dict[str, list]:
    """``{qid: {docno: value}}`` as columns query, docno, value (in the dict's order)."""
    rows = [(q, doc, v) for q, docs in d.items() for doc, v in docs.items()]
    return {"q": [r[0] for r in rows], "d": [r[1] for r in rows], value: [r[2] for r in rows]}


def write_parquet(path: Path, columns: dict[str, list], schema: dict | None = None) -> Path:
    pl.DataFrame(columns, schema=schema).write_parquet(path)
    return path


NAMES = {  # (query, docno, label) of each convention
    "ir_measures": ("query_id", "doc_id", "relevance"),
    "pyterrier": ("qid", "docno", "label"),
}


@pytest.mark.parametrize("convention", sorted(NAMES))
@pytest.mark.parametrize(("seed", "near_ties"), [(2, False), (8, True), (21, True)])
def test_parquet_evaluates_as_the_same_trec_text(tmp_path, convention, seed, near_ties):
    """A differential test: the same judgments and scores in TREC text and in Parquet give identical
    per-query values and aggregates; the run is named by its file, its runid is its run column. Near ties (doubles one
    float apart) would rank differently if a reader lost precision."""
    qrels, run = random_case(seed, near_ties=near_ties)
    q_txt, r_txt = write_trec(tmp_path, qrels, run, runid="bm25")
    query, docno, label = NAMES[convention]
    lq, lr = long(qrels, "label"), long(run, "score")
    q_pq = write_parquet(tmp_path / "qrels.parquet", {query: lq["q"], docno: lq["d"], label: lq["label"]})
    r_pq = write_parquet(
        tmp_path / "run.parquet",
        {
            query: lr["q"],
            docno: lr["d"],
            "rank": list(range(len(lr["q"]))),
            "score": lr["score"],
            "run": ["bm25"] * len(lr["q"]),
        },
    )
    specs = "official, nDCG@10, relstring@5, SL(unfound=skip)"
    text = irspec.evaluate(str(q_txt), str(r_txt), specs)
    parquet = irspec.evaluate(str(q_pq), str(r_pq), specs)
    assert (parquet.run_name, parquet.runid) == (text.run_name, text.runid) == ("run", "bm25")
    assert parquet.query_ids == text.query_ids
    assert parquet.values.tobytes() == text.values.tobytes()  # bit for bit, NaN included
    assert parquet.texts == text.texts
    assert parquet.aggregate().keys() == text.aggregate().keys()
    assert all(
        same(a, b) for a, b in zip(parquet.aggregate().values(), text.aggregate().values(), strict=True)
    )


def test_parquet_on_the_command_line_and_in_a_plan(tmp_path, capsys):
    qrels, run = (
        {"1": {"a": 1, "b": 0}, "2": {"c": 2}},
        {"1": {"a": 0.5, "b": 0.9}, "2": {"c": 0.1, "x": 0.2}},
    )
    lq, lr = long(qrels, "label"), long(run, "score")
    # integer query ids, an unsigned label type, float32 scores: read as "1", 1 and the float32's value
    write_parquet(
        tmp_path / "q.parquet",
        {"qid": [1, 1, 2], "docno": lq["d"], "label": lq["label"]},
        {"qid": pl.Int32, "docno": pl.String, "label": pl.UInt8},
    )
    write_parquet(
        tmp_path / "sys.parquet",
        {"qid": ["1", "1", "2", "2"], "docno": lr["d"], "score": lr["score"]},
        {"qid": pl.String, "docno": pl.String, "score": pl.Float32},
    )
    assert (
        main(
            [
                "eval",
                str(tmp_path / "q.parquet"),
                str(tmp_path / "sys.parquet"),
                "-m",
                "P@1",
                "-q",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    # P@1: query 1 ranks b (0.9, label 0) first -> 0; query 2 ranks x (0.2, unjudged) first -> 0 ... and
    # the mean is 0; the run is named after its file, as a TREC file without a runid column
    assert capsys.readouterr().out.splitlines() == [
        "run,query,metric,value",
        "sys,1,P@1,0.0",
        "sys,2,P@1,0.0",
        "sys,all,P@1,0.0",
    ]
    plan = tmp_path / "plan.yaml"
    plan.write_text("qrels: q.parquet\nruns: [sys.parquet]\nmetrics: [R@2]\noutput:\n  - {format: csv}\n")
    assert main(["run", str(plan)]) == 0
    # R@2: query 1 retrieves a (its one relevant) in the top 2 -> 1; query 2 retrieves c -> 1
    assert capsys.readouterr().out.splitlines()[1:] == ["sys,1,R@2,1.0", "sys,2,R@2,1.0", "sys,all,R@2,1.0"]


def bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, columns: dict, schema: dict | None = None
) -> tuple[int, str]:
    """Exit code and standard error of ``irspec eval`` with one bad Parquet file (in this process: a
    traceback would be this test's exception)."""
    good_q = write_parquet(
        tmp_path / "good_q.parquet", {"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]}
    )
    good_r = write_parquet(
        tmp_path / "good_r.parquet", {"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}
    )
    bad = write_parquet(tmp_path / f"bad_{kind}.parquet", columns, schema)
    args = [str(bad), str(good_r)] if kind == "qrels" else [str(good_q), str(bad)]
    p = irspec_cli(capsys, "eval", *args, "-m", "AP")
    return p.returncode, p.stderr


@pytest.mark.parametrize(
    ("kind", "columns", "schema", "message"),
    [
        (
            "run",
            {
                "qid": ["q1", "q1", "q2", "q1"],
                "docno": ["d1", "d2", "d1", "d1"],
                "score": [3.0, 2.0, 1.0, 0.5],
            },
            None,
            "bad_run.parquet: row 3: query 'q1': duplicate docno 'd1' (first on row 0)",
        ),
        (
            "run",
            {"qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": [1.0, float("nan")]},
            None,
            "bad_run.parquet: row 1: query 'q1': NaN score for docno 'd2'",
        ),
        (
            "run",
            {"qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": [1.0, float("-inf")]},
            None,
            "bad_run.parquet: row 1: query 'q1': infinite score -inf (scores must be finite; a number beyond ±1.8e308 reads as infinite) for docno 'd2'",
        ),
        (
            "run",
            {"qid": ["q1", "q1"], "docno": ["d1", None], "score": [1.0, 2.0]},
            None,
            "bad_run.parquet: missing docno in row 1",
        ),
        (
            "run",
            {"qid": ["q1"], "docno": ["d1"], "score": ["high"]},
            None,
            "bad_run.parquet: column 'score' must hold numbers, not String",
        ),
        (
            "run",
            {"qid": ["q1"], "docno": ["d1"], "rank": [1]},
            None,
            "bad_run.parquet: no score column: the columns are 'qid', 'docno', 'rank'; expected query_id, doc_id, score "
            "(ir_measures); qid, docno, score (PyTerrier), or names given by columns={'query': ..., 'docno': ..., 'score': ...}",
        ),
        (
            "run",
            {"qid": ["q1"], "query_id": ["q1"], "docno": ["d1"], "score": [1.0]},
            None,
            "bad_run.parquet: both 'query_id' and 'qid' could be the query id columns; say which with columns={'query': ...}",
        ),
        (
            "run",
            {"qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": [1.0, 2.0], "run": ["a", "b"]},
            None,
            "bad_run.parquet: column 'run' names 2 runs ('a', 'b'): one run per file",
        ),
        (
            "qrels",
            {"query_id": ["q1", "q1", "q1"], "doc_id": ["d1", "d2", "d3"], "relevance": [1.0, 0.0, 1.5]},
            None,
            "bad_qrels.parquet: query 'q1': row 2: label must be an integer, got 1.5 for docno 'd3'",
        ),
        (
            "qrels",
            {"qid": ["q1"], "docno": ["d1"], "label": ["1"]},
            None,
            "bad_qrels.parquet: column 'label' must hold integers, not String",
        ),
        (
            "qrels",
            {"qid": ["q1", "q1"], "docno": ["d1", "d2"], "label": [1, None]},
            None,
            "bad_qrels.parquet: query 'q1': row 1: missing label for docno 'd2'",
        ),
        (
            "qrels",
            {"qid": [1.5], "docno": ["d1"], "label": [1]},
            None,
            "bad_qrels.parquet: column 'qid' must hold strings (or integers), not Float64",
        ),
        (
            "qrels",
            {"qid": ["q1"], "docno": ["d1"], "label": [2**63]},
            {"qid": pl.String, "docno": pl.String, "label": pl.UInt64},
            "bad_qrels.parquet: query 'q1': row 0: label 9223372036854775808 is out of range (labels are 64-bit "
            "integers, -9223372036854775808 to 9223372036854775807) for docno 'd1'",
        ),
    ],
)
def test_bad_parquet_is_a_located_error(tmp_path, capsys, kind, columns, schema, message):
    """The errors of the DataFrame reader (a Parquet file is read as a LazyFrame) and of the checks every
    input goes through, with the file's name, and rows (0-based) for lines."""
    code, err = bad_input(tmp_path, capsys, kind, columns, schema)
    assert code == 2
    assert err.startswith("irspec: error: ") and err.count("\n") == 1, err  # one line, no traceback
    assert err.strip().endswith(message), err


def test_a_damaged_parquet_file_is_an_error_naming_it(tmp_path, capsys):
    good = write_parquet(tmp_path / "run.parquet", {"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    damaged = tmp_path / "damaged.parquet"
    data = good.read_bytes()
    damaged.write_bytes(
        data[:8] + b"\x00" * (len(data) - 12) + data[-4:]
    )  # PAR1 ... PAR1, nothing sound between
    qrels = write_parquet(tmp_path / "q.parquet", {"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
    assert main(["eval", str(qrels), str(damaged), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"irspec: error: {damaged}: cannot read as Parquet: ") or err.startswith(
        f"irspec: error: {damaged}: cannot read: "
    ), err


def test_a_text_file_that_starts_with_par1_is_text(tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("PAR1 0 d1 1\n")
    r.write_text("PAR1 Q0 d1 1 2.0 PAR1\n")  # starts and ends (but for the newline) with PAR1
    assert irspec.evaluate(str(q), str(r), "P@1").per_query() == {"PAR1": {"P@1": 1.0}}


class ArrowStream:
    """Arrow data as a pyarrow RecordBatchReader or a database cursor offers it: the Arrow PyCapsule
    stream interface, here over a polars frame so that the test needs no pyarrow, and iteration (over
    batches), which must not make it taken for an iterable of named tuples."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self._frame = frame

    def __iter__(self):
        return iter([self._frame])

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._frame.__arrow_c_stream__(requested_schema)


def test_arrow_data_evaluates_as_the_same_trec_text(tmp_path):
    qrels, run = random_case(4)
    q_txt, r_txt = write_trec(tmp_path, qrels, run, runid="dense")
    lq, lr = long(qrels, "label"), long(run, "score")
    q_arrow = ArrowStream(pl.DataFrame({"qid": lq["q"], "docno": lq["d"], "label": lq["label"]}))
    r_arrow = ArrowStream(
        pl.DataFrame(
            {"query_id": lr["q"], "doc_id": lr["d"], "score": lr["score"], "run": ["dense"] * len(lr["q"])}
        )
    )
    text = irspec.evaluate(str(q_txt), str(r_txt), "official")
    arrow = irspec.evaluate(q_arrow, r_arrow, "official")
    assert (arrow.run_name, arrow.run_source) == ("dense", "<Arrow>")
    assert arrow.query_ids == text.query_ids and arrow.values.tobytes() == text.values.tobytes()


def test_bad_arrow_data_names_the_row(tmp_path):
    bad = ArrowStream(pl.DataFrame({"qid": ["q1", "q1"], "docno": ["d1", "d1"], "score": [1.0, 2.0]}))
    with pytest.raises(
        irspec.InputError, match=r"^<Arrow>: row 1: query 'q1': duplicate docno 'd1' \(first on row 0\)$"
    ):
        irspec.evaluate({"q1": {"d1": 1}}, bad, "AP")


def test_a_parquet_run_is_never_streamed_as_text(tmp_path):
    """The streaming engine reads text in blocks; a Parquet run of any size is read whole, by columns,
    even when the blocks asked for are tiny, and gives the in-memory values."""
    from irspec.data.stream import open_run

    qrels, run = random_case(6)
    q_txt, r_txt = write_trec(tmp_path, qrels, run, runid="x")
    lr = long(run, "score")
    r_pq = write_parquet(
        tmp_path / "run.parquet",
        {"qid": lr["q"], "docno": lr["d"], "score": lr["score"], "run": ["x"] * len(lr["q"])},
    )
    opened = open_run(str(r_pq), block_bytes=64)
    assert isinstance(opened, irspec.data.Run) and len(opened) == len(lr["q"])
    text = irspec.evaluate(str(q_txt), str(r_txt), "official")
    parquet = irspec.evaluate(str(q_txt), str(r_pq), "official", memory="1MiB")
    assert parquet.values.tobytes() == text.values.tobytes() and parquet.query_ids == text.query_ids


def test_read_run_and_read_qrels_take_a_parquet_files_own_column_names(tmp_path):
    """``columns=`` names a Parquet file's columns as it names a DataFrame's; the values are those of the
    same judgments and scores in TREC text (a differential test against the text reader)."""
    qrels, run = random_case(7)
    q_txt, r_txt = write_trec(tmp_path, qrels, run)
    lq, lr = long(qrels, "label"), long(run, "score")
    q_pq = write_parquet(tmp_path / "q.parquet", {"topic": lq["q"], "doc": lq["d"], "grade": lq["label"]})
    r_pq = write_parquet(tmp_path / "r.parquet", {"topic": lr["q"], "doc": lr["d"], "sim": lr["score"]})
    q = irspec.read_qrels(str(q_pq), columns={"query": "topic", "docno": "doc", "label": "grade"})
    r = irspec.read_run(str(r_pq), columns={"query": "topic", "docno": "doc", "score": "sim"})
    text = irspec.evaluate(str(q_txt), str(r_txt), "official")
    assert irspec.evaluate(q, r, "official").values.tobytes() == text.values.tobytes()


def _two_score_columns(tmp_path: Path) -> Path:
    """A run whose ``score`` and ``sim`` columns rank its two documents in opposite orders."""
    return write_parquet(
        tmp_path / "sim.parquet",
        {"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0], "sim": [2.0, 1.0]},
    )


def test_a_parquet_run_path_is_read_by_the_columns_given_at_every_entry_point(tmp_path):
    """``columns=`` reaches a Parquet run given by its path, as it reaches the same data as a frame: by
    ``sim``, ``a`` (the one relevant document) is first, so P@1 = 1 and AP = 1/1 = 1; by ``score`` it is
    second, P@1 = 0 and AP = 1/2. It was read by ``score`` (its default name), silently."""
    qrels = {"q": {"a": 1}}
    run = str(_two_score_columns(tmp_path))
    expected = {"P@1": 1.0, "AP": 1.0}
    by_sim = {"score": "sim"}
    assert irspec.evaluate(qrels, run, "P@1, AP", columns=by_sim).aggregate() == expected
    assert irspec.evaluate(qrels, [run], "P@1, AP", columns=by_sim).aggregate() == {"sim": expected}
    assert irspec.evaluate(qrels, {"x": run}, "P@1, AP", columns=by_sim).aggregate() == {"x": expected}
    assert irspec.evaluate_many(qrels, run, "P@1, AP", columns=by_sim)[0].aggregate() == expected
    assert irspec.Evaluator(qrels, "P@1, AP", columns=by_sim).evaluate(run).aggregate() == expected
    # and by default, `score`: the columns given made the difference
    assert irspec.evaluate(qrels, run, "P@1, AP").aggregate() == {"P@1": 0.0, "AP": 0.5}


def test_a_parquet_run_path_of_its_own_column_names_is_read_by_columns(tmp_path):
    """No column of a default name: ``columns=`` alone names them (it failed: no query id column)."""
    run = write_parquet(tmp_path / "own.parquet", {"topic": ["q", "q"], "doc": ["a", "b"], "sim": [1.0, 2.0]})
    names = {"query": "topic", "docno": "doc", "score": "sim"}
    # `b` first, `a` (relevant) second: P@1 = 0, P@2 = 1/2
    expected = {"P@1": 0.0, "P@2": 0.5}
    assert irspec.evaluate({"q": {"a": 1}}, str(run), "P@1, P@2", columns=names).aggregate() == expected
    evaluator = irspec.Evaluator({"q": {"a": 1}}, "P@1, P@2", columns=names)
    assert evaluator.evaluate(str(run)).aggregate() == expected


def test_columns_for_a_trec_text_run_path_is_an_error_at_every_entry_point(tmp_path):
    """A text run given by its path with ``columns=`` is refused as :func:`irspec.read_run` refuses it
    (and as a text run in a mapping of runs, or text qrels, were): never read as if they were not given."""
    _, r_txt = write_trec(tmp_path, {"q": {"a": 1}}, {"q": {"a": 1.0}})
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "grade": [1]})
    fixed = r"run.txt: columns= names the columns of a DataFrame.*fields are fixed"
    for run in (str(r_txt), [str(r_txt)], {"x": str(r_txt)}):
        with pytest.raises(irspec.InputError, match=fixed):
            irspec.evaluate(qrels, run, "P@1", columns={"label": "grade"})
    with pytest.raises(irspec.InputError, match=fixed):
        irspec.Evaluator(qrels, "P@1", columns={"label": "grade"}).evaluate(str(r_txt))


def test_columns_for_a_trec_text_file_is_an_error_naming_it(tmp_path):
    q_txt, r_txt = write_trec(tmp_path, {"1": {"a": 1}}, {"1": {"a": 1.0}})
    with pytest.raises(
        irspec.InputError, match=r"run.txt: columns= names the columns of a DataFrame.*fields are fixed"
    ):
        irspec.read_run(str(r_txt), columns={"query": "topic"})
    with pytest.raises(irspec.InputError, match=r"qrels.txt: columns="):
        irspec.read_qrels(str(q_txt), columns={"query": "topic"})
