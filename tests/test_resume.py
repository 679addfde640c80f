"""--resume: interrupted (Ctrl-C, SIGKILL) or failed runs are redone, finished ones kept, once each."""

import json
import os
import signal
import subprocess
import time

import pandas as pd
import pytest

from sbpbench.errors import UserError
from sbpbench.execution import loop as runner
from sbpbench.results.agreement import Difference, first_difference
from sbpbench.results.store import ResultsWriter, read_curves
from scripts.promote_results import promote
from tests.cli_runner import command, environment
from tests.experiments import interrupt_run, run_sequentially, write_adult_config
from tests.run_files import curves, meta

pytestmark = pytest.mark.usefixtures("one_numba_thread")


def test_first_difference_names_the_key():
    old = {"budget": {"epochs": 1.0}, "solvers": [{"name": "sbp"}, {"name": "pegasos"}]}
    assert first_difference(old, json.loads(json.dumps(old))) is None
    assert first_difference(old, {**old, "budget": {"epochs": 2.0}}).key == "budget.epochs"
    assert first_difference(old, {**old, "solvers": [{"name": "sbp"}, {"name": "x"}]}).key == "solvers[1].name"
    assert first_difference(old, {**old, "seed": 1}) == Difference("seed", None, 1)


def test_writer_orders_runs_by_position_and_replaces(tmp_path):
    writer = ResultsWriter(tmp_path, {})
    for pos, status in [(2, "budget"), (0, "failed: x"), (1, "done"), (0, "budget")]:
        writer.add_run([{"run": pos, "checkpoint": 0}], {"run": pos, "status": status}, pos)
    frame = pd.read_csv(tmp_path / "curves.csv")
    assert list(frame["run"]) == [0, 1, 2] and list(frame["status"]) == ["budget", "done", "budget"]
    assert [r["run"] for r in meta(tmp_path)["runs"]] == [0, 1, 2]


