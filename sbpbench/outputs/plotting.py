"""Drawings of result curves: the kinds of figure the papers declare, and ``sbpbench plot``.

Every drawing takes rows of ``curves.csv`` files and writes ``<stem>.png`` and ``<stem>.svg``:

* :func:`metric_curves`: any quantity of :data:`Y_AXES` against any of :data:`X_AXES`, one panel
  per experiment, one line per solver, the mean over runs
  (:func:`~sbpbench.results.curves.mean_curve`) with a band of one standard deviation. Solvers whose
  ``dashed_after_first_epoch`` is set (the Perceptron, whose guarantee covers one pass) are drawn
  dashed after their first epoch, as in the SBP paper's Figure 2.
  The two kinds of curve figure the papers declare are two of its cases:
* :func:`error_curves`: test error (linear axis) against a cost (log axis), kernel evaluations
  or d-dimensional inner products;
* :func:`objective_curves`: primal objective against iterations (log-log);
* :func:`final_against_parameter`: the final primal objective against a solver parameter, one
  panel per group of solvers.

:func:`plot_results` draws them for ``sbpbench plot``; :func:`figure_svg` gives a figure as SVG
text for pages that inline it.

Figures are :class:`matplotlib.figure.Figure` objects written straight to files, never through
``pyplot``: importing this module selects no backend and leaves matplotlib's global state as the
caller set it (an interactive session keeps its backend).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from sbpbench.errors import UserError
from sbpbench.files import atomic_write
from sbpbench.results.curves import final_rows, finals_by_parameter, first_epoch_end, mean_curve
from sbpbench.results.lookup import newest_runs  # noqa: E402
from sbpbench.results.store import curves_file, read_curves, solver_trait  # noqa: E402

#: With ``zoom``, a panel's test-error axis runs from the first of these multiples of its
#: smallest final mean error to the second of its largest: the range where the solvers converge
#: and differ, as the papers' panels show it.
ZOOM_RANGE = (0.8, 1.6)

#: With a log axis, a band's lower edge is cut here (above zero).
LOG_FLOOR = 1e-12


@dataclass(frozen=True)
class Axis:
    """A quantity curves are drawn against or along: its ``curves.csv`` column, label and scale.

    ``factor`` multiplies the column's values as drawn (100: test error in percent); ``limit``
    is the largest drawn value possible (100% for test error), where a zoomed axis ends at most.
    """

    column: str
    label: str
    log: bool
    factor: float = 1.0
    limit: float | None = None


#: What ``sbpbench plot --x`` draws against; the kernel evaluations are :func:`error_curves`' default cost.
X_AXES = {
    "kernel_evals": Axis("kernel_evals", "kernel evaluations", log=True),
    "seconds": Axis("train_time_s", "training time (s)", log=True),
    "iterations": Axis("iteration", "iterations", log=True),
    "epochs": Axis("epoch", "epochs", log=False),
}

#: What ``sbpbench plot --y`` draws. ``gap`` is the ``duality_gap`` column, primal minus dual
#: objective, of the solvers that report a dual objective.
Y_AXES = {
    "test_error": Axis("test_error", "test error (%)", log=False, factor=100.0, limit=100.0),
    "objective": Axis("objective", "objective (the solver's own)", log=False),
    "primal_objective": Axis("primal_objective", "primal objective", log=True),
    "test_hinge_loss": Axis("test_hinge_loss", "test hinge loss", log=True),
    "gap": Axis("duality_gap", "duality gap (primal - dual)", log=True),
}

#: The costs :func:`error_curves` can draw against, with their axis labels.
COSTS = {"kernel_evals": "kernel evaluations", "inner_products": "d-dimensional inner products"}

#: The axes `sbpbench plot` draws by default, as the files figure2 and figure3 (the SBP paper's Figures 2 and 3).
DEFAULT_AXES = ("kernel_evals", "test_error")


def save_figure(fig: Figure, stem: Path, dpi: int = 130) -> list[Path]:
    """Write ``fig`` as ``stem.png`` and ``stem.svg`` (creating the folder) and return the paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        image = io.BytesIO()
        fig.savefig(image, dpi=dpi, format=suffix[1:])
        atomic_write(path, image.getvalue())
        written.append(path)
    return written


