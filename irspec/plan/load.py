"""Loading a plan: the YAML read with every value's line, ``--set`` overrides applied, the JSON Schema
checked, then :func:`~irspec.plan.resolve.resolve` for what a schema cannot check.

The schema is irspec's own (``specs/plan.schema.json``) with the sections the loaded plugins register
(:class:`~irspec.spec.definitions.PlanSection`: irspec-online's ``ab:``) among its properties: a plan is
checked against the plugins the registry holds, and :func:`schema` gives that schema.

YAML is read with PyYAML's ``SafeLoader`` (no object construction), bounded so that loading stays linear
in the file's size: aliases may repeat at most :data:`_ALIAS_BUDGET` values in all (an alias bomb is
refused at the alias that crosses it), none may be recursive, and nesting stops at :data:`_MAX_DEPTH`
levels. The document is composed into a node tree first, so that each value's line is known;
``--set key.sub=value`` overrides (values read as YAML) are applied before validation and named in place
of a line when their value is at fault. This module imports PyYAML and jsonschema; the plan's model
(:mod:`irspec.plan.model`) and its running (:mod:`irspec.plan.execute`) need neither.
"""

from __future__ import annotations

import functools
import json
import os
import re
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from irspec.errors import InputError, PlanError, RegistryError, shorten
from irspec.lines import read_bounded
from irspec.plan.model import SCHEMA_PATH, Plan
from irspec.plan.problems import (
    OVERRIDE_LINE,
    OVERRIDE_SHOWN,
    PathPart,
    PlanPath,
    Problems,
    explain,
    kind_of,
    path_text,
)
from irspec.plan.resolve import resolve
from irspec.spec.plugins import get_registry
from irspec.spec.registry import PlanSection, Registry

__all__ = ["load_plan", "schema"]

# No plan needs deeper nesting, aliases expanded. Loading refuses it (PyYAML's composer recurses once
# a level); the walks of the loaded tree stop there too, as a second guard.
_MAX_DEPTH = 50
# Values that aliases may repeat in one plan, in all: enough for shared mappings, far too few for a
# "billion laughs" alias bomb, so every walk of the loaded plan stays linear in the file's size.
_ALIAS_BUDGET = 10_000


def schema(registry: Registry | None = None) -> dict[str, Any]:
    """The plan's JSON Schema: irspec's own (:data:`SCHEMA_PATH`) with the plan sections of the plugins
    ``registry`` holds (default: the one plans use, :func:`~irspec.spec.plugins.get_registry`) among its
    properties, each after the key of its reader's input (irspec-online's ``ab`` after ``log``)."""
    return _checker(registry or get_registry())[0]


