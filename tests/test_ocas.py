"""OCAS (sbpbench.solvers.ocas) against LIBLINEAR's optimum, its own stopping rules, an exhaustive
line search, and the real libocas (``svmocas`` of Debian's libocas-tools 0.97) where it is installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sbpbench.solvers.ocas import line_search
from tests.exact import liblinear_optimum
from tests.problems import SVM_CASES, make_solver, run_epochs, svm_problem

#: Epochs enough for every run here to end by its own rule.
UNTIL_DONE = 10**9


def _bound(snap, problem) -> float:
    """The cutting-plane model's lower bound F (C form), from the snapshot's columns."""
    return snap.extra["dual_objective"] / problem.lam


@pytest.mark.parametrize("dataset,C", SVM_CASES)
def test_reaches_the_liblinear_optimum(dataset, C):
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    solver, finished = run_epochs(problem, "ocas", UNTIL_DONE, tol_rel=1e-8)
    snap = solver.snapshot()
    assert finished
    assert abs(snap.objective / j_opt - 1) < 1e-7
    assert j_opt * (1 - 1e-7) <= _bound(snap, problem) <= j_opt * (1 + 1e-9)
    assert snap.objective - _bound(snap, problem) <= 1e-8 * snap.objective * (1 + 1e-6)
    assert problem.kernel.kernel_evals == 0 and solver.iteration == solver.cutting_planes * problem.n


@pytest.mark.parametrize("tol_rel", [0.01, 1e-4])
@pytest.mark.parametrize("dataset,C", SVM_CASES)
def test_relative_tolerance_at_termination(dataset, C, tol_rel):
    """J - F <= r |J| with F <= J_opt, first met at the last iteration."""
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    solver, finished = run_epochs(problem, "ocas", UNTIL_DONE, tol_rel=tol_rel)
    snap = solver.snapshot()
    assert finished
    assert snap.objective == pytest.approx(solver.objective, rel=1e-12)  # J(w_b) as the rule saw it
    assert snap.objective - _bound(snap, problem) <= tol_rel * snap.objective * (1 + 1e-9)
    assert _bound(snap, problem) <= j_opt * (1 + 1e-9)
    assert snap.objective / j_opt - 1 <= tol_rel / (1 - tol_rel)
    before = make_solver(problem, "ocas", tol_rel=tol_rel)
    assert not before.advance((solver.cutting_planes - 1) * problem.n, np.inf, np.inf)
    assert before.objective - before.model.value > tol_rel * before.objective


def test_objective_bound_absolute_tolerance_and_cut_buffer():
    """The SGD paper's rule q = 1.01 J_opt, libocas's TolAbs and its cut buffer each end a run
    on their own (the relative tolerance switched off)."""
    problem = svm_problem("adult", 0.05)
    j_opt = liblinear_optimum(problem, ("adult", 0.05)) / problem.lam
    q = 1.01 * j_opt
    solver, finished = run_epochs(problem, "ocas", UNTIL_DONE, tol_rel=0.0, objective_bound=q)
    assert finished and solver.objective <= q and solver.snapshot().objective <= q
    before = make_solver(problem, "ocas", tol_rel=0.0, objective_bound=q)
    before.advance((solver.cutting_planes - 1) * problem.n, np.inf, np.inf)
    assert not before.finished and before.objective > q
    solver, finished = run_epochs(problem, "ocas", UNTIL_DONE, tol_rel=0.0, tol_abs=1e-3)
    assert finished and solver.objective - solver.model.value <= 1e-3
    assert solver.snapshot().objective / j_opt - 1 < 1e-3 / j_opt * (1 + 1e-6)
    solver, finished = run_epochs(problem, "ocas", UNTIL_DONE, tol_rel=0.0, max_cuts=7)
    assert finished and solver.cutting_planes == 7 and solver.model.K == 7


def _along(old, new, A0, B0, C, k) -> float:
    """The line search's objective at k (up to a constant)."""
    return 0.5 * A0 * k * k + B0 * k + C * np.maximum(0.0, 1.0 - old - k * (new - old)).sum()


def _exhaustive_minimum(old, new, A0, B0, C) -> float:
    """min over k >= 0: the least value over 0, the breakpoints and each piece's stationary point."""
    Ci, Bi = C * (1 - old), C * (old - new)
    with np.errstate(divide="ignore", invalid="ignore"):
        points = np.unique(np.append(0.0, (-Ci / Bi)[(Bi != 0) & (-Ci / Bi > 0)]))
    candidates = list(points)
    for lo, hi in zip(points, np.append(points[1:], np.inf)):
        mid = lo + 1.0 if np.isinf(hi) else 0.5 * (lo + hi)
        active = Ci + mid * Bi > 0
        k = -(B0 + Bi[active].sum()) / A0
        if lo <= k <= hi:
            candidates.append(k)
    return min(_along(old, new, A0, B0, C, k) for k in candidates)


