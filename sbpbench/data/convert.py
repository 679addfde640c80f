"""Converters from the datasets' original formats to LIBSVM data.

Every converter is deterministic: the same input bytes give the same output.

- UCI Adult CSV -> Platt's 123 binary features (LIBSVM's ``a9a``), :func:`adult_to_libsvm`.
- MNIST IDX -> "digit vs rest" with pixels / 255, :func:`mnist_split`.
- svmlight text with 0-based indices (LaSVM) -> 1-based, :func:`svmlight_split`.
- UCI Covertype CSV -> "class vs rest", :func:`covtype_split`.
- RCV1-v2 LYRL2004 vectors + topic qrels -> "topic vs rest", :func:`rcv1_split`.
- Archives: ``.gz``/``.bz2`` are read through :func:`open_data`; members of tar archives
  are extracted by :func:`extract_member`, which refuses any path outside the target.

Platt's Adult encoding
----------------------
The 14 UCI attributes become 123 indicator features, one block per attribute in the order
of ``adult.names``: a categorical attribute gets one feature per value, in the order
``adult.names`` lists them; a continuous attribute is cut into ranges (Platt used
quantile bins, so the edges are properties of the data, not round numbers). A missing
value (``?``) sets no feature of its block. The edges below were derived from the real
files: for every range, the smallest and largest value of ``adult.data`` + ``adult.test``
that LIBSVM's ``a9a``/``a9a.t`` put in it (they never overlap). Each edge is the largest
value seen in its range; no value of the data falls between a range's largest value and
the next range's smallest one (e.g. fnlwgt 106637 | 106648), so the encoding reproduces
a9a and a9a.t byte for byte (32561 + 16281 rows, none differs; tests check it).
"""

from __future__ import annotations

import bz2
import gzip
import io
import shutil
import tarfile
from pathlib import Path, PurePosixPath
from typing import IO

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.errors import UserError


def open_data(path: Path) -> IO[bytes]:
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
                if not info.isfile():
                    raise UserError(f"{archive}: member {info.name!r} is not a regular file")
                target = dest / PurePosixPath(member).name
                dest.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
                return target
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UserError(f"{archive}: cannot read the tar archive ({exc})") from None
    raise UserError(f"{archive}: no member {member!r}")


# ----------------------------------------------------------------------------- Adult (Platt)

_WORKCLASS = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
              "Without-pay", "Never-worked"]
_EDUCATION = ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
              "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"]
_MARITAL = ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed", "Married-spouse-absent",
            "Married-AF-spouse"]
_OCCUPATION = ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
               "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
               "Priv-house-serv", "Protective-serv", "Armed-Forces"]
_RELATIONSHIP = ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"]
_RACE = ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]
_SEX = ["Female", "Male"]
_COUNTRY = ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
            "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran", "Honduras",
            "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland", "France",
            "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia", "Hungary", "Guatemala",
            "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong",
            "Holand-Netherlands"]

#: The 14 UCI columns in order: (name, categories) or (name, upper edges of the ranges but the last).
ADULT_ENCODING: list[tuple[str, list[str] | list[float]]] = [
    ("age", [25, 32, 40, 49]),
    ("workclass", _WORKCLASS),
    ("fnlwgt", [106637, 158656, 196337, 259865]),
    ("education", _EDUCATION),
    ("education-num", [8, 9, 10, 12]),
    ("marital-status", _MARITAL),
    ("occupation", _OCCUPATION),
    ("relationship", _RELATIONSHIP),
    ("race", _RACE),
    ("sex", _SEX),
    ("capital-gain", [0]),
    ("capital-loss", [0]),
    ("hours-per-week", [34, 39, 40, 47]),
    ("native-country", _COUNTRY),
]
ADULT_FEATURES = 123


def _block_sizes() -> list[int]:
    return [len(spec) if isinstance(spec[0], str) else len(spec) + 1 for _, spec in ADULT_ENCODING]


