"""Pluggable solvers. The registry :data:`SOLVERS` imports a built-in solver's module when the
solver is first looked up (:class:`~sbpbench.solvers.base.Registry`); importing this package
registers the solvers of installed packages' ``sbpbench.solvers`` entry points
(:mod:`sbpbench.solvers.external`)."""

from sbpbench.params import Param, param
from sbpbench.solvers import external
from sbpbench.solvers.base import SOLVERS, ProblemKind, Snapshot, Solver, SolverParams, register

external.load_entry_points()

__all__ = ["SOLVERS", "Param", "ProblemKind", "Snapshot", "Solver", "SolverParams", "param", "register"]
