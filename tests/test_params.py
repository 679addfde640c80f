"""Declared parameters (sbpbench.params): one declaration per parameter, read by the config, the
estimators and the docs, and checked whenever a set of them is made."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from sbpbench.experiment import config
from sbpbench.kernels import KernelSpec
from sbpbench.params import SMALLEST_POSITIVE, Param, Params, fraction, non_negative, param, positive
from sbpbench.problem import ProblemParams
from sbpbench.solvers.base import Budget


@dataclass(frozen=True)
class Example(Params):
    count: int = param(3, "how many", check=positive)
    limit: float | None = param(None, "a limit, or none", check=positive)
    mode: str = param("a", "which", choices=("a", "b"))


def test_declarations_read_type_default_doc_and_whether_none_is_allowed():
    declared = Example.declared()
    assert list(declared) == ["count", "limit", "mode"]
    assert declared["count"] == Param(int, 3, "how many", check=positive)
    assert declared["limit"].type is float and declared["limit"].optional and declared["limit"].default is None
    assert not declared["count"].optional
    assert [p.type_name() for p in declared.values()] == ["int", "float or None", "str"]
    assert Param(float, "scale", "", keywords=("scale",), optional=True).type_name("a number") == \
        "a number or 'scale' or None"


@pytest.mark.parametrize("values, message", [
    ({"count": 0}, "count: must be positive"),
    ({"limit": -1.0}, "limit: must be positive"),
    ({"mode": "c"}, "mode: 'c' is not one of: a, b"),
])
def test_a_set_of_parameters_is_checked_when_made(values, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        Example(**values)
    assert Example(limit=None) == Example()  # None where the declaration allows it


def test_a_field_not_made_by_param_is_refused():
    @dataclass(frozen=True)
    class Sloppy(Params):
        undocumented: int = 1

    with pytest.raises(TypeError, match="Sloppy.undocumented: declare parameters with param"):
        Sloppy.declared()


def test_the_checks_refuse_nan_and_subnormals():
    assert positive(math.nan) == "must be positive" and non_negative(math.nan) == "must be >= 0"
    assert fraction(math.nan) == "must be in [0, 1]"
    assert positive(SMALLEST_POSITIVE / 2) is not None and non_negative(SMALLEST_POSITIVE / 2) is not None
    assert positive(SMALLEST_POSITIVE) is None and non_negative(0.0) is None


@pytest.mark.parametrize("make, field", [
    (lambda: KernelSpec(name="poly"), "name"),
    (lambda: KernelSpec(sigma2=0.0), "sigma2"),
    (lambda: KernelSpec(sigma2=math.nan), "sigma2"),
    (lambda: KernelSpec(cache_mb=-1.0), "cache_mb"),
    (lambda: Budget(kernel_evals=0.0), "kernel_evals"),
    (lambda: Budget(test_error=2.0), "test_error"),
    (lambda: ProblemParams(nu=1.5), "nu"),
    (lambda: ProblemParams(C=-1.0), "C"),
    (lambda: config.Checkpoints(per_decade=0), "per_decade"),
])
def test_kernel_problem_budget_and_checkpoints_are_checked_by_their_declarations(make, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        make()


def test_config_keys_are_the_declarations():
    """The config reads its kernel, problem, budget and checkpoints keys from the declarations: the same
    names (lambda for lam), defaults and checks."""
    keys = config.declared_keys()
    assert set(keys) == {"kernel.name", "kernel.sigma2", "kernel.cache_mb", "problem.lambda", "problem.C",
                         "problem.nu", "problem.bias", "budget.epochs", "budget.kernel_evals", "budget.seconds",
                         "budget.test_error", "budget.primal_objective", "checkpoints.per_decade", "checkpoints.epochs"}
    exp = config.parse({"dataset": "adult", "solvers": ["sbp"], "problem": {"nu": 0.01}}, "t.yaml")
    assert exp.kernel == KernelSpec() and exp.checkpoints == config.Checkpoints() and exp.budget == Budget()
    assert exp.bias is keys["problem.bias"].default
