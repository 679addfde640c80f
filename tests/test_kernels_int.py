"""The small-integer kernel path (uint8 rows, exact integer dot products) against float64."""

import numpy as np
import pytest
import scipy.sparse as sp

from sbpbench.data.sources.mnist import mnist_split
from sbpbench.kernels import Kernel, KernelSpec, detect, kernel, loops, storage
from sbpbench.kernels.detect import INTEGER_SAMPLE, integer_scale, small_integers
from tests.problems import SHARED

MNIST = SHARED / "mnist"


@pytest.fixture(scope="module")
def t10k():
    """The real MNIST-t10k images (pixels / 255, CSR): 2000 training and 500 test rows."""
    images, labels = MNIST / "t10k-images-idx3-ubyte.gz", MNIST / "t10k-labels-idx1-ubyte.gz"
    if not images.is_file():
        pytest.skip(f"real data {images} not available")
    X, _ = mnist_split(images, labels, 8)
    return X[:2000], X[9500:]


def pair(X, kind, cache_mb=0.0):
    """The same kernel on the chosen (small-integer) storage and on the forced float64 path."""
    return (Kernel(X, KernelSpec(kind, 25.0, cache_mb)),
            Kernel(X, KernelSpec(kind, 25.0, cache_mb), storage="float64"))


def test_scale_detection():
    assert integer_scale(sp.csr_matrix(np.array([[0, 1 / 255, 1.0], [128 / 255, 0, 7 / 255]]))) == 255
    assert integer_scale(np.array([[0.5, 1.5, 0.0]])) == 2
    assert integer_scale(np.array([[3.0, 255.0]])) == 1
    assert integer_scale(np.array([[1 / 3, np.pi]])) is None  # not multiples of 1/3
    assert integer_scale(np.array([[0.5, 200.0]])) is None  # 400 does not fit in uint8
    assert integer_scale(np.array([[-0.5, 0.5]])) is None  # negative
    assert integer_scale(np.array([[1e-6, 1.0]])) is None  # D = 10^6 too large
    assert integer_scale(np.zeros((2, 3))) is None
    assert integer_scale(np.array([[np.nan, 0.5]])) is None
    assert integer_scale(np.array([[np.inf, 0.5]])) is None
    late = np.full((1, INTEGER_SAMPLE + 10), 0.5)
    late[0, -1] = 0.3  # not a multiple of 1/2, past the values checked first
    assert integer_scale(late) is None
    late[0, -1] = 0.25  # the smallest value, past them: D = 4
    assert integer_scale(late) == 4
    assert small_integers(np.array([[0.5, 1.0]]), 4).tolist() == [[2, 4]]
    assert small_integers(np.array([[0.3]]), 4) is None


def test_mnist_takes_the_uint8_path(t10k):
    fast, general = pair(t10k[0], "gaussian")
    assert (fast.storage, fast.store.scale, general.storage) == ("uint8 dense", 255, "float64 CSR")
    assert np.array_equal(fast.store.norms, (fast.store.stored.astype(np.int64) ** 2).sum(axis=1))
    assert fast.X is not None and sp.issparse(fast.X)  # the float64 data stay for other users


@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_rows_equal_the_float64_csr_path(t10k, kind):
    fast, general = pair(t10k[0], kind)
    worst = 0.0
    for i in range(0, 2000, 97):
        worst = max(worst, np.abs(fast.row(i) - general.row(i)).max())
    idx = np.array([3, 1, 1999, 3])
    worst = max(worst, np.abs(fast.entries(5, idx) - general.entries(5, idx)).max())
    assert worst <= 1e-12
    np.testing.assert_array_equal(fast.diag(), general.diag())


def test_parallel_rows_equal_serial_rows(t10k, monkeypatch):
    """Rows split over threads are the one-thread rows, and so is whichever the kernel picks."""
    monkeypatch.setattr(kernel, "PARALLEL_MIN_WORK", 10**12)
    serial = Kernel(t10k[0], KernelSpec("gaussian", 25.0, 0))
    monkeypatch.setattr(kernel, "PARALLEL_MIN_WORK", 0)
    parallel = Kernel(t10k[0], KernelSpec("gaussian", 25.0, 0))
    assert parallel._row_parallel and not serial._row_parallel
    threaded = np.empty(parallel.n)
    for i in (0, 11, 1999):
        parallel.store.rows(i, parallel.store.all_rows, threaded, True)
        assert np.array_equal(threaded, serial.row(i))
        assert np.array_equal(parallel.row(i), threaded)


