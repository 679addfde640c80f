"""meta.json names the code that made a run (the git commit, or a source archive's), and the report says so."""

import shutil
import subprocess
import tarfile

import pytest

from sbpbench.outputs import report
from sbpbench.results import store


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_checkout_gives_its_commit_and_whether_it_is_dirty():
    commit, dirty = store.source_commit()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=store.ARCHIVE_COMMIT.parent, capture_output=True,
                          text=True)
    if head.returncode != 0:
        pytest.skip("the package is not in a git checkout")
    assert commit == head.stdout.strip() and isinstance(dirty, bool)


def test_outside_git_the_archive_commit_is_read(monkeypatch, tmp_path):
    monkeypatch.setattr(store.subprocess, "run", _no_git)
    monkeypatch.setattr(store, "ARCHIVE_COMMIT", tmp_path / "ARCHIVE_COMMIT")
    assert store.source_commit() == (None, None)  # no file: an installed wheel
    (tmp_path / "ARCHIVE_COMMIT").write_text("$Format:%H$\n")  # not substituted: no commit known
    assert store.source_commit() == (None, None)
    (tmp_path / "ARCHIVE_COMMIT").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert store.source_commit() == ("0123456789abcdef0123456789abcdef01234567", None)
    assert store.environment()["git_commit"] == "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_an_installed_copy_inside_another_repository_does_not_take_its_commit(monkeypatch, tmp_path):
    """A virtual environment inside some other checkout: its commit is not the code that runs."""
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)
    git("init", "-q")
    (tmp_path / "other.txt").write_text("another project\n")
    git("add", "other.txt")
    git("commit", "-qm", "other")
    installed = tmp_path / ".venv" / "lib" / "site-packages" / "sbpbench"
    installed.mkdir(parents=True)
    (installed / "ARCHIVE_COMMIT").write_text("$Format:%H$\n")
    monkeypatch.setattr(store, "ARCHIVE_COMMIT", installed / "ARCHIVE_COMMIT")
    assert store.source_commit() == (None, None)


def _no_git(*args, **kwargs):
    raise FileNotFoundError("git")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_archive_fills_the_archive_commit(tmp_path):
    """What GitHub's source downloads do: export-subst writes the commit into the file."""
    root = store.ARCHIVE_COMMIT.parent.parent
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("the package is not in a git checkout")
    archive = tmp_path / "src.tar"
    subprocess.run(["git", "archive", "-o", archive, "HEAD", "sbpbench/ARCHIVE_COMMIT"], cwd=root, check=True)
    with tarfile.open(archive) as tar:
        member = tar.extractfile("sbpbench/ARCHIVE_COMMIT")
        assert member is not None and member.read().decode().strip() == head.stdout.strip()


def test_the_report_names_the_code_and_executor_of_every_run_and_resume():
    meta = {"started": "t0", "git_commit": "1602a2bcf577", "git_dirty": False, "executor": "processes", "jobs": 2,
            "resumes": [{"time": "t1", "redone": 8, "executor": "sequential", "jobs": 1},
                        {"time": "t2", "redone": 3, "git_commit": "abcdef012345", "git_dirty": True,
                         "executor": "dask", "jobs": 4}],
            "redos": [{"solvers": ["sbp"], "started": "t3", "git_commit": "0123456789ab", "executor": "processes",
                       "jobs": 2}]}
    assert report._provenance(meta) == (
        "t0, commit 1602a2bc, processes --jobs 2; "
        "resumed t1, 8 run(s) redone: commit not recorded, sequential; "
        "resumed t2, 3 run(s) redone: commit abcdef01 (dirty), dask --jobs 4; "
        "sbp redone t3: commit 01234567, processes --jobs 2")
    assert report.code_and_executor({"executor": "processes"}) == "commit not recorded, processes, --jobs not recorded"
    assert report.code_and_executor({}) == "commit not recorded, executor not recorded"
