"""The sweep: every run of a set of experiments, planned here, executed anywhere, written by this process.

Every experiment's data are loaded and its run folder decided before any folder is created
or changed; when the runs execute in this process, its problem is built in the executor's
:attr:`~sbpbench.execution.executors.Executor.problems`, so that they solve that one. Results
are written only here: each finished run appended as it finishes, both files rewritten whole in
position order (solver, then run) at the end whatever the order of completion
(:class:`~sbpbench.results.store.ResultsWriter`); ``--resume`` continues a run folder
(:func:`~sbpbench.results.resume.open_for_resume`) by redoing only the runs without a complete
result.
"""

from __future__ import annotations

import platform
from collections.abc import Container
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

from sbpbench.errors import UserError
from sbpbench.execution import loop
from sbpbench.execution.executors import Executor, Reporter, SequentialExecutor, Task
from sbpbench.execution.problems import ProblemCache
from sbpbench.experiment import assemble
from sbpbench.experiment.config import Experiment
from sbpbench.files import remove_run_leftovers
from sbpbench.results import datafiles
from sbpbench.results.folder_lock import folder_lock
from sbpbench.results.resumable import Run
from sbpbench.results.resume import open_for_resume
from sbpbench.results.stamps import now
from sbpbench.results.store import ResultsWriter, environment, new_run_dir, source_commit
from sbpbench.solvers import SOLVERS


def plan(exp: Experiment, skip: Container[int] = ()) -> list[Task]:
    """The runs of an experiment in the order they are started: run index, then config solver order.

    Run 0 of every solver comes before run 1 of any, so a long experiment stopped part way
    (and continued with ``--resume``) has some runs of every solver rather than all runs of
    the first. A task's ``position``, its place in the files, is solver order then run index.
    Each entry runs :meth:`~sbpbench.experiment.config.Experiment.runs_of` times (a
    deterministic solver's once).

    Parameters
    ----------
    exp : Experiment
        The experiment.
    skip : container of int
        Positions to leave out (runs that already have a complete result).
    """
    firsts = _first_positions(exp)
    tasks = (Task(exp, spec, run, first + run)
             for run in range(exp.runs) for spec, first in zip(exp.solvers, firsts) if run < exp.runs_of(spec))
    return [t for t in tasks if t.position not in skip]


def positions(exp: Experiment) -> dict[tuple[str, int], int]:
    """The plan position of every planned run, by (solver label, run index)."""
    return {(t.spec.label, t.run): t.position for t in plan(exp)}


def _first_positions(exp: Experiment) -> list[int]:
    """The plan position of run 0 of each solver entry, in config order."""
    return list(accumulate((exp.runs_of(spec) for spec in exp.solvers[:-1]), initial=0))


class _Silent(Reporter):
    """A reporter that says nothing."""


