"""irspec.data.sniff_kind: qrels or run, told from a file's content (for command lines taking both)."""

from __future__ import annotations

import gzip

import polars as pl
import pytest

from irspec.data import sniff_kind
from irspec.errors import InputError


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("q1 0 d1 1\n", "qrels"),
        ("# a comment\n\n  q1\t0\td1\t-1\n", "qrels"),
        ("q1 Q0 d1 1 2.5\n", "run"),
        ("q1 Q0 d1 1 2.5 bm25\n", "run"),
        ("#x\nq1 Q0 d1 1 2.5 bm25 extra fields\n", "run"),
    ],
)
def test_text_by_fields_of_first_data_line(tmp_path, text, kind):
    p = tmp_path / "f.txt"
    p.write_text(text)
    assert sniff_kind(p) == kind
    g = tmp_path / "f.txt.gz"
    g.write_bytes(gzip.compress(text.encode()))
    assert sniff_kind(g) == kind


def test_parquet_by_columns(tmp_path):
    run = tmp_path / "run.parquet"
    pl.DataFrame({"qid": ["1"], "docno": ["d"], "score": [1.0]}).write_parquet(run)
    qrels = tmp_path / "qrels.parquet"
    pl.DataFrame({"query_id": ["1"], "doc_id": ["d"], "relevance": [1]}).write_parquet(qrels)
    other = tmp_path / "other.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(other)
    assert sniff_kind(run) == "run"
    assert sniff_kind(qrels) == "qrels"
    with pytest.raises(InputError, match=r"other.parquet.*'score' column"):
        sniff_kind(other)


def test_dataset_id_is_qrels():
    assert sniff_kind("irds:msmarco-passage/trec-dl-2019/judged") == "qrels"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("q1 d1 1\n", r"bad.txt:1: .*3 fields"),
        ("#c\nq1 0\n", r"bad.txt:2: .*2 fields"),
        ("# only\n", "bad.txt.*no data line"),
    ],
)
def test_errors_name_file_and_line(tmp_path, text, where):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(InputError, match=where) as e:
        sniff_kind(p)
    assert "bad.txt" in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nope.txt.*cannot read"):
        sniff_kind(tmp_path / "nope.txt")


def test_split_kinds_keeps_the_order_given(tmp_path):
    from irspec.data import split_kinds

    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.5 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d1 1 2.5 b\n")
    paths = [str(tmp_path / n) for n in ("b.run", "q.txt", "a.run")]
    assert split_kinds(paths) == ([paths[1]], [paths[0], paths[2]])
