"""Redo committed reproductions with today's code and promote them: results/paper/<experiment>/.

Usage: python scripts/redo_runs.py EXPERIMENT [EXPERIMENT ...] [--solvers sbp,...] [--jobs 2]

A change that alters a committed curve (a faster path that sums in another order, a fixed
bug) is allowed; its committed runs are then redone with this one command. For each
experiment, the config recorded in its committed ``meta.json`` (the one the committed runs
were made with) is run again under ``results/redo/<experiment>/`` with ``sbpbench run``
(``--solvers`` limits it to those solvers; the others' committed runs are kept, since their
code did not change: ``tests/test_committed_runs.py`` checks that). The new runs replace the
committed runs of the redone solvers (a deterministic solver's one run its identical runs, its
label then listed in ``meta.json``'s ``runs_once``), and the replaced rows are kept beside them as
``before-redo.csv.gz``: ``tests/test_committed_runs.py`` checks that each redone curve lies
within the old runs' spread (:func:`sbpbench.outputs.check.compare`, the band of
``sbpbench check``), and prints the comparison here too. ``meta.json`` keeps its first run's
facts, except the redone solvers' resolved entries (their parameters as run now, new defaults
included), and gains a ``redos`` entry (solvers, commit, run folder, dates).

Interrupted, it continues: run the same command again (an unfinished run folder under
``results/redo/<experiment>/`` is resumed, ``sbpbench run --resume``). ``--again`` starts
fresh runs where the last redo was already promoted.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from promote_results import promote

from sbpbench.errors import UserError
from sbpbench.outputs.check import HEADER, compare
from sbpbench.results.lookup import newest_run
from sbpbench.results.store import curves_file, read_curves, read_meta

#: The redone solvers' rows as committed before the redo, kept beside the new ones.
BEFORE = "before-redo.csv.gz"


def _solver_name(entry: Any) -> str:
    return entry if isinstance(entry, str) else str(entry.get("name"))


def redo_config(meta: dict[str, Any], solvers: list[str] | None) -> dict[str, Any]:
    """The committed runs' config, limited to ``solvers`` (all when None).

    Raises
    ------
    UserError
        A solver is named that the experiment does not run.
    """
    config = dict(meta["config"])
    if solvers is None:
        return config
    present = [_solver_name(entry) for entry in config["solvers"]]
    unknown = sorted(set(solvers) - set(present))
    if unknown:
        raise UserError(f"{meta['experiment']}: --solvers: {', '.join(unknown)} not among its solvers "
                        f"({', '.join(present)})")
    config["solvers"] = [entry for entry in config["solvers"] if _solver_name(entry) in solvers]
    return config


def run_again(experiment: str, config: dict[str, Any], work: Path, jobs: int, again: bool,
              promoted_run: str | None) -> Path:
    """Run ``config`` under ``work/<experiment>/``, resuming an unfinished folder; returns the run folder."""
    last = newest_run(work / experiment)
    if last is not None and last.name == promoted_run and not again:
        print(f"{experiment}: the redo {last.name} is already promoted (--again to redo it once more)")
        return last
    config_file = work / f"{experiment}.yaml"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    resume = last is not None and last.name != promoted_run and not again
    command = [sys.executable, "-m", "sbpbench", "run", str(config_file), "--results", str(work),
               "--jobs", str(jobs), "--no-plot"] + (["--resume"] if resume else [])
    print(" ".join(command), flush=True)
    done = subprocess.run(command)
    if done.returncode != 0:
        raise UserError(f"{experiment}: sbpbench run exited with {done.returncode}; "
                        "run this command again to continue")
    run_dir = newest_run(work / experiment)
    assert run_dir is not None
    return run_dir


def committed_curves(folder: Path) -> pd.DataFrame:
    """The curves of a run folder or of a promoted copy (``curves.csv.gz``)."""
    return read_curves(curves_file(folder) or folder)


def merge(committed: Path, run_dir: Path, solvers: set[str]) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame]:
    """The committed curves and meta with the runs of the redone solvers (by name, whatever their
    parameters) replaced, and the replaced rows."""
    old = committed_curves(committed)
    new = committed_curves(run_dir)
    order = {name: k for k, name in enumerate(old["solver"].drop_duplicates())}
    redone = old["solver_name"].isin(solvers)
    curves = pd.concat([old[~redone], new], ignore_index=True)
    curves = curves.sort_values(["solver", "run", "checkpoint"], key=lambda c: c.map(order) if c.name == "solver"
                                else c, kind="stable")[old.columns.union(new.columns, sort=False)]
    meta = read_meta(committed)
    new_meta = read_meta(run_dir)
    meta["runs"] = [r for r in meta["runs"] if r["solver_name"] not in solvers] + new_meta["runs"]
    meta["runs"].sort(key=lambda r: (order.get(r["solver"], len(order)), r["run"]))
    meta["resolved"]["solvers"] = redone_entries(meta["resolved"]["solvers"], new_meta["resolved"]["solvers"], solvers)
    # a redone deterministic solver ran once (sbpbench run's rule); the others keep their runs
    once = [label for label in meta.pop("runs_once", []) if label not in set(new["solver"])]
    if once := once + new_meta.get("runs_once", []):
        meta["runs_once"] = once
    meta.setdefault("redos", []).append({"solvers": sorted(solvers), "run_id": run_dir.name} | {
        key: new_meta.get(key) for key in ("git_commit", "git_dirty", "executor", "jobs", "started", "finished",
                                           "versions", "host")})
    return curves, meta, old[redone]


def redone_entries(old: list[dict[str, Any]], new: list[dict[str, Any]], solvers: set[str]) -> list[dict[str, Any]]:
    """The resolved solver entries of ``old`` with those of the redone ``solvers`` taken from
    ``new`` (their parameters as run now, defaults included), in ``old``'s order."""
    fresh = {entry["label"]: entry for entry in new}
    return [fresh.get(entry["label"], entry) if entry["name"] in solvers else entry for entry in old]


