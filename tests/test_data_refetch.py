"""Fetching again what the cache holds (``datasets fetch --force``) loses nothing when it fails.

A damaged download is replaced only once its new copy has arrived whole and verified: when the
server is down, answers an error, sends other bytes or the user presses Ctrl-C mid-download, the
cache is as it was (the damaged file, the converted dataset made before the damage), the error is
one line with exit code 2, and no partial file is left. Replacing the converted dataset never
leaves it half-deleted. And the checksums remembered in ``<cache>/.checksums`` for files gone or
changed are pruned by ``datasets fetch`` and ``datasets verify``. No network: a loopback server
stands for the sources.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
from pathlib import Path

import pytest

from sbpbench.data import cache, checksums, fetch
from sbpbench.data.fetch import partial_path
from sbpbench.data.registry import REGISTRY
from tests._dataserver import FileServer, closed_port
from tests.cli_runner import sbpbench
from tests.test_hostile_data import FAST, NAME, TEST, TRAIN, fixture_dataset, invoke, one_label_changed, refused


@pytest.fixture
def served(tmp_path, monkeypatch):
    """An empty cache (``$SBPBENCH_DATA``) with :data:`NAME` registered, and the server of its files;
    the command line fetches with the few tries and short pauses of :data:`FAST`."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SBPBENCH_DATA", str(folder))
    monkeypatch.setattr(fetch, "FetchOptions", lambda **given: dataclasses.replace(FAST, **given))
    with FileServer({}) as server:
        monkeypatch.setitem(REGISTRY, NAME, fixture_dataset(server))
        yield folder, server


def contents(root: Path) -> dict[str, bytes]:
    """Every file and folder of the cache but the lock files and remembered digests, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<folder>" for p in root.rglob("*")
            if p.relative_to(root).parts[0] not in (".locks", ".checksums")}


def damaged(root: Path) -> tuple[Path, dict[str, bytes]]:
    """:data:`NAME` converted, then its train download damaged (one label changed, the size kept):
    that download's path and the cache's contents."""
    cache.prepare(NAME, FAST, root)
    path = root / "downloads" / "hx.train"
    path.write_bytes(one_label_changed(TRAIN))
    return path, contents(root)


def server_down(server: FileServer, monkeypatch) -> None:
    remote = REGISTRY[NAME].files["train"]
    files = {**REGISTRY[NAME].files, "train": dataclasses.replace(remote, urls=(
        f"http://127.0.0.1:{closed_port()}/hx.train",))}
    monkeypatch.setitem(REGISTRY, NAME, dataclasses.replace(REGISTRY[NAME], files=files))


FAILURES = {  # how the server fails, what the error line then says
    "down": (server_down, "cannot download hx.train: tried http://127.0.0.1:"),
    "error": (lambda server, _: server.faults.update({"hx.train": ["500"] * 10}), "(HTTP 500, after 2 tries)"),
    "missing": (lambda server, _: server.files.pop("hx.train"), "(HTTP 404)"),
    "other bytes": (lambda server, _: server.files.update({"hx.train": TRAIN.replace(b"+1", b"-1", 1)}),
                    "checksum mismatch for hx.train: expected sha256 "
                    f"{hashlib.sha256(TRAIN).hexdigest()}"),
    "truncated": (lambda server, _: server.faults.update({"hx.train": ["truncate"] * 10}),
                  ", after 2 tries); the server is in trouble"),
}


@pytest.mark.parametrize("failure", FAILURES)
def test_a_failed_refetch_leaves_the_cache_as_it_was(served, monkeypatch, failure):
    """Before: ``--force`` deleted the damaged download first, and a failure lost it."""
    root, server = served
    path, before = damaged(root)
    fail, says = FAILURES[failure]
    fail(server, monkeypatch)
    line = refused("datasets", "fetch", "--force", NAME)
    assert says in line
    assert contents(root) == before
    assert path.read_bytes() == one_label_changed(TRAIN) and not os.path.lexists(partial_path(path))
    cache.load_cached(NAME, root)  # the dataset converted before the damage still serves


def test_a_refetch_replaces_the_damaged_file_once_verified(served):
    root, server = served
    path, _ = damaged(root)
    npz = (root / NAME / "train.npz").read_bytes()
    server.faults["hx.train"] = ["500"]  # retried: the damaged file is kept meanwhile
    assert invoke("datasets", "fetch", "--force", NAME)[0] == 0
    assert path.read_bytes() == TRAIN and (root / NAME / "train.npz").read_bytes() == npz
    assert server.gets("hx.train") == [None, None, None] and server.gets("hx.test") == [None]  # hx.test kept
    assert cache.verify(NAME, root).verdict == "ok"
    assert not [p for p in root.iterdir() if p.name.startswith(f".{NAME}.")]  # no work folder left


def test_ctrl_c_mid_download_leaves_the_cache_as_it_was(served, monkeypatch, capsys):
    root, _ = served
    path, before = damaged(root)
    seen = []

    def interrupted(progress, new, size, total, final=False):
        seen.append(partial_path(path).stat().st_size)  # bytes written beside the damaged file
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch._Progress, "update", interrupted)
    assert sbpbench(monkeypatch, "datasets", "fetch", "--force", NAME) == 130
    assert seen and seen[0] > 0  # interrupted with bytes received, before they were verified
    err = capsys.readouterr().err  # before the last line: the server's own report of the dropped connection
    assert err.splitlines()[-1] == "sbpbench: interrupted" and "KeyboardInterrupt" not in err
    assert contents(root) == before and not os.path.lexists(partial_path(path))


def test_ctrl_c_while_the_converted_dataset_is_replaced_keeps_the_old_one(served, monkeypatch):
    """Before: the old converted folder was deleted, then the new one renamed into its place."""
    root, _ = served
    _, before = damaged(root)
    real = os.replace

    def interrupted(src, dst, *args, **kwargs):
        if Path(src).name.startswith(f".{NAME}.tmp-"):
            raise KeyboardInterrupt
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cache.prepare(NAME, FAST, root, force=True)
    monkeypatch.setattr(os, "replace", real)
    after = contents(root)
    assert {k: v for k, v in after.items() if k != "downloads/hx.train"} == \
        {k: v for k, v in before.items() if k != "downloads/hx.train"}  # the converted dataset as it was
    assert after["downloads/hx.train"] == TRAIN  # fetched again and verified before the conversion
    cache.load_cached(NAME, root)


def test_folders_of_killed_conversions_are_removed_by_the_next(served):
    root, _ = served
    cache.prepare(NAME, FAST, root)
    left = [root / f".{NAME}.tmp-999999999", root / f".{NAME}.old-999999999"]
    other = root / f".{NAME}x.tmp-999999999"  # another dataset's: not touched
    for folder in (*left, other):
        (folder / "sub").mkdir(parents=True)
    cache.prepare(NAME, FAST, root, force=True)
    assert not any(os.path.lexists(p) for p in left) and other.is_dir()


# ----------------------------------------------------------------------------- remembered checksums


def remembered(root: Path) -> set[str]:
    """The files whose digests the cache's store remembers (the paths its records name)."""
    return {json.loads(p.read_bytes())["path"] for p in (root / ".checksums").glob("*.json")}


