"""scripts/bench_vs_libsvm.py refuses a missing w8a before any of its work, and times LIBSVM's own
svm-train where it is installed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sbpbench.solvers.contract import make_problem

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_vs_libsvm.py"


def test_without_w8a_it_is_one_error_line_before_any_work(tmp_path):
    """The linear part needs $SBPBENCH_MIRROR/w8a: checked before the minutes of the kernel part."""
    out = tmp_path / "BENCHMARKS.md"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True,
                          env={**os.environ, "SBPBENCH_MIRROR": str(tmp_path)}, timeout=120)
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.count("\n") == 1 and str(tmp_path / "w8a") in done.stderr


@pytest.fixture
def bench_vs_libsvm(monkeypatch):
    """The script as a module (it imports bench_common from its folder)."""
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import bench_vs_libsvm

    return bench_vs_libsvm


@pytest.mark.skipif(shutil.which("svm-train") is None, reason="svm-train not installed: apt-get install libsvm-tools")
def test_native_svm_train_is_timed_on_a_small_biased_problem(bench_vs_libsvm):
    assert bench_vs_libsvm.native_libsvm(make_problem("gaussian", True)) > 0.0


@pytest.mark.skipif(shutil.which("liblinear-train") is None,
                    reason="liblinear-train not installed: apt-get install liblinear-tools")
def test_native_liblinear_train_is_timed_on_a_small_problem(bench_vs_libsvm):
    problem = make_problem("linear", False)
    assert bench_vs_libsvm.native_liblinear(problem.kernel.X, problem.y, 1.0, 0.01) > 0.0


def test_without_the_native_tools_there_is_no_native_time(bench_vs_libsvm):
    problem = make_problem("gaussian", True)
    assert bench_vs_libsvm.native_libsvm(problem, "no-such-svm-train") is None
    assert bench_vs_libsvm.native_liblinear(problem.kernel.X, problem.y, 1.0, 0.01, "no-such-train") is None
