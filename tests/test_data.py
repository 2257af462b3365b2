"""Tests of irspec.data: reading qrels and runs from files, stdin, dicts and DataFrames."""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import subprocess
import sys
from dataclasses import FrozenInstanceError
from pathlib import Path, PurePath

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from shared_data import TREC_EVAL_TEST

from irspec.data import Qrels, Run, read_qrels, read_run
from irspec.data import trec as T
from irspec.data.kinds import QRELS, RUN
from irspec.errors import InputError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TREC = TREC_EVAL_TEST
needs_trec = pytest.mark.skipif(not TREC.is_dir(), reason="../shared/trec_eval_test is absent")


def write(tmp_path: Path, text: str | bytes, name: str = "f.txt") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def rows(obj: Qrels | Run) -> list[tuple]:
    return obj.frame.rows()


# --------------------------------------------------------------------------------------------------
# Reading files


def test_qrels_fixture():
    q = Qrels.read(FIXTURES / "data_qrels.txt")
    assert q.frame.columns == ["query", "docno", "label", "line"]
    assert q.frame.dtypes == [pl.String, pl.String, pl.Int64, pl.UInt32]
    # Sorted by query then docno (as strings: "q10" < "q2"), each row keeps its source line.
    assert rows(q) == [
        ("q1", "d1", 0, 3),
        ("q1", "d2", 1, 4),
        ("q1", "d3", 2, 2),
        ("q10", "d1", 1, 6),
        ("q2", "d#4", 3, 5),
        ("q2", "d1", -1, 1),
    ]
    assert q.query_ids == ["q1", "q10", "q2"]
    assert len(q) == 6
    assert q.source == str(FIXTURES / "data_qrels.txt")


def test_run_fixture():
    r = Run.read(str(FIXTURES / "data_run.txt"))
    assert r.frame.columns == ["query", "docno", "score", "line"]
    assert r.frame.dtypes == [pl.String, pl.String, pl.Float64, pl.UInt32]
    assert (r.name, r.runid) == ("data_run", "tiny")  # named by its file, its runid kept for trec_eval's line
    # Source order is kept; the rank column is not.
    assert rows(r) == [
        ("q1", "d3", 2.5, 1),
        ("q1", "d9", 2.5, 2),
        ("q1", "d1", -0.75, 3),
        ("q2", "d#4", 100.0, 4),
        ("q2", "d2", 7.0, 5),
        ("q3", "d1", 0.0, 6),
    ]
    assert r.query_ids == ["q1", "q2", "q3"]
    assert len(r) == 6


def test_untidy_run_reads_like_the_tidy_one():
    tidy = Run.read(FIXTURES / "data_run.txt")
    messy = Run.read(FIXTURES / "data_run_messy.txt")
    assert messy.runid == "tiny"
    assert_frame_equal(messy.frame.drop("line"), tidy.frame.drop("line"))
    assert messy.frame["line"].to_list() == [3, 4, 6, 9, 10, 12]


@pytest.mark.parametrize(
    "name",
    [
        "bm25.run",
        "runs/bm25.run.gz",
        "bm25.run.gz.gz",
        "a/b/",
        "a/b/.",
        "a//b.txt",
        "../x.run",
        "..",
        ".",
        "/",
        ".hidden",
        ".hidden.gz",
        "a.",
        "a..b",
        "run",
        "dir.d/run",
        "x.gz",
        ".gz",
        "a/./b.c.d",
        "-",
        "weird name.run",
        "ü.run",
    ],
)
def test_a_runs_name_is_pathlibs_stem_of_its_file_name(name):
    # stem() reads with os.path what pathlib's PurePath(...).name and .stem give, one ".gz" dropped between
    base = PurePath(name).name
    base = base[:-3] if base.endswith(".gz") else base
    assert T.stem(name) == (PurePath(base).stem or None)


def test_run_name_is_the_stem_else_the_runid_else_run(tmp_path):
    five = "q1 Q0 d1 1 0.5 early-runid\nq1 Q0 d2 2 0.4\n"
    assert Run.read(write(tmp_path, five, "bm25.run")).name == "bm25"
    assert Run.read(write(tmp_path, five, "bm25.run.gz")).name == "bm25"
    assert Run.read(io.BytesIO(five.encode())).name == "run"
    assert Run.read(write(tmp_path, "", "empty.txt")).name == "empty"
    # The runid of the last data line, as trec_eval keeps it, even before trailing comments; it names a
    # run without a file name (standard input), never one with a file name
    text = "# x\n\nq1 Q0 d1 1 0.5 first\nq1 Q0 d2 2 0.4 second\n# end\n"
    assert (Run.read(write(tmp_path, text, "dense.run")).name, Run.read(write(tmp_path, text)).runid) == (
        "dense",
        "second",
    )
    assert Run.read(io.BytesIO(text.encode())).name == "second"


