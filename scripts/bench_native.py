"""The native tools beside sbpbench, each pair on the same data and settings (issue #48).

Four pairs, each timed as whole processes in turn (native, ours, native, ours, ...: a change of the
machine's load falls on both), ``--repeats`` times, the medians kept:

* SBP without bias, 2000 iterations on full Adult (``configs/adult.yaml``'s setting: Gaussian
  sigma^2 = 10, nu = 0.011, no row cache on either side): issvm, the SBP authors' C++ (one
  OpenMP thread), built from source by :func:`authors_sbp.build` (its source: the git mirror
  ``authors_sbp.py`` reads, or ``--issvm-source``), as ``issvm_initialize`` then ``issvm_optimize
  -n 2000`` (two processes, added); ours ``sbpbench run ... -q --no-plot``;
* SMO on the first ``--smo-n`` examples of a9a (Gaussian gamma = 0.05, C = 1, bias, stopping
  tolerance 1e-3, shrinking, 100 MB row cache): LIBSVM's ``svm-train`` (Debian's
  ``libsvm-tools``) and our ``smo``;
* DCD on full Adult, C = 1, no bias, stopping at LIBLINEAR's ``eps`` = 0.1 (its default for ``-s
  3``): LIBLINEAR's ``liblinear-train -s 3`` (Debian's ``liblinear-tools``) and our ``dcd``
  (``tol``, the same rule);
* OCAS on full Adult, C = 1, no bias, relative tolerance 0.01: ``svmocas`` (Debian's
  ``libocas-tools``) and our ``ocas``.

A missing tool is installed (``apt-get install -y``, after ``apt-get update`` if the first try
fails) when this runs as root, else its pair is named as skipped; so is issvm where its source
or Boost cannot be had. Every process runs under GNU ``time`` (Debian's ``time``, installed the
same way), which reports the rusage of that process alone (``wait4``, what
``getrusage(RUSAGE_CHILDREN)`` adds for it): its CPU time (user and system, the fairer measure on
a loaded machine) and its peak resident set (``ru_maxrss``; not measured from this process, whose
children would count its own memory in their peak, and whose ``RUSAGE_CHILDREN`` peak is the
largest of all its children so far); the wall time is this process's clock around it.
The solver alone: ours is the run's
``train_time_s`` (``curves.csv``, its last checkpoint); svmocas reports its own ``ocas_time``;
``svm-train``, ``liblinear-train`` and ``issvm_optimize`` report none, so theirs is the wall time
of the process less that of the same process stopping at once (``-e 1e6``; ``-n 1`` iteration),
timed in the same turn: their start, reading the data and writing the model.

Usage: ``python scripts/bench_native.py [--repeats 3] [--smo-n 5000] [--issvm-source DIR]
[--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import authors_sbp
from bench_common import load_average, machine_facts, positive, update_section

from sbpbench.data.sources.adult import bundled_bytes

ROOT = Path(__file__).resolve().parent.parent
ADULT_N = 32561
SBP_ITERATIONS = 2000
#: GNU time (Debian's ``time``), which measures each process (:func:`measure`).
TIME = "time"
TITLE = "Against the native tools (scripts/bench_native.py)"


@dataclass
class Measure:
    """One process (or several, added): wall and CPU seconds, peak resident set in MiB, and the
    solver's own seconds where known."""

    wall_s: float
    cpu_s: float
    peak_mb: float
    solver_s: float = float("nan")

    def __add__(self, other: Measure) -> Measure:
        """Two processes run one after the other; the solver's seconds are ``other``'s."""
        return Measure(self.wall_s + other.wall_s, self.cpu_s + other.cpu_s, max(self.peak_mb, other.peak_mb),
                       other.solver_s)


