"""Compiled updates of the responses that the kernel solvers keep for every training point.

SBP, kernel Pegasos and SDCA keep ``c_j = y_j <w, Phi(x_j)>`` (SDCA: ``q = Q alpha``, the
same numbers) for all ``j``. Adding ``step y_i Phi(x_i)`` to ``w`` adds ``step y_i y_j
K(x_i, x_j)`` to every ``c_j``: one kernel row, one pass over ``n``. Callers pass ``step``
already multiplied by ``y_i``.

SBP's water level moves little between iterations, so its update pass also gathers the
responses near the last level (:func:`update_and_window`, with a bias one window per class,
:func:`update_and_class_windows`); the level is then found among those few
(:mod:`sbpbench.solvers.waterlevel`). The pass runs block by block: a vectorized loop updates
a block (computing it first when the row is a kernel's block source), counts and sums it and
tags the responses inside a window, and :func:`compact` appends the tagged ones to a buffer;
:func:`update_and_window_parallel` hands stretches of blocks to numba's threads. Whether a
response lies in a window follows no pattern, so a branch on it is mispredicted at almost
every response inside (on full Adult that made a separate gathering pass 0.16 ms instead of
0.024 ms); :func:`compact` has no such branch. With
LLVM 19 or later (llvmlite >= 0.44) it moves 8 responses at a time with
``llvm.experimental.vector.compress`` (one AVX-512 ``vcompresspd`` in a register, then a full
8-lane store), else one at a time.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic, overload

from sbpbench.kernels.loops import BIT_BLOCK, row_block

#: Responses per block of the fused passes (their arrays' blocks stay in L1 between the update and
#: compaction): the kernel's bit-set block, so that a block of a row can be computed in the pass.
BLOCK = BIT_BLOCK
#: Lanes moved at once by :func:`compact`.
LANES = 8
#: Whether LLVM has ``llvm.experimental.vector.compress`` (LLVM 19).
VECTOR_COMPRESS = llvm.llvm_version_info >= (19,)


def window_blocks(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The per-block arrays that :func:`update_and_window` fills for ``n`` responses: ``blocks``
    (int64, ``(2, ceil(n / BLOCK) + 1)``) and ``sums`` (float64, ``(2, ceil(n / BLOCK))``), zeros."""
    blocks = -(-n // BLOCK)
    return np.zeros((2, blocks + 1), np.int64), np.zeros((2, blocks))


#: Kernel evaluations a step of kernel Pegasos or SDCA spends in rows, about at most (:func:`step_rows`).
STEP_EVALS = 2**16


def step_rows(n: int) -> int:
    """The most kernel rows of ``n`` entries that one step (:meth:`~sbpbench.solvers.base.Solver._step`)
    of kernel Pegasos or SDCA starts: :data:`STEP_EVALS` ``// n``, at least 1 (a Pegasos iteration under
    way still takes the rows of all its violators).

    Those solvers take several rows per step, so that the per-step work of
    :meth:`~sbpbench.solvers.base.Solver.advance` (the limits, the clock) is not done at every row of
    a small problem; a step spends about :data:`STEP_EVALS` kernel evaluations at most (one row when
    ``n`` is above half of it), so that the clock is still read between rows of a large problem.
    """
    return max(1, STEP_EVALS // n)


@numba.njit(cache=True)
def add_row(c, y, row, step):
    """``c += step * y * row`` (``row = K(x_i, .)``, ``step`` including ``y_i``)."""
    for j in range(c.shape[0]):
        c[j] += step * y[j] * row[j]


@numba.njit(cache=True)
def add_row_and_sum(c, acc, y, row, step, weight):
    """``c += step * y * row`` and ``acc += weight * step * y * row`` in one pass (SBP's running sum)."""
    for j in range(c.shape[0]):
        v = step * y[j] * row[j]
        c[j] += v
        acc[j] += weight * v


@numba.njit(cache=True, inline="always")
def _update(c, acc, y, row, j, step, weight):
    """Entry ``j`` of :func:`add_row_and_sum` (its arithmetic), returning the new response."""
    v = step * y[j] * row[j]
    x = c[j] + v
    c[j] = x
    acc[j] += weight * v
    return x


@numba.njit(cache=True)
def compact_lanes_scalar(src, base, flags, start, dst, k):
    """:func:`compact_lanes` one lane at a time (without LLVM's vector compress, and as its reference).

    Every lane is stored, at the next free slot; only a flagged lane advances it.
    """
    moved = 0
    for lane in range(LANES):
        dst[k + moved] = base + start + lane if src is None else src[start + lane]
        moved += flags[start + lane] != 0
    return moved


@intrinsic
def _compact_lanes_vector(typingctx, src, base, flags, start, dst, k):
    """:func:`compact_lanes` as one vector compress and one unaligned 8-lane store (contiguous arrays only)."""
    if any(isinstance(a, types.Array) and a.layout != "C" for a in (src, flags, dst)):
        return None  # the lanes are read and written as consecutive elements
    sig = types.int64(src, base, flags, start, dst, k)

    def codegen(context, builder, signature, args):
        src_v, base_v, flags_v, start_v, dst_v, k_v = args
        src_t, _, flags_t, _, dst_t, _ = signature.args
        element = context.get_value_type(dst_t.dtype)
        lanes = ir.VectorType(element, LANES)
        i8, i32 = ir.IntType(8), ir.IntType(32)
        flag_lanes = ir.VectorType(i8, LANES)
        flag_array = context.make_array(flags_t)(context, builder, flags_v)
        loaded = builder.load(builder.bitcast(builder.gep(flag_array.data, [start_v]), flag_lanes.as_pointer()),
                              align=1)
        mask = builder.icmp_unsigned("!=", loaded, ir.Constant(flag_lanes, [0] * LANES))
        if isinstance(src_t, types.NoneType):  # the positions base + start + lane
            one = builder.insert_element(ir.Constant(lanes, ir.Undefined), builder.add(base_v, start_v),
                                         ir.Constant(i32, 0))
            first = builder.shuffle_vector(one, ir.Constant(lanes, ir.Undefined),
                                           ir.Constant(ir.VectorType(i32, LANES), [0] * LANES))
            values = builder.add(first, ir.Constant(lanes, list(range(LANES))))
        else:
            src_array = context.make_array(src_t)(context, builder, src_v)
            pointer = builder.bitcast(builder.gep(src_array.data, [start_v]), lanes.as_pointer())
            values = builder.load(pointer, align=context.get_abi_sizeof(element))
        suffix = "f64" if isinstance(element, ir.DoubleType) else f"i{element.width}"
        compress = cgutils.get_or_insert_function(builder.module, ir.FunctionType(lanes, [lanes, mask.type, lanes]),
                                                  f"llvm.experimental.vector.compress.v{LANES}{suffix}")
        packed = builder.call(compress, [values, mask, ir.Constant(lanes, ir.Undefined)])
        dst_array = context.make_array(dst_t)(context, builder, dst_v)
        builder.store(packed, builder.bitcast(builder.gep(dst_array.data, [k_v]), lanes.as_pointer()),
                      align=context.get_abi_sizeof(element))
        popcount = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i8, [i8]), "llvm.ctpop.i8")
        return builder.zext(builder.call(popcount, [builder.bitcast(mask, i8)]), ir.IntType(64))

    return sig, codegen