def test_counting_is_unchanged(t10k):
    X = t10k[0]
    n = X.shape[0]
    two_rows = 2.5 * 8 * n / 2**20
    fast, general = pair(X, "gaussian", cache_mb=two_rows)
    for k in (fast, general):
        for i in (0, 1, 0, 2, 0, 1):  # 0 miss, 1 miss, 0 hit, 2 miss (evicts 1), 0 hit, 1 miss
            k.row(i)
        k.row(3, counted=False)
        k.count(25)
        cached = k.entries(3, np.arange(10))
        np.testing.assert_array_equal(cached, k.row(3, counted=False)[:10])  # read from the cached row
        k.entries(7, np.arange(4))
        k.decision(X[:20], np.arange(7), np.ones(7))
    assert fast.kernel_evals == general.kernel_evals == 6 * n + 25 + 10 + 4
    assert fast.kernel_evals_computed == general.kernel_evals_computed == 5 * n + 4
    assert fast.eval_kernel_evals == general.eval_kernel_evals == 140
    assert not fast.row(3).flags.writeable


@pytest.mark.parametrize("support_block", [4096, 50])
@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_decision_values_match_the_float64_path(t10k, kind, support_block, monkeypatch):
    monkeypatch.setattr(storage, "EVAL_BLOCK_SUPPORT", support_block)  # 50: blocks of the support
    monkeypatch.setattr(storage, "EVAL_BLOCK_ROWS", 128)
    train, test = t10k
    fast, general = pair(train, kind)
    support = np.arange(0, 2000, 9)
    coef = np.random.default_rng(0).normal(size=support.size)
    Z = fast.prepare(test)
    got = fast.decision(Z, support, coef, bias=0.3)
    assert fast.store._points[1] is not None  # the integer path was taken
    ref = general.decision(general.prepare(test), support, coef, bias=0.3)
    scale = np.abs(coef).sum() * (1.0 if kind == "gaussian" else fast.sq.max())
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * scale)
    assert fast.eval_kernel_evals == Z.shape[0] * support.size


def test_points_with_another_scale_take_the_general_path(t10k):
    train, test = t10k
    fast, general = pair(train, "gaussian")
    Z = fast.prepare(test * 0.3)
    support, coef = np.arange(0, 2000, 50), np.linspace(-1, 1, 40)
    got = fast.decision(Z, support, coef)
    assert fast.store._points[1] is None
    np.testing.assert_array_equal(got, general.decision(Z, support, coef))


def test_storage_choice():
    rng = np.random.default_rng(0)
    Q = rng.integers(0, 256, size=(50, 40)) * (rng.random((50, 40)) < 0.15)
    Q[0, 0] = 1  # the smallest nonzero value is 1 / D
    assert Kernel(Q / 255.0, KernelSpec()).storage == "uint8 dense"
    csr = Kernel(sp.csr_matrix(Q / 7.0), KernelSpec())
    assert (csr.storage, csr.store.scale) == ("uint8 dense", 7)  # density above SMALL_INT_MIN_DENSITY
    assert Kernel(Q / 255.0 + 0.1, KernelSpec()).storage == "float64 dense"  # not small integers
    assert Kernel(Q / 255.0, KernelSpec(), storage="float64").storage == "float64 dense"
    sparse = sp.random(50, 400, density=0.05, random_state=1, format="csr")
    sparse.data = np.ceil(sparse.data * 9)
    assert Kernel(sparse, KernelSpec()).storage == "float64 CSR"  # below SMALL_INT_MIN_DENSITY
    wide = sp.csr_matrix(np.full((2, detect.SMALL_INT_MAX_FEATURES + 1), 2.0))
    assert Kernel(wide, KernelSpec()).storage == "float64 dense"  # int32 dot products could overflow
    with pytest.raises(ValueError):
        Kernel(Q, KernelSpec(), storage="uint8")


