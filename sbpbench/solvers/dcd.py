"""Dual coordinate descent for the linear L1-loss SVM (Hsieh, Chang, Lin, Keerthi and
Sundararajan 2008, Algorithm 1; the solver of LIBLINEAR's ``-s 3``).

The dual of ``J(w) = 1/2 ||w||^2 + C sum_i max(0, 1 - y_i w . x_i)`` (``C = 1/(lambda n)``)
is ``max D(alpha) = sum_i alpha_i - 1/2 ||w(alpha)||^2`` subject to ``0 <= alpha_i <= C``,
with ``w(alpha) = sum_i alpha_i y_i x_i`` kept up to date. Each pass visits the (active)
coordinates in a fresh random order; for coordinate ``i`` with ``G = y_i w . x_i - 1``
and the projected gradient ``PG`` (``min(G, 0)`` at ``alpha_i = 0``, ``max(G, 0)`` at
``alpha_i = C``, ``G`` inside) it sets, when ``|PG| > 1e-12``,

``alpha_i <- min(max(alpha_i - G / Q_ii, 0), C)``, ``w <- w + (alpha_i' - alpha_i) y_i x_i``

with ``Q_ii = ||x_i||^2``. An example without features (``Q_ii = 0``, as in w8a) has
``G = -1`` and goes to ``alpha_i = C`` (the limit of that step).

Stopping and shrinking follow LIBLINEAR: a pass records the largest and smallest
projected gradient; the solver finishes when their difference is ``<= tol`` over all
coordinates (``tol = 0`` runs to the budget). With ``shrinking`` on, a coordinate at a
bound whose gradient lies beyond the previous pass's extreme projected gradients leaves
the active set; when the active set has converged, all coordinates are reactivated once
before finishing.

Columns: ``objective`` is ``J`` (C form, as in the SGD paper's comparison),
``primal_objective`` is ``lambda J`` (Problem 2.2), ``dual_objective = lambda D(alpha)``,
``duality_gap`` and ``relative_accuracy``.

Cost model: no kernel evaluations (``counts_kernel_evals = False``). One iteration is one
coordinate visited (one sparse inner product ``w . x_i``, plus one sparse addition when it
moves); one epoch is ``n`` iterations. With shrinking, a pass covers only the active set, so
passes and epochs no longer coincide. ``advance`` stops exactly at ``max_iterations``, in the
middle of a pass if need be.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from sbpbench.params import non_negative, param
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, SolverParams, register
from sbpbench.solvers.linear import LinearSolver, sparse_axpy, sparse_dot


@numba.njit(cache=True)
def _visit(indptr, indices, data, y, Qd, U, alpha, w, index, pos_active, pg, shrinking, budget):
    """Visit coordinates ``index[pos:active]`` until the pass ends or ``budget`` visits.

    ``pos_active`` is ``[pos, active]``, ``pg`` is ``[PGmax_old, PGmin_old, PGmax_new,
    PGmin_new]``; both are updated in place. Returns the number of visits.
    """
    pos = pos_active[0]
    active = pos_active[1]
    visits = 0
    while pos < active and visits < budget:
        i = index[pos]
        visits += 1
        G = y[i] * sparse_dot(indptr, indices, data, i, w) - 1.0
        PG = 0.0
        if alpha[i] == 0.0:
            if shrinking and G > pg[0]:
                active -= 1
                index[pos], index[active] = index[active], index[pos]
                continue
            if G < 0.0:
                PG = G
        elif alpha[i] == U:
            if shrinking and G < pg[1]:
                active -= 1
                index[pos], index[active] = index[active], index[pos]
                continue
            if G > 0.0:
                PG = G
        else:
            PG = G
        pg[2] = max(pg[2], PG)
        pg[3] = min(pg[3], PG)
        if abs(PG) > 1e-12:
            old = alpha[i]
            if Qd[i] > 0.0:
                alpha[i] = min(max(old - G / Qd[i], 0.0), U)
            else:
                alpha[i] = U if G < 0.0 else 0.0
            sparse_axpy(indptr, indices, data, i, (alpha[i] - old) * y[i], w)
        pos += 1
    pos_active[0] = pos
    pos_active[1] = active
    return visits


@dataclass(frozen=True)
class DCDParams(SolverParams):
    """Parameters of :class:`DCD`."""

    tol: float = param(0.1, "stop when max PG - min PG <= tol (LIBLINEAR's eps; 0 = never)", check=non_negative)
    shrinking: bool = param(True, "LIBLINEAR's shrinking of bounded coordinates")


@register
class DCD(LinearSolver[DCDParams]):
    """Dual coordinate descent (LIBLINEAR's L1-loss dual solver). Cost: no kernel evaluations."""

    name = "dcd"
    Params = DCDParams

    def __init__(self, problem: Problem, rng: np.random.Generator, params: DCDParams | None = None):
        super().__init__(problem, rng, params)
        self.alpha = np.zeros(self.n)
        self.w = np.zeros(self.d)
        self.index = np.arange(self.n, dtype=np.int64)
        self.pos_active = np.array([self.n, self.n], dtype=np.int64)  # a pass starts at once
        self.pg = np.array([np.inf, -np.inf, -np.inf, np.inf])
        self.passes = 0

    def _visit(self, budget: float) -> int:
        return _visit(self.indptr, self.indices, self.data, self.y, self.sq, self.C, self.alpha,
                      self.w, self.index, self.pos_active, self.pg, self.params.shrinking, budget)

    def _end_pass(self) -> bool:
        """LIBLINEAR's end-of-pass bookkeeping; True when converged."""
        pg = self.pg
        if self.passes > 0:
            if pg[2] - pg[3] <= self.params.tol:
                if self.pos_active[1] == self.n:
                    return True
                self.pos_active[1] = self.n
                pg[0], pg[1] = np.inf, -np.inf
            elif self.params.shrinking:
                pg[0] = np.inf if pg[2] <= 0 else pg[2]
                pg[1] = -np.inf if pg[3] >= 0 else pg[3]
        active = self.pos_active[1]
        self.index[:active] = self.rng.permutation(self.index[:active])
        self.pos_active[0] = 0
        pg[2], pg[3] = -np.inf, np.inf
        self.passes += 1
        return False

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """Visit coordinates to the end of the pass, at most ``iterations``; a new pass first if one ended."""
        if self.pos_active[0] >= self.pos_active[1] and self._end_pass():
            return True
        self.iteration += self._visit(iterations)
        return False

    def snapshot(self) -> Snapshot:
        norm2 = float(self.w @ self.w)
        dual = self.lam * (float(self.alpha.sum()) - 0.5 * norm2)
        support = np.flatnonzero(self.alpha)
        return self.linear_snapshot(self.w, norm2=norm2, support=support,
                                    coef=self.alpha[support] * self.y[support], dual=dual, c_form=True)
