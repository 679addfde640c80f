"""The committed SBP reproductions are repeatable: today's code gives their first checkpoints bit for bit.

A change to SBP's arithmetic (even only the order of a sum) can flip near-tie decisions of
the water level early in a run, when many responses are tied, and so change every later
iterate: a check on one seed late in a run misses it. This test repeats the start of the
committed runs on full Adult (bundled), without a bias (Figure 2) and with one (the LIBSVM
comparison), with the runner's seeds and the nu recorded in their meta.json.

The trajectory (iterations, kernel evaluations, test error, support size) must match bit for
bit; the objective (the water level of the averaged responses, measured at each checkpoint)
to 1e-12 relative: its vectorized sums are added in an order that depends on the CPU's vector
width, so its last bits differ between machines (up to 1.3e-13 between an AMD EPYC and an
Intel Xeon) while the iterates are the same. A flipped decision moves it far more.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sbpbench.errors import UserError
from sbpbench.execution.loop import run_one
from sbpbench.experiment import config
from sbpbench.experiment.assemble import prepare
from sbpbench.outputs.check import compare
from sbpbench.results.store import read_curves, read_meta

PAPER = Path(__file__).resolve().parent.parent / "results" / "paper"
CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.mark.slow  # SBP on full Adult (32561 rows, its kernel cache) for a twentieth of an epoch
@pytest.mark.parametrize("experiment", ["sbp-figure2-adult", "sbp-libsvm-adult"])
def test_committed_sbp_run_starts_bit_for_bit(experiment):
    folder = PAPER / experiment
    meta = json.loads((folder / "meta.json").read_text())
    nu = meta["resolved"]["problem"]["nu"]
    exp = config.load(CONFIGS / f"{experiment}.yaml",
                      [f"problem.nu={nu!r}", "solvers=[sbp]", "runs=1", "budget.epochs=0.05"])
    rows = pd.DataFrame(run_one(exp, prepare(exp).problem, exp.solvers[0], 0).rows)
    committed = pd.read_csv(next(folder.glob("curves.csv*")))
    committed = committed[(committed["solver"] == "sbp") & (committed["run"] == 0)].reset_index(drop=True)
    checkpoints = len(rows) - 1  # the last row is this short budget's end
    assert checkpoints >= 20
    for column in ("iteration", "kernel_evals", "test_error", "n_support"):
        assert np.array_equal(rows[column][:checkpoints].to_numpy(), committed[column][:checkpoints].to_numpy()), column
    np.testing.assert_allclose(rows["objective"][:checkpoints], committed["objective"][:checkpoints], rtol=1e-12,
                               atol=0)


# ------------------------------------------------------------------- redone with today's code

sys.path.insert(0, str(PAPER.parent.parent / "scripts"))  # the scripts import their helper module by name
import redo_runs  # noqa: E402

REDONE = sorted(PAPER.glob(f"*/{redo_runs.BEFORE}"))


@pytest.mark.parametrize("before", REDONE, ids=[path.parent.name for path in REDONE])
def test_redone_curves_lie_within_the_old_runs_spread(before):
    """A committed experiment redone by scripts/redo_runs.py: each redone solver's mean curve
    stays within the band of ``sbpbench check`` around the runs it replaced (a deterministic
    solver's one run now, equal to its identical runs then: the check counts those as one)."""
    old = read_curves(before)
    now = redo_runs.committed_curves(before.parent)
    now = now[now["solver"].isin(old["solver"].unique())]
    assert set(now["run"]) <= set(old["run"])  # as many as before (compare's check), a deterministic solver's one
    assert compare(now, old) == []


def test_the_spread_check_catches_a_shifted_curve():
    """The check of the test above fails on the committed SBP curves moved up by one point of error."""
    old = redo_runs.committed_curves(PAPER / "sbp-figure2-adult")
    old = old[old["solver"] == "sbp"]
    assert compare(old, old) == []
    worse = compare(old.assign(test_error=old["test_error"] + 0.01), old)
    assert worse and all(d.verdict == "worse" and d.column == "test_error" for d in worse)


@pytest.mark.slow  # three redos of a CI experiment
def test_redo_replaces_one_solver_keeps_the_others_and_the_old_rows(tmp_path):
    """scripts/redo_runs.py on a small committed experiment (a copy of the CI reference ci-adult)."""
    paper, work = tmp_path / "paper", tmp_path / "redo"
    shutil.copytree(PAPER.parent / "reference" / "ci-adult", paper / "ci-adult")
    committed = redo_runs.committed_curves(paper / "ci-adult")
    folder = redo_runs.redo("ci-adult", paper, work, ["sbp"], jobs=1, again=False)
    curves, meta = redo_runs.committed_curves(folder), read_meta(folder)
    before = read_curves(folder / redo_runs.BEFORE)
    # today's code, same seeds: the redone rows equal the ones they replace (only timings differ;
    # the reference was written on another CPU, so measured floats agree to rounding, not bit for bit)
    timing = ["train_time_s"]
    pd.testing.assert_frame_equal(before.drop(columns=timing),
                                  committed[committed["solver"] == "sbp"].drop(columns=timing).reset_index(drop=True),
                                  check_exact=False, rtol=1e-9)
    for solver in ("sbp", "pegasos"):
        got = curves[curves["solver"] == solver].drop(columns=timing).reset_index(drop=True)
        was = committed[committed["solver"] == solver].drop(columns=timing).reset_index(drop=True)
        pd.testing.assert_frame_equal(got[was.columns], was, check_dtype=False)  # new columns may be added
    reference = read_meta(PAPER.parent / "reference" / "ci-adult")
    assert [r["solver"] for r in meta["runs"]] == [r["solver"] for r in reference["runs"]]
    assert meta["redos"][-1]["solvers"] == ["sbp"]
    # a second call finds the promoted redo and does not run again
    assert redo_runs.redo("ci-adult", paper, work, ["sbp"], jobs=1, again=False) == folder
    assert len(list((work / "ci-adult").iterdir())) == 1 and read_meta(folder) == meta
    with pytest.raises(UserError, match="--solvers: smo not among its solvers"):
        redo_runs.redo("ci-adult", paper, work, ["smo"], jobs=1, again=False)
    # a later redo of another solver keeps the first redo's old rows beside its own
    folder = redo_runs.redo("ci-adult", paper, work, ["pegasos"], jobs=1, again=True)
    before = read_curves(folder / redo_runs.BEFORE)
    assert sorted(before["solver_name"].unique()) == ["pegasos", "sbp"]
    assert len(redo_runs.committed_curves(folder)) == len(committed)


def test_a_redo_records_the_redone_solvers_parameters_as_run_now():
    """A default that changed (the Fourier solves' cap) shows in meta.json, which the report reads."""
    old = [{"name": "sbp", "label": "sbp", "params": {"average": True}},
           {"name": "fourier", "label": "fourier[max_pairs=8]", "params": {"max_iter": 100000}}]
    new = [{"name": "fourier", "label": "fourier[max_pairs=8]", "params": {"max_iter": 10**7}}]
    assert redo_runs.redone_entries(old, new, {"fourier"}) == [old[0], new[0]]
    assert redo_runs.redone_entries(old, new, {"sbp"}) == old


def test_redo_of_an_experiment_not_committed_is_one_error_line(tmp_path):
    done = subprocess.run([sys.executable, str(PAPER.parent.parent / "scripts" / "redo_runs.py"), "no-such",
                           "--paper", str(tmp_path / "paper"), "--work", str(tmp_path / "redo")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and not (tmp_path / "redo").exists()
    assert done.stderr.count("\n") == 1 and "no-such" in done.stderr
