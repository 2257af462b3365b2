"""Hostile input files (issue 21): binary garbage where lines of text belong, endless sources.

A line longer than :data:`irspec.lines.MAX_LINE` (1 MiB) is an error naming its line before it is held
whole, on every read path: a plain file (memory-mapped; fast and slow parse paths), gzip, standard
input, an open file, a device or a pipe, the streaming reader and its standard-input spool, qrels and
runs alike, and the other readers of lines (plans, -Z and groups files). A message quotes a short
excerpt of what it names, never a whole line.

Endless sources (``/dev/zero``, a FIFO fed without end) run in a child process under hard caps on its
address space and on the size of any file it writes, and a timeout: a regression ends there, not in
the machine's memory or disk. The child reports its own peak resident memory.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import irspec
from irspec.data import read_qrels, read_run, stream
from irspec.errors import InputError, PlanError
from irspec.lines import MAX_LINE, LineLimit, bounded_lines, check_lines

ROOT = Path(irspec.__file__).resolve().parent.parent
QRELS_LINES = b"q1 0 d1 1\nq1 0 d2 0\n"
RUN_LINES = b"q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\n"
MESSAGE_MAX = 300  # characters: a located message with a short excerpt, whatever the input held

AS_CAP = 2_000_000_000  # bytes of address space for a child reading an endless source
FSIZE_CAP = 256 << 20  # the largest file a child may write (a spool of /dev/zero would fill the disk)
PEAK_MAX = 400 << 20  # resident bytes: the interpreter, polars and numpy, and a MiB or two of input

_PROBE = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({AS_CAP}, {AS_CAP}))
resource.setrlimit(resource.RLIMIT_FSIZE, ({FSIZE_CAP}, {FSIZE_CAP}))
from irspec.cli import main
rc = main(sys.argv[2:])
with open("/proc/self/status") as status, open(sys.argv[1], "w") as f:
    f.write(str(int(next(line for line in status if line.startswith("VmHWM:")).split()[1]) * 1024))
sys.exit(rc)
"""
"""``irspec ARGS`` under the caps (set first thing: no preexec_fn, unsafe beside the test's threads),
writing its peak resident bytes to the file ``sys.argv[1]``: VmHWM, this image's own high-water mark
(ru_maxrss also counts the forking parent's resident memory, kept across exec)."""


def _irspec_capped(
    tmp_path: Path, args: list[str], stdin=subprocess.DEVNULL, pass_fd: int | None = None
) -> tuple[int, str, int]:
    """``irspec ARGS`` in a capped child: its exit code, standard error and peak resident bytes.
    ``pass_fd`` is handed to the child and closed here once it runs (the child's is the only copy)."""
    peak = tmp_path / "peak"
    env = dict(os.environ, IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1", TMPDIR=str(tmp_path))
    fds = (pass_fd,) if pass_fd is not None else ()
    child = subprocess.Popen(
        [sys.executable, "-c", _PROBE, str(peak), *args],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT, pass_fds=fds,
    )  # fmt: skip
    if pass_fd is not None:
        os.close(pass_fd)
    try:
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
    return child.returncode, err.decode("utf-8", "replace"), int(peak.read_text()) if peak.exists() else -1


def _one_line_error(rc: int, err: str, source: str, line: int) -> None:
    """One line naming ``source:line``: a line too long, or (/dev/zero's bytes) a NUL byte, whichever
    the reader meets first (both refuse binary data before it is held whole)."""
    assert rc == 2, err[-2000:]
    assert err.count("\n") == 1, err[:2000]
    assert err.startswith(
        (
            f"irspec: error: {source}:{line}: line longer than 1 MiB",
            f"irspec: error: {source}:{line}: a NUL byte",
        )
    ), err[:2000]
    assert len(err) < MESSAGE_MAX
    assert "Traceback" not in err


@pytest.fixture
def qrels(tmp_path: Path) -> Path:
    path = tmp_path / "qrels.txt"
    path.write_bytes(QRELS_LINES)
    return path


# --------------------------------------------------------------------------------------------------
# Endless sources, through the command line


@pytest.mark.in_a_child
@pytest.mark.parametrize("which", ["run", "qrels"])
def test_dev_zero_as_a_file_is_refused_in_bounded_memory(tmp_path, qrels, which):
    args = ["eval", str(qrels), "/dev/zero"] if which == "run" else ["eval", "/dev/zero", str(qrels)]
    rc, err, peak = _irspec_capped(tmp_path, args)
    _one_line_error(rc, err, "/dev/zero", 1)
    assert peak < PEAK_MAX


@pytest.mark.in_a_child
@pytest.mark.parametrize("memory", [None, "1MB"], ids=["whole", "streamed"])
def test_dev_zero_on_standard_input_is_refused_in_bounded_memory(tmp_path, qrels, memory):
    # --memory 1MB streams: standard input is spooled to a temporary file, which must stop at the line
    # too long rather than fill the disk
    args = ["eval", str(qrels), "-", *(["--memory", memory] if memory else [])]
    with open("/dev/zero", "rb") as zero:
        rc, err, peak = _irspec_capped(tmp_path, args, stdin=zero)
    _one_line_error(rc, err, "<stdin>", 1)
    assert peak < PEAK_MAX
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("irspec-")] == []  # the spool is gone


