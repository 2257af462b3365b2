"""ranx 0.3.21's own test suite, run with the ``ranx`` module replaced by ``irspec.compat.ranx``.

The suite is ranx's ``tests/`` folder as published in its repository (its PyPI sdist and wheel hold no
tests): AmenRa/ranx at commit 2cae52f (the commit 0.3.21 was released from; its ``ranx/`` differs from
the wheel's only in comments and in make_comparable's loop), copied as it is, never into this
repository. It is found at ``$IRSPEC_RANX_TESTS``, else at ``../shared/ranx_tests`` beside the
project's folder (as trec_eval's test data is; ``scripts/test`` sets the variable, fetching the folder
once into ``.cache/`` where there is no shared copy), and copied into a temporary folder where it runs in a
process of its own: ``ranx`` there is a package of two lines that makes ``irspec.compat.ranx`` and its
submodules the modules ranx's tests import, and numba (which the tests use to build their inputs) comes
from the ranx folder of ``IRSPEC_RANX_PATH``, after everything else on the path.

Every test of the suite passes but those in :data:`DEPARTURES`, each with why; a departure that starts
passing fails this test too, so that the list only shrinks. The list is also in
docs/coming-from/ranx.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from junit import Case, cases
from shared_data import peer_tests

ROOT = Path(__file__).resolve().parent.parent

DEPARTURES: dict[str, str] = {
    "tests.unit.ranx.fusion.bayesfuse_test (collection)": "imports ranx's private _estimate_log_odds "
    "(its 2 tests: the drop-in's bayesfuse_train and bayesfuse are irspec's, held to ranx's by "
    "tests/test_fusion_learning_ranx.py)",
    "tests.unit.ranx.fusion.condorcet_test (collection)": "imports ranx's private get_candidates and "
    "get_results (its 4 tests: the drop-in's condorcet is irspec's, held to ranx's by tests/test_fusion_ranx.py)",
}
"""ranx's tests that fail against the drop-in (``file::test``), and why."""

SHIM = '''\
"""ranx, replaced by irspec's drop-in for ranx's own tests (tests/test_compat_ranx_suite.py)."""
import sys

import irspec.compat.ranx as _dropin
from irspec.compat.ranx import *  # noqa: F403

for _name, _module in list(sys.modules.items()):
    if _name.startswith("irspec.compat.ranx."):
        sys.modules["ranx." + _name[len("irspec.compat.ranx.") :]] = _module
for _name in _dropin.SUBMODULES:
    sys.modules["ranx." + _name] = __import__("irspec.compat.ranx." + _name, fromlist=["_"])
# ranx keeps a function a module (ranx.metrics.f1.f1, ranx.fusion.rrf.rrf): the module that has it
for _package in ("metrics", "fusion"):
    for _function in sys.modules["ranx." + _package].__all__:
        sys.modules.setdefault(f"ranx.{_package}.{_function}", sys.modules["ranx." + _package])
'''

CONFTEST = """\
import os
import sys

# numba, which ranx's tests use to build their inputs, from the ranx folder, after everything else:
# its ranx is hidden by the drop-in's package, its numpy by the environment's
sys.path.append(os.environ["IRSPEC_RANX_PATH"])
"""


def failures(found: list[Case]) -> dict[str, str]:
    """The failed and erroring tests of a JUnit XML report's cases, ``file::test`` -> the first line of why."""
    out = {}
    for case in found:
        if case.outcome == "failed":
            path = case.classname.replace(".", "/")
            out[f"{path}.py::{case.name}" if path else f"{case.name} (collection)"] = case.message
    return out


def test_ranx_suite_passes_against_the_drop_in(tmp_path: Path) -> None:
    suite = peer_tests(
        "ranx",
        "unit/ranx",
        "ranx 0.3.21's test suite (AmenRa/ranx's tests/ at 2cae52f) in $IRSPEC_RANX_TESTS or ../shared/ranx_tests",
    )
    ranx_path = os.environ.get("IRSPEC_RANX_PATH")
    if not ranx_path:
        pytest.skip(
            "numba in $IRSPEC_RANX_PATH, which ranx's tests use (pip install --target DIR ranx==0.3.21)"
        )
    shutil.copytree(suite, tmp_path / "tests")
    (tmp_path / "shim" / "ranx").mkdir(parents=True)
    (tmp_path / "shim" / "ranx" / "__init__.py").write_text(SHIM)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    report = tmp_path / "report.xml"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "shim"), str(ROOT)]))
    env.pop("IRSPEC_DISABLE_PLUGIN_AUTOLOAD", None)  # tests/conftest.py's: ranx's rbp is irspec-usermodel's
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--continue-on-collection-errors", "--rootdir",
         str(tmp_path), f"--junitxml={report}", "tests"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    found = cases(report)
    failed = failures(found)
    ran = len(found)
    assert ran > 100, proc.stdout[-3000:]
    unexpected = {t: why for t, why in failed.items() if t not in DEPARTURES}
    fixed = sorted(set(DEPARTURES) - set(failed))
    assert not unexpected, f"{len(unexpected)} of {ran} ranx tests fail: " + "\n".join(
        f"{t}: {why}" for t, why in sorted(unexpected.items())
    )
    assert not fixed, f"listed as departures but passing now (remove them): {fixed}"
