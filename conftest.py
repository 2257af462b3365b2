"""Repository-wide test setup: in CI a skipped test is a failure, unless it says it is deliberate.

A test that skips because a tool or package is missing (Chromium, pdflatex, an optional extra, a plugin,
trec_eval's test data) proves nothing, and CI would stay green with a hole in it. ``.ci/run`` installs
everything the suite needs and sets ``IRSPEC_STRICT_SKIPS=1``; with it set, every skip turns into a
failure except those whose reason starts with ``deliberate:`` (a case the test decides not to compare,
such as a trec_eval value read from uninitialised memory). Locally, without the variable, skips stay
skips so that a contributor without Chromium can still run the suite.

It also gives the JVM of any Spark the tests start the client compiler alone (``PYSPARK_SUBMIT_ARGS``),
keeps the bytecode Python compiles even where ``PYTHONDONTWRITEBYTECODE`` is set, and runs first the
tests that set up something expensive or take long (:data:`FIRST`).
"""

from __future__ import annotations

import os
import sys

import pytest

DELIBERATE = "deliberate:"

# A Spark the tests start (tests/test_spark_evaluate.py, the plugins' Spark tests, the documentation's
# examples, a command run in a subprocess) runs for seconds: its JVM's optimising compiler never repays
# its cost, which was half of that JVM's CPU time in the suite (issue 35). The client compiler alone
# runs the same bytecode with the same results. Not set where the caller set Spark's arguments already.
# Where scripts/test archived Spark's classes (tests/warm_spark.py), every such JVM maps them at start
# rather than loading and verifying them from Spark's jars: a session's start and first job in about half
# the CPU. An archive it cannot map (another class path) it ignores, silently.
_spark_classes = os.environ.get("IRSPEC_SPARK_CLASSES", "")
_jvm_options = "-XX:TieredStopAtLevel=1"
if _spark_classes and os.path.isfile(_spark_classes):
    _jvm_options += f" -Xlog:cds=off -Xlog:cds+dynamic=off -XX:SharedArchiveFile={_spark_classes}"
os.environ.setdefault("PYSPARK_SUBMIT_ARGS", f"--driver-java-options '{_jvm_options}' pyspark-shell")

# Some containers and CI images set PYTHONDONTWRITEBYTECODE (this machine's do). Then each test worker
# compiled every test module pytest rewrites (7 of its 11.5 s of collection, issue 35) and each process
# the suite starts (commands, Spark's Python workers, reference scripts) compiled irspec's modules again,
# run after run. The session keeps bytecode as Python does by default, in __pycache__ folders (ignored by
# git), which the next worker, process and run read; its children inherit the choice.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

FIRST = (
    # a Spark session, started once a worker (a JVM took ~35 s of CPU, and each worker that ran one of
    # these started its own)
    "tests/test_spark_evaluate.py",
    "plugins/irspec-online/tests/test_spark.py",
    "plugins/irspec-diversity/tests/test_diversity_spark.py",
    "docs/how-to/online-experiments.md",
    "docs/how-to/online.md",
    "docs/how-to/scale.md",
    "docs/reference/diversity.md",
    # a browser and the site's server, started once a module
    "docs/test_site.py",
    # ranx's processes (tests/ranx_process.py), whose numba compiles for seconds, once a worker
    "tests/test_compat_ranx.py",
    "tests/test_fusion_ranx.py",
    "tests/test_fusion_learning_ranx.py",
    "tests/test_fusion_tuning.py",
    # the longest tests (simulations of 200 logs or experiments: 10-20 s each)
    "plugins/irspec-online/tests/test_counterfactual.py",
    "plugins/irspec-online/tests/test_simulation.py",
)
"""The files whose tests run first (issue 35). scripts/test runs pytest-xdist's ``worksteal``: each worker
starts on a contiguous share of the tests in collection order, and one that runs out takes the last
tests of the other's queue. Put first, these run on the first worker, all of them: what a module or a
session sets up for them is set up once, and their long tests never make the suite's last minutes,
which the other worker, done, would watch."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {path: rank for rank, path in enumerate(FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid.partition("::")[0], len(FIRST)))  # stable


def _skip_reason(report: pytest.TestReport) -> str:
    # A skip's longrepr is (file, line, "Skipped: reason").
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return str(report.longrepr)


def _fail_undeliberate_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped or os.environ.get("IRSPEC_STRICT_SKIPS") != "1" or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if not reason.startswith(DELIBERATE):
        report.outcome = "failed"
        report.longrepr = f"skipped in strict mode (IRSPEC_STRICT_SKIPS=1): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    _fail_undeliberate_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    # A module-level importorskip (a plugin that is not installed) skips the whole file at collection.
    outcome = yield
    _fail_undeliberate_skip(outcome.get_result())
