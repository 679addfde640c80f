"""The static charts of a run's page: its curves as SVG text, drawn in Python as ``page.js``
draws its interactive chart before any zoom, for readers without JavaScript.

A chart is drawn from the data the page embeds for its script
(:func:`~sbpbench.outputs.page.page_data`), with the script's layout: the same size and margins
(:data:`W`, :data:`H`, :data:`LEFT`, :data:`RIGHT`, :data:`TOP`, :data:`BOTTOM`), the same extent
(every mean and band edge, in log10 on a log axis, widened by :data:`PAD` of its span on each
side: :func:`extent`), ticks (:func:`ticks`) and tick labels
(:func:`~sbpbench.outputs.notation.tick_labels`), grid lines, axis labels and clip path, one band
per stretch of points with a standard error, the mean line, dashed after ``dashed_from`` (the
Perceptron's first epoch), a point per checkpoint of a solver whose checkpoints are fits of their
own (``fits``), and each solver's look, which the data carry (:func:`styles`: a colour, a line
style, markers on every k-th point), so that an entry looks the same on every chart. Under the
plot, a legend in up to three columns (:func:`legend_layout`) shows each solver's look, name and
number of runs, as the script's legend buttons do. The elements carry the classes of the
script's (``grid``, ``tick``, ``line``, ``marker``, ...): the page's chart style sheet gives both
charts one look.

Every text is escaped (:func:`html.escape`) and every coordinate written with one decimal; the
only ``id`` of a chart is its clip path's, given by the caller, so that several charts can stand
in one page.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sbpbench.outputs.lines import LOG_FLOOR
from sbpbench.outputs.notation import tick_labels

#: The chart's size and the margins of its plot area, in SVG units (those of ``page.js``).
W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 440, 72, 16, 14, 46
#: matplotlib's default colour cycle (that of figure2).
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
#: The line styles (SVG ``stroke-dasharray``; solid first) that tell apart entries of one colour.
DASHES = ("", "7 3", "2 2", "8 3 2 3")
#: The markers that tell them apart beyond :data:`DASHES` (none first); :func:`marker_path` draws them.
MARKERS = ("", "circle", "square", "triangle", "diamond")
#: About how many markers a line carries (at every k-th point of its curve).
MARKS_PER_LINE = 8
#: The fraction of its span an axis' extent is widened by at each end.
PAD = 0.04
#: Height of a legend row under the plot, the width of its line sample, and the least width of a
#: legend column (the legend has up to :data:`LEGEND_COLUMNS` columns, filled column by column).
LEGEND_ROW, SAMPLE, COLUMN_MIN, LEGEND_COLUMNS = 18, 26, 150, 3
#: The width of a character of a legend label, roughly (13 px sans-serif), to size its columns.
CHAR_WIDTH = 7

Range = tuple[float, float]


def _unit(value: float | None, log: bool) -> float:
    """``value`` in axis units: log10 on a log axis; NaN where there is no value or a log axis has no place for it."""
    if value is None:
        return math.nan
    if log:
        return math.log10(value) if value > 0 else math.nan
    return value


def _spread(curve: dict[str, Any], j: int) -> float:
    """A curve's standard error at point ``j``: 0 where fewer than two runs cover it (no band there)."""
    se = curve["se"][j]
    return 0.0 if se is None else se


def extent(curves: Iterable[dict[str, Any]], x_log: bool, y_log: bool) -> tuple[Range, Range]:
    """The x and y ranges (axis units) of a chart of ``curves``: all their points and band edges,
    widened by :data:`PAD` of the span at each end (by a tenth of the value, or 1, when it has none).

    Parameters
    ----------
    curves : iterable of dict
        Curves of :func:`~sbpbench.outputs.page.page_data` (``x``, ``mean``, ``se``).
    x_log, y_log : bool
        Whether each axis is logarithmic (its units are then log10).

    Returns
    -------
    tuple of (float, float)
        The x range and the y range; ``(0, 1)`` before padding on an axis with nothing to place.
    """
    xs, ys = [], []
    for c in curves:
        for j, v in enumerate(c["x"]):
            xs.append(_unit(v, x_log))
            mean = c["mean"][j]
            if mean is not None:
                ys += [_unit(mean - _spread(c, j), y_log), _unit(mean + _spread(c, j), y_log)]

    def padded(units: list[float]) -> Range:
        finite = [u for u in units if math.isfinite(u)]
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        d = hi - lo or abs(lo) * 0.1 or 1.0
        return lo - PAD * d, hi + PAD * d

    return padded(xs), padded(ys)


