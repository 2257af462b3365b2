"""The report's figures written as SVG by irspec itself (:mod:`irspec.report.svg`), from the values
:mod:`irspec.report.figures` computes: what the HTML report shows inline and the ``plots`` output
writes as ``.svg`` files.

Each kind of :class:`~irspec.report.figures.Figure` has a function here taking the same ``args`` as
its matplotlib counterpart in :mod:`irspec.report.plots` (which draws the PNG files): line charts of
curves, bars of per-topic differences, box plots with jittered dots, histograms, matrices, error bars
and scatter plots, each with its axes, ticks, legend and title. Every data mark has its value as hover
text and in ``data-`` attributes; the series of a chart with a legend are groups (``data-series``)
that the report's script shows and hides from the legend; with ``anchor`` (a query id to a link),
a topic's bar or dot links to that query's row of the report's per-query table.

Writing a chart is string formatting: the demo's fourteen figures take milliseconds, where drawing them
with matplotlib took seconds. Nothing here imports matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irspec.report.figures import (
    MAX_TOPIC_LABELS,
    ROC_CUTOFFS,
    Figure,
    FigureData,
    box,
    differences,
    fallout_words,
    histogram,
    jitter,
    power_at,
)
from irspec.report.svg import (
    FRAME,
    GRID,
    MUTED,
    Scale,
    Series,
    Svg,
    number,
    series_styles,
    text_width,
    tick_text,
    ticks,
)

__all__ = ["MAX_BARS", "chart", "svg_bytes"]

Anchor = Callable[[str], "str | None"]

GOOD, BAD, TIE = "#1a7f37", "#cf222e", "#8c959f"
BLUE, BLUE_FILL = "#0969da", "#ddf4ff"
MAX_BARS = 400
"""Up to this many topics, a differences panel draws a bar per topic and a box plot a dot per topic
(each with its hover text and link); beyond, the sorted differences are one filled outline and the dots
one path, which look the same at that density, in a file a fraction of the size."""
_TICK, _LABEL, _TITLE = 10, 11, 13


def svg_bytes(figure: Figure, anchor: Anchor | None = None) -> bytes:
    """The figure as the bytes of an SVG file (with its XML declaration); ``anchor`` as in :func:`chart`."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + chart(figure, anchor)).encode("utf-8")


def chart(figure: Figure, anchor: Anchor | None = None) -> str:
    """The ``<svg>`` element of ``figure``. ``anchor`` gives the link of a query id (``None``: no
    link), for the charts that draw one mark per topic."""
    draw = _KINDS[figure.kind]
    svg = draw(figure, *figure.args, **({"anchor": anchor} if figure.kind in _PER_TOPIC else {}))
    return svg.text_of()


# --------------------------------------------------------------------------------------------------
# Layout helpers


def _title(
    svg: Svg, text: str, y: float = 18, x: float | None = None, anchor: str = "middle", size: float = _TITLE
) -> None:
    room = svg.width - 16 if x is None or anchor == "middle" else svg.width - x - 8
    svg.text(svg.width / 2 if x is None else x, y, text, size=size, room=room, anchor=anchor, weight="600")


def _axes(
    svg: Svg,
    box_: tuple[float, float, float, float],
    xdomain: tuple[float, float],
    ydomain: tuple[float, float],
    *,
    xticks: Sequence[float] | None = None,
    yticks: Sequence[float] | None = None,
    xlabels: bool = True,
    xlabel: str = "",
    ylabel: str = "",
    xgrid: bool = True,
    ygrid: bool = True,
) -> tuple[Scale, Scale]:
    """A panel's grid, left and bottom axis lines, ticks and their labels, and the axis titles, in the box
    ``(left, top, width, height)``; its x and y scales."""
    left, top, width, height = box_
    xs = Scale(xdomain[0], xdomain[1], left, left + width)
    ys = Scale(ydomain[0], ydomain[1], top + height, top)
    xt = [
        v
        for v in (ticks(*xdomain) if xticks is None else xticks)
        if xdomain[0] - 1e-9 <= v <= xdomain[1] + 1e-9
    ]
    yt = [
        v
        for v in (ticks(*ydomain, most=6) if yticks is None else yticks)
        if ydomain[0] - 1e-9 <= v <= ydomain[1] + 1e-9
    ]
    bottom = top + height
    svg.open("g", class_="axes")
    for v in yt if ygrid else ():
        svg.line(left, ys(v), left + width, ys(v), stroke=GRID, width=0.8)
    for v in xt if xgrid else ():
        svg.line(xs(v), top, xs(v), bottom, stroke=GRID, width=0.8)
    svg.line(left, bottom, left + width, bottom)
    svg.line(left, top, left, bottom)
    for v in yt:
        svg.line(left - 4, ys(v), left, ys(v))
        svg.text(left - 6, ys(v), tick_text(v, yt), size=_TICK, anchor="end", middle=True, fill=MUTED)
    for v in xt:
        svg.line(xs(v), bottom, xs(v), bottom + 4)
        if xlabels:
            svg.text(xs(v), bottom + 15, tick_text(v, xt), size=_TICK, anchor="middle", fill=MUTED)
    if xlabel:
        svg.text(left + width / 2, bottom + 33, xlabel, size=_LABEL, room=width + 40, anchor="middle")
    if ylabel:
        room = max((text_width(tick_text(v, yt), _TICK) for v in yt), default=0)
        svg.text(
            left - room - 16,
            top + height / 2,
            ylabel,
            size=_LABEL,
            room=height,
            anchor="middle",
            rotate=-90,
        )
    svg.close()
    return xs, ys


