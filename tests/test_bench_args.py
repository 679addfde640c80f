"""The benchmark scripts refuse counts that are not positive: one line, exit 2, nothing written."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("script, argument", [
    ("bench_sbp_iteration.py", ["--repeats", "0"]),
    ("bench_sbp_iteration.py", ["--iterations", "-5"]),
    ("bench_sbp_iteration.py", ["--epochs", "nan"]),
    ("bench_kernels.py", ["--rows", "0"]),
    ("bench_figure2.py", ["--jobs", "two"]),
    ("bench_short_run.py", ["--repeats", "0"]),
    ("bench_native.py", ["--repeats", "0"]),
    ("bench_native.py", ["--smo-n", "-1"]),
    ("bench_fixed_cost.py", ["--repeats", "0"]),
])
def test_a_count_that_is_not_positive_is_refused_before_anything_runs(tmp_path, script, argument):
    out = tmp_path / "BENCHMARKS.md"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *argument, "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert "expected a positive" in lines[-1] and argument[0] in lines[-1]
    assert not out.exists()