@functools.cache
def _own_schema() -> dict[str, Any]:
    try:
        with open(SCHEMA_PATH, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:  # an installation without the specs/ directory
        raise RuntimeError(f"the plan schema is missing: {SCHEMA_PATH}: {e.strerror or e}") from None


# The schema and its validator, per registry: built once for each (registries differ by their plugins).
_CHECKERS: weakref.WeakKeyDictionary[Registry, tuple[dict[str, Any], Any]] = weakref.WeakKeyDictionary()


def _checker(registry: Registry) -> tuple[dict[str, Any], Any]:
    found = _CHECKERS.get(registry)
    if found is None:
        composed = _with_sections(_own_schema(), tuple(registry.sections.values()))
        found = _CHECKERS[registry] = (composed, Draft202012Validator(composed))
    return found


def _with_sections(own: dict[str, Any], sections: tuple[PlanSection, ...]) -> dict[str, Any]:
    """``own`` with each section's schema as a property, after the key of the section's reader's input
    (at the end when no key is named so); a section named like a key of ``own``, or whose schema is no
    JSON Schema, is a :class:`~irspec.errors.RegistryError` naming its plugin."""
    if not sections:
        return own
    keys = own["properties"]
    for section in sections:
        if section.name in keys:
            raise RegistryError(
                f"plugin {section.plugin!r} registers the plan section {section.name!r}, which is a key of irspec's own plan"
            )
        try:
            Draft202012Validator.check_schema(dict(section.schema))
        except SchemaError as e:
            raise RegistryError(
                f"plugin {section.plugin!r}: plan section {section.name!r}: not a JSON Schema: {e.message}"
            ) from None
    properties: dict[str, Any] = {}
    for key, value in keys.items():
        properties[key] = value
        properties.update((s.name, dict(s.schema)) for s in sections if s.reader == key)
    properties.update((s.name, dict(s.schema)) for s in sections if s.name not in properties)
    return {**own, "properties": properties}


def load_plan(path: str | os.PathLike[str], overrides: Iterable[str] = ()) -> Plan:
    """Read, validate and resolve an evaluation plan.

    ``overrides`` are ``"key.sub=value"`` texts (the CLI's ``--set``; list items as ``runs[0].path`` or
    ``runs.0.path``), each value read as YAML, applied before validation. Raises
    :class:`~irspec.errors.PlanError` listing every problem, each with the plan file, the line (or the
    override), the path in the plan and the message.
    """
    source = os.fspath(path)
    overrides = tuple(overrides)
    problems = Problems(source)
    try:
        with open(source, "rb") as f:
            raw = read_bounded(f, source)  # a device or a binary file is refused, not read without end
        text = raw.decode("utf-8")
    except InputError as e:
        raise PlanError(source, [str(e)]) from None
    except FileNotFoundError:
        raise PlanError(source, [f"{source}: no such file"]) from None
    except IsADirectoryError:
        raise PlanError(source, [f"{source}: is a directory, not a plan file"]) from None
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        bad = " ".join(f"0x{b:02x}" for b in raw[e.start : e.end])
        raise PlanError(
            source, [f"{source}:{line}: not UTF-8 text ({e.reason}: byte {bad} at offset {e.start})"]
        ) from None
    except OSError as e:
        raise PlanError(source, [f"{source}: cannot read: {e.strerror or e}"]) from None

    data = _read_yaml(text, problems)
    if data is None:
        problems.lines[()] = 1
        if not overrides:  # the options may yet make a plan of nothing
            problems.add((), "the plan is empty; expected a mapping of keys (qrels, runs, metrics, ...)")
            raise problems.error()
        data = {}
    for index, item in enumerate(overrides):
        data = _apply_override(data, item, index, problems)

    if not isinstance(data, dict):
        problems.add((), f"a plan must be a mapping of keys (qrels, runs, metrics, ...), not {kind_of(data)}")
        raise problems.error()

    for err in _checker(get_registry())[1].iter_errors(data):
        explain(err, problems)
    plan = resolve(data, Path(source).parent, problems, overrides)
    if plan is None and not problems:  # pragma: no cover - every path to None reports a problem first
        problems.add((), "invalid plan")
    if problems or plan is None:
        raise problems.error()
    return plan


def _read_yaml(text: str, problems: Problems) -> Any:
    """The document as plain data with string keys; lines of values and keys go into ``problems``."""
    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_duplicate_keys(node, (), problems, 0)
        data = loader.construct_document(node)
    except _loader_class().Refused as e:
        line = e.problem_mark.line + 1
        raise PlanError(problems.source, [f"{problems.source}:{line}: {e.problem}"]) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 0
        message = e.problem or "invalid YAML"
        if "'\\t'" in message:
            message += " (YAML indents with spaces, never tabs)"
        if e.context and e.context_mark is not None and e.context_mark is not mark:
            message += f" ({e.context} at line {e.context_mark.line + 1})"
        where = f"{problems.source}:{line}" if line else problems.source
        raise PlanError(problems.source, [f"{where}: YAML syntax error: {message}"]) from None
    except yaml.YAMLError as e:
        raise PlanError(problems.source, [f"{problems.source}: YAML error: {e}"]) from None
    finally:
        loader.dispose()
    _index_lines(node, (), problems, 0, yaml.SafeLoader(""))
    return _string_keys(data, 0, problems)


@functools.cache
def _loader_class() -> Any:
    """PyYAML's ``SafeLoader``, bounded: aliases may repeat at most :data:`_ALIAS_BUDGET` values in
    all, none may refer to a value that contains it, and nesting, aliases expanded, stops at
    :data:`_MAX_DEPTH` levels.

    PyYAML composes an alias as a second reference to its anchor's node, so composing stays linear
    while every walk of the tree (and of the constructed data) pays for each repetition again: nine
    anchors of nine aliases each compose in a blink and expand to 9**9 values. The loader counts, as
    it composes, how many values each anchored node stands for, aliases inside it expanded, and
    refuses the alias that takes the total past the budget, with its position (``Refused``).
    """

    class Refused(yaml.MarkedYAMLError):
        """A plan the bounded loader will not compose; ``problem`` and ``problem_mark`` say why and where."""

        def __init__(self, problem: str, mark: Any) -> None:
            super().__init__(problem=problem, problem_mark=mark)

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.values = 0  # values composed so far, each alias counted as the values it repeats
            self.repeated = 0  # of which aliases repeated
            self.depth = 0  # of the node being composed
            self.deepest = 0  # level reached inside the node being composed, aliases expanded
            self.anchored: dict[int, tuple[int, int]] = {}  # id of an anchored node -> (values, levels)

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                if event.anchor in self.anchors:  # else PyYAML's own "undefined alias" error
                    self._repeat(event, self.anchors[event.anchor])
                return super().compose_node(parent, index)
            if self.depth >= _MAX_DEPTH:
                raise Refused(f"nested more than {_MAX_DEPTH} levels deep", event.start_mark)
            values, outer = self.values, self.deepest
            self.values += 1
            self.depth += 1
            self.deepest = self.depth
            try:
                node = super().compose_node(parent, index)
            finally:
                self.depth -= 1
            if event.anchor is not None:
                self.anchored[id(node)] = (self.values - values, self.deepest - self.depth)
            self.deepest = max(outer, self.deepest)
            return node

        def _repeat(self, event: Any, node: Any) -> None:
            if (
                id(node) not in self.anchored
            ):  # its anchor's node is still being composed: the alias is inside it
                raise Refused(f"alias *{event.anchor} refers to a value that contains it", event.start_mark)
            size, levels = self.anchored[id(node)]
            if self.depth + levels > _MAX_DEPTH:
                raise Refused(
                    f"alias *{event.anchor} nests the plan more than {_MAX_DEPTH} levels deep",
                    event.start_mark,
                )
            self.deepest = max(self.deepest, self.depth + levels)
            self.values += size
            self.repeated += size
            if self.repeated > _ALIAS_BUDGET:
                raise Refused(
                    f"alias *{event.anchor} repeats {size} values, which takes the values aliases repeat "
                    f"past {_ALIAS_BUDGET}; expected aliases of small parts of the plan, such as a shared "
                    "options mapping (is this an alias bomb?)",
                    event.start_mark,
                )

    # YAML 1.2's floats with an exponent and no point (1e-3): PyYAML reads YAML 1.1, where they are text,
    # while the JSON Schema editors the documentation suggests, and YAML 1.2, read numbers
    BoundedLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"), list("-+0123456789")
    )
    BoundedLoader.Refused = Refused
    return BoundedLoader


