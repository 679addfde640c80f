"""Solvers of the biased and of the unbiased problem side by side in one config (a solver entry's
``bias``): labels, problems, optima and objectives per problem, and the figure's legend groups."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sbpbench.errors import UserError
from sbpbench.execution.problems import ProblemCache
from sbpbench.experiment import config
from sbpbench.outputs import plotting
from sbpbench.results.store import read_meta
from tests.cli_runner import ROOT, sbpbench
from tests.experiments import adult_config, run_sequentially, write_config
from tests.run_files import curves

HEAD = "dataset: adult\nproblem: {lambda: 0.1, nu: 0.1}\n"
ALL_FIVE = "solvers: [sbp, pegasos, sdca, {name: smo, bias: [false, true]}, {name: libsvm, bias: true}]\n"


def load(tmp_path, text: str) -> config.Experiment:
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(text))
    return config.load(path)


def error_of(tmp_path, text: str) -> str:
    with pytest.raises(UserError) as info:
        load(tmp_path, text)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "exp.yaml"))
    return message


def test_solvers_of_both_problems_in_one_config_each_name_their_problem(tmp_path):
    exp = load(tmp_path, HEAD + ALL_FIVE)
    assert [s.label for s in exp.solvers] == ["sbp[bias=False]", "pegasos[bias=False]", "sdca[bias=False]",
                                              "smo[bias=False]", "smo[bias=True]", "libsvm[bias=True]"]
    assert [exp.for_solver(s).bias for s in exp.solvers] == [False, False, False, False, True, True]
    assert exp.swept and not exp.bias  # the entries' problems differ; problem.bias is the default's
    assert exp.solvers[4].describe() == "bias=True"  # the params column says it too


def test_an_entry_label_keeps_its_bias():
    doc = adult_config(solvers=[{"name": "smo", "label": "SMO", "bias": [False, True]}, "sbp"])
    exp = config.parse(doc, "exp.yaml")
    assert [s.label for s in exp.solvers] == ["SMO[bias=False]", "SMO[bias=True]", "sbp[bias=False]"]


def test_entries_that_all_solve_one_problem_make_it_the_experiments_and_keep_their_labels(tmp_path):
    exp = load(tmp_path, HEAD + "solvers: [{name: smo, bias: true}, {name: libsvm, bias: true}]\n")
    assert [s.label for s in exp.solvers] == ["smo", "libsvm"]
    assert exp.bias and not exp.swept
    unchanged = load(tmp_path, "dataset: adult\nproblem: {lambda: 0.1, bias: true}\nsolvers: [smo, libsvm]\n")
    assert [s.label for s in unchanged.solvers] == ["smo", "libsvm"] and unchanged.bias


def test_a_solver_refusing_its_entrys_bias_is_one_line_naming_the_entrys_key(tmp_path):
    message = error_of(tmp_path, HEAD + "solvers: [sbp, {name: pegasos, bias: true}]\n")
    assert "key 'solvers[1].bias': solver 'pegasos' does not support problem.bias: true" in message
    message = error_of(tmp_path, HEAD + "solvers: [{name: pegasos, bias: [false, true]}]\n")
    assert "key 'solvers[0].bias'" in message and "(sweep combination bias=True)" in message


def test_a_refusal_of_the_experiments_bias_says_an_entry_may_set_its_own(tmp_path):
    message = error_of(tmp_path, HEAD + "solvers: [sbp, libsvm]\n")
    assert message.endswith("key 'solvers[1].name': solver 'libsvm' solves only the biased problem: "
                            "set problem.bias: true (or bias: true in its solver entry)")
    message = error_of(tmp_path, "dataset: adult\nproblem: {lambda: 0.1, bias: true}\nsolvers: [pegasos]\n")
    assert message.endswith("does not support problem.bias: true (its solver entry may set bias: false)")
    assert "bias" not in error_of(tmp_path, "dataset: adult\nsolvers: [pegasos]\n").split("needs problem.lambda")[1]


def test_a_bias_that_is_not_a_boolean_is_refused(tmp_path):
    assert "key 'solvers[0].bias': expected true or false, got 'yes please'" in \
        error_of(tmp_path, HEAD + "solvers: [{name: smo, bias: yes please}]\n")


@pytest.fixture(scope="module")
def mixed_run(one_numba_thread, tmp_path_factory):
    """SBP (nu derived from lambda), Pegasos and SMO with and without a bias, on 200 Adult rows."""
    folder = tmp_path_factory.mktemp("mixed")
    doc = adult_config("mixed", problem={"lambda": "1/n", "nu": "from_lambda"}, runs=1,
                       solvers=["sbp", "pegasos", {"name": "smo", "bias": [False, True]}])
    return run_sequentially(write_config(folder / "mixed.yaml", doc), folder / "res")


def test_each_entry_records_and_solves_its_own_problem_with_its_own_optimum(mixed_run):
    entries = read_meta(mixed_run)["resolved"]["solvers"]
    assert [(e["label"], e["problem"]["bias"]) for e in entries] == [
        ("sbp[bias=False]", False), ("pegasos[bias=False]", False), ("smo[bias=False]", False),
        ("smo[bias=True]", True)]
    unbiased = entries[0]["problem"]["optimum"]
    assert unbiased["b"] == 0.0 and entries[0]["problem"]["nu"] == unbiased["nu"]
    assert entries[2]["problem"]["optimum"] == unbiased  # SMO's unbiased problem is SBP's
    biased = entries[3]["problem"]  # no SBP entry solves it: its nu is not derived, its optimum not solved
    assert biased["nu"] is None and biased["nu_expression"] == "from_lambda" and "optimum" not in biased
    assert "bias" not in read_meta(mixed_run)["resolved"]["problem"]  # not one problem for all


def test_each_runs_objective_is_that_of_its_own_problem(mixed_run):
    rows = curves(mixed_run)
    final = rows.groupby("solver").last()
    optimum = read_meta(mixed_run)["resolved"]["solvers"][0]["problem"]["optimum"]  # the unbiased problem's
    # SMO runs to its tolerance: at its own optimum; a free bias can only lower it
    assert final.loc["smo[bias=False]", "primal_objective"] == pytest.approx(optimum["objective"], rel=1e-2)
    assert final.loc["smo[bias=True]", "primal_objective"] < final.loc["smo[bias=False]", "primal_objective"]


def test_the_problems_of_a_run_are_rebuilt_from_its_config_as_the_runs_built_them(tmp_path):
    exp = config.parse(adult_config(solvers=["sbp", {"name": "smo", "bias": True}]), "exp.yaml")
    cache = ProblemCache()
    assert [cache.prepared(exp, spec).problem.bias for spec in exp.solvers] == [False, True]
    assert np.array_equal(cache.prepared(exp, exp.solvers[0]).problem.y, cache.prepared(exp, exp.solvers[1]).problem.y)


def test_the_figure_groups_the_solvers_by_problem(mixed_run, tmp_path):
    meta = read_meta(mixed_run)
    found = plotting.problems([(curves(mixed_run), meta)])
    assert found == {("mixed", "sbp[bias=False]"): "unbiased problem (b = 0)",
                     ("mixed", "pegasos[bias=False]"): "unbiased problem (b = 0)",
                     ("mixed", "smo[bias=False]"): "unbiased problem (b = 0)",
                     ("mixed", "smo[bias=True]"): "biased problem (b free)"}
    fig = plotting.curves_figure(curves(mixed_run), plotting.X_AXES["kernel_evals"], plotting.Y_AXES["test_error"],
                                 marks=plotting.run_marks([(curves(mixed_run), meta)]))
    assert fig is not None
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[0] == "unbiased problem (b = 0):" and legend[4] == "biased problem (b free):"
    assert legend[5].startswith("smo[bias=True]") and legend[1].startswith("sbp[bias=False]")


def test_a_figure_of_one_problem_has_no_groups(tiny_run):
    _, run = tiny_run
    assert plotting.problems([(curves(run), read_meta(run))]) == {}


# ----------------------------------------------------------------------------- the example, end to end

EXAMPLE = ROOT / "examples" / "side-by-side.yaml"


@pytest.fixture(scope="module")
def example_run(one_numba_thread, tmp_path_factory):
    """``examples/side-by-side.yaml`` beside its breast-cancer LIBSVM files, small (200 training
    examples, 2 epochs), run by the command line in this process: its output and run folder."""
    folder = tmp_path_factory.mktemp("side-by-side")
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    done = subprocess.run([sys.executable, ROOT / "examples" / "breast_cancer_files.py", folder],
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(folder / "breast-cancer.train.svm"), str(folder / "breast-cancer.test.svm")]
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        code = sbpbench(patch, "run", folder / EXAMPLE.name, "--results", folder / "res", "--no-plot",
                        "--set", "dataset.n_train=200", "--set", "budget.epochs=2")
    assert code == 0, out.getvalue()
    (run,) = (folder / "res" / "side-by-side").iterdir()
    return out.getvalue(), run


def test_the_example_runs_all_five_solvers_of_both_problems_on_a_users_libsvm_file(example_run):
    _, run = example_run
    meta = read_meta(run)
    assert {r["status"] for r in meta["runs"]} <= {"budget", "done"}
    assert len(meta["runs"]) == 4 * (3 + 2 + 1)  # 2 sigma2 x 2 C per entry; smo twice (bias); libsvm biased
    assert {r["solver"].split("[")[0] for r in meta["runs"]} == {"sbp", "pegasos", "sdca", "smo", "libsvm"}
    dataset = meta["resolved"]["dataset"]
    assert (dataset["n_train"], dataset["n_validation"], dataset["validation"]) == (160, 40, 0.2)
    kernels = {e["label"]: e["kernel"] for e in meta["resolved"]["solvers"]}
    assert kernels["sbp[C=1;bias=False;sigma2=scale]"]["sigma2_rule"] == "scale"
    assert kernels["libsvm[C=10;bias=True;sigma2=median]"]["sigma2_rule"] == "median"
    assert all(k["sigma2"] > 1000 for k in kernels.values())  # raw features: a wide kernel
    rows = curves(run)
    assert rows["validation_error"].between(0, 1).all()


def test_the_example_prints_its_best_setting_chosen_on_validation_error(example_run):
    out, run = example_run
    final = curves(run).groupby("solver").last()
    best_line = next(line for line in out.splitlines() if line.startswith("best setting: "))
    label = best_line.split("best setting: ")[1].split(" (validation error")[0]
    assert final.loc[label, "validation_error"] == final["validation_error"].min()
    assert f"(validation error {100 * final.loc[label, 'validation_error']:.2f}%, " \
           f"test error {100 * final.loc[label, 'test_error']:.2f}% ± n/a)" in best_line  # one run: no spread
    table = out.split(best_line + "\n", 1)[1].splitlines()
    header = table.index("best setting")  # on a console of 80 columns, each setting on a line of its own
    assert "test error played no part in the choice" in " ".join(table[:header])  # the caption, wrapped
    assert table[header + 1].split() == ["solver", "entries", "runs", "validation", "error", "(%)", "test", "error",
                                         "(%)", "±", "s.e."]
    settings, cells = table[header + 2:header + 12:2], table[header + 3:header + 12:2]
    assert [line.split()[0] for line in cells] == ["sbp", "pegasos", "sdca", "smo", "libsvm"]
    assert all(setting.startswith(line.split()[0] + "[") for setting, line in zip(settings, cells))
    assert "validation error (%)" in out.split(best_line)[0] and "test error (%)" not in out.split(best_line)[0]


def test_the_examples_figures_are_one_panel_per_setting_a_summary_and_a_profile(example_run, tmp_path):
    _, run = example_run
    plotted = plotting.plot_results(run, tmp_path)
    assert sorted(p.name for p in plotted.files) == ["figure2.png", "figure2.svg", "performance-profile.png",
                                                     "performance-profile.svg", "sweep-summary.png",
                                                     "sweep-summary.svg"]
    svg = (tmp_path / "figure2.svg").read_text()
    assert all(f"<!-- C={c};sigma2={s} -->" in svg for s in ("scale", "median") for c in (1, 10))  # panel titles
    assert "Performance profile over 4 problems" in (tmp_path / "performance-profile.svg").read_text()
    assert plotted.notes == [f"libsvm[C={c};bias=True;sigma2={s}] in side-by-side: no kernel evaluations"
                             for s in ("scale", "median") for c in (1, 10)]
