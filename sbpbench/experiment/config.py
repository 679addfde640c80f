"""Experiment configs: YAML in, a validated :class:`Experiment` out, before anything runs.

Every key is checked: an unknown key, a wrong type, an unknown solver or dataset, or an
unreadable file ends with one :class:`~sbpbench.errors.UserError` line naming the file and
the key (with the valid choices). The kernel's, the problem's, the budget's, the
checkpoints' and the solvers' keys are read from their declarations (:mod:`sbpbench.params`:
type, default, check; :data:`DECLARED` names them by section), which the table of
keys in ``docs/configs.md`` follows (``tests/test_docs.py``).

Sweeps: a solver parameter, ``kernel.sigma2``, ``problem.lambda``, ``problem.C`` and
``problem.nu`` may hold a list of values (:data:`SWEEPABLE`). Each solver entry becomes one
entry per combination of its lists and the kernel's and problem's (their Cartesian
product, at most :data:`MAX_SWEEP_ENTRIES` in all), labelled with the values that vary;
an entry that changes the kernel or the problem carries them in
:attr:`SolverSpec.overrides`, and :meth:`Experiment.for_solver` gives the experiment its
runs solve. A list of one value is that value; a config without lists gives the entries
it always gave.

A solver entry may set its own ``kernel`` (a name), ``sigma2``, ``lambda`` (or ``C``), ``nu`` and
``bias`` (:data:`~sbpbench.solvers.base.ENTRY_KEYS`), checked as the top-level keys are: they replace
the experiment's for its runs, through :attr:`SolverSpec.overrides` as a sweep's values do.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from sbpbench.data import REGISTRY, DatasetSpec
from sbpbench.errors import UserError, shown
from sbpbench.experiment.lambdas import lambda_value
from sbpbench.experiment.yamlfile import apply_overrides, load_yaml
from sbpbench.files import file_kind, read_regular
from sbpbench.kernels import KernelSpec
from sbpbench.kernels.bandwidth import RULES as SIGMA2_RULES
from sbpbench.params import MAX_INT, Param, Params, non_negative, param, positive
from sbpbench.problem import ProblemParams
from sbpbench.solvers import SOLVERS, ProblemKind, SolverParams
from sbpbench.solvers.base import ENTRY_KEYS, Budget, own_code
from sbpbench.solvers.external import FILES as FILE_SOLVERS
from sbpbench.solvers.external import load_file


@dataclass(frozen=True)
class NuFromLambda:
    """``problem.nu: from_lambda``: nu is derived from the exact optimum of the lambda-problem.

    nu (the slack budget of the SBP paper's Problem 2.3) is set to the optimum's mean hinge
    loss over its norm, which makes Problems 2.2 and 2.3 equivalent (the paper's Table 2;
    :mod:`sbpbench.experiment.optimum`). The number is known only once the data are loaded,
    so the validated experiment holds this marker and :func:`sbpbench.experiment.assemble.prepare`
    replaces it.
    """

    #: The word a config writes.
    KEYWORD: ClassVar[str] = "from_lambda"

    def __str__(self) -> str:
        return self.KEYWORD


#: What ``problem.nu`` may hold once validated: a number in [0, 1], nu from lambda, or none.
Nu = float | NuFromLambda | None

@dataclass(frozen=True)
class SolverSpec:
    """One entry of ``solvers:`` (one combination of a sweep): a registered solver name (or
    one defined in the Python file ``path``, :mod:`sbpbench.solvers.external`), its
    parameters, a label, optionally its own budget (replacing the experiment's for this
    solver), and the kernel and problem values a sweep sets for it.

    ``overrides`` maps ``kernel`` (a name), ``sigma2``, ``lambda``, ``C`` or ``nu`` to this entry's value, for the
    keys of ``kernel`` and ``problem`` that the config sweeps or the entry sets to a value of its
    own (empty without either), and
    ``bias`` to the entry's problem when the entries solve different ones (a solver entry's
    ``bias`` key, see :func:`_solvers`); :meth:`Experiment.for_solver` applies them.
    """

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    budget: Budget | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    #: The solver's file (absolute) when the config names one (``path``); None for a registered solver.
    path: str | None = None
    #: The key that gave this entry's own lambda (``solvers[k].lambda`` or ``solvers[k].C``),
    #: which errors about it name; None: the experiment's lambda (``problem.lambda`` or ``problem.C``).
    lam_key: str | None = None

    def describe(self) -> str:
        """Parameters and swept kernel/problem values as a stable ``k=v;k=v`` string (the ``params`` column)."""
        return _describe(self.params, self.overrides)

    def solver_params(self) -> SolverParams:
        """The solver's typed parameters: its declared defaults with the values this entry sets."""
        return SOLVERS[self.name].Params(**self.params)


@dataclass(frozen=True)
class Checkpoints(Params):
    """Measurement points: ``per_decade`` log-spaced in kernel evaluations, plus epoch ends."""

    per_decade: int = param(10, "log-spaced checkpoints per decade of kernel evaluations", check=positive)
    epochs: bool = param(True, "also a checkpoint at every epoch boundary (n iterations)")


#: The config sections whose keys are declared parameters, and their declarations (a
#: solver entry's ``budget`` is a ``Budget`` too; the solvers' own are their ``Params``).
DECLARED: dict[str, type[Params]] = {"kernel": KernelSpec, "problem": ProblemParams, "budget": Budget,
                                     "checkpoints": Checkpoints}
