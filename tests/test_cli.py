"""The command line end to end on a small real subsample, and its error and interruption paths."""

import json

import pandas as pd
import pytest

from tests.cli_runner import sbpbench
from sbpbench import runner
from sbpbench.results import COLUMNS

CONFIG = """
name: tiny
dataset: {name: adult, n_train: 300, n_test: 300}
kernel: {name: gaussian, sigma2: 10}
problem: {lambda: 1/n, nu: 0.011}
solvers: [sbp, pegasos]
budget: {epochs: 1}
runs: 2
seed: 0
"""



@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(CONFIG)
    return path


def test_run_writes_results_table_and_figure(monkeypatch, capsys, tmp_path, config_file):
    assert sbpbench(monkeypatch, "run", config_file, "--results", tmp_path / "res") == 0
    out = capsys.readouterr().out
    assert "sbp" in out and "pegasos" in out and "±" in out and "figure2.png" in out
    (run_dir,) = (tmp_path / "res" / "tiny").iterdir()
    curves = pd.read_csv(run_dir / "curves.csv")
    assert list(curves.columns[: len(COLUMNS)]) == COLUMNS
    assert set(curves["solver"]) == {"sbp", "pegasos"} and set(curves["run"]) == {0, 1}
    assert set(curves["status"]) == {"budget"}
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["resolved"]["problem"]["lambda"] == pytest.approx(1 / 300)
    assert meta["resolved"]["dataset"]["n_train"] == 300
    assert meta["resolved"]["solvers"][1]["params"] == {"mini_batch": 1, "projection": True, "representation": "auto"}
    assert [r["status"] for r in meta["runs"]] == ["budget"] * 4
    assert "finished" in meta and meta["versions"]["numpy"]
    assert (run_dir / "figure2.png").stat().st_size > 0 and (run_dir / "figure2.svg").exists()

    out_dir = tmp_path / "figs"
    assert sbpbench(monkeypatch, "plot", tmp_path / "res", "--out", out_dir) == 0
    assert (out_dir / "figure2.png").exists()


def test_bad_config_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset: adult\nsolvers: [svm]\n")
    assert sbpbench(monkeypatch, "run", bad, "--results", tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("sbpbench: error: ") and "bad.yaml" in err and "solvers[0].name" in err
    assert not (tmp_path / "bad").exists()


def test_validate_and_missing_results(monkeypatch, capsys, tmp_path, config_file):
    assert sbpbench(monkeypatch, "validate", config_file) == 0
    assert "ok" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert sbpbench(monkeypatch, "plot", empty) == 2
    assert "no curves.csv" in capsys.readouterr().err


@pytest.mark.parametrize("command", [[], ["run"], ["plot"], ["validate"], ["solvers"]])
def test_every_command_has_help(monkeypatch, capsys, command):
    assert sbpbench(monkeypatch, *command, "--help") == 0
    assert "Usage:" in capsys.readouterr().out


def test_interruption_keeps_finished_runs(monkeypatch, capsys, tmp_path, config_file):
    real = runner.run_one
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_one", interrupted)
    assert sbpbench(monkeypatch, "run", config_file, "--results", tmp_path) == 130
    assert "interrupted" in capsys.readouterr().err
    (run_dir,) = (tmp_path / "tiny").iterdir()
    curves = pd.read_csv(run_dir / "curves.csv")
    assert set(zip(curves["solver"], curves["run"])) == {("sbp", 0)}
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["interrupted"] is True and len(meta["runs"]) == 1
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".")]  # no temporary files left
