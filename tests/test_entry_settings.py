"""A solver entry's own kernel and problem values (``kernel``, ``sigma2``, ``lambda`` or ``C``, ``nu``,
``bias``): each solver of one config at its own setting, checked like the top level, recorded in meta.json."""

import textwrap
from pathlib import Path

import pytest

from sbpbench.execution import loop
from sbpbench.experiment import config
from sbpbench.experiment.config import NuFromLambda
from sbpbench.outputs import page, plotting
from sbpbench.results.store import read_curves
from tests.cli_runner import sbpbench, validate_text
from tests.experiments import adult_config, run_sequentially, write_config
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


def test_an_entrys_own_kernel_puts_a_linear_solver_beside_kernel_solvers(tmp_path):
    exp = load(tmp_path, """\
        dataset: adult
        kernel: {name: gaussian, sigma2: [10, median]}
        problem: {C: 1, nu: 0.1}
        solvers: [sbp, {name: liblinear, kernel: linear}, {name: dcd, kernel: {name: linear}},
                  {name: pegasos, kernel: gaussian}]
        """)
    assert [s.label for s in exp.solvers] == ["sbp[sigma2=10]", "sbp[sigma2=median]", "liblinear[kernel=linear]",
                                              "dcd[kernel=linear]", "pegasos[sigma2=10]", "pegasos[sigma2=median]"]
    own = [exp.for_solver(s) for s in exp.solvers]
    assert [e.kernel.name for e in own] == ["gaussian", "gaussian", "linear", "linear", "gaussian", "gaussian"]
    assert [e.sigma2_rule for e in own] == [None, "median", None, None, None, "median"]  # no rule for linear


def test_an_entrys_gaussian_kernel_beside_a_linear_experiment_takes_its_own_sigma2(tmp_path):
    exp = load(tmp_path, "dataset: adult\nkernel: linear\nproblem: {C: 1, nu: 0.1}\n"
                         "solvers: [dcd, {name: sbp, kernel: gaussian, sigma2: median}]\n")
    assert [s.label for s in exp.solvers] == ["dcd", "sbp[kernel=gaussian;sigma2=median]"]
    sbp = exp.for_solver(exp.solvers[1])
    assert (sbp.kernel.name, sbp.sigma2_rule) == ("gaussian", "median")


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
    (HEAD + "solvers: [sbp, liblinear]\n", "key 'solvers[1].name': solver 'liblinear' needs kernel.name linear, "
                                           "not 'gaussian' (its solver entry may set kernel: linear)"),
    (HEAD + "solvers: [{name: fourier, kernel: linear}]\n",
     "key 'solvers[0].name': solver 'fourier' needs kernel.name gaussian, not 'linear'"),
    (HEAD + "solvers: [{name: liblinear, kernel: poly}]\n",
     "key 'solvers[0].kernel.name': 'poly' is not one of: gaussian, linear"),
    (HEAD + "solvers: [{name: liblinear, kernel: {name: linear, cache_mb: 10}}]\n",
     "key 'solvers[0].kernel.cache_mb': unknown key (valid: name)"),
    (HEAD + "solvers: [{name: liblinear, kernel: [linear]}]\n",
     "key 'solvers[0].kernel': expected a mapping, got list"),
    (HEAD + "solvers: [{name: liblinear, kernel: linear, sigma2: 1}]\n",
     "key 'solvers[0].sigma2': needs kernel.name gaussian (the linear kernel has no bandwidth)"),
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


@pytest.fixture(scope="module")
def linear_beside_kernel(one_numba_thread, tmp_path_factory):
    """SBP on the Gaussian kernel beside LIBLINEAR and DCD on the linear one, on 200 Adult rows."""
    folder = tmp_path_factory.mktemp("linear")
    doc = adult_config("linear", runs=1, solvers=["sbp", {"name": "liblinear", "kernel": "linear"},
                                                   {"name": "dcd", "kernel": {"name": "linear"}}])
    with pytest.MonkeyPatch.context() as patch:
        assert sbpbench(patch, "run", write_config(folder / "linear.yaml", doc), "--results", folder / "res", "-q") == 0
    (run,) = (folder / "res" / "linear").iterdir()
    return run


def test_a_linear_entry_runs_on_the_same_split_and_meta_records_each_kernel(linear_beside_kernel):
    resolved = meta(linear_beside_kernel)["resolved"]
    kernels = {e["label"]: e["kernel"]["name"] for e in resolved["solvers"]}
    assert kernels == {"sbp": "gaussian", "liblinear[kernel=linear]": "linear", "dcd[kernel=linear]": "linear"}
    assert "name" not in resolved["kernel"]  # not one kernel for all
    assert resolved["dataset"]["n_train"] == 200 and "n_train" not in resolved["solvers"][1]  # one split for all
    assert [r["status"] for r in meta(linear_beside_kernel)["runs"]] == ["budget"] * 3


def test_the_page_and_the_figures_draw_every_entry_against_seconds(linear_beside_kernel):
    data = page.page_data(read_curves(linear_beside_kernel / "curves.csv"))
    assert [("seconds|test_error" in s["curves"], "kernel_evals|test_error" in s["curves"])
            for s in data["solvers"]] == [(True, True), (True, False), (True, False)]
    assert "seconds|test_error" in (linear_beside_kernel / "index.html").read_text()
    figures = sorted(p.name for p in linear_beside_kernel.iterdir() if p.suffix in (".png", ".svg"))
    assert figures == ["figure2.png", "figure2.svg", "test_error-vs-seconds.png", "test_error-vs-seconds.svg"]
    drawn = plotting.curves_figure(read_curves(linear_beside_kernel / "curves.csv"), plotting.X_AXES["seconds"],
                                   plotting.Y_AXES["test_error"])
    assert len(drawn.axes[0].get_legend().get_texts()) == 3