@pytest.mark.in_a_child
@pytest.mark.parametrize("which", ["qrels", "run", "spooled run", "fused run"])
def test_endless_short_lines_that_are_no_trec_text_are_refused_at_line_1(tmp_path, qrels, which):
    # `yes y | irspec eval - RUN` (or a run on standard input, as diff reads it): short lines, so no line
    # is too long, held whole until the end of a stream that has none (7 GB in 8 s), or spooled to disk
    # (eval's and fuse's runs: 0.9 GB a second); the first lines are parsed as soon as they come
    run = tmp_path / "run.txt"
    run.write_bytes(RUN_LINES)
    args = {
        "qrels": ["eval", "-", str(run)],
        "run": ["diff", str(qrels), "-", str(run)],
        "spooled run": ["eval", str(qrels), "-", "--memory", "1MB"],
        "fused run": ["fuse", "--method", "rrf", "-", str(run)],
    }[which]
    read_end, write_end = os.pipe()

    def feed() -> None:
        with open(write_end, "wb") as f:
            try:
                while True:
                    f.write(b"y\n" * (1 << 15))
            except OSError:  # the child has exited
                pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    with open(read_end, "rb") as stdin:
        rc, err, peak = _irspec_capped(tmp_path, args, stdin=stdin)
    fields = "4 fields 'qid iter docno label'" if which == "qrels" else "at least 5 fields"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("irspec-")] == []  # no spool left
    assert rc == 2 and err.startswith(f"irspec: error: <stdin>:1: query 'y': expected {fields}"), err[:2000]
    assert err.count("\n") == 1 and len(err) < MESSAGE_MAX
    assert peak < PEAK_MAX
    writer.join(10)
    assert not writer.is_alive()


@pytest.mark.in_a_child
def test_an_endless_pipe_is_refused_in_bounded_memory(tmp_path, qrels):
    # as `irspec eval qrels <(producer)`: the run is /dev/fd/N, a pipe fed without end
    read_end, write_end = os.pipe()

    def feed() -> None:  # good lines, then NUL bytes until the reader goes away
        with open(write_end, "wb") as f:
            try:
                f.write(RUN_LINES)
                while True:
                    f.write(bytes(1 << 16))
            except OSError:  # BrokenPipeError: the child has exited
                pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    run = f"/dev/fd/{read_end}"
    rc, err, peak = _irspec_capped(tmp_path, ["eval", str(qrels), run], pass_fd=read_end)
    _one_line_error(rc, err, run, 3)
    assert peak < PEAK_MAX
    writer.join(10)
    assert not writer.is_alive()


@pytest.mark.in_a_child
def test_fifty_megabytes_of_nul_bytes_make_a_short_message_and_a_small_peak(tmp_path, qrels):
    garbage = tmp_path / "garbage.run"
    with open(garbage, "wb") as f:
        f.truncate(50_000_000)  # a sparse file of NUL bytes
    for args in (["eval", str(qrels), str(garbage)], ["eval", str(qrels), str(garbage), "--memory", "1MB"]):
        rc, err, peak = _irspec_capped(tmp_path, args)
        _one_line_error(rc, err, str(garbage), 1)
        assert peak < PEAK_MAX


