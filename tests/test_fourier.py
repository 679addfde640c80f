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
