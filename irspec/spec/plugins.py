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

import contextlib
import contextvars
import functools
import importlib
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import pluggy

from irspec.errors import RegistryError
from irspec.spec import hooks as hookspecs
from irspec.spec.registry import Register, Registry
from irspec.version import __version__

__all__ = [
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "Distributions",
    "PluginManager",
    "build_registry",
    "get_plugin_manager",
    "get_registry",
    "plugin_report",
    "use_registry",
]

ENTRY_POINT_GROUP = "irspec"

DEFAULT_PLUGINS: tuple[str, ...] = (
    "irspec.builtin.sets",
    "irspec.builtin.ranks",
    "irspec.builtin.gain",
    "irspec.builtin.bpref",
    "irspec.builtin.counts",
    "irspec.builtin.trec_misc",
    "irspec.builtin.preference",
    "irspec.builtin.groups",
    "irspec.builtin.fusion",
    "irspec.builtin.fusion_learning",
)
"""Modules of the built-in metrics, registered through the same hook as third-party plugins."""


class Distributions(MutableMapping[str, str]):
    """Plugin name -> ``"distribution version"``, each value given as text or as the
    :class:`importlib.metadata.Distribution` it is read from when first asked for.

    Reading a distribution's name and version parses its metadata file (~0.7 ms a plugin); only
    ``irspec plugins`` and ``irspec metrics`` show them, so an evaluation never pays it (issue 23).
    """

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def merge(self, other: Mapping[str, Any]) -> None:
        """Add ``other``'s entries, without reading the metadata of those not read yet."""
        self._values.update(other._values if isinstance(other, Distributions) else other)

    def __getitem__(self, name: str) -> str:
        value = self._values[name]
        if not isinstance(value, str):
            value = self._values[name] = f"{value.name} {value.version}"
        return value

    def __setitem__(self, name: str, value: Any) -> None:
        self._values[name] = value

    def __delitem__(self, name: str) -> None:
        del self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager for the ``irspec`` project, remembering where installed plugins come from.

    ``distributions`` maps the name of each entry-point plugin to ``"distribution version"`` (for
    ``irspec plugins`` and ``irspec metrics``).
    """

    def __init__(self) -> None:
        super().__init__("irspec")
        self.distributions = Distributions()


def get_plugin_manager(*, load_entry_points: bool | None = None) -> PluginManager:
    """A new plugin manager with the built-in plugins and, unless disabled, installed plugins.

    Each call makes a fresh manager, so tests and embedders never share registered plugins.
    ``load_entry_points`` overrides ``IRSPEC_DISABLE_PLUGIN_AUTOLOAD`` when given.
    """
    pm = PluginManager()
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
        dist = getattr(ep, "dist", None)
        try:
            plugin = ep.load()
        except Exception as e:  # a broken third-party plugin must say which one it is
            from_dist = f" from {dist.name} {dist.version}" if dist is not None else ""
            raise RegistryError(
                f"plugin {ep.name!r} ({ep.value}{from_dist}) failed to import: {type(e).__name__}: {e}"
            ) from e
        pm.register(plugin, name=ep.name)
        if dist is not None and isinstance(pm, PluginManager):
            pm.distributions[ep.name] = dist  # its name and version read when asked for


def _trace_before(hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    print(f"irspec: calling {hook_name} on {[i.plugin_name for i in hook_impls]}", file=sys.stderr)


def _trace_after(outcome: Any, hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    print(f"irspec: {hook_name} done", file=sys.stderr)


def _distributions(pm: pluggy.PluginManager) -> Distributions:
    dists = Distributions()
    dists.merge(
        {name: f"irspec {__version__}" for name in DEFAULT_PLUGINS if pm.get_plugin(name) is not None}
    )
    dists.merge(getattr(pm, "distributions", {}))
    for plugin, dist in pm.list_plugin_distinfo():  # plugins loaded through pluggy's own loader
        name = pm.get_name(plugin)
        if name is not None:  # a plugin pluggy loaded is registered under a name
            dists.setdefault(name, f"{dist.project_name} {dist.version}")
    return dists


def build_registry(pm: pluggy.PluginManager) -> Registry:
    """Run every plugin's ``irspec_register_readers``, ``irspec_register_metrics``,
    ``irspec_register_plan_sections``, ``irspec_register_fusion``, ``irspec_register_interleaving``,
    ``irspec_register_click_models`` and ``irspec_register_commands`` hooks into a new :class:`Registry`."""
    registry = Registry()
    # Call each implementation separately so the Register knows which plugin is speaking; in
    # registration order (get_hookimpls' order), so the built-ins claim their names first. Plan
    # sections come last: each names a reader, which any plugin may have registered.
    hooks = (
        pm.hook.irspec_register_readers,
        pm.hook.irspec_register_metrics,
        pm.hook.irspec_register_plan_sections,
        pm.hook.irspec_register_fusion,
        pm.hook.irspec_register_interleaving,
        pm.hook.irspec_register_click_models,
        pm.hook.irspec_register_commands,
    )
    for hook in hooks:
        for impl in hook.get_hookimpls():
            impl.function(register=Register(registry, impl.plugin_name))
    registry.distributions = _distributions(pm)
    return registry


@functools.cache
def _default_registry() -> Registry:
    return build_registry(get_plugin_manager())


_registry_override: contextvars.ContextVar[Registry | None] = contextvars.ContextVar(
    "irspec_registry", default=None
)


def get_registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The registry of the default plugin manager (built once), or of ``pm`` when given.

    Inside :func:`use_registry`, the registry given there replaces the default one.
    """
    if pm is None:
        override = _registry_override.get()
        return override if override is not None else _default_registry()
    return build_registry(pm)