def test_gzip_detected_by_magic_bytes_not_name(tmp_path):
    raw = (FIXTURES / "data_run.txt").read_bytes()
    plain = Run.read(FIXTURES / "data_run.txt")
    for name in ("run.gz", "run.txt"):
        r = Run.read(write(tmp_path, gzip.compress(raw), name))
        assert_frame_equal(r.frame, plain.frame)
        assert (r.name, r.runid) == ("run", "tiny")
    # A plain file with a .gz name is read as plain text.
    assert_frame_equal(Run.read(write(tmp_path, raw, "plain.gz")).frame, plain.frame)
    q = Qrels.read(write(tmp_path, gzip.compress((FIXTURES / "data_qrels.txt").read_bytes()), "q.gz"))
    assert_frame_equal(q.frame, Qrels.read(FIXTURES / "data_qrels.txt").frame)


def test_multi_member_gzip(tmp_path):
    data = gzip.compress(b"1 0 a 1\n") + gzip.compress(b"1 0 b 2\n") + b"\x00\x00"
    assert rows(Qrels.read(write(tmp_path, data))) == [("1", "a", 1, 1), ("1", "b", 2, 2)]
    with pytest.raises(InputError, match="corrupt gzip data: trailing garbage"):
        Qrels.read(write(tmp_path, gzip.compress(b"1 0 a 1\n") + b"junk"))


def test_comments_blank_lines_and_hash_inside_docno(tmp_path):
    text = "# header\n\n1 0 doc#1 1\n   # indented comment\n\t\n1 0 #doc 2\n1\t0  doc3 0  \n#1 0 doc4 1\n"
    q = Qrels.read(write(tmp_path, text))
    assert rows(q) == [("1", "#doc", 2, 6), ("1", "doc#1", 1, 3), ("1", "doc3", 0, 7)]


def test_whitespace_mixes_and_crlf(tmp_path):
    text = b"301\tQ0\tFR1\t104\t  2.129133\tSTANDARD\r\n 301 Q0\t FR2 \t 1 \t1.5 STANDARD \r\n"
    r = Run.read(write(tmp_path, text))
    assert rows(r) == [("301", "FR1", 2.129133, 1), ("301", "FR2", 1.5, 2)]
    assert r.runid == "STANDARD"
    q = Qrels.read(write(tmp_path, b"1 0 a 1\r\n1 0 b 0\r\n"))
    assert rows(q) == [("1", "a", 1, 1), ("1", "b", 0, 2)]


def test_tab_separated_files_take_the_fast_path_and_read_alike(tmp_path):
    tsv = (FIXTURES / "data_run.txt").read_text().replace(" ", "\t").encode()
    assert T._separator(tsv) == "\t"
    assert_frame_equal(T._parse_fast(tsv, RUN, "\t"), T._parse_slow(T._normalise(tsv), RUN, "x"))
    assert_frame_equal(Run.read(write(tmp_path, tsv)).frame, Run.read(FIXTURES / "data_run.txt").frame)
    # A double tab is one separator (the slow path sorts it out).
    assert rows(Qrels.read(write(tmp_path, b"1\t0\ta\t1\n1\t0\tb\t\t2\n"))) == [
        ("1", "a", 1, 1),
        ("1", "b", 2, 2),
    ]


def test_scores_accept_float_syntaxes(tmp_path):
    text = "q Q0 a 1 1e3 r\nq Q0 b 2 -.5 r\nq Q0 c 3 +2. r\nq Q0 d 4 -0 r\nq Q0 e 5 1E-3 r\n"
    assert Run.read(write(tmp_path, text)).frame["score"].to_list() == [1000.0, -0.5, 2.0, -0.0, 0.001]


def test_non_integer_rank_is_accepted_because_rank_is_ignored(tmp_path):
    r = Run.read(write(tmp_path, "q Q0 a x 0.5 r\nq Q0 b 2.0 0.4 r\n"))
    assert rows(r) == [("q", "a", 0.5, 1), ("q", "b", 0.4, 2)]


