"""Result files read back: labels pandas would take for gaps, complete runs never dropped, malformed files."""

import contextlib
import csv
import io
import json
import os
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest

from sbpbench.files import umask
from sbpbench.outputs import plotting
from sbpbench.results.store import read_curves
from tests.cli_runner import one_error_line, sbpbench
from tests.experiments import adult_config, write_config

LABELS = ["NA", "null", "None"]
#: Labels that a careless reader of CSV or YAML takes for a missing value.
CONFIG = adult_config("labels", runs=1, solvers=[{"name": "sbp", "label": "NA"}, {"name": "pegasos", "label": "null"},
                                                 {"name": "pegasos", "label": "None", "mini_batch": 2}])

pytestmark = pytest.mark.usefixtures("one_numba_thread")


def without_times(directory: Path) -> pd.DataFrame:
    return read_curves(directory).drop(columns=["train_time_s"])


@pytest.fixture(scope="module")
def config_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("config") / "labels.yaml"
    return write_config(path, CONFIG)


@pytest.fixture(scope="module")
def finished_once(tmp_path_factory, config_path, one_numba_thread):
    """A finished run of the config, made once for the tests of this file: its results folder, the
    solver labels the figure drew and what the run printed."""
    results = tmp_path_factory.mktemp("finished") / "res"
    drawn: list[str] = []
    real = plotting._draw_curve
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stdout(out):
        monkeypatch.setattr(plotting, "_draw_curve", lambda ax, label, *a: drawn.append(label) or real(ax, label, *a))
        assert sbpbench(monkeypatch, "run", config_path, "--results", results) == 0
    return results, drawn, out.getvalue()


@pytest.fixture
def finished(tmp_path, finished_once):
    """A copy of :func:`finished_once` under this test's ``tmp_path / "res"``, for the test to
    change: its run folder, the labels the figure drew and what the run printed."""
    results, drawn, out = finished_once
    shutil.copytree(results, tmp_path / "res")
    (directory,) = (tmp_path / "res" / "labels").iterdir()
    return directory, list(drawn), out


def test_labels_pandas_reads_as_missing_survive(monkeypatch, capsys, tmp_path, config_path, finished):
    directory, drawn, out = finished
    assert drawn[:3] == LABELS and set(drawn) == set(LABELS)  # the figure, then the run page's figures
    table = [line.split()[0] for line in out.splitlines() if line.split()[:1] and line.split()[0] in LABELS]
    assert table[:len(LABELS)] == LABELS and set(table) == set(LABELS)  # the summary; the budget tables after it
    curves = read_curves(directory)
    assert list(dict.fromkeys(curves["solver"])) == LABELS
    assert curves["test_error"].dtype == float and curves["kernel_evals"].notna().all()

    assert sbpbench(monkeypatch, "check", directory, "--reference", directory) == 0
    assert ": 0 outside their bands" in capsys.readouterr().out

    before = (directory / "curves.csv").read_bytes()
    assert sbpbench(monkeypatch, "run", config_path, "--results", tmp_path / "res", "--resume", "-q",
                    "--no-plot") == 0
    meta = json.loads((directory / "meta.json").read_text())
    assert [(r["kept"], r["redone"]) for r in meta["resumes"]] == [(3, 0)]
    assert (directory / "curves.csv").read_bytes() == before


def test_resume_redoes_a_complete_run_whose_rows_are_gone(monkeypatch, tmp_path, config_path, finished):
    directory, _, _ = finished
    expected = without_times(directory)
    with open(directory / "curves.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    solver = rows[0].index("solver")
    with open(directory / "curves.csv", "w", newline="") as fh:  # the rows of "null" lost, the others as written
        csv.writer(fh).writerows(row for row in rows if row[solver] != "null")
    assert sbpbench(monkeypatch, "run", config_path, "--results", tmp_path / "res", "--resume", "-q",
                    "--no-plot") == 0
    meta = json.loads((directory / "meta.json").read_text())
    assert [(r["kept"], r["redone"]) for r in meta["resumes"]] == [(2, 1)]
    provenance = ("git_commit", "git_dirty")  # of the redone runs too
    assert {k: meta["resumes"][0][k] for k in provenance} == {k: meta[k] for k in provenance}
    pd.testing.assert_frame_equal(without_times(directory), expected)


def test_a_meta_json_that_is_not_an_object_is_one_line(monkeypatch, capsys, tmp_path, config_path, finished):
    directory, _, _ = finished
    (directory / "meta.json").write_text("[1, 2]\n")
    assert sbpbench(monkeypatch, "run", config_path, "--results", tmp_path / "res", "--resume", "-q") == 2
    one_error_line(capsys.readouterr().err, "meta.json", "JSON object")
    assert sbpbench(monkeypatch, "check", directory, "--reference", directory) == 2
    one_error_line(capsys.readouterr().err, "meta.json", "JSON object")


@pytest.mark.parametrize("text, needle", [
    ("a,b\n1,2\n", "missing columns experiment, dataset, solver"),
    ("\x00\x01\x02", "not a sbpbench curves.csv"),
])
def test_a_csv_of_another_shape_is_one_line(monkeypatch, capsys, tmp_path, config_path, finished, text, needle):
    directory, _, _ = finished
    good = tmp_path / "good"
    good.mkdir()
    for name in ("curves.csv", "meta.json"):
        (good / name).write_bytes((directory / name).read_bytes())
    (directory / "curves.csv").write_text(text)
    assert sbpbench(monkeypatch, "plot", directory) == 2
    one_error_line(capsys.readouterr().err, str(directory / "curves.csv"), needle)
    assert sbpbench(monkeypatch, "check", directory, "--reference", good) == 2
    one_error_line(capsys.readouterr().err, needle)
    assert sbpbench(monkeypatch, "check", good, "--reference", directory) == 2
    one_error_line(capsys.readouterr().err, needle)
    # --resume redoes the runs it cannot read back (a note says so), and writes the file anew
    assert sbpbench(monkeypatch, "run", config_path, "--results", tmp_path / "res", "--resume", "-q", "--no-plot") == 0
    assert f"sbpbench: note: {directory / 'curves.csv'}: " in capsys.readouterr().err
    assert not read_curves(directory).empty


def test_text_in_a_numeric_column_is_one_line(monkeypatch, capsys, finished):
    directory, _, _ = finished
    curves = pd.read_csv(directory / "curves.csv", dtype=str, keep_default_na=False)
    curves.loc[0, "test_error"] = "oops"
    curves.to_csv(directory / "curves.csv", index=False)
    assert sbpbench(monkeypatch, "plot", directory) == 2
    one_error_line(capsys.readouterr().err, "column 'test_error' holds text")


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_result_files_get_the_mode_the_umask_gives(monkeypatch, tmp_path, mask, mode):
    """Others can read a shared results folder under the usual umask (mkstemp alone gives 0600)."""
    path = tmp_path / "labels.yaml"
    write_config(path, {**CONFIG, "budget": {"epochs": 0.05}})
    old = os.umask(mask)
    try:
        assert umask() == mask
        assert sbpbench(monkeypatch, "run", path, "--results", tmp_path / "res", "--no-plot", "-q") == 0
    finally:
        os.umask(old)
    written = sorted((tmp_path / "res" / "labels").glob("*/*"))
    assert {p.name for p in written} == {"curves.csv", "meta.json"}
    assert all(stat.S_IMODE(p.stat().st_mode) == mode for p in written), [oct(p.stat().st_mode) for p in written]
