"""scripts/sgd_causes.py: the causes of the SGD-table rows that differ, and the rows that quote them."""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.svm import LinearSVC

from sbpbench.errors import UserError
from sbpbench.papers import declarations, sgd
from sbpbench.results.lookup import ExperimentResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # the scripts import their helpers by name
import sgd_references  # noqa: E402
from sgd_causes import (  # noqa: E402
    PLAUSIBLE,
    alternative_definitions,
    built,
    decide,
    epochs_quantile,
    eps_not_stopping_early,
    liblinear,
    main,
    objective,
    read_model,
    rows,
    single_run_chance,
    whole_epochs,
)

from tests.problems import adult, build_problem, make_solver, run_to_end

ROOT = Path(__file__).resolve().parents[1]
LIBLINEAR = shutil.which("liblinear-train")


def test_single_run_chance_is_the_share_of_runs_at_one_percent():
    found = single_run_chance(np.array([0.005, 0.012, 0.02, 0.03]))
    assert found["at_1pct"] == 1 and found["share"] == 0.25 and found["plausible"]
    assert found["median_rel_acc"] == pytest.approx(0.016)
    assert not single_run_chance(np.full(30, 0.02))["plausible"] and single_run_chance(np.full(30, 0.02))["alike"]
    assert not found["alike"]
    assert single_run_chance(np.r_[0.001, np.full(19, 0.02)])["share"] == PLAUSIBLE  # one in 20: plausible
    assert single_run_chance(np.r_[0.001, np.full(19, 0.02)])["plausible"]


def test_alternative_definitions_rescale_against_the_objective_and_shift_j_opt():
    found = alternative_definitions(np.array([1.0101, 1.0095, 1.03]), 1.0)
    assert found["share_rel_to_J"] == pytest.approx(2 / 3)  # (J - 1)/J: 0.009999 (at 1%, though J - 1 is not), ...
    assert found["j_opt_shift_for_median"] == pytest.approx(1.0101 / 1.01 - 1)


def test_eps_not_stopping_early_is_the_smallest_bound_before_the_first_passage():
    run = pd.DataFrame({"relative_accuracy": [0.5, np.nan, 0.08, 0.12, 0.04, 0.01],
                        "rel_acc": [0.3, 0.2, 0.05, 0.03, 0.009, 0.002]})
    assert eps_not_stopping_early(run) == pytest.approx(0.08)
    assert eps_not_stopping_early(run.iloc[:4]) == pytest.approx(0.08)  # never at 1%: every bound counts
    assert eps_not_stopping_early(run.assign(rel_acc=0.0)) == np.inf


def test_whole_epochs_keep_the_checkpoints_at_epoch_ends():
    curves = pd.DataFrame({"epoch": [0.5, 1.0, 1.37, 2.0, 2.9999999999, 3.5]})
    assert whole_epochs(curves)["epoch"].tolist() == [1.0, 2.0, 2.9999999999]


def test_epochs_quantile_places_the_printed_epochs_among_ours():
    epochs, reached = np.arange(1.0, 21.0), np.ones(20, dtype=bool)
    middle = epochs_quantile(epochs, reached, 10.0)
    assert middle["share_at_most_printed"] == 0.5 and middle["share_at_least_printed"] == 0.55 and middle["plausible"]
    beyond = epochs_quantile(epochs, reached, 25.0)
    assert beyond["share_at_least_printed"] == 0.0 and not beyond["plausible"]
    censored = epochs_quantile(epochs, np.r_[np.ones(19, dtype=bool), False], 25.0)
    assert censored["share_at_least_printed"] == 0.05 and censored["plausible"]  # a run never at 1% needs more


def _chance(share: float) -> dict:
    return {"runs": 20, "at_1pct": round(20 * share), "share": share, "median_rel_acc": 0.02,
            "plausible": share >= PLAUSIBLE, "alike": False}


def _record(share: float, ref: float | None = None, over_j: float = 0.0, default: float | None = None) -> dict:
    record = {"solver": "dcd", "ours": {**_chance(share), "median_epochs_at_stop": 188.0}, "needed": None,
              "definitions": {"share_rel_to_J": over_j, "j_opt_shift_for_median": 0.01, "table1_agreement": 1e-6}}
    if ref is not None:
        record["reference"] = {"program": "train -s 3", "unit": "row orders", **_chance(ref)}
    if default is not None:
        record["default"] = {"program": "svm_perf_learn -w 9", "unit": "row orders", **_chance(default)}
    return record


