"""Kernel rows per second against a memory-bandwidth bound and scikit-learn's rbf_kernel.

For Adult (sparse binary), Reuters (sparse real), MNIST's test images (given dense) and full
MNIST (60000 rows, given as CSR; once in the storage the kernel chooses, small integers, and
once forced onto today's general float64 CSR path), all measured in this process run:

* ``ours``: the kernel's storage computing full rows (what :meth:`sbpbench.kernels.Kernel.row`
  runs with the cache off, without its counting), on random rows, on one numba thread and
  on all of them (``Kernel.row`` picks whichever is faster at the moment);
* ``bound``: the time one pass over the bytes a row must read allows: a streaming read
  (``numpy`` sum of the bytes as 64-bit words, one thread) of the arrays the row computation
  reads in the kernel's own storage (CSR data, indices and row pointers, or the dense
  matrix, or the bit sets and feature counts of binary data, or the uint8 integers of
  small-integer data; with the squared norms) plus writing the row, or its share a row reads
  where a full row reads only some feature groups of the small integers (:func:`read_share`). It is compared with our
  row on one thread (a row streams the same bytes once), so ``fraction of bound`` = bound
  time / our one-thread row time; for full MNIST also on all threads, against the same read
  split over numba's threads;
* ``sklearn``: ``rbf_kernel(X[i:i+1], X)`` on the same rows (its BLAS may use every core).

Usage: ``python scripts/bench_kernels.py [--rows 300] [--out BENCHMARKS.md]``. Datasets come
through the registry (``sbpbench datasets fetch adult reuters mnist mnist-t10k`` first, or a
mirror).
"""

from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np
from bench_common import load_average, machine_facts, positive, update_section, update_target
from sklearn.metrics.pairwise import rbf_kernel

from sbpbench.data import DatasetSpec, load
from sbpbench.kernels import Kernel, KernelSpec, loops

#: (dataset, sigma^2 of the SBP paper's Table 2, format given to the kernel, Kernel storage)
CASES = [("adult", 10.0, "sparse", "auto"), ("reuters", 0.5, "sparse", "auto"),
         ("mnist-t10k", 25.0, "dense", "auto"), ("mnist", 25.0, "sparse", "auto"),
         ("mnist", 25.0, "sparse", "float64")]
#: Targets for full MNIST's chosen storage (issue #11): row time on all threads (ms), speed-up
#: over the float64 CSR path measured in the same run, fraction of the bandwidth bound.
MNIST_TARGETS = (4.0, 4.0, 0.70)


