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
import copyreg
import functools
import importlib
import inspect
import os
import re
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from irspec.errors import RegistryError
from irspec.lazy import lazy_names
from irspec.spec import hooks as hookspecs
from irspec.spec.registry import Distributions, Metric, Register, Registry
from irspec.version import __version__

if TYPE_CHECKING:
    import pluggy

    from irspec.spec.manager import PluginManager

__all__ = [
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "TREC_EVAL_PLUGINS",
    "Distributions",
    "PluginManager",
    "build_registry",
    "builtin_registry",
    "get_plugin_manager",
    "get_registry",
    "plugin_report",
    "trec_eval_registry",
    "use_registry",
]

ENTRY_POINT_GROUP = hookspecs.PROJECT


TREC_EVAL_PLUGINS: tuple[str, ...] = (
    "irspec.builtin.sets",
    "irspec.builtin.ranks",
    "irspec.builtin.gain",
    "irspec.builtin.bpref",
    "irspec.builtin.counts",
    "irspec.builtin.trec_misc",
)
"""The built-in modules that declare trec_eval's measures, the first of :data:`DEFAULT_PLUGINS`; their
registry alone is :func:`trec_eval_registry`."""

DEFAULT_PLUGINS: tuple[str, ...] = (
    *TREC_EVAL_PLUGINS,
    "irspec.builtin.preference",
    "irspec.builtin.propensity",
    "irspec.builtin.popularity",
    "irspec.builtin.exposure",
    "irspec.builtin.beyond",
    "irspec.builtin.groups",
    "irspec.builtin.fusion",
    "irspec.builtin.fusion_learning",
)
"""Modules of the built-in metrics, registered through the same hook as third-party plugins."""

_IRSPEC = f"irspec {__version__}"
"""The distribution of every built-in plugin, as :class:`Distributions` shows it."""


def get_plugin_manager(*, load_entry_points: bool | None = None) -> PluginManager:
    """A new plugin manager with the built-in plugins and, unless disabled, installed plugins.

    Each call makes a fresh manager, so tests and embedders never share registered plugins.
    ``load_entry_points`` overrides ``IRSPEC_DISABLE_PLUGIN_AUTOLOAD`` when given.
    """
    if load_entry_points is None:
        load_entry_points = _autoload()
    return _plugin_manager(_selected_entry_points() if load_entry_points else [])


def _plugin_manager(selected: Sequence[Any]) -> PluginManager:
    """A new plugin manager with the built-in plugins and those of the entry points ``selected``."""
    from irspec.spec.manager import PluginManager

    pm = PluginManager()
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    _load_entry_points(pm, selected)
    pm.check_pending()  # a misspelled hook name in any plugin is an error, not a silent no-op
    if os.environ.get("IRSPEC_TRACE_PLUGINS"):
        pm.add_hookcall_monitoring(_trace_before, _trace_after)
    return pm


def _autoload() -> bool:
    """Whether entry-point plugins are loaded (``IRSPEC_DISABLE_PLUGIN_AUTOLOAD`` unset or empty)."""
    return not os.environ.get("IRSPEC_DISABLE_PLUGIN_AUTOLOAD")


def _selected_entry_points() -> list[Any]:
    """The entry points of irspec's group that ``IRSPEC_LOAD_PLUGINS`` allows, sorted by name."""
    allow = os.environ.get("IRSPEC_LOAD_PLUGINS")
    allowed = None if allow is None else {a.strip() for a in allow.split(",") if a.strip()}
    found = sorted(entry_points(ENTRY_POINT_GROUP), key=lambda e: e.name)
    return [ep for ep in found if allowed is None or ep.name in allowed]


def _load_entry_points(pm: pluggy.PluginManager, selected: Sequence[Any]) -> None:
    from irspec.spec.manager import PluginManager

    for name, plugin, dist in _loaded(selected, [name for name, _ in pm.list_name_plugin()]):
        pm.register(plugin, name=name)
        if dist is not None and isinstance(pm, PluginManager):
            pm.distributions[name] = dist  # its name and version read when asked for


