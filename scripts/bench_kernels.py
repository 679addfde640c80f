"""Kernel rows per second against a memory-bandwidth bound and scikit-learn's rbf_kernel.

For Adult (sparse binary), Reuters (sparse real) and MNIST's test images (dense), all
measured in this process run:

* ``ours``: :meth:`sbpbench.kernels.Kernel.row` with the cache off, on random rows;
* ``bound``: the rows per second a pass over the same bytes allows, from a streaming read
  (``numpy`` sum) of the arrays a row computation reads;
* ``sklearn``: ``rbf_kernel(X[i:i+1], X)`` on the same rows.

Usage: ``python scripts/bench_kernels.py [--rows 300] [--out BENCHMARKS.md]``. Datasets come
through the registry (``sbpbench datasets fetch adult reuters mnist-t10k`` first, or a mirror).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from bench_common import machine_facts, update_section
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


def row_bytes(kernel: Kernel) -> int:
    """Bytes one full kernel row reads and writes (data, indices, row pointers, norms, output)."""
    X = kernel.X
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + kernel.sq.nbytes + 8 * kernel.n
    return X.nbytes + kernel.sq.nbytes + 8 * kernel.n


def stream_seconds(kernel: Kernel) -> float:
    """Time of a streaming read of the same bytes a row reads (the memory-bandwidth bound)."""
    X = kernel.X
    arrays = [X.data, X.indices, X.indptr, kernel.sq] if sp.issparse(X) else [X.ravel(), kernel.sq]
    out = np.empty(kernel.n)
    return best_of(lambda: ([a.sum() for a in arrays], out.fill(0.0)), repeats=7)


def bench(name: str, sigma2: float, storage: str, rows: int) -> dict:
    """Measure one dataset; returns a row of the report."""
    train, _ = load(DatasetSpec(name=name), np.random.default_rng(0))
    X = train.X.toarray() if storage == "dense" else train.X
    kernel = Kernel(X, KernelSpec("gaussian", sigma2, cache_mb=0))
    idx = np.random.default_rng(1).choice(kernel.n, size=rows, replace=False)
    kernel.row(int(idx[0]))  # compile outside the timing
    ours = best_of(lambda: [kernel.row(int(i)) for i in idx]) / rows
    gamma = 1.0 / (2.0 * sigma2)
    sk = best_of(lambda: [rbf_kernel(X[i : i + 1], X, gamma=gamma) for i in idx[: max(20, rows // 10)]], 2)
    sk /= max(20, rows // 10)
    stream = stream_seconds(kernel)
    nbytes = row_bytes(kernel)
    return {
        "dataset": f"{name} ({storage}, n={kernel.n}, d={kernel.d})",
        "row_ms": 1e3 * ours,
        "evals_per_s": kernel.n / ours,
        "bound_ms": 1e3 * stream,
        "bandwidth_GBps": nbytes / stream / 1e9,
        "fraction_of_bound": stream / ours,
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
        "Kernel rows (Gaussian, cache off), best of 3 passes over the same random rows; the bound is a",
        "streaming read of the bytes one row reads, timed in the same run.",
        "",
        "| dataset | row (ms) | kernel evals/s | bound (ms) | read GB/s | fraction of bound | sklearn rbf_kernel (ms) | speed-up vs sklearn |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {r['dataset']} | {r['row_ms']:.3f} | {r['evals_per_s']:.3g} | {r['bound_ms']:.3f} | "
                     f"{r['bandwidth_GBps']:.1f} | {r['fraction_of_bound']:.0%} | {r['sklearn_ms']:.3f} | "
                     f"{r['speedup_vs_sklearn']:.1f}x |")
    text = "\n".join(lines + ["", machine_facts()])
    print(text)
    update_section(args.out, "Kernel rows (scripts/bench_kernels.py)", text)


if __name__ == "__main__":
    main()
