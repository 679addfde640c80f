"""A short ``sbpbench run``'s whole-process time against its own solver and measuring time.

Issue #37: a short run cost more than its work (imports, data preparation, then measuring).
The run: ``configs/adult.yaml`` (full Adult, Gaussian sigma^2 = 10, nu = 0.011, no bias) with
``solvers=[sbp]``, ``runs=1`` and ``budget.epochs`` = 2000 / n (2000 SBP iterations), each time
in a fresh process (``python -m sbpbench run ... -q``), with ``--no-plot`` and with the figure
and page. One uncounted process first fills numba's cache and the data cache (a first run
after an install compiles: ``scripts/bench_first_run.py``), and Python's bytecode cache: every
process runs without ``PYTHONDONTWRITEBYTECODE`` (:func:`child_env`). Per variant, the median of
``--repeats`` processes of: the whole process's wall time; the run's ``train_time_s`` (solver
only) and ``wall_time_s`` (the run from its warm-up to its last checkpoint: solver and
measuring), both from ``meta.json``; and the ratio whole process / ``wall_time_s`` (target:
at most 2).

Beside it, LIBSVM's ``svm-train`` (C++, Debian's ``libsvm-tools``) on the same a9a file: its
whole-process time with a stopping tolerance so loose that it stops at once (``-e 1e6``),
that is its fixed costs (start, reading the file, writing the model), when installed.

Then where the figure and page's time goes, in a fresh process per repeat that has imported what
``sbpbench run`` imports before it draws: the CPU seconds of importing the outputs (matplotlib),
of ``figure2.png``/``.svg`` (``plot_results``) and of ``index.html`` (``write_page``, with its
static figures), drawn again from the folder of the last run above.

``--source DIR`` times another checkout of sbpbench (e.g. the commit before a change) the
same way, with its own numba cache (its ``__pycache__``), as a baseline.

Usage: ``python scripts/bench_short_run.py [--repeats 3] [--source DIR] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_common import load_average, machine_facts, positive, update_section

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "adult.yaml"
ADULT_N = 32561
ITERATIONS = 2000
RUN_ARGS = ["--set", "solvers=[sbp]", "--set", "runs=1", "--set", f"budget.epochs={ITERATIONS / ADULT_N!r}", "-q"]


def child_env(source: Path, **more: str) -> dict[str, str]:
    """The environment of a timed process: this one's, importing sbpbench from ``source``, with
    ``more``, and without ``PYTHONDONTWRITEBYTECODE``.

    Python keeps the bytecode of what it imports (``__pycache__``) unless told not to, and an
    installed package ships it; a machine that sets that variable (as the project's development
    machines do) recompiles every module of sbpbench in every process, some 0.12 s of CPU that
    no user's run pays. So the uncounted first process writes the bytecode of both checkouts,
    and the timed ones read it.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(source), **more}


def one_run(source: Path, data: Path, results: Path, plot: bool) -> dict[str, float]:
    """One fresh ``sbpbench run`` process: its wall time and its run's times from meta.json."""
    env = child_env(source, SBPBENCH_DATA=str(data))
    args = [sys.executable, "-m", "sbpbench", "run", str(CONFIG), "--results", str(results), *RUN_ARGS]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(args + ([] if plot else ["--no-plot"]), capture_output=True, text=True, env=env,
                          cwd=source)  # python -m imports from the working folder first
    whole = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"bench_short_run.py: error: sbpbench run failed ({source}): {last}")
    run = json.loads((Path(done.stdout.strip().splitlines()[-1]) / "meta.json").read_text(encoding="utf-8"))["runs"][0]
    if run["iterations"] != ITERATIONS:
        sys.exit(f"bench_short_run.py: error: the run did {run['iterations']} iterations, not {ITERATIONS}")
    return {"whole_s": whole, "cpu_s": cpu, "train_s": run["train_time_s"], "wall_s": run["wall_time_s"]}


#: Run in a fresh process by :func:`drawing_parts`: what ``sbpbench run`` imports before it draws (the
#: objects then alive frozen, as ``run`` freezes them), then the CPU seconds of importing the outputs,
#: drawing figure2 and writing the page of a run folder.
DRAW = """
import sys, time
from pathlib import Path
import sbpbench.execution.executors, sbpbench.execution.sweep, sbpbench.experiment.config
import sbpbench.outputs.summary, sbpbench.results.store
import gc
gc.freeze()  # as run does after its imports: else a full collection over them lands in one part or another
t0 = time.process_time()
from sbpbench.outputs.page import write_page
from sbpbench.outputs.plotting import plot_results
t1 = time.process_time()
plot_results(sys.argv[1], sys.argv[2])
t2 = time.process_time()
write_page(sys.argv[1], Path(sys.argv[2]) / "index.html")
print(t1 - t0, t2 - t1, time.process_time() - t2)
"""


def drawing_parts(source: Path, run: Path, out: Path) -> dict[str, float]:
    """The CPU seconds of the figure and page's parts (:data:`DRAW`) for ``run``, in a fresh process."""
    env = child_env(source)
    done = subprocess.run([sys.executable, "-c", DRAW, str(run), str(out)], capture_output=True, text=True,
                          env=env, cwd=source)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"bench_short_run.py: error: drawing {run} failed ({source}): {last}")
    return dict(zip(("import_s", "figure_s", "page_s"), map(float, done.stdout.split())))