@pytest.mark.skipif(not loops.VNNI, reason="this CPU has no AVX-512 VNNI")
@pytest.mark.parametrize("d", [0, 1, 15, 16, 17, 63, 64, 100, 127, 128, 129, 784])
def test_vnni_dots_equal_the_portable_dots(d):
    rng = np.random.default_rng(d)
    Q = rng.integers(0, 256, size=(40, d), dtype=np.uint8)
    Q[0], Q[1] = 255, 0  # the extremes of both operands: 255 * (255 - 128) and 255 * (0 - 128)
    idx = np.array([0, 1, 5, 39, 2, 0])
    for qi in (Q[0], Q[1], Q[7]):
        portable, vnni = np.empty(idx.size), np.empty(idx.size)
        loops.int_dots(Q, qi, idx, portable)
        loops.int_dots_vnni(Q, qi, idx, vnni)
        np.testing.assert_array_equal(portable, Q[idx].astype(np.int64) @ qi.astype(np.int64))
        np.testing.assert_array_equal(vnni, portable)


def test_no_vnni_when_numba_compiles_for_another_cpu(monkeypatch):
    monkeypatch.setattr(loops.numba.config, "CPU_NAME", "generic", raising=False)
    assert not loops.has_vnni()


@pytest.mark.parametrize("chunks", [1, 3])
@pytest.mark.parametrize("d", [0, 1, 15, 16, 17, 63, 64, 100, 129, 784])
def test_block_dots_are_the_exact_integer_products(d, chunks):
    """Both block products (VNNI where the CPU has it: four support rows at a time, the rest one
    by one, the last d % 16 features apart), at the extremes of both operands."""
    rng = np.random.default_rng(d)
    Q = rng.integers(0, 256, size=(400, d), dtype=np.uint8)
    Z = rng.integers(0, 256, size=(37, d), dtype=np.uint8)
    Q[:2], Z[0], Z[1] = 255, 255, 0
    part = rng.choice(400, 3 * loops.DOT_TILE + 7, replace=False)  # tiles and a part of one
    exact = Z.astype(np.int64) @ Q[part].astype(np.int64).T
    for block_dots in (loops.int_block_dots, loops.int_block_dots_vnni) if loops.VNNI else (loops.int_block_dots,):
        dots = np.empty((Z.shape[0], part.size))
        block_dots(Q, part, Z, dots, chunks)
        np.testing.assert_array_equal(dots, exact)


@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_decision_values_are_the_float64_products_of_the_integers(t10k, kind, monkeypatch):
    """The integer path's decision values are, bit for bit, those of BLAS's float64 products of
    the same integers (the path before int_block_dots), support and test rows in several blocks."""
    monkeypatch.setattr(storage, "EVAL_BLOCK_SUPPORT", 300)
    monkeypatch.setattr(storage, "EVAL_BLOCK_ROWS", 128)
    train, test = t10k
    store = Kernel(train, KernelSpec(kind, 25.0, 0.0)).store
    ints, z_sq = store.points(store.general.prepare(test))
    assert ints.dtype == np.uint8
    support = np.random.default_rng(1).choice(2000, 700, replace=False)
    coef = np.random.default_rng(2).normal(size=support.size)
    args = (store.norms64, store.scale2, support, coef, store)
    got = storage.blocked_decision_values(ints, z_sq, store.stored, *args)
    blas = storage.blocked_decision_values(ints.astype(np.float64), z_sq, store.stored.astype(np.float64), *args)
    np.testing.assert_array_equal(got, blas)


def test_the_estimate_counts_the_test_points_in_both_forms(t10k):
    train, test = t10k
    k = Kernel(train, KernelSpec("gaussian", 25.0, 0.0))
    Z = k.prepare(test)
    k.decision(Z, np.arange(3), np.ones(3))
    ints, z_sq = k.store._points[1]  # kept for the next checkpoint
    held = Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes + ints.nbytes + z_sq.nbytes
    assert held <= storage.memory_needs(train, test, k.spec)["test rows"]


