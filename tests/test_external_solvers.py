"""Solvers defined outside the package: a file a config names, an entry point, ``check-solver``.

The worked example of docs/writing-a-solver.md (``examples/my_solver.py`` run by ``examples/my-solver.yaml``)
runs beside SBP in worker processes and on resume, passes the contract command (as the page shows it), and is drawn
and checked from what its ``meta.json`` records, with no solver name in ``sbpbench/outputs/``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from sbpbench.outputs import plotting
from sbpbench.results.store import read_curves, solver_trait
from sbpbench.solvers.base import TRAITS
from sbpbench.solvers.contract import CHECKS
from tests.cli_runner import command, environment, sbpbench
from tests.docs_pages import python_block, section

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_solver.py"
CONFIG = ROOT / "examples" / "my-solver.yaml"
SMALL = ["--set", "dataset.n_train=300", "--set", "dataset.n_test=200", "--set", "runs=1"]

pytestmark = pytest.mark.usefixtures("one_numba_thread")


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The example config, small, in two worker processes: its run folder."""
    results = tmp_path_factory.mktemp("results")
    done = _cli("run", CONFIG, "--results", results, "--jobs", "2", *SMALL)
    assert done.returncode == 0, done.stderr
    (run,) = (results / "my-solver").iterdir()
    return run