def measure(sources: dict[str, Path], repeats: int
            ) -> tuple[dict[tuple[str, str], dict[str, float]], dict[str, dict[str, float]]]:
    """Medians over ``repeats`` processes per source, with and without plotting, after one uncounted
    process per source; the sources' processes alternate, so that a change of load hits them alike.
    Then, per source, the medians of :func:`drawing_parts` over ``repeats`` processes."""
    times: dict[tuple[str, str], list[dict[str, float]]] = {}
    parts: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-short-") as tmp:
        data, results = Path(tmp) / "data", Path(tmp) / "results"
        for source in sources.values():
            one_run(source, data, results, plot=True)  # fills numba's, the data and the bytecode cache
        for _ in range(repeats):
            for label, source in sources.items():
                for plot in (False, True):
                    variant = "with plot" if plot else "--no-plot"
                    times.setdefault((label, variant), []).append(one_run(source, data, results, plot))
        run = max(results.glob("*/*/meta.json")).parent  # the newest run folder (named by its start)
        for _ in range(repeats):
            for label, source in sources.items():
                parts.setdefault(label, []).append(drawing_parts(source, run, Path(tmp) / "drawn"))
    return _medians(times), _medians(parts)


def _medians(found: dict[Any, list[dict[str, float]]]) -> dict[Any, dict[str, float]]:
    """Per key, the median of each measure over its list of measures."""
    return {key: {k: statistics.median(t[k] for t in runs) for k in runs[0]} for key, runs in found.items()}


def svm_train_fixed(repeats: int) -> float | None:
    """Median whole-process time of ``svm-train`` on a9a stopping at once; None when not installed."""
    exe = shutil.which("svm-train")
    if exe is None:
        return None
    sys.path.insert(0, str(ROOT))
    from sbpbench.data.sources.adult import bundled_bytes

    with tempfile.TemporaryDirectory(prefix="bench-short-") as tmp:
        train = Path(tmp) / "a9a"
        train.write_bytes(bundled_bytes("a9a"))
        # C-SVC, Gaussian gamma = 1/(2 sigma^2) = 0.05, C = 1/(lambda n) = 1: the problem of the run above
        args = [exe, "-s", "0", "-t", "2", "-g", "0.05", "-c", "1", "-e", "1e6", "-q", str(train), f"{train}.model"]
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run(args, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive(int), default=3)
    parser.add_argument("--source", type=Path, help="another checkout of sbpbench, timed as a baseline")
    parser.add_argument("--out", default="BENCHMARKS.md")
    args = parser.parse_args()
    load_before = load_average()
    sources = {"this checkout": ROOT} | ({f"baseline ({args.source.name})": args.source} if args.source else {})
    found, parts = measure({label: source.resolve() for label, source in sources.items()}, args.repeats)
    libsvm = svm_train_fixed(args.repeats)
    lines = [
        f"A short run in a fresh process: `configs/adult.yaml` (full Adult, n = {ADULT_N}, Gaussian sigma^2 = 10, "
        f"nu = 0.011, no bias), SBP only, one run of {ITERATIONS} iterations, `sbpbench run ... -q`, after one "
        "uncounted process that fills numba's cache, the data cache and Python's bytecode cache (the timed "
        "processes run without `PYTHONDONTWRITEBYTECODE`, as a user's Python does). Medians of "
        f"{args.repeats} processes, the checkouts' alternating: the whole process (wall, and its CPU time, user and "
        "system, less sensitive to the machine's load); the run's `train_time_s` (solver) and `wall_time_s` "
        "(its warm-up, solver and measuring at the checkpoints), from `meta.json`; fixed cost = whole - "
        "`wall_time_s`; ratio = whole / `wall_time_s` (target: at most 2). "
        f"Load average (1 min) {load_before:.2f} at the start on 2 cores.",
        "",
        "| sbpbench | figure and page | whole process (s) | its CPU time (s) | train_time_s | wall_time_s | "
        "fixed cost (s) | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (label, variant), t in found.items():
        lines.append(f"| {label} | {variant} | {t['whole_s']:.2f} | {t['cpu_s']:.2f} | {t['train_s']:.2f} | "
                     f"{t['wall_s']:.2f} | {t['whole_s'] - t['wall_s']:.2f} | {t['whole_s'] / t['wall_s']:.2f} |")
    lines += [
        "",
        "Where the figure and page's time goes: CPU seconds in a fresh process that has imported what `sbpbench "
        "run` imports before it draws, drawing the last run's folder again (medians of as many processes):",
        "",
        "| sbpbench | importing the outputs (matplotlib) | figure2.png and .svg | index.html (3 static figures) |",
        "|---|---|---|---|",
    ]
    for label, t in parts.items():
        lines.append(f"| {label} | {t['import_s']:.2f} | {t['figure_s']:.2f} | {t['page_s']:.2f} |")
    lines.append("")
    if libsvm is None:
        lines.append("LIBSVM's `svm-train` is not installed here (Debian: `apt-get install libsvm-tools`): no C++ "
                     "comparison.")
    else:
        lines.append(f"Beside it, LIBSVM's `svm-train` (C++) on the same a9a file, stopping at once (`-e 1e6`): "
                     f"{libsvm:.2f} s for the whole process, its fixed costs (start, reading the file, writing the "
                     "model), median of the same number of processes.")
    lines += ["", machine_facts()]
    update_section(args.out, "Short run's whole process (scripts/bench_short_run.py)", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
