"""Datasets: the registry and fallbacks, the bundled Adult copy, LIBSVM parsing errors, labels, subsampling."""

import io
import json
import lzma
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from sbpbench.data import REGISTRY, Dataset, DatasetSpec, Split, cache, load
from sbpbench.data.convert import libsvm_as_is
from sbpbench.data.fetch import RemoteFile
from sbpbench.data.libsvm import read_libsvm, to_binary
from sbpbench.data.registry import Fallback
from sbpbench.data.sources import adult
from sbpbench.data.split import subsample
from sbpbench.errors import UserError
from tests.cli_runner import one_error_line, sbpbench
from tests.experiments import adult_config, write_config
from tests.problems import SHARED


def test_bundled_adult_is_the_real_a9a():
    train, test = load(DatasetSpec(name="adult"), np.random.default_rng(0))
    assert train.X.shape == (32561, 123) and test.X.shape == (16281, 123)
    assert (train.y > 0).sum() == 7841 and (test.y > 0).sum() == 3846
    assert train.X.indices.dtype == np.int32
    if (SHARED / "adult" / "a9a").exists():
        assert adult.bundled_bytes("a9a") == (SHARED / "adult" / "a9a").read_bytes()


def test_damaged_bundle_is_detected(monkeypatch, tmp_path):
    bad = tmp_path / "bundled"
    bad.mkdir()
    (bad / "a9a.xz").write_bytes(lzma.compress(b"+1 1:1\n"))
    monkeypatch.setattr(adult.resources, "files", lambda package: tmp_path)
    with pytest.raises(UserError, match="sha256 .* does not match"):
        adult.bundled_bytes("a9a")


def test_the_bundled_copy_is_parsed_once_then_read_back_the_same(monkeypatch, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    parsed = adult.load_bundled()
    calls = []
    monkeypatch.setattr(adult, "read_libsvm", lambda *a, **k: calls.append(a) or read_libsvm(*a, **k))
    again = adult.load_bundled()
    assert calls == []  # read back from <cache>/.parsed, not parsed
    for a, b in zip(parsed, again):
        assert type(a.X) is type(b.X) and a.X.shape == b.X.shape and a.provenance == b.provenance
        for x, y in ((a.X.data, b.X.data), (a.X.indices, b.X.indices), (a.X.indptr, b.X.indptr), (a.y, b.y)):
            assert x.dtype == y.dtype and np.array_equal(x, y)
    # a damaged parsed copy is parsed again (and rewritten)
    stored = next((tmp_path / ".parsed").glob("a9a-*.npz"))
    stored.write_bytes(stored.read_bytes()[:-100] + b"x" * 100)
    assert adult.load_bundled()[0].X.nnz == parsed[0].X.nnz and len(calls) == 1
    adult.load_bundled()
    assert len(calls) == 1


def test_a_new_parsed_copy_removes_those_of_other_versions_of_the_file(monkeypatch, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    parsed = tmp_path / ".parsed"
    parsed.mkdir()
    # an older version's copies and records of both files, a leftover of a killed process
    stale = ["a9a-0123abcd.npz", "a9a-0123abcd.npz.sha256", "a9a.t-0123abcd.npz", "a9a-feed.npz.4242.tmp"]
    others = ["a9b-0123abcd.npz", "notes.txt"]  # not copies of a shipped a9a or a9a.t
    for name in stale + others:
        (parsed / name).write_bytes(b"old")
    train, _ = adult.load_bundled()
    names = {p.name for p in parsed.iterdir()}
    assert not names & set(stale) and set(others) <= names
    copies = names - set(others)  # each file's copy and its record
    assert len(copies) == 4 and {n.split("-")[0] for n in copies} == {"a9a", "a9a.t"}
    assert adult.load_bundled()[0].X.nnz == train.X.nnz  # read back


def test_a_cache_that_cannot_be_written_only_costs_the_parse(monkeypatch, tmp_path):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path / "file"))  # not a folder: nothing can be written
    train, test = adult.load_bundled()
    assert train.X.shape == (32561, 123) and test.provenance == adult.BUNDLED_ADULT


def test_subsample_is_deterministic_and_sized():
    a = load(DatasetSpec(name="adult", n_train=100, n_test=50), np.random.default_rng(3))
    b = load(DatasetSpec(name="adult", n_train=100, n_test=50), np.random.default_rng(3))
    assert a[0].n == 100 and a[1].n == 50
    assert (a[0].X != b[0].X).nnz == 0 and np.array_equal(a[1].y, b[1].y)