def sparse_pixels(n, d, seed, density=0.2):
    """uint8 rows with ``density`` of their features nonzero, in runs (as MNIST's strokes are)."""
    rng = np.random.default_rng(seed)
    Q = np.zeros((n, d), np.uint8)
    for j in range(n):
        for start in rng.integers(0, max(d, 1), size=max(1, int(density * d) // 6)):
            Q[j, start:start + 6] = rng.integers(1, 256, size=Q[j, start:start + 6].size)
    return Q


@pytest.mark.skipif(not loops.VNNI, reason="this CPU has no AVX-512 VNNI")
@pytest.mark.parametrize(("n", "d"), [(300, 784), (257, 50), (129, 3), (500, 130)])
def test_grouped_dots_equal_the_dense_dots_bit_for_bit(n, d):
    """Issue #48: the feature-group dots of a row (tiles and tail, every range of rows a
    thread's chunk may start at) are exactly the dense dots, for sparse rows, the extremes and
    rows with too many groups (count -1, the dense dots)."""
    Q = sparse_pixels(n, d, d)
    Q[0], Q[1], Q[2, ::5] = 255, 0, 255
    packed = loops.pack_groups(Q)
    groups = (packed, np.empty(packed.shape[0], np.int64), np.empty(packed.shape[0], np.uint32))
    np.testing.assert_array_equal(loops.group_counts(Q), [np.count_nonzero(np.add.reduceat(
        q.astype(int), np.arange(0, d, loops.GROUP))) for q in Q])
    idx = np.arange(n)
    for i in (0, 1, 2, 3, n - 1):
        query = loops.query_groups(Q[i], groups)
        assert (query[3] == -1) == (loops.group_counts(Q[i:i + 1])[0] > loops.GROUPS_MAX_FRACTION * packed.shape[0])
        dense = np.empty(n)
        loops.int_dots_vnni(Q, Q[i], idx, dense)
        np.testing.assert_array_equal(dense, Q.astype(np.int64) @ Q[i].astype(np.int64))
        if query[3] < 0:
            continue
        for first in (0, 1, 17, n // 2):
            grouped = np.full(n - first, np.nan)
            loops.group_dots(Q, Q[i], query, first, grouped)
            np.testing.assert_array_equal(grouped, dense[first:])


@pytest.mark.parametrize("kind", ["gaussian", "linear"])
def test_rows_with_and_without_the_grouped_copy_are_identical(kind):
    """Every row of a storage with the feature-major copy (full rows, serial and threaded, and
    partial rows) equals the same storage's without it, bit for bit; the copy is counted in
    its bytes and only kept with VNNI and few nonzero groups (:func:`storage.uses_groups`)."""
    Q = sparse_pixels(700, 784, 1)
    X = sp.csr_matrix(Q / 255.0)
    kernels = [Kernel(X, KernelSpec(kind, 25.0, 0.0)) for _ in range(2)]
    general = kernels[1].store.general
    kernels[1]._build(kernels[1].spec, storage.SmallIntegers(general, Q, 255, groups=False))
    grouped, plain = (k.store for k in kernels)
    assert (grouped.packed is not None) == loops.VNNI == storage.uses_groups(Q)
    assert not storage.uses_groups(np.full((3, 784), 7, np.uint8))  # dense rows keep no copy
    assert plain.packed is None and grouped.nbytes == plain.nbytes + (0 if grouped.packed is None else 700 * 784)
    assert (grouped.subset(np.arange(5)).packed is None) == (grouped.packed is None)  # the parent's forms
    for i in (0, 5, 699):
        for parallel in (False, True):
            rows = [np.empty(700) for _ in kernels]
            for store, out in zip((grouped, plain), rows):
                store.rows(i, store.all_rows, out, parallel)
            np.testing.assert_array_equal(rows[0], rows[1])
        np.testing.assert_array_equal(kernels[0].row(i), kernels[1].row(i))
        np.testing.assert_array_equal(kernels[0].entries(i, np.array([3, 0, 650])), kernels[1].row(i)[[3, 0, 650]])
    assert kernels[0].kernel_evals == 3 * 703  # counted by the kernel alone, as ever


def test_portable_int_row_equals_the_integers():
    """The path of a CPU without VNNI (:func:`loops.int_dots`, :data:`loops.row_dots` there) stays exact."""
    Q = sparse_pixels(100, 784, 2)
    out = np.empty(100)
    for i in (0, 99):
        loops.int_dots(Q, Q[i], np.arange(100), out)
        np.testing.assert_array_equal(out, Q.astype(np.int64) @ Q[i].astype(np.int64))