def _check_duplicate_keys(node: Any, path: PlanPath, problems: Problems, depth: int) -> None:
    """A key given twice in one mapping (PyYAML silently keeps the last) is a problem."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for k, v in node.value:
            if k.tag == "tag:yaml.org,2002:merge" or not isinstance(k, yaml.ScalarNode):
                _check_duplicate_keys(v, path, problems, depth + 1)
                continue
            line = k.start_mark.line + 1
            if k.value in seen:
                problems.add_raw(
                    line,
                    f"{problems.source}:{line}: {path_text((*path, k.value))}: duplicate key {k.value!r} "
                    f"(first given at line {seen[k.value]})",
                )
            else:
                seen[k.value] = line
            _check_duplicate_keys(v, (*path, k.value), problems, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_duplicate_keys(item, (*path, i), problems, depth + 1)


def _index_lines(node: Any, path: PlanPath, problems: Problems, depth: int, keys: Any) -> None:
    """Record the 1-based line of every value and key of the (merged) node tree; ``keys`` is a
    SafeLoader that turns key nodes into values, as the document's own construction did."""
    if depth > _MAX_DEPTH or path in problems.lines:
        return
    problems.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = _key_text(keys.construct_object(k)) if isinstance(k, yaml.ScalarNode) else str(k)
            # with a duplicate key the last value wins, as in the constructed document
            here = (*path, key)
            problems.key_lines[here] = k.start_mark.line + 1
            problems.lines.pop(here, None)
            _index_lines(v, here, problems, depth + 1, keys)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*path, i), problems, depth + 1, keys)


