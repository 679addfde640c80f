"""Times and run folder names when the wall clock steps or the time zone changes (issue #46):
durations from the monotonic clock, timestamps in UTC, the newest run folder by the instant it
was started (sbpbench/results/stamps.py, lookup.py)."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from sbpbench.execution import loop
from sbpbench.results.lookup import newest_run, run_folders
from sbpbench.results.stamps import Stopwatch, folder_stamp, parse_timestamp
from sbpbench.results.store import new_run_dir
from tests.experiments import run_sequentially, write_adult_config

DAY = 86400.0
#: Time zones as POSIX rules, which need no time zone database: Berlin (CET/CEST, the change
#: at 01:00 UTC on the last Sunday of October), New York and Tokyo.
BERLIN = "CET-1CEST,M3.5.0,M10.5.0/3"
NEW_YORK = "EST5EDT,M3.2.0,M11.1.0"
TOKYO = "JST-9"


@pytest.fixture
def time_zone(monkeypatch):
    """Set the process's time zone (``TZ``) for the test; the one before is back after it."""

    def use(tz: str) -> None:
        monkeypatch.setenv("TZ", tz)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("step", [-DAY, DAY], ids=["back", "forward"])
def test_a_wall_clock_step_mid_run_changes_no_duration_nor_the_order_of_times(monkeypatch, tmp_path, step):
    """An NTP step of a day as the runs start: every run's wall_time_s stays its real, positive
    duration, and finished is not before started (both UTC); a duration from the wall clock
    would be about a day off, and finished a day before started."""
    shift = {"by": 0.0, "stepped": False}
    real_time, real_run, real_measure = time.time, loop.run_one, loop._measure

    def stepping_run(*args, **kwargs):
        shift["stepped"] = False
        return real_run(*args, **kwargs)

    def measure(*args, **kwargs):
        if not shift["stepped"]:  # the wall clock steps in the middle of each run, after its first step
            shift["by"] += step
            shift["stepped"] = True
        return real_measure(*args, **kwargs)

    monkeypatch.setattr(time, "time", lambda: real_time() + shift["by"])
    monkeypatch.setattr(loop, "run_one", stepping_run)
    monkeypatch.setattr(loop, "_measure", measure)
    config = write_adult_config(tmp_path, n_train=60, n_test=60, solvers=["sbp"], runs=2)
    folder = run_sequentially(config, tmp_path / "res")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    started, finished = parse_timestamp(meta["started"]), parse_timestamp(meta["finished"])
    assert started is not None and finished is not None
    assert started.utcoffset() == finished.utcoffset() == dt.timedelta(0)
    # a tiny run takes seconds, minutes on a loaded machine: far below the step of a day
    assert dt.timedelta(0) <= finished - started < dt.timedelta(hours=1)
    walls = [run["wall_time_s"] for run in meta["runs"]]
    assert shift["by"] == 2 * step and len(walls) == 2 and all(0 < wall < 3600 for wall in walls), walls
    name = folder_stamp(folder.name)
    assert name is not None and name.utc and abs(name.when - started) < dt.timedelta(minutes=1)


def test_finished_is_never_before_started_recorded_by_an_earlier_process():
    """A resumed folder keeps the ``started`` of its first process: its ``finished`` is not before
    it even when this process's clock is behind; a ``started`` without offset is passed over."""
    clock = Stopwatch()
    begun = clock.started.replace(microsecond=0)  # as written: to the second
    later = "2999-01-01T00:00:00+00:00"
    assert clock.end(later) == later
    assert parse_timestamp(clock.end("2000-01-01T01:00:00+01:00")) >= begun
    assert parse_timestamp(clock.end("2000-01-01T00:00:00")) >= begun  # no offset: not a time
    assert parse_timestamp("2000-01-01T00:00:00") is None and parse_timestamp(7) is None


