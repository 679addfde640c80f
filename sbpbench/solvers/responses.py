"""Compiled updates of the responses that the kernel solvers keep for every training point.

SBP, kernel Pegasos and SDCA keep ``c_j = y_j <w, Phi(x_j)>`` (SDCA: ``q = Q alpha``, the
same numbers) for all ``j``. Adding ``step y_i Phi(x_i)`` to ``w`` adds ``step y_i y_j
K(x_i, x_j)`` to every ``c_j``: one kernel row, one pass over ``n``. Callers pass ``step``
already multiplied by ``y_i``.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def add_row(c, y, row, step):
    """``c += step * y * row`` (``row = K(x_i, .)``, ``step`` including ``y_i``)."""
    for j in range(c.shape[0]):
        c[j] += step * y[j] * row[j]


@numba.njit(cache=True)
def add_row_and_sum(c, acc, y, row, step, weight):
    """``c += step * y * row`` and ``acc += weight * step * y * row`` in one pass (SBP's running sum)."""
    for j in range(c.shape[0]):
        v = step * y[j] * row[j]
        c[j] += v
        acc[j] += weight * v
