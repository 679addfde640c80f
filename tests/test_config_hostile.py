"""Hostile inputs (issue #15): every broken value, YAML file or command line ends with one line
``sbpbench: error: ...`` and exit code 2, quickly, and nothing is written."""

import ast
import operator
import os
import time
from pathlib import Path

import pytest

from sbpbench import data
from sbpbench.errors import UserError, shown
from sbpbench.experiment import assemble, config, lambdas
from tests.cli_runner import one_error_line, sbpbench, validate_text

ROOT = Path(__file__).resolve().parents[1]

HEAD = "dataset: {name: adult, n_train: 300, n_test: 300}\n"
PEGASOS = HEAD + "solvers: [pegasos]\nproblem: {lambda: 1/n}\n"

BILLION_LAUGHS = "".join(
    [f'a0: &a0 ["{"lol" * 20}"]\n']
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)])
MERGE_BOMB = "".join(
    ["m0: &m0 {k0: v, k1: v}\n"]
    + [f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 4)}], x{i}: 1}}\n" for i in range(1, 12)])


# ----------------------------------------------------------------------------- values


@pytest.mark.parametrize("text,expected", [
    # floats must be finite
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: .nan}\n", "key 'problem.lambda': expected a finite number, got nan"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: .inf}\n", "key 'problem.lambda': expected a finite number"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: 1e400}\n", "key 'problem.lambda': gives lambda = inf"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: 1e-320}\n", "key 'problem.lambda': gives lambda = 1e-320"),
    (PEGASOS + "kernel: {sigma2: .inf}\n", "key 'kernel.sigma2': expected a finite number, got inf"),
    (PEGASOS + "kernel: {sigma2: 1e400}\n", "key 'kernel.sigma2': expected a finite number, got '1e400'"),
    (PEGASOS + "kernel: {sigma2: 1e-320}\n", "key 'kernel.sigma2': must be at least 2.2250738585072014e-308"),
    (PEGASOS + "kernel: {sigma2: -.inf}\n", "key 'kernel.sigma2': expected a finite number, got -inf"),
    (PEGASOS + "kernel: {cache_mb: 1e-320}\n", "key 'kernel.cache_mb': must be at least"),
    (PEGASOS + "budget: {epochs: .inf}\n", "key 'budget.epochs': expected a finite number, got inf"),
    (PEGASOS + "budget: {seconds: .nan}\n", "key 'budget.seconds': expected a finite number"),
    (PEGASOS + "budget: {test_error: .nan}\n", "key 'budget.test_error': expected a finite number"),
    (HEAD + "solvers: [sbp]\nproblem: {nu: .nan}\n", "key 'problem.nu': expected a finite number"),
    # integers: finite, whole and bounded, never a traceback
    (PEGASOS + "runs: .inf\n", "key 'runs': expected an integer, got inf"),
    (PEGASOS + "runs: 1000000\n", "key 'runs': must be at most 10000"),
    (PEGASOS + "seed: .nan\n", "key 'seed': expected an integer, got nan"),
    (PEGASOS + "epochs: .inf\n", "key 'epochs': unknown key"),
    (PEGASOS + "checkpoints: {per_decade: .inf}\n", "key 'checkpoints.per_decade': expected an integer, got inf"),
    ("dataset: {name: adult, n_train: .inf}\nsolvers: [pegasos]\nproblem: {lambda: 0.1}\n",
     "key 'dataset.n_train': expected an integer, got inf"),
    ("dataset: {name: adult, n_train: 1.0e+300}\nsolvers: [pegasos]\nproblem: {lambda: 0.1}\n",
     "key 'dataset.n_train': expected an integer of at most 9223372036854775807"),
    (PEGASOS + "seed: " + "8" * 400 + "\n",
     "key 'seed': expected an integer of at most 9223372036854775807 in absolute value, "
     "got <an integer of about 400 digits>"),
    (PEGASOS + "seed: " + "9" * 5000 + "\n", "exp.yaml:4: an integer of 5000 characters is too long"),
    # C: the key the user wrote
    (HEAD + "solvers: [pegasos]\nproblem: {C: .inf}\n", "key 'problem.C': expected a finite number, got inf"),
    (HEAD + "solvers: [pegasos]\nproblem: {C: 1.0e308}\n", "key 'problem.C': gives lambda = 0.0 at n = 300"),
    (HEAD + "solvers: [pegasos]\nproblem: {C: 1e-320}\n", "key 'problem.C': must be at least"),
    # lambda expressions, checked at n_train
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: 1/(n-500)}\n",
     "key 'problem.lambda': gives lambda = -0.005 at n = 300: must be positive"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: 1/(n-300)}\n", "at n = 300: division by zero"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: (-n)**0.5}\n", "at n = 300: not a real number"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: 'n**n**n'}\n", "'n**n**n' at n = 300: too large for a double"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: 1/n-1/n}\n", "gives lambda = 0.0 at n = 300: must be positive"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: " + "+".join(["n"] * 40) + "}\n", "more than 64 terms"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: '" + "1" * 300 + "'}\n", "longer than 200 characters"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: __import__}\n", "cannot evaluate '__import__'"),
])
def test_bad_values_are_one_line_and_exit_2(monkeypatch, capsys, tmp_path, text, expected):
    assert expected in validate_text(monkeypatch, capsys, tmp_path, text)


