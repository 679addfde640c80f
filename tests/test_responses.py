"""The compiled response updates: the branch-free compaction and SBP's fused update-and-window passes."""

import numba
import numpy as np
import pytest

from sbpbench.solvers import responses
from sbpbench.solvers.responses import (
    BLOCK,
    LANES,
    add_row_and_sum,
    compact,
    compact_lanes,
    compact_lanes_scalar,
    update_and_class_windows,
    update_and_window,
    update_and_window_parallel,
    window_blocks,
)


@numba.njit
def _lanes(src, base, flags, start, dst, k):
    return compact_lanes(src, base, flags, start, dst, k)  # an intrinsic is only callable from compiled code


@pytest.mark.parametrize("positions", [False, True])
def test_compact_lanes_equal_the_scalar_reference(positions):
    rng = np.random.default_rng(0)
    src = None if positions else rng.normal(size=64)
    for _ in range(200):
        flags = (rng.random(64) < rng.random()).astype(np.uint8) * rng.integers(1, 255, 64).astype(np.uint8)
        start = int(rng.integers(0, 64 - LANES + 1))
        k = int(rng.integers(0, 5))
        dtype = np.int64 if positions else np.float64
        got, want = np.zeros(16, dtype), np.zeros(16, dtype)
        moved = _lanes(src, 100, flags, start, got, k)
        assert moved == compact_lanes_scalar(src, 100, flags, start, want, k)
        assert moved == np.count_nonzero(flags[start:start + 8])
        assert np.array_equal(got[:k + moved], want[:k + moved])


@pytest.mark.parametrize("m", [0, 1, 7, 8, 9, 63, 512])
@pytest.mark.parametrize("density", [0.0, 0.05, 0.5, 1.0])
def test_compact_keeps_the_flagged_entries_in_order(m, density):
    rng = np.random.default_rng(m)
    values = rng.normal(size=m)
    flags = (rng.random(m) < density).astype(np.uint8)
    buf = np.full(m + 10, np.nan)
    assert compact(values, 0, flags, buf, 3, buf.size) == 3 + flags.sum()
    assert np.array_equal(buf[3:3 + flags.sum()], values[flags > 0])
    where = np.full(m + 10, -1)
    assert compact(None, 1000, flags, where, 0, where.size) == flags.sum()
    assert np.array_equal(where[:flags.sum()], 1000 + np.flatnonzero(flags))


def test_lanes_of_a_strided_array_are_refused_or_follow_its_strides():
    strided, dst = np.arange(32.0)[::2], np.empty(16)
    if responses.VECTOR_COMPRESS:  # the vector reads consecutive elements: it must not accept strides
        with pytest.raises(numba.core.errors.TypingError):
            _lanes(strided, 0, np.ones(16, np.uint8), 0, dst, 0)
    else:
        assert _lanes(strided, 0, np.ones(16, np.uint8), 0, dst, 0) == 8
        assert np.array_equal(dst[:8], strided[:8])


def test_compact_never_writes_past_its_limit():
    values = np.arange(40.0)
    flags = np.ones(40, np.uint8)
    buf = np.full(30, -1.0)
    assert compact(values, 0, flags, buf, 0, 20) == 40  # counts all, stores only the first 20
    assert np.array_equal(buf[:20], values[:20])
    assert (buf[20:] == -1).all()


def _responses(n, seed):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    return rng.normal(size=n), rng.normal(size=n), y, rng.random(n)


