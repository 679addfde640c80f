"""A validation split (``dataset.validation``), the best setting chosen on it, and sweep figures
that stay readable at 20 entries and more."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file

from sbpbench.errors import UserError
from sbpbench.execution.problems import ProblemCache
from sbpbench.experiment import assemble, config
from sbpbench.outputs import page, plotting
from sbpbench.outputs.summary import best_settings, best_table, summary_table
from sbpbench.results.store import read_curves
from tests.cli_runner import sbpbench
from tests.experiments import adult_config, write_config


def experiment(**dataset) -> config.Experiment:
    doc = adult_config(solvers=["smo"], problem={"C": 1}, runs=None if "folds" in dataset else 2)
    doc["dataset"].update(dataset)
    return config.parse(doc, "exp.yaml")


def test_a_fraction_is_held_out_of_the_training_sample_the_same_for_every_run():
    exp = experiment(validation=0.25)
    train, _ = assemble.load_data(exp)
    kept, held = assemble.hold_out(exp, train)
    assert (kept.n, held.n) == (150, 50)
    rows = {tuple(r) for r in train.X.toarray()}
    assert {tuple(r) for r in kept.X.toarray()} | {tuple(r) for r in held.X.toarray()} == rows
    again = assemble.hold_out(exp, train)[1]
    assert (again.X != held.X).nnz == 0 and np.array_equal(again.y, held.y)
    other = assemble.hold_out(config.parse({**exp.raw, "seed": 1}, "exp.yaml"), train)[1]
    assert (other.X != held.X).nnz > 0  # another seed, another split
    assert assemble.hold_out(experiment(), train) == (train, None)


def test_the_runs_measure_the_validation_error_and_train_without_those_examples():
    exp = experiment(validation=0.25)
    prep = assemble.prepare(exp)
    assert prep.problem.n == 150 and prep.problem.validation_y.size == 50
    assert (prep.dataset["n_train"], prep.dataset["n_validation"], prep.dataset["validation"]) == (150, 50, 0.25)
    assert "validation" not in assemble.prepare(experiment()).dataset
    assert assemble.problem_key(exp) != assemble.problem_key(experiment())


def test_a_validation_file_beside_libsvm_files(tmp_path):
    X = np.random.default_rng(0).normal(size=(60, 4))
    y = np.where(X[:, 0] > 0, 2, 1)
    for name, rows in (("train.svm", slice(0, 30)), ("test.svm", slice(30, 45)), ("valid.svm", slice(45, 60))):
        dump_svmlight_file(X[rows], y[rows], str(tmp_path / name), zero_based=False)
    path = tmp_path / "exp.yaml"
    path.write_text("dataset: {path: train.svm, test_path: test.svm, validation: valid.svm}\n"
                    "problem: {C: 1}\nsolvers: [smo]\n")
    exp = config.load(path)
    assert exp.validation == str(tmp_path / "valid.svm")
    prep = assemble.prepare(exp)
    assert prep.problem.n == 30 and np.array_equal(prep.problem.validation_y, np.where(y[45:] == 2, 1.0, -1.0))


@pytest.mark.parametrize(("dataset", "message"), [
    ("{name: adult, validation: 1.5}", "key 'dataset.validation': must be a fraction of the training examples, "
                                       "strictly between 0 and 1"),
    ("{name: adult, validation: 0}", "key 'dataset.validation': must be a fraction"),
    ("{name: adult, validation: valid.svm}", "key 'dataset.validation': a validation file needs 'path' and "
                                             "'test_path'"),
    ("{name: adult, validation: [0.1, 0.2]}", "key 'dataset.validation': expected one value, not a list"),
    ("{path: t.svm, test_path: t.svm, validation: missing.svm}", "key 'dataset.validation': cannot read file"),
])
def test_a_validation_that_is_neither_a_fraction_nor_a_file_is_one_line(tmp_path, dataset, message):
    (tmp_path / "t.svm").write_text("1 1:1\n-1 1:2\n")
    path = tmp_path / "exp.yaml"
    path.write_text(f"dataset: {dataset}\nproblem: {{C: 1}}\nsolvers: [smo]\n")
    with pytest.raises(UserError) as info:
        config.load(path)
    assert message in str(info.value) and "\n" not in str(info.value) and str(path) in str(info.value)


def final_rows(entries: dict[str, tuple[str, list[float], list[float]]]) -> pd.DataFrame:
    """Curves of one checkpoint per run: label -> (solver name, validation errors, test errors)."""
    rows = [{"experiment": "e", "dataset": "d", "solver": label, "solver_name": name, "params": label, "run": run,
             "checkpoint": 0, "iteration": 1, "kernel_evals": 10.0, "train_time_s": 0.1, "status": "budget",
             "validation_error": v, "test_error": t}
            for label, (name, vs, ts) in entries.items() for run, (v, t) in enumerate(zip(vs, ts))]
    return pd.DataFrame(rows)


def test_the_best_setting_of_each_solver_is_chosen_on_validation_error_only():
    curves = final_rows({"a[C=1]": ("a", [0.2, 0.4], [0.01, 0.01]), "a[C=10]": ("a", [0.25, 0.25], [0.5, 0.5]),
                         "b[x=1]": ("b", [0.1], [0.3]), "b[x=2]": ("b", [0.1], [0.0])})
    best = best_settings(curves)
    assert [(b.solver, b.runs, b.entries) for b in best] == [("a[C=10]", 2, 2), ("b[x=1]", 1, 2)]  # first on a tie
    assert (best[0].validation_error, best[0].test_error) == pytest.approx((25.0, 50.0))
    text = best_table(curves).splitlines()
    assert text[0] == "best setting: b[x=1] (validation error 10.00%, test error 30.00% ± n/a)"  # one run: no spread
    assert "test error played no part in the choice" in text[1] and "best setting" in text[2]
    assert text[3].split() == ["a", "a[C=10]", "2", "2", "25.00", "50.00", "±", "0.00"]
    summary = summary_table(curves)
    assert "validation error (%)" in summary and "test error" not in summary
    assert "30.00" in summary  # a's mean validation error, not its test error
    assert best_table(curves.iloc[:0]) == ""
    assert "test error (%)" in summary_table(curves.drop(columns="validation_error"))


def test_without_a_validation_split_the_best_setting_is_chosen_on_the_test_error_and_says_so():
    curves = final_rows({"a[C=1]": ("a", [math.nan] * 2, [0.3, 0.1]), "a[C=10]": ("a", [math.nan] * 2, [0.4, 0.4]),
                         "b": ("b", [math.nan], [0.05])}).drop(columns="validation_error")
    (a, b) = best_settings(curves)
    assert (a.solver, a.entries, a.runs, b.solver, b.entries) == ("a[C=1]", 2, 2, "b", 1)
    assert (a.test_error, a.test_error_se) == pytest.approx((20.0, 10.0)) and math.isnan(a.validation_error)
    text = best_table(curves).splitlines()
    assert text[0] == "best setting: b (test error 5.00% ± n/a, chosen on the test set)"
    assert "the choice was made on the test set" in text[1]
    assert "validation" not in text[2] and text[3].split() == ["a", "a[C=1]", "2", "2", "20.00", "±", "10.00"]
    # the page shows the same cells, under the same caption
    html = page._best(curves)
    assert "<h3>Best setting of each solver</h3>" in html and "the choice was made on the test set" in html
    assert "<td>a</td><td>a[C=1]</td><td class='num'>2</td><td class='num'>2</td><td class='num'>20.00 ± 10.00</td>" \
        in html and "<th>validation" not in html
    # one entry per solver: nothing to choose
    assert best_table(curves[curves["solver"] != "a[C=10]"]) == "" == page._best(curves[curves["solver"] != "a[C=10]"])


def test_a_sweep_of_many_entries_is_drawn_one_panel_per_setting_with_a_summary(tmp_path):
    entries = {f"s[C={c}]": ("s", [0.1 + c / 100], [0.2]) for c in range(6)}
    entries.update({f"t[C={c}]": ("t", [0.3 - c / 100], [0.2]) for c in range(6)})
    curves = final_rows(entries)
    split, marks = plotting.small_multiples(curves, plotting.Marks(baselines={"e": 0.4},
                                                                   problems={("e", "s[C=0]"): "x"}))
    assert list(dict.fromkeys(split["experiment"])) == [f"e: C={c}" for c in range(6)]
    assert marks.baselines["e: C=5"] == 0.4 and marks.problems == {("e: C=0", "s[C=0]"): "x"}
    assert marks.names["t[C=3]"] == "t" and marks.shared_y["e: C=3"] == "e"
    few = curves[curves["solver"].isin(["s[C=0]", "t[C=0]"])]
    assert plotting.small_multiples(few, plotting.Marks())[0] is few
    written = plotting.sweep_summary(curves, tmp_path / "sweep-summary")
    assert [p.name for p in written] == ["sweep-summary.png", "sweep-summary.svg"]
    svg = written[1].read_text()
    assert "final validation error of each entry, one panel per setting" in svg and "e: C=5" in svg


def test_k_folds_each_run_validates_on_its_fold_and_trains_on_the_others():
    exp = experiment(folds=4)
    assert (exp.folds, exp.runs) == (4, 4)
    train, _ = assemble.load_data(exp)
    parts = [assemble.hold_out(exp.for_run(exp.solvers[0], run), train) for run in range(4)]
    assert [(kept.n, held.n) for kept, held in parts] == [(150, 50)] * 4
    held = np.vstack([h.X.toarray() for _, h in parts])
    assert sorted(map(tuple, held)) == sorted(map(tuple, train.X.toarray()))  # the folds partition the sample
    problems = ProblemCache()
    assert [problems.prepared(exp, exp.solvers[0], run).problem.validation_y.size for run in range(4)] == [50] * 4
    assert len({assemble.problem_key(exp.for_run(exp.solvers[0], run)) for run in range(4)}) == 4
    assert assemble.prepare(exp).dataset["folds"] == 4


@pytest.mark.parametrize(("dataset", "runs", "message"), [
    ({"folds": 1}, None, "key 'dataset.folds': must be from 2 to 100"),
    ({"folds": 3, "validation": 0.2}, None, "key 'dataset.folds': give either 'validation' (one split) or 'folds'"),
    ({"folds": 3}, 2, "key 'runs': with dataset.folds: 3 every entry runs once per fold: leave runs out or set it "
                      "to 3"),
])
def test_folds_that_cannot_be_are_one_line(dataset, runs, message):
    doc = adult_config(solvers=["smo"], problem={"C": 1}, runs=runs)
    doc["dataset"].update(dataset)
    with pytest.raises(UserError, match=re.escape(message)):
        config.parse(doc, "exp.yaml")


def test_the_best_setting_under_folds_is_chosen_on_the_mean_over_folds(tmp_path, monkeypatch, capsys):
    doc = adult_config("cv", solvers=[{"name": "smo", "eps": [0.1, 0.001]}], problem={"C": 1}, runs=None,
                       n_train=120, n_test=100)
    doc["dataset"]["folds"] = 3
    path = write_config(tmp_path / "cv.yaml", doc)
    assert sbpbench(monkeypatch, "run", path, "--results", tmp_path / "res", "--no-plot") == 0
    out = capsys.readouterr().out
    (run,) = (tmp_path / "res" / "cv").iterdir()
    final = read_curves(run).groupby(["solver", "run"]).last().reset_index()
    assert sorted(final["run"]) == [0, 0, 1, 1, 2, 2]
    means = final.groupby("solver")[["validation_error", "test_error"]].mean()
    label = str(means["validation_error"].idxmin())
    assert f"best setting: {label} (validation error {100 * means.loc[label, 'validation_error']:.2f}%, " \
           f"test error {100 * means.loc[label, 'test_error']:.2f}% ± " in out