@pytest.mark.parametrize("solver,param,value,expected", [
    ("sbp", "eta0", -1, "must be >= 0"),
    ("sbp", "eta0", "1e-320", "must be at least"),
    ("sbp", "eta0", ".inf", "expected a finite number"),
    ("dcd", "tol", -1, "must be >= 0"),
    ("sgd-s", "f", 0, "must be positive"),
    ("sgd-r", "rho", -0.5, "must be >= 0"),
    ("liblinear", "max_iter", 2**31, "must be at most 2147483647"),
    ("fourier", "max_iter", 2**31, "must be at most 2147483647"),
    ("smo", "eps", ".nan", "expected a finite number"),
    ("pegasos", "mini_batch", ".inf", "expected an integer, got inf"),
])
def test_solver_parameters_are_checked_for_their_meaning(monkeypatch, capsys, tmp_path, solver, param, value,
                                                          expected):
    kernel = "linear" if solver in ("dcd", "sgd-s", "sgd-r", "liblinear") else "gaussian"
    bias = "true" if solver == "smo" else "false"
    text = (HEAD + f"kernel: {{name: {kernel}}}\nproblem: {{lambda: 1/n, nu: 0.1, bias: {bias}}}\n"
            f"solvers: [{{name: {solver}, {param}: {value}}}]\n")
    assert f"key 'solvers[0].{param}': {expected}" in validate_text(monkeypatch, capsys, tmp_path, text)


