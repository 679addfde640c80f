"""Where runs execute: three executors of independent tasks.

A task is one run, (experiment, solver, run index). Runs are independent of order and
place (each draws from its own generator, derived from the experiment seed, the run index
and the solver's random stream; see :func:`sbpbench.execution.loop.run_rng`), so they can run
anywhere:

* :class:`SequentialExecutor`: one after the other in this process (with per-checkpoint
  progress);
* :class:`ProcessExecutor`: ``--jobs N`` local processes (``spawn`` start method: numba's
  thread pool and ``fork`` do not mix);
* :class:`DaskExecutor`: a ``dask.distributed`` cluster, existing (``--scheduler
  tcp://HOST:PORT``, checked by :func:`scheduler_address` and :func:`_check_scheduler` before a
  client connects) or started locally; every connection and every wait for workers is bounded
  by Dask's connect timeout (:func:`dask_timeout`).

A task carries only the experiment and rebuilds its problem where it runs, through the
same :func:`sbpbench.experiment.assemble.prepare` as the client, kept in a
:class:`~sbpbench.execution.problems.ProblemCache` that the executor gives each thread that
runs tasks (the problem of its solver entry, which a sweep of the kernel or the problem
changes), with a :class:`~sbpbench.execution.loop.WarmUps` record per process: the sequential
executor owns both, a worker process makes its own when it starts, and a Dask worker gets them
from a plugin the executor registers (:func:`_run_state`). It returns its
:class:`~sbpbench.execution.loop.RunResult`; only the client writes files
(:mod:`sbpbench.execution.sweep`), which makes the plan (:func:`sbpbench.execution.sweep.plan`).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sbpbench.errors import UserError, shown
from sbpbench.execution import guard, loop
from sbpbench.execution.loop import RunResult
from sbpbench.execution.problems import ProblemCache
from sbpbench.experiment.config import Experiment, SolverSpec
from sbpbench.solvers.external import load_file


class Reporter(Protocol):
    """What is told about the progress of a set of experiments (the CLI prints it).

    ``start``, ``checkpoint`` and ``warming_up`` are called only when runs execute in the
    client's process (the sequential executor), ``workers`` only by the process executor;
    ``planned``, ``loaded`` and ``end`` always, and ``resumed`` for each run folder that is continued. A
    protocol, so that the command line can implement it without importing this module
    (which would slow ``sbpbench --help``); subclassing it gives silent defaults.
    """

    def planned(self, total: int) -> None:
        """``total`` runs are about to execute."""
        return None

    def loaded(self, exp: Experiment, n_train: int, n_test: int, seconds: float, copy: str | None = None) -> None:
        """The data are loaded (``copy``: which copy of a registered dataset, when it says)."""
        return None

    def resumed(self, exp: Experiment, directory: Path, kept: int, todo: int) -> None:
        """The run folder ``directory`` is continued: ``kept`` runs are kept, ``todo`` are (re)done."""
        return None

    def start(self, solver: str, run: int, runs: int) -> None:
        """A run begins."""
        return None

    def checkpoint(self, fraction: float, row: dict[str, Any]) -> None:
        """A checkpoint was measured; ``fraction`` of the run's budget is spent."""
        return None

    def warming_up(self, solver: str | None) -> None:
        """The run in this process starts (``solver``, its name) or ends (None) a warm-up not done
        before here, which compiles the solver's numba code or loads it from the disk cache."""
        return None

    def workers(self, count: int) -> None:
        """``count`` worker processes are being started (``--jobs``); called once, before their first run."""
        return None

    def end(self, summary: dict[str, Any]) -> None:
        """A run ended (``summary`` as in ``meta.json``'s ``runs``, with ``experiment``)."""
        return None


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


# ----------------------------------------------------------------------------- the task

