"""Honest timing: no numba compilation starts inside a run's timed region (issue #13).

The warm-up that compiles a run's code before its clock starts changes nothing else, and runs
once per process for each kind of run. The subprocess tests start fresh Python processes with
an empty numba cache (``NUMBA_CACHE_DIR`` in ``tmp_path``), so each compiled function a run
calls is compiled in them, and record numba's compile events with the timed region marked
(:mod:`tests._compile_watch`, installed by a ``sitecustomize.py`` on ``PYTHONPATH`` in every
process, spawned workers included). A run must compile nothing inside its clock, and the
processes must have compiled something outside it (else the test could not fail). No
duration is measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sbpbench.execution import loop
from sbpbench.experiment import config
from sbpbench.kernels import Kernel
from sbpbench.kernels import kernel as kernel_module
from sbpbench.problem import Problem
from tests.experiments import write_adult_config
from tests.problems import build_problem

ROOT = Path(__file__).resolve().parents[1]



#: A guard against a hung child, not a time limit: every solver compiled cold takes about two minutes
#: on a quiet core, and over five when the machine is shared with other work.
HUNG = 1800


def watched(tmp_path: Path, args: list[str]) -> list[tuple[str, str, str]]:
    """Run ``python ARGS`` under the compile watch with an empty numba cache; its compilations
    as ``(timed|untimed, main|worker, function)``, from every process it started."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("from tests._compile_watch import install\n\ninstall()\n")
    events = tmp_path / "events"
    events.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "COMPILE_EVENTS": str(events)}
    done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=HUNG)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    lines = [line.split(" ", 2) for log in events.iterdir() for line in log.read_text().splitlines()]
    return [(when, role, name) for when, role, name in lines]


@pytest.mark.slow  # every solver compiled from an empty numba cache: minutes of a core
def test_no_compilation_inside_the_clock_of_any_solver(tmp_path):
    compiled = watched(tmp_path, ["-c", "from tests._compile_watch import run_everything; run_everything()"])
    assert [name for when, _, name in compiled if when == "timed"] == []
    assert len(compiled) > 50  # the runs did compile, before their clocks started


