"""scripts/mutation_check.py: its mutations still apply, a mutation is always written back, and a
checkout with uncommitted changes is refused."""

import contextlib
import os
import sys
from pathlib import Path

import pytest


@pytest.fixture
def mutation_check(monkeypatch):
    """The script as a module."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "scripts"))
    import mutation_check

    return mutation_check


def test_every_mutation_applies_to_the_code_as_it_is(mutation_check):
    for m in mutation_check.MUTATIONS:
        for file, old, new in m.edits:
            assert old != new and (mutation_check.ROOT / file).read_text().count(old) == 1, (m.name, file)
        assert m.tests or m.solver_files, m.name


def test_the_files_are_written_back_however_the_run_ends(mutation_check, monkeypatch, tmp_path):
    monkeypatch.setattr(mutation_check, "ROOT", tmp_path)
    target = tmp_path / "a.py"
    target.write_text("x = 1\ny = 2\n")
    os.utime(target, ns=(10**18, 10**18))
    m = mutation_check.Mutation("m", "changes x and y", (("a.py", "x = 1", "x = 3"), ("a.py", "y = 2", "y = 4")))
    with pytest.raises(KeyboardInterrupt), mutation_check.applied(m):
        assert target.read_text() == "x = 3\ny = 4\n"
        raise KeyboardInterrupt
    assert target.read_text() == "x = 1\ny = 2\n" and target.stat().st_mtime_ns == 10**18
    stale = mutation_check.Mutation("s", "no longer applies", (("a.py", "x = 1", "x = 3"), ("a.py", "z", "w")))
    with pytest.raises(LookupError, match="a.py: the old text occurs 0 times"), mutation_check.applied(stale):
        pass
    assert target.read_text() == "x = 1\ny = 2\n"


def test_a_dirty_checkout_is_refused(mutation_check, monkeypatch, capsys):
    monkeypatch.setattr(mutation_check, "dirty", lambda: " M sbpbench/problem.py")
    monkeypatch.setattr("sys.argv", ["mutation_check.py", "--only", "sbp-average-divisor"])
    with pytest.raises(SystemExit) as exit_:
        mutation_check.main()
    assert exit_.value.code == 2 and "uncommitted changes" in capsys.readouterr().err


def test_a_stage_past_its_timeout_is_killed_and_counts_as_failing(mutation_check):
    failed, seconds, last = mutation_check.run_stage([sys.executable, "-c", "import time; time.sleep(60)"], 1.0)
    assert failed and seconds < 30 and last == "timed out after 1 s"


def test_the_baseline_runs_the_selections_of_the_mutations_chosen(mutation_check, monkeypatch):
    """``--only``: the stages on the unchanged code run the chosen mutations' tests, not every mutation's."""
    commands = []

    def run_stage(command, timeout):
        commands.append(command)
        return False, 0.0, "passed"

    monkeypatch.setattr(mutation_check, "dirty", lambda: "")
    monkeypatch.setattr(mutation_check, "applied", lambda m: contextlib.nullcontext())  # nothing edited
    monkeypatch.setattr(mutation_check, "run_stage", run_stage)
    monkeypatch.setattr(mutation_check.signal, "signal", lambda *args: None)  # leave pytest's SIGTERM alone
    monkeypatch.setattr("sys.argv", ["mutation_check.py", "--stages", "tests", "--only", "subsample-with-replacement"])
    with pytest.raises(SystemExit) as exit_:
        mutation_check.main()
    assert exit_.value.code == 1  # the stubbed stage passes: the mutation escaped
    selected = ["tests/test_data.py::test_a_subsample_holds_distinct_rows_in_file_order"]
    assert [[arg for arg in command if arg.startswith("tests/")] for command in commands] == [selected, selected]
