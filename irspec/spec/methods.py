"""A method spec's text bound to a registered interleaving method or click model: ``"team-draft"`` ->
``TeamDraft``, ``"probabilistic(tau=5)"`` -> ``Probabilistic(tau=5)``.

A method spec is written in the metric-spec language (:mod:`irspec.spec.syntax`): one name and arguments,
by keyword or (one) positional, as a metric's. Binding resolves the name in the registry's table of the
kind asked for (:attr:`irspec.spec.registry.Registry.methods`, filled by the ``irspec_register_interleaving``
and ``irspec_register_click_models`` hooks; case-insensitive, through aliases), checks each argument
against the method's declared :class:`~irspec.spec.definitions.Param` as a metric's are checked, and
drops defaults, giving an immutable :class:`~irspec.spec.definitions.Method` whose ``str`` is the one
canonical text.

Knows no numpy and no files, like the rest of :mod:`irspec.spec`; above the plugin manager, whose registry
it binds in by default.
"""

from __future__ import annotations

from irspec.errors import ParameterError, SpecError, SpecSyntaxError, shorten, suggest
from irspec.spec import syntax
from irspec.spec.definitions import Method, MethodDef, Param
from irspec.spec.plugins import get_registry
from irspec.spec.registry import Registry, _coerce

__all__ = ["parse_method"]


def parse_method(text: str | Method, kind: str, registry: Registry | None = None) -> Method:
    """Parse and bind one spec of a method of ``kind`` (:attr:`MethodDef.kind`: ``"interleaving method"``,
    ``"click model"``), such as ``"team-draft"`` or ``"probabilistic(tau=5)"``, in ``registry`` (default:
    the one in use, :func:`irspec.spec.plugins.get_registry`); a bound :class:`Method` of the kind is
    returned as it is.

    Raises :class:`~irspec.errors.SpecSyntaxError` (with the position) for text outside the grammar, more
    than one spec or an ``@``, :class:`~irspec.errors.SpecError` for an unknown method (with suggestions and
    the registered ones), and :class:`~irspec.errors.ParameterError` for an unknown, mistyped or
    out-of-range argument.
    """
    if isinstance(text, Method) and text.definition.kind == kind:
        return text
    if not isinstance(text, str):
        raise SpecError(f"a {kind} is named by a text such as 'team-draft', got {type(text).__name__}")
    nodes = syntax.parse_syntax(text)
    if len(nodes) != 1:
        raise SpecSyntaxError(text, nodes[1].start, f"expected one {kind}, got a second one here")
    node = nodes[0]
    if node.cutoff is not None:
        raise SpecSyntaxError(text, node.end, f"a {kind} takes no @")
    if registry is None:
        registry = get_registry()
    table = registry.methods.get(kind, {})
    entry = registry.method_names.get(kind, {}).get(node.name.lower())
    if entry is None:
        names = [d.name for d in table.values()] + list(registry.method_names.get(kind, {}))
        hint = suggest(node.name, names)
        more = f"; did you mean {hint[0]!r}?" if hint else ""
        known = ", ".join(sorted(table)) or "none: is irspec-online installed?"
        raise SpecError(f"unknown {kind} {shorten(node.name)!r}{more} (registered: {known})")
    defn, alias = entry
    values = dict(alias.fixed) if alias is not None else {}
    given = list(node.kwargs)
    if node.args:
        if defn.positional is None or len(node.args) > 1:
            raise ParameterError(
                defn.name, None, f"takes its arguments by name ({', '.join(defn.param_names) or 'none'})"
            )
        given.insert(0, (defn.positional, node.args[0]))
    for key, expr in given:
        p = _param(defn, key)
        if p.name in values and (alias is None or p.name not in alias.fixed):
            raise ParameterError(defn.name, p.name, "given twice")
        values[p.name] = _coerce(defn, p, expr)  # type: ignore[arg-type]  # reads .name only
    for p in defn.params:
        if p.required and p.name not in values:
            raise ParameterError(defn.name, p.name, f"required: {p.description or p.describe_range()}")
    kept = tuple(
        (p.name, values[p.name]) for p in defn.params if p.name in values and values[p.name] != p.default
    )
    return Method(defn.name, kept, defn)


def _param(defn: MethodDef, key: str) -> Param:
    for p in defn.params:
        if p.name == key or p.name == key.lower():
            return p
    hint = suggest(key, defn.param_names)
    more = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ParameterError(
        defn.name, key, f"unknown parameter{more} (parameters: {', '.join(defn.param_names) or 'none'})"
    )
