"""Peak memory of every Figure 2 and Figure 3 solver on full MNIST (target: under 2 GB per run).

Data: MNIST's 60000 training images and 10000 test images ("8" vs rest, dataset ``mnist``;
``sbpbench datasets fetch mnist`` first, or a mirror), stored by the kernel as it chooses
(the small-integer uint8 path, beside the float64 CSR copy the solvers' linear algebra reads).

Problem: ``configs/sbp-figure2-mnist.yaml``'s kernel section (sigma^2 = 25 and its row
cache size) and lambda = 1/n, with nu = 2.21e-4 from Table 2 (so that no optimum has to
be computed). Each solver runs in a fresh process through the runner (test-error
measurement included, at one checkpoint per decade of kernel evaluations; not at every
epoch's end, which the Perceptron reaches every second or so once its mistakes are rare) for
``--seconds`` of training, enough to fill its row cache (Figure 3's random Fourier features
run to their largest number of pairs, 1024: their peak comes from the 60000 x 2048 feature
matrix and LIBLINEAR's copy of it, not from time); the table gives the peak
resident set of that process (``ru_maxrss``): once the data was loaded and the problem
built, at the end of the run, and after measuring the test error of a predictor with every
training point a support vector (the most a checkpoint of a longer run can need).

Usage: ``python scripts/bench_memory.py [--seconds 90] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from bench_common import load_average, machine_facts, update_section

#: Figure 2's solvers, and Figure 3's random Fourier features.
SOLVERS = ("sbp", "pegasos", "sdca", "smo", "perceptron", "fourier")
TARGET_MB = 2048
CONFIG = Path(__file__).resolve().parent.parent / "configs" / "sbp-figure2-mnist.yaml"
FIGURE3 = CONFIG.with_name("sbp-figure3-mnist.yaml")


def peak_mb() -> float:
    """This process's peak resident set so far, in MiB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(solver: str, seconds: float) -> dict:
    """Build the MNIST-sized problem, run ``solver`` for ``seconds``; the facts as a dict."""
    from sbpbench.data import DatasetSpec, load
    from sbpbench.execution.loop import run_one
    from sbpbench.experiment import config
    from sbpbench.problem import Problem

    figure = config.load(CONFIG)
    train, test = load(DatasetSpec(name="mnist"), np.random.default_rng(0))
    # the Fourier features run as in Figure 3, to their largest number of pairs
    spec, budget = (config.load(FIGURE3).raw["solvers"][0], {"epochs": 10}) if solver == "fourier" else \
        (solver, {"seconds": seconds})
    exp = config.parse({"name": "memory", "dataset": {"name": "mnist"},
                        "kernel": {"name": "gaussian", "sigma2": figure.kernel.sigma2,
                                   "cache_mb": figure.kernel.cache_mb},
                        "problem": {"lambda": "1/n", "nu": 2.21e-4}, "solvers": [spec],
                        "budget": budget, "checkpoints": {"per_decade": 1, "epochs": False}}, "bench_memory.py")
    problem = Problem.build(train, test, exp.kernel, 1.0 / train.n, 2.21e-4, False)
    del train
    loaded = peak_mb()
    t0 = time.perf_counter()
    result = run_one(exp, problem, exp.solvers[0], 0)
    last = result.rows[-1]
    run_peak = peak_mb()
    cached = problem.kernel.cached_bytes / 2**20
    # the worst checkpoint a longer run could reach: every training point a support vector
    problem.kernel.decision(problem.test_X, np.arange(problem.n), np.ones(problem.n))
    return {"solver": solver, "n": problem.n, "n_test": problem.test_y.size, "storage": problem.kernel.storage,
            "loaded_mb": loaded,
            "run_peak_mb": run_peak, "peak_mb": peak_mb(), "wall_s": time.perf_counter() - t0,
            "iterations": int(last["iteration"]),
            "n_support": int(last["n_support"]),
            "cache_mb": figure.kernel.cache_mb, "cached_mb": cached}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=90.0, help="training seconds per solver")
    parser.add_argument("--out", default="BENCHMARKS.md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.seconds)))
        return
    load_before = load_average()
    found = []
    for solver in SOLVERS:
        done = subprocess.run([sys.executable, __file__, "--child", solver, "--seconds", str(args.seconds)],
                              capture_output=True, text=True)
        if done.returncode != 0:  # e.g. MNIST not fetched: the child's last line says why
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"bench_memory.py: error: {solver} failed: {last} "
                  "(fetch the data first: sbpbench datasets fetch mnist)", file=sys.stderr)
            sys.exit(2)
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"{solver}: peak {found[-1]['peak_mb']:.0f} MiB", flush=True)
    first = found[0]
    lines = [
        f"Full MNIST: n = {first['n']} training images, d = 784, {first['n_test']} test images; kernel "
        f"storage {first['storage']}. Kernel as "
        f"`configs/sbp-figure2-mnist.yaml` (sigma^2 = 25, row cache {first['cache_mb']:g} MiB), "
        f"nu = 2.21e-4, lambda = 1/n; each solver {args.seconds:g} s of training in a fresh process, through "
        f"the runner, except the Fourier features of Figure 3, which run to their largest number of pairs "
        f"(`configs/sbp-figure3-mnist.yaml`). Load average (1 min) {load_before:.2f} at the start on 2 cores.",
        "",
        "| solver | peak after loading (MiB) | peak of the run (MiB) | row cache at the end (MiB) | iterations | "
        "support vectors | peak with n support vectors (MiB) | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in found:
        verdict = "met" if r["peak_mb"] < TARGET_MB else f"missed by {r['peak_mb'] - TARGET_MB:.0f} MiB"
        lines.append(f"| {r['solver']} | {r['loaded_mb']:.0f} | {r['run_peak_mb']:.0f} | {r['cached_mb']:.0f} | "
                     f"{r['iterations']} | {r['n_support']} | {r['peak_mb']:.0f} | < {TARGET_MB} MiB: {verdict} |")
    lines += ["", machine_facts()]
    update_section(args.out, "Peak memory on full MNIST (scripts/bench_memory.py)", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
