"""CI regression of curves: the CI configs against their committed reference curves.

Also shows that the check can fail: a perturbed SBP (half the step size) must be caught,
and the real solver must pass again.
"""

import math
from pathlib import Path

import pandas as pd
import pytest

from sbpbench import kernels
from sbpbench.execution.sweep import run_experiment
from sbpbench.experiment import config
from sbpbench.experiment.assemble import prepare
from sbpbench.outputs import check as regression
from sbpbench.solvers import SOLVERS
from sbpbench.solvers import sbp as sbp_module
from tests.cli_runner import sbpbench
from tests.problems import SHARED

ROOT = Path(__file__).resolve().parents[1]
CI_CONFIGS = sorted((ROOT / "configs" / "ci").glob("*.yaml"))


def ci_case(name: str, *values):
    """``values`` as the case of the CI config ``name``, marked slow when that config runs on MNIST
    (the real 784-pixel images: the slowest by far; `make test-slow` runs it)."""
    on_mnist = config.load(ROOT / "configs" / "ci" / f"{name}.yaml").dataset.name == "mnist"
    return pytest.param(*values, marks=[pytest.mark.slow] if on_mnist else [], id=name)


def run_ci(path, tmp_path):
    exp = config.load(path)
    return exp, run_experiment(exp, tmp_path)


def serve_mnist(path, monkeypatch):
    """For a config on MNIST: the real files of ../shared/datasets/mnist as the download mirror."""
    if config.load(path).dataset.name == "mnist":
        if not (SHARED / "mnist").is_dir():
            pytest.skip("../shared/datasets/mnist is not available")
        monkeypatch.setenv("SBPBENCH_MIRROR", str(SHARED / "mnist"))


@pytest.mark.parametrize("path", [ci_case(p.stem, p) for p in CI_CONFIGS])
def test_ci_config_matches_its_reference(path, tmp_path, monkeypatch):
    serve_mnist(path, monkeypatch)
    exp, run_dir = run_ci(path, tmp_path)
    ok, report = regression.check(run_dir, ROOT / "results" / "reference" / exp.name)
    assert ok, report


def test_the_references_cover_every_solver_c_both_kernels_and_sizes():
    """Every registered solver runs in a CI reference; so do C != 1, SBP on both kernels, SMO with a
    bias and with shrinking, and a training size that is no power of ten."""
    experiments = [config.load(path) for path in CI_CONFIGS]
    runs = [(exp, spec) for exp in experiments for spec in exp.solvers]
    built_in = {name for name, cls in SOLVERS.items() if cls.__module__.startswith("sbpbench.solvers.")}
    assert {spec.name for _, spec in runs} == built_in  # not those other tests load from files
    assert {0.05, 10} <= {spec.overrides.get("C") for _, spec in runs if spec.name == "sgd-s"}  # a sweep of C
    assert {exp.kernel.name for exp, spec in runs if spec.name == "sbp"} == {"gaussian", "linear"}
    assert any(exp.bias and spec.params.get("shrinking") for exp, spec in runs if spec.name == "smo")
    assert any(math.log10(exp.dataset.n_train) % 1 for exp in experiments)


def test_a_references_deterministic_runs_are_one_run():
    """The references were made when a deterministic solver ran ``runs`` times: those runs are
    identical (all but their seconds), so ``check`` counts them as the one run it makes now."""
    seen = 0
    for reference in sorted((ROOT / "results" / "reference").iterdir()):
        curves = pd.read_csv(reference / "curves.csv")
        for label, rows in curves.groupby("solver", sort=False):
            if SOLVERS[rows["solver_name"].iloc[0]].deterministic:
                seen += 1
                same = rows.drop(columns=[c for c in rows if c.endswith("time_s") or c == "run"])
                first, *others = (g.reset_index(drop=True) for _, g in same.groupby(rows["run"]))
                assert others and all(first.equals(other) for other in others), (reference.name, label)
    assert seen == 8  # LIBSVM; SMO in two references, shrinking and not; OCAS and SVMperf at two C


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


