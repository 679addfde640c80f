"""The storages of a kernel's training rows: one class each, one interface.

A :class:`~sbpbench.kernels.kernel.Kernel` holds one :class:`Storage` (chosen by
:func:`choose`, see :mod:`sbpbench.kernels.detect`) and calls it for every value; the kernel
counts, the storage computes (by the compiled loops of :mod:`sbpbench.kernels.loops`):

* :meth:`Storage.rows`: ``K(x_i, x_j)`` for the ``j`` in ``idx``, on one thread or numba's;
  on one thread by :attr:`Storage.serial_rows` and :attr:`Storage.full_row`, one compiled call
  each (the loop bound to the storage's arrays when it is made), which the kernel calls directly;
* :meth:`Storage.decision_values`: ``sum_j coef_j K(z, x_support[j])`` for points ``Z``;
* :meth:`Storage.subset`: the same storage over some of the rows;
* :attr:`Storage.work` (the multiply-adds of a full row), :attr:`Storage.nbytes` (what the
  storage holds, as :func:`memory_needs` estimates it) and :attr:`Storage.row_arrays` (what
  a row reads).

:class:`Float64Dense` and :class:`Float64CSR` are the general path: float64 rows with their
squared norms precomputed, ``||x - x'||^2 = ||x||^2 + ||x'||^2 - 2 <x, x'>``. The two exact
storages keep that float64 form (:attr:`Storage.general`) for the points they cannot score:

:class:`BitSets`: binary sparse data (every stored value 1, e.g. Adult's a9a and w8a) with few
features take a faster path with the same values to the last bit: rows are stored as bit sets,
the inner product is the number of shared features (``popcount`` of the AND of two bit sets), so
``||x - x'||^2`` is an exact integer ``m`` and the Gaussian value is read from a table of
``exp(-gamma m)`` computed once by the same compiled ``exp`` as the general path. The general
path computes exactly these integers in floating point (sums of ones are exact), so both paths
give identical rows. Measurement takes the same path when the scored points are binary too,
summing ``coef_j K`` in the same order as the blocked products, so decision values are identical
as well.

:class:`SmallIntegers`: small-integer data (MNIST's pixels, integers 0..255 divided by 255)
take an exact integer path: when an integer scale ``D`` (1 <= D <= 65535, found as
``max(1, round(1 / smallest nonzero value))``) makes every stored value ``v = q / D`` exactly,
with ``q`` in 0..255 (:func:`~sbpbench.kernels.detect.integer_scale`), the rows are stored as
dense uint8 ``q`` (C order) with exact int64 squared norms ``S_j = sum q^2``. A row's inner
products are integer dot products with int32 accumulation (so the order of summation is
irrelevant and the loop vectorizes), the squared distance ``m = S_i + S_j - 2 <q_i, q_j>`` is an
exact integer and the value is ``exp(-gamma (m / D^2))`` (linear kernel: ``<q_i, q_j> / D^2``),
within 1e-12 of the float64 path, whose rounded sums it replaces. The integers are stored dense,
never as uint8 CSR: on full MNIST (density 19%) uint8 CSR with uint16 column indices reads 3
bytes per nonzero, 58% of the dense bytes, but its gathered products ran 6x slower than the
dense row's vectorized ones (13-15 ms against 2.4 ms per row on one thread, in one process,
timed by hand); dense uint8 reads no more bytes than float64 CSR (12 bytes per nonzero) once the
density is at least :data:`~sbpbench.kernels.detect.SMALL_INT_MIN_DENSITY`. Measurement takes the
integer path when the scored points are small-integer with the same ``D`` and ``d`` is at most
:data:`EVAL_BLOCK_MAX_FEATURES`: the test points are kept as uint8 once (the runner scores the
same test set at every checkpoint) and a block's inner products are the exact integer ones of the
rows (:data:`~sbpbench.kernels.loops.block_dots`), the numbers blocked float64 products of
the integers give (every partial sum is an integer below 2^53), so the decision values are those
of that float64 path bit for bit, in half the time on full MNIST.

A new storage is one subclass of :class:`Storage` here and one line in :func:`choose`.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cached_property, partial
from typing import Any, ClassVar

import numba
import numpy as np
import scipy.sparse as sp

from sbpbench.kernels import loops
from sbpbench.kernels.detect import (
    DENSE_THRESHOLD,
    SMALL_INT_MIN_DENSITY,
    as_kernel_matrix,
    bit_sets,
    is_binary,
    small_integer_scale,
    small_integers,
    squared_norms,
)
from sbpbench.kernels.spec import KernelSpec

#: Test rows and support vectors per block when measuring decision values (at most 64 MiB
#: of inner products at once).
EVAL_BLOCK_ROWS = 2048
EVAL_BLOCK_SUPPORT = 4096
#: Sparse test points with more features than this are scored row by row, sparse (a block of
#: EVAL_BLOCK_ROWS dense rows would be too large); others by the blocked products.
EVAL_BLOCK_MAX_FEATURES = 4096
#: Storage of the training rows: chosen per data set, or the general float64 path.
STORAGES = ("auto", "float64")


def read_only(data: Any) -> Any:
    """``data`` as solvers are handed it: a view that raises on any write (numpy's ``ValueError:
    ... is read-only``), whose memory is ``data``'s.

    An array becomes a read-only view (the caller's own array, e.g. an estimator's ``X``, keeps
    its flags); a CSR matrix a new matrix over read-only views of its ``data``, ``indices`` and
    ``indptr``; anything else (None, an array already read-only) is returned as it is.

    Parameters
    ----------
    data : numpy.ndarray, scipy sparse CSR matrix or None

    Returns
    -------
    The same kind of object, read-only.
    """
    if sp.issparse(data):
        frozen = copy.copy(data)  # shallow: the same arrays, another matrix object
        frozen.data, frozen.indices, frozen.indptr = (read_only(a) for a in (data.data, data.indices, data.indptr))
        return frozen
    if not isinstance(data, np.ndarray) or not data.flags.writeable:
        return data
    view = data.view()
    view.flags.writeable = False
    return view


def named_arrays(owner: Any, names: Any) -> dict[str, np.ndarray]:
    """The arrays among ``owner``'s attributes ``names``, by name: an array as ``NAME``, a sparse
    matrix's as ``NAME.data``, ``NAME.indices`` and ``NAME.indptr`` (None and other values left out)."""
    found: dict[str, np.ndarray] = {}
    for name in names:
        value = getattr(owner, name)
        if sp.issparse(value):
            found.update({f"{name}.{part}": getattr(value, part) for part in ("data", "indices", "indptr")})
        elif isinstance(value, np.ndarray):
            found[name] = value
    return found


