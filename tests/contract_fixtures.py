"""Solvers for ``sbpbench check-solver`` (tests/test_external_solvers.py): one honest, two cheats.

Each is the kernel margin Perceptron with a bias (``f(x) = sum_j alpha_j y_j K(x_j, x) + b``;
an example with ``y_i f(x_i) <= 1`` adds one to ``alpha_i`` and, with a bias, ``y_i`` to
``b``), which accepts every kind of problem: both kernels, with or without a bias, with or
without lambda and nu.

* ``accepts-everything`` is honest: one counted kernel row per iteration; it passes the contract.
* ``numpy-half-rows`` computes every other row with numpy from ``problem.kernel.X`` and counts
  only the rows it asked the kernel for (its cost model says so, so the kernel's count agrees
  with it): it reports half the evaluations it made.
* ``hash-seeded`` draws its examples from a generator seeded with the given seed and
  ``hash`` of a string, which differs from one Python process to the next.
"""

from __future__ import annotations

import numpy as np

from sbpbench.solvers import Snapshot, Solver


class _Perceptron(Solver):
    """The margin Perceptron with a bias (no ``name``: not a solver of its own)."""

    supports_bias = True

    def __init__(self, problem, rng, params=None):
        super().__init__(problem, rng, params)
        self.y = np.asarray(problem.y, dtype=np.float64)
        self.alpha = np.zeros(self.n)
        self.b = 0.0
        self.rows = 0  # rows asked of the counting kernel

    def row(self, i: int) -> np.ndarray:
        """Kernel row ``i``, from the counting kernel."""
        self.rows += 1
        return self.kernel.row(i)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        i = int(self.rng.integers(self.n))
        f_i = float(self.row(i) @ (self.alpha * self.y)) + self.b
        if self.y[i] * f_i <= 1.0:
            self.alpha[i] += 1.0
            if self.problem.bias:
                self.b += self.y[i]
        self.iteration += 1
        return False

    def snapshot(self) -> Snapshot:
        support = np.flatnonzero(self.alpha)
        return Snapshot(support=support, coef=self.alpha[support] * self.y[support], bias=self.b)

    def expected_kernel_evals(self) -> float:
        """n per row asked of the counting kernel."""
        return float(self.n * self.rows)


class AcceptsEverything(_Perceptron):
    """Margin Perceptron with a bias, on every kind of problem. Cost: n kernel evaluations per iteration."""

    name = "accepts-everything"


class NumpyHalfRows(_Perceptron):
    """Margin Perceptron taking every other row straight from numpy. Cost: n per even iteration (a lie)."""

    name = "numpy-half-rows"

    def row(self, i: int) -> np.ndarray:
        if self.iteration % 2 == 0:
            return super().row(i)
        k = self.kernel
        X = k.X.toarray() if k.sparse else np.asarray(k.X)
        dots = X @ X[i]
        if k.spec.name == "linear":
            return dots
        sq = np.einsum("ij,ij->i", X, X)
        return np.exp(-(sq + sq[i] - 2.0 * dots) / (2.0 * k.spec.sigma2))


class HashSeeded(_Perceptron):
    """Margin Perceptron drawing from its seed and a string's hash. Cost: n kernel evaluations per iteration."""

    name = "hash-seeded"

    def __init__(self, problem, rng, params=None):
        super().__init__(problem, rng, params)
        self.rng = np.random.default_rng([int(rng.integers(2**32)), hash(self.name) % 2**32])
