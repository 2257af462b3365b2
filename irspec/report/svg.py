"""A small SVG writer for the report's charts: scales, ticks, axes, marks, legends and hover text.

Pure Python and light to import (no numpy, no matplotlib): a page of charts is written as text in a
few milliseconds. :mod:`irspec.report.charts` draws each figure with it.

An :class:`Svg` is one chart: its size, an accessible title and description (``<title>``, ``<desc>``,
``aria-labelledby``), and elements added in drawing order. Every data mark carries its value as hover
text (a ``<title>`` child, which a browser shows on hover and a screen reader reads) and as ``data-``
attributes with the value at full precision, so that a test (or a script) reads back what was drawn.
Colours, strokes and fonts are presentation attributes, never ``style``: the chart looks the same as a
file, inline in a page, or as an ``<img>``, and a page with a strict content security policy shows it.

Text is measured with DejaVu Sans's advance widths (:func:`text_width`), the widest of the usual sans
serif fonts, so that labels laid out here fit in whichever font the reader's system draws them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from irspec.frozen import frozen

__all__ = [
    "DASHES",
    "FONT",
    "INK",
    "MARKERS",
    "MUTED",
    "SMALLEST",
    "Scale",
    "Series",
    "Svg",
    "fit",
    "inline",
    "number",
    "palette",
    "series_styles",
    "text_width",
    "tick_text",
    "ticks",
]

_NAMESPACE = "http://www.w3.org/2000/svg"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
"""The charts' font: the page's own, so that a chart reads as part of it."""
INK = "#1f2328"
MUTED = "#57606a"
GRID = "#d8dee4"
FRAME = "#8c959f"

# matplotlib's tab10 and tab20: distinct colours a reader knows from other papers' plots
_TAB10 = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
_TAB20 = [
    "#1f77b4",
    "#aec7e8",
    "#ff7f0e",
    "#ffbb78",
    "#2ca02c",
    "#98df8a",
    "#d62728",
    "#ff9896",
    "#9467bd",
    "#c5b0d5",
    "#8c564b",
    "#c49c94",
    "#e377c2",
    "#f7b6d2",
    "#7f7f7f",
    "#c7c7c7",
    "#bcbd22",
    "#dbdb8d",
    "#17becf",
    "#9edae5",
]
MARKERS = "osD^vP*Xph<>"
"""Marker shapes, by matplotlib's letters: circle, square, diamond, triangles, plus, star, x, pentagon, hexagon."""
DASHES = ("", "6 3", "7 2.5 1.5 2.5", "1.5 2.5")
"""Line dashes: solid, dashed, dash-dot, dotted; a run's dash changes once the colours repeat."""

# DejaVu Sans advance widths of the characters from " " to "~", in thousandths of an em
_WIDTHS = (
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775,
    752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390,
    337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
)  # fmt: skip


def text_width(text: str, size: float) -> float:
    """The width of ``text`` at font ``size`` (pixels) in DejaVu Sans; other characters count as wide."""
    return size * sum(_WIDTHS[o - 32] if 32 <= (o := ord(c)) < 127 else 840 for c in text) / 1000


SMALLEST = 8.0
"""The smallest font size a text is made to fit its room; below, it is cut with an ellipsis."""


def fit(text: str, size: float, room: float, *, bold: bool = False) -> tuple[str, float]:
    """``text`` and a font size at most ``size`` at which it fits in ``room`` pixels: smaller down to
    :data:`SMALLEST`, then cut short with an ellipsis (bold text measured 15% wider, as DejaVu Sans Bold is)."""
    widen = 1.15 if bold else 1.0
    width = text_width(text, size) * widen
    if width <= room:
        return text, size
    if width * SMALLEST / size <= room:
        return text, round(size * room / width, 1)
    cut = text
    while cut and text_width(cut + "…", SMALLEST) * widen > room:
        cut = cut[:-1]
    return cut.rstrip() + "…", SMALLEST


def number(value: float) -> str:
    """A coordinate as short text: one decimal, no trailing zero."""
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def palette(n: int) -> list[str]:
    """``n`` colours: tab10 up to 10 series, tab20 beyond (then repeating)."""
    colours = _TAB10 if n <= 10 else _TAB20
    return [colours[i % len(colours)] for i in range(n)]


