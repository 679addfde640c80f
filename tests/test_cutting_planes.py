"""The cutting-plane helpers shared by SVMperf and OCAS (sbpbench.solvers.cutting_planes).

The reduced dual against an exhaustive solution (every support of the optimum tried), the
compiled pass against dense numpy, the working set's bookkeeping.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp

from sbpbench.solvers.cutting_planes import QP_RELATIVE_GAP, CutModel, margins, solve_reduced_dual, violated_cut


def _exhaustive_dual(H: np.ndarray, b: np.ndarray, C: float) -> float:
    """max b'a - 1/2 a'Ha over a >= 0, sum a <= C, by trying every support (slack included).

    On a support S the optimum satisfies H_SS a_S - b_S = mu 1 (mu = 0 when the slack is in S)
    and sum a = C (or is free when the slack is in S); the best feasible candidate is optimal
    (with H positive definite each system has one solution).
    """
    K = b.size
    best = 0.0  # a = 0
    for size in range(1, K + 1):
        for S in map(list, combinations(range(K), size)):
            HS, bS = H[np.ix_(S, S)], b[S]
            candidates = [np.linalg.solve(HS, bS)]  # slack positive: mu = 0
            kkt = np.block([[HS, -np.ones((size, 1))], [np.ones((1, size)), np.zeros((1, 1))]])
            candidates.append(np.linalg.solve(kkt, np.append(bS, C))[:size])  # sum a = C
            for a in candidates:
                if a.min() >= -1e-12 and a.sum() <= C * (1 + 1e-12):
                    best = max(best, float(bS @ a - 0.5 * a @ HS @ a))
    return best


def _random_cuts(rng: np.random.Generator, K: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut vectors and offsets shaped like the solvers': sums of +-1 rows, b their counts."""
    rows = rng.integers(0, 2, size=(200, d)).astype(float) * rng.choice([-1.0, 1.0], size=(200, 1))
    members = rng.random((K, 200)) < rng.uniform(0.05, 0.6, size=(K, 1))
    return members.astype(float) @ rows, members.sum(axis=1).astype(float)


def _solve(A: np.ndarray, b: np.ndarray, C: float) -> tuple[float, np.ndarray]:
    H = A @ A.T
    alpha = np.zeros(b.size)
    value, _ = solve_reduced_dual(H, b, alpha, C, b.size, QP_RELATIVE_GAP, 10**6)
    return value, alpha


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("C", [0.05, 1.0, 30.0])
def test_reduced_dual_is_the_exhaustive_optimum(seed, C):
    rng = np.random.default_rng(seed)
    A, b = _random_cuts(rng, 6, 12)
    value, alpha = _solve(A, b, C)
    assert alpha.min() >= 0 and alpha.sum() <= C * (1 + 1e-12)
    assert value == pytest.approx(b @ alpha - 0.5 * (A.T @ alpha) @ (A.T @ alpha), rel=1e-12)
    assert value == pytest.approx(_exhaustive_dual(A @ A.T, b, C), rel=1e-9)


def _kkt_violation(H: np.ndarray, b: np.ndarray, alpha: np.ndarray, C: float) -> float:
    """Dense: the largest gradient of a variable with mass (the slack's 0 if it has any) less the least."""
    g = H @ alpha - b
    high = max([g[k] for k in range(b.size) if alpha[k] > 0] + ([0.0] if alpha.sum() < C * (1 - 1e-12) else []))
    return high - min(0.0, g.min())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("C", [0.05, 1.0, 30.0])
