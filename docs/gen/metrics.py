"""reference/metrics.md: every registered metric, from the live registry, at build time.

What `irspec metrics` lists, with each definition's parameters, aliases and the formula and reference
its ``doc`` carries: the built-in metrics and those of every plugin installed where the site is built
(the three shipped plugins in CI). Families are the plugins that register the metrics (the built-in
ones are plugins too), in the order `irspec plugins` lists them, the built-in first. A plugin shipped in
``plugins/`` that is not installed has its section all the same, under the same heading and anchor
(other pages link to ``metrics.md#online``), saying how to install it and which names it registers: so
``pip install -e ".[docs]"`` alone builds the site.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import mkdocs_gen_files

import irspec
from irspec.spec.registry import SHIPPED_PLUGIN_NAMES

sys.path.insert(0, str(Path(__file__).parent))
from _text import anchor, cell, markdown  # noqa: E402

PAGE = "reference/metrics.md"
PLUGINS_DIR = Path(__file__).resolve().parents[2] / "plugins"
REGISTRY = irspec.get_registry()
# `irspec plugins`: the public report of which plugin (module, distribution) registered what
PLUGINS = json.loads(subprocess.run([sys.executable, "-m", "irspec", "plugins"], capture_output=True, text=True, check=True).stdout)


def value_text(value: object) -> str:
    if isinstance(value, bool):
        return json.dumps(value)
    # an expression over R (bpref's nonrel=R): printed by the spec language's own printer
    printer = getattr(sys.modules[type(value).__module__], "expr_text", None)
    return printer(value) if printer is not None and not isinstance(value, (int, float, str)) else str(value)


def values_text(p) -> str:
    # an int's range ends at 2**53 (exact in a float): a limit of the arithmetic, not of the metric
    return re.sub(r" and <= 9007199254740992\b", "", p.describe_range())


def family_title(plugin: dict) -> tuple[str, str, str]:
    """The short name, the heading and the introduction of one plugin's section."""
    module = importlib.import_module(plugin["module"])
    doc = (module.__doc__ or "").strip()
    if plugin["builtin"]:
        first, _, rest = doc.partition("\n\n")
        first = " ".join(first.split()).rstrip(".")
        short = plugin["name"].rpartition(".")[2]
        # the heading is the sentence's first clause ("Set-based and cutoff metrics"), the sentence leads the section
        heading = re.split(r"[:,]", first, maxsplit=1)[0]
        return short, heading, markdown(first + ".\n\n" + rest)  # as written: "trec_eval's", "bpref" stay lower case
    dist = plugin["distribution"].split()[0]
    summary = importlib.metadata.metadata(dist)["Summary"] or ""
    return (
        f"{plugin['name']} (plugin)",
        f"{dist} (plugin)",
        f"{summary.rstrip('.')}. From the plugin `{plugin['name']}` of the distribution `{plugin['distribution']}`: "
        f"`pip install -e plugins/{dist}` in irspec's repository. Without it, these names are an error that names the plugin.\n",
    )


def alias_text(alias: object, name: str) -> str:
    if isinstance(alias, str):
        return f"`{alias}`"
    text = f"`{alias.name}`"
    if alias.fixed:
        args = ", ".join(f"{k}={value_text(v)}" for k, v in alias.fixed.items())
        text += f" (`{name}({args})`)"
    if alias.dotted is not None:
        text += f" (trec_eval's `{alias.name}.V1,V2,...` form" + (": a value is required" if alias.dotted_required else "") + ")"
    return text


def trec_names(d) -> str:
    """trec_eval's printed names of the plain spec, and of ``@10`` where ``@`` is a cutoff."""
    out = []
    for text in (d.name, f"{d.name}@10" if d.at == "k" else None):
        if text is None:
            continue
        try:
            m = irspec.parse(text)
        except irspec.IrspecError:
            continue
        if m.trec_name:
            out.append(f"`{m}` is `{m.trec_name}`")
    return ", ".join(out)


