"""The water level (Algorithm 2) against a linear program solving the same problem."""

import numpy as np
import pytest

from sbpbench.solvers.responses import BLOCK, window_blocks
from sbpbench.solvers.sampling import NEED_RAW, UniformIndex
from sbpbench.solvers.waterlevel import (
    SAMPLE_BLOCK,
    bracket_level,
    nth_below,
    nth_below_gathered,
    sample_below,
    water_level,
    water_level_near,
)
from tests.exact import water_level_lp


def level(c, volume):
    return water_level(np.asarray(c, dtype=float), volume, np.empty(len(c)))


def sample(c, gamma, below, draw, gathered=None):
    """:func:`sample_below` with ``draw``'s raw outputs, refilled whenever they run out (as SBP does)."""
    buf, blocks = gathered if gathered is not None else (np.empty(0), np.zeros((2, 1), np.int64))
    while (i := sample_below(c, gamma, below, gathered is not None, buf, blocks, draw.raw, draw.state)) == NEED_RAW:
        draw.refill()
    return i


@pytest.mark.parametrize("seed", range(40))
def test_random_vectors_match_linear_program(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    c = rng.normal(size=n) * rng.choice([0.01, 1.0, 100.0])
    volume = float(rng.exponential()) * rng.choice([1e-3, 1.0, 10.0 * n])
    gamma, below = level(c, volume)
    assert gamma == pytest.approx(water_level_lp(c, volume), rel=1e-7, abs=1e-7)
    assert below == np.sum(c < gamma)
    assert np.maximum(0.0, gamma - c).sum() == pytest.approx(volume, rel=1e-9)


def test_ties_are_covered_together():
    c = np.array([3.0, 1.0, 1.0, 1.0, 2.0, 1.0])
    gamma, below = level(c, 0.4)
    assert gamma == pytest.approx(1.1)
    assert below == 4


def test_volume_smaller_than_one_gap():
    c = np.array([5.0, 0.0, 1.0, 2.0])
    gamma, below = level(c, 0.25)
    assert gamma == pytest.approx(0.25)
    assert below == 1


def test_all_equal_responses():
    c = np.full(7, -0.3)
    gamma, below = level(c, 0.7)
    assert gamma == pytest.approx(-0.2)
    assert below == 7


def test_volume_covering_everything():
    c = np.array([0.0, 1.0, 2.0])
    gamma, below = level(c, 30.0)
    assert gamma == pytest.approx(11.0)
    assert below == 3


def test_zero_volume_is_the_minimum():
    gamma, below = level([2.0, -1.0, 3.0], 0.0)
    assert gamma == -1.0 and below == 0


def test_input_is_not_modified():
    c = np.array([3.0, 1.0, 2.0])
    level(c, 1.0)
    assert c.tolist() == [3.0, 1.0, 2.0]


def test_sampling_is_uniform_below_the_level():
    """Past several refills of the raw outputs (3000 draws of 32 bits, 1024 outputs a refill),
    each index is the ``rng.integers(below)``-th below the level, as numpy draws it."""
    c = np.array([0.0, 5.0, 0.1, 9.0, 0.2])
    gamma, below = level(c, 0.4)  # level 0.7 / 3: the three small values are submerged
    draw, numpys = UniformIndex(np.random.default_rng(0)), np.random.default_rng(0)
    draws = np.array([sample(c, gamma, below, draw) for _ in range(3000)])
    assert np.array_equal(draws, np.flatnonzero(c < gamma)[numpys.integers(below, size=3000)])
    counts = np.bincount(draws, minlength=5)[[0, 2, 4]]
    assert counts.min() > 900


def test_sampling_with_zero_volume_takes_the_minimizers():
    c = np.array([1.0, 0.0, 0.0])
    gamma, below = level(c, 0.0)
    draw, numpys = UniformIndex(np.random.default_rng(1)), np.random.default_rng(1)
    draws = [sample(c, gamma, below, draw) for _ in range(50)]
    assert draws == [1 + int(numpys.integers(2)) for _ in range(50)] and set(draws) == {1, 2}


def test_sampling_falls_back_to_at_or_below_when_rounding_left_fewer():
    """``below`` larger than the count under the level (rounding): a draw past them draws again
    from ``c <= gamma``, with numpy's numbers."""
    c = np.array([0.0, 5.0, 0.1, 1.0])  # under 1.0: 0 and 2; at or under: 0, 2 and 3
    draw, numpys = UniformIndex(np.random.default_rng(4)), np.random.default_rng(4)
    for _ in range(200):
        u = int(numpys.integers(3))
        expected = [0, 2][u] if u < 2 else [0, 2, 3][int(numpys.integers(3))]
        assert sample(c, 1.0, 3, draw) == expected


def test_a_draw_that_runs_out_of_raw_outputs_takes_nothing():
    """Out of raw outputs, sampling says so and leaves the state; after the refill the draw is numpy's."""
    c = np.array([0.0, 5.0, 0.1])
    draw = UniformIndex(np.random.default_rng(2))
    state = draw.state.copy()
    assert sample_below(c, 1.0, 2, False, np.empty(0), np.zeros((2, 1), np.int64), draw.raw, draw.state) == NEED_RAW
    assert np.array_equal(draw.state, state)
    assert sample(c, 1.0, 2, draw) == [0, 2][int(np.random.default_rng(2).integers(2))]


@pytest.mark.parametrize("seed", range(20))
def test_windowed_level_equals_the_full_selection_or_says_it_missed(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    c = np.round(rng.normal(size=n), int(rng.integers(1, 4)))  # ties too
    volume = float(rng.exponential()) * rng.choice([1e-3, 1.0, 0.1 * n])
    gamma, below = level(c, volume)
    hits = 0
    for guess, width in ((gamma, 1e-3), (gamma + 0.05, 0.1), (gamma - 0.5, 0.2), (gamma + 3.0, 0.5), (0.0, 100.0)):
        buf, (blocks, sums) = np.empty(n), window_blocks(n)
        g, b, inside = water_level_near(c, volume, guess, width, buf, blocks, sums)
        bracketed = guess - width < gamma <= guess + width
        if inside < 0:
            # missed only when the level is outside the window (up to rounding at an edge)
            assert not bracketed or min(abs(gamma - guess + width), abs(gamma - guess - width)) < 1e-9
            continue
        hits += 1
        assert g == pytest.approx(gamma, rel=1e-12, abs=1e-12)
        assert b == below == np.sum(c < g)
        assert inside == np.sum((c >= guess - width) & (c < guess + width))
        below_g = np.flatnonzero(c < g)
        for u in {0, b // 2, max(b - 1, 0), b}:  # the gathered responses stay in index order for sampling
            assert nth_below_gathered(c, g, u, buf, blocks) == (below_g[u] if u < b else -1)
    assert hits >= 2  # the exact window and the wide one


@pytest.mark.parametrize("n", [1, SAMPLE_BLOCK - 1, 3 * SAMPLE_BLOCK + 17])
def test_nth_below_is_the_uth_index_below_in_index_order(n):
    """The blocked count finds what a plain scan finds, across block boundaries, and -1 past the end."""
    rng = np.random.default_rng(n)
    c = np.round(rng.normal(size=n), 1)
    for gamma in (-0.5, 0.0, 0.3, 5.0):
        below = np.flatnonzero(c < gamma)
        for u in {0, 1, below.size // 2, max(below.size - 1, 0), below.size, below.size + 3}:
            assert nth_below(c, gamma, u) == (below[u] if u < below.size else -1)


@pytest.mark.parametrize("n", [7, BLOCK, 3 * BLOCK + 17])
def test_sampling_from_a_gathered_window_is_the_full_scans_index(n):
    """Across blocks, with ties at the level and past the last one: the index of :func:`nth_below`."""
    rng = np.random.default_rng(n)
    c = np.round(rng.normal(size=n), 1)
    gamma, below = level(c, 0.05 * n)
    buf, (blocks, sums) = np.empty(n), window_blocks(n)
    for guess, width in ((gamma, 0.15), (gamma + 0.2, 0.35), (0.0, 10.0)):
        g, b, inside = water_level_near(c, 0.05 * n, guess, width, buf, blocks, sums)
        assert inside >= 0 and b == below
        for u in range(b + 2):
            assert nth_below_gathered(c, g, u, buf, blocks) == nth_below(c, g, u)
        draw_a, draw_b = UniformIndex(np.random.default_rng(3)), UniformIndex(np.random.default_rng(3))
        for _ in range(20):
            assert sample(c, g, b, draw_a, (buf, blocks)) == sample(c, g, b, draw_b)


@pytest.mark.parametrize("seed", range(20))
def test_bracket_after_a_missed_window_holds_the_level(seed):
    """Above the window the bracket is exact; below it, it reaches from the Newton step down as far again."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000))
    c = rng.normal(size=n)
    volume = float(rng.uniform(0.005, 0.2)) * n
    gamma, below = level(c, volume)
    hits = 0
    for shift in (-0.3, -0.05, 0.05, 0.3):  # windows above (shift > 0) and below the level
        guess, width = gamma + shift, 0.02
        missed = water_level_near(c, volume, guess, width, np.empty(n), *window_blocks(n))
        assert missed[2] == -1
        low, high = guess - width, guess + width
        window = (np.sum(c < low), c[c < low].sum(), np.sum((c >= low) & (c < high)),
                  c[(c >= low) & (c < high)].sum())
        guess, width = bracket_level(volume, low, high, window)
        got = water_level_near(c, volume, guess, width, np.empty(n), *window_blocks(n))
        if shift < 0:
            assert got[2] >= 0  # the level above the window: always inside the bracket
        if got[2] >= 0:
            hits += 1
            assert got[1] == below
            assert got[0] == pytest.approx(gamma, rel=1e-12, abs=1e-12)
    assert hits >= 3