def test_a_subsample_holds_distinct_rows_in_file_order():
    """Drawn without replacement: every row of the subsample is another example of the split, with
    its own label, in file order (a draw of 180 of 200 with replacement repeats some for sure)."""
    n = 200
    ids = np.arange(1.0, n + 1)  # row i holds i + 1 in its only feature: a row tells its example
    split = Split(sp.csr_matrix(ids[:, None]), np.where(np.arange(n) % 3 == 0, 1.0, -1.0))
    for seed in range(5):
        kept = subsample(split, 180, np.random.default_rng(seed))
        rows = kept.X.toarray().ravel().astype(int) - 1
        assert kept.n == 180 and len(set(rows.tolist())) == 180, seed
        assert np.all(np.diff(rows) > 0) and np.array_equal(kept.y, split.y[rows])


@pytest.mark.parametrize("text,expected", [
    (b"+1 1:1 2:0.5\n-1 3:x\n", ":2: expected an integer index and a number in '3:x'"),
    (b"+1 1:1\nabc 2:1\n", ":2: expected a numeric label first, got 'abc'"),
    (b"+1 1:1\n\n-1 4\n", ":3: expected 'index:value', got '4'"),
    (b"+1 3:1 2:1\n", ":1: feature indices must be positive and increasing, got '2:1'"),
    (b"+1 1:1\n-1 2:nan\n", ":2: feature value '2:nan' is not finite"),
    (b"+1 1:1\n\n-1 2:1 3:-inf\n", ":3: feature value '3:-inf' is not finite"),
    (b"+1 1:1e400\n", ":1: feature value '1:1e400' is not finite"),
    (b"nan 1:1\n", ":1: label 'nan' is not finite"),
    (b"+1 1:1\n-1 2147483648:1\n", ":2: feature index 2147483648 is too large"),
    (b"+1 1:1 99999999999999999999:1\n", ":1: feature index 99999999999999999999 is too large"),
])
def test_malformed_lines_are_named(tmp_path, text, expected):
    """Syntax errors, non-finite values and indices int32 cannot hold: ``FILE:LINE: ...``."""
    path = tmp_path / "bad.svm"
    path.write_bytes(text)
    with pytest.raises(UserError) as info:
        read_libsvm(str(path), str(path))
    assert str(info.value).startswith(str(path) + expected)


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
    with pytest.raises(UserError, match=r"te:1: feature index 3 exceeds n_features=2 \(set dataset.n_features to 3 "):
        load(DatasetSpec(path=str(tmp_path / "tr"), test_path=str(tmp_path / "te")), np.random.default_rng(0))
    train, test = load(DatasetSpec(path=str(tmp_path / "tr"), test_path=str(tmp_path / "te"), n_features=3),
                       np.random.default_rng(0))
    assert train.y.tolist() == [-1.0, 1.0] and test.y.tolist() == [-1.0]


def test_offline_mode_never_tries_the_internet(tmp_path):
    from sbpbench.data.cache import download
    from sbpbench.data.fetch import RemoteFile

    remote = RemoteFile("x.bin", ("https://example.org/x.bin",))
    with pytest.raises(UserError, match="SBPBENCH_OFFLINE is set and no mirror is given"):
        download(remote, root=tmp_path)


def _path_config(tmp_path, train: bytes, test: bytes, extra: str = "") -> object:
    (tmp_path / "tr.svm").write_bytes(train)
    (tmp_path / "te.svm").write_bytes(test)
    config = tmp_path / "files.yaml"
    config.write_text(f"dataset: {{path: tr.svm, test_path: te.svm{extra}}}\nkernel: {{name: linear}}\n"
                      "problem: {lambda: 0.1}\nsolvers: [pegasos]\nbudget: {epochs: 1}\n")
    return config


GOOD = b"+1 1:1 3:0.5\n-1 2:1\n+1 1:0.25 2:1\n"


@pytest.mark.parametrize("role", ["train", "test"])
def test_zero_index_in_a_one_based_file_is_a_line_error(monkeypatch, capsys, tmp_path, role):
    bad = b"+1 1:1 3:0.5\n-1 0:1 2:1\n"
    config = _path_config(tmp_path, bad if role == "train" else GOOD, bad if role == "test" else GOOD)
    assert sbpbench(monkeypatch, "run", config, "--results", tmp_path / "res") == 2
    err = one_error_line(capsys.readouterr().err)
    name = "tr.svm" if role == "train" else "te.svm"
    assert f"{name}:2: feature index 0 in '0:1'" in err and "set dataset.zero_based: true" in err


