"""Names of a package loaded on first use: the ``__getattr__`` and ``__dir__`` of a module whose
``_LAZY`` table maps each public name to the module that defines it; and the old paths of names and
modules that moved, kept for one release with a :class:`DeprecationWarning` naming the new path.

The face (``import irspec``), ``irspec.plan`` and ``irspec.plugin_api`` import light and load numpy,
polars, YAML or scipy only when one of their names is first used (PEP 562). A moved name is loaded the
same way from a package's ``_MOVED`` table (``irspec.stats.paired``, once ``irspec/stats.py``, is
``irspec.stats.significance.paired``); a moved module keeps a file at its old path that calls
:func:`moved_module` or :func:`moved_names` (``irspec/spark.py``). Knows nothing else.
"""

from __future__ import annotations

import gc
import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import Any

__all__ = ["collector_paused", "lazy_module", "lazy_names", "moved_module", "moved_names"]


class _Deferred:
    """A module imported when one of its attributes is first used (:func:`lazy_module`)."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            with collector_paused():
                module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<module {self._name!r}, {state}>"


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, then as it was.

    For modules loaded on first use, when the caller's data is already in memory: an import makes
    thousands of objects and no garbage, and each of the collector's full passes it triggers walks
    every object of the process, the caller's dicts included (pytrec_eval's qrels and run of 30,000
    entries: 8% of a BEIR evaluation's whole process went to those passes)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def lazy_module(name: str) -> Any:
    """The module ``name``, imported when one of its attributes is first used (``pl.DataFrame``).

    For a heavy module that some of a module's paths need and others never touch: polars for the
    readers and the engine, whose small inputs are read and evaluated with numpy alone
    (:mod:`irspec.data.small`), so that a small evaluation never pays polars' import (a third of a
    second) and a large one loads it at its first use. The module that uses it still declares it at
    its top, for readers and type checkers::

        if TYPE_CHECKING:
            import polars as pl
        else:
            pl = lazy_module("polars")
    """
    return _Deferred(name)


def lazy_names(
    namespace: dict[str, Any],
    table: Mapping[str, str],
    submodules: Iterable[str] = (),
    moved: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the module whose globals are ``namespace``: a name of ``table``
    is taken from the module it names, a name of ``submodules`` is that sub-package imported; either
    is then kept in ``namespace``, so later uses skip ``__getattr__``. A name of ``moved`` (an old path
    kept for a release) is taken from the module it names with a :class:`DeprecationWarning` saying
    so, each time (so that every place that uses it is told), and is not listed by ``__dir__``."""
    package = namespace["__name__"]
    subs = frozenset(submodules)
    old = dict(moved or {})

    def __getattr__(name: str) -> Any:
        if name in table:
            value = getattr(importlib.import_module(table[name]), name)
        elif name in subs:
            value = importlib.import_module(f"{package}.{name}")
        elif name in old:
            # `from package import name` asks twice: the import machinery's hasattr, then the statement's
            # own getattr; the warning is the statement's, once
            if not _internal(sys._getframe(1)):
                _warn(f"{package}.{name} is deprecated: it is {old[name]}.{name}", package)
            return getattr(importlib.import_module(old[name]), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table) | subs)

    return __getattr__, __dir__


def moved_module(old: str, new: ModuleType) -> None:
    """Called by the module ``old`` as it is imported, a file kept at the path of a module that moved
    (the module ``new``, which the caller imports): warns, and puts ``new`` in its place in
    ``sys.modules``, so that ``import old`` gives the module ``new`` itself, every name of it the same
    object. For a package, each of its submodules is put under the old name too (``irspec.kernels.gain``
    is ``irspec.builtin.kernels.gain``): found through the new package's path under the old name, a
    submodule would be loaded a second time, its classes other classes."""
    what = f"the module is {new.__name__}"
    if hasattr(new, "__path__"):
        import pkgutil  # here, not at the top: the face imports this module, and only old paths need it

        subs = [sub.name for sub in pkgutil.iter_modules(new.__path__)]
        for sub in subs:
            sys.modules[f"{old}.{sub}"] = importlib.import_module(f"{new.__name__}.{sub}")
        # the warning is the package's, whichever of its modules was asked for: it names them all
        what = (
            f"the package is {new.__name__} ({', '.join(f'{old}.{s} is {new.__name__}.{s}' for s in subs)})"
        )
    sys.modules[old] = new
    _warn(f"{old} is deprecated: {what}", old)


def moved_names(old: str, namespace: Mapping[str, Any]) -> None:
    """Called by the module ``old`` as it is imported, a file kept at the path of a module whose names
    went to several modules (``irspec.engine``): it imports each name from its new module, and this
    warns, naming where each is now (by ``__all__``, the old module's public names)."""
    homes: dict[str, list[str]] = {}
    for name in namespace["__all__"]:
        homes.setdefault(_home(namespace[name], name, old), []).append(name)
    where = "; ".join(f"{', '.join(names)} from {module}" for module, names in homes.items())
    _warn(f"{old} is deprecated: import {where}", old)


def _home(value: Any, name: str, old: str) -> str:
    """The module that defines ``value``, or for a function or class renamed on the way its new path
    (``irspec.report.agreement.judged_sets_text``), or for a plain value the module besides ``old``
    that holds it under ``name`` and lists it in its ``__all__``."""
    module = getattr(value, "__module__", None)
    if isinstance(module, str) and module.startswith("irspec") and hasattr(value, "__qualname__"):
        return module if value.__qualname__ == name else f"{module} (as {value.__qualname__})"
    for candidate, found in sorted(sys.modules.items()):
        listed = (
            candidate != old and candidate.startswith("irspec.") and name in getattr(found, "__all__", ())
        )
        if listed and getattr(found, name, None) is value:
            return candidate
    raise LookupError(f"{old}.{name}: no module of irspec lists it")  # the shim names a name nowhere


def _warn(message: str, old: str) -> None:
    """A :class:`DeprecationWarning` attributed to the line that used the old path: the first frame
    outside this module, the module kept at the old path and the import machinery. (Python 3.12's
    ``skip_file_prefixes`` does this; irspec supports 3.10.)"""
    level = 1  # this function's own line
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not _internal(frame):  # warnings.warn counts no frame of the import machinery's bootstrap
            level += 1
            if frame.f_globals.get("__name__") not in (__name__, old, "importlib"):
                break
        frame = frame.f_back
    warnings.warn(f"{message} (the old path is kept for one release)", DeprecationWarning, stacklevel=level)


def _internal(frame: FrameType) -> bool:
    """Whether ``frame`` is the import machinery's own, as :mod:`warnings` tells them (and skips)."""
    filename = frame.f_code.co_filename
    return "importlib" in filename and "_bootstrap" in filename
