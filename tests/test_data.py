"""Datasets: the bundled Adult copy, LIBSVM parsing errors, labels and subsampling."""

import lzma

import numpy as np
import pytest
from tests.adult_rows import SHARED

from sbpbench.data import DatasetSpec, load
from sbpbench.data import registry
from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.errors import UserError


def test_bundled_adult_is_the_real_a9a():
    train, test = load(DatasetSpec(name="adult"), np.random.default_rng(0))
    assert train.X.shape == (32561, 123) and test.X.shape == (16281, 123)
    assert (train.y > 0).sum() == 7841 and (test.y > 0).sum() == 3846
    assert train.X.indices.dtype == np.int32
    if (SHARED / "adult" / "a9a").exists():
        assert registry.bundled_bytes("a9a") == (SHARED / "adult" / "a9a").read_bytes()


def test_damaged_bundle_is_detected(monkeypatch, tmp_path):
    bad = tmp_path / "bundled"
    bad.mkdir()
    (bad / "a9a.xz").write_bytes(lzma.compress(b"+1 1:1\n"))
    monkeypatch.setattr(registry.resources, "files", lambda package: tmp_path)
    with pytest.raises(UserError, match="sha256 .* does not match"):
        registry.bundled_bytes("a9a")


def test_subsample_is_deterministic_and_sized():
    a = load(DatasetSpec(name="adult", n_train=100, n_test=50), np.random.default_rng(3))
    b = load(DatasetSpec(name="adult", n_train=100, n_test=50), np.random.default_rng(3))
    assert a[0].n == 100 and a[1].n == 50
    assert (a[0].X != b[0].X).nnz == 0 and np.array_equal(a[1].y, b[1].y)


@pytest.mark.parametrize("text,expected", [
    (b"+1 1:1 2:0.5\n-1 3:x\n", ":2: expected an integer index and a number in '3:x'"),
    (b"+1 1:1\nabc 2:1\n", ":2: expected a numeric label first, got 'abc'"),
    (b"+1 1:1\n\n-1 4\n", ":3: expected 'index:value', got '4'"),
    (b"+1 3:1 2:1\n", ":1: feature indices must be positive and increasing, got '2:1'"),
])
def test_malformed_lines_are_named(tmp_path, text, expected):
    path = tmp_path / "bad.svm"
    path.write_bytes(text)
    with pytest.raises(UserError) as info:
        read_libsvm(str(path), str(path))
    assert expected in str(info.value) and str(path) in str(info.value)


def test_unreadable_file_is_named(tmp_path):
    with pytest.raises(UserError, match="nope.svm: cannot read LIBSVM file"):
        read_libsvm(str(tmp_path / "nope.svm"), str(tmp_path / "nope.svm"))


def test_labels_map_to_plus_minus_one():
    y, positive = to_binary(np.array([0.0, 1.0, 1.0]), "f")
    assert y.tolist() == [-1.0, 1.0, 1.0] and positive == 1.0
    y, _ = to_binary(np.array([2.0, 2.0]), "f", positive)  # a test file with one class
    assert y.tolist() == [-1.0, -1.0]
    with pytest.raises(UserError, match="labels take 3 values .*dataset.positive"):
        to_binary(np.array([0.0, 1.0, 2.0]), "f")
    y, _ = to_binary(np.array([0.0, 8.0, 2.0]), "f", positive=8.0)
    assert y.tolist() == [-1.0, 1.0, -1.0]


def test_path_datasets_share_the_training_label_map(tmp_path):
    (tmp_path / "tr").write_text("1 1:1\n2 2:1\n")
    (tmp_path / "te").write_text("1 1:1 3:1\n")
    with pytest.raises(UserError, match=r"te:1: feature index 3 exceeds n_features=2"):
        load(DatasetSpec(path=str(tmp_path / "tr"), test_path=str(tmp_path / "te")), np.random.default_rng(0))
    train, test = load(DatasetSpec(path=str(tmp_path / "tr"), test_path=str(tmp_path / "te"), n_features=3),
                       np.random.default_rng(0))
    assert train.y.tolist() == [-1.0, 1.0] and test.y.tolist() == [-1.0]


def test_offline_mode_never_tries_the_internet(tmp_path):
    from sbpbench.data.fetch import RemoteFile, fetch_file

    remote = RemoteFile("x.bin", ("https://example.org/x.bin",))
    with pytest.raises(UserError, match="SBPBENCH_OFFLINE is set and no mirror is given"):
        fetch_file(remote, root=tmp_path)
