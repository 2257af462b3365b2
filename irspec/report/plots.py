"""The figures of a report as files: SVG written by irspec (:mod:`irspec.report.charts`) and PNG drawn
with matplotlib (a dependency, imported only when a PNG is drawn).

The figures, what each shows and the values behind them are :mod:`irspec.report.figures`'s; this module
renders them (:func:`render`) and keeps the matplotlib drawing of each kind for the PNG files of the
``plots`` output, the pictures people put in papers:

``pr-curves``
    The 11-point interpolated precision-recall curve of every run: the mean over queries of
    ``IPrec@0.0``, ``IPrec@0.1``, ..., ``IPrec@1.0`` (:data:`IPREC_SPECS`), read from results the engine
    evaluated with them.
``differences-<metric>``
    Per metric, each run's per-topic difference from the baseline, sorted: the "who wins where" bar
    chart, one panel per run, topics paired by query id.
``roc-curves``
    Every run's mean recall against its mean fall-out at the cutoffs :data:`ROC_CUTOFFS`: fall-out over
    the collection's non-relevant documents when the collection size is known, over the judged
    non-relevant ones otherwise (the axis says which).
``ap-histograms``
    Per run, how many topics have an AP in each tenth of [0, 1].
``confusion-at-10``
    Per run, the top 10 (retrieved) against relevant, summed over topics; the cell of non-relevant
    documents not retrieved needs the collection size.
``distributions-<metric>``
    Per metric, the per-topic scores of every run: a box plot per run with the topics as dots and the
    mean as a diamond.
``groups-<metric>``
    Per metric, with query groups (:mod:`irspec.experiment.groups`): every run's mean per group with its 95% t
    interval, then the macro and micro means.
``agreement-<metric>-<a>-<b>``
    With several sets of judgments (:func:`render_agreement`), each run's mean under set ``a`` against
    its mean under set ``b``, one point per run, beside the diagonal of perfect agreement.
``<input>-<table>``
    Per table an input offers beside its metrics (:class:`~irspec.spec.definitions.InputTable`: a log's top
    queries, its queries per hour), its second column against its first, as a bar or line chart.
``power-curves``
    With a plan's ``power`` section (:func:`irspec.power`): the power to detect delta against the number
    of topics, per comparison and per metric's ANOVA (:func:`render_power`).

matplotlib is imported only inside the functions here, figures are drawn on
:class:`matplotlib.figure.Figure` with the Agg canvas (never through pyplot, so no global backend is
chosen and nothing is left open), and rc settings apply only inside :func:`matplotlib.rc_context`. Both
encodings carry no date, so the same results give the same bytes. This module only draws: it never
evaluates, and is given the results it draws.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from irspec.errors import IrspecError
from irspec.report import charts
from irspec.report.figures import (
    CONFUSION_K,
    IPREC_SPECS,
    JITTER_SEED,
    MAX_TOPIC_LABELS,
    ROC_CUTOFFS,
    Confusion,
    Figure,
    FigureData,
    Plot,
    agreement_figures,
    box,
    differences,
    fallout_words,
    figure_data,
    figure_metrics,
    figure_specs,
    histogram,
    jitter,
    power_at,
    power_figures,
    precision_recall,
    report_figures,
)
from irspec.report.figures import aligned as _aligned  # noqa: F401  (the name tests and older code use)
from irspec.report.figures import reproduction_figures as _reproduction_figures

__all__ = [
    "CONFUSION_K",
    "IPREC_SPECS",
    "JITTER_SEED",
    "MISSING_MATPLOTLIB",
    "ROC_CUTOFFS",
    "Confusion",
    "FigureData",
    "Plot",
    "agreement_figure",
    "figure_data",
    "figure_metrics",
    "figure_specs",
    "group_figure",
    "power_figure",
    "precision_recall",
    "render",
    "render_agreement",
    "render_figures",
    "render_files",
    "render_power",
    "require_matplotlib",
]

MISSING_MATPLOTLIB = "plots need matplotlib (an irspec dependency): pip install matplotlib"
"""The error when matplotlib cannot be imported (and a PNG is asked for)."""

# Readable defaults, applied only while drawing and saving.
_RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
_MARKERS = "osD^vP*Xph<>"
_LINESTYLES = ("-", "--", "-.", ":")
_FORMATS = ("svg", "png")


def require_matplotlib() -> Any:
    """matplotlib, or an :class:`~irspec.errors.IrspecError` saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise IrspecError(MISSING_MATPLOTLIB) from None
    return matplotlib