@contextlib.contextmanager
def use_registry(registry: Registry) -> Iterator[Registry]:
    """Make ``registry`` the one :func:`irspec.parse`, :func:`irspec.evaluate` and plans use, inside a
    ``with`` block; the previous one (usually the default) is back afterwards, even on error.

    The override is a context variable: it holds in the current thread (and the asyncio tasks it starts),
    and nests. :mod:`irspec.testing` builds on it.
    """
    if not isinstance(registry, Registry):
        raise TypeError(f"use_registry needs an irspec Registry, got {type(registry).__name__}")
    token = _registry_override.set(registry)
    try:
        yield registry
    finally:
        _registry_override.reset(token)


def plugin_report(pm: pluggy.PluginManager | None = None) -> list[dict]:
    """What each plugin registers, for ``irspec plugins``: name, module, distribution (name and version
    of the installed package), metrics, groups, input readers, fusion methods, interleaving methods, click
    models and commands."""
    pm = pm or get_plugin_manager()
    registry = build_registry(pm)
    report = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda np: np[0] or ""):
        metrics = sorted(d.name for d in registry.definitions.values() if d.plugin == name)
        groups = sorted(g.name for g in registry.groups.values() if g.plugin == name)
        readers = sorted(r.name for r in registry.readers.values() if r.plugin == name)
        fusion = sorted(f.name for f in registry.fusions.values() if f.plugin == name)
        methods = {
            kind: sorted(m.name for m in table.values() if m.plugin == name)
            for kind, table in registry.methods.items()
        }
        commands = sorted(c.name for c in registry.commands.values() if c.plugin == name)
        report.append(
            {
                "name": name,
                "module": getattr(plugin, "__name__", type(plugin).__name__),
                "distribution": registry.distributions.get(name),
                "builtin": name in DEFAULT_PLUGINS,
                "metrics": metrics,
                "groups": groups,
                "readers": readers,
                "fusion": fusion,
                "interleaving": methods.get("interleaving method", []),
                "click_models": methods.get("click model", []),
                "commands": commands,
            }
        )
    return report
