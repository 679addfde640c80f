"""Small real subsamples of Adult (a9a) from ``../shared/datasets`` for the solver tests."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from sbpbench.data.libsvm import read_libsvm
from sbpbench.kernels import Kernel, KernelSpec
from sbpbench.problem import Problem

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@lru_cache(maxsize=None)
def _a9a(name: str):
    path = DATASETS / "adult" / name
    if not path.is_file():
        pytest.skip(f"real data not available: {path}")
    X, labels = read_libsvm(str(path), name, n_features=123)
    return X, np.where(labels > 0, 1.0, -1.0)


def adult(n: int, seed: int = 0, test: int = 0):
    """``n`` training rows of a9a (and ``test`` rows of a9a.t), drawn without replacement with ``seed``.

    Returns ``(X, y, test_X, test_y)`` with CSR matrices.
    """
    X, y = _a9a("a9a")
    idx = np.random.default_rng(seed).choice(X.shape[0], n, replace=False)
    if not test:
        return X[idx], y[idx], None, None
    tX, ty = _a9a("a9a.t")
    tidx = np.random.default_rng(seed + 1).choice(tX.shape[0], test, replace=False)
    return X[idx], y[idx], tX[tidx], ty[tidx]


def adult_problem(n: int, seed: int = 0, test: int = 50, sigma2: float = 10.0, lam: float | None = None,
                  nu: float | None = None, bias: bool = False) -> Problem:
    """A :class:`Problem` on an Adult subsample with a Gaussian kernel (Table 2: sigma^2 = 10)."""
    X, y, tX, ty = adult(n, seed, test)
    k = Kernel(X, KernelSpec("gaussian", sigma2, cache_mb=0))
    return Problem(k, y, k.prepare(tX), ty, lam, nu, bias)
