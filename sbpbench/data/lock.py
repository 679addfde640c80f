"""An exclusive lock on a file, so that parallel processes download and convert once."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sbpbench.errors import UserError
from sbpbench.files import file_kind


@contextmanager
def file_lock(path: Path, advice: str = "") -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if needed) for the ``with`` block.

    ``flock`` locks belong to the open file, so this excludes other processes and other
    threads of this process alike.

    Parameters
    ----------
    path : pathlib.Path
        The lock file.
    advice : str
        What to do when the lock cannot be taken, ending the message (``"set SBPBENCH_DATA
        to a writable folder"``).

    Raises
    ------
    UserError
        ``PATH: cannot take the lock (why); ADVICE`` when the lock file cannot be created or
        opened (a read-only folder, a file where its folder belongs), or is no regular file.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        raise UserError(f"{path}: cannot take the lock ({exc.strerror or exc})" + (f"; {advice}" if advice else "")) \
            from None
    try:
        if (kind := file_kind(os.fstat(fd).st_mode)) is not None:
            raise UserError(f"{path}: cannot take the lock: it is {kind}, not a regular file; remove it")
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
