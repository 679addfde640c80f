"""SGD-r, SGD-s and SGD-m of Panagiotakopoulos and Tsampouka, "The stochastic gradient
descent for the primal L1-SVM optimization revisited" (``papers/sgd-primal-l1svm-revisited.md``).

Notation of the paper: patterns ``y_k = [l_k x_k, l_k rho]`` (augmented by ``rho`` and
reflected), ``q_k = ||y_k||^2``, ``C = 1/(lambda m)`` and the C form of the problem
``J(w) = 1/2 ||w||^2 + C sum_k max(0, 1 - w . y_k)``. With ``eta_t = 1/(t+1)`` the SGD
step becomes, in ``a_t = lambda t w_t`` (Eq. 4), the perceptron with a margin threshold
growing with the number of presentations (Eqs. 5-7):

``a_{t+1} = a_t + y_k`` if ``a_t . y_k <= lambda t``, else ``a_{t+1} = a_t``; ``t <- t+1``,

and ``||a||^2`` is tracked as ``r_{t+1} = r_t + 2 p_tk + q_k``. The output is the last
hypothesis ``w_t = a_t / (lambda t)``.

* ``sgd-r``: examples drawn uniformly at random (with replacement); it runs to the budget.
* ``sgd-s``: complete epochs over a fresh random permutation. After ``T`` epochs the dual
  variables ``alpha_k = C I_k / T`` satisfy the box constraints, so (Proposition 2)
  ``L^T = C M / T - 1/2 ||w^T||^2 <= J_opt``, with ``M`` the total number of margin errors.
  The stopping rule is the paper's algorithm box: after each epoch, with the approximate
  loss ``L`` summed during the epoch (``1 - p_tk/theta_t`` on each margin error, ``1`` at
  ``t = 0``), ``J' = w2 + C L``; if ``J' - L^T <= f eps L^T`` the exact ``J`` is computed
  (one more pass of inner products, inside the training time as in the paper) and the run
  finishes when ``J - L^T <= eps L^T`` (``eps = target_accuracy``, ``f`` the comparison
  coefficient).
* ``sgd-m``: SGD-s where in the ``T``-th pass (``T = 1, 2, ...``) with ``0 < T mod 9 < 5``
  each pattern is presented ``l = multiplicity`` (5) times in a row at the cost of one inner
  product, ``a <- a + l_+ y_k`` with ``l_+`` of Proposition 3 (Eq. 13) and ``t <- t + l``.
  Such a pass counts as ``l`` epochs in Proposition 2 (``T`` there is the number of
  equivalent epochs, column ``equivalent_epochs``); its approximate loss uses each pattern's
  first presentation. We read "the T-th epoch" as the 1-based pass number (the paper's
  Table 2 counts SGD-m's T in passes).

A bias is the paper's augmentation ``rho`` (default 0, as in all the paper's experiments):
the predictor is ``w . x + rho w_{d+1}`` and ``w_{d+1}`` is regularized, so this is not the
unregularized bias of ``problem.bias`` (which these solvers do not accept); the objectives
are then those of the augmented problem.

Precision (``precision``, the SGD paper's Table 8 runs SGD-m "implemented in single
precision"): ``single`` keeps ``a`` and a copy of the data in float32 and sums the inner
products ``a . y_k`` in float32 (each addition to ``a`` is rounded to float32); the scalar
bookkeeping (``lambda t``, ``r``, ``M``, ``L``) and every objective and stopping test are in
double. ``double`` is the arithmetic of the committed runs, unchanged.

Columns: ``objective`` is ``J`` (C form), ``primal_objective`` is ``lambda J`` (Problem
2.2), and for SGD-s/m ``L_T`` (C form), ``dual_objective = lambda L^T``, ``duality_gap``
and ``relative_accuracy = J / L^T - 1`` (when ``L^T > 0``); ``steps`` is the paper's ``t``
(presentations, so ``steps / n`` is the number of equivalent epochs).

Cost model: no kernel evaluations (``counts_kernel_evals = False``). An iteration is one
pattern processed, i.e. one sparse inner product ``a . y_k`` (for SGD-m one inner product
for ``l`` presentations); an epoch is ``n`` iterations, one pass. SGD-s/m run complete
passes only: ``advance`` may overshoot ``max_iterations`` up to the end of the current pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numba
import numpy as np

from sbpbench.params import non_negative, param, positive
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, register
from sbpbench.solvers.linear import LinearSolver, PrecisionParams, linear_scores, sparse_axpy, sparse_dot_from

#: Random examples drawn at once by SGD-r.
DRAW_CHUNK = 65536


@numba.njit(cache=True)
def multiplicity_plus(P, q, lam, ell):
    """``l_+`` of Proposition 3 (Eq. 13): margin errors among ``ell`` presentations in a row.

    Parameters
    ----------
    P : float
        ``a_t . y_k - lambda t`` at the first presentation.
    q : float
        ``||y_k||^2``.
    lam : float
        lambda.
    ell : int
        Number of consecutive presentations.

    Returns
    -------
    int
    """
    if P > (ell - 1) * lam:
        return 0
    x = ((ell - 1) * lam - P) / max(q, lam)
    if x >= ell:
        return ell
    return min(ell, int(x) + 1)


@numba.njit(cache=True)
def _present(indptr, indices, data, lab, q, rho, a, hits, order, t, lam, ell, acc, zero):
    """Present the patterns ``order`` (each ``ell`` times in a row) from step ``t``.

    ``acc`` is ``[r, M, L]`` (tracked ``||a||^2``, margin errors, approximate loss) and is
    updated in place; returns the new ``t``. ``zero`` starts the inner products in the
    precision of ``a`` and ``data``.
    """
    d = a.shape[0] - 1
    r = acc[0]
    M = acc[1]
    L = acc[2]
    for idx in range(order.shape[0]):
        k = order[idx]
        p = lab[k] * (sparse_dot_from(zero, indptr, indices, data, k, a) + rho * a[d])
        theta = lam * t
        if p <= theta:
            L += 1.0 - p / theta if t > 0 else 1.0
        if ell == 1:
            plus = 1 if p <= theta else 0
        else:
            plus = multiplicity_plus(p - theta, q[k], lam, ell)
        if plus > 0:
            step = plus * lab[k]
            sparse_axpy(indptr, indices, data, k, step, a)
            a[d] += step * rho
            r += 2.0 * plus * p + plus * plus * q[k]
            M += plus
            hits[k] += plus
        t += ell
    acc[0] = r
    acc[1] = M
    acc[2] = L
    return t


@dataclass(frozen=True)
class RevisitedParams(PrecisionParams):
    """Parameters of SGD-r (and the first of SGD-s and SGD-m); ``precision`` as in Table 8."""

    rho: float = param(0.0, "augmentation rho (a regularized bias); 0 = no bias", check=non_negative)


@dataclass(frozen=True)
class SGDSParams(RevisitedParams):
    """Parameters of SGD-s (and the first of SGD-m)."""

    target_accuracy: float = param(0.01, "eps: stop when J/L^T - 1 <= eps (0 = never)", check=non_negative)
    f: float = param(1.2, "comparison coefficient: exact J once the estimate is <= f eps", check=positive)


@dataclass(frozen=True)
class SGDMParams(SGDSParams):
    """Parameters of SGD-m."""

    multiplicity: int = param(5, "l, presentations per pattern in a multiple-update pass", check=positive)


R = TypeVar("R", bound=RevisitedParams)


class _Revisited(LinearSolver[R]):
    """State and snapshot shared by SGD-r/s/m (see the module docstring)."""

    def __init__(self, problem: Problem, rng: np.random.Generator, params: R | None = None):
        super().__init__(problem, rng, params)
        self.lab = self.y
        self.q = self.sq + self.params.rho ** 2
        self.a = np.zeros(self.d + 1, dtype=self.params.dtype)
        self.values = self.data_in(self.params.dtype)
        self.hits = np.zeros(self.n)  # I_k: margin errors on pattern k
        self.acc = np.zeros(3)  # r, M, L of the current epoch
        self.t = 0

    def _present(self, order: np.ndarray, ell: int) -> None:
        self.t = _present(self.indptr, self.indices, self.values, self.lab, self.q, self.params.rho,
                          self.a, self.hits, order, self.t, self.lam, ell, self.acc, self.params.zero)

    def _a64(self) -> np.ndarray:
        """``a`` in double (the array itself in double precision)."""
        return np.asarray(self.a, dtype=np.float64)

    def _w(self) -> np.ndarray:
        return self._a64() / (self.lam * self.t) if self.t > 0 else np.zeros(self.a.shape)

    def _dual_bound(self) -> float | None:
        """``L^T`` of Proposition 2 (C form), or None when undefined."""
        return None

    def snapshot(self) -> Snapshot:
        w = self._w()
        norm2 = float(w @ w)
        support = np.flatnonzero(self.hits)
        coef = self.lab[support] * self.hits[support] / (self.lam * self.t) if self.t else np.zeros(0)
        bound = self._dual_bound()
        extra = {"steps": float(self.t)} if bound is None else {"steps": float(self.t), "L_T": bound}
        return self.linear_snapshot(w[:-1], bias=self.params.rho * w[-1], norm2=norm2, support=support,
                                    coef=coef, c_form=True,
                                    dual=None if bound is None else self.lam * bound, extra=extra)


@register
class SGDR(_Revisited[RevisitedParams]):
    """SGD-r: the a_t/lambda t SGD step on random examples. Cost: no kernel evaluations."""

    name = "sgd-r"
    Params = RevisitedParams

    def __init__(self, problem: Problem, rng: np.random.Generator, params: RevisitedParams | None = None):
        super().__init__(problem, rng, params)
        self._draws = np.empty(0, dtype=np.int64)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """The examples left in the current chunk of draws, at most ``iterations``."""
        if self._draws.size == 0:
            self._draws = self.rng.integers(0, self.n, size=DRAW_CHUNK)
        count = int(min(self._draws.size, iterations))
        self._present(self._draws[:count], 1)
        self._draws = self._draws[count:]
        self.iteration += count
        return False


PS = TypeVar("PS", bound=SGDSParams)


class _Passes(_Revisited[PS]):
    """SGD-s and SGD-m: whole passes over fresh permutations, and the paper's stopping test."""

    stops_at_iteration_limit = False  # a pass is n iterations, whatever the limit

    def __init__(self, problem: Problem, rng: np.random.Generator, params: PS | None = None):
        super().__init__(problem, rng, params)
        self.passes = 0
        self.epochs_equiv = 0  # T of Proposition 2

    def presentations(self, pass_number: int) -> int:
        """Presentations of each pattern in pass ``pass_number`` (1-based)."""
        return 1

    def _dual_bound(self) -> float | None:
        if self.epochs_equiv == 0:
            return None
        a = self._a64()
        r = float(a @ a)
        return float(self.C * self.acc[1] / self.epochs_equiv - 0.5 * r / (self.lam * self.t) ** 2)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One whole pass (``n`` iterations, whatever ``iterations``), then the stopping test."""
        ell = self.presentations(self.passes + 1)
        self.acc[2] = 0.0
        self._present(self.rng.permutation(self.n), ell)
        self.passes += 1
        self.epochs_equiv += ell
        self.iteration += self.n
        return self.params.target_accuracy > 0 and self._converged()

    def _converged(self) -> bool:
        """The paper's stopping test (approximate J first, the exact one only if promising)."""
        theta = self.lam * self.t
        w2 = self.acc[0] / (2.0 * theta * theta)
        bound = self.C * self.acc[1] / self.epochs_equiv - w2
        eps = self.params.target_accuracy
        if w2 + self.C * self.acc[2] - bound > self.params.f * eps * bound:
            return False
        a = self._a64()
        p = self.lab * linear_scores(self.X, a[:-1], self.params.rho * a[-1])
        loss = float(np.maximum(0.0, theta - p).sum()) / theta
        return bool(w2 + self.C * loss - bound <= eps * bound)


@register
class SGDS(_Passes[SGDSParams]):
    """SGD-s: complete epochs over fresh permutations, stopped by J/L^T - 1 <= target.

    Cost: no kernel evaluations; runs whole passes.
    """

    name = "sgd-s"
    Params = SGDSParams


@register
class SGDM(_Passes[SGDMParams]):
    """SGD-m: SGD-s with multiple updates (Proposition 3) in passes T with 0 < T mod 9 < 5.

    Cost: no kernel evaluations; one inner product per pattern and pass.
    """

    name = "sgd-m"
    Params = SGDMParams

    def presentations(self, pass_number: int) -> int:
        return self.params.multiplicity if 0 < pass_number % 9 < 5 else 1