#: A config key whose declaration has another name (``lambda`` is a Python keyword).
KEY_OF = {"lam": "lambda"}


#: The axes a config's ``report`` section may set the budgets of the budget tables for
#: (``report.kernel_evals``, ``report.seconds``; :mod:`sbpbench.outputs.budgets`).
REPORT_KEYS = ("kernel_evals", "seconds")


def report_budgets(data: Any, source: str) -> dict[str, tuple[float, ...]]:
    """The budgets a config's ``report`` section sets, by axis.

    Parameters
    ----------
    data : Any
        The section's YAML value (None when absent).
    source : str
        The config's file name, for error messages.

    Returns
    -------
    dict
        For each key of :data:`REPORT_KEYS` present, its positive numbers (one or a list), ascending
        and without repeats.

    Raises
    ------
    UserError
        The section is not a mapping, has another key, or a value is not a positive number.
    """
    section = _Section(source, "report", data)
    section.only(list(REPORT_KEYS))
    read = section.reader(float, check=positive)
    return {key: tuple(sorted(set(section.values(key, read)))) for key in REPORT_KEYS
            if section.data.get(key) is not None}


def declared_keys() -> dict[str, Param]:
    """Every config key read from a declaration, as ``section.key``, with its declaration."""
    return {f"{section}.{KEY_OF.get(name, name)}": p for section, cls in DECLARED.items()
            for name, p in cls.declared().items()}


@dataclass(frozen=True)
class Experiment:
    """A validated experiment."""

    name: str
    dataset: DatasetSpec
    kernel: KernelSpec
    lam: str | float | None
    nu: Nu
    bias: bool
    solvers: tuple[SolverSpec, ...]
    budget: Budget
    checkpoints: Checkpoints
    runs: int
    seed: int
    source: str = ""
    raw: dict = field(default_factory=dict, compare=False)
    lam_key: str = "problem.lambda"
    #: ``kernel.sigma2`` as a word of :data:`~sbpbench.kernels.bandwidth.RULES` (``scale``,
    #: ``median``): sigma2 is computed from the training data when the problem is built
    #: (:func:`sbpbench.experiment.assemble.prepare`), and ``kernel.sigma2`` holds the declared
    #: default until then; None for a number.
    sigma2_rule: str | None = None
    #: ``dataset.validation``: the fraction of the training examples held out to measure a
    #: validation error on (:func:`sbpbench.experiment.assemble.hold_out`), or a LIBSVM file of
    #: validation examples (absolute path); None: no validation error is measured.
    validation: float | str | None = None
    #: ``dataset.folds``: k-fold cross-validation, run ``r`` of every entry validating on fold
    #: ``r`` of the training sample and training on the others (``runs`` is ``k``); None: none.
    folds: int | None = None
    #: The fold the problem of this experiment validates on (:meth:`for_run`); None: fold 0.
    fold: int | None = None
    #: ``report``: the budgets of the tables of test error at fixed budgets, by axis
    #: (:func:`report_budgets`); an axis not given gets its default budgets.
    report: dict[str, tuple[float, ...]] = field(default_factory=dict, compare=False)
    #: ``repeat_deterministic``: run the entries of a deterministic solver ``runs`` times as the
    #: others (for the spread of their seconds); False: once (:meth:`runs_of`).
    repeat_deterministic: bool = False

    def runs_of(self, spec: SolverSpec) -> int:
        """How many times solver entry ``spec`` runs: ``runs``, but once for a deterministic solver.

        A deterministic solver (:attr:`~sbpbench.solvers.base.Solver.deterministic`: it draws
        nothing from its generator) gives the same run of one problem whatever its seed, so its
        entry runs once, counted as one run, unless ``repeat_deterministic`` asks for ``runs``
        (their seconds vary) or k-fold cross-validation gives each run its own fold's problem.
        """
        once = (getattr(SOLVERS.get(spec.name), "deterministic", False) and not self.repeat_deterministic
                and not self.folds)
        return 1 if once else self.runs

    def runs_once(self) -> list[str]:
        """The labels of the entries that run once though ``runs`` asks for more (:meth:`runs_of`),
        as ``meta.json``'s ``runs_once`` records them."""
        return [spec.label for spec in self.solvers if self.runs_of(spec) < self.runs]

    @property
    def swept(self) -> bool:
        """Whether a sweep or an entry's own values give solver entries different kernels or problems
        (see :meth:`for_solver`)."""
        return any(spec.overrides for spec in self.solvers)

    def for_solver(self, spec: SolverSpec) -> Experiment:
        """The experiment whose problem the runs of solver entry ``spec`` solve.

        This experiment itself, but with the kernel and problem values ``spec`` carries
        from a sweep (``sigma2``, ``lambda``, ``C``, ``nu``), or its own ``kernel`` (name) or
        ``bias``, replacing the experiment's.

        Parameters
        ----------
        spec : SolverSpec
            One of this experiment's solver entries.

        Returns
        -------
        Experiment
            ``self`` when ``spec`` carries no such value.
        """
        values = spec.overrides
        if not values:
            return self
        lam, lam_key = self.lam, self.lam_key
        if "lambda" in values:
            lam, lam_key = values["lambda"], spec.lam_key or "problem.lambda"
        if "C" in values:
            lam, lam_key = lambda_of_C(values["C"]), spec.lam_key or "problem.C"
        kernel, rule = self.kernel, self.sigma2_rule
        if "kernel" in values and values["kernel"] != kernel.name:  # no bandwidth but a Gaussian kernel's
            kernel, rule = _sigma2(replace(kernel, name=values["kernel"]), KernelSpec.declared()["sigma2"].default)
        if "sigma2" in values:
            kernel, rule = _sigma2(kernel, values["sigma2"])
        return replace(self, kernel=kernel, lam=lam, lam_key=lam_key, nu=values.get("nu", self.nu),
                       bias=values.get("bias", self.bias), sigma2_rule=rule)

    def for_run(self, spec: SolverSpec | None, run: int) -> Experiment:
        """The experiment whose problem run ``run`` of solver entry ``spec`` solves: that of
        :meth:`for_solver` (this experiment's own for None), validating on fold ``run`` under
        k-fold cross-validation (``folds``)."""
        exp = self if spec is None else self.for_solver(spec)
        return replace(exp, fold=run % self.folds) if self.folds else exp

    def lambda_at(self, n: int) -> float | None:
        """lambda for ``n`` training examples, checked like the config (see :func:`lambda_value`).

        Raises
        ------
        UserError
            Naming the config file and the key the user wrote (``problem.lambda`` or
            ``problem.C``) when lambda is not a finite positive number at this ``n``.
        """
        if self.lam is None:
            return None
        return lambda_value(self.lam, n, lambda msg: _fail(self.source, self.lam_key, msg))


