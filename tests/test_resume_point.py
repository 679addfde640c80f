"""The resume protocol as one question (:func:`sbpbench.results.resume.open_for_resume`): the
folder found, locked and checked, with the runs it keeps."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from sbpbench.errors import UserError
from sbpbench.results.resume import open_for_resume
from sbpbench.results.store import ResultsWriter
from scripts.bench_results_writes import fake_run

#: A resolved configuration, as far as the protocol reads it.
RESOLVED = {"runs": 3, "seed": 0, "dataset": {"name": "adult", "files": {}}}


def interrupted_folder(root: Path) -> Path:
    """``root/tiny/20260101-000000``: three runs recorded (the last damaged), never finished (a kill)."""
    directory = root / "tiny" / "20260101-000000"
    directory.mkdir(parents=True)
    writer = ResultsWriter(directory, {"experiment": "tiny", "resolved": RESOLVED})
    writer.flush()
    for index in range(3):
        rows, summary = fake_run(index)
        if index == 2:
            summary["checkpoints"] += 1  # its rows no longer add up to its summary
        writer.add_run(rows, summary)
    return directory


def test_the_newest_folder_is_locked_checked_and_its_good_runs_kept(tmp_path):
    directory = interrupted_folder(tmp_path)
    with ExitStack() as locks:
        point = open_for_resume(tmp_path / "tiny", "tiny", "tiny.yaml", RESOLVED, 3, locks)
        assert point is not None and point.directory == directory
        assert [summary["run"] for _, summary in point.kept] == [0, 1]
        assert [len(rows) for rows, _ in point.kept] == [3, 3]
        assert len(point.damaged) == 1 and point.damaged[0].startswith("sbp run 2: ")
        with ExitStack() as other, pytest.raises(UserError, match="another sbpbench run is writing"):
            open_for_resume(tmp_path / "tiny", "tiny", "tiny.yaml", RESOLVED, 3, other)
    assert open_for_resume(tmp_path / "none", "none", "none.yaml", RESOLVED, 3, ExitStack()) is None


def test_more_runs_may_be_asked_for_but_not_fewer(tmp_path):
    interrupted_folder(tmp_path)
    with ExitStack() as locks:
        assert open_for_resume(tmp_path / "tiny", "tiny", "t.yaml", {**RESOLVED, "runs": 5}, 5, locks) is not None
    with ExitStack() as locks, pytest.raises(UserError, match=r"key 'resolved.runs' differs: 3 in the folder, 2 in "
                                                              r"the config t.yaml"):
        open_for_resume(tmp_path / "tiny", "tiny", "t.yaml", {**RESOLVED, "runs": 2}, 2, locks)
    with ExitStack() as locks, pytest.raises(UserError, match="holds experiment 'tiny', not 'other'"):
        open_for_resume(tmp_path / "tiny", "other", "t.yaml", RESOLVED, 3, locks, tmp_path / "tiny" / "20260101-000000")