def execute(task: Task, problems: ProblemCache, warm_ups: loop.WarmUps,
            progress: loop.Progress | None = None, notice: loop.WarmUpNotice | None = None) -> RunResult:
    """Run one task where it is called (in a worker or in the client).

    Parameters
    ----------
    task : Task
        The run.
    problems : ProblemCache
        Where its problem is taken from, or built and kept (the calling thread's own).
    warm_ups : loop.WarmUps
        The warm-ups done for earlier runs where it runs (its process's, or its executor's).
    progress : callable, optional
        Told about every checkpoint.
    notice : callable, optional
        Told about its warm-up (:meth:`~sbpbench.execution.loop.WarmUps.warm_up`).

    Returns
    -------
    RunResult
        Its rows and summary; ``failed: <reason>`` when its problem cannot be built here.
    """
    try:
        for path in {spec.path for spec in task.exp.solvers if spec.path is not None}:
            load_file(path)  # a worker process imports the solver files itself
        problem = problems.prepared(task.exp, task.spec, task.run).problem
    except Exception as exc:  # e.g. the dataset is missing on this worker: this run fails, not the sweep
        return loop.failed_result(task.exp, task.spec, task.run, guard.reason(exc))
    return loop.run_one(task.exp, problem, task.spec, task.run, progress, warm_ups, notice)


# ----------------------------------------------------------------------------- executors


