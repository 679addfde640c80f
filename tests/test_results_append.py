"""Recording a run appends to the run folder's files, at a cost that does not grow with the runs
before it; a writer killed at any moment loses no recorded run (:mod:`sbpbench.results.store`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from sbpbench import files
from sbpbench.errors import UserError
from sbpbench.results import store
from sbpbench.results.csvrows import rows_csv
from sbpbench.results.resumable import kept_runs
from sbpbench.results.store import JOURNAL, ResultsWriter, curves_columns, read_curves, read_meta
from scripts.bench_results_writes import CHECKPOINTS, fake_run
from tests.cli_runner import command, environment
from tests.experiments import write_adult_config


@pytest.fixture
def written(monkeypatch) -> list[tuple[str, str, int]]:
    """Every write of the writer: ``(how, file name, bytes)``, ``how`` being ``whole`` or ``append``."""
    log: list[tuple[str, str, int]] = []
    real_whole, real_append = store.atomic_write, store.append_text

    def whole(path: Path, data: str | bytes) -> None:
        log.append(("whole", path.name, len(data)))
        real_whole(path, data)

    def append(path: Path, text: str) -> None:
        log.append(("append", path.name, len(text.encode())))
        real_append(path, text)

    monkeypatch.setattr(store, "atomic_write", whole)
    monkeypatch.setattr(store, "append_text", append)
    monkeypatch.setattr(files.os, "fsync", lambda fd: None)  # bytes are counted here, not made durable
    return log


def test_the_bytes_written_per_run_do_not_grow_with_the_runs_before(tmp_path, written):
    """3000 tiny runs (``runs: 10000`` of the issue, shortened): after the first run, nothing is
    rewritten whole until the end, and the last runs cost as many bytes as the first ones."""
    writer = ResultsWriter(tmp_path, {"experiment": "tiny"})
    writer.flush()
    per_run = []
    for index in range(3000):
        before = len(written)
        writer.add_run(*fake_run(index))
        per_run.append(written[before:])
    whole_after_first = [w for writes in per_run[1:] for w in writes if w[0] == "whole"]
    assert whole_after_first == []
    size = [sum(w[2] for w in writes) for writes in per_run]
    # the run's index is written in its rows and summary: 1 to 4 digits, so a few bytes more at the end
    assert max(size[-500:]) <= max(size[1:500]) + 4 * (CHECKPOINTS + 1)
    writer.flush(finished=True)
    assert not (tmp_path / JOURNAL).exists()
    assert len(read_meta(tmp_path)["runs"]) == 3000


def test_the_finished_files_are_those_a_whole_write_gives(tmp_path):
    """Runs finishing out of order, with a solver bringing a column of its own: once finished, the
    files list the runs in position order, as one write of every run would."""
    writer = ResultsWriter(tmp_path, {"experiment": "tiny"})
    writer.flush()
    runs = {pos: fake_run(pos % 3, solver="sbp" if pos < 3 else "smo") for pos in range(6)}
    runs[4][0][0]["duality_gap"] = 0.5  # a column curves.csv lacks until then
    for pos in (2, 0, 5, 4, 1, 3):
        writer.add_run(*runs[pos], position=pos)
    assert {r["solver"] + str(r["run"]) for r in read_meta(tmp_path)["runs"]} == {
        "sbp0", "sbp1", "sbp2", "smo0", "smo1", "smo2"}
    writer.flush(finished=True)
    rows = [row for pos in range(6) for row in runs[pos][0]]
    assert (tmp_path / "curves.csv").read_text() == rows_csv(rows, curves_columns(rows))
    assert json.loads((tmp_path / "meta.json").read_text())["runs"] == [runs[pos][1] for pos in range(6)]
    assert not (tmp_path / JOURNAL).exists()


def test_a_writer_killed_mid_append_loses_no_recorded_run(tmp_path):
    """Killed (no final write) while appending a run: every run recorded before is read back and
    kept by a resume; the cut rows and the cut summary are passed over."""
    writer = ResultsWriter(tmp_path, {"experiment": "tiny"})
    writer.flush()
    for index in range(5):
        writer.add_run(*fake_run(index))
    rows, summary = fake_run(5)
    with open(tmp_path / "curves.csv", "a") as fh:  # the kill: a run's rows and summary half appended
        fh.write(rows_csv(rows, curves_columns(rows), header=False)[:-9])
    with open(tmp_path / JOURNAL, "a") as fh:
        fh.write(json.dumps(summary)[:20])
    meta = read_meta(tmp_path)
    assert [r["run"] for r in meta["runs"]] == [0, 1, 2, 3, 4]
    curves = read_curves(tmp_path)
    assert len(curves) == 5 * CHECKPOINTS + 2 and curves["status"].notna().all()
    kept = kept_runs(tmp_path, meta)
    assert [s["run"] for _, s in kept.runs] == [0, 1, 2, 3, 4] and kept.damaged == []


def test_a_run_recorded_again_replaces_the_journal_and_meta_json_run(tmp_path):
    """A journal left beside a ``meta.json`` that already lists its runs (a kill between the two
    steps of a whole write) adds no run twice."""
    writer = ResultsWriter(tmp_path, {"experiment": "tiny"})
    writer.flush()
    for index in range(3):
        writer.add_run(*fake_run(index))
    journal = (tmp_path / JOURNAL).read_bytes()
    writer.flush(finished=True)
    (tmp_path / JOURNAL).write_bytes(journal)
    assert [r["run"] for r in read_meta(tmp_path)["runs"]] == [0, 1, 2]


def test_a_damaged_journal_line_is_one_error_naming_it(tmp_path):
    writer = ResultsWriter(tmp_path, {"experiment": "tiny"})
    writer.flush()
    writer.add_run(*fake_run(0))
    writer.add_run(*fake_run(1))
    with open(tmp_path / JOURNAL, "a") as fh:
        fh.write('{"run": "two"}\n')
    with pytest.raises(UserError, match=rf"{JOURNAL}:2: not a sbpbench meta.json \(key 'runs\[0\].run' holds"):
        read_meta(tmp_path)
    (tmp_path / JOURNAL).write_text('{"run": 0}\nnot json\n')
    with pytest.raises(UserError, match=rf"{JOURNAL}:2: cannot read a run's summary"):
        read_meta(tmp_path)


def test_an_append_that_fails_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    """A full disk at the fsync of an append: the file keeps its old length, the error names it."""
    path = tmp_path / "curves.csv"
    files.append_text(path, "a,b\n")

    def fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", fsync)
    with pytest.raises(OSError, match="No space left") as caught:
        files.append_text(path, "1,2\n")
    assert caught.value.filename == str(path) and path.read_text() == "a,b\n"


def test_a_run_whose_summary_cannot_be_appended_leaves_no_rows(tmp_path, monkeypatch):
    """A full disk at the journal: one line saying what the folder keeps, and curves.csv without the
    run's rows (no run there without its summary)."""
    writer = ResultsWriter(tmp_path, {"experiment": "tiny"})
    writer.flush()
    writer.add_run(*fake_run(0))
    writer.add_run(*fake_run(1))
    before = (tmp_path / "curves.csv").read_bytes()
    real = store.append_text

    def append(path: Path, text: str) -> None:
        if path.name == JOURNAL:
            raise OSError(28, "No space left on device", str(path))
        real(path, text)

    monkeypatch.setattr(store, "append_text", append)
    with pytest.raises(UserError, match="cannot write the results .No space left on device.; it keeps the files as "
                                        "last written, with 2 run.s."):
        writer.add_run(*fake_run(2))
    assert (tmp_path / "curves.csv").read_bytes() == before
    assert [r["run"] for r in read_meta(tmp_path)["runs"]] == [0, 1]


