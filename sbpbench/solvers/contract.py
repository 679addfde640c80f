"""The solver contract: the checks every solver passes, built-in or external.

``tests/test_solver_contract.py`` runs them on every registered solver, and ``sbpbench
check-solver`` on the solvers of a file (as ``benchopt test`` does), in other processes
(:func:`isolated_verdicts`: a solver that exits or hangs fails a check, not the checker). Each check takes a
:class:`Case` (a solver, a kind of problem, parameter values) and raises
:class:`ContractViolation` saying what failed. On small real data (rows of the bundled Adult
copy) with each kernel it accepts, with and without a bias where it takes one, with its
defaults and with each boolean parameter flipped and each other choice of a parameter with
choices, a solver:

* declares its parameters as a checked frozen dataclass (:func:`check_declarations`);
* honours each of the three limits of ``advance`` (iterations, kernel evaluations, the
  deadline): no step starts at or beyond a limit, ``advance`` ends only at a limit or when the
  solver finishes, and exactly at the iteration limit unless the solver declares that its steps
  (whole passes or fits) go past it;
* follows the same trajectory from the same seed, twice in this process and in another
  process with another ``PYTHONHASHSEED`` (:func:`other_process_trajectories`), whether or not
  it is measured on the way;
* takes snapshots without training kernel evaluations, whose ``extra`` columns name no column
  sbpbench measures itself (:data:`~sbpbench.solvers.base.MEASURED_COLUMNS`);
* takes every kernel value from the counting kernel, value by value: on a :class:`SealedKernel`,
  whose data attributes hold other points than the values it hands out, it follows the same
  trajectory, and the kernel computed no value it did not count as computed;
* counts what its cost model says (``expected_kernel_evals``), with or without the row cache;
* writes into none of the problem's arrays (:func:`check_data_left_unwritten`; the runner hands
  them out read-only);
* is refused, when it is made for a kind of problem, exactly as
  :meth:`~sbpbench.solvers.base.Solver.refuse` refuses it (the same refusal ends a config at
  validation); a solver may accept every kind of problem.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import numpy as np

from sbpbench.data.sources.adult import load_bundled
from sbpbench.data.split import Split
from sbpbench.kernels import Kernel, KernelSpec
from sbpbench.problem import Problem, wrote_read_only
from sbpbench.solvers import base
from sbpbench.solvers.base import ProblemKind, Solver, SolverParams

#: Training and test rows of the contract's problems, lambda, nu and the Gaussian kernel's sigma^2.
N, N_TEST = 150, 60
LAMBDA, NU, SIGMA2 = 1.0 / N, 0.05, 10.0
INF = math.inf
#: Iterations after which a limit check stops a solver that neither reaches its limit nor finishes.
CAP = 40 * N
#: Iteration limits of a measured trajectory (checkpoints).
CHECKPOINTS = (1, 2, 3, 5, 9, 17, 33, 65, N, 2 * N, 3 * N)
#: The seed of the trajectories compared, and the seed of the other rows a :class:`SealedKernel` shows.
SEED, DECOY_SEED = 11, 101


class ContractViolation(AssertionError):
    """A solver broke its contract; the message says how."""


def _require(holds: bool, message: str) -> None:
    if not holds:
        raise ContractViolation(message)


def adult_rows(n: int = N, seed: int = 3, test: int = N_TEST):
    """``n`` training rows of the bundled a9a and ``test`` rows of a9a.t, drawn without replacement.

    Returns ``(X, y, test_X, test_y)`` with CSR matrices: new copies at every call, so that
    each case has data of its own, whatever an earlier case's solver did to its own.
    """
    return tuple(part.copy() for part in _adult_rows(n, seed, test))


@cache
def _adult_rows(n: int, seed: int, test: int):
    """:func:`adult_rows`, drawn once per process (the draws are kept, never handed out)."""
    train, held_out = load_bundled()
    idx = np.random.default_rng(seed).choice(train.X.shape[0], n, replace=False)
    tidx = np.random.default_rng(seed + 1).choice(held_out.X.shape[0], test, replace=False)
    return train.X[idx], train.y[idx], held_out.X[tidx], held_out.y[tidx]


class SealedKernel(Kernel):
    """A counting kernel whose data attributes hold other points than those its values come from.

    Its rows, entries, block sources and decision values are those of the training points
    ``X``; its ``X``, ``sq`` and ``store`` (the data a solver could compute kernel values from
    by itself) are those of ``decoy``, other points stored the same way. A solver that takes
    every kernel value from the kernel follows the same trajectory on it as on a plain
    kernel; one that computes some itself (numpy on ``problem.kernel.X``) gets the decoy's
    values and departs from it. Python hides nothing from a determined solver (the true
    points are in ``_values``); this catches a solver that reaches around the kernel's API,
    not one that reads its private attributes.

    Attributes
    ----------
    served : int
        Values computed for the solver (rows and entries, and the rows handed out as block
        sources), held against ``kernel_evals_computed``.
    """

    def __init__(self, X, decoy, spec: KernelSpec):
        super().__init__(X, spec)
        shown = Kernel(decoy, spec)
        _require(shown.layout == self.layout and shown.X.shape == self.X.shape,
                 f"the decoy rows are stored as {shown.layout}, the training rows as {self.layout}")
        self.store, self.X, self.sq = shown.store, shown.X, shown.sq
        self.served = 0  # the loads of the compiled loops computed a few values

    def reset(self, keep_cache: bool = False) -> None:
        """Zero the counters, :attr:`served` with them, and empty the row cache (unless ``keep_cache``)."""
        super().reset(keep_cache)
        self.served = 0

    def _compute(self, i: int, idx: np.ndarray, parallel: bool | None = None) -> np.ndarray:
        self.served += idx.size
        return super()._compute(i, idx, parallel)

    def row_blocks(self, i: int) -> Any:
        source = super().row_blocks(i)
        if isinstance(source, tuple):  # a block source: the caller's loop computes the row
            self.served += self.n
        return source


def make_problem(kernel: str, bias: bool, defines=("lambda", "nu"), cache_mb: float = 0.0,
                 sealed: bool = False, writable: bool = False) -> Problem:
    """:func:`adult_rows` as a problem of the given kind (lambda = 1/n and nu = 0.05 where defined).

    With ``sealed``, its kernel is a :class:`SealedKernel` showing other rows of Adult. With
    ``writable``, its arrays (:meth:`~sbpbench.problem.Problem.arrays`, read-only as the runner
    hands them out) take writes, so that :func:`check_data_left_unwritten` can see what a
    solver writes.
    """
    X, y, tX, ty = adult_rows()
    train, test = Split(X, y), Split(tX, ty)
    spec = KernelSpec(kernel, SIGMA2, cache_mb)
    problem = Problem.build(train, test, spec, LAMBDA if "lambda" in defines else None,
                            NU if "nu" in defines else None, bias)
    if sealed:
        problem.kernel = SealedKernel(X, adult_rows(seed=DECOY_SEED)[0], spec)
    if writable:
        for array in problem.arrays().values():  # views of this case's own copies (adult_rows)
            array.flags.writeable = True
    return problem


@dataclass(frozen=True)
class Case:
    """A solver on a kind of problem with some parameter values."""

    cls: type[Solver[Any]]
    kernel: str
    bias: bool
    values: dict[str, Any]

    @property
    def id(self) -> str:
        """``NAME-KERNEL[-bias][-k=v,...]``."""
        shown = ",".join(f"{k}={v}" for k, v in self.values.items())
        return f"{self.cls.name}-{self.kernel}{'-bias' if self.bias else ''}{'-' + shown if shown else ''}"

    def make(self, seed: int = 0, cache_mb: float = 0.0, sealed: bool = False,
             writable: bool = False) -> tuple[Problem, Solver[Any]]:
        """A problem of this kind (``sealed``: on a :class:`SealedKernel`; ``writable``: arrays
        that take writes) and the solver for it, made as the runner makes it."""
        problem = make_problem(self.kernel, self.bias, cache_mb=cache_mb, sealed=sealed, writable=writable)
        solver = self.cls.create(problem, np.random.default_rng(seed), self.cls.Params(**self.values))
        _require(isinstance(solver.params, self.cls.Params) and solver.name == self.cls.name,
                 f"create() made {type(solver).__name__} with {type(solver.params).__name__}")
        return problem, solver


def variants(cls: type[Solver[Any]]) -> list[dict[str, Any]]:
    """Parameter settings to try: the defaults, each boolean flipped, each other choice."""
    found: list[dict[str, Any]] = [{}]
    for name, p in cls.Params.declared().items():
        if p.type is bool:
            found.append({name: not p.default})
        found += [{name: choice} for choice in p.choices or () if choice != p.default]
    return found


def cases(cls: type[Solver[Any]]) -> list[Case]:
    """Every kind of problem (kernel, bias) and variant the solver accepts."""
    found = []
    for kernel in ("gaussian", "linear"):
        for bias in (False, True):
            kind = ProblemKind(kernel, bias, frozenset({"lambda", "nu"}))
            found += [Case(cls, kernel, bias, values) for values in variants(cls)
                      if cls.refuse(kind, cls.Params(**values)) is None]
    return found


def record_steps(solver: Solver[Any], clock: Callable[[], float] = time.perf_counter) -> list[tuple]:
    """Log ``(iteration, kernel_evals, clock(), iterations allowed, kernel_evals allowed)`` before every step."""
    log: list[tuple] = []
    step = solver._step

    def logged(iterations: float, kernel_evals: float) -> bool:
        log.append((solver.iteration, solver.kernel.kernel_evals, clock(), iterations, kernel_evals))
        return step(iterations, kernel_evals)

    solver._step = logged  # type: ignore[method-assign]  # the instance attribute shadows the method
    return log


def state(problem: Problem, solver: Solver[Any]) -> str:
    """Everything observable about a solver's trajectory so far, exactly (``repr`` of the floats)."""
    snap = solver.snapshot()
    extra = {k: v for k, v in snap.extra.items() if not k.endswith("_s")}  # fit times vary
    return repr((solver.iteration, problem.kernel.kernel_evals, solver.finished, snap.support.tolist(),
                 snap.coef.tolist(), snap.bias, snap.objective, snap.primal_objective, extra,
                 snap.test_error(problem)))