def test_decide_names_the_cause_by_the_first_hypothesis_that_holds():
    assert decide(_record(0.0, ref=0.9))[0] == "implementation"
    assert decide(_record(0.1, ref=0.9))[0] == "implementation"
    assert decide(_record(0.1))[0] == "the paper's procedure"
    assert decide(_record(0.0, ref=0.1))[0] == "the paper's procedure"
    assert decide(_record(0.0, over_j=0.8))[0] == "setup"
    cause, why = decide(_record(0.0))
    assert cause == "not established" and "tried one lucky run" in why and "no reference program" in why
    alike = _record(0.0)
    alike["ours"]["alike"] = True
    assert "tried one lucky run (none can be: our runs all end alike)" in decide(alike)[1]
    t_max = {**_record(0.0), "solver": "sgd-r", "printed": 116,
             "whole_epochs": epochs_quantile(np.arange(100.0, 200.0), np.ones(100, bool), 116.0)}
    cause, why = decide(t_max)
    assert cause == "the paper's procedure"
    assert "t_max/m = 116 is where one run first reaches 1% at a whole epoch (17%" in why
    t_max["whole_epochs"] = epochs_quantile(np.arange(100.0, 200.0), np.ones(100, bool), 90.0)
    assert decide(t_max)[0] == "not established"
    early = epochs_quantile(np.arange(1.0, 31.0), np.ones(30, bool), 261)
    epochs = {"solver": "svmsgd", "printed": 261, "ours": early, "whole_epochs": early}
    assert decide(epochs)[0] == "not established"
    epochs["whole_epochs"] = epochs_quantile(np.arange(200.0, 300.0), np.ones(100, bool), 261)
    cause, why = decide(epochs)
    assert cause == "setup" and "read at whole epochs, as the paper counts T, 62% reach 1% by then" in why
    epochs["ours"] = epochs["whole_epochs"]
    assert decide(epochs)[0] == "the paper's procedure"


def test_a_reference_program_that_agrees_with_ours_names_the_papers_procedure():
    cause, why = decide(_record(0.0, ref=0.0))
    assert cause == "the paper's procedure" and "train -s 3: 0/20 row orders at 1%" in why
    assert "the reference program run with the paper's parameters agrees with ours" in why
    assert decide(_record(0.0, ref=0.04))[0] == "the paper's procedure"  # under one in 20: agrees, not luck
    assert decide(_record(0.0, ref=0.0, over_j=0.8))[0] == "setup"  # an earlier hypothesis goes first


def test_a_reference_program_that_reaches_one_percent_where_ours_does_not_names_the_implementation():
    cause, why = decide(_record(0.0, ref=0.6))
    assert cause == "implementation" and "reaches 1% where ours does not" in why and "iterations" not in why
    record = _record(0.0, ref=1.0)
    record["reference"]["median_iterations"] = 140.0
    cause, why = decide(record)
    assert cause == "implementation" and "it stops after 140 iterations, ours after 188" in why
    assert "side by side" not in why
    record["exact_qp"] = {"program": "svm_perf_learn_qp -w 3", "unit": "row order", **_chance(0.0),
                          "median_iterations": 191.0}
    record["ours_svmperf_qp"] = {"program": "ours with qp_precision 0.5", "iterations": 134, "rel_acc": 0.0077}
    why = decide(record)[1]
    assert ("svm_perf_learn_qp -w 3 with its QP solved almost exactly (epsilon_crit 0.0001) stops after 191 "
            "iterations at 2.00%, and ours with its QP precision (half the smallest CEps, its slack estimate) after "
            "134 at 0.77%") in why


def test_only_a_solver_of_the_tables_or_with_a_record_to_keep(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--only", "liblinear", "--out", str(tmp_path / "r.json")])
    told = capsys.readouterr().err
    assert stop.value.code == 2 and "--only liblinear: expected a solver of the SGD tables' rows" in told
    with pytest.raises(SystemExit) as stop:
        main(["--only", "svmperf", "--out", str(tmp_path / "r.json")])
    assert stop.value.code == 2 and "expected a record at --out" in capsys.readouterr().err


def test_only_the_programs_default_algorithm_reaching_one_percent_names_the_setup():
    cause, why = decide(_record(0.0, ref=0.0, default=0.9))
    assert cause == "setup" and "svm_perf_learn -w 9: 18/20 row orders at 1%" in why
    assert "the program's default algorithm reaches 1% where the one ours runs does not" in why
    assert decide(_record(0.0, ref=0.9, default=0.9))[0] == "implementation"  # the same algorithm goes first
    assert decide(_record(0.0, ref=0.0, default=0.3))[0] == "the paper's procedure"  # not most of its runs


def test_read_model_signs_the_weights_for_label_plus_one(tmp_path):
    model = tmp_path / "model"
    model.write_text("solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\nlabel -1 1\nnr_feature 2\nbias -1\nw\n0.5 \n-1 \n")
    assert read_model(model, 3).tolist() == [-0.5, 1.0, 0.0]
    model.write_text(model.read_text().replace("bias -1", "bias 1"))
    with pytest.raises(UserError, match="not a LIBLINEAR model without bias"):
        read_model(model, 3)


@pytest.mark.skipif(LIBLINEAR is None, reason="liblinear-train (Debian's liblinear-tools) is not installed")
def test_liblinear_at_a_tight_eps_reaches_the_exact_optimum(tmp_path):
    train, _ = adult(400)
    data = tmp_path / "a9a-400"
    dump_svmlight_file(train.X, train.y, str(data), zero_based=False)
    C = 1.0
    lam = 1.0 / (C * train.n)
    w = LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=False, tol=1e-10, max_iter=10**6,
                  random_state=0).fit(train.X, train.y).coef_.ravel()
    j_opt = objective(train.X, train.y, w, lam)
    tight = liblinear(Path(LIBLINEAR), data, C, 1e-4, 2, j_opt, lam, tmp_path)
    assert tight["runs"] == 2 and tight["at_1pct"] == 2 and abs(tight["median_rel_acc"]) < 1e-3
    loose = liblinear(Path(LIBLINEAR), data, C, 50.0, 2, j_opt, lam, tmp_path)
    assert loose["median_rel_acc"] > tight["median_rel_acc"]


