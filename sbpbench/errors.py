"""The one exception type for user mistakes, and how user values appear in its messages.

A :class:`UserError` carries a single line naming the file, key or line at fault and
what was expected. The command line prints it and exits with code 2 (no traceback
unless ``--debug``). Values the user wrote are shown through :func:`shown`, which keeps
them short whatever they are.
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

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