def _key_text(key: Any) -> str:
    """A mapping key as text, spelled as YAML would (``1``, ``true``, ``null``)."""
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _string_keys(value: Any, depth: int, problems: Problems) -> Any:
    if depth > _MAX_DEPTH:
        message = f"{problems.source}: nested more than {_MAX_DEPTH} levels deep"
        raise PlanError(problems.source, [message])
    if isinstance(value, dict):
        return {_key_text(k): _string_keys(v, depth + 1, problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v, depth + 1, problems) for v in value]
    return value


_INDEX = re.compile(r"\[(\d+)\]")


def _apply_override(data: Any, item: str, index: int, problems: Problems) -> Any:
    """Apply one ``key.sub=value`` override (the ``index``-th) to ``data`` (returned, possibly a new root)."""

    def fail(message: str) -> Any:
        problems.add_raw(
            OVERRIDE_LINE + index, f"{problems.source}: --set {shorten(item, OVERRIDE_SHOWN)}: {message}"
        )
        return data

    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        return fail("expected KEY=VALUE, such as compare.test=randomization")
    parts: list[PathPart] = []
    for piece in _INDEX.sub(r".\1", key).split("."):
        if not piece:
            return fail(f"empty key in {key!r}")
        parts.append(int(piece) if piece.isdigit() else piece)
    try:
        value = yaml.load(raw, Loader=_loader_class()) if raw.strip() else None
    except yaml.YAMLError as e:
        return fail(f"cannot read the value as YAML: {getattr(e, 'problem', None) or e}")
    value = _string_keys(value, 0, problems)
    if data is None:
        data = {}
    node = data
    created: PlanPath | None = None  # the first container this override had to create
    walked: list[PathPart] = []  # the path as it exists in the plan (a mapping's keys are strings)
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = tuple(walked)
        where = path_text(here) or "the plan"
        if isinstance(node, dict):
            part = str(part)
            if last:
                node[part] = value
            else:
                if not isinstance(node.get(part), (dict, list)):
                    if isinstance(parts[i + 1], int):
                        missing = path_text((*here, part))
                        return fail(
                            f"{missing} is not a list in the plan; set it whole, e.g. {missing}=[...]"
                        )
                    node[part] = {}
                    created = created or (*here, part)
                node = node[part]
        elif isinstance(node, list):
            if not isinstance(part, int):
                return fail(f"{where} is a list; use an index such as {where}[0]")
            if part >= len(node):
                return fail(f"{where} has {len(node)} item{'s' if len(node) != 1 else ''}; no index {part}")
            if last:
                node[part] = value
            else:
                if not isinstance(node[part], (dict, list)):
                    node[part] = {}
                    created = created or (*here, part)
                node = node[part]
        else:
            return fail(f"{where} is {kind_of(node)}, not a mapping")
        walked.append(part)
    if created is not None:
        problems.overrides[created] = (index, item)
    problems.overrides[tuple(walked)] = (index, item)
    return data
