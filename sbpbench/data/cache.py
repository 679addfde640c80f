"""The dataset cache: where downloads and conversions live, how they are made and checked.

The cache folder is ``$SBPBENCH_DATA``, else the platform's per-user cache folder
(``~/.cache/sbpbench`` on Linux, ``~/Library/Caches/sbpbench`` on macOS,
``%LOCALAPPDATA%\\sbpbench\\Cache`` on Windows; see :func:`cache_dir`), so that a user's
downloads are shared by every folder sbpbench is run from::

    <cache>/downloads/<file>               verified downloads (+ <file>.sha256 records)
    <cache>/<dataset>/train.svm, test.svm  LIBSVM text (deterministic: same input, same bytes)
    <cache>/<dataset>/train.npz, test.npz  the same data as CSR arrays, for fast loading
    <cache>/<dataset>/manifest.json        sha256 and size of the four files above, sha256 of the inputs
    <cache>/.locks/                        lock files of the downloads and conversions
    <cache>/.checksums/                    digests remembered by file stamp (see sbpbench.data.checksums),
                                           those of files gone or changed pruned (:func:`prune_checksums`)
    <cache>/.parsed/<name>-<digest>.npz    parsed copies of files shipped with sbpbench (+ .sha256 records;
                                           :func:`parsed_once`), those of other versions of the file removed

:func:`prepare` fetches a registered dataset's files and converts them. The dataset folder
is built under a temporary name and renamed into place, under a lock (the folder it replaces
renamed aside first, deleted after), so a reader sees either a complete folder with its manifest
or none.

Nothing in the cache is used unverified: a download already there is checked against its
pinned checksum (or the sha256 recorded at its download) before it is converted, and
:func:`load_cached` checks the ``.npz`` files against the manifest's sizes and sha256, so a
damaged cache is refused, never used, in one line naming the file and the command that fetches
it again (``sbpbench datasets fetch --force NAME``: it replaces a damaged download only once the
new copy verifies, so that a failed or interrupted fetch leaves the cache as it was). The full
hash of a file is computed once per change of its size or times (:mod:`sbpbench.data.checksums`), so an unchanged
cache costs a ``stat`` per file. Every file is read as a regular file (a device or a named
pipe is refused, not read forever), the manifest and the records with a size limit.
:func:`verify` re-checks every file of a dataset. A read-only cache serves what it holds
and verifies; converting or downloading into it is refused in one line.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import re
import shutil
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sbpbench.data.checksums import prune, sha256_of
from sbpbench.data.convert import extract_member, write_libsvm
from sbpbench.data.fetch import DamagedDownload, FetchOptions, RemoteFile, fetch_file, partial_path, verify_download
from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.data.lock import file_lock
from sbpbench.data.registry import REGISTRY, Dataset, SplitData
from sbpbench.data.split import Split
from sbpbench.errors import UserError
from sbpbench.files import file_kind, read_regular

#: Environment variable naming the cache folder (default: the user cache folder, :func:`cache_dir`).
DATA_ENV = "SBPBENCH_DATA"
MANIFEST_VERSION = 2  # 2: with "sizes" (version 1 manifests are read, their sizes not checked)
#: Most bytes a manifest may hold (one of sbpbench's takes about 1 KiB).
MAX_MANIFEST_BYTES = 1 << 20


def cache_dir() -> Path:
    """The dataset cache: ``$SBPBENCH_DATA`` when set, else the per-user cache folder.

    The user cache folder is :func:`platformdirs.user_cache_dir` for ``sbpbench``, which
    follows each platform's convention (``$XDG_CACHE_HOME/sbpbench``, by default
    ``~/.cache/sbpbench``, on Linux).
    """
    explicit = os.environ.get(DATA_ENV)
    if explicit:
        return Path(explicit)
    import platformdirs

    return Path(platformdirs.user_cache_dir("sbpbench", appauthor=False))


def checksum_store(root: Path | None = None) -> Path:
    """Where the digests of files are remembered by their stamp (:mod:`sbpbench.data.checksums`)."""
    return (root or cache_dir()) / ".checksums"


def prune_checksums(root: Path | None = None) -> int:
    """Delete the remembered digests that can serve no more (of files gone or changed since they
    were hashed, see :func:`~sbpbench.data.checksums.prune`); return how many were deleted."""
    return prune(checksum_store(root))


def checksum(path: str | os.PathLike[str], root: Path | None = None) -> str:
    """The sha256 of any data file, cheaply: hashed once per change of its size or times.

    For a resolved config or a resume to record and compare the data a run used
    (``dataset.path`` files): an unchanged file costs one ``stat`` after its first hash, the
    digest remembered in the cache's :func:`checksum_store`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    root : pathlib.Path, optional
        The cache folder holding the store (default :func:`cache_dir`).

    Returns
    -------
    str
        The hex sha256 of the file's bytes.

    Raises
    ------
    UserError
        ``PATH: cannot read data file: why``: missing, unreadable, or no regular file.
    """
    return sha256_of(Path(path), checksum_store(root), "data file")


def refetch(name: str) -> str:
    """How to replace a damaged dataset in the cache, ending a message."""
    return f"the cache is damaged (run: sbpbench datasets fetch --force {name})"


def _folder(path: Path) -> Path:
    """Create the cache folder ``path`` (and its parents) unless it is there; one line if it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "a file is in the way" if isinstance(exc, (FileExistsError, NotADirectoryError)) else \
            (exc.strerror or str(exc))
        raise UserError(f"{path}: cannot create the dataset cache folder ({why}); remove what is in the way "
                        f"or set {DATA_ENV} to another folder") from None
    return path


