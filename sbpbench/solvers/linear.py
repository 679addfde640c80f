"""What the linear solvers share: features as CSR arrays, compiled sparse kernels, snapshots.

The linear solvers (primal Pegasos, NORMA, fixed-rate SGD, SGD-r/s/m, DCD and the
LIBLINEAR reference) accept only the linear kernel and work on the features
``problem.kernel.X`` directly: they never call the counting kernel, so they set
``counts_kernel_evals = False`` (the runner writes their kernel evaluations as unknown and
places its log-spaced checkpoints in iterations). Their work unit is the sparse inner
product ``<w, x_i>`` with one training example, O(nnz(x_i)); one iteration is one example
presented (one such inner product) and one epoch is ``n`` iterations.

Their predictor is a primal vector ``w`` (plus an optional bias), which is not of the
kernel-expansion form ``sum_j coef_j K(x_j, .)``, so their snapshots carry
``Snapshot.predict`` (``z -> <w, z> + b``), which the runner uses to measure test error.

Objective columns, for every linear solver:

``primal_objective``
    Problem 2.2 in the lambda form, ``lambda/2 ||w||^2 + (1/n) sum_i hinge(y_i f(x_i))``;
``dual_objective``, ``duality_gap``
    the dual value (a lower bound on the optimum) in the same lambda form, and the
    difference, where the solver has a dual;
``relative_accuracy``
    ``primal/dual - 1`` where a positive dual bound is known (scale free, so it equals the
    SGD paper's ``J / L^T - 1``).

The SGD paper writes the problem in the C form ``J(w) = 1/2 ||w||^2 + C sum_i hinge``
with ``C = 1/(lambda n)``, so that ``primal_objective = lambda J``; the solvers of that
paper (SGD-r/s/m, DCD, the LIBLINEAR reference) report ``J`` in ``objective``.

Dense feature matrices are turned into CSR once, so that one set of compiled loops serves
both storage formats. The runner compiles (or loads) a solver's loops before it times
anything (:mod:`sbpbench.execution.loop`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from sbpbench.params import param
from sbpbench.problem import Problem
from sbpbench.solvers.base import P, Snapshot, Solver, SolverParams, required


@numba.njit(cache=True, inline="always")
def sparse_dot_from(acc, indptr, indices, data, i, w):
    """``acc + <x_i, w>`` for CSR row ``i`` and a dense vector ``w``, summed in the type of ``acc``.

    With a float32 ``acc`` (and float32 ``data`` and ``w``) the sum is in single precision, as
    the single-precision solvers of the SGD paper's Table 8 compute it.
    """
    for k in range(indptr[i], indptr[i + 1]):
        acc += data[k] * w[indices[k]]
    return acc


@numba.njit(cache=True, inline="always")
def sparse_dot(indptr, indices, data, i, w):
    """``<x_i, w>`` for CSR row ``i`` and a dense vector ``w`` (summed in double)."""
    return sparse_dot_from(0.0, indptr, indices, data, i, w)


@numba.njit(cache=True, inline="always")
def sparse_axpy(indptr, indices, data, i, scale, w):
    """``w += scale * x_i`` for CSR row ``i``."""
    for k in range(indptr[i], indptr[i + 1]):
        w[indices[k]] += scale * data[k]


def csr_arrays(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of ``X`` as CSR (dense input is converted once).

    Parameters
    ----------
    X : numpy.ndarray or scipy.sparse.csr_matrix
        The training features, one example per row.

    Returns
    -------
    tuple of numpy.ndarray
    """
    M = X if sp.issparse(X) else sp.csr_matrix(X)
    return M.indptr, M.indices, M.data


@dataclass(frozen=True)
class PrecisionParams(SolverParams):
    """The parameter of the linear solvers that also run in single precision.

    The SGD paper's Table 8 compares SvmSgd, SGD-QN, SGD-m and MPU "implemented in single
    precision": their weight vector and their copy of the data are float32. The objectives and
    test errors of their snapshots are still measured in double precision.
    """

    precision: str = param("double", "arithmetic of w and the data: double, or single (float32; "
                           "objectives still measured in double)", choices=("double", "single"))

    @property
    def dtype(self) -> type[np.floating]:
        """``numpy.float32`` for single precision, else ``numpy.float64``."""
        return np.float32 if self.precision == "single" else np.float64

    @property
    def zero(self) -> np.floating:
        """The zero that starts a sum in this precision (for :func:`sparse_dot_from`)."""
        return self.dtype(0.0)


