"""Primal stochastic subgradient descent on linear features: Pegasos, NORMA, fixed-rate SGD.

All three minimize Problem 2.2, ``lambda/2 ||w||^2 + (1/n) sum_i hinge(y_i <w, x_i>)``,
from ``w_1 = 0`` by the step of the Pegasos paper (Shalev-Shwartz, Singer and Srebro 2007,
Figure 1): iteration ``t`` draws ``A_t``, ``k`` examples i.i.d. uniform (``k =
mini_batch``), and with ``A_t^+`` the examples of ``A_t`` with margin ``y_i <w_t, x_i> < 1``

``w <- (1 - eta_t lambda) w + (eta_t / k) sum_{i in A_t^+} y_i x_i``,
``w <- min(1, (1/sqrt(lambda)) / ||w||) w`` (only when ``projection`` is on).

They differ in the learning rate (the Pegasos paper, Section 5 and Figure 2):

* ``pegasos`` (its primal representation, :class:`~sbpbench.solvers.pegasos.PrimalPegasos`):
  ``eta_t = 1/(lambda t)``, projection on by default;
* ``norma`` (Kivinen, Smola and Williamson 2004, Thm. 4): ``eta_t = p/(lambda sqrt(t))``,
  no projection; the Pegasos paper quotes the optimal ``p`` in [0.7, 0.716], whose limit
  ``1/sqrt(2)`` is the default;
* ``sgd`` (Zhang 2004): a fixed ``eta_t = eta``, no projection; the Pegasos paper tries
  ``eta`` in {0.001, 0.01, 0.1, 1, 10}. With ``eta lambda > 2`` the iterates grow
  geometrically and the run ends ``diverged``.

The Pegasos paper's sparse representation (Section 2): ``w = s v`` with a dense ``v``,
a scalar ``s`` and the tracked ``||w||^2``, so the shrink and the projection are O(1) and
an addition is O(nnz(x_i)). ``s`` is folded into ``v`` when it leaves [1e-150, 1e150]
(O(d), rare). The coefficients of ``w = sum_j alpha_j y_j x_j`` are kept in the same
scaled way, so a snapshot also gives the support vectors of the kernel path.

Cost model: no kernel evaluations (``counts_kernel_evals = False``); each iteration costs
``k`` sparse inner products ``<v, x_i>`` plus one sparse addition per margin violation
(with ``k > 1`` one more inner product per violation after the first, for ``||w||^2``).
One iteration is one draw of ``A_t``; one epoch is ``n`` iterations. The examples are
drawn from the run's generator as kernel Pegasos draws them
(:class:`~sbpbench.solvers.sampling.BatchDraws`), so both representations of Pegasos see
the same examples in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numba
import numpy as np

from sbpbench.params import at_most_examples, param, positive
from sbpbench.problem import Problem
from sbpbench.solvers.base import P, Snapshot, SolverParams, register
from sbpbench.solvers.linear import LinearSolver, sparse_axpy, sparse_dot
from sbpbench.solvers.sampling import BatchDraws, draws_bytes

#: Learning-rate schedules.
PEGASOS, NORMA, FIXED = 0, 1, 2
#: Bounds outside which the scale ``s`` is folded into ``v``.
SCALE_LO, SCALE_HI = 1e-150, 1e150


@numba.njit(cache=True)
def _steps(indptr, indices, data, y, sq, v, alpha, state, batches, t0, lam, schedule, rate,
           projection):
    """Run one iteration per row of ``batches`` from iteration ``t0 + 1``.

    ``state`` is ``[s, ||w||^2]``; ``w = s v`` and ``alpha`` holds ``alpha_j / s``.
    """
    s = state[0]
    norm2 = state[1]
    k = batches.shape[1]
    marg = np.empty(k)
    for r in range(batches.shape[0]):
        t = t0 + r + 1
        if schedule == PEGASOS:
            eta = 1.0 / (lam * t)
        elif schedule == NORMA:
            eta = rate / (lam * np.sqrt(t))
        else:
            eta = rate
        for j in range(k):
            i = batches[r, j]
            marg[j] = y[i] * s * sparse_dot(indptr, indices, data, i, v)
        shrink = 1.0 - eta * lam
        if shrink == 0.0:
            v[:] = 0.0
            alpha[:] = 0.0
            s = 1.0
            norm2 = 0.0
        else:
            s *= shrink
            norm2 *= shrink * shrink
        add = eta / k
        first = True
        for j in range(k):
            if marg[j] < 1.0:
                i = batches[r, j]
                if first:  # y_i <w, x_i> after the shrink
                    cur = shrink * marg[j]
                    first = False
                else:
                    cur = y[i] * s * sparse_dot(indptr, indices, data, i, v)
                norm2 += 2.0 * add * cur + add * add * sq[i]
                step = add / s
                alpha[i] += step
                sparse_axpy(indptr, indices, data, i, step * y[i], v)
        if projection and norm2 * lam > 1.0:
            s *= 1.0 / np.sqrt(lam * norm2)
            norm2 = 1.0 / lam
        if abs(s) < SCALE_LO or abs(s) > SCALE_HI:
            v *= s
            alpha *= s
            s = 1.0
    state[0] = s
    state[1] = norm2


class StepRule(NamedTuple):
    """How a primal SGD solver takes the Pegasos step (see the module docstring)."""

    schedule: int  #: PEGASOS, NORMA or FIXED
    rate: float  #: p (NORMA) or eta (FIXED); unused by PEGASOS
    mini_batch: int  #: k, examples per iteration
    projection: bool  #: project onto the ball of radius 1/sqrt(lambda)


class PrimalSGD(LinearSolver[P]):
    """Primal SGD on linear features with the scaled representation ``w = s v``.

    Subclasses give their learning rate and batch in :meth:`step_rule`. Cost: no kernel evaluations.
    """

    def __init__(self, problem: Problem, rng: np.random.Generator, params: P | None = None):
        super().__init__(problem, rng, params)
        self.rule = self.step_rule()
        self.v = np.zeros(self.d)
        self.alpha = np.zeros(self.n)
        self.state = np.array([1.0, 0.0])
        self._draws = BatchDraws(rng, self.n, self.rule.mini_batch)

    def step_rule(self) -> StepRule:
        """The learning-rate schedule, its rate, the batch size and the projection, from ``params``."""
        raise NotImplementedError

    def _run(self, batches: np.ndarray) -> None:
        rule = self.rule
        _steps(self.indptr, self.indices, self.data, self.y, self.sq, self.v, self.alpha,
               self.state, batches, self.iteration, self.lam, rule.schedule, rule.rate, rule.projection)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """The iterations left in the current chunk of draws, at most ``iterations``."""
        batches = self._draws.take(iterations)
        self._run(batches)
        self.iteration += batches.shape[0]
        return False

    def snapshot(self) -> Snapshot:
        s, norm2 = self.state
        support = np.flatnonzero(self.alpha)
        return self.linear_snapshot(s * self.v, norm2=norm2, support=support,
                                    coef=s * self.alpha[support] * self.y[support])


def mini_batch_param() -> Any:
    """The ``mini_batch`` parameter, k examples per iteration, of every Pegasos-step solver."""
    return param(1, "k, examples per iteration (at most n)", check=positive, data_check=at_most_examples,
                 memory=draws_bytes)


@dataclass(frozen=True)
class NormaParams(SolverParams):
    """Parameters of :class:`Norma`."""

    p: float = param(2.0 ** -0.5, "eta_t = p/(lambda sqrt(t)); the Pegasos paper's optimum is ~0.7", check=positive)
    mini_batch: int = mini_batch_param()
    projection: bool = param(False, "add the Pegasos projection (the paper's variant)")


@register
class Norma(PrimalSGD[NormaParams]):
    """NORMA: eta_t = p/(lambda sqrt(t)), no projection by default. Cost: no kernel evaluations."""

    name = "norma"
    Params = NormaParams

    def step_rule(self) -> StepRule:
        p = self.params
        return StepRule(NORMA, p.p, p.mini_batch, p.projection)


@dataclass(frozen=True)
class FixedRateParams(SolverParams):
    """Parameters of :class:`FixedRateSGD`."""

    eta: float = param(0.01, "the fixed learning rate eta_t = eta", check=positive)
    mini_batch: int = mini_batch_param()
    projection: bool = param(False, "add the Pegasos projection")


@register
class FixedRateSGD(PrimalSGD[FixedRateParams]):
    """SGD with a fixed learning rate eta (Zhang 2004). Cost: no kernel evaluations."""

    name = "sgd"
    Params = FixedRateParams

    def step_rule(self) -> StepRule:
        p = self.params
        return StepRule(FIXED, p.eta, p.mini_batch, p.projection)
