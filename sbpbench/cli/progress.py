"""Progress of ``sbpbench run`` on standard error.

On a terminal, one line is redrawn in place (carriage return), never wider than the
terminal, so that it does not wrap: the run, a bar, the share of the budget spent, an ETA
from that share, kernel evaluations, test error and the time spent. The least important
fields are dropped first when the terminal is narrow. When standard error is not a terminal
(a log file, CI), a plain line is written every :data:`LOG_EVERY_S` seconds instead, and one
line per finished run in both cases.

The line is written by hand rather than with tqdm or rich: the fields are specific to
a run (kernel evaluations, test error), the plain lines for logs are the same fields
unshortened (one per line, greppable), and ``sbpbench --help`` must not import more than it
needs. The width comes from
:func:`shutil.get_terminal_size`, which honours ``$COLUMNS``.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from typing import Any

import click

#: Seconds between progress lines when standard error is not a terminal (a log file, CI).
LOG_EVERY_S = 15.0

#: Seconds between redraws on a terminal.
REDRAW_EVERY_S = 0.2

#: Bar width bounds, in characters.
MIN_BAR, MAX_BAR = 10, 24


def duration(seconds: float) -> str:
    """``seconds`` as ``42s``, ``3m05s`` or ``2h07m`` (``?`` when unknown)."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def eta(fraction: float, elapsed: float) -> float:
    """Seconds left when ``fraction`` of a budget took ``elapsed`` seconds (inf before any progress)."""
    if fraction <= 0:
        return math.inf
    return elapsed * (1 - min(fraction, 1.0)) / fraction


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, with ``…`` in the middle when it is longer."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def progress_line(label: str, fraction: float, row: dict[str, Any], elapsed: float, width: int) -> str:
    """The redrawn progress line of one run, at most ``width - 1`` characters.

    Parameters
    ----------
    label : str
        The run (``solver run k/N``).
    fraction : float
        Share of the run's budget spent (the largest over its epochs, kernel evaluations and
        seconds limits).
    row : dict
        The last checkpoint (``kernel_evals``, ``test_error``).
    elapsed : float
        Seconds since the run started.
    width : int
        Terminal columns; the last one stays free so that no terminal wraps the line.

    Returns
    -------
    str
        ``label [bar] pct  ETA t  err e  kevals k  t``: the fields after the percentage are
        dropped from the right until the line fits with the narrowest bar; the bar then takes
        what room is left (up to :data:`MAX_BAR`); a label still too long is shortened.
    """
    room = max(width - 1, 1)
    done = min(1.0, max(fraction, 0.0))
    fields = [f"ETA {duration(eta(done, elapsed))}", f"err {100 * row['test_error']:.2f}%",
              f"kevals {row['kernel_evals']:.3g}", duration(elapsed)]

    def compose(name: str, bar_width: int) -> str:
        filled = int(bar_width * done)
        bar = "#" * filled + "-" * (bar_width - filled)
        return "".join([f"  {name} [{bar}] {100 * done:5.1f}%", *("  " + f for f in fields)])

    while fields and len(compose(label, MIN_BAR)) > room:
        fields.pop()
    bar_width = min(MAX_BAR, MIN_BAR + max(0, room - len(compose(label, MIN_BAR))))
    line = compose(label, bar_width)
    if len(line) > room:
        line = compose(fit(label, max(1, len(label) - (len(line) - room))), bar_width)
    return line[:room]


class CliReporter:
    """Progress of a set of runs on standard error (implements :class:`~sbpbench.execution.executors.Reporter`).

    Parameters
    ----------
    quiet : bool
        Print nothing.
    """

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._t0 = time.time()
        self._label = ""
        self._last_draw = 0.0
        self._drawn = False
        self._total = self._done = 0
        self._planned_at = time.time()

    def _say(self, text: str) -> None:
        if not self.quiet:
            click.echo(text, err=True)

    @staticmethod
    def width() -> int:
        """The terminal's columns (``$COLUMNS`` first; 80 when unknown)."""
        return shutil.get_terminal_size((80, 24)).columns

    def loaded(self, exp: Any, n_train: int, n_test: int, seconds: float) -> None:
        """Say what was loaded and how many runs it makes."""
        self._say(f"[{exp.name}] {exp.dataset.label}: {n_train} training / {n_test} test examples "
                  f"(loaded in {seconds:.1f}s); {len(exp.solvers)} solver(s) x {exp.runs} run(s)")

    def planned(self, total: int) -> None:
        """Say how many runs are to do."""
        self._total, self._done = total, 0
        self._planned_at = time.time()
        self._say(f"{total} run(s) to do")

    def start(self, solver: str, run: int, runs: int) -> None:
        """Remember the run that starts, for its progress line."""
        self._label = f"{solver} run {run + 1}/{runs}"
        self._t0 = self._last_draw = time.time()

    def checkpoint(self, fraction: float, row: dict[str, Any]) -> None:
        """Redraw the progress line (terminal) or write one every :data:`LOG_EVERY_S` seconds."""
        now = time.time()
        if self.quiet or now - self._last_draw < (REDRAW_EVERY_S if self.tty else LOG_EVERY_S):
            return
        self._last_draw = now
        line = progress_line(self._label, fraction, row, now - self._t0, self.width() if self.tty else 10**6)
        if self.tty:
            click.echo("\r" + line + "\x1b[K", err=True, nl=False)
            self._drawn = True
        else:
            click.echo(line, err=True)

    def end(self, summary: dict[str, Any]) -> None:
        """Write one line for a finished run (replacing the progress line on a terminal).

        Until the last run, the line ends with the ETA of all runs: the time since they were
        planned, scaled by the share of runs left (runs of different solvers cost differently,
        so it is rough until a few of each have finished).
        """
        self._done += 1
        err = summary["test_error"]
        err_text = f"{100 * err:.2f}%" if err is not None else "n/a"
        label = f"{summary['experiment']} {summary['solver']} run {summary['run'] + 1}"
        counts = f"  [{self._done}/{self._total}] "
        rest = (f" {summary['status']:<8} test err {err_text}  kevals {summary['kernel_evals']:.3g}  "
                f"train {summary['train_time_s']:.1f}s")
        if self._done < self._total:  # every executor calls end(): the ETA of the whole set of runs
            rest += f"  ETA {duration(eta(self._done / self._total, time.time() - self._planned_at))}"
        if not (self.tty and not self.quiet):
            self._say(f"{counts}{label:<32}{rest}")
            return
        if self._drawn:
            click.echo("\r\x1b[K", err=True, nl=False)
            self._drawn = False
        room = max(self.width() - 1 - len(counts) - len(rest), 8)
        self._say(fit(counts + fit(label, room).ljust(min(32, room)) + rest, self.width() - 1))
