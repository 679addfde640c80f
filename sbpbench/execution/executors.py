"""Where runs execute: the plan of independent tasks, three executors, and the sweep.

A task is one run, (experiment, solver, run index). Runs are independent of order and
place (each draws from its own generator, derived from the experiment seed, the run index
and the solver name; see :func:`sbpbench.loop.run_rng`), so they can run anywhere:

* :class:`SequentialExecutor`: one after the other in this process (with per-checkpoint
  progress);
* :class:`ProcessExecutor`: ``--jobs N`` local processes (``spawn`` start method: numba's
  thread pool and ``fork`` do not mix);
* :class:`DaskExecutor`: a ``dask.distributed`` cluster, existing (``--scheduler
  tcp://HOST:PORT``) or started locally.

A task carries only the experiment and rebuilds its problem where it runs, through the
same :func:`sbpbench.loop.prepare` as the client, cached per worker thread. It returns
its :class:`~sbpbench.loop.RunResult`; only the client writes files
(:func:`run_experiments`), in position order (solver, then run) whatever the order of
completion, and
``--resume`` continues a run folder by redoing only the runs without a complete result.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import threading
import time
import uuid
from collections.abc import Container, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sbpbench.errors import UserError
from sbpbench.execution import loop
from sbpbench.execution.loop import RunResult
from sbpbench.experiment import assemble
from sbpbench.experiment.config import Experiment, SolverSpec
from sbpbench.results.lookup import newest_run
from sbpbench.results.store import (
    ResultsWriter,
    comparable,
    complete_runs,
    environment,
    first_difference,
    new_run_dir,
    now,
    read_meta,
)


class Reporter(Protocol):
    """What is told about the progress of a set of experiments (the CLI prints it).

    ``start`` and ``checkpoint`` are called only when runs execute in the client's
    process (the sequential executor); ``planned``, ``loaded`` and ``end`` always. A
    protocol, so that the command line can implement it without importing this module
    (which would slow ``sbpbench --help``); subclassing it gives silent defaults.
    """

    def planned(self, total: int) -> None:
        """``total`` runs are about to execute."""
        return None

    def loaded(self, exp: Experiment, n_train: int, n_test: int, seconds: float) -> None:
        """The data are loaded."""
        return None

    def start(self, solver: str, run: int, runs: int) -> None:
        """A run begins."""
        return None

    def checkpoint(self, fraction: float, row: dict[str, Any]) -> None:
        """A checkpoint was measured; ``fraction`` of the run's budget is spent."""
        return None

    def end(self, summary: dict[str, Any]) -> None:
        """A run ended (``summary`` as in ``meta.json``'s ``runs``, with ``experiment``)."""
        return None


class _Silent(Reporter):
    """A reporter that says nothing."""


@dataclass(frozen=True)
class Task:
    """One run: an experiment's solver and run index, and its place in the experiment's plan."""

    exp: Experiment
    spec: SolverSpec
    run: int
    position: int

    @property
    def name(self) -> str:
        """``experiment/solver/run-k``, for logs and Dask keys."""
        return f"{self.exp.name}/{self.spec.label}/run-{self.run}"


def plan(exp: Experiment, skip: Container[int] = ()) -> list[Task]:
    """The runs of an experiment in the order they are started: run index, then config solver order.

    Run 0 of every solver comes before run 1 of any, so a long experiment stopped part way
    (and continued with ``--resume``) has some runs of every solver rather than all runs of
    the first. A task's ``position``, its place in the files, is solver order then run index.

    Parameters
    ----------
    exp : Experiment
        The experiment.
    skip : container of int
        Positions to leave out (runs that already have a complete result).
    """
    tasks = (Task(exp, spec, run, s * exp.runs + run)
             for run in range(exp.runs) for s, spec in enumerate(exp.solvers))
    return [t for t in tasks if t.position not in skip]


def position(exp: Experiment, label: str, run: int) -> int | None:
    """The plan position of the run ``run`` of the solver labelled ``label`` (None if not planned)."""
    labels = [s.label for s in exp.solvers]
    if label not in labels or not 0 <= run < exp.runs:
        return None
    return labels.index(label) * exp.runs + run


