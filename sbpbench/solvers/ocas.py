"""OCAS: the Optimized Cutting Plane Algorithm for linear SVMs of Franc and Sonnenburg
("Optimized cutting plane algorithm for support vector machines", ICML 2008: OCAS, its
Algorithm 1, and the line search for the hinge loss; "Optimized cutting plane algorithm for
large-scale risk minimization", JMLR 10, 2009: the general OCA, its convergence theorem, and
OCAS with the same line search), as libocas 0.97's ``svm_ocas_solver`` runs it (method 1, no
bias; we had not the papers' texts at hand, so the steps below follow libocas).

Problem: the C form ``J(w) = 1/2 ||w||^2 + C R(w)``, ``R(w) = sum_i max(0, 1 - y_i w . x_i)``.
OCAS keeps the best point so far ``w_b`` and the working set of cuts of ``R``
(:mod:`sbpbench.solvers.cutting_planes`). Starting from ``w_b = 0`` with the cut of all examples
(``a = sum_i y_i x_i``, ``b = n``, the cut of ``R`` at 0), one iteration

1. adds the pending cut and solves the reduced problem in its dual: its solution ``w_c`` and
   the lower bound ``F = D(alpha) <= J_opt`` (libocas's ``Q_D``);
2. computes the margins ``y_i w_c . x_i`` (``n`` sparse inner products; those of ``w_b`` are
   kept from before) and finds by an exact line search
   ``k* = argmin_{k >= 0} J(w_b + k (w_c - w_b))``: with ``A0 = ||w_c - w_b||^2``,
   ``B0 = w_b . (w_c - w_b)``, ``C_i = C (1 - y_i w_b.x_i)``, ``B_i = C y_i (w_b - w_c).x_i``,
   ``f(k) = 1/2 A0 k^2 + B0 k + sum_i max(0, C_i + k B_i)`` + const is convex and piecewise
   quadratic; its right derivative is walked through the sorted breakpoints ``-C_i/B_i > 0``
   (each adds ``|B_i|``) to the first ``k`` where it turns non-negative (inside a piece: the
   root of the linear piece; at a breakpoint: the breakpoint);
3. moves ``w_b <- w_b (1 - k*) + k* w_c`` and takes the next cut at
   ``w_b (1 - mu) + mu w_c`` in the old ``w_b``'s terms, i.e. at ``k* + mu (1 - k*)`` along the
   line (``mu = 0.1``, libocas's ``MU``): the examples with margin ``<= 1`` there;
4. stops (libocas's exit flags) when ``J(w_b) - F <= tol_rel |J(w_b)|``, when
   ``J(w_b) - F <= tol_abs``, when ``J(w_b) <= objective_bound`` (the SGD paper's ``q``; 0 = off,
   which is libocas's default 0 as ``J > 0``), or when the working set holds ``max_cuts`` cuts
   (libocas's buffer ``-s``, exit flag -1). libocas 0.97 removes no cuts; neither does this.

The margins of ``w_b`` and ``J(w_b)`` are updated by the same interpolation as ``w_b`` (no
second pass), as libocas does. Differences from libocas: the line search is exact (libocas
interpolates the derivative across the next breakpoint, which places ``k*`` slightly short of
the minimizer), and the reduced dual is solved to a relative gap of 1e-10 (libocas's
``libqp_splx_solver`` stops at ``tol_rel/2``). Both make the iterates differ slightly from
libocas's; ``tests/test_ocas.py`` compares them with ``svmocas`` where it is installed.

Columns: ``objective`` is ``J(w_b)`` (C form), ``primal_objective`` is ``lambda J``,
``dual_objective = lambda F`` (0 before the first cut), ``duality_gap``, ``relative_accuracy``;
``cutting_planes`` (iterations, libocas's ``nIter``) and ``cuts``.

Cost model: no kernel evaluations (``counts_kernel_evals = False``). One step is one OCAS
iteration: ``n`` iterations (the ``n`` sparse inner products ``w_c . x_i``), plus a sparse
addition per example in the new cut (``n`` for the first cut), the sort of at most ``n``
breakpoints and ``O(K d)`` dense work on the ``K`` cuts, not counted. ``advance`` runs whole
iterations: it may overshoot ``max_iterations`` by up to ``n - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from sbpbench.params import non_negative, param, positive_c_int
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, SolverParams, register
from sbpbench.solvers.cutting_planes import CutModel, margins, violated_cut
from sbpbench.solvers.linear import LinearSolver

#: libocas's MU: the new cut is taken at w_b (1 - MU) + MU w_c (Franc and Sonnenburg: mu = 0.1).
MU = 0.1


@numba.njit(cache=True)
def line_search(old, new, A0, B0, C, points, slopes):
    """``argmin_{k >= 0}`` of ``1/2 A0 k^2 + B0 k + C sum_i max(0, 1 - old_i - k (new_i - old_i))``.

    ``old`` and ``new`` are the margins of ``w_b`` and ``w_c``; ``points`` and ``slopes`` are
    scratch arrays of length ``n`` (the breakpoints and the derivative's jumps there).
    """
    grad = B0  # the right derivative at 0
    m = 0
    for i in range(old.shape[0]):
        ci = C * (1.0 - old[i])
        bi = C * (old[i] - new[i])
        if ci > 0.0 or (ci == 0.0 and bi > 0.0):
            grad += bi
        if bi != 0.0:
            t = -ci / bi
            if t > 0.0:
                points[m] = t
                slopes[m] = abs(bi)
                m += 1
    if grad >= 0.0:
        return 0.0
    if A0 > 0.0:  # the derivative is at least grad + A0 k: only breakpoints below -grad/A0 can matter
        last = -grad / A0
        kept = 0
        for p in range(m):
            if points[p] < last:
                points[kept] = points[p]
                slopes[kept] = slopes[p]
                kept += 1
        m = kept
    k = 0.0
    for p in np.argsort(points[:m]):
        before = grad + A0 * (points[p] - k)  # the derivative just before the breakpoint
        if before >= 0.0:
            return k - grad / A0
        grad = before + slopes[p]
        k = points[p]
        if grad >= 0.0:
            return k
    return k - grad / A0 if A0 > 0.0 else k


def _cut_buffer_bytes(cuts: int, d: int) -> float:
    """Bytes of a working set of ``cuts`` cuts of ``d`` features: the cut vectors and their Gram
    matrix, in a buffer that grows by doubling (so up to twice ``cuts`` rows)."""
    rows = 2 * cuts
    return 8.0 * rows * (d + rows)


@dataclass(frozen=True)
class OCASParams(SolverParams):
    """Parameters of :class:`OCAS` (libocas's stopping conditions and cut buffer)."""

    objective_bound: float = param(0.0, "q: stop when J(w_best) <= q (C form; libocas's QPBound; 0 = off)",
                                   check=non_negative)
    tol_rel: float = param(0.01, "r: stop when J - F <= r |J| (F: the cutting-plane model's lower bound; "
                           "libocas's TolRel)", check=non_negative)
    tol_abs: float = param(0.0, "stop when J - F <= tol_abs (libocas's TolAbs)", check=non_negative)
    max_cuts: int = param(2000, "libocas's cut buffer (-s): stop when the working set holds this many cuts",
                          check=positive_c_int, memory=lambda k, n, d: _cut_buffer_bytes(k, d))


@register
class OCAS(LinearSolver[OCASParams]):
    """OCAS (Franc and Sonnenburg 2008/2009), as libocas runs it. Cost: n iterations per cutting plane.

    Attributes
    ----------
    model : CutModel
        The working set and the reduced dual (its value is the lower bound ``F``).
    w : numpy.ndarray
        The best point so far ``w_b``.
    objective : float
        ``J(w_b)`` as the stopping rules see it (from the interpolated margins).
    cutting_planes : int
        Iterations so far (libocas's ``nIter``).
    """

    name = "ocas"
    deterministic = True
    Params = OCASParams
    stops_at_iteration_limit = False  # an OCAS iteration is n iterations

    def __init__(self, problem: Problem, rng: np.random.Generator, params: OCASParams | None = None):
        super().__init__(problem, rng, params)
        self.model = CutModel(self.d, self.C)
        self.w = np.zeros(self.d)  # w_b
        self._old = np.zeros(self.n)  # margins of w_b
        self._new = np.empty(self.n)  # margins of w_c, then those where the next cut is taken
        self._points = np.empty(self.n)
        self._slopes = np.empty(self.n)
        self._cut = np.empty(self.d)
        self._cut_size = -1  # the pending cut: none yet (the first one is all examples)
        self.objective = self.C * self.n  # J(w_b), from the interpolated margins
        self.cutting_planes = 0

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One OCAS iteration (``n`` iterations whatever ``iterations``); True when a stopping rule holds."""
        if self._cut_size < 0:  # the cut of R at w_b = 0: every example
            self._cut_size, _ = violated_cut(self.indptr, self.indices, self.data, self.y, self._old, False, self._cut)
        self.model.add(self._cut, float(self._cut_size))
        bound = self.model.solve()
        w_c = self.model.weights()
        step = w_c - self.w
        margins(self.indptr, self.indices, self.data, self.y, w_c, self._new)
        k = max(0.0, line_search(self._old, self._new, float(step @ step), float(self.w @ step), self.C,
                                 self._points, self._slopes))
        cut_at = k + MU * (1.0 - k)
        self.w = self.w + k * step
        old, new = self._old, self._new
        new -= old
        old += k * new  # the margins of the new w_b
        new *= cut_at - k
        new += old  # the margins where the next cut is taken
        self._cut_size, _ = violated_cut(self.indptr, self.indices, self.data, self.y, new, False, self._cut)
        self.objective = 0.5 * float(self.w @ self.w) + self.C * float(np.maximum(0.0, 1.0 - old).sum())
        self.cutting_planes += 1
        self.iteration += self.n
        p, gap = self.params, self.objective - bound
        return bool(gap <= p.tol_rel * abs(self.objective) or gap <= p.tol_abs
                    or self.objective <= p.objective_bound or self.model.K >= p.max_cuts)

    def snapshot(self) -> Snapshot:
        return self.linear_snapshot(self.w, dual=self.lam * self.model.value, c_form=True,
                                    extra={"cutting_planes": float(self.cutting_planes), "cuts": float(self.model.K)})