def _result(root: Path) -> ExperimentResult:
    folder = root / "sgd-table2-c1-adult" / "run"
    folder.mkdir(parents=True)
    return ExperimentResult("sgd-table2-c1-adult", folder.parent, pd.DataFrame(), {})


def test_a_row_without_its_record_names_no_cause_and_a_foreign_cause_is_refused(tmp_path):
    res = _result(tmp_path)
    row = sgd.row_name("2", "adult", "sgd-r", "at 1%")
    assert sgd._explained(row).named(res)[0] == "not established"
    record = tmp_path / sgd.CAUSES_RECORD
    record.parent.mkdir()
    record.write_text(json.dumps({"rows": {row: {"cause": "the paper's procedure", "evidence": "2/30 runs"}}}))
    assert sgd._explained(row).named(res) == ("the paper's procedure",
                                              f"scripts/sgd_causes.py ({sgd.CAUSES_RECORD}): 2/30 runs")
    assert sgd._explained(sgd.row_name("2", "adult", "sgd-s", "at 1%")).named(res)[0] == "not established"
    record.write_text(json.dumps({"rows": {row: {"cause": "bad luck", "evidence": ""}}}))
    with pytest.raises(UserError, match="not the output of scripts/sgd_causes.py.*bad luck"):
        sgd._explained(row).named(res)


def test_the_committed_record_covers_every_explained_row_with_a_fixed_cause():
    found = json.loads((ROOT / "results" / "paper" / sgd.CAUSES_RECORD).read_text())
    declared = {row.cause.row for key in sgd.TABLES for row in sgd.EpochsTable(key).rows()
                if isinstance(row, sgd.Posed) and row.cause is not None}
    analysed = {row.name for row in rows()}
    assert set(found["rows"]) == analysed and analysed <= declared
    assert all(record["cause"] in declarations.CAUSE_WORDS and record["evidence"] for record in found["rows"].values())



def test_the_reference_programs_model_files_give_their_weights(tmp_path):
    perf = tmp_path / "svmperf-model"
    perf.write_text("SVM-light Version V6.20\n0 # kernel type\n3 # highest feature index \n2 # number of support "
                    "vectors plus 1 \n0 # threshold b, each following line is a SV (starting with alpha*y)\n"
                    "1 1:0.5 3:-2 #\n")
    assert sgd_references.read_svmperf_model(perf, 3).tolist() == [0.5, 0.0, -2.0]
    perf.write_text("1 1:0.5\n")
    with pytest.raises(ValueError, match="not an SVM-light model"):
        sgd_references.read_svmperf_model(perf, 3)
    pegasos = tmp_path / "pegasos-model"
    pegasos.write_text("1:-0.75 2:0.25 9:1 \n")  # a feature beyond the data's (none in ours) is dropped
    assert sgd_references.read_pegasos_model(pegasos, 3).tolist() == [-0.75, 0.25, 0.0]


def test_a_reference_source_not_to_be_had_is_skipped_with_one_line(tmp_path, capsys):
    def missing() -> Path:
        return sgd_references.build_svmperf(None, tmp_path, mirror=tmp_path / "no-mirror")
    assert built("svm_perf", missing) is None
    assert "skipped: svm_perf source not found (no svm_perf/svm_perf.tar.gz in a git mirror" in capsys.readouterr().err
    with pytest.raises(sgd_references.SourceMissing, match="not an unpacked pegasos.tgz"):
        sgd_references.build_pegasos(tmp_path, tmp_path / "work")


