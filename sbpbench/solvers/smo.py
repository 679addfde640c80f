"""SMO with second-order working-set selection (Fan, Chen and Lin 2005), as LIBSVM does it.

SMO minimizes the C-form dual of Problem 2.2 (see :mod:`sbpbench.solvers.dual`),
``f(alpha) = 1/2 alpha' Q alpha - e' alpha`` over ``0 <= alpha_i <= C = 1/(lambda n)``, with
``Q_ij = y_i y_j K_ij``, starting from ``alpha = 0`` and keeping the whole gradient
``G = Q alpha - e`` (so ``Q alpha = G + 1`` gives the primal objective for free).

With bias (``problem.bias``; LIBSVM's C-SVC, constraint ``y' alpha = 0``), each iteration is
LIBSVM's ``Solver::select_working_set`` (WSS2) and two-variable update of ``Solver::Solve``:

* ``i = argmax {-y_t G_t : t in I_up}``, ``I_up = {t : y_t = +1, alpha_t < C} u {t : y_t = -1, alpha_t > 0}``;
* ``m = -y_i G_i``, ``M = min {-y_t G_t : t in I_low}`` (``I_low`` the mirror set); stop when
  ``m - M < eps``;
* ``j = argmin {-b_it^2 / a_it : t in I_low, b_it = m + y_t G_t > 0}`` with
  ``a_it = K_ii + K_tt - 2 K_it`` (``TAU = 1e-12`` when ``a_it <= 0``);
* the analytic update of ``(alpha_i, alpha_j)`` clipped to the box along ``y' alpha = 0``, exactly
  LIBSVM's case analysis, and ``G += Q_i d_i + Q_j d_j``.

Kernel rows are float64 (LIBSVM caches float32 rows), so iterates agree with LIBSVM's up to
rounding, not bit for bit. Tie rules are LIBSVM's: the last index wins both arg-max (``>=``) and arg-min (``<=``). The bias is
LIBSVM's ``-rho`` (``Solver::calculate_rho``: the mean of ``y_t G_t`` over free variables, else the
midpoint of its bounds), so ``f(x) = sum_t alpha_t y_t K(x_t, x) + b``.

Without bias there is no equality constraint, so the working set is one coordinate, chosen by the
same second-order rule. Moving ``alpha_t`` by ``d`` changes ``f`` by ``G_t d + a_t d^2 / 2`` with
``a_t = Q_tt = K_tt`` (``TAU`` when ``<= 0``); the best feasible step is the clipped Newton step
``d_t = clip(alpha_t - G_t / a_t, 0, C) - alpha_t``, with decrease (gain)
``g_t = -(G_t d_t + a_t d_t^2 / 2)``, which equals ``G_t^2 / (2 a_t)`` when the box does not clip
and is smaller when it does. We pick ``i = argmax_t g_t`` (last index wins) and take ``d_i``. The
stopping rule is the one-variable form of LIBSVM's ``m - M < eps`` with ``b = 0``:
``max(0, max {-G_t : alpha_t < C}) + max(0, max {G_t : alpha_t > 0}) < eps`` (the largest violation
of each sign of the KKT conditions; both parts vanish exactly at the optimum).

Cost model (kernel evaluations, counted by the kernel as if uncached): with bias, exactly ``2 n``
per iteration (rows ``i`` and ``j``); without bias, exactly ``n`` per iteration (row ``i``). The
stopping test uses only ``G``, so the final check costs nothing (LIBSVM fetches row ``i`` once more
before it sees that it is done). Rows come through the kernel's LRU row cache (``cache_mb`` of the
kernel spec, LIBSVM's ``-m``); ``kernel_evals_computed`` counts the rows the cache did not hold.
No shrinking: every iteration works on all ``n`` variables (LIBSVM's ``-h 0``), so the counts above
are exact and no gradient reconstruction is ever needed.

One iteration is one working-set update; ``advance`` returns True once the stopping rule holds.
Snapshot columns besides the objectives (:func:`~sbpbench.solvers.dual.dual_snapshot`):
``dual_objective``, ``duality_gap`` and ``kkt_violation`` (``m - M`` at the last selection).
"""