def test_empty_inputs_have_zero_queries(tmp_path):
    for text in ("", "\n\n", "# only a comment\n", "  \n\t\n"):
        q = Qrels.read(write(tmp_path, text))
        r = Run.read(write(tmp_path, text))
        assert len(q) == len(r) == 0 and q.query_ids == r.query_ids == []
        assert q.frame.dtypes == [pl.String, pl.String, pl.Int64, pl.UInt32]
        assert r.frame.dtypes == [pl.String, pl.String, pl.Float64, pl.UInt32]


def test_no_trailing_newline(tmp_path):
    assert rows(Qrels.read(write(tmp_path, "1 0 a 1\n1 0 b 2"))) == [("1", "a", 1, 1), ("1", "b", 2, 2)]


def test_utf8_bom_and_non_ascii(tmp_path):
    q = Qrels.read(write(tmp_path, "\ufeffq 0 café 1\nq 0 ü 2\n".encode()))
    assert rows(q) == [("q", "café", 1, 1), ("q", "ü", 2, 2)]


# --------------------------------------------------------------------------------------------------
# Errors, each with its exact line


QRELS_ERRORS = [
    # (text, line, query, message fragment)
    ("1 0 a 1\n1 0 b\n", 2, "1", "expected 4 fields 'qid iter docno label', got 3"),
    ("1 0 a 1\n1 0 b 1 x\n", 2, "1", "expected 4 fields 'qid iter docno label', got 5"),
    ("1 0 a 1\n1 0 b 1  x\n", 2, "1", "got 5"),
    ("1 0 a 1\n1\n", 2, "1", "got 1"),
    ("# c\n\n1 0 a 1.5\n", 3, "1", "label must be an integer, got '1.5'"),
    ("1 0 a 1\n\n  # c\n1\t0\tb\tx\n", 4, "1", "label must be an integer, got 'x'"),
    (
        "1 0 a 99999999999999999999\n",
        1,
        "1",
        "label '99999999999999999999' is out of range (labels are 64-bit integers",
    ),
    ("1 0 a 1\n2 0 a 1\n# c\n1 0 b 0\n1 0 a 2\n", 5, "1", "duplicate docno 'a' (first on line 1)"),
    ("1 0 a 1\n1 0 b\n1 0 a 2\n", 2, "1", "got 3"),  # the first problem in the file wins
]

RUN_ERRORS = [
    (
        "q Q0 a 1 0.5 r\nq Q0 b 2\n",
        2,
        "q",
        "expected at least 5 fields 'qid iter docno rank score [runid]', got 4",
    ),
    ("q Q0 a 1 0.5 r\nq Q0 b 2  0.4x r\n", 2, "q", "score must be a number, got '0.4x'"),
    ("q Q0 a 1 0.5 r\n\n#\nq Q0 b 2 abc r\n", 4, "q", "score must be a number, got 'abc'"),
    ("q Q0 a 1 0.5 r\nq Q0 b 2 1,5 r\n", 2, "q", "score must be a number, got '1,5'"),
    ("q Q0 a 1 0.5 r\nq Q0 b 2 NaN r\n", 2, "q", "NaN score for docno 'b'"),
    ("q Q0 a 1 0.5 r\nq\tQ0\tb\t2\tnan\tr\n", 2, "q", "NaN score"),
    (
        "q Q0 a 1 inf r\n",
        1,
        "q",
        "infinite score inf (scores must be finite; a number beyond ±1.8e308 reads as infinite)",
    ),
    ("q Q0 a 1 0.5 r\nq Q0 b 2 -Infinity r\n", 2, "q", "infinite score -inf"),
    ("q Q0 a 1 1e400 r\n", 1, "q", "infinite score"),
    ("q Q0 a 1 0.5 r\np Q0 a 1 0.5 r\nq Q0 a 2 0.4 r\n", 3, "q", "duplicate docno 'a' (first on line 1)"),
    ("q Q0 a 1 0.5 r\n q Q0  a\t2 0.4 r\n", 2, "q", "duplicate docno 'a'"),
]


@pytest.mark.parametrize("text, line, query, fragment", QRELS_ERRORS)
def test_qrels_errors(tmp_path, text, line, query, fragment):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        Qrels.read(path)
    assert (e.value.source, e.value.line, e.value.query) == (str(path), line, query)
    assert fragment in str(e.value)
    assert str(e.value).startswith(f"{path}:{line}: query {query!r}: ")