def _left_room(values: Sequence[float], label: str) -> float:
    """The room left of a panel for its y tick labels (and its y axis title when ``label``)."""
    return max((text_width(tick_text(v, values), _TICK) for v in values), default=0) + (34 if label else 14)


def _legend_width(title: str, labels: Sequence[str], cap: float = 300) -> float:
    widest = max([text_width(label, _LABEL) + 34 for label in labels] + [text_width(title, _LABEL)])
    return min(widest, cap) + 12


def _legend(
    svg: Svg,
    x: float,
    y: float,
    title: str,
    entries: Sequence[tuple[str, Series]],
    *,
    width: float,
    line: bool = True,
    toggles: bool = True,
) -> float:
    """A legend at ``(x, y)``: ``title``, then one entry per series (a line and marker sample, its
    label); with ``toggles``, each entry a button of the report's script that hides or shows its
    series. Its height."""
    if title:
        svg.text(x, y + 11, title, size=_LABEL, weight="600")
        y += 18
    for i, (label, style) in enumerate(entries):
        if toggles:
            svg.interactive = True
            svg.open(
                "g",
                class_="key",
                data_series=i,
                role="button",
                tabindex=0,
                aria_pressed="true",
                aria_label=f"{label}: click to hide or show",
            )
        mid = y + 8
        svg.rect(x - 2, y - 1, width - 4, 18, "#fff", opacity=0)  # the whole entry answers a click
        if line:
            svg.line(x, mid, x + 24, mid, stroke=style.colour, width=1.8, dash=style.dash)
        svg.marker(style.marker, x + 12, mid, style.colour, size=6)
        svg.text(x + 30, mid, label, size=_LABEL, room=width - 36, middle=True)
        if toggles:
            svg.close()
        y += 19
    return (18 if title else 0) + 19 * len(entries)


def _value(v: float) -> str:
    return "undefined" if not math.isfinite(v) else f"{v:.4f}"


def _link(svg: Svg, anchor: Anchor | None, query: str) -> bool:
    href = anchor(query) if anchor is not None else None
    if href is not None:
        svg.link(href)
    return href is not None


# --------------------------------------------------------------------------------------------------
# Curves


def pr(figure: Figure, curves: dict[str, Sequence[float]]) -> Svg:
    """The precision-recall curves of every run, the legend (with each run's 11-point mean) beside them."""
    names = list(curves)
    labels = [f"{n} ({sum(curves[n]) / len(curves[n]):.3f})" for n in names]
    legend = _legend_width("run (11-pt mean)", labels)
    svg = Svg(figure.name, 560 + legend, 420, figure.title, figure.description)
    _title(svg, "11-point interpolated precision-recall curves")
    levels = [i / 10 for i in range(11)]
    plot = (56, 34, 500 - 10, 420 - 34 - 50)
    xs, ys = _axes(
        svg,
        plot,
        (-0.02, 1.02),
        (-0.02, 1.02),
        xticks=levels,
        yticks=[i / 5 for i in range(6)],
        xlabel="Recall",
        ylabel="Interpolated precision",
    )
    styles = series_styles(len(names))
    for i, (name, style) in enumerate(zip(names, styles, strict=True)):
        svg.open("g", class_="series", data_series=i)
        values = list(curves[name])
        svg.polyline(
            [(xs(r), ys(p)) for r, p in zip(levels, values, strict=True)], style.colour, dash=style.dash
        )
        for r, p in zip(levels, values, strict=True):
            svg.marker(
                style.marker,
                xs(r),
                ys(p),
                style.colour,
                size=6,
                tip=f"{name}: precision {_value(p)} at recall {r:.1f}",
                data={"run": name, "x": r, "y": p},
            )
        svg.close()
    _legend(svg, 560, 34, "run (11-pt mean)", list(zip(labels, styles, strict=True)), width=legend)
    return svg


def roc(figure: Figure, data: FigureData) -> Svg:
    """Every run's ROC curve: mean recall against mean fall-out as the cutoff grows, cutoff 10 labelled."""
    names = list(data.roc)
    legend = _legend_width("run", names)
    svg = Svg(figure.name, 560 + legend, 420, figure.title, figure.description)
    _title(svg, f"ROC curves: cutoff 0, {', '.join(map(str, ROC_CUTOFFS[:5]))}, ..., {ROC_CUTOFFS[-1]}")
    top = max((x for points in data.roc.values() for x, _ in points if math.isfinite(x)), default=0.0)
    right = (top or 1.0) * 1.04  # room for the last marker
    xt = ticks(0, right)
    xs, ys = _axes(
        svg,
        (56, 34, 490, 336),
        (0, right),
        (-0.02, 1.02),
        xticks=xt,
        yticks=[i / 5 for i in range(6)],
        xlabel="Fall-out: " + fallout_words(data.collection_size),
        ylabel="Recall",
    )
    at10 = 1 + ROC_CUTOFFS.index(10)
    styles = series_styles(len(names))
    for i, (name, style) in enumerate(zip(names, styles, strict=True)):
        svg.open("g", class_="series", data_series=i)
        points = data.roc[name]
        svg.polyline([(xs(x), ys(y)) for x, y in points], style.colour, dash=style.dash)
        for k, (x, y) in enumerate(points):
            cutoff = (0, *ROC_CUTOFFS)[k]
            svg.marker(
                style.marker,
                xs(x),
                ys(y),
                style.colour,
                size=5,
                tip=f"{name} at cutoff {cutoff}: recall {_value(y)}, fall-out {_value(x)}",
                data={"run": name, "cutoff": cutoff, "x": x, "y": y},
            )
        x, y = points[at10]
        svg.text(xs(x) + 5, ys(y) + 12, "10", size=9, fill=style.colour)
        svg.close()
    _legend(svg, 560, 34, "run", list(zip(names, styles, strict=True)), width=legend)
    return svg


