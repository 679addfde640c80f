"""Result files: ``curves.csv`` and ``meta.json`` in ``results/<experiment>/<run-id>/``.

Both files are rewritten whole after every finished run and on interruption, each time
atomically (written under a temporary name, then renamed), so a reader never sees a
half-written file and an interruption loses nothing already finished.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

#: Columns every ``curves.csv`` has, in this order; solver-specific columns follow, sorted.
COLUMNS = [
    "experiment", "dataset", "solver", "solver_name", "params", "seed", "run", "checkpoint",
    "iteration", "epoch", "kernel_evals", "kernel_evals_computed", "eval_kernel_evals",
    "train_time_s", "test_error", "objective", "primal_objective", "n_support", "status",
]


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def new_run_dir(root: Path, experiment: str) -> Path:
    """Create ``root/<experiment>/<timestamp>[-k]/`` and return it."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    parent = root / experiment
    parent.mkdir(parents=True, exist_ok=True)
    for k in range(1000):
        candidate = parent / (stamp if k == 0 else f"{stamp}-{k}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"cannot create a results folder under {parent}")


def environment() -> dict[str, Any]:
    """Package versions, git commit and host facts for ``meta.json``."""
    versions = {}
    for pkg in ("sbpbench", "numpy", "scipy", "numba", "scikit-learn", "pandas", "matplotlib", "click", "pyyaml"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        ).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {
        "versions": versions,
        "python": platform.python_version(),
        "git_commit": commit,
        "host": {
            "hostname": platform.node(),
            "platform": platform.platform(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
        },
    }


class ResultsWriter:
    """Collects checkpoint rows and run statuses and keeps the two files up to date.

    Parameters
    ----------
    directory : pathlib.Path
        The run folder (see :func:`new_run_dir`).
    meta : dict
        Static part of ``meta.json`` (resolved configuration and environment).
    """

    def __init__(self, directory: Path, meta: dict[str, Any]):
        self.directory = directory
        self.meta = dict(meta)
        self.meta.setdefault("started", _now())
        self.meta["runs"] = []
        self.rows: list[dict[str, Any]] = []

    def add_run(self, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
        """Record one run's checkpoint rows (their ``status`` set to the run's) and write both files."""
        for row in rows:
            row["status"] = summary["status"]
        self.rows.extend(rows)
        self.meta["runs"].append(summary)
        self.flush()

    def flush(self, finished: bool = False) -> None:
        """Rewrite ``curves.csv`` and ``meta.json`` atomically."""
        frame = curves_frame(self.rows)
        atomic_write(self.directory / "curves.csv", frame.to_csv(index=False))
        if finished:
            self.meta["finished"] = _now()
        atomic_write(self.directory / "meta.json", json.dumps(self.meta, indent=2, default=str) + "\n")


def curves_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows as a frame with :data:`COLUMNS` first and any extra columns after, sorted."""
    extra = sorted({k for row in rows for k in row} - set(COLUMNS))
    return pd.DataFrame(rows, columns=COLUMNS + extra)


def read_curves(directory: str | Path) -> pd.DataFrame:
    """Read every ``curves.csv`` below ``directory`` (a run folder or a tree of them) into one frame."""
    directory = Path(directory)
    files = [directory] if directory.is_file() else sorted(directory.rglob("curves.csv"))
    frames = [pd.read_csv(f) for f in files if f.stat().st_size > 0]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)


def _now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")
