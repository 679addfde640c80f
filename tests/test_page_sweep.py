"""The page of a large sweep stays small and readable: the best entries drawn, every entry listed
(:func:`sbpbench.outputs.page.drawn_entries`)."""

from __future__ import annotations

import html
import json
import re

from sbpbench.outputs.page import DRAWN, render_page
from sbpbench.results.store import curves_frame

#: Entries of the synthetic sweep, as in the issue's (1000 entries of 45 ms runs).
ENTRIES = 1000
#: The page of such a sweep stays under this many bytes (it was 7.7 MB before the best were chosen).
MAX_BYTES = 1_500_000
#: Checkpoints of each run.
CHECKPOINTS = 8


def entry_label(i: int) -> str:
    return f"sbp<eta0={i}>"  # a label that needs escaping in the page


def final_error(i: int) -> float:
    """The entries' final test errors: all different, the lowest neither first nor last in the file."""
    return 0.1 + ((i * 7919) % ENTRIES) / (4 * ENTRIES)


def sweep() -> tuple[list[dict], dict]:
    """Rows and ``meta.json`` of a sweep of :data:`ENTRIES` entries, one run each (no solver run)."""
    rows, runs, solvers = [], [], []
    for i in range(ENTRIES):
        label = entry_label(i)
        for k in range(CHECKPOINTS):
            rows.append({"experiment": "sweep", "dataset": "adult", "solver": label, "solver_name": "sbp",
                         "params": json.dumps({"eta0": i}), "seed": 0, "run": 0, "checkpoint": k,
                         "iteration": 2 ** k, "epoch": 2 ** k / 1000, "kernel_evals": 1000.0 * 2 ** k,
                         "kernel_evals_computed": 900.0 * 2 ** k,
                         "eval_kernel_evals": 0, "train_time_s": 0.001 * 2 ** k,
                         "test_error": final_error(i) + 0.3 / (k + 1) - 0.3 / CHECKPOINTS, "objective": 1.0 / (k + 1),
                         "primal_objective": 2.0 / (k + 1), "n_support": 10 + k, "status": "budget"})
        last = rows[-1]
        runs.append({"experiment": "sweep", "solver": label, "solver_name": "sbp", "params": last["params"], "run": 0,
                     "status": "budget", "checkpoints": CHECKPOINTS, "iterations": last["iteration"],
                     "kernel_evals": last["kernel_evals"], "train_time_s": last["train_time_s"],
                     "test_error": last["test_error"], "wall_time_s": 0.045})
        solvers.append({"name": "sbp", "label": label, "params": {"eta0": i},
                        "kernel": {"name": "gaussian", "sigma2": 10},
                        "problem": {"lambda": 1e-4, "nu": None, "bias": False}})
    meta = {"experiment": "sweep", "config": {"solvers": [{"name": "sbp", "eta0": list(range(ENTRIES))}]},
            "resolved": {"solvers": solvers, "runs": 1, "seed": 0}, "runs": runs}
    return rows, meta


def test_the_page_of_a_thousand_entry_sweep_is_small_and_lists_every_entry():
    rows, meta = sweep()
    page = render_page(curves_frame(rows), meta, "20260101-000000")
    assert len(page.encode()) < MAX_BYTES
    data = json.loads(re.search(r"<script type='application/json' id='sbpbench-data'>(.*?)</script>", page)[1])
    best = sorted(range(ENTRIES), key=final_error)[:DRAWN]
    assert [s["label"] for s in data["solvers"]] == [entry_label(i) for i in sorted(best)]
    assert f"{ENTRIES} solver entries: the curves and figures show the {DRAWN} with the lowest final test error" in page
    summary = page[page.index("<h2>Summary</h2>"):page.index("<h2>Curves</h2>")]
    runs = page[page.index("<h2>Runs</h2>"):page.index("<h2>Resolved configuration</h2>")]
    for i in range(ENTRIES):
        cell = f"<td>{html.escape(entry_label(i))}</td>"
        assert cell in summary and cell in runs


def test_a_run_of_few_entries_draws_every_one():
    rows, meta = sweep()
    few = [r for r in rows if r["params"] in {json.dumps({"eta0": i}) for i in range(DRAWN)}]
    page = render_page(curves_frame(few), meta, "20260101-000000")
    data = json.loads(re.search(r"<script type='application/json' id='sbpbench-data'>(.*?)</script>", page)[1])
    assert [s["label"] for s in data["solvers"]] == [entry_label(i) for i in range(DRAWN)]
    assert "id='drawn'" not in page