# --------------------------------------------------------------------------------------------------
# Histograms and matrices


def ap(figure: Figure, data: FigureData) -> Svg:
    """Per run, a histogram of its AP over topics in tenths of [0, 1], its mean as a dashed line."""
    names = list(data.ap)
    panel, gap = 110, 44
    svg = Svg(figure.name, 760, 30 + len(names) * (panel + gap) + 20, figure.title, figure.description)
    counts = {n: histogram(data.ap[n]) for n in names}
    styles = series_styles(len(names))
    tenths = [i / 10 for i in range(11)]
    scales = {n: ticks(0, max(counts[n], default=0) or 1, most=5, whole=True) for n in names}
    # one left margin for every panel, so that their x axes line up
    left = 20 + max((_left_room(yt, "topics") for yt in scales.values()), default=0)
    for k, (name, style) in enumerate(zip(names, styles, strict=True)):
        values = data.ap[name]
        top = 30 + k * (panel + gap)
        mean = sum(values) / len(values) if values else math.nan
        high = max(counts[name], default=0) or 1
        yt = scales[name]
        _title(
            svg,
            f"{name}: {len(values)} topics, mean {_value(mean) if values else '-'}",
            y=top - 8,
            x=left,
            anchor="start",
            size=_LABEL + 1,
        )
        last = k == len(names) - 1
        xs, ys = _axes(
            svg,
            (left, top, 720 - left, panel),
            (0, 1),
            (0, max(high, yt[-1] if yt else 1)),
            xticks=tenths,
            yticks=yt,
            xlabels=last,
            xlabel="AP" if last else "",
            ylabel="topics",
            xgrid=False,
        )
        svg.open("g", class_="series", data_series=k)
        for i, c in enumerate(counts[name]):
            lo, hi = i / 10, (i + 1) / 10
            closing = "]" if i == 9 else ")"
            svg.rect(
                xs(lo) + 0.5,
                ys(c),
                xs(hi) - xs(lo) - 1,
                ys(0) - ys(c),
                style.colour,
                tip=f"{name}: {c} topic{'s' if c != 1 else ''} with AP in [{lo:.1f}, {hi:.1f}{closing}",
                data={"run": name, "bin": i, "count": c},
                fill_opacity=0.8,
            )
        if values:
            svg.element(
                "line",
                f"{name}: mean AP {_value(mean)}",
                {"mean": mean},
                x1=xs(mean),
                y1=top,
                x2=xs(mean),
                y2=top + panel,
                stroke=MUTED,
                stroke_width=1.2,
                stroke_dasharray="4 3",
            )
        svg.close()
    return svg


# Blues, light to dark: the matrices' shade
_BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")


