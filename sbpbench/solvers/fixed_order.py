"""What SvmSgd and SGD-QN share: a fixed order of the examples, single precision, a calibration.

The SGD paper (``papers/sgd-primal-l1svm-revisited.md``, before Table 8) runs Bottou's SvmSgd
and Bordes et al.'s SGD-QN "in single precision" and says: "SvmSgd and SGD-QN do not perform
random permutations of the dataset but rather assume that it has already been shuffled. Thus,
we provided them with the dataset produced by SGD-m as a result of the first random
permutation of the dataset given. The fact that the computational cost of the random
permutation is not included in the runtime of SvmSgd and SGD-QN gives these algorithms a
certain advantage". So :class:`FixedOrderSGD`:

* draws from SGD-m's random stream (``random_stream = "sgd-m"``): the runner gives it the
  generator SGD-m gets for the same experiment seed and run, and it draws
  ``rng.permutation(n)`` once, when it is made (outside the training clock, as in the paper):
  the permutation SGD-m draws for its first pass. Every epoch visits the examples in that
  order, as both programs read their (already shuffled) training file;
* keeps its weights, and a copy of the feature values, in the dtype of its ``precision``
  (:class:`~sbpbench.solvers.linear.PrecisionParams`); the scalars of the algorithms (step
  sizes, counters, scale factors) stay in double precision, and inner products are summed in
  double precision of single-precision products, as the C++ programs (``float`` vectors,
  ``double`` accumulators) do. Snapshots are measured in double precision;
* runs its own calibration (SvmSgd's choice of ``eta0``, SGD-QN's of ``t0``) where its
  program does, inside or outside its clock: SvmSgd at the start of its first step, in the
  training time (sgd 2.x times its ``determineEta0``), SGD-QN when it is made (libsgdqn 1.1
  starts its clock after its ``determine_t0``). The inner products a calibration computes are
  reported in the column ``calibration_products`` and are not iterations.

Neither has a stopping rule: they run to the budget. One iteration is one example presented
(one sparse inner product with the weights); an epoch is ``n`` iterations, and a step stops
exactly at the iteration limit (in the middle of an epoch if need be).
"""

from __future__ import annotations

from typing import TypeVar

import numba
import numpy as np

from sbpbench.problem import Problem
from sbpbench.solvers.base import Snapshot
from sbpbench.solvers.linear import LinearSolver, PrecisionParams, sparse_dot

PP = TypeVar("PP", bound=PrecisionParams)


@numba.njit(cache=True)
def sample_cost(indptr, indices, values, y, rows, w, scale, lam):
    """The objective both programs use to calibrate, on the examples ``rows``:
    ``mean_i hinge(y_i <w, x_i> / scale) + lambda/2 ||w / scale||^2`` (in double precision).

    Parameters
    ----------
    indptr, indices, values : numpy.ndarray
        CSR arrays of the features.
    y : numpy.ndarray
        Labels in {-1, +1}.
    rows : numpy.ndarray
        The examples of the sample.
    w : numpy.ndarray
        The (scaled) weights.
    scale : float
        The divisor of ``w`` (1 for unscaled weights).
    lam : float
        lambda.

    Returns
    -------
    float
    """
    loss = 0.0
    for r in range(rows.shape[0]):
        i = rows[r]
        z = y[i] * sparse_dot(indptr, indices, values, i, w) / scale
        if z < 1.0:
            loss += 1.0 - z
    norm2 = 0.0
    for j in range(w.shape[0]):
        norm2 += float(w[j]) * float(w[j])
    return loss / rows.shape[0] + 0.5 * lam * norm2 / scale / scale


class FixedOrderSGD(LinearSolver[PP]):
    """Base of SvmSgd and SGD-QN (see the module docstring).

    Subclasses implement :meth:`train` (examples in order) and :meth:`weights`, and
    calibrate either in :meth:`calibrate` (at the start of the first step, timed) or when
    they are made (untimed).

    Attributes
    ----------
    order : numpy.ndarray
        The fixed order of the examples (SGD-m's first permutation).
    values : numpy.ndarray
        The feature values of ``data`` in the dtype of ``precision``.
    position : int
        The position in ``order`` of the next example.
    calibration_products : int
        Inner products computed by the calibration.
    """

    random_stream = "sgd-m"

    def __init__(self, problem: Problem, rng: np.random.Generator, params: PP | None = None):
        super().__init__(problem, rng, params)
        self.order = self.rng.permutation(self.n)
        self.values = self.data.astype(self.params.dtype, copy=False)
        self.position = 0
        self.calibrated = False
        self.calibration_products = 0

    def calibrate(self) -> None:
        """The calibration done at the start of the first step, in the training time (none by default)."""

    def train(self, rows: np.ndarray, epoch_start: bool) -> None:
        """Present the examples ``rows`` in order (``epoch_start``: the first of an epoch)."""
        raise NotImplementedError

    def weights(self) -> np.ndarray:
        """The current weight vector in double precision."""
        raise NotImplementedError

    def sample_cost(self, rows: np.ndarray, w: np.ndarray, scale: float = 1.0) -> float:
        """:func:`sample_cost` of ``w / scale`` on ``rows`` (counts ``len(rows)`` products)."""
        self.calibration_products += rows.size
        return float(sample_cost(self.indptr, self.indices, self.values, self.y, rows, w, scale, self.lam))

    def _step(self, iterations: float, kernel_evals: float) -> bool:
        """The calibration first (once), then examples to the end of the epoch, at most ``iterations``."""
        if not self.calibrated:
            self.calibrate()
            self.calibrated = True
        count = int(min(iterations, self.n - self.position))
        self.train(self.order[self.position:self.position + count], self.position == 0)
        self.position = (self.position + count) % self.n
        self.iteration += count
        return False

    def extra(self) -> dict[str, float]:
        """The solver's own columns (besides ``calibration_products``)."""
        return {}

    def snapshot(self) -> Snapshot:
        return self.linear_snapshot(self.weights(), c_form=True,
                                    extra={"calibration_products": float(self.calibration_products),
                                           **self.extra()})