def test_a_run_killed_with_sigkill_keeps_every_recorded_run(tmp_path):
    """``kill -9`` of ``sbpbench run`` while a long run computes, after two short runs were recorded
    (the second one only appended: in ``runs.jsonl``, not in ``meta.json``): both are read back and
    a resume keeps both."""
    solvers = [{"name": "pegasos", "label": "a", "budget": {"epochs": 1}},
               {"name": "pegasos", "label": "b", "budget": {"epochs": 1}}, "sbp"]
    config = write_adult_config(tmp_path, "kill", n_train=3000, n_test=300, solvers=solvers,
                                budget={"epochs": 2000}, runs=1)
    proc = subprocess.Popen(command("run", config, "--results", tmp_path / "res", "--no-plot", "-q"),
                            env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        journal = None
        deadline = time.monotonic() + 240  # room for a loaded machine: the two short runs take a second
        while time.monotonic() < deadline and proc.poll() is None:
            found = list((tmp_path / "res" / "kill").glob(f"*/{JOURNAL}"))
            if found and found[0].read_bytes().endswith(b"\n"):
                journal = found[0]
                break
            time.sleep(0.05)
        assert journal is not None, proc.stderr.read().decode() if proc.poll() is not None else "no journal"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stderr.close()
    folder = journal.parent
    meta = read_meta(folder)
    assert [(r["solver"], r["status"]) for r in meta["runs"]] == [("a", "budget"), ("b", "budget")]
    assert "finished" not in meta
    assert [r["solver"] for r in json.loads((folder / "meta.json").read_text())["runs"]] == ["a"]  # b: journal
    assert [s["solver"] for _, s in kept_runs(folder, meta).runs] == ["a", "b"]
    assert set(read_curves(folder)["solver"]) == {"a", "b"}
