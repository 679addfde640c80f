"""Reading LIBSVM-format files into binary classification data.

scikit-learn's :func:`sklearn.datasets.load_svmlight_file` is the reader. When it
rejects a file we scan the text ourselves to name the first bad line, so that the user
gets ``file:line: what was expected`` instead of a parser's traceback.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from sbpbench.errors import UserError


@dataclass
class Split:
    """One labelled sample: ``X`` (CSR float64, int32 indices) and ``y`` in {-1, +1}."""

    X: sp.csr_matrix
    y: np.ndarray

    @property
    def n(self) -> int:
        """Number of examples."""
        return self.X.shape[0]

    def take(self, idx: np.ndarray) -> "Split":
        """The examples at ``idx``, in that order."""
        return Split(self.X[idx], self.y[idx])


def read_libsvm(source: str | bytes, name: str, n_features: int | None = None):
    """Parse LIBSVM text into a CSR matrix and raw labels.

    Parameters
    ----------
    source : str or bytes
        A file path, or the file's bytes.
    name : str
        How to name the file in error messages.
    n_features : int, optional
        Number of features; inferred from the largest index when omitted.

    Returns
    -------
    X : scipy.sparse.csr_matrix
        Float64 features with int32 indices.
    labels : numpy.ndarray
        The raw labels as written in the file.

    Raises
    ------
    UserError
        If the file cannot be read or a line is malformed (the message names the line).
    """
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UserError(f"{name}: cannot read LIBSVM file ({exc.strerror})") from None
    else:
        data = source
    try:
        X, labels = load_svmlight_file(io.BytesIO(data), n_features=n_features, dtype=np.float64)
    except ValueError as exc:
        raise UserError(_first_bad_line(data, name, n_features) or f"{name}: {exc}") from None
    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(np.int32, copy=False)
    if X.shape[0] == 0:
        raise UserError(f"{name}: no examples (expected lines 'label index:value ...')")
    return X, labels


def _first_bad_line(data: bytes, name: str, n_features: int | None) -> str | None:
    """Describe the first line that is not ``label index:value ...`` (1-based indices)."""
    for lineno, raw in enumerate(data.splitlines(), start=1):
        line = raw.split(b"#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        try:
            float(tokens[0])
        except ValueError:
            return f"{name}:{lineno}: expected a numeric label first, got {tokens[0][:40].decode(errors='replace')!r}"
        previous = 0
        for tok in tokens[1:]:
            idx, sep, val = tok.partition(b":")
            text = tok[:40].decode(errors="replace")
            if not sep:
                return f"{name}:{lineno}: expected 'index:value', got {text!r}"
            try:
                index = int(idx)
                float(val)
            except ValueError:
                return f"{name}:{lineno}: expected an integer index and a number in {text!r}"
            if index <= previous and idx != b"qid":
                return f"{name}:{lineno}: feature indices must be positive and increasing, got {text!r}"
            if n_features is not None and index > n_features:
                return f"{name}:{lineno}: feature index {index} exceeds n_features={n_features}"
            previous = index
    return None


def to_binary(labels: np.ndarray, name: str, positive: float | None = None) -> tuple[np.ndarray, float]:
    """Map raw labels to -1/+1.

    Parameters
    ----------
    labels : numpy.ndarray
        Raw labels.
    name : str
        File name for error messages.
    positive : float, optional
        The label that becomes +1, all others -1 (one class against the rest). Without it
        the labels must take at most two values; the larger becomes +1.

    Returns
    -------
    y : numpy.ndarray of float64
        Labels in {-1, +1}.
    positive : float
        The label that was mapped to +1 (pass it on to map a test file the same way).
    """
    if positive is None:
        values = np.unique(labels)
        if values.size > 2:
            shown = ", ".join(f"{v:g}" for v in values[:6]) + (" ..." if values.size > 6 else "")
            raise UserError(
                f"{name}: labels take {values.size} values ({shown}); expected a binary problem "
                "(set dataset.positive to choose one class against the rest)"
            )
        positive = float(values[-1])
    return np.where(labels == positive, 1.0, -1.0), positive


def subsample(split: Split, size: int | None, rng: np.random.Generator) -> Split:
    """A uniform random subset of ``size`` examples (all of them when ``size`` is None or larger).

    The kept examples stay in file order, so a subsample of a subsample is stable.
    """
    if size is None or size >= split.n:
        return split
    idx = np.sort(rng.choice(split.n, size=size, replace=False))
    return split.take(idx)
