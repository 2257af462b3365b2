"""The table model every table format renders, and the two builders that make it.

A :class:`Table` is built once from the results (and the comparisons and the settings that made them):
:func:`build_results` gives runs as rows and metrics as columns, each value with its text at the
table's precision, whether it is the best of its column, and its significance marks;
:func:`build_comparisons` gives one row per comparison. The renderers (:mod:`.text`, :mod:`.latex`,
:mod:`.markdown`, :mod:`.html`) only translate a table into their markup and escaping: what a table
holds, which value is best and which is significant is decided here, once.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from irspec.frozen import frozen
from irspec.report.marks import Method, direction, letters_text, method_parts, query_count, significance_marks
from irspec.stats.student import mean_t_interval, mean_t_intervals, within

if TYPE_CHECKING:
    from irspec.evaluation.evaluated import Evaluated

__all__ = [
    "BRIEF_COLUMNS",
    "FULL_COLUMNS",
    "INTERVALS",
    "Block",
    "Cell",
    "Column",
    "Row",
    "Table",
    "averaged_legend",
    "build_comparisons",
    "build_results",
    "build_table",
    "check_decimals",
    "input_blocks",
    "interval_legend",
    "marks_legend",
    "p_text",
    "value_text",
]


class Cell(NamedTuple):
    """One cell: its ``text`` as plain text (a name, or a number at the table's precision; ``-`` when
    undefined), the ``value`` behind it (a float, a tuple for an interval, ``None`` for a name),
    whether it is the best of its column (``bold``), its significance ``marks``: ``better`` or
    ``worse`` than the baseline, or the letters of the runs it is significantly better than; and, for a
    mean in a table with intervals, its confidence ``interval`` as text (``[0.4012, 0.5122]``)."""

    text: str
    value: Any = None
    bold: bool = False
    marks: str = ""
    interval: str = ""


class Column(NamedTuple):
    """A column: its ``key`` (the text tables' header: ``run``, a metric's canonical text, ``p adj``),
    its ``title`` as a page shows it (``Run``, ``Mean vs.``), and how its cells ``align`` (``left``,
    ``right`` or ``center``)."""

    key: str
    title: str
    align: str = "right"


class Row(NamedTuple):
    """A row of cells. A run's row says its run's ``letter`` (tables without a baseline) or that it is
    the ``baseline``, both of which label its first cell; a comparison's row says whether it is
    ``significant``."""

    cells: tuple[Cell, ...]
    letter: str = ""
    baseline: bool = False
    significant: bool = False


class Block(NamedTuple):
    """One tabular: its columns and rows. Results with other metrics (a log's beside the runs') get a
    block of their own."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    @property
    def marked(self) -> bool:
        """Whether any cell has significance marks (LaTeX then gives the marks a column of their own)."""
        return any(c.marks for r in self.rows for c in r.cells)


@frozen
class Table:
    """A results or comparisons table (``kind``), built once and rendered per format.

    ``queries`` says how many queries the results are means over (``"50 queries"``). With comparison
    settings, ``method`` says how runs were compared, and ``baseline`` or ``letters`` (run name ->
    letter) name what the marks refer to. A comparisons table also has the ``confidence`` and
    ``ci_method`` of its intervals. A results table with intervals around its means says what they
    are in ``interval`` (:func:`interval_legend` puts it in words). ``notes`` are told after the table.
    """

    kind: str
    blocks: tuple[Block, ...]
    queries: str
    method: Method | None = None
    baseline: str | None = None
    letters: Mapping[str, str] = field(default_factory=dict)
    confidence: float | None = None
    ci_method: str = ""
    notes: tuple[str, ...] = ()
    interval: str = ""
    baselines: tuple[str, ...] = ()
    """The baselines when there are several (the runs are then lettered, see :class:`~.marks.Marks`)."""
    averaged: tuple[str, ...] = ()
    """What each system of several runs averaged, in words (:func:`averaged_legend` puts them together)."""

    @property
    def marked(self) -> bool:
        """Whether the results carry significance marks (a baseline, or lettered runs) to explain."""
        return self.baseline is not None or bool(self.letters)

    @property
    def any_best(self) -> bool:
        """Whether any value is the best of its column."""
        return any(c.bold for b in self.blocks for r in b.rows for c in r.cells)