def test_sensible_values_still_pass(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(HEAD + "name: a.b-c_1\nproblem: {lambda: 1.0e-300, nu: 0.1}\nkernel: {sigma2: 2.3e-308}\n"
                    "solvers: [{name: sbp, eta0: 0}, pegasos]\nseed: 9223372036854775807\nruns: 10000\n")
    exp = config.load(path)
    assert exp.solvers[0].params == {"eta0": 0.0} and exp.seed == 2**63 - 1 and exp.lam == 1e-300


# ----------------------------------------------------------------------------- lambda at the real n


def _lambda_as_before(expr, n):
    """The evaluator before issue #15 (Python's own int and float arithmetic), as the reference."""
    if isinstance(expr, (int, float)):
        return float(expr)
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return n
        if isinstance(node, ast.BinOp):
            return ops[type(node.op)](walk(node.left), walk(node.right))
        return ops[type(node.op)](walk(node.operand))
    return float(walk(ast.parse(str(expr), mode="eval")))


CONFIGS = sorted((ROOT / "configs").rglob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_lambda_of_every_shipped_config_is_the_same_double_as_before(path):
    exp = config.load(path)
    if exp.lam is None:
        pytest.skip("no lambda")
    for n in (300, 1000, 5000, 7000, 32561, 49749, 60000, 522910, 581012, 781265):
        assert exp.lambda_at(n) == _lambda_as_before(exp.lam, n)
        assert assemble.resolve(exp, n)["lambda"] == _lambda_as_before(exp.lam, n)


def test_lambda_is_checked_again_at_the_real_n(monkeypatch, capsys, tmp_path):
    (tmp_path / "tr.svm").write_text("1 1:1\n-1 2:1\n1 1:1 2:1\n-1 2:0.5\n")
    (tmp_path / "te.svm").write_text("1 1:1\n-1 2:1\n")
    path = tmp_path / "small.yaml"
    path.write_text("dataset: {path: tr.svm, test_path: te.svm}\nkernel: linear\nsolvers: [pegasos]\n"
                    "problem: {lambda: 1/(n-10)}\n")
    message = "small.yaml: key 'problem.lambda': gives lambda = -0.16666666666666666 at n = 4: must be positive"
    assert config.load(path).lam == "1/(n-10)"  # fine at the representative n = 1000
    assert sbpbench(monkeypatch, "validate", path) == 2  # validate reads the files, so knows n = 4
    assert message in one_error_line(capsys.readouterr().err)
    results = tmp_path / "res"
    assert sbpbench(monkeypatch, "run", path, "--results", results, "--no-plot", "-q") == 2
    assert message in one_error_line(capsys.readouterr().err)
    assert not (results / "small").exists()


def test_lambda_from_C_at_the_real_n_names_C(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("dataset: adult\nsolvers: [pegasos]\nproblem: {C: 1.0e+300}\n")
    exp = config.load(path)  # lambda = 1e-303 at n = 1000
    with pytest.raises(UserError, match=r"c.yaml: key 'problem.C': gives lambda = 1e-308 at n = 100000000: must be at"):
        assemble.resolve(exp, 10**8)


def test_lambda_expressions_take_bounded_time():
    """Refused before they are computed: each value has more digits than any memory holds, so
    computing one would never end; 5 s is milliseconds of work with room for a loaded machine."""
    for expr in ("n**n**n", "9**9**9**9**9**9**9", "(n*n*n*n*n*n*n*n)**(n*n*n*n*n*n*n*n)"):
        t0 = time.perf_counter()
        with pytest.raises(ValueError, match="too large for a double"):
            lambdas.eval_lambda(expr, 32561)
        assert time.perf_counter() - t0 < 5


# ----------------------------------------------------------------------------- YAML and files


@pytest.mark.parametrize("text,expected", [
    (PEGASOS + "runs: 1\nruns: 2\n", "exp.yaml:5: duplicate key 'runs'"),
    (HEAD + "solvers: [pegasos]\nproblem: {lambda: 1/n, lambda: 0.5}\n", "exp.yaml:3: duplicate key 'lambda'"),
    (PEGASOS + "x: " + "[" * 10000 + "]" * 10000 + "\n", "exp.yaml: lists and mappings nested deeper than 100 levels"),
    (PEGASOS + "x: " + "[" * 150 + "]" * 150 + "\n", "exp.yaml:4: lists and mappings nested deeper than 100 levels"),
    (BILLION_LAUGHS, "aliases expand to more than 100000 values"),
    (MERGE_BOMB, "aliases expand to more than 100000 values"),
    ("a: &a [1, *a]\n", "exp.yaml:1: an alias refers to a list or mapping that contains it"),
    (PEGASOS.encode() + b"description: caf\xe9\n",
     f"exp.yaml: not UTF-8 text (byte {len(PEGASOS) + 16} cannot be decoded)"),
    (PEGASOS.encode("utf-16"), "exp.yaml: not UTF-8 text (byte 0 cannot be decoded)"),
    (PEGASOS + "description: *undefined" + "x" * 5000 + "\n", "exp.yaml:4: invalid YAML: found undefined alias"),
])
def test_hostile_yaml_is_one_short_line(monkeypatch, capsys, tmp_path, text, expected):
    err = validate_text(monkeypatch, capsys, tmp_path, text)
    assert expected in err and len(err) <= 500


@pytest.mark.parametrize("bomb", [BILLION_LAUGHS, MERGE_BOMB], ids=["aliases", "merges"])
def test_alias_bombs_are_refused_in_milliseconds_with_little_memory(tmp_path, bomb):
    import tracemalloc

    path = tmp_path / "bomb.yaml"
    path.write_text(bomb)
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(UserError, match="aliases expand"):
            config.load(path)
        seconds, peak = time.perf_counter() - t0, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # expanded, either bomb is 10^9 values (minutes and gigabytes): the memory peak is the tight
    # bound; the seconds, milliseconds of work, have room for a loaded machine
    assert len(bomb) < 1500 and seconds < 5 and peak < 5 * 2**20


def test_aliases_and_merges_within_bounds_still_work(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("dataset: {name: adult, n_train: &n 300, n_test: *n}\nsolvers: [pegasos]\n"
                    "problem: {lambda: 1/n}\n"
                    "checkpoints: {<<: {per_decade: 5, epochs: false}, per_decade: 3}\n")
    exp = config.load(path)
    assert exp.dataset.n_test == 300 and exp.checkpoints == config.Checkpoints(3, False)


@pytest.mark.parametrize("override,expected", [
    ("name=..", "key 'name': '..' cannot name a results folder"),
    ("budget.epochs=.inf", "key 'budget.epochs': expected a finite number, got inf"),
    ("runs={a: 1, a: 2}", "--set 'runs={a: 1, a: 2}':1: duplicate key 'a'"),
    ("x=" + "[" * 5000, "lists and mappings nested deeper than 100 levels"),
    ("description=" + BILLION_LAUGHS.replace("\n", ", ").join("{}"), "aliases expand to more than 100000 values"),
])
def test_overrides_are_loaded_and_checked_like_the_file(monkeypatch, capsys, tmp_path, override, expected):
    path = tmp_path / "exp.yaml"
    path.write_text(PEGASOS)
    assert sbpbench(monkeypatch, "run", path, "--set", override, "--results", tmp_path / "res") == 2
    assert expected in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "res").exists()


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["..", ".", "...", "a/b", "../x", "/tmp", "x" * 101, "a b", ""])
def test_names_are_one_path_component(monkeypatch, capsys, tmp_path, name):
    err = validate_text(monkeypatch, capsys, tmp_path, PEGASOS + f"name: '{name}'\n")
    assert "key 'name': " in err and "cannot name a results folder" in err


def test_a_config_file_named_dot_dot_needs_a_name(monkeypatch, capsys, tmp_path):
    path = tmp_path / "...yaml"
    path.write_text(PEGASOS)
    assert sbpbench(monkeypatch, "run", path, "--results", tmp_path / "res") == 2
    assert "key 'name': '..' cannot name a results folder" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "res").exists()


# ----------------------------------------------------------------------------- command line


@pytest.fixture
def good_config(tmp_path):
    path = tmp_path / "good.yaml"
    path.write_text(PEGASOS)
    return path


@pytest.mark.parametrize("args,expected", [
    (["run", "{cfg}", "--jobs", "0"], "Invalid value for '--jobs'"),
    (["run", "{cfg}", "--results", "{cfg}"], "Invalid value for '--results'"),
    (["validate", "{dir}"], "is a directory"),
    (["run"], "Missing argument 'CONFIGS...'"),
    (["run", "{cfg}", "--bogus"], "No such option '--bogus'"),
    (["bogus"], "No such command 'bogus'"),
    (["--debug", "run", "{cfg}", "--jobs", "0"], "Invalid value for '--jobs'"),
])
def test_usage_errors_are_one_line_and_exit_2(monkeypatch, capsys, tmp_path, good_config, args, expected):
    args = [a.format(cfg=good_config, dir=tmp_path) for a in args]
    assert sbpbench(monkeypatch, *args) == 2
    assert expected in one_error_line(capsys.readouterr().err)


def test_results_that_cannot_be_a_folder_stop_before_loading_data(monkeypatch, capsys, tmp_path, good_config):
    def no_loading(*args, **kwargs):
        raise AssertionError("data loaded before --results was checked")

    monkeypatch.setattr(data, "load", no_loading)
    results = good_config / "sub"  # below a file
    assert sbpbench(monkeypatch, "run", good_config, "--results", results) == 2
    one_error_line(capsys.readouterr().err, f"--results {results}: cannot create or write this folder",
                   "(Not a directory)")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_results_folder(monkeypatch, capsys, tmp_path, good_config):
    results = tmp_path / "ro"
    results.mkdir(mode=0o500)
    assert sbpbench(monkeypatch, "run", good_config, "--results", results) == 2
    assert "cannot create or write this folder" in one_error_line(capsys.readouterr().err)


def test_long_messages_are_cut(monkeypatch, capsys, tmp_path):
    long_path = "/".join(["d"] * 3000)
    err = validate_text(monkeypatch, capsys, tmp_path,
                        f"dataset: {{path: {long_path}, test_path: t}}\nsolvers: [pegasos]\nproblem: {{lambda: 1}}\n")
    assert "key 'dataset.path': cannot read file" in err and len(err) == 500
    assert "..." in err.split("cannot read file ", 1)[1]
    assert err.endswith("(File name too long)")  # the path is shortened in its middle, the reason kept


def test_a_too_long_file_name_is_not_a_traceback(monkeypatch, capsys, tmp_path):
    err = validate_text(monkeypatch, capsys, tmp_path,
                        f"dataset: {{path: {'f' * 300}, test_path: t}}\nsolvers: [pegasos]\nproblem: {{lambda: 1}}\n")
    assert "key 'dataset.path': cannot read file" in err


def test_shown_values_are_short():
    assert len(shown("x" * 1000)) == 60 and "..." in shown("x" * 1000)
    assert len(shown(list(range(10**5)))) <= 60
    assert shown(7 * 10**4999) == "<an integer of about 5000 digits>"