#: The n at which a lambda expression is checked when the config does not give ``dataset.n_train``.
REPRESENTATIVE_N = 1000

# ----------------------------------------------------------------------------- validation helpers


#: Most runs per solver (a larger count is a typo, and its plan alone would fill the memory).
MAX_RUNS = 10_000

#: Most solver entries the sweeps of a config may expand to (a larger grid is a typo).
MAX_SWEEP_ENTRIES = 1000

#: The keys that may hold a list of values (a sweep), as the error on any other key says.
SWEEPABLE = ("only solver parameters, kernel.sigma2, problem.lambda, problem.C and problem.nu take "
             "a list of values to sweep")


def _sigma2(kernel: KernelSpec, value: float | str) -> tuple[KernelSpec, str | None]:
    """``kernel`` with sigma2 ``value`` (a number, or a word of the rules: the declared default
    stands in until the data are known), and the rule (None for a number)."""
    if isinstance(value, str):
        return replace(kernel, sigma2=KernelSpec.declared()["sigma2"].default), value
    return replace(kernel, sigma2=value), None


def lambda_of_C(C: float) -> str:
    """lambda as an expression in n for ``problem.C``: 1/(C n)."""
    return f"1/({C!r}*n)"


def _compact(value: Any) -> str:
    """A swept kernel or problem value for a label: a float as its shortest repr, without a trailing ``.0``."""
    text = repr(value) if isinstance(value, float) else str(value)
    return text[:-2] if isinstance(value, float) and text.endswith(".0") else text


def _describe(params: dict[str, Any], overrides: dict[str, Any]) -> str:
    """Solver parameters and swept kernel/problem values as ``k=v;k=v``, sorted by key."""
    items = [(k, str(v)) for k, v in params.items()] + [(k, _compact(v)) for k, v in overrides.items()]
    return ";".join(f"{k}={v}" for k, v in sorted(items))


def _fail(source: str, key: str, message: str):
    """Raise the one-line error for ``key`` of the config ``source``."""
    raise UserError(f"{source}: key '{key}': {message}")


class _Section:
    """Reads one mapping of the YAML, naming ``file: key`` in every error."""

    def __init__(self, source: str, prefix: str, value: Any):
        self.source, self.prefix = source, prefix
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.fail("", f"expected a mapping, got {type(value).__name__}")
        self.data = value

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def fail(self, name: str, message: str):
        _fail(self.source, self.key(name) if name else (self.prefix or "top level"), message)

    def only(self, allowed) -> None:
        for name in self.data:
            if name not in allowed:
                text = name if isinstance(name, str) and len(name) <= 60 else shown(name)
                self.fail(text, f"unknown key (valid: {', '.join(allowed)})")

    def declarations(self, cls: type[Params]) -> dict[str, Param]:
        """The declarations of ``cls`` by the keys of this section (:data:`KEY_OF`); any other key is refused."""
        declared = {KEY_OF.get(name, name): p for name, p in cls.declared().items()}
        self.only(list(declared))
        return declared

    def declared(self, name: str, p: Param, *, default: bool = True) -> Any:
        """The value of key ``name`` read as its declaration ``p`` says; when absent, the declared
        default (None with ``default=False``)."""
        return self.get(name, p.type, p.default if default else None, p.choices, p.check)

    def get(self, name: str, kind, default=None, choices=None, check=None):
        """The value of key ``name`` checked as ``kind`` (``default`` when absent); a list is refused."""
        if name not in self.data or self.data[name] is None:
            return default
        if isinstance(self.data[name], list):
            self.fail(name, f"expected one value, not a list ({SWEEPABLE})")
        return self.reader(kind, choices, check)(name, self.data[name])

    def reader_of(self, p: Param) -> Callable[[str, Any], Any]:
        """:meth:`reader` for a value of declaration ``p``."""
        return self.reader(p.type, p.choices, p.check)

    def reader(self, kind, choices=None, check=None) -> Callable[[str, Any], Any]:
        """A function ``(name, value) -> value`` checking a value of key ``name`` as :meth:`get` does."""
        def read(name: str, value: Any) -> Any:
            value = coerce(value, kind, lambda msg: self.fail(name, msg))
            if choices is not None and value not in choices:
                self.fail(name, f"{shown(value)} is not one of: {', '.join(map(str, choices))}")
            if check is not None and (msg := check(value)):
                self.fail(name, msg)
            return value
        return read

    def values(self, name: str, read: Callable[[str, Any], Any], default=None) -> list:
        """The values of a key that may hold a list (a sweep), each checked by ``read(key, value)``.

        ``key`` is ``name``, or ``name[i]`` for the i-th value of a list. A scalar gives one
        value, an absent key ``[default]``; an empty list and a repeated value are refused.
        """
        given = self.data.get(name)
        if given is None:
            return [default]
        if not isinstance(given, list):
            return [read(name, given)]
        if not given:
            self.fail(name, "an empty list: a sweep needs at least one value")
        out, seen = [], set()
        for i, item in enumerate(given):
            value = read(f"{name}[{i}]", item)
            if value in seen:
                self.fail(f"{name}[{i}]", f"repeats the value {shown(value)} (each value of a sweep runs once)")
            seen.add(value)
            out.append(value)
        return out