@pytest.mark.in_a_child
def test_garbage_at_the_start_of_a_large_file_is_refused_before_the_file_is_mapped(tmp_path, qrels):
    garbage = tmp_path / "garbage.qrels"
    with open(garbage, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB of NUL bytes, sparse: no disk used
    rc, err, peak = _irspec_capped(tmp_path, ["eval", str(garbage), str(qrels)])
    _one_line_error(rc, err, str(garbage), 1)
    assert peak < PEAK_MAX


@pytest.mark.in_a_child
def test_a_gzip_bomb_is_refused_a_piece_at_a_time(tmp_path, qrels):
    bomb = tmp_path / "bomb.run.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as f:  # 64 MiB of text in about 300 kB
        f.write(RUN_LINES)
        for _ in range(64):
            f.write(bytes(1 << 20))
    for args in (["eval", str(qrels), str(bomb)], ["eval", str(qrels), str(bomb), "--memory", "1MB"]):
        rc, err, peak = _irspec_capped(tmp_path, args)
        _one_line_error(rc, err, str(bomb), 3)
        assert peak < PEAK_MAX


@pytest.mark.in_a_child
@pytest.mark.parametrize("flag", ["-Z", "--groups"])
def test_dev_zero_as_a_z_or_groups_file_is_refused(tmp_path, qrels, flag):
    run = tmp_path / "run.txt"
    run.write_bytes(RUN_LINES)
    rc, err, _ = _irspec_capped(tmp_path, ["eval", str(qrels), str(run), "-m", "AP", flag, "/dev/zero"])
    _one_line_error(rc, err, "/dev/zero", 1)


@pytest.mark.in_a_child
def test_dev_zero_as_a_plan_is_refused(tmp_path):
    rc, err, _ = _irspec_capped(tmp_path, ["validate", "/dev/zero"])
    _one_line_error(rc, err, "/dev/zero", 1)


# --------------------------------------------------------------------------------------------------
# Every read path, in this process, on finite files


def _with_long_line(good: bytes, at: int, length: int = 2 * MAX_LINE, fill: bytes = b"\x00") -> bytes:
    """``good`` lines repeated so that line ``at`` (1-based) is ``length`` bytes of ``fill``."""
    lines = good.splitlines(keepends=True)
    out = [lines[i % len(lines)] for i in range(at - 1)]
    return b"".join(out) + fill * length + b"\n" + good


def _refused(read, source, line, reason: str = "line longer than 1 MiB") -> InputError:
    with pytest.raises(InputError) as info:
        read()
    e = info.value
    assert (e.source, e.line) == (source, line)
    assert str(e).startswith(f"{source}:{line}: {reason}") and len(str(e)) < MESSAGE_MAX
    return e


@pytest.mark.parametrize("kind", ["run", "qrels"])
@pytest.mark.parametrize("at", [1, 3, 5000])
@pytest.mark.parametrize("layout", ["tidy", "untidy"])  # untidy: tabs and doubled blanks, the slow path's
def test_a_long_line_in_a_file_is_named_by_its_number(tmp_path, kind, at, layout):
    good = RUN_LINES if kind == "run" else QRELS_LINES
    if layout == "untidy":
        good = good.replace(b" ", b" \t ")
    path = tmp_path / f"long.{kind}"
    path.write_bytes(_with_long_line(good, at))
    read = read_run if kind == "run" else read_qrels
    e = _refused(lambda: read(str(path)), str(path), at)
    assert "'\\x00\\x00" in str(e)  # the line's first bytes, escaped


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_every_stream_path_refuses_a_long_line(tmp_path, kind, monkeypatch):
    good = RUN_LINES if kind == "run" else QRELS_LINES
    data = _with_long_line(good, 3, fill=b"x")
    read = read_run if kind == "run" else read_qrels
    _refused(lambda: read(io.BytesIO(data)), "<stream>", 3)
    _refused(lambda: read(io.StringIO(data.decode())), "<stream>", 3)  # text read a piece at a time
    _refused(lambda: read(io.BytesIO(gzip.compress(data))), "<stream>", 3)
    gz = tmp_path / "long.gz"
    gz.write_bytes(gzip.compress(data))
    _refused(lambda: read(str(gz)), str(gz), 3)  # a mapped gzip file
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    _refused(lambda: read("-"), "<stdin>", 3)


def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_not(tmp_path):
    head = b"q2 0 d1 1\n"
    query = b"q" * (MAX_LINE - len(b" 0 d1 1"))
    path = tmp_path / "edge.qrels"
    path.write_bytes(head + query + b" 0 d1 1\n")
    ids = read_qrels(str(path)).query_ids
    assert ids[0] == "q2" and ids[1] == query.decode()  # "2" sorts before "q"
    path.write_bytes(head + b"q" + query + b" 0 d1 1\n")
    _refused(lambda: read_qrels(str(path)), str(path), 2)


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("order", ["grouped", "scattered"])
def test_the_streaming_reader_refuses_a_long_line_by_its_number(tmp_path, compress, order):
    lines = [
        f"q{i % 7 if order == 'scattered' else i // 50} Q0 d{i} 1 {1000 - i} r\n".encode() for i in range(400)
    ]
    lines[300] = b"y" * (3 * MAX_LINE) + b"\n"
    data = b"".join(lines)
    path = tmp_path / ("run.txt.gz" if compress else "run.txt")
    path.write_bytes(gzip.compress(data) if compress else data)
    with stream.RunBlocks(str(path), str(path), 4096, stem="run") as blocks:
        _refused(lambda: list(blocks), str(path), 301)


BIG = "z" * (MAX_LINE // 2)  # a field under the line limit, still far too long to quote

LONG_FIELDS = [
    (f"{BIG} 0 d1\n", read_qrels, "expected 4 fields"),  # the query id, quoted by every message
    (f"q1 0 d1 {BIG}\n", read_qrels, "label must be an integer"),
    (f"q1 Q0 d1 1 {BIG} r\n", read_run, "score must be a number"),
    (f"q1 Q0 {BIG} 1 2 r\nq1 Q0 {BIG} 2 1 r\n", read_run, "duplicate docno"),
    (f"q1 Q0 {BIG} 1 nan r\n", read_run, "NaN score for docno"),
    ({"q1": {BIG: "x"}}, read_run, "score must be a number"),  # a dict's docno
    ({BIG: {1.5: 0.2}}, read_run, "must be strings"),  # a dict's query id
]


@pytest.mark.parametrize(("content", "read", "reason"), LONG_FIELDS, ids=[c[2] for c in LONG_FIELDS])
def test_a_message_quotes_a_short_excerpt_of_a_long_field(tmp_path, content, read, reason):
    if isinstance(content, str):
        path = tmp_path / "field.txt"
        path.write_text(content)
        content = str(path)
    with pytest.raises(InputError, match=reason) as info:
        read(content)
    assert len(str(info.value)) < MESSAGE_MAX and "zzz..." in str(info.value)


def test_a_long_line_in_a_plan_z_or_groups_file_is_refused(tmp_path, qrels):
    path = tmp_path / "garbage"
    path.write_bytes(b"# fine\n" + b"z" * (2 * MAX_LINE))
    with pytest.raises(PlanError, match=rf"^{path}:2: line longer than 1 MiB") as info:
        irspec.load_plan(path)
    assert len(str(info.value)) < MESSAGE_MAX
    from irspec.experiment.groups import read_groups
    from irspec.experiment.standardize import read_z

    for read in (read_z, read_groups):
        _refused(lambda read=read: read(path), str(path), 2)


def test_long_fields_of_z_and_groups_files_are_quoted_short(tmp_path):
    from irspec.experiment.groups import read_groups
    from irspec.experiment.standardize import read_z

    big = "w" * 100_000
    path = tmp_path / "f.txt"
    path.write_text(f"q1 AP 0.5 {big}\n")
    with pytest.raises(InputError, match="the sd must be a number") as info:
        read_z(path)
    assert len(str(info.value)) < MESSAGE_MAX
    path.write_text(f"{big}\n")
    with pytest.raises(InputError, match="expected 'query_id group'") as info:
        read_groups(path)
    assert len(str(info.value)) < MESSAGE_MAX


# --------------------------------------------------------------------------------------------------
# The line check itself, against the definition: split at line ends, the first part longer than the limit


def _first_long(data: bytes, limit: int) -> int | None:
    return next((n for n, line in enumerate(data.split(b"\n"), 1) if len(line) > limit), None)


CASES = [
    b"",
    b"\n",
    b"abcd",
    b"abcde",
    b"ab\nabcde\n",
    b"abcd\nabcd\nabcd",
    b"\n\n\nabcdef",
    b"a\nb\nc\nabcde",
    b"abcd\n" * 40 + b"x" * 9,
]


@pytest.mark.parametrize("data", CASES)
@pytest.mark.parametrize("piece", [1, 2, 3, 5, 64])
def test_the_line_check_finds_the_first_line_over_the_limit_however_the_input_is_cut(data, piece):
    limit = 4
    expected = _first_long(data, limit)
    for check in ("whole", "pieces", "readline"):
        try:
            if check == "whole":
                check_lines(data, "x", limit)
            elif check == "pieces":
                fed = LineLimit("x", limit)
                for i in range(0, len(data), piece):
                    fed.feed(data[i : i + piece])
            else:
                for _ in bounded_lines(io.BytesIO(data), "x", limit):
                    pass
            found = None
        except InputError as e:
            found = e.line
        assert found == expected, (check, data)


# --------------------------------------------------------------------------------------------------
# A temporary directory that fills while a run is spread over partitions or standard input is spooled

FSIZE_PRELUDE = """
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
"""


def _mount_tmpfs(directory: Path) -> bool:
    """Mount a 2 MB tmpfs on ``directory`` if this process may (root, as in CI's container)."""
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(directory)], check=False, capture_output=True
    )
    return done.returncode == 0


