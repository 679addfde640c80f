"""scikit-learn estimators over the kernel solvers: SBP, Pegasos, SDCA, SMO and the Perceptron.

One class per solver (:class:`SBPClassifier`, :class:`PegasosClassifier`,
:class:`SDCAClassifier`, :class:`SMOClassifier`, :class:`PerceptronClassifier`), each with the
solver's natural parameters as its own constructor arguments, so that ``GridSearchCV`` searches
them by name (``{"nu": [...], "sigma2": [...]}``, ``{"svm__C": [...]}`` in a ``Pipeline``)
and ``get_params``/``set_params``/``clone`` work as for any scikit-learn estimator. A class's
parameters are, in this order (:meth:`KernelClassifier.declared`):

* the kernel (:class:`~sbpbench.kernels.KernelSpec`'s declarations): ``kernel`` (its ``name``),
  ``sigma2`` (the Gaussian kernel ``exp(-||x - x'||^2 / (2 sigma2))``), ``cache_mb``;
* the problem (:class:`~sbpbench.problem.ProblemParams`'): ``C`` or ``lam`` for the solvers that
  need lambda (``lambda = 1/(C n)`` for n training examples, the papers' and LIBSVM's C), ``nu``
  for SBP, ``bias`` for the solvers that take one;
* the solver's own declared parameters (``SolverParams.declared()``, e.g. SBP's ``eta0``,
  SMO's ``eps``), with the same defaults and checks as in a config;
* the budget of each binary problem (:class:`~sbpbench.solvers.base.Budget`'s limits):
  ``epochs``, ``kernel_evals``, ``seconds``, whichever comes first;
* ``random_state`` for the solvers that draw at random (all but SMO).

Each is read from its one declaration (type, doc, check), with a config's defaults but where a
scikit-learn user expects others (:data:`ESTIMATOR_PARAMS`): ``sigma2='scale'``, SVC's
``gamma='scale'`` (:func:`~sbpbench.kernels.bandwidth.scale_sigma2`; ``'median'`` as in a
config); ``C = 1``; SBP's ``nu`` near what ``C = 1`` gives
(no closed form relates them); and each class's ``epochs``
(:attr:`KernelClassifier.default_epochs`): 0.5 for SBP, 5 for Pegasos, 3 for SDCA, 20 for the
Perceptron, none for SMO, which stops at ``eps`` as SVC does at its ``tol``. The epochs are the
fewest that keep the accuracy target below on the bundled data (``tests/test_estimators.py``
holds each default to it), since a fit's time is proportional to them. So a default fit in a
``MinMaxScaler`` pipeline scores within 1 percentage point of ``SVC()``'s on scikit-learn's
breast-cancer and digits data (``tests/test_estimators.py`` holds each estimator to it with
``random_state=0``, on the 10 digits too; the Perceptron's last iterate, unregularized, is 1.1
points below on breast-cancer on average over seeds). More than two classes are trained
one-vs-one by default (``multi_class='ovo'``, SVC's scheme), except by the Perceptron, whose
pairs scored 1.2 points below SVC() on the 10 digits (5-fold; 0.7 one-vs-rest), so it keeps
one-vs-rest (:attr:`KernelClassifier.default_multi_class`); one-vs-one scored at least as well
as one-vs-rest for the others (SBP 98.7% against 98.3%, Pegasos 98.5% against 98.2%). Data of
fewer than :data:`ONE_THREAD_BELOW` values are fitted and scored on one thread (numba's and the
BLAS's), as SVC fits: their rows are too short for threads to pay, a row split over threads
waits for a busy core, and the BLAS's idle threads spin on a core after each product (the same
numbers either way).

Fitting builds the problem through the same API as the runner: one counting
:class:`~sbpbench.kernels.Kernel` over the training data, a
:class:`~sbpbench.problem.Problem` per binary problem, ``SOLVERS[name].create(problem, rng,
params)``, :meth:`~sbpbench.solvers.base.Solver.advance` to the budget and
:meth:`~sbpbench.solvers.base.Solver.snapshot`. Two classes are one binary problem (the second
of ``classes_`` is +1). More are, with ``multi_class='ovo'``, a problem per pair of classes
``(i, j)``, ``i < j`` in the order ``(0, 1), (0, 2), ..., (1, 2), ...``, on the two classes'
examples only, class ``i`` +1 (SVC's order and sign; :func:`binary_problems`): its kernel is
the fit kernel's :meth:`~sbpbench.kernels.Kernel.subset` over those examples, with its own row
cache and counters, as LIBSVM caches each pair apart; its ``C`` is the fit's (``lambda = 1/(C
n_ij)`` for its ``n_ij`` examples), ``nu`` the fit's, and the budget is per problem, so
``epochs`` counts passes over its own examples (a pair of digits' 2 epochs are 2 n_ij
iterations) and ``kernel_evals`` and ``seconds`` limit each problem. With ``'ovr'``, a problem
per class ``k`` against the others on all the examples, the problems sharing the fit kernel's
row cache (``Kernel.reset(keep_cache=True)``): a row is computed once and counted once per
class. Either way ``kernel_evals_`` sums the problems' kernels' counts. Binary problem
``k`` draws from ``numpy.random.default_rng([seed, k])``, where ``seed`` is ``random_state``
(an integer; drawn from the given ``RandomState``, or numpy's global one for None), so a fit
can be replayed with the solver itself.

A fitted estimator keeps arrays only (the kernel and the solvers are not kept, so it pickles
small): ``support_vectors_`` and the coefficients, as scikit-learn's ``SVC`` does. Predicting
builds a counting kernel over ``support_vectors_`` and scores through its measurement path
(:meth:`~sbpbench.kernels.Kernel.decision`), the same code that measures test error in a run;
its evaluations are that kernel's, never added to ``kernel_evals_``.

Example weights (``fit``'s ``sample_weight``, the ``class_weight`` parameter, as SVC's) are
taken where the solver's problem has them: SDCA and SMO solve the dual with a box per example,
``C_i = C sample_weight_i class_weight[y_i]`` (LIBSVM's, :class:`WeightedFit`). The others have
no ``class_weight`` and their ``fit`` no ``sample_weight`` parameter (scikit-learn's way of
saying so: meta-estimators check ``fit``'s signature), and a ``sample_weight`` given is a
TypeError saying why (:attr:`KernelClassifier.unweighted_because`) and which estimators take
weights: SBP's slack budget ``sum_i xi_i <= n nu`` with weights would be a capped simplex of
unequal caps, which the paper's water level (equal caps ``1/(n nu)``) does not solve; Pegasos's
weighted hinge loss is a problem, but its projection radius ``1/sqrt(lambda)`` and its steps are
derived for unit weights and weighted versions are not implemented; the Perceptron minimizes no
objective that weights could enter.

A parameter that is not allowed, and a problem the solver refuses
(:meth:`~sbpbench.solvers.base.Solver.refuse`), end ``fit`` with a ValueError naming the
parameter; nothing is checked in ``__init__`` or ``set_params`` (scikit-learn's convention).
"""

