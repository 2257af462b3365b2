"""Hostile input files on every subcommand (issue 33): a table that goes on growing.

Each bad file is put in every position of every command that reads files (a qrels, a run, a training
qrels, a plan, ...), and the outcome is checked against the table: a located error (``FILE:LINE``
where a line is to blame, else the file) on one line of standard error and exit 2, no traceback, no
output written; or a documented value, exit 0. Every file in the folder is hashed before and after:
no command changes its inputs, whatever they hold. Endless sources (``/dev/zero``, a FIFO fed without
end) and lines too long are in test_hostile_inputs.py; outputs that name an input or a device in
test_nothing_lost.py; in-memory data (dicts, arrays, frames) in test_hostile_api.py.

To grow it: add a bad file to RUNS, QRELS or PLANS with what it must give, or a position to POSITIONS.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from irspec.cli import main

DEMO = Path(__file__).resolve().parent.parent / "specs" / "demo"
MESSAGE_MAX = 300

OK = None
"""The outcome of a bad file that has a documented value: exit 0 (warnings allowed)."""

RUN_LINE = b"q01 Q0 d0538 1 0.9 r\n"

# name: (content, the error's text after "FILE:LINE: " or "FILE: " as a regex, or OK)
RUNS: dict[str, tuple[bytes, str | None]] = {
    "binary": (bytes(range(256)) * 4, r"bad:\d+: (not UTF-8 text|a NUL byte)"),
    "utf-16": (
        "q01 Q0 d1 1 1.0 r\n".encode("utf-16"),
        r"bad:1: UTF-16 text, where UTF-8 is read: save the file as UTF-8",
    ),
    "latin-1": (b"q01 Q0 d\xe9 1 1.0 r\n", r"bad:1: not UTF-8 text"),
    "nul": (RUN_LINE + b"q01 Q0 d\x001 2 0.5 r\n", r"bad:2: a NUL byte: binary data, not text"),
    "nan": (RUN_LINE + b"q01 Q0 d1 2 nan r\n", r"bad:2: query 'q01': NaN score for docno 'd1'"),
    "inf": (RUN_LINE + b"q01 Q0 d1 2 -inf r\n", r"bad:2: query 'q01': infinite score"),
    "beyond a double": (
        RUN_LINE + b"q01 Q0 d1 2 1e400 r\n",
        r"bad:2: query 'q01': infinite score inf .*beyond ±1.8e308 reads as infinite",
    ),
    "text score": (
        RUN_LINE + b"q01 Q0 d1 2 high r\n",
        r"bad:2: query 'q01': score must be a number, got 'high'",
    ),
    "duplicate": (RUN_LINE + RUN_LINE, r"bad:2: query 'q01': duplicate docno 'd0538' \(first on line 1\)"),
    "four fields": (RUN_LINE + b"q01 Q0 d1 1\n", r"bad:2: query 'q01': expected at least 5 fields"),
    # values: ids may be long or odd; a run may be short; fields after the sixth are ignored, as trec_eval
    # ignores them ("skip over rest of line")
    "eight fields": (RUN_LINE + b"q01 Q0 d1 2 0.5 r x y\n", OK),
    "long id": (RUN_LINE + b"q01 Q0 " + b"d" * 5000 + b" 2 0.5 r\n", OK),
    "unicode ids": (RUN_LINE + "q01 Q0 dé\u2028x 2 0.5 r\n".encode(), OK),
    "huge score": (RUN_LINE + b"q01 Q0 d1 2 1e308 r\n", OK),
    "tiny score": (RUN_LINE + b"q01 Q0 d1 2 4.9e-324 r\n", OK),
    "crlf": (RUN_LINE.replace(b"\n", b"\r\n"), OK),
    "a carriage return among trailing blanks": (RUN_LINE.replace(b"\n", b" \r\r \n"), OK),
    # lines ended by \r alone (classic Mac OS): one line to trec_eval, whose fields past the sixth it
    # ignores, so every document but the first went unread
    "lone carriage returns": (
        RUN_LINE + b"q01 Q0 d1 2 0.5 r\rq01 Q0 d2 3 0.4 r\r",
        r"bad:2: a carriage return \(\\r\) inside the line: lines ended by \\r alone",
    ),
    "no final newline": (RUN_LINE.rstrip(), OK),
}
"""Bad runs. An empty run (no lines, or only comments, EMPTY) gives what its position says (POSITIONS)."""

QRELS: dict[str, tuple[bytes, str | None]] = {
    "binary": (bytes(range(256)) * 4, r"bad:\d+: (not UTF-8 text|a NUL byte)"),
    "nul": (b"q01 0 d0538 1\nq01 0 d\x00 1\n", r"bad:2: a NUL byte: binary data, not text"),
    "lone carriage returns": (
        b"q01 0 d0538 1\nq01 0 d1 1\rq01 0 d2 0\r",
        r"bad:2: a carriage return \(\\r\) inside the line",
    ),
    "text label": (b"q01 0 d0538 1\nq01 0 d1 x\n", r"bad:2: query 'q01': label must be an integer, got 'x'"),
    "fractional label": (b"q01 0 d1 1.5\n", r"bad:1: query 'q01': label must be an integer, got '1.5'"),
    "label beyond 64 bits": (
        b"q01 0 d1 99999999999999999999\n",
        r"bad:1: query 'q01': label '9+' is out of range",
    ),
    "duplicate": (
        b"q01 0 d1 1\nq01 0 d1 0\n",
        r"bad:2: query 'q01': duplicate docno 'd1' \(first on line 1\)",
    ),
    "three fields": (b"q01 0 d1\n", r"bad:1: query 'q01': expected 4 fields"),
    "run given as qrels": (RUN_LINE, r"bad:1: query 'q01': expected 4 fields"),
    # values: a negative label is judged non-relevant, as in trec_eval
    "negative label": (b"q01 0 d0538 -1\nq01 0 d1 1\n", OK),
}
"""Bad qrels. Empty qrels (EMPTY) give what their position says (POSITIONS)."""

EMPTY = {"empty": b"", "only comments": b"# nothing here\n\n   \n"}

EMPTY_RUN = {"run empty": OK, "run only comments": OK}
"""An empty run is every query of the qrels an empty ranking (trec_eval -c), warned of, where a run is
evaluated; a command that compares or fuses runs refuses it (POSITIONS' overrides)."""
NO_QRELS = {"qrels empty": r"bad", "qrels only comments": r"bad"}
"""Empty qrels judge nothing: refused where a command compares runs on them (``eval`` warns instead)."""
REFUSED_EMPTY_RUN = {"run empty": r"bad", "run only comments": r"bad"}
SNIFFED = {
    **{f"run {name}": r"bad" for name, (_, expected) in RUNS.items() if expected is not OK},
    **{f"qrels {name}": r"bad" for name, (_, expected) in QRELS.items() if expected is not OK},
    "run empty": r"bad: cannot tell qrels from a run: no data line",
    "run only comments": r"bad: cannot tell qrels from a run: no data line",
    "qrels empty": r"bad: cannot tell qrels from a run: no data line",
    "qrels only comments": r"bad: cannot tell qrels from a run: no data line",
    "qrels negative label": r"1 queries in common; a power analysis needs at least 2",  # one query judged
}
"""``power --from`` tells qrels from runs by their content: a bad file's error may be the sniffer's."""

# command, kind of file ("run" or "qrels"), argv with BAD where the bad file goes, and the cases whose
# outcome differs there from the table's
POSITIONS: list[tuple[str, str, list[str], dict[str, str | None]]] = [
    ("eval", "qrels", ["eval", "BAD", "a.run", "-m", "P@10", "-o", "out"], {"qrels empty": OK, "qrels only comments": OK}),
    ("eval", "run", ["eval", "qrels.txt", "a.run", "BAD", "-m", "P@10", "-o", "out"], EMPTY_RUN),
    ("eval", "run", ["eval", "qrels.txt", "a.run", "--system", "s=b.run,BAD", "-m", "P@10", "-o", "out"], EMPTY_RUN),
    ("eval", "run", ["eval", "qrels.txt", "a.run", "--fuse", "h=rrf:b.run,BAD", "-m", "P@10", "-o", "out"], REFUSED_EMPTY_RUN),
    ("diff", "qrels", ["diff", "BAD", "a.run", "b.run", "-o", "out"], NO_QRELS),
    ("diff", "run", ["diff", "qrels.txt", "BAD", "b.run", "-o", "out"], REFUSED_EMPTY_RUN),
    ("diff", "run", ["diff", "qrels.txt", "a.run", "BAD", "-o", "out"], REFUSED_EMPTY_RUN),
    ("fuse", "run", ["fuse", "a.run", "BAD", "--method", "rrf", "-o", "out"], REFUSED_EMPTY_RUN),
    ("fuse", "qrels", ["fuse", "a.run", "b.run", "--method", "wsum", "--qrels", "BAD", "--optimize", "P@10", "-o", "out"], NO_QRELS),
    ("reproduce", "qrels", ["reproduce", "BAD", "--original", "a.run", "b.run", "--reproduced", "c.run", "d.run", "-m", "P@10", "-o", "out"], NO_QRELS),
    ("reproduce", "run", ["reproduce", "qrels.txt", "--original", "a.run", "BAD", "--reproduced", "c.run", "d.run", "-m", "P@10", "-o", "out"], REFUSED_EMPTY_RUN),
    ("reproduce", "run", ["reproduce", "qrels.txt", "--original", "a.run", "b.run", "--reproduced", "BAD", "d.run", "-m", "P@10", "-o", "out"], REFUSED_EMPTY_RUN),
    ("reproduce", "qrels", ["reproduce", "qrels.txt", "--original", "a.run", "b.run", "--reproduced", "c.run", "d.run", "-m", "P@10", "--reproduced-qrels", "BAD", "-o", "out"], NO_QRELS),
    ("power", "qrels", ["power", "--from", "BAD", "a.run", "b.run"], SNIFFED),
    ("power", "run", ["power", "--from", "qrels.txt", "a.run", "BAD"], SNIFFED),
]  # fmt: skip


def _cases() -> list[tuple[str, list[str], str, bytes, str | None]]:
    """``(command, argv, case name, content, expected)`` for every position and bad file of its kind."""
    found = []
    for command, kind, argv, overrides in POSITIONS:
        table = {**(RUNS if kind == "run" else QRELS), **EMPTY}
        for name, value in table.items():
            content, expected = value if isinstance(value, tuple) else (value, None)
            case = f"{kind} {name}"
            found.append((command, argv, case, content, overrides.get(case, expected)))
    return found


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(DEMO / "qrels.txt", tmp_path / "qrels.txt")
    for name, run in zip("abcd", ["bm25", "dense", "hybrid", "random"], strict=True):
        shutil.copy(DEMO / "runs" / f"{run}.run", tmp_path / f"{name}.run")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(capsys, argv: list[str], expected: str | None, folder: Path) -> None:
    before = _digest(folder)
    rc = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if expected is OK:
        assert rc == 0, err
        assert not any(line.startswith("irspec: error") for line in err.splitlines())
    else:
        errors = [line for line in err.splitlines() if line.startswith("irspec: error: ")]
        assert rc == 2 and len(errors) == 1 and err.endswith(errors[-1] + "\n"), err
        message = errors[0].removeprefix("irspec: error: ")
        assert re.search(expected, message), message
        assert len(message) < MESSAGE_MAX, message
        assert not (folder / "out").exists()
    after = _digest(folder)  # the outputs aside: out, and a fused run's out.provenance.json
    assert {k: v for k, v in after.items() if not Path(k).name.startswith("out")} == before


@pytest.mark.parametrize(
    ("command", "argv", "case", "content", "expected"),
    _cases(),
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_bad_file_in_every_position(folder, capsys, command, argv, case, content, expected):
    (folder / "bad").write_bytes(content)
    _check(capsys, [a.replace("BAD", "bad") for a in argv], expected, folder)


MISSING = [
    ("not there", lambda folder: "missing.txt", r"missing\.txt"),
    ("a directory", lambda folder: str(_mkdir(folder / "dir")), r"dir"),
]


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.parametrize(("name", "make", "expected"), MISSING, ids=[m[0] for m in MISSING])
@pytest.mark.parametrize(
    ("command", "kind", "argv", "overrides"), POSITIONS, ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_missing_file_or_a_directory_in_every_position(
    folder, capsys, name, make, expected, command, kind, argv, overrides
):
    path = make(folder)
    _check(capsys, [a.replace("BAD", path) for a in argv], expected, folder)


PLANS: dict[str, tuple[bytes, str]] = {
    "binary": (bytes(range(256)) * 4, r"plan\.yaml:\d+:"),
    "not a mapping": (b"- just\n- a list\n", r"plan\.yaml"),
    "bad yaml": (b"qrels: [unclosed\n", r"plan\.yaml:\d+"),
    "tab indent": (b"qrels: q\n\truns: []\n", r"plan\.yaml:\d+"),
    "empty": (b"", r"plan\.yaml"),
    "unknown key": (b"qrels: qrels.txt\nruns: [a.run]\nmetrics: [P@10]\nbogus: 1\n", r"plan\.yaml:4"),
    "unknown metric": (b"qrels: qrels.txt\nruns: [a.run]\nmetrics: [nDGC@10]\n", r"plan\.yaml:3.*nDGC"),
    "missing run": (b"qrels: qrels.txt\nruns: [nope.run]\nmetrics: [P@10]\n", r"plan\.yaml:2.*nope\.run"),
    "bad run file": (
        b"qrels: qrels.txt\nruns: [a.run, bad.run]\nmetrics: [P@10]\n",
        r"bad\.run:1: query 'q01': score must be a number",
    ),
    "huge number": (
        b"qrels: qrels.txt\nruns: [a.run]\nmetrics: [P@10]\noptions: {depth: 1e999}\n",
        r"plan\.yaml:4",
    ),
    "alias bomb": (
        b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        b"g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
        r"plan\.yaml",
    ),
}
"""Bad plans, for ``irspec run`` and ``irspec validate`` (and ``irspec power PLAN``)."""


@pytest.mark.parametrize("command", ["run", "validate", "power"])
@pytest.mark.parametrize(("name", "plan"), PLANS.items(), ids=list(PLANS))
def test_a_bad_plan(folder, capsys, command, name, plan):
    (folder / "plan.yaml").write_bytes(plan[0])
    (folder / "bad.run").write_bytes(b"q01 Q0 d1 1 high r\n")
    expected = plan[1]
    if command == "validate" and name == "bad run file":
        expected = OK  # validate checks the plan, and reads no run
    _check(capsys, [command, "plan.yaml"], expected, folder)


def test_a_terminated_command_removes_its_spool_of_standard_input(tmp_path):
    # an endless run on standard input, spooled to disk; SIGTERM (timeout, kill, a scheduler) ended the
    # process at once and left the spool behind (gigabytes within seconds); now it goes as on Ctrl-C
    import os
    import signal
    import subprocess
    import sys
    import time

    spool = tmp_path / "tmp"
    spool.mkdir()
    env = {**os.environ, "TMPDIR": str(spool)}
    line = b"q1 Q0 d1 1 1 r\n" * 4096
    command = [sys.executable, "-m", "irspec", "fuse", "--method", "rrf", "-", str(DEMO / "runs" / "bm25.run"),
               "-o", str(tmp_path / "out.run")]  # fmt: skip
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stderr is not None
    deadline = time.monotonic() + 60
    try:
        while not any(p.is_file() and p.stat().st_size > 1 << 20 for p in spool.rglob("*")):
            assert time.monotonic() < deadline, "no spool grew"
            proc.stdin.write(line)
        proc.send_signal(signal.SIGTERM)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 143, err
    assert "irspec: error: terminated" in err and "Traceback" not in err
    assert list(spool.iterdir()) == [] and not (tmp_path / "out.run").exists()
