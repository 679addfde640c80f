"""Watching numba compile inside timed regions, for ``tests/test_timing.py``.

Imported by a ``sitecustomize.py`` that the test puts on ``PYTHONPATH``, so that every Python
process the test starts (a run's client, its spawned workers) calls :func:`install` before it
compiles anything. :func:`install` registers a listener for numba's ``"numba:compile"`` event
(sent when a dispatcher compiles, not when it loads from the cache) and marks the timed region:
:meth:`~sbpbench.solvers.base.Solver.advance` called by
:func:`~sbpbench.execution.loop.run_one`, which is exactly what the runner's clock wraps (the
warm-up's own ``advance`` is called from elsewhere). Every compilation is written as one line,
``timed|untimed main|worker NAME``, to ``$COMPILE_EVENTS/<pid>.txt``.

:func:`run_everything` is the in-process part: one short run of every registered solver through
``run_one``, on small real data (the bundled Adult) in every kernel storage.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import Any

#: Whether this process is inside a timed ``advance`` now.
_timed = False


def install() -> None:
    """Register the compile listener and wrap ``Solver.advance`` (see the module docstring)."""
    from numba.core import event

    from sbpbench.execution import loop
    from sbpbench.solvers.base import Solver

    log = open(os.path.join(os.environ["COMPILE_EVENTS"], f"{os.getpid()}.txt"), "a", buffering=1)

    class Compiles(event.Listener):
        def on_start(self, ev: Any) -> None:
            role = "main" if multiprocessing.parent_process() is None else "worker"
            log.write(f"{'timed' if _timed else 'untimed'} {role} {ev.data['dispatcher'].py_func.__qualname__}\n")

        def on_end(self, ev: Any) -> None:
            return None

    event.register("numba:compile", Compiles())
    advance = Solver.advance

    def watched(self: Any, *args: Any) -> bool:
        global _timed
        _timed = sys._getframe(1).f_code is loop.run_one.__code__
        try:
            return advance(self, *args)
        finally:
            _timed = False

    Solver.advance = watched  # type: ignore[method-assign]


def run_everything() -> None:
    """One short run (two epochs of 200 Adult examples) of every registered solver through
    ``run_one``, wherever the solver accepts the problem.

    Problems: Adult as it is (sparse binary: bit sets), with the Gaussian and the linear kernel,
    with and without bias; then, Gaussian, as float64 CSR (values times 0.3), uint8 dense (the
    dense matrix) and float64 dense; full rows split over threads for the first two, the row
    cache off for the first and the last. Besides the defaults: SMO with shrinking, and with the
    linear kernel Pegasos on kernel rows and every solver with a ``precision`` in single
    precision. The order matters: a function compiled by an earlier run hides a later run's
    gap, so the biased problems come first and SMO with shrinking before SMO (its update of
    ``G_bar`` is the only caller of ``_add_single``, which its warm-up must compile). Raises
    AssertionError when a run fails.
    """
    import numpy as np

    from sbpbench.data.split import Split, subsample
    from sbpbench.execution.loop import run_one
    from sbpbench.experiment import config
    from sbpbench.kernels import KernelSpec
    from sbpbench.kernels import kernel as counting
    from sbpbench.problem import Problem
    from sbpbench.solvers import SOLVERS, ProblemKind
    from tests.problems import bundled

    rng = np.random.default_rng(3)
    train, test = (subsample(split, size, rng) for split, size in zip(bundled(), (200, 100)))
    forms = {
        "binary bit sets": lambda X: X,
        "float64 CSR": lambda X: X * 0.3,
        "uint8 dense": lambda X: X.toarray(),
        "float64 dense": lambda X: (X * 0.3).toarray(),
    }
    # (storage, kernel, bias, full rows split over threads, cache MiB)
    cases = [("binary bit sets", kernel, bias, False, 256.0)
             for bias in (True, False) for kernel in ("gaussian", "linear")]
    cases += [("float64 CSR", "gaussian", False, True, 0.0), ("uint8 dense", "gaussian", True, True, 256.0),
              ("float64 dense", "gaussian", False, False, 0.0)]
    for storage, kernel, bias, parallel, cache_mb in cases:
        counting.PARALLEL_MIN_WORK = 0 if parallel else 10**12
        form = forms[storage]
        problem = Problem.build(Split(form(train.X), train.y), Split(form(test.X), test.y),
                                KernelSpec(kernel, 10.0, cache_mb), 1 / train.n, 0.05, bias)
        assert problem.kernel.storage == storage, problem.kernel.storage
        kind = ProblemKind.of(problem)
        solvers: list[Any] = [{"name": "smo", "shrinking": True, "label": "smo-shrinking"}]
        solvers += [name for name, cls in SOLVERS.items() if cls.refuse(kind, cls.Params()) is None]
        if kernel == "linear" and not bias:
            solvers.append({"name": "pegasos", "representation": "responses", "label": "pegasos-rows"})
            solvers += [{"name": name, "precision": "single", "label": f"{name}-single"}
                        for name, cls in SOLVERS.items()
                        if "precision" in cls.Params.declared() and cls.refuse(kind, cls.Params()) is None]
        exp = config.parse({"name": "timing", "dataset": {"name": "adult"}, "kernel": {"name": kernel},
                            "problem": {"lambda": 1 / train.n, "nu": 0.05, "bias": bias}, "solvers": solvers,
                            "budget": {"epochs": 2}}, "timing.yaml")
        for spec in exp.solvers:
            status = run_one(exp, problem, spec, 0).summary["status"]
            assert not status.startswith("failed"), (storage, kernel, bias, spec.label, status)
