"""The first checkpoint's training time in a fresh process, with and without the runner's warm-up.

numba compiles a solver's loops on their first call (from its on-disk cache after the first
time: a load), and before issue #13 that landed in the first checkpoint's ``train_time_s``.
``tests/test_timing.py`` checks that no compilation starts inside the clock now; this script
says what that is worth, and what the warm-up costs.

Problem: ``configs/adult.yaml`` (full Adult, sigma^2 = 10, lambda = 1/n, nu = 0.011, no
bias), the kernel solvers of Figure 2. Every measurement is a fresh process (``--child``)
through the runner (:func:`sbpbench.execution.loop.run_one`), with numba's cache in a new
empty folder, and again with the cache that process filled (the usual case: every process
after the first one since an install). Per solver it gives the warm-up's time (timed alone,
before the run), the first checkpoint's ``train_time_s`` of the process's first run of the
solver and of a second run in the same process (nothing left to compile). Without warm-up is
the runner as it was before: :meth:`~sbpbench.execution.loop.WarmUps.warm_up` and the
kernel's loading of its row loops replaced by nothing.

Usage: ``python scripts/bench_first_run.py [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_common import load_average, machine_facts, update_section

from sbpbench.execution import loop


class NoWarmUp(loop.WarmUps):
    """The runner before issue #13: a record that has warmed up everything (its
    :meth:`~sbpbench.execution.loop.WarmUps.warm_up` does nothing, whatever it is given)."""

    def warm_up(self, problem: Any, spec: Any, seconds: float = math.inf, notice: Any = None) -> None:
        return None


CONFIG = Path(__file__).resolve().parent.parent / "configs" / "adult.yaml"
#: Figure 2's kernel solvers.
SOLVERS = ("sbp", "pegasos", "sdca", "perceptron", "smo")


def child(warm_up: bool) -> dict:
    """Build the problem and run each solver twice, the first after its warm-up (timed alone)."""
    from sbpbench.experiment import config
    from sbpbench.experiment.assemble import prepare

    warm_ups = loop.WarmUps() if warm_up else NoWarmUp()  # without: the runner before issue #13
    # to the first checkpoint and a little beyond (one kernel row of full Adult is 32561 evaluations)
    exp = config.load(CONFIG, [f"solvers=[{', '.join(SOLVERS)}]", "budget={kernel_evals: 100000}"])
    t0 = time.perf_counter()
    problem = prepare(exp).problem
    facts: dict = {"prepare_s": time.perf_counter() - t0, "n": problem.n}
    for spec in exp.solvers:
        t0, cpu0 = time.perf_counter(), time.process_time()
        warm_ups.warm_up(problem, spec)
        warm, warm_cpu = time.perf_counter() - t0, time.process_time() - cpu0
        first, second = (first_time(loop.run_one(exp, problem, spec, run, warm_ups=warm_ups)) for run in (0, 1))
        facts[spec.name] = {"warm_up_s": warm, "warm_up_cpu_s": warm_cpu, "first_s": first, "second_s": second}
    return facts


def first_time(result: Any) -> float:
    """The first checkpoint's ``train_time_s`` of a run (a :class:`~sbpbench.execution.loop.RunResult`);
    a run that failed ends the child with its status."""
    if not result.rows:
        sys.exit(f"{result.summary['solver']}: the run has no checkpoint: {result.summary['status']}")
    return float(result.rows[0]["train_time_s"])


def measure(warm_up: bool, cache: str) -> dict:
    """One fresh process with numba's cache in ``cache``; its facts."""
    args = [sys.executable, __file__, "--child", "warm-up" if warm_up else "none"]
    done = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache})
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"bench_first_run.py: error: the child process failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="BENCHMARKS.md")
    parser.add_argument("--child", choices=("warm-up", "none"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child == "warm-up")))
        return
    load_before = load_average()
    found = {}
    for warm_up in (False, True):
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            for state in ("empty", "warm"):  # the second process finds what the first compiled
                found[warm_up, state] = measure(warm_up, cache)
                print(f"warm-up {warm_up}, {state} cache: done", flush=True)
    n = found[True, "empty"]["n"]
    lines = [
        f"First checkpoint of a fresh process's first run: `configs/adult.yaml` (full Adult, n = {n}, "
        "Gaussian sigma^2 = 10, lambda = 1/n, nu = 0.011), through the runner. Per numba cache (an empty "
        "folder, then the one that process filled), one fresh process runs the runner as it was before "
        "issue #13, without warm-up, and one the runner as it is; the times are the first checkpoint's "
        "`train_time_s` (one iteration, or the first with a kernel evaluation) of the process's first and "
        "second run of the solver, and the warm-up's time, taken alone before them (it counts in no "
        "`train_time_s`), in seconds and in CPU seconds (what it costs on a shared machine). Load average "
        f"(1 min) {load_before:.2f} at the start on 2 cores.",
        "",
        "| solver | numba cache | without warm-up: first run (s) | warm-up (s) | warm-up (CPU s) | first run (s) "
        "| second run (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for state in ("empty", "warm"):
        for solver in SOLVERS:
            old, new = found[False, state][solver], found[True, state][solver]
            lines.append(f"| {solver} | {state} | {old['first_s']:.4f} | {new['warm_up_s']:.4f} | "
                         f"{new['warm_up_cpu_s']:.2f} | {new['first_s']:.4f} | {new['second_s']:.4f} |")
    lines += [
        "",
        "Loading the data and building the problem took "
        + ", ".join(f"{found[w, s]['prepare_s']:.2f} s ({'with' if w else 'without'} warm-up, {s} cache)"
                    for w in (False, True) for s in ("empty", "warm")) + ".",
        "",
        machine_facts(),
    ]
    update_section(args.out, "First run of a process (scripts/bench_first_run.py)", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
