"""The counting kernel: every kernel value a solver uses comes from here.

The SBP paper compares solvers by the number of kernel evaluations, so that the
comparison does not depend on an implementation. A :class:`Kernel` owns the training
data and three counters (README, "Solvers and how kernel evaluations are counted"):

``kernel_evals``
    evaluations between training points that the algorithm, as published, performs,
    counted as if there were no cache (the x-axis of the SBP paper's Figure 2);
``kernel_evals_computed``
    evaluations actually computed, after the LRU row cache;
``eval_kernel_evals``
    evaluations made only to measure (test error), which never enter the two above.

The diagonal ``K(x_i, x_i)`` is not counted: for the Gaussian kernel it is exactly 1,
and for the linear kernel it is the squared norm, which is precomputed once for every
kernel row anyway.

Rows are computed by compiled loops (numba) over CSR or dense float64 data with the
squared norms precomputed: ``||x - x'||^2 = ||x||^2 + ||x'||^2 - 2 <x, x'>``.

Binary sparse data (every stored value 1, e.g. Adult's a9a and w8a) with few features
(``ceil(d / 64)`` words per row at most the mean number of stored features) take a faster
path with the same values to the last bit: rows are stored as bit sets, the inner product
is the number of shared features (``popcount`` of the AND of two bit sets), so
``||x - x'||^2`` is an exact integer ``m`` and the Gaussian value is read from a table of
``exp(-gamma m)`` computed once by the same compiled ``exp`` as the general path. The
general path computes exactly these integers in floating point (sums of ones are exact),
so both paths give identical rows. Measurement (:meth:`Kernel.decision`) takes the same
path when the scored points are binary too, summing ``coef_j K`` in the same order as the
blocked products, so decision values are identical as well.

Small-integer data (MNIST's pixels, integers 0..255 divided by 255) take an exact integer
path: when an integer scale ``D`` (1 <= D <= 65535, found as ``max(1, round(1 / smallest nonzero
value))``) makes every stored value ``v = q / D`` exactly, with ``q`` in 0..255
(:func:`integer_scale`), the rows are stored as dense uint8 ``q`` (C order) with exact int64
squared norms ``S_j = sum q^2``. A row's inner products are integer dot products with int32
accumulation (so the order of summation is irrelevant and the loop vectorizes), the squared
distance ``m = S_i + S_j - 2 <q_i, q_j>`` is an exact integer and the value is
``exp(-gamma (m / D^2))`` (linear kernel: ``<q_i, q_j> / D^2``), within 1e-12 of the float64
path, whose rounded sums it replaces. The integers are stored dense, never as uint8 CSR: on
full MNIST (density 19%) uint8 CSR with uint16 column indices reads 3 bytes per nonzero, 58%
of the dense bytes, but its gathered products ran 6x slower than the dense row's vectorized
ones (13-15 ms against 2.4 ms per row on one thread, in one process, timed by hand); dense
uint8 reads no more bytes than float64 CSR (12 bytes per nonzero) once the density is at least
:data:`SMALL_INT_MIN_DENSITY`. Measurement takes the integer path when the scored points are
small-integer with the same ``D`` and ``d`` is at most :data:`EVAL_BLOCK_MAX_FEATURES`: blocked
float64 products of the integers are exact (every partial sum is an integer below 2^53).

Which path runs (``storage="auto"``; ``storage="float64"`` forces the general float64 path):

1. binary bit sets: sparse data, every stored value 1, ``ceil(d / 64)`` words per row at
   most the mean number of stored features;
2. uint8 dense: small-integer data with ``d <= SMALL_INT_MAX_FEATURES`` (int32 dot products
   cannot overflow) and density at least :data:`SMALL_INT_MIN_DENSITY` (dense input always);
3. float64 CSR: other data with density below :data:`DENSE_THRESHOLD`;
4. float64 dense: the rest.

A full row with at least :data:`PARALLEL_MIN_WORK` multiply-adds (bit-set words) is split
over numba's threads (the executors set their count per worker); smaller rows run on one.

A kernel compiles (or loads from numba's cache) the row loops it will use when it is made,
by computing one entry with each, so that no compilation lands in a solver's timed work; the
rows it hands out are always read-only arrays, so compiled code taking them sees one type
whatever the cache holds (see :mod:`sbpbench.execution.loop`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, cast

import numba
import numpy as np
import scipy.sparse as sp
from numba.core import types
from numba.extending import intrinsic

from sbpbench.params import Params, non_negative, param, positive

#: Data denser than this is stored dense; sparser data stays CSR.
DENSE_THRESHOLD = 0.25
#: Test rows and support vectors per block when measuring decision values (at most 64 MiB
#: of inner products at once).
EVAL_BLOCK_ROWS = 2048
EVAL_BLOCK_SUPPORT = 4096
#: Sparse test points with more features than this are scored row by row, sparse (a block of
#: EVAL_BLOCK_ROWS dense rows would be too large); others by the blocked products.
EVAL_BLOCK_MAX_FEATURES = 4096
#: Rows needing fewer multiply-adds (or bit-set words) than this are computed on one thread (a
#: parallel region's start-up and barrier cost more than they save on small rows, and much
#: more on a busy machine); larger rows use numba's current thread count.
PARALLEL_MIN_WORK = 200_000
#: Small-integer data are stored as uint8 integers 0..255 (see the module docstring).
SMALL_INT_MAX = 255
#: The most features whose int32 dot products of uint8 rows cannot overflow (d * 255^2 < 2^31).
SMALL_INT_MAX_FEATURES = (2**31 - 1) // SMALL_INT_MAX**2
#: Sparse small-integer data at least this dense take the uint8 dense path (it then reads no
#: more bytes per row than float64 CSR's 12 per nonzero); sparser data stay float64 CSR.
SMALL_INT_MIN_DENSITY = 1.0 / 12.0
#: Storage of the training rows: chosen per data set, or the general float64 path.
STORAGES = ("auto", "float64")


@dataclass(frozen=True)
class KernelSpec(Params):
    """What kernel to use: its parameters, declared once (:mod:`sbpbench.params`), checked when made."""

    name: str = param("gaussian", "the kernel: 'gaussian', exp(-||x - x'||^2 / (2 sigma2)), or 'linear', <x, x'>",
                      choices=("gaussian", "linear"))
    sigma2: float = param(1.0, "the Gaussian kernel's bandwidth sigma^2 (ignored by the linear kernel)", check=positive)
    cache_mb: float = param(256.0, "the LRU kernel-row cache in MiB (changes the speed, not the result)",
                            check=non_negative)


# ----------------------------------------------------------------------------- compiled loops


@numba.njit(cache=True, inline="always")
def _transform(dot, sq_i, sq_j, gaussian, gamma, scale2):
    """Kernel value from an inner product and squared norms, all divided by ``scale2``.

    ``scale2`` is 1.0 on the float64 paths (dividing by it is exact, so it changes no bit)
    and ``D^2`` on the small-integer path, whose ``dot``, ``sq_i`` and ``sq_j`` are exact
    integers.
    """
    if not gaussian:
        return dot / scale2
    d2 = (sq_i + sq_j - 2.0 * dot) / scale2
    if d2 < 0.0:
        d2 = 0.0
    return np.exp(-gamma * d2)


@numba.njit(cache=True)
def _sparse_row(indptr, indices, data, sq, dense_xi, sq_i, idx, gaussian, gamma, out):
    """out[r] = K(x_i, x_idx[r]) for CSR rows, with x_i scattered into ``dense_xi``."""
    for r in range(idx.shape[0]):
        j = idx[r]
        acc = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            acc += data[k] * dense_xi[indices[k]]
        out[r] = _transform(acc, sq_i, sq[j], gaussian, gamma, 1.0)


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM's ``ctpop``, one instruction on current CPUs)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


@numba.njit(cache=True)
def _binary_row(bits, counts, bits_i, count_i, idx, gaussian, table, out):
    """out[r] = K(x_i, x_idx[r]) for binary rows stored as bit sets ``bits[j]`` (uint64 words).

    The inner product is the number of shared features, ``popcount(bits_i & bits[j])``;
    ``counts`` are the rows' numbers of features (their squared norms), so the squared
    distance ``count_i + counts[j] - 2 dot`` indexes ``table`` (Gaussian); the linear kernel
    returns the inner product itself.
    """
    words = bits.shape[1]
    for r in range(idx.shape[0]):
        j = idx[r]
        dot = 0
        for w in range(words):
            dot += _popcount(bits[j, w] & bits_i[w])
        if gaussian:
            out[r] = table[count_i + counts[j] - 2 * dot]
        else:
            out[r] = dot


@numba.njit(cache=True)
def _distance_table(size, gamma):
    """``table[m] = exp(-gamma m)`` by :func:`_transform`, the general path's arithmetic."""
    table = np.empty(size)
    for m in range(size):
        table[m] = _transform(0.0, float(m), 0.0, True, gamma, 1.0)
    return table