@pytest.fixture(params=["full disk", "file size limit"])
def cramped(request, tmp_path):
    """``(directory, prelude, reason)``: a temporary directory with little room, the Python lines a
    child runs first, and the reason its writes fail with. "full disk" is a real 2 MB tmpfs where this
    process may mount one (root), else, like "file size limit", a cap on the size of any file the
    child writes (RLIMIT_FSIZE, 64 KiB: EFBIG, which says "no room" as ENOSPC does)."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    if request.param == "full disk" and _mount_tmpfs(directory):
        yield directory, "", "No space left on device"
        subprocess.run(["umount", str(directory)], check=True)
    else:
        yield directory, FSIZE_PRELUDE, "File too large"


@pytest.fixture
def scattered(tmp_path) -> tuple[Path, Path]:
    """qrels and a run of 8 MB whose queries' lines are scattered (so it is spread over partitions)."""
    lines = [f"q{(i * 7919) % 200} Q0 d{i} 1 {1 - i / 200_000} r\n" for i in range(200_000)]
    run = tmp_path / "scattered.run"
    run.write_text("".join(lines))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(200)))
    return qrels, run


def _child(code: str, directory: Path, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, TMPDIR=str(directory), PYTHONDONTWRITEBYTECODE="1", IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )


def _says_which_directory_filled(err: str, directory: Path, what: str, reason: str) -> None:
    assert err.count("\n") == 1 and "Traceback" not in err, err[-3000:]
    assert err.startswith(
        f"irspec: error: cannot write {what} to the temporary directory {directory} (TMPDIR): {reason}; "
    ), err
    assert "set TMPDIR to a directory with" in err and "the temporary files are removed" in err
    assert list(directory.iterdir()) == []  # and they are


