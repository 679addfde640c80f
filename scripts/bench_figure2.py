"""Wall time of the full SBP paper Figure 2 on Adult (target: under one hour on 2 cores).

Figure 2 on Adult is ``configs/sbp-figure2-adult.yaml``: SBP, Pegasos, SDCA and SMO ten runs of
ten epochs each, the Perceptron ten runs of 100 epochs, on full Adult (32561 training rows),
with the test error measured at every checkpoint.

``--run`` runs it now (``sbpbench run configs/sbp-figure2-adult.yaml --jobs 2``, about 20
minutes) into a temporary folder; by default the script reads the run committed in
``results/paper/sbp-figure2-adult/`` (or ``--from RUN_DIR``), whose ``meta.json`` holds its
start and end times and each run's wall and training time. The table gives the whole
invocation's wall time and, per solver, the sums of its runs' wall times (training plus
measuring) and training times.

Usage: ``python scripts/bench_figure2.py [--run | --from RUN_DIR] [--out BENCHMARKS.md]``.
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

from bench_common import update_section

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "sbp-figure2-adult.yaml"
TARGET_S = 3600


def run_now(jobs: int) -> Path:
    """Run Figure 2 on Adult with ``jobs`` processes; returns the run folder."""
    out = Path(tempfile.mkdtemp(prefix="sbpbench-figure2-"))
    subprocess.run([sys.executable, "-m", "sbpbench", "run", str(CONFIG), "--results", str(out),
                    "--jobs", str(jobs)], check=True)
    return next(out.glob("*/*/meta.json")).parent


def report(run_dir: Path) -> str:
    """The BENCHMARKS.md section for the run in ``run_dir``."""
    meta = json.loads((run_dir / "meta.json").read_text())
    started = dt.datetime.fromisoformat(meta["started"])
    finished = dt.datetime.fromisoformat(meta["finished"])
    wall = (finished - started).total_seconds()
    per_solver: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for run in meta["runs"]:
        row = per_solver[run["solver"]]
        row[0] += 1
        row[1] += run["wall_time_s"]
        row[2] += run["train_time_s"]
    verdict = "met" if wall < TARGET_S else f"missed by {wall - TARGET_S:.0f} s"
    host = meta["host"]
    lines = [
        f"`{run_dir.relative_to(ROOT) if run_dir.is_relative_to(ROOT) else run_dir}`: "
        f"`sbpbench run configs/sbp-figure2-adult.yaml` with the `{meta['executor']}` executor on "
        f"{host['cpu_count']} cores (git commit {meta['git_commit'][:7] if meta['git_commit'] else 'not recorded'}), "
        f"{meta['started']} to {meta['finished']}.",
        "",
        "| solver | runs | sum of run wall times (s) | sum of training times (s) |",
        "|---|---|---|---|",
    ]
    for solver, (runs, run_wall, train) in per_solver.items():
        lines.append(f"| {solver} | {runs} | {run_wall:.0f} | {train:.0f} |")
    lines += ["", f"Whole invocation: {wall / 60:.1f} minutes wall (target: under 60 minutes: {verdict})."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--run", action="store_true", help="run Figure 2 on Adult now")
    source.add_argument("--from", dest="run_dir", type=Path, default=ROOT / "results" / "paper" / "sbp-figure2-adult",
                        help="a finished run folder to report on")
    parser.add_argument("--jobs", type=int, default=2, help="processes for --run")
    parser.add_argument("--out", default="BENCHMARKS.md")
    args = parser.parse_args()
    run_dir = run_now(args.jobs) if args.run else args.run_dir.resolve()
    if not (run_dir / "meta.json").is_file():
        parser.error(f"{run_dir}: no meta.json (expected a run folder written by sbpbench run)")
    body = report(run_dir)
    update_section(args.out, "SBP Figure 2 on Adult, whole (scripts/bench_figure2.py)", body)
    print(body)


if __name__ == "__main__":
    main()
