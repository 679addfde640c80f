"""Examples drawn for the stochastic solvers, in chunks from the run's generator."""

from __future__ import annotations

import numba
import numpy as np

#: Draws taken from the generator at once (mini-batches for Pegasos and primal SGD,
#: coordinates for SDCA); part of the random stream, so changing it changes every curve.
DRAW_CHUNK = 4096


def draws_bytes(k: int, n: int, d: int) -> float:
    """Bytes of :class:`BatchDraws`' chunk for mini-batches of ``k`` (a parameter's declared
    ``memory``, :func:`sbpbench.params.param`): :data:`DRAW_CHUNK` int64 batches."""
    return 8.0 * DRAW_CHUNK * k


class BatchDraws:
    """Mini-batches of ``k`` examples drawn i.i.d. uniform from ``n``, :data:`DRAW_CHUNK` at a time.

    Kernel Pegasos and the primal SGD solvers draw through it, so that both representations
    of Pegasos see the same examples in the same order.
    """

    def __init__(self, rng: np.random.Generator, n: int, k: int):
        self.rng, self.n, self.k = rng, n, k
        self._chunk = np.empty((0, k), dtype=np.int64)
        self._pos = 0  # batches of the chunk already taken

    def _fill(self) -> None:
        if self._pos == self._chunk.shape[0]:
            self._chunk = self.rng.integers(0, self.n, size=(DRAW_CHUNK, self.k))
            self._pos = 0

    def take(self, count: float) -> np.ndarray:
        """The next ``min(count, batches left in the chunk)`` batches, at least one.

        Parameters
        ----------
        count : float
            Most batches wanted (at least 1; may be infinite).

        Returns
        -------
        numpy.ndarray, shape (m, k)
            Example indices, one batch per row.
        """
        self._fill()
        m = int(min(self._chunk.shape[0] - self._pos, count))
        self._pos += m
        return self._chunk[self._pos - m:self._pos]

    def peek(self, count: float) -> np.ndarray:
        """The batches :meth:`take` would give, without taking them (:meth:`skip` takes them)."""
        self._fill()
        return self._chunk[self._pos:self._pos + int(min(self._chunk.shape[0] - self._pos, count))]

    def skip(self, count: int) -> None:
        """Take the next ``count`` batches, at most those :meth:`peek` gave."""
        self._pos += count


#: Raw 64-bit outputs :class:`UniformIndex` fetches from the bit generator at once.
RAW_CHUNK = 1024
#: What :func:`draw_index` returns when the raw outputs fetched ran out (nothing taken).
NEED_RAW = -1
#: The entries of :attr:`UniformIndex.state`: the next raw output, the end of those fetched,
#: whether the high half of the last one is kept (numpy's ``has_uint32``) and that half.
POS, END, HAS_HALF, HALF = 0, 1, 2, 3
_MASK32 = 0xFFFFFFFF
_M32 = np.uint64(_MASK32)
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_SHIFT = np.uint64(32)


@numba.njit(cache=True, inline="always")
def _high64(a, b):
    """The high 64 bits of the 128-bit product of ``a`` and ``b`` (uint64), from four 32-bit products."""
    a_lo, a_hi, b_lo, b_hi = a & _M32, a >> _SHIFT, b & _M32, b >> _SHIFT
    low, cross1, cross2 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo
    middle = (low >> _SHIFT) + (cross1 & _M32) + (cross2 & _M32)
    return a_hi * b_hi + (cross1 >> _SHIFT) + (cross2 >> _SHIFT) + (middle >> _SHIFT)


