"""Fit time and accuracy of each estimator with its defaults against scikit-learn's SVC() on its bundled small data.

The protocol of issue 37 and of ``tests/test_estimators.py``: on digits (10 classes) and
breast-cancer, 5-fold cross-validation (stratified, shuffled, seed 0) of a pipeline
``MinMaxScaler`` then the estimator with its defaults (``random_state=0`` where it draws), and
of ``SVC()``, all in this process. The fit time is the mean over the 5 folds of the pipeline's
fit, in wall and in CPU seconds of this process, each the best of ``--repeats`` cross-validations,
after one untimed cross-validation of the same estimator: numba's compilation, or loading it from its
disk cache (``cache=True``), is a process's first-fit cost, not a fit's, and is left out. The
ratio is the estimator's time over SVC()'s measured in the same run (target: at most
:data:`TARGET_RATIO`, held on CPU time: data this small run on one thread, as SVC() does, so on a
quiet machine CPU time is wall time, and it does not grow with a shared machine's load); the
accuracy gap is the estimator's mean 5-fold accuracy minus SVC()'s, in percentage points
(target: at least -1). On more than two classes (digits) each estimator
is measured with its default ``multi_class`` (held to the targets) and then with the other
scheme, for comparison. Timings on a shared machine move with its load,
which the report gives before and after.

Usage: ``python scripts/bench_estimators.py [--repeats 3] [--out BENCHMARKS.md]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from bench_common import load_average, machine_facts, positive, update_section
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from sbpbench.estimators import ESTIMATORS

#: The bundled data sets, by name.
DATASETS: dict[str, Callable[..., Any]] = {"digits": load_digits, "breast_cancer": load_breast_cancer}
#: The section of BENCHMARKS.md this script writes.
TITLE = "Estimators against SVC() on small data (scripts/bench_estimators.py)"
#: The targets: an estimator's fit at most this many times SVC()'s, its accuracy at most 1 point below.
TARGET_RATIO = 3.0
TARGET_GAP = -1.0
#: The folds of the tests' protocol.
FOLDS = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)


def cross_validated(make: Callable[[], Any], X: np.ndarray, y: np.ndarray, repeats: int) -> tuple[float, float, float]:
    """Mean fit seconds over the folds, wall and CPU (each the best of ``repeats``, after an
    untimed run), and the mean accuracy of ``make()``."""
    def once() -> tuple[float, float, float]:
        wall = cpu = correct = 0.0
        for train, test in FOLDS.split(X, y):
            model = make_pipeline(MinMaxScaler(), make())
            w0, c0 = time.perf_counter(), time.process_time()
            model.fit(X[train], y[train])
            wall, cpu = wall + time.perf_counter() - w0, cpu + time.process_time() - c0
            correct += float(model.score(X[test], y[test]))
        k = FOLDS.get_n_splits()
        return wall / k, cpu / k, correct / k
    once()
    runs = [once() for _ in range(repeats)]
    return min(run[0] for run in runs), min(run[1] for run in runs), runs[0][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive(int), default=3, help="timed cross-validations per estimator")
    parser.add_argument("--out", default="BENCHMARKS.md", help="report to update")
    args = parser.parse_args()
    load_before = load_average()
    rows = []
    for name, load in DATASETS.items():
        X, y = load(return_X_y=True)
        svc_wall, svc, svc_accuracy = cross_validated(SVC, X, y, args.repeats)
        rows.append(f"| {name} | SVC | {svc_wall * 1e3:.1f} | 1.0 | {svc * 1e3:.1f} | 1.0 | {svc_accuracy:.2%} "
                    "| 0.00 | - |")
        print(rows[-1], flush=True)
        multi = np.unique(y).size > 2
        for cls in ESTIMATORS:
            # more than two classes: the default scheme (held to the targets), then the other one
            schemes = [cls.default_multi_class] + [s for s in ("ovo", "ovr") if multi and s != cls.default_multi_class]
            for scheme in schemes:
                def make(cls=cls, scheme=scheme):
                    return cls(multi_class=scheme, **({"random_state": 0} if cls.draws else {}))
                wall, seconds, accuracy = cross_validated(make, X, y, args.repeats)
                gap = 100.0 * (accuracy - svc_accuracy)
                met = "yes" if seconds / svc <= TARGET_RATIO and gap >= TARGET_GAP else "no"
                label = f"{cls.__name__} {scheme}" if multi else cls.__name__
                rows.append(f"| {name} | {label} | {wall * 1e3:.1f} | {wall / svc_wall:.1f} | {seconds * 1e3:.1f} | "
                            f"{seconds / svc:.1f} | {accuracy:.2%} | "
                            f"{gap:+.2f} | {met if scheme == cls.default_multi_class else '(not the default)'} |")
                print(rows[-1], flush=True)
    load_after = load_average()
    lines = [f"Mean fit time over 5 folds (stratified, shuffled, seed 0) of MinMaxScaler + the estimator with its "
             f"defaults, best of {args.repeats} cross-validations after an untimed one (numba's compilation left "
             f"out), against SVC() in the same run; {numba.get_num_threads()} numba threads. Targets: ratio at most "
             f"{TARGET_RATIO:g}, accuracy gap at least {TARGET_GAP:g} point. On the 10 digits each estimator's default "
             "scheme (multi_class, held to the targets), then the other one; SVC() trains one-vs-one. "
             "The target is held on the CPU-time ratio: on data this small every estimator runs on one thread, as "
             "SVC() does, so on a quiet machine its CPU time is its wall time, and the CPU time does not grow "
             "with the load of a shared machine as the wall time does (both are given).",
             f"Load average (1 min) {load_before:.2f} before, {load_after:.2f} after.", "",
             "| data | estimator | fit, wall (ms) | ratio to SVC | fit, CPU (ms) | ratio to SVC | 5-fold accuracy | "
             "gap (points) | targets met |",
             "|---|---|---|---|---|---|---|---|---|", *rows]
    text = "\n".join(lines + ["", machine_facts()])
    print(text)
    update_section(args.out, TITLE, text)


if __name__ == "__main__":
    main()
