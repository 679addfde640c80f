"""Downloads over a loopback server: retries, resume, checksums, locking, mirrors, archives."""

from __future__ import annotations

import bz2
import errno
import gzip
import hashlib
import io
import re
import tarfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sbpbench.data import cache, convert
from sbpbench.data.cache import download
from sbpbench.data.fetch import Digest, FetchOptions, RemoteFile, sha256_of, verify_download
from sbpbench.data.registry import REGISTRY, Dataset
from sbpbench.data.sources.mnist import mnist_split
from sbpbench.errors import UserError
from tests._dataserver import FileServer, closed_port

PAYLOAD = bytes(np.random.default_rng(0).integers(0, 256, 200_000, dtype=np.uint8))
#: Few tries, short pauses; a read timeout short beside a stalled server's minute but long beside the
#: pauses a loaded machine makes (a timeout taken for a stall would add a request that tests count).
FAST = dict(attempts=3, backoff=0.01, read_timeout=2.0, connect_timeout=1.0, progress=False)


def remote(server: FileServer, name: str = "blob.bin", data: bytes = PAYLOAD) -> RemoteFile:
    return RemoteFile(name, (server.url + name,), (Digest("sha256", hashlib.sha256(data).hexdigest()),))


def leftovers(root: Path) -> list[str]:
    """Files in the cache other than lock files."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".locks" not in p.parts)


@pytest.fixture
def server():
    with FileServer({"blob.bin": PAYLOAD}) as s:
        yield s


def test_plain_download_records_checksum(server, tmp_path):
    path = download(remote(server), FetchOptions(**FAST), tmp_path)
    assert path.read_bytes() == PAYLOAD
    assert leftovers(tmp_path) == ["downloads/blob.bin", "downloads/blob.bin.sha256"]
    download(remote(server), FetchOptions(**FAST), tmp_path)  # cached: no second request
    assert len(server.gets("blob.bin")) == 1


def test_http_500_then_success(server, tmp_path):
    server.faults["blob.bin"] = ["500", "500"]
    assert download(remote(server), FetchOptions(**FAST), tmp_path).read_bytes() == PAYLOAD
    assert server.gets("blob.bin") == [None, None, None]


def test_persistent_500_is_one_line_error(server, tmp_path):
    server.faults["blob.bin"] = ["500"] * 5
    with pytest.raises(UserError, match=r"cannot download blob.bin: tried .*blob.bin \(HTTP 500, after 3 tries\)"):
        download(remote(server), FetchOptions(**FAST), tmp_path)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("fault", ["truncate", "reset"])
def test_truncated_or_dropped_body_resumes_with_range(server, tmp_path, fault):
    server.faults["blob.bin"] = [fault]
    assert download(remote(server), FetchOptions(**FAST), tmp_path).read_bytes() == PAYLOAD
    ranges = server.gets("blob.bin")  # the second request resumes after the bytes received
    assert ranges[0] is None and ranges[1] in {f"bytes={k}-" for k in range(1, len(PAYLOAD) // 2 + 1)}


def test_stalled_server_times_out_and_resumes(tmp_path):
    with FileServer({"blob.bin": PAYLOAD}, stall_s=60.0) as server:  # a minute: never waited out, even loaded
        server.faults["blob.bin"] = ["stall"]
        t0 = time.monotonic()
        assert download(remote(server), FetchOptions(**FAST), tmp_path).read_bytes() == PAYLOAD
        assert time.monotonic() - t0 < server.stall_s  # gave up on the stalled response early
    assert server.gets("blob.bin")[1] in {f"bytes={k}-" for k in range(1, len(PAYLOAD) // 2 + 1)}


@pytest.mark.parametrize("limits,reason", [
    (dict(grace=0.3, min_rate=1000.0), r"too slow: 0\.0 kB in 0 s, below the minimum 1 kB/s"),
    (dict(deadline=0.3, min_rate=0.0), r"not complete after 0\.3 s \(the limit per file\)"),
])
def test_trickling_server_is_abandoned(server, tmp_path, limits, reason):
    server.faults["blob.bin"] = ["trickle"]
    t0 = time.monotonic()
    with pytest.raises(UserError, match=reason) as info:
        download(remote(server), FetchOptions(**{**FAST, **limits}), tmp_path)
    # a byte every 0.05 s never trips the 2 s read timeout, and the whole file would take 10^4 s:
    # the limits of 0.3 s ended it (30 s is room for a loaded machine)
    assert time.monotonic() - t0 < 30
    assert "server is in trouble: try again later" in str(info.value)
    assert leftovers(tmp_path) == []


def test_progress_lines_when_not_a_terminal(tmp_path, capsys):
    with FileServer({"blob.bin": PAYLOAD}, stall_s=1.0) as server:
        server.faults["blob.bin"] = ["stall"]
        opts = FetchOptions(**{**FAST, "read_timeout": 3.0, "progress": True, "notice_every": 0.25})
        assert download(remote(server), opts, tmp_path).read_bytes() == PAYLOAD
    lines = capsys.readouterr().err.splitlines()
    waiting = r"waiting for blob\.bin: no data for \d+ s \(0\.1/0\.2 MB so far\)"
    assert any(re.fullmatch(waiting, x) for x in lines), lines
    assert "\r" not in "".join(lines)


@pytest.mark.parametrize("fault,hint,not_hint", [
    ("500", "the server is in trouble: try again later, or use another mirror", "under that name"),
    ("404", "check the mirror holds the file under that name", "try again later"),
])
def test_failure_hint_matches_the_failure(server, tmp_path, fault, hint, not_hint):
    name = "blob.bin" if fault == "500" else "absent.bin"
    server.faults["blob.bin"] = ["500"] * 5
    rf = RemoteFile(name, ("http://example.invalid/x",), (Digest("sha256", "0" * 64),))
    with pytest.raises(UserError) as info:
        download(rf, FetchOptions(mirror=server.url, **FAST), tmp_path)
    assert hint in str(info.value) and not_hint not in str(info.value)


def test_wrong_checksum_names_file_expected_actual(server, tmp_path):
    bad = RemoteFile("blob.bin", (server.url + "blob.bin",), (Digest("sha256", "0" * 64),))
    with pytest.raises(UserError) as info:
        download(bad, FetchOptions(**FAST), tmp_path)
    text = str(info.value)
    assert "blob.bin" in text and "0" * 64 in text and hashlib.sha256(PAYLOAD).hexdigest() in text
    assert "\n" not in text
    assert leftovers(tmp_path) == []


def test_no_network_no_mirror_fails_fast_with_hint(tmp_path, monkeypatch):
    port = closed_port()
    urls = (f"http://127.0.0.1:{port}/a/blob.bin", f"http://127.0.0.1:{port}/b/blob.bin")
    backoffs: list[float] = []
    monkeypatch.setattr(time, "sleep", backoffs.append)
    t0 = time.monotonic()
    with pytest.raises(UserError) as info:
        download(RemoteFile("blob.bin", urls), FetchOptions(progress=False), tmp_path)
    assert backoffs == []  # a refused connection is not tried again after a pause
    # nor waited out: less than one connect timeout (10 s by default) for both addresses together,
    # where a refusal takes milliseconds (room for a loaded machine)
    assert time.monotonic() - t0 < 10
    text = str(info.value)
    assert all(u in text for u in urls) and "SBPBENCH_MIRROR" in text  # every address tried, and the way out
    assert "--mirror" not in text  # the Python API has no such option; `sbpbench datasets fetch` does:
    with pytest.raises(UserError, match=r"pass --mirror DIR \(or set SBPBENCH_MIRROR\)$"):  # the caller's advice
        download(RemoteFile("blob.bin", urls), FetchOptions(progress=False, mirror_advice="pass --mirror DIR "
                                                            "(or set SBPBENCH_MIRROR)"), tmp_path)
    assert leftovers(tmp_path) == []


def test_concurrent_fetches_download_once(tmp_path):
    with FileServer({"blob.bin": PAYLOAD}) as server:
        server.faults["blob.bin"] = ["slow"]
        results, errors = [], []

        def worker():
            try:
                results.append(download(remote(server), FetchOptions(**FAST), tmp_path).read_bytes())
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and results == [PAYLOAD] * 3
        assert server.gets("blob.bin") == [None]


def test_trust_on_first_use_detects_later_damage(server, tmp_path):
    unpinned = RemoteFile("blob.bin", (server.url + "blob.bin",))
    path = download(unpinned, FetchOptions(**FAST), tmp_path)
    assert verify_download(unpinned, path) is None
    path.write_bytes(PAYLOAD[:-1] + b"x")
    assert "differs from the" in verify_download(unpinned, path)


def test_content_checksum_accepts_recompressed_copy(tmp_path):
    raw = b"canonical content\n" * 1000
    data = gzip.compress(raw, mtime=123)
    with FileServer({"x.gz": data}) as server:
        rf = RemoteFile("x.gz", (server.url + "x.gz",),
                        (Digest("md5", "f" * 32), Digest("sha256", hashlib.sha256(raw).hexdigest(), content=True)))
        assert download(rf, FetchOptions(**FAST), tmp_path).read_bytes() == data


@pytest.mark.parametrize("kind", ["folder", "file-url", "http"])
def test_mirror_replaces_original_addresses(tmp_path, kind):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "blob.bin").write_bytes(PAYLOAD)
    rf = RemoteFile("blob.bin", (f"http://127.0.0.1:{closed_port()}/blob.bin",),
                    (Digest("sha256", hashlib.sha256(PAYLOAD).hexdigest()),))
    with FileServer({"blob.bin": PAYLOAD}) as server:
        root = {"folder": str(mirror), "file-url": mirror.as_uri(), "http": server.url}[kind]
        path = download(rf, FetchOptions(mirror=root, **FAST), tmp_path / "cache")
    assert path.read_bytes() == PAYLOAD


def test_missing_on_mirror_says_so(tmp_path):
    with pytest.raises(UserError, match="check the mirror"):
        download(RemoteFile("nothere.bin", ("http://example.invalid/x",)),
                   FetchOptions(mirror=str(tmp_path), **FAST), tmp_path / "cache")


def _tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_safe_extraction(tmp_path):
    good = tmp_path / "good.tar.bz2"
    good.write_bytes(_tar({"lasvm/train.txt": b"1 1:1\n"}))
    out = convert.extract_member(good, "lasvm/train.txt", tmp_path / "x")
    assert out == tmp_path / "x" / "train.txt" and out.read_bytes() == b"1 1:1\n"
    evil = tmp_path / "evil.tar.bz2"
    evil.write_bytes(_tar({"../../escape.txt": b"x", "lasvm/train.txt": b"1 1:1\n"}))
    with pytest.raises(UserError, match="unsafe member path"):
        convert.extract_member(evil, "lasvm/train.txt", tmp_path / "y")
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path.parent / "escape.txt").exists()


# ----------------------------------------------------------------------------- each original format


def _idx(magic: int, arr: np.ndarray) -> bytes:
    head = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    return head + arr.astype(np.uint8).tobytes()


def _fixture_sources(server: FileServer) -> dict[str, Dataset]:
    """Tiny datasets in every original format, served by ``server``."""
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (30, 4, 4))
    digits = np.arange(30) % 10
    csv = (b"39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, "
           b"2174, 0, 40, United-States, <=50K\n"
           b"50, ?, 83311, Bachelors, 13, Married-civ-spouse, ?, Husband, White, Male, 0, 0, 13, ?, >50K\n\n")
    lasvm = b"-1 0:1 5:1 122:0\n+1 2:1 122:1\n"
    files = {"img.gz": gzip.compress(_idx(2051, images), mtime=0), "lab.gz": gzip.compress(_idx(2049, digits), mtime=0),
             "a.data": csv, "a.test": b"|1x3 Cross validator\n" + csv.replace(b"K\n", b"K.\n"),
             "l.bz2": bz2.compress(lasvm), "arch.tar.bz2": _tar({"d/l.txt": lasvm})}
    server.files.update(files)

    def rf(name):
        return RemoteFile(name, (server.url + name,), (Digest("sha256", hashlib.sha256(files[name]).hexdigest()),))

    def lasvm_conv(p):
        return convert.svmlight_split(p["t"], 123, True), None

    return {
        "fx-mnist": Dataset("fx-mnist", "", "", "", 16, 30, 30, {"i": rf("img.gz"), "l": rf("lab.gz")},
                                   lambda p: (mnist_split(p["i"], p["l"], 8),) * 2),
        "fx-adult": Dataset("fx-adult", "", "", "", 123, 2, 2, {"train": rf("a.data"), "test": rf("a.test")},
                                   REGISTRY["adult"].convert),
        "fx-lasvm": Dataset("fx-lasvm", "", "", "", 123, 2, 0, {"t": rf("l.bz2")}, lasvm_conv),
        "fx-tar": Dataset("fx-tar", "", "", "", 123, 2, 0, {"t": rf("arch.tar.bz2")}, lasvm_conv,
                                 members={"t": "d/l.txt"}),
    }


def test_every_original_format_converts(tmp_path, monkeypatch):
    with FileServer({}) as server:
        for name, src in _fixture_sources(server).items():
            monkeypatch.setitem(REGISTRY, name, src)
            cache.prepare(name, FetchOptions(**FAST), tmp_path)
            train, test = cache.load_cached(name, tmp_path)
            assert train.provenance == f"cached conversion in {(tmp_path / name).resolve()}"
            if name == "fx-mnist":
                assert train.y.tolist() == [1.0 if d == 8 else -1.0 for d in np.arange(30) % 10]
                assert train.X.max() <= 1.0 and train.X.shape == (30, 16)
            if name == "fx-adult":
                text = (tmp_path / name / "train.svm").read_bytes()
                assert text == b"-1 3:1 11:1 14:1 19:1 39:1 42:1 55:1 64:1 67:1 73:1 75:1 76:1 80:1 83:1 \n" \
                               b"+1 5:1 14:1 19:1 39:1 40:1 63:1 67:1 73:1 74:1 76:1 78:1 \n"
                assert (tmp_path / name / "test.svm").read_bytes() == text
            if name in ("fx-lasvm", "fx-tar"):
                assert (tmp_path / name / "train.svm").read_bytes() == b"-1 1:1 6:1\n1 3:1 123:1\n"
                assert test.n == 0 and test.X.shape[1] == 123
        assert not (tmp_path / "fx-tar" / "extracted").exists()


def test_conversion_is_deterministic_and_damage_is_detected(tmp_path, monkeypatch):
    with FileServer({}) as server:
        src = _fixture_sources(server)["fx-mnist"]
        monkeypatch.setitem(REGISTRY, "fx-mnist", src)
        folder = cache.prepare("fx-mnist", FetchOptions(**FAST), tmp_path)
        first = {p.name: p.read_bytes() for p in folder.iterdir()}
        cache.prepare("fx-mnist", FetchOptions(**FAST), tmp_path, force=True)
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == first
        assert cache.verify("fx-mnist", tmp_path).verdict == "ok"
        npz = folder / "train.npz"
        npz.write_bytes(npz.read_bytes()[:-10] + b"0123456789")
        assert cache.verify("fx-mnist", tmp_path).verdict == "DAMAGED (train.npz)"
        with pytest.raises(UserError, match="train.npz.*damaged"):
            cache.load_cached("fx-mnist", tmp_path)


def test_failed_conversion_leaves_nothing(tmp_path, monkeypatch):
    with FileServer({}) as server:
        src = _fixture_sources(server)["fx-adult"]
        server.files["a.data"] = b"39, Nowhere, 1, 2\n"
        bad = Dataset("fx-bad", "", "", "", 123, 2, 2,
                             {"train": RemoteFile("a.data", (server.url + "a.data",)), "test": src.files["test"]},
                             src.convert)
        monkeypatch.setitem(REGISTRY, "fx-bad", bad)
        with pytest.raises(UserError, match="a.data:1: expected 15 comma-separated fields"):
            cache.prepare("fx-bad", FetchOptions(**FAST), tmp_path)
    assert not cache.is_cached("fx-bad", tmp_path)
    assert [p for p in leftovers(tmp_path) if not p.startswith("downloads/")] == []


def test_verify_reports_each_file_partial_downloads_and_incomplete_datasets(tmp_path, monkeypatch, capsys):
    from tests.cli_runner import sbpbench

    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    with FileServer({}) as server:
        full = _fixture_sources(server)["fx-mnist"]
        download(full.files["i"], FetchOptions(**FAST), tmp_path)  # one of its two files, as mnist-t10k does
    (tmp_path / "downloads" / "lab.gz.part").write_bytes(b"12345")  # left by a killed download
    monkeypatch.setitem(REGISTRY, "fx-mnist", full)
    assert sbpbench(monkeypatch, "datasets", "verify") == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:4] == [  # the bundled Adult, always checked
        "adult: ok (bundled copy)",
        "  the bundled copy of Adult (LIBSVM a9a): ok",
        "  adult.data: missing (not needed: the bundled copy is used)",
        "  adult.test: missing (not needed: the bundled copy is used)",
    ]
    assert captured.out.splitlines()[4:] == [
        "fx-mnist: INCOMPLETE (missing lab.gz; partial download lab.gz.part)",
        "  img.gz: ok",
        "  lab.gz.part: partial (5 bytes left by an interrupted download)",
        "  lab.gz: missing",
    ]
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("sbpbench: error: 1 dataset(s) damaged or incomplete in ")
    assert "datasets fetch --force fx-mnist" in captured.err

    # a converted dataset using only img.gz: the partial fx-mnist is no longer listed unless named
    (tmp_path / "downloads" / "lab.gz.part").unlink()
    sub = Dataset("fx-sub", "", "", "", 16, 30, 0, {"i": full.files["i"]}, full.convert)
    monkeypatch.setitem(REGISTRY, "fx-sub", sub)
    (tmp_path / "fx-sub").mkdir()
    (tmp_path / "fx-sub" / "manifest.json").write_text('{"files": {}, "n_features": 16}')
    assert sbpbench(monkeypatch, "datasets", "verify") == 0
    assert capsys.readouterr().out.splitlines()[4:6] == ["fx-sub: ok", "  img.gz: ok"]
    assert sbpbench(monkeypatch, "datasets", "verify", "fx-mnist") == 2
    assert "fx-mnist: INCOMPLETE (missing lab.gz)" in capsys.readouterr().out


def test_a_full_disk_while_converting_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    with FileServer({}) as server:
        monkeypatch.setitem(REGISTRY, "fx-mnist", _fixture_sources(server)["fx-mnist"])
        monkeypatch.setattr(cache, "_write_split", disk_full)
        with pytest.raises(UserError, match=r"cannot write the converted fx-mnist \(No space left on device\)"):
            cache.prepare("fx-mnist", FetchOptions(**FAST), tmp_path)
    assert not cache.is_cached("fx-mnist", tmp_path)
    assert [p for p in leftovers(tmp_path) if not p.startswith("downloads/")] == []


def test_an_unreadable_file_or_a_foreign_manifest_is_no_traceback(tmp_path):
    with pytest.raises(UserError, match="cannot read"):
        sha256_of(tmp_path)  # a folder where a file was expected
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "manifest.json").write_text("[1, 2]")
    with pytest.raises(UserError, match=r"x/manifest.json: damaged manifest \(a JSON list, not an object\); "
                                        r"the cache is damaged \(run: sbpbench datasets fetch --force x\)"):
        cache.is_cached("x", tmp_path)
