"""CI regression of curves: the CI configs against their committed reference curves.

Also shows that the check can fail: a perturbed SBP (half the step size) must be caught,
and the real solver must pass again.
"""

from pathlib import Path

import pandas as pd
import pytest

from sbpbench import kernels
from sbpbench.execution.sweep import run_experiment
from sbpbench.experiment import config
from sbpbench.outputs import check as regression
from sbpbench.solvers import sbp as sbp_module
from tests.cli_runner import sbpbench
from tests.problems import SHARED

ROOT = Path(__file__).resolve().parents[1]
CI_CONFIGS = sorted((ROOT / "configs" / "ci").glob("*.yaml"))


def run_ci(path, tmp_path):
    exp = config.load(path)
    return exp, run_experiment(exp, tmp_path)


def serve_mnist(path, monkeypatch):
    """For a config on MNIST: the real files of ../shared/datasets/mnist as the download mirror."""
    if config.load(path).dataset.name == "mnist":
        if not (SHARED / "mnist").is_dir():
            pytest.skip("../shared/datasets/mnist is not available")
        monkeypatch.setenv("SBPBENCH_MIRROR", str(SHARED / "mnist"))


@pytest.mark.parametrize("path", CI_CONFIGS, ids=[p.stem for p in CI_CONFIGS])
def test_ci_config_matches_its_reference(path, tmp_path, monkeypatch):
    serve_mnist(path, monkeypatch)
    exp, run_dir = run_ci(path, tmp_path)
    ok, report = regression.check(run_dir, ROOT / "results" / "reference" / exp.name)
    assert ok, report


