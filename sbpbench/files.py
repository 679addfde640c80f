"""Writing a file so that a reader never sees it half-written, and reading only regular files.

Every file sbpbench writes for later use (result curves and metadata, the optimum cache, the
checksum records of downloads) goes through :func:`atomic_write`. The file gets the mode any
new file would (``0666`` less the umask: ``0644`` under the usual ``022``), not the ``0600``
of a temporary file, so that a shared results folder stays readable by others.

Every file a user names (configs, LIBSVM data), every ``meta.json`` and every file of the
dataset cache is read through :func:`read_regular` or :func:`open_regular`: a device
(``/dev/zero`` would be read until the memory runs out), a named pipe (which would wait
forever for a writer), a socket or a folder is refused with one line saying what the path
is, before it is opened.
"""

from __future__ import annotations

import glob
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from sbpbench.errors import UserError, amount

#: How :func:`atomic_write` writes what UTF-8 cannot encode (a lone surrogate): its backslash escape.
UNENCODABLE = "backslashreplace"


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, fsync, then rename.

    A reader sees the old file or the new one, never a part; an interruption leaves no
    temporary file behind (unless the process is killed: see :func:`remove_leftovers`). The
    file's mode is ``0666`` less the umask, as for any new file. Creates the parent folder
    when needed. Text is written as UTF-8 whatever the locale; what UTF-8 cannot encode (a lone
    surrogate, which Python makes of a byte it cannot decode in a path, a file name or a YAML
    file) is written as its backslash escape (``\\udce9``), so the file stays UTF-8 text and
    such a character never fails the write.

    Raises
    ------
    OSError
        The file cannot be written (a full or read-only disk, no permission), its
        ``filename`` ``path`` whatever step failed; the old file, if any, is left as it was.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~umask())
            fh.write(data.encode("utf-8", UNENCODABLE) if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:  # a failed write names no file
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise


def as_written(text: str) -> str:
    """``text`` as a file :func:`atomic_write` writes holds it, read back as UTF-8: the same text,
    but for what UTF-8 cannot encode (a lone surrogate), which is its backslash escape."""
    return text.encode("utf-8", UNENCODABLE).decode("utf-8")


def append_text(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` (created when missing), then fsync; all of it or, on an error, none.

    The cheap counterpart of :func:`atomic_write` for a file that only grows (the run's curves and
    its journal of runs, :mod:`sbpbench.results.store`): its cost is that of ``text``, whatever
    the file holds. A write that fails leaves the file at its old length; only a process killed
    mid-write leaves a last line cut short, which the file's readers pass over. A new file gets
    the mode :func:`atomic_write` gives one, and text is written as it writes text.

    Raises
    ------
    OSError
        The file cannot be written (a full or read-only disk, no permission), its ``filename``
        ``path``.
    """
    data = text.encode("utf-8", UNENCODABLE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666 & ~umask())
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    try:
        end = os.fstat(fd).st_size
        try:
            left = memoryview(data)
            while left:
                left = left[os.write(fd, left):]
            os.fsync(fd)
        except BaseException as exc:
            try:
                os.ftruncate(fd, end)
            except OSError:  # the error below says what failed; the readers pass over a cut line
                pass
            if isinstance(exc, OSError) and exc.filename is None:  # a failed write names no file
                raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
            raise
    finally:
        os.close(fd)


def remove_leftovers(path: Path) -> list[Path]:
    """Delete the temporary files that writes of ``path`` by :func:`atomic_write` left behind.

    :func:`atomic_write` removes its temporary file when it fails or is interrupted by an
    exception, but a process killed mid-write (SIGKILL, a power cut) leaves it
    (``.NAME.XXXXXXXX`` beside ``NAME``). Call this only while no other process can be
    writing ``path`` (e.g. holding the lock of its folder).

    Returns
    -------
    list of pathlib.Path
        The files deleted.
    """
    left = [p for p in path.parent.glob(f".{glob.escape(path.name)}.*")
            if _TEMPORARY.fullmatch(p.name[len(path.name) + 2:]) and p.is_file()]
    for leftover in left:
        leftover.unlink(missing_ok=True)
    return left


#: What a run folder's files end with (curves, meta.json, the page, the figures).
RUN_FILE_SUFFIXES = (".csv", ".json", ".html", ".png", ".svg")


def remove_run_leftovers(folder: Path) -> list[Path]:
    """Delete the temporary files that :func:`atomic_write` left in a run folder when a process
    was killed mid-write: ``.NAME.XXXXXXXX`` for every ``NAME`` ending in one of
    :data:`RUN_FILE_SUFFIXES` (curves, ``meta.json``, ``index.html``, figures), whether or not
    ``NAME`` itself was ever written. Call this only while holding the folder's lock.

    Returns
    -------
    list of pathlib.Path
        The files deleted.
    """
    names = {p.name[1:-9] for p in folder.glob(".*.*")
             if p.name[-9:-8] == "." and _TEMPORARY.fullmatch(p.name[-8:])}
    return [left for name in sorted(names) if name.endswith(RUN_FILE_SUFFIXES)
            for left in remove_leftovers(folder / name)]


#: The random part of the name of a temporary file of :func:`tempfile.mkstemp`.
_TEMPORARY = re.compile(r"[a-z0-9_]{8}")


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


#: What a path that is not a regular file is, by the ``stat`` test that recognizes it.
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str | None:
    """What a file of ``st_mode`` ``mode`` is when it is not a regular file (``"a named pipe
    (FIFO)"``, ``"a character device"``, ...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


@contextmanager
def open_regular(path: str | os.PathLike[str], what: str) -> Iterator[BinaryIO]:
    """Open the regular file ``path`` for reading bytes, refusing anything else before reading it.

    The path is checked with :func:`os.stat` before it is opened (a named pipe without a
    writer is never opened, so nothing waits), then opened without blocking and checked
    again on the open file (so a path swapped in between is refused too). For files read
    in chunks (a download being hashed); :func:`read_regular` reads a whole file.

    Parameters
    ----------
    path : str or os.PathLike
        The file (symbolic links are followed).
    what : str
        What the file should be, for the message (``"config"``, ``"LIBSVM file"``).

    Yields
    ------
    BinaryIO
        The open file.

    Raises
    ------
    UserError
        One line ``PATH: cannot read WHAT: ...``: the path does not exist or cannot be
        read, or is a folder, a device, a named pipe or a socket; also for a read error
        inside the ``with`` block.
    """
    def refuse(why: str) -> UserError:
        return UserError(f"{os.fsdecode(path)}: cannot read {what}: {why}")

    try:
        if (kind := file_kind(os.stat(path).st_mode)) is not None:
            raise refuse(f"it is {kind}, not a regular file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise refuse(exc.strerror or str(exc)) from None
    with os.fdopen(fd, "rb") as fh:
        try:
            if (kind := file_kind(os.fstat(fd).st_mode)) is not None:
                raise refuse(f"it is {kind}, not a regular file")
            yield fh
        except OSError as exc:
            raise refuse(exc.strerror or str(exc)) from None


def read_regular(path: str | os.PathLike[str], what: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, refusing anything else before reading it.

    Opened through :func:`open_regular` (checked before and after opening, never waiting).

    Parameters
    ----------
    path : str or os.PathLike
        The file (symbolic links are followed).
    what : str
        What the file should be, for the message (``"config"``, ``"LIBSVM file"``).
    limit : int, optional
        Most bytes accepted (none by default).

    Returns
    -------
    bytes
        The whole file.

    Raises
    ------
    UserError
        One line ``PATH: cannot read WHAT: ...``: the path does not exist or cannot be
        read, is a folder, a device, a named pipe or a socket, or holds more than ``limit``
        bytes.
    """
    with open_regular(path, what) as fh:
        data = fh.read() if limit is None else fh.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise UserError(f"{os.fsdecode(path)}: cannot read {what}: it holds more than {amount(limit)}, "
                        f"the most a {what} may hold")
    return data