def render_figures(
    figures: Sequence[Figure],
    *,
    formats: Sequence[str] = _FORMATS,
    anchor: charts.Anchor | None = None,
    progress: Any = None,
) -> list[Plot]:
    """``figures`` (:mod:`irspec.report.figures`) rendered in ``formats``: ``svg`` written by
    :mod:`irspec.report.charts` (with ``anchor``, a topic's mark links to its query's row), ``png``
    drawn with matplotlib (an :class:`~irspec.errors.IrspecError` when it is missing). ``progress`` (an
    :class:`irspec.progress.Progress`) counts the figures done."""
    unknown = set(formats) - set(_FORMATS)
    if unknown:
        raise ValueError(f"unknown plot formats: {', '.join(sorted(unknown))}")
    matplotlib = require_matplotlib() if "png" in formats else None
    if progress is not None:
        progress.total = len(figures)
    out = []
    for figure in figures:
        svg = charts.svg_bytes(figure, anchor) if "svg" in formats else None
        png = None
        if matplotlib is not None:
            with matplotlib.rc_context(_RC):
                png = _png(_DRAW[figure.kind](*figure.args))
        out.append(Plot(figure.name, figure.title, figure.description, svg, png, figure.seed))
        if progress is not None:
            progress.update(len(out), detail=figure.name)
    return out


def render(
    results: Sequence[Any],
    *,
    curves: Mapping[str, Sequence[float]] | None = None,
    data: FigureData | None = None,
    baseline: str | None = None,
    formats: Sequence[str] = _FORMATS,
    progress: Any = None,
    inputs: Sequence[Any] = (),
    anchor: charts.Anchor | None = None,
) -> list[Plot]:
    """Every plot of ``results`` (one :class:`~irspec.evaluation.result.Result` per run, same metrics)
    as SVG and PNG bytes (:func:`irspec.report.figures.report_figures` lists them).

    ``curves`` are the runs' precision-recall curves (:func:`precision_recall`); without them there is
    no ``pr-curves`` plot. ``data`` (:func:`figure_data`) gives the ROC curves, the AP histograms and
    the confusion matrices; without it there are none. ``baseline`` names the run the differences are
    taken from; without one, the first run. ``inputs`` are results of other inputs (a log's), whose tables
    are drawn too. ``formats``, ``anchor`` and ``progress`` as :func:`render_figures` takes them.
    """
    unknown = set(formats) - set(_FORMATS)
    if unknown:
        raise ValueError(f"unknown plot formats: {', '.join(sorted(unknown))}")
    found = report_figures(results, curves=curves, data=data, baseline=baseline, inputs=inputs)
    return render_figures(found, formats=formats, anchor=anchor, progress=progress)


def figures(
    results: Sequence[Any],
    *,
    curves: Mapping[str, Sequence[float]] | None = None,
    data: FigureData | None = None,
    baseline: str | None = None,
    inputs: Sequence[Any] = (),
) -> Iterable[tuple[str, str, str, Any]]:
    """``(name, title, description, figure)`` of every plot of ``results``, and of the tables of
    ``inputs`` after them, each a matplotlib figure drawn when it is reached."""
    for f in report_figures(results, curves=curves, data=data, baseline=baseline, inputs=inputs):
        yield f.name, f.title, f.description, _DRAW[f.kind](*f.args)


def render_files(plots: Sequence[Plot]) -> dict[str, bytes]:
    """``{file name: bytes}``: a PNG and an SVG file per plot, for :func:`irspec.report.write_files_atomic`."""
    files = {}
    taken: set[str] = set()
    for p in plots:
        # names made of names (sets of judgments "a/b" and "a_b" both give a_b): a second of a name gets
        # -2, -3, ... rather than writing over the first's files
        name, n = p.name, 1
        while name in taken:
            n += 1
            name = f"{p.name}-{n}"
        taken.add(name)
        for ext, data in (("png", p.png), ("svg", p.svg)):
            if data is None:
                raise ValueError(f"plot {p.name} was rendered without {ext}")
            files[f"{name}.{ext}"] = data
    return files


