"""Peak memory: of every Figure 2 and Figure 3 solver on full MNIST (target: under 2 GB per run),
and of a short SBP run on Adult, stage by stage (target: 250 MB).

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

Adult (issue #48): ``configs/adult.yaml`` with SBP only, one run of 2000 iterations (the run of
``scripts/bench_short_run.py``), stage by stage in a fresh process per row cache size
(``--cache-mb``, the default's first): the resident set (``VmRSS``) and its peak so far
(``VmHWM``) at the start (the interpreter), after importing what ``sbpbench run`` imports (numpy,
numba, scipy, sbpbench), after loading the data, after building the problem (the kernel's
storage of the training and test points), after the warm-up (numba's compiled functions loaded
from its cache), after the run (its row cache, whose size the kernel reports) and after writing
its results (``curves.csv``, ``meta.json``). Beside it, the peak of the whole ``sbpbench run ...
-q --no-plot`` process at each cache size, measured by GNU time as ``scripts/bench_native.py``
measures a process.

Usage: ``python scripts/bench_memory.py [--seconds 90] [--cache-mb 256 0] [--skip-mnist]
[--skip-adult] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_common import load_average, machine_facts, update_section
from bench_native import TIME, installed, measure

#: Figure 2's solvers, and Figure 3's random Fourier features.
SOLVERS = ("sbp", "pegasos", "sdca", "smo", "perceptron", "fourier")
TARGET_MB = 2048
CONFIG = Path(__file__).resolve().parent.parent / "configs" / "sbp-figure2-mnist.yaml"
FIGURE3 = CONFIG.with_name("sbp-figure3-mnist.yaml")
ADULT = CONFIG.with_name("adult.yaml")
ADULT_N = 32561
ADULT_ITERATIONS = 2000
ADULT_TARGET_MB = 250
#: ``sbpbench run``'s overrides of ``configs/adult.yaml`` for the short SBP run on Adult.
ADULT_SET = {"solvers": ["sbp"], "runs": 1, "budget": {"epochs": ADULT_ITERATIONS / ADULT_N}}


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


def resident_mb() -> tuple[float, float]:
    """This process's resident set now and its peak so far (``VmRSS``, ``VmHWM``), in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


#: :func:`staged_run`'s name of the run's stage.
RUN_STAGE = "the run (its row cache)"
#: A staged child process (``python -c``): the interpreter's resident set, peak and CPU seconds before
#: this script (and what it imports) is imported, then :func:`staged_run`. Its arguments: this folder,
#: the overrides of ``configs/adult.yaml`` as JSON.
STAGED_CHILD = """
import sys, time
from pathlib import Path
status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
interpreter = (*(int(status[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM")), time.process_time())
sys.path.insert(0, sys.argv[1])
import json, bench_memory
print(json.dumps(bench_memory.staged_run(json.loads(sys.argv[2]), interpreter)))
"""


def staged_run(overrides: dict, interpreter: tuple[float, float, float]) -> dict:
    """One run of ``configs/adult.yaml`` with ``overrides`` (top-level sections replaced), stage by
    stage as ``sbpbench run`` goes, in a process whose resident set, peak and CPU seconds were
    ``interpreter`` before it imported anything (:data:`STAGED_CHILD`): after each stage, the
    resident set and its peak (MiB) and the CPU seconds so far; and the row cache's bytes."""
    stages = [("interpreter", *interpreter)]

    def stage(name: str) -> None:
        stages.append((name, *resident_mb(), time.process_time()))

    import sbpbench.cli
    import sbpbench.execution.executors
    import sbpbench.execution.sweep
    import sbpbench.results.store  # noqa: F401 (what run imports before its first run)
    from sbpbench.execution.loop import WarmUps, run_one
    from sbpbench.experiment import config
    from sbpbench.experiment.assemble import load_data, prepare
    from sbpbench.results.store import ResultsWriter

    stage("imports (numpy, numba, scipy, sbpbench)")
    exp = config.parse(config.load(ADULT).raw | overrides, "bench_memory.py")
    splits = load_data(exp)
    stage("data loaded (training and test sets)")
    problem = prepare(exp, splits).problem
    del splits
    stage("problem built (the kernel's storage of the points)")
    warm_ups = WarmUps()
    warm_ups.warm_up(problem, exp.solvers[0])
    stage("warm-up (the solver's compiled functions and a kernel solver's row loops loaded)")
    result = run_one(exp, problem, exp.solvers[0], 0, warm_ups=warm_ups)
    stage(RUN_STAGE)
    with tempfile.TemporaryDirectory() as folder:
        writer = ResultsWriter(Path(folder), {"name": exp.name})
        writer.add_run(result.rows, result.summary)
        writer.flush(finished=True)
    stage("results written (curves.csv, meta.json)")
    return {"cached_mb": problem.kernel.cached_bytes / 2**20, "iterations": int(result.rows[-1]["iteration"]),
            "stages": stages}


