"""Solver code kept in its place: whatever it raises, and a step that never returns, end its run only.

The runner (:func:`sbpbench.execution.loop.run_one`) runs a solver's code (an external solver
file's as a built-in one's) for one run, and turns everything that code raises into that run's
status ``failed: <reason>``: its exceptions, and also :class:`SystemExit` (``sys.exit`` in a
step) and :class:`KeyboardInterrupt`, which would otherwise end the whole ``sbpbench run``
with no summary and an unfinished ``meta.json``. The other runs go on and the command ends with
exit code 3.

**The user's Ctrl-C is told apart from a solver's KeyboardInterrupt.** A KeyboardInterrupt
ends the whole run (as Ctrl-C always did) only when this process received SIGINT while the run
executed: :func:`sigints_counted` wraps the SIGINT handler in place (Python's, which raises
KeyboardInterrupt) so that it counts each signal before acting, and :func:`users_interrupt`
compares the count with the one at the run's start. Any other KeyboardInterrupt was raised by
code (``raise KeyboardInterrupt`` in a solver) and fails the run. Where SIGINT is ignored (the
``--jobs`` and Dask worker processes, which leave Ctrl-C to the client) or outside the main
thread (a Dask worker's threads; Python runs signal handlers in the main thread only), no
KeyboardInterrupt can come from a signal, so every one fails its run.

**A step that does not return is ended.** :func:`watchdog` raises :class:`StepTimeout` in the
thread of a step that outlives its limit (the runner's: the seconds budget left plus a grace;
see :func:`sbpbench.execution.loop.step_limit`). In the main thread on POSIX (the sequential
executor, a ``--jobs`` worker) it arms a real-time timer (``setitimer``) whose SIGALRM handler
raises there, which also interrupts a sleep or a blocking read; elsewhere (a Dask worker's
thread, a system without ``setitimer``, or when a timer is already armed) a timer thread raises
it asynchronously in the step's thread (CPython's ``PyThreadState_SetAsyncExc``), which the
step sees at its next Python instruction: a step stuck in one long C call (a sleep, a compiled
loop) is ended only when that call returns. Nothing else can stop a running Python function in
its own process; ending the worker instead would lose the other runs of that worker.

**A solver cannot end the process with** ``os._exit``. While :func:`exits_refused` is open (the
runner opens it around a run's solver code), ``os._exit`` called in that thread of this process
raises :class:`SolverFault` naming the solver instead, so that the run fails and the others go
on; elsewhere (other threads, such as a worker's watchdog on its parent, and processes forked
meanwhile, which end with ``os._exit``) it ends the process as always. Nothing stops a solver
that kills its own process by other means (a signal, ``os.abort``, a C library's ``_exit``):
under ``--jobs`` or Dask such a run fails with its worker; in the sequential executor the
command ends with it.

**A solver cannot change the data of other runs.** The problem's arrays are read-only
(:class:`~sbpbench.problem.Problem`), so a write raises at once; :func:`~sbpbench.problem.wrote_read_only` tells
that refusal (numpy's, or numba's when a compiled function writes) from other errors, so that
the run's status names the solver and what it did.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

#: SIGINTs this process received while :func:`sigints_counted` was open (anywhere).
_sigints = 0


class StepTimeout(Exception):
    """A solver's step (or its warm-up) did not return within its limit (:func:`watchdog`)."""

    def __str__(self) -> str:
        return super().__str__() or "a step did not return within its time limit"


class SolverFault(Exception):
    """A solver broke a rule the runner checks (e.g. a snapshot column named as a measured one)."""


#: ``os._exit`` as Python has it, and the platform module that also holds it (``posix``, ``nt``).
_real_exit = os._exit
_platform = sys.modules.get(os.name)
#: The solver whose code each thread runs under :func:`exits_refused` (``who``, and the process id).
_guarded = threading.local()
#: How many :func:`exits_refused` are open in this process (``os._exit`` is replaced while any is),
#: under its lock.
_refusing = 0
_refusing_lock = threading.Lock()


