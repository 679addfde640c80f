"""The fixed cost of a short linear run's process, in CPU seconds, stage by stage (issue #48).

The run: ``configs/adult.yaml`` with the linear kernel, C = 1, no bias, DCD to LIBLINEAR's ``eps``
= 0.1 (``scripts/bench_native.py``'s DCD pair), one run, as ``sbpbench run ... -q --no-plot``
runs it. Per repeat, after one uncounted process (numba's, the data and Python's bytecode caches
filled): the whole process's CPU seconds (user and system, GNU time, as
``scripts/bench_native.py`` measures a process) and, in a fresh process that goes through the
same stages (``scripts/bench_memory.py``'s :func:`~bench_memory.staged_run`), the CPU seconds of
each: the interpreter's start, the imports ``sbpbench run`` makes, loading the data, preparing
the problem, the warm-up (numba's compiled functions loaded from its cache), the run, writing
the results. Medians of ``--repeats``. Then, once, ``python -X importtime`` of the whole
process: the import time of each top-level package (wall microseconds, its modules' own times
added), the largest first. Target: 0.6 s of CPU for the process around the run (issue #48:
imports, data, problem, writing results), the whole process's CPU less the run's stage.

Beside it, the libraries' floor (:data:`FLOOR`, a process of its own, measured as the whole):
the interpreter importing what the run cannot do without (numpy, scipy.sparse for the CSR data,
numba for the solver's compiled loop, click and PyYAML for the command line and the config) and
loading one compiled function from numba's cache, whose first load in a process sets up numba's
compiler (its typing and lowering registries, ``numba.np.arraymath`` and through it
``scipy.linalg``, some 0.2 s) whatever the function.

Usage: ``python scripts/bench_fixed_cost.py [--repeats 3] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench_common import load_average, machine_facts, positive, update_section
from bench_memory import ADULT, RUN_STAGE, run_staged
from bench_native import TIME, installed, measure

ROOT = Path(__file__).resolve().parent.parent
TARGET_CPU_S = 0.6
#: ``configs/adult.yaml``'s sections replaced for the linear run.
DCD = {"kernel": {"name": "linear"}, "problem": {"C": 1, "bias": False}, "solvers": [{"name": "dcd", "tol": 0.1}],
       "budget": {"epochs": 1000}, "runs": 1, "checkpoints": {"per_decade": 1, "epochs": False}}
TITLE = "Fixed cost of a short linear run (scripts/bench_fixed_cost.py)"
#: The libraries' floor: a module (written to a temporary folder, so that numba caches its
#: function there) importing what a linear run cannot do without and calling one compiled function,
#: its objects frozen at exit as ``sbpbench``'s are (``sbpbench.cli._frozen_at_exit``).
FLOOR = """
import atexit
import gc

import click, numba, numpy, scipy.sparse, yaml


@numba.njit(cache=True)
def one(x):
    return x + 1


one(1)
atexit.register(gc.freeze)
"""


def run_command(results: Path) -> list[str]:
    """``sbpbench run`` of the linear run (:data:`DCD`), its results under ``results``."""
    sets = [arg for key, value in DCD.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    return [sys.executable, "-m", "sbpbench", "run", str(ADULT), "--results", str(results), "-q", "--no-plot", *sets]


def import_times(text: str) -> Counter[str]:
    """``python -X importtime``'s report: each top-level package's own import times added (µs)."""
    found: Counter[str] = Counter()
    for line in text.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            own, _, name = (cell.strip() for cell in line[len("import time:"):].split("|"))
            found[name.split(".")[0]] += int(own)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive(int), default=3)
    parser.add_argument("--out", default="BENCHMARKS.md")
    args = parser.parse_args()
    if installed(TIME, ["time"]) is None:
        sys.exit("bench_fixed_cost.py: error: GNU time is not installed (Debian: apt-get install time) "
                 "and could not be")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    load_before = load_average()
    whole, staged = [], []
    with tempfile.TemporaryDirectory(prefix="bench-fixed-") as results:
        cmd = run_command(Path(results))
        (Path(results) / "floor.py").write_text(FLOOR)
        floor_cmd = [sys.executable, str(Path(results) / "floor.py")]
        floor = []
        for uncounted in (cmd, floor_cmd):  # fills the caches
            measure(uncounted, cwd=ROOT, env=env)
        for _ in range(args.repeats):
            whole.append(measure(cmd, cwd=ROOT, env=env)[0].cpu_s)
            staged.append(run_staged(DCD)["stages"])
            floor.append(measure(floor_cmd, cwd=ROOT, env=env)[0].cpu_s)
        imports = subprocess.run([sys.executable, "-X", "importtime", *cmd[1:]], cwd=ROOT, env=env,
                                 capture_output=True, text=True)
    if imports.returncode != 0:
        sys.exit(f"bench_fixed_cost.py: error: sbpbench run failed: {imports.stderr.strip().splitlines()[-1:]}")
    cpu = statistics.median(whole)
    names = [stage[0] for stage in staged[0]]
    spent = [statistics.median(run[k][3] - (run[k - 1][3] if k else 0.0) for run in staged) for k in range(len(names))]
    around = cpu - spent[names.index(RUN_STAGE)]
    lines = [
        "A short linear run's process: `configs/adult.yaml` (full Adult) with the linear kernel, C = 1, no bias, DCD "
        "to eps 0.1, one run, `sbpbench run ... -q --no-plot`, after one uncounted process (caches filled). "
        f"Medians of {args.repeats}: the whole process's CPU seconds (GNU time), and in a fresh process going "
        "through the same stages, each stage's CPU seconds. "
        f"Load average (1 min) {load_before:.2f} at the start, {load_average():.2f} at the end, on "
        f"{os.cpu_count()} cores.",
        "",
        "| stage | CPU (s) |",
        "|---|---|",
        *(f"| {name} | {seconds:.3f} |" for name, seconds in zip(names, spent)),
        f"| stages added | {sum(spent):.3f} |",
        f"| whole `sbpbench run` process | {cpu:.3f} |",
        f"| **the process around the run** (the whole less the run's stage) | **{around:.3f}**: "
        f"{'met' if around <= TARGET_CPU_S else 'missed'} ({TARGET_CPU_S} s target) |",
        f"| the libraries' floor (a process importing numpy, scipy.sparse, numba, click and PyYAML and "
        f"loading one compiled function from numba's cache) | {statistics.median(floor):.3f} |",
        "",
        "What the run still imports, and why: numpy (arrays); scipy.sparse (the data are CSR; scipy 1.17's "
        "array-API layer imports numpy.f2py and numpy.testing with it); numba (DCD's compiled loop: the first "
        "compiled function a process loads from numba's cache sets up numba's compiler, importing "
        "`numba.np.arraymath` and through it scipy.linalg); click (the command line); PyYAML (the config); and "
        "sbpbench's modules of a run, which import the module of the run's own solver only (the registry, "
        "`BUILT_IN` in `sbpbench/solvers/base.py`). pandas, matplotlib and scikit-learn are not imported "
        "(`tests/test_run_imports.py`, `tests/test_cli.py`). The libraries' floor above is what a process "
        "with these libraries and one compiled function costs before sbpbench does anything.",
        "",
        "Import time by top-level package (`python -X importtime`, one process, wall milliseconds, each "
        "package's modules' own times added; the largest ten):",
        "",
        "| package | import (ms) |",
        "|---|---|",
        *(f"| {name} | {us / 1000:.0f} |" for name, us in import_times(imports.stderr).most_common(10)),
        "",
        machine_facts(),
    ]
    update_section(args.out, TITLE, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