def test_zero_based_files_are_read_as_written(tmp_path):
    (tmp_path / "tr").write_bytes(b"+1 0:1 2:0.5\n-1 1:1\n")
    (tmp_path / "te").write_bytes(b"+1 0:1\n")
    spec = DatasetSpec(path=str(tmp_path / "tr"), test_path=str(tmp_path / "te"), zero_based=True)
    train, test = load(spec, np.random.default_rng(0))
    assert train.X.toarray().tolist() == [[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]
    assert test.X.toarray().tolist() == [[1.0, 0.0, 0.0]]
    assert "zero_based" not in DatasetSpec(path="a", test_path="b").as_dict()  # meta.json as before the key
    assert spec.as_dict()["zero_based"] is True


def test_largest_int32_index_still_reads(tmp_path):
    X, _ = read_libsvm(b"+1 2147483647:1\n", "f")
    assert X.shape == (1, 2147483647) and X.indices.tolist() == [2147483646]
    with pytest.raises(UserError, match="f:1: feature index 2147483647 is too large"):
        read_libsvm(b"+1 2147483647:1\n", "f", zero_based=True)


def test_good_files_read_exactly_as_before():
    data = adult.bundled_bytes("a9a.t")
    X, labels = read_libsvm(data, "a9a.t", n_features=123)
    ref, ref_labels = load_svmlight_file(io.BytesIO(data), n_features=123, dtype=np.float64)  # zero_based="auto"
    assert X.indices.dtype == np.int32 and X.shape == ref.shape
    assert np.array_equal(X.indptr, ref.indptr) and np.array_equal(X.indices, ref.indices)
    assert X.data.tobytes() == ref.data.tobytes() and labels.tobytes() == ref_labels.tobytes()


@pytest.mark.parametrize("dataset,expected", [
    ("{name: adult, zero_based: true}", "key 'dataset.zero_based': only allowed together with 'path'"),
    ("{path: tr.svm, test_path: te.svm, zero_based: 1}", "key 'dataset.zero_based': expected true or false"),
])
def test_zero_based_key_is_checked(monkeypatch, capsys, tmp_path, dataset, expected):
    config = _path_config(tmp_path, GOOD, GOOD)
    config.write_text(config.read_text().replace("{path: tr.svm, test_path: te.svm}", dataset))
    assert sbpbench(monkeypatch, "validate", config) == 2
    assert expected in one_error_line(capsys.readouterr().err)


def test_subsample_larger_than_the_data_names_the_key():
    with pytest.raises(UserError, match="^dataset.n_train: 50000 is more than the 32561 training examples of adult$"):
        load(DatasetSpec(name="adult", n_train=50000), np.random.default_rng(0))
    with pytest.raises(UserError, match="^dataset.n_test: 16282 is more than the 16281 test examples of adult$"):
        load(DatasetSpec(name="adult", n_test=16282), np.random.default_rng(0))
    train, test = load(DatasetSpec(name="adult", n_train=32561, n_test=16281), np.random.default_rng(0))
    assert (train.n, test.n) == (32561, 16281)


def test_run_records_the_bundled_adult_copy_outside_resolved(monkeypatch, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path / "data"))  # no UCI conversion; offline: fetch fails
    doc = adult_config(None, kernel={"name": "linear"}, problem={"lambda": 0.01}, solvers=["pegasos"], runs=None)
    config = write_config(tmp_path / "adult.yaml", doc)
    assert sbpbench(monkeypatch, "run", config, "--results", tmp_path / "res", "--no-plot", "-q") == 0
    (run_dir,) = (tmp_path / "res" / "adult").iterdir()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["dataset_copy"] == "bundled a9a (LIBSVM)"
    assert set(meta["resolved"]["dataset"]) == {"name", "path", "test_path", "n_train", "n_test", "n_features",
                                                "positive", "positives_train", "positives_test", "files"}
    assert meta["resolved"]["dataset"]["files"] == {}  # the bundled copy is checked at every load instead


# ----------------------------------------------------------------------------- fallbacks (each registered
# dataset's declaration, listing and refusals: tests/test_dataset_contract.py)


def _unreachable(name: str, fallback: Fallback | None) -> Dataset:
    """A dataset whose only file is at an address the offline test suite never reaches."""
    return Dataset(name, "", "", "", 1, 1, 1, {"train": RemoteFile(f"{name}.bin", ("https://example.org/x",))},
                   libsvm_as_is, fallback=fallback)


def _spare(name: str, check=lambda: None) -> tuple[tuple[Split, Split], Dataset]:
    copy = (Split(sp.csr_matrix(np.eye(2)), np.array([1.0, -1.0]), "spare copy"),
            Split(sp.csr_matrix(np.eye(2)), np.array([-1.0, 1.0]), "spare copy"))
    return copy, _unreachable(name, Fallback("the spare copy", lambda: copy, check))


def test_a_declared_fallback_loads_without_trying_the_network(monkeypatch, capsys, tmp_path):
    """A run on a dataset shipped with sbpbench never tries to download it, and says nothing
    (the copy is recorded in the splits' provenance, which a run writes to meta.json)."""
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    monkeypatch.setenv("SBPBENCH_MIRROR", "http://127.0.0.1:9/")  # even with a mirror given
    copy, dataset = _spare("fx-spare")
    monkeypatch.setitem(REGISTRY, "fx-spare", dataset)
    monkeypatch.setattr(cache, "prepare", lambda *args, **kwargs: pytest.fail("a download was tried"))
    assert load(DatasetSpec(name="fx-spare"), np.random.default_rng(0)) == copy
    assert capsys.readouterr().err == ""


