"""The command line end to end on a small real subsample, and its error and interruption paths."""

import gc
import json
import logging
import math
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sbpbench.errors import UserError
from sbpbench.outputs import plotting
from sbpbench.results.store import COLUMNS
from sbpbench.solvers import SOLVERS, Snapshot, Solver
from tests.cli_runner import environment, interruption, sbpbench
from tests.experiments import adult_config, interrupt_run, write_adult_config, write_config


@pytest.fixture
def config_file(tmp_path):
    return write_config(tmp_path / "tiny.yaml", adult_config(n_train=300, n_test=300))


def test_run_writes_results_table_and_figure(monkeypatch, capsys, tmp_path, config_file):
    frozen = []  # objects spared the collector's full passes while it draws (issue #37), given back at the end
    collecting = []  # and no collection while it draws
    draw = plotting.plot_results

    def watched(*args):
        frozen.append(gc.get_freeze_count())
        collecting.append(gc.isenabled())
        return draw(*args)

    monkeypatch.setattr(plotting, "plot_results", watched)
    assert sbpbench(monkeypatch, "run", config_file, "--results", tmp_path / "res") == 0
    assert frozen[0] > 0 and gc.get_freeze_count() == 0 and gc.isenabled()
    assert collecting == [False]
    out = capsys.readouterr().out
    assert "sbp" in out and "pegasos" in out and "±" in out and "figure2.png" in out
    (run_dir,) = (tmp_path / "res" / "tiny").iterdir()
    curves = pd.read_csv(run_dir / "curves.csv")
    assert list(curves.columns[: len(COLUMNS)]) == COLUMNS
    assert set(curves["solver"]) == {"sbp", "pegasos"} and set(curves["run"]) == {0, 1}
    assert set(curves["status"]) == {"budget"}
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["resolved"]["problem"]["lambda"] == pytest.approx(1 / 300)
    assert meta["resolved"]["dataset"]["n_train"] == 300
    assert meta["resolved"]["solvers"][1]["params"] == {"mini_batch": 1, "projection": True, "representation": "auto"}
    assert [r["status"] for r in meta["runs"]] == ["budget"] * 4
    assert "finished" in meta and meta["versions"]["numpy"]
    assert (run_dir / "figure2.png").stat().st_size > 0 and (run_dir / "figure2.svg").exists()
    assert re.search(rf"page:\s+{re.escape(str(run_dir / 'index.html'))}\n", out)
    assert "sbp (2 runs)" in (run_dir / "index.html").read_text()

    out_dir = tmp_path / "figs"
    assert sbpbench(monkeypatch, "plot", tmp_path / "res", "--out", out_dir) == 0
    assert (out_dir / "figure2.png").exists()