def ticks(r: Range, log: bool) -> list[float]:
    """Where an axis over ``r`` (axis units) has ticks.

    On a log axis the powers of ten; with fewer than three of them, 1, 2 and 5 times the powers
    of ten; with fewer than three of those too, and on a linear axis, about six evenly spaced
    ticks at 1, 2 or 5 times a power of ten (in log10 on a log axis).

    Parameters
    ----------
    r : tuple of float
        The axis' range.
    log : bool
        Whether the axis is logarithmic.

    Returns
    -------
    list of float
        The ticks, in axis units, ascending.
    """
    if log:
        out = [float(k) for k in range(math.ceil(r[0]), math.floor(r[1]) + 1)]
        if len(out) < 3:  # a narrow log axis
            out = [u for k in range(math.floor(r[0]), math.ceil(r[1]) + 1) for m in (1, 2, 5)
                   if r[0] <= (u := k + math.log10(m)) <= r[1]]
        if len(out) >= 3:
            return out
    raw = (r[1] - r[0]) / 6
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(s for s in (m * power for m in (1, 2, 5, 10)) if s >= raw)
    out, t = [], math.ceil(r[0] / step) * step
    while t <= r[1] + step * 1e-9:  # added up as the script adds them, to the same floats
        out.append(t)
        t += step
    return out


def _n(value: float) -> str:
    """A coordinate with one decimal, without a trailing ``.0``."""
    text = f"{value:.1f}".removesuffix(".0")
    return "0" if text == "-0" else text


