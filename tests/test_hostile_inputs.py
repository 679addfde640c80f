"""Inputs that are not what they seem, through the command line as a user gives them.

The kinds of input ``tests/test_fuzz.py`` does not generate: files that are not regular files
(devices, named pipes, folders), configs too large to be configs, sizes that cannot fit in
memory, parameters the data cannot take, training and test files labelled differently, YAML
reader errors, control characters in labels and file names, and runs that fail mid-way, whose
files every reading command must read back. Each must end in one line and exit 2 (or, for a
run that fails, exit 3 with the failure in ``meta.json``), never a traceback, a hang or a wrong
number, and leave nothing half-written.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from sbpbench import memory
from sbpbench.errors import UserError, amount
from sbpbench.execution import guard
from sbpbench.experiment import config
from sbpbench.files import read_regular
from sbpbench.kernels import Kernel, KernelSpec, memory_needs
from sbpbench.results.store import read_curves, read_meta
from sbpbench.solvers import SOLVERS
from sbpbench.solvers.sampling import DRAW_CHUNK
from tests.cli_runner import invoke, one_error_line
from tests.test_fuzz import BASE, TEST_LINES, TRAIN_LINES, dump, fuzz, workspace

GIB = 2**30


@contextmanager
def deadline(seconds: int = 20):
    """Fail the test instead of hanging when the code under test waits (a named pipe)."""
    def expired(signum, frame):
        raise TimeoutError(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def config_data(**changes) -> dict:
    """:data:`tests.test_fuzz.BASE` (real Adult rows) with top-level keys replaced."""
    data = yaml.safe_load(yaml.safe_dump(BASE))
    data.update(changes)
    return data


def refused(workdir: Path, *args: str) -> str:
    """Run ``sbpbench ARGS`` expecting exit 2 with one error line; return that line.

    ``run`` gets ``--results workdir/results``, which must then hold no file.
    """
    results = workdir / "results"
    if args[0] == "run":
        args = (*args, "--results", str(results), "--no-plot", "--quiet")
    with deadline():
        code, stderr = invoke(*args)
    assert code == 2, (code, stderr[-800:])
    assert not [p for p in results.rglob("*") if p.is_file()], "a refused run left files behind"
    return one_error_line(stderr)


def write_config(workdir: Path, data: dict, name: str = "exp.yaml") -> Path:
    path = workdir / name
    path.write_bytes(dump(data))
    return path


# ----------------------------------------------------------------------------- files that are not regular files


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


NOT_FILES = {
    "a named pipe without a writer": (lambda d: fifo(d / "pipe"), "a named pipe (FIFO)"),
    "a folder": (lambda d: (d / "folder").mkdir() or d / "folder", "a folder"),
    "/dev/zero": (lambda d: Path("/dev/zero"), "a character device"),
    "/dev/urandom": (lambda d: Path("/dev/urandom"), "a character device"),
}


@contextmanager
def not_a_file(kind: str):
    """``(workspace, path, what it is)`` for one of :data:`NOT_FILES` (skipped where the system has no such path)."""
    make, what = NOT_FILES[kind]
    with workspace() as workdir:
        path = make(workdir)
        if not path.exists():
            pytest.skip(f"{path} does not exist here")
        yield workdir, path, what


@pytest.mark.parametrize("kind", NOT_FILES)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_config_that_is_no_regular_file_is_refused_at_once(kind, command):
    """Before: /dev/zero was read until a MemoryError (20 s), a pipe without writer hung forever."""
    with not_a_file(kind) as (workdir, path, what):
        line = refused(workdir, command, str(path))
    if kind != "a folder":  # Click refuses a folder first, in its own words
        assert f"{path}: cannot read config: it is {what}, not a regular file" in line


@pytest.mark.parametrize("kind", NOT_FILES)
@pytest.mark.parametrize("key", ["path", "test_path"])
def test_a_data_file_that_is_no_regular_file_is_refused(kind, key):
    with not_a_file(kind) as (workdir, path, what):
        data = config_data()
        data["dataset"][key] = str(path)
        exp = write_config(workdir, data)
        for command in ("validate", "run"):
            line = refused(workdir, command, str(exp))
            assert f"key 'dataset.{key}': {path} is {what}, not a regular file" in line


def test_read_regular_checks_the_open_file_too(tmp_path):
    """The type is checked with stat before opening and again on the open file; a pipe never blocks."""
    pipe = fifo(tmp_path / "pipe")
    with deadline(), pytest.raises(UserError, match="pipe: cannot read LIBSVM file: it is a named pipe"):
        read_regular(pipe, "LIBSVM file")
    with pytest.raises(UserError, match="nope: cannot read config: No such file"):
        read_regular(tmp_path / "nope", "config")
    (tmp_path / "ok").write_bytes(b"abc")
    assert read_regular(tmp_path / "ok", "config", limit=3) == b"abc"
    with pytest.raises(UserError, match="holds more than 2 bytes, the most a config may hold"):
        read_regular(tmp_path / "ok", "config", limit=2)


def test_a_config_larger_than_the_limit_is_refused(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_bytes(dump(config_data()) + b"#" * config.MAX_CONFIG_BYTES)
    line = refused(tmp_path, "validate", str(path))
    assert f"huge.yaml: cannot read config: it holds more than {amount(config.MAX_CONFIG_BYTES)}" in line
    assert amount(config.MAX_CONFIG_BYTES) == "4 MiB"  # as docs/commands.md says


def test_a_meta_json_that_is_a_pipe_is_refused_by_the_readers(tmp_path):
    run = tmp_path / "exp" / "20260101-000000"
    run.mkdir(parents=True)
    fifo(run / "meta.json")
    (run / "curves.csv").write_text("x\n")
    for args in (["page", str(run)], ["plot", str(run)], ["check", str(run), "--reference", str(tmp_path / "ref")],
                 ["run", str(write_config(tmp_path, config_data(name="exp"))), "--resume-from", str(run)]):
        refused(tmp_path, *args)  # at once: nothing waits for a writer
    with deadline(), pytest.raises(UserError, match="meta.json: cannot read the run's metadata: it is a named pipe"):
        read_meta(run)


# ----------------------------------------------------------------------------- sizes that cannot fit


@pytest.fixture
def small_machine(monkeypatch):
    """A machine of 4 GiB (1 GiB available), whatever this one has: the refusals do not depend on it."""
    monkeypatch.setattr(memory, "machine_memory", lambda: (4 * GIB, GIB))


def spoiled_train(index: int) -> bytes:
    lines = list(TRAIN_LINES)
    lines[3] = lines[3] + f" {index}:1".encode()
    return b"\n".join(lines) + b"\n"


#: A solver that holds vectors of d features (a kernel's scratch vectors are as long as the
#: features the rows use, whatever d: tests/test_system_failures.py).
FEATURE_VECTORS = {"kernel": {"name": "linear"}, "solvers": ["dcd"]}


@pytest.mark.parametrize("command", ["validate", "run"])
def test_an_index_near_2_31_is_refused_before_allocating(small_machine, command):
    """Before: numpy's "Unable to allocate 16.0 GiB" traceback."""
    data = config_data(**FEATURE_VECTORS)
    del data["dataset"]["n_features"]
    with workspace(train=spoiled_train(2**31 - 10)) as workdir:
        line = refused(workdir, command, str(write_config(workdir, data)))
    assert "exp.yaml: 150 training examples of 2147483638 features: needs about" in line
    assert "dcd's vectors 64 GiB" in line and "this machine has 4 GiB, 1 GiB available now" in line


