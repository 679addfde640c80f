"""Executors: identical curves sequentially, in local processes and on Dask (a sweep too); a lost Dask worker."""

import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from sbpbench.execution.executors import DaskExecutor, SequentialExecutor
from sbpbench.execution.sweep import plan, run_experiments
from sbpbench.experiment import assemble, config
from sbpbench.params import param
from sbpbench.solvers import SOLVERS
from sbpbench.solvers.sbp import SBP, SBPParams
from tests.cli_runner import sbpbench
from tests.experiments import run_sequentially, write_adult_config
from tests.run_files import curves, meta


@dataclass(frozen=True)
class KillerParams(SBPParams):
    marker: str = param("", "file created just before the process dies")


class Killer(SBP):
    """SBP that kills its own worker process half way through a run, unless ``marker`` exists (test only)."""

    name = "killer"
    Params = KillerParams

    def advance(self, max_iterations, max_kernel_evals, deadline):
        if self.iteration >= self.n // 2 and not os.path.exists(self.params.marker):
            Path(self.params.marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would (os._exit fails only the run)
        return super().advance(max_iterations, max_kernel_evals, deadline)


def statuses(directory: Path) -> list[str]:
    return [r["status"] for r in meta(directory)["runs"]]


pytestmark = pytest.mark.usefixtures("one_numba_thread")


def test_plan_starts_run_by_run_and_places_solver_by_solver(tiny_run):
    exp = config.load(tiny_run[0])
    assert [(t.spec.label, t.run, t.position) for t in plan(exp)] == [
        ("sbp", 0, 0), ("pegasos", 0, 2), ("sbp", 1, 1), ("pegasos", 1, 3)]
    assert [t.position for t in plan(exp, skip={0, 3})] == [2, 1]


def test_processes_match_sequential_and_share_one_pool(monkeypatch, capsys, tmp_path, tiny_run):
    ref_path, ref_dir = tiny_run
    other = write_adult_config(tmp_path, "other", solvers=["pegasos"], seed=1)
    results = tmp_path / "res"
    assert sbpbench(monkeypatch, "run", ref_path, other, "--jobs", "2", "--results", results, "--no-plot") == 0
    assert capsys.readouterr().err.count("starting 2 worker processes\n") == 1  # one pool, said as it starts
    (tiny,) = (results / "tiny").iterdir()
    pd.testing.assert_frame_equal(curves(tiny), curves(ref_dir))
    (other_dir,) = (results / "other").iterdir()
    pd.testing.assert_frame_equal(curves(other_dir), curves(run_sequentially(other, tmp_path / "seq")))
    assert statuses(tiny) == ["budget"] * 4 and statuses(other_dir) == ["budget"] * 2
    assert (meta(tiny)["executor"], meta(tiny)["jobs"]) == ("processes", 2)
    assert (meta(ref_dir)["executor"], meta(ref_dir)["jobs"]) == ("sequential", 1)


def test_configs_in_sequence_build_each_problem_once(monkeypatch, tmp_path):
    """The problems built to check the configs before any run are those their runs solve."""
    built = []
    real = assemble.prepare
    monkeypatch.setattr(assemble, "prepare", lambda exp, *args: built.append(exp.name) or real(exp, *args))
    paths = [write_adult_config(tmp_path, name, solvers=["pegasos"], seed=seed)
             for seed, name in enumerate(("one", "two", "three"))]
    executor = SequentialExecutor()
    directories = run_experiments([config.load(p) for p in paths], tmp_path / "res", executor)
    assert built == ["one", "two", "three"]
    assert [statuses(d) for d in directories] == [["budget"] * 2] * 3
    run_experiments([config.load(paths[0])], tmp_path / "res", executor)  # nothing kept once the runs are done
    assert built == ["one", "two", "three", "one"]


#: A sweep of sigma2 over the two solvers: four solver entries, each with its own problem.
SWEEP = "kernel.sigma2=[1, 10]"


@pytest.fixture(scope="module")
def sweep_reference(one_numba_thread, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    path = write_adult_config(folder, "sweep")
    directory = run_experiments([config.load(path, [SWEEP])], folder / "res", SequentialExecutor())[0]
    assert list(dict.fromkeys(curves(directory)["solver"])) == [
        "sbp[sigma2=1]", "sbp[sigma2=10]", "pegasos[sigma2=1]", "pegasos[sigma2=10]"]
    return path, directory


def run_sweep_cli(monkeypatch, sweep_reference, results: Path, *options) -> Path:
    """Run the sweep with ``sbpbench run OPTIONS``; check its files against the sequential run's."""
    path, ref_dir = sweep_reference
    assert sbpbench(monkeypatch, "run", path, "--set", SWEEP, *options, "--results", results, "--no-plot", "-q") == 0
    (directory,) = (results / "sweep").iterdir()
    pd.testing.assert_frame_equal(curves(directory), curves(ref_dir))
    assert meta(directory)["resolved"] == meta(ref_dir)["resolved"]
    assert statuses(directory) == ["budget"] * 8
    return directory


def test_a_sweep_in_processes_matches_sequential(monkeypatch, tmp_path, sweep_reference):
    directory = run_sweep_cli(monkeypatch, sweep_reference, tmp_path / "res", "--jobs", "2")
    assert meta(directory)["executor"] == "processes"


def test_bad_executor_options_are_one_line_errors(monkeypatch, capsys, tiny_run):
    ref_path, _ = tiny_run
    assert sbpbench(monkeypatch, "run", ref_path, "--executor", "sequential", "--jobs", "2") == 2
    assert sbpbench(monkeypatch, "run", ref_path, "--executor", "processes", "--scheduler", "tcp://x:1") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("sbpbench: error: --") for line in err)


def test_dask_missing_is_a_user_error(monkeypatch, capsys, tiny_run):
    ref_path, _ = tiny_run
    monkeypatch.setitem(sys.modules, "dask", None)  # makes "import dask" fail
    assert sbpbench(monkeypatch, "run", ref_path, "--executor", "dask") == 2
    assert "dask.distributed is not installed" in capsys.readouterr().err


# ----------------------------------------------------------------------------- Dask


try:
    from distributed import WorkerPlugin
except ImportError:  # the Dask tests are skipped
    WorkerPlugin = object


class InstallKiller(WorkerPlugin):
    """Dask worker plugin registering the test-only solver in every worker, restarted ones included."""

    def setup(self, worker):
        SOLVERS["killer"] = Killer


@pytest.fixture(scope="module")
def cluster():
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("dask.distributed")
    # one task per worker at a time, so a dying worker takes only its own run with it
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
        local = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                         dashboard_address=None)
    client = distributed.Client(local)
    client.register_plugin(InstallKiller(), name="install-killer")
    yield local.scheduler_address, client
    client.close()
    local.close()


