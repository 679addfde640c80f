"""Primal stochastic subgradient descent on linear features: Pegasos, NORMA, fixed-rate SGD.

All three minimize Problem 2.2, ``lambda/2 ||w||^2 + (1/n) sum_i hinge(y_i <w, x_i>)``,
from ``w_1 = 0`` by the step of the Pegasos paper (Shalev-Shwartz, Singer and Srebro 2007,
Figure 1): iteration ``t`` draws ``A_t``, ``k`` examples i.i.d. uniform (``k =
mini_batch``), and with ``A_t^+`` the examples of ``A_t`` with margin ``y_i <w_t, x_i> < 1``

``w <- (1 - eta_t lambda) w + (eta_t / k) sum_{i in A_t^+} y_i x_i``,
``w <- min(1, (1/sqrt(lambda)) / ||w||) w`` (only when ``projection`` is on).

They differ in the learning rate (the Pegasos paper, Section 5 and Figure 2):

* ``pegasos`` (primal path of :class:`~sbpbench.solvers.pegasos.Pegasos`):
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
drawn from the run's generator exactly as the kernel path draws them (chunks of
``DRAW_CHUNK x k``), so both paths see the same examples in the same order.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from sbpbench.solvers.base import Param, positive, register
from sbpbench.solvers.linear import LinearSolver, sparse_axpy, sparse_dot

#: Examples drawn from the generator at once (the same as kernel Pegasos, for the same stream).
DRAW_CHUNK = 4096
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


class PrimalSGD(LinearSolver):
    """Primal SGD on linear features with the scaled representation ``w = s v``.

    Subclasses set ``schedule`` and, for NORMA and fixed-rate SGD, ``rate_param`` (the name
    of the parameter holding ``p`` or ``eta``). Cost: no kernel evaluations.
    """

    schedule: int = PEGASOS
    rate_param: str | None = None

    def __init__(self, problem, rng, **params):
        super().__init__(problem, rng, **params)
        self.v = np.zeros(self.d)
        self.alpha = np.zeros(self.n)
        self.state = np.array([1.0, 0.0])
        self.rate = float(getattr(self, self.rate_param)) if self.rate_param else 0.0
        self._draws = np.empty((0, self.mini_batch), dtype=np.int64)
        self._run(self._draws)  # load the compiled loop here, outside the timed advance

    def _run(self, batches: np.ndarray) -> None:
        _steps(self.indptr, self.indices, self.data, self.y, self.sq, self.v, self.alpha,
               self.state, batches, self.iteration, self.lam, self.schedule, self.rate,
               self.projection)

    def advance(self, max_iterations, max_kernel_evals, deadline):
        while self.iteration < max_iterations and time.perf_counter() < deadline:
            if self._draws.shape[0] == 0:
                self._draws = self.rng.integers(0, self.n, size=(DRAW_CHUNK, self.mini_batch))
            count = int(min(self._draws.shape[0], max_iterations - self.iteration))
            self._run(self._draws[:count])
            self._draws = self._draws[count:]
            self.iteration += count
        return False

    def snapshot(self):
        s, norm2 = self.state
        support = np.flatnonzero(self.alpha)
        return self.linear_snapshot(s * self.v, norm2=norm2, support=support,
                                    coef=s * self.alpha[support] * self.y[support])


_MINI_BATCH = Param(int, 1, "k, examples per iteration", check=positive)


class PrimalPegasos(PrimalSGD):
    """The primal (linear-kernel) path of ``pegasos``; created by ``Pegasos`` itself."""

    name = "pegasos"
    params = {
        "mini_batch": _MINI_BATCH,
        "projection": Param(bool, True, "project onto the ball of radius 1/sqrt(lambda)"),
    }


@register
class Norma(PrimalSGD):
    """NORMA: eta_t = p/(lambda sqrt(t)), no projection by default. Cost: no kernel evaluations."""

    name = "norma"
    schedule = NORMA
    rate_param = "p"
    params = {
        "p": Param(float, 2.0 ** -0.5, "eta_t = p/(lambda sqrt(t)); the Pegasos paper's optimum is ~0.7",
                   check=positive),
        "mini_batch": _MINI_BATCH,
        "projection": Param(bool, False, "add the Pegasos projection (the paper's variant)"),
    }


@register
class FixedRateSGD(PrimalSGD):
    """SGD with a fixed learning rate eta (Zhang 2004). Cost: no kernel evaluations."""

    name = "sgd"
    schedule = FIXED
    rate_param = "eta"
    params = {
        "eta": Param(float, 0.01, "the fixed learning rate eta_t = eta", check=positive),
        "mini_batch": _MINI_BATCH,
        "projection": Param(bool, False, "add the Pegasos projection"),
    }