def figure_svg(fig: Figure, salt: str) -> str:
    """``fig`` as an ``<svg>`` element (no XML prologue, no date) to inline in a page.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    salt : str
        Makes the element ids of this figure differ from those of other figures on the page.

    Returns
    -------
    str
        The SVG text, from ``<svg`` on.
    """
    image = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(image, format="svg", metadata={"Date": None})
    text = image.getvalue()
    return text[text.index("<svg"):]


def _panels(curves: pd.DataFrame, column: str, size: tuple[float, float]
            ) -> tuple[Figure, Iterator[tuple[Axes, str, pd.DataFrame]]]:
    """A figure with one panel (of ``size`` inches) per value of ``column``, and the panels with
    their value and rows, in the order the values first appear."""
    values = list(dict.fromkeys(curves[column]))
    fig = Figure(figsize=(size[0] * len(values), size[1]))
    axes = fig.subplots(1, len(values), squeeze=False)
    return fig, ((ax, value, curves[curves[column] == value]) for ax, value in zip(axes[0], values))


def _lay_out(fig: Figure, title: str | None) -> None:
    if title:
        fig.suptitle(title)
    fig.tight_layout()


@dataclass
class MeanLine:
    """One solver's curve as drawn: the mean over runs of a quantity with its standard deviation.

    ``mean`` and ``std`` are in the column's units (not yet times the axis' ``factor``);
    ``dashed_from`` is where a solver whose ``dashed_after_first_epoch`` is set ends its first
    epoch, on the x axis, when that falls inside the curve.
    """

    runs: int
    x: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    dashed_from: float | None


def mean_line(frame: pd.DataFrame, x: str, y: str = "test_error") -> MeanLine | None:
    """One solver's mean curve of column ``y`` against column ``x`` (None when it has no such point).

    Rows where ``y`` is not a finite number are left out; the mean and band are those of
    :func:`~sbpbench.results.curves.mean_curve`, over the runs with a positive ``x``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of one solver (several runs).
    x, y : str
        Column names.

    Returns
    -------
    MeanLine or None
    """
    frame = frame[np.isfinite(_numbers(frame, y))]
    grid, mean, std = mean_curve(frame, x=x, y=y)
    if grid.size == 0:
        return None
    split = first_epoch_end(frame, x) if solver_trait(frame, "dashed_after_first_epoch") else None
    inside = split is not None and grid[0] < split < grid[-1]
    return MeanLine(frame["run"].nunique(), grid, mean, std, split if inside else None)


def _draw_curve(ax: Axes, label: str, frame: pd.DataFrame, x: str,
                y: Axis = Y_AXES["test_error"], dashed: Axis | None = None) -> tuple[MeanLine | None, bool]:
    """One solver's mean of ``y`` against ``x`` with a one-sigma band (dashed after epoch 1 for some).

    With ``dashed``, also the mean of that column, dashed in the same colour without a band,
    where the runs measured it. Returns the solid curve and whether a dashed one was drawn.
    """
    curve = mean_line(frame, x, y.column)
    if curve is None:
        return None, False
    grid, mean, std, k = curve.x, curve.mean, curve.std, y.factor
    line, = ax.plot(grid, k * mean, label=f"{label} ({curve.runs} runs)")
    second = None if dashed is None else mean_line(frame, x, dashed.column)
    if dashed is not None and second is not None:
        ax.plot(second.x, dashed.factor * second.mean, ls="--", color=line.get_color())
    low = np.maximum(k * (mean - std), LOG_FLOOR) if y.log else k * (mean - std)
    ax.fill_between(grid, low, k * (mean + std), color=line.get_color(), alpha=0.2, lw=0)
    split = curve.dashed_from
    if split is not None:
        at = np.interp(np.log10(split), np.log10(grid), mean)
        before = grid < split
        line.set_data(np.r_[grid[before], split], k * np.r_[mean[before], at])
        ax.plot(np.r_[split, grid[~before]], k * np.r_[at, mean[~before]], ls="--", color=line.get_color())
    return curve, second is not None


