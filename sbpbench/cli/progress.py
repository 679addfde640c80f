"""Progress of ``sbpbench run`` on standard error, fitted to the terminal and readable in a log.

Every line is at most one column narrower than the terminal (:func:`width`; ``$COLUMNS``
first, 80 when standard error and output are not terminals, as through ``tee`` or in a job
scheduler's log), and no number is ever cut: a line that does not fit flows onto indented
continuation lines between its fields (:func:`flow`), and only a label longer than a whole
line is shortened, in its middle. Labels and names are printed with their control
characters escaped (:func:`~sbpbench.errors.printable`).

* One line (or a few, when it flows) per finished run, under every executor: ``[done/total]
  label  status  err  kevals  train  ETA``.
* On a terminal, one status line redrawn in place (carriage return): the run in this process
  with a bar, its share of the budget, ETA, test error, kernel evaluations and time; with
  ``--jobs``, the runs done so far and the ETA of all. It is redrawn at every checkpoint (at
  most every :data:`REDRAW_EVERY_S`) and every second by a clock thread.
* A warm-up (numba compiling the solver's code) that lasts over :data:`COMPILING_AFTER_S` s
  says so on the status line, and ``--jobs`` says that its worker processes are starting.
* When standard error is not a terminal (a log file, CI, ``tee``): plain whole lines only, no
  carriage return nor escape sequence; the status line is written at a run's first
  checkpoint and then whenever nothing was written for :data:`LOG_EVERY_S` seconds.

Written by hand rather than with tqdm or rich: neither is a dependency, the fields are a run's
own (kernel evaluations, test error), the log lines are the same fields as plain text
(greppable), and ``sbpbench --help`` must not import more than it needs.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from sbpbench.errors import printable
from sbpbench.outputs.notation import MISSING, formatted

#: Seconds without output after which a plain status line is written when standard error is
#: not a terminal (a log file, CI).
LOG_EVERY_S = 10.0

#: Seconds between redraws on a terminal at checkpoints; the clock thread redraws every second.
REDRAW_EVERY_S = 0.2

#: Seconds between the clock thread's looks at the time.
TICK_S = 1.0

#: Bar width bounds, in characters.
MIN_BAR, MAX_BAR = 10, 24

#: Share of a run's budget below which its ETA is not guessed (shown as ``?``): the first
#: checkpoints come after a few iterations, whose time says little about the rest.
MIN_SHARE_FOR_ETA = 0.01

#: Columns assumed when none is known; no line is made narrower than :data:`MIN_WIDTH`.
DEFAULT_WIDTH, MIN_WIDTH = 80, 40


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


def width() -> int:
    """The console's columns: ``$COLUMNS``, else standard output's or standard error's terminal, else 80."""
    columns = shutil.get_terminal_size((0, 0)).columns  # $COLUMNS, then standard output
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stderr__.fileno()).columns if sys.__stderr__ else 0
        except (OSError, ValueError):
            columns = 0
    return max(columns or DEFAULT_WIDTH, MIN_WIDTH)


def wrap(text: str, columns: int | None = None) -> str:
    """``text`` in lines of at most ``columns - 1`` characters (default :func:`width`), broken
    between words only, the continuation lines indented; a word longer than a line (a long
    path) stays whole on a line of its own."""
    lines = textwrap.wrap(text, (columns or width()) - 1, subsequent_indent="    ", break_long_words=False,
                          break_on_hyphens=False)
    return "\n".join(lines)


