"""The downloadable datasets: where each comes from, how it is converted, and the cache.

Each :class:`Source` lists its :class:`~sbpbench.data.fetch.RemoteFile` objects and a
converter. :func:`prepare` fetches and converts one dataset into the cache::

    <cache>/downloads/<file>             verified downloads (+ <file>.sha256 records)
    <cache>/<dataset>/train.svm, test.svm  LIBSVM text (deterministic: same input, same bytes)
    <cache>/<dataset>/train.npz, test.npz  the same data as CSR arrays, for fast loading
    <cache>/<dataset>/manifest.json        sha256 of the four files above and of the inputs

The dataset folder is built under a temporary name and renamed into place, under a lock,
so a reader sees either a complete folder with its manifest or none. :func:`load_cached`
checks the ``.npz`` files against the manifest, so a damaged cache is reported, not used.

Checksums: where a checksum is documented it is pinned (see each file's ``Digest.source``);
the other files are trusted on first download and their sha256 is recorded (``datasets
info`` shows which is which).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from sbpbench.data import convert
from sbpbench.data.fetch import (
    DATA_ENV,
    Digest,
    FetchOptions,
    RemoteFile,
    cache_dir,
    fetch_file,
    file_lock,
    sha256_of,
    verify_download,
)
from sbpbench.data.libsvm import Split, read_libsvm, to_binary
from sbpbench.errors import UserError

#: A converted split: LIBSVM text, or (CSR features, labels in {-1, +1}).
SplitData = Union[bytes, tuple[sp.csr_matrix, np.ndarray]]
#: A converter gets the fetched files by role and returns the train and test split
#: (test None when the source has no test set).
Converter = Callable[[dict[str, Path]], tuple[SplitData, SplitData | None]]
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Source:
    """A dataset that is downloaded and converted.

    Parameters
    ----------
    name, description, origin, task : str
        Registry name, one-line description, provenance (papers, pages), and the binary task.
    n_features : int
        Number of features of the converted data.
    n_train, n_test : int
        Expected numbers of examples (checked after conversion; ``n_test`` 0 = no test set).
    files : dict of str to RemoteFile
        The files to fetch, by role (the converter's keys).
    convert : callable
        See :data:`Converter`.
    positive : float, optional
        For LIBSVM text: the raw label that becomes +1 (default: the larger of two).
    members : dict of str to str
        Roles whose file is a tar archive: the member to extract.
    notes : str
        Scaling, splits and other choices, shown by ``datasets info``.
    """

    name: str
    description: str
    origin: str
    task: str
    n_features: int
    n_train: int
    n_test: int
    files: dict[str, RemoteFile]
    convert: Converter = field(repr=False)
    positive: float | None = None
    members: dict[str, str] = field(default_factory=dict)
    notes: str = ""


#: Every downloadable dataset by name.
SOURCES: dict[str, Source] = {}


def add_source(source: Source) -> Source:
    """Add ``source`` to :data:`SOURCES` (and to the dataset registry, see registry.py)."""
    if source.name in SOURCES:
        raise ValueError(f"source {source.name!r} added twice")
    SOURCES[source.name] = source
    return source


# ----------------------------------------------------------------------------- cache


def dataset_dir(name: str, root: Path | None = None) -> Path:
    """The folder of a converted dataset."""
    return (root or cache_dir()) / name


def read_manifest(name: str, root: Path | None = None) -> dict | None:
    """The dataset's manifest, or None when it is not (completely) converted."""
    try:
        return json.loads((dataset_dir(name, root) / "manifest.json").read_text())
    except (OSError, ValueError):
        return None


def is_cached(name: str, root: Path | None = None) -> bool:
    """Whether ``name`` is converted in the cache."""
    return read_manifest(name, root) is not None


def disk_size(name: str, root: Path | None = None) -> int:
    """Bytes used by the converted dataset (downloads not included)."""
    folder = dataset_dir(name, root)
    return sum(p.stat().st_size for p in folder.glob("*") if p.is_file()) if folder.is_dir() else 0


def _save_npz(path: Path, X: sp.csr_matrix, y: np.ndarray) -> None:
    """Write CSR arrays and labels as an ``.npz`` with fixed timestamps (same data, same bytes)."""
    arrays = {"data": X.data, "indices": X.indices.astype(np.int32), "indptr": X.indptr.astype(np.int64),
              "shape": np.array(X.shape, dtype=np.int64), "y": np.asarray(y, dtype=np.float64)}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0)), buf.getvalue())