from __future__ import annotations

import inspect
import itertools
import math
import numbers
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import cache
from typing import Any, ClassVar

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import _ovr_decision_function, check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
from threadpoolctl import ThreadpoolController

from sbpbench.errors import shown
from sbpbench.kernels import Kernel, KernelSpec
from sbpbench.kernels.bandwidth import RULES as SIGMA2_RULES
from sbpbench.kernels.detect import squared_norms
from sbpbench.params import MAX_INT, Param, positive
from sbpbench.problem import Problem, ProblemParams
from sbpbench.solvers import SOLVERS, ProblemKind, Snapshot, Solver
from sbpbench.solvers.base import Budget

#: ``sigma2`` computed from the training data as SVC's ``gamma='scale'``
#: (:func:`~sbpbench.kernels.bandwidth.scale_sigma2`), the default; ``'median'`` is the other word of
#: :data:`~sbpbench.kernels.bandwidth.RULES`, as in a config.
SCALE = "scale"

#: The ways of training more than two classes (``multi_class``), and the decision function's
#: shapes (``decision_function_shape``): one-vs-one, one-vs-rest.
SCHEMES = ("ovo", "ovr")


def binary_problems(codes: np.ndarray, n_classes: int, scheme: str) -> list[tuple[np.ndarray | None, np.ndarray]]:
    """The binary problems of a fit, each as (its examples' indices, None for all; their labels).

    Parameters
    ----------
    codes : numpy.ndarray of int
        Each example's class, ``0 .. n_classes - 1``.
    n_classes : int
        At least 2.
    scheme : {"ovo", "ovr"}
        For more than two classes: a problem per pair ``(i, j)``, ``i < j`` in lexicographic
        order, on the two classes' examples with class ``i`` +1 (SVC's order and sign), or a
        problem per class ``k`` on all the examples with class ``k`` +1.

    Returns
    -------
    list of (numpy.ndarray or None, numpy.ndarray)
        Two classes: one problem on all the examples, class 1 +1.
    """
    if n_classes == 2:
        return [(None, np.where(codes == 1, 1.0, -1.0))]
    if scheme == "ovr":
        return [(None, np.where(codes == k, 1.0, -1.0)) for k in range(n_classes)]
    problems: list[tuple[np.ndarray | None, np.ndarray]] = []
    members = [np.flatnonzero(codes == k) for k in range(n_classes)]
    for i, j in itertools.combinations(range(n_classes), 2):
        rows = np.concatenate((members[i], members[j]))
        rows.sort()  # the two classes' examples in their order in the data
        problems.append((rows, np.where(codes[rows] == i, 1.0, -1.0)))
    return problems


#: Where an estimator's parameter differs from the config key of the same declaration, by
#: parameter: what its doc adds to the declaration's line, and the fields of the declaration it
#: replaces (a default a scikit-learn user expects, words allowed in place of a value).
ESTIMATOR_PARAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "sigma2": ("'scale': n_features X.var() / 2 over the training data, which makes the kernel SVC's "
               "gamma='scale' (gamma = 1/(2 sigma2) = 1/(n_features X.var())); 'median': half the median "
               "squared distance between two training examples (of a fixed sample of 1000), as in a config",
               {"default": SCALE, "keywords": tuple(SIGMA2_RULES)}),
    "C": ("C = 1 as in SVC (lambda = 1/n)", {"default": 1.0, "optional": False}),
    "lam": ("given instead of C (C then keeps its default)", {}),
    "nu": ("no closed form gives it from C: nu = (mean hinge loss)/||w|| of the lambda-problem's optimum "
           "makes the two problems one (the SBP paper, Section 5); C = 1 gives 0.0086, 0.0039 and 0.0029 on "
           "scikit-learn's breast-cancer, wine and digits data scaled to [0, 1]; 0.002, as digits' one-vs-rest "
           "problems need, also holds breast-cancer within 1 point of SVC()", {"default": 0.002,
                                                                                    "optional": False}),
    "seconds": ("numba's compilation in a process's first fit included", {}),
}


def estimator_param(name: str, p: Param) -> Param:
    """Declaration ``p`` of parameter ``name`` as the estimators take it (:data:`ESTIMATOR_PARAMS`)."""
    note, changes = ESTIMATOR_PARAMS.get(name, ("", {}))
    return replace(p, doc=f"{p.doc}; {note}" if note else p.doc, **changes)