def _exact(n: int, C: float, tmp_path: Path):
    train, _ = adult(n)
    data = tmp_path / "a9a-small"
    dump_svmlight_file(train.X, train.y, str(data), zero_based=False)
    lam = 1.0 / (C * train.n)
    w = LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=False, tol=1e-10, max_iter=10**6,
                  random_state=0).fit(train.X, train.y).coef_.ravel()
    j_opt = objective(train.X, train.y, w, lam)
    return train, data, lam, lambda v: (objective(train.X, train.y, v, lam) - j_opt) / j_opt


@pytest.mark.skipif(not sgd_references.SVMPERF_MIRROR.is_dir() or shutil.which("gcc") is None,
                    reason="svm_perf's source (its git mirror) or gcc is not here")
def test_svm_perf_at_a_tight_eps_reaches_the_exact_optimum_in_any_row_order(tmp_path):
    train, data, lam, accuracy = _exact(400, 1.0, tmp_path)
    program = sgd_references.build_svmperf(None, tmp_path)
    lines = [line + "\n" for line in data.read_text().splitlines()]
    tight = sgd_references.svmperf_runs(program, lines, 1.0, 0.001, 3, 2, accuracy, train.X.shape[1], tmp_path)
    assert tight["rel_acc"].max() < 1e-4 and min(tight["iterations"]) > 1
    assert tight["program"] == "svm_perf_learn -c 1n/100 -w 3 -e 0.001 --b 0"
    loose = sgd_references.svmperf_runs(program, lines, 1.0, 5.0, 3, 1, accuracy, train.X.shape[1], tmp_path)
    assert loose["rel_acc"][0] > tight["rel_acc"].max() and loose["iterations"][0] < min(tight["iterations"])


@pytest.mark.skipif(not sgd_references.SVMPERF_MIRROR.is_dir() or shutil.which("gcc") is None,
                    reason="svm_perf's source (its git mirror) or gcc is not here")
@pytest.mark.parametrize("eps", [0.1, 0.5])
def test_svm_perf_with_its_qp_solved_exactly_runs_as_ours(tmp_path, eps):
    """``svm_perf_learn -w 3`` with its QP's precision fixed at 1e-4 (ours solves it exactly) takes
    our SVMperf's iterations to the same w: the QP's precision is the one way the two differ."""
    train, data, lam, accuracy = _exact(400, 1.0, tmp_path)
    program = sgd_references.build_svmperf(None, tmp_path, epsilon_crit=1e-4)
    assert program.name == "svm_perf_learn_qp"
    lines = [line + "\n" for line in data.read_text().splitlines()]
    theirs = sgd_references.svmperf_runs(program, lines, 1.0, eps, 3, 1, accuracy, train.X.shape[1], tmp_path)
    problem = build_problem(train, kernel="linear", lam=lam)
    ours = make_solver(problem, "svmperf", epsilon=eps)
    assert run_to_end(ours)
    assert theirs["iterations"] == [ours.passes]
    assert theirs["rel_acc"][0] == pytest.approx(accuracy(ours.w), abs=1e-5)  # their QP: 1e-4 in percent


def test_svm_perf_without_its_qp_precision_statement_is_refused(tmp_path):
    source = tmp_path / "svm_perf"
    for rel in sgd_references.SVMPERF_SOURCES:
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text("int x;\n")
    with pytest.raises(sgd_references.SourceMissing, match="not SVM-perf V3.00's 1-slack loop"):
        sgd_references.build_svmperf(source, tmp_path, epsilon_crit=1e-4)


@pytest.mark.skipif(not sgd_references.PEGASOS_MIRROR.is_dir() or shutil.which("g++") is None,
                    reason="pegasos' source (its git mirror) or g++ is not here")
def test_pegasos_runs_are_its_seeds_and_approach_the_optimum(tmp_path):
    train, data, lam, accuracy = _exact(400, 1.0, tmp_path)
    program = sgd_references.build_pegasos(None, tmp_path)
    runs = sgd_references.pegasos_runs(program, data, lam, 400 * 200, 3, accuracy, train.X.shape[1], tmp_path)
    again = sgd_references.pegasos_runs(program, data, lam, 400 * 200, 2, accuracy, train.X.shape[1], tmp_path)
    assert again["rel_acc"].tolist() == runs["rel_acc"][:2].tolist()  # seed k is the same run
    assert len(set(runs["rel_acc"].tolist())) == 3  # and other seeds other runs
    short = sgd_references.pegasos_runs(program, data, lam, 400, 3, accuracy, train.X.shape[1], tmp_path)
    assert np.median(runs["rel_acc"]) < np.median(short["rel_acc"]) and runs["rel_acc"].min() > -1e-9
