"""Experiment configs: defaults, lambda expressions, and one-line errors naming file and key."""

import textwrap

import pytest

from sbpbench.errors import UserError
from sbpbench.experiment import config, lambdas

GOOD = """
name: adult-quick
dataset: {name: adult, n_train: 5000, n_test: 5000}
kernel: {name: gaussian, sigma2: 10}
problem: {lambda: 1/n, nu: 0.011, bias: false}
solvers: [sbp, pegasos]
budget: {epochs: 3}
runs: 3
seed: 0
"""


def write(tmp_path, text, name="exp.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def error_of(tmp_path, text):
    with pytest.raises(UserError) as info:
        config.load(write(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message
    assert "exp.yaml" in message
    return message


def test_the_issue_example_is_accepted(tmp_path):
    exp = config.load(write(tmp_path, GOOD))
    assert exp.name == "adult-quick"
    assert exp.dataset.n_train == 5000
    assert exp.kernel.sigma2 == 10.0
    assert [s.name for s in exp.solvers] == ["sbp", "pegasos"]
    assert exp.budget.epochs == 3 and exp.runs == 3 and exp.seed == 0
    assert lambdas.eval_lambda(exp.lam, 32561) == pytest.approx(1 / 32561)


def test_defaults(tmp_path):
    exp = config.load(write(tmp_path, "dataset: adult\nproblem: {nu: 0.1}\nsolvers: sbp\n", "mini.yaml"))
    assert exp.name == "mini"
    assert exp.kernel == config.KernelSpec("gaussian", 1.0, 256.0)
    assert exp.budget == config.Budget(1.0, None, None, None)
    assert exp.checkpoints == config.Checkpoints(10, True)
    assert (exp.runs, exp.seed, exp.bias, exp.lam) == (1, 0, False, None)


def test_solver_parameters_labels_and_budgets(tmp_path):
    exp = config.load(write(tmp_path, """
        dataset: adult
        problem: {lambda: 0.001}
        budget: {epochs: 10}
        solvers: [{name: pegasos, mini_batch: 4}, {name: pegasos, projection: false, label: noproj,
                   budget: {epochs: 100}}]
        """))
    assert exp.solvers[0].params == {"mini_batch": 4}
    assert exp.solvers[0].label == "pegasos[mini_batch=4]"
    assert exp.solvers[1].label == "noproj"
    assert exp.solvers[0].budget is None and exp.solvers[1].budget == config.Budget(100.0)
    assert exp.budget.epochs == 10


@pytest.mark.parametrize("expr,value", [("1/n", 1e-3), ("1/(100*n)", 1e-5), ("2 ** -3", 0.125), (0.5, 0.5)])
def test_lambda_expressions(expr, value):
    assert lambdas.eval_lambda(expr, 1000) == pytest.approx(value)


def test_C_means_one_over_C_n(tmp_path):
    exp = config.load(write(tmp_path, "dataset: adult\nproblem: {C: 10}\nsolvers: pegasos\n"))
    assert lambdas.eval_lambda(exp.lam, 1000) == pytest.approx(1e-4)


@pytest.mark.parametrize("text,expected", [
    ("dataset: adult\nsolvers: sbp\nproblem: {nu: 0.1}\nbudgett: {epochs: 1}\n",
     "key 'budgett': unknown key (valid: name, description, dataset"),
    ("dataset: adult\nsolvers: [sbp]\nproblem: {nu: 0.1}\nruns: two\n", "key 'runs': expected an integer, got 'two'"),
    ("dataset: adult\nsolvers: [svm]\nproblem: {nu: 0.1}\n", "key 'solvers[0].name': unknown solver 'svm' (valid: "),
    ("dataset: {name: iris}\nsolvers: [sbp]\n", "key 'dataset.name': unknown dataset 'iris' (valid: adult"),
    ("dataset: adult\nsolvers: [sbp]\n", "key 'solvers[0].name': solver 'sbp' needs problem.nu"),
    ("dataset: adult\nsolvers: [pegasos]\nproblem: {lambda: 1/m}\n", "key 'problem.lambda': cannot evaluate '1/m'"),
    ("dataset: adult\nsolvers: [pegasos]\nproblem: {lambda: 0.1, bias: true}\n",
     "solver 'pegasos' does not support problem.bias: true"),
    ("dataset: adult\nsolvers: [{name: pegasos, representation: primal}]\nproblem: {lambda: 0.1}\n",
     "key 'solvers[0].name': solver 'pegasos': representation 'primal' needs kernel.name linear, not 'gaussian'"),
    ("dataset: adult\nsolvers: [{name: pegasos, mini_batch: 0}]\nproblem: {lambda: 0.1}\n",
     "key 'solvers[0].mini_batch': must be positive"),
    ("dataset: adult\nsolvers: [{name: pegasos, step: 2}]\nproblem: {lambda: 0.1}\n",
     "key 'solvers[0].step': unknown key (valid: name, path, label, budget, bias, kernel, sigma2, lambda, C, nu, "
     "mini_batch, projection, representation)"),
    ("dataset: adult\nsolvers: [{name: pegasos, budget: {epoch: 2}}]\nproblem: {lambda: 0.1}\n",
     "key 'solvers[0].budget.epoch': unknown key"),
    ("dataset: adult\nsolvers: [sbp]\nproblem: {nu: 0.1}\nkernel: {name: poly}\n",
     "key 'kernel.name': 'poly' is not one of: gaussian, linear"),
    ("dataset: {path: missing.svm, test_path: missing.t}\nsolvers: [sbp]\nproblem: {nu: 0.1}\n",
     "key 'dataset.path': cannot read file"),
    ("dataset: adult\nsolvers: [sbp, sbp]\nproblem: {nu: 0.1}\n", "two solvers are both labelled 'sbp'"),
    ("solvers: [sbp]\n", "key 'dataset': missing"),
    ("- just\n- a list\n", "key 'top level': expected a mapping"),
])
def test_errors_name_the_file_and_key(tmp_path, text, expected):
    assert expected in error_of(tmp_path, text)


def test_invalid_yaml_names_the_line(tmp_path):
    message = error_of(tmp_path, "dataset: adult\nsolvers: [sbp\nproblem: {nu: 0.1}\n")
    assert "invalid YAML" in message and "exp.yaml:" in message


def test_unreadable_file(tmp_path):
    with pytest.raises(UserError, match="cannot read config"):
        config.load(tmp_path / "nope.yaml")


def test_relative_dataset_paths_resolve_against_the_config(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "tr.svm").write_text("1 1:1\n-1 2:1\n")
    (tmp_path / "d" / "te.svm").write_text("1 1:1\n")
    exp = config.load(write(tmp_path, "dataset: {path: d/tr.svm, test_path: d/te.svm}\nsolvers: [sbp]\n"
                                      "problem: {nu: 0.1}\n"))
    assert exp.dataset.path == str(tmp_path / "d" / "tr.svm")


def test_overrides_apply_before_validation(tmp_path):
    path = write(tmp_path, GOOD)
    exp = config.load(path, ["budget.epochs=1", "solvers=[sbp]", "dataset.n_train=100", "checkpoints.per_decade=5"])
    assert exp.budget.epochs == 1 and [s.name for s in exp.solvers] == ["sbp"]
    assert exp.dataset.n_train == 100 and exp.checkpoints.per_decade == 5
    with pytest.raises(UserError, match="expected KEY=VALUE"):
        config.load(path, ["budget.epochs"])
    with pytest.raises(UserError, match="key 'runs': expected an integer"):
        config.load(path, ["runs=many"])
