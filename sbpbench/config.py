"""Experiment configs: YAML in, a validated :class:`Experiment` out, before anything runs.

Every key is checked: an unknown key, a wrong type, an unknown solver or dataset, or an
unreadable file ends with one :class:`~sbpbench.errors.UserError` line naming the file and
the key (with the valid choices). The documented defaults are in :data:`DEFAULTS_DOC`
and in the README.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sbpbench.data.registry import REGISTRY, DatasetSpec
from sbpbench.errors import UserError
from sbpbench.kernels import KernelSpec
from sbpbench.solvers import SOLVERS

#: ``problem.nu`` value asking for nu derived from lambda (:mod:`sbpbench.optimum`).
NU_FROM_LAMBDA = "from_lambda"

#: Default value of every optional key (shown by ``sbpbench run --help`` and the README).
DEFAULTS_DOC = {
    "name": "the config file's name without .yaml",
    "dataset.n_train / n_test": "all examples",
    "kernel": "{name: gaussian, sigma2: 1.0, cache_mb: 256}",
    "problem": "{lambda: none, C: none, nu: none, bias: false}; C means lambda = 1/(C n); "
               "nu: from_lambda derives nu from the exact optimum of the lambda-problem",
    "budget": "{epochs: 1}; kernel_evals, seconds and test_error (stop at or below) may be added; "
              "a solver entry may carry its own budget",
    "checkpoints": "{per_decade: 10, epochs: true}",
    "runs": "1",
    "seed": "0",
}


@dataclass(frozen=True)
class SolverSpec:
    """One entry of ``solvers:``: a registered solver name, its parameters, a label, and
    optionally its own budget (replacing the experiment's for this solver)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    budget: "Budget | None" = None

    def describe(self) -> str:
        """Parameters as a stable ``k=v;k=v`` string (the ``params`` column)."""
        return ";".join(f"{k}={v}" for k, v in sorted(self.params.items()))


@dataclass(frozen=True)
class Budget:
    """When a run stops: whichever limit comes first (None = no limit of that kind)."""

    epochs: float | None = 1.0
    kernel_evals: float | None = None
    seconds: float | None = None
    test_error: float | None = None


@dataclass(frozen=True)
class Checkpoints:
    """Measurement points: ``per_decade`` log-spaced in kernel evaluations, plus epoch ends."""

    per_decade: int = 10
    epochs: bool = True


@dataclass(frozen=True)
class Experiment:
    """A validated experiment."""

    name: str
    dataset: DatasetSpec
    kernel: KernelSpec
    lam: str | float | None
    nu: float | str | None
    bias: bool
    solvers: tuple[SolverSpec, ...]
    budget: Budget
    checkpoints: Checkpoints
    runs: int
    seed: int
    source: str = ""
    raw: dict = field(default_factory=dict, compare=False)


# ----------------------------------------------------------------------------- lambda expressions

_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos,
}


def eval_lambda(expr: str | float, n: int) -> float:
    """Evaluate lambda given as a number or an arithmetic expression in ``n`` (e.g. ``1/(100*n)``).

    Parameters
    ----------
    expr : str or float
        The value from the config.
    n : int
        Number of training examples.

    Returns
    -------
    float
    """
    if isinstance(expr, (int, float)):
        return float(expr)

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name) and node.id == "n":
            return n
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.operand))
        raise ValueError
    try:
        return float(walk(ast.parse(str(expr), mode="eval")))
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError):
        raise ValueError(f"cannot evaluate {expr!r}: use a number or an expression in n such as 1/n or 1/(100*n)") from None


# ----------------------------------------------------------------------------- validation helpers


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
        where = self.key(name) if name else (self.prefix or "top level")
        raise UserError(f"{self.source}: key '{where}': {message}")

    def only(self, allowed) -> None:
        for name in self.data:
            if name not in allowed:
                self.fail(str(name), f"unknown key (valid: {', '.join(allowed)})")

    def get(self, name: str, kind, default=None, choices=None, check=None):
        if name not in self.data or self.data[name] is None:
            return default
        value = self.data[name]
        value = coerce(value, kind, lambda msg: self.fail(name, msg))
        if choices is not None and value not in choices:
            self.fail(name, f"{value!r} is not one of: {', '.join(map(str, choices))}")
        if check is not None and (msg := check(value)):
            self.fail(name, msg)
        return value