def test_interrupted_and_failed_runs_are_redone(tmp_path, monkeypatch, tiny_run):
    ref_path, ref_dir = tiny_run
    real = runner.run_one
    calls = []

    def flaky(exp, problem, spec, run_index, *rest):
        calls.append(1)
        if len(calls) == 2:
            return runner.failed_result(exp, spec, run_index, "RuntimeError: lost")
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(exp, problem, spec, run_index, *rest)

    monkeypatch.setattr(runner, "run_one", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_sequentially(ref_path, tmp_path)
    (directory,) = (tmp_path / "tiny").iterdir()
    first = meta(directory)
    assert first["interrupted"] is True
    assert [r["status"] for r in first["runs"]] == ["budget", "interrupted", "failed: RuntimeError: lost"]
    assert set(pd.read_csv(directory / "curves.csv")["run"]) == {0}

    monkeypatch.setattr(runner, "run_one", real)
    assert run_sequentially(ref_path, tmp_path, resume=True) == directory  # continues the same folder
    pd.testing.assert_frame_equal(curves(directory), curves(ref_dir))
    final = meta(directory)
    assert "interrupted" not in final and "finished" in final and final["started"] == first["started"]
    assert [r["status"] for r in final["runs"]] == ["budget"] * 4
    assert [(r["solver"], r["run"]) for r in final["runs"]] == [("sbp", 0), ("sbp", 1), ("pegasos", 0), ("pegasos", 1)]
    assert [(r["kept"], r["redone"]) for r in final["resumes"]] == [(1, 3)]
    assert not [p for p in directory.iterdir() if p.name.startswith(".")]

    # nothing left to redo: the files stay the same, the resume is recorded
    before = (directory / "curves.csv").read_bytes()
    run_sequentially(ref_path, tmp_path, resume=True)
    assert (directory / "curves.csv").read_bytes() == before
    assert [(r["kept"], r["redone"]) for r in meta(directory)["resumes"]] == [(1, 3), (4, 0)]


def test_resume_refuses_a_changed_config(tmp_path, tiny_run):
    ref_path, _ = tiny_run
    directory = run_sequentially(ref_path, tmp_path)
    with pytest.raises(UserError, match=r"resolved\.budget\.epochs' differs: 1\.0 in the folder, 2\.0 in the config"):
        run_sequentially(ref_path, tmp_path, ["budget.epochs=2"], resume=True)
    with pytest.raises(UserError, match=r"resolved\.dataset\.n_train"):
        run_sequentially(ref_path, tmp_path, ["dataset.n_train=150"], resume_from=directory)
    assert [p.name for p in (tmp_path / "tiny").iterdir()] == [directory.name]


def test_resume_without_a_previous_folder_starts_one(tmp_path, tiny_run):
    ref_path, ref_dir = tiny_run
    directory = run_sequentially(ref_path, tmp_path, resume=True)
    pd.testing.assert_frame_equal(curves(directory), curves(ref_dir))
    assert "resumes" not in meta(directory)


def test_sigkill_during_a_sequential_run_then_resume(tmp_path):
    """SIGKILL after the first finished run: it survives intact and --resume gives the uninterrupted curves."""
    path = write_adult_config(tmp_path, "slow", n_train=1000, budget={"epochs": 4})
    proc = subprocess.Popen(command("run", path, "--results", tmp_path / "res", "--no-plot", "-q"),
                            env=environment(NUMBA_NUM_THREADS="1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    folder = tmp_path / "res" / "slow"
    deadline = time.monotonic() + 240  # the first run's end: seconds, minutes on a loaded machine
    killed_after = None
    while time.monotonic() < deadline and proc.poll() is None:
        metas = list(folder.glob("*/meta.json"))
        if metas and (runs := json.loads(metas[0].read_text())["runs"]):
            os.kill(proc.pid, signal.SIGKILL)
            killed_after = len(runs)
            break
        time.sleep(0.01)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
    (directory,) = folder.iterdir()
    survived = meta(directory)
    assert 1 <= killed_after <= len(survived["runs"]) < 4 and "finished" not in survived
    partial = curves(directory)
    assert not [p for p in directory.iterdir() if p.name.startswith(".")]

    assert run_sequentially(path, tmp_path / "res", resume=True) == directory
    reference = run_sequentially(path, tmp_path / "reference")
    pd.testing.assert_frame_equal(curves(directory), curves(reference))
    kept = len(survived["runs"])
    # the runs finished before the kill were kept as they were, not redone
    pd.testing.assert_frame_equal(curves(directory).iloc[: len(partial)], partial)
    assert [(r["kept"], r["redone"]) for r in meta(directory)["resumes"]] == [(kept, 4 - kept)]


def test_a_promoted_partial_copy_made_elsewhere_is_completed_in_place(tmp_path, monkeypatch):
    """`--resume-from results/paper/<experiment>` reads the compressed curves, ignores where and
    how fast another machine computed the optimum, and promoting the folder in place compresses
    it again: the documented way to complete a committed experiment that has only some runs."""
    path = write_adult_config(tmp_path)
    derived = ["problem.nu=from_lambda"]
    whole = run_sequentially(path, tmp_path / "whole", derived)
    interrupt_run(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        run_sequentially(path, tmp_path / "res", derived)
    (partial,) = (tmp_path / "res" / "tiny").iterdir()
    monkeypatch.setattr("scripts.promote_results.GZIP_ABOVE_BYTES", 10)
    paper = promote(partial, tmp_path / "paper")
    committed = meta(paper)
    committed["resolved"]["problem"]["optimum"].update(cache_file="/elsewhere/optimum.json", seconds=99.0)
    (paper / "meta.json").write_text(json.dumps(committed))
    assert [r["status"] for r in committed["runs"]] == ["budget", "interrupted", "budget"]
    assert (paper / "curves.csv.gz").is_file()

    assert run_sequentially(path, tmp_path / "res", derived, resume_from=paper) == paper
    assert not (paper / "curves.csv.gz").exists()
    pd.testing.assert_frame_equal(curves(paper), curves(whole))
    assert [(r["kept"], r["redone"]) for r in meta(paper)["resumes"]] == [(2, 2)]

    assert promote(paper, tmp_path / "paper") == paper
    assert not (paper / "curves.csv").exists()
    assert meta(paper)["run_id"] == partial.name
    pd.testing.assert_frame_equal(read_curves(paper / "curves.csv.gz").drop(columns="train_time_s"), curves(whole))


def test_resume_of_a_damaged_meta_is_refused_in_one_line(tmp_path, tiny_run):
    ref_path, ref_dir = tiny_run
    folder = tmp_path / "damaged"
    folder.mkdir()
    damaged = {**meta(ref_dir), "resolved": {**meta(ref_dir)["resolved"], "problem": None}}
    (folder / "meta.json").write_text(json.dumps(damaged))
    with pytest.raises(UserError, match=r"not a sbpbench meta.json \(key 'resolved\.problem' holds None, an object"):
        run_sequentially(ref_path, tmp_path, resume_from=folder)
    for runs in (-1, 0, True):  # a damaged run count is no smaller count that more runs may extend
        damaged = {**meta(ref_dir), "resolved": {**meta(ref_dir)["resolved"], "runs": runs}}
        (folder / "meta.json").write_text(json.dumps(damaged))
        with pytest.raises(UserError, match=r"key 'resolved\.runs' holds .*, an integer >= 1 expected"):
            run_sequentially(ref_path, tmp_path, resume_from=folder)


def test_resuming_with_more_runs_adds_only_the_new_runs(tmp_path):
    """A folder made with 2 runs, resumed from a config asking for 3: one run per solver is added,
    the others kept, and the files say 3 runs; the same curves as 3 runs from the start."""
    path = write_adult_config(tmp_path)
    two = run_sequentially(path, tmp_path / "res")
    three = ["runs=3"]
    assert run_sequentially(path, tmp_path / "res", three, resume_from=two) == two
    assert [(r["kept"], r["redone"], r["runs"]) for r in meta(two)["resumes"]] == [(4, 2, [2, 3])]
    assert meta(two)["resolved"]["runs"] == 3 and meta(two)["config"]["runs"] == 3
    pd.testing.assert_frame_equal(curves(two), curves(run_sequentially(path, tmp_path / "whole", three)))
    with pytest.raises(UserError, match=r"key 'resolved.runs' differs: 3 in the folder, 2 in the config"):
        run_sequentially(path, tmp_path / "res", resume_from=two)  # fewer runs than the folder holds