@pytest.mark.parametrize("n_features", [10**9, 2**31 - 1])
def test_a_huge_n_features_is_refused_before_allocating(small_machine, n_features):
    data = config_data(**FEATURE_VECTORS)
    data["dataset"]["n_features"] = n_features
    with workspace() as workdir:
        line = refused(workdir, "run", str(write_config(workdir, data)))
    assert f"{n_features} features: needs about" in line


@pytest.mark.parametrize("solver", ["pegasos", "norma", "sgd"])
def test_a_mini_batch_larger_than_the_data_is_refused_at_validation(solver):
    """Before: a MemoryError for 30.5 GiB at run time, and a curves.csv sbpbench could not read."""
    kernel = {"name": "linear"} if solver != "pegasos" else BASE["kernel"]
    data = config_data(solvers=[{"name": solver, "mini_batch": 1000000}], kernel=kernel)
    with workspace() as workdir:
        exp = write_config(workdir, data)
        for command in ("validate", "run"):
            line = refused(workdir, command, str(exp))
            assert (f"exp.yaml: solver '{solver}[mini_batch=1000000]': key 'mini_batch': 1000000 is more than "
                    "the 150 training examples") in line
        data["solvers"] = [{"name": solver, "mini_batch": 150}]  # all of them: allowed
        code, stderr = invoke("validate", str(write_config(workdir, data)))
        assert code == 0, stderr