@pytest.mark.parametrize("name,perturb", [ci_case("ci-adult", "ci-adult", halve_the_sbp_step),
                                          ci_case("ci-mnist", "ci-mnist", divide_by_the_integer_scale_once)])
def test_a_perturbed_solver_or_kernel_is_caught(name, perturb, tmp_path, monkeypatch):
    """The check can fail: each perturbation makes SBP's curve leave its band (the real code
    passes in :func:`test_ci_config_matches_its_reference`)."""
    path = ROOT / "configs" / "ci" / f"{name}.yaml"
    serve_mnist(path, monkeypatch)
    prepare(config.load(path))  # nu from the exact optimum of the real kernel (cached), as the reference's
    perturb(monkeypatch)
    exp, run_dir = run_ci(path, tmp_path)
    ok, report = regression.check(run_dir, ROOT / "results" / "reference" / exp.name)
    assert not ok
    assert "sbp" in report and "WORSE" in report


def synthetic(errors_by_run, kevals=(10, 100), **columns):
    """Curves of one solver: a run per list of test errors, a checkpoint per error; ``columns``
    replace the other columns' values (one per checkpoint, the same in every run)."""
    rows = []
    for run, errors in enumerate(errors_by_run):
        for cp, (err, kev) in enumerate(zip(errors, kevals)):
            row = {"solver": "s", "solver_name": "pegasos", "run": run, "checkpoint": cp, "kernel_evals": kev,
                   "kernel_evals_computed": kev, "iteration": cp + 1, "test_error": err, "objective": 1.0,
                   "primal_objective": 2.0}
            rows.append(row | {key: values[cp] for key, values in columns.items()})
    return pd.DataFrame(rows)


def twice(errors):
    """Two runs with the same test errors (as many runs as the synthetic reference)."""
    return [errors, errors]


def found(deviations):
    return [(d.checkpoint, d.column, d.verdict) for d in deviations]


def test_bands_come_from_the_spread_over_seeds_and_both_ways_fail():
    reference = synthetic([[0.30, 0.20], [0.34, 0.24]])  # std 0.02 at each checkpoint
    assert regression.compare(synthetic(twice([0.35, 0.27])), reference) == []  # within 3 std
    assert found(regression.compare(synthetic(twice([0.40, 0.22])), reference)) == [(0, "test_error", "worse")]
    assert found(regression.compare(synthetic(twice([0.20, 0.22])), reference)) == [(0, "test_error", "better")]
    assert found(regression.compare(synthetic(twice([0.32, 0.22]), kevals=(10, 101)), reference)) == [
        (1, "kernel_evals", "differs"), (1, "kernel_evals_computed", "differs")]


def test_a_column_without_spread_keeps_its_floor():
    """Deterministic runs (no spread over seeds): the test error within 0.5 point, an objective within
    0.1% of its magnitude, the counted work exactly."""
    reference = synthetic(twice([0.30, 0.20]))
    assert regression.compare(synthetic(twice([0.304, 0.196]), objective=[1.0009, 0.9991]), reference) == []
    assert found(regression.compare(synthetic(twice([0.30, 0.20]), objective=[1.0011, 1.0]), reference)) == [
        (0, "objective", "worse")]  # pegasos minimizes its objective
    assert found(regression.compare(synthetic(twice([0.30, 0.20]), primal_objective=[2.0, 1.99]), reference)) == [
        (1, "primal_objective", "better")]


@pytest.mark.parametrize("column, values", [("kernel_evals_computed", [10, 99]), ("iteration", [1, 3])])
def test_any_other_count_differs(column, values):
    """Computed kernel evaluations (a cache hit counted as computed) and the iteration at a checkpoint
    (a checkpoint moved by one iteration) must match exactly; the iteration is also the stopping point."""
    reference = synthetic(twice([0.30, 0.20]))
    got = found(regression.compare(synthetic(twice([0.30, 0.20]), **{column: values}), reference))
    assert (1, column, "differs") in got
    assert {(1, "stop (run 0)", "differs"), (1, "stop (run 1)", "differs")} <= set(got) or column != "iteration"


