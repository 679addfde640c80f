"""The solver contract, checked on every registered solver (a new solver is tested by registering it).

Every solver, on small real data (Adult rows) with each kernel it accepts, with and without a
bias where it takes one, with its defaults and with each boolean parameter flipped and each
other choice of a parameter with choices:

* declares its parameters as a checked frozen dataclass;
* honours each of the three limits of ``advance`` (iterations, kernel evaluations, the
  deadline): no step starts at or beyond a limit, ``advance`` ends only at a limit or when the
  solver finishes, and exactly at the iteration limit unless the solver declares that its steps
  (whole passes or fits) go past it;
* follows the same trajectory from the same seed, whether or not it is measured on the way;
* takes snapshots without training kernel evaluations;
* counts what its cost model says (``expected_kernel_evals``), with or without the row cache;
* is refused at validation (exit 2, one line naming the key) on every kind of problem its
  :meth:`~sbpbench.solvers.base.Solver.refuse` refuses, accepted on the others, and refused the
  same way when it is made for such a problem.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
import types
from functools import cache

import numpy as np
import pytest
import yaml

from sbpbench.kernels import Kernel, KernelSpec
from sbpbench.problem import Problem
from sbpbench.solvers import SOLVERS, ProblemKind, Solver, SolverParams, param
from sbpbench.solvers import base as base_module
from sbpbench.solvers.sbp import SBP
from sbpbench.solvers.smo import SMOParams
from tests.adult_rows import adult
from tests.cli_runner import sbpbench

N, N_TEST = 150, 60
LAMBDA, NU, SIGMA2 = 1.0 / N, 0.05, 10.0
INF = math.inf
#: Iterations after which a limit test stops a solver that neither reaches its limit nor finishes.
CAP = 40 * N

pytestmark = pytest.mark.usefixtures("one_numba_thread")


@cache
def _rows():
    return adult(N, seed=3, test=N_TEST)


def make_problem(kernel: str, bias: bool, defines=("lambda", "nu"), cache_mb: float = 0.0) -> Problem:
    """Adult rows as a problem of the given kind (lambda = 1/n and nu = 0.05 where defined)."""
    X, y, tX, ty = _rows()
    k = Kernel(X, KernelSpec(kernel, SIGMA2, cache_mb))
    return Problem(k, np.asarray(y, dtype=np.float64), k.prepare(tX), np.asarray(ty, dtype=np.float64),
                   LAMBDA if "lambda" in defines else None, NU if "nu" in defines else None, bias)


def variants(cls: type[Solver]) -> list[dict]:
    """Parameter settings to try: the defaults, each boolean flipped, each other choice."""
    found: list[dict] = [{}]
    for name, p in cls.Params.declared().items():
        if p.type is bool:
            found.append({name: not p.default})
        found += [{name: choice} for choice in p.choices or () if choice != p.default]
    return found


def _cases():
    for name, cls in sorted(SOLVERS.items()):
        for kernel in ("gaussian", "linear"):
            for bias in (False, True):
                kind = ProblemKind(kernel, bias, frozenset({"lambda", "nu"}))
                for values in variants(cls):
                    if cls.refuse(kind, cls.Params(**values)) is None:
                        shown = ",".join(f"{k}={v}" for k, v in values.items())
                        yield pytest.param(name, kernel, bias, values,
                                           id=f"{name}-{kernel}{'-bias' if bias else ''}{'-' + shown if shown else ''}")


CASES = list(_cases())


def make(name: str, kernel: str, bias: bool, values: dict, seed: int = 0, cache_mb: float = 0.0):
    """A problem of this kind and the solver for it, made as the runner makes it."""
    cls = SOLVERS[name]
    problem = make_problem(kernel, bias, cache_mb=cache_mb)
    solver = cls.create(problem, np.random.default_rng(seed), cls.Params(**values))
    assert isinstance(solver.params, cls.Params) and solver.name == name
    return problem, solver


def record_steps(solver: Solver, clock=time.perf_counter) -> list[tuple]:
    """Log ``(iteration, kernel_evals, clock(), iterations allowed, kernel_evals allowed)`` before every step."""
    log: list[tuple] = []
    step = solver._step

    def logged(iterations, kernel_evals):
        log.append((solver.iteration, solver.kernel.kernel_evals, clock(), iterations, kernel_evals))
        return step(iterations, kernel_evals)

    solver._step = logged  # the instance attribute shadows the method
    return log


def state(problem: Problem, solver: Solver) -> str:
    """Everything observable about a solver's trajectory so far, exactly (``repr`` of the floats)."""
    snap = solver.snapshot()
    extra = {k: v for k, v in snap.extra.items() if not k.endswith("_s")}  # fit times vary
    return repr((solver.iteration, problem.kernel.kernel_evals, solver.finished, snap.support.tolist(),
                 snap.coef.tolist(), snap.bias, snap.objective, snap.primal_objective, extra,
                 snap.test_error(problem)))