def _loaded(selected: Sequence[Any], registered: Iterable[str | None]) -> Iterator[tuple[str, Any, Any]]:
    """Each entry point of ``selected`` whose name is neither ``registered`` already (a built-in's) nor
    met before in ``selected`` (the first keeps it), loaded: its name, the plugin and its distribution
    (or None). A plugin that fails to import is a :class:`RegistryError` naming it and its distribution."""
    taken = set(registered)
    for ep in selected:
        if ep.name in taken:
            continue
        taken.add(ep.name)
        dist = getattr(ep, "dist", None)
        try:
            plugin = ep.load()
        except Exception as e:  # a broken third-party plugin must say which one it is
            from_dist = f" from {dist.name} {dist.version}" if dist is not None else ""
            raise RegistryError(
                f"plugin {ep.name!r} ({ep.value}{from_dist}) failed to import: {type(e).__name__}: {e}"
            ) from e
        yield ep.name, plugin, dist


def entry_points(group: str) -> list[Any]:
    """The entry points of ``group`` that :func:`importlib.metadata.entry_points` gives, each with its
    ``name``, ``value``, ``dist`` (its ``name`` and ``version`` read when first asked for) and ``load()``.

    importlib.metadata costs ~15 ms to import (email's parser, zipfile, csv: more than the rest of a
    small evaluation's imports), and every ``irspec`` command builds a registry. So the search it makes
    is made here, as it makes it: each :data:`sys.path` entry's ``.dist-info`` and ``.egg-info``
    directories, in their order, the first distribution of each name (normalised as it normalises
    them) winning, and each one's ``entry_points.txt`` read as it reads it. Wherever it would search
    otherwise (a finder of distributions on :data:`sys.meta_path` other than the standard one, a zip file
    or an egg on the path, a name it reads from the metadata, an entry it would refuse), it is asked
    itself (:func:`_scan` gives up), so that the plugins found are always its."""
    found = _scan(group)
    if found is None:
        from importlib.metadata import entry_points as find

        return list(find(group=group))
    return found


# importlib.metadata's own patterns: an entry point's value (below), a distribution's name normalised
@functools.cache
def _value() -> re.Pattern[str]:
    """importlib.metadata's pattern of an entry point's value, compiled when an entry point is first read
    (~0.1 ms: most processes find none of the group)."""
    return re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


_SEPARATORS = re.compile(r"[-_.]+")


class _Dist:
    """A distribution found by :func:`_scan`: its name and version read from its metadata when asked."""

    def __init__(self, path: str) -> None:
        self._path = path

    @functools.cached_property
    def _read(self) -> Any:
        from importlib.metadata import PathDistribution
        from pathlib import Path

        return PathDistribution(Path(self._path))

    @property
    def name(self) -> str:
        return str(self._read.name)

    @property
    def version(self) -> str:
        return str(self._read.version)


class _EntryPoint:
    """An entry point found by :func:`_scan`, loaded as :meth:`importlib.metadata.EntryPoint.load` loads it."""

    def __init__(self, name: str, value: str, dist: _Dist) -> None:
        self.name, self.value, self.dist = name, value, dist

    def load(self) -> Any:
        match = _value().match(self.value)
        assert match is not None  # _scan leaves a value it would not match to importlib.metadata
        module = importlib.import_module(match.group("module"))
        attrs = filter(None, (match.group("attr") or "").split("."))
        return functools.reduce(getattr, attrs, module)


