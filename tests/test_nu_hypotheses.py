"""``scripts/nu_hypotheses.py`` on a small Adult sample: every hypothesis gives a record the report
can quote, the as-run one is the runner's own nu, and the file is written as hypotheses finish;
those not finished within --limit are recorded as such."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from sbpbench.experiment import assemble
from sbpbench.experiment import config as experiment_config

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "nu_hypotheses.py"


@pytest.fixture
def script(monkeypatch, tmp_path):
    """The script, its config the committed one on 300 training / 200 test rows of Adult, its
    subsets 250 rows."""
    spec = importlib.util.spec_from_file_location("nu_hypotheses", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "nu_hypotheses", module)
    spec.loader.exec_module(module)
    config = tmp_path / "sbp-libsvm-adult.yaml"
    text = module.CONFIG.read_text().replace("dataset: {name: adult}",
                                             "dataset: {name: adult, n_train: 300, n_test: 200}")
    config.write_text(text.replace("cache_mb: 4000", "cache_mb: 10"))
    monkeypatch.setattr(module, "CONFIG", config)
    monkeypatch.setattr(module, "HYPOTHESES", tuple(
        h if h.rows is None else type(h)(h.what, rows=250, seed=h.seed) for h in module.HYPOTHESES))
    return module


def test_every_hypothesis_is_a_record_and_the_as_run_one_is_the_runners_nu(script, tmp_path):
    out = tmp_path / "analyses" / "nu.json"
    assert script.main(["--out", str(out), "--jobs", "1"]) == 0
    written = json.loads(out.read_text())
    records = written["hypotheses"]
    assert len(records) == len(script.HYPOTHESES) + 1  # "rescored" gives two readings
    assert all(r["nu"] > 0 and r["ratio_to_paper"] == pytest.approx(r["nu"] / script.PAPER_NU) for r in records)
    assert written["environment"]["git_commit"] is None or len(written["environment"]["git_commit"]) == 40
    exp = experiment_config.load(script.CONFIG)
    assert records[0]["nu"] == assemble.prepare(exp).params["nu"]  # the same optimum as a run of the config
    subsets = [r for r in records if "row count" in r["what"]]
    assert [r["n"] for r in subsets] == [250, 250] and subsets[0]["nu"] != subsets[1]["nu"]
    assert [r["lambda"] for r in records if "1/(1000 n)" in r["what"]] == [pytest.approx(1 / (1000 * 300))]


def test_hypotheses_not_finished_within_the_limit_are_recorded_as_such(script, tmp_path, monkeypatch):
    """``--limit``: with one job, no hypothesis starts after the deadline (a clock that jumps
    past it once the first has finished); with workers, they are stopped at the deadline."""
    clock = {"now": 0.0}
    real_evaluate = script.evaluate

    def evaluate_then_jump(h):
        found = real_evaluate(h)
        clock["now"] = 10.0
        return found

    monkeypatch.setattr(script, "evaluate", evaluate_then_jump)
    monkeypatch.setattr(script, "time", SimpleNamespace(monotonic=lambda: clock["now"], sleep=time.sleep,
                                                        perf_counter=time.perf_counter))
    out = tmp_path / "nu.json"
    assert script.main(["--out", str(out), "--jobs", "1", "--limit", "5"]) == 0
    records = json.loads(out.read_text())["hypotheses"]
    assert records[0]["nu"] > 0 and "not_finished_within_s" not in records[0]
    assert [r["what"] for r in records[1:]] == [h.what for h in script.HYPOTHESES[1:]]
    assert all(r["nu"] is None and r["not_finished_within_s"] == 5 for r in records[1:])

    monkeypatch.setattr(script, "time", time)
    started = time.monotonic()
    assert script.main(["--out", str(out), "--jobs", "2", "--limit", "0"]) == 0
    assert time.monotonic() - started < 60  # the workers were stopped, not waited for
    records = json.loads(out.read_text())["hypotheses"]
    assert len(records) == len(script.HYPOTHESES)
    assert all(r["nu"] is None and r["not_finished_within_s"] == 0 for r in records)


@pytest.mark.parametrize("args, expected", [(["--jobs", "0"], "--jobs 0: expected at least 1"),
                                            (["--limit", "-1"], "--limit -1: expected seconds, at least 0"),
                                            (["--limit", "nan"], "--limit nan: expected seconds, at least 0")])
def test_bad_arguments_end_in_one_error_line_and_exit_2_before_anything_is_written(script, tmp_path, capsys,
                                                                                   args, expected):
    out = tmp_path / "nu.json"
    with pytest.raises(SystemExit) as stop:
        script.main(["--out", str(out), *args])
    assert stop.value.code == 2 and not out.exists()
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].endswith(expected)