def test_bad_config_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset: adult\nsolvers: [svm]\n")
    assert sbpbench(monkeypatch, "run", bad, "--results", tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("sbpbench: error: ") and "bad.yaml" in err and "solvers[0].name" in err
    assert not (tmp_path / "bad").exists() and gc.get_freeze_count() == 0 and gc.isenabled()


def test_debug_is_the_group_option_read_by_click(monkeypatch, capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset: adult\nsolvers: [svm]\n")
    with pytest.raises(UserError, match="solvers"):  # sbpbench --debug: the traceback
        sbpbench(monkeypatch, "--debug", "validate", bad)
    # '--debug' as the value of an option is not the flag: still one line and exit 2
    assert sbpbench(monkeypatch, "validate", bad, "--set", "--debug") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sbpbench: error: ")


def test_library_notes_show_as_one_line(monkeypatch, capsys):
    assert sbpbench(monkeypatch, "solvers") == 0
    capsys.readouterr()
    logging.getLogger("sbpbench.experiment.optimum").info("computing %s\n  on %d examples", "nu", 3)
    assert capsys.readouterr().err == "sbpbench: note: computing nu on 3 examples\n"


def test_validate_and_missing_results(monkeypatch, capsys, tmp_path, config_file):
    assert sbpbench(monkeypatch, "validate", config_file) == 0
    assert "ok" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert sbpbench(monkeypatch, "plot", empty) == 2
    assert "no curves.csv" in capsys.readouterr().err


@pytest.mark.parametrize("command", [[], ["run"], ["plot"], ["page"], ["validate"], ["solvers"]])
def test_every_command_has_help(monkeypatch, capsys, command):
    assert sbpbench(monkeypatch, *command, "--help") == 0
    assert "Usage:" in capsys.readouterr().out


def test_interruption_keeps_finished_runs(monkeypatch, capsys, tmp_path, config_file):
    interrupt_run(monkeypatch, 2)
    assert sbpbench(monkeypatch, "run", config_file, "--results", tmp_path) == 130
    err = capsys.readouterr().err.splitlines()
    (run_dir,) = (tmp_path / "tiny").iterdir()
    counts, folder, resume = interruption(err, "tiny")
    assert counts == (1, 1, 2) and folder == str(run_dir)  # finished, interrupted, not started
    assert resume == f"sbpbench run {config_file} --results {tmp_path} --resume-from {run_dir}"
    curves = pd.read_csv(run_dir / "curves.csv")
    assert set(zip(curves["solver"], curves["run"])) == {("sbp", 0)}
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["interrupted"] is True
    assert [(r["solver"], r["run"], r["status"]) for r in meta["runs"]] == [("sbp", 0, "budget"),
                                                                           ("pegasos", 0, "interrupted")]
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".")]  # no temporary files left


class Breaks(Solver):
    """A solver that raises after its first checkpoint, or (``diverges``) returns NaN from its third."""

    name = "breaks"
    diverges = False

    def advance(self, max_iterations, max_kernel_evals, deadline):
        self.iteration += 1
        if not self.diverges and self.iteration > 1:
            raise MemoryError("out of memory")
        return False

    def snapshot(self):
        value = math.nan if self.iteration > 2 else 1.0
        return Snapshot(np.array([0]), np.array([1.0]), objective=value)


