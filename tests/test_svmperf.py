"""SVMperf (sbpbench.solvers.svmperf) against LIBLINEAR's optimum and against its own guarantee.

SVMperf's epsilon is in its percent units: at termination the returned w is within
``C_perf epsilon = C n epsilon / 100`` of the optimum of the 1-slack problem, which is the
L1-SVM's ``J_opt`` (Joachims 2006, Theorem 1 and the cutting-plane algorithm's stopping rule).
"""

from __future__ import annotations

import numpy as np
import pytest

from sbpbench.solvers.svmperf import INACTIVE_SOLVES, SVMPERF_QP_PRECISION
from tests.exact import liblinear_optimum
from tests.problems import SVM_CASES, make_solver, run_epochs, svm_problem

#: Epochs enough for every run here to end by its own rule.
UNTIL_DONE = 10**9


def _ceps(solver) -> float:
    """SVMperf's CEps at the solver's w: the most violated constraint's excess over the working
    set's slack, in percent, computed densely here."""
    problem = solver.problem
    risk = np.maximum(0.0, 1.0 - problem.y * (problem.kernel.X @ solver.w)).sum()
    return max(0.0, risk - solver.model.slack(solver.w)) * 100.0 / problem.n


@pytest.mark.parametrize("dataset,C", SVM_CASES)
def test_reaches_the_liblinear_optimum_within_its_epsilon(dataset, C):
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    epsilon = 1e-4
    solver, finished = run_epochs(problem, "svmperf", UNTIL_DONE, epsilon=epsilon)
    snap = solver.snapshot()
    assert finished
    assert -1e-9 * j_opt <= snap.objective - j_opt <= C * problem.n * epsilon / 100 + 1e-9 * j_opt
    assert snap.objective / j_opt - 1 < 1e-5
    lower = snap.extra["dual_objective"] / problem.lam
    assert j_opt - 1e-5 * j_opt < lower <= j_opt * (1 + 1e-9)
    assert snap.primal_objective == pytest.approx(snap.objective * problem.lam)
    assert problem.kernel.kernel_evals == 0 and solver.iteration == solver.passes * problem.n


@pytest.mark.parametrize("epsilon", [0.7, 0.1, 0.01])
@pytest.mark.parametrize("dataset,C", SVM_CASES)
def test_guarantee_at_termination(dataset, C, epsilon):
    """Within C_perf epsilon of J_opt, stopped at the first pass whose CEps is at most epsilon,
    and within the paper's bound on the number of iterations."""
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    solver, finished = run_epochs(problem, "svmperf", UNTIL_DONE, epsilon=epsilon)
    snap = solver.snapshot()
    c_perf = C * problem.n / 100
    assert finished and _ceps(solver) <= epsilon
    assert snap.objective - j_opt <= c_perf * epsilon + 1e-9 * j_opt
    assert snap.extra["dual_objective"] / problem.lam <= j_opt * (1 + 1e-9)
    # the pass before (at the w of the state two passes back) did not meet the rule
    before = make_solver(problem, "svmperf", epsilon=epsilon)
    assert solver.passes >= 2 and not before.advance((solver.passes - 2) * problem.n, np.inf, np.inf)
    assert _ceps(before) > epsilon
    # the bound on the iterations, in the units of the paper's OP2: C n and epsilon / 100
    r2 = float(problem.kernel.sq.max())
    e = epsilon / 100
    assert solver.passes <= max(2 / e, 8 * C * problem.n * r2 / e**2)


def test_inactive_cuts_leave_the_working_set():
    """A long run (small epsilon) drops the cuts whose dual variable stayed zero for 50 solutions."""
    problem = svm_problem("w8a", 1.0)
    solver, finished = run_epochs(problem, "svmperf", UNTIL_DONE, epsilon=1e-3)
    assert finished and solver.solves == solver.passes - 1
    assert solver.model.K < solver.solves  # some were removed
    assert np.all(solver.solves - solver.last_active < INACTIVE_SOLVES)
    assert solver.last_active.size == solver.model.K
    assert solver.snapshot().extra["cuts"] == solver.model.K


@pytest.mark.parametrize("dataset,C", SVM_CASES)
def test_svmperf_qp_precision_stops_its_qp_early_and_takes_its_slack_estimate(dataset, C):
    """With SVMperf's QP precision (half the smallest CEps so far) each reduced QP ends once the
    active cuts' slacks are within it of the largest, CEps is taken against SVMperf's slack
    estimate, and the iterates differ from the exact QP's, the dual value still a lower bound."""
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    epsilon = 0.1
    solver, finished = run_epochs(problem, "svmperf", UNTIL_DONE, epsilon=epsilon, qp_precision=SVMPERF_QP_PRECISION)
    exact, _ = run_epochs(problem, "svmperf", UNTIL_DONE, epsilon=epsilon)
    model = solver.model
    g = model._H[: model.K, : model.K] @ model.alpha - model._b[: model.K]
    active = g[model.alpha > 0]
    violation = max(active.max(), 0.0 if model.alpha.sum() < C * (1 - 1e-12) else -np.inf) - min(0.0, g.min())
    assert finished and violation <= SVMPERF_QP_PRECISION * solver.best_ceps * problem.n / 100 * (1 + 1e-9)
    risk = np.maximum(0.0, 1.0 - problem.y * (problem.kernel.X @ solver.w)).sum()
    assert (risk - model.active_slack(solver.w)) * 100 / problem.n <= epsilon
    assert model.active_slack(solver.w) <= model.slack(solver.w)
    assert solver.passes != exact.passes and solver.snapshot().extra["dual_objective"] / problem.lam <= j_opt
    assert 0 <= solver.snapshot().objective / j_opt - 1 < 0.01
