"""Sweeps: lists of values expand to one solver entry per combination, all in one experiment."""

import json
import shutil
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from sbpbench.errors import UserError
from sbpbench.execution.problems import ProblemCache
from sbpbench.experiment import assemble, config
from sbpbench.outputs.summary import summary_table
from sbpbench.results.agreement import comparable
from sbpbench.results.store import read_curves
from sbpbench.solvers import SOLVERS
from tests.cli_runner import sbpbench, validate_text
from tests.experiments import run_sequentially, write_adult_config
from tests.run_files import curves, meta

HEAD = "dataset: adult\nproblem: {lambda: 0.1, nu: 0.1}\n"


def write(tmp_path, text, name="exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load(tmp_path, text) -> config.Experiment:
    return config.load(write(tmp_path, text))


def error_of(tmp_path, text) -> str:
    with pytest.raises(UserError) as info:
        load(tmp_path, text)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "exp.yaml"))
    return message


def labels(exp: config.Experiment) -> list[str]:
    return [s.label for s in exp.solvers]


# ----------------------------------------------------------------------------- expansion


def test_a_grid_expands_entry_by_entry_with_the_varying_values_in_the_labels(tmp_path):
    exp = load(tmp_path, HEAD + "kernel: {sigma2: [1, 10]}\nsolvers: [sbp, {name: pegasos, mini_batch: [1, 4]}]\n")
    assert labels(exp) == ["sbp[sigma2=1]", "sbp[sigma2=10]",
                           "pegasos[mini_batch=1;sigma2=1]", "pegasos[mini_batch=1;sigma2=10]",
                           "pegasos[mini_batch=4;sigma2=1]", "pegasos[mini_batch=4;sigma2=10]"]
    assert [s.params for s in exp.solvers] == [{}, {}, *[{"mini_batch": 1}] * 2, *[{"mini_batch": 4}] * 2]
    assert [s.overrides for s in exp.solvers] == [{"sigma2": 1.0}, {"sigma2": 10.0}] * 3
    assert exp.solvers[3].describe() == "mini_batch=1;sigma2=10"  # the params column
    assert exp.swept and exp.kernel.sigma2 == 1.0  # the experiment holds the first values
    assert [exp.for_solver(s).kernel.sigma2 for s in exp.solvers] == [1.0, 10.0] * 3


def test_a_sweep_of_solver_parameters_alone_keeps_one_problem(tmp_path):
    exp = load(tmp_path, HEAD + "solvers: [{name: pegasos, mini_batch: [1, 4], projection: [true, false]}]\n")
    assert labels(exp) == ["pegasos[mini_batch=1;projection=True]", "pegasos[mini_batch=1;projection=False]",
                           "pegasos[mini_batch=4;projection=True]", "pegasos[mini_batch=4;projection=False]"]
    assert not exp.swept and all(exp.for_solver(s) is exp for s in exp.solvers)


@pytest.mark.parametrize("problem,labelled,lam_key,lambdas_at_200", [
    ("{lambda: [1/n, 1/(10*n)]}", ["lambda=1/n", "lambda=1/(10*n)"], "problem.lambda", [1 / 200, 1 / 2000]),
    ("{lambda: [0.01, 1e-4]}", ["lambda=0.01", "lambda=1e-4"], "problem.lambda", [0.01, 1e-4]),
    ("{C: [1, 10]}", ["C=1", "C=10"], "problem.C", [1 / 200, 1 / 2000]),
])
def test_lambda_and_C_sweeps(tmp_path, problem, labelled, lam_key, lambdas_at_200):
    exp = load(tmp_path, f"dataset: adult\nproblem: {problem}\nsolvers: [pegasos]\n")
    assert labels(exp) == [f"pegasos[{text}]" for text in labelled]
    variants = [exp.for_solver(s) for s in exp.solvers]
    assert [v.lam_key for v in variants] == [lam_key, lam_key]
    assert [v.lambda_at(200) for v in variants] == pytest.approx(lambdas_at_200, rel=1e-15)
    assert [assemble.resolve(v, 200)["lambda"] for v in variants] == [v.lambda_at(200) for v in variants]


