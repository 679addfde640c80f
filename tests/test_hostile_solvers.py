"""Solvers, clusters and budgets that misbehave, through the command line as a user meets them.

The kinds ``tests/test_hostile_inputs.py`` (files, configs, data) does not make: a solver file
that calls ``sys.exit``, ``os._exit`` or raises ``KeyboardInterrupt`` in a step (in this process and in
``--jobs 2`` workers) or calls ``sys.exit`` at import, one that writes into the problem's data
(which harmed the runs after it), ``check-solver`` on solvers that write, exit, sleep or leave a
process holding its output open, one whose snapshot reports a column
sbpbench measures itself (its own test error), one whose step never returns or never advances
under a seconds budget, budgets that overflow once multiplied by n, and Dask scheduler
addresses of other protocols, of ports that answer something else or never answer, and of a
scheduler without workers. Each ends in one line and exit 2 before anything is written, or in
exit 3 with the solver's run recorded ``failed: ...``, the other runs kept, the summary printed
and ``meta.json`` finished; never a traceback, a hang or a wrong result with exit 0. A real
Ctrl-C (SIGINT) still interrupts the whole run.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sbpbench.errors import UserError
from sbpbench.execution import guard, loop
from sbpbench.kernels import read_only
from sbpbench.solvers.base import MEASURED_COLUMNS
from sbpbench.solvers.contract import CHECKS, adult_rows, make_problem
from sbpbench.solvers.external import load_file
from tests.cli_runner import ROOT, command, environment, invoke, one_error_line
from tests.test_fuzz import workspace
from tests.test_hostile_inputs import config_data, refused, write_config

pytestmark = pytest.mark.usefixtures("one_numba_thread")

#: A solver file: ``STEP`` is the body of its step once past the warm-up (whose problem has at
#: most 32 examples), ``SNAPSHOT_EXTRA`` its snapshot's extra columns, ``AT_IMPORT`` what the
#: file does when it is imported.
SOLVER = '''
import os, signal, sys, time
import numpy as np
from sbpbench.solvers import Snapshot, Solver
{at_import}

class Hostile(Solver):
    """A solver that misbehaves once past its warm-up (test only)."""

    name = "{name}"

    def _step(self, iterations, kernel_evals):
        if self.n > 40 or {always}:
{step}
        self.iteration += 1
        return False

    def snapshot(self):
        return Snapshot(support=np.arange(0), coef=np.zeros(0), extra={extra})

    def expected_kernel_evals(self):
        return 0.0
'''


#: Numbers of the solver files: each defines a solver of its own name (a process registers each name once).
FILES = itertools.count()


def solver_file(folder: Path, step: str = "pass", extra: str = "{}", at_import: str = "",
                always: bool = False) -> Path:
    """Write the :data:`SOLVER` file with these parts into ``folder``; return its path, whose stem
    is the solver's name (``hostileK``)."""
    path = folder / f"hostile{next(FILES)}.py"
    body = textwrap.indent(textwrap.dedent(step).strip(), " " * 12)
    path.write_text(SOLVER.format(name=path.stem, step=body, extra=extra, at_import=at_import, always=always))
    return path


def hostile_config(workdir: Path, solver: Path, **budget) -> Path:
    """The fuzz experiment with pegasos beside the hostile solver (its budget changed by ``budget``)."""
    data = config_data(solvers=["pegasos", {"name": solver.stem, "path": str(solver)}])
    data["budget"].update(budget)
    return write_config(workdir, data)


def run_dir(results: Path) -> Path:
    (directory,) = (results / "fuzz").iterdir()
    return directory


def statuses(directory: Path) -> list[str]:
    meta = json.loads((directory / "meta.json").read_text())
    assert "finished" in meta and "interrupted" not in meta, meta
    return [r["status"] for r in meta["runs"]]


def run_cli(*args) -> subprocess.CompletedProcess:
    """``sbpbench ARGS`` in a new process, bounded in time (a hang fails the test)."""
    return subprocess.run(command(*args), cwd=ROOT, capture_output=True, text=True, timeout=240,
                          env=environment())


# ----------------------------------------------------------------------------- what a solver raises

RAISES = {
    "sys.exit(0)": ("sys.exit(0)", "failed: SystemExit: 0 (raised by the solver's code)"),
    "raise KeyboardInterrupt": ("raise KeyboardInterrupt", "failed: KeyboardInterrupt (raised by the solver's code)"),
    "raise SystemExit('bye')": ("raise SystemExit('bye')", "failed: SystemExit: bye (raised by the solver's code)"),
}


