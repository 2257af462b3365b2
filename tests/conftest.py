"""Shared test setup: irspec's own tests see the built-in plugins only.

The default registry holds whatever irspec plugins are installed (CI installs the two in ``plugins/``).
irspec's own tests must not depend on that, neither at collection (tables built from
``irspec.metrics()``) nor in the commands they run in subprocesses, so entry-point autoloading is
switched off for the whole session, as a user would with ``IRSPEC_DISABLE_PLUGIN_AUTOLOAD=1``. Tests of
the switches themselves set and clear it with ``monkeypatch``. Plugins are tested in their own
``tests/`` directories, where they register themselves with :mod:`irspec.testing`, whose
``irspec_plugin`` fixture is made available here to every test.
"""

from __future__ import annotations

import os
import sys

import pytest

import irspec.data.plain
import irspec.data.small
import irspec.spec.plugins
from irspec.testing import irspec_plugin  # noqa: F401  (the fixture, also when irspec is not installed)

os.environ["IRSPEC_DISABLE_PLUGIN_AUTOLOAD"] = "1"
irspec.spec.plugins._default_registry.cache_clear()  # in case something built it before this file ran


def pytest_configure(config):
    # Many tests evaluate runs that lack qrels queries on purpose; their IrspecWarnings (thousands) would
    # bury any unexpected warning in the summary. tests/test_warnings.py records them explicitly
    # (pytest.warns and catch_warnings override this filter).
    config.addinivalue_line("filterwarnings", "ignore::irspec.IrspecWarning")
    config.addinivalue_line(
        "markers",
        "in_a_child: the test's reading happens in a child process, which the parent's choice of readers "
        "does not reach: it runs once, not once a reader (see _BOTH_READERS)",
    )


# The modules whose every test runs twice: with the small readers (the default for files of a few MB:
# no polars; irspec.data.plain's whole read of a clean run first, then irspec.data.small) and without (SMALL_BELOW = 0: polars' reader and the frame's ranking),
# so that every conformance, differential and hostile case holds both ways (the same values, the same
# errors naming the same file, line and text). A test marked in_a_child runs once: the readers are
# chosen in this process, and a child it starts reads with its own defaults, so both runs would start
# the same children (issue 35: 23 capped children of test_hostile_inputs.py ran twice).
_BOTH_READERS = {
    "test_conformance",
    "test_differential",
    "test_trec_exact",
    "test_whitespace",
    "test_hostile_api",
    "test_hostile_cli",
    "test_hostile_inputs",
    "test_compat_pytrec_eval",
}


# Of those, the modules that read files of every shape run a third time with the numpy readers of
# large clean files (irspec.data.plain, from 0 bytes on rather than above SMALL_BELOW): what those hand
# back is read and refused as before (tests/test_plain_inputs.py holds what they read; the conformance
# and differential modules' cases are dicts, or cached by command).
_PLAIN_READERS = {
    "test_trec_exact",
    "test_whitespace",
    "test_hostile_api",
    "test_hostile_cli",
    "test_hostile_inputs",
}


def pytest_generate_tests(metafunc):
    name = metafunc.module.__name__.rpartition(".")[2]
    if name in _BOTH_READERS and not metafunc.definition.get_closest_marker("in_a_child"):
        readers = ["small", "general", "plain"] if name in _PLAIN_READERS else ["small", "general"]
        metafunc.parametrize("_reader", readers, indirect=True)


@pytest.fixture(autouse=True)
def _reader(request, monkeypatch):
    """The readers a test of :data:`_BOTH_READERS` runs with (the small ones elsewhere)."""
    reader = getattr(request, "param", "small")
    if reader in ("general", "plain"):
        monkeypatch.setattr(irspec.data.small, "SMALL_BELOW", 0)
    if reader == "plain":
        monkeypatch.setattr(irspec.data.plain, "PLAIN_ABOVE", 0)


@pytest.fixture(scope="session")
def rectools():
    """RecTools 0.19.0, the reference of the recommender metrics (tests/test_recsys_catalogue.py,
    tests/test_recsys_movielens.py), from the ``pip install --target`` folder ``IRSPEC_RECTOOLS_PATH``
    names (scripts/test installs it: it pins numpy below 2, so it is not installed into the environment)."""
    path = os.environ.get("IRSPEC_RECTOOLS_PATH")
    if not path:
        pytest.skip(
            "RecTools 0.19.0 is the reference: set IRSPEC_RECTOOLS_PATH to a pip --target folder holding it"
        )
    sys.path.append(path)  # after the environment's packages: numpy, pandas, scipy stay the environment's
    import rectools
    import rectools.metrics

    return rectools
