"""Solver parameter names that would collide with a config's own keys, and how ``sbpbench solvers``
words a solver's stand on the bias."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sbpbench.solvers import SOLVERS, Solver, SolverParams, param, register
from sbpbench.solvers.base import RESERVED_NAMES
from tests.cli_runner import ROOT, one_error_line, sbpbench
from tests.docs_pages import everything


def test_solvers_says_whether_the_bias_is_required_supported_or_refused(monkeypatch, capsys):
    assert sbpbench(monkeypatch, "solvers") == 0
    out = "\n" + capsys.readouterr().out
    assert "\nlibsvm: " in out and "needs: lambda; bias: required" in out.split("\nlibsvm: ")[1].split("\n")[1]
    said = {name: out.split(f"\n{name}: ", 1)[1].split("\n")[1] for name in ("sbp", "smo", "pegasos", "sdca")}
    assert said["sbp"].endswith("bias: supported") and said["smo"].endswith("bias: supported; deterministic: runs once")
    assert said["pegasos"].endswith("bias: refused") and said["sdca"].endswith("bias: refused")
    assert "bias: yes" not in out and "bias: no" not in out
    for name, cls in SOLVERS.items():
        if not cls.__module__.startswith("sbpbench."):
            continue  # a solver file another test of this worker registered (its line ends "from FILE")
        word = "required" if cls.requires_bias else "supported" if cls.supports_bias else "refused"
        once = "; deterministic: runs once" if cls.deterministic else ""
        assert out.split(f"\n{name}: ", 1)[1].split("\n")[1].endswith(f"bias: {word}{once}"), name


SOLVER_FILE = '''
from dataclasses import dataclass

import numpy as np

from sbpbench.solvers import Snapshot, Solver, SolverParams, param


@dataclass(frozen=True)
class CollidingParams(SolverParams):
    {name}: float = param(50.0, "a parameter named as a config key")


class Colliding(Solver[CollidingParams]):
    """A solver whose parameter has a reserved name."""

    name = "colliding"
    Params = CollidingParams

    def _step(self, iterations, kernel_evals):
        self.iteration += 1
        return False

    def snapshot(self):
        return Snapshot(support=np.zeros(0, dtype=np.int64), coef=np.zeros(0))

    def expected_kernel_evals(self):
        return 0.0
'''


@pytest.mark.parametrize("name", ["budget", "label", "bias", "sigma2", "C", "nu", "epochs", "random_state"])
def test_a_solver_file_with_a_reserved_parameter_name_is_refused_in_one_line(tmp_path, monkeypatch, capsys, name):
    (tmp_path / "colliding.py").write_text(SOLVER_FILE.replace("{name}", name))
    config = tmp_path / "c.yaml"
    config.write_text("dataset: {name: adult}\nsolvers:\n  - {name: colliding, path: colliding.py, "
                      f"{name}: 50}}\n")
    assert sbpbench(monkeypatch, "validate", config) == 2
    line = one_error_line(capsys.readouterr().err, str(tmp_path / "colliding.py"), "solver 'colliding'",
                          f"parameter {name!r} has a reserved name")
    assert "rename it (the reserved names: RESERVED_NAMES in sbpbench/solvers/base.py" in line
    assert "colliding" not in SOLVERS


def test_a_solver_with_a_plain_parameter_name_is_accepted(tmp_path, monkeypatch, capsys):
    (tmp_path / "plain.py").write_text(SOLVER_FILE.replace("{name}", "budget_per_step")
                                       .replace('"colliding"', '"plain-name"'))
    assert sbpbench(monkeypatch, "solvers", "--solver-file", tmp_path / "plain.py") == 0
    assert "\nplain-name: " in capsys.readouterr().out
    SOLVERS.pop("plain-name")


def test_register_refuses_a_reserved_parameter_name():
    @dataclass(frozen=True)
    class BudgetParams(SolverParams):
        budget: float = param(50.0, "what a config would read as the experiment's budget")

    class BudgetSolver(Solver[BudgetParams]):
        name = "budget-solver"
        Params = BudgetParams

    with pytest.raises(ValueError, match="solver 'budget-solver': parameter 'budget' has a reserved name"):
        register(BudgetSolver)
    assert "budget-solver" not in SOLVERS


def test_the_reserved_names_cover_every_key_a_solver_entry_or_an_estimator_has_beside_the_solver():
    from sbpbench.estimators import ESTIMATORS
    for estimator in ESTIMATORS:  # every argument of its __init__ (get_params) beside the solver's
        declared = estimator.solver_class().Params.declared()
        assert set(estimator().get_params()) - set(declared) <= set(RESERVED_NAMES), estimator
    assert {"name", "path", "label", "budget", "bias", "sigma2", "lambda", "C", "nu"} <= set(RESERVED_NAMES)
    for cls in SOLVERS.values():
        assert not set(cls.Params.declared()) & set(RESERVED_NAMES), cls.name


def test_contributing_and_the_docs_list_every_reserved_name():
    listed = ", ".join(f"`{n}`" for n in RESERVED_NAMES)
    assert f"reserved: {listed}" in " ".join((ROOT / "CONTRIBUTING.md").read_text().split())
    assert f"parameters: {listed} (a solver" in everything()  # docs/writing-a-solver.md
