"""Wall time and core-hours of the SBP paper's Figure 2, on Adult and on full MNIST.

Figure 2 on Adult is ``configs/sbp-figure2-adult.yaml``: SBP, Pegasos, SDCA and SMO ten runs of
ten epochs each, the Perceptron ten runs of 100 epochs, on full Adult (32561 training rows),
with the test error measured at every checkpoint (target: under one hour on 2 cores). Figure 2
on MNIST is ``configs/sbp-figure2-mnist.yaml``: the five solvers, ten runs of ten epochs, on the
60000 training images (target, issue #28: under one hour on 2 cores; a finished, never resumed
invocation is judged by its wall time, another by its runs laid on two one-core workers).

``--run`` runs it now (``sbpbench run CONFIG --jobs 2``; Adult about 20 minutes, MNIST hours)
into a temporary folder; by default the script reads the committed run in
``results/paper/<experiment>/`` (or ``--from RUN_DIR``), whose ``meta.json`` holds its start and
end times and each run's wall and training time. The table gives, per solver, the runs made and
the sums of their wall times (training plus measuring) and training times. Each run is one
process with one numba thread, so a run's wall time is the core-seconds it needs: from the
mean per solver follow the core-hours of all the planned runs (the config's ``runs`` for every
solver, one for a deterministic solver's entry that ran once, ``meta.json``'s ``runs_once``),
and the time they take on a Dask cluster of N one-core workers (runs are independent;
longest first onto the least loaded worker, and never less than the longest run).

A run other than the committed one is set beside it (:func:`agreement`): at every checkpoint
both have, the counts (iterations, kernel evaluations computed and measuring, support size, the
test error as a ratio of counts) must be equal, and the objectives' largest relative difference
is given (floats of other processes are never compared bit for bit).

Usage: ``python scripts/bench_figure2.py [--experiment adult|mnist] [--run | --from RUN_DIR]
[--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from bench_common import positive, update_section, update_target

ROOT = Path(__file__).resolve().parent.parent
#: Per data set: the experiment, its BENCHMARKS.md section and the wall-time target (None: none).
EXPERIMENTS = {
    "adult": ("sbp-figure2-adult", "SBP Figure 2 on Adult, whole (scripts/bench_figure2.py)", 3600),
    "mnist": ("sbp-figure2-mnist", "SBP Figure 2 on full MNIST, core-hours (scripts/bench_figure2.py)", 3600),
}
#: Cluster sizes of the Dask projection.
WORKERS = (2, 8, 16, 32, 64)


def run_now(experiment: str, jobs: int) -> Path:
    """Run ``configs/<experiment>.yaml`` with ``jobs`` processes; returns the run folder."""
    out = Path(tempfile.mkdtemp(prefix="sbpbench-figure2-"))
    subprocess.run([sys.executable, "-m", "sbpbench", "run", str(ROOT / "configs" / f"{experiment}.yaml"),
                    "--results", str(out), "--jobs", str(jobs)], check=True)
    return next(out.glob("*/*/meta.json")).parent


def makespan(durations: list[float], workers: int) -> float:
    """Time for independent runs of ``durations`` on ``workers`` one-core workers, longest first
    onto the least loaded worker."""
    loads = [0.0] * workers
    for d in sorted(durations, reverse=True):
        loads[loads.index(min(loads))] += d
    return max(loads)


def whole_wall_s(meta: dict) -> float | None:
    """Wall seconds of the whole invocation that wrote ``meta`` (None if it did not finish or was resumed).

    ``finished`` is ``started`` plus the monotonic time the writer measured (docs/results.md, "Times"),
    so for an invocation never resumed their difference is its duration by the monotonic clock,
    whatever the wall clock did meanwhile (in folders written before that: two wall-clock readings).
    """
    if "finished" not in meta or meta.get("resumes"):
        return None
    return (dt.datetime.fromisoformat(meta["finished"]) - dt.datetime.fromisoformat(meta["started"])).total_seconds()


def planned_runs(meta: dict, solver: str) -> int:
    """The runs planned for the entry labelled ``solver``: the config's ``runs``, one for an entry
    of a deterministic solver that ran once (``meta.json``'s ``runs_once``)."""
    return 1 if solver in meta.get("runs_once", []) else int(meta["resolved"]["runs"])


#: Columns of ``curves.csv`` that are counts (or a ratio of counts), equal in a repeated run.
COUNTS = ("iteration", "kernel_evals", "kernel_evals_computed", "eval_kernel_evals", "n_support", "test_error")
#: Columns that are floats, compared by their relative difference.
OBJECTIVES = ("objective", "primal_objective")


def agreement(run_dir: Path, committed_dir: Path) -> str:
    """One sentence setting the curves of ``run_dir`` beside those of ``committed_dir``.

    Rows are matched by solver, run and checkpoint; the sentence gives how many matched, how many
    differ in any of :data:`COUNTS`, and the largest relative difference of :data:`OBJECTIVES`.

    Parameters
    ----------
    run_dir, committed_dir : pathlib.Path
        Run folders (``curves.csv`` or ``curves.csv.gz``).

    Returns
    -------
    str
    """
    import numpy as np

    from sbpbench.results.store import curves_file, read_curves

    keys = ["solver", "run", "checkpoint"]
    new_curves, committed_curves = (read_curves(curves_file(d) or d) for d in (run_dir, committed_dir))
    both = new_curves.merge(committed_curves, on=keys, suffixes=("", "_committed"))
    mismatch = np.zeros(len(both), dtype=bool)
    for c in COUNTS:
        new, old = both[c], both[f"{c}_committed"]
        mismatch |= ~((new == old) | (new.isna() & old.isna())).to_numpy()
    relative = max((float(np.nanmax(np.abs(both[c] - both[f"{c}_committed"])
                                    / np.maximum(np.abs(both[f"{c}_committed"]), 1e-300)))
                    for c in OBJECTIVES if both[c].notna().any()), default=0.0)
    where = committed_dir.relative_to(ROOT) if committed_dir.is_relative_to(ROOT) else committed_dir
    return (f"Beside the committed run (`{where}`): {len(both)} checkpoints of the same solver, run "
            f"and number; {int(mismatch.sum())} differ in a count "
            f"({', '.join(COUNTS)}); objectives within {relative:.1e} relative.")


def report(run_dir: Path, target_s: float | None) -> str:
    """The BENCHMARKS.md section for the run in ``run_dir``."""
    meta = json.loads((run_dir / "meta.json").read_text(encoding="utf-8"))
    per_solver: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for run in meta["runs"]:
        row = per_solver[run["solver"]]
        row[0] += 1
        row[1] += run["wall_time_s"]
        row[2] += run["train_time_s"]
    planned = int(meta["resolved"]["runs"])
    host = meta["host"]
    lines = [
        f"`{run_dir.relative_to(ROOT) if run_dir.is_relative_to(ROOT) else run_dir}`: "
        f"`sbpbench run {meta['config_file']}` with the `{meta['executor']}` executor, "
        f"{meta['jobs'] if 'jobs' in meta else 'number of'} job(s) {'' if 'jobs' in meta else 'not recorded '}"
        f"on {host['cpu_count']} cores (git commit "
        f"{meta['git_commit'][:7] if meta['git_commit'] else 'not recorded'}), "
        f"{meta['started']} to {meta.get('finished', 'not finished')}"
        + (f", resumed {len(meta['resumes'])} time(s)" if meta.get("resumes") else "") + ".",
        "",
        "| solver | runs | sum of run wall times (s) | sum of training times (s) | mean wall time per run (s) |",
        "|---|---|---|---|---|",
    ]
    for solver, (runs, run_wall, train) in per_solver.items():
        lines.append(f"| {solver} | {runs} | {run_wall:.0f} | {train:.0f} | {run_wall / runs:.0f} |")
    wall = whole_wall_s(meta)
    if target_s is not None and wall is not None:
        verdict = "met" if wall < target_s else f"missed by {wall - target_s:.0f} s"
        lines += ["", f"Whole invocation: {wall / 60:.1f} minutes wall "
                      f"(target: under {target_s / 60:.0f} minutes: {verdict})."]
    durations = [run_wall / runs for solver, (runs, run_wall, _) in per_solver.items()
                 for _ in range(planned_runs(meta, solver))]
    lines += ["", f"All {planned} planned runs of every solver (from the mean wall time per run above): "
                  f"{sum(durations) / 3600:.2f} core-hours; on a Dask cluster of N one-core workers "
                  "(`--scheduler`), with the longest run "
                  f"({max(durations) / 60:.1f} minutes) a lower bound:", "",
              "| N workers | " + " | ".join(str(n) for n in WORKERS) + " |",
              "|---" * (len(WORKERS) + 1) + "|",
              "| hours | " + " | ".join(f"{makespan(durations, n) / 3600:.2f}" for n in WORKERS) + " |"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", choices=sorted(EXPERIMENTS), default="adult", help="which Figure 2 panel")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--run", action="store_true", help="run it now")
    source.add_argument("--from", dest="run_dir", type=Path,
                        help="a run folder to report on (default: the committed results/paper/<experiment>)")
    parser.add_argument("--jobs", type=positive(int), default=2, help="processes for --run")
    parser.add_argument("--out", default="BENCHMARKS.md")
    args = parser.parse_args()
    experiment, section, target_s = EXPERIMENTS[args.experiment]
    if args.run:
        run_dir = run_now(experiment, args.jobs)
    else:
        run_dir = (args.run_dir or ROOT / "results" / "paper" / experiment).resolve()
    if not (run_dir / "meta.json").is_file():
        parser.error(f"{run_dir}: no meta.json (expected a run folder written by sbpbench run)")
    body = report(run_dir, target_s)
    committed = ROOT / "results" / "paper" / experiment
    if (committed / "meta.json").is_file() and run_dir != committed.resolve():
        body += "\n\n" + agreement(run_dir, committed)
    update_section(args.out, section, body)
    if args.experiment == "mnist":
        meta = json.loads((run_dir / "meta.json").read_text(encoding="utf-8"))
        commit = (meta.get("git_commit") or "not recorded")[:7]
        wall = whole_wall_s(meta)
        if wall is not None:
            hours = wall / 3600
            measured = (f"{hours:.2f} h wall: the whole `sbpbench run` of {experiment} with {meta.get('jobs', '?')} "
                        f"job(s) (commit {commit}, {str(meta['started'])[:10]})")
        else:  # a resumed or unfinished run: its runs laid on two one-core workers
            per_run: dict[str, list[float]] = defaultdict(list)
            for run in meta["runs"]:
                per_run[run["solver"]].append(run["wall_time_s"])
            durations = [sum(walls) / len(walls) for solver, walls in per_run.items()
                         for _ in range(planned_runs(meta, solver))]
            hours = makespan(durations, 2) / 3600
            measured = (f"{hours:.2f} h on 2 cores: the runs of {experiment} (commit {commit}, "
                        f"{str(meta['started'])[:10]}) laid on two one-core workers")
        update_target(args.out, "mnist-figure2", measured, hours < 1.0)
    print(body)


if __name__ == "__main__":
    main()