def coerce(value, kind, fail):
    """Check a YAML value against ``kind`` and return it as that type.

    ``int`` accepts whole floats such as 1e6 and at most :data:`MAX_INT` in size; ``float``
    accepts integers and numbers written as strings (YAML reads 1e-4 without a dot as a
    string) and refuses NaN and infinities (also ``1e400``, which overflows). ``fail`` is
    called with the error text and must raise.
    """
    if kind is bool:
        if not isinstance(value, bool):
            fail(f"expected true or false, got {shown(value)}")
        return value
    if kind is int:
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            fail(f"expected an integer, got {shown(value)}")
        if abs(value) > MAX_INT:
            fail(f"expected an integer of at most {MAX_INT} in absolute value, got {shown(value)}")
        return value
    if kind is float:
        number = float(value) if isinstance(value, str) and _is_number(value) else value
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            fail(f"expected a number, got {shown(value)}")
        number = float(number) if abs(number) <= sys.float_info.max else math.inf
        if not math.isfinite(number):
            fail(f"expected a finite number, got {shown(value)}")
        return number
    if kind is str:
        if not isinstance(value, str):
            fail(f"expected a string, got {shown(value)}")
        return value
    raise TypeError(kind)


def _not_a_file(path: str) -> str | None:
    """Why ``path`` cannot be read as a data file (it does not exist, is a folder, a device, a
    named pipe, ...), or None for a regular file; checked with :func:`os.stat`, never opened."""
    try:
        kind = file_kind(os.stat(path).st_mode)
    except OSError as exc:  # also a path the system refuses (too long, ...)
        return f"cannot read file {path} ({exc.strerror or exc})"
    return None if kind is None else f"{path} is {kind}, not a regular file"


def _printable(value: str) -> str | None:
    """Check of a text shown on the console (a label, a file name): no control character."""
    bad = next((c for c in value if unicodedata.category(c) in CONTROL_CATEGORIES), None)
    if bad is None:
        return None
    return (f"{shown(value)} holds the control character U+{ord(bad):04X} "
            "(labels and file names are shown on the console)")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- sections


def _open_fraction(value: float) -> str | None:
    """Check of ``dataset.validation`` as a number: a fraction strictly between 0 and 1."""
    return None if 0 < value < 1 else "must be a fraction of the training examples, strictly between 0 and 1"


def _validation(sec: _Section, base: Path) -> float | str | None:
    """``dataset.validation``: a fraction (a number or a number written as a string), or a LIBSVM
    file (relative to the config's folder) beside ``path``; None when absent."""
    value = sec.data.get("validation")
    if value is None:
        return None
    if isinstance(value, str) and not _is_number(value):
        if sec.data.get("path") is None:
            sec.fail("validation", "a validation file needs 'path' and 'test_path' (LIBSVM files); "
                                   "with a registered dataset give a fraction such as 0.2")
        path = str(value if Path(value).is_absolute() else base / value)
        if (why := _printable(path) or _not_a_file(path)) is not None:
            sec.fail("validation", why)
        return path
    return sec.get("validation", float, check=_open_fraction)


#: Most folds of ``dataset.folds``.
MAX_FOLDS = 100


def _folds(value: int) -> str | None:
    """Check of ``dataset.folds``: from 2 to :data:`MAX_FOLDS`."""
    return None if 2 <= value <= MAX_FOLDS else f"must be from 2 to {MAX_FOLDS} (folds of the training sample)"