# ----------------------------------------------------------------------------- the task

_local = threading.local()


def prepared(exp: Experiment) -> assemble.Prepared:
    """The experiment's prepared problem, built once per worker thread and kept until another is needed.

    Per thread, not per process: a problem's kernel counts the evaluations of the one run
    using it, so two runs at once (threads of one Dask worker) must not share it.
    """
    key = assemble.problem_key(exp)
    cached = getattr(_local, "prepared", None)
    if cached is None or cached[0] != key:
        _local.prepared = None  # let the old problem go before the new one is built
        _local.prepared = (key, assemble.prepare(exp))
    return _local.prepared[1]


def execute(task: Task, progress: loop.Progress | None = None) -> RunResult:
    """Run one task where it is called (in a worker or in the client): the function executors ship."""
    try:
        problem = prepared(task.exp).problem
    except Exception as exc:  # e.g. the dataset is missing on this worker: this run fails, not the sweep
        return loop.failed_result(task.exp, task.spec, task.run, _reason(exc))
    return loop.run_one(task.exp, problem, task.spec, task.run, progress)


def _reason(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


# ----------------------------------------------------------------------------- executors


class Executor:
    """Runs tasks and yields ``(task, result)`` pairs as they finish; a context manager.

    A task that cannot produce a result (its worker died, it raised outside the run)
    yields a result with status ``failed: <reason>`` and no rows.
    """

    #: The ``--executor`` name.
    name = ""
    #: Runs at once (``--jobs``, with its default resolved); None when the cluster decides.
    jobs: int | None = 1

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        """Run ``tasks``; yield each with its result, in order of completion."""
        raise NotImplementedError

    def close(self) -> None:
        """Release workers; pending tasks are cancelled."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class SequentialExecutor(Executor):
    """Every run in this process, one after the other, with per-checkpoint progress."""

    name = "sequential"

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        for task in tasks:
            reporter.start(task.spec.label, task.run, task.exp.runs)
            yield task, execute(task, reporter.checkpoint)


#: Seconds between a worker's checks that the process that started it is still alive.
WATCHDOG_INTERVAL_S = 0.5


def _init_process(threads: int, parent: int) -> None:
    """Set up a worker process: its share of numba's threads, and a watchdog on its parent."""
    import numba

    numba.set_num_threads(threads)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), name="sbpbench-parent-watchdog",
                     daemon=True).start()


def _exit_when_orphaned(parent: int) -> None:
    """End this process as soon as ``parent`` is no longer its parent (the client died, even by SIGKILL)."""
    while os.getppid() == parent:
        time.sleep(WATCHDOG_INTERVAL_S)
    os._exit(1)


class ProcessExecutor(Executor):
    """Runs in ``jobs`` local worker processes (``spawn``), each with its share of numba's threads.

    A worker that dies (killed, out of memory) breaks Python's process pool: its run and
    every run not yet finished end ``failed: BrokenProcessPool ...``; ``--resume`` redoes them.
    Workers watch this process and exit when it dies, even by SIGKILL (see
    :func:`_exit_when_orphaned`).
    """

    name = "processes"

    def __init__(self, jobs: int):
        self.jobs = jobs
        threads = max(1, (os.cpu_count() or 1) // jobs)
        self._pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_init_process, initargs=(threads, os.getpid()))

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        futures = {self._pool.submit(execute, task): task for task in tasks}
        for future in as_completed(futures):
            yield futures[future], _outcome(futures[future], future)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    """Runs on a ``dask.distributed`` cluster: the one at ``scheduler``, or a local one of ``workers`` processes.

    Each run is one task, submitted with ``retries`` (an exception is retried that many
    times). A task whose worker dies is rescheduled on another worker by Dask itself, until
    the scheduler's ``distributed.scheduler.allowed-failures`` is exceeded; then (or when
    the retries are used up) the run ends ``failed: KilledWorker ...`` (or the exception).
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None, retries: int = 1):
        try:
            from dask import distributed
        except ImportError:
            raise UserError("--executor dask: dask.distributed is not installed "
                            "(pip install 'sbpbench[dask]', or make install)") from None
        self._distributed = distributed
        self.retries = retries
        self._cluster = None
        self.jobs = None
        if scheduler is None:
            self.jobs = workers or os.cpu_count() or 1
            self._cluster = distributed.LocalCluster(n_workers=self.jobs, threads_per_worker=1,
                                                     processes=True, dashboard_address=None)
            scheduler = self._cluster.scheduler_address
        try:
            self._client = distributed.Client(scheduler)
        except (OSError, TimeoutError, ValueError) as exc:
            self.close()
            raise UserError(f"--scheduler {scheduler}: cannot connect to a Dask scheduler ({_reason(exc)})") from None

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        tasks = list(tasks)
        token = uuid.uuid4().hex[:8]
        futures = [self._client.submit(execute, task, key=f"sbpbench-{task.exp.name}-{task.position}-{token}",
                                       pure=False, retries=self.retries) for task in tasks]
        owner = {future.key: task for future, task in zip(futures, tasks)}
        try:
            for future in self._distributed.as_completed(futures):
                task = owner[future.key]
                yield task, _outcome(task, future)
                future.release()
        finally:
            self._client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        if getattr(self, "_client", None) is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def _outcome(task: Task, future: Any) -> RunResult:
    """A finished future's result, or a failed run naming why there is none."""
    try:
        return future.result()
    except Exception as exc:
        return loop.failed_result(task.exp, task.spec, task.run, _reason(exc))