def measure(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[Measure, str]:
    """Run ``cmd`` to its end under GNU ``time``: its :class:`Measure` and its standard output.

    ``time`` is the small process that forks ``cmd`` and reports its own rusage (``wait4``):
    a process forked from this one would count this one's resident set in its peak (its
    ``ru_maxrss`` keeps the high-water mark of the memory it had before ``exec``).

    Raises
    ------
    SystemExit
        The process failed: one line naming it and the last line it wrote.
    """
    with tempfile.NamedTemporaryFile("r") as usage:
        t0 = time.perf_counter()
        done = subprocess.run([TIME, "-f", "%U %S %M", "-o", usage.name, *cmd], cwd=cwd, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        user, system, peak_kb = usage.read().split()[-3:]
    if done.returncode != 0:
        last = ((done.stderr or done.stdout).strip().splitlines() or ["no output"])[-1]
        sys.exit(f"bench_native.py: error: {Path(cmd[0]).name} exited {done.returncode}: {last}")
    return Measure(wall, float(user) + float(system), int(peak_kb) / 1024), done.stdout


def installed(executable: str, packages: list[str]) -> str | None:
    """The path of ``executable``, installing Debian's ``packages`` first where it is missing and this
    runs as root (``apt-get install -y``, again after ``apt-get update`` if that fails); None where
    it is still missing."""
    found = shutil.which(executable)
    if found is None and install(packages):
        found = shutil.which(executable)
    return found


def install(packages: list[str]) -> bool:
    """Install Debian's ``packages`` with apt-get when root; whether that succeeded."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return False
    get = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "-y", "-q"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for before in ([], [["apt-get", "-q", "update"]]):
        for cmd in before:
            subprocess.run(cmd, capture_output=True, env=env)
        if subprocess.run([*get, "install", *packages], capture_output=True, env=env).returncode == 0:
            return True
    return False


def build_issvm(work: Path, source: str | None) -> tuple[Path | None, str]:
    """issvm built in ``work`` by :mod:`authors_sbp` (its Boost headers installed first where needed):
    its folder and where its source came from, or None and why not."""
    install(["libboost-program-options-dev", "libboost-regex-dev", "libboost-serialization-dev",
             "libboost-iostreams-dev"])
    args = argparse.Namespace(source=source, mirror=None)
    try:
        root = authors_sbp.get_source(args, work)
        authors_sbp.build(root)
    except SystemExit:  # authors_sbp said why on stderr
        return None, "issvm could not be had or built (the line above says why)"
    return root, f"--source {source}" if source else f"the git mirror {authors_sbp.MIRROR}"


def ours(config: dict, folder: Path) -> tuple[list[str], Callable[[str], float]]:
    """``sbpbench run`` of ``config`` (written into ``folder``) and how to read its solver's seconds
    (the last ``train_time_s`` of ``curves.csv``) from the run's output."""
    path = folder / f"{config['name']}.yaml"
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in config.items()), encoding="utf-8")
    cmd = [sys.executable, "-m", "sbpbench", "run", str(path), "--results", str(folder / "results"), "-q",
           "--no-plot"]

    def train_time(stdout: str) -> float:
        with (Path(stdout.strip().splitlines()[-1]) / "curves.csv").open(encoding="utf-8") as f:
            return float(list(csv.DictReader(f))[-1]["train_time_s"])

    return cmd, train_time


@dataclass
class Pair:
    """A native tool and sbpbench on one problem: how to run each, and what each run measured."""

    title: str
    native: str
    settings: str
    run_native: Callable[[], Measure]
    run_ours: Callable[[], Measure]
    found: dict[str, list[Measure]] = field(default_factory=lambda: {"native": [], "ours": []})


def stopped_at_once(full: list[str], at_once: list[str], env: dict[str, str] | None = None
                    ) -> Callable[[], Measure]:
    """Run ``full`` (in ``env``); its solver's seconds: its wall time less that of ``at_once`` (the
    same process stopping at once), run just after."""
    def run() -> Measure:
        found, _ = measure(full, env=env)
        fixed, _ = measure(at_once, env=env)
        found.solver_s = max(found.wall_s - fixed.wall_s, 0.0)
        return found
    return run


def run_ours(cmd: list[str], train_time: Callable[[str], float], env: dict[str, str]) -> Callable[[], Measure]:
    """Run our ``cmd``; its solver's seconds from its output (:func:`ours`)."""
    def run() -> Measure:
        found, stdout = measure(cmd, cwd=ROOT, env=env)
        found.solver_s = train_time(stdout)
        return found
    return run