def run_staged(overrides: dict) -> dict:
    """:func:`staged_run` of ``overrides`` in a fresh process (:data:`STAGED_CHILD`).

    Raises
    ------
    SystemExit
        The process failed: one line saying so and the last line it wrote.
    """
    done = subprocess.run([sys.executable, "-c", STAGED_CHILD, str(Path(__file__).resolve().parent),
                           json.dumps(overrides)], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"bench_memory.py: error: the staged run {json.dumps(overrides)} failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def adult_part(cache_sizes: list[float], out: str) -> None:
    """The short SBP run on Adult: its stages per row cache size and the whole process's peak."""
    from sbpbench.experiment import config

    if installed(TIME, ["time"]) is None:
        sys.exit("bench_memory.py: error: GNU time is not installed (Debian: apt-get install time) and could not be")
    load_before = load_average()
    found, whole = [], []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as results:
        for cache_mb in cache_sizes:
            kernel = config.load(ADULT).raw["kernel"] | {"cache_mb": cache_mb}
            found.append(run_staged(ADULT_SET | {"kernel": kernel}) | {"cache_mb": cache_mb})
            sets = [f"{key}={json.dumps(value)}" for key, value in (ADULT_SET | {"kernel.cache_mb": cache_mb}).items()]
            process, _ = measure([sys.executable, "-m", "sbpbench", "run", str(ADULT), "--results", results, "-q",
                                  "--no-plot", *(arg for s in sets for arg in ("--set", s))],
                                 cwd=Path(__file__).resolve().parent.parent)
            whole.append(process.peak_mb)
            print(f"cache_mb {cache_mb:g}: peak {whole[-1]:.0f} MiB", flush=True)
    lines = [
        f"A short run: `configs/adult.yaml` (full Adult, n = {ADULT_N}, Gaussian sigma^2 = 10, nu = 0.011, no bias), "
        f"SBP only, one run of {ADULT_ITERATIONS} iterations, in a fresh process per row cache size "
        "(`kernel.cache_mb`), stage by stage as `sbpbench run` goes: resident set after each stage (MiB), what "
        "the stage added, and the peak so far; then the peak of the whole `sbpbench run ... -q --no-plot` process "
        f"(GNU time). Load average (1 min) {load_before:.2f} at the start on 2 cores.",
        "",
        "| stage | " + " | ".join(f"cache_mb {r['cache_mb']:g}: resident (added), peak" for r in found) + " |",
        "|---|" + "---|" * len(found),
    ]
    for k, (stage, *_) in enumerate(found[0]["stages"]):
        cells = []
        for r in found:
            _, rss, peak, _ = r["stages"][k]
            added = rss - r["stages"][k - 1][1] if k else rss
            cells.append(f"{rss:.0f} ({added:+.0f}), {peak:.0f}")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    lines.append("| row cache at the end (the kernel's count) | "
                 + " | ".join(f"{r['cached_mb']:.0f}" for r in found) + " |")
    lines.append("| **whole `sbpbench run` process, peak** | "
                 + " | ".join(f"**{peak:.0f}** ({peak * 2**20 / 1e6:.0f} MB): "
                              f"{'met' if peak * 2**20 <= ADULT_TARGET_MB * 1e6 else 'missed'} "
                              f"({ADULT_TARGET_MB} MB target)" for peak in whole) + " |")
    lines += ["", machine_facts()]
    update_section(out, "Peak memory of a short SBP run on Adult (scripts/bench_memory.py)", "\n".join(lines))
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=90.0, help="training seconds per solver")
    parser.add_argument("--cache-mb", type=float, nargs="+", default=[256.0, 0.0],
                        help="row cache sizes (MiB) of the short SBP run on Adult")
    parser.add_argument("--skip-mnist", action="store_true", help="skip the MNIST part")
    parser.add_argument("--skip-adult", action="store_true", help="skip the Adult part")
    parser.add_argument("--out", default="BENCHMARKS.md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.seconds)))
        return
    if not args.skip_adult:
        adult_part(args.cache_mb, args.out)
    if not args.skip_mnist:
        mnist_part(args.seconds, args.out)


def mnist_part(seconds: float, out: str) -> None:
    """Every Figure 2 and Figure 3 solver on full MNIST, each in a fresh process."""
    load_before = load_average()
    found = []
    for solver in SOLVERS:
        done = subprocess.run([sys.executable, __file__, "--child", solver, "--seconds", str(seconds)],
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
        f"nu = 2.21e-4, lambda = 1/n; each solver {seconds:g} s of training in a fresh process, through "
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
    update_section(out, "Peak memory on full MNIST (scripts/bench_memory.py)", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
