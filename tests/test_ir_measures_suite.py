"""ir_measures 0.4.3's own test suite, as published in its sdist on PyPI, run against irspec.

The sdist is the one ``.ci/run`` downloads (``IRSPEC_IR_MEASURES_SDIST`` names it) or, without it, the one
``pip download --no-deps --no-binary :all: ir-measures==0.4.3`` fetches now; it is never copied into
this repository. Its ``tests/`` folder is unpacked into a temporary folder, made a package, given the
``base.py`` the sdist leaves out (``tests/peers/ir_measures_base.py``) and a ``conftest.py``
(``tests/peers/ir_measures_conftest.py``) that chooses what ``import ir_measures`` gets, and run by
pytest in a subprocess three times:

- ``peer``: ir_measures alone. Its failures here are :data:`ENVIRONMENT`'s, each for a reason outside
  irspec (a data file the sdist leaves out, a provider whose package is not installed): the test holds
  that list exact, so that it cannot hide a failure of irspec's;
- ``dropin``: ``irspec.compat.ir_measures`` in place of ir_measures;
- ``registered``: ir_measures with irspec's provider first in its default pipeline and its registry
  (``register()``); ``test_measures.py`` then compares irspec's values with every other provider's.

Each must fail exactly the tests of :data:`ENVIRONMENT` and of its list of departures (documented in
docs/coming-from/ir_measures.md): a new failure fails this test, and so does a listed one that passes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from junit import cases

pytest.importorskip("ir_measures")

VERSION = "0.4.3"
PEERS = Path(__file__).resolve().parent / "peers"

ENVIRONMENT: dict[str, str] = {
    "test_compat.py::TestCompat::test_measures": "reads tests/compat.qrels, which the sdist leaves out",
    "test_cwl_eval.py::TestCwlEval::test_measures": "reads tests/cwl.qrels, which the sdist leaves out",
    "test_providers.py::TestPytrecEval::test_empty": "calls ir_measures' trectools provider, whose package "
    "(trectools) is not installed here",
    "test_ranx.py::TestRanx::test_P": "calls ir_measures' ranx provider, whose package is not installed here "
    "(installed beside ir_measures, ranx changes which provider ir_measures uses)",
}
"""ir_measures' tests that fail with ir_measures alone here, and why: not irspec's to fix."""

DEPARTURES: dict[str, dict[str, str]] = {"dropin": {}, "registered": {}}
"""The tests each mode fails beyond :data:`ENVIRONMENT`, and why irspec departs there (none)."""


def _sdist(tmp: Path) -> Path:
    """ir_measures' sdist: ``IRSPEC_IR_MEASURES_SDIST``, or downloaded from PyPI into ``tmp``."""
    given = os.environ.get("IRSPEC_IR_MEASURES_SDIST")
    if given:
        return Path(given)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
    proc = subprocess.run(
        [*cmd, "--dest", str(tmp), f"ir-measures=={VERSION}"], capture_output=True, text=True, check=False
    )
    found = sorted(tmp.glob(f"ir*measures-{VERSION}.tar.gz"))
    if proc.returncode != 0 or not found:
        pytest.skip(f"ir_measures {VERSION}'s sdist could not be downloaded: {proc.stderr.strip()[-300:]}")
    return found[0]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ir_measures' tests unpacked as a package ``irm_tests``, with the harness's ``base.py`` and
    ``conftest.py`` beside them."""
    tmp = tmp_path_factory.mktemp("ir_measures_suite")
    # each file written by hand, not extractall(filter="data"), which Pythons before 3.11.4 lack
    with tarfile.open(_sdist(tmp)) as tar:
        for member in tar.getmembers():
            if not (member.isfile() and "/tests/" in member.name):
                continue
            name = Path(member.name.split("/tests/", 1)[1])
            assert not name.is_absolute() and ".." not in name.parts, member.name
            target = tmp / "irm_tests" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None, member.name
            target.write_bytes(source.read())
    assert (tmp / "irm_tests" / "test_pytrec_eval.py").exists(), "the sdist's tests/ folder is not there"
    (tmp / "irm_tests" / "__init__.py").write_text("")
    shutil.copy(PEERS / "ir_measures_base.py", tmp / "irm_tests" / "base.py")
    shutil.copy(PEERS / "ir_measures_conftest.py", tmp / "irm_tests" / "conftest.py")
    return tmp


def _run(folder: Path, mode: str) -> tuple[set[str], set[str], str]:
    """Run the suite in ``mode``: the tests that passed, those that failed (or erred), and pytest's output."""
    report = folder / f"{mode}.xml"
    env = dict(os.environ, IRSPEC_SUITE_MODE=mode)
    env.pop("IRSPEC_STRICT_SKIPS", None)  # irspec's rule for its own tests, not ir_measures'
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(folder),
            f"--junitxml={report}",
            "irm_tests",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if not report.exists():
        raise AssertionError(
            f"ir_measures' suite did not run ({mode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    passed, failed = set(), set()
    for case in cases(report):
        name = f"{case.classname.removeprefix('irm_tests.').split('.')[0]}.py::" + (
            f"{case.classname.rsplit('.', 1)[-1]}::{case.name}"
        )
        if case.outcome == "failed":
            failed.add(name)
        elif case.outcome == "passed":
            passed.add(name)
    return passed, failed, proc.stdout[-6000:]


def test_ir_measures_alone_fails_only_for_the_environment(suite: Path) -> None:
    passed, failed, output = _run(suite, "peer")
    assert failed == set(ENVIRONMENT), output
    assert len(passed) >= 25, output  # the suite ran (0.4.3 has 34 tests)


@pytest.mark.parametrize("mode", ["dropin", "registered"])
def test_ir_measures_suite_passes_on_irspec(suite: Path, mode: str) -> None:
    passed, failed, output = _run(suite, mode)
    assert failed == set(ENVIRONMENT) | set(DEPARTURES[mode]), output
    assert len(passed) >= 25, output
