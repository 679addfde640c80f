"""The exact optimum of the lambda-problem, and nu derived from it (``nu: from_lambda``).

The SBP paper compares SBP (Problem 2.3, parameter nu) with solvers of Problem 2.2
(parameter lambda) by choosing nu from lambda: if ``w*`` minimizes
``lambda/2 ||w||^2 + (1/n) sum_i hinge(y_i <w, Phi(x_i)> + b)``, then ``w* / ||w*||`` solves
Problem 2.3 with ``nu = (mean hinge loss of w*) / ||w*||``. We compute ``w*`` with our own
:class:`~sbpbench.solvers.smo.SMO` (with or without bias as the problem says) at the tight
tolerance :data:`OPTIMUM_EPS` and cache the result as a JSON file under
``<data folder>/optima/``, where the data folder is the dataset cache (:func:`sbpbench.data.cache.cache_dir`). The
file is named by a hash of its key: the dataset section, the seed and subsample sizes, a
sha256 of the training and test data themselves, the kernel (name and sigma2; not the cache
size), lambda, the bias and the tolerance. A second experiment with the same key reads the
file and evaluates no kernel value.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from sbpbench.data.cache import cache_dir
from sbpbench.files import atomic_write
from sbpbench.problem import Problem

if TYPE_CHECKING:
    from sbpbench.solvers.smo import SMO

#: Notes of this module (the command line shows them as ``sbpbench: note: ...``).
LOG = logging.getLogger(__name__)

#: SMO's stopping tolerance for the exact optimum (LIBSVM's default is 1e-3).
OPTIMUM_EPS = 1e-6

#: A measured exact solve: training examples and seconds (biased Adult, the committed runs).
MEASURED_N, MEASURED_S = 32_561, 243.0


def expected_duration(n: int) -> str:
    """A rough duration of the exact solve on ``n`` training examples, for the note that announces it.

    Scaled from :data:`MEASURED_N` and :data:`MEASURED_S` as n squared (SMO's time grows about so);
    the data, lambda and the machine change it by a factor of a few either way.
    """
    seconds = MEASURED_S * (n / MEASURED_N) ** 2
    return "under a minute" if seconds < 60 else f"about {round(seconds / 60)} min"


def fingerprint(X, y: np.ndarray) -> str:
    """sha256 of a data set's examples (dense or CSR, as stored by the kernel) and labels."""
    h = hashlib.sha256()
    if sp.issparse(X):
        for part in (X.indptr, X.indices, X.data):
            h.update(np.ascontiguousarray(part, dtype=np.float64).tobytes())
    else:
        h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(y, dtype=np.float64).tobytes())
    return h.hexdigest()


def cache_key(problem: Problem, dataset: dict[str, Any], seed: int, eps: float = OPTIMUM_EPS) -> dict[str, Any]:
    """What identifies an optimum: data (described and hashed), kernel, lambda, bias, tolerance.

    Parameters
    ----------
    problem : Problem
        The problem (``lam`` set).
    dataset : dict
        The experiment's dataset section (as a mapping).
    seed : int
        The experiment seed (it selects the subsample).
    eps : float
        SMO's stopping tolerance.

    Returns
    -------
    dict
        A JSON-serializable key.
    """
    spec = problem.kernel.spec
    return {
        "dataset": dataset,
        "seed": seed,
        "n_train": problem.n,
        "n_test": int(problem.test_y.size),
        "train_sha256": fingerprint(problem.kernel.X, problem.y),
        "test_sha256": fingerprint(problem.test_X, problem.test_y),
        "kernel": {"name": spec.name, "sigma2": spec.sigma2 if spec.name == "gaussian" else None},
        "lambda": problem.lam,
        "bias": problem.bias,
        "eps": eps,
    }


def solved(problem: Problem, eps: float = OPTIMUM_EPS) -> SMO:
    """SMO run on Problem 2.2 until its tolerance ``eps`` is met. Its :meth:`SMO.solution` gives
    ``(alpha, q, b)``: the dual variables, ``q = Q alpha`` (``q_i = y_i <w, Phi(x_i)>``, so
    ``||w||^2 = alpha @ q``) and the bias."""
    from sbpbench.solvers.smo import SMO, SMOParams  # SMO's module for the runs that need it (issue #48)

    solver = SMO(problem, np.random.default_rng(0), SMOParams(eps=eps))
    while not solver.advance(math.inf, math.inf, math.inf):
        pass
    return solver


def solve(problem: Problem, eps: float = OPTIMUM_EPS) -> dict[str, Any]:
    """Solve Problem 2.2 with SMO to tolerance ``eps`` and describe the optimum.

    Parameters
    ----------
    problem : Problem
        The problem; its kernel counters grow by the solve's evaluations.
    eps : float
        SMO's stopping tolerance.

    Returns
    -------
    dict
        ``nu``, ``objective`` (Problem 2.2), ``norm`` (``||w*||``), ``mean_hinge``, ``b`` (the bias),
        ``test_error``, ``dual_objective``, ``duality_gap``, ``n_support``, ``iterations``,
        ``kernel_evals`` and ``seconds``.
    """
    evals_before = problem.kernel.kernel_evals
    t0 = time.perf_counter()
    solver = solved(problem, eps)
    seconds = time.perf_counter() - t0
    alpha, q, b = solver.solution()
    snap = solver.snapshot()
    norm2 = float(alpha @ q)
    mean_hinge = float(np.maximum(0.0, 1.0 - q - problem.y * b).mean())
    norm = math.sqrt(norm2)
    return {
        "nu": mean_hinge / norm if norm > 0 else math.inf,
        "objective": snap.primal_objective,
        "norm": norm,
        "mean_hinge": mean_hinge,
        "b": b,
        "test_error": snap.test_error(problem),
        "dual_objective": snap.extra["dual_objective"],
        "duality_gap": snap.extra["duality_gap"],
        "n_support": snap.n_support,
        "iterations": solver.iteration,
        "kernel_evals": problem.kernel.kernel_evals - evals_before,
        "seconds": round(seconds, 3),
    }


def optimum(problem: Problem, dataset: dict[str, Any], seed: int, root: Path | None = None,
            eps: float = OPTIMUM_EPS) -> dict[str, Any]:
    """The optimum of ``problem`` from the cache, solving and caching it the first time.

    Parameters
    ----------
    problem : Problem
        The problem (``lam`` set).
    dataset : dict
        The experiment's dataset section (part of the key).
    seed : int
        The experiment seed (part of the key).
    root : pathlib.Path, optional
        Data folder (default: the dataset cache, :func:`sbpbench.data.cache.cache_dir`); the file
        goes to ``root/optima/``.
    eps : float
        SMO's stopping tolerance.

    Returns
    -------
    dict
        The result of :func:`solve` plus ``key`` and ``cache_file``.
    """
    key = cache_key(problem, dataset, seed, eps)
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    path = (root or cache_dir()) / "optima" / f"{digest}.json"
    if path.is_file():
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("key") == key:
            return {**record, "cache_file": str(path)}
    # minutes on full data sets (biased Adult: 243 s and 508 s in the committed runs), silent otherwise
    LOG.info("computing the exact optimum of the lambda-problem to derive nu (%d examples, SMO to eps %g, "
             "%s at a guess); it is cached in %s", problem.n, eps, expected_duration(problem.n), path)
    record = {**solve(problem, eps), "key": key}
    atomic_write(path, json.dumps(record, indent=1, sort_keys=True))
    return {**record, "cache_file": str(path)}
