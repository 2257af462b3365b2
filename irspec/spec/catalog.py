"""What ``irspec parse --json`` and ``irspec metrics`` show: bound metrics and the registry's metrics,
groups and input readers, as JSON records and as the listing's text; ``irspec metrics --fusion``, the
registry's fusion methods.

Beside :func:`irspec.spec.plugins.plugin_report` (``irspec plugins``), so that the command line only
chooses a format and prints. No numpy, no files: listing the metrics stays as cheap as parsing one.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from irspec.spec import syntax
from irspec.spec.definitions import FUSION_NORM
from irspec.spec.plugins import DEFAULT_PLUGINS
from irspec.spec.registry import JUDGED_ONLY, GainMap, Metric, Registry

__all__ = ["catalog_text", "fusion_records", "fusion_text", "metric_record", "metric_records"]


def _jsonable(value: object) -> object:
    """A parameter's value as JSON has it: a gain map as ``{label: gain}``, a tuple as a list, an
    expression (``10+R``) as its text."""
    if isinstance(value, GainMap):
        return {str(k): g for k, g in value.items}
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, syntax.Expr.__args__):
        return syntax.expr_text(value)
    return value


def metric_record(metric: Metric) -> dict[str, Any]:
    """A bound metric as ``irspec parse --json`` gives it: its canonical text, name, every parameter's
    value (defaults too), the parameters given, its aggregate, trec_eval's name and its plugin."""
    return {
        "canonical": str(metric),
        "name": metric.name,
        "params": {k: _jsonable(metric.get(k)) for k in metric.definition.param_names},
        "explicit": sorted(k for k, _ in metric.params),
        "aggregate": metric.aggregate,
        "trec_name": metric.trec_name,
        "plugin": metric.definition.plugin,
    }


def metric_records(registry: Registry) -> list[dict[str, Any]]:
    """Every registered metric, by name (case-insensitive order), as ``irspec metrics --json`` gives it."""
    rows = []
    for name in sorted(registry.definitions, key=str.lower):
        d = registry.definitions[name]
        aliases = [a if isinstance(a, str) else a.name for a in registry.aliases[name]]
        rows.append(
            {
                "name": d.name,
                "aliases": aliases,
                "summary": d.summary,
                "aggregate": d.aggregate,
                "at": d.at,
                "positional": d.positional,
                "params": [_param_record(p) for p in d.params],
                "plugin": d.plugin,
                "distribution": registry.distributions.get(d.plugin),
                "needs": d.needs,
                "redirects": [
                    {"keyword": r.keyword, "when": r.when, "target": r.target} for r in d.redirects
                ],
                "doc": d.doc,
            }
        )
    return rows


def catalog_text(registry: Registry) -> str:
    """``irspec metrics``: each metric (:func:`metric_records`) with its parameters, plugin, summary,
    aliases and keyword forms, then the groups and the input readers, one line each with its summary
    below."""
    lines = []
    for r in metric_records(registry):
        # judged_only is every run metric's (registry.JUDGED_ONLY): said once below, not on every line
        params = ", ".join(
            ("@" if p["name"] == r["at"] else "")
            + p["name"]
            + (f"={_default_text(p['default'])}" if p["default"] is not None else "")
            for p in r["params"]
            if p["name"] != JUDGED_ONLY.name or r["needs"] != "run"
        )
        source = _source_text(r)
        needs = "" if r["needs"] == "run" else f"  (computed from a {r['needs']} input)"
        lines.append(f"{r['name']}({params})  [{source}]{needs}")
        lines.append(f"    {r['summary']}")
        if r["aliases"]:
            lines.append(f"    aliases: {', '.join(r['aliases'])}")
        if r["redirects"]:
            lines.append(f"    also: {', '.join(_redirect_text(r['name'], x) for x in r['redirects'])}")
    for g in sorted(registry.groups.values(), key=lambda g: g.name):
        if not g.name.startswith("trec:"):
            lines.append(f"{g.name}  (group)  [{g.plugin}]\n    {g.summary}")
    for reader in sorted(registry.readers.values(), key=lambda r: r.name.lower()):
        suffixes = f" ({', '.join(reader.suffixes)})" if reader.suffixes else ""
        lines.append(f"{reader.name}  (input){suffixes}  [{reader.plugin}]\n    {reader.summary}")
    lines.append(
        f"Every metric computed from a run also takes {JUDGED_ONLY.name}=true: {JUDGED_ONLY.description}."
    )
    return "\n".join(lines) + "\n"


