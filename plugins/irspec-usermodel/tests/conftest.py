"""Fixtures of irspec-usermodel's tests: the plugin registered for every test, through irspec.testing, so
that the tests hold whether or not the package is installed with its entry point."""

from __future__ import annotations

import pytest

from irspec.testing import registered_plugin


@pytest.fixture(autouse=True)
def usermodel():
    """The registry with irspec-usermodel's metrics (skips when the package cannot be imported)."""
    plugin = pytest.importorskip("irspec_usermodel.plugin")
    with registered_plugin(plugin) as registry:
        yield registry
