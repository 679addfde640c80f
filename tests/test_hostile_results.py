"""Run folders that are not what they seem: damaged curves, changed data, hand-edited metadata,
two writers at once, leftovers of a kill, and a disk that cannot be written.

Each must end in a correct result with exit 0 (a damaged run redone, a note saying so) or in one
line with exit 2, never a traceback or a wrong result with exit 0.

The tests run as root, for whom ``chmod`` does not make a folder read-only, and a real full disk
cannot be made portably; so a full disk (ENOSPC), a read-only file system (EROFS) and a refused
permission (EACCES) are injected where sbpbench meets them: the system calls of its one atomic
writer (:func:`sbpbench.files.atomic_write`: ``mkstemp``, ``fsync``) and ``mkdir``, raising the
``OSError`` the system would.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sbpbench import files
from sbpbench.errors import UserError
from sbpbench.results import datafiles
from sbpbench.results.schema import MAX_DEPTH
from sbpbench.results.store import new_run_dir
from tests.cli_runner import environment, one_error_line, sbpbench
from tests.experiments import run_sequentially
from tests.run_files import curves, meta
from tests.test_fuzz import BASE, TEST_LINES, TRAIN_LINES, dump

pytestmark = pytest.mark.usefixtures("one_numba_thread")

#: A run folder's name, as sbpbench makes them.
STAMP = "20260101-000000"


def copy_of(run_dir: Path, root: Path) -> Path:
    """A copy of the run folder ``run_dir`` as ``root/<experiment>/STAMP`` (the newest there)."""
    copy = root / run_dir.parent.name / STAMP
    shutil.copytree(run_dir, copy)
    return copy


# ----------------------------------------------------------------------------- damaged curves


def lines_of(folder: Path) -> list[bytes]:
    return (folder / "curves.csv").read_bytes().splitlines(keepends=True)


def cut_in_last_row(data: bytes) -> bytes:
    return data[:-7]  # inside the last value of the last row: what remains still reads as numbers


def last_row_error_changed(data: bytes) -> bytes:
    *head, last = data.splitlines(keepends=True)
    fields = last.decode().split(",")
    fields[14] = "0.5" if fields[14] != "0.5" else "0.25"  # test_error
    return b"".join(head) + ",".join(fields).encode()


def middle_row_dropped(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    return b"".join(lines[:5] + lines[6:])


def rows_swapped(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    lines[3], lines[4] = lines[4], lines[3]
    return b"".join(lines)


def text_in_a_number(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    fields = lines[2].decode().split(",")
    fields[15] = "0.2x5"  # objective
    lines[2] = ",".join(fields).encode()
    return b"".join(lines)


def a_field_too_many(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    lines[7] = lines[7].rstrip(b"\n") + b",1\n"
    return b"".join(lines)


def header_lost(data: bytes) -> bytes:
    return data[40:]


@pytest.mark.parametrize("damage, redone", [
    (cut_in_last_row, 1), (last_row_error_changed, 1), (middle_row_dropped, 1), (rows_swapped, 1),
    (text_in_a_number, 1), (a_field_too_many, 1), (header_lost, 4),
])
def test_a_damaged_run_is_redone_not_kept(tmp_path, tiny_run, damage, redone):
    """Whatever the damage, the resumed folder holds the uninterrupted run's curves: the damaged
    runs are redone (recorded with why under the resume), the others kept."""
    ref_path, ref_dir = tiny_run
    copy = copy_of(ref_dir, tmp_path)
    (copy / "curves.csv").write_bytes(damage((copy / "curves.csv").read_bytes()))
    assert run_sequentially(ref_path, tmp_path, resume_from=copy) == copy
    pd.testing.assert_frame_equal(curves(copy), curves(ref_dir))
    (resume,) = meta(copy)["resumes"]
    assert (resume["kept"], resume["redone"], len(resume["damaged"])) == (4 - redone, redone, redone)


def test_a_cut_curves_file_is_said_in_one_note(monkeypatch, capsys, tmp_path, tiny_run):
    ref_path, ref_dir = tiny_run
    copy = copy_of(ref_dir, tmp_path)
    (copy / "curves.csv").write_bytes(cut_in_last_row((copy / "curves.csv").read_bytes()))
    assert sbpbench(monkeypatch, "run", ref_path, "--results", tmp_path, "--resume", "--no-plot", "-q") == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("sbpbench: note: ")]
    assert notes == [f"sbpbench: note: {copy / 'curves.csv'}: 1 finished run(s) damaged, redone: pegasos run 1: "
                     f"row {len(lines_of(ref_dir)) - 1} cut short (the file ends inside it)"]
    pd.testing.assert_frame_equal(curves(copy), curves(ref_dir))


def test_a_missing_curves_file_redoes_every_run(tmp_path, tiny_run):
    ref_path, ref_dir = tiny_run
    copy = copy_of(ref_dir, tmp_path)
    (copy / "curves.csv").unlink()
    run_sequentially(ref_path, tmp_path, resume_from=copy)
    pd.testing.assert_frame_equal(curves(copy), curves(ref_dir))
    assert meta(copy)["resumes"][0]["damaged"] == [f"{s} run {r}: no curves.csv" for s in ("sbp", "pegasos")
                                                   for r in (0, 1)]


# ----------------------------------------------------------------------------- changed data


@pytest.fixture
def path_config(tmp_path) -> Path:
    """A config of LIBSVM files (real Adult rows) in ``tmp_path``."""
    (tmp_path / "train.svm").write_bytes(b"\n".join(TRAIN_LINES) + b"\n")
    (tmp_path / "test.svm").write_bytes(b"\n".join(TEST_LINES) + b"\n")
    config = tmp_path / "exp.yaml"
    config.write_bytes(dump({**BASE, "solvers": ["pegasos"], "runs": 2}))
    return config


def labels_swapped(path: Path) -> None:
    """Swap the labels of the first positive and the first negative example: the same sizes and
    class counts, other data."""
    lines = path.read_bytes().splitlines()
    pos = next(i for i, line in enumerate(lines) if line.startswith(b"+1"))
    neg = next(i for i, line in enumerate(lines) if line.startswith(b"-1"))
    lines[pos], lines[neg] = b"-1" + lines[pos][2:], b"+1" + lines[neg][2:]
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize("edited", ["train.svm", "test.svm"])
def test_a_resume_on_changed_data_is_refused(monkeypatch, capsys, tmp_path, path_config, edited):
    results = tmp_path / "res"
    assert sbpbench(monkeypatch, "run", path_config, "--results", results, "--no-plot", "-q") == 0
    (folder,) = (results / "fuzz").iterdir()
    recorded = meta(folder)["resolved"]["dataset"]["files"]
    assert {role: entry["sha256"] for role, entry in recorded.items()} == {
        role: hashlib.sha256((tmp_path / f"{role}.svm").read_bytes()).hexdigest() for role in ("train", "test")}
    runs = meta(folder)["runs"]
    runs[1]["status"] = "failed: RuntimeError: lost"  # one run to redo
    (folder / "meta.json").write_text(json.dumps({**meta(folder), "runs": runs}))

    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    original = (tmp_path / edited).read_bytes()
    labels_swapped(tmp_path / edited)
    assert sbpbench(monkeypatch, "run", path_config, "--results", results, "--resume", "--no-plot", "-q") == 2
    what = "training" if edited == "train.svm" else "test"
    one_error_line(capsys.readouterr().err, f"{tmp_path / edited}: the {what} data differ from those of the runs "
                                            f"in {folder}", "run without --resume")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing changed

    (tmp_path / edited).write_bytes(original)  # back as it was: the same data, the resume goes on
    assert sbpbench(monkeypatch, "run", path_config, "--results", results, "--resume", "--no-plot", "-q") == 0
    assert [r["status"] for r in meta(folder)["runs"]] == ["budget", "budget"]


def test_a_folder_without_a_data_record_is_resumed_and_gets_one(tmp_path, tiny_run, path_config):
    """A folder written before the record existed is continued (nothing to compare) and records the data now."""
    results = tmp_path / "res"
    folder = run_sequentially(path_config, results)
    old = meta(folder)
    del old["resolved"]["dataset"]["files"]
    (folder / "meta.json").write_text(json.dumps(old))
    run_sequentially(path_config, results, resume=True)
    assert set(meta(folder)["resolved"]["dataset"]["files"]) == {"train", "test"}


def test_a_cached_dataset_records_its_converted_files(monkeypatch, tmp_path):
    """A registered dataset converted in the cache is recorded by its .npz files; the bundled copy by none."""
    from sbpbench.data import cache
    from sbpbench.data.loading import DatasetSpec

    assert datafiles.record(DatasetSpec(name="adult")) == {}  # the bundled copy (the test cache is empty)
    (tmp_path / "adult").mkdir()
    (tmp_path / "adult" / "train.npz").write_bytes(b"train")
    (tmp_path / "adult" / "test.npz").write_bytes(b"test")
    monkeypatch.setattr(cache, "is_cached", lambda name, root=None: True)
    monkeypatch.setattr(cache, "dataset_dir", lambda name, root=None: tmp_path / name)
    assert datafiles.record(DatasetSpec(name="adult")) == {
        role: {"path": str(tmp_path / "adult" / f"{role}.npz"), "sha256": hashlib.sha256(role.encode()).hexdigest()}
        for role in ("train", "test")}


# ----------------------------------------------------------------------------- hand-edited meta.json


def deeply_nested(levels: int) -> str:
    return "[" * levels + "]" * levels


#: meta.json of the wrong shape: a change to the reference's, and what the error line says.
HOSTILE_META = [
    (lambda m: {**m, "runs": "all"}, "key 'runs' holds 'all', a list expected"),
    (lambda m: {**m, "runs": [1, 2]}, "key 'runs[0]' holds 1, an object expected"),
    (lambda m: {**m, "runs": [{**m["runs"][0], "status": 7}]}, "key 'runs[0].status' holds 7, a string expected"),
    (lambda m: {**m, "runs": [{**m["runs"][0], "run": -1}]}, "key 'runs[0].run' holds -1, an integer >= 0"),
    (lambda m: {**m, "resolved": ["x"]}, "key 'resolved' holds ['x'], an object expected"),
    (lambda m: {**m, "resolved": {**m["resolved"], "dataset": 5}}, "key 'resolved.dataset' holds 5"),
    (lambda m: {**m, "resolved": {**m["resolved"], "solvers": {"sbp": 1}}}, "key 'resolved.solvers' holds"),
    (lambda m: {**m, "resumes": 5}, "key 'resumes' holds 5, a list expected"),
    (lambda m: {**m, "solver_traits": []}, "key 'solver_traits' holds [], an object expected"),
    (lambda m: {**m, "experiment": None}, "key 'experiment' holds None, a string expected"),
    (lambda m: {**m, "config": json.loads(deeply_nested(MAX_DEPTH))}, f"nested deeper than {MAX_DEPTH} levels"),
    (lambda m: deeply_nested(100_000), f"nested deeper than {MAX_DEPTH} levels"),  # beyond the JSON parser's recursion
]


@pytest.mark.parametrize("change, said", HOSTILE_META, ids=range(len(HOSTILE_META)))
def test_a_meta_json_of_the_wrong_shape_is_refused_by_every_reader(monkeypatch, capsys, tmp_path, tiny_run,
                                                                    change, said):
    ref_path, ref_dir = tiny_run
    copy = copy_of(ref_dir, tmp_path / "res")
    changed = change(meta(ref_dir))
    (copy / "meta.json").write_text(changed if isinstance(changed, str) else json.dumps(changed))
    paper = tmp_path / "paper" / "sbp-figure2-adult"  # an experiment the report reads
    shutil.copytree(copy, paper)
    before = {p: p.read_bytes() for p in (tmp_path / "res").rglob("*") if p.is_file()}
    for args in (["run", ref_path, "--resume-from", copy, "--no-plot", "-q"], ["page", copy], ["plot", copy],
                 ["page", tmp_path / "res"], ["report", "--results", tmp_path / "paper", "--out", tmp_path / "R.md"]):
        assert sbpbench(monkeypatch, *args) == 2, args
        one_error_line(capsys.readouterr().err, "meta.json: not a sbpbench meta.json (", said)
    assert {p: p.read_bytes() for p in (tmp_path / "res").rglob("*") if p.is_file()} == before
    assert not (tmp_path / "R.md").exists()


# ----------------------------------------------------------------------------- two writers, leftovers


def test_two_writers_of_one_folder_cannot_both_run(monkeypatch, capsys, tmp_path, tiny_run):
    """While another process holds a run folder (as a run writing it does), a resume of it is
    refused at once in one line; once that process has ended, the resume goes on."""
    ref_path, ref_dir = tiny_run
    copy = copy_of(ref_dir, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom pathlib import Path\n"
         "from sbpbench.results.folder_lock import folder_lock\n"
         "with folder_lock(Path(sys.argv[1])):\n    print('held', flush=True)\n    sys.stdin.read()\n", str(copy)],
        env=environment(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        for args in (["--resume-from", copy], ["--resume"]):
            assert sbpbench(monkeypatch, "run", ref_path, "--results", tmp_path, *args, "--no-plot", "-q") == 2
            one_error_line(capsys.readouterr().err, f"{copy}: another sbpbench run is writing this run folder")
    finally:
        holder.communicate("", timeout=60)
    assert sbpbench(monkeypatch, "run", ref_path, "--results", tmp_path, "--resume", "--no-plot", "-q") == 0
    with pytest.raises(UserError, match="another sbpbench run is writing"), files_locked(copy):
        run_sequentially(ref_path, tmp_path, resume=True)


def files_locked(folder: Path):
    """The lock of ``folder``, held in this process (a second open of the folder is refused too)."""
    from sbpbench.results.folder_lock import folder_lock

    return folder_lock(folder)


def test_a_resume_removes_the_leftovers_of_a_killed_write(tmp_path, tiny_run):
    ref_path, ref_dir = tiny_run
    copy = copy_of(ref_dir, tmp_path)
    leftovers = [copy / ".curves.csv.k3j_9x2a", copy / ".meta.json.abcdefgh", copy / ".index.html.a1b2c3d4",
                 copy / ".figure2.png.zz9_abcd"]
    for path in leftovers:
        path.write_text("half")
    (copy / ".notes.txt").write_text("the user's")  # not sbpbench's: kept
    run_sequentially(ref_path, tmp_path, resume_from=copy)
    assert sorted(p.name for p in copy.iterdir() if p.name.startswith(".")) == [".notes.txt"]
    assert files.remove_leftovers(copy / "curves.csv") == []


# ----------------------------------------------------------------------------- a disk that cannot be written


def fail_fsync_after(monkeypatch, calls: int, code: int = errno.ENOSPC) -> None:
    """Make every ``fsync`` of the atomic writer after the first ``calls`` fail with ``code``."""
    real, done = os.fsync, []

    def fsync(fd: int) -> None:
        done.append(fd)
        if len(done) > calls:
            raise OSError(code, os.strerror(code))
        real(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)


def test_a_full_disk_mid_run_ends_in_one_line_and_keeps_what_was_written(monkeypatch, capsys, tmp_path, tiny_run):
    """The disk fills after the first run was written (two files at the start, two after each run):
    one line naming the folder and what it keeps; the files read back; a resume completes them."""
    ref_path, ref_dir = tiny_run
    fail_fsync_after(monkeypatch, 4)
    assert sbpbench(monkeypatch, "run", ref_path, "--results", tmp_path, "--no-plot", "-q") == 2
    (folder,) = (tmp_path / "tiny").iterdir()
    one_error_line(capsys.readouterr().err, f"{folder}: cannot write the results (No space left on device); it keeps "
                                            "the files as last written, with 1 run(s)", f"--resume-from {folder}")
    assert [r["status"] for r in meta(folder)["runs"]] == ["budget"]
    assert sorted(p.name for p in folder.iterdir()) == ["curves.csv", "meta.json"]  # no temporary file

    monkeypatch.undo()
    assert run_sequentially(ref_path, tmp_path, resume_from=folder) == folder
    pd.testing.assert_frame_equal(curves(folder), curves(ref_dir))


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES])
def test_a_read_only_results_folder_ends_in_one_line(monkeypatch, capsys, tmp_path, tiny_run, code):
    """No file can be created in the folder (read-only file system, no permission): ``run``,
    ``page`` and ``plot`` each end in one line naming the folder or file."""
    ref_path, ref_dir = tiny_run
    copy = copy_of(ref_dir, tmp_path / "old")
    before = {p.name: p.read_bytes() for p in copy.iterdir()}

    def mkstemp(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(files.tempfile, "mkstemp", mkstemp)
    assert sbpbench(monkeypatch, "run", ref_path, "--results", tmp_path / "new", "--no-plot", "-q") == 2
    (folder,) = (tmp_path / "new" / "tiny").iterdir()
    one_error_line(capsys.readouterr().err, f"{folder}: cannot write the results ({os.strerror(code)}); its files "
                                            "are as they were before this run")
    assert sbpbench(monkeypatch, "run", ref_path, "--results", tmp_path / "old", "--resume", "--no-plot", "-q") == 2
    one_error_line(capsys.readouterr().err, f"{copy}: cannot write the results ({os.strerror(code)})")
    assert sbpbench(monkeypatch, "page", copy) == 2
    one_error_line(capsys.readouterr().err, f"{copy / 'index.html'}: cannot write ({os.strerror(code)})")
    assert sbpbench(monkeypatch, "plot", copy) == 2
    one_error_line(capsys.readouterr().err, f"{copy / 'figure2.png'}: cannot write ({os.strerror(code)})")
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before


def test_a_run_folder_that_cannot_be_created_is_one_line(monkeypatch, tmp_path):
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if self.name == "exp":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    with pytest.raises(UserError, match=r"exp: cannot create a run folder \(Read-only file system\)"):
        new_run_dir(tmp_path, "exp")


@pytest.mark.parametrize("key", ["dataset", "problem"])
def test_a_meta_json_without_what_the_report_reads_is_refused(monkeypatch, capsys, tmp_path, tiny_run, key):
    _, ref_dir = tiny_run
    paper = tmp_path / "paper" / "sbp-figure2-adult"
    shutil.copytree(ref_dir, paper)
    data = meta(paper)
    del data["resolved"][key]
    (paper / "meta.json").write_text(json.dumps(data))
    assert sbpbench(monkeypatch, "report", "--results", tmp_path / "paper", "--out", tmp_path / "R.md") == 2
    one_error_line(capsys.readouterr().err, f"{paper / 'meta.json'}: not a sbpbench meta.json (no key 'resolved.{key}")


@pytest.mark.parametrize("key", ["kernel", "problem.lambda", "problem.nu"])
def test_a_meta_json_without_a_value_a_verdict_reads_is_refused(monkeypatch, capsys, tmp_path, tiny_run, key):
    """A key deeper in ``resolved`` that one of the report's readers needs, deleted by hand: one line
    naming the file and the key, not a KeyError."""
    _, ref_dir = tiny_run
    paper = tmp_path / "paper" / "sbp-figure2-adult"
    shutil.copytree(ref_dir, paper)
    data = meta(paper)
    *parents, last = key.split(".")
    node = data["resolved"]
    for part in parents:
        node = node[part]
    del node[last]
    (paper / "meta.json").write_text(json.dumps(data))
    assert sbpbench(monkeypatch, "report", "--results", tmp_path / "paper", "--out", tmp_path / "R.md") == 2
    one_error_line(capsys.readouterr().err, f"{paper / 'meta.json'}: no key 'resolved.{key}', which the report reads")