def cache_origin() -> str:
    """Where :func:`cache_dir` comes from, for ``sbpbench datasets list``: ``$SBPBENCH_DATA`` or the user cache."""
    return f"${DATA_ENV}" if os.environ.get(DATA_ENV) else f"the user cache folder; set ${DATA_ENV} to move it"


# ----------------------------------------------------------------------------- downloads


def download_path(remote: RemoteFile, root: Path | None = None) -> Path:
    """Where a download lives in the cache."""
    return (root or cache_dir()) / "downloads" / remote.name


def download(remote: RemoteFile, options: FetchOptions | None = None, root: Path | None = None,
             replace: bool = False) -> Path:
    """Fetch ``remote`` into the cache's ``downloads/`` unless it is there already.

    Parameters
    ----------
    remote : RemoteFile
        What to fetch.
    options : FetchOptions, optional
        Mirror, timeouts, retries, progress.
    root : pathlib.Path, optional
        The cache folder (default :func:`cache_dir`).
    replace : bool
        Fetch a file already there that does not verify again, replacing it only once the new
        one verifies (``--force``; see :func:`~sbpbench.data.fetch.fetch_file`).

    Returns
    -------
    pathlib.Path
        The verified file (see :func:`~sbpbench.data.fetch.fetch_file` for the errors: one
        already there that does not verify is refused, not used, unless ``replace``).
    """
    root = root or cache_dir()
    return fetch_file(remote, download_path(remote, root), root / ".locks" / f"{remote.name}.lock", options,
                      checksum_store(root), replace)


# ----------------------------------------------------------------------------- converted datasets


def dataset_dir(name: str, root: Path | None = None) -> Path:
    """The folder of a converted dataset."""
    return (root or cache_dir()) / name


def read_manifest(name: str, root: Path | None = None) -> dict[str, Any] | None:
    """The dataset's manifest, or None when it is not converted (no manifest).

    Raises
    ------
    UserError
        One line naming the file: the dataset's folder is not a folder, or its manifest is
        damaged (half-written, not a regular file, too large, not of the shape sbpbench
        writes), with the command that converts it again.
    """
    folder = dataset_dir(name, root)
    path = folder / "manifest.json"
    try:
        mode = os.stat(folder).st_mode
    except OSError:
        return None  # not converted
    if not stat.S_ISDIR(mode):
        raise UserError(f"{folder}: it is {file_kind(mode) or 'a file'} where the cache keeps the folder of the "
                        f"converted {name}; remove it (then run: sbpbench datasets fetch {name})")
    if not os.path.lexists(path):
        return None
    try:
        manifest = json.loads(read_regular(path, "dataset manifest", MAX_MANIFEST_BYTES))
    except UserError as exc:
        raise UserError(f"{exc}; {refetch(name)}") from None
    except ValueError as exc:
        raise UserError(f"{path}: damaged manifest (not JSON: {exc}); {refetch(name)}") from None
    if (why := _manifest_problem(manifest)) is not None:
        raise UserError(f"{path}: damaged manifest ({why}); {refetch(name)}")
    return manifest


