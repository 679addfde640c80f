"""The compiled loops of the counting kernel (numba), one per storage of the training rows.

Nothing here counts: :class:`sbpbench.kernels.kernel.Kernel` counts and
:mod:`sbpbench.kernels.storage` calls these loops with its arrays. Every value goes through
:func:`transform` (an inner product and two squared norms to a kernel value), so that all
storages do the same arithmetic; the small-integer row takes its two steps apart
(:func:`exponent`, then :mod:`sbpbench.kernels.exp`'s inlined ``exp``, glibc's to the bit) and its
inner products by AVX-512 VNNI where the CPU has it (:data:`VNNI`), a full row's from a
feature-major copy, only in the feature groups where its own point is nonzero (:func:`group_dots`).

Row loops (``*_row``) compute ``out[r] = K(x_i, x_idx[r])`` on one thread; each has a
``*_rows_of`` wrapper taking the training point's index ``i`` (what a storage binds to its
arrays, so that a row on one thread is one compiled call, :attr:`Storage.serial_rows
<sbpbench.kernels.storage.Storage.serial_rows>`) and a ``*_row_parallel`` wrapper that hands
``chunks`` pieces of ``idx`` to numba's threads (:func:`run_threaded`). Decision loops (``*_decision``,
:func:`add_block`) sum ``coef_j K(z_r, s_j)`` over support points for measurement.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from llvmlite import binding, ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

from sbpbench.kernels.exp import exp_values


@numba.njit(cache=True, inline="always")
def exponent(dot, sq_i, sq_j, gamma, scale2):
    """``-gamma ||x_i - x_j||^2`` from an inner product and squared norms divided by ``scale2``
    (the argument of the Gaussian kernel's ``exp``, see :func:`transform`)."""
    d2 = (sq_i + sq_j - 2.0 * dot) / scale2
    if d2 < 0.0:
        d2 = 0.0
    return -gamma * d2


@numba.njit(cache=True, inline="always")
def transform(dot, sq_i, sq_j, gaussian, gamma, scale2):
    """Kernel value from an inner product and squared norms, all divided by ``scale2``.

    ``scale2`` is 1.0 on the float64 paths (dividing by it is exact, so it changes no bit)
    and ``D^2`` on the small-integer path, whose ``dot``, ``sq_i`` and ``sq_j`` are exact
    integers.
    """
    if not gaussian:
        return dot / scale2
    return np.exp(exponent(dot, sq_i, sq_j, gamma, scale2))


@numba.njit(cache=True)
def sparse_row(indptr, indices, data, sq, dense_xi, sq_i, idx, gaussian, gamma, out):
    """out[r] = K(x_i, x_idx[r]) for CSR rows, with x_i scattered into ``dense_xi``."""
    for r in range(idx.shape[0]):
        j = idx[r]
        acc = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            acc += data[k] * dense_xi[indices[k]]
        out[r] = transform(acc, sq_i, sq[j], gaussian, gamma, 1.0)


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM's ``ctpop``, one instruction on current CPUs)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


#: Entries of a bit-set row per block: their squared distances wait in an L1-sized scratch
#: vector between the two steps of :func:`binary_row`.
BIT_BLOCK = 512
#: Table entries read by one vector gather (:func:`gather_lanes`).
GATHER_LANES = 8


@intrinsic
def gather_lanes(typingctx, table, index, k, out, o):
    """``out[o:o + 8] = table[index[k:k + 8]]`` by one vector gather (LLVM's ``masked.gather``:
    one AVX-512 or two AVX2 gather instructions, separate loads on a CPU without them; the values
    are the table's either way). Typed for C-contiguous float64 ``table`` and ``out`` and uint32
    ``index`` only (it reads their data pointers)."""
    if not (all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" for a in (table, index, out))
            and table.dtype == out.dtype == types.float64 and index.dtype == types.uint32):
        return None
    sig = types.void(table, index, k, out, o)

    def codegen(context, builder, signature, args):
        table_v, index_v, k_v, out_v, o_v = args
        table_t, index_t, _, out_t, _ = signature.args
        i32, i64, f64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
        values_t, wide_t = ir.VectorType(f64, GATHER_LANES), ir.VectorType(i64, GATHER_LANES)
        index_data = context.make_array(index_t)(context, builder, index_v).data
        lanes = builder.load(builder.bitcast(builder.gep(index_data, [k_v]),
                                             ir.VectorType(i32, GATHER_LANES).as_pointer()), align=4)
        base = builder.ptrtoint(context.make_array(table_t)(context, builder, table_v).data, i64)
        splat = builder.shuffle_vector(builder.insert_element(ir.Constant(wide_t, ir.Undefined), base, i32(0)),
                                       ir.Constant(wide_t, ir.Undefined),
                                       ir.Constant(ir.VectorType(i32, GATHER_LANES), [0] * GATHER_LANES))
        offsets = builder.mul(builder.zext(lanes, wide_t), ir.Constant(wide_t, [8] * GATHER_LANES))
        pointers = builder.inttoptr(builder.add(splat, offsets), ir.VectorType(f64.as_pointer(), GATHER_LANES))
        mask_t = ir.VectorType(ir.IntType(1), GATHER_LANES)
        gather = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(values_t, [pointers.type, i32, mask_t, values_t]),
            f"llvm.masked.gather.v{GATHER_LANES}f64.v{GATHER_LANES}p0")
        values = builder.call(gather, [pointers, i32(8), ir.Constant(mask_t, [1] * GATHER_LANES),
                                       ir.Constant(values_t, ir.Undefined)])
        out_data = context.make_array(out_t)(context, builder, out_v).data
        builder.store(values, builder.bitcast(builder.gep(out_data, [o_v]), values_t.as_pointer()), align=8)
        return context.get_dummy_value()
    return sig, codegen


