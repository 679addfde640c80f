"""SBP (with and without bias) against an exact solution of Problem 2.3 on a tiny Adult sample."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.metrics.pairwise import rbf_kernel

from sbpbench.solvers.sbp import SBP
from tests.exact import two_basin_lp
from tests.problems import adult, build_problem

N = 40
NU = 0.1
SIGMA2 = 10.0


def slack_value(c, y, volume, bias):
    """f(w) of Equation 3.1 / 3.9 from responses c by a linear program over (gamma, b, xi)."""
    return two_basin_lp(y, c, volume, bias)[0]


def exact_optimum(K, y, volume, bias):
    """Optimal value of Problem 2.3, certified by a duality gap below 1e-7.

    By the minimax theorem the value is ``min ||sum_i p_i y_i Phi(x_i)|| + volume max_i p_i``
    over the simplex (with ``sum_i p_i y_i = 0`` when there is a bias): solved by SLSQP, it
    gives an upper bound; the normalized ``w`` it defines gives a lower bound ``f(w)``.
    """
    n = y.size
    Q = np.outer(y, y) * K

    def objective(z):
        p, q = z[:n], z[n]
        return np.sqrt(p @ Q @ p) + volume * q

    cons = [{"type": "eq", "fun": lambda z: z[:n].sum() - 1.0},
            {"type": "ineq", "fun": lambda z: z[n] - z[:n]}]
    if bias:
        cons.append({"type": "eq", "fun": lambda z: z[:n] @ y})
    z0 = np.r_[np.full(n, 1.0 / n), 1.0 / n]
    res = minimize(objective, z0, method="SLSQP", constraints=cons, bounds=[(0, 1)] * (n + 1),
                   options={"ftol": 1e-15, "maxiter": 2000})
    p = np.clip(res.x[:n], 0.0, None)
    p /= p.sum()
    if bias:  # restore sum p_i y_i = 0 exactly: rescale each class to mass 1/2
        p = np.where(y > 0, p / (2 * p[y > 0].sum()), p / (2 * p[y < 0].sum()))
    upper = np.sqrt(p @ Q @ p) + volume * p.max()
    c = Q @ p / np.sqrt(p @ Q @ p)  # responses of w = A p / ||A p||
    lower = slack_value(c, y, volume, bias)
    assert upper - lower < 1e-7, (upper, lower)
    return 0.5 * (upper + lower)


@pytest.mark.parametrize("bias", [False, True])
def test_sbp_approaches_exact_optimum(bias):
    problem = build_problem(adult(N, seed=3, test=10), sigma2=SIGMA2, nu=NU, bias=bias)
    y = problem.y
    X = problem.kernel.X.toarray()
    K = rbf_kernel(X, gamma=1.0 / (2 * SIGMA2))
    volume = N * NU
    opt = exact_optimum(K, y, volume, bias)
    assert opt > 0.05
    solver = SBP(problem, np.random.default_rng(0))
    gaps = []
    for iterations in (10 * N, 400 * N):
        solver.advance(iterations, np.inf, np.inf)
        assert problem.kernel.kernel_evals == N * solver.iteration
        snap = solver.snapshot()
        gamma = snap.objective
        # the snapshot is (w_bar + b_bar) / gamma_bar: its responses times gamma_bar give f(w_bar)
        margins = y * (K[:, snap.support] @ snap.coef + snap.bias)
        assert slack_value(gamma * margins, y, volume, bias) == pytest.approx(gamma, abs=1e-9)
        if bias:
            assert snap.bias != 0.0
        else:
            assert snap.bias == 0.0
        assert gamma <= opt + 1e-9  # ||w_bar|| <= 1: never above the optimum
        gaps.append(opt - gamma)
    assert gaps[1] < gaps[0]
    assert gaps[1] < 0.01 * opt, (gaps, opt)
