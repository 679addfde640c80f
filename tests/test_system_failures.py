"""What the system does to a command, through the command line as cron, a shell or a pipe gives it
(issue #46): thread counts in the environment that numba or OpenMP cannot take, a console that is
closed, full or read by a program that went away, limits of the process (open files, file size,
address space), symbolic links that loop or point nowhere, compressed results cut short, paths too
long for an error line, and data whose inner products overflow. Each ends in one line
``sbpbench: error: ...`` naming what to change and exit 2, or, for the console, in a run whose
files are all written.
"""

from __future__ import annotations

import errno
import gzip
import os
import re
import resource
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sbpbench import memory, threads
from sbpbench.cli import error_line
from sbpbench.errors import cut_middle, os_error_message
from sbpbench.estimators import ESTIMATORS
from sbpbench.kernels import KernelSpec, storage
from sbpbench.kernels.storage import Float64CSR
from tests.cli_runner import command, environment, one_error_line, sbpbench
from tests.experiments import adult_config, write_config

#: The files a run folder holds once ``sbpbench run`` finished (with its figure and page).
RUN_FILES = ("curves.csv", "meta.json", "figure2.png", "figure2.svg", "index.html")


def tiny_config(folder: Path, **changes) -> Path:
    """The smallest run: Pegasos once for an epoch on 100 rows of the bundled Adult data."""
    return write_config(folder / "tiny.yaml", adult_config(n_train=100, n_test=100, solvers=["pegasos"], runs=1,
                                                           **changes))


def shell(line: str, **limits: int) -> subprocess.CompletedProcess:
    """Run ``line`` in bash, ``$SBPBENCH`` standing for this checkout's command line, with the
    soft limits ``limits`` (``RLIMIT_NOFILE=12``...) set in the new process."""
    def limited() -> None:
        for name, soft in limits.items():
            resource.setrlimit(getattr(resource, name), (soft, resource.getrlimit(getattr(resource, name))[1]))

    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, preexec_fn=limited,
                          env=environment(SBPBENCH=" ".join(command())))


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """``sbpbench run`` with its standard error closed (``2>&-``, as cron and daemons start
    commands) and its output read by ``head -1``, which goes away after one line; its run folder."""
    tmp = tmp_path_factory.mktemp("console")
    done = shell(f'$SBPBENCH run {tiny_config(tmp)} --results {tmp / "results"} 2>&- | head -1; '
                 'exit "${PIPESTATUS[0]}"')
    return done, next((tmp / "results" / "tiny").iterdir())


def test_a_closed_or_gone_console_stops_nothing(run_folder):
    done, folder = run_folder
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("\n") == 1 and not done.stderr  # head's one line; stderr was closed
    assert all((folder / name).is_file() for name in RUN_FILES), sorted(p.name for p in folder.iterdir())


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_full_standard_output_is_named():
    done = shell("$SBPBENCH solvers > /dev/full")
    assert done.returncode == 2
    one_error_line(done.stderr, "standard output: cannot write (No space left on device)")


def test_too_many_open_files(tmp_path):
    done = shell(f"$SBPBENCH run {tiny_config(tmp_path)} --results {tmp_path / 'results'} -q --no-plot --jobs 2",
                 RLIMIT_NOFILE=12)
    assert done.returncode == 2, done.stderr[-2000:]
    one_error_line(done.stderr, "(Too many open files); raise the limit on open files (ulimit -n, now 12 files)")


def test_file_size_limit(run_folder, tmp_path):
    done = shell(f"$SBPBENCH plot {run_folder[1]} --out {tmp_path}", RLIMIT_FSIZE=20 * 1024)
    assert done.returncode == 2, done.stderr[-2000:]
    one_error_line(done.stderr, f"{tmp_path / 'figure2.png'}: cannot write (File too large); raise the limit on "
                                "the size of files (ulimit -f, now 20 KiB)")


@pytest.mark.parametrize(("name", "value"), [("NUMBA_NUM_THREADS", "0"), ("NUMBA_NUM_THREADS", "four"),
                                             ("NUMBA_NUM_THREADS", ""), ("OMP_NUM_THREADS", "0"),
                                             ("OMP_NUM_THREADS", "4,"), ("OMP_NUM_THREADS", "x")])
def test_thread_counts_numba_or_openmp_cannot_take(monkeypatch, capsys, tmp_path, name, value):
    monkeypatch.setenv(name, value)
    assert sbpbench(monkeypatch, "validate", tiny_config(tmp_path)) == 2
    one_error_line(capsys.readouterr().err, f"environment variable {name}={value!r}: expected a whole number")


@pytest.mark.parametrize("environ", [{}, {"NUMBA_NUM_THREADS": "2"}, {"OMP_NUM_THREADS": " 4,2"},
                                     {"OMP_NUM_THREADS": "+3", "NUMBA_NUM_THREADS": "16"}])