@numba.njit(cache=True, inline="always")
def _at(values, rows, lo, k):
    """``values[lo + k]`` (``rows`` None: the rows in order) or ``values[rows[k]]``."""
    if rows is None:
        return values[np.uint64(lo + k)]  # unsigned: no wraparound test, so the loop vectorizes
    return values[rows[k]]


@numba.njit(cache=True, inline="always")
def _bit_block(columns, counts, i, first, rows, lo, size, gaussian, scratch):
    """``scratch[k]`` = :func:`binary_row`'s integer for the ``k``-th row of a block: the rows
    ``lo + k`` (``rows`` None) or ``rows[k]``, ``k < size``; a pass per word, each vectorized."""
    for k in range(size):
        scratch[k] = first + np.uint32(_at(counts, rows, lo, k)) if gaussian else first
    for w in range(columns.shape[0]):
        word, bits = columns[w], columns[w, i]
        for k in range(size):
            shared = np.uint32(popcount(_at(word, rows, lo, k) & bits))
            scratch[k] = scratch[k] - np.uint32(2) * shared if gaussian else scratch[k] + shared


@numba.njit(cache=True, inline="always")
def _table_values(scratch, size, gaussian, table, out, o):
    """``out[o + k]`` = the kernel value of the integer ``scratch[k]``, ``k < size`` (see
    :func:`binary_row`): the table read :data:`GATHER_LANES` at a time, or the integer itself."""
    if gaussian:
        k = 0
        while k + GATHER_LANES <= size:
            gather_lanes(table, scratch, k, out, o + k)
            k += GATHER_LANES
        for r in range(k, size):
            out[o + r] = table[scratch[r]]
    else:
        for k in range(size):
            out[o + k] = float(scratch[k])


@numba.njit(cache=True)
def binary_row(columns, counts, i, idx, gaussian, table, out, first_row=0):
    """out[r] = K(x_i, x_idx[r]) for binary rows stored as bit sets (``idx`` None: the rows from
    ``first_row`` on, in order).

    ``columns[w, j]`` is word ``w`` of row ``j``'s bit set (word by word, so that a word of
    consecutive rows is one vector load); ``counts`` are the rows' numbers of features (their
    squared norms, in the smallest unsigned type that holds them). The inner product is the
    number of shared features, ``popcount`` of the AND of two bit sets, so the squared distance
    ``m = counts[i] + counts[j] - 2 dot`` is an exact integer and the Gaussian value is ``table[m]``
    (the linear kernel's is ``dot``). A block of :data:`BIT_BLOCK` entries at a time: first the
    integers ``m`` (vectorized: AVX-512 ``vpopcntq`` where the CPU has it), then the table
    lookups, :data:`GATHER_LANES` at a time (:func:`gather_lanes`).
    """
    m = out.shape[0]
    scratch = np.empty(BIT_BLOCK, np.uint32)
    first = np.uint32(counts[i]) if gaussian else np.uint32(0)
    for lo in range(0, m, BIT_BLOCK):
        size = min(m, lo + BIT_BLOCK) - lo
        if idx is None:
            _bit_block(columns, counts, i, first, None, first_row + lo, size, gaussian, scratch)
        else:
            _bit_block(columns, counts, i, first, idx[lo:lo + size], lo, size, gaussian, scratch)
        _table_values(scratch, size, gaussian, table, out, lo)