@numba.njit(cache=True)
def _dense_row(X, sq, xi, sq_i, idx, gaussian, gamma, out):
    """out[r] = K(x_i, x_idx[r]) for dense rows."""
    d = X.shape[1]
    for r in range(idx.shape[0]):
        j = idx[r]
        acc = 0.0
        for k in range(d):
            acc += X[j, k] * xi[k]
        out[r] = _transform(acc, sq_i, sq[j], gaussian, gamma, 1.0)


@intrinsic
def _mac32(typingctx, acc, a, b):
    """``acc + a * b`` in int32 for uint8 ``a`` and ``b`` (numba would widen to int64, which
    halves the vector width; LLVM turns the int32 loop into ``vpmaddwd``)."""
    def codegen(context, builder, signature, args):
        total, x, y = args
        product = builder.mul(builder.zext(x, total.type), builder.zext(y, total.type), flags=("nuw", "nsw"))
        return builder.add(total, product, flags=("nsw",))
    return types.int32(types.int32, types.uint8, types.uint8), codegen


@numba.njit(cache=True, inline="always")
def _int_dot(a, b):
    """Exact inner product of two uint8 vectors (at most SMALL_INT_MAX_FEATURES long)."""
    acc = np.int32(0)
    for k in range(a.shape[0]):
        acc = _mac32(acc, a[k], b[k])
    return acc