#: Appends the flagged ones of 8 lanes, ``src[start:start + 8]`` (``src`` None: the positions
#: ``base + start + lane``) where ``flags[start + lane] != 0``, in order, to ``dst[k:]``, and
#: returns how many. It writes all of ``dst[k:k + 8]``; what lies past the returned count is junk.
compact_lanes = _compact_lanes_vector if VECTOR_COMPRESS else compact_lanes_scalar


@numba.njit(cache=True)
def compact(src, base, flags, dst, k, limit):
    """Append the entries of ``src`` whose ``flags`` are nonzero to ``dst[k:]``, in order, without branches.

    Parameters
    ----------
    src : numpy.ndarray or None
        A block of values (C-contiguous); None appends the positions ``base + j`` instead.
    base : int
        The block's first position (used when ``src`` is None).
    flags : numpy.ndarray of uint8
        One flag per entry of the block.
    dst : numpy.ndarray
        Destination, of ``src``'s dtype (int64 for positions).
    k : int
        Entries already in ``dst``.
    limit : int
        ``dst[k:limit]`` may be written (8 lanes are stored at once while they fit).

    Returns
    -------
    int
        Entries in ``dst`` afterwards.
    """
    m = flags.shape[0]
    j = 0
    while j + LANES <= m and k + LANES <= limit:
        k += compact_lanes(src, base, flags, j, dst, k)
        j += LANES
    for t in range(j, m):  # the rest, one at a time
        if k < limit:
            dst[k] = base + t if src is None else src[t]
        k += flags[t] != 0
    return k


