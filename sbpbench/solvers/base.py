"""What every solver provides, and the registry that names them.

A solver knows nothing of YAML, files or plots. Its contract, :class:`Solver`:

* **Declared, typed parameters.** Each solver declares its parameters as a frozen dataclass
  (a subclass of :class:`SolverParams`, one field per parameter made with
  :func:`~sbpbench.params.param`: type, default, one line of doc, allowed values, a check;
  :mod:`sbpbench.params`) and names it in ``Params``. Config validation, the estimators,
  ``sbpbench solvers`` and ``meta.json`` read the declarations (:meth:`SolverParams.declared`);
  the solver receives a typed instance as ``self.params``. The budget (:class:`Budget`) is
  declared the same way.
* **One check against the problem.** :meth:`Solver.refuse` says why a solver cannot solve a
  kind of problem (kernel, bias, missing lambda or nu, contradictory parameters). It is
  called when a config is validated, so such a config ends in one line and exit 2 before
  anything runs, and again whenever a solver is made (``__init__`` raises ValueError).
* **Work in bounded steps.** The runner calls :meth:`Solver.advance` to move a solver to
  the next checkpoint; ``advance`` owns the loop over the three limits (iterations, kernel
  evaluations, the deadline) and calls the solver's :meth:`Solver._step`, which does a
  bounded amount of work. :meth:`Solver.snapshot` gives the predictor without any
  training kernel evaluation.
* **A declared cost model.** Every kernel value goes through ``problem.kernel``, which
  counts. Each solver states its cost model in kernel evaluations in its docstring and
  in :meth:`Solver.expected_kernel_evals`, computed from its own counts of the published
  algorithm's operations, so that a test can hold the kernel's count against it.

Solvers register themselves with :func:`register`; ``sbpbench.solvers`` imports every
module of the package, so adding a solver is adding a module.
"""

from __future__ import annotations

import importlib
import inspect
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, Generic, TypeVar, cast

import numpy as np

from sbpbench.errors import UserError
from sbpbench.kernels.spec import KernelSpec
from sbpbench.params import Params, fraction, param, positive
from sbpbench.problem import Problem, ProblemParams

#: Vectors of ``n`` float64 values a solver is assumed to hold, in :meth:`Solver.memory_needs`
#: (SBP holds seven); vectors of ``d`` are :attr:`Solver.feature_vectors`, and what a parameter
#: adds is declared with it (:func:`~sbpbench.params.param`'s ``memory``).
SOLVER_VECTORS_N = 8


@dataclass(frozen=True)
class SolverParams(Params):
    """Base of every solver's parameters: a frozen dataclass, one :func:`~sbpbench.params.param` field each.

    The field's annotation is the parameter's type (``int``, ``float``, ``bool`` or
    ``str``). This base has no fields: it is the ``Params`` of solvers without parameters.
    Every instance is checked when it is made (a value outside ``choices`` or refused by
    ``check`` raises :class:`ValueError`), so a solver can rely on its parameters.
    """