def test_a_converted_dataset_wins_over_its_bundled_copy(monkeypatch, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    monkeypatch.setitem(REGISTRY, "fx-spare", _spare("fx-spare")[1])
    monkeypatch.setattr(cache, "is_cached", lambda name, root=None: True)
    loaded = (Split(sp.csr_matrix(np.eye(3)), np.array([1.0, -1.0, 1.0]), "cache"),) * 2
    monkeypatch.setattr(cache, "load_cached", lambda name, root=None: loaded)
    assert load(DatasetSpec(name="fx-spare"), np.random.default_rng(0))[0].provenance == "cache"


def test_datasets_list_info_verify_show_the_bundled_copy(monkeypatch, capsys, tmp_path):
    """A fresh install, an empty cache: Adult is available, as its bundled copy, in every command."""
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    assert sbpbench(monkeypatch, "datasets", "list") == 0
    listing = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 79 for line in listing), max(listing, key=len)
    assert " ".join(" ".join(listing).split()).startswith(f"cache: {tmp_path} ($SBPBENCH_DATA)")
    head = next(i for i, line in enumerate(listing) if line.startswith("name "))  # the path may take two lines
    assert listing[head].split() == ["name", "train", "test", "features", "download", "state"]
    assert listing[head + 1].split() == ["adult", "32561", "16281", "123", "6.0", "MB", "bundled", "copy"]

    assert sbpbench(monkeypatch, "datasets", "info", "adult") == 0
    info = " ".join(capsys.readouterr().out.split())
    copy = REGISTRY["adult"].fallback.what
    assert copy in info and info.count("not needed") == 2 and "shared/" not in info  # its two files

    assert sbpbench(monkeypatch, "datasets", "verify", "adult") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "adult: ok (bundled copy)"  # the verdict (one of those `datasets verify --help` lists)
    assert [line.split(": ")[0].strip() for line in lines[1:4]] == [copy, "adult.data", "adult.test"]
    assert lines[1].endswith(": ok") and all("missing" in line and "not needed" in line for line in lines[2:4])
    assert len(lines) == 5 and lines[4].split()[0] == "1" and lines[4].endswith(str(tmp_path))  # one dataset
    assert sbpbench(monkeypatch, "datasets", "verify") == 0  # checked by default, the only dataset here
    assert capsys.readouterr().out.splitlines()[0] == "adult: ok (bundled copy)"


def test_a_damaged_bundled_copy_fails_verify(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    monkeypatch.setitem(REGISTRY, "fx-spare", _spare("fx-spare", lambda: "spare.xz: sha256 0 does not match")[1])
    assert sbpbench(monkeypatch, "datasets", "verify", "fx-spare") == 2
    out, err = capsys.readouterr()
    assert out.startswith("fx-spare: DAMAGED") and "spare.xz: sha256 0 does not match" in out.splitlines()[1]
    assert one_error_line(err).startswith("sbpbench: error: 1 ")  # dataset damaged


def test_the_bundled_copy_is_checked_by_its_checksums(monkeypatch, tmp_path):
    assert adult.check_bundled() is None
    (tmp_path / "bundled").mkdir()
    (tmp_path / "bundled" / "a9a.xz").write_bytes(b"not xz")
    monkeypatch.setattr(adult.resources, "files", lambda package: tmp_path)
    assert "cannot read the bundled copy" in adult.check_bundled()
    with pytest.raises(UserError, match="the installed package is damaged"):
        adult.load_bundled()


def test_without_a_fallback_the_fetch_error_is_the_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    monkeypatch.setitem(REGISTRY, "fx-none", _unreachable("fx-none", None))
    with pytest.raises(UserError, match="^cannot download fx-none.bin: SBPBENCH_OFFLINE is set"):
        load(DatasetSpec(name="fx-none"), np.random.default_rng(0))
    assert capsys.readouterr().err == ""


def test_a_spec_without_name_or_files_is_refused():
    with pytest.raises(UserError, match="^dataset: give either 'name' .* or 'path' and 'test_path'"):
        load(DatasetSpec(path="train.svm"), np.random.default_rng(0))


def test_importing_the_data_stage_imports_no_heavy_library():
    """scikit-learn and pandas are imported only where files are read or written, so that
    `sbpbench --help` (which imports the data stage for `sbpbench datasets`) starts fast; requests
    and urllib3 only where a download starts, which a run from the data cache never does."""
    code = ("import sys\nimport sbpbench.data\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'pandas', 'requests', 'urllib3'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
