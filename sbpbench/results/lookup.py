"""Finding results: the one rule for which run folder of an experiment counts.

An *experiment folder* ``<root>/<experiment>/`` holds run folders named by the time they
were started, ``YYYYmmddTHHMMSSZ[-k]`` in UTC (``YYYYmmdd-HHMMSS[-k]`` in local time before;
:mod:`~sbpbench.results.stamps`), each with a ``meta.json`` and (once a run has finished) a
``curves.csv``. A *promoted* experiment folder (``results/paper/<experiment>/``) is itself a
run folder, with ``curves.csv.gz``. The run that counts is the newest run folder, by the
instant it was started (:func:`started`); readers that need curves take the newest one that
has at least one checkpoint.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sbpbench.errors import UserError
from sbpbench.files import read_regular
from sbpbench.results.schema import require
from sbpbench.results.stamps import FolderStamp, folder_stamp, parse_timestamp
from sbpbench.results.store import curves_file, read_curves, read_meta

if TYPE_CHECKING:
    import pandas as pd

#: What every reader of an experiment's results (the report's verdicts, its data section) takes
#: from ``meta.json``, beyond what :func:`~sbpbench.results.store.read_meta` checks.
NEEDED = ("resolved.dataset.n_train", "resolved.dataset.n_test", "resolved.problem")


def resolved(res: ExperimentResult, key: str) -> Any:
    """The value of ``resolved.<key>`` (dotted) in an experiment's ``meta.json``, for a reader of
    the report that needs it.

    Raises
    ------
    UserError
        ``PATH/meta.json: no key 'resolved.kernel', which the report reads (not written by this
        sbpbench, or edited)``: missing, or null.
    """
    node: Any = res.meta.get("resolved")
    parts = key.split(".")
    for i, part in enumerate(parts):
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:  # the first part of the key that is missing
            raise UserError(f"{res.directory / 'meta.json'}: no key 'resolved.{'.'.join(parts[:i + 1])}', which the "
                            "report reads (not written by this sbpbench, or edited)")
    return node


def stamp(folder: Path) -> FolderStamp | None:
    """What a run folder's name says of its start, or None if the name is not a run folder's."""
    return folder_stamp(folder.name)


def started(folder: Path) -> tuple[_dt.datetime, int, bool]:
    """The key that orders the run folders of an experiment, later is newer: the instant the run
    folder was started, its ``-k``, and whether its name is in UTC.

    The instant is the UTC time of its name; for a name in local time (made before names were in
    UTC), the ``started`` of its ``meta.json`` (a time with its offset) where that is readable,
    else its name's time read as UTC. So the order holds across a daylight-saving change and
    between machines in other time zones writing one results folder.
    """
    found = stamp(folder)
    if found is None:
        raise ValueError(f"{folder}: not a run folder's name")
    if found.utc:
        return found.when, found.k, True
    when = _started_in_meta(folder)
    return (when.astimezone(_dt.UTC) if when is not None else found.when), found.k, False


def _started_in_meta(folder: Path) -> _dt.datetime | None:
    """The ``started`` time of a run folder's ``meta.json``; None when it cannot be read, or is not
    a time with its offset (a damaged ``meta.json`` is refused where it is read, not here)."""
    try:
        meta = json.loads(read_regular(folder / "meta.json", "the run's metadata"))
    except (UserError, ValueError, RecursionError):
        return None
    return parse_timestamp(meta.get("started")) if isinstance(meta, dict) else None


def is_run_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a run's ``meta.json``."""
    return (folder / "meta.json").is_file()


def checkpoints(folder: Path) -> pd.DataFrame | None:
    """A run folder's curves, or None when it has no checkpoint yet."""
    path = curves_file(folder)
    if path is None or path.stat().st_size == 0:
        return None
    curves = read_curves(path, traits=True)
    return None if curves.empty else curves


def run_folders(experiment_folder: Path) -> list[Path]:
    """The run folders of an experiment folder, newest first by :func:`started` (a promoted folder
    is its own run, last)."""
    if not experiment_folder.is_dir():
        return []
    runs = [p for p in experiment_folder.iterdir() if stamp(p) is not None and is_run_folder(p)]
    runs.sort(key=started, reverse=True)
    return runs + ([experiment_folder] if is_run_folder(experiment_folder) else [])


def newest_run(experiment_folder: Path, measured: bool = False) -> Path | None:
    """The run folder that counts: the newest one (with at least one checkpoint if ``measured``)."""
    for folder in run_folders(experiment_folder):
        if not measured or checkpoints(folder) is not None:
            return folder
    return None


def newest_runs(root: str | Path) -> list[Path]:
    """The run folder that counts for every experiment under ``root``, in name order.

    ``root`` may be a run folder (it is used alone), an experiment folder or a tree of them;
    folders under a ``reference`` folder (CI reference curves) are left out.
    """
    root = Path(root)
    if is_run_folder(root) and stamp(root) is not None:
        return [root]
    experiments = set()
    for meta in root.rglob("meta.json"):
        folder = meta.parent
        if "reference" in folder.relative_to(root).parts:
            continue
        experiments.add(folder.parent if stamp(folder) is not None else folder)
    found = (newest_run(folder, measured=True) for folder in sorted(experiments))
    return [folder for folder in found if folder is not None]


@dataclass
class ExperimentResult:
    """The curves and metadata of the run that counts for one experiment."""

    name: str
    directory: Path
    curves: pd.DataFrame
    meta: dict[str, Any]


def find_experiment(root: str | Path, name: str,
                    shared: dict[str, tuple[str, str]] | None = None) -> ExperimentResult | None:
    """The results of experiment ``name`` under ``root`` (None when it has no checkpoint).

    Parameters
    ----------
    root : str or pathlib.Path
        A results tree (``results/paper``).
    name : str
        The experiment.
    shared : dict, optional
        Runs experiments take from others instead of repeating them, ``{experiment:
        (source, solver)}``: when ``name`` has no runs of ``solver``, the source's runs of it
        are put first, relabelled with ``name``.
    """
    found = ((folder, checkpoints(folder)) for folder in run_folders(Path(root) / name))
    directory, curves = next(((f, c) for f, c in found if c is not None), (None, None))
    if directory is None or curves is None:
        return None
    if shared and name in shared:
        source, solver = shared[name]
        lender = find_experiment(root, source, shared)
        if lender is not None and solver not in set(curves["solver_name"]):
            import pandas as pd  # here: a run imports this module (newest_run), never pandas

            lent = lender.curves[lender.curves["solver_name"] == solver].assign(experiment=name)
            curves = pd.concat([lent, curves], ignore_index=True)
    meta = read_meta(directory)
    if not isinstance(meta.get("resolved"), dict):
        raise UserError(f"{directory / 'meta.json'}: no 'resolved' configuration (not written by this sbpbench)")
    require(meta, directory / "meta.json", NEEDED)
    return ExperimentResult(name, directory, curves, meta)

