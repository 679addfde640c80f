"""The counting kernel: values against scikit-learn, counters against the contract."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from sbpbench.kernels import Kernel, KernelSpec, detect, loops, storage
from sbpbench.kernels.loops import row_block
from tests.exact import kernel_matrix


@pytest.fixture(scope="module")
def adult_X(adult_small):
    return adult_small[0].X


@pytest.mark.parametrize("kind", ["gaussian", "linear"])
@pytest.mark.parametrize("dense", [False, True])
def test_rows_match_scikit_learn(adult_X, kind, dense):
    X = adult_X.toarray() if dense else adult_X
    k = Kernel(X, KernelSpec(kind, 10.0, cache_mb=0))
    assert k.sparse is not dense
    ref = kernel_matrix(adult_X, sigma2=10.0, kind=kind)
    for i in (0, 7, 299):
        np.testing.assert_allclose(k.row(i), ref[i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.entries(5, np.array([3, 1, 250])), ref[5, [3, 1, 250]], rtol=1e-12)
    np.testing.assert_allclose(k.diag(), np.diag(ref), rtol=1e-12)


def test_real_valued_sparse_rows_match():
    rng = np.random.default_rng(0)
    X = sp.random(120, 400, density=0.05, random_state=1, format="csr") * 3.0
    k = Kernel(X, KernelSpec("gaussian", 0.5, 0))
    ref = kernel_matrix(X, sigma2=0.5)
    for i in rng.integers(0, 120, 5):
        np.testing.assert_allclose(k.row(i), ref[i], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("support_block", [4096, 3])
@pytest.mark.parametrize("dense", [False, True])
def test_decision_matches_dense_computation(adult_small, dense, support_block, monkeypatch):
    monkeypatch.setattr(storage, "EVAL_BLOCK_SUPPORT", support_block)  # 3: blocks of the support
    train, test = adult_small
    k = Kernel(train.X.toarray() if dense else train.X, KernelSpec("gaussian", 10.0, 0))
    support = np.array([4, 9, 100, 200])
    coef = np.array([0.5, -1.0, 2.0, 0.25])
    Z = k.prepare(test.X)
    got = k.decision(Z, support, coef, bias=0.3)
    ref = kernel_matrix(test.X, train.X[support], sigma2=10.0) @ coef + 0.3
    np.testing.assert_allclose(got, ref, rtol=1e-11)


def test_counters_follow_the_contract(adult_X):
    n = adult_X.shape[0]
    k = Kernel(adult_X, KernelSpec("gaussian", 10.0, cache_mb=1))
    k.row(3)
    k.row(3)
    k.row(4)
    assert (k.kernel_evals, k.kernel_evals_computed) == (3 * n, 2 * n)
    k.entries(1, np.arange(10))
    assert (k.kernel_evals, k.kernel_evals_computed) == (3 * n + 10, 2 * n + 10)
    k.decision(k.prepare(adult_X[:20]), np.arange(7), np.ones(7))
    assert k.eval_kernel_evals == 140
    assert (k.kernel_evals, k.kernel_evals_computed) == (3 * n + 10, 2 * n + 10)
    k.diag()
    assert k.kernel_evals == 3 * n + 10
    k.row(5, counted=False)  # a solver that counts its published entries itself
    k.row(5, counted=False)
    k.count(25)
    assert (k.kernel_evals, k.kernel_evals_computed) == (3 * n + 35, 3 * n + 10)
    k.reset()
    assert (k.kernel_evals, k.kernel_evals_computed, k.eval_kernel_evals) == (0, 0, 0)
    k.row(3)
    assert k.kernel_evals_computed == n  # the cache was emptied too


def test_lru_cache_evicts_the_least_recently_used(adult_X):
    n = adult_X.shape[0]
    k = Kernel(adult_X, KernelSpec("gaussian", 10.0, cache_mb=2.5 * 8 * n / 2**20))  # two rows
    for i in (0, 1, 0, 2, 0, 1):
        k.row(i)
    # 0 miss, 1 miss, 0 hit, 2 miss (evicts 1), 0 hit, 1 miss
    assert k.kernel_evals_computed == 4 * n
    cached = k.row(0)
    assert not cached.flags.writeable


def test_invalid_kernel_spec_rejected(adult_X):
    with pytest.raises(ValueError):
        Kernel(adult_X, KernelSpec("poly", 1.0))
    with pytest.raises(ValueError):
        Kernel(adult_X, KernelSpec("gaussian", 0.0))


@pytest.mark.parametrize("words", [2, 4])
@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_binary_bit_set_rows_equal_the_general_path_bitwise(adult_X, kind, words):
    """Full rows (read in order) and entries (through idx), on Adult's 123 features (two words a
    row) and with 80 more (four words)."""
    X = adult_X if words == 2 else sp.hstack([adult_X, adult_X[:, :80]]).tocsr()
    fast = Kernel(X, KernelSpec(kind, 10.0, cache_mb=0))
    assert fast.store.stored.shape[1] == words
    general = Kernel(X, KernelSpec(kind, 10.0, cache_mb=0), storage="float64")
    assert (fast.storage, general.storage) == ("binary bit sets", "float64 CSR")
    full = np.empty(X.shape[0])
    for i in (0, 7, 299):
        assert np.array_equal(fast.row(i).view(np.int64), general.row(i).view(np.int64))
        fast.store.rows(i, fast.store.all_rows, full, True)  # in order, in pieces over numba's threads
        assert np.array_equal(full, general.row(i))
    idx = np.array([3, 1, 250, 3])
    assert np.array_equal(fast.entries(5, idx), general.entries(5, idx))
    # more than a block of entries, not a multiple of the gather's lanes; on one thread and on numba's
    idx = np.random.default_rng(0).integers(0, X.shape[0], 1037)
    expected = general.entries(5, idx)
    assert np.array_equal(fast.entries(5, idx), expected)
    out = np.empty(idx.size)
    fast.store.rows(5, idx, out, parallel=True)
    assert np.array_equal(out, expected)


@numba.njit
def _rows_by_blocks(source, n, size):
    """A row read through ``row_block`` in blocks of ``size``, as a compiled pass reads it."""
    out, values, scratch = np.empty(n), np.empty(size), np.empty(loops.BIT_BLOCK, np.uint32)
    for lo in range(0, n, size):
        block = row_block(source, lo, min(size, n - lo), values, scratch)
        out[lo:lo + block.shape[0]] = block
    return out


@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_row_blocks_compute_the_row_where_it_is_read_and_count_it(adult_X, kind):
    """Without a cache, bit-set rows are handed out as their block source: read block by block
    (compiled, a last block short of a whole) they are the row bitwise, and counted as one."""
    n = adult_X.shape[0]
    k = Kernel(adult_X, KernelSpec(kind, 10.0, cache_mb=0))
    source = k.row_blocks(7)
    assert isinstance(source, tuple) and (k.kernel_evals, k.kernel_evals_computed) == (n, n)
    expected = Kernel(adult_X, KernelSpec(kind, 10.0, 0), storage="float64").row(7)
    for size in (loops.BIT_BLOCK, 37):
        assert np.array_equal(_rows_by_blocks(source, n, size), expected)
    assert np.array_equal(np.concatenate([row_block(source, lo, min(37, n - lo), np.empty(37), None)
                                          for lo in range(0, n, 37)]), expected)  # the Python reference
    # a row the cache keeps is computed whole (and a cached one is not computed again), as row() does
    cached = Kernel(adult_X, KernelSpec(kind, 10.0, cache_mb=1))
    assert np.array_equal(_rows_by_blocks(cached.row_blocks(7), n, 64), expected)
    cached.row_blocks(7)
    assert (cached.kernel_evals, cached.kernel_evals_computed) == (2 * n, n)
    # storages without a block source give the row
    assert isinstance(Kernel(adult_X * 2.0, KernelSpec(kind, 10.0, 0)).row_blocks(7), np.ndarray)


def test_a_subset_hands_out_rows_in_the_forms_its_parent_does(adult_X):
    """A warm-up runs on a subset and must compile the forms of row a run on the whole gets
    (issue #48): block sources where the parent's rows outgrow its cache, rows otherwise."""
    n = adult_X.shape[0]
    small = np.arange(20)
    # a cache of n - 1 float64 entries: the parent's rows do not fit, the subset's would
    tight = Kernel(adult_X, KernelSpec("gaussian", 10.0, cache_mb=(n - 1) * 8 / 2**20))
    part = tight.subset(small)
    assert (tight.run_n, part.run_n, part.n) == (n, n, 20)
    assert tight.serves_blocks and part.serves_blocks
    assert isinstance(part.row_blocks(3), tuple)
    roomy = Kernel(adult_X, KernelSpec("gaussian", 10.0, cache_mb=1)).subset(small)
    assert not roomy.serves_blocks and isinstance(roomy.row_blocks(3), np.ndarray)
    assert not Kernel(adult_X * 2.0, KernelSpec("gaussian", 10.0, 0)).subset(small).serves_blocks  # no block source


def test_real_valued_or_wide_data_stays_on_the_general_path(adult_X):
    assert Kernel(adult_X * 2.0, KernelSpec("gaussian", 10.0, 0)).storage != "binary bit sets"
    wide = sp.hstack([adult_X, sp.csr_matrix((adult_X.shape[0], 10_000))]).tocsr()
    assert Kernel(wide, KernelSpec("gaussian", 10.0, 0)).storage != "binary bit sets"


@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_binary_decision_values_equal_the_blocked_products_bitwise(adult_small, kind):
    train, test = adult_small
    fast = Kernel(train.X, KernelSpec(kind, 10.0, 0))
    general = Kernel(train.X, KernelSpec(kind, 10.0, 0), storage="float64")
    Z = fast.prepare(test.X)
    support = np.array([4, 9, 100, 200, 7])
    coef = np.array([0.5, -1.0, 2.0, 0.25, -0.125])
    got = fast.decision(Z, support, coef, bias=0.3)
    assert fast.store._points[1] is not None  # the bit-set path was taken
    assert np.array_equal(got, general.decision(Z, support, coef, bias=0.3))
    assert fast.eval_kernel_evals == Z.shape[0] * support.size


@pytest.mark.parametrize("form", ["binary", "uint8", "csr", "dense"])
def test_subset_keeps_the_storage_and_the_values(adult_X, form):
    # Adult as it is, as small integers over 255 (the subset holds only 2/255, whose scale
    # alone is no integer scale: alone it would be float64), and scaled by 0.3 (sparse, dense)
    X = {"binary": adult_X, "uint8": adult_X.multiply(1.0 / 255).tocsr(), "csr": adult_X * 0.3,
         "dense": (adult_X * 0.3).toarray()}[form]
    rows = np.array([3, 0, 17])
    if form == "uint8":
        for i in rows:
            X.data[X.indptr[i]:X.indptr[i + 1]] = 2.0 / 255
        assert Kernel(X[rows], KernelSpec("gaussian", 10.0)).storage == "float64 CSR"
    full = Kernel(X, KernelSpec("gaussian", 10.0, cache_mb=1.0))
    part = full.subset(rows)
    assert (part.storage, part.layout, part.n) == (full.storage, full.layout, rows.size)
    assert np.array_equal(part.sq, detect.squared_norms(part.X))  # its parent's norms: those of its rows
    full.row(int(rows[0]))
    for r, i in enumerate(rows):
        assert np.array_equal(part.row(r), full.entries(int(i), rows))  # bit for bit
    assert (part.kernel_evals, full.kernel_evals) == (rows.size ** 2, full.n + rows.size ** 2)


@pytest.mark.parametrize("form", ["binary", "uint8", "csr", "dense"])
def test_rows_on_one_thread_are_the_bound_loop_and_equal_the_threaded_rows(adult_X, form):
    """Kernel.row and entries take the storage's compiled loop bound to its arrays; the same bits as
    its threaded rows, whatever came before (a CSR row's scratch is cleared after each row)."""
    X = {"binary": adult_X, "uint8": adult_X.multiply(1.0 / 255).tocsr(), "csr": adult_X * 0.3,
         "dense": (adult_X * 0.3).toarray()}[form]
    k = Kernel(X, KernelSpec("gaussian", 10.0, cache_mb=0.0))
    assert k.storage == {"binary": "binary bit sets", "uint8": "uint8 dense", "csr": "float64 CSR",
                         "dense": "float64 dense"}[form]
    idx = np.array([7, 0, 299, 7, 150])
    for i in (4, 0, 4, 299):
        threaded = np.empty(k.n)
        k.store.rows(i, k.store.all_rows, threaded, True)
        assert np.array_equal(k.row(i), threaded)
        assert np.array_equal(k.entries(i, idx), threaded[idx])
        some = np.empty(idx.size)
        k.store.rows(i, idx, some, True)
        assert np.array_equal(k.entries(i, idx), some)
    assert k.kernel_evals_computed == 4 * k.n + 8 * idx.size  # no row cache: all computed


def test_rows_are_read_only_whatever_the_cache(adult_X):
    for cache_mb in (0.0, 1.0):
        k = Kernel(adult_X, KernelSpec("gaussian", 10.0, cache_mb))
        k.row(2)
        assert not any(a.flags.writeable for a in (k.row(1), k.row(2), k.entries(2, [0, 5]), k.entries(3, [1])))


@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_binary_rows_with_more_than_255_features_a_row(kind):
    """Counts above 255 take a wider unsigned type, and the table a longer range of distances."""
    rng = np.random.default_rng(4)
    X = sp.csr_matrix((rng.random((70, 4000)) < 0.08).astype(np.float64))
    fast = Kernel(X, KernelSpec(kind, 500.0, cache_mb=0))
    general = Kernel(X, KernelSpec(kind, 500.0, cache_mb=0), storage="float64")
    assert fast.storage == "binary bit sets" and fast.store.counts.dtype == np.uint16
    assert int(fast.store.norms.max()) > 255
    for i in (0, 33, 69):
        assert np.array_equal(fast.row(i), general.row(i))
    idx = rng.integers(0, 70, 45)
    assert np.array_equal(fast.entries(3, idx), general.entries(3, idx))
