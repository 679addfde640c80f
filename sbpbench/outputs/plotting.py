"""Drawings of result curves: the kinds of figure the papers declare, and ``sbpbench plot``.

Every drawing takes rows of ``curves.csv`` files and writes ``<stem>.png`` and ``<stem>.svg``:

* :func:`error_curves`: test error (linear axis) against a cost (log axis), kernel evaluations
  or d-dimensional inner products, one panel per experiment, one line per solver, the mean over
  runs (:func:`~sbpbench.results.curves.mean_curve`) with a band of one standard deviation.
  Solvers in :data:`DASHED_AFTER_FIRST_EPOCH` (the Perceptron) are drawn dashed after their
  first epoch.
* :func:`objective_curves`: primal objective against iterations (log-log), one panel per experiment.
* :func:`final_against_parameter`: the final primal objective against a solver parameter, one
  panel per group of solvers.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from sbpbench.files import atomic_write  # noqa: E402
from sbpbench.results.curves import final_rows, finals_by_parameter, first_epoch_end, mean_curve  # noqa: E402
from sbpbench.results.lookup import newest_runs  # noqa: E402
from sbpbench.results.store import curves_file, read_curves  # noqa: E402

#: Solvers whose guarantee covers one pass over the data (the Perceptron's online-to-batch
#: conversion) but that are run for more: drawn dashed after their first epoch, as in the SBP
#: paper's Figure 2.
DASHED_AFTER_FIRST_EPOCH = frozenset({"perceptron"})

#: With ``zoom``, a panel's test-error axis ends at this multiple of its largest final mean error.
ZOOM_FACTOR = 3.0

#: The costs :func:`error_curves` can draw against, with their axis labels.
COSTS = {"kernel_evals": "kernel evaluations", "inner_products": "d-dimensional inner products"}


def save_figure(fig: Figure, stem: Path, dpi: int = 130) -> list[Path]:
    """Write ``fig`` as ``stem.png`` and ``stem.svg`` (creating the folder), close it, return the paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        image = io.BytesIO()
        fig.savefig(image, dpi=dpi, format=suffix[1:])
        atomic_write(path, image.getvalue())
        written.append(path)
    plt.close(fig)
    return written


def _panels(curves: pd.DataFrame, column: str, size: tuple[float, float]
            ) -> tuple[Figure, Iterator[tuple[Axes, str, pd.DataFrame]]]:
    """A figure with one panel (of ``size`` inches) per value of ``column``, and the panels with
    their value and rows, in the order the values first appear."""
    values = list(dict.fromkeys(curves[column]))
    fig, axes = plt.subplots(1, len(values), figsize=(size[0] * len(values), size[1]), squeeze=False)
    return fig, ((ax, value, curves[curves[column] == value]) for ax, value in zip(axes[0], values))


def _finish(fig: Figure, title: str | None, stem: Path, dpi: int) -> list[Path]:
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, stem, dpi=dpi)


def _draw_curve(ax: Axes, label: str, frame: pd.DataFrame, x: str) -> None:
    """One solver's mean test error against ``x`` with a one-sigma band (dashed after epoch 1 for some)."""
    grid, mean, std = mean_curve(frame, x=x)
    if grid.size == 0:
        return
    line, = ax.plot(grid, 100 * mean, label=f"{label} ({frame['run'].nunique()} runs)")
    ax.fill_between(grid, 100 * (mean - std), 100 * (mean + std), color=line.get_color(), alpha=0.2, lw=0)
    split = first_epoch_end(frame, x) if frame["solver_name"].iloc[0] in DASHED_AFTER_FIRST_EPOCH else None
    if split is not None and grid[0] < split < grid[-1]:
        at = np.interp(np.log10(split), np.log10(grid), mean)
        before = grid < split
        line.set_data(np.r_[grid[before], split], 100 * np.r_[mean[before], at])
        ax.plot(np.r_[split, grid[~before]], 100 * np.r_[at, mean[~before]], ls="--", color=line.get_color())


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
        Each panel's test-error axis runs from 0 to :data:`ZOOM_FACTOR` times the largest final
        mean test error of its solvers (at most 100%), as the papers' panels show the converging part.
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
    curves = curves.assign(cost=x)
    curves = curves[curves["cost"] > 0]
    if curves.empty:
        return []
    fig, panels = _panels(curves, "experiment", (5.2, 4.2))
    for ax, name, sub in panels:
        for label, frame in sub.groupby("solver", sort=False):
            _draw_curve(ax, str(label), frame, "cost")
        ax.set_xscale("log")
        ax.set_xlabel(COSTS[cost])
        ax.set_ylabel("test error (%)")
        ax.set_title(f"{name} ({sub['dataset'].iloc[0]})")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        if zoom:
            top = ZOOM_FACTOR * 100 * final_rows(sub).groupby("solver")["test_error"].mean().max()
            ax.set_ylim(0, min(100.0, top))
    return _finish(fig, title, out_stem, dpi)


def objective_curves(curves: pd.DataFrame, out_stem: Path, title: str | None = None, dpi: int = 130) -> list[Path]:
    """Draw the primal objective against iterations (log-log), one panel per experiment.

    One line per solver: the mean over runs of its finite objectives with a band of one
    standard deviation (cut at 1e-12, above zero).

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
        The files written.
    """
    fig, panels = _panels(curves, "experiment", (5.6, 4.2))
    for ax, name, sub in panels:
        for label, frame in sub.groupby("solver", sort=False):
            frame = frame[np.isfinite(frame["primal_objective"])]
            grid, mean, std = mean_curve(frame, x="iteration", y="primal_objective")
            if grid.size == 0:
                continue
            line, = ax.plot(grid, mean, label=f"{label} ({frame['run'].nunique()} runs)")
            ax.fill_between(grid, np.maximum(mean - std, 1e-12), mean + std, color=line.get_color(),
                            alpha=0.2, lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iterations")
        ax.set_ylabel("primal objective")
        ax.set_title(f"{name} ({sub['dataset'].iloc[0]})")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    return _finish(fig, title, out_stem, dpi)


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
    return _finish(fig, title, out_stem, dpi)


def plot_results(root: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    """Draw Figure 2 (and Figure 3 when there are Fourier runs) for the newest run of every experiment under ``root``.

    Parameters
    ----------
    root : str or pathlib.Path
        A run folder or a results tree.
    out_dir : str or pathlib.Path, optional
        Where to write; defaults to ``root`` itself.

    Returns
    -------
    list of pathlib.Path
        Files written: ``figure2`` against kernel evaluations, ``figure3`` against inner products.
    """
    runs = newest_runs(root)
    if not runs:
        return []
    curves = pd.concat([read_curves(curves_file(r) or r) for r in runs], ignore_index=True)
    out = Path(out_dir) if out_dir is not None else Path(root)
    written = error_curves(curves, out / "figure2")
    if "inner_products" in curves and curves["inner_products"].notna().any():
        written += error_curves(curves, out / "figure3", "inner_products")
    return written
