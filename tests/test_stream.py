"""Streaming a run in blocks of whole queries (irspec.data.stream): the same Result as reading it whole.

The oracle is irspec's in-memory path on the same file, bit for bit: streaming must not change a
single per-query value, mean, warning, name or query order. The blocks are made tiny (a few lines of
text each, so no block holds more than a few queries and nearly every query is cut across chunks),
and the random cases of tests/randomdata.py reach the corners (ties, unjudged and negative labels,
queries only in the qrels or only in the run, empty and long rankings).
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from cli_run import irspec_cli
from randomdata import random_case

import irspec
from irspec.cli import main as cli_main
from irspec.data import small, stream
from irspec.data.trec import BOM
from irspec.errors import EvaluationError, InputError
from irspec.spec.definitions import MetricDef, Param

TINY = 150  # bytes of text per block: a handful of lines


def _precision_at(query, metric):  # a plugin's per-query function, run once per query
    k = metric.get("k")
    return sum(1 for v in query.labels[:k] if v is not None and v >= query.relevance_level) / k


class _SlowPlugin:
    @irspec.hookimpl
    def irspec_register_metrics(self, register):
        register(
            MetricDef(
                "SlowP",
                "precision, per query",
                (Param("k", "int", 10, "cutoff", minimum=1),),
                at="k",
                per_query=_precision_at,
            )
        )


METRICS = ["official", "all_trec", "relstring@15", "SlowP@3", "nDCG@5", "Rndcg", "G", "ndcg_rel"]


def _write(tmp: Path, seed: int, order: str, compress: bool = False) -> tuple[Path, Path]:
    """The random case ``seed`` as TREC files; the run grouped by query (queries in a random order, a
    query's lines in a random order) or scattered (every line anywhere). Every line but the last has
    runid 'early', the last 'late': the run's runid must come from the last line."""
    qrels, run = random_case(seed)
    rng = np.random.default_rng(seed + 1000)
    q = tmp / f"qrels{seed}.txt"
    q.write_text("".join(f"{qid} 0 {d} {lab}\n" for qid, docs in qrels.items() for d, lab in docs.items()))
    queries = list(run)
    rng.shuffle(queries)
    lines = []
    for qid in queries:
        docs = list(run[qid].items())
        rng.shuffle(docs)
        lines += [f"{qid} Q0 {d} {i} {s!r} early" for i, (d, s) in enumerate(docs, 1)]
    if order == "scattered":
        rng.shuffle(lines)
    if lines:
        lines[-1] = lines[-1][: -len("early")] + "late"
    r = tmp / f"run{seed}-{order}.txt" if not compress else tmp / f"run{seed}-{order}.txt.gz"
    text = "".join(line + "\n" for line in lines).encode()
    r.write_bytes(gzip.compress(text) if compress else text)
    return q, r


@pytest.fixture
def tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``memory=1`` every run file streams, in blocks of TINY bytes."""
    monkeypatch.setattr(stream, "MIN_BLOCK", TINY)


def _same(a: irspec.evaluation.result.Result, b: irspec.evaluation.result.Result) -> None:
    assert b.query_ids == a.query_ids
    assert [str(m) for m in b.metrics] == [str(m) for m in a.metrics]
    # bit for bit: the float64 bit patterns (NaN where NaN) are equal
    assert np.array_equal(a.values.view(np.int64), b.values.view(np.int64))
    assert b.texts == a.texts
    assert repr(b.aggregate()) == repr(a.aggregate())  # repr: NaN == NaN, and every digit
    assert b.warnings == a.warnings
    assert repr(b.judged_at_10) == repr(a.judged_at_10)
    assert (b.run_name, b.run_source, b.runid) == (a.run_name, a.run_source, a.runid)


OPTIONS = [
    {},
    {"depth": 4},
    {"judged_only": True},
    {"missing_queries": "skip"},
    {"relevance_level": 2, "depth": 30},
]


@pytest.mark.parametrize("order", ["grouped", "scattered"])
@pytest.mark.parametrize("seed", range(8))
def test_streamed_result_is_the_in_memory_result_bit_for_bit(
    tmp_path, tiny_blocks, irspec_plugin, seed, order
):
    irspec_plugin(_SlowPlugin())
    q, r = _write(tmp_path, seed, order)
    metrics = METRICS
    for options in (OPTIONS[0], OPTIONS[1 + seed % 4]):  # each option twice in each order
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", irspec.IrspecWarning)
            whole = irspec.evaluate(str(q), str(r), metrics, **options)
            streamed = irspec.evaluate(str(q), str(r), metrics, memory=1, **options)
        _same(whole, streamed)
    assert (whole.run_name, whole.runid) == (f"run{seed}-{order}", "late")


@pytest.mark.parametrize("order", ["grouped", "scattered"])
def test_judgment_coverage_is_the_whole_runs_and_told_once(tmp_path, tiny_blocks, order):
    """Judged@10 and its warning come from every block together: the same mean (in query-id order) and
    one warning, as when the run is read whole (a threshold of 1 makes the random run warn)."""
    q, r = _write(tmp_path, 2, order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        whole = irspec.evaluate(str(q), str(r), "P@10", judged_warning=1.0)
        streamed = irspec.evaluate(str(q), str(r), "P@10", judged_warning=1.0, memory=1)
    _same(whole, streamed)
    assert whole.judged_at_10 is not None
    assert sum("top 10 documents are in the qrels" in w for w in streamed.warnings) == 1


@pytest.mark.parametrize("order", ["grouped", "scattered"])
def test_blocks_hold_whole_queries_and_few_of_them(tmp_path, tiny_blocks, order):
    _q, r = _write(tmp_path, 3, order)
    with stream.open_run(str(r), 1) as blocks:
        assert isinstance(blocks, stream.RunBlocks)
        seen: list[set[str]] = []
        events = []
        for block in blocks:
            if block is stream.DISCARD:  # scattered: what came before is void
                assert order == "scattered" and blocks.partitions is None
                seen, events = [], [*events, block]
                continue
            assert isinstance(block, irspec.Run)
            seen.append(set(block.frame.get_column("query").to_list()))
        assert (blocks.partitions is not None) == (order == "scattered")
        assert events == ([stream.DISCARD] if order == "scattered" else [])
    lines = [line.split() for line in r.read_text().splitlines()]
    assert len(seen) > 3 and max(len(s) for s in seen) <= 3
    # every query in exactly one block, with all its lines
    assert sum(len(s) for s in seen) == len({f[0] for f in lines})


def test_a_gzip_run_streams_to_the_same_result(tmp_path, tiny_blocks):
    q, r = _write(tmp_path, 5, "grouped", compress=True)
    _same(irspec.evaluate(str(q), str(r), "official"), irspec.evaluate(str(q), str(r), "official", memory=1))


def test_missing_queries_are_those_missing_from_the_whole_run(tmp_path, tiny_blocks):
    q = tmp_path / "qrels.txt"
    q.write_text("a 0 d1 1\nb 0 d1 1\nc 0 d2 1\n")
    r = tmp_path / "run.txt"
    # b is in the run, in a block of its own; c is missing from the whole run; x is not in the qrels
    r.write_text(
        "a Q0 d1 1 2.0 t\na Q0 d2 2 1.0 t\nx Q0 d1 1 3.0 t\nx Q0 d9 2 1.0 t\nb Q0 d1 1 1.5 t\nb Q0 d5 2 1.0 t\n"
    )
    for how in ("zero", "skip"):
        whole = irspec.evaluate(str(q), str(r), "P@1, NumQ, NumRel", missing_queries=how)
        streamed = irspec.evaluate(str(q), str(r), "P@1, NumQ, NumRel", missing_queries=how, memory=1)
        _same(whole, streamed)
        assert streamed.query_ids == (("a", "b", "c") if how == "zero" else ("a", "b"))
        # one warning about x, one about c: not one per block
        assert sum("not in the qrels" in w for w in streamed.warnings) == 1
        assert sum("missing from the run" in w for w in streamed.warnings) == 1
    with pytest.raises(EvaluationError) as whole_error:
        irspec.evaluate(str(q), str(r), "P@1", missing_queries="error")
    with pytest.raises(EvaluationError) as streamed_error:
        irspec.evaluate(str(q), str(r), "P@1", missing_queries="error", memory=1)
    assert str(streamed_error.value) == str(whole_error.value)
    assert "1 qrels query is missing from the run ('c')" in str(streamed_error.value)


def test_a_duplicate_across_blocks_of_a_scattered_run_is_an_error_naming_its_line(tmp_path, tiny_blocks):
    q, r = _write(tmp_path, 2, "scattered")
    lines = r.read_text().splitlines(keepends=True)
    victim = lines[3]
    lines.insert(len(lines) - 5, victim)  # far from the first: other chunks, other blocks
    r.write_text("".join(lines))
    with pytest.raises(InputError) as whole:
        irspec.evaluate(str(q), str(r), "P@5")
    with pytest.raises(InputError) as streamed:
        irspec.evaluate(str(q), str(r), "P@5", memory=1)
    assert str(streamed.value) == str(whole.value)
    assert str(streamed.value).startswith(f"{r}:{len(lines) - 5}: ")
    assert "(first on line 4)" in str(streamed.value)


def test_a_bad_line_far_in_the_file_is_named_by_its_line(tmp_path, tiny_blocks):
    q, r = _write(tmp_path, 4, "grouped")
    lines = r.read_text().splitlines(keepends=True)
    lines[-3] = "q1 Q0 d1 1 notanumber t\n"
    r.write_text("".join(lines))
    with pytest.raises(InputError) as streamed:
        irspec.evaluate(str(q), str(r), "P@5", memory=1)
    assert (
        str(streamed.value) == f"{r}:{len(lines) - 2}: query 'q1': score must be a number, got 'notanumber'"
    )


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1GiB", 2**30),
        ("500MB", 500 * 10**6),
        ("1.5 gib", 3 * 2**29),
        ("2000", 2000),
        (4096, 4096),
        ("64k", 64000),
    ],
)
def test_memory_sizes(text, size):
    assert stream.parse_memory(text) == size


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "1XB",
            "memory '1XB': unknown unit 'XB' at position 2; expected B, kB, MB, GB, TB, KiB, MiB, GiB or TiB",
        ),
        (
            "GiB",
            "memory 'GiB': unexpected 'G' at position 1; expected a number and a unit, such as '500MB' or '1GiB'",
        ),
        (
            "1G B",
            "memory '1G B': unexpected 'B' at position 4; expected a number and a unit, such as '500MB' or '1GiB'",
        ),
        ("0MB", "memory must be more than 0 bytes, got '0MB'"),
        (True, "memory must be a size such as '500MB' or '1GiB', got True"),
    ],
)
def test_bad_memory_sizes_say_where(text, message):
    with pytest.raises(EvaluationError) as e:
        stream.parse_memory(text)
    assert str(e.value) == message


NINES = "9" * 400  # a number no float holds: float() gives inf, an int overflows every float division


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (NINES, "'" + "9" * 77 + "...'"),
        (NINES + "GiB", "'" + "9" * 77 + "...'"),
        (NINES + ".5 kB", "'" + "9" * 77 + "...'"),
        (int(NINES), "9" * 77 + "..."),
        ("1025 TiB", None),  # under the bound: a size
        (2**60 + 1, str(2**60 + 1)),
        ("1048577 TiB", "'1048577 TiB'"),  # 2**60 + 2**40 bytes
        ("1" + "0" * 30, "'1" + "0" * 30 + "'"),
    ],
    ids=[
        "400 digits",
        "400 digits GiB",
        "400 digits.5 kB",
        "int of 400 digits",
        "1025 TiB",
        "2**60 + 1",
        "1048577 TiB",
        "1e30",
    ],
)
def test_a_size_past_any_memory_is_refused_by_a_bound(value, shown):
    # 1 EiB = 2**60 bytes, the bound: the largest machines have tens of TiB
    if shown is None:
        assert stream.parse_memory(value) == 1025 * 2**40
        return
    with pytest.raises(EvaluationError) as e:
        stream.parse_memory(value)
    assert (
        str(e.value)
        == f"memory {shown}: more than 1 EiB (1152921504606846976 bytes), past any machine's memory"
    )


def test_the_largest_size_is_exact():
    assert stream.parse_memory(2**60) == stream.parse_memory("1048576TiB") == stream.MAX_MEMORY == 2**60
    assert stream.parse_memory("1048575.9999999999999999999 TiB") == 2**60 - 1  # no float rounding on the way
    assert stream.parse_memory("1." + "0" * 60 + " KiB") == 1024  # many digits, a small size


def test_a_huge_memory_is_one_line_from_the_cli_and_a_plan_problem(tmp_path, capsys):
    from irspec.plan import load_plan

    q, r = _write(tmp_path, 7, "grouped")
    out = irspec_cli(capsys, "eval", str(q), str(r), "--memory", NINES)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("irspec: error: --memory: memory '999") and out.stderr.count("\n") == 1
    assert "more than 1 EiB" in out.stderr and len(out.stderr) < 200
    plan = tmp_path / "plan.yaml"
    for value in (NINES, f"'{NINES}MB'"):
        plan.write_text(f"qrels: {q.name}\nruns: [{r.name}]\nmetrics: [AP]\noptions:\n  memory: {value}\n")
        with pytest.raises(irspec.PlanError) as e:
            load_plan(plan)
        assert len(e.value.problems) == 1 and e.value.problems[0].startswith(
            f"{plan}:5: options.memory: memory "
        )
        assert "more than 1 EiB" in e.value.problems[0] and len(e.value.problems[0]) - len(str(plan)) < 200


def test_the_default_budget_is_half_the_available_memory_at_most_2_gib(monkeypatch):
    monkeypatch.setattr(stream, "_available_memory", lambda: 16 * 2**30)
    assert stream.default_memory() == 2 * 2**30
    monkeypatch.setattr(stream, "_available_memory", lambda: 3 * 2**30)
    assert stream.default_memory() == 1.5 * 2**30


def test_small_runs_are_read_whole(tmp_path, monkeypatch):
    # what the process holds counts against the budget: pinned, as a worker that imported torch holds 1 GiB
    monkeypatch.setattr(stream, "_resident", lambda: 200 << 20)
    monkeypatch.setattr(stream, "_available_memory", lambda: 8 << 30)
    _q, r = _write(tmp_path, 1, "scattered")
    assert isinstance(stream.open_run(str(r)), irspec.Run)
    assert isinstance(stream.open_run(str(r), "1GiB"), irspec.Run)


def _reading_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("irspec-read")]


def test_open_runs_reads_the_next_small_run_ahead_and_gives_what_open_run_gives(tmp_path):
    paths = [
        str(_write(tmp_path, seed, order)[1])
        for seed, order in ((1, "grouped"), (2, "scattered"), (3, "grouped"))
    ]
    runs = stream.open_runs(paths)
    first = next(runs)
    assert _reading_threads()  # the second run is being read (or was) while the caller has the first
    got = [first, *runs]
    assert not _reading_threads()
    for path, run in zip(paths, got, strict=True):
        alone = stream.open_run(path)
        assert isinstance(run, irspec.Run)
        assert run.frame.equals(alone.frame) and (run.name, run.source, run.runid) == (
            alone.name,
            alone.source,
            alone.runid,
        )


def test_open_runs_finds_a_run_read_aheads_query_blocks_on_its_worker(tmp_path):
    paths = [str(_write(tmp_path, seed, "scattered")[1]) for seed in (1, 2, 3)]
    got = list(stream.open_runs(paths))
    # the first is opened at its turn (nothing found early); those read ahead come with their blocks,
    # the blocks the reader would find (a run's rows in file order: an id heads a block per run of rows)
    assert ["query_blocks" in run.__dict__ for run in got] == [False, True, True]
    for path, run in zip(paths, got, strict=True):
        ids = [line.split()[0] for line in Path(path).read_text().splitlines()]
        heads = [q for i, q in enumerate(ids) if i == 0 or ids[i - 1] != q]
        assert run.query_blocks[0].to_list() == heads
        assert run.query_blocks[1].tolist() == [len(list(g)) for _, g in itertools.groupby(ids)]


def test_open_runs_reads_two_ahead_and_makes_a_made_run_at_its_turn(tmp_path):
    # READ_AHEAD small files are read on two workers; a made run (a plan's fused one) is made when the
    # caller asks for it, and the files after it are read ahead from there, all in the order given
    files = [str(_write(tmp_path, seed, "grouped")[1]) for seed in (1, 2, 3, 4)]
    made: list[int] = []

    def fused():
        made.append(len(made))
        return irspec.read_run(files[0])

    paths = [files[0], files[1], fused, files[2], files[3]]
    runs = stream.open_runs(paths)
    got = [next(runs)]
    assert stream.READ_AHEAD == 2 and len(_reading_threads()) == 1  # the made run stops the reading ahead
    got.append(next(runs))
    assert made == []
    got.append(next(runs))
    assert made == [0] and len(_reading_threads()) == 2  # the two files after it, on two workers
    got += list(runs)
    assert not _reading_threads()
    expected = [files[0], files[1], files[0], files[2], files[3]]
    for path, run in zip(expected, got, strict=True):
        assert run.frame.equals(stream.open_run(path).frame)


def test_open_runs_raises_a_bad_runs_error_at_its_turn(tmp_path):
    good = str(_write(tmp_path, 1, "grouped")[1])
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 notanumber tag\n")
    runs = stream.open_runs([good, str(bad), good])
    assert isinstance(next(runs), irspec.Run)  # the bad run, read ahead meanwhile, does not stop this one
    with pytest.raises(InputError, match=r"bad\.txt:2: .*score must be a number"):
        next(runs)
    assert not _reading_threads()


def test_open_runs_reads_nothing_ahead_beyond_the_memory_budget(tmp_path):
    paths = [str(_write(tmp_path, seed, "grouped")[1]) for seed in (1, 2)]
    runs = stream.open_runs(paths, "1MiB")  # less than this process holds: no room to read ahead
    next(runs)
    assert not _reading_threads()
    assert isinstance(next(runs), (irspec.Run, stream.RunBlocks))


def test_a_streamed_runs_next_chunk_is_parsed_on_a_worker_while_a_block_is_evaluated(tmp_path, tiny_blocks):
    # issue 23: reading overlaps evaluating, both cores busy; the blocks are those the other tests check
    _, r = _write(tmp_path, 3, "grouped")
    with stream.open_run(str(r), 1) as blocks:
        found = iter(blocks)
        first = next(found)
        assert isinstance(first, irspec.Run) and _reading_threads()
        assert stream.DISCARD not in list(found)
        assert not _reading_threads()


@pytest.mark.parametrize("order", ["grouped", "scattered"])
def test_blocks_are_made_and_checked_on_a_worker_and_a_late_duplicate_comes_at_its_turn(
    tmp_path, tiny_blocks, order, monkeypatch
):
    # issue 23: hashing and the duplicate check run ahead on a worker thread; a duplicate found there
    # is raised when the caller asks for its block, after every block before it, naming its line
    _, r = _write(tmp_path, 5, order)
    lines = r.read_text().splitlines(keepends=True)
    q, _, d = lines[-2].split()[:3]
    lines.insert(len(lines) - 1, f"{q} Q0 {d} 1 0.5 dup\n")  # a duplicate of the line before it
    r.write_text("".join(lines))
    threads = set()

    def checked(*args, **kwargs):
        threads.add(threading.current_thread().name)
        return real(*args, **kwargs)

    real = stream.checked
    monkeypatch.setattr(stream, "checked", checked)
    given = []
    with stream.open_run(str(r), 1) as blocks, pytest.raises(InputError) as error:
        for block in blocks:
            given.append(block)
    assert str(error.value).startswith(f"{r}:{len(lines) - 1}: ") and "duplicate docno" in str(error.value)
    if order == "grouped":  # a scattered run's partitions come in any order
        assert len(given) > 1 and stream.DISCARD not in given
    assert threads and threading.current_thread().name not in threads


@pytest.mark.parametrize("order", ["grouped", "scattered"])
def test_a_streamed_run_stopped_early_leaves_no_reader_behind(tmp_path, tiny_blocks, order):
    _, r = _write(tmp_path, 3, order)
    with stream.open_run(str(r), 1) as blocks:
        found = iter(blocks)
        next(found)
        found.close()
        assert not _reading_threads()


class _Terminal:
    """What the progress line writes, as a terminal would receive it."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_progress_shows_lines_read_and_queries_evaluated(tmp_path, tiny_blocks, monkeypatch):
    q, r = _write(tmp_path, 6, "grouped")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    irspec.evaluate(str(q), str(r), "P@5", memory=1)
    assert re.search(
        r"\rirspec: streaming [0-9,]+ lines read, [0-9,]+ queries evaluated \(run6-grouped.txt\)",
        terminal.text,
    )
    assert terminal.text.endswith("\r")  # erased when done


# --------------------------------------------------------------------------------------------------
# The command line: --memory, standard input, temporary files


def _irspec(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "irspec", *args], check=False, capture_output=True, text=True, **kwargs
    )


