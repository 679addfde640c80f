"""A solver entry's own kernel and problem values (``sigma2``, ``lambda`` or ``C``, ``nu``, ``bias``):
each solver of one config at its own setting, checked like the top level, recorded in meta.json."""

import textwrap
from pathlib import Path

import pytest

from sbpbench.execution import loop
from sbpbench.experiment import config
from sbpbench.experiment.config import NuFromLambda
from tests.cli_runner import sbpbench, validate_text
from tests.experiments import run_sequentially
from tests.run_files import meta

ROOT = Path(__file__).resolve().parents[1]


def load(tmp_path: Path, text: str) -> config.Experiment:
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(text))
    return config.load(path)


def test_each_entry_solves_its_own_problem_labelled_with_what_differs(tmp_path):
    exp = load(tmp_path, """\
        dataset: adult
        kernel: {name: gaussian, sigma2: 10}
        problem: {C: 1}
        solvers: [{name: sbp, nu: from_lambda, C: 10}, {name: smo, C: 1, bias: true},
                  {name: pegasos, sigma2: median}, {name: sbp, nu: 0.1, label: mine}]
        """)
    assert [s.label for s in exp.solvers] == ["sbp[C=10;bias=False;nu=from_lambda]", "smo[bias=True]",
                                              "pegasos[bias=False;sigma2=median]", "mine[bias=False;nu=0.1]"]
    assert exp.swept
    own = [exp.for_solver(s) for s in exp.solvers]
    assert [e.lam for e in own] == ["1/(10.0*n)", "1/(1.0*n)", "1/(1.0*n)", "1/(1.0*n)"]
    assert [e.nu for e in own] == [NuFromLambda(), None, None, 0.1]
    assert [e.sigma2_rule for e in own] == [None, None, "median", None]
    assert [e.bias for e in own] == [False, True, False, False]
    assert own[0].lam_key == "solvers[0].C" and own[1].lam_key == "problem.C"


def test_an_entry_setting_the_experiments_value_changes_nothing(tmp_path):
    exp = load(tmp_path, "dataset: adult\nkernel: {sigma2: 10}\nproblem: {C: 1, nu: 0.1}\n"
                         "solvers: [{name: sbp, C: 1, nu: 0.1, sigma2: 10}, pegasos]\n")
    assert [s.label for s in exp.solvers] == ["sbp", "pegasos"] and not exp.swept


def test_an_entrys_value_replaces_the_experiments_sweep_and_a_list_sweeps_it(tmp_path):
    exp = load(tmp_path, "dataset: adult\nproblem: {C: [1, 10], nu: 0.1}\n"
                         "solvers: [sbp, {name: pegasos, lambda: 1/n}, {name: sdca, C: [0.1, 1]}]\n")
    assert [s.label for s in exp.solvers] == ["sbp[C=1]", "sbp[C=10]", "pegasos[lambda=1/n]",
                                              "sdca[C=0.1]", "sdca[C=1]"]
    assert [exp.for_solver(s).lam for s in exp.solvers] == [
        "1/(1.0*n)", "1/(10.0*n)", "1/n", "1/(0.1*n)", "1/(1.0*n)"]


def test_a_solver_that_needs_lambda_or_nu_may_get_it_from_its_entry(tmp_path):
    exp = load(tmp_path, "dataset: adult\nsolvers: [{name: sbp, nu: 0.1}, {name: pegasos, lambda: 0.01}]\n")
    assert [s.label for s in exp.solvers] == ["sbp[nu=0.1]", "pegasos[lambda=0.01]"]


HEAD = "dataset: adult\nproblem: {lambda: 0.1, nu: 0.1}\n"