@dataclass(frozen=True)
class Budget(Params):
    """When a run stops: whichever limit comes first (None: no limit of that kind).

    A config's ``budget`` (and a solver entry's own) and the estimators' budget of each
    binary problem; a config that gives none of the three limits runs ``epochs`` 1.
    """

    epochs: float | None = param(1.0, "stop after round(epochs n) iterations, n the training examples "
                                      "(one epoch: n iterations)", check=positive)
    kernel_evals: float | None = param(None, "stop at the first iteration boundary at or after this many "
                                             "kernel evaluations", check=positive)
    seconds: float | None = param(None, "stop after this many seconds of training time", check=positive)
    test_error: float | None = param(None, "also stop (status done) once the test error is at or below this",
                                     check=fraction)
    primal_objective: float | None = param(
        None, "also stop (status done) once the primal objective J(w) is at or below this (e.g. 1.01 J_opt: "
              "the first checkpoint at 1% relative accuracy)", check=positive)

    #: The limits of the work itself (:meth:`Solver.advance`); ``test_error`` is measured.
    LIMITS: ClassVar[tuple[str, ...]] = ("epochs", "kernel_evals", "seconds")
    #: Most iterations (``epochs`` times n) and kernel evaluations a budget may allow: 2**53, the
    #: largest count a double holds exactly (the counters and limits are compared as doubles, and
    #: passed to compiled loops as 64-bit integers); no run comes near it.
    MAX_COUNT: ClassVar[int] = 2**53

    def too_large(self, n: int) -> str | None:
        """Why this budget's counts do not fit for ``n`` training examples (None when they do).

        ``epochs`` times ``n`` and ``kernel_evals`` must be at most :data:`MAX_COUNT`
        (``epochs: 1e308`` overflows to infinity once multiplied by ``n``). The answer names
        the key: ``key 'epochs': ...``.
        """
        if self.epochs is not None and self.epochs * n > self.MAX_COUNT:
            return (f"key 'epochs': {self.epochs:g} epochs of {n} training examples are {self.epochs * n:.3g} "
                    f"iterations, more than 2**53 (= {self.MAX_COUNT:.3g}), the most a budget allows")
        if self.kernel_evals is not None and self.kernel_evals > self.MAX_COUNT:
            return (f"key 'kernel_evals': {self.kernel_evals:.3g} kernel evaluations are more than 2**53 "
                    f"(= {self.MAX_COUNT:.3g}), the most a budget allows")
        return None

    def limits(self, n: int) -> tuple[float, float, float]:
        """The limits as :meth:`Solver.advance` takes them for ``n`` training examples: iterations
        (``round(epochs n)``), kernel evaluations and seconds, infinity where there is no limit."""
        return (round(self.epochs * n) if self.epochs is not None else math.inf,
                self.kernel_evals if self.kernel_evals is not None else math.inf,
                self.seconds if self.seconds is not None else math.inf)


@dataclass(frozen=True)
class ProblemKind:
    """What a solver may refuse a problem for, known from a config before any data are loaded.

    Attributes
    ----------
    kernel : str
        The kernel's name (``gaussian`` or ``linear``).
    bias : bool
        Whether the predictor has an unregularized bias.
    defines : frozenset of str
        Which of ``"lambda"`` and ``"nu"`` the problem gives.
    """

    kernel: str
    bias: bool
    defines: frozenset[str]

    @classmethod
    def of(cls, problem: Problem) -> ProblemKind:
        """The kind of a built problem."""
        return _kind(problem.kernel.spec.name, problem.bias, problem.lam is not None, problem.nu is not None)


@cache
def _kind(kernel: str, bias: bool, lam: bool, nu: bool) -> ProblemKind:
    """:meth:`ProblemKind.of` a problem of this kernel and bias, defining lambda and nu or not
    (made once: it is asked whenever a solver is made, for each binary problem of an estimator)."""
    return ProblemKind(kernel, bias, frozenset(name for name, given in (("lambda", lam), ("nu", nu)) if given))


def required(value: float | None, name: str) -> float:
    """A problem parameter (lambda or nu) that a solver needs: ``value``, which must be set.

    :meth:`Solver.refuse` has checked ``needs`` when the solver was made; this gives the
    value its type (``float``, not ``float | None``) where a solver reads it.

    Raises
    ------
    ValueError
        When ``value`` is None.
    """
    if value is None:
        raise ValueError(f"the problem does not define {name}")
    return value


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

    def shadowed(self) -> list[str]:
        """The keys of :attr:`extra` that name a column sbpbench measures itself
        (:data:`MEASURED_COLUMNS`), sorted; a run whose snapshot has one fails."""
        return sorted(k for k in self.extra if k in MEASURED_COLUMNS)

    def test_measures(self, problem: Problem) -> dict[str, float]:
        """The test error and test hinge loss of ``f``, from one evaluation of ``f`` on the test points.

        ``test_error`` is the fraction of ``problem``'s test points with ``y f(x) <= 0`` (the
        papers' 0/1 loss); ``test_hinge_loss`` is the mean of ``max(0, 1 - y f(x))`` over them
        (the Pegasos paper's "loss on the test set", Figure 2), for ``f`` at the scale whose
        :attr:`primal_objective` is reported. ``f`` is :attr:`predict` when set, else the
        kernel expansion, evaluated through the kernel's measurement path (counted in
        ``eval_kernel_evals`` only, once per call).
        """
        margins = problem.test_y * self.scores(problem, problem.test_X)
        return {"test_error": float(np.mean(margins <= 0)),
                "test_hinge_loss": float(np.mean(np.maximum(0.0, 1.0 - margins)))}

    def test_error(self, problem: Problem) -> float:
        """The test error of :meth:`test_measures` alone."""
        return self.test_measures(problem)["test_error"]

    def validation_error(self, problem: Problem) -> float:
        """The fraction of ``problem``'s validation points with ``y f(x) <= 0``, as :meth:`test_measures`
        computes the test error (its evaluations counted in ``eval_kernel_evals`` only).

        Raises
        ------
        ValueError
            When the problem has no validation points.
        """
        if problem.validation_y is None:
            raise ValueError("the problem has no validation points")
        return float(np.mean(problem.validation_y * self.scores(problem, problem.validation_X) <= 0))

    def scores(self, problem: Problem, X: Any) -> np.ndarray:
        """``f`` on points ``X`` of ``problem`` (in the kernel's storage format): :attr:`predict` when
        set, else the kernel expansion through the kernel's measurement path (counted in
        ``eval_kernel_evals`` only, once per call)."""
        if self.predict is not None:
            return self.predict(X)
        return problem.kernel.decision(X, self.support, self.coef, self.bias)