def test_cli_memory_streams_stdin_to_the_same_output(tmp_path):
    q, r = _write(tmp_path, 7, "scattered")
    # trec_eval's lines: standard input has no file name to name the run by, but the same runid line
    whole = _irspec("eval", str(q), str(r), "-q", "-m", "official", "-f", "trec")
    streamed = _irspec(
        "eval", str(q), "-", "-q", "-m", "official", "-f", "trec", "--memory", "1B", stdin=r.open()
    )
    assert whole.returncode == streamed.returncode == 0
    assert streamed.stdout == whole.stdout  # the same runid, lines and digits
    assert "runid                 \tall\tlate\n" in whole.stdout
    assert streamed.stderr == whole.stderr.replace(str(r), "<stdin>")


def test_cli_gzip_on_stdin_is_read_as_gzip_under_any_budget(tmp_path):
    # A budget at or below the process's own memory left a head of one byte, which cannot show gzip's two
    # magic bytes: the stream was read as text, "a NUL byte"
    q, r = _write(tmp_path, 7, "scattered")
    whole = _irspec("eval", str(q), str(r), "-q", "-m", "official", "-f", "trec")
    for budget in ("1B", "50MB"):
        streamed = subprocess.run(
            [sys.executable, "-m", "irspec", "eval", str(q), "-", "-q", "-m", "official", "-f", "trec",
             "--memory", budget],
            input=gzip.compress(r.read_bytes()), capture_output=True, check=False,
        )  # fmt: skip
        assert streamed.returncode == 0, streamed.stderr
        assert streamed.stdout.decode() == whole.stdout