def input_blocks(results: Sequence[Evaluated], *, decimals: int = 4) -> list[tuple[str, str, Block]]:
    """The tables the results' inputs offer beside their metrics (a log's top queries, see
    :class:`~irspec.spec.definitions.InputTable`), as ``(heading, description, block)``: the heading names the
    result, numbers that are not integers are shown at ``decimals``."""
    found = []
    for res in results:
        for t in res.tables:
            columns = tuple(
                Column(name, name, "left" if i == 0 else "right") for i, name in enumerate(t.columns)
            )
            rows = tuple(Row(tuple(Cell(_plain_text(v, decimals), v) for v in r)) for r in t.rows)
            found.append((f"{res.run_name}: {t.title}", t.description, Block(columns, rows)))
    return found


def _plain_text(value: Any, decimals: int) -> str:
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


def check_decimals(decimals: int) -> None:
    """Raise :class:`ValueError` unless ``decimals`` is an integer from 0 to 10."""
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 10:
        raise ValueError(f"decimals must be an integer from 0 to 10, got {decimals!r}")


def value_text(value: float, metric: Any, decimals: int) -> str:
    """A value as tables show it: ``decimals`` places, counts as integers, ``-`` when undefined."""
    if math.isnan(value):
        return "-"
    if metric.aggregate == "sum" and float(value).is_integer():
        return str(int(value))
    return f"{value:.{decimals}f}"


def p_text(p: float) -> str:
    """A p-value as tables show it: four places, or two significant digits below 0.001."""
    return f"{p:.4f}" if p >= 1e-3 or p == 0 else f"{p:.1e}"


def groups(results: Sequence[Evaluated]) -> list[list[Evaluated]]:
    """Consecutive results with the same metrics: one block each."""
    out: list[list[Evaluated]] = []
    for res in results:
        if out and out[-1][0].metrics == res.metrics:
            out[-1].append(res)
        else:
            out.append([res])
    return out


def _best(
    group: Sequence[Evaluated], aggregates: Sequence[dict[str, float]], decimals: int
) -> set[tuple[str, str]]:
    """The cells holding the best value of their column, as shown (ties at the shown precision all count)."""
    out: set[tuple[str, str]] = set()
    if len(group) < 2:
        return out
    for m in group[0].metrics:
        way = direction(m)
        if not way:
            continue
        shown = {}
        for res, agg in zip(group, aggregates, strict=True):
            v = agg[str(m)]
            if not math.isnan(v):
                shown[res.run_name] = float(value_text(v, m, decimals))
        if len(set(shown.values())) < 2:
            continue  # all equal: nothing stands out
        top = max(shown.values()) if way > 0 else min(shown.values())
        out.update((name, str(m)) for name, v in shown.items() if v == top)
    return out


INTERVALS = ("t", "bootstrap")
"""The confidence intervals a results table can show around its means (:func:`irspec.stats.significance.mean_ci`)."""

_RESAMPLES = 10_000
INTERVAL_SEED = 42
"""The seed of the bootstrap intervals a results table shows (a report's provenance names it)."""
_INTERVAL_WORDS = {
    "t": "t distribution over the queries, cut at the bounds of the metric",
    "bootstrap": f"BCa bootstrap over the queries, {_RESAMPLES} resamples, seed {INTERVAL_SEED}",
}