@pytest.mark.parametrize("what", RAISES)
def test_what_a_step_raises_fails_its_run_only_in_this_process(what, tmp_path):
    step, status = RAISES[what]
    with workspace() as workdir:
        exp = hostile_config(workdir, solver_file(workdir, step))
        code, stderr = invoke("run", str(exp), "--results", str(tmp_path), "--no-plot", "--quiet")
    assert code == 3 and "Traceback" not in stderr, stderr[-800:]
    assert "sbpbench: 1 of 2 runs failed or diverged; see" in stderr
    assert statuses(run_dir(tmp_path)) == ["budget", status]


def test_what_a_step_raises_fails_its_run_only_in_worker_processes(tmp_path):
    """``--jobs 2``: the first run of the solver to step calls ``sys.exit(0)``, the other raises KeyboardInterrupt."""
    first = tmp_path / "first"
    solver = solver_file(tmp_path, f"""
        try:
            os.close(os.open({str(first)!r}, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            raise KeyboardInterrupt
        sys.exit(0)""")
    with workspace() as workdir:
        exp = hostile_config(workdir, solver)
        exp.write_text(exp.read_text().replace("runs: 1", "runs: 2"))
        done = run_cli("run", exp, "--jobs", "2", "--results", tmp_path / "r", "--no-plot")
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr[-800:]
    assert "final checkpoint of each run" in done.stdout  # the summary is printed
    assert "sbpbench: 2 of 4 runs failed or diverged; see" in done.stderr
    assert sorted(statuses(run_dir(tmp_path / "r"))) == ["budget", "budget", RAISES["raise KeyboardInterrupt"][1],
                                                         RAISES["sys.exit(0)"][1]]


