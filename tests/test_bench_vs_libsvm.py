"""scripts/bench_vs_libsvm.py refuses a missing w8a before any of its work."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_vs_libsvm.py"


def test_without_w8a_it_is_one_error_line_before_any_work(tmp_path):
    """The linear part needs $SBPBENCH_MIRROR/w8a: checked before the minutes of the kernel part."""
    out = tmp_path / "BENCHMARKS.md"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True,
                          env={**os.environ, "SBPBENCH_MIRROR": str(tmp_path)}, timeout=120)
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.count("\n") == 1 and str(tmp_path / "w8a") in done.stderr
