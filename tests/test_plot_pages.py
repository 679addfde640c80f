"""`sbpbench plot --x/--y`: any quantity against any cost, solvers without it left out.

One small real run serves every test: kernel and linear solvers on a linear-kernel Adult
subsample, so that some solvers have kernel evaluations and some not, some a duality gap and
some not, with a description and solver labels full of markup characters.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sbpbench import cli
from sbpbench.errors import UserError
from sbpbench.outputs import plotting
from sbpbench.results.store import read_curves
from tests.cli_runner import sbpbench

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = "</script><b>&amp;\"'<!--"
CONFIG = f"""
name: mixed
description: {json.dumps("SBP & co. " + HOSTILE)}
dataset: {{name: adult, n_train: 300, n_test: 300}}
kernel: {{name: linear}}
problem: {{lambda: 1/n, nu: 0.011}}
solvers: [{{name: sbp, label: {json.dumps("sbp " + HOSTILE)}}}, dcd, {{name: smo, label: "smo <1>"}}]
budget: {{epochs: 1}}
runs: 2
seed: 0
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The run folder of CONFIG, made by `sbpbench run`, and what it printed."""
    tmp = tmp_path_factory.mktemp("pages")
    (tmp / "mixed.yaml").write_text(CONFIG)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert sbpbench(monkeypatch, "run", tmp / "mixed.yaml", "--results", tmp / "res", "-q") == 0
    (folder,) = (tmp / "res" / "mixed").iterdir()
    return folder


def _only(run_dir: Path, tmp_path: Path, solvers: set[str]) -> Path:
    """A copy of the run folder with only the rows of ``solvers`` (a run of those solvers alone)."""
    copy = tmp_path / "mixed" / run_dir.name
    copy.mkdir(parents=True)
    curves = read_curves(run_dir)
    curves[curves["solver"].isin(solvers)].to_csv(copy / "curves.csv", index=False)
    shutil.copy(run_dir / "meta.json", copy / "meta.json")
    return copy


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("sbpbench: error: "), err
    return err


def test_the_cli_offers_exactly_the_drawable_axes():
    assert cli.X_CHOICES == tuple(plotting.X_AXES) and cli.Y_CHOICES == tuple(plotting.Y_AXES)


def test_plot_draws_any_axes_and_notes_the_solvers_left_out(monkeypatch, capsys, run_dir, tmp_path):
    assert sbpbench(monkeypatch, "plot", run_dir, "--out", tmp_path) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["left out: dcd in mixed: no kernel evaluations",
                   str(tmp_path / "figure2.png"), str(tmp_path / "figure2.svg")]

    assert sbpbench(monkeypatch, "plot", run_dir, "--out", tmp_path, "--x", "seconds") == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [str(tmp_path / f"test_error-vs-seconds{s}") for s in (".png", ".svg")]

    assert sbpbench(monkeypatch, "plot", run_dir, "--out", tmp_path, "--x", "epochs", "--y", "gap") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"left out: sbp {HOSTILE} in mixed: no duality gap (primal - dual)"
    assert out[1:] == [str(tmp_path / f"gap-vs-epochs{s}") for s in (".png", ".svg")]
    assert all((tmp_path / f"gap-vs-epochs{s}").stat().st_size > 0 for s in (".png", ".svg"))


def test_a_figure_draws_one_line_per_solver_that_has_both_columns(run_dir):
    curves = read_curves(run_dir)
    for (x, y), solvers in {("kernel_evals", "test_error"): 2, ("iterations", "gap"): 2, ("seconds", "objective"): 3,
                            ("kernel_evals", "gap"): 1}.items():
        fig = plotting.curves_figure(curves, plotting.X_AXES[x], plotting.Y_AXES[y])
        (ax,) = fig.axes
        assert len(ax.get_legend().get_texts()) == solvers, (x, y)
        assert ax.get_xscale() == ("linear" if x == "epochs" else "log")
        assert ax.get_yscale() == ("log" if y == "gap" else "linear")


def test_an_axis_no_solver_has_is_one_error_line(monkeypatch, capsys, run_dir, tmp_path):
    linear_only = _only(run_dir, tmp_path, {"dcd"})
    assert sbpbench(monkeypatch, "plot", linear_only) == 2
    err = _one_error_line(capsys)
    assert str(linear_only) in err and "no solver has both kernel evaluations and test error" in err
    assert "--x kernel_evals --y test_error" in err
    assert not list(linear_only.glob("*.png"))
    assert sbpbench(monkeypatch, "plot", linear_only, "--x", "iterations", "--y", "gap") == 0

    assert sbpbench(monkeypatch, "plot", run_dir, "--x", "minutes") == 2
    assert "'minutes' is not one of" in _one_error_line(capsys)
    with pytest.raises(UserError, match="--y loss: expected one of test_error, objective, primal_objective, gap"):
        plotting.plot_results(run_dir, tmp_path, y="loss")
