"""The "water level" of the SBP paper (Section 3.2, Algorithm 2).

Given responses ``c`` and a volume ``V = n nu`` of water poured into a basin whose floor
has heights ``c``, the water level ``gamma`` is the common surface height:
``sum_i max(0, gamma - c_i) = V``. It is the optimal value of the inner problem of
Equation 3.1, and the minimax-optimal distribution ``p*`` is uniform on ``{i : c_i < gamma}``.

:func:`water_level` is Algorithm 2 written as a selection: it partitions a scratch copy
of ``c`` three ways around a median-of-three pivot, decides from the count and sum of the
values below the pivot whether the level lies below or above it, and recurses into one
side only, so the expected time is linear in ``n`` (no sort).

:func:`water_level_near` is the same selection started from a guess (SBP's level moves
little between iterations): one branch-free pass brackets the level in a window around
the guess and the selection runs on the few responses inside it.
:func:`water_level_bias_near` does the same for the two-basin water filling with a bias,
with one window per class.
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


@numba.njit(cache=True, inline="always")
def _partition3(buf, lo, hi):
    """Three-way partition of ``buf[lo:hi]`` around a median-of-three pivot.

    Returns ``(lt, gt, pivot, sum_lt)``: afterwards ``buf[lo:lt] < pivot``,
    ``buf[lt:gt] == pivot``, ``buf[gt:hi] > pivot``, and ``sum_lt = sum(buf[lo:lt])``.
    """
    pivot = _median3(buf[lo], buf[(lo + hi) // 2], buf[hi - 1])
    lt = lo
    i = lo
    gt = hi
    sum_lt = 0.0
    while i < gt:
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
    return lt, gt, pivot, sum_lt


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
    return _select_level(buf, 0, n, 0, 0.0, volume)


@numba.njit(cache=True)
def _select_level(buf, lo, hi, below, covered, volume):
    """The selection of :func:`water_level` on ``buf[lo:hi]``, ``below`` values lower with sum ``covered``.

    The level must lie at or above every value outside ``buf[lo:hi]`` that is counted in
    ``below`` and at or below every other one.
    """
    start = lo
    while lo < hi:
        lt, gt, pivot, sum_lt = _partition3(buf, lo, hi)
        # water needed to raise everything below the pivot up to the pivot
        if pivot * (below + lt - start) - (covered + sum_lt) >= volume:
            hi = lt  # the level is at most the pivot: the pivot and above stay dry
        else:
            covered += sum_lt + pivot * (gt - lt)  # the level is above the pivot
            lo = gt
    count = below + lo - start
    return (volume + covered) / count, count


@numba.njit(cache=True)
def water_level_near(c, volume, guess, width, buf):
    """:func:`water_level` when the level is known to lie near ``guess``, in one branch-free pass.

    One vectorized pass counts and sums the responses below ``guess - width`` and in
    ``[guess - width, guess + width)``; if the water of the two window edges brackets
    ``volume``, a second pass gathers the responses in the window into ``buf`` and the
    selection of :func:`water_level` runs on them only. The level and the set below it are
    those of :func:`water_level` (the sums are added in another order, so ``gamma`` may differ
    in its last bits).

    Returns
    -------
    gamma : float
    below : int
    inside : int
        Responses gathered from the window; ``-1`` if the level lies outside it (then
        ``gamma`` and ``below`` are meaningless and the caller uses :func:`water_level`).
    """
    low_edge = guess - width
    high_edge = guess + width
    n_low, sum_low, inside, sum_inside = _window_sums(c, low_edge, high_edge)
    if volume <= 0.0 or low_edge * n_low - sum_low >= volume:
        return 0.0, 0, -1  # the level is below the window
    if high_edge * (n_low + inside) - (sum_low + sum_inside) < volume:
        return 0.0, 0, -1  # above it
    gathered = 0
    for i in range(c.shape[0]):
        v = c[i]
        if (v >= low_edge) & (v < high_edge):  # rarely true: a predictable branch
            buf[gathered] = v
            gathered += 1
    gamma, below = _select_level(buf, 0, inside, n_low, sum_low, volume)
    return gamma, below, inside


@numba.njit(cache=True, fastmath={"reassoc"})
def _window_sums(c, low_edge, high_edge):
    """Count and sum of ``c`` below ``low_edge`` and in ``[low_edge, high_edge)`` (SIMD sums)."""
    n_low = 0
    sum_low = 0.0
    inside = 0
    sum_inside = 0.0
    for i in range(c.shape[0]):
        v = c[i]
        is_low = v < low_edge
        is_inside = (v >= low_edge) & (v < high_edge)
        n_low += is_low
        sum_low += v if is_low else 0.0
        inside += is_inside
        sum_inside += v if is_inside else 0.0
    return n_low, sum_low, inside, sum_inside


@numba.njit(cache=True)
def nth_below(c, gamma, u):
    """Index of the ``u``-th (0-based) entry of ``c`` with ``c_i < gamma``, or -1."""
    seen = 0
    for i in range(c.shape[0]):
        seen += c[i] < gamma  # branch-free: c_i < gamma is unpredictable
        if seen > u:
            return i
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
def water_level_bias_near(y, c, volume, guess_pos, guess_neg, width, buf, where):
    """:func:`water_level_bias` when each class's ``k*``-th response is known to lie near a guess.

    :func:`gather_class_windows` counts, sums and bounds each class's responses below and
    above the window ``[guess - width, guess + width)`` of its class and gathers those
    inside, in one pass; :func:`level_from_windows` runs the selections of
    :func:`water_level_bias` on the gathered responses only.

    Parameters
    ----------
    y, c, volume
        As for :func:`water_level_bias`.
    guess_pos, guess_neg : float
        Guesses of ``top_pos`` and ``top_neg``.
    width : float
        Half-width of both windows.
    buf : numpy.ndarray of float, shape (n,)
        Scratch space, overwritten.
    where : numpy.ndarray of int64, shape (n,)
        Scratch space for the gathered indices, overwritten.

    Returns
    -------
    tuple
        What :func:`level_from_windows` returns.
    """
    classes = (np.flatnonzero(y > 0), np.flatnonzero(y <= 0))
    windows = gather_class_windows(classes, c, np.array([guess_pos - width, guess_neg - width]),
                                   np.array([guess_pos + width, guess_neg + width]), buf, where)
    return level_from_windows(c, volume, windows, buf, where)


@numba.njit(cache=True)
def level_from_windows(c, volume, windows, buf, where):
    """The two-basin level from the responses gathered by :func:`gather_class_windows`.

    The answer is the global one (that of :func:`water_level_bias`) when its ``k*`` lies
    strictly inside both classes' windows of ranks and ``W(k*) <= volume < W(k* + 1)`` holds
    (``W`` as in :func:`water_level_bias`); then ``k``, ``top_pos`` and ``top_neg`` are
    exact (the sums are added in another order, so ``gamma`` and ``b`` may differ in their
    last bits). The gathered points also give, without another pass, what sampling from
    ``p*`` and the next windows need: each class's number of responses strictly below its
    ``k*``-th, and one point whose response is the ``k*``-th.

    Parameters
    ----------
    c : numpy.ndarray, shape (n,)
        The responses the windows were gathered from.
    volume : float
        Total water.
    windows : tuple
        What :func:`gather_class_windows` returned.
    buf, where : numpy.ndarray
        The arrays it gathered into (``buf`` is reordered).

    Returns
    -------
    tuple
        ``(gamma, b, k, top_pos, top_neg, inside, below_pos, below_neg, at_pos, at_neg)``:
        the first five as :func:`water_level_bias`; ``inside`` responses were gathered from
        the windows, ``-1`` when the level left a window (then the rest is meaningless and
        the caller uses :func:`water_level_bias`); ``below_*`` count the class's responses
        below ``top_*`` and ``at_*`` is the index of one whose response equals it.
    """
    n = c.shape[0]
    below, inside, total, top, bottom = windows
    if volume <= 0.0 or inside[0] == 0 or inside[1] == 0:
        return 0.0, 0.0, 0, 0.0, 0.0, -1, 0, 0, -1, -1
    lo = below.copy()
    hi = below + inside
    # the negatives were gathered from the back of buf: ranks [lo, hi) at buf[base + rank]
    base = np.array([-below[0], n - inside[1] - below[1]])
    gamma, b, k, top_pos, top_neg = _two_basins(buf, base, lo, hi.copy(), total.copy(), top.copy(),
                                                bottom.copy(), volume)
    if not ((below[0] < k) & (k < hi[0]) & (below[1] < k) & (k < hi[1])):
        return gamma, b, k, top_pos, top_neg, -1, 0, 0, -1, -1
    below_pos, at_pos = _count_below_and_at(c, where[:inside[0]], top_pos)
    below_neg, at_neg = _count_below_and_at(c, where[n - inside[1]:], top_neg)
    return (gamma, b, k, top_pos, top_neg, inside[0] + inside[1], below[0] + below_pos, below[1] + below_neg,
            at_pos, at_neg)


@numba.njit(cache=True)
def gather_class_windows(classes, c, low, high, buf, where, row=None, step=0.0, acc=None, weight=0.0):
    """One pass over the responses for :func:`level_from_windows`, optionally updating them first.

    Per class ``s`` (0: positives, 1: negatives; ``classes[s]`` its indices, ascending):
    count, sum and largest of the responses below ``low[s]``, smallest at or above
    ``high[s]``, and the count inside; those inside are gathered into ``buf`` and their
    indices into ``where``, positives from the front and negatives from the back. With
    ``row`` given, each response is first updated as SBP does (``c += step * y * row`` and
    ``acc += weight * step * y * row`` with ``y = +1`` or ``-1`` the class, the arithmetic
    of :func:`~sbpbench.solvers.responses.add_row_and_sum`), so that an iteration reads its
    responses once.

    Class by class, and with selects instead of branches except for the rare responses
    inside a window: whether a response lies below or above its window follows no pattern,
    and branches on it took twice as long on Adult.

    Returns
    -------
    tuple of numpy.ndarray, each of shape (2,)
        ``(below, inside, total, top, bottom)``: counts below and inside the windows, sum
        and largest below, smallest above.
    """
    n = c.shape[0]
    below = np.zeros(2, np.int64)
    inside = np.zeros(2, np.int64)
    total = np.zeros(2)
    top = np.full(2, -np.inf)
    bottom = np.full(2, np.inf)
    for s in range(2):
        label = 1.0 if s == 0 else -1.0
        lo, hi = low[s], high[s]
        count = gathered = 0
        summed = 0.0
        largest = -np.inf
        smallest = np.inf
        idx = classes[s]
        for t in range(idx.shape[0]):
            i = idx[t]
            if row is not None:
                v = step * label * row[i]
                c[i] += v
                acc[i] += weight * v
            v = c[i]
            is_low = v < lo
            is_high = v >= hi
            count += is_low
            summed += v if is_low else 0.0
            largest = max(largest, v if is_low else -np.inf)
            smallest = min(smallest, v if is_high else np.inf)
            if not (is_low | is_high):  # rarely true: a predictable branch
                slot = gathered if s == 0 else n - 1 - gathered
                buf[slot] = v
                where[slot] = i
                gathered += 1
        below[s], inside[s], total[s], top[s], bottom[s] = count, gathered, summed, largest, smallest
    return below, inside, total, top, bottom


@numba.njit(cache=True)
def _count_below_and_at(c, idx, top):
    """Over ``c[idx]``: how many are below ``top``, and an index with ``c == top`` (-1 if none)."""
    count = 0
    at = -1
    for t in range(idx.shape[0]):
        v = c[idx[t]]
        count += v < top
        if v == top:
            at = idx[t]
    return count, at


@numba.njit(cache=True)
def count_below_and_at(c, y, label, top):
    """Responses of class ``label`` below ``top``, and the index of one equal to it (-1 if none).

    The full-pass counterpart of what :func:`water_level_bias_near` returns.
    """
    count = 0
    at = -1
    for i in range(c.shape[0]):
        if y[i] == label:
            count += c[i] < top
            if c[i] == top:
                at = i
    return count, at


@numba.njit(cache=True)
def nth_lowest_in_class(c, y, label, top, u, below):
    """Index of the ``u``-th point of the ``k`` lowest responses of class ``label``.

    The ``k`` lowest are the ``below`` points of the class with ``c_i < top`` in index
    order and then, in index order, as many with ``c_i == top`` as needed (``top`` is the
    ``k``-th smallest, from :func:`water_level_bias`; ``below`` from
    :func:`count_below_and_at` or :func:`water_level_bias_near`); ``u`` in ``[0, k)``.
    Returns -1 if there is no such point.
    """
    want_below = u < below
    seen = 0
    target = u if want_below else u - below
    for i in range(c.shape[0]):
        seen += (y[i] == label) & ((c[i] < top) if want_below else (c[i] == top))
        if seen > target:
            return i
    return -1
