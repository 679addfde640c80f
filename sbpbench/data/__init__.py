"""Datasets: the registry, the download cache, LIBSVM reading, binary labels and subsampling.

What other stages use: :func:`load` (the train and test splits an experiment's
:class:`DatasetSpec` asks for), :class:`Split`, and :data:`REGISTRY` (every dataset by name).
Importing this package registers every dataset of :mod:`sbpbench.data.sources`.
"""

from sbpbench.data import sources  # noqa: F401  (registers every dataset)
from sbpbench.data.loading import DatasetSpec, load
from sbpbench.data.registry import REGISTRY, Dataset, register
from sbpbench.data.split import Split

__all__ = ["REGISTRY", "Dataset", "DatasetSpec", "Split", "load", "register"]
