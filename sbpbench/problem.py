"""The optimization problem handed to a solver: data, counting kernel and parameters.

Names from the SBP paper: ``lam`` is lambda of the regularized Problem 2.2
(``lambda/2 ||w||^2 + mean hinge loss``); ``nu`` is the slack budget of the
slack-constrained Problem 2.3 (total slack at most ``n nu`` with ``||w|| <= 1``);
``bias`` adds an unregularized bias b to the predictor ``<w, Phi(x)> + b``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from sbpbench.data.split import Split
from sbpbench.kernels import Kernel, KernelSpec, named_arrays, read_only
from sbpbench.params import Params, fraction, param, positive


@dataclass(frozen=True)
class ProblemParams(Params):
    """The problem's parameters, declared once (:mod:`sbpbench.params`).

    A config's ``problem`` section (where ``lam`` is written ``lambda``, and may also be an
    expression in ``n``; ``nu`` may also be ``from_lambda``) and the estimators' problem
    parameters read these declarations; a :class:`Problem` holds the values that result (lambda
    from ``C`` made ``1/(C n)``).
    """

    lam: float | None = param(None, "lambda of the regularized problem lambda/2 ||w||^2 + mean hinge loss",
                              check=positive)
    C: float | None = param(None, "instead of lambda: lambda = 1/(C n) for n training examples (LIBSVM's C)",
                            check=positive)
    nu: float | None = param(None, "nu of the slack-constrained problem: total slack at most n nu with ||w|| <= 1",
                             check=fraction)
    bias: bool = param(False, "an unregularized bias b in the predictor <w, Phi(x)> + b; else b = 0")


def wrote_read_only(exc: BaseException) -> bool:
    """Whether ``exc`` refuses a write into a read-only array: numpy's ``ValueError`` (``assignment
    destination is read-only``, ``output array is read-only``) or numba's typing error of a compiled
    function that assigns into a read-only array."""
    text = str(exc)
    return ((isinstance(exc, ValueError) and "read-only" in text)
            or (type(exc).__name__ == "TypingError" and "setitem(readonly array" in text))


#: The data attributes of a :class:`Problem` (besides its kernel's), read-only once it is made.
DATA = ("y", "test_X", "test_y", "validation_X", "validation_y", "weights")


@dataclass
class Problem:
    """A binary SVM problem: training data behind a counting kernel, and its parameters.

    Every array of data it holds is read-only (:meth:`arrays`): made so when it is made, as
    read-only views (the arrays it was given keep their own flags), and its data attributes
    (:data:`DATA`) cannot be replaced, so that a solver writing into the data one problem gives
    every run (``problem.y *= -1``, ``problem.y = -problem.y``) fails its own run at once
    instead of changing the runs after it.

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
    validation_X, validation_y
        Held-out training examples (in the kernel's storage format) and labels, on which the
        runner measures a validation error (None without a validation split).
    weights : numpy.ndarray or None
        Per-example weights of the hinge losses (scikit-learn's ``sample_weight``):
        Problem 2.2 becomes ``lambda/2 ||w||^2 + (1/n) sum_i weights_i hinge_i``, whose dual box
        is ``0 <= alpha_i <= weights_i / (lambda n)``. Only solvers with ``supports_weights``
        take them (the estimators pass them; a config never sets them); None: all 1.
    """

    kernel: Kernel
    y: np.ndarray
    test_X: object
    test_y: np.ndarray
    lam: float | None
    nu: float | None
    bias: bool
    validation_X: object = None
    validation_y: np.ndarray | None = None
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in DATA:
            object.__setattr__(self, name, read_only(getattr(self, name)))

    def __setattr__(self, name: str, value: Any) -> None:
        """Refuse to replace a data attribute once set (``problem.y = -problem.y`` would change the
        data of every later run as a write into it would); the others are set as usual."""
        if name in DATA and name in self.__dict__:
            raise ValueError(f"problem.{name} is read-only: the same problem serves every run (copy it to "
                             "change it)")
        super().__setattr__(name, value)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array of data a solver is handed, by the name it reaches it by (``problem.y``,
        ``problem.test_X.data``, ``problem.kernel.X.indices``, ...); all read-only.

        Returns
        -------
        dict of str to numpy.ndarray
        """
        found = {f"problem.{name}": a for name, a in named_arrays(self, DATA).items()}
        found.update({f"problem.kernel.{name}": a for name, a in self.kernel.arrays().items()})
        return found

    @property
    def n(self) -> int:
        """Number of training examples."""
        return self.kernel.n

    @classmethod
    def build(cls, train: Split, test: Split, kernel: KernelSpec, lam: float | None,
              nu: float | None, bias: bool, validation: Split | None = None) -> Problem:
        """Make the counting kernel over ``train`` and store ``test`` (and ``validation``) in the same format."""
        k = Kernel(train.X, kernel)
        held = (k.prepare(validation.X), np.asarray(validation.y, dtype=np.float64)) if validation else (None, None)
        return cls(k, np.ascontiguousarray(train.y, dtype=np.float64), k.prepare(test.X),
                   np.asarray(test.y, dtype=np.float64), lam, nu, bias, *held)

    def subset(self, rows: np.ndarray, test_rows: np.ndarray) -> Problem:
        """The same problem (lambda, nu, bias) on some of its training and test points (without validation points).

        The kernel keeps this problem's storage (:meth:`~sbpbench.kernels.Kernel.subset`), so a
        solver on the subset runs the same compiled code with the same argument types; the
        arrays are copies, and the counters and cache the subset's own.

        Parameters
        ----------
        rows, test_rows : numpy.ndarray of int
            Indices of training and test points.

        Returns
        -------
        Problem
        """
        return Problem(self.kernel.subset(rows), self.y[rows], cast(Any, self.test_X)[test_rows],
                       self.test_y[test_rows], self.lam, self.nu, self.bias,
                       weights=None if self.weights is None else self.weights[rows])

    def hinge_objective(self, responses: np.ndarray, norm2: float) -> float | None:
        """Objective of Problem 2.2 from margins ``y_i f(x_i)`` and ``||w||^2`` (None without lambda),
        its losses weighted by :attr:`weights` when set."""
        if self.lam is None:
            return None
        losses = np.maximum(0.0, 1.0 - responses)
        return 0.5 * self.lam * norm2 + float((losses if self.weights is None else self.weights * losses).mean())