def make_executor(name: str | None, jobs: int | None, scheduler: str | None) -> Executor:
    """The executor the ``run`` command's ``--executor``, ``--jobs`` and ``--scheduler`` ask for.

    Defaults: ``dask`` when a scheduler is given, else ``processes`` when ``jobs > 1``,
    else ``sequential``.
    """
    if name is None:
        name = "dask" if scheduler else "processes" if (jobs or 1) > 1 else "sequential"
    if scheduler and name != "dask":
        raise UserError(f"--scheduler is only used with --executor dask, not {name}")
    if name == "sequential":
        if (jobs or 1) > 1:
            raise UserError(f"--jobs {jobs}: the sequential executor runs one run at a time "
                            "(use --executor processes or dask)")
        return SequentialExecutor()
    if name == "processes":
        return ProcessExecutor(jobs or os.cpu_count() or 1)
    return DaskExecutor(scheduler, jobs)


# ----------------------------------------------------------------------------- the sweep


#: A run's checkpoint rows and its summary, as :func:`~sbpbench.results.store.complete_runs` reads them.
KeptRun = tuple[list[dict[str, Any]], dict[str, Any]]


@dataclass
class _Resumed:
    """A run folder to continue: its ``meta.json`` and its complete runs by plan position."""

    directory: Path
    old: dict[str, Any]
    kept: dict[int, KeptRun]


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
    """Run every solver of every experiment ``runs`` times on ``executor`` and write the results.

    Every experiment's data are loaded (and, with ``resume``, its run folder checked
    against the config) before any run folder is created or changed, so that a mistake in
    one experiment leaves no trace of the others. Results are written by this process
    only, atomically, after every finished run, in position order.

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
        The run folders, one per experiment. On Ctrl-C the finished runs are kept,
        ``meta.json`` says ``interrupted`` and the interruption propagates.

    Raises
    ------
    UserError
        Two experiments share a name, or a folder to resume does not match its config.
    """
    reporter = reporter or _Silent()
    names = [exp.name for exp in experiments]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UserError(f"two configs define the experiment {dup!r}; give one another 'name'")
    if resume_from is not None and len(experiments) != 1:
        raise UserError("--resume-from continues one run folder: give exactly one config")
    starts = [_start(exp, results_root, executor, reporter, resume or resume_from is not None, resume_from)
              for exp in experiments]
    opened = [_open(start, results_root, executor) for start in starts]
    if not isinstance(executor, SequentialExecutor):
        _local.__dict__.clear()  # the runs build their problems elsewhere
    by_name = {exp.name: o for exp, o in zip(experiments, opened)}
    remaining = {exp.name: len(o.tasks) for exp, o in zip(experiments, opened)}
    reporter.planned(sum(remaining.values()))
    try:
        for task, result in executor.results([t for o in opened for t in o.tasks], reporter):
            by_name[task.exp.name].writer.add_run(result.rows, result.summary, task.position)
            remaining[task.exp.name] -= 1
            reporter.end(result.summary)
    except KeyboardInterrupt:
        for name, o in by_name.items():
            if remaining[name]:
                o.writer.meta["interrupted"] = True
                o.writer.flush(finished=True)
        raise
    for o in opened:
        o.writer.flush(finished=True)
    return [o.writer.directory for o in opened]