def _log_bottom(curves: list[MeanLine], factor: float) -> float | None:
    """Just below the lowest positive mean or band edge of ``curves`` (None when there is none)."""
    values = np.concatenate([factor * np.r_[c.mean, c.mean - c.std] for c in curves] or [np.array([])])
    positive = values[values > 0]
    return float(positive.min()) / 1.5 if positive.size else None


def _numbers(curves: pd.DataFrame, column: str) -> pd.Series:
    """A column as numbers (NaN where there is none, and everywhere when the column is absent)."""
    if column not in curves:
        return pd.Series(np.nan, index=curves.index)
    return pd.to_numeric(curves[column], errors="coerce")


def drawable(curves: pd.DataFrame, x: Axis, y: Axis) -> pd.DataFrame:
    """The rows of ``curves`` with a positive ``x`` and a finite ``y`` (none when a column is absent)."""
    return curves[(_numbers(curves, x.column) > 0) & np.isfinite(_numbers(curves, y.column))]


def left_out(curves: pd.DataFrame, x: Axis, y: Axis) -> list[str]:
    """A note for every solver of every experiment in ``curves`` that has nothing to draw on these axes.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    x, y : Axis
        The axes.

    Returns
    -------
    list of str
        ``"<solver> in <experiment>: no <what>"``, in the order the solvers appear.
    """
    kept = set(zip(*(drawable(curves, x, y)[c] for c in ("experiment", "solver"))))
    notes = []
    for (experiment, solver), frame in curves.groupby(["experiment", "solver"], sort=False):
        if (experiment, solver) in kept:
            continue
        has_x = bool((_numbers(frame, x.column) > 0).any())
        has_y = bool(np.isfinite(_numbers(frame, y.column)).any())
        if has_x and has_y:
            what = f"{x.label} and {y.label} at the same checkpoints"
        else:
            what = y.label if has_x else x.label if has_y else f"{x.label} and no {y.label}"
        notes.append(f"{solver} in {experiment}: no {what}")
    return notes


def curves_figure(curves: pd.DataFrame, x: Axis, y: Axis, title: str | None = None, zoom: bool = False,
                  size: tuple[float, float] = (5.2, 4.2), legend_size: float = 8,
                  band_floor: bool = False, dashed: Axis | None = None) -> Figure | None:
    """A figure of ``y`` against ``x``, one panel per experiment, one line per solver (None when nothing is drawable).

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
        Each panel's y axis runs over :data:`ZOOM_RANGE` of its solvers' final means (from the
        smallest times the first factor to the largest times the second, at most ``y.limit``),
        as the papers' panels show the converging part.
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

    Returns
    -------
    matplotlib.figure.Figure or None
    """
    curves = drawable(curves, x, y)
    if curves.empty:
        return None
    fig, panels = _panels(curves, "experiment", size)
    for ax, name, sub in panels:
        lines = [_draw_curve(ax, str(label), frame, x.column, y, dashed)
                 for label, frame in sub.groupby("solver", sort=False)]
        drawn = [c for c, _ in lines]
        if x.log:
            ax.set_xscale("log")
        if y.log:
            ax.set_yscale("log")
            bottom = None if band_floor else _log_bottom([c for c in drawn if c is not None], y.factor)
            if bottom is not None:
                ax.set_ylim(bottom=bottom)
        ax.set_xlabel(x.label)
        ax.set_ylabel(f"{y.label} (solid), {dashed.label} (dashed)" if dashed and any(d for _, d in lines) else y.label)
        ax.set_title(f"{name} ({sub['dataset'].iloc[0]})")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=legend_size)
        if zoom:
            finals = y.factor * final_rows(sub).groupby("solver")[y.column].mean()
            top = ZOOM_RANGE[1] * finals.max()
            ax.set_ylim(ZOOM_RANGE[0] * finals.min(), top if y.limit is None else min(y.limit, top))
    _lay_out(fig, title)
    return fig


