"""MPU (and the single precision of MPU and SGD-m) against independent answers on small real data.

Optimum: LIBLINEAR through scikit-learn's LinearSVC at tol 1e-10 (no bias), as in
``tests/test_linear_solvers.py``. The guarantees checked are those the module docstring of
:mod:`sbpbench.solvers.mpu` proves: Proposition A (a finite number of updates, bounded by
``2 beta^2 D / q_min``) and Proposition B (after an epoch without updates ``J - D <= C Q / beta``,
so ``J / D - 1 <= epsilon``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from sbpbench.data.split import Split
from sbpbench.problem import Problem
from sbpbench.solvers.linear import sparse_dot, sparse_dot_from
from sbpbench.solvers.mpu import repetitions
from tests.exact import liblinear_optimum
from tests.problems import SVM_CASES, build_problem, make_solver, run_epochs, svm_problem

#: A run's epoch limit: far more than any case here needs.
EPOCHS = 20000


def _fixed_point_violations(solver) -> int:
    """Patterns whose learning or unlearning rule holds at the solver's state (recomputed in numpy)."""
    p = solver.y * (solver.X @ solver._a64())
    learn = (solver.counts < solver.levels) & (p + solver.sq <= solver.beta)
    unlearn = (solver.counts > 0) & (p - solver.sq >= solver.beta)
    return int(np.sum(learn | unlearn))


@pytest.mark.parametrize("dataset,C", SVM_CASES)
@pytest.mark.parametrize("epsilon", [0.01, 1e-3])
def test_mpu_reaches_liblinear_optimum_within_its_accuracy(dataset, C, epsilon):
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    solver, finished = run_epochs(problem, "mpu", EPOCHS, epsilon=epsilon)
    snap = solver.snapshot()
    assert finished and solver.iteration % problem.n == 0
    assert snap.extra["relative_accuracy"] <= epsilon  # the after-run relative accuracy it stopped at
    assert snap.extra["dual_objective"] / problem.lam <= j_opt * (1 + 1e-9)  # D is a lower bound
    assert -1e-9 <= snap.objective / j_opt - 1 <= snap.extra["relative_accuracy"] + 1e-9
    assert snap.objective == pytest.approx(snap.primal_objective / problem.lam)
    assert snap.extra["exact_checks"] >= 1 and problem.kernel.kernel_evals == 0
    # the predictor is w = a / beta = sum_k alpha_k y_k, alpha_k = C I_k / N in [0, C]
    w = problem.kernel.X[snap.support].T @ snap.coef
    assert np.allclose(w, solver.a / solver.beta, rtol=1e-9, atol=1e-12)
    assert np.all(np.abs(snap.coef) <= C * (1 + 1e-12))
    assert np.allclose(snap.predict(problem.test_X), problem.test_X @ w)


@pytest.mark.parametrize("dataset,C,epsilon", [("adult", 0.05, 0.05), ("w8a", 1.0, 0.02)])
def test_finite_updates_and_the_accuracy_they_guarantee(dataset, C, epsilon):
    """Propositions A and B on a case: stopping only after an epoch without updates."""
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    solver = make_solver(problem, "mpu", 1, epsilon=epsilon, check_after_run=False)
    duals, updates = [0.0], [0]
    while not solver.finished and solver.iteration < EPOCHS * problem.n:
        solver.advance(solver.iteration + problem.n, np.inf, np.inf)
        duals.append(solver.dual())
        updates.append(solver.updates)
    assert solver.finished  # a finite number of updates
    assert updates[-1] == updates[-2] > 0 and _fixed_point_violations(solver) == 0  # the last epoch moved nothing
    assert np.all(np.diff(duals) >= -1e-9 * duals[-1])  # every update raises D
    snap = solver.snapshot()
    dual, primal = solver.dual(), snap.objective
    q_min = solver.sq[solver.sq > 0].min()
    assert solver.updates <= 2 * solver.beta ** 2 * dual / q_min  # Proposition A
    assert primal - dual <= solver.C * solver.Q / solver.beta  # Proposition B
    assert solver.C * solver.Q / (solver.beta * dual) <= epsilon  # so J / D - 1 <= epsilon
    assert dual <= j_opt * (1 + 1e-9) and primal / j_opt - 1 <= epsilon
    assert snap.extra["unlearnings"] > 0  # the unlearning rule took part


