"""The runner: the only place that decides when to measure.

For every solver and run of an experiment it creates the solver with its own random
generator, advances it checkpoint by checkpoint, and measures at each checkpoint: test
error through the kernel's measurement path (counted apart, excluded from training time),
the solver's objectives, and the counters.

Checkpoints are spaced logarithmically in ``kernel_evals`` (``per_decade`` per decade,
default ten), plus every epoch boundary (``n`` iterations) and the end of the budget.
For solvers that do not count kernel evaluations the log spacing is in iterations.
A solver stops only between iterations, so a checkpoint lands on the first iteration
boundary at or after its target.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sbpbench.experiment.config import Experiment, SolverSpec
from sbpbench.problem import Problem
from sbpbench.solvers import SOLVERS, Solver


def run_rng(seed: int, run: int, solver_name: str) -> np.random.Generator:
    """The generator of one run, derived from (experiment seed, run index, solver name) only."""
    return np.random.default_rng([seed, run, zlib.crc32(solver_name.encode())])


def next_log_target(current: float, per_decade: int) -> float:
    """The smallest ``10 ** (k / per_decade)`` (k integer) strictly above ``current``."""
    if current < 1:
        return 1.0
    k = math.floor(math.log10(current) * per_decade + 1e-9) + 1
    target = 10.0 ** (k / per_decade)
    while target <= current:
        k += 1
        target = 10.0 ** (k / per_decade)
    return target


@dataclass
class RunResult:
    """What one run produced: its checkpoint rows and its summary for ``meta.json``."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]


#: Called after every checkpoint with (fraction of budget done, row).
Progress = Callable[[float, dict[str, Any]], None]


def run_one(exp: Experiment, problem: Problem, spec: SolverSpec, run: int,
            progress: Progress | None = None) -> RunResult:
    """Run one solver once on a problem, measuring at every checkpoint.

    Parameters
    ----------
    exp : Experiment
        The experiment (budget, checkpoints, seed, names).
    problem : Problem
        The problem; its kernel counters are reset here.
    spec : SolverSpec
        The solver and its parameters.
    run : int
        Run index (selects the random stream).
    progress : callable, optional
        Told about every checkpoint.

    Returns
    -------
    RunResult
        Rows and a summary whose ``status`` is ``done`` (the solver finished or the target
        test error was reached), ``budget``, ``diverged`` or ``failed: <reason>``.
    """
    n = problem.n
    kernel = problem.kernel
    kernel.reset()
    budget = spec.budget or exp.budget
    max_it = round(budget.epochs * n) if budget.epochs is not None else math.inf
    max_kev = budget.kernel_evals if budget.kernel_evals is not None else math.inf
    max_sec = budget.seconds if budget.seconds is not None else math.inf
    base = {
        "experiment": exp.name, "dataset": exp.dataset.label, "solver": spec.label,
        "solver_name": spec.name, "params": spec.describe(), "seed": exp.seed, "run": run,
    }
    rows: list[dict[str, Any]] = []
    train_time = 0.0
    status = "budget"
    started = time.time()
    try:
        solver = SOLVERS[spec.name].create(problem, run_rng(exp.seed, run, spec.name), spec.solver_params())
        while True:
            target_it = max_it
            if exp.checkpoints.epochs:
                target_it = min(target_it, (solver.iteration // n + 1) * n)
            if solver.counts_kernel_evals:
                target_kev = min(max_kev, next_log_target(kernel.kernel_evals, exp.checkpoints.per_decade))
            else:
                target_kev = max_kev
                target_it = min(target_it, math.ceil(next_log_target(solver.iteration, exp.checkpoints.per_decade)))
            before = (solver.iteration, kernel.kernel_evals)
            t0 = time.perf_counter()
            finished = solver.advance(target_it, target_kev, t0 + (max_sec - train_time))
            train_time += time.perf_counter() - t0
            if (solver.iteration, kernel.kernel_evals) == before and not finished:
                break  # out of time before another iteration
            row = _measure(problem, solver, train_time, base, len(rows))
            if not _finite(row):
                status = "diverged"
                break
            rows.append(row)
            if progress is not None:
                progress(max(solver.iteration / max_it, kernel.kernel_evals / max_kev, train_time / max_sec), row)
            if finished or (budget.test_error is not None and row["test_error"] <= budget.test_error):
                status = "done"
                break
            if solver.iteration >= max_it or row["kernel_evals"] >= max_kev or train_time >= max_sec:
                break
    except Exception as exc:  # a failing run must not take the others down
        status = f"failed: {type(exc).__name__}: {exc}"
    return RunResult(rows, _summary(exp, spec, run, status, rows, time.time() - started))


def failed_result(exp: Experiment, spec: SolverSpec, run: int, reason: str) -> RunResult:
    """The result of a run that could not execute at all (e.g. its worker was lost): no rows."""
    return RunResult([], _summary(exp, spec, run, f"failed: {reason}", [], 0.0))


def _summary(exp: Experiment, spec: SolverSpec, run: int, status: str, rows: list[dict[str, Any]],
             wall: float) -> dict[str, Any]:
    last = rows[-1] if rows else {}
    return {
        "experiment": exp.name, "solver": spec.label, "solver_name": spec.name, "params": spec.describe(),
        "run": run,
        "status": status,
        "checkpoints": len(rows),
        "iterations": last.get("iteration", 0),
        "kernel_evals": last.get("kernel_evals", 0),
        "train_time_s": last.get("train_time_s", 0.0),
        "test_error": last.get("test_error"),
        "wall_time_s": round(wall, 3),
    }


def _measure(problem: Problem, solver: Solver, train_time: float, base: dict, index: int) -> dict[str, Any]:
    snap = solver.snapshot()
    kernel = problem.kernel
    counted = solver.counts_kernel_evals
    row = {
        **base,
        "checkpoint": index,
        "iteration": solver.iteration,
        "epoch": solver.iteration / problem.n,
        "kernel_evals": kernel.kernel_evals if counted else math.nan,
        "kernel_evals_computed": kernel.kernel_evals_computed if counted else math.nan,
        "train_time_s": train_time,
        "test_error": snap.test_error(problem),
        "objective": snap.objective,
        "primal_objective": snap.primal_objective,
        "n_support": snap.n_support,
    }
    row["eval_kernel_evals"] = kernel.eval_kernel_evals
    row.update(snap.extra)
    return row


#: Columns that are never measurements (NaN there means "unknown", not divergence).
_NOT_MEASURED = {"kernel_evals", "kernel_evals_computed", "epoch", "train_time_s"}


def _finite(row: dict[str, Any]) -> bool:
    return all(math.isfinite(v) for k, v in row.items() if isinstance(v, float) and k not in _NOT_MEASURED)
