"""The dataset cache and LIBSVM files when they are not what they should be.

Through the command line as a user meets them: a download in the cache that fails its pinned
checksum (same size, one label changed), converted files edited, devices, named pipes and
folders where the cache keeps files (and files where it keeps folders), a read-only cache, a
half-written manifest, LIBSVM numbers that Python reads and LIBSVM does not (``1_0``), and
CR-only line ends. Each ends in a correct result with exit 0 or in one line with exit 2 naming
the file, never a traceback, a hang or a wrong result; and the checksums that make this cheap
are computed once per change of a file. No network: a loopback server stands for the sources.
"""

from __future__ import annotations

import errno
import hashlib
import math
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from sbpbench.data import cache, checksums
from sbpbench.data.convert import libsvm_as_is
from sbpbench.data.fetch import Digest, FetchOptions, RemoteFile
from sbpbench.data.libsvm import read_libsvm
from sbpbench.data.registry import REGISTRY, Dataset
from sbpbench.errors import UserError
from tests._dataserver import FileServer
from tests.cli_runner import invoke, one_error_line
from tests.test_fuzz import BASE, TEST_LINES, TRAIN_LINES, fuzz
from tests.test_hostile_inputs import deadline, fifo

TRAIN = b"\n".join(TRAIN_LINES) + b"\n"
TEST = b"\n".join(TEST_LINES) + b"\n"
NAME = "hx-adult"
FAST = FetchOptions(attempts=2, backoff=0.01, read_timeout=2.0, connect_timeout=2.0, progress=False)


def fixture_dataset(server: FileServer) -> Dataset:
    """150 + 100 real Adult rows as a registered dataset, its files pinned and served by ``server``."""
    server.files.update({"hx.train": TRAIN, "hx.test": TEST})

    def remote(name: str, data: bytes) -> RemoteFile:
        return RemoteFile(name, (server.url + name,), (Digest("sha256", hashlib.sha256(data).hexdigest()),))

    return Dataset(NAME, "", "", "", 123, len(TRAIN_LINES), len(TEST_LINES),
                   {"train": remote("hx.train", TRAIN), "test": remote("hx.test", TEST)}, libsvm_as_is)


@pytest.fixture
def remember_at_once(monkeypatch):
    """Digests remembered for files however recently changed (the tests change them on purpose)."""
    monkeypatch.setattr(checksums, "FRESH_NS", 0)


@pytest.fixture
def root(tmp_path, monkeypatch):
    """An empty cache (``$SBPBENCH_DATA``) with :data:`NAME` registered, its server running."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SBPBENCH_DATA", str(folder))
    with FileServer({}) as server:
        monkeypatch.setitem(REGISTRY, NAME, fixture_dataset(server))
        yield folder


def downloads(root: Path) -> None:
    """Fetch :data:`NAME`'s files into the cache without converting them."""
    for remote in REGISTRY[NAME].files.values():
        cache.download(remote, FAST, root)


def refused(*args: str, workdir: Path | None = None) -> str:
    """Run ``sbpbench ARGS`` expecting exit 2 and one error line (within a deadline); return the line."""
    if args[0] == "run":
        args = (*args, "--results", str(workdir / "results"), "--no-plot", "--quiet")
    with deadline():
        code, stderr = invoke(*args)
    assert code == 2, (code, stderr[-800:])
    if workdir is not None:
        assert not [p for p in (workdir / "results").rglob("*") if p.is_file()], "a refused run left files"
    return one_error_line(stderr)


def experiment(workdir: Path, **dataset) -> Path:
    """A small experiment on :data:`NAME` (or on the ``dataset`` section given)."""
    data = yaml.safe_load(yaml.safe_dump(BASE))
    data.update(dataset={"name": NAME} if not dataset else dataset, solvers=["pegasos"],
                budget={"epochs": 1})
    path = workdir / "exp.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def ran(workdir: Path, config: Path) -> None:
    with deadline(60):
        code, stderr = invoke("run", str(config), "--results", str(workdir / "results"), "--no-plot", "--quiet")
    assert code == 0, stderr[-800:]


