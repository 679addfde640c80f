"""The online kernel Perceptron (Section 4.5 of the kernelized SBP paper), run for several epochs.

Each epoch presents the training examples once, in a fresh random permutation drawn from
the run's generator (the only random draws: one ``rng.permutation(n)`` per epoch). For the
presented example ``i`` the Perceptron computes ``f(x_i) = sum_j alpha_j y_j K(x_j, x_i)``
from its support vectors; on a mistake, ``y_i f(x_i) <= 0``, it adds ``y_i Phi(x_i)`` to
``w`` (``alpha_i += 1``; an example that errs again gets a larger coefficient). It starts
from ``w = 0`` (so the first example is always a mistake) and outputs the last ``w``.

The paper justifies the Perceptron for one pass only and draws later epochs dashed
(Figure 2); :mod:`sbpbench.plotting` does the same from the ``epoch`` column.

Cost model: ``|SV|`` kernel evaluations per presented example (``SV`` the distinct support
vectors at that moment), so the first example costs 0 and an epoch costs at most
``n |SV|``. One iteration is one presented example.

Implementation: instead of computing ``|SV|`` entries per example (about 3e10 evaluations
per run of 100 epochs on Adult), the solver keeps every response ``f(x_j)`` current: a
mistake on ``i`` adds ``y_i K(x_i, .)``, one kernel row, to all of them, so between
mistakes a compiled loop only reads ``f``. The responses are the published ones up to
floating-point summation order. The kernel counts the published cost (``Kernel.count``)
and, in ``kernel_evals_computed``, the rows actually computed (a repeated mistake on a
cached row computes nothing).
"""

from __future__ import annotations

import numba
import numpy as np

from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, Solver, SolverParams, register


@numba.njit(cache=True)
def _first_mistake(order, start, stop, y, f):
    """Position of the first ``p`` in ``[start, stop)`` with ``y[i] f[i] <= 0`` for ``i = order[p]``, else ``stop``."""
    for p in range(start, stop):
        i = order[p]
        if y[i] * f[i] <= 0.0:
            return p
    return stop


@register
class Perceptron(Solver[SolverParams]):
    """Online kernel Perceptron over a fresh permutation per epoch. Cost: |SV| kernel evaluations per example."""

    name = "perceptron"
    dashed_after_first_epoch = True

    def __init__(self, problem: Problem, rng: np.random.Generator, params: SolverParams | None = None):
        super().__init__(problem, rng, params)
        self.y = np.ascontiguousarray(problem.y, dtype=np.float64)
        self.f = np.zeros(self.n)  # f(x_j) of the current w, for every training point
        self.support = np.empty(self.n, dtype=np.int64)  # support[:n_sv], in order of arrival
        self.coef = np.empty(self.n)  # alpha_j y_j of support[j]
        self.slot = np.full(self.n, -1, dtype=np.int64)  # position of an example in `support`
        self.n_sv = 0
        self.mistakes = 0
        self.support_visits = 0  # sum over presented examples of |SV| at that moment
        self._order = np.empty(0, dtype=np.int64)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """Present examples up to the first mistake (and learn from it), within the limits."""
        n = self.n
        pos = self.iteration % n
        if pos == 0:
            self._order = self.rng.permutation(n)
        # examples to present now: to the epoch's end, within both limits (an example is
        # presented while the count before it is below the kernel-evaluation limit, as one by one)
        stop = pos + int(min(n - pos, iterations))
        if self.n_sv and np.isfinite(kernel_evals):
            stop = min(stop, pos + int(-(-kernel_evals // self.n_sv)))
        p = _first_mistake(self._order, pos, stop, self.y, self.f)
        presented = p - pos + (p < stop)
        self.iteration += presented
        self.support_visits += presented * self.n_sv
        self.kernel.count(presented * self.n_sv)
        if p < stop:
            self._mistake(int(self._order[p]))
        return False

    def _mistake(self, i: int) -> None:
        """alpha_i += 1: add ``y_i K(x_i, .)`` to every response."""
        self.mistakes += 1
        j = self.slot[i]
        if j < 0:
            j = self.slot[i] = self.n_sv
            self.support[j] = i
            self.coef[j] = 0.0
            self.n_sv += 1
        self.coef[j] += self.y[i]
        self.f += self.y[i] * self.kernel.row(i, counted=False)

    def snapshot(self) -> Snapshot:
        return Snapshot(
            support=self.support[:self.n_sv].copy(),
            coef=self.coef[:self.n_sv].copy(),
            extra={"mistakes": float(self.mistakes)},
        )

    def expected_kernel_evals(self) -> float:
        """``|SV|`` per presented example, summed."""
        return float(self.support_visits)
