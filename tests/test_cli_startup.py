"""The ``irspec`` command's own process starts numpy's OpenBLAS with one thread unless told otherwise, runs
the cyclic garbage collector less often, and keeps freed memory for its next arrays."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from irspec.cli import BLAS_THREADS, YOUNG_THRESHOLD, keep_freed_memory, one_blas_thread

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


# Three blocks of 8 MiB made, filled and freed, 20 times over: glibc's own thresholds (raised to 8 MiB by
# the first free) give the heap's top back once 16 MiB of it are free, so every round faults its pages
# in again (21,000 faults here); with keep_freed_memory's, the memory is kept and the rounds after the
# first fault next to nothing (1,500).
CHURN = (
    "import os, resource, sys, numpy as np, irspec.cli as cli\n"
    "made = cli.keep_freed_memory(os.environ) if sys.argv[1] == 'kept' else False\n"
    "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
    "for _ in range(20):\n"
    "    blocks = [np.ones(1 << 20) for _ in range(3)]\n"
    "    del blocks\n"
    "print(made, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="deliberate: glibc's allocator, on Linux")
def test_the_command_keeps_freed_memory_for_the_next_arrays():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    faults = {}
    for how in ("kept", "default"):
        done = subprocess.run(
            [sys.executable, "-c", CHURN, how], capture_output=True, text=True, env=env, check=True
        )
        made, count = done.stdout.split()
        faults[how] = (made, int(count))
    assert faults["kept"][0] == "True" and faults["default"][0] == "False"
    # (fewer faults than pages where the kernel maps huge pages; the ratio is what tells)
    assert faults["kept"][1] * 5 < faults["default"][1]


def test_what_the_user_set_for_the_allocator_rules():
    assert not keep_freed_memory({"MALLOC_ARENA_MAX": "2"})
    assert not keep_freed_memory({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"})
