"""Drawings of result curves: the kinds of figure the papers declare, and ``sbpbench plot``.

Every drawing takes rows of ``curves.csv`` files and writes ``<stem>.png`` and ``<stem>.svg``:

* :func:`metric_curves`: any quantity of :data:`Y_AXES` against any of :data:`X_AXES`, one panel
  per experiment, one line per solver, the mean over the runs covering each point
  (:func:`~sbpbench.results.curves.covering_mean`) with a band of one standard error where two
  runs or more cover it (:data:`BAND_NOTE`, written under the figure). What the outputs know of a
  solver is its traits: ``dashed_after_first_epoch`` (the Perceptron, whose guarantee covers one
  pass) is drawn dashed after its first epoch, as in the SBP paper's Figure 2;
  ``one_step_per_advance`` (each checkpoint a fit of its own) as points; ``swings_before_settling``
  (SMO) as dots until its mean error stays below the constant classifier's (:class:`Marks`).
  The two kinds of curve figure the papers declare are two of its cases:
* :func:`error_curves`: test error (linear axis) against a cost (log axis), kernel evaluations
  or d-dimensional inner products, optionally with a second row zoomed on the final errors;
* :func:`objective_curves`: primal objective against iterations (log-log), extra variants in grey;
* :func:`final_against_parameter`: the primal objective against a solver parameter, one panel
  per group of solvers, at the end of the runs or at several points along them;
* :func:`sweep_summary`: for a sweep, each entry's final error (validation error when measured),
  one panel per setting with the solvers side by side; with :data:`SMALL_MULTIPLES_AT` entries or
  more, ``sbpbench plot`` also draws an experiment's curves one panel per setting
  (:func:`small_multiples`), the solvers side by side, one y range, legends outside the data, so
  that a sweep of 20 entries stays readable;
* :func:`profile_figure`: performance profiles of the solvers over the problems of a sweep or of
  several data sets (:mod:`sbpbench.outputs.profiles`).

:func:`plot_results` draws them for ``sbpbench plot``. What they draw (the axes, each solver's mean
line, the solvers left out) comes from :mod:`sbpbench.outputs.lines`, free of matplotlib: a run's
page draws the same lines as SVG of its own (:mod:`sbpbench.outputs.svg_chart`).

Figures are :class:`matplotlib.figure.Figure` objects written straight to files, never through
``pyplot``: importing this module selects no backend and leaves matplotlib's global state as the
caller set it (an interactive session keeps its backend).
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import matplotlib
import matplotlib.axis
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.path import Path as MplPath
from matplotlib.text import Annotation
from matplotlib.ticker import FormatStrFormatter, LogFormatterSciNotation, LogLocator, NullFormatter
from matplotlib.transforms import Bbox, ScaledTranslation
from numpy.typing import ArrayLike

from sbpbench.errors import UserError
from sbpbench.files import atomic_write
from sbpbench.outputs.lines import (
    LOG_FLOOR,
    X_AXES,
    Y_AXES,
    Axis,
    MeanLine,
    column_numbers,
    drawable,
    fit_points,
    left_out,
    mean_line,
)
from sbpbench.outputs.profiles import PROFILE_COSTS, caption, performance_profile, with_problems
from sbpbench.results.curves import ReadAt, final_rows, finals_by_parameter, values_by_parameter
from sbpbench.results.lookup import newest_runs  # noqa: E402
from sbpbench.results.store import curves_file, read_curves, read_meta  # noqa: E402

#: With ``zoom``, a panel's test-error axis runs at least from the first of these multiples of its
#: smallest final mean error to the second of the median of its final means: the range where
#: most solvers converge and differ; :func:`zoom_range` stretches it to every line's end.
ZOOM_RANGE = (0.9, 1.25)

#: The final stretch of a line that the zoom row keeps in view (:func:`zoom_range`): this fraction
#: of its extent on the panel's x axis (in its scale: log for a cost), at its end, where a solver
#: that ends far above the others (the Perceptron on Adult) is judged.
ZOOM_TAIL = 0.25

#: Beyond the points :func:`zoom_range` stretches its range to, a margin of this fraction of the
#: range they span (in the axis' scale), so that no line runs along an edge.
ZOOM_MARGIN = 0.04

#: The costs :func:`error_curves` can draw against, with their axis labels.
COSTS = {"kernel_evals": "kernel evaluations", "inner_products": "d-dimensional inner products"}

#: The axes `sbpbench plot` draws by default, as the files figure2 and figure3 (the SBP paper's Figures 2 and 3).
DEFAULT_AXES = ("kernel_evals", "test_error")


#: Exponents of :class:`TextLogFormatter`'s labels: superscript digits and minus.
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
#: Their times sign, spaced as math text spaces a binary operator.
TIMES = "\N{MEDIUM MATHEMATICAL SPACE}\N{MULTIPLICATION SIGN}\N{MEDIUM MATHEMATICAL SPACE}"


class TextLogFormatter(LogFormatterSciNotation):
    """The tick labels of a log axis as matplotlib writes them (``10^5``, ``2 x 10^-1``, ``2^3``), in
    plain text with Unicode superscripts (``10⁵``, ``2 × 10⁻¹``, ``2³``) rather than math text.

    They look the same in the figures, and save most of a short run's drawing time: matplotlib
    parses every math-text label anew for each size and each renderer (a figure's layout, its PNG
    and its SVG), some 10 ms a label; plain text is measured from the font at once.
    """

    def __call__(self, x: float, pos: int | None = None) -> str:
        label = super().__call__(x, pos)
        start, end = "$\\mathdefault{", "}$"
        if not (label.startswith(start) and label.endswith(end)):
            return label
        body, _, power = label[len(start):-len(end)].partition("^{")
        text = body.replace("-", "\N{MINUS SIGN}").replace("\\times", TIMES)
        return text + power.removesuffix("}").translate(SUPERSCRIPTS)


def log_scale(ax: Axes, which: Literal["x", "y"], base: float = 10) -> None:
    """Give ``ax`` (and the axes sharing that axis with it) a log ``x`` or ``y`` axis labelled by
    :class:`TextLogFormatter`, as ``ax.set_xscale("log", base=base)`` would with math text."""
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=base)
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for sibling in shared.get_siblings(ax):
        _text_log_labels(sibling.xaxis if which == "x" else sibling.yaxis, base)


def _text_log_labels(axis: matplotlib.axis.Axis, base: float) -> None:
    """Label a log axis' major and minor ticks as its log scale does, with :class:`TextLogFormatter`."""
    axis.set_major_formatter(TextLogFormatter(base))
    axis.set_minor_formatter(TextLogFormatter(base, labelOnlyBase=False))