def _intervals(res: Evaluated, aggregate: Mapping[str, float], method: str, decimals: int) -> dict[str, str]:
    """The 95% interval of each of ``res``'s means (a sum, a geometric mean or a text has none), as
    text at the table's precision; a mean over fewer than two queries has none either."""
    found: dict[str, tuple[float, float]] = {}
    columns = []  # (metric, its values without NaN)
    undefined = np.isnan(res.values).any(axis=0)
    for j, m in enumerate(res.metrics):
        if m.aggregate != "mean":
            continue
        values = res.values[:, j]
        if undefined[j]:
            values = values[~np.isnan(values)]
        if len(values) >= 2:
            columns.append((m, values))
    if method == "t":
        # The default table's: Student's t quantile in plain Python, no scipy to load; the columns of
        # one length (every metric defined on every query, the usual case) in one call.
        full = [(m, v) for m, v in columns if len(v) == len(res.values)]
        if len(full) > 1:
            rows = np.stack([v for _, v in full])
            lows, highs = mean_t_intervals(rows, np.array([aggregate[str(m)] for m, _ in full]))
            for (m, _), low, high in zip(full, lows.tolist(), highs.tolist(), strict=True):
                found[str(m)] = within(low, high, _bounds(m))
        interval: Callable[..., tuple[float, float]] = mean_t_interval
    else:
        from irspec.stats import (
            significance as stats,
        )  # scipy: loaded only for a table with bootstrap intervals

        interval = functools.partial(stats.mean_ci, method=method, resamples=_RESAMPLES, seed=INTERVAL_SEED)
    out = {}
    for m, values in columns:
        key = str(m)
        if key not in found:  # a column alone: contiguous, as numpy sums every column alike
            found[key] = interval(np.ascontiguousarray(values), mean=aggregate[key], bounds=_bounds(m))
        low, high = found[key]
        out[key] = f"[{low:.{decimals}f}, {high:.{decimals}f}]"
    return out


def _bounds(metric: Any) -> tuple[float | None, float | None]:
    """The bounds a metric's values cannot pass (its definition's), which its interval is cut at."""
    return metric.definition.bounds if metric.definition is not None else (None, None)


def interval_legend(table: Table) -> str:
    """The sentence that says what a results table's intervals are, in plain text ("" without them)."""
    if not table.interval:
        return ""
    return f"[low, high]: the 95% confidence interval of the mean ({_INTERVAL_WORDS[table.interval]})."


def averaged_legend(table: Table) -> str:
    """The sentences that say what a results table's systems of several runs averaged, and what their
    spread rows are, in plain text ("" without such systems)."""
    if not table.averaged:
        return ""
    said = " ".join(f"{text}." for text in table.averaged)
    if table.kind != "results":
        return said
    return f"{said} Under each such system: the sample sd, and the lowest/highest, of its runs' means."


def _averaged(results: Sequence[Any]) -> tuple[str, ...]:
    """What each system of several runs among ``results`` averaged (its ``averaged`` text)."""
    return tuple(res.averaged for res in results if getattr(res, "runs", ()))


def _spread_rows(res: Any, metrics: Sequence[Any], decimals: int, pad: tuple[Cell, ...]) -> list[Row]:
    """A system's two spread rows (the sd of its runs' means, then the lowest/highest); none for a run.
    The system is read by its attributes (``runs``, ``spread()``: :class:`irspec.evaluation.systems.SystemResult`),
    which sits above the report layer."""
    runs = getattr(res, "runs", ())
    if not runs:
        return []
    found = res.spread()
    sd, span = [], []
    for m in metrics:
        s = found.get(str(m))
        sd.append(
            Cell("-" if s is None or s.sd is None else f"{s.sd:.{decimals}f}", None if s is None else s.sd)
        )
        shown = "-" if s is None else f"{value_text(s.low, m, decimals)}/{value_text(s.high, m, decimals)}"
        span.append(Cell(shown, None if s is None else (s.low, s.high)))
    n = len(runs)
    return [
        Row((Cell(f"{res.run_name}: sd of {n} runs"), *pad, *sd)),
        Row((Cell(f"{res.run_name}: min/max of {n} runs"), *pad, *span)),
    ]


