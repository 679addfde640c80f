"""Conversion helpers that several dataset sources share.

Every helper is deterministic: the same input bytes give the same output. What is specific
to one source (Platt's Adult encoding, MNIST's IDX format, ...) lives in that source's
module under :mod:`sbpbench.data.sources`.

- Compressed files: ``.gz``/``.bz2`` are read through :func:`open_data` / :func:`read_data`.
- Archives: one member of a tar archive is extracted by :func:`extract_member`, which
  refuses any path outside the target.
- LIBSVM text: taken as published by :func:`libsvm_as_is`, parsed into binary data by
  :func:`svmlight_split`, and written from arrays by :func:`write_libsvm`.
"""

from __future__ import annotations

import bz2
import gzip
import io
import shutil
import tarfile
from pathlib import Path, PurePosixPath

import numpy as np
import scipy.sparse as sp

from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.errors import UserError


def open_data(path: Path) -> io.BufferedIOBase:
    """Open a file for reading bytes, decompressing ``.gz`` and ``.bz2`` transparently."""
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    if path.name.endswith(".bz2"):
        return bz2.open(path, "rb")
    return open(path, "rb")


def read_data(path: Path) -> bytes:
    """The (decompressed) bytes of ``path``; a damaged archive is a :class:`UserError`."""
    try:
        with open_data(path) as fh:
            return fh.read()
    except (OSError, EOFError, ValueError) as exc:
        raise UserError(f"{path}: cannot read ({exc}); delete it and fetch again") from None


def extract_member(archive: Path, member: str, dest: Path) -> Path:
    """Extract one regular file of a tar archive to ``dest/<its base name>``.

    Members whose path is absolute or climbs out with ``..``, and links, are refused, so
    nothing is ever written outside ``dest``.

    Raises
    ------
    UserError
        If the member is missing, unsafe or not a regular file.
    """
    try:
        with tarfile.open(archive, "r:*") as tar:
            for info in tar:
                parts = PurePosixPath(info.name).parts
                if info.name.startswith("/") or ".." in parts:
                    raise UserError(f"{archive}: refusing unsafe member path {info.name!r}")
                if info.name.lstrip("./") != member.lstrip("./"):
                    continue
                source = tar.extractfile(info) if info.isfile() else None
                if source is None:
                    raise UserError(f"{archive}: member {info.name!r} is not a regular file")
                target = dest / PurePosixPath(member).name
                dest.mkdir(parents=True, exist_ok=True)
                with source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)
                return target
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UserError(f"{archive}: cannot read the tar archive ({exc})") from None
    raise UserError(f"{archive}: no member {member!r}")


def libsvm_as_is(paths: dict[str, Path]) -> tuple[bytes, bytes | None]:
    """Converter of files published in LIBSVM format: the decompressed ``train`` file and
    ``test`` file (None when the dataset has none), byte for byte."""
    return read_data(paths["train"]), read_data(paths["test"]) if "test" in paths else None


def svmlight_split(path: Path, n_features: int, zero_based: bool,
                   positive: float | None = None) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse svmlight text (optionally compressed) into (CSR, labels in {-1, +1}).

    Explicit zeros (LaSVM's Adult writes ``122:0``) are dropped. ``positive`` is the raw
    label that becomes +1 (default: the larger of two labels).
    """
    X, labels = read_libsvm(read_data(path), str(path), n_features, zero_based)
    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)  # one index dtype, as eliminate_zeros needs
    X.eliminate_zeros()
    return X, to_binary(labels, str(path), positive)[0]


def write_libsvm(path: Path, X: sp.csr_matrix, y: np.ndarray) -> None:
    """Write features and labels as LIBSVM text (1-based indices), deterministically."""
    from sklearn.datasets import dump_svmlight_file  # here: `sbpbench --help` starts without scikit-learn

    with open(path, "wb") as fh:
        dump_svmlight_file(X, y, fh, zero_based=False)
