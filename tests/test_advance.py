"""Solver.advance: when it reads the clock (the deadline's contract, sbpbench/solvers/base.py)."""

import math
from types import SimpleNamespace

from sbpbench.solvers import base
from tests.problems import adult, build_problem, make_solver


def test_advance_reads_the_clock_before_each_step_only_for_a_finite_deadline(monkeypatch):
    solver = make_solver(build_problem(adult(60), lam=1.0 / 60), "sdca")
    now, reads = [0.0], []

    def clock() -> float:
        reads.append(solver.iteration)
        return now[0]

    monkeypatch.setattr(base, "time", SimpleNamespace(perf_counter=clock))
    solver.advance(10, math.inf, math.inf)  # no clock is past an infinite deadline
    assert (solver.iteration, reads) == (10, [])
    solver.advance(20, math.inf, 1.0)  # before every step, each one before the deadline
    assert solver.iteration == 20 and reads and reads[0] == 10 and reads == sorted(set(reads))
    now[0] = 1.0
    reads.clear()
    solver.advance(30, math.inf, 1.0)  # the clock at the deadline: no step starts
    assert (solver.iteration, reads) == (20, [20])