def kept_before(committed: Path, replaced: pd.DataFrame) -> pd.DataFrame:
    """The rows to keep as :data:`BEFORE`: those just ``replaced``, and those an earlier redo
    replaced of the solvers not redone now (so that every redone solver's old runs stay)."""
    earlier = committed / BEFORE
    if not earlier.exists():
        return replaced
    kept = read_curves(earlier)
    kept = kept[~kept["solver_name"].isin(replaced["solver_name"].unique())]
    return pd.concat([kept, replaced], ignore_index=True)


def redo(experiment: str, paper: Path, work: Path, solvers: list[str] | None, jobs: int, again: bool) -> Path:
    """Redo ``experiment``'s committed runs (of ``solvers``) and promote them; returns the committed folder."""
    committed = paper / experiment
    meta = read_meta(committed)
    config = redo_config(meta, solvers)
    names = {_solver_name(entry) for entry in config["solvers"]}
    promoted = meta.get("redos", [{}])[-1].get("run_id")
    run_dir = run_again(experiment, config, work, jobs, again, promoted)
    if run_dir.name == promoted:
        return committed
    new_meta = read_meta(run_dir)
    failed = [r for r in new_meta.get("runs", []) if r.get("status") in ("failed", "diverged")]
    if failed or not new_meta.get("finished"):
        raise UserError(f"{run_dir}: not every run finished well; not promoted")
    curves, merged_meta, replaced = merge(committed, run_dir, names)
    deviations = compare(curves[curves["solver_name"].isin(names)], replaced)
    print(f"{experiment}: {len(deviations)} checkpoint(s) outside the old runs' band")
    if deviations:
        print(HEADER)
        print("\n".join(d.line() for d in deviations))
    with tempfile.TemporaryDirectory(dir=work) as staging:
        folder = Path(staging) / run_dir.name
        folder.mkdir()
        curves.to_csv(folder / "curves.csv", index=False)
        (folder / "meta.json").write_text(json.dumps(merged_meta, indent=1) + "\n", encoding="utf-8")
        buffer = gzip.compress(kept_before(committed, replaced).to_csv(index=False).encode(), mtime=0)
        return promote(folder, paper, extra={BEFORE: buffer})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="+")
    parser.add_argument("--solvers", help="comma-separated solvers to redo (default: all of each experiment)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--paper", type=Path, default=Path("results") / "paper")
    parser.add_argument("--work", type=Path, default=Path("results") / "redo")
    parser.add_argument("--again", action="store_true", help="start fresh runs even where the last redo was promoted")
    args = parser.parse_args()
    solvers = args.solvers.split(",") if args.solvers else None
    try:
        for experiment in args.experiments:
            if curves_file(args.paper / experiment) is None:
                raise UserError(f"{args.paper / experiment}: no committed curves (expected a promoted experiment)")
            print(redo(experiment, args.paper, args.work, solvers, args.jobs, args.again))
    except (UserError, OSError) as exc:
        print(f"redo_runs.py: error: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
