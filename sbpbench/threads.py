"""Running whichever of two equivalent implementations is faster on this machine now.

A pass split over numba's threads is faster than the same pass on one thread while the
other cores are idle, and far slower while they are busy: a parallel region waits for its
slowest thread, and a thread that the OS has descheduled comes back a time slice later,
milliseconds for a pass of tens of microseconds (``scripts/bench_sbp_iteration.py`` times
SBP's iteration with a core kept busy). Which one pays is a property of the moment, so
:class:`FasterOfTwo` measures it as it goes: it times every call (one clock read before and
after), keeps to the one whose calls took less on average over the last window of each,
leaves the threaded one at once at a call that takes :data:`STRAGGLER` times the one-thread
mean (a thread that waited for a core, not the jitter of a shared machine, which slows
both), and tries it again after a wait that doubles each time it fails again. The first
threaded call after a stretch on one thread is not judged: it wakes numba's threads, which
have gone to sleep, and the first of all starts them.

Only the speed depends on the choice: the two must return the same numbers bit for bit
(each caller's tests check that), so a run's results do not depend on the machine's load.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from sbpbench.errors import UserError, shown

#: A threaded call this many times slower than the one-thread mean is a straggler: back to one thread.
STRAGGLER = 8.0
#: Calls in a window over which the mean times of the two are compared.
WINDOW = 256
#: Calls on one thread before the threaded one is tried again, at first; doubles each time
#: it fails again, up to :data:`LONGEST_WAIT`.
FIRST_WAIT = 1024
LONGEST_WAIT = 1 << 16


#: The environment variables that set how many threads numba and OpenMP (the libraries of
#: scikit-learn and SciPy) start, with the values they take: numba's a whole number, OpenMP's a
#: list of them (one per nesting level), each at least 1.
THREAD_VARIABLES = {"NUMBA_NUM_THREADS": "a whole number of threads >= 1",
                    "OMP_NUM_THREADS": "a whole number of threads >= 1, or a list of them separated by commas"}
_COUNT = re.compile(r"\s*\+?[0-9]+\s*")


def check_environment(environ: Mapping[str, str] = os.environ) -> None:
    """Refuse, in one line, a thread count in the environment that numba or OpenMP cannot take.

    numba refuses ``NUMBA_NUM_THREADS=0`` with a traceback when it first compiles a threaded
    loop, and takes a value that is no number for its default after a warning of a dozen
    lines; OpenMP prints its complaint and goes on. Checked before either reads them.

    Parameters
    ----------
    environ : mapping of str to str, optional
        The environment (this process's).

    Raises
    ------
    UserError
        ``environment variable NAME=VALUE: expected ...`` for the first variable of
        :data:`THREAD_VARIABLES` set to a value of another form.
    """
    for name, expected in THREAD_VARIABLES.items():
        value = environ.get(name)
        if value is None:
            continue
        parts = value.split(",") if name.startswith("OMP") else [value]
        if not all(_COUNT.fullmatch(part) and int(part) >= 1 for part in parts):
            raise UserError(f"environment variable {name}={shown(value)}: expected {expected} "
                            f"(or leave it unset)")


class FasterOfTwo:
    """Call ``threaded`` or ``serial``, whichever has lately been faster (module docstring).

    Parameters
    ----------
    threaded, serial : callable
        Two implementations of the same function, returning the same values bit for bit.
    clock : callable
        Seconds, for timing the calls (:func:`time.perf_counter`; a test passes its own).

    Attributes
    ----------
    calls : list of int
        Calls made to each, ``[threaded, serial]``.
    """

    def __init__(self, threaded: Callable[..., Any], serial: Callable[..., Any],
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self._functions = (threaded, serial)
        self._clock = clock
        self.calls = [0, 0]  # 0: threaded, 1: serial
        self._means = [float("inf"), float("inf")]  # of each one's last full window
        self._window = [0.0, 0]  # seconds and calls of the current window
        self._wait = FIRST_WAIT
        self._using = 1  # a first window on one thread, to know what threads must beat
        self._left = WINDOW  # calls on one thread before the next try
        self._waking = True  # the next threaded call wakes the threads: not judged

    def __call__(self, *args: Any) -> Any:
        using = self._using
        start = self._clock()
        result = self._functions[using](*args)
        seconds = self._clock() - start
        self.calls[using] += 1
        if using == 0:
            self._threaded(seconds)
        else:
            self._serial(seconds)
        return result

    def _threaded(self, seconds: float) -> None:
        """Book a threaded call; leave threads at a straggler or a worse window mean."""
        if self._waking:
            self._waking = False
            return
        if seconds > STRAGGLER * self._means[1]:
            self._give_up()
            return
        mean = self._add(seconds)
        if mean is not None:
            self._means[0] = mean
            if mean >= self._means[1]:
                self._give_up()
            else:
                self._wait = FIRST_WAIT  # threads held a whole window and won it

    def _serial(self, seconds: float) -> None:
        """Book a call on one thread; try threads again once the wait is over."""
        mean = self._add(seconds)
        if mean is not None:
            self._means[1] = mean
        self._left -= 1
        if self._left <= 0 and self._means[1] < float("inf"):
            self._switch(0)

    def _add(self, seconds: float) -> float | None:
        """Add a call to the window; its mean when the window is full (then a new one starts)."""
        self._window[0] += seconds
        self._window[1] += 1
        if self._window[1] < WINDOW:
            return None
        mean = self._window[0] / self._window[1]
        self._window = [0.0, 0]
        return mean

    def _give_up(self) -> None:
        """Back to one thread for the current wait, which doubles for the next time."""
        self._switch(1)
        self._left = self._wait
        self._wait = min(2 * self._wait, LONGEST_WAIT)

    def _switch(self, using: int) -> None:
        self._using = using
        self._window = [0.0, 0]
        self._waking = using == 0