@pytest.mark.parametrize("text,expected", [
    (HEAD + "solvers: [{name: sbp, nu: 2}]\n", "key 'solvers[0].nu': must be in [0, 1]"),
    (HEAD + "solvers: [{name: sbp, nu: lots}]\n",
     "key 'solvers[0].nu': expected a number in [0, 1] or 'from_lambda', got 'lots'"),
    (HEAD + "solvers: [{name: pegasos, C: 0}]\n", "key 'solvers[0].C': must be positive"),
    (HEAD + "solvers: [{name: pegasos, C: 1, lambda: 0.1}]\n", "key 'solvers[0].C': give either lambda or C"),
    (HEAD + "solvers: [{name: pegasos, lambda: 1/m}]\n", "key 'solvers[0].lambda': cannot evaluate '1/m'"),
    (HEAD + "solvers: [sbp, {name: pegasos, sigma2: wide}]\n",
     "key 'solvers[1].sigma2': expected a positive number or one of scale, median"),
    (HEAD + "kernel: linear\nsolvers: [{name: pegasos, sigma2: 1}]\n",
     "key 'solvers[0].sigma2': needs kernel.name gaussian (the linear kernel has no bandwidth)"),
    ("dataset: adult\nsolvers: [{name: sbp, nu: from_lambda}]\n",
     "key 'solvers[0].nu': 'from_lambda' needs problem.lambda (or C) to derive nu from"),
    (HEAD + "solvers: [{name: sbp, nu: [0.1, from_lambda]}]\n",
     "key 'solvers[0].nu[1]': 'from_lambda' cannot be one value of a sweep"),
    (HEAD + "solvers: [{name: sbp, nu: [0.1, 0.1]}]\n", "key 'solvers[0].nu[1]': repeats the value 0.1"),
    ("dataset: adult\nproblem: {C: 1}\nsolvers: [{name: pegasos, C: 10}, sbp]\n",
     "key 'solvers[1].name': solver 'sbp' needs problem.nu (a number in [0, 1], or nu: from_lambda to derive "
     "it from lambda or C)"),
    (HEAD + "solvers: [{name: pegasos, C: [1, 10]}, {name: pegasos, C: 10}]\n",
     "key 'solvers[1].label': two solvers are both labelled 'pegasos[C=10]'"),
])
def test_bad_entry_values_are_one_line_naming_the_key_and_exit_2(monkeypatch, capsys, tmp_path, text, expected):
    line = validate_text(monkeypatch, capsys, tmp_path, text)
    assert f"{tmp_path / 'exp.yaml'}: {expected}" in line


def test_an_entrys_lambda_is_checked_at_the_real_n_naming_its_key(monkeypatch, capsys, tmp_path):
    (tmp_path / "tr.svm").write_text("1 1:1\n-1 2:1\n1 1:1 2:1\n-1 2:0.5\n")
    (tmp_path / "te.svm").write_text("1 1:1\n-1 2:1\n")
    (tmp_path / "exp.yaml").write_text("dataset: {path: tr.svm, test_path: te.svm}\nkernel: linear\n"
                                       "problem: {lambda: 1/n}\nsolvers: [pegasos, {name: sdca, lambda: 1/(n-10)}]\n")
    assert sbpbench(monkeypatch, "validate", tmp_path / "exp.yaml") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exp.yaml: key 'solvers[1].lambda': gives lambda = -0.16666666666666666 at n = 4" in err[0]


def test_a_run_of_two_entries_of_different_C(monkeypatch, tmp_path, one_numba_thread):
    """Each entry's solver solves the problem of its own C; meta.json records both."""
    seen: dict[str, float] = {}
    real = loop.run_one

    def spy(exp, problem, spec, run, *args, **kwargs):
        seen[spec.label] = problem.lam
        return real(exp, problem, spec, run, *args, **kwargs)

    monkeypatch.setattr(loop, "run_one", spy)
    directory = run_sequentially(ROOT / "configs/ci/ci-kernel-solvers.yaml", tmp_path, [
        "dataset.n_train=100", "dataset.n_test=100", "budget.epochs=0.3", "runs=1",
        "solvers=[{name: pegasos, C: 10}, {name: pegasos, C: 0.1, label: wide}]"])
    resolved = meta(directory)["resolved"]
    entries = {e["label"]: e["problem"] for e in resolved["solvers"]}
    assert set(entries) == {"pegasos[C=10]", "wide[C=0.1]"}
    assert [entries[label]["lambda_expression"] for label in seen] == ["1/(10.0*n)", "1/(0.1*n)"]
    assert seen == pytest.approx({"pegasos[C=10]": 1 / 1000, "wide[C=0.1]": 1 / 10}, rel=1e-12)
    assert [entries[label]["lambda"] for label in seen] == pytest.approx(list(seen.values()), rel=1e-12)
    assert "lambda" not in resolved["problem"]
    assert [r["status"] for r in meta(directory)["runs"]] == ["budget"] * 2
