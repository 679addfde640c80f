"""The registry of datasets: every dataset by name, with how to obtain and load it.

A :class:`Dataset` lists the files to download (:class:`~sbpbench.data.fetch.RemoteFile`:
addresses, mirrors, checksums) and the converter that turns them into a train and a test
split; :mod:`sbpbench.data.cache` fetches, converts and caches it, and
:func:`sbpbench.data.load` loads it for an experiment. A dataset may also declare a
:class:`Fallback`, a copy shipped with sbpbench (Adult's, bundled inside the package), which a
run loads as long as the dataset is not converted in the cache, without trying the network.
Each module of :mod:`sbpbench.data.sources` registers its
datasets here when imported, and importing :mod:`sbpbench.data` imports them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from sbpbench.data.fetch import RemoteFile
from sbpbench.data.split import Split

#: Converted examples as arrays: (CSR features, labels in {-1, +1}).
Arrays = tuple[sp.csr_matrix, np.ndarray]
#: A converted split: LIBSVM text, or arrays.
SplitData = bytes | Arrays
#: A converter gets the fetched files by role and returns the train and the test split
#: (test None when the dataset has no test set).
Converter = Callable[[dict[str, Path]], tuple[SplitData, SplitData | None]]


@dataclass(frozen=True)
class Fallback:
    """A copy of a dataset shipped with sbpbench: what is loaded while the dataset is not
    converted in the cache, with no download tried (``sbpbench datasets fetch`` converts it).

    Parameters
    ----------
    what : str
        The copy, as ``sbpbench datasets`` names it.
    load : callable
        Returns the full train and test splits, their ``provenance`` naming the copy.
    check : callable
        Re-checks the copy (its checksums): None when it is good, else what is wrong (one line).
    """

    what: str
    load: Callable[[], tuple[Split, Split]] = field(repr=False)
    check: Callable[[], str | None] = field(repr=False)


@dataclass(frozen=True)
class Dataset:
    """A registered dataset: what it is, the files it is made from and how they are converted.

    Parameters
    ----------
    name, description, origin, task : str
        Registry name, one-line description, provenance (papers, pages), and the binary task.
    n_features : int
        Number of features of the converted data.
    n_train, n_test : int
        Expected numbers of examples (checked after conversion; ``n_test`` 0 = no test set).
    files : dict of str to RemoteFile
        The files to fetch, by role (the converter's keys).
    convert : callable
        See :data:`Converter`.
    positive : float, optional
        For LIBSVM text: the raw label that becomes +1 (default: the larger of two).
    members : dict of str to str
        Roles whose file is a tar archive: the member to extract.
    notes : str
        Scaling, splits and other choices, shown by ``sbpbench datasets info``.
    fallback : Fallback, optional
        A copy shipped with sbpbench, loaded while the dataset is not converted in the cache.
    """

    name: str
    description: str
    origin: str
    task: str
    n_features: int
    n_train: int
    n_test: int
    files: dict[str, RemoteFile]
    convert: Converter = field(repr=False)
    positive: float | None = None
    members: dict[str, str] = field(default_factory=dict)
    notes: str = ""
    fallback: Fallback | None = None


#: Every registered dataset by name, in the order ``sbpbench datasets list`` shows them.
REGISTRY: dict[str, Dataset] = {}


def register(dataset: Dataset) -> Dataset:
    """Add ``dataset`` to :data:`REGISTRY` (its name must be new) and return it."""
    if dataset.name in REGISTRY:
        raise ValueError(f"dataset {dataset.name!r} registered twice")
    REGISTRY[dataset.name] = dataset
    return dataset