def test_cli_a_fifo_given_as_the_run_is_read(tmp_path):
    # Looking at the run's size opened it: a FIFO's writer was met and let go, and the reading's own
    # open then waited for another writer, forever
    q, r = _write(tmp_path, 7, "grouped")
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(r.read_bytes()), daemon=True)
    writer.start()
    try:
        done = _irspec("eval", str(q), str(fifo), "-q", "-m", "official", "-f", "trec", timeout=120)
    finally:
        if writer.is_alive():  # the reader never came: let the writer go
            with open(fifo, "rb") as f:
                f.read()
    whole = _irspec("eval", str(q), str(r), "-q", "-m", "official", "-f", "trec")
    assert done.returncode == 0, done.stderr
    assert done.stdout == whole.stdout


def test_cli_bad_memory_is_one_line_exit_2(tmp_path, capsys):
    q, r = _write(tmp_path, 7, "grouped")
    out = irspec_cli(capsys, "eval", str(q), str(r), "--memory", "12QB")
    assert out.returncode == 2 and out.stdout == ""
    assert (
        out.stderr
        == "irspec: error: --memory: memory '12QB': unknown unit 'QB' at position 3; expected B, kB, MB, GB, TB, KiB, MiB, GiB or TiB\n"
    )


_HELD = """
import signal, sys, threading, time
from irspec.data import stream
from irspec.cli import run
interrupted = threading.Event()
def ctrl_c(number, frame):
    # Python's own handling of Ctrl-C (KeyboardInterrupt in the main thread), which also lets the held
    # partitions go; set whatever the test's runner left (a job started in the background inherits SIGINT
    # ignored)
    interrupted.set()
    raise KeyboardInterrupt
signal.signal(signal.SIGINT, ctrl_c)
written = stream.Partitions.__iter__
def held(self):
    # every partition written (on the reading thread): held on disk until the test's SIGINT (at most a
    # minute), which may also come while they are being written; never read back and evaluated first
    if not interrupted.wait(60):
        yield from written(self)
stream.Partitions.__iter__ = held
following = stream._Ahead.__next__
def next_awake(self):
    # the main thread waits for the reading thread in short sleeps, after each of which Python runs a
    # signal's handler, whichever thread the signal was delivered to
    while self._following is not None and not self._following.done():
        time.sleep(0.02)
    return following(self)
stream._Ahead.__next__ = next_awake
sys.argv[0] = "irspec"
run()
"""
"""``python -m irspec`` (:func:`irspec.cli.run`) whose run's partitions, once written, are held on disk
until a SIGINT comes, rather than read back and evaluated (issue 35: a test's SIGINT could come after an
evaluation that took half a second, on a loaded machine)."""


