"""The kernel Perceptron against a brute-force Perceptron on the same permutations."""

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from sbpbench.solvers.perceptron import Perceptron
from tests.problems import adult, build_problem

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
    problem = build_problem(adult(N, seed=5, test=20))
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
    assert problem.kernel.kernel_evals == solver.expected_kernel_evals() == cost  # sum of |SV| at every presentation
    # computed: one row per mistake (the test kernel has no cache)
    assert problem.kernel.kernel_evals_computed == N * len(mistakes)


def test_budget_in_kernel_evals_stops_as_one_by_one():
    """Stopping at a kernel-evaluation budget presents the same examples as the published loop."""
    problem = build_problem(adult(N, seed=5, test=20))
    solver = Perceptron(problem, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    orders = [rng.permutation(N) for _ in range(EPOCHS)]
    K = rbf_kernel(problem.kernel.X.toarray(), gamma=1.0 / 20.0)
    alpha, cost, presented = np.zeros(N), 0, 0
    for budget in (1, 37, 500, 2001, 7919):
        solver.advance(EPOCHS * N, budget, np.inf)
        for i in np.concatenate(orders)[presented:]:  # the published loop, one example at a time
            if cost >= budget:
                break
            cost += int(np.count_nonzero(alpha))
            presented += 1
            if problem.y[i] * ((alpha * problem.y) @ K[:, i]) <= 0:
                alpha[i] += 1
        assert (solver.iteration, problem.kernel.kernel_evals) == (presented, cost)
        assert solver.snapshot().n_support == np.count_nonzero(alpha)


def test_first_example_is_free_and_a_mistake():
    problem = build_problem(adult(N, seed=5, test=20))
    solver = Perceptron(problem, np.random.default_rng(0))
    solver.advance(1, np.inf, np.inf)
    assert problem.kernel.kernel_evals == 0
    assert solver.snapshot().n_support == 1
    solver.advance(2, np.inf, np.inf)
    assert problem.kernel.kernel_evals == 1
