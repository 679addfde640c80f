"""The lock of a run folder: one ``sbpbench run`` writes a run folder at a time.

The writer of a run folder (a new one, or one continued by ``--resume``) holds an exclusive
``flock`` on the folder itself while it writes, so that two resumes of one folder, or a resume
of the folder a run is still writing, cannot both run (each would keep the other's runs out of
the files it rewrites). The lock is on the folder, not on a file in it, so it leaves nothing
behind, and the system releases it when the process ends, however it ends (even by SIGKILL),
so a folder is never left locked. (The dataset cache's :func:`sbpbench.data.lock.file_lock`
waits for its lock file; this one refuses at once.)
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sbpbench.errors import UserError


@contextmanager
def folder_lock(directory: Path) -> Iterator[None]:
    """Hold the exclusive lock of the run folder ``directory`` for the ``with`` block.

    Raises
    ------
    UserError
        Another process holds it (``DIR: another sbpbench run is writing this run folder ...``),
        or the folder cannot be opened.
    """
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise UserError(f"{directory}: cannot open the run folder ({exc.strerror or exc})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"{directory}: another sbpbench run is writing this run folder; wait for it to end "
                            "(or stop it) before resuming it") from None
        yield
    finally:
        os.close(fd)  # closing the only descriptor of the open folder releases its lock
