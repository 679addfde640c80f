"""Forest cover type (UCI Covertype, Blackard & Dean): class 1 (Spruce/Fir) against the rest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from sbpbench.data.convert import open_data
from sbpbench.data.fetch import Digest, RemoteFile
from sbpbench.data.registry import Arrays, Dataset, register
from sbpbench.errors import UserError

COVTYPE = RemoteFile(
    "covtype.data.gz",
    ("https://archive.ics.uci.edu/ml/machine-learning-databases/covtype/covtype.data.gz",
     "https://ndownloader.figshare.com/files/5976039"),
    (Digest("sha256", "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",
            source="scikit-learn's pinned checksum of its figshare mirror"),))
#: Training rows: the first of the file (the SBP paper's sizes); the other 58102 are the test set.
FOREST_TRAIN = 522910


def covtype_split(path: Path, positive: int) -> Arrays:
    """UCI ``covtype.data(.gz)``: its 54 features as they are, +1 for class ``positive``."""
    import pandas as pd  # here: `sbpbench --help` starts without pandas

    try:
        with open_data(path) as fh:
            table = pd.read_csv(fh, header=None, dtype=np.float64).to_numpy()
    except (OSError, EOFError, ValueError, pd.errors.ParserError) as exc:
        raise UserError(f"{path}: cannot read the Covertype CSV ({exc})") from None
    if table.shape[1] != 55:
        raise UserError(f"{path}: expected 55 columns (54 features and the class), got {table.shape[1]}")
    return sp.csr_matrix(table[:, :54]), np.where(table[:, 54] == positive, 1.0, -1.0)


def convert_forest(paths: dict[str, Path]) -> tuple[Arrays, Arrays]:
    """Converter of ``forest``: class 1 vs rest, split after row :data:`FOREST_TRAIN`."""
    X, y = covtype_split(paths["data"], positive=1)
    return (X[:FOREST_TRAIN], y[:FOREST_TRAIN]), (X[FOREST_TRAIN:], y[FOREST_TRAIN:])


register(Dataset(
    "forest", "Covertype (UCI), class 1 (Spruce/Fir) vs rest, 54 unscaled features",
    "UCI covtype.data.gz (Blackard & Dean), or scikit-learn's figshare mirror of it",
    "cover type 1 (+1) vs rest (-1)", 54, FOREST_TRAIN, 58102, {"data": COVTYPE}, convert_forest,
    notes="features are the raw UCI values (no scaling); the SGD paper multiplies every feature by 0.001 and the "
          "SBP paper's Gaussian-kernel Forest setting (sigma^2 = 5000) uses Nguyen et al.'s version, whose "
          "scaling is not published. Split: the first 522910 rows train, the last 58102 test (the SBP paper's "
          "sizes); Pegasos and the SGD paper train on all 581012 rows (train + test here).",
))
