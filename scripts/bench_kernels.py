"""Kernel rows per second against a memory-bandwidth bound and scikit-learn's rbf_kernel.

For Adult (sparse binary), Reuters (sparse real) and MNIST's test images (dense), all
measured in this process run:

* ``ours``: :meth:`sbpbench.kernels.Kernel.row` with the cache off, on random rows, on one
  numba thread and on all of them;
* ``bound``: the time one pass over the bytes a row must read allows: a streaming read
  (``numpy`` sum, one thread) of the arrays the row computation reads in the kernel's own
  storage (CSR data, indices and row pointers, or the dense matrix, or the bit sets and
  feature counts of binary data; with the squared norms) plus writing the row. It is
  compared with our row on one thread (a row streams the same bytes once), so
  ``fraction of bound`` = bound time / our one-thread row time;
* ``sklearn``: ``rbf_kernel(X[i:i+1], X)`` on the same rows (its BLAS may use every core).

Usage: ``python scripts/bench_kernels.py [--rows 300] [--out BENCHMARKS.md]``. Datasets come
through the registry (``sbpbench datasets fetch adult reuters mnist-t10k`` first, or a mirror).
"""

from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from bench_common import load_average, machine_facts, update_section
from sbpbench.data import DatasetSpec, load
from sbpbench.kernels import Kernel, KernelSpec

#: (dataset, sigma^2 of the SBP paper's Table 2, storage)
CASES = [("adult", 10.0, "sparse"), ("reuters", 0.5, "sparse"), ("mnist-t10k", 25.0, "dense")]


def best_of(fn, repeats: int = 3) -> float:
    """Smallest wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def row_arrays(kernel: Kernel) -> list[np.ndarray]:
    """The arrays one full kernel row reads, in the kernel's own storage."""
    X = kernel.X
    if kernel._binary:
        return [kernel._bits, kernel._bin_counts]
    if sp.issparse(X):
        return [X.data, X.indices, X.indptr, kernel.sq]
    return [X.ravel(), kernel.sq]


def stream_seconds(kernel: Kernel) -> float:
    """Time of a streaming read of the bytes a row reads and of writing a row (the bound)."""
    arrays = row_arrays(kernel)
    out = np.empty(kernel.n)
    return best_of(lambda: ([a.sum() for a in arrays], out.fill(0.0)), repeats=7)


def bench(name: str, sigma2: float, storage: str, rows: int) -> dict:
    """Measure one dataset; returns a row of the report."""
    train, _ = load(DatasetSpec(name=name), np.random.default_rng(0))
    X = train.X.toarray() if storage == "dense" else train.X
    kernel = Kernel(X, KernelSpec("gaussian", sigma2, cache_mb=0))
    idx = np.random.default_rng(1).choice(kernel.n, size=rows, replace=False)
    kernel.row(int(idx[0]))  # compile outside the timing
    parallel = kernel._row_parallel
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    kernel._row_parallel = False
    try:
        one = best_of(lambda: [kernel.row(int(i)) for i in idx]) / rows
    finally:
        numba.set_num_threads(threads)
        kernel._row_parallel = parallel
    kernel._row_parallel = True
    kernel.row(int(idx[0]))
    try:
        every = best_of(lambda: [kernel.row(int(i)) for i in idx]) / rows
    finally:
        kernel._row_parallel = parallel
    gamma = 1.0 / (2.0 * sigma2)
    sk = best_of(lambda: [rbf_kernel(X[i : i + 1], X, gamma=gamma) for i in idx[: max(20, rows // 10)]], 2)
    sk /= max(20, rows // 10)
    stream = stream_seconds(kernel)
    nbytes = sum(a.nbytes for a in row_arrays(kernel)) + 8 * kernel.n
    ours = min(one, every)
    return {
        "dataset": f"{name} ({'binary bit sets' if kernel._binary else storage}, n={kernel.n}, d={kernel.d})",
        "row_ms": 1e3 * one,
        "row_all_ms": 1e3 * every,
        "evals_per_s": kernel.n / ours,
        "bound_ms": 1e3 * stream,
        "bandwidth_GBps": nbytes / stream / 1e9,
        "fraction_of_bound": stream / one,
        "sklearn_ms": 1e3 * sk,
        "speedup_vs_sklearn": sk / ours,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300, help="kernel rows timed per dataset")
    parser.add_argument("--out", default="BENCHMARKS.md", help="report to update")
    args = parser.parse_args()
    results = [bench(name, s2, storage, args.rows) for name, s2, storage in CASES]
    lines = [
        "Kernel rows (Gaussian, cache off), best of 3 passes over the same random rows. The bound is a",
        "one-thread streaming read of the bytes one row reads in the kernel's storage plus writing the row,",
        f"timed in the same run; fraction of bound = bound / our one-thread row. {numba.get_num_threads()} numba threads;",
        f"load average (1 min) {load_average():.2f} on {os.cpu_count()} cores.",
        "",
        "| dataset | row, 1 thread (ms) | row, all threads (ms) | kernel evals/s | bound (ms) | read GB/s | fraction of bound | sklearn rbf_kernel (ms) | speed-up vs sklearn |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {r['dataset']} | {r['row_ms']:.3f} | {r['row_all_ms']:.3f} | {r['evals_per_s']:.3g} | {r['bound_ms']:.3f} | "
                     f"{r['bandwidth_GBps']:.1f} | {r['fraction_of_bound']:.0%} | {r['sklearn_ms']:.3f} | "
                     f"{r['speedup_vs_sklearn']:.1f}x |")
    text = "\n".join(lines + ["", machine_facts()])
    print(text)
    update_section(args.out, "Kernel rows (scripts/bench_kernels.py)", text)


if __name__ == "__main__":
    main()