def row_block(source: Any, lo: int, size: int, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """``K(x_i, x_j)`` for ``j`` in ``[lo, lo + size)``, in compiled code, from what
    :meth:`Kernel.row_blocks <sbpbench.kernels.kernel.Kernel.row_blocks>` handed out.

    For a row (an array) its slice ``source[lo:lo + size]``; for a bit-set block source
    (:meth:`BitSets.block_source <sbpbench.kernels.storage.BitSets.block_source>`: ``(columns,
    counts, i, gaussian, table)``) the values of :func:`binary_row`, computed into ``out[:size]``
    with ``scratch`` (uint32, :data:`BIT_BLOCK`) and returned as that slice; ``size`` is at most
    :data:`BIT_BLOCK`. Compiled code calls it (numba's ``overload`` picks the form by the
    source's type); this Python body is the reference.
    """
    if isinstance(source, np.ndarray):
        return source[lo:lo + size]
    columns, counts, i, gaussian, table = source
    binary_row(columns, counts, i, np.arange(lo, lo + size), gaussian, table, out[:size])
    return out[:size]


@overload(row_block)
def _row_block(source, lo, size, out, scratch):
    if isinstance(source, types.Array):
        return lambda source, lo, size, out, scratch: source[lo:lo + size]

    def from_bits(source, lo, size, out, scratch):
        columns, counts, i, gaussian, table = source
        _bit_block(columns, counts, i, np.uint32(counts[i]) if gaussian else np.uint32(0), None, lo, size, gaussian,
                   scratch)
        _table_values(scratch, size, gaussian, table, out, 0)
        return out[:size]
    return from_bits


@numba.njit(cache=True)
def distance_table(size, gamma):
    """``table[m] = exp(-gamma m)`` by :func:`transform`, the general path's arithmetic."""
    table = np.empty(size)
    for m in range(size):
        table[m] = transform(0.0, float(m), 0.0, True, gamma, 1.0)
    return table


@numba.njit(cache=True)
def dense_row(X, sq, xi, sq_i, idx, gaussian, gamma, out):
    """out[r] = K(x_i, x_idx[r]) for dense rows.

    Eight outputs at a time, each its own sum over the features in order: eight independent
    chains of additions instead of one (a single sum waits for each addition in turn, which
    made this loop twice as slow on 64 features), the same operations in the same order for
    every output, so the same bits as one output at a time (the tail's loop).
    """
    d = X.shape[1]
    m = idx.shape[0]
    lanes = m - m % 8
    for r in range(0, lanes, 8):
        j0, j1, j2, j3, j4, j5, j6, j7 = idx[r], idx[r + 1], idx[r + 2], idx[r + 3], idx[r + 4], idx[r + 5], \
            idx[r + 6], idx[r + 7]
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        for k in range(d):
            x = xi[k]
            a0 += X[j0, k] * x
            a1 += X[j1, k] * x
            a2 += X[j2, k] * x
            a3 += X[j3, k] * x
            a4 += X[j4, k] * x
            a5 += X[j5, k] * x
            a6 += X[j6, k] * x
            a7 += X[j7, k] * x
        for u, (j, acc) in enumerate(((j0, a0), (j1, a1), (j2, a2), (j3, a3), (j4, a4), (j5, a5), (j6, a6),
                                      (j7, a7))):
            out[r + u] = transform(acc, sq_i, sq[j], gaussian, gamma, 1.0)
    for r in range(lanes, m):
        j = idx[r]
        acc = 0.0
        for k in range(d):
            acc += X[j, k] * xi[k]
        out[r] = transform(acc, sq_i, sq[j], gaussian, gamma, 1.0)


@intrinsic
def mac32(typingctx, acc, a, b):
    """``acc + a * b`` in int32 for uint8 ``a`` and ``b`` (numba would widen to int64, which
    halves the vector width; LLVM turns the int32 loop into ``vpmaddwd``)."""
    def codegen(context, builder, signature, args):
        total, x, y = args
        product = builder.mul(builder.zext(x, total.type), builder.zext(y, total.type), flags=("nuw", "nsw"))
        return builder.add(total, product, flags=("nsw",))
    return types.int32(types.int32, types.uint8, types.uint8), codegen


@numba.njit(cache=True, inline="always")
def int_dot(a, b):
    """Exact inner product of two uint8 vectors (at most SMALL_INT_MAX_FEATURES long)."""
    acc = np.int32(0)
    for k in range(a.shape[0]):
        acc = mac32(acc, a[k], b[k])
    return acc


@numba.njit(cache=True)
def int_squared_norms(Q):
    """``S_j = sum_k Q[j, k]^2`` of uint8 rows, exact (int64)."""
    out = np.empty(Q.shape[0], np.int64)
    for j in range(Q.shape[0]):
        out[j] = int_dot(Q[j], Q[j])
    return out


def has_vnni() -> bool:
    """Whether numba compiles for this host's CPU and it has AVX-512 VNNI (``vpdpbusd``) with
    the byte/word and 128-bit forms (BW, VL): then :data:`row_dots` is :func:`int_dots_vnni`."""
    if any(getattr(numba.config, name, None) is not None for name in ("CPU_NAME", "CPU_FEATURES")):
        return False  # compiled for another CPU (NUMBA_CPU_NAME, NUMBA_CPU_FEATURES)
    features = binding.get_host_cpu_features()
    return all(features.get(f, False) for f in ("avx512f", "avx512bw", "avx512vl", "avx512vnni"))


#: Row loops of the small-integer storage take :func:`vnni_dot` (decided once, at import).
VNNI = has_vnni()


def _vnni_step(builder, fn, acc, q, b, offset, width):
    """``acc = vpdpbusd(acc, b[offset:offset + width], q[offset:offset + width] ^ 0x80)``."""
    bytes_ty = ir.VectorType(ir.IntType(8), width)
    words_ty = ir.VectorType(ir.IntType(32), width // 4)

    def load(ptr):
        return builder.load(builder.bitcast(builder.gep(ptr, [offset]), bytes_ty.as_pointer()), align=1)
    signed = builder.xor(load(q), ir.Constant(bytes_ty, [0x80] * width))
    operands = [builder.load(acc), builder.bitcast(load(b), words_ty), builder.bitcast(signed, words_ty)]
    builder.store(builder.call(fn, operands), acc)


@intrinsic
def vnni_dot(typingctx, q, b):
    """``sum_k b[k] (q[k] - 128)`` in int32 over the first ``16 * (len(q) // 16)`` entries of
    two contiguous uint8 vectors, by AVX-512 VNNI's ``vpdpbusd`` (unsigned times signed bytes,
    four products summed into each int32 lane, no saturation): 64 bytes per instruction, two
    accumulators, then 16 bytes at a time. Exact: every partial sum is at most ``128 * 255 * d``
    in magnitude, below 2^31 for ``d <= SMALL_INT_MAX_FEATURES``; :func:`int_dots_vnni` adds
    ``128 sum_k b[k]`` and the tail. Typed for C-contiguous uint8 vectors only (it reads their data pointers)."""
    if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.uint8
               for a in (q, b)):
        return None

    def codegen(context, builder, signature, args):
        qa = context.make_array(signature.args[0])(context, builder, args[0])
        ba = context.make_array(signature.args[1])(context, builder, args[1])
        n = builder.extract_value(qa.shape, 0)
        i32 = ir.IntType(32)

        def declare(lanes):
            vec = ir.VectorType(i32, lanes)
            name = f"llvm.x86.avx512.vpdpbusd.{32 * lanes}"
            return (cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec] * 3), name),
                    cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [vec]),
                                                   f"llvm.vector.reduce.add.v{lanes}i32"),
                    cgutils.alloca_once_value(builder, ir.Constant(vec, None)))
        wide, wide_sum, acc0 = declare(16)
        acc1 = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(i32, 16), None))
        narrow, narrow_sum, acc2 = declare(4)
        pairs = builder.udiv(n, n.type(128))
        with cgutils.for_range(builder, pairs) as loop:
            offset = builder.mul(loop.index, n.type(128))
            _vnni_step(builder, wide, acc0, qa.data, ba.data, offset, 64)
            _vnni_step(builder, wide, acc1, qa.data, ba.data, builder.add(offset, n.type(64)), 64)
        done = builder.mul(pairs, n.type(128))
        with cgutils.for_range(builder, builder.udiv(builder.sub(n, done), n.type(16))) as loop:
            offset = builder.add(done, builder.mul(loop.index, n.type(16)))
            _vnni_step(builder, narrow, acc2, qa.data, ba.data, offset, 16)
        return builder.add(builder.call(wide_sum, [builder.add(builder.load(acc0), builder.load(acc1))]),
                           builder.call(narrow_sum, [builder.load(acc2)]))
    return types.int32(q, b), codegen