# ----------------------------------------------------------------------------- declarations


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_registered_with_declared_checked_parameters(name):
    cls = SOLVERS[name]
    assert issubclass(cls, Solver) and cls.name == name and (cls.__doc__ or "").strip()
    assert issubclass(cls.Params, SolverParams) and cls.Params.__dataclass_params__.frozen
    defaults = cls.Params()
    for pname, p in cls.Params.declared().items():
        assert p.type in (int, float, bool, str) and isinstance(p.default, p.type) and p.doc
        assert getattr(defaults, pname) == p.default and p.error(p.default) is None
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(defaults, pname, p.default)
        candidates = ["no such choice"] if p.type is str else [] if p.type is bool else [-1, 0, 2**31]
        bad = [v for v in candidates if p.error(v) is not None]
        if p.check is not None or p.choices is not None:
            assert bad, pname
        for value in bad:  # an instance is checked when it is made
            with pytest.raises(ValueError, match=pname):
                cls.Params(**{pname: value})


def test_parameters_of_another_solver_and_undeclared_fields_are_refused():
    problem = make_problem("gaussian", False)
    with pytest.raises(TypeError, match="takes SBPParams, not SMOParams"):
        SBP(problem, np.random.default_rng(0), SMOParams())

    @dataclasses.dataclass(frozen=True)
    class Sloppy(SolverParams):
        documented: int = param(1, "a parameter")
        undocumented: int = 2

    with pytest.raises(TypeError, match="Sloppy.undocumented: declare solver parameters with param"):
        Sloppy.declared()


# ----------------------------------------------------------------------------- limits