P = TypeVar("P", bound=SolverParams)


#: Solver attributes the outputs need (figures, ``sbpbench check``): recorded per solver in
#: ``meta.json``'s ``solver_traits``, so that results are read without importing their solvers.
TRAITS = ("maximizes_objective", "dashed_after_first_epoch", "one_step_per_advance", "swings_before_settling")

#: The columns of a checkpoint row that sbpbench writes the same way for every solver: the run's
#: identity, its counters and time, what is measured on the test set and read from the snapshot,
#: the run's ``status`` and the solver traits read back with the curves (:data:`TRAITS`). A
#: snapshot's :attr:`~Snapshot.extra` may not name one (:meth:`Snapshot.shadowed`): a solver could
#: otherwise report its own test error, or run under another solver's name.
MEASURED_COLUMNS = frozenset({
    "experiment", "dataset", "solver", "solver_name", "params", "seed", "run", "checkpoint",
    "iteration", "epoch", "kernel_evals", "kernel_evals_computed", "eval_kernel_evals", "train_time_s",
    "test_error", "test_hinge_loss", "objective", "primal_objective", "n_support", "status",
    *TRAITS,
})


class Solver(Generic[P]):
    """Base class of all solvers; ``P`` is the solver's parameter dataclass.

    Subclasses set ``name``, ``Params`` (their :class:`SolverParams` subclass, the same as
    ``P``), ``needs`` (the problem parameters they require: ``"lambda"`` and/or ``"nu"``),
    ``supports_bias``, ``requires_bias`` (solves only the biased problem) and ``kernels``
    (the kernel names they accept), all read by :meth:`refuse`; they implement
    :meth:`_step`, :meth:`snapshot` and :meth:`expected_kernel_evals`, and document their
    cost model in kernel evaluations in their docstring. Solvers that never call the
    counting kernel (the LIBSVM/LIBLINEAR references, linear solvers working on features) set
    ``counts_kernel_evals = False``: their kernel evaluation columns are written as unknown
    (NaN) and their log-spaced checkpoints are placed in iterations instead. Solvers whose
    step is a whole fit (the references; random Fourier features, a fit per doubling of k) set
    ``one_step_per_advance``, so that every fit gets its checkpoint. Solvers whose step is a
    whole pass or fit that may go past the iteration limit (SGD-s, SGD-m, LIBLINEAR) set
    ``stops_at_iteration_limit = False`` and say by how much in their docstring; the others
    stop exactly at it. A solver whose publication takes its randomness from another solver's
    run names that solver in ``random_stream``: the runner then gives it the generator that
    solver gets for the same experiment seed and run (SvmSgd and SGD-QN visit the examples in
    the order SGD-m's first permutation gives, as the SGD paper ran them); by default a
    solver draws from a stream of its own name.

    Attributes
    ----------
    params : P
        The solver's parameters.
    iteration : int
        Iterations done so far (one epoch is ``n`` iterations).
    finished : bool
        Whether the solver has finished by itself (converged); it is not advanced again.
    """

    name: ClassVar[str]
    Params: ClassVar[type[SolverParams]] = SolverParams
    needs: ClassVar[frozenset[str]] = frozenset()
    supports_bias: ClassVar[bool] = False
    #: Whether it solves the problem with example weights (:attr:`~sbpbench.problem.Problem.weights`);
    #: one that does not refuses a weighted problem when made.
    supports_weights: ClassVar[bool] = False
    requires_bias: ClassVar[bool] = False
    kernels: ClassVar[tuple[str, ...]] = ("gaussian", "linear")
    counts_kernel_evals: ClassVar[bool] = True
    #: Float64 vectors of ``d`` (one value per feature) a run holds, for :meth:`memory_needs`.
    feature_vectors: ClassVar[int] = 0
    #: Whether a run fills a row cache of the kernel's ``cache_mb`` (the kernel's, or LIBSVM's);
    #: solvers working on features never ask for kernel rows.
    fills_row_cache: ClassVar[bool] = True
    #: Whether each step is a whole fit (see above): figures draw each checkpoint as a point of
    #: its own, joined by a line, not as a trajectory. One of :data:`TRAITS`.
    one_step_per_advance: ClassVar[bool] = False
    stops_at_iteration_limit: ClassVar[bool] = True
    #: Draw from the named solver's random stream (None: from this solver's own).
    random_stream: ClassVar[str | None] = None
    #: Draws nothing from its generator: its runs of one problem are the same run, which the
    #: report counts as one value, not as independent replicates (tests/test_randomness.py
    #: checks the flag against what each solver draws).
    deterministic: ClassVar[bool] = False
    #: Whether a larger ``objective`` is better (SBP maximizes its margin; the others minimize):
    #: ``sbpbench check`` calls a change in this direction better. One of :data:`TRAITS`.
    maximizes_objective: ClassVar[bool] = False
    #: Whether figures draw its curves dashed after its first epoch, where the published
    #: algorithm ends (the online Perceptron). One of :data:`TRAITS`.
    dashed_after_first_epoch: ClassVar[bool] = False
    #: Whether its test error swings between those of the two constant classifiers until its
    #: solution nears the optimum (SMO from alpha = 0: a few support vectors decide every label):
    #: figures draw that stretch as points, its line from where its mean error stays below the
    #: constant classifier's. One of :data:`TRAITS`.
    swings_before_settling: ClassVar[bool] = False

    @classmethod
    def traits(cls) -> dict[str, bool]:
        """The :data:`TRAITS` of this solver, as ``meta.json`` records them for the outputs."""
        return {trait: bool(getattr(cls, trait)) for trait in TRAITS}

    @classmethod
    def refuse(cls, kind: ProblemKind, params: P) -> str | None:
        """Why this solver with ``params`` cannot solve a problem of this kind (None: it can).

        The one check of a solver against a problem, called when a config is validated (so
        that a combination the solver cannot run ends in one line and exit 2 before anything
        runs) and whenever a solver is made. This base checks ``needs``, the bias flags and
        ``kernels``; a solver with further conditions (a parameter that needs a kernel,
        contradictory parameters) extends it, calling it first.

        Returns
        -------
        str or None
            One line starting with ``solver 'NAME'``, or None.
        """
        for need in sorted(cls.needs):
            if need not in kind.defines:
                return f"solver {cls.name!r} needs problem.{need}{NEED_HINTS.get(need, '')}"
        if kind.bias and not cls.supports_bias:
            return f"solver {cls.name!r} does not support problem.bias: true (its solver entry may set bias: false)"
        if not kind.bias and cls.requires_bias:
            return (f"solver {cls.name!r} solves only the biased problem: set problem.bias: true "
                    "(or bias: true in its solver entry)")
        if kind.kernel not in cls.kernels:
            return f"solver {cls.name!r} needs kernel.name {' or '.join(cls.kernels)}, not {kind.kernel!r}"
        return None

    @classmethod
    def refuse_data(cls, params: P, n: int, d: int) -> str | None:
        """Why ``params`` do not suit training data of ``n`` examples and ``d`` features (None: they do).

        The declared ``data_check`` of every parameter (:func:`param`), asked once the data
        are loaded and before anything runs, so that a config asking, say, for a mini-batch
        larger than the data ends in one line and exit 2.

        Returns
        -------
        str or None
            ``key 'NAME': why``, or None.
        """
        for pname, p in cls.Params.declared().items():
            if p.data_check is not None and (why := p.data_check(getattr(params, pname), n, d)) is not None:
                return f"key {pname!r}: {why}"
        return None

    @classmethod
    def memory_needs(cls, params: P, n: int, d: int) -> dict[str, float]:
        """Bytes a run of this solver allocates for ``n`` examples of ``d`` features, by what.

        :data:`SOLVER_VECTORS_N` float64 vectors of ``n`` and :attr:`feature_vectors` of ``d``,
        plus what each parameter's declared ``memory`` says (mini-batch draws, random
        features); the kernel's own memory is :func:`sbpbench.kernels.memory_needs`'s.
        """
        needs = {f"{cls.name}'s vectors": 8.0 * (SOLVER_VECTORS_N * n + cls.feature_vectors * d)}
        for pname, p in cls.Params.declared().items():
            if p.memory is not None:
                value = getattr(params, pname)
                needs[f"{cls.name}'s {pname}={value}"] = float(p.memory(value, n, d))
        return needs

    @classmethod
    def create(cls, problem: Problem, rng: np.random.Generator, params: P | None = None) -> Solver[Any]:
        """The solver for ``problem`` (how the runner makes solvers; a solver with several
        implementations picks one in :meth:`_construct`).

        Parameters
        ----------
        problem : Problem
            The problem to solve.
        rng : numpy.random.Generator
            The run's generator, the only source of randomness.
        params : SolverParams, optional
            An instance of ``Params``; its defaults when left out.

        Raises
        ------
        ValueError
            With :meth:`refuse`'s reason when the solver cannot solve ``problem``.
        """
        chosen = cast(P, cls.Params()) if params is None else params
        # asked here too: the implementation _construct picks may word its refusal otherwise
        if (why := cls.refuse(ProblemKind.of(problem), chosen)) is not None:
            raise ValueError(why)
        return cls._construct(problem, rng, chosen)

    @classmethod
    def _construct(cls, problem: Problem, rng: np.random.Generator, params: P) -> Solver[Any]:
        """Make the solver object; a solver with several implementations picks one here."""
        return cls(problem, rng, params)

    def __init__(self, problem: Problem, rng: np.random.Generator, params: P | None = None):
        if params is not None and not isinstance(params, self.Params):
            raise TypeError(f"solver {self.name!r} takes {self.Params.__name__}, not {type(params).__name__}")
        # the declared defaults (Params() is P: subclasses set Params to their P)
        self.params: P = cast(P, self.Params()) if params is None else params
        if (why := self.refuse(ProblemKind.of(problem), self.params)) is not None:
            raise ValueError(why)  # also when made directly, not through create()
        if problem.weights is not None and not self.supports_weights:
            raise ValueError(f"solver {self.name!r} takes no example weights")
        self.problem = problem
        self.kernel = problem.kernel
        self.rng = rng
        self.n = problem.n
        self.iteration = 0
        self.finished = False

    def advance(self, max_iterations: float, max_kernel_evals: float, deadline: float) -> bool:
        """Do steps (:meth:`_step`) until one of the limits is reached or the solver finishes.

        A step starts only while ``iteration < max_iterations``, ``kernel.kernel_evals <
        max_kernel_evals`` and the clock is before ``deadline``; a solver therefore stops
        at the first step boundary at or after a limit. Solvers with
        ``one_step_per_advance`` do one step at most. The clock is read before every step
        when ``deadline`` is finite, and never when it is infinite (no clock is past it):
        the estimators' default budget has no time limit, and their small problems take
        steps of a few microseconds.

        Parameters
        ----------
        max_iterations : float
            Stop once ``self.iteration`` reaches this (an integer, or infinity).
        max_kernel_evals : float
            Stop once ``kernel.kernel_evals`` reaches this.
        deadline : float
            Stop once :func:`time.perf_counter` passes this.

        Returns
        -------
        bool
            True if the solver has finished by itself (converged); it is not advanced again.
        """
        kernel, step, once, timed = self.kernel, self._step, self.one_step_per_advance, deadline < math.inf
        while not self.finished and self.iteration < max_iterations and kernel.kernel_evals < max_kernel_evals:
            if timed and time.perf_counter() >= deadline:
                break
            self.finished = step(max_iterations - self.iteration, max_kernel_evals - kernel.kernel_evals)
            if once:
                break
        return self.finished

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """Do a bounded amount of work: at least one iteration, unless the solver finishes.

        Parameters
        ----------
        iterations : float
            Iterations the limits still allow (at least 1; infinity without a limit). A step
            that does several iterations does at most this many, unless the solver declares
            ``stops_at_iteration_limit = False``.
        kernel_evals : float
            Kernel evaluations the limits still allow (positive; infinity without a limit). A
            step that does several iterations starts none once they are spent.

        Returns
        -------
        bool
            True when the solver has finished by itself (converged).
        """
        raise NotImplementedError

    def snapshot(self) -> Snapshot:
        """The current predictor (the averaged one for averaging methods), without kernel evaluations."""
        raise NotImplementedError

    def warm_up_rare_paths(self) -> None:
        """Call the compiled code that only a long run reaches (nothing by default).

        The runner compiles a run's code before its clock starts by running the solver a few
        iterations on a small problem of the run's kind (:meth:`sbpbench.execution.loop.WarmUps.warm_up`)
        and then calling this on that solver. A solver with a compiled function that only some
        later state calls (SMO's shrinking, after ``min(n, 1000)`` iterations) brings its warm-up
        solver into that state here, or calls the function with the argument types of the
        run. It may change the solver and use its kernel: it is never called on a solver
        whose run is measured.
        """

    def own_progress(self) -> float:
        """Share of the way to where the solver finishes by itself, for the progress line's ETA.

        0 for solvers that run until the budget ends them (the runner takes the largest share
        of the budget spent); a solver with its own end (random Fourier features: ``max_pairs``)
        says how far it is, so that its ETA does not wait for a budget it will never reach.
        """
        return 0.0

    def expected_kernel_evals(self) -> float:
        """``kernel_evals`` by the solver's cost model, for the work done so far.

        Computed from the solver's own counts of the published algorithm's operations
        (iterations, margin violations, nonzero steps, ...), never from the kernel's
        counter, so that a test holds one against the other. A solver that does not count
        (``counts_kernel_evals = False``) never asks the counting kernel for training
        values: 0.
        """
        if not self.counts_kernel_evals:
            return 0.0
        raise NotImplementedError