def render_power(curves: Sequence[Any], *, target: float, formats: Sequence[str] = _FORMATS) -> list[Plot]:
    """The ``power-curves`` plot as SVG and PNG bytes; ``[]`` without curves (no delta was given)."""
    return render_figures(power_figures(curves, target), formats=formats)


def render_agreement(found: Any, *, formats: Sequence[str] = _FORMATS) -> list[Plot]:
    """The scatter plots of an :class:`~irspec.experiment.agreement.Agreement` (``agreement-<metric>-<a>-<b>``):
    per metric and pair of sets, each run's mean under one set against the other."""
    return render_figures(agreement_figures(found), formats=formats)


def reproduction_figures(reproduction: Any, formats: Sequence[str] = ("svg",)) -> list[Plot]:
    """A reproduction's figures (:mod:`irspec.experiment.reproduce`): per-topic KTU and RBO (on the
    same qrels only) and ER against ΔRI, rendered in ``formats``."""
    return render_figures(_reproduction_figures(reproduction), formats=formats)


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=150, metadata={"Software": None})
    return buf.getvalue()


# --------------------------------------------------------------------------------------------------
# The matplotlib figures (the PNG files), one per kind of figure


def _styles(n: int) -> list[dict[str, Any]]:
    """Distinct color, marker and line style per run; colours repeat only after 10 (then 20) runs."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    k = cmap.N
    return [
        {
            "color": cmap(i % k),
            "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": _LINESTYLES[(i // k) % len(_LINESTYLES)],
        }
        for i in range(n)
    ]


def _new_figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # the Agg canvas, explicitly: no pyplot, no global backend
    return fig


def pr_figure(curves: Mapping[str, Sequence[float]]) -> Any:
    """The precision-recall curves of every run in one figure, the legend outside the axes."""
    names = list(curves)
    fig = _new_figure(7.5, 4.5)
    ax = fig.add_subplot()
    recall = [i / 10 for i in range(11)]
    for name, style in zip(names, _styles(len(names)), strict=True):
        values = list(curves[name])
        mean = sum(values) / len(values)
        ax.plot(recall, values, label=f"{name} ({mean:.3f})", linewidth=1.5, markersize=4, **style)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(recall)
    ax.set_xlabel("Recall")
    ax.set_ylabel("Interpolated precision")
    ax.set_title("11-point interpolated precision-recall curves")
    fig.legend(loc="outside right upper", title="run (11-pt mean)", frameon=False)
    return fig


def differences_figure(results: Sequence[Any], metric: str, baseline: str) -> Any:
    """Per-topic differences from ``baseline`` in ``metric``, sorted, one panel per other run."""
    found = differences(results, metric, baseline)
    n_topics = max((len(r.query_ids) for r in results), default=0)
    width = min(max(6.5, 0.14 * n_topics + 2.0), 16.0)
    fig = _new_figure(width, 1.0 + 2.3 * len(found))
    axes = fig.subplots(len(found), 1, sharey=True, squeeze=False)[:, 0]
    for ax, d in zip(axes, found, strict=True):
        n = len(d.diff)
        colors = ["#1a7f37" if won > 0 else "#cf222e" if won < 0 else "#8c959f" for won in d.outcomes]
        ax.bar(range(n), d.diff, color=colors, width=0.8)
        ax.axhline(0, color="#57606a", linewidth=0.8)
        wins, ties, losses = d.counts
        ax.set_title(
            f"{d.run} − {baseline}: {wins} better, {ties} tied, {losses} worse; mean {d.mean:+.4f}",
            loc="left",
        )
        ax.set_ylabel(f"Δ {metric}")
        ax.set_xlim(-0.6, max(n - 0.4, 0.6))
        ax.grid(axis="x", visible=False)
        if n <= MAX_TOPIC_LABELS:
            ax.set_xticks(range(n), d.topics, rotation=90, fontsize=6.5)
        else:
            ax.set_xticks([])
        ax.set_xlabel(
            "topic, sorted by difference" if n <= MAX_TOPIC_LABELS else f"{n} topics, sorted by difference"
        )
    fig.suptitle(f"Per-topic differences in {metric} against {baseline}")
    return fig


def distributions_figure(results: Sequence[Any], metric: str) -> Any:
    """Per-topic scores of every run in ``metric``: horizontal box plots, the topics as dots, the mean."""
    import numpy as np

    names = [r.run_name for r in results]
    fig = _new_figure(7.5, 1.2 + 0.5 * len(names))
    ax = fig.add_subplot()
    data = []
    for r in results:
        v = r.column(metric)
        data.append(v[np.isfinite(v)])
    positions = np.arange(len(names))[::-1]  # the first run at the top
    for pos, v in zip(positions, data, strict=True):
        _box(ax, v, pos)
    for pos, v, dy in zip(positions, data, jitter([len(v) for v in data]), strict=True):
        ax.scatter(
            v,
            pos + dy,
            s=7,
            color="#57606a",
            alpha=0.45,
            linewidths=0,
            zorder=3,
        )
        if len(v):
            ax.scatter([v.mean()], [pos], marker="D", s=22, color="#cf222e", zorder=4, label="_mean")
    ax.set_yticks(positions, names)
    ax.set_ylim(-0.7, len(names) - 0.3)
    ax.set_xlabel(f"{metric} per topic")
    ax.grid(axis="y", visible=False)
    n_topics = max((len(d) for d in data), default=0)
    ax.set_title(f"Per-topic {metric} ({n_topics} topics): box = quartiles and median, diamond = mean")
    return fig


def roc_figure(data: FigureData) -> Any:
    """Every run's ROC curve: mean recall against mean fall-out as the cutoff grows, k = 10 marked."""
    names = list(data.roc)
    fig = _new_figure(7.5, 4.5)
    ax = fig.add_subplot()
    at10 = 1 + ROC_CUTOFFS.index(10)
    for name, style in zip(names, _styles(len(names)), strict=True):
        x, y = zip(*data.roc[name], strict=True)
        ax.plot(x, y, label=name, linewidth=1.5, markersize=3, **style)
        ax.annotate(
            "10",
            (x[at10], y[at10]),
            textcoords="offset points",
            xytext=(4, -9),
            fontsize=7,
            color=style["color"],
        )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(left=0)
    ax.set_xlabel("Fall-out: " + fallout_words(data.collection_size))
    ax.set_ylabel("Recall")
    ax.set_title(f"ROC curves: cutoff 0, {', '.join(map(str, ROC_CUTOFFS[:5]))}, ..., {ROC_CUTOFFS[-1]}")
    fig.legend(loc="outside right upper", title="run", frameon=False)
    return fig