def _path(points: Iterable[tuple[float, float]]) -> str:
    """An SVG path through ``points``, broken where one is not finite (a log axis has no place for it)."""
    d, pen = [], "M"
    for px, py in points:
        if math.isfinite(px) and math.isfinite(py):
            d.append(f"{pen}{_n(px)},{_n(py)}")
            pen = "L"
        else:
            pen = "M"
    return "".join(d)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def styles(names: Sequence[str]) -> list[dict[str, str]]:
    """A look of its own for every entry: a colour, a line style and a marker.

    When a solver has several entries (a sweep) and there are no more solvers than colours, the
    colour is the solver's and its entries differ in line style, then in marker too; otherwise the
    entries take the colours in turn, and each round of :data:`COLORS` the next style. Either way
    two entries look alike only past ``len(COLORS) * len(DASHES) * len(MARKERS)`` entries.

    Parameters
    ----------
    names : sequence of str
        Each entry's solver (``solver_name``), in the order of the entries.

    Returns
    -------
    list of dict
        Per entry, ``color`` (of :data:`COLORS`), ``dash`` (of :data:`DASHES`) and ``marker`` (of
        :data:`MARKERS`).
    """
    solvers = list(dict.fromkeys(names))
    by_solver = len(solvers) <= len(COLORS) and len(solvers) < len(names)
    out, seen = [], dict.fromkeys(solvers, 0)
    for i, name in enumerate(names):
        colour, k = (solvers.index(name), seen[name]) if by_solver else (i % len(COLORS), i // len(COLORS))
        seen[name] += 1
        out.append({"color": COLORS[colour], "dash": DASHES[k % len(DASHES)],
                    "marker": MARKERS[k // len(DASHES) % len(MARKERS)]})
    return out


def marker_path(kind: str, px: float, py: float) -> str:
    """The SVG path of a marker (a kind of :data:`MARKERS`) centred at ``(px, py)``; ``""`` for none."""
    if kind == "circle":
        return f"M{_n(px - 3.5)},{_n(py)}a3.5,3.5 0 1,0 7,0a3.5,3.5 0 1,0 -7,0Z"
    if kind == "square":
        return f"M{_n(px - 3)},{_n(py - 3)}h6v6h-6Z"
    if kind == "triangle":
        return f"M{_n(px)},{_n(py - 4)}L{_n(px + 4)},{_n(py + 3)}L{_n(px - 4)},{_n(py + 3)}Z"
    if kind == "diamond":
        return f"M{_n(px)},{_n(py - 4.5)}L{_n(px + 4.5)},{_n(py)}L{_n(px)},{_n(py + 4.5)}L{_n(px - 4.5)},{_n(py)}Z"
    return ""


def legend_layout(labels: Sequence[str]) -> tuple[int, int, float]:
    """How a legend of ``labels`` is laid out under the plot: its columns, rows and column width.

    As many columns (at most :data:`LEGEND_COLUMNS`) as fit the longest label in the chart's width,
    filled column by column, so that one solver's entries stay together.
    """
    width = max(COLUMN_MIN, SAMPLE + 12 + CHAR_WIDTH * max((len(t) for t in labels), default=0))
    columns = max(1, min(LEGEND_COLUMNS, len(labels), int((W - LEFT) // width)))
    return columns, -(-len(labels) // columns), (W - LEFT) / columns


def not_drawn(data: dict[str, Any], key: str) -> str:
    """The note under a chart naming the solvers left out of it (``page.js`` writes the same), or ``""``.

    Parameters
    ----------
    data : dict
        :func:`~sbpbench.outputs.page.page_data`.
    key : str
        The chart's axes, ``"<x>|<y>"``.

    Returns
    -------
    str
        ``"Not drawn: <note>; <note>."``, not escaped.
    """
    notes = data["notes"].get(key) or []
    return f"Not drawn: {'; '.join(notes)}." if notes else ""


def chart_svg(data: dict[str, Any], x_name: str, y_name: str, clip_id: str) -> str | None:
    """The static chart of one pair of axes, as an ``<svg>`` element to inline in a page.

    Parameters
    ----------
    data : dict
        :func:`~sbpbench.outputs.page.page_data`, or data of its form (a curve whose ``runs`` is
        None has no count of runs in the legend, and a y axis with a ``range`` (lowest, highest)
        spans it whatever the curves: a performance profile's,
        :func:`~sbpbench.outputs.page.profile_data`).
    x_name, y_name : str
        Keys of its ``x`` and ``y`` axes.
    clip_id : str
        The id of the chart's clip path, unique in the page (an XML name).

    Returns
    -------
    str or None
        The SVG text; None when no solver has a curve on these axes.
    """
    key = f"{x_name}|{y_name}"
    x_axis, y_axis = data["x"][x_name], data["y"][y_name]
    entries = [(s["label"], s["curves"][key], s["style"]) for s in data["solvers"] if key in s["curves"]]
    if not entries:
        return None
    x_range, y_range = extent((c for _, c, _ in entries), x_axis["log"], y_axis["log"])
    if y_axis.get("range"):  # a fixed range (a fraction's, 0 to 1), widened as an extent is
        lo, hi = y_axis["range"]
        y_range = (lo - PAD * (hi - lo), hi + PAD * (hi - lo))
    scale = _Scale(x_range, y_range, bool(x_axis["log"]), bool(y_axis["log"]))
    names = [label if c["runs"] is None else f"{label} ({c['runs']} run{'' if c['runs'] == 1 else 's'})"
             for label, c, _ in entries]
    columns, rows, column_width = legend_layout(names)
    total = H + LEGEND_ROW * rows + 6
    area = f'x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}"'
    return "".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {W} {total}" width="{W}" '
        f'height="{total}"><defs><clipPath id="{_e(clip_id)}"><rect {area}/></clipPath></defs>'
        f'<rect class="plot-area" {area}/>',
        *_axes(scale, x_axis["label"], y_axis["label"]),
        f'<g clip-path="url(#{_e(clip_id)})">',
        *(part for label, c, style in entries for part in _curve(scale, label, c, style)),
        '</g><g class="legend">',
        *(_legend_entry(name, style, LEFT + column_width * (n // rows), H + 11 + LEGEND_ROW * (n % rows))
          for n, (name, (_, _, style)) in enumerate(zip(names, entries))),
        "</g></svg>"])


def _legend_entry(name: str, style: dict[str, str], x: float, y: float) -> str:
    """One entry of a legend: a sample of its line (style and marker) and its text, from ``(x, y)``."""
    dash = f' stroke-dasharray="{style["dash"]}"' if style["dash"] else ""
    mark = marker_path(style["marker"], x + SAMPLE / 2, y)
    return (f'<line class="line" x1="{_n(x)}" x2="{_n(x + SAMPLE)}" y1="{_n(y)}" y2="{_n(y)}" '
            f'stroke="{style["color"]}"{dash}/>'
            + (f'<path class="marker" d="{mark}" fill="{style["color"]}"/>' if mark else "")
            + f'<text x="{_n(x + SAMPLE + 6)}" y="{_n(y + 4)}">{_e(name)}</text>')


@dataclass(frozen=True)
class _Scale:
    """Where a chart draws: its x and y ranges (axis units) on the plot area, and whether each axis is log."""

    x: Range
    y: Range
    x_log: bool
    y_log: bool

    def sx(self, u: float) -> float:
        """Where ``u`` (x axis units) is on the chart."""
        return LEFT + (u - self.x[0]) / (self.x[1] - self.x[0]) * (W - LEFT - RIGHT)

    def sy(self, u: float) -> float:
        """Where ``u`` (y axis units) is on the chart."""
        return H - BOTTOM - (u - self.y[0]) / (self.y[1] - self.y[0]) * (H - TOP - BOTTOM)

    def point(self, x: float, y: float | None) -> tuple[float, float]:
        """A point of a curve on the chart (NaN where its axis has no place for it)."""
        return self.sx(_unit(x, self.x_log)), self.sy(_unit(y, self.y_log))


def _axes(scale: _Scale, x_label: str, y_label: str) -> list[str]:
    """The grid lines and tick labels of both axes, and the axis labels."""
    out = []
    x_ticks = ticks(scale.x, scale.x_log)
    for t, label in zip(x_ticks, tick_labels([10**t if scale.x_log else t for t in x_ticks])):
        x = _n(scale.sx(t))
        out.append(f'<line class="grid" x1="{x}" x2="{x}" y1="{TOP}" y2="{H - BOTTOM}"/>'
                   f'<text class="tick" x="{x}" y="{H - BOTTOM + 16}" text-anchor="middle">{label}</text>')
    y_ticks = ticks(scale.y, scale.y_log)
    for t, label in zip(y_ticks, tick_labels([10**t if scale.y_log else t for t in y_ticks])):
        y = scale.sy(t)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{_n(y)}" y2="{_n(y)}"/>'
                   f'<text class="tick" x="{LEFT - 6}" y="{_n(y + 4)}" text-anchor="end">{label}</text>')
    out.append(f'<text class="axis-label" x="{_n((LEFT + W - RIGHT) / 2)}" y="{H - 8}" text-anchor="middle">'
               f'{_e(x_label)}</text><text class="axis-label" transform="rotate(-90)" '
               f'x="{_n(-(TOP + H - BOTTOM) / 2)}" y="16" text-anchor="middle">{_e(y_label)}</text>')
    return out


def _curve(scale: _Scale, label: str, c: dict[str, Any], style: dict[str, str]) -> list[str]:
    """One solver's bands, mean line (in its line style, dashed after ``dashed_from``), points (where
    its checkpoints are fits) and markers (every k-th point, :data:`MARKS_PER_LINE` in all)."""
    color = style["color"]
    out = [f'<path class="band" d="{band}Z" fill="{color}"/>' for band in _bands(scale, c)]
    mean = list(zip(c["x"], c["mean"]))
    solid, dashed = mean, []
    if c["dashed_from"] is not None:  # the Perceptron: dashed after its first epoch
        solid = [p for p in mean if p[0] <= c["dashed_from"]]
        dashed = [p for p in mean if p[0] >= c["dashed_from"]]
        if solid and dashed:
            dashed.insert(0, solid[-1])
    dash = f' stroke-dasharray="{style["dash"]}"' if style["dash"] else ""
    out.append(f'<path class="line" d="{_path(scale.point(*p) for p in solid)}" stroke="{color}"{dash} '
               f'data-solver="{_e(label)}"/>')
    if len(dashed) > 1:
        out.append(f'<path class="line dashed" d="{_path(scale.point(*p) for p in dashed)}" stroke="{color}"/>')
    points = [(px, py) for px, py in (scale.point(*p) for p in mean) if math.isfinite(px) and math.isfinite(py)]
    if c["fits"]:  # each checkpoint a fit of its own: a point each
        out += [f'<circle class="point" cx="{_n(px)}" cy="{_n(py)}" r="3" fill="{color}"/>' for px, py in points]
    step = max(1, math.ceil(len(mean) / MARKS_PER_LINE))
    marks = "".join(marker_path(style["marker"], *scale.point(*p)) for p in mean[::step]
                    if all(map(math.isfinite, scale.point(*p))))
    if marks:
        out.append(f'<path class="marker" d="{marks}" fill="{color}"/>')
    return out


def _bands(scale: _Scale, c: dict[str, Any]) -> list[str]:
    """The paths of a curve's bands of one standard error: one per stretch of two points or more
    that have one (a point no two runs cover has none); on a log axis, lower edges cut at
    :data:`~sbpbench.outputs.lines.LOG_FLOOR`."""
    bands, stretch = [], []
    for j in range(len(c["x"]) + 1):
        if j < len(c["x"]) and c["se"][j] is not None and c["mean"][j] is not None:
            stretch.append(j)
            continue
        if len(stretch) > 1:
            upper = [scale.point(c["x"][i], c["mean"][i] + c["se"][i]) for i in stretch]
            low = [c["mean"][i] - c["se"][i] for i in reversed(stretch)]
            lower = [scale.point(c["x"][i], max(v, LOG_FLOOR) if scale.y_log else v)
                     for i, v in zip(reversed(stretch), low)]
            if band := _path(upper + lower):
                bands.append(band)
        stretch = []
    return bands