@fuzz(25)
@given(st.integers(min_value=2**29, max_value=2**31 - 2), st.sampled_from(["dcd", "sgd-s", "sgd-m", "svmsgd"]))
def test_fuzz_feature_counts_beyond_the_machine(n_features, solver):
    """Every feature count whose vectors cannot fit in 4 GiB ends in one line, whatever the solver
    holding them."""
    data = config_data(**{**FEATURE_VECTORS, "solvers": [solver]})
    data["dataset"]["n_features"] = n_features
    saved = memory.machine_memory
    memory.machine_memory = lambda: (4 * GIB, GIB)
    try:
        with workspace() as workdir:
            line = refused(workdir, "validate", str(write_config(workdir, data)))
    finally:
        memory.machine_memory = saved
    assert "needs about" in line and "this machine has 4 GiB" in line


def test_require_names_the_parts_and_the_machine(monkeypatch):
    monkeypatch.setattr(memory, "machine_memory", lambda: (8 * GIB, None))
    memory.require({"a": 4 * GIB, "b": 4 * GIB}, "x")  # exactly the machine: allowed
    with pytest.raises(memory.TooLarge) as caught:
        memory.require({"small": 1.0, "rows": 6 * GIB, "cache": 3 * GIB}, "x.yaml: 10 training examples")
    message = str(caught.value)  # what asks, the total and its large parts, the machine's memory
    assert message.startswith("x.yaml: 10 training examples: ") and "small" not in message
    assert [part in message for part in ("9 GiB", "rows 6 GiB", "cache 3 GiB", "8 GiB")] == [True] * 4
    assert isinstance(caught.value, MemoryError) and isinstance(caught.value, UserError)
    monkeypatch.setattr(memory, "machine_memory", lambda: (None, None))  # a system that does not say
    memory.require({"rows": 1e30}, "x")


def test_machine_memory_is_read_from_the_system():
    total, available = memory.machine_memory()
    if not hasattr(os, "sysconf"):
        pytest.skip("no sysconf here")
    assert total is not None and GIB // 4 < total < 2**50
    assert available is None or 0 < available <= total


@pytest.mark.parametrize("data", ["binary", "small integers", "sparse small integers", "sparse floats",
                                  "dense floats"])
