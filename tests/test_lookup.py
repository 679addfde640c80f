"""The one rule for the run folder that counts (results/lookup.py)."""

import json
from pathlib import Path

import pytest

from sbpbench.errors import UserError
from sbpbench.results.lookup import find_experiment, newest_run, newest_runs, run_folders
from sbpbench.results.store import COLUMNS

ROW = {c: 0 for c in COLUMNS} | {"experiment": "e", "dataset": "d", "solver": "sbp", "solver_name": "sbp",
                                 "params": "", "status": "budget"}


def run_folder(path: Path, checkpoints: int = 1, solver: str = "sbp") -> Path:
    """A run folder with a meta.json and ``checkpoints`` rows of ``solver`` (an empty curves.csv for 0)."""
    path.mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps({"experiment": path.parent.name,
                                                "resolved": {"dataset": {"n_train": 1, "n_test": 1}, "problem": {}}}))
    rows = [ROW | {"solver": solver, "solver_name": solver, "checkpoint": k} for k in range(checkpoints)]
    lines = [",".join(COLUMNS)] + [",".join(str(r[c]) for c in COLUMNS) for r in rows]
    (path / "curves.csv").write_text("\n".join(lines) + "\n" if rows else "")
    return path


def test_newest_by_time_stamp_not_by_name(tmp_path):
    """`-10` is newer than `-9` (a name sort would say otherwise); folders without meta.json or
    without a time-stamp name are not runs of the experiment."""
    exp = tmp_path / "e"
    for name in ("20260101-000000", "20260101-000000-9", "20260101-000000-10"):
        run_folder(exp / name)
    (exp / "20270101-000000").mkdir()  # no meta.json yet
    run_folder(exp / "notes")
    assert [p.name for p in run_folders(exp)] == ["20260101-000000-10", "20260101-000000-9", "20260101-000000"]
    assert newest_run(exp) == exp / "20260101-000000-10"


def test_readers_skip_a_newest_run_without_checkpoints(tmp_path):
    exp = tmp_path / "e"
    run_folder(exp / "20260101-000000", checkpoints=2)
    run_folder(exp / "20260102-000000", checkpoints=0)  # started, nothing measured yet
    assert newest_run(exp) == exp / "20260102-000000"  # resume continues it
    assert newest_run(exp, measured=True) == exp / "20260101-000000"
    assert len(find_experiment(tmp_path, "e").curves) == 2


def test_a_promoted_folder_is_its_own_run_and_references_are_left_out(tmp_path):
    promoted = run_folder(tmp_path / "paper" / "p")
    run_folder(tmp_path / "reference" / "r")
    run = run_folder(tmp_path / "e" / "20260101-000000")
    assert newest_runs(tmp_path) == [run, promoted]
    assert newest_runs(run) == [run]
    assert find_experiment(tmp_path / "paper", "p").directory == promoted


def test_shared_runs_are_lent_only_when_missing(tmp_path):
    run_folder(tmp_path / "lender" / "20260101-000000", checkpoints=3, solver="sbp")
    run_folder(tmp_path / "borrower" / "20260101-000000", checkpoints=1, solver="fourier")
    shared = {"borrower": ("lender", "sbp")}
    curves = find_experiment(tmp_path, "borrower", shared).curves
    assert list(curves["solver_name"]) == ["sbp"] * 3 + ["fourier"]
    assert set(curves["experiment"]) == {"borrower", "e"}  # lent rows relabelled, the own row as written
    assert find_experiment(tmp_path, "lender", shared).curves["solver_name"].tolist() == ["sbp"] * 3


def test_a_meta_json_without_its_configuration_is_one_error(tmp_path):
    run = run_folder(tmp_path / "e" / "20260101-000000")
    (run / "meta.json").write_text('{"experiment": "e"}')
    with pytest.raises(UserError, match=r"meta.json: no 'resolved' configuration"):
        find_experiment(tmp_path, "e")
    (run / "meta.json").write_text('{"experiment": "e", "resolved": {"dataset": {"n_train": 5}, "problem": {}}}')
    with pytest.raises(UserError, match=r"meta.json: not a sbpbench meta.json \(no key 'resolved.dataset.n_test'"):
        find_experiment(tmp_path, "e")
