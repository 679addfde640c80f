"""Kernel SDCA: exact optimum on real data, step-by-step agreement with a plain reference, counts."""

import numpy as np
import pytest

from sbpbench.solvers import SOLVERS
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
