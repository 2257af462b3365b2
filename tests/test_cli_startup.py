"""The ``irspec`` command's own process starts numpy's OpenBLAS with one thread unless told otherwise, and
runs the cyclic garbage collector less often."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from irspec.cli import BLAS_THREADS, YOUNG_THRESHOLD, one_blas_thread

# run() with main replaced: what the command's process holds in its environment when main starts
SHOW = (
    "import os, irspec.cli as cli\n"
    "cli.main = lambda: print(os.environ.get(cli.BLAS_THREADS), 'numpy' in __import__('sys').modules) or 0\n"
    "cli.run()\n"
)


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("4", "4")])
def test_the_command_starts_one_blas_thread_unless_told(given, expected):
    env = {k: v for k, v in os.environ.items() if k != BLAS_THREADS}
    if given is not None:
        env[BLAS_THREADS] = given
    done = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == [expected, "False"]  # and numpy not loaded yet: the setting still counts


def test_a_process_with_numpy_loaded_is_left_as_it_is():
    environ: dict[str, str] = {}
    one_blas_thread(environ, {"numpy": object()})
    assert environ == {}
    one_blas_thread(environ, {})
    assert environ == {BLAS_THREADS: "1"}


def test_the_command_passes_over_young_objects_less_often():
    show = (
        "import gc, irspec.cli as cli\n"
        "before = gc.get_threshold()\n"
        "cli.main = lambda: print(*before, *gc.get_threshold()) or 0\n"
        "cli.run()\n"
    )
    done = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, check=True)
    before, after = done.stdout.split()[:3], done.stdout.split()[3:]
    assert after[0] == str(YOUNG_THRESHOLD) and int(before[0]) < YOUNG_THRESHOLD
    assert after[1:] == before[1:]  # the older generations as they were
