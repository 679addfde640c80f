"""Time of one SBP iteration on full Adult, without and with a bias, with its breakdown.

Without a bias: the SBP paper's setting for Adult (Table 2: sigma^2 = 10, nu = 1.1e-2),
the setting of the iteration targets (:data:`TARGET_MS`). With a bias: the setting of the LIBSVM comparison
(sigma^2 = 100, lambda = 1/(100 n), nu derived from lambda). The kernel row cache is off
(every iteration computes its row; the cache would only hide work). The solver first runs
``--warmup`` iterations, so that the responses and the water level are those of a real
run; then

* ``iteration``: ``SBP.advance`` over ``--iterations`` more iterations (wall and CPU time
  of this process), best of ``--repeats`` rounds (many short rounds: on a shared machine
  the best of a few long ones still holds a neighbour's bursts);
* its parts, from one more round in which every compiled call of the iteration and
  ``Kernel.row`` (``Kernel.row_blocks``) is timed where it runs (:class:`PartTimer`): the
  kernel row, and with a bias the water level, sampling from p*, and the fused response and
  running-sum update; without a bias these are one compiled call, whose update pass computes
  the row's values (bit sets without a row cache, ``Kernel.row_blocks``), so the row's own
  line holds only the handing out of its block source. The rest (Python and numba dispatch,
  with a bias the step size and projection by the global scale) is the difference;
* the memory bound (:func:`iteration_bound`), and a tighter one without the row written
  and read back, which the fused pass does not do (:func:`fused_bound`);
* the unbiased iteration again while another process keeps a core busy, as SBP picks its
  threads and on one thread (:func:`mean_with_a_busy_core`): means over all rounds, since a
  parallel region that waits for a descheduled thread is what a loaded machine costs.

Then the share of a run's wall time spent measuring: one epoch of SBP on full Adult through
the runner (checkpoints ten per decade and at the epoch's end, test error on all 16281
test points at each), with the current measurement path and with the bit-set decision
path switched off (the blocked products with ``exp`` of before).

The machine's load average is printed with the times (the
machine may be shared: a parallel region waits for its slowest thread, so numba threads
are used only for rows with enough work, see ``PARALLEL_MIN_WORK`` in sbpbench/kernels/kernel.py).

Usage: ``python scripts/bench_sbp_iteration.py [--iterations 1000] [--repeats 15] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import timeit

import numba
import numpy as np
from bench_common import load_average, machine_facts, positive, update_section, update_target
from bench_kernels import best_of, parallel_stream_seconds, stream_seconds

from sbpbench.data import DatasetSpec, load
from sbpbench.execution.loop import run_one
from sbpbench.experiment import config
from sbpbench.experiment.assemble import prepare
from sbpbench.kernels import KernelSpec
from sbpbench.kernels.storage import BitSets
from sbpbench.problem import Problem
from sbpbench.solvers import sbp as sbp_module
from sbpbench.solvers.sampling import UniformIndex
from sbpbench.solvers.sbp import SBP

TARGET_MS = 0.13
#: The biased iteration's target (ms), and how close to its memory bound the unbiased one must be.
TARGET_BIAS_MS = 0.12
BOUND_FACTOR = 2.0
#: nu of the biased Adult problem (sigma^2 = 100, lambda = 1/(100 n)) derived from lambda,
#: as ``nu: from_lambda`` gives it (configs/sbp-libsvm-adult.yaml), fixed here so that no
#: optimum is computed.
BIASED_NU = 1.367e-3


#: The line of the unbiased iteration, one compiled call besides its kernel row (and the first
#: sample of each step).
COMPILED_PART = ("no bias: the compiled iteration (water level in the gathered window, sampling from p*, response "
                 "+ running-sum update with the kernel row computed in it)")
#: The compiled calls an SBP iteration makes (looked up in sbpbench.solvers.sbp), by part.
PARTS = {
    "water level (with a bias: a selection in the gathered windows; a second pass, rarely the full selection, when "
    "the level leaves them)":
        ("level_from_windows", "water_level_bias_near", "water_level_bias", "count_below"),
    "sampling from p*": ("nth_lowest_in_class",),
    "response + running-sum update, gathering the next windows":
        ("add_row_and_sum", "class_window_centers", "update_and_class_windows"),
    COMPILED_PART: ("_sample_plain", "_redraw"),
}
#: The line of the kernel row's own time.
ROW_PART = "kernel row (no bias: handing out its block source)"


class PartTimer:
    """Times the compiled calls of SBP's iteration and ``Kernel.row`` where they run, inside the loop.

    Timing a part alone, on the same arrays over and over, flatters it: the branch predictor
    learns the pattern of a repeated pass (the biased level's pass took 0.04 ms alone and
    0.2 ms in the loop). Each call is wrapped with a clock instead (about 0.1 microsecond).
    """

    def __init__(self, kernel, solver):
        self.kernel = kernel
        self.solver = solver
        self.seconds = dict.fromkeys([*PARTS, ROW_PART], 0.0)
        self._saved = []

    def _wrap(self, owner, name, part):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - t0

        self._saved.append((owner, name, original))
        setattr(owner, name, timed)

    def __enter__(self):
        for part, names in PARTS.items():
            for name in names:
                self._wrap(sbp_module, name, part)
        self._wrap(self.kernel, "row", ROW_PART)
        self._wrap(self.kernel, "row_blocks", ROW_PART)
        if self.solver._pass is not None:
            self._wrap(self.solver, "_pass", COMPILED_PART)  # the unbiased iteration SBP picked when it was made
        return self

    def __exit__(self, *exc):
        for owner, name, original in reversed(self._saved):
            if owner is self.kernel:
                delattr(owner, name)  # back to the class's method
            else:
                setattr(owner, name, original)
        self._saved.clear()


def adult_problem(bias: bool) -> Problem:
    """Full Adult, row cache off: unbiased in Figure 2's setting, biased in the LIBSVM comparison's."""
    train, test = load(DatasetSpec(name="adult"), np.random.default_rng(0))
    sigma2, lam, nu = (100.0, 1.0 / (100 * train.n), BIASED_NU) if bias else (10.0, 1.0 / train.n, 1.1e-2)
    return Problem.build(train, test, KernelSpec("gaussian", sigma2, cache_mb=0), lam, nu, bias)


def timed_rounds(problem: Problem, iterations: int, warmup: int, repeats: int) -> tuple[SBP, list[tuple[float, float]]]:
    """A new SBP on ``problem`` (its update pass picked for numba's threads now) after ``warmup``
    iterations, and the wall and CPU milliseconds per iteration of each of ``repeats`` rounds."""
    solver = SBP(problem, np.random.default_rng(0))
    solver.advance(warmup, np.inf, np.inf)
    rounds = []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        solver.advance(solver.iteration + iterations, np.inf, np.inf)
        rounds.append(((time.perf_counter() - w) / iterations * 1e3, (time.process_time() - c) / iterations * 1e3))
    return solver, rounds


def on_threads(count: int, fn):
    """``fn()`` with numba's thread count set to ``count`` (restored after)."""
    threads = numba.get_num_threads()
    numba.set_num_threads(count)
    try:
        return fn()
    finally:
        numba.set_num_threads(threads)


def measure(bias: bool, iterations: int, warmup: int, repeats: int) -> dict:
    """Time SBP on full Adult (unbiased: Figure 2's setting; biased: the LIBSVM comparison's).

    Returns the iteration's wall and CPU milliseconds (best of ``repeats`` rounds, no
    instrumentation), the same on one thread, and, from one more instrumented round, the
    milliseconds per iteration of each part and of the rest (Python, numba dispatch, step
    size, scale).
    """
    problem = adult_problem(bias)
    solver, rounds = timed_rounds(problem, iterations, warmup, repeats)
    _, alone = on_threads(1, lambda: timed_rounds(problem, iterations, warmup, repeats))
    with PartTimer(problem.kernel, solver) as timer:
        t0 = time.perf_counter()
        solver.advance(solver.iteration + iterations, np.inf, np.inf)
        total = time.perf_counter() - t0
    parts = {name: seconds / iterations * 1e3 for name, seconds in timer.seconds.items()}
    parts["rest (Python, numba dispatch, step size, scale)"] = (total - sum(timer.seconds.values())) / iterations * 1e3
    return {"iteration": min(rounds), "mean": float(np.mean([wall for wall, _ in rounds])), "one thread": min(alone),
            "parts": parts, "instrumented": total / iterations * 1e3, "n": problem.n,
            "bound": 1e3 * iteration_bound(problem.kernel), "fused bound": 1e3 * fused_bound(problem.kernel),
            "threaded bound": 1e3 * fused_bound(problem.kernel, threaded=True)}


def mean_with_a_busy_core(iterations: int, warmup: int, repeats: int) -> dict[int, float]:
    """Mean milliseconds of the unbiased iteration over all ``repeats`` rounds (waits for a core
    count) while another process keeps a core busy (a pure-Python loop), with numba's threads as
    SBP picks them and on one thread; keyed by numba's thread count."""
    problem = adult_problem(False)
    means = {}
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for count in (numba.get_num_threads(), 1):
            _, rounds = on_threads(count, lambda: timed_rounds(problem, iterations, warmup, repeats))
            means[count] = float(np.mean([wall for wall, _ in rounds]))
    finally:
        busy.kill()
        busy.wait()
    return means


@numba.njit(cache=True)
def _update_pass(ct, acc, row, step, P):
    """The least an iteration's update must do: read the row, the responses and their running
    sum, write the two back (``c~ += step row``, ``acc += P step row``)."""
    for j in range(ct.shape[0]):
        d = step * row[j]
        ct[j] += d
        acc[j] += P * d


@numba.njit(cache=True)
def _update_pass_rowless(ct, acc, step, P):
    """:func:`_update_pass` without a row to read (what is left of it when the row is computed in the pass)."""
    for j in range(ct.shape[0]):
        d = step * ct[j]
        ct[j] += d
        acc[j] += P * d


def iteration_bound(kernel) -> float:
    """Seconds an iteration's memory traffic takes at streaming speed, one thread: a read of the
    bytes the kernel row reads plus writing the row (:func:`bench_kernels.stream_seconds`), and
    one pass over the row, the responses and their running sum (:func:`_update_pass`)."""
    n = kernel.n
    ct, acc, row = np.zeros(n), np.zeros(n), np.ones(n)
    _update_pass(ct, acc, row, 1e-3, 2.0)
    return stream_seconds(kernel) + best_of(lambda: _update_pass(ct, acc, row, 1e-3, 2.0), repeats=7)


@numba.njit(cache=True, parallel=True)
def _update_pass_rowless_threaded(ct, acc, step, P, chunks):
    """:func:`_update_pass_rowless` split into ``chunks`` pieces over numba's threads."""
    n = ct.shape[0]
    for t in numba.prange(chunks):
        _update_pass_rowless(ct[t * n // chunks:(t + 1) * n // chunks], acc[t * n // chunks:(t + 1) * n // chunks],
                             step, P)


def fused_bound(kernel, threaded: bool = False) -> float:
    """:func:`iteration_bound` without the row written and read back: a read of the bytes the
    kernel row reads (:func:`bench_kernels.stream_seconds` without its write) and one pass
    over the responses and their running sum (:func:`_update_pass_rowless`); ``threaded``:
    both split over numba's threads (no slower than on one: see
    :func:`bench_kernels.parallel_stream_seconds`)."""
    n = kernel.n
    ct, acc = np.zeros(n), np.zeros(n)
    one = stream_seconds(kernel, write_row=False) + best_of(lambda: _update_pass_rowless(ct, acc, 1e-3, 2.0),
                                                              repeats=7)
    if not threaded:
        return one
    chunks = numba.get_num_threads()
    _update_pass_rowless_threaded(ct, acc, 1e-3, 2.0, chunks)
    every = (parallel_stream_seconds(kernel, write_row=False)
             + best_of(lambda: _update_pass_rowless_threaded(ct, acc, 1e-3, 2.0, chunks), repeats=7))
    return min(one, every)


def draw_microseconds(draws: int = 100_000) -> tuple[float, float]:
    """Microseconds of one draw from p*'s bound (~ n nu on Adult): ``int(rng.integers(m))`` and
    :class:`~sbpbench.solvers.sampling.UniformIndex` (the same numbers), best of 3."""
    rng, fast = np.random.default_rng(0), UniformIndex(np.random.default_rng(0))
    times = [min(timeit.repeat(lambda f=f: f(358), number=draws, repeat=3)) / draws * 1e6
             for f in (lambda m: int(rng.integers(m)), fast)]
    return times[0], times[1]


def measuring_share(epochs: float) -> dict[str, tuple[float, float, int]]:
    """(wall s, training s, checkpoints) of an SBP run on full Adult, with each measurement path."""
    exp = config.parse({"name": "share", "dataset": {"name": "adult"}, "kernel": {"name": "gaussian", "sigma2": 10},
                        "problem": {"nu": 1.1e-2}, "solvers": ["sbp"], "budget": {"epochs": epochs}},
                       "bench_sbp_iteration.py")
    problem = prepare(exp).problem
    found = {}
    for label, bit_sets in (("bit-set decision path", True), ("blocked products + exp", False)):
        original = BitSets.points
        if not bit_sets:
            BitSets.points = lambda self, Z: None  # type: ignore[method-assign]
        try:
            t0 = time.perf_counter()
            rows = run_one(exp, problem, exp.solvers[0], 0).rows
            found[label] = (time.perf_counter() - t0, rows[-1]["train_time_s"], len(rows))
        finally:
            BitSets.points = original  # type: ignore[method-assign]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=positive(int), default=1000, help="iterations timed per round")
    parser.add_argument("--warmup", type=positive(int), default=3000, help="iterations run before timing")
    parser.add_argument("--repeats", type=positive(int), default=15, help="rounds; the best is reported")
    parser.add_argument("--epochs", type=positive(float), default=1.0, help="epochs of the measuring-share run")
    parser.add_argument("--out", default="BENCHMARKS.md", help="report to update")
    args = parser.parse_args()
    load_before = load_average()
    results = {bias: measure(bias, args.iterations, args.warmup, args.repeats) for bias in (False, True)}
    busy = mean_with_a_busy_core(args.iterations, args.warmup, args.repeats)
    share = measuring_share(args.epochs)
    load_after = load_average()
    plain, biased = results[False], results[True]
    lines = [
        f"One SBP iteration on full Adult (n = {plain['n']}, row cache off, numba threads: "
        f"{numba.get_num_threads()}): without a bias in Figure 2's setting (sigma^2 = 10, nu = 1.1e-2), and with "
        f"a bias in the LIBSVM comparison's (sigma^2 = 100, nu = {BIASED_NU:g}). Best of {args.repeats} rounds of "
        f"{args.iterations} iterations after {args.warmup} warm-up iterations; then one more round with every part "
        f"timed where it runs (see `PartTimer`). Load average (1 min) {load_before:.2f} before, "
        f"{load_after:.2f} after on {os.cpu_count()} cores.",
        "",
        "| part | no bias: ms / iteration | bias: ms / iteration |",
        "|---|---|---|",
        f"| iteration, wall | {plain['iteration'][0]:.4f} | {biased['iteration'][0]:.4f} |",
        f"| iteration, CPU | {plain['iteration'][1]:.4f} | {biased['iteration'][1]:.4f} |",
        f"| iteration, wall, numba's threads set to one | {plain['one thread'][0]:.4f} "
        f"| {biased['one thread'][0]:.4f} |",
        f"| iteration, instrumented round | {plain['instrumented']:.4f} | {biased['instrumented']:.4f} |",
    ]
    for name in plain["parts"]:  # a part that one mode's iteration does not have (never timed): a dash
        shown = [f"{ms:.4f}" if ms else "-" for ms in (plain["parts"][name], biased["parts"][name])]
        lines.append(f"| {name} | {shown[0]} | {shown[1]} |")
    lines.append(f"| memory bound: the row's bytes and one update pass at streaming speed | {plain['bound']:.4f} "
                 f"| {biased['bound']:.4f} |")
    lines.append(f"| the same without the row written and read back (what a pass computing the row must move) "
                 f"| {plain['fused bound']:.4f} | {biased['fused bound']:.4f} |")
    lines.append(f"| ... with the reads and the pass split over numba's threads "
                 f"| {plain['threaded bound']:.4f} | {biased['threaded bound']:.4f} |")
    it_wall, bound = plain["iteration"][0], plain["bound"]
    met = it_wall <= TARGET_MS and it_wall <= BOUND_FACTOR * bound
    load = max(load_before, load_after)
    update_target(args.out, "sbp-iteration", f"{it_wall:.4f} ms, {it_wall / bound:.2f}x its memory bound "
                  f"({bound:.4f} ms); load {load:.2f}", met)
    bias_wall = biased["iteration"][0]
    update_target(args.out, "sbp-iteration-bias", f"{bias_wall:.4f} ms ({bias_wall / biased['bound']:.2f}x its "
                  f"memory bound); load {load:.2f}", bias_wall <= TARGET_BIAS_MS)
    threads = numba.get_num_threads()
    lines += ["", f"Unbiased, the mean of all {args.repeats} rounds (a thread that waits for a core counts): "
              f"{plain['mean']:.4f} ms as above; with another process keeping a core busy (a pure-Python loop), "
              f"{busy[threads]:.4f} ms with numba's {threads} threads as SBP picks them (it keeps to one thread "
              f"while threads are slower, `sbpbench/threads.py`) and {busy[1]:.4f} ms on one thread."]
    numpy_us, ours_us = draw_microseconds()
    lines += ["", f"One draw of an index below the level (358 candidates): numpy's `rng.integers` "
              f"{numpy_us:.2f} us, `UniformIndex` (the same numbers) {ours_us:.2f} us."]
    lines += ["", f"Targets: unbiased iteration at most {TARGET_MS} ms and {BOUND_FACTOR:g}x its memory bound: "
              f"{'met' if met else 'missed'}; biased at most {TARGET_BIAS_MS} ms: "
              f"{'met' if bias_wall <= TARGET_BIAS_MS else 'missed'}.", "",
              f"Share of wall time spent measuring, SBP on full Adult for {args.epochs:g} epoch(s) through the runner:",
              "", "| test-error path | wall (s) | training (s) | checkpoints | measuring share |",
              "|---|---|---|---|---|"]
    for label, (wall, train, checkpoints) in share.items():
        lines.append(f"| {label} | {wall:.1f} | {train:.1f} | {checkpoints} | {(wall - train) / wall:.0%} |")
    lines += ["", machine_facts()]
    text = "\n".join(lines)
    print(text)
    update_section(args.out, "SBP iteration (scripts/bench_sbp_iteration.py)", text)


if __name__ == "__main__":
    main()
