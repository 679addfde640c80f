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

    def next(self) -> np.ndarray:
        """The next batch (``take(1)[0]`` without its slicing: kernel Pegasos calls it every iteration)."""
        self._fill()
        self._pos += 1
        return self._chunk[self._pos - 1]