@numba.njit(cache=True)
def vnni_offset(qi):
    """``128 sum_k qi[k]`` over the entries :func:`vnni_dot` covers, the term it leaves out."""
    acc = np.int32(0)
    for k in range(qi.shape[0] // 16 * 16):
        acc += np.int32(128) * np.int32(qi[k])
    return acc


@numba.njit(cache=True)
def int_dots_vnni(Q, qi, idx, out):
    """out[r] = <Q[idx[r]], qi> exactly, by :func:`vnni_dot` (needs :data:`VNNI`)."""
    offset = vnni_offset(qi)
    full = qi.shape[0] // 16 * 16
    for r in range(idx.shape[0]):
        q = Q[idx[r]]
        acc = vnni_dot(q, qi) + offset
        for k in range(full, q.shape[0]):
            acc = mac32(acc, q[k], qi[k])
        out[r] = acc


@numba.njit(cache=True)
def int_dots(Q, qi, idx, out):
    """out[r] = <Q[idx[r]], qi> exactly, by :func:`int_dot` (any CPU)."""
    for r in range(idx.shape[0]):
        out[r] = int_dot(Q[idx[r]], qi)


#: The inner-product loop of :func:`int_row` (the other one is never compiled: ``vpdpbusd``
#: cannot be compiled for a CPU without it).
row_dots = int_dots_vnni if VNNI else int_dots


#: Features per group of the feature-major copy of small-integer rows (:func:`pack_groups`):
#: the four bytes one ``vpdpbusd`` lane multiplies and sums.
GROUP = 4
#: A full small-integer row takes the feature groups (:func:`group_dots`) when at most this
#: fraction of its groups hold a nonzero feature; others take the dense dots (:data:`row_dots`),
#: and a storage keeps the grouped copy only when its rows' mean fraction is at most this too.
#: The grouped dots read ``4 n`` bytes per nonzero group, the dense ones ``d n`` bytes: below
#: one half they read less than half of them (full MNIST: 60 of 196 groups, 0.6 against 1.8 ms
#: per row on one thread, timed by hand, 2026-11-29), so dense data never get slower.
GROUPS_MAX_FRACTION = 0.5
#: 16-row accumulators of :func:`vnni_groups` (registers): rows per tile ``16 * GROUP_TILE``.
GROUP_TILE = 8


@numba.njit(cache=True)
def pack_groups(Q):
    """The feature-major copy of uint8 rows ``Q`` (n, d): ``packed[g, j]`` holds the four bytes
    ``Q[j, 4g:4g + 4] ^ 0x80`` (features past ``d`` as 0), in order, as one uint32, so that a
    ``vpdpbusd`` takes four features of 16 consecutive rows at once (as signed bytes ``q - 128``)."""
    n, d = Q.shape
    out = np.empty(((d + GROUP - 1) // GROUP, n), np.uint32)
    for j in range(n):
        for g in range(out.shape[0]):
            word = np.uint32(0)
            for b in range(GROUP):
                k = GROUP * g + b
                value = np.uint32(Q[j, k]) if k < d else np.uint32(0)
                word |= (value ^ np.uint32(0x80)) << np.uint32(8 * b)
            out[g, j] = word
    return out


@numba.njit(cache=True)
def group_counts(Q):
    """Number of feature groups (:data:`GROUP` consecutive features) holding a nonzero value, per row of ``Q``."""
    n, d = Q.shape
    out = np.zeros(n, np.int64)
    for j in range(n):
        for g in range(0, d, GROUP):
            nonzero = False
            for k in range(g, min(d, g + GROUP)):
                nonzero |= Q[j, k] != 0
            out[j] += nonzero
    return out


@numba.njit(cache=True)
def query_groups(qi, groups):
    """What :func:`group_dots` reads for the row of ``qi``: ``(packed, chosen, words, count, offset)``
    from ``groups = (packed, chosen, words)`` (:func:`pack_groups`'s copy and two scratch vectors
    of its length, written here): the ``count`` groups of ``qi`` holding a nonzero feature,
    ``chosen[:count]``, their four bytes as one uint32, ``words[:count]``, and ``128 sum_k qi[k]``
    (what the signed bytes ``q - 128`` leave out). ``count`` is -1 when more than
    :data:`GROUPS_MAX_FRACTION` of the groups are nonzero: the dense dots are cheaper."""
    packed, chosen, words = groups
    d = qi.shape[0]
    count, total = 0, np.int32(0)
    for g in range(packed.shape[0]):
        word = np.uint32(0)
        for b in range(GROUP):
            k = GROUP * g + b
            if k < d:
                word |= np.uint32(qi[k]) << np.uint32(8 * b)
                total += np.int32(qi[k])
        if word != 0:
            chosen[count] = g
            words[count] = word
            count += 1
    if count > GROUPS_MAX_FRACTION * packed.shape[0]:
        count = -1
    return packed, chosen, words, count, np.int32(128) * total


def _splat(builder, value, lanes):
    """``value`` (an i32) in every lane of a vector."""
    i32 = ir.IntType(32)
    vec = ir.VectorType(i32, lanes)
    return builder.shuffle_vector(builder.insert_element(ir.Constant(vec, ir.Undefined), value, i32(0)),
                                  ir.Constant(vec, ir.Undefined), ir.Constant(vec, [0] * lanes))


@intrinsic
def vnni_groups(typingctx, packed, chosen, words, count, first, offset, out, o):
    """``out[o + r] = offset + sum_c sum_b bytes(words[c])_b (bytes(packed[chosen[c], first + r])_b - 128)``
    for ``r < 16 * GROUP_TILE``: the exact inner products of one tile of rows with the query of
    :func:`query_groups`, by AVX-512 VNNI's ``vpdpbusd`` (the query's four unsigned bytes
    broadcast, the copy's signed ones, 16 rows per instruction) into :data:`GROUP_TILE` int32
    accumulators held in registers over the chosen groups, converted to float64 at the end.
    Exact as :func:`vnni_dot` is. Typed for C-contiguous arrays (uint32 ``packed`` and ``words``,
    int64 ``chosen``, float64 ``out``) only: it reads their data pointers."""
    if not (all(isinstance(a, types.Array) and a.layout == "C" for a in (packed, chosen, words, out))
            and packed.ndim == 2 and packed.dtype == words.dtype == types.uint32 and chosen.dtype == types.int64
            and out.dtype == types.float64):
        return None
    sig = types.void(packed, chosen, words, count, first, offset, out, o)

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(signature.args[k])(context, builder, args[k]) for k in (0, 1, 2, 6)]
        count_v, first_v, offset_v, o_v = (context.cast(builder, args[k], signature.args[k], types.int64)
                                           for k in (3, 4, 5, 7))
        i32, i64 = ir.IntType(32), ir.IntType(64)
        ints, reals = ir.VectorType(i32, 16), ir.VectorType(ir.DoubleType(), 16)
        dpbusd = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ints, [ints] * 3),
                                                "llvm.x86.avx512.vpdpbusd.512")
        n = builder.extract_value(arrays[0].shape, 1)
        accs = [cgutils.alloca_once_value(builder, ir.Constant(ints, None)) for _ in range(GROUP_TILE)]
        with cgutils.for_range(builder, count_v) as loop:
            g = builder.load(builder.gep(arrays[1].data, [loop.index]))
            query = _splat(builder, builder.load(builder.gep(arrays[2].data, [loop.index])), 16)
            base = builder.add(builder.mul(g, n), first_v)
            for u, acc in enumerate(accs):
                ptr = builder.bitcast(builder.gep(arrays[0].data, [builder.add(base, i64(16 * u))]), ints.as_pointer())
                builder.store(builder.call(dpbusd, [builder.load(acc), query, builder.load(ptr, align=4)]), acc)
        shift = _splat(builder, builder.trunc(offset_v, i32), 16)
        for u, acc in enumerate(accs):
            ptr = builder.gep(arrays[3].data, [builder.add(o_v, i64(16 * u))])
            builder.store(builder.sitofp(builder.add(builder.load(acc), shift), reals),
                          builder.bitcast(ptr, reals.as_pointer()), align=8)
        return context.get_dummy_value()
    return sig, codegen


