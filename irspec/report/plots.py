"""Plots of evaluation results, drawn with matplotlib (a dependency, imported only when drawing).

Each figure as PNG and SVG:

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
chosen and nothing is left open), and rc settings apply only inside :func:`matplotlib.rc_context`. The
SVG files carry no date and fixed ids, so the same results give the same bytes. This module only
draws: it never evaluates, and is given the results it draws.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from irspec.errors import IrspecError

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
    "render_files",
    "render_power",
    "require_matplotlib",
]

_LEVELS = tuple(i / 10 for i in range(11))
IPREC_SPECS: tuple[str, ...] = tuple(f"IPrec@{level:.1f}" for level in _LEVELS)
"""The 11 recall levels of the precision-recall curves, as metric specs."""

MISSING_MATPLOTLIB = "plots need matplotlib (an irspec dependency): pip install matplotlib"
"""The error when matplotlib cannot be imported."""

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
    "svg.hashsalt": "irspec",  # fixed ids: the same figure gives the same SVG bytes
    "svg.fonttype": "path",  # glyphs as paths: the SVG looks the same without the fonts installed
}
_NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}
_MARKERS = "osD^vP*Xph<>"
_LINESTYLES = ("-", "--", "-.", ":")


ROC_CUTOFFS: tuple[int, ...] = (1, 2, 3, 5, 10, 15, 20, 30, 50, 100, 200, 500, 1000)
"""The cutoffs of the ROC curve's points (trec_eval's standard cutoffs and a few more at the top)."""
CONFUSION_K = 10
"""The default cutoff of the confusion matrix: the top 10 count as retrieved."""
JITTER_SEED = 0
"""The seed of the per-topic dots' jitter in the distributions plots (it moves the dots, no value)."""


@dataclass(frozen=True)
class Confusion:
    """Retrieved in the top ``k`` against relevant, summed over ``topics``: relevant retrieved (true
    positives), non-relevant retrieved (false positives, unjudged documents included), relevant
    missed (false negatives), and non-relevant not retrieved (true negatives): ``None`` without the
    collection size, which is the only way to know them."""

    k: int
    topics: int
    relevant_retrieved: int
    nonrelevant_retrieved: int
    relevant_missed: int
    nonrelevant_missed: int | None


@dataclass(frozen=True)
class FigureData:
    """What the figures beyond the precision-recall curves draw, per run name: the ROC points
    ``(fall-out, recall)`` from the origin through :data:`ROC_CUTOFFS`, means over the topics; the
    per-topic AP values (the histograms); the :class:`Confusion` at ``k``. ``collection_size`` is
    ``None`` when fall-out counts judged non-relevant documents only."""

    roc: dict[str, list[tuple[float, float]]]
    ap: dict[str, list[float]]
    confusion: dict[str, Confusion]
    collection_size: int | None


def figure_specs(collection_size: int | None, k: int = CONFUSION_K) -> tuple[str, ...]:
    """The metric specs :func:`figure_data` reads: AP, recall and fall-out at
    every ROC cutoff (judged-only fall-out without ``collection_size``), and P@k, NumRet and NumRel
    for the confusion matrix at ``k``."""
    fallout = "Fallout" if collection_size is not None else "Fallout(judged=true)"
    roc = [spec for c in ROC_CUTOFFS for spec in (f"R@{c}", f"{fallout}@{c}")]
    return ("AP", *roc, f"P@{k}", "NumRet", "NumRel")


def figure_metrics(collection_size: int | None, k: int = CONFUSION_K) -> tuple[str, ...]:
    """Every metric spec the figures read from the runs: :data:`IPREC_SPECS` (:func:`precision_recall`)
    and :func:`figure_specs` (:func:`figure_data`). A plan that draws evaluates its runs on these as an
    evaluation of their own, beside the one its tables show, which holds the plan's metrics alone."""
    return (*IPREC_SPECS, *figure_specs(collection_size, k))