def pairs(work: Path, smo_n: int, issvm_source: str | None) -> tuple[list[Pair], list[str]]:
    """The pairs whose native tool is here (installed or built) and a line for each one skipped."""
    a9a = work / "a9a"
    a9a.write_bytes(bundled_bytes("a9a"))
    head = work / f"a9a-{smo_n}"
    head.write_bytes(b"".join(a9a.read_bytes().splitlines(keepends=True)[:smo_n]))
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "PYTHONPATH": str(ROOT), "SBPBENCH_DATA": os.environ.get("SBPBENCH_DATA", str(work / "data"))}
    base = {"runs": 1, "seed": 0, "checkpoints": {"per_decade": 1, "epochs": False}}
    adult = {"name": "adult"}
    found: list[Pair] = []
    skipped: list[str] = []

    root, source = build_issvm(work, issvm_source)
    if root is None:
        skipped.append(f"SBP: {source}.")
    else:
        model = work / "issvm.model"
        init = [str(root / "issvm_initialize"), "-f", str(a9a), "-o", str(model), "-k", "gaussian", "-K", "0.05",
                "-a", "SBP", "-A", "0.011", "-b", "0", "-c", "0"]
        one_thread = {**os.environ, "OMP_NUM_THREADS": "1"}
        optimize = [str(root / "issvm_optimize"), "-i", str(model), "-o", str(work / "issvm.out")]
        cmd, train_time = ours(base | {"name": "sbp", "dataset": adult, "kernel": {"name": "gaussian", "sigma2": 10,
                                                                                     "cache_mb": 0},
                                       "problem": {"lambda": "1/n", "nu": 0.011, "bias": False}, "solvers": ["sbp"],
                                       "budget": {"epochs": SBP_ITERATIONS / ADULT_N}}, work)

        def issvm() -> Measure:
            initialized, _ = measure(init, env=one_thread)
            return initialized + stopped_at_once([*optimize, "-n", str(SBP_ITERATIONS)], [*optimize, "-n", "1"],
                                                 one_thread)()
        found.append(Pair(f"SBP without bias, {SBP_ITERATIONS} iterations, full Adult", f"issvm ({source}, -O2)",
                          "Gaussian sigma^2 = 10, nu = 0.011, no row cache", issvm,
                          run_ours(cmd, train_time, env)))

    svm_train = installed("svm-train", ["libsvm-tools"])
    if svm_train is None:
        skipped.append("SMO: LIBSVM's svm-train is not installed (Debian: libsvm-tools) and could not be.")
    else:
        options = ["-s", "0", "-t", "2", "-g", "0.05", "-c", "1", "-h", "1", "-m", "100", "-q"]
        cmd, train_time = ours(base | {"name": "smo", "dataset": {"path": str(head), "test_path": str(head),
                                                                   "n_features": 123},
                                       "kernel": {"name": "gaussian", "sigma2": 10, "cache_mb": 100},
                                       "problem": {"lambda": "1/n", "bias": True},
                                       "solvers": [{"name": "smo", "eps": 1e-3, "shrinking": True}],
                                       "budget": {"epochs": 1e9, "seconds": 600}}, work)
        found.append(Pair(f"SMO, the first {smo_n} examples of a9a", "svm-train (LIBSVM)",
                          "Gaussian gamma = 0.05, C = 1, bias, eps 1e-3, shrinking, 100 MB row cache",
                          stopped_at_once([svm_train, *options, "-e", "0.001", str(head), str(work / "m")],
                                          [svm_train, *options, "-e", "1e6", str(head), str(work / "m")]),
                          run_ours(cmd, train_time, env)))

    linear = base | {"dataset": adult, "kernel": {"name": "linear"}, "problem": {"C": 1, "bias": False},
                     "budget": {"epochs": 1000}}
    train = installed("liblinear-train", ["liblinear-tools"])
    if train is None:
        skipped.append("DCD: LIBLINEAR's liblinear-train is not installed (Debian: liblinear-tools) and could not be.")
    else:
        options = ["-s", "3", "-c", "1", "-B", "-1", "-q"]
        cmd, train_time = ours(linear | {"name": "dcd", "solvers": [{"name": "dcd", "tol": 0.1}]}, work)
        found.append(Pair("DCD, full Adult", "liblinear-train -s 3 (LIBLINEAR)", "C = 1, no bias, eps 0.1",
                          stopped_at_once([train, *options, "-e", "0.1", str(a9a), str(work / "m")],
                                          [train, *options, "-e", "1e6", str(a9a), str(work / "m")]),
                          run_ours(cmd, train_time, env)))

    svmocas = installed("svmocas", ["libocas-tools"])
    if svmocas is None:
        skipped.append("OCAS: svmocas is not installed (Debian: libocas-tools) and could not be.")
    else:
        cmd, train_time = ours(linear | {"name": "ocas", "solvers": [{"name": "ocas", "tol_rel": 0.01}]}, work)

        def ocas() -> Measure:
            found, stdout = measure([svmocas, "-c", "1", "-b", "0", "-r", "0.01", "-v", "1", str(a9a),
                                     str(work / "m")])
            found.solver_s = ocas_time(stdout)
            return found
        found.append(Pair("OCAS, full Adult", "svmocas (libocas)", "C = 1, no bias, relative tolerance 0.01", ocas,
                          run_ours(cmd, train_time, env)))
    return found, skipped


