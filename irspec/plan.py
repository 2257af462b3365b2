"""Evaluation plans: a YAML file that says what to evaluate, how to compare the runs, and where to write.

>>> plan = load_plan("specs/demo.yaml")                  # doctest: +SKIP
>>> report = run_plan(plan)                              # doctest: +SKIP
>>> write_outputs(report)                                # doctest: +SKIP

Loading is strict and all-at-once. The plan's JSON Schema (``specs/plan.schema.json``, shipped as ``irspec/schemas/plan.schema.json``) is the single
source of truth for its shape; it is checked with :mod:`jsonschema` (draft 2020-12), and every error is
reported with the plan file, the line, the path in the plan (``runs[2].path``) and the problem. Then
come the checks a schema cannot make: metric specs are parsed and bound, files and globs resolved
(relative to the plan file), run names must be distinct, the baseline must name a run. Every problem
found is raised together in one :class:`~irspec.errors.PlanError`.

YAML is read with PyYAML's ``SafeLoader`` (no object construction), bounded so that loading stays linear
in the file's size: aliases may repeat at most :data:`_ALIAS_BUDGET` values in all (an alias bomb is
refused at the alias that crosses it), none may be recursive, and nesting stops at :data:`_MAX_DEPTH`
levels. The document is composed into a node tree first, so that each value's line is known; ``--set key.sub=value`` overrides (values read as YAML)
are applied before validation and named in place of a line when their value is at fault.

Comparisons pair per-query scores **by query id**, never by position. Under ``missing_queries: zero``
every run is scored on every qrels query, so the pairs are complete; under ``skip`` a pair of runs is
compared on the queries both answer, and the report says how many were left out. Corrections apply over
the family the plan states (the comparisons of one metric, or all of them); the Tukey tests adjust over
all pairs of runs themselves.

Outputs are computed in full before any file is touched, then written all or nothing
(:func:`irspec.report.write_all_atomic`), so a failed plan leaves no partial output behind.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from irspec.errors import EvaluationError, IrspecError, PlanError, SpecError, suggest

__all__ = [
    "SCHEMA_PATH",
    "Plan",
    "PlanRun",
    "Compare",
    "Output",
    "Comparison",
    "PlanReport",
    "schema",
    "load_plan",
    "run_plan",
    "compare_results",
    "render_outputs",
    "write_outputs",
]

# Shipped inside the package so an installed irspec can validate; specs/plan.schema.json is the same
# file for editors (tests/test_plan.py keeps the two identical).
SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "plan.schema.json"
"""The plan's JSON Schema (draft 2020-12), the single source of truth for what a plan may contain."""

_TUKEY_TESTS = ("tukey", "randomized-tukey")
# No plan needs deeper nesting, aliases expanded. Loading refuses it (PyYAML's composer recurses once
# a level); the walks of the loaded tree stop there too, as a second guard.
_MAX_DEPTH = 50
# Values that aliases may repeat in one plan, in all: enough for shared mappings, far too few for a
# "billion laughs" alias bomb, so every walk of the loaded plan stays linear in the file's size.
_ALIAS_BUDGET = 10_000
_OVERRIDE_LINE = 1 << 40  # problems from --set options sort after the plan's lines, in the options' order

# One segment of a path in a plan: a key or a list index.
PathPart = str | int
PlanPath = tuple[PathPart, ...]


# --------------------------------------------------------------------------------------------------
# The validated plan


@dataclass(frozen=True)
class PlanRun:
    """One run of a plan: its ``name``, resolved ``path`` and where it was declared (``entry``, e.g.
    ``runs[1]``, and its 1-based ``line`` in the plan; ``None`` when it came from an override)."""

    name: str
    path: Path
    entry: str
    line: int | None = None


@dataclass(frozen=True)
class Compare:
    """The plan's ``compare`` section with every default filled in (see the schema for each field).

    ``baseline`` is ``None`` for all pairs of runs. The Tukey tests adjust for all pairs of runs
    themselves, so they ignore ``correction`` and ``family`` (a plan must leave them at ``none`` and
    ``per-metric``).
    """

    baseline: str | None = None
    test: str = "t"
    permutations: int = 10_000
    seed: int = 42
    correction: str = "holm"
    alpha: float = 0.05
    family: str = "per-metric"

    def as_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for JSON output)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Output:
    """One output: ``format`` (table, json, csv, tsv, trec, latex, markdown, html, plots), ``path``
    (``None``: standard output; for plots, a directory), ``per_query``, ``content`` (``results`` or
    ``comparisons``) and ``decimals`` (of the values in table, latex, markdown and html)."""

    format: str
    path: Path | None = None
    per_query: bool = False
    content: str = "results"
    decimals: int = 4


@dataclass(frozen=True)
class Plan:
    """A loaded, validated evaluation plan (see :func:`load_plan`). Paths are resolved against the
    plan file's directory; ``metrics`` are bound :class:`~irspec.Metric` objects. ``qrels`` is ``None``
    (and ``runs`` empty) in a plan that evaluates only an interaction ``log``."""

    source: str
    qrels: Path | None
    runs: tuple[PlanRun, ...]
    metrics: tuple[Any, ...]
    options: Any  # irspec.engine.Options
    compare: Compare | None
    outputs: tuple[Output, ...]
    overrides: tuple[str, ...] = ()
    log: Path | None = None

    @property
    def run_names(self) -> tuple[str, ...]:
        """The runs' names, in plan order."""
        return tuple(r.name for r in self.runs)