def save_figure(fig: Figure, stem: Path, dpi: int = 130) -> list[Path]:
    """Write ``fig`` as ``stem.png`` and ``stem.svg`` (creating the folder) and return the paths.

    The same figure gives the same bytes: the SVG's element ids are derived from the file's name
    (matplotlib's ``svg.hashsalt``; by default they are random) and it records no date, so that
    redrawing unchanged results (``sbpbench plot``, ``make figures``) changes no file.
    """
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix, metadata in ((".png", {}), (".svg", {"Date": None})):
        path = stem.with_suffix(suffix)
        image = io.BytesIO()
        with matplotlib.rc_context({"svg.hashsalt": stem.name}):
            fig.savefig(image, dpi=dpi, format=suffix[1:], metadata=metadata)
        atomic_write(path, image.getvalue())
        written.append(path)
    return written


def _panels(curves: pd.DataFrame, column: str, size: tuple[float, float]
            ) -> tuple[Figure, Iterator[tuple[Axes, str, pd.DataFrame]]]:
    """A figure with one panel (of ``size`` inches) per value of ``column``, and the panels with
    their value and rows, in the order the values first appear."""
    values = list(dict.fromkeys(curves[column]))
    fig = Figure(figsize=(size[0] * len(values), size[1]))
    axes = fig.subplots(1, len(values), squeeze=False)
    return fig, ((ax, value, curves[curves[column] == value]) for ax, value in zip(axes[0], values))


#: Font size (points) of the note under a figure's panels, and the characters of it that fit in
#: one inch of the figure's width (a conservative average for matplotlib's default sans-serif).
NOTE_SIZE, NOTE_CHARS_PER_INCH = 8, 14


def _lay_out(fig: Figure, title: str | None, note: str) -> None:
    """Title the figure, write ``note`` under its panels, wrapped to the figure's width so that
    no line runs off its edges, and lay them out."""
    if title:
        fig.suptitle(title)
    width, height = fig.get_size_inches()
    lines = textwrap.wrap(note, max(20, int(width * NOTE_CHARS_PER_INCH)))
    fig.text(0.5, 0.005, "\n".join(lines), ha="center", va="bottom", fontsize=NOTE_SIZE, color="0.3")
    reserved = (len(lines) * 1.25 * NOTE_SIZE / 72 + 0.05) / height
    with _measured_once(fig):
        fig.tight_layout(rect=(0, reserved, 1, 1))


@contextmanager
def _measured_once(fig: Figure) -> Iterator[None]:
    """Within it, each panel of ``fig`` measures its extent (``get_tightbbox``) once for the same
    arguments (the same objects), and gives that measure again when asked again.

    Given a ``rect``, matplotlib's tight layout measures every panel twice, the second time to
    fit the panels into the rect, though nothing has moved between the two (it places the
    panels after both): the same boxes, each measure costing most of a layout (every tick and
    label of the panel is measured). The layout is the same either way, to the bit, in half the
    time (issue #37). Outside the block the panels measure anew.
    """
    for ax in fig.axes:
        ax.get_tightbbox = _MeasuredOnce(ax.get_tightbbox)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for ax in fig.axes:
            vars(ax).pop("get_tightbbox", None)  # the class's method again


