"""The two-basin water level (Algorithm 3) against a linear program, and its p*."""

import numpy as np
import pytest

from sbpbench.solvers.waterlevel import (
    SAMPLE_BLOCK,
    class_window_centers,
    count_below,
    nth_lowest_in_class,
    water_level_bias,
    water_level_bias_near,
)
from tests.exact import two_basin_lp


def _support(y, c, k, top_pos, top_neg):
    """The points p* samples: the u-th lowest of each class for u in [0, k)."""
    below_pos = count_below(c, y, 1.0, top_pos)
    below_neg = count_below(c, y, -1.0, top_neg)
    assert (below_pos, below_neg) == ((c < top_pos)[y == 1].sum(), (c < top_neg)[y == -1].sum())
    pos = [nth_lowest_in_class(c, y, 1.0, top_pos, u, below_pos) for u in range(k)]
    neg = [nth_lowest_in_class(c, y, -1.0, top_neg, u, below_neg) for u in range(k)]
    return np.array(pos), np.array(neg)


def _check(y, c, volume):
    gamma, b, k, top_pos, top_neg = water_level_bias(y, c, volume, np.empty(c.size))
    ref, _ = two_basin_lp(y, c, volume)
    scale = max(1.0, abs(ref))
    assert gamma == pytest.approx(ref, abs=1e-8 * scale)
    # (gamma, b) is feasible: the water needed is the volume
    assert np.maximum(0.0, gamma - c - y * b).sum() <= volume + 1e-8 * scale
    # b is the midpoint of the interval of optimal biases (Algorithm 3, line 42)
    b_lo = two_basin_lp(y, c, volume, gamma=ref - 1e-10 * scale, sense=1)[1]
    b_hi = two_basin_lp(y, c, volume, gamma=ref - 1e-10 * scale, sense=-1)[1]
    assert b_lo - 1e-6 * scale <= b <= b_hi + 1e-6 * scale
    assert b == pytest.approx(0.5 * (b_lo + b_hi), abs=1e-6 * scale)
    # p* = 1/(2k) on the k lowest of each class is minimax optimal: its dual value
    # sum p_i c_i + volume max_i p_i (with sum p_i y_i = 0) equals the optimum
    pos, neg = _support(y, c, k, top_pos, top_neg)
    assert (pos >= 0).all() and (neg >= 0).all()
    assert (y[pos] == 1).all() and (y[neg] == -1).all()
    assert len(set(pos)) == k and len(set(neg)) == k
    dual = (c[pos].sum() + c[neg].sum()) / (2 * k) + volume / (2 * k)
    assert dual == pytest.approx(ref, abs=1e-8 * scale)
    return gamma, b, k