@pytest.mark.parametrize("text, line, query, fragment", RUN_ERRORS)
def test_run_errors(tmp_path, text, line, query, fragment):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        Run.read(path)
    assert (e.value.source, e.value.line, e.value.query) == (str(path), line, query)
    assert fragment in str(e.value)


@pytest.mark.parametrize("gz", [False, True])
def test_error_line_deep_in_a_big_file(tmp_path, gz):
    lines = [f"q{i // 100} Q0 d{i} {i} {1.0 / (i + 1)} big" for i in range(20000)]
    lines[15000] = "q150 Q0 d15000 1"
    lines.insert(100, "# a comment")
    lines.insert(200, "")
    data = ("\n".join(lines) + "\n").encode()
    with pytest.raises(InputError) as e:
        Run.read(write(tmp_path, gzip.compress(data) if gz else data))
    assert e.value.line == 15003 and e.value.query == "q150" and "got 4" in str(e.value)


def test_duplicate_deep_in_a_big_file(tmp_path):
    lines = [f"q{i // 100} Q0 d{i % 100} {i} {i} big" for i in range(20000)]
    lines[12345] = "q123 Q0 d77 1 0.5 big"  # d77 of q123 is on line 12378 too
    with pytest.raises(InputError) as e:
        Run.read(write(tmp_path, "\n".join(lines)))
    assert e.value.line == 12378 and e.value.query == "q123"
    assert "duplicate docno 'd77' (first on line 12346)" in str(e.value)


def test_awkward_file_names_are_not_globbed(tmp_path):
    for name in ("run[1].txt", "*.txt", "~x", "a b.txt"):
        assert rows(Qrels.read(write(tmp_path, "1 0 a 1\n", name))) == [("1", "a", 1, 1)]
    write(tmp_path, "1 0 b 1\n", "other.txt")
    assert rows(Qrels.read(tmp_path / "*.txt")) == [("1", "a", 1, 1)]


def test_fifo(tmp_path):
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as f:
            f.write(b"q Q0 a 1 0.5 r\nq Q0 b 2 0.25 r\n")

    t = threading.Thread(target=writer)
    t.start()
    r = Run.read(fifo)
    t.join()
    assert rows(r) == [("q", "a", 0.5, 1), ("q", "b", 0.25, 2)]


def test_missing_file_directory_and_bad_gzip(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(InputError, match="no such file") as e:
        read_qrels(str(missing))
    assert e.value.source == str(missing)
    with pytest.raises(InputError, match="no such file"):
        read_run(missing)
    with pytest.raises(InputError, match="directory"):
        read_run(tmp_path)
    bad = write(tmp_path, gzip.compress(b"q Q0 d 1 1 r\n")[:-6], "bad.gz")
    with pytest.raises(InputError, match="corrupt gzip data") as e:
        read_run(bad)
    assert e.value.source == str(bad)


def test_invalid_utf8_names_the_line(tmp_path):
    with pytest.raises(InputError, match="not UTF-8 text") as e:
        Qrels.read(write(tmp_path, b"1 0 a 1\n1 0 b 1\n1 0 \xff\xfe 1\n"))
    assert e.value.line == 3


def test_source_override(tmp_path):
    with pytest.raises(InputError) as e:
        Qrels.read(write(tmp_path, "1 0 a\n"), source="judgments")
    assert e.value.source == "judgments" and str(e.value).startswith("judgments:1: ")


# --------------------------------------------------------------------------------------------------
# stdin and file objects


class FakeStdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", FakeStdin((FIXTURES / "data_run.txt").read_bytes()))
    r = read_run("-")
    assert r.source == "<stdin>" and r.name == "tiny" and len(r) == 6


def test_stdin_gzip_and_errors(monkeypatch):
    monkeypatch.setattr(sys, "stdin", FakeStdin(gzip.compress(b"1 0 a 1\n1 0 b\n")))
    with pytest.raises(InputError) as e:
        read_qrels("-")
    assert (e.value.source, e.value.line) == ("<stdin>", 2)


def test_stdin_run_without_runid_is_named_run(monkeypatch):
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"q Q0 a 1 0.5\n"))
    assert Run.read("-").name == "run"


def test_file_objects(tmp_path):
    text = (FIXTURES / "data_qrels.txt").read_text()
    expected = Qrels.read(FIXTURES / "data_qrels.txt").frame
    assert_frame_equal(Qrels.read(io.StringIO(text)).frame, expected)
    assert Qrels.read(io.BytesIO(text.encode())).source == "<stream>"
    with open(FIXTURES / "data_qrels.txt", "rb") as f:
        q = read_qrels(f)
    assert q.source == str(FIXTURES / "data_qrels.txt")
    assert_frame_equal(q.frame, expected)
    with open(FIXTURES / "data_run.txt") as f:  # text mode
        r = read_run(f)
    assert (r.name, r.runid) == ("data_run", "tiny") and len(r) == 6