def _load_npz(path: Path) -> Split:
    with np.load(path, allow_pickle=False) as z:
        X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        return Split(X, z["y"], f"cached conversion in {path.parent.resolve()}")


def _write_split(folder: Path, role: str, data: SplitData, source: Source) -> int:
    """Write ``role``.svm and ``role``.npz; return the number of examples."""
    svm = folder / f"{role}.svm"
    if isinstance(data, bytes):
        svm.write_bytes(data)
        X, labels = read_libsvm(data, f"{source.name} {role}", source.n_features)
        y = to_binary(labels, f"{source.name} {role}", source.positive)[0]
    else:
        X, y = data
        X = sp.csr_matrix(X)
        if X.shape[1] != source.n_features:
            raise UserError(f"{source.name} {role}: converted data has {X.shape[1]} features, "
                            f"expected {source.n_features}")
        with open(svm, "wb") as fh:
            dump_svmlight_file(X, y, fh, zero_based=False)
    X.indices = X.indices.astype(np.int32, copy=False)
    _save_npz(folder / f"{role}.npz", X, y)
    return X.shape[0]


def prepare(name: str, options: FetchOptions | None = None, root: Path | None = None, force: bool = False) -> Path:
    """Fetch, verify and convert dataset ``name`` into the cache (nothing to do if cached).

    Parameters
    ----------
    name : str
        A key of :data:`SOURCES`.
    options : FetchOptions, optional
        Mirror, timeouts, retries.
    root : pathlib.Path, optional
        Cache folder (default :func:`~sbpbench.data.fetch.cache_dir`).
    force : bool
        Convert again even when cached (downloads that still verify are reused, damaged ones
        are fetched again).

    Returns
    -------
    pathlib.Path
        The dataset folder.
    """
    source = SOURCES[name]
    root = root or cache_dir()
    final = dataset_dir(name, root)
    try:
        (root / "downloads").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{root}: cannot create the dataset cache ({exc.strerror}); set {DATA_ENV}") from None
    with file_lock(root / ".locks" / f"{name}.dataset.lock"):
        if is_cached(name, root) and not force:
            return final
        if force:  # drop damaged downloads so that they are fetched again
            for remote in source.files.values():
                path = paths_in_cache(remote, root)
                if path.exists() and verify_download(remote, path):
                    path.unlink()
        paths = {role: fetch_file(remote, options, root) for role, remote in source.files.items()}
        tmp = root / f".{name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            for role, member in source.members.items():
                paths[role] = convert.extract_member(paths[role], member, tmp / "extracted")
            train, test = source.convert(paths)
            counts = {"train": _write_split(tmp, "train", train, source)}
            if test is not None:
                counts["test"] = _write_split(tmp, "test", test, source)
            shutil.rmtree(tmp / "extracted", ignore_errors=True)
            expected = {"train": source.n_train, "test": source.n_test}
            for role, count in counts.items():
                if count != expected[role]:
                    raise UserError(f"{name}: converted {role} split has {count} examples, expected "
                                    f"{expected[role]} (the downloaded files are not the expected version)")
            manifest = {
                "version": MANIFEST_VERSION, "dataset": name, "n_features": source.n_features,
                "counts": counts,
                "inputs": {remote.name: sha256_of(paths_in_cache(remote, root)) for remote in source.files.values()},
                "files": {p.name: sha256_of(p) for p in sorted(tmp.iterdir())},
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def paths_in_cache(remote: RemoteFile, root: Path | None = None) -> Path:
    """Where a download lives in the cache."""
    return (root or cache_dir()) / "downloads" / remote.name


def load_cached(name: str, root: Path | None = None) -> tuple[Split, Split]:
    """Load a converted dataset, checking its ``.npz`` files against the manifest.

    A source without a test set gives an empty test split. The splits' ``provenance``
    names the folder they were loaded from.

    Raises
    ------
    UserError
        If the dataset is not cached or a file does not match its manifest.
    """
    manifest = read_manifest(name, root)
    folder = dataset_dir(name, root)
    if manifest is None:
        raise UserError(f"dataset {name!r} is not in the cache {folder.parent} (run: sbpbench datasets fetch {name})")
    splits = []
    for role in ("train", "test"):
        filename = f"{role}.npz"
        if filename not in manifest["files"]:
            splits.append(Split(sp.csr_matrix((0, manifest["n_features"])), np.zeros(0)))
            continue
        path = folder / filename
        problem = _check(path, manifest["files"][filename])
        if problem:
            raise UserError(f"{problem}; the cache is damaged (run: sbpbench datasets fetch --force {name})")
        splits.append(_load_npz(path))
    return splits[0], splits[1]


def _check(path: Path, expected: str) -> str | None:
    if not path.exists():
        return f"{path}: missing"
    actual = sha256_of(path)
    return None if actual == expected else f"{path}: sha256 {actual}, manifest says {expected}"


@dataclass(frozen=True)
class FileState:
    """One file of a dataset in the cache: ``state`` is ``ok``, ``missing``, ``partial`` (a
    ``.part`` file left by an interrupted download) or ``damaged``; ``detail`` says more."""

    path: Path
    state: str
    detail: str = ""

    def describe(self) -> str:
        """``name: state (detail)``."""
        return f"{self.path.name}: {self.state}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class CacheState:
    """What :func:`verify` found for one dataset: whether it is converted, and every file's state."""

    name: str
    converted: bool
    files: tuple[FileState, ...]

    @property
    def verdict(self) -> str:
        """``ok``, ``DAMAGED (files)`` or ``INCOMPLETE (what is missing)``.

        Missing downloads of a converted dataset are fine (loading needs only the converted
        files); any damaged file or leftover partial download is not.
        """
        damaged = [f.path.name for f in self.files if f.state == "damaged"]
        if damaged:
            return f"DAMAGED ({', '.join(damaged)})"
        missing = [f.path.name for f in self.files if f.state == "missing" and not self.converted]
        partial = [f.path.name for f in self.files if f.state == "partial"]
        gaps = ([f"missing {', '.join(missing)}"] if missing else []) + \
               ([f"partial download {', '.join(partial)}"] if partial else [])
        if not gaps and not self.converted:
            gaps = ["downloaded, not converted"]
        return f"INCOMPLETE ({'; '.join(gaps)})" if gaps else "ok"

    @property
    def ok(self) -> bool:
        """Whether the dataset is complete and undamaged."""
        return self.verdict == "ok"


def _part(remote: RemoteFile, root: Path | None = None) -> Path:
    """Where an interrupted download of ``remote`` leaves its bytes."""
    path = paths_in_cache(remote, root)
    return path.with_name(path.name + ".part")


def verify(name: str, root: Path | None = None) -> CacheState:
    """Re-check a dataset's downloads (and partial downloads) and its converted files."""
    manifest = read_manifest(name, root)
    files = []
    for remote in SOURCES[name].files.values():
        path, part = paths_in_cache(remote, root), _part(remote, root)
        if part.exists():
            files.append(FileState(part, "partial", f"{part.stat().st_size} bytes left by an interrupted download"))
        if not path.exists():
            files.append(FileState(path, "missing", "not needed: the dataset is converted" if manifest else ""))
        elif problem := verify_download(remote, path):
            files.append(FileState(path, "damaged", problem.removeprefix(f"{path}: ")))
        else:
            files.append(FileState(path, "ok"))
    for filename, sha in (manifest or {}).get("files", {}).items():
        path = dataset_dir(name, root) / filename
        problem = _check(path, sha)
        files.append(FileState(path, "damaged", problem.removeprefix(f"{path}: ")) if problem else FileState(path, "ok"))
    return CacheState(name, manifest is not None, tuple(files))


def in_cache(name: str, root: Path | None = None) -> bool:
    """Whether the cache holds anything of ``name``: its converted folder, or a download
    (complete or partial) that no converted dataset uses (``mnist-t10k`` shares ``mnist``'s files)."""
    if is_cached(name, root):
        return True
    used = {remote.name for other, source in SOURCES.items() if other != name and is_cached(other, root)
            for remote in source.files.values()}
    return any(path.exists() for remote in SOURCES[name].files.values() if remote.name not in used
               for path in (paths_in_cache(remote, root), _part(remote, root)))


# ----------------------------------------------------------------------------- the datasets

LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"
TICK = "https://raw.githubusercontent.com/X-DataInitiative/tick-datasets/9d959b6e53e17145e93e9849ff1f9f6d2de8ae51/binary/"
MNIST_MIRRORS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "https://storage.googleapis.com/cvdf-datasets/mnist/")
LYRL = "http://www.ai.mit.edu/projects/jmlr/papers/volume5/lewis04a/"
FIGSHARE = "https://ndownloader.figshare.com/files/"
SHARED = "byte-exact copy checked for sbpbench (shared/datasets/SHA256SUMS)"
SKLEARN = "scikit-learn's pinned checksum of its figshare mirror"
TORCHVISION = "md5 of the canonical .gz used by torchvision"
CANON = "sha256 of the content whose md5 is canonical"


