"""The optimization problem handed to a solver: data, counting kernel and parameters.

Names from the SBP paper: ``lam`` is lambda of the regularized Problem 2.2
(``lambda/2 ||w||^2 + mean hinge loss``); ``nu`` is the slack budget of the
slack-constrained Problem 2.3 (total slack at most ``n nu`` with ``||w|| <= 1``);
``bias`` adds an unregularized bias b to the predictor ``<w, Phi(x)> + b``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sbpbench.data.split import Split
from sbpbench.kernels import Kernel, KernelSpec


@dataclass
class Problem:
    """A binary SVM problem: training data behind a counting kernel, and its parameters.

    Attributes
    ----------
    kernel : Kernel
        Counting kernel over the training examples.
    y : numpy.ndarray
        Training labels in {-1, +1}.
    test_X, test_y
        Held-out examples (in the kernel's storage format) and labels, for measurement.
    lam : float or None
        lambda of Problem 2.2, when defined.
    nu : float or None
        nu of Problem 2.3, when defined.
    bias : bool
        Whether the predictor has an unregularized bias.
    """

    kernel: Kernel
    y: np.ndarray
    test_X: object
    test_y: np.ndarray
    lam: float | None
    nu: float | None
    bias: bool

    @property
    def n(self) -> int:
        """Number of training examples."""
        return self.kernel.n

    @classmethod
    def build(cls, train: Split, test: Split, kernel: KernelSpec, lam: float | None,
              nu: float | None, bias: bool) -> Problem:
        """Make the counting kernel over ``train`` and store ``test`` in the same format."""
        k = Kernel(train.X, kernel)
        return cls(k, np.ascontiguousarray(train.y, dtype=np.float64), k.prepare(test.X),
                   np.asarray(test.y, dtype=np.float64), lam, nu, bias)

    def hinge_objective(self, responses: np.ndarray, norm2: float) -> float | None:
        """Objective of Problem 2.2 from margins ``y_i f(x_i)`` and ``||w||^2`` (None without lambda)."""
        if self.lam is None:
            return None
        return 0.5 * self.lam * norm2 + float(np.maximum(0.0, 1.0 - responses).mean())
