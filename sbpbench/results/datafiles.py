"""The data files a run folder's runs were computed from, recorded by checksum and compared on resume.

``meta.json`` records, under ``resolved.dataset.files``, the sha256 of every file the data
were loaded from, by role (``train``, ``test``): the two LIBSVM files of a config's
``dataset.path`` and ``dataset.test_path``, or the converted files (``train.npz``,
``test.npz``) of a registered dataset loaded from the dataset cache. A registered dataset read
from the copy shipped with sbpbench (the bundled Adult) records none: that copy is checked
against its pinned checksums at every load, so it cannot change unseen.

``--resume`` refuses to continue a folder whose recorded data differ from the data the config
loads now (a LIBSVM file edited in between, of the same sizes and class counts, would
otherwise give kept runs of the old data beside new runs of the new). Only roles recorded on
both sides are compared, so folders written before the record existed, or a switch between the
bundled copy and the cache (the same data), are continued as before. The files' paths are facts
of the machine (:data:`~sbpbench.results.store.MACHINE_FACTS`' kind): a folder moved to another
machine, with its data elsewhere, compares by checksum only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sbpbench.data import cache
from sbpbench.data.loading import DatasetSpec
from sbpbench.errors import UserError


def used_files(spec: DatasetSpec) -> dict[str, Path]:
    """The files the data of ``spec`` are loaded from, by role (``train``, ``test``).

    For ``path`` files, the two LIBSVM files; for a registered dataset converted in the cache,
    its ``.npz`` files (as :func:`sbpbench.data.loading.load_registered` loads them); none for a
    registered dataset read from its bundled copy.
    """
    if spec.path is not None and spec.test_path is not None:
        return {"train": Path(spec.path), "test": Path(spec.test_path)}
    if spec.name is None or not cache.is_cached(spec.name):
        return {}
    folder = cache.dataset_dir(spec.name)
    return {role: folder / f"{role}.npz" for role in ("train", "test") if (folder / f"{role}.npz").is_file()}


def record(spec: DatasetSpec) -> dict[str, dict[str, str]]:
    """``resolved.dataset.files``: for each role of :func:`used_files`, the file's path and sha256
    (:func:`sbpbench.data.cache.checksum`: hashed once per change of the file)."""
    return {role: {"path": str(path), "sha256": cache.checksum(path)} for role, path in used_files(spec).items()}


def check_same_data(old: Any, new: dict[str, dict[str, str]], directory: Path) -> None:
    """Refuse to continue ``directory`` when a data file recorded there (``old``, its
    ``resolved.dataset.files``) has another checksum now (``new``, :func:`record`'s).

    Raises
    ------
    UserError
        ``FILE: the training data differ from those of the runs in DIRECTORY (sha256 ... there,
        ... now); ...``, naming the file loaded now.
    """
    if not isinstance(old, dict):
        return
    for role, now in new.items():
        then = old.get(role)
        if isinstance(then, dict) and then.get("sha256") != now["sha256"]:
            what = "training" if role == "train" else "test"
            raise UserError(f"{now['path']}: the {what} data differ from those of the runs in {directory} "
                            f"(sha256 {str(then.get('sha256'))[:16]}... there, {now['sha256'][:16]}... now); "
                            "run without --resume to start a new run folder")