def _dataset(source: str, value, base: Path) -> tuple[DatasetSpec, float | str | None, int | None]:
    """The ``dataset`` section, its ``validation`` (see :func:`_validation`) and its ``folds``."""
    if isinstance(value, str):
        value = {"name": value}
    sec = _Section(source, "dataset", value)
    sec.only(["name", "path", "test_path", "n_train", "n_test", "n_features", "positive", "zero_based",
              "validation", "folds"])
    if sec.data.get("validation") is not None and sec.data.get("folds") is not None:
        sec.fail("folds", "give either 'validation' (one split) or 'folds' (k-fold cross-validation), not both")
    name = sec.get("name", str)
    path = sec.get("path", str)
    test_path = sec.get("test_path", str)
    if (name is None) == (path is None):
        sec.fail("", "give either 'name' (a registered dataset) or 'path' and 'test_path' (LIBSVM files)")
    if name is not None and name not in REGISTRY:
        sec.fail("name", f"unknown dataset {shown(name)} (valid: {', '.join(sorted(REGISTRY))})")
    if name is not None and sec.data.get("zero_based") is not None:
        sec.fail("zero_based", "only allowed together with 'path' (a registered dataset knows its indices)")
    if path is not None:
        if test_path is None:
            sec.fail("test_path", "missing: a LIBSVM test file is required with 'path'")
        path, test_path = (str(p if Path(p).is_absolute() else base / p) for p in (path, test_path))
        for key, p in (("path", path), ("test_path", test_path)):
            if (why := _printable(p) or _not_a_file(p)) is not None:
                sec.fail(key, why)
    elif test_path is not None or sec.data.get("positive") is not None:
        sec.fail("test_path" if test_path else "positive", "only allowed together with 'path'")
    return DatasetSpec(
        name=name, path=path, test_path=test_path,
        n_train=sec.get("n_train", int, check=positive),
        n_test=sec.get("n_test", int, check=positive),
        n_features=sec.get("n_features", int, check=positive),
        positive=sec.get("positive", float),
        zero_based=sec.get("zero_based", bool, default=False),
    ), _validation(sec, base), sec.get("folds", int, check=_folds)


#: Swept kernel and problem values by the key a solver entry's ``overrides`` holds them under.
Sweep = dict[str, list[Any]]


def _sigma2_reader(sec: _Section) -> Callable[[str, Any], float | str]:
    """A reader of ``sigma2`` values in section ``sec``: a positive number or a word of :data:`SIGMA2_RULES`."""
    number = sec.reader_of(KernelSpec.declared()["sigma2"])

    def read(key: str, value: Any) -> float | str:
        if isinstance(value, str) and value in SIGMA2_RULES:
            return value
        if isinstance(value, str) and not _is_number(value):
            sec.fail(key, f"expected a positive number or one of {', '.join(SIGMA2_RULES)} (computed from the "
                          f"training data), got {shown(value)}")
        return number(key, value)
    return read


def _kernel(source: str, value, key: str = "kernel") -> tuple[KernelSpec, str | None, Sweep]:
    """The ``kernel`` section (with the first value of a sigma2 sweep), the rule when sigma2 (its
    first value) is a word of :data:`SIGMA2_RULES`, and the sweep of sigma2, if any.

    ``key`` names the section in errors: ``kernel``, or a solver entry's own (``solvers[k].kernel``),
    where only ``name`` is allowed (the entry's bandwidth is its ``sigma2``; the row cache is shared).
    """
    if isinstance(value, str):
        value = {"name": value}
    sec = _Section(source, key, value)
    if key != "kernel":
        sec.only(["name"])
    declared = sec.declarations(KernelSpec)
    name = sec.declared("name", declared["name"])
    sigma2 = sec.values("sigma2", _sigma2_reader(sec), declared["sigma2"].default)
    if len(sigma2) > 1 and name != "gaussian":
        sec.fail("sigma2", f"a sweep of sigma2 needs kernel.name gaussian (the {name} kernel has no bandwidth)")
    if isinstance(sigma2[0], str) and name != "gaussian":
        sec.fail("sigma2", f"{sigma2[0]!r} needs kernel.name gaussian (the {name} kernel has no bandwidth)")
    kernel, rule = _sigma2(KernelSpec(name=name, cache_mb=sec.declared("cache_mb", declared["cache_mb"])), sigma2[0])
    return kernel, rule, ({"sigma2": sigma2} if len(sigma2) > 1 else {})


def _budget(source: str, key: str, value) -> Budget:
    """A ``budget`` section: the limits it gives, or the declared default (``epochs`` 1) when it gives none."""
    bud = _Section(source, key, value)
    declared = bud.declarations(Budget)
    given = {name: bud.declared(name, p, default=False) for name, p in declared.items()}
    if all(given[name] is None for name in Budget.LIMITS):
        given.update({name: declared[name].default for name in Budget.LIMITS})
    return Budget(**given)


@dataclass
class _Entry:
    """One entry of ``solvers:`` as written: its values per parameter (several for a sweep)."""

    sec: _Section
    name: str
    values: dict[str, list[Any]]
    label: str
    budget: Budget | None
    path: str | None
    #: The entry's ``bias`` values (several: a sweep of the bias); None: ``problem.bias``.
    bias: list[bool] | None = None
    #: The kernel and problem values the entry sets itself (``kernel``, ``sigma2``, ``lambda`` or
    #: ``C``, ``nu``), by key.
    own: Sweep = field(default_factory=dict)

    def axes(self, sweep: Sweep) -> Sweep:
        """The kernel and problem values its runs take: the experiment's ``sweep`` with the
        entry's own values in place of those it replaces (its lambda or C replaces both, and its
        own kernel other than the Gaussian the experiment's sweep of sigma2)."""
        replaced = set(self.own) | (set(LAMBDA_KEYS) if set(LAMBDA_KEYS) & set(self.own) else set())
        if self.own.get("kernel", ["gaussian"]) != ["gaussian"]:
            replaced.add("sigma2")
        return {**{k: v for k, v in sweep.items() if k not in replaced}, **self.own}

    def size(self, sweep: Sweep) -> int:
        """How many solver entries it expands to with the experiment's ``sweep``."""
        return math.prod(len(v) for v in [*self.values.values(), self.bias or [None], *self.axes(sweep).values()])