def test_dask_matches_sequential(monkeypatch, tmp_path, tiny_run, cluster):
    ref_path, ref_dir = tiny_run
    address, _ = cluster
    results = tmp_path / "res"
    assert sbpbench(monkeypatch, "run", ref_path, "--executor", "dask", "--scheduler", address,
                    "--results", results, "--no-plot", "-q") == 0
    (directory,) = (results / "tiny").iterdir()
    pd.testing.assert_frame_equal(curves(directory), curves(ref_dir))
    assert statuses(directory) == ["budget"] * 4
    assert (meta(directory)["executor"], meta(directory)["jobs"]) == ("dask", None)  # the cluster decides


def test_a_sweep_on_dask_matches_sequential(monkeypatch, tmp_path, sweep_reference, cluster):
    address, _ = cluster
    directory = run_sweep_cli(monkeypatch, sweep_reference, tmp_path / "res", "--executor", "dask",
                              "--scheduler", address)
    assert meta(directory)["executor"] == "dask"


def test_a_deterministic_entry_runs_once_on_dask_as_sequentially(monkeypatch, tmp_path, cluster):
    """SMO (deterministic) beside SBP with runs: 2: one SMO run on the cluster as in this process."""
    address, _ = cluster
    path = write_adult_config(tmp_path, "det", solvers=["sbp", "smo"])
    results = tmp_path / "res"
    assert sbpbench(monkeypatch, "run", path, "--executor", "dask", "--scheduler", address,
                    "--results", results, "--no-plot", "-q") == 0
    (directory,) = (results / "det").iterdir()
    pd.testing.assert_frame_equal(curves(directory), curves(run_sequentially(path, tmp_path / "seq")))
    assert [(r["solver"], r["run"]) for r in meta(directory)["runs"]] == [("sbp", 0), ("sbp", 1), ("smo", 0)]
    assert meta(directory)["runs_once"] == ["smo"]


