"""Stochastic dual coordinate ascent (Hsieh, Chang, Lin, Keerthi and Sundararajan 2008), kernelized.

SDCA maximizes the dual of Problem 2.2 (Problem 4.1 of the SBP paper; see
:mod:`sbpbench.solvers.dual`), ``sum_i alpha_i - 1/2 alpha' Q alpha`` over
``0 <= alpha_i <= C = 1/(lambda n)``, ``Q_ij = y_i y_j K_ij``, one coordinate at a time, from
``alpha = 0``. Iteration ``t`` draws ``i`` uniformly at random, i.i.d. over iterations (the
stochastic setting of the analysis; Hsieh et al. also describe a random permutation per epoch,
which we do not use), and takes the closed-form clipped Newton step of Algorithm 1 of Hsieh et al.:

``G = (Q alpha)_i - 1``,  ``alpha_i <- min(max(alpha_i - G / Q_ii, 0), C)``

(with example weights, :attr:`~sbpbench.problem.Problem.weights`, ``C_i = weights_i C`` in place of ``C``)

(``Q_ii = K_ii``; ``TAU = 1e-12`` replaces ``Q_ii = 0``, which only a zero vector under the
linear kernel has, sending ``alpha_i`` to its bound). The responses ``q = Q alpha`` of all
training points are kept, so ``G`` is free and ``q`` is updated with one kernel row when
``alpha_i`` changes: ``q <- q + d y_i y K_i``.

Cost model: exactly ``n`` kernel evaluations per iteration whose clipped step ``d`` is nonzero
(in floating point: the new ``alpha_i`` differs from the old), and none otherwise (the step is
zero exactly when the projected gradient is zero: ``G = 0``, or ``G > 0`` at ``alpha_i = 0``, or
``G < 0`` at ``alpha_i = C``). One epoch is ``n`` iterations. SDCA has no stopping rule here; the
budget ends it. No bias (the issue asks for the unbiased dual only).
"""

from __future__ import annotations

import numba
import numpy as np

from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, Solver, SolverParams, register
from sbpbench.solvers.dual import TAU, box_bounds, dual_snapshot
from sbpbench.solvers.responses import add_row
from sbpbench.solvers.sampling import DRAW_CHUNK


@numba.njit(cache=True)
def _next_step(draws, start, stop, q, alpha, diag, C):
    """First position ``p`` in ``draws[start:stop]`` whose clipped step is nonzero, and the new value.

    Returns ``(stop, 0.0)`` when every step there is zero.
    """
    for p in range(start, stop):
        i = draws[p]
        a = diag[i] if diag[i] > 0 else TAU
        new = min(max(alpha[i] - (q[i] - 1.0) / a, 0.0), C[i])
        if new != alpha[i]:
            return p, new
    return stop, 0.0


@register
class SDCA(Solver[SolverParams]):
    """Kernel SDCA keeping all responses. Cost: n kernel evaluations per nonzero coordinate step."""

    name = "sdca"
    needs = frozenset({"lambda"})
    supports_weights = True

    def __init__(self, problem: Problem, rng: np.random.Generator, params: SolverParams | None = None):
        super().__init__(problem, rng, params)
        self.y = problem.y
        self.C = box_bounds(problem)  # C_i of each example
        self.diag = self.kernel.diag()
        self.alpha = np.zeros(self.n)
        self.q = np.zeros(self.n)  # Q alpha: the responses y_i <w, Phi(x_i)>
        self.updates = 0  # nonzero coordinate steps: one kernel row each
        self._draws = np.empty(0, dtype=np.int64)
        self._pos = 0

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """Skip the zero steps among the next draws (at most ``iterations``), then take one nonzero step."""
        if self._pos == self._draws.size:
            self._draws = self.rng.integers(0, self.n, size=DRAW_CHUNK)
            self._pos = 0
        stop = int(min(self._draws.size, self._pos + iterations))
        p, new = _next_step(self._draws, self._pos, stop, self.q, self.alpha, self.diag, self.C)
        self.iteration += p - self._pos
        self._pos = p
        if p == stop:
            return False
        i = self._draws[p]
        row = self.kernel.row(i)
        add_row(self.q, self.y, row, (new - self.alpha[i]) * self.y[i])
        self.alpha[i] = new
        self.iteration += 1
        self._pos += 1
        self.updates += 1
        return False

    def snapshot(self) -> Snapshot:
        return dual_snapshot(self.problem, self.alpha, self.q)

    def expected_kernel_evals(self) -> float:
        """``n`` per nonzero coordinate step."""
        return float(self.n * self.updates)
