"""Independent exact answers for tests: dense numpy/scipy, sharing no code with sbpbench.

Everything here works on an explicit kernel matrix from scikit-learn (or on the data alone,
through scikit-learn's LIBSVM and LIBLINEAR), so a bug in the package's kernel, water level or
solvers cannot hide in the reference. Functions taking a problem read only its data and
parameters (``kernel.X``, ``kernel.spec.sigma2``, ``y``, ``lam``, ``n``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
from sklearn.svm import SVC, LinearSVC


def kernel_matrix(X, Z=None, sigma2: float = 10.0, kind: str = "gaussian") -> np.ndarray:
    """Dense kernel matrix by scikit-learn (the reference for our kernel rows)."""
    if kind == "linear":
        return linear_kernel(X, Z)
    return rbf_kernel(X, Z, gamma=1.0 / (2.0 * sigma2))


def two_basin_lp(y: np.ndarray, c: np.ndarray, volume: float, bias: bool = True, gamma: float | None = None,
                 sense: int = 0) -> tuple[float, float]:
    """The water level with a bias (Equation 3.9) as a linear program over (gamma, b, xi).

    max gamma s.t. gamma <= c_i + y_i b + xi_i, xi >= 0, sum xi <= volume (b = 0 without a
    bias); or, with ``gamma`` fixed, the least (``sense=1``) or largest (``sense=-1``) optimal
    b. Returns ``(gamma, b)``.
    """
    n = c.size
    A = np.zeros((n + 1, n + 2))
    A[:n, 0] = 1.0
    A[:n, 1] = -y
    A[:n, 2:] = -np.eye(n)
    A[n, 2:] = 1.0
    bounds = [(None, None) if gamma is None else (gamma, gamma), (None, None) if bias else (0, 0)]
    cost = np.zeros(n + 2)
    if gamma is None:
        cost[0] = -1.0
    else:
        cost[1] = sense
    res = linprog(cost, A_ub=A, b_ub=np.r_[c, volume], bounds=bounds + [(0, None)] * n, method="highs")
    assert res.status == 0, res.message
    return res.x[0], res.x[1]


def water_level_lp(c: np.ndarray, volume: float) -> float:
    """max gamma s.t. gamma <= c_i + xi_i, xi >= 0, sum xi <= volume, as a linear program."""
    return two_basin_lp(np.ones(c.size), c, volume, bias=False)[0]


def lambda_optimum(K: np.ndarray, y: np.ndarray, lam: float) -> dict:
    """Optimum of Problem 2.2 without bias, via its box-constrained dual (Problem 4.1).

    Solved by L-BFGS-B to tight tolerance; returns the dual variables, the primal objective
    of ``w = sum alpha_i y_i Phi(x_i)`` and the duality gap (which certifies accuracy).
    """
    n = y.size
    Q = K * np.outer(y, y)
    upper = 1.0 / (lam * n)

    def neg_dual(a):
        Qa = Q @ a
        return 0.5 * a @ Qa - a.sum(), Qa - 1.0

    res = minimize(neg_dual, np.zeros(n), jac=True, method="L-BFGS-B", bounds=[(0, upper)] * n,
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 100000, "maxfun": 100000})
    alpha = res.x
    margins = Q @ alpha  # y_i <w, Phi(x_i)>
    norm2 = alpha @ margins
    primal = 0.5 * lam * norm2 + np.maximum(0.0, 1.0 - margins).mean()
    dual = lam * (alpha.sum() - 0.5 * norm2)  # dual of the 1/n-scaled objective
    return {"alpha": alpha, "primal": primal, "dual": dual, "gap": primal - dual, "margins": margins}


def slack_constrained_optimum(K: np.ndarray, y: np.ndarray, nu: float) -> float:
    """Optimal value of Problem 2.3 without bias, through its dual over the simplex.

    ``max_{||w||<=1} max_xi min_i (y_i <w, Phi_i> + xi_i)`` equals
    ``min_{p in simplex} ||sum_i p_i y_i Phi_i|| + n nu max_i p_i`` (minimax); the max is
    written with an epigraph variable and solved by SLSQP. The primal value at the
    minimizing ``p``'s direction is returned after checking that both sides agree.
    """
    n = y.size
    Q = K * np.outer(y, y)

    def objective(z):
        p, m = z[:n], z[n]
        return np.sqrt(max(p @ Q @ p, 1e-300)) + n * nu * m

    cons = [
        {"type": "eq", "fun": lambda z: z[:n].sum() - 1.0},
        {"type": "ineq", "fun": lambda z: z[n] - z[:n]},  # m >= p_i
    ]
    z0 = np.r_[np.full(n, 1.0 / n), 1.0 / n]
    res = minimize(objective, z0, method="SLSQP", constraints=cons,
                   bounds=[(0, 1)] * n + [(0, 1)], options={"ftol": 1e-14, "maxiter": 2000})
    p = res.x[:n]
    dual_value = objective(res.x)
    # primal value of w proportional to sum p_i y_i Phi_i: the water level of its responses
    norm = np.sqrt(p @ Q @ p)
    responses = Q @ p / norm
    primal_value = water_level_lp(responses, n * nu)
    assert abs(primal_value - dual_value) < 1e-5 * max(1.0, abs(dual_value)), (primal_value, dual_value)
    return primal_value


def gram(problem) -> np.ndarray:
    """The Gaussian kernel matrix of a problem's training points, by scikit-learn."""
    return kernel_matrix(problem.kernel.X, sigma2=problem.kernel.spec.sigma2)


