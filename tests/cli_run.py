"""``irspec ARGS`` run in the test's own process, through :func:`irspec.cli.main`: what a command prints
and returns, without starting a Python for it (each start cost some 0.3 s of CPU, and the suite started
hundreds: issue 35).

What only a process shows keeps a process of its own: the status the shell sees, standard input and
output as pipes, that a failure prints no traceback, start-up and the end of the process
(tests/test_cli_exit.py, tests/test_cli_startup.py, tests/test_import_light.py, and a fresh-process test
beside the in-process ones of a command). An uncaught exception, which a process would print as a
traceback with status 1, fails the test here with its own traceback.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from irspec.cli import main


@dataclass(frozen=True)
class Done:
    """What ``irspec ARGS`` did: its exit status and what it printed (``subprocess.CompletedProcess``'s
    names, so that a test reads the same either way)."""

    returncode: int
    stdout: str
    stderr: str


def irspec_cli(capsys: pytest.CaptureFixture[str], *args: str | Path, cwd: str | Path | None = None) -> Done:
    """``irspec ARGS`` in this process, in ``cwd`` (the test's working directory by default), with what it
    printed taken from ``capsys``. ``argparse``'s exits (a usage error, ``--help``) are returned as the
    status a process would end with."""
    capsys.readouterr()  # what the test printed before is not the command's
    before = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            status = main([str(a) for a in args])
        except SystemExit as exited:  # as the interpreter ends on it
            if exited.code is None or isinstance(exited.code, int):
                status = exited.code or 0
            else:
                print(exited.code, file=sys.stderr)
                status = 1
    finally:
        os.chdir(before)
    out, err = capsys.readouterr()
    return Done(status, out, err)
