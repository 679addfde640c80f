"""What the figures of curves draw, without drawing it: their axes, each solver's mean line, and
which solvers have nothing to draw on a pair of axes.

Free of matplotlib, so that what needs the lines but not matplotlib's figures (a run's page,
:mod:`sbpbench.outputs.page`, which draws its own SVG) does not import it;
:mod:`sbpbench.outputs.plotting` draws these lines with matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sbpbench.results.curves import Covering, covering_mean, first_epoch_end
from sbpbench.results.store import solver_trait

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


#: What ``sbpbench plot --x`` draws against; the kernel evaluations are the default cost of
#: :func:`~sbpbench.outputs.plotting.error_curves`.
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


@dataclass
class MeanLine:
    """One solver's curve as drawn: the mean over runs of a quantity with its standard error.

    ``mean`` and ``se`` are in the column's units (not yet times the axis' ``factor``); ``se`` is
    NaN where fewer than two runs cover a point (:func:`~sbpbench.results.curves.covering_mean`;
    no band is drawn there). ``fits``: the solver's checkpoints are fits of their own (its
    ``one_step_per_advance``), one point each, the mean over runs at each checkpoint.
    ``dashed_from`` is where a solver whose ``dashed_after_first_epoch`` is set ends its first
    epoch, on the x axis, when that falls inside the curve. ``line_from`` is where the line of a
    solver whose ``swings_before_settling`` is set begins (:func:`mean_line`); before it, its
    means are drawn as points.
    """

    runs: int
    x: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    dashed_from: float | None
    fits: bool = False
    line_from: float | None = None

    @property
    def on_line(self) -> np.ndarray:
        """Which of its points the line (or a fit's point) draws: those from ``line_from`` on, all without it."""
        return self.x >= self.line_from if self.line_from is not None else np.ones(self.x.size, bool)


def fit_points(frame: pd.DataFrame, x: str, y: str) -> Covering:
    """The mean over runs at each checkpoint (each a fit), at the geometric mean of the runs' ``x`` there."""
    rows = frame[column_numbers(frame, x) > 0]
    by = rows.groupby("checkpoint")
    count = by["run"].nunique().to_numpy()
    se = by[y].std(ddof=1).to_numpy() / np.sqrt(count)
    return Covering(10.0 ** by[x].apply(lambda v: np.log10(v.astype(float)).mean()).to_numpy(),
                    by[y].mean().to_numpy(float), np.where(count >= 2, se, np.nan), count)


def mean_line(frame: pd.DataFrame, x: str, y: str = "test_error", baseline: float | None = None) -> MeanLine | None:
    """One solver's mean curve of column ``y`` against column ``x`` (None when it has no such point).

    Rows where ``y`` is not a finite number are left out; the mean and its standard error are
    those of :func:`~sbpbench.results.curves.covering_mean`, over the runs with a positive ``x``
    that cover each point (of each checkpoint, for a solver whose checkpoints are fits), kept
    where at least half of the runs cover it (where the first runs have ended, the mean of the
    last few would jump with their noise).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of one solver (several runs).
    x, y : str
        Column names.
    baseline : float, optional
        The test error of the constant classifier
        (:func:`~sbpbench.outputs.plotting.baseline_error`), for ``y`` the test
        error: a solver whose ``swings_before_settling`` is set has its line begin where its mean
        stays at or below it from there on.

    Returns
    -------
    MeanLine or None
    """
    frame = frame[np.isfinite(column_numbers(frame, y))]
    fits = bool(len(frame)) and solver_trait(frame, "one_step_per_advance")
    curve = fit_points(frame, x, y) if fits else covering_mean(frame, x=x, y=y)
    runs = frame["run"].nunique()
    most = curve.count >= max(1, math.ceil(runs / 2))  # past the ends of most runs, a mean of a few is noise
    curve = Covering(curve.x[most], curve.mean[most], curve.se[most], curve.count[most])
    if curve.x.size == 0:
        return None
    grid = curve.x
    split = first_epoch_end(frame, x) if solver_trait(frame, "dashed_after_first_epoch") else None
    inside = split is not None and grid[0] < split < grid[-1]
    line_from = None
    if baseline is not None and not fits and solver_trait(frame, "swings_before_settling"):
        above = np.flatnonzero(~(curve.mean <= baseline))  # a point no run covers counts as above
        line_from = float(grid[min(above[-1] + 1, grid.size - 1)]) if above.size else None
    return MeanLine(runs, grid, curve.mean, curve.se, split if inside else None, fits, line_from)


def column_numbers(curves: pd.DataFrame, column: str) -> pd.Series:
    """A column as numbers (NaN where there is none, and everywhere when the column is absent)."""
    if column not in curves:
        return pd.Series(np.nan, index=curves.index)
    return pd.to_numeric(curves[column], errors="coerce")


def drawable(curves: pd.DataFrame, x: Axis, y: Axis) -> pd.DataFrame:
    """The rows of ``curves`` with a positive ``x`` and a finite ``y`` (none when a column is absent)."""
    return curves[Numbers(curves).drawable(x, y)]


class Numbers:
    """The columns of a frame as numbers (NaN where there is none, and everywhere when a column is
    absent), each converted once: for a frame drawn on many axes (a page draws each solver on all of
    them).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of ``curves.csv`` files.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self._columns: dict[str, pd.Series] = {}

    def __getitem__(self, column: str) -> pd.Series:
        if column not in self._columns:
            self._columns[column] = column_numbers(self.frame, column)
        return self._columns[column]

    def drawable(self, x: Axis, y: Axis) -> pd.Series:
        """Which rows have a positive ``x`` and a finite ``y`` (:func:`drawable`)."""
        return (self[x.column] > 0) & np.isfinite(self[y.column])

    def missing(self, x: Axis, y: Axis) -> str | None:
        """What the frame lacks to be drawn on these axes, as :func:`left_out` says it (None: it has a row to draw)."""
        if self.drawable(x, y).any():
            return None
        has_x, has_y = bool((self[x.column] > 0).any()), bool(np.isfinite(self[y.column]).any())
        if has_x and has_y:
            return f"{x.label} and {y.label} at the same checkpoints"
        return y.label if has_x else x.label if has_y else f"{x.label} and no {y.label}"


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
    return left_out_each(curves, [(x, y)])[0]


def left_out_each(curves: pd.DataFrame, axes: list[tuple[Axis, Axis]]) -> list[list[str]]:
    """:func:`left_out` for each pair of axes ``(x, y)`` in ``axes``, each solver's columns converted once."""
    solvers = [(experiment, solver, Numbers(frame))
               for (experiment, solver), frame in curves.groupby(["experiment", "solver"], sort=False)]
    return [[f"{solver} in {experiment}: no {what}" for experiment, solver, numbers in solvers
             if (what := numbers.missing(x, y)) is not None] for x, y in axes]
