"""The committed SBP reproductions are repeatable: today's code gives their first checkpoints bit for bit.

A change to SBP's arithmetic (even only the order of a sum) can flip near-tie decisions of
the water level early in a run, when many responses are tied, and so change every later
iterate: a check on one seed late in a run misses it. This test repeats the start of the
committed runs on full Adult (bundled), without a bias (Figure 2) and with one (the LIBSVM
comparison), with the runner's seeds and the nu recorded in their meta.json.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sbpbench.execution.loop import run_one
from sbpbench.experiment import config
from sbpbench.experiment.assemble import prepare

PAPER = Path(__file__).resolve().parent.parent / "results" / "paper"
CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.mark.parametrize("experiment", ["sbp-figure2-adult", "sbp-libsvm-adult"])
def test_committed_sbp_run_starts_bit_for_bit(experiment):
    folder = PAPER / experiment
    meta = json.loads((folder / "meta.json").read_text())
    nu = meta["resolved"]["problem"]["nu"]
    exp = config.load(CONFIGS / f"{experiment}.yaml",
                      [f"problem.nu={nu!r}", "solvers=[sbp]", "runs=1", "budget.epochs=0.05"])
    rows = pd.DataFrame(run_one(exp, prepare(exp).problem, exp.solvers[0], 0).rows)
    committed = pd.read_csv(next(folder.glob("curves.csv*")))
    committed = committed[(committed["solver"] == "sbp") & (committed["run"] == 0)].reset_index(drop=True)
    checkpoints = len(rows) - 1  # the last row is this short budget's end
    assert checkpoints >= 20
    for column in ("iteration", "kernel_evals", "test_error", "objective", "n_support"):
        assert np.array_equal(rows[column][:checkpoints].to_numpy(), committed[column][:checkpoints].to_numpy()), column