def build_results(
    results: Sequence[Evaluated],
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    *,
    decimals: int = 4,
    per_query: bool = False,
    notes: Sequence[str] = (),
    intervals: str | None = None,
) -> Table:
    """The results table: a row per run (under it, with ``per_query``, a row per query), a column per
    metric, the best value of each column bold, and the marks of the significant ``comparisons`` made
    with the settings ``compare`` (none without them); under a system of several runs, the spread of its
    runs' means (:func:`averaged_legend` says so). ``intervals`` (one of :data:`INTERVALS`) puts
    the 95% confidence interval of each mean beside it."""
    check_decimals(decimals)
    if intervals is not None and intervals not in INTERVALS:
        raise ValueError(f"intervals must be one of {', '.join(INTERVALS)} or None, not {intervals!r}")
    marks = significance_marks(results, comparisons, compare)
    blocks = []
    for group in groups(results):
        metrics = group[0].metrics
        keys = [str(m) for m in metrics]
        labels = (Column("run", "Run", "left"),) + ((Column("query", "Query", "left"),) if per_query else ())
        aggregates = [res.aggregate() for res in group]
        best = _best(group, aggregates, decimals)
        rows: list[Row] = []
        for res, agg in zip(group, aggregates, strict=True):
            name = res.run_name
            if per_query:
                for i, qid in enumerate(res.query_ids):
                    values = res.values[i]
                    cells = [
                        Cell(value_text(values[j], m, decimals), values[j]) for j, m in enumerate(metrics)
                    ]
                    rows.append(Row((Cell(name), Cell(qid), *cells)))
            shown = _intervals(res, agg, intervals, decimals) if intervals else {}
            cells = [
                Cell(
                    value_text(agg[k], m, decimals),
                    agg[k],
                    (name, k) in best,
                    marks.cells.get((name, k), ""),
                    shown.get(k, ""),
                )
                for k, m in zip(keys, metrics, strict=True)
            ]
            head = (Cell(name), Cell("all")) if per_query else (Cell(name),)
            rows.append(
                Row(
                    (*head, *cells),
                    marks.letter.get(name, ""),
                    marks.baseline is not None and name == marks.baseline,
                )
            )
            rows.extend(_spread_rows(res, metrics, decimals, (Cell(""),) if per_query else ()))
        blocks.append(Block(labels + tuple(Column(k, k) for k in keys), tuple(rows)))
    return Table(
        kind="results",
        blocks=tuple(blocks),
        queries=query_count(results),
        method=method_parts(results, comparisons, compare) if compare is not None else None,
        baseline=marks.baseline,
        letters=dict(marks.letter),
        baselines=marks.baselines,
        averaged=_averaged(results),
        notes=tuple(notes),
        # the legend only where an interval is shown (a mean over one query has none)
        interval=(intervals or "")
        if any(c.interval for b in blocks for r in b.rows for c in r.cells)
        else "",
    )


BRIEF_COLUMNS = ("metric", "a", "b", "mean a", "mean b", "diff", "CI", "d", "W/T/L", "p", "p adj", "sig")
"""The columns of a comparisons table to paste: text, LaTeX and Markdown."""

FULL_COLUMNS = (
    "metric",
    "a",
    "b",
    "mean a",
    "mean b",
    "diff",
    "CI",
    "rel",
    "d",
    "W/T/L",
    "n",
    "p",
    "p adj",
    "sig",
)
"""Every column of a comparisons table: the HTML report's."""

_TITLES = {
    "metric": "Metric", "a": "Run", "b": "vs.", "mean a": "Mean", "mean b": "Mean vs.", "diff": "Δ",
    "CI": "{confidence} CI", "rel": "Rel. change", "d": "Cohen's d", "W/T/L": "W/T/L", "n": "n", "p": "p",
    "p adj": "p adj.", "sig": "",
}  # fmt: skip


