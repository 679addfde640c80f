"""Test error at fixed budgets: each entry's test error after a number of kernel evaluations or
training seconds, the mean over runs with its standard error, the best entry of each budget marked.

A run's value at a budget is its last checkpoint at or before the budget (the error it had when the
budget was spent); an entry with a run that has no checkpoint by then has no value there (n/a).
By default the budgets are the powers of ten inside the range every entry covers
(:func:`default_budgets`); a config's ``report`` section sets them (``report: {kernel_evals: [1e6,
3e6]}``). ``sbpbench run`` prints these tables (:func:`budget_text`) and the run's
page shows them; both are made from :func:`budget_table`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sbpbench.errors import printable
from sbpbench.outputs.notation import formatted, tick_labels
from sbpbench.outputs.summary import caption_lines, text_table
from sbpbench.results.curves import mean_and_se

#: The budgets' axes: the column of ``curves.csv`` and how the axis is named in headings.
BUDGET_AXES = {"kernel_evals": ("kernel_evals", "kernel evaluations"), "seconds": ("train_time_s", "training seconds")}
#: At most this many default budgets (the largest ones are kept).
MAX_BUDGETS = 6


@dataclass(frozen=True)
class BudgetRow:
    """One entry's test error (percent) at each budget: means, standard errors (NaN for one run)
    and whether it is the lowest mean of the budget (every entry tied at the lowest is marked)."""

    solver: str
    runs: int
    means: tuple[float, ...]
    ses: tuple[float, ...]
    best: tuple[bool, ...]


@dataclass(frozen=True)
class BudgetTable:
    """The test error of every entry at each budget of one axis (a key of :data:`BUDGET_AXES`)."""

    axis: str
    budgets: tuple[float, ...]
    rows: tuple[BudgetRow, ...]


def _drawable(curves: pd.DataFrame, column: str) -> pd.DataFrame:
    """The checkpoints with a finite value of ``column`` and a finite test error."""
    x = pd.to_numeric(curves[column], errors="coerce")
    return curves[np.isfinite(x) & np.isfinite(pd.to_numeric(curves["test_error"], errors="coerce"))]


def default_budgets(curves: pd.DataFrame, axis: str) -> tuple[float, ...]:
    """The powers of ten inside the range every entry covers on ``axis``, at most :data:`MAX_BUDGETS`
    (the largest).

    The range runs from the latest first positive checkpoint of any run to the earliest last
    checkpoint of any run, so that every entry has a value at every budget.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.
    axis : str
        A key of :data:`BUDGET_AXES`.

    Returns
    -------
    tuple of float
        Ascending; empty when no power of ten is in the common range (or nothing has the axis).
    """
    column = BUDGET_AXES[axis][0]
    rows = _drawable(curves, column)
    positive = rows[rows[column].astype(float) > 0]
    if positive.empty:
        return ()
    lo = positive.groupby(["solver", "run"])[column].min().max()
    hi = rows.groupby(["solver", "run"])[column].max().min()
    if not lo <= hi:
        return ()
    powers = [10.0**k for k in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9) + 1)]
    return tuple(powers[-MAX_BUDGETS:])


def budget_table(curves: pd.DataFrame, axis: str, budgets: Sequence[float] | None = None) -> BudgetTable:
    """Every entry's test error at each budget on ``axis``.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.
    axis : str
        A key of :data:`BUDGET_AXES`: ``kernel_evals`` or ``seconds``.
    budgets : sequence of float, optional
        The budgets; default :func:`default_budgets`.

    Returns
    -------
    BudgetTable
        One row per entry that has the axis, in the order of the file. A run's value at a budget
        is the test error of its last checkpoint at or before the budget; an entry has a value
        (mean and standard error over its runs) only where every run of it has such a checkpoint,
        else NaN (n/a).
    """
    column = BUDGET_AXES[axis][0]
    chosen = tuple(float(b) for b in (default_budgets(curves, axis) if budgets is None else budgets))
    rows = _drawable(curves, column).sort_values("checkpoint", kind="stable")
    table = []
    for label, g in rows.groupby("solver", sort=False):
        runs = list(g.groupby("run", sort=False))
        means, ses = [], []
        for b in chosen:
            at = [r[r[column] <= b]["test_error"].to_numpy(dtype=float) for _, r in runs]
            mean, se = mean_and_se([100 * a[-1] for a in at]) if all(len(a) for a in at) else (math.nan, math.nan)
            means.append(mean)
            ses.append(se)
        table.append((str(label), len(runs), means, ses))
    means_of = np.array([m for _, _, m, _ in table], dtype=float).reshape(len(table), len(chosen))
    lowest = [min((m for m in col if math.isfinite(m)), default=math.nan) for col in means_of.T]
    return BudgetTable(axis, chosen, tuple(
        BudgetRow(label, runs, tuple(means), tuple(ses), tuple(bool(m == low) for m, low in zip(means, lowest)))
        for label, runs, means, ses in table))


def budget_caption(table: BudgetTable) -> str:
    """The caption of a budget table (the console's line above it and the page's caption)."""
    name = BUDGET_AXES[table.axis][1]
    return (f"Test error (%) after a budget of {name}: each run's last checkpoint at or before the budget, the mean "
            f"± standard error over runs (n/a for one run); * marks the lowest mean of each budget; n/a: some run "
            f"of the entry has no checkpoint by then.")


def budget_labels(table: BudgetTable) -> list[str]:
    """The budgets as the headings of their columns, in the charts' tick notation (``1000``, ``1e6``, ``3e6``)."""
    return tick_labels(list(table.budgets))


