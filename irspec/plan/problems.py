"""The problems found in a plan, each tied to its path in the plan and shown with its line (or the
``--set`` override that set it), and the wording of JSON Schema errors as such problems."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irspec.errors import PlanError, not_loaded, shorten, suggest
from irspec.spec.registry import SHIPPED_PLUGIN_SECTIONS

__all__ = [
    "OVERRIDE_LINE",
    "OVERRIDE_SHOWN",
    "SHOWN",
    "PathPart",
    "PlanPath",
    "Problems",
    "explain",
    "kind_of",
    "path_text",
    "show",
]

OVERRIDE_LINE = 1 << 40  # problems from --set options sort after the plan's lines, in the options' order

SHOWN = 60
"""How many characters of a value a problem quotes."""

OVERRIDE_SHOWN = 100
"""How many characters of a ``--set`` override a problem quotes: a long path whole, a value of pages cut."""

# One segment of a path in a plan: a key or a list index.
PathPart = str | int
PlanPath = tuple[PathPart, ...]


class Problems:
    """Problems found in a plan, each tied to a path in the plan, rendered with the line they are on."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[PlanPath, int] = {}  # line of each value
        self.key_lines: dict[PlanPath, int] = {}  # line of each mapping key
        self.overrides: dict[PlanPath, tuple[int, str]] = {}  # paths set by --set: (its position, its text)
        self.found: list[tuple[int, tuple[Any, ...], int, str]] = []  # (line or 0, path, order, text)

    def where(self, path: PlanPath, *, key: bool = False) -> tuple[int, str]:
        """(sort line, location text) for ``path``: the --set that set it, else its line in the plan."""
        for i in range(len(path), -1, -1):
            if path[:i] in self.overrides:
                index, text = self.overrides[path[:i]]
                return OVERRIDE_LINE + index, f"{self.source}: --set {shorten(text, OVERRIDE_SHOWN)}"
        if key and path in self.key_lines:
            line = self.key_lines[path]
            return line, f"{self.source}:{line}"
        for i in range(len(path), -1, -1):
            if path[:i] in self.lines:
                line = self.lines[path[:i]]
                return line, f"{self.source}:{line}"
        return 0, self.source

    def line_of(self, path: PlanPath) -> int | None:
        """The line of ``path`` in the plan file; ``None`` when an override set it (or a parent)."""
        if any(path[:i] in self.overrides for i in range(len(path) + 1)):
            return None
        return self.lines.get(path)

    def add(self, path: PlanPath, message: str, *, key: bool = False) -> None:
        """A problem with the value at ``path`` (with ``key``: the key itself, say an unknown one)."""
        line, where = self.where(path, key=key)
        shown = path_text(path)
        text = f"{where}: {shown}: {message}" if shown else f"{where}: {message}"
        text = text.replace("\n", "\n    ")  # continuation lines (a spec's caret) under the problem
        if all(found[-1] != text for found in self.found):
            order = tuple((0, p) if isinstance(p, int) else (1, p) for p in path)
            self.found.append((line, order, len(self.found), text))

    def add_raw(self, line: int, text: str) -> None:
        """A problem already worded with its location, sorted at ``line``."""
        self.found.append((line, (), len(self.found), text))

    def __bool__(self) -> bool:
        return bool(self.found)

    def error(self) -> PlanError:
        """Every problem found, in the order of the plan's lines, as one :class:`PlanError`."""
        return PlanError(self.source, [found[-1] for found in sorted(self.found)])


# --------------------------------------------------------------------------------------------------
# Schema errors, explained


_TYPE_WORDS = {
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def explain(err: Any, problems: Problems) -> None:
    """Turn one jsonschema error into plan problems with useful wording."""
    path: PlanPath = tuple(err.absolute_path)
    kind = err.validator
    instance = err.instance
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = list(err.schema.get("properties", {}))
        for key in instance:
            if key in allowed:
                continue
            plugin = (
                next((p for p, keys in SHIPPED_PLUGIN_SECTIONS.items() if key in keys), None)
                if not path
                else None
            )
            if plugin is not None:  # a section of a shipped plugin that is not loaded (ab: of irspec-online)
                problems.add((*path, key), f"unknown key {key!r}: {not_loaded(plugin)}", key=True)
                continue
            close = suggest(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; allowed keys: {', '.join(allowed)}"
            problems.add((*path, key), f"unknown key {key!r}{hint}", key=True)
    elif kind == "required" and isinstance(instance, dict):
        for name in err.validator_value:
            if name not in instance:
                problems.add(path, f"missing required key {name!r}")
    elif kind in ("anyOf", "oneOf") and err.context:
        branches: dict[Any, list[Any]] = {}
        for sub in err.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        # a branch whose own type check failed is not what the user meant; explain the one that fits
        fitting = [
            subs
            for subs in branches.values()
            if not any(s.validator == "type" and not s.relative_path for s in subs)
        ]
        if len(fitting) == 1:
            for sub in fitting[0]:
                explain(sub, problems)
        else:
            types = [b.get("type") for b in err.validator_value if isinstance(b, dict)]
            words = " or ".join(_TYPE_WORDS.get(t, str(t)) for t in types if isinstance(t, str))
            problems.add(path, f"expected {words or 'something else'}, got {show(instance)}")
    elif kind == "type":
        named: list[str] = (
            err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        )
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in named)
        problems.add(path, f"expected {words}, got {show(instance)}")
    elif kind == "enum":
        allowed = [str(v) for v in err.validator_value]
        close = suggest(instance, allowed, n=1) if isinstance(instance, str) else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        problems.add(path, f"{show(instance, kind=False)} is not one of: {', '.join(allowed)}{hint}")
    elif kind == "const" and path and path[-1] in ("content", "per_query"):
        problems.add(path, f"{path[-1]} {show(instance, kind=False)} is not available with this format")
    elif kind in ("minItems", "minLength") and err.validator_value == 1:
        problems.add(path, "must not be empty")
    else:  # jsonschema's own words, a long value in them cut as show() cuts it (400 digits, a long string)
        message = err.message
        if len(repr(instance)) > SHOWN:
            shown = (
                show(instance, kind=False) if isinstance(instance, (int, float, str)) else kind_of(instance)
            )
            message = message.replace(repr(instance), shown, 1)
        problems.add(path, message)


def show(value: Any, *, kind: bool = True) -> str:
    """A value as the user wrote it (YAML spelling), with its kind when that helps."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return shorten(repr(value), SHOWN)
    if isinstance(value, str):
        shown = shorten(value, SHOWN)
        return f"{shown!r} (a string)" if kind else repr(shown)
    return kind_of(value)


def kind_of(value: Any) -> str:
    """What a value is, in words (``a mapping``, ``a list``, ``null``...)."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def path_text(path: Sequence[PathPart]) -> str:
    """A path in the plan as text: ``runs[2].path``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out