def test_sys_exit_at_import_is_one_line_naming_the_file(tmp_path):
    solver = solver_file(tmp_path, at_import="sys.exit(0)")
    with workspace() as workdir:
        line = refused(workdir, "run", str(hostile_config(workdir, solver)))
    assert line.endswith(f"key 'solvers[1].path': {solver}: cannot import the solver file (SystemExit: 0)"), line
    (tmp_path / "other").mkdir()
    with pytest.raises(UserError, match=r"hostile\d+.py: cannot import the solver file \(SystemExit: 3\)"):
        load_file(solver_file(tmp_path / "other", at_import="raise SystemExit(3)"))


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler while the test runs: a test worker (pytest-xdist's) may have
    inherited SIGINT ignored, as a background job of a shell does, where no Ctrl-C arrives."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.usefixtures("python_sigint")
def test_the_users_ctrl_c_still_interrupts_the_run(tmp_path):
    """A SIGINT this process receives while a step runs ends the whole run (exit 130), as before."""
    with workspace() as workdir:
        exp = hostile_config(workdir, solver_file(workdir, "os.kill(os.getpid(), signal.SIGINT); time.sleep(5)"))
        code, stderr = invoke("run", str(exp), "--results", str(tmp_path), "--no-plot", "--quiet")
    assert code == 130, stderr[-800:]
    meta = json.loads((run_dir(tmp_path) / "meta.json").read_text())
    assert meta["interrupted"] is True and [r["status"] for r in meta["runs"]] == ["budget", "interrupted"]


@pytest.mark.usefixtures("python_sigint")
def test_a_keyboard_interrupt_is_the_users_only_after_a_sigint():
    since = guard.sigints()
    assert not guard.users_interrupt(KeyboardInterrupt(), since)
    with guard.sigints_counted(), pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    assert guard.users_interrupt(KeyboardInterrupt(), since) and not guard.users_interrupt(SystemExit(), since)


def test_os_exit_in_a_step_fails_its_run_only_in_a_sequential_run(tmp_path):
    """``os._exit(0)`` in a step would end ``sbpbench run`` with exit 0 and one run of two recorded."""
    solver = solver_file(tmp_path, "os._exit(0)")
    with workspace() as workdir:
        done = run_cli("run", hostile_config(workdir, solver), "--results", tmp_path / "r", "--no-plot", "--quiet")
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr[-800:]
    assert "sbpbench: 1 of 2 runs failed or diverged; see" in done.stderr
    assert statuses(run_dir(tmp_path / "r")) == ["budget", f"failed: SolverFault: solver {solver.stem!r} called "
                                                 "os._exit(0), which would end the whole sbpbench process (end a "
                                                 "run by returning from its step or raising)"]


def test_os_exit_in_a_step_fails_its_run_only_in_worker_processes(tmp_path):
    """``--jobs 2``: a worker's ``os._exit`` would have broken the pool and failed every run not finished."""
    solver = solver_file(tmp_path, "os._exit(0)")
    with workspace() as workdir:
        exp = hostile_config(workdir, solver)
        exp.write_text(exp.read_text().replace("runs: 1", "runs: 2"))
        done = run_cli("run", exp, "--jobs", "2", "--results", tmp_path / "r", "--no-plot", "--quiet")
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr[-800:]
    status = sorted(statuses(run_dir(tmp_path / "r")))
    assert status[:2] == ["budget", "budget"] and all(f"solver {solver.stem!r} called os._exit(0)" in s
                                                      for s in status[2:]), status


def test_os_exit_is_refused_only_in_the_guarded_thread_of_this_process():
    """Elsewhere ``os._exit`` is itself (a worker's watchdog on its parent exits through it); and it is
    put back once the run is over."""
    real = os._exit
    outcome = []
    with guard.exits_refused("solver 'x'"):
        assert os._exit is not real
        thread = threading.Thread(target=lambda: outcome.append(os._exit is not real))
        thread.start()
        thread.join()
        with pytest.raises(guard.SolverFault, match=r"solver 'x' called os._exit\(5\)"):
            os._exit(5)
    assert os._exit is real and outcome == [True]
    assert guard._guarded.who is None  # another thread calling the replaced os._exit would exit


# ----------------------------------------------------------------------------- what a solver writes

#: Steps that write into the data every run shares (as the issue's solvers did).
WRITES = {
    "problem.y": "self.y = self.problem.y\nself.y *= -1.0",
    "problem.test_y": "self.problem.test_y[:] = 1.0",
    "problem.kernel.X": "self.kernel.X.data[:] = 0.0",
    "problem.y replaced": "self.problem.y = -self.problem.y",
}


@pytest.mark.parametrize("what", WRITES)
def test_a_solver_writing_the_problems_data_is_stopped_and_named_and_the_next_run_unharmed(what, tmp_path):
    """The writer runs first; SBP after it measures what it measures without it (it reported 85.5%
    test error after a solver negated ``problem.y``)."""
    with workspace() as workdir:
        solver = solver_file(workdir, WRITES[what])
        data = config_data(solvers=[{"name": solver.stem, "path": str(solver)}, "sbp"])
        code, stderr = invoke("run", str(write_config(workdir, data)), "--results", str(tmp_path / "w"),
                              "--no-plot", "--quiet")
        clean = write_config(workdir, config_data(solvers=["sbp"]), "clean.yaml")
        assert invoke("run", str(clean), "--results", str(tmp_path / "c"), "--no-plot", "--quiet")[0] == 0
    assert code == 3 and "Traceback" not in stderr, stderr[-800:]
    harmed, alone = (json.loads((run_dir(tmp_path / k) / "meta.json").read_text())["runs"] for k in ("w", "c"))
    assert harmed[0]["status"].startswith(f"failed: SolverFault: solver {solver.stem!r} wrote into the problem's "
                                          "data, which is read-only for every solver"), harmed[0]["status"]
    assert "is read-only" in harmed[0]["status"]
    assert harmed[1]["status"] == alone[0]["status"] == "budget"
    assert harmed[1]["test_error"] == pytest.approx(alone[0]["test_error"], abs=1e-12)
    assert harmed[1]["test_error"] < 0.5


def test_the_problems_arrays_are_read_only_views_of_the_arrays_it_was_given():
    """Every array a solver is handed refuses writes; the caller's own arrays keep their flags."""
    problem = make_problem("linear", True)
    arrays = problem.arrays()
    assert {"problem.y", "problem.test_y", "problem.test_X.data", "problem.kernel.X.indices",
            "problem.kernel.sq"} <= set(arrays)
    for array in arrays.values():
        with pytest.raises(ValueError, match="read-only"):
            array[...] = 0
    with pytest.raises(ValueError, match=r"problem.test_y is read-only: the same problem serves every run"):
        problem.test_y = np.ones(problem.test_y.size)
    problem.lam = 0.5  # its parameters are set as before
    given = np.ones(4)
    view = read_only(given)
    assert given.flags.writeable and not view.flags.writeable and np.shares_memory(view, given)
    X, y, _, _ = adult_rows()
    assert X is not adult_rows()[0] and y.flags.writeable  # each case has data of its own


# ----------------------------------------------------------------------------- check-solver on what a solver does

#: Steps that ``check-solver`` must fail, with what its first failing line says.
CHECKED = {
    "writes problem.y": ("self.y = self.problem.y\nself.y *= -1.0", "problem's data left unwritten",
                         "wrote into problem.y (the runner hands the problem's data out read-only"),
    "sys.exit(0)": ("raise SystemExit(0)", "iteration limit honoured", "SystemExit: 0 (raised by the solver's code)"),
    "os._exit(0)": ("os._exit(0)", "iteration limit honoured",
                    "the solver ended the checker's process (exit code 0) before its verdict"),
    "sleeps": ("time.sleep(600)", "iteration limit honoured",
               "still running after 2 s (a step that does not return? check-solver --timeout SECONDS"),
}


@pytest.mark.parametrize("what", CHECKED)
def test_check_solver_fails_a_solver_that_writes_exits_or_sleeps_and_gives_every_verdict(what, tmp_path):
    step, check, said = CHECKED[what]
    solver = solver_file(tmp_path, step)
    done = run_cli("check-solver", solver, "--timeout", "2")
    assert done.returncode == 1 and "Traceback" not in done.stdout, (done.stdout, done.stderr[-800:])
    lines = done.stdout.splitlines()
    assert [line.split(": ")[1] for line in lines] == CHECKS  # every check has its line
    (line,) = [line for line in lines if line.startswith(f"{solver.stem}: {check}: ")]
    assert f": FAILED ({solver.stem}-gaussian: {said}" in line, line


def test_check_solver_ends_the_processes_a_solver_leaves_holding_its_output(tmp_path):
    """A process the solver starts (and leaves running, holding the checker's standard error open) is
    ended with the checks: the checker does not wait on it, nor leave it running."""
    pid_file = tmp_path / "pid"
    solver = solver_file(tmp_path, f"""
        if not getattr(Hostile, "spawned", False):
            Hostile.spawned = True
            import subprocess
            subprocess.Popen([sys.executable, "-c", "import os, sys, time; open(sys.argv[1], 'w').write("
                              "str(os.getpid())); time.sleep(600)", {str(pid_file)!r}])""")
    done = run_cli("check-solver", solver)  # (bounded in time: a hang fails the test)
    assert "Traceback" not in done.stderr and len(done.stdout.splitlines()) == len(CHECKS), done.stderr[-800:]
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text() and _gone(int(pid_file.read_text()))):
        assert time.monotonic() < deadline, "the solver's process is still running" if pid_file.exists() else \
            "the solver's process never started"
        time.sleep(0.1)


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie no one has reaped yet included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rpartition(")")[2].split()[0] == "Z"


