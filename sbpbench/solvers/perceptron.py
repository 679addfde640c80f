"""The online kernel Perceptron (Section 4.5 of the kernelized SBP paper), run for several epochs.

Each epoch presents the training examples once, in a fresh random permutation drawn from
the run's generator (the only random draws: one ``rng.permutation(n)`` per epoch). For the
presented example ``i`` the Perceptron computes ``f(x_i) = sum_j alpha_j y_j K(x_j, x_i)``
from its support vectors; on a mistake, ``y_i f(x_i) <= 0``, it adds ``y_i Phi(x_i)`` to
``w`` (``alpha_i += 1``; an example that errs again gets a larger coefficient). It starts
from ``w = 0`` (so the first example is always a mistake) and outputs the last ``w``.

The paper justifies the Perceptron for one pass only and draws later epochs dashed
(Figure 2); :mod:`sbpbench.plotting` does the same from the ``epoch`` column.

Cost model: ``|SV|`` kernel evaluations per presented example (``kernel.entries(i, SV)``
with ``SV`` the distinct support vectors at that moment), so the first example costs 0 and
an epoch costs at most ``n |SV|``. One iteration is one presented example.
"""

from __future__ import annotations

import time

import numpy as np

from sbpbench.solvers.base import Snapshot, Solver, register


@register
class Perceptron(Solver):
    """Online kernel Perceptron over a fresh permutation per epoch. Cost: |SV| kernel evaluations per example."""

    name = "perceptron"

    def __init__(self, problem, rng, **params):
        super().__init__(problem, rng, **params)
        self.y = problem.y
        self.support = np.empty(self.n, dtype=np.int64)  # support[:n_sv], in order of arrival
        self.coef = np.empty(self.n)  # alpha_j y_j of support[j]
        self.slot = np.full(self.n, -1, dtype=np.int64)  # position of an example in `support`
        self.n_sv = 0
        self.mistakes = 0
        self._order = np.empty(0, dtype=np.int64)

    def advance(self, max_iterations, max_kernel_evals, deadline):
        k = self.kernel
        n = self.n
        while self.iteration < max_iterations and k.kernel_evals < max_kernel_evals:
            if time.perf_counter() >= deadline:
                break
            pos = self.iteration % n
            if pos == 0:
                self._order = self.rng.permutation(n)
            i = int(self._order[pos])
            self.iteration += 1
            sv = self.support[:self.n_sv]
            f = float(k.entries(i, sv) @ self.coef[:self.n_sv]) if self.n_sv else 0.0
            if self.y[i] * f <= 0.0:
                self.mistakes += 1
                j = self.slot[i]
                if j < 0:
                    j = self.slot[i] = self.n_sv
                    self.support[j] = i
                    self.coef[j] = 0.0
                    self.n_sv += 1
                self.coef[j] += self.y[i]
        return False

    def snapshot(self):
        return Snapshot(
            support=self.support[:self.n_sv].copy(),
            coef=self.coef[:self.n_sv].copy(),
            extra={"mistakes": float(self.mistakes)},
        )