def test_the_kernel_estimate_covers_what_the_kernel_allocates(data):
    """The estimate is of the storage the kernel really builds (never below it, at most 3 times it)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    if data == "binary":
        X = sp.random(400, 2000, density=0.02, format="csr", random_state=1)
        X.data[:] = 1.0
    elif data == "small integers":
        X = sp.csr_matrix(rng.integers(0, 256, size=(400, 300)) * (rng.random((400, 300)) < 0.3) / 255.0)
    elif data == "sparse small integers":  # nonzero in the first 60 of 300 features: the grouped copy with VNNI
        X = sp.csr_matrix(rng.integers(1, 256, size=(400, 300)) * (np.arange(300) < 60) / 255.0)
    elif data == "sparse floats":
        X = sp.random(400, 5000, density=0.01, format="csr", random_state=1)
    else:
        X = rng.standard_normal((400, 50))
    spec = KernelSpec("gaussian", 1.0, cache_mb=0.0)
    kernel = Kernel(X, spec)
    estimate = memory_needs(X, X[:10], spec)
    built = kernel.store.nbytes  # its rows in every form, and the scratch vector
    rows = estimate["training rows"] + estimate["feature scratch vector"]
    assert built <= rows <= 3 * built + 8 * 5000, (kernel.storage, built, rows)
    assert memory_needs(X, X[:10], KernelSpec(cache_mb=1.0))["kernel row cache"] == 2**20
    assert memory_needs(X, X[:10], KernelSpec(cache_mb=1e9))["kernel row cache"] == 8 * 400 * 400  # n rows at most


def test_solver_estimates_name_mini_batches_and_random_features():
    pegasos = SOLVERS["pegasos"]
    needs = pegasos.memory_needs(pegasos.Params(mini_batch=1000), n=5000, d=10)
    assert needs["pegasos's mini_batch=1000"] == 8 * DRAW_CHUNK * 1000
    fourier = SOLVERS["fourier"]
    small, large = (fourier.memory_needs(fourier.Params(max_pairs=k), 1000, 10)["fourier's max_pairs=" + str(k)]
                    for k in (1024, 2047))
    assert small == large  # the last doubling below 2047 pairs is 1024
    assert SOLVERS["dcd"].memory_needs(SOLVERS["dcd"].Params(), 10, 10**9)["dcd's vectors"] >= 8 * 10**9


# ----------------------------------------------------------------------------- labels that disagree


def relabelled(lines: list[bytes], labels: list[bytes]) -> bytes:
    """``lines`` with their labels replaced by ``labels`` in turn (+1 by -1 ... as the label's class)."""
    out = []
    for i, line in enumerate(lines):
        label, _, rest = line.partition(b" ")
        out.append((labels[0] if label.startswith(b"+") else labels[1 % len(labels)] if len(labels) > 1 else labels[0])
                   + (b" " + rest if rest else b""))
        if len(labels) > 2 and i % 7 == 0:  # a third class now and then
            out[-1] = labels[2] + b" " + rest
    return b"\n".join(out) + b"\n"


def test_training_and_test_labelled_differently_are_refused():
    """Before: {1, 2} against {-1, +1} ran and reported 83% test error, exit 0."""
    with workspace(train=relabelled(TRAIN_LINES, [b"2", b"1"])) as workdir:
        exp = write_config(workdir, config_data(solvers=["pegasos"]))
        for command in ("validate", "run"):
            line = refused(workdir, command, str(exp))
            assert "test.svm: labels {-1, 1} are not those of the training file" in line
            assert "train.svm {1, 2} ({-1} never seen in training)" in line


def test_a_test_label_never_seen_in_training_is_refused():
    """Before: silently mapped to the negative class."""
    with workspace(test=relabelled(TEST_LINES, [b"+1", b"-1", b"3"])) as workdir:
        line = refused(workdir, "validate", str(write_config(workdir, config_data(solvers=["pegasos"]))))
    assert "test.svm: labels {-1, 1, 3} are not those of the training file" in line and "({3} never seen" in line


def test_one_class_against_the_rest_takes_any_other_test_label():
    """With dataset.positive (multi-class files), a test label of another class is "the rest"."""
    with workspace(train=relabelled(TRAIN_LINES, [b"1", b"2", b"3"]),
                   test=relabelled(TEST_LINES, [b"1", b"2", b"4"])) as workdir:
        data = config_data(solvers=["pegasos"])
        data["dataset"]["positive"] = 1
        code, stderr = invoke("validate", str(write_config(workdir, data)))
        assert code == 0, stderr
        data["dataset"]["positive"] = 5
        line = refused(workdir, "validate", str(write_config(workdir, data)))
        assert "train.svm: dataset.positive 5 is not one of its labels {1, 2, 3}" in line


LABELS = [b"-1", b"+1", b"1", b"0", b"2", b"3", b"-2"]
label_pairs = st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)).filter(lambda p: float(p[0]) != float(p[1]))