#: The keys giving lambda, one of which an entry's own lambda replaces in the experiment's sweep.
LAMBDA_KEYS = ("lambda", "C")


def _entry(source: str, k: int, item, problem: dict[str, Any]) -> _Entry:
    """Read entry ``k`` of ``solvers:``: name, label, budget, and the values of every parameter,
    and of every kernel and problem key (``sigma2``, ``lambda`` or ``C``, ``nu``), it sets; ``problem`` is the
    experiment's (see :func:`_solvers`)."""
    key = f"solvers[{k}]"
    if isinstance(item, str):
        item = {"name": item}
    sec = _Section(source, key, item)
    name = sec.get("name", str)
    path = _solver_file(source, sec)
    if name is None:
        sec.fail("name", f"missing (valid: {', '.join(sorted(SOLVERS))})")
    if path is not None and FILE_SOLVERS.get(name) != path:
        sec.fail("name", f"{path} defines no solver {shown(name)} (it defines {', '.join(load_file(path))})")
    if name not in SOLVERS:
        sec.fail("name", f"unknown solver {shown(name)} (valid: {', '.join(sorted(SOLVERS))})")
    if path is None and name in FILE_SOLVERS:
        sec.fail("name", f"solver {shown(name)} is defined in {FILE_SOLVERS[name]}: give that file as 'path'")
    declared = SOLVERS[name].Params.declared()
    sec.only([*ENTRY_KEYS, *declared])
    values = {pname: sec.values(pname, sec.reader_of(p))
              for pname, p in declared.items() if sec.data.get(pname) is not None}
    budget = _budget(source, f"{key}.budget", sec.data["budget"]) if "budget" in sec.data else None
    bias = sec.values("bias", sec.reader(bool)) if sec.data.get("bias") is not None else None
    own: Sweep = {}
    kernel = problem["kernel"]
    if sec.data.get("kernel") is not None:
        kernel = _kernel(source, sec.data["kernel"], sec.key("kernel"))[0].name
        own["kernel"] = [kernel]
    if sec.data.get("sigma2") is not None:
        if kernel != "gaussian":
            sec.fail("sigma2", f"needs kernel.name gaussian (the {kernel} kernel has no bandwidth)")
        own["sigma2"] = sec.values("sigma2", _sigma2_reader(sec))
    lam_key, lams, nus = _lambda_nu(sec, problem["n"], inherited_lambda=problem["lambda"] is not None)
    own.update({key: values for key, values in ((lam_key, lams), ("nu", nus)) if values != [None]})
    return _Entry(sec, name, values, sec.get("label", str, "", check=_printable), budget, path, bias, own)


def _differs(key: str, value: Any, problem: dict[str, Any]) -> bool:
    """Whether an entry's own ``value`` of ``key`` (``sigma2``, ``lambda`` or ``C``, ``nu``) is not the experiment's."""
    if key in LAMBDA_KEYS:
        return (lambda_of_C(value) if key == "C" else value) != problem["lambda"]
    return value != problem[key]


def _solver_file(source: str, sec: _Section) -> str | None:
    """The entry's ``path`` (relative to the config's folder) as an absolute path, its solvers registered."""
    value = sec.get("path", str)
    if value is None:
        return None
    path = str((Path(source).parent / value).resolve())
    try:
        load_file(path)
    except UserError as exc:
        sec.fail("path", str(exc))
    return path


