"""The console of the command line, kept from stopping a command: standard output and error that
are closed, full or read by a program that went away.

A command's work is its files (curves, metadata, figure, page); what it prints is a report on
them. So a write to the console that fails (``sbpbench run ... | head -1``: the pipe closes after
the first line; ``> /dev/full``; a terminal that went away) must not stop the command half-way,
and a console that is not there at all (``2>&-``, as cron and daemons start commands) must not
crash it. :func:`kept` puts the process's standard output and error behind :class:`Forgiving`
files: the first write that fails is remembered, the stream's file descriptor is pointed at the
null device (so that later writes, child processes and C libraries writing there lose their
output silently too, and Python's flush at exit has nothing to complain about), and the command
goes on. A descriptor closed when the process started is pointed at the null device at once.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any

#: The process's standard streams by name, with their file descriptors.
STREAMS = (("stdout", 1), ("stderr", 2))


class Forgiving(io.FileIO):
    """A file descriptor's raw file whose writes never fail: a failed one points the descriptor
    at the null device and is taken as done (module docstring).

    Attributes
    ----------
    failure : OSError or None
        The first write's failure (None while every write succeeded).
    """

    failure: OSError | None = None

    def write(self, data: Any) -> int:
        """Write ``data`` (bytes-like); its length, whether or not it reached the descriptor."""
        try:
            written = super().write(data)
        except OSError as exc:
            if self.failure is None:
                self.failure = exc
            to_null(self.fileno())
            return memoryview(data).nbytes
        return memoryview(data).nbytes if written is None else written


def to_null(fd: int) -> None:
    """Point the file descriptor ``fd`` at the null device (open or closed before)."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        if null != fd:
            os.dup2(null, fd)
    finally:
        if null != fd:
            os.close(null)


def _console_fd(stream: Any, original: Any) -> int | None:
    """The descriptor behind ``stream`` when it is the interpreter's own console stream
    (``original``), else None: a stream a caller put in its place (a test's capture) is left alone."""
    if stream is None or stream is not original:
        return None
    try:
        return int(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None


@contextlib.contextmanager
def kept() -> Iterator[dict[str, Forgiving]]:
    """Standard output and error behind :class:`Forgiving` files while the block runs.

    Yields
    ------
    dict of str to Forgiving
        The raw file of each stream replaced (``"stdout"``, ``"stderr"``), whose ``failure``
        says whether and why its output was lost. A stream another caller put in place of the
        interpreter's (a test's capture) is neither replaced nor listed.
    """
    saved = {name: getattr(sys, name) for name, _ in STREAMS}
    raws: dict[str, Forgiving] = {}
    for name, fd in STREAMS:
        stream = saved[name]
        if stream is None:  # the descriptor was closed when the process started
            to_null(fd)
        elif _console_fd(stream, getattr(sys, f"__{name}__")) != fd:
            continue
        else:
            with contextlib.suppress(OSError):
                stream.flush()
        raws[name] = raw = Forgiving(fd, "w", closefd=False)
        setattr(sys, name, io.TextIOWrapper(
            io.BufferedWriter(raw), encoding=getattr(stream, "encoding", None) or "utf-8",
            errors=getattr(stream, "errors", None) or "backslashreplace",
            line_buffering=stream is None or bool(stream.line_buffering), write_through=name == "stderr"))
    try:
        yield raws
    finally:
        for name, _ in STREAMS:
            if name in raws:
                getattr(sys, name).flush()
                if saved[name] is not None:
                    setattr(sys, name, saved[name])