def flow(head: str, fields: Sequence[str], columns: int) -> list[str]:
    """``head`` and ``fields`` as lines of at most ``columns - 1`` characters, cut between fields only.

    Parameters
    ----------
    head : str
        The first field (a label); shortened in its middle (:func:`fit`) only when it is
        longer than a whole line.
    fields : sequence of str
        The other fields (numbers with their names), never cut: each goes on the line if it
        fits there, else starts an indented continuation line.
    columns : int
        Console columns; the last one stays free so that no terminal wraps a line.

    Returns
    -------
    list of str
        One line when everything fits, else the lines of the fields separated by two spaces.
    """
    room = max(columns - 1, 1)
    indent = " " * min(len(head) - len(head.lstrip()) + 4, room // 2)
    lines = [fit(head, room)]
    for field in fields:
        if len(lines[-1]) + 2 + len(field) <= room:
            lines[-1] += "  " + field
        else:
            lines.append(fit(indent + field, room))
    return lines


#: Seconds of a run's warm-up after which the status line says that numba compiles
#: (:data:`COMPILING`): loading the compiled code from numba's disk cache takes less.
COMPILING_AFTER_S = 1.0
#: What a long warm-up is doing: on the first run after install (or after a change of the
#: code), numba compiles the solver's loops (15-20 s for SBP), then caches them on disk.
COMPILING = "compiling {solver}'s numba code (first run only)"


def progress_line(label: str, fraction: float, row: dict[str, Any] | None, elapsed: float, columns: int,
                  compiling: str | None = None) -> str:
    """The status line of the run in this process, at most ``columns - 1`` characters.

    Parameters
    ----------
    label : str
        The run (``solver run k/N``).
    fraction : float
        Share of the run's budget spent (the largest over its epochs, kernel evaluations and
        seconds limits).
    row : dict or None
        The last checkpoint (``kernel_evals``, ``test_error``); None before the first.
    elapsed : float
        Seconds since the run started.
    columns : int
        Terminal columns; the last one stays free so that no terminal wraps the line.
    compiling : str, optional
        The solver whose warm-up has lasted :data:`COMPILING_AFTER_S` s: the line says
        :data:`COMPILING` in place of the bar and the numbers, which say nothing yet.

    Returns
    -------
    str
        ``label [bar] pct  ETA t  err e  kevals k  t`` (while compiling: ``label  compiling
        ...  t``): the fields after the percentage are dropped from the right until the line
        fits with the narrowest bar; the bar then takes what room is left (up to
        :data:`MAX_BAR`); a label still too long is shortened.
    """
    room = max(columns - 1, 1)
    done = min(1.0, max(fraction, 0.0))
    fields = [f"ETA {duration(eta(done, elapsed) if done >= MIN_SHARE_FOR_ETA else math.inf)}"]
    if compiling is not None:
        fields = [COMPILING.format(solver=compiling)]
    elif row is not None:
        fields += [f"err {_percent(row['test_error'])}", f"kevals {_count(row['kernel_evals'])}"]
    fields.append(duration(elapsed))

    def compose(name: str, bar_width: int) -> str:
        filled = int(bar_width * done)
        bar = "#" * filled + "-" * (bar_width - filled)
        head = f"  {name}" if compiling is not None else f"  {name} [{bar}] {100 * done:5.1f}%"
        return "".join([head, *("  " + f for f in fields)])

    while fields and len(compose(label, MIN_BAR)) > room:
        fields.pop()
    bar_width = min(MAX_BAR, MIN_BAR + max(0, room - len(compose(label, MIN_BAR))))
    line = compose(label, bar_width)
    if len(line) > room:
        line = compose(fit(label, max(1, len(label) - (len(line) - room))), bar_width)
    return line[:room]


def run_label(solver: str, run: int, runs: int = 1) -> str:
    """A run as the console names it: ``sbp run 0``, by the index from 0 that ``curves.csv``,
    ``meta.json`` and the page give it; with the range when the solver has several runs
    (``sbp run 1 (runs 0-2)``), so that the index is not read as a count."""
    return f"{solver} run {run}" + (f" (runs 0-{runs - 1})" if runs > 1 else "")


def _percent(fraction: float | None) -> str:
    """A test error as ``14.92%`` (:data:`~sbpbench.outputs.notation.MISSING` when unknown)."""
    return MISSING if fraction is None or not math.isfinite(fraction) else f"{100 * fraction:.2f}%"


def _count(value: float | None) -> str:
    """A count such as kernel evaluations as ``2.07e+09`` (:data:`~sbpbench.outputs.notation.MISSING`
    for solvers that do not count)."""
    return formatted(value, ".3g")


def runs_text(exp: Any) -> str:
    """How many runs each entry of experiment ``exp`` makes, in words: ``3 run(s)``, and the entries
    of a deterministic solver that run once (:meth:`~sbpbench.experiment.config.Experiment.runs_of`)."""
    once = exp.runs_once()
    text = f"{exp.runs} run(s)"
    return text + (f" ({', '.join(map(printable, once))}: runs: 1 (deterministic))" if once else "")


class CliReporter:
    """Progress of a set of runs on standard error (implements :class:`~sbpbench.execution.executors.Reporter`).

    Use it as a context manager: a clock thread redraws the status line every second on a
    terminal, and writes it every :data:`LOG_EVERY_S` seconds of silence otherwise.

    Parameters
    ----------
    quiet : bool
        Print nothing.
    """

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._clock: threading.Thread | None = None
        self._experiments: list[str] = []
        self._total = self._done = 0
        self._planned_at: float | None = None
        self._run: dict[str, Any] | None = None  # the run in this process: label, t0, fraction, row
        self._drawn = False  # a status line is on the terminal, to be erased before the next line
        self._last_draw = 0.0
        self._last_line = time.monotonic()

    def __enter__(self) -> CliReporter:
        if not self.quiet:
            self._clock = threading.Thread(target=self._tick, name="sbpbench-progress", daemon=True)
            self._clock.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._clock is not None:
            self._clock.join()
        with self._lock:
            self._erase()

    # ------------------------------------------------------------------------- writing

    def _erase(self) -> None:
        if self._drawn:
            click.echo("\r\x1b[K", err=True, nl=False)
            self._drawn = False

    def _lines(self, lines: list[str]) -> None:
        """Write whole lines (erasing a drawn status line first)."""
        if self.quiet:
            return
        with self._lock:
            self._erase()
            for line in lines:
                click.echo(line, err=True)
            self._last_line = time.monotonic()

    def _say(self, text: str) -> None:
        """Write a sentence, wrapped between words to the console's width (a word is never cut)."""
        self._lines(wrap(text).split("\n"))

    def _status(self) -> str | None:
        """The status line now: the run in this process, else the runs done of all."""
        now = time.monotonic()
        if self._run is not None:
            run = self._run
            return progress_line(run["label"], run["fraction"], run["row"], now - run["t0"], width(),
                                 self._compiling(now))
        if self._planned_at is None or self._done >= self._total:
            return None
        elapsed = now - self._planned_at
        parts = [f"  {self._done}/{self._total} runs done", f"elapsed {duration(elapsed)}"]
        if self._done:
            parts.append(f"ETA {duration(eta(self._done / self._total, elapsed))}")
        return fit("  ".join(parts), width() - 1)

    def _show_status(self, force: bool = False) -> None:
        """Redraw the status line (terminal), or write it after :data:`LOG_EVERY_S` s of silence."""
        if self.quiet:
            return
        with self._lock:
            line = self._status()
            if line is None:
                return
            now = time.monotonic()
            if self.tty:
                click.echo("\r" + line + "\x1b[K", err=True, nl=False)
                self._drawn = True
                self._last_draw = now
            elif force or now - self._last_line >= LOG_EVERY_S:
                self._lines([line])

    def _compiling(self, now: float) -> str | None:
        """The solver of the run in this process whose warm-up has lasted :data:`COMPILING_AFTER_S` s, if any."""
        warming = self._run["warming"] if self._run is not None else None
        return warming["solver"] if warming is not None and now - warming["t0"] >= COMPILING_AFTER_S else None

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:  # a compile that starts is news: written at once, also to a log
                warming = self._run["warming"] if self._run is not None else None
                news = warming is not None and not warming["told"] and self._compiling(time.monotonic()) is not None
                if news and warming is not None:
                    warming["told"] = True
                self._show_status(force=news)

    # ------------------------------------------------------------------------- the Reporter protocol

    def loaded(self, exp: Any, n_train: int, n_test: int, seconds: float, copy: str | None = None) -> None:
        """Say what was loaded (and which copy of a registered dataset) and how many runs it makes."""
        self._experiments.append(exp.name)
        source = printable(exp.dataset.label) + (f", {copy}" if copy else "")
        self._say(f"[{printable(exp.name)}] {source}: {n_train} training / {n_test} test examples "
                  f"(loaded in {seconds:.1f}s); {len(exp.solvers)} solver(s) x {runs_text(exp)}")

    def resumed(self, exp: Any, directory: Path, kept: int, todo: int) -> None:
        """Say which run folder is continued, and how many runs it keeps."""
        self._say(f"[{printable(exp.name)}] continuing {printable(str(directory))}: {kept} run(s) kept, "
                  f"{todo} to do")

    def planned(self, total: int) -> None:
        """Say how many runs are to do."""
        self._total, self._done = total, 0
        self._planned_at = time.monotonic()
        self._say(f"{total} run(s) to do")

    def start(self, solver: str, run: int, runs: int) -> None:
        """A run starts in this process: its status line follows it, naming the run by its index
        from 0 as the result files do (:func:`run_label`)."""
        with self._lock:
            self._run = {"label": run_label(printable(solver), run, runs), "t0": time.monotonic(),
                         "fraction": 0.0, "row": None, "warming": None}
            self._last_draw = 0.0

    def warming_up(self, solver: str | None) -> None:
        """The run in this process starts (``solver``) or ends (None) its warm-up: after
        :data:`COMPILING_AFTER_S` s its status line says that numba compiles (:data:`COMPILING`)."""
        with self._lock:
            if self._run is not None:
                self._run["warming"] = None if solver is None else {
                    "solver": printable(solver), "t0": time.monotonic(), "told": False}

    def workers(self, count: int) -> None:
        """Say that the worker processes of ``--jobs`` are starting (each imports sbpbench first)."""
        self._say(f"starting {count} worker processes")

    def checkpoint(self, fraction: float, row: dict[str, Any]) -> None:
        """A checkpoint of the run in this process: redraw its line (terminal; at most every
        :data:`REDRAW_EVERY_S`), or write it if it is the run's first (not a terminal)."""
        with self._lock:
            if self._run is None:
                return
            first = self._run["row"] is None
            self._run.update(fraction=fraction, row=row)
            if self.tty and time.monotonic() - self._last_draw < REDRAW_EVERY_S:
                return
            self._show_status(force=first)

    def end(self, summary: dict[str, Any]) -> None:
        """Write the lines of a finished run (replacing the status line on a terminal).

        Until the last run, they end with the ETA of all runs: the time since they were
        planned, scaled by the share of runs left (runs of different solvers cost differently,
        so it is rough until a few of each have finished).
        """
        with self._lock:
            self._run = None
            self._done += 1
            label = run_label(summary["solver"], summary["run"])
            if len(self._experiments) > 1:
                label = f"{summary['experiment']} {label}"
            status, _, reason = str(summary["status"]).partition(": ")
            fields = [printable(status), f"err {_percent(summary['test_error'])}",
                      f"kevals {_count(summary['kernel_evals'])}", f"train {summary['train_time_s']:.1f}s"]
            if self._done < self._total and self._planned_at is not None:
                fields.append(f"ETA {duration(eta(self._done / self._total, time.monotonic() - self._planned_at))}")
            lines = flow(f"  [{self._done}/{self._total}] {printable(label)}", fields, width())
            if reason:  # the whole reason is in meta.json
                lines.append(fit(f"      {printable(reason)}", width() - 1))
            self._lines(lines)
