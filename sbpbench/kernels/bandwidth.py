"""The Gaussian kernel's sigma^2 from the training data: ``scale`` (scikit-learn's) and ``median``.

A config's ``kernel.sigma2`` may be one of the words of :data:`RULES` instead of a number (and
the estimators' ``sigma2`` may be ``'scale'``): the number is computed from the training
examples once they are loaded (:func:`sigma2_from_data`), before the kernel is made, and
recorded beside the word. The kernel is ``exp(-||x - x'||^2 / (2 sigma2))``, so
``sigma2 = 1/(2 gamma)`` for scikit-learn's ``exp(-gamma ||x - x'||^2)``.

* ``scale``: SVC's ``gamma='scale'``, ``gamma = 1/(n_features X.var())`` (:func:`scale_sigma2`).
* ``median``: half the median squared distance between two training examples
  (:func:`median_sigma2`), the heuristic that makes the kernel of a typical pair
  ``exp(-1)``; on a uniform sample of :data:`MEDIAN_SAMPLE` examples drawn with the fixed seed
  :data:`MEDIAN_SEED` (all examples when there are fewer), over every pair of distinct sampled
  examples, so the same data always give the same number whatever the experiment's seed.

Neither counts kernel evaluations: they read the data, as loading them does, and no kernel
value is computed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

#: Examples sampled for :func:`median_sigma2` (at most ``MEDIAN_SAMPLE (MEDIAN_SAMPLE - 1) / 2`` pairs).
MEDIAN_SAMPLE = 1000
#: Seed of the sample of :func:`median_sigma2` (fixed: the number depends on the data only).
MEDIAN_SEED = 0


def scale_sigma2(X: Any) -> float:
    """``sigma2`` of SVC's ``gamma='scale'``: ``n_features X.var() / 2`` (0.5, gamma 1, for constant ``X``).

    ``gamma = 1/(n_features X.var())`` in ``exp(-gamma ||x - x'||^2)``, and our Gaussian kernel is
    ``exp(-||x - x'||^2 / (2 sigma2))``, so ``sigma2 = 1/(2 gamma)``; ``X.var()`` is the variance of
    all its entries (of a sparse ``X`` as if dense), as scikit-learn computes it.
    """
    with np.errstate(over="ignore"):  # an infinite variance is refused where it is used
        var = float(X.multiply(X).mean() - X.mean() ** 2) if sp.issparse(X) else float(X.var())
    return X.shape[1] * var / 2.0 if var != 0 else 0.5


def median_sigma2(X: Any) -> float:
    """Half the median squared distance between two distinct examples of a sample of ``X``.

    Parameters
    ----------
    X : {numpy.ndarray, scipy.sparse matrix} of shape (n, d)
        The training examples (at least two).

    Returns
    -------
    float
        ``median_{i<j} ||x_i - x_j||^2 / 2`` over the :data:`MEDIAN_SAMPLE` examples (all of them
        when fewer) drawn without replacement with seed :data:`MEDIAN_SEED`; 0 when most pairs
        are duplicates (then refused where it is used).
    """
    n = X.shape[0]
    rows = np.sort(np.random.default_rng(MEDIAN_SEED).choice(n, size=min(n, MEDIAN_SAMPLE), replace=False))
    S = X[rows]
    S = S.toarray() if sp.issparse(S) else np.asarray(S, dtype=np.float64)
    norms = np.einsum("ij,ij->i", S, S)
    upper = np.triu_indices(S.shape[0], k=1)
    squared = (norms[:, None] + norms[None, :] - 2.0 * (S @ S.T))[upper]
    return float(np.median(np.maximum(squared, 0.0))) / 2.0


#: The words ``kernel.sigma2`` may be, and how each computes sigma2 from the training examples.
RULES: dict[str, Callable[[Any], float]] = {"scale": scale_sigma2, "median": median_sigma2}


def sigma2_from_data(rule: str, X: Any) -> float:
    """sigma2 by rule ``rule`` (a key of :data:`RULES`) on training examples ``X``.

    Raises
    ------
    ValueError
        When the rule gives no finite positive number on these data (constant or duplicate
        examples, overflowing values), naming the rule and the value.
    """
    value = RULES[rule](X)
    if not (np.isfinite(value) and value > np.finfo(np.float64).tiny):
        raise ValueError(f"'{rule}' gives sigma2 = {value!r} on these training examples; give a number")
    return float(value)
