"""The HTML report: one self-contained page with the results table (marks, best values), the
comparisons, the plots, the per-query values, notes and warnings, and the provenance.

The page is the jinja2 template ``templates/report.html.j2`` (package data), rendered with autoescaping
on, from the same table model as the other formats. jinja2 is imported only when a page is rendered,
so ``import irspec`` and text-only runs do not load it.

The figures are SVG elements inline in the page (:mod:`irspec.report.charts` writes them), so that their
text is the page's text and a small script of the page's own (``templates/report.js``) shows a value on
hover, and hides or shows a run from a legend; a topic's bar or dot links to its row of the per-query
table (:func:`query_anchor`). The page's style and script are inline too, and its content security
policy allows those two by their hashes and nothing else: the page fetches nothing, and opens offline.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from irspec.evaluation.evaluated import collect_warnings
from irspec.report.markdown import MARKS
from irspec.report.marks import WON_TIED_LOST, direction
from irspec.report.model import (
    FULL_COLUMNS,
    INTERVAL_SEED,
    Block,
    Table,
    averaged_legend,
    build_comparisons,
    build_results,
    groups,
    input_blocks,
    interval_legend,
    marks_legend,
    value_text,
)
from irspec.report.origin import VERSIONED

if TYPE_CHECKING:
    import jinja2

    from irspec.evaluation.evaluated import Evaluated

__all__ = ["JudgedSet", "fragment", "page_assets", "plain_tables", "query_anchor", "template", "to_html"]


@functools.cache
def _environment() -> jinja2.Environment:
    import jinja2  # a heavy import, needed only here

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("irspec.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["json"] = lambda value, **kw: json.dumps(value, **kw)
    env.filters["inline_svg"] = _inline_svg
    env.globals.update(
        MARKS=MARKS,
        WON_TIED_LOST=WON_TIED_LOST,
        beaten=_beaten,
        interval_legend=interval_legend,
        averaged_legend=averaged_legend,
    )
    return env


def _inline_svg(data: bytes) -> Any:
    """A figure's SVG file as the page's markup (:func:`irspec.report.svg.inline`)."""
    from markupsafe import Markup  # comes with jinja2

    from irspec.report.svg import inline  # the figures' code, for a page that has figures

    return Markup(inline(data))  # written by irspec.report.charts, every text in it escaped there


@functools.cache
def page_assets() -> tuple[str, str, str]:
    """The report page's style sheet and script (``templates/report.css``, ``templates/report.js``), and
    the content security policy that allows exactly these two, by their SHA-256, and nothing else."""
    from importlib.resources import files

    folder = files("irspec.report") / "templates"
    style = (folder / "report.css").read_text(encoding="utf-8")
    script = (folder / "report.js").read_text(encoding="utf-8")

    def digest(text: str) -> str:
        return (
            "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"
        )

    policy = (
        f"default-src 'none'; style-src {digest(style)}; script-src {digest(script)}; "
        "base-uri 'none'; form-action 'none'"
    )
    return style, script, policy


def query_anchor(query_id: str, judged_set: str | None = None) -> str:
    """The id of ``query_id``'s row in the page's per-query table (under ``judged_set`` on a page of
    several sets of judgments): ``query-`` and the id percent-encoded, so that any id makes one valid,
    distinct anchor; a figure links a topic's mark to ``#`` and this."""
    where = f"-{_ident(judged_set)}" if judged_set else ""
    return f"query{where}-{urllib.parse.quote(query_id, safe='')}"


def _per_query(results: Sequence[Evaluated], decimals: int, judged_set: str | None) -> dict[str, Any] | None:
    """The per-query table of the runs' ``results``: a row per query (every run's queries, in the
    results' order), a column per metric and run, each cell's text and classes (``best``: the query's best
    value of the metric, in its direction; ``first``: a metric's first run); ``None``
    without runs. Other inputs (a log's items) have tables of their own."""
    runs = [res for res in results if _kind(res) in ("run", "system")]
    if not runs:
        return None
    group = groups(runs)[0]
    metrics = group[0].metrics
    queries = list(dict.fromkeys(q for res in group for q in res.query_ids))
    index = [{q: i for i, q in enumerate(res.query_ids)} for res in group]
    body = []
    for q in queries:
        cells: list[tuple[str, str]] = []
        for j, m in enumerate(metrics):
            values = [
                float(res.values[at[q], j]) if q in at else math.nan
                for res, at in zip(group, index, strict=True)
            ]
            way = direction(m)
            shown = [v for v in values if not math.isnan(v)]
            top = (max(shown) if way > 0 else min(shown)) if way and len(set(shown)) > 1 else None
            # "first": the first run of a metric, where a rule sets the metrics apart
            cells.extend(
                (
                    value_text(v, m, decimals),
                    " ".join(["first"] * (k == 0) + ["best"] * (top is not None and v == top)),
                )
                for k, v in enumerate(values)
            )
        body.append((query_anchor(q, judged_set), q, cells))
    return {"metrics": [str(m) for m in metrics], "runs": [res.run_name for res in group], "rows": body}


