"""SVMperf: the 1-slack cutting-plane algorithm of Joachims, "Training linear SVMs in linear
time", KDD 2006, as SVMperf 2.50 runs it for the linear L1-SVM with the error-rate loss.

The paper's structural formulation (OP2) of the classification SVM has one slack ``xi`` and one
constraint for every ``c in {0,1}^n``:

``min 1/2 ||w||^2 + C xi``  s.t.  ``(1/n) w . sum_i c_i y_i x_i >= (1/n) sum_i c_i - xi``,

and its solution is that of the usual SVM (OP1, with penalty ``C/n`` per example) with
``xi = (1/n) sum_i xi_i`` (the paper's Theorem 1). Its cutting-plane algorithm for OP2
(Section 4) keeps a working set of such constraints, solves OP2 on it, finds the most violated
constraint at the solution, ``c_i = 1`` exactly when ``y_i w . x_i < 1``, and stops when that
constraint is violated by at most ``epsilon`` beyond the working set's slack; the paper bounds
its iterations by ``max{2/eps, 8 C R^2/eps^2}`` (``R = max ||x_i||``, ``C`` and ``eps`` in
OP2's units; Section 4's theorem on the number of iterations).

SVMperf's units (its ``svm_struct_api.c`` for the error rate): the loss is in percent, so the
constraint reads ``(100/n) w . sum c_i y_i x_i >= (100/n) sum c_i - xi_perf`` and the objective
is ``1/2 ||w||^2 + C_perf xi_perf``; its ``-c`` is ``C_perf = C n / 100`` for the penalty ``C``
of the C form ``J(w) = 1/2 ||w||^2 + C sum_i max(0, 1 - y_i w . x_i)`` (SVMperf's help:
``c_light = c_perf*100/n``), and ``J = 1/2 ||w||^2 + C_perf xi_perf`` at ``xi_perf``'s best value.
Its ``-e epsilon`` is in the same percent units: after the pass at ``w`` we compute

``ceps = max(0, (100/n) [ sum_{i: y_i w.x_i < 1} (1 - y_i w.x_i) - slack ])``,

``slack = max(0, max over the working set of b_k - a_k . w)`` (C form, so ``(100/n) slack`` is
SVMperf's), and stop when ``ceps <= epsilon`` (SVMperf's ``CEps``); otherwise the cut is added
(:mod:`sbpbench.solvers.cutting_planes` holds the working set in the C form: ``a = sum_{c_i=1}
y_i x_i``, ``b = sum c_i``) and the reduced problem is solved again. As SVMperf does, a cut
whose dual variable has been zero after 50 consecutive solutions is removed from the working
set. At termination, ``J(w) = F(w) + C (n/100) ceps <= J_opt + C_perf epsilon``, where ``F`` is
the reduced problem's value at its solution ``w``: the returned ``w`` is within
``C_perf epsilon = C n epsilon / 100`` of the optimum.

Differences from SVMperf 2.50: by default the reduced QP is solved in its dual to a relative gap
of 1e-10, where SVMperf's SVM-light optimizer stops at a KKT precision of half the smallest
``ceps`` so far (its ``epsilon_crit``): the active cuts' slacks within that of the largest, in
percent. ``qp_precision`` (0: exact) sets that precision as a fraction of the smallest ``ceps``
(SVMperf's: 0.5), solved then by pairwise steps alone from the last solution, as SVM-light's
decomposition does, and ``ceps`` then takes SVMperf's slack estimate (that of the first cut
whose dual variable exceeds their mean, :meth:`CutModel.active_slack`; the active cuts' slacks
differ by up to that precision). The cutting-plane iterates, and so where the rule stops,
depend on it (``scripts/sgd_causes.py`` runs both beside ``svm_perf_learn``), and the
guarantee below holds only up to the QP's precision;
there is no bias feature (SVMperf's ``--b 0``, as the SGD paper ran every solver), and the
passes are full passes: this is SVMperf's ``-w 3`` (the 1-slack dual algorithm of the paper).
Its default ``-w 9`` (so in V3.00's sources, the ones we could read) adds a shrinking heuristic
that re-examines only the examples whose margin indicator is unsettled between full rounds
(``--s 1``), with the same stopping rule on a full round; it is not implemented here.

Columns: ``objective`` is ``J`` (C form), ``primal_objective`` is ``lambda J``,
``dual_objective = lambda D`` with ``D`` the reduced dual's value (a lower bound on
``J_opt``; 0 before the first cut), ``duality_gap``, ``relative_accuracy``; ``cutting_planes``
(passes over the data so far) and ``cuts`` (the working set's size).

Cost model: no kernel evaluations (``counts_kernel_evals = False``). One step is one
cutting-plane iteration: ``n`` iterations (the ``n`` sparse inner products ``w . x_i``), plus a
sparse addition per example in the new cut and ``O(K d)`` dense work on the working set of
``K`` cuts (the new cut's Gram column, ``w``, the slack), not counted. ``advance`` runs whole
iterations: it may overshoot ``max_iterations`` by up to ``n - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sbpbench.params import non_negative, param, positive
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, SolverParams, register
from sbpbench.solvers.cutting_planes import CutModel, margins, violated_cut
from sbpbench.solvers.linear import LinearSolver

#: SVMperf removes a cut whose dual variable has been zero in this many consecutive solutions.
INACTIVE_SOLVES = 50
#: SVMperf's ``qp_precision``: SVM-light's ``epsilon_crit`` is half the smallest CEps so far.
SVMPERF_QP_PRECISION = 0.5


@dataclass(frozen=True)
class SVMPerfParams(SolverParams):
    """Parameters of :class:`SVMPerf`."""

    epsilon: float = param(0.1, "SVMperf's -e: stop when the most violated constraint exceeds the working set's "
                           "slack by at most epsilon (loss in percent: within C n epsilon/100 of J_opt)",
                           check=positive)
    qp_precision: float = param(0.0, "the reduced QP's KKT precision as a fraction of the smallest CEps so far "
                                "(SVMperf's is 0.5: SVM-light's epsilon_crit = eps/2); 0 solves it exactly "
                                "(relative gap 1e-10)", check=non_negative)


@register
class SVMPerf(LinearSolver[SVMPerfParams]):
    """SVMperf's 1-slack cutting-plane algorithm (Joachims 2006). Cost: n iterations per cutting plane.

    Attributes
    ----------
    model : CutModel
        The working set and the reduced dual.
    w : numpy.ndarray
        The reduced problem's solution (0 before the first cut).
    passes : int
        Cutting-plane iterations (passes over the data) so far.
    solves : int
        Solutions of the reduced problem so far.
    best_ceps : float
        The smallest CEps so far (100 before any pass: SVMperf's starting precision).
    last_active : numpy.ndarray
        For each cut of the working set, the value of ``solves`` when its dual variable was last
        nonzero (when it was added, if never).
    """

    name = "svmperf"
    deterministic = True
    Params = SVMPerfParams
    stops_at_iteration_limit = False  # a cutting-plane iteration is n iterations

    def __init__(self, problem: Problem, rng: np.random.Generator, params: SVMPerfParams | None = None):
        super().__init__(problem, rng, params)
        self.model = CutModel(self.d, self.C)
        self.w = np.zeros(self.d)
        self._out = np.empty(self.n)
        self._cut = np.empty(self.d)
        self.last_active = np.empty(0, dtype=np.int64)
        self.solves = 0
        self.passes = 0
        self.best_ceps = 100.0

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One cutting-plane iteration (``n`` iterations whatever ``iterations``); True when ``ceps <= epsilon``."""
        margins(self.indptr, self.indices, self.data, self.y, self.w, self._out)
        count, loss = violated_cut(self.indptr, self.indices, self.data, self.y, self._out, True, self._cut)
        self.passes += 1
        self.iteration += self.n
        exact = self.params.qp_precision == 0
        slack = self.model.slack(self.w) if exact else self.model.active_slack(self.w)
        ceps = max(0.0, loss - slack) * 100.0 / self.n
        if ceps <= self.params.epsilon:
            return True
        self.model.add(self._cut, float(count))
        self.last_active = np.append(self.last_active, self.solves)
        self.best_ceps = min(self.best_ceps, ceps)
        self.model.solve(self.params.qp_precision * self.best_ceps * self.n / 100.0)
        self.w = self.model.weights()
        self.solves += 1
        self.last_active[self.model.alpha != 0] = self.solves
        keep = self.solves - self.last_active < INACTIVE_SOLVES
        if not keep.all():
            self.model.keep(keep)
            self.last_active = self.last_active[keep]
        return False

    def snapshot(self) -> Snapshot:
        return self.linear_snapshot(self.w, dual=self.lam * self.model.value, c_form=True,
                                    extra={"cutting_planes": float(self.passes), "cuts": float(self.model.K)})
