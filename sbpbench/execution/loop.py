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

Honest timing: no compilation inside the clock. numba compiles a hot loop on its first call
in a process with new argument types (or loads it from its on-disk cache, after the first
run since an install), which would land in the first checkpoint's ``train_time_s`` (SBP's
first iteration took 1.6 s instead of 0.3 ms). So before a solver's clock starts, every
compiled function its run will call is compiled or loaded with the argument types of the run:

* the kernel's threaded row loops, by :meth:`WarmUps.warm_up` for a solver that counts kernel
  evaluations, after the small run below: where the run's kernel splits full-length rows over
  threads, :meth:`Kernel.load_loops <sbpbench.kernels.Kernel.load_loops>` computes one row by
  the parallel loop of each form of full-length row (a full row, ``n`` entries) the small run
  computed (rows are always read-only arrays, so their type does not depend on the cache); the
  serial row loops are the small run's own; a solver that does not count kernel evaluations
  reads no kernel row (the solver contract holds it to that), so its run loads none;
* the solver's own loops, by :meth:`WarmUps.warm_up` before the run's solver is made: the same
  solver with the same parameters runs :data:`WARM_UP_ITERATIONS` iterations on a small
  problem of the same kind (:meth:`~sbpbench.problem.Problem.subset`: the first
  :data:`WARM_UP_ROWS_PER_CLASS` training points of each class and some test points, the
  same lambda, nu and bias, a kernel stored as the real one is, so with the same argument
  types), from its own generator, and takes a snapshot and its test error (measuring is
  not timed, but so the first checkpoint's measurement is warm too). The real problem's
  kernel counters, its cache and the run's generator are never touched, so the curves
  are those of a run without warm-up; only ``train_time_s`` (and ``wall_time_s``) change.
  A few iterations reach every solver's steady-state paths (SBP's windowed water level
  from its second iteration); what only a long run reaches, the warm-up solver's
  :meth:`~sbpbench.solvers.base.Solver.warm_up_rare_paths` reaches (SMO's shrinking).

Solver code is kept in its place (:mod:`sbpbench.execution.guard`): whatever it raises
(``SystemExit`` and a ``KeyboardInterrupt`` that is not the user's Ctrl-C included) ends its run
``failed: <reason>``, and so does ``os._exit`` or a write into the problem's data, which is
read-only (the reason names the solver); a snapshot whose ``extra`` names a column the runner measures
(:data:`~sbpbench.solvers.base.MEASURED_COLUMNS`) fails the run at that snapshot; and under a
seconds budget, the warm-up and every ``advance`` run under a :func:`~sbpbench.execution.guard.watchdog`
of :func:`step_limit` seconds, so that a step that never returns ends its run instead of hanging
it; an ``advance`` that does no iteration before its limits (a step must do one, or finish the
solver) fails its run too.

The warm-up runs once for each (solver, parameters, problem kind, kernel layout) per
:class:`WarmUps` record, which every executor hands to :func:`run_one` (one per worker process,
shared under a lock by the threads of a Dask worker; the sequential executor's own); on a warm
numba cache it costs milliseconds. ``tests/test_timing.py`` checks,
with numba's compile events, that no compilation starts inside a timed ``advance``.
"""

from __future__ import annotations

import math
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sbpbench.execution import guard
from sbpbench.experiment.config import Experiment, SolverSpec
from sbpbench.problem import Problem, wrote_read_only
from sbpbench.solvers import SOLVERS, ProblemKind, Solver
from sbpbench.solvers.base import Budget

#: Training points of each class in the warm-up problem (:meth:`WarmUps.warm_up`); it has at most
#: twice as many test points.
WARM_UP_ROWS_PER_CLASS = 16
#: Iterations of the warm-up run: a few, since a step of some solvers is a whole fit or pass
#: (the random-features solver doubles its features at every one); solvers with
#: ``one_step_per_advance`` are advanced once per iteration.
WARM_UP_ITERATIONS = 4
#: Least grace, in seconds, a step gets past the seconds budget before its run is ended (:func:`step_limit`).
WATCHDOG_GRACE_S = 10.0


def step_limit(seconds_left: float, budget_seconds: float) -> float:
    """Seconds a call into the solver (``advance``, the warm-up) may take before the run is ended.

    The seconds budget left plus a grace: the larger of :data:`WATCHDOG_GRACE_S` and the
    whole seconds budget, since a solver stops only between its steps and a step may be long
    (a whole fit, a pass). So a run ends at most about twice its seconds budget (or 10 s past
    it) after it starts, whatever its steps do. Infinite without a seconds budget.
    """
    return seconds_left + max(WATCHDOG_GRACE_S, budget_seconds)


def run_rng(seed: int, run: int, solver_name: str) -> np.random.Generator:
    """The generator of one run, derived from (experiment seed, run index, solver name) only.

    ``solver_name`` names the random stream: the solver's own name, or the solver its
    ``random_stream`` names (:func:`stream_of`).
    """
    return np.random.default_rng([seed, run, zlib.crc32(solver_name.encode())])


def stream_of(solver_name: str) -> str:
    """The random stream a solver's runs draw from: its ``random_stream``, else its own name."""
    return SOLVERS[solver_name].random_stream or solver_name


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

#: Told the solver's name as a warm-up not done before where it runs starts (numba compiles, or
#: loads from its disk cache, the solver's code), and None as it ends (:meth:`WarmUps.warm_up`).
WarmUpNotice = Callable[[str | None], None]

class WarmUps:
    """The warm-ups done for the runs of one process (or one executor): each kind of run warms up once.

    A kind is (solver, parameters, problem kind, kernel layout). The threads of a Dask worker
    share one (under its lock); the sequential executor and each worker process own theirs.
    """

    def __init__(self) -> None:
        #: Kind of run -> the full-length rows its small run computed (:meth:`_run_small`).
        self._done: dict[tuple, frozenset[str]] = {}
        self._lock = threading.Lock()

    def warm_up(self, problem: Problem, spec: SolverSpec, seconds: float = math.inf,
                notice: WarmUpNotice | None = None) -> None:
        """Compile (or load) the code a run of ``spec`` on ``problem`` calls, before any clock starts.

        Runs the solver for :data:`WARM_UP_ITERATIONS` iterations on a small problem of the
        same kind, from a generator of its own, then its
        :meth:`~sbpbench.solvers.base.Solver.warm_up_rare_paths`, and measures it once (see
        the module docstring); nothing when this kind of run was warmed up here before. For
        a solver that counts kernel evaluations, then loads the threaded row loops of
        ``problem``'s kernel for the forms of full-length row the small run computed, where its
        rows are split over threads (:meth:`~sbpbench.kernels.Kernel.load_loops`: nothing
        counted or cached; the serial loops are the small run's); ``problem`` is otherwise not touched.

        Parameters
        ----------
        problem : Problem
            The problem of the run.
        spec : SolverSpec
            The solver and its parameters.
        seconds : float, optional
            The run's seconds budget: the warm-up's deadline, and its
            :func:`~sbpbench.execution.guard.watchdog` with :func:`step_limit`.
        notice : callable, optional
            Told the solver's name as the warm-up starts and None as it ends (not called when
            this kind of run was warmed up here before), so that a console can say what a
            long first wait is.

        Raises
        ------
        BaseException
            What the solver raises on the small problem (the run then fails with that reason),
            :class:`~sbpbench.execution.guard.StepTimeout` when it outlives its limit.
        """
        params = spec.solver_params()
        key = (spec.name, params, ProblemKind.of(problem), problem.kernel.layout)
        with self._lock:
            if key not in self._done:
                self._done[key] = self._run_small(problem, spec, params, seconds, notice)
            if SOLVERS[spec.name].counts_kernel_evals:  # once per kernel: its rows' threading depends on its size
                problem.kernel.load_loops(self._done[key])

    @staticmethod
    def _run_small(problem: Problem, spec: SolverSpec, params: Any, seconds: float,
                   notice: WarmUpNotice | None) -> frozenset[str]:
        """The warm-up's small run (:meth:`warm_up`); the full-length rows its kernel computed
        (:attr:`Kernel.full_length_rows <sbpbench.kernels.Kernel.full_length_rows>`)."""
        y = problem.y
        k = WARM_UP_ROWS_PER_CLASS
        rows = np.sort(np.concatenate([np.flatnonzero(y > 0)[:k], np.flatnonzero(y <= 0)[:k]]))
        small = problem.subset(rows, np.arange(min(problem.test_y.size, 2 * k)))
        deadline = time.perf_counter() + seconds
        if notice is not None:
            notice(spec.name)
        try:
            with guard.watchdog(step_limit(seconds, seconds), f"the warm-up of solver {spec.name!r} did not "
                                f"end within {step_limit(seconds, seconds):g} s (its seconds budget plus a grace)"):
                solver = SOLVERS[spec.name].create(small, np.random.default_rng(0), params)
                steps = WARM_UP_ITERATIONS if solver.one_step_per_advance else 1  # those step once per call
                for _ in range(steps):
                    if solver.advance(WARM_UP_ITERATIONS, math.inf, deadline):
                        break
                solver.warm_up_rare_paths()
                solver.snapshot().test_error(small)
        finally:
            if notice is not None:
                notice(None)
        return frozenset(small.kernel.full_length_rows)


def run_one(exp: Experiment, problem: Problem, spec: SolverSpec, run: int,
            progress: Progress | None = None, warm_ups: WarmUps | None = None,
            notice: WarmUpNotice | None = None) -> RunResult:
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
    warm_ups : WarmUps, optional
        The warm-ups done for earlier runs where this one runs (the executor's); when not
        given, the run warms up first whatever was done before.
    notice : callable, optional
        Told about its warm-up (:meth:`WarmUps.warm_up`).

    Returns
    -------
    RunResult
        Rows and a summary whose ``status`` is ``done`` (the solver finished or the target
        test error was reached), ``budget``, ``diverged`` or ``failed: <reason>``: whatever
        the solver raised (``SystemExit`` and ``KeyboardInterrupt`` included), a snapshot
        column shadowing a measured one, or a step that outlived :func:`step_limit`.

    Raises
    ------
    KeyboardInterrupt
        Only the user's Ctrl-C (a SIGINT received meanwhile; see :mod:`~sbpbench.execution.guard`).
    """
    n = problem.n
    kernel = problem.kernel
    kernel.reset()
    budget = spec.budget or exp.budget
    max_it, max_kev, max_sec = budget.limits(n)
    base = {
        "experiment": exp.name, "dataset": exp.dataset.label, "solver": spec.label,
        "solver_name": spec.name, "params": spec.describe(), "seed": exp.seed, "run": run,
    }
    rows: list[dict[str, Any]] = []
    train_time = 0.0
    status = "budget"
    started = time.perf_counter()  # the monotonic clock: the wall clock may step meanwhile
    # the user's Ctrl-C told from a solver's KeyboardInterrupt, and os._exit in the solver's code failing its run
    with guard.sigints_counted(), guard.exits_refused(f"solver {spec.name!r}"):
        interrupts = guard.sigints()
        try:
            (warm_ups or WarmUps()).warm_up(problem, spec, max_sec, notice)
            solver = SOLVERS[spec.name].create(problem, run_rng(exp.seed, run, stream_of(spec.name)),
                                               spec.solver_params())
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
                deadline, limit = t0 + (max_sec - train_time), step_limit(max_sec - train_time, max_sec)
                with guard.watchdog(limit, f"a step of solver {spec.name!r} did not return within {limit:.3g} s "
                                           f"(the seconds budget left plus a grace)"):
                    finished = solver.advance(target_it, target_kev, deadline)
                train_time += time.perf_counter() - t0
                if (solver.iteration, kernel.kernel_evals) == before and not finished:
                    if rows and time.perf_counter() >= deadline:
                        break  # out of time before another iteration
                    raise guard.SolverFault(f"solver {spec.name!r}: advance() did no iteration (each step must "
                                            "do at least one, or finish the solver)")
                row = _measure(problem, solver, train_time, base, len(rows))
                if not _finite(row):
                    status = "diverged"
                    break
                rows.append(row)
                if progress is not None:
                    progress(max(solver.iteration / max_it, kernel.kernel_evals / max_kev, train_time / max_sec,
                                 solver.own_progress()), row)
                if finished or _target_reached(budget, row):
                    status = "done"
                    break
                if solver.iteration >= max_it or row["kernel_evals"] >= max_kev or train_time >= max_sec:
                    break
        except BaseException as exc:  # a failing run must not take the others down, whatever it raised
            if guard.users_interrupt(exc, interrupts):
                raise
            status = f"failed: {_failure(exc, spec.name)}"
    return RunResult(rows, _summary(exp, spec, run, status, rows, time.perf_counter() - started))


def _failure(exc: BaseException, solver: str) -> str:
    """A failed run's reason: ``Type: message`` (``Type`` alone without a message); for
    ``SystemExit`` and ``KeyboardInterrupt`` that the run's code raised it (not the user), and
    for a write into the problem's read-only data (:func:`~sbpbench.problem.wrote_read_only`)
    a :class:`~sbpbench.execution.guard.SolverFault` naming ``solver``."""
    if wrote_read_only(exc):
        first = " ".join(str(exc).split())[:200]
        return (f"SolverFault: solver {solver!r} wrote into the problem's data, which is read-only for every "
                f"solver (copy an array before changing it): {type(exc).__name__}: {first}")
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if isinstance(exc, Exception) else f"{text} (raised by the solver's code)"


def _target_reached(budget: Budget, row: dict[str, Any]) -> bool:
    """Whether a checkpoint's measures reach the budget's targets (test error, primal objective)."""
    return ((budget.test_error is not None and row["test_error"] <= budget.test_error)
            or (budget.primal_objective is not None and row["primal_objective"] <= budget.primal_objective))


def failed_result(exp: Experiment, spec: SolverSpec, run: int, reason: str) -> RunResult:
    """The result of a run that could not execute at all (e.g. its worker was lost): no rows."""
    return RunResult([], _summary(exp, spec, run, f"failed: {reason}", [], 0.0))


def interrupted_result(exp: Experiment, spec: SolverSpec, run: int) -> RunResult:
    """The record of a run stopped by Ctrl-C before it finished: status ``interrupted``, no rows."""
    return RunResult([], _summary(exp, spec, run, "interrupted", [], 0.0))


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
        **snap.test_measures(problem),
        "objective": snap.objective,
        "primal_objective": snap.primal_objective,
        "n_support": snap.n_support,
    }
    if problem.validation_y is not None:
        row["validation_error"] = snap.validation_error(problem)
    row["eval_kernel_evals"] = kernel.eval_kernel_evals
    if shadowed := snap.shadowed():
        raise guard.SolverFault(f"solver {solver.name!r}: its snapshot's extra column {shadowed[0]!r} is one that "
                                "sbpbench measures for every solver (give it another name)")
    row.update(snap.extra)
    return row


#: Columns that are never measurements (NaN there means "unknown", not divergence).
_NOT_MEASURED = {"kernel_evals", "kernel_evals_computed", "epoch", "train_time_s"}


def _finite(row: dict[str, Any]) -> bool:
    return all(math.isfinite(v) for k, v in row.items() if isinstance(v, float) and k not in _NOT_MEASURED)
