"""The one exception type for user mistakes, and how user values appear in its messages.

A :class:`UserError` carries a single line naming the file, key or line at fault and
what was expected. The command line prints it and exits with code 2 (no traceback
unless ``--debug``). Values the user wrote are shown through :func:`shown`, which keeps
them short whatever they are. What the system refuses (a full disk, a limit of the process, a
loop of symbolic links) is said the same way by :func:`os_error_message`, with what to change.
"""

from __future__ import annotations

import errno
import math
import os
import reprlib
from collections.abc import Callable
from typing import Any

try:  # here, not when a limit is read: that may be when no file can be opened, a module neither
    import resource
except ImportError:  # not POSIX (Windows)
    resource = None  # type: ignore[assignment]

#: Most characters of a user value shown in an error message.
SHOWN_CHARS = 60


class UserError(Exception):
    """A mistake in the user's input: bad config, unknown name, unreadable or malformed file."""

    exit_code = 2


class _ShortRepr(reprlib.Repr):
    """``reprlib`` that describes huge integers instead of converting them to text (Python
    refuses integers of more than 4300 digits, and shorter ones can still fill a screen)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<an integer of about {int(math.log10(abs(x))) + 1} digits>"
        return super().repr_int(x, level)


_SHORT = _ShortRepr()
_SHORT.maxstring = _SHORT.maxother = SHOWN_CHARS


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """A user value as it appears in an error message: its ``repr``, at most ``limit`` characters.

    Parameters
    ----------
    value : Any
        Anything a YAML document or a command line can hold.
    limit : int, optional
        Longest text returned.

    Returns
    -------
    str
        ``repr(value)``, with long strings, containers and huge integers abbreviated
        and the whole cut to ``limit`` characters (ending in ``...``).
    """
    return cut(_SHORT.repr(value), limit)


def cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start ending in ``...``."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def amount(nbytes: float) -> str:
    """A number of bytes for a message, in the largest binary unit it reaches, to three digits.

    For example ``amount(4 * 2**20)`` is ``"4 MiB"`` and ``amount(16.4e9)`` is ``"15.3 GiB"``.
    """
    value, unit = float(nbytes), "bytes"
    for name in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            break
        value, unit = value / 1024, name
    return f"{value:.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on written as its escape.

    Control characters (newline, carriage return, escape sequences, ...) and other
    non-printable ones (format characters such as direction overrides, line separators) are
    written as Python writes them in a string literal (``\\n``, ``\\x1b``, ``\\u202e``), so that
    a label or a name printed on the console is one piece of text on one line, shown as written.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def cut_middle(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else shortened in the middle with ``...``.

    For error lines: the longest word (a long path, as a rule) is shortened in its middle, so
    that the words around it (the file, the key, what went wrong) and what ends the line (the
    reason, such as ``(File name too long)``) stay whole; where that is not enough, the whole
    text is cut in its middle, the start keeping three fifths of the characters.
    """
    if len(text) <= limit:
        return text
    words = text.split(" ")
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    keep = len(words[longest]) - (len(text) - limit) - 3
    if keep >= 8:
        word = words[longest]
        words[longest] = word[: keep // 2] + "..." + word[len(word) - (keep - keep // 2):]
        return " ".join(words)
    head = (limit - 3) * 3 // 5
    return text[:head] + "..." + text[len(text) - (limit - 3 - head):]


#: What a file system says when a file cannot be written: full (or over quota), read-only, not allowed.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})


def os_error_message(exc: OSError) -> str:
    """What an :class:`OSError` the command line did not expect means, as one message naming
    the file and what to change.

    Parameters
    ----------
    exc : OSError
        Any failed system call: a disk full or read-only (:data:`WRITE_ERRNOS`), a limit of the
        process (too many open files, a file larger than ``ulimit -f`` allows), a loop of
        symbolic links, or any other.

    Returns
    -------
    str
        ``FILE: what failed (the system's reason); what to change`` (the files' names when the
        error has them, the limit in force for a limit of the process).
    """
    names = [os.fsdecode(name) if isinstance(name, bytes) else str(name)
             for name in (exc.filename, exc.filename2) if name is not None]
    where = (" -> ".join(names) + ": ") if names else ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno in WRITE_ERRNOS:
        return f"{where}cannot write ({reason}); free space or make the folder writable"
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        return (f"{where}cannot open another file ({reason}); raise the limit on open files "
                f"(ulimit -n{_now('RLIMIT_NOFILE', lambda n: f'{n} files')}) or use fewer --jobs")
    if exc.errno == errno.EFBIG:
        return (f"{where}cannot write ({reason}); raise the limit on the size of files "
                f"(ulimit -f{_now('RLIMIT_FSIZE', amount)})")
    if exc.errno == errno.ELOOP:
        return f"{where}a loop of symbolic links ({reason}); make the link point to a real file or folder"
    return f"{where}{reason}" if where or exc.strerror else f"{type(exc).__name__}: {reason}"


def soft_limit(name: str) -> int | None:
    """This process's soft limit ``resource.NAME`` (such as ``"RLIMIT_NOFILE"``), None where it is
    unlimited or not known (no :mod:`resource` module: Windows)."""
    if resource is None:
        return None
    try:
        soft = resource.getrlimit(getattr(resource, name))[0]
    except (AttributeError, ValueError, OSError):
        return None
    return None if soft == resource.RLIM_INFINITY else int(soft)


def _now(name: str, show: Callable[[int], str]) -> str:
    """``", now LIMIT"`` for the soft limit ``name`` (:func:`soft_limit`) shown by ``show``; empty
    where there is none."""
    soft = soft_limit(name)
    return "" if soft is None else f", now {show(soft)}"