class Executor:
    """Runs tasks and yields ``(task, result)`` pairs as they finish; a context manager.

    A task that cannot produce a result (its worker died, it raised outside the run)
    yields a result with status ``failed: <reason>`` and no rows. On Ctrl-C
    (:class:`KeyboardInterrupt` while :meth:`results` waits), :meth:`running` names the runs
    that had started, and :meth:`close` stops the workers at once, without waiting for them.
    """

    #: The ``--executor`` name.
    name = ""
    #: Runs at once (``--jobs``, with its default resolved); None when the cluster decides.
    jobs: int | None = 1
    #: Where the runs take their problems from when they run in this process (the sequential
    #: executor's cache: the sweep builds every problem there to check it first, so that each
    #: is built once); None when they run elsewhere.
    problems: ProblemCache | None = None

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        """Run ``tasks``; yield each with its result, in order of completion."""
        raise NotImplementedError

    def running(self) -> list[Task]:
        """The tasks started and not finished when :meth:`results` stopped (as far as the executor knows)."""
        return []

    def close(self) -> None:
        """Release workers; pending tasks are cancelled, running ones stopped."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class SequentialExecutor(Executor):
    """Every run in this process, one after the other, with per-checkpoint progress.

    Its :attr:`problems` keep every experiment's problem (they were built to check the
    experiments before any run) until the runs move on to another experiment.
    """

    name = "sequential"

    def __init__(self) -> None:
        self.problems: ProblemCache = ProblemCache(experiments=None)
        self._warm_ups = loop.WarmUps()
        self._current: Task | None = None

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        previous: Experiment | None = None
        for task in tasks:
            if previous is not None and previous.name != task.exp.name:
                self.problems.release(previous)  # its runs are done: its problem and row cache go
            previous = task.exp
            reporter.start(task.spec.label, task.run, task.exp.runs_of(task.spec))
            self._current = task
            result = execute(task, self.problems, self._warm_ups, reporter.checkpoint, reporter.warming_up)
            self._current = None
            yield task, result
        if previous is not None:
            self.problems.release(previous)

    def running(self) -> list[Task]:
        return [self._current] if self._current is not None else []


#: Seconds between a worker's checks that the process that started it is still alive.
WATCHDOG_INTERVAL_S = 0.5


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore Ctrl-C (SIGINT) in this process meanwhile, so that processes started meanwhile ignore it.

    A terminal sends Ctrl-C to every process of its foreground group, workers included. A
    process started while SIGINT is ignored inherits that (Python installs its handler only
    where SIGINT is at its default), so workers never raise KeyboardInterrupt mid-run nor
    print tracebacks: the client alone decides, and stops them (:meth:`Executor.close`).
    Outside the main thread, where signal handlers cannot be changed, nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass
class _WorkerProcess:
    """What a worker process of :class:`ProcessExecutor` keeps between its tasks (one thread runs them)."""

    started: Any  # where it says which task it starts (the client's queue)
    problems: ProblemCache
    warm_ups: loop.WarmUps


#: Seconds between the client's wake-ups while it waits for runs (see :func:`_as_completed`).
WAKE_S = 0.2


def _as_completed(futures: Iterable[Future]) -> Iterator[Future]:
    """The futures as they complete, waking every :data:`WAKE_S` seconds.

    The OS may hand Ctrl-C to any thread of the client (the pool's, the progress line's); Python
    then raises KeyboardInterrupt in the main thread only when it next runs, which a wait without
    a timeout (``concurrent.futures.as_completed``) postpones until a run ends.
    """
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=WAKE_S, return_when=FIRST_COMPLETED)
        yield from done


#: The state of this process when it is a worker of :class:`ProcessExecutor` (set by its initializer,
#: :func:`_init_process`, the only hook a process pool gives; never set in the client).
_worker_process: _WorkerProcess | None = None


def _init_process(threads: int, parent: int, started: Any) -> None:
    """Set up a worker process: its share of numba's threads, no Ctrl-C, its state (where to say
    which task it starts, its problems and warm-ups), and a watchdog on its parent."""
    import numba

    global _worker_process
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client stops the workers (see sigint_ignored)
    _worker_process = _WorkerProcess(started, ProblemCache(), loop.WarmUps())
    numba.set_num_threads(threads)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), name="sbpbench-parent-watchdog",
                     daemon=True).start()


def _execute_in_worker(task: Task) -> RunResult:
    """:func:`execute` in a worker process, after telling the client that ``task`` starts."""
    state = _worker_process
    assert state is not None, "called outside a worker process of ProcessExecutor"
    state.started.put((task.exp.name, task.position))
    return execute(task, state.problems, state.warm_ups)


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
    :func:`_exit_when_orphaned`). They ignore Ctrl-C; when the client is interrupted,
    :meth:`close` terminates them (the pool's own shutdown would wait for the running runs).
    """

    name = "processes"

    def __init__(self, jobs: int):
        self.jobs: int = jobs
        threads = max(1, (os.cpu_count() or 1) // jobs)
        context = multiprocessing.get_context("spawn")
        self._started = context.SimpleQueue()  # (experiment, position) of every task a worker starts
        self._pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_process,
                                         initargs=(threads, os.getpid(), self._started))
        self._futures: dict[Any, Task] = {}
        self._began: set[tuple[str, int]] = set()

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        tasks = list(tasks)
        if not self._futures and tasks:  # the pool starts its workers (seconds each) at the first submits
            reporter.workers(min(self.jobs, len(tasks)))
        with sigint_ignored():
            futures = {self._pool.submit(_execute_in_worker, task): task for task in tasks}
        self._futures.update(futures)
        for future in _as_completed(futures):
            self._take_started()  # a pipe: read as it goes, so that a worker never waits to write
            yield futures[future], _outcome(futures[future], future)

    def _take_started(self) -> None:
        """Move what the workers said they started from the queue into ``self._began``."""
        while not self._started.empty():
            self._began.add(self._started.get())

    def running(self) -> list[Task]:
        self._take_started()
        return [task for future, task in self._futures.items()
                if not future.done() and (task.exp.name, task.position) in self._began]

    def close(self) -> None:
        if any(not future.done() for future in self._futures):  # interrupted: do not wait for the runs
            for process in list((getattr(self._pool, "_processes", None) or {}).values()):
                process.terminate()
        # The pool's own thread cancels the runs not started. Not here: a future cancelled by this
        # thread while that one marks the runs of terminated workers failed stops it with a
        # traceback (InvalidStateError, CPython 3.11's concurrent.futures).
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._started.close()