@pytest.mark.slow  # two workers compile SBP and SMO from an empty numba cache
@pytest.mark.parametrize("executor", ["processes", "dask"])
def test_no_compilation_inside_the_clock_in_workers(tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("dask.distributed")
    config = write_adult_config(tmp_path, "timing", n_test=100, problem={"lambda": "1/n", "nu": 0.05, "bias": True},
                                solvers=["sbp", {"name": "smo", "shrinking": True}], budget={"epochs": 2})
    compiled = watched(tmp_path, ["-m", "sbpbench", "run", str(config), "--executor", executor, "--jobs", "2",
                                  "--results", str(tmp_path / "results"), "--no-plot", "-q"])
    assert [name for when, _, name in compiled if when == "timed"] == []
    assert any(when == "untimed" and role == "worker" for when, role, _ in compiled)
    (run,) = (tmp_path / "results" / "timing").iterdir()
    assert (run / "curves.csv").stat().st_size > 0


class NoWarmUp(loop.WarmUps):
    """A record that has warmed up everything: the runner as it was without warm-up."""

    def warm_up(self, problem, spec, seconds=float("inf"), notice=None):
        return None


def test_warm_up_changes_nothing_but_the_clock_and_happens_once(monkeypatch, adult_small):
    subsets = []
    subset = Problem.subset
    monkeypatch.setattr(Problem, "subset", lambda self, *rows: subsets.append(1) or subset(self, *rows))
    exp = config.parse({"name": "t", "dataset": {"name": "adult"}, "problem": {"lambda": "1/n", "bias": True},
                        "solvers": [{"name": "smo", "shrinking": True}, "smo"], "budget": {"epochs": 2}}, "t.yaml")
    problem = build_problem(adult_small, lam=1 / 300, bias=True, cache_mb=1.0)
    kernel = problem.kernel
    kernel.row(4)
    state = (kernel.kernel_evals, kernel.kernel_evals_computed, kernel.eval_kernel_evals, list(kernel._cache))
    warm_ups = loop.WarmUps()
    warm_ups.warm_up(problem, exp.solvers[0])
    assert (kernel.kernel_evals, kernel.kernel_evals_computed, kernel.eval_kernel_evals,
            list(kernel._cache)) == state  # the run's problem is not touched
    first = loop.run_one(exp, problem, exp.solvers[0], 0, warm_ups=warm_ups).rows  # no second warm-up for the kind
    assert len(subsets) == 1
    loop.run_one(exp, problem, exp.solvers[1], 0, warm_ups=warm_ups)  # other parameters: a warm-up of their own
    assert len(subsets) == 2
    again = loop.run_one(exp, problem, exp.solvers[0], 0).rows  # no record given: warmed up in this call
    assert len(subsets) == 3
    unwarmed = loop.run_one(exp, problem, exp.solvers[0], 0, warm_ups=NoWarmUp()).rows  # a run without warm-up
    assert len(subsets) == 3
    untimed = [{k: v for k, v in row.items() if k != "train_time_s"} for row in first]
    for rows in (again, unwarmed):
        assert untimed == [{k: v for k, v in row.items() if k != "train_time_s"} for row in rows]



@pytest.mark.parametrize(("kernel", "solver", "loads"), [("linear", "dcd", False), ("gaussian", "pegasos", True)])
def test_the_kernel_row_loops_are_loaded_by_the_warm_up_of_a_solver_that_reads_rows(monkeypatch, adult_small,
                                                                                    kernel, solver, loads):
    """Issue #48: a kernel computes no row when it is made, so that a run that reads none (a linear
    solver's, which counts no kernel evaluations) loads none of its compiled row loops; a kernel
    solver's warm-up loads the threaded loop of the full rows its small run computed on the run's
    own kernel (whose rows are split over threads here), once, before any clock starts."""
    computed = []
    compute = Kernel._compute
    monkeypatch.setattr(Kernel, "_compute", lambda self, *args: computed.append((self, args)) or compute(self, *args))
    monkeypatch.setattr(kernel_module, "PARALLEL_MIN_WORK", 0)
    problem = build_problem(adult_small, kernel=kernel, lam=1 / 300)
    assert computed == []  # nothing computed when the kernel is made
    spec = config.parse({"name": "t", "dataset": {"name": "adult"}, "kernel": {"name": kernel},
                         "problem": {"lambda": "1/n"}, "solvers": [solver], "budget": {"epochs": 1}},
                        "t.yaml").solvers[0]
    warm_ups = loop.WarmUps()
    warm_ups.warm_up(problem, spec)
    own = [args for k, args in computed if k is problem.kernel]
    full_rows = [(0, True, False), (0, True, True)]  # a full row, on one thread and threaded
    assert [(i, idx is problem.kernel._all, parallel) for i, idx, parallel in own] == (full_rows if loads else [])
    before = len(computed)
    warm_ups.warm_up(problem, spec)  # warmed up for this kind of run: nothing again
    assert len(computed) == before

#: A fresh process's run of SBP (``--set``-free: the problem is built here) with the warm-up
#: (``warm``) or without (``lazy``: each function compiles on its first call, so it compiles
#: what the run calls and nothing else, the kernel's row loops included: its rows are on one
#: thread, so a lazy run's forms do not depend on which of two loops was faster at the time);
#: prints every signature the package's dispatchers hold.
SIGNATURES_OF_A_RUN = """
import gc, sys
from numba.core.dispatcher import Dispatcher
from sbpbench.execution import loop
from sbpbench.experiment import config
from sbpbench.experiment.assemble import prepare
from tests.experiments import adult_config

if sys.argv[1] == "lazy":
    loop.WarmUps.warm_up = lambda self, problem, spec, seconds=0.0, notice=None: None
exp = config.parse(adult_config(n_train=1000, kernel={"name": "gaussian", "sigma2": 10, "cache_mb": float(sys.argv[2])},
                                solvers=["sbp"], budget={"epochs": 3}), "signatures.yaml")
problem = prepare(exp).problem
assert not problem.kernel._row_parallel
status = loop.run_one(exp, problem, exp.solvers[0], 0).summary["status"]
assert status == "budget", status
for found in gc.get_objects():
    if isinstance(found, Dispatcher) and found.py_func.__module__.startswith("sbpbench."):
        for signature in found.signatures:
            print(found.py_func.__module__, found.py_func.__qualname__, signature)
"""


@pytest.mark.slow  # four processes compile SBP from an empty numba cache: a minute of a core
@pytest.mark.parametrize("cache_mb", [256.0, 0.004])  # rows served from the cache; block sources (1000 > 524)
def test_warm_up_compiles_only_what_the_run_calls(tmp_path, cache_mb):
    """Issue #48: the warm-up compiled SBP's iteration for both forms of row (block sources on a
    problem whose kernel hands out rows, and the reverse) and, inside its one-thread iteration,
    its threaded pass, and the kernel's serial full-row and one-entry bit-set loops, which an
    SBP run never calls: seconds of compilation a run never used. With the warm-up, a run holds
    exactly the compiled forms the same run compiles lazily without it, the kernel's included."""
    found = {}
    for how in ("warm", "lazy"):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path / how),
               "NUMBA_NUM_THREADS": "1"}
        done = subprocess.run([sys.executable, "-c", SIGNATURES_OF_A_RUN, how, str(cache_mb)], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        found[how] = set(done.stdout.splitlines())
    assert found["warm"] == found["lazy"]
    iterations = [line for line in found["warm"] if " _serial_iteration " in line]
    assert len(iterations) == 1  # one form of row
    assert ("Tuple(" in iterations[0]) == (cache_mb < 1)  # block sources exactly when rows outgrow the cache
    assert not any("update_and_window_parallel" in line for line in found["warm"])
