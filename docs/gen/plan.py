"""reference/plan.md: every key of a plan file, from the plan's JSON Schema (the one irspec validates
plans with), at build time. A section of a plugin shipped in ``plugins/`` that is not installed where
the site is built (irspec-online's ``ab:``) keeps its heading and anchor, saying how to install it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import mkdocs_gen_files

import irspec
import irspec.plan
from irspec.spec.registry import SHIPPED_PLUGIN_SECTIONS

sys.path.insert(0, str(Path(__file__).parent))
from _text import anchor, cell  # noqa: E402

PAGE = "reference/plan.md"
# the schema plans are checked with: irspec's, with the sections of the installed plugins (irspec-online's ab:)
SCHEMA: dict[str, Any] = irspec.plan.schema()


def type_text(node: dict[str, Any]) -> str:
    """A short description of what a schema node accepts."""
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v) if not isinstance(v, str) else v}`" for v in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    for key in ("anyOf", "oneOf"):
        if key in node:
            return " or ".join(dict.fromkeys(type_text(n) for n in node[key]))
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join("null" if k == "null" else type_text({**node, "type": k}) for k in kind)
    if kind == "array":
        items = node.get("items", {})
        return f"list of {type_text(items)}" if items else "list"
    if kind == "object":
        if "properties" in node:
            return "mapping (keys below)"
        extra = node.get("additionalProperties")
        return f"mapping of names to {type_text(extra)}" if isinstance(extra, dict) else "mapping"
    bounds = []
    if "minimum" in node:
        bounds.append(f">= {node['minimum']}")
    if "exclusiveMinimum" in node:
        bounds.append(f"> {node['exclusiveMinimum']}")
    if "maximum" in node:
        bounds.append(f"<= {node['maximum']}")
    if "exclusiveMaximum" in node:
        bounds.append(f"< {node['exclusiveMaximum']}")
    return (kind or "any") + (f" ({', '.join(bounds)})" if bounds else "")


def nested(node: dict[str, Any]) -> dict[str, Any]:
    """The object node holding keys, where a node is an object or a list or choice of them."""
    if "properties" in node:
        return node
    for key in ("anyOf", "oneOf"):
        for n in node.get(key, ()):
            found = nested(n)
            if found:
                return found
    if isinstance(node.get("items"), dict):
        return nested(node["items"])
    return {}


def rows(node: dict[str, Any], prefix: str) -> list[str]:
    out = []
    obj = nested(node)
    required = set(obj.get("required", ()))
    for key, child in obj.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key  # within a section, keys are written from it
        default = f"`{json.dumps(child['default'])}`" if "default" in child else ("required" if key in required else "-")
        out.append(f"| `{path}` | {cell(type_text(child))} | {default} | {cell(child.get('description', ''))} |")
        out += rows(child, path)
    return out


lines = [
    "# Plan file",
    "",
    "Every key of a plan, generated from the plan's JSON Schema as `irspec.plan.schema()` gives it: irspec's "
    "(`specs/plan.schema.json` in the repository, shipped inside the package) with the sections the installed "
    "plugins add (irspec-online's `ab:`), the schema `irspec validate` and `irspec run` check a plan with. Editors "
    "that read JSON Schema complete and check plans with it: start a plan with "
    "`# yaml-language-server: $schema=plan.schema.json`, as `specs/demo.yaml` does. How to write one: "
    "[Plans](../how-to/plans.md).",
    "",
    SCHEMA.get("description", ""),
    "",
    "A plan needs `metrics`, and `qrels` with `runs` or `systems`, or a `log` instead of them (or beside them).",
    "",
    "| key | what it takes |",
    "|---|---|",
]
lines += [f"| [`{key}`](#{anchor(key)}) | {cell(type_text(node))} |" for key, node in SCHEMA["properties"].items()]
lines.append("")
for key, node in SCHEMA["properties"].items():
    lines += [f"## `{key}` {{#{anchor(key)}}}", "", f"*{type_text(node)}*", "", node.get("description", ""), ""]
    sub = rows(node, "")
    if sub:
        lines += [f"| key in `{key}` | type | default | description |", "|---|---|---|---|", *sub, ""]
for dist, keys in SHIPPED_PLUGIN_SECTIONS.items():
    for key in keys:
        if key not in SCHEMA["properties"]:
            lines += [
                f"## `{key}` {{#{anchor(key)}}}",
                "",
                f"A section of the plugin `{dist}`, which is not installed (or not loaded) where this site was "
                f"built, so its keys are not listed here: `pip install -e plugins/{dist}` in irspec's repository, "
                "and build the site again. Without it, a plan with this key is an error that names the plugin.",
                "",
            ]

with mkdocs_gen_files.open(PAGE, "w") as f:
    f.write("\n".join(lines))
