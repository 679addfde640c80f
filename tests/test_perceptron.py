"""The kernel Perceptron against a brute-force Perceptron on the same permutations."""

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from sbpbench.solvers.perceptron import Perceptron
from tests.adult_rows import adult_problem

N = 150
EPOCHS = 3


def brute_force(K, y, orders):
    """Pure numpy Perceptron over the given permutations: mistakes, final alpha, cost."""
    alpha = np.zeros(y.size)
    mistakes, cost = [], 0
    for order in orders:
        for i in order:
            cost += int(np.count_nonzero(alpha))
            if y[i] * ((alpha * y) @ K[:, i]) <= 0:
                alpha[i] += 1
                mistakes.append(i)
    return mistakes, alpha, cost


def test_matches_brute_force_and_cost_model():
    problem = adult_problem(N, seed=5, test=20)
    solver = Perceptron(problem, np.random.default_rng(7))
    solver.advance(EPOCHS * N, np.inf, np.inf)
    rng = np.random.default_rng(7)
    orders = [rng.permutation(N) for _ in range(EPOCHS)]
    K = rbf_kernel(problem.kernel.X.toarray(), gamma=1.0 / 20.0)
    mistakes, alpha, cost = brute_force(K, problem.y, orders)
    snap = solver.snapshot()
    assert solver.mistakes == len(mistakes) == snap.extra["mistakes"]
    assert np.array_equal(np.sort(snap.support), np.flatnonzero(alpha))
    order = np.argsort(snap.support)
    assert np.array_equal(snap.coef[order], (alpha * problem.y)[snap.support[order]])
    assert problem.kernel.kernel_evals == cost  # sum of |SV| at every presentation
    assert problem.kernel.kernel_evals_computed == cost


def test_first_example_is_free_and_a_mistake():
    problem = adult_problem(N, seed=5, test=20)
    solver = Perceptron(problem, np.random.default_rng(0))
    solver.advance(1, np.inf, np.inf)
    assert problem.kernel.kernel_evals == 0
    assert solver.snapshot().n_support == 1
    solver.advance(2, np.inf, np.inf)
    assert problem.kernel.kernel_evals == 1
