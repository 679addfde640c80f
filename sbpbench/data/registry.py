"""The dataset registry: a name resolves to a loader of a train and a test split.

A dataset knows nothing of solvers. Each entry says where its data come from and how to
load it; :func:`load` applies the experiment's subsampling. Every dataset of
:mod:`sbpbench.data.sources` is registered here and fetched into the cache the first time it
is loaded. ``adult`` loads the cached conversion of the UCI files when present, else tries
to fetch it, and when the source cannot be reached falls back (with a one-line notice) to
the copy of LIBSVM's ``a9a``/``a9a.t`` bundled inside the package (compressed with xz and
checked against its sha256 when loaded): the same bytes, so Adult always works offline.
"""

from __future__ import annotations

import hashlib
import lzma
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from sbpbench.data import sources
from sbpbench.data.fetch import FetchOptions, mirror_root
from sbpbench.data.libsvm import Split, read_libsvm, subsample, to_binary
from sbpbench.errors import UserError


@dataclass(frozen=True)
class DatasetSpec:
    """The ``dataset:`` section of an experiment.

    Parameters
    ----------
    name : str, optional
        A registered dataset (see :data:`REGISTRY`).
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


@dataclass(frozen=True)
class DatasetInfo:
    """A registered dataset: what it is and how to load its full train and test splits."""

    name: str
    description: str
    source: str
    n_features: int
    task: str
    load: Callable[[], tuple[Split, Split]] = field(repr=False)


#: Every registered dataset by name. Downloaders add entries here.
REGISTRY: dict[str, DatasetInfo] = {}


def register(info: DatasetInfo) -> DatasetInfo:
    """Add a dataset to :data:`REGISTRY` (its name must be new)."""
    if info.name in REGISTRY:
        raise ValueError(f"dataset {info.name!r} registered twice")
    REGISTRY[info.name] = info
    return info


# ----------------------------------------------------------------------------- bundled Adult

#: What ``meta.json`` records as ``dataset_copy`` when Adult comes from the bundled files.
BUNDLED_ADULT = "bundled a9a (LIBSVM)"
#: sha256 of the decompressed bundled files (the same bytes as LIBSVM's a9a and a9a.t).
BUNDLED_SHA256 = {
    "a9a": "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
    "a9a.t": "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
}
ADULT_FEATURES = 123


def bundled_bytes(filename: str) -> bytes:
    """The decompressed bytes of a bundled file, verified against :data:`BUNDLED_SHA256`."""
    ref = resources.files("sbpbench.data") / "bundled" / f"{filename}.xz"
    data = lzma.decompress(ref.read_bytes())
    digest = hashlib.sha256(data).hexdigest()
    if digest != BUNDLED_SHA256[filename]:
        raise UserError(
            f"{ref}: sha256 {digest} does not match the expected {BUNDLED_SHA256[filename]} "
            "(the installed package is damaged; reinstall it)"
        )
    return data


def _load_bundled_adult() -> tuple[Split, Split]:
    splits = []
    for filename in ("a9a", "a9a.t"):
        # a9a.t never uses index 123, so the feature count must be given explicitly
        X, labels = read_libsvm(bundled_bytes(filename), f"bundled {filename}", n_features=ADULT_FEATURES)
        splits.append(Split(X, to_binary(labels, filename, positive=1.0)[0], BUNDLED_ADULT))
    return splits[0], splits[1]


def _load_source(name: str) -> tuple[Split, Split]:
    """Load a downloadable dataset, fetching and converting it first when not cached."""
    if not sources.is_cached(name):
        sources.prepare(name, FetchOptions(mirror=mirror_root()))
    return sources.load_cached(name)


def _load_adult() -> tuple[Split, Split]:
    """The cached UCI conversion, else a fresh fetch, else the bundled copy (same bytes)."""
    try:
        return _load_source("adult")
    except (UserError, OSError) as exc:
        print(f"sbpbench: note: using the bundled copy of Adult (LIBSVM a9a) because {exc}", file=sys.stderr)
        return _load_bundled_adult()


for _source in sources.SOURCES.values():
    register(
        DatasetInfo(
            name=_source.name,
            description=_source.description,
            source=_source.origin,
            n_features=_source.n_features,
            task=_source.task,
            load=_load_adult if _source.name == "adult" else (lambda name=_source.name: _load_source(name)),
        )
    )


# ----------------------------------------------------------------------------- loading


def load(spec: DatasetSpec, rng: np.random.Generator) -> tuple[Split, Split]:
    """Load the train and test splits an experiment asks for, subsampled with ``rng``.

    Parameters
    ----------
    spec : DatasetSpec
        The experiment's dataset section.
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
        if spec.name not in REGISTRY:
            raise UserError(f"unknown dataset {spec.name!r} (valid: {', '.join(sorted(REGISTRY))})")
        train, test = REGISTRY[spec.name].load()
    else:
        train_X, train_labels = read_libsvm(spec.path, spec.path, spec.n_features, spec.zero_based)
        n_features = spec.n_features or train_X.shape[1]
        test_X, test_labels = read_libsvm(spec.test_path, spec.test_path, n_features, spec.zero_based)
        train_y, positive = to_binary(train_labels, spec.path, spec.positive)
        test_y, _ = to_binary(test_labels, spec.test_path, positive)
        train, test = Split(train_X, train_y), Split(test_X, test_y)
    for key, split, size, what in (("n_train", train, spec.n_train, "training"), ("n_test", test, spec.n_test, "test")):
        if size is not None and size > split.n:
            raise UserError(f"dataset.{key}: {size} is more than the {split.n} {what} examples of {spec.label}")
    train = subsample(train, spec.n_train, rng)
    test = subsample(test, spec.n_test, rng)
    if np.unique(train.y).size < 2:
        raise UserError(f"dataset {spec.label}: the training sample has only one class")
    return train, test
