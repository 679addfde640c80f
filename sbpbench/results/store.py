"""Result files: ``curves.csv`` and ``meta.json`` in ``results/<experiment>/<run-id>/``.

Each finished run is appended: its rows to ``curves.csv``, its summary to the journal
:data:`JOURNAL`, which :func:`read_meta` reads as part of ``meta.json`` (so recording a run costs
the same after ten thousand runs as after one). Both files are rewritten whole, each atomically
(written under a temporary name, then renamed), at the start, at the end and on interruption
(:class:`ResultsWriter`); a reader passes over a last line that a kill cut short, and an
interruption, a kill included, loses nothing already recorded.

pandas is imported only by the readers, when called: a run's process writes both files without
it (``curves.csv`` with :func:`~sbpbench.results.csvrows.rows_csv`), since importing it is a
good part of a short run's fixed costs.
"""

from __future__ import annotations

import io
import json
import os
import platform
import re
import subprocess
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sbpbench.errors import UserError
from sbpbench.files import append_text, atomic_write, file_kind, read_regular
from sbpbench.results.csvrows import rows_csv
from sbpbench.results.schema import MAX_DEPTH, check_meta
from sbpbench.results.stamps import Stopwatch, folder_name, timestamp, utc_now
from sbpbench.solvers import SOLVERS
from sbpbench.solvers.base import TRAITS, Solver

if TYPE_CHECKING:
    import pandas as pd

#: Columns every ``curves.csv`` has, in this order; solver-specific columns follow, sorted.
COLUMNS = [
    "experiment", "dataset", "solver", "solver_name", "params", "seed", "run", "checkpoint",
    "iteration", "epoch", "kernel_evals", "kernel_evals_computed", "eval_kernel_evals",
    "train_time_s", "test_error", "objective", "primal_objective", "n_support", "status",
]


def new_run_dir(root: Path, experiment: str) -> Path:
    """Create ``root/<experiment>/<start in UTC>[-k]/`` (:func:`~sbpbench.results.stamps.folder_name`) and return it.

    Raises
    ------
    UserError
        The folder cannot be created (a full or read-only disk, no permission).
    """
    started = utc_now()
    parent = root / experiment
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for k in range(1000):
            candidate = parent / folder_name(started, k)
            try:
                candidate.mkdir()
                return candidate
            except FileExistsError:
                continue
    except OSError as exc:  # a full or read-only disk, a folder without write permission
        raise UserError(f"{parent}: cannot create a run folder ({exc.strerror or exc})") from None
    raise UserError(f"{parent}: cannot create a run folder (1000 folders named {folder_name(started)}[-k] exist)")