def test_doubling_beta_keeps_alpha_and_the_dual():
    problem = svm_problem("adult", 1.0, n=500)
    solver, _ = run_epochs(problem, "mpu", 1, epsilon=0.05)
    before = solver.snapshot()
    levels, dual = solver.levels, solver.dual()
    solver._refine()
    after = solver.snapshot()
    assert solver.levels == 2 * levels and solver.beta == 2 * before.extra["beta"]
    assert np.array_equal(after.coef, before.coef) and np.array_equal(after.support, before.support)
    assert solver.dual() == dual and after.objective == before.objective


def _single_updates(p: Fraction, q: Fraction, beta: Fraction, count: int, levels: int) -> int:
    """Apply the learning or the unlearning rule one update at a time, exactly."""
    moved = 0
    while count < levels and p + q <= beta:
        p, count, moved = p + q, count + 1, moved + 1
    if moved == 0:  # unlearning only where the pattern does not learn
        while count > 0 and p - q >= beta:
            p, count, moved = p - q, count - 1, moved - 1
    return moved


def test_repetitions_match_single_updates():
    rng = np.random.default_rng(2025)
    for case in range(2000):
        levels = int(rng.integers(1, 30))
        count = int(rng.integers(0, levels + 1))
        if case % 2:  # small integers: many exact ties with the thresholds
            beta, q, p = (Fraction(int(v)) for v in (rng.integers(1, 40), rng.integers(0, 9), rng.integers(-60, 90)))
        else:
            beta = Fraction(float(10.0 ** rng.uniform(0, 4)))
            q = Fraction(float(rng.choice([0.0, 10.0 ** rng.uniform(-3, 3)])))
            p = Fraction(float(beta * Fraction(float(rng.normal(1.0, 2.0)))))
        expected = _single_updates(p, q, beta, count, levels)
        assert repetitions(float(p), float(q), float(beta), count, levels) == expected, (p, q, beta, count, levels)


def test_single_precision_sums_in_float32():
    rng = np.random.default_rng(0)
    data = rng.normal(size=200).astype(np.float32)
    w = rng.normal(size=200).astype(np.float32) * np.float32(1e3)
    indptr, indices = np.array([0, 200]), np.arange(200)
    expected = np.float32(0.0)
    for x, v in zip(data, w):
        expected = np.float32(expected + x * v)
    got = sparse_dot_from(np.float32(0.0), indptr, indices, data, 0, w)
    assert got == expected  # every partial sum rounded to float32 (numba returns it as a Python float)
    double = sparse_dot(indptr, indices, data.astype(np.float64), 0, w.astype(np.float64))
    assert got != double and got == pytest.approx(double, rel=1e-4)


def _scaled(original: Problem, scale: float = 0.3) -> Problem:
    """The same data with its features times ``scale`` (not exact in float32, unlike 0/1 features)."""
    train, test = Split(original.kernel.X * scale, original.y), Split(original.test_X * scale, original.test_y)
    return build_problem((train, test), kernel="linear", lam=original.lam)


@pytest.mark.parametrize("name,params,epochs", [("mpu", {"epsilon": 0.005}, EPOCHS),
                                                ("sgd-m", {"target_accuracy": 0.0}, 100)])
def test_single_precision_reaches_the_same_optimum(name, params, epochs):
    """float32 weights and data: another trajectory, the same optimum within the solver's accuracy.

    On Adult's 0/1 features ``a`` holds small integers, exact in float32; features times 0.3 are
    rounded in float32, so that the single path differs from the double one.
    """
    problem = _scaled(svm_problem("adult", 1.0))
    opt = liblinear_optimum(problem, ("adult * 0.3", 1.0))
    runs = {precision: run_epochs(problem, name, epochs, precision=precision, **params)[0]
            for precision in ("double", "single")}
    assert runs["single"].a.dtype == np.float32 and runs["double"].a.dtype == np.float64
    assert runs["single"].values.dtype == np.float32 and runs["single"].values is not runs["double"].values
    assert not np.array_equal(runs["single"].a, runs["double"].a)
    tolerance = params.get("epsilon", 1e-2)
    for solver in runs.values():
        snap = solver.snapshot()
        assert 0 <= snap.primal_objective / opt - 1 <= tolerance + 1e-9
        if name == "mpu":
            assert solver.finished and snap.extra["relative_accuracy"] <= tolerance
