"""The "water level" of the SBP paper (Section 3.2, Algorithm 2).

Given responses ``c`` and a volume ``V = n nu`` of water poured into a basin whose floor
has heights ``c``, the water level ``gamma`` is the common surface height:
``sum_i max(0, gamma - c_i) = V``. It is the optimal value of the inner problem of
Equation 3.1, and the minimax-optimal distribution ``p*`` is uniform on ``{i : c_i < gamma}``.

:func:`water_level` is Algorithm 2 written as a selection: it partitions a scratch copy
of ``c`` three ways around a median-of-three pivot, decides from the count and sum of the
values below the pivot whether the level lies below or above it, and recurses into one
side only, so the expected time is linear in ``n`` (no sort).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _median3(a, b, c):
    if a < b:
        if b < c:
            return b
        return c if a < c else a
    if a < c:
        return a
    return c if b < c else b


@numba.njit(cache=True)
def water_level(c, volume, buf):
    """Water level of responses ``c`` for a volume of water ``volume``.

    Parameters
    ----------
    c : numpy.ndarray, shape (n,)
        Responses (basin floor heights). Not modified.
    volume : float
        Total water ``n nu`` (>= 0).
    buf : numpy.ndarray, shape (n,)
        Scratch space, overwritten.

    Returns
    -------
    gamma : float
        The level: ``sum_i max(0, gamma - c_i) = volume`` (``min(c)`` for volume 0).
    below : int
        ``#{i : c_i < gamma}``, the support of the minimax-optimal ``p*``.
    """
    n = c.shape[0]
    for i in range(n):
        buf[i] = c[i]
    if volume <= 0.0:
        lowest = buf[0]
        for i in range(n):
            lowest = min(lowest, buf[i])
        return lowest, 0
    lo = 0  # buf[:lo] are known to lie below the level, with sum `covered`
    hi = n  # buf[hi:] are known to lie at or above it
    covered = 0.0
    while lo < hi:
        pivot = _median3(buf[lo], buf[(lo + hi) // 2], buf[hi - 1])
        lt = lo
        i = lo
        gt = hi
        sum_lt = 0.0
        while i < gt:  # three-way partition of buf[lo:hi] around the pivot
            v = buf[i]
            if v < pivot:
                buf[i] = buf[lt]
                buf[lt] = v
                sum_lt += v
                lt += 1
                i += 1
            elif v > pivot:
                gt -= 1
                buf[i] = buf[gt]
                buf[gt] = v
            else:
                i += 1
        # water needed to raise everything below the pivot up to the pivot
        if pivot * lt - (covered + sum_lt) >= volume:
            hi = lt  # the level is at most the pivot: the pivot and above stay dry
        else:
            covered += sum_lt + pivot * (gt - lt)  # the level is above the pivot
            lo = gt
    return (volume + covered) / lo, lo


@numba.njit(cache=True)
def nth_below(c, gamma, u):
    """Index of the ``u``-th (0-based) entry of ``c`` with ``c_i < gamma``, or -1."""
    seen = 0
    for i in range(c.shape[0]):
        if c[i] < gamma:
            if seen == u:
                return i
            seen += 1
    return -1


def sample_below(c: np.ndarray, gamma: float, below: int, rng: np.random.Generator) -> int:
    """Sample an index uniformly from ``{i : c_i < gamma}`` (``below`` of them).

    Falls back to ``{i : c_i <= gamma}`` when rounding leaves fewer than ``below`` entries
    strictly under the level, or when no volume was poured (``nu = 0``).
    """
    if below > 0:
        i = nth_below(c, gamma, rng.integers(below))
        if i >= 0:
            return int(i)
    candidates = np.flatnonzero(c <= gamma)
    return int(candidates[rng.integers(candidates.size)])
