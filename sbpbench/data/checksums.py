"""Checksums of the files sbpbench reads data from, computed once per change of the file.

:func:`file_digests` hashes a file, read as a regular file only (a device or a named pipe in
the cache is refused in one line, never read forever or waited on). :func:`digests` does the
same but remembers what it computed: a record ``<store>/<hash of the path>.json`` keeps the
digests with the file's *stamp*, its size, modification and change times (in nanoseconds),
inode and device, and the file is hashed again only when its stamp changes (an edit, a
copy, a replacement). The change time cannot be set back by a program (``touch -r`` restores
the modification time only), so an edit that keeps the size and the modification time is
seen too. As git does for "racily clean" files, a file changed in the last
:data:`FRESH_NS` nanoseconds is not remembered: the file system's clock ticks coarsely, and
an edit within the tick of the stamp taken would keep the stamp. The store is
``<cache>/.checksums`` (:func:`sbpbench.data.cache.checksum`); a record that cannot be
written (a read-only cache) only means hashing again next time, and a record that cannot be
read, or that is not one sbpbench wrote, is ignored. :func:`prune` deletes the records that can
serve no more (``sbpbench datasets fetch`` and ``verify`` call it), so that the store does not
keep one for every file ever hashed.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import os
import stat
import time
import zlib
from pathlib import Path
from typing import Any

from sbpbench.errors import UserError
from sbpbench.files import atomic_write, open_regular, read_regular

CHUNK = 1 << 20
#: Most bytes a record of the store may hold (a few digests take about 500).
MAX_RECORD_BYTES = 1 << 16

#: A file whose change time is more recent than this (nanoseconds) is hashed but not remembered.
FRESH_NS = 2 * 10**9
#: A digest: ``(algorithm, of the decompressed content)``.
Algo = tuple[str, bool]


def _opener(name: str) -> Any:
    if name.endswith(".gz"):
        return gzip.open
    if name.endswith(".bz2"):
        return bz2.open
    return None


def file_digests(path: Path, algos: set[Algo], name: str | None = None,
                 what: str = "cached file") -> dict[Algo, str]:
    """Compute the digests ``(algo, content)`` of ``path`` (content: of the decompressed bytes,
    the compression told by the suffix of ``name``, default the file's name).

    A content digest of an archive that does not decompress is left out (the file is
    damaged: no pinned content checksum matches).

    Raises
    ------
    UserError
        ``PATH: cannot read WHAT: why``: missing, unreadable, or no regular file.
    """
    out: dict[Algo, str] = {}
    for content in (False, True):
        wanted = [a for a, c in algos if c == content]
        opener = _opener(name or path.name) if content else None
        if not wanted or (content and opener is None):
            continue
        hashers = {a: hashlib.new(a) for a in wanted}
        with open_regular(path, what) as raw:
            try:
                with (opener(raw, "rb") if opener else raw) as fh:
                    while chunk := fh.read(CHUNK):
                        for h in hashers.values():
                            h.update(chunk)
            except (EOFError, ValueError, zlib.error, OSError) as exc:
                if not content or (isinstance(exc, OSError) and exc.errno is not None):
                    raise  # a read error of the file itself (open_regular names it), not a damaged archive
                continue  # a damaged archive: no content digest
        out.update({(a, content): h.hexdigest() for a, h in hashers.items()})
    return out


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _key(algo: Algo) -> str:
    return f"{algo[0]} content" if algo[1] else algo[0]


def _record_path(store: Path, path: Path) -> tuple[Path, str]:
    absolute = os.path.abspath(path)
    return store / (hashlib.sha256(os.fsencode(absolute)).hexdigest()[:40] + ".json"), absolute


def _read_record(record: Path, absolute: str, stamp: list[int]) -> dict[str, str]:
    """The digests a record holds for the file at ``absolute`` with ``stamp``; empty when the
    record is missing, unreadable, of another file or stamp, or not of the expected shape."""
    try:
        data = json.loads(read_regular(record, "checksum record", MAX_RECORD_BYTES))
    except (UserError, ValueError):
        return {}
    if not (isinstance(data, dict) and data.get("path") == absolute and data.get("stamp") == stamp
            and isinstance(data.get("digests"), dict)):
        return {}
    return {k: v for k, v in data["digests"].items() if isinstance(k, str) and isinstance(v, str)}


def digests(path: Path, algos: set[Algo], name: str | None = None, store: Path | None = None,
            what: str = "cached file") -> dict[Algo, str]:
    """:func:`file_digests`, remembered in ``store`` by the file's stamp (see the module).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    algos : set of (str, bool)
        The digests wanted: ``(algorithm, of the decompressed content)``.
    name : str, optional
        The name whose suffix tells the compression (default the file's name).
    store : pathlib.Path, optional
        The folder of the records; without it the file is hashed every time.
    what : str
        What the file is, for the messages.

    Returns
    -------
    dict of (str, bool) to str
        The hex digests, content digests of a damaged archive left out.
    """
    try:
        before = os.stat(path)
    except OSError:
        before = None
    if store is None or before is None or not stat.S_ISREG(before.st_mode):
        return file_digests(path, algos, name, what)  # refuses what is no regular file
    record, absolute = _record_path(store, path)
    stamp = _stamp(before)
    known = _read_record(record, absolute, stamp)
    if all(_key(a) in known for a in algos):
        return {a: known[_key(a)] for a in algos}
    out = file_digests(path, algos, name, what)
    try:
        fresh = time.time_ns() - before.st_ctime_ns < FRESH_NS
        if not fresh and _stamp(os.stat(path)) == stamp:  # unchanged while hashed: the digests are of this stamp
            known.update({_key(a): h for a, h in out.items()})
            atomic_write(record, json.dumps({"path": absolute, "stamp": stamp, "digests": known}, sort_keys=True))
    except OSError:
        pass  # a read-only cache: hashed again next time
    return out


def sha256_of(path: Path, store: Path | None = None, what: str = "cached file") -> str:
    """sha256 of a file's bytes (remembered in ``store`` when given, see :func:`digests`)."""
    return digests(path, {("sha256", False)}, store=store, what=what)[("sha256", False)]


def prune(store: Path) -> int:
    """Delete the records of ``store`` that can serve no more; return how many were deleted.

    A record serves only the file it names while that file keeps the stamp recorded (a change
    time never comes back), so those deleted are the records of a file gone (a dataset removed,
    a data file deleted or moved, a cache folder moved) or changed since it was hashed, and
    whatever in the store is not a record sbpbench wrote (a temporary file left by a killed
    write included). Folders are left alone. No lock is needed: records are written whole
    (renamed into place) and are only a memo, so deleting one being rewritten at that moment
    costs a hash next time, never a wrong digest; a record that cannot be deleted (a read-only
    cache) is left, and a store that cannot be listed is no error.

    Parameters
    ----------
    store : pathlib.Path
        The folder of the records (``<cache>/.checksums``).

    Returns
    -------
    int
        The number of records deleted.
    """
    try:
        entries = [Path(e.path) for e in os.scandir(store) if not e.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    deleted = 0
    for record in entries:
        if not _serves(store, record):
            try:
                record.unlink()
                deleted += 1
            except OSError:
                pass  # gone meanwhile, or a read-only cache
    return deleted


def _serves(store: Path, record: Path) -> bool:
    """Whether ``record`` is one :func:`digests` can still use: sbpbench's, under the name of the
    file it names, and that file's current stamp."""
    try:
        data = json.loads(read_regular(record, "checksum record", MAX_RECORD_BYTES))
        path = data["path"]
        return (isinstance(path, str) and _record_path(store, Path(path)) == (record, path)
                and isinstance(data.get("digests"), dict) and data.get("stamp") == _stamp(os.stat(path)))
    except (UserError, ValueError, TypeError, KeyError, OSError):
        return False
