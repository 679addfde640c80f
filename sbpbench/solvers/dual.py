"""The dual of Problem 2.2, shared by the dual solvers (SDCA, SMO, the LIBSVM reference).

Problem 2.2 of the SBP paper is ``min_w lambda/2 ||w||^2 + (1/n) sum_i hinge(y_i (<w, Phi(x_i)> + b))``
(``b = 0`` without bias). With ``C = 1 / (lambda n)`` it is ``lambda`` times LIBSVM's C-SVC primal
``1/2 ||w||^2 + C sum_i xi_i``, and its dual (Problem 4.1 of the SBP paper, times ``lambda``) is

``D(alpha) = lambda (sum_i alpha_i - 1/2 alpha' Q alpha)``,  ``0 <= alpha_i <= C``,
``Q_ij = y_i y_j K(x_i, x_j)`` (and ``y' alpha = 0`` with a bias),

with ``w = sum_i alpha_i y_i Phi(x_i)``. Every dual solver here keeps (or can form) the vector
``q = Q alpha``, whose entries are the responses ``y_i <w, Phi(x_i)>``, so the primal objective
of ``w``, the dual objective and the duality gap cost no kernel evaluation:
``||w||^2 = alpha' q`` and the margins are ``q_i + y_i b``.

``dual_objective`` and ``duality_gap`` are reported on the scale of Problem 2.2 (the C-form
values times ``lambda``), so ``duality_gap = primal_objective - dual_objective >= 0`` whenever
``alpha`` is dual feasible.
"""

from __future__ import annotations

import numpy as np

from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, required

#: LIBSVM's TAU: the curvature used in place of a non-positive ``a_ij`` (Fan, Chen and Lin 2005).
TAU = 1e-12


def box_bound(problem: Problem) -> float:
    """``C = 1 / (lambda n)``, the upper bound of every dual variable."""
    return 1.0 / (required(problem.lam, "lambda") * problem.n)


def box_bounds(problem: Problem) -> np.ndarray:
    """The upper bound of each dual variable: :func:`box_bound` times the problem's example
    weights (``weights_i / (lambda n)``, LIBSVM's ``C_i``), or ``C`` for every one without weights."""
    C = box_bound(problem)
    return np.full(problem.n, C) if problem.weights is None else C * problem.weights


def dual_snapshot(problem: Problem, alpha: np.ndarray, q: np.ndarray, bias: float = 0.0,
                  extra: dict[str, float] | None = None) -> Snapshot:
    """The predictor of a dual point and its primal and dual objectives (no kernel evaluation).

    Parameters
    ----------
    problem : Problem
        The problem (``lam`` must be set).
    alpha : numpy.ndarray
        Dual variables in their box (:func:`box_bounds`).
    q : numpy.ndarray
        ``Q alpha``, the responses ``y_i <w, Phi(x_i)>`` without the bias.
    bias : float
        The bias ``b`` of the predictor.
    extra : dict, optional
        Further columns to report.

    Returns
    -------
    Snapshot
        ``objective`` and ``primal_objective`` are Problem 2.2's objective of ``(w, b)``;
        ``extra`` has ``dual_objective`` and ``duality_gap``.
    """
    y = problem.y
    norm2 = float(alpha @ q)
    primal = required(problem.hinge_objective(q + y * bias, norm2), "lambda")
    dual = required(problem.lam, "lambda") * (float(alpha.sum()) - 0.5 * norm2)
    support = np.flatnonzero(alpha)
    return Snapshot(
        support=support,
        coef=alpha[support] * y[support],
        bias=float(bias),
        objective=primal,
        primal_objective=primal,
        extra={"dual_objective": dual, "duality_gap": primal - dual, **(extra or {})},
    )