def test_random_against_linear_program():
    rng = np.random.default_rng(0)
    for _trial in range(150):
        n = int(rng.integers(2, 60))
        y = np.where(rng.random(n) < rng.uniform(0.1, 0.9), 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
        c = rng.standard_normal(n) * rng.choice([0.01, 1.0, 100.0])
        volume = float(rng.choice([0.0, rng.uniform(0, 0.1), rng.uniform(0, n)]) * np.abs(c).max())
        _check(y, c, volume)


def test_ties():
    rng = np.random.default_rng(1)
    for _trial in range(100):
        n = int(rng.integers(2, 40))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
        c = rng.integers(-3, 4, n).astype(float)  # many equal responses
        volume = float(rng.integers(0, 2 * n))  # water often ends exactly at a response
        _check(y, c, volume)


def test_all_equal_responses():
    y = np.array([1.0, -1.0] * 5 + [1.0] * 3)
    c = np.full(y.size, 0.7)
    for volume in (0.0, 1.0, 5.0, 40.0):
        gamma, b, k = _check(y, c, volume)
        assert k == 5  # every point of the smaller class is submerged once any water is poured
    gamma, b, k, _, _ = water_level_bias(y, c, 0.0, np.empty(y.size))
    assert (gamma, b) == (0.7, 0.0)


def test_one_class_much_smaller():
    rng = np.random.default_rng(2)
    y = np.r_[1.0, -np.ones(50)]
    for _trial in range(30):
        c = rng.standard_normal(51)
        volume = float(rng.choice([0.0, 0.3, 3.0, 60.0]))
        gamma, b, k = _check(y, c, volume)
        assert k == 1
        # all the water that the lowest negative cannot hold goes to the single positive
        assert gamma == pytest.approx(0.5 * (c[0] + np.sort(c[1:])[0] + volume))
    _check(-y, rng.standard_normal(51), 2.0)


def test_known_values():
    # two points per class; the bias levels the two basins
    y = np.array([1.0, 1.0, -1.0, -1.0])
    c = np.array([0.0, 10.0, 2.0, 10.0])
    gamma, b, k, top_pos, top_neg = water_level_bias(y, c, 1.0, np.empty(4))
    # one point per basin: level gamma - b = a_1 + t, gamma + b = d_1 + (1 - t)
    assert (gamma, k) == (1.5, 1)
    assert b == pytest.approx(0.5 * (2.0 - 0.0))  # midpoint of the optimal biases [0.5, 1.5]
    assert (top_pos, top_neg) == (0.0, 2.0)


def test_needs_both_classes():
    with pytest.raises(ValueError):
        water_level_bias(np.ones(3), np.zeros(3), 1.0, np.empty(3))


@pytest.mark.parametrize("seed", range(30))
def test_windowed_two_basin_level_equals_the_full_one_or_says_it_missed(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 300))
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    rng.shuffle(y)
    c = np.round(rng.normal(size=n), int(rng.integers(1, 4)))  # ties too
    volume = float(rng.exponential()) * rng.choice([1e-3, 1.0, 0.1 * n])
    gamma, b, k, top_pos, top_neg = water_level_bias(y, c, volume, np.empty(n))
    hits = 0
    for guess_pos, guess_neg, width in ((top_pos, top_neg, 1e-3), (top_pos + 0.1, top_neg - 0.05, 0.3),
                                        (top_pos, top_neg, 10.0), (top_pos + 2.0, top_neg, 0.5)):
        got = water_level_bias_near(y, c, volume, guess_pos, guess_neg, width, int((y > 0).sum()), np.empty(n),
                                    np.empty(n, np.int64))
        if got[5] < 0:
            continue
        hits += 1
        assert got[2:5] == (k, top_pos, top_neg)
        assert got[6:8] == ((c < top_pos)[y == 1].sum(), (c < top_neg)[y == -1].sum())
        assert got[8:] == tuple(((y == label) & (c >= guess - width) & (c < guess + width)).sum()
                                for label, guess in ((1, guess_pos), (-1, guess_neg)))
        assert got[5] == sum(got[8:])
        assert got[0] == pytest.approx(gamma, rel=1e-9, abs=1e-9)
        assert got[1] == pytest.approx(b, rel=1e-9, abs=1e-9)
    assert hits >= 1  # the wide window always holds the answer


def test_nth_lowest_in_class_is_the_uth_of_the_class_across_blocks():
    """The blocked count finds the u-th point of the class below top (then at top) in index order."""
    rng = np.random.default_rng(1)
    n = 3 * SAMPLE_BLOCK + 5
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    c = np.round(rng.normal(size=n), 1)
    for label in (1.0, -1.0):
        mine = y == label
        for top in (-0.4, 0.0, 0.7):
            below = np.flatnonzero(mine & (c < top))
            at = np.flatnonzero(mine & (c == top))
            for u in {0, below.size // 3, max(below.size - 1, 0), below.size, below.size + at.size - 1,
                      below.size + at.size}:
                want = np.r_[below, at][u] if u < below.size + at.size else -1
                assert nth_lowest_in_class(c, y, label, top, u, below.size) == want


def test_window_centres_move_each_kth_by_the_mean_update_of_its_class():
    rng = np.random.default_rng(4)
    n, npos = 50, 20
    y = np.r_[np.ones(npos), -np.ones(n - npos)]
    row, tops, step = rng.random(n), np.array([0.3, -0.2]), 0.05
    where = np.full(n, -1)
    where[:3] = [1, 4, 7]  # gathered positives
    where[npos:npos + 2] = [30, 41]  # gathered negatives
    got = class_window_centers(row, step, y, tops, where, npos, np.array([3, 2]))
    assert got == pytest.approx([0.3 + step * row[[1, 4, 7]].mean(), -0.2 - step * row[[30, 41]].mean()], rel=1e-14)
    everyone = class_window_centers(row, step, y, tops, where, npos, np.array([0, 0]))  # after a full selection
    assert everyone == pytest.approx([0.3 + step * row[:npos].mean(), -0.2 - step * row[npos:].mean()], rel=1e-14)
