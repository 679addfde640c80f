"""Random Fourier features followed by the optimum of a linear SVM (Appendix A of the SBP paper).

Rahimi and Recht (2007) approximate the Gaussian kernel ``exp(-||x - x'||^2 / (2 sigma^2))``
by an explicit map to ``2k`` features: with ``v_1, ..., v_k ~ N(0, I_d)``,
``P(x)_(2i) = cos(<v_i, x> / sigma) / sqrt(k)`` and ``P(x)_(2i+1) = sin(<v_i, x> / sigma) / sqrt(k)``
(:func:`fourier_features`), so ``<P(x), P(x')> -> K(x, x')`` as ``k`` grows.

Iteration ``t`` uses ``k = 2^(t-1)`` pairs (``k = 1, 2, 4, ...``, each doubling keeps the
directions already drawn and draws ``k`` new ones from the run's generator) and solves the
linear SVM of Problem 2.2 on those features, for the problem's lambda, to optimality: as in
Figure 3 the test error is that of the *optimum* of the linearized problem. The solver is
LIBLINEAR's dual coordinate descent through scikit-learn's ``LinearSVC`` (``dual=True``,
hinge loss, ``C = 1 / (lambda n)``, tolerance ``tol``), whose stopping rule (projected gradient
within ``tol``) is what "optimum" means here: ``max_iter`` is a safety net far above what a solve
needs. An iteration visits only the coordinates not shrunk, so it is cheap when few features make
most examples bound, and the solves of small k take many: with the 100,000 of our first Figure 3
runs, 1 to 5 of ten stopped at the cap for some k below 64 (REPRODUCTION.md reports the most
iterations a committed solve took). With ``problem.bias`` it fits an
intercept the way LIBLINEAR does, as an extra constant feature, so that bias is
regularized (unlike the kernel problem's).

Cost model (Appendix A): ``k`` pairs of features on the whole training set cost ``k n``
``d``-dimensional inner products ``<v_i, x_j>``, the unit of a Gaussian kernel evaluation;
the cost of solving the linear SVM is ignored, as in the paper. They are no kernel
evaluations (``counts_kernel_evals = False``): the cumulative count is the extra column
``inner_products`` (``= k n`` after the set with ``k`` pairs, since directions are reused),
the x-axis of Figure 3. A kernel-evaluation budget is applied to ``inner_products``; the run
ends after ``max_pairs`` pairs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import partial

import numpy as np

from sbpbench.params import param, positive, positive_c_int
from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot, Solver, SolverParams, register, required


def fourier_features(projections: np.ndarray) -> np.ndarray:
    """Random Fourier features from projections ``<v_i, x> / sigma``.

    Parameters
    ----------
    projections : numpy.ndarray, shape (m, k)
        ``<v_i, x_j> / sigma`` for ``k`` directions ``v_i``.

    Returns
    -------
    numpy.ndarray, shape (m, 2k)
        ``cos`` and ``sin`` of the projections, divided by ``sqrt(k)``.
    """
    k = projections.shape[1]
    return np.hstack([np.cos(projections), np.sin(projections)]) / np.sqrt(k)


def features_bytes(k: int, n: int, d: int) -> float:
    """Bytes of a fit with ``k`` pairs: ``k`` directions of ``d``, the projections (and their
    copy while they grow), the ``2k`` features of every example (the cosines and sines, their
    stack and its scaled copy) and LIBLINEAR's own copy of them (16 bytes a value)."""
    return 8.0 * k * (d + 2 * n + 6 * n) + 16.0 * 2 * k * n


def _decision(directions: np.ndarray, sigma: float, w: np.ndarray, b: float, Z) -> np.ndarray:
    """Decision values ``<w, P(z)> + b`` of a linear SVM on Fourier features, for rows of ``Z``."""
    return fourier_features(np.asarray(Z @ directions) / sigma) @ w + b


