"""The scripts that build the authors' programs say in one line when they cannot, exit 2 and write nothing."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path, *arguments, script="authors_sgd.py"):
    out = tmp_path / "authors.md"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *arguments, "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    return done, out


@pytest.mark.parametrize("script", ["authors_sgd.py", "authors_sbp.py"])
def test_source_that_cannot_be_had_is_said_in_one_line(tmp_path, script):
    done, out = _run(tmp_path, "--mirror", str(tmp_path / "no-such-mirror"), script=script)
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


@pytest.mark.parametrize("script, argument", [
    ("authors_sgd.py", ["--n", "0"]), ("authors_sgd.py", ["--full-epochs", "-3"]),
    ("authors_sbp.py", ["--every", "0"]), ("authors_sbp.py", ["--runs", "-1"]),
])
def test_a_count_that_is_not_positive_is_refused(tmp_path, script, argument):
    done, out = _run(tmp_path, *argument, script=script)
    assert done.returncode == 2
    assert argument[0] in done.stderr.strip().splitlines()[-1]
    assert not out.exists()


def test_an_out_page_that_is_not_markdown_is_refused(tmp_path):
    """The JSON goes beside the page (its name with .json), so ``--out`` must be the .md page."""
    out = tmp_path / "authors.json"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "authors_sbp.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--out" in lines[0] and ".md" in lines[0]
    assert not out.exists()


RECORD = ('{"settings": {"iterations": 15000, "every": 500, "nu": 0.001367, "sigma2": 100.0}, "environment": {},'
          ' "runs": {"issvm": [[{"iterations": 500, "kernel_rows": 1000, "test_error": 0.2}]],'
          ' "sbp": [[{"iterations": 500, "kernel_rows": 500, "test_error": 0.2}]]}}')


@pytest.mark.parametrize("record, arguments, expected", [
    (None, [], "does not exist"),
    ("{not json", [], "is not a record of scripts/authors_sbp.py"),
    ('{"settings": {}}', [], "is not a record of scripts/authors_sbp.py"),
    (RECORD, ["--iterations", "15000", "--every", "250"], "other settings: every 500 (asked 250)"),
    (RECORD.replace('"sbp": [[', '"sbp": [[], ['), ["--iterations", "15000"], "holds 1 issvm runs but 2 of ours"),
])
def test_resume_refuses_a_record_it_cannot_continue(tmp_path, record, arguments, expected):
    """``authors_sbp.py --resume`` continues only a record of the same settings, in one line, exit 2,
    and leaves the record as it was."""
    kept = tmp_path / "authors.json"
    if record is not None:
        kept.write_text(record)
    done, out = _run(tmp_path, "--resume", *arguments, script="authors_sbp.py")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--resume" in lines[0] and expected in lines[0]
    assert not out.exists()
    assert (kept.read_text() if record is not None else None) == record