@numba.njit(cache=True)
def draw_index(raw, state, high):
    """A draw uniform in ``0, ..., high - 1`` (``high >= 1``), ``int(rng.integers(high))``'s number.

    Numpy's PCG64 ``Generator.integers(high)`` (``high - 1 = r``), from the raw 64-bit outputs
    ``raw[state[POS]:state[END]]``: ``0`` without a draw when ``r = 0``; by Lemire's method on
    the 32-bit stream when ``r < 2^32 - 1`` (a 32-bit word ``u`` gives ``(u high) >> 32``
    unless the low half of ``u high`` is below ``2^32 mod high``, then it draws again); the
    word itself when ``r = 2^32 - 1``; by Lemire's method on 64-bit outputs beyond. The 32-bit
    stream is the low half of a 64-bit output, then its high half (PCG64 keeps the half it
    has not given out, ``state[HAS_HALF]``, ``state[HALF]``).

    Returns
    -------
    int
        The draw, with ``state`` moved past the outputs it took; or :data:`NEED_RAW` when the
        outputs ran out, with ``state`` untouched (fetch more and call again).
    """
    r = high - 1
    if r == 0:
        return 0
    pos, end, has_half, half = state[POS], state[END], state[HAS_HALF], state[HALF]
    h = np.uint64(high)
    wide = r > _MASK32
    mask = _M64 if wide else _M32
    threshold = (mask - np.uint64(r)) % h  # 2^bits mod high: below it a product is redrawn
    while True:
        if wide:  # a 64-bit output; the kept half stays kept
            if pos == end:
                return NEED_RAW
            word = raw[pos]
            pos += 1
            low, result = word * h, _high64(word, h)
        else:
            if has_half:
                word, has_half = np.uint64(half), 0
            else:
                if pos == end:
                    return NEED_RAW
                word = raw[pos] & _M32
                half, has_half = np.int64(raw[pos] >> _SHIFT), 1
                pos += 1
            if r == _MASK32:
                low, result = mask, word
            else:
                product = word * h
                low, result = product & _M32, product >> _SHIFT
        if low >= threshold:
            break
    state[POS], state[HAS_HALF], state[HALF] = pos, has_half, half
    return np.int64(result)


class UniformIndex:
    """``int(rng.integers(high))``, one ``high`` at a time, the same numbers numpy's Generator gives.

    A call of ``Generator.integers`` with one Python int costs microseconds, as much as the rest of
    SBP's sampling from ``p*`` (BENCHMARKS.md, SBP iteration, times both), and the bound changes
    every iteration (so no chunk of draws can be taken ahead, as :class:`BatchDraws` does). For a
    PCG64 generator (every run's, :func:`sbpbench.execution.loop.run_rng`) the draws are
    :func:`draw_index`'s, from the bit generator's raw 64-bit outputs fetched :data:`RAW_CHUNK`
    at a time (``random_raw``) into :attr:`raw`, starting from the state the generator had;
    compiled code draws from :attr:`raw` and :attr:`state` itself, and calls :meth:`refill` when
    they ran out. The tests compare with ``Generator.integers`` over many bounds.

    The generator's own state runs ahead by the outputs fetched and not used: nothing else may
    draw from it afterwards (the solver that owns it is its only user). Other bit generators
    are asked through ``rng.integers`` each time (``exact`` is False).

    Attributes
    ----------
    exact : bool
        Whether the generator is PCG64 (the draws come from :attr:`raw`).
    raw : numpy.ndarray of uint64
        The raw outputs fetched, ``raw[state[POS]:state[END]]`` not used yet.
    state : numpy.ndarray of int64, shape (4,)
        Indexed by :data:`POS`, :data:`END`, :data:`HAS_HALF`, :data:`HALF`.
    """

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.exact = type(rng.bit_generator) is np.random.PCG64
        state = rng.bit_generator.state
        kept = self.exact and bool(state["has_uint32"])
        self.raw = np.empty(0, dtype=np.uint64)
        self.state = np.array([0, 0, kept, int(state["uinteger"]) if kept else 0], dtype=np.int64)

    def refill(self) -> None:
        """Fetch :data:`RAW_CHUNK` more raw outputs after those not used yet."""
        rest = self.raw[self.state[POS]:self.state[END]]
        self.raw = np.concatenate((rest, self.rng.bit_generator.random_raw(RAW_CHUNK)))
        self.state[POS], self.state[END] = 0, self.raw.size

    def __call__(self, high: int) -> int:
        """A draw uniform in ``0, ..., high - 1`` (``high >= 1``), as ``int(rng.integers(high))``."""
        if not self.exact:
            return int(self.rng.integers(high))
        while (u := draw_index(self.raw, self.state, high)) == NEED_RAW:
            self.refill()
        return int(u)
