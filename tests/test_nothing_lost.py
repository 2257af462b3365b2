"""Nothing lost (issue 33): no command writes over one of its own inputs or replaces a special file.

The guard is one (:mod:`irspec.report.files`); this module holds every command to it. It walks the
argument parser of every subcommand, so that a new command or option cannot be added without saying
here what each of its options is (an input, an output, or neither); then points every output option of
every command at every input of the command, spelled as typed, through ``..``, absolutely, by a
symbolic and by a hard link, and at special files (``/dev/null``, a FIFO with a reader), and checks the
outcome: a one-line error and exit 2 with every file in the folder as it was, or, for a special file,
the output written into it and the file still what it was. Plans (``irspec run``) are checked the same
way through their ``output`` and ``diff`` paths, and the library's writer directly.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from irspec import hookimpl
from irspec.cli import _COMMANDS, build_parser, main
from irspec.errors import IrspecError
from irspec.plugin_api import Command
from irspec.report.files import Inputs, check_writable, write_all_atomic, write_atomic

DEMO = Path(__file__).resolve().parent.parent / "specs" / "demo"

INPUT, OUTPUT, OTHER = "input", "output", "other"

ROLES: dict[str, dict[str, str]] = {
    "parse": {"specs": OTHER, "json": OTHER},
    "metrics": {"json": OTHER, "fusion": OTHER},
    "plugins": {},
    "eval": {
        "qrels": INPUT, "runs": INPUT, "system": INPUT, "fuse": INPUT, "zscores": INPUT, "groups": INPUT,
        "output": OUTPUT, "write_z": OUTPUT,
        "measures": OTHER, "per_query": OTHER, "no_summary": OTHER, "c": OTHER, "missing_queries": OTHER,
        "level": OTHER, "depth": OTHER, "judged_only": OTHER, "collection_size": OTHER, "judged_warning": OTHER,
        "format": OTHER, "ci": OTHER, "decimals": OTHER, "memory": OTHER, "standardize": OTHER,
        "z_cdf": OTHER, "agreement": OTHER, "rel_info_format": OTHER, "results_format": OTHER, "debug_level": OTHER, "version": OTHER,
        "recsys": INPUT, "topk": INPUT, "exclude": INPUT, "popularity": INPUT, "empty_users": OTHER,
        "columns": OTHER, "features": INPUT, "expected": INPUT, "propensity": OTHER,
    },
    "diff": {
        "qrels": INPUT, "run_a": INPUT, "run_b": INPUT, "output": OUTPUT,
        "measures": OTHER, "top": OTHER, "queries": OTHER, "depth": OTHER, "level": OTHER,
        "missing_queries": OTHER, "format": OTHER, "decimals": OTHER,
    },
    # a plan's outputs are its own: test_a_plan_never_writes_over_what_it_reads
    "run": {"plan": INPUT, "set": OTHER},
    "validate": {"plan": INPUT, "set": OTHER},
    # power prints to standard output only
    "power": {
        "plan": INPUT, "sources": INPUT, "set": OTHER, "measures": OTHER, "baseline": OTHER, "delta": OTHER,
        "alpha": OTHER, "power": OTHER, "format": OTHER, "decimals": OTHER,
    },
    "fuse": {
        "runs": INPUT, "qrels": INPUT, "output": OUTPUT,
        "method": OTHER, "depth": OTHER, "runid": OTHER, "memory": OTHER, "optimize": OTHER,
    },
    "reproduce": {
        "qrels": INPUT, "original": INPUT, "reproduced": INPUT, "reproduced_qrels": INPUT, "output": OUTPUT,
        "measures": OTHER, "rbo_p": OTHER, "depth": OTHER, "format": OTHER, "decimals": OTHER,
    },
}  # fmt: skip
"""What every option of every subcommand is: ``input`` (a file the command reads), ``output`` (a file
it writes) or ``other``. A new command or option fails test_every_option_of_every_command_has_a_role
until it is placed here; a new output is then checked by the tests below once it has an invocation."""

# Invocations of each command that writes files, each exercising some of its inputs; OUT marks where an
# output option's value goes. Every input role of ROLES is read by at least one invocation of its command.
INVOCATIONS: dict[str, list[list[str]]] = {
    "eval": [
        ["eval", "qrels.txt", "a.run", "b.run", "-m", "P@10"],
        ["eval", "qrels.txt", "a.run", "--system", "s=c.run,d.run", "--groups", "groups.txt", "-m", "P@10"],
        ["eval", "qrels.txt", "a.run", "b.run", "-Z", "z.txt", "-m", "P@10"],
        ["eval", "qrels.txt", "a.run", "--fuse", "h=rrf(k=60):c.run,d.run", "-m", "P@10"],
        [
            "eval",
            "--recsys",
            "test.parquet",
            "--topk",
            "recs.parquet",
            "--exclude",
            "train.parquet",
            "--popularity",
            "pop.parquet",
            "--features",
            "features.parquet",
            "--expected",
            "expected.parquet",
            "-m",
            "nDCG@2",
        ],
    ],
    "diff": [["diff", "qrels.txt", "a.run", "b.run"]],
    "reproduce": [
        [
            "reproduce",
            "qrels.txt",
            "--original",
            "a.run",
            "b.run",
            "--reproduced",
            "c.run",
            "d.run",
            "-m",
            "P@10",
            "--reproduced-qrels",
            "other.qrels",
        ],
    ],
    "fuse": [
        ["fuse", "a.run", "b.run", "--method", "rrf(k=60)"],
        ["fuse", "a.run", "b.run", "--method", "wsum", "--qrels", "qrels.txt", "--optimize", "P@10"],
    ],
}
INPUT_FILES = {"qrels.txt", "a.run", "b.run", "c.run", "d.run", "groups.txt", "z.txt", "other.qrels"}
INPUT_FILES |= {
    "test.parquet",
    "recs.parquet",
    "train.parquet",
    "pop.parquet",
    "features.parquet",
    "expected.parquet",
}  # irspec eval --recsys's


REFUSED = {"--recsys": {"--write-z"}}
"""Output options an invocation with a flag refuses outright (``--recsys`` evaluates one run, which has
no per-topic deviation to write); tests/test_cli_recsys.py sees that nothing is written then."""


def _outputs(command: str, argv: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The output options of ``command``, by their first flag (those ``argv`` takes)."""
    flags = {a.dest: a.option_strings[0] for a in _actions(command) if a.option_strings}
    refused = {flag for key, flags_ in REFUSED.items() if key in argv for flag in flags_}
    return [
        flags[dest] for dest, role in ROLES[command].items() if role == OUTPUT and flags[dest] not in refused
    ]


