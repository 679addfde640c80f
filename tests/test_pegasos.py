"""Kernel Pegasos: against a literal dense implementation, the exact optimum, and its cost model."""

import numpy as np
import pytest

from sbpbench.solvers import responses
from sbpbench.solvers.pegasos import Pegasos, PegasosParams
from sbpbench.solvers.responses import STEP_EVALS
from sbpbench.solvers.sampling import DRAW_CHUNK
from tests.exact import kernel_matrix, lambda_optimum
from tests.problems import build_problem


def pegasos_literal(K, y, lam, T, k, projection, rng):
    """Figure 1 of the Pegasos paper with explicit coefficients (w = sum beta_j Phi(x_j))."""
    n = y.size
    beta = np.zeros(n)
    violations = 0
    draws = np.empty((0, k), dtype=np.int64)
    for t in range(1, T + 1):
        if draws.shape[0] == 0:
            draws = rng.integers(0, n, size=(DRAW_CHUNK, k))
        batch, draws = draws[0], draws[1:]
        margins = y[batch] * (K[batch] @ beta)
        plus = batch[margins < 1]
        violations += plus.size
        eta = 1.0 / (lam * t)
        beta = (1 - eta * lam) * beta
        for i in plus:
            beta[i] += eta / k * y[i]
        norm = np.sqrt(beta @ K @ beta)
        if projection and norm > 1 / np.sqrt(lam):
            beta *= 1 / (np.sqrt(lam) * norm)
    return beta, violations


@pytest.fixture(scope="module")
def small(adult_small):
    train, test = adult_small
    return (train.take(np.arange(120)), test)


@pytest.mark.parametrize("k,projection", [(1, True), (1, False), (4, True)])
def test_matches_the_literal_algorithm_and_cost_model(small, k, projection):
    lam, T = 0.01, 600
    problem = build_problem(small, lam=lam)
    solver = Pegasos(problem, np.random.default_rng(5), PegasosParams(mini_batch=k, projection=projection))
    solver.advance(T, np.inf, np.inf)
    snap = solver.snapshot()
    K = kernel_matrix(small[0].X, sigma2=10.0)
    y = small[0].y
    beta, violations = pegasos_literal(K, y, lam, T, k, projection, np.random.default_rng(5))
    coef = np.zeros(120)
    coef[snap.support] = snap.coef
    np.testing.assert_allclose(coef, beta, rtol=1e-9, atol=1e-12)
    margins = y * (K @ beta)
    objective = 0.5 * lam * beta @ K @ beta + np.maximum(0, 1 - margins).mean()
    assert snap.objective == pytest.approx(objective, rel=1e-9)
    # cost model: one kernel row per margin violation, nothing else
    assert problem.kernel.kernel_evals == solver.expected_kernel_evals() == violations * 120
    assert violations > 0


def test_approaches_the_exact_optimum(small):
    lam = 0.01
    problem = build_problem(small, lam=lam)
    K = kernel_matrix(small[0].X, sigma2=10.0)
    optimum = lambda_optimum(K, small[0].y, lam)
    assert optimum["gap"] < 1e-8
    solver = Pegasos(problem, np.random.default_rng(0))
    gaps = []
    for T in (200, 40000):
        solver.advance(T, np.inf, np.inf)
        gaps.append(solver.snapshot().objective - optimum["primal"])
    assert gaps[0] > gaps[1] > -1e-12
    assert gaps[1] < 1e-2 * optimum["primal"]


def pegasos_plain(kernel, y, lam, T, k, projection, rng):
    """Kernel Pegasos in plain numpy with the solver's arithmetic (scaled responses ``ct``, the scale ``s``
    and ``||w||^2``) in the solver's order: bit for bit its iterates."""
    n = y.size
    diag, a, ct, s, norm2 = kernel.diag(), np.zeros(n), np.zeros(n), 1.0, 0.0
    draws = np.concatenate([rng.integers(0, n, size=(DRAW_CHUNK, k)) for _ in range(-(-T // DRAW_CHUNK))])
    for t, batch in enumerate(draws[:T], start=1):
        violators = batch[s * ct[batch] < 1.0]
        shrink = 1.0 - 1.0 / t
        s, norm2 = (s * shrink, norm2 * (shrink * shrink)) if shrink else (1.0, 0.0)
        add = 1.0 / (lam * t * k)
        for i in violators:
            norm2 += 2.0 * add * s * ct[i] + add * add * diag[i]
            step = add / s
            a[i] += step
            ct += (step * y[i]) * y * kernel.row(i)
        if projection and norm2 * lam > 1.0:
            s, norm2 = s * (1.0 / np.sqrt(lam * norm2)), 1.0 / lam
    return a, ct, s, norm2


@pytest.mark.parametrize("step_evals", [1, 500, STEP_EVALS])
@pytest.mark.parametrize("k,projection", [(1, True), (1, False), (3, True)])
def test_same_iterates_bit_for_bit_whatever_the_steps(small, monkeypatch, step_evals, k, projection):
    """Several rows per step (:func:`step_rows`), ended by any limit, leave the iterates of one step at a time."""
    monkeypatch.setattr(responses, "STEP_EVALS", step_evals)  # 1 row a step, 4 rows, all
    problem, lam = build_problem(small, lam=0.01), 0.01
    kernel, n = problem.kernel, problem.n
    solver = Pegasos(problem, np.random.default_rng(6), PegasosParams(mini_batch=k, projection=projection))
    for t in (1, 2, 3, 10, 57, n, 3 * n + 11):
        solver.advance(t, np.inf, np.inf)
    for evals in (1, n, n + 1, 7 * n, 7 * n + 5):
        limit = kernel.kernel_evals + evals
        solver.advance(np.inf, limit, np.inf)
        assert limit <= kernel.kernel_evals < limit + k * n  # ended by the iteration of the row reaching the limit
    a, ct, s, norm2 = pegasos_plain(build_problem(small, lam=lam).kernel, problem.y, lam, solver.iteration, k,
                                    projection, np.random.default_rng(6))
    assert np.array_equal(solver.a, a) and np.array_equal(solver.ct, ct)
    assert (solver.s, solver.norm2) == (s, norm2)
    assert kernel.kernel_evals == solver.expected_kernel_evals()
