"""Small real subsamples of Adult (LIBSVM's a9a, the copy bundled in the package) for tests."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from sbpbench.data.sources.adult import load_bundled
from sbpbench.kernels import Kernel, KernelSpec
from sbpbench.problem import Problem

#: The shared folder beside the checkout (real dataset copies); CI has it, users may not.
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@cache
def _bundled():
    return load_bundled()


def _a9a(name: str):
    split = _bundled()[0 if name == "a9a" else 1]
    return split.X, split.y


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


def make_problem(split_pair, sigma2=10.0, lam=None, nu=None, bias=False, cache_mb=0.0, kernel="gaussian"):
    """A Problem over a ``(train, test)`` pair of Splits with the given parameters."""
    train, test = split_pair
    return Problem.build(train, test, KernelSpec(kernel, sigma2, cache_mb), lam, nu, bias)