def coerce(value, kind, fail):
    """Check a YAML value against ``kind`` (int accepts whole floats such as 1e6; float accepts ints)."""
    if kind is bool:
        if not isinstance(value, bool):
            fail(f"expected true or false, got {value!r}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            fail(f"expected an integer, got {value!r}")
        return int(value)
    if kind is float:
        if isinstance(value, str):
            try:
                return float(value)  # YAML reads 1e-4 without a dot as a string
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail(f"expected a number, got {value!r}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            fail(f"expected a string, got {value!r}")
        return value
    raise TypeError(kind)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _positive(value):
    return None if value > 0 else "must be positive"


def _non_negative(value):
    return None if value >= 0 else "must be >= 0"


# ----------------------------------------------------------------------------- sections


def _dataset(source: str, value, base: Path) -> DatasetSpec:
    if isinstance(value, str):
        value = {"name": value}
    sec = _Section(source, "dataset", value)
    sec.only(["name", "path", "test_path", "n_train", "n_test", "n_features", "positive", "zero_based"])
    name = sec.get("name", str)
    path = sec.get("path", str)
    test_path = sec.get("test_path", str)
    if (name is None) == (path is None):
        sec.fail("", "give either 'name' (a registered dataset) or 'path' and 'test_path' (LIBSVM files)")
    if name is not None and name not in REGISTRY:
        sec.fail("name", f"unknown dataset {name!r} (valid: {', '.join(sorted(REGISTRY))})")
    if name is not None and sec.data.get("zero_based") is not None:
        sec.fail("zero_based", "only allowed together with 'path' (a registered dataset knows its indices)")
    if path is not None:
        if test_path is None:
            sec.fail("test_path", "missing: a LIBSVM test file is required with 'path'")
        path, test_path = (str(p if Path(p).is_absolute() else base / p) for p in (path, test_path))
        for key, p in (("path", path), ("test_path", test_path)):
            if not Path(p).is_file():
                sec.fail(key, f"cannot read file {p}")
    elif test_path is not None or sec.data.get("positive") is not None:
        sec.fail("test_path" if test_path else "positive", "only allowed together with 'path'")
    return DatasetSpec(
        name=name, path=path, test_path=test_path,
        n_train=sec.get("n_train", int, check=_positive),
        n_test=sec.get("n_test", int, check=_positive),
        n_features=sec.get("n_features", int, check=_positive),
        positive=sec.get("positive", float),
        zero_based=sec.get("zero_based", bool, default=False),
    )


def _kernel(source: str, value) -> KernelSpec:
    if isinstance(value, str):
        value = {"name": value}
    sec = _Section(source, "kernel", value)
    sec.only(["name", "sigma2", "cache_mb"])
    return KernelSpec(
        name=sec.get("name", str, "gaussian", choices=("gaussian", "linear")),
        sigma2=sec.get("sigma2", float, 1.0, check=_positive),
        cache_mb=sec.get("cache_mb", float, 256.0, check=_non_negative),
    )


def _budget(source: str, key: str, value) -> Budget:
    bud = _Section(source, key, value)
    bud.only(["epochs", "kernel_evals", "seconds", "test_error"])
    budget = Budget(
        epochs=bud.get("epochs", float, check=_positive),
        kernel_evals=bud.get("kernel_evals", float, check=_positive),
        seconds=bud.get("seconds", float, check=_positive),
        test_error=bud.get("test_error", float, check=lambda v: None if 0 <= v <= 1 else "must be in [0, 1]"),
    )
    if all(v is None for v in (budget.epochs, budget.kernel_evals, budget.seconds)):
        budget = Budget(1.0, None, None, budget.test_error)
    return budget


def _solvers(source: str, value, problem: dict) -> tuple[SolverSpec, ...]:
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list) or not value:
        raise UserError(f"{source}: key 'solvers': expected a non-empty list of solver names or mappings")
    specs, labels = [], set()
    for k, item in enumerate(value):
        key = f"solvers[{k}]"
        if isinstance(item, str):
            item = {"name": item}
        sec = _Section(source, key, item)
        name = sec.get("name", str)
        if name is None:
            sec.fail("name", f"missing (valid: {', '.join(sorted(SOLVERS))})")
        if name not in SOLVERS:
            sec.fail("name", f"unknown solver {name!r} (valid: {', '.join(sorted(SOLVERS))})")
        cls = SOLVERS[name]
        sec.only(["name", "label", "budget", *cls.params])
        params = {}
        for pname, p in cls.params.items():
            v = sec.get(pname, p.type, None, choices=p.choices, check=p.check)
            if v is not None:
                params[pname] = v
        for need in sorted(cls.needs):
            if problem.get(need) is None:
                sec.fail("name", f"solver {name!r} needs problem.{need}")
        if problem["bias"] and not cls.supports_bias:
            sec.fail("name", f"solver {name!r} does not support problem.bias: true")
        if not problem["bias"] and cls.requires_bias:
            sec.fail("name", f"solver {name!r} solves only the biased problem: set problem.bias: true")
        if problem["kernel"] not in cls.kernels:
            sec.fail("name", f"solver {name!r} needs kernel.name {' or '.join(cls.kernels)}, "
                             f"not {problem['kernel']!r}")
        budget = _budget(source, f"{key}.budget", sec.data["budget"]) if "budget" in sec.data else None
        spec = SolverSpec(name, params, sec.get("label", str, ""))
        label = spec.label or name + (f"[{spec.describe()}]" if params else "")
        if label in labels:
            sec.fail("label", f"two solvers are both labelled {label!r}; give one a 'label'")
        labels.add(label)
        specs.append(SolverSpec(name, params, label, budget))
    return tuple(specs)


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
    """
    base = base or Path(".")
    top = _Section(source, "", data)
    top.only(["name", "description", "dataset", "kernel", "problem", "solvers", "budget",
              "checkpoints", "runs", "seed"])
    for required in ("dataset", "solvers"):
        if required not in top.data:
            top.fail(required, "missing")
    name = top.get("name", str, Path(source).stem)
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        top.fail("name", "use letters, digits, '.', '_' and '-' only (it names a results folder)")
    top.get("description", str)

    prob = _Section(source, "problem", top.data.get("problem"))
    prob.only(["lambda", "C", "nu", "bias"])
    lam = prob.data.get("lambda")
    C = prob.get("C", float, check=_positive)
    if C is not None:
        if lam is not None:
            prob.fail("C", "give either lambda or C (lambda = 1/(C n)), not both")
        lam = f"1/({C!r}*n)"
    if lam is not None:
        if isinstance(lam, bool) or not isinstance(lam, (int, float, str)):
            prob.fail("lambda", f"expected a number or an expression in n, got {lam!r}")
        try:
            if eval_lambda(lam, 1000) <= 0:
                prob.fail("lambda", "must be positive")
        except ValueError as exc:
            prob.fail("lambda", str(exc))
        lam = float(lam) if isinstance(lam, (int, float)) else lam
    nu = prob.data.get("nu")
    if nu == NU_FROM_LAMBDA:
        if lam is None:
            prob.fail("nu", f"'{NU_FROM_LAMBDA}' needs problem.lambda (or C) to derive nu from")
    elif isinstance(nu, str) and not _is_number(nu):
        prob.fail("nu", f"expected a number in [0, 1] or '{NU_FROM_LAMBDA}', got {nu!r}")
    else:
        nu = prob.get("nu", float, check=lambda v: None if 0 <= v <= 1 else "must be in [0, 1]")
    bias = prob.get("bias", bool, False)

    budget = _budget(source, "budget", top.data.get("budget"))

    chk = _Section(source, "checkpoints", top.data.get("checkpoints"))
    chk.only(["per_decade", "epochs"])
    checkpoints = Checkpoints(chk.get("per_decade", int, 10, check=_positive), chk.get("epochs", bool, True))

    kernel = _kernel(source, top.data.get("kernel"))
    return Experiment(
        name=name,
        dataset=_dataset(source, top.data["dataset"], base),
        kernel=kernel,
        lam=lam, nu=nu, bias=bias,
        solvers=_solvers(source, top.data["solvers"],
                         {"lambda": lam, "nu": nu, "bias": bias, "kernel": kernel.name}),
        budget=budget, checkpoints=checkpoints,
        runs=top.get("runs", int, 1, check=_positive),
        seed=top.get("seed", int, 0, check=_non_negative),
        source=source, raw=data,
    )


def apply_overrides(data: Any, overrides: list[str], source: str) -> Any:
    """Apply ``KEY=VALUE`` overrides (dotted keys, YAML values) to a config mapping.

    For example ``budget.epochs=3`` or ``solvers=[sbp]``. Intermediate mappings are created
    as needed; the result is validated like the file itself.
    """
    if not overrides:
        return data
    data = dict(data) if isinstance(data, dict) else {}
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UserError(f"--set {item!r}: expected KEY=VALUE, for example budget.epochs=3")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise UserError(f"--set {item!r}: the value is not valid YAML") from None
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            child = dict(child) if isinstance(child, dict) else {}
            node[part] = child
            node = child
        node[parts[-1]] = value
    return data


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
        If the file cannot be read, is not YAML, or fails validation.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise UserError(f"{path}: cannot read config ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise UserError(f"{path}{where}: invalid YAML: {problem}") from None
    return parse(apply_overrides(data, overrides or [], str(path)), str(path), path.parent)