# ----------------------------------------------------------------------------- declarations


def check_declarations(cls: type[Solver[Any]]) -> None:
    """A documented solver whose parameters are a frozen dataclass of checked ``param`` fields."""
    _require(issubclass(cls, Solver) and bool((cls.__doc__ or "").strip()), f"{cls.__name__}: no docstring")
    _require(issubclass(cls.Params, SolverParams) and cls.Params.__dataclass_params__.frozen,  # type: ignore[attr-defined]
             f"{cls.__name__}.Params: not a frozen SolverParams dataclass")
    defaults = cls.Params()
    for pname, p in cls.Params.declared().items():
        _require(p.type in (int, float, bool, str) and isinstance(p.default, p.type) and bool(p.doc),
                 f"parameter {pname!r}: a documented int, float, bool or str with a default of its type expected")
        _require(getattr(defaults, pname) == p.default and p.error(p.default) is None,
                 f"parameter {pname!r}: its default fails its own check")
        try:
            setattr(defaults, pname, p.default)
            raise ContractViolation(f"parameter {pname!r}: the parameters can be changed after they are made")
        except dataclasses.FrozenInstanceError:
            pass
        candidates: list[Any] = ["no such choice"] if p.type is str else [] if p.type is bool else [-1, 0, 2**31]
        bad = [v for v in candidates if p.error(v) is not None]
        if p.check is not None or p.choices is not None:
            _require(bool(bad), f"parameter {pname!r}: its check refuses none of {candidates}")
        for value in bad:  # an instance is checked when it is made
            try:
                cls.Params(**{pname: value})
            except ValueError as exc:
                _require(pname in str(exc), f"parameter {pname!r}: the refusal of {value!r} does not name it")
            else:
                raise ContractViolation(f"parameter {pname!r}: {value!r} accepted when the parameters are made")


