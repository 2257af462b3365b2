"""pytrec_eval's own tests and shipped examples, run with ``import pytrec_eval`` giving irspec's drop-in.

The pytrec_eval here is pytrec-eval-terrier, the one BEIR, MTEB and PyTerrier install. Two things of its
own run twice, in processes of their own: with pytrec_eval, and with a ``pytrec_eval`` module that is
``irspec.compat.pytrec_eval`` (the one-line swap a user makes). Each must do the same under both.

- **Its tests**: ``tests/pytrec_eval_tests.py`` as published in its repository (neither its sdist nor
  its wheel holds them): terrierteam/pytrec_eval at 68c150b, 0.5.9's commit (the file is unchanged
  since 0.5.8; the sdist and the pytrec_eval installed are 0.5.11, whose Python module differs from
  this commit's in its version string alone). It is
  found at ``$IRSPEC_PYTREC_EVAL_TESTS``, else at ``../shared/pytrec_eval_tests``. ``scripts/test``
  fetches the folder once into ``.cache/`` where there is no shared copy; where GitHub cannot be
  reached it says so at the start, and this test skips deliberately.

  The file runs as its authors run it, ``python pytrec_eval_tests.py``: its tests against trec_eval's
  test files are added only when it runs as a script. It runs beside ``../trec_eval/test``, which is
  trec_eval 10's test data here (``IRSPEC_TREC_EVAL_TEST``). Its whole report must be the same under
  both, test by test, with every failure's message and values.

  One test fails under both, in the same way (:data:`FAILING`): pytrec_eval computes trec_eval 9's
  11pt_avg, which trec_eval 10's file does not hold at relevance level 2. The drop-in gives pytrec_eval's
  values (docs/coming-from/pytrec_eval.md).
- **Its examples**: the ``examples/`` of its 0.5.11 sdist on PyPI (``tests/peers/pytrec_eval_sdist.py``
  downloads it; ``IRSPEC_PYTREC_EVAL_SDIST`` names it). They are ``simple.py``, ``simple_cut.py``,
  ``trec_eval.py`` on trec_eval's test qrels and run, and ``statistical_significance.py``, which compares
  that run with another. Each must print the same and exit the same, byte for byte. The hash seed is
  fixed, because one example orders the queries by a set. ``rl.py`` is left out: it needs an Indri index
  (pyndri) and gym.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

import pytrec_eval_sdist
from shared_data import TREC_EVAL_TEST, peer_tests

pytest.importorskip("pytrec_eval", reason="pytrec_eval is the reference: pip install -e '.[test]'")


SHIM = '''\
"""pytrec_eval, replaced by irspec's drop-in (tests/test_pytrec_eval_suite.py)."""
import sys

import irspec.compat.pytrec_eval

