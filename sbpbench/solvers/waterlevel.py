"""The "water level" of the SBP paper (Section 3.2, Algorithm 2).

Given responses ``c`` and a volume ``V = n nu`` of water poured into a basin whose floor
has heights ``c``, the water level ``gamma`` is the common surface height:
``sum_i max(0, gamma - c_i) = V``. It is the optimal value of the inner problem of
Equation 3.1, and the minimax-optimal distribution ``p*`` is uniform on ``{i : c_i < gamma}``.

:func:`water_level` is Algorithm 2 written as a selection: it partitions a scratch copy
of ``c`` three ways around a median-of-three pivot, decides from the count and sum of the
values below the pivot whether the level lies below or above it, and recurses into one
side only, so the expected time is linear in ``n`` (no sort). The partition does not branch
on the data (:func:`_partition3`).

SBP's level moves little between iterations. Its update pass
(:func:`~sbpbench.solvers.responses.update_and_window`) counts and sums the responses
below a window around the last level and gathers those inside; :func:`level_from_window`
then finds the level among the gathered ones only, by Newton's method on the convex
piecewise-linear water (exact: it stops on the level's own piece). When the level left the
window, :func:`bracket_level` gives a bracket from the window's counts (Newton's step on the
convex water) and :func:`water_level_near` gathers and searches it in one more pass.
:func:`level_from_windows` and :func:`water_level_bias_near` do the same for the two-basin
water filling with a bias, with one window per class.

Sampling from ``p*`` (:func:`nth_below`, :func:`nth_lowest_in_class`) counts the
qualifying responses a block at a time, vectorized, and scans only the block that holds
the sampled one; for a level inside the gathered window, :func:`nth_below_gathered` takes
each block's count from the gathering pass instead of reading the block.
"""

from __future__ import annotations

import numba
import numpy as np

from sbpbench.solvers.responses import BLOCK, update_and_class_windows, update_and_window
from sbpbench.solvers.sampling import NEED_RAW, draw_index


@numba.njit(cache=True, fastmath={"reassoc"})
def _sum(buf, lo, hi):
    """``sum(buf[lo:hi])``, vectorized."""
    total = 0.0
    for i in range(lo, hi):
        total += buf[i]
    return total


@numba.njit(cache=True, inline="always")
def _median3_at(buf, a, b, c):
    """The index among ``a, b, c`` whose value is the median of the three."""
    x, y, z = buf[a], buf[b], buf[c]
    if x < y:
        if y < z:
            return b
        return c if x < z else a
    if x < z:
        return a
    return c if y < z else b