from __future__ import annotations

import time

import numba
import numpy as np

from sbpbench.solvers.base import Param, Snapshot, Solver, positive, register
from sbpbench.solvers.dual import TAU, box_bound, dual_snapshot


# ----------------------------------------------------------------------------- with bias (pairs)


@numba.njit(cache=True)
def _select_i(y, G, alpha, C):
    """WSS2 first index: ``i = argmax_{I_up} -y G`` and ``m``; also ``-M = max_{I_low} y G``."""
    gmax = -np.inf
    gmax2 = -np.inf
    imax = -1
    for t in range(G.shape[0]):
        if y[t] > 0:
            if alpha[t] < C and -G[t] >= gmax:
                gmax = -G[t]
                imax = t
            if alpha[t] > 0 and G[t] >= gmax2:
                gmax2 = G[t]
        else:
            if alpha[t] > 0 and G[t] >= gmax:
                gmax = G[t]
                imax = t
            if alpha[t] < C and -G[t] >= gmax2:
                gmax2 = -G[t]
    return imax, gmax, gmax2


@numba.njit(cache=True)
def _select_j(y, G, alpha, C, diag, i, K_i, gmax):
    """WSS2 second index: the ``t`` in ``I_low`` with the largest second-order decrease."""
    jmin = -1
    best = np.inf
    for t in range(G.shape[0]):
        if y[t] > 0:
            if not alpha[t] > 0:
                continue
            grad_diff = gmax + G[t]
        else:
            if not alpha[t] < C:
                continue
            grad_diff = gmax - G[t]
        if grad_diff > 0:
            quad = diag[i] + diag[t] - 2.0 * K_i[t]
            if quad <= 0:
                quad = TAU
            obj_diff = -(grad_diff * grad_diff) / quad
            if obj_diff <= best:
                best = obj_diff
                jmin = t
    return jmin


@numba.njit(cache=True)
def _pair_step(yi, yj, ai, aj, Gi, Gj, Kii, Kjj, Kij, C):
    """LIBSVM's analytic two-variable update clipped to the box (equal bounds ``C``)."""
    quad = Kii + Kjj - 2.0 * Kij
    if quad <= 0:
        quad = TAU
    if yi != yj:
        delta = (-Gi - Gj) / quad
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0:
            if aj < 0:
                aj = 0.0
                ai = diff
        elif ai < 0:
            ai = 0.0
            aj = -diff
        if diff > 0:
            if ai > C:
                ai = C
                aj = C - diff
        elif aj > C:
            aj = C
            ai = C + diff
    else:
        delta = (Gi - Gj) / quad
        total = ai + aj
        ai -= delta
        aj += delta
        if total > C:
            if ai > C:
                ai = C
                aj = total - C
        elif aj < 0:
            aj = 0.0
            ai = total
        if total > C:
            if aj > C:
                aj = C
                ai = total - C
        elif ai < 0:
            ai = 0.0
            aj = total
    return ai, aj


@numba.njit(cache=True)
def _add_pair(G, y, K_i, ci, K_j, cj):
    """``G_t += y_t (ci K_it + cj K_jt)``, i.e. ``G += Q_i d_i + Q_j d_j`` with ``c = y d``."""
    for t in range(G.shape[0]):
        G[t] += y[t] * (ci * K_i[t] + cj * K_j[t])


@numba.njit(cache=True)
def _rho(y, G, alpha, C):
    """LIBSVM's ``Solver::calculate_rho`` (the bias is ``-rho``)."""
    ub = np.inf
    lb = -np.inf
    free = 0
    total = 0.0
    for t in range(G.shape[0]):
        yG = y[t] * G[t]
        if alpha[t] >= C:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            free += 1
            total += yG
    if free > 0:
        return total / free
    return (ub + lb) / 2.0


# ----------------------------------------------------------------------------- without bias (single)


