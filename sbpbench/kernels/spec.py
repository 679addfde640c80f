"""What kernel to use: the declaration a config, an estimator or a test hands to a kernel."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelSpec:
    """What kernel to use.

    Parameters
    ----------
    name : {"gaussian", "linear"}
        ``gaussian`` is ``exp(-||x - x'||^2 / (2 sigma2))``; ``linear`` is ``<x, x'>``.
    sigma2 : float
        The Gaussian bandwidth sigma^2 (ignored by the linear kernel).
    cache_mb : float
        Size of the LRU row cache in MiB (0 disables it).
    """

    name: str = "gaussian"
    sigma2: float = 1.0
    cache_mb: float = 256.0