# --------------------------------------------------------------------------------------------------
# dicts


def test_qrels_from_dict():
    q = Qrels.from_dict({"q2": {"b": 1, "a": -1}, "q1": {"z": 3}, "q3": {}})
    assert rows(q) == [("q1", "z", 3, None), ("q2", "a", -1, None), ("q2", "b", 1, None)]
    assert q.frame.dtypes == [pl.String, pl.String, pl.Int64, pl.UInt32]
    assert q.source == "<dict>" and q.query_ids == ["q1", "q2"]
    assert rows(read_qrels({"q": {"d": np.int64(2)}})) == [("q", "d", 2, None)]


def test_run_from_dict():
    r = Run.from_dict({"q1": {"a": 1.5, "b": 2}, "q2": {"c": np.float32(0.25)}}, name="mine")
    assert rows(r) == [("q1", "a", 1.5, None), ("q1", "b", 2.0, None), ("q2", "c", 0.25, None)]
    assert r.name == "mine" and r.source == "<dict>"
    assert read_run({"q": {"d": 1.0}}).name == "run"
    assert len(Run.from_dict({})) == 0


@pytest.mark.parametrize(
    "d, query, fragment",
    [
        ({"q": {"a": 1, "b": 1.5}}, "q", "label must be an integer, got 1.5 for docno 'b'"),
        ({"q": {"a": 1}, "r": {"b": "1"}}, "r", "label must be an integer, got '1' for docno 'b'"),
        ({"q": {"a": True}}, "q", "label must be an integer, got True"),
        ({"q": {"a": None}}, "q", "label must be an integer, got None"),
        ({"q": {1.5: 1}}, "q", "docnos must be strings (or integers), got 1.5"),
        ({"q": [("a", 1)]}, "q", "expected a mapping docno -> label"),
    ],
)
def test_qrels_dict_errors(d, query, fragment):
    with pytest.raises(InputError) as e:
        Qrels.from_dict(d)
    assert e.value.source == "<dict>" and e.value.query == query and e.value.line is None
    assert fragment in str(e.value)


def test_dict_errors_without_a_query():
    with pytest.raises(InputError, match=r"query ids must be strings \(or integers\), got None"):
        Qrels.from_dict({None: {"a": 1}})
    with pytest.raises(
        InputError,
        match=r"query .q.: label 1180591620717411303424 is out of range \(labels are 64-bit integers, "
        r"-9223372036854775808 to 9223372036854775807\) for docno .a.",
    ):
        Qrels.from_dict({"q": {"a": 2**70}})


@pytest.mark.parametrize(
    "d, query, fragment",
    [
        ({"q": {"a": 1.0, "b": math.nan}}, "q", "NaN score for docno 'b'"),
        ({"q": {"a": 1.0}, "r": {"b": float("inf")}}, "r", "infinite score inf"),
        ({"q": {"a": "0.5"}}, "q", "score must be a number, got '0.5' for docno 'a'"),
        ({"q": {"a": False}}, "q", "score must be a number, got False"),
    ],
)
def test_run_dict_errors(d, query, fragment):
    with pytest.raises(InputError) as e:
        Run.from_dict(d)
    assert e.value.source == "<dict>" and e.value.query == query
    assert fragment in str(e.value)


# --------------------------------------------------------------------------------------------------
# DataFrames


def test_polars_frames():
    df = pl.DataFrame({"query_id": ["2", "1", "1"], "doc_id": ["a", "c", "b"], "relevance": [1, 0, 2]})
    q = Qrels.from_frame(df)
    assert rows(q) == [("1", "b", 2, None), ("1", "c", 0, None), ("2", "a", 1, None)]
    assert q.source == "<DataFrame>"
    r = read_run(pl.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [3, 2], "rank": [1, 2]}))
    assert rows(r) == [("1", "a", 3.0, None), ("1", "b", 2.0, None)]
    assert r.frame.dtypes == [pl.String, pl.String, pl.Float64, pl.UInt32]