@dataclass(frozen=True)
class Comparison:
    """One significance comparison of run ``a`` with run ``b`` on one metric, on ``d = a - b``.

    With a baseline, ``b`` is the baseline, so a positive ``mean_difference``, ``effect_size`` (paired
    Cohen's d) and ``wins`` all mean that run ``a`` scored higher. ``p_value`` is the test's own
    p-value and ``p_adjusted`` the one after ``correction`` over ``family`` (``family_size``
    comparisons); ``significant`` is ``p_adjusted <= alpha``. For the Tukey tests both p-values are the
    family-wise adjusted one (the test adjusts over all pairs of runs), and effect sizes and
    wins/ties/losses are computed on the same aligned queries. ``n`` is the number of queries compared
    and ``left_out`` how many were not (a query only one run answered under ``missing_queries: skip``,
    or a value a metric leaves undefined). Undefined numbers are ``None``, never NaN.
    """

    metric: str
    a: str
    b: str
    test: str
    null: str
    n: int
    left_out: int
    mean_a: float
    mean_b: float
    mean_difference: float
    relative_change: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    ci_method: str
    effect_size: float | None
    hedges_g: float | None
    wins: int
    ties: int
    losses: int
    statistic: float | None
    df: int | None
    p_value: float
    p_adjusted: float
    significant: bool
    alpha: float
    correction: str
    family: str
    family_size: int
    permutations: int | None
    exact: bool
    seed: int | None
    mc_se: float

    def as_dict(self) -> dict[str, Any]:
        """All fields as a plain, JSON-serialisable dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PlanReport:
    """What :func:`run_plan` produces: the plan, one :class:`~irspec.engine.Result` per run (named as in
    the plan), the comparisons, and notes worth telling the user (queries left out of comparisons).
    ``inputs`` holds the results of the plan's other inputs (its ``log``): their own metrics, one row per
    item of the input, reported after the runs and never compared."""

    plan: Plan
    results: tuple[Any, ...]
    comparisons: tuple[Comparison, ...] = ()
    notes: tuple[str, ...] = ()
    inputs: tuple[Any, ...] = ()
    curves: dict[str, list[float]] | None = None
    """The runs' 11-point precision-recall curves (:func:`irspec.plots.precision_recall`), evaluated
    beside the plan's metrics when an output draws plots; ``None`` otherwise."""

    @property
    def warnings(self) -> tuple[str, ...]:
        """The evaluation's warnings, each once (for example qrels queries missing from a run)."""
        from irspec.engine import collect_warnings

        return tuple(collect_warnings((*self.results, *self.inputs)))


# --------------------------------------------------------------------------------------------------
# Loading