@pytest.mark.parametrize("seed", range(8))
def test_line_search_is_exact(seed):
    rng = np.random.default_rng(seed)
    n = 60
    old, new = rng.normal(1.0, 1.0, n), rng.normal(1.2, 1.0, n)
    old[:5] = 1.0  # examples exactly at the margin
    A0, C = rng.uniform(0.1, 10.0), rng.uniform(0.05, 2.0)
    B0 = -rng.uniform(0.0, 5.0)
    k = line_search(old, new, A0, B0, C, np.empty(n), np.empty(n))
    assert k >= 0
    value = _along(old, new, A0, B0, C, k)
    assert value == pytest.approx(_exhaustive_minimum(old, new, A0, B0, C), rel=1e-12, abs=1e-12)


def test_line_search_stops_at_a_kink():
    """One example whose hinge turns off at k = 0.5 with a slope larger than the rest: the minimum
    is the breakpoint itself (libocas's interpolation across the breakpoint stops short of it)."""
    old, new = np.array([0.0]), np.array([2.0])  # 1 - old - k (new - old) = 1 - 2k: zero at 0.5
    A0, B0, C = 1.0, -0.2, 1.0  # derivative -0.2 - 2 + k before 0.5, -0.2 + k after
    k = line_search(old, new, A0, B0, C, np.empty(1), np.empty(1))
    assert k == 0.5
    assert line_search(old, new, 1.0, 3.0, C, np.empty(1), np.empty(1)) == 0.0  # ascent at 0


def _write_svmlight(path: Path, problem) -> None:
    X = problem.kernel.X.tocsr().sorted_indices()
    with path.open("w") as f:
        for i in range(problem.n):
            cols, vals = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
            pairs = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(cols, vals) if v != 0)
            f.write(f"{int(problem.y[i]):+d} {pairs}\n")


def _svmocas(tmp_path: Path, problem, C: float, tol_rel: float) -> tuple[int, float]:
    """svmocas on the problem (no bias, OCAS method): its iterations and J of the w it saved."""
    data, model = tmp_path / "train.light", tmp_path / "model.txt"
    if not data.exists():
        _write_svmlight(data, problem)
    done = subprocess.run(["svmocas", "-c", repr(C), "-b", "0", "-m", "1", "-a", "0", "-q", "0", "-r", repr(tol_rel),
                           "-v", "1", str(data), str(model)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    iterations = int(re.findall(r"^\s*(\d+): tim=", done.stdout, re.MULTILINE)[-1])
    saved = np.loadtxt(model)
    w = np.zeros(problem.kernel.d)
    w[: saved.size - 1] = saved[:-1]  # the last line is the bias (0 here)
    assert saved[-1] == 0.0
    J = 0.5 * w @ w + C * np.maximum(0.0, 1.0 - problem.y * (problem.kernel.X @ w)).sum()
    return iterations, float(J)


@pytest.mark.skipif(shutil.which("svmocas") is None, reason="svmocas not installed: apt-get install libocas-tools")
@pytest.mark.parametrize("dataset,C", SVM_CASES + [("adult", 1.0)])
def test_against_libocas(tmp_path, dataset, C):
    """Our OCAS and libocas's svmocas on the same problem.

    Objectives, at tol_rel = 1e-6: each run ends with J - F <= 1e-6 J and F <= J_opt, so both
    are within 1e-6 J of J_opt and of each other. Iterations, at the tables' tol_rel = 0.01:
    within 10% (at least 2). They need not be equal: libocas's line search interpolates the
    derivative across the next breakpoint (ours is exact), and libocas solves the reduced QP
    only to a relative gap of tol_rel/2 (ours to 1e-10), so the iterates drift apart; the
    differences grow with the number of iterations (at 1e-6 they reach 20%, both ways).
    """
    problem = svm_problem(dataset, C)
    j_opt = liblinear_optimum(problem, (dataset, C)) / problem.lam
    theirs_it, theirs_J = _svmocas(tmp_path, problem, C, 1e-6)
    ours, finished = run_epochs(problem, "ocas", UNTIL_DONE, tol_rel=1e-6)
    assert finished
    assert abs(ours.snapshot().objective - theirs_J) <= 1e-6 * theirs_J * (1 + 1e-3)
    assert abs(theirs_J / j_opt - 1) <= 1.01e-6
    theirs_it, theirs_J = _svmocas(tmp_path, problem, C, 0.01)
    ours, finished = run_epochs(problem, "ocas", UNTIL_DONE, tol_rel=0.01)
    assert finished and abs(ours.cutting_planes - theirs_it) <= max(2, 0.1 * theirs_it)
    assert abs(ours.snapshot().objective - theirs_J) <= 0.01 * theirs_J
