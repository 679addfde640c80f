"""Real-data subsamples and independent exact optima for the kernel-solver tests.

The independent optima use scikit-learn (LIBSVM's ``SVC``, the ``rbf_kernel`` matrix) and
scipy's L-BFGS-B, never sbpbench's solvers or its counting kernel.
"""

from __future__ import annotations

import bz2
import math

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.data.split import Split, subsample
from sbpbench.kernels import KernelSpec
from sbpbench.problem import Problem
from tests.adult_rows import SHARED
from tests.exact import lambda_optimum

#: file, number of features, Gaussian sigma^2 used in the tests.
FILES = {
    "adult": ("adult/a9a", 123, 10.0),
    "reuters": ("reuters/reuters.trn.bz2", 8315, 1.0),
    "w8a": ("w8a/w8a", 300, 10.0),
}


def real_split(name: str, n: int, seed: int = 0) -> Split:
    """A uniform subsample of ``n`` training examples of a real data set (skip if absent)."""
    rel, n_features, _ = FILES[name]
    path = SHARED / rel
    if not path.is_file():
        pytest.skip(f"real data {path} not available")
    source = bz2.decompress(path.read_bytes()) if path.suffix == ".bz2" else str(path)
    X, labels = read_libsvm(source, rel, n_features=n_features)
    y, _ = to_binary(labels, rel, positive=1.0)
    return subsample(Split(X, y), n, np.random.default_rng(seed))


def make_problem(name: str, n: int, bias: bool, lam: float | None = None, cache_mb: float = 0.0,
                 seed: int = 0) -> Problem:
    """Problem 2.2 on a real subsample (test set = training set; lambda defaults to 1/n)."""
    split = real_split(name, n, seed)
    sigma2 = FILES[name][2]
    return Problem.build(split, split, KernelSpec("gaussian", sigma2, cache_mb),
                         lam if lam is not None else 1.0 / split.n, None, bias)


def gram(problem: Problem) -> np.ndarray:
    """The Gaussian kernel matrix by scikit-learn (independent of sbpbench's kernel)."""
    return rbf_kernel(problem.kernel.X, gamma=1.0 / (2.0 * problem.kernel.spec.sigma2))


def objectives(problem: Problem, K: np.ndarray, alpha: np.ndarray, b: float = 0.0) -> tuple[float, float]:
    """(primal, dual) of Problem 2.2 for ``w = sum alpha_i y_i Phi(x_i)`` and bias ``b``."""
    y, lam = problem.y, problem.lam
    q = y * (K @ (alpha * y))
    norm2 = float(alpha @ q)
    primal = 0.5 * lam * norm2 + float(np.maximum(0.0, 1.0 - q - y * b).mean())
    return primal, lam * (float(alpha.sum()) - 0.5 * norm2)


def unbiased_optimum(problem: Problem) -> tuple[np.ndarray, float, float]:
    """The dual QP without bias (:func:`tests.exact.lambda_optimum`): ``(alpha, primal, dual)``."""
    opt = lambda_optimum(gram(problem), problem.y, problem.lam)
    return opt["alpha"], opt["primal"], opt["dual"]


def biased_optimum(problem: Problem):
    """LIBSVM (scikit-learn SVC) at tol 1e-8: ``(alpha, b, primal, dual)``."""
    from sklearn.svm import SVC

    m = SVC(C=1.0 / (problem.lam * problem.n), kernel="rbf", gamma=1.0 / (2.0 * problem.kernel.spec.sigma2),
            tol=1e-8, shrinking=False).fit(problem.kernel.X, problem.y)
    alpha = np.zeros(problem.n)
    coef = m.dual_coef_.toarray()[0] if hasattr(m.dual_coef_, "toarray") else m.dual_coef_[0]
    alpha[m.support_] = np.abs(coef)
    b = float(m.intercept_[0])
    primal, dual = objectives(problem, gram(problem), alpha, b)
    return alpha, b, primal, dual


def run_to_end(solver, max_iterations: float = math.inf) -> bool:
    """Advance a solver with no budget but ``max_iterations``; True if it finished by itself."""
    return solver.advance(max_iterations, math.inf, math.inf)
