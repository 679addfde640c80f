"""Write scikit-learn's breast-cancer data as two LIBSVM files, as a user's own data would come.

``python examples/breast_cancer_files.py [FOLDER]`` writes ``breast-cancer.train.svm`` (400
examples) and ``breast-cancer.test.svm`` (the other 169) into FOLDER (default: this file's
folder), split at random with seed 0, features as they are (not scaled), labels 0 (malignant)
and 1 (benign), feature indices from 1 as LIBSVM's. ``examples/side-by-side.yaml`` reads them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import dump_svmlight_file, load_breast_cancer

#: Training examples; the rest are the test file's.
N_TRAIN = 400


def write(folder: Path) -> tuple[Path, Path]:
    """Write the two files into ``folder`` (created if needed) and return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(y.size)
    paths = folder / "breast-cancer.train.svm", folder / "breast-cancer.test.svm"
    for path, rows in zip(paths, (order[:N_TRAIN], order[N_TRAIN:])):
        dump_svmlight_file(X[rows], y[rows], str(path), zero_based=False)
    return paths


if __name__ == "__main__":
    for written in write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent):
        print(written)