@numba.njit(cache=True)
def group_dots(Q, qi, query, first, out):
    """out[r] = <Q[first + r], qi> exactly from the feature groups of ``query``
    (:func:`query_groups`, whose count is not -1): tiles of ``16 * GROUP_TILE`` rows by
    :func:`vnni_groups` (needs :data:`VNNI`), the last rows by :func:`int_dot`."""
    packed, chosen, words, count, offset = query
    m = out.shape[0]
    step = 16 * GROUP_TILE
    tiles = m - m % step
    for lo in range(0, tiles, step):
        vnni_groups(packed, chosen, words, count, first + lo, offset, out, lo)
    for r in range(tiles, m):
        out[r] = int_dot(Q[first + r], qi)


#: Values of a small-integer row whose ``exp`` arguments are gathered at once (L1-sized).
EXP_BLOCK = 256


@numba.njit(cache=True)
def int_row(Q, S, qi, S_i, idx, gaussian, gamma, scale2, out, query=None):
    """out[r] = K(x_i, x_idx[r]) for small-integer rows ``Q`` (uint8) with scale2 = D^2.

    The inner products come first, then the values: the dot-product loop alone runs faster
    without the ``exp`` inside it (2.3 against 2.8 ms per full MNIST row on one thread, timed
    by hand; fused per row or per block of 256 rows, :func:`vnni_dot`'s loop was still 15%
    slower than in two passes). The inner products are :data:`row_dots`'s, or with a ``query``
    (:func:`query_groups`, for ``idx`` consecutive rows in order) whose count is not -1
    :func:`group_dots`'s: the same integers either way, on every CPU. The Gaussian values take
    :func:`~sbpbench.kernels.exp.exp_values` (glibc's ``exp``, inlined and vectorized: 0.09
    against 0.26 ms per row) over blocks of :data:`EXP_BLOCK` arguments.
    """
    m = idx.shape[0]
    if query is not None and query[3] >= 0:
        if m > 0:
            group_dots(Q, qi, query, idx[0], out)
    else:
        row_dots(Q, qi, idx, out)
    if not gaussian:
        for r in range(m):
            out[r] = transform(out[r], float(S_i), float(S[idx[r]]), gaussian, gamma, scale2)
        return
    x = np.empty(EXP_BLOCK)
    for lo in range(0, m, EXP_BLOCK):
        hi = min(m, lo + EXP_BLOCK)
        for r in range(lo, hi):
            x[r - lo] = exponent(out[r], float(S_i), float(S[idx[r]]), gamma, scale2)
        exp_values(x[:hi - lo], out[lo:hi])