@numba.njit(cache=True)
def _int_squared_norms(Q):
    """``S_j = sum_k Q[j, k]^2`` of uint8 rows, exact (int64)."""
    out = np.empty(Q.shape[0], np.int64)
    for j in range(Q.shape[0]):
        out[j] = _int_dot(Q[j], Q[j])
    return out


@numba.njit(cache=True)
def _int_row(Q, S, qi, S_i, idx, gaussian, gamma, scale2, out):
    """out[r] = K(x_i, x_idx[r]) for small-integer rows ``Q`` (uint8) with scale2 = D^2.

    The inner products come first, then the values: the dot-product loop alone runs faster
    without the ``exp`` call inside it (2.3 against 2.8 ms per full MNIST row on one thread,
    timed by hand).
    """
    for r in range(idx.shape[0]):
        out[r] = _int_dot(Q[idx[r]], qi)
    for r in range(idx.shape[0]):
        out[r] = _transform(out[r], float(S_i), float(S[idx[r]]), gaussian, gamma, scale2)


# A parallel region costs a wake-up and a barrier of every thread (much more on a busy
# machine), so rows with little work run the serial loops above directly, and the others
# these wrappers, which hand ``chunks`` pieces of ``idx`` to numba's threads.

@numba.njit(cache=True)
def _chunk(r, chunks, m):
    return r * m // chunks, (r + 1) * m // chunks


@numba.njit(cache=True, parallel=True)
def _sparse_row_parallel(indptr, indices, data, sq, dense_xi, sq_i, idx, gaussian, gamma, out, chunks):
    for r in numba.prange(chunks):
        lo, hi = _chunk(r, chunks, idx.shape[0])
        _sparse_row(indptr, indices, data, sq, dense_xi, sq_i, idx[lo:hi], gaussian, gamma, out[lo:hi])


@numba.njit(cache=True, parallel=True)
def _binary_row_parallel(bits, counts, bits_i, count_i, idx, gaussian, table, out, chunks):
    for r in numba.prange(chunks):
        lo, hi = _chunk(r, chunks, idx.shape[0])
        _binary_row(bits, counts, bits_i, count_i, idx[lo:hi], gaussian, table, out[lo:hi])


@numba.njit(cache=True, parallel=True)
def _dense_row_parallel(X, sq, xi, sq_i, idx, gaussian, gamma, out, chunks):
    for r in numba.prange(chunks):
        lo, hi = _chunk(r, chunks, idx.shape[0])
        _dense_row(X, sq, xi, sq_i, idx[lo:hi], gaussian, gamma, out[lo:hi])


@numba.njit(cache=True, parallel=True)
def _int_row_parallel(Q, S, qi, S_i, idx, gaussian, gamma, scale2, out, chunks):
    for r in numba.prange(chunks):
        lo, hi = _chunk(r, chunks, idx.shape[0])
        _int_row(Q, S, qi, S_i, idx[lo:hi], gaussian, gamma, scale2, out[lo:hi])


