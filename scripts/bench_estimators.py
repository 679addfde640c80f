"""Fit time of each estimator with its defaults against scikit-learn's SVC() on its bundled small data.

For digits (10 classes), breast-cancer, wine and iris, each scaled to [0, 1] by a MinMaxScaler
fitted on the whole set (outside the timing), this times ``fit`` of ``SVC()`` and of each
estimator of :mod:`sbpbench.estimators` with its defaults (``random_state=0`` where it draws),
all in this process: one untimed fit first (numba's compilation, or loading it from its disk
cache, is a process's first-fit cost, not a fit's), then the best of ``--repeats`` fits. The
ratio is the estimator's best time over SVC's best time in the same run; the target (issue 37)
is at most 3. The accuracy column is the score on a stratified quarter held out (seed 0).

Usage: ``python scripts/bench_estimators.py [--repeats 5] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_common import load_average, machine_facts, positive, update_section
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from sbpbench.estimators import ESTIMATORS

#: The bundled data sets, by name.
DATASETS: dict[str, Callable[..., Any]] = {"digits": load_digits, "breast_cancer": load_breast_cancer,
                                           "wine": load_wine, "iris": load_iris}
#: The section of BENCHMARKS.md this script writes.
TITLE = "Estimators against SVC() on small data (scripts/bench_estimators.py)"
#: The target: an estimator's fit at most this many times SVC()'s.
TARGET_RATIO = 3.0


def best_fit(make: Callable[[], Any], X: np.ndarray, y: np.ndarray, repeats: int) -> float:
    """Best wall-clock seconds of ``repeats`` fits of fresh ``make()`` on ``(X, y)``, after an untimed one."""
    make().fit(X, y)
    times = []
    for _ in range(repeats):
        estimator = make()
        start = time.perf_counter()
        estimator.fit(X, y)
        times.append(time.perf_counter() - start)
    return min(times)


def held_out_accuracy(make: Callable[[], Any], X: np.ndarray, y: np.ndarray) -> float:
    """Accuracy of ``make()`` trained on three quarters of ``(X, y)`` and scored on the rest (seed 0)."""
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    return float(make().fit(X_train, y_train).score(X_test, y_test))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive(int), default=5, help="timed fits per estimator")
    parser.add_argument("--out", default="BENCHMARKS.md", help="report to update")
    args = parser.parse_args()
    load_before = load_average()
    rows = []
    for name, load in DATASETS.items():
        X, y = load(return_X_y=True)
        X = MinMaxScaler().fit_transform(X)
        svc = best_fit(SVC, X, y, args.repeats)
        rows.append(f"| {name} | SVC | {svc * 1e3:.1f} | 1.0 | {held_out_accuracy(SVC, X, y):.1%} |")
        for cls in ESTIMATORS:
            def make(cls=cls):
                return cls(random_state=0) if cls.draws else cls()
            seconds = best_fit(make, X, y, args.repeats)
            rows.append(f"| {name} | {cls.__name__} | {seconds * 1e3:.1f} | {seconds / svc:.1f} | "
                        f"{held_out_accuracy(make, X, y):.1%} |")
            print(rows[-1], flush=True)
    load_after = load_average()
    lines = [f"Best of {args.repeats} warm fits with the defaults (one untimed fit first), against SVC() in the "
             f"same run; target: ratio at most {TARGET_RATIO:g}.",
             f"Load average (1 min) {load_before:.2f} before, {load_after:.2f} after.", "",
             "| data | estimator | fit (ms) | ratio to SVC | held-out accuracy |", "|---|---|---|---|---|", *rows]
    text = "\n".join(lines + ["", machine_facts()])
    print(text)
    update_section(args.out, TITLE, text)


if __name__ == "__main__":
    main()