def template(name: str) -> jinja2.Template:
    """The package template ``name`` (``templates/``), in the reports' one environment (autoescaped)."""
    return _environment().get_template(name)


def _beaten(table: Table, marks: str) -> str:
    """The names of the runs whose letters are in ``marks``, for a mark's tooltip."""
    return ", ".join(name for name, letter in table.letters.items() if letter in marks)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


class JudgedSet(NamedTuple):
    """One set of judgments on a page that reports several (:func:`to_html`'s ``sets``): its ``name``,
    the runs' ``results`` under it, their ``comparisons`` and ``notes``, and the ``sections`` that follow
    them (its power tables), each ``(id, title, titled tables, notes)`` as :func:`to_html`'s ``extra``
    (the page adds the set's name to each id and title)."""

    name: str
    results: Sequence[Evaluated]
    comparisons: Sequence[Any] = ()
    notes: Sequence[str] = ()
    sections: Sequence[tuple[str, str, Sequence[tuple[str, str, Any]], Sequence[str]]] = ()


def to_html(
    results: Sequence[Evaluated],
    *,
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    notes: Sequence[str] = (),
    decimals: int = 4,
    intervals: str | None = None,
    title: str = "irspec report",
    plots: Sequence[Any] | None = None,
    plots_note: str | None = None,
    provenance: dict[str, Any] | None = None,
    extra: Sequence[tuple[str, str, Sequence[tuple[str, str, Any]], Sequence[str]]] = (),
    lead: str | None = None,
    sets: Sequence[JudgedSet] = (),
) -> str:
    """One self-contained HTML page: the results table with marks, the comparisons with p-values and
    effect sizes, the plots, notes and the provenance. The results' warnings come first, in a box
    above the results, where no reader of the tables can miss them.

    Inline CSS, script and figures (``plots``: objects with ``title``, ``description`` and ``svg`` bytes,
    as :func:`irspec.report.plots.render` makes them, put in the page as SVG elements), so the file opens
    offline and fetches nothing. ``plots_note`` is shown where the plots would be when there are none.
    After the plots, the runs' values per query, a row per query (:func:`query_anchor` is its id, which a
    figure's topic links to). ``intervals`` (``"t"`` or ``"bootstrap"``) puts the 95% confidence interval after
    each mean. ``extra`` sections follow the comparisons, each ``(id, title, titled tables, notes)``
    with its tables as ``(heading, description, block)`` (an agreement section, say). ``lead`` is a
    sentence shown under the title, before any table: what a reader must know to read them (which set
    of judgments they use, say).

    ``sets`` (several sets of judgments, :class:`JudgedSet`) puts each set's results, comparisons and
    sections on the page in turn, each titled with the set's name, in place of ``results``'
    (``results``, ``comparisons`` and ``notes`` then being the first set's); ``extra`` follows them all.
    """
    if sets:
        parts = [
            _part(
                s.results,
                s.comparisons,
                compare,
                s.notes,
                decimals,
                intervals,
                s.sections,
                f"-{_ident(s.name)}",
                f": {s.name}",
                s.name,
            )
            for s in sets
        ]
        every = [res for s in sets for res in s.results]
    else:
        parts = [_part(results, comparisons, compare, notes, decimals, intervals, (), "", "", None)]
        every = list(results)
    table = parts[0]["results"]
    warnings = collect_warnings(every)
    metrics: list[str] = []
    for res in results:
        metrics.extend(str(m) for m in res.metrics if str(m) not in metrics)
    sections = [("warnings", "Warnings")] if warnings else []
    for part in parts:
        sections.extend(part["sections"])
    sections.extend((ident, name) for ident, name, _, _ in extra)
    sections.append(("plots", "Plots"))
    sections.extend(
        (part["ids"]["per_query"], part["titles"]["per_query"]) for part in parts if part["per_query"]
    )
    if notes and not sets:
        sections.append(("notes", "Notes"))
    if provenance:
        sections.append(("provenance", "Provenance"))
    versions = ""
    if provenance:
        versions = ", ".join(f"{k} {provenance[k]}" for k in VERSIONED if provenance.get(k))
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            title=title,
            lead=lead,
            summary=", ".join([*_inputs(results), _plural(len(metrics), "metric"), table.queries]),
            sections=sections,
            parts=parts,
            extra=list(extra),
            plots=plots or [],
            plots_note=plots_note,
            notes=[] if sets else list(notes),
            warnings=warnings,
            provenance=provenance or None,
            versions=versions,
            seeds=_seeds(provenance or {}, table, plots or ()),
            assets=page_assets(),
        )
    )


