"""Writing a file so that a reader never sees it half-written.

Every file sbpbench writes for later use (result curves and metadata, the optimum cache, the
checksum records of downloads) goes through :func:`atomic_write`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsync, then rename.

    A reader sees the old file or the new one, never a part; an interruption leaves no
    temporary file behind. Creates the parent folder when needed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
