"""Test session set-up: no internet, a scratch dataset cache, a small real Adult sample and a tiny run."""

from __future__ import annotations

import os
import tempfile

import numba
import numpy as np
import pytest

# The suite never touches the internet: downloads only from loopback mirrors, into a scratch
# cache (set at import so that subprocesses started by tests inherit it too).
os.environ["SBPBENCH_OFFLINE"] = "1"
os.environ["SBPBENCH_DATA"] = tempfile.mkdtemp(prefix="sbpbench-test-data-")
os.environ.pop("SBPBENCH_MIRROR", None)


@pytest.fixture(scope="session")
def adult_small():
    """300 training and 500 test rows of the real Adult data (bundled a9a)."""
    from sbpbench.data.split import subsample
    from tests.problems import bundled

    train, test = bundled()
    rng = np.random.default_rng(7)
    return subsample(train, 300, rng), subsample(test, 500, rng)


@pytest.fixture(scope="module")
def one_numba_thread():
    """Tiny problems run faster on one thread on a busy machine; results do not depend on it."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_run(one_numba_thread, tmp_path_factory):
    """The config of the experiment ``tiny`` (:func:`tests.experiments.adult_config`) and its run
    folder, run in this process: the reference that runs made otherwise are compared with."""
    from tests.experiments import run_sequentially, write_adult_config

    folder = tmp_path_factory.mktemp("reference")
    path = write_adult_config(folder)
    return path, run_sequentially(path, folder / "res")