# ----------------------------------------------------------------------------- what a solver reports


@pytest.mark.parametrize("column", ["test_error", "solver", "status", "maximizes_objective"])
def test_a_snapshot_column_shadowing_a_measured_one_fails_the_run(column, tmp_path):
    with workspace() as workdir:
        solver = solver_file(workdir, extra=f"{{{column!r}: 0.0, 'mine': 1.0}}")
        code, stderr = invoke("run", str(hostile_config(workdir, solver)), "--results", str(tmp_path), "--no-plot",
                              "--quiet")
    assert code == 3 and "Traceback" not in stderr, stderr[-800:]
    directory = run_dir(tmp_path)
    assert statuses(directory) == ["budget", f"failed: SolverFault: solver {solver.stem!r}: its snapshot's extra "
                                             f"column {column!r} is one that sbpbench measures for every solver "
                                             "(give it another name)"]
    assert solver.stem not in (directory / "curves.csv").read_text()  # no row of its own test error


@pytest.mark.parametrize("extra", ["{'test_error': 0.0, 'mine': 1.0}", "{'mine': 1.0}"])
def test_check_solver_reports_a_shadowing_column(extra, tmp_path):
    name = (solver := solver_file(tmp_path, extra=extra)).stem
    done = run_cli("check-solver", solver)
    (line,) = [line for line in done.stdout.splitlines() if "snapshot columns shadow" in line]
    if "test_error" in extra:
        assert done.returncode == 1 and line == (f"{name}: snapshot columns shadow no measured one: FAILED ({name}-"
                                                 "gaussian: the snapshot's extra columns test_error are measured by "
                                                 "sbpbench itself)"), line
    else:
        assert line == f"{name}: snapshot columns shadow no measured one: ok", line


