"""The resume protocol: which run folder ``--resume`` continues, whether it may, and what it keeps.

:func:`open_for_resume` is the one question the sweep asks of a folder to continue: it finds the
folder (the newest of the experiment, or the one named), locks it, reads its ``meta.json`` (with
its journal of runs), checks that it holds the same experiment, the same resolved configuration
and the same data as the config that continues it, and says which of its finished runs are
kept (:func:`~sbpbench.results.resumable.kept_runs`) and which were found damaged.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sbpbench.errors import UserError
from sbpbench.results import datafiles
from sbpbench.results.agreement import resolved_difference
from sbpbench.results.folder_lock import folder_lock
from sbpbench.results.lookup import newest_run
from sbpbench.results.resumable import Run, kept_runs
from sbpbench.results.store import read_meta


@dataclass(frozen=True)
class ResumePoint:
    """A run folder to continue, locked and checked against the config that continues it.

    Attributes
    ----------
    directory : pathlib.Path
        The run folder.
    meta : dict
        Its ``meta.json`` as read (:func:`~sbpbench.results.store.read_meta`, the journal's runs
        included).
    kept : list of Run
        Its finished runs whose rows check out, with their rows, in ``meta.json``'s order.
    damaged : list of str
        Its finished runs found damaged (redone), ``"LABEL run K: why"``.
    """

    directory: Path
    meta: dict[str, Any]
    kept: list[Run]
    damaged: list[str]


def open_for_resume(experiment_folder: Path, experiment: str, config: str | None, resolved: dict[str, Any],
                    runs: int, locks: ExitStack, directory: Path | None = None) -> ResumePoint | None:
    """Find, lock and check the run folder that a resume of ``experiment`` continues.

    Parameters
    ----------
    experiment_folder : pathlib.Path
        The experiment's folder (``results/<experiment>``), whose newest run folder is continued
        unless ``directory`` names one.
    experiment : str
        The experiment's name.
    config : str or None
        The config file, for messages.
    resolved : dict
        The resolved configuration the runs would be made with now.
    runs : int
        The runs per solver asked for now (a folder made with fewer is continued).
    locks : contextlib.ExitStack
        Receives the folder's lock (:func:`~sbpbench.results.folder_lock.folder_lock`), held
        while the caller writes there.
    directory : pathlib.Path, optional
        The run folder to continue (``--resume-from``).

    Returns
    -------
    ResumePoint or None
        None when the experiment has no run folder (a new one is made).

    Raises
    ------
    UserError
        The folder is locked by another process, holds another experiment, another resolved
        configuration, runs of other data, or unreadable files.
    """
    directory = directory or newest_run(experiment_folder)
    if directory is None:
        return None
    locks.enter_context(folder_lock(directory))
    old = read_meta(directory)
    resolved = json.loads(json.dumps(resolved, default=str))  # as meta.json holds it
    if old.get("experiment") != experiment:
        raise UserError(f"{directory}: holds experiment {old.get('experiment')!r}, not {experiment!r} ({config})")
    if (difference := resolved_difference(_more_runs_allowed(old.get("resolved"), runs), resolved)) is not None:
        raise UserError(f"{directory}/meta.json: {difference.describe('the folder', f'the config {config}')}; "
                        "run without --resume to start a new run folder")
    datafiles.check_same_data(old["resolved"]["dataset"].get("files"), resolved["dataset"]["files"], directory)
    found = kept_runs(directory, old)
    return ResumePoint(directory, old, found.runs, found.damaged)


def _more_runs_allowed(old: Any, runs: int) -> Any:
    """``old`` resolved configuration as it compares with a config asking for ``runs`` runs.

    A resumed folder may be given more runs than it was made with (each run draws from its own
    stream, so the runs it holds are those the larger count makes first); fewer is a difference.
    """
    if isinstance(old, dict) and type(old.get("runs")) is int and 1 <= old["runs"] <= runs:  # not True, not 0
        return {**old, "runs": runs}
    return old
