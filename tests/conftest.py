"""Shared fixtures: small real-data problems from the bundled Adult copy."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from sbpbench.data import DatasetSpec, load
from sbpbench.kernels import KernelSpec
from sbpbench.problem import Problem

# The suite never touches the internet: downloads only from loopback mirrors, into a scratch
# cache (set at import so that subprocesses started by tests inherit it too).
os.environ["SBPBENCH_OFFLINE"] = "1"
os.environ["SBPBENCH_DATA"] = tempfile.mkdtemp(prefix="sbpbench-test-data-")
os.environ.pop("SBPBENCH_MIRROR", None)

#: The shared folder beside the checkout (real dataset copies); CI has it, users may not.
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def adult_small():
    """300 training and 500 test rows of the real Adult data (bundled a9a)."""
    return load(DatasetSpec(name="adult", n_train=300, n_test=500), np.random.default_rng(7))


def make_problem(split_pair, sigma2=10.0, lam=None, nu=None, bias=False, cache_mb=0.0, kernel="gaussian"):
    """A Problem over a (train, test) pair with the given parameters."""
    train, test = split_pair
    return Problem.build(train, test, KernelSpec(kernel, sigma2, cache_mb), lam, nu, bias)