#: What a config writes to give a problem parameter a solver ``needs``, as its refusal says.
NEED_HINTS = {"lambda": " (a number or an expression in n such as 1/n, or C: lambda = 1/(C n))",
              "nu": " (a number in [0, 1], or nu: from_lambda to derive it from lambda or C)"}

#: The keys of a config's solver entry beside the solver's own parameters (``bias``, ``kernel``,
#: ``sigma2``, ``lambda``, ``C``, ``nu``: the entry's own problem and kernel values, in place of the
#: experiment's ``problem``, ``kernel.name`` and ``kernel.sigma2``).
ENTRY_KEYS = ("name", "path", "label", "budget", "bias", "kernel", "sigma2", "lambda", "C", "nu")

#: Names no solver parameter may take, as they already mean something where parameters are
#: written: a solver entry's own keys (:data:`ENTRY_KEYS`); the kernel's, the problem's and the
#: budget's declared keys (a sweep's labels and ``params`` column name a swept ``sigma2``,
#: ``lambda``, ``C`` or ``nu`` beside the solver's parameters, and the estimators take all of them
#: as arguments beside the solver's), with ``lambda`` as a config writes ``lam`` and ``kernel``
#: as the estimators write the kernel's ``name``; and the estimators' own arguments
#: (``random_state``, ``probability``, ``class_weight``, ``multi_class``,
#: ``decision_function_shape``: :mod:`sbpbench.estimators`, which a test holds to this list).
RESERVED_NAMES: tuple[str, ...] = tuple(sorted({
    *ENTRY_KEYS, *KernelSpec.declared(), *ProblemParams.declared(), *Budget.declared(),
    "lambda", "kernel", "random_state", "probability", "class_weight", "multi_class", "decision_function_shape"}))


