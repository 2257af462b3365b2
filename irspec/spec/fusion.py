"""A fusion spec's text bound to a registered fusion method: ``"mnz(norm=min-max)"`` -> ``CombMNZ``.

A fusion spec is written in the metric-spec language (:mod:`irspec.spec.syntax`): one name and keyword
arguments, ``rrf(k=60)``, ``wsum(weights=[0.3, 0.7], norm=zmuv)``. Binding resolves the name in the
registry's table of fusion methods (:attr:`irspec.spec.registry.Registry.fusions`, filled by the
``irspec_register_fusion`` hook; case-insensitive, with ranx's names as aliases), checks each argument
against the method's declared :class:`~irspec.spec.definitions.Param` as a metric's are checked, and
drops defaults, giving an immutable :class:`~irspec.spec.definitions.Fusion` whose ``str`` is the one
canonical text. Every method takes ``norm`` (:data:`~irspec.spec.definitions.FUSION_NORM`), the normalisation of each run's scores
before they are fused; ranx's spellings ``min_max`` and ``min_max_inverted`` read as ``min-max`` and
``min-max-inverted``.

Knows no numpy and no files, like the rest of :mod:`irspec.spec`.
"""

from __future__ import annotations

from irspec.errors import ParameterError, SpecError, SpecSyntaxError, shorten, suggest
from irspec.spec import syntax
from irspec.spec.definitions import FUSION_NORM, FUSION_NORMS, Fusion, FusionDef
from irspec.spec.registry import _PARSED_TEXT, Registry, _coerce, _keep

__all__ = ["NORM", "NORMS", "parse_fusion"]

NORMS = FUSION_NORMS
NORM = FUSION_NORM


def parse_fusion(text: str, registry: Registry, *, searched: bool = False) -> Fusion:
    """Parse and bind one fusion spec (``"rrf(k=60)"``, ``"wsum(weights=[0.3,0.7], norm=zmuv)"``).

    Raises :class:`~irspec.errors.SpecSyntaxError` (with the position) for text outside the grammar or
    more than one spec, :class:`~irspec.errors.SpecError` for an unknown method (with suggestions), and
    :class:`~irspec.errors.ParameterError` for an unknown, mistyped or out-of-range argument.
    ``searched``: the spec of a parameter search, whose required parameters may be left out when the
    method's ``grid`` searches them, and whose searchable parameters given at their default are kept
    (given, they are not searched).
    """
    if not isinstance(text, str):
        raise SpecError(f"a fusion spec is a text such as 'rrf(k=60)', got {type(text).__name__}")
    # kept by text, as Registry.parse keeps metrics: fusing in a loop parses one spec again and again
    # (lark's parse, a fifth of a millisecond, on a few queries a twentieth of the fuse); short texts
    # alone, so that a huge one is not held on to, and a spec that fails is parsed again
    known = (text, searched) if len(text) <= _PARSED_TEXT else None
    found = registry.fusions_parsed.get(known) if known is not None else None
    if found is None:
        found = _bound(text, registry, searched)
        if known is not None:
            _keep(registry.fusions_parsed, known, found)
    return found


def _bound(text: str, registry: Registry, searched: bool) -> Fusion:
    """:func:`parse_fusion`'s work, for a text not kept."""
    nodes = syntax.parse_syntax(text)
    if len(nodes) != 1:
        raise SpecSyntaxError(text, nodes[1].start, "expected one fusion method, got a second one here")
    node = nodes[0]
    if node.cutoff is not None:
        raise SpecSyntaxError(text, node.end, "a fusion method takes no @; cut the fused run with depth")
    entry = registry.fusion_names.get(node.name.lower())
    if entry is None:
        hint = suggest(node.name, [d.name for d in registry.fusions.values()] + list(registry.fusion_names))
        more = f"; did you mean {hint[0]!r}?" if hint else ""
        known = ", ".join(sorted(registry.fusions))
        raise SpecError(
            f"unknown fusion method {shorten(node.name)!r} at column {node.start + 1}{more} (methods: {known})"
        )
    defn, alias = entry
    if node.args:
        raise ParameterError(
            defn.name,
            None,
            f"arguments are given by name, as in {defn.name}({_example(defn)}), got a positional "
            f"{shorten(syntax.expr_text(node.args[0]))}",
        )
    values = dict(alias.fixed) if alias is not None else {}
    params = {p.name: p for p in defn.all_params}
    given: set[str] = set()
    for key, expr in node.kwargs:
        p = params.get(key) or params.get(key.lower())
        if p is None:
            hint = suggest(key, params)
            more = f"; did you mean {hint[0]!r}?" if hint else ""
            raise ParameterError(defn.name, key, f"unknown parameter{more} (parameters: {', '.join(params)})")
        if p.name in values and (alias is None or p.name not in alias.fixed):
            raise ParameterError(defn.name, p.name, "given twice")
        if p.name == "norm" and isinstance(expr, syntax.Symbol):
            expr = syntax.Symbol(expr.name.replace("_", "-"))  # ranx's min_max
        values[p.name] = _coerce(defn, p, expr)  # type: ignore[arg-type]  # reads .name only
        given.add(p.name)
    grid = {name for name, _ in defn.grid} if searched else set()
    for p in params.values():
        if p.required and p.name not in values and p.name not in grid:
            raise ParameterError(
                defn.name, p.name, f"required: {p.description or p.describe_range()}, e.g. {_example(defn)}"
            )
    # a search keeps what the user gave at its default too: given, it is not searched
    kept = tuple(
        (p.name, values[p.name])
        for p in params.values()
        if p.name in values and (values[p.name] != p.default or (p.name in grid and p.name in given))
    )
    return Fusion(defn.name, kept, defn)


def _example(defn: FusionDef) -> str:
    """Keyword arguments for ``defn`` as a user would write them, for messages."""
    shown = []
    for p in defn.params:
        if p.kind == "floats":
            shown.append(f"{p.name}=[0.5,0.5]")
        elif p.required:
            shown.append(f"{p.name}=...")
    if not shown:
        p = defn.params[0] if defn.params else FUSION_NORM
        shown.append(f"{p.name}={p.default}")
    return ", ".join(shown)
