"""Datasets: LIBSVM-format loading, binary labels, subsampling and the registry."""

from sbpbench.data.libsvm import Split
from sbpbench.data.registry import REGISTRY, DatasetInfo, DatasetSpec, load, register

__all__ = ["REGISTRY", "DatasetInfo", "DatasetSpec", "Split", "load", "register"]
