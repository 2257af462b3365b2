"""ranx 0.3.21's answers, the reference of tests/test_compat_ranx.py and of the fusion tests
(test_fusion_ranx.py, test_fusion_learning_ranx.py, test_fusion_tuning.py), from a reference script of
tests/fixtures run in a process of its own with ranx on its path (``IRSPEC_RANX_PATH``, a ``pip install
--target`` folder: installed beside ir_measures, ranx changes the providers ir_measures uses).

The script is served by one process per test worker (tests/fixtures/ranx_serve.py), which answers one
module's jobs after another: numba compiles ranx's functions once per process, seconds each time. Under
pytest-xdist, a module whose tests run on both workers asks for the same jobs twice; the first worker's
answers are kept in the run's shared temporary folder, under a lock, and the other reads them. They are
ranx's answers of this run either way (issue 35: the suite's time).

scripts/test has ranx answer the tests' jobs before the suite (tests/warm_ranx.py, which compiles its code
by answering them) and keeps the answers in the folder named by ``IRSPEC_RANX_ANSWERS``, by job
(:func:`job_key`): a module whose every job is there reads ranx's answers of this run from it instead of
asking ranx the same questions again.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SERVE = Path(__file__).parent / "fixtures" / "ranx_serve.py"
_served: dict[Path, subprocess.Popen[str]] = {}
_logs: dict[Path, Path] = {}


def answers(script: Path, jobs: list[Any], tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """What ``script`` (a reference script of tests/fixtures) answers to ``jobs``, or a skip when
    ``IRSPEC_RANX_PATH`` is not set."""
    path = os.environ.get("IRSPEC_RANX_PATH")
    if not path:
        pytest.skip("ranx 0.3.21 is the reference: set IRSPEC_RANX_PATH to a pip --target folder holding it")
    stored = _stored(script, path, jobs)
    if stored is not None:
        return stored
    text = json.dumps(jobs)
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return _run(script, text, tmp_path_factory.mktemp("ranx"), path)
    # the workers' base folders (popen-gw0, ...) share their parent, this run's own
    key = hashlib.sha256(f"{script.name}\n{path}\n{text}".encode()).hexdigest()[:20]
    shared = tmp_path_factory.getbasetemp().parent / f"ranx-{key}"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits here while this one asks ranx
        done = shared / "answers.json"
        if not done.exists():
            found = _run(script, text, shared, path)
            (shared / "partial.json").write_text(json.dumps(found))
            (shared / "partial.json").replace(done)
            return found
    return json.loads(done.read_text())


def job_key(script: Path, ranx_path: str, job: Any) -> str:
    """The key of ``script``'s answer to ``job`` with the ranx of ``ranx_path`` (its JSON text hashed)."""
    return hashlib.sha256(f"{script.name}\n{ranx_path}\n{json.dumps(job)}".encode()).hexdigest()


def answer_store(script: Path) -> Path | None:
    """Where ``script``'s kept answers are (a JSON object of :func:`job_key` to answer): a file of the
    folder ``IRSPEC_RANX_ANSWERS`` names; ``None`` when it names none."""
    folder = os.environ.get("IRSPEC_RANX_ANSWERS")
    return Path(folder) / f"{script.stem}.json" if folder else None


_answered: dict[Path, dict[str, Any]] = {}


def _stored(script: Path, ranx_path: str, jobs: list[Any]) -> list[Any] | None:
    """ranx's answers to ``jobs`` kept by tests/warm_ranx.py (:func:`answer_store`); ``None`` unless
    every job is there."""
    store = answer_store(script)
    if store is None:
        return None
    if store not in _answered:
        _answered[store] = json.loads(store.read_text()) if store.exists() else {}
    found = [_answered[store].get(job_key(script, ranx_path, job)) for job in jobs]
    return None if any(answer is None for answer in found) else found


def _run(script: Path, text: str, folder: Path, ranx_path: str) -> list[Any]:
    todo, answered = folder / "jobs.json", folder / "ranx.json"
    todo.write_text(text)
    served = _served.get(script)
    if served is None or served.poll() is not None:
        with open(folder / "ranx.log", "w") as log:  # what the scripts print, and a failed start
            served = _served[script] = subprocess.Popen(
                [sys.executable, str(SERVE), str(script)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=dict(os.environ, PYTHONPATH=ranx_path),
                text=True,
            )
        _logs[script] = folder / "ranx.log"
    assert served.stdin is not None and served.stdout is not None
    served.stdin.write(f"{todo}\t{answered}\n")
    served.stdin.flush()
    reply = served.stdout.readline()
    if reply != "ok\n":
        why = json.loads(reply.partition(" ")[2]) if reply else _logs[script].read_text()
        raise AssertionError(f"ranx's {script.name} failed:\n{why[-3000:]}")
    return json.loads(answered.read_text())


@atexit.register
def _stop() -> None:
    for served in _served.values():
        if served.stdin is not None:
            served.stdin.close()  # the loop over standard input ends, and so does the process
        served.wait(timeout=60)