def test_failed_or_diverged_runs_exit_3_after_writing_everything(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(SOLVERS, "raises", type("Raises", (Breaks,), {"name": "raises"}))
    monkeypatch.setitem(SOLVERS, "diverges", type("Diverges", (Breaks,), {"name": "diverges", "diverges": True}))
    path = write_config(tmp_path / "breaking.yaml", adult_config("breaking", solvers=["pegasos", "raises", "diverges"]))
    assert sbpbench(monkeypatch, "run", path, "--results", tmp_path / "res", "-q") == 3
    (run_dir,) = (tmp_path / "res" / "breaking").iterdir()
    err = capsys.readouterr().err.splitlines()  # (a note on the bundled Adult may come first)
    assert err[-1].startswith("sbpbench: ") and err[-1].endswith(str(run_dir / "meta.json"))
    assert re.findall(r"\d+", err[-1].removesuffix(str(run_dir / "meta.json"))) == ["4", "6"]  # of 6 runs
    assert not [line for line in err[:-1] if "failed" in line or "error" in line]
    meta = json.loads((run_dir / "meta.json").read_text())
    assert [r["status"] for r in meta["runs"]] == ["budget"] * 2 + ["failed: MemoryError: out of memory"] * 2 + [
        "diverged"] * 2
    assert "finished" in meta and (run_dir / "figure2.png").exists()
    assert set(pd.read_csv(run_dir / "curves.csv")["solver"]) == {"pegasos", "raises", "diverges"}


def test_a_quiet_run_without_figure_imports_no_scikit_learn_matplotlib_or_pandas(tmp_path):
    """The fixed cost of a short run (issue #37): only the solvers that call scikit-learn import it,
    matplotlib is for figures, pandas for reading results back (the summary table); the bundled
    Adult is read back parsed the second time."""
    cfg = write_adult_config(tmp_path, n_train=100, n_test=100, solvers=["sbp"], runs=1)
    code = ("import sys\nfrom sbpbench.cli import main\ntry:\n    main()\nexcept SystemExit as e:\n"
            "    assert not e.code, e.code\nprint(sorted({'sklearn', 'matplotlib', 'pandas'} & set(sys.modules)))")
    env = environment(SBPBENCH_DATA=str(tmp_path / "data"))
    # the first parses the bundled Adult (scikit-learn's reader, which imports pandas), the second reads
    # it back from the cache
    for expected in ("['pandas', 'sklearn']", "[]"):
        done = subprocess.run([sys.executable, "-c", code, "run", str(cfg), "--results", str(tmp_path / "res"),
                               "--no-plot", "-q"], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().splitlines()[-1] == expected
    assert len(list((tmp_path / "data" / ".parsed").glob("*.npz"))) == 2


def test_the_process_freezes_what_is_alive_when_it_exits():
    """Python's shutdown collects every object again, 0.45 s after a short run (issue #37): main has
    them frozen at exit, by an atexit handler that runs before those registered earlier (last in,
    first out), and leaves the collector as it was until then."""
    code = ("import atexit, gc\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
            "from sbpbench.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('frozen before:', gc.get_freeze_count() > 0)\n")
    done = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True,
                          env=environment(), check=True)
    assert done.stdout.splitlines()[-2:] == ["frozen before: False", "frozen at exit: True"]


def test_validate_reads_the_data_files_a_config_names(monkeypatch, capsys, tmp_path):
    """A zero index in a one-based LIBSVM file is refused by validate, naming file and line."""
    from sbpbench.data.sources.adult import bundled_bytes

    lines = bundled_bytes("a9a").splitlines()[:100]
    (tmp_path / "test.svm").write_bytes(b"\n".join(lines[50:]) + b"\n")
    lines[7] = lines[7].replace(b" ", b" 0:1 ", 1)
    (tmp_path / "train.svm").write_bytes(b"\n".join(lines) + b"\n")
    cfg = tmp_path / "files.yaml"
    cfg.write_text("dataset: {path: train.svm, test_path: test.svm, n_features: 123}\n"
                   "problem: {lambda: 1/n}\nsolvers: [pegasos]\n")
    assert sbpbench(monkeypatch, "validate", cfg) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("sbpbench: error: ") and "train.svm:8: feature index 0" in err

    (tmp_path / "train.svm").write_bytes(b"\n".join(bundled_bytes("a9a").splitlines()[:100]) + b"\n")
    assert sbpbench(monkeypatch, "validate", cfg) == 0
    assert "data: 100 training / 50 test examples" in capsys.readouterr().out


def test_pegasos_primal_on_a_gaussian_kernel_fails_validation(monkeypatch, capsys, tmp_path):
    """Refused before anything runs (it used to pass validate and end as a failed run, exit 0)."""
    primal = adult_config(problem={"lambda": "1/n"}, solvers=[{"name": "pegasos", "representation": "primal"}])
    cfg = write_config(tmp_path / "primal.yaml", primal)
    for command in ("validate", "run"):
        assert sbpbench(monkeypatch, command, cfg, *(["--results", tmp_path / "res"] if command == "run" else [])) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "representation 'primal' needs kernel.name linear" in err
    assert not (tmp_path / "res").exists()
    write_config(cfg, {**primal, "kernel": {"name": "linear"}})
    assert sbpbench(monkeypatch, "validate", cfg) == 0


def test_quiet_prints_only_the_run_folders(monkeypatch, capsys, tmp_path, config_file):
    """-q: no progress, no table, no figure lines; one line per experiment, its run folder."""
    assert sbpbench(monkeypatch, "run", config_file, "--results", tmp_path / "res", "-q") == 0
    (run_dir,) = (tmp_path / "res" / "tiny").iterdir()
    assert capsys.readouterr().out.splitlines() == [str(run_dir)]
    assert (run_dir / "index.html").is_file() and (run_dir / "figure2.png").is_file()
