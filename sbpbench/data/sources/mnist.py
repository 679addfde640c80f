"""MNIST (LeCun, Cortes, Burges): the digit 8 against the rest, as in the SBP paper.

The four IDX files come from the ossci-datasets and cvdf-datasets mirrors (yann.lecun.com
answers 403). ``mnist`` uses the 60000 training and 10000 test images; ``mnist-t10k`` is the
stated substitute for machines without the training images, a fixed 7000 / 3000 split of the
test images.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from sbpbench.data.convert import read_data
from sbpbench.data.fetch import Digest, RemoteFile
from sbpbench.data.registry import Arrays, Dataset, register
from sbpbench.errors import UserError

MIRRORS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "https://storage.googleapis.com/cvdf-datasets/mnist/")
TORCHVISION = "md5 of the canonical .gz used by torchvision"
CANON = "sha256 of the content whose md5 is canonical"
#: The digit that is the positive class.
POSITIVE_DIGIT = 8
#: Seed of the fixed random split of MNIST's test images used by ``mnist-t10k``.
MNIST_T10K_SPLIT_SEED = 2012


def read_idx(path: Path, magic: int) -> np.ndarray:
    """Read an IDX file (big-endian header: magic, then one uint32 per dimension) of uint8."""
    data = read_data(path)
    ndim = magic & 0xFF
    if len(data) < 4 + 4 * ndim or int.from_bytes(data[:4], "big") != magic:
        raise UserError(f"{path}: not an IDX file with magic {magic} "
                        f"(got {int.from_bytes(data[:4], 'big') if len(data) >= 4 else 'nothing'})")
    dims = [int.from_bytes(data[4 + 4 * k: 8 + 4 * k], "big") for k in range(ndim)]
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise UserError(f"{path}: expected {int(np.prod(dims))} bytes of data for shape {dims}, got {body.size}")
    return body.reshape(dims)


def mnist_split(images: Path, labels: Path, positive: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """MNIST IDX images and labels as (pixels / 255 in CSR, +1 for ``positive`` else -1)."""
    pixels = read_idx(images, 2051)
    digits = read_idx(labels, 2049)
    if pixels.shape[0] != digits.shape[0]:
        raise UserError(f"{images}: {pixels.shape[0]} images but {labels} has {digits.shape[0]} labels")
    X = sp.csr_matrix(pixels.reshape(pixels.shape[0], -1).astype(np.float64) / 255.0)
    return X, np.where(digits == positive, 1.0, -1.0)


def _file(name: str, size: int, gz_md5: str, content: tuple[Digest, ...] = ()) -> RemoteFile:
    """An IDX file on both mirrors (``size`` bytes as canonical), accepted by the md5 of the
    canonical .gz or by ``content``."""
    return RemoteFile(name, tuple(m + name for m in MIRRORS), (Digest("md5", gz_md5, False, TORCHVISION),) + content,
                      size)


TRAIN_IMAGES = _file("train-images-idx3-ubyte.gz", 9912422, "f68b3c2dcbeaaa9fbdd348bbdeb94873")
TRAIN_LABELS = _file("train-labels-idx1-ubyte.gz", 28881, "d53e105ee54ea40749a09fcbcd1e9432", (Digest(
    "sha256", "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5", True,
    "decompressed labels of a copy with the canonical class counts"),))
TEST_IMAGES = _file("t10k-images-idx3-ubyte.gz", 1648877, "9fb629c4189551a2d022fa330f9573f3", (
    Digest("md5", "2646ac647ad5339dbf082846283269ea", True, "canonical decompressed md5"),
    Digest("sha256", "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7", True, CANON)))
TEST_LABELS = _file("t10k-labels-idx1-ubyte.gz", 4542, "ec29112dd5afa0611ce80d1b7f02629c", (
    Digest("md5", "27ae3e4e09519cfbb04c329615203637", True, "canonical decompressed md5"),
    Digest("sha256", "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2", True, CANON)))


def convert_mnist(paths: dict[str, Path]) -> tuple[Arrays, Arrays]:
    """Converter of ``mnist``: the training and the test images, 8 vs rest."""
    return (mnist_split(paths["train_images"], paths["train_labels"], POSITIVE_DIGIT),
            mnist_split(paths["test_images"], paths["test_labels"], POSITIVE_DIGIT))


def convert_t10k(paths: dict[str, Path]) -> tuple[Arrays, Arrays]:
    """Converter of ``mnist-t10k``: the test images, 8 vs rest, split 7000 / 3000 at random
    (seed :data:`MNIST_T10K_SPLIT_SEED`), each part in file order."""
    X, y = mnist_split(paths["test_images"], paths["test_labels"], POSITIVE_DIGIT)
    order = np.random.default_rng(MNIST_T10K_SPLIT_SEED).permutation(X.shape[0])
    train, test = np.sort(order[:7000]), np.sort(order[7000:])
    return (X[train], y[train]), (X[test], y[test])


register(Dataset(
    "mnist", "MNIST '8' vs rest, 784 pixels scaled to [0, 1] (SBP paper)",
    "MNIST IDX files (LeCun, Cortes, Burges) from the ossci-datasets and cvdf-datasets mirrors "
    "(yann.lecun.com answers 403)", "digit 8 (+1) vs rest (-1)", 784, 60000, 10000,
    {"train_images": TRAIN_IMAGES, "train_labels": TRAIN_LABELS, "test_images": TEST_IMAGES,
     "test_labels": TEST_LABELS},
    convert_mnist,
    notes="pixels / 255 (values in [0, 1]); 5851 training and 974 test eights",
))

register(Dataset(
    "mnist-t10k", "MNIST test images only, '8' vs rest, split 7000 / 3000 (a stated substitute for MNIST)",
    "the MNIST t10k IDX files of the 'mnist' dataset", "digit 8 (+1) vs rest (-1)", 784, 7000, 3000,
    {"test_images": TEST_IMAGES, "test_labels": TEST_LABELS},
    convert_t10k,
    notes=f"a fixed random split (seed {MNIST_T10K_SPLIT_SEED}) of the 10000 test images, for machines "
          "without the 60000 training images; pixels / 255",
))
