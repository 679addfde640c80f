"""Time of one unbiased SBP iteration on full Adult, with its breakdown.

The SBP paper's setting for Adult (Table 2: sigma^2 = 10, nu = 1.1e-2, no bias), the
kernel row cache off (every iteration computes its row; the cache would only hide work).
The solver first runs ``--warmup`` iterations, so that the responses and the water level
are those of a real run; then

* ``iteration``: ``SBP.advance`` over ``--iterations`` more iterations (wall and CPU time
  of this process);
* its parts, each timed alone on the state reached: the kernel row (``Kernel.row``), the
  water level (the full selection of Algorithm 2, and the windowed one the solver uses),
  sampling below the level, and the fused response and running-sum update
  (``_add_row``); what remains of an iteration (Python and numba dispatch, step size,
  projection by the global scale) is the difference.

Then the share of a run's wall time spent measuring: one epoch of SBP on full Adult through
the runner (checkpoints ten per decade and at the epoch's end, test error on all 16281
test points at each), with the current measurement path and with the bit-set decision
path switched off (the blocked products with ``exp`` of before).

Times are best-of-``--repeats``; the machine's load average is printed with them (the
machine may be shared: a parallel region waits for its slowest thread, so numba threads
are used only for rows with enough work, see ``PARALLEL_MIN_WORK`` in sbpbench/kernels.py).

Usage: ``python scripts/bench_sbp_iteration.py [--iterations 3000] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np

from bench_common import load_average, machine_facts, update_section
from sbpbench import config
from sbpbench.data import DatasetSpec, load
from sbpbench.kernels import Kernel, KernelSpec
from sbpbench.runner import prepare, run_one
from sbpbench.problem import Problem
from sbpbench.solvers.sbp import SBP, _add_row
from sbpbench.solvers.waterlevel import sample_below, water_level, water_level_near

TARGET_MS = 0.3


def per_call(fn, calls: int, repeats: int) -> tuple[float, float]:
    """(wall, CPU) milliseconds per call of ``fn``, best of ``repeats`` rounds of ``calls`` calls."""
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        for _ in range(calls):
            fn()
        wall.append((time.perf_counter() - w) / calls * 1e3)
        cpu.append((time.process_time() - c) / calls * 1e3)
    return min(wall), min(cpu)


def measure(iterations: int, warmup: int, repeats: int) -> dict:
    """Time SBP on full Adult; returns the parts in milliseconds per iteration."""
    train, test = load(DatasetSpec(name="adult"), np.random.default_rng(0))
    problem = Problem.build(train, test, KernelSpec("gaussian", 10.0, cache_mb=0), 1.0 / train.n, 1.1e-2, False)
    kernel = problem.kernel
    solver = SBP(problem, np.random.default_rng(0))
    solver.advance(warmup, np.inf, np.inf)
    parts = {}
    rounds = []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        solver.advance(solver.iteration + iterations, np.inf, np.inf)
        rounds.append(((time.perf_counter() - w) / iterations * 1e3, (time.process_time() - c) / iterations * 1e3))
    parts["iteration"] = min(rounds)
    rng = np.random.default_rng(1)
    calls = max(50, iterations // 10)
    parts["kernel row"] = per_call(lambda: kernel.row(int(rng.integers(kernel.n))), calls, repeats)
    volume = solver.volume / solver.s
    buf = np.empty(kernel.n)
    parts["water level, full selection"] = per_call(lambda: water_level(solver.ct, volume, buf), calls, repeats)
    gamma, below = water_level(solver.ct, volume, buf)
    width = solver._width
    parts["water level, windowed (used)"] = per_call(
        lambda: water_level_near(solver.ct, volume, gamma, width, buf), calls, repeats)
    parts["sampling below the level"] = per_call(lambda: sample_below(solver.ct, gamma, below, rng), calls, repeats)
    ct, acc, row = solver.ct.copy(), solver.acc_c.copy(), kernel.row(0)
    parts["response + running-sum update"] = per_call(lambda: _add_row(ct, acc, problem.y, row, 1e-3, 2.0), calls, repeats)
    used = ("kernel row", "water level, windowed (used)", "sampling below the level", "response + running-sum update")
    parts["rest (Python, dispatch, step, scale)"] = tuple(
        parts["iteration"][k] - sum(parts[p][k] for p in used) for k in range(2))
    return {"parts": parts, "n": kernel.n, "window": width, "inside": water_level_near(solver.ct, volume, gamma, width, buf)[2]}


def measuring_share(epochs: float) -> dict[str, tuple[float, float, int]]:
    """(wall s, training s, checkpoints) of an SBP run on full Adult, with each measurement path."""
    exp = config.parse({"name": "share", "dataset": {"name": "adult"}, "kernel": {"name": "gaussian", "sigma2": 10},
                        "problem": {"nu": 1.1e-2}, "solvers": ["sbp"], "budget": {"epochs": epochs}},
                       "bench_sbp_iteration.py")
    problem = prepare(exp).problem
    found = {}
    for label, bit_sets in (("bit-set decision path", True), ("blocked products + exp", False)):
        original = Kernel._binary_points
        if not bit_sets:
            Kernel._binary_points = lambda self, Z: None
        try:
            t0 = time.perf_counter()
            rows = run_one(exp, problem, exp.solvers[0], 0).rows
            found[label] = (time.perf_counter() - t0, rows[-1]["train_time_s"], len(rows))
        finally:
            Kernel._binary_points = original
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3000, help="iterations timed per round")
    parser.add_argument("--warmup", type=int, default=3000, help="iterations run before timing")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the best is reported")
    parser.add_argument("--epochs", type=float, default=1.0, help="epochs of the measuring-share run")
    parser.add_argument("--out", default="BENCHMARKS.md", help="report to update")
    args = parser.parse_args()
    load_before = load_average()
    result = measure(args.iterations, args.warmup, args.repeats)
    share = measuring_share(args.epochs)
    load_after = load_average()
    it_wall, it_cpu = result["parts"]["iteration"]
    lines = [
        f"One unbiased SBP iteration on full Adult (n = {result['n']}, sigma^2 = 10, nu = 1.1e-2, row cache off),",
        f"numba threads: {numba.get_num_threads()}; best of {args.repeats} rounds of {args.iterations} iterations after "
        f"{args.warmup} warm-up iterations. Load average (1 min) {load_before:.2f} before, {load_after:.2f} after "
        f"on {os.cpu_count()} cores: wall time on a loaded machine exceeds CPU time.",
        "",
        "| part | wall ms / iteration | CPU ms / iteration |",
        "|---|---|---|",
    ]
    for name, (wall, cpu) in result["parts"].items():
        lines.append(f"| {name} | {wall:.4f} | {cpu:.4f} |")
    verdict = "meets" if it_wall <= TARGET_MS else f"misses by {it_wall / TARGET_MS:.2f}x (CPU time {it_cpu:.3f} ms)"
    lines += ["", f"Target {TARGET_MS} ms per iteration: {verdict}. The windowed water level's window held "
              f"{result['inside']} of {result['n']} responses at the end.", "",
              f"Share of wall time spent measuring, SBP on full Adult for {args.epochs:g} epoch(s) through the runner:",
              "", "| test-error path | wall (s) | training (s) | checkpoints | measuring share |", "|---|---|---|---|---|"]
    for label, (wall, train, checkpoints) in share.items():
        lines.append(f"| {label} | {wall:.1f} | {train:.1f} | {checkpoints} | {(wall - train) / wall:.0%} |")
    lines += ["", machine_facts()]
    text = "\n".join(lines)
    print(text)
    update_section(args.out, "SBP iteration (scripts/bench_sbp_iteration.py)", text)


if __name__ == "__main__":
    main()
