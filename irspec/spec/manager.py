"""pluggy's plugin manager for irspec (:class:`PluginManager`), in a module of its own: it subclasses
pluggy's, and pluggy is imported only when a plugin manager is made (:func:`irspec.spec.plugins.get_registry`
builds the built-ins' registry without one). :func:`irspec.spec.plugins.get_plugin_manager` makes one."""

from __future__ import annotations

import types
from typing import Any

import pluggy

from irspec.spec.hooks import IMPL_MARKER, PROJECT
from irspec.spec.registry import Distributions

__all__ = ["PluginManager"]


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager for the ``irspec`` project, remembering where installed plugins come from.

    ``distributions`` maps the name of each entry-point plugin to ``"distribution version"`` (for
    ``irspec plugins`` and ``irspec metrics``).
    """

    def __init__(self) -> None:
        super().__init__(PROJECT)
        self.distributions = Distributions()

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        """pluggy's own choice of hook implementations, made faster for a module's plain functions.

        pluggy reads each attribute of a plugin statically (``inspect.getattr_static``), so that no
        descriptor runs; for a module, whose attributes are its ``__dict__``'s values, that finds the
        same function as the dict does, at some 60 times the cost: registering the built-in modules'
        400 attributes took 30M instructions, 6% of a small evaluation's whole process. A function of
        a module's dict is therefore read there; anything else (a static or class method, a name the
        dict lacks, any other plugin) is pluggy's to read."""
        if type(plugin) is types.ModuleType:
            value = plugin.__dict__.get(name)
            if type(value) is types.FunctionType:
                opts = getattr(value, IMPL_MARKER, None)
                return opts if isinstance(opts, dict) else None
            if value is not None and not isinstance(value, (staticmethod, classmethod, types.MethodType)):
                return None  # not hookable: what pluggy's static read concludes of any other value
        return super().parse_hookimpl_opts(plugin, name)
