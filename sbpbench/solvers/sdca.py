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
from sbpbench.solvers.responses import add_row, step_rows
from sbpbench.solvers.sampling import DRAW_CHUNK

#: The rows of :attr:`SDCA._state`: ``alpha``, ``q``, ``y``, ``K_ii`` and ``C_i`` (one array, so that a
#: compiled call unboxes one argument instead of five: about 0.2 us each, at every nonzero step).
ALPHA, Q, Y, DIAG, BOUND = range(5)
#: The row argument of :func:`_steps` when there is no step to finish (read-only, as the kernel's rows).
NO_ROW = np.empty(0)
NO_ROW.flags.writeable = False


@numba.njit(cache=True)
def _clipped(state, i):
    """The new ``alpha_i`` of a coordinate step on ``i``: the clipped Newton step."""
    a = state[DIAG, i] if state[DIAG, i] > 0 else TAU
    return min(max(state[ALPHA, i] - (state[Q, i] - 1.0) / a, 0.0), state[BOUND, i])


@numba.njit(cache=True)
def _steps(state, draws, row, p, stop):
    """Finish the nonzero step at ``draws[p]`` with its kernel row ``row`` (none when ``row`` is
    empty), then skip the zero steps among ``draws[p + 1:stop]`` (``draws[p:stop]`` without a row).

    Returns the position of the next nonzero step, or ``stop`` when every step before it is zero.
    """
    if row.size:
        i = draws[p]
        new = _clipped(state, i)
        add_row(state[Q], state[Y], row, (new - state[ALPHA, i]) * state[Y, i])
        state[ALPHA, i] = new
        p += 1
    while p < stop and _clipped(state, draws[p]) == state[ALPHA, draws[p]]:
        p += 1
    return p


@register
class SDCA(Solver[SolverParams]):
    """Kernel SDCA keeping all responses. Cost: n kernel evaluations per nonzero coordinate step.

    A step (:meth:`_step`) takes the next draws up to the limits, the end of the chunk of draws and
    :func:`~sbpbench.solvers.responses.step_rows` kernel rows, each row asked of the kernel
    and used in one compiled call (:func:`_steps`), which also skips the zero steps to the next row.
    """

    name = "sdca"
    needs = frozenset({"lambda"})
    supports_weights = True

    def __init__(self, problem: Problem, rng: np.random.Generator, params: SolverParams | None = None):
        super().__init__(problem, rng, params)
        self._state = np.zeros((5, self.n))
        self._state[Y], self._state[DIAG], self._state[BOUND] = problem.y, self.kernel.diag(), box_bounds(problem)
        self.y = problem.y
        self.alpha = self._state[ALPHA]
        self.q = self._state[Q]  # Q alpha: the responses y_i <w, Phi(x_i)>
        self.updates = 0  # nonzero coordinate steps: one kernel row each
        self._rows = step_rows(self.n)
        self._draws = np.empty(0, dtype=np.int64)
        self._pos = 0

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """The next draws (at most ``iterations``, to the end of the chunk) while ``kernel_evals`` allows
        another nonzero step, and at most :func:`~sbpbench.solvers.responses.step_rows` of them."""
        if self._pos == self._draws.size:
            self._draws = self.rng.integers(0, self.n, size=DRAW_CHUNK)
            self._pos = 0
        state, draws, row_of, n = self._state, self._draws, self.kernel.row, self.n
        start = self._pos
        stop = int(min(draws.size, start + iterations))
        p = _steps(state, draws, NO_ROW, start, stop)
        rows, end = 0, stop
        while p < end:
            rows += 1
            if rows >= self._rows or rows * n >= kernel_evals:
                end = p + 1  # this step's last row: no zero steps after it
            p = _steps(state, draws, row_of(draws[p]), p, end)
        self.iteration += p - start
        self._pos = p
        self.updates += rows
        return False

    def snapshot(self) -> Snapshot:
        return dual_snapshot(self.problem, self.alpha, self.q)

    def expected_kernel_evals(self) -> float:
        """``n`` per nonzero coordinate step."""
        return float(self.n * self.updates)
