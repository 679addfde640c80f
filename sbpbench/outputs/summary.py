"""The run summary: per solver, the final test error over runs, kernel evaluations, time and statuses.

``sbpbench run`` prints it as text (:func:`summary_table`) and the run's page shows it as an HTML
table; both are made from the same rows (:func:`summary_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from sbpbench.errors import printable
from sbpbench.results.curves import final_rows


@dataclass(frozen=True)
class SummaryRow:
    """One solver's last checkpoints: test error mean and its standard error over runs (in
    percent; 0 for one run), mean kernel evaluations and training seconds, and the statuses its
    runs ended with. The standard error is the spread the figures' bands show too."""

    solver: str
    runs: int
    error_mean: float
    error_se: float
    kernel_evals: float
    train_time_s: float
    statuses: str


#: The columns of the summary, as headed in the text table and on the page.
HEADER = ("solver", "runs", "test error (%) ± s.e.", "kernel evals", "train s", "status")


def summary_rows(curves: pd.DataFrame) -> list[SummaryRow]:
    """One :class:`SummaryRow` per solver, from each run's last checkpoint, in the order of the file.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.

    Returns
    -------
    list of SummaryRow
        Empty when there is no checkpoint.
    """
    if curves.empty:
        return []
    rows = []
    for label, g in final_rows(curves).groupby("solver", sort=False):
        err = 100 * g["test_error"]
        rows.append(SummaryRow(str(label), len(g), err.mean(), err.std(ddof=1) / len(g) ** 0.5 if len(g) > 1 else 0.0,
                               g["kernel_evals"].mean(), g["train_time_s"].mean(),
                               ",".join(sorted(set(g["status"].astype(str))))))
    return rows


def summary_table(curves: pd.DataFrame, columns: int | None = None) -> str:
    """The summary as a text table (the one ``sbpbench run`` prints).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.
    columns : int, optional
        The console's width: when a row would be wider than ``columns - 1`` characters, each
        solver's label gets a line of its own, its numbers the indented line below (no
        number is ever cut). Default: no limit.

    Returns
    -------
    str
        A header line and one line per solver (or two, see ``columns``), or a note that
        nothing was recorded. Labels are shown with their control characters escaped.
    """
    rows = summary_rows(curves)
    if not rows:
        return "(no checkpoints were recorded)"
    solver, runs, error, evals, seconds, status = HEADER
    labels = [printable(r.solver) for r in rows]
    numbers = [f"{r.runs:>4} {r.error_mean:>14.2f} ± {r.error_se:<4.2f} {r.kernel_evals:>13.3g} "
               f"{r.train_time_s:>9.2f}  {r.statuses}" for r in rows]
    head = f"{runs:>4} {error:>21} {evals:>13} {seconds:>9}  {status}"
    width = max(24, *map(len, labels))  # a sweep's labels can be long
    if columns is None or width + 1 + max(map(len, numbers + [head])) <= columns - 1:
        return "\n".join([f"{solver:<{width}} {head}"] + [f"{a:<{width}} {b}" for a, b in zip(labels, numbers)])
    return "\n".join([solver, f"  {head}"] + [line for a, b in zip(labels, numbers) for line in (a, f"  {b}")])