class Storage(ABC):
    """The training rows in one storage, and the loops that compute kernel values from them.

    Nothing here counts (the kernel does). ``gaussian`` and ``gamma`` (``1 / (2 sigma2)``) are
    the kernel's.
    """

    #: The storage's name, :attr:`Kernel.storage <sbpbench.kernels.kernel.Kernel.storage>`.
    name: ClassVar[str]
    gaussian: bool
    gamma: float
    #: Multiply-adds (or bit-set words) of one full row: whether it is split over threads.
    work: int
    #: The arrays a full row reads (the rows as stored and their squared norms).
    row_arrays: tuple[np.ndarray, ...]
    #: Bytes of the rows in every form held and of scratch space (:func:`memory_needs`'s
    #: ``training rows`` and ``feature scratch vector``; squared norms and tables aside).
    nbytes: int
    #: ``serial_rows(idx, i, out)``: ``out[r] = K(x_i, x_idx[r])`` on one thread, one compiled call
    #: (a ``*_rows_of`` loop of :mod:`~sbpbench.kernels.loops` bound to this storage's arrays).
    serial_rows: Callable[[np.ndarray, int, np.ndarray], None]
    #: ``full_row(i, out)``: :attr:`serial_rows` of the full row (``idx`` :attr:`all_rows`).
    full_row: Callable[[int, np.ndarray], None]

    @cached_property
    def all_rows(self) -> np.ndarray:
        """``0, 1, ..., n - 1``: the ``idx`` of a full row, which the kernel passes as this very
        array, so that a storage may recognize it and read its rows in order."""
        return np.arange(self.general.X.shape[0], dtype=np.int64)

    @property
    @abstractmethod
    def general(self) -> Float64Rows:
        """The same rows in float64 (CSR or dense) with their squared norms: this storage for
        the float64 ones, and what the exact ones fall back to for points they cannot score."""

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array of training data this storage holds, read-only (:func:`read_only`), by
        attribute name (:func:`named_arrays`); those of :attr:`general` as ``general.NAME``.
        Scratch space (private attributes) and :attr:`all_rows` are not data."""
        found = named_arrays(self, [name for name in vars(self) if not name.startswith("_") and name != "all_rows"])
        if self.general is not self:
            found.update({f"general.{name}": a for name, a in self.general.arrays().items()})
        return found

    def _bind(self, loop: Callable[..., None], *arrays: Any) -> None:
        """Set :attr:`serial_rows` and :attr:`full_row` to ``loop`` (a ``*_rows_of`` loop) bound to ``arrays``."""
        self.serial_rows = partial(loop, *arrays)
        self.full_row = partial(loop, *arrays, self.in_order)

    @property
    def in_order(self) -> np.ndarray | None:
        """What :attr:`full_row` passes its loop as ``idx``: :attr:`all_rows`, or None for a loop
        that reads the rows in order without one."""
        return self.all_rows

    def rows(self, i: int, idx: np.ndarray, out: np.ndarray, parallel: bool) -> None:
        """``out[r] = K(x_i, x_idx[r])``; ``parallel`` splits the work over numba's threads.

        Parameters
        ----------
        i : int
            Index of a training point.
        idx : numpy.ndarray of int64
            Indices of training points (:attr:`all_rows` itself for a full row, which a storage
            may read in order).
        out : numpy.ndarray, shape (len(idx),)
            Written in place.
        parallel : bool
            Run the ``*_row_parallel`` loop (:meth:`threaded_rows`), else :attr:`serial_rows`.
        """
        if parallel:
            self.threaded_rows(i, idx, out)
        elif idx is self.all_rows:
            self.full_row(i, out)
        else:
            self.serial_rows(idx, i, out)

    @abstractmethod
    def threaded_rows(self, i: int, idx: np.ndarray, out: np.ndarray) -> None:
        """:meth:`rows` split over numba's threads (:func:`~sbpbench.kernels.loops.run_threaded`)."""

    def block_source(self, i: int) -> tuple[Any, ...] | None:
        """What computes row ``i`` a block at a time inside another compiled loop
        (:func:`~sbpbench.kernels.loops.row_block`), or None where this storage has none."""
        return None

    @abstractmethod
    def decision_values(self, Z: Any, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``sum_j coef[j] K(z, x_support[j])`` for every row ``z`` of ``Z`` (no bias).

        Parameters
        ----------
        Z : numpy.ndarray or scipy.sparse.csr_matrix, shape (m, d)
            Points to score, as :meth:`Kernel.prepare <sbpbench.kernels.kernel.Kernel.prepare>`
            gives them.
        support : numpy.ndarray of int64
            Indices of training points (not empty).
        coef : numpy.ndarray of float64
            A coefficient per support point.

        Returns
        -------
        numpy.ndarray, shape (m,)
        """

    @abstractmethod
    def subset(self, rows: np.ndarray) -> Storage:
        """The same storage (class, index types, integer scale) over the training points ``rows``."""


class Float64Rows(Storage):
    """The general path: float64 rows ``X`` and their squared norms ``sq``.

    ``sq`` is computed from ``X`` unless given: a :meth:`subset` takes its rows' norms from
    this storage, the same bits as computing them again (each row's norm is summed apart, in
    the order of its stored values) without a pass over the rows.
    """

    X: Any  # a dense array or a CSR matrix (the subclass tells)

    def __init__(self, X: Any, gaussian: bool, gamma: float, sq: np.ndarray | None = None) -> None:
        self.X, self.sq = read_only(X), read_only(squared_norms(X) if sq is None else sq)
        self.gaussian, self.gamma = gaussian, gamma

    @property
    def general(self) -> Float64Rows:
        return self

    def decision_values(self, Z: Any, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
        return blocked_decision_values(Z, squared_norms(Z), self.X, self.sq, 1.0, support, coef, self)

    @abstractmethod
    def subset(self, rows: np.ndarray) -> Float64Rows:
        """The same storage (class, index types) over the training points ``rows``."""

    @abstractmethod
    def prepare(self, Z: Any) -> Any:
        """Points ``Z`` (array-like or sparse) in this storage's form, for :meth:`decision_values`."""


class Float64Dense(Float64Rows):
    """Dense float64 rows (data of density at least :data:`~sbpbench.kernels.detect.DENSE_THRESHOLD`)."""

    name = "float64 dense"

    def __init__(self, X: np.ndarray, gaussian: bool, gamma: float, sq: np.ndarray | None = None) -> None:
        super().__init__(X, gaussian, gamma, sq)
        self.work, self.row_arrays, self.nbytes = X.size, (self.X, self.sq), X.nbytes
        self._bind(loops.dense_rows_of, self.X, self.sq, gaussian, gamma)

    def threaded_rows(self, i: int, idx: np.ndarray, out: np.ndarray) -> None:
        loops.run_threaded(loops.dense_row_parallel, self.X, self.sq, self.X[i], self.sq[i], idx, self.gaussian,
                           self.gamma, out)

    def subset(self, rows: np.ndarray) -> Float64Dense:
        return Float64Dense(self.X[rows], self.gaussian, self.gamma, self.sq[rows])

    def prepare(self, Z: Any) -> np.ndarray:
        return np.ascontiguousarray(Z.toarray() if sp.issparse(Z) else Z, dtype=np.float64)


class Float64CSR(Float64Rows):
    """Float64 CSR rows; a row's own features are scattered into a dense scratch vector, ``d``
    long, or as long as the features the rows use when they are fewer than their stored values
    (:func:`scratch_columns`: data of a billion declared features and few values would otherwise
    ask for gigabytes, which a limit on the address space refuses)."""

    name = "float64 CSR"

    def __init__(self, X: sp.csr_matrix, gaussian: bool, gamma: float, sq: np.ndarray | None = None) -> None:
        super().__init__(X, gaussian, gamma, sq)
        X = self.X
        columns, width = scratch_columns(X)
        self._columns = read_only(columns)  # X.indices, or a copy: read-only either way (one type)
        self._scratch = np.zeros(width)
        self.work, self.row_arrays = X.nnz, (X.data, self._columns, X.indptr, self.sq)
        self.nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + self._scratch.nbytes
        if self._columns is not X.indices:
            self.nbytes += self._columns.nbytes
        self._bind(loops.sparse_rows_of, X.indptr, self._columns, X.data, self.sq, self._scratch, gaussian, gamma)

    def threaded_rows(self, i: int, idx: np.ndarray, out: np.ndarray) -> None:
        X = self.X
        lo, hi = X.indptr[i], X.indptr[i + 1]
        cols = self._columns[lo:hi]
        self._scratch[cols] = X.data[lo:hi]
        loops.run_threaded(loops.sparse_row_parallel, X.indptr, self._columns, X.data, self.sq, self._scratch,
                           self.sq[i], idx, self.gaussian, self.gamma, out)
        self._scratch[cols] = 0.0

    def decision_values(self, Z: Any, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """Sparse points of more than :data:`EVAL_BLOCK_MAX_FEATURES` features are scored row by
        row, sparse; others by the blocked products."""
        if not (sp.issparse(Z) and self.X.shape[1] > EVAL_BLOCK_MAX_FEATURES):
            return super().decision_values(Z, support, coef)
        out = np.empty(Z.shape[0])
        z_sq = squared_norms(Z)
        S, Z, width = shared_columns(self.X[support], sp.csr_matrix(Z))
        scratch = np.zeros((max(1, min(numba.get_num_threads(), Z.shape[0])), width))  # see sparse_decision
        loops.sparse_decision(Z.indptr, Z.indices.astype(np.int32), Z.data, z_sq, S.indptr, S.indices, S.data,
                              self.sq[support], coef, self.gaussian, self.gamma, out, scratch)
        return out

    def subset(self, rows: np.ndarray) -> Float64CSR:
        X = self.X[rows]
        X.indices = X.indices.astype(self.X.indices.dtype, copy=False)
        X.indptr = X.indptr.astype(self.X.indptr.dtype, copy=False)
        return Float64CSR(X, self.gaussian, self.gamma, self.sq[rows])

    def prepare(self, Z: Any) -> sp.csr_matrix:
        Z = sp.csr_matrix(Z, dtype=np.float64)
        Z.indices = Z.indices.astype(np.int32, copy=False)
        return Z


class ExactRows(Storage):
    """Rows as exact integers, ``stored`` (one row per training point), with exact integer
    squared norms ``norms``, beside their float64 form :attr:`general`. Points that are exact
    integers of the same kind are scored in their exact form too (:meth:`points`), others in
    float64; the exact form of the last ``Z`` scored is remembered (the runner scores the same
    test set at every checkpoint).
    """

    def __init__(self, general: Float64Rows, stored: np.ndarray, norms: np.ndarray) -> None:
        self._general, self.stored, self.norms = general, read_only(stored), read_only(norms)
        self.gaussian, self.gamma = general.gaussian, general.gamma
        self.work, self.row_arrays, self.nbytes = stored.size, (self.stored, self.norms), stored.nbytes + general.nbytes
        self._points: tuple[Any, Any] | None = None  # (Z, points(Z)) of the last Z

    @property
    def general(self) -> Float64Rows:
        return self._general

    @abstractmethod
    def scores(self, Z: Any) -> bool:
        """Whether points of the form of ``Z`` (``d`` features) may have an exact form."""

    @abstractmethod
    def points(self, Z: Any) -> Any:
        """The exact form of points ``Z`` for :meth:`exact_decision_values`, or None when they
        are not such integers."""

    @abstractmethod
    def exact_decision_values(self, points: Any, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """:meth:`decision_values` from the exact form of the points."""

    def decision_values(self, Z: Any, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
        points = None
        if self.scores(Z) and Z.shape[1] == self.general.X.shape[1]:
            if self._points is None or self._points[0] is not Z:
                self._points = (Z, self.points(Z))
            points = self._points[1]
        if points is None:
            return self.general.decision_values(Z, support, coef)
        return self.exact_decision_values(points, support, coef)


class BitSets(ExactRows):
    """Binary rows (of a CSR :attr:`general`) as bit sets of uint64 words, ``stored`` (row ``j``
    is ``stored[j]``, a view of :attr:`columns`); ``norms`` are their numbers of features,
    ``counts`` the same in the smallest unsigned type that holds them (what a row reads);
    ``table`` holds ``exp(-gamma m)`` for the squared distances ``m`` (see the module docstring).
    """

    name = "binary bit sets"

    def __init__(self, general: Float64Rows) -> None:
        #: Word ``w`` of every row, ``columns[w]``, contiguous (:func:`~sbpbench.kernels.loops.binary_row`).
        self.columns = read_only(np.ascontiguousarray(bit_sets(general.X).T))
        norms = np.diff(general.X.indptr).astype(np.int64)
        super().__init__(general, self.columns.T, norms)
        self.counts = read_only(norms.astype(np.min_scalar_type(int(norms.max(initial=0)))))
        self.row_arrays = (self.columns, self.counts)
        self.table = read_only(loops.distance_table(2 * int(self.norms.max(initial=0)) + 1, self.gamma))
        self._bind(loops.binary_rows_of, self.columns, self.counts, self.gaussian, self.table)

    @property
    def in_order(self) -> None:
        """None: a full row reads the bit sets in order."""
        return None

    def threaded_rows(self, i: int, idx: np.ndarray, out: np.ndarray) -> None:
        loops.run_threaded(loops.binary_row_parallel, self.columns, self.counts, i,
                           None if idx is self.all_rows else idx, self.gaussian, self.table, out)

    def block_source(self, i: int) -> tuple[Any, ...]:
        """``(columns, counts, i, gaussian, table)``: what :func:`~sbpbench.kernels.loops.binary_row` reads."""
        return self.columns, self.counts, i, self.gaussian, self.table

    def scores(self, Z: Any) -> bool:
        return bool(sp.issparse(Z))

    def points(self, Z: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(bit sets, feature counts, distance table)`` of binary CSR points ``Z``, else None."""
        points = sp.csr_matrix(Z, copy=True)
        points.sum_duplicates()
        if not np.all(points.data == 1.0):
            return None
        counts = np.diff(points.indptr).astype(np.int64)
        size = 2 * max(int(self.norms.max()), int(counts.max(initial=0))) + 1
        table = self.table if size <= self.table.size else loops.distance_table(size, self.gamma)
        return bit_sets(points), counts, table

    def exact_decision_values(self, points: Any, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
        z_bits, z_counts, table = points
        out = np.empty(z_bits.shape[0])
        support_bits = np.ascontiguousarray(self.stored[support])
        loops.binary_decision(z_bits, z_counts, support_bits, self.norms[support], coef, self.gaussian, table, out)
        return out

    def subset(self, rows: np.ndarray) -> BitSets:
        return BitSets(self.general.subset(rows))


class SmallIntegers(ExactRows):
    """Small-integer rows ``q = D x`` as dense uint8 (C order), ``stored``, with exact int64
    squared norms ``norms`` (see the module docstring); ``scale`` is ``D``.

    Where the CPU has AVX-512 VNNI (:data:`~sbpbench.kernels.loops.VNNI`) and the rows are
    sparse in groups of four features (:func:`uses_groups`), ``packed`` holds their feature-major
    copy (:func:`~sbpbench.kernels.loops.pack_groups`, as many bytes again) and a full row reads
    only the groups where its own point is nonzero (:func:`~sbpbench.kernels.loops.query_groups`:
    the same integers, read from a quarter of the bytes on MNIST); ``packed`` is None otherwise.
    ``groups`` (True or False) forces the choice: a :meth:`subset` takes its parent's, so that
    its rows run the same compiled forms.
    """

    name = "uint8 dense"

    def __init__(self, general: Float64Rows, ints: np.ndarray, scale: int, groups: bool | None = None) -> None:
        super().__init__(general, ints, loops.int_squared_norms(ints))
        self.scale, self.scale2 = scale, float(scale) ** 2
        self.norms64 = read_only(self.norms.astype(np.float64))  # for measuring, made once
        self.packed = read_only(loops.pack_groups(ints)) if (uses_groups(ints) if groups is None else groups) else None
        #: What a full row's loop reads besides the rows: None, or the grouped copy and the
        #: scratch vectors of a row's chosen groups (one each per storage: no allocation per row).
        self._groups: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if self.packed is not None:
            self._groups = (self.packed, np.empty(self.packed.shape[0], np.int64),
                            np.empty(self.packed.shape[0], np.uint32))
            self.nbytes += self.packed.nbytes
        bound = (self.stored, self.norms, self.gaussian, self.gamma, self.scale2)
        self.serial_rows = partial(loops.int_rows_of, *bound, None)
        self.full_row = partial(loops.int_rows_of, *bound, self._groups, self.all_rows)

    def threaded_rows(self, i: int, idx: np.ndarray, out: np.ndarray) -> None:
        loops.run_threaded(loops.int_row_parallel, self.stored, self.norms, self.gaussian, self.gamma, self.scale2,
                           self._groups if idx is self.all_rows else None, idx, i, out)

    def scores(self, Z: Any) -> bool:
        return self.general.X.shape[1] <= EVAL_BLOCK_MAX_FEATURES

    def points(self, Z: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """``(integer rows as uint8 in C order, squared norms as float64)`` of points ``Z`` that
        are small integers with the training data's scale ``D``, else None: what the exact
        blocked products read (:func:`blocked_decision_values`)."""
        ints = small_integers(Z, self.scale)
        if ints is None:
            return None
        return ints, loops.int_squared_norms(ints).astype(np.float64)

    def exact_decision_values(self, points: Any, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
        Z, z_sq = points
        return blocked_decision_values(Z, z_sq, self.stored, self.norms64, self.scale2, support, coef, self)

    def subset(self, rows: np.ndarray) -> SmallIntegers:
        return SmallIntegers(self.general.subset(rows), self.stored[rows], self.scale, self.packed is not None)


def uses_groups(ints: np.ndarray) -> bool:
    """Whether :class:`SmallIntegers` keeps the feature-major copy of the uint8 rows ``ints``:
    where the CPU has AVX-512 VNNI (:data:`~sbpbench.kernels.loops.VNNI`) and the rows' mean
    fraction of feature groups holding a nonzero value is at most
    :data:`~sbpbench.kernels.loops.GROUPS_MAX_FRACTION` (the copy costs as many bytes again as
    the rows; the rows of denser data read them all anyway)."""
    if not loops.VNNI or ints.shape[0] == 0:
        return False
    groups = -(-ints.shape[1] // loops.GROUP)
    return bool(loops.group_counts(ints).mean() <= loops.GROUPS_MAX_FRACTION * groups)


def choose(X: Any, storage: str, gaussian: bool, gamma: float) -> Storage:
    """The storage of the training rows ``X``: with ``storage="auto"``, bit sets or small
    integers when the data are such (:mod:`sbpbench.kernels.detect`), else (and with
    ``storage="float64"``) float64 CSR or dense.

    Parameters
    ----------
    X : array-like or scipy sparse matrix, shape (n, d)
        The training examples.
    storage : {"auto", "float64"}
        Choose an exact storage where one applies, or not.
    gaussian : bool
        The Gaussian kernel (else the linear one).
    gamma : float
        ``1 / (2 sigma2)`` of the Gaussian kernel.

    Returns
    -------
    Storage

    Raises
    ------
    ValueError
        For a ``storage`` not in :data:`STORAGES`.
    """
    if storage not in STORAGES:
        raise ValueError(f"unknown storage {storage!r}; expected one of {', '.join(STORAGES)}")
    matrix = as_kernel_matrix(X)
    general: Float64Rows
    general = Float64CSR(matrix, gaussian, gamma) if sp.issparse(matrix) else Float64Dense(matrix, gaussian, gamma)
    if storage == "float64":
        return general
    if is_binary(matrix):
        return BitSets(general)
    scale = small_integer_scale(matrix)
    ints = small_integers(matrix, scale) if scale is not None else None
    if ints is None or scale is None:
        return general
    return SmallIntegers(general, ints, scale)


def scratch_columns(X: sp.csr_matrix) -> tuple[np.ndarray, int]:
    """The column of each stored value of ``X`` in the scratch vector of :class:`Float64CSR`,
    and that vector's length.

    ``X.indices`` and ``d`` itself while ``d`` is at most the number of stored values; beyond,
    the rank of each column among those the rows use (a copy of the indices), and their number:
    at most the stored values, whatever the declared number of features. The kernel values are
    the same bit for bit, the products summed in the same order.
    """
    d = X.shape[1]
    if d <= max(X.nnz, 1):
        return X.indices, d
    used, ranks = np.unique(X.indices, return_inverse=True)
    return ranks.astype(X.indices.dtype).reshape(-1), used.size


def shared_columns(S: sp.csr_matrix, Z: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix, int]:
    """Support rows ``S`` and points ``Z`` over the columns of ``S`` alone, and their number, for
    inner products through a scratch vector of that length (:func:`loops.sparse_decision
    <sbpbench.kernels.loops.sparse_decision>`).

    Unchanged, with ``d``, while ``d`` is at most the values ``S`` stores; beyond, columns are
    renumbered by their rank among those ``S`` uses and the values of ``Z`` in other columns
    dropped: they meet no value of ``S``, so every inner product is the same sum, in the same order.
    """
    d = S.shape[1]
    if d <= max(S.nnz, 1):
        return S, Z, d
    used, ranks = np.unique(S.indices, return_inverse=True)
    at = np.minimum(np.searchsorted(used, Z.indices), max(used.size - 1, 0))
    kept = used[at] == Z.indices if used.size else np.zeros(Z.nnz, dtype=bool)
    indptr = np.concatenate(([0], np.cumsum(kept)))[Z.indptr]
    S = sp.csr_matrix((S.data, ranks.reshape(-1).astype(np.int32), S.indptr), shape=(S.shape[0], used.size))
    Z = sp.csr_matrix((Z.data[kept], at[kept].astype(np.int32), indptr), shape=(Z.shape[0], used.size))
    return S, Z, used.size


def _dense64(A: Any) -> np.ndarray:
    """A block of rows as a dense float64 array (no copy when it is one already)."""
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)


def blocked_decision_values(Z: Any, z_sq: np.ndarray, X: Any, sq: np.ndarray, scale2: float, support: np.ndarray,
                            coef: np.ndarray, storage: Storage) -> np.ndarray:
    """Decision values by blocked inner products: dense blocks of at most :data:`EVAL_BLOCK_ROWS`
    points by :data:`EVAL_BLOCK_SUPPORT` support rows, so that measuring needs little memory
    whatever the support size.

    Parameters
    ----------
    Z : numpy.ndarray or scipy.sparse matrix, shape (m, d)
        Points to score, with squared norms ``z_sq``: uint8 integers (C order) when ``X`` is.
    z_sq : numpy.ndarray, shape (m,)
    X : numpy.ndarray or scipy.sparse matrix, shape (n, d)
        Training rows, with squared norms ``sq``: float64, whose blocks are multiplied by BLAS,
        or the uint8 integers, whose inner products are exact integers by
        :data:`~sbpbench.kernels.loops.block_dots` (the same numbers the float64 products
        of the integers give, every partial sum being an integer below 2^53).
    sq : numpy.ndarray, shape (n,)
    scale2 : float
        What inner products and squared norms are divided by (``D^2`` for the integers, else 1).
    support, coef : numpy.ndarray
        As :meth:`Storage.decision_values` takes them.
    storage : Storage
        Its ``gaussian`` and ``gamma``.

    Returns
    -------
    numpy.ndarray, shape (m,)
    """
    m = Z.shape[0]
    out = np.zeros(m)
    integers = isinstance(X, np.ndarray) and X.dtype == np.uint8
    if integers:  # one block's products, written again for each block (its pages mapped once)
        space = np.empty(min(m, EVAL_BLOCK_ROWS) * min(support.size, EVAL_BLOCK_SUPPORT))
    for s_lo in range(0, support.size, EVAL_BLOCK_SUPPORT):
        part = support[s_lo:s_lo + EVAL_BLOCK_SUPPORT]
        Sd = None if integers else _dense64(X[part])
        for lo in range(0, m, EVAL_BLOCK_ROWS):
            hi = min(m, lo + EVAL_BLOCK_ROWS)
            if Sd is None:
                dots = space[:(hi - lo) * part.size].reshape(hi - lo, part.size)
                loops.run_threaded(loops.block_dots, X, part, Z[lo:hi], dots)
            else:
                dots = np.ascontiguousarray(_dense64(Z[lo:hi]) @ Sd.T)
            loops.add_block(dots, z_sq[lo:hi], sq[part], coef[s_lo:s_lo + part.size], storage.gaussian,
                            storage.gamma, scale2, out[lo:hi])
    return out


def memory_needs(X: Any, test_X: Any, spec: KernelSpec) -> dict[str, float]:
    """Bytes a :class:`~sbpbench.kernels.kernel.Kernel` over ``X`` allocates, and its measurement
    of ``test_X``, by what.

    An estimate from the shapes and stored values alone, made before anything is allocated
    (:func:`sbpbench.memory.require` checks it): the training rows as the kernel stores them
    (dense float64 and uint8 for data of density at least :data:`DENSE_THRESHOLD`, else the
    CSR copy and at most as much again in bit sets or uint8 rows; with VNNI, for data dense
    enough to be small integers, the uint8 rows' feature-major copy, :class:`SmallIntegers`), the
    test points in the same forms (:meth:`ExactRows.points`, kept for every checkpoint), the
    scratch vector of CSR rows (:func:`scratch_columns`) and the measurement's blocks (for sparse
    data of more than :data:`EVAL_BLOCK_MAX_FEATURES` features, one dense ``d``-long test row per
    thread), and the row cache full (``cache_mb``, at most ``n`` rows of ``n``).

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
        storage, test = 9.0 * n * d, 9.0 * m * d
    else:
        storage, test = 24.0 * stored + 8.0 * n, 24.0 * test_stored + 8.0 * m
    if loops.VNNI and stored >= SMALL_INT_MIN_DENSITY * n * d:  # small integers may keep a grouped copy
        storage += float(n * loops.GROUP * -(-d // loops.GROUP))
    if not dense and d > EVAL_BLOCK_MAX_FEATURES:  # scratch rows of the columns used (shared_columns)
        measuring = 8.0 * min(d, max(stored, 1)) * numba.get_num_threads()
    else:
        blocks = d * (min(n, EVAL_BLOCK_SUPPORT) + min(m, EVAL_BLOCK_ROWS))  # support and test rows, dense
        measuring = 8.0 * (blocks + EVAL_BLOCK_ROWS * EVAL_BLOCK_SUPPORT)  # and their inner products
    return {
        "training rows": storage,
        "test rows": test,
        "feature scratch vector": 8.0 * (d if dense else min(d, max(stored, 1))),
        "measurement blocks": measuring,
        "kernel row cache": min(spec.cache_mb * 2**20, 8.0 * n * n),
    }
