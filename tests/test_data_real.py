"""The real files of ../shared/datasets through the same code, served over loopback as a mirror."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from sbpbench.data import cache
from sbpbench.data.cache import download
from sbpbench.data.convert import svmlight_split
from sbpbench.data.fetch import FetchOptions
from sbpbench.data.loading import load_registered
from sbpbench.data.registry import REGISTRY
from sbpbench.data.sources.mnist import mnist_split
from sbpbench.errors import UserError
from tests._dataserver import FileServer
from tests.cli_runner import sbpbench
from tests.problems import SHARED

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/datasets is not available")
FAST = dict(attempts=2, backoff=0.01, progress=False)


@pytest.fixture(scope="module")
def mirror():
    """Every shared file under its registry name, served over HTTP on 127.0.0.1."""
    files = {p.name: p for p in SHARED.rglob("*") if p.is_file() and p.name not in ("README.md", "SHA256SUMS")}
    with FileServer(files) as server:
        yield server


def test_uci_adult_converts_to_a9a_row_for_row(mirror, tmp_path):
    folder = cache.prepare("adult", FetchOptions(mirror=mirror.url, **FAST), tmp_path)
    for ours, theirs in (("train.svm", "a9a"), ("test.svm", "a9a.t")):
        mine = (folder / ours).read_bytes().splitlines()
        ref = (SHARED / "adult" / theirs).read_bytes().splitlines()
        assert len(mine) == len(ref)
        assert sum(a != b for a, b in zip(mine, ref)) == 0  # no row differs (the files are byte-identical)
    train, test = cache.load_cached("adult", tmp_path)
    assert (train.n, test.n) == (32561, 16281) and train.X.shape[1] == 123
    assert (int((train.y > 0).sum()), int((test.y > 0).sum())) == (7841, 3846)


def test_lasvm_adult_equals_a9a(mirror, tmp_path):
    cache.prepare("adult-lasvm", FetchOptions(mirror=mirror.url, **FAST), tmp_path)
    train, test = cache.load_cached("adult-lasvm", tmp_path)
    for split, name in ((train, "a9a"), (test, "a9a.t")):
        X, y = svmlight_split(SHARED / "adult" / name, 123, zero_based=False)
        assert (split.X != X).nnz == 0 and np.array_equal(split.y, y)


def test_mnist_test_set_eight_vs_rest(mirror, tmp_path):
    files = REGISTRY["mnist"].files  # pinned content checksums accept the re-gzipped copies
    images = download(files["test_images"], FetchOptions(mirror=mirror.url, **FAST), tmp_path)
    labels = download(files["test_labels"], FetchOptions(mirror=mirror.url, **FAST), tmp_path)
    X, y = mnist_split(images, labels, 8)
    assert X.shape == (10000, 784) and int((y > 0).sum()) == 974
    assert X.max() == 1.0 and X.min() == 0.0
    download(files["train_labels"], FetchOptions(mirror=mirror.url, **FAST), tmp_path)


@pytest.mark.slow  # 60000 images fetched, checked and converted
def test_full_mnist_through_the_mirror(mirror, tmp_path):
    """The 60000 training images: fetched by their canonical checksum, converted, 8 vs rest."""
    folder = cache.prepare("mnist", FetchOptions(mirror=mirror.url, **FAST), tmp_path)
    downloads = {r.name: cache.download_path(r, tmp_path) for r in REGISTRY["mnist"].files.values()}
    record = download(REGISTRY["mnist"].files["train_images"], FetchOptions(mirror=mirror.url, **FAST),
                        tmp_path)  # cached now: the verified file
    assert record == downloads["train-images-idx3-ubyte.gz"]
    assert hashlib.md5(record.read_bytes()).hexdigest() == "f68b3c2dcbeaaa9fbdd348bbdeb94873"  # the canonical .gz
    train, test = cache.load_cached("mnist", tmp_path)
    assert (train.n, test.n) == (60000, 10000) and train.X.shape[1] == 784
    assert (int((train.y > 0).sum()), int((test.y > 0).sum())) == (5851, 974)  # the digit 8
    assert train.X.max() == 1.0 and np.all(np.rint(train.X.data * 255) / 255 == train.X.data)  # pixels / 255
    assert cache.verify("mnist", tmp_path).ok and folder.is_dir()


def test_reuters_counts(mirror, tmp_path):
    cache.prepare("reuters", FetchOptions(mirror=mirror.url, **FAST), tmp_path)
    train, test = cache.load_cached("reuters", tmp_path)
    assert (train.n, test.n) == (7770, 3299) and train.X.shape[1] == 8315
    assert (int((train.y > 0).sum()), int((test.y > 0).sum())) == (538, 179)


def test_w8a_counts(mirror, tmp_path):
    path = download(REGISTRY["w8a"].files["train"], FetchOptions(mirror=mirror.url, **FAST), tmp_path)
    X, y = svmlight_split(path, 300, zero_based=False)
    assert X.shape == (49749, 300) and int((np.diff(X.indptr) == 0).sum()) == 4203


def test_run_fetches_an_uncached_dataset_through_the_mirror(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SBPBENCH_MIRROR", mirror.url)
    config = tmp_path / "reuters.yaml"
    config.write_text("name: tiny-reuters\ndataset: {name: reuters, n_train: 200, n_test: 100}\n"
                      "kernel: {name: gaussian, sigma2: 0.5}\nproblem: {lambda: 1/n, nu: 0.01, bias: false}\n"
                      "solvers: [sbp]\nbudget: {epochs: 1}\nruns: 1\nseed: 0\n")
    assert sbpbench(monkeypatch, "run", config, "--results", tmp_path / "res", "--no-plot", "-q") == 0
    assert cache.is_cached("reuters", tmp_path / "data")
    assert any(r[0] == "reuters.trn.bz2" for r in mirror.requests)


def test_adult_loads_its_bundled_copy_until_it_is_fetched(tmp_path, monkeypatch, capsys, mirror):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("SBPBENCH_MIRROR", mirror.url)
    before = len(mirror.requests)  # the server serves the whole module
    train, test = load_registered("adult")
    assert (train.n, test.n) == (32561, 16281) and train.provenance == "bundled a9a (LIBSVM)"
    assert capsys.readouterr().err == "" and len(mirror.requests) == before  # no download tried, no note
    cache.prepare("adult", FetchOptions(mirror=mirror.url, **FAST), tmp_path / "data")
    converted, _ = load_registered("adult")
    assert converted.provenance.startswith("cached conversion") and converted.X.shape == train.X.shape
    assert (converted.X != train.X).nnz == 0 and np.array_equal(converted.y, train.y)
    with pytest.raises(UserError, match="cannot download adult.data"):  # `datasets fetch adult` never falls back
        cache.prepare("adult", FetchOptions(mirror=str(tmp_path / "empty-mirror"), **FAST), tmp_path / "other")


def test_cli_fetch_info_verify_list(mirror, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    assert sbpbench(monkeypatch, "datasets", "fetch", "adult-libsvm", "--mirror", mirror.url) == 0
    assert sbpbench(monkeypatch, "datasets", "list") == 0
    listing = capsys.readouterr().out
    assert any(line.startswith("adult-libsvm ") and " cached (" in line for line in listing.splitlines())
    assert sbpbench(monkeypatch, "datasets", "info", "w8a") == 0
    info = capsys.readouterr().out
    assert "trusted on first download" in info and "b464b4f6ce6a5d9e" in info
    assert sbpbench(monkeypatch, "datasets", "verify") == 0
    assert "adult-libsvm: ok" in capsys.readouterr().out
    (tmp_path / "adult-libsvm" / "test.svm").write_bytes(b"damaged")
    assert sbpbench(monkeypatch, "datasets", "verify") != 0
    assert "DAMAGED" in "".join(capsys.readouterr())