def fusion_records(registry: Registry) -> list[dict[str, Any]]:
    """Every registered fusion method, by name (case-insensitive order), as ``irspec metrics --fusion
    --json`` gives it: its aliases (those that fix parameters with them), summary, every parameter
    (``norm`` included), whether it learns from training qrels, what parameter search tries, its plugin
    and its doc (formula and paper)."""
    aliases: dict[str, list[str]] = {}
    for definition, alias in registry.fusion_names.values():
        if alias is not None:
            fixed = ", ".join(f"{k}={_default_text(_jsonable(v))}" for k, v in alias.fixed.items())
            aliases.setdefault(definition.name, []).append(alias.name + (f" ({fixed})" if fixed else ""))
    rows = []
    for name in sorted(registry.fusions, key=str.lower):
        d = registry.fusions[name]
        rows.append(
            {
                "name": d.name,
                "aliases": aliases.get(d.name, []),
                "summary": d.summary,
                "params": [_param_record(p, required=True) for p in d.all_params],
                "weighted": d.weighted,
                "learns": d.learns,
                "grid": {k: [_jsonable(v) for v in values] for k, values in d.grid},
                "plugin": d.plugin,
                "distribution": registry.distributions.get(d.plugin),
                "doc": d.doc,
            }
        )
    return rows


def fusion_text(registry: Registry) -> str:
    """``irspec metrics --fusion``: each fusion method (:func:`fusion_records`) with its parameters and
    plugin, whether it learns, its summary, aliases and doc (wrapped); then ``norm``, which every
    method takes (said once), and how a spec is written."""
    lines = []
    for r in fusion_records(registry):
        params = ", ".join(
            p["name"] + ("" if p["default"] is None else f"={_default_text(p['default'])}")
            for p in r["params"]
            if p["name"] != FUSION_NORM.name or p["description"] != FUSION_NORM.description
        )
        source = _source_text(r)
        learns = "  (learns: give it training qrels, --qrels)" if r["learns"] else ""
        lines.append(f"{r['name']}({params})  [{source}]{learns}")
        lines.append(f"    {r['summary']}")
        if r["aliases"]:
            lines.append(f"    aliases: {', '.join(r['aliases'])}")
        if r["doc"]:
            lines.extend(textwrap.wrap(r["doc"], 100, initial_indent="    ", subsequent_indent="    "))
    norm = (
        f"Every method also takes {FUSION_NORM.name}={FUSION_NORM.default}: {FUSION_NORM.description}; "
        f"{FUSION_NORM.describe_range()}."
    )
    lines.extend(textwrap.wrap(norm, 104))
    lines.append(
        'A spec, by any name above: irspec fuse a.run b.run --method "wsum(weights=[0.3, 0.7], norm=zmuv)"'
    )
    return "\n".join(lines) + "\n"


def _param_record(p: Any, required: bool = False) -> dict[str, Any]:
    """A parameter as the JSON listings give it (with ``required`` for a fusion method's)."""
    record: dict[str, Any] = {"name": p.name, "type": p.kind, "default": _jsonable(p.default)}
    if required:
        record["required"] = p.required
    return record | {"allowed": p.describe_range(), "description": p.description}


def _source_text(record: dict[str, Any]) -> str:
    """Where a listed metric or method comes from: its plugin, and for an installed plugin its
    distribution."""
    if record["distribution"] is not None and record["plugin"] not in DEFAULT_PLUGINS:
        return f"{record['plugin']}: {record['distribution']}"
    return str(record["plugin"])


def _default_text(value: object) -> str:
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _redirect_text(name: str, redirect: dict[str, Any]) -> str:
    """A keyword form that names another metric, as ``irspec metrics`` shows it: ``P(relative=true) is relP``."""
    if redirect["when"] is None:
        return f"{name}({redirect['keyword']}=x) is {redirect['target']}({redirect['keyword']}=x)"
    return f"{name}({redirect['keyword']}={_default_text(redirect['when'])}) is {redirect['target']}"