def absent_plugin_section(dist: str, names: tuple[str, ...]) -> list[str]:
    """The section of a plugin shipped in ``plugins/`` that is not loaded where the site is built: its
    heading and anchor as when it is (its entry point's name, from its pyproject.toml), what it is, how
    to install it, and the names it registers (``SHIPPED_PLUGIN_NAMES``)."""
    project = (PLUGINS_DIR / dist / "pyproject.toml").read_text(encoding="utf-8")
    # two lines of the plugin's own pyproject.toml (tomllib is Python 3.11's; irspec supports 3.10)
    name = re.search(r'^\[project\.entry-points\.irspec\]\s*\n\s*"?([\w.-]+)"?\s*=', project, re.M).group(1)
    summary = re.search(r'^description\s*=\s*"(.*)"\s*$', project, re.M).group(1)
    return [
        f"## {dist} (plugin) {{#{anchor(name)}}}",
        "",
        f"{summary.rstrip('.')}. From the plugin `{name}` of the distribution `{dist}`, which is not installed (or "
        f"not loaded) where this site was built, so its metrics are not described here: `pip install -e "
        f"plugins/{dist}` in irspec's repository, and build the site again. Without it, its names are an error "
        f"that names the plugin: " + ", ".join(f"`{n}`" for n in names) + ".",
        "",
    ]


def better_text(d) -> str:
    """Which values are better, as the reference says it: a definition's ``better`` may be a function of
    the bound metric (irspec-usermodel's RBP, whose residual has no better side), shown by what it says
    at the defaults and its own first sentence."""
    if not callable(d.better):
        return d.better
    at_defaults = irspec.Metric(d.name, (), d).better
    why = " ".join((d.better.__doc__ or "").strip().split("\n\n")[0].split())
    return f"{at_defaults} at its defaults; it depends on the parameters" + (f" ({why})" if why else "")


def metric_section(d) -> list[str]:
    lines = [f"### `{d.name}` {{#{anchor(d.name)}}}", "", f"*{d.summary}*", ""]
    facts = []
    aliases = REGISTRY.aliases.get(d.name, [])
    if aliases:
        facts.append("**Aliases:** " + ", ".join(alias_text(a, d.name) for a in aliases))
    if d.at:
        facts.append(f"**`@` sets** `{d.at}`" + (f"; a single positional argument sets `{d.positional}`" if d.positional else ""))
    elif d.positional:
        facts.append(f"**A single positional argument sets** `{d.positional}`")
    how = {"mean": "the mean over queries", "sum": "the sum over queries", "gmean": "the geometric mean over queries",
           "none": "none (a text per query)"}.get(d.aggregate, d.aggregate)
    if d.scope == "catalogue":  # no per-query values to summarise: the run's one value
        how = "one value per run, from every user's list (catalogue-level: no per-query values)"
    bounds = {(0.0, 1.0): "; every per-query value in [0, 1]", (0.0, None): "; never negative"}.get(tuple(d.bounds), "")
    facts.append(f"**Summary:** {how}; **better:** {better_text(d)}{bounds}")
    if d.needs != "run":
        facts.append(f"**Computed from** the `{d.needs}` input (read by its plugin's reader, [below](#inputs)), not from a run")
    names = trec_names(d)
    if names:
        facts.append(f"**trec_eval:** {names}")
    for r in d.redirects:
        if r.when is None:
            facts.append(f"**Also:** `{d.name}({r.keyword}=x)` is `{r.target}({r.keyword}=x)`")
        else:
            facts.append(f"**Also:** `{d.name}({r.keyword}={value_text(r.when)})` is `{r.target}`")
    lines += [f"- {f}" for f in facts] + [""]
    params = [p for p in d.params if not (p.name == JUDGED_ONLY and d.needs == "run")]
    if params:
        lines += ["| parameter | type | default | values | description |", "|---|---|---|---|---|"]
        for p in params:
            default = "required" if p.required else ("-" if p.default is None else f"`{value_text(p.default)}`")
            lines.append(f"| `{p.name}` | {p.kind} | {default} | {cell(values_text(p)) or '-'} | {cell(p.description)} |")
        lines.append("")
    if d.doc:
        lines += [markdown(d.doc), ""]
    return lines


