"""What the cutting-plane solvers (SVMperf, OCAS) share: the pass over the data, the working set
of cuts and the dual of the reduced problem.

Both solvers minimize the C form of the linear L1-SVM without bias,
``J(w) = 1/2 ||w||^2 + C R(w)`` with the risk ``R(w) = sum_i max(0, 1 - y_i <w, x_i>)``, by
building a piecewise-linear under-estimate of ``R`` from cuts. For a set ``c`` of examples,

``R(w) >= b_c - <a_c, w>``,  ``a_c = sum_{i in c} y_i x_i``,  ``b_c = |c|``,

with equality when ``c`` holds exactly the examples with ``y_i <w, x_i> < 1`` (ties at 1 may go
either way): this is Joachims' (KDD 2006) 1-slack constraint and Franc and Sonnenburg's
(ICML 2008, JMLR 2009) cutting plane of ``R`` at ``w``, written in the C form. With cuts
``(a_k, b_k)``, ``k = 1..K``, the reduced problem

``F_K(w) = 1/2 ||w||^2 + C max(0, max_k b_k - <a_k, w>)``

has the dual

``max D(alpha) = sum_k alpha_k b_k - 1/2 ||sum_k alpha_k a_k||^2``  s.t.  ``alpha >= 0``,
``sum_k alpha_k <= C``,

whose solution gives ``w = sum_k alpha_k a_k`` (the dual of the reduced problem in SVMperf's
``svm_learn_optimization`` on the cuts' Gram matrix and in libocas's ``libqp_splx_solver``).
``D(alpha)`` of any feasible ``alpha`` is at most ``min F_K <= min J``: the lower bound both
solvers report.

:class:`CutModel` keeps the working set (the cut vectors densely, their Gram matrix ``H``, the
offsets ``b`` and ``alpha``) and solves the dual to high accuracy with :func:`solve_reduced_dual`:
pairwise (SMO-type) steps on the scaled simplex ``{alpha >= 0, sum alpha + s = C}`` (``s``, the
dual variable of ``xi >= 0``, is a variable with zero gradient and zero Hessian), each step the
exact minimizer along the pair chosen by the largest decrease, until the Frank-Wolfe gap (an
upper bound on ``max D - D(alpha)``) is at most :data:`QP_RELATIVE_GAP` times ``|D|``.

:func:`margins` (``y_i <w, x_i>`` for all ``i``: ``n`` sparse inner products) and
:func:`violated_cut` (the cut of the examples below the margin: a sparse addition per example in
the cut) are the per-iteration pass over the data, compiled.
"""

from __future__ import annotations

import numba
import numpy as np

from sbpbench.solvers.linear import sparse_axpy, sparse_dot

#: The reduced dual is solved until its Frank-Wolfe gap is at most this times ``|D|`` (libocas
#: stops its QP solver at a relative gap of TolRel/2; SVMperf at a KKT precision tied to epsilon).
QP_RELATIVE_GAP = 1e-10
#: At most this many pairwise steps per cut in the working set (then the best point so far is
#: kept: its ``D`` is still a valid lower bound).
QP_STEPS_PER_CUT = 2000


@numba.njit(cache=True)
def margins(indptr, indices, data, y, w, out):
    """``out[i] = y_i <w, x_i>`` for every CSR row ``i`` (``n`` sparse inner products)."""
    for i in range(out.shape[0]):
        out[i] = y[i] * sparse_dot(indptr, indices, data, i, w)


@numba.njit(cache=True)
def violated_cut(indptr, indices, data, y, out, strict, a):
    """The cut of the examples below the margin, from their margins ``out``.

    Sets ``a = sum y_i x_i`` over the examples with ``out[i] < 1`` (``strict``) or
    ``out[i] <= 1`` and returns ``(count, loss)``: their number ``b`` and ``sum (1 - out[i])``
    over them, the hinge risk at the margins.
    """
    a[:] = 0.0
    count = 0
    loss = 0.0
    for i in range(out.shape[0]):
        if out[i] < 1.0 or (not strict and out[i] == 1.0):
            count += 1
            loss += 1.0 - out[i]
            sparse_axpy(indptr, indices, data, i, y[i], a)
    return count, loss


@numba.njit(cache=True)
def _gradient(H, b, alpha, K, g):
    """``g = H alpha - b`` over the first ``K`` cuts."""
    for k in range(K):
        acc = -b[k]
        for j in range(K):
            acc += H[k, j] * alpha[j]
        g[k] = acc


