"""The scripts that build the authors' programs say in one line when they cannot, exit 2 and write nothing."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path, *arguments):
    out = tmp_path / "authors.md"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "authors_sgd.py"), *arguments, "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    return done, out


def test_source_that_cannot_be_had_is_said_in_one_line(tmp_path):
    done, out = _run(tmp_path, "--mirror", str(tmp_path / "no-such-mirror"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "the authors' source cannot be had" in lines[0] and "no-such-mirror" in lines[0]
    assert not out.exists()


def test_incomplete_source_folder_names_the_missing_file(tmp_path):
    (tmp_path / "lib").mkdir()
    done, out = _run(tmp_path, "--source", str(tmp_path))
    assert done.returncode == 2
    assert "lib/vectors.cpp is missing" in done.stderr.strip().splitlines()[-1]
    assert not out.exists()


@pytest.mark.parametrize("argument", [["--n", "0"], ["--epochs", "-1"], ["--full-epochs", "-3"]])
def test_a_count_that_is_not_positive_is_refused(tmp_path, argument):
    done, out = _run(tmp_path, *argument)
    assert done.returncode == 2
    assert argument[0] in done.stderr.strip().splitlines()[-1]
    assert not out.exists()