@pytest.fixture
def killer_config(tmp_path, monkeypatch):
    """A config with a run that kills its worker, and the curves the set gives when nothing dies."""
    monkeypatch.setitem(SOLVERS, "killer", Killer)
    marker = tmp_path / "killed"
    killer = {"name": "killer", "label": "killer", "marker": str(marker)}
    path = write_adult_config(tmp_path, "killing", solvers=["pegasos", killer])
    marker.touch()
    expected = curves(run_sequentially(path, tmp_path / "expected"))
    marker.unlink()
    return path, marker, expected


def test_killed_worker_run_is_retried_elsewhere(tmp_path, cluster, killer_config):
    address, client = cluster
    path, marker, expected = killer_config
    client.wait_for_workers(2)
    with DaskExecutor(address) as executor:
        (directory,) = run_experiments([config.load(path)], tmp_path / "res", executor)
    assert marker.exists()  # a worker did die
    assert statuses(directory) == ["budget"] * 4
    pd.testing.assert_frame_equal(curves(directory), expected)


def test_run_whose_worker_is_lost_fails_and_resume_finishes(monkeypatch, tmp_path, cluster, killer_config):
    address, client = cluster
    path, marker, expected = killer_config
    client.wait_for_workers(2)
    allowed = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures)
    client.run_on_scheduler(lambda dask_scheduler: setattr(dask_scheduler, "allowed_failures", 0))
    try:
        with DaskExecutor(address) as executor:
            (directory,) = run_experiments([config.load(path)], tmp_path / "res", executor)
    finally:
        client.run_on_scheduler(lambda dask_scheduler: setattr(dask_scheduler, "allowed_failures", allowed))
    runs = json.loads((directory / "meta.json").read_text())["runs"]
    lost = [(r["solver"], r["run"]) for r in runs if r["status"] != "budget"]
    # the killer fails; a run queued behind it on the dying worker may fail with it (no retry allowed here)
    assert ("killer", 0) in lost or ("killer", 1) in lost
    assert all(r["status"].startswith("failed: KilledWorker: ") for r in runs if r["status"] != "budget")
    assert len(lost) < 4
    partial = curves(directory)  # the finished runs whole, nothing of the lost ones
    kept = [(s, r) not in lost for s, r in zip(expected["solver"], expected["run"])]
    pd.testing.assert_frame_equal(partial, expected[kept].reset_index(drop=True))
    assert not [p for p in directory.iterdir() if p.name.startswith(".")]

    assert sbpbench(monkeypatch, "run", path, "--resume", "--executor", "dask", "--scheduler", address,
                    "--results", tmp_path / "res", "--no-plot", "-q") == 0
    assert list((tmp_path / "res" / "killing").iterdir()) == [directory]
    assert statuses(directory) == ["budget"] * 4
    pd.testing.assert_frame_equal(curves(directory), expected)


def test_a_config_that_fails_to_load_leaves_no_trace_of_the_others(monkeypatch, capsys, tmp_path, tiny_run):
    ref_path, _ = tiny_run
    (tmp_path / "broken.svm").write_text("this is not a LIBSVM file\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("dataset: {path: broken.svm, test_path: broken.svm}\n"
                      "problem: {lambda: 1/n}\nsolvers: [pegasos]\n")
    results = tmp_path / "res"
    assert sbpbench(monkeypatch, "run", ref_path, broken, "--results", results, "-q") == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("sbpbench: note: ")]
    assert len(err) == 1 and err[0].startswith("sbpbench: error: ") and "broken.svm:1" in err[0]
    assert not (results / "tiny").exists()

    assert sbpbench(monkeypatch, "run", ref_path, "--results", results, "-q", "--no-plot") == 0
    (directory,) = (results / "tiny").iterdir()
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    assert sbpbench(monkeypatch, "run", ref_path, broken, "--results", results, "-q", "--resume") == 2
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before  # no resume recorded
