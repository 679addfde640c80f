"""``exp`` for the kernel's row loops, inlined so that a row's values need no library call each.

:func:`exp_inline` is the algorithm of glibc's ``exp`` (glibc 2.28 and later, from Arm's
optimized-routines: ``exp(x) = 2^(k/N) exp(r)`` with ``N = 128``, a table of ``2^(k/N)`` and
a degree-5 polynomial for ``exp(r)``), operation for operation as glibc's FMA variant (the
one x86-64 CPUs with FMA run) computes it, so that on such a machine it returns what
``np.exp`` in numba (the C library's ``exp``) returns, to the last bit; its error is below
0.51 ulp. It covers ``2^-54 <= |x| < 512`` (:func:`in_range`); :func:`exp_values` hands other
arguments to ``np.exp``. The table is computed here from its definition (``H_k = 2^(k/N)``
rounded to a double, ``T_k = (2^(k/N) - H_k) / H_k`` rounded) in integer arithmetic, ``2^(k/N)``
to :data:`TABLE_PRECISION` bits (a millisecond, against some 20 ms in 80-digit decimal arithmetic,
which ``tests/test_kernels_exp.py`` checks it against).

Why: a full MNIST row (60000 values) spent 0.26 of its 2.1 ms on one thread calling ``exp``;
the inlined loop vectorizes.
"""

from __future__ import annotations

import struct
from math import isqrt

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

#: Table bits: ``N = 2^TABLE_BITS`` entries.
TABLE_BITS = 7
_N = 1 << TABLE_BITS
#: Fraction bits of the fixed-point ``2^(k/N)`` the table is rounded from: ``2^(1/N)`` is exact to
#: the last of them and each power loses a few units of the last, so ``2^(k/N)`` is within some
#: ``2^-246`` of itself, some 140 bits below the last bit ``T_k`` keeps.
TABLE_PRECISION = 256
INV_LN2_N = float.fromhex("0x1.71547652b82fep0") * _N
NEG_LN2_HI_N = float.fromhex("-0x1.62e42fefa0000p-8")
NEG_LN2_LO_N = float.fromhex("-0x1.cf79abc9e3b3ap-47")
SHIFT = float.fromhex("0x1.8p52")
SMALLEST = 2.0**-54
C2, C3, C4, C5 = (float.fromhex(c) for c in ("0x1.ffffffffffdbdp-2", "0x1.555555555543cp-3",
                                              "0x1.55555cf172b91p-5", "0x1.1111167a4d017p-7"))


def _bits(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def exp_table() -> np.ndarray:
    """glibc's ``__exp_data.tab``: ``tab[2k] = bits(T_k)``, ``tab[2k + 1] = bits(H_k) - (k << 45)``
    (``2^(k/N) ~ H_k (1 + T_k)``; the shift removes ``k/N`` from the exponent, which the scale
    gets back from the rounded ``x N / ln 2``).

    ``2^(k/N)`` is the integer ``power / 2^P`` (``P`` = :data:`TABLE_PRECISION`): ``2^(1/N)`` is the
    ``N``-th root of ``2^(1 + N P)`` by ``TABLE_BITS`` integer square roots, rounded down (each
    ``isqrt`` of a rounded-down square root is the rounded-down root), and its powers are
    products rounded down; every quotient of integers is rounded once to a double, as Python
    divides integers."""
    one = 1 << TABLE_PRECISION
    root = 2 << (_N * TABLE_PRECISION)
    for _ in range(TABLE_BITS):
        root = isqrt(root)
    tab = np.empty(2 * _N, np.uint64)
    power = one
    for k in range(_N):
        high = power / one
        num, den = high.as_integer_ratio()
        tab[2 * k] = _bits((power * den - num * one) / (num * one))
        tab[2 * k + 1] = (_bits(high) - (k << (52 - TABLE_BITS))) % 2**64
        power = power * root >> TABLE_PRECISION
    return tab


TABLE = exp_table()


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (``llvm.fma``: one instruction where the CPU has FMA)."""
    def codegen(context, builder, signature, args):
        double = ir.DoubleType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(double, [double] * 3), "llvm.fma.f64")
        return builder.call(fn, args)
    return types.float64(types.float64, types.float64, types.float64), codegen


@intrinsic
def as_bits(typingctx, x):
    """The bits of a float64 as a uint64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@intrinsic
def as_double(typingctx, u):
    """The float64 with the bits of a uint64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.uint64), codegen


@numba.njit(cache=True, inline="always")
def in_range(x):
    """Whether :func:`exp_inline` covers ``x``: ``2^-54 <= |x| < 512`` (glibc's fast path, which
    tests the same by the exponent bits; false for NaN)."""
    return SMALLEST <= abs(x) < 512.0


@numba.njit(cache=True, inline="always")
def exp_inline(x, table):
    """``exp(x)`` for ``x`` with :func:`in_range` (a number, not to be used, otherwise); ``table``
    is :data:`TABLE`."""
    z = fma(x, INV_LN2_N, SHIFT)  # k + SHIFT, k = round(x N / ln 2), in the low bits of z
    ki = as_bits(z)
    kd = z - SHIFT
    r = fma(kd, NEG_LN2_LO_N, fma(kd, NEG_LN2_HI_N, x))  # x - k ln2 / N
    j = np.intp(ki & np.uint64(_N - 1))
    tail = as_double(table[2 * j])
    scale = as_double(table[2 * j + 1] + (ki << np.uint64(52 - TABLE_BITS)))
    r2 = r * r
    tmp = fma(r2 * r2, fma(r, C5, C4), fma(fma(r, C3, C2), r2, tail + r))
    return fma(scale, tmp, scale)


#: Arguments scanned at once for ones :func:`exp_inline` does not cover.
FIX_BLOCK = 256


@numba.njit(cache=True)
def exp_values(x, out):
    """``out[k] = exp(x[k])``: :func:`exp_inline` in one vectorized pass, then ``np.exp`` for the
    arguments it does not cover (on a row of Gaussian values, its own point's ``exp(0)``),
    looked for in blocks of :data:`FIX_BLOCK` (LLVM computes a call in a loop's branch for every
    element, so the branch runs in the few blocks that need it only)."""
    table = TABLE
    n = x.shape[0]
    for k in range(n):
        out[k] = exp_inline(x[k], table)
    for lo in range(0, n, FIX_BLOCK):
        hi = min(n, lo + FIX_BLOCK)
        outside = 0
        for k in range(lo, hi):
            outside += not in_range(x[k])
        if outside:
            for k in range(lo, hi):
                if not in_range(x[k]):
                    out[k] = np.exp(x[k])