@numba.njit(cache=True, parallel=True)
def _sparse_decision(z_indptr, z_indices, z_data, z_sq, s_indptr, s_indices, s_data, s_sq,
                     coef, d, gaussian, gamma, out):
    """out[r] = sum_j coef[j] K(z_r, s_j) for sparse test rows z and sparse rows s."""
    m = z_indptr.shape[0] - 1
    nsv = s_indptr.shape[0] - 1
    for r in numba.prange(m):
        dense = np.zeros(d)
        for k in range(z_indptr[r], z_indptr[r + 1]):
            dense[z_indices[k]] = z_data[k]
        total = 0.0
        for j in range(nsv):
            acc = 0.0
            for k in range(s_indptr[j], s_indptr[j + 1]):
                acc += s_data[k] * dense[s_indices[k]]
            total += coef[j] * _transform(acc, z_sq[r], s_sq[j], gaussian, gamma, 1.0)
        out[r] = total


@numba.njit(cache=True, parallel=True)
def _binary_decision(z_bits, z_counts, s_bits, s_counts, coef, gaussian, table, out):
    """out[r] = sum_j coef[j] K(z_r, s_j) for binary rows stored as bit sets (see :func:`_binary_row`)."""
    words = z_bits.shape[1]
    for r in numba.prange(z_bits.shape[0]):
        total = 0.0
        for j in range(s_bits.shape[0]):
            dot = 0
            for w in range(words):
                dot += _popcount(z_bits[r, w] & s_bits[j, w])
            if gaussian:
                total += coef[j] * table[z_counts[r] + s_counts[j] - 2 * dot]
            else:
                total += coef[j] * dot
        out[r] = total


@numba.njit(cache=True, parallel=True)
def _add_block(dots, z_sq, s_sq, coef, gaussian, gamma, scale2, out):
    """out[r] += sum_j coef[j] K from a block of inner products ``dots[r, j]`` (see :func:`_transform`)."""
    m, nsv = dots.shape
    for r in numba.prange(m):
        total = 0.0
        for j in range(nsv):
            total += coef[j] * _transform(dots[r, j], z_sq[r], s_sq[j], gaussian, gamma, scale2)
        out[r] += total


# ----------------------------------------------------------------------------- helpers


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
    nonzero = np.abs(values[values != 0])
    if nonzero.size == 0 or not np.all(np.isfinite(nonzero)):
        return None
    scale = max(1, round(1.0 / float(nonzero.min())))
    if not 1 <= scale <= 65535 or _integers(values, scale) is None:
        return None
    return scale


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


def _dense64(A) -> np.ndarray:
    """A block of rows as a dense float64 array (no copy when it is one already)."""
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)


