"""Fields split on any run of blanks, on every path of the readers, checked against pytrec_eval.

trec_eval (get_qrels.c, get_trec_results.c) skips ``isspace`` characters between fields, so padding
never moves a field into another column. pytrec_eval's ``parse_qrel`` / ``parse_run`` do the same with
``line.strip().split()``: they are the independent reading of the same bytes these tests compare with.

Every file here is read through the path (memory-mapped, polars reads the file), gzip, standard input
and an open binary file. The runs' rank column runs against their scores, so a rank misread as a score
reverses the ranking and changes every value; the docnos of the qrels and the run are the same set, so
a field misread as a docno loses the judgments.
"""

from __future__ import annotations

import functools
import gzip
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import irspec
import irspec.data.plain
import irspec.data.small
from irspec.data import Qrels, Run, read_qrels, read_run
from irspec.errors import InputError

pytrec_eval = pytest.importorskip("pytrec_eval")

METRICS = ["AP", "nDCG@5", "P@3", "RR", "NumRelRet"]
PYTREC = {"map": "AP", "ndcg_cut_5": "nDCG@5", "P_3": "P@3", "recip_rank": "RR", "num_rel_ret": "NumRelRet"}


def _records(seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """Fields of a random qrels and run over the same docnos: 4 queries, 2 to 8 documents each."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(4):
        n = int(rng.integers(2, 9))
        docs = [f"d{q}{i}" for i in rng.permutation(20)[:n]]
        labels = rng.integers(0, 3, n)
        labels[0] = 1  # every query has a relevant document, so AP is not 0 everywhere
        qrels += [[f"q{q}", "0", d, str(lab)] for d, lab in zip(docs, labels, strict=True)]
        scores = np.sort(rng.choice(np.arange(1, 1000), n, replace=False))  # ascending: against the rank
        order = rng.permutation(n)
        run += [
            [f"q{q}", "Q0", docs[j], str(r + 1), f"{scores[r] / 100:.2f}", "tag"] for r, j in enumerate(order)
        ]
    return qrels, run


def _join(
    records: list[list[str]], seps: list[list[str]], lead: list[str], trail: list[str], eol: str
) -> bytes:
    """Lines from fields, each line with its own separators, leading and trailing blanks."""
    lines = []
    for fields, s, a, b in zip(records, seps, lead, trail, strict=True):
        line = fields[0] + "".join(sep + f for sep, f in zip(s, fields[1:], strict=True))
        lines.append(a + line + b + eol)
    return "".join(lines).encode()


def _tidy(records: list[list[str]]) -> bytes:
    return _join(
        records, [[" "] * (len(r) - 1) for r in records], [""] * len(records), [""] * len(records), "\n"
    )


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def _read_every_way(reader, data: bytes, tmp_path: Path, monkeypatch):
    """The object read from a path, and the same check that gzip, stdin and a stream read alike."""
    tmp_path.mkdir()
    path = tmp_path / "padded.txt"
    path.write_bytes(data)
    first = reader(path)
    (tmp_path / "padded.gz").write_bytes(gzip.compress(data))
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    others = [reader(tmp_path / "padded.gz"), reader("-"), reader(io.BytesIO(data))]
    for other in others:
        assert_frame_equal(other.frame, first.frame)
        assert getattr(other, "runid", None) == getattr(
            first, "runid", None
        )  # the name is the file's, or "run"
    return first, path


def _pytrec_values(qrels_path: Path, run_path: Path) -> dict[str, dict[str, float]]:
    with open(qrels_path) as fq, open(run_path) as fr:
        qrels, run = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
    out = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    return {q: {PYTREC[k]: v for k, v in vals.items() if k in PYTREC} for q, vals in out.items()}


@functools.cache
def _tidy_read(tidy_qrels: bytes, tidy_run: bytes, readers: tuple[int, int]) -> tuple[Qrels, Run, dict]:
    """The tidy bytes read and evaluated, once for each pair and choice of readers (``readers``: the
    values of SMALL_BELOW and PLAIN_ABOVE that conftest's ``_reader`` set, so each reader reads its
    own): ~50 padded variants of each tidy pair are compared with it. Qrels and runs are immutable."""
    tidy_q = read_qrels(io.BytesIO(tidy_qrels))
    tidy_r = read_run(io.BytesIO(tidy_run))
    return tidy_q, tidy_r, irspec.evaluate(tidy_q, tidy_r, METRICS).per_query()


def _check(qrels_data: bytes, run_data: bytes, qrels: list, run: list, tmp_path: Path, monkeypatch) -> None:
    """irspec on the padded bytes = irspec on the tidy bytes = pytrec_eval on the padded bytes."""
    q, qpath = _read_every_way(read_qrels, qrels_data, tmp_path / "q", monkeypatch)
    r, rpath = _read_every_way(read_run, run_data, tmp_path / "r", monkeypatch)
    readers = (irspec.data.small.SMALL_BELOW, irspec.data.plain.PLAIN_ABOVE)
    tidy_q, tidy_r, tidy_values = _tidy_read(_tidy(qrels), _tidy(run), readers)
    assert_frame_equal(q.frame.drop("line"), tidy_q.frame.drop("line"))
    assert_frame_equal(r.frame.drop("line"), tidy_r.frame.drop("line"))
    assert r.runid == "tag"
    got = irspec.evaluate(q, r, METRICS).per_query()
    assert got == tidy_values
    expected = _pytrec_values(qpath, rpath)
    assert got.keys() == expected.keys()
    for query, values in expected.items():
        assert got[query] == pytest.approx(values, abs=1e-12), query


# Paddings that each path of the reader once took differently: a doubled separator (of the file's own
# kind, the fast path's blind spot), a mix, and the rarer isspace characters.
PADS = ["  ", "\t\t", " \t", "\t ", "   ", " \x0b", "\x0c "]
BASES = [" ", "\t"]


@pytest.mark.parametrize("base", BASES, ids=["space", "tab"])
@pytest.mark.parametrize("pad", PADS, ids=repr)
@pytest.mark.parametrize("kind, column", [("qrels", c) for c in range(5)] + [("run", c) for c in range(7)])
def test_padding_before_each_column(tmp_path, monkeypatch, base, pad, kind, column):
    """``pad`` before field ``column`` (0: leading; one past the last field: trailing) on every other
    line of one of the files; the other file tidy."""
    qrels, run = _records(column)
    records = qrels if kind == "qrels" else run
    width = len(records[0])
    seps = [[base] * (width - 1) for _ in records]
    lead, trail = [""] * len(records), [""] * len(records)
    for i in range(0, len(records), 2):
        if column == 0:
            lead[i] = pad
        elif column == width:
            trail[i] = pad
        else:
            seps[i][column - 1] = pad
    padded = _join(records, seps, lead, trail, "\n")
    if kind == "qrels":
        _check(padded, _tidy(run), qrels, run, tmp_path, monkeypatch)
    else:
        _check(_tidy(qrels), padded, qrels, run, tmp_path, monkeypatch)


@pytest.mark.parametrize("base", BASES, ids=["space", "tab"])
def test_crlf_line_ends(tmp_path, monkeypatch, base):
    qrels, run = _records(99)
    both = []
    for records in (qrels, run):
        n = len(records)
        both.append(_join(records, [[base] * (len(r) - 1) for r in records], [""] * n, [""] * n, "\r\n"))
    _check(*both, qrels, run, tmp_path, monkeypatch)


# Blanks of one kind only (the fast path's case: no normalising) as often as mixes.
_ALPHABETS = [" ", "\t", " \t", " \t\x0b\x0c"]


@st.composite
def _padded(draw, records: list[list[str]]) -> bytes:
    """``records`` with blanks added at one or two field boundaries of the file (0: leading, one past
    the last field: trailing), the same blanks on the lines of the draw's choosing (as a formatter
    pads a column); single blanks of one kind elsewhere. Padding everywhere would nearly always leave
    some field empty where the fast path reads a null and gives up (slow but right); the fast path
    went wrong when every empty field was in a column it does not read."""
    alphabet = draw(st.sampled_from(_ALPHABETS))
    blanks = st.lists(st.sampled_from(alphabet), min_size=1, max_size=3).map("".join)
    width = len(records[0])
    where = draw(st.sets(st.integers(0, width), min_size=1, max_size=2))
    gaps = ["" if i in (0, width) else alphabet[0] for i in range(width + 1)]
    padded = list(gaps)
    for i in where:
        padded[i] += draw(blanks)
    lines = []
    for _ in records:
        g = padded if draw(st.booleans()) else gaps
        lines.append((g[1:width], g[0], g[width]))
    seps, lead, trail = (list(x) for x in zip(*lines, strict=True))
    return _join(records, seps, lead, trail, draw(st.sampled_from(["\n", "\r\n"])))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_random_padding_reads_like_pytrec_eval(tmp_path_factory, monkeypatch, data, seed):
    qrels, run = _records(seed)
    tmp = tmp_path_factory.mktemp("pad")
    _check(data.draw(_padded(qrels)), data.draw(_padded(run)), qrels, run, tmp, monkeypatch)


def test_the_issue_example_padded_docno_column():
    """The issue's file: docnos left-justified in 6 columns, so ``d9378 `` + `` `` makes two blanks."""
    demo = Path(__file__).resolve().parents[1] / "specs" / "demo"
    lines = (demo / "runs" / "bm25.run").read_text().splitlines()
    padded = "".join("{} {} {:<6} {} {} {}\n".format(*line.split()) for line in lines)
    assert "  " in padded
    a = irspec.evaluate(demo / "qrels.txt", io.BytesIO(padded.encode()), "AP").aggregate()
    b = irspec.evaluate(demo / "qrels.txt", demo / "runs" / "bm25.run", "AP").aggregate()
    assert a == b
    assert round(a["AP"], 4) == 0.3912  # trec_eval -m map on either file


