"""SBP (Algorithm 1): against a literal dense implementation, the exact optimum, and its cost model."""

import numba
import numpy as np
import pytest

from sbpbench.solvers import sbp as sbp_module
from sbpbench.solvers.sbp import (
    BELOW,
    FOUND_FULL,
    FOUND_IN_WINDOW,
    FOUND_NEAR,
    GATHERED,
    LEVEL,
    SBP,
    STEP_RESPONSES,
    _plain_iteration,
    _serial_iteration,
)
from sbpbench.solvers.waterlevel import water_level, water_level_bias
from sbpbench.threads import FasterOfTwo
from tests.exact import kernel_matrix, slack_constrained_optimum
from tests.problems import adult, build_problem


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


@pytest.mark.parametrize("kernel, fold_below", [("gaussian", 1e-4), ("gaussian", 0.99), ("linear", 1e-4)])
def test_matches_the_literal_algorithm(tiny, monkeypatch, kernel, fold_below):
    """Gaussian: K(x, x) = 1; linear: K(x, x) = ||x||^2 (up to 14 on Adult), so the initial step
    1/sqrt(max K(x, x)) differs from 1/max K(x, x) and from 1."""
    # fold_below=0.99 rebases the scale into the vectors at almost every projection; 2500
    # iterations draw past the 1024 raw outputs fetched at once, within a step
    monkeypatch.setattr(sbp_module, "REBASE_BELOW", fold_below)
    nu, T = 0.05, 2500
    problem = build_problem(tiny, kernel=kernel, nu=nu, lam=1 / 60)
    solver = SBP(problem, np.random.default_rng(3))
    solver.advance(T, np.inf, np.inf)
    snap = solver.snapshot()
    K = kernel_matrix(tiny[0].X, sigma2=10.0, kind=kernel)
    assert kernel == "gaussian" or K.diagonal().max() > 4  # the step's scale is tested
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


@pytest.fixture(scope="module")
def adult_2000():
    """2000 Adult rows: four blocks of the fused pass, windows of hundreds of responses."""
    return build_problem(adult(2000, seed=11, test=10))


def _fresh(problem, bias):
    problem.bias = bias
    problem.kernel.reset()
    return problem


@pytest.mark.parametrize("bias", [False, True])
def test_windowed_water_level_keeps_the_trajectory_bitwise(adult_2000, monkeypatch, bias):
    """The level selected in the windows that the update gathers samples exactly what the full selection samples.

    The reference run never has a window (``WINDOW_START = 0``): every iteration updates
    the responses without gathering and runs the full selection and the plain sampling.
    Without a bias the compiled iteration counts how each level was found; with one, the
    calls are recorded.
    """
    problem = _fresh(adult_2000, bias)
    problem.nu = 0.02
    found = []
    if bias:
        original, original_retry = sbp_module.level_from_windows, sbp_module.water_level_bias_near

        def recording(*args):
            result = original(*args)
            found.append(result[5] >= 0)
            return result

        def recording_retry(*args):
            found.append("retry")
            return original_retry(*args)

        monkeypatch.setattr(sbp_module, "level_from_windows", recording)
        monkeypatch.setattr(sbp_module, "water_level_bias_near", recording_retry)
    windowed = SBP(problem, np.random.default_rng(5))
    windowed.advance(1500, np.inf, np.inf)
    monkeypatch.undo()
    hits, retries = ((sum(f is True for f in found), found.count("retry")) if bias else
                     (windowed._ints[FOUND_IN_WINDOW], windowed._ints[FOUND_NEAR]))
    assert hits > 1200 and retries > 0  # both the window and the second try were used
    monkeypatch.setattr(sbp_module, "WINDOW_START", 0.0)
    full = SBP(_fresh(problem, bias), np.random.default_rng(5))
    full.advance(1500, np.inf, np.inf)
    assert full._windows is None if bias else full._ints[FOUND_FULL] == 1500
    for state in ("a", "ct", "acc_a", "acc_c"):
        assert np.array_equal(getattr(windowed, state), getattr(full, state)), state
    assert (windowed.s, windowed.P) == (full.s, full.P)


def test_steps_of_many_iterations_keep_the_trajectory_bitwise(tiny):
    """A step does :data:`STEP_RESPONSES` responses' worth of iterations (here hundreds, with
    the raw outputs of the draws refilled within a step): the iterates of one iteration a step."""
    assert STEP_RESPONSES // 60 > 1000
    problem = build_problem(tiny, nu=0.05)
    runs = [SBP(problem, np.random.default_rng(8)) for _ in range(2)]
    runs[0].advance(3000, np.inf, np.inf)
    for t in range(1, 3001):
        runs[1].advance(t, np.inf, np.inf)
    for state in ("a", "ct", "acc_a", "acc_c"):
        assert np.array_equal(getattr(runs[0], state), getattr(runs[1], state)), state
    assert problem.kernel.kernel_evals == 2 * 3000 * 60


