"""Writing a file so that a reader never sees it half-written.

Every file sbpbench writes for later use (result curves and metadata, the optimum cache, the
checksum records of downloads) goes through :func:`atomic_write`. The file gets the mode any
new file would (``0666`` less the umask: ``0644`` under the usual ``022``), not the ``0600``
of a temporary file, so that a shared results folder stays readable by others.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsync, then rename.

    A reader sees the old file or the new one, never a part; an interruption leaves no
    temporary file behind. The file's mode is ``0666`` less the umask, as for any new file.
    Creates the parent folder when needed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~umask())
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def umask() -> int:
    """The process's file-mode creation mask, read without changing it where the system allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (briefly visible to other threads)
    os.umask(mask)
    return mask
