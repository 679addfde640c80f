"""From an experiment to the problem every one of its runs solves.

The one place that turns a validated :class:`~sbpbench.experiment.config.Experiment` into
a :class:`~sbpbench.problem.Problem`: load the dataset (subsampled with the experiment's
seed), hold out its validation examples (:func:`hold_out`), compute sigma2 from the training
data when the config gives a rule (:mod:`sbpbench.kernels.bandwidth`), evaluate lambda at the
real training size, derive nu from lambda when asked and an entry reads it (through the exact optimum,
:mod:`sbpbench.experiment.optimum`) and build the counting kernel. The client and every
worker call :func:`prepare`, so they solve the same problem. In a sweep of the kernel or the
problem each solver entry has its own problem
(:meth:`~sbpbench.experiment.config.Experiment.for_solver`), and under k-fold
cross-validation each run (:meth:`~sbpbench.experiment.config.Experiment.for_run`), all built
from the same data.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, cast

import numpy as np

from sbpbench import data, memory
from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.errors import UserError
from sbpbench.experiment.config import Experiment, NuFromLambda, SolverSpec
from sbpbench.experiment.optimum import optimum
from sbpbench.kernels import KernelSpec, memory_needs
from sbpbench.kernels.bandwidth import sigma2_from_data
from sbpbench.problem import Problem
from sbpbench.solvers import SOLVERS
from sbpbench.solvers.base import own_code


def resolve(exp: Experiment, n_train: int) -> dict[str, Any]:
    """Problem parameters with every derived value written out (for ``meta.json``).

    nu is a number, none, or ``"from_lambda"`` (:class:`NuFromLambda`), which :func:`prepare`
    replaces with the derived number.

    Raises
    ------
    UserError
        When lambda is not a finite positive number at the real ``n_train``.
    """
    return {
        "lambda": exp.lambda_at(n_train),
        "lambda_expression": exp.lam,
        "nu": str(exp.nu) if isinstance(exp.nu, NuFromLambda) else exp.nu,
        "bias": exp.bias,
    }


@dataclass
class Prepared:
    """An experiment's problem, built from its dataset, and the facts it was built from.

    Attributes
    ----------
    problem : Problem
        The problem every run of the experiment solves.
    dataset : dict
        The dataset section with the actual sizes and class counts (``meta.json``).
    params : dict
        The problem parameters with derived values written out (see :func:`resolve`).
    kernel : dict
        The kernel's parameters with sigma2 computed, and ``sigma2_rule`` (the config's word)
        when it was computed from the data (:func:`resolve_kernel`), for ``meta.json``.
    seconds : float
        How long building took, loading the data included unless they were given.
    dataset_copy : str or None
        Which copy of a registered dataset was loaded (e.g. the bundled Adult), for ``meta.json``.
    """

    problem: Problem
    dataset: dict[str, Any]
    params: dict[str, Any]
    kernel: dict[str, Any]
    seconds: float
    dataset_copy: str | None = None


def resolve_kernel(exp: Experiment, train: data.Split) -> KernelSpec:
    """The kernel of ``exp`` on training data ``train``: sigma2 computed by the config's rule
    (``scale`` or ``median``, :mod:`sbpbench.kernels.bandwidth`) when it gives one, else as written.

    Raises
    ------
    UserError
        Naming the config and ``kernel.sigma2`` when the rule gives no positive number.
    """
    if exp.sigma2_rule is None:
        return exp.kernel
    try:
        return replace(exp.kernel, sigma2=sigma2_from_data(exp.sigma2_rule, train.X))
    except ValueError as exc:
        raise UserError(f"{exp.source}: key 'kernel.sigma2': {exc}") from None


def hold_out(exp: Experiment, train: data.Split) -> tuple[data.Split, data.Split | None]:
    """The training examples a run trains on, and the validation examples (``dataset.validation``).

    A fraction ``f``: ``round(f n)`` of the ``n`` training examples (at least one, and two
    left to train on), drawn uniformly from the experiment's seed (a stream of its own, so
    the same for every run and solver), are held out; both parts keep file order. A file:
    its examples, with as many features as the training data and labels mapped as the
    training file's (``dataset.positive``, else the larger of two labels is +1). Folds
    (``dataset.folds: k``): the training sample is shuffled from the seed and cut into ``k``
    parts of sizes differing by one at most; fold ``exp.fold`` (0 when None) is held out. None:
    all examples train and there is no validation.

    Raises
    ------
    UserError
        The file is malformed, or the training part keeps a single class.
    """
    if exp.validation is None and exp.folds is None:
        return train, None
    if isinstance(exp.validation, str):
        X, labels = read_libsvm(exp.validation, exp.validation, train.X.shape[1], exp.dataset.zero_based)
        return train, data.Split(X, to_binary(labels, exp.validation, exp.dataset.positive)[0])
    n = train.n
    order = np.random.default_rng([exp.seed, zlib.crc32(b"validation")]).permutation(n)
    if exp.folds is not None:
        if n < 2 * exp.folds:
            raise UserError(f"{exp.source}: key 'dataset.folds': {exp.folds} folds need at least {2 * exp.folds} "
                            f"training examples, there are {n}")
        part = np.array_split(order, exp.folds)[exp.fold or 0]
        held, out = part.size, np.zeros(n, dtype=bool)
        out[part] = True
        kept, validation = train.take(np.flatnonzero(~out)), train.take(np.flatnonzero(out))
    else:
        held = min(max(1, round(cast(float, exp.validation) * n)), n - 2)
        kept, validation = train.take(np.sort(order[held:])), train.take(np.sort(order[:held]))
    if np.unique(kept.y).size < 2:
        raise UserError(f"{exp.source}: key 'dataset.{'folds' if exp.folds else 'validation'}': the {kept.n} "
                        f"training examples left after holding out {held} keep only one class")
    return kept, validation


def load_data(exp: Experiment) -> tuple[data.Split, data.Split]:
    """An experiment's train and test splits, subsampled with its seed (the same for every run).

    Raises
    ------
    UserError
        A data file is malformed, or a subsample is larger than the data.
    """
    return data.load(exp.dataset, np.random.default_rng([exp.seed, zlib.crc32(b"dataset")]))


def check_sizes(exp: Experiment, train: data.Split, test: data.Split) -> None:
    """Check every solver entry against the loaded data, and that a run fits in memory.

    Before anything sized by the data is allocated: each entry's budget must fit its counters
    once multiplied by ``n`` (:meth:`~sbpbench.solvers.base.Budget.too_large`: ``epochs`` times
    ``n`` and ``kernel_evals`` at most 2**53), its parameters must suit the
    data (:meth:`~sbpbench.solvers.base.Solver.refuse_data`: a mini-batch at most ``n``), and
    the kernel's memory (:func:`~sbpbench.kernels.memory_needs`) with that of the entry
    needing the most (:meth:`~sbpbench.solvers.base.Solver.memory_needs`, and the row cache
    when the solver fills it) must fit in the machine's (:func:`sbpbench.memory.require`), as
    one process holds them, one run at a time.

    Raises
    ------
    UserError
        ``CONFIG: key 'budget.NAME': why`` (the entry's own budget: ``CONFIG: solver 'LABEL':
        key 'budget.NAME': why``), ``CONFIG: solver 'LABEL': key 'NAME': why``, or
        (:class:`~sbpbench.memory.TooLarge`)
        ``CONFIG: N training examples of D features: needs about X GiB of memory (...);
        this machine has M GiB``.
    """
    n, d = train.X.shape
    kernel = memory_needs(train.X, test.X, exp.kernel)
    cache = {"kernel row cache": kernel.pop("kernel row cache")}  # emptied between runs
    largest: dict[str, float] = {}
    for spec in exp.solvers:
        if (why := (spec.budget or exp.budget).too_large(n)) is not None:
            whose = f"solver {spec.label!r}: " if spec.budget is not None else ""
            key = why.replace("key '", "key 'budget.", 1)
            raise UserError(f"{exp.source}: {whose}{key}")
        cls, params = SOLVERS[spec.name], spec.solver_params()
        with own_code(cls, "refuse_data"):
            why = cls.refuse_data(params, n, d)
        if why is not None:
            raise UserError(f"{exp.source}: solver {spec.label!r}: {why}")
        with own_code(cls, "memory_needs"):
            needs = {**cls.memory_needs(params, n, d), **(cache if cls.fills_row_cache else {})}
        if sum(needs.values()) > sum(largest.values()):
            largest = needs
    memory.require({**kernel, **largest}, f"{exp.source}: {n} training examples of {d} features")


def reads_nu(exp: Experiment, spec: SolverSpec | None = None, run: int = 0) -> bool:
    """Whether the problem of run ``run`` of entry ``spec`` (:meth:`Experiment.for_run`; the
    experiment's own for None) is solved by an entry whose solver reads nu (``nu`` in its
    :attr:`~sbpbench.solvers.base.Solver.needs`: SBP's).

    Without one, ``nu: from_lambda`` is not derived for that problem: its exact optimum (a solve
    of minutes on a full data set) would serve nothing.
    """
    key = problem_key(exp.for_run(spec, run))
    return any("nu" in SOLVERS[s.name].needs and problem_key(exp.for_run(s, run)) == key for s in exp.solvers)


def prepare(exp: Experiment, splits: tuple[data.Split, data.Split] | None = None,
            derive_nu: bool | None = None) -> Prepared:
    """Load an experiment's data (subsampled with its seed) and build its problem.

    The one place that turns an experiment into a problem: the client and every worker
    call it, so they solve the same problem. The result depends only on
    :func:`problem_key`.

    Parameters
    ----------
    exp : Experiment
        The experiment (for a sweep: :meth:`Experiment.for_solver` of a solver entry).
    splits : tuple of Split, optional
        Its data as :func:`load_data` gives them (the data of a sweep's experiment serve all
        its entries); loaded here when not given.
    derive_nu : bool, optional
        Whether ``nu: from_lambda`` is derived (its exact optimum solved): the caller's
        :func:`reads_nu` of the entry (a sweep's ``exp`` is an entry's variant, which cannot say);
        None: :func:`reads_nu` of ``exp``. Not derived, nu is None.
    """
    t0 = time.perf_counter()
    train, test = splits if splits is not None else load_data(exp)
    train, validation = hold_out(exp, train)
    check_sizes(exp, train, test)
    params = resolve(exp, train.n)
    kernel = resolve_kernel(exp, train)
    problem = Problem.build(train, test, kernel, params["lambda"], None, exp.bias, validation)
    if isinstance(exp.nu, NuFromLambda):
        params["nu_expression"] = NuFromLambda.KEYWORD
        params["nu"] = None  # no entry reads nu: the exact optimum is not solved for nothing
        if reads_nu(exp) if derive_nu is None else derive_nu:
            opt = optimum(problem, exp.dataset.as_dict(), exp.seed)  # cached on disk after the first time
            params["nu"] = opt["nu"]
            params["optimum"] = {k: v for k, v in opt.items() if k != "key"}
    problem = replace(problem, nu=params["nu"])
    dataset = {**exp.dataset.as_dict(), "n_train": train.n, "n_test": test.n, "n_features": train.X.shape[1],
               "positives_train": int((train.y > 0).sum()), "positives_test": int((test.y > 0).sum())}
    if validation is not None:
        dataset.update({"folds": exp.folds} if exp.folds else {"validation": exp.validation},
                       n_validation=validation.n)
    recorded = {**asdict(kernel), **({"sigma2_rule": exp.sigma2_rule} if exp.sigma2_rule else {})}
    return Prepared(problem, dataset, params, recorded, time.perf_counter() - t0, train.provenance)


def resolved_config(exp: Experiment, prep: Prepared,
                    entries: Sequence[tuple[dict[str, Any], dict[str, Any]]] = ()) -> dict[str, Any]:
    """The configuration with every default and derived value written out (``meta.json``'s ``resolved``).

    Parameters
    ----------
    exp : Experiment
        The experiment.
    prep : Prepared
        Its prepared problem (for a sweep: any of its entries', for the dataset).
    entries : sequence of (dict, dict)
        For a sweep of the kernel or the problem (``exp.swept``): the resolved kernel and
        problem (``Prepared.kernel`` and ``Prepared.params``) of each solver entry, in order.
        Each entry of ``solvers`` then records its own ``kernel`` and ``problem``, and the
        top-level ``kernel`` and ``problem`` only the keys whose values all entries share.
    """
    solvers = [{"name": s.name, "label": s.label, "params": asdict(s.solver_params()),
                **({"path": s.path} if s.path is not None else {})} for s in exp.solvers]
    kernel, problem = prep.kernel, prep.params
    if exp.swept:
        kernels, problems = [k for k, _ in entries], [p for _, p in entries]
        for entry, entry_kernel, entry_problem in zip(solvers, kernels, problems, strict=True):
            entry.update(kernel=entry_kernel, problem=entry_problem)
        kernel, problem = _shared(kernels), _shared(problems)
    return {
        "dataset": prep.dataset,
        "kernel": kernel,
        "problem": problem,
        "solvers": solvers,
        "budget": asdict(exp.budget),
        "checkpoints": asdict(exp.checkpoints),
        "runs": exp.runs,
        **({"repeat_deterministic": True} if exp.repeat_deterministic else {}),  # absent: as before it was a key
        "seed": exp.seed,
    }


def _shared(mappings: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The items of the first mapping that every other one has too, with the same value."""
    first, *others = mappings
    return {k: v for k, v in first.items() if all(k in other and other[k] == v for other in others)}


def data_key(exp: Experiment) -> tuple:
    """What determines :func:`load_data`'s splits (a cache key)."""
    return (exp.dataset, exp.seed)


def problem_key(exp: Experiment) -> tuple:
    """What determines :func:`prepare`'s problem (a cache key)."""
    return (*data_key(exp), exp.validation, exp.folds, exp.fold, exp.kernel, exp.sigma2_rule, exp.lam, exp.nu, exp.bias)