def ocas_time(stdout: str) -> float:
    """The solver's seconds svmocas reports (its ``ocas_time`` line); NaN where it reports none."""
    for line in stdout.splitlines():
        if line.strip().startswith("ocas_time"):
            return float(line.split(":", 1)[1].strip().rstrip("[s]"))
    return float("nan")


def median(runs: list[Measure]) -> Measure:
    """The median of each measure over ``runs``."""
    return Measure(*(statistics.median(getattr(r, k) for r in runs) for k in ("wall_s", "cpu_s", "peak_mb",
                                                                              "solver_s")))


def table(found: list[Pair]) -> list[str]:
    """The Markdown table: per pair, the native tool's medians, ours and ours / native."""
    lines = ["| problem | program | whole process, wall (s) | its CPU (s) | solver alone (s) | peak RSS (MiB) |",
             "|---|---|---|---|---|---|"]
    for pair in found:
        native, mine = median(pair.found["native"]), median(pair.found["ours"])
        lines.append(f"| {pair.title} ({pair.settings}) | {pair.native} | {native.wall_s:.2f} | {native.cpu_s:.2f} "
                     f"| {native.solver_s:.3f} | {native.peak_mb:.0f} |")
        lines.append(f"| | sbpbench | {mine.wall_s:.2f} | {mine.cpu_s:.2f} | {mine.solver_s:.3f} | "
                     f"{mine.peak_mb:.0f} |")
        lines.append(f"| | sbpbench / native | {mine.wall_s / native.wall_s:.2f} | {mine.cpu_s / native.cpu_s:.2f} "
                     f"| {mine.solver_s / native.solver_s:.2f} | {mine.peak_mb / native.peak_mb:.1f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive(int), default=3, help="pairs of runs per problem")
    parser.add_argument("--smo-n", type=positive(int), default=5000, help="a9a's first examples for SMO")
    parser.add_argument("--issvm-source", help="an unpacked issvm (default: authors_sbp.py's git mirror)")
    parser.add_argument("--out", default="BENCHMARKS.md")
    args = parser.parse_args()
    if installed(TIME, ["time"]) is None:
        sys.exit("bench_native.py: error: GNU time is not installed (Debian: apt-get install time) and could not be")
    with tempfile.TemporaryDirectory(prefix="bench-native-") as tmp:
        found, skipped = pairs(Path(tmp), args.smo_n, args.issvm_source)
        for pair in found:
            pair.run_ours()  # uncounted: fills numba's, the data and the bytecode caches
        load_before = load_average()
        loads = []
        for _ in range(args.repeats):
            for pair in found:
                pair.found["native"].append(pair.run_native())
                pair.found["ours"].append(pair.run_ours())
            loads.append(load_average())
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    lines = [
        f"Each native tool beside sbpbench on the same data and settings, as whole processes in turn (native, "
        f"ours, ...), medians of {args.repeats} of each after one uncounted run of ours (numba's, the data and "
        "Python's bytecode caches filled); ours is `sbpbench run CONFIG -q --no-plot`, one run. Wall and CPU "
        "seconds (user and system) and peak resident set of each process (GNU time's); issvm is two processes "
        "(initialize, optimize), added. Solver alone: ours is the run's `train_time_s`; svmocas's its own "
        "`ocas_time`; that of svm-train, liblinear-train and issvm_optimize, which report none, is the process's "
        "wall time less the same process stopping at once (`-e 1e6`; `-n 1`). "
        f"Load average (1 min) {load_before:.2f} at the start, {', '.join(f'{x:.2f}' for x in loads)} after each "
        f"round, on {os.cpu_count()} cores, run at nice {nice}: wall times carry the machine's load, CPU times "
        "less so.",
        "",
        *table(found),
    ]
    if skipped:
        lines += ["", "Skipped: " + " ".join(skipped)]
    lines += ["", machine_facts()]
    update_section(args.out, TITLE, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