def test_reduced_dual_at_a_kkt_precision(seed, C):
    """With ``kkt_tol`` (SVMperf's QP precision) the dual stops once the active cuts' slacks are within
    it of the largest: feasible, a lower bound, exact as the precision closes, and short of it loosely."""
    rng = np.random.default_rng(seed)
    A, b = _random_cuts(rng, 6, 12)
    H = A @ A.T
    exact = _exhaustive_dual(H, b, C)
    steps = {}
    for tol in (1e-9, 0.5 * float(b.max())):
        alpha = np.zeros(b.size)
        value, steps[tol] = solve_reduced_dual(H, b, alpha, C, b.size, QP_RELATIVE_GAP, 10**6, tol)
        assert alpha.min() >= 0 and alpha.sum() <= C * (1 + 1e-12)
        assert value == pytest.approx(b @ alpha - 0.5 * alpha @ H @ alpha, rel=1e-12)
        assert _kkt_violation(H, b, alpha, C) <= tol * (1 + 1e-9) and value <= exact * (1 + 1e-12)
        if tol < 1e-6:
            assert value == pytest.approx(exact, rel=1e-7)
    loose, tight = steps[0.5 * float(b.max())], steps[1e-9]
    assert loose < tight if C >= 1 else loose <= tight  # at C = 0.05 the optimum is a vertex: one step


@pytest.mark.parametrize("seed", range(4))
def test_reduced_dual_with_dependent_cuts_meets_its_gap(seed):
    """More cuts than dimensions, repeated cuts and a zero cut: H is singular; the optimum is that
    of the distinct cuts, and the Frank-Wolfe gap is closed to the solver's tolerance."""
    rng = np.random.default_rng(seed)
    A, b = _random_cuts(rng, 7, 4)
    distinct, _ = _solve(A, b, 1.0)
    A2 = np.vstack([A, A[:3], np.zeros((1, 4))])
    b2 = np.concatenate([b, b[:3], [0.0]])
    value, alpha = _solve(A2, b2, 1.0)
    g = A2 @ (A2.T @ alpha) - b2
    gap = alpha @ g - 1.0 * min(0.0, g.min())
    assert alpha.min() >= 0 and alpha.sum() <= 1 + 1e-12
    assert gap <= 2 * QP_RELATIVE_GAP * abs(value)
    assert value == pytest.approx(distinct, rel=1e-9)


def test_warm_start_and_working_set_bookkeeping():
    """Cuts added one at a time (warm starts) reach the optimum of all of them; keep() drops
    cuts consistently (H, b, alpha and the vectors stay aligned)."""
    rng = np.random.default_rng(5)
    A, b = _random_cuts(rng, 20, 15)
    model = CutModel(15, 2.0)
    for a, offset in zip(A, b):
        model.add(a, offset)
        model.solve()
    assert model.K == 20
    assert model.value == pytest.approx(_solve(A, b, 2.0)[0], rel=1e-9)
    w = model.weights()
    assert np.allclose(w, model.alpha @ A)
    assert model.slack(w) == pytest.approx(max(0.0, np.max(b - A @ w)))
    mask = np.zeros(20, dtype=bool)
    mask[[1, 4, 5, 17]] = True
    alpha = model.alpha.copy()
    model.keep(mask)
    assert model.K == 4 and np.array_equal(model.alpha, alpha[mask])
    assert model.solve() == pytest.approx(_solve(A[mask], b[mask], 2.0)[0], rel=1e-9)
    assert np.allclose(model.weights(), model.alpha @ A[mask])


def test_the_pass_and_the_cut_match_dense_numpy():
    rng = np.random.default_rng(2)
    X = sp.random(300, 40, density=0.2, random_state=3, format="csr")
    y = rng.choice([-1.0, 1.0], size=300)
    w = rng.normal(size=40)
    out = np.empty(300)
    margins(X.indptr, X.indices, X.data, y, w, out)
    assert np.allclose(out, y * (X @ w))
    out[:5] = 1.0  # ties: in the cut only when not strict
    a = np.empty(40)
    for strict in (True, False):
        count, loss = violated_cut(X.indptr, X.indices, X.data, y, out, strict, a)
        inside = out < 1 if strict else out <= 1
        assert count == inside.sum() and loss == pytest.approx(np.sum(1 - out[inside]))
        assert np.allclose(a, (y[inside, None] * X[inside].toarray()).sum(axis=0))