#: Data of fewer values (nonzeros when sparse) than this are fitted and scored on one thread, of
#: numba and of the BLAS: a kernel row of them costs at most about 0.4 ms on one thread, and a row
#: split over threads waits for every thread, which on a busy machine is a scheduler time slice (a
#: median 16 ms against 40 microseconds on one thread for a row of scikit-learn's digits, 2 busy
#: cores). The BLAS's threads (the scores' inner products) cost more on small blocks than they
#: save, and OpenBLAS's idle threads spin on a core for a while after each call, slowing what
#: runs next (in ``scripts/bench_estimators.py``, which scores after each fit, the next fit).
ONE_THREAD_BELOW = 2**20


@cache
def _blas() -> ThreadpoolController:
    """The BLAS libraries numpy and scipy loaded (made once: it inspects the loaded libraries)."""
    return ThreadpoolController()


@contextmanager
def threads_for(values: int) -> Iterator[None]:
    """One thread in this thread for the block when ``values`` is below :data:`ONE_THREAD_BELOW`:
    numba's (its setting is per thread) and the BLAS's; then as they were. numba's count changes
    no number (every threaded loop gives its serial loop's bits); the BLAS splits a product's
    output among its threads, each entry summed by the same kernel."""
    if values >= ONE_THREAD_BELOW:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with _blas().limit(limits=1, user_api="blas"):
            yield
    finally:
        numba.set_num_threads(before)


#: What a parameter of each type must be, for error messages.
EXPECTED = {bool: "True or False", int: f"an integer of at most {MAX_INT} in absolute value", float: "a finite number",
            str: "a string"}


