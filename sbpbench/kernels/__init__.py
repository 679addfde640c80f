"""The counting kernel: every kernel evaluation is counted here and nowhere else.

Read :mod:`sbpbench.kernels.kernel` first: :class:`Kernel`, the counters and the row cache (the
contract). The rest computes the values: :mod:`~sbpbench.kernels.storage` (one class per storage
of the training rows, and the memory they need), :mod:`~sbpbench.kernels.detect` (which storage
data take), :mod:`~sbpbench.kernels.loops` (the compiled loops) and
:mod:`~sbpbench.kernels.spec` (:class:`KernelSpec`, what kernel to use).
"""

from sbpbench.kernels.kernel import Kernel
from sbpbench.kernels.spec import KernelSpec
from sbpbench.kernels.storage import memory_needs, named_arrays, read_only

__all__ = ["Kernel", "KernelSpec", "memory_needs", "named_arrays", "read_only"]