@functools.cache
def schema() -> dict[str, Any]:
    """The plan's JSON Schema, read from :data:`SCHEMA_PATH`."""
    try:
        with open(SCHEMA_PATH, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:  # an installation without the specs/ directory
        raise RuntimeError(f"the plan schema is missing: {SCHEMA_PATH}: {e.strerror or e}") from None


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


class _Problems:
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
                return _OVERRIDE_LINE + index, f"{self.source}: --set {text}"
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
        line, where = self.where(path, key=key)
        shown = _path_text(path)
        text = f"{where}: {shown}: {message}" if shown else f"{where}: {message}"
        text = text.replace("\n", "\n    ")  # continuation lines (a spec's caret) under the problem
        if all(found[-1] != text for found in self.found):
            order = tuple((0, p) if isinstance(p, int) else (1, p) for p in path)
            self.found.append((line, order, len(self.found), text))

    def add_raw(self, line: int, text: str) -> None:
        self.found.append((line, (), len(self.found), text))

    def __bool__(self) -> bool:
        return bool(self.found)

    def error(self) -> PlanError:
        return PlanError(self.source, [found[-1] for found in sorted(self.found)])


def load_plan(path: str | os.PathLike[str], overrides: Iterable[str] = ()) -> Plan:
    """Read, validate and resolve an evaluation plan.

    ``overrides`` are ``"key.sub=value"`` texts (the CLI's ``--set``; list items as ``runs[0].path`` or
    ``runs.0.path``), each value read as YAML, applied before validation. Raises
    :class:`~irspec.errors.PlanError` listing every problem, each with the plan file, the line (or the
    override), the path in the plan and the message.
    """
    source = os.fspath(path)
    overrides = tuple(overrides)
    problems = _Problems(source)
    try:
        with open(source, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise PlanError(source, [f"{source}: no such file"]) from None
    except IsADirectoryError:
        raise PlanError(source, [f"{source}: is a directory, not a plan file"]) from None
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        bad = " ".join(f"0x{b:02x}" for b in raw[e.start : e.end])
        raise PlanError(source, [f"{source}:{line}: not UTF-8 text ({e.reason}: byte {bad} at offset {e.start})"]) from None
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
        problems.add((), f"a plan must be a mapping of keys (qrels, runs, metrics, ...), not {_kind(data)}")
        raise problems.error()

    for err in _validator().iter_errors(data):
        _explain(err, problems)
    plan = _resolve(data, Path(source).parent, problems, overrides)
    if plan is None and not problems:  # pragma: no cover - every path to None reports a problem first
        problems.add((), "invalid plan")
    if problems or plan is None:
        raise problems.error()
    return plan


def _read_yaml(text: str, problems: _Problems) -> Any:
    """The document as plain data with string keys; lines of values and keys go into ``problems``."""
    import yaml

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
    import yaml

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
            if id(node) not in self.anchored:  # its anchor's node is still being composed: the alias is inside it
                raise Refused(f"alias *{event.anchor} refers to a value that contains it", event.start_mark)
            size, levels = self.anchored[id(node)]
            if self.depth + levels > _MAX_DEPTH:
                raise Refused(f"alias *{event.anchor} nests the plan more than {_MAX_DEPTH} levels deep", event.start_mark)
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

    BoundedLoader.Refused = Refused
    return BoundedLoader


def _check_duplicate_keys(node: Any, path: PlanPath, problems: _Problems, depth: int) -> None:
    """A key given twice in one mapping (PyYAML silently keeps the last) is a problem."""
    import yaml

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
                    f"{problems.source}:{line}: {_path_text(path + (k.value,))}: duplicate key {k.value!r} "
                    f"(first given at line {seen[k.value]})",
                )
            else:
                seen[k.value] = line
            _check_duplicate_keys(v, path + (k.value,), problems, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_duplicate_keys(item, path + (i,), problems, depth + 1)


def _index_lines(node: Any, path: PlanPath, problems: _Problems, depth: int, keys: Any) -> None:
    """Record the 1-based line of every value and key of the (merged) node tree; ``keys`` is a
    SafeLoader that turns key nodes into values, as the document's own construction did."""
    import yaml

    if depth > _MAX_DEPTH or path in problems.lines:
        return
    problems.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = _key_text(keys.construct_object(k)) if isinstance(k, yaml.ScalarNode) else str(k)
            # with a duplicate key the last value wins, as in the constructed document
            problems.key_lines[path + (key,)] = k.start_mark.line + 1
            problems.lines.pop(path + (key,), None)
            _index_lines(v, path + (key,), problems, depth + 1, keys)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, path + (i,), problems, depth + 1, keys)


def _key_text(key: Any) -> str:
    """A mapping key as text, spelled as YAML would (``1``, ``true``, ``null``)."""
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _string_keys(value: Any, depth: int, problems: _Problems) -> Any:
    if depth > _MAX_DEPTH:
        message = f"{problems.source}: nested more than {_MAX_DEPTH} levels deep"
        raise PlanError(problems.source, [message])
    if isinstance(value, dict):
        return {_key_text(k): _string_keys(v, depth + 1, problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v, depth + 1, problems) for v in value]
    return value


_INDEX = re.compile(r"\[(\d+)\]")


def _apply_override(data: Any, item: str, index: int, problems: _Problems) -> Any:
    """Apply one ``key.sub=value`` override (the ``index``-th) to ``data`` (returned, possibly a new root)."""
    import yaml

    def fail(message: str) -> Any:
        problems.add_raw(_OVERRIDE_LINE + index, f"{problems.source}: --set {item}: {message}")
        return data

    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        return fail("expected KEY=VALUE, such as compare.test=randomization")
    parts: list[PathPart] = []
    for part in _INDEX.sub(r".\1", key).split("."):
        if not part:
            return fail(f"empty key in {key!r}")
        parts.append(int(part) if part.isdigit() else part)
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
        where = _path_text(here) or "the plan"
        if isinstance(node, dict):
            part = str(part)
            if last:
                node[part] = value
            else:
                if not isinstance(node.get(part), (dict, list)):
                    if isinstance(parts[i + 1], int):
                        missing = _path_text(here + (part,))
                        return fail(f"{missing} is not a list in the plan; set it whole, e.g. {missing}=[...]")
                    node[part] = {}
                    created = created or here + (part,)
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
                    created = created or here + (part,)
                node = node[part]
        else:
            return fail(f"{where} is {_kind(node)}, not a mapping")
        walked.append(part)
    if created is not None:
        problems.overrides[created] = (index, item)
    problems.overrides[tuple(walked)] = (index, item)
    return data


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


def _explain(err: Any, problems: _Problems) -> None:
    """Turn one jsonschema error into plan problems with useful wording."""
    path: PlanPath = tuple(err.absolute_path)
    kind = err.validator
    instance = err.instance
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = list(err.schema.get("properties", {}))
        for key in instance:
            if key in allowed:
                continue
            close = suggest(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; allowed keys: {', '.join(allowed)}"
            problems.add(path + (key,), f"unknown key {key!r}{hint}", key=True)
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
                _explain(sub, problems)
        else:
            types = [b.get("type") for b in err.validator_value if isinstance(b, dict)]
            words = " or ".join(_TYPE_WORDS.get(t, str(t)) for t in types if isinstance(t, str))
            problems.add(path, f"expected {words or 'something else'}, got {_show(instance)}")
    elif kind == "type":
        types = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
        problems.add(path, f"expected {words}, got {_show(instance)}")
    elif kind == "enum":
        allowed = [str(v) for v in err.validator_value]
        close = suggest(instance, allowed, n=1) if isinstance(instance, str) else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        problems.add(path, f"{_show(instance, kind=False)} is not one of: {', '.join(allowed)}{hint}")
    elif kind == "const" and path and path[-1] in ("content", "per_query"):
        problems.add(path, f"{path[-1]} {_show(instance, kind=False)} is not available with this format")
    elif kind in ("minItems", "minLength") and err.validator_value == 1:
        problems.add(path, "must not be empty")
    else:
        problems.add(path, err.message)


def _show(value: Any, *, kind: bool = True) -> str:
    """A value as the user wrote it (YAML spelling), with its kind when that helps."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"{shown!r} (a string)" if kind else repr(shown)
    return _kind(value)


def _kind(value: Any) -> str:
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


def _path_text(path: Sequence[PathPart]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


# --------------------------------------------------------------------------------------------------
# Resolution: what a schema cannot check


def _resolve(data: dict[str, Any], base: Path, problems: _Problems, overrides: tuple[str, ...]) -> Plan | None:
    """Check and resolve files, globs, metrics, names and options; ``None`` when something is wrong."""
    from irspec.engine import Options

    def local(p: str) -> Path:
        return Path(os.path.normpath(os.path.join(base, os.path.expanduser(p))))

    inputs: set[str] = set()

    qrels = None
    if isinstance(data.get("qrels"), str) and data["qrels"]:
        qrels = local(data["qrels"])
        _check_file(qrels, ("qrels",), "qrels", problems)
        inputs.add(os.path.abspath(qrels))

    log = None
    if isinstance(data.get("log"), str) and data["log"]:
        log = local(data["log"])
        _check_file(log, ("log",), "log", problems)
        inputs.add(os.path.abspath(log))

    metrics = _resolve_metrics(data.get("metrics"), problems)
    runs, names_complete = _resolve_runs(data.get("runs"), base, local, problems)
    inputs.update(os.path.abspath(r.path) for r in runs)
    if metrics:
        _check_inputs(data, metrics, problems)

    options = None
    raw_options = data.get("options", {})
    if isinstance(raw_options, dict):
        try:
            options = Options(
                relevance_level=_int(raw_options.get("relevance_level", 1)),
                depth=_int(raw_options.get("depth")),
                judged_only=raw_options.get("judged_only", False),
                missing_queries=raw_options.get("missing_queries", "zero"),
                collection_size=_int(raw_options.get("collection_size")),
            )
        except (IrspecError, TypeError, ValueError) as e:
            if not problems:  # the schema has already said what is wrong otherwise
                problems.add(("options",), str(e))

    compare = _resolve_compare(data, runs, names_complete, problems)
    outputs = _resolve_outputs(data.get("output"), local, inputs, compare, problems)

    if problems or (qrels is None and log is None) or metrics is None or options is None or outputs is None:
        return None
    return Plan(
        source=problems.source,
        qrels=qrels,
        runs=tuple(runs),
        metrics=tuple(metrics),
        options=options,
        compare=compare,
        outputs=tuple(outputs),
        overrides=overrides,
        log=log,
    )


def _check_inputs(data: dict[str, Any], metrics: list[Any], problems: _Problems) -> None:
    """Each metric's input is in the plan (qrels and runs, or the log), and each input has a metric."""
    has_runs = "qrels" in data or "runs" in data
    kinds = {m.definition.needs for m in metrics}
    for m in metrics:
        needs = m.definition.needs
        if needs == "run" and not has_runs:
            problems.add(("metrics",), f"{m} is computed from qrels and runs, and the plan has none (only a log)")
        elif needs == "log" and "log" not in data:
            problems.add(("metrics",), f"{m} is computed from an interaction log; give one with the log key")
        elif needs not in ("run", "log"):
            problems.add(("metrics",), f"{m} is computed from a {needs!r} input, which a plan cannot name")
    if "log" in data and "log" not in kinds:
        problems.add(("log",), "no metric of the plan is computed from the log (such as CTR, from irspec-online)")
    elif "log" in data:
        from irspec.plugins import get_registry

        try:
            get_registry().reader("log")
        except IrspecError as e:
            problems.add(("log",), str(e))
    if has_runs and "run" not in kinds:
        problems.add(("metrics",), "no metric of the plan is computed from the runs; drop qrels and runs, or add one")
    if "compare" in data and "runs" not in data and "log" in data:
        problems.add(("compare",), "comparing needs runs; a log is reported, never compared")


def _int(value: Any) -> Any:
    # the schema accepts 10.0 as an integer (JSON has one number type); the engine wants an int
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _check_file(path: Path, where: PlanPath, what: str, problems: _Problems) -> bool:
    if path.is_file():
        return True
    if path.is_dir():
        problems.add(where, f"{what} {str(path)!r} is a directory, not a file")
    else:
        problems.add(where, f"{what} file not found: {str(path)!r}")
    return False


def _resolve_metrics(raw: Any, problems: _Problems) -> list[Any] | None:
    from irspec.plugins import get_registry

    if isinstance(raw, str):
        items: list[tuple[PlanPath, str]] = [(("metrics",), raw)]
    elif isinstance(raw, list):
        items = [(("metrics", i), s) for i, s in enumerate(raw) if isinstance(s, str)]
    else:
        return None
    bound: list[Any] = []
    ok = True
    for where, text in items:
        if not text.strip():
            continue  # the schema reports empty strings
        try:
            found = get_registry().parse(text)
        except SpecError as e:
            problems.add(where, f"bad metric spec {text!r}: {e}")
            ok = False
            continue
        bound.extend(m for m in found if m not in bound)
    if ok and not bound and items and not problems:
        problems.add(("metrics",), "no metrics given")
        return None
    return bound if ok else None


def _run_name(path: str) -> str:
    """A run's name from its file: the stem, after dropping a ``.gz`` suffix."""
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    return Path(base).stem or base


def _has_magic(text: str) -> bool:
    return any(c in text for c in "*?[")


def _resolve_runs(raw: Any, base: Path, local: Any, problems: _Problems) -> tuple[list[PlanRun], bool]:
    """The plan's runs (globs expanded) and whether every name could be determined."""
    if not isinstance(raw, list):
        return [], False
    runs: list[PlanRun] = []
    complete = True
    first: dict[str, PlanRun] = {}

    def add(run: PlanRun, where: PlanPath, origin: str) -> None:
        if run.name in first:
            other = first[run.name]
            at = f" at line {other.line}" if other.line else ""
            problems.add(where, f"duplicate run name {run.name!r}{origin}; {other.entry}{at} already uses it")
        else:
            first[run.name] = run
        runs.append(run)

    for i, entry in enumerate(raw):
        where: PlanPath = ("runs", i)
        line = problems.line_of(where)
        if isinstance(entry, dict):
            name, path = entry.get("name"), entry.get("path")
            if not isinstance(name, str) or not name or not isinstance(path, str) or not path:
                complete = complete and isinstance(name, str) and bool(name)
                continue  # the schema reports it
            resolved = local(path)
            _check_file(resolved, where + ("path",), "run", problems)
            add(PlanRun(name, resolved, _path_text(where), line), where + ("name",), "")
        elif isinstance(entry, str) and entry:
            literal = local(entry)
            if _has_magic(entry) and not literal.exists():
                pattern = entry if os.path.isabs(os.path.expanduser(entry)) else os.path.join(glob.escape(str(base)), entry)
                matches = sorted(
                    p for p in glob.glob(os.path.expanduser(pattern), recursive=True) if os.path.isfile(p)
                )
                if not matches:
                    problems.add(where, f"glob {entry!r} matches no file (looked for {str(literal)!r})")
                    complete = False
                for m in matches:
                    p = Path(os.path.normpath(m))
                    origin = f" (from {str(p)!r}, matched by {entry!r})"
                    add(PlanRun(_run_name(m), p, _path_text(where), line), where, origin)
            else:
                _check_file(literal, where, "run", problems)
                add(PlanRun(_run_name(entry), literal, _path_text(where), line), where, f" (the stem of {entry!r})")
        else:
            complete = False
    return runs, complete


def _resolve_compare(data: dict[str, Any], runs: list[PlanRun], names_complete: bool, problems: _Problems) -> Compare | None:
    raw = data.get("compare")
    if "compare" not in data or not isinstance(raw, dict):
        return None
    defaults = Compare()
    test = raw.get("test", defaults.test)
    baseline = raw.get("baseline")
    names = [r.name for r in runs]
    if isinstance(baseline, str) and names_complete and baseline not in names:
        close = suggest(baseline, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; the runs are {', '.join(names)}"
        problems.add(("compare", "baseline"), f"baseline {baseline!r} is not a run of this plan{hint}")
    if names_complete and isinstance(data.get("runs"), list) and len(runs) < 2:
        problems.add(("compare",), f"comparing needs at least 2 runs; the plan has {len(runs)}")
    correction = raw.get("correction", "none" if test in _TUKEY_TESTS else defaults.correction)
    if test in _TUKEY_TESTS and correction != "none":
        problems.add(
            ("compare", "correction"),
            f"test {test} adjusts for all pairs of runs itself; drop correction {correction!r} (or give none)",
        )
    family = raw.get("family", defaults.family)
    if test in _TUKEY_TESTS and family != "per-metric":
        problems.add(
            ("compare", "family"), f"test {test} adjusts over the pairs of runs of each metric; family must be per-metric"
        )
    try:
        return Compare(
            baseline=baseline,
            test=test,
            permutations=_int(raw.get("permutations", defaults.permutations)),
            seed=_int(raw.get("seed", defaults.seed)),
            correction=correction,
            alpha=float(raw.get("alpha", defaults.alpha)),
            family=family,
        )
    except (TypeError, ValueError):
        return None  # the schema has reported the value


def _resolve_outputs(
    raw: Any, local: Any, inputs: set[str], compare: Compare | None, problems: _Problems
) -> list[Output] | None:
    if raw is None:
        return [Output("table")]
    if not isinstance(raw, list):
        return None
    outputs: list[Output] = []
    targets: dict[str, int] = {}
    for i, entry in enumerate(raw):
        where: PlanPath = ("output", i)
        if not isinstance(entry, dict) or not isinstance(entry.get("format"), str):
            continue
        fmt = entry["format"]
        path = None
        if isinstance(entry.get("path"), str) and entry["path"]:
            path = local(entry["path"])
            key = os.path.abspath(path)
            if key in targets:
                problems.add(where + ("path",), f"output[{targets[key]}] already writes {str(path)!r}")
            targets.setdefault(key, i)
            if key in inputs:
                problems.add(where + ("path",), f"{str(path)!r} is an input of this plan; it would be overwritten")
            elif fmt == "plots" and path.exists() and not path.is_dir():
                problems.add(where + ("path",), f"{str(path)!r} is a file; plots are written into a directory")
            elif fmt != "plots" and path.is_dir():
                problems.add(where + ("path",), f"{str(path)!r} is a directory")
        if fmt == "plots":
            import importlib.util

            if importlib.util.find_spec("matplotlib") is None:
                problems.add(where + ("format",), "plots need matplotlib: pip install 'irspec[plot]'")
        content = entry.get("content", "results")
        if content == "comparisons" and compare is None:
            problems.add(where + ("content",), "comparisons asked for, but the plan has no compare section")
        per_query = entry.get("per_query", fmt in ("json", "csv", "tsv"))
        decimals = _int(entry.get("decimals", 4))
        decimals = decimals if isinstance(decimals, int) and not isinstance(decimals, bool) else 4  # else reported
        outputs.append(Output(fmt, path, bool(per_query), content, decimals))
    return outputs


# --------------------------------------------------------------------------------------------------
# Running


def run_plan(plan: Plan) -> PlanReport:
    """Evaluate every run of ``plan`` (the qrels read once) and make the comparisons it asks for."""
    from irspec.engine import distinct_names

    results = []
    curves = None
    if plan.runs:
        from irspec import plots

        run_metrics = [m for m in plan.metrics if m.definition.needs == "run"]
        # plots draw precision-recall curves: their IPrec values come from the same pass over each run
        drawn = any(o.format in ("html", "plots") for o in plan.outputs)
        results = _evaluate_runs(plan, run_metrics + (list(plots.IPREC_SPECS) if drawn else []))
        # The plan names the runs; a runid inside the file does not. load_plan rejects two runs of one
        # name; a Plan built in Python is not checked, so its names are made distinct here as well.
        results = distinct_names([dataclasses.replace(res, run_name=r.name) for res, r in zip(results, plan.runs)])
        if drawn:
            curves = plots.precision_recall(results)
            k = len(run_metrics)
            results = [
                dataclasses.replace(res, metrics=res.metrics[:k], values=res.values[:, :k].copy(), _aggregate={})
                for res in results
            ]
    comparisons: list[Comparison] = []
    notes: list[str] = []
    if plan.compare is not None:
        comparisons, notes = compare_results(results, plan.compare)
    inputs = []
    if plan.log is not None:  # read by whichever plugin registers the "log" input reader
        from irspec.inputs import evaluate_input

        log_metrics = [m for m in plan.metrics if m.definition.needs == "log"]
        inputs.append(evaluate_input(str(plan.log), log_metrics, kind="log"))
    return PlanReport(plan, tuple(results), tuple(comparisons), tuple(notes), tuple(inputs), curves)


def _evaluate_runs(plan: Plan, metrics: list[Any]) -> list[Any]:
    """Every run of ``plan`` evaluated, the qrels read once; progress on a terminal, run by run."""
    from irspec.data import read_qrels
    from irspec.engine import evaluate_many
    from irspec.progress import Progress

    with Progress("reading qrels", detail=str(plan.qrels)) as progress:
        qrels = read_qrels(str(plan.qrels))
        progress.total = len(plan.runs)
        results = []
        for r in plan.runs:
            progress.update(label="evaluating runs", detail=r.name)
            results.extend(evaluate_many(qrels, [str(r.path)], metrics, options=plan.options))
            progress.advance()
    return results


def compare_results(results: Sequence[Any], compare: Compare) -> tuple[list[Comparison], list[str]]:
    """The comparisons ``compare`` asks for between ``results`` (one per run, same metrics), and notes.

    Per metric: every run against ``compare.baseline`` (the baseline as ``b``), or every pair of runs in
    order; or Tukey's HSD over all runs. Scores are paired by query id. The correction is applied over
    ``compare.family``.
    """
    from irspec import stats
    from irspec.progress import Progress

    names = [r.run_name for r in results]
    if len(results) < 2:
        raise EvaluationError(f"comparing needs at least 2 runs, got {len(results)}")
    if compare.baseline is not None and compare.baseline not in names:
        raise EvaluationError(f"baseline {compare.baseline!r} is not one of the runs: {', '.join(names)}")
    if compare.baseline is not None:
        base = names.index(compare.baseline)
        pairs = [(i, base) for i in range(len(results)) if i != base]
    else:
        pairs = [(i, j) for i in range(len(results)) for j in range(i + 1, len(results))]
    # A text-valued metric (relstring) has nothing to test.
    metrics = tuple(m for m in results[0].metrics if m.aggregate != "none")
    notes: list[str] = []
    raw: list[dict[str, Any]] = []

    steps = len(metrics) * (1 if compare.test in _TUKEY_TESTS else len(pairs))
    with Progress(f"comparing runs ({compare.test})", steps) as progress:
        if compare.test in _TUKEY_TESTS:
            for metric in metrics:
                raw.extend(_tukey_comparisons(results, metric, pairs, compare, notes))
                progress.advance()
            for c in raw:
                c["p_adjusted"] = c["p_value"]
                c["family_size"] = len(results) * (len(results) - 1) // 2
        else:
            told: set[tuple[int, int]] = set()
            for metric in metrics:
                for i, j in pairs:
                    x, y, left_out = _aligned(results[i], results[j], metric, notes, told, (i, j))
                    try:
                        r = stats.paired(
                            x, y, test=compare.test, permutations=compare.permutations, seed=compare.seed, alpha=compare.alpha
                        )
                    except EvaluationError as e:
                        raise EvaluationError(f"cannot compare {names[i]} with {names[j]} on {metric}: {e}") from None
                    raw.append(_from_paired(r, str(metric), names[i], names[j], x, y, left_out, compare))
                    progress.advance()
            if compare.family == "all":
                groups = [list(range(len(raw)))]
            else:
                by_metric: dict[str, list[int]] = {}
                for k, c in enumerate(raw):
                    by_metric.setdefault(c["metric"], []).append(k)
                groups = list(by_metric.values())
            for group in groups:
                adjusted = stats.adjust([raw[k]["p_value"] for k in group], method=compare.correction)
                for k, p in zip(group, adjusted):
                    raw[k]["p_adjusted"] = float(p)
                    raw[k]["family_size"] = len(group)
    out = []
    for c in raw:
        c["significant"] = c["p_adjusted"] <= compare.alpha
        out.append(Comparison(**c))
    return out, notes


def _aligned(
    ra: Any, rb: Any, metric: Any, notes: list[str], told: set[tuple[int, int]], key: tuple[int, int]
) -> tuple[Any, Any, int]:
    """Two runs' values of ``metric`` on the queries both have, matched by query id."""
    import numpy as np

    qa = np.asarray(ra.query_ids, dtype=str)
    qb = np.asarray(rb.query_ids, dtype=str)
    common, ia, ib = np.intersect1d(qa, qb, assume_unique=True, return_indices=True)
    x = ra.column(metric)[ia]
    y = rb.column(metric)[ib]
    one_sided = len(qa) + len(qb) - 2 * len(common)
    if one_sided and key not in told:
        told.add(key)
        notes.append(
            f"{ra.run_name} vs {rb.run_name}: compared on the {len(common)} queries both runs answer "
            f"({len(qa) - len(common)} only in {ra.run_name}, {len(qb) - len(common)} only in {rb.run_name}; "
            f"missing_queries: {ra.options.missing_queries})"
        )
    defined = np.isfinite(x) & np.isfinite(y)
    if not defined.all():
        notes.append(
            f"{metric}: {ra.run_name} vs {rb.run_name}: {int((~defined).sum())} queries where the metric is "
            "undefined for one run left out"
        )
        x, y = x[defined], y[defined]
    return x, y, int(len(qa) + len(qb) - len(common) - len(x))


def _from_paired(r: Any, metric: str, a: str, b: str, x: Any, y: Any, left_out: int, compare: Compare) -> dict[str, Any]:
    return {
        "metric": metric,
        "a": a,
        "b": b,
        "test": compare.test,
        "null": r.null,
        "n": r.n,
        "left_out": left_out,
        "mean_a": float(x.mean()),
        "mean_b": float(y.mean()),
        "mean_difference": r.mean_difference,
        "relative_change": r.relative_change,
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "confidence": r.confidence,
        "ci_method": r.ci_method,
        "effect_size": r.effect_size,
        "hedges_g": r.hedges_g,
        "wins": r.wins,
        "ties": r.ties,
        "losses": r.losses,
        "statistic": r.statistic,
        "df": r.df,
        "p_value": r.p_value,
        "alpha": compare.alpha,
        "correction": compare.correction,
        "family": compare.family,
        "permutations": r.permutations,
        "exact": r.exact,
        "seed": r.seed,
        "mc_se": r.mc_se,
    }


def _tukey_comparisons(
    results: Sequence[Any], metric: Any, pairs: list[tuple[int, int]], compare: Compare, notes: list[str]
) -> list[dict[str, Any]]:
    """Tukey HSD (parametric or randomised) over all runs on the queries every run has, for ``pairs``."""
    import numpy as np

    from irspec import stats

    names = [r.run_name for r in results]
    common = np.asarray(results[0].query_ids, dtype=str)
    for r in results[1:]:
        common = np.intersect1d(common, np.asarray(r.query_ids, dtype=str), assume_unique=True)
    rows = []
    for r in results:
        q = np.asarray(r.query_ids, dtype=str)
        order = np.argsort(q)
        pos = order[np.searchsorted(q, common, sorter=order)]
        rows.append(r.column(metric)[pos])
    matrix = np.vstack(rows)
    total = max(len(r.query_ids) for r in results)
    if len(common) < total and metric is results[0].metrics[0]:
        notes.append(
            f"{compare.test}: compared on the {len(common)} queries every run answers "
            f"(missing_queries: {results[0].options.missing_queries})"
        )
    defined = np.all(np.isfinite(matrix), axis=0)
    if not defined.all():
        notes.append(f"{metric}: {int((~defined).sum())} queries where the metric is undefined for some run left out")
        matrix = matrix[:, defined]
    try:
        found = stats.tukey(
            matrix, randomized=compare.test == "randomized-tukey", permutations=compare.permutations, seed=compare.seed
        )
    except EvaluationError as e:
        raise EvaluationError(f"cannot compare the runs on {metric}: {e}") from None
    by_pair = {(p.a, p.b): p for p in found}
    out = []
    for i, j in pairs:
        flip = (i, j) not in by_pair
        p = by_pair[(j, i)] if flip else by_pair[(i, j)]
        x, y = matrix[i], matrix[j]
        # effect sizes and wins/ties/losses of the same aligned queries; the t-test's p is not used
        d = stats.paired(x, y, test="t")
        diff = -p.mean_difference if flip else p.mean_difference
        if p.ci_low is not None and p.ci_high is not None:
            low, high = (-p.ci_high, -p.ci_low) if flip else (p.ci_low, p.ci_high)
            ci_method, confidence = "tukey", float(p.confidence)
        else:
            low, high, ci_method, confidence = d.ci_low, d.ci_high, "t (not adjusted)", d.confidence
        out.append(
            {
                "metric": str(metric),
                "a": names[i],
                "b": names[j],
                "test": compare.test,
                "null": "all runs have the same mean (studentized range over all pairs)",
                "n": int(matrix.shape[1]),
                "left_out": int(total - matrix.shape[1]),
                "mean_a": float(x.mean()),
                "mean_b": float(y.mean()),
                "mean_difference": float(diff),
                "relative_change": d.relative_change,
                "ci_low": low,
                "ci_high": high,
                "confidence": confidence,
                "ci_method": ci_method,
                "effect_size": d.effect_size,
                "hedges_g": d.hedges_g,
                "wins": d.wins,
                "ties": d.ties,
                "losses": d.losses,
                "statistic": p.statistic,
                "df": p.df,
                "p_value": p.p_value,
                "alpha": compare.alpha,
                "correction": p.method,
                "family": "all pairs of runs, per metric",
                "permutations": p.permutations,
                "exact": False,
                "seed": p.seed,
                "mc_se": p.mc_se,
            }
        )
    return out


# --------------------------------------------------------------------------------------------------
# Output


def render_outputs(report: PlanReport, *, stdout: IO[str] | None = None) -> list[tuple[Output, str | dict[str, bytes]]]:
    """Every output of the plan as ``(output, content)``, computed without writing anything: its text,
    or for ``plots`` the files of the directory as ``{file name: bytes}``."""
    stream = stdout if stdout is not None else sys.stdout
    return [(o, _render(report, o, _arrows(o, stream))) for o in report.plan.outputs]


def write_outputs(report: PlanReport, *, stdout: IO[str] | None = None) -> list[Path]:
    """Write every output of the plan, all or nothing; returns the files (and plot directories) written.

    All outputs are computed first (the plots drawn in memory), then written together by
    :func:`irspec.report.write_all_atomic`: each to a temporary file (or directory) beside its target,
    renamed into place only once every one is written, so an output that cannot be written (a path
    that is a directory, a denied permission) leaves no file of the plan behind and every previous
    file untouched. Outputs without a path go to ``stdout`` (default :data:`sys.stdout`) only after
    the files are in place.
    """
    from irspec.report import write_all_atomic

    stream = stdout if stdout is not None else sys.stdout
    texts = render_outputs(report, stdout=stream)
    files = [(output.path, text) for output, text in texts if output.path is not None]
    write_all_atomic(files)
    for output, text in texts:
        if output.path is None and isinstance(text, str):
            stream.write(text)
    stream.flush()
    return [path for path, _ in files]


def _arrows(output: Output, stream: IO[str]) -> tuple[str, str]:
    """The up/down marks; ASCII when the text goes to a terminal that cannot show the triangles."""
    if output.path is None:
        try:
            "▲▼".encode(getattr(stream, "encoding", None) or "utf-8")
        except (UnicodeEncodeError, LookupError):
            return "^", "v"
    return "▲", "▼"


def _render(report: PlanReport, output: Output, arrows: tuple[str, str]) -> str | dict[str, bytes]:
    # formatting lives in irspec.report (and irspec.plots); this picks what each output gets
    from irspec import report as fmt

    runs = list(report.results)
    results = runs + list(report.inputs)  # a log's result after the runs
    compare, comparisons, notes = report.plan.compare, report.comparisons, report.notes
    marks = {"comparisons": comparisons, "compare": compare, "notes": notes, "decimals": output.decimals}
    if output.content == "comparisons":
        if output.format == "json":
            doc = {**_comparisons_doc(report), "warnings": list(report.warnings), "provenance": _provenance(report)}
            return json.dumps(doc, indent=2, allow_nan=False) + "\n"
        if output.format in ("csv", "tsv"):
            return fmt.comparisons_delimited(comparisons, sep="," if output.format == "csv" else "\t")
        if output.format == "latex":
            return fmt.to_latex(runs, content="comparisons", **marks)
        if output.format == "markdown":
            return fmt.to_markdown(runs, content="comparisons", **marks)
        return fmt.comparisons_table(runs, comparisons, compare, notes=notes, decimals=output.decimals)
    if output.format == "json":
        extra = {**_comparisons_doc(report), "provenance": _provenance(report)}
        return fmt.to_json(results, per_query=output.per_query, extra=extra)
    if output.format == "table":
        if not comparisons:
            return fmt.to_table(results, per_query=output.per_query, decimals=output.decimals)
        logs = "\n" + fmt.to_table(list(report.inputs), per_query=output.per_query) if report.inputs else ""
        table = fmt.marked_table(
            runs, comparisons, compare, notes=notes, per_query=output.per_query, arrows=arrows, decimals=output.decimals
        )
        return table + logs
    if output.format == "latex":
        return fmt.to_latex(results, **marks)
    if output.format == "markdown":
        return fmt.to_markdown(results, **marks)
    if output.format == "html":
        plots, note = _plots(report, required=False)
        title = f"irspec report: {os.path.basename(report.plan.source)}"
        return fmt.to_html(results, title=title, plots=plots, plots_note=note, provenance=_provenance(report), **marks)
    if output.format == "plots":
        from irspec.plots import render_files

        plots, _ = _plots(report, required=True)
        return render_files(plots)
    return fmt.format_results(results, output.format, per_query=output.per_query)


def _comparisons_doc(report: PlanReport) -> dict[str, Any]:
    plan = report.plan
    return {
        "plan": plan.source,
        "overrides": list(plan.overrides),
        "compare": plan.compare.as_dict() if plan.compare else None,
        "comparisons": [c.as_dict() for c in report.comparisons],
        "notes": list(report.notes),
    }


# The html and plots outputs of one report share its plots, and the json and html its provenance
# (hashing the inputs once): the last report's are kept, nothing more.
_SHARED: dict[str, Any] = {}


def _shared(report: PlanReport, key: str, make: Any) -> Any:
    if _SHARED.get("report") is not report:
        _SHARED.clear()
        _SHARED["report"] = report
    if key not in _SHARED:
        _SHARED[key] = make()
    return _SHARED[key]


def _provenance(report: PlanReport) -> dict[str, Any]:
    """Versions, specs, options, seeds and the SHA-256 of the plan and every input file."""
    from irspec.report import provenance

    def make() -> dict[str, Any]:
        plan = report.plan
        inputs: list[tuple[str, str | None, Any]] = []
        if plan.qrels is not None:
            inputs.append(("qrels", None, plan.qrels))
        inputs.extend(("run", r.name, r.path) for r in plan.runs)
        if getattr(plan, "log", None) is not None:
            inputs.append(("log", None, plan.log))
        results = list(report.results) + list(report.inputs)
        return provenance(
            results, inputs, options=plan.options, compare=plan.compare, plan=plan.source, overrides=plan.overrides
        )

    return _shared(report, "provenance", make)


def _plots(report: PlanReport, *, required: bool) -> tuple[list[Any], str | None]:
    """The report's plots (drawn once), or ``[]`` and why not; raises when ``required`` and impossible."""

    def make() -> tuple[list[Any], str | None]:
        from irspec import plots

        try:
            plots.require_matplotlib()
        except IrspecError as e:
            return [], str(e)
        plan = report.plan
        runs = list(report.results)
        if not runs:
            return [], "the plan has no runs to plot"
        from irspec.progress import Progress

        with Progress("drawing plots") as progress:
            baseline = plan.compare.baseline if plan.compare is not None else None
            # PNG only for a plots directory; the html output embeds the SVG
            formats = ("svg", "png") if any(o.format == "plots" for o in plan.outputs) else ("svg",)
            return plots.render(runs, curves=report.curves, baseline=baseline, formats=formats, progress=progress), None

    found, why = _shared(report, "plots", make)
    if required and why is not None:
        raise IrspecError(why)
    return found, None if why is None else f"No plots: {why}."