# The serial row loops of training point ``i``, arguments ordered (the storage's arrays and
# constants, idx, i, out) so that a storage binds the first ones once (functools.partial) and a
# row costs one compiled call: ``i``'s own data are read here, not sliced in Python.

@numba.njit(cache=True)
def dense_rows_of(X, sq, gaussian, gamma, idx, i, out):
    """:func:`dense_row` of training point ``i``."""
    dense_row(X, sq, X[i], sq[i], idx, gaussian, gamma, out)


@numba.njit(cache=True)
def sparse_rows_of(indptr, indices, data, sq, scratch, gaussian, gamma, idx, i, out):
    """:func:`sparse_row` of training point ``i``, scattered into ``scratch`` (zero, ``d`` long)
    and cleared after."""
    for k in range(indptr[i], indptr[i + 1]):
        scratch[indices[k]] = data[k]
    sparse_row(indptr, indices, data, sq, scratch, sq[i], idx, gaussian, gamma, out)
    for k in range(indptr[i], indptr[i + 1]):
        scratch[indices[k]] = 0.0


@numba.njit(cache=True)
def binary_rows_of(columns, counts, gaussian, table, idx, i, out):
    """:func:`binary_row` of training point ``i`` (``idx`` None: all the rows, in order)."""
    binary_row(columns, counts, i, idx, gaussian, table, out)


@numba.njit(cache=True)
def int_rows_of(Q, S, gaussian, gamma, scale2, groups, idx, i, out):
    """:func:`int_row` of training point ``i``; with ``groups`` (``(packed, chosen, words)``, see
    :func:`query_groups`; ``idx`` then all the rows in order) from the feature groups where it has few."""
    if groups is None:
        int_row(Q, S, Q[i], S[i], idx, gaussian, gamma, scale2, out)
    else:
        int_row(Q, S, Q[i], S[i], idx, gaussian, gamma, scale2, out, query_groups(Q[i], groups))


# A parallel region costs a wake-up and a barrier of every thread (much more on a busy
# machine), so rows with little work run the serial loops above directly, and the others
# these wrappers, which hand ``chunks`` pieces of ``idx`` to numba's threads.

@numba.njit(cache=True)
def chunk(r, chunks, m):
    return r * m // chunks, (r + 1) * m // chunks


@numba.njit(cache=True, parallel=True)
def sparse_row_parallel(indptr, indices, data, sq, dense_xi, sq_i, idx, gaussian, gamma, out, chunks):
    for r in numba.prange(chunks):
        lo, hi = chunk(r, chunks, idx.shape[0])
        sparse_row(indptr, indices, data, sq, dense_xi, sq_i, idx[lo:hi], gaussian, gamma, out[lo:hi])


@numba.njit(cache=True, parallel=True)
def binary_row_parallel(columns, counts, i, idx, gaussian, table, out, chunks):
    for r in numba.prange(chunks):
        lo, hi = chunk(r, chunks, out.shape[0])
        if idx is None:  # the rows in order: each piece reads its own stretch of them
            binary_row(columns, counts, i, None, gaussian, table, out[lo:hi], lo)
        else:
            binary_row(columns, counts, i, idx[lo:hi], gaussian, table, out[lo:hi])


