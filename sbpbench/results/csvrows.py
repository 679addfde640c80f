"""Rows (dicts) as CSV text, byte for byte what pandas writes for a frame made of them, without pandas.

A run writes its ``curves.csv`` with :func:`rows_csv`, so that a run's process never imports
pandas (a good part of a short run's fixed costs); readers still read the file with pandas. The
text is what ``pandas.DataFrame(rows, columns=columns).to_csv(index=False)`` writes, since
committed results and their tests compare the files byte for byte. pandas gives each column a
type made from all its values (a key missing from a row is NaN there), and writes by that type:

* whole numbers only (``int``, numpy integers): as they are, ``2000``;
* numbers with a gap (None, NaN) or a float: as float64, each written as Python's ``repr``
  writes it (the shortest text that reads back the same): ``2000.0``, ``0.1``, ``1e-05``,
  ``inf``, ``-0.0``; whole numbers beyond 2**53 rounded to the float nearest;
* numpy scalars only, a float among them: as the widest of their types, in its shortest text
  (``np.float32(0.1)`` alone is ``0.1``, not float64's ``0.10000000149011612``);
* anything else (text, booleans, mixed types, whole numbers beyond 64 bits or 64-bit unsigned
  ones next to negative or numpy signed ones): each value as ``str`` writes it (``True``,
  ``0.1``, ``2000``);

gaps (None, NaN) empty in every column. Fields with commas, quotes or line breaks are quoted
(``csv.QUOTE_MINIMAL``, a quote doubled), lines end with ``\n``.

Not matched: complex numbers, dates and times, for which pandas makes columns of their own
types, and pandas' own missing markers (``pd.NA``, ``pd.NaT``, written ``<NA>`` and ``NaT``
here); no solver writes them. A ``<NA>`` in a column of numbers reads back as a gap all the same
(:data:`~sbpbench.results.store.NUMERIC_NA`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Whole numbers (and ``bool``, to Python; to pandas a boolean makes a column of objects, told first).
_WHOLE = (int, np.integer)
#: What a column of numbers holds: whole numbers, floats, gaps.
_NUMERIC = (int, np.integer, float, np.floating, type(None))
#: The whole numbers pandas keeps as numbers (64 bits, signed or not); beyond, a column of objects.
_LOW, _HIGH = -(2**63), 2**64
#: Whole numbers from here up need 64 bits unsigned.
_UNSIGNED = 2**63


def rows_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str], header: bool = True) -> str:
    """``rows`` as CSV text: a header of ``columns``, then a line per row (module docstring).

    Parameters
    ----------
    rows : sequence of dict
        The rows; a key of ``columns`` a row lacks is a gap there, a key not in ``columns`` is
        left out.
    columns : sequence of str
        The columns, in order.
    header : bool
        Begin with the header line (without it: the lines to append to a file of ``columns``;
        each column is written as the column of ``rows`` alone makes it).

    Returns
    -------
    str
        What ``pandas.DataFrame(rows, columns=columns).to_csv(index=False)`` returns.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(columns)
    writer.writerows(zip(*(_fields([row.get(c, math.nan) for row in rows]) for c in columns)))
    return out.getvalue()


def _fields(values: list[Any]) -> list[str]:
    """A column's fields, written as pandas writes the column it makes of ``values``."""
    types = set(map(type, values))
    if types == {str}:
        return values
    made = _column_type(values, types)
    if made is None:
        return ["" if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)) else str(v)
                for v in values]
    if made is int:
        return [str(v) for v in values]
    array = np.array(values, dtype=np.float64)  # as pandas: float64 first, then the column's type
    if made != np.float64:
        text = array.astype(made).astype(str)
        text[np.isnan(array)] = ""
        return text.tolist()
    # numpy writes a float64 as Python's repr does (numpy follows it since 1.14), which is faster
    return ["" if t == "nan" else t for t in map(repr, array.tolist())]


def _column_type(values: list[Any], types: set[type]) -> type | np.dtype | None:
    """The type pandas gives a column it makes of ``values`` (of ``types``): ``int`` (whole
    numbers only), a numpy float type (numbers with a gap or a float), or None (objects: text,
    booleans, mixed types).

    As pandas' inference (``maybe_convert_objects``) does: a column of numbers that holds a whole
    number beyond 64 bits, or one that needs 64 bits unsigned (a numpy unsigned integer, or
    2**63 and up) next to one that needs a sign (a numpy signed integer, or a negative number),
    is one of objects. A column of numpy scalars only has the type of their widest
    (``np.float32`` values make a float32 column), else float64.
    """
    if any(t is bool or not issubclass(t, _NUMERIC) for t in types):
        return None
    if any(issubclass(t, _WHOLE) for t in types):
        whole = [int(v) for v in values if isinstance(v, _WHOLE)]
        low, high = min(whole), max(whole)
        if low < _LOW or high >= _HIGH:
            return None
        if ((low < 0 or any(issubclass(t, np.signedinteger) for t in types))
                and (high >= _UNSIGNED or any(issubclass(t, np.unsignedinteger) for t in types))):
            return None
    if all(issubclass(t, _WHOLE) for t in types):
        return int
    if all(issubclass(t, np.generic) for t in types):
        return np.dtype(f"f{max(np.dtype(t).itemsize for t in types)}")
    return np.dtype(np.float64)
