"""The ``sbpbench`` command line.

A user mistake ends with one line ``sbpbench: error: ...`` and exit code 2 (a traceback
only with ``--debug``); Ctrl-C keeps every finished run and exits with 130.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import gc
import logging
import os
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click

from sbpbench import __version__
from sbpbench.cli import console
from sbpbench.cli.datasets import datasets
from sbpbench.cli.progress import CliReporter, runs_text, width, wrap
from sbpbench.errors import UserError, cut_middle, os_error_message, printable
from sbpbench.memory import out_of_memory
from sbpbench.threads import check_environment

#: Longest error line printed; a longer message is cut in the middle (:func:`error_line`).
MAX_ERROR_CHARS = 500


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sbpbench")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Reproduce the SBP, Pegasos and SGD-revisited experiments and compare SVM solvers.

    Start with: sbpbench run configs/quickstart.yaml
    """
    ctx.ensure_object(dict)["debug"] = debug  # read by main() when an error reaches it
    show_notes()


class _NoteHandler(logging.Handler):
    """Shows a record of the library's ``sbpbench`` logger as one line ``sbpbench: note: ...`` on stderr.

    It writes through ``click.echo`` at the time of the record, so that the standard error of
    the moment (Click's test runner's, too) receives it.
    """

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(f"sbpbench: note: {' '.join(record.getMessage().split())}", err=True)


def show_notes() -> None:
    """Show the library's notes (``logging`` records of level INFO and above of the ``sbpbench`` logger).

    Idempotent: one handler, however often a command runs in this process.
    """
    logger = logging.getLogger("sbpbench")
    logger.setLevel(logging.INFO)
    if not any(isinstance(handler, _NoteHandler) for handler in logger.handlers):
        logger.addHandler(_NoteHandler())


P = ParamSpec("P")
R = TypeVar("R")