def environment() -> dict[str, Any]:
    """Package versions, git commit and host facts for ``meta.json``."""
    versions: dict[str, str | None] = {}
    for pkg in ("sbpbench", "numpy", "scipy", "numba", "scikit-learn", "pandas", "matplotlib", "click", "pyyaml"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    commit, dirty = source_commit()
    return {
        "versions": versions,
        "python": platform.python_version(),
        "git_commit": commit,
        "git_dirty": dirty,
        "host": {
            "hostname": platform.node(),
            "platform": platform.platform(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
        },
    }


#: A file that ``git archive`` fills with the commit it archives (``export-subst`` in .gitattributes).
ARCHIVE_COMMIT = Path(__file__).resolve().parents[1] / "ARCHIVE_COMMIT"


def source_commit() -> tuple[str | None, bool | None]:
    """The commit of the code that runs, and whether it has uncommitted changes.

    From git when the package is the ``sbpbench/`` folder of a git checkout (``dirty``: tracked
    files differ from the commit; an installed copy inside some other repository, such as a
    virtual environment in it, is not); else from :data:`ARCHIVE_COMMIT` of a source archive
    made by ``git archive`` (GitHub's downloads; ``dirty`` unknown, None); else ``(None, None)``
    (an installed wheel: ``versions`` still names the release). git never takes the index lock
    (``--no-optional-locks``), so a run cannot collide with the user's own git commands.
    """
    here = ARCHIVE_COMMIT.parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "--no-optional-locks", *args], cwd=here, capture_output=True, text=True,
                                  timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    top = (git("rev-parse", "--show-toplevel") or "").strip()
    commit = (git("rev-parse", "HEAD") or "").strip() if top and Path(top).resolve() == here.parent.resolve() else ""
    if commit:
        status = git("status", "--porcelain", "--untracked-files=no")
        return commit, None if status is None else bool(status.strip())
    try:
        archived = ARCHIVE_COMMIT.read_text(encoding="utf-8").strip()
    except OSError:
        return None, None
    return (archived, None) if re.fullmatch(r"[0-9a-f]{40}", archived) else (None, None)


#: Run statuses that count as a complete result; ``--resume`` redoes every other run.
COMPLETE = ("budget", "done", "diverged")


def ended_badly(summary: dict[str, Any]) -> bool:
    """Whether a run (its ``meta.json`` summary) ended ``failed: <reason>`` or ``diverged``."""
    status = str(summary.get("status"))
    return status == "diverged" or status.startswith("failed")


#: The journal of a run folder: one line of JSON per run recorded since ``meta.json`` was last
#: written whole, which :func:`read_meta` reads as part of ``meta.json``'s ``runs``.
JOURNAL = "runs.jsonl"


class ResultsWriter:
    """Collects checkpoint rows and run statuses and keeps the files of a run folder up to date.

    Recording a run costs the same however many runs came before it: its rows are appended to
    ``curves.csv`` and its summary to the journal :data:`JOURNAL`, each fsynced
    (:func:`~sbpbench.files.append_text`), so that a kill at any moment loses no run already
    recorded. Both files are rewritten whole (atomically, and the journal removed, its runs
    then in ``meta.json``) only when that is needed: at the start, when a run brings a column
    ``curves.csv`` lacks or replaces a run already written, and by :meth:`flush`, which the
    sweep calls at the end and on interruption.

    Runs may be added in any order (parallel executors finish them in any order); a whole
    rewrite lists them by their ``position`` (solver order of the config, then run index), so
    the same experiment gives the same files once finished. Between rewrites, the runs are
    appended in the order they were recorded.

    Parameters
    ----------
    directory : pathlib.Path
        The run folder (see :func:`new_run_dir`).
    meta : dict
        Static part of ``meta.json`` (resolved configuration and environment).
    """

    def __init__(self, directory: Path, meta: dict[str, Any]):
        self.directory = directory
        self.meta = dict(meta)
        self._clock = Stopwatch()  # finished: its start plus monotonic time, never before started
        self.meta.setdefault("started", timestamp(self._clock.started))
        self.meta["runs"] = []
        self._runs: dict[int, tuple[list[dict[str, Any]], dict[str, Any]]] = {}
        self._next = 0  # the position after every run added so far
        self._header: list[str] | None = None  # the columns of curves.csv as written (None: not written yet)
        self._on_disk: set[int] = set()  # the positions of the runs in the files
        self._written: int | None = None  # runs in the files as last written (None: not written yet)

    def add_run(self, rows: list[dict[str, Any]], summary: dict[str, Any], position: int | None = None,
                flush: bool = True) -> None:
        """Record one run's checkpoint rows (their ``status`` set to the run's) and write it.

        Parameters
        ----------
        rows, summary
            The run's checkpoint rows and its ``meta.json`` summary.
        position : int, optional
            The run's place in the files (default: after every run added so far). A run
            added again at the same position replaces the earlier one.
        flush : bool
            Write the run now: appended (class docstring), or both files rewritten whole when
            appending cannot record it.

        Raises
        ------
        UserError
            A file cannot be written (:meth:`flush`).
        """
        for row in rows:
            row["status"] = summary["status"]
        if position is None:
            position = self._next
        self._next = max(self._next, position + 1)
        self._runs[position] = (rows, summary)
        if not flush:
            return
        if self._header is None or position in self._on_disk or not set(curves_columns(rows)) <= set(self._header):
            self.flush()
            return
        curves = self.directory / "curves.csv"
        with self._writing():
            end = curves.stat().st_size
            if rows:
                append_text(curves, rows_csv(rows, self._header, header=False))
            try:
                append_text(self.directory / JOURNAL, json.dumps(summary, default=str) + "\n")
            except OSError:  # the rows go too: no run in curves.csv without its summary
                with suppress(OSError):
                    os.truncate(curves, end)
                raise
        self._on_disk.add(position)
        self._written = len(self._on_disk)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every checkpoint row, in position order."""
        return [row for pos in sorted(self._runs) for row in self._runs[pos][0]]

    def flush(self, finished: bool = False) -> None:
        """Rewrite ``curves.csv`` and then ``meta.json`` whole, each atomically, in position order,
        and remove the journal, whose runs ``meta.json`` now lists.

        Raises
        ------
        UserError
            A file cannot be written (a full or read-only disk, no permission): one line naming
            the folder and what it keeps, the files as last written (a reader, and
            ``--resume``, sees those).
        """
        rows = self.rows
        self.meta["runs"] = [self._runs[pos][1] for pos in sorted(self._runs)]
        if finished:
            self.meta["finished"] = self._clock.end(self.meta["started"])
        header = curves_columns(rows)
        with self._writing():
            atomic_write(self.directory / "curves.csv", rows_csv(rows, header))
            atomic_write(self.directory / "meta.json", json.dumps(self.meta, indent=2, default=str) + "\n")
            (self.directory / JOURNAL).unlink(missing_ok=True)
        self._header = header
        self._on_disk = set(self._runs)
        self._written = len(self._on_disk)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Turn an ``OSError`` of the writes inside into the :class:`~sbpbench.errors.UserError` of :meth:`flush`."""
        try:
            yield
        except OSError as exc:
            kept = (f"it keeps the files as last written, with {self._written} run(s)" if self._written is not None
                    else "its files are as they were before this run")
            raise UserError(f"{self.directory}: cannot write the results ({exc.strerror or exc}); {kept}; "
                            f"free space or make the folder writable, then continue with --resume-from "
                            f"{self.directory}") from None


def read_meta(directory: Path) -> dict[str, Any]:
    """Read a run folder's ``meta.json``, with the runs its journal (:data:`JOURNAL`) records.

    A run of the journal replaces the run of ``meta.json``'s ``runs`` with its solver label and
    run index, or comes after them; a last line cut short (a writer killed mid-append) is passed
    over.

    Raises
    ------
    UserError
        A file is unreadable, no regular file, not JSON, or not of the shape sbpbench
        writes (:func:`~sbpbench.results.schema.check_meta`; a line of the journal: a run's
        summary).
    """
    path = directory / "meta.json"
    meta = check_meta(_json(read_regular(path, "the run's metadata"), path, "the run's metadata"), path)
    journal = directory / JOURNAL
    if not journal.exists():
        return meta
    runs = {(run.get("solver"), run.get("run")): run for run in meta.get("runs", [])}
    for number, line in enumerate(read_regular(journal, "the run's journal").split(b"\n")[:-1], start=1):
        where = f"{journal}:{number}"
        run = check_meta({"runs": [_json(line, where, "a run's summary")]}, where)["runs"][0]
        runs[(run.get("solver"), run.get("run"))] = run
    return {**meta, "runs": list(runs.values())}


def _json(raw: bytes, where: str | Path, what: str) -> Any:
    """The JSON value of ``raw`` (read from ``where``, holding ``what``)."""
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise UserError(f"{where}: cannot read {what} ({exc})") from None
    except RecursionError:  # nested deeper than the parser's recursion allows
        raise UserError(f"{where}: not a sbpbench meta.json (lists and objects nested deeper than "
                        f"{MAX_DEPTH} levels)") from None


def curves_file(directory: Path) -> Path | None:
    """A run folder's ``curves.csv``, or the ``curves.csv.gz`` of a promoted copy (None if neither)."""
    for name in ("curves.csv", "curves.csv.gz"):
        if (directory / name).is_file():
            return directory / name
    return None


def curves_columns(rows: list[dict[str, Any]]) -> list[str]:
    """The columns of ``curves.csv`` for ``rows``: :data:`COLUMNS` first, any extra columns after, sorted."""
    return COLUMNS + sorted({k for row in rows for k in row} - set(COLUMNS))


def curves_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows as a frame with the columns of :func:`curves_columns`."""
    import pandas as pd  # here: a run writes its files without pandas (module docstring)

    return _typed_if_empty(pd.DataFrame(rows, columns=curves_columns(rows)))


def _typed_if_empty(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame without rows with its columns typed as rows would type them: numbers outside
    :data:`TEXT_COLUMNS` (pandas gives the columns of an empty frame the type ``object``)."""
    if not frame.empty:
        return frame
    return frame.astype({c: float for c in frame.columns if c not in TEXT_COLUMNS})


#: Columns of ``curves.csv`` that hold text: read as written ("NA", "None" or "null" is a label, not a gap).
TEXT_COLUMNS = ("experiment", "dataset", "solver", "solver_name", "params", "status")
#: What an empty or missing measurement may look like in any other column (read as NaN).
NUMERIC_NA = ("", "nan", "NaN", "-nan", "NA", "N/A", "NULL", "null", "None", "<NA>")


def read_curves(directory: str | Path, traits: bool = False) -> pd.DataFrame:
    """Read every ``curves.csv`` below ``directory`` (a run folder or a tree of them) into one frame.

    ``directory`` may also be one such file. :data:`TEXT_COLUMNS` are read as strings,
    exactly as written; the other columns as numbers, NaN where empty. With ``traits``, for
    readers that draw or judge the curves (never for rows written back), a column per
    :data:`~sbpbench.solvers.base.TRAITS` from the ``meta.json`` beside each file, read by
    :func:`solver_trait`.

    Raises
    ------
    UserError
        A file is not a ``curves.csv`` of sbpbench (unreadable, or without its columns).
    """
    import pandas as pd  # here: a run writes its files without pandas (module docstring)

    directory = Path(directory)
    files = [directory] if directory.is_file() else sorted(directory.rglob("curves.csv"))
    files = [f for f in files if f.stat().st_size > 0]
    frames = [_with_traits(_read_curves_file(f), f.parent) if traits else _read_curves_file(f) for f in files]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return curves_frame([])
    return pd.concat(frames, ignore_index=True)


def _with_traits(frame: pd.DataFrame, directory: Path) -> pd.DataFrame:
    """``frame`` with a column per :data:`~sbpbench.solvers.base.TRAITS` from ``meta.json``'s
    ``solver_traits`` next to it (None for a solver it does not record; no column without any).

    A ``meta.json`` that is there but not sbpbench's is refused (:func:`read_meta`), not passed over."""
    traits = read_meta(directory).get("solver_traits") if (directory / "meta.json").exists() else None
    if frame.empty or not isinstance(traits, dict):
        return frame
    for trait in TRAITS:
        frame[trait] = [entry.get(trait) if isinstance(entry := traits.get(name), dict) else None
                        for name in frame["solver_name"]]
    return frame


def solver_trait(rows: pd.DataFrame, trait: str) -> bool:
    """A trait (:data:`~sbpbench.solvers.base.TRAITS`) of the solver of ``rows`` (rows of one solver).

    As its ``meta.json`` records it (a column of :func:`read_curves` with ``traits``); for results written
    before solvers recorded their traits, the built-in solver's value by name; otherwise the
    :class:`~sbpbench.solvers.base.Solver` default.
    """
    if trait in rows.columns and len(recorded := rows[trait].dropna()):
        return bool(recorded.iloc[0])
    cls = SOLVERS.get(str(rows["solver_name"].iloc[0])) if len(rows) else None
    return bool(getattr(cls if cls is not None else Solver, trait))


def _read_curves_file(path: Path) -> pd.DataFrame:
    """One ``curves.csv``, checked to have :data:`COLUMNS` with numbers outside :data:`TEXT_COLUMNS`."""
    if (kind := file_kind(path.stat().st_mode)) is not None:
        raise UserError(f"{path}: not a sbpbench curves.csv (it is {kind}, not a regular file)")
    if path.suffix != ".gz" and not _ends_a_line(path):  # a writer killed mid-append: its last row cut
        text = read_regular(path, "the run's curves").decode("utf-8", errors="replace")
        return parse_curves(io.StringIO(text[:text.rfind("\n") + 1]), path)
    return parse_curves(path, path)


def _ends_a_line(path: Path) -> bool:
    """Whether the file ``path`` is empty or ends with a line break."""
    with open(path, "rb") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def parse_curves(source: Path | io.StringIO, path: Path) -> pd.DataFrame:
    """The curves in ``source`` (a file, or its text), checked as :func:`read_curves` says.

    ``path`` names the file in messages.
    """
    import pandas as pd  # here: a run writes its files without pandas (module docstring)

    try:
        header = list(pd.read_csv(source, nrows=0).columns)
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise UserError(f"{path}: not a sbpbench curves.csv (missing columns {', '.join(missing)})")
        if isinstance(source, io.StringIO):
            source.seek(0)
        frame = pd.read_csv(source, dtype={c: str for c in TEXT_COLUMNS}, keep_default_na=False,
                            na_values={c: NUMERIC_NA for c in header if c not in TEXT_COLUMNS})
    except (EOFError, zlib.error) as exc:  # a compressed copy cut short or altered
        raise UserError(f"{path}: damaged: its compressed data cannot be read whole ({exc or 'EOFError'})") from None
    except (OSError, ValueError) as exc:  # pandas' parser and decoding errors are ValueErrors
        raise UserError(f"{path}: not a sbpbench curves.csv ({' '.join(str(exc).split())})") from None
    if frame.empty:  # only the header (no run finished, or every one failed before its first checkpoint)
        return _typed_if_empty(frame)
    text = [c for c in COLUMNS if c not in TEXT_COLUMNS and not pd.api.types.is_numeric_dtype(frame[c])]
    if text:
        raise UserError(f"{path}: not a sbpbench curves.csv (column {text[0]!r} holds text, numbers expected)")
    return frame