def _exit_refused(status: int) -> NoReturn:
    """``os._exit`` while :func:`exits_refused` is open: raises in a guarded thread of this process."""
    who = getattr(_guarded, "who", None)
    if who is None or getattr(_guarded, "pid", None) != os.getpid():
        _real_exit(status)
    raise SolverFault(f"{who} called os._exit({status}), which would end the whole sbpbench process "
                      "(end a run by returning from its step or raising)")


def _set_exit(function: Any) -> None:
    """Make ``function`` the ``os._exit`` of this process (in ``os`` and in its platform module)."""
    os._exit = function
    if _platform is not None and hasattr(_platform, "_exit"):
        setattr(_platform, "_exit", function)  # noqa: B010  # (a module mypy knows no _exit of)


@contextlib.contextmanager
def exits_refused(who: str) -> Iterator[None]:
    """While open, ``os._exit`` called in this thread raises :class:`SolverFault` naming ``who``
    instead of ending the process (see the module docstring); other threads and forked
    processes exit as always."""
    global _refusing
    _guarded.who, _guarded.pid = who, os.getpid()
    with _refusing_lock:
        _refusing += 1
        if _refusing == 1:
            _set_exit(_exit_refused)
    try:
        yield
    finally:
        _guarded.who = None
        with _refusing_lock:
            _refusing -= 1
            if _refusing == 0:
                _set_exit(_real_exit)


def sigints() -> int:
    """How many SIGINTs this process has received while :func:`sigints_counted` was open."""
    return _sigints


@contextlib.contextmanager
def sigints_counted() -> Iterator[None]:
    """While open in the main thread, count every SIGINT before the handler in place acts on it.

    Nothing changes where SIGINT is ignored or at the system's default (no KeyboardInterrupt
    comes from it there) and outside the main thread (handlers cannot be changed there, and no
    signal reaches that thread's code).
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return

    def counted(signum: int, frame: Any) -> None:
        global _sigints
        _sigints += 1
        previous(signum, frame)

    signal.signal(signal.SIGINT, counted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def users_interrupt(exc: BaseException, since: int) -> bool:
    """Whether ``exc`` is the user's Ctrl-C: a KeyboardInterrupt after a SIGINT counted since
    :func:`sigints` said ``since`` (else it was raised by code, and fails only its run)."""
    return isinstance(exc, KeyboardInterrupt) and _sigints > since


def reason(exc: BaseException) -> str:
    """``Type: message`` of an exception, on one line (a run's ``failed:`` status)."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())


@contextlib.contextmanager
def watchdog(seconds: float, what: str) -> Iterator[None]:
    """Raise :class:`StepTimeout` (``what`` its message) in this thread if the body still runs after ``seconds``.

    Nothing is armed when ``seconds`` is infinite. See the module docstring for how the
    exception reaches the body: a SIGALRM timer in the main thread on POSIX where no other
    timer is armed, else a timer thread raising it asynchronously.
    """
    if not math.isfinite(seconds):
        yield
        return
    seconds = max(seconds, 1e-3)  # setitimer takes 0 as "disarm"
    try:
        with _alarm(seconds) if _alarm_usable() else _async_timer(seconds):
            yield
    except StepTimeout as exc:
        if exc.args:
            raise
        raise StepTimeout(what) from None


def _alarm_usable() -> bool:
    """A SIGALRM timer can be used here: main thread, POSIX, no handler nor timer of someone else."""
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0)


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """A real-time timer whose SIGALRM raises :class:`StepTimeout` in the main thread."""
    def expired(signum: int, frame: Any) -> None:
        raise StepTimeout()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _async_timer(seconds: float) -> Iterator[None]:
    """A timer thread that raises :class:`StepTimeout` in this thread once ``seconds`` have passed."""
    target = threading.get_ident()
    lock = threading.Lock()
    state = {"armed": True, "fired": False}

    def fire() -> None:
        with lock:
            if state["armed"]:
                _set_async_exc(target, StepTimeout)
                state["fired"] = True

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            state["armed"] = False
            if state["fired"]:  # raised too late to reach the body: not into the code after it
                _set_async_exc(target, None)
        timer.cancel()


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in the thread ``thread_id`` at its next Python instruction (None: cancel a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exc) if exc is not None else None)
