"""Workers do not outlive a client killed with SIGKILL (``--jobs 2``: the processes and the resource tracker)."""

import os
import signal
import subprocess
import time

import pytest

from tests.cli_runner import command, environment
from tests.experiments import write_adult_config

psutil = pytest.importorskip("psutil")




def workers_of(client) -> list:
    """The client's pool workers: spawned processes that have run their initializer (a second thread)."""
    found = []
    for child in client.children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()) and child.num_threads() >= 2:
                found.append(child)
        except psutil.Error:
            pass
    return found


def test_workers_exit_when_the_client_is_killed(tmp_path):
    path = write_adult_config(tmp_path, "long", n_train=3000, n_test=500, budget={"epochs": 50}, runs=4)
    args = command("run", path, "--jobs", "2", "--results", tmp_path / "res", "--no-plot", "-q")
    proc = subprocess.Popen(args, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = psutil.Process(proc.pid)
    children = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and len(workers_of(client)) < 2:
            time.sleep(0.1)
        assert len(workers_of(client)) == 2, "the workers did not start"
        time.sleep(1.0)  # let them work on their runs
        children = client.children(recursive=True)  # the workers and multiprocessing's resource tracker
        assert proc.poll() is None, "the run ended before the client could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        # each worker checks its parent every 0.5 s (executors.WATCHDOG_INTERVAL_S); 30 s is room
        # for a loaded machine
        gone, alive = psutil.wait_procs(children, timeout=30)
        assert not alive, [" ".join(p.cmdline()) for p in alive]
    finally:
        for child in children:
            try:
                child.kill()
            except psutil.Error:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