def adult_to_libsvm(data: bytes, name: str) -> bytes:
    """Encode UCI Adult CSV rows (``adult.data`` or ``adult.test``) as Platt's a9a text.

    Lines that are blank or start with ``|`` (the header of ``adult.test``) are skipped;
    the label's trailing period (``>50K.`` in ``adult.test``) is ignored. Output lines are
    ``+1 i:1 j:1 ... \\n`` exactly as in LIBSVM's a9a (note the space before the newline).

    Raises
    ------
    UserError
        On a row without 15 fields, a value outside the encoding, or an unknown label.
    """
    starts = np.cumsum([1] + _block_sizes()[:-1])
    assert sum(_block_sizes()) == ADULT_FEATURES
    lookups = [
        {value: start + k for k, value in enumerate(spec)} if isinstance(spec[0], str) else None
        for (_, spec), start in zip(ADULT_ENCODING, starts)
    ]
    out = io.StringIO()
    for lineno, raw in enumerate(data.decode("ascii").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("|"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 15:
            raise UserError(f"{name}:{lineno}: expected 15 comma-separated fields, got {len(fields)}")
        label = fields[14].rstrip(".")
        if label not in (">50K", "<=50K"):
            raise UserError(f"{name}:{lineno}: expected the label '>50K' or '<=50K', got {fields[14]!r}")
        out.write("+1 " if label == ">50K" else "-1 ")
        for (column, spec), start, lookup, value in zip(ADULT_ENCODING, starts, lookups, fields):
            if value == "?":
                continue
            if lookup is not None:
                if value not in lookup:
                    raise UserError(f"{name}:{lineno}: unknown {column} {value!r}")
                index = lookup[value]
            else:
                try:
                    index = start + int(np.searchsorted(spec, float(value), side="left"))
                except ValueError:
                    raise UserError(f"{name}:{lineno}: {column} must be a number, got {value!r}") from None
            out.write(f"{index}:1 ")
        out.write("\n")
    return out.getvalue().encode("ascii")


# ----------------------------------------------------------------------------- MNIST IDX


def read_idx(path: Path, magic: int) -> np.ndarray:
    """Read an IDX file (big-endian header: magic, then one uint32 per dimension) of uint8."""
    data = read_data(path)
    ndim = magic & 0xFF
    if len(data) < 4 + 4 * ndim or int.from_bytes(data[:4], "big") != magic:
        raise UserError(f"{path}: not an IDX file with magic {magic} "
                        f"(got {int.from_bytes(data[:4], 'big') if len(data) >= 4 else 'nothing'})")
    dims = [int.from_bytes(data[4 + 4 * k: 8 + 4 * k], "big") for k in range(ndim)]
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise UserError(f"{path}: expected {int(np.prod(dims))} bytes of data for shape {dims}, got {body.size}")
    return body.reshape(dims)


def mnist_split(images: Path, labels: Path, positive: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """MNIST IDX images and labels as (pixels / 255 in CSR, +1 for ``positive`` else -1)."""
    pixels = read_idx(images, 2051)
    digits = read_idx(labels, 2049)
    if pixels.shape[0] != digits.shape[0]:
        raise UserError(f"{images}: {pixels.shape[0]} images but {labels} has {digits.shape[0]} labels")
    X = sp.csr_matrix(pixels.reshape(pixels.shape[0], -1).astype(np.float64) / 255.0)
    return X, np.where(digits == positive, 1.0, -1.0)


# ----------------------------------------------------------------------------- svmlight / LIBSVM text


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


# ----------------------------------------------------------------------------- Covertype


def covtype_split(path: Path, positive: int, scale: float = 1.0) -> tuple[sp.csr_matrix, np.ndarray]:
    """UCI ``covtype.data(.gz)``: 54 features (times ``scale``), +1 for class ``positive``."""
    try:
        with open_data(path) as fh:
            table = pd.read_csv(fh, header=None, dtype=np.float64).to_numpy()
    except (OSError, EOFError, ValueError, pd.errors.ParserError) as exc:
        raise UserError(f"{path}: cannot read the Covertype CSV ({exc})") from None
    if table.shape[1] != 55:
        raise UserError(f"{path}: expected 55 columns (54 features and the class), got {table.shape[1]}")
    return sp.csr_matrix(table[:, :54] * scale), np.where(table[:, 54] == positive, 1.0, -1.0)


# ----------------------------------------------------------------------------- RCV1-v2 (LYRL2004)

RCV1_FEATURES = 47236


def rcv1_topics(qrels: Path, topic: str) -> np.ndarray:
    """Sorted document ids that the qrels file (``topic docid 1`` lines) assigns to ``topic``."""
    ids = [int(parts[1]) for line in read_data(qrels).decode("ascii").splitlines()
           if len(parts := line.split()) >= 2 and parts[0] == topic]
    if not ids:
        raise UserError(f"{qrels}: no document has topic {topic!r}")
    return np.unique(np.array(ids, dtype=np.int64))


def rcv1_split(vectors: list[Path], positives: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """LYRL2004 vector files (``docid term:weight ...``) as (CSR, +1 for documents in ``positives``)."""
    blocks, ids = [], []
    for path in vectors:
        X, docids = read_libsvm(read_data(path), str(path), RCV1_FEATURES)  # the document id as the label
        blocks.append(X)
        ids.append(docids.astype(np.int64))
    docids = np.concatenate(ids)
    return sp.csr_matrix(sp.vstack(blocks, format="csr")), np.where(np.isin(docids, positives), 1.0, -1.0)