def metric_curves(curves: pd.DataFrame, out_stem: Path, x: Axis, y: Axis, title: str | None = None,
                  zoom: bool = False, dpi: int = 130, size: tuple[float, float] = (5.2, 4.2),
                  legend_size: float = 8, band_floor: bool = False, dashed: Axis | None = None) -> list[Path]:
    """Draw ``y`` against ``x`` (:func:`curves_figure`) into ``out_stem.png`` and ``out_stem.svg``.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    out_stem : pathlib.Path
        Output path without suffix.
    x, y : Axis
        The axes (:data:`X_AXES`, :data:`Y_AXES`, or others).
    title, zoom, size, legend_size, band_floor, dashed
        As for :func:`curves_figure`.
    dpi : int
        Resolution of the PNG file.

    Returns
    -------
    list of pathlib.Path
        The files written (none when nothing is drawable).
    """
    fig = curves_figure(curves, x, y, title, zoom, size, legend_size, band_floor, dashed)
    return [] if fig is None else save_figure(fig, out_stem, dpi=dpi)


def error_curves(curves: pd.DataFrame, out_stem: Path, cost: Literal["kernel_evals", "inner_products"] = "kernel_evals",
                 title: str | None = None, zoom: bool = False, dpi: int = 130) -> list[Path]:
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
        Each panel's test-error axis runs over :data:`ZOOM_RANGE` of its solvers' final mean test
        errors (at most 100%), as the papers' panels show the converging part.
    dpi : int
        Resolution of the PNG file.

    Returns
    -------
    list of pathlib.Path
        The files written (none when nothing has a positive cost).
    """
    x = curves["kernel_evals"]
    if cost == "inner_products" and "inner_products" in curves:
        x = curves["inner_products"].fillna(x)
    return metric_curves(curves.assign(cost=x), out_stem, Axis("cost", COSTS[cost], log=True), Y_AXES["test_error"],
                         title, zoom, dpi)


def objective_curves(curves: pd.DataFrame, out_stem: Path, title: str | None = None, dpi: int = 130) -> list[Path]:
    """Draw the primal objective against iterations (log-log), one panel per experiment.

    One line per solver: the mean over runs of its finite objectives with a band of one
    standard deviation (cut at :data:`LOG_FLOOR`, above zero), and, dashed in the same colour,
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

    Returns
    -------
    list of pathlib.Path
        The files written (none when no solver has a primal objective).
    """
    return metric_curves(curves, out_stem, X_AXES["iterations"], Y_AXES["primal_objective"], title, dpi=dpi,
                         size=(5.6, 4.2), legend_size=7, band_floor=True, dashed=Y_AXES["test_hinge_loss"])


def final_against_parameter(curves: pd.DataFrame, out_stem: Path, parameter: str, xlabel: str,
                            title: str | None = None, dpi: int = 130) -> list[Path]:
    """Draw the final primal objective against an integer solver parameter (log2 axis).

    One panel per group of solvers (:func:`~sbpbench.results.curves.finals_by_parameter`: a
    label's text up to its first comma), the mean over runs with the standard deviation as error bars.

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

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    fig, panels = _panels(finals_by_parameter(curves, parameter), "group", (5.2, 4.0))
    for ax, group, last in panels:
        g = last.groupby(parameter)["primal_objective"].agg(["mean", "std"]).reset_index()
        ax.errorbar(g[parameter], g["mean"], yerr=g["std"].fillna(0), marker="o", capsize=3)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("primal objective at the end")
        ax.set_title(f"{group} ({last['dataset'].iloc[0]})")
        ax.grid(True, alpha=0.3)
    _lay_out(fig, title)
    return save_figure(fig, out_stem, dpi=dpi)


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
    Solvers without the asked columns (linear solvers have no kernel evaluations, most solvers
    no duality gap) are left out, each with a note.

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
    curves = (pd.concat([read_curves(curves_file(r) or r, traits=True) for r in runs], ignore_index=True)
              if runs else None)
    if curves is None or curves.empty:  # also runs that all failed before their first checkpoint
        return Plotted([], [], [])
    out = Path(out_dir) if out_dir is not None else Path(root)
    notes = left_out(curves, X_AXES[x], Y_AXES[y])
    if (x, y) != DEFAULT_AXES:
        return Plotted(metric_curves(curves, out / f"{y}-vs-{x}", X_AXES[x], Y_AXES[y]), notes, runs)
    written = error_curves(curves, out / "figure2")
    if "inner_products" in curves and curves["inner_products"].notna().any():
        written += error_curves(curves, out / "figure3", "inner_products")
    return Plotted(written, notes, runs)
