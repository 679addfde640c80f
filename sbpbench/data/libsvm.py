"""Reading LIBSVM-format files into binary classification data.

A LIBSVM line is ``label index:value index:value ...`` with increasing indices.
scikit-learn's :func:`sklearn.datasets.load_svmlight_file` is the reader, always told
whether indices start at 1 (the LIBSVM convention, the default) or at 0: its "auto" mode
would read a whole file as zero-based because of a single ``0:`` index. When it rejects a
file, or the parsed data hold a non-finite value or more columns than int32 indices
address, we scan the text ourselves to name the first bad line, so that the user gets
``file:line: what was expected`` instead of a parser's traceback or wrong data.

Numbers follow LIBSVM's grammar (its reader uses C's ``strtod`` and ``strtol``), not
Python's, which scikit-learn's parser uses: Python reads ``1_0`` as 10 where LIBSVM refuses
it, so a file holding an underscore outside its comments is scanned and the line refused.
A label or value is ``[+-]digits[.digits][e[+-]digits]`` (or ``inf``/``nan``, refused as not
finite); an index is ``[+-]digits``. C's hexadecimal floats (``0x1p3``) are refused too: the
other LIBSVM readers do not take them.

Lines end in LF or CRLF, as for LIBSVM (which reads lines up to LF; a CR before it is
white space). A carriage return anywhere else, as in a file with CR-only line ends (old
Mac OS), is refused with the line where it occurs (lines counted by LF), rather than read
as one long line: convert such a file first (``tr '\\r' '\\n'``).
"""

from __future__ import annotations

import io
import math
import os
import re

import numpy as np
import scipy.sparse as sp

from sbpbench.errors import UserError
from sbpbench.files import read_regular

#: The most features int32 CSR indices address.
MAX_FEATURES = int(np.iinfo(np.int32).max)
#: A label or a feature value as LIBSVM's ``strtod`` reads it (decimal; ``inf``/``nan`` are refused later).
NUMBER = re.compile(rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)
#: A feature index as LIBSVM's ``strtol`` reads it.
INDEX = re.compile(rb"[+-]?\d+")
#: What Python's number syntax or scikit-learn's line splitting accepts and LIBSVM does not:
#: an underscore (``1_0``), a carriage return not ending a line.
_NOT_LIBSVM = re.compile(rb"_|\r(?!\n)")


