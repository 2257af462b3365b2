"""Empty qrels and empty runs evaluate, with a warning for empty qrels, and never raise.

What the references do with them (trec_eval 10's binary, pytrec_eval):

- trec_eval refuses a 0-byte qrels or run file ("Cannot read qrels file", exit 2: it maps the file and a
  0-byte map fails) and calls a comment-only or blank-only qrels "Malformed line 1". A run of comments or
  blank lines is read as no lines: with -c every qrels query scores 0 (num_q = the qrels' queries).
- pytrec_eval evaluates exactly the queries of its qrels that the run has: ``{}`` for empty qrels.

irspec evaluates them all: empty qrels give no query (pytrec_eval's answer) and the warning that the
qrels have no judgments; an empty run gives every qrels query the values of an empty ranking under the
default ``missing_queries="zero"`` (trec_eval -c).
"""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
from pathlib import Path

import pytest

import irspec

pytrec_eval = pytest.importorskip("pytrec_eval")

EMPTY_TEXTS = {"empty": b"", "comments": b"# judged later\n#\n", "blank": b"\n  \n\t\n\r\n"}
QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"a": 0, "d": 1}}
RUN = {"q1": {"a": 0.9, "b": 0.5}, "q2": {"d": 0.7}, "q3": {"x": 0.1}}
METRICS = ["AP", "P@5", "nDCG@10", "RR", "NumQ", "NumRel", "NumRet"]


def _sources(data: bytes, tmp_path: Path, monkeypatch) -> list:
    """The same bytes as a file, a gzip file, standard input and a stream."""
    (tmp_path / "plain.txt").write_bytes(data)
    (tmp_path / "packed.gz").write_bytes(gzip.compress(data))

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", Stdin)
    return [tmp_path / "plain.txt", tmp_path / "packed.gz", "-", io.BytesIO(data)]


@pytest.mark.parametrize("text", EMPTY_TEXTS.values(), ids=EMPTY_TEXTS.keys())
def test_empty_qrels_file_evaluates_no_query_with_a_warning(tmp_path, monkeypatch, text):
    expected = pytrec_eval.RelevanceEvaluator({}, {"map", "P_5"}).evaluate(RUN)
    assert expected == {}
    for src in _sources(text, tmp_path, monkeypatch):
        res = irspec.evaluate(src, RUN, METRICS)
        assert res.per_query() == expected
        assert res.query_ids == ()
        assert res.values.shape == (0, len(METRICS))
        assert any("has no judgments" in w for w in res.warnings), res.warnings


@pytest.mark.parametrize("qrels", [{}, {"q1": {}}], ids=["no queries", "a query without judgments"])
def test_empty_qrels_dicts(qrels):
    assert pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(RUN) == {}
    res = irspec.evaluate(qrels, RUN, METRICS)
    assert res.per_query() == {}
    assert "qrels <dict> has no judgments" in res.warnings
    assert irspec.evaluate(qrels, {}, "AP").per_query() == {}


def test_the_warning_names_the_file(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"")
    assert f"qrels file {str(path)!r} has no judgments" in irspec.evaluate(path, RUN, "AP").warnings
    # Judgments present: no such warning.
    assert not any("judgments" in w for w in irspec.evaluate(QRELS, RUN, "AP").warnings)


# An empty ranking, by hand: nothing retrieved, so AP = P@5 = nDCG@10 = RR = 0 and NumRet = 0; NumQ counts
# the query (trec_eval -c); NumRel counts its judgments with label >= 1 (q1: a, c; q2: d).
EMPTY_RANKING = {
    "q1": {"AP": 0.0, "P@5": 0.0, "nDCG@10": 0.0, "RR": 0.0, "NumQ": 1.0, "NumRel": 2.0, "NumRet": 0.0},
    "q2": {"AP": 0.0, "P@5": 0.0, "nDCG@10": 0.0, "RR": 0.0, "NumQ": 1.0, "NumRel": 1.0, "NumRet": 0.0},
}


@pytest.mark.parametrize("text", EMPTY_TEXTS.values(), ids=EMPTY_TEXTS.keys())
def test_empty_run_file_scores_every_qrels_query_zero(tmp_path, monkeypatch, text):
    for src in _sources(text, tmp_path, monkeypatch):
        res = irspec.evaluate(QRELS, src, METRICS)
        assert res.per_query() == EMPTY_RANKING
        assert irspec.evaluate(QRELS, src, METRICS, missing_queries="skip").per_query() == {}


def test_empty_run_dict():
    assert irspec.evaluate(QRELS, {}, METRICS).per_query() == EMPTY_RANKING
    assert pytrec_eval.RelevanceEvaluator(QRELS, {"map"}).evaluate({}) == {}
    assert irspec.evaluate(QRELS, {}, METRICS, missing_queries="skip").per_query() == {}


def test_both_empty():
    res = irspec.evaluate({}, {}, "official")
    assert res.per_query() == {} and "qrels <dict> has no judgments" in res.warnings


def test_cli_empty_qrels_on_stdin_and_as_a_file(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 0.9 r\nq1 Q0 b 2 0.5 r\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(EMPTY_TEXTS["comments"])
    for args, name in [(["-", str(run)], "<stdin>"), ([str(qrels), str(run)], f"file {str(qrels)!r}")]:
        # irspec eval - run.txt < /dev/null
        p = subprocess.run(
            [sys.executable, "-m", "irspec", "eval", *args, "-m", "AP"],
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
        )
        err = p.stderr.decode()
        assert p.returncode == 0, err
        assert "Traceback" not in err
        assert f"irspec: warning: qrels {name} has no judgments" in err.splitlines()