# ----------------------------------------------------------------------------- limits


def check_iteration_limit(case: Case) -> None:
    """No step starts at or beyond the iteration limit; ``advance`` ends at it (or finished)."""
    problem, solver = case.make()
    log = record_steps(solver)
    for limit in (1, 7, N // 2, 2 * N):
        start = len(log)
        while not solver.advance(limit, INF, INF) and solver.iteration < limit:
            _require(solver.one_step_per_advance, f"advance ended before iteration {limit} without finishing")
        _require(solver.finished or solver.iteration >= limit, f"stopped at iteration {solver.iteration} < {limit}")
        if solver.stops_at_iteration_limit:
            _require(solver.finished or solver.iteration == limit,
                     f"went to iteration {solver.iteration} past the limit {limit}")
        for it, _, _, allowed_it, allowed_kev in log[start:]:
            _require(it < limit and allowed_it == limit - it and allowed_kev == INF,
                     f"a step started at iteration {it} with limit {limit}")
        done = (solver.iteration, problem.kernel.kernel_evals, len(log))
        _require(solver.advance(limit, INF, INF) == solver.finished, "advance at the limit reports progress")
        _require((solver.iteration, problem.kernel.kernel_evals, len(log)) == done, "advance at the limit did work")
    _require(bool(log) and log[0][:2] == (0, 0), "the first step did not start from iteration 0 and 0 evaluations")


def check_kernel_evaluation_limit(case: Case) -> None:
    """No step starts at or beyond the kernel-evaluation limit; ``advance`` ends once it is reached."""
    problem, solver = case.make()
    k = problem.kernel
    log = record_steps(solver)
    for limit in (1, 3 * N, 20 * N):
        start = len(log)
        while not (solver.advance(CAP, limit, INF) or k.kernel_evals >= limit or solver.iteration >= CAP):
            _require(solver.one_step_per_advance, f"advance ended below {limit} kernel evaluations")
        for it, evals, _, allowed_it, allowed_kev in log[start:]:
            _require(it < CAP and evals < limit and (allowed_it, allowed_kev) == (CAP - it, limit - evals),
                     f"a step started at {evals} kernel evaluations with limit {limit}")
        if solver.counts_kernel_evals:
            _require(solver.finished or k.kernel_evals >= limit or solver.iteration >= CAP,
                     f"stopped at {k.kernel_evals} < {limit} kernel evaluations")
        else:  # never asks the counting kernel for training values
            _require(k.kernel_evals == k.kernel_evals_computed == 0,
                     "counts_kernel_evals is False but the kernel counted evaluations")
    if solver.counts_kernel_evals and not solver.finished:
        _require(20 * N <= k.kernel_evals, f"{k.kernel_evals} kernel evaluations, below the limit {20 * N}")


@contextmanager
def _clock_seen() -> Iterator[list[float]]:
    """While open, ``advance`` reads the clock through a function that keeps its last reading."""
    seen = [math.nan]

    def clock() -> float:
        seen[0] = time.perf_counter()
        return seen[0]

    before = base.time
    base.time = types.SimpleNamespace(perf_counter=clock)  # type: ignore[assignment]
    try:
        yield seen
    finally:
        base.time = before


def check_deadline(case: Case) -> None:
    """No step starts at or past the deadline (as ``advance`` read the clock)."""
    problem, solver = case.make()
    with _clock_seen() as seen:
        log = record_steps(solver, lambda: seen[0])
        _require(solver.advance(INF, INF, time.perf_counter() - 1.0) is False, "advance past the deadline finished")
        _require((solver.iteration, problem.kernel.kernel_evals, log) == (0, 0, []),
                 "a step started past the deadline")
        deadline = time.perf_counter() + 0.05
        while not solver.advance(CAP, INF, deadline) and solver.iteration < CAP:
            if time.perf_counter() >= deadline:
                break
            _require(solver.one_step_per_advance, "advance ended before the deadline")
    _require(bool(log) and all(clock < deadline for _, _, clock, _, _ in log), "a step started at the deadline")
    _require(solver.finished or solver.iteration >= CAP or time.perf_counter() >= deadline,
             "stopped before the deadline")


# ----------------------------------------------------------------------------- trajectory and measurement


def trajectory(case: Case, seed: int, measure: bool = True, cache_mb: float = 0.0,
               sealed: bool = False) -> tuple[Problem, Solver[Any], list[str]]:
    """Advance through :data:`CHECKPOINTS` (iteration limits), with the :func:`state` at each when ``measure``."""
    problem, solver = case.make(seed, cache_mb, sealed)
    states = []
    for limit in CHECKPOINTS:
        solver.advance(limit, INF, INF)
        if measure:
            states.append(state(problem, solver))
    return problem, solver, states


#: :func:`other_process_trajectories`' answers, by the solver class's module and name.
_OTHER_PROCESS: dict[str, dict[str, list[str]]] = {}


def other_process_trajectories(cls: type[Solver[Any]]) -> dict[str, list[str]]:
    """The measured trajectory of every case of ``cls`` from :data:`SEED`, computed in another
    Python process (once per class and process): ``{Case.id: states}``.

    The process has another ``PYTHONHASHSEED`` (this one's plus one when it is set; else 0,
    which turns hash randomization off, while this process draws its own), this process's
    ``sys.path`` and numba thread count, and imports the solver as it was found: its file
    (:data:`~sbpbench.solvers.external.FILES`) or its module. A solver that draws from
    anything but its seed (``hash`` of a string, the clock, the process id) departs there.

    Raises
    ------
    ContractViolation
        The solver cannot be made in another process (a class defined inside a function), or
        the process failed (its last line of error).
    """
    key = f"{cls.__module__}.{cls.__qualname__}"
    if key not in _OTHER_PROCESS:
        _OTHER_PROCESS[key] = _trajectories_elsewhere(cls)
    return _OTHER_PROCESS[key]


def _whereabouts(cls: type[Solver[Any]]) -> list[Any]:
    """``[module, qualname, file or None, numba threads]``: what another process needs to make
    ``cls`` as it was found (:func:`_found`), its file (:data:`~sbpbench.solvers.external.FILES`)
    or its module.

    Raises
    ------
    ContractViolation
        A class defined inside a function, which another process cannot make.
    """
    import numba

    from sbpbench.solvers.external import FILES

    file = FILES.get(cls.name) if cls.__module__.startswith("sbpbench_external_") else None
    _require(file is not None or "<locals>" not in cls.__qualname__,
             f"{cls.__qualname__} is defined inside a function: it cannot be made in another process")
    return [cls.__module__, cls.__qualname__, file, numba.get_num_threads()]


def _environment(hash_seed: str | None = None) -> dict[str, str]:
    """This process's environment for another Python process: this ``sys.path``, and the
    ``PYTHONHASHSEED`` given (None: this one's)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = hash_seed
    return env


def _found(module: str, qualname: str, file: str | None, threads: int) -> type[Solver[Any]]:
    """In another process, the solver class :func:`_whereabouts` located, with its numba threads."""
    import importlib

    import numba

    from sbpbench.solvers.external import load_file

    numba.set_num_threads(threads)
    if file is not None:
        load_file(file)
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    return cls


def _trajectories_elsewhere(cls: type[Solver[Any]]) -> dict[str, list[str]]:
    """:func:`other_process_trajectories`, computed."""
    given = os.environ.get("PYTHONHASHSEED", "")
    env = _environment(str(int(given) + 1) if given.isdigit() else "0")
    with tempfile.TemporaryDirectory() as folder:
        out, said = os.path.join(folder, "states.json"), os.path.join(folder, "output")
        # a file, not a pipe: a process the solver leaves running can hold it open
        with open(said, "w", encoding="utf-8") as output:
            code = subprocess.call([sys.executable, "-c", "import sys; from sbpbench.solvers.contract import "
                                    "_write_trajectories as w; w(sys.argv[1])", json.dumps([*_whereabouts(cls), out])],
                                   env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=output)
        with open(said, encoding="utf-8", errors="replace") as output:
            last = (output.read().strip().splitlines() or ["no error output"])[-1]
        _require(code == 0, f"the solver failed in another process ({last})")
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def _write_trajectories(job: str) -> None:
    """The other process of :func:`other_process_trajectories`: ``job`` is JSON ``[module, qualname,
    file or null, numba threads, output path]``."""
    *where, out = json.loads(job)
    cls = _found(*where)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({case.id: trajectory(case, SEED)[2] for case in cases(cls)}, f)


def check_same_seed_same_trajectory(case: Case) -> None:
    """Two runs from the same seed are identical at every checkpoint, in this process and in another
    (:func:`other_process_trajectories`: another ``PYTHONHASHSEED``)."""
    here = trajectory(case, SEED)[2]
    _require(trajectory(case, SEED)[2] == here, "the same seed gave another trajectory")
    there = other_process_trajectories(case.cls).get(case.id)
    _require(there == here, "the same seed gave another trajectory in another process (another "
             f"PYTHONHASHSEED){_first_difference(here, there)}")


def _first_difference(here: list[str], there: list[str] | None) -> str:
    """``: from iteration limit L``, the checkpoint where two lists of states first differ."""
    if there is None:
        return ": the case is missing there"
    k = next((k for k, (a, b) in enumerate(zip(here, there, strict=False)) if a != b), min(len(here), len(there)))
    return f": from iteration limit {CHECKPOINTS[k]}" if k < len(CHECKPOINTS) else ""


def check_measuring_does_not_change_the_trajectory(case: Case) -> None:
    """Snapshots and test errors on the way leave the end of the trajectory as it is without them."""
    _, _, measured = trajectory(case, SEED)
    problem, solver, _ = trajectory(case, SEED, measure=False)
    _require(state(problem, solver) == measured[-1], "measuring changed the trajectory")


def check_values_through_the_kernel(case: Case) -> None:
    """Every kernel value comes from the counting kernel, and each one it computed was counted.

    On a :class:`SealedKernel` (other points in the problem's ``X``, ``sq`` and ``store``, the
    same values from the kernel) the trajectory is the plain kernel's, state by state, and the
    values the kernel computed equal its ``kernel_evals_computed``. A solver that computes half
    its rows with numpy from ``problem.kernel.X`` (and counts only the other half, as its cost
    model says) fails here. A solver that never asks the kernel for training values
    (``counts_kernel_evals = False``: it reads the features) has nothing to check.
    """
    problem, solver, sealed = trajectory(case, SEED, sealed=True)
    if not solver.counts_kernel_evals:  # (the implementation create() chose for the case)
        return
    plain = trajectory(case, SEED)[2]
    _require(sealed == plain, "kernel values taken around the counting kernel: with other points in "
             "problem.kernel.X, sq and store (the same kernel values) the trajectory changed"
             f"{_first_difference(plain, sealed)}")
    k = cast(SealedKernel, problem.kernel)
    _require(k.served == k.kernel_evals_computed,
             f"the kernel computed {k.served} values, it counted {k.kernel_evals_computed} as computed")


def check_snapshots_cost_nothing(case: Case) -> None:
    """A snapshot and its test error count no training kernel evaluation and change nothing."""
    problem, solver = case.make()
    k = problem.kernel
    for limit in (1, N):
        solver.advance(limit, INF, INF)
        counts = (solver.iteration, k.kernel_evals, k.kernel_evals_computed)
        first = state(problem, solver)
        _require(state(problem, solver) == first, "a second snapshot differs from the first")
        _require((solver.iteration, k.kernel_evals, k.kernel_evals_computed) == counts,
                 "a snapshot counted training kernel evaluations")


def check_extra_columns(case: Case) -> None:
    """A snapshot's ``extra`` names no column sbpbench measures itself (the runner fails such a run)."""
    problem, solver = case.make()
    for limit in (1, N):
        solver.advance(limit, INF, INF)
        shadowed = solver.snapshot().shadowed()
        _require(not shadowed, f"the snapshot's extra columns {', '.join(shadowed)} are measured by sbpbench itself")


def check_cost_model(case: Case) -> None:
    """The kernel's count equals ``expected_kernel_evals`` throughout, with or without the row cache."""
    counted = []
    for cache_mb in (0.0, 1.0):  # counted as if there were no cache
        problem, solver = case.make(cache_mb=cache_mb)
        k = problem.kernel
        for max_it, max_kev in ((1, INF), (N, INF), (CAP, 5 * N), (3 * N, INF)):
            solver.advance(max(max_it, solver.iteration + 1), max_kev, INF)
            _require(k.kernel_evals == solver.expected_kernel_evals(),
                     f"the kernel counted {k.kernel_evals} evaluations, the cost model says "
                     f"{solver.expected_kernel_evals()} (iteration {solver.iteration}, cache_mb={cache_mb})")
            if not solver.counts_kernel_evals:
                _require(k.kernel_evals == k.kernel_evals_computed == 0,
                         "counts_kernel_evals is False but the kernel counted evaluations")
        counted.append((solver.iteration, k.kernel_evals, state(problem, solver)))
    _require(counted[0] == counted[1], "the row cache changed the trajectory or the count")


def check_data_left_unwritten(case: Case) -> None:
    """The solver writes into none of the problem's arrays (:meth:`~sbpbench.problem.Problem.arrays`).

    The runner hands them out read-only, so that a write fails the run at once (and the other
    checks with a ``ValueError``); here they take writes, and every array, compared byte by
    byte with its copy after every step and every measurement of a trajectory, names what was
    written (a write undone by the next one included).
    """
    problem, solver = case.make(writable=True)
    before = {name: array.tobytes() for name, array in problem.arrays().items()}

    def unwritten() -> None:
        now = problem.arrays()
        written = [name for name, data in before.items() if name not in now or now[name].tobytes() != data]
        _require(not written, f"wrote into {', '.join(written)} (the runner hands the problem's data out "
                 "read-only: copy an array before changing it)")

    step = solver._step

    def checked(iterations: float, kernel_evals: float) -> bool:
        finished = step(iterations, kernel_evals)
        unwritten()
        return finished

    solver._step = checked  # type: ignore[method-assign]  # the instance attribute shadows the method
    for limit in CHECKPOINTS:
        solver.advance(limit, INF, INF)
        solver.snapshot().test_error(problem)
        unwritten()


# ----------------------------------------------------------------------------- refusal

#: Every kind of problem: kernel, bias, the problem parameters it defines.
KINDS = [(kernel, bias, defines) for kernel in ("gaussian", "linear") for bias in (False, True)
         for defines in ((), ("lambda",), ("nu",), ("lambda", "nu"))]


def check_refusal(cls: type[Solver[Any]]) -> None:
    """Made for a kind of problem (by ``create`` or directly), refused exactly as ``refuse`` says.

    ``refuse`` answers one line starting ``solver 'NAME'``. A solver that accepts every kind of
    problem (both kernels, with and without a bias, lambda or nu or neither) passes: what it
    accepts is checked by the checks of each :class:`Case`.
    """
    for kernel, bias, defines in KINDS:
        for values in variants(cls):
            why = cls.refuse(ProblemKind(kernel, bias, frozenset(defines)), cls.Params(**values))
            if why is None:
                continue
            _require(why.startswith(f"solver {cls.name!r}"), f"refuse() says {why!r}, not 'solver {cls.name!r} ...'")
            for make in (cls.create, cls):
                try:
                    make(make_problem(kernel, bias, defines), np.random.default_rng(0), cls.Params(**values))
                except ValueError as exc:
                    _require(str(exc) == why, f"refused with {str(exc)!r}, not refuse()'s {why!r}")
                else:
                    raise ContractViolation(f"made for a problem refuse() refuses ({why})")


#: The checks of one :class:`Case` with their one-line descriptions, in the order they run.
CASE_CHECKS: dict[str, Callable[[Case], None]] = {
    "iteration limit honoured": check_iteration_limit,
    "kernel-evaluation limit honoured": check_kernel_evaluation_limit,
    "deadline honoured": check_deadline,
    "same seed, same trajectory": check_same_seed_same_trajectory,
    "measuring leaves the trajectory": check_measuring_does_not_change_the_trajectory,
    "snapshots cost no kernel evaluation": check_snapshots_cost_nothing,
    "snapshot columns shadow no measured one": check_extra_columns,
    "kernel values only from the counting kernel": check_values_through_the_kernel,
    "kernel count equals the cost model": check_cost_model,
    "problem's data left unwritten": check_data_left_unwritten,
}
#: The checks of a solver class.
CLASS_CHECKS: dict[str, Callable[[type[Solver[Any]]], None]] = {
    "parameters declared and checked": check_declarations,
    "impossible problems refused": check_refusal,
}


#: Every check's description, in the order :func:`verdicts` runs them.
CHECKS = [*CLASS_CHECKS, *CASE_CHECKS]


def verdicts(cls: type[Solver[Any]], first: int = 0,
             starting: Callable[[str], None] | None = None) -> Iterator[tuple[str, str | None]]:
    """Run every check on ``cls`` (from :data:`CHECKS`' ``first``): ``(check, None)`` when it holds,
    ``(check, why)`` when not.

    ``why`` names the first failing case (:attr:`Case.id`) and what failed; an exception the
    solver raises (``SystemExit`` included) is a failure of the check that met it. ``starting``
    is told the solver's name before each check of the class, and each case's id before the
    check of that case.
    """
    all_cases: list[Case] | None = None
    for what in CHECKS[first:]:
        if what in CLASS_CHECKS:
            if starting is not None:
                starting(cls.name)
            yield what, _failure(CLASS_CHECKS[what], cls)
            continue
        all_cases = cases(cls) if all_cases is None else all_cases
        why = None if all_cases else "no kind of problem accepted"
        for case in all_cases:
            if starting is not None:
                starting(case.id)
            if (why := _failure(CASE_CHECKS[what], case)) is not None:
                why = f"{case.id}: {why}"
                break
        yield what, why


def _failure(check: Callable[[Any], None], on: Any) -> str | None:
    """What ``check(on)`` found wrong, in one line (None: nothing)."""
    try:
        check(on)
    except (Exception, SystemExit) as exc:  # the solver's own errors (and exits) count as failures of the check
        if isinstance(exc, ContractViolation):
            return str(exc)
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
        if wrote_read_only(exc):
            return f"wrote into the problem's data, which is read-only ({text[:200]})"
        return text if isinstance(exc, Exception) else f"{text} (raised by the solver's code)"
    return None


# ----------------------------------------------------------------------------- in other processes

#: Seconds one check of one case may take in :func:`isolated_verdicts` (``check-solver --timeout``):
#: far more than any check of a solver that works takes on these 150 rows (compilation included).
CASE_TIMEOUT_S = 600.0
#: Seconds between the checks of :func:`isolated_verdicts` that its process is still alive.
POLL_S = 0.2


def isolated_verdicts(cls: type[Solver[Any]], timeout: float | None = None) -> Iterator[tuple[str, str | None]]:
    """:func:`verdicts` of ``cls``, run in other processes: nothing the solver does ends or hangs this one.

    The checks run in a Python process of their own, in a new session (its own process group),
    which tells this one, through a pipe of its own, each case it starts and each verdict. A
    check fails, naming its case, when that process ends before its verdict (``os._exit`` in a
    step, a signal) or when a case of it takes more than ``timeout`` seconds (a step that does
    not return); the process group is then killed and the checks after it go on in a new
    process. When the checks are done the process group is killed too, so that no process the
    solver started (which may hold this one's standard error open) outlives them. The solver's
    own output goes to standard error.

    Parameters
    ----------
    cls : type of Solver
        The solver class (found as :func:`_whereabouts` says).
    timeout : float, optional
        Seconds each check of one case may take (default :data:`CASE_TIMEOUT_S`).

    Yields
    ------
    tuple of (str, str or None)
        As :func:`verdicts`, one per check of :data:`CHECKS`.
    """
    where, limit = _whereabouts(cls), CASE_TIMEOUT_S if timeout is None else timeout
    done = 0
    while done < len(CHECKS):
        for verdict in _verdicts_in_child(where, done, limit):
            done += 1
            yield verdict


def _verdicts_in_child(where: list[Any], first: int, timeout: float) -> Iterator[tuple[str, str | None]]:
    """The verdicts from ``CHECKS[first]`` on, from one process, until it ends (the last one then
    a failure of the check it was in, unless every check was done) or a case outlives ``timeout``."""
    read, write = os.pipe()
    try:
        child = subprocess.Popen([sys.executable, "-c", "import sys; from sbpbench.solvers.contract import "
                                  "_serve_verdicts as s; s(sys.argv[1])", json.dumps([*where, first, write])],
                                 pass_fds=(write,), stdin=subprocess.DEVNULL, stdout=2, env=_environment(),
                                 start_new_session=True)
    finally:
        os.close(write)
    at, index, pending, since = None, first, b"", time.monotonic()
    sources, ended = [read], False
    try:
        while index < len(CHECKS):
            ready, _, _ = select.select(sources, [], [], POLL_S)
            chunk = os.read(read, 1 << 16) if ready else b""
            if ready and not chunk:  # every writer closed it: only the process's end is left to see
                sources = []
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                message = json.loads(line)
                if "verdict" in message:
                    what, why = message["verdict"]
                    yield what, why
                    at, index = None, index + 1
                else:
                    at = message["at"]
                since = time.monotonic()
            if chunk:
                continue
            where_at = f"{at}: " if at else ""
            if ended:  # ended, and nothing more was written after it did
                code = child.returncode
                how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
                yield CHECKS[index], f"{where_at}the solver ended the checker's process ({how}) before its verdict"
                return
            ended = child.poll() is not None  # (read once more: it may have written before it ended)
            if not ended and time.monotonic() - since > timeout:
                yield CHECKS[index], (f"{where_at}still running after {timeout:g} s (a step that does not return? "
                                      "check-solver --timeout SECONDS sets this limit)")
                return
    finally:
        _end_group(child)
        os.close(read)


def _end_group(child: subprocess.Popen) -> None:
    """Kill ``child``'s process group (what it and the solver started, unless they left it); reap ``child``."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _end_when_orphaned(parent: int) -> None:
    """In the process of :func:`_serve_verdicts`: kill its process group (itself and what the
    solver started) as soon as ``parent``, the checker, is gone (even killed, with no chance to)."""
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os.killpg(0, signal.SIGKILL)


def _serve_verdicts(job: str) -> None:
    """The process of :func:`_verdicts_in_child`: ``job`` is JSON ``[module, qualname, file or null,
    numba threads, first check, file descriptor]``; each message one JSON line on that descriptor
    (``{"at": case id}`` or ``{"verdict": [check, why]}``)."""
    *where, first, fd = json.loads(job)
    threading.Thread(target=_end_when_orphaned, args=(os.getppid(),), daemon=True).start()
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        def say(message: dict[str, Any]) -> None:
            out.write(json.dumps(message) + "\n")
            out.flush()

        for verdict in verdicts(_found(*where), first, lambda at: say({"at": at})):
            say({"verdict": verdict})