def _blue(t: float) -> str:
    t = min(max(t, 0.0), 1.0) * (len(_BLUES) - 1)
    i = min(int(t), len(_BLUES) - 2)
    f = t - i
    a, b = _BLUES[i], _BLUES[i + 1]
    mixed = [round(int(a[j : j + 2], 16) * (1 - f) + int(b[j : j + 2], 16) * f) for j in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def confusion(figure: Figure, data: FigureData) -> Svg:
    """Per run, the 2x2 matrix of retrieved in the top k against relevant, summed over topics, each
    cell shaded by its count (the run's largest darkest)."""
    names = list(data.confusion)
    cols = min(len(names), 3) or 1
    rows = math.ceil(len(names) / cols)
    cell_w, cell_h, left, head = 92, 64, 46, 40
    heads = [f"{name} ({data.confusion[name].topics} topics)" for name in names]
    widest = max((text_width(h, _LABEL + 1) * 1.15 for h in heads), default=0)
    # a matrix's block is as wide as its title, up to a point (then the title is made to fit)
    block_w = max(left + 2 * cell_w + 34, min(widest + 24, 380))
    block_h = head + 2 * cell_h + 34
    svg = Svg(figure.name, 16 + cols * block_w, 34 + rows * block_h, figure.title, figure.description)
    k = next(iter(data.confusion.values())).k if names else 10
    _title(svg, f"Retrieved (top {k}) against relevant, summed over topics")
    for n, name in enumerate(names):
        c = data.confusion[name]
        start = 16 + (n % cols) * block_w
        x0 = start + (block_w - left - 2 * cell_w) / 2 + left  # the matrix in the middle of its block
        y0 = 34 + (n // cols) * block_h + head
        svg.text(
            start + block_w / 2,
            y0 - 10,
            heads[n],
            size=_LABEL + 1,
            room=block_w - 12,
            anchor="middle",
            weight="600",
        )
        cells: list[list[tuple[int | None, str]]] = [
            [
                (c.relevant_retrieved, f"relevant documents in the top {c.k}"),
                (c.nonrelevant_retrieved, f"non-relevant (or unjudged) documents in the top {c.k}"),
            ],
            [
                (c.relevant_missed, f"relevant documents not in the top {c.k}"),
                (c.nonrelevant_missed, f"non-relevant documents not in the top {c.k}"),
            ],
        ]
        largest = max([v for row in cells for v, _ in row if v is not None] + [1])
        for i, row in enumerate(cells):
            for j, (v, what) in enumerate(row):
                x, y = x0 + j * cell_w, y0 + i * cell_h
                shade = (
                    "#f6f8fa" if v is None else _blue(v / largest / 1.6)
                )  # /1.6: the darkest keeps its text readable
                tip = f"{name}: {what}: " + ("unknown without the collection size" if v is None else f"{v:,}")
                svg.rect(
                    x,
                    y,
                    cell_w,
                    cell_h,
                    shade,
                    tip=tip,
                    data={"run": name, "row": i, "col": j, "value": "" if v is None else v},
                    stroke="#fff",
                    stroke_width=1,
                )
                svg.text(
                    x + cell_w / 2,
                    y + cell_h / 2,
                    "unknown" if v is None else f"{v:,}",
                    size=12,
                    anchor="middle",
                    middle=True,
                )
        for j, label in enumerate(("relevant", "non-relevant")):
            svg.text(
                x0 + j * cell_w + cell_w / 2,
                y0 + 2 * cell_h + 15,
                label,
                size=_TICK,
                anchor="middle",
                fill=MUTED,
            )
        for i, label in enumerate((f"top {k}", f"not in top {k}")):
            svg.text(
                x0 - 8,
                y0 + i * cell_h + cell_h / 2,
                label,
                size=_TICK,
                anchor="middle",
                fill=MUTED,
                rotate=-90,
            )
    return svg


# --------------------------------------------------------------------------------------------------
# Per topic


def _signed(v: float) -> str:
    return f"{v:+.4f}"


def differences_chart(
    figure: Figure, results: Sequence[Any], metric: str, baseline: str, anchor: Anchor | None = None
) -> Svg:
    """Per other run, its per-topic differences from ``baseline`` in ``metric``, sorted, one panel each
    sharing the y axis: a bar per topic, green where the run is better, red where worse, named under it
    (up to :data:`~irspec.report.figures.MAX_TOPIC_LABELS` topics) and linked to its row."""
    found = differences(results, metric, baseline)
    n = max((len(d.diff) for d in found), default=0)
    labelled = n <= MAX_TOPIC_LABELS
    label_room = max((text_width(t, 9) for d in found for t in d.topics), default=0) + 10 if labelled else 4
    every = [v for d in found for v in d.diff]
    low, high = min([0.0, *every]), max([0.0, *every])
    pad = (high - low) * 0.05 or 0.05
    ydom = (low - pad, high + pad)
    yt = ticks(*ydom, most=6)
    left = 20 + _left_room(yt, "Δ")
    width = min(max(640.0, 13.0 * n + left + 30), 1200.0)
    panel, head = 150, 30
    block = head + panel + label_room + 36
    svg = Svg(figure.name, width, 34 + len(found) * block, figure.title, figure.description)
    _title(svg, f"Per-topic differences in {metric} against {baseline}")
    plot_w = width - left - 16
    for k, d in enumerate(found):
        top = 34 + k * block + head
        better, tied, worse = d.counts
        mean = d.mean
        _title(
            svg,
            f"{d.run} − {baseline}: {better} better, {tied} tied, {worse} worse; mean {_signed(mean) if d.diff else 'nan'}",
            y=top - 10,
            x=left,
            anchor="start",
            size=_LABEL + 1,
        )
        m = len(d.diff)
        xs, ys = _axes(
            svg,
            (left, top, plot_w, panel),
            (0, max(m, 1)),
            ydom,
            xticks=[],
            yticks=yt,
            ylabel=f"Δ {metric}",
            xgrid=False,
        )
        slot = plot_w / max(m, 1)
        svg.open("g", class_="bars", data_run=d.run)
        if m <= MAX_BARS:
            for i, (q, a, b, v, won) in enumerate(zip(d.topics, d.a, d.b, d.diff, d.outcomes, strict=True)):
                colour = GOOD if won > 0 else BAD if won < 0 else TIE
                linked = _link(svg, anchor, q)
                x = xs(i) + slot * 0.1
                tip = f"{q}: {d.run} {_value(a)} − {baseline} {_value(b)} = {_signed(v)}"
                # a tie gets a sliver, so that it can be hovered and followed too
                svg.rect(
                    x,
                    min(ys(v), ys(0)) if v else ys(0) - 1,
                    slot * 0.8,
                    abs(ys(v) - ys(0)) or 2,
                    colour,
                    tip=tip,
                    data={"q": q, "v": v, "a": a, "b": b},
                )
                if labelled:
                    svg.text(
                        xs(i) + slot / 2,
                        top + panel + 6,
                        q,
                        size=9,
                        anchor="end",
                        rotate=-90,
                        middle=True,
                        fill=MUTED,
                    )
                if linked:
                    svg.close("a")
        else:
            # thousands of bars are a filled outline, one per sign (the sorted gains lead, the losses
            # trail), through a point per half pixel at most: no hover per topic, the same picture
            step = max(1, int(m / (2 * plot_w)))
            for sign, colour, indices in ((1, GOOD, range(better)), (-1, BAD, range(m - worse, m))):
                if not indices:
                    continue
                shown = [*indices[::step], indices[-1]]
                path = [f"M{number(xs(indices[0]))} {number(ys(0))}"]
                path += [f"L{number(xs(i + 0.5))} {number(ys(d.diff[i]))}" for i in shown]
                path.append(f"L{number(xs(indices[-1] + 1))} {number(ys(0))} Z")
                words = f"{better} topics better" if sign > 0 else f"{worse} topics worse"
                svg.element("path", f"{d.run} − {baseline}: {words}", None, d=" ".join(path), fill=colour)
        svg.close()
        svg.line(left, ys(0), left + plot_w, ys(0), stroke=MUTED, width=0.8)
        words = "topic, sorted by difference" if labelled else f"{m} topics, sorted by difference"
        svg.text(left + plot_w / 2, top + panel + label_room + 18, words, size=_LABEL, anchor="middle")
    return svg


def distributions(figure: Figure, results: Sequence[Any], metric: str, anchor: Anchor | None = None) -> Svg:
    """Per run, a horizontal box plot of its per-topic ``metric`` (quartiles, median, Tukey's whiskers),
    the topics as jittered dots (linked to their rows) and the mean as a diamond."""
    names = [r.run_name for r in results]
    columns = []
    for r in results:
        v = r.column(metric)
        ok = np.isfinite(v)
        columns.append(([str(q) for q, keep in zip(r.query_ids, ok, strict=True) if keep], v[ok]))
    every = [float(x) for _, v in columns for x in v]
    low, high = (min(every), max(every)) if every else (0.0, 1.0)
    pad = (high - low) * 0.05 or 0.05
    xdom = (low - pad, high + pad)
    left = 24 + max((text_width(n, _LABEL) for n in names), default=0)
    row = 44
    svg = Svg(figure.name, 760, 34 + row * len(names) + 50, figure.title, figure.description)
    n_topics = max((len(v) for _, v in columns), default=0)
    _title(svg, f"Per-topic {metric} ({n_topics} topics): box = quartiles and median, diamond = mean")
    plot = (left, 34, 760 - left - 16, row * len(names))
    xs, _ = _axes(svg, plot, xdom, (0, 1), yticks=[], xlabel=f"{metric} per topic", ygrid=False)
    offsets = jitter([len(v) for _, v in columns])
    for k, (name, (queries, values), shift) in enumerate(zip(names, columns, offsets, strict=True)):
        mid = 34 + row * k + row / 2
        svg.text(left - 8, mid, name, size=_LABEL, anchor="end", middle=True)
        svg.open("g", class_="series", data_series=k)
        stats = box(values)
        if stats is not None:
            q1, median, q3, lo, hi = stats
            half = row * 0.3
            mean = float(np.mean(values))
            for a, b in ((lo, q1), (q3, hi)):
                svg.line(xs(a), mid, xs(b), mid, stroke=MUTED)
            for w in (lo, hi):
                svg.line(xs(w), mid - half / 2, xs(w), mid + half / 2, stroke=MUTED)
            tip = f"{name}: median {_value(median)}, quartiles {_value(q1)} to {_value(q3)}, whiskers {_value(lo)} to {_value(hi)}; {len(values)} topics"
            svg.rect(
                xs(q1),
                mid - half,
                xs(q3) - xs(q1),
                2 * half,
                BLUE_FILL,
                tip=tip,
                data={"run": name, "q1": q1, "median": median, "q3": q3, "low": lo, "high": hi},
                stroke=BLUE,
            )
            svg.line(xs(median), mid - half, xs(median), mid + half, stroke=BLUE, width=2)
            if len(values) <= MAX_BARS:
                for q, x, dy in zip(queries, values, shift, strict=True):
                    linked = _link(svg, anchor, q)
                    svg.element(
                        "circle",
                        f"{q}: {name} {_value(float(x))}",
                        {"q": q, "v": float(x)},
                        cx=xs(float(x)),
                        cy=mid + dy * row,
                        r=2.4,
                        fill=MUTED,
                        fill_opacity=0.55,
                    )
                    if linked:
                        svg.close("a")
            else:
                # thousands of dots are one path of round dots (a zero-length segment each), as the
                # differences' bars are an outline: the same picture, no hover per topic
                dots = "".join(
                    f"M{number(xs(float(x)))} {number(mid + dy * row)}h0"
                    for x, dy in zip(values, shift, strict=True)
                )
                svg.element(
                    "path",
                    f"{name}: {len(values)} topics",
                    None,
                    d=dots,
                    stroke=MUTED,
                    stroke_width=4.8,
                    stroke_linecap="round",
                    stroke_opacity=0.45,
                )
            svg.marker(
                "D",
                xs(mean),
                mid,
                BAD,
                size=8,
                tip=f"{name}: mean {_value(mean)}",
                data={"run": name, "mean": mean},
            )
        svg.close()
    return svg


# --------------------------------------------------------------------------------------------------
# Groups and tables


def groups(figure: Figure, metric: str, tables: Sequence[tuple[str, Any]]) -> Svg:
    """Per group of queries (then the macro and micro means), every run's mean of ``metric`` with its
    95% t interval as an error bar (none for a group of one query), runs side by side within a group."""
    names = [str(r[0]) for r in tables[0][1].rows]
    runs = [run for run, _ in tables]
    left = 24 + max((text_width(n, _LABEL) for n in names), default=0)
    legend = _legend_width("run", runs) if len(runs) > 1 else 0
    per = max(22.0, 10.0 * min(len(runs), 4) + 8)
    width = 760
    svg = Svg(figure.name, width, 34 + per * len(names) + 50, figure.title, figure.description)
    _title(svg, f"{metric} by query group", x=left, anchor="start")
    every = [
        v for _, t in tables for r in t.rows for v in r[2:5] if isinstance(v, float) and math.isfinite(v)
    ]
    low, high = (min(every), max(every)) if every else (0.0, 1.0)
    pad = (high - low) * 0.05 or 0.05
    plot_w = width - left - 16 - legend
    xs, _ = _axes(
        svg,
        (left, 34, plot_w, per * len(names)),
        (low - pad, high + pad),
        (0, 1),
        yticks=[],
        xlabel=f"mean {metric} (95% t interval)",
        ygrid=False,
    )
    for i, name in enumerate(names):
        svg.text(left - 8, 34 + per * (i + 0.5), name, size=_LABEL, anchor="end", middle=True)
    if len(names) >= 2:
        y = 34 + per * (len(names) - 2)
        svg.line(left, y, left + plot_w, y, stroke=FRAME, dash="2 3")  # groups above, the summaries below
    styles = series_styles(len(tables))
    step = per * 0.7 / len(tables)
    for k, ((run, table), style) in enumerate(zip(tables, styles, strict=True)):
        svg.open("g", class_="series", data_series=k)
        for i, (group, queries, mean, lo, hi) in enumerate(table.rows):
            if not math.isfinite(mean):
                continue
            y = 34 + per * (i + 0.5) + (k - (len(tables) - 1) / 2) * step
            interval = "" if not math.isfinite(lo) else f" [{_value(lo)}, {_value(hi)}]"
            if math.isfinite(lo):
                svg.line(xs(lo), y, xs(hi), y, stroke=style.colour, width=1.3)
                for w in (lo, hi):
                    svg.line(xs(w), y - 3, xs(w), y + 3, stroke=style.colour, width=1.3)
            svg.marker(
                style.marker,
                xs(mean),
                y,
                style.colour,
                size=7,
                tip=f"{run}, {group}: mean {_value(mean)}{interval} ({queries} queries)",
                data={"run": run, "group": str(group), "mean": mean, "low": lo, "high": hi},
            )
        svg.close()
    if len(tables) > 1:
        _legend(
            svg, width - legend, 34, "run", list(zip(runs, styles, strict=True)), width=legend, line=False
        )
    return svg


def input_table(figure: Figure, table: Any) -> Svg:
    """An input's table (a log's top queries, its queries per hour): its second column against its
    first, as horizontal bars (the first row on top) or a line over the rows in order."""
    labels = [str(r[0]) for r in table.rows]
    values = [float(r[1]) for r in table.rows]
    xlabel, ylabel = table.columns[0], table.columns[1]
    high = max([*values, 0.0]) or 1.0
    counting = all(v.is_integer() for v in values)  # counts get whole ticks, rates any
    vt = ticks(0, high, most=6, whole=counting) or [0.0, 1.0]
    top_value = max(high, vt[-1])
    if table.chart == "bar":
        left = 24 + min(max((text_width(x, _LABEL) for x in labels), default=0), 260)
        per = 24
        svg = Svg(figure.name, 760, 34 + per * max(len(labels), 1) + 50, figure.title, figure.description)
        _title(svg, table.title, x=left, anchor="start")
        xs, _ = _axes(
            svg,
            (left, 34, 760 - left - 16, per * max(len(labels), 1)),
            (0, top_value),
            (0, 1),
            xticks=vt,
            yticks=[],
            xlabel=ylabel,
            ygrid=False,
        )
        for i, (label, v) in enumerate(zip(labels, values, strict=True)):
            y = 34 + per * i
            svg.text(left - 8, y + per / 2, label, size=_LABEL, room=left - 14, anchor="end", middle=True)
            svg.rect(
                xs(0),
                y + per * 0.15,
                xs(v) - xs(0),
                per * 0.7,
                BLUE,
                tip=f"{label}: {v:g} {ylabel}",
                data={"label": label, "v": v},
                fill_opacity=0.8,
            )
        return svg
    svg = Svg(figure.name, 760, 380, figure.title, figure.description)
    _title(svg, table.title)
    left = 20 + _left_room(vt, ylabel)
    n = max(len(values), 1)
    plot = (left, 34, 760 - left - 20, 270)
    xs, ys = _axes(
        svg, plot, (-0.5, n - 0.5), (0, top_value), xticks=[], yticks=vt, ylabel=ylabel, xgrid=False
    )
    step = max(1, math.ceil(len(labels) / 12))  # at most about a dozen labels
    for i in range(0, len(labels), step):
        svg.text(xs(i), 34 + 270 + 14, labels[i], size=_TICK, anchor="end", rotate=-30, fill=MUTED)
    svg.text(left + plot[2] / 2, 34 + 270 + 62, xlabel, size=_LABEL, anchor="middle")
    svg.polyline([(xs(i), ys(v)) for i, v in enumerate(values)], BLUE)
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        svg.marker(
            "o", xs(i), ys(v), BLUE, size=5, tip=f"{label}: {v:g} {ylabel}", data={"label": label, "v": v}
        )
    return svg


# --------------------------------------------------------------------------------------------------
# Power, agreement, reproduction


def power(figure: Figure, curves: Sequence[Any], target: float) -> Svg:
    """Power against the number of topics: a panel of paired t-tests (per comparison) and one of ANOVAs
    (per metric), the target power dashed, a filled mark where a curve first reaches it (the topics
    delta needs) and a hollow one at the topics at hand."""
    designs = [d for d in ("t", "anova") if any(c.design == d for c in curves)]
    titles = {"t": "Paired t-test, per comparison", "anova": "One-way ANOVA over all runs, per metric"}
    panel_w, plot_h = 460, 280
    mine = {name: [c for c in curves if c.design == name] for name in designs}
    legend_h = max(19 * len(m) for m in mine.values())
    svg = Svg(
        figure.name,
        20 + panel_w * len(designs),
        34 + plot_h + 56 + legend_h,
        figure.title,
        figure.description,
    )
    for p, name in enumerate(designs):
        x0 = 20 + p * panel_w
        left = x0 + _left_room([0, 0.2], "Power")
        _title(svg, titles[name], y=22, x=left + (panel_w - 40 - (left - x0)) / 2, size=_LABEL + 1)
        lo = min(min(c.topics) for c in mine[name])
        hi = max(max(c.topics) for c in mine[name])
        xs, ys = _axes(
            svg,
            (left, 34, x0 + panel_w - 30 - left, plot_h),
            (lo, max(hi, lo + 1)),
            (-0.02, 1.02),
            yticks=[i / 5 for i in range(6)],
            xlabel="Number of topics",
            ylabel="Power",
        )
        svg.line(xs(lo), ys(target), xs(max(hi, lo + 1)), ys(target), stroke=MUTED, dash="5 3", width=1)
        styles = series_styles(len(mine[name]))
        labels = []
        for k, (curve, style) in enumerate(zip(mine[name], styles, strict=True)):
            svg.open("g", class_="series", data_series=k)
            svg.polyline(
                [(xs(t), ys(v)) for t, v in zip(curve.topics, curve.power, strict=True)],
                style.colour,
                width=1.4,
                dash=style.dash,
            )
            for t, v in zip(curve.topics, curve.power, strict=True):
                svg.element(
                    "circle",
                    f"{curve.label}: power {v:.3f} with {t} topics",
                    {"x": t, "y": v},
                    cx=xs(t),
                    cy=ys(v),
                    r=3,
                    fill=style.colour,
                    fill_opacity=0,
                )
            ends = curve.topics[-1]
            if curve.needed is not None and curve.needed <= ends:
                svg.marker(
                    style.marker,
                    xs(curve.needed),
                    ys(power_at(curve, curve.needed)),
                    style.colour,
                    size=7,
                    tip=f"{curve.label}: delta needs {curve.needed} topics",
                )
            if curve.at_hand <= ends:
                at = power_at(curve, curve.at_hand)
                svg.marker(
                    style.marker,
                    xs(curve.at_hand),
                    ys(at),
                    style.colour,
                    size=7,
                    filled=False,
                    tip=f"{curve.label}: power {at:.3f} with the {curve.at_hand} topics at hand",
                )
            svg.close()
            needs = f"needs {curve.needed}" if curve.needed is not None else "delta not given"
            labels.append(f"{curve.label} ({needs})")
        _legend(
            svg,
            left,
            34 + plot_h + 46,
            "",
            list(zip(labels, styles, strict=True)),
            width=x0 + panel_w - 30 - left,
        )
    return svg


def agreement(
    figure: Figure, means: Sequence[tuple[str, str, str, float]], metric: str, a: str, b: str
) -> Svg:
    """Each run's mean ``metric`` under set ``a`` (x) against set ``b`` (y), one labelled point per run,
    beside the diagonal where the two sets agree."""
    x = {run: v for s, run, m, v in means if s == a and m == metric}
    y = {run: v for s, run, m, v in means if s == b and m == metric}
    runs = [r for r in x if r in y]
    values = [v for r in runs for v in (x[r], y[r]) if math.isfinite(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = (high - low) * 0.08 or 0.05
    dom = (low - pad, high + pad)
    t = ticks(*dom, most=6)
    left = 20 + _left_room(t, "y")
    size = 380
    svg = Svg(figure.name, left + size + 30, 34 + size + 50, figure.title, figure.description)
    _title(svg, f"Mean {metric}: {a} against {b}")
    xs, ys = _axes(
        svg,
        (left, 34, size, size),
        dom,
        dom,
        xticks=t,
        yticks=t,
        xlabel=f"{metric} under {a}",
        ylabel=f"{metric} under {b}",
    )
    svg.element(
        "line",
        "the same under both sets",
        None,
        x1=xs(dom[0]),
        y1=ys(dom[0]),
        x2=xs(dom[1]),
        y2=ys(dom[1]),
        stroke=FRAME,
        stroke_dasharray="5 3",
    )
    for k, (run, style) in enumerate(zip(runs, series_styles(len(runs)), strict=True)):
        svg.open("g", class_="series", data_series=k)
        svg.marker(
            style.marker,
            xs(x[run]),
            ys(y[run]),
            style.colour,
            size=8,
            tip=f"{run}: {_value(x[run])} under {a}, {_value(y[run])} under {b}",
            data={"run": run, "x": x[run], "y": y[run]},
        )
        svg.text(xs(x[run]) + 6, ys(y[run]) - 6, run, size=_TICK)
        svg.close()
    return svg


def reproduce_order(figure: Figure, reproduction: Any) -> Svg:
    """Per-topic KTU and RBO of a reproduction's baseline and advanced pairs (Breuer et al., SIGIR 2020,
    figure 1): a panel per measure, topics along x in id order, a line per pair."""
    topics = list(reproduction.baseline.query_ids)
    labels = [f"{p.role} (KTU {p.ktu_mean:.3f}, RBO {p.rbo_mean:.3f})" for p in reproduction.pairs]
    legend = _legend_width("pair (means)", labels)
    labelled = len(topics) <= MAX_TOPIC_LABELS
    room = max((text_width(t, 9) for t in topics), default=0) + 8 if labelled else 0
    panel = 150
    width = 560 + legend
    svg = Svg(figure.name, width, 34 + 2 * (panel + 20) + room + 30, figure.title, figure.description)
    _title(svg, f"Per-topic KTU and RBO (RBO p={reproduction.rbo_p:g}, depth {reproduction.depth})")
    styles = series_styles(2)
    n = max(len(topics), 1)
    scales = {"KTU": [-1.0, -0.5, 0.0, 0.5, 1.0], "RBO": [0.0, 0.25, 0.5, 0.75, 1.0]}
    left = 20 + max(_left_room(yt, measure) for measure, yt in scales.items())  # the panels' x axes line up
    for k, measure in enumerate(("KTU", "RBO")):
        top = 34 + k * (panel + 20)
        dom = (-1.05, 1.05) if measure == "KTU" else (-0.02, 1.05)
        yt = scales[measure]
        xs, ys = _axes(
            svg,
            (left, top, 540 - left, panel),
            (-0.5, n - 0.5),
            dom,
            xticks=[],
            yticks=yt,
            ylabel=measure,
            xgrid=False,
        )
        for p, (pair, style) in enumerate(zip(reproduction.pairs, styles, strict=True)):
            values = [float(v) for v in (pair.ktu if measure == "KTU" else pair.rbo)]
            svg.open("g", class_="series", data_series=p)
            svg.polyline(
                [(xs(i), ys(v)) for i, v in enumerate(values) if math.isfinite(v)],
                style.colour,
                width=1.2,
                dash=style.dash,
            )
            for i, v in enumerate(values):
                if math.isfinite(v):
                    q = pair.query_ids[i] if i < len(pair.query_ids) else str(i)
                    svg.marker(
                        style.marker,
                        xs(i),
                        ys(v),
                        style.colour,
                        size=4.5,
                        tip=f"{q}: {pair.role} {measure} {_value(v)}",
                        data={"q": q, "measure": measure, "v": v},
                    )
            svg.close()
        if k == 1 and labelled:
            for i, q in enumerate(topics):
                svg.text(xs(i), top + panel + 6, q, size=9, anchor="end", rotate=-90, middle=True, fill=MUTED)
    svg.text(left + (540 - left) / 2, svg.height - 10, "topic", size=_LABEL, anchor="middle")
    _legend(svg, 560, 34, "pair (means)", list(zip(labels, styles, strict=True)), width=legend)
    return svg


def reproduce_effects(figure: Figure, reproduction: Any) -> Svg:
    """Effect ratio against delta relative improvement per metric (Breuer et al., SIGIR 2020, figure 3):
    the ideal reproduction at (0, 1) as a star, the lines ER = 1 and ΔRI = 0 between the quadrants."""
    metrics = list(reproduction.metrics)
    points = {m: (float(reproduction.delta_ri[m]), float(reproduction.er[m])) for m in metrics}
    shown = {m: p for m, p in points.items() if math.isfinite(p[0]) and math.isfinite(p[1])}
    xv = [0.0, *(p[0] for p in shown.values())]
    yv = [1.0, *(p[1] for p in shown.values())]
    xpad = (max(xv) - min(xv)) * 0.1 or 0.1
    ypad = (max(yv) - min(yv)) * 0.1 or 0.1
    xdom, ydom = (min(xv) - xpad, max(xv) + xpad), (min(yv) - ypad, max(yv) + ypad)
    legend = _legend_width("metric", metrics)
    yt = ticks(*ydom, most=6)
    left = 20 + _left_room(yt, "ER")
    svg = Svg(figure.name, left + 440 + 20 + legend, 34 + 320 + 50, figure.title, figure.description)
    _title(svg, f"Effect ratio against delta relative improvement ({reproduction.kind})")
    xs, ys = _axes(
        svg,
        (left, 34, 440, 320),
        xdom,
        ydom,
        yticks=yt,
        xlabel="ΔRI (0: the same relative improvement)",
        ylabel="ER (1: the same effect)",
    )
    svg.line(xs(xdom[0]), ys(1), xs(xdom[1]), ys(1), stroke=MUTED, width=0.8)
    svg.line(xs(0), ys(ydom[0]), xs(0), ys(ydom[1]), stroke=MUTED, width=0.8)
    svg.marker("*", xs(0), ys(1), GOOD, size=12, tip="the ideal reproduction: ΔRI 0, ER 1")
    styles = series_styles(len(metrics))
    for k, (metric, style) in enumerate(zip(metrics, styles, strict=True)):
        svg.open("g", class_="series", data_series=k)
        if metric in shown:
            x, y = shown[metric]
            svg.marker(
                style.marker,
                xs(x),
                ys(y),
                style.colour,
                size=8,
                tip=f"{metric}: ΔRI {_value(x)}, ER {_value(y)}",
                data={"metric": metric, "x": x, "y": y},
            )
        svg.close()
    _legend(svg, left + 460, 34, "metric", list(zip(metrics, styles, strict=True)), width=legend, line=False)
    return svg


_KINDS: dict[str, Callable[..., Svg]] = {
    "pr": pr,
    "roc": roc,
    "ap": ap,
    "confusion": confusion,
    "differences": differences_chart,
    "distributions": distributions,
    "groups": groups,
    "input": input_table,
    "power": power,
    "agreement": agreement,
    "reproduce-order": reproduce_order,
    "reproduce-effects": reproduce_effects,
}
_PER_TOPIC = ("differences", "distributions")