def test_rows_computed_in_the_update_pass_keep_the_trajectory_bitwise(adult_2000):
    """Without a row cache, each block of a bit-set row is computed in the unbiased update pass
    (``Kernel.row_blocks``); with one, the pass reads the cached rows: the same iterates bit for
    bit, and the same count."""
    problem = _fresh(adult_2000, False)
    problem.nu = 0.02
    assert isinstance(problem.kernel.row_blocks(0), tuple)
    problem.kernel.reset()
    cached = build_problem(adult(2000, seed=11, test=10), nu=0.02, cache_mb=100)
    runs = [SBP(p, np.random.default_rng(4)) for p in (problem, cached)]
    for run in runs:
        run.advance(800, np.inf, np.inf)
    for state in ("a", "ct", "acc_a", "acc_c"):
        assert np.array_equal(getattr(runs[0], state), getattr(runs[1], state)), state
    assert problem.kernel.kernel_evals == cached.kernel.kernel_evals == 800 * 2000
    assert cached.kernel.kernel_evals_computed < problem.kernel.kernel_evals_computed == 800 * 2000


def test_update_pass_split_over_threads_keeps_the_trajectory_bitwise(adult_2000, monkeypatch):
    """The unbiased pass over numba's threads (stretches of blocks; 3, more than this machine may
    have) gives the iterates of the one-thread pass; SBP picks between them by their speed
    where numba has threads."""
    problem = _fresh(adult_2000, False)
    problem.nu = 0.02
    monkeypatch.setattr(sbp_module, "PARALLEL_PASS_MIN", 0)
    threaded = SBP(problem, np.random.default_rng(6))
    if numba.get_num_threads() > 1:
        assert isinstance(threaded._pass, FasterOfTwo)
    threaded._pass = lambda *args: _plain_iteration(*args, 3)
    threaded.advance(800, np.inf, np.inf)
    monkeypatch.setattr(sbp_module, "PARALLEL_PASS_MIN", np.inf)
    serial = SBP(_fresh(problem, False), np.random.default_rng(6))
    assert serial._pass is _serial_iteration
    serial.advance(800, np.inf, np.inf)
    for state in ("a", "ct", "acc_a", "acc_c"):
        assert np.array_equal(getattr(threaded, state), getattr(serial, state)), state


@pytest.mark.parametrize("bias", [False, True])
def test_windowed_level_equals_the_full_selection_at_every_iteration(adult_2000, monkeypatch, bias):
    """Along a real trajectory, every windowed level has the full selection's set below it.

    Without a bias: the same count below, a level equal to the last bits, and exactly that
    many responses strictly below it (one iteration a step: the level of the step's sample is
    left in the solver's state). With a bias: the same ``k`` and ``k``-th responses, and each
    class's count below them.
    """
    problem = _fresh(adult_2000, bias)
    problem.nu = 0.02
    solver = SBP(problem, np.random.default_rng(2))
    checked = []

    def biased(*args):
        got = original(*args)
        if got[5] >= 0:
            ct, y = solver.ct, solver.y
            gamma, b, k, top_pos, top_neg = water_level_bias(y, ct, args[1], np.empty(ct.size))
            assert got[2:5] == (k, top_pos, top_neg)
            assert got[6:8] == (np.count_nonzero(ct[y > 0] < top_pos), np.count_nonzero(ct[y < 0] < top_neg))
            assert got[0] == pytest.approx(gamma, rel=1e-12, abs=1e-15)
            assert got[1] == pytest.approx(b, rel=1e-9, abs=1e-12)
            checked.append(True)
        return got

    if bias:
        original = sbp_module.level_from_windows
        monkeypatch.setattr(sbp_module, "level_from_windows", biased)
        solver.advance(1000, np.inf, np.inf)
    else:
        for t in range(1, 1001):
            ct, volume = solver.ct.copy(), solver.volume / solver.s
            solver.advance(t, np.inf, np.inf)
            if solver._ints[GATHERED]:
                gamma, below = solver._scalars[LEVEL], solver._ints[BELOW]
                full_gamma, full_below = water_level(ct, volume, np.empty(ct.size))
                assert below == full_below == np.count_nonzero(ct < gamma)
                assert gamma == pytest.approx(full_gamma, rel=1e-12, abs=1e-15)
                checked.append(True)
    assert len(checked) > 800