sys.modules[__name__] = irspec.compat.pytrec_eval
'''

FAILING: dict[str, str] = {
    "test_results.test-qrels.rel_level-out.test.aql-relevance_level=2": "11pt_avg: pytrec_eval gives trec_eval "
    "9's 0.1804 (its c-th relevant document is floor(x*R + 0.9)); trec_eval 10's out.test.aql says 0.1817",
}
"""pytrec_eval's tests that fail with pytrec_eval itself on trec_eval 10's test data, and why."""


def _trec_eval_test() -> Path:
    if not (TREC_EVAL_TEST / "results.test").is_file():
        pytest.skip(f"trec_eval 10's test data not found at {TREC_EVAL_TEST}: set IRSPEC_TREC_EVAL_TEST")
    return TREC_EVAL_TEST


def _run(args: list[str], cwd: Path, shim: Path | None) -> tuple[int, str, str]:
    """``python ARGS`` in ``cwd``, with ``pytrec_eval`` the drop-in when ``shim`` (its folder) is given."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)
    if shim is not None:
        env["PYTHONPATH"] = str(shim)
    proc = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shim")
    (folder / "pytrec_eval.py").write_text(SHIM)
    return folder


def test_pytrec_evals_own_tests_report_the_same_against_the_drop_in(tmp_path: Path, shim: Path) -> None:
    folder = peer_tests(
        "pytrec_eval",
        "pytrec_eval_tests.py",
        "pytrec_eval's tests (terrierteam/pytrec_eval's tests/ at 68c150b) in $IRSPEC_PYTREC_EVAL_TESTS or "
        "../shared/pytrec_eval_tests: run scripts/test",
    )
    suite = folder / "pytrec_eval_tests.py"
    # the file finds trec_eval's test data at ../trec_eval/test from its own folder, as in its repository
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / suite.name).write_text(suite.read_text())
    (tmp_path / "trec_eval").mkdir()
    (tmp_path / "trec_eval" / "test").symlink_to(_trec_eval_test().resolve(), target_is_directory=True)
    args = [f"tests/{suite.name}", "-v"]
    reference = _run(args, tmp_path, None)
    dropin = _run(args, tmp_path, shim)

    def report(result: tuple[int, str, str]) -> tuple[int, str, str]:
        status, out, err = result
        return status, out, re.sub(r"(Ran \d+ tests) in [0-9.]+s", r"\1", err)

    assert report(dropin) == report(reference)
    ran = re.search(r"Ran (\d+) tests", reference[2])
    assert ran and int(ran.group(1)) >= 7, reference[2][-2000:]
    failed = set(re.findall(r"^FAIL: (\S+)", reference[2], re.MULTILINE))
    errors = re.findall(r"^ERROR: (\S+)", reference[2], re.MULTILINE)
    assert failed == set(FAILING) and not errors, reference[2][-3000:]


def _other_run(trec_eval_test: Path, folder: Path) -> Path:
    """trec_eval's test run with every score negated: another ranking of the same documents."""
    lines = []
    for line in (trec_eval_test / "results.test").read_text().splitlines():
        fields = line.split()
        fields[4] = repr(-float(fields[4]))
        lines.append(" ".join(fields))
    other = folder / "negated.test"
    other.write_text("\n".join(lines) + "\n")
    return other


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist's ``examples/`` unpacked, with trec_eval's test files and a second run beside them."""
    folder = tmp_path_factory.mktemp("pytrec_eval_examples")
    given = os.environ.get("IRSPEC_PYTREC_EVAL_SDIST")
    try:
        sdist = Path(given) if given else pytrec_eval_sdist.fetch(folder)
    except OSError as e:
        pytest.skip(f"pytrec-eval-terrier's sdist could not be downloaded ({e}): run scripts/test")
    with tarfile.open(sdist) as tar:  # each file written by hand: Pythons before 3.11.4 lack its filters
        for member in tar.getmembers():
            if member.isfile() and "/examples/" in member.name and member.name.endswith(".py"):
                name = member.name.rsplit("/", 1)[1]
                extracted = tar.extractfile(member)
                assert extracted is not None
                (folder / name).write_bytes(extracted.read())
    trec_eval_test = _trec_eval_test()
    for name in ("qrels.test", "qrels.rel_level", "results.test"):
        (folder / name).write_bytes((trec_eval_test / name).read_bytes())
    _other_run(trec_eval_test, folder)
    return folder


EXAMPLES = {
    "simple": ["simple.py"],
    "simple_cut": ["simple_cut.py"],
    "trec_eval": ["trec_eval.py", "qrels.test", "results.test"],
    "trec_eval graded": ["trec_eval.py", "qrels.rel_level", "results.test"],
    # measures without parameters (the example reads a value by the measure's bare name): per-query
    # logarithms, and trec_eval 9's values where 10's differ
    **{
        f"significance {m}": ["statistical_significance.py", "qrels.rel_level", "results.test", "negated.test",
                              "--measure", m]
        for m in ("gm_map", "11pt_avg")
    },
}  # fmt: skip


@pytest.mark.parametrize("args", EXAMPLES.values(), ids=EXAMPLES.keys())
def test_pytrec_evals_examples_print_the_same_against_the_drop_in(examples: Path, shim: Path, args) -> None:
    reference = _run(args, examples, None)
    assert _run(args, examples, shim) == reference
    status, out, err = reference
    assert status == 0 and out and not err, err[-2000:]
