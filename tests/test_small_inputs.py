"""Small inputs read and evaluated without polars (irspec.data.small) give what the general path gives.

The general path (polars' reader, the frame's ranking) is the reference: every case here is run both
ways, the small readers allowed (the default for files of a few MB) and switched off
(``SMALL_BELOW = 0``), and compared byte for byte: ``irspec eval``'s output in several formats, its
warnings and errors, and the objects the readers make. The random collections reach the corners
(ties, docnos whose string order is not numeric, non-ASCII docnos, queries only in the qrels or only
in the run, empty rankings); the files are written in every way the general reader reads (tabs, runs
not grouped by query, comments, blank lines, CRLF, gzip, a BOM, bad values), so that whatever the
small readers hand over is handed over, and whatever they read is read as the general reader reads it.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from randomdata import random_case

import irspec
import irspec.data.plain as plain
import irspec.data.small as small
from irspec.cli import main
from irspec.data import Qrels, Run
from irspec.data.kinds import RUN
from irspec.data.small import SmallQrels, TextRun, qrels_of_mapping, small_qrels, small_run
from irspec.data.trec import read_text

ROOT = Path(__file__).resolve().parent.parent

METRICS = ["official", "nDCG@10, nDCG, AP@5, P@5, R@100, bpref, RR, Rprec, infAP, NumRet, Judged@10"]
OPTIONS = [[], ["-M", "5"], ["-J"], ["-l", "2"], ["--missing-queries", "skip"], ["-c", "-M", "0"]]


def _lines(d: dict, kind: str, rng: np.random.Generator, shuffle: bool, ascii: bool = True) -> list[str]:
    """The lines of qrels or a run (``kind``) of dicts, each query's in its order or ``shuffle``d; a
    docno with a letter beyond ASCII (which the small readers leave to the general one) written with
    Python's escapes when ``ascii``."""
    out = []
    for q, docs in d.items():
        items = list(docs.items())
        if ascii:
            items = [(doc.encode("ascii", "backslashreplace").decode(), value) for doc, value in items]
        if shuffle:
            items = [items[i] for i in rng.permutation(len(items))]
        for rank, (doc, value) in enumerate(items, 1):
            if kind == "qrels":
                out.append(f"{q} 0 {doc} {value}")
            else:
                out.append(f"{q} Q0 {doc} {rank} {value!r} tag{len(doc) % 3}")
    if shuffle and kind == "qrels":
        out = [out[i] for i in rng.permutation(len(out))]
    return out


def _write(path: Path, lines: list[str], style: str) -> None:
    """``lines`` (fields split by single spaces) written in ``style``."""
    if style == "tabs":
        lines = [line.replace(" ", "\t") for line in lines]
    elif style == "five":  # no runid
        lines = [line.rsplit(" ", 1)[0] if line.count(" ") == 5 else line for line in lines]
    elif style == "seven":
        lines = [f"{line} extra" if line.count(" ") == 5 else line for line in lines]
    elif style == "comment":
        lines = ["# a comment", *lines]
    elif style == "blank":
        lines = [*lines[:1], "", *lines[1:]]
    elif style == "spaces":
        lines = [line.replace(" ", "  ", 1) for line in lines]
    elif style == "crlf":
        lines = [line + "\r" for line in lines]
    elif style == "no-newline":
        path.write_text("\n".join(lines), encoding="utf-8")
        return
    text = "\n".join(lines) + "\n"
    if style == "bom":
        text = "\ufeff" + text
    if style == "gzip":
        path.write_bytes(gzip.compress(text.encode()))
        return
    path.write_text(text, encoding="utf-8")


def _eval(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _both(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], general_kept: dict | None = None
) -> tuple[int, str, str]:
    """``irspec eval``'s exit status, output and errors, the same with the small readers and without.
    ``general_kept``: the general reader's outcomes by ``argv``, for files that stay as they are."""
    general = general_kept.get(tuple(argv)) if general_kept is not None else None
    if general is None:
        with monkeypatch.context() as m:
            m.setattr(small, "SMALL_BELOW", 0)
            general = _eval(argv)
        if general_kept is not None:
            general_kept[tuple(argv)] = general
    fast = _eval(argv)
    if "json" in argv:  # the provenance's date, to the second, may be the next second's
        fast, general = (_dateless(out) for out in (fast, general))
    assert fast == general
    return fast