def _solvers(source: str, value, problem: dict, sweep: Sweep) -> tuple[tuple[SolverSpec, ...], bool]:
    """The solver entries, each expanded to one per combination of its lists and ``sweep``'s,
    and the bias of the experiment's problem.

    ``problem`` holds the experiment's ``lambda``, ``nu``, ``bias``, ``sigma2`` (a number or a
    rule), the kernel's name (``kernel``) and the ``n`` lambda is checked at.

    An entry's own ``sigma2``, ``lambda`` (or ``C``) and ``nu`` replace the experiment's, and
    its sweep of that key, for its runs; an entry carries such a value in ``overrides`` (so its
    label and its problem say it) when it differs from the experiment's or is swept.

    An entry's ``bias`` (a list sweeps it) replaces ``problem.bias`` for its runs, so that
    solvers of the biased and of the unbiased problem run side by side on the same data. When
    the entries then solve different problems, each carries its bias in ``overrides`` (so its
    label says it, ``name[bias=True]``, and its runs' problem, objectives and derived nu are
    those of its own problem); when they all solve the same one, that is the experiment's
    problem and no label changes.
    """
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list) or not value:
        raise UserError(f"{source}: key 'solvers': expected a non-empty list of solver names or mappings")
    entries = [_entry(source, k, item, problem) for k, item in enumerate(value)]
    total = sum(entry.size(sweep) for entry in entries)
    if total > MAX_SWEEP_ENTRIES and total > len(entries):
        raise UserError(f"{source}: key 'solvers': the sweeps expand to {total} solver entries, more than "
                        f"{MAX_SWEEP_ENTRIES}; sweep fewer values")
    chosen = []  # (entry, its parameters, the swept and own kernel and problem values, its bias)
    for entry in entries:
        cls = SOLVERS[entry.name]
        swept = [pname for pname, v in entry.values.items() if len(v) > 1]
        axes = entry.axes(sweep)
        for combination in itertools.product(*entry.values.values(), entry.bias or [problem["bias"]],
                                             *axes.values()):
            params = dict(zip(entry.values, combination))
            bias = combination[len(params)]
            values = dict(zip(axes, combination[len(params) + 1:]))
            overrides = {k: v for k, v in values.items()
                         if k in sweep or len(entry.own.get(k, ())) > 1 or _differs(k, v, problem)}
            defines = frozenset(need for need, keys in (("lambda", LAMBDA_KEYS), ("nu", ("nu",)))
                                if problem[need] is not None or set(keys) & set(values))
            kernel = values.get("kernel", problem["kernel"])
            with own_code(cls, "refuse"):
                why = cls.refuse(ProblemKind(kernel, bias, defines), cls.Params(**params))
            if why is not None and kernel not in cls.kernels and "kernel.name" in why and "kernel" not in entry.own:
                why += f" (its solver entry may set kernel: {cls.kernels[0]})"
            if why is not None:
                varying = {**{p: params[p] for p in swept}, **({"bias": bias} if len(entry.bias or ()) > 1 else {}),
                           **{k: v for k, v in values.items() if len(entry.own.get(k, ())) > 1}}
                where = f" (sweep combination {_describe(varying, {})})" if varying else ""
                entry.sec.fail("bias" if entry.bias else "name", why + where)
            chosen.append((entry, params, overrides, bias))
    mixed = len({bias for *_, bias in chosen}) > 1
    specs, labels = [], set()
    for entry, params, overrides, bias in chosen:
        if mixed:
            overrides = {**overrides, "bias": bias}
        label = entry.name + (f"[{_describe(params, overrides)}]" if params or overrides else "")
        if entry.label:
            shown_values = _describe({p: v for p, v in params.items() if len(entry.values[p]) > 1}, overrides)
            label = entry.label + (f"[{shown_values}]" if shown_values else "")
        if label in labels:
            entry.sec.fail("label", f"two solvers are both labelled {shown(label)}; give one a 'label'")
        labels.add(label)
        lam_key = next((entry.sec.key(key) for key in LAMBDA_KEYS if key in entry.own), None)
        specs.append(SolverSpec(entry.name, params, label, entry.budget, overrides, entry.path, lam_key))
    return tuple(specs), problem["bias"] if mixed else chosen[0][3]


#: Most bytes of a config file: far more than any experiment needs, far less than a device
#: such as /dev/zero (read without end) or a data file given as a config by mistake.
MAX_CONFIG_BYTES = 4 * 2**20

#: Unicode categories refused in labels and file names: control characters (C0 such as newline,
#: CR and ESC, DEL, C1) and the line and paragraph separators.
CONTROL_CATEGORIES = ("Cc", "Zl", "Zp")

#: Longest experiment name (it names a folder).
MAX_NAME_CHARS = 100


def _name(top: _Section, source: str) -> str:
    """``name``: one path component under the results root, never ``.``, ``..`` or a path."""
    name = top.get("name", str, Path(source).stem)
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or set(name) == {"."} or len(name) > MAX_NAME_CHARS:
        top.fail("name", f"{shown(name)} cannot name a results folder: use letters, digits, '.', '_' "
                         f"and '-' only, not only dots, at most {MAX_NAME_CHARS} characters")
    return name


def _runs(value: int) -> str | None:
    return positive(value) or (None if value <= MAX_RUNS else f"must be at most {MAX_RUNS}")


def _lambda_nu(sec: _Section, n: int, inherited_lambda: bool) -> tuple[str, list, list]:
    """lambda (or C) and nu as section ``sec`` gives them (``problem``, or a solver entry's own).

    Returns the key giving lambda (``lambda``, or ``C`` when the section gives C), its values
    (lambda as written, C as a number; ``[None]`` when absent) and nu's (``[None]`` when
    absent), each checked, lambda at ``n`` examples. ``inherited_lambda``: whether lambda is
    given outside the section (in ``problem``, for an entry), which ``nu: from_lambda`` may follow.
    """
    declared = ProblemParams.declared()

    def read_lambda(key: str, lam: Any) -> str | float:
        if isinstance(lam, bool) or not isinstance(lam, (int, float, str)):
            sec.fail(key, f"expected a number or an expression in n, got {shown(lam)}")
        if not isinstance(lam, str):
            lam = coerce(lam, float, lambda msg: sec.fail(key, msg))
        lambda_value(lam, n, lambda msg: sec.fail(key, msg))
        return lam

    def read_C(key: str, C: Any) -> float:
        C = sec.reader_of(declared["C"])(key, C)
        lambda_value(lambda_of_C(C), n, lambda msg: sec.fail(key, msg))
        return C

    def read_nu(key: str, nu: Any) -> float | NuFromLambda:
        if nu == NuFromLambda.KEYWORD:
            return NuFromLambda()
        if isinstance(nu, str) and not _is_number(nu):
            sec.fail(key, f"expected a number in [0, 1] or '{NuFromLambda.KEYWORD}', got {shown(nu)}")
        return sec.reader_of(declared["nu"])(key, nu)

    key = "C" if sec.data.get("C") is not None else "lambda"
    if key == "C" and sec.data.get("lambda") is not None:
        sec.fail("C", "give either lambda or C (lambda = 1/(C n)), not both")
    lams = sec.values(key, read_C if key == "C" else read_lambda)
    nus = sec.values("nu", read_nu)
    if isinstance(nus[0], NuFromLambda) and lams[0] is None and not inherited_lambda:
        sec.fail("nu", f"'{NuFromLambda.KEYWORD}' needs problem.lambda (or C) to derive nu from")
    if len(nus) > 1 and NuFromLambda() in nus:
        sec.fail(f"nu[{nus.index(NuFromLambda())}]", f"'{NuFromLambda.KEYWORD}' cannot be one value of a "
                                                      "sweep (nu follows lambda; sweep lambda or C instead)")
    return key, lams, nus


