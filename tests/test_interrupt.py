"""Ctrl-C on a parallel run (``--jobs 2``, a local Dask cluster): it ends within about a second,
keeps every finished run, records the interrupted ones and prints the command that continues."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.cli_runner import command, environment, interruption
from tests.experiments import write_adult_config

#: Run 0 of pegasos is short; the SBP runs are long: when the first run has finished, its worker
#: has started another, so some runs are finished, some running and some not started.
STOP = {"n_train": 3000, "n_test": 300, "solvers": ["sbp", {"name": "pegasos", "budget": {"epochs": 1}}],
        "budget": {"epochs": 2000}, "runs": 3}

#: Seconds from Ctrl-C to the end of the process allowed (about a second, with room) on a machine
#: where a whole ``sbpbench validate`` of the config takes less than half of it; on a busier one,
#: where everything is slower, twice the time of that validation, timed in the test under the same
#: load (the end after Ctrl-C is of that order: a process's work, not a run's).
LIMIT_S = 3.0


def _seconds_of(args: list[str]) -> float:
    """The wall-clock seconds a new process ``args`` takes from its start to its successful end."""
    started = time.monotonic()
    subprocess.run(args, env=environment(), capture_output=True, check=True)
    return time.monotonic() - started


def _as_a_shell_starts_a_job() -> None:
    """In the new process, before it runs sbpbench: Ctrl-C at its default action and no signal
    blocked, as a shell starts a job at a terminal. A process inherits both; an ignored SIGINT
    stays ignored in Python, which then never raises KeyboardInterrupt, and this test process's
    state is not a terminal's (libraries its other tests ran may have changed it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _signal_state(pid: int) -> str:
    """The signal masks of process ``pid`` (pending, blocked, ignored, caught), for a failure message."""
    try:
        status = open(f"/proc/{pid}/status").read().splitlines()
    except OSError:
        return "its signal state unknown"
    return ", ".join(line.replace("\t", " ") for line in status if line.startswith(("SigPnd", "ShdPnd", "SigBlk",
                                                                                   "SigIgn", "SigCgt")))


@pytest.mark.parametrize("executor", ["processes", "dask"])
def test_ctrl_c_ends_a_parallel_run_at_once_and_says_how_to_resume(tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("dask.distributed")
    config = write_adult_config(tmp_path, "stop", **STOP)
    args = command("run", config, "--jobs", "2", "--executor", executor, "--results", tmp_path / "res", "--no-plot")
    # a session of its own: Ctrl-C at a terminal goes to the whole foreground group, workers included
    proc = subprocess.Popen(args, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_as_a_shell_starts_a_job)
    lines: list[str] = []
    first_end = threading.Event()

    def read() -> None:
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if re.match(r"  \[1/6\] pegasos run 0  budget", line):
                first_end.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert first_end.wait(240), "\n".join(lines)
        time.sleep(0.5)  # the worker that finished has taken another run
        limit = max(LIMIT_S, 2 * _seconds_of(command("validate", config)))  # while the workers compute
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"no end 30 s after Ctrl-C ({_signal_state(proc.pid)}):\n" + "\n".join(lines))
        took = time.monotonic() - sent
        assert proc.returncode == 130, "\n".join(lines)
        assert took < limit, f"{took:.1f} s (limit {limit:.1f} s)\n" + "\n".join(lines)
        deadline = time.monotonic() + 30  # room for a loaded machine: a worker left behind computes on
        while time.monotonic() < deadline:  # every worker has gone too
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("a worker outlived the interrupted run")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(5)

    (run_dir,) = (tmp_path / "res" / "stop").iterdir()
    meta = json.loads((run_dir / "meta.json").read_text())
    statuses = [r["status"] for r in meta["runs"]]
    finished, interrupted = statuses.count("budget"), statuses.count("interrupted")
    assert meta["interrupted"] is True and finished >= 1 and 1 <= interrupted <= 2
    assert finished + interrupted == len(statuses) < 6
    counts, folder, resume = interruption(lines, "stop")
    assert counts == (finished, interrupted, 6 - finished - interrupted) and folder == str(run_dir)
    assert resume == (f"{sys.executable} -m sbpbench run {config} --jobs 2 --executor {executor} "
                      f"--results {tmp_path / 'res'} --no-plot --resume-from {run_dir}")
    noise = [line for line in lines if "Traceback" in line or "KeyboardInterrupt" in line or " - WARNING - " in line]
    assert not noise, "\n".join(lines)
