"""The plugin manager: built-in plugins, entry-point plugins, and the environment switches.

Environment variables:

``IRSPEC_DISABLE_PLUGIN_AUTOLOAD``
    When set to a non-empty value, no entry-point plugin is loaded (built-ins still are).
``IRSPEC_LOAD_PLUGINS``
    A comma-separated allow-list of entry-point names to load; an empty value loads none.
``IRSPEC_TRACE_PLUGINS``
    When set, every hook call is written to standard error (for debugging plugins).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys

import pluggy

from irspec import hookspecs
from irspec.errors import RegistryError
from irspec.registry import Register, Registry

__all__ = ["DEFAULT_PLUGINS", "ENTRY_POINT_GROUP", "get_plugin_manager", "get_registry", "plugin_report"]

ENTRY_POINT_GROUP = "irspec"

DEFAULT_PLUGINS: tuple[str, ...] = (
    "irspec.builtin.sets",
    "irspec.builtin.ranks",
    "irspec.builtin.gain",
    "irspec.builtin.bpref",
    "irspec.builtin.counts",
    "irspec.builtin.trec_misc",
    "irspec.builtin.groups",
)
"""Modules of the built-in metrics, registered through the same hook as third-party plugins."""


def get_plugin_manager(*, load_entry_points: bool | None = None) -> pluggy.PluginManager:
    """A new plugin manager with the built-in plugins and, unless disabled, installed plugins.

    Each call makes a fresh manager, so tests and embedders never share registered plugins.
    ``load_entry_points`` overrides ``IRSPEC_DISABLE_PLUGIN_AUTOLOAD`` when given.
    """
    pm = pluggy.PluginManager("irspec")
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    if load_entry_points is None:
        load_entry_points = not os.environ.get("IRSPEC_DISABLE_PLUGIN_AUTOLOAD")
    if load_entry_points:
        _load_entry_points(pm)
    pm.check_pending()  # a misspelled hook name in any plugin is an error, not a silent no-op
    if os.environ.get("IRSPEC_TRACE_PLUGINS"):
        pm.add_hookcall_monitoring(_trace_before, _trace_after)
    return pm


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    from importlib.metadata import entry_points

    allow = os.environ.get("IRSPEC_LOAD_PLUGINS")
    allowed = None if allow is None else {a.strip() for a in allow.split(",") if a.strip()}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if allowed is not None and ep.name not in allowed:
            continue
        if pm.get_plugin(ep.name) is not None:
            continue
        try:
            plugin = ep.load()
        except Exception as e:  # a broken third-party plugin must say which one it is
            raise RegistryError(f"plugin {ep.name!r} ({ep.value}) failed to import: {type(e).__name__}: {e}") from e
        pm.register(plugin, name=ep.name)


def _trace_before(hook_name: str, hook_impls: list, kwargs: dict) -> None:
    print(f"irspec: calling {hook_name} on {[i.plugin_name for i in hook_impls]}", file=sys.stderr)


def _trace_after(outcome: object, hook_name: str, hook_impls: list, kwargs: dict) -> None:
    print(f"irspec: {hook_name} done", file=sys.stderr)


def build_registry(pm: pluggy.PluginManager) -> Registry:
    """Run every plugin's ``irspec_register_metrics`` hook into a new :class:`Registry`."""
    registry = Registry()
    # Call each implementation separately so the Register knows which plugin is speaking; in
    # registration order (get_hookimpls' order), so the built-ins claim their names first.
    for impl in pm.hook.irspec_register_metrics.get_hookimpls():
        impl.function(register=Register(registry, impl.plugin_name))
    return registry


@functools.cache
def _default_registry() -> Registry:
    return build_registry(get_plugin_manager())


def get_registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The registry of the default plugin manager (built once), or of ``pm`` when given."""
    if pm is None:
        return _default_registry()
    return build_registry(pm)


def plugin_report(pm: pluggy.PluginManager | None = None) -> list[dict]:
    """What each plugin registers, for ``irspec plugins``: name, module, version, metrics, groups."""
    pm = pm or get_plugin_manager()
    registry = build_registry(pm)
    dists = {}
    for plugin, dist in pm.list_plugin_distinfo():
        dists[pm.get_name(plugin)] = f"{dist.project_name} {dist.version}"
    report = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda np: np[0] or ""):
        metrics = sorted(d.name for d in registry.definitions.values() if d.plugin == name)
        groups = sorted(g.name for g in registry.groups.values() if g.plugin == name)
        report.append(
            {
                "name": name,
                "module": getattr(plugin, "__name__", type(plugin).__name__),
                "distribution": dists.get(name),
                "builtin": name in DEFAULT_PLUGINS,
                "metrics": metrics,
                "groups": groups,
            }
        )
    return report