def test_frame_errors():
    with pytest.raises(
        InputError,
        match=r"no label column: the columns are 'query_id', 'doc_id', 'rel'; expected query_id, doc_id, "
        r"relevance \(ir_measures\); qid, docno, label \(PyTerrier\), or names given by columns=",
    ):
        Qrels.from_frame(pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "rel": [1]}))
    with pytest.raises(
        InputError, match=re.escape("row 1: label must be an integer, got 0.5 for docno 'b'")
    ) as e:
        Qrels.from_frame(
            pl.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "relevance": [1.0, 0.5]})
        )
    assert e.value.query == "2"
    with pytest.raises(InputError, match="NaN score for docno 'b'"):
        Run.from_frame(pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, math.nan]}))
    with pytest.raises(InputError, match="row 0: missing score"):
        Run.from_frame(
            pl.DataFrame(
                {"query_id": ["1"], "doc_id": ["a"], "score": [None]}, schema_overrides={"score": pl.Float64}
            )
        )
    with pytest.raises(InputError, match="duplicate docno 'a'") as e:
        Run.from_frame(pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": [1.0, 2.0]}))
    assert e.value.query == "1" and e.value.line is None
    with pytest.raises(InputError, match="must hold numbers"):
        Run.from_frame(pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": ["1.0"]}))


def test_pandas_frames():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "a", "a"], "relevance": [1, 2, 0]})
    assert rows(read_qrels(df)) == [("q1", "a", 2, None), ("q1", "b", 1, None), ("q2", "a", 0, None)]
    run = pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [0.5, 0.25]})
    assert rows(Run.from_frame(run, name="pd")) == [("1", "a", 0.5, None), ("1", "b", 0.25, None)]
    nullable = pd.DataFrame(
        {
            "query_id": pd.array(["q1", "q1"], dtype="string"),
            "doc_id": ["a", "b"],
            "relevance": pd.array([1, None], dtype="Int64"),
        }
    )
    with pytest.raises(InputError, match=r"row 1: missing label for docno .b."):
        read_qrels(nullable)


# --------------------------------------------------------------------------------------------------
# Dispatch, immutability, the fast path against the reference path, import weight


def test_read_functions_pass_objects_through():
    q = Qrels.read(FIXTURES / "data_qrels.txt")
    r = Run.read(FIXTURES / "data_run.txt")
    assert read_qrels(q) is q and read_run(r) is r
    with pytest.raises(TypeError, match=r"^read_qrels\(\) was given a Run$"):
        read_qrels(r)
    with pytest.raises(TypeError, match=r"^read_run\(\) was given a Qrels$"):
        read_run(q)
    with pytest.raises(TypeError):
        read_run(42)
    with pytest.raises(FrozenInstanceError):
        r.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("order", ["sorted", "numeric queries", "shuffled", "docnos descending"])
def test_qrels_come_out_sorted_whatever_the_file_order(tmp_path, order):
    recs = [(str(q), f"d{d:03d}", int((q * d) % 4)) for q in (1, 2, 10, 11) for d in range(50)]
    if order == "sorted":
        recs.sort()
    elif order == "shuffled":
        recs = [recs[i] for i in np.random.default_rng(3).permutation(len(recs))]
    elif order == "docnos descending":
        recs.sort(key=lambda r: (int(r[0]), [-ord(c) for c in r[1]]))
    text = "".join(f"{q} 0 {d} {lab}\n" for q, d, lab in recs)
    q = Qrels.read(write(tmp_path, text))
    assert q.frame.drop("line").rows() == sorted(recs)
    assert [text.splitlines()[line - 1].split()[2] for line in q.frame["line"]] == q.frame["docno"].to_list()


def _random_lines(rng: np.random.Generator, n: int, fmt: str) -> list[str]:
    out = []
    for i in range(n):
        q, d = f"q{rng.integers(5)}", f"d{i}"
        if fmt == "qrels":
            out.append(f"{q} 0 {d} {rng.integers(-1, 4)}")
        else:
            out.append(f"{q} Q0 {d} {i + 1} {rng.normal():.4f} r")
    return out


@pytest.mark.parametrize("fmt", [QRELS, RUN], ids=["qrels", "run"])
def test_fast_path_equals_reference_path(fmt):
    rng = np.random.default_rng(7)
    data = ("\n".join(_random_lines(rng, 3000, fmt.kind)) + "\n").encode()
    fast = T._parse_fast(data, fmt)
    assert fast is not None
    assert_frame_equal(fast, T._parse_slow(T._normalise(data), fmt, "x"))