def input_table_figure(table: Any) -> Any:
    """An :class:`~irspec.spec.definitions.InputTable`'s second column against its first: horizontal bars (the
    first row on top) for a ``bar`` chart, a line over the rows in order for a ``line`` chart."""
    from matplotlib.ticker import MaxNLocator

    labels = [str(r[0]) for r in table.rows]
    values = [float(r[1]) for r in table.rows]
    xlabel, ylabel = table.columns[0], table.columns[1]
    if table.chart == "bar":
        fig = _new_figure(7.5, 0.8 + 0.3 * max(len(labels), 1))
        ax = fig.add_subplot()
        ax.barh(range(len(values)), values, color="#0969da", alpha=0.8)
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()
        ax.set_xlabel(ylabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(axis="y", visible=False)
    else:
        fig = _new_figure(7.5, 3.5)
        ax = fig.add_subplot()
        ax.plot(range(len(values)), values, color="#0969da", marker="o", markersize=3, linewidth=1.5)
        step = max(1, math.ceil(len(labels) / 12))  # at most about a dozen tick labels
        ax.set_xticks(range(0, len(labels), step), labels[::step], rotation=30, ha="right")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(table.title, loc="left")
    return fig


def ap_histogram_figure(data: FigureData) -> Any:
    """Per run, the histogram of its AP over topics in bins of 0.1, the mean as a dashed line."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    names = list(data.ap)
    fig = _new_figure(7.5, 0.8 + 1.6 * len(names))
    axes = fig.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    bins = np.linspace(0.0, 1.0, 11)
    for ax, name, style in zip(axes, names, _styles(len(names)), strict=True):
        values = np.asarray(data.ap[name])
        # the counts figures.histogram gives, drawn as bars: the SVG and the PNG show the same numbers
        ax.bar(
            bins[:-1],
            histogram(data.ap[name]),
            width=0.1,
            align="edge",
            color=style["color"],
            alpha=0.75,
            edgecolor="white",
        )
        if len(values):
            ax.axvline(values.mean(), color="#57606a", linestyle="--", linewidth=1)
        mean = f"{values.mean():.4f}" if len(values) else "-"
        ax.set_title(f"{name}: {len(values)} topics, mean {mean}", loc="left")
        ax.set_ylabel("topics")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(axis="x", visible=False)
    axes[-1].set_xlim(0, 1)
    axes[-1].set_xticks(bins)
    axes[-1].set_xlabel("AP")
    return fig


def confusion_figure(data: FigureData) -> Any:
    """Per run, the 2x2 table of retrieved in the top k against relevant, summed over topics."""
    import numpy as np

    names = list(data.confusion)
    cols = min(len(names), 3)
    rows = math.ceil(len(names) / cols)
    fig = _new_figure(2.6 * cols + 0.5, 2.4 * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[len(names) :]:
        ax.set_axis_off()
    for ax, name in zip(axes, names, strict=False):  # the grid's spare axes, switched off above, have no run
        c = data.confusion[name]
        cells: list[list[int | None]] = [
            [c.relevant_retrieved, c.nonrelevant_retrieved],
            [c.relevant_missed, c.nonrelevant_missed],
        ]
        known = [v for row in cells for v in row if v is not None]
        top = max([*known, 1])
        shade = np.array([[0.0 if v is None else v / top for v in row] for row in cells])
        ax.imshow(shade, cmap="Blues", vmin=0, vmax=1.6)  # vmax > 1: the darkest cell keeps its text readable
        for i, row in enumerate(cells):
            for j, v in enumerate(row):
                ax.text(j, i, "unknown" if v is None else f"{v:,}", ha="center", va="center", fontsize=9)
        ax.set_xticks([0, 1], ["relevant", "non-relevant"])
        ax.set_yticks([0, 1], [f"top {c.k}", f"not in top {c.k}"], rotation=90, va="center")
        ax.grid(visible=False)
        ax.set_title(f"{name} ({c.topics} topics)")
    k = next(iter(data.confusion.values())).k if names else CONFUSION_K
    fig.suptitle(f"Retrieved (top {k}) against relevant, summed over topics")
    return fig


def _box(ax: Any, values: Any, pos: float, height: float = 0.6) -> None:
    """One horizontal box plot, drawn by hand: quartiles and median, whiskers to the furthest value
    within 1.5 IQR (Tukey's rule, as matplotlib's boxplot). ``Axes.boxplot`` would read every rc
    setting, which makes matplotlib import pyplot and resolve a global backend."""
    from matplotlib.patches import Rectangle

    stats = box(values)
    if stats is None:
        return
    q1, median, q3, low, high = stats
    half = height / 2
    ax.add_patch(
        Rectangle((q1, pos - half), q3 - q1, height, facecolor="#ddf4ff", edgecolor="#0969da", zorder=2)
    )
    ax.plot([median, median], [pos - half, pos + half], color="#0969da", linewidth=1.5, zorder=2.5)
    ax.plot([low, q1], [pos, pos], color="#57606a", linewidth=1, zorder=1.5)
    ax.plot([q3, high], [pos, pos], color="#57606a", linewidth=1, zorder=1.5)
    ax.plot([low, low], [pos - half / 2, pos + half / 2], color="#57606a", linewidth=1, zorder=1.5)
    ax.plot([high, high], [pos - half / 2, pos + half / 2], color="#57606a", linewidth=1, zorder=1.5)


def group_figure(metric: str, tables: Sequence[tuple[str, Any]]) -> Any:
    """Per group of queries (and the macro and micro means), every run's mean of ``metric`` as a point with
    its 95% t interval as a bar (none for a group of one query), runs side by side within a group."""
    names = [str(r[0]) for r in tables[0][1].rows]
    fig = _new_figure(7.5, 0.9 + 0.32 * len(names) * max(1, min(len(tables), 4) / 2))
    ax = fig.add_subplot()
    width = 0.7 / len(tables)
    for k, ((run, table), style) in enumerate(zip(tables, _styles(len(tables)), strict=True)):
        offset = (k - (len(tables) - 1) / 2) * width
        for i, (_, _, mean, low, high) in enumerate(table.rows):
            if math.isnan(mean):
                continue
            error = None if math.isnan(low) else [[mean - low], [high - mean]]
            ax.errorbar(
                mean,
                i + offset,
                xerr=error,
                fmt=style["marker"],
                color=style["color"],
                capsize=2.5,
                markersize=4,
                linewidth=1.2,
                label=run if i == 0 else None,
            )
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.axhline(
        len(names) - 2.5, color="#8c959f", linewidth=0.8, linestyle=":"
    )  # groups above, the summaries below
    ax.set_xlabel(f"mean {metric} (95% t interval)")
    ax.grid(axis="y", visible=False)
    ax.set_title(f"{metric} by query group", loc="left")
    if len(tables) > 1:
        fig.legend(loc="outside right upper", title="run", frameon=False)
    return fig


def power_figure(curves: Sequence[Any], target: float) -> Any:
    """Power against the number of topics (:meth:`irspec.experiment.power.PowerAnalysis.curves`): one
    line per comparison (paired t-test) in the left panel and per metric (one-way ANOVA over all
    runs) in the right, a dashed line at the ``target`` power, a filled mark where each line first
    reaches it (the topics delta needs) and a hollow one at the topics at hand."""
    designs = [d for d in ("t", "anova") if any(c.design == d for c in curves)]
    fig = _new_figure(5.0 * len(designs) + 2.5, 4.5)
    titles = {"t": "Paired t-test, per comparison", "anova": "One-way ANOVA over all runs, per metric"}
    for k, name in enumerate(designs):
        ax = fig.add_subplot(1, len(designs), k + 1)
        mine = [c for c in curves if c.design == name]
        for curve, style in zip(mine, _styles(len(mine)), strict=True):
            needs = f"needs {curve.needed}" if curve.needed is not None else "delta not given"
            ax.plot(
                curve.topics,
                curve.power,
                label=f"{curve.label} ({needs})",
                linewidth=1.3,
                color=style["color"],
                linestyle=style["linestyle"],
            )
            ends = curve.topics[-1]
            if curve.needed is not None and curve.needed <= ends:
                ax.plot(
                    [curve.needed],
                    [power_at(curve, curve.needed)],
                    marker=style["marker"],
                    color=style["color"],
                    markersize=5,
                )
            if curve.at_hand <= ends:
                ax.plot(
                    [curve.at_hand],
                    [power_at(curve, curve.at_hand)],
                    marker=style["marker"],
                    markersize=5,
                    markerfacecolor="none",
                    color=style["color"],
                )
        ax.axhline(target, color="#57606a", linestyle="--", linewidth=1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("Number of topics")
        ax.set_ylabel("Power")
        ax.set_title(titles[name])
        ax.legend(loc="lower right", frameon=False, fontsize=6)
    return fig


def agreement_figure(means: Sequence[tuple[str, str, str, float]], metric: str, a: str, b: str) -> Any:
    """Each run's mean ``metric`` under set ``a`` (x) against its mean under set ``b`` (y), one labelled
    point per run, and the diagonal where the two sets would agree; ``means`` are
    :class:`~irspec.experiment.agreement.Agreement`'s ``(set, run, metric, mean)`` rows."""
    x = {run: v for s, run, m, v in means if s == a and m == metric}
    y = {run: v for s, run, m, v in means if s == b and m == metric}
    runs = [r for r in x if r in y]
    fig = _new_figure(5.0, 4.6)
    ax = fig.add_subplot()
    values = [v for r in runs for v in (x[r], y[r]) if math.isfinite(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (high - low) * 0.08 or 0.05
    ax.plot(
        [low - pad, high + pad],
        [low - pad, high + pad],
        color="#8c959f",
        linestyle="--",
        linewidth=0.8,
        label="same under both",
    )
    for style, run in zip(_styles(len(runs)), runs, strict=True):
        ax.scatter([x[run]], [y[run]], color=style["color"], marker=style["marker"], s=36, zorder=3)
        ax.annotate(run, (x[run], y[run]), xytext=(4, 4), textcoords="offset points", fontsize=8)
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(low - pad, high + pad)
    ax.set_aspect("equal")
    ax.set_xlabel(f"{metric} under {a}")
    ax.set_ylabel(f"{metric} under {b}")
    ax.set_title(f"Mean {metric}: {a} against {b}")
    ax.legend(loc="upper left", frameon=False)
    return fig


def reproduction_topics_figure(reproduction: Any) -> Any:
    """Per-topic KTU and RBO of a reproduction's baseline and advanced pairs, as Breuer et al. (SIGIR
    2020, figure 1) draw them: one panel per measure, topics along x in id order, a line per pair."""
    fig = _new_figure(7.5, 4.8)
    axes = fig.subplots(2, 1, sharex=True, squeeze=False)[:, 0]
    styles = _styles(2)
    for ax, measure in zip(axes, ("KTU", "RBO"), strict=True):
        for pair, style in zip(reproduction.pairs, styles, strict=True):
            values = pair.ktu if measure == "KTU" else pair.rbo
            ax.plot(
                range(len(values)),
                values,
                # one legend entry per pair: the first panel's lines name the pairs for both
                label=f"{pair.role} (KTU {pair.ktu_mean:.3f}, RBO {pair.rbo_mean:.3f})"
                if measure == "KTU"
                else "_nolegend_",
                linewidth=1.2,
                markersize=3,
                **style,
            )
        ax.set_ylabel(measure)
        ax.set_ylim(-1.05 if measure == "KTU" else -0.02, 1.05)
    topics = reproduction.baseline.query_ids
    if len(topics) <= MAX_TOPIC_LABELS:
        axes[-1].set_xticks(range(len(topics)), topics, rotation=90, fontsize=6.5)
    axes[-1].set_xlabel("topic")
    fig.legend(loc="outside right upper", title="pair (means)", frameon=False)
    fig.suptitle(f"Per-topic KTU and RBO (RBO p={reproduction.rbo_p:g}, depth {reproduction.depth})")
    return fig


def reproduction_effects_figure(reproduction: Any) -> Any:
    """Effect ratio against delta relative improvement per metric, as Breuer et al. (SIGIR 2020, figure
    3) draw them: the ideal reproduction at (0, 1), the quadrants of smaller and larger effects."""
    import numpy as np

    fig = _new_figure(6.0, 4.5)
    ax = fig.add_subplot()
    ax.axhline(1, color="#57606a", linewidth=0.8)
    ax.axvline(0, color="#57606a", linewidth=0.8)
    ax.plot([0], [1], marker="*", color="#1a7f37", markersize=10, linestyle="none", label="ideal (0, 1)")
    metrics = list(reproduction.metrics)
    for metric, style in zip(metrics, _styles(len(metrics)), strict=True):
        x, y = reproduction.delta_ri[metric], reproduction.er[metric]
        if np.isfinite(x) and np.isfinite(y):
            ax.plot(
                [x],
                [y],
                linestyle="none",
                markersize=6,
                label=metric,
                color=style["color"],
                marker=style["marker"],
            )
    ax.set_xlabel("ΔRI (0: the same relative improvement)")
    ax.set_ylabel("ER (1: the same effect)")
    ax.set_title(f"Effect ratio against delta relative improvement ({reproduction.kind})")
    fig.legend(loc="outside right upper", title="metric", frameon=False)
    return fig


_DRAW: dict[str, Callable[..., Any]] = {
    "pr": pr_figure,
    "roc": roc_figure,
    "ap": ap_histogram_figure,
    "confusion": confusion_figure,
    "differences": differences_figure,
    "distributions": distributions_figure,
    "groups": group_figure,
    "input": input_table_figure,
    "power": power_figure,
    "agreement": agreement_figure,
    "reproduce-order": reproduction_topics_figure,
    "reproduce-effects": reproduction_effects_figure,
}