@pytest.mark.in_a_child
def test_a_full_temporary_directory_while_a_run_is_partitioned_says_which_and_what_helps(cramped, scattered):
    directory, prelude, reason = cramped
    qrels, run = scattered
    code = (
        prelude
        + f"import sys\nfrom irspec.cli import main\nsys.exit(main({['eval', str(qrels), str(run), '--memory', '1MB', '-m', 'P@10']!r}))"
    )
    done = _child(code, directory)
    assert done.returncode == 2
    _says_which_directory_filled(done.stderr, directory, "the run's lines", reason)
    # each remedy it names works: a larger budget reads the run whole, a grouped run needs no partitions
    budget = re.search(r"raise the memory budget to (\d+ MiB)", done.stderr).group(1)
    assert "group its lines by query (sort -s -k1,1)" in done.stderr
    grouped = run.with_name("grouped.run")
    grouped.write_bytes(
        b"".join(sorted(run.read_bytes().splitlines(keepends=True), key=lambda line: line.split()[0]))
    )
    for args in (
        ["eval", str(qrels), str(run), "--memory", budget.replace(" ", "")],
        ["eval", str(qrels), str(grouped), "--memory", "1MB"],
    ):
        code = prelude + f"import sys\nfrom irspec.cli import main\nsys.exit(main({[*args, '-m', 'P@10']!r}))"
        assert _child(code, directory).returncode == 0