@numba.njit(cache=True)
def _gap_and_value(b, alpha, K, C, g):
    """``(Frank-Wolfe gap, D(alpha), index of the smallest gradient or K for s)``."""
    ag = 0.0
    ab = 0.0
    gmin = 0.0  # the gradient of s
    jmin = K
    for k in range(K):
        ag += alpha[k] * g[k]
        ab += alpha[k] * b[k]
        if g[k] < gmin:
            gmin = g[k]
            jmin = k
    return ag - C * gmin, -0.5 * (ag - ab), jmin


@numba.njit(cache=True)
def _cholesky(M):
    """Lower Cholesky factor of the symmetric matrix ``M``, and whether it is positive definite."""
    m = M.shape[0]
    L = np.zeros((m, m))
    for j in range(m):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return L, False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, m):
            s = M[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    return L, True


@numba.njit(cache=True)
def _cholesky_solve(L, rhs):
    """``x`` with ``L L' x = rhs``."""
    m = rhs.shape[0]
    z = np.empty(m)
    for i in range(m):
        s = rhs[i]
        for k in range(i):
            s -= L[i, k] * z[k]
        z[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):
        s = z[i]
        for k in range(i + 1, m):
            s -= L[k, i] * z[k]
        z[i] = s / L[i, i]
    return z


@numba.njit(cache=True)
def _newton_phase(H, b, alpha, C, K, rel_gap, max_iter):
    """Active-set Newton steps on the reduced dual, from the feasible ``alpha`` (updated in place).

    The variables are ``alpha`` and the slack ``s = C - sum alpha``; the free set starts as those
    that are positive. Each iteration either stops (Frank-Wolfe gap at most ``rel_gap |D|``),
    or takes the step ``p`` minimizing the quadratic model on the free set subject to
    ``sum p = 0`` (Hessian ``H`` plus a tiny ridge, so that the linear system is definite; the
    fixed point ``p = 0`` is the exact optimality condition on the free set), cut short where
    a variable reaches zero (which leaves the free set), or, when ``p`` vanishes, frees the
    variable at zero whose multiplier is most negative. Leaves the rest (if any) to the
    pairwise steps of :func:`solve_reduced_dual`.
    """
    x = np.zeros(K + 1)
    total = 0.0
    for k in range(K):
        x[k] = alpha[k]
        total += alpha[k]
    x[K] = max(C - total, 0.0)
    free = x > 0.0
    scale = 0.0
    for k in range(K):
        scale = max(scale, H[k, k])
    scale = max(scale, 1e-300)
    ridge = 1e-14 * scale
    g = np.zeros(K + 1)  # g[K] = 0: the gradient of s
    for _ in range(max_iter):
        _gradient(H, b, x, K, g)
        gap, value, _ = _gap_and_value(b, x, K, C, g)
        if gap <= rel_gap * abs(value):
            break
        idx = np.flatnonzero(free)
        m = idx.size
        M = np.zeros((m, m))
        for r in range(m):
            for c in range(m):
                if idx[r] < K and idx[c] < K:
                    M[r, c] = H[idx[r], idx[c]]
        ok = False
        while not ok and ridge <= 1e-6 * scale:
            for r in range(m):
                M[r, r] += ridge
            L, ok = _cholesky(M)
            for r in range(m):
                M[r, r] -= ridge
            if not ok:
                ridge *= 100.0
        if not ok:
            break
        u = _cholesky_solve(L, g[idx])
        v = _cholesky_solve(L, np.ones(m))
        nu = u.sum() / v.sum()
        p = nu * v - u
        if np.max(np.abs(p)) <= 1e-12 * C:  # stationary on the free set: free a variable at zero
            entering = -1
            least = -0.5 * rel_gap * abs(value) / C
            for k in range(K + 1):
                if not free[k] and g[k] - nu < least:
                    least = g[k] - nu
                    entering = k
            if entering < 0:
                break
            free[entering] = True
            continue
        t = 1.0
        blocking = -1
        for r in range(m):
            if p[r] < 0.0 and x[idx[r]] < -t * p[r]:
                t = x[idx[r]] / -p[r]
                blocking = idx[r]
        for r in range(m):
            x[idx[r]] = max(x[idx[r]] + t * p[r], 0.0)
        if blocking >= 0:
            x[blocking] = 0.0
            free[blocking] = False
    total = 0.0
    for k in range(K):
        total += x[k]
    shrink = C / total if total > C else 1.0  # rounding may have left sum alpha a hair above C
    for k in range(K):
        alpha[k] = x[k] * shrink


@numba.njit(cache=True)
def _kkt_violation(g, alpha, s, K):
    """The largest KKT violation ``max{g_k : mass_k > 0} - min(0, min_k g_k)`` (the slack ``s``
    has gradient 0): how far the working set's active cuts are from sharing the largest slack."""
    low = 0.0
    high = 0.0 if s > 0.0 else -np.inf
    for k in range(K):
        low = min(low, g[k])
        if alpha[k] > 0.0:
            high = max(high, g[k])
    return max(high - low, 0.0)


@numba.njit(cache=True)
def _converged(g, alpha, s, K, gap, value, rel_gap, kkt_tol):
    """The stopping test of :func:`solve_reduced_dual`: the KKT rule when ``kkt_tol > 0``, else the gap's."""
    if kkt_tol > 0.0:
        return _kkt_violation(g, alpha, s, K) <= kkt_tol
    return gap <= rel_gap * abs(value)


@numba.njit(cache=True)
def solve_reduced_dual(H, b, alpha, C, K, rel_gap, max_steps, kkt_tol=0.0):
    """Maximize ``D(alpha) = b'alpha - 1/2 alpha'H alpha`` over ``alpha >= 0``, ``sum alpha <= C``.

    On the first ``K`` entries of ``H``, ``b`` and ``alpha`` (updated in place, feasible on
    entry): active-set Newton steps (:func:`_newton_phase`), then, while the Frank-Wolfe gap
    ``alpha'g - C min(0, min g)`` (``g = H alpha - b``) exceeds ``rel_gap |D|``, pairwise steps:
    with the slack ``s = C - sum alpha`` (gradient 0), ``j`` is the variable of least gradient,
    and mass ``t`` moves to it from the variable ``i`` (positive, ``g_i > g_j``) whose exact step
    ``t = min(value_i, (g_i - g_j)/(H_ii + H_jj - 2 H_ij))`` decreases ``-D`` most. The gap is
    checked again on a freshly computed gradient; at most ``max_steps`` pairwise steps.

    With ``kkt_tol > 0`` the dual is solved as SVM-light's decomposition solves it in SVMperf:
    pairwise steps only (no Newton phase), from ``alpha``, until the KKT violation
    (:func:`_kkt_violation`: the active cuts' slacks within ``kkt_tol`` of the largest) is at
    most ``kkt_tol`` (SVM-light's ``epsilon_crit``, here in the units of ``b``).

    Returns
    -------
    tuple
        ``(D(alpha), pairwise steps)``.
    """
    if kkt_tol <= 0.0:
        _newton_phase(H, b, alpha, C, K, rel_gap, 4 * K + 20)
    g = np.empty(K)
    _gradient(H, b, alpha, K, g)
    s = C
    for k in range(K):
        s -= alpha[k]
    s = max(s, 0.0)
    steps = 0
    while True:
        gap, value, j = _gap_and_value(b, alpha, K, C, g)
        if _converged(g, alpha, s, K, gap, value, rel_gap, kkt_tol) or steps >= max_steps:
            _gradient(H, b, alpha, K, g)  # the running gradient has drifted: confirm
            gap, value, j = _gap_and_value(b, alpha, K, C, g)
            if _converged(g, alpha, s, K, gap, value, rel_gap, kkt_tol) or steps >= max_steps:
                return value, steps
        gj = g[j] if j < K else 0.0
        hjj = H[j, j] if j < K else 0.0
        best = 0.0
        i = -1
        t_best = 0.0
        for k in range(K + 1):
            mass = alpha[k] if k < K else s
            gk = g[k] if k < K else 0.0
            if k == j or mass <= 0.0 or gk <= gj:
                continue
            if k < K:
                q = H[k, k] + hjj - 2.0 * (H[k, j] if j < K else 0.0)
            else:
                q = hjj
            t = mass if q <= 0.0 else min(mass, (gk - gj) / q)
            decrease = t * (gk - gj) - 0.5 * q * t * t
            if decrease > best:
                best = decrease
                i = k
                t_best = t
        if i < 0:  # no pair decreases -D in floating point: as accurate as it gets
            return value, steps
        if i < K:
            alpha[i] -= t_best
            if alpha[i] < 0.0:
                alpha[i] = 0.0
        else:
            s = max(s - t_best, 0.0)
        if j < K:
            alpha[j] += t_best
        else:
            s += t_best
        for k in range(K):
            delta = 0.0
            if j < K:
                delta += H[k, j]
            if i < K:
                delta -= H[k, i]
            g[k] += t_best * delta
        steps += 1


class CutModel:
    """The working set of cuts ``(a_k, b_k)`` and the dual of the reduced problem.

    Parameters
    ----------
    d : int
        Dimension of ``w``.
    C : float
        The penalty ``C`` of the C form.

    Attributes
    ----------
    K : int
        Cuts in the working set.
    value : float
        ``D(alpha)`` at the last solve (0 before any: the bound of the empty model).
    """

    def __init__(self, d: int, C: float):
        self.C = C
        self.K = 0
        self.value = 0.0
        self._A = np.zeros((8, d))
        self._H = np.zeros((8, 8))
        self._b = np.zeros(8)
        self._alpha = np.zeros(8)

    @property
    def alpha(self) -> np.ndarray:
        """The dual variables of the cuts (a view)."""
        return self._alpha[: self.K]

    def add(self, a: np.ndarray, b: float) -> None:
        """Append the cut ``(a, b)`` with ``alpha = 0`` and its row and column of ``H``."""
        K = self.K
        if K == self._b.size:
            self._grow(2 * K)
        self._A[K] = a
        column = self._A[: K + 1] @ a
        self._H[K, : K + 1] = column
        self._H[: K + 1, K] = column
        self._b[K] = b
        self._alpha[K] = 0.0
        self.K = K + 1

    def _grow(self, capacity: int) -> None:
        K = self.K
        A, H, b, alpha = self._A, self._H, self._b, self._alpha
        self._A = np.zeros((capacity, A.shape[1]))
        self._A[:K] = A[:K]
        self._H = np.zeros((capacity, capacity))
        self._H[:K, :K] = H[:K, :K]
        self._b = np.zeros(capacity)
        self._b[:K] = b[:K]
        self._alpha = np.zeros(capacity)
        self._alpha[:K] = alpha[:K]

    def solve(self, kkt_tol: float = 0.0) -> float:
        """Solve the reduced dual from the current ``alpha``; its value ``D`` (a lower bound on ``min J``).

        ``kkt_tol``: 0 solves it to the relative gap :data:`QP_RELATIVE_GAP`; a positive value
        stops at that KKT precision instead (:func:`solve_reduced_dual`).
        """
        self.value, _ = solve_reduced_dual(self._H, self._b, self._alpha, self.C, self.K, QP_RELATIVE_GAP,
                                           QP_STEPS_PER_CUT * self.K, kkt_tol)
        return self.value

    def weights(self) -> np.ndarray:
        """``w = sum_k alpha_k a_k``."""
        return self.alpha @ self._A[: self.K]

    def slack(self, w: np.ndarray) -> float:
        """``max(0, max_k b_k - <a_k, w>)``: the slack of the working set at ``w`` (C form)."""
        if self.K == 0:
            return 0.0
        return max(0.0, float(np.max(self._b[: self.K] - self._A[: self.K] @ w)))

    def active_slack(self, w: np.ndarray) -> float:
        """SVMperf's estimate of the slack at ``w``: ``max(0, b_k - <a_k, w>)`` of the first cut
        whose ``alpha`` exceeds the mean ``alpha`` (0 if none). It is :meth:`slack` when the
        reduced dual is solved exactly (every active cut then has the largest slack), less otherwise."""
        alpha = self.alpha
        above = np.flatnonzero(alpha > alpha.sum() / self.K) if self.K else np.empty(0, dtype=np.int64)
        if above.size == 0:
            return 0.0
        k = above[0]
        return max(0.0, float(self._b[k] - self._A[k] @ w))

    def keep(self, mask: np.ndarray) -> None:
        """Keep only the cuts where ``mask`` (over the working set) is true, in their order."""
        idx = np.flatnonzero(mask)
        m = idx.size
        self._A[:m] = self._A[idx]
        self._H[:m, :m] = self._H[np.ix_(idx, idx)]
        self._b[:m] = self._b[idx]
        self._alpha[:m] = self._alpha[idx]
        self.K = m
