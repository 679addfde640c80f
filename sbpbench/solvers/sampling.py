"""Examples drawn for the stochastic solvers, in chunks from the run's generator."""

from __future__ import annotations

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
_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF


class UniformIndex:
    """``int(rng.integers(high))``, one ``high`` at a time, the same numbers numpy's Generator gives.

    A call of ``Generator.integers`` with one Python int costs microseconds, as much as the rest of
    SBP's sampling from ``p*`` (BENCHMARKS.md, SBP iteration, times both), and the bound changes
    every iteration (so no chunk of draws can be taken ahead, as :class:`BatchDraws` does). For a
    PCG64 generator (every run's, :func:`sbpbench.execution.loop.run_rng`) this class computes the
    same numbers as numpy does, from the bit generator's raw 64-bit outputs fetched
    :data:`RAW_CHUNK` at a time (``random_raw``): numpy draws ``integers(high)``
    (``high - 1 = r``) as ``0`` without a draw when ``r = 0``; by Lemire's method on the 32-bit
    stream when ``r < 2^32 - 1`` (a 32-bit word ``u`` gives ``(u high) >> 32`` unless the low half
    of ``u high`` is below ``2^32 mod high``, then it draws again); the word itself when
    ``r = 2^32 - 1``; by Lemire's method on 64-bit outputs beyond. The 32-bit stream is the low
    half of a 64-bit output, then its high half (PCG64 keeps the half it has not given out),
    starting from the state the generator had. The tests compare with ``Generator.integers`` over many bounds.

    The generator's own state runs ahead by the outputs fetched and not used: nothing else may
    draw from it afterwards (the solver that owns it is its only user). Other bit generators
    are asked through ``rng.integers`` each time.
    """

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self._exact = type(rng.bit_generator) is np.random.PCG64
        state = rng.bit_generator.state
        #: The high half of the last 64-bit output, while not given out (numpy's ``uinteger``).
        self._half: int | None = int(state["uinteger"]) if self._exact and state["has_uint32"] else None
        self._raw: list[int] = []  # 64-bit outputs fetched, the next at _pos
        self._pos = 0

    def _next64(self) -> int:
        if self._pos == len(self._raw):
            self._raw = self.rng.bit_generator.random_raw(RAW_CHUNK).tolist()
            self._pos = 0
        self._pos += 1
        return self._raw[self._pos - 1]

    def _next32(self) -> int:
        if self._half is not None:
            word, self._half = self._half, None
            return word
        raw = self._next64()
        self._half = raw >> 32
        return raw & _MASK32

    def __call__(self, high: int) -> int:
        """A draw uniform in ``0, ..., high - 1`` (``high >= 1``), as ``int(rng.integers(high))``."""
        if not self._exact:
            return int(self.rng.integers(high))
        r = high - 1
        if r == 0:
            return 0
        if r == _MASK32:
            return self._next32()
        bits, mask, draw = (32, _MASK32, self._next32) if r < _MASK32 else (64, _MASK64, self._next64)
        m = draw() * high
        if (m & mask) < high:
            threshold = (mask - r) % high
            while (m & mask) < threshold:
                m = draw() * high
        return m >> bits
