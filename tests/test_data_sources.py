"""The sources package: adding a dataset is adding one module to sbpbench/data/sources/."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import sbpbench
from tests.cli_runner import command

NEW_SOURCE = '''
from sbpbench.data.convert import libsvm_as_is
from sbpbench.data.fetch import RemoteFile
from sbpbench.data.registry import Dataset, register

register(Dataset("zz-example", "an example", "nowhere", "+1 vs -1", 3, 2, 0,
                 {"train": RemoteFile("zz.svm", ("https://example.org/zz.svm",))}, libsvm_as_is))
'''


def test_a_new_source_module_is_registered_and_listed(tmp_path):
    """A copy of the package with one more module in sources/: `datasets list` shows its dataset
    after the others, and a mirror holding its file is enough to fetch it."""
    package = Path(sbpbench.__file__).parent
    shutil.copytree(package, tmp_path / "sbpbench", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "sbpbench" / "data" / "sources" / "zz_example.py").write_text(NEW_SOURCE)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "zz.svm").write_bytes(b"+1 1:1\n-1 3:0.5\n")
    # wide enough that no line of the listing wraps, however long the temporary folder's path
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "SBPBENCH_DATA": str(tmp_path / "cache"), "COLUMNS": "1000"}

    def sbpbench_cli(*args: str) -> str:
        return subprocess.run(command(*args), capture_output=True, text=True, env=env, cwd=tmp_path,
                              check=True).stdout

    listing = [line for line in sbpbench_cli("datasets", "list").splitlines() if not line.startswith(" ")]
    assert " ".join(listing[0].split()[:2]) == f"cache: {tmp_path / 'cache'}"
    assert listing[-3].startswith("rcv1-binary ") and listing[-1].startswith("download: ")
    assert listing[-2].split() == ["zz-example", "2", "-", "3", "?", "not", "fetched"]
    assert sbpbench_cli("datasets", "fetch", "zz-example", "--mirror", str(mirror)).startswith("zz-example: ")
    assert (tmp_path / "cache" / "zz-example" / "train.svm").read_bytes() == b"+1 1:1\n-1 3:0.5\n"
