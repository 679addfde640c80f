"""Pluggable solvers. Importing this package registers every solver module in it."""

import importlib
import pkgutil

from sbpbench.solvers.base import SOLVERS, Param, ProblemKind, Snapshot, Solver, SolverParams, param, register

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["SOLVERS", "Param", "ProblemKind", "Snapshot", "Solver", "SolverParams", "param", "register"]