def test_a_grid_of_lambda_and_nu(tmp_path):
    exp = load(tmp_path, "dataset: adult\nproblem: {lambda: [0.1, 0.01], nu: [0.05, 0.5]}\nsolvers: [sbp]\n")
    assert labels(exp) == ["sbp[lambda=0.1;nu=0.05]", "sbp[lambda=0.1;nu=0.5]",
                           "sbp[lambda=0.01;nu=0.05]", "sbp[lambda=0.01;nu=0.5]"]
    assert [(v.lam, v.nu) for v in map(exp.for_solver, exp.solvers)] == [
        (0.1, 0.05), (0.1, 0.5), (0.01, 0.05), (0.01, 0.5)]


def test_a_labelled_entry_gets_its_label_and_the_varying_values(tmp_path):
    exp = load(tmp_path, HEAD + "kernel: {sigma2: [1, 10]}\n"
                                "solvers: [{name: pegasos, label: small, mini_batch: [1, 4], projection: false},"
                                " {name: sbp, label: mine}]\n")
    assert labels(exp) == ["small[mini_batch=1;sigma2=1]", "small[mini_batch=1;sigma2=10]",
                           "small[mini_batch=4;sigma2=1]", "small[mini_batch=4;sigma2=10]",
                           "mine[sigma2=1]", "mine[sigma2=10]"]
    assert exp.solvers[0].params == {"mini_batch": 1, "projection": False}


def test_a_list_of_one_value_is_that_value(tmp_path):
    scalar = load(tmp_path, "dataset: adult\nkernel: {sigma2: 10}\nproblem: {lambda: 1/n, nu: 0.1}\n"
                            "solvers: [{name: pegasos, mini_batch: 4}, sbp]\n")
    listed = load(tmp_path, "dataset: adult\nkernel: {sigma2: [10]}\nproblem: {lambda: [1/n], nu: [0.1]}\n"
                            "solvers: [{name: pegasos, mini_batch: [4]}, sbp]\n")
    assert labels(listed) == ["pegasos[mini_batch=4]", "sbp"]
    assert listed.solvers == scalar.solvers and not listed.swept
    assert assemble.problem_key(listed) == assemble.problem_key(scalar)