class _MeasuredOnce:
    """A panel's ``get_tightbbox`` that measures once for the same arguments (:func:`_measured_once`).

    The arguments are compared by identity (a renderer, flags), and kept with their measure so
    that none of them is freed and its identity reused while the measure is kept.
    """

    def __init__(self, measure: Any) -> None:
        self._measure = measure
        self._measured: list[tuple[tuple[Any, ...], dict[str, Any], Any]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for known_args, known_kwargs, box in self._measured:
            if _same(known_args, args) and known_kwargs.keys() == kwargs.keys() \
                    and _same(tuple(known_kwargs.values()), tuple(kwargs[k] for k in known_kwargs)):
                return box
        box = self._measure(*args, **kwargs)
        self._measured.append((args, kwargs, box))
        return box


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same objects, in the same order."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def baseline_error(meta: Mapping[str, Any]) -> float | None:
    """The test error of the constant classifier (the larger class for every test example), from a
    run's ``meta.json`` (the resolved data set's ``positives_test`` and ``n_test``; None without them).

    Every solver that starts from a zero predictor starts there, so the figures' error axes end
    just above it (:data:`BASELINE_HEADROOM`).
    """
    data = meta.get("resolved", {}).get("dataset", {}) if isinstance(meta.get("resolved"), dict) else {}
    positives, n = data.get("positives_test"), data.get("n_test")
    if not isinstance(positives, int | float) or not isinstance(n, int | float) or n <= 0:
        return None
    return float(min(positives, n - positives) / n)


def baselines(results: Iterable[tuple[pd.DataFrame, Mapping[str, Any]]]) -> dict[str, float]:
    """The constant classifier's test error (:func:`baseline_error`) of each experiment in the
    curves of each ``(curves, meta)`` pair, where its ``meta.json`` gives it."""
    return {name: error for curves, meta in results if (error := baseline_error(meta)) is not None
            for name in curves["experiment"].unique()}


@dataclass(frozen=True)
class Marks:
    """What a figure of curves marks beyond its means and bands.

    Parameters
    ----------
    baselines : Mapping
        Per experiment, the test error of the constant classifier (:func:`baseline_error`): where
        the line of a solver that swings before settling begins (:func:`mean_line`), and, with
        ``zoom``, the top of the full panels.
    extras : tuple of str
        Solver labels drawn as extras (variants the paper does not draw): grey, thinner, beneath
        the other lines (:data:`EXTRA_ZORDER`), and marked so in the legend.
    fit_label : tuple of str, optional
        ``(column, format)``: the first and last point of a solver whose checkpoints are fits are
        labelled with the value of that column, e.g. ``("pairs", "k = {:g}")``, each beside its
        point where it covers no line (:func:`place_labels`).
    epochs_axis : bool
        With iterations on the x axis, a second x axis on top in epochs of the panel's data.
    titles : Mapping
        Per experiment, its panel's title (a paper's figure names its panels by data set);
        by default ``<experiment> (<dataset>)``.
    names : Mapping
        Per solver label, the name its legend entry shows (a paper's method name, in place of a
        label such as ``fourier[max_pairs=1024]``); by default the label.
    problems : Mapping
        Per (experiment, solver label), the problem the solver solves, where the solvers of an
        experiment solve different ones (:func:`problems`): the legend groups them under it.
    colors : Mapping
        Per solver label, its colour (by default the next of matplotlib's cycle in its panel): a
        sweep's panels give a solver the same colour in each (:func:`small_multiples`).
    shared_y : Mapping
        Per experiment, a group: the panels of one group share one y range (the union of theirs),
        their legends under the plot, outside the data (a sweep's panels, :func:`small_multiples`).
    """

    baselines: Mapping[str, float] = field(default_factory=dict)
    extras: tuple[str, ...] = ()
    fit_label: tuple[str, str] | None = None
    epochs_axis: bool = False
    titles: Mapping[str, str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)
    problems: Mapping[tuple[str, str], str] = field(default_factory=dict)
    colors: Mapping[str, str] = field(default_factory=dict)
    shared_y: Mapping[str, str] = field(default_factory=dict)


#: How a legend heads the solvers of the biased and of the unbiased problem (:func:`problems`).
PROBLEM_NAMES = {True: "biased problem (b free)", False: "unbiased problem (b = 0)"}


def problems(results: Iterable[tuple[pd.DataFrame, Mapping[str, Any]]]) -> dict[tuple[str, str], str]:
    """The problem of each solver, by (experiment, label), of every experiment whose solvers solve
    problems with and without a bias side by side (a solver entry's ``bias``), from each
    ``(curves, meta)`` pair's ``meta.json`` (each entry of ``resolved.solvers`` records its problem
    then): :data:`PROBLEM_NAMES`. Empty for the others."""
    found = {}
    for _, meta in results:
        resolved = meta.get("resolved")
        entries = resolved.get("solvers") if isinstance(resolved, dict) else None
        biases = {(e["label"], e["problem"]["bias"]) for e in entries or []
                  if isinstance(e, dict) and isinstance(e.get("problem"), dict)
                  and isinstance(e["problem"].get("bias"), bool) and isinstance(e.get("label"), str)}
        if len({bias for _, bias in biases}) > 1:
            found.update({(str(meta.get("experiment")), label): PROBLEM_NAMES[bias] for label, bias in biases})
    return found


def run_marks(results: Iterable[tuple[pd.DataFrame, Mapping[str, Any]]]) -> Marks:
    """The :class:`Marks` of the figures of runs, from each ``(curves, meta)`` pair: the constant
    classifier's error (:func:`baselines`) and the problems of the solvers (:func:`problems`)."""
    results = list(results)
    return Marks(baselines=baselines(results), problems=problems(results))


#: Colours of extra variants (:class:`Marks`), in turn.
EXTRA_COLORS = ("0.35", "0.65")

#: Extra variants are drawn thinner than the papers' solvers (their line width, in points), and
#: beneath them (their ``zorder``: under matplotlib's lines, 2, above its bands, 1), so that a
#: solver whose curve an extra's meets stays visible.
EXTRA_WIDTH, EXTRA_ZORDER = 0.8, 1.5

#: With ``zoom``, the full panels' error axis ends this many times the constant classifier's error,
#: or the highest of the lines' starts where that is higher (:func:`start_top`).
BASELINE_HEADROOM = 1.12

#: :func:`final_against_parameter` draws the objective on a log axis when its values span more than this factor.
LOG_SPAN = 4.0

#: What the shaded bands are, written under every figure of curves.
BAND_NOTE = "Lines: mean over runs; shaded: ± one standard error over runs, where at least two runs cover the point."


@dataclass
class _Drawn:
    """A solver drawn in a panel: its curve, whether a dashed second quantity was drawn, its
    points (x, y as drawn, colour) that must stay visible when they fall outside the y range, and
    its line (the legend's handle)."""

    curve: MeanLine
    dashed: bool
    points: list[tuple[np.ndarray, np.ndarray, str]]
    frame: pd.DataFrame
    line: Line2D


def _label(label: str, curve: MeanLine, extra: bool) -> str:
    notes = [f"{curve.runs} run{'' if curve.runs == 1 else 's'}"]
    if curve.line_from is not None:
        notes.append("dots until it settles")
    if curve.fits:
        notes.append("a point per fit")
    if extra:
        notes.append("extra: not in the paper")
    return f"{label} ({'; '.join(notes)})"


def _draw_curve(ax: Axes, label: str, frame: pd.DataFrame, x: str, y: Axis = Y_AXES["test_error"],
                dashed: Axis | None = None, baseline: float | None = None,
                color: str | None = None, extra: bool = False) -> _Drawn | None:
    """One solver's mean of ``y`` against ``x`` with a band of one standard error (:class:`MeanLine`).

    Points for fits, and before a swinging solver's line begins; dashed after epoch 1 for some.
    With ``dashed``, also the mean of that column, dashed in the same colour without a band,
    where the runs measured it. ``color`` replaces the next colour of the cycle; ``extra`` draws
    the line as an extra's (thin, beneath the others).
    """
    curve = mean_line(frame, x, y.column, baseline if y.column == "test_error" else None)
    if curve is None:
        return None
    k = y.factor
    style: dict[str, Any] = {"color": color, **({"lw": EXTRA_WIDTH, "zorder": EXTRA_ZORDER} if extra else {})}
    pre = ~curve.on_line
    grid, mean, se = curve.x[~pre], curve.mean[~pre], curve.se[~pre]
    line, = ax.plot(grid, k * mean, label=_label(label, curve, extra), marker="o" if curve.fits else None,
                    ms=3.5, **style)
    colour = line.get_color()
    points = []
    if curve.fits:
        points.append((grid, k * mean, to_hex(colour)))
    if curve.line_from is not None:  # its checkpoints before, as points (the means there, not interpolated)
        rows = frame[np.isfinite(column_numbers(frame, y.column)) & (column_numbers(frame, x) < curve.line_from)]
        early = fit_points(rows, x, y.column)
        ax.plot(early.x, k * early.mean, ls="none", marker=".", ms=3, color=colour)
    second = None if dashed is None else mean_line(frame, x, dashed.column)
    as_line: dict[str, Any] = {"zorder": line.get_zorder(), "lw": line.get_linewidth()}  # an extra's: thin, beneath
    if dashed is not None and second is not None:
        ax.plot(second.x, dashed.factor * second.mean, ls="--", color=colour, **as_line)
    banded = np.isfinite(se)
    spread = np.where(banded, se, 0.0)
    low = np.maximum(k * (mean - spread), LOG_FLOOR) if y.log else k * (mean - spread)
    ax.fill_between(grid, low, k * (mean + spread), where=banded, color=colour, alpha=0.2, lw=0)
    split = curve.dashed_from
    if split is not None and grid[0] < split < grid[-1]:
        at = np.interp(np.log10(split), np.log10(grid), mean)
        before = grid < split
        line.set_data(np.r_[grid[before], split], k * np.r_[mean[before], at])
        ax.plot(np.r_[split, grid[~before]], k * np.r_[at, mean[~before]], ls="--", color=colour, **as_line)
    return _Drawn(curve, second is not None, points, frame, line)


def _mark_outside(ax: Axes, drawn: list[_Drawn], factor: float,
                  fit_label: tuple[str, str] | None) -> list[Annotation]:
    """Points beyond the y range drawn on its edge as open triangles (pointing the way they went),
    so that none is silently missing; the first and last fit of each solver labelled (``fit_label``),
    the labels returned (:func:`place_labels` places them once the figure is laid out)."""
    bottom, top = ax.get_ylim()
    labels = []
    for d in drawn:
        for xs, ys, colour in d.points:
            for beyond, edge, marker in ((ys > top, top, "^"), (ys < bottom, bottom, "v")):
                if beyond.any():
                    ax.plot(xs[beyond], np.full(int(beyond.sum()), edge), ls="none", marker=marker, ms=5,
                            mfc="none", color=colour, clip_on=False)
        if fit_label is None or not d.curve.fits or fit_label[0] not in d.frame:
            continue
        column, text = fit_label
        values = d.frame.groupby("checkpoint")[column].mean()
        for value, at in ((values.iloc[0], 0), (values.iloc[-1], -1)):
            shown = float(np.clip(factor * d.curve.mean[at], bottom, top))
            dx, dy, ha, va = LABEL_PLACES[0]
            labels.append(ax.annotate(text.format(value), (d.curve.x[at], shown), xytext=(dx, dy),
                                      textcoords="offset points", fontsize=7, ha=ha, va=va, color=d.points[0][2]))
    return labels


#: A place of a point's label: its offset from the point (in points) and its alignment there.
LabelPlace = tuple[float, float, Literal["left", "center", "right"], Literal["bottom", "top"]]

#: Where :func:`place_labels` may put a point's label, in order of preference: right of the point
#: first, then left, then over and under it.
LABEL_PLACES: tuple[LabelPlace, ...] = (
    (5, 3, "left", "bottom"), (5, -3, "left", "top"), (-5, 3, "right", "bottom"), (-5, -3, "right", "top"),
    (0, 6, "center", "bottom"), (0, -6, "center", "top"))


def place_labels(fig: Figure, labels: list[Annotation]) -> None:
    """Put each of ``labels`` (annotations of points of ``fig``, laid out) at the first of
    :data:`LABEL_PLACES` where its box lies inside its panel and covers no line of it, no point of a
    line drawn as points, no legend and no label placed before it; where there is no such place, at
    the first of those covering fewest.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, laid out (the places are measured as drawn).
    labels : list of matplotlib.text.Annotation
        Labels of points, each with ``textcoords="offset points"``, in the order they are placed
        (none: nothing is measured).
    """
    if not labels:
        return
    renderer = FigureCanvasAgg(fig).get_renderer()
    placed: dict[object, list[Bbox]] = {}
    for label in labels:
        ax = label.axes
        if ax is None:
            continue
        taken = placed.setdefault(ax, [])
        legend = ax.get_legend()
        boxes = [*taken, *([legend.get_window_extent(renderer)] if legend is not None else [])]
        paths = [(line.get_transform().transform_path(line.get_path()), line.get_linestyle() in ("None", " ", ""))
                 for line in ax.get_lines() if line.get_visible()]
        covers = [_covers(_label_box(label, place, renderer), ax.bbox, paths, boxes) for place in LABEL_PLACES]
        best = LABEL_PLACES[covers.index(min(covers))]  # the first of the best, in the order of preference
        taken.append(_label_box(label, best, renderer))


def _covers(box: Bbox, panel: Bbox, paths: list[tuple[MplPath, bool]], boxes: list[Bbox]) -> int:
    """How many of the lines (``paths`` in display units, each with whether it is drawn as points
    only) and ``boxes`` a label's ``box`` covers; more than all of them where it leaves ``panel``."""
    inside = panel.x0 <= box.x0 and box.x1 <= panel.x1 and panel.y0 <= box.y0 and box.y1 <= panel.y1
    hits = sum(bool(box.count_contains(path.vertices)) if points else path.intersects_bbox(box, filled=False)
               for path, points in paths)
    return (0 if inside else len(paths) + len(boxes) + 1) + hits + sum(box.overlaps(b) for b in boxes)


def _label_box(label: Annotation, place: LabelPlace, renderer: RendererBase) -> Bbox:
    """Put ``label`` at ``place`` (of :data:`LABEL_PLACES`) and return its box there, in display units."""
    dx, dy, ha, va = place
    label.xyann = (dx, dy)
    label.set_horizontalalignment(ha)
    label.set_verticalalignment(va)
    return label.get_window_extent(renderer)


#: How far under its panel's bottom edge a legend outside the data begins, in points: below the x
#: tick labels and the x axis label.
LEGEND_DROP = 40


def _legend(ax: Axes, drawn: list[_Drawn], experiment: str, marks: Marks, size: float) -> None:
    """The panel's legend: where its solvers solve different problems (:attr:`Marks.problems`),
    grouped under a heading per problem, in the order the problems first appear; under the plot,
    outside the data, for a panel of :attr:`Marks.shared_y`."""
    groups: dict[str | None, list[Line2D]] = {}
    for d in drawn:
        groups.setdefault(marks.problems.get((experiment, str(d.frame["solver"].iloc[0]))), []).append(d.line)
    handles = None if len(groups) < 2 else [
        h for problem, lines in groups.items() for h in [Line2D([], [], ls="none", label=f"{problem or 'other'}:"),
                                                         *lines]]
    outside: dict[str, Any] = {} if experiment not in marks.shared_y else {
        "loc": "upper center", "bbox_to_anchor": (0.5, 0.0),  # under the tick labels and the axis label
        "bbox_transform": ax.transAxes + ScaledTranslation(0, -LEGEND_DROP / 72, ax.figure.dpi_scale_trans)}
    if handles is None:
        ax.legend(fontsize=size, **outside)
    else:
        ax.legend(handles=handles, fontsize=size, **outside)


def _log_bottom(curves: list[MeanLine], factor: float) -> float | None:
    """Just below the lowest positive mean or band edge of ``curves`` (None when there is none)."""
    values = np.concatenate([factor * np.r_[c.mean, c.mean - c.se] for c in curves] or [np.array([])])
    positive = values[np.isfinite(values) & (values > 0)]
    return float(positive.min()) / 1.5 if positive.size else None


def _on_panel(curve: MeanLine, factor: float, left: float) -> tuple[np.ndarray, np.ndarray]:
    """The points of ``curve``'s line (or its fits) from ``left`` on, with a finite mean: x and the mean
    times ``factor``, as drawn."""
    keep = curve.on_line & (curve.x >= left * (1 - 1e-9)) & np.isfinite(curve.mean)
    return curve.x[keep], factor * curve.mean[keep]


def start_top(curves: Iterable[MeanLine], baseline: float, factor: float, left: float = -np.inf) -> float:
    """The top of a full panel of errors: :data:`BASELINE_HEADROOM` times the constant classifier's
    error or the highest of the lines' starts, where that is higher, so that every line's start is in view.

    Parameters
    ----------
    curves : iterable of MeanLine
        The lines drawn in the panel.
    baseline : float
        The constant classifier's error (:func:`baseline_error`).
    factor : float
        The y axis' factor (:class:`Axis`).
    left : float
        The panel's left end: a line's start is its first point there or right of it (a line that
        begins left of the panel starts at its edge); a swinging solver's line starts at ``line_from``.

    Returns
    -------
    float
        The top, in the axis' units.
    """
    starts = [float(mean[0]) for curve in curves if (mean := _on_panel(curve, factor, left)[1]).size]
    return BASELINE_HEADROOM * max([factor * baseline, *starts])


def zoom_range(curves: Iterable[MeanLine], finals: ArrayLike, x: Axis, y: Axis, left: float = -np.inf,
               top: float | None = None) -> tuple[float, float]:
    """The y range of a zoom row: from :data:`ZOOM_RANGE`'s first factor times the smallest of
    ``finals`` to its second times their median, stretched to every line's lowest point on the
    panel and to the highest of the final stretch of each (its last :data:`ZOOM_TAIL` on the x
    axis, in its scale), with a margin of :data:`ZOOM_MARGIN` beyond those, so that a dip below the final values
    and a line that ends far above the others stay in view.

    Parameters
    ----------
    curves : iterable of MeanLine
        The lines drawn in the panel (the dots of a swinging solver before its line aside).
    finals : array_like
        The solvers' final means, as drawn (times ``y.factor``).
    x : Axis
        The x axis (its scale).
    y : Axis
        The y axis: on a log one the margin is a factor; it ends at most at ``y.limit``.
    left : float
        The panel's left end: only what is right of it counts.
    top : float, optional
        The most the range may reach (the full panel's top).

    Returns
    -------
    tuple of float
        ``(bottom, top)``.
    """
    finals = np.asarray(finals, dtype=float)
    low, high = ZOOM_RANGE[0] * float(np.min(finals)), ZOOM_RANGE[1] * float(np.median(finals))
    scale, unscale = (np.log10, lambda v: 10.0 ** v) if y.log else (np.asarray, np.asarray)
    lows, highs = [], []
    for curve in curves:
        xs, values = _on_panel(curve, y.factor, left)
        keep = values > 0 if y.log else np.ones(values.size, bool)
        if not keep.any():
            continue
        at, values = (np.log10(xs[keep]) if x.log else xs[keep]), scale(values[keep])
        lows.append(values.min())
        highs.append(values[at >= at[-1] - ZOOM_TAIL * (at[-1] - at[0])].max())
    if lows:
        lowest, highest = min(lows), max(highs)
        margin = ZOOM_MARGIN * (highest - lowest)
        floor = lowest - margin if y.log or lowest < 0 else max(lowest - margin, 0.0)
        low, high = min(low, float(unscale(floor))), max(high, float(unscale(highest + margin)))
    for limit in (y.limit, top):
        if limit is not None:
            high = min(high, limit)
    return low, high


def _panel(ax: Axes, sub: pd.DataFrame, x: Axis, y: Axis, dashed: Axis | None, marks: Marks,
           baseline: float | None) -> list[_Drawn]:
    """Draw every solver of one experiment's rows into ``ax`` (extras in grey, colours of :class:`Marks`)."""
    extra_colours = iter(EXTRA_COLORS * len(marks.extras))
    drawn = []
    for label, frame in sub.groupby("solver", sort=False):
        extra = str(label) in marks.extras
        colour = next(extra_colours) if extra else marks.colors.get(str(label))
        d = _draw_curve(ax, marks.names.get(str(label), str(label)), frame, x.column, y, dashed, baseline, colour,
                        extra)
        if d is not None:
            drawn.append(d)
    if x.log:
        log_scale(ax, "x")
        starts = [float(d.curve.x[0]) for d in drawn if not d.curve.fits]
        if starts and max(starts) > min(starts):  # from where every solver has begun
            ax.set_xlim(left=max(starts))
    ax.grid(True, which="major", alpha=0.3)
    return drawn


def _epochs_axis(ax: Axes, sub: pd.DataFrame, x: Axis) -> None:
    """A second x axis on top, in epochs of the panel's data (iterations on the x axis only)."""
    rows = sub[(column_numbers(sub, "epoch") > 0) & (column_numbers(sub, x.column) > 0)]
    if x.column != "iteration" or rows.empty:
        return
    n = float(np.median(rows["iteration"] / rows["epoch"]))
    def to_epochs(t: ArrayLike) -> ArrayLike:
        return np.asarray(t, dtype=float) / n

    def to_iterations(e: ArrayLike) -> ArrayLike:
        return np.asarray(e, dtype=float) * n

    top = ax.secondary_xaxis("top", functions=(to_epochs, to_iterations))
    if x.log:  # the secondary axis takes the parent's log scale
        _text_log_labels(top.xaxis, 10)
    top.set_xlabel(f"epochs of {sub['dataset'].iloc[0]} ({n:.0f} examples)", fontsize=8)
    top.tick_params(labelsize=8)


def curves_figure(curves: pd.DataFrame, x: Axis, y: Axis, title: str | None = None, zoom: bool = False,
                  size: tuple[float, float] = (5.2, 4.2), legend_size: float = 8,
                  band_floor: bool = False, dashed: Axis | None = None, marks: Marks = Marks()) -> Figure | None:
    """A figure of ``y`` against ``x``, one panel per experiment, one line per solver (None when nothing is drawable).

    Each line is the mean over runs with a band of one standard error, where at least two runs
    cover the point (:func:`mean_line`); a note under the figure says so. On a log x axis a
    panel starts where every solver's curve has begun (a solver whose checkpoints are fits aside),
    not at the first checkpoint of the one that starts first.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    x, y : Axis
        The axes; only rows with a positive ``x`` and a finite ``y`` are drawn
        (:func:`drawable`), so a solver without either has no line.
    title : str, optional
        Figure title.
    zoom : bool
        Two rows of panels: the full curves (where ``marks`` gives the constant classifier's error,
        the error axis from 0 to :data:`BASELINE_HEADROOM` times it or times the highest of the
        lines' starts: :func:`start_top`), and under them the same curves with the y axis over
        :data:`ZOOM_RANGE` of the solvers' final means (from the smallest times the first factor
        to their median times the second), stretched to every line's lowest point and to the
        final stretch of each (:func:`zoom_range`), at most ``y.limit`` and the full panel's top:
        where the solvers converge and differ.
    size : tuple of float
        Inches of one panel.
    legend_size : float
        Font size of the legends.
    band_floor : bool
        With a log y axis, where a band reaches zero its lower edge is drawn at
        :data:`LOG_FLOOR`; True lets the axis extend down to it (as the papers' objective
        figures are drawn), False ends the axis below the lowest positive mean or band edge, so
        that such a band runs off its bottom.
    dashed : Axis, optional
        A second quantity on the same y axis, each solver's mean dashed in its colour, where
        the runs measured it (the Pegasos paper's Figure 2 draws the test loss so).
    marks : Marks
        Baselines, extras, labels of fits, an epochs axis.

    Returns
    -------
    matplotlib.figure.Figure or None
    """
    curves = drawable(curves, x, y)
    if curves.empty:
        return None
    labels: list[Annotation] = []
    names = list(dict.fromkeys(curves["experiment"]))
    rows = 2 if zoom else 1
    fig = Figure(figsize=(size[0] * len(names), size[1] * (1.7 if zoom else 1) + 0.3))
    axes = fig.subplots(rows, len(names), squeeze=False, sharex="col",
                        gridspec_kw={"height_ratios": (3, 2)} if zoom else None)
    for j, name in enumerate(names):
        sub = curves[curves["experiment"] == name]
        baseline = marks.baselines.get(name)
        full_top = None
        for row in range(rows):
            ax = axes[row][j]
            drawn = _panel(ax, sub, x, y, dashed, marks, baseline)
            if y.log:
                log_scale(ax, "y")
                bottom = None if band_floor else _log_bottom([d.curve for d in drawn], y.factor)
                if bottom is not None:
                    ax.set_ylim(bottom=bottom)
            two = dashed is not None and any(d.dashed for d in drawn)
            ax.set_ylabel(f"{y.label} (solid), {dashed.label} (dashed)" if two and dashed else y.label)
            if row == rows - 1:
                ax.set_xlabel(x.label)
            if row == 0:
                ax.set_title(marks.titles.get(name, f"{name} ({sub['dataset'].iloc[0]})"))
                _legend(ax, drawn, name, marks, legend_size)
                if marks.epochs_axis:
                    _epochs_axis(ax, sub, x)
            left = ax.get_xlim()[0]  # where a log x axis starts: every solver has begun
            if zoom and row == 0 and baseline is not None:
                full_top = start_top([d.curve for d in drawn], baseline, y.factor, left)
                ax.set_ylim(0, full_top)
            if zoom and row == 1:
                finals = y.factor * final_rows(sub).groupby("solver")[y.column].mean()
                ax.set_ylim(*zoom_range([d.curve for d in drawn], finals, x, y, left, full_top))
                ax.set_ylabel(f"{y.label}, zoom on the final values")
            labels += _mark_outside(ax, drawn, y.factor, marks.fit_label)
    _share_y(axes, names, marks)
    below = [len(ax.get_legend().get_texts()) for ax, name in zip(axes[0], names)
             if name in marks.shared_y and ax.get_legend() is not None]
    if below:  # legends under their panels: the figure grows by them, the panels keep their height
        fig.set_size_inches(fig.get_figwidth(), fig.get_figheight() + (LEGEND_DROP + 14 * max(below) + 8) / 72)
    _lay_out(fig, title, BAND_NOTE)
    place_labels(fig, labels)
    return fig


def _share_y(axes: np.ndarray, names: list[str], marks: Marks) -> None:
    """Give the panels of each group of :attr:`Marks.shared_y` (``axes[row][j]`` draws ``names[j]``)
    one y range per row, the union of theirs."""
    groups: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        if name in marks.shared_y:
            groups.setdefault(marks.shared_y[name], []).append(j)
    for columns in groups.values():
        for row in axes:
            limits = np.array([row[j].get_ylim() for j in columns])
            for j in columns:
                row[j].set_ylim(limits[:, 0].min(), limits[:, 1].max())


def metric_curves(curves: pd.DataFrame, out_stem: Path, x: Axis, y: Axis, title: str | None = None,
                  zoom: bool = False, dpi: int = 130, size: tuple[float, float] = (5.2, 4.2),
                  legend_size: float = 8, band_floor: bool = False, dashed: Axis | None = None,
                  marks: Marks = Marks()) -> list[Path]:
    """Draw ``y`` against ``x`` (:func:`curves_figure`) into ``out_stem.png`` and ``out_stem.svg``.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    out_stem : pathlib.Path
        Output path without suffix.
    x, y : Axis
        The axes (:data:`X_AXES`, :data:`Y_AXES`, or others).
    title, zoom, size, legend_size, band_floor, dashed, marks
        As for :func:`curves_figure`.
    dpi : int
        Resolution of the PNG file.

    Returns
    -------
    list of pathlib.Path
        The files written (none when nothing is drawable).
    """
    fig = curves_figure(curves, x, y, title, zoom, size, legend_size, band_floor, dashed, marks)
    return [] if fig is None else save_figure(fig, out_stem, dpi=dpi)


def error_curves(curves: pd.DataFrame, out_stem: Path, cost: Literal["kernel_evals", "inner_products"] = "kernel_evals",
                 title: str | None = None, zoom: bool = False, dpi: int = 130, marks: Marks = Marks()) -> list[Path]:
    """Draw test error against a cost (log axis), one panel per experiment.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    out_stem : pathlib.Path
        Output path without suffix; ``.png`` and ``.svg`` are written.
    cost : {"kernel_evals", "inner_products"}
        Kernel evaluations (the SBP paper's Figure 2), or d-dimensional inner products (its
        Figure 3): kernel evaluations for kernel solvers, one inner product each, and the
        ``inner_products`` column for random Fourier features (``k n`` for ``k`` pairs).
    title : str, optional
        Figure title.
    zoom : bool
        A second row of panels zoomed on the final mean test errors (:func:`curves_figure`).
    dpi : int
        Resolution of the PNG file.
    marks : Marks
        As for :func:`curves_figure`.

    Returns
    -------
    list of pathlib.Path
        The files written (none when nothing has a positive cost).
    """
    x = curves["kernel_evals"]
    if cost == "inner_products" and "inner_products" in curves:
        x = curves["inner_products"].fillna(x)
    return metric_curves(curves.assign(cost=x), out_stem, Axis("cost", COSTS[cost], log=True), Y_AXES["test_error"],
                         title, zoom, dpi, marks=marks)


def objective_curves(curves: pd.DataFrame, out_stem: Path, title: str | None = None, dpi: int = 130,
                     marks: Marks = Marks()) -> list[Path]:
    """Draw the primal objective against iterations (log-log), one panel per experiment.

    One line per solver: the mean over runs of its finite objectives with a band of one
    standard error (cut at :data:`LOG_FLOOR`, above zero), and, dashed in the same colour,
    the mean test hinge loss where the runs measured it (the Pegasos paper's Figure 2, left).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    out_stem : pathlib.Path
        Output path without suffix; ``.png`` and ``.svg`` are written.
    title : str, optional
        Figure title.
    dpi : int
        Resolution of the PNG file.
    marks : Marks
        As for :func:`curves_figure` (extras, an epochs axis).

    Returns
    -------
    list of pathlib.Path
        The files written (none when no solver has a primal objective).
    """
    return metric_curves(curves, out_stem, X_AXES["iterations"], Y_AXES["primal_objective"], title, dpi=dpi,
                         size=(5.6, 4.2), legend_size=7, band_floor=True, dashed=Y_AXES["test_hinge_loss"],
                         marks=marks)


def final_against_parameter(curves: pd.DataFrame, out_stem: Path, parameter: str, xlabel: str,
                            title: str | None = None, dpi: int = 130,
                            read_at: Mapping[str, ReadAt] | None = None) -> list[Path]:
    """Draw the primal objective against an integer solver parameter (log2 axis).

    One panel per group of solvers (:func:`~sbpbench.results.curves.finals_by_parameter`: a
    label's text up to its first comma), the mean over runs with its standard error as error
    bars: at the end of the runs, or, for a group in ``read_at``, one line per value there
    (:func:`~sbpbench.results.curves.values_by_parameter`). The objective axis is logarithmic
    where a panel's values span more than :data:`LOG_SPAN` times.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files of solvers that differ in ``parameter``.
    out_stem : pathlib.Path
        Output path without suffix; ``.png`` and ``.svg`` are written.
    parameter : str
        The solver parameter on the x axis, e.g. ``mini_batch``.
    xlabel : str
        Its axis label.
    title : str, optional
        Figure title.
    dpi : int
        Resolution of the PNG file.
    read_at : Mapping, optional
        ``{group: ReadAt}``: where along their runs the solvers of a group are read.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    read_at = read_at or {}
    fig, panels = _panels(finals_by_parameter(curves, parameter), "group", (6.2, 4.0))
    for ax, group, last in panels:
        read = read_at.get(group)
        rows = curves[curves["solver"].str.split(",").str[0] == group]
        points = (values_by_parameter(rows, parameter, read) if read is not None
                  else last.assign(at=np.nan)[[parameter, "at", "run", "primal_objective"]])
        for at, frame in points.groupby("at", dropna=False, sort=True):
            g = frame.groupby(parameter)["primal_objective"].agg(["mean", "std", "count"]).reset_index()
            se = (g["std"] / np.sqrt(g["count"])).where(g["count"] >= 2, 0.0)
            label = "end of the runs" if read is None else f"{read.name} = {at:g}"
            ax.errorbar(g[parameter], g["mean"], yerr=se, marker="o", capsize=3, label=label)
        log_scale(ax, "x", base=2)
        if points["primal_objective"].max() > LOG_SPAN * points["primal_objective"].min() > 0:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(xlabel)
        ax.set_ylabel("primal objective" if read is not None else "primal objective at the end")
        ax.set_title(f"{group} ({last['dataset'].iloc[0]})")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.grid(True, alpha=0.3)
    _lay_out(fig, title, "Points: mean over runs; bars: ± one standard error over runs.")
    return save_figure(fig, out_stem, dpi=dpi)


#: An experiment with this many solver entries or more is drawn one panel per setting, with a summary.
SMALL_MULTIPLES_AT = 10


def small_multiples(curves: pd.DataFrame, marks: Marks) -> tuple[pd.DataFrame, Marks]:
    """``curves`` and ``marks`` with every experiment of :data:`SMALL_MULTIPLES_AT` entries or more
    drawn as a sweep: split into one experiment per setting (``EXPERIMENT: SETTING``, the swept
    kernel and problem values, :func:`~sbpbench.outputs.profiles.with_problems`), so that
    :func:`curves_figure` draws it one panel per setting with the solvers side by side, each named
    without its setting and in one colour on every panel, the panels sharing one y range and their
    legends under them (:attr:`Marks.shared_y`); an experiment of one setting stays one panel, its
    legend under it. Each panel is titled with its experiment and data set, and its setting under
    them. The others unchanged."""
    entries = curves.groupby("experiment", sort=False)["solver"].nunique()
    many = set(entries[entries >= SMALL_MULTIPLES_AT].index)
    if not many:
        return curves, marks
    split = curves["experiment"].isin(many)
    named = with_problems(curves[split])
    names = curves["experiment"].astype(str).copy()
    names[split] = named["problem"]
    renamed = dict(zip(zip(curves["experiment"], curves["solver"]), names))
    titles = {problem: f"{experiment} ({dataset})" + problem.removeprefix(str(experiment)).replace(": ", "\n", 1)
              for problem, experiment, dataset in zip(named["problem"], named["experiment"], named["dataset"])}
    labels = dict(zip(named["solver"].astype(str), named["profiled"]))
    palette = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    solvers = list(dict.fromkeys(labels.values()))
    return curves.assign(experiment=names), replace(
        marks, baselines={**marks.baselines, **{new: marks.baselines[old] for (old, _), new in renamed.items()
                                                   if old in marks.baselines}},
        problems={(renamed.get(key, key[0]), key[1]): problem for key, problem in marks.problems.items()},
        names={**labels, **marks.names},
        colors={**{label: palette[solvers.index(solver) % len(palette)] for label, solver in labels.items()},
                **marks.colors},
        shared_y={**marks.shared_y, **{new: str(old) for (old, _), new in renamed.items() if old in many}},
        titles={**titles, **marks.titles})


def sweep_summary(curves: pd.DataFrame, out_stem: Path, dpi: int = 130) -> list[Path]:
    """Each entry's final error, one panel per setting with the solvers side by side: a sweep's
    results at a glance.

    The mean over runs of the last checkpoint's validation error where the runs measured one
    (the error a setting is chosen on, :func:`~sbpbench.outputs.summary.chosen_on`), else of its
    test error, with one standard error as bars: a panel per setting (the swept kernel and problem
    values, :func:`~sbpbench.outputs.profiles.with_problems`), a tick per solver (its label without
    the setting), every solver with a final error (LIBSVM, Fourier features) included, in the order
    of the file; one y range for all panels; the lowest of each panel starred.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files of one experiment.
    out_stem : pathlib.Path
        Output path without suffix; ``.png`` and ``.svg`` are written.
    dpi : int
        Resolution of the PNG file.

    Returns
    -------
    list of pathlib.Path
        The files written (none without a checkpoint).
    """
    from sbpbench.outputs.summary import chosen_on

    column = chosen_on(curves)
    final = with_problems(final_rows(curves))
    final = final[np.isfinite(column_numbers(final, column))]
    if final.empty:
        return []
    panels = list(dict.fromkeys(final["problem"]))
    widths = [max(2.0, 0.45 * final[final["problem"] == p]["profiled"].nunique()) for p in panels]
    fig = Figure(figsize=(sum(widths) + 1.2 * len(panels), 5.4))
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True, gridspec_kw={"width_ratios": widths})[0]
    for ax, problem in zip(axes, panels):
        rows = final[final["problem"] == problem]
        g = rows.groupby("profiled", sort=False).agg(mean=(column, "mean"), std=(column, "std"),
                                                     runs=("run", "count"))
        se = (g["std"] / np.sqrt(g["runs"])).where(g["runs"] >= 2, 0.0)
        at = np.arange(len(g))
        ax.errorbar(at, 100 * g["mean"], yerr=100 * se, ls="none", marker="o", capsize=3)
        best = int(np.argmin(g["mean"].to_numpy()))
        ax.plot([at[best]], [100 * g["mean"].iloc[best]], ls="none", marker="*", ms=12, color="C3")
        ax.set_xticks(at, list(g.index), rotation=90, fontsize=7)
        ax.set_title(problem, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    which = "validation" if column == "validation_error" else "test"
    axes[0].set_ylabel(f"{which} error at the end (%)")
    _lay_out(fig, f"{curves['experiment'].iloc[0]}: final {which} error of each entry, one panel per setting",
             "Points: mean over runs of the last checkpoint; bars: ± one standard error; star: the lowest of "
             "its panel.")
    return save_figure(fig, out_stem, dpi=dpi)


#: The line styles and markers (on each step's corner) that keep apart solvers whose profiles coincide.
PROFILE_STYLES, PROFILE_MARKERS = ("-", "--", ":", "-."), ("o", "s", "^", "D", "v", "P")


def profile_figure(curves: pd.DataFrame, out_stem: Path, dpi: int = 130) -> list[Path]:
    """The performance profiles of the solvers of ``curves`` over its problems (the settings of a
    sweep, the experiments: several data sets), one panel per cost that some solver has
    (:func:`~sbpbench.outputs.profiles.performance_profile`): each solver's fraction of the
    problems against the factor tau (log axis, base 2) of the best cost within which it reaches
    the target, a step line, its legend outside the data; the target and the costs stated under
    the figure (:func:`~sbpbench.outputs.profiles.caption`).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files, of one experiment or several.
    out_stem : pathlib.Path
        Output path without suffix; ``.png`` and ``.svg`` are written.
    dpi : int
        Resolution of the PNG file.

    Returns
    -------
    list of pathlib.Path
        The files written; none with fewer than two problems or two solvers.
    """
    profiles = [p for cost in PROFILE_COSTS if (p := performance_profile(curves, cost)) is not None]
    if not profiles:
        return []
    fig = Figure(figsize=(7.4 * len(profiles), 4.6))
    axes = fig.subplots(1, len(profiles), squeeze=False)[0]
    palette = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    solvers = list(dict.fromkeys(s for p in profiles for s in p.solvers))
    for ax, profile in zip(axes, profiles):
        for solver, (taus, fractions) in zip(profile.solvers, profile.steps()):
            k = solvers.index(solver)
            ax.plot(taus, fractions, label=solver, color=palette[k % len(palette)], lw=1.8,
                    ls=PROFILE_STYLES[k % len(PROFILE_STYLES)], marker=PROFILE_MARKERS[k % len(PROFILE_MARKERS)],
                    ms=5, markevery=slice(0, None, 2))  # where each level begins
        log_scale(ax, "x", base=2)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel(f"tau: within this factor of the best solver's {profile.cost.label}")
        ax.set_ylabel("fraction of problems")
        ax.set_title(f"cost: {profile.cost.label}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _lay_out(fig, "Performance profile", caption(profiles))
    return save_figure(fig, out_stem, dpi=dpi)


def _meta_or_none(run: Path) -> dict[str, Any]:
    """A run folder's ``meta.json``, empty when it has none (the drawing then has no baseline).

    Raises
    ------
    UserError
        The file is there but not a ``meta.json`` of sbpbench (:func:`~sbpbench.results.store.read_meta`).
    """
    return read_meta(run) if (run / "meta.json").exists() else {}


@dataclass
class Plotted:
    """What :func:`plot_results` did: the files written, the solvers left out, the run folders read."""

    files: list[Path]
    notes: list[str]
    runs: list[Path]


def plot_results(root: str | Path, out_dir: str | Path | None = None, x: str = "kernel_evals",
                 y: str = "test_error") -> Plotted:
    """Draw ``y`` against ``x`` for the newest run of every experiment under ``root``.

    With the default axes these are the SBP paper's Figure 2 (``figure2``, test error against
    kernel evaluations) and, when there are Fourier runs, its Figure 3 (``figure3``, against
    inner products); other axes are written as ``<y>-vs-<x>``, e.g. ``test_error-vs-seconds``.
    An experiment of a sweep is drawn one panel per setting (:func:`small_multiples`), with its
    ``sweep-summary``; with the default axes, over two problems or more (the settings of a sweep,
    the experiments of a results tree: several data sets) the solvers' performance profiles
    (``performance-profile``, :func:`profile_figure`). Solvers without the asked columns (linear
    solvers have no kernel evaluations, most solvers no duality gap) are left out, each with a note.

    Parameters
    ----------
    root : str or pathlib.Path
        A run folder or a results tree.
    out_dir : str or pathlib.Path, optional
        Where to write; defaults to ``root`` itself.
    x : str
        A key of :data:`X_AXES`.
    y : str
        A key of :data:`Y_AXES`.

    Returns
    -------
    Plotted
        The files written (none when no run has both columns), the notes, the run folders read
        (none when no run has a checkpoint).

    Raises
    ------
    UserError
        ``x`` or ``y`` is not an axis.
    """
    for option, name, axes in (("--x", x, X_AXES), ("--y", y, Y_AXES)):
        if name not in axes:
            raise UserError(f"{option} {name}: expected one of {', '.join(axes)}")
    runs = newest_runs(root)
    read = [(read_curves(curves_file(r) or r, traits=True), _meta_or_none(r)) for r in runs]
    curves = pd.concat([frame for frame, _ in read], ignore_index=True) if runs else None
    if curves is None or curves.empty:  # also runs that all failed before their first checkpoint
        return Plotted([], [], [])
    out = Path(out_dir) if out_dir is not None else Path(root)
    notes = left_out(curves, X_AXES[x], Y_AXES[y])
    split, marks = small_multiples(curves, run_marks(read))
    if (x, y) != DEFAULT_AXES:
        return Plotted(metric_curves(split, out / f"{y}-vs-{x}", X_AXES[x], Y_AXES[y], marks=marks), notes, runs)
    written = error_curves(split, out / "figure2", marks=marks)
    for frame, _ in read:  # a sweep's summary, one per experiment
        if not frame.empty and frame["solver"].nunique() >= SMALL_MULTIPLES_AT:
            stem = "sweep-summary" if len(read) == 1 else f"sweep-summary-{frame['experiment'].iloc[0]}"
            written += sweep_summary(frame, out / stem)
    if "inner_products" in split and split["inner_products"].notna().any():
        written += error_curves(split, out / "figure3", "inner_products", marks=marks)
    written += profile_figure(curves, out / "performance-profile")  # the settings of a sweep, several data sets
    return Plotted(written, notes, runs)