@numba.njit(cache=True, parallel=True)
def dense_row_parallel(X, sq, xi, sq_i, idx, gaussian, gamma, out, chunks):
    for r in numba.prange(chunks):
        lo, hi = chunk(r, chunks, idx.shape[0])
        dense_row(X, sq, xi, sq_i, idx[lo:hi], gaussian, gamma, out[lo:hi])


@numba.njit(cache=True, parallel=True)
def int_row_parallel(Q, S, gaussian, gamma, scale2, groups, idx, i, out, chunks):
    if groups is None:
        for r in numba.prange(chunks):
            lo, hi = chunk(r, chunks, idx.shape[0])
            int_row(Q, S, Q[i], S[i], idx[lo:hi], gaussian, gamma, scale2, out[lo:hi])
    else:
        query = query_groups(Q[i], groups)  # once, before the threads read it
        for r in numba.prange(chunks):
            lo, hi = chunk(r, chunks, idx.shape[0])
            int_row(Q, S, Q[i], S[i], idx[lo:hi], gaussian, gamma, scale2, out[lo:hi], query)


@numba.njit(cache=True, parallel=True)
def sparse_decision(z_indptr, z_indices, z_data, z_sq, s_indptr, s_indices, s_data, s_sq,
                     coef, gaussian, gamma, out, scratch):
    """out[r] = sum_j coef[j] K(z_r, s_j) for sparse test rows z and sparse rows s.

    ``scratch`` is zero, of shape ``(chunks, d)``: the rows are split in ``chunks`` parts,
    each scattering its rows, one at a time, into its own scratch row and clearing them after.
    So only the entries of the rows' nonzeros are ever written: a scratch allocated by
    ``np.zeros`` (zero pages the system maps on first write) costs memory for the pages of
    those entries, not ``8 d`` bytes per row, whatever the declared number of features ``d``.
    """
    m = z_indptr.shape[0] - 1
    nsv = s_indptr.shape[0] - 1
    chunks = scratch.shape[0]
    for c in numba.prange(chunks):
        dense = scratch[c]
        lo, hi = chunk(c, chunks, m)
        for r in range(lo, hi):
            for k in range(z_indptr[r], z_indptr[r + 1]):
                dense[z_indices[k]] = z_data[k]
            total = 0.0
            for j in range(nsv):
                acc = 0.0
                for k in range(s_indptr[j], s_indptr[j + 1]):
                    acc += s_data[k] * dense[s_indices[k]]
                total += coef[j] * transform(acc, z_sq[r], s_sq[j], gaussian, gamma, 1.0)
            out[r] = total
            for k in range(z_indptr[r], z_indptr[r + 1]):
                dense[z_indices[k]] = 0.0


@numba.njit(cache=True, parallel=True)
def binary_decision(z_bits, z_counts, s_bits, s_counts, coef, gaussian, table, out):
    """out[r] = sum_j coef[j] K(z_r, s_j) for binary rows stored as bit sets (see :func:`binary_row`)."""
    words = z_bits.shape[1]
    for r in numba.prange(z_bits.shape[0]):
        total = 0.0
        for j in range(s_bits.shape[0]):
            dot = 0
            for w in range(words):
                dot += popcount(z_bits[r, w] & s_bits[j, w])
            if gaussian:
                total += coef[j] * table[z_counts[r] + s_counts[j] - 2 * dot]
            else:
                total += coef[j] * dot
        out[r] = total


@numba.njit(cache=True, parallel=True)
def add_block(dots, z_sq, s_sq, coef, gaussian, gamma, scale2, out):
    """out[r] += sum_j coef[j] K from a block of inner products ``dots[r, j]`` (see :func:`transform`)."""
    m, nsv = dots.shape
    for r in numba.prange(m):
        total = 0.0
        for j in range(nsv):
            total += coef[j] * transform(dots[r, j], z_sq[r], s_sq[j], gaussian, gamma, scale2)
        out[r] += total


#: Support rows per tile of the block products (:data:`block_dots`; 12.5 KB of MNIST rows: they
#: stay in a core's L1 cache while its test rows are multiplied with them; a 2048 x 4096 block of
#: MNIST rows took 0.09 s of CPU time with tiles of 16, 8 or 32 rows, against 0.12 with 128).
DOT_TILE = 16


