"""A solver defined outside sbpbench: the kernel margin Perceptron, in one file.

Run it beside SBP with ``sbpbench run examples/my-solver.yaml`` (the config names this file
in its solver entry's ``path``), check it with ``sbpbench check-solver examples/my_solver.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sbpbench.params import non_negative
from sbpbench.solvers import Snapshot, Solver, SolverParams, param


@dataclass(frozen=True)
class MarginParams(SolverParams):
    margin: float = param(1.0, "update when y_i f(x_i) <= margin (0: the plain Perceptron)", check=non_negative)


class MarginPerceptron(Solver[MarginParams]):
    """Kernel margin Perceptron on uniformly drawn examples. Cost: n kernel evaluations per iteration.

    Each iteration draws an example ``i`` uniformly, computes ``f(x_i) = sum_j alpha_j y_j
    K(x_j, x_i)`` from the kernel row of ``i`` and, when ``y_i f(x_i) <= margin``, adds one
    to ``alpha_i``. The predictor is the last ``f``.
    """

    name = "margin-perceptron"
    Params = MarginParams
    dashed_after_first_epoch = True  # as the Perceptron: its guarantee covers one pass

    def __init__(self, problem, rng, params=None):
        super().__init__(problem, rng, params)
        self.y = np.asarray(problem.y, dtype=np.float64)
        self.alpha = np.zeros(self.n)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One iteration: one kernel row (n evaluations, counted by ``row``)."""
        i = int(self.rng.integers(self.n))
        f_i = float(self.kernel.row(i) @ (self.alpha * self.y))
        if self.y[i] * f_i <= self.params.margin:
            self.alpha[i] += 1.0
        self.iteration += 1
        return False

    def snapshot(self) -> Snapshot:
        support = np.flatnonzero(self.alpha)
        return Snapshot(support=support, coef=self.alpha[support] * self.y[support])

    def expected_kernel_evals(self) -> float:
        """n per iteration."""
        return float(self.n * self.iteration)