def test_ctrl_c_removes_the_temporary_files(tmp_path):
    """A real SIGINT while a scattered run is being partitioned (or its partitions, all written, are held
    on disk, never after): the partitions go with the process."""
    temp = tmp_path / "temp"
    temp.mkdir()
    rng = np.random.default_rng(0)
    n = 400_000
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(200)))
    r = tmp_path / "run.txt"
    r.write_text(
        "".join(
            f"q{a} Q0 d{b} 1 {b / 7:.3f} t\n" for a, b in zip(rng.integers(0, 2000, n), range(n), strict=True)
        )
    )
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _HELD, "eval", str(q), str(r), "--memory", "1B"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(temp.glob("irspec-*/*.arrow")):  # the partitions are being written
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    left = [str(p.relative_to(temp)) for p in temp.rglob("*")]
    assert (proc.returncode, err, left) == (130, "irspec: error: interrupted\n", [])


# --------------------------------------------------------------------------------------------------
# Plans: options.memory


def test_a_plan_memory_option_streams_its_runs(tmp_path, tiny_blocks, monkeypatch):
    from irspec.plan import load_plan, run_plan

    q, r = _write(tmp_path, 8, "scattered")
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"qrels: {q.name}\nruns: [{r.name}]\nmetrics: [official]\noptions:\n  memory: 1\n")
    opened: list[object] = []
    real = stream.RunBlocks.__iter__
    monkeypatch.setattr(stream.RunBlocks, "__iter__", lambda self: opened.append(self) or real(self))
    streamed = run_plan(load_plan(plan)).results[0]
    assert len(opened) == 1  # it did stream
    whole = irspec.evaluate(str(q), str(r), "official")
    assert np.array_equal(whole.values.view(np.int64), streamed.values.view(np.int64))
    assert streamed.query_ids == whole.query_ids


