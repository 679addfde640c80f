"""LIBSVM through scikit-learn's ``SVC``, measured in the same harness as a reference.

``SVC(kernel="rbf", gamma=1/(2 sigma2), C=1/(lambda n))`` (or ``kernel="linear"``) solves
LIBSVM's C-SVC, which always has an unregularized bias, so this reference solves the biased
Problem 2.2 only: an experiment must set ``problem.bias: true`` to use it (config validation
rejects it otherwise, rather than comparing it against a different problem).

To draw a curve, LIBSVM is run at a schedule of stopping tolerances
``tol = 1, 10^-0.5, 10^-1, ...`` down to ``final_tol`` (the last one exactly), each fit from
scratch (LIBSVM cannot resume). One ``advance`` call is one fit; ``iteration`` is the number
of fits done, and ``advance`` returns True after the last. The runner times ``advance``, so
``train_time_s`` at the ``k``-th point is the total time of the first ``k`` fits; the time of
the ``k``-th fit alone is the extra column ``fit_time_s`` (with tolerances a factor 10^0.5 apart
the last fit usually dominates). The extra column ``tol`` gives the tolerance.

LIBSVM's kernel evaluations are not observable, so ``counts_kernel_evals`` is False and the
runner writes them as unknown (NaN). The row cache is the kernel spec's ``cache_mb`` (LIBSVM's
``-m``); ``shrinking`` is LIBSVM's ``-h`` (default on, as in LIBSVM).

The snapshot's predictor is the fitted model's ``support_``, ``dual_coef_`` (``alpha_i y_i``)
and ``intercept_`` (``b = -rho``), measured through our kernel like every solver's. Its primal
objective, dual objective and duality gap need the responses on the training set; they are
computed with :meth:`~sbpbench.kernels.Kernel.decision`, so they count as measurement
(``eval_kernel_evals``), never as training.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sbpbench.params import param, positive
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, Solver, SolverParams, register
from sbpbench.solvers.dual import box_bound, dual_snapshot

if TYPE_CHECKING:
    from sklearn.svm import SVC

#: Smallest cache scikit-learn accepts (LIBSVM then keeps at least two rows anyway).
MIN_CACHE_MB = 1e-3


def tolerance_schedule(final_tol: float) -> list[float]:
    """``1, 10^-0.5, 10^-1, ...`` strictly above ``final_tol``, then ``final_tol``."""
    tols = []
    k = 0
    while 10.0 ** (-k / 2) > final_tol * (1 + 1e-9):
        tols.append(10.0 ** (-k / 2))
        k += 1
    return tols + [final_tol]


@dataclass(frozen=True)
class LibSVMParams(SolverParams):
    """Parameters of :class:`LibSVMReference`."""

    final_tol: float = param(1e-3, "last stopping tolerance of the schedule (LIBSVM's -e)", check=positive)
    shrinking: bool = param(True, "LIBSVM's shrinking heuristic (-h)")


@register
class LibSVMReference(Solver[LibSVMParams]):
    """LIBSVM (scikit-learn SVC) at decreasing tolerances; biased problem only; kernel evals unknown."""

    name = "libsvm"
    deterministic = True
    Params = LibSVMParams
    needs = frozenset({"lambda"})
    supports_bias = True
    requires_bias = True
    counts_kernel_evals = False
    one_step_per_advance = True

    def __init__(self, problem: Problem, rng: np.random.Generator, params: LibSVMParams | None = None):
        super().__init__(problem, rng, params)
        # imported here, out of the training clock, so that runs without this solver skip scikit-learn's import
        from sklearn.svm import SVC
        self._svc = SVC
        spec = self.kernel.spec
        self.tols = tolerance_schedule(self.params.final_tol)
        self._options: dict[str, Any] = dict(
            C=box_bound(problem),
            kernel="rbf" if spec.name == "gaussian" else "linear",
            gamma=1.0 / (2.0 * spec.sigma2) if spec.name == "gaussian" else "scale",
            cache_size=max(spec.cache_mb, MIN_CACHE_MB),
            shrinking=self.params.shrinking,
        )
        self.model: SVC | None = None
        self.fit_time = math.nan

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One fit, at the next tolerance of the schedule; True after the last."""
        t0 = time.perf_counter()
        self.model = self._svc(tol=self.tols[self.iteration], **self._options).fit(self.kernel.X, self.problem.y)
        self.fit_time = time.perf_counter() - t0
        self.iteration += 1
        return self.iteration == len(self.tols)

    def snapshot(self) -> Snapshot:
        m = self.model
        if m is None:
            raise RuntimeError("libsvm: no fit yet to take a snapshot of")
        support = m.support_.astype(np.int64)
        dual_coef = m.dual_coef_.toarray() if sp.issparse(m.dual_coef_) else m.dual_coef_  # sparse for CSR data
        coef = np.asarray(dual_coef[0], dtype=np.float64)
        bias = float(m.intercept_[0])
        y = self.problem.y
        alpha = np.zeros(self.n)
        alpha[support] = coef * y[support]
        # responses without the bias, measured through our kernel (eval_kernel_evals only)
        q = y * self.kernel.decision(self.kernel.X, support, coef, 0.0)
        return dual_snapshot(self.problem, alpha, q, bias,
                             {"tol": self.tols[self.iteration - 1], "fit_time_s": self.fit_time})
