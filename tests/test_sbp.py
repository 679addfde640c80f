"""SBP (Algorithm 1): against a literal dense implementation, the exact optimum, and its cost model."""

import numpy as np
import pytest

from sbpbench.solvers import sbp as sbp_module
from sbpbench.solvers.sbp import SBP
from tests.exact import kernel_matrix, slack_constrained_optimum
from tests.problems import build_problem


def level_by_sorting(c, volume):
    """Water level by sorting (independent of the package's selection algorithm)."""
    s = np.sort(c)
    cum = np.cumsum(s)
    for k in range(1, s.size + 1):
        gamma = (volume + cum[k - 1]) / k
        if k == s.size or gamma <= s[k]:
            return gamma


def sbp_literal(K, y, nu, T, rng):
    """Algorithm 1 line by line: explicit alpha, responses, projection and averages."""
    n = y.size
    eta0 = 1.0 / np.sqrt(np.max(np.diag(K)))
    alpha, c, r2 = np.zeros(n), np.zeros(n), 0.0
    sum_alpha, sum_c = np.zeros(n), np.zeros(n)
    for t in range(1, T + 1):
        eta = eta0 / np.sqrt(t)
        gamma = level_by_sorting(c, n * nu)
        below = np.flatnonzero(c < gamma)
        i = below[rng.integers(below.size)]
        alpha[i] += eta
        r2 = r2 + 2 * eta * c[i] + eta**2 * K[i, i]
        c = c + eta * y[i] * y * K[i]
        if r2 > 1:
            alpha, c, r2 = alpha / np.sqrt(r2), c / np.sqrt(r2), 1.0
        sum_alpha += alpha
        sum_c += c
    abar, cbar = sum_alpha / T, sum_c / T
    return abar, cbar, level_by_sorting(cbar, n * nu)


@pytest.fixture(scope="module")
def tiny(adult_small):
    train, test = adult_small
    return (train.take(np.arange(60)), test)


@pytest.mark.parametrize("fold_below", [1e-4, 0.99])
def test_matches_the_literal_algorithm(tiny, monkeypatch, fold_below):
    # fold_below=0.99 rebases the scale into the vectors at almost every projection
    monkeypatch.setattr(sbp_module, "REBASE_BELOW", fold_below)
    nu, T = 0.05, 400
    problem = build_problem(tiny, nu=nu, lam=1 / 60)
    solver = SBP(problem, np.random.default_rng(3))
    solver.advance(T, np.inf, np.inf)
    snap = solver.snapshot()
    K = kernel_matrix(tiny[0].X, sigma2=10.0)
    abar, cbar, gbar = sbp_literal(K, tiny[0].y, nu, T, np.random.default_rng(3))
    assert snap.objective == pytest.approx(gbar, rel=1e-9)
    coef = np.zeros(60)
    coef[snap.support] = snap.coef
    np.testing.assert_allclose(coef, abar * tiny[0].y / gbar, rtol=1e-8, atol=1e-12)
    lam = 1 / 60
    primal = 0.5 * lam * (abar @ cbar) / gbar**2 + np.maximum(0, 1 - cbar / gbar).mean()
    assert snap.primal_objective == pytest.approx(primal, rel=1e-8)


def test_cost_model_is_one_row_per_iteration(tiny):
    problem = build_problem(tiny, nu=0.05, cache_mb=1)
    solver = SBP(problem, np.random.default_rng(0))
    solver.advance(250, np.inf, np.inf)
    assert solver.iteration == 250
    assert problem.kernel.kernel_evals == solver.expected_kernel_evals() == 250 * 60
    assert problem.kernel.kernel_evals_computed < problem.kernel.kernel_evals  # rows revisited


def test_stops_at_the_kernel_evaluation_limit(tiny):
    problem = build_problem(tiny, nu=0.05)
    solver = SBP(problem, np.random.default_rng(0))
    solver.advance(10**6, 1000, np.inf)
    assert problem.kernel.kernel_evals == 1020  # the first iteration boundary at or after 1000


@pytest.mark.parametrize("nu", [0.02, 0.2])
def test_approaches_the_exact_slack_constrained_optimum(tiny, nu):
    problem = build_problem(tiny, nu=nu)
    K = kernel_matrix(tiny[0].X, sigma2=10.0)
    optimum = slack_constrained_optimum(K, tiny[0].y, nu)
    solver = SBP(problem, np.random.default_rng(1))
    gaps = []
    for T in (500, 20000):
        solver.advance(T, np.inf, np.inf)
        value = solver.snapshot().objective
        assert value <= optimum + 1e-9  # the averaged iterate is feasible
        gaps.append(optimum - value)
    assert gaps[1] < gaps[0]
    assert gaps[1] < 0.02 * optimum


@pytest.mark.parametrize("bias", [False, True])
def test_windowed_water_level_keeps_the_trajectory_bitwise(adult_small, monkeypatch, bias):
    """The level searched near the last one samples exactly what the full selection samples.

    With a bias the windows are gathered in the update's pass; the reference run also
    updates the responses by the separate ``add_row_and_sum``.
    """
    train = adult_small[0]
    problem = build_problem((train.take(np.arange(min(400, train.n))), adult_small[1]), nu=0.02, lam=1e-3)
    problem.bias = bias
    windowed = SBP(problem, np.random.default_rng(5))
    windowed.advance(1500, np.inf, np.inf)
    hits = []
    name = "level_from_windows" if bias else "water_level_near"
    original = getattr(sbp_module, name)

    def missing(*args):  # record whether the window held the level, then force the full selection
        found = original(*args)
        hits.append(found[5 if bias else 2] >= 0)
        return found[:5] + (-1,) + found[6:] if bias else found[:2] + (-1,)

    monkeypatch.setattr(sbp_module, name, missing)
    if bias:
        gather = sbp_module.gather_class_windows

        def update_apart(classes, c, low, high, buf, where, row, step, acc, weight):
            sbp_module.add_row_and_sum(c, acc, problem.y, row, step, weight)
            return gather(classes, c, low, high, buf, where)

        monkeypatch.setattr(sbp_module, "gather_class_windows", update_apart)
    problem.kernel.reset()
    full = SBP(problem, np.random.default_rng(5))
    full.advance(1500, np.inf, np.inf)
    assert sum(hits) > 1000  # the window held the level in most iterations
    for state in ("a", "ct", "acc_a", "acc_c"):
        assert np.array_equal(getattr(windowed, state), getattr(full, state)), state
    assert (windowed.s, windowed.P) == (full.s, full.P)
