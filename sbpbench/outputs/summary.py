"""The run summary: per solver, the final test error over runs, kernel evaluations, time and statuses.

``sbpbench run`` prints it as text (:func:`summary_table`) and the run's page shows it as an HTML
table; both are made from the same rows (:func:`summary_rows`).

With a validation split (``dataset.validation``: a ``validation_error`` column) the summary gives
the validation error instead of the test error, and :func:`best_settings` chooses, per solver,
the entry (of a sweep: the setting) with the lowest mean final validation error; only that entry's
test error is reported (:func:`best_table`), so that the test set plays no part in the choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sbpbench.errors import printable
from sbpbench.outputs.notation import formatted
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
#: The same with a validation split: the error is the validation error.
VALIDATION_HEADER = ("solver", "runs", "validation error (%) ± s.e.", "kernel evals", "train s", "status")


def chosen_on(curves: pd.DataFrame) -> str:
    """The error column the summary reports: ``validation_error`` when the runs measured one, else ``test_error``."""
    has = "validation_error" in curves and bool(np.isfinite(pd.to_numeric(curves["validation_error"])).any())
    return "validation_error" if has else "test_error"


def summary_header(curves: pd.DataFrame) -> tuple[str, ...]:
    """:data:`HEADER`, or :data:`VALIDATION_HEADER` for runs with a validation error (:func:`chosen_on`)."""
    return VALIDATION_HEADER if chosen_on(curves) == "validation_error" else HEADER


def summary_rows(curves: pd.DataFrame) -> list[SummaryRow]:
    """One :class:`SummaryRow` per solver, from each run's last checkpoint, in the order of the file.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.

    Returns
    -------
    list of SummaryRow
        Empty when there is no checkpoint. The error is the validation error for runs that
        measured one (:func:`chosen_on`), else the test error.
    """
    if curves.empty:
        return []
    rows, column = [], chosen_on(curves)
    for label, g in final_rows(curves).groupby("solver", sort=False):
        err = 100 * g[column]
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
    solver, runs, error, evals, seconds, status = summary_header(curves)
    labels = [printable(r.solver) for r in rows]
    mean_width = len(error) - 7  # the mean under the header's words, " ± s.e." over " ± " and the error
    numbers = [f"{r.runs:>4} {formatted(r.error_mean, f'>{mean_width}.2f')} ± {formatted(r.error_se, '<4.2f')} "
               f"{formatted(r.kernel_evals, '>13.3g')} {r.train_time_s:>9.2f}  {r.statuses}" for r in rows]
    head = f"{runs:>4} {error} {evals:>13} {seconds:>9}  {status}"
    width = max(24, *map(len, labels))  # a sweep's labels can be long
    if columns is None or width + 1 + max(map(len, numbers + [head])) <= columns - 1:
        return "\n".join([f"{solver:<{width}} {head}"] + [f"{a:<{width}} {b}" for a, b in zip(labels, numbers)])
    return "\n".join([solver, f"  {head}"] + [line for a, b in zip(labels, numbers) for line in (a, f"  {b}")])


@dataclass(frozen=True)
class Best:
    """A solver's best setting: of its entries (``solver_name``), the one with the lowest mean
    final validation error over its runs (the first in the file on a tie), and that entry's
    mean final test error, in percent; ``entries`` is how many entries were compared."""

    solver_name: str
    solver: str
    runs: int
    validation_error: float
    test_error: float
    entries: int


def best_settings(curves: pd.DataFrame) -> list[Best]:
    """Per solver (``solver_name``, in the order of the file), its best setting on validation error.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.

    Returns
    -------
    list of Best
        Empty when the runs measured no validation error (:func:`chosen_on`). Entries whose
        runs have no finite validation error are not candidates.
    """
    if curves.empty or chosen_on(curves) != "validation_error":
        return []
    final = final_rows(curves)
    final = final[np.isfinite(pd.to_numeric(final["validation_error"]))]
    best = []
    for name, g in final.groupby("solver_name", sort=False):
        means = g.groupby("solver", sort=False)[["validation_error", "test_error"]].mean()
        label = str(means["validation_error"].idxmin())
        best.append(Best(str(name), label, int((g["solver"] == label).sum()),
                         100 * float(means.loc[label, "validation_error"]), 100 * float(means.loc[label, "test_error"]),
                         len(means)))
    return best


def best_table(curves: pd.DataFrame) -> str:
    """The best setting as text (``sbpbench run`` prints it after the summary): a line naming the
    best entry over all solvers (the lowest validation error), then a table of each solver's best
    setting with its validation and test errors; empty without a validation error.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.

    Returns
    -------
    str
        ``best setting: LABEL (validation error V%, test error T%)`` and the table, or ``""``.
    """
    best = best_settings(curves)
    if not best:
        return ""
    top = min(best, key=lambda b: b.validation_error)
    labels = [printable(b.solver) for b in best]
    head = "best setting of each solver"
    width = max(len(head), *map(len, labels))
    lines = [f"best setting: {printable(top.solver)} (validation error {top.validation_error:.2f}%, "
             f"test error {formatted(top.test_error, '.2f')}%)",
             f"{head:<{width}} {'entries':>7} {'validation error (%)':>21} {'test error (%)':>15}"]
    lines += [f"{label:<{width}} {b.entries:>7} {b.validation_error:>21.2f} {formatted(b.test_error, '>15.2f')}"
              for label, b in zip(labels, best)]
    return "\n".join(lines)
