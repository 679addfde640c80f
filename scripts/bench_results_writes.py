"""The rate at which a run folder records runs, at the start and at the end of ``runs: 10000``.

Usage: PYTHONPATH=. python scripts/bench_results_writes.py [--runs 10000] [--block 1000]

(``PYTHONPATH=.``: time the checkout's code, not an installed sbpbench.)

Records ``--runs`` tiny fake runs (3 checkpoints each, no solver run) through
:class:`~sbpbench.results.store.ResultsWriter` into a temporary run folder, as ``sbpbench run``
records them (each appended and fsynced), then the final whole write, and prints the runs per
second and the CPU per run of the first and the last ``--block`` runs: with appending writes the
two are the same
(docs/performance.md, "Recording runs"), where rewriting both files after every run made the
last ones several times slower.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from sbpbench.results.store import ResultsWriter

#: Checkpoints of each fake run.
CHECKPOINTS = 3


def fake_run(index: int, solver: str = "sbp") -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A tiny run's checkpoint rows and ``meta.json`` summary, as the runner makes them (no solver run).

    Parameters
    ----------
    index : int
        The run index.
    solver : str
        The solver entry's label.
    """
    rows = [{"experiment": "tiny", "dataset": "adult", "solver": solver, "solver_name": "sbp", "params": "{}",
             "seed": 0, "run": index, "checkpoint": k, "iteration": 10 * (k + 1), "epoch": 0.1 * (k + 1),
             "kernel_evals": 1000.0 * (k + 1), "kernel_evals_computed": 900.0 * (k + 1), "eval_kernel_evals": 0,
             "train_time_s": 0.25 * (k + 1), "test_error": 0.5 / (k + 1), "objective": 1.0, "primal_objective": 2.0,
             "n_support": 5, "test_hinge_loss": 0.75} for k in range(CHECKPOINTS)]
    last = rows[-1]
    summary = {"experiment": "tiny", "solver": solver, "solver_name": "sbp", "params": "{}", "run": index,
               "status": "budget", "checkpoints": CHECKPOINTS, "iterations": last["iteration"],
               "kernel_evals": last["kernel_evals"], "train_time_s": last["train_time_s"],
               "test_error": last["test_error"], "wall_time_s": 1.0}
    return rows, summary


def record(folder: Path, runs: int, block: int) -> dict[str, float]:
    """Record ``runs`` fake runs into ``folder``: the runs per second (wall clock) and the
    milliseconds of this process's CPU per run of the first and the last ``block`` runs, and the
    seconds of the final whole write. The CPU time tells the writer's own cost apart from a disk
    that other processes keep busy (each run's two fsyncs wait for it)."""
    writer = ResultsWriter(folder, {"experiment": "tiny"})
    writer.flush()
    wall, cpu = [time.perf_counter()], [time.process_time()]
    for index in range(runs):
        writer.add_run(*fake_run(index))
        wall.append(time.perf_counter())
        cpu.append(time.process_time())
    writer.flush(finished=True)
    return {"first_rate": block / (wall[block] - wall[0]), "last_rate": block / (wall[-1] - wall[-1 - block]),
            "first_cpu_ms": 1000 * (cpu[block] - cpu[0]) / block,
            "last_cpu_ms": 1000 * (cpu[-1] - cpu[-1 - block]) / block, "end_s": time.perf_counter() - wall[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--block", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        got = record(Path(folder), args.runs, min(args.block, args.runs))
    print(f"{args.runs} runs: first {args.block} at {got['first_rate']:.0f} runs/s ({got['first_cpu_ms']:.2f} ms "
          f"of CPU each), last {args.block} at {got['last_rate']:.0f} runs/s ({got['last_cpu_ms']:.2f} ms); "
          f"final write {got['end_s']:.2f} s")


if __name__ == "__main__":
    main()