def _part(
    results: Sequence[Evaluated],
    comparisons: Sequence[Any],
    compare: Any,
    notes: Sequence[str],
    decimals: int,
    intervals: str | None,
    extra: Sequence[Any],
    ident: str,
    titled: str,
    judged_set: str | None,
) -> dict[str, Any]:
    """What the page shows of one set of results: their table, the tables they carry, the comparisons
    and the sections after them, each with its anchor (``results`` + ``ident``) and title (``Results`` +
    ``titled``); a comparison's notes are said under its table when a page holds several sets."""
    table = build_results(results, comparisons, compare, decimals=decimals, intervals=intervals)
    compared = (
        build_comparisons(results, comparisons, compare, decimals=decimals, columns=FULL_COLUMNS)
        if comparisons
        else None
    )
    tables = input_blocks(results, decimals=decimals)
    names = {"results": "Results", "tables": "Tables", "comparisons": "Comparisons", "per_query": "Per query"}
    shown = ["results", *(["tables"] if tables else []), *(["comparisons"] if comparisons else [])]
    ids = {key: key.replace("_", "-") + ident for key in names}
    titles = {key: name + titled for key, name in names.items()}
    return {
        "results": table,
        "marks_legend": _marks_legend(table),
        "tables": tables,
        "comparisons": compared,
        "per_query": _per_query(results, decimals, judged_set),
        "notes": list(notes) if ident else [],
        "extra": [(i + ident, name + titled, tables, said) for i, name, tables, said in extra],
        "ids": ids,
        "titles": titles,
        "sections": [(ids[key], titles[key]) for key in shown]
        + [(i + ident, name + titled) for i, name, _, _ in extra],
    }


def _ident(name: str) -> str:
    """A set's name as part of an anchor, percent-encoded as a query's is (:func:`query_anchor`): distinct
    names give distinct anchors (``a/b`` and ``a.b`` gave ``a-b`` both, and the second set's links led to
    the first's tables)."""
    return urllib.parse.quote(name, safe="")


def _inputs(results: Sequence[Evaluated]) -> list[str]:
    """How many runs, systems of several runs, and other inputs (a plugin's ``log``) the page reports: a
    result is a run's unless it averages several (``averaged``) or its metrics need another input
    (:attr:`~irspec.spec.definitions.MetricDef.needs`)."""
    kinds: dict[str, int] = {}
    for res in results:
        kind = _kind(res)
        kinds[kind] = kinds.get(kind, 0) + 1
    return [_plural(n, kind) for kind, n in sorted(kinds.items(), key=lambda kv: kv[0] != "run")]


def _kind(res: Evaluated) -> str:
    """What a result is of: ``run``, ``system`` (several runs averaged) or the input its metrics need."""
    if getattr(
        res, "averaged", ""
    ):  # a system of several runs (irspec.evaluation.systems), its runs averaged
        return "system"
    needs = {m.definition.needs for m in res.metrics if m.definition is not None} or {"run"}
    return next(iter(needs)) if len(needs) == 1 else "run"


def _seeds(provenance: dict[str, Any], table: Table, plots: Sequence[Any]) -> dict[str, int]:
    """Every seed behind the page: the provenance's (the comparisons'), and the page's own, which the
    provenance of a plan or a JSON file cannot know: the bootstrap intervals' and the plots' jitter."""
    seeds = dict(provenance.get("seeds") or {})
    if table.interval == "bootstrap":
        seeds["intervals.seed"] = INTERVAL_SEED
    for plot in plots:
        if getattr(plot, "seed", None) is not None:
            seeds.setdefault("plots.seed", plot.seed)
    return seeds


def _marks_legend(table: Table) -> Any:
    """The marks' legend as markup: its text escaped by :func:`marks_legend`, its markup ours."""
    from markupsafe import Markup, escape  # comes with jinja2

    return Markup(
        marks_legend(table, escape, "<sup>†</sup>/<sup>↓</sup>", "α = {:g}") if table.marked else ""
    )


def fragment(
    table: Table | None = None,
    comparisons: Table | None = None,
    warnings: Sequence[str] = (),
    *,
    tables: Sequence[tuple[str, str, Block]] = (),
    sections: Sequence[tuple[str, str, Block]] = (),
    notes: Sequence[str] = (),
) -> str:
    """A results ``table`` and/or a ``comparisons`` table (:mod:`.model` tables), with ``warnings``
    above them, the ``tables`` the results carry (:func:`~irspec.report.model.input_blocks`: a log's top
    queries, query groups) between them and ``sections`` (a power analysis's or an agreement's tables)
    and their ``notes`` after them, each titled table a ``(heading, description, block)``, as an HTML fragment with a little scoped CSS: what a
    notebook shows for results, comparisons and a power analysis. The tables are the report page's own
    (the macros of ``templates/tables.html.j2``)."""
    return (
        _environment()
        .get_template("fragment.html.j2")
        .render(
            results=table,
            marks_legend=_marks_legend(table) if table is not None else "",
            comparisons=comparisons,
            warnings=list(warnings),
            tables=list(tables),
            sections=list(sections),
            notes=list(notes),
        )
    )


def plain_tables(sections: Sequence[tuple[str, str, Block]], *, notes: Sequence[str] = ()) -> str:
    """Tables of the model as ``(heading, description, block)`` (an agreement's, a power analysis's) as
    an HTML fragment, each under its heading with its description, then ``notes``: what a notebook shows."""
    return fragment(sections=sections, notes=notes)