def data_files(root: Path, monkeypatch) -> dict[str, Path]:
    """Three data files outside the cache, each hashed and remembered (however recently written):
    ``kept`` as it is, ``gone`` deleted and ``changed`` rewritten since; and in the store a stray
    file and a folder."""
    monkeypatch.setattr(checksums, "FRESH_NS", 0)
    files = {}
    for name in ("kept", "gone", "changed"):
        files[name] = root.parent / f"{name}.svm"
        files[name].write_bytes(TRAIN)
        cache.checksum(files[name])
    files["gone"].unlink()
    files["changed"].write_bytes(TEST)
    assert remembered(root) == {str(p) for p in files.values()}
    (root / ".checksums" / "stray.json").write_text("[1, 2]")
    (root / ".checksums" / "a folder").mkdir()
    return files


@pytest.mark.parametrize("command", [("datasets", "verify"), ("datasets", "fetch", NAME)])
def test_checksums_of_files_gone_or_changed_are_pruned(served, monkeypatch, command):
    """Before: ``<cache>/.checksums`` kept a record for every file ever hashed."""
    root, _ = served
    files = data_files(root, monkeypatch)
    assert invoke(*command)[0] == 0
    kept = str(files["kept"])
    assert remembered(root) - {str(p) for p in root.rglob("*")} == {kept}  # the cache's own, and the one kept
    assert not (root / ".checksums" / "stray.json").exists() and (root / ".checksums" / "a folder").is_dir()
    hashed = []
    real = checksums.file_digests
    monkeypatch.setattr(checksums, "file_digests", lambda path, *a, **k: hashed.append(path) or real(path, *a, **k))
    assert cache.checksum(files["kept"]) == hashlib.sha256(TRAIN).hexdigest() and hashed == []  # still served
    assert cache.prune_checksums() == 0


def test_pruning_a_read_only_cache_deletes_nothing_and_is_no_error(served, monkeypatch):
    root, _ = served
    data_files(root, monkeypatch)
    before = sorted(p.name for p in (root / ".checksums").iterdir())
    real = os.unlink

    def refuse(path, *args, **kwargs):
        if os.path.abspath(path).startswith(f"{root}{os.sep}"):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refuse)
    assert invoke("datasets", "verify")[0] == 0
    assert sorted(p.name for p in (root / ".checksums").iterdir()) == before