def misnamed(cls: type[Solver[Any]]) -> str | None:
    """Why the parameters of solver class ``cls`` cannot be written in a config (None: they can).

    Asked when a solver is declared: registered (:func:`register`), or found in a solver file
    or an entry point (:mod:`sbpbench.solvers.external`).

    Returns
    -------
    str or None
        One line naming the solver, its first parameter with a reserved name
        (:data:`RESERVED_NAMES`) and where the reserved names are listed, or None. (Listing
        them all made the line longer than a line, beside a config's and a solver file's paths.)
    """
    clash = next((name for name in cls.Params.declared() if name in RESERVED_NAMES), None)
    if clash is None:
        return None
    return (f"solver {cls.name!r}: parameter {clash!r} has a reserved name, as a config or an estimator "
            "writes it for something else; rename it (the reserved names: RESERVED_NAMES in "
            "sbpbench/solvers/base.py, listed in docs/writing-a-solver.md)")


@contextmanager
def own_code(cls: type, method: str) -> Iterator[None]:
    """Run a solver class's own code at validation (its ``refuse``, ``refuse_data``,
    ``memory_needs``): whatever it raises, ``sys.exit`` included, is one line naming the solver,
    its file and the method, as a user error (exit 2), before anything runs.

    Raises
    ------
    UserError
        ``solver 'NAME' (FILE): its refuse() raised RuntimeError: why``.
    """
    try:
        yield
    except UserError:
        raise
    except (Exception, SystemExit) as exc:
        try:
            where = inspect.getsourcefile(cls) or cls.__module__
        except TypeError:
            where = cls.__module__
        raise UserError(f"solver {getattr(cls, 'name', cls.__name__)!r} ({where}): its {method}() raised "
                        f"{type(exc).__name__}: {exc}") from None