def test_a_run_that_stops_elsewhere_differs():
    reference = synthetic(twice([0.30, 0.20]))
    longer = synthetic([[0.30, 0.20], [0.30, 0.20, 0.20]], kevals=(10, 100, 1000))
    assert found(regression.compare(longer, reference)) == [(-1, "checkpoints", "differs"),
                                                            (1, "stop (run 1)", "differs")]


def test_missing_runs_and_nan_values_are_worse():
    reference = synthetic([[0.30, 0.20], [0.34, 0.24]])
    fewer = regression.compare(synthetic([[0.32, 0.22]]), reference)  # a whole run missing
    assert [(d.checkpoint, d.column, d.reference, d.value, d.verdict) for d in fewer] == [(0, "runs", 2, 1, "differs")]
    cut = synthetic(twice([0.32, 0.22]))
    cut = cut[(cut["run"] == 0) | (cut["checkpoint"] == 0)]  # run 1 stopped after its first checkpoint
    assert found(regression.compare(cut, reference)) == [(1, "runs", "differs"), (1, "stop (run 1)", "differs")]
    nan = float("nan")
    every = regression.compare(synthetic(twice([nan, nan])), reference)
    assert found(every) == [(0, "test_error", "worse"), (1, "test_error", "worse")]
    assert "nan" not in every[0].line() and every[0].line().split()[4:6] == ["n/a", "n/a"]  # new, difference
    one = regression.compare(synthetic([[0.32, 0.22], [0.32, nan]]), reference)  # the other run's mean is fine
    assert found(one) == [(1, "test_error", "worse")]
    objective = synthetic(twice([0.32, 0.22])).assign(objective=nan)
    assert {(d.column, d.verdict) for d in regression.compare(objective, reference)} == {("objective", "worse")}
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


def test_check_cli_fails_on_a_better_curve(tmp_path, monkeypatch, capsys):
    """A better test error is a changed solver too: exit 1, the row says BETTER."""
    reference = ROOT / "results" / "reference" / "ci-adult"
    run_dir = copy_of_reference(tmp_path, lambda c: c.assign(test_error=c["test_error"] - 0.05))
    assert sbpbench(monkeypatch, "check", run_dir, "--reference", reference) == 1
    out = capsys.readouterr().out
    assert "0 worse" in out and "BETTER" in out and "WORSE" not in out


def copy_of_reference(tmp_path, change) -> Path:
    """A run folder holding the ci-adult reference's curves changed by ``change(frame) -> frame``."""
    reference = ROOT / "results" / "reference" / "ci-adult"
    run_dir = tmp_path / "ci-adult" / "run"
    run_dir.mkdir(parents=True)
    change(pd.read_csv(reference / "curves.csv")).to_csv(run_dir / "curves.csv", index=False)
    (run_dir / "meta.json").write_text((reference / "meta.json").read_text())
    return run_dir


@pytest.mark.parametrize("change, column, verdict", [
    (lambda c: c[~((c["solver"] == "sbp") & (c["run"] == c["run"].max()))], "runs", "DIFFERS"),  # a run missing
    (lambda c: c.assign(test_error=float("nan")), "test_error", "WORSE"),
])
def test_check_cli_fails_on_a_missing_run_and_nan_values(tmp_path, monkeypatch, capsys, change, column, verdict):
    reference = ROOT / "results" / "reference" / "ci-adult"
    run_dir = copy_of_reference(tmp_path, change)
    assert sbpbench(monkeypatch, "check", run_dir, "--reference", reference) == 1
    out = capsys.readouterr().out
    assert ": 0 outside" not in out
    assert any(line.split()[2:3] == [column] and line.endswith(verdict) for line in out.splitlines())


@pytest.mark.parametrize("z", ["nan", "inf", "-inf", "-1"])
def test_check_z_must_be_finite_and_not_negative(tmp_path, monkeypatch, capsys, z):
    reference = ROOT / "results" / "reference" / "ci-adult"
    assert sbpbench(monkeypatch, "check", reference, "--reference", reference, "--z", z) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"sbpbench: error: --z {float(z)}: expected a finite number")
    assert sbpbench(monkeypatch, "check", reference, "--reference", reference, "--z", "0") == 0
