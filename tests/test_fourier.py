"""Random Fourier features: the kernel approximation, the inner-product count, the SVM optimum."""

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from sbpbench.solvers.fourier import Fourier, FourierParams, fourier_features
from tests.problems import adult, build_problem

SIGMA2 = 10.0


def test_features_approximate_gaussian_kernel():
    X = adult(200, seed=11)[0].X.toarray()
    K = rbf_kernel(X, gamma=1.0 / (2 * SIGMA2))
    rng = np.random.default_rng(0)
    errors = []
    for k in (4, 64, 1024):
        F = fourier_features(X @ rng.standard_normal((X.shape[1], k)) / np.sqrt(SIGMA2))
        assert F.shape == (200, 2 * k)
        errors.append(np.abs(F @ F.T - K).mean())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.03
    assert np.allclose(np.einsum("ij,ij->i", F, F), 1.0)  # <P(x), P(x)> = 1 = K(x, x)


def test_inner_products_count_and_doubling():
    n = 120
    problem = build_problem(adult(n, seed=2, test=30), lam=1.0 / n)
    solver = Fourier(problem, np.random.default_rng(0), FourierParams(max_pairs=8))
    assert not solver.counts_kernel_evals
    done = False
    for t in range(1, 5):
        done = solver.advance(t, np.inf, np.inf)
        snap = solver.snapshot()
        assert solver.iteration == t
        assert snap.extra["pairs"] == 2 ** (t - 1)
        assert snap.extra["inner_products"] == 2 ** (t - 1) * n
        assert solver.own_progress() == 2 ** (t - 1) / 8  # for the ETA: k of max_pairs
        assert 0.0 <= snap.test_error(problem) <= 1.0
    assert done
    assert solver.advance(10, np.inf, np.inf)  # nothing left: 16 pairs exceed max_pairs
    assert solver.iteration == 4
    assert problem.kernel.kernel_evals == 0 and problem.kernel.eval_kernel_evals == 0
    # a budget in kernel evaluations applies to inner products; each advance fits one set of
    # pairs (k = 1, 2, 4), so that every k is a checkpoint of Figure 3
    solver = Fourier(problem, np.random.default_rng(0), FourierParams(max_pairs=8))
    pairs = []
    while not solver.advance(10, 3 * n, np.inf):
        pairs.append(solver.pairs)
    assert pairs + [solver.pairs] == [1, 2, 4]
    assert solver.snapshot().extra["inner_products"] == 4 * n


def test_many_features_reach_the_kernel_svm():
    n = 300
    problem = build_problem(adult(n, seed=4, test=2000), lam=1.0 / n, bias=True)
    solver = Fourier(problem, np.random.default_rng(1), FourierParams(max_pairs=2048))
    while not solver.advance(solver.iteration + 1, np.inf, np.inf):
        pass
    assert solver.pairs == 2048
    fourier_error = solver.snapshot().test_error(problem)
    exact = SVC(C=1.0, kernel="rbf", gamma=1.0 / (2 * SIGMA2), tol=1e-8).fit(problem.kernel.X, problem.y)
    exact_error = np.mean(exact.predict(problem.test_X) != problem.test_y)
    assert abs(fourier_error - exact_error) < 0.01, (fourier_error, exact_error)


def _within_monte_carlo(gram: np.ndarray, K: np.ndarray, pairs: int, z: float = 5.0) -> np.ndarray:
    """Where ``gram`` (the features' inner products over ``pairs`` pairs) lies within ``z`` standard
    deviations of ``K``: each inner product is the mean of ``cos(<v, x - x'> / sigma)`` over the
    directions ``v ~ N(0, I)``, of mean ``K(x, x')`` and variance ``(1 + K^4) / 2 - K^2``."""
    sd = np.sqrt(((1.0 + K ** 4) / 2.0 - K ** 2) / pairs)
    return np.abs(gram - K) <= z * sd + 1e-12


def test_the_solvers_own_features_approximate_its_gaussian_kernel():
    """The features the solver fits on (its directions, over its sigma) against exp(-||x - x'||^2 / (2 sigma2)),
    within 5 Monte-Carlo standard deviations at every pair; the kernel of twice sigma2 is not within them."""
    n, pairs = 40, 4096
    problem = build_problem(adult(n, seed=5), lam=1.0 / n)
    solver = Fourier(problem, np.random.default_rng(3), FourierParams(max_pairs=pairs, tol=1e-2))
    while not solver.advance(solver.iteration + 1, np.inf, np.inf):
        pass
    assert solver.pairs == pairs
    X = problem.kernel.X.toarray()
    sq = np.einsum("ij,ij->i", X, X)
    distances = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    K = np.exp(-distances / (2.0 * SIGMA2))
    off = ~np.eye(n, dtype=bool)
    assert 0.2 < K[off].min() and K[off].max() < 0.9  # where the kernel of twice sigma2 is far from it
    F = fourier_features(solver.projections)
    gram = F @ F.T
    assert _within_monte_carlo(gram, K, pairs).all()
    wide = np.exp(-distances / (4.0 * SIGMA2))
    assert not _within_monte_carlo(gram, wide, pairs)[off].any()
    # the predictor maps points the way the features it was fitted on do
    snap = solver.snapshot()
    assert np.allclose(snap.predict(problem.kernel.X), F @ solver.w + solver.b, rtol=1e-9, atol=1e-9)