def one_label_changed(data: bytes) -> bytes:
    """``data`` with the label of its first line flipped, the size kept (``+1`` and ``-1``)."""
    first, rest = data.split(b"\n", 1)
    label, features = first.split(b" ", 1)
    flipped = {b"+1": b"-1", b"-1": b"+1"}[label]
    return flipped + b" " + features + b"\n" + rest


# ----------------------------------------------------------------------------- silent wrong results


def test_a_download_that_fails_its_checksum_is_refused_not_converted(root, tmp_path):
    """Before: converted and used by `datasets fetch` and by `run`, exit 0."""
    downloads(root)
    path = root / "downloads" / "hx.train"
    assert invoke("datasets", "verify", NAME)[0] == 2  # downloaded, not converted: incomplete, and checked
    damaged = one_label_changed(path.read_bytes())
    assert len(damaged) == path.stat().st_size
    path.write_bytes(damaged)  # the digests remembered above are of the file before this change
    for args in (("datasets", "fetch", NAME), ("run", str(experiment(tmp_path)))):
        line = refused(*args, workdir=tmp_path)
        assert f"{path}: checksum mismatch (expected sha256 {hashlib.sha256(TRAIN).hexdigest()}" in line
        assert line.endswith(f"the cache is damaged (run: sbpbench datasets fetch --force {NAME})")
        assert not cache.is_cached(NAME, root)
    with deadline():
        assert invoke("datasets", "fetch", "--force", NAME)[0] == 0  # as the message says: fetched again
    assert path.read_bytes() == TRAIN and cache.is_cached(NAME, root)


def test_offline_a_download_in_the_cache_is_verified_and_converted(root, monkeypatch):
    """Before: ``$SBPBENCH_OFFLINE`` refused a download already in the cache as one to fetch."""
    downloads(root)
    dataset = REGISTRY[NAME]
    elsewhere = {role: RemoteFile(r.name, (f"https://example.invalid/{r.name}",), r.digests)
                 for role, r in dataset.files.items()}
    monkeypatch.setitem(REGISTRY, NAME, Dataset(NAME, "", "", "", 123, dataset.n_train, dataset.n_test,
                                                 elsewhere, libsvm_as_is))
    with deadline():
        assert invoke("datasets", "fetch", NAME)[0] == 0
    path = root / "downloads" / "hx.test"
    cache.prepare(NAME, FAST, root, force=True)  # verified: kept
    path.write_bytes(one_label_changed(TEST))
    with pytest.raises(UserError, match="cannot download hx.test: SBPBENCH_OFFLINE is set"):
        cache.prepare(NAME, FAST, root, force=True)  # damaged, and offline not fetched again: kept as it was
    assert path.read_bytes() == one_label_changed(TEST)


def test_a_converted_file_edited_is_refused(root, tmp_path):
    cache.prepare(NAME, FAST, root)
    npz = root / NAME / "train.npz"
    data = npz.read_bytes()
    npz.write_bytes(data + b"\0")
    line = refused("run", str(experiment(tmp_path)), workdir=tmp_path)
    assert f"{npz}: {len(data) + 1} bytes, manifest says {len(data)}; the cache is damaged" in line
    npz.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])  # the same size
    assert f"{npz}: sha256 " in refused("datasets", "fetch", NAME)