def _problem(source: str, value, n: int) -> tuple[str | float | None, str, Nu, bool, Sweep]:
    """The ``problem`` section: lambda (a number or an expression in n), the key that gave it
    (``problem.lambda`` or ``problem.C``), nu, bias, and the sweep of lambda, C or nu if any
    (the first values of a sweep are returned); lambda is checked at ``n`` examples."""
    prob = _Section(source, "problem", value)
    declared = prob.declarations(ProblemParams)
    key, lams, nus = _lambda_nu(prob, n, inherited_lambda=False)
    sweep = {name: values for name, values in ((key, lams), ("nu", nus)) if len(values) > 1}
    lam = lambda_of_C(lams[0]) if key == "C" else lams[0]
    return lam, prob.key(key), nus[0], prob.declared("bias", declared["bias"]), sweep


def parse(data: Any, source: str, base: Path | None = None) -> Experiment:
    """Validate a config mapping.

    Parameters
    ----------
    data : Any
        The YAML document.
    source : str
        Its file name, for error messages.
    base : pathlib.Path, optional
        Folder that relative dataset paths are resolved against (the config's folder).

    Returns
    -------
    Experiment
        lambda is checked at ``dataset.n_train`` examples, or :data:`REPRESENTATIVE_N`
        without it; :meth:`Experiment.lambda_at` checks it again at the real n.
    """
    base = base or Path(".")
    top = _Section(source, "", data)
    top.only(["name", "description", "dataset", "kernel", "problem", "solvers", "budget",
              "checkpoints", "runs", "repeat_deterministic", "seed", "report"])
    for required in ("dataset", "solvers"):
        if required not in top.data:
            top.fail(required, "missing")
    name = _name(top, source)
    top.get("description", str)

    dataset, validation, folds = _dataset(source, top.data["dataset"], base)
    runs = top.get("runs", int, folds or 1, check=_runs)
    if folds is not None and runs != folds:
        top.fail("runs", f"with dataset.folds: {folds} every entry runs once per fold: leave runs out or set it to "
                         f"{folds}")
    lam, lam_key, nu, bias, problem_sweep = _problem(source, top.data.get("problem"),
                                                     dataset.n_train or REPRESENTATIVE_N)

    budget = _budget(source, "budget", top.data.get("budget"))

    chk = _Section(source, "checkpoints", top.data.get("checkpoints"))
    checkpoints = Checkpoints(**{name: chk.declared(name, p) for name, p in chk.declarations(Checkpoints).items()})

    report = report_budgets(top.data.get("report"), source)
    kernel, sigma2_rule, kernel_sweep = _kernel(source, top.data.get("kernel"))
    solvers, bias = _solvers(source, top.data["solvers"],
                             {"lambda": lam, "nu": nu, "bias": bias, "kernel": kernel.name,
                              "sigma2": sigma2_rule or kernel.sigma2, "n": dataset.n_train or REPRESENTATIVE_N},
                             {**kernel_sweep, **problem_sweep})
    return Experiment(
        name=name,
        dataset=dataset,
        kernel=kernel,
        lam=lam, nu=nu, bias=bias,
        solvers=solvers,
        budget=budget, checkpoints=checkpoints,
        runs=runs,
        seed=top.get("seed", int, 0, check=non_negative),
        source=source, raw=data, lam_key=lam_key, sigma2_rule=sigma2_rule, validation=validation, folds=folds,
        report=report, repeat_deterministic=top.get("repeat_deterministic", bool, False),
    )


def load(path: str | Path, overrides: list[str] | None = None) -> Experiment:
    """Read and validate an experiment YAML file.

    Parameters
    ----------
    path : str or pathlib.Path
        The config file.
    overrides : list of str, optional
        ``KEY=VALUE`` items applied before validation (see :func:`apply_overrides`).

    Returns
    -------
    Experiment

    Raises
    ------
    UserError
        If the file cannot be read, is not a regular file (a folder, device or named pipe)
        or holds more than :data:`MAX_CONFIG_BYTES`, is not UTF-8 text, is not YAML or is
        refused by :class:`ConfigLoader`, or fails validation.
    """
    path = Path(path)
    raw = read_regular(path, "config", MAX_CONFIG_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start} cannot be decoded); "
                        "save the config as UTF-8") from None
    data = load_yaml(text, str(path))
    return parse(apply_overrides(data, overrides or [], str(path)), str(path), path.parent)
