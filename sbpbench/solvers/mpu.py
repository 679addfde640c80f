"""MPU, the Margin Perceptron with Unlearning of Panagiotakopoulos and Tsampouka ("The Margin
Perceptron with Unlearning", ICML 2010, pp. 855-862), for the optimal 1-norm soft margin
(L1-SVM) problem in the SGD paper's C form ``J(w) = 1/2 ||w||^2 + C sum_k max(0, 1 - w . y_k)``
with ``C = 1/(lambda n)`` and no bias.

Sources, and what is ours
-------------------------
Only the abstract and the opening paragraph of the MPU paper's introduction could be read
(the ICML 2010 abstracts text); its body (algorithm box, update and unlearning conditions,
theorems, the definitions of its relative accuracies) could not be found, so no algorithm,
equation or theorem number of that paper is cited here. What the sources state, and this
module follows:

* the MPU abstract: the classical Perceptron algorithm with margin plus "a mechanism of
  unlearning which in the course of the regular update allows for a reduction of possible
  contributions from 'very well classified' patterns to the weight vector"; an incremental
  algorithm that "provably converges in a finite number of updates to any desirable chosen
  before running approximation of [...] the optimal 1-norm soft margin solution";
* the SGD paper (``papers/sgd-primal-l1svm-revisited.md``), footnote 1: MPU keeps track of
  the number of updates caused by each pattern in parallel with the weight vector, which is
  updated by a perceptron-like rule; it uses dual variables and has a finite time bound for
  a predefined relative accuracy;
* the SGD paper, Section 3: MPU is run with ``epsilon = delta = delta_stop``, ``delta`` the
  before-run relative accuracy and ``delta_stop`` the stopping threshold of the after-run
  relative accuracy (``epsilon`` of Tables 3, 5, 7, 8); Table 8 runs it in single precision,
  and its runtime includes random permutations of the data (the remark on SvmSgd and SGD-QN).

The rules below are our reconstruction from these statements; their guarantees
(Propositions A and B) are proven here, not quoted.

The algorithm as implemented
----------------------------
Patterns ``y_k = l_k x_k``, ``q_k = ||y_k||^2``, ``Q = sum_k q_k``, ``R^2 = max_k q_k``. The
dual of ``J`` is ``D(alpha) = sum_k alpha_k - 1/2 ||sum_k alpha_k y_k||^2`` with
``0 <= alpha_k <= C``; every such ``D(alpha)`` is a lower bound on ``J_opt``. The state is the
update count ``I_k`` of every pattern (updates it caused, less its unlearnings, in
``{0, ..., N}``), the weight vector ``a = sum_k I_k y_k`` and the margin ``beta = N / C``, so
that ``alpha_k = I_k / beta`` and ``w = a / beta``. A pattern presented with ``p = a . y_k``
(one inner product)

* **learns** (``a <- a + y_k``, ``I_k <- I_k + 1``) while ``I_k < N`` and ``p + q_k <= beta``:
  the perceptron update with margin, made when the pattern's margin after it does not exceed
  ``beta``;
* **unlearns** (``a <- a - y_k``, ``I_k <- I_k - 1``) while ``I_k > 0`` and
  ``p - q_k >= beta``: the pattern is "very well classified", at margin ``beta`` or more even
  with one of its contributions removed.

The repetitions are made at once: ``l = min(N - I_k, floor((beta - p) / q_k))`` learnings
(``N - I_k`` when ``q_k = 0``), or ``min(I_k, floor((p - beta) / q_k))`` unlearnings, with one
sparse addition ``a <- a +- l y_k`` (as SGD-m's multiple updates, SGD paper Proposition 3).

**Proposition A** (finite number of updates). A learning update raises ``D`` by
``(beta - p - q_k/2) / beta^2 >= q_k / (2 beta^2)``, an unlearning by
``(p - beta - q_k/2) / beta^2 >= q_k / (2 beta^2)`` (a pattern with ``q_k = 0`` learns only, by
``1/beta`` each). ``D`` never decreases and never exceeds ``J_opt``, and ``beta`` (never
lowered, at least ``R^2``) only doubles; so at any time the updates so far number at most
``2 beta^2 D / q_min``, ``q_min`` the least positive ``q_k``.

**Proposition B** (accuracy after an epoch without updates). Then every pattern has
``w . y_k >= 1 - theta_k`` unless ``alpha_k = C`` and ``w . y_k <= 1 + theta_k`` unless
``alpha_k = 0``, with ``theta_k = q_k / beta``. Since ``J(w) - D(alpha) = sum_k [C xi_k -
alpha_k (1 - w . y_k)]`` (``xi_k`` the hinge loss), each term is at most ``C theta_k`` and
``J - D <= C Q / beta``.

**The before-run relative accuracy** ``delta`` sets ``beta``. ``N`` starts at
``ceil(C R^2 / min(delta, 1))`` (``beta = R^2 / delta``, at least ``R^2`` so that from ``a = 0``
every pattern can learn: the longest pattern's dead zone is ``delta`` of the margin) and is doubled
after every epoch that ends with ``C Q / (beta D) > delta`` (``I`` and ``a`` doubled with it,
exactly, so that ``alpha`` and ``D`` stay as they are). ``D`` is positive after the first
epoch and never decreases, so the doublings are finitely many, and the run ends after an
epoch without updates that ends with ``C Q / (beta D) <= delta``: by Proposition B with
``J / D - 1 <= delta``, hence ``(J - J_opt) / J_opt <= delta``, after finitely many updates
(Proposition A). **The after-run relative accuracy** is ``J / D - 1``, tested after every
epoch as SGD-s tests its own (SGD paper, footnote 5): an approximate ``J`` from the margins
computed during the epoch (each pattern's before its own update) and ``||a||^2`` at its
end, and, when that gives at most ``f delta_stop``, the exact ``J`` (one more pass of
inner products); the run ends once it is at most ``delta_stop`` (with ``check_after_run``).
``epsilon = delta = delta_stop``, as the SGD paper runs MPU; the run's status is then
``done``. Each epoch presents the patterns in a fresh random order.

Choices the available text leaves open, all ours: the thresholds ``beta +- q_k`` (the
smallest symmetric dead zone in which every update raises ``D`` by a fixed amount, so that
Proposition A bounds the updates), the repetitions made at once, the map from ``delta`` to
``beta`` (the start at ``R^2 / delta`` and the doublings against the bound of Proposition B
with the current dual value; the paper's own map is unknown), the after-run test borrowed
from SGD-s (with its ``f``), and the random order in every epoch.

Precision (``precision``, Table 8's "MPU implemented in single precision"): ``single`` keeps
``a`` and a copy of the data in float32 and sums the inner products in float32 (each
addition to ``a`` rounded to float32); the counts ``I_k`` are integers, and ``beta``, ``D``,
``||a||^2`` (recomputed from ``a`` after every epoch) and every objective are in double.

Columns: ``objective`` is ``J`` (C form), ``primal_objective`` ``lambda J`` (Problem 2.2),
``dual_objective = lambda D``, ``duality_gap``, ``relative_accuracy = J / D - 1`` (the
after-run relative accuracy); ``updates`` (learnings and unlearnings, each repetition
counted), ``unlearnings``, ``beta`` and ``exact_checks`` (exact passes of the stopping test).

Cost model: no kernel evaluations (``counts_kernel_evals = False``). An iteration is one
pattern presented: one sparse inner product ``a . y_k``, plus one sparse addition when it
learns or unlearns (whatever ``l``); an epoch is ``n`` iterations. MPU runs whole epochs only:
``advance`` may overshoot ``max_iterations`` up to the end of the epoch. A doubling of
``beta`` scales ``a`` and ``I`` (``O(d + n)``); an exact ``J`` of the stopping test is one more
pass of ``n`` inner products inside the training time, counted in ``exact_checks`` and not in
iterations (as SGD-s's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from sbpbench.params import param, positive
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, register
from sbpbench.solvers.linear import LinearSolver, PrecisionParams, linear_scores, sparse_axpy, sparse_dot_from


@numba.njit(cache=True)
def repetitions(p, q, beta, count, levels):
    """The updates of one presentation: ``l > 0`` learnings, ``-l`` unlearnings, or 0.

    The learning rule (``count < levels`` and ``p + q <= beta``) or the unlearning rule
    (``count > 0`` and ``p - q >= beta``) applied until it no longer holds, each update moving
    ``p`` by ``q``.

    Parameters
    ----------
    p : float
        ``a . y_k`` before the presentation.
    q : float
        ``||y_k||^2``.
    beta : float
        The margin.
    count : int
        ``I_k``.
    levels : int
        ``N``, the largest count.

    Returns
    -------
    int
    """
    if count < levels and p + q <= beta:
        room, gap, sign = levels - count, beta - p, 1
    elif count > 0 and p - q >= beta:
        room, gap, sign = count, p - beta, -1
    else:
        return 0
    if gap >= room * q:  # also every q = 0
        return sign * room
    return sign * max(1, int(gap / q))


@numba.njit(cache=True)
def _epoch(indptr, indices, data, lab, q, a, counts, order, beta, levels, zero):
    """Present the patterns ``order`` once (see the module docstring).

    Returns ``(learned, unlearned, loss)``: the learnings, the unlearnings and
    ``sum_k max(0, beta - a . y_k)`` over the margins before each pattern's own update.
    """
    learned = unlearned = 0
    loss = 0.0
    for idx in range(order.shape[0]):
        k = order[idx]
        p = lab[k] * sparse_dot_from(zero, indptr, indices, data, k, a)
        ell = repetitions(p, q[k], beta, counts[k], levels)
        if p < beta:
            loss += beta - p
        if ell != 0:
            sparse_axpy(indptr, indices, data, k, ell * lab[k], a)
            counts[k] += ell
            if ell > 0:
                learned += ell
            else:
                unlearned -= ell
    return learned, unlearned, loss


@dataclass(frozen=True)
class MPUParams(PrecisionParams):
    """Parameters of :class:`MPU`."""

    epsilon: float = param(0.01, "delta = delta_stop: before-run relative accuracy and stopping threshold "
                           "of the after-run J/D - 1", check=positive)
    check_after_run: bool = param(True, "stop once J/D - 1 <= epsilon (off: only after an epoch without updates)")
    f: float = param(1.2, "comparison coefficient: exact J once the approximate J/D - 1 is <= f epsilon",
                     check=positive)


@register
class MPU(LinearSolver[MPUParams]):
    """MPU: the perceptron with margin and unlearning, stopped at a relative accuracy epsilon.

    Cost: no kernel evaluations; one inner product per pattern and epoch.
    """

    name = "mpu"
    Params = MPUParams
    stops_at_iteration_limit = False  # an epoch is n iterations, whatever the limit

    def __init__(self, problem: Problem, rng: np.random.Generator, params: MPUParams | None = None):
        super().__init__(problem, rng, params)
        dtype = self.params.dtype
        self.values = self.data_in(dtype)
        self.a = np.zeros(self.d, dtype=dtype)
        self.counts = np.zeros(self.n, dtype=np.int64)
        self.Q = float(self.sq.sum())
        # beta = R^2 / epsilon to start (at least R^2): the longest pattern's dead zone is epsilon of it
        self.levels = max(1, math.ceil(self.C * float(self.sq.max(initial=0.0)) / min(self.params.epsilon, 1.0)))
        self.r = 0.0  # ||a||^2
        self.total = 0  # sum_k I_k
        self.updates = 0
        self.unlearnings = 0
        self.exact_checks = 0

    @property
    def beta(self) -> float:
        """The margin ``N / C``."""
        return self.levels / self.C

    def _a64(self) -> np.ndarray:
        """``a`` in double (the array itself in double precision)."""
        return np.asarray(self.a, dtype=np.float64)

    def dual(self) -> float:
        """``D(alpha)`` in the C form, from ``sum_k I_k`` and ``||a||^2``."""
        beta = self.beta
        return self.total / beta - 0.5 * self.r / (beta * beta)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One epoch (``n`` iterations, whatever ``iterations``), then the stopping rules and ``beta``."""
        beta = self.beta
        learned, unlearned, loss = _epoch(self.indptr, self.indices, self.values, self.y, self.sq, self.a,
                                          self.counts, self.rng.permutation(self.n), beta, self.levels,
                                          self.params.zero)
        self.iteration += self.n
        self.total += learned - unlearned
        self.updates += learned + unlearned
        self.unlearnings += unlearned
        a = self._a64()
        self.r = float(a @ a)
        dual = self.dual()
        eps = self.params.epsilon
        if self.params.check_after_run:
            approx = 0.5 * self.r / (beta * beta) + self.C * loss / beta
            if approx - dual <= self.params.f * eps * dual:
                self.exact_checks += 1
                if self.primal() - dual <= eps * dual:
                    return True
        if self.C * self.Q > eps * beta * dual:
            self._refine()
            return False
        return learned + unlearned == 0  # Proposition B: J/D - 1 <= C Q / (beta D) <= epsilon

    def primal(self) -> float:
        """The exact ``J(a / beta)`` (one pass of inner products)."""
        w = self._a64() / self.beta
        margins = self.y * linear_scores(self.X, w)
        return 0.5 * float(w @ w) + self.C * float(np.maximum(0.0, 1.0 - margins).sum())

    def _refine(self) -> None:
        """Double ``beta``: ``N``, ``I`` and ``a`` (``alpha`` and ``D`` stay as they are)."""
        self.levels *= 2
        self.counts *= 2
        self.a *= 2
        self.total *= 2
        self.r *= 4.0

    def snapshot(self) -> Snapshot:
        beta = self.beta
        w = self._a64() / beta
        support = np.flatnonzero(self.counts)
        coef = self.y[support] * self.counts[support] / beta
        return self.linear_snapshot(w, support=support, coef=coef, dual=self.lam * self.dual(), c_form=True,
                                    extra={"updates": float(self.updates), "unlearnings": float(self.unlearnings),
                                           "beta": beta, "exact_checks": float(self.exact_checks)})
