"""The progress output of ``sbpbench run``: fitted to the terminal's width, whole lines in a log, an ETA."""

import math
import os
import re
import subprocess
import time

import pandas as pd
import pytest

from sbpbench.cli import progress
from sbpbench.cli.progress import CliReporter, duration, eta, fit, flow, progress_line
from sbpbench.errors import printable
from sbpbench.execution import loop
from sbpbench.experiment import config
from sbpbench.outputs.notation import MISSING, formatted, number
from sbpbench.outputs.summary import summary_table
from sbpbench.results.store import read_curves
from tests.cli_runner import command, environment, sbpbench
from tests.experiments import adult_config, write_config
from tests.problems import adult, build_problem

ROW = {"kernel_evals": 1.234e9, "test_error": 0.1523}

#: What a terminal shows of the output: ANSI erase codes removed, split where the cursor returns.
_ERASE = re.compile(r"\x1b\[K")

#: A config whose labels are long and alike but for their ends, in an experiment with a long name.
CONFIG = adult_config(None, n_train=300, n_test=300, budget={"epochs": 2}, seed=None, solvers=[
    "sbp", {"name": "pegasos", "mini_batch": [3, 30], "label": "pegasos-with-a-rather-long-label"}])
LABELS = ["sbp", "pegasos-with-a-rather-long-label[mini_batch=3]", "pegasos-with-a-rather-long-label[mini_batch=30]"]


def screen_lines(stderr: str) -> list[str]:
    return [part for line in _ERASE.sub("", stderr).split("\n") for part in line.split("\r")]


def records(lines: list[str]) -> list[str]:
    """The lines of each finished run (``  [k/N] ...`` and its indented continuation lines), joined."""
    out: list[str] = []
    for line in lines:
        if re.match(r"  \[\d+/\d+\] ", line):
            out.append(line)
        elif out and line.startswith("      ") and not line.strip().startswith("["):
            out[-1] += "  " + line.strip()
    return out


def fits(line: str) -> bool:
    """Whether ``line`` fits 80 columns, or is one word too long for any line (a long path), whole."""
    return len(line) <= 79 or len(line.split()) == 1


def check_records(found: list[str], total: int) -> None:
    """One record per run, each with its label and its numbers whole."""
    assert len(found) == total, found
    for record in found:
        assert re.search(r"\] (\S+) run [01]  budget  err \d+\.\d\d%  kevals \d\.\d+e\+\d\d  train \d+\.\ds",
                         record), record
    assert sorted({re.match(r"  \[\d+/\d+\] (\S+) run", r).group(1) for r in found}) == sorted(LABELS)


def test_eta_and_duration():
    assert eta(0.25, 10.0) == pytest.approx(30.0)
    assert eta(1.0, 10.0) == 0.0
    assert eta(0.0, 10.0) == float("inf")
    assert [duration(s) for s in (0.4, 42, 185, 7620, float("inf"))] == ["0s", "42s", "3m05s", "2h07m", "?"]


def test_fit_cuts_in_the_middle():
    assert fit("abcdefghij", 20) == "abcdefghij"
    cut = fit("sbp[eta=0.1;sigma2=100] run 1/3", 12)
    assert len(cut) == 12 and cut.startswith("sbp[e") and cut.endswith("1/3") and "…" in cut


def test_flow_cuts_between_fields_only():
    fields = ["budget", "err 14.92%", "kevals 2.07e+09", "train 3.4s", "ETA 1m05s"]
    assert flow("  [3/12] sbp run 2", fields, 120) == ["  [3/12] sbp run 2  " + "  ".join(fields)]
    label = "  [3/12] pegasos[mini_batch=10;sigma2=100;lambda=1/(100*n)] run 2"
    lines = flow(label, fields, 80)
    assert lines[0].startswith(label) and all(len(line) <= 79 for line in lines)
    assert " ".join(" ".join(lines).split()) == " ".join(f"{label}  {'  '.join(fields)}".split())
    assert all(line.startswith("      ") for line in lines[1:])
    assert flow("x" * 200, fields, 80)[0] == fit("x" * 200, 79)  # only a label wider than a line is cut