@fuzz(30)
@given(label_pairs, st.lists(st.sampled_from(LABELS), min_size=1, max_size=3))
def test_fuzz_label_sets(train_labels, test_labels):
    """Exit 0 exactly when every test label is a training label; the test error is then the true one."""
    train = relabelled(TRAIN_LINES, list(train_labels))
    test = relabelled(TEST_LINES, test_labels)
    with workspace(train=train, test=test) as workdir:
        code, stderr = invoke("validate", str(write_config(workdir, config_data(solvers=["pegasos"]))))
    seen = {float(v) for v in train_labels}
    if {float(v) for v in test_labels} <= seen:
        assert code == 0, stderr
    else:
        assert code == 2 and "never seen in training" in stderr, stderr
        one_error_line(stderr)


# ----------------------------------------------------------------------------- YAML reader errors, control characters


@pytest.mark.parametrize("document,where", [
    (b"name: a\x00b\ndataset: adult\nsolvers: [sbp]\n", "exp.yaml:1: invalid YAML: character U+0000 in column 8"),
    (b"dataset: adult\nsolvers: [sbp]\ndescription: \x1b[31mred\n",
     "exp.yaml:3: invalid YAML: character U+001B in column 14"),
    (b"dataset: adult\nsolvers: [sbp]\nseed: 2020-99-99\n", "exp.yaml:3: cannot read '2020-99-99' as timestamp"),
    (b"dataset: adult\nsolvers: [sbp]\nseed: !!float x\n", "exp.yaml:3: cannot read 'x' as float"),
    (b"dataset: adult\nsolvers: [sbp]\nseed: !!bool x\n", "exp.yaml:3: cannot read 'x' as bool"),
    (b"dataset: adult\nsolvers: [sbp]\nseed: !!int x\n", "exp.yaml:3: cannot read 'x' as int"),
])
def test_yaml_reader_errors_name_file_and_place(tmp_path, document, where):
    """Before: PyYAML's ReaderError (or Python's ValueError) traceback."""
    (tmp_path / "exp.yaml").write_bytes(document)
    assert where in refused(tmp_path, "validate", str(tmp_path / "exp.yaml"))


@pytest.mark.parametrize("text", ["two\nlines", "cr\rhere", "\x1b[2Jcleared", "nel\x85", "del\x7f", "sep\u2028"])
def test_control_characters_in_labels_are_refused(text):
    """Before: a label with a newline broke the progress line across lines."""
    data = config_data(solvers=[{"name": "sbp", "label": text}])
    with workspace() as workdir:
        (workdir / "exp.yaml").write_text(json.dumps(data))  # JSON is YAML, every character escaped
        line = refused(workdir, "validate", str(workdir / "exp.yaml"))
    assert "key 'solvers[0].label':" in line and "holds the control character U+" in line
    assert "\n" not in line and "\x1b" not in line and "\r" not in line


@pytest.mark.parametrize("key", ["path", "test_path"])
def test_control_characters_in_data_file_names_are_refused(key):
    with workspace() as workdir:
        name = "bad\x1b[1mname.svm"
        shutil.copy(workdir / "train.svm", workdir / name)
        data = config_data()
        data["dataset"][key] = name
        line = refused(workdir, "validate", str(write_config(workdir, data)))
    assert f"key 'dataset.{key}':" in line and "U+001B" in line and "\x1b" not in line


# ----------------------------------------------------------------------------- runs that fail mid-way


def every_watched_step_overruns(monkeypatch) -> None:
    """Make every step a time limit watches overrun it (:class:`~sbpbench.execution.guard.StepTimeout`
    as it returns), as on a machine too loaded for any limit, so that the statuses a test expects
    cannot depend on the machine's load. Only a seconds budget arms a limit (the warm-up's and each
    step's, ``sbpbench.execution.loop.step_limit``), so the failed runs below have none: under the
    2 s of :data:`tests.test_fuzz.BASE`, a warm-up slowed past its 12 s by a loaded machine (or by
    numba compiling into an empty cache) failed an SBP run too ("3 of 4 runs failed", not 2)."""
    @contextmanager
    def overrun(seconds: float, what: str):
        yield
        if seconds < float("inf"):
            raise guard.StepTimeout(what)

    monkeypatch.setattr(guard, "watchdog", overrun)


def failed_run_config(workdir: Path, **changes) -> Path:
    """The config of the failed runs below: :func:`config_data` with ``changes``, on a budget of one
    epoch and no seconds (see :func:`every_watched_step_overruns`)."""
    return write_config(workdir, config_data(budget={"epochs": 1}, **changes))


