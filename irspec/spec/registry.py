"""The registry that holds metric definitions by name, and binding of parsed specs to them.

Binding is the second phase after :mod:`irspec.spec`: it resolves a name (case-insensitive, through
aliases and trec_eval's ``name.v1,v2`` / ``name_v`` forms), matches arguments to declared parameters,
checks their types and ranges, and drops defaults (but a default ``@`` value and a parameter declared
``shown``: :meth:`MetricDef.shown_at_default`), giving an immutable :class:`Metric` whose ``str`` is the
one canonical text of the spec. The definitions themselves (:class:`Param`, :class:`MetricDef`,
:class:`Metric`, ...) are plain values declared in :mod:`irspec.spec.definitions` and re-exported here, where
plugins import them.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import replace
from typing import Any

from irspec.errors import (
    EvaluationError,
    ParameterError,
    RegistryError,
    SpecError,
    UnknownMetricError,
    quote,
    shorten,
    suggest,
)
from irspec.spec import syntax
from irspec.spec.definitions import (
    MAX_COUNT,
    MAX_GAIN,
    NONNEGATIVE,
    RESERVED_INPUTS,
    UNIT,
    Aggregate,
    Alias,
    Better,
    Command,
    Fusion,
    FusionDef,
    GainMap,
    InputReader,
    InputTable,
    MethodDef,
    Metric,
    MetricDef,
    MetricGroup,
    Param,
    ParamKind,
    PlanSection,
    Redirect,
    each,
    echoes_text,
)
from irspec.spec.definitions import ROLES as COMMAND_ROLES

__all__ = [
    "DATASET_MEASURES",
    "JUDGED_ONLY",
    "MAX_COUNT",
    "MAX_GAIN",
    "NONNEGATIVE",
    "REFUSED_SPELLINGS",
    "SHIPPED_PLUGIN_NAMES",
    "SHIPPED_PLUGIN_SECTIONS",
    "UNIT",
    "Aggregate",
    "Alias",
    "Better",
    "Fusion",
    "FusionDef",
    "GainMap",
    "InputReader",
    "InputTable",
    "Metric",
    "MetricDef",
    "MetricGroup",
    "Param",
    "ParamKind",
    "PlanSection",
    "Redirect",
    "Register",
    "Registry",
    "each",
]

JUDGED_ONLY = Param(
    "judged_only",
    "bool",
    False,
    "true: trec_eval's -J for this metric alone, unjudged and negative-label documents leaving the ranking "
    "first (false, the default, leaves the evaluation's own -J as it is)",
)
"""The parameter every metric over runs takes, declared or not (ir_measures' ``judged_only=True``): the
metric is computed as under the evaluation option ``judged_only`` (trec_eval's ``-J``), the other
metrics of the evaluation are not. The engine builds that ranking once for all such metrics."""

SHIPPED_PLUGIN_NAMES: Mapping[str, tuple[str, ...]] = {
    "irspec-usermodel": (
        "ERR", "expected_reciprocal_rank", "RBP", "rank_biased_precision", "NCG", "normalised_cumulative_gain",
        "normalized_cumulative_gain", "BPM", "INST", "INSQ", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG",
    ),
    "irspec-online": (
        "CTR", "click_through_rate", "clickthrough_rate", "ZRR", "zero_result_rate", "Abandonment",
        "session_abandonment_rate", "abandonment_rate", "SessionSuccess", "session_success_rate", "QueriesPer",
        "queries_per_time_unit", "query_rate", "Interleaving", "interleaved_preference", "IPS",
        "inverse_propensity_scoring", "ClippedIPS", "clipped_ips", "cips", "SNIPS", "self_normalised_ips",
        "self_normalized_ips",
    ),
    "irspec-diversity": (
        "alpha_nDCG", "α_nDCG", "alpha-nDCG", "alpha_DCG", "α_DCG", "alpha-DCG", "ERR_IA", "ERR-IA", "nERR_IA",
        "nERR-IA", "NRBP", "nNRBP", "P_IA", "P-IA", "StRecall", "strec", "S_recall", "AP_IA", "MAP_IA", "MAP-IA",
    ),
}  # fmt: skip
"""The names and aliases each plugin shipped in irspec's ``plugins/`` registers, by distribution: a name
that no loaded plugin answers is then "unknown, from irspec-online, which is not loaded" rather than
only unknown. Kept equal to the plugins' registrations by ``tests/test_registry.py``."""

SHIPPED_PLUGIN_SECTIONS: Mapping[str, tuple[str, ...]] = {"irspec-online": ("ab", "online")}
"""The plan sections (:class:`PlanSection`) each plugin shipped in irspec's ``plugins/`` registers, by
distribution: a plan with ``ab:`` and no irspec-online loaded is then told which plugin the key comes
from. Kept equal to the plugins' registrations by ``tests/test_registry.py``."""

REFUSED_SPELLINGS: Mapping[str, str] = {
    "hits": "ranx's hits@k is the number of relevant documents in the top k, while link prediction's Hits@k "
    "(and a hit rate) is whether there is one, so either reading would change the other's meaning: write "
    "Success@k for the latter, and P@k for ranx's count divided by k",
    "trec:rbp": "trec_eval's rbp (p = 0.9, gains scaled to [0, 1]) reads uninitialised memory, so irspec does "
    "not compute it, and the irspec-usermodel plugin's RBP has p = 0.8 by default: write RBP(p=0.9) "
    "(binary at the relevance level; max_grade=G for graded gains) for Moffat & Zobel's RBP at trec_eval's p",
}
"""Spellings that mean one thing in one tool and another elsewhere, refused with what each means and what
to write, rather than read one way in silence (unless a plugin registers the name: its author chose).
``trec:NAME`` is NAME on trec_eval's command line only (``-m``, ``trec=True``), where it names trec_eval's
measure; elsewhere NAME is read as the language reads it (``rbp`` is RBP, whose text shows its p)."""


def _refuse(raw: str, names: Iterable[str]) -> None:
    """Raise :class:`SpecError` when ``raw``, or a name it was read as (``hits`` of ``hits.5``), is one of
    :data:`REFUSED_SPELLINGS`."""
    for name in names:
        reason = REFUSED_SPELLINGS.get(name.lower())
        if reason is not None:
            raise SpecError(f"{shorten(raw)!r} is not read: {reason}")


_SHIPPED_BY_NAME = {name.lower(): dist for dist, names in SHIPPED_PLUGIN_NAMES.items() for name in names}


def _unknown(raw: str, names: Iterable[str], bases: Iterable[str] = ()) -> UnknownMetricError:
    """The error for a name no registered metric answers: with the shipped plugin that registers it
    (``raw`` or one of the ``bases`` it was read as, ``alpha_nDCG`` of ``alpha_nDCG.20``), else with the
    closest registered names."""
    for name in (raw, *bases):
        plugin = _SHIPPED_BY_NAME.get(name.lower())
        if plugin is not None:
            return UnknownMetricError(raw, plugin=plugin)
    return UnknownMetricError(raw, suggest(raw.split(".")[0], names))


DATASET_MEASURES = "irds-official"
"""The spec name that stands for the official measures of an ir_datasets dataset. Only the dataset knows
them, so it means something only where qrels named ``irds:<id>`` are known (:mod:`irspec.data.datasets`
passes them to :meth:`Registry.parse` as ``groups``); alone, the registry refuses it and says why."""


class Register:
    """The callback handed to the hooks: ``register(definition, aliases=...)``, ``register(group)``,
    ``register(reader)``.

    Collects what one plugin registers; the :class:`Registry` checks names across plugins.
    """

    def __init__(self, registry: Registry, plugin: str) -> None:
        self._registry = registry
        self._plugin = plugin

    def __call__(
        self,
        item: MetricDef | MetricGroup | InputReader | PlanSection | FusionDef | MethodDef | Command,
        aliases: Iterable[str | Alias] = (),
    ) -> None:
        """Register a metric definition with its aliases, a group of specs, an input reader, a plan section,
        a fusion method, an interleaving method or a click model with its aliases, or a command."""
        if isinstance(item, FusionDef):
            self._registry._add_fusion(item, tuple(aliases), self._plugin)
            return
        if isinstance(item, MethodDef):
            self._registry._add_method(item, tuple(aliases), self._plugin)
            return
        if isinstance(item, Command):
            if aliases:
                raise RegistryError(f"plugin {self._plugin!r}: command {item.name!r} takes no aliases")
            self._registry._add_command(item, self._plugin)
            return
        if isinstance(item, (InputReader, PlanSection)):
            what = "input reader" if isinstance(item, InputReader) else "plan section"
            if aliases:
                raise RegistryError(f"plugin {self._plugin!r}: {what} {item.name!r} takes no aliases")
            if isinstance(item, InputReader):
                self._registry._add_reader(item, self._plugin)
            else:
                self._registry._add_section(item, self._plugin)
            return
        self._registry._add(item, tuple(aliases), self._plugin)


class Distributions(MutableMapping[str, str]):
    """Plugin name -> ``"distribution version"``, each value given as text or as the
    :class:`importlib.metadata.Distribution` it is read from when first asked for.

    Reading a distribution's name and version parses its metadata file (~0.7 ms a plugin); only
    ``irspec plugins`` and ``irspec metrics`` show them, so an evaluation never pays it (issue 23).
    """

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def merge(self, other: Mapping[str, Any]) -> None:
        """Add ``other``'s entries, without reading the metadata of those not read yet."""
        self._values.update(other._values if isinstance(other, Distributions) else other)

    def __getitem__(self, name: str) -> str:
        value = self._values[name]
        if not isinstance(value, str):
            value = self._values[name] = f"{value.name} {value.version}"
        return value

    def __setitem__(self, name: str, value: Any) -> None:
        self._values[name] = value

    def __delitem__(self, name: str) -> None:
        del self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class _Entry:
    """A registered name: what it names, the alias it is (if one), and the plugin that registered it."""

    # a plain class: a dataclass compiles three methods when the module loads (~0.4 ms of every command)
    __slots__ = ("alias", "definition", "plugin")

    def __init__(self, definition: MetricDef | MetricGroup, alias: Alias | None, plugin: str) -> None:
        self.definition = definition
        self.alias = alias  # None: the canonical name itself
        self.plugin = plugin


class Registry:
    """Every registered metric, alias and group, keyed case-insensitively.

    Build one with :func:`irspec.spec.plugins.get_registry` (which runs the plugin hooks); tests may build
    one from a fresh plugin manager.
    """

    def __init__(self) -> None:
        self._names: dict[str, _Entry] = {}
        self.definitions: dict[str, MetricDef] = {}
        self.groups: dict[str, MetricGroup] = {}
        self.aliases: dict[str, list[str | Alias]] = {}
        self.readers: dict[str, InputReader] = {}
        self.sections: dict[str, PlanSection] = {}  # plan sections by key, in registration order
        # plugin name -> "distribution version", when installed (read lazily: spec.plugins.Distributions)
        self.distributions: Mapping[str, str] = {}
        # Fusion methods have names of their own ("max" fuses, it is no metric): a second table.
        self.fusions: dict[str, FusionDef] = {}
        self.fusion_names: dict[str, tuple[FusionDef, Alias | None]] = {}
        # Interleaving methods and click models: a table of names per kind (MethodDef.kind), each its own.
        self.methods: dict[str, dict[str, MethodDef]] = {}
        self.method_names: dict[str, dict[str, tuple[MethodDef, Alias | None]]] = {}
        self.commands: dict[str, Command] = {}  # subcommands plugins add to the command line
        # parse()'s answers by text: a notebook or a loop evaluates with the same specs again and again
        # (~1 ms of each irspec.evaluate of "official" on a few queries); emptied by every registration
        self._parsed: dict[tuple[tuple[str, ...], bool], tuple[Metric, ...]] = {}
        # parse_fusion()'s answers by text and search, likewise (a fuse in a loop; emptied as fusion
        # methods are registered)
        self.fusions_parsed: dict[tuple[str, bool], Fusion] = {}

    # --- registration -------------------------------------------------------------------------
    def _claim(self, name: str, entry: _Entry) -> None:
        key = name.lower()
        if key in self._names:
            other = self._names[key]
            raise RegistryError(
                f"plugin {entry.plugin!r} registers {name!r}, which plugin {other.plugin!r} "
                f"already registered (for {other.definition.name!r})"
            )
        self._names[key] = entry
        self._parsed.clear()

    def _add(self, item: MetricDef | MetricGroup, aliases: tuple[str | Alias, ...], plugin: str) -> None:
        if isinstance(item, MetricGroup):
            item = MetricGroup(item.name, item.specs, item.summary, plugin)
            self._claim(item.name, _Entry(item, None, plugin))
            self.groups[item.name] = item
            return
        if not isinstance(item, MetricDef):
            raise RegistryError(
                f"plugin {plugin!r} registered {item!r}, which is not a MetricDef or MetricGroup"
            )
        if item.compute is None and item.per_query is None:
            raise RegistryError(f"plugin {plugin!r}: metric {item.name!r} has neither compute nor per_query")
        if not isinstance(item.needs, str) or not item.needs:
            raise RegistryError(
                f"plugin {plugin!r}: metric {item.name!r} needs {item.needs!r}, not an input name"
            )
        if item.needs.lower() == "qrels":
            raise RegistryError(
                f"plugin {plugin!r}: metric {item.name!r} needs 'qrels'; a metric over qrels and runs needs 'run'"
            )
        if not callable(item.better) and item.better not in ("higher", "lower", "neither"):
            raise RegistryError(
                f"plugin {plugin!r}: metric {item.name!r} has better={item.better!r}; expected 'higher', 'lower' "
                "or 'neither' (or a function of the bound metric giving one)"
            )
        if item.needs != "run" and item.compute is None:
            raise RegistryError(
                f"plugin {plugin!r}: metric {item.name!r} needs a {item.needs!r} input, so it must give compute(data, "
                "metric); the per-query form is for metrics over runs"
            )
        for name in (item.at, item.positional):
            if name is not None and name not in item.param_names:
                raise RegistryError(
                    f"plugin {plugin!r}: metric {item.name!r} names unknown parameter {name!r}"
                )
        for r in item.redirects:
            if not isinstance(r, Redirect) or r.keyword in item.param_names:
                raise RegistryError(
                    f"plugin {plugin!r}: metric {item.name!r}: redirect {r!r} must be a Redirect on a keyword "
                    "that is not one of the metric's parameters"
                )
        defn = _with_plugin(item, plugin)
        self._claim(defn.name, _Entry(defn, None, plugin))
        for a in aliases:
            alias = a if isinstance(a, Alias) else Alias(a)
            self._claim(alias.name, _Entry(defn, alias, plugin))
        self.definitions[defn.name] = defn
        self.aliases[defn.name] = list(aliases)

    def _add_fusion(self, item: FusionDef, aliases: tuple[str | Alias, ...], plugin: str) -> None:
        if not (callable(item.compute) or (isinstance(item.compute, str) and ":" in item.compute)):
            raise RegistryError(
                f"plugin {plugin!r}: fusion method {item.name!r}: compute must be a function or a "
                "'module:function' string"
            )
        defn = replace(item, plugin=plugin)
        for alias in (None, *(a if isinstance(a, Alias) else Alias(a) for a in aliases)):
            name = defn.name if alias is None else alias.name
            other = self.fusion_names.get(name.lower())
            if other is not None:
                raise RegistryError(
                    f"plugin {plugin!r} registers the fusion method {name!r}, which plugin "
                    f"{other[0].plugin!r} already registered (for {other[0].name!r})"
                )
            self.fusion_names[name.lower()] = (defn, alias)
        self.fusions[defn.name] = defn
        self.fusions_parsed.clear()

    def _add_method(self, item: MethodDef, aliases: tuple[str | Alias, ...], plugin: str) -> None:
        what = f"{item.kind} {item.name!r}"
        if not (callable(item.compute) or (isinstance(item.compute, str) and ":" in item.compute)):
            raise RegistryError(
                f"plugin {plugin!r}: {what}: compute must be a function, a class or a 'module:attribute' string"
            )
        if item.positional is not None and item.positional not in item.param_names:
            raise RegistryError(f"plugin {plugin!r}: {what} names unknown parameter {item.positional!r}")
        defn = replace(item, plugin=plugin)
        names = self.method_names.setdefault(item.kind, {})
        for alias in (None, *(a if isinstance(a, Alias) else Alias(a) for a in aliases)):
            name = defn.name if alias is None else alias.name
            other = names.get(name.lower())
            if other is not None and other[0] is defn:
                continue  # an alias that is the name in another case ("team-draft" beside "Team-Draft")
            if other is not None:
                raise RegistryError(
                    f"plugin {plugin!r} registers the {item.kind} {name!r}, which plugin "
                    f"{other[0].plugin!r} already registered (for {other[0].name!r})"
                )
            names[name.lower()] = (defn, alias)
        self.methods.setdefault(item.kind, {})[defn.name] = defn

    def _add_command(self, command: Command, plugin: str) -> None:
        if not isinstance(command.name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*", command.name):
            raise RegistryError(f"plugin {plugin!r}: command name {command.name!r} is not a lower-case word")
        for part in ("declare", "run"):
            value = getattr(command, part)
            if not (callable(value) or (isinstance(value, str) and ":" in value)):
                raise RegistryError(
                    f"plugin {plugin!r}: command {command.name!r}: {part} must be a function or a "
                    "'module:function' string"
                )
        bad = sorted(dest for dest, role in command.roles.items() if role not in COMMAND_ROLES)
        if bad:
            raise RegistryError(
                f"plugin {plugin!r}: command {command.name!r}: the role of {bad[0]!r} is "
                f"{command.roles[bad[0]]!r}, not one of {', '.join(COMMAND_ROLES)}"
            )
        if command.name in self.commands:
            raise RegistryError(
                f"plugin {plugin!r} registers the command {command.name!r}, which plugin "
                f"{self.commands[command.name].plugin!r} already registered"
            )
        self.commands[command.name] = replace(command, roles=dict(command.roles), plugin=plugin)

    def _add_reader(self, reader: InputReader, plugin: str) -> None:
        if not isinstance(reader.name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", reader.name):
            raise RegistryError(f"plugin {plugin!r}: input reader name {reader.name!r} is not a plain word")
        if not (callable(reader.read) or (isinstance(reader.read, str) and ":" in reader.read)):
            raise RegistryError(
                f"plugin {plugin!r}: input reader {reader.name!r}: read must be a function or a 'module:function' string"
            )
        if reader.name.lower() in RESERVED_INPUTS:
            raise RegistryError(
                f"plugin {plugin!r} registers the input reader {reader.name!r}, which irspec itself reads "
                "(qrels and runs)"
            )
        for other in self.readers.values():
            if other.name.lower() == reader.name.lower():
                raise RegistryError(
                    f"plugin {plugin!r} registers the input reader {reader.name!r}, which plugin {other.plugin!r} "
                    "already registered"
                )

        reader = replace(reader, suffixes=tuple(reader.suffixes), plugin=plugin)
        self.readers[reader.name] = reader

    def _add_section(self, section: PlanSection, plugin: str) -> None:
        name = section.name
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise RegistryError(f"plugin {plugin!r}: plan section name {name!r} is not a Python identifier")
        if not isinstance(section.schema, Mapping):
            raise RegistryError(
                f"plugin {plugin!r}: plan section {name!r}: schema must be a mapping (a JSON Schema)"
            )
        if not any(r.name == section.reader for r in self.readers.values()):
            known = ", ".join(sorted(self.readers)) or "none"
            raise RegistryError(
                f"plugin {plugin!r}: plan section {name!r} is for the input reader {section.reader!r}, which no "
                f"plugin registers (registered input readers: {known})"
            )
        if name in self.sections:
            raise RegistryError(
                f"plugin {plugin!r} registers the plan section {name!r}, which plugin "
                f"{self.sections[name].plugin!r} already registered"
            )
        self.sections[name] = replace(section, plugin=plugin)

    def reader(self, name: str) -> InputReader:
        """The input reader registered as ``name`` (any case); :class:`EvaluationError` naming the
        registered ones when there is none."""
        for r in self.readers.values():
            if r.name.lower() == name.lower():
                return r
        known = ", ".join(sorted(self.readers)) or "none"
        raise EvaluationError(
            f"no installed plugin reads {name!r} inputs (registered input readers: {known}); "
            "is the plugin that provides it installed and allowed by IRSPEC_LOAD_PLUGINS?"
        )

    # --- lookup -------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every name and alias that resolves, as registered (for suggestions)."""
        out = []
        for entry in self._names.values():
            out.append(entry.alias.name if entry.alias else entry.definition.name)
        return out

    def get(self, name: str) -> MetricDef:
        """The definition that ``name`` (canonical or alias, any case) names."""
        entry = self._names.get(name.lower())
        if entry is None or isinstance(entry.definition, MetricGroup):
            if entry is None:
                _refuse(name, [name])
            raise _unknown(name, self.names())
        return entry.definition

    def _resolve(self, raw: str) -> tuple[_Entry, list[dict[str, Any]] | None, str | None]:
        """Find the entry for a NAME token: (entry, the dotted suffix's parameter dicts, the name
        trec_eval prints for it when it prints the suffix as written)."""
        entry = self._names.get(raw.lower())
        if entry is not None and not (entry.alias and entry.alias.dotted_required):
            return entry, None, None
        tried: list[str] = []
        for base, suffix in _dotted_candidates(raw):
            tried.append(base)
            entry = self._names.get(base.lower())
            reader = None
            if entry is not None and isinstance(entry.definition, MetricDef):
                if entry.alias is not None:
                    reader = entry.alias.dotted
                else:
                    d = entry.definition
                    reader = d.dotted or (each(d.at) if d.at else None)
            if reader is not None and entry is not None:  # (a reader comes from an entry)
                values = suffix.split(",") if suffix else []
                if not values or any(v == "" for v in values):
                    raise ParameterError(entry.definition.name, None, f"{raw!r}: empty value after {base!r}")
                echoed = f"{base}_{suffix}" if echoes_text(reader) else None
                try:
                    return entry, reader(values), echoed
                except (ValueError, TypeError, OverflowError) as e:
                    raise ParameterError(
                        entry.definition.name, None, f"cannot read the values in {raw!r}: {e}"
                    ) from None
        if raw.lower() == DATASET_MEASURES:
            raise SpecError(
                f"{raw!r} stands for the official measures of an ir_datasets dataset, so it needs qrels named "
                f"irds:<dataset id> (as in: irspec eval irds:msmarco-passage/trec-dl-2019/judged run.txt -m {raw})"
            )
        _refuse(raw, [raw, *tried])
        raise _unknown(raw, self.names(), tried)

    # --- binding ------------------------------------------------------------------------------
    def bind(self, node: syntax.SpecNode, _depth: int = 0) -> list[Metric]:
        """Bind one syntax node to metrics (several for ``P.5,10`` or a group such as ``official``)."""
        entry, dotted, echoed = self._resolve(node.name)
        if isinstance(entry.definition, MetricGroup):
            _check_group_node(node)
            if _depth > 8:
                raise RegistryError(f"group {node.name!r} nests too deeply")
            out: list[Metric] = []
            for text in entry.definition.specs:
                for child in syntax.parse_syntax(text):
                    out.extend(self.bind(child, _depth + 1))
            return _unique(out)
        defn, node = self._redirect(entry.definition, node)
        if entry.alias is not None and entry.alias.keywords:
            node = _convert_keywords(defn, entry.alias, node)
        fixed = dict(entry.alias.fixed) if entry.alias else {}
        variants = dotted if dotted is not None else [{}]
        bound = [self._bind_one(defn, node, {**fixed, **v}) for v in variants]
        return [replace(m, trec_text=echoed) for m in bound] if echoed else bound

    def _redirect(self, defn: MetricDef, node: syntax.SpecNode) -> tuple[MetricDef, syntax.SpecNode]:
        """The metric a :class:`Redirect` keyword of ``node`` names (``SetP(relative=true)`` is ``relP``),
        with the node's arguments for it; ``defn`` and ``node`` unchanged when no redirect applies."""
        for r in defn.redirects:
            given = [v for k, v in node.kwargs if k == r.keyword]
            if not given:
                continue
            if len(given) > 1:
                raise ParameterError(defn.name, r.keyword, "given twice")
            kwargs = node.kwargs
            if r.when is not None:
                if _coerce(defn, Param(r.keyword, "bool"), given[0]) != r.when:
                    continue
                kwargs = tuple((k, v) for k, v in node.kwargs if k != r.keyword)
            target = self.definitions.get(r.target)
            if target is None:
                raise RegistryError(
                    f"metric {defn.name!r} reads {r.keyword}= as metric {r.target!r}, which no plugin registers"
                )
            return target, replace(node, kwargs=kwargs)
        return defn, node

    def _bind_one(self, defn: MetricDef, node: syntax.SpecNode, preset: dict[str, Any]) -> Metric:
        given: dict[str, Any] = {}
        typed: dict[str, str] = {}  # what the user wrote that set each parameter, for "given twice"
        # preset values come from the alias (already typed) or trec_eval's dotted suffix (strings).
        for k, v in preset.items():
            given[k] = ("preset", v)
            typed[k] = f"the name {shorten(node.name)!r}"

        def put(name: str, value: Any, written: str) -> None:
            if name not in defn.param_names:
                raise ParameterError(
                    defn.name, name, f"no such parameter; {defn.name} takes {_names_text(defn.param_names)}"
                )
            if name in given:
                raise ParameterError(defn.name, name, f"given twice ({typed[name]} and {written})")
            given[name] = ("argument", value)
            typed[name] = written

        if len(node.args) > 1:
            raise ParameterError(
                defn.name, None, "takes at most one positional argument; name the others (key=value)"
            )
        if node.args:
            if defn.positional is None:
                raise ParameterError(
                    defn.name,
                    None,
                    f"takes no positional argument; use key=value with {_names_text(defn.param_names)}",
                )
            put(defn.positional, node.args[0], "a positional argument")
        for k, v in node.kwargs:
            written = f"{k}="
            # ir_measures names the @ value cutoff= on every measure (P(cutoff=10) is P@10)
            if k == "cutoff" and "cutoff" not in defn.param_names and defn.at is not None:
                k = defn.at
            put(k, v, written)
        if node.cutoff is not None:
            if defn.at is None:
                raise ParameterError(defn.name, None, "takes no @ value")
            put(defn.at, node.cutoff, "@")

        params: list[tuple[str, Any]] = []
        for p in defn.params:
            shown = defn.shown_at_default(p)
            if p.name not in given:
                if shown:  # so that alpha_nDCG and alpha_nDCG@20 are one metric, printed alpha_nDCG@20
                    params.append((p.name, p.default))
                continue
            how, raw = given[p.name]
            value = _coerce_preset(defn, p, raw) if how == "preset" else _coerce(defn, p, raw)
            # Defaults are dropped so that "P(rel=None)" never differs from "P"; numbers compare by
            # value, so F(beta=1) and F(beta=1.0) are both plain F.
            if value != p.default or shown:
                params.append((p.name, value))
        missing = [p.name for p in defn.params if p.required and p.name not in given]
        if missing:
            how = "@" if missing[0] == defn.at else f"{missing[0]}="
            raise ParameterError(
                defn.name, missing[0], f"is required ({how}...: {defn.param(missing[0]).describe_range()})"
            )
        params.sort()
        metric = Metric(defn.name, tuple(params), defn)
        _check_combination(metric)
        return metric

    def parse(
        self,
        text: str | Iterable[str],
        *,
        trec: bool = False,
        groups: Mapping[str, Callable[[], Sequence[str]]] | None = None,
    ) -> list[Metric]:
        """Parse and bind one text or several texts into a flat list of metrics (duplicates removed).

        ``groups`` names lists of specs known only to this call, each computed when a text names it
        (``irds-official``: the measures of the dataset whose qrels are read, see
        :mod:`irspec.data.datasets`); they are read as the language reads them, as ``official`` is.

        With ``trec=True`` (trec_eval's ``-m``), a bare trec_eval measure name means trec_eval's default
        parameters: ``P`` is ``P.5,10,15,20,30,100,200,500,1000`` there, where the language reads ``P``
        as the precision of the whole list. Those defaults are groups named ``trec:NAME``. And as in
        trec_eval, the first parameter list given for a measure is the only one: ``P.5`` with ``P.10``
        or ``P`` or ``all_trec`` gives P_5 alone.
        """
        texts = (text,) if isinstance(text, str) else _texts(text)
        # kept by their text: short texts alone, so that a huge one is not held on to
        kept = not groups and all(type(t) is str for t in texts) and sum(map(len, texts)) <= _PARSED_TEXT
        known = (texts, trec) if kept else None
        if known is not None and known in self._parsed:
            return list(self._parsed[known])
        extra = {name.lower(): specs for name, specs in (groups or {}).items()}
        out: list[tuple[Metric, int | None]] = []  # each metric with the node that gave it parameters
        node_id = 0
        for t in texts:
            for node in syntax.parse_syntax(t):
                node_id += 1
                try:
                    out.extend(self._parse_node(node, trec, node_id, extra))
                except SpecError as e:
                    e.args = (
                        f"{e.args[0]} (in {shorten(t[node.start : node.end])!r} at column {node.start + 1})",
                    )
                    raise
        # trec_eval keeps the first parameter list of each measure (-m relstring.20), which replaces
        # its defaults, even those that a set such as all_trec brings in, and any later list.
        owner: dict[str, int] = {}
        for m, explicit in out:
            if explicit is not None:
                owner.setdefault(_trec_root(m), explicit)
        found = _unique([m for m, explicit in out if owner.get(_trec_root(m), explicit) == explicit])
        if known is not None:
            _keep(self._parsed, known, tuple(found))
        return found

    def _parse_node(
        self,
        node: syntax.SpecNode,
        trec: bool,
        node_id: int,
        groups: Mapping[str, Callable[[], Sequence[str]]],
    ) -> list[tuple[Metric, int | None]]:
        """One node's metrics, each with ``node_id`` when trec_eval would take them as an explicit
        parameter list (``P.5``) and ``None`` when they are defaults (``P``, ``official``)."""
        given = groups.get(node.name.lower())
        if given is not None:
            _check_group_node(node)
            return [(m, None) for m in self.parse(given())]
        bare = not (node.args or node.kwargs or node.cutoff)
        if trec and bare:
            _refuse(node.name, [f"trec:{node.name}"])
        entry = self._names.get(f"trec:{node.name}".lower()) if trec else None
        if entry is not None and bare and isinstance(entry.definition, MetricGroup):  # trec:<name> groups
            return [(m, None) for m in self.parse(entry.definition.specs)]
        found = self.bind(node)
        if trec and isinstance(self._names.get(node.name.lower(), _NO_ENTRY).definition, MetricGroup):
            return [(m, None) for m in found]
        explicit = node_id if trec and "." in node.name else None
        return [(m, explicit) for m in found]


def _convert_keywords(defn: MetricDef, alias: Alias, node: syntax.SpecNode) -> syntax.SpecNode:
    """``node`` with the keyword arguments that ``alias`` gives on another scale converted (see
    :attr:`Alias.keywords`); an argument that is not a constant number is left for binding to refuse."""
    kwargs = []
    for k, e in node.kwargs:
        convert = alias.keywords.get(k)
        if convert is not None and _is_arithmetic(e) and not syntax.free_symbols(e):
            try:
                e = syntax.Number(convert(syntax.evaluate_expr(e, {})))
            except (ValueError, ArithmeticError) as err:
                raise ParameterError(defn.name, k, f"{alias.name}({k}=...): {err}") from None
        kwargs.append((k, e))
    return replace(node, kwargs=tuple(kwargs))


def _check_group_node(node: syntax.SpecNode) -> None:
    if node.args or node.kwargs or node.cutoff is not None:
        raise ParameterError(node.name, None, "a group of metrics takes no arguments or cutoff")


_NO_ENTRY = _Entry(MetricDef("", "", compute="-"), None, "")


def _texts(given: Any) -> tuple[str, ...]:
    """The spec texts of ``given``: texts, or ir_measures' measure objects (``nDCG@10``, ``AP(rel=2)``), read
    by their text, as a user coming from ir_measures passes them. Raises :class:`SpecError` for anything
    else (``None``, a number), which ``tuple`` would have met with an error of its own."""
    if _from_ir_measures(given):
        return (str(given),)
    try:
        items = tuple(given)
    except TypeError:
        raise SpecError(
            f"metric specs are texts (such as 'nDCG@10, AP'), got {type(given).__name__} {quote(given)}"
        ) from None
    texts = []
    for item in items:
        if not isinstance(item, str) and not _from_ir_measures(item):
            raise SpecError(
                f"a metric spec is a text (such as 'nDCG@10'), got {type(item).__name__} {quote(item)}"
            )
        texts.append(str(item))
    return tuple(texts)


def _from_ir_measures(value: Any) -> bool:
    """Whether ``value`` is one of ir_measures' measures (its text is a spec irspec reads)."""
    return type(value).__module__.split(".")[0] == "ir_measures"


def _dotted_candidates(raw: str) -> Iterator[tuple[str, str]]:
    """The (base, suffix) a name not registered may be read as, in turn: ``P.5,10`` as ``P`` with ``5,10``,
    then trec_eval's printed form (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``; pytrec_eval's
    lists of them, ``P_5,10`` as ``P.5,10``). The second is looked for only when the first does not
    serve: its pattern costs ~0.1 ms to compile, and a process seldom needs it."""
    if "." in raw:
        base, _, suffix = raw.partition(".")
        yield base, suffix
    m = re.fullmatch(r"(.+?)_([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:,[-+.=0-9]+)*)", raw)
    if m:
        yield m.group(1), m.group(2)


def split_trec_name(name: str) -> tuple[str, str]:
    """trec_eval's printed name split into its measure and parameters: ``("P", "5")`` for ``P_5``,
    ``("iprec_at_recall", "0.10")``, ``("11pt_avg", ".25,.5")``, ``("set_F", "")`` for ``set_F``: at
    the first ``_`` followed by a digit, a point or a minus (read without a regular expression: it is
    asked of every metric a trec_eval table prints)."""
    at = 0
    while (at := name.find("_", at) + 1) and at < len(name):
        if name[at] in "-.0123456789":
            return name[: at - 1], name[at:]
    return name, ""


def _trec_root(metric: Metric) -> str:
    return split_trec_name(metric.trec_name or str(metric))[0]


def _with_plugin(d: MetricDef, plugin: str) -> MetricDef:
    """The definition as registered: its plugin named, and for a metric over runs the generic
    :data:`JUDGED_ONLY` parameter added unless it declares its own (not to a catalogue metric, which
    reads every user's list, not a ranking of judged documents)."""
    if d.needs == "run" and d.scope == "query" and JUDGED_ONLY.name not in d.param_names:
        return replace(d, plugin=plugin, params=(*d.params, JUDGED_ONLY))
    return replace(d, plugin=plugin)


_PARSED_KEPT = 256
"""How many texts' metrics :meth:`Registry.parse` keeps."""

_PARSED_TEXT = 4096
"""The longest text (all of a call's texts together, in characters) whose metrics :meth:`Registry.parse` keeps."""


def _keep(kept: dict[Any, Any], key: Any, value: Any) -> None:
    """``value`` kept under ``key`` in ``kept``, parsed specs by their text (:meth:`Registry.parse`,
    :func:`irspec.spec.fusion.parse_fusion`), at most :data:`_PARSED_KEPT` of them. Full, it starts again:
    specs made on the fly (a loop over cutoffs) stay bounded, and a clear is one step for any thread
    evaluating beside this one."""
    if len(kept) >= _PARSED_KEPT:
        kept.clear()
    kept[key] = value


def _unique(metrics: list[Metric]) -> list[Metric]:
    seen: set[Metric] = set()
    out = []
    for m in metrics:
        if m not in seen:
            seen.add(m)
            out.append(m)
    return out


def _names_text(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "no parameters"


def _check_combination(metric: Metric) -> None:
    # Rprec's seed variants are alternatives: precision at a recall, or at a multiple of R.
    names = {k for k, _ in metric.params}
    if metric.name == "Rprec" and {"recall", "mult"} <= names:
        raise ParameterError("Rprec", "recall", "recall and mult are alternatives; give one of them")
    # Fallout counts against the collection's non-relevant documents, or (judged=true) the judged ones
    if metric.name == "Fallout" and metric.get("judged") and "collection_size" in names:
        raise ParameterError(
            "Fallout",
            "collection_size",
            "judged=true counts against the judged non-relevant documents, not the collection: give one of them",
        )


def _fail(defn: MetricDef, p: Param, value: Any) -> ParameterError:
    shown = shorten(syntax.expr_text(value) if isinstance(value, syntax.Expr.__args__) else repr(value))
    return ParameterError(defn.name, p.name, f"got {shown}, expected {p.describe_range()}")


def _coerce(defn: MetricDef, p: Param, e: syntax.Expr) -> Any:
    """Turn an argument expression into a typed, validated value."""
    if p.kind in ("int", "float"):
        syms = syntax.free_symbols(e)
        if not _is_arithmetic(e):
            raise _fail(defn, p, e)
        unknown = sorted(syms - {"R"})
        if unknown:
            # "R-R" lexes as one hyphenated word (as "exp-log2" does), so say how to subtract.
            hint = (
                f"; write {unknown[0].replace('-', ' - ')} with spaces to subtract"
                if "-" in unknown[0]
                else ""
            )
            raise ParameterError(
                defn.name, p.name, f"unknown symbol {unknown[0]!r}{hint}; expected {p.describe_range()}"
            )
        if not syms:
            return _check_number(defn, p, _constant(defn, p, e))
        if not p.per_query:
            raise ParameterError(
                defn.name,
                p.name,
                f"the per-query symbol R is not allowed here; expected {p.describe_range()}",
            )
        # Only R's value per query is unknown here; the engine gives every per-query value a meaning
        # (Context.cutoff and Context.value), so the constant parts are all that can be checked.
        return _fold_checked(defn, p, e)
    if p.kind == "bool":
        if isinstance(e, syntax.Symbol) and e.name.lower() in ("true", "false"):
            return e.name.lower() == "true"
        if isinstance(e, syntax.Number) and e.value in (0, 1):
            return bool(e.value)
        raise _fail(defn, p, e)
    if p.kind == "choice":
        word = e.name if isinstance(e, syntax.Symbol) else e.value if isinstance(e, syntax.String) else None
        if word is None:
            raise _fail(defn, p, e)
        for c in p.choices:
            if c.lower() == word.lower():
                return c
        close = suggest(word, p.choices)
        more = f"; did you mean {close[0]!r}?" if close else ""
        raise ParameterError(defn.name, p.name, f"got {word!r}, expected {p.describe_range()}{more}")
    if p.kind == "str":
        if isinstance(e, syntax.String):
            return e.value
        if isinstance(e, syntax.Symbol):
            return e.name
        raise _fail(defn, p, e)
    if p.kind == "gains":
        if (
            not isinstance(e, syntax.DictLit)
            or not e.items
            or any(syntax.free_symbols(k) | syntax.free_symbols(v) for k, v in e.items)
        ):
            raise _fail(defn, p, e)
        items: dict[int, float] = {}
        for k, v in e.items:
            label = _constant(defn, p, k)
            if not isinstance(label, int):
                raise ParameterError(defn.name, p.name, f"label {syntax.expr_text(k)} is not an integer")
            if label in items:
                raise ParameterError(defn.name, p.name, f"label {label} given twice")
            items[label] = _constant(defn, p, v)
        return _check_gains(defn, p, items.items())
    if p.kind == "floats":
        if not isinstance(e, syntax.ListLit) or not e.items or any(syntax.free_symbols(x) for x in e.items):
            raise _fail(defn, p, e)
        return _check_floats(defn, p, [_constant(defn, p, x) for x in e.items])
    raise AssertionError(p.kind)


def _is_arithmetic(e: syntax.Expr) -> bool:
    if isinstance(e, (syntax.Number, syntax.Symbol)):
        return True
    if isinstance(e, syntax.BinOp):
        return _is_arithmetic(e.left) and _is_arithmetic(e.right)
    if isinstance(e, syntax.Neg):
        return _is_arithmetic(e.operand)
    return False


def _constant(defn: MetricDef, p: Param, e: syntax.Expr) -> int | float:
    """The value of an arithmetic expression without symbols; a located error where it has none
    (a division by zero, a result beyond float64)."""
    if not isinstance(_fold_checked(defn, p, e), syntax.Number):
        raise _fail(defn, p, e)
    # Evaluated again, exactly: folding turns integers beyond MAX_COUNT into floats, which could
    # round 2**53 + 1 into range.
    return syntax.evaluate_expr(e, {})


def _fold_checked(defn: MetricDef, p: Param, e: syntax.Expr) -> syntax.Expr:
    """:func:`_fold`, with a division by a constant zero or an infinite or NaN constant as errors."""
    try:
        folded = _fold(e)
    except ZeroDivisionError:
        raise ParameterError(
            defn.name,
            p.name,
            f"got {shorten(syntax.expr_text(e))}, which divides by zero; expected {p.describe_range()}",
        ) from None
    except OverflowError:
        folded = syntax.Number(math.inf)
    if not _finite(folded):
        raise ParameterError(
            defn.name,
            p.name,
            f"got {shorten(syntax.expr_text(e))}, which is not a finite number; expected {p.describe_range()}",
        )
    return folded


def _finite(e: syntax.Expr) -> bool:
    if isinstance(e, syntax.Number):
        return math.isfinite(e.value)
    if isinstance(e, syntax.BinOp):
        return _finite(e.left) and _finite(e.right)
    if isinstance(e, syntax.Neg):
        return _finite(e.operand)
    return True


def _number(value: int | float) -> syntax.Number:
    # Integral floats become ints, so 1.0*R and 1*R (equal specs) print alike; integers beyond
    # MAX_COUNT become floats (OverflowError past float64), as numpy would otherwise refuse them
    # next to R's float array, and no parameter takes them.
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_COUNT:
        return syntax.Number(int(value))
    if isinstance(value, int) and abs(value) > MAX_COUNT:
        return syntax.Number(float(value))
    return syntax.Number(value)


def _fold(e: syntax.Expr) -> syntax.Expr:
    """Fold constant sub-expressions, so ``R+2*5`` and ``R+10`` are the same spec.

    Raises :class:`ZeroDivisionError` for a division by a constant zero (``R/0``, ``R/(1-1)``): no value
    of R gives it a meaning. A per-query zero (``10/R`` where R = 0) is the engine's to define.
    """
    if isinstance(e, syntax.Number):
        return _number(e.value)
    if isinstance(e, syntax.BinOp):
        left, right = _fold(e.left), _fold(e.right)
        if e.op == "/" and right == syntax.Number(0):
            raise ZeroDivisionError(syntax.expr_text(e))
        if isinstance(left, syntax.Number) and isinstance(right, syntax.Number):
            return _number(syntax.evaluate_expr(syntax.BinOp(e.op, left, right), {}))
        return syntax.BinOp(e.op, left, right)
    if isinstance(e, syntax.Neg):
        inner = _fold(e.operand)
        return _number(-inner.value) if isinstance(inner, syntax.Number) else syntax.Neg(inner)
    return e


def _in_range(p: Param, value: int | float) -> bool:
    if p.minimum is not None and (value < p.minimum or (p.exclusive_minimum and value == p.minimum)):
        return False
    return p.upper is None or value <= p.upper


def _check_number(defn: MetricDef, p: Param, value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(defn, p, value)
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(defn, p, value)
    if p.kind == "int":
        if isinstance(value, float) and not value.is_integer():
            raise _fail(defn, p, value)
        value = int(value)
    else:
        try:
            value = float(value)
        except OverflowError:  # an int beyond float64, from an alias's typed value
            raise _fail(defn, p, value) from None
    if not _in_range(p, value):
        raise _fail(defn, p, value)
    return value


def _check_floats(defn: MetricDef, p: Param, values: Iterable[int | float]) -> tuple[float, ...]:
    """A ``floats`` value: each number within the parameter's bounds."""
    out = []
    for value in values:
        if not _in_range(p, value):
            raise ParameterError(
                defn.name, p.name, f"got {syntax.format_number(value)}, expected {p.describe_range()}"
            )
        out.append(float(value))
    return tuple(out)


def _check_gains(defn: MetricDef, p: Param, items: Iterable[tuple[int, int | float]]) -> GainMap:
    """Gains must be finite and non-negative: a negative gain would make an "ideal" ranking that is not
    the best one, and nDCG could leave [0, 1]; MAX_GAIN keeps their sums finite."""
    for label, gain in items:
        if not 0 <= gain <= MAX_GAIN:
            raise ParameterError(
                defn.name,
                p.name,
                f"gain of label {label} is {syntax.format_number(gain)}, expected a number >= 0 and <= "
                f"{syntax.format_number(MAX_GAIN)}",
            )
    return GainMap(tuple(sorted((label, float(gain)) for label, gain in items)))


def _coerce_preset(defn: MetricDef, p: Param, raw: Any) -> Any:
    """Values fixed by an alias (typed) or read from trec_eval's dotted suffix (strings)."""
    if not isinstance(raw, str):
        if p.kind in ("int", "float"):
            return _check_number(defn, p, raw)
        if p.kind == "gains" and isinstance(raw, GainMap):  # trec_eval's ndcg.1=3,2=9
            return _check_gains(defn, p, raw.items)
        if p.kind == "floats":  # trec_eval's 11pt_avg.0.25,0.5
            return _check_floats(defn, p, raw)
        return raw
    if p.kind in ("int", "float"):
        try:
            value: float = float(raw)
        except ValueError:
            raise ParameterError(defn.name, p.name, f"got {raw!r}, expected {p.describe_range()}") from None
        if p.kind == "int" and math.isfinite(value):
            value = int(value)  # trec_eval reads counts as numbers and truncates (ndcg_cut.23.4 is 23)
        return _check_number(defn, p, value)
    if p.kind == "choice":
        return _coerce(defn, p, syntax.Symbol(raw))
    return raw