def _start(exp: Experiment, results_root: Path, executor: Executor, reporter: Reporter, resume: bool,
           resume_from: Path | None) -> _Start:
    """Load an experiment's data and decide where its results go; create or change nothing.

    Raises
    ------
    UserError
        The folder to resume holds another experiment, another resolved configuration,
        or unreadable files.
    """
    prep = prepared(exp)
    reporter.loaded(exp, prep.dataset["n_train"], prep.dataset["n_test"], prep.seconds)
    resolved = assemble.resolved_config(exp, prep)
    meta = {"experiment": exp.name, "config_file": exp.source, "config": exp.raw, "resolved": resolved,
            "executor": executor.name, "jobs": executor.jobs, **environment()}
    if prep.dataset_copy:
        meta["dataset_copy"] = prep.dataset_copy
    directory = (resume_from or newest_run(results_root / exp.name)) if resume else None
    if directory is None:
        return _Start(exp, meta)

    old = read_meta(directory)
    resolved = json.loads(json.dumps(resolved, default=str))  # as meta.json holds it
    if old.get("experiment") != exp.name:
        raise UserError(f"{directory}: holds experiment {old.get('experiment')!r}, not {exp.name!r} "
                        f"({exp.source})")
    if (key := first_difference(comparable(old.get("resolved")), comparable(resolved))) is not None:
        raise UserError(f"{directory}/meta.json: key 'resolved.{key}' differs from the config {exp.source} "
                        f"({_at(old.get('resolved'), key)!r} there, {_at(resolved, key)!r} now); "
                        "run without --resume to start a new run folder")
    kept: dict[int, KeptRun] = {}
    for rows, summary in complete_runs(directory, old):
        pos = position(exp, str(summary["solver"]), int(summary["run"]))
        if pos is not None:
            kept.setdefault(pos, (rows, summary))
    return _Start(exp, meta, _Resumed(directory, old, kept))


def _open(start: _Start, results_root: Path, executor: Executor) -> _Opened:
    """Open an experiment's run folder (a new one, or the one to resume) and write its files."""
    resumed = start.resumed
    if resumed is None:
        writer = ResultsWriter(new_run_dir(results_root, start.exp.name), start.meta)
        writer.flush()
        return _Opened(writer, plan(start.exp))

    writer = ResultsWriter(resumed.directory,
                           {k: v for k, v in resumed.old.items() if k not in ("interrupted", "finished")})
    for pos, (rows, summary) in resumed.kept.items():
        writer.add_run(rows, summary, pos, flush=False)
    tasks = plan(start.exp, skip=resumed.kept)
    writer.meta.setdefault("resumes", []).append(
        {"time": now(), "kept": len(resumed.kept), "redone": len(tasks), "executor": executor.name,
         "jobs": executor.jobs, "host": platform.node()})
    writer.flush()
    # a promoted copy being completed: its compressed curves are now in curves.csv
    (resumed.directory / "curves.csv.gz").unlink(missing_ok=True)
    return _Opened(writer, tasks)


def _at(value: Any, key: str) -> Any:
    """The value at a dotted key as :func:`~sbpbench.results.first_difference` names it (None if absent)."""
    for part in key.replace("[", ".[").split("."):
        if part.startswith("["):
            index = int(part[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
    return value


def run_experiment(exp: Experiment, results_root: Path, reporter: Reporter | None = None) -> Path:
    """Run every solver of an experiment ``exp.runs`` times, in this process, and write the results.

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
        ``interrupted`` and the interruption propagates.
    """
    return run_experiments([exp], results_root, SequentialExecutor(), reporter)[0]