@pytest.mark.parametrize("name, kernel, bias, values", CASES)
def test_iteration_limit_is_honoured(name, kernel, bias, values):
    problem, solver = make(name, kernel, bias, values)
    log = record_steps(solver)
    for limit in (1, 7, N // 2, 2 * N):
        start = len(log)
        while not solver.advance(limit, INF, INF) and solver.iteration < limit:
            assert solver.one_step_per_advance  # others stop only at a limit or when finished
        assert solver.finished or solver.iteration >= limit
        if solver.stops_at_iteration_limit:
            assert solver.finished or solver.iteration == limit
        for it, _, _, allowed_it, allowed_kev in log[start:]:
            assert it < limit and allowed_it == limit - it and allowed_kev == INF
        done = (solver.iteration, problem.kernel.kernel_evals, len(log))
        assert solver.advance(limit, INF, INF) == solver.finished  # at the limit: nothing more
        assert (solver.iteration, problem.kernel.kernel_evals, len(log)) == done
    assert log and log[0][:2] == (0, 0)


@pytest.mark.parametrize("name, kernel, bias, values", CASES)
def test_kernel_evaluation_limit_is_honoured(name, kernel, bias, values):
    problem, solver = make(name, kernel, bias, values)
    k = problem.kernel
    log = record_steps(solver)
    for limit in (1, 3 * N, 20 * N):
        start = len(log)
        while not (solver.advance(CAP, limit, INF) or k.kernel_evals >= limit or solver.iteration >= CAP):
            assert solver.one_step_per_advance
        for it, evals, _, allowed_it, allowed_kev in log[start:]:
            assert it < CAP and evals < limit and (allowed_it, allowed_kev) == (CAP - it, limit - evals)
        if solver.counts_kernel_evals:
            assert solver.finished or k.kernel_evals >= limit or solver.iteration >= CAP
        else:  # never asks the counting kernel for training values
            assert k.kernel_evals == k.kernel_evals_computed == 0
    if solver.counts_kernel_evals and not solver.finished:
        assert 20 * N <= k.kernel_evals


@pytest.mark.parametrize("name, kernel, bias, values", CASES)
def test_deadline_is_honoured(name, kernel, bias, values, monkeypatch):
    problem, solver = make(name, kernel, bias, values)
    seen: list[float] = [math.nan]

    def clock() -> float:  # the clock as advance reads it, so that the log holds what it compared
        seen[0] = time.perf_counter()
        return seen[0]

    monkeypatch.setattr(base_module, "time", types.SimpleNamespace(perf_counter=clock))
    log = record_steps(solver, lambda: seen[0])
    assert solver.advance(INF, INF, time.perf_counter() - 1.0) is False  # past: no step at all
    assert (solver.iteration, problem.kernel.kernel_evals, log) == (0, 0, [])
    deadline = time.perf_counter() + 0.05
    while not solver.advance(CAP, INF, deadline) and solver.iteration < CAP:
        if time.perf_counter() >= deadline:
            break
        assert solver.one_step_per_advance
    assert log and all(clock < deadline for _, _, clock, _, _ in log)
    assert solver.finished or solver.iteration >= CAP or time.perf_counter() >= deadline


# ----------------------------------------------------------------------------- trajectory and measurement


def _run(name, kernel, bias, values, seed, measure=True, cache_mb=0.0):
    """Advance through checkpoints (iteration limits), measuring at each when ``measure``."""
    problem, solver = make(name, kernel, bias, values, seed, cache_mb)
    states = []
    for limit in (1, 2, 3, 5, 9, 17, 33, 65, N, 2 * N, 3 * N):
        solver.advance(limit, INF, INF)
        if measure:
            states.append(state(problem, solver))
    return problem, solver, states


@pytest.mark.parametrize("name, kernel, bias, values", CASES)
def test_same_seed_same_trajectory(name, kernel, bias, values):
    assert _run(name, kernel, bias, values, seed=11)[2] == _run(name, kernel, bias, values, seed=11)[2]


@pytest.mark.parametrize("name, kernel, bias, values", CASES)
def test_measuring_does_not_change_the_trajectory(name, kernel, bias, values):
    _, _, measured = _run(name, kernel, bias, values, seed=11)
    problem, solver, _ = _run(name, kernel, bias, values, seed=11, measure=False)
    assert state(problem, solver) == measured[-1]


@pytest.mark.parametrize("name, kernel, bias, values", CASES)
def test_snapshots_cost_no_training_kernel_evaluations(name, kernel, bias, values):
    problem, solver = make(name, kernel, bias, values)
    k = problem.kernel
    for limit in (1, N):
        solver.advance(limit, INF, INF)
        counts = (solver.iteration, k.kernel_evals, k.kernel_evals_computed)
        first = state(problem, solver)  # a snapshot and its test error
        assert state(problem, solver) == first
        assert (solver.iteration, k.kernel_evals, k.kernel_evals_computed) == counts


@pytest.mark.parametrize("name, kernel, bias, values", CASES)
def test_kernel_evaluations_follow_the_declared_cost_model(name, kernel, bias, values):
    counted = []
    for cache_mb in (0.0, 1.0):  # counted as if there were no cache
        problem, solver = make(name, kernel, bias, values, cache_mb=cache_mb)
        k = problem.kernel
        for max_it, max_kev in ((1, INF), (N, INF), (CAP, 5 * N), (3 * N, INF)):
            solver.advance(max(max_it, solver.iteration + 1), max_kev, INF)
            assert k.kernel_evals == solver.expected_kernel_evals()
            if not solver.counts_kernel_evals:
                assert k.kernel_evals == k.kernel_evals_computed == 0
        counted.append((solver.iteration, k.kernel_evals, state(problem, solver)))
    assert counted[0] == counted[1]


# ----------------------------------------------------------------------------- refusal at validation

KINDS = [(kernel, bias, defines) for kernel in ("gaussian", "linear") for bias in (False, True)
         for defines in ((), ("lambda",), ("nu",), ("lambda", "nu"))]


def _config(kernel: str, bias: bool, defines, name: str, values: dict) -> str:
    """A config of this kind of problem with one solver."""
    problem = {"bias": bias, **({"lambda": "1/n"} if "lambda" in defines else {}),
               **({"nu": NU} if "nu" in defines else {})}
    return yaml.safe_dump({"dataset": {"name": "adult", "n_train": N, "n_test": N_TEST},
                           "kernel": {"name": kernel, "sigma2": SIGMA2}, "problem": problem,
                           "solvers": [{"name": name, **values}]})


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_validation_refuses_exactly_what_the_solver_refuses(name, monkeypatch, capsys, tmp_path):
    cls = SOLVERS[name]
    path = tmp_path / "kind.yaml"
    outcomes = set()
    for kernel, bias, defines in KINDS:
        for values in variants(cls):
            why = cls.refuse(ProblemKind(kernel, bias, frozenset(defines)), cls.Params(**values))
            path.write_text(_config(kernel, bias, defines, name, values))
            code = sbpbench(monkeypatch, "validate", path)
            err = capsys.readouterr().err
            case = (kernel, bias, defines, values, err)
            if why is None:
                assert code == 0, case
                continue
            assert why.startswith(f"solver {name!r}")
            assert code == 2 and err == f"sbpbench: error: {path}: key 'solvers[0].name': {why}\n", case
            with pytest.raises(ValueError) as refused:  # and the same refusal where it is made
                cls.create(make_problem(kernel, bias, defines), np.random.default_rng(0), cls.Params(**values))
            assert str(refused.value) == why
            outcomes.add(why)
    assert outcomes  # every solver refuses some kind of problem


def test_contradictory_parameters_end_validate_and_run_before_anything_runs(monkeypatch, capsys, tmp_path):
    """LIBLINEAR's tol_end above tol_start used to pass validation and fail inside the run."""
    path = tmp_path / "tols.yaml"
    path.write_text(_config("linear", False, ("lambda",), "liblinear", {"tol_start": 0.001, "tol_end": 0.01}))
    for command in ("validate", "run"):
        more = ["--results", tmp_path / "res"] if command == "run" else []
        assert sbpbench(monkeypatch, command, path, *more) == 2
        err = capsys.readouterr().err
        assert err == (f"sbpbench: error: {path}: key 'solvers[0].name': solver 'liblinear': tol_end (0.01) "
                       f"must not exceed tol_start (0.001)\n")
    assert not (tmp_path / "res").exists()



@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_a_solver_made_directly_is_refused_as_at_validation(name):
    """Making a solver without create() (as a script or a test may) asks refuse() too."""
    cls = SOLVERS[name]
    refused = 0
    for kernel in ("gaussian", "linear"):
        for bias in (False, True):
            why = cls.refuse(ProblemKind(kernel, bias, frozenset({"lambda", "nu"})), cls.Params())
            if why is not None:
                refused += 1
                with pytest.raises(ValueError, match=re.escape(why)):
                    cls(make_problem(kernel, bias), np.random.default_rng(0))
    assert refused or (cls.supports_bias and not cls.requires_bias and len(cls.kernels) == 2)