@numba.njit(cache=True, fastmath={"reassoc"})
def _window_block(c, acc, y, row, step, weight, low, high, buf, start, limit, b0, b1, flags, values, scratch):
    """Block ``[b0, b1)`` of :func:`update_and_window`, its gathered responses appended from
    ``buf[start]``, writing nothing from ``buf[limit]`` on: returns its count and sum below
    ``low``, where its gathered ones end, and their sum (the sums vectorized, in an order fixed
    by the block alone)."""
    cb = c[b0:b1]
    block_flags = flags[:b1 - b0]
    if row is not None:  # (numba drops the branch that the type of row rules out)
        ab, yb, rb = acc[b0:b1], y[b0:b1], row_block(row, b0, b1 - b0, values, scratch)
    below = 0
    covered = 0.0
    inside_sum = 0.0
    for j in range(cb.shape[0]):
        x = cb[j] if row is None else _update(cb, ab, yb, rb, j, step, weight)
        below += x < low
        covered += x if x < low else 0.0
        is_inside = (x >= low) & (x < high)
        inside_sum += x if is_inside else 0.0
        block_flags[j] = is_inside
    return below, covered, compact(cb, b0, block_flags, buf, start, limit), inside_sum


def _row_scratch(row):
    """The ``out`` and ``scratch`` arrays :func:`~sbpbench.kernels.loops.row_block` needs for ``row``
    (compiled code only): a block's worth for a block source; empty for an array or None, whose
    blocks are slices (on a small problem, where a pass is a fraction of a microsecond, the
    allocation showed)."""


@overload(_row_scratch)
def _row_scratch_overload(row):
    if isinstance(row, (types.Array, types.NoneType)):
        return lambda row: (np.empty(0), np.empty(0, np.uint32))
    return lambda row: (np.empty(BLOCK), np.empty(BIT_BLOCK, np.uint32))


@numba.njit(cache=True)
def _window_blocks(c, acc, y, row, step, weight, low, high, buf, blocks, sums, first, last):
    """Blocks ``first`` to ``last - 1`` of :func:`update_and_window`, one after another, gathering
    from ``buf[first * BLOCK]`` on (a stretch of ``buf`` no other stretch of blocks writes);
    returns where the gathered responses end."""
    flags = np.empty(BLOCK, np.uint8)
    values, scratch = _row_scratch(row)
    n = c.shape[0]
    start, limit = first * BLOCK, min(n, last * BLOCK)
    for b in range(first, last):
        b0 = b * BLOCK
        below, covered, end, inside_sum = _window_block(c, acc, y, row, step, weight, low, high, buf, start, limit,
                                                        b0, min(n, b0 + BLOCK), flags, values, scratch)
        blocks[0, b] = below
        blocks[1, b] = start
        sums[0, b] = covered
        sums[1, b] = inside_sum
        start = end
    return start


