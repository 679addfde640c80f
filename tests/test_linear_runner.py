"""Linear solvers through the runner: unknown kernel counts, predict hook, divergence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sbpbench.data import load
from sbpbench.execution.loop import run_one, run_rng
from sbpbench.experiment.assemble import resolve
from sbpbench.experiment.config import parse
from sbpbench.problem import Problem
from sbpbench.solvers import SOLVERS
from tests.problems import SHARED

DATA = SHARED / "adult"


@pytest.fixture(scope="module")
def experiment():
    if not (DATA / "a9a").is_file():
        pytest.skip("shared datasets not available")
    doc = {
        "dataset": {"path": str(DATA / "a9a"), "test_path": str(DATA / "a9a.t"), "n_features": 123,
                    "n_train": 800, "n_test": 800},
        "kernel": {"name": "linear"},
        "problem": {"C": 1},
        "solvers": [{"name": "sgd", "eta": 1e6, "label": "sgd-huge"}, "sgd-s", "dcd", "liblinear",
                    "pegasos"],
        "budget": {"epochs": 5},
    }
    exp = parse(doc, "linear.yaml")
    train, test = load(exp.dataset, np.random.default_rng(0))
    resolved = resolve(exp, train.n)
    problem = Problem.build(train, test, exp.kernel, resolved["lambda"], exp.nu, exp.bias)
    return exp, problem


def test_runs_with_unknown_kernel_counts_and_a_divergent_solver(experiment):
    exp, problem = experiment
    results = {spec.label: run_one(exp, problem, spec, 0) for spec in exp.solvers}
    huge = results["sgd-huge"]
    assert huge.summary["status"] == "diverged"
    assert huge.rows and all(math.isfinite(r["objective"]) for r in huge.rows)
    for label in ("sgd-s", "dcd", "liblinear", "pegasos"):
        result = results[label]
        assert result.summary["status"] in ("done", "budget"), result.summary
        assert len(result.rows) > (0 if label == "liblinear" else 3)  # one fit may pass the budget
        for row in result.rows:
            assert math.isnan(row["kernel_evals"]) and row["eval_kernel_evals"] == 0
            assert 0 <= row["test_error"] <= 1
        assert result.rows[-1]["test_error"] < 0.25
    # log checkpoints in iterations, then epoch ends; SGD-s measures at pass ends only
    assert [r["iteration"] for r in results["sgd-s"].rows] == [800 * k for k in range(1, 6)]
    assert results["pegasos"].rows[0]["iteration"] == 1
    assert "dual_objective" in results["dcd"].rows[-1] and "tol" in results["liblinear"].rows[-1]


def test_test_error_uses_the_primal_predictor(experiment):
    exp, problem = experiment
    spec = next(s for s in exp.solvers if s.name == "dcd")
    row = run_one(exp, problem, spec, 0).rows[-1]
    solver = SOLVERS["dcd"](problem, run_rng(exp.seed, 0, "dcd"))
    while solver.iteration < row["iteration"] and not solver.advance(row["iteration"], np.inf, np.inf):
        pass
    w = solver.w
    assert row["test_error"] == np.mean(problem.test_y * (problem.test_X @ w) <= 0)