def _unfrozen_at_end(command: Callable[P, R]) -> Callable[P, R]:
    """``command``, which freezes what it imports and what lives until its end (:func:`_importing`),
    with :func:`gc.unfreeze` when it ends.

    A short ``sbpbench run`` spent some 0.4 s in the garbage collector: hundreds of passes while
    numba, pandas and matplotlib are imported, which allocate much and free little, and full passes
    over objects that live until the process ends anyway (those modules, the data, a finished run's
    results; issue #37). Frozen, they are left out of the collector's passes (reference counting
    still frees them). Unfrozen at the end, the collector is as it was for a caller in the same
    process (the tests run the command line so).
    """

    @functools.wraps(command)
    def unfreezing(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        finally:
            gc.unfreeze()

    return unfreezing


@contextlib.contextmanager
def _importing() -> Iterator[None]:
    """No garbage collection while the block imports, then every object alive frozen (:func:`gc.freeze`):
    for commands that are :func:`_unfrozen_at_end`."""
    with _uncollected():
        yield
    gc.freeze()


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
    """No garbage collection while the block runs; the collector as it was after it.

    For blocks that make many objects and free few of them until they end, e.g. drawing figures:
    their artists refer to each other, so the collector's passes while they are drawn (some 65
    for a short run's figure and page) find little to free; without them the drawing takes
    some 15 ms less CPU (2%), and a later pass frees the figures.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@cli.command()
@click.argument("configs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--results", "results_root", default="results", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Root folder for results.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a config key before validation, e.g. --set budget.epochs=3 --set 'solvers=[sbp]'.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Runs at once: local processes (or Dask local workers). Default 1, in this process.")
@click.option("--executor", type=click.Choice(["sequential", "processes", "dask"]), default=None,
              help="Where runs execute. Default: sequential with --jobs 1, processes with --jobs N, "
                   "dask with --scheduler.")
@click.option("--scheduler", metavar="ADDR",
              help="Dask scheduler, e.g. tcp://HOST:8786 (--executor dask without it starts a local cluster).")
@click.option("--resume", is_flag=True,
              help="Continue the newest run folder of each experiment: redo only the runs without a "
                   "complete result.")
@click.option("--resume-from", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Continue this run folder (one config; implies --resume).")
@click.option("--no-plot", is_flag=True, help="Do not draw the figure nor write the run's page (index.html).")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress and no tables: only each run folder's path (and errors) is printed.")
@_unfrozen_at_end
def run(configs: tuple[Path, ...], results_root: Path, overrides: tuple[str, ...], jobs: int | None,
        executor: str | None, scheduler: str | None, resume: bool, resume_from: Path | None, no_plot: bool,
        quiet: bool) -> None:
    """Run the experiments in CONFIGS (YAML files) and write results/<name>/<run-id>/.

    Every config is validated and its data loaded before anything runs. Each run writes
    curves.csv (one row per checkpoint) and meta.json (resolved configuration, versions,
    host, statuses); then come the figure and index.html, a self-contained page of the run
    (interactive curves, figures, summary, configuration); with several configs (data sets),
    RESULTS/performance-profile.png and .svg compare the solvers over them, and RESULTS/index.html
    is their overview page (each experiment's page linked, the profile). All configs share the --jobs
    workers; results are written by this process only, in the same order whatever executor
    ran them. Exits with 3, after writing everything, when a run ended failed or diverged.
    """
    with _importing():
        from sbpbench.execution.executors import make_executor
        from sbpbench.execution.sweep import Interrupted, run_experiments
        from sbpbench.experiment import config
        from sbpbench.results.store import ended_badly, read_meta

    experiments = [config.load(path, list(overrides)) for path in configs]
    writable_folder(results_root, "--results")
    try:
        with CliReporter(quiet) as reporter, make_executor(executor, jobs, scheduler) as runner_pool:
            directories = run_experiments(experiments, results_root, runner_pool, reporter,
                                          resume=resume, resume_from=resume_from)
    except Interrupted as stop:  # the workers are stopped by now (the executor's close)
        for line in interruption_lines(stop.stopped, sys.argv):  # the command whole, on a line of its own
            click.echo(wrap(line) if line.startswith("sbpbench: ") else line, err=True)
        sys.exit(130)
    for exp, directory in zip(experiments, directories):
        if quiet:
            click.echo(printable(str(directory)))
        else:  # the summary reads the curves back (and imports pandas): not for -q
            with _importing():
                from sbpbench.outputs.budgets import budget_text
                from sbpbench.outputs.summary import best_table, summary_table
                from sbpbench.results.store import read_curves

            curves = read_curves(directory)
            click.echo("\n" + wrap(f"{printable(exp.name)}: final checkpoint of each run"))
            click.echo(summary_table(curves, width()))
            for table in (best_table(curves, width()), budget_text(curves, exp.report, width())):
                if table:
                    click.echo(table)
            click.echo(wrap(f"results: {printable(str(directory))} (curves.csv, meta.json)"))
        if not no_plot:
            with _importing():  # matplotlib only when plotting; frozen with the data and results
                from sbpbench.outputs.page import write_page
                from sbpbench.outputs.plotting import plot_results

            with _uncollected():
                plotted = plot_results(directory)
                written = plotted.files
                if plotted.notes:  # solvers without kernel evaluations (linear ones): all on training seconds
                    written += plot_results(directory, x="seconds").files
                page = write_page(directory)
            if not quiet:
                if written:
                    click.echo(wrap("figure:  " + ", ".join(printable(p.name) for p in written)))
                click.echo(wrap(f"page:    {printable(str(page))}"))
    if not no_plot and len(directories) > 1:  # several data sets: who wins on how many of them
        with _importing():
            import pandas as pd

            from sbpbench.outputs.overview import write_overview
            from sbpbench.outputs.plotting import profile_figure
            from sbpbench.results.store import read_curves

        with _uncollected():
            profile = profile_figure(pd.concat([read_curves(d, traits=True) for d in directories], ignore_index=True),
                                     results_root / "performance-profile")
            overview = write_overview(directories, [os.path.relpath(d / "index.html", results_root).replace(os.sep, "/")
                                                    for d in directories], results_root / "index.html")
        if profile and not quiet:
            click.echo(wrap("profile: " + ", ".join(printable(str(p)) for p in profile)))
        if not quiet:
            click.echo(wrap(f"overview: {printable(str(overview))}"))
    runs = {d: read_meta(d).get("runs", []) for d in directories}
    bad = {d: sum(map(ended_badly, summaries)) for d, summaries in runs.items()}
    if any(bad.values()):
        where = ", ".join(str(d / "meta.json") for d, n in bad.items() if n)
        click.echo(f"sbpbench: {sum(bad.values())} of {sum(map(len, runs.values()))} runs failed or diverged; "
                   f"see {where}", err=True)
        sys.exit(3)  # after writing everything, so that CI sees it; 2 is for user errors


def interruption_lines(stopped: list[Any], argv: list[str]) -> list[str]:
    """What ``sbpbench run`` says when Ctrl-C stopped it: where each experiment stands, and the
    exact command that continues its run folders.

    Parameters
    ----------
    stopped : list of sbpbench.execution.sweep.Stopped
        Each experiment's run folder and counts of runs.
    argv : list of str
        The command line that was interrupted (``sys.argv``).

    Returns
    -------
    list of str
        A line per experiment, then (when runs are left to do) a line saying so and the
        command: the same command line with ``--resume-from RUN_FOLDER`` for one experiment,
        ``--resume`` for several (each continues the newest run folder of its experiment, the
        one just written).
    """
    lines = [f"sbpbench: interrupted: {printable(s.experiment)}: {s.finished} run(s) finished and kept, "
             f"{s.interrupted} interrupted, {s.not_started} not started ({printable(str(s.directory))})"
             for s in stopped]
    if any(s.interrupted or s.not_started for s in stopped):
        again = resume_command(argv, stopped[0].directory if len(stopped) == 1 else None)
        lines += ["sbpbench: to finish the runs left, run:", printable(again)]
    return lines


def resume_command(argv: list[str], folder: Path | None) -> str:
    """The command line ``argv`` of ``sbpbench run`` made to continue: with ``--resume-from folder``
    (or ``--resume`` when ``folder`` is None) instead of any resume option it had, quoted for a shell."""
    program = argv[0]
    head = [program] if Path(program).name == "sbpbench" else [sys.executable, "-m", "sbpbench"]
    args: list[str] = []
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "--resume-from":
            next(rest, None)
        elif arg != "--resume" and not arg.startswith("--resume-from="):
            args.append(arg)
    args += ["--resume"] if folder is None else ["--resume-from", str(folder)]
    return shlex.join(head + args)


def writable_folder(path: Path, option: str) -> None:
    """Create the folder ``path`` if needed and check that files can be written in it.

    Parameters
    ----------
    path : pathlib.Path
        The folder.
    option : str
        The command-line option that named it, for the error message.

    Raises
    ------
    UserError
        When ``path`` is not a folder, or cannot be created or written.
    """
    try:
        if path.exists() and not path.is_dir():
            raise UserError(f"{option} {path}: not a folder")
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot create or write this folder ({_why_not(path, exc)})") from None


def _why_not(path: Path, exc: OSError) -> str:
    """Why the folder ``path`` could not be made or written (``exc``), naming a symbolic link that
    loops or points nowhere as such (the system says "File exists" of both)."""
    if os.path.islink(path):  # False, not an error, for a path the system refuses
        try:
            os.stat(path)
        except OSError as broken:
            if broken.errno == errno.ELOOP:
                return "a loop of symbolic links"
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
    return exc.strerror or str(exc)


@cli.command()
@click.argument("configs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def validate(configs: tuple[Path, ...]) -> None:
    """Check experiment configs without running them.

    The data files of a config that names them (``dataset.path``) are read and checked too,
    with the sizes, the solvers' parameters, the memory a run needs, lambda at the real n and
    sigma2 computed from the data (of every solver entry of a sweep); a registered dataset is
    only checked by name (loading it may mean a download).
    """
    from sbpbench.experiment import assemble, config

    for path in configs:
        exp = config.load(path)
        checked = ""
        if exp.dataset.path is not None:
            train, test = assemble.load_data(exp)
            train, _ = assemble.hold_out(exp, train)
            assemble.check_sizes(exp, train, test)
            for spec in exp.solvers:
                assemble.resolve(exp.for_solver(spec), train.n)
                assemble.resolve_kernel(exp.for_solver(spec), train)
            checked = f"; data: {train.n} training / {test.n} test examples"
        click.echo(f"{path}: ok ({exp.name}: {len(exp.solvers)} solver(s), {runs_text(exp)}{checked})")


#: The axes of ``sbpbench plot`` (the keys of sbpbench.outputs.plotting.X_AXES and Y_AXES,
#: named here so that --help needs no matplotlib; tests/test_plot_pages.py checks they agree).
X_CHOICES = ("kernel_evals", "seconds", "iterations", "epochs")
Y_CHOICES = ("test_error", "objective", "primal_objective", "test_hinge_loss", "gap")


@cli.command()
@click.argument("results_dir", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Output folder (default: RESULTS_DIR).")
@click.option("--x", "x", type=click.Choice(X_CHOICES), default="kernel_evals", show_default=True,
              help="x axis: kernel evaluations, training seconds, iterations or epochs.")
@click.option("--y", "y", type=click.Choice(Y_CHOICES), default="test_error", show_default=True,
              help="y axis: test error, the solver's own objective, the primal objective, the test hinge "
                   "loss, or the duality gap (primal minus dual objective, solvers with a dual).")
def plot(results_dir: Path, out: Path | None, x: str, y: str) -> None:
    """Draw curves of the runs in RESULTS_DIR: by default Figure 2, test error against kernel evaluations.

    RESULTS_DIR is a run folder, or a tree of them (the newest run of each experiment is
    drawn, one panel per experiment; a sweep of 10 entries or more, one panel per setting with the
    solvers side by side, and sweep-summary). The default axes write figure2.png and figure2.svg
    (and figure3 against inner products when there are Fourier runs), and over two problems or
    more (settings of a sweep, experiments) performance-profile; others write <y>-vs-<x>.png and
    .svg, e.g. test_error-vs-seconds. Solvers without the columns asked for are left out with a note.
    """
    from sbpbench.outputs.plotting import X_AXES, Y_AXES, plot_results

    plotted = plot_results(results_dir, out, x, y)
    if not plotted.runs:
        raise UserError(f"{results_dir}: no curves.csv with checkpoints found")
    if not plotted.files:
        raise UserError(f"{results_dir}: no solver has both {X_AXES[x].label} and {Y_AXES[y].label} "
                        f"(--x {x} --y {y})")
    for note in plotted.notes:
        click.echo(f"left out: {note}")
    for path in plotted.files:
        click.echo(str(path))


@cli.command()
@click.argument("results_dir", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write OUT/<experiment>.html instead of index.html in each run folder, and for several "
                   "experiments their overview OUT/index.html.")
def page(results_dir: Path, out: Path | None) -> None:
    """(Re)write the self-contained HTML page of runs: RUN/index.html.

    RESULTS_DIR is a run folder, or a tree of them (the newest run of each experiment gets its
    page). The page shows the curves with a choice of axes, zoom and solvers to hide (a small
    inline script; static figures too), the summary table, each run's status, the resolved
    configuration, the machine and versions. It needs no network and no other file. With several
    experiments it also writes their overview, RESULTS_DIR/index.html (with --out, OUT/index.html):
    each one linked with its data set and best test errors, and the solvers' performance profile
    across them. Every chart can be saved as an SVG or a PDF file.
    """
    from sbpbench.outputs.overview import write_pages

    if out is not None:
        writable_folder(out, "--out")
    for path in write_pages(results_dir, out):
        click.echo(str(path))


@cli.command()
@click.argument("results", type=click.Path(exists=True, path_type=Path))
@click.option("--reference", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Reference folder, e.g. results/reference/ci-adult.")
@click.option("--update", is_flag=True, help="Replace the reference with RESULTS instead of checking.")
@click.option("--z", default=3.0, show_default=True, help="Band width in reference standard deviations over seeds.")
def check(results: Path, reference: Path, update: bool, z: float) -> None:
    """Check the curves in RESULTS against reference curves; exit 1 on any departure, better or worse.

    Iterations, kernel evaluations and computed kernel evaluations must match at every
    checkpoint, and every run must stop where the reference's did; test error and objectives
    must stay within z standard deviations over seeds of the reference mean (with small
    floors) at every checkpoint. RESULTS is a run folder or an experiment folder (its newest run).
    """
    import math

    from sbpbench.outputs import check as regression

    if not (math.isfinite(z) and z >= 0):
        raise UserError(f"--z {z}: expected a finite number >= 0 (standard deviations)")
    ok, report = regression.check(results, reference, update, z)
    click.echo(report)
    if not ok:
        sys.exit(1)


@cli.command()
@click.option("--results", "results_root", default="results/paper", show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Results root: <experiment>/curves.csv[.gz] + meta.json, or <experiment>/<run-id>/.")
@click.option("--out", default="figures", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder.")
def figures(results_root: Path, out: Path) -> None:
    """Draw every figure of the papers (PNG, SVG, index.html) and the SGD paper's tables.

    Missing results are listed, not an error.
    """
    from sbpbench.outputs.figures import draw_all

    for d in draw_all(results_root, out):
        files = ", ".join(str(p) for p in d.files) or "(nothing drawn)"
        click.echo(f"{d.figure.stem}: {files}")
        if d.missing:
            click.echo(f"  missing results: {', '.join(d.missing)}")
    click.echo(f"{out / 'sgd-tables.md'}\n{out / 'index.html'}")


@cli.command()
@click.option("--results", "results_root", default="results/paper", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Results root (as for `figures`).")
@click.option("--out", default="REPRODUCTION.md", show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Output file.")
def report(results_root: Path, out: Path) -> None:
    """Write REPRODUCTION.md: every number the papers report next to what we measured, with a verdict."""
    from sbpbench.outputs.report import write

    click.echo(str(write(results_root, out)))


@cli.command()
@click.option("--solver-file", "files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Also list the solvers this Python file defines (repeatable).")
def solvers(files: tuple[Path, ...]) -> None:
    """List the solvers, what they need and their parameters.

    The built-in ones, those of installed packages' ``sbpbench.solvers`` entry points, and
    those of each ``--solver-file``; each of the latter two says where it comes from.
    """
    from sbpbench.solvers import SOLVERS
    from sbpbench.solvers.external import ORIGINS, load_file

    for file in files:
        load_file(file)
    for name, cls in sorted(SOLVERS.items()):
        needs = ", ".join(sorted(cls.needs)) or "-"
        doc = (cls.__doc__ or "").strip().splitlines()[0] if (cls.__doc__ or "").strip() else "-"
        origin = f"; from {ORIGINS[name]}" if name in ORIGINS else ""
        once = "; deterministic: runs once" if cls.deterministic else ""
        click.echo(f"{name}: {doc}\n    needs: {needs}; bias: {bias_support(cls)}{once}{origin}")
        for pname, p in cls.Params.declared().items():
            click.echo(f"    {pname} ({p.type.__name__}, default {p.default!r}): {p.doc}")


def bias_support(cls: Any) -> str:
    """How a solver class stands to the biased problem, as ``sbpbench solvers`` says it:
    ``required`` (it solves only the biased problem), ``supported`` (either) or ``refused``
    (only the unbiased one)."""
    return "required" if cls.requires_bias else "supported" if cls.supports_bias else "refused"


@cli.command("check-solver")
@click.argument("targets", nargs=-1, required=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="seconds each check of one case may take before it fails (a step that does not return); "
              "default 600")
def check_solver(targets: tuple[str, ...], timeout: float | None) -> None:
    """Run the solver contract on solvers: each TARGET a Python file (every solver it defines;
    FILE:NAME for one of them) or the name of a registered solver.

    The checks of ``sbpbench/solvers/contract.py`` on small rows of the bundled Adult data,
    fresh for every case, with every kernel, bias and parameter choice the solver accepts:
    parameters declared and checked, impossible problems refused, the three budgets honoured,
    the same trajectory from the same seed (in this process and in another), snapshots free,
    every kernel value from the counting kernel, the kernel's count equal to the cost model,
    the problem's data left unwritten. They run in a process of their own (its process group
    killed when they end), so that a solver that exits (``sys.exit``, ``os._exit``), or whose
    step runs longer than ``--timeout``, fails the check it was in and the others still run.
    One line per check; exit 1 when one fails.
    """
    from sbpbench.solvers import SOLVERS
    from sbpbench.solvers.contract import isolated_verdicts

    failed = False
    for name in [name for target in targets for name in _solvers_of(target, SOLVERS)]:
        for what, why in isolated_verdicts(SOLVERS[name], timeout):
            click.echo(f"{name}: {what}: " + ("ok" if why is None else f"FAILED ({why})"))
            failed = failed or why is not None
    if failed:
        sys.exit(1)


def _solvers_of(target: str, registered: dict) -> list[str]:
    """The solver names a ``check-solver`` TARGET means (a file, ``FILE:NAME``, or a registered name)."""
    from sbpbench.solvers.external import load_file

    file, _, name = target.rpartition(":")
    if not file.endswith(".py"):  # no FILE:NAME
        file, name = target, ""
    if not file.endswith(".py"):
        if target not in registered:
            raise UserError(f"check-solver: {target!r} is neither a .py file nor a registered solver "
                            f"(valid: {', '.join(sorted(registered))})")
        return [target]
    defined = load_file(file)
    if name and name not in defined:
        raise UserError(f"{file}: defines no solver {name!r} (it defines {', '.join(defined)})")
    return [name] if name else defined


cli.add_command(datasets)


#: Click's exception for a command line without arguments (Click 8.2 and later; nothing before).
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def error_line(message: str) -> str:
    """``sbpbench: error: MESSAGE`` on one line of at most :data:`MAX_ERROR_CHARS` characters; a longer
    one loses characters in its middle, so that its end (the reason) stays."""
    message = cut_middle(message, 4 * MAX_ERROR_CHARS)  # bounded before its spaces are joined
    return cut_middle(printable(" ".join(f"sbpbench: error: {message}".split())), MAX_ERROR_CHARS)


def _usage_message(exc: click.ClickException) -> str:
    """Click's complaint, followed by where to read the usage when Click knows the command."""
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return exc.format_message() + hint


@functools.cache
def _frozen_at_exit() -> None:
    """Have every object alive frozen (:func:`gc.freeze`) when the process exits; once per process.

    Python's shutdown, after the ``atexit`` handlers, runs full garbage collections over every
    object to free memory that the operating system takes back anyway: after a short run that
    imported numba, pandas and matplotlib, some 0.45 s of CPU, more than a quarter of the run's
    own (issue #37). Frozen objects are left out of those passes. What Python promises at exit
    is kept: the ``atexit`` handlers registered before this one (logging's flush,
    ``weakref.finalize``, temporary folders) run after it, the standard streams are flushed, and
    objects outside reference cycles are still released; only ``__del__`` of objects in cycles
    may not run, which Python never guarantees at exit, and on which no file of sbpbench relies
    (every file is closed, or written atomically, by the code that writes it). A caller that
    runs :func:`main` in its own process (the tests) gets the same at its own exit.
    """
    atexit.register(gc.freeze)


def escape_unencodable_output() -> None:
    """Have the standard output and error write what their encoding cannot show as its backslash
    escape (``\\u03bb`` on a Latin-1 or ASCII console, ``\\udce9`` for a lone surrogate from an
    undecodable byte of a path) instead of failing the command; their encoding stays as set up
    (the locale, or ``PYTHONIOENCODING``).

    A stream that cannot be reconfigured (not a :class:`io.TextIOWrapper`) is left as it is.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main() -> None:
    """Entry point: run the CLI, turning user errors, usage errors and failures of the system
    (:func:`failure_line`) into one line and exit code 2, whatever happens to the console
    (:mod:`sbpbench.cli.console`), which escapes what it cannot encode (:func:`escape_unencodable_output`).

    Output lost to a standard output that could not be written ends the command with a line
    saying so, and exit code 2 where the command would have succeeded; lost to a reader that went
    away (``| head``), it is no error.
    """
    escape_unencodable_output()  # before the console is kept: its streams keep this error handler
    _frozen_at_exit()
    with console.kept() as streams:
        try:
            _run_command()
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
        lost = streams["stdout"].failure if "stdout" in streams else None
        if lost is not None and lost.errno != errno.EPIPE:
            click.echo(error_line(f"standard output: cannot write ({lost.strerror or lost}); what the "
                                  "command printed is lost"), err=True)
            code = code or UserError.exit_code
    if code:
        sys.exit(code)


def _run_command() -> None:
    """Run the CLI; a failure that reaches here ends in one line and an exit code (:func:`main`)."""
    options: dict[str, Any] = {}  # the group's options, as its callback saw them
    try:
        check_environment()
        cli.main(standalone_mode=False, obj=options)
    except UserError as exc:
        if options.get("debug"):
            raise
        click.echo(error_line(str(exc)), err=True)
        sys.exit(exc.exit_code)
    except _NO_ARGS_IS_HELP as exc:  # plain "sbpbench": the help, as Click shows it
        exc.show()
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(error_line(_usage_message(exc)), err=True)
        sys.exit(exc.exit_code)
    except (OSError, MemoryError) as exc:  # the system's: a full disk, a limit of the process, ...
        if options.get("debug"):
            raise
        click.echo(error_line(failure_line(exc)), err=True)
        sys.exit(UserError.exit_code)
    except (KeyboardInterrupt, click.Abort) as exc:
        if isinstance(ended := exc.__cause__ or exc.__context__, EOFError):  # Click's Abort for an EOFError
            if options.get("debug"):
                raise
            click.echo(error_line(f"input ended early: damaged or cut short ({ended or 'EOFError'})"), err=True)
            sys.exit(UserError.exit_code)
        click.echo("\nsbpbench: interrupted", err=True)
        sys.exit(130)


def failure_line(exc: OSError | MemoryError) -> str:
    """The message of a failure of the system that reached the command line: an ``OSError``
    (:func:`sbpbench.errors.os_error_message`) or a ``MemoryError``
    (:func:`sbpbench.memory.out_of_memory`)."""
    return os_error_message(exc) if isinstance(exc, OSError) else out_of_memory(exc)