@numba.njit(cache=True)
def _join(buf, blocks, sums, bounds, ends):
    """Close the gaps between the stretches of gathered responses (stretch ``t``: blocks
    ``bounds[t]`` to ``bounds[t + 1] - 1``, ending at ``ends[t]``) and total the blocks' counts
    and sums in block order, whatever the stretches (so the totals do not depend on them)."""
    inside = 0
    for t in range(ends.shape[0]):
        first, last = bounds[t], bounds[t + 1]
        if first == last:
            continue
        start = blocks[1, first]
        shift = start - inside
        for k in range(start, ends[t]):
            buf[k - shift] = buf[k]
        for b in range(first, last):
            blocks[1, b] -= shift
        inside += ends[t] - start
    return _totals(blocks, sums, inside)


@numba.njit(cache=True)
def _totals(blocks, sums, inside):
    """The last column of ``blocks`` (0 and ``inside``), and the blocks' counts and sums totalled
    in block order: what :func:`update_and_window` returns."""
    nblocks = blocks.shape[1] - 1
    blocks[0, nblocks] = 0
    blocks[1, nblocks] = inside
    below = 0
    covered = 0.0
    inside_sum = 0.0
    for b in range(nblocks):
        below += blocks[0, b]
        covered += sums[0, b]
        inside_sum += sums[1, b]
    return below, covered, inside, inside_sum


@numba.njit(cache=True)
def update_and_window(c, acc, y, row, step, weight, low, high, buf, blocks, sums):
    """SBP's response update, and the responses in ``[low, high)`` gathered, in one pass.

    ``c += step * y * row`` and ``acc += weight * step * y * row`` (the arithmetic of
    :func:`add_row_and_sum`); with ``row`` None, ``c`` is only read. ``row`` is read a block
    at a time by :func:`~sbpbench.kernels.loops.row_block`, so it may also be a kernel's block
    source (:meth:`Kernel.row_blocks <sbpbench.kernels.kernel.Kernel.row_blocks>`): then each
    block of the row is computed here, just before its update. In the same loop the
    updated responses are counted and summed below ``low`` and inside ``[low, high)``, and
    those inside are appended to ``buf`` in index order. A block of :data:`BLOCK` responses
    at a time: each block's sums are vectorized, and the blocks' sums are added in block
    order, so that :func:`update_and_window_parallel`, which hands stretches of blocks to
    numba's threads, returns the same numbers bit for bit. Per block it also records how
    many responses lay below ``low`` and where its gathered ones start in ``buf``, which is
    what sampling below a level inside the window needs
    (:func:`~sbpbench.solvers.waterlevel.nth_below_gathered`).

    Parameters
    ----------
    c, acc, y : numpy.ndarray, shape (n,)
        Responses, their running sum, labels (``acc`` and ``y`` unused when ``row`` is None).
    row : numpy.ndarray, shape (n,), or tuple or None
        The kernel row, or its block source.
    step, weight : float
        As for :func:`add_row_and_sum`.
    low, high : float
        The window.
    buf : numpy.ndarray, shape (n,)
        Receives the responses inside the window, ``buf[:inside]``.
    blocks, sums : numpy.ndarray
        From :func:`window_blocks`. ``blocks`` receives, for block ``b``, the count below
        ``low`` (``blocks[0, b]``) and the position in ``buf`` of its first gathered response
        (``blocks[1, b]``); its last column holds 0 and ``inside``. ``sums`` receives each
        block's sums below ``low`` and inside.

    Returns
    -------
    tuple
        ``(below, covered, inside, inside_sum)``: count and sum below ``low``, and inside.
    """
    nblocks = blocks.shape[1] - 1
    end = _window_blocks(c, acc, y, row, step, weight, low, high, buf, blocks, sums, 0, nblocks)
    return _totals(blocks, sums, end)  # one stretch from 0: no gaps to close