def figure_data(results: Sequence[Any], collection_size: int | None, k: int = CONFUSION_K) -> FigureData:
    """The ROC points, AP values and confusion matrices of ``results`` (evaluated with
    :func:`figure_specs` of the same ``collection_size`` and ``k`` among their metrics)."""
    import numpy as np

    fallout = "Fallout" if collection_size is not None else "Fallout(judged=true)"
    roc, ap, confusion = {}, {}, {}
    for res in results:
        agg = res.aggregate()
        roc[res.run_name] = [(0.0, 0.0)] + [(agg[f"{fallout}@{c}"], agg[f"R@{c}"]) for c in ROC_CUTOFFS]
        values = res.column("AP")
        ap[res.run_name] = [float(v) for v in values[np.isfinite(values)]]
        # P@k is relevant-in-top-k / k exactly, so P@k * k is that count up to the last bit
        tp = np.rint(res.column(f"P@{k}") * k).astype(np.int64)
        fp = np.minimum(res.column("NumRet").astype(np.int64), k) - tp
        rel = res.column("NumRel").astype(np.int64)
        tn = None if collection_size is None else int((collection_size - rel - fp).sum())
        confusion[res.run_name] = Confusion(
            k, len(tp), int(tp.sum()), int(fp.sum()), int((rel - tp).sum()), tn
        )
    return FigureData(roc, ap, confusion, collection_size)


@dataclass(frozen=True)
class Plot:
    """One rendered figure: ``name`` (the file stem, such as ``pr-curves``), a ``title``, a one-line
    ``description``, its ``svg`` and ``png`` bytes (``None`` when that format was not asked for), and
    the ``seed`` of any random numbers it drew (the distributions' jitter), for the provenance."""

    name: str
    title: str
    description: str
    svg: bytes | None
    png: bytes | None
    seed: int | None = None


def require_matplotlib() -> Any:
    """matplotlib, or an :class:`~irspec.errors.IrspecError` saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise IrspecError(MISSING_MATPLOTLIB) from None
    return matplotlib


def precision_recall(results: Sequence[Any]) -> dict[str, list[float]]:
    """The 11-point interpolated precision-recall curve of each run: its mean ``IPrec`` at recall 0.0,
    0.1, ..., 1.0, read from ``results`` evaluated with :data:`IPREC_SPECS` among their metrics
    (:func:`figure_metrics`, which a plan evaluates when an output draws plots). ``{run name: curve}``."""
    curves = {}
    for res in results:
        agg = res.aggregate()
        at = {m.get("recall"): agg[str(m)] for m in res.metrics if m.name == "IPrec"}
        missing = [spec for spec, level in zip(IPREC_SPECS, _LEVELS, strict=True) if level not in at]
        if missing:
            raise ValueError(f"{res.run_name} was evaluated without {', '.join(missing)}")
        curves[res.run_name] = [at[level] for level in _LEVELS]
    return curves


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text.replace("@", "_at_")).strip("_") or "metric"


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


def _aligned(a: Any, b: Any, metric: str) -> tuple[list[str], Any, Any]:
    """Two results' values of ``metric`` on the queries both have, paired by id (undefined left out)."""
    import numpy as np

    qa = np.asarray(a.query_ids, dtype=str)
    qb = np.asarray(b.query_ids, dtype=str)
    common, ia, ib = np.intersect1d(qa, qb, assume_unique=True, return_indices=True)
    x, y = a.column(metric)[ia], b.column(metric)[ib]
    ok = np.isfinite(x) & np.isfinite(y)
    return [str(q) for q in common[ok]], x[ok], y[ok]


# Up to this many topics, the differences chart names each one under its bar.
_MAX_TOPIC_LABELS = 80