def squared_norms(X) -> np.ndarray:
    """Squared Euclidean norm of every row of ``X`` (dense or CSR)."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel().astype(np.float64)
    return np.einsum("ij,ij->i", X, X)


def _is_binary(X) -> bool:
    """Whether ``X`` (as :func:`as_kernel_matrix` gives it) takes the bit-set path: CSR, every
    stored value 1, and a row's words no more than its stored features."""
    n, d = X.shape
    return bool(sp.issparse(X) and n > 0 and -(-d // 64) <= X.nnz / n and np.all(X.data == 1.0))


def _small_integer_scale(X) -> int | None:
    """The scale ``D`` when the small-integer path applies to ``X`` (as :func:`as_kernel_matrix`
    gives it), else None."""
    n, d = X.shape
    if n == 0 or d > SMALL_INT_MAX_FEATURES:
        return None
    if sp.issparse(X) and X.nnz < SMALL_INT_MIN_DENSITY * n * d:
        return None
    return integer_scale(X)


def memory_needs(X, test_X, spec: KernelSpec) -> dict[str, float]:
    """Bytes a :class:`Kernel` over ``X`` allocates, and its measurement of ``test_X``, by what.

    An estimate from the shapes and stored values alone, made before anything is allocated
    (:func:`sbpbench.memory.require` checks it): the training rows as the kernel stores them
    (dense float64 and uint8 for data of density at least :data:`DENSE_THRESHOLD`, else the
    CSR copy and at most as much again in bit sets or uint8 rows), the test points in the
    same form, the ``d``-long scratch vector (of CSR rows) and the measurement's blocks (for
    sparse data of more than :data:`EVAL_BLOCK_MAX_FEATURES` features, one dense ``d``-long
    test row per thread), and the row cache full (``cache_mb``, at most ``n`` rows of ``n``).

    Parameters
    ----------
    X, test_X : numpy.ndarray or scipy.sparse matrix
        Training and test examples as loaded.
    spec : KernelSpec
        The kernel (its ``cache_mb``).

    Returns
    -------
    dict of str to float
    """
    (n, d), m = X.shape, test_X.shape[0]
    stored = X.nnz if sp.issparse(X) else n * d
    test_stored = test_X.nnz if sp.issparse(test_X) else m * d
    dense = stored >= DENSE_THRESHOLD * max(1, n * d)
    if dense:
        storage, test = 9.0 * n * d, 8.0 * m * d
    else:
        storage, test = 24.0 * stored + 8.0 * n, 12.0 * test_stored + 8.0 * m
    if not dense and d > EVAL_BLOCK_MAX_FEATURES:
        measuring = 8.0 * d * numba.get_num_threads()
    else:
        blocks = d * (min(n, EVAL_BLOCK_SUPPORT) + min(m, EVAL_BLOCK_ROWS))  # support and test rows, dense
        measuring = 8.0 * (blocks + EVAL_BLOCK_ROWS * EVAL_BLOCK_SUPPORT)  # and their inner products
    return {
        "training rows": storage,
        "test rows": test,
        "feature scratch vector": 8.0 * d,
        "measurement blocks": measuring,
        "kernel row cache": min(spec.cache_mb * 2**20, 8.0 * n * n),
    }


# ----------------------------------------------------------------------------- the kernel


class Kernel:
    """A Gaussian or linear kernel over a fixed training set that counts every evaluation.

    Parameters
    ----------
    X : array-like or scipy sparse matrix, shape (n, d)
        Training examples.
    spec : KernelSpec
        Kernel name, bandwidth and row-cache size.
    storage : {"auto", "float64"}
        ``auto`` chooses binary bit sets, uint8 small integers, float64 CSR or float64 dense
        per data set (module docstring; the choice is in :attr:`storage`); ``float64`` forces
        the general float64 path (CSR or dense), for comparisons.

    Attributes
    ----------
    storage : str
        The storage the rows are computed from: ``"binary bit sets"``, ``"uint8 dense"``,
        ``"float64 CSR"`` or ``"float64 dense"``.
    X : numpy.ndarray or scipy.sparse.csr_matrix
        The training examples in float64 (:func:`as_kernel_matrix`), whatever the storage.

    Notes
    -----
    Counting rules (the contract every solver is held to):

    * :meth:`row` adds ``n`` to ``kernel_evals`` (unless told the solver counts its entries
      with :meth:`count`), and to ``kernel_evals_computed`` only when the row was not in the
      cache;
    * :meth:`count` adds to ``kernel_evals`` only;
    * :meth:`entries` adds ``len(idx)`` to ``kernel_evals``, and to ``kernel_evals_computed``
      unless row ``i`` is in the cache;
    * :meth:`decision` adds ``m * len(support)`` to ``eval_kernel_evals`` only;
    * :meth:`diag` is free (see the module docstring).
    """

    def __init__(self, X, spec: KernelSpec, storage: str = "auto"):
        if storage not in STORAGES:
            raise ValueError(f"unknown storage {storage!r}; expected one of {', '.join(STORAGES)}")
        matrix = as_kernel_matrix(X)
        auto = storage == "auto"
        binary = auto and _is_binary(matrix)
        self._build(matrix, spec, binary, _small_integer_scale(matrix) if auto and not binary else None)

    def _build(self, matrix, spec: KernelSpec, binary: bool, scale: int | None) -> None:
        """Set up the storage of ``matrix`` (in the form :func:`as_kernel_matrix` gives): bit sets
        when ``binary``, small integers when ``scale`` is their scale ``D`` (and they are), else
        float64; then load the compiled row loops (:meth:`_load_loops`)."""
        self.spec = spec
        self.sparse = sp.issparse(matrix)
        self.X: Any = cast(Any, matrix)  # a dense array or a CSR matrix, told apart by self.sparse
        self.n, self.d = self.X.shape
        self.sq = squared_norms(self.X)
        self._gaussian = spec.name == "gaussian"
        self._gamma = 1.0 / (2.0 * spec.sigma2) if self._gaussian else 0.0
        self._scratch = np.zeros(self.d)
        self._points = None  # the last points scored by an exact path, see _exact_points
        self._binary = binary
        ints = small_integers(self.X, scale) if scale is not None else None
        self._scale = scale if ints is not None else None
        if self._binary:  # the exact bit-set path (module docstring)
            self._bits = bit_sets(self.X)
            self._bin_counts = np.diff(self.X.indptr).astype(np.int64)
            self._bin_table = _distance_table(2 * int(self._bin_counts.max()) + 1, self._gamma)
            self.storage, row_work = "binary bit sets", self._bits.size
        elif ints is not None and self._scale is not None:  # the exact small-integer path (module docstring)
            self._ints = ints
            self._int_sq = _int_squared_norms(self._ints)
            self._int_sq64 = self._int_sq.astype(np.float64)  # for measuring, made once
            self._scale2 = float(self._scale) ** 2
            self.storage, row_work = "uint8 dense", self._ints.size
        elif self.sparse:
            self.storage, row_work = "float64 CSR", self.X.nnz
        else:
            self.storage, row_work = "float64 dense", self.X.size
        self._row_parallel = row_work >= PARALLEL_MIN_WORK
        self._all = np.arange(self.n, dtype=np.int64)
        row_bytes = 8 * max(1, self.n)
        self._cache_rows = int(spec.cache_mb * 2**20 // row_bytes)
        self.reset()
        self._load_loops()

    def _load_loops(self) -> None:
        """Compile (or load from numba's cache) the row loops :meth:`row` and :meth:`entries` call.

        One entry by each: the serial loop and, when full rows are split over threads, the
        parallel one, with the argument types of every later call; nothing is counted or
        cached. So a compilation never lands in a solver's timed work (see
        :mod:`sbpbench.execution.loop`).
        """
        if self.n == 0:
            return
        first = self._all[:1]
        self._compute(0, first, parallel=False)
        if self._row_parallel:
            self._compute(0, first, parallel=True)

    def subset(self, rows: np.ndarray) -> Kernel:
        """The kernel over the training points ``rows``, stored as this one is.

        Its rows run the compiled loops of this kernel with the same argument types (the same
        storage, CSR index types and scale of small integers), whatever the storage
        :class:`Kernel` would choose for these points alone; its counters and cache are its
        own. For running a solver on a small problem of the same kind (the warm-up of
        :mod:`sbpbench.execution.loop`).

        Parameters
        ----------
        rows : numpy.ndarray of int
            Indices of training points.

        Returns
        -------
        Kernel
        """
        X = self.X[rows]
        if self.sparse:
            X.indices = X.indices.astype(self.X.indices.dtype, copy=False)
            X.indptr = X.indptr.astype(self.X.indptr.dtype, copy=False)
        part = Kernel.__new__(Kernel)
        part._build(X, self.spec, self._binary, self._scale)
        return part

    # -- counters -------------------------------------------------------------------------
    def reset(self) -> None:
        """Zero the counters and empty the row cache (done at the start of every run)."""
        self.kernel_evals = 0
        self.kernel_evals_computed = 0
        self.eval_kernel_evals = 0
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()

    @property
    def layout(self) -> tuple[str, ...]:
        """What the argument types of compiled code reading this kernel's data depend on: the
        storage and, for CSR data, the index types (a key for the runner's warm-up)."""
        if not self.sparse:
            return (self.storage,)
        return self.storage, self.X.indices.dtype.str, self.X.indptr.dtype.str

    @property
    def cached_bytes(self) -> int:
        """Bytes held by the row cache now (at most ``spec.cache_mb`` MiB)."""
        return len(self._cache) * 8 * self.n

    # -- training-time access ---------------------------------------------------------------
    def diag(self) -> np.ndarray:
        """``K(x_i, x_i)`` for every training point (not counted)."""
        return np.ones(self.n) if self._gaussian else self.sq.copy()

    def row(self, i: int, counted: bool = True) -> np.ndarray:
        """Kernel row ``K(x_i, x_j)`` for all training points ``j``.

        Parameters
        ----------
        i : int
            Index of a training point.
        counted : bool
            Add ``n`` to ``kernel_evals`` (the default). False for a solver whose published
            algorithm reads other entries than the rows it is served, and which reports
            those with :meth:`count` (the Perceptron); ``kernel_evals_computed`` counts the
            row either way unless it was cached.

        Returns
        -------
        numpy.ndarray, shape (n,)
            A read-only array (it may be shared with the cache), as every array of kernel
            values this kernel hands out, so that compiled code taking them has one type
            signature whatever the cache holds.
        """
        if counted:
            self.kernel_evals += self.n
        cached = self._cache.get(i)
        if cached is not None:
            self._cache.move_to_end(i)
            return cached
        self.kernel_evals_computed += self.n
        out = self._compute(i, self._all)
        if self._cache_rows > 0:
            self._cache[i] = out
            if len(self._cache) > self._cache_rows:
                self._cache.popitem(last=False)
        return out

    def entries(self, i: int, idx: np.ndarray) -> np.ndarray:
        """``K(x_i, x_j)`` for the ``j`` in ``idx``: part of row ``i``, served by the row cache.

        Counts ``len(idx)`` in ``kernel_evals``. When the full row ``i`` is cached the entries
        are read from it (nothing computed, the row becomes most recently used); otherwise only
        these entries are computed (``len(idx)`` in ``kernel_evals_computed``) and not cached.
        For solvers that need a part of a row only (SMO with shrinking).

        Parameters
        ----------
        i : int
            Index of a training point.
        idx : numpy.ndarray of int
            Indices of training points.

        Returns
        -------
        numpy.ndarray, shape (len(idx),)
            A read-only array, as :meth:`row` returns.
        """
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        self.kernel_evals += idx.size
        cached = self._cache.get(i)
        if cached is not None:
            self._cache.move_to_end(i)
            part = cached[idx]
            part.flags.writeable = False
            return part
        self.kernel_evals_computed += idx.size
        return self._compute(i, idx)

    def count(self, evals: int) -> None:
        """Add ``evals`` to ``kernel_evals``: entries the published algorithm computes one by
        one and this implementation reads from rows it holds (fetched with
        ``row(i, counted=False)``).

        The Perceptron's published form computes ``f(x_i)`` from its support vectors, ``|SV|``
        entries per presented example; ours keeps every ``f(x_j)`` current by adding one row
        per mistake, which gives the same values far faster.

        Parameters
        ----------
        evals : int
            Evaluations of the published algorithm, not computed here.
        """
        self.kernel_evals += int(evals)

    def _compute(self, i: int, idx: np.ndarray, parallel: bool | None = None) -> np.ndarray:
        """``K(x_i, x_j)`` for ``j`` in ``idx`` by the compiled loops (no counting here), read-only.

        ``parallel`` splits the work over numba's threads; by default a full row does when the
        kernel's rows are large (:data:`PARALLEL_MIN_WORK`).
        """
        out = np.empty(idx.size)
        row: Any  # one of the compiled row loops
        if parallel is None:
            parallel = self._row_parallel and idx.size == self.n
        chunks = (4 * numba.get_num_threads(),) if parallel else ()
        if self._binary:
            row = _binary_row_parallel if parallel else _binary_row
            row(self._bits, self._bin_counts, self._bits[i], self._bin_counts[i], idx, self._gaussian,
                self._bin_table, out, *chunks)
        elif self._scale is not None:
            row = _int_row_parallel if parallel else _int_row
            row(self._ints, self._int_sq, self._ints[i], self._int_sq[i], idx, self._gaussian, self._gamma,
                self._scale2, out, *chunks)
        elif self.sparse:
            X = self.X
            lo, hi = X.indptr[i], X.indptr[i + 1]
            cols = X.indices[lo:hi]
            self._scratch[cols] = X.data[lo:hi]
            row = _sparse_row_parallel if parallel else _sparse_row
            row(X.indptr, X.indices, X.data, self.sq, self._scratch, self.sq[i], idx, self._gaussian,
                self._gamma, out, *chunks)
            self._scratch[cols] = 0.0
        else:
            row = _dense_row_parallel if parallel else _dense_row
            row(self.X, self.sq, self.X[i], self.sq[i], idx, self._gaussian, self._gamma, out, *chunks)
        out.flags.writeable = False
        return out

    # -- measurement ----------------------------------------------------------------------
    def prepare(self, Z):
        """Return points ``Z`` in this kernel's storage format (CSR or dense float64)."""
        if self.sparse:
            Z = sp.csr_matrix(Z, dtype=np.float64)
            Z.indices = Z.indices.astype(np.int32, copy=False)
            return Z
        return np.ascontiguousarray(Z.toarray() if sp.issparse(Z) else Z, dtype=np.float64)

    def decision(self, Z, support: np.ndarray, coef: np.ndarray, bias: float = 0.0) -> np.ndarray:
        """Decision values ``f(z) = sum_j coef_j K(x_support[j], z) + bias`` for rows of ``Z``.

        Counted in ``eval_kernel_evals`` only: this is measurement, never training.

        Parameters
        ----------
        Z : array-like or scipy sparse matrix, shape (m, d)
            Points to score, already in the format of :func:`as_kernel_matrix`.
        support : numpy.ndarray of int
            Indices of training points with nonzero coefficients.
        coef : numpy.ndarray
            Coefficient of each support point (``alpha_j y_j`` scaled as the solver outputs).
        bias : float
            Unregularized bias added to every value.

        Returns
        -------
        numpy.ndarray, shape (m,)
        """
        m = Z.shape[0]
        support = np.asarray(support, dtype=np.int64)
        self.eval_kernel_evals += m * support.size
        if support.size == 0 or m == 0:
            return np.full(m, float(bias))
        coef = np.asarray(coef, dtype=np.float64)
        return self._decision_values(Z, support, coef) + bias

    def _exact_points(self, Z):
        """Points ``Z`` in the exact storage of the training rows, or None (the general path).

        Remembered for the last ``Z`` (the runner scores the same test set at every checkpoint).
        """
        exact = self._binary and sp.issparse(Z) or self._scale is not None and self.d <= EVAL_BLOCK_MAX_FEATURES
        if not (exact and Z.shape[1] == self.d):
            return None
        if self._points is None or self._points[0] is not Z:
            self._points = (Z, self._binary_points(Z) if self._binary else self._integer_points(Z))
        return self._points[1]

    def _binary_points(self, Z):
        """``(bit sets, feature counts, distance table)`` of binary CSR points ``Z``, else None."""
        points = sp.csr_matrix(Z, copy=True)
        points.sum_duplicates()
        if not np.all(points.data == 1.0):
            return None
        counts = np.diff(points.indptr).astype(np.int64)
        size = 2 * max(int(self._bin_counts.max()), int(counts.max(initial=0))) + 1
        table = self._bin_table if size <= self._bin_table.size else _distance_table(size, self._gamma)
        return bit_sets(points), counts, table

    def _integer_points(self, Z):
        """``(integer rows as float64, squared norms as float64)`` of points ``Z`` that are small
        integers with the training data's scale ``D``, else None. Kept as float64 (exact), the
        form the blocked products read, so that they are not converted per support block."""
        ints = small_integers(Z, self._scale)
        if ints is None:
            return None
        return ints.astype(np.float64), _int_squared_norms(ints).astype(np.float64)

    def _decision_values(self, Z, support, coef):
        """Blocked decision values of :meth:`decision` (no counting here).

        The exact paths bring their own squared norms of ``Z``; only the float64 paths compute them.
        """
        m = Z.shape[0]
        out = np.empty(m)
        exact = self._exact_points(Z)
        if self._binary and exact is not None:  # the same values as the blocked products below (module docstring)
            z_bits, z_counts, table = exact
            _binary_decision(z_bits, z_counts, self._bits[support], self._bin_counts[support], coef,
                             self._gaussian, table, out)
            return out
        if exact is not None:  # small integers: the blocked products below are exact integers
            Z, z_sq = exact
            X, sq, scale2 = self._ints, self._int_sq64, self._scale2
        elif sp.issparse(Z) and self.d > EVAL_BLOCK_MAX_FEATURES:
            z_sq = squared_norms(Z)
            S = self.X[support]
            Z = sp.csr_matrix(Z)
            _sparse_decision(Z.indptr, Z.indices.astype(np.int32), Z.data, z_sq, S.indptr,
                             S.indices, S.data, self.sq[support], coef, self.d, self._gaussian, self._gamma, out)
            return out
        else:
            X, sq, scale2, z_sq = self.X, self.sq, 1.0, squared_norms(Z)
        # blocks of at most EVAL_BLOCK_ROWS test rows by EVAL_BLOCK_SUPPORT support vectors, so
        # that measuring needs little memory whatever the support size
        out[:] = 0.0
        for s_lo in range(0, support.size, EVAL_BLOCK_SUPPORT):
            part = support[s_lo:s_lo + EVAL_BLOCK_SUPPORT]
            Sd = _dense64(X[part])
            for lo in range(0, m, EVAL_BLOCK_ROWS):
                hi = min(m, lo + EVAL_BLOCK_ROWS)
                dots = np.ascontiguousarray(_dense64(Z[lo:hi]) @ Sd.T)
                _add_block(dots, z_sq[lo:hi], sq[part], coef[s_lo:s_lo + part.size], self._gaussian,
                           self._gamma, scale2, out[lo:hi])
        return out
