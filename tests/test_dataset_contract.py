"""The contract every registered dataset keeps, checked on each dataset of the registry.

A module added to ``sbpbench/data/sources/`` is covered the moment it registers a dataset:
nothing here names one. Each dataset

* declares itself completely: a name usable as a folder and a key, one-line texts, positive
  sizes, files with plain file names (unique across the registry, as the cache and mirrors
  need), http(s) addresses, well-formed checksums and sizes, archive members of its own files;
* is shown by ``sbpbench datasets list`` with its sizes, download size (``?`` where none is
  published, ``>`` where only some are) and state, and by ``sbpbench datasets info`` with every
  address and checksum of its files, or saying that a file is trusted on first download;
* refuses files that are not the published ones, malformed or well formed with other sizes:
  one :class:`~sbpbench.errors.UserError` naming the dataset or the file, and nothing converted
  left in the cache;
* when it ships a copy (:class:`~sbpbench.data.registry.Fallback`), loads it offline, with the
  declared sizes, and its check passes.

The registry lists the datasets by the module that registers them: those of
``sources.FIRST`` first, in that order, then the others' in alphabetical order.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import importlib.util
import pkgutil
import re
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

from sbpbench.data import REGISTRY, cache, registry, sources
from sbpbench.data.fetch import FetchOptions
from sbpbench.errors import UserError
from tests._dataserver import FileServer
from tests.cli_runner import sbpbench

NAMES = list(REGISTRY)
FALLBACKS = [name for name, dataset in REGISTRY.items() if dataset.fallback is not None]

#: Files that are not the published ones: malformed, and well formed but of other sizes.
WRONG = {"malformed": b"+1 1:1 2:x\nnot what was published\n", "other-sizes": b"+1 1:1\n-1 2:1\n"}


def _compressed(name: str, content: bytes) -> bytes:
    """``content`` compressed as the file name says, so that it reaches the converter."""
    if name.endswith(".bz2"):
        return bz2.compress(content)
    return gzip.compress(content, mtime=0) if name.endswith(".gz") else content


@pytest.fixture(scope="module")
def wrong_files():
    """A mirror serving, under ``<url>/<kind>/``, a wrong file of each :data:`WRONG` kind for every
    file name of the registry."""
    names = {remote.name for dataset in REGISTRY.values() for remote in dataset.files.values()}
    with FileServer({f"{kind}/{name}": _compressed(name, content)
                     for kind, content in WRONG.items() for name in names}) as server:
        yield server


@pytest.mark.parametrize("name", NAMES)
def test_the_declaration_is_complete(name):
    dataset = REGISTRY[name]
    assert dataset.name == name and re.fullmatch(r"[a-z0-9]+(?:[-.][a-z0-9]+)*", name)
    for text in (dataset.description, dataset.origin, dataset.task):
        assert text.strip() and "\n" not in text
    assert dataset.n_features >= 1 and dataset.n_train >= 1 and dataset.n_test >= 0
    assert dataset.files and set(dataset.members) <= set(dataset.files)
    assert callable(dataset.convert)
    for remote in dataset.files.values():
        assert remote.name == Path(remote.name).name and remote.name not in (".", "..")
        assert remote.urls and all(urlparse(u).scheme in ("http", "https") and urlparse(u).netloc
                                   for u in remote.urls)
        for digest in remote.digests:
            assert re.fullmatch(f"[0-9a-f]{{{2 * hashlib.new(digest.algo).digest_size}}}", digest.hexdigest)
        assert remote.size is None or remote.size > 0


def test_a_file_name_means_one_file_across_the_registry():
    files: dict = {}
    for dataset in REGISTRY.values():
        for remote in dataset.files.values():
            assert files.setdefault(remote.name, remote) == remote, remote.name


def test_the_listing_shows_every_dataset_with_its_sizes_and_state(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))  # an empty cache
    monkeypatch.setenv("COLUMNS", "200")
    assert sbpbench(monkeypatch, "datasets", "list") == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    rows = [row for row in rows if row and row[0] in REGISTRY]
    assert [row[0] for row in rows] == NAMES
    for row in rows:
        dataset = REGISTRY[row[0]]
        assert row[1:4] == [str(dataset.n_train), str(dataset.n_test or "-"), str(dataset.n_features)]
        sizes = [remote.size for remote in dataset.files.values()]
        assert (row[4] == "?") == (not any(sizes)) and row[4].startswith(">") == (any(sizes) and not all(sizes))
        assert (" ".join(row[-2:]) == "bundled copy") == (dataset.fallback is not None)


@pytest.mark.parametrize("name", NAMES)
def test_info_shows_every_address_and_checksum(name, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SBPBENCH_DATA", str(tmp_path))
    assert sbpbench(monkeypatch, "datasets", "info", name) == 0
    text = capsys.readouterr().out.split("\n  converted: ")[0]
    blocks = [" ".join(block.split()) for block in re.split(r"\n  file ", text)[1:]]  # one per file, in order
    assert len(blocks) == len(REGISTRY[name].files)
    for block, remote in zip(blocks, REGISTRY[name].files.values()):
        assert block.startswith(f"{remote.name} (") and all(url in block for url in remote.urls)
        if remote.digests:
            assert all(digest.hexdigest in block for digest in remote.digests)
        else:
            assert "trusted on first download" in block


@pytest.mark.parametrize("kind", WRONG)
@pytest.mark.parametrize("name", NAMES)
def test_files_that_are_not_the_published_ones_are_refused(name, kind, wrong_files, tmp_path):
    dataset = REGISTRY[name]
    with pytest.raises(UserError) as refused:
        cache.prepare(name, FetchOptions(mirror=f"{wrong_files.url}{kind}", attempts=1, progress=False), tmp_path)
    message = str(refused.value)
    assert "\n" not in message and (name in message or any(r.name in message for r in dataset.files.values()))
    assert not cache.is_cached(name, tmp_path) and not cache.dataset_dir(name, tmp_path).exists()


@pytest.mark.parametrize("name", FALLBACKS)
def test_a_shipped_copy_loads_offline_with_the_declared_sizes(name):
    dataset = REGISTRY[name]
    assert dataset.fallback is not None and dataset.fallback.check() is None
    train, test = dataset.fallback.load()
    assert (train.n, test.n) == (dataset.n_train, dataset.n_test)
    assert train.X.shape[1] == test.X.shape[1] == dataset.n_features
    assert set(np.unique(np.concatenate([train.y, test.y]))) == {-1.0, 1.0}
    assert train.provenance and train.provenance == test.provenance


def _registered_by(module: str, monkeypatch) -> list[str]:
    """The datasets that the module ``sources.<module>`` registers, run afresh into an empty registry."""
    fresh: dict = {}
    monkeypatch.setattr(registry, "REGISTRY", fresh)
    spec = importlib.util.find_spec(f"{sources.__name__}.{module}")
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    return list(fresh)


def test_the_registry_lists_the_datasets_module_by_module(monkeypatch):
    modules = {m.name for m in pkgutil.iter_modules(sources.__path__)}
    assert set(sources.FIRST) <= modules
    by_module = {module: _registered_by(module, monkeypatch)
                 for module in sources.FIRST + tuple(sorted(modules - set(sources.FIRST)))}
    assert all(by_module.values()), by_module  # every module registers something
    assert [name for names in by_module.values() for name in names] == NAMES