def linear_scores(Z, w: np.ndarray, bias: float = 0.0) -> np.ndarray:
    """Decision values ``<w, z> + bias`` for the rows of ``Z`` (dense or CSR)."""
    return np.asarray(Z @ w, dtype=np.float64).ravel() + bias


class LinearSolver(Solver[P]):
    """Base of the solvers that work on the features of a linear-kernel problem.

    Attributes
    ----------
    X : CSR matrix or ndarray
        ``problem.kernel.X``.
    indptr, indices, data : numpy.ndarray
        Its CSR arrays (for compiled loops).
    sq : numpy.ndarray
        Squared norms of the training examples.
    y : numpy.ndarray
        Labels in {-1, +1}.
    lam : float
        lambda of Problem 2.2; ``C = 1/(lambda n)``.
    """

    kernels = ("linear",)
    counts_kernel_evals = False
    feature_vectors = 4  # w (or v), and the copies its snapshots and objectives make
    fills_row_cache = False
    needs = frozenset({"lambda"})

    def __init__(self, problem: Problem, rng: np.random.Generator, params: P | None = None):
        super().__init__(problem, rng, params)
        self.X = problem.kernel.X
        self.indptr, self.indices, self.data = csr_arrays(self.X)
        self.sq = problem.kernel.sq
        self.y = problem.y
        self.lam = required(problem.lam, "lambda")
        self.C = 1.0 / (self.lam * self.n)
        self.d = problem.kernel.d

    def data_in(self, dtype: type[np.floating]) -> np.ndarray:
        """The CSR values :attr:`data` in ``dtype``: the array itself in float64, else a copy.

        Parameters
        ----------
        dtype : type
            ``numpy.float64`` or ``numpy.float32`` (:attr:`PrecisionParams.dtype`).

        Returns
        -------
        numpy.ndarray
        """
        return self.data if self.data.dtype == dtype else self.data.astype(dtype)

    def linear_snapshot(self, w: np.ndarray, bias: float = 0.0, norm2: float | None = None,
                        support: np.ndarray | None = None, coef: np.ndarray | None = None,
                        dual: float | None = None, c_form: bool = False,
                        extra: dict[str, float] | None = None) -> Snapshot:
        """Snapshot of the predictor ``<w, x> + bias`` with the objective columns filled.

        Parameters
        ----------
        w : numpy.ndarray, shape (d,)
            The weight vector (copied).
        bias : float
            Bias added to every decision value.
        norm2 : float, optional
            The regularized squared norm (defaults to ``||w||^2``; an augmented bias
            coordinate adds its square here).
        support, coef : numpy.ndarray, optional
            The expansion ``w = sum_j coef_j x_support[j]`` when the solver knows it (both
            or neither).
        dual : float, optional
            Dual value in the lambda form (a lower bound on the optimum).
        c_form : bool
            Report the SGD paper's ``J = primal / lambda`` in ``objective`` (else the
            lambda-form primal).
        extra : dict, optional
            Further columns.

        Returns
        -------
        Snapshot
        """
        w = np.array(w, dtype=np.float64)
        if norm2 is None:
            norm2 = float(w @ w)
        margins = self.y * linear_scores(self.X, w, bias)
        primal = required(self.problem.hinge_objective(margins, norm2), "lambda")
        columns = dict(extra or {})
        if dual is not None:
            columns["dual_objective"] = dual
            columns["duality_gap"] = primal - dual
            if dual > 0:
                columns["relative_accuracy"] = primal / dual - 1.0
        if support is None or coef is None:
            support, coef = np.empty(0, dtype=np.int64), np.empty(0)
        return Snapshot(
            support=support, coef=coef, bias=bias,
            objective=primal / self.lam if c_form else primal,
            primal_objective=primal, extra=columns,
            predict=lambda Z: linear_scores(Z, w, bias),
        )
