"""The progress output of ``sbpbench run``: fitted to the terminal's width, with an ETA."""

import re

import pytest

from sbpbench.cli import progress
from sbpbench.cli.progress import CliReporter, duration, eta, fit, progress_line
from tests.cli_runner import sbpbench

ROW = {"kernel_evals": 1.234e9, "test_error": 0.1523}

#: What a terminal shows of the output: ANSI erase codes removed, split where the cursor returns.
_ERASE = re.compile(r"\x1b\[K")


def screen_lines(stderr: str) -> list[str]:
    return [part for line in _ERASE.sub("", stderr).split("\n") for part in line.split("\r")]


def test_eta_and_duration():
    assert eta(0.25, 10.0) == pytest.approx(30.0)
    assert eta(1.0, 10.0) == 0.0
    assert eta(0.0, 10.0) == float("inf")
    assert [duration(s) for s in (0.4, 42, 185, 7620, float("inf"))] == ["0s", "42s", "3m05s", "2h07m", "?"]


def test_fit_cuts_in_the_middle():
    assert fit("abcdefghij", 20) == "abcdefghij"
    cut = fit("sbp[eta=0.1;sigma2=100] run 1/3", 12)
    assert len(cut) == 12 and cut.startswith("sbp[e") and cut.endswith("1/3") and "…" in cut


@pytest.mark.parametrize("width", [40, 60, 80, 120, 200])
@pytest.mark.parametrize("label", ["sbp run 1/1", "pegasos[k=10;mini_batch=100;sigma2=1000] run 10/10"])
@pytest.mark.parametrize("fraction", [0.0, 0.37, 1.0, 2.5])
def test_progress_line_never_wraps(width, label, fraction):
    line = progress_line(label, fraction, ROW, 61.0, width)
    assert len(line) <= width - 1
    assert re.search(r"\d+\.\d%", line)  # the share of the budget is always shown


def test_progress_line_shows_eta_when_there_is_room():
    line = progress_line("sbp run 1/3", 0.25, ROW, 60.0, 80)
    assert "ETA 3m00s" in line and "err 15.23%" in line and "[####-" in line
    narrow = progress_line("sbp run 1/3", 0.25, ROW, 60.0, 50)
    assert "ETA" in narrow and "kevals" not in narrow  # less important fields go first


def test_a_run_on_an_80_column_terminal_never_wraps(monkeypatch, capsys, tmp_path):
    """A real run with the reporter drawing on a (pretend) terminal of 80 columns."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(progress, "REDRAW_EVERY_S", 0.0)
    monkeypatch.setattr(CliReporter, "__init__", _tty_init)
    cfg = tmp_path / "a-rather-long-experiment-name-for-the-progress-line.yaml"
    cfg.write_text("dataset: {name: adult, n_train: 300, n_test: 300}\nkernel: {name: gaussian, sigma2: 10}\n"
                   "problem: {lambda: 1/n, nu: 0.011}\n"
                   "solvers: [sbp, {name: pegasos, mini_batch: 3, label: pegasos-with-a-long-label-k3}]\n"
                   "budget: {epochs: 2}\nruns: 2\n")
    assert sbpbench(monkeypatch, "run", cfg, "--results", tmp_path / "res", "--no-plot") == 0
    lines = screen_lines(capsys.readouterr().err)
    drawn = [line for line in lines if "ETA" in line]
    assert drawn, "the progress line was never drawn"
    ends = [line for line in lines if re.match(r"  \[\d/4\]", line)]
    assert len(ends) == 4 and all("train" in line for line in ends)
    assert all("ETA" in line for line in ends[:3]) and "ETA" not in ends[3]  # the ETA of all runs
    assert all(len(line) <= 79 for line in drawn + ends), max(drawn + ends, key=len)


def _tty_init(self, quiet: bool = False) -> None:
    _original_init(self, quiet)
    self.tty = True


_original_init = CliReporter.__init__


def test_not_a_terminal_gets_plain_lines(capsys):
    reporter = CliReporter()
    reporter.tty = False
    reporter.planned(1)
    reporter.start("sbp", 0, 1)
    reporter._last_draw = -1e9  # as if the last line was long ago
    reporter.checkpoint(0.5, ROW)
    reporter.end({"experiment": "e", "solver": "sbp", "run": 0, "status": "budget", "test_error": 0.15,
                  "kernel_evals": 10.0, "train_time_s": 1.0})
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    assert err.count("\n") == 3 and "ETA" in err.splitlines()[1] and "[1/1] e sbp run 1" in err