@pytest.mark.parametrize("columns", [40, 60, 80, 120, 200])
@pytest.mark.parametrize("label", ["sbp run 1/1", "pegasos[k=10;mini_batch=100;sigma2=1000] run 10/10"])
@pytest.mark.parametrize("fraction", [0.0, 0.37, 1.0, 2.5])
@pytest.mark.parametrize("row", [ROW, None])
def test_progress_line_never_wraps(columns, label, fraction, row):
    line = progress_line(label, fraction, row, 61.0, columns)
    assert len(line) <= columns - 1
    assert re.search(r"\d+\.\d%", line)  # the share of the budget is always shown


def test_progress_line_shows_eta_when_there_is_room():
    line = progress_line("sbp run 1/3", 0.25, ROW, 60.0, 80)
    assert "ETA 3m00s" in line and "err 15.23%" in line and "[####-" in line
    narrow = progress_line("sbp run 1/3", 0.25, ROW, 60.0, 50)
    assert "ETA" in narrow and "kevals" not in narrow  # less important fields go first


def test_width_is_columns_then_the_terminal_then_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "132")
    assert progress.width() == 132
    monkeypatch.setenv("COLUMNS", "12")
    assert progress.width() == progress.MIN_WIDTH
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(progress.shutil, "get_terminal_size", lambda fallback: os.terminal_size(fallback))
    monkeypatch.setattr(progress.os, "get_terminal_size", lambda fd: (_ for _ in ()).throw(OSError()))
    assert progress.width() == 80  # a pipe, a log file


def _tty_init(self, quiet: bool = False) -> None:
    _original_init(self, quiet)
    self.tty = True


_original_init = CliReporter.__init__