def test_the_measured_columns_are_those_the_runner_writes(tiny_run):
    from sbpbench.results.store import COLUMNS, read_curves

    assert MEASURED_COLUMNS <= set(read_curves(tiny_run[1], traits=True).columns)
    assert set(COLUMNS) <= MEASURED_COLUMNS


# ----------------------------------------------------------------------------- steps that do not end


@pytest.fixture
def short_grace(monkeypatch):
    """A grace of 0.5 s past the seconds budget, so that the watchdog tests take seconds."""
    monkeypatch.setattr(loop, "WATCHDOG_GRACE_S", 0.5)


@pytest.mark.parametrize("always", [True, False], ids=["in its warm-up", "in its run"])
def test_a_step_that_never_returns_ends_its_run_under_a_seconds_budget(always, short_grace, tmp_path):
    with workspace() as workdir:
        exp = hostile_config(workdir, solver_file(workdir, "time.sleep(600)", always=always), seconds=0.2)
        started = time.monotonic()
        code, stderr = invoke("run", str(exp), "--results", str(tmp_path), "--no-plot", "--quiet")
    assert time.monotonic() - started < 300  # far below the step's 600 s: it was ended
    assert code == 3 and "Traceback" not in stderr, stderr[-800:]
    what = "the warm-up of solver" if always else "a step of solver"
    status = statuses(run_dir(tmp_path))
    assert status[0] == "budget" and status[1].startswith(f"failed: StepTimeout: {what}"), status


def test_a_step_that_never_advances_fails_its_run(tmp_path):
    with workspace() as workdir:
        solver = solver_file(workdir, "return False", always=True)
        code, stderr = invoke("run", str(hostile_config(workdir, solver, seconds=0.2)), "--results", str(tmp_path),
                              "--no-plot", "--quiet")
    assert code == 3 and "Traceback" not in stderr, stderr[-800:]
    assert statuses(run_dir(tmp_path)) == ["budget", f"failed: SolverFault: solver {solver.stem!r}: advance() did no "
                                                     "iteration (each step must do at least one, or finish the solver)"]


def test_the_watchdog_ends_a_python_loop_outside_the_main_thread():
    """Where no signal reaches (a Dask worker's thread), the timeout is raised in the thread itself."""
    outcome = []

    def spin():
        try:
            with guard.watchdog(0.2, "too long"):
                while True:
                    pass
        except guard.StepTimeout as exc:
            outcome.append(str(exc))

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    thread.join(120)
    assert outcome == ["too long"]


def test_the_watchdog_leaves_a_step_that_returns_in_time():
    with guard.watchdog(60, "too long"):
        time.sleep(0.01)
    with guard.watchdog(float("inf"), "never"):
        pass
    assert guard.signal.getitimer(guard.signal.ITIMER_REAL)[0] == 0


# ----------------------------------------------------------------------------- budgets against n


@pytest.mark.parametrize(("budget", "key"), [
    ({"epochs": 1e308}, "key 'budget.epochs': 1e+308 epochs of 150 training examples are inf iterations"),
    ({"epochs": 1e14}, "key 'budget.epochs': 1e+14 epochs of 150 training examples are 1.5e+16 iterations"),
    ({"kernel_evals": 1e300}, "key 'budget.kernel_evals': 1e+300 kernel evaluations are more than 2**53"),
])
def test_a_budget_that_overflows_against_n_is_refused(budget, key):
    with workspace() as workdir:
        data = config_data()
        data["budget"] = budget
        line = refused(workdir, "run", str(write_config(workdir, data)))
    assert f"exp.yaml: {key}" in line, line


def test_a_solver_entrys_budget_that_overflows_names_the_solver():
    with workspace() as workdir:
        data = config_data(solvers=["sbp", {"name": "pegasos", "budget": {"epochs": 1e300}}])
        line = refused(workdir, "run", str(write_config(workdir, data)))
    assert "exp.yaml: solver 'pegasos': key 'budget.epochs': 1e+300 epochs of 150 training examples" in line, line


# ----------------------------------------------------------------------------- Dask schedulers

def serving(answer: bytes | None) -> int:
    """A loopback server that accepts connections and sends ``answer`` (None: never a byte); its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def accept() -> None:
        while True:
            conn, _ = server.accept()
            if answer is not None:
                conn.sendall(answer)

    threading.Thread(target=accept, daemon=True).start()
    return server.getsockname()[1]


@pytest.fixture
def short_dask_timeout():
    """Dask's connect timeout at 2 s, which sbpbench takes for every connection and wait for workers."""
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.distributed")
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        yield


