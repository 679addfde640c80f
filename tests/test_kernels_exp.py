"""The inlined ``exp`` of the kernel's row loops (sbpbench.kernels.exp) against the C library's."""

import platform
from decimal import Decimal, localcontext

import numba
import numpy as np
from llvmlite import binding

from sbpbench.kernels import exp, loops


def glibc_with_fma() -> bool:
    """Whether numba's ``np.exp`` is glibc's (2.28 or later) FMA variant, which exp_inline copies."""
    name, version = platform.libc_ver()
    if name != "glibc" or platform.machine() != "x86_64" or not version:
        return False
    return tuple(map(int, version.split(".")[:2])) >= (2, 28) and binding.get_host_cpu_features().get("fma", False)


@numba.njit
def library_exp(x, out):
    for k in range(x.shape[0]):
        out[k] = np.exp(x[k])


def arguments():
    rng = np.random.default_rng(5)
    edges = [0.0, -0.0, 5e-324, 1e-300, 2.0**-54, -(2.0**-54), 2.0**-55, np.nextafter(2.0**-54, 0), 511.999,
             -511.999, 512.0, -512.0, 709.78, 709.79, -745.1, -745.2, 1000.0, -1000.0, np.inf, -np.inf, np.nan]
    return np.concatenate([edges, rng.uniform(-800, 800, 200_000), -rng.uniform(0, 40, 200_000),
                           np.ldexp(rng.uniform(-1, 1, 200_000), rng.integers(-60, 12, 200_000))])


def test_table_is_glibcs():
    # __exp_data.tab[2:4] of glibc (k = 1): the low part T_1 and the shifted high part H_1
    assert exp.TABLE[:4].tolist() == [0, 0x3FF0000000000000, 0x3C9B3B4F1A88BF6E, 0x3FEFF63DA9FB3335]
    high = exp.TABLE[1::2] + (np.arange(128, dtype=np.uint64) << np.uint64(45))
    np.testing.assert_allclose(high.view(np.float64), 2.0 ** (np.arange(128) / 128), rtol=3e-16)


def test_table_is_its_definition_in_80_digit_decimal_arithmetic():
    """The table's integer arithmetic against the definition computed as it was before issue #48."""
    expected = np.empty(256, np.uint64)
    with localcontext() as ctx:
        ctx.prec = 80
        for k in range(128):
            value = Decimal(2) ** (Decimal(k) / 128)
            high = float(value)
            expected[2 * k] = exp._bits(float((value - Decimal(high)) / Decimal(high)))
            expected[2 * k + 1] = (exp._bits(high) - (k << 45)) % 2**64
    assert exp.exp_table().tolist() == expected.tolist()


def test_values_are_the_library_exp():
    x = arguments()
    ours, library = np.empty_like(x), np.empty_like(x)
    exp.exp_values(x, ours)
    library_exp(x, library)
    same = (ours.view(np.uint64) == library.view(np.uint64)) | (np.isnan(ours) & np.isnan(library))
    if glibc_with_fma():
        assert same.all(), x[~same][:5]
    else:  # another C library's exp: both within about half an ulp of exp(x)
        finite = np.isfinite(library) & (library > 0)
        assert np.all(np.abs(ours[finite] - library[finite]) <= 2 * np.spacing(library[finite]))
    assert not any(exp.in_range(v) for v in x[:4]) and exp.in_range(x[4]) and not exp.in_range(x[7])


def test_small_integer_rows_take_the_library_values():
    rng = np.random.default_rng(2)
    Q = rng.integers(0, 256, size=(700, 100), dtype=np.uint8)
    Q[3] = Q[0]  # a duplicate: exp(0) outside exp_inline's range, twice in row 0
    S = loops.int_squared_norms(Q)
    idx = np.arange(700)
    ours, reference = np.empty(700), np.empty(700)
    for gamma, scale2 in ((0.02, 65025.0), (2e-7, 1.0), (50.0, 65025.0)):
        loops.int_row(Q, S, Q[0], S[0], idx, True, gamma, scale2, ours)
        dots = Q.astype(np.int64) @ Q[0].astype(np.int64)
        exponents = -gamma * np.maximum((float(S[0]) + S.astype(np.float64) - 2.0 * dots) / scale2, 0.0)
        library_exp(exponents, reference)
        if glibc_with_fma():
            np.testing.assert_array_equal(ours, reference)
        else:
            np.testing.assert_allclose(ours, reference, rtol=3e-16, atol=0)
        assert ours[0] == ours[3] == 1.0