@numba.njit(cache=True)
def _select_single(G, alpha, C, diag):
    """The coordinate with the largest clipped second-order gain, its new value, and the violation."""
    best = 0.0
    imax = -1
    new = 0.0
    up = 0.0  # max(0, max {-G_t : alpha_t < C})
    down = 0.0  # max(0, max {G_t : alpha_t > 0})
    for t in range(G.shape[0]):
        g = G[t]
        if alpha[t] < C and -g > up:
            up = -g
        if alpha[t] > 0 and g > down:
            down = g
        if (g < 0 and alpha[t] < C) or (g > 0 and alpha[t] > 0):
            a = diag[t] if diag[t] > 0 else TAU
            target = min(max(alpha[t] - g / a, 0.0), C)
            d = target - alpha[t]
            gain = -(g * d + 0.5 * a * d * d)
            if gain >= best:
                best = gain
                imax = t
                new = target
    return imax, new, up + down


@numba.njit(cache=True)
def _add_single(G, y, K_i, ci):
    """``G_t += y_t ci K_it``, i.e. ``G += Q_i d_i`` with ``ci = y_i d_i``."""
    for t in range(G.shape[0]):
        G[t] += y[t] * ci * K_i[t]


# ----------------------------------------------------------------------------- the solver


@register
class SMO(Solver):
    """SMO with WSS2 (LIBSVM). Cost: 2n kernel evaluations per iteration with bias, n without."""

    name = "smo"
    needs = frozenset({"lambda"})
    supports_bias = True
    params = {
        "eps": Param(float, 1e-3, "stopping tolerance on the maximal KKT violation (LIBSVM's -e)",
                     check=positive),
    }

    def __init__(self, problem, rng, **params):
        super().__init__(problem, rng, **params)
        self.y = problem.y
        self.bias = problem.bias
        self.C = box_bound(problem)
        self.diag = self.kernel.diag()
        self.alpha = np.zeros(self.n)
        self.G = -np.ones(self.n)
        self.violation = np.inf  # m - M at the last selection
        self.converged = False

    def advance(self, max_iterations, max_kernel_evals, deadline):
        k = self.kernel
        while not self.converged and self.iteration < max_iterations and k.kernel_evals < max_kernel_evals:
            if time.perf_counter() >= deadline:
                break
            if self.bias:
                self._pair_iteration()
            else:
                self._single_iteration()
        return self.converged

    def _pair_iteration(self) -> None:
        y, G, alpha, C = self.y, self.G, self.alpha, self.C
        i, gmax, gmax2 = _select_i(y, G, alpha, C)
        self.violation = gmax + gmax2
        if self.violation < self.eps:
            self.converged = True
            return
        K_i = self.kernel.row(i)
        j = _select_j(y, G, alpha, C, self.diag, i, K_i, gmax)
        K_j = self.kernel.row(j)
        old_i, old_j = alpha[i], alpha[j]
        alpha[i], alpha[j] = _pair_step(y[i], y[j], old_i, old_j, G[i], G[j],
                                        self.diag[i], self.diag[j], K_i[j], C)
        _add_pair(G, y, K_i, y[i] * (alpha[i] - old_i), K_j, y[j] * (alpha[j] - old_j))
        self.iteration += 1

    def _single_iteration(self) -> None:
        G, alpha = self.G, self.alpha
        i, new, self.violation = _select_single(G, alpha, self.C, self.diag)
        if self.violation < self.eps:
            self.converged = True
            return
        K_i = self.kernel.row(i)
        step = new - alpha[i]
        alpha[i] = new
        _add_single(G, self.y, K_i, self.y[i] * step)
        self.iteration += 1

    def solution(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(alpha, Q alpha, b)`` of the current iterate (``b = -rho`` with bias, else 0)."""
        b = -_rho(self.y, self.G, self.alpha, self.C) if self.bias else 0.0
        return self.alpha.copy(), self.G + 1.0, float(b)

    def snapshot(self) -> Snapshot:
        alpha, q, b = self.solution()
        extra = {"kkt_violation": float(self.violation)} if np.isfinite(self.violation) else {}
        return dual_snapshot(self.problem, alpha, q, b, extra)