@pytest.mark.parametrize(("address", "said"), [
    ("ucx://head:8786", "protocol 'ucx' is not supported (expected tcp://HOST:PORT or tls://HOST:PORT)"),
    ("http://head:8786", "protocol 'http' is not supported"),
    ("inproc://head/1/1", "protocol 'inproc' is not supported"),
    ("tcp://head", "no port number after the host"),
    ("tcp://head:8786/x", "no port number after the host"),
    ("tcp://head:0", "port 0 is outside 1-65535"),
    ("tcp://head:65536", "port 65536 is outside 1-65535"),
    ("tcp://he ad:8786", "'he ad' is not a host name or IP address"),
    ("tcp://:8786", "'' is not a host name or IP address"),
    ("tcp://::1:8786", "'::1' is not a host name or IP address"),
])
def test_a_scheduler_address_is_checked_before_connecting(address, said, short_dask_timeout):
    with workspace() as workdir:
        started = time.monotonic()
        line = refused(workdir, "run", str(write_config(workdir, config_data())), "--scheduler", address)
    assert time.monotonic() - started < 60
    assert f"sbpbench: error: --scheduler {address!r}: {said}" in line, line


@pytest.mark.parametrize(("answer", "said"), [
    (None, "no Dask scheduler answered within 2 s (wait longer with DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT"),
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", "no Dask scheduler answers there (MemoryError: "),
    (b"\xff" * 64, "no Dask scheduler answers there ("),
], ids=["never answers", "answers HTTP", "answers garbage"])
def test_a_port_that_is_no_dask_scheduler_is_refused_in_time(answer, said, short_dask_timeout, tmp_path):
    port = serving(answer)
    with workspace() as workdir:
        started = time.monotonic()
        line = refused(workdir, "run", str(write_config(workdir, config_data())), "--scheduler",
                       f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - started < 60
    assert f"--scheduler 'tcp://127.0.0.1:{port}': {said}" in line, line


def test_a_scheduler_without_workers_is_refused_in_time(short_dask_timeout):
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=None) as cluster, \
            workspace() as workdir:
        line = refused(workdir, "run", str(write_config(workdir, config_data())), "--scheduler",
                       cluster.scheduler_address)
    assert "no Dask worker joined the scheduler within 2 s (start some: dask worker tcp://127.0.0.1:" in line, line


def test_runs_left_without_workers_fail_in_time(short_dask_timeout, tmp_path):
    """Workers that all leave mid-run: the runs not finished end failed, the files are finished, exit 3."""
    from distributed import LocalCluster

    from sbpbench.execution.executors import DaskExecutor
    from sbpbench.execution.sweep import run_experiments
    from sbpbench.experiment import config

    with LocalCluster(n_workers=1, processes=False, protocol="tcp", dashboard_address=None) as cluster, \
            workspace() as workdir:
        exp = config.load(write_config(workdir, config_data()))
        executor = DaskExecutor(cluster.scheduler_address)
        try:
            cluster.scale(0)
            gone = time.monotonic() + 60
            while executor._workers() and time.monotonic() < gone:
                time.sleep(0.05)
            (directory,) = run_experiments([exp], tmp_path, executor)
        finally:
            executor.close()
    assert [s.split(" (")[0] for s in statuses(directory)] == ["failed: no Dask worker for 2 s: the run was not "
                                                                "started"] * 2


@pytest.mark.parametrize(("method", "code"), [
    ("refuse", "raise RuntimeError('boom')"),
    ("memory_needs", "sys.exit(0)"),
])
def test_a_solver_class_whose_own_checks_raise_is_refused_in_one_line(tmp_path, method, code):
    """A solver's ``refuse`` or ``memory_needs``, run when the config is checked, that raises (or
    exits): one line naming the solver, its file and the method, exit 2, before anything runs."""
    with workspace() as workdir:
        solver = solver_file(workdir)
        signature = "kind, params" if method == "refuse" else "params, n, d"
        solver.write_text(solver.read_text() + textwrap.indent(
            f"\n@classmethod\ndef {method}(cls, {signature}):\n    {code}\n", "    "))
        code_, stderr = invoke("run", str(hostile_config(workdir, solver)), "--results", str(tmp_path),
                               "--no-plot", "--quiet")
    assert code_ == 2, stderr[-800:]
    one_error_line(stderr, f"solver {solver.stem!r} ({solver}): its {method}() raised")
    assert not list(tmp_path.iterdir())