@pytest.mark.parametrize(
    "text",
    [
        "# first\nq Q0 a 1 0.5 r\n#\n# two\nq Q0 b#1 2 0.4 r\n#last",
        "q Q0 a 1 0.5 r\n# c d e f g h\nq Q0 #b 2 0.4 r\n",
        "#only\n",
        "q Q0 a 1 0.5 r\n#x\n#y\n#z\nq Q0 b 2 0.4 r",
    ],
)
def test_comment_lines_stay_on_the_fast_path(text):
    data = text.encode()
    fast = T._parse_fast(data, RUN)
    assert fast is not None
    assert_frame_equal(fast, T._parse_slow(T._normalise(data), RUN, "x"))


def test_blank_lines_and_indented_comments_leave_the_fast_path():
    assert T._parse_fast(b"q Q0 a 1 0.5 r\n\nq Q0 b 2 0.4 r\n", RUN) is None
    assert T._parse_fast(b"q Q0 a 1 0.5 r\n  # x\n", RUN) is None


@pytest.mark.parametrize("seed", range(5))
def test_random_layouts_read_alike(tmp_path, seed):
    """The same records with random whitespace, comments and blank lines give the same frame."""
    rng = np.random.default_rng(seed)
    records = _random_lines(rng, 300, "run")
    expected = Run.read(write(tmp_path, "\n".join(records), "tidy.txt")).frame.drop("line")
    seps = [" ", "\t", "  ", " \t ", "\t\t"]
    lines, data_lines = [], []
    for rec in records:
        while rng.random() < 0.2:
            lines.append(rng.choice(["", "   ", "\t", "# comment", "  # x y z w v u", "#"]))
        fields = rec.split(" ")
        lead = rng.choice(["", " ", "\t"])
        trail = rng.choice(["", " ", "\t", "\r"])
        lines.append(lead + "".join(f + rng.choice(seps) for f in fields[:-1]) + fields[-1] + trail)
        data_lines.append(len(lines))
    r = Run.read(write(tmp_path, "\n".join(lines), "messy.txt"))
    assert_frame_equal(r.frame.drop("line"), expected)
    assert r.frame["line"].to_list() == data_lines


@pytest.mark.parametrize(
    "data",
    [b"a b\nc d\n", b"a  b\n", b"a b\n c\n", b" a b", b"a b\nc d  ", b"a\tb\n\tc", b"a\tb\t\tc\n", b"ab\n\n"],
)
def test_separator_scan_finds_empty_fields_across_chunk_seams(monkeypatch, data):
    """Whatever the chunk size, the fast path gets data only if no line starts with its separator and
    no two separators meet: the rule written with plain bytes searches."""
    sep = b"\t" if b"\t" in data else b" "
    empty_field = data.startswith(sep) or sep * 2 in data or b"\n" + sep in data
    for chunk in range(1, len(data) + 2):
        monkeypatch.setattr(T, "_NORMALISE_CHUNK", chunk)
        assert T._separator(data) == (None if empty_field else sep.decode()), chunk


def test_normalise_keeps_newlines_across_chunks(monkeypatch):
    monkeypatch.setattr(T, "_NORMALISE_CHUNK", 7)
    data = b"  a \t b\n\n c  d \r\n   \ne   f"
    assert T._normalise(data) == b"a b\n\nc d \n\ne f"


def test_the_face_loads_the_readers_on_first_use():
    """`import irspec` stays light because the face imports irspec.data (and polars with it) only when
    a reader is first asked for (ARCHITECTURE.md, "Import lightness"); reading a file needs no pandas."""
    code = (
        "import sys, irspec\n"
        "print('irspec.data' in sys.modules, 'polars' in sys.modules)\n"
        f"run = irspec.read_run({str(FIXTURES / 'data_run.txt')!r})\n"
        "print('irspec.data' in sys.modules, 'polars' in sys.modules, 'pandas' in sys.modules)"
    )
    env = {**os.environ, "IRSPEC_DISABLE_PLUGIN_AUTOLOAD": "1"}  # a plugin may import what it likes
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        env=env,
    )
    assert out.stdout.split() == ["False", "False", "True", "True", "False"]


# --------------------------------------------------------------------------------------------------
# trec_eval's own test files


def _split_lines(path: Path) -> list[list[str]]:
    """The data lines of a TREC file, split the simplest possible way (an independent count)."""
    out = []
    for raw in path.read_text().splitlines():
        fields = raw.split()
        if fields and not fields[0].startswith("#"):
            out.append(fields)
    return out


