"""The metric-spec language and the metrics' names: text to syntax tree (``syntax``, its grammar in
``grammar/metric.lark``), what a plugin declares (``definitions``), the name table that binds a tree to
a definition (``registry``), the pluggy hooks (``hooks``) and the plugin manager (``plugins``).

Nothing here reads files of data or imports numpy: parsing a spec stays cheap (``irspec.parse``). The
package itself holds only the old names of ``irspec.spec`` the module, loaded when used.
"""

from __future__ import annotations

from irspec.lazy import lazy_names

# Until irspec 0.1.0 ``irspec.spec`` was a module (irspec/spec.py), now ``spec/syntax.py``: its names are
# kept here for one release, each loaded on use with a DeprecationWarning naming the new path.
_MOVED: dict[str, str] = dict.fromkeys(
    (
        "BinOp",
        "DictLit",
        "Expr",
        "ListLit",
        "Neg",
        "Number",
        "SpecNode",
        "String",
        "Symbol",
        "evaluate_expr",
        "expr_text",
        "free_symbols",
        "parse_syntax",
    ),
    "irspec.spec.syntax",
)

__getattr__, __dir__ = lazy_names(globals(), {}, moved=_MOVED)
