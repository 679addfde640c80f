"""Pluggable solvers. Importing this package registers every solver module in it, then the
solvers of installed packages' ``sbpbench.solvers`` entry points (:mod:`sbpbench.solvers.external`)."""

import importlib
import pkgutil

from sbpbench.params import Param, param
from sbpbench.solvers.base import SOLVERS, ProblemKind, Snapshot, Solver, SolverParams, register

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

importlib.import_module(f"{__name__}.external").load_entry_points()

__all__ = ["SOLVERS", "Param", "ProblemKind", "Snapshot", "Solver", "SolverParams", "param", "register"]