@dataclass(frozen=True)
class FourierParams(SolverParams):
    """Parameters of :class:`Fourier`."""

    max_pairs: int = param(1024, "largest number k of feature pairs (k doubles from 1)", check=positive,
                           memory=lambda k, n, d: features_bytes(2 ** (k.bit_length() - 1), n, d))
    tol: float = param(1e-6, "stopping tolerance of the linear SVM solver (LIBLINEAR)", check=positive)
    max_iter: int = param(10**7, "iteration limit of the linear SVM solver", check=positive_c_int)


@register
class Fourier(Solver[FourierParams]):
    """Random Fourier features (k = 1, 2, 4, ... pairs) + optimal linear SVM. Cost: k n inner products."""

    name = "fourier"
    Params = FourierParams
    needs = frozenset({"lambda"})
    supports_bias = True
    kernels = ("gaussian",)
    counts_kernel_evals = False
    fills_row_cache = False  # the features are computed from the data, never from kernel rows
    one_step_per_advance = True  # each set of k pairs is a fit of its own and a point of Figure 3

    def __init__(self, problem: Problem, rng: np.random.Generator, params: FourierParams | None = None):
        super().__init__(problem, rng, params)
        # imported here, out of the training clock, so that runs without this solver skip scikit-learn's import
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC
        self._linear_svc, self._convergence_warning = LinearSVC, ConvergenceWarning
        self.lam = required(problem.lam, "lambda")
        self.sigma = np.sqrt(self.kernel.spec.sigma2)
        self.X = self.kernel.X
        self.directions = np.empty((self.kernel.d, 0))
        self.projections = np.empty((self.n, 0))
        self.inner_products = 0
        self.w = np.empty(0)
        self.b = 0.0
        self.svm_iterations = 0

    @property
    def pairs(self) -> int:
        """Number ``k`` of feature pairs in use."""
        return self.directions.shape[1]

    def own_progress(self) -> float:
        """k over the last k (the largest power of two up to ``max_pairs``): a fit's cost grows
        with k, so the doublings so far are about that share of the total (each doubling costs
        as much as all before it)."""
        return self.pairs / 2 ** (self.params.max_pairs.bit_length() - 1)

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """Double the pairs (draw as many new directions) and fit; True once the next set is not allowed.

        The counting kernel is never called here, so ``kernel_evals`` is the whole
        kernel-evaluation budget, which applies to inner products: the run finishes when the
        next doubling would exceed ``max_pairs`` or the inner products reach the budget.
        """
        k_next = 2 * self.pairs if self.pairs else 1
        new = self.rng.standard_normal((self.kernel.d, k_next - self.pairs))
        self.projections = np.hstack([self.projections, np.asarray(self.X @ new) / self.sigma])
        self.directions = np.hstack([self.directions, new])
        self.inner_products += new.shape[1] * self.n
        self._fit()
        self.iteration += 1
        return 2 * self.pairs > self.params.max_pairs or self.inner_products >= kernel_evals

    def _fit(self) -> None:
        """The linear SVM optimum on the current features."""
        svm = self._linear_svc(C=1.0 / (self.lam * self.n), loss="hinge", dual=True,
                        fit_intercept=self.problem.bias, tol=self.params.tol, max_iter=self.params.max_iter,
                        random_state=int(self.rng.integers(2**31 - 1)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", self._convergence_warning)
            svm.fit(fourier_features(self.projections), self.problem.y)
        self.w = svm.coef_.ravel().copy()
        self.b = float(svm.intercept_[0]) if self.problem.bias else 0.0
        self.svm_iterations = int(np.max(svm.n_iter_))

    def snapshot(self) -> Snapshot:
        margins = self.problem.y * (fourier_features(self.projections) @ self.w + self.b)
        return Snapshot(
            support=np.empty(0, dtype=np.int64),
            coef=np.empty(0),
            bias=self.b,
            objective=self.problem.hinge_objective(margins, float(self.w @ self.w)),
            extra={"inner_products": float(self.inner_products), "pairs": float(self.pairs),
                   "svm_iterations": float(self.svm_iterations)},
            predict=partial(_decision, self.directions, self.sigma, self.w, self.b),
        )
