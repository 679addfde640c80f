"""SvmSgd (Bottou's sgd 2.x ``svmsgd``) against independent answers.

* The optimum of small real problems (LIBLINEAR at tol 1e-10, as in ``test_linear_solvers``):
  SvmSgd is a stochastic gradient method without a certificate (no dual bound, no stopping
  rule), so the test states the epochs after which it is within a relative 1e-2 of the
  optimum, in double and in single precision.
* Its step and its ``eta0`` search against a plain-Python transcription of sgd 2.x's
  ``trainOne``, ``evaluateEta`` and ``determineEta0`` (double precision).
"""

from __future__ import annotations

import numpy as np
import pytest

from sbpbench.data.split import Split
from sbpbench.problem import Problem
from sbpbench.solvers.svmsgd import FACTOR, RENORM, SAMPLE
from tests.exact import liblinear_optimum
from tests.problems import SVM_CASES, adult, build_problem, make_solver, run_epochs, svm_problem


@pytest.mark.parametrize("precision", ["double", "single"])
@pytest.mark.parametrize("dataset,C", SVM_CASES)
def test_reaches_liblinear_optimum_within_1e2(dataset, C, precision):
    problem = svm_problem(dataset, C)
    opt = liblinear_optimum(problem, (dataset, C))
    solver, finished = run_epochs(problem, "svmsgd", 100, precision=precision)
    snap = solver.snapshot()
    assert not finished and solver.iteration == 100 * problem.n  # no stopping rule: the budget ends it
    assert 0 <= snap.primal_objective / opt - 1 < 1e-2
    assert snap.objective == pytest.approx(snap.primal_objective / problem.lam)
    assert problem.kernel.kernel_evals == 0
    assert solver.w.dtype == (np.float32 if precision == "single" else np.float64)
    assert solver.values.dtype == solver.w.dtype


def test_single_precision_follows_double_closely():
    problem = svm_problem("adult", 0.05)
    runs = [run_epochs(problem, "svmsgd", 20, precision=p)[0] for p in ("double", "single")]
    double, single = (s.snapshot().primal_objective for s in runs)
    assert runs[0].eta0 == runs[1].eta0
    assert single != double and abs(single / double - 1) < 1e-4


# ----------------------------------------------------------------------------- the algorithm, transcribed


def _problem_rows(n: int, C: float, scale: float = 1.0) -> Problem:
    """Adult rows (features times ``scale``) with the linear kernel and lambda = 1/(C n)."""
    train, test = adult(n, seed=5, test=20)
    return build_problem((Split(train.X * scale, train.y), test), kernel="linear", sigma2=1.0, lam=1.0 / (C * n))


def _rows(problem: Problem):
    X = problem.kernel.X
    return [(X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]) for i in range(problem.n)]


def _train_one(w: np.ndarray, w_div: float, idx, val, y: float, eta: float, lam: float) -> float:
    """sgd 2.x's ``trainOne`` (hinge loss, no bias) on plain numpy."""
    s = float(np.dot(val, w[idx])) / w_div
    w_div = w_div / (1 - eta * lam)
    if w_div > RENORM:
        w /= w_div
        w_div = 1.0
    if s * y < 1:
        w[idx] += eta * y * w_div * val
    return w_div


def _evaluate_eta(problem: Problem, rows, sample, eta: float) -> float:
    w, w_div = np.zeros(problem.kernel.d), 1.0
    for i in sample:
        w_div = _train_one(w, w_div, *rows[i], problem.y[i], eta, problem.lam)
    v = w / w_div
    margins = np.array([problem.y[i] * np.dot(rows[i][1], v[rows[i][0]]) for i in sample])
    return float(np.maximum(0, 1 - margins).mean() + 0.5 * problem.lam * v @ v)


def _determine_eta0(cost) -> float:
    lo, hi = 1.0, FACTOR
    lo_cost, hi_cost = cost(lo), cost(hi)
    if lo_cost < hi_cost:
        while lo_cost < hi_cost:
            hi, hi_cost = lo, lo_cost
            lo = hi / FACTOR
            lo_cost = cost(lo)
    elif hi_cost < lo_cost:
        while hi_cost < lo_cost:
            lo, lo_cost = hi, hi_cost
            hi = lo * FACTOR
            hi_cost = cost(hi)
    return lo


#: (C, feature scale): the search halves from 1 on Adult's rows, doubles on rows scaled down.
SEARCHES = [(0.05, 1.0), (10.0, 0.01)]


@pytest.mark.parametrize("C,scale", SEARCHES)
def test_eta0_search_and_steps_match_a_transcription_of_sgd(C, scale):
    problem = _problem_rows(1500, C, scale)
    rows = _rows(problem)
    solver = make_solver(problem, "svmsgd")
    solver.advance(2 * problem.n + 17, np.inf, np.inf)
    sample = solver.order[:SAMPLE]
    assert sample.size == SAMPLE
    expected = _determine_eta0(lambda eta: _evaluate_eta(problem, rows, sample, eta))
    assert solver.eta0 == expected
    tried = dict(solver.trials)
    for eta, cost in tried.items():
        assert cost == pytest.approx(_evaluate_eta(problem, rows, sample, eta), rel=1e-10)
    # the rule: the best of the rates tried when it doubled, half the best when it halved
    best = min(tried, key=tried.get)
    assert solver.eta0 == (best if best >= FACTOR else best / FACTOR)
    assert solver.calibration_products == 2 * SAMPLE * len(tried)
    # then the steps, in the fixed order, with eta_t = eta0 / (1 + lambda eta0 t)
    assert np.allclose(solver.weights(), _steps(problem, rows, solver.order, expected, solver.iteration),
                       rtol=1e-9, atol=1e-12)


def _steps(problem: Problem, rows, order: np.ndarray, eta0: float, iterations: int) -> np.ndarray:
    """The weights after ``iterations`` steps of sgd 2.x's ``train`` over ``order``, epoch after epoch."""
    w, w_div = np.zeros(problem.kernel.d), 1.0
    for t in range(iterations):
        i = order[t % problem.n]
        eta = eta0 / (1 + problem.lam * eta0 * t)
        w_div = _train_one(w, w_div, *rows[i], problem.y[i], eta, problem.lam)
    return w / w_div


def test_both_directions_of_the_search_occur():
    """The cases above make the search halve and double (so that both rules are checked)."""
    halving, doubling = (make_solver(_problem_rows(1500, C, scale), "svmsgd") for C, scale in SEARCHES)
    for solver in (halving, doubling):
        solver.advance(1, np.inf, np.inf)
    assert halving.eta0 < 1 < doubling.eta0
    assert len(halving.trials) > 3 and len(doubling.trials) > 3


def test_rescaling_of_the_weights_matches_the_transcription():
    """With eta0 lambda just below 1, wDivisor passes 1e5 at the first step: W is rescaled (O(d))."""
    problem = _problem_rows(300, 1.0)
    solver = make_solver(problem, "svmsgd")
    solver.calibrated, solver.eta0 = True, 0.999999 / problem.lam  # skip the search, as if it chose this
    solver.advance(1, np.inf, np.inf)
    assert solver.state[0] == 1.0  # rescaled
    solver.advance(2 * problem.n, np.inf, np.inf)
    assert solver.state[0] > 1.0  # and growing again
    expected = _steps(problem, _rows(problem), solver.order, solver.eta0, solver.iteration)
    assert np.allclose(solver.weights(), expected, rtol=1e-9, atol=1e-12)