def _comparison_cells(c: Any, decimals: int) -> dict[str, Cell]:
    ci = None if c.ci_low is None or c.ci_high is None else (c.ci_low, c.ci_high)
    return {
        "metric": Cell(c.metric),
        "a": Cell(c.a),
        "b": Cell(c.b),
        "mean a": Cell(f"{c.mean_a:.{decimals}f}", c.mean_a),
        "mean b": Cell(f"{c.mean_b:.{decimals}f}", c.mean_b),
        "diff": Cell(f"{c.mean_difference:+.{decimals}f}", c.mean_difference),
        "CI": Cell("-" if ci is None else f"[{ci[0]:+.{decimals}f}, {ci[1]:+.{decimals}f}]", ci),
        "rel": Cell("-" if c.relative_change is None else f"{c.relative_change:+.1%}", c.relative_change),
        "d": Cell("-" if c.effect_size is None else f"{c.effect_size:+.2f}", c.effect_size),
        "W/T/L": Cell(f"{c.wins}/{c.ties}/{c.losses}", (c.wins, c.ties, c.losses)),
        "n": Cell(str(c.n), c.n),
        "p": Cell(p_text(c.p_value), c.p_value),
        "p adj": Cell(p_text(c.p_adjusted), c.p_adjusted),
        "sig": Cell("*" if c.significant else "", c.significant),
    }


def build_comparisons(
    results: Sequence[Evaluated],
    comparisons: Sequence[Any],
    compare: Any,
    *,
    decimals: int = 4,
    columns: Sequence[str] = BRIEF_COLUMNS,
    notes: Sequence[str] = (),
) -> Table:
    """The comparisons table: one row per comparison with the given ``columns`` (keys of
    :data:`FULL_COLUMNS`): the means, the difference, its interval, relative change, effect size,
    W/T/L, the number of queries, p and adjusted p, and whether it is significant."""
    check_decimals(decimals)
    c0 = comparisons[0] if comparisons else None
    confidence = f"{c0.confidence:.0%}" if c0 is not None else ""
    heads = tuple(
        Column(
            k,
            _TITLES[k].format(confidence=confidence),
            "left" if k in ("metric", "a", "b") else "center" if k == "sig" else "right",
        )
        for k in columns
    )
    rows = []
    for c in comparisons:
        cells = _comparison_cells(c, decimals)
        rows.append(Row(tuple(cells[k] for k in columns), significant=bool(c.significant)))
    return Table(
        kind="comparisons",
        blocks=(Block(heads, tuple(rows)),),
        queries=query_count(results),
        method=method_parts(results, comparisons, compare)
        if c0 is not None and compare is not None
        else None,
        baseline=getattr(compare, "baseline", None),
        confidence=c0.confidence if c0 is not None else None,
        ci_method=c0.ci_method if c0 is not None else "",
        notes=tuple(notes),
        averaged=_averaged(results),
    )


def marks_legend(table: Table, escape: Callable[[str], str], better_worse: str, alpha_format: str) -> str:
    """The sentence that explains a results table's significance marks, in one markup: ``escape``
    escapes text, ``better_worse`` is the markup of the two baseline marks, ``alpha_format`` shows alpha."""
    assert table.method is not None
    test, correction, alpha, queries = table.method
    if table.baseline is not None:
        what = f"{better_worse}: significantly better/worse than {escape(table.baseline)}"
    else:
        what = escape(letters_text(dict(table.letters), table.baselines, "Superscript letters"))
    compared = "" if queries == table.queries else f"; compared on {queries}"
    return f"{what} ({escape(test)}; {escape(correction)}; {alpha_format.format(alpha)}{compared})."


def build_table(
    results: Sequence[Evaluated],
    *,
    comparisons: Sequence[Any] = (),
    compare: Any = None,
    notes: Sequence[str] = (),
    decimals: int = 4,
    content: str = "results",
    intervals: str | None = None,
) -> Table:
    """The table a paper format shows: the results (``content="results"``, with ``intervals`` as
    :func:`build_results` takes them), or the comparisons with :data:`BRIEF_COLUMNS`
    (``content="comparisons"``)."""
    if content == "comparisons":
        return build_comparisons(
            results, comparisons, compare, decimals=decimals, columns=BRIEF_COLUMNS, notes=notes
        )
    return build_results(results, comparisons, compare, decimals=decimals, notes=notes, intervals=intervals)
