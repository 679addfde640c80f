"""The randomness contract (docs/design.md, Randomness): every run of a solver draws from a
generator of its own, and the solvers that visit the examples in a random order per pass draw a
fresh order for every pass.

A bug giving every run one generator, or a pass order drawn once, leaves each run's curves
plausible (the regression references catch them only as a change of the numbers); these tests
say which unit broke.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sbpbench.data import DatasetSpec
from sbpbench.execution import loop
from sbpbench.experiment.config import Budget, Checkpoints, Experiment, SolverSpec
from sbpbench.problem import Problem
from sbpbench.solvers import SOLVERS, Solver, dcd, mpu, perceptron, sgd_revisited
from sbpbench.solvers.contract import N, cases, make_problem, state

#: The solvers of the package (not those a test file registers).
PACKAGE = sorted(name for name, cls in SOLVERS.items() if cls.__module__.startswith("sbpbench.solvers."))
#: The solvers that draw nothing from their generator (each is deterministic by its docstring).
DRAWS_NOTHING = {"libsvm", "ocas", "smo", "svmperf"}


def test_the_solvers_flagged_deterministic_are_those_that_draw_nothing():
    """The flag the report reads to count identical runs once (``Solver.deterministic``); the test
    below checks that these draw nothing and every other solver draws."""
    assert {name for name in PACKAGE if SOLVERS[name].deterministic} == DRAWS_NOTHING


def first_case(name: str):
    """The first problem kind and parameters the solver accepts (the contract's cases)."""
    return cases(SOLVERS[name])[0]


def advance(solver: Solver[Any], iterations: int) -> None:
    """Advance ``solver`` to ``iterations`` iterations, or until it finishes."""
    while solver.iteration < iterations and not solver.advance(iterations, math.inf, math.inf):
        pass


# ----------------------------------------------------------------------------- a generator per run


class _Made(Exception):
    """Raised where the runner makes the solver: the test has the generator and stops the run."""


class _WarmedUp(loop.WarmUps):
    """Warm-ups taken as done: the test stops every run before its solver does anything."""

    def warm_up(self, problem: Problem, spec: SolverSpec, seconds: float = math.inf,
                notice: loop.WarmUpNotice | None = None) -> None:
        return None


def runners_generators(monkeypatch, name: str, problem: Problem, runs: int = 2) -> list[np.random.Generator]:
    """Copies of the generators :func:`sbpbench.execution.loop.run_one` makes solver ``name`` with, for
    runs ``0 .. runs - 1`` of one experiment (seed 0), as they are when the solver gets them."""
    spec = SolverSpec(name, dict(first_case(name).values), name)
    exp = Experiment(name="streams", dataset=DatasetSpec(name="adult", n_train=N), kernel=problem.kernel.spec,
                     lam=problem.lam, nu=problem.nu, bias=problem.bias, solvers=(spec,), budget=Budget(epochs=1),
                     checkpoints=Checkpoints(), runs=runs, seed=0)
    given: list[np.random.Generator] = []

    def create(cls, problem: Problem, rng: np.random.Generator, params=None):
        given.append(copy.deepcopy(rng))
        raise _Made

    with monkeypatch.context() as patch:
        patch.setattr(SOLVERS[name], "create", classmethod(create))
        for run in range(runs):
            result = loop.run_one(exp, problem, spec, run, warm_ups=_WarmedUp())
            assert result.summary["status"] == "failed: _Made", result.summary
    return given


def first_draws(rng: np.random.Generator) -> list[int]:
    """The first raw outputs of a copy of ``rng`` (``rng`` itself is left as it is)."""
    return copy.deepcopy(rng).bit_generator.random_raw(8).tolist()


@pytest.mark.parametrize("name", PACKAGE)
def test_each_run_of_a_solver_draws_from_a_stream_of_its_own(name, monkeypatch):
    """Runs 0 and 1 of the same solver get generators that differ from their first draw; a solver
    that draws consumes it and its two runs go apart; one naming another's ``random_stream`` gets
    that solver's generators, run by run."""
    case = first_case(name)
    problem = make_problem(case.kernel, case.bias)
    run0, run1 = runners_generators(monkeypatch, name, problem)
    assert first_draws(run0) != first_draws(run1)
    stream = SOLVERS[name].random_stream
    if stream is not None:
        owner = runners_generators(monkeypatch, stream, problem)  # stopped before any use of the problem
        assert [first_draws(g) for g in owner] == [first_draws(run0), first_draws(run1)]
    trajectories = []
    for rng in (run0, run1):
        before = first_draws(rng)
        solver = SOLVERS[name].create(problem, rng, SOLVERS[name].Params(**case.values))
        advance(solver, 2 * N)
        assert (first_draws(rng) != before) == (name not in DRAWS_NOTHING), \
            f"{name} {'drew nothing from' if name not in DRAWS_NOTHING else 'drew from'} its generator"
        trajectories.append(state(problem, solver))
    if name not in DRAWS_NOTHING:
        assert trajectories[0] != trajectories[1], f"runs 0 and 1 of {name} went the same way"


# ----------------------------------------------------------------------------- a fresh order per pass


def _from_pass_start(index_at: int, position_at: int | None = None, end_at: int | None = None):
    """The order a compiled pass function is given, read from its positional arguments: the array at
    ``index_at``; with ``position_at``, only where a pass starts (that argument, or its first entry,
    is 0), and with ``end_at``, up to that argument's second entry (DCD's active coordinates)."""
    def order(args: tuple) -> np.ndarray | None:
        if position_at is not None and np.ravel(args[position_at])[0] != 0:
            return None
        end = None if end_at is None else int(args[end_at][1])
        return np.array(args[index_at][:end])
    return order


#: The solvers whose docstrings promise a fresh random order every pass, each with the compiled
#: function that visits the examples (module, name) and how to read the order it is given at a
#: pass's start; and the parameters that keep them from stopping within three passes.
PER_PASS: dict[str, tuple[Any, str, Callable[[tuple], np.ndarray | None], dict[str, Any]]] = {
    "dcd": (dcd, "_visit", _from_pass_start(8, position_at=9, end_at=9), {"tol": 0.0, "shrinking": False}),
    "perceptron": (perceptron, "_first_mistake", _from_pass_start(0, position_at=1), {}),
    "sgd-s": (sgd_revisited, "_present", _from_pass_start(8), {"target_accuracy": 0.0}),
    "sgd-m": (sgd_revisited, "_present", _from_pass_start(8), {"target_accuracy": 0.0}),
    "mpu": (mpu, "_epoch", _from_pass_start(7), {"check_after_run": False}),
}


class RecordingGenerator(np.random.Generator):
    """A generator counting the orders drawn from it: ``permutation`` and ``shuffle`` calls (the
    ``shuffle`` numpy's ``permutation`` makes inside is not counted again)."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.orders = 0
        self._inside = False

    def permutation(self, x, axis=0):
        self.orders += 1
        self._inside = True
        try:
            return super().permutation(x, axis)
        finally:
            self._inside = False

    def shuffle(self, x, axis=0):
        self.orders += not self._inside
        return super().shuffle(x, axis)


def test_the_solvers_drawing_an_order_per_pass_are_those_tested():
    """Over three epochs, the solvers drawing more than one order are exactly :data:`PER_PASS`
    (SvmSgd and SGD-QN keep the one order they draw, as the SGD paper ran them)."""
    drawing = set()
    for name in PACKAGE:
        case = first_case(name)
        problem = make_problem(case.kernel, case.bias)
        rng = RecordingGenerator(0)
        params = {**case.values, **(PER_PASS[name][3] if name in PER_PASS else {})}
        advance(SOLVERS[name].create(problem, rng, SOLVERS[name].Params(**params)), 3 * N)
        if rng.orders > 1:
            drawing.add(name)
    assert drawing == set(PER_PASS)


@pytest.mark.parametrize("name", sorted(PER_PASS))
def test_every_pass_visits_the_examples_in_a_fresh_order(name, monkeypatch):
    """The orders the solver's compiled pass is given at the start of three consecutive passes: each a
    permutation of the examples, no two the same."""
    module, function, order_of, params = PER_PASS[name]
    seen: list[np.ndarray] = []
    compiled = getattr(module, function)

    def visiting(*args):
        if (order := order_of(args)) is not None:
            seen.append(order)
        return compiled(*args)

    monkeypatch.setattr(module, function, visiting)
    case = first_case(name)
    problem = make_problem(case.kernel, case.bias)
    solver = SOLVERS[name].create(problem, np.random.default_rng(0), SOLVERS[name].Params(**params))
    advance(solver, 3 * N)
    assert solver.iteration == 3 * N and len(seen) == 3, (solver.iteration, len(seen))
    for order in seen:
        assert np.array_equal(np.sort(order), np.arange(N))
    assert not any(np.array_equal(a, b) for k, a in enumerate(seen) for b in seen[k + 1:])