@pytest.mark.parametrize("text,expected", [
    (HEAD + "solvers: [sbp]\nruns: [1, 2]\n", "key 'runs': expected one value, not a list (only solver parameters, "
     "kernel.sigma2, problem.lambda, problem.C and problem.nu take a list of values to sweep)"),
    (HEAD + "solvers: [sbp]\nseed: [0, 1]\n", "key 'seed': expected one value, not a list"),
    ("dataset: {name: adult, n_train: [100, 200]}\nproblem: {nu: 0.1}\nsolvers: [sbp]\n",
     "key 'dataset.n_train': expected one value, not a list"),
    (HEAD + "solvers: [sbp]\nkernel: {name: [gaussian, linear]}\n",
     "key 'kernel.name': expected one value, not a list"),
    (HEAD + "solvers: [sbp]\nkernel: {cache_mb: [1, 2]}\n", "key 'kernel.cache_mb': expected one value, not a list"),
    ("dataset: adult\nproblem: {nu: 0.1, bias: [true, false]}\nsolvers: [sbp]\n",
     "key 'problem.bias': expected one value, not a list"),
    (HEAD + "solvers: [sbp]\nbudget: {epochs: [1, 2]}\n", "key 'budget.epochs': expected one value, not a list"),
    (HEAD + "solvers: [{name: sbp, budget: {epochs: [1, 2]}}]\n",
     "key 'solvers[0].budget.epochs': expected one value, not a list"),
    (HEAD + "solvers: [{name: sbp, label: [a, b]}]\n", "key 'solvers[0].label': expected one value, not a list"),
    (HEAD + "solvers: [{name: [sbp, pegasos]}]\n", "key 'solvers[0].name': expected one value, not a list"),
    (HEAD + "solvers: [sbp]\ncheckpoints: {per_decade: [5, 10]}\n",
     "key 'checkpoints.per_decade': expected one value, not a list"),
    (HEAD + "solvers: [sbp]\nkernel: {sigma2: []}\n", "key 'kernel.sigma2': an empty list"),
    (HEAD + "solvers: [sbp]\nkernel: {sigma2: [10, 1, 10.0]}\n", "key 'kernel.sigma2[2]': repeats the value 10.0"),
    (HEAD + "solvers: [sbp]\nkernel: {sigma2: [1, -1]}\n", "key 'kernel.sigma2[1]': must be positive"),
    (HEAD + "solvers: [sbp]\nkernel: {sigma2: [1, [2]]}\n", "key 'kernel.sigma2[1]': expected a number, got [2]"),
    (HEAD + "solvers: [sbp]\nkernel: {name: linear, sigma2: [1, 10]}\n",
     "key 'kernel.sigma2': a sweep of sigma2 needs kernel.name gaussian"),
    ("dataset: adult\nproblem: {lambda: [1/n, 1/m]}\nsolvers: [pegasos]\n",
     "key 'problem.lambda[1]': cannot evaluate '1/m'"),
    ("dataset: {name: adult, n_train: 300}\nproblem: {lambda: [1/n, 1/(n-300)]}\nsolvers: [pegasos]\n",
     "key 'problem.lambda[1]': cannot evaluate '1/(n-300)' at n = 300: division by zero"),
    ("dataset: adult\nproblem: {C: [1, 0]}\nsolvers: [pegasos]\n", "key 'problem.C[1]': must be positive"),
    ("dataset: adult\nproblem: {C: [1, 10], lambda: 0.1}\nsolvers: [pegasos]\n",
     "key 'problem.C': give either lambda or C"),
    ("dataset: adult\nproblem: {nu: [0.1, 2]}\nsolvers: [sbp]\n", "key 'problem.nu[1]': must be in [0, 1]"),
    ("dataset: adult\nproblem: {lambda: 0.1, nu: [0.1, from_lambda]}\nsolvers: [sbp]\n",
     "key 'problem.nu[1]': 'from_lambda' cannot be one value of a sweep"),
    (HEAD + "solvers: [{name: pegasos, mini_batch: [1, 0]}]\n", "key 'solvers[0].mini_batch[1]': must be positive"),
    (HEAD + "solvers: [{name: pegasos, representation: [responses, nope]}]\n",
     "key 'solvers[0].representation[1]': 'nope' is not one of: auto, responses, primal"),
    (HEAD + "solvers: [{name: pegasos, mini_batch: [2, 4], representation: [responses, primal]}]\n",
     "key 'solvers[0].name': solver 'pegasos': representation 'primal' needs kernel.name linear, not 'gaussian' "
     "(sweep combination mini_batch=2;representation=primal)"),
    (HEAD + "solvers: [{name: pegasos, mini_batch: [1, 4]}, {name: pegasos, mini_batch: 4}]\n",
     "key 'solvers[1].label': two solvers are both labelled 'pegasos[mini_batch=4]'; give one a 'label'"),
    (HEAD + "kernel: {sigma2: [1, 10]}\nsolvers: [sbp, {name: sbp, label: sbp}]\n",
     "key 'solvers[1].label': two solvers are both labelled 'sbp[sigma2=1]'"),
])
def test_bad_lists_are_one_line_naming_the_key_and_exit_2(monkeypatch, capsys, tmp_path, text, expected):
    line = validate_text(monkeypatch, capsys, tmp_path, text)
    assert f"{tmp_path / 'exp.yaml'}: {expected}" in line


def test_at_most_a_thousand_entries(tmp_path):
    ten = ", ".join(str(v) for v in range(1, 11))
    grid = f"dataset: adult\nkernel: {{sigma2: [{ten}]}}\nproblem: {{lambda: [{ten}]}}\n"
    exp = load(tmp_path, grid + f"solvers: [{{name: pegasos, mini_batch: [{ten}]}}]\n")
    assert len(exp.solvers) == config.MAX_SWEEP_ENTRIES == 1000
    assert len(set(labels(exp))) == 1000
    message = error_of(tmp_path, grid + f"solvers: [{{name: pegasos, mini_batch: [{ten}]}}, sdca]\n")
    assert "key 'solvers': the sweeps expand to 1100 solver entries, more than 1000" in message


def test_no_solver_parameter_is_named_like_a_swept_kernel_or_problem_key():
    """A sweep's labels and ``params`` column name them side by side with the solver's parameters."""
    for name, cls in SOLVERS.items():
        assert not set(cls.Params.declared()) & {"sigma2", "lambda", "C", "nu"}, name


