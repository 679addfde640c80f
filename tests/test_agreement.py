"""Resolved configurations compared portably: derived values within their certified precision.

A reference written on one CPU must be checked, and a run folder resumed, on another: a derived
nu that differs in its last digit (an AMD EPYC against an Intel Xeon) is the same problem; one
that differs beyond what its duality gap certifies is not.
"""

import json
import math
import shutil
from pathlib import Path

import pytest

from sbpbench.errors import UserError
from sbpbench.experiment.optimum import solve
from sbpbench.outputs.check import check
from sbpbench.results.agreement import (
    DERIVED_RTOL,
    comparable,
    optimum_tolerances,
    resolved_difference,
    tolerances,
)
from tests.problems import real_problem

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "reference"
WITH_DERIVED = sorted(p.parent.name for p in REFERENCE.glob("*/meta.json"))


def _resolved(name: str) -> dict:
    return json.loads((REFERENCE / name / "meta.json").read_text())["resolved"]


def _set(resolved: dict, key: str, value: float) -> dict:
    """A copy of ``resolved`` with the dotted ``key`` (``solvers[2].problem.lambda``) set to ``value``."""
    out = json.loads(json.dumps(resolved))
    holder = out
    parts = key.replace("[", ".[").split(".")
    for part in parts[:-1]:
        holder = holder[int(part[1:-1])] if part.startswith("[") else holder[part]
    holder[parts[-1]] = value
    return out


def _get(resolved: dict, key: str) -> float:
    value = resolved
    for part in key.replace("[", ".[").split("."):
        value = value[int(part[1:-1])] if part.startswith("[") else value[part]
    return value


def test_the_references_have_derived_values_to_perturb():
    """Not vacuous: nu from lambda with its optimum, and lambda from an expression, occur."""
    keys = {k for name in WITH_DERIVED for k in tolerances(_resolved(name), _resolved(name))}
    assert {"problem.nu", "problem.optimum.norm", "problem.optimum.objective", "problem.optimum.mean_hinge",
            "problem.lambda"} <= keys
    assert any(k.startswith("solvers[") for k in keys)  # a sweep's entries record their own problems


@pytest.mark.parametrize("name", WITH_DERIVED)
def test_each_derived_value_passes_within_its_precision_and_fails_beyond(name):
    resolved = _resolved(name)
    found = tolerances(resolved, resolved)
    for key, tol in found.items():
        value = _get(resolved, key)
        allowed = max(tol, DERIVED_RTOL * abs(value))
        for sign in (1, -1):
            assert resolved_difference(resolved, _set(resolved, key, value + sign * 0.9 * allowed)) is None, key
            difference = resolved_difference(resolved, _set(resolved, key, value + sign * 1.2 * allowed))
            assert difference is not None and difference.key == key, key
            assert difference.old == value and difference.tolerance == pytest.approx(allowed, rel=0.01)


@pytest.mark.parametrize("name", WITH_DERIVED)
def test_counts_and_words_stay_exact(name):
    resolved = _resolved(name)
    for key in ("dataset.n_train", "runs", "seed"):
        assert resolved_difference(resolved, _set(resolved, key, _get(resolved, key) + 1)).key == key
    assert resolved_difference(resolved, _set(resolved, "solvers[0].name", "other")).key == "solvers[0].name"
    if "sigma2" in resolved["kernel"] and "sigma2_rule" not in resolved["kernel"]:  # a number in the config
        moved = _get(resolved, "kernel.sigma2") * (1 + 1e-15) + 1e-300
        assert resolved_difference(resolved, _set(resolved, "kernel.sigma2", moved)) is not None


def test_the_solve_facts_of_the_optimum_are_not_compared():
    resolved = _resolved("ci-sbp-linear")
    other = _set(_set(resolved, "problem.optimum.iterations", 1), "problem.optimum.n_support", 7)
    assert resolved_difference(resolved, other) is None
    assert "iterations" not in comparable(resolved)["problem"]["optimum"]


def test_a_parameter_at_its_default_may_be_absent_and_one_off_it_may_not():
    """A solver parameter added later (SVMperf's qp_precision, default 0: the exact QP the folders
    written before it ran) is absent from those folders: at its default it is the same
    configuration, off it a difference naming the key."""
    resolved = _resolved("ci-linear-c")
    at = next(i for i, s in enumerate(resolved["solvers"]) if s["name"] == "svmperf")
    assert "qp_precision" not in resolved["solvers"][at]["params"]
    key = f"solvers[{at}].params.qp_precision"
    assert resolved_difference(resolved, _set(resolved, key, 0.0)) is None
    assert resolved_difference(resolved, _set(resolved, key, 0.5)).key == key
    epsilon = f"solvers[{at}].params.epsilon"
    assert resolved_difference(resolved, _set(resolved, epsilon, 0.2)).key == epsilon


def test_the_gap_bound_holds_between_a_loose_and_a_tight_optimum():
    """The tolerances are bounds: two solves of one problem at different precisions (each
    certified by its own gap) differ by less than the tolerance their gaps give, and the looser
    solve differs from the tight one by more than rounding."""
    problem = real_problem("adult", 300)
    loose, tight = solve(problem, 1e-1), solve(problem, 1e-7)
    assert loose["duality_gap"] > 1e3 * tight["duality_gap"] > 0
    found = optimum_tolerances(loose, tight, problem.lam)
    for key in ("objective", "dual_objective", "norm", "mean_hinge", "nu"):
        assert abs(loose[key] - tight[key]) <= found[key], key
    assert abs(loose["nu"] - tight["nu"]) > 1e3 * DERIVED_RTOL * tight["nu"]


def _as_run(tmp_path: Path, name: str, change) -> Path:
    """A copy of a reference as a run folder, its meta.json changed by ``change(resolved)``."""
    run = tmp_path / name / "20260101-000000"
    shutil.copytree(REFERENCE / name, run)
    meta = json.loads((run / "meta.json").read_text())
    meta["resolved"] = change(meta["resolved"])
    (run / "meta.json").write_text(json.dumps(meta))
    return run.parent


def test_check_passes_a_last_digit_difference_of_nu_and_names_a_real_one(tmp_path):
    """The case seen on an AMD EPYC: nu 0.059880031080072345 against the Intel reference's
    0.05988003108007234 (and the norm one unit of its last digit away)."""
    name = "ci-sbp-linear"
    nu = _get(_resolved(name), "problem.nu")

    def last_digits(resolved):
        resolved = _set(resolved, "problem.nu", math.nextafter(nu, 1.0))
        return _set(resolved, "problem.optimum.norm", math.nextafter(_get(resolved, "problem.optimum.norm"), 0.0))

    ok, report = check(_as_run(tmp_path / "a", name, last_digits), REFERENCE / name)
    assert ok, report
    with pytest.raises(UserError) as error:
        check(_as_run(tmp_path / "b", name, lambda r: _set(r, "problem.nu", nu * 1.01)), REFERENCE / name)
    message = str(error.value)
    assert "'resolved.problem.nu'" in message and repr(nu) in message and repr(nu * 1.01) in message
    assert "precision their computation certifies" in message
