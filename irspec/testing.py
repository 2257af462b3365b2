"""Test helpers for plugin authors: register a plugin for the duration of a test.

A context manager, usable anywhere::

    from irspec.testing import registered_plugin

    with registered_plugin(my_plugin) as registry:
        irspec.parse("MyMetric@5")            # parse, evaluate, evaluate_input and plans see it
    # ... and afterwards they no longer do

and a pytest fixture, ``irspec_plugin``, which does the same until the test ends::

    def test_my_metric(irspec_plugin):
        irspec_plugin(my_plugin)
        assert irspec.evaluate(qrels, run, "MyMetric@5").aggregate() == {...}

Each call builds a fresh plugin manager (the built-in metrics plus the plugins given; installed
entry-point plugins only with ``load_entry_points=True``), checks the plugins' hooks
(``check_pending``: a misspelled hook is an error), builds its registry, and makes it the one irspec uses
through :func:`irspec.spec.plugins.use_registry`. Nothing global is changed, so tests stay independent.

The fixture is available in any test once irspec is installed (a ``pytest11`` entry point). Without that
(irspec used from a source checkout, or ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` set), import it into the test
module or a ``conftest.py``: ``from irspec.testing import irspec_plugin  # noqa: F401``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from irspec.spec.plugins import build_registry, get_plugin_manager, use_registry
from irspec.spec.registry import Registry

__all__ = ["irspec_plugin", "registered_plugin"]


@contextlib.contextmanager
def registered_plugin(
    *plugins: Any, name: str | None = None, load_entry_points: bool = False
) -> Iterator[Registry]:
    """Register ``plugins`` (modules or objects with ``@irspec.hookimpl`` functions) on a fresh plugin
    manager and make its registry irspec's own inside the ``with`` block; yields the registry.

    Plugins are named ``name`` (one plugin), else their module name (``__name__``), else
    ``test-plugin-N``; that name is what ``irspec metrics`` and error messages show. A name clash with a
    built-in or between the plugins raises :class:`irspec.RegistryError` on entry, as it would at
    installation.
    """
    if name is not None and len(plugins) != 1:
        raise TypeError("name= applies to exactly one plugin")
    pm = get_plugin_manager(load_entry_points=load_entry_points)
    for i, plugin in enumerate(plugins):
        plugin_name = name or getattr(plugin, "__name__", None) or f"test-plugin-{i + 1}"
        pm.register(plugin, name=plugin_name)
    pm.check_pending()
    with use_registry(build_registry(pm)) as registry:
        yield registry


def irspec_plugin() -> Iterator[Callable[..., Registry]]:
    """Register plugins until the end of the test: ``irspec_plugin(plugin, ...)`` returns the registry.

    Takes the arguments of :func:`registered_plugin`. Calling it again in the same test replaces the
    registry with one holding the new plugins (and the built-ins), not the earlier ones.
    """
    with contextlib.ExitStack() as stack:

        def register(*plugins: Any, **kwargs: Any) -> Registry:
            return stack.enter_context(registered_plugin(*plugins, **kwargs))

        yield register


try:
    import pytest
except ImportError:  # pragma: no cover - the context manager works without pytest
    pass  # irspec_plugin stays the plain function: a name of __all__, and documented, without pytest
else:
    irspec_plugin = pytest.fixture(irspec_plugin)