def _sha(hexdigest: str, source: str = SHARED, content: bool = False) -> Digest:
    return Digest("sha256", hexdigest, content, source)


def _text(role: str) -> Callable[[dict[str, Path]], bytes]:
    return lambda paths: convert.read_data(paths[role])


def _libsvm(name: str, description: str, task: str, n_features: int, n_train: int, n_test: int,
            train: RemoteFile, test: RemoteFile | None = None, positive: float | None = None,
            notes: str = "") -> Source:
    """A dataset taken as is from LIBSVM's datasets pages (decompressed)."""
    files = {"train": train} | ({"test": test} if test else {})
    return Source(name, description, f"LIBSVM datasets page: {LIBSVM_BINARY}", task, n_features, n_train, n_test,
                  files, lambda p: (_text("train")(p), _text("test")(p) if test else None), positive,
                  notes=notes or ("no test set is published: the test split is empty" if not test else ""))


def _adult(paths: dict[str, Path]) -> tuple[bytes, bytes]:
    return tuple(convert.adult_to_libsvm(convert.read_data(paths[r]), paths[r].name)  # type: ignore[return-value]
                 for r in ("train", "test"))


add_source(Source(
    "adult", "UCI Adult (census income > 50K), Platt's 123 binary features (= LIBSVM a9a)",
    "UCI Machine Learning Repository, Adult (Kohavi 1996), encoded as Platt (1998)",
    "income >50K (+1) vs <=50K (-1)", convert.ADULT_FEATURES, 32561, 16281,
    {"train": RemoteFile("adult.data", (UCI + "adult/adult.data",),
                         (_sha("5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),)),
     "test": RemoteFile("adult.test", (UCI + "adult/adult.test",),
                        (_sha("a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"),))},
    _adult,
    notes="Platt's encoding (sbpbench.data.convert.ADULT_ENCODING) reproduces a9a / a9a.t byte for byte; "
          "a9a.t never uses feature 123. The SBP paper reports 31562 / 16282 rows for its copy.",
))

add_source(_libsvm(
    "adult-libsvm", "LIBSVM's a9a / a9a.t (Adult, Platt's 123 binary features)", "income >50K (+1) vs rest",
    123, 32561, 16281,
    RemoteFile("a9a", (LIBSVM_BINARY + "a9a",),
               (_sha("f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906"),)),
    RemoteFile("a9a.t", (LIBSVM_BINARY + "a9a.t",),
               (_sha("1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9"),)),
    notes="a9a.t never uses feature 123; loaded with n_features=123",
))


def _lasvm(n_features: int) -> Converter:
    return lambda paths: tuple(convert.svmlight_split(paths[r], n_features, zero_based=True)  # type: ignore
                               for r in ("train", "test"))


add_source(Source(
    "adult-lasvm", "LaSVM's Adult (a9a rows, svmlight text with 0-based indices, converted to 1-based)",
    "LaSVM data sets (Bordes, Ertekin, Weston, Bottou 2005), archive "
    "http://leon.bottou.org/_media/papers/lasvm-adult.tar.bz2; fetched from the byte-exact copy in "
    "X-DataInitiative/tick-datasets", "income >50K (+1) vs rest", 123, 32561, 16281,
    {"train": RemoteFile("adult.trn.bz2", (TICK + "adult/adult.trn.bz2",),
                         (_sha("73ce74d43bbfc988b08e6ecf738cf5484f19dafa143c31f702f3a8b779d277e5"),)),
     "test": RemoteFile("adult.tst.bz2", (TICK + "adult/adult.tst.bz2",),
                        (_sha("bdb2ec9642e77947a67269471506b18bc4dcf03413f44814dc24833432ba818d"),))},
    _lasvm(123), notes="indices 0..122 shifted to 1..123; explicit zeros dropped",
))

add_source(Source(
    "reuters", "Reuters-21578 'money-fx' vs rest, LaSVM's tf-idf version (SBP paper)",
    "LaSVM data sets, archive http://leon.bottou.org/_media/papers/lasvm-reuters.tar.bz2; fetched from the "
    "copy in X-DataInitiative/tick-datasets (duplicate feature entries removed there)",
    "money-fx (+1) vs rest (-1)", 8315, 7770, 3299,
    {"train": RemoteFile("reuters.trn.bz2", (TICK + "reuters/reuters.trn.bz2",),
                         (_sha("e77a3368662c02caebe0d9cbcc97d856019bcfb33a8e9b7c48e0b51ee4cdfb60"),)),
     "test": RemoteFile("reuters.tst.bz2", (TICK + "reuters/reuters.tst.bz2",),
                        (_sha("3d699b9644a38160bf3228059d18fbfc07474057d8e82d512576a2b82d72e211"),))},
    lambda paths: tuple(convert.svmlight_split(paths[r], 8315, zero_based=False)  # type: ignore
                        for r in ("train", "test")),
    notes="the SBP paper reports 3229 test rows; this copy has 3299",
))


def _mnist_file(name: str, gz_md5: str, content: tuple[Digest, ...]) -> RemoteFile:
    return RemoteFile(name, tuple(m + name for m in MNIST_MIRRORS), (Digest("md5", gz_md5, False, TORCHVISION),) + content)


add_source(Source(
    "mnist", "MNIST '8' vs rest, 784 pixels scaled to [0, 1] (SBP paper)",
    "MNIST IDX files (LeCun, Cortes, Burges) from the ossci-datasets and cvdf-datasets mirrors "
    "(yann.lecun.com answers 403)", "digit 8 (+1) vs rest (-1)", 784, 60000, 10000,
    {"train_images": _mnist_file("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873", ()),
     "train_labels": _mnist_file("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432", (
         _sha("65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5", content=True,
              source="decompressed labels of a copy with the canonical class counts"),)),
     "test_images": _mnist_file("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3", (
         Digest("md5", "2646ac647ad5339dbf082846283269ea", True, "canonical decompressed md5"),
         _sha("0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7", content=True, source=CANON))),
     "test_labels": _mnist_file("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c", (
         Digest("md5", "27ae3e4e09519cfbb04c329615203637", True, "canonical decompressed md5"),
         _sha("ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2", content=True, source=CANON)))},
    lambda p: (convert.mnist_split(p["train_images"], p["train_labels"], 8),
               convert.mnist_split(p["test_images"], p["test_labels"], 8)),
    notes="pixels / 255 (values in [0, 1]); 5851 training and 974 test eights",
))


#: Seed of the fixed random split of MNIST's test images used by ``mnist-t10k``.
MNIST_T10K_SPLIT_SEED = 2012


def _mnist_t10k(paths: dict[str, Path]):
    X, y = convert.mnist_split(paths["test_images"], paths["test_labels"], 8)
    order = np.random.default_rng(MNIST_T10K_SPLIT_SEED).permutation(X.shape[0])
    train, test = np.sort(order[:7000]), np.sort(order[7000:])
    return (X[train], y[train]), (X[test], y[test])


add_source(Source(
    "mnist-t10k", "MNIST test images only, '8' vs rest, split 7000 / 3000 (a stated substitute for MNIST)",
    "the MNIST t10k IDX files of the 'mnist' dataset", "digit 8 (+1) vs rest (-1)", 784, 7000, 3000,
    {"test_images": SOURCES["mnist"].files["test_images"], "test_labels": SOURCES["mnist"].files["test_labels"]},
    _mnist_t10k,
    notes=f"a fixed random split (seed {MNIST_T10K_SPLIT_SEED}) of the 10000 test images, for machines "
          "without the 60000 training images; pixels / 255",
))

COVTYPE = RemoteFile("covtype.data.gz", (UCI + "covtype/covtype.data.gz", FIGSHARE + "5976039"),
                     (_sha("614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771", source=SKLEARN),))
FOREST_TRAIN = 522910


def _forest(paths: dict[str, Path]):
    X, y = convert.covtype_split(paths["data"], positive=1)
    return (X[:FOREST_TRAIN], y[:FOREST_TRAIN]), (X[FOREST_TRAIN:], y[FOREST_TRAIN:])


add_source(Source(
    "forest", "Covertype (UCI), class 1 (Spruce/Fir) vs rest, 54 unscaled features",
    "UCI covtype.data.gz (Blackard & Dean), or scikit-learn's figshare mirror of it",
    "cover type 1 (+1) vs rest (-1)", 54, FOREST_TRAIN, 58102, {"data": COVTYPE}, _forest,
    notes="features are the raw UCI values (no scaling); the SGD paper multiplies every feature by 0.001 and the "
          "SBP paper's Gaussian-kernel Forest setting (sigma^2 = 5000) uses Nguyen et al.'s version, whose "
          "scaling is not published. Split: the first 522910 rows train, the last 58102 test (the SBP paper's "
          "sizes); Pegasos and the SGD paper train on all 581012 rows (train + test here).",
))

_RCV1_PARTS = ("lyrl2004_vectors_train.dat.gz",) + tuple(f"lyrl2004_vectors_test_pt{k}.dat.gz" for k in range(4))
_RCV1_SHA = {  # scikit-learn's pinned sha256 of its figshare mirrors (sklearn/datasets/_rcv1.py)
    "lyrl2004_vectors_train.dat.gz": ("5976057", "5468f656d0ba7a83afc7ad44841cf9a53048a5c083eedc005dcdb5cc768924ae"),
    "lyrl2004_vectors_test_pt0.dat.gz": ("5976069", "ed40f7e418d10484091b059703eeb95ae3199fe042891dcec4be6696b9968374"),
    "lyrl2004_vectors_test_pt1.dat.gz": ("5976066", "87700668ae45d45d5ca1ef6ae9bd81ab0f5ec88cc95dcef9ae7838f727a13aa6"),
    "lyrl2004_vectors_test_pt2.dat.gz": ("5976063", "48143ac703cbe33299f7ae9f4995db49a258690f60e5debbff8995c34841c7f5"),
    "lyrl2004_vectors_test_pt3.dat.gz": ("5976060", "dfcb0d658311481523c6e6ca0c3f5a3e1d3d12cde5d7a8ce629a9006ec7dbb39"),
}
RCV1_FILES = {
    name: RemoteFile(name, (LYRL + "a13-vector-files/" + name, FIGSHARE + _RCV1_SHA[name][0]),
                     (_sha(_RCV1_SHA[name][1], source=SKLEARN),))
    for name in _RCV1_PARTS
}
RCV1_QRELS = RemoteFile("rcv1-v2.topics.qrels.gz",
                        (LYRL + "a08-topic-qrels/rcv1-v2.topics.qrels.gz", FIGSHARE + "5976048"),
                        (_sha("2a98e5e5d8b770bded93afc8930d88299474317fe14181aee1466cc754d0d1c1", source=SKLEARN),))


def _rcv1(topic: str) -> Converter:
    def run(paths: dict[str, Path]):
        positives = convert.rcv1_topics(paths["qrels"], topic)
        train = convert.rcv1_split([paths[f"vectors{k}"] for k in range(1, 5)], positives)
        test = convert.rcv1_split([paths["vectors0"]], positives)
        return train, test
    return run


for _topic in ("CCAT", "C11"):
    add_source(Source(
        f"rcv1-{_topic.lower()}", f"RCV1-v2 {_topic} vs rest, 47236 tf-idf features (Pegasos, SGD papers)",
        "RCV1-v2 LYRL2004 vectors and topic qrels (Lewis, Yang, Rose, Li, JMLR 5, 2004), or scikit-learn's "
        "figshare mirrors of them", f"topic {_topic} (+1) vs rest (-1)", convert.RCV1_FEATURES, 781265, 23149,
        {**{f"vectors{k}": RCV1_FILES[n] for k, n in enumerate(_RCV1_PARTS)}, "qrels": RCV1_QRELS},
        _rcv1(_topic),
        notes="train = the 781265 LYRL2004 'test' documents, test = the 23149 LYRL2004 'train' documents "
              "(the split of Joachims 2006 used by Pegasos); the SGD paper trains on all 804414 documents",
    ))

add_source(_libsvm("w8a", "Platt's Web (w8a), 300 binary features (SGD paper)", "+1 vs -1", 300, 49749, 14951,
                   RemoteFile("w8a", (LIBSVM_BINARY + "w8a",),
                              (_sha("b464b4f6ce6a5d9e181ffc793e19a04751036273722312398ef7673705014902"),)),
                   RemoteFile("w8a.t", (LIBSVM_BINARY + "w8a.t",)),
                   notes="4203 training rows have no features at all"))
add_source(_libsvm("real-sim", "real-sim (SGD paper)", "+1 vs -1", 20958, 72309, 0,
                   RemoteFile("real-sim.bz2", (LIBSVM_BINARY + "real-sim.bz2",))))
add_source(_libsvm("news20", "news20.binary (SGD paper)", "+1 vs -1", 1355191, 19996, 0,
                   RemoteFile("news20.binary.bz2", (LIBSVM_BINARY + "news20.binary.bz2",))))
add_source(_libsvm("covtype-libsvm", "LIBSVM's covtype.binary, features scaled to [0, 1]", "label 1 (+1) vs 2 (-1)",
                   54, 581012, 0,
                   RemoteFile("covtype.libsvm.binary.scale.bz2", (LIBSVM_BINARY + "covtype.libsvm.binary.scale.bz2",)),
                   positive=1.0))
add_source(_libsvm("webspam", "webspam, unigram features (SGD paper)", "+1 vs -1", 254, 350000, 0,
                   RemoteFile("webspam_wc_normalized_unigram.svm.bz2",
                              (LIBSVM_BINARY + "webspam_wc_normalized_unigram.svm.bz2",))))
add_source(_libsvm("rcv1-binary", "LIBSVM's rcv1.binary: CCAT+ECAT vs GCAT+MCAT (not the papers' task)",
                   "CCAT or ECAT (+1) vs GCAT or MCAT (-1)", 47236, 20242, 677399,
                   RemoteFile("rcv1_train.binary.bz2", (LIBSVM_BINARY + "rcv1_train.binary.bz2",)),
                   RemoteFile("rcv1_test.binary.bz2", (LIBSVM_BINARY + "rcv1_test.binary.bz2",))))