def test_a_bad_plan_memory_is_a_problem_with_its_line(tmp_path):
    from irspec.plan import load_plan

    q, r = _write(tmp_path, 8, "grouped")
    plan = tmp_path / "plan.yaml"
    plan.write_text(f"qrels: {q.name}\nruns: [{r.name}]\nmetrics: [AP]\noptions:\n  memory: 2 lots\n")
    with pytest.raises(irspec.PlanError) as e:
        load_plan(plan)
    assert e.value.problems == [
        f"{plan}:5: options.memory: memory '2 lots': unknown unit 'lots' at position 3; "
        "expected B, kB, MB, GB, TB, KiB, MiB, GiB or TiB"
    ]


def test_a_scattered_runs_blocks_hold_a_query_each_and_its_first_problem_is_the_files(tmp_path, tiny_blocks):
    # a partition's rows are grouped by query once checked (one block a query for the evaluation); the
    # checks see them in the order read, so of many bad scores the first in the file is the one named
    q, r = _write(tmp_path, 7, "scattered")
    # blocks of half the file: a few partitions, of several queries each
    with stream.open_run(str(r), 1, block_bytes=r.stat().st_size // 2) as blocks:
        runs = [b for b in blocks if b is not stream.DISCARD]
    assert blocks.partitions and any(run.frame.get_column("query").n_unique() > 1 for run in runs)
    for run in runs:
        ids, _ = run.query_blocks
        assert len(ids) == ids.n_unique()  # one block a query
    lines = r.read_text().splitlines(keepends=True)
    rng = np.random.default_rng(7)
    for i in sorted(rng.choice(len(lines), 8, replace=False)):
        qid, it, d, rank = lines[i].split()[:4]
        lines[i] = f"{qid} {it} {d} {rank} inf bad\n"
    r.write_text("".join(lines))
    with pytest.raises(InputError) as whole:
        irspec.evaluate(str(q), str(r), "P@5")
    with pytest.raises(InputError) as streamed:
        irspec.evaluate(str(q), str(r), "P@5", memory=1)
    assert str(streamed.value) == str(whole.value) and "infinite score" in str(streamed.value)


@pytest.mark.parametrize("seed", range(6))
def test_a_blocks_index_made_from_the_whole_ones_is_the_index_of_its_judgments(seed):
    # sub_index takes the whole index's keys and codes instead of hashing and joining the rows again:
    # every array is the one indexing those judgments afresh gives
    from irspec.data import Qrels, read_qrels
    from irspec.evaluation.index import QrelsIndex, sub_index

    qrels, _ = random_case(seed)
    whole = QrelsIndex(read_qrels(qrels))
    rng = np.random.default_rng(seed)
    for _ in range(4):
        chosen = [q for q in whole.query_ids if rng.random() < 0.5] or whole.query_ids[:1]
        made = sub_index(whole, list(reversed(chosen)))
        fresh = QrelsIndex(Qrels(whole.qrels.frame.filter(pl.col("query").is_in(chosen)), "x"))
        assert made.query_ids == fresh.query_ids == sorted(chosen)
        assert made.position == fresh.position and made.keys_unique == fresh.keys_unique
        assert made.frame.equals(fresh.frame) and made.query_codes.equals(fresh.query_codes)
        for name in ("row_query", "row_label", "key_order", "sorted_keys", "labels", "query_of", "offsets"):
            assert np.array_equal(getattr(made, name), getattr(fresh, name)), name
        # its own filter, of fewer slots: every key of the block in it, as selective as the whole one
        assert made.key_filter[made.sorted_keys >> made.filter_shift].all()
        assert made.key_filter.size <= 16 * 2 * max(len(made.sorted_keys), 1)
        assert made.counts(1)[0].tolist() == fresh.counts(1)[0].tolist()


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize(("size", "first"), [(64, None), (64, 8), (300, 37), (4096, 512), (1 << 20, 1)])
def test_chunks_end_at_line_ends_and_grow_from_the_first_to_the_size(tmp_path, compress, size, first):
    # A byte-order mark, lines of varied lengths (under 100 bytes), the last one without its line end.
    lines = [f"q{i % 7} Q0 doc{i * 37 % 1000} {i} {1 / (i + 1)!r} run{'x' * (i % 13)}\n" for i in range(400)]
    text = "".join(lines)[:-1].encode()
    path = tmp_path / ("run.gz" if compress else "run.txt")
    path.write_bytes(gzip.compress(BOM + text) if compress else BOM + text)
    pieces = list(stream._chunks(str(path), "run", size, first))
    assert b"".join(p for p, _ in pieces) == text
    assert [n for _, n in pieces] == [p.count(b"\n") for p, _ in pieces]
    assert all(p.endswith(b"\n") for p, _ in pieces[:-1])
    if not compress:  # a plain file is read as asked: each piece at least what was wanted (but the last)
        want = min(first or size, size)
        for p, _ in pieces[:-1]:
            assert want - 100 < len(p) < want + 100  # a line (under 100 bytes) either side of it
            want = min(2 * want, size)


@pytest.mark.parametrize("parsers", [1, 2, 3])
@pytest.mark.parametrize("block", [TINY, 3 * TINY, 1 << 20])
def test_chunks_parsed_at_once_give_the_in_memory_result_and_name_a_late_bad_line(
    tmp_path, monkeypatch, irspec_plugin, parsers, block
):
    irspec_plugin(_SlowPlugin())
    monkeypatch.setattr(stream, "PARSERS", parsers)
    monkeypatch.setattr(stream, "MIN_BLOCK", block)
    q, r = _write(tmp_path, 6, "grouped")
    threads = set()
    real = stream.RunBlocks._parse

    def parse(self, text, first):
        threads.add(threading.current_thread().name)
        return real(self, text, first)

    monkeypatch.setattr(stream.RunBlocks, "_parse", parse)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        whole = irspec.evaluate(str(q), str(r), METRICS)
        _same(whole, irspec.evaluate(str(q), str(r), METRICS, memory=1))
    if block == TINY:  # many chunks: as many threads parse them as asked
        assert len(threads) == parsers and all(t.startswith("irspec-read-parse") for t in threads)
    with stream.open_run(str(r), 1) as blocks:  # in file order: a grouped run is not taken for scattered
        firsts = [
            block if block is stream.DISCARD else block.frame.get_column("line").min() for block in blocks
        ]
    firsts = [
        f for f in firsts if f is not None
    ]  # a block may hold no row (the first chunk's one query goes on)
    assert stream.DISCARD not in firsts and firsts == sorted(firsts) and len(firsts) > (block < 1 << 20)
    lines = r.read_text().splitlines(keepends=True)
    lines[-2] = "q1 Q0 d1 1 notanumber t\n"
    r.write_text("".join(lines))
    with pytest.raises(InputError) as streamed:
        irspec.evaluate(str(q), str(r), "P@5", memory=1)
    assert str(streamed.value).startswith(f"{r}:{len(lines) - 1}: ")
    assert not _reading_threads()


# -- a large first run read while the qrels are read (read_early) --------------------------------------

ROOMY = "4GiB"  # a budget with room to spare on any machine that runs the suite: read_early begins reading


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run file above a few lines streams, in blocks of TINY bytes, whatever the budget; no file
    is small enough for the readers without polars."""
    monkeypatch.setattr(stream, "STREAM_ABOVE", TINY)
    monkeypatch.setattr(stream, "MIN_BLOCK", TINY)
    monkeypatch.setattr(small, "SMALL_BELOW", 0)


def _frames_of(blocks: stream.RunBlocks) -> list[pl.DataFrame]:
    with blocks:
        return [b if b is stream.DISCARD else b.frame for b in blocks]


@pytest.mark.parametrize("order", ["grouped", "scattered"])
def test_read_early_begins_a_streamed_runs_blocks_and_they_are_those_read_later(tmp_path, streams, order):
    _, r = _write(tmp_path, 4, order)
    started = stream.read_early(str(r), ROOMY)
    assert isinstance(started, stream.RunBlocks)
    assert _reading_threads()  # reading began, before anyone asked for a block
    assert stream.open_run(started) is started  # taken as it is
    later = _frames_of(stream.open_run(str(r), ROOMY))
    early = _frames_of(started)
    assert any(f is stream.DISCARD for f in early) == (order == "scattered")

    def kept(frames: list[Any]) -> pl.DataFrame:  # the rows of the blocks after the last DISCARD, in order
        after = list(itertools.takewhile(lambda f: f is not stream.DISCARD, reversed(frames)))
        return pl.concat(after[::-1])

    assert len(early) >= 2 and kept(early).equals(kept(later))  # the same rows in the same order
    assert (started.name, started.runid) == (f"run4-{order}", "late")
    assert not _reading_threads()


def test_read_early_leaves_what_it_would_not_stream_with_room_to_spare_unread(tmp_path, monkeypatch):
    _, r = _write(tmp_path, 4, "grouped")
    assert stream.read_early(str(r), ROOMY) == str(r)  # small: read whole at its turn
    monkeypatch.setattr(stream, "STREAM_ABOVE", TINY)
    missing, table = str(tmp_path / "missing.txt"), {"q1": {"d1": 1.0}}
    pl.read_csv(r, separator=" ", has_header=False).write_parquet(tmp_path / "run.parquet")
    for src in ("-", missing, table, str(tmp_path / "run.parquet")):
        assert stream.read_early(src, ROOMY) is src
    assert stream.read_early(str(r), "12QB") == str(r)  # a bad size: said at its turn
    # a budget that streams the run, but has no room to spare: what open_run chooses could change
    assert isinstance(stream.open_run(str(r), "100MB"), stream.RunBlocks)
    assert stream.read_early(str(r), "100MB") == str(r)
    assert not _reading_threads()


def test_a_run_begun_and_never_read_stops_when_closed(tmp_path, streams):
    _, r = _write(tmp_path, 5, "grouped")
    started = stream.read_early(str(r), ROOMY)
    assert isinstance(started, stream.RunBlocks) and _reading_threads()
    started.close()
    started.close()  # twice: nothing more
    assert not _reading_threads()
    with stream.closing_early([started, str(r)]):  # closing what was closed, or is a path: nothing
        pass


@pytest.mark.parametrize("order", ["grouped", "scattered"])
def test_evaluate_and_irspec_eval_read_a_large_first_run_while_the_qrels_are_read(
    tmp_path, streams, monkeypatch, capsys, order
):
    q, r = _write(tmp_path, 6, order)
    # --memory ROOMY, not the default budget: the room read_early counts is the budget less what the
    # process holds, and a test worker that has run many tests may hold enough to leave 2 GiB none to spare
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irspec.IrspecWarning)
        monkeypatch.setattr(stream, "STREAM_ABOVE", 1 << 30)
        whole = irspec.evaluate(str(q), str(r), METRICS[:3], memory=ROOMY)
        assert (
            cli_main(["eval", str(q), str(r), "-q", "-m", "official", "-f", "trec", "--memory", ROOMY]) == 0
        )
        expected = capsys.readouterr()
        monkeypatch.setattr(stream, "STREAM_ABOVE", TINY)
        begun: list[stream.RunBlocks] = []
        real = stream.RunBlocks.start
        monkeypatch.setattr(stream.RunBlocks, "start", lambda self: begun.append(self) or real(self))
        _same(whole, irspec.evaluate(str(q), str(r), METRICS[:3], memory=ROOMY))
        assert (
            cli_main(["eval", str(q), str(r), "-q", "-m", "official", "-f", "trec", "--memory", ROOMY]) == 0
        )
    assert capsys.readouterr() == expected  # the same lines, warnings and all
    assert len(begun) == 2  # once by irspec.evaluate, once by irspec eval (not again by evaluate_many)
    assert not _reading_threads()


def test_a_run_begun_early_is_stopped_when_the_qrels_fail_and_their_error_comes_first(
    tmp_path, streams, capsys
):
    q, r = _write(tmp_path, 7, "grouped")
    lines = q.read_text().splitlines(keepends=True)
    q.write_text("".join(lines[:3]) + "q1 0 d1 notalabel\n" + "".join(lines[3:]))
    bad_run = r.read_text().splitlines(keepends=True)
    r.write_text("q1 Q0 d1 1 notascore t\n" + "".join(bad_run))  # a bad run too: the qrels are read first
    with pytest.raises(InputError) as e:
        irspec.evaluate(str(q), [str(r)], "P@5", memory=ROOMY)
    assert str(e.value).startswith(f"{q}:4: ")
    assert not _reading_threads()
    assert cli_main(["eval", str(q), str(r), "-m", "P@5"]) == 2
    assert capsys.readouterr().err.startswith(f"irspec: error: {q}:4: ")
    assert not _reading_threads()
