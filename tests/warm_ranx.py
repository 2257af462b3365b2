"""ranx's compiled code written to numba's cache once ranx is installed, before the suite runs: what pip
does for a package's bytecode, done for the JIT of the tests' reference.

ranx 0.3.21 compiles its functions with numba when a process first calls them and keeps the code on disk
beside itself (its ``pip install --target`` folder, ``IRSPEC_RANX_PATH``), where every later process reads
it (tests/fixtures/ranx_serve.py has numba's typed dicts and lists cache theirs too). On a fresh machine the
suite's first ranx processes compiled everything: ~160 s of the tests' summed time, ~80 s of the suite's wall
time on two cores (issue 35). scripts/test runs this script beside the lint and the site's build, which leave
a core idle.

It sends the two reference scripts the jobs the tests send them, taken from the test modules themselves,
through the serving process the tests use: what numba compiles depends on the types of what it is given,
an empty ranking's included, so a job of each kind was not enough (a sixth of the compiling was left to
the tests). It checks that ranx answered, and with ``IRSPEC_RANX_ANSWERS`` set (scripts/test sets it to a
folder of its own) keeps each answer there by job (tests/ranx_process.py's ``job_key``): the tests then
read ranx's answers of this run rather than having ranx answer the same jobs again (~25 s of CPU).

    IRSPEC_RANX_PATH=.ci-ranx python tests/warm_ranx.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import test_compat_ranx  # noqa: E402  (the jobs the tests send, from the test modules)
import test_fusion_learning_ranx  # noqa: E402
import test_fusion_ranx  # noqa: E402
import test_fusion_tuning  # noqa: E402
from ranx_process import SERVE, answer_store, job_key  # noqa: E402


def main() -> int:
    ranx_path = os.environ.get("IRSPEC_RANX_PATH")
    if not ranx_path:
        print("warm_ranx: IRSPEC_RANX_PATH is not set", file=sys.stderr)
        return 2
    fusion = (
        test_fusion_ranx.CASES
        + [
            dict(c, qrels=test_fusion_learning_ranx.training(c["runs"], c["qrels"]))
            for c in test_fusion_learning_ranx.CASES
        ]
        + test_fusion_tuning.ranx_jobs()
    )
    work = {
        test_compat_ranx.SCRIPT: test_compat_ranx.JOBS,
        test_fusion_ranx.SCRIPT: fusion,
    }
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        served = []
        answers: dict[Path, Path] = {}
        for i, (script, jobs) in enumerate(work.items()):
            todo, answered = Path(tmp, f"jobs{i}.json"), Path(tmp, f"answers{i}.json")
            answers[script] = answered
            todo.write_text(json.dumps(jobs))
            # both scripts at once: each compiles its own functions, on a core of its own
            process = subprocess.Popen(
                [sys.executable, str(SERVE), str(script)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=dict(os.environ, PYTHONPATH=ranx_path),
                text=True,
            )
            assert process.stdin is not None
            process.stdin.write(f"{todo}\t{answered}\n")
            process.stdin.close()
            served.append((script, jobs, process))
        failed = 0
        for script, jobs, process in served:
            assert process.stdout is not None
            reply = process.stdout.read()
            process.wait()
            if reply != "ok\n":
                print(f"warm_ranx: {script.name} failed: {reply[:2000]}", file=sys.stderr)
                failed += 1
            else:
                print(f"warm_ranx: {script.name}, {len(jobs)} jobs", file=sys.stderr)
                _keep(script, ranx_path, jobs, json.loads(answers[script].read_text()))
    print(f"warm_ranx: ranx's code compiled and cached in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 1 if failed else 0


def _keep(script: Path, ranx_path: str, jobs: list, found: list) -> None:
    """ranx's answers to ``jobs``, kept by job in ``IRSPEC_RANX_ANSWERS`` (when set) for the tests."""
    store = answer_store(script)
    if store is None or len(found) != len(jobs):
        return
    kept = {job_key(script, ranx_path, job): answer for job, answer in zip(jobs, found, strict=True)}
    partial = store.with_suffix(".partial")
    partial.write_text(json.dumps(kept))
    partial.replace(store)  # whole or not at all: a test never reads half a store


if __name__ == "__main__":
    sys.exit(main())