class DaskExecutor(Executor):
    """Runs on a ``dask.distributed`` cluster: the one at ``scheduler``, or a local one of ``workers`` processes.

    Each run is one task, submitted with ``retries`` (an exception is retried that many
    times). A task whose worker dies is rescheduled on another worker by Dask itself, until
    the scheduler's ``distributed.scheduler.allowed-failures`` is exceeded; then (or when
    the retries are used up) the run ends ``failed: KilledWorker ...`` (or the exception).

    An existing scheduler's address is checked and the scheduler asked who it is within
    :attr:`timeout` seconds (:func:`dask_timeout`), and one worker at least must join it within
    as long, else :class:`~sbpbench.errors.UserError`; when the cluster has no worker for as long
    while runs wait, those runs end ``failed: no Dask worker ...``.
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
        self._stopped_running: list[Task] = []
        self._owner: dict[Any, Task] = {}
        self._abandoned: dict[Any, str] = {}  # the keys of the runs given up for want of workers, and why
        self.timeout = dask_timeout()
        if scheduler is None:
            self.jobs = workers or os.cpu_count() or 1
            with sigint_ignored():  # its worker processes leave Ctrl-C to this client
                self._cluster = distributed.LocalCluster(n_workers=self.jobs, threads_per_worker=1,
                                                         processes=True, dashboard_address=None,
                                                         worker_class=_quick_nanny(distributed.Nanny))
            address = self._cluster.scheduler_address
        else:
            address = scheduler_address(scheduler)
            _check_scheduler(scheduler, address, self.timeout)
        try:
            self._client = distributed.Client(address, timeout=self.timeout)
        except Exception as exc:  # OSError, TimeoutError, ...: one line, whatever Dask raised
            self.close()
            raise UserError(f"--scheduler {shown(scheduler or address)}: cannot connect to a Dask scheduler "
                            f"({guard.reason(exc)})") from None
        if self._cluster is None:  # a scheduler without workers would keep the runs waiting
            try:
                self._client.wait_for_workers(1, timeout=self.timeout)
            except Exception:
                self.close()
                raise UserError(f"--scheduler {shown(scheduler)}: no Dask worker joined the scheduler within "
                                f"{self.timeout:g} s (start some: dask worker {address}; {TIMEOUT_HINT})") from None
        self._client.register_plugin(_run_state(distributed), name=RUN_STATE)
        if self._cluster is not None:
            self._client.run(_quiet_when_cancelled)

    def results(self, tasks: Iterable[Task], reporter: Reporter) -> Iterator[tuple[Task, RunResult]]:
        tasks = list(tasks)
        token = uuid.uuid4().hex[:8]
        futures = [self._client.submit(_execute_on_dask, task, key=f"sbpbench-{task.exp.name}-{task.position}-{token}",
                                       pure=False, retries=self.retries) for task in tasks]
        owner = {future.key: task for future, task in zip(futures, tasks)}
        self._owner = owner
        try:
            for future in self._completed(futures):
                task = owner[future.key]
                if future.key in self._abandoned:
                    yield task, loop.failed_result(task.exp, task.spec, task.run, self._abandoned[future.key])
                else:
                    yield task, _outcome(task, future)
                future.release()
        except KeyboardInterrupt:
            self._stopped_running = self._processing(owner)
            if self._cluster is None:  # a cluster of others: its workers are told to drop the runs
                self._client.cancel([f for f in futures if not f.done()])
            raise  # a local cluster is closed (its workers killed) by close()
        except BaseException:
            self._client.cancel([f for f in futures if not f.done()])
            raise

    def _completed(self, futures: list[Any]) -> Iterator[Any]:
        """The futures as they complete, waking every :data:`WAKE_S` seconds (for Ctrl-C).

        The scheduler is asked for its workers every :data:`WORKERS_CHECK_S` seconds while no
        run completes; once it has had none for :attr:`timeout` seconds, the runs not finished
        come at once, cancelled, their keys in ``_abandoned`` with the reason.
        """
        completed = self._distributed.as_completed(futures)
        idle_since: float | None = None
        next_check = time.monotonic() + WORKERS_CHECK_S
        while not completed.is_empty():
            batch = completed.next_batch(block=False)
            yield from batch
            if batch:
                continue
            time.sleep(WAKE_S)
            if time.monotonic() < next_check:
                continue
            next_check = time.monotonic() + WORKERS_CHECK_S
            if self._workers():
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > self.timeout:
                pending = [f for f in futures if not f.done()]
                why = f"no Dask worker for {self.timeout:g} s: the run was not started ({TIMEOUT_HINT})"
                self._abandoned = dict.fromkeys((f.key for f in pending), why)
                self._client.cancel(pending)
                yield from pending
                return

    def _workers(self) -> int:
        """How many workers the scheduler has now (0 when it does not answer)."""
        try:
            return len(self._client.nthreads())
        except Exception:  # the scheduler is gone: no worker will come
            return 0

    def _processing(self, owner: dict[Any, Task]) -> list[Task]:
        """The tasks of ``owner`` that a worker is executing now (not those only queued on it)."""
        if not owner:
            return []
        try:
            keys = {key for held in self._client.run(_executing, on_error="ignore").values()
                    if isinstance(held, list) for key in held}
        except Exception:  # the scheduler is gone: nothing is known to run
            return []
        return [task for key, task in owner.items() if key in keys]

    def running(self) -> list[Task]:
        # asked when Ctrl-C stopped results(), or else now (Ctrl-C came while a result was written)
        return self._stopped_running or self._processing(self._owner)

    def close(self) -> None:
        if getattr(self, "_client", None) is not None:
            self._client.close()
        if self._cluster is not None:
            nannies = logging.getLogger("distributed.nanny")
            level = nannies.level
            nannies.setLevel(logging.ERROR)  # not a warning per worker killed mid-run (DASK_STOP_S)
            try:
                self._cluster.close()
            finally:
                nannies.setLevel(level)


#: Dask's configuration key that bounds, in sbpbench, every connection to a scheduler and every
#: wait for its workers (:func:`dask_timeout`; Dask's default: 30 s).
DASK_TIMEOUT_KEY = "distributed.comm.timeouts.connect"
#: How to change it, for the messages that say it ran out.
TIMEOUT_HINT = "wait longer with DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=SECONDS"
#: Protocols of a ``--scheduler`` address.
SCHEDULER_PROTOCOLS = ("tcp", "tls")


def dask_timeout() -> float:
    """Seconds of :data:`DASK_TIMEOUT_KEY` (Dask's configuration, e.g. its environment variable
    ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=60``); ``dask.distributed`` must be imported."""
    import dask
    from dask.utils import parse_timedelta

    return float(parse_timedelta(dask.config.get(DASK_TIMEOUT_KEY), default="seconds"))


def scheduler_address(text: str) -> str:
    """A ``--scheduler`` address checked before any connection: ``PROTOCOL://HOST:PORT``.

    The protocol is one of :data:`SCHEDULER_PROTOCOLS` (``tcp`` when none is written), the host
    a name or an IPv4 address, or an IPv6 address in brackets, and the port a number from 1 to
    65535. Returns the address with its protocol.

    Raises
    ------
    UserError
        One line naming the address and what was expected.
    """
    expected = "expected tcp://HOST:PORT or tls://HOST:PORT"
    protocol, sep, rest = text.partition("://")
    if not sep:
        protocol, rest = "tcp", text
    if protocol not in SCHEDULER_PROTOCOLS:
        raise UserError(f"--scheduler {shown(text)}: protocol {shown(protocol)} is not supported ({expected})")
    host, sep, port = rest.rpartition(":")
    if not sep or not re.fullmatch(r"[0-9]{1,5}", port):
        raise UserError(f"--scheduler {shown(text)}: no port number after the host ({expected})")
    if not 1 <= int(port) <= 65535:
        raise UserError(f"--scheduler {shown(text)}: port {int(port)} is outside 1-65535")
    name = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    pattern = r"[0-9A-Fa-f:.]+" if name is not host else r"[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?"
    if not re.fullmatch(pattern, name) or (name is host and ":" in host):
        raise UserError(f"--scheduler {shown(text)}: {shown(host)} is not a host name or IP address ({expected}; "
                        "an IPv6 address in brackets)")
    return f"{protocol}://{host}:{int(port)}"


def _check_scheduler(given: str, address: str, timeout: float) -> None:
    """Ask the scheduler at ``address`` who it is, within ``timeout`` seconds, before a client connects.

    Dask's client waits without end for a port that accepts and never answers, and reads a
    reply of another protocol as a message of any length (3 EiB, from an HTTP server's first
    bytes): one identity request, bounded in time, tells them from a scheduler.

    Raises
    ------
    UserError
        Nothing answers in time, the answer is not a Dask message, or not a scheduler's.
    """
    import asyncio

    from distributed.comm import connect
    from distributed.security import Security

    async def identity() -> Any:  # with the TLS settings a client takes from Dask's configuration
        comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        finally:
            comm.abort()

    where = f"--scheduler {shown(given)}"
    try:
        answer = asyncio.run(asyncio.wait_for(identity(), timeout))
    except TimeoutError:  # the port accepts but does not answer, or nothing listens
        raise UserError(f"{where}: no Dask scheduler answered within {timeout:g} s ({TIMEOUT_HINT})") from None
    except Exception as exc:  # another protocol's bytes read as a Dask message, a refused connection, ...
        raise UserError(f"{where}: no Dask scheduler answers there ({guard.reason(exc)})") from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise UserError(f"{where}: something answers there, but not a Dask scheduler (it says it is "
                        f"{shown(answer.get('type') if isinstance(answer, dict) else answer)})")


#: Seconds between the client's questions to a Dask scheduler about its workers while no run completes.
WORKERS_CHECK_S = 1.0

#: Seconds a local Dask worker is given to stop before it is killed (a running run never stops by itself).
DASK_STOP_S = 0.25


def _quick_nanny(nanny: type) -> type:
    """Dask's ``Nanny`` that kills its worker process :data:`DASK_STOP_S` s after asking it to
    close (Dask's default: 4 s, in which a worker finishes nothing: its run goes on in a thread)."""

    class QuickNanny(nanny):
        async def close(self, timeout: float = DASK_STOP_S / 0.8, reason: str = "nanny-close") -> Any:
            return await super().close(timeout=timeout, reason=reason)

    return QuickNanny


#: The name of the worker plugin holding what a Dask worker keeps between its runs (:func:`_run_state`).
RUN_STATE = "sbpbench-run-state"


def _run_state(distributed: Any) -> Any:
    """A Dask worker plugin keeping, in every worker it is set up on (restarted ones included),
    a :class:`ProblemCache` per thread that runs tasks and one :class:`~sbpbench.execution.loop.WarmUps`
    record that they share (one process). Registering it again (another executor) starts afresh.

    Made here rather than at import, since ``dask.distributed`` is imported only when used."""

    class RunState(distributed.WorkerPlugin):
        def setup(self, worker: Any) -> None:
            self.warm_ups = loop.WarmUps()
            self._threads = threading.local()

        def problems(self) -> ProblemCache:
            """The calling thread's problems."""
            if not hasattr(self._threads, "problems"):
                self._threads.problems = ProblemCache()
            return self._threads.problems

    return RunState()


def _execute_on_dask(task: Task) -> RunResult:
    """:func:`execute` in a thread of a Dask worker, with what the worker keeps for it (:func:`_run_state`)."""
    from distributed import get_worker

    state: Any = get_worker().plugins[RUN_STATE]  # a RunState
    return execute(task, state.problems(), state.warm_ups)


def _quiet_when_cancelled() -> None:
    """In a worker of our own local cluster: no warning when Ctrl-C cancels the run it executes."""
    logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)


def _executing(dask_worker: Any) -> list[Any]:
    """The keys of the tasks a Dask worker is executing now (run on every worker by the client)."""
    return [ts.key for ts in dask_worker.state.executing]


def _outcome(task: Task, future: Any) -> RunResult:
    """A finished future's result, or a failed run naming why there is none.

    Whatever the task raised where it ran is that run's failure, ``SystemExit`` and
    ``KeyboardInterrupt`` included (a worker ignores Ctrl-C: they came from code); it is read
    as the future's exception, not re-raised here, so that only the user's Ctrl-C in this
    process interrupts the client.
    """
    try:
        exc = future.exception()
        if exc is None:
            return future.result()
    except Exception as lost:  # cancelled, or the cluster lost it
        exc = lost
    return loop.failed_result(task.exp, task.spec, task.run, guard.reason(exc))


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