def _scan(group: str) -> list[Any] | None:
    """The entry points of ``group``, found as importlib.metadata finds them; ``None`` where it would
    search otherwise (:func:`entry_points`)."""
    from importlib.machinery import PathFinder

    if any(
        getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return None
    seen: set[str] = set()
    found: list[Any] = []
    for entry in sys.path:
        if not isinstance(entry, str) or os.path.basename(entry).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.isfile(entry):  # a zip file: read by zipfile
                return None
            continue
        # grouped by name in the order each name is first met, as importlib.metadata's Lookup does
        infos: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                infos.setdefault(_normalized(low.rpartition(".")[0].partition("-")[0]), []).append(child)
        for child in (c for group_of in infos.values() for c in group_of):
            stem, ext = os.path.splitext(child)
            if ext not in (".dist-info", ".egg-info"):
                return None  # a name it would read from the metadata (an upper-case suffix)
            name = _normalized(stem.partition("-")[0])
            if name in seen:
                continue
            seen.add(name)
            path = os.path.join(entry, child)
            points = _read_entry_points(path, group)
            if points is None:
                return None
            found += [_EntryPoint(n, v, _Dist(path)) for n, v in points]
    return found


def _normalized(name: str) -> str:
    return _SEPARATORS.sub("-", name).lower().replace("-", "_")


def _read_entry_points(path: str, group: str) -> list[tuple[str, str]] | None:
    """The entry points of ``group`` in the ``entry_points.txt`` of the metadata directory ``path``,
    read as importlib.metadata reads the file (``[]`` without one); ``None`` for text it would refuse
    or read otherwise."""
    try:
        with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return []
    except (OSError, UnicodeDecodeError):
        return None
    out, section = [], None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        name, sep, value = line.partition("=")
        if not sep:
            return None
        if section == group:
            name, value = name.strip(), value.strip()
            if _value().match(value) is None:
                return None
            out.append((name, value))
    return out


def _trace_before(hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    print(f"irspec: calling {hook_name} on {[i.plugin_name for i in hook_impls]}", file=sys.stderr)


def _trace_after(outcome: Any, hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    print(f"irspec: {hook_name} done", file=sys.stderr)


def _distributions(pm: pluggy.PluginManager) -> Distributions:
    dists = Distributions()
    dists.merge({name: _IRSPEC for name in DEFAULT_PLUGINS if pm.get_plugin(name) is not None})
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
    # registration order (get_hookimpls' order), so the built-ins claim their names first.
    for hook in _REGISTRATION_ORDER:
        for impl in getattr(pm.hook, hook).get_hookimpls():
            impl.function(register=Register(registry, impl.plugin_name))
    registry.distributions = _distributions(pm)
    return registry


_REGISTRATION_ORDER = (
    "irspec_register_readers",
    "irspec_register_metrics",
    "irspec_register_plan_sections",  # after the readers: each section names one, of any plugin
    "irspec_register_fusion",
    "irspec_register_interleaving",
    "irspec_register_click_models",
    "irspec_register_commands",
)
"""The hooks in the order :func:`build_registry` calls them."""


def builtin_registry(plugins: Sequence[str] = DEFAULT_PLUGINS) -> Registry | None:
    """The registry :func:`build_registry` builds from a plugin manager of the built-in plugins alone,
    built without one (:func:`plain_registry`). ``plugins``, some of :data:`DEFAULT_PLUGINS` in their
    order, builds the registry of those alone. ``None`` when a built-in hook has options (``tryfirst``, a
    ``specname``...) that pluggy alone knows how to honour: the plugin manager is then made. A test holds
    this registry to the plugin manager's."""
    return plain_registry(_builtins(plugins))


def _builtins(names: Sequence[str]) -> list[tuple[str, Any, Any]]:
    """The built-in plugins ``names`` as :func:`plain_registry` takes plugins: name, module, distribution."""
    return [(name, importlib.import_module(name), _IRSPEC) for name in names]


def plain_registry(plugins: Sequence[tuple[str, Any, Any]]) -> Registry | None:
    """The registry :func:`build_registry` builds from a plugin manager of ``plugins`` (each a name, the
    plugin, and its distribution: text, a distribution read when asked for, or None), registered in
    their order, built without one: each plugin's hooks called in the order pluggy would call them (a
    hook after another, the plugins in registration order). pluggy costs ~2 ms to import and its plugin
    manager ~3 ms to build, of every command's start: 0.12x trec_eval's whole process on a 50-topic
    run, where the three shipped plugins are installed.

    ``None`` wherever pluggy would do more than call the hooks, so that it does it, and says what is
    wrong in its own words: a plugin that is not a module, or registered twice; a marked function with
    options (``tryfirst``, a ``specname``...), a name no hook has (pluggy's error), or arguments other
    than ``register`` (pluggy checks them against the hook's). A test holds this registry to the plugin
    manager's, with the shipped plugins loaded."""
    hooks = set(_REGISTRATION_ORDER)
    found: list[dict[str, Callable[..., Any]]] = []
    seen: set[int] = set()
    for _, plugin, _ in plugins:
        # pluggy reads the names dir() gives, which a module's own __dir__ may change
        if type(plugin) is not types.ModuleType or id(plugin) in seen or "__dir__" in plugin.__dict__:
            return None
        seen.add(id(plugin))
        marked: dict[str, Callable[..., Any]] = {}
        for attr, value in plugin.__dict__.items():
            if type(value) is not types.FunctionType:
                # a method pluggy would call as it reads it (irspec's manager leaves those to pluggy)
                if isinstance(value, (staticmethod, classmethod, types.MethodType)) and hasattr(
                    value.__func__, hookspecs.IMPL_MARKER
                ):
                    return None
                continue  # anything else is no hook implementation to pluggy
            options = getattr(value, hookspecs.IMPL_MARKER, None)
            if options is None:
                continue
            if options != hookspecs.IMPL_DEFAULTS or attr not in hooks or not _takes_register(value):
                return None
            marked[attr] = value
        found.append(marked)
    registry = Registry()
    for hook in _REGISTRATION_ORDER:
        for (name, _, _), marked in zip(plugins, found, strict=True):
            function = marked.get(hook)
            if function is not None:
                function(register=Register(registry, name))
    dists = Distributions()
    dists.merge({name: dist for name, _, dist in plugins if dist is not None})
    registry.distributions = dists
    return registry


def _takes_register(function: types.FunctionType) -> bool:
    """Whether ``function`` takes ``register`` alone, as every hook's specification does: pluggy calls
    an implementation with the arguments it names, and refuses a name the specification lacks."""
    code = function.__code__
    return (
        code.co_argcount == 1
        and code.co_varnames[:1] == ("register",)
        and not code.co_kwonlyargcount
        and not function.__defaults__
        and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    )


@functools.cache
def trec_eval_registry() -> Registry:
    """The registry of :data:`TREC_EVAL_PLUGINS` alone (built once), where trec_eval's measure names
    mean what they mean in trec_eval, whatever else is installed: the pytrec_eval drop-in reads its
    measures with it. Its vocabulary is trec_eval's, fixed, and no plugin may take a built-in name, so
    the default registry would give the same metrics; this one is built without searching the
    environment's entry points (1 ms for 29 distributions, 2.5-5.4 for 141) or importing the other eight
    built-in modules, and a broken plugin does not stop it. A test holds its metrics to the default
    registry's for every measure pytrec_eval names."""
    return builtin_registry(TREC_EVAL_PLUGINS) or get_registry()


@functools.cache
def _default_registry() -> Registry:
    # Built without pluggy when every plugin marks its hooks plainly (plain_registry) and no hook call is
    # to be traced; by a plugin manager otherwise, which says what is wrong with a plugin.
    selected = _selected_entry_points() if _autoload() else []
    if not os.environ.get("IRSPEC_TRACE_PLUGINS"):
        registry = _without_pluggy(selected)
        if registry is not None:
            return registry
    return build_registry(_plugin_manager(selected))


def _without_pluggy(selected: Sequence[Any]) -> Registry | None:
    """The registry of the built-in plugins and of the entry points ``selected``, built as a plugin
    manager would register them (:func:`plain_registry`), or None where pluggy must build it."""
    return plain_registry(_builtins(DEFAULT_PLUGINS) + list(_loaded(selected, DEFAULT_PLUGINS)))


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


def _pickled_metric(metric: Metric) -> tuple[Any, ...]:
    """How a :class:`Metric` pickles (and copies): a built-in one by its name and parameters, its
    definition found again in the registry where it is loaded (:func:`_registered_metric`), which every
    process's registry holds. A definition's functions (its trec_eval name) are lambdas, which pickle
    refuses, and a result holds its metrics: results travel between processes (multiprocessing, caches)
    this way. A plugin's metric, or one of a definition the registry does not hold, pickles as any
    object does, by value: the process that loads it may not have the plugin registered (Spark's
    workers, whose cloudpickle pickles its functions too)."""
    definition = metric.definition
    # a metric the pytrec_eval drop-in bound has its definition from trec_eval_registry()'s build, asked
    # for only when the default registry's is another (a process that never built it need not)
    if definition.plugin in DEFAULT_PLUGINS and any(
        r().definitions.get(metric.name) is definition for r in (get_registry, trec_eval_registry)
    ):
        return _registered_metric, (metric.name, metric.params, metric.trec_text)
    return cast("tuple[Any, ...]", object.__reduce_ex__(metric, 2))


def _registered_metric(name: str, params: tuple[tuple[str, Any], ...], trec_text: str | None) -> Metric:
    """A pickled :class:`Metric` loaded: its definition the registry's of that name."""
    definition = get_registry().definitions.get(name)
    if definition is None:
        raise RegistryError(
            f"cannot load a pickled {name!r} metric: the registry here has no {name!r}, a built-in metric "
            "where it was pickled (another version of irspec?)"
        )
    return Metric(name, params, definition, trec_text)


copyreg.pickle(Metric, _pickled_metric)


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


__getattr__, __dir__ = lazy_names(globals(), {"PluginManager": "irspec.spec.manager"})


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