def fail_pegasos(monkeypatch, after: int) -> None:
    """Make kernel Pegasos raise once a run has done ``after`` iterations (its warm-up does 4)."""
    cls = SOLVERS["pegasos"]
    step = cls._step

    def failing(self, iterations, kernel_evals):
        if self.iteration >= after and self.n > 40:  # the warm-up problem has at most 32 examples
            raise RuntimeError("solver broke\nwith a second line")
        return step(self, iterations, kernel_evals)

    monkeypatch.setattr(cls, "_step", failing)


@pytest.fixture(scope="module", params=["mid-way", "at once"])
def failed_run_once(request, tmp_path_factory):
    """A results folder holding a run (of a paper experiment's name) where pegasos failed, mid-way
    or at its first iteration, and SBP finished: what ``sbpbench run`` wrote, with exit 3; made once
    per case for the tests of this file (with its config)."""
    tmp = tmp_path_factory.mktemp("failed")
    workdir = tmp / "work"  # kept: a config of the same data gives the same resolved configuration
    workdir.mkdir()
    (workdir / "train.svm").write_bytes(b"\n".join(TRAIN_LINES) + b"\n")
    (workdir / "test.svm").write_bytes(b"\n".join(TEST_LINES) + b"\n")
    exp = failed_run_config(workdir, name="sbp-figure2-adult", runs=2)
    results = tmp / "results"
    with pytest.MonkeyPatch.context() as monkeypatch:
        fail_pegasos(monkeypatch, after=60 if request.param == "mid-way" else 0)
        every_watched_step_overruns(monkeypatch)
        code, stderr = invoke("run", str(exp), "--results", str(results), "--quiet")
    assert code == 3, stderr[-800:]
    assert "Traceback" not in stderr and "sbpbench: 2 of 4 runs failed or diverged; see" in stderr
    return request.param, results, exp


@pytest.fixture
def failed_run(failed_run_once, tmp_path):
    """A copy of :func:`failed_run_once`'s results under this test's ``tmp_path``, for the test to
    change: the case, the results folder, the run folder and the config."""
    when, results, exp = failed_run_once
    shutil.copytree(results, tmp_path / "results")
    (run_dir,) = (tmp_path / "results" / "sbp-figure2-adult").iterdir()
    return when, tmp_path / "results", run_dir, exp


def test_a_failed_run_writes_files_sbpbench_reads_back(failed_run):
    when, _, run_dir, _ = failed_run
    meta = read_meta(run_dir)
    statuses = [(r["solver"], r["status"]) for r in meta["runs"]]
    assert [s for s, _ in statuses] == ["sbp", "sbp", "pegasos", "pegasos"]
    assert all(status == "budget" for s, status in statuses if s == "sbp")
    assert all(status == "failed: RuntimeError: solver broke\nwith a second line" for s, status in statuses
               if s == "pegasos")
    curves = read_curves(run_dir)  # typed: every non-text column numeric
    raw = pd.read_csv(run_dir / "curves.csv")
    for column in ("seed", "run", "checkpoint", "iteration", "kernel_evals", "test_error"):
        assert pd.api.types.is_numeric_dtype(curves[column]) and pd.api.types.is_numeric_dtype(raw[column])
    failed_rows = curves[curves["solver"] == "pegasos"]
    assert (len(failed_rows) > 0) == (when == "mid-way")
    assert set(failed_rows["status"]) <= {"failed: RuntimeError: solver broke\nwith a second line"}
    assert {"index.html", "figure2.png", "curves.csv", "meta.json"} <= {p.name for p in run_dir.iterdir()}
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".")], "a temporary file was left"