#: The module of :mod:`sbpbench.solvers` that defines each built-in solver, by the solver's name
#: (``tests/test_solvers_registry.py`` holds it to what the modules register).
BUILT_IN: dict[str, str] = {
    "dcd": "dcd", "fourier": "fourier", "liblinear": "liblinear", "libsvm": "libsvm_ref", "mpu": "mpu",
    "norma": "primal_sgd", "ocas": "ocas", "pegasos": "pegasos", "perceptron": "perceptron", "sbp": "sbp",
    "sdca": "sdca", "sgd": "primal_sgd", "sgd-m": "sgd_revisited", "sgd-r": "sgd_revisited",
    "sgd-s": "sgd_revisited", "sgdqn": "sgdqn", "smo": "smo", "svmperf": "svmperf", "svmsgd": "svmsgd",
}


class Registry(dict[str, type[Solver[Any]]]):
    """The registered solver classes by name, importing a built-in solver's module (:data:`BUILT_IN`)
    when the solver is first looked up, and every one when all are listed.

    A run imports the modules of its own solvers only: each module's compiled functions cost the
    process's start some milliseconds (numba's dispatchers, their cache folders), some 40 ms for
    all of them against a few for one (issue #48).
    """

    def _load(self, name: object) -> None:
        """Import the module of built-in solver ``name`` unless it is registered (nothing for other names)."""
        if isinstance(name, str) and name in BUILT_IN and not dict.__contains__(self, name):
            importlib.import_module(f"sbpbench.solvers.{BUILT_IN[name]}")

    def _load_all(self) -> None:
        for name in BUILT_IN:
            self._load(name)

    def __getitem__(self, name: str) -> type[Solver[Any]]:
        self._load(name)
        return dict.__getitem__(self, name)

    def __contains__(self, name: object) -> bool:
        self._load(name)
        return dict.__contains__(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        self._load(name)
        return dict.get(self, name, default)

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._load_all()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._load_all()
        return dict.keys(self)

    def values(self) -> Any:
        self._load_all()
        return dict.values(self)

    def items(self) -> Any:
        self._load_all()
        return dict.items(self)


#: Every registered solver class by name.
SOLVERS: Registry = Registry()

S = TypeVar("S", bound=type[Solver[Any]])


def register(cls: S) -> S:
    """Class decorator adding a solver to :data:`SOLVERS`.

    Raises
    ------
    ValueError
        The name is taken, or a parameter has a reserved name (:func:`misnamed`).
    """
    if dict.__contains__(SOLVERS, cls.name):
        raise ValueError(f"solver {cls.name!r} registered twice")
    if (why := misnamed(cls)) is not None:
        raise ValueError(why)
    SOLVERS[cls.name] = cls
    return cls