# Malformed lines stay errors with their file, line and what was expected when padding is around them
# (a shifted column must not turn one into a valid-looking line).
PADDED_ERRORS = [
    (Qrels, "1 0 a 1\n1  0 b\n", 2, "expected 4 fields 'qid iter docno label', got 3"),
    (Qrels, "1 0 a 1\n\t1\t0\tb\t\t1\t2 \n", 2, "expected 4 fields 'qid iter docno label', got 5"),
    (Qrels, "1 0 a 1\r\n1 0  b  x\r\n", 2, "label must be an integer, got 'x'"),
    (Qrels, "1\t0\ta\t1\n1\t\t0\tb\t2.5\n", 2, "label must be an integer, got '2.5'"),
    (Run, "q Q0 a 1 0.5 r\nq  Q0 b 2 abc r\n", 2, "score must be a number, got 'abc'"),
    (
        Run,
        "q Q0 a 1 0.5 r\n  q Q0\t\tb 2 \n",
        2,
        "expected at least 5 fields 'qid iter docno rank score [runid]', got 4",
    ),
    (Run, "q\tQ0\ta\t1\t0.5\nq\tQ0\tb\t\t2\tx\n", 2, "score must be a number, got 'x'"),
    (Run, "q Q0 a 1 0.5 r\r\nq Q0 b  2 0.4x r\r\n", 2, "score must be a number, got '0.4x'"),
    (Run, "q Q0 a 1 0.5\nq  Q0 a 2 0.4\n", 2, "duplicate docno 'a' (first on line 1)"),
]


