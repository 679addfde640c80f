"""Statistics over result curves, shared by the papers' verdicts and the figures.

A *curve* here is the rows of ``curves.csv`` of one solver: one row per checkpoint per run.
Runs of one solver reach their checkpoints at slightly different costs, so a mean over runs is
taken on a common grid, each run interpolated in the logarithm of the cost (kernel
evaluations by default): :func:`mean_curve`, read back with :func:`value_at`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Grid points per decade of the cost when averaging runs.
GRID_PER_DECADE = 20

#: A curve has settled once its mean test error stays within this fraction of its final value.
SETTLED_WITHIN = 0.1


def mean_curve(frame: pd.DataFrame, x: str = "kernel_evals",
               y: str = "test_error") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and standard deviation over runs of ``y`` against ``x`` on a common log grid.

    The grid spans the range of ``x`` every run covers, :data:`GRID_PER_DECADE` points per decade.

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
    curves = _log_curves(frame, x, y)
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


@dataclass(frozen=True)
class Covering:
    """A solver's mean over runs on a log grid spanning every run (:func:`covering_mean`).

    ``count`` is how many runs cover each grid point (a run covers the stretch from its first to
    its last checkpoint); ``mean`` is over those runs, ``se`` its standard error (NaN where fewer
    than two runs cover the point: one run has no spread).
    """

    x: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    count: np.ndarray


def covering_mean(frame: pd.DataFrame, x: str = "kernel_evals", y: str = "test_error") -> Covering:
    """Mean of ``y`` against ``x`` over the runs that cover each point, with its standard error.

    Unlike :func:`mean_curve`, whose grid is the range every run covers, the grid spans from the
    first run's start to the last run's end (:data:`GRID_PER_DECADE` points per decade, and each
    run's own ends): past a run's last checkpoint, the mean is over the runs still going. Each
    run is interpolated in log ``x`` and never extended beyond its ends.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of one solver, with the columns ``run``, ``x`` and ``y``.
    x, y : str
        The cost drawn along (only its positive values count) and the quantity averaged.

    Returns
    -------
    Covering
        Empty arrays when no run has a positive ``x``.
    """
    curves = _log_curves(frame, x, y)
    if not curves:
        empty = np.array([])
        return Covering(empty, empty, empty, empty.astype(int))
    lo, hi = min(c[0][0] for c in curves), max(c[0][-1] for c in curves)
    regular = np.linspace(lo, hi, max(2, int((hi - lo) * GRID_PER_DECADE) + 1)) if hi > lo else np.array([lo])
    grid = np.unique(np.r_[regular, [c[0][0] for c in curves], [c[0][-1] for c in curves]])
    values = np.array([np.where((grid >= cx[0]) & (grid <= cx[-1]), np.interp(grid, cx, cy), np.nan)
                       for cx, cy in curves])
    count = np.isfinite(values).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):  # points covered by no curve, or by one
        mean = np.nansum(values, axis=0) / count
        spread = np.sqrt(np.nansum((values - mean) ** 2, axis=0) / (count - 1))
        se = np.where(count >= 2, spread / np.sqrt(count), np.nan)
    return Covering(10.0**grid, mean, se, count)


def _log_curves(frame: pd.DataFrame, x: str, y: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each run's curve as (log10 of its positive ``x``, sorted; ``y`` there), in run order."""
    curves = []
    for _, run in frame.groupby("run"):
        run = run[run[x] > 0].sort_values(x)
        if len(run):
            curves.append((np.log10(run[x].to_numpy(float)), run[y].to_numpy(float)))
    return curves


def value_at(grid: np.ndarray, mean: np.ndarray, x: float) -> float:
    """A mean curve of :func:`mean_curve` at ``x``, interpolated in log ``x`` (constant beyond its ends)."""
    return float(np.interp(np.log10(x), np.log10(grid), mean))


def run_values_at(frame: pd.DataFrame, at: float | np.ndarray, x: str = "kernel_evals",
                  y: str = "test_error") -> np.ndarray:
    """Each run's ``y`` at ``x = at``, interpolated in log ``x`` (constant beyond the run's ends), by run.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of one solver (several runs); rows without a positive ``x`` are left out.
    at : float or numpy.ndarray
        Where (positive values of ``x``); the runs are split out of ``frame`` once for all of them.
    x, y : str
        Column names.

    Returns
    -------
    numpy.ndarray
        One row per run that has a positive ``x``, in run order: a value per run for a scalar
        ``at``, else shape ``(runs, len(at))``.
    """
    return np.array([np.interp(np.log10(at), cx, cy) for cx, cy in _log_curves(frame, x, y)])


def final_rows(curves: pd.DataFrame) -> pd.DataFrame:
    """The last checkpoint of every (solver, run), in the order the (solver, run) pairs first appear."""
    rows = curves.reset_index(drop=True)  # unique labels, also for frames concatenated from several files
    return rows.loc[rows.groupby(["solver", "run"], sort=False)["checkpoint"].idxmax()]


def first_reaching(curves: pd.DataFrame, y: str, level: float) -> pd.DataFrame:
    """The first checkpoint of every (solver, run) with ``y <= level``, else its last checkpoint.

    Tell the runs that got there by ``y <= level`` on the rows returned (one per run, in the
    order the solvers first appear).
    """
    ordered = curves.sort_values("checkpoint", kind="stable")
    reached = ordered[ordered[y] <= level].groupby(["solver", "run"], sort=False).head(1)
    keys = ["solver", "run"]
    rest = final_rows(curves).merge(reached[keys], on=keys, how="left", indicator=True)
    never = rest[rest["_merge"] == "left_only"].drop(columns="_merge")
    return pd.concat([reached, never], ignore_index=True)


def mean_and_se(values: np.ndarray | pd.Series) -> tuple[float, float]:
    """Mean over runs and its standard error (NaN with fewer than two runs: no spread to judge by)."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return float("nan"), float("nan")
    se = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")
    return float(v.mean()), se


def difference(a: np.ndarray | pd.Series, b: np.ndarray | pd.Series) -> tuple[float, float]:
    """Mean of ``a`` minus mean of ``b`` (independent runs) and its standard error."""
    (m_a, se_a), (m_b, se_b) = mean_and_se(a), mean_and_se(b)
    return m_a - m_b, math.hypot(se_a, se_b)


def first_epoch_end(frame: pd.DataFrame, x: str = "kernel_evals") -> float | None:
    """Mean over runs of ``x`` at the first checkpoint with ``epoch >= 1`` (None if no run gets there)."""
    ends = [run.loc[run["epoch"] >= 1, x].min() for _, run in frame.groupby("run")]
    ends = [e for e in ends if np.isfinite(e) and e > 0]
    return float(np.mean(ends)) if ends else None


def settle_point(frame: pd.DataFrame, x: str = "kernel_evals") -> float:
    """Where a solver's mean test error settles: the ``x`` (kernel evaluations) from which it stays
    within :data:`SETTLED_WITHIN` of its final value.

    A point of the mean curve's log grid (:func:`mean_curve`): its start when the curve never
    leaves that band, its end when it enters the band only there.
    """
    g, m, _ = mean_curve(frame, x)
    outside = np.flatnonzero(np.abs(m - m[-1]) > SETTLED_WITHIN * m[-1])
    k = min(int(outside[-1]) + 1, len(g) - 1) if outside.size else 0
    return float(g[k])


def values_before(frame: pd.DataFrame, limit: float, x: str = "train_time_s", y: str = "test_error") -> np.ndarray:
    """Each run's ``y`` at its last checkpoint with ``x <= limit`` (NaN for a run with none), by run."""
    values = []
    for _, run in frame.groupby("run"):
        before = run[run[x] <= limit]
        values.append(before[y].iloc[-1] if len(before) else np.nan)
    return np.asarray(values, dtype=float)


def mean_before(frame: pd.DataFrame, limit: float, x: str = "train_time_s", y: str = "test_error") -> float:
    """Mean over runs of ``y`` at each run's last checkpoint with ``x <= limit``.

    A run with no such checkpoint counts as NaN and is left out; NaN when every run is.
    """
    values = values_before(frame, limit, x, y)
    return float(np.nanmean(values)) if not np.all(np.isnan(values)) else float("nan")


def finals_by_parameter(curves: pd.DataFrame, parameter: str) -> pd.DataFrame:
    """:func:`final_rows` with the value of an integer solver parameter and the solver's group.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of solvers that differ in ``parameter`` (read from the ``params`` column,
        ``name=value`` pairs).
    parameter : str
        The parameter's name, e.g. ``mini_batch``.

    Returns
    -------
    pandas.DataFrame
        The final rows, with a float column named ``parameter`` and a column ``group``: the
        solver label up to its first comma (``"T fixed, k=4"`` is in group ``"T fixed"``).
    """
    last = final_rows(curves)
    value = last["params"].str.extract(rf"{re.escape(parameter)}=(\d+)")[0].astype(float)
    return last.assign(**{parameter: value, "group": last["solver"].str.split(",").str[0]})


@dataclass(frozen=True)
class ReadAt:
    """Where the curves of solvers that differ in an integer parameter are read, beside their ends.

    ``values``: of ``iteration`` times the parameter when ``times_parameter`` (k T, the examples a
    mini-batch size k has processed after T iterations), else of ``iteration`` (T); ``name`` names
    them in a legend (``"kT"``, ``"T"``).
    """

    values: tuple[float, ...]
    name: str
    times_parameter: bool = False


def values_by_parameter(curves: pd.DataFrame, parameter: str, read: ReadAt,
                        y: str = "primal_objective") -> pd.DataFrame:
    """Each run's ``y`` at each of ``read``'s values, for solvers that differ in ``parameter``.

    A run's value at iteration ``t`` is interpolated in log iterations between its checkpoints;
    a run whose checkpoints do not reach from its first to ``t`` gives none there (never
    extended beyond its ends).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of those solvers (the parameter read from the ``params`` column, as
        :func:`finals_by_parameter` does).
    parameter : str
        The parameter's name, e.g. ``mini_batch``.
    read : ReadAt
        Where.
    y : str
        The column read.

    Returns
    -------
    pandas.DataFrame
        Columns ``parameter``, ``at`` (the value of ``read``), ``run`` and ``y``: one row per run
        that reaches each value.
    """
    rows = []
    for _, frame in curves.groupby("solver", sort=False):
        value = float(frame["params"].str.extract(rf"{re.escape(parameter)}=(\d+)")[0].astype(float).iloc[0])
        for run, checkpoints in frame.groupby("run"):
            checkpoints = checkpoints[checkpoints["iteration"] > 0].sort_values("iteration")
            cx, cy = np.log10(checkpoints["iteration"].to_numpy(float)), checkpoints[y].to_numpy(float)
            for at in read.values:
                t = np.log10(at / value if read.times_parameter else at)
                if len(cx) and cx[0] - 1e-9 <= t <= cx[-1] + 1e-9:
                    rows.append({parameter: value, "at": at, "run": run, y: float(np.interp(t, cx, cy))})
    return pd.DataFrame(rows, columns=[parameter, "at", "run", y])