def _manifest_problem(manifest: Any) -> str | None:
    """What makes ``manifest`` other than one sbpbench writes, or None."""
    if not isinstance(manifest, dict):
        return f"a JSON {type(manifest).__name__}, not an object"
    files, sizes = manifest.get("files"), manifest.get("sizes", {})
    if not (isinstance(files, dict) and all(isinstance(v, str) and len(v) == 64 for v in files.values())):
        return "'files' is not a mapping of file names to sha256 digests"
    if not (isinstance(sizes, dict) and all(type(v) is int and v >= 0 for v in sizes.values())):
        return "'sizes' is not a mapping of file names to sizes"
    if not all(isinstance(f, str) and "/" not in f and f not in ("", ".", "..") for f in files):
        return "'files' names something other than a file of the dataset's folder"
    n_features = manifest.get("n_features")
    if type(n_features) is not int or n_features < 1:
        return "'n_features' is not a positive integer"
    return None


def is_cached(name: str, root: Path | None = None) -> bool:
    """Whether ``name`` is converted in the cache (a damaged manifest is a :class:`UserError`)."""
    return read_manifest(name, root) is not None


def download_size(name: str) -> tuple[int, bool]:
    """Bytes to download for dataset ``name`` as published, and whether every file's size is known."""
    sizes = [remote.size for remote in REGISTRY[name].files.values()]
    return sum(size or 0 for size in sizes), None not in sizes


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