JUDGED_ONLY = "judged_only"
definitions = irspec.metrics()
by_plugin: dict[str, list] = {}
for d in definitions.values():  # in the order they were registered: related metrics together
    by_plugin.setdefault(d.plugin, []).append(d)
order = list(by_plugin)  # the plugins in registration order: irspec's own first
families = sorted((p for p in PLUGINS if p["name"] in by_plugin), key=lambda p: order.index(p["name"]))
titles = {p["name"]: family_title(p) for p in families}

out = [
    "# Metrics",
    "",
    f"Every metric irspec knows where this site was built: {len(definitions)} metrics from {len(families)} "
    "plugins (irspec's own metrics are registered as plugins too), with their names, aliases, parameters, formulas "
    "and references. This page is generated from the registry at build time, so it lists exactly what "
    "`irspec metrics` (and `irspec metrics --json`) prints. A metric is written as a spec: "
    "its name, keyword arguments and an optional `@cutoff`, as [the metric-spec language](spec-language.md) explains.",
    "",
    f"Every metric computed from a run also takes `judged_only=true`: "
    f"{next(p.description for d in definitions.values() for p in d.params if p.name == JUDGED_ONLY)}.",
    "",
    "| metric | what it measures | family |",
    "|---|---|---|",
]
for p in families:
    for d in by_plugin[p["name"]]:
        out.append(f"| [`{d.name}`](#{anchor(d.name)}) | {cell(d.summary)} | [{cell(titles[p['name']][0])}](#{anchor(p['name'])}) |")
out.append("")
for p in families:
    _, title, intro = titles[p["name"]]
    out += [f"## {title} {{#{anchor(p['name'])}}}", "", intro, ""]
    for d in by_plugin[p["name"]]:
        out += metric_section(d)
loaded = {p["distribution"].split()[0] for p in families}
for dist, names in SHIPPED_PLUGIN_NAMES.items():
    if dist not in loaded:
        out += absent_plugin_section(dist, names)

groups = sorted((g for g in REGISTRY.groups.values() if not g.name.startswith("trec:")), key=lambda g: g.name)
out += ["## Groups of metrics {#groups}", "",
        "A group's name stands for its list of specs wherever specs are given (`-m official`, `metrics: [official]`). "
        "With `irds:` qrels, `irds-official` stands for the dataset's official measures ([ir_datasets](../how-to/datasets.md)).", ""]
for g in groups:
    out += [f"### `{g.name}` {{#{anchor('group-' + g.name)}}}", "", f"*{g.summary}*", "",
            ", ".join(f"`{s}`" for s in g.specs), ""]

readers = sorted(REGISTRY.readers.values(), key=lambda r: r.name.lower())
out += ["## Inputs other than runs {#inputs}", "",
        "Metrics that are not computed from qrels and a run name the input they need, which a plugin reads "
        "([writing a plugin](../how-to/write-a-plugin.md#other-inputs-readers)).", "",
        "| input | read from | file names | plugin | read in place of the qrels |", "|---|---|---|---|---|"]
for r in readers:
    out.append(f"| `{r.name}` | {cell(r.summary)} | {cell(', '.join(f'`{s}`' for s in r.suffixes)) or '-'} | `{r.plugin}` | {'yes' if r.as_qrels else 'no'} |")
out.append("")

refused = getattr(sys.modules[type(REGISTRY).__module__], "REFUSED_SPELLINGS", {})
if refused:
    out += ["## Spellings that are refused {#refused}", "",
            "A spelling that means one thing in one tool and another elsewhere is refused with what each means, "
            "never read one way in silence (`trec:NAME` is NAME on trec_eval's command line only).", "",
            "| spelling | why |", "|---|---|"]
    out += [f"| `{name}` | {cell(why)} |" for name, why in sorted(refused.items())]
    out.append("")

with mkdocs_gen_files.open(PAGE, "w") as f:
    f.write("\n".join(out))