@pytest.mark.parametrize("cls, text, line, fragment", PADDED_ERRORS)
def test_padded_malformed_lines_are_named(tmp_path, cls, text, line, fragment):
    path = tmp_path / "bad.txt"
    path.write_bytes(text.encode())
    with pytest.raises(InputError) as e:
        cls.read(path)
    assert e.value.line == line
    assert str(e.value).startswith(f"{path}:{line}: ")
    assert fragment in str(e.value)


def _crlf_lines(kind: str, n: int) -> list[bytes]:
    """``n`` records of one query each, as Windows writes them (CRLF)."""
    if kind == "qrels":
        return [f"q{i} 0 d{i} 1\r\n".encode() for i in range(n)]
    return [f"q{i} Q0 d{i} 1 0.5 tag\r\n".encode() for i in range(n)]


@pytest.mark.parametrize("kind", ["qrels", "run"])
@pytest.mark.parametrize("line", [1, 2, 11_000])  # 11,000: past the first 256 KiB the check takes at a time
def test_a_line_ended_by_a_carriage_return_alone_is_refused_naming_it(tmp_path, monkeypatch, kind, line):
    """Lines ended by ``\\r`` alone (classic Mac OS) are one line to trec_eval, which reads its first
    record and ignores the rest as fields past the sixth: every other document went unread without a
    word. Refused, on every path (a file, gzip, standard input, a stream), naming the line."""
    lines = _crlf_lines(kind, 12_000)
    lines[line - 1] = lines[line - 1].replace(b"\r\n", b"\r")  # it runs on into the next
    data = b"".join(lines)
    reader = read_qrels if kind == "qrels" else read_run
    path, packed = tmp_path / "mac.txt", tmp_path / "mac.gz"
    path.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    for source, name in [
        (path, str(path)),
        (packed, str(packed)),
        ("-", "<stdin>"),
        (io.BytesIO(data), None),
    ]:
        with pytest.raises(InputError) as e:
            reader(source)
        assert e.value.line == line and (name is None or e.value.source == name)
        assert e.value.reason.startswith(r"a carriage return (\r) inside the line: lines ended by \r alone")
    if kind == "run":  # the streaming reader, block by block
        qrels = tmp_path / "qrels.txt"
        qrels.write_bytes(b"".join(_crlf_lines("qrels", 12_000)))
        with pytest.raises(InputError) as e:
            irspec.evaluate(str(qrels), str(path), "P@5", memory=1)
        assert (e.value.source, e.value.line) == (str(path), line)


@pytest.mark.parametrize("kind", ["qrels", "run"])
@pytest.mark.parametrize("end", [b" \r\r \n", b"\r\r\n", b"\t\r"])
def test_carriage_returns_among_a_lines_trailing_blanks_are_blanks(tmp_path, monkeypatch, kind, end):
    """A carriage return followed on its line by blanks alone (the last line's, by nothing) is a blank,
    as trec_eval reads it."""
    qrels, run = _records(3)
    records = qrels if kind == "qrels" else run
    data = _join(
        records, [[" "] * (len(r) - 1) for r in records], [""] * len(records), [""] * len(records), "\n"
    )
    data = data.replace(b"\n", end) if end.endswith(b"\n") else data[:-1] + end  # the last line's only
    reader = read_qrels if kind == "qrels" else read_run
    read, _ = _read_every_way(reader, data, tmp_path / "r", monkeypatch)
    tidy = reader(io.BytesIO(_tidy(records)))
    assert_frame_equal(read.frame.drop("line"), tidy.frame.drop("line"))
