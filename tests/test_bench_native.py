"""scripts/bench_native.py: each process measured alone (its own peak, not the benchmark's), svmocas's
own solver time read, a missing tool skipped where it cannot be installed (issue #48)."""

import shutil
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture
def bench_native(monkeypatch):
    """The script as a module (it imports bench_common and authors_sbp from its folder)."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_native

    return bench_native


@pytest.mark.skipif(shutil.which("time") is None, reason="GNU time not installed: apt-get install time")
def test_a_small_process_peak_is_its_own_not_the_benchmark_s(bench_native):
    """A process forked from the benchmark (numpy imported, 30+ MiB) would report the benchmark's
    memory as its peak; under GNU time a shell's peak is a few MiB."""
    import numpy as np

    ballast = np.ones(50 * 2**20 // 8)  # 50 MiB in this process
    found, out = bench_native.measure(["sh", "-c", "echo hello"])
    assert out == "hello\n"
    assert found.peak_mb < 20 < ballast.nbytes / 2**20
    assert found.wall_s > 0 and found.cpu_s >= 0


@pytest.mark.skipif(shutil.which("time") is None, reason="GNU time not installed: apt-get install time")
def test_a_failing_process_is_one_line_naming_it(bench_native):
    with pytest.raises(SystemExit, match="sh exited 3: gone"):
        bench_native.measure(["sh", "-c", "echo gone >&2; exit 3"])


@pytest.mark.skipif(shutil.which("time") is None, reason="GNU time not installed: apt-get install time")
def test_a_native_solver_time_is_the_process_less_the_process_stopping_at_once(bench_native):
    found = bench_native.stopped_at_once([sys.executable, "-c", "import time; time.sleep(0.5)"],
                                         [sys.executable, "-c", "pass"])()
    assert 0.3 < found.solver_s < found.wall_s


def test_svmocas_own_solver_time_is_read(bench_native):
    out = "Timing statistics:\n   load_time      : 0.038366[s]\n   ocas_time      : 0.175017[s]\n"
    assert bench_native.ocas_time(out) == pytest.approx(0.175017)
    assert bench_native.ocas_time("no timing") != bench_native.ocas_time("no timing")  # NaN


def test_two_processes_add_their_times_and_keep_the_larger_peak(bench_native):
    first, second = bench_native.Measure(1.0, 0.5, 30.0), bench_native.Measure(2.0, 1.5, 20.0, 1.25)
    assert (first + second) == bench_native.Measure(3.0, 2.0, 30.0, 1.25)


def test_a_missing_tool_is_none_where_it_cannot_be_installed(bench_native, monkeypatch):
    monkeypatch.setattr(bench_native.os, "geteuid", lambda: 1000)  # not root: nothing is installed
    assert bench_native.installed("no-such-native-tool", ["no-such-package"]) is None