def _old_run_folder(experiment, at: float):
    """A run folder as sbpbench named and stamped it before names were in UTC, started at the
    epoch time ``at`` in the process's time zone: local time in the name, ``started`` with offset."""
    local = dt.datetime.fromtimestamp(at)
    folder = experiment / local.strftime("%Y%m%d-%H%M%S")
    folder.mkdir(parents=True)
    started = local.astimezone().isoformat(timespec="seconds")
    (folder / "meta.json").write_text(json.dumps({"experiment": experiment.name, "started": started}),
                                      encoding="utf-8")
    return folder


def _new_run_folder(experiment, at: float):
    """A run folder as :func:`new_run_dir` makes it with the wall clock at the epoch time ``at``."""
    with pytest.MonkeyPatch.context() as clock:
        clock.setattr(time, "time", lambda: at)
        folder = new_run_dir(experiment.parent, experiment.name)
    (folder / "meta.json").write_text(json.dumps({"experiment": experiment.name,
                                                  "started": dt.datetime.fromtimestamp(at, dt.UTC)
                                                  .isoformat(timespec="seconds")}), encoding="utf-8")
    return folder


def test_the_newest_run_folder_across_a_daylight_saving_fall_back(tmp_path, time_zone):
    """Berlin's clocks go back from 03:00 CEST to 02:00 CET at 01:00 UTC on 2026-10-25. A run
    folder named (the old way) at 02:30 CEST is older than one named at 02:10 CET, and a folder
    named the new way in UTC between them sorts between them: a name sort would take the first."""
    time_zone(BERLIN)
    experiment = tmp_path / "e"
    fall_back = dt.datetime(2026, 10, 25, 1, 0, tzinfo=dt.UTC).timestamp()
    first = _old_run_folder(experiment, fall_back - 30 * 60)  # 02:30 CEST
    third = _old_run_folder(experiment, fall_back + 10 * 60)  # 02:10 CET
    second = _new_run_folder(experiment, fall_back + 5 * 60)  # 01:05 UTC
    assert (first.name, third.name, second.name) == ("20261025-023000", "20261025-021000", "20261025T010500Z")
    assert run_folders(experiment) == [third, second, first]
    assert newest_run(experiment) == third


def test_the_newest_run_folder_of_machines_in_other_time_zones(tmp_path, time_zone):
    """Three machines sharing a results folder, each in its own time zone, start a minute apart:
    the last started is the newest, whatever its local time (Tokyo's is hours ahead)."""
    experiment = tmp_path / "e"
    start = dt.datetime(2026, 11, 29, 0, 46, 3, tzinfo=dt.UTC).timestamp()
    made = []
    for minute, tz in enumerate((TOKYO, BERLIN, NEW_YORK)):
        time_zone(tz)
        made.append(_new_run_folder(experiment, start + 60 * minute))
    assert [f.name for f in made] == ["20261129T004603Z", "20261129T004703Z", "20261129T004803Z"]
    made.append(_new_run_folder(experiment, start + 120))  # the same second: -1
    assert made[-1].name == "20261129T004803Z-1"
    time_zone(TOKYO)
    assert run_folders(experiment) == made[::-1]


def test_an_old_folder_without_a_readable_start_is_ordered_by_its_name(tmp_path):
    """Without a ``started`` that has an offset (damaged, edited, older), an old name's local time
    is read as UTC; a name that is no date is not a run folder."""
    experiment = tmp_path / "e"
    for name, started in (("20261129-010000", None), ("20261129-003000", "not a time"),
                          ("20261399-000000", "2026-11-29T02:00:00+00:00")):
        (experiment / name).mkdir(parents=True)
        (experiment / name / "meta.json").write_text(json.dumps({"started": started}), encoding="utf-8")
    (experiment / "20261129T005000Z").mkdir()
    (experiment / "20261129T005000Z" / "meta.json").write_text("{not json", encoding="utf-8")
    assert [f.name for f in run_folders(experiment)] == ["20261129-010000", "20261129T005000Z", "20261129-003000"]
