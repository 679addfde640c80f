"""The LIBLINEAR reference: scikit-learn's ``LinearSVC`` (LIBLINEAR's dual coordinate
descent for the L1-loss SVM, ``-s 3``) measured in the same harness.

``LinearSVC(loss="hinge", dual=True, C=1/(lambda n), fit_intercept=problem.bias)`` is
fitted at a schedule of stopping tolerances ``tol_start, ...`` (``per_decade`` per decade)
down to ``tol_end``, each fit from scratch, so that the reference also produces a curve:
each ``advance`` does the next fit and returns True after the last one. LIBLINEAR's
tolerance is on the spread of the projected gradients (``max PG - min PG <= tol``).

Bias: with ``fit_intercept`` LIBLINEAR appends a constant feature 1 and so regularizes
the bias (``1/2 (||w||^2 + b^2)``), unlike Problem 2.2's unregularized bias; the columns
evaluate Problem 2.2 (bias unregularized) at LIBLINEAR's ``(w, b)``, which is therefore an
upper bound on, not equal to, the optimum of the biased problem.

Columns: ``objective`` is the SGD paper's ``J`` (C form) and ``primal_objective`` is
Problem 2.2 (lambda form) at the fitted predictor; ``tol``, ``fit_time_s`` (this fit
alone) and ``fit_epochs`` (LIBLINEAR's ``n_iter_`` for this fit). LinearSVC does not
expose the dual variables, so there is no dual column; ``n_support`` counts the training
points with margin ``y f(x) <= 1`` (the candidates for support vectors).

Cost model: kernel evaluations unknown (``counts_kernel_evals = False``). ``iteration``
adds ``n_iter_ * n`` over all fits so far and the runner's ``train_time_s`` adds the fits'
times: both count the whole schedule of refits that produced the curve (``fit_time_s``
and ``fit_epochs`` give one fit alone).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from sbpbench.params import param, positive, positive_c_int
from sbpbench.problem import Problem
from sbpbench.solvers.base import ProblemKind, Snapshot, SolverParams, register
from sbpbench.solvers.linear import LinearSolver


def tolerance_schedule(start: float, end: float, per_decade: int) -> np.ndarray:
    """Tolerances from ``start`` down to ``end``, ``per_decade`` per decade, both included.

    Parameters
    ----------
    start, end : float
        First and last tolerance (``start >= end > 0``).
    per_decade : int
        Tolerances per decade.

    Returns
    -------
    numpy.ndarray
    """
    steps = max(0, int(np.ceil(np.log10(start / end) * per_decade - 1e-9)))
    return np.append(start * 10.0 ** (-np.arange(steps) / per_decade), end) if steps else np.array([end])


@dataclass(frozen=True)
class LibLinearParams(SolverParams):
    """Parameters of :class:`LibLinear`."""

    tol_start: float = param(1.0, "first (loosest) stopping tolerance", check=positive)
    tol_end: float = param(1e-4, "last (tightest) stopping tolerance", check=positive)
    per_decade: int = param(2, "tolerances per decade", check=positive)
    max_iter: int = param(100000, "LIBLINEAR's maximum number of epochs per fit", check=positive_c_int)


@register
class LibLinear(LinearSolver[LibLinearParams]):
    """LIBLINEAR (scikit-learn LinearSVC, hinge loss, dual) at a schedule of tolerances.

    Cost: kernel evaluations unknown; iteration counts LIBLINEAR's epochs times n.
    """

    name = "liblinear"
    Params = LibLinearParams
    supports_bias = True
    one_step_per_advance = True
    stops_at_iteration_limit = False  # a fit adds its n_iter_ * n iterations

    @classmethod
    def refuse(cls, kind: ProblemKind, params: LibLinearParams) -> str | None:
        if (why := super().refuse(kind, params)) is not None:
            return why
        if params.tol_end > params.tol_start:
            return (f"solver {cls.name!r}: tol_end ({params.tol_end!r}) must not exceed "
                    f"tol_start ({params.tol_start!r})")
        return None

    def __init__(self, problem: Problem, rng: np.random.Generator, params: LibLinearParams | None = None):
        super().__init__(problem, rng, params)
        # imported here, out of the training clock, so that runs without this solver skip scikit-learn's import
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC
        self._linear_svc, self._convergence_warning = LinearSVC, ConvergenceWarning
        p = self.params
        self.tols = tolerance_schedule(p.tol_start, p.tol_end, p.per_decade)
        self.seed = int(rng.integers(0, 2**31 - 1))
        self.fits = 0
        self.w = np.zeros(self.d)
        self.b = 0.0
        self.fit_time = 0.0
        self.fit_epochs = 0

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """One fit, at the next tolerance of the schedule; True after the last."""
        tol = float(self.tols[self.fits])
        model = self._linear_svc(loss="hinge", dual=True, C=self.C, fit_intercept=self.problem.bias,
                          tol=tol, max_iter=self.params.max_iter, random_state=self.seed)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", self._convergence_warning)
            model.fit(self.X, self.y)
        self.fit_time = time.perf_counter() - t0
        self.w = np.ravel(model.coef_).astype(np.float64)
        self.b = float(model.intercept_[0]) if self.problem.bias else 0.0
        self.fit_epochs = int(np.max(model.n_iter_))
        self.iteration += self.fit_epochs * self.n
        self.fits += 1
        return self.fits == len(self.tols)

    def snapshot(self) -> Snapshot:
        margins = self.y * (np.asarray(self.X @ self.w).ravel() + self.b)
        support = np.flatnonzero(margins <= 1.0)
        return self.linear_snapshot(
            self.w, bias=self.b, support=support, coef=np.full(support.size, np.nan), c_form=True,
            extra={"tol": float(self.tols[max(0, self.fits - 1)]), "fit_time_s": self.fit_time,
                   "fit_epochs": float(self.fit_epochs)})
