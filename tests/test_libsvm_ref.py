"""The LIBSVM reference: schedule, agreement with scikit-learn, unknown kernel counts, bias only."""

import math

import numpy as np
import pytest
from sklearn.svm import SVC

from sbpbench.errors import UserError
from sbpbench.execution.loop import run_one
from sbpbench.experiment.assemble import prepare
from sbpbench.experiment.config import parse
from sbpbench.solvers.libsvm_ref import LibSVMParams, LibSVMReference, tolerance_schedule
from tests.exact import biased_optimum
from tests.problems import SHARED, build_problem, real_problem, real_split


def test_tolerance_schedule():
    assert tolerance_schedule(1e-3) == pytest.approx([1, 10**-0.5, 0.1, 10**-1.5, 0.01, 10**-2.5, 1e-3])
    assert tolerance_schedule(0.05) == pytest.approx([1, 10**-0.5, 0.1, 0.05])
    assert tolerance_schedule(2.0) == [2.0]


@pytest.mark.parametrize("name", ["adult", "w8a"])
def test_one_fit_per_advance_and_snapshot_is_the_fitted_svc(name):
    problem = real_problem(name, 400, bias=True, cache_mb=16)
    ref = LibSVMReference(problem, np.random.default_rng(0), LibSVMParams(final_tol=1e-8))
    calls = 0
    while not ref.advance(math.inf, math.inf, math.inf):
        calls += 1
        assert ref.iteration == calls
    assert ref.iteration == len(ref.tols) == calls + 1
    snap = ref.snapshot()
    assert problem.kernel.kernel_evals == problem.kernel.kernel_evals_computed == 0  # measurement only
    # our kernel's decision values equal scikit-learn's for the same model
    svc = ref.model
    ours = problem.kernel.decision(problem.test_X, snap.support, snap.coef, snap.bias)
    np.testing.assert_allclose(ours, svc.decision_function(problem.test_X), atol=1e-9)
    # and the final objectives are the independent optimum's (LIBSVM at tol 1e-8, no shrinking)
    _, b_ref, primal_ref, dual_ref = biased_optimum(problem)
    assert snap.primal_objective == pytest.approx(primal_ref, rel=1e-4)
    assert snap.extra["dual_objective"] == pytest.approx(dual_ref, rel=1e-6)
    assert snap.bias == pytest.approx(b_ref, abs=1e-4)
    assert 0 <= snap.extra["duality_gap"] < 1e-4 * dual_ref
    assert snap.extra["tol"] == 1e-8


def _config(bias, solvers):
    a9a = SHARED / "adult" / "a9a"
    if not a9a.is_file():
        pytest.skip("real data not available")
    return parse({
        "dataset": {"path": str(a9a), "test_path": str(SHARED / "adult" / "a9a.t"), "n_features": 123,
                    "n_train": 300, "n_test": 300},
        "kernel": {"name": "gaussian", "sigma2": 10},
        "problem": {"lambda": "1/n", "bias": bias},
        "solvers": solvers,
        "budget": {"epochs": 1},
    }, "t.yaml")


def test_config_requires_the_biased_problem():
    with pytest.raises(UserError, match=r"t.yaml: key 'solvers\[0\].name'.*only the biased problem"):
        _config(False, ["libsvm"])
    assert _config(True, [{"name": "libsvm", "final_tol": 0.01}]).solvers[0].params == {"final_tol": 0.01}


def test_runner_writes_unknown_kernel_evals_and_one_point_per_tolerance():
    exp = _config(True, [{"name": "libsvm", "final_tol": 0.01}])
    problem = prepare(exp).problem
    result = run_one(exp, problem, exp.solvers[0], 0)
    assert result.summary["status"] == "done"
    assert [r["tol"] for r in result.rows] == pytest.approx(tolerance_schedule(0.01))
    assert all(math.isnan(r["kernel_evals"]) and math.isnan(r["kernel_evals_computed"]) for r in result.rows)
    times = [r["train_time_s"] for r in result.rows]
    assert times == sorted(times) and all(r["fit_time_s"] > 0 for r in result.rows)
    # the last model is LIBSVM's at tol 0.01
    svc = SVC(C=1.0, kernel="rbf", gamma=0.05, tol=0.01).fit(problem.kernel.X, problem.y)
    assert result.rows[-1]["n_support"] == svc.support_.size


def test_linear_kernel_option():
    problem = build_problem(real_split("w8a", 300), kernel="linear", sigma2=1.0, lam=1 / 300, bias=True, cache_mb=16)
    ref = LibSVMReference(problem, np.random.default_rng(0), LibSVMParams(final_tol=0.1))
    while not ref.advance(math.inf, math.inf, math.inf):
        pass
    assert ref.model.kernel == "linear"
    snap = ref.snapshot()
    ours = problem.kernel.decision(problem.test_X, snap.support, snap.coef, snap.bias)
    np.testing.assert_allclose(ours, ref.model.decision_function(problem.test_X), atol=1e-9)
