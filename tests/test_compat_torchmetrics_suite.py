"""torchmetrics' own tests and examples, run against ``irspec.compat.torchmetrics``.

torchmetrics publishes its examples on PyPI, in its package: the docstrings of its retrieval classes
and functions, with the values they print. :func:`test_torchmetrics_published_examples` runs each of
them (torchmetrics 1.9.0's, as installed) with torchmetrics' retrieval names bound to the drop-in
(``tests/torchmetrics_dropin.py``): every value an example prints must come out of the drop-in.

torchmetrics' unit tests are not published on PyPI (neither its wheel nor its sdist holds them); they
are in its repository, at the tag ``v1.9.0``, ``tests/unittests/retrieval``. Given that folder's
``tests/`` (``IRSPEC_TORCHMETRICS_TESTS``, else ``../shared/torchmetrics_tests``), :func:`test_torchmetrics_unit_tests` runs them with the
module replaced by the drop-in (with torchmetrics' DDP pool) and holds their failures to the list of
departures written in ``docs/coming-from/torchmetrics.md`` (:data:`DEPARTURES`). ``scripts/test`` fetches
that folder; where GitHub cannot be reached it says so, and the test skips deliberately, naming why.
"""

from __future__ import annotations

import doctest
import functools
import importlib
import os
import pkgutil
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from junit import cases
from shared_data import peer_tests
from torchmetrics_dropin import replaced

import irspec.compat.torchmetrics as dropin

HERE = Path(__file__).resolve().parent
VERSION = "1.9.0"
NAMES = [
    line
    for line in (HERE / "fixtures" / "torchmetrics_examples.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]
"""The examples' names, as :func:`published_examples` finds them in torchmetrics 1.9.0: read from a file
so that collecting this module imports neither torch nor torchmetrics (~1.3 s of each pytest-xdist
worker, issue 35); :func:`test_the_installed_torchmetrics_is_the_one_the_drop_in_follows` holds them equal."""


@functools.cache
def published_examples() -> dict[str, tuple[str, doctest.DocTest]]:
    """Every docstring example of torchmetrics' retrieval modules, by name, with its module's name."""
    pytest.importorskip("torch")
    pytest.importorskip("torchmetrics")
    found = {}
    finder = doctest.DocTestFinder()
    for prefix in ("", "functional."):
        package = importlib.import_module(f"torchmetrics.{prefix}retrieval")
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for test in finder.find(module):
                if test.examples:
                    found[test.name] = (module.__name__, test)
    return found


def test_the_installed_torchmetrics_is_the_one_the_drop_in_follows() -> None:
    import torchmetrics

    assert torchmetrics.__version__ == VERSION
    assert sorted(published_examples()) == NAMES
    assert len(NAMES) >= 50  # every class, its plot, every function, the deprecated names


def test_the_examples_run_the_drop_in() -> None:
    published_examples()  # torchmetrics' retrieval modules imported, every one
    import torchmetrics.retrieval

    with replaced():
        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("torchmetrics") and module is not None:
                for name in dropin.__all__:
                    for bound in (name, f"_{name}"):
                        value = vars(module).get(bound)
                        # torchmetrics' deprecated functions warn and call the name they wrap: the drop-in's
                        wrapper = getattr(value, "__module__", "").endswith(
                            "._deprecated"
                        ) and not isinstance(value, type)
                        if not wrapper and (isinstance(value, type) or (callable(value) and bound == name)):
                            assert value is getattr(dropin, name), f"{module_name}.{bound}"
    assert torchmetrics.retrieval.RetrievalMAP is not dropin.RetrievalMAP  # and torchmetrics' own after


@pytest.mark.parametrize("name", NAMES)
def test_torchmetrics_published_examples(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib

    matplotlib.use("Agg")  # the plot examples draw, off screen
    monkeypatch.chdir(tmp_path)
    module_name, test = published_examples()[name]
    out: list[str] = []
    with replaced() as done, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecated names' warnings, torch's
        assert done  # torchmetrics' names now name the drop-in's
        test.globs = dict(vars(sys.modules[module_name]))  # the module's names, as replaced
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=out.append)
    import matplotlib.pyplot as plt

    plt.close("all")
    assert runner.failures == 0, "".join(out)
    assert runner.tries == len(test.examples)


# --------------------------------------------------------------------------------------------------
# torchmetrics' unit tests, where a copy of them is given

DEPARTURES: dict[str, str] = {}
"""Test ids (prefixes) of torchmetrics' retrieval unit tests that fail against the drop-in on purpose,
each with why; the same list as docs/coming-from/torchmetrics.md's."""

PYTEST_INI = """[pytest]
markers =
    DDP: mark a test as Distributed Data Parallel
filterwarnings =
    ignore::FutureWarning
"""


def test_torchmetrics_unit_tests(tmp_path: Path) -> None:
    tests = peer_tests(
        "torchmetrics",
        "unittests/retrieval",
        "torchmetrics' unit tests are not published on PyPI: set IRSPEC_TORCHMETRICS_TESTS to the tests/ "
        "folder of torchmetrics v1.9.0 (scripts/test fetches it)",
    ).resolve()
    (tmp_path / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    report = tmp_path / "report.xml"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), str(tests), os.environ.get("PYTHONPATH", "")]),
        "USE_PYTEST_POOL": "1",  # the DDP tests in two processes, as torchmetrics' CI runs them
    }
    args = os.environ.get("IRSPEC_TORCHMETRICS_TESTS_ARGS", "").split()
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tests),
            "-p", "torchmetrics_dropin", "-p", "no:cacheprovider", "-q", "--junitxml", str(report),
            "unittests/retrieval", *args,
        ],
        cwd=tests, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert report.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    failed, passed = failures(report)
    assert passed > 0, result.stdout[-3000:]
    unexplained = sorted(t for t in failed if not any(t.startswith(d) for d in DEPARTURES))
    unseen = sorted(d for d in DEPARTURES if not any(t.startswith(d) for t in failed))
    assert unexplained == [], f"failures not in the documented departures: {unexplained[:20]}"
    assert unseen == [], f"departures that no longer fail (remove them from the list and the docs): {unseen}"


def failures(report: Path) -> tuple[list[str], int]:
    """The ids of the failed (and erroring) tests of a JUnit report, and how many passed."""
    found = cases(report)
    failed = [re.sub(r"^unittests\.", "", f"{c.classname}::{c.name}") for c in found if c.outcome == "failed"]
    return failed, sum(c.outcome == "passed" for c in found)