def _actions(command: str) -> list[argparse.Action]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [a for a in sub.choices[command]._actions if not isinstance(a, argparse._HelpAction)]


def _cases() -> list[tuple[str, list[str], str, str]]:
    """``(command, argv, output flag, input)`` for every output option and every input file of every
    invocation."""
    found = []
    for command, argvs in INVOCATIONS.items():
        for argv in argvs:
            inputs = [
                name
                for arg in argv
                for name in (arg.replace("=", ",").replace(":", ",").split(","))
                if name in INPUT_FILES
            ]
            for flag in _outputs(command, argv):
                found += [(command, argv, flag, name) for name in inputs]
    return found


def _digest(folder: Path) -> dict[str, str]:
    """Every entry of ``folder`` (recursively): a file's content hash, a link's target, a special file's kind."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            found[str(path)] = "-> " + os.readlink(path)
        elif stat.S_ISREG(info.st_mode):
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[str(path)] = stat.filemode(info.st_mode)[0]
    return found


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every input of INVOCATIONS (the demo's qrels and runs, the tables, the -Z file irspec eval writes),
    made once for the module: each test works in a copy of its own (``folder``)."""
    made = tmp_path_factory.mktemp("inputs")
    shutil.copy(DEMO / "qrels.txt", made / "qrels.txt")
    shutil.copy(DEMO / "qrels.llm.txt", made / "other.qrels")
    for name, run in zip("abcd", ["bm25", "dense", "hybrid", "random"], strict=True):
        shutil.copy(DEMO / "runs" / f"{run}.run", made / f"{name}.run")
    queries = sorted({line.split()[0] for line in (made / "qrels.txt").read_text().splitlines()})
    (made / "groups.txt").write_text("".join(f"{q} g{i % 2}\n" for i, q in enumerate(queries)))
    (made / "sub").mkdir()
    tables = {"test": {"user": [1, 2]}, "recs": {"user": [1, 1], "rank": [1, 2]}, "train": {"user": [2]}}
    tables["pop"] = tables["expected"] = tables["train"]
    for name, columns in tables.items():  # irspec eval --recsys's interaction tables
        items = {"item": [f"i{n}" for n in range(len(columns["user"]))]}
        pl.DataFrame({**columns, **items}).write_parquet(made / f"{name}.parquet")
    pl.DataFrame({"item": ["i0", "i1"], "x": [0.5, 1.0]}).write_parquet(made / "features.parquet")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(made)
        assert main(["eval", "qrels.txt", "a.run", "b.run", "-m", "P@10", "--write-z", "z.txt"]) == 0
    return made