@dataclass(frozen=True)
class Stopped:
    """Where an interrupted experiment stands: its run folder and how many of its runs
    finished (kept in the files), were interrupted (recorded ``interrupted``) or never started."""

    experiment: str
    directory: Path
    finished: int
    interrupted: int
    not_started: int


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_experiments`, after the files were brought up to date.

    A :class:`KeyboardInterrupt`, so that code catching that still does; ``stopped`` says,
    per experiment, where its runs stand (every experiment, finished or not).
    """

    def __init__(self, stopped: list[Stopped]):
        super().__init__()
        self.stopped = stopped


@dataclass
class _Resumed:
    """A run folder to continue: its ``meta.json``, its complete runs by plan position, and the
    finished runs found damaged (redone)."""

    directory: Path
    old: dict[str, Any]
    kept: dict[int, Run]
    damaged: list[str]


@dataclass
class _Start:
    """Where an experiment's results go, decided before any folder is created or changed.

    ``resumed`` is None for a new run folder.
    """

    exp: Experiment
    meta: dict[str, Any]
    resumed: _Resumed | None = None


@dataclass
class _Opened:
    """An experiment ready to run: its run folder's writer and the runs still to do."""

    writer: ResultsWriter
    tasks: list[Task]


def run_experiments(experiments: list[Experiment], results_root: Path, executor: Executor,
                    reporter: Reporter | None = None, resume: bool = False,
                    resume_from: Path | None = None) -> list[Path]:
    """Run every solver entry of every experiment its runs (``runs``, a deterministic solver's
    once: :func:`plan`) on ``executor`` and write the results.

    Every experiment's data are loaded (and, with ``resume``, its run folder checked
    against the config) before any run folder is created or changed, so that a mistake in
    one experiment leaves no trace of the others. Results are written by this process
    only: each run appended as it finishes, the files rewritten whole in position order at the end.

    Parameters
    ----------
    experiments : list of Experiment
        Validated experiments (distinct names).
    results_root : pathlib.Path
        Results go to ``results_root/<experiment>/<run-id>/``.
    executor : Executor
        Where the runs execute (all experiments share it).
    reporter : Reporter, optional
        Receives progress.
    resume : bool
        Continue the newest run folder of each experiment (a new one where there is none):
        keep its runs with a complete result (status ``budget``, ``done`` or ``diverged``)
        and redo the others.
    resume_from : pathlib.Path, optional
        The run folder to continue instead of the newest (one experiment only).

    Returns
    -------
    list of pathlib.Path
        The run folders, one per experiment.

    Raises
    ------
    UserError
        Two experiments share a name; a folder to resume does not match its config, was made
        from other data, or is being written by another process (each run folder is locked
        while it is written, :func:`~sbpbench.results.folder_lock.folder_lock`); or the results
        cannot be written (a full or read-only disk: the files keep what was last written).
    Interrupted
        On Ctrl-C while the runs execute: the finished runs are kept, those that had started
        are recorded with status ``interrupted`` (no rows), ``meta.json`` of every experiment
        not complete says ``interrupted``, and the executor's workers are left for
        :meth:`~sbpbench.execution.executors.Executor.close` to stop.
    """
    reporter = reporter or _Silent()
    names = [exp.name for exp in experiments]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UserError(f"two configs define the experiment {dup!r}; give one another 'name'")
    if resume_from is not None and len(experiments) != 1:
        raise UserError("--resume-from continues one run folder: give exactly one config")
    with ExitStack() as locks:  # each run folder's lock, held until its files are final
        starts = _starts(experiments, results_root, executor, reporter, resume or resume_from is not None,
                         resume_from, locks)
        opened = [_open(start, results_root, executor, reporter, locks) for start in starts]
        by_name = {exp.name: o for exp, o in zip(experiments, opened)}
        remaining = {exp.name: len(o.tasks) for exp, o in zip(experiments, opened)}
        reporter.planned(sum(remaining.values()))
        try:
            for task, result in executor.results([t for o in opened for t in o.tasks], reporter):
                by_name[task.exp.name].writer.add_run(result.rows, result.summary, task.position)
                remaining[task.exp.name] -= 1
                reporter.end(result.summary)
        except KeyboardInterrupt:
            raise _interrupted(executor, opened, remaining) from None
        for o in opened:
            o.writer.flush(finished=True)
    return [o.writer.directory for o in opened]


def _interrupted(executor: Executor, opened: list[_Opened], remaining: dict[str, int]) -> Interrupted:
    """Record the runs that ``executor`` had started as ``interrupted``, mark and write every
    unfinished experiment's files, and say where each experiment stands."""
    started: dict[str, list[Task]] = {}
    for task in executor.running():
        started.setdefault(task.exp.name, []).append(task)
    stopped = []
    for o in opened:
        name = o.writer.meta["experiment"]
        mine = started.get(name, [])
        if remaining[name]:
            for task in mine:
                o.writer.add_run([], loop.interrupted_result(task.exp, task.spec, task.run).summary, task.position,
                                 flush=False)
            o.writer.meta["interrupted"] = True
            o.writer.flush(finished=True)
        finished = sum(1 for summary in o.writer.meta["runs"] if summary["status"] != "interrupted")
        stopped.append(Stopped(name, o.writer.directory, finished, len(mine), remaining[name] - len(mine)))
    return Interrupted(stopped)


def _starts(experiments: list[Experiment], results_root: Path, executor: Executor, reporter: Reporter,
            resume: bool, resume_from: Path | None, locks: ExitStack) -> list[_Start]:
    """:func:`_start` of every experiment, their problems built where the runs will take them from.

    That is the executor's :attr:`~sbpbench.execution.executors.Executor.problems` when the runs
    execute in this process; else a cache of this call's own, which lets each problem go
    once checked (the runs build theirs where they execute).
    """
    problems = executor.problems if executor.problems is not None else ProblemCache()
    return [_start(exp, results_root, executor, reporter, resume, resume_from, problems, locks)
            for exp in experiments]


def _start(exp: Experiment, results_root: Path, executor: Executor, reporter: Reporter, resume: bool,
           resume_from: Path | None, problems: ProblemCache, locks: ExitStack) -> _Start:
    """Load an experiment's data (its problems built in ``problems``) and decide where its results
    go; create or change nothing. A folder to resume is locked first (its lock entered into
    ``locks``), so that what is read of it stays true while the runs go on.

    Raises
    ------
    UserError
        The folder to resume is locked by another process, holds another experiment, another
        resolved configuration, runs of other data, or unreadable files.
    """
    prep = problems.prepared(exp)
    reporter.loaded(exp, prep.dataset["n_train"], prep.dataset["n_test"], prep.seconds, prep.dataset_copy)
    resolved = assemble.resolved_config(exp, prep, _entry_problems(exp, problems) if exp.swept else ())
    resolved["dataset"] = {**resolved["dataset"], "files": datafiles.record(exp.dataset)}
    meta = {"experiment": exp.name, "config_file": exp.source, "config": exp.raw, "resolved": resolved,
            "executor": executor.name, "jobs": executor.jobs,
            "solver_traits": {s.name: SOLVERS[s.name].traits() for s in exp.solvers},
            "solver_streams": {s.name: loop.stream_of(s.name) for s in exp.solvers}, **environment()}
    if exp.runs_once():
        meta["runs_once"] = exp.runs_once()
    if prep.dataset_copy:
        meta["dataset_copy"] = prep.dataset_copy
    point = (open_for_resume(results_root / exp.name, exp.name, exp.source, resolved, exp.runs, locks, resume_from)
             if resume else None)
    if point is None:
        return _Start(exp, meta)
    kept: dict[int, Run] = {}
    planned = positions(exp)
    for rows, summary in point.kept:
        pos = planned.get((str(summary["solver"]), int(summary["run"])))
        if pos is not None:
            kept.setdefault(pos, (rows, summary))
    return _Start(exp, meta, _Resumed(point.directory, point.meta, kept, point.damaged))


def _entry_problems(exp: Experiment, problems: ProblemCache) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The resolved kernel and problem of each solver entry of a sweep, each different problem
    prepared once.

    So lambda at the real n is checked, and nu derived from lambda (where an entry reads it:
    :func:`~sbpbench.experiment.assemble.reads_nu`), for every entry before any run starts (a
    derived nu's exact optimum is then in the disk cache for the workers).
    """
    resolved: dict[tuple, tuple[dict[str, Any], dict[str, Any]]] = {}
    for spec in exp.solvers:
        key = assemble.problem_key(exp.for_solver(spec))
        if key not in resolved:
            prep = problems.prepared(exp, spec)
            resolved[key] = (prep.kernel, prep.params)
    return [resolved[assemble.problem_key(exp.for_solver(spec))] for spec in exp.solvers]


def _open(start: _Start, results_root: Path, executor: Executor, reporter: Reporter, locks: ExitStack) -> _Opened:
    """Open an experiment's run folder (a new one, locked into ``locks`` before anything is
    written there, or the one to resume, locked by :func:`_start`) and write its files.

    A resumed folder loses the temporary files that writes interrupted by a kill left there,
    and gets the data files' record when it was written before they were recorded."""
    resumed = start.resumed
    if resumed is None:
        directory = new_run_dir(results_root, start.exp.name)
        locks.enter_context(folder_lock(directory))
        writer = ResultsWriter(directory, start.meta)
        writer.flush()
        return _Opened(writer, plan(start.exp))

    remove_run_leftovers(resumed.directory)
    writer = ResultsWriter(resumed.directory,
                           {k: v for k, v in resumed.old.items() if k not in ("interrupted", "finished")})
    writer.meta["solver_traits"] = start.meta["solver_traits"]  # a folder written before they were recorded
    writer.meta["solver_streams"] = start.meta["solver_streams"]
    writer.meta.pop("runs_once", None)  # as run now: a folder of older code ran every entry ``runs`` times
    if "runs_once" in start.meta:
        writer.meta["runs_once"] = start.meta["runs_once"]
    writer.meta["resolved"]["dataset"].setdefault("files", start.meta["resolved"]["dataset"]["files"])
    for pos, (rows, summary) in resumed.kept.items():
        writer.add_run(rows, summary, pos, flush=False)
    tasks = plan(start.exp, skip=resumed.kept)
    commit, dirty = source_commit()  # the redone runs' code, which may not be the kept runs'
    resume = {"time": now(), "kept": len(resumed.kept), "redone": len(tasks), "executor": executor.name,
              "jobs": executor.jobs, "host": platform.node(), "git_commit": commit, "git_dirty": dirty}
    if resumed.damaged:
        resume["damaged"] = resumed.damaged
    if writer.meta["resolved"].get("runs") != start.exp.runs:  # more runs asked for: the files say so
        resume["runs"] = [writer.meta["resolved"]["runs"], start.exp.runs]
        writer.meta["resolved"]["runs"] = start.exp.runs
        writer.meta["config"] = start.meta["config"]
    writer.meta.setdefault("resumes", []).append(resume)
    writer.flush()
    reporter.resumed(start.exp, resumed.directory, len(resumed.kept), len(tasks))
    # a promoted copy being completed: its compressed curves are now in curves.csv
    (resumed.directory / "curves.csv.gz").unlink(missing_ok=True)
    return _Opened(writer, tasks)


def run_experiment(exp: Experiment, results_root: Path, reporter: Reporter | None = None) -> Path:
    """Run every solver entry of an experiment its runs (:func:`plan`), in this process, and write the results.

    Parameters
    ----------
    exp : Experiment
        A validated experiment.
    results_root : pathlib.Path
        Results go to ``results_root/<experiment>/<run-id>/``.
    reporter : Reporter, optional
        Receives progress.

    Returns
    -------
    pathlib.Path
        The run folder. On Ctrl-C the finished runs are kept, ``meta.json`` says
        ``interrupted`` and :class:`Interrupted` propagates.
    """
    return run_experiments([exp], results_root, SequentialExecutor(), reporter)[0]
