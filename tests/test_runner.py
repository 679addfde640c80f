"""The runner: checkpoints, counters kept apart, budgets, statuses, determinism."""

import math

import numpy as np
import pytest

from sbpbench.data import DatasetSpec
from sbpbench.execution import loop as runner
from sbpbench.experiment.config import Budget, Checkpoints, Experiment, SolverSpec
from sbpbench.kernels import KernelSpec
from sbpbench.solvers import SOLVERS, Snapshot, Solver
from tests.problems import build_problem


def experiment(budget=None, per_decade=10, solvers=("sbp",)):
    return Experiment(
        name="t", dataset=DatasetSpec(name="adult", n_train=100, n_test=200), kernel=KernelSpec("gaussian", 10.0, 0),
        lam=0.01, nu=0.05, bias=False, solvers=tuple(SolverSpec(s, {}, s) for s in solvers),
        budget=budget or Budget(epochs=2),
        checkpoints=Checkpoints(per_decade, True), runs=1, seed=0,
    )


@pytest.fixture(scope="module")
def problem(adult_small):
    train, test = adult_small
    return build_problem((train.take(np.arange(100)), test.take(np.arange(200))), lam=0.01, nu=0.05)


def run(problem, exp, name="sbp", index=0):
    return runner.run_one(exp, problem, SolverSpec(name, {}, name), index)


def test_checkpoints_are_log_spaced_plus_epoch_ends(problem):
    result = run(problem, experiment())
    rows = result.rows
    iterations = [r["iteration"] for r in rows]
    kevals = [r["kernel_evals"] for r in rows]
    assert result.summary["status"] == "budget"
    assert iterations[-1] == 200 and 100 in iterations
    assert all(k == 100 * it for k, it in zip(kevals, iterations))  # SBP's cost model
    assert kevals == sorted(set(kevals))
    # every log target 10^(j/10) up to the end has a checkpoint at the first iteration reaching it
    for j in range(0, 44):
        target = 10 ** (j / 10)
        first = 100 * math.ceil(target / 100)
        assert first in kevals
    assert [r["checkpoint"] for r in rows] == list(range(len(rows)))


def test_epoch_ends_are_checkpoints_on_a_size_no_power_of_ten(adult_small):
    """With n = 123 no log target falls on an epoch's end: the checkpoints there are the epoch's own."""
    train, test = adult_small
    odd = build_problem((train.take(np.arange(123)), test.take(np.arange(50))), lam=0.01, nu=0.05)
    rows = run(odd, experiment(Budget(epochs=3))).rows
    ends = [(r["iteration"], r["epoch"]) for r in rows if r["iteration"] % 123 == 0]
    assert ends == [(123, 1.0), (246, 2.0), (369, 3.0)]
    assert [r["kernel_evals"] for r in rows] == [123 * r["iteration"] for r in rows]


def test_a_zero_decision_value_is_an_error(problem):
    """The test error counts y f(x) <= 0 (docs/results.md): a point on the decision boundary is
    misclassified whichever its label, through the kernel expansion and through ``predict``."""
    nothing = Snapshot(support=np.zeros(0, dtype=np.int64), coef=np.zeros(0))  # f = 0 everywhere
    assert nothing.test_measures(problem) == {"test_error": 1.0, "test_hinge_loss": 1.0}
    y = problem.test_y
    half = np.where(np.arange(y.size) % 2 == 0, 0.0, 2.0 * y)  # every other point exactly on the boundary
    measured = Snapshot(support=np.zeros(0, dtype=np.int64), coef=np.zeros(0), predict=lambda X: half)
    assert measured.test_measures(problem) == {"test_error": 0.5, "test_hinge_loss": 0.5}


def test_measurement_is_kept_out_of_training_counters(problem):
    rows = run(problem, experiment()).rows
    assert rows[-1]["eval_kernel_evals"] > 0
    assert rows[-1]["kernel_evals"] == 100 * rows[-1]["iteration"]
    assert all(0 <= r["test_error"] <= 1 for r in rows)


def test_test_hinge_loss_is_measured_with_the_test_error_in_one_evaluation(problem, adult_small):
    """Brute force: f on the test points from the snapshot's coefficients and an explicit Gaussian kernel."""
    solver = SOLVERS["pegasos"](problem, np.random.default_rng(0))
    solver.advance(150, math.inf, math.inf)
    snap = solver.snapshot()
    train, test = adult_small
    X, Z = (np.asarray(s.X[:k].todense()) for s, k in ((train, 100), (test, 200)))
    gram = np.exp(-((Z[:, None, :] - X[None, snap.support, :]) ** 2).sum(-1) / (2 * 10.0))
    margins = problem.test_y * (gram @ snap.coef + snap.bias)
    before = problem.kernel.eval_kernel_evals
    measured = snap.test_measures(problem)
    assert problem.kernel.eval_kernel_evals - before == 200 * snap.n_support  # f evaluated once
    assert measured["test_error"] == pytest.approx(np.mean(margins <= 0))
    assert measured["test_hinge_loss"] == pytest.approx(np.mean(np.maximum(0, 1 - margins)))
    assert measured["test_hinge_loss"] > 0
    rows = run(problem, experiment(solvers=("pegasos",)), "pegasos").rows
    assert all(r["test_hinge_loss"] >= r["test_error"] for r in rows)  # hinge >= 0/1 loss pointwise


