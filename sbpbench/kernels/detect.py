"""Which storage training rows take, and the conversions into it.

:func:`as_kernel_matrix` puts any input into the general form, float64 CSR or C-contiguous
dense (:data:`DENSE_THRESHOLD`); :func:`is_binary` and :func:`small_integer_scale` tell whether
the data also fit an exact storage (:mod:`sbpbench.kernels.storage`), and :func:`bit_sets` and
:func:`small_integers` convert them into it. Which storage runs (``storage="auto"``):

1. binary bit sets: sparse data, every stored value 1, ``ceil(d / 64)`` words per row at
   most the mean number of stored features;
2. uint8 dense: small-integer data (:func:`integer_scale`) with ``d <= SMALL_INT_MAX_FEATURES``
   (int32 dot products cannot overflow) and density at least :data:`SMALL_INT_MIN_DENSITY`
   (dense input always);
3. float64 CSR: other data with density below :data:`DENSE_THRESHOLD`;
4. float64 dense: the rest.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

#: Data denser than this is stored dense; sparser data stays CSR.
DENSE_THRESHOLD = 0.25
#: Small-integer data are stored as uint8 integers 0..255 (:mod:`sbpbench.kernels.storage`).
SMALL_INT_MAX = 255
#: The most features whose int32 dot products of uint8 rows cannot overflow (d * 255^2 < 2^31).
SMALL_INT_MAX_FEATURES = (2**31 - 1) // SMALL_INT_MAX**2
#: Sparse small-integer data at least this dense take the uint8 dense path (it then reads no
#: more bytes per row than float64 CSR's 12 per nonzero); sparser data stay float64 CSR.
SMALL_INT_MIN_DENSITY = 1.0 / 12.0
#: :func:`integer_scale` first checks this many values, which refuse most data that are not
#: small integers before a pass over all of them.
INTEGER_SAMPLE = 4096


def as_kernel_matrix(X) -> np.ndarray | sp.csr_matrix:
    """Return ``X`` as float64 CSR (sparse data) or C-contiguous dense (dense data).

    Parameters
    ----------
    X : array-like or scipy sparse matrix
        The examples, one per row.

    Returns
    -------
    numpy.ndarray or scipy.sparse.csr_matrix
        Dense when the fraction of nonzeros is at least :data:`DENSE_THRESHOLD`.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        density = X.nnz / max(1, X.shape[0] * X.shape[1])
        if density >= DENSE_THRESHOLD:
            return np.ascontiguousarray(X.toarray())
        X.sum_duplicates()
        X.sort_indices()
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32 if X.nnz < 2**31 else np.int64, copy=False)
        return X
    return np.ascontiguousarray(X, dtype=np.float64)


def bit_sets(X: sp.csr_matrix) -> np.ndarray:
    """Rows of a binary CSR matrix as bit sets: bit ``k % 64`` of word ``k // 64`` is feature ``k``.

    Returns
    -------
    numpy.ndarray of uint64, shape (n, ceil(d / 64))
    """
    n, d = X.shape
    words = max(1, -(-d // 64))
    bits = np.zeros((n, words), np.uint64)
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    cols = X.indices.astype(np.int64)
    np.bitwise_or.at(bits, (rows, cols // 64), np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64)))
    return bits


def _stored_values(X) -> np.ndarray:
    """The stored values of CSR ``X``, or every value of dense ``X``."""
    return X.data if sp.issparse(X) else np.asarray(X).ravel()


def _integers(values: np.ndarray, scale: int) -> np.ndarray | None:
    """``round(values * scale)`` when every value is exactly such an integer in 0..SMALL_INT_MAX
    divided by ``scale``, else None."""
    q = np.round(values * scale)
    if values.size and not (q.min() >= 0 and q.max() <= SMALL_INT_MAX and np.array_equal(q / scale, values)):
        return None
    return q


def integer_scale(X) -> int | None:
    """The integer scale ``D`` of small-integer data, or None.

    Parameters
    ----------
    X : numpy.ndarray or scipy.sparse.csr_matrix
        The examples (float64).

    Returns
    -------
    int or None
        ``D = max(1, round(1 / smallest nonzero |value|))`` when ``1 <= D <= 65535`` and every value
        ``v`` satisfies ``round(v D) / D == v`` with ``round(v D)`` in 0..255 (MNIST: 255);
        None otherwise (also for data without a nonzero value).
    """
    values = _stored_values(X)
    # a negative value is no such integer (round(v D) / D == v needs round(v D) < 0); NaN fails too
    if values.size == 0 or not (values.min() >= 0.0 and np.isfinite(values.max())):
        return None
    smallest = _smallest_positive(values)
    if smallest == np.inf:
        return None
    scale = max(1, round(1.0 / smallest))
    if not 1 <= scale <= 65535 or _integers(values[:INTEGER_SAMPLE], scale) is None:
        return None
    return scale if _integers(values, scale) is not None else None


@numba.njit(cache=True)
def _smallest_positive(values):
    """The smallest positive value (infinity when there is none), in one pass without a copy."""
    smallest = np.inf
    for v in values:
        if 0.0 < v < smallest:
            smallest = v
    return smallest


def small_integers(X, scale: int) -> np.ndarray | None:
    """Rows of ``X`` as dense uint8 integers ``round(x * scale)``, or None if they are not all
    exactly such integers in 0..255 divided by ``scale``.

    Parameters
    ----------
    X : numpy.ndarray or scipy.sparse matrix, shape (n, d)
        The examples.
    scale : int
        The integer scale ``D`` (see :func:`integer_scale`).

    Returns
    -------
    numpy.ndarray of uint8, shape (n, d), C order, or None
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
    else:
        X = np.asarray(X, dtype=np.float64)
    q = _integers(_stored_values(X), scale)
    if q is None:
        return None
    if not sp.issparse(X):
        return np.ascontiguousarray(q.reshape(X.shape).astype(np.uint8))
    out = np.zeros(X.shape, np.uint8)
    out[np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), X.indices] = q.astype(np.uint8)
    return out


def squared_norms(X) -> np.ndarray:
    """Squared Euclidean norm of every row of ``X`` (dense or CSR)."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel().astype(np.float64)
    return np.einsum("ij,ij->i", X, X)


def is_binary(X) -> bool:
    """Whether ``X`` (as :func:`as_kernel_matrix` gives it) takes the bit-set path: CSR, every
    stored value 1, and a row's words no more than its stored features."""
    n, d = X.shape
    return bool(sp.issparse(X) and n > 0 and -(-d // 64) <= X.nnz / n and np.all(X.data == 1.0))


def small_integer_scale(X) -> int | None:
    """The scale ``D`` when the small-integer path applies to ``X`` (as :func:`as_kernel_matrix`
    gives it), else None."""
    n, d = X.shape
    if n == 0 or d > SMALL_INT_MAX_FEATURES:
        return None
    if sp.issparse(X) and X.nnz < SMALL_INT_MIN_DENSITY * n * d:
        return None
    return integer_scale(X)
