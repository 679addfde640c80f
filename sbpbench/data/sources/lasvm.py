"""LaSVM's data sets (Bordes, Ertekin, Weston, Bottou 2005): its Adult and its Reuters-21578.

LaSVM published them as tar archives of svmlight text; the files inside are fetched from
the copies in X-DataInitiative/tick-datasets (pinned to one commit), checked byte for byte.
"""

from __future__ import annotations

from pathlib import Path

from sbpbench.data.convert import svmlight_split
from sbpbench.data.fetch import CHECKED_COPY, Digest, RemoteFile
from sbpbench.data.registry import Arrays, Converter, Dataset, register

TICK = "https://raw.githubusercontent.com/X-DataInitiative/tick-datasets/9d959b6e53e17145e93e9849ff1f9f6d2de8ae51/binary/"


def _file(path: str, sha256: str, size: int) -> RemoteFile:
    """The file at ``TICK + path`` (``size`` bytes), stored under its base name."""
    return RemoteFile(path.rpartition("/")[2], (TICK + path,), (Digest("sha256", sha256, source=CHECKED_COPY),),
                      size)


def _svmlight(n_features: int, zero_based: bool) -> Converter:
    """Converter of svmlight ``train`` and ``test`` files (LIBSVM labels, explicit zeros dropped)."""
    def convert(paths: dict[str, Path]) -> tuple[Arrays, Arrays]:
        return (svmlight_split(paths["train"], n_features, zero_based),
                svmlight_split(paths["test"], n_features, zero_based))
    return convert


register(Dataset(
    "adult-lasvm", "LaSVM's Adult (a9a rows, svmlight text with 0-based indices, converted to 1-based)",
    "LaSVM data sets (Bordes, Ertekin, Weston, Bottou 2005), archive "
    "http://leon.bottou.org/_media/papers/lasvm-adult.tar.bz2; fetched from the byte-exact copy in "
    "X-DataInitiative/tick-datasets", "income >50K (+1) vs rest", 123, 32561, 16281,
    {"train": _file("adult/adult.trn.bz2", "73ce74d43bbfc988b08e6ecf738cf5484f19dafa143c31f702f3a8b779d277e5",
                           100554),
     "test": _file("adult/adult.tst.bz2", "bdb2ec9642e77947a67269471506b18bc4dcf03413f44814dc24833432ba818d",
                          50588)},
    _svmlight(123, zero_based=True), notes="indices 0..122 shifted to 1..123; explicit zeros dropped",
))

register(Dataset(
    "reuters", "Reuters-21578 'money-fx' vs rest, LaSVM's tf-idf version (SBP paper)",
    "LaSVM data sets, archive http://leon.bottou.org/_media/papers/lasvm-reuters.tar.bz2; fetched from the "
    "copy in X-DataInitiative/tick-datasets (duplicate feature entries removed there)",
    "money-fx (+1) vs rest (-1)", 8315, 7770, 3299,
    {"train": _file("reuters/reuters.trn.bz2", "e77a3368662c02caebe0d9cbcc97d856019bcfb33a8e9b7c48e0b51ee4cdfb60",
                           3107267),
     "test": _file("reuters/reuters.tst.bz2", "3d699b9644a38160bf3228059d18fbfc07474057d8e82d512576a2b82d72e211",
                          763856)},
    _svmlight(8315, zero_based=False),
    notes="the SBP paper reports 3229 test rows; this copy has 3299",
))
