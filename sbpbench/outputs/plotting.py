"""Figures from result curves: the SBP paper's Figures 2 and 3.

Figure 2 plots test error (linear axis) against kernel evaluations (log axis), the mean
over runs with a band of one standard deviation, one line per solver and one panel per
experiment. Runs of one solver reach their checkpoints at slightly different counts, so
each run is interpolated (in log kernel evaluations) onto a common grid before averaging.
Solvers in :data:`DASHED_AFTER_FIRST_EPOCH` (the Perceptron) are drawn dashed after their
first epoch, as in the paper. Figure 3 is the same plot against ``d``-dimensional inner
products: kernel evaluations for kernel solvers, ``inner_products`` for Fourier features.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sbpbench.results.lookup import newest_runs  # noqa: E402
from sbpbench.results.store import curves_file, read_curves  # noqa: E402

#: Grid points per decade for averaging runs.
GRID_PER_DECADE = 20


def mean_curve(frame: pd.DataFrame, x: str = "kernel_evals", y: str = "test_error"):
    """Mean and standard deviation over runs of ``y`` against ``x`` on a common log grid.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of one solver (several runs).
    x, y : str
        Column names.

    Returns
    -------
    grid, mean, std : numpy.ndarray
        Empty arrays when no run has a positive ``x``.
    """
    curves = []
    for _, run in frame.groupby("run"):
        run = run[run[x] > 0].sort_values(x)
        if len(run):
            curves.append((np.log10(run[x].to_numpy(float)), run[y].to_numpy(float)))
    if not curves:
        return np.array([]), np.array([]), np.array([])
    lo = max(c[0][0] for c in curves)
    hi = min(c[0][-1] for c in curves)
    if hi <= lo:
        grid = np.array([hi])
    else:
        grid = np.linspace(lo, hi, max(2, int((hi - lo) * GRID_PER_DECADE) + 1))
    values = np.array([np.interp(grid, cx, cy) for cx, cy in curves])
    return 10.0**grid, values.mean(axis=0), values.std(axis=0)


#: Solvers the paper runs past the epoch their analysis covers: drawn dashed after the first
#: epoch, as the Perceptron in the SBP paper's Figure 2.
DASHED_AFTER_FIRST_EPOCH = frozenset({"perceptron"})


def first_epoch_end(frame: pd.DataFrame, x: str = "kernel_evals") -> float | None:
    """Mean over runs of ``x`` at the first checkpoint with ``epoch >= 1`` (None if no run gets there)."""
    ends = [run.loc[run["epoch"] >= 1, x].min() for _, run in frame.groupby("run")]
    ends = [e for e in ends if np.isfinite(e) and e > 0]
    return float(np.mean(ends)) if ends else None


def _draw_curve(ax, label: str, frame: pd.DataFrame, x: str) -> None:
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


#: With ``zoom``, a panel's test-error axis ends at this multiple of its largest final mean error.
ZOOM_FACTOR = 3.0


def _draw_figure(curves: pd.DataFrame, x: str, xlabel: str, out_stem: Path, title: str | None,
                 zoom: bool = False) -> list[Path]:
    """Test error against column ``x`` (log axis), one panel per experiment, saved as png and svg.

    With ``zoom`` each panel's test-error axis runs from 0 to :data:`ZOOM_FACTOR` times the largest
    final mean test error of its solvers (at most 100%), as the papers' panels show the converging part.
    """
    curves = curves[curves[x] > 0]
    experiments = list(dict.fromkeys(curves["experiment"]))
    if not experiments:
        return []
    fig, axes = plt.subplots(1, len(experiments), figsize=(5.2 * len(experiments), 4.2), squeeze=False)
    for ax, name in zip(axes[0], experiments):
        sub = curves[curves["experiment"] == name]
        for label, frame in sub.groupby("solver", sort=False):
            _draw_curve(ax, label, frame, x)
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("test error (%)")
        ax.set_title(f"{name} ({sub['dataset'].iloc[0]})")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        if zoom:
            finals = sub.sort_values("checkpoint").groupby(["solver", "run"]).tail(1)
            top = ZOOM_FACTOR * 100 * finals.groupby("solver")["test_error"].mean().max()
            ax.set_ylim(0, min(100.0, top))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, out_stem, dpi=130)


def save_figure(fig, stem: Path, dpi: int = 130) -> list[Path]:
    """Write ``fig`` as ``stem.png`` and ``stem.svg`` (creating the folder), close it, return the paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        fig.savefig(path, dpi=dpi)
        written.append(path)
    plt.close(fig)
    return written


def figure2(curves: pd.DataFrame, out_stem: Path, title: str | None = None, zoom: bool = False) -> list[Path]:
    """Draw test error against kernel evaluations, one panel per experiment.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    out_stem : pathlib.Path
        Output path without suffix; ``.png`` and ``.svg`` are written.
    title : str, optional
        Figure title.
    zoom : bool
        Limit each panel's test-error axis (see :func:`_draw_figure`).

    Returns
    -------
    list of pathlib.Path
        The files written (none when nothing has kernel evaluations).
    """
    return _draw_figure(curves, "kernel_evals", "kernel evaluations", out_stem, title, zoom)


def figure3(curves: pd.DataFrame, out_stem: Path, title: str | None = None, zoom: bool = False) -> list[Path]:
    """Draw test error against d-dimensional inner products (the SBP paper's Figure 3).

    The cost of a kernel solver is its kernel evaluations (one inner product each); that of
    random Fourier features is the ``inner_products`` column (``k n`` for ``k`` pairs).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of ``curves.csv`` files.
    out_stem : pathlib.Path
        Output path without suffix; ``.png`` and ``.svg`` are written.
    title : str, optional
        Figure title.
    zoom : bool
        Limit each panel's test-error axis (see :func:`_draw_figure`).

    Returns
    -------
    list of pathlib.Path
        The files written (none when nothing has a cost).
    """
    cost = curves["kernel_evals"]
    if "inner_products" in curves:
        cost = curves["inner_products"].fillna(cost)
    return _draw_figure(curves.assign(inner_product_cost=cost), "inner_product_cost",
                        "d-dimensional inner products", out_stem, title, zoom)


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
        Files written.
    """
    runs = newest_runs(root)
    if not runs:
        return []
    curves = pd.concat([read_curves(curves_file(r) or r) for r in runs], ignore_index=True)
    out = Path(out_dir) if out_dir is not None else Path(root)
    written = figure2(curves, out / "figure2")
    if "inner_products" in curves and curves["inner_products"].notna().any():
        written += figure3(curves, out / "figure3")
    return written