def read_libsvm(source: str | os.PathLike[str] | bytes, name: str, n_features: int | None = None,
                zero_based: bool = False) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse LIBSVM text into a CSR matrix and raw labels.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A file path, or the file's bytes.
    name : str
        How to name the file in error messages.
    n_features : int, optional
        Number of features; inferred from the largest index when omitted.
    zero_based : bool
        Whether feature indices start at 0 (default: at 1, the LIBSVM convention, so that
        an index 0 is an error).

    Returns
    -------
    X : scipy.sparse.csr_matrix
        Float64 features with int32 indices.
    labels : numpy.ndarray
        The raw labels as written in the file.

    Raises
    ------
    UserError
        If the file cannot be read (or is no regular file: a folder, a device, a named
        pipe) or a line is malformed: not ``label index:value ...``,
        an index 0 in a one-based file, an index too large for int32, or a label or value
        that is not finite (the message names the line).
    """
    from sklearn.datasets import load_svmlight_file  # here: `sbpbench --help` starts without scikit-learn

    data = read_regular(source, "LIBSVM file") if isinstance(source, (str, os.PathLike)) else source
    if _NOT_LIBSVM.search(data) and (problem := _first_bad_line(data, name, n_features, zero_based)):
        raise UserError(problem)  # an underscore or a CR in a comment is no problem: read on
    try:
        X, labels = load_svmlight_file(io.BytesIO(data), n_features=n_features, dtype=np.float64,
                                       zero_based=zero_based)
    except (ValueError, OverflowError) as exc:  # OverflowError: an index beyond 64 bits
        raise UserError(_first_bad_line(data, name, n_features, zero_based) or f"{name}: {exc}") from None
    if X.shape[1] > MAX_FEATURES or not (np.isfinite(X.data).all() and np.isfinite(labels).all()):
        raise UserError(_first_bad_line(data, name, n_features, zero_based)
                        or f"{name}: n_features={X.shape[1]} is more than int32 indices address ({MAX_FEATURES})")
    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(np.int32, copy=False)
    if X.shape[0] == 0:
        raise UserError(f"{name}: no examples (expected lines 'label index:value ...')")
    return X, labels


def _first_bad_line(data: bytes, name: str, n_features: int | None, zero_based: bool) -> str | None:
    """Describe the first line that is not ``label index:value ...`` with valid indices and finite numbers."""
    first = 0 if zero_based else 1
    largest = MAX_FEATURES - 1 + first  # the index of the last column int32 indices address
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.removesuffix(b"\r").split(b"#", 1)[0]
        if b"\r" in line:
            return (f"{name}:{lineno}: a carriage return (CR) inside the line; LIBSVM lines end in LF or CRLF "
                    "(convert CR line ends first, e.g. with tr '\\r' '\\n')")
        line = line.strip()
        if not line:
            continue
        tokens = line.split()
        label = tokens[0][:40].decode(errors="replace")
        if not NUMBER.fullmatch(tokens[0]):
            return f"{name}:{lineno}: expected a numeric label first, got {label!r}"
        finite = math.isfinite(float(tokens[0]))
        if not finite:
            return f"{name}:{lineno}: label {label!r} is not finite"
        previous = first - 1
        for tok in tokens[1:]:
            idx, sep, val = tok.partition(b":")
            text = tok[:40].decode(errors="replace")
            if not sep:
                return f"{name}:{lineno}: expected 'index:value', got {text!r}"
            if idx == b"qid":
                continue
            if not (INDEX.fullmatch(idx) and NUMBER.fullmatch(val)):
                return f"{name}:{lineno}: expected an integer index and a number in {text!r}"
            index, value = int(idx), float(val)
            if index == 0 and not zero_based:
                return (f"{name}:{lineno}: feature index 0 in {text!r} (LIBSVM indices start at 1; "
                        "set dataset.zero_based: true for a zero-based file)")
            if index <= previous:
                return (f"{name}:{lineno}: feature indices must be {'non-negative' if zero_based else 'positive'} "
                        f"and increasing, got {text!r}")
            if index > largest:
                return f"{name}:{lineno}: feature index {index} is too large (at most {largest}: indices are int32)"
            if n_features is not None and index - first >= n_features:
                return (f"{name}:{lineno}: feature index {index} exceeds n_features={n_features} "
                        f"(set dataset.n_features to {index + 1 - first} or more)")
            if not math.isfinite(value):
                return f"{name}:{lineno}: feature value {text!r} is not finite"
            previous = index
    return None


def _label_set(values: np.ndarray) -> str:
    """Distinct labels as a message shows them: ``{1, 2}``, the first six of many."""
    return "{" + ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if values.size > 6 else "") + "}"


def check_test_labels(train: np.ndarray, test: np.ndarray, train_name: str, test_name: str,
                      positive: float | None) -> None:
    """Refuse test labels that the training labels do not map: a class never seen in training.

    Without ``positive`` (a binary file pair) every test label must be one of the training
    file's labels, so that both files mean the same two classes: a test file labelled
    {-1, +1} beside a training file labelled {1, 2} would otherwise be mapped to one class
    and measured as a wrong test error. With ``positive`` (one class against the rest) the
    positive label must be one of the training labels; any other test label is "the rest".

    Parameters
    ----------
    train, test : numpy.ndarray
        The raw labels of the two files.
    train_name, test_name : str
        The files, for the message.
    positive : float, optional
        ``dataset.positive``.

    Raises
    ------
    UserError
        One line naming both files and their label sets.
    """
    seen, tested = np.unique(train), np.unique(test)
    if positive is not None:
        if positive not in seen:
            raise UserError(f"{train_name}: dataset.positive {positive:g} is not one of its labels {_label_set(seen)}")
        return
    unseen = np.setdiff1d(tested, seen)
    if unseen.size:
        raise UserError(f"{test_name}: labels {_label_set(tested)} are not those of the training file {train_name} "
                        f"{_label_set(seen)} ({_label_set(unseen)} never seen in training); label both files with "
                        "the same two values, or set dataset.positive to train one class against the rest")


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
            raise UserError(
                f"{name}: labels take {values.size} values {_label_set(values)}; expected a binary problem "
                "(set dataset.positive to choose one class against the rest)"
            )
        positive = float(values[-1])
    return np.where(labels == positive, 1.0, -1.0), positive