def test_cli_validate_counts_the_entries_and_checks_every_lambda_at_the_real_n(monkeypatch, capsys, tmp_path):
    good = write(tmp_path, HEAD + "kernel: {sigma2: [1, 10]}\nsolvers: [sbp, pegasos]\n", "good.yaml")
    assert sbpbench(monkeypatch, "validate", good) == 0
    assert "ok (good: 4 solver(s), 1 run(s))" in capsys.readouterr().out
    (tmp_path / "tr.svm").write_text("1 1:1\n-1 2:1\n1 1:1 2:1\n-1 2:0.5\n")
    (tmp_path / "te.svm").write_text("1 1:1\n-1 2:1\n")
    small = write(tmp_path, "dataset: {path: tr.svm, test_path: te.svm}\nkernel: linear\nsolvers: [pegasos]\n"
                            "problem: {lambda: [1/n, 1/(n-10)]}\n", "small.yaml")
    expected = "small.yaml: key 'problem.lambda': gives lambda = -0.16666666666666666 at n = 4: must be positive"
    for command in (["validate"], ["run", "--results", tmp_path / "res", "--no-plot", "-q"]):
        assert sbpbench(monkeypatch, *command, small) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and expected in err[0]
    assert not (tmp_path / "res" / "small").exists()


# ----------------------------------------------------------------------------- running a sweep

def run(folder: Path, overrides=(), resume_from=None, sigma2=(1, 10), lam=("1/n", "1/(10*n)"), nu=0.011,
        solvers=("sbp", "pegasos"), epochs=1) -> Path:
    """One run of the sweep (lists sweep, scalars do not) on Adult, in ``folder``; its run folder."""
    folder.mkdir(parents=True, exist_ok=True)
    listed = [list(v) if isinstance(v, tuple) else v for v in (sigma2, lam)]
    path = write_adult_config(folder, "sweep", kernel={"name": "gaussian", "sigma2": listed[0]},
                              problem={"lambda": listed[1], "nu": nu}, solvers=list(solvers), budget={"epochs": epochs},
                              runs=1)
    return run_sequentially(path, folder / "res", overrides, resume_from=resume_from)



pytestmark = pytest.mark.usefixtures("one_numba_thread")


@pytest.fixture(scope="module")
def swept(one_numba_thread, tmp_path_factory):
    return run(tmp_path_factory.mktemp("swept"))


LABELS = ["sbp[lambda=1/n;sigma2=1]", "sbp[lambda=1/(10*n);sigma2=1]",
          "sbp[lambda=1/n;sigma2=10]", "sbp[lambda=1/(10*n);sigma2=10]",
          "pegasos[lambda=1/n;sigma2=1]", "pegasos[lambda=1/(10*n);sigma2=1]",
          "pegasos[lambda=1/n;sigma2=10]", "pegasos[lambda=1/(10*n);sigma2=10]"]


def test_one_folder_one_curves_file_and_each_entrys_problem_in_meta(swept):
    assert swept.parent.name == "sweep" and len(list(swept.parent.iterdir())) == 1
    assert list(dict.fromkeys(curves(swept)["solver"])) == LABELS
    resolved = meta(swept)["resolved"]
    assert resolved["kernel"] == {"name": "gaussian", "cache_mb": 256.0}  # sigma2 differs between entries
    assert resolved["problem"] == {"nu": 0.011, "bias": False}  # lambda too
    entries = resolved["solvers"]
    assert [e["label"] for e in entries] == LABELS
    assert [e["kernel"]["sigma2"] for e in entries] == [1.0, 1.0, 10.0, 10.0] * 2
    assert [e["problem"]["lambda"] for e in entries] == pytest.approx([1 / 200, 1 / 2000] * 4, rel=1e-15)
    assert [e["problem"]["lambda_expression"] for e in entries] == ["1/n", "1/(10*n)"] * 4
    assert all(e["problem"]["nu"] == 0.011 and e["problem"]["bias"] is False for e in entries)
    assert [r["status"] for r in meta(swept)["runs"]] == ["budget"] * 8


