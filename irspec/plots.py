"""Plots of evaluation results, drawn with matplotlib (the optional extra ``pip install 'irspec[plot]'``).

Three kinds of figure, each as PNG and SVG:

``pr-curves``
    The 11-point interpolated precision-recall curve of every run: the mean over queries of
    ``IPrec@0.0``, ``IPrec@0.1``, ..., ``IPrec@1.0`` (:data:`IPREC_SPECS`), read from results the engine
    evaluated with them.
``differences-<metric>``
    Per metric, each run's per-topic difference from the baseline, sorted: the "who wins where" bar
    chart, one panel per run, topics paired by query id.
``distributions-<metric>``
    Per metric, the per-topic scores of every run: a box plot per run with the topics as dots and the
    mean as a diamond.

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

__all__ = ["IPREC_SPECS", "Plot", "require_matplotlib", "precision_recall", "render", "render_files"]

_LEVELS = tuple(i / 10 for i in range(11))
IPREC_SPECS: tuple[str, ...] = tuple(f"IPrec@{level:.1f}" for level in _LEVELS)
"""The 11 recall levels of the precision-recall curves, as metric specs."""

_MISSING = "plots need matplotlib: pip install 'irspec[plot]'"

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


@dataclass(frozen=True)
class Plot:
    """One rendered figure: ``name`` (the file stem, such as ``pr-curves``), a ``title``, a one-line
    ``description``, and its ``svg`` and ``png`` bytes (``None`` when that format was not asked for)."""

    name: str
    title: str
    description: str
    svg: bytes | None
    png: bytes | None


def require_matplotlib() -> Any:
    """matplotlib, or an :class:`~irspec.errors.IrspecError` saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise IrspecError(_MISSING) from None
    return matplotlib


def precision_recall(results: Sequence[Any]) -> dict[str, list[float]]:
    """The 11-point interpolated precision-recall curve of each run: its mean ``IPrec`` at recall 0.0,
    0.1, ..., 1.0, read from ``results`` evaluated with :data:`IPREC_SPECS` among their metrics
    (plans evaluate them beside their own metrics when an output draws plots). ``{run name: curve}``."""
    curves = {}
    for res in results:
        agg = res.aggregate()
        at = {m.get("recall"): agg[str(m)] for m in res.metrics if m.name == "IPrec"}
        missing = [spec for spec, level in zip(IPREC_SPECS, _LEVELS) if level not in at]
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
        {"color": cmap(i % k), "marker": _MARKERS[i % len(_MARKERS)], "linestyle": _LINESTYLES[(i // k) % len(_LINESTYLES)]}
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
    for name, style in zip(names, _styles(len(names))):
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
    for ax, run in zip(axes, others):
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
            f"{run.run_name} − {baseline}: {wins} better, {ties} tied, {losses} worse; mean {mean:+.4f}", loc="left"
        )
        ax.set_ylabel(f"Δ {metric}")
        ax.set_xlim(-0.6, max(len(d) - 0.4, 0.6))
        ax.grid(axis="x", visible=False)
        if len(d) <= _MAX_TOPIC_LABELS:
            ax.set_xticks(np.arange(len(d)), [topics[i] for i in order], rotation=90, fontsize=6.5)
        else:
            ax.set_xticks([])
        ax.set_xlabel("topic, sorted by difference" if len(d) <= _MAX_TOPIC_LABELS else f"{len(d)} topics, sorted by difference")
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
    for pos, v in zip(positions, data):
        _box(ax, v, pos)
    rng = np.random.default_rng(0)  # jitter only: a fixed seed keeps the figure reproducible
    for pos, v in zip(positions, data):
        ax.scatter(v, pos + rng.uniform(-0.18, 0.18, len(v)), s=7, color="#57606a", alpha=0.45, linewidths=0, zorder=3)
        if len(v):
            ax.scatter([v.mean()], [pos], marker="D", s=22, color="#cf222e", zorder=4, label="_mean")
    ax.set_yticks(positions, names)
    ax.set_ylim(-0.7, len(names) - 0.3)
    ax.set_xlabel(f"{metric} per topic")
    ax.grid(axis="y", visible=False)
    n_topics = max((len(d) for d in data), default=0)
    ax.set_title(f"Per-topic {metric} ({n_topics} topics): box = quartiles and median, diamond = mean")
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
    ax.add_patch(Rectangle((q1, pos - half), q3 - q1, height, facecolor="#ddf4ff", edgecolor="#0969da", zorder=2))
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
    results: Sequence[Any], *, curves: Mapping[str, Sequence[float]] | None = None, baseline: str | None = None
) -> Iterable[tuple[str, str, str, Any]]:
    """``(name, title, description, figure)`` of every plot of ``results``, drawn one at a time."""
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


def render(
    results: Sequence[Any],
    *,
    curves: Mapping[str, Sequence[float]] | None = None,
    baseline: str | None = None,
    formats: Sequence[str] = ("svg", "png"),
    progress: Any = None,
) -> list[Plot]:
    """Draw every plot of ``results`` (one :class:`~irspec.engine.Result` per run, same metrics) and
    return them as SVG and PNG bytes.

    ``curves`` are the runs' precision-recall curves (:func:`precision_recall`); without them there is
    no ``pr-curves`` plot. ``baseline`` names the run the differences are taken from; without one, the
    first run. ``formats`` are the encodings made (``svg``, ``png``); ``progress`` (an
    :class:`irspec.progress.Progress`) counts the figures drawn. Raises
    :class:`~irspec.errors.IrspecError` when matplotlib is missing.
    """
    matplotlib = require_matplotlib()
    unknown = set(formats) - {"svg", "png"}
    if unknown:
        raise ValueError(f"unknown plot formats: {', '.join(sorted(unknown))}")
    if progress is not None:
        n_metrics = len(results[0].metrics) if results else 0
        progress.total = (1 if curves else 0) + n_metrics * (2 if len(results) > 1 else 1)
    out = []
    with matplotlib.rc_context(_RC):
        for name, title, description, fig in figures(results, curves=curves, baseline=baseline):
            saved = _save(fig, title, formats)
            out.append(Plot(name, title, description, saved.get("svg"), saved.get("png")))
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
