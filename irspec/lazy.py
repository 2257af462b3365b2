"""Names of a package loaded on first use: the ``__getattr__`` and ``__dir__`` of a module whose
``_LAZY`` table maps each public name to the module that defines it.

The face (``import irspec``), ``irspec.plan`` and ``irspec.plugin_api`` import light and load numpy,
polars, YAML or scipy only when one of their names is first used (PEP 562). Knows nothing else.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    namespace: dict[str, Any], table: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the module whose globals are ``namespace``: a name of ``table``
    is taken from the module it names, a name of ``submodules`` is that sub-package imported; either
    is then kept in ``namespace``, so later uses skip ``__getattr__``."""
    package = namespace["__name__"]
    subs = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in table:
            value = getattr(importlib.import_module(table[name]), name)
        elif name in subs:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table) | subs)

    return __getattr__, __dir__