@pytest.mark.in_a_child
def test_a_full_temporary_directory_while_standard_input_is_spooled_says_which(cramped, scattered):
    directory, prelude, reason = cramped
    qrels, run = scattered
    code = (
        prelude
        + f"import sys\nfrom irspec.cli import main\nsys.exit(main({['eval', str(qrels), '-', '--memory', '1MB']!r}))"
    )
    with open(run, "rb") as stdin:
        done = _child(code, directory, stdin)
    assert done.returncode == 2
    _says_which_directory_filled(done.stderr, directory, "standard input", reason)
    assert "give the run as a file" in done.stderr


@pytest.mark.in_a_child
def test_a_full_temporary_directory_is_an_evaluation_error_in_python(cramped, scattered):
    directory, prelude, reason = cramped
    qrels, run = scattered
    code = prelude + (
        "import irspec\n"
        f"try:\n    irspec.evaluate({str(qrels)!r}, {str(run)!r}, 'P@10', memory='1MB')\n"
        "except irspec.EvaluationError as e:\n    print(e)\n"
        # the partitions irspec-online spreads a log's sessions over
        "import polars as pl\nfrom irspec.data.stream import Partitions, spill_directory\n"
        "try:\n    with spill_directory() as d:\n        Partitions(d, 2, 'session').add(pl.DataFrame({'session': [str(i) for i in range(300_000)]}))\n"
        "except irspec.EvaluationError as e:\n    print(e)\n"
    )
    done = _child(code, directory)
    assert done.returncode == 0, done.stderr[-3000:]
    first, second = done.stdout.splitlines()
    assert first.startswith(
        f"cannot write the run's lines to the temporary directory {directory} (TMPDIR): {reason}; "
    )
    assert second.startswith(
        f"cannot write rows spread by session to the temporary directory {directory} (TMPDIR): {reason}; "
    )
    assert list(directory.iterdir()) == []


def test_a_nul_byte_is_refused_naming_its_line_on_every_read_path(tmp_path):
    """A NUL byte is binary data: C's trec_eval would end the field there (``d\\0x`` read as ``d``), so
    reading it as part of an id would silently disagree. Every reader of lines names its line."""
    run = RUN_LINES + b"q1 Q0 d\x003 3 0.7 r\n"
    path = tmp_path / "nul.run"
    path.write_bytes(run)
    nul = "a NUL byte: binary data, not text"
    _refused(lambda: read_run(path), str(path), 3, nul)
    _refused(lambda: read_run(io.BytesIO(run)), "<stream>", 3, nul)
    gz = tmp_path / "nul.run.gz"
    gz.write_bytes(gzip.compress(run))
    _refused(lambda: read_run(gz), str(gz), 3, nul)
    _refused(lambda: list(stream.open_run(str(path), block_bytes=16)), str(path), 3, nul)
    qrels = tmp_path / "nul.qrels"
    qrels.write_bytes(QRELS_LINES + b"q1 0 d\x00 1\n")
    _refused(lambda: read_qrels(qrels), str(qrels), 3, nul)
    plan = tmp_path / "plan.yaml"
    plan.write_bytes(b"qrels: q\nruns: [\x00]\n")
    with pytest.raises(PlanError, match=rf"^{plan}:2: a NUL byte"):
        irspec.load_plan(plan)
    lines = io.BytesIO(b"ok\nno\x00\n")
    with pytest.raises(InputError, match=r"^x:2: a NUL byte"):
        list(bounded_lines(lines, "x"))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("which", ["qrels", "run", "plan"])
def test_utf_16_text_is_named_as_such(tmp_path, capsys, encoding, which):
    # what an editor on Windows saves as "Unicode" was "a NUL byte: binary data, not text"
    from irspec.cli import main

    qrels, run, plan = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "plan.yaml"
    qrels.write_bytes(QRELS_LINES)
    run.write_bytes(RUN_LINES)
    plan.write_text(f"qrels: {qrels}\nruns: [{run}]\nmetrics: [AP]\n")
    bad = {"qrels": qrels, "run": run, "plan": plan}[which]
    bad.write_bytes(bad.read_bytes().decode("utf-8").encode(encoding))
    argv = ["run", str(plan)] if which == "plan" else ["eval", str(qrels), str(run)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{bad}:1: UTF-16 text, where UTF-8 is read: save the file as UTF-8" in err, err