@numba.njit(cache=True, inline="always")
def _partition3(buf, lo, hi):
    """Three-way partition of ``buf[lo:hi]`` around a median-of-three pivot, without branches on the data.

    Returns ``(lt, gt, pivot, sum_lt)``: afterwards ``buf[lo:lt] < pivot``,
    ``buf[lt:gt] == pivot``, ``buf[gt:hi] > pivot``, and ``sum_lt = sum(buf[lo:lt])``.
    The pivot is parked at the end and one pass moves the smaller values to the front (every
    value is swapped, only a smaller one advances the boundary); a second pass gathers the
    values equal to the pivot only when there are any besides it. Whether a value is
    smaller than the pivot follows no pattern, and branching on it took 3.7 times as long.
    """
    last = hi - 1
    at = _median3_at(buf, lo, (lo + hi) // 2, last)
    pivot = buf[at]
    buf[at] = buf[last]
    buf[last] = pivot
    lt = lo
    ties = 0
    for i in range(lo, last):
        v = buf[i]
        buf[i] = buf[lt]
        buf[lt] = v
        lt += v < pivot
        ties += v == pivot
    buf[last] = buf[lt]
    buf[lt] = pivot
    gt = lt + 1
    if ties:
        for i in range(gt, hi):  # all >= pivot here
            v = buf[i]
            buf[i] = buf[gt]
            buf[gt] = v
            gt += v == pivot
    return lt, gt, pivot, _sum(buf, lo, lt)


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
    lo, hi, covered = 0, n, 0.0  # buf[:lo] lies below the level (sum covered), buf[hi:] above it
    while lo < hi:
        lt, gt, pivot, sum_lt = _partition3(buf, lo, hi)
        # water needed to raise everything below the pivot (buf[:lt]) up to the pivot
        if pivot * lt - (covered + sum_lt) >= volume:
            hi = lt  # the level is at most the pivot: the pivot and above stay dry
        else:
            covered += sum_lt + pivot * (gt - lt)  # the level is above the pivot
            lo = gt
    return (volume + covered) / lo, lo


#: Newton steps :func:`level_from_window` takes at most (a few settle; more means rounding cycles).
NEWTON_STEPS = 64


@numba.njit(cache=True, fastmath={"reassoc"})
def _below_sum(values, x):
    """Count and sum of the ``values`` strictly below ``x``, vectorized."""
    count = 0
    total = 0.0
    for t in range(values.shape[0]):
        v = values[t]
        count += v < x
        total += v if v < x else 0.0
    return count, total


@numba.njit(cache=True)
def level_from_window(volume, low, high, window, buf):
    """:func:`water_level` from the responses gathered in a window ``[low, high)``.

    ``window`` is what :func:`~sbpbench.solvers.responses.update_and_window` returned
    (count and sum below the window and inside it) and ``buf[:inside]`` the responses it
    gathered. If the water of the two window edges brackets ``volume``, the level is found
    by Newton's method on the water ``W(x) = sum_i max(0, x - c_i)`` from the window's top:
    ``W`` is convex and piecewise linear with slope ``#{c_i < x}``, so each step
    ``x := (volume + sum_{c_i < x} c_i) / #{c_i < x}`` stays at or above the level and the
    set below shrinks, until a step keeps the set: then ``W(x) = volume`` exactly on that
    set, which is the level. Each step is one vectorized pass over the gathered responses, and
    a few steps settle (BENCHMARKS.md, SBP iteration, times the level against the selection
    of :func:`water_level` it replaced).
    The level and the set below it are those of :func:`water_level` (the sums are added in
    another order, so ``gamma`` may differ in its last bits); ``buf`` is left in index
    order, which :func:`nth_below_gathered` relies on.

    Parameters
    ----------
    volume : float
        Total water.
    low, high : float
        The window.
    window : tuple
        ``(below, covered, inside, inside_sum)`` of the gathering pass.
    buf : numpy.ndarray
        The gathered responses in ``buf[:inside]`` (not modified).

    Returns
    -------
    gamma : float
    below : int
    inside : int
        Responses gathered from the window; ``-1`` if the level lies outside it, or if
        rounding kept Newton's steps from settling within :data:`NEWTON_STEPS` (then
        ``gamma`` and ``below`` are meaningless and the caller uses :func:`water_level`).
    """
    below, covered, inside, inside_sum = window
    if volume <= 0.0 or low * below - covered >= volume:
        return 0.0, 0, -1  # the level is below the window
    if high * (below + inside) - (covered + inside_sum) < volume:
        return 0.0, 0, -1  # above it
    values = buf[:inside]
    count, total = inside, inside_sum  # the set below the window's top
    for _ in range(NEWTON_STEPS):
        if below + count == 0:
            break  # only by rounding: the steps stay at or above the level
        gamma = (volume + covered + total) / (below + count)
        settled, total_below = _below_sum(values, gamma)
        if settled == count:
            return gamma, below + count, inside
        count, total = settled, total_below
    return 0.0, 0, -1


@numba.njit(cache=True)
def bracket_level(volume, low, high, window):
    """A window ``(guess, width)`` that should hold the level when ``[low, high)`` did not (``width`` 0: none known).

    The water ``W(x) = sum_i max(0, x - c_i)`` is convex and increasing with slope
    ``#{c_i < x}``, which the window's counts give at its edges; ``V`` is the volume. Its
    tangent at an edge reaches ``V`` at the Newton step ``x1`` from that edge, and by
    convexity ``W(x1) >= V``, so the level lies between the edge and ``x1`` when it is
    above the window, and below ``x1`` when it is below the window; then the window reaches
    down from ``x1`` as far again as ``x1`` lies below ``low`` (Newton's error is of second
    order, far smaller than the step). The caller falls back to the full selection when
    the level is not there either. The window is widened by a relative 1e-6 against
    rounding.

    Parameters
    ----------
    volume : float
        Total water.
    low, high : float
        The window that missed.
    window : tuple
        What :func:`~sbpbench.solvers.responses.update_and_window` returned for it.

    Returns
    -------
    guess, width : float
        Centre and half-width of the bracket, for :func:`water_level_near`.
    """
    below, covered, inside, inside_sum = window
    if volume <= 0.0:
        return 0.0, 0.0
    water_low = low * below - covered
    if water_low >= volume:  # the level is below the window, at most x1
        if below == 0:
            return 0.0, 0.0
        x1 = low - (water_low - volume) / below
        top, bottom = x1, x1 - (low - x1)
    else:  # above it, in [high, x1]
        count = below + inside
        if count == 0:
            return 0.0, 0.0
        top, bottom = high + (volume - (high * count - (covered + inside_sum))) / count, high
    half = 0.5 * (top - bottom)
    return 0.5 * (top + bottom), half * (1.0 + 1e-6) + 1e-12 * (abs(top) + abs(bottom))


@numba.njit(cache=True)
def water_level_near(c, volume, guess, width, buf, blocks, sums):
    """:func:`water_level` when the level is known to lie near ``guess``.

    One pass gathers the window ``[guess - width, guess + width)``
    (:func:`~sbpbench.solvers.responses.update_and_window` without a row, which fills
    ``buf``, ``blocks`` and ``sums``), and returns what :func:`level_from_window` returns for it.
    """
    low = guess - width
    high = guess + width
    window = update_and_window(c, c, c, None, 0.0, 0.0, low, high, buf, blocks, sums)
    return level_from_window(volume, low, high, window, buf)


#: Responses counted at once when sampling: a vectorized count per block, then one block scanned.
SAMPLE_BLOCK = 1024


@numba.njit(cache=True, inline="always")
def _qualifies(x, label_of_x, label, top, equal):
    """Whether a response ``x`` of class ``label_of_x`` is counted by :func:`_nth` (branch-free)."""
    return ((x == top) if equal else (x < top)) & ((label == 0.0) | (label_of_x == label))


@numba.njit(cache=True)
def _nth(c, y, label, top, equal, u):
    """Index of the ``u``-th (0-based, index order) ``j`` with ``c_j < top`` (``c_j == top`` if ``equal``)
    and ``y_j == label`` (any class if ``label`` is 0), or -1.

    Counts a block at a time (vectorized) until the block holding the answer, then scans that block.
    """
    n = c.shape[0]
    seen = 0
    for b0 in range(0, n, SAMPLE_BLOCK):
        b1 = min(n, b0 + SAMPLE_BLOCK)
        cb, yb = c[b0:b1], y[b0:b1]
        count = 0
        for j in range(cb.shape[0]):
            count += _qualifies(cb[j], yb[j], label, top, equal)
        if seen + count > u:
            for j in range(cb.shape[0]):
                seen += _qualifies(cb[j], yb[j], label, top, equal)
                if seen > u:
                    return b0 + j
        seen += count
    return -1


@numba.njit(cache=True)
def nth_below(c, gamma, u):
    """Index of the ``u``-th (0-based) entry of ``c`` with ``c_i < gamma``, or -1."""
    return _nth(c, c, 0.0, gamma, False, u)


@numba.njit(cache=True)
def nth_below_gathered(c, gamma, u, buf, blocks):
    """:func:`nth_below` for a level inside the window that the last gathering pass used.

    That pass (:func:`~sbpbench.solvers.responses.update_and_window`) left, per block of
    :data:`~sbpbench.solvers.responses.BLOCK` responses, the count below the window and where
    the block's gathered responses start in ``buf`` (in index order); with ``low <= gamma
    <= high`` a block's count below ``gamma`` is its count below the window plus its gathered
    responses below ``gamma``. So only the gathered responses and the block that holds the
    answer are read, not every response: the same index as :func:`nth_below`.

    Parameters
    ----------
    c : numpy.ndarray, shape (n,)
        The responses the window was gathered from.
    gamma : float
        A level inside the window.
    u : int
        Which index below ``gamma`` (0-based, index order).
    buf : numpy.ndarray
        The gathered responses, in index order (as :func:`level_from_window` leaves them).
    blocks : numpy.ndarray of int64, shape (2, ceil(n / BLOCK) + 1)
        The per-block counts and positions of the gathering pass.

    Returns
    -------
    int
        The index, or -1 if fewer than ``u + 1`` responses lie below ``gamma``.
    """
    n = c.shape[0]
    seen = 0
    for b in range(blocks.shape[1] - 1):
        count = blocks[0, b] + _below_sum(buf[blocks[1, b]:blocks[1, b + 1]], gamma)[0]
        if seen + count > u:
            return _nth_in(c, gamma, u - seen, b * BLOCK, min(n, (b + 1) * BLOCK))
        seen += count
    return -1


#: Responses counted at once (vectorized) in the block that holds the sampled one, before the
#: one-by-one scan of the stretch that holds it.
SCAN = 64


@numba.njit(cache=True)
def _nth_in(c, gamma, u, start, end):
    """Index of the ``u``-th (0-based) ``j`` in ``[start, end)`` with ``c_j < gamma`` (one of them:
    the caller counted them): stretches of :data:`SCAN` counted at once, then one scanned."""
    first = start
    while first + SCAN < end:
        count = _below_sum(c[first:first + SCAN], gamma)[0]
        if count > u:
            break
        u -= count
        first += SCAN
    for j in range(first, end):
        u -= c[j] < gamma
        if u < 0:
            return j
    return -1


@numba.njit(cache=True)
def sample_below(c, gamma, below, gathered, buf, blocks, raw, state):
    """Sample an index uniformly from ``{i : c_i < gamma}`` (``below`` of them).

    Falls back to ``{i : c_i <= gamma}`` when rounding leaves fewer than ``below`` entries
    strictly under the level, or when no volume was poured (``nu = 0``). The draws are
    :func:`~sbpbench.solvers.sampling.draw_index`'s (``rng.integers``'s numbers) from the raw
    outputs ``raw`` and ``state`` of a :class:`~sbpbench.solvers.sampling.UniformIndex`.
    With ``gathered``, ``buf`` and ``blocks`` are those of a gathering pass whose window holds
    ``gamma``, and :func:`nth_below_gathered` finds the index (the same one) without a pass over ``c``.

    Returns
    -------
    int
        The index; or :data:`~sbpbench.solvers.sampling.NEED_RAW` when the raw outputs ran out,
        with ``state`` untouched (refill and call again: the same draws follow).
    """
    draws = state.copy()  # taken only once the index is found
    if below > 0:
        u = draw_index(raw, draws, below)
        if u == NEED_RAW:
            return NEED_RAW
        i = nth_below_gathered(c, gamma, u, buf, blocks) if gathered else nth_below(c, gamma, u)
        if i >= 0:
            state[:] = draws
            return i
    at_or_below = 0
    for j in range(c.shape[0]):
        at_or_below += c[j] <= gamma
    u = draw_index(raw, draws, at_or_below)
    if u == NEED_RAW:
        return NEED_RAW
    state[:] = draws
    for j in range(c.shape[0]):
        u -= c[j] <= gamma
        if u < 0:
            return j
    return -1  # (never: u < at_or_below)


# ----------------------------------------------------------------------------- with a bias


@numba.njit(cache=True, inline="always")
def _cut_low(s, count, lo, total, top, stale, lower, sum_lower, value):
    """Class ``s``: the ``count`` lowest are all submerged (``count`` in ``[lower+1, g]`` of its block)."""
    lo[s] = count
    total[s] = sum_lower[s] + (count - lower[s]) * value[s]
    top[s] = value[s]
    stale[s] = True


@numba.njit(cache=True, inline="always")
def _cut_high(s, count, hi, bottom, stale, value):
    """Class ``s``: at most ``count`` are submerged (``count`` in ``[lower, g-1]`` of its block)."""
    hi[s] = count
    bottom[s] = value[s]
    stale[s] = True


@numba.njit(cache=True)
def water_level_bias(y, c, volume, buf):
    """Water level and bias of the two-basin water filling (Section 3.6, Appendix B, Algorithm 3).

    Solves ``max_{gamma, b, xi >= 0, sum xi <= volume} gamma`` subject to
    ``c_i + y_i b + xi_i >= gamma``: the positives form one basin with floor ``c_i + b``,
    the negatives another with floor ``c_i - b``, and the volume fills both to a common
    level ``gamma``.

    With ``a_k``/``d_k`` the ``k``-th smallest response of the positives/negatives and
    ``W(k)`` the water that raises the ``k`` lowest of each class to ``a_k`` and ``d_k``,
    an optimal ``b`` submerges the same number ``k`` of points in each basin (Appendix B),
    ``k* = max{k <= min(n+, n-) : W(k) <= volume}``, and the rest of the water,
    ``Delta = (volume - W(k*)) / k*``, raises the two relative levels ``gamma - b`` and
    ``gamma + b`` above ``a_k*`` and ``d_k*`` by a total of ``Delta``, each by at most the
    gap to its class's next response. The optimal ``b`` form an interval; like line 42 of
    Algorithm 3 we return its midpoint.

    ``k*`` is found as in Algorithm 3 by two interleaved selections, one per class: each
    class keeps a window of unresolved ranks, partitioned three ways around a
    median-of-three pivot (a block of ranks sharing one value, on which the class's water
    ``k a_k - sum_{j<=k} a_j`` is constant); comparing the two blocks' water with the
    volume discards one side of at least one window per step, so the expected time is
    linear in ``n`` (no sort).

    Parameters
    ----------
    y : numpy.ndarray, shape (n,)
        Labels in {-1, +1}; both classes must occur.
    c : numpy.ndarray, shape (n,)
        Responses ``y_i <w, Phi(x_i)>`` without the bias. Not modified.
    volume : float
        Total water ``n nu`` (>= 0).
    buf : numpy.ndarray, shape (n,)
        Scratch space, overwritten.

    Returns
    -------
    gamma : float
        The water level (the objective of Equation 3.9 at ``w``).
    b : float
        The bias (midpoint of the optimal interval).
    k : int
        Points submerged in each basin, ``k*``.
    top_pos, top_neg : float
        ``a_k*`` and ``d_k*``, the ``k*``-th smallest response of each class: the
        minimax-optimal ``p*`` of :func:`nth_lowest_in_class` puts ``1 / (2 k*)`` on each
        of the ``k*`` lowest responses of each class.
    """
    n = c.shape[0]
    npos = 0  # positives go to buf[:npos], negatives fill buf from the end (branch-free)
    back = n - 1
    for i in range(n):
        v = c[i]
        buf[npos] = v
        buf[back] = v
        positive = y[i] > 0
        npos += positive
        back -= 1 - positive
    if npos == 0 or npos == n:
        raise ValueError("water_level_bias needs examples of both classes")
    return _two_basins(buf, np.array([0, npos]), np.zeros(2, np.int64), np.array([npos, n - npos]),
                       np.zeros(2), np.full(2, -np.inf), np.full(2, np.inf), volume)


@numba.njit(cache=True)
def _two_basins(buf, base, lo, hi, total, top, bottom, volume):
    """The interleaved selections of :func:`water_level_bias` from a partly resolved state.

    Class ``s`` (0: positives, 1: negatives) has its unresolved ranks ``[lo[s], hi[s])`` in
    ``buf[base[s] + lo[s]:base[s] + hi[s]]``; its ``lo[s]`` lowest responses are known (sum
    ``total[s]``, largest ``top[s]``) and its ranks from ``hi[s]`` on stay dry (smallest
    ``bottom[s]``). ``k*`` must lie in ``[lo[s], hi[s]]`` for both classes. Returns what
    :func:`water_level_bias` returns.
    """
    stale = np.ones(2, np.bool_)  # the block must be recomputed
    lower = np.zeros(2, np.int64)  # the block: ranks [lower, g) hold `value`; sum of ranks < lower: sum_lower
    g = np.zeros(2, np.int64)
    value = np.zeros(2)
    sum_lower = np.zeros(2)
    first = np.zeros(2, np.int64)  # the block as counts k in [first, last], with water `water`
    last = np.zeros(2, np.int64)
    water = np.zeros(2)
    while lo[0] < hi[0] or lo[1] < hi[1]:
        for s in range(2):
            if lo[s] == hi[s]:  # resolved: k* = lo[s] (>= 1 since volume >= 0)
                first[s] = lo[s]
                last[s] = lo[s]
                water[s] = lo[s] * top[s] - total[s]
            elif stale[s]:
                lt, gt, pivot, sum_lt = _partition3(buf, base[s] + lo[s], base[s] + hi[s])
                lower[s] = lt - base[s]
                g[s] = gt - base[s]
                value[s] = pivot
                sum_lower[s] = total[s] + sum_lt
                first[s] = lower[s] + 1
                last[s] = g[s]
                water[s] = lower[s] * pivot - sum_lower[s]
                stale[s] = False
        if lo[0] == hi[0] or lo[1] == hi[1]:
            # one class is resolved at k0: select rank k0 in the other, whatever the volumes say
            o = 1 if lo[0] == hi[0] else 0
            k0 = lo[1 - o]
            if k0 <= lower[o]:
                _cut_high(o, lower[o], hi, bottom, stale, value)
            elif k0 >= g[o]:
                _cut_low(o, g[o], lo, total, top, stale, lower, sum_lower, value)
            else:
                _cut_low(o, k0, lo, total, top, stale, lower, sum_lower, value)
                _cut_high(o, k0, hi, bottom, stale, value)
            continue
        needed = water[0] + water[1]
        k_lo = max(first[0], first[1])
        k_hi = min(last[0], last[1])
        if k_lo <= k_hi:  # the blocks share counts k, where W(k) = needed
            if needed <= volume:
                for s in range(2):
                    _cut_low(s, k_hi, lo, total, top, stale, lower, sum_lower, value)
            else:
                for s in range(2):
                    _cut_high(s, k_lo - 1, hi, bottom, stale, value)
        else:  # W is monotone: compare the lower block's last count with the upper's first
            low = 0 if last[0] < first[1] else 1
            if needed <= volume:  # W(last[low]) <= needed
                _cut_low(low, last[low], lo, total, top, stale, lower, sum_lower, value)
            else:  # W(first[up]) >= needed
                up = 1 - low
                _cut_high(up, first[up] - 1, hi, bottom, stale, value)
    k = lo[0]
    used = (k * top[0] - total[0]) + (k * top[1] - total[1])
    delta = max(0.0, (volume - used) / k)
    rise_pos = min(delta, bottom[0] - top[0])
    rise_neg = min(delta, bottom[1] - top[1])
    level_pos = top[0] + 0.5 * (delta + rise_pos - rise_neg)  # gamma - b
    level_neg = top[1] + 0.5 * (delta - rise_pos + rise_neg)  # gamma + b
    return 0.5 * (level_pos + level_neg), 0.5 * (level_neg - level_pos), k, top[0], top[1]


@numba.njit(cache=True)
def water_level_bias_near(y, c, volume, guess_pos, guess_neg, width, npos, buf, where):
    """:func:`water_level_bias` when each class's ``k*``-th response is known to lie near a guess.

    :func:`~sbpbench.solvers.responses.update_and_class_windows` counts and sums each
    class's responses below the window ``[guess - width, guess + width)`` of its class and
    gathers those inside, in one pass; :func:`level_from_windows` runs the selections of
    :func:`water_level_bias` on the gathered responses only.

    Parameters
    ----------
    y, c, volume
        As for :func:`water_level_bias`.
    guess_pos, guess_neg : float
        Guesses of ``top_pos`` and ``top_neg``.
    width : float
        Half-width of both windows.
    npos : int
        The number of positives, ``#{i : y_i > 0}``.
    buf : numpy.ndarray of float, shape (n,)
        Scratch space, overwritten.
    where : numpy.ndarray of int64, shape (n,)
        Scratch space for the gathered indices, overwritten.

    Returns
    -------
    tuple
        What :func:`level_from_windows` returns.
    """
    windows = update_and_class_windows(c, c, y, None, 0.0, 0.0, np.array([guess_pos, guess_neg]), width, npos, buf,
                                       where, np.empty(BLOCK, np.uint8), np.empty(BLOCK, np.int64))
    return level_from_windows(c, volume, windows, npos, buf, where)


@numba.njit(cache=True)
def level_from_windows(c, volume, windows, npos, buf, where):
    """The two-basin level from the responses gathered by :func:`~sbpbench.solvers.responses.update_and_class_windows`.

    The answer is the global one (that of :func:`water_level_bias`) when its ``k*`` lies
    strictly inside both classes' windows of ranks and ``W(k*) <= volume < W(k* + 1)`` holds
    (``W`` as in :func:`water_level_bias`); then ``k``, ``top_pos`` and ``top_neg`` are
    exact (the sums are added in another order, so ``gamma`` and ``b`` may differ in their
    last bits). The selections start with every rank below a window resolved and every rank
    above it dry; the largest resolved and the smallest dry response, which the pass does not
    track, are set to -inf and +inf: the selections read them only for a class still resolved
    at, or dry from, its window's edge, and then ``k*`` is that edge, reported as a miss. The
    gathered points also give, without another pass, what sampling from ``p*`` and the next
    windows need: each class's number of responses strictly below its ``k*``-th, and how many
    of its responses were gathered (their indices, in ``where``, give the next windows'
    centres, :func:`class_window_centers`).

    Parameters
    ----------
    c : numpy.ndarray, shape (n,)
        The responses the windows were gathered from.
    volume : float
        Total water.
    windows : tuple
        What ``update_and_class_windows`` returned.
    npos : int
        The number of positives (where the negatives' gathered responses start).
    buf, where : numpy.ndarray
        The arrays it gathered into (``buf`` is reordered).

    Returns
    -------
    tuple
        ``(gamma, b, k, top_pos, top_neg, inside, below_pos, below_neg, gathered_pos, gathered_neg)``:
        the first five as :func:`water_level_bias`; ``inside`` responses were gathered from
        the windows, ``-1`` when the level left a window (then the rest is meaningless and
        the caller uses :func:`water_level_bias`); ``below_*`` count the class's responses
        below ``top_*``, and ``gathered_*`` were gathered from its window.
    """
    below, inside, total = windows
    if volume <= 0.0 or inside[0] == 0 or inside[1] == 0:
        return 0.0, 0.0, 0, 0.0, 0.0, -1, 0, 0, 0, 0
    hi = below + inside
    # class s's ranks [lo, hi) lie at buf[base + rank]
    base = np.array([-below[0], npos - below[1]])
    gamma, b, k, top_pos, top_neg = _two_basins(buf, base, below.copy(), hi.copy(), total.copy(),
                                                np.full(2, -np.inf), np.full(2, np.inf), volume)
    if not ((below[0] < k) & (k < hi[0]) & (below[1] < k) & (k < hi[1])):
        return gamma, b, k, top_pos, top_neg, -1, 0, 0, 0, 0
    below_pos = _count_below(c, where[:inside[0]], top_pos)
    below_neg = _count_below(c, where[npos:npos + inside[1]], top_neg)
    return (gamma, b, k, top_pos, top_neg, inside[0] + inside[1], below[0] + below_pos, below[1] + below_neg,
            inside[0], inside[1])


@numba.njit(cache=True)
def _count_below(c, idx, top):
    """How many of ``c[idx]`` are below ``top``."""
    count = 0
    for t in range(idx.shape[0]):
        count += c[idx[t]] < top
    return count


@numba.njit(cache=True)
def count_below(c, y, label, top):
    """Responses of class ``label`` below ``top`` (the full-pass counterpart of :func:`level_from_windows`'s)."""
    count = 0
    for i in range(c.shape[0]):
        count += (y[i] == label) & (c[i] < top)
    return count


@numba.njit(cache=True)
def class_window_centers(row, step, y, tops, where, npos, gathered):
    """Where each class's ``k*``-th response will be after the update ``c += step * y * row``.

    The ``k``-th smallest response of class ``s`` (``tops[s]``) moves with the responses of
    the class around it, so its new value is estimated by ``tops[s]`` plus the mean update
    of the class's responses that the last window gathered (``where``, laid out as
    :func:`~sbpbench.solvers.responses.update_and_class_windows` lays it out, ``gathered[s]``
    of them), or of all of the class when none were (after a full selection). Any point of
    the class moves by ``step * y_s * row_j``; a single point's move is noisy (its kernel
    value with the sampled point), the mean of many is not: on full Adult it centred the
    windows within 0.4 of their half-width (95%), against 0.8 for one point's move.

    Parameters
    ----------
    row : numpy.ndarray, shape (n,)
        The kernel row of the update.
    step : float
        The update's step (including ``y_i``).
    y : numpy.ndarray, shape (n,)
        Labels.
    tops : numpy.ndarray, shape (2,)
        Each class's ``k*``-th response before the update.
    where : numpy.ndarray of int64, shape (n,)
        Indices the last window gathered.
    npos : int
        ``#{i : y_i > 0}`` (where the negatives' indices start in ``where``).
    gathered : numpy.ndarray of int64, shape (2,)
        How many each class's window gathered (0: use the whole class).

    Returns
    -------
    numpy.ndarray, shape (2,)
        The windows' centres, positives' first.
    """
    centers = np.empty(2)
    for s in range(2):
        label = 1.0 if s == 0 else -1.0
        total = 0.0
        count = gathered[s]
        if count > 0:
            start = 0 if s == 0 else npos
            for t in range(start, start + count):
                total += row[where[t]]
        else:
            for j in range(row.shape[0]):
                mine = (y[j] > 0) == (s == 0)
                total += row[j] if mine else 0.0
                count += mine
        centers[s] = tops[s] + step * label * (total / max(count, 1))
    return centers


@numba.njit(cache=True)
def nth_lowest_in_class(c, y, label, top, u, below):
    """Index of the ``u``-th point of the ``k`` lowest responses of class ``label``.

    The ``k`` lowest are the ``below`` points of the class with ``c_i < top`` in index
    order and then, in index order, as many with ``c_i == top`` as needed (``top`` is the
    ``k``-th smallest, from :func:`water_level_bias`; ``below`` from
    :func:`count_below` or :func:`level_from_windows`); ``u`` in ``[0, k)``.
    Returns -1 if there is no such point.
    """
    if u < below:
        return _nth(c, y, label, top, False, u)
    return _nth(c, y, label, top, True, u - below)
