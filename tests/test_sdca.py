"""Kernel SDCA: exact optimum on real data, step-by-step agreement with a plain reference, counts."""

from dataclasses import replace

import numpy as np
import pytest

from sbpbench.solvers import SOLVERS, responses
from sbpbench.solvers.dual import TAU, box_bounds
from sbpbench.solvers.responses import STEP_EVALS
from sbpbench.solvers.sampling import DRAW_CHUNK
from tests.exact import gram, unbiased_optimum
from tests.problems import real_problem, run_to_end


def sdca(problem, seed=0):
    return SOLVERS["sdca"](problem, np.random.default_rng(seed))


@pytest.mark.parametrize("name", ["adult", "reuters", "w8a"])
def test_reaches_the_scipy_optimum(name):
    problem = real_problem(name, 300, bias=False)
    s = sdca(problem)
    for _ in range(400):  # epochs, until the duality gap is tiny
        run_to_end(s, s.iteration + problem.n)
        snap = s.snapshot()
        if snap.extra["duality_gap"] < 1e-7 * snap.extra["dual_objective"]:
            break
    _, ref_primal, ref_dual = unbiased_optimum(problem)
    assert abs(snap.primal_objective - ref_dual) < 1e-4 * ref_dual
    assert snap.extra["dual_objective"] <= ref_primal + 1e-12
    assert snap.extra["duality_gap"] >= 0


def test_matches_plain_dual_coordinate_ascent():
    problem = real_problem("adult", 200, bias=False)
    n = problem.n
    s = sdca(problem, seed=7)
    epochs = 5
    assert run_to_end(s, epochs * n) is False and s.iteration == epochs * n

    # the same algorithm written plainly over scikit-learn's kernel matrix, same random stream
    Q = gram(problem) * np.outer(problem.y, problem.y)
    C = 1.0 / (problem.lam * n)
    rng = np.random.default_rng(7)
    draws = np.concatenate([rng.integers(0, n, size=DRAW_CHUNK) for _ in range(-(-epochs * n // DRAW_CHUNK))])
    alpha = np.zeros(n)
    for i in draws[: epochs * n]:
        alpha[i] = min(max(alpha[i] - (Q[i] @ alpha - 1.0) / Q[i, i], 0.0), C)
    np.testing.assert_allclose(s.alpha, alpha, rtol=0, atol=1e-9 * C)


def test_one_kernel_row_per_nonzero_step():
    problem = real_problem("adult", 200, bias=False)
    n, k = problem.n, problem.kernel
    s = sdca(problem, seed=3)
    changed = 0
    for t in range(1, 4 * n + 1):  # one iteration at a time
        before = s.alpha.copy()
        evals = k.kernel_evals
        run_to_end(s, t)
        moved = not np.array_equal(before, s.alpha)
        changed += moved
        assert k.kernel_evals - evals == (n if moved else 0)
    assert k.kernel_evals == k.kernel_evals_computed == s.expected_kernel_evals() == changed * n  # cache_mb = 0
    assert 0 < changed < 4 * n  # some draws were zero steps and cost nothing


def test_stops_at_kernel_eval_budget_and_snapshot_is_consistent():
    problem = real_problem("adult", 200, bias=False)
    s = sdca(problem)
    s.advance(10**9, 50 * problem.n, np.inf)
    assert problem.kernel.kernel_evals == 50 * problem.n
    snap = s.snapshot()
    np.testing.assert_array_equal(snap.support, np.flatnonzero(s.alpha))
    np.testing.assert_allclose(snap.coef, s.alpha[snap.support] * problem.y[snap.support])


def plain_sdca(kernel, y, C, rng, T):
    """SDCA in plain numpy with the solver's arithmetic, in the solver's order (bit for bit its iterates)."""
    n = y.size
    diag, alpha, q = kernel.diag(), np.zeros(n), np.zeros(n)
    draws = np.concatenate([rng.integers(0, n, size=DRAW_CHUNK) for _ in range(-(-T // DRAW_CHUNK))])
    for i in draws[:T]:
        new = min(max(alpha[i] - (q[i] - 1.0) / (diag[i] if diag[i] > 0 else TAU), 0.0), C[i])
        if new != alpha[i]:
            q += ((new - alpha[i]) * y[i]) * y * kernel.row(i)
            alpha[i] = new
    return alpha, q


@pytest.mark.parametrize("step_evals", [1, 700, STEP_EVALS])
def test_same_iterates_bit_for_bit_whatever_the_steps(monkeypatch, step_evals):
    """Several rows per step (:func:`step_rows`), ended by any limit, leave the iterates of one step at a time."""
    monkeypatch.setattr(responses, "STEP_EVALS", step_evals)  # 1 row a step, 5 rows, all
    base = real_problem("adult", 150, bias=False)
    weights = np.random.default_rng(2).uniform(0.0, 3.0, base.n)
    weights[::7] = 0.0  # C_i = 0: steps that stay at the bound
    for problem in (base, replace(base, weights=weights)):
        n, k = problem.n, problem.kernel
        k.reset()
        s = sdca(problem, seed=4)
        for t in (1, 2, 3, 10, 57, n, 3 * n + 11):
            s.advance(t, np.inf, np.inf)
        for evals in (1, n, n + 1, 7 * n, 7 * n + 5):
            limit = k.kernel_evals + evals
            s.advance(np.inf, limit, np.inf)
            assert k.kernel_evals - n < limit <= k.kernel_evals  # ended by the first row reaching the limit
        alpha, q = plain_sdca(real_problem("adult", 150).kernel, problem.y, box_bounds(problem),
                              np.random.default_rng(4), s.iteration)
        assert np.array_equal(s.alpha, alpha) and np.array_equal(s.q, q)
        assert k.kernel_evals == s.expected_kernel_evals()
