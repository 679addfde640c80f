"""The solver contract (:mod:`sbpbench.solvers.contract`), checked on every registered solver
(a new solver is tested by registering it), and the refusal at validation of what it refuses.

The checks themselves live in the package, where ``sbpbench check-solver`` runs them on a
solver file (tests/test_external_solvers.py); here each is one parametrized test per case.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sbpbench.solvers import SOLVERS, ProblemKind, SolverParams, contract, param
from sbpbench.solvers.contract import KINDS, N_TEST, NU, SIGMA2, N, make_problem, variants
from sbpbench.solvers.sbp import SBP
from sbpbench.solvers.smo import SMOParams
from tests.cli_runner import one_error_line, sbpbench
from tests.experiments import adult_config, write_config

pytestmark = pytest.mark.usefixtures("one_numba_thread")

CASES = [pytest.param(case, id=case.id) for name, cls in sorted(SOLVERS.items()) for case in contract.cases(cls)]


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_registered_with_declared_checked_parameters(name):
    cls = SOLVERS[name]
    assert cls.name == name
    contract.check_declarations(cls)


def test_parameters_of_another_solver_and_undeclared_fields_are_refused():
    problem = make_problem("gaussian", False)
    with pytest.raises(TypeError, match="takes SBPParams, not SMOParams"):
        SBP(problem, np.random.default_rng(0), SMOParams())

    @dataclasses.dataclass(frozen=True)
    class Sloppy(SolverParams):
        documented: int = param(1, "a parameter")
        undocumented: int = 2

    with pytest.raises(TypeError, match="Sloppy.undocumented: declare parameters with param"):
        Sloppy.declared()


@pytest.mark.parametrize("check", list(contract.CASE_CHECKS.values()), ids=list(contract.CASE_CHECKS))
@pytest.mark.parametrize("case", CASES)
def test_contract(case, check):
    check(case)


def test_a_sealed_kernel_hands_out_the_true_values_and_shows_other_points():
    plain, sealed = make_problem("gaussian", False).kernel, make_problem("gaussian", False, sealed=True).kernel
    assert isinstance(sealed, contract.SealedKernel) and sealed.served == 0
    assert (sealed.X != plain.X).nnz > 0 and not np.array_equal(sealed.sq, plain.sq)
    assert sealed.store is not plain.store and sealed.store.general.X is sealed.X
    idx = np.array([3, 1, 4], dtype=np.int64)
    assert np.array_equal(sealed.row(5), plain.row(5)) and np.array_equal(sealed.entries(2, idx), plain.entries(2, idx))
    assert np.array_equal(sealed.diag(), plain.diag())
    support, coef = np.array([0, 7]), np.array([1.0, -2.0])
    assert np.array_equal(sealed.decision_at(idx, support, coef), plain.decision_at(idx, support, coef))
    assert sealed.served == sealed.kernel_evals_computed == N + 3
    sealed.row(5)  # no row cache: computed again
    assert sealed.served == sealed.kernel_evals_computed == 2 * N + 3
    sealed.reset()
    assert sealed.served == 0


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_impossible_problems_are_refused_where_the_solver_is_made(name):
    contract.check_refusal(SOLVERS[name])


# ----------------------------------------------------------------------------- refusal at validation

def _config(kernel: str, bias: bool, defines, name: str, values: dict) -> dict:
    """A config of this kind of problem (the contract's) with one solver."""
    problem = {"bias": bias, **({"lambda": "1/n"} if "lambda" in defines else {}),
               **({"nu": NU} if "nu" in defines else {})}
    return adult_config(None, n_train=N, n_test=N_TEST, kernel={"name": kernel, "sigma2": SIGMA2}, problem=problem,
                        solvers=[{"name": name, **values}], budget=None, runs=None, seed=None)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_validation_refuses_exactly_what_the_solver_refuses(name, monkeypatch, capsys, tmp_path):
    cls = SOLVERS[name]
    path = tmp_path / "kind.yaml"
    outcomes = set()
    for kernel, bias, defines in KINDS:
        for values in variants(cls):
            why = cls.refuse(ProblemKind(kernel, bias, frozenset(defines)), cls.Params(**values))
            write_config(path, _config(kernel, bias, defines, name, values))
            code = sbpbench(monkeypatch, "validate", path)
            err = capsys.readouterr().err
            case = (kernel, bias, defines, values, err)
            if why is None:
                assert code == 0, case
                continue
            assert why.startswith(f"solver {name!r}")
            if kernel not in cls.kernels and "kernel.name" in why:  # the way out: the entry's own kernel
                why += f" (its solver entry may set kernel: {cls.kernels[0]})"
            assert code == 2 and err == f"sbpbench: error: {path}: key 'solvers[0].name': {why}\n", case
            outcomes.add(why)
    assert outcomes  # every solver refuses some kind of problem


def test_contradictory_parameters_end_validate_and_run_before_anything_runs(monkeypatch, capsys, tmp_path):
    """LIBLINEAR's tol_end above tol_start used to pass validation and fail inside the run."""
    path = write_config(tmp_path / "tols.yaml", _config("linear", False, ("lambda",), "liblinear",
                                                        {"tol_start": 0.001, "tol_end": 0.01}))
    for command in ("validate", "run"):
        more = ["--results", tmp_path / "res"] if command == "run" else []
        assert sbpbench(monkeypatch, command, path, *more) == 2
        one_error_line(capsys.readouterr().err, f"sbpbench: error: {path}: key 'solvers[0].name': solver 'liblinear'",
                       "tol_end (0.01)", "tol_start (0.001)")
    assert not (tmp_path / "res").exists()