@needs_trec
@pytest.mark.parametrize("name", ["qrels.test", "qrels.rel_level", "qrels.comment.test"])
def test_trec_qrels(name):
    expected = sorted((f[0], f[2], int(f[3])) for f in _split_lines(TREC / name))
    q = Qrels.read(TREC / name)
    assert len(q) == len(expected)
    assert q.frame.drop("line").rows() == expected
    if name == "qrels.test":
        assert len(q) == 3681 and q.query_ids == ["301", "302", "303"]
    if name == "qrels.rel_level":
        assert sorted(q.frame["label"].unique().to_list()) == [-1, 0, 1, 2, 3, 4]


@needs_trec
def test_trec_qrels_with_comments():
    plain = Qrels.read(TREC / "qrels.test")
    commented = Qrels.read(TREC / "qrels.test.with-comments")
    assert len(commented) == len(plain) == 3681
    # The commented copy also has one docno with a '#' in it, CR#93E-1860 for CR93E-1860 (label 0).
    a = set(plain.frame.drop("line").rows())
    b = set(commented.frame.drop("line").rows())
    assert a - b == {("301", "CR93E-1860", 0)} and b - a == {("301", "CR#93E-1860", 0)}
    assert commented.frame.filter(pl.col("docno") == "CR#93E-1860")["line"].to_list() == [8]


@needs_trec
@pytest.mark.parametrize(
    "name, n, runid",
    [
        ("results.test", 1500, "STANDARD"),
        ("results.comment.test", 30100, "comment.test"),
        ("results.trunc", 584, "STANDARD"),
    ],
)
def test_trec_runs(name, n, runid):
    fields = _split_lines(TREC / name)
    r = Run.read(TREC / name)
    assert len(r) == len(fields) == n
    assert (r.name, r.runid) == (Path(name).stem, runid)
    assert r.frame.drop("line").rows() == [(f[0], f[2], float(f[4])) for f in fields]
    assert r.frame["line"].to_list() == list(range(1, n + 1))
    if name == "results.comment.test":
        assert r.frame["docno"].str.contains("#", literal=True).all()


def test_a_qrels_duplicate_hints_at_qrels_with_subtopics(tmp_path):
    """A TREC diversity qrels file judges a document once per subtopic: read as plain qrels, the error
    says where such files are read."""
    p = tmp_path / "qrels.div.txt"
    p.write_text("1 1 d1 1\n1 2 d1 0\n")
    with pytest.raises(
        InputError,
        match=r"qrels.div.txt:2: query '1': duplicate docno 'd1' \(first on line 1\); qrels with subtopics",
    ):
        read_qrels(str(p))
    r = tmp_path / "run.txt"
    r.write_text("1 Q0 d1 1 2.0 x\n1 Q0 d1 2 1.0 x\n")
    with pytest.raises(InputError) as e:
        read_run(str(r))
    assert "subtopics" not in str(e.value)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 70_000])
@pytest.mark.parametrize("seed", range(4))
def test_all_distinct_finds_every_planted_duplicate(n: int, seed: int) -> None:
    # the reference is np.unique; a duplicate planted at every kind of place: first, last, adjacent,
    # the same key several times (its slot's winner or not)
    from irspec.data import all_distinct

    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    assert all_distinct(keys) == (len(np.unique(keys)) == n)
    for _ in range(6 if n >= 2 else 0):
        dup = keys.copy()
        i, j = rng.choice(n, 2, replace=False)
        dup[j] = dup[i]
        if n > 3 and rng.random() < 0.5:
            dup[rng.choice(n, 3, replace=False)] = dup[i]  # three or four of one key
        assert len(np.unique(dup)) < n and not all_distinct(dup)


def test_keys_differing_only_where_the_table_does_not_look_are_checked_by_the_rows() -> None:
    # equal top bits (one slot) and equal low 32 bits: all_distinct may not prove them distinct, and the
    # duplicate check then compares the rows themselves, which are distinct: no error
    from irspec.data import _check_duplicates, all_distinct

    keys = (np.arange(5000, dtype=np.uint64) << np.uint64(32)) | np.uint64(7)
    assert not all_distinct(keys)
    frame = pl.DataFrame(
        {"query": ["q"] * 5000, "docno": [f"d{i}" for i in range(5000)], "line": range(1, 5001)}
    )
    _check_duplicates(frame, keys, "run", "line")
    spread = np.arange(5000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    assert all_distinct(spread) and not all_distinct(np.concatenate([spread, spread[:1]]))
