"""scripts/bench_first_run.py: its "without warm-up" runs have their checkpoints (issue #48: the
runner passes ``warm_up`` a seconds budget, which the script's stand-in did not take, so every such
run failed and the script ended in an ``IndexError``)."""

import sys
from pathlib import Path

import pytest

from sbpbench.execution import loop
from sbpbench.experiment import config
from tests.problems import build_problem

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))  # the scripts import their helper module by name

import bench_first_run  # noqa: E402


def test_a_run_without_warm_up_has_its_first_checkpoint(adult_small):
    exp = config.parse({"name": "t", "dataset": {"name": "adult"}, "problem": {"nu": 0.05},
                        "solvers": ["sbp"], "budget": {"kernel_evals": 2000}}, "t.yaml")
    problem = build_problem(adult_small, nu=0.05)
    result = loop.run_one(exp, problem, exp.solvers[0], 0, warm_ups=bench_first_run.NoWarmUp())
    assert result.summary["status"] == "budget"
    assert bench_first_run.first_time(result) == result.rows[0]["train_time_s"]


def test_a_run_without_checkpoints_ends_the_child_with_its_status():
    failed = loop.RunResult([], {"solver": "sbp", "status": "failed: TypeError: no"})
    with pytest.raises(SystemExit, match="sbp: the run has no checkpoint: failed: TypeError: no"):
        bench_first_run.first_time(failed)
