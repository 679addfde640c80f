"""scripts/bench_figure2.py: the core-hours and the Dask projection of Figure 2 on full MNIST,
read from the committed run."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))  # the scripts import their helper module by name

import bench_figure2  # noqa: E402


def test_makespan_puts_the_longest_runs_first_on_the_least_loaded_worker():
    # 5 | 4, then 3 onto 4, 3 onto 5, 3 onto 7: 5+3 | 4+3+3 (longest first, not the optimum 9)
    assert bench_figure2.makespan([5, 4, 3, 3, 3], 2) == 10
    assert bench_figure2.makespan([10, 1, 1], 8) == 10  # never less than the longest run
    assert bench_figure2.makespan([1.0] * 8, 1) == 8


def test_core_hours_of_the_committed_mnist_run():
    folder = ROOT / "results" / "paper" / "sbp-figure2-mnist"
    meta = json.loads((folder / "meta.json").read_text())
    body = bench_figure2.report(folder, None)
    hours = sum(r["wall_time_s"] for r in meta["runs"]) / 3600  # ten runs of each solver were made
    assert f"{hours:.2f} core-hours" in body
    assert "| sbp | 10 |" in body and "Whole invocation" not in body


def test_a_deterministic_entry_that_ran_once_is_planned_once():
    meta = {"resolved": {"runs": 10}, "runs_once": ["smo"]}
    assert (bench_figure2.planned_runs(meta, "smo"), bench_figure2.planned_runs(meta, "sbp")) == (1, 10)
    assert bench_figure2.planned_runs({"resolved": {"runs": 10}}, "smo") == 10  # a folder of older code


def test_only_a_finished_never_resumed_invocation_has_a_whole_wall_time():
    meta = {"started": "2026-11-26T10:00:00+00:00", "finished": "2026-11-26T10:50:30+00:00"}
    assert bench_figure2.whole_wall_s(meta) == 3030.0
    assert bench_figure2.whole_wall_s({**meta, "resumes": ["2026-11-26T10:20:00+00:00"]}) is None
    assert bench_figure2.whole_wall_s({"started": meta["started"]}) is None


def test_a_folder_without_a_run_is_refused_and_nothing_written(tmp_path):
    out = tmp_path / "BENCHMARKS.md"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_figure2.py"), "--experiment", "mnist",
                           "--from", str(tmp_path), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("no meta.json (expected a run folder written by sbpbench run)")
    assert not out.exists()


def test_agreement_counts_differing_checkpoints_and_the_objectives_relative_difference(tmp_path):
    """A rerun is set beside the committed run: counts equal or not, objectives by relative difference."""
    import pandas as pd

    committed = ROOT / "results" / "paper" / "sbp-figure2-mnist"
    rows = pd.read_csv(committed / "curves.csv.gz").head(30)
    same, moved = tmp_path / "same", tmp_path / "moved"
    for folder in (same, moved):
        folder.mkdir()
    rows.to_csv(same / "curves.csv", index=False)
    rows.loc[3, "kernel_evals"] += 1  # one count differs
    rows.loc[5, "test_error"] += 1e-4  # and one test error, in another row
    rows["primal_objective"] *= 1 + 1e-9
    rows.to_csv(moved / "curves.csv", index=False)
    assert "30 checkpoints" in bench_figure2.agreement(same, committed)
    assert "; 0 differ in a count" in bench_figure2.agreement(same, committed)
    assert "within 0.0e+00 relative" in bench_figure2.agreement(same, committed)
    text = bench_figure2.agreement(moved, committed)
    assert "; 2 differ in a count" in text and "within 1.0e-09 relative" in text