@frozen
class Series:
    """How one series (a run) is drawn: ``colour``, ``marker`` (a letter of :data:`MARKERS`) and ``dash``."""

    colour: str
    marker: str
    dash: str


def series_styles(n: int) -> list[Series]:
    """Distinct colour, marker and dash per series (as the PNG figures draw them)."""
    colours = palette(n)
    cycle = 10 if n <= 10 else 20
    return [
        Series(colours[i], MARKERS[i % len(MARKERS)], DASHES[(i // cycle) % len(DASHES)]) for i in range(n)
    ]


def ticks(low: float, high: float, most: int = 7, *, whole: bool = False) -> list[float]:
    """Round tick values covering ``[low, high]``: steps of 1, 2, 2.5 or 5 times a power of ten, at most
    ``most`` of them; with ``whole``, whole numbers only (steps of 1, 2 or 5 times a power of ten, at
    least 1), for counts."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        low, high = low - 0.5, high + 0.5
    raw = (high - low) / max(most - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    steps = [m * power for m in ((1, 2, 5, 10) if whole else (1, 2, 2.5, 5, 10))]
    if whole:
        steps = [max(1.0, round(step)) for step in steps]
    step = next(st for st in steps if (high - low) / st <= most - 1 + 1e-9)
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def tick_text(value: float, values: Sequence[float]) -> str:
    """A tick's label with as many decimals as the ticks' step needs (``0.25``, ``0.5``, ``10``)."""
    step = min((b - a for a, b in itertools.pairwise(values)), default=1.0) or 1.0
    decimals = 0
    while decimals < 6 and abs(round(step, decimals) - step) > 1e-9 * max(1.0, abs(step)):
        decimals += 1
    text = f"{value:.{decimals}f}"
    return text.lstrip("-") if text.lstrip("-").strip("0.") == "" else text  # never "-0.0"


@frozen
class Scale:
    """A linear map of the data interval ``[low, high]`` onto pixels ``[start, end]`` (``end`` may be
    smaller than ``start``: a y axis grows upwards)."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.start + (value - self.low) / span * (self.end - self.start)


def _attrs(attrs: Mapping[str, object]) -> str:
    out = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        if isinstance(value, float):
            value = number(value)
        out.append(f' {name}="{escape(str(value), quote=True)}"')
    return "".join(out)


def _data(values: Mapping[str, object]) -> dict[str, object]:
    """``data-`` attributes: floats at full precision (``repr``), so that what was drawn reads back exactly."""
    return {f"data-{k}": repr(float(v)) if isinstance(v, float) else v for k, v in values.items()}


class Svg:
    """One chart being written: ``width`` x ``height`` pixels, its ``title`` and ``description`` for
    assistive technology and hover, its ``name`` (unique on a page: the ids of its title and
    description are made from it). Elements are added in drawing order; :meth:`text` of the whole is
    the ``<svg>`` element, a file of its own or a page's inline figure."""

    def __init__(self, name: str, width: float, height: float, title: str, description: str) -> None:
        self.name = name
        self.width = math.ceil(width)
        self.height = math.ceil(height)
        self.title = title
        self.description = description
        self.interactive = False
        self._parts: list[str] = []

    # -- elements ----------------------------------------------------------------------------------

    def element(
        self, tag: str, tip: str | None = None, data: Mapping[str, object] | None = None, **attrs: Any
    ) -> None:
        """Add ``<tag ...>``, with a ``<title>`` child (its hover text) when ``tip`` is given and
        ``data-`` attributes from ``data``."""
        self._parts.append(self.markup(tag, tip, data, **attrs))

    @staticmethod
    def markup(
        tag: str, tip: str | None = None, data: Mapping[str, object] | None = None, **attrs: Any
    ) -> str:
        """The text of one element, as :meth:`element` adds it."""
        every = {**attrs, **_data(data or {})}
        if tip is None:
            return f"<{tag}{_attrs(every)}/>"
        return f"<{tag}{_attrs(every)}><title>{escape(tip, quote=False)}</title></{tag}>"

    def raw(self, text: str) -> None:
        """Add markup made by :meth:`markup` (or a group's opening and closing tags)."""
        self._parts.append(text)

    def open(self, tag: str = "g", **attrs: Any) -> None:
        """Open a group (``</g>`` by :meth:`close`)."""
        self._parts.append(f"<{tag}{_attrs(attrs)}>")

    def close(self, tag: str = "g") -> None:
        self._parts.append(f"</{tag}>")

    def link(self, href: str) -> None:
        """Open a link (closed by ``close("a")``): the marks inside it lead to ``href``."""
        self.interactive = True
        self.open("a", href=href)

    def line(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        stroke: str = FRAME,
        width: float = 1,
        dash: str = "",
        **attrs: Any,
    ) -> None:
        self.element(
            "line",
            x1=x1,
            y1=y1,
            x2=x2,
            y2=y2,
            stroke=stroke,
            stroke_width=width,
            stroke_dasharray=dash or None,
            **attrs,
        )

    def polyline(
        self,
        points: Iterable[tuple[float, float]],
        stroke: str,
        width: float = 1.5,
        dash: str = "",
        **attrs: Any,
    ) -> None:
        text = " ".join(f"{number(x)},{number(y)}" for x, y in points)
        self.element(
            "polyline",
            points=text,
            fill="none",
            stroke=stroke,
            stroke_width=width,
            stroke_dasharray=dash or None,
            stroke_linejoin="round",
            **attrs,
        )

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: str,
        tip: str | None = None,
        data: Mapping[str, object] | None = None,
        **attrs: Any,
    ) -> None:
        if h < 0:
            y, h = y + h, -h
        if w < 0:
            x, w = x + w, -w
        self.element("rect", tip, data, x=x, y=y, width=w, height=h, fill=fill, **attrs)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float = 11,
        anchor: str = "start",
        fill: str = INK,
        weight: str | None = None,
        rotate: float | None = None,
        middle: bool = False,
        room: float | None = None,
        **attrs: Any,
    ) -> None:
        """Text with its baseline at ``y`` (its middle when ``middle``), anchored ``start``, ``middle`` or
        ``end``. With ``room`` (pixels), a text too wide is made smaller (down to :data:`SMALLEST`), then
        cut with an ellipsis: the whole text is then its hover text."""
        shown, tip = text, None
        if room is not None:
            shown, size = fit(text, size, room, bold=weight is not None)
            tip = text if shown != text else None
        transform = f"rotate({number(rotate)} {number(x)} {number(y)})" if rotate else None
        every = {
            "x": x,
            "y": y,
            "font_size": size,
            "text_anchor": None if anchor == "start" else anchor,
            "fill": None if fill == INK else fill,
            "font_weight": weight,
            "dominant_baseline": "central" if middle else None,
            "transform": transform,
            **attrs,
        }
        title = f"<title>{escape(tip, quote=False)}</title>" if tip else ""
        self._parts.append(f"<text{_attrs(every)}>{title}{escape(shown, quote=False)}</text>")

    def marker(
        self,
        shape: str,
        x: float,
        y: float,
        colour: str,
        size: float = 7,
        filled: bool = True,
        tip: str | None = None,
        data: Mapping[str, object] | None = None,
        **attrs: Any,
    ) -> None:
        """A marker of ``shape`` (a letter of :data:`MARKERS`) centred on ``(x, y)``, ``size`` pixels across."""
        fill = colour if filled else "#fff"
        paint = {"fill": fill, "stroke": colour, "stroke_width": 1 if filled else 1.4, **attrs}
        r = size / 2
        if shape == "o":
            self.element("circle", tip, data, cx=x, cy=y, r=r, **paint)
            return
        self.element("path", tip, data, d=_shape(shape, x, y, r), **paint)

    # -- the whole ---------------------------------------------------------------------------------

    def text_of(self) -> str:
        """The ``<svg>`` element: a standalone SVG file (UTF-8, no XML declaration needed) and an
        inline figure of an HTML page alike."""
        ident = _ident(self.name)
        head = (
            f'<svg xmlns="{_NAMESPACE}" class="chart" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" role="{"group" if self.interactive else "img"}" '
            f'aria-labelledby="{ident}-title {ident}-desc" font-family="{escape(FONT)}" font-size="11" fill="{INK}">'
            f'<title id="{ident}-title">{escape(self.title, quote=False)}</title>'
            f'<desc id="{ident}-desc">{escape(self.description, quote=False)}</desc>'
            f'<rect width="{self.width}" height="{self.height}" fill="#fff"/>'
        )
        return head + "".join(self._parts) + "</svg>\n"


def inline(data: bytes) -> str:
    """An SVG file's bytes (as :meth:`Svg.text_of` makes them, with an XML declaration) as an HTML page's
    inline ``<svg>`` element: no declaration, and no namespace (an HTML parser puts ``<svg>`` in its
    namespace itself, so that the page names no address, even a namespace's)."""
    text = data.decode("utf-8")
    if text.startswith("<?xml"):
        text = text[text.index("?>") + 2 :].lstrip()
    return text.replace(f'<svg xmlns="{_NAMESPACE}" ', "<svg ", 1)


def _ident(name: str) -> str:
    return "fig-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in name)


def _shape(shape: str, x: float, y: float, r: float) -> str:
    """The path of a marker shape of radius about ``r`` around ``(x, y)``."""

    def poly(points: Iterable[tuple[float, float]]) -> str:
        return "M" + " L".join(f"{number(x + dx)} {number(y + dy)}" for dx, dy in points) + " Z"

    def star(n: int, inner: float, rotation: float = -math.pi / 2) -> list[tuple[float, float]]:
        out = []
        for i in range(2 * n):
            radius = r * 1.15 if i % 2 == 0 else r * 1.15 * inner
            angle = rotation + i * math.pi / n
            out.append((radius * math.cos(angle), radius * math.sin(angle)))
        return out

    def regular(n: int, rotation: float = -math.pi / 2) -> list[tuple[float, float]]:
        return [
            (r * math.cos(rotation + 2 * math.pi * i / n), r * math.sin(rotation + 2 * math.pi * i / n))
            for i in range(n)
        ]

    t = r * 0.38
    shapes = {
        "s": lambda: poly(
            [(-r * 0.9, -r * 0.9), (r * 0.9, -r * 0.9), (r * 0.9, r * 0.9), (-r * 0.9, r * 0.9)]
        ),
        "D": lambda: poly([(0, -r * 1.15), (r * 0.85, 0), (0, r * 1.15), (-r * 0.85, 0)]),
        "^": lambda: poly([(0, -r * 1.15), (r * 1.05, r * 0.75), (-r * 1.05, r * 0.75)]),
        "v": lambda: poly([(0, r * 1.15), (r * 1.05, -r * 0.75), (-r * 1.05, -r * 0.75)]),
        "<": lambda: poly([(-r * 1.15, 0), (r * 0.75, -r * 1.05), (r * 0.75, r * 1.05)]),
        ">": lambda: poly([(r * 1.15, 0), (-r * 0.75, -r * 1.05), (-r * 0.75, r * 1.05)]),
        "P": lambda: poly(
            [
                (-t, -r),
                (t, -r),
                (t, -t),
                (r, -t),
                (r, t),
                (t, t),
                (t, r),
                (-t, r),
                (-t, t),
                (-r, t),
                (-r, -t),
                (-t, -t),
            ]
        ),
        "X": lambda: poly(
            [
                (math.cos(a) * d, math.sin(a) * d)
                for k in range(4)
                for a, d in (
                    (math.pi / 4 + k * math.pi / 2 - 0.42, r * 1.1),
                    (math.pi / 4 + k * math.pi / 2 + 0.42, r * 1.1),
                    (math.pi / 2 + k * math.pi / 2, r * 0.42),
                )
            ]
        ),
        "*": lambda: poly(star(5, 0.45)),
        "p": lambda: poly(regular(5)),
        "h": lambda: poly(regular(6)),
    }
    return shapes.get(shape, shapes["s"])()
