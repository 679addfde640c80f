"""The run summary: per solver, the final test error over runs, kernel evaluations, time and statuses.

``sbpbench run`` prints it as text (:func:`summary_table`) and the run's page shows it as an HTML
table; both are made from the same rows (:func:`summary_rows`).

With a validation split (``dataset.validation``: a ``validation_error`` column) the summary gives
the validation error instead of the test error, and :func:`best_settings` chooses, per solver,
the entry (of a sweep: the setting) with the lowest mean final validation error; only that entry's
test error is reported (:func:`best_table`), so that the test set plays no part in the choice.
Without one, a sweep (a solver with several entries) gets the same table chosen on the final test
error itself, and its caption (:func:`best_caption`) says that the choice flatters the chosen
entry. The console and the page show the same cells (:func:`best_cells`).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sbpbench.errors import printable
from sbpbench.outputs.notation import formatted
from sbpbench.results.curves import final_rows


@dataclass(frozen=True)
class SummaryRow:
    """One solver's last checkpoints: test error mean and its standard error over runs (in
    percent; NaN, shown n/a, for one run), mean kernel evaluations and training seconds, and the
    statuses its runs ended with. The standard error is the spread the figures' bands show too."""

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
        se = err.std(ddof=1) / len(g) ** 0.5 if len(g) > 1 else math.nan  # one run: no spread to judge by
        rows.append(SummaryRow(str(label), len(g), err.mean(), se, g["kernel_evals"].mean(), g["train_time_s"].mean(),
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
    final error of the column the choice is made on (:func:`chosen_on`: the validation error when
    the runs measured one; the first in the file on a tie), that entry's mean final validation
    error (NaN without a validation split) and its mean final test error with the standard error
    of that mean over runs (NaN, shown n/a, for one run), in percent; ``entries`` is how many
    entries were compared."""

    solver_name: str
    solver: str
    runs: int
    validation_error: float
    test_error: float
    test_error_se: float
    entries: int


def best_settings(curves: pd.DataFrame) -> list[Best]:
    """Per solver (``solver_name``, in the order of the file), its best setting.

    The choice is made on the final validation error when the runs measured one, else on the
    final test error itself (which then flatters the chosen entry: say so where it is shown).

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.

    Returns
    -------
    list of Best
        Empty when there is nothing to choose: no checkpoint, or no validation error and no
        solver with more than one entry. Entries whose runs have no finite error of the column
        chosen on are not candidates.
    """
    if curves.empty:
        return []
    column = chosen_on(curves)
    final = final_rows(curves)
    if column == "test_error" and final.groupby("solver_name")["solver"].nunique().max() < 2:
        return []
    final = final[np.isfinite(pd.to_numeric(final[column]))]
    best = []
    for name, g in final.groupby("solver_name", sort=False):
        means = g.groupby("solver", sort=False)[list(dict.fromkeys([column, "test_error"]))].mean()
        label = str(means[column].idxmin())
        tests = 100 * g.loc[g["solver"] == label, "test_error"].to_numpy(dtype=float)
        validation = 100 * float(means.loc[label, column]) if column == "validation_error" else math.nan
        best.append(Best(str(name), label, len(tests), validation, float(tests.mean()),
                         float(tests.std(ddof=1) / len(tests) ** 0.5) if len(tests) > 1 else math.nan, len(means)))
    return best


#: The columns of the best-setting table, as headed in the text table and on the page (without a
#: validation split, all but the validation error).
BEST_HEADER = ("solver", "best setting", "entries", "runs", "validation error (%)", "test error (%) ± s.e.")


def best_cells(curves: pd.DataFrame) -> tuple[tuple[str, ...], list[list[str]]]:
    """The best-setting table (:func:`best_settings`) as text cells, the console's and the page's.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.

    Returns
    -------
    tuple
        The header (:data:`BEST_HEADER`, less the validation error without a validation split) and
        one row of cells per solver (labels not escaped); no rows when there is nothing to choose.
    """
    on_validation = chosen_on(curves) == "validation_error"
    rows = [[b.solver_name, b.solver, str(b.entries), str(b.runs), formatted(b.validation_error, ".2f"),
             f"{formatted(b.test_error, '.2f')} ± {formatted(b.test_error_se, '.2f')}"] for b in best_settings(curves)]
    keep = [i for i in range(len(BEST_HEADER)) if on_validation or i != 4]
    return tuple(BEST_HEADER[i] for i in keep), [[r[i] for i in keep] for r in rows]


def best_caption(curves: pd.DataFrame) -> str:
    """What the best-setting table chose on, in one sentence (the console's line and the page's caption)."""
    if chosen_on(curves) == "validation_error":
        return ("Each solver's best setting: of its entries, the one with the lowest mean final validation "
                "error; its test error played no part in the choice (mean ± standard error over runs).")
    return ("Each solver's best setting: of its entries, the one with the lowest mean final test error. "
            "There is no validation split, so the choice was made on the test set and its test error "
            "flatters it (mean ± standard error over runs).")


def best_table(curves: pd.DataFrame, columns: int | None = None) -> str:
    """The best settings as text (``sbpbench run`` prints it after the summary): a line naming the
    best entry over all solvers, the caption (:func:`best_caption`), then a table of each solver's
    best setting (:func:`best_settings`) with its validation and test errors; empty when there is
    nothing to choose.

    Parameters
    ----------
    curves : pandas.DataFrame
        Rows of a ``curves.csv``.
    columns : int, optional
        The console's width: the caption is broken into lines of at most ``columns - 1``
        characters, and the table's labels get lines of their own where a row would be wider
        (:func:`text_table`). Default: no limit.

    Returns
    -------
    str
        ``best setting: LABEL (validation error V%, test error T% ± S)`` (S ``n/a`` for one run),
        the caption and the table,
        or ``""``.
    """
    best = best_settings(curves)
    if not best:
        return ""
    on_validation = chosen_on(curves) == "validation_error"
    top = min(best, key=lambda b: b.validation_error if on_validation else b.test_error)
    test = f"test error {formatted(top.test_error, '.2f')}% ± {formatted(top.test_error_se, '.2f')}"
    first = (f"best setting: {printable(top.solver)} (validation error {top.validation_error:.2f}%, {test})"
             if on_validation else f"best setting: {printable(top.solver)} ({test}, chosen on the test set)")
    header, rows = best_cells(curves)
    rows = [[printable(c) for c in row] for row in rows]
    return "\n".join([first, caption_lines(best_caption(curves), columns),
                      text_table(header, rows, right=range(2, len(header)), columns=columns, label=1)])


def caption_lines(caption: str, columns: int | None) -> str:
    """A table's caption in lines of at most ``columns - 1`` characters (broken between words), or one line."""
    return textwrap.fill(caption, columns - 1, break_long_words=False) if columns else caption


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Iterable[int] = (),
               columns: int | None = None, label: int = 0) -> str:
    """Cells as a text table: each column as wide as its widest cell, two spaces between columns.

    Parameters
    ----------
    header : sequence of str
        The column headings.
    rows : sequence of sequence of str
        The cells, already written as text.
    right : iterable of int
        The columns aligned right (numbers); the others are aligned left.
    columns : int, optional
        The console's width: when a line would be wider than ``columns - 1`` characters, each
        row's cell of column ``label`` gets a line of its own and the other cells the indented
        line below, as :func:`summary_table` does. Default: no limit.
    label : int
        The column of the (longest) labels.

    Returns
    -------
    str
        The header line and one line per row (or two, see ``columns``), without trailing spaces.
    """
    right = set(right)
    lines = [header, *rows]
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(header))]

    def joined(line: Sequence[str], without: int | None = None) -> str:
        return "  ".join(f"{cell:>{w}}" if i in right else f"{cell:<{w}}"
                         for i, (cell, w) in enumerate(zip(line, widths)) if i != without).rstrip()

    if columns is None or sum(widths) + 2 * (len(widths) - 1) <= columns - 1:
        return "\n".join(joined(line) for line in lines)
    return "\n".join(part for line in lines for part in (str(line[label]), "  " + joined(line, label)))