def differences_figure(results: Sequence[Any], metric: str, baseline: str) -> Any:
    """Per-topic differences from ``baseline`` in ``metric``, sorted, one panel per other run."""
    import numpy as np

    by_name = {r.run_name: r for r in results}
    base = by_name[baseline]
    others = [r for r in results if r.run_name != baseline]
    n_topics = max((len(r.query_ids) for r in results), default=0)
    width = min(max(6.5, 0.14 * n_topics + 2.0), 16.0)
    fig = _new_figure(width, 1.0 + 2.3 * len(others))
    axes = fig.subplots(len(others), 1, sharey=True, squeeze=False)[:, 0]
    for ax, run in zip(axes, others, strict=True):
        topics, x, y = _aligned(run, base, metric)
        d = x - y
        order = np.argsort(-d, kind="stable")
        d = d[order]
        colors = np.where(d > 0, "#1a7f37", np.where(d < 0, "#cf222e", "#8c959f"))
        ax.bar(np.arange(len(d)), d, color=colors, width=0.8)
        ax.axhline(0, color="#57606a", linewidth=0.8)
        wins, ties, losses = int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
        mean = float(d.mean()) if len(d) else math.nan
        ax.set_title(
            f"{run.run_name} − {baseline}: {wins} better, {ties} tied, {losses} worse; mean {mean:+.4f}",
            loc="left",
        )
        ax.set_ylabel(f"Δ {metric}")
        ax.set_xlim(-0.6, max(len(d) - 0.4, 0.6))
        ax.grid(axis="x", visible=False)
        if len(d) <= _MAX_TOPIC_LABELS:
            ax.set_xticks(np.arange(len(d)), [topics[i] for i in order], rotation=90, fontsize=6.5)
        else:
            ax.set_xticks([])
        ax.set_xlabel(
            "topic, sorted by difference"
            if len(d) <= _MAX_TOPIC_LABELS
            else f"{len(d)} topics, sorted by difference"
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
    rng = np.random.default_rng(JITTER_SEED)  # jitter only: a fixed seed keeps the figure reproducible
    for pos, v in zip(positions, data, strict=True):
        ax.scatter(
            v,
            pos + rng.uniform(-0.18, 0.18, len(v)),
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


def _fallout_words(collection_size: int | None) -> str:
    if collection_size is None:
        return "judged non-relevant documents only (no collection size given: -N or collection_size)"
    return f"non-relevant documents of a collection of {collection_size:,}"


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
    ax.set_xlabel("Fall-out: " + _fallout_words(data.collection_size))
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


def _input_figures(inputs: Sequence[Any]) -> Iterable[tuple[str, str, str, Any]]:
    for res in inputs:
        for table in res.tables:
            title = f"{res.run_name}: {table.title}"
            yield (
                f"{_slug(res.run_name)}-{_slug(table.title.lower())}",
                title,
                table.description,
                input_table_figure(table),
            )


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
        ax.hist(values, bins=bins, color=style["color"], alpha=0.75, edgecolor="white")
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
    import numpy as np
    from matplotlib.patches import Rectangle

    if not len(values):
        return
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    iqr = q3 - q1
    low = values[values >= q1 - 1.5 * iqr].min()
    high = values[values <= q3 + 1.5 * iqr].max()
    half = height / 2
    ax.add_patch(
        Rectangle((q1, pos - half), q3 - q1, height, facecolor="#ddf4ff", edgecolor="#0969da", zorder=2)
    )
    ax.plot([median, median], [pos - half, pos + half], color="#0969da", linewidth=1.5, zorder=2.5)
    ax.plot([low, q1], [pos, pos], color="#57606a", linewidth=1, zorder=1.5)
    ax.plot([q3, high], [pos, pos], color="#57606a", linewidth=1, zorder=1.5)
    ax.plot([low, low], [pos - half / 2, pos + half / 2], color="#57606a", linewidth=1, zorder=1.5)
    ax.plot([high, high], [pos - half / 2, pos + half / 2], color="#57606a", linewidth=1, zorder=1.5)


def _save(fig: Any, title: str, formats: Sequence[str]) -> dict[str, bytes]:
    # lay the figure out once, then keep that layout for every format (layout is most of the time)
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    out = {}
    for fmt in formats:
        buf = io.BytesIO()
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={**_NO_METADATA, "Title": title})
        else:
            fig.savefig(buf, format="png", dpi=150, metadata={"Software": None})
        out[fmt] = buf.getvalue()
    return out


def figures(
    results: Sequence[Any],
    *,
    curves: Mapping[str, Sequence[float]] | None = None,
    data: FigureData | None = None,
    baseline: str | None = None,
    inputs: Sequence[Any] = (),
) -> Iterable[tuple[str, str, str, Any]]:
    """``(name, title, description, figure)`` of every plot of ``results``, and of the tables of
    ``inputs`` (results of other inputs, a log's) after them, drawn one at a time."""
    metrics = [str(m) for m in results[0].metrics] if results else []
    if curves:
        yield (
            "pr-curves",
            "Interpolated precision-recall curves",
            (
                "11-point interpolated precision-recall curves (mean IPrec at recall 0.0, 0.1, ..., 1.0); the legend "
                "gives each run's mean over the 11 points."
            ),
            pr_figure(curves),
        )
    if data is not None:
        yield from _data_figures(data)
    used: set[str] = set()

    def unique(stem: str) -> str:
        name, i = stem, 2
        while name in used:
            name, i = f"{stem}-{i}", i + 1
        used.add(name)
        return name

    reference = baseline if baseline is not None else (results[0].run_name if results else None)
    for metric in metrics:
        slug = _slug(metric)
        if len(results) > 1 and reference is not None:
            how = "the baseline" if baseline is not None else "the first run (the plan has no baseline)"
            yield (
                unique(f"differences-{slug}"),
                f"Per-topic differences in {metric}",
                (
                    f"Each run's per-topic {metric} minus {reference}'s ({how}), sorted: green where the run is "
                    "better, red where it is worse."
                ),
                differences_figure(results, metric, reference),
            )
        yield (
            unique(f"distributions-{slug}"),
            f"Per-topic {metric}",
            (
                f"The distribution of {metric} over topics for every run: box from the first to the third "
                "quartile, line at the median, diamond at the mean, one dot per topic."
            ),
            distributions_figure(results, metric),
        )
    yield from _group_figures(results, unique)
    yield from _input_figures(inputs)


def _data_figures(data: FigureData) -> Iterable[tuple[str, str, str, Any]]:
    yield (
        "roc-curves",
        "ROC curves",
        (
            "Mean recall against mean fall-out over the topics as the cutoff grows from 0 to "
            f"{ROC_CUTOFFS[-1]} (cutoff 10 labelled); fall-out counts {_fallout_words(data.collection_size)}."
        ),
        roc_figure(data),
    )
    yield (
        "ap-histograms",
        "Histograms of AP over topics",
        "How many topics of each run have an AP in each tenth of [0, 1]; the dashed line is the run's mean AP.",
        ap_histogram_figure(data),
    )
    k = next(iter(data.confusion.values())).k if data.confusion else CONFUSION_K
    unknown = (
        ""
        if data.collection_size is not None
        else " Non-relevant documents not retrieved are unknown without the collection size (-N or collection_size)."
    )
    yield (
        f"confusion-at-{k}",
        f"Confusion matrices at {k}",
        (
            f"Per run, summed over topics: the top {k} documents (fewer when a ranking is shorter) count as "
            f"retrieved; non-relevant includes unjudged documents.{unknown}"
        ),
        confusion_figure(data),
    )


def render(
    results: Sequence[Any],
    *,
    curves: Mapping[str, Sequence[float]] | None = None,
    data: FigureData | None = None,
    baseline: str | None = None,
    formats: Sequence[str] = ("svg", "png"),
    progress: Any = None,
    inputs: Sequence[Any] = (),
) -> list[Plot]:
    """Draw every plot of ``results`` (one :class:`~irspec.evaluation.result.Result` per run, same metrics) and
    return them as SVG and PNG bytes.

    ``curves`` are the runs' precision-recall curves (:func:`precision_recall`); without them there is
    no ``pr-curves`` plot. ``data`` (:func:`figure_data`) gives the ROC curves, the AP histograms and
    the confusion matrices; without it there are none. ``baseline`` names the run the differences are taken from; without one, the
    first run. ``inputs`` are results of other inputs (a log's), whose tables are drawn too
    (:func:`input_table_figure`). ``formats`` are the encodings made (``svg``, ``png``); ``progress`` (an
    :class:`irspec.progress.Progress`) counts the figures drawn. Raises
    :class:`~irspec.errors.IrspecError` when matplotlib is missing.
    """
    matplotlib = require_matplotlib()
    unknown = set(formats) - {"svg", "png"}
    if unknown:
        raise ValueError(f"unknown plot formats: {', '.join(sorted(unknown))}")
    if progress is not None:
        n_metrics = len(results[0].metrics) if results else 0
        progress.total = (
            (1 if curves else 0) + (3 if data else 0) + n_metrics * (2 if len(results) > 1 else 1)
        )
        progress.total += sum(len(res.tables) for res in inputs)
    out = []
    with matplotlib.rc_context(_RC):
        for name, title, description, fig in figures(
            results, curves=curves, data=data, baseline=baseline, inputs=inputs
        ):
            saved = _save(fig, title, formats)
            seed = JITTER_SEED if name.startswith("distributions-") else None  # the only figure that jitters
            out.append(Plot(name, title, description, saved.get("svg"), saved.get("png"), seed))
            if progress is not None:
                progress.update(len(out), detail=name)
    return out


def render_files(plots: Sequence[Plot]) -> dict[str, bytes]:
    """``{file name: bytes}``: a PNG and an SVG file per plot, for :func:`irspec.report.write_files_atomic`."""
    files = {}
    for p in plots:
        for ext, data in (("png", p.png), ("svg", p.svg)):
            if data is None:
                raise ValueError(f"plot {p.name} was rendered without {ext}")
            files[f"{p.name}.{ext}"] = data
    return files


def _group_tables(results: Sequence[Any]) -> dict[str, list[tuple[str, Any]]]:
    """``{metric: [(run, table)]}``: the runs' query-group tables (:class:`irspec.experiment.groups.GroupTable`,
    told by their ``metric``), in run order."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for res in results:
        for table in res.tables:
            if getattr(table, "metric", ""):
                found.setdefault(table.metric, []).append((res.run_name, table))
    return found


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


def _group_figures(results: Sequence[Any], unique: Any) -> Iterable[tuple[str, str, str, Any]]:
    for metric, tables in _group_tables(results).items():
        yield (
            unique(f"groups-{_slug(metric)}"),
            f"{metric} by query group",
            (
                f"Every run's mean {metric} per group of queries with its 95% t interval (none for a group of one "
                "query); below the dotted line, the macro mean over the groups and the micro mean over all queries."
            ),
            group_figure(metric, tables),
        )


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
                    [_power_at(curve, curve.needed)],
                    marker=style["marker"],
                    color=style["color"],
                    markersize=5,
                )
            if curve.at_hand <= ends:
                ax.plot(
                    [curve.at_hand],
                    [_power_at(curve, curve.at_hand)],
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


def _power_at(curve: Any, n: int) -> float:
    """A curve's power at ``n`` topics, read off its points (linear between two of them)."""
    import numpy as np

    return float(np.interp(n, curve.topics, curve.power))


def render_power(
    curves: Sequence[Any], *, target: float, formats: Sequence[str] = ("svg", "png")
) -> list[Plot]:
    """The ``power-curves`` plot (:func:`power_figure`) as SVG and PNG bytes; ``[]`` without curves (no
    delta was given). Raises :class:`~irspec.errors.IrspecError` when matplotlib is missing."""
    if not curves:
        return []
    matplotlib = require_matplotlib()
    with matplotlib.rc_context(_RC):
        fig = power_figure(curves, target)
        title = "Power against the number of topics"
        description = (
            f"The power to detect delta against the number of topics; dashed: the target power {target:g}; filled "
            "mark: the topics delta needs; hollow mark: the topics at hand."
        )
        saved = _save(fig, title, formats)
    return [Plot("power-curves", title, description, saved.get("svg"), saved.get("png"))]


# --------------------------------------------------------------------------------------------------
# Several sets of judgments


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


def render_agreement(found: Any, *, formats: Sequence[str] = ("svg", "png")) -> list[Plot]:
    """The scatter plots of an :class:`~irspec.experiment.agreement.Agreement` (``agreement-<metric>-<a>-<b>``):
    per metric and pair of sets, each run's mean under one set against the other."""
    matplotlib = require_matplotlib()
    metrics = list(dict.fromkeys(m for _, _, m, _ in found.means))
    out = []
    with matplotlib.rc_context(_RC):
        for i, a in enumerate(found.sets):
            for b in found.sets[i + 1 :]:
                for metric in metrics:
                    title = f"{metric}: {a} against {b}"
                    fig = agreement_figure(found.means, metric, a, b)
                    saved = _save(fig, title, formats)
                    out.append(
                        Plot(
                            f"agreement-{_slug(metric)}-{_slug(a)}-{_slug(b)}",
                            title,
                            f"Each run's mean {metric} under the judgments {a} (x) and {b} (y); off the diagonal the sets disagree.",
                            saved.get("svg"),
                            saved.get("png"),
                        )
                    )
    return out


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
    if len(topics) <= _MAX_TOPIC_LABELS:
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


def reproduction_figures(reproduction: Any, formats: Sequence[str] = ("svg",)) -> list[Plot]:
    """A reproduction's figures (:mod:`irspec.experiment.reproduce`): per-topic KTU and RBO (on the
    same qrels only) and ER against ΔRI, rendered in ``formats``."""
    matplotlib = require_matplotlib()
    drawn = []
    if reproduction.kind == "reproducibility":
        drawn.append(
            (
                "reproduce-order",
                "Per-topic KTU and RBO",
                "Document order per topic: 1 is the same ordering.",
                reproduction_topics_figure,
            )
        )
    drawn.append(
        (
            "reproduce-effects",
            "ER against ΔRI",
            "Overall effects per metric: the ideal reproduction is at (0, 1).",
            reproduction_effects_figure,
        )
    )
    out = []
    with matplotlib.rc_context(_RC):
        for name, title, description, draw in drawn:
            saved = _save(draw(reproduction), title, formats)
            out.append(Plot(name, title, description, saved.get("svg"), saved.get("png")))
    return out
