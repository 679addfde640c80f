"""SGD-QN: the quasi-Newton stochastic gradient descent of A. Bordes, L. Bottou and
P. Gallinari, "SGD-QN: Careful quasi-Newton stochastic gradient descent" (JMLR 10:1737-1754,
2009), as corrected by A. Bordes, L. Bottou, P. Gallinari, J. Chang and S. A. Smith,
"Erratum: SGDQN is less careful than expected" (JMLR 11:2229-2240, 2010). The SGD paper cites
the first as [2] and runs SGD-QN, in single precision, in its Table 8.

It minimizes the hinge-loss SVM without a bias, ``lambda/2 ||w||^2 + (1/n) sum_i hinge(y_i
<w, x_i>)``, by SGD with a diagonal rescaling matrix ``B`` and the published algorithm's two
"independently scheduled components": the loss step, at every example, is sparse
(``O(nnz(x_i))``), and the regularization step and the re-estimation of ``B`` are made every
``skip`` examples only, the former ``skip`` times as large (O(d) each, so O(nnz/16) per
example at the default ``skip``).

**Which version.** In the algorithm box of the 2009 paper, ``B`` (started at
``1/lambda``, with the rate ``1/(t + t0)`` apart) is updated on the example that follows a
regularization step, from the ratio ``[w' - w]_i / [g(w') - g(w)]_i`` of the change made by
that example's own rescaled step (``w' - w = eta y B x``) to the change of that example's
gradient, averaged in with weight ``2/r``. For the hinge loss that ratio reduces to
``1/(lambda - diff/(eta B_ii))`` (``diff`` the change of the loss derivative ``dl``, below)
whatever the data's curvature along ``i``: the update follows ``B`` itself, less carefully
than intended (the erratum's title). The erratum corrects the algorithm, and the corrected
program is ``svmsgdqn`` of
libsgdqn 1.1, which is what Bordes' page (the address of the SGD paper's footnote 14)
distributes: its usage line, ``trainfile [testfile] [logfile]``, is the one that page
documents. The SGD paper (2013) therefore most plausibly ran the corrected algorithm, and
this module implements it as libsgdqn 1.1 lays it out, with one difference, when ``B`` is
updated (below; the erratum's text was not at hand; what follows describes the algorithm,
written here in our own code):

* ``B`` (``Bc``) holds the learning rate and the rescaling together: it starts at
  ``1/(lambda t0)`` and the loss step is ``w <- w + y_i B x_i`` on a margin violation
  (``y_i <w, x_i> < 1``, with ``w`` before this example's regularization step);
* every ``skip`` examples, ``w_prev <- w`` and the regularization step
  ``w <- w - skip lambda B w``;
* on the next example ``x``, with ``diff = dl(y <w, x>) - dl(y <w_prev, x>)`` (``dl`` = 1 on a
  margin violation, else 0; one more inner product): the curvature of each coordinate ``c_j =
  lambda`` (the regularizer's), except on the coordinates of ``x`` when ``diff != 0``: ``c_j =
  lambda + y diff x_j / (w_prev_j - w_j)`` clipped to ``[lambda/10, 100 lambda]`` (``101
  lambda`` where the weight did not move); then ``B_jj <- 1 / (1/B_jj + dt c_j)`` with ``dt``
  the examples since the last update of ``B``: ``1/B`` accumulates ``lambda t0`` plus the
  curvature along the examples seen (``1/(lambda (t + t0))`` where only the regularizer curves);
* each epoch starts with ``count = skip`` and no pending update of ``B``;
* ``skip`` (0 = libsgdqn's default) is ``floor(16 m d / nnz)`` for ``m`` examples with
  ``nnz`` stored values (libsgdqn's ``calibrate`` writes ``8 n d / nnz`` but counts each
  example twice);
* ``t0`` (0 = libsgdqn's default, its ``determine_t0``): for ``t0`` = 1, 10, ..., 1e10, a
  fresh SGD-QN (its ``skip`` calibrated on the sample) runs ``t0_epochs`` epochs on the
  first ``floor((n - 1)/10) + 1`` examples and the ``t0`` of the lowest objective on that
  sample wins (``t0_epochs`` is libsgdqn's ``-epochs``, whose default is 5). libsgdqn starts
  its clock after this search, so it is done here when the solver is made, outside the
  training time (as the permutation is; SvmSgd's search is timed, as sgd 2.x times it); its
  inner products are in ``calibration_products``, about ``0.55 t0_epochs`` epochs' worth.

Set up for the SGD paper's problem: the hinge loss (libsgdqn's ``LOSS=HINGELOSS``; its
default is the squared hinge, under which the updates of ``B`` are frequent), no bias, the
examples in the order of SGD-m's first permutation, ``precision`` single for Table 8 (``w``,
``B`` and the data in float32). There is no stopping rule: it runs to the budget.

**What differs from libsgdqn 1.1, and why.** libsgdqn 1.1 makes the update of ``B`` only when
``diff != 0`` (``b_update=on_change`` here, kept to compare with it). Under its default
squared hinge loss that is nearly every time; under the hinge loss the derivative at ``w`` and
``w_prev`` differs only when the example's margin crosses 1 between them, so the updates are
rare (on Adult at ``C = 1``, 1 to 15 in whole runs of 2 to 138 epochs): between them ``B``, and
with it the rate, stays at ``1/(lambda t0)``, and the run settles at a distance from the
optimum set by that rate (8-10% above it on Adult's 2000-example sample at ``C = 1`` after 200
epochs; the SGD paper's Table 8 runs split on whether the ``t0`` search picked a small enough
rate). Bottou's own later rewrite, ``svmsgdqn`` of sgd (2011; commit 005cb5b of the sgd
history mirrored as yuxiang-wu/sgdsvm), updates ``B`` after every regularization step (``b <-
1/(1/b + skip ratio)``, the ratio being the regularizer's ``lambda`` where the loss derivative
did not change), as the published algorithm schedules its update of ``B``: ``1/B`` then grows
by ``lambda`` per example, the rate decays as ``1/(lambda (t + t0))`` and the run converges
(within 1% of the optimum on that problem after 154 epochs, on w8a's after 38). That is the
default (``b_update=every``); it costs nothing more (the O(d) update rides on the
regularization step's). Its price: under the hinge loss the secant carries curvature only at
crossings, which ``every`` weighs by ``skip`` examples where libsgdqn's late update weighs them
by all the examples since its last one, so ``every`` is close to SGD at the rate ``1/(lambda (t +
t0))`` and loses the rescaling that luck gives libsgdqn: on full Adult at ``C = 1`` with the
``t0`` (1e7) both searches choose, libsgdqn's program reaches 1% after 13 epochs and ``every``
after 151 (the SGD paper: 39). ``b_update=on_change`` reproduces the program (the SGD paper's
Table 8 ran it) to 1e-8 relative, epoch by epoch. Kept from libsgdqn 1.1: its ``t0`` search,
``skip``, the clip, ``dt`` (not sgd 2011's ``skip``; they differ only by the example after the
step), no bias, and its ``101 lambda`` where a weight did not move (libsgdqn writes it at the
index of the example's pair, ``d[i]``, a slip in its code; here at the coordinate). The
comparison with libsgdqn 1.1's ``svmsgdqn``, built from its source, is
``scripts/authors_sgd.py`` (``results/paper/analyses/authors-sgd.md``).

Columns: ``objective`` is ``J`` (C form, ``C = 1/(lambda n)``), ``primal_objective`` is
``lambda J``; ``t0``, ``skip``, ``b_updates`` (updates of ``B`` made), ``b_products`` (the
extra inner products with ``w_prev``) and ``calibration_products``. SGD-QN has no dual
bound.

Cost model: no kernel evaluations (``counts_kernel_evals = False``). One iteration is one
example presented: one sparse inner product ``<w, x_i>`` and, on a margin violation, one
sparse addition; the example after each regularization step costs one more inner product
(``b_products``), and every ``skip`` examples there are O(d) operations (the copy, the
regularization step, and the update of ``B`` when it is made). ``advance`` stops exactly at
``max_iterations``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from sbpbench.params import non_negative, param, positive
from sbpbench.problem import Problem
from sbpbench.solvers.base import register
from sbpbench.solvers.fixed_order import FixedOrderSGD
from sbpbench.solvers.linear import PrecisionParams, sparse_dot

#: Clip of the curvature estimate, in units of lambda (libsgdqn 1.1's 0.1 and 100).
CMIN, CMAX = 0.1, 100.0
#: The t0 that libsgdqn 1.1 tries: 1, 10, ..., 1e10.
T0_CANDIDATES = tuple(10.0 ** k for k in range(11))
#: Positions in the state array: t, t at the last update of B, count, pending update of B,
#: updates of B, inner products with w_prev.
T, LAST, COUNT, PENDING, UPDATES, PRODUCTS = range(6)


@numba.njit(cache=True, error_model="numpy")
def _update_b(indptr, indices, values, yi, i, w, w_prev, bc, curv, lam, diff, dt):
    """``1/B <- 1/B + dt c``: ``c_j = lambda`` (the regularizer's curvature), and on the coordinates of
    example ``i``, when its loss derivative changed by ``diff``, the secant ``lambda + y diff x_j /
    (w_prev_j - w_j)`` clipped to ``[CMIN, CMAX] lambda`` (``(1 + CMAX) lambda`` where ``w_j`` did not move)."""
    for j in range(w.shape[0]):
        curv[j] = lam
    if diff != 0.0:
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            moved = float(w_prev[j]) - float(w[j])
            if moved != 0.0:
                curv[j] = min(max(lam + yi * diff * values[k] / moved, CMIN * lam), CMAX * lam)
            elif values[k] != 0.0:
                curv[j] = lam + CMAX * lam
    for j in range(w.shape[0]):
        bc[j] = 1.0 / (1.0 / bc[j] + dt * curv[j])


@numba.njit(cache=True, error_model="numpy")
def _present(indptr, indices, values, y, rows, w, w_prev, bc, curv, state, lam, skip, epoch_start, on_change):
    """SGD-QN on the examples ``rows`` in order; ``state`` is updated in place. ``B`` is updated after
    every regularization step, or (``on_change``, libsgdqn 1.1) only where the loss derivative changed."""
    t = state[T]
    last = state[LAST]
    count = state[COUNT]
    pending = state[PENDING] != 0.0
    if epoch_start:
        count = skip
        pending = False
    d = w.shape[0]
    for r in range(rows.shape[0]):
        i = rows[r]
        z = y[i] * sparse_dot(indptr, indices, values, i, w)
        dl = 1.0 if z < 1.0 else 0.0
        t += 1.0
        if pending:
            state[PRODUCTS] += 1.0
            z_prev = y[i] * sparse_dot(indptr, indices, values, i, w_prev)
            diff = dl - (1.0 if z_prev < 1.0 else 0.0)
            if diff != 0.0 or not on_change:
                _update_b(indptr, indices, values, y[i], i, w, w_prev, bc, curv, lam, diff, t - last)
                last = t
                state[UPDATES] += 1.0
            pending = False
        count -= 1.0
        if count <= 0.0:
            for j in range(d):
                w_prev[j] = w[j]
            pending = True
            for j in range(d):
                w[j] = w[j] - skip * lam * bc[j] * w[j]
            count = skip
        if dl != 0.0:
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                w[j] += y[i] * bc[j] * values[k]
    state[T] = t
    state[LAST] = last
    state[COUNT] = count
    state[PENDING] = 1.0 if pending else 0.0


@dataclass(frozen=True)
class SGDQNParams(PrecisionParams):
    """Parameters of :class:`SGDQN`."""

    skip: int = param(0, "examples between regularization steps and updates of B; 0 = libsgdqn's "
                      "floor(16 m d / nnz)", check=non_negative)
    t0: float = param(0.0, "B starts at 1/(lambda t0); 0 = chosen among 1, 10, ..., 1e10 on a tenth of "
                      "the data, as libsgdqn does", check=non_negative)
    t0_epochs: int = param(5, "epochs each t0 candidate runs on the tenth (libsgdqn's -epochs)", check=positive)
    b_update: str = param("every", "when B is updated: after every regularization step (the erratum's algorithm), "
                          "or on_change: only where the loss derivative changed (libsgdqn 1.1)",
                          choices=("every", "on_change"))


class _Run:
    """The state of one SGD-QN run (the solver's, or a t0 candidate's)."""

    def __init__(self, solver: SGDQN, t0: float, skip: int):
        dtype = solver.params.dtype
        self.solver = solver
        self.w = np.zeros(solver.d, dtype=dtype)
        self.w_prev = np.zeros(solver.d, dtype=dtype)
        self.bc = np.full(solver.d, 1.0 / (solver.lam * t0), dtype=dtype)
        self.curv = np.empty(solver.d, dtype=dtype)
        self.state = np.zeros(6)
        self.skip = skip

    def present(self, rows: np.ndarray, epoch_start: bool) -> None:
        s = self.solver
        _present(s.indptr, s.indices, s.values, s.y, rows, self.w, self.w_prev, self.bc, self.curv, self.state,
                 s.lam, float(self.skip), epoch_start, s.params.b_update == "on_change")


@register
class SGDQN(FixedOrderSGD[SGDQNParams]):
    """SGD-QN (Bordes, Bottou and Gallinari 2009) as corrected by its erratum (2010), as libsgdqn 1.1 runs it.

    Cost: no kernel evaluations; one inner product per example, one more every skip examples.
    """

    name = "sgdqn"
    Params = SGDQNParams

    def __init__(self, problem: Problem, rng: np.random.Generator, params: SGDQNParams | None = None):
        super().__init__(problem, rng, params)
        #: The (t0, cost) pairs the t0 search evaluated, in order.
        self.trials: list[tuple[float, float]] = []
        self.t0 = self.params.t0 or self.search_t0()
        self.qn = _Run(self, self.t0, self.calibrated_skip(self.order))

    def calibrated_skip(self, rows: np.ndarray) -> int:
        """``skip`` for the examples ``rows``: the parameter, else libsgdqn's ``floor(16 m d / nnz)``."""
        if self.params.skip:
            return self.params.skip
        nnz = int((self.indptr[rows + 1] - self.indptr[rows]).sum())
        return max(1, math.floor(16 * rows.size * self.d / max(nnz, 1)))

    def search_t0(self) -> float:
        """The ``t0`` of the lowest objective on the first tenth after ``t0_epochs`` epochs there."""
        sample = self.order[:(self.n - 1) // 10 + 1]
        skip = self.calibrated_skip(sample)
        best, lowest = T0_CANDIDATES[0], math.inf
        for t0 in T0_CANDIDATES:
            trial = _Run(self, t0, skip)
            for _ in range(self.params.t0_epochs):
                trial.present(sample, True)
            self.calibration_products += self.params.t0_epochs * sample.size + int(trial.state[PRODUCTS])
            cost = self.sample_cost(sample, trial.w)
            self.trials.append((t0, cost))
            if cost < lowest:  # a NaN cost never wins
                best, lowest = t0, cost
        return best

    def train(self, rows: np.ndarray, epoch_start: bool) -> None:
        self.qn.present(rows, epoch_start)

    def weights(self) -> np.ndarray:
        return self.qn.w.astype(np.float64)

    def extra(self) -> dict[str, float]:
        state = self.qn.state
        return {"t0": self.t0, "skip": float(self.qn.skip),
                "b_updates": float(state[UPDATES]), "b_products": float(state[PRODUCTS])}
