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
from sbpbench.solvers.responses import add_row, step_rows
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


#: The rows of :attr:`Pegasos._vectors`: ``a = alpha / s``, ``ct = c / s``, ``y`` and ``K_ii``; and the entries
#: of :attr:`Pegasos._scalars`: ``s`` and ``||w||^2`` (a few arrays, so that a compiled call unboxes few
#: arguments: about 0.2 us each, at every margin violation).
A, CT, Y, DIAG = range(4)
S, NORM2 = range(2)
#: The entries of :attr:`Pegasos._at` (int64): the batch of the iteration under way (its position among
#: the step's batches), its number of violators, how many of them were added, then the violators.
BATCH, VIOLATORS, ADDED, FIRST = range(4)


@numba.njit(cache=True)
def _quiet_steps(batches, start, stop, ct, s, norm2, done, lam, projection):
    """Iterations ``done + start + 1, ...`` over ``batches[start:stop]`` while no example of a batch violates
    its margin (``s ct_i < 1``): each only shrinks and projects, and evaluates no kernel.

    Returns the position of the first batch with a violation (``stop`` if none), and the scale and
    ``||w||^2`` after the quiet batches before it; the arithmetic of :func:`_add`.
    """
    for p in range(start, stop):
        for i in batches[p]:
            if s * ct[i] < 1.0:
                return p, s, norm2
        s, norm2 = _shrink(s, norm2, done + p + 1)
        if projection:
            s, norm2 = _project(s, norm2, lam)
    return stop, s, norm2


@numba.njit(cache=True)
def _start(vectors, scalars, at, batches, stop, done, lam, projection):
    """The quiet iterations from batch ``at[BATCH]`` (:func:`_quiet_steps`) up to ``stop``, then the start
    of the iteration of the next batch, which has a violation: its violators (``s ct_i < 1`` before its
    shrink, in the batch's order) into ``at``, and its shrink.

    Returns the first violator, whose kernel row :func:`_add` takes next, or -1 when every batch up to
    ``stop`` was quiet (``at[BATCH] = stop``).
    """
    p, s, norm2 = _quiet_steps(batches, at[BATCH], stop, vectors[CT], scalars[S], scalars[NORM2], done, lam,
                               projection)
    at[BATCH] = p
    first = -1
    if p < stop:
        m = 0
        for i in batches[p]:
            if s * vectors[CT, i] < 1.0:
                at[FIRST + m] = i
                m += 1
        at[VIOLATORS], at[ADDED] = m, 0
        s, norm2 = _shrink(s, norm2, done + p + 1)
        first = at[FIRST]
    scalars[S], scalars[NORM2] = s, norm2
    return first


@numba.njit(cache=True)
def _add(vectors, scalars, at, batches, row, stop, done, lam, mini_batch, projection):
    """Add the next violator of the iteration under way (``at``), whose kernel row is ``row``, to ``w``;
    after its last violator, the iteration's projection and :func:`_start` up to ``stop``.

    Returns the violator whose row is needed next, or -1 (see :func:`_start`).
    """
    p, j = at[BATCH], at[ADDED]
    t = done + p + 1
    i = at[FIRST + j]
    s = scalars[S]
    add = 1.0 / (lam * t * mini_batch)
    norm2 = scalars[NORM2] + (2.0 * add * s * vectors[CT, i] + add * add * vectors[DIAG, i])
    step = add / s
    vectors[A, i] += step
    add_row(vectors[CT], vectors[Y], row, step * vectors[Y, i])
    scalars[NORM2] = norm2
    at[ADDED] = j + 1
    if j + 1 < at[VIOLATORS]:
        return at[FIRST + j + 1]
    if projection:
        scalars[S], scalars[NORM2] = _project(s, norm2, lam)
    at[BATCH] = p + 1
    return _start(vectors, scalars, at, batches, stop, done, lam, projection)


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
        self.y = problem.y
        self.lam = required(problem.lam, "lambda")
        self._vectors = np.zeros((4, self.n))
        self._vectors[Y], self._vectors[DIAG] = problem.y, self.kernel.diag()
        self.a = self._vectors[A]  # alpha / s
        self.ct = self._vectors[CT]  # c / s
        self._scalars = np.array([1.0, 0.0])  # s, ||w||^2
        self._at = np.zeros(FIRST + self.params.mini_batch, dtype=np.int64)
        self.violations = 0  # margin violations so far: one kernel row each
        self._rows = step_rows(self.n)
        self._draws = BatchDraws(rng, self.n, self.params.mini_batch)

    @property
    def s(self) -> float:
        """The scale of ``w`` and of the responses: ``alpha = s a``, ``c = s ct``."""
        return float(self._scalars[S])

    @property
    def norm2(self) -> float:
        """``||w||^2``."""
        return float(self._scalars[NORM2])

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """The next batches (at most ``iterations``) while ``kernel_evals`` allows another iteration
        with a margin violation: the quiet ones in compiled loops, and each violator's kernel row,
        asked of the kernel, added in one compiled call (:func:`_add`), which goes on to the next
        violator; at most :func:`~sbpbench.solvers.responses.step_rows` rows, and the rest of
        the last iteration's."""
        batches = self._draws.peek(iterations)
        stop = batches.shape[0]
        vectors, scalars, at, done, row_of = self._vectors, self._scalars, self._at, self.iteration, self.kernel.row
        p = self.params
        at[BATCH] = 0
        i = _start(vectors, scalars, at, batches, stop, done, self.lam, p.projection)
        rows, end = 0, stop
        while i >= 0:
            rows += 1
            if rows >= self._rows or rows * self.n >= kernel_evals:
                end = at[BATCH] + 1  # no iteration after this one
            i = _add(vectors, scalars, at, batches, row_of(i), end, done, self.lam, p.mini_batch, p.projection)
        self._draws.skip(int(at[BATCH]))
        self.iteration += int(at[BATCH])
        self.violations += rows
        return False

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