def test_the_summary_table_lists_the_entries_in_config_order_aligned(swept):
    lines = summary_table(read_curves(swept / "curves.csv")).splitlines()
    assert [line.split()[0] for line in lines[1:]] == LABELS
    assert len({line.index(" budget") for line in lines[1:]}) == 1


def test_each_entry_runs_as_its_own_experiment_would(tmp_path, swept):
    """The sweep's entry is the run a config with these values as scalars makes (the label aside)."""
    mine = curves(swept)
    for solver, sigma2, lam in (("pegasos", 10, "1/(10*n)"), ("sbp", 1, "1/n")):
        alone = run(tmp_path / solver, sigma2=sigma2, lam=lam, solvers=[solver])
        expected = curves(alone).drop(columns=["solver", "params"])
        label = f"{solver}[lambda={lam};sigma2={sigma2}]"
        got = mine[mine["solver"] == label].reset_index(drop=True)
        assert set(got["params"]) == {f"lambda={lam};sigma2={sigma2}"}
        pd.testing.assert_frame_equal(got.drop(columns=["solver", "params"]), expected)
        assert set(meta(alone)["resolved"]["solvers"][0]) == {"name", "label", "params"}  # no sweep: as before


def test_resume_of_a_sweep_redoes_only_the_missing_runs(tmp_path, swept):
    copy = tmp_path / "res" / "sweep" / swept.name
    shutil.copytree(swept, copy)
    data = meta(copy)
    data["runs"][5]["status"] = "failed: RuntimeError: lost"
    (copy / "meta.json").write_text(json.dumps(data))
    assert run(tmp_path, resume_from=copy) == copy
    assert [(r["kept"], r["redone"]) for r in meta(copy)["resumes"]] == [(7, 1)]
    pd.testing.assert_frame_equal(curves(copy), curves(swept))
    with pytest.raises(UserError, match=r"resolved\.solvers\[2\]\.label' differs"):
        run(tmp_path, ["kernel.sigma2=[1, 100]"], resume_from=copy)


def test_nu_from_lambda_is_derived_for_each_entry(tmp_path):
    directory = run(tmp_path, nu="from_lambda", sigma2=10, solvers=["sbp"], epochs=0.2)
    entries = meta(directory)["resolved"]["solvers"]
    nus = [e["problem"]["nu"] for e in entries]
    assert [e["label"] for e in entries] == ["sbp[lambda=1/n]", "sbp[lambda=1/(10*n)]"]
    assert all(isinstance(nu, float) and 0 < nu < 1 for nu in nus) and nus[0] != nus[1]
    assert [e["problem"]["nu_expression"] for e in entries] == ["from_lambda"] * 2
    assert "nu" not in meta(directory)["resolved"]["problem"]
    assert [r["status"] for r in meta(directory)["runs"]] == ["budget"] * 2


def test_entries_of_a_sweep_share_one_load_of_the_data(tmp_path, monkeypatch):
    exp = load(tmp_path, "dataset: {name: adult, n_train: 100, n_test: 100}\nkernel: {sigma2: [1, 10]}\n"
                         "problem: {lambda: [0.1, 0.01], nu: 0.1}\nsolvers: [sbp, pegasos]\n")
    loads = []
    real = assemble.load_data
    monkeypatch.setattr(assemble, "load_data", lambda e: loads.append(e) or real(e))
    problems = ProblemCache()
    built = [problems.prepared(exp, spec).problem for spec in exp.solvers]
    assert len(loads) == 1
    assert [(p.kernel.spec.sigma2, p.lam) for p in built] == [
        (s, lam) for s in (1.0, 10.0) for lam in (0.1, 0.01)] * 2


def test_machine_facts_of_each_entrys_optimum_are_not_compared():
    def resolved(seconds):
        optimum = {"objective": 0.3, "seconds": seconds, "cache_file": f"/{seconds}/x.json"}
        return {"problem": {"nu": 0.1, "optimum": optimum},
                "solvers": [{"name": "sbp", "problem": {"nu": 0.1, "optimum": optimum}}]}
    assert comparable(resolved(1.0)) == comparable(resolved(2.0)) != comparable(resolved(1.0) | {"seed": 1})
    assert comparable(resolved(1.0))["solvers"][0]["problem"]["optimum"] == {"objective": 0.3}