def _dateless(out: tuple[int, str, str]) -> tuple[int, str, str]:
    rc, text, err = out
    return rc, "\n".join(line for line in text.splitlines() if '"date": ' not in line), err


@pytest.fixture(params=["small", "numpy"])
def used(request, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kinds of input the small readers read (rather than handed over), as they read them: a run by
    irspec.data.small alone (``small``), or by numpy first, irspec.data.small reading what it hands
    over (``numpy``, the default)."""
    found: list[str] = []
    for module, name, kind in (
        (small, "_qrels", "qrels"),
        (small, "_run", "run"),
        (plain, "plain_run", "run"),
    ):
        real = getattr(module, name)

        def spy(*args, real=real, kind=kind):
            made = real(*args)
            if made is not None:
                found.append(kind)
            return made

        monkeypatch.setattr(module, name, spy)
    monkeypatch.setattr(plain, "READS_SMALL", request.param == "numpy")
    return found


# The random collections' files, written once for a seed's two tests (``used``: the small readers'
# ways of reading), and the general reader's outcomes on them, which do not depend on those ways (it
# reads no file of at most SMALL_BELOW bytes with them): computed once, compared with both tests' own.
_RANDOM_FILES: dict[int, list[str]] = {}
_RANDOM_GENERAL: dict[tuple[str, ...], tuple[int, str, str]] = {}


@pytest.mark.parametrize("seed", range(24))
def test_random_collections_evaluate_alike_both_ways(tmp_path_factory, monkeypatch, used, seed):
    qrels, run = random_case(seed, near_ties=seed % 2 == 0, all_negative=seed % 5 == 0)
    ascii = seed % 4 != 3  # now and then a docno beyond ASCII: the general reader's
    if seed not in _RANDOM_FILES:
        rng = np.random.default_rng(seed)
        where = tmp_path_factory.mktemp(f"random{seed}")
        _write(where / "qrels.txt", _lines(qrels, "qrels", rng, shuffle=seed % 3 == 0, ascii=ascii), "plain")
        _write(where / "run.txt", _lines(run, "run", rng, shuffle=seed % 2 == 1, ascii=ascii), "plain")
        _RANDOM_FILES[seed] = [str(where / "qrels.txt"), str(where / "run.txt")]
    files = _RANDOM_FILES[seed]
    for metrics in METRICS:
        for fmt in ("table", "trec", "json", "csv"):
            _both(monkeypatch, ["eval", *files, "-m", metrics, "--format", fmt, "-q"], _RANDOM_GENERAL)
    for options in OPTIONS:
        argv = ["eval", *files, "-m", METRICS[1], "--format", "trec", "-q", *options]
        _both(monkeypatch, argv, _RANDOM_GENERAL)
    # the small readers did read (a run of dicts with no line at all: the general reader's)
    assert set(used) == ({"qrels", "run"} if ascii and any(run.values()) else {"qrels"} if ascii else set())


@pytest.mark.parametrize(
    "style",
    ["plain", "tabs", "five", "seven", "comment", "blank", "spaces", "crlf", "no-newline", "bom", "gzip"],
)
def test_every_way_of_writing_a_file_evaluates_alike(tmp_path, monkeypatch, used, style):
    qrels, run = random_case(7)
    rng = np.random.default_rng(7)
    _write(tmp_path / "qrels.txt", _lines(qrels, "qrels", rng, shuffle=False), style)
    _write(tmp_path / "run.txt", _lines(run, "run", rng, shuffle=True), style)
    for fmt in ("table", "trec"):
        _both(monkeypatch, ["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "--format", fmt])
    read = set(used)
    if style in ("plain", "tabs", "five", "seven", "no-newline"):
        assert read == {"qrels", "run"}
    else:  # what the general reader reads on its slow path (or gunzips) is handed over
        assert read == set()


def _bad_cases() -> list[tuple[str, str, str]]:
    """(what, qrels text, run text): inputs the small readers hand over, read or refused the same."""
    q = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
    r = "q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.5 r\nq2 Q0 d3 1 0.5 r\n"
    return [
        ("a duplicate in the run", q, r + "q2 Q0 d3 2 0.25 r\n"),
        ("a duplicate in the qrels", q + "q2 0 d3 1\n", r),
        ("a run not grouped by query", q, r + "q1 Q0 d9 3 0.1 r\n"),
        ("an infinite score", q, r.replace("0.5", "1e400")),
        ("a NaN score", q, r.replace("0.5", "nan")),
        ("inf", q, r.replace("0.5", "inf")),
        ("a score with an underscore", q, r.replace("1.5", "1_5")),
        ("a hexadecimal score", q, r.replace("1.5", "0x15")),
        ("a score that is no number", q, r.replace("1.5", "1.5.")),
        ("a label that is no integer", q.replace(" 2\n", " 2.0\n"), r),
        ("a label beyond 64 bits", q.replace(" 2\n", " 9223372036854775808\n"), r),
        ("a label at 64 bits", q.replace(" 2\n", " -9223372036854775808\n"), r),
        ("a signed label", q.replace(" 2\n", " +2\n"), r),
        ("signed scores", q, r.replace("2.5", "+2.5").replace("0.5", "-.5e-3")),
        ("too few fields", q, r.replace("q2 Q0 d3 1 0.5 r", "q2 Q0 d3 0.5")),
        ("five fields in qrels", q.replace("q2 0 d3 2", "q2 0 d3 2 x"), r),
        ("a line of its own width", q, r.replace("q2 Q0 d3 1 0.5 r", "q2 Q0 d3 1 0.5")),
        ("non-ASCII docnos", q.replace("d3", "dé"), r.replace("d3", "dé")),
        ("a unit separator", q, r.replace("d2", "d\x1f2")),
        ("a NUL byte", q, r.replace("d2", "d\x002")),
        ("not UTF-8", q, r.replace("d2", "d\xff2")),
        ("an empty run", q, ""),
        ("empty qrels", "", r),
        ("a qrels line with a trailing space", q.replace("q2 0 d3 2\n", "q2 0 d3 2 \n"), r),
        ("a query only in the run", q, r + "q3 Q0 d1 1 1.0 r\n"),
        ("ties", q, "q1 Q0 d1 1 1 r\nq1 Q0 d2 2 1 r\nq1 Q0 d0 3 1 r\nq2 Q0 d3 1 0 r\n"),
        ("a run line ending in a space", q, r.replace("1.5 r\n", "1.5 r \n")),
        ("a run line starting with a space", q, r.replace("q2 Q0", " q2 Q0")),
        ("a blank line at the end", q, r + "\n"),
        ("a line of spaces", q, r + "   \n"),
        ("tabs and spaces", q, r.replace("q2 Q0 d3", "q2\tQ0\td3")),
        ("tabs only", q.replace(" ", "\t"), r.replace(" ", "\t")),
        ("a tab at a line's end", q, r.replace(" ", "\t").replace("1.5\tr\n", "1.5\tr\t\n")),
        ("a comment line inside", q, r.replace("q2 Q0", "# note\nq2 Q0")),
        ("a hash inside a docno", q.replace("d3", "d#3"), r.replace("d3", "d#3")),
        ("a long line", q, r + "q2 Q0 " + "d" * (1 << 20) + " 4 0.1 r\n"),
        ("a form feed", q, r.replace("q2 Q0", "q2\x0cQ0")),
    ]


@pytest.mark.parametrize(("what", "qrels", "run"), _bad_cases(), ids=[c[0] for c in _bad_cases()])
def test_odd_and_bad_inputs_are_read_or_refused_alike(tmp_path, monkeypatch, what, qrels, run):
    (tmp_path / "qrels.txt").write_bytes(
        qrels.encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff")
    )
    (tmp_path / "run.txt").write_bytes(run.encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    for fmt in ("table", "trec"):
        _, _, err = _both(
            monkeypatch, ["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "--format", fmt]
        )
        assert "Traceback" not in err


def _frames_equal(small_made: Qrels | Run, general: Qrels | Run) -> None:
    assert_frame_equal(small_made.frame, general.frame)


@pytest.mark.parametrize("seed", range(12))
def test_the_readers_columns_are_the_general_readers_rows(tmp_path, seed):
    qrels, run = random_case(seed)
    rng = np.random.default_rng(seed)
    _write(tmp_path / "q", _lines(qrels, "qrels", rng, shuffle=True), "plain")
    _write(tmp_path / "r", _lines(run, "run", rng, shuffle=True), "plain")
    read = small_qrels(tmp_path / "q")
    general = Qrels.read(tmp_path / "q")
    assert isinstance(read, SmallQrels)
    query_ids, codes, labels, docnos = read.plain
    frame = general.frame
    assert query_ids == general.query_ids == read.query_ids
    assert [query_ids[c] for c in codes.tolist()] == frame["query"].to_list()
    assert docnos == frame["docno"].to_list()
    assert labels.tolist() == frame["label"].to_list()
    assert len(read) == len(general)
    _frames_equal(read, general)
    text = small_run(tmp_path / "r")
    if not run:  # no line at all: the general reader's
        assert text is None
        return
    assert isinstance(text, TextRun)
    general_run = Run.read(tmp_path / "r")
    assert (text.name, text.source, text.runid) == (general_run.name, general_run.source, general_run.runid)
    assert_frame_equal(text.run.frame, general_run.frame)
    assert len(text) == len(general_run)
    frame = general_run.frame
    rows = dict(zip(zip(frame["query"], frame["docno"], strict=True), frame["score"], strict=True))
    held = {(q, d): s for q, docs in text.mapping_given.items() for d, s in docs.items()}
    assert held == rows
    assert np.array_equal(text.mapping.scores, general_run.frame["score"].to_numpy())


def test_a_subset_of_small_qrels_is_the_general_subset(tmp_path):
    qrels, _ = random_case(3, n_queries=8)
    _write(tmp_path / "q", _lines(qrels, "qrels", np.random.default_rng(0), shuffle=False), "plain")
    read = small_qrels(tmp_path / "q")
    assert read is not None
    rows = np.flatnonzero(np.isin(read.plain[1], [1, 3, 4]))
    sub = read.subset(rows)
    assert_frame_equal(sub.frame, Qrels(Qrels.read(tmp_path / "q").frame[rows], read.source).frame)
    assert sub.query_ids == [read.query_ids[i] for i in (1, 3, 4)]


@pytest.mark.parametrize("seed", range(12))
def test_qrels_of_a_dict_are_the_dict_readers(seed):
    qrels, _ = random_case(seed)
    read = qrels_of_mapping(qrels)
    assert read is not None
    general = Qrels.from_dict(qrels)
    _frames_equal(read, general)
    assert read.plain[3] == general.frame["docno"].to_list()


@pytest.mark.parametrize(
    "qrels",
    [
        {},
        {"q": {}},
        {"q": {"a": 1.0}},
        {"q": {"a": True}},
        {"q": {"a": 2**63}},
        {"q": {"a": 1, 7: 0}},
        {1: {"a": 1}},
        {"q": {"\ud800": 1}},
        {"q": [("a", 1)]},
    ],
)
def test_odd_dicts_of_qrels_are_left_to_the_dict_reader(qrels):
    assert qrels_of_mapping(qrels) is None


@pytest.mark.parametrize("seed", range(8))
def test_evaluate_on_dicts_of_qrels_gives_what_the_dict_reader_gives(seed):
    # irspec.evaluate reads a plain dict of qrels without polars; Qrels.from_dict is the general reader
    qrels, run = random_case(seed, near_ties=seed % 2 == 0, all_negative=seed % 3 == 0)
    for options in ({}, {"relevance_level": 2, "judged_only": True}, {"depth": 5, "missing_queries": "skip"}):
        made = irspec.evaluate(qrels, run, "all_trec, nDCG@10, Judged@5", **options)
        general = irspec.evaluate(Qrels.from_dict(qrels), run, "all_trec, nDCG@10, Judged@5", **options)
        assert made.query_ids == general.query_ids
        assert np.array_equal(made.values, general.values, equal_nan=True)
        assert made.warnings == general.warnings


def test_the_threshold_counts_every_input(tmp_path, monkeypatch):
    (tmp_path / "a").write_text("q 0 d 1\n")
    (tmp_path / "b").write_text("q Q0 d 1 1.0 r\n")
    assert small.small_inputs([tmp_path / "a", str(tmp_path / "b")])
    monkeypatch.setattr(small, "SMALL_BELOW", 20)
    assert not small.small_inputs([tmp_path / "a", tmp_path / "b"])
    assert small.small_inputs([tmp_path / "a"])
    assert not small.small_inputs(["-"])
    assert not small.small_inputs([tmp_path])
    assert not small.small_inputs([{"q": {"d": 1}}])
    assert not small.small_inputs([tmp_path / "missing"])


def test_a_per_query_plugin_metric_gets_the_general_frame(tmp_path, monkeypatch, irspec_plugin):
    # a metric computed query by query reads the ranked frame: made from the same bytes, on demand
    import irspec.plugin_api as api

    class Plugin:
        @api.hookimpl
        def irspec_register_metrics(self, register):
            register(
                api.MetricDef(
                    "FirstDoc",
                    "the length of the first docno",
                    per_query=lambda q, m: float(len(q.docnos[0]) if q.docnos else 0),
                )
            )

    irspec_plugin(Plugin())
    qrels, run = random_case(11)
    rng = np.random.default_rng(1)
    _write(tmp_path / "q", _lines(qrels, "qrels", rng, shuffle=False), "plain")
    _write(tmp_path / "r", _lines(run, "run", rng, shuffle=True), "plain")
    argv = ["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "FirstDoc, AP", "--format", "trec", "-q"]
    _both(monkeypatch, argv)


def test_the_pytrec_eval_drop_in_evaluates_alike_both_ways(monkeypatch):
    import irspec.compat.pytrec_eval as drop_in

    measures = {"map", "ndcg_cut", "P", "recall", "recip_rank", "bpref", "Rprec", "num_rel_ret"}
    for seed in range(8):
        qrels, run = random_case(seed, empty_rankings=False)
        if not run:
            continue
        fast = drop_in.RelevanceEvaluator(qrels, measures).evaluate(run)
        with monkeypatch.context() as m:
            m.setattr(small, "SMALL_BELOW", 0)
            evaluator = drop_in.RelevanceEvaluator(qrels, measures)
            assert not isinstance(evaluator._qrels, SmallQrels)
            general = evaluator.evaluate(run)
        assert json.dumps(fast) == json.dumps(general)


def test_evaluate_reads_small_files_without_polars_and_large_ones_with_it(tmp_path):
    qrels, run = random_case(5)
    rng = np.random.default_rng(5)
    _write(tmp_path / "q", _lines(qrels, "qrels", rng, shuffle=False), "plain")
    _write(tmp_path / "r", _lines(run, "run", rng, shuffle=False), "plain")
    code = (
        "import sys, irspec\n"
        "import irspec.data.small as small\n"
        "small.SMALL_BELOW = int(sys.argv[3])\n"
        "res = irspec.evaluate(sys.argv[1], sys.argv[2], 'nDCG@10, AP')\n"
        "print(res.aggregate(), 'polars' in sys.modules)\n"
    )
    out = {}
    for below in (small.SMALL_BELOW, 0):
        done = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / "q"), str(tmp_path / "r"), str(below)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=True,
        )
        out[below] = done.stdout.split(" True")[0].split(" False")[0], done.stdout.strip().endswith("True")
    assert out[0][0] == out[small.SMALL_BELOW][0]
    assert out == {small.SMALL_BELOW: (out[0][0], False), 0: (out[0][0], True)}


def test_a_small_run_evaluated_against_qrels_read_as_a_frame_and_the_reverse(tmp_path):
    qrels, run = random_case(9)
    rng = np.random.default_rng(9)
    _write(tmp_path / "q", _lines(qrels, "qrels", rng, shuffle=True), "plain")
    _write(tmp_path / "r", _lines(run, "run", rng, shuffle=True), "plain")
    general = irspec.evaluate(Qrels.read(tmp_path / "q"), Run.read(tmp_path / "r"), "official")
    text = small_run(tmp_path / "r")
    read = small_qrels(tmp_path / "q")
    for q, r in ((read, Run.read(tmp_path / "r")), (Qrels.read(tmp_path / "q"), text), (read, text)):
        made = irspec.evaluate(q, r, "official")
        assert made.query_ids == general.query_ids
        assert np.array_equal(made.values, general.values, equal_nan=True)
        assert made.warnings == general.warnings


def test_value_text_reads_as_polars_reads_it(tmp_path):
    # every score the small reader takes is the double polars reads from the same text
    rng = np.random.default_rng(0)
    parts = ["", "+", "-"]
    tokens = []
    for _ in range(3000):
        mantissa = "".join(rng.choice(list("0123456789"), size=int(rng.integers(1, 25))))
        point = int(rng.integers(0, len(mantissa) + 1))
        text = (
            str(rng.choice(parts)) + mantissa[:point] + ("." if rng.random() < 0.7 else "") + mantissa[point:]
        )
        if rng.random() < 0.4:
            text += str(rng.choice(["e", "E"])) + str(rng.choice(parts)) + str(int(rng.integers(0, 330)))
        tokens.append(text)
    lines = [f"q Q0 d{i} {i} {t} r" for i, t in enumerate(tokens)]
    (tmp_path / "r").write_text("\n".join(lines) + "\n")
    general = read_text(tmp_path / "r", RUN).frame["score"].to_numpy()  # unchecked: infinite ones too
    read = [float(t) for t in tokens]
    finite = np.isfinite(general)
    assert np.array_equal(np.array(read)[finite], general[finite])
    text = small_run(tmp_path / "r")
    assert (text is None) == (not finite.all())
    if text is not None:
        assert np.array_equal(text.mapping.scores, general)


def test_a_small_evaluation_imports_no_polars():
    # nor numpy.ma, some 5 ms that numpy 2.4's np.unique imports (for an is_masked check) on first use
    code = (
        "import contextlib, io, sys\nfrom irspec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['eval', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run', 'specs/demo/runs/dense.run']) == 0\n"
        "    assert main(['eval', '-f', 'trec', 'specs/demo/qrels.txt', 'specs/demo/runs/bm25.run']) == 0\n"
        "print('polars' in sys.modules, 'numpy.ma' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "False"]
    assert pl is not None  # the tests themselves use polars


def test_small_qrels_pickle_as_the_general_readers(tmp_path):
    import pickle

    (tmp_path / "q").write_text("q1 0 d2 1\nq1 0 d1 0\nq2 0 d3 2\n")
    read = small_qrels(tmp_path / "q")
    assert isinstance(read, SmallQrels)
    back = pickle.loads(pickle.dumps(read))
    assert type(back) is Qrels and back.source == read.source
    assert_frame_equal(back.frame, Qrels.read(tmp_path / "q").frame)
    mapped = qrels_of_mapping({"q": {"b": 1, "a": 0}})
    assert pickle.loads(pickle.dumps(mapped)).frame.equals(Qrels.from_dict({"q": {"b": 1, "a": 0}}).frame)


@pytest.mark.parametrize(
    "evaluation",
    [
        "pytrec_eval.RelevanceEvaluator(qrels, {'map', 'ndcg_cut', 'P', 'recall'}).evaluate(run)['q1']['map']",
        "irspec.evaluate(qrels, run, 'AP').aggregate()['AP']",
    ],
    ids=["drop-in", "evaluate"],
)
def test_plain_dicts_are_evaluated_without_polars(evaluation):
    # AP: q1's relevant d1 second (0.5); q2's d3 tied with d4, which goes first (docno descending): 0.5
    code = (
        "import sys, warnings\n"
        "import irspec, irspec.compat.pytrec_eval as pytrec_eval\n"
        "qrels = {'q1': {'d1': 1, 'd2': 0}, 'q2': {'d3': 2}}\n"
        "run = {'q1': {'d1': 1.5, 'd2': 2.5, 'd9': 0.5}, 'q2': {'d3': 0.1, 'd4': 0.1}}\n"
        "warnings.simplefilter('ignore')\n"
        f"print({evaluation}, 'polars' in sys.modules, 'numpy.ma' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["0.5", "False", "False"]