def test_an_unchanged_file_is_hashed_once_and_any_change_again(root, monkeypatch, remember_at_once):
    """The full hash once per change of the file's stamp; an edit that restores the mtime is seen too."""
    calls = []
    real = checksums.file_digests
    monkeypatch.setattr(checksums, "file_digests", lambda path, *a, **k: calls.append(Path(path).name) or
                        real(path, *a, **k))
    data = root.parent / "data.svm"
    data.write_bytes(TRAIN)
    assert cache.checksum(data) == hashlib.sha256(TRAIN).hexdigest() == cache.checksum(str(data))
    assert calls == ["data.svm"]
    before = data.stat()
    time.sleep(0.05)  # so that the change time of the edit differs, whatever the clock's granularity
    data.write_bytes(one_label_changed(TRAIN))
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same mtime
    assert cache.checksum(data) == hashlib.sha256(one_label_changed(TRAIN)).hexdigest()
    assert calls == ["data.svm"] * 2
    cache.prepare(NAME, FAST, root)
    calls.clear()
    for _ in range(2):
        cache.load_cached(NAME, root)
        assert cache.verify(NAME, root).ok
    assert sorted(calls) == ["test.npz", "test.svm", "train.npz", "train.svm"]  # downloads: hashed at conversion
    with pytest.raises(UserError, match=r"nope\.svm: cannot read data file: No such file"):
        cache.checksum(root.parent / "nope.svm")


@pytest.mark.parametrize("where", ["label", "index", "value"])
def test_an_underscore_in_a_number_is_refused_with_its_line(tmp_path, where):
    """Before: ``1_0`` was read as 10 (Python's syntax), exit 0."""
    lines = list(TRAIN_LINES)
    label, first, *rest = lines[6].split()
    index, value = first.split(b":")
    token = {"label": (b"+1_0", first), "index": (label, b"1_0:" + value), "value": (label, index + b":1_0")}[where]
    lines[6] = b" ".join([token[0], token[1], *rest])
    (tmp_path / "train.svm").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "test.svm").write_bytes(TEST)
    config = experiment(tmp_path, path="train.svm", test_path="test.svm", n_features=123)
    for command in ("validate", "run"):
        line = refused(command, str(config), workdir=tmp_path)
        assert f"{tmp_path / 'train.svm'}:7: expected " in line


def test_line_ends(tmp_path):
    """LF and CRLF read alike; CR-only line ends, or a CR inside a line, refused as FILE:LINE."""
    lf, lf_labels = read_libsvm(TRAIN, "f")
    crlf, crlf_labels = read_libsvm(TRAIN.replace(b"\n", b"\r\n"), "f")
    assert (lf != crlf).nnz == 0 and (lf_labels == crlf_labels).all()
    with pytest.raises(UserError, match=r"^f:1: a carriage return \(CR\) inside the line; LIBSVM lines end in LF"):
        read_libsvm(TRAIN.replace(b"\n", b"\r"), "f")
    with pytest.raises(UserError, match=r"^f:3: a carriage return"):
        read_libsvm(b"1 1:1\n-1 2:1\n1 3:1\r-1 4:1\n", "f")
    assert read_libsvm(b"1 1:1 # a_comment\r\n-1 2:1\n", "f")[0].shape == (2, 2)  # comments may hold anything
    (tmp_path / "cr.svm").write_bytes(TRAIN.replace(b"\n", b"\r"))
    (tmp_path / "test.svm").write_bytes(TEST)
    line = refused("validate", str(experiment(tmp_path, path="cr.svm", test_path="test.svm")))
    assert f"{tmp_path / 'cr.svm'}:1: a carriage return" in line


# ----------------------------------------------------------------------------- devices, folders, files


def not_a_file(path: Path, kind: str) -> None:
    """Replace ``path`` by a named pipe, a link to /dev/zero or a folder."""
    if os.path.lexists(path):
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    {"fifo": fifo, "device": lambda p: p.symlink_to("/dev/zero"), "folder": Path.mkdir}[kind](path)


