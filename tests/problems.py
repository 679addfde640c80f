"""The problems the tests solve: small samples of real data, one builder, and solvers made on them.

Every test that needs a :class:`~sbpbench.problem.Problem` builds it with :func:`build_problem`, over
splits drawn here: rows of the Adult copy bundled in the package (:func:`adult`, always there)
or of the real copies in ``../shared/datasets`` (:func:`real_split`; the test is skipped where
they are absent). Solvers are made on them as the runner makes them (:func:`make_solver`).
"""

from __future__ import annotations

import bz2
import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.data.sources.adult import load_bundled
from sbpbench.data.split import Split, subsample
from sbpbench.kernels import KernelSpec
from sbpbench.problem import Problem
from sbpbench.solvers import SOLVERS, Solver

#: The shared folder beside the checkout (real dataset copies); CI has it, users may not.
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"

#: Real data files in :data:`SHARED`: name -> (file, number of features).
FILES = {
    "adult": ("adult/a9a", 123),
    "reuters": ("reuters/reuters.trn.bz2", 8315),
    "w8a": ("w8a/w8a", 300),
}
#: The Gaussian sigma^2 the tests use on each data set (Table 2 of the SBP paper for Adult).
SIGMA2 = {"adult": 10.0, "reuters": 1.0, "w8a": 10.0}


@cache
def bundled() -> tuple[Split, Split]:
    """The whole bundled a9a and a9a.t (read once)."""
    return load_bundled()


def adult(n: int, seed: int = 0, test: int = 50) -> tuple[Split, Split]:
    """``n`` training rows of the bundled a9a and ``test`` rows of a9a.t, drawn without
    replacement with ``seed`` (the test rows with ``seed + 1``)."""
    train, held_out = bundled()
    idx = np.random.default_rng(seed).choice(train.n, n, replace=False)
    tidx = np.random.default_rng(seed + 1).choice(held_out.n, test, replace=False)
    return train.take(idx), held_out.take(tidx)


@cache
def _real(name: str) -> Split:
    """The whole real data file ``name`` of :data:`FILES` (skip the test if it is absent)."""
    rel, n_features = FILES[name]
    path = SHARED / rel
    if not path.is_file():
        pytest.skip(f"real data {path} not available")
    source = bz2.decompress(path.read_bytes()) if path.suffix == ".bz2" else str(path)
    X, labels = read_libsvm(source, rel, n_features=n_features)
    return Split(X, to_binary(labels, rel, positive=1.0)[0])


def real_split(name: str, n: int, seed: int = 0) -> Split:
    """A uniform subsample of ``n`` examples of a real data set (skip the test if it is absent)."""
    return subsample(_real(name), n, np.random.default_rng(seed))


def build_problem(data: Split | tuple[Split, Split], *, kernel: str = "gaussian", sigma2: float = 10.0,
            lam: float | None = None, nu: float | None = None, bias: bool = False,
            cache_mb: float = 0.0) -> Problem:
    """The problem over ``data``: a ``(train, test)`` pair of splits, or one split that is both.

    Parameters
    ----------
    data : Split or tuple of Split
        The examples.
    kernel, sigma2, cache_mb
        The kernel (:class:`~sbpbench.kernels.KernelSpec`); no row cache by default.
    lam, nu, bias
        The problem parameters (None: not defined).
    """
    train, test = data if isinstance(data, tuple) else (data, data)
    return Problem.build(train, test, KernelSpec(kernel, sigma2, cache_mb), lam, nu, bias)


def real_problem(name: str, n: int, bias: bool = False, lam: float | None = None, cache_mb: float = 0.0,
                 seed: int = 0) -> Problem:
    """Problem 2.2 on ``n`` examples of real data set ``name`` (test set = training set) with its
    Gaussian sigma^2 (:data:`SIGMA2`); lambda defaults to 1/n."""
    return build_problem(real_split(name, n, seed), sigma2=SIGMA2[name], lam=lam if lam is not None else 1.0 / n,
                   bias=bias, cache_mb=cache_mb)


def svm_problem(name: str, C: float, kernel: str = "linear", n: int = 2000) -> Problem:
    """Problem 2.2 with penalty ``C`` (lambda = 1/(C n), the SGD paper's) on ``n`` examples of real data
    set ``name`` (seed 0), tested on 1000 others drawn apart (seed 1); no bias."""
    return build_problem((real_split(name, n, 0), real_split(name, 1000, 1)), kernel=kernel, lam=1.0 / (C * n))


#: (data set, C) of the linear solvers' tests: C = 1/(lambda n), the SGD paper's penalty.
SVM_CASES = [("adult", 0.05), ("w8a", 1.0)]


def make_solver(problem: Problem, name: str, seed: int = 0, **params: Any) -> Solver[Any]:
    """Solver ``name`` with these parameters on ``problem``, made as the runner makes it."""
    cls = SOLVERS[name]
    return cls.create(problem, np.random.default_rng(seed), cls.Params(**params))


def run_epochs(problem: Problem, name: str, epochs: float, seed: int = 0, **params: Any) -> tuple[Solver[Any], bool]:
    """:func:`make_solver`, advanced ``epochs`` epochs with no other limit; the solver and whether it
    finished by itself."""
    solver = make_solver(problem, name, seed, **params)
    return solver, run_to_end(solver, round(epochs * problem.n))


#: The most iterations a test runs a solver that should stop by itself: far more than any test's
#: solver needs (SMO at eps 1e-8 on a few hundred examples takes thousands), so that a solver that
#: never stops (a broken stopping rule, a gradient rebuilt with the wrong sign) fails its test in
#: seconds instead of stalling the suite until its per-test timeout (pyproject.toml).
MAX_ITERATIONS = 10**6


def within_cap(solver: Solver[Any]) -> None:
    """Fail the test when ``solver`` has run :data:`MAX_ITERATIONS` iterations without stopping."""
    if solver.iteration >= MAX_ITERATIONS and not solver.finished:
        pytest.fail(f"{type(solver).__name__} did not stop within {MAX_ITERATIONS} iterations")


def run_to_end(solver: Solver[Any], max_iterations: float = math.inf) -> bool:
    """Advance a solver with no budget but ``max_iterations``; True if it finished by itself.

    Without ``max_iterations`` the solver must stop by itself within :data:`MAX_ITERATIONS`
    (:func:`within_cap`: the test fails otherwise).
    """
    finished = solver.advance(min(max_iterations, MAX_ITERATIONS), math.inf, math.inf)
    if max_iterations > MAX_ITERATIONS:
        within_cap(solver)
    return finished
