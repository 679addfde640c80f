"""sbpbench.solvers.sampling.UniformIndex: numpy's ``Generator.integers(high)``, number for number."""

import numpy as np
import pytest

from sbpbench.solvers.sampling import RAW_CHUNK, UniformIndex

#: Bounds of every branch: no draw (1), Lemire on 32-bit words (with rejections likelier for
#: large bounds), the 32-bit word itself (2^32), Lemire on 64-bit outputs beyond.
BOUNDS = [1, 2, 3, 7, 358, 1000, 2**31 + 1, 3 * 2**30, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 3, 2**62 + 3, 3 * 2**61]


@pytest.mark.parametrize("buffered_half", [False, True])
def test_draws_are_numpys_for_every_kind_of_bound(buffered_half):
    """Each bound several times, mixed with SBP-sized ones, past several chunks of raw outputs,
    starting with and without a half word buffered in the generator's state."""
    ours, theirs = np.random.default_rng(11), np.random.default_rng(11)
    if buffered_half:  # a 32-bit draw leaves the high half of a 64-bit output in the state
        ours.integers(10)
        theirs.integers(10)
        assert theirs.bit_generator.state["has_uint32"]
    small = np.random.default_rng(3).integers(1, 40000, 3 * RAW_CHUNK).tolist()
    bounds = BOUNDS * 20 + small
    draw = UniformIndex(ours)
    assert [draw(b) for b in bounds] == [int(theirs.integers(b)) for b in bounds]


def test_another_bit_generator_is_asked_each_time():
    draw = UniformIndex(np.random.Generator(np.random.MT19937(5)))
    expected = np.random.Generator(np.random.MT19937(5))
    assert [draw(b) for b in BOUNDS] == [int(expected.integers(b)) for b in BOUNDS]


def test_draws_are_uniform():
    draw = UniformIndex(np.random.default_rng(0))
    counts = np.bincount([draw(7) for _ in range(7000)], minlength=7)
    assert counts.size == 7 and counts.min() > 850 and counts.max() < 1150