def _vnni_sweep(builder, fn, accs, ptrs, start, count, width):
    """``count`` steps of ``width`` bytes from ``start``: ``q``'s bytes (``ptrs[0]``) loaded and
    flipped (``^ 0x80``) once, then ``accs[i] = vpdpbusd(accs[i], b_i, q ^ 0x80)`` for each
    ``b_i`` (``ptrs[1:]``)."""
    bytes_ty = ir.VectorType(ir.IntType(8), width)
    words_ty = ir.VectorType(ir.IntType(32), width // 4)
    with cgutils.for_range(builder, count) as loop:
        offset = builder.add(start, builder.mul(loop.index, start.type(width)))

        def load(ptr):
            return builder.load(builder.bitcast(builder.gep(ptr, [offset]), bytes_ty.as_pointer()), align=1)
        signed = builder.bitcast(builder.xor(load(ptrs[0]), ir.Constant(bytes_ty, [0x80] * width)), words_ty)
        for acc, ptr in zip(accs, ptrs[1:]):
            builder.store(builder.call(fn, [builder.load(acc), builder.bitcast(load(ptr), words_ty), signed]), acc)


@intrinsic
def vnni_dots4(typingctx, q, b0, b1, b2, b3):
    """:func:`vnni_dot` of ``q`` with four vectors at once, ``sum_k b_i[k] (q[k] - 128)``: each
    64 bytes of ``q`` are loaded and flipped once for the four ``vpdpbusd`` (four independent
    accumulators, so that each waits less for the previous sum), then 16 bytes at a time.
    Exact as :func:`vnni_dot` is; typed for C-contiguous uint8 vectors of one length only."""
    if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.uint8
               for a in (q, b0, b1, b2, b3)):
        return None

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, a) for t, a in zip(signature.args, args)]
        ptrs = [a.data for a in arrays]
        n = builder.extract_value(arrays[0].shape, 0)
        i32 = ir.IntType(32)
        sums = []
        done = n.type(0)
        for lanes in (16, 4):
            vec = ir.VectorType(i32, lanes)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec] * 3),
                                                f"llvm.x86.avx512.vpdpbusd.{32 * lanes}")
            accs = [cgutils.alloca_once_value(builder, ir.Constant(vec, None)) for _ in range(4)]
            steps = builder.udiv(builder.sub(n, done), n.type(4 * lanes))
            _vnni_sweep(builder, fn, accs, ptrs, done, steps, 4 * lanes)
            done = builder.add(done, builder.mul(steps, n.type(4 * lanes)))
            reduce = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [vec]),
                                                    f"llvm.vector.reduce.add.v{lanes}i32")
            sums.append([builder.call(reduce, [builder.load(acc)]) for acc in accs])
        totals = [builder.add(wide, narrow) for wide, narrow in zip(*sums)]
        return context.make_tuple(builder, signature.return_type, totals)
    return types.UniTuple(types.int32, 4)(q, b0, b1, b2, b3), codegen


@numba.njit(cache=True, inline="always")
def _tail_dot(a, b, acc, full):
    """``acc`` plus the products of ``a`` and ``b`` from entry ``full`` on (int32)."""
    for k in range(full, a.shape[0]):
        acc = mac32(acc, a[k], b[k])
    return acc


@numba.njit(cache=True, parallel=True)
def int_block_dots_vnni(Q, part, Z, dots, chunks):
    """:func:`int_block_dots` by :func:`vnni_dots4`, four support rows with each test row (needs
    :data:`VNNI`): a test row is the flipped operand, and each support row's :func:`vnni_offset`
    is computed once per call."""
    m, nsv = Z.shape[0], part.shape[0]
    full = Z.shape[1] // 16 * 16
    offsets = np.empty(nsv, np.int32)
    for k in range(nsv):
        offsets[k] = vnni_offset(Q[part[k]])
    for c in numba.prange(chunks):
        lo, hi = chunk(c, chunks, m)
        for jb in range(0, nsv, DOT_TILE):
            je = min(nsv, jb + DOT_TILE)
            for r in range(lo, hi):
                z = Z[r]
                k = jb
                while k + 4 <= je:
                    s0, s1, s2, s3 = Q[part[k]], Q[part[k + 1]], Q[part[k + 2]], Q[part[k + 3]]
                    d0, d1, d2, d3 = vnni_dots4(z, s0, s1, s2, s3)
                    dots[r, k] = _tail_dot(z, s0, d0 + offsets[k], full)
                    dots[r, k + 1] = _tail_dot(z, s1, d1 + offsets[k + 1], full)
                    dots[r, k + 2] = _tail_dot(z, s2, d2 + offsets[k + 2], full)
                    dots[r, k + 3] = _tail_dot(z, s3, d3 + offsets[k + 3], full)
                    k += 4
                for j in range(k, je):
                    s = Q[part[j]]
                    dots[r, j] = _tail_dot(z, s, vnni_dot(z, s) + offsets[j], full)


@numba.njit(cache=True, parallel=True)
def int_block_dots(Q, part, Z, dots, chunks):
    """``dots[r, k] = <Z[r], Q[part[k]]>`` exactly (as float64) for uint8 rows, by :func:`int_dots`
    (any CPU), ``Z``'s rows split in ``chunks`` parts over numba's threads, each part taking the
    support rows :data:`DOT_TILE` at a time.

    The integers are those the blocked float64 products of the same rows give (every partial sum
    of those is an integer below 2^53), without converting either side to float64.
    """
    m, nsv = Z.shape[0], part.shape[0]
    for c in numba.prange(chunks):
        lo, hi = chunk(c, chunks, m)
        for jb in range(0, nsv, DOT_TILE):
            je = min(nsv, jb + DOT_TILE)
            for r in range(lo, hi):
                int_dots(Q, Z[r], part[jb:je], dots[r, jb:je])


#: The block products of measurement (decided once, at import, as :data:`row_dots`).
block_dots = int_block_dots_vnni if VNNI else int_block_dots


def run_threaded(threaded: Callable[..., Any], *args: Any) -> None:
    """Run a ``*_row_parallel`` loop over ``4 * numba.get_num_threads()`` chunks of ``idx``.

    Parameters
    ----------
    threaded : numba dispatcher
        A ``*_row_parallel`` wrapper.
    *args
        Its row loop's arguments.
    """
    threaded(*args, 4 * numba.get_num_threads())