def cell(mean: float, se: float, best: bool) -> str:
    """One cell of a budget table as text: ``mean ± se`` (``mean ± n/a`` for one run, as the summary
    writes it), ``*`` after the best, ``n/a`` without a value."""
    if not math.isfinite(mean):
        return formatted(mean, "")
    return f"{mean:.2f} ± {formatted(se, '.2f')}{' *' if best else ''}"


def budget_tables(curves: pd.DataFrame, budgets: Mapping[str, Sequence[float]] | None = None) -> list[BudgetTable]:
    """The tables of the axes of :data:`BUDGET_AXES` that have budgets and entries; none with fewer
    than two entries (nothing to compare).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.
    budgets : mapping, optional
        Budgets by axis (a config's ``report`` section); an axis not in it gets
        :func:`default_budgets`.

    Returns
    -------
    list of BudgetTable
        In the order of :data:`BUDGET_AXES`.
    """
    if curves.empty or curves["solver"].nunique() < 2:
        return []
    tables = [budget_table(curves, axis, (budgets or {}).get(axis)) for axis in BUDGET_AXES]
    return [t for t in tables if t.budgets and t.rows]


def budget_text(curves: pd.DataFrame, budgets: Mapping[str, Sequence[float]] | None = None,
                columns: int | None = None) -> str:
    """The tables of :func:`budget_tables` as text, each after its caption (``sbpbench run`` prints them).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.
    budgets : mapping, optional
        Budgets by axis, as :func:`budget_tables` takes them.
    columns : int, optional
        The console's width: each caption is broken into lines of at most ``columns - 1``
        characters, and the labels get lines of their own where a row would be wider
        (:func:`~sbpbench.outputs.summary.text_table`). Default: no limit.

    Returns
    -------
    str
        The tables, or ``""``.
    """
    parts = []
    for table in budget_tables(curves, budgets):
        header = ["entry", "runs", *budget_labels(table)]
        rows = [[printable(r.solver), str(r.runs), *map(cell, r.means, r.ses, r.best)] for r in table.rows]
        parts += [caption_lines(budget_caption(table), columns),
                  text_table(header, rows, right=range(1, len(header)), columns=columns)]
    return "\n".join(parts)