def test_a_run_on_an_80_column_terminal_never_wraps(monkeypatch, capsys, tmp_path):
    """A real run with the reporter drawing on a (pretend) terminal of 80 columns: no line wider
    than 79, no number cut, the labels that differ only at their ends whole."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(progress, "REDRAW_EVERY_S", 0.0)
    monkeypatch.setattr(CliReporter, "__init__", _tty_init)
    cfg = tmp_path / "a-rather-long-experiment-name-for-the-progress-line.yaml"
    write_config(cfg, CONFIG)
    assert sbpbench(monkeypatch, "run", cfg, "--results", tmp_path / "res", "--no-plot") == 0
    out, err = capsys.readouterr()
    lines = screen_lines(err)
    drawn = [line for line in lines if re.search(r"\[[#-]+\] +\d+\.\d%", line)]
    assert drawn, "the progress line was never drawn"
    found = records(lines)
    check_records(found, 6)
    assert all("ETA" in r for r in found[:5]) and "ETA" not in found[5]  # the ETA of all runs
    assert all(fits(line) for line in lines + out.splitlines()), [x for x in lines + out.splitlines() if not fits(x)]
    table = out[out.index("solver"):].splitlines()
    assert [table[i] for i in (2, 4, 6)] == LABELS  # each label whole on a line of its own, numbers below
    assert all(re.match(r" +2 +\d+\.\d\d ± \d\.\d\d +\d\.\d+e\+\d\d +\d+\.\d\d  budget$", table[i]) for i in (3, 5, 7))


def test_through_a_pipe_whole_lines_only(tmp_path):
    """``sbpbench run ... 2>&1 | tee log``: no carriage return nor escape sequence, no line wider
    than 79 columns, a line per finished run, and a status line at the first checkpoint."""
    cfg = tmp_path / "piped.yaml"
    write_config(cfg, CONFIG)
    env = environment()
    env.pop("COLUMNS", None)
    done = subprocess.run(command("run", cfg, "--results", tmp_path / "res", "--no-plot"), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert done.returncode == 0, done.stdout
    assert "\r" not in done.stdout and "\x1b" not in done.stdout
    lines = done.stdout.splitlines()
    assert all(fits(line) for line in lines), max(lines, key=len)
    check_records(records(lines), 6)
    first = next(i for i, line in enumerate(lines) if "run(s) to do" in line)
    assert re.match(r"  sbp run 0 \(runs 0-1\) \[[#-]+\] +\d+\.\d%  ETA", lines[first + 1]), lines[first + 1]


def test_not_a_terminal_writes_a_status_line_when_nothing_was_written_for_a_while(monkeypatch, capsys):
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.2)
    monkeypatch.setattr(progress, "TICK_S", 0.05)
    with CliReporter() as reporter:
        reporter.tty = False
        reporter.planned(3)
        time.sleep(0.5)  # runs in other processes: nothing to say but the time
        reporter.end({"experiment": "e", "solver": "sbp", "run": 0, "status": "budget", "test_error": 0.15,
                      "kernel_evals": 10.0, "train_time_s": 1.0})
        time.sleep(0.5)
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    lines = err.splitlines()
    # the seconds as digits: a loaded machine may hold this process back for seconds
    assert lines[0] == "3 run(s) to do" and re.match(r"  0/3 runs done  elapsed \d+s$", lines[1])
    done = lines.index(next(line for line in lines if line.startswith("  [1/3] sbp run 0  budget  err 15.00%")))
    assert re.match(r"  1/3 runs done  elapsed \d+s  ETA \d+s$", lines[done + 1])
    assert len(lines) < 12  # every LOG_EVERY_S at most, not at every tick


def test_control_characters_in_labels_never_reach_the_console(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    reporter = CliReporter()
    reporter.tty = False
    reporter.planned(1)
    reporter.start("evil\n\x1b[2J\r", 0, 1)
    reporter.checkpoint(0.5, ROW)
    reporter.end({"experiment": "e", "solver": "evil\n\x1b[2J\r", "run": 0, "status": "failed: Boom: a\nb",
                  "test_error": None, "kernel_evals": float("nan"), "train_time_s": 0.0})
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\r" not in err
    lines = err.splitlines()
    assert lines[1].startswith("  evil\\n\\x1b[2J\\r run 0 [")
    assert lines[2].startswith("  [1/1] evil\\n\\x1b[2J\\r run 0 ") and " failed " in lines[2]
    assert lines[3].strip() == "Boom: a\\nb"  # the reason, on a line of its own
    assert printable("tab\there") == "tab\\there" and printable("plain é ± …") == "plain é ± …"


def test_the_summary_table_fits_or_stacks(tmp_path, monkeypatch):
    cfg = tmp_path / "t.yaml"
    write_config(cfg, CONFIG)
    assert sbpbench(monkeypatch, "run", cfg, "--results", tmp_path / "res", "--no-plot", "-q") == 0
    curves = read_curves(tmp_path / "res")
    wide = summary_table(curves, 200).splitlines()
    assert len(wide) == 4 and [line.split()[0] for line in wide[1:]] == LABELS
    assert summary_table(curves) == "\n".join(wide)  # no width: one line per solver
    narrow = summary_table(curves, 80).splitlines()
    assert len(narrow) == 8 and all(len(line) <= 79 for line in narrow)
    assert [narrow[i] for i in (2, 4, 6)] == LABELS
    assert [narrow[i].split() for i in (3, 5, 7)] == [line.split()[1:] for line in wide[1:]]


def test_a_missing_number_is_n_a_on_the_console_as_on_the_page():
    """A solver that counts no kernel evaluations, a run that measured no error, and the standard
    error of one run say n/a, never nan."""
    curves = pd.DataFrame({"solver": ["libsvm", "sbp"], "run": [0, 0], "checkpoint": [0, 0],
                           "test_error": [math.nan, 0.25], "kernel_evals": [math.nan, 1e4],
                           "train_time_s": [1.0, 2.0], "status": ["done", "budget"]})
    lines = summary_table(curves).splitlines()
    assert lines[1].split() == ["libsvm", "1", "n/a", "±", "n/a", "n/a", "1.00", "done"]
    assert lines[2].split() == ["sbp", "1", "25.00", "±", "n/a", "1e+04", "2.00", "budget"]  # one run: no spread
    assert "nan" not in summary_table(curves) and lines[1].index(" 1.00 ") == lines[2].index(" 2.00 ")
    assert number(math.nan) == formatted(math.nan, ".3g") == progress._count(math.nan) == MISSING == "n/a"
    assert formatted(None, "<6.2f") == "n/a   " and formatted(2.5, "<6.2f") == "2.50  "


def test_the_console_numbers_runs_from_0_as_the_files_do(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "100")
    reporter = CliReporter()
    reporter.tty = False
    reporter.planned(1)
    reporter.start("sbp", 2, 3)
    reporter.checkpoint(0.5, ROW)
    reporter.end({"experiment": "e", "solver": "sbp", "run": 2, "status": "budget", "test_error": 0.1,
                  "kernel_evals": 10.0, "train_time_s": 0.0})
    lines = capsys.readouterr().err.splitlines()
    assert lines[1].startswith("  sbp run 2 (runs 0-2) [") and lines[2].startswith("  [1/1] sbp run 2  budget")


def test_a_long_warm_up_says_numba_compiles_in_place_of_the_bar():
    """The first run after install sits for ~20 s while numba compiles: the line says so, not 0.0%."""
    said = "compiling sbp's numba code (first run only)"
    line = progress_line("sbp run 1 (runs 0-2)", 0.0, None, 25.0, 80, compiling="sbp")
    assert line == f"  sbp run 1 (runs 0-2)  {said}  25s"  # whole at 80 columns: no bar, no 0.0%
    assert said not in progress_line("sbp run 1/3", 0.0, None, 25.0, 200)
    assert progress_line("sbp run 1/3", 0.0, None, 5.0, 30, compiling="sbp") == "  sbp run 1/3"  # never wraps


def test_the_reporter_says_a_compile_once_in_a_log_and_nothing_for_a_short_warm_up(monkeypatch, capsys):
    monkeypatch.setattr(progress, "COMPILING_AFTER_S", 0.2)
    monkeypatch.setattr(progress, "TICK_S", 0.05)
    with CliReporter() as reporter:
        reporter.tty = False
        reporter.planned(2)
        reporter.start("sbp", 0, 2)
        reporter.warming_up("sbp")
        time.sleep(0.6)
        reporter.warming_up(None)
        reporter.checkpoint(0.5, ROW)
        reporter.start("pegasos", 0, 1)
        reporter.warming_up("pegasos")  # loaded from the cache at once
        reporter.warming_up(None)
        reporter.checkpoint(0.5, ROW)
    lines = capsys.readouterr().err.splitlines()
    compiling = [line for line in lines if "compiling" in line]
    assert len(compiling) == 1 and re.fullmatch(
        r"  sbp run 0 \(runs 0-1\)  compiling sbp's numba code \(first run only\)  \d+s", compiling[0]), lines
    assert any(line.startswith("  sbp run 0 (runs 0-1) [") and "err 15.23%" in line for line in lines)


def test_a_warm_up_tells_its_start_and_end_once_per_kind_of_run():
    problem = build_problem(adult(40), lam=0.1)
    told: list[str | None] = []
    warm_ups = loop.WarmUps()
    spec = config.SolverSpec("pegasos", {}, "pegasos")
    warm_ups.warm_up(problem, spec, notice=told.append)
    warm_ups.warm_up(problem, spec, notice=told.append)  # done here before: nothing to tell
    assert told == ["pegasos", None]