def objectives(problem, K: np.ndarray, alpha: np.ndarray, b: float = 0.0) -> tuple[float, float]:
    """(primal, dual) of Problem 2.2 for ``w = sum alpha_i y_i Phi(x_i)`` and bias ``b``."""
    y, lam = problem.y, problem.lam
    q = y * (K @ (alpha * y))
    norm2 = float(alpha @ q)
    primal = 0.5 * lam * norm2 + float(np.maximum(0.0, 1.0 - q - y * b).mean())
    return primal, lam * (float(alpha.sum()) - 0.5 * norm2)


def unbiased_optimum(problem) -> tuple[np.ndarray, float, float]:
    """The dual QP without bias (:func:`lambda_optimum`): ``(alpha, primal, dual)``."""
    opt = lambda_optimum(gram(problem), problem.y, problem.lam)
    return opt["alpha"], opt["primal"], opt["dual"]


def biased_optimum(problem):
    """LIBSVM (scikit-learn SVC) at tol 1e-8: ``(alpha, b, primal, dual)``."""
    m = SVC(C=1.0 / (problem.lam * problem.n), kernel="rbf", gamma=1.0 / (2.0 * problem.kernel.spec.sigma2),
            tol=1e-8, shrinking=False).fit(problem.kernel.X, problem.y)
    alpha = np.zeros(problem.n)
    coef = m.dual_coef_.toarray()[0] if hasattr(m.dual_coef_, "toarray") else m.dual_coef_[0]
    alpha[m.support_] = np.abs(coef)
    b = float(m.intercept_[0])
    primal, dual = objectives(problem, gram(problem), alpha, b)
    return alpha, b, primal, dual


#: LIBLINEAR's optima computed so far, by the key their callers give.
_LIBLINEAR: dict = {}


def liblinear_optimum(problem, key) -> float:
    """Problem 2.2's optimum without bias on a linear kernel, by LIBLINEAR (scikit-learn's LinearSVC)
    at tol 1e-10; computed once per ``key`` (a name of the problem)."""
    if key not in _LIBLINEAR:
        C = 1.0 / (problem.lam * problem.n)
        model = LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=False, tol=1e-10,
                          max_iter=10**6, random_state=0).fit(problem.kernel.X, problem.y)
        w = model.coef_.ravel()
        margins = problem.y * (problem.kernel.X @ w)
        _LIBLINEAR[key] = 0.5 * problem.lam * float(w @ w) + float(np.maximum(0.0, 1.0 - margins).mean())
    return _LIBLINEAR[key]