@numba.njit(cache=True, parallel=True)
def update_and_window_parallel(c, acc, y, row, step, weight, low, high, buf, blocks, sums, threads):
    """:func:`update_and_window` with its blocks split into ``threads`` stretches over numba's
    threads: the same numbers, bit for bit (its docstring says why)."""
    nblocks = blocks.shape[1] - 1
    bounds = np.empty(threads + 1, np.int64)
    for t in range(threads + 1):
        bounds[t] = t * nblocks // threads
    ends = np.empty(threads, np.int64)
    for t in numba.prange(threads):
        ends[t] = _window_blocks(c, acc, y, row, step, weight, low, high, buf, blocks, sums, bounds[t],
                                 bounds[t + 1])
    return _join(buf, blocks, sums, bounds, ends)


@numba.njit(cache=True, fastmath={"reassoc"})
def update_and_class_windows(c, acc, y, row, step, weight, centers, width, npos, buf, where, flags, positions):
    """:func:`update_and_window` with a window per class (SBP with a bias), in one pass.

    Per class ``s`` (0: positives, ``y > 0``; 1: the others), with the window
    ``[centers[s] - width, centers[s] + width)``: the count and sum of its updated responses
    below the window, and those inside, appended in index
    order with their indices to ``buf``/``where``: the positives' from position 0, the
    negatives' from ``npos`` (the number of positives), so that neither runs into the other.
    Each block's indices inside a window are compacted into ``positions`` and then dealt to
    their class.

    The largest response below and the smallest above each window are not tracked (as
    min/max reductions they kept the loop from vectorizing, 0.17 ms instead of 0.07 ms on
    full Adult): :func:`~sbpbench.solvers.waterlevel.level_from_windows` needs them only
    when ``k*`` falls on a window's edge, which it reports as a miss.

    Parameters
    ----------
    c, acc, y, row, step, weight
        As for :func:`update_and_window` (``y`` also gives the classes).
    centers : numpy.ndarray, shape (2,)
        The windows' centres, positives' first.
    width : float
        Half-width of both windows.
    npos : int
        ``#{i : y_i > 0}``.
    buf, where : numpy.ndarray, shape (n,)
        Receive the gathered responses (float) and their indices (int64).
    flags : numpy.ndarray of uint8, shape (BLOCK,)
        Scratch.
    positions : numpy.ndarray of int64, shape (BLOCK,)
        Scratch.

    Returns
    -------
    tuple of numpy.ndarray, each of shape (2,)
        ``(below, inside, total)``: counts below and inside the windows, sum below.
    """
    n = c.shape[0]
    below = np.zeros(2, np.int64)
    total = np.zeros(2)
    k_pos, k_neg = 0, npos
    low_pos, low_neg = centers[0] - width, centers[1] - width
    high_pos, high_neg = centers[0] + width, centers[1] + width
    for b0 in range(0, n, BLOCK):
        b1 = min(n, b0 + BLOCK)
        cb, yb = c[b0:b1], y[b0:b1]
        block_flags = flags[:b1 - b0]
        if row is not None:  # (numba drops the branch that the type of row rules out)
            ab, rb = acc[b0:b1], row[b0:b1]
        count_pos = count_neg = 0
        sum_pos = sum_neg = 0.0
        for j in range(cb.shape[0]):
            x = cb[j] if row is None else _update(cb, ab, yb, rb, j, step, weight)
            positive = yb[j] > 0
            is_low = x < (low_pos if positive else low_neg)
            is_high = x >= (high_pos if positive else high_neg)
            low_p = is_low & positive
            low_n = is_low & (not positive)
            count_pos += low_p
            count_neg += low_n
            sum_pos += x if low_p else 0.0
            sum_neg += x if low_n else 0.0
            block_flags[j] = not (is_low | is_high)
        below[0] += count_pos
        below[1] += count_neg
        total[0] += sum_pos
        total[1] += sum_neg
        for t in range(compact(None, b0, block_flags, positions, 0, positions.shape[0])):
            i = positions[t]
            positive = y[i] > 0
            slot = k_pos if positive else k_neg  # branch-free: the class follows no pattern
            buf[slot] = c[i]
            where[slot] = i
            k_pos += positive
            k_neg += not positive
    return below, np.array([k_pos, k_neg - npos]), total
