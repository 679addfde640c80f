"""What every solver provides, and the registry that names them.

A solver knows nothing of YAML, files or plots. The runner creates it with a
:class:`~sbpbench.problem.Problem`, a random generator and its parameters, then calls
:meth:`Solver.advance` to move it to the next checkpoint and :meth:`Solver.snapshot` to
measure it. Every kernel value goes through ``problem.kernel``, which counts.

Solvers register themselves with :func:`register`; ``sbpbench.solvers`` imports every
module of the package, so adding a solver is adding a module.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from sbpbench.problem import Problem


@dataclass(frozen=True)
class Param:
    """A solver parameter that an experiment may set.

    Parameters
    ----------
    type : type
        ``int``, ``float``, ``bool`` or ``str``.
    default : Any
        Value when the experiment leaves it out.
    doc : str
        One line for ``sbpbench solvers`` and error messages.
    choices : tuple, optional
        Allowed values.
    check : callable, optional
        Returns an error text for a bad value, or None.
    """

    type: type
    default: Any
    doc: str
    choices: tuple | None = None
    check: Callable[[Any], str | None] | None = None


#: The smallest value that a positive parameter or config key accepts: the smallest normal
#: double (``sys.float_info.min``, about 2.2e-308). A smaller positive number is a subnormal,
#: whose reciprocal overflows: always a mistake, never a setting.
SMALLEST_POSITIVE = sys.float_info.min


def positive(value: float) -> str | None:
    """Parameter check: the value must be positive, at least :data:`SMALLEST_POSITIVE` (1 for an integer)."""
    if value <= 0:
        return "must be positive"
    if value < SMALLEST_POSITIVE:
        return f"must be at least {SMALLEST_POSITIVE!r} (the smallest normal double)"
    return None


def non_negative(value: float) -> str | None:
    """Parameter check: the value must be 0 or positive as :func:`positive` means it."""
    if value < 0:
        return "must be >= 0"
    return positive(value) if value else None


#: Largest value of a parameter handed to compiled code as a C ``int`` (LIBLINEAR's ``max_iter``).
C_INT_MAX = 2**31 - 1


def positive_c_int(value: int) -> str | None:
    """Parameter check: a positive integer that fits a C ``int`` (at most :data:`C_INT_MAX`)."""
    return positive(value) or (None if value <= C_INT_MAX else f"must be at most {C_INT_MAX}")


@dataclass
class Snapshot:
    """The predictor at a checkpoint and what the solver knows about it for free.

    ``f(x) = sum_j coef[j] K(x_support[j], x) + bias``. ``objective`` is the solver's own
    objective, ``primal_objective`` that of Problem 2.2 (None when lambda is undefined).
    ``extra`` holds further columns (for example ``dual_objective``). ``predict``, when
    set, maps test points (in the kernel's storage format) to decision values and is used
    by the runner instead of ``kernel.decision`` (a primal linear ``w`` or random features
    are no combination of training points); it counts nothing in the training counters.
    """

    support: np.ndarray
    coef: np.ndarray
    bias: float = 0.0
    objective: float | None = None
    primal_objective: float | None = None
    extra: dict[str, float] = field(default_factory=dict)
    predict: Callable | None = None

    @property
    def n_support(self) -> int:
        """Number of support vectors (nonzero coefficients)."""
        return int(self.support.size)

    def test_error(self, problem: Problem) -> float:
        """Fraction of ``problem``'s test points with ``y f(x) <= 0`` (the paper's 0/1 loss).

        ``f`` is :attr:`predict` when set, else the kernel expansion, evaluated through the
        kernel's measurement path (counted in ``eval_kernel_evals`` only).
        """
        if self.predict is not None:
            scores = self.predict(problem.test_X)
        else:
            scores = problem.kernel.decision(problem.test_X, self.support, self.coef, self.bias)
        return float(np.mean(problem.test_y * scores <= 0))


class Solver:
    """Base class of all solvers.

    Subclasses set ``name``, ``params``, ``needs`` (the problem parameters they require:
    ``"lambda"`` and/or ``"nu"``), ``supports_bias``, ``requires_bias`` (solves only the
    biased problem), ``kernels`` (the kernel names they
    accept) and document their cost model in kernel evaluations in their docstring.
    Solvers that never call the counting kernel (the LIBSVM/LIBLINEAR references, linear
    solvers working on features) set ``counts_kernel_evals = False``: their kernel
    evaluation columns are written as unknown (NaN) and their log-spaced checkpoints are
    placed in iterations instead.

    Attributes
    ----------
    iteration : int
        Iterations done so far (one epoch is ``n`` iterations).
    """

    name: ClassVar[str]
    params: ClassVar[dict[str, Param]] = {}
    needs: ClassVar[frozenset[str]] = frozenset()
    supports_bias: ClassVar[bool] = False
    requires_bias: ClassVar[bool] = False
    kernels: ClassVar[tuple[str, ...]] = ("gaussian", "linear")
    counts_kernel_evals: ClassVar[bool] = True

    @classmethod
    def refuse(cls, params: dict[str, Any], kernel: str) -> str | None:
        """Why these parameters cannot solve a problem with kernel ``kernel`` (None: they can).

        Checked when a config is validated, beside ``kernels`` and the bias flags, so that a
        combination the solver cannot run ends in one line and exit 2 before anything runs.
        """
        return None

    def __init__(self, problem: Problem, rng: np.random.Generator, **params: Any):
        self.problem = problem
        self.kernel = problem.kernel
        self.rng = rng
        self.n = problem.n
        self.iteration = 0
        for key, spec in self.params.items():
            setattr(self, key, params.get(key, spec.default))

    def advance(self, max_iterations: int, max_kernel_evals: float, deadline: float) -> bool:
        """Run iterations until one of the limits is reached.

        Parameters
        ----------
        max_iterations : int
            Stop once ``self.iteration`` reaches this.
        max_kernel_evals : float
            Stop once ``kernel.kernel_evals`` reaches this.
        deadline : float
            Stop once :func:`time.perf_counter` passes this.

        Returns
        -------
        bool
            True if the solver has finished by itself (converged); it is not advanced again.
        """
        raise NotImplementedError

    def snapshot(self) -> Snapshot:
        """The current predictor (the averaged one for averaging methods), without kernel evaluations."""
        raise NotImplementedError


#: Every registered solver class by name.
SOLVERS: dict[str, type[Solver]] = {}


def register(cls: type[Solver]) -> type[Solver]:
    """Class decorator adding a solver to :data:`SOLVERS`."""
    if cls.name in SOLVERS:
        raise ValueError(f"solver {cls.name!r} registered twice")
    SOLVERS[cls.name] = cls
    return cls