def best_of(fn, repeats: int = 3) -> float:
    """Smallest wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def as_words(a: np.ndarray) -> np.ndarray:
    """The bytes of a contiguous array as 64-bit words (a tail of under 8 bytes left out), so
    that summing them is a streaming read whatever the dtype (no widening of small integers)."""
    raw = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    return raw[: raw.size - raw.size % 8].view(np.uint64)


def read_share(kernel: Kernel) -> float:
    """The share of the bytes of the storage's :attr:`row_arrays
    <sbpbench.kernels.storage.Storage.row_arrays>` a full row reads: 1, but where a small-integer
    storage holds the feature-major copy (:class:`~sbpbench.kernels.storage.SmallIntegers`), which
    a full row reads only in its point's nonzero feature groups, the mean share of groups a row
    has nonzero. The bound is that share of a streaming pass over the whole arrays (larger than
    the last-level cache on full MNIST, so read from memory; the squared norms and the row's
    write, some 2% of it, scaled alike)."""
    store = kernel.store
    packed = getattr(store, "packed", None)
    if packed is None:
        return 1.0
    return float(loops.group_counts(store.stored).mean()) / packed.shape[0]


def stream_seconds(kernel: Kernel, write_row: bool = True) -> float:
    """Time of a streaming read of the bytes a row reads and of writing a row (the bound; only
    the read with ``write_row`` False)."""
    arrays = [as_words(a) for a in kernel.store.row_arrays]
    out = np.empty(kernel.n if write_row else 0)
    return read_share(kernel) * best_of(lambda: ([a.sum() for a in arrays], out.fill(0.0)), repeats=7)


@numba.njit(parallel=True)
def _parallel_stream(words, out, chunks):
    """Sum ``words`` and zero ``out``, both split into ``chunks`` pieces over numba's threads."""
    parts = np.empty(chunks, np.uint64)
    for c in numba.prange(chunks):
        parts[c] = words[c * words.size // chunks:(c + 1) * words.size // chunks].sum()
        out[c * out.size // chunks:(c + 1) * out.size // chunks] = 0.0
    return parts.sum()


def parallel_stream_seconds(kernel: Kernel, write_row: bool = True) -> float:
    """The bound of :func:`stream_seconds` with the read split over all numba threads (no
    slower than the one-thread read, which all threads could do too: on a loaded machine a
    parallel region can wait for a descheduled thread)."""
    arrays = [as_words(a) for a in kernel.store.row_arrays]
    out = np.empty(kernel.n if write_row else 0)
    chunks = 4 * numba.get_num_threads()
    passes = best_of(lambda: [_parallel_stream(a, out if k == 0 else out[:0], chunks) for k, a in enumerate(arrays)],
                     repeats=7)
    parallel = read_share(kernel) * passes
    return min(parallel, stream_seconds(kernel, write_row))


def drop_rows(kernel: Kernel, idx: np.ndarray, parallel: bool) -> None:
    """Kernel rows ``idx`` from the kernel's storage, forced on one thread or split over numba's
    (the kernel itself picks whichever is faster at the moment), each dropped before the next,
    as a solver without a row cache drops them (kept, every row would be new memory: page
    faults, not the row, would be timed)."""
    store = kernel.store
    for i in idx:
        store.rows(int(i), store.all_rows, np.empty(kernel.n), parallel)


def bench(name: str, sigma2: float, given: str, storage: str, rows: int) -> dict:
    """Measure one dataset given ``dense`` or ``sparse`` on Kernel ``storage``; a row of the report."""
    train, _ = load(DatasetSpec(name=name), np.random.default_rng(0))
    X = train.X.toarray() if given == "dense" else train.X
    kernel = Kernel(X, KernelSpec("gaussian", sigma2, cache_mb=0), storage=storage)
    idx = np.random.default_rng(1).choice(kernel.n, size=rows, replace=False)
    drop_rows(kernel, idx[:1], True)  # compile outside the timing
    drop_rows(kernel, idx[:1], False)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = best_of(lambda: drop_rows(kernel, idx, False)) / rows
    finally:
        numba.set_num_threads(threads)
    every = best_of(lambda: drop_rows(kernel, idx, True)) / rows
    gamma = 1.0 / (2.0 * sigma2)
    sk = best_of(lambda: [rbf_kernel(X[i : i + 1], X, gamma=gamma) for i in idx[: max(20, rows // 10)]], 2)
    sk /= max(20, rows // 10)
    stream = stream_seconds(kernel)
    stream_all = parallel_stream_seconds(kernel) if name == "mnist" else float("nan")
    nbytes = read_share(kernel) * (sum(a.nbytes for a in kernel.store.row_arrays) + 8 * kernel.n)
    ours = min(one, every)
    forced = storage != "auto"
    return {
        "name": name,
        "forced": forced,
        "storage": kernel.storage,
        "dataset": f"{name} ({kernel.storage}{', forced' if forced else ''}, n={kernel.n}, d={kernel.d})",
        "row_ms": 1e3 * one,
        "row_all_ms": 1e3 * every,
        "evals_per_s": kernel.n / ours,
        "bound_ms": 1e3 * stream,
        "bandwidth_GBps": nbytes / stream / 1e9,
        "fraction_of_bound": stream / one,
        "bound_all_ms": 1e3 * stream_all,
        "fraction_of_bound_all": stream_all / every,
        "sklearn_ms": 1e3 * sk,
        "speedup_vs_sklearn": sk / ours,
    }


def mnist_verdict(results: list[dict]) -> str:
    """Full MNIST's chosen storage against the float64 CSR path of the same run and the targets.

    The speed-up divides the float64 path's better time (one thread or all) by our row on all
    threads, so a float64 row slowed down by its parallel region does not flatter the ratio.
    The bound target is judged on all threads (the row on 2 cores against the read split over
    them); the one-thread fraction is reported beside it.
    """
    mnist = {r["forced"]: r for r in results if r["name"] == "mnist"}
    chosen, general = mnist[False], mnist[True]
    threads = numba.get_num_threads()
    ms, fraction = chosen["row_all_ms"], chosen["fraction_of_bound_all"]
    general_ms = min(general["row_ms"], general["row_all_ms"])
    speedup = general_ms / ms
    max_ms, min_speedup, min_fraction = MNIST_TARGETS
    verdicts = [f"{ms:.2f} <= {max_ms:g} ms: {'meets' if ms <= max_ms else 'misses'}",
                f"{speedup:.1f}x >= {min_speedup:g}x: {'meets' if speedup >= min_speedup else 'misses'}",
                f"{fraction:.0%} >= {min_fraction:.0%} of the bound: "
                f"{'meets' if fraction >= min_fraction else 'misses'}"]
    return (f"Full MNIST ({chosen['storage']}): a row takes {ms:.2f} ms on {threads} threads, "
            f"{fraction:.0%} of the bound of its storage read on {threads} threads ({chosen['bound_all_ms']:.2f} ms), "
            f"and {chosen['row_ms']:.2f} ms on one, {chosen['fraction_of_bound']:.0%} of the one-thread bound; "
            f"the float64 CSR path, measured in this run, takes {general['row_all_ms']:.2f} ms on {threads} threads "
            f"and {general['row_ms']:.2f} ms on one, so ours is {speedup:.1f}x its better time. "
            f"Targets (issue #11): " + "; ".join(verdicts) + ".")


def mnist_row_target(results: list[dict], load: float) -> tuple[str, bool]:
    """Issue #28's target row for full MNIST's chosen storage: the fraction of the bound on all
    threads (judged, as in :func:`mnist_verdict`) and on one thread, with the load average."""
    chosen = next(r for r in results if r["name"] == "mnist" and not r["forced"])
    fraction = chosen["fraction_of_bound_all"]
    measured = (f"{fraction:.0%} on {numba.get_num_threads()} threads ({chosen['row_all_ms']:.2f} ms against "
                f"{chosen['bound_all_ms']:.2f} ms), {chosen['fraction_of_bound']:.0%} on one "
                f"({chosen['row_ms']:.2f} ms against {chosen['bound_ms']:.2f} ms); load {load:.2f}")
    return measured, fraction >= MNIST_TARGETS[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=positive(int), default=300, help="kernel rows timed per dataset")
    parser.add_argument("--out", default="BENCHMARKS.md", help="report to update")
    args = parser.parse_args()
    load_before = load_average()
    results = [bench(name, s2, given, storage, args.rows) for name, s2, given, storage in CASES]
    load_after = load_average()
    lines = [
        "Kernel rows (Gaussian, cache off), best of 3 passes over the same random rows. The bound is a",
        "one-thread streaming read of the bytes one row reads in the kernel's storage plus writing the row (a full",
        "small-integer row with the feature-group copy: the mean share of groups a row has nonzero),",
        "timed in the same run; fraction of bound = bound / our one-thread row. "
        f"{numba.get_num_threads()} numba threads;",
        f"load average (1 min) {load_before:.2f} before, {load_after:.2f} after on {os.cpu_count()} cores.",
        "",
        "| dataset | row, 1 thread (ms) | row, all threads (ms) | kernel evals/s | bound (ms) | read GB/s "
        "| fraction of bound | sklearn rbf_kernel (ms) | speed-up vs sklearn |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {r['dataset']} | {r['row_ms']:.3f} | {r['row_all_ms']:.3f} | {r['evals_per_s']:.3g} | "
                     f"{r['bound_ms']:.3f} | "
                     f"{r['bandwidth_GBps']:.1f} | {r['fraction_of_bound']:.0%} | {r['sklearn_ms']:.3f} | "
                     f"{r['speedup_vs_sklearn']:.1f}x |")
    text = "\n".join(lines + ["", mnist_verdict(results), "", machine_facts()])
    print(text)
    update_section(args.out, "Kernel rows (scripts/bench_kernels.py)", text)
    update_target(args.out, "mnist-row", *mnist_row_target(results, max(load_before, load_after)))


if __name__ == "__main__":
    main()
