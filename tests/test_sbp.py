"""SBP (Algorithm 1): against a literal dense implementation, the exact optimum, and its cost model."""

import numba
import numpy as np
import pytest

from sbpbench.solvers import sbp as sbp_module
from sbpbench.solvers.responses import update_and_window, update_and_window_parallel
from sbpbench.solvers.sbp import SBP
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
    # fold_below=0.99 rebases the scale into the vectors at almost every projection
    monkeypatch.setattr(sbp_module, "REBASE_BELOW", fold_below)
    nu, T = 0.05, 400
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
    the responses by ``add_row_and_sum`` and runs the full selection and the plain sampling.
    """
    problem = _fresh(adult_2000, bias)
    problem.nu = 0.02
    name = "level_from_windows" if bias else "level_from_window"
    original = getattr(sbp_module, name)
    retry = "water_level_bias_near" if bias else "water_level_near"
    original_retry = getattr(sbp_module, retry)
    found = []

    def recording(*args):
        result = original(*args)
        found.append(result[5 if bias else 2] >= 0)
        return result

    def recording_retry(*args):
        found.append("retry")
        return original_retry(*args)

    monkeypatch.setattr(sbp_module, name, recording)
    monkeypatch.setattr(sbp_module, retry, recording_retry)
    windowed = SBP(problem, np.random.default_rng(5))
    windowed.advance(1500, np.inf, np.inf)
    monkeypatch.undo()
    hits = sum(f is True for f in found)
    assert hits > 1200 and "retry" in found  # both the window and the second try were used
    monkeypatch.setattr(sbp_module, "WINDOW_START", 0.0)
    full = SBP(_fresh(problem, bias), np.random.default_rng(5))
    full.advance(1500, np.inf, np.inf)
    assert full._windows is None
    for state in ("a", "ct", "acc_a", "acc_c"):
        assert np.array_equal(getattr(windowed, state), getattr(full, state)), state
    assert (windowed.s, windowed.P) == (full.s, full.P)


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
    threaded._pass = lambda *args: update_and_window_parallel(*args, 3)
    threaded.advance(800, np.inf, np.inf)
    monkeypatch.setattr(sbp_module, "PARALLEL_PASS_MIN", np.inf)
    serial = SBP(_fresh(problem, False), np.random.default_rng(6))
    assert serial._pass is update_and_window
    serial.advance(800, np.inf, np.inf)
    for state in ("a", "ct", "acc_a", "acc_c"):
        assert np.array_equal(getattr(threaded, state), getattr(serial, state)), state


@pytest.mark.parametrize("bias", [False, True])
def test_windowed_level_equals_the_full_selection_at_every_iteration(adult_2000, monkeypatch, bias):
    """Along a real trajectory, every windowed level has the full selection's set below it.

    Without a bias: the same count below, a level equal to the last bits, and exactly that
    many responses strictly below it. With a bias: the same ``k`` and ``k``-th responses,
    and each class's count below them.
    """
    problem = _fresh(adult_2000, bias)
    problem.nu = 0.02
    solver = SBP(problem, np.random.default_rng(2))
    checked = []

    def plain(*args):
        gamma, below, inside = original(*args)
        if inside >= 0:
            ct = solver.ct
            full_gamma, full_below = water_level(ct, args[0], np.empty(ct.size))
            assert below == full_below == np.count_nonzero(ct < gamma)
            assert gamma == pytest.approx(full_gamma, rel=1e-12, abs=1e-15)
            checked.append(True)
        return gamma, below, inside

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

    name = "level_from_windows" if bias else "level_from_window"
    original = getattr(sbp_module, name)
    monkeypatch.setattr(sbp_module, name, biased if bias else plain)
    solver.advance(1000, np.inf, np.inf)
    assert len(checked) > 800
