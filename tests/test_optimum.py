"""nu from lambda: the exact optimum, its disk cache, the config key and meta.json."""

import json
import logging
import math

import numpy as np
import pytest

from sbpbench.data.cache import cache_dir
from sbpbench.errors import UserError
from sbpbench.execution.sweep import run_experiment
from sbpbench.experiment.config import NuFromLambda, parse
from sbpbench.experiment.optimum import expected_duration, optimum
from tests.exact import biased_optimum, gram, unbiased_optimum
from tests.problems import SHARED, real_problem

DATASET = {"name": "test-subsample"}


def _nu(problem, alpha, b=0.0):
    y = problem.y
    q = y * (gram(problem) @ (alpha * y))
    return float(np.maximum(0.0, 1.0 - q - y * b).mean()) / math.sqrt(alpha @ q)


@pytest.mark.parametrize("bias", [False, True])
def test_nu_matches_independent_optimum_and_is_cached(tmp_path, bias, caplog, capsys):
    problem = real_problem("adult", 300, bias=bias)
    with caplog.at_level(logging.INFO, logger="sbpbench"):
        first = optimum(problem, DATASET, 0, root=tmp_path)
    # minutes on full data: say so, through logging (the command line shows it), not on stderr
    assert [r.name for r in caplog.records] == ["sbpbench.experiment.optimum"]
    assert "computing the exact optimum" in caplog.records[0].getMessage()
    assert "(300 examples, SMO to eps 1e-06, under a minute at a guess)" in caplog.records[0].getMessage()
    caplog.clear()
    capsys.readouterr()  # where a command line ran in this process, its handler echoed the note
    assert problem.kernel.kernel_evals > 0 and first["kernel_evals"] == problem.kernel.kernel_evals
    files = list((tmp_path / "optima").glob("*.json"))
    assert len(files) == 1 and str(files[0]) == first["cache_file"]

    if bias:
        alpha, b, primal, _ = biased_optimum(problem)
        assert first["b"] == pytest.approx(b, abs=1e-4)
    else:
        alpha, primal, _ = unbiased_optimum(problem)
        b = 0.0
    assert first["nu"] == pytest.approx(_nu(problem, alpha, b), rel=1e-3)
    assert first["objective"] == pytest.approx(primal, rel=1e-6)
    assert first["objective"] == pytest.approx(0.5 * problem.lam * first["norm"] ** 2 + first["mean_hinge"])
    assert 0 <= first["test_error"] <= 1

    problem.kernel.reset()
    with caplog.at_level(logging.INFO, logger="sbpbench"):
        second = optimum(problem, DATASET, 0, root=tmp_path)
    assert problem.kernel.kernel_evals == 0  # read from disk: no SMO work
    assert second == first
    assert caplog.records == [] and capsys.readouterr().err == ""  # nothing to wait for: no note


def test_cache_key_separates_problems(tmp_path):
    problem = real_problem("adult", 200, bias=False)
    a = optimum(problem, DATASET, 0, root=tmp_path)
    problem.lam *= 2
    b = optimum(problem, DATASET, 0, root=tmp_path)
    c = optimum(real_problem("adult", 200, bias=False, seed=1), DATASET, 0, root=tmp_path)
    assert len({a["cache_file"], b["cache_file"], c["cache_file"]}) == 3
    assert a["nu"] != b["nu"]


def test_data_root_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("SBPBENCH_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # platformdirs' rule on Linux
    monkeypatch.chdir(tmp_path)
    assert cache_dir() == tmp_path / "xdg" / "sbpbench"  # not ./datasets: the same from every folder


def _config(nu, solvers=("sbp",), lam="1/n"):
    a9a = SHARED / "adult" / "a9a"
    if not a9a.is_file():
        pytest.skip("real data not available")
    problem = {"nu": nu, "bias": False}
    if lam is not None:
        problem["lambda"] = lam
    return parse({
        "dataset": {"path": str(a9a), "test_path": str(SHARED / "adult" / "a9a.t"), "n_features": 123,
                    "n_train": 300, "n_test": 300},
        "kernel": {"name": "gaussian", "sigma2": 10},
        "problem": problem,
        "solvers": list(solvers),
        "budget": {"epochs": 1},
    }, "t.yaml")


def test_config_accepts_from_lambda_and_rejects_other_strings():
    assert isinstance(_config("from_lambda").nu, NuFromLambda)
    assert _config(0.01).nu == 0.01
    with pytest.raises(UserError, match=r"t.yaml: key 'problem.nu': expected a number in \[0, 1\] or 'from_lambda'"):
        _config("from_lamda")
    with pytest.raises(UserError, match=r"key 'problem.nu': 'from_lambda' needs problem.lambda"):
        _config("from_lambda", lam=None)


def test_run_experiment_writes_derived_nu_to_meta(monkeypatch, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path / "data"))
    exp = _config("from_lambda", solvers=("sbp", "smo"))
    meta = json.loads((run_experiment(exp, tmp_path / "results") / "meta.json").read_text())
    resolved = meta["resolved"]["problem"]
    opt = resolved["optimum"]
    assert resolved["nu_expression"] == "from_lambda"
    assert resolved["nu"] == opt["nu"] > 0
    for key in ("objective", "norm", "test_error", "mean_hinge"):
        assert isinstance(opt[key], float)
    assert list((tmp_path / "data" / "optima").glob("*.json"))
    assert [r["status"] for r in meta["runs"]] == ["budget", "budget"]  # both ran (1 epoch)


def test_the_note_guesses_the_duration_from_a_measured_solve():
    assert [expected_duration(n) for n in (1000, 32_561, 65_122)] == ["under a minute", "about 4 min", "about 16 min"]
