"""How a run's page writes numbers: one notation for its tables (:func:`number`) and the tick
labels of its plots (:func:`tick_labels`; ``page.js`` labels the interactive plot's ticks by the
same rule); and how every output, the console's included, writes a number that is missing
(:data:`MISSING`, :func:`formatted`).
"""

from __future__ import annotations

import math
import re

#: A number that is unknown or was not measured (NaN, None), as the console, the summary and the
#: page write it: kernel evaluations of a solver that does not count them, an error not measured.
MISSING = "n/a"

#: Significant digits of every number the page shows (tables and the plot's ticks alike).
SHOWN_DIGITS = 4
#: Magnitudes shown without an exponent: at least the first, below the second (the plot's ticks follow).
PLAIN_RANGE = (1e-3, 1e5)


def _rounded(value: float) -> float:
    """``value`` to :data:`SHOWN_DIGITS` significant digits (so that 9.99996 is 10.00 and 99999.5 is 1.000e5)."""
    return float(f"{value:.{SHOWN_DIGITS - 1}e}") + 0.0  # + 0.0: no negative zero


def _plain(value: float) -> bool:
    """Whether a (rounded) nonzero number is written without an exponent (:data:`PLAIN_RANGE`)."""
    return PLAIN_RANGE[0] <= abs(value) < PLAIN_RANGE[1]


def _scientific(value: float) -> tuple[str, int]:
    """A rounded number's mantissa (with its trailing zeros) and exponent."""
    mantissa, exponent = f"{value:.{SHOWN_DIGITS - 1}e}".split("e")
    return mantissa, int(exponent)


def number(value: float) -> str:
    """A number as the page shows it, one format for all: :data:`SHOWN_DIGITS` significant digits,
    trailing zeros kept (``0.05300`` beside ``0.04979``); outside :data:`PLAIN_RANGE` with an
    exponent (``1.650e8``); integers below its top exactly; NaN as ``n/a``.

    Parameters
    ----------
    value : float
        The number (an int or a float).

    Returns
    -------
    str
        Its text.
    """
    if isinstance(value, int) and abs(value) < PLAIN_RANGE[1]:
        return str(value)
    if not math.isfinite(value):
        return MISSING if value != value else str(value)
    if value == 0:
        return "0"
    rounded = _rounded(value)
    if _plain(rounded):
        return f"{rounded:.{max(0, SHOWN_DIGITS - 1 - math.floor(math.log10(abs(rounded))))}f}"
    mantissa, exponent = _scientific(rounded)
    return f"{mantissa}e{exponent}"


def formatted(value: float | None, spec: str) -> str:
    """``value`` in the format ``spec`` (such as ``.3g`` or ``>13.3g``), or :data:`MISSING` in the
    alignment and width ``spec`` gives (right-aligned, as numbers are, when it gives none) for None
    or NaN.

    Parameters
    ----------
    value : float or None
        The number.
    spec : str
        A format specification of Python's format mini-language.

    Returns
    -------
    str
        Its text.
    """
    if value is not None and value == value:
        return format(value, spec)
    align, width = re.match(r"([<>^]?)(\d*)", spec).groups()  # type: ignore[union-attr]  # always matches
    return format(MISSING, f"{align or '>'}{width}")


def tick_labels(values: list[float]) -> list[str]:
    """The tick labels of one axis, in one notation: each tick to :data:`SHOWN_DIGITS` significant
    digits; with an exponent and no trailing zeros (``1e3``, ``1e4``, ``2.5e-4``) when some tick is
    outside :data:`PLAIN_RANGE`, else plain, all with the decimals of the finest tick (``0.0``,
    ``0.5``, ``1.0``). ``page.js``'s ``labels`` writes the interactive plot's ticks so.

    Parameters
    ----------
    values : list of float
        The ticks' values (not their logarithms on a log axis).

    Returns
    -------
    list of str
        Their labels.
    """
    shown = [_rounded(v) for v in values]
    if any(v != 0 and not _plain(v) for v in shown):
        labels = []
        for v in shown:
            mantissa, exponent = _scientific(v)
            labels.append("0" if v == 0 else f"{float(mantissa):g}e{exponent}")  # no trailing zeros
        return labels
    decimals = max([0, *(len(fraction) for v in shown if (fraction := repr(v).partition(".")[2]) != "0")])
    return [f"{v:.{decimals}f}" for v in shown]