def _load_npz(path: Path, name: str) -> Split:
    """The split of a verified ``.npz`` (a file that verifies yet does not load is refused in one line)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
            return Split(X, z["y"], f"cached conversion in {path.parent.resolve()}")
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
        raise UserError(f"{path}: cannot load the converted split ({exc}); {refetch(name)}") from None


def parsed_once(name: str, digest: str, provenance: str, parse: Callable[[], Split]) -> Split:
    """A split parsed once, then read back from ``<cache>/.parsed/<name>-<digest>.npz``.

    For data shipped with sbpbench (Adult's bundled copy): decompressing and parsing it
    (scikit-learn's LIBSVM reader, with its import) was most of a short run's start, at every
    run. ``digest`` must name the bytes parsed (e.g. the shipped file's sha256), so that a changed
    or damaged copy is parsed again, never replaced by another's arrays. The ``.npz`` is
    checked against the sha256 recorded beside it when written; one that is missing, damaged or
    unreadable is parsed again and rewritten (under a temporary name, then renamed), and a
    cache folder that cannot be written only costs the parse. Once a copy is written, the copies
    of ``name`` with another digest (of the files an earlier version of sbpbench shipped) are
    removed, with what a process killed while writing one left behind: the folder holds one
    copy per shipped file.

    Parameters
    ----------
    name : str
        The shipped file's name (no folder); with ``digest``, the name of the parsed copy.
    digest : str
        Names the input bytes: their sha256 (hex).
    provenance : str
        The ``provenance`` of the split returned (the same whether parsed or read back).
    parse : callable
        Returns the split (its arrays are what is stored).

    Returns
    -------
    Split
        The same arrays (values and dtypes) as ``parse()`` gives.
    """
    folder = cache_dir() / ".parsed"
    path = folder / f"{name}-{digest}.npz"
    record = path.with_name(f"{path.name}.sha256")
    try:
        if read_regular(record, "parsed-copy record", 1024).decode().strip() == sha256_of(path):
            split = _load_npz(path, path.stem)
            split.X.indptr = split.X.indptr.astype(np.int64)  # as stored and parsed; csr_matrix narrows it
            return Split(split.X, split.y, provenance)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UserError):
        pass  # missing, damaged or not a regular file: parsed again below
    split = parse()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _save_npz(tmp, split.X, split.y)
        digest_written = sha256_of(tmp)
        os.replace(tmp, path)
        record.write_text(digest_written + "\n", encoding="utf-8")
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    else:
        for other in folder.glob(f"{glob.escape(name)}-*"):
            if other not in (path, record):  # another version's copy or record, or a leftover
                with contextlib.suppress(OSError):
                    other.unlink()
    return Split(split.X, split.y, provenance)


def _write_split(folder: Path, role: str, data: SplitData, dataset: Dataset) -> int:
    """Write ``role``.svm and ``role``.npz; return the number of examples."""
    svm = folder / f"{role}.svm"
    if isinstance(data, bytes):
        svm.write_bytes(data)
        X, labels = read_libsvm(data, f"{dataset.name} {role}", dataset.n_features)
        y = to_binary(labels, f"{dataset.name} {role}", dataset.positive)[0]
    else:
        X, y = data
        X = sp.csr_matrix(X)
        if X.shape[1] != dataset.n_features:
            raise UserError(f"{dataset.name} {role}: converted data has {X.shape[1]} features, "
                            f"expected {dataset.n_features}")
        write_libsvm(svm, X, y)
    X.indices = X.indices.astype(np.int32, copy=False)
    _save_npz(folder / f"{role}.npz", X, y)
    return int(X.shape[0])


def prepare(name: str, options: FetchOptions | None = None, root: Path | None = None, force: bool = False) -> Path:
    """Fetch, verify and convert dataset ``name`` into the cache (nothing to do if cached).

    Parameters
    ----------
    name : str
        A key of :data:`~sbpbench.data.registry.REGISTRY`.
    options : FetchOptions, optional
        Mirror, timeouts, retries.
    root : pathlib.Path, optional
        Cache folder (default :func:`cache_dir`).
    force : bool
        Convert again even when cached (downloads that still verify are reused, damaged ones
        are fetched again and replaced once the new ones verify: a failed or interrupted
        download leaves the cache as it was, the converted dataset included).

    Returns
    -------
    pathlib.Path
        The dataset folder.
    """
    dataset = REGISTRY[name]
    root = root or cache_dir()
    final = dataset_dir(name, root)
    if not force and is_cached(name, root):  # served without a lock, so that a read-only cache serves too
        load_cached(name, root, check_only=True)
        return final
    _folder(root / "downloads")
    with file_lock(root / ".locks" / f"{name}.dataset.lock",
                   f"the dataset cache {root} must be writable to convert {name}: set {DATA_ENV} to another folder"):
        if not force and is_cached(name, root):  # converted by another process meanwhile
            return final
        try:
            paths = {role: download(remote, options, root, replace=force) for role, remote in dataset.files.items()}
        except DamagedDownload as exc:
            raise UserError(f"{exc}; {refetch(name)}") from None
        for left in _work_folders(root, name):  # left by killed conversions: none runs while the lock is held
            shutil.rmtree(left, ignore_errors=True)
        tmp = root / f".{name}.tmp-{os.getpid()}"
        try:
            tmp.mkdir()
            for role, member in dataset.members.items():
                paths[role] = extract_member(paths[role], member, tmp / "extracted")
            train, test = dataset.convert(paths)
            counts = {"train": _write_split(tmp, "train", train, dataset)}
            if test is not None:
                counts["test"] = _write_split(tmp, "test", test, dataset)
            shutil.rmtree(tmp / "extracted", ignore_errors=True)
            expected = {"train": dataset.n_train, "test": dataset.n_test}
            for role, count in counts.items():
                if count != expected[role]:
                    raise UserError(f"{name}: converted {role} split has {count} examples, expected "
                                    f"{expected[role]} (the downloaded files are not the expected version)")
            store = checksum_store(root)
            manifest = {
                "version": MANIFEST_VERSION, "dataset": name, "n_features": dataset.n_features,
                "counts": counts,
                "inputs": {remote.name: sha256_of(download_path(remote, root), store)
                           for remote in dataset.files.values()},
                "files": {p.name: sha256_of(p) for p in sorted(tmp.iterdir())},
                "sizes": {p.name: p.stat().st_size for p in sorted(tmp.iterdir())},
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            _swap_in(tmp, final)
        except OSError as exc:  # disk full, a read-only cache: nothing half-converted is left
            raise UserError(f"{root}: cannot write the converted {name} ({exc.strerror or exc}); free space "
                            f"or set {DATA_ENV} to another folder") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _work_folders(root: Path, name: str) -> list[Path]:
    """The folders a conversion of ``name`` works in (``.NAME.tmp-PID``: the new dataset being built;
    ``.NAME.old-PID``: the one it replaces, until deleted), found in ``root``."""
    pattern = re.compile(rf"\.{re.escape(name)}\.(?:tmp|old)-[0-9]+")
    return [p for p in root.iterdir() if pattern.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]


def _swap_in(new: Path, final: Path) -> None:
    """Rename the folder ``new`` to ``final``, replacing a folder there without a moment when neither is.

    A folder cannot be renamed over another that holds files, and deleting the old one first
    would leave the dataset half-deleted if interrupted: it is renamed aside (``.NAME.old-PID``),
    put back if ``new`` cannot take its place (an error, Ctrl-C), and deleted once ``new`` has.
    """
    if not (final.is_dir() and not final.is_symlink()):
        os.replace(new, final)
        return
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    os.replace(final, old)
    try:
        os.replace(new, final)
    except BaseException:
        os.replace(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def load_cached(name: str, root: Path | None = None, check_only: bool = False) -> tuple[Split, Split]:
    """Load a converted dataset, checking its ``.npz`` files against the manifest first.

    A dataset without a test set gives an empty test split. The splits' ``provenance``
    names the folder they were loaded from. A file's size is checked against the manifest,
    then its sha256 (hashed once per change of the file, see :mod:`sbpbench.data.checksums`).

    Parameters
    ----------
    name : str
        The dataset.
    root : pathlib.Path, optional
        The cache folder (default :func:`cache_dir`).
    check_only : bool
        Check the files without loading them (the splits returned are then empty).

    Raises
    ------
    UserError
        If the dataset is not cached, or a file is missing, no regular file or does not
        match its manifest: one line naming the file, with the command that fetches it again.
    """
    manifest = read_manifest(name, root)
    folder = dataset_dir(name, root)
    if manifest is None:
        raise UserError(f"dataset {name!r} is not in the cache {folder.parent} (run: sbpbench datasets fetch {name})")
    splits = []
    for role in ("train", "test"):
        filename = f"{role}.npz"
        empty = Split(sp.csr_matrix((0, manifest["n_features"])), np.zeros(0))
        if filename not in manifest["files"]:
            splits.append(empty)
            continue
        path = folder / filename
        problem = _check(path, manifest, root)
        if problem:
            raise UserError(f"{problem}; {refetch(name)}")
        splits.append(empty if check_only else _load_npz(path, name))
    return splits[0], splits[1]


def _check(path: Path, manifest: dict[str, Any], root: Path | None) -> str | None:
    """What is wrong with the converted file ``path`` by the manifest (size, then sha256), or None."""
    expected, size = manifest["files"][path.name], manifest.get("sizes", {}).get(path.name)
    if not os.path.lexists(path):
        return f"{path}: missing"
    try:
        st = os.stat(path)
        if file_kind(st.st_mode) is None and size is not None and st.st_size != size:
            return f"{path}: {st.st_size} bytes, manifest says {size}"
        actual = sha256_of(path, checksum_store(root), "converted file")
    except OSError as exc:
        return f"{path}: cannot read converted file: {exc.strerror or exc}"
    except UserError as exc:
        return str(exc)
    return None if actual == expected else f"{path}: sha256 {actual}, manifest says {expected}"


# ----------------------------------------------------------------------------- verification


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
    """What :func:`verify` found for one dataset: whether it is converted, every file's state,
    and the state of the copy it ships with (``bundled``: None when it has none, or when it is
    converted and so does not use it)."""

    name: str
    converted: bool
    files: tuple[FileState, ...]
    bundled: FileState | None = None

    @property
    def verdict(self) -> str:
        """``ok``, ``ok (bundled copy)``, ``DAMAGED (files)`` or ``INCOMPLETE (what is missing)``.

        Missing downloads of a converted dataset are fine (loading needs only the converted
        files), and so are those of a dataset loaded from its bundled copy; any damaged file
        or leftover partial download is not.
        """
        damaged = [f.path.name for f in self.files + ((self.bundled,) if self.bundled else ())
                   if f.state == "damaged"]
        if damaged:
            return f"DAMAGED ({', '.join(damaged)})"
        usable = self.converted or self.bundled is not None
        missing = [f.path.name for f in self.files if f.state == "missing" and not usable]
        partial = [f.path.name for f in self.files if f.state == "partial"]
        gaps = ([f"missing {', '.join(missing)}"] if missing else []) + \
               ([f"partial download {', '.join(partial)}"] if partial else [])
        if not gaps and not usable:
            gaps = ["downloaded, not converted"]
        if gaps:
            return f"INCOMPLETE ({'; '.join(gaps)})"
        return "ok" if self.converted else "ok (bundled copy)"

    @property
    def ok(self) -> bool:
        """Whether the dataset is complete and undamaged."""
        return self.verdict.startswith("ok")


def verify(name: str, root: Path | None = None) -> CacheState:
    """Re-check a dataset's downloads (and partial downloads), its converted files, and, while
    it is not converted, the copy it ships with (:class:`~sbpbench.data.registry.Fallback`)."""
    files = []
    try:
        manifest = read_manifest(name, root)
    except UserError as exc:
        manifest, path = None, dataset_dir(name, root) / "manifest.json"
        files.append(FileState(path, "damaged", str(exc).removeprefix(f"{path}: ")))
    fallback = REGISTRY[name].fallback
    bundled = None
    if fallback is not None and manifest is None:
        problem = fallback.check()
        bundled = FileState(Path(fallback.what), "damaged" if problem else "ok", problem or "")
    unneeded = "not needed: the dataset is converted" if manifest else "not needed: the bundled copy is used" \
        if bundled is not None else ""
    for remote in REGISTRY[name].files.values():
        path = download_path(remote, root)
        part = partial_path(path)
        if os.path.lexists(part):
            files.append(FileState(part, "partial", f"{os.lstat(part).st_size} bytes left by an interrupted download"))
        if not os.path.lexists(path):
            files.append(FileState(path, "missing", unneeded))
        elif problem := verify_download(remote, path, checksum_store(root)):
            files.append(FileState(path, "damaged", problem.removeprefix(f"{path}: ")))
        else:
            files.append(FileState(path, "ok"))
    for filename in (manifest or {}).get("files", {}):
        path = dataset_dir(name, root) / filename
        problem = _check(path, manifest or {}, root)
        files.append(FileState(path, "damaged", problem.removeprefix(f"{path}: ")) if problem
                     else FileState(path, "ok"))
    return CacheState(name, manifest is not None, tuple(files), bundled)


def in_cache(name: str, root: Path | None = None) -> bool:
    """Whether the cache holds anything of ``name``: its converted folder, or a download
    (complete or partial) that no converted dataset uses (``mnist-t10k`` shares ``mnist``'s files)."""
    if os.path.lexists(dataset_dir(name, root) / "manifest.json") or is_file_in_the_way(name, root):
        return True  # converted, or a damaged manifest or folder for `datasets verify` to report
    used = {remote.name for other, dataset in REGISTRY.items() if other != name and _converted(other, root)
            for remote in dataset.files.values()}
    return any(os.path.lexists(path) for remote in REGISTRY[name].files.values() if remote.name not in used
               for path in (download_path(remote, root), partial_path(download_path(remote, root))))


def is_file_in_the_way(name: str, root: Path | None = None) -> bool:
    """Whether something other than a folder is where the cache keeps the converted ``name``."""
    folder = dataset_dir(name, root)
    return os.path.lexists(folder) and not folder.is_dir()


def _converted(name: str, root: Path | None) -> bool:
    """Whether ``name`` is converted, a damaged manifest counting as converted (no exception)."""
    try:
        return is_cached(name, root)
    except UserError:
        return True
