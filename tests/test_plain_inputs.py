"""Large run files read by numpy alone (irspec.data.plain): the same columns as the general reader, the
same values bit for bit, ``None`` (the general reader's turn, its errors) for anything not clean, and
no polars imported by ``irspec eval`` on such a run and its qrels."""

from __future__ import annotations

import gzip
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from shared_data import TREC_EVAL_TEST
from test_conformance import COMMANDS, _argv, _run_cli, _split_args

from irspec import MetricDef, hookimpl
from irspec.data import plain, read_qrels, read_run, small, stream
from irspec.data.small import small_qrels
from irspec.errors import InputError
from irspec.evaluation.evaluate import evaluate_many
from irspec.testing import registered_plugin

METRICS = ["map", "ndcg", "P@5", "recall@10", "Rprec", "recip_rank", "bpref", "ndcg_cut@10", "set_F"]


def _collection(
    tmp_path,
    *,
    seed=0,
    queries=30,
    docs=60,
    scores="%.3f",
    sep=" ",
    fields=6,
    end="\n",
    long_every=0,
    docno="D{:05d}",
    query="{}",
):
    """Qrels (numeric query order, not the general reader's) and a run grouped by query, its lines in no
    order of score, with ties among judged documents, a query the qrels lack and one the run lacks."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, queries + 1):
        judged = rng.choice(docs, size=docs // 3, replace=False)
        qrels += [f"{query.format(q)} 0 {docno.format(d)} {rng.integers(-1, 4)}" for d in sorted(judged)]
    for q in [*range(2, queries + 1), queries + 7]:  # query 1 missing, queries + 7 unknown
        picked = rng.permutation(docs)[: rng.integers(1, docs)]
        values = np.round(rng.normal(0, 2, size=len(picked)), 1)  # ties, judged documents among them
        for i, (d, s) in enumerate(zip(picked, values, strict=True)):
            written = f"{s:.10f}" if long_every and (i + 1) % long_every == 0 else scores % s
            tail = [f"{d % 7}", written, "tag"][: fields - 3]
            run.append(sep.join([query.format(q), "Q0", docno.format(d), *tail]))
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text("\n".join(qrels) + "\n")
    r.write_text("\n".join(run) + end)
    return q, r


def _same_columns(read, general):
    names, lengths = general.query_blocks
    assert read.plain.query_ids == names.to_list()
    assert np.array_equal(read.plain.lengths, lengths)
    docnos = general.frame.get_column("docno").to_list()
    assert [d.decode() for d in read.plain.docnos.tolist()] == docnos
    scores = general.frame.get_column("score").to_numpy()
    assert np.array_equal(read.plain.scores.view(np.int64), scores.view(np.int64))  # bit for bit
    assert (read.name, read.runid, read.source) == (general.name, general.runid, general.source)


@pytest.mark.parametrize(
    "shape",
    [
        {},
        {"long_every": 50},  # some scores longer than 8 characters
        {"sep": "\t"},
        {"fields": 5},
        {"end": ""},  # no line end after the last line
        {"scores": "%.0f"},  # -0 and integers
        {"docno": "clueweb09-en0000-{:05d}-x", "query": "topic-{:04d}"},  # ids of several words
    ],
)
@pytest.mark.parametrize("sizes", [None, (2000, 6000)])
def test_a_clean_run_reads_as_the_general_reader_reads_it(tmp_path, monkeypatch, shape, sizes):
    if sizes is not None:  # slices of 300 bytes, parts of 1,000: queries across slices and parts
        monkeypatch.setattr(plain, "_SLICE", sizes[0])
        monkeypatch.setattr(plain, "_PART", sizes[1])
    _, r = _collection(tmp_path, **shape)
    read = plain.plain_run(str(r))
    assert read is not None
    _same_columns(read, read_run(str(r)))


def test_the_numpy_readers_begin_where_the_small_ones_end():
    assert plain.PLAIN_ABOVE == small.SMALL_BELOW


def test_scores_are_read_as_python_reads_them_bit_for_bit():
    rng = np.random.default_rng(3)
    tokens = []
    for _ in range(50_000):
        k = int(rng.integers(1, 9))
        t = "".join(rng.choice(list("0123456789"), k))
        if k >= 3 and rng.random() < 0.7:
            p = int(rng.integers(1, k - 1))
            t = t[:p] + "." + t[p + 1 :]
        if len(t) < 8 and rng.random() < 0.3:
            t = "-" + t
        tokens.append(t.encode())
    length = np.array([len(t) for t in tokens])
    words = np.array([int.from_bytes(t.ljust(8, b"\0"), "little") for t in tokens], dtype=np.uint64)
    read = plain._decimals(words, length)
    expected = np.array([float(t) for t in tokens])
    assert read is not None and np.array_equal(read.view(np.int64), expected.view(np.int64))
    for bad in [b"-", b".5", b"5.", b"1..2", b"1-2", b"1e5", b"+1", b"--1", b"-.5", b"inf", b"nan", b"1_0"]:
        word = np.array([int.from_bytes(bad.ljust(8, b"\0"), "little")], dtype=np.uint64)
        assert plain._decimals(word, np.array([len(bad)])) is None, bad


def _first_score(text, score):
    first, rest = text.split("\n", 1)
    fields = first.split(" ")
    return " ".join([*fields[:4], score, *fields[5:]]) + "\n" + rest


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: "# a comment\n" + t,
        lambda t: t.replace("\n", "\n\n", 1),  # a blank line
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t.replace("Q0", "Q\u00e9", 1),  # not ASCII
        lambda t: t.replace(" tag", " tag extra", 1),  # a line of more fields
        lambda t: t.replace(" Q0 ", "  Q0 ", 1),  # an empty field
        lambda t: t.replace(" Q0 ", "\tQ0 ", 1),  # tabs and spaces
        lambda t: t + t.splitlines(keepends=True)[0],  # a query's lines apart
        lambda t: t.splitlines(keepends=True)[0] + t,  # a docno twice in a query
        lambda t: t.replace(" D", " D" + "x" * 70, 1),  # a docno longer than 64 bytes
        lambda t: t.replace("\n", " \n", 1),  # a blank at a line's end: an empty field
        lambda t: _first_score(t, "1e5"),  # read by the general reader, not here
        lambda t: _first_score(t, "+1.5"),
        lambda t: _first_score(t, "nan"),
    ],
)
@pytest.mark.parametrize("sizes", [None, (2000, 6000)])
def test_anything_not_clean_is_the_general_readers(tmp_path, monkeypatch, damage, sizes):
    if sizes is not None:
        monkeypatch.setattr(plain, "_SLICE", sizes[0])
        monkeypatch.setattr(plain, "_PART", sizes[1])
    _, r = _collection(tmp_path)
    r.write_text(damage(r.read_text()))
    assert plain.plain_run(str(r)) is None


def test_gzip_and_what_is_not_a_file_are_the_general_readers(tmp_path):
    _, r = _collection(tmp_path)
    z = tmp_path / "run.txt.gz"
    z.write_bytes(gzip.compress(r.read_bytes()))
    for src in (str(z), str(tmp_path / "missing.txt"), str(tmp_path), {"q": {"d": 1.0}}):
        assert plain.plain_run(src) is None


@pytest.mark.parametrize("order", ["as written", "shuffled"])
def test_qrels_read_by_numpy_are_those_of_the_small_reader(tmp_path, order):
    q, _ = _collection(tmp_path)
    if (
        order == "shuffled"
    ):  # a query's lines apart, its docnos in no order: sorted as the general reader sorts
        lines = q.read_text().splitlines(keepends=True)
        q.write_text("".join(np.random.default_rng(5).permutation(lines)))
    read, small = plain.plain_qrels(str(q)), small_qrels(str(q))
    assert read is not None and small is not None
    assert read.plain[0] == small.plain[0] and read.plain[3] == small.plain[3]
    assert np.array_equal(read.plain[1], small.plain[1]) and np.array_equal(read.plain[2], small.plain[2])
    assert read.frame.equals(read_qrels(str(q)).frame)  # the general reader's, made when asked for
    for bad in ("1 0 D1 1.0\n", "1 0 D1 x\n", "1 0 D00000 1\n1 0 D00000 2\n", "1 0 D1 1 extra\n"):
        q.write_text(bad)
        assert plain.plain_qrels(str(q)) is None


def _evaluated(q, r, monkeypatch, *, numpy_reads, metrics=None):
    monkeypatch.setattr(small, "SMALL_BELOW", 0)  # not the small readers'
    monkeypatch.setattr(stream, "STREAM_ABOVE", 1)  # the run streams, or is begun by numpy
    monkeypatch.setattr(plain, "PLAIN_ABOVE", 1 if numpy_reads else 1 << 40)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (result,) = evaluate_many(str(q), [str(r)], metrics or METRICS, memory="4GiB")
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize(
    "shape",
    [
        {},
        {"long_every": 20},
        {"sep": "\t", "fields": 5},
        {"parts": True},
        {"docno": "clueweb09-en0000-{:05d}-x", "query": "topic-{:04d}"},
    ],
)
def test_a_run_read_by_numpy_evaluates_as_the_streamed_one_bit_for_bit(tmp_path, monkeypatch, shape):
    if shape.pop("parts", False):  # evaluated a part at a time
        monkeypatch.setattr(plain, "_SLICE", 300)
        monkeypatch.setattr(plain, "_PART", 1000)
    q, r = _collection(tmp_path, **shape)
    begun = []
    real = plain.read_plain
    monkeypatch.setattr(plain, "read_plain", lambda p: begun.append(real(p)) or begun[-1])
    ours, told = _evaluated(q, r, monkeypatch, numpy_reads=True)
    assert [(b.path, b.whole) for b in begun] == [(str(r), True)]  # read by numpy to its end
    theirs, expected = _evaluated(q, r, monkeypatch, numpy_reads=False)
    assert ours.query_ids == theirs.query_ids
    assert np.array_equal(ours.values, theirs.values, equal_nan=True)
    assert (ours.run_name, ours.runid) == (theirs.run_name, theirs.runid)
    assert told == expected  # the missing and unknown queries, the coverage: said alike


def test_a_part_numpy_cannot_rank_is_evaluated_from_its_own_lines(tmp_path, monkeypatch):
    """A run read a part at a time whose parts each hold queries of very unequal lengths (one of 120
    lines, then six of 2): numpy's matrix of a part would more than double its work, so each part is
    evaluated from its frame. That frame was the whole file's, so every query came back once per such
    part (issue found on a 6.9 MB run: num_q 1141 for 1000 queries); a per-query metric saw docnos
    gathered from other queries' rows. Each part's frame is its own lines, as the general reader reads
    them: the values, queries and a per-query metric are the streamed reader's."""
    monkeypatch.setattr(plain, "_SLICE", 300)
    monkeypatch.setattr(plain, "_PART", 1000)
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    rng = np.random.default_rng(11)
    lengths = [120 if i % 7 == 0 else 2 for i in range(56)]
    q.write_text("".join(f"{i} 0 D{d:04d} {d % 3}\n" for i in range(56) for d in range(0, 160, 5)))
    r.write_text(
        "".join(
            f"{i} Q0 D{d:04d} 0 {s:.1f} tag\n"  # one decimal: ties among the judged documents
            for i, n in enumerate(lengths)
            for d, s in zip(rng.permutation(160)[:n], rng.normal(size=n), strict=True)
        )
    )
    begun = []
    real = plain.read_plain
    monkeypatch.setattr(plain, "read_plain", lambda p: begun.append(real(p)) or begun[-1])
    with registered_plugin(_FirstDocument):
        metrics = [*METRICS, "P@1", "FirstDocument"]
        ours, told = _evaluated(q, r, monkeypatch, numpy_reads=True, metrics=metrics)
        assert [(b.path, b.whole) for b in begun] == [(str(r), True)]
        theirs, expected = _evaluated(q, r, monkeypatch, numpy_reads=False, metrics=metrics)
    assert ours.query_ids == theirs.query_ids and len(ours.query_ids) == 56
    assert np.array_equal(ours.values[:, -1], ours.values[:, -2])  # the docnos are the query's own
    assert np.array_equal(ours.values, theirs.values, equal_nan=True)
    assert told == expected