def _finite(value: numbers.Real) -> bool:
    """Whether a real number is finite as a double (an integer too large for one is not)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def checked(owner: str, name: str, value: Any, spec: Param) -> Any:
    """``value`` of parameter ``name`` as ``spec.type`` (or None, or one of ``spec.keywords``, where
    the declaration allows it), or a ValueError naming the parameter.

    Parameters
    ----------
    owner : str
        The estimator's class name, for the message.
    name : str
        The parameter.
    value : Any
        Its value.
    spec : Param
        Its declaration: type, allowed values and check.

    Returns
    -------
    Any
        ``value`` converted to ``spec.type`` (numpy scalars to Python ones).

    Raises
    ------
    ValueError
        When ``value`` is not of the type, not among the choices or refused by the check.
    """
    if (value is None and spec.optional) or (isinstance(value, str) and value in spec.keywords):
        return value
    is_bool = isinstance(value, (bool, np.bool_))
    if spec.type is bool:
        ok = is_bool
    elif spec.type is int:
        ok = isinstance(value, numbers.Integral) and not is_bool and abs(int(value)) <= MAX_INT
    elif spec.type is float:
        ok = isinstance(value, numbers.Real) and not is_bool and _finite(value)
    else:
        ok = isinstance(value, spec.type)
    if not ok:
        raise ValueError(f"{owner}: parameter {name!r}: expected {spec.type_name(EXPECTED[spec.type])}, "
                         f"got {shown(value)}")
    value = spec.type(value)
    if (why := spec.error(value)) is not None:
        raise ValueError(f"{owner}: parameter {name!r}={shown(value)}: {why}")
    return value


class KernelClassifier(ClassifierMixin, BaseEstimator):
    """Base of the estimators: a kernel solver of :data:`~sbpbench.solvers.SOLVERS` as a classifier.

    A subclass names its solver in ``solver``, takes every parameter of :meth:`declared` (plus
    ``random_state`` when ``draws``) as a keyword argument of its ``__init__``, and gets its
    docstring's Parameters and Attributes sections written from the declarations.
    """

    #: The name of the solver in :data:`~sbpbench.solvers.SOLVERS`.
    solver: ClassVar[str]
    #: Whether the solver draws at random (then the estimator takes ``random_state``).
    draws: ClassVar[bool] = True
    #: Whether the solver stops by itself (then a fit without any budget is allowed).
    converges: ClassVar[bool] = False
    #: The ``epochs`` of a default fit (None: none, for a solver that stops by itself).
    default_epochs: ClassVar[float | None] = 10.0
    #: Whether the solver takes example weights (then the estimator takes ``class_weight`` and
    #: ``fit``'s ``sample_weight``, :class:`WeightedFit`).
    weighted: ClassVar[bool] = False
    #: Why the solver takes no example weights (for one that does not): ``fit``'s refusal of a
    #: ``sample_weight`` says it after the solver's name.
    unweighted_because: ClassVar[str] = ""
    #: The default of ``multi_class``: SVC's one-vs-one where it scores as well (module docstring).
    default_multi_class: ClassVar[str] = "ovo"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "solver"):  # not an intermediate base (WeightedFit)
            cls.__doc__ = inspect.cleandoc(cls.__doc__ or "") + "\n\n" + cls._sections()

    @classmethod
    def solver_class(cls) -> type[Solver[Any]]:
        """The solver class this estimator runs."""
        return SOLVERS[cls.solver]

    @classmethod
    def declared(cls) -> dict[str, Param]:
        """Every parameter of the estimator but ``random_state``, by name, in signature order.

        Returns
        -------
        dict of str to Param
            The kernel's, the problem's (those the solver needs or takes), the solver's own
            (``Params.declared()``) and the budget's.
        """
        if cls not in _DECLARED:  # built once per class: each fit reads them (a fixed cost on small data)
            _DECLARED[cls] = cls._declare()
        return dict(_DECLARED[cls])

    @classmethod
    def _declare(cls) -> dict[str, Param]:
        """:meth:`declared`, built from the declarations."""
        solver = cls.solver_class()
        kernel, problem, budget = KernelSpec.declared(), ProblemParams.declared(), Budget.declared()
        found = {"kernel": kernel["name"], "sigma2": kernel["sigma2"], "cache_mb": kernel["cache_mb"]}
        if "lambda" in solver.needs:
            found.update(C=problem["C"], lam=problem["lam"])
        if "nu" in solver.needs:
            found["nu"] = problem["nu"]
        if solver.supports_bias:
            found["bias"] = problem["bias"]
        found.update(solver.Params.declared())
        found.update({name: budget[name] for name in Budget.LIMITS})
        found["epochs"] = replace(found["epochs"], default=cls.default_epochs)
        return {name: estimator_param(name, p) for name, p in found.items()}

    @classmethod
    def _sections(cls) -> str:
        """The docstring's Parameters and Attributes sections, written from :meth:`declared`."""
        lines = ["Parameters", "----------"]
        for name, spec in cls.declared().items():
            lines += [f"{name} : {spec.type_name()}, default={spec.default!r}",
                      f"    {spec.doc[0].upper()}{spec.doc[1:]}."]
        if cls.draws:
            lines += ["random_state : int, RandomState instance or None, default=None",
                      "    Seed of the binary problems' generators (see the module docstring)."]
        if cls.weighted:
            lines += ["class_weight : dict, 'balanced' or None, default=None",
                      "    Multiplies the box C_i of class i's examples (C_i = C class_weight[y_i] sample_weight_i, "
                      "as SVC's); 'balanced': n_samples / (n_classes count(y_i))."]
        lines += ["probability : bool, default=False",
                  "    Also fit Platt scaling for predict_proba (see :meth:`KernelClassifier.predict_proba`).",
                  f"multi_class : {{'ovo', 'ovr'}}, default={cls.default_multi_class!r}",
                  "    More than two classes: a binary problem per pair of classes on their examples (SVC's), or "
                  "per class against the rest on all the examples (see the module docstring).",
                  "decision_function_shape : {'ovr', 'ovo'}, default='ovr'",
                  "    decision_function of a one-vs-one fit: a column per class from the pairs' votes and "
                  "confidences, or the pairs' values (see :meth:`KernelClassifier.decision_function`)."]
        return "\n".join(lines) + "\n\n" + FITTED_ATTRIBUTES

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, **unsupported: Any) -> KernelClassifier:
        """Train one binary problem (two classes) or one per class against the rest.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training examples (sparse input is used as CSR).
        y : array-like of shape (n_samples,)
            Class labels, at least two classes.
        **unsupported
            Refused (a TypeError naming the estimator; for ``sample_weight``, why its solver
            takes none and which estimators do), but ``sample_weight=None``. Not a named
            parameter, so that scikit-learn's meta-estimators see that ``fit`` takes no weights.

        Returns
        -------
        self : KernelClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            A parameter that is not allowed (named), a problem the solver refuses, fewer than
            two classes, or data scikit-learn's validation refuses (NaN, infinities, ...).
        TypeError
            A keyword argument other than ``sample_weight=None``.

        Warns
        -----
        ConvergenceWarning
            When a solver that stops by itself (SMO) was stopped by the budget first.
        """
        self._refuse_arguments(unsupported)
        return self._fit(X, y, None)

    def _refuse_arguments(self, given: dict[str, Any]) -> None:
        """A TypeError naming the estimator for keyword arguments ``fit`` does not take
        (``sample_weight=None`` is none): for ``sample_weight``, why the solver takes no weights
        and which estimators take them."""
        given = {name: value for name, value in given.items() if not (name == "sample_weight" and value is None)}
        owner = type(self).__name__
        if "sample_weight" in given:
            takers = " and ".join(e.__name__ for e in ESTIMATORS if e.weighted)
            raise TypeError(f"{owner}.fit() takes no sample_weight: solver {self.solver!r} "
                            f"{self.unweighted_because} ({takers} take sample_weight and class_weight)")
        if given:
            raise TypeError(f"{owner}.fit() got unexpected keyword arguments: {', '.join(map(repr, given))}")

    def _fit(self, X: Any, y: Any, sample_weight: Any) -> KernelClassifier:
        """:meth:`fit` with example weights (:meth:`WeightedFit.fit`; None: none)."""
        values = self._parameters()
        solver = self.solver_class()
        params = solver.Params(**{name: values[name] for name in solver.Params.declared()})
        lam, nu, bias = values.get("lam"), values.get("nu"), values.get("bias", False)
        kind = ProblemKind(values["kernel"], bias, solver.needs)  # the estimator gives what the solver needs
        if (why := solver.refuse(kind, params)) is not None:
            raise ValueError(f"{type(self).__name__}: {why}")
        seed = self._seed()
        probability = getattr(self, "probability", False)
        if not isinstance(probability, (bool, np.bool_)):
            raise ValueError(f"{type(self).__name__}: parameter 'probability': expected True or False, "
                             f"got {shown(probability)}")
        scheme = self._scheme()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; got 1 class")
        weights = self._weights(X, codes, classes, sample_weight)
        self._refuse_overflow(squared_norms(X), "training examples")
        self.classes_ = classes  # only now: a fit that failed leaves the estimator unfitted
        self.sigma2_ = values["sigma2"]
        if isinstance(self.sigma2_, str):  # a word of the rules: computed from the training examples
            self.sigma2_ = self._derived("sigma2", self.sigma2_, "sigma2", SIGMA2_RULES[self.sigma2_](X), "")
        spec = KernelSpec(values["kernel"], self.sigma2_, values["cache_mb"])
        snapshots, iterations, kernel_evals, unfinished = [], [], 0, 0
        budget = Budget(**{name: values[name] for name in Budget.LIMITS})  # of each binary problem
        size = X.nnz if sp.issparse(X) else X.size
        with threads_for(size):
            kernel = Kernel(X, spec)
            problems = binary_problems(codes, classes.size, scheme)
            for k, (rows, labels) in enumerate(problems):
                if rows is None:  # all the examples: the classes share the rows, counted per class, computed once
                    kernel.reset(keep_cache=True)
                    part, part_weights = kernel, weights
                else:  # a pair's examples: a kernel of its own (its own cache and counters), as LIBSVM's
                    part, part_weights = kernel.subset(rows), None if weights is None else weights[rows]
                m = part.n
                if "lambda" in solver.needs and values.get("lam") is None:
                    C = values["C"]
                    lam = self._derived("C", C, "lambda", 1.0 / (C * m), f" at n = {m}")  # 0 when C m overflows
                problem = Problem(part, labels, part.X[:0], np.empty(0), lam, nu, bias, weights=part_weights)
                run = solver.create(problem, np.random.default_rng([seed, k]), params)
                if (too_large := budget.too_large(m)) is not None:  # epochs * m past 2**53, as a config's
                    raise ValueError(f"{type(self).__name__}: {too_large.replace('key ', 'parameter ', 1)}")
                limits = budget.limits(m)
                unfinished += not run.advance(limits[0], limits[1], time.perf_counter() + limits[2])
                snapshot = run.snapshot()
                snapshots.append(snapshot if rows is None else replace(snapshot, support=rows[snapshot.support]))
                iterations.append(run.iteration)
                kernel_evals += part.kernel_evals
        if self.converges and unfinished:
            warnings.warn(f"{type(self).__name__}: the budget stopped {unfinished} of {len(problems)} binary "
                          f"problems before solver {self.solver!r} converged; raise epochs, kernel_evals or seconds",
                          ConvergenceWarning, stacklevel=2)
        self._store(X, spec, snapshots)
        self._one_vs_one = classes.size > 2 and scheme == "ovo"
        self.n_iter_ = np.array(iterations, dtype=np.int64)
        self.kernel_evals_ = int(kernel_evals)
        self._platt = self._fit_platt(X, y, sample_weight) if probability else None
        return self

    def _scheme(self) -> str:
        """``multi_class``, checked, and ``decision_function_shape`` checked against it (a
        ValueError naming the parameter)."""
        for name in ("multi_class", "decision_function_shape"):
            if not (isinstance(value := getattr(self, name), str) and value in SCHEMES):
                raise ValueError(f"{type(self).__name__}: parameter {name!r}: expected 'ovo' or 'ovr', "
                                 f"got {shown(value)}")
        if self.multi_class == "ovr" and self.decision_function_shape == "ovo":
            raise ValueError(f"{type(self).__name__}: parameter 'decision_function_shape'='ovo' needs "
                             "multi_class='ovo' (one-vs-rest training has no pairs)")
        return str(self.multi_class)

    def _weights(self, X: Any, codes: np.ndarray, classes: np.ndarray, sample_weight: Any) -> np.ndarray | None:
        """Each example's weight, ``sample_weight`` times its class's ``class_weight`` (None when
        both are None); a ValueError for negative weights, weights all zero, or positive weights
        on one class only (as SVC refuses them)."""
        class_weight = getattr(self, "class_weight", None)
        if sample_weight is None and class_weight is None:
            return None
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True, copy=True)
        if class_weight is not None:
            if not (isinstance(class_weight, dict) or (isinstance(class_weight, str) and class_weight == "balanced")):
                raise ValueError(f"{type(self).__name__}: parameter 'class_weight': expected None, 'balanced' or a "
                                 f"dict from class to weight, got {shown(class_weight)}")
            weights *= compute_class_weight(class_weight, classes=classes, y=classes[codes])[codes]
        if not np.all(np.isfinite(weights)) or not weights.any():
            raise ValueError(f"{type(self).__name__}: the example weights (sample_weight times class_weight) must be "
                             "finite, and not all zero")
        if np.unique(codes[weights > 0]).size < 2:  # as SVC: a problem of one class has no separating bias
            raise ValueError(f"{type(self).__name__}: the examples of positive weight (sample_weight times "
                             "class_weight) must belong to at least 2 classes")
        return weights

    def _fit_platt(self, X: Any, y: np.ndarray, sample_weight: Any) -> CalibratedClassifierCV:
        """Platt scaling as ``SVC(probability=True)``: sigmoids fitted on 5-fold cross-validated
        decision values of this estimator's parameters (scikit-learn's ``CalibratedClassifierCV``,
        ``method='sigmoid'``, ``ensemble=False``), whose final model is refitted on all of ``X``
        (with the same example weights)."""
        inner = clone(self).set_params(probability=False, decision_function_shape="ovr")  # a column per class
        calibrated = CalibratedClassifierCV(inner, method="sigmoid", cv=5, ensemble=False)
        return calibrated.fit(X, y) if sample_weight is None else calibrated.fit(X, y, sample_weight=sample_weight)

    def _has_probability(self) -> bool:
        """True with ``probability=True``; else an AttributeError saying how to get probabilities,
        which :func:`~sklearn.utils.metaestimators.available_if` chains to its own (SVC's way:
        ``hasattr(estimator, "predict_proba")`` is False)."""
        if not getattr(self, "probability", False):
            raise AttributeError(f"{type(self).__name__}.predict_proba is not available when probability=False: "
                                 "set probability=True (Platt scaling, about six plain fits' time) and fit again")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities by Platt scaling (needs ``probability=True`` at fit time).

        A sigmoid of each binary problem's decision value, fitted on 5-fold cross-validated
        decision values as LIBSVM's ``-b 1`` does; for more than two classes, a sigmoid of each
        column of the per-class decision values (``decision_function_shape='ovr'``, whatever
        the estimator's shape), normalized to sum to 1 (scikit-learn's
        ``CalibratedClassifierCV``; SVC couples its one-vs-one pairs' sigmoids instead).
        The probabilities come from the calibrator's own fit on
        all the training data with the same parameters, which for a solver that draws with
        ``random_state=None`` may differ from this estimator's fit, so ``predict`` and the
        largest probability can disagree near the boundary, as with SVC.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Points to score.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self, "support_vectors_")
        if self._platt is None:
            raise NotFittedError(f"{type(self).__name__} was fitted with probability=False: fit it again with "
                                 "probability=True to call predict_proba")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(self._platt.predict_proba(X))

    def _parameters(self) -> dict[str, Any]:
        """Every declared parameter's value, checked (:func:`checked`), by name."""
        owner = type(self).__name__
        declared = self.declared()
        values = {name: checked(owner, name, getattr(self, name), spec) for name, spec in declared.items()}
        if values.get("lam") is not None and values["C"] != declared["C"].default:
            raise ValueError(f"{owner}: give parameter 'C' or 'lam', not both (lambda = 1/(C n))")
        if not self.converges and all(values[name] is None for name in Budget.LIMITS):
            raise ValueError(f"{owner}: solver {self.solver!r} does not stop by itself: give at least one of the "
                             f"parameters {', '.join(map(repr, Budget.LIMITS))}")
        return values

    def _refuse_overflow(self, sq: np.ndarray, what: str) -> None:
        """Refuse examples of squared norms ``sq`` whose kernel values overflow a float64.

        Every inner product, and every squared distance ``||x||^2 + ||x'||^2 - 2 <x, x'>``, is at
        most four times the largest squared norm in absolute value, so data for which that is
        finite have finite kernel values; others (features near 1e155) would give infinite or
        undefined ones, on which a solver fits an all-zero model or never converges. SVC refuses
        them too.

        Raises
        ------
        ValueError
            ``CLASS: the inner products of the WHAT overflow a float64 ...``.
        """
        largest = float(np.max(sq, initial=0.0))
        if not math.isfinite(4.0 * largest):
            norm = f"{largest:.3g}" if math.isfinite(largest) else "more than the largest float64"
            raise ValueError(f"{type(self).__name__}: the inner products of the {what} overflow a float64 "
                             f"(a squared norm of {norm}, where at most {np.finfo(float).max / 4:.3g} "
                             "keeps every kernel value finite); scale the features down")

    def _derived(self, name: str, value: Any, what: str, derived: float, where: str) -> float:
        """``derived``, the value of ``what`` that parameter ``name`` = ``value`` gives, when it is a
        finite positive number (:func:`~sbpbench.params.positive`); else a ValueError naming ``name``."""
        why = positive(derived) if math.isfinite(derived) else "expected a finite number"
        if why is not None:
            raise ValueError(f"{type(self).__name__}: parameter {name!r}={shown(value)}: gives {what} = "
                             f"{derived!r}{where}: {why}")
        return derived

    def _seed(self) -> int:
        """The seed of the binary problems' generators, from ``random_state``."""
        state = getattr(self, "random_state", 0)  # SMOClassifier draws nothing and has no random_state
        if isinstance(state, numbers.Integral) and not isinstance(state, (bool, np.bool_)) and int(state) >= 0:
            return int(state)
        if state is None or isinstance(state, np.random.RandomState):
            return int(check_random_state(state).randint(np.iinfo(np.int32).max))
        raise ValueError(f"{type(self).__name__}: parameter 'random_state': expected None, an integer >= 0 or a "
                         f"numpy RandomState, got {shown(state)}")

    def _store(self, X: Any, spec: KernelSpec, snapshots: list[Snapshot]) -> None:
        """Keep the predictors of the binary problems as arrays over their joint support."""
        self.support_ = np.unique(np.concatenate([s.support for s in snapshots])).astype(np.intp)
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = np.zeros((len(snapshots), self.support_.size))
        for k, snapshot in enumerate(snapshots):
            self.dual_coef_[k, np.searchsorted(self.support_, snapshot.support)] = snapshot.coef
        self.intercept_ = np.array([s.bias for s in snapshots], dtype=np.float64)
        # predicting uses the kernel of the fit, not the parameters as they may be set later
        self._kernel_spec = KernelSpec(spec.name, spec.sigma2, cache_mb=0.0)

    # -- predicting --------------------------------------------------------------------------
    def _problem_scores(self, X: Any) -> np.ndarray:
        """Decision values of each binary problem, one column per row of ``dual_coef_``."""
        check_is_fitted(self, "support_vectors_")  # n_features_in_ alone: a fit that failed
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        self._refuse_overflow(squared_norms(X), "points")
        size = sum(A.nnz if sp.issparse(A) else A.size for A in (X, self.support_vectors_))
        with threads_for(size):
            kernel = Kernel(self.support_vectors_, self._kernel_spec)
            points = kernel.prepare(X)
            scores = np.empty((X.shape[0], self.dual_coef_.shape[0]))
            for k, coef in enumerate(self.dual_coef_):
                support = np.flatnonzero(coef)
                scores[:, k] = kernel.decision(points, support, coef[support], float(self.intercept_[k]))
        return scores

    def _class_scores(self, scores: np.ndarray) -> np.ndarray:
        """One column per class from more than two classes' problem scores: the one-vs-rest
        values, or the pairs' votes plus their confidences (scikit-learn's SVC, below)."""
        if not self._one_vs_one:
            return scores
        return _ovr_decision_function(scores < 0, -scores, self.classes_.size)

    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values from ``f_k(x) = sum_j dual_coef_[k, j] K(support_vectors_[j], x) + intercept_[k]``.

        Two classes: ``f_0``, positive for ``classes_[1]``. More, trained one-vs-rest: ``f_k``
        of class ``k`` against the rest, a column per class. Trained one-vs-one: with
        ``decision_function_shape='ovo'`` the pairs' ``f_k``, a column per pair ``(i, j)``,
        ``i < j`` in the order ``(0, 1), (0, 2), ..., (0, K-1), (1, 2), ...``, positive for
        ``classes_[i]`` (SVC's order and sign); with ``'ovr'`` (the default) a column per class,
        SVC's: the votes of the pairs plus their summed confidences ``s`` mapped to
        ``s / (3 (|s| + 1))``, which breaks ties of votes and never outweighs one
        (scikit-learn's ``_ovr_decision_function``). The shape is read now, as SVC reads it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Points to score.

        Returns
        -------
        numpy.ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_pairs)
            As above; the largest of a column per class wins.

        Raises
        ------
        ValueError
            ``decision_function_shape`` not 'ovo' or 'ovr', or 'ovo' for a one-vs-rest fit.
        """
        self._scheme()
        scores = self._problem_scores(X)
        if self.classes_.size == 2:
            return scores[:, 0]
        return scores if self.decision_function_shape == "ovo" else self._class_scores(scores)

    def predict(self, X: Any) -> np.ndarray:
        """The class of each point: ``classes_[1]`` where the decision value is positive (two
        classes), else the class whose column of the per-class decision values (one-vs-rest, or
        ``decision_function_shape='ovr'`` of one-vs-one) is largest, whatever the shape: with
        one-vs-one the most votes, ties broken by confidence (SVC's ``break_ties=True``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Points to classify.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
        """
        scores = self._problem_scores(X)
        if self.classes_.size == 2:
            return self.classes_[(scores[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(self._class_scores(scores), axis=1)]

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags: sparse input is accepted."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


#: :meth:`KernelClassifier.declared` of each class, once built.
_DECLARED: dict[type[KernelClassifier], dict[str, Param]] = {}


#: The Attributes section of every estimator's docstring.
FITTED_ATTRIBUTES = """Attributes
----------
classes_ : numpy.ndarray of shape (n_classes,)
    The class labels; with two, ``classes_[1]`` is the positive class (+1).
support_ : numpy.ndarray of shape (n_SV,)
    Indices of the training examples with a nonzero coefficient in at least one binary
    problem, increasing. The problems: one for two classes; else one per pair of classes
    ``(i, j)``, ``i < j``, ``(0, 1), (0, 2), ..., (1, 2), ...`` (one-vs-one, class ``i`` +1,
    as SVC orders them) or one per class (one-vs-rest).
support_vectors_ : numpy.ndarray or scipy.sparse.csr_matrix of shape (n_SV, n_features)
    Those training examples.
dual_coef_ : numpy.ndarray of shape (n_problems, n_SV)
    The solver's coefficients: binary problem ``k`` predicts
    ``f_k(x) = sum_j dual_coef_[k, j] K(support_vectors_[j], x) + intercept_[k]``
    (``alpha_j y_j`` as the solver outputs it, e.g. SBP's averaged iterate divided by its
    margin; zero where an example is no support vector of problem ``k``, and where it is not
    one of a pair's examples). One row per problem, not SVC's ``(n_classes - 1, n_SV)``
    layout of one-vs-one coefficients: ``decision_function`` with
    ``decision_function_shape='ovo'`` gives these ``f_k``, SVC's pair values.
intercept_ : numpy.ndarray of shape (n_problems,)
    The bias of each binary problem (0 without ``bias``).
sigma2_ : float
    The Gaussian kernel's sigma^2 in the fit: ``sigma2``, or the number ``'scale'`` gave.
kernel_evals_ : int
    Training kernel evaluations as the counting kernel counts them (``kernel_evals`` of a run:
    the published algorithm's, as if there were no row cache), summed over the binary
    problems; predicting adds nothing. 0 for Pegasos's primal representation (linear
    kernel), which evaluates no kernel.
n_iter_ : numpy.ndarray of shape (n_problems,)
    Iterations of each binary problem (one epoch is its number of examples in iterations).
n_features_in_ : int
    Number of features seen in ``fit``.
feature_names_in_ : numpy.ndarray of shape (n_features_in_,)
    Feature names seen in ``fit``, when ``X`` had string column names."""


class WeightedFit(KernelClassifier):
    """Base of the estimators whose solver takes example weights (SDCA, SMO): ``fit`` takes
    ``sample_weight`` and the estimator ``class_weight``, as SVC's.

    Example ``i`` of binary problem ``k`` gets the box ``C_i = C w_i`` of the weighted dual
    (:attr:`~sbpbench.problem.Problem.weights`: its hinge loss counted ``w_i`` times), with
    ``w_i = sample_weight_i class_weight[y_i]`` (its own class's weight, also in the
    one-vs-rest problems of the other classes; a pair's problem takes its examples' weights).
    Weights of 1 are no weights: the same numbers.
    """

    weighted = True

    def fit(self, X: Any, y: Any, sample_weight: Any = None, **unsupported: Any) -> KernelClassifier:
        """Train as :meth:`KernelClassifier.fit`, each example's loss weighted.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training examples (sparse input is used as CSR).
        y : array-like of shape (n_samples,)
            Class labels, at least two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each example (>= 0, not all 0), multiplied by ``class_weight``'s; None: 1.
        **unsupported
            Refused: a TypeError naming the estimator.

        Returns
        -------
        self : KernelClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            As :meth:`KernelClassifier.fit`; also negative, infinite or all-zero weights, or a
            ``class_weight`` that is not None, 'balanced' or a dict of the classes.
        TypeError
            A keyword argument other than ``sample_weight``.
        """
        self._refuse_arguments(unsupported)
        return self._fit(X, y, sample_weight)


class SBPClassifier(KernelClassifier):
    """The Stochastic Batch Perceptron (the kernelized SBP paper, Algorithm 1; Algorithm 3 with
    ``bias``), maximizing the margin under a slack budget ``nu``. Cost: n kernel evaluations per
    iteration. The predictor is the averaged iterate divided by its margin (``average``)."""

    solver = "sbp"
    unweighted_because = ("keeps a slack budget sum_i xi_i <= n nu, which with weights is a capped simplex of "
                          "unequal caps that the paper's water level does not solve")
    default_epochs = 0.5  # the fewest within 1 point of SVC() on the bundled data (module docstring)

    def __init__(self, *, kernel: str = "gaussian", sigma2: float | str = "scale", cache_mb: float = 256.0,
                 nu: float = 0.002, bias: bool = False, average: bool = True, eta0: float = 0.0,
                 epochs: float | None = 0.5, kernel_evals: float | None = None, seconds: float | None = None,
                 random_state: Any = None, probability: bool = False,
                 multi_class: str = "ovo", decision_function_shape: str = "ovr"):
        self.kernel = kernel
        self.sigma2 = sigma2
        self.cache_mb = cache_mb
        self.nu = nu
        self.bias = bias
        self.average = average
        self.eta0 = eta0
        self.epochs = epochs
        self.kernel_evals = kernel_evals
        self.seconds = seconds
        self.random_state = random_state
        self.probability = probability
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape


class PegasosClassifier(KernelClassifier):
    """Kernel Pegasos (Figure 1 of the Pegasos paper) keeping all responses, as the SBP paper's
    baseline; on the linear kernel by default the primal form of its Section 2. Cost: n kernel
    evaluations per margin violation."""

    solver = "pegasos"
    unweighted_because = ("derives its projection radius 1/sqrt(lambda) and its steps for unit weights "
                          "(a weighted version is not implemented)")
    default_epochs = 5.0  # the fewest within 1 point of SVC() on the bundled data (module docstring)

    def __init__(self, *, kernel: str = "gaussian", sigma2: float | str = "scale", cache_mb: float = 256.0,
                 C: float = 1.0, lam: float | None = None, mini_batch: int = 1, projection: bool = True,
                 representation: str = "auto", epochs: float | None = 5.0, kernel_evals: float | None = None,
                 seconds: float | None = None, random_state: Any = None, probability: bool = False,
                 multi_class: str = "ovo", decision_function_shape: str = "ovr"):
        self.kernel = kernel
        self.sigma2 = sigma2
        self.cache_mb = cache_mb
        self.C = C
        self.lam = lam
        self.mini_batch = mini_batch
        self.projection = projection
        self.representation = representation
        self.epochs = epochs
        self.kernel_evals = kernel_evals
        self.seconds = seconds
        self.random_state = random_state
        self.probability = probability
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape


class SDCAClassifier(WeightedFit):
    """Stochastic dual coordinate ascent (Hsieh et al. 2008), kernelized, coordinates drawn
    uniformly at random. Cost: n kernel evaluations per coordinate step that changes alpha."""

    solver = "sdca"
    default_epochs = 3.0  # the fewest within 1 point of SVC() on the bundled data (module docstring)

    def __init__(self, *, kernel: str = "gaussian", sigma2: float | str = "scale", cache_mb: float = 256.0,
                 C: float = 1.0, lam: float | None = None, epochs: float | None = 3.0,
                 kernel_evals: float | None = None, seconds: float | None = None, random_state: Any = None,
                 class_weight: Any = None, probability: bool = False,
                 multi_class: str = "ovo", decision_function_shape: str = "ovr"):
        self.kernel = kernel
        self.sigma2 = sigma2
        self.cache_mb = cache_mb
        self.C = C
        self.lam = lam
        self.epochs = epochs
        self.kernel_evals = kernel_evals
        self.seconds = seconds
        self.random_state = random_state
        self.class_weight = class_weight
        self.probability = probability
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape


class SMOClassifier(WeightedFit):
    """SMO with LIBSVM's second-order working-set selection; with ``bias`` LIBSVM's C-SVC
    (``C`` is LIBSVM's C). It stops when the KKT violation is below ``eps`` or at the budget,
    whichever comes first (``epochs=None`` with no other budget: at ``eps`` only; a
    ConvergenceWarning says when the budget came first). Deterministic: no ``random_state``.
    Cost: 2n kernel evaluations per iteration with bias, n without."""

    solver = "smo"
    draws = False
    converges = True
    default_epochs = None  # to eps, as SVC runs to its tol

    def __init__(self, *, kernel: str = "gaussian", sigma2: float | str = "scale", cache_mb: float = 256.0,
                 C: float = 1.0, lam: float | None = None, bias: bool = False, eps: float = 1e-3,
                 shrinking: bool = False, epochs: float | None = None, kernel_evals: float | None = None,
                 seconds: float | None = None, class_weight: Any = None, probability: bool = False,
                 multi_class: str = "ovo", decision_function_shape: str = "ovr"):
        self.kernel = kernel
        self.sigma2 = sigma2
        self.cache_mb = cache_mb
        self.C = C
        self.lam = lam
        self.bias = bias
        self.eps = eps
        self.shrinking = shrinking
        self.epochs = epochs
        self.kernel_evals = kernel_evals
        self.seconds = seconds
        self.class_weight = class_weight
        self.probability = probability
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape


class PerceptronClassifier(KernelClassifier):
    """The online kernel Perceptron, a fresh random order of the examples per epoch (the paper
    justifies one epoch). Cost: |SV| kernel evaluations per presented example."""

    solver = "perceptron"
    unweighted_because = "minimizes no objective that weights could enter"
    default_epochs = 20.0  # its last iterate needs them on scikit-learn's bundled data (no regularizer)
    default_multi_class = "ovr"  # its one-vs-one pairs score 1.2 points below SVC() on digits (module docstring)

    def __init__(self, *, kernel: str = "gaussian", sigma2: float | str = "scale", cache_mb: float = 256.0,
                 epochs: float | None = 20.0, kernel_evals: float | None = None, seconds: float | None = None,
                 random_state: Any = None, probability: bool = False,
                 multi_class: str = "ovr", decision_function_shape: str = "ovr"):
        self.kernel = kernel
        self.sigma2 = sigma2
        self.cache_mb = cache_mb
        self.epochs = epochs
        self.kernel_evals = kernel_evals
        self.seconds = seconds
        self.random_state = random_state
        self.probability = probability
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape


#: Every estimator, one per kernel solver.
ESTIMATORS: tuple[type[KernelClassifier], ...] = (SBPClassifier, PegasosClassifier, SDCAClassifier, SMOClassifier,
                                                  PerceptronClassifier)
