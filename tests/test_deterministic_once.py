"""A deterministic solver's entry runs once, counted as one run; ``nu: from_lambda`` is derived
only for a problem an entry reading nu solves.

Small real runs (SMO, LIBSVM and SBP for one epoch on 200 Adult rows): seconds.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd
import pytest

from sbpbench.cli.progress import runs_text
from sbpbench.execution.executors import SequentialExecutor
from sbpbench.execution.sweep import plan, run_experiments
from sbpbench.experiment import assemble, config
from sbpbench.outputs import check, report, summary
from sbpbench.results.store import read_curves, read_meta
from tests import run_files
from tests.cli_runner import sbpbench
from tests.experiments import adult_config, run_sequentially, write_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # the scripts import their helpers by name
import redo_runs  # noqa: E402

#: The biased problem (LIBSVM solves only that one), nu derived from lambda.
NU_FROM_LAMBDA = {"lambda": "1/n", "nu": "from_lambda", "bias": True}


def _runs(curves: pd.DataFrame) -> dict[str, int]:
    return curves.groupby("solver", sort=False)["run"].nunique().to_dict()


@pytest.fixture(scope="module")
def once(one_numba_thread, tmp_path_factory):
    """SBP and SMO three times each (``runs: 3``): SMO is deterministic, so it runs once."""
    folder = tmp_path_factory.mktemp("once")
    path = write_config(folder / "det.yaml", adult_config("det", solvers=["sbp", "smo"], runs=3))
    return path, run_sequentially(path, folder / "results")


def test_a_deterministic_entry_runs_once_and_meta_says_so(once):
    _, run_dir = once
    curves = read_curves(run_dir)
    assert _runs(curves) == {"sbp": 3, "smo": 1}
    meta = read_meta(run_dir)
    assert meta["runs_once"] == ["smo"] and meta["resolved"]["runs"] == 3
    assert "repeat_deterministic" not in meta["resolved"]
    assert [(r["solver"], r["run"]) for r in meta["runs"]] == [("sbp", 0), ("sbp", 1), ("sbp", 2), ("smo", 0)]


def test_its_one_run_has_no_standard_error_and_counts_as_complete(once):
    _, run_dir = once
    curves = read_curves(run_dir)
    rows = {r.solver: r for r in summary.summary_rows(curves)}
    assert rows["smo"].runs == 1 and math.isnan(rows["smo"].error_se)
    assert math.isfinite(rows["sbp"].error_se)
    smo_line = next(line for line in summary.summary_table(curves).splitlines() if line.startswith("smo"))
    assert "± n/a" in smo_line
    text, complete = report._runs_text("det", curves, 3, read_meta(run_dir)["runs_once"])
    assert complete and text == "runs per solver: sbp 3, smo 1"
    assert not report._runs_text("det", curves, 3)[1]  # without the record, one SMO run is missing


def test_the_console_names_the_entries_run_once(once):
    path, _ = once
    assert runs_text(config.load(path)) == "3 run(s) (smo: runs: 1 (deterministic))"
    assert runs_text(config.load(path, ["repeat_deterministic=true"])) == "3 run(s)"


def test_in_processes_as_sequentially_and_said_on_the_console(once, tmp_path, monkeypatch, capsys):
    path, run_dir = once
    assert sbpbench(monkeypatch, "run", path, "--jobs", "2", "--results", tmp_path, "--no-plot") == 0
    out = capsys.readouterr()
    assert "2 solver(s) x 3 run(s) (smo: runs: 1 (deterministic))" in out.out + out.err
    (directory,) = (tmp_path / "det").iterdir()
    pd.testing.assert_frame_equal(run_files.curves(directory), run_files.curves(run_dir))
    assert read_meta(directory)["runs_once"] == ["smo"]


def test_repeat_deterministic_and_folds_run_every_entry_runs_times(once):
    path, _ = once
    exp = config.load(path)
    assert [(t.spec.label, t.run, t.position) for t in plan(exp)] == [
        ("sbp", 0, 0), ("smo", 0, 3), ("sbp", 1, 1), ("sbp", 2, 2)]
    repeated = config.load(path, ["repeat_deterministic=true"])
    assert [repeated.runs_of(s) for s in repeated.solvers] == [3, 3] and repeated.runs_once() == []
    folds = config.load(path, ["dataset.folds=3", "runs=3"])
    assert [folds.runs_of(s) for s in folds.solvers] == [3, 3]  # each fold is another problem
    with pytest.raises(Exception, match="repeat_deterministic.*true or false"):
        config.load(path, ["repeat_deterministic=3"])


def test_repeat_deterministic_is_recorded_and_repeats(one_numba_thread, tmp_path):
    path = write_config(tmp_path / "rep.yaml", adult_config("rep", solvers=["smo"], runs=2, repeat_deterministic=True))
    run_dir = run_sequentially(path, tmp_path / "results")
    curves = read_curves(run_dir)
    assert _runs(curves) == {"smo": 2}
    meta = read_meta(run_dir)
    assert meta["resolved"]["repeat_deterministic"] is True and "runs_once" not in meta
    timed = [c for c in curves if c.endswith("time_s")]
    first, second = (g.drop(columns=["run", *timed]).reset_index(drop=True) for _, g in curves.groupby("run"))
    pd.testing.assert_frame_equal(first, second)  # the same run twice, but for its seconds


def test_check_counts_a_references_identical_runs_as_one(once):
    """A reference made when SMO ran three identical runs matches SMO's one run now; a solver
    that draws (SBP) missing a run still differs."""
    _, run_dir = once
    curves = read_curves(run_dir, traits=True)
    smo = curves[curves["solver"] == "smo"]
    tripled = pd.concat([curves[curves["solver"] == "sbp"]] + [smo.assign(run=r) for r in range(3)])
    assert check.compare(curves, tripled) == []
    fewer = curves[~((curves["solver"] == "sbp") & (curves["run"] == 2))]
    assert [d.column for d in check.compare(fewer, tripled) if d.solver == "sbp"][0] == "runs"
    assert [d for d in check.compare(fewer, tripled) if d.solver == "smo"] == []


def test_resume_of_a_folder_with_repeated_deterministic_runs_keeps_one(one_numba_thread, tmp_path, monkeypatch):
    """A folder of older code (SMO run ``runs`` times) resumed now: its SMO run 0 is kept, the
    identical others are dropped, nothing is redone."""
    path = write_config(tmp_path / "old.yaml", adult_config("old", solvers=["smo"], runs=2))
    exp = config.load(path)
    monkeypatch.setattr(config.Experiment, "runs_of", lambda self, spec: self.runs)
    monkeypatch.setattr(config.Experiment, "runs_once", lambda self: [])
    run_dir = run_experiments([exp], tmp_path / "results", SequentialExecutor())[0]
    assert _runs(read_curves(run_dir)) == {"smo": 2}
    monkeypatch.undo()
    resumed = run_sequentially(path, tmp_path / "results", resume=True)
    assert resumed == run_dir
    meta = read_meta(run_dir)
    assert _runs(read_curves(run_dir)) == {"smo": 1} and meta["runs_once"] == ["smo"]
    assert meta["resumes"][-1]["kept"] == 1 and meta["resumes"][-1]["redone"] == 0


def test_a_redo_replaces_a_deterministic_solvers_identical_runs_with_its_one_run(one_numba_thread, tmp_path):
    """scripts/redo_runs.py on a folder whose SMO ran twice (repeated): the redone SMO runs once,
    equal to the identical runs it replaces, and ``runs_once`` says so; SBP keeps its two runs."""
    path = write_config(tmp_path / "r.yaml", adult_config("r", solvers=["sbp", "smo"], runs=2))
    committed = run_sequentially(path, tmp_path / "old", ["repeat_deterministic=true"])
    redone = run_sequentially(path, tmp_path / "new", ["solvers=[smo]"])
    curves, meta, replaced = redo_runs.merge(committed, redone, {"smo"})
    assert _runs(curves) == {"sbp": 2, "smo": 1} and meta["runs_once"] == ["smo"]
    assert [(r["solver"], r["run"]) for r in meta["runs"]] == [("sbp", 0), ("sbp", 1), ("smo", 0)]
    assert _runs(replaced) == {"smo": 2} and check.compare(curves, replaced) == []


def _counted(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = assemble.optimum

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(assemble, "optimum", counting)
    return calls


def test_nu_from_lambda_is_not_solved_when_no_entry_reads_nu(one_numba_thread, tmp_path, monkeypatch):
    calls = _counted(monkeypatch)
    path = write_config(tmp_path / "nonu.yaml", adult_config("nonu", solvers=["libsvm", "smo"], runs=1,
                                                            problem=NU_FROM_LAMBDA))
    run_dir = run_sequentially(path, tmp_path / "results")
    assert calls == []
    problem = read_meta(run_dir)["resolved"]["problem"]
    assert problem["nu"] is None and problem["nu_expression"] == "from_lambda" and "optimum" not in problem


def test_nu_from_lambda_is_solved_once_when_an_entry_reads_it(one_numba_thread, tmp_path, monkeypatch):
    calls = _counted(monkeypatch)
    path = write_config(tmp_path / "nu.yaml", adult_config("nu", solvers=["sbp", "libsvm"], runs=1,
                                                          problem=NU_FROM_LAMBDA))
    run_dir = run_sequentially(path, tmp_path / "results")
    assert calls == [1]
    assert read_meta(run_dir)["resolved"]["problem"]["nu"] > 0


def test_nu_from_lambda_in_a_sweep_only_for_the_problems_sbp_solves(tmp_path):
    """Each entry's own C: SMO's C = 10 is solved by no SBP entry, so it derives no nu."""
    path = write_config(tmp_path / "sw.yaml", adult_config(
        "sw", problem={"C": 1, "nu": "from_lambda", "bias": True}, runs=1,
        solvers=["sbp", "libsvm", {"name": "smo", "C": 10}]))
    exp = config.load(path)
    assert [assemble.reads_nu(exp, spec) for spec in exp.solvers] == [True, True, False]
    assert assemble.reads_nu(exp)
