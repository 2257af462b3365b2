"""The ``irspec`` process ends without the interpreter's teardown (``irspec.cli.end``, issue 23), and
nothing is lost by it: the whole output, the exit status, exit handlers, threads still at work, a
reader that closes the pipe early. Each check runs the command in a new interpreter, as a user does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import irspec
from irspec.cli import main

ROOT = Path(irspec.__file__).resolve().parent.parent
DEMO = ROOT / "specs" / "demo"
EVAL = ["eval", str(DEMO / "qrels.txt"), str(DEMO / "runs" / "bm25.run"), "-m", "official", "-q"]


def _python(code: str, *args: str, stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_whole_output_and_the_status_come_out(capsys):
    assert main(EVAL) == 0
    expected = capsys.readouterr().out
    done = _python("import sys\nfrom irspec.cli import run\nrun()", *EVAL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.decode() == expected and len(expected) > 10_000  # every per-query line, flushed
    failed = _python("import sys\nfrom irspec.cli import run\nrun()", "eval", "nowhere.txt", "nothing.run")
    assert failed.returncode == 2 and failed.stderr.decode().startswith("irspec: error: ")


def test_python_dash_m_irspec_ends_the_same_way(capsys):
    assert main(EVAL) == 0
    expected = capsys.readouterr().out
    env = dict(os.environ, PYTHONPATH=str(ROOT), IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1")
    done = subprocess.run(
        [sys.executable, "-m", "irspec", *EVAL], capture_output=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.decode() == expected


def test_exit_handlers_run(tmp_path: Path):
    # a plugin (or polars) may register one: it runs as at any exit, and what it prints comes out
    code = (
        "import atexit, sys\natexit.register(lambda: print('handler ran', file=sys.stderr))\n"
        "from irspec.cli import run\nrun()"
    )
    done = _python(code, *EVAL)
    assert done.returncode == 0 and done.stderr.decode().endswith("handler ran\n")


def test_a_thread_still_at_work_is_waited_for(tmp_path: Path):
    marker = tmp_path / "written"
    code = (
        "import sys, threading, time\n"
        "marker = sys.argv[1]\n"
        "def late():\n    time.sleep(0.5)\n    open(marker, 'w').write('done')\n"
        "threading.Thread(target=late).start()\n"
        "sys.argv[1:2] = []\nfrom irspec.cli import run\nrun()"
    )
    done = _python(code, str(marker), *EVAL)
    assert done.returncode == 0 and marker.read_text() == "done"


def test_a_reader_that_closes_the_pipe_early_sees_no_error():
    # as `irspec eval ... -q | head -1`, with more output than a pipe holds
    runs = sorted(str(p) for p in (DEMO / "runs").glob("*.run"))
    args = ["eval", str(DEMO / "qrels.txt"), *runs, "-m", "official", "-q", "--format", "trec"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), IRSPEC_DISABLE_PLUGIN_AUTOLOAD="1")
    child = subprocess.Popen(
        [sys.executable, "-m", "irspec", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline()
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 0, err[-2000:]
    assert first.startswith(b"runid"), first
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err, err[-2000:]


def test_the_interpreter_is_not_torn_down():
    # what the teardown would free one by one (~35 ms for numpy, polars and irspec) is left to the OS
    code = (
        "import sys\nclass Kept:\n    def __del__(self):\n        print('torn down', file=sys.stderr)\n"
        "kept = Kept()\nfrom irspec.cli import run\nrun()"
    )
    done = _python(code, *EVAL)
    assert done.returncode == 0 and "torn down" not in done.stderr.decode()
    failed = _python(code, "eval", "nowhere.txt", "nothing.run")  # an error ends the same way
    assert failed.returncode == 2 and "torn down" not in failed.stderr.decode()
