"""Datasets taken as they are from LIBSVM's binary datasets pages (the SGD paper's, mostly).

LIBSVM's ``a9a`` is ``adult-libsvm``, with the other copies of Adult (:mod:`.adult`).
Where no checksum is published (all but w8a), a file is trusted on first download and
checked against the sha256 recorded then.
"""

from __future__ import annotations

from sbpbench.data.convert import libsvm_as_is
from sbpbench.data.fetch import CHECKED_COPY, Digest, RemoteFile
from sbpbench.data.registry import Dataset, register

LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"


def _page(name: str, description: str, task: str, n_features: int, n_train: int, n_test: int,
          train: str, test: str | None = None, positive: float | None = None, notes: str = "",
          train_sha256: str | None = None, train_size: int | None = None) -> Dataset:
    """A dataset whose ``train`` (and ``test``) file is ``LIBSVM_BINARY + file name``."""
    digests = (Digest("sha256", train_sha256, source=CHECKED_COPY),) if train_sha256 else ()
    files = {"train": RemoteFile(train, (LIBSVM_BINARY + train,), digests, train_size)}
    if test:
        files["test"] = RemoteFile(test, (LIBSVM_BINARY + test,))
    return register(Dataset(
        name, description, f"LIBSVM datasets page: {LIBSVM_BINARY}", task, n_features, n_train, n_test, files,
        libsvm_as_is, positive, notes=notes or ("" if test else "no test set is published: the test split is empty"),
    ))


_page("w8a", "Platt's Web (w8a), 300 binary features (SGD paper)", "+1 vs -1", 300, 49749, 14951, "w8a", "w8a.t",
      train_sha256="b464b4f6ce6a5d9e181ffc793e19a04751036273722312398ef7673705014902", train_size=3478239,
      notes="4203 training rows have no features at all")
_page("real-sim", "real-sim (SGD paper)", "+1 vs -1", 20958, 72309, 0, "real-sim.bz2")
_page("news20", "news20.binary (SGD paper)", "+1 vs -1", 1355191, 19996, 0, "news20.binary.bz2")
_page("covtype-libsvm", "LIBSVM's covtype.binary, features scaled to [0, 1]", "label 1 (+1) vs 2 (-1)", 54, 581012, 0,
      "covtype.libsvm.binary.scale.bz2", positive=1.0)
_page("webspam", "webspam, unigram features (SGD paper)", "+1 vs -1", 254, 350000, 0,
      "webspam_wc_normalized_unigram.svm.bz2")
_page("rcv1-binary", "LIBSVM's rcv1.binary: CCAT+ECAT vs GCAT+MCAT (not the papers' task)",
      "CCAT or ECAT (+1) vs GCAT or MCAT (-1)", 47236, 20242, 677399, "rcv1_train.binary.bz2", "rcv1_test.binary.bz2")
