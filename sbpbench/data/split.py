"""A labelled sample (:class:`Split`) and its uniform subsampling."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class Split:
    """One labelled sample: ``X`` (CSR float64, int32 indices) and ``y`` in {-1, +1}.

    ``provenance`` says which copy of a registered dataset the examples come from (e.g. the
    bundled Adult or a conversion in the cache), for ``meta.json``; None for plain files.
    """

    X: sp.csr_matrix
    y: np.ndarray
    provenance: str | None = None

    @property
    def n(self) -> int:
        """Number of examples."""
        return self.X.shape[0]

    def take(self, idx: np.ndarray) -> Split:
        """The examples at ``idx``, in that order."""
        return Split(self.X[idx], self.y[idx], self.provenance)


def subsample(split: Split, size: int | None, rng: np.random.Generator) -> Split:
    """A uniform random subset of ``size`` examples (all of them when ``size`` is None or larger).

    The kept examples stay in file order, so a subsample of a subsample is stable.
    """
    if size is None or size >= split.n:
        return split
    idx = np.sort(rng.choice(split.n, size=size, replace=False))
    return split.take(idx)