@pytest.fixture
def folder(inputs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding every input of INVOCATIONS, as the cwd: a copy of ``inputs`` (writing
    the Parquet tables and evaluating for the -Z file took most of each test's time: issue 35)."""
    shutil.copytree(inputs, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_option_of_every_command_has_a_role():
    """Every subcommand and every option is in ROLES, and ROLES names nothing that is gone."""
    assert set(_COMMANDS) == set(ROLES), "a command was added or removed: place its options in ROLES"
    for command in _COMMANDS:
        dests = {a.dest for a in _actions(command)}
        assert dests == set(ROLES[command]), f"irspec {command}: place its new options in ROLES"


def test_every_input_and_output_role_is_exercised():
    """Each command that writes a file has invocations, and they read every kind of input it takes."""
    for command, roles in ROLES.items():
        if OUTPUT not in roles.values():
            continue
        assert command in INVOCATIONS, f"irspec {command} writes files: give it invocations here"
        used = {a.dest for argv in INVOCATIONS[command] for a in _actions(command) if _uses(argv, a)}
        wanted = {dest for dest, role in roles.items() if role == INPUT}
        assert wanted <= used, f"irspec {command}: no invocation reads {sorted(wanted - used)}"


def _uses(argv: list[str], action: argparse.Action) -> bool:
    if action.option_strings:
        return any(flag in argv for flag in action.option_strings)
    return True  # a positional argument is always given


@pytest.mark.parametrize(("command", "argv", "flag", "name"), _cases())
@pytest.mark.parametrize("spelling", ["typed", "dotdot", "absolute", "symlink", "hardlink"])
def test_an_output_never_overwrites_an_input(folder, capsys, command, argv, flag, name, spelling):
    """``irspec COMMAND ... FLAG INPUT``, the input spelled five ways: exit 2 with one line naming the
    output, every file of the folder as it was (no temporary file left either)."""
    target = _spelled(folder, name, spelling)
    before = _digest(folder)
    capsys.readouterr()
    assert main([*argv, flag, target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"irspec: error: cannot write {target!r}: it is an input"
    ), err
    assert _digest(folder) == before


def _spelled(folder: Path, name: str, spelling: str) -> str:
    """``name`` (a file in ``folder``) spelled as typed, through ``..``, absolutely, or by a symbolic or a
    hard link made for it."""
    if spelling == "symlink":
        os.symlink(name, folder / "link")
    elif spelling == "hardlink":
        os.link(folder / name, folder / "hard")
    return {"typed": name, "dotdot": f"sub/../{name}", "absolute": str(folder / name), "symlink": "link",
            "hardlink": "hard"}[spelling]  # fmt: skip


def test_a_fused_runs_provenance_never_overwrites_an_input(folder, capsys):
    """``fuse --optimize -o OUT`` writes OUT.provenance.json beside OUT: when that is an input (the
    training qrels here), nothing is written, neither OUT nor its provenance."""
    shutil.copy(folder / "qrels.txt", folder / "fused.provenance.json")
    before = _digest(folder)
    argv = ["fuse", "a.run", "b.run", "--method", "wsum", "--qrels", "fused.provenance.json"]
    assert main([*argv, "--optimize", "P@10", "-o", "fused"]) == 2
    assert "cannot write 'fused.provenance.json': it is an input" in capsys.readouterr().err
    assert _digest(folder) == before
    assert main([*argv, "--optimize", "P@10", "-o", "fused.run"]) == 0  # beside another name: both written
    assert (folder / "fused.run.provenance.json").is_file() and (folder / "fused.run").stat().st_size > 0


def test_two_outputs_of_one_command_are_never_one_file(folder, capsys):
    before = _digest(folder)
    assert main([*INVOCATIONS["eval"][0], "-o", "out.txt", "--write-z", "sub/../out.txt"]) == 2
    assert "another output of this command writes" in capsys.readouterr().err
    assert _digest(folder) == before


def _invocations_with_outputs() -> list[tuple[list[str], str]]:
    return [
        (argv, flag)
        for command, argvs in INVOCATIONS.items()
        for argv in argvs
        for flag in _outputs(command, argv)
    ]


@pytest.mark.parametrize(("argv", "flag"), _invocations_with_outputs())
def test_an_output_into_dev_null_leaves_it_a_device(folder, argv, flag):
    """``-o /dev/null`` (as root, replacing it would break the machine): written into, still a device."""
    before = os.stat("/dev/null")
    assert main([*argv, flag, "/dev/null"]) == 0
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino and after.st_rdev == before.st_rdev
    assert not list(Path("/dev").glob("null.provenance.json")) and not list(Path("/dev").glob(".null.*"))


@pytest.mark.parametrize(("argv", "flag"), _invocations_with_outputs())
def test_an_output_into_a_fifo_reaches_its_reader(folder, argv, flag):
    """``-o FIFO`` with a reader on the other end: the reader gets the output; the FIFO stays a FIFO."""
    fifo = folder / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        assert main([*argv, flag, str(fifo)]) == 0
    finally:
        _release(fifo, reader)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert got and len(got[0]) > 0
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == []  # no temporary file


def _release(fifo: Path, reader: threading.Thread) -> None:
    """Let a reader blocked on ``fifo`` go (a command that failed never opened it): open its other end
    without blocking (ENXIO while no reader has it open) until the reader is done."""
    while reader.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(0.05)


PLAN = """\
qrels: qrels.txt
runs: [a.run, b.run]
metrics: [P@10]
groups: groups.txt
output:
  - {format: json, path: results.json}
diff:
  - {a: a, b: b, path: diff.html}
"""


@pytest.mark.parametrize(
    "override",
    [
        "output.0.path=plan.yaml",
        "output.0.path=qrels.txt",
        "output.0.path=sub/../a.run",
        "output.0.path=groups.txt",
        "output.0.path=link",
        "diff.0.path=b.run",
        "diff.0.path=link",
    ],
)
def test_a_plan_never_writes_over_what_it_reads(folder, capsys, override):
    """A plan's outputs and diffs (here through ``--set``) onto its own file, its qrels, runs, groups, or
    a link to one: the plan is refused, located, before anything is read, and nothing changes."""
    (folder / "plan.yaml").write_text(PLAN)
    os.symlink("plan.yaml", folder / "link")
    before = _digest(folder)
    assert main(["run", "plan.yaml", "--set", override]) == 2
    err = capsys.readouterr().err
    assert "is an input of this plan" in err and "overwrit" in err, err
    assert _digest(folder) == before
    assert main(["run", "plan.yaml"]) == 0  # the plan as it stands writes where it says
    assert (folder / "results.json").is_file() and (folder / "diff.html").is_file()


def test_the_writer_refuses_an_input_however_spelled(tmp_path):
    """The guard itself: resolved paths, links and inodes; ``-``, objects and missing files pass."""
    data = tmp_path / "in.txt"
    data.write_text("keep\n")
    (tmp_path / "d").mkdir()
    os.symlink(data, tmp_path / "s")
    os.link(data, tmp_path / "h")
    inputs = Inputs(["-", None, {"q": {}}, data, "irds:msmarco-passage/dev"])
    for spelled in (data, tmp_path / "d" / ".." / "in.txt", tmp_path / "s", tmp_path / "h"):
        assert inputs.find(spelled) == str(data)
        with pytest.raises(IrspecError, match="it is an input of this command"):
            write_atomic(spelled, "lost\n", inputs=inputs)
        with pytest.raises(IrspecError, match="it is an input of this command"):
            check_writable(spelled, inputs=inputs)
    assert data.read_text() == "keep\n"
    assert inputs.find(tmp_path / "other.txt") is None
    write_atomic(tmp_path / "other.txt", "new\n", inputs=inputs)
    with pytest.raises(IrspecError, match="it is an input of this command"):  # a file in a directory output
        write_all_atomic([(tmp_path, {"in.txt": b"lost"})], inputs=inputs)
    assert data.read_text() == "keep\n"


def test_the_writer_writes_through_a_symbolic_link(tmp_path):
    """A link output keeps the link and gives its target the new content, as a shell's ``>`` does."""
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    os.symlink("real.txt", tmp_path / "link.txt")
    write_atomic(tmp_path / "link.txt", "new\n")
    assert (tmp_path / "link.txt").is_symlink() and target.read_text() == "new\n"


def test_the_writer_refuses_a_socket_and_a_block_device(tmp_path):
    import socket

    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(IrspecError, match="is a socket"):
            write_atomic(tmp_path / "sock", "x\n")
        with pytest.raises(IrspecError, match="is a socket"):
            check_writable(tmp_path / "sock")
    finally:
        sock.close()
    assert stat.S_ISSOCK((tmp_path / "sock").lstat().st_mode)
    if os.geteuid() != 0:
        pytest.skip("deliberate: making a block device node needs root (CI runs as root)")
    os.mknod(tmp_path / "blk", 0o600 | stat.S_IFBLK, os.makedev(7, 200))
    with pytest.raises(IrspecError, match="is a block device"):
        write_atomic(tmp_path / "blk", "x\n")
    assert stat.S_ISBLK((tmp_path / "blk").lstat().st_mode)


def test_a_special_file_is_written_in_place_with_the_others_all_or_none(tmp_path):
    """A FIFO among several outputs: written in place, the others renamed into place after it; when a
    regular output cannot be written (a directory in its way), the FIFO's reader gets nothing."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "dir.txt").mkdir()
    with pytest.raises(IrspecError, match="is a directory"):
        write_all_atomic([(fifo, "x\n"), (tmp_path / "dir.txt", "y\n")])
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_all_atomic([(fifo, "x\n"), (tmp_path / "b.txt", "y\n")])
    _release(fifo, reader)
    assert got == [b"x\n"] and (tmp_path / "b.txt").read_text() == "y\n"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


# --- a plugin's commands (irspec_register_commands) --------------------------------------------------


def _declare_copy(p: argparse.ArgumentParser) -> None:
    p.add_argument("source")
    p.add_argument("--also", nargs="*", default=[], help="more files read")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--upper", action="store_true")


def _run_copy(args: argparse.Namespace, inputs: Inputs) -> int:
    text = "".join(Path(p).read_text() for p in [args.source, *args.also])
    write_all_atomic([(args.output, text.upper() if args.upper else text)], inputs=inputs, make_dirs=False)
    return 0


def _run_sneaky(args: argparse.Namespace, inputs: Inputs) -> int:
    """Writes over its own input, a path no output role names: the writer's own check refuses it."""
    write_all_atomic([(args.source, "lost\n")], inputs=inputs, make_dirs=False)
    return 0


COPY_ROLES = {"source": INPUT, "also": INPUT, "output": OUTPUT, "upper": OTHER}


class Copier:
    """A plugin with commands that read files and write one (``irspec copy SOURCE --also ... -o OUT``)."""

    __name__ = "copier"

    def __init__(self, roles: dict[str, str] = COPY_ROLES, run=_run_copy, name: str = "copy") -> None:
        self.command = Command(name, "copy files into one", declare=_declare_copy, run=run, roles=roles)

    @hookimpl
    def irspec_register_commands(self, register):
        register(self.command)


@pytest.mark.parametrize("spelling", ["typed", "dotdot", "absolute", "symlink", "hardlink"])
@pytest.mark.parametrize("name", ["a.run", "b.run"])
def test_a_plugin_commands_output_never_overwrites_an_input(folder, capsys, irspec_plugin, spelling, name):
    """A plugin's command is held to the guard as irspec's own: its output onto its positional input or
    one of a list of inputs, spelled five ways, is refused before it runs, and nothing changes."""
    irspec_plugin(Copier())
    target = _spelled(folder, name, spelling)
    before = _digest(folder)
    capsys.readouterr()
    assert main(["copy", "a.run", "--also", "c.run", "b.run", "-o", target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"irspec: error: cannot write {target!r}: it is an input"
    ), err
    assert _digest(folder) == before


def test_a_plugin_command_writes_its_output_and_special_files_in_place(folder, irspec_plugin):
    irspec_plugin(Copier())
    assert main(["copy", "a.run", "--also", "b.run", "-o", "sub/out.txt", "--upper"]) == 0
    expected = ((folder / "a.run").read_text() + (folder / "b.run").read_text()).upper()
    assert (folder / "sub" / "out.txt").read_text() == expected
    before = os.stat("/dev/null")
    assert main(["copy", "a.run", "-o", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and os.stat("/dev/null").st_ino == before.st_ino


def test_a_plugin_command_that_writes_over_an_input_anyway_is_refused_by_the_writer(
    folder, capsys, irspec_plugin
):
    irspec_plugin(Copier(run=_run_sneaky))
    before = _digest(folder)
    assert main(["copy", "a.run", "-o", "out.txt"]) == 2
    assert "cannot write 'a.run': it is an input" in capsys.readouterr().err
    assert _digest(folder) == before


def test_a_plugin_command_with_an_argument_of_no_role_is_refused(folder, capsys, irspec_plugin):
    """An argument no role names (an output that would escape the guard) makes the command an error, said
    when its parser is made, before anything is read or written."""
    irspec_plugin(Copier(roles={k: v for k, v in COPY_ROLES.items() if k != "output"}))
    before = _digest(folder)
    assert main(["copy", "a.run", "-o", "a.run"]) == 2
    assert "command 'copy': argument 'output' has no role" in capsys.readouterr().err
    assert _digest(folder) == before


def test_a_plugin_command_named_like_irspecs_own_is_refused(capsys, irspec_plugin):
    irspec_plugin(Copier(name="fuse"))
    assert main(["copy"]) == 2  # any command line that needs the plugins' commands says so
    assert "registers the command 'fuse', which is irspec's own" in capsys.readouterr().err
    assert main(["parse", "P@10"]) == 0  # irspec's own commands do not build the registry's commands


# --- standard output and the files a directory output holds ---------------------------------------


def _irspec(argv: list[str], stdout: Any, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``irspec ARGV`` in a process of its own, its standard output ``stdout`` (an open file)."""
    return subprocess.run(
        [sys.executable, "-m", "irspec", *argv], stdout=stdout, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})}, timeout=120, check=False,
    )  # fmt: skip


def test_an_output_to_dev_stdout_is_written_where_standard_output_is(tmp_path):
    """``-o /dev/stdout >> log`` appended to log as ``>>`` does: the link leads to log, and a rename over it
    replaced log (a new inode, its earlier lines gone, and what a shell wrote around the command)."""
    log = tmp_path / "log.txt"
    log.write_text("earlier\n")
    inode = log.stat().st_ino
    argv = ["eval", str(DEMO / "qrels.txt"), str(DEMO / "runs" / "bm25.run"), "-m", "AP", "-f", "trec"]
    for path in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        with open(log, "a") as out:
            done = _irspec([*argv, "-o", path], out)
        assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines()
    assert log.stat().st_ino == inode and lines[0] == "earlier" and len(lines) == 1 + 3
    assert lines[1] == lines[2] == lines[3] and lines[1].split() == ["map", "all", "0.3912"]
    # standard output opened on an input is an input still
    qrels = tmp_path / "qrels.txt"
    shutil.copy(DEMO / "qrels.txt", qrels)
    before = qrels.read_bytes()
    with open(qrels, "a") as out:
        done = _irspec(["eval", str(qrels), str(DEMO / "runs" / "bm25.run"), "-o", "/dev/stdout"], out)
    assert done.returncode == 2 and "it is an input of this command" in done.stderr
    assert qrels.read_bytes() == before


@pytest.mark.parametrize(
    ("output", "env", "message"),
    [
        ("/dev/full", {}, "irspec: error: cannot write to standard output: no space left on device\n"),
        (
            "md",
            {"PYTHONIOENCODING": "cp1252"},
            "irspec: error: cannot write to standard output: its encoding, cp1252, has no '\\u2193'",
        ),
    ],
)
def test_standard_output_that_cannot_be_written_is_one_line_and_status_2(tmp_path, output, env, message):
    """Each ended in Python's traceback and status 1: a full disk, and an encoding without the Markdown
    table's arrows."""
    plan = tmp_path / "plan.yaml"  # a comparison: its marks (the Markdown's arrows)
    plan.write_text(
        f"qrels: {DEMO / 'qrels.txt'}\nruns: [{DEMO / 'runs' / 'bm25.run'}, {DEMO / 'runs' / 'dense.run'}]\n"
        "metrics: [AP]\ncompare: {baseline: bm25}\noutput: [{format: markdown}]\n"
    )
    argv = ["run", str(plan)]
    with open(output if output.startswith("/") else tmp_path / output, "w") as out:
        done = _irspec(argv, out, env)
    assert done.returncode == 2 and done.stderr.startswith(message), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_a_directory_outputs_link_and_fifo_are_written_through_and_into(tmp_path):
    """A plots directory holding a symbolic link and a FIFO under the names of its files: each was replaced
    by a regular file. Written as a file output is: through the link, into the FIFO."""
    out = tmp_path / "plots"
    out.mkdir()
    (tmp_path / "real.svg").write_text("old\n")
    os.symlink("../real.svg", out / "b.svg")
    os.mkfifo(out / "a.svg")
    # a writer of the test's own holds the FIFO open, so that its reader ends (with what it got) when the
    # test closes it, whether or not the output went into the FIFO
    held = os.open(out / "a.svg", os.O_RDWR)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append((out / "a.svg").read_bytes()), daemon=True)
    reader.start()
    try:
        write_all_atomic([(out, {"a.svg": b"x\n", "b.svg": b"y\n", "c.svg": b"z\n"})])
    finally:
        os.close(held)
        reader.join(timeout=30)
    assert got == [b"x\n"] and stat.S_ISFIFO((out / "a.svg").lstat().st_mode)
    assert (out / "b.svg").is_symlink() and (tmp_path / "real.svg").read_text() == "y\n"
    assert (out / "c.svg").read_text() == "z\n"
    assert sorted(p.name for p in out.iterdir()) == ["a.svg", "b.svg", "c.svg"]
