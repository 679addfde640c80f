"""The counting kernel: every kernel value a solver uses comes from here, counted.

The SBP paper compares solvers by the number of kernel evaluations, so that the comparison
does not depend on an implementation (docs/design.md, "Kernel evaluations are the unit of
work"; docs/solvers.md, "Solvers and how kernel evaluations are counted"). A :class:`Kernel` owns the
training data and three counters:

``kernel_evals``
    evaluations between training points that the algorithm, as published, performs,
    counted as if there were no cache (the x-axis of the SBP paper's Figure 2);
``kernel_evals_computed``
    evaluations actually computed, after the LRU row cache;
``eval_kernel_evals``
    evaluations made only to measure (test error), which never enter the two above.

Counting rules (the contract every solver is held to):

* :meth:`Kernel.row` adds ``n`` to ``kernel_evals`` (unless told the solver counts its
  entries with :meth:`Kernel.count`), and to ``kernel_evals_computed`` only when the row was
  not in the cache; :meth:`Kernel.row_blocks` counts as :meth:`Kernel.row` does;
* :meth:`Kernel.count` adds to ``kernel_evals`` only;
* :meth:`Kernel.entries` adds ``len(idx)`` to ``kernel_evals``, and to
  ``kernel_evals_computed`` unless the cache holds row ``i`` on these columns or more;
* :meth:`Kernel.decision` (and :meth:`Kernel.decision_at`, at training points) adds
  ``m * len(support)`` to ``eval_kernel_evals`` only;
* :meth:`Kernel.diag` is free: ``K(x_i, x_i)`` is exactly 1 for the Gaussian kernel, and for
  the linear kernel the squared norm, which is precomputed once for every kernel row anyway.

This module counts and caches; the values come from one storage object
(:mod:`sbpbench.kernels.storage`: bit sets for binary data, uint8 small integers, float64 CSR
or dense, chosen per data set by :mod:`sbpbench.kernels.detect`), whose compiled loops
(:mod:`sbpbench.kernels.loops`) give the same values, or values within 1e-12, whatever the
storage. A full row with at least :data:`PARALLEL_MIN_WORK` multiply-adds (bit-set words) is
split over numba's threads (the executors set their count per worker) whenever that is faster
at the moment (:class:`~sbpbench.threads.FasterOfTwo`: threads wait for each other, which
costs a time slice when another process holds a core); smaller rows run on one.

A kernel compiles (or loads from numba's cache) the threaded row loops a run will use when told
to (:meth:`Kernel.load_loops`, by computing a row with each), which the runner's warm-up does
after its small run of a solver that counts kernel evaluations (whose serial loops that run
compiled), so that no compilation lands in a solver's timed work, and a run that reads no
full-length kernel row (a linear solver's) loads none; the
rows it hands out are always read-only arrays, so compiled code taking them sees one type
whatever the cache holds (see :mod:`sbpbench.execution.loop`). So is every array of training
data it holds (:meth:`Kernel.arrays`, made read-only by the storage): a solver that writes into
``kernel.X`` (or any of them) gets a ``ValueError`` at once instead of changing the data of the
runs after its own.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import scipy.sparse as sp

from sbpbench.kernels.spec import KernelSpec
from sbpbench.kernels.storage import Storage, choose, named_arrays
from sbpbench.threads import FasterOfTwo

#: Rows needing fewer multiply-adds (or bit-set words) than this are computed on one thread (a
#: parallel region's start-up and barrier cost more than they save on small rows); larger rows
#: use numba's current thread count whenever that is faster.
PARALLEL_MIN_WORK = 32_000


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
        per data set (:mod:`sbpbench.kernels.detect`); ``float64`` forces the general float64
        path (CSR or dense), for comparisons.

    Attributes
    ----------
    kernel_evals, kernel_evals_computed, eval_kernel_evals : int
        The counters (the module docstring says what adds to each).
    storage : str
        The storage the rows are computed from: ``"binary bit sets"``, ``"uint8 dense"``,
        ``"float64 CSR"`` or ``"float64 dense"``.
    store : sbpbench.kernels.storage.Storage
        That storage, which computes every value.
    X : numpy.ndarray or scipy.sparse.csr_matrix
        The training examples in float64 (:func:`~sbpbench.kernels.detect.as_kernel_matrix`),
        whatever the storage; ``sq`` their squared norms, ``sparse`` whether ``X`` is CSR.
    """

    def __init__(self, X, spec: KernelSpec, storage: str = "auto"):
        gaussian = spec.name == "gaussian"
        gamma = 1.0 / (2.0 * spec.sigma2) if gaussian else 0.0  # K = exp(-gamma ||x - x'||^2)
        self._build(spec, choose(X, storage, gaussian, gamma))

    def _build(self, spec: KernelSpec, store: Storage) -> None:
        """Count over the rows of ``store`` (its compiled row loops loaded by :meth:`load_loops`)."""
        self.spec, self.store, self.storage = spec, store, store.name
        #: The storage every value handed out is computed from: ``store``, which the solver
        #: contract replaces with other points to show that a solver computes no value itself
        #: (:class:`sbpbench.solvers.contract.SealedKernel`).
        self._values = store
        self.X: Any = store.general.X  # a dense array or a CSR matrix, told apart by self.sparse
        self.sparse = sp.issparse(self.X)
        self.n, self.d = self.X.shape
        self.sq = store.general.sq
        self._row_parallel = store.work >= PARALLEL_MIN_WORK
        self._all = store.all_rows  # the storage recognizes this array (Storage.all_rows)
        #: ``_full_row(i, out)``: a full row, split over threads or not, whichever is faster now,
        #: or on one thread by the storage's compiled loop bound to its arrays (one compiled call).
        self._full_row = FasterOfTwo(self._threaded_row, store.full_row) if self._row_parallel else store.full_row
        self._cache_budget = int(spec.cache_mb * 2**20 // 8)  # float64 entries the row cache may hold
        #: Training points of the problem whose run this kernel serves: ``n``, and for a
        #: :meth:`subset` its parent's, so that a warm-up on a subset gets the rows' forms a run
        #: on the parent gets (:meth:`row_blocks`) and compiles what that run calls.
        self.run_n = self.n
        #: The forms of row :meth:`load_loops` compiled the threaded loop of.
        self._loops_loaded: set[str] = set()
        #: The full-length rows this kernel computed: ``"row"`` (a full row, :meth:`row`) and
        #: ``"entries"`` (``n`` entries, :meth:`entries`), the forms a kernel whose rows are split
        #: over threads computes by its threaded loops (:meth:`load_loops`).
        self.full_length_rows: set[str] = set()
        self.reset()

    def load_loops(self, forms: Any) -> None:
        """Compile (or load) the row loops of a run that a small run may leave out (module
        docstring), each once: where this kernel's full-length rows are split over threads
        (:data:`PARALLEL_MIN_WORK`), one row of each of ``forms`` (:attr:`full_length_rows` of
        the warm-up's small run) by the serial loop and by the parallel one, both of which such
        a row may take (:class:`~sbpbench.threads.FasterOfTwo`, or always the parallel one);
        nothing counted or cached, nothing else compiled. Every other row loop a run calls is
        the small run's own (a :meth:`subset` runs the same compiled forms). Each loop loaded
        from numba's cache costs some 5-10 ms, which a run that reads no full-length row (a
        linear solver's, SBP's on block sources) does not pay.

        Parameters
        ----------
        forms : iterable of {"row", "entries"}
            A full row (the kernel's own index array) and ``n`` entries (another index array).
        """
        if not self._row_parallel:
            return
        for form in sorted(set(forms) - self._loops_loaded):
            self._loops_loaded.add(form)
            for parallel in (False, True):
                self._compute(0, self._all if form == "row" else self._all.copy(), parallel)

    def subset(self, rows: np.ndarray) -> Kernel:
        """The kernel over the training points ``rows``, stored as this one is.

        Its rows run this kernel's compiled loops with the same argument types (storage, CSR
        index types, scale of small integers), whatever storage these points alone would take;
        its counters and cache are its own. For running a solver on a small problem of the same
        kind (the warm-up of :mod:`sbpbench.execution.loop`).

        Parameters
        ----------
        rows : numpy.ndarray of int
            Indices of training points.

        Returns
        -------
        Kernel
        """
        part = Kernel.__new__(Kernel)
        part._build(self.spec, self._values.subset(rows))
        part.run_n = self.run_n
        return part

    # -- counters -------------------------------------------------------------------------
    def reset(self, keep_cache: bool = False) -> None:
        """Zero the counters and empty the row cache (done at the start of every run).

        Parameters
        ----------
        keep_cache : bool
            Keep the cached rows: for another problem on the same training points (the
            estimators' one-vs-rest classes), whose rows are then counted in ``kernel_evals``
            as the published algorithm computes them, and in ``kernel_evals_computed`` only
            when not cached.
        """
        self.kernel_evals = 0
        self.kernel_evals_computed = 0
        self.eval_kernel_evals = 0
        if keep_cache:
            return
        #: Row ``i`` -> ``(columns, values)``, least recently used first; ``columns`` is None for a
        #: full row, else the index array a partial row was asked for (:meth:`entries`).
        self._cache: OrderedDict[int, tuple[np.ndarray | None, np.ndarray]] = OrderedDict()
        self._cached_entries = 0
        #: For the index array ``_positions_of`` last asked for: ``id(columns)`` -> ``(columns,
        #: positions of that array in columns or None)``.
        self._positions: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        self._positions_of: np.ndarray | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        """The training data this kernel holds, every array read-only (a write raises): ``X``
        (``X.data``, ``X.indices`` and ``X.indptr`` when it is CSR), ``sq``, and the storage's
        other arrays as ``store.NAME`` (:meth:`~sbpbench.kernels.storage.Storage.arrays`)."""
        found = named_arrays(self, ("X", "sq"))
        seen = {id(a) for a in found.values()}
        found.update({f"store.{name}": a for name, a in self.store.arrays().items() if id(a) not in seen})
        return found

    @property
    def layout(self) -> tuple[str, ...]:
        """What the argument types of compiled code reading this kernel's data depend on: the
        storage and, for CSR data, the index types (a key for the runner's warm-up)."""
        if not self.sparse:
            return (self.storage,)
        return self.storage, self.X.indices.dtype.str, self.X.indptr.dtype.str

    @property
    def cache_entries(self) -> int:
        """Kernel values the row cache may hold (``spec.cache_mb`` MiB of float64)."""
        return self._cache_budget

    @property
    def cached_bytes(self) -> int:
        """Bytes held by the row cache now (at most ``spec.cache_mb`` MiB)."""
        return 8 * self._cached_entries

    # -- training-time access ---------------------------------------------------------------
    def diag(self) -> np.ndarray:
        """``K(x_i, x_i)`` for every training point (not counted)."""
        return np.ones(self.n) if self._values.gaussian else self._values.general.sq.copy()

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
            values this kernel hands out (module docstring).
        """
        if counted:
            self.kernel_evals += self.n
        cached = self._cache.get(i)
        if cached is not None and cached[0] is None:
            self._cache.move_to_end(i)
            return cached[1]
        self.kernel_evals_computed += self.n
        return self._store(i, None, self._compute(i, self._all))

    def row_blocks(self, i: int) -> Any:
        """Row ``i`` for compiled code that reads it a block at a time, counted as :meth:`row` counts it.

        Compiled code passes what this returns to :func:`~sbpbench.kernels.loops.row_block` for
        each block of the row, in a loop that does its own work with the block (SBP's update
        pass). Where the storage computes a block at a time (bit sets) and the row cache
        would not keep this row (a row larger than the cache; for a :meth:`subset`, a row of
        its parent's, :attr:`run_n`), this is the storage's block
        source and nothing is computed here: every value is computed in
        :func:`~sbpbench.kernels.loops.row_block` by the kernel's own loop, and the row is
        never written to memory and read back. The caller must read
        every block once (the row is counted as computed here). Otherwise it is :meth:`row`'s
        array.

        Parameters
        ----------
        i : int
            Index of a training point.

        Returns
        -------
        numpy.ndarray or tuple
            The row, or a block source (:meth:`~sbpbench.kernels.storage.Storage.block_source`).
        """
        source = None if self.run_n <= self._cache_budget else self._values.block_source(i)
        if source is None:
            return self.row(i)
        self.kernel_evals += self.n
        self.kernel_evals_computed += self.n
        return source

    @property
    def serves_blocks(self) -> bool:
        """Whether :meth:`row_blocks` hands out block sources (never a row) in a run of
        :attr:`run_n` points: rows larger than the cache, of a storage computing a block at a time."""
        return self.run_n > self._cache_budget and self._values.block_source(0) is not None

    def _store(self, i: int, columns: np.ndarray | None, values: np.ndarray) -> np.ndarray:
        """Cache ``values`` as row ``i`` on ``columns`` (replacing what row ``i`` had), most recently
        used, evicting the least recently used rows beyond the budget; returns ``values``."""
        if values.size > self._cache_budget:
            return values
        old = self._cache.pop(i, None)
        if old is not None:
            self._cached_entries -= old[1].size
        self._cache[i] = (columns, values)
        self._cached_entries += values.size
        while self._cached_entries > self._cache_budget:
            self._cached_entries -= self._cache.popitem(last=False)[1][1].size
        return values

    def _within(self, columns: np.ndarray, idx: np.ndarray) -> np.ndarray | None:
        """Positions of ``idx`` in ``columns`` when ``columns`` is increasing and holds every index of
        ``idx``, else None; remembered for each ``columns`` while the same ``idx`` array is asked
        for (a solver asks with one active set at a time, and its cached rows are on few arrays)."""
        if self._positions_of is not idx or len(self._positions) >= 256:
            self._positions, self._positions_of = {}, idx
        known = self._positions.get(id(columns))
        if known is not None and known[0] is columns:
            return known[1]
        pos = np.searchsorted(columns, idx)
        found = (columns.size > 0 and bool(np.all(columns[1:] > columns[:-1])) and bool(np.all(pos < columns.size))
                 and bool(np.array_equal(columns[np.minimum(pos, columns.size - 1)], idx)))
        self._positions[id(columns)] = (columns, pos if found else None)
        return pos if found else None

    def entries(self, i: int, idx: np.ndarray) -> np.ndarray:
        """``K(x_i, x_j)`` for the ``j`` in ``idx``: part of row ``i``, served by the row cache.

        Counts ``len(idx)`` in ``kernel_evals``. When the cache holds row ``i`` in full, or on
        columns (an increasing index array) that include every index of ``idx``, the entries are
        read from it (nothing computed, the row becomes most recently used); otherwise only these
        entries are computed (``len(idx)`` in ``kernel_evals_computed``). Either way a partial
        row is then cached on ``idx`` itself (replacing what row ``i`` had; a full row stays):
        LIBSVM's cache of rows restricted to the active set (``get_Q(i, len)``) for a solver
        whose active set only shrinks between full rows (SMO with shrinking). The same ``idx``
        array object is recognized at once; other arrays cost a search the first time a pair
        of index arrays is met.

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
        if not (isinstance(idx, np.ndarray) and idx.dtype == np.int64 and idx.flags.c_contiguous):
            idx = np.ascontiguousarray(idx, dtype=np.int64)  # (a new array even when it need not be)
        self.kernel_evals += idx.size
        cached = self._cache.get(i)
        if cached is not None:
            columns, values = cached
            if columns is idx:
                self._cache.move_to_end(i)
                return values
            pos = idx if columns is None else self._within(columns, idx)
            if pos is not None:
                part = values[pos]
                part.flags.writeable = False
                if columns is None:
                    self._cache.move_to_end(i)
                    return part
                return self._store(i, idx, part)
        self.kernel_evals_computed += idx.size
        return self._store(i, idx, self._compute(i, idx))

    def count(self, evals: int) -> None:
        """Add ``evals`` to ``kernel_evals``: entries the published algorithm computes one by
        one and this implementation reads from rows it holds (fetched with
        ``row(i, counted=False)``).

        The Perceptron's published form computes ``f(x_i)`` from its support vectors (``|SV|``
        entries per presented example); ours adds one row per mistake to every ``f(x_j)``. SMO
        without shrinking, when this kernel's cache holds every row (so it would serve each row
        again from the cache, counted as :meth:`row` counts a cached row), reads rows it fetched
        earlier from its own copies inside a compiled batch and reports those reads here.

        Parameters
        ----------
        evals : int
            Evaluations of the published algorithm, not computed here.
        """
        self.kernel_evals += int(evals)

    def _compute(self, i: int, idx: np.ndarray, parallel: bool | None = None) -> np.ndarray:
        """``K(x_i, x_j)`` for ``j`` in ``idx``, read-only, not counted; by default a full row is
        split over numba's threads when the kernel's rows are large (:data:`PARALLEL_MIN_WORK`)
        and that is faster now (the same values either way), and other rows are on one thread
        unless they are as long as a full one.

        On one thread a row is one call of the storage's compiled loop, bound to its arrays
        (:attr:`~sbpbench.kernels.storage.Storage.serial_rows`): a kernel row on small data
        costs a few microseconds, and every Python layer on its way costs a fraction of one.
        """
        out = np.empty(idx.size)
        if parallel is None:
            if idx is self._all:
                self.full_length_rows.add("row")
                self._full_row(i, out)
            elif idx.size == self.n:
                self.full_length_rows.add("entries")
                self._values.rows(i, idx, out, self._row_parallel)
            else:
                self._values.serial_rows(idx, i, out)
        else:
            self._values.rows(i, idx, out, parallel)
        out.flags.writeable = False
        return out

    def _threaded_row(self, i: int, out: np.ndarray) -> None:
        self._values.threaded_rows(i, self._all, out)

    # -- measurement ----------------------------------------------------------------------
    def prepare(self, Z):
        """Return points ``Z`` in this kernel's storage format (CSR or dense float64)."""
        return self._values.general.prepare(Z)

    def decision(self, Z, support: np.ndarray, coef: np.ndarray, bias: float = 0.0) -> np.ndarray:
        """Decision values ``f(z) = sum_j coef_j K(x_support[j], z) + bias`` for rows of ``Z``.

        Counted in ``eval_kernel_evals`` only: this is measurement, never training.

        Parameters
        ----------
        Z : array-like or scipy sparse matrix, shape (m, d)
            Points to score, already in the format of :meth:`prepare`.
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
        return self._values.decision_values(Z, support, coef) + bias

    def decision_at(self, rows: np.ndarray, support: np.ndarray, coef: np.ndarray, bias: float = 0.0) -> np.ndarray:
        """:meth:`decision` at the training points ``rows``, counted as it counts (``eval_kernel_evals``).

        For a solver measuring its predictor on its own training points without reading the
        training data itself (SMO's snapshot while variables are shrunk).

        Parameters
        ----------
        rows : numpy.ndarray of int
            Indices of training points to score.
        support, coef, bias
            As :meth:`decision` takes them.

        Returns
        -------
        numpy.ndarray, shape (len(rows),)
        """
        return self.decision(self._values.general.X[rows], support, coef, bias)