def halve_the_sbp_step(monkeypatch):
    original = sbp_module.SBP.__init__

    def halved(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.eta0 *= 0.5

    monkeypatch.setattr(sbp_module.SBP, "__init__", halved)


def divide_by_the_integer_scale_once(monkeypatch):
    """A bug of the small-integer path: squared distances divided by D instead of D^2."""
    original = kernels.Kernel.__init__

    def wrong(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if self.storage == "uint8 dense":
            self.store.scale2 = float(self.store.scale)

    monkeypatch.setattr(kernels.Kernel, "__init__", wrong)


@pytest.mark.parametrize("name,perturb", [("ci-adult", halve_the_sbp_step),
                                          ("ci-mnist", divide_by_the_integer_scale_once)])
def test_a_perturbed_solver_or_kernel_is_caught(name, perturb, tmp_path, monkeypatch):
    """The check can fail: each perturbation makes SBP's curve leave its band (the real code
    passes in :func:`test_ci_config_matches_its_reference`)."""
    path = ROOT / "configs" / "ci" / f"{name}.yaml"
    serve_mnist(path, monkeypatch)
    perturb(monkeypatch)
    exp, run_dir = run_ci(path, tmp_path)
    ok, report = regression.check(run_dir, ROOT / "results" / "reference" / exp.name)
    assert not ok
    assert "sbp" in report and "WORSE" in report


def synthetic(errors_by_run, kevals=(10, 100)):
    rows = []
    for run, errors in enumerate(errors_by_run):
        for cp, (err, kev) in enumerate(zip(errors, kevals)):
            rows.append({"solver": "s", "solver_name": "pegasos", "run": run, "checkpoint": cp,
                         "kernel_evals": kev, "iteration": cp, "test_error": err, "objective": 1.0})
    return pd.DataFrame(rows)


def twice(errors):
    """Two runs with the same test errors (as many runs as the synthetic reference)."""
    return [errors, errors]


def test_bands_come_from_the_spread_over_seeds():
    reference = synthetic([[0.30, 0.20], [0.34, 0.24]])  # std 0.02 at each checkpoint
    assert regression.compare(synthetic(twice([0.35, 0.27])), reference) == []  # within 3 std
    worse = regression.compare(synthetic(twice([0.40, 0.22])), reference)
    assert [(d.checkpoint, d.column, d.worse) for d in worse] == [(0, "test_error", True)]
    better = regression.compare(synthetic(twice([0.20, 0.22])), reference)
    assert [(d.column, d.worse) for d in better] == [("test_error", False)]
    assert regression.compare(synthetic(twice([0.32, 0.22]), kevals=(10, 101)), reference)[0].column == "kernel_evals"


def test_missing_runs_and_nan_values_are_worse():
    reference = synthetic([[0.30, 0.20], [0.34, 0.24]])
    fewer = regression.compare(synthetic([[0.32, 0.22]]), reference)  # a whole run missing
    assert [(d.checkpoint, d.column, d.reference, d.value, d.worse) for d in fewer] == [(0, "runs", 2, 1, True)]
    cut = synthetic(twice([0.32, 0.22]))
    cut = cut[(cut["run"] == 0) | (cut["checkpoint"] == 0)]  # run 1 stopped after its first checkpoint
    assert [(d.checkpoint, d.column) for d in regression.compare(cut, reference)] == [(1, "runs")]
    nan = float("nan")
    every = regression.compare(synthetic(twice([nan, nan])), reference)
    assert [(d.checkpoint, d.column, d.worse) for d in every] == [(0, "test_error", True), (1, "test_error", True)]
    one = regression.compare(synthetic([[0.32, 0.22], [0.32, nan]]), reference)  # the other run's mean is fine
    assert [(d.checkpoint, d.column, d.worse) for d in one] == [(1, "test_error", True)]
    objective = synthetic(twice([0.32, 0.22])).assign(objective=nan)
    assert {(d.column, d.worse) for d in regression.compare(objective, reference)} == {("objective", True)}
    assert regression.compare(reference, reference.assign(objective=nan)) == []  # nothing to compare with


def test_check_cli_exit_codes(tmp_path, monkeypatch, capsys):
    reference = ROOT / "results" / "reference" / "ci-adult"
    run_dir = tmp_path / "ci-adult" / "run"
    run_dir.mkdir(parents=True)
    curves = pd.read_csv(reference / "curves.csv")
    curves.loc[curves["solver"] == "sbp", "test_error"] += 0.05
    curves.to_csv(run_dir / "curves.csv", index=False)
    (run_dir / "meta.json").write_text((reference / "meta.json").read_text())
    assert sbpbench(monkeypatch, "check", run_dir, "--reference", reference) == 1
    out = capsys.readouterr().out
    assert "WORSE" in out and "test_error" in out


def copy_of_reference(tmp_path, change) -> Path:
    """A run folder holding the ci-adult reference's curves changed by ``change(frame) -> frame``."""
    reference = ROOT / "results" / "reference" / "ci-adult"
    run_dir = tmp_path / "ci-adult" / "run"
    run_dir.mkdir(parents=True)
    change(pd.read_csv(reference / "curves.csv")).to_csv(run_dir / "curves.csv", index=False)
    (run_dir / "meta.json").write_text((reference / "meta.json").read_text())
    return run_dir


@pytest.mark.parametrize("change, column", [
    (lambda c: c[~((c["solver"] == "sbp") & (c["run"] == c["run"].max()))], "runs"),  # a whole run missing
    (lambda c: c.assign(test_error=float("nan")), "test_error"),
])
def test_check_cli_fails_on_a_missing_run_and_nan_values(tmp_path, monkeypatch, capsys, change, column):
    reference = ROOT / "results" / "reference" / "ci-adult"
    run_dir = copy_of_reference(tmp_path, change)
    assert sbpbench(monkeypatch, "check", run_dir, "--reference", reference) == 1
    out = capsys.readouterr().out
    assert " 0 worse" not in out and any(line.split()[2:3] == [column] and "WORSE" in line for line in out.splitlines())


@pytest.mark.parametrize("z", ["nan", "inf", "-inf", "-1"])
def test_check_z_must_be_finite_and_not_negative(tmp_path, monkeypatch, capsys, z):
    reference = ROOT / "results" / "reference" / "ci-adult"
    assert sbpbench(monkeypatch, "check", reference, "--reference", reference, "--z", z) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"sbpbench: error: --z {float(z)}: expected a finite number")
    assert sbpbench(monkeypatch, "check", reference, "--reference", reference, "--z", "0") == 0