class _FirstDocument:
    """A per-query plugin metric reading the ranking's docnos: 1 when the first is relevant (P@1)."""

    @staticmethod
    @hookimpl
    def irspec_register_metrics(register):
        register(MetricDef("FirstDocument", "P@1 from the docnos", per_query=_first_document))


def _first_document(query, metric):
    return float(bool(query.docnos) and query.qrels.get(query.docnos[0], 0) >= 1)


def test_a_run_read_by_numpy_and_ranked_already_evaluates_alike(tmp_path, monkeypatch):
    q, r = _collection(tmp_path)
    lines = [line.split(" ") for line in r.read_text().splitlines()]
    # each query's lines by score descending (stable: ties in file order), as most run files are
    ranked = sorted(lines, key=lambda f: -float(f[4]))
    ranked = sorted(ranked, key=lambda f: [g[0] for g in lines].index(f[0]))
    r.write_text("".join(" ".join(f) + "\n" for f in ranked))
    ours, _ = _evaluated(q, r, monkeypatch, numpy_reads=True)
    theirs, _ = _evaluated(q, r, monkeypatch, numpy_reads=False)
    assert np.array_equal(ours.values, theirs.values, equal_nan=True)


def test_a_bad_run_begun_by_numpy_is_reported_as_the_general_reader_reports_it(tmp_path, monkeypatch):
    q, r = _collection(tmp_path)
    text = r.read_text()
    r.write_text(text + text.splitlines(keepends=True)[-1])  # the last line twice: a duplicate
    errors = []
    for numpy_reads in (True, False):
        with pytest.raises(InputError) as e:
            _evaluated(q, r, monkeypatch, numpy_reads=numpy_reads)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_irspec_eval_on_a_large_clean_run_imports_no_polars(tmp_path):
    q, r = _collection(tmp_path, queries=600, docs=600, scores="%.4f")  # ~6 MB: above the small reader's
    assert r.stat().st_size > plain.PLAIN_ABOVE
    code = (
        "import sys, contextlib, io\n"
        "from irspec.cli import main\n"
        "from irspec.data import stream\n"
        "stream.STREAM_ABOVE = 1 << 20  # streamed (begun early) from 1 MiB, not 16\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main(['eval', {str(q)!r}, {str(r)!r}, '-q', '-m', 'official', '--format', 'trec'])\n"
        "print(status, 'polars' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_trec_evals_own_commands_print_the_same_lines_with_the_numpy_readers(name, tmp_path, monkeypatch):
    """Every command of trec_eval's test table (tests/test_conformance.py, which holds the general readers
    to trec_eval's printed lines) on its files with each line's blanks made single spaces (what the
    general reader reads them as: the numpy readers' clean shape), read by the numpy readers from 0
    bytes on: the lines the general readers print for the files as they are."""
    if not TREC_EVAL_TEST.is_dir():
        pytest.fail(f"trec_eval's test data not found at {TREC_EVAL_TEST}")
    flags, measures, files = _split_args(COMMANDS[name][1])
    monkeypatch.setattr(small, "SMALL_BELOW", 0)
    general = _run_cli(_argv(flags, measures, files))
    clean = []
    for f in files:
        path = tmp_path / Path(f).name
        path.write_text("".join(" ".join(line.split()) + "\n" for line in Path(f).read_text().splitlines()))
        clean.append(str(path))
    read = []
    real = plain._parts
    monkeypatch.setattr(plain, "_parts", lambda path, *rest: read.append(path) or real(path, *rest))
    monkeypatch.setattr(plain, "PLAIN_ABOVE", 0)
    ours = _run_cli(_argv(flags, measures, clean))
    assert read  # the run was read by numpy
    assert (ours.code, ours.stdout, repr(ours.error)) == (general.code, general.stdout, repr(general.error))
    assert ours.stderr == general.stderr.replace(str(TREC_EVAL_TEST), str(tmp_path))


def test_a_reading_stopped_early_leaves_no_thread(tmp_path, monkeypatch):
    monkeypatch.setattr(plain, "_SLICE", 300)
    monkeypatch.setattr(plain, "_PART", 300)  # more parts than are read ahead: the reader waits for a taker
    _, r = _collection(tmp_path)
    reading = plain.read_plain(str(r))
    parts = reading.parts()
    next(parts)
    reading.close()
    assert not reading._thread.is_alive()
    reading.close()  # twice: nothing more


def _small_evaluations(q, r, monkeypatch) -> tuple[list[str], object, object]:
    """``irspec eval`` of a small run as it is by default (whatever numpy read recorded) and by the
    general reader, in this process."""
    read: list[str] = []
    real = plain.plain_run

    def spy(src, *rest):
        made = real(src, *rest)
        if made is not None:
            read.append(str(src))
        return made

    monkeypatch.setattr(plain, "plain_run", spy)
    argv = ["eval", str(q), str(r), "-m", ",".join(METRICS), "--format", "trec", "-q"]
    ours = _run_cli(argv)
    with monkeypatch.context() as m:
        m.setattr(small, "SMALL_BELOW", 0)
        general = _run_cli(argv)
    return read, ours, general


@pytest.mark.parametrize(
    "shape", [{}, {"long_every": 20}, {"sep": "\t", "fields": 5}, {"docno": "clueweb09-en0000-{:05d}-x"}]
)
def test_a_small_clean_run_is_read_by_numpy_and_evaluates_as_the_general_reader(tmp_path, monkeypatch, shape):
    q, r = _collection(tmp_path, **shape)
    assert small.small_inputs([q, r])
    read, ours, general = _small_evaluations(q, r, monkeypatch)
    assert read == [str(r)]  # read by numpy, whole, once
    assert (ours.code, ours.stdout, ours.stderr, ours.error) == (
        general.code,
        general.stdout,
        general.stderr,
        None,
    )


def test_a_small_run_numpy_cannot_rank_is_evaluated_from_its_frame_as_the_general_readers(
    tmp_path, monkeypatch
):
    """A run whose queries' lengths are so unequal that numpy's matrix of them would more than double the
    work (one query of 400 lines, 39 of 2): read by numpy, then evaluated from the general reader's frame
    of the same file, with the general reader's values."""
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    lengths = [400] + [2] * 39
    rng = np.random.default_rng(3)
    q.write_text("".join(f"{i} 0 D{d:04d} {d // 3 % 3}\n" for i in range(1, 41) for d in range(0, 40, 3)))
    r.write_text(
        "".join(
            f"{i} Q0 D{d:04d} 0 {s:.2f} tag\n"
            for i, n in enumerate(lengths, 1)
            for d, s in zip(
                rng.permutation(40)[:n] if n < 40 else rng.permutation(500)[:n],
                np.round(rng.normal(size=n), 2),
                strict=True,
            )
        )
    )
    read, ours, general = _small_evaluations(q, r, monkeypatch)
    assert read == [str(r)]
    assert (ours.code, ours.stdout, ours.stderr, ours.error) == (
        general.code,
        general.stdout,
        general.stderr,
        None,
    )
    assert "\tall\t" in ours.stdout and "map\tall\t0.0000" not in ours.stdout  # some relevant retrieved


def test_irspec_eval_on_a_small_clean_run_reads_it_in_its_own_thread_without_polars(tmp_path):
    q, r = _collection(tmp_path)
    code = (
        "import sys, contextlib, io\n"
        "from irspec.cli import main\n"
        "from irspec.data import plain\n"
        "read = []\n"
        "real = plain.plain_run\n"
        "plain.plain_run = lambda *a: (lambda made: read.append(made is not None) or made)(real(*a))\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main(['eval', {str(q)!r}, {str(r)!r}, '-q', '-m', 'official', '--format', 'trec'])\n"
        "print(status, 'polars' in sys.modules, 'threading' in sys.modules, read)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False", "False", "[True]"]