def test_thread_counts_they_take(environ):
    threads.check_environment(environ)


def test_compressed_curves_cut_short_are_damaged(monkeypatch, capsys, run_folder, tmp_path):
    """Not "interrupted" (exit 130): Click takes the EOFError of gzip for Ctrl-D."""
    copy = tmp_path / "paper" / "tiny"
    copy.mkdir(parents=True)
    shutil.copy(run_folder[1] / "meta.json", copy)
    whole = gzip.compress((run_folder[1] / "curves.csv").read_bytes())
    (copy / "curves.csv.gz").write_bytes(whole[: len(whole) // 2])
    for args in (("plot", copy, "--out", tmp_path / "out"), ("report", "--results", copy.parent,
                                                              "--out", tmp_path / "R.md")):
        assert sbpbench(monkeypatch, *args) == 2
        one_error_line(capsys.readouterr().err, f"{copy / 'curves.csv.gz'}: damaged: its compressed data cannot "
                                                "be read whole (Compressed file ended before")


def test_symbolic_links_that_loop_or_point_nowhere(monkeypatch, capsys, tmp_path):
    loop, other, dangling = tmp_path / "loop", tmp_path / "other", tmp_path / "dangling"
    loop.symlink_to(other)
    other.symlink_to(loop)
    dangling.symlink_to(tmp_path / "gone")
    config = tiny_config(tmp_path)
    monkeypatch.setenv("SBPBENCH_DATA", str(loop))
    for args in (("datasets", "list"), ("datasets", "info", "adult")):
        assert sbpbench(monkeypatch, *args) == 2
        one_error_line(capsys.readouterr().err, f"{loop}: a loop of symbolic links; the dataset cache "
                                                "($SBPBENCH_DATA) must be a folder or a link to one")
    monkeypatch.delenv("SBPBENCH_DATA")
    assert sbpbench(monkeypatch, "run", config, "--results", loop) == 2
    one_error_line(capsys.readouterr().err, f"--results {loop}: cannot create or write this folder (a loop of "
                                            "symbolic links)")
    assert sbpbench(monkeypatch, "run", config, "--results", dangling) == 2
    one_error_line(capsys.readouterr().err, f"--results {dangling}: cannot create or write this folder (a symbolic "
                                            f"link to {tmp_path / 'gone'}, which does not exist)")


def test_a_long_path_keeps_the_reason_in_view(monkeypatch, capsys, tmp_path):
    deep = tmp_path.joinpath(*["d" * 200] * 3, "x" * 300)
    assert sbpbench(monkeypatch, "run", tiny_config(tmp_path), "--results", deep) == 2
    line = one_error_line(capsys.readouterr().err, f"sbpbench: error: --results {tmp_path}", "...")
    assert line.endswith("(File name too long)") and len(line) <= 500, line


def test_error_lines_are_cut_in_the_middle():
    assert cut_middle("abcdefghij", 10) == "abcdefghij"
    assert cut_middle("abcdefghijk", 10) == "abcd...ijk"
    line = error_line("/" + "p" * 2000 + ": cannot write (Read-only file system)")
    assert len(line) == 500 and line.startswith("sbpbench: error: /ppp") and line.endswith("(Read-only file system)")


def test_errors_of_the_system_say_what_to_change(monkeypatch):
    monkeypatch.setattr("sbpbench.errors.soft_limit", lambda name: {"RLIMIT_NOFILE": 20, "RLIMIT_FSIZE": 2048}[name])
    emfile = OSError(errno.EMFILE, os.strerror(errno.EMFILE))
    assert os_error_message(emfile).endswith("(ulimit -n, now 20 files) or use fewer --jobs")
    efbig = OSError(errno.EFBIG, os.strerror(errno.EFBIG), "f.png")
    assert os_error_message(efbig) == (f"f.png: cannot write ({os.strerror(errno.EFBIG)}); raise the limit on the "
                                       "size of files (ulimit -f, now 2 KiB)")
    eloop = OSError(errno.ELOOP, os.strerror(errno.ELOOP), "a")
    assert os_error_message(eloop).startswith(f"a: a loop of symbolic links ({os.strerror(errno.ELOOP)})")
    erofs = OSError(errno.EROFS, os.strerror(errno.EROFS), "a", None, "b")
    assert os_error_message(erofs).startswith(f"a -> b: cannot write ({os.strerror(errno.EROFS)}); free space")


def test_out_of_memory_is_one_line(monkeypatch, capsys, tmp_path):
    asked = "Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type float64"

    def allocating(*args, **kwargs):
        raise MemoryError(asked)

    monkeypatch.setattr("sbpbench.experiment.config.load", allocating)
    assert sbpbench(monkeypatch, "run", tiny_config(tmp_path), "--results", tmp_path / "results") == 2
    one_error_line(capsys.readouterr().err, f"sbpbench: error: out of memory: {asked}; ",
                   "or use smaller data (fewer examples or features)")
    monkeypatch.setattr(memory, "soft_limit", lambda name: 2**32)
    assert "this process may use 4 GiB of address space (ulimit -v); raise that limit" in \
        memory.out_of_memory(MemoryError(asked))


def test_estimates_past_the_limit_on_the_address_space_are_refused(monkeypatch):
    monkeypatch.setattr(memory, "machine_memory", lambda: (64 * 2**30, None))
    monkeypatch.setattr(memory, "soft_limit", lambda name: 4 * 2**30 if name == "RLIMIT_AS" else None)
    memory.require({"rows": 3 * 2**30}, "x.yaml")
    with pytest.raises(memory.TooLarge, match=re.escape("x.yaml: needs about 6 GiB of memory (rows 6 GiB); this "
                                                        "process may use 4 GiB of address space (ulimit -v): raise")):
        memory.require({"rows": 6 * 2**30}, "x.yaml")


def test_a_billion_features_under_a_limit_on_the_address_space(tmp_path):
    """The kernel's scratch vectors are as long as the columns the rows use, not the 8 GB of a
    billion declared features, which a 6 GiB address space refuses."""
    config = write_config(tmp_path / "wide.yaml", {
        "name": "wide", "dataset": {"path": str(tmp_path / "train.svm"), "test_path": str(tmp_path / "test.svm"),
                                    "n_features": 10**9},
        "kernel": {"name": "gaussian", "sigma2": 10}, "problem": {"lambda": "1/n"}, "solvers": ["pegasos"],
        "budget": {"epochs": 1}, "runs": 1, "seed": 0})
    rng = np.random.default_rng(0)
    for name, rows in (("train.svm", 60), ("test.svm", 30)):
        lines = [f"{(-1) ** r} " + " ".join(f"{c}:{v:.3f}" for c, v in sorted(zip(
            rng.choice(10**9, 4, replace=False) + 1, rng.normal(size=4)))) for r in range(rows)]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    done = shell(f"$SBPBENCH run {config} --results {tmp_path / 'results'} -q", RLIMIT_AS=6 * 2**30)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("gaussian", [True, False])
def test_wide_sparse_rows_use_a_scratch_of_their_columns(monkeypatch, gaussian):
    """Every kernel value and decision value as with a ``d``-long scratch, bit for bit."""
    rng = np.random.default_rng(1)
    narrow = sp.random(40, 30, density=0.2, random_state=2, format="csr")
    narrow.data = rng.normal(size=narrow.nnz)
    columns = np.sort(rng.choice(20_000, 30, replace=False))  # d past nnz and EVAL_BLOCK_MAX_FEATURES

    def wide(M: sp.csr_matrix) -> sp.csr_matrix:
        return sp.csr_matrix((M.data, columns[M.indices].astype(np.int32), M.indptr), shape=(M.shape[0], 20_000))

    X, Z = wide(narrow), wide(sp.random(15, 30, density=0.3, random_state=3, format="csr"))
    support, coef = np.array([0, 3, 5, 7, 11]), rng.normal(size=5)
    compact = Float64CSR(X, gaussian, 0.3)
    assert compact._scratch.size == 30 and storage.memory_needs(X, Z, KernelSpec())["feature scratch vector"] \
        == 8 * X.nnz
    monkeypatch.setattr(storage, "scratch_columns", lambda M: (M.indices, M.shape[1]))
    monkeypatch.setattr(storage, "shared_columns", lambda S, Z: (S, Z, S.shape[1]))
    full = Float64CSR(X, gaussian, 0.3)
    assert full._scratch.size == 20_000
    idx, got, expected = np.arange(40), np.empty(40), np.empty(40)
    for i in range(40):
        compact.serial_rows(idx, i, got)
        full.serial_rows(idx, i, expected)
        assert np.array_equal(got, expected)
        compact.threaded_rows(i, idx, got)
        full.threaded_rows(i, idx, expected)
        assert np.array_equal(got, expected)
    monkeypatch.undo()
    wide_values = compact.decision_values(Z, support, coef)
    monkeypatch.setattr(storage, "shared_columns", lambda S, Z: (S, Z, S.shape[1]))
    assert np.array_equal(wide_values, full.decision_values(Z, support, coef))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # one epoch
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_estimators_refuse_inner_products_that_overflow(estimator):
    """As SVC does: not an all-zero model (Pegasos, SDCA) nor a fit that never ends (SMO)."""
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    for params in ({"kernel": "linear"}, {"sigma2": 1.0}):
        with pytest.raises(ValueError, match="the inner products of the training examples overflow a float64"):
            estimator(**params).fit(X * 1e155, y)
    model = estimator(kernel="linear", epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="the inner products of the points overflow a float64"):
        model.predict(X * 1e155)