def test_progress_reports_a_solvers_own_end(problem, monkeypatch):
    """A solver that ends itself (random Fourier features) reports its share, not the unreached budget's."""
    exp = experiment(budget=Budget(epochs=1000), solvers=("fourier",))
    for max_pairs in (8, 12):  # 12: the last set has 8 pairs
        seen: list[float] = []
        runner.run_one(exp, problem, SolverSpec("fourier", {"max_pairs": max_pairs}, "fourier"), 0,
                       progress=lambda fraction, row, seen=seen: seen.append(fraction))
        assert seen == [1 / 8, 2 / 8, 4 / 8, 8 / 8]


def test_same_seed_same_curve_independent_of_order(problem):
    exp = experiment(solvers=("sbp", "pegasos"))
    first = run(problem, exp, "pegasos").rows
    run(problem, exp, "sbp")
    again = run(problem, exp, "pegasos").rows
    strip = lambda rows: [{k: v for k, v in r.items() if k != "train_time_s"} for r in rows]  # noqa: E731
    assert strip(first) == strip(again)
    other_run = run(problem, exp, "pegasos", index=1).rows
    assert strip(other_run) != strip(first)


def test_kernel_evaluation_budget(problem):
    result = run(problem, experiment(Budget(epochs=None, kernel_evals=1234)))
    assert result.rows[-1]["kernel_evals"] == 1300
    assert result.summary["status"] == "budget"


def test_seconds_budget(problem):
    result = run(problem, experiment(Budget(epochs=None, seconds=0.05)))
    assert result.summary["status"] == "budget"
    assert all(row["train_time_s"] < 0.05 for row in result.rows[:-1])  # no checkpoint after the budget was spent
    # the last step ends at the deadline it is given: milliseconds past it, with room for a loaded
    # machine (without the budget this run would never end)
    assert result.rows[-1]["train_time_s"] < 10


def test_target_test_error_ends_with_done(problem):
    result = run(problem, experiment(Budget(epochs=5, test_error=0.5)))
    assert result.summary["status"] == "done"
    assert result.rows[-1]["test_error"] <= 0.5


class Faulty(Solver):
    """A solver that breaks on purpose: raises, or returns NaN after two checkpoints."""

    name = "faulty"
    mode = "raise"

    def advance(self, max_iterations, max_kernel_evals, deadline):
        self.iteration += 1  # one iteration per checkpoint, whatever the limits
        if self.mode == "raise" and self.iteration > 1:
            raise RuntimeError("boom")
        return False

    def snapshot(self):
        value = math.nan if self.iteration > 2 else 1.0
        return Snapshot(np.array([0]), np.array([1.0]), objective=value)


@pytest.mark.parametrize("mode,status", [("raise", "failed: RuntimeError: boom"), ("nan", "diverged")])
def test_failures_end_the_run_with_a_status(problem, monkeypatch, mode, status):
    monkeypatch.setitem(SOLVERS, "faulty", type("F", (Faulty,), {"mode": mode}))
    result = run(problem, experiment(), "faulty")
    assert result.summary["status"] == status
    assert len(result.rows) >= 1
    assert all(np.isfinite(r["objective"]) for r in result.rows)


def test_next_log_target():
    assert runner.next_log_target(0, 10) == 1.0
    assert runner.next_log_target(1, 10) == pytest.approx(10**0.1)
    assert runner.next_log_target(100, 10) == pytest.approx(10**2.1)
    assert runner.next_log_target(99.99, 1) == pytest.approx(100)


def test_target_primal_objective_ends_with_done_at_the_first_checkpoint_below_it(problem):
    """A speed run's target: the run stops at the first checkpoint whose primal objective is at or
    below the bound, and not before."""
    free = run(problem, experiment(Budget(epochs=2)), name="pegasos").rows
    bound = free[len(free) // 2]["primal_objective"]
    first = next(i for i, row in enumerate(free) if row["primal_objective"] <= bound)
    result = run(problem, experiment(Budget(epochs=2, primal_objective=bound)), name="pegasos")
    assert result.summary["status"] == "done"
    assert len(result.rows) == first + 1
    assert result.rows[-1]["primal_objective"] <= bound < min(r["primal_objective"] for r in result.rows[:-1])
