"""What kernel to use: the declaration a config, an estimator or a test hands to a kernel."""

from __future__ import annotations

from dataclasses import dataclass

from sbpbench.params import Params, non_negative, param, positive


@dataclass(frozen=True)
class KernelSpec(Params):
    """What kernel to use: its parameters, declared once (:mod:`sbpbench.params`), checked when made."""

    name: str = param("gaussian", "the kernel: 'gaussian', exp(-||x - x'||^2 / (2 sigma2)), or 'linear', <x, x'>",
                      choices=("gaussian", "linear"))
    sigma2: float = param(1.0, "the Gaussian kernel's bandwidth sigma^2 (ignored by the linear kernel)", check=positive)
    cache_mb: float = param(256.0, "the LRU kernel-row cache in MiB (changes the speed, not the result)",
                            check=non_negative)