@pytest.mark.parametrize("n", [5, BLOCK + 3, 3 * BLOCK])
def test_update_and_window_is_the_update_and_the_window(n):
    c, acc, y, row = _responses(n, n)
    c0, acc0 = c.copy(), acc.copy()
    add_row_and_sum(c0, acc0, y, row, 0.3, 7.0)
    buf = np.empty(n)
    low, high = -0.2, 0.4
    blocks, sums = window_blocks(n)
    below, covered, inside, inside_sum = update_and_window(c, acc, y, row, 0.3, 7.0, low, high, buf, blocks, sums)
    assert np.array_equal(c, c0) and np.array_equal(acc, acc0)  # the arithmetic of add_row_and_sum
    is_low, is_inside = c < low, (c >= low) & (c < high)
    assert (below, inside) == (is_low.sum(), is_inside.sum())
    assert covered == pytest.approx(c[is_low].sum(), rel=1e-12, abs=1e-12)
    assert inside_sum == pytest.approx(c[is_inside].sum(), rel=1e-12, abs=1e-12)
    assert np.array_equal(buf[:inside], c[is_inside])
    starts = np.arange(0, n, BLOCK)  # per block: the count below, and where its gathered ones start
    assert np.array_equal(blocks[0], np.append(np.add.reduceat(is_low, starts), 0))
    assert np.array_equal(blocks[1], np.append(np.cumsum(is_inside)[starts] - is_inside[starts], inside))
    # without a row the responses are only read
    again = update_and_window(c, None, None, None, 0.0, 0.0, low, high, buf, *window_blocks(n))
    assert np.array_equal(c, c0) and again[0] == below and again[2] == inside


@pytest.mark.parametrize("n", [5, BLOCK + 3, 7 * BLOCK + 100])
@pytest.mark.parametrize("threads", [2, 3, 8])
def test_update_and_window_split_over_threads_is_the_same_bit_for_bit(n, threads):
    """Any number of stretches (more than blocks, too), windows that gather almost all (the 8-lane
    stores stop at each stretch's end) or a few: the responses, sums and gathered ones of one thread."""
    for low, high in ((-0.2, 0.4), (-5.0, 5.0), (1.5, 1.6)):
        c, acc, y, row = _responses(n, n)
        one = [c.copy(), acc.copy(), np.full(n, np.nan), *window_blocks(n)]
        split = [c.copy(), acc.copy(), np.full(n, np.nan), *window_blocks(n)]
        got = [f(s[0], s[1], y, row, 0.3, 7.0, low, high, s[2], s[3], s[4], *extra)
               for f, s, extra in ((update_and_window, one, ()), (update_and_window_parallel, split, (threads,)))]
        assert got[0] == got[1]
        inside = got[0][2]
        one[2], split[2] = one[2][:inside], split[2][:inside]  # past the gathered ones: junk
        for mine, theirs in zip(one, split):  # responses, running sums, gathered, per-block counts and sums
            assert np.array_equal(mine, theirs)


@pytest.mark.parametrize("n", [6, BLOCK + 5, 3 * BLOCK])
def test_update_and_class_windows_is_the_update_and_each_class_window(n):
    c, acc, y, row = _responses(n, n + 1)
    c0, acc0 = c.copy(), acc.copy()
    add_row_and_sum(c0, acc0, y, row, -0.2, 3.0)
    npos = int((y > 0).sum())
    buf, where = np.empty(n), np.full(n, -1)
    centers, width = np.array([-0.1, 0.5]), 0.3
    low, high = centers - width, centers + width
    below, inside, total = update_and_class_windows(c, acc, y, row, -0.2, 3.0, centers, width, npos, buf, where,
                                                    np.empty(BLOCK, np.uint8), np.empty(BLOCK, np.int64))
    assert np.array_equal(c, c0) and np.array_equal(acc, acc0)
    for s, (label, start) in enumerate(((1.0, 0), (-1.0, npos))):
        mine = y == label
        is_low, is_inside = mine & (c < low[s]), mine & (c >= low[s]) & (c < high[s])
        assert (below[s], inside[s]) == (is_low.sum(), is_inside.sum())
        assert total[s] == pytest.approx(c[is_low].sum(), rel=1e-12, abs=1e-12)
        assert np.array_equal(where[start:start + inside[s]], np.flatnonzero(is_inside))
        assert np.array_equal(buf[start:start + inside[s]], c[is_inside])


def test_vector_compress_is_used_where_llvm_has_it():
    assert (responses.compact_lanes is responses._compact_lanes_vector) == responses.VECTOR_COMPRESS
