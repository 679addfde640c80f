"""Kernel Pegasos (Shalev-Shwartz, Singer and Srebro 2007, Figure 1 and Section 4).

Pegasos minimizes Problem 2.2, ``lambda/2 ||w||^2 + (1/n) sum_i hinge(y_i <w, Phi(x_i)>)``,
by projected stochastic subgradient descent. Iteration ``t`` draws ``A_t``, ``k`` examples
i.i.d. uniform (``k = mini_batch``), sets ``eta_t = 1 / (lambda t)``, and

``w <- (1 - eta_t lambda) w + (eta_t / k) sum_{i in A_t^+} y_i Phi(x_i)``,
``w <- min(1, (1/sqrt(lambda)) / ||w||) w`` (when ``projection`` is on),

where ``A_t^+`` are the examples of ``A_t`` with margin ``y_i <w, Phi(x_i)> < 1``. It starts
from ``w_1 = 0`` and outputs the last iterate.

As the SBP paper's baseline (Figure 2), this implementation keeps the responses
``c_j = y_j <w, Phi(x_j)>`` of all training points, updated with one kernel row per margin
violation; the margin test itself is then free. ``w`` and the responses are stored with
a global scale factor, so the ``(1 - eta_t lambda)`` shrink and the projection are O(1).

Cost model: ``n`` kernel evaluations per margin violation (per element of ``A_t^+``);
iterations without a violation cost none. One epoch is ``n`` iterations.

``representation`` chooses the implementation: ``responses`` is the kernel path above;
``primal`` is the linear-kernel path of Section 2 (``w = a v`` over the features, sparse
updates, no kernel rows: :class:`~sbpbench.solvers.primal_sgd.PrimalPegasos`, whose
kernel evaluations are reported as unknown); ``auto`` (the default) takes ``primal`` for
the linear kernel and ``responses`` otherwise. Both paths draw the same examples from the
same generator, so on a linear-kernel problem they follow the same trajectory.
"""

from __future__ import annotations

import time

import numpy as np

from sbpbench.solvers.base import Param, Snapshot, Solver, positive, register
from sbpbench.solvers.primal_sgd import DRAW_CHUNK, PrimalPegasos
from sbpbench.solvers.sbp import _add_row


@register
class Pegasos(Solver):
    """Kernel Pegasos keeping all responses. Cost: n kernel evaluations per margin violation."""

    name = "pegasos"
    needs = frozenset({"lambda"})
    params = {
        "mini_batch": Param(int, 1, "k, examples per iteration", check=positive),
        "projection": Param(bool, True, "project onto the ball of radius 1/sqrt(lambda)"),
        "representation": Param(str, "auto", "responses (kernel rows), primal (linear kernel: "
                                "w = a v, no kernel rows) or auto (primal for the linear kernel)",
                                choices=("auto", "responses", "primal")),
    }

    @classmethod
    def refuse(cls, params, kernel):
        if params.get("representation") == "primal" and kernel != "linear":
            return f"representation 'primal' needs kernel.name linear, not {kernel!r}"
        return None

    def __new__(cls, problem, rng, **params):
        representation = params.get("representation", "auto")
        linear = problem.kernel.spec.name == "linear"
        if (why := cls.refuse(params, problem.kernel.spec.name)) is not None:
            raise ValueError(f"pegasos: {why}")
        if representation == "primal" or (representation == "auto" and linear):
            return PrimalPegasos(problem, rng, **params)
        return super().__new__(cls)

    def __init__(self, problem, rng, **params):
        super().__init__(problem, rng, **params)
        n = self.n
        self.y = problem.y
        self.lam = problem.lam
        self.k_diag = self.kernel.diag()
        self.a = np.zeros(n)  # alpha / s
        self.ct = np.zeros(n)  # c / s
        self.s = 1.0
        self.norm2 = 0.0  # ||w||^2
        self._unused = np.zeros(n)  # running-sum slot of the shared row update (no averaging)
        self._draws = np.empty((0, self.mini_batch), dtype=np.int64)

    def _draw(self) -> np.ndarray:
        if self._draws.shape[0] == 0:
            self._draws = self.rng.integers(0, self.n, size=(DRAW_CHUNK, self.mini_batch))
        batch, self._draws = self._draws[0], self._draws[1:]
        return batch

    def advance(self, max_iterations, max_kernel_evals, deadline):
        k = self.kernel
        while self.iteration < max_iterations and k.kernel_evals < max_kernel_evals:
            if time.perf_counter() >= deadline:
                break
            self.iteration += 1
            t = self.iteration
            batch = self._draw()
            violators = batch[self.s * self.ct[batch] < 1.0]
            shrink = 1.0 - 1.0 / t
            if shrink == 0.0:  # t = 1: w_1 = 0 stays 0 before the additions
                self.s = 1.0
                self.norm2 = 0.0
            else:
                self.s *= shrink
                self.norm2 *= shrink * shrink
            add = 1.0 / (self.lam * t * self.mini_batch)
            for i in violators:
                row = k.row(i)
                self.norm2 += 2.0 * add * self.s * self.ct[i] + add * add * self.k_diag[i]
                step = add / self.s
                self.a[i] += step
                _add_row(self.ct, self._unused, self.y, row, step * self.y[i], 0.0)
            if self.projection and self.norm2 * self.lam > 1.0:
                factor = 1.0 / np.sqrt(self.lam * self.norm2)
                self.s *= factor
                self.norm2 = 1.0 / self.lam
        return False

    def snapshot(self):
        support = np.flatnonzero(self.a)
        objective = self.problem.hinge_objective(self.s * self.ct, self.norm2)
        return Snapshot(
            support=support,
            coef=self.s * self.a[support] * self.y[support],
            objective=objective,
            primal_objective=objective,
        )