def _cli(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    """``sbpbench ARGS`` in a new process (the worker processes must import the solver file themselves)."""
    return subprocess.run(command(*args), cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=environment(**(env or {})))


def test_the_example_runs_beside_sbp_in_worker_processes(example_run):
    meta = json.loads((example_run / "meta.json").read_text())
    assert {(r["solver"], r["status"]) for r in meta["runs"]} == {("sbp", "budget"),
                                                                   ("margin-perceptron[margin=1.0]", "budget")}
    assert meta["resolved"]["solvers"][1]["path"] == str(EXAMPLE)
    assert meta["solver_traits"]["margin-perceptron"] == {"maximizes_objective": False,
                                                         "dashed_after_first_epoch": True,
                                                         "one_step_per_advance": False,
                                                         "swings_before_settling": False}
    assert meta["solver_traits"]["sbp"]["maximizes_objective"] is True
    curves = read_curves(example_run)
    mine = curves[curves["solver_name"] == "margin-perceptron"]
    assert (mine["kernel_evals"] == 300 * mine["iteration"]).all()  # its cost model, n per iteration


def test_the_example_resumes_keeping_its_runs(example_run, tmp_path):
    before = json.loads((example_run / "meta.json").read_text())["runs"]
    done = _cli("run", CONFIG, "--results", example_run.parents[1], "--resume", *SMALL)
    assert done.returncode == 0, done.stderr
    meta = json.loads((example_run / "meta.json").read_text())
    assert meta["runs"] == before and meta["resumes"][-1]["kept"] == 2 and meta["resumes"][-1]["redone"] == 0


def test_the_example_is_drawn_dashed_after_its_first_epoch_and_checked(example_run, tmp_path, monkeypatch, capsys):
    curves = read_curves(example_run, traits=True)  # the traits from meta.json: nothing imports the solver
    fig = plotting.curves_figure(curves, plotting.X_AXES["epochs"], plotting.Y_AXES["test_error"])
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["sbp (1 run)",
                                                                   "margin-perceptron[margin=1.0] (1 run)"]
    assert [line.get_linestyle() for line in ax.get_lines() if line.get_linestyle() == "--"]
    mine = curves[curves["solver_name"] == "margin-perceptron"]
    assert plotting.mean_line(mine, "epoch").dashed_from == 1.0
    assert sbpbench(monkeypatch, "check", example_run, "--reference", example_run) == 0
    worse = tmp_path / "worse"
    shutil.copytree(example_run, worse)
    curves.loc[curves["solver_name"] == "margin-perceptron", "test_error"] += 0.2
    curves.drop(columns=list(TRAITS)).to_csv(worse / "curves.csv", index=False)
    capsys.readouterr()
    assert sbpbench(monkeypatch, "check", worse, "--reference", example_run) == 1
    rows = [line for line in capsys.readouterr().out.splitlines() if line.endswith("WORSE")]
    assert rows and all(line.startswith("margin-perceptron[margin=1.0]") for line in rows)


def test_traits_come_from_meta_then_from_the_built_in_solver_by_name_then_the_default():
    rows = pd.DataFrame({"solver_name": ["sbp", "perceptron", "mine"]})
    assert [solver_trait(rows.iloc[[i]], "maximizes_objective") for i in range(3)] == [True, False, False]
    assert [solver_trait(rows.iloc[[i]], "dashed_after_first_epoch") for i in range(3)] == [False, True, False]
    recorded = rows.assign(maximizes_objective=[None, None, True])
    assert solver_trait(recorded.iloc[[2]], "maximizes_objective") is True


def test_check_solver_passes_the_example_as_the_docs_show_it_and_fails_a_wrong_cost_model(tmp_path):
    shown = tmp_path / "my_solver.py"  # the complete file a user copies from docs/writing-a-solver.md
    shown.write_text(python_block(section("Writing a solver")))
    done = _cli("check-solver", shown)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == len(CHECKS), done.stdout
    assert all(line.endswith(": ok") for line in lines), done.stdout
    broken = tmp_path / "broken.py"
    broken.write_text(EXAMPLE.read_text().replace("return float(self.n * self.iteration)",
                                                  "return float(self.n * self.iteration + 1)"))
    done = _cli("check-solver", f"{broken}:margin-perceptron")
    failed = [line for line in done.stdout.splitlines() if "FAILED" in line]
    assert done.returncode == 1 and len(failed) == 1, done.stdout
    assert failed[0].startswith("margin-perceptron: kernel count equals the cost model: FAILED (")


def test_check_solver_fails_two_cheats_and_passes_a_solver_accepting_every_problem():
    """tests/contract_fixtures.py: rows half from numpy (counted half), a seed from ``hash``; and an
    honest margin Perceptron that accepts every kind of problem."""
    done = _cli("check-solver", ROOT / "tests" / "contract_fixtures.py")
    assert done.returncode == 1, done.stdout + done.stderr
    failed = {line.split(": ")[0]: line for line in done.stdout.splitlines() if "FAILED" in line}
    assert set(failed) == {"numpy-half-rows", "hash-seeded"}, done.stdout
    assert failed["numpy-half-rows"].startswith("numpy-half-rows: kernel values only from the counting kernel: "
                                                "FAILED (numpy-half-rows-gaussian: kernel values taken around")
    assert failed["hash-seeded"].startswith("hash-seeded: same seed, same trajectory: FAILED (hash-seeded-gaussian: "
                                            "the same seed gave another trajectory in another process")
    honest = [line for line in done.stdout.splitlines() if line.startswith("accepts-everything: ")]
    assert len(honest) == len(CHECKS) and all(line.endswith(": ok") for line in honest), done.stdout


def test_a_bad_solver_file_in_a_config_is_one_line_naming_the_key_and_the_file(tmp_path):
    (tmp_path / "raises.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "none.py").write_text("x = 1\n")
    (tmp_path / "mine.py").write_text(EXAMPLE.read_text())
    cases = {
        "missing.py": f"key 'solvers[1].path': {tmp_path / 'missing.py'}: no such solver file",
        "raises.py": f"key 'solvers[1].path': {tmp_path / 'raises.py'}: cannot import the solver file "
                     "(RuntimeError: boom)",
        "none.py": f"key 'solvers[1].path': {tmp_path / 'none.py'}: defines no Solver subclass",
        "mine.py": f"key 'solvers[1].name': {tmp_path / 'mine.py'} defines no solver 'other' "
                   "(it defines margin-perceptron)",
    }
    config = tmp_path / "c.yaml"
    for file, expected in cases.items():
        config.write_text(CONFIG.read_text().replace("{name: margin-perceptron, path: my_solver.py, margin: 1.0}",
                                                     f"{{name: other, path: {file}}}"))
        done = _cli("validate", config)  # in its own process: this one's registry stays the package's
        err = done.stderr
        assert done.returncode == 2 and err.count("\n") == 1, err
        assert err.startswith(f"sbpbench: error: {config}: {expected}"), err


def _plugin(tmp_path: Path, target: str) -> dict:
    """An installed package (a dist-info on PYTHONPATH) declaring one ``sbpbench.solvers`` entry point."""
    (tmp_path / "myplugin.py").write_text(EXAMPLE.read_text())
    info = tmp_path / "myplugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[sbpbench.solvers]\nmine = {target}\n")
    return {"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}


def test_entry_point_solvers_are_listed_and_checked(tmp_path):
    env = _plugin(tmp_path, "myplugin:MarginPerceptron")
    done = _cli("solvers", env=env)
    assert done.returncode == 0 and done.stderr == ""
    assert "; from entry point mine (myplugin:MarginPerceptron)" in done.stdout
    assert "\nmargin-perceptron: Kernel margin Perceptron" in done.stdout
    done = _cli("check-solver", "margin-perceptron", env=env)
    assert done.returncode == 0 and done.stdout.count(": ok") == len(CHECKS), done.stdout


def test_a_broken_entry_point_is_left_out_with_a_warning(tmp_path):
    done = _cli("solvers", env=_plugin(tmp_path, "myplugin:nothing_here"))
    assert done.returncode == 0 and "\nsbp: " in done.stdout and "margin-perceptron" not in done.stdout
    assert "solver entry point mine (myplugin:nothing_here) left out" in done.stderr


def test_solvers_lists_a_solver_file():
    done = _cli("solvers", "--solver-file", EXAMPLE)
    assert done.returncode == 0
    assert f"margin-perceptron: Kernel margin Perceptron on uniformly drawn examples. Cost: n kernel " \
           f"evaluations per iteration.\n    needs: -; bias: refused; from {EXAMPLE}\n    margin (float, default 1.0)" \
           in done.stdout



def test_the_docs_show_the_example_as_it_is():
    assert python_block(section("Writing a solver")) == EXAMPLE.read_text()
    assert "- {name: margin-perceptron, path: my_solver.py, margin: 1.0}" in CONFIG.read_text()