def test_a_run_where_every_run_failed_is_read_back(monkeypatch, tmp_path):
    """Only a header in curves.csv: before, "column 'seed' holds text" refused sbpbench's own output."""
    fail_pegasos(monkeypatch, after=0)
    every_watched_step_overruns(monkeypatch)
    with workspace() as workdir:
        exp = failed_run_config(workdir, solvers=["pegasos"])
        code, stderr = invoke("run", str(exp), "--results", str(tmp_path / "r"), "--quiet")
        assert code == 3, stderr[-800:]
        (run_dir,) = (tmp_path / "r" / "fuzz").iterdir()
        frame = read_curves(run_dir / "curves.csv")
        assert frame.empty and pd.api.types.is_numeric_dtype(frame["seed"])
        code, stderr = invoke("page", str(run_dir))
        assert code == 0, stderr
        code, stderr = invoke("plot", str(run_dir))
        assert code == 2 and "no curves.csv with checkpoints found" in stderr
        monkeypatch.undo()  # pegasos works again
        every_watched_step_overruns(monkeypatch)
        code, stderr = invoke("run", str(exp), "--results", str(tmp_path / "r"), "--quiet", "--no-plot",
                              "--resume")
        assert code == 0, stderr[-800:]
        assert [r["status"] for r in read_meta(run_dir)["runs"]] == ["budget"]


def test_every_reader_reads_a_failed_run(failed_run, tmp_path, monkeypatch):
    """plot, page, check (both ways), figures, report and --resume on the output of a failed run."""
    when, results, run_dir, exp = failed_run
    every_watched_step_overruns(monkeypatch)
    for args in (["plot", str(run_dir)], ["plot", str(results), "--x", "seconds", "--y", "objective"],
                 ["page", str(results)], ["page", str(run_dir), "--out", str(tmp_path / "pages")],
                 ["figures", "--results", str(results), "--out", str(tmp_path / "figures")],
                 ["report", "--results", str(results), "--out", str(tmp_path / "R.md")]):
        code, stderr = invoke(*args)
        assert code == 0 and "Traceback" not in stderr, (args, stderr[-800:])
    page = (run_dir / "index.html").read_text()
    assert "failed: RuntimeError: solver broke" in page
    report = (tmp_path / "R.md").read_text()
    assert "sbp-figure2-adult" in report

    reference = tmp_path / "reference"
    code, stderr = invoke("check", str(run_dir), "--reference", str(reference), "--update")
    assert code == 0, stderr
    code, stderr = invoke("check", str(run_dir), "--reference", str(reference))
    assert code == 0, stderr  # the same curves: nothing worse
    good = tmp_path / "good"
    code, stderr = invoke("run", str(exp), "--results", str(good), "--quiet", "--no-plot")  # without the failure
    assert code == 0, stderr[-800:]
    (good_run,) = (good / "sbp-figure2-adult").iterdir()
    code, stderr = invoke("check", str(run_dir), "--reference", str(good_run))
    assert code == 1 and "Traceback" not in stderr, stderr  # pegasos' runs are missing or short: a regression, said

    # --resume redoes the failed runs only, now that the solver works
    code, stderr = invoke("run", str(exp), "--results", str(results), "--quiet", "--no-plot", "--resume")
    assert code == 0, stderr[-800:]
    meta = read_meta(run_dir)
    assert [r["status"] for r in meta["runs"]] == ["budget"] * 4
    assert meta["resumes"][-1]["kept"] == 2 and meta["resumes"][-1]["redone"] == 2
    assert json.loads((run_dir / "meta.json").read_text()) == meta


def test_nothing_half_written_after_a_refusal(small_machine, tmp_path):
    """A refused experiment among several leaves no run folder of any of them."""
    with workspace() as workdir:
        good = write_config(workdir, config_data(name="good"), "good.yaml")
        data = config_data(name="bad", **FEATURE_VECTORS)
        data["dataset"]["n_features"] = 10**9
        bad = write_config(workdir, data, "bad.yaml")
        refused(workdir, "run", str(good), str(bad))
        assert not (workdir / "results").exists() or not any((workdir / "results").iterdir())


def test_a_curves_csv_that_is_a_folder_is_refused(tmp_path):
    run = tmp_path / "exp" / "20260101-000000"
    (run / "curves.csv").mkdir(parents=True)
    assert stat.S_ISDIR((run / "curves.csv").stat().st_mode)
    refused(tmp_path, "plot", str(run))
    with pytest.raises(UserError, match=r"curves.csv: not a sbpbench curves.csv \(it is a folder, not a regular file"):
        read_curves(run)
