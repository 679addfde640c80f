"""Loading the data an experiment names: a registered dataset or LIBSVM files, subsampled.

A registered dataset is loaded from its cached conversion; one not cached loads the copy it
ships with (a :class:`~sbpbench.data.registry.Fallback`, Adult's bundled copy) or else is
fetched and converted first (:mod:`sbpbench.data.cache`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from sbpbench.data import cache
from sbpbench.data.fetch import FetchOptions, mirror_root
from sbpbench.data.libsvm import check_test_labels, read_libsvm, to_binary
from sbpbench.data.registry import REGISTRY
from sbpbench.data.split import Split, subsample
from sbpbench.errors import UserError


@dataclass(frozen=True)
class DatasetSpec:
    """The ``dataset:`` section of an experiment.

    Parameters
    ----------
    name : str, optional
        A registered dataset (see :data:`~sbpbench.data.registry.REGISTRY`).
    path, test_path : str, optional
        LIBSVM files to use instead of a registered dataset.
    n_train, n_test : int, optional
        Subsample sizes (all examples when omitted).
    n_features : int, optional
        Number of features for ``path`` files (inferred when omitted).
    positive : float, optional
        For ``path`` files with more than two labels: the label that becomes +1.
    zero_based : bool
        Whether the feature indices of ``path`` files start at 0 (default: at 1, LIBSVM's
        convention).
    """

    name: str | None = None
    path: str | None = None
    test_path: str | None = None
    n_train: int | None = None
    n_test: int | None = None
    n_features: int | None = None
    positive: float | None = None
    zero_based: bool = False

    @property
    def label(self) -> str:
        """A short name for tables and file names."""
        return self.name or self.path or "?"

    def as_dict(self) -> dict[str, Any]:
        """The section as a mapping, for ``meta.json`` and cache keys.

        ``zero_based`` appears only when true, so that a config without it gives the mapping
        it gave before the key existed (run folders stay resumable, cached optima valid).
        """
        out = asdict(self)
        if not self.zero_based:
            del out["zero_based"]
        return out


def load_registered(name: str) -> tuple[Split, Split]:
    """The full train and test splits of registered dataset ``name``.

    The cached conversion; else, for a dataset that declares a
    :class:`~sbpbench.data.registry.Fallback` (Adult's bundled copy), that copy, with no
    download tried (``sbpbench datasets fetch`` converts the dataset); else a fresh fetch and
    conversion (through ``$SBPBENCH_MIRROR`` when set). The splits' ``provenance`` names the
    copy loaded.

    Raises
    ------
    UserError
        If the dataset is unknown, cannot be fetched, or its cached conversion is damaged.
    """
    if name not in REGISTRY:
        raise UserError(f"unknown dataset {name!r} (valid: {', '.join(sorted(REGISTRY))})")
    fallback = REGISTRY[name].fallback
    if not cache.is_cached(name):
        if fallback is not None:
            return fallback.load()
        cache.prepare(name, FetchOptions(mirror=mirror_root()))
    return cache.load_cached(name)


def _load_files(spec: DatasetSpec, path: str, test_path: str) -> tuple[Split, Split]:
    """The ``path`` and ``test_path`` LIBSVM files, labels mapped as the training file's."""
    train_X, train_labels = read_libsvm(path, path, spec.n_features, spec.zero_based)
    n_features = spec.n_features or train_X.shape[1]
    test_X, test_labels = read_libsvm(test_path, test_path, n_features, spec.zero_based)
    train_y, positive = to_binary(train_labels, path, spec.positive)
    check_test_labels(train_labels, test_labels, path, test_path, spec.positive)
    test_y, _ = to_binary(test_labels, test_path, positive)
    return Split(train_X, train_y), Split(test_X, test_y)


def load(spec: DatasetSpec, rng: np.random.Generator) -> tuple[Split, Split]:
    """Load the train and test splits an experiment asks for, subsampled with ``rng``.

    Parameters
    ----------
    spec : DatasetSpec
        The experiment's dataset section: ``name``, or ``path`` and ``test_path``.
    rng : numpy.random.Generator
        Source of the subsampling (the experiment's seed, so every run and solver sees the
        same data).

    Returns
    -------
    train, test : Split
        Their ``provenance`` names the copy a registered dataset was loaded from.

    Raises
    ------
    UserError
        If the dataset is unknown, a file is malformed, or ``n_train`` or ``n_test`` asks
        for more examples than there are.
    """
    if spec.name is not None:
        train, test = load_registered(spec.name)
    elif spec.path is not None and spec.test_path is not None:
        train, test = _load_files(spec, spec.path, spec.test_path)
    else:
        raise UserError("dataset: give either 'name' (a registered dataset) or 'path' and 'test_path' (LIBSVM files)")
    for key, split, size, what in (("n_train", train, spec.n_train, "training"), ("n_test", test, spec.n_test, "test")):
        if size is not None and size > split.n:
            raise UserError(f"dataset.{key}: {size} is more than the {split.n} {what} examples of {spec.label}")
    train = subsample(train, spec.n_train, rng)
    test = subsample(test, spec.n_test, rng)
    if np.unique(train.y).size < 2:
        raise UserError(f"dataset {spec.label}: the training sample has only one class")
    return train, test
