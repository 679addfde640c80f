"""Text that a file or the console cannot encode (issue #46): every file sbpbench writes is UTF-8
whatever the locale, a lone surrogate in it is written as its backslash escape, and the console
escapes what its encoding cannot show; neither ends a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.cli_runner import environment, sbpbench
from tests.experiments import adult_config, write_config

#: What Python makes of the Latin-1 byte of "é" that is not UTF-8 (in a path, or a YAML "\udce9").
SURROGATE = "\udce9"


def test_a_lone_surrogate_in_a_label_and_a_folder_name_is_written_escaped_and_resumed(monkeypatch, capsys,
                                                                                     tmp_path):
    """A label and description holding a lone surrogate, under a results folder whose name is not
    UTF-8: every file is written (the surrogate escaped in the text files, exactly kept by
    meta.json's JSON escape), and --resume keeps the finished run."""
    label = f"sbp-{SURROGATE}"
    config = write_config(tmp_path / "tiny.yaml", adult_config(
        n_train=60, n_test=60, runs=1, description=f"d{SURROGATE}", solvers=[{"name": "sbp", "label": label}]))
    results = tmp_path / os.fsdecode(b"r\xe9sultats")
    assert sbpbench(monkeypatch, "run", config, "--results", results) == 0
    (folder,) = (results / "tiny").iterdir()
    for name in ("curves.csv", "meta.json", "index.html", "figure2.svg", "figure2.png"):
        assert (folder / name).stat().st_size > 0, name
    curves = (folder / "curves.csv").read_bytes().decode("utf-8")  # UTF-8, or this fails
    assert "sbp-\\udce9," in curves
    assert "sbp-\\udce9" in (folder / "index.html").read_bytes().decode("utf-8")
    meta = json.loads((folder / "meta.json").read_bytes().decode("utf-8"))
    assert meta["runs"][0]["solver"] == label and meta["config"]["description"] == f"d{SURROGATE}"
    capsys.readouterr()
    assert sbpbench(monkeypatch, "run", config, "--results", results, "--resume", "--no-plot") == 0
    out, err = capsys.readouterr()
    assert "1 run(s) kept, 0" in err and "0 run(s) to do" in err and "damaged" not in err, err


def test_a_run_on_a_console_that_cannot_show_its_label_completes(tmp_path):
    """The C locale (an ASCII locale encoding for open()) and a Latin-1 console, a label "λ-sbp":
    the run completes with its figure and page, the console shows the label escaped, the files
    hold it in UTF-8."""
    config = write_config(tmp_path / "tiny.yaml", adult_config(
        n_train=60, n_test=60, runs=1, description="λ", solvers=[{"name": "sbp", "label": "λ-sbp"}]))
    env = environment(LC_ALL="C", PYTHONUTF8="0", PYTHONIOENCODING="latin-1")
    env.pop("LANG", None)
    done = subprocess.run([sys.executable, "-m", "sbpbench", "run", str(config), "--results", str(tmp_path / "res")],
                          capture_output=True, env=env)
    out, err = done.stdout.decode("latin-1"), done.stderr.decode("latin-1")
    assert done.returncode == 0, err[-3000:]
    assert "\\u03bb-sbp" in out and "Traceback" not in err
    (folder,) = (tmp_path / "res" / "tiny").iterdir()
    assert (folder / "figure2.png").stat().st_size > 0 and (folder / "index.html").stat().st_size > 0
    assert "λ-sbp" in (folder / "curves.csv").read_bytes().decode("utf-8")
    assert "λ-sbp" in (folder / "index.html").read_bytes().decode("utf-8")
