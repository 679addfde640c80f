"""SvmSgd and SGD-QN visit the examples in the order of SGD-m's first permutation, every epoch.

The SGD paper (before Table 8) gave them "the dataset produced by SGD-m as a result of the
first random permutation": through the runner, for the same experiment seed and run, the
order they present equals the permutation SGD-m's first pass presents, and they draw nothing
else.
"""

from __future__ import annotations

import numpy as np
import pytest

from sbpbench.execution import loop
from sbpbench.experiment.assemble import prepare
from sbpbench.experiment.config import parse
from sbpbench.solvers import SOLVERS
from sbpbench.solvers.fixed_order import FixedOrderSGD
from sbpbench.solvers.sgd_revisited import SGDM

N = 300


@pytest.fixture(scope="module")
def experiment():
    exp = parse({"name": "order", "dataset": {"name": "adult", "n_train": N, "n_test": 50},
                 "kernel": {"name": "linear"}, "problem": {"C": 1}, "seed": 5,
                 "solvers": [{"name": "sgd-m", "target_accuracy": 0.0}, "svmsgd",
                             {"name": "sgdqn", "precision": "single"}],
                 "budget": {"epochs": 2}}, "order.yaml")
    return exp, prepare(exp).problem


def _presented(monkeypatch, cls, method: str, argument: int) -> list[np.ndarray]:
    """Record argument ``argument`` of every call of ``cls.method`` (the examples it presents)."""
    calls: list[np.ndarray] = []
    original = getattr(cls, method)

    def recording(self, *args):
        calls.append(np.array(args[argument]))
        return original(self, *args)

    monkeypatch.setattr(cls, method, recording)
    return calls


@pytest.mark.parametrize("run", [0, 3])
def test_order_is_sgd_m_first_permutation(experiment, monkeypatch, run):
    exp, problem = experiment
    sgd_m, fixed = exp.solvers[0], exp.solvers[1:]
    warm_ups = loop.WarmUps()
    for spec in exp.solvers:
        warm_ups.warm_up(problem, spec)  # so that the records below hold the runs only
    passes = _presented(monkeypatch, SGDM, "_present", 0)
    assert loop.run_one(exp, problem, sgd_m, run, warm_ups=warm_ups).summary["status"] == "budget"
    first_permutation = passes[0]
    assert len(passes) == 2 and not np.array_equal(passes[0], passes[1])  # SGD-m reshuffles
    assert sorted(first_permutation) == list(range(N))
    for spec in fixed:
        presented = _presented(monkeypatch, SOLVERS[spec.name], "train", 0)
        assert loop.run_one(exp, problem, spec, run, warm_ups=warm_ups).summary["status"] == "budget"
        epochs = np.concatenate(presented).reshape(2, N)
        assert np.array_equal(epochs[0], first_permutation) and np.array_equal(epochs[1], first_permutation)


def test_the_permutation_is_drawn_when_made_and_nothing_else_is_drawn(experiment):
    exp, problem = experiment
    for name in ("svmsgd", "sgdqn"):
        rng = loop.run_rng(exp.seed, 0, loop.stream_of(name))
        solver = SOLVERS[name].create(problem, rng, SOLVERS[name].Params())
        state = rng.bit_generator.state
        solver.advance(3 * N, np.inf, np.inf)
        assert rng.bit_generator.state == state  # the order, drawn in __init__, is all it draws
        assert np.array_equal(solver.order, loop.run_rng(exp.seed, 0, "sgd-m").permutation(N))
        assert isinstance(solver, FixedOrderSGD)


def test_streams():
    assert loop.stream_of("svmsgd") == loop.stream_of("sgdqn") == loop.stream_of("sgd-m") == "sgd-m"
    assert loop.stream_of("sgd-s") == "sgd-s" and loop.stream_of("dcd") == "dcd"
    assert all(cls.random_stream is None or cls.random_stream in SOLVERS for cls in SOLVERS.values())


def test_a_run_records_the_stream_each_solver_draws_from(tmp_path):
    """meta.json's ``solver_streams``: SvmSgd and SGD-QN draw from SGD-m's, the others from their own
    (the SGD paper's settings row reads it)."""
    import json

    from tests.experiments import run_sequentially, write_adult_config

    path = write_adult_config(tmp_path, kernel={"name": "linear"}, problem={"C": 1}, runs=1,
                              solvers=["svmsgd", {"name": "sgd-m", "target_accuracy": 0.1}, "dcd"])
    folder = run_sequentially(path, tmp_path / "results")
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["solver_streams"] == {"svmsgd": "sgd-m", "sgd-m": "sgd-m", "dcd": "dcd"}