KINDS = {"fifo": "a named pipe (FIFO)", "device": "a character device", "folder": "a folder"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_download_that_is_no_file_is_refused_at_once(root, tmp_path, kind):
    """Before: a device was hashed forever (`run`, `datasets verify`), a folder a traceback."""
    downloads(root)
    path = root / "downloads" / "hx.train"
    not_a_file(path, kind)
    expected = f"{path}: cannot read cached download: it is {KINDS[kind]}, not a regular file"
    assert expected in refused("datasets", "fetch", NAME)
    assert expected in refused("run", str(experiment(tmp_path)), workdir=tmp_path)
    with deadline():
        code, _ = invoke("datasets", "verify", NAME)
    assert code == 2
    if kind == "folder":  # it may hold anything: not deleted
        line = refused("datasets", "fetch", "--force", NAME)
        assert f"{path}: it is a folder where the cache keeps the download hx.train; remove it" in line
        return
    with deadline():  # a pipe or a link is replaced by the file fetched again
        assert invoke("datasets", "fetch", "--force", NAME)[0] == 0
    assert path.read_bytes() == TRAIN


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("filename", ["train.npz", "test.npz", "manifest.json"])
def test_a_converted_file_that_is_no_file_is_refused_at_once(root, tmp_path, kind, filename):
    cache.prepare(NAME, FAST, root)
    path = root / NAME / filename
    not_a_file(path, kind)
    what = "dataset manifest" if filename == "manifest.json" else "converted file"
    line = refused("run", str(experiment(tmp_path)), workdir=tmp_path)
    assert f"{path}: cannot read {what}: it is {KINDS[kind]}, not a regular file" in line
    assert line.endswith(f"the cache is damaged (run: sbpbench datasets fetch --force {NAME})")
    with deadline():
        assert invoke("datasets", "verify", NAME)[0] == 2
        assert invoke("datasets", "list")[0] == 0
        assert invoke("datasets", "fetch", "--force", NAME)[0] == 0  # as the message says
    ran(tmp_path, experiment(tmp_path))


@pytest.mark.parametrize("where", ["downloads", ".locks", NAME, "."])
def test_a_file_where_the_cache_keeps_a_folder_is_one_line(tmp_path, monkeypatch, where):
    root = tmp_path / "cache"
    monkeypatch.setenv("SBPBENCH_DATA", str(root))
    with FileServer({}) as server:
        monkeypatch.setitem(REGISTRY, NAME, fixture_dataset(server))
        if where != ".":
            root.mkdir()
        (root / where).write_text("in the way\n")
        line = refused("datasets", "fetch", NAME)
    assert str(root) in line
    assert {"downloads": "a file is in the way", ".locks": "cannot take the lock (File exists)",
            NAME: f"it is a file where the cache keeps the folder of the converted {NAME}; remove it",
            ".": "a file is in the way"}[where] in line


def test_a_file_record_or_memo_that_is_no_file(root, tmp_path, remember_at_once):
    """A remembered digest that is a pipe is ignored (hashed again); the download record of an unpinned
    file that is no file is reported, not trusted."""
    downloads(root)
    cache.verify(NAME, root)
    for record in (root / ".checksums").iterdir():
        not_a_file(record, "fifo")
    with deadline():
        assert cache.verify(NAME, root).files[0].state == "ok"
    unpinned = RemoteFile("hx.train", REGISTRY[NAME].files["train"].urls)
    not_a_file(root / "downloads" / "hx.train.sha256", "device")
    from sbpbench.data.fetch import verify_download

    with deadline():
        problem = verify_download(unpinned, root / "downloads" / "hx.train")
    assert "hx.train.sha256: cannot read download record: it is a character device" in problem


@pytest.mark.parametrize("kind", KINDS)
def test_a_partial_download_or_a_lock_that_is_no_file(root, kind):
    """A pipe or a link left as ``.part`` is replaced by the download, a folder refused (not deleted);
    a lock file that is no file is refused."""
    part = root / "downloads" / "hx.train.part"
    lock_file = root / ".locks" / "hx.test.lock"
    not_a_file(part, kind)
    not_a_file(lock_file, kind)
    if kind == "folder":
        assert f"{part}: it is a folder where a download keeps its partial file; remove it" in \
            refused("datasets", "fetch", NAME)
        part.rmdir()
        assert f"{lock_file}: cannot take the lock (Is a directory)" in refused("datasets", "fetch", NAME)
        return
    assert f"{lock_file}: cannot take the lock: it is {KINDS[kind]}, not a regular file; remove it" in \
        refused("datasets", "fetch", NAME)
    assert (root / "downloads" / "hx.train").read_bytes() == TRAIN and not os.path.lexists(part)


# ----------------------------------------------------------------------------- read-only caches, manifests


@contextmanager
def read_only(monkeypatch, root: Path):
    """``root`` as on a read-only file system: nothing under it opened for writing (by ``os.open``: the
    lock files, the records written atomically), as a test run by root cannot get from file modes."""
    real = os.open

    def refuse(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and os.path.abspath(path).startswith(f"{root}{os.sep}"):
            raise OSError(errno.EROFS, "Read-only file system")
        return real(path, flags, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(os, "open", refuse)
        yield


def test_a_read_only_cache_serves_what_verifies(root, tmp_path, monkeypatch):
    """Before: a traceback (the lock was taken outside the error handling)."""
    cache.prepare(NAME, FAST, root)
    shutil.rmtree(root / ".checksums", ignore_errors=True)
    with read_only(monkeypatch, root):
        ran(tmp_path, experiment(tmp_path))
        with deadline():
            assert invoke("datasets", "fetch", NAME)[0] == 0
            assert invoke("datasets", "verify", NAME)[0] == 0
        shutil.rmtree(root / NAME)  # downloads left, not converted: converting needs a writable cache
        (tmp_path / "again").mkdir()
        line = refused("run", str(experiment(tmp_path / "again")), workdir=tmp_path / "again")
    assert "cannot take the lock (Read-only file system); the dataset cache" in line
    assert f"must be writable to convert {NAME}: set SBPBENCH_DATA to another folder" in line


def test_a_half_written_manifest_is_called_damaged_not_missing(root, tmp_path):
    """Before: offline, "cannot download ..." as if the dataset had never been fetched."""
    cache.prepare(NAME, FAST, root)
    manifest = root / NAME / "manifest.json"
    manifest.write_bytes(manifest.read_bytes()[:40])
    line = refused("run", str(experiment(tmp_path)), workdir=tmp_path)
    assert f"{manifest}: damaged manifest (not JSON: " in line and "cannot download" not in line
    assert line.endswith(f"(run: sbpbench datasets fetch --force {NAME})")
    with deadline():
        code, _ = invoke("datasets", "list")
    assert code == 0


# ----------------------------------------------------------------------------- fuzz


DAMAGE = ["flip", "truncate", "append", "delete", "fifo", "device", "folder", "garbage"]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """A cache holding :data:`NAME` converted, the dataset, and its splits (nothing is fetched again)."""
    root = tmp_path_factory.mktemp("template") / "cache"
    with FileServer({}) as server, pytest.MonkeyPatch.context() as mp:
        dataset = fixture_dataset(server)
        mp.setitem(REGISTRY, NAME, dataset)
        cache.prepare(NAME, FAST, root)
        return root, dataset, cache.load_cached(NAME, root)


@fuzz(100)
@given(st.lists(st.tuples(st.integers(0, 50), st.sampled_from(DAMAGE), st.integers(0, 2**16)), min_size=1, max_size=3))
def test_fuzz_cache_damage(converted, damages):
    """Whatever is done to the files of a converted dataset, `datasets verify` and loading the
    dataset end in one line with exit 2, or (damage to what loading does not use) exit 0 with
    the data as converted; never a traceback, a hang, or other data."""
    import tempfile

    template, dataset, expected = converted
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        root = Path(tmp) / "cache"
        shutil.copytree(template, root, symlinks=True)
        mp.setenv("SBPBENCH_DATA", str(root))
        mp.setitem(REGISTRY, NAME, dataset)
        files = sorted(p for p in root.rglob("*") if p.is_file() and ".locks" not in p.parts)
        original = {p: p.read_bytes() for p in files}
        for at, damage, byte in damages:
            path = files[at % len(files)]
            if damage in ("fifo", "device", "folder"):
                not_a_file(path, damage)
            elif damage == "delete":
                if os.path.lexists(path):
                    not_a_file(path, "folder")
                    path.rmdir()
            elif path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                k = byte % max(1, len(data))
                data = {"flip": data[:k] + bytes([(data[k:k + 1] or b"\0")[0] ^ 1]) + data[k + 1:],
                        "truncate": data[:k], "append": data + bytes([byte % 256]),
                        "garbage": bytes([byte % 256]) * (byte % 7 + 1)}[damage]
                path.write_bytes(data)
        deleted = {p for p in files if not os.path.lexists(p)}
        changed = {p for p in files if p in deleted or p.is_symlink() or not p.is_file()
                   or p.read_bytes() != original[p]}  # two flips of one byte, say, change nothing
        with deadline():
            code, stderr = invoke("datasets", "verify", NAME)
        assert code in (0, 2) and "Traceback" not in stderr
        if code == 2:
            one_error_line(stderr)
        converted = {root / NAME / f for f in ("train.npz", "test.npz", "manifest.json")}
        checked = converted | {root / NAME / f for f in ("train.svm", "test.svm")} | \
            {root / "downloads" / f for f in ("hx.train", "hx.test")}  # a download deleted is not needed
        if changed & checked - deleted or changed & converted:
            assert code == 2, stderr
        with deadline():
            try:
                train, test = cache.load_cached(NAME, root)
            except UserError as exc:
                assert "\n" not in str(exc)
            else:  # loaded: the data as converted
                assert not changed & converted
                assert (train.X != expected[0].X).nnz == 0 and (train.y == expected[0].y).all()
                assert (test.X != expected[1].X).nnz == 0 and (test.y == expected[1].y).all()


# ----------------------------------------------------------------------------- sizes


def test_a_huge_declared_n_features_on_a_tiny_file_runs_sparsely(tmp_path):
    """Before: each test row scattered into a fresh zeroed ``n_features``-long vector (7.45 GiB
    written per row at 10^9: a hang, 16 GB resident). Now the vectors are allocated zero, once,
    and only the rows' nonzeros are written: the same result as with the features the file uses."""
    import resource

    import pandas as pd

    (tmp_path / "train.svm").write_bytes(TRAIN)
    (tmp_path / "test.svm").write_bytes(TEST)
    errors = []
    for n_features in (123, 10**9):
        workdir = tmp_path / str(n_features)
        workdir.mkdir()
        config = experiment(workdir, path=str(tmp_path / "train.svm"), test_path=str(tmp_path / "test.svm"),
                            n_features=n_features)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        ran(workdir, config)
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before < 2**30
        (curves,) = (workdir / "results").rglob("curves.csv")
        errors.append(pd.read_csv(curves)["test_error"].tolist())
    assert errors[0] == errors[1]


def strtod(text: bytes) -> float | None:
    """C's ``strtod`` as LIBSVM calls it: the value when it reads the whole of ``text``, else None."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.strtod.restype = ctypes.c_double
    libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    buffer = ctypes.create_string_buffer(text)
    end = ctypes.c_char_p()
    value = libc.strtod(buffer, ctypes.byref(end))
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buffer)
    return value if text and consumed == len(text) else None


@fuzz(300)
@given(st.text(alphabet="0123456789_.eE+-xXpnaifINF ", min_size=1, max_size=8).map(str.encode))
def test_fuzz_numbers_follow_libsvm(token):
    """A value LIBSVM's ``strtod`` reads whole, finite and decimal, is read as the same number; any
    other is refused naming the line (hexadecimal floats too: the other LIBSVM readers refuse them)."""
    token = token.strip() or b"1"
    expected = strtod(token)
    try:
        X, _ = read_libsvm(b"1 1:1\n-1 2:" + token + b"\n", "f")
    except UserError as exc:
        assert str(exc).startswith("f:2: "), exc
        assert expected is None or not math.isfinite(expected) or b"x" in token.lower(), (token, expected)
    else:
        assert expected is not None and b"_" not in token
        assert X[1, 1] == expected or (X[1, 1] == 0 and abs(expected) < 1e-300)
