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
updates, no kernel rows: :class:`PrimalPegasos`, a
:class:`~sbpbench.solvers.primal_sgd.PrimalSGD` whose kernel evaluations are reported as
unknown); ``auto`` (the default) takes ``primal`` for the linear kernel and ``responses``
otherwise; ``primal`` on another kernel is refused (:meth:`Pegasos.refuse`). Both paths draw
the same examples from the same generator, so on a linear-kernel problem they follow the
same trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from sbpbench.params import param
from sbpbench.problem import Problem
from sbpbench.solvers.base import ProblemKind, Snapshot, Solver, SolverParams, register, required
from sbpbench.solvers.primal_sgd import PEGASOS, PrimalSGD, StepRule, mini_batch_param
from sbpbench.solvers.responses import add_row
from sbpbench.solvers.sampling import BatchDraws


@numba.njit(cache=True)
def _shrink(s, norm2, t):
    """The scale and ``||w||^2`` after iteration ``t``'s shrink by ``1 - 1/t`` (``w_1 = 0`` at ``t = 1``)."""
    shrink = 1.0 - 1.0 / t
    if shrink == 0.0:  # t = 1: w_1 = 0 stays 0 before the additions
        return 1.0, 0.0
    return s * shrink, norm2 * (shrink * shrink)


@numba.njit(cache=True)
def _project(s, norm2, lam):
    """The scale and ``||w||^2`` after the projection onto the ball of radius ``1/sqrt(lambda)``."""
    if norm2 * lam > 1.0:
        return s * (1.0 / np.sqrt(lam * norm2)), 1.0 / lam
    return s, norm2


@numba.njit(cache=True)
def _quiet_steps(batches, ct, s, norm2, done, lam, projection):
    """Iterations ``done + 1, ...`` over ``batches`` while no example of a batch violates its
    margin (``s ct_i < 1``): each only shrinks and projects, and evaluates no kernel.

    Returns how many batches were quiet (the next one, if any, has a violation), and the
    scale and ``||w||^2`` after them; the arithmetic of :meth:`Pegasos._violating_step`.
    """
    for p in range(batches.shape[0]):
        for i in batches[p]:
            if s * ct[i] < 1.0:
                return p, s, norm2
        s, norm2 = _shrink(s, norm2, done + p + 1)
        if projection:
            s, norm2 = _project(s, norm2, lam)
    return batches.shape[0], s, norm2


@dataclass(frozen=True)
class PegasosParams(SolverParams):
    """Parameters of :class:`Pegasos` (both representations)."""

    mini_batch: int = mini_batch_param()
    projection: bool = param(True, "project onto the ball of radius 1/sqrt(lambda)")
    representation: str = param("auto", "responses (kernel rows), primal (linear kernel: w = a v, no kernel rows) "
                                "or auto (primal for the linear kernel)", choices=("auto", "responses", "primal"))


@register
class Pegasos(Solver[PegasosParams]):
    """Kernel Pegasos keeping all responses. Cost: n kernel evaluations per margin violation."""

    name = "pegasos"
    Params = PegasosParams
    needs = frozenset({"lambda"})

    @classmethod
    def refuse(cls, kind: ProblemKind, params: PegasosParams) -> str | None:
        if (why := super().refuse(kind, params)) is not None:
            return why
        if params.representation == "primal" and kind.kernel != "linear":
            return f"solver {cls.name!r}: representation 'primal' needs kernel.name linear, not {kind.kernel!r}"
        return None

    @classmethod
    def _construct(cls, problem: Problem, rng: np.random.Generator, params: PegasosParams) -> Solver[Any]:
        """The primal representation for ``primal``, or ``auto`` on the linear kernel; else this one."""
        linear = problem.kernel.spec.name == "linear"
        if params.representation == "primal" or (params.representation == "auto" and linear):
            return PrimalPegasos(problem, rng, params)
        return cls(problem, rng, params)

    def __init__(self, problem: Problem, rng: np.random.Generator, params: PegasosParams | None = None):
        super().__init__(problem, rng, params)
        n = self.n
        self.y = problem.y
        self.lam = required(problem.lam, "lambda")
        self.k_diag = self.kernel.diag()
        self.a = np.zeros(n)  # alpha / s
        self.ct = np.zeros(n)  # c / s
        self.s = 1.0
        self.norm2 = 0.0  # ||w||^2
        self.violations = 0  # margin violations so far: one kernel row each
        self._draws = BatchDraws(rng, n, self.params.mini_batch)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """The iterations without a margin violation among the next draws (at most ``iterations``),
        in one compiled loop (:func:`_quiet_steps`), then one iteration with a violation."""
        batches = self._draws.peek(iterations)
        quiet, self.s, self.norm2 = _quiet_steps(batches, self.ct, self.s, self.norm2, self.iteration, self.lam,
                                                 self.params.projection)
        self._draws.skip(quiet)
        self.iteration += quiet
        if quiet < batches.shape[0]:
            self._violating_step()
        return False

    def _violating_step(self) -> None:
        """One iteration: a batch, its margin violations, the shrink, the additions, the projection."""
        k = self.kernel
        mini_batch, lam = self.params.mini_batch, self.lam
        self.iteration += 1
        t = self.iteration
        batch = self._draws.next()
        violators = batch[self.s * self.ct[batch] < 1.0]
        self.s, self.norm2 = _shrink(self.s, self.norm2, t)
        add = 1.0 / (lam * t * mini_batch)
        for i in violators:
            row = k.row(i)
            self.norm2 += 2.0 * add * self.s * self.ct[i] + add * add * self.k_diag[i]
            step = add / self.s
            self.a[i] += step
            add_row(self.ct, self.y, row, step * self.y[i])
        self.violations += violators.size
        if self.params.projection:
            self.s, self.norm2 = _project(self.s, self.norm2, lam)

    def snapshot(self) -> Snapshot:
        support = np.flatnonzero(self.a)
        objective = self.problem.hinge_objective(self.s * self.ct, self.norm2)
        return Snapshot(
            support=support,
            coef=self.s * self.a[support] * self.y[support],
            objective=objective,
            primal_objective=objective,
        )

    def expected_kernel_evals(self) -> float:
        """``n`` per margin violation."""
        return float(self.n * self.violations)


class PrimalPegasos(PrimalSGD[PegasosParams]):
    """The primal (linear-kernel) representation of ``pegasos``; made by :meth:`Pegasos.create`."""

    name = "pegasos"
    Params = PegasosParams

    def step_rule(self) -> StepRule:
        p = self.params
        return StepRule(PEGASOS, 0.0, p.mini_batch, p.projection)
