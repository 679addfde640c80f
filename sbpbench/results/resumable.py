"""Which runs of a run folder ``--resume`` keeps: those whose rows in ``curves.csv`` check out.

A run is kept only when its summary in ``meta.json`` says it ended with a complete result
(:data:`~sbpbench.results.store.COMPLETE`) and its rows in ``curves.csv`` are exactly what the
writer wrote for it, as far as the file can tell:

* every row complete: the file ends with a line break (a file cut inside its last row, as a
  disk or a copy may leave it, does not), and each row has as many fields as the header;
* typed columns: every column outside :data:`~sbpbench.results.store.TEXT_COLUMNS` holds a
  number (or nothing), and ``seed``, ``run``, ``checkpoint``, ``iteration`` whole numbers;
* checkpoints in order: the run's rows are its checkpoints ``0, 1, ..., k-1``, in that order, and
  ``k`` is the ``checkpoints`` its summary counts;
* the run's own rows: each names the summary's solver, parameters and final status, and the
  last row's ``iteration``, ``kernel_evals``, ``train_time_s`` and ``test_error`` are the
  summary's.

Any other run is redone. A damaged run is said so in one note (``sbpbench: note: ...``) naming
the file and each run with why, and recorded in the resume's entry of ``meta.json``; it is never
kept with rows that are not its own (a row cut short would otherwise be written back cut).
"""

from __future__ import annotations

import csv
import gzip
import io
import logging
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sbpbench.errors import cut, printable
from sbpbench.files import as_written, read_regular
from sbpbench.results.store import COLUMNS, COMPLETE, NUMERIC_NA, TEXT_COLUMNS, curves_file, parse_curves

LOG = logging.getLogger(__name__)

#: Columns that hold whole numbers in every row.
WHOLE_COLUMNS = ("seed", "run", "checkpoint", "iteration")
#: A number as pandas writes one (and as Python's ``float`` reads it, without underscores).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf")
#: The summary's totals that its run's last row must hold, by column.
TOTALS = {"iteration": "iterations", "kernel_evals": "kernel_evals", "train_time_s": "train_time_s",
          "test_error": "test_error"}
#: Most characters of the note on damaged runs.
NOTE_CHARS = 400

#: A run's checkpoint rows and its summary.
Run = tuple[list[dict[str, Any]], dict[str, Any]]


@dataclass
class Kept:
    """What :func:`kept_runs` found: the runs to keep, and the damaged ones (``"LABEL run K: why"``)."""

    runs: list[Run] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)


@dataclass
class _Record:
    """One data row of ``curves.csv`` as text: its number (1 = first after the header), its fields
    by column, and what is wrong with it (None when nothing is)."""

    number: int
    fields: dict[str, str]
    wrong: str | None


def kept_runs(directory: Path, meta: dict[str, Any]) -> Kept:
    """The runs of a run folder to keep on resume, with their rows, and those damaged.

    Parameters
    ----------
    directory : pathlib.Path
        The run folder (``curves.csv``, or a promoted copy's ``curves.csv.gz``).
    meta : dict
        Its ``meta.json``, checked (:func:`~sbpbench.results.store.read_meta`).

    Returns
    -------
    Kept
        The complete runs whose rows check out (module docstring), in the summaries' order,
        with their rows as :func:`~sbpbench.results.store.read_curves` reads them; and, for each
        other run with a complete status, why it is not kept. Runs that ended otherwise
        (failed, interrupted) are in neither: they are redone as always.

    Raises
    ------
    UserError
        The curves file is not a regular file (a folder, a device, a pipe).
    """
    complete = [s for s in meta.get("runs", []) if str(s.get("status")).split(":")[0] in COMPLETE]
    path = curves_file(directory) or directory / "curves.csv"
    header, records, unreadable = _records(path)
    by_run: dict[tuple[str | None, int | None], list[_Record]] = {}
    for record in records:  # in file order
        by_run.setdefault((record.fields.get("solver"), _whole(record.fields.get("run"))), []).append(record)
    found = Kept()
    good: dict[tuple[str, int], list[_Record]] = {}
    for summary in complete:
        label = f"{summary.get('solver')} run {summary.get('run')}"
        if unreadable is not None:
            found.damaged.append(f"{label}: {unreadable}")
            continue
        mine = by_run.get((_written(summary.get("solver")), summary.get("run")), [])
        why = _damage(mine, summary)
        if why is None:
            good[(summary["solver"], summary["run"])] = mine
        else:
            found.damaged.append(f"{label}: {why}")
    rows = iter(_typed(path, header, [r for mine in good.values() for r in mine]))
    kept = {key: [next(rows) for _ in mine] for key, mine in good.items()}  # in the order given
    found.runs = [(kept[key], s) for s in complete if (key := (s.get("solver"), s.get("run"))) in kept]
    if found.damaged:
        LOG.warning(cut(printable(f"{path}: {len(found.damaged)} finished run(s) damaged, redone: "
                                  + "; ".join(found.damaged)), NOTE_CHARS))
    return found


def _records(path: Path) -> tuple[list[str], list[_Record], str | None]:
    """The header and data rows of a curves file as text, each row checked alone; or, when the file
    as a whole cannot be read as one (not there with rows to keep, not gzip, no header), why."""
    if not path.exists():
        return [], [], "no curves.csv"
    raw = read_regular(path, "the run's curves")
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            return [], [], f"{path.name} is not whole ({exc})"
    text = raw.decode("utf-8", errors="replace")  # a damaged byte then fails the checks of its row
    lines = list(csv.reader(io.StringIO(text, newline="")))
    if not lines or [c for c in COLUMNS if c not in lines[0]]:
        return [], [], f"{path.name} has no header of sbpbench's columns"
    header, rows = lines[0], lines[1:]
    records = [_record(i + 1, header, row) for i, row in enumerate(rows)]
    if records and not text.endswith("\n"):
        records[-1].wrong = f"row {len(records)} cut short (the file ends inside it)"
    return header, records, None


def _record(number: int, header: list[str], row: list[str]) -> _Record:
    """A data row by column, with the first thing wrong with it on its own."""
    fields = dict(zip(header, row))
    wrong = None
    if len(row) != len(header):
        wrong = f"row {number} has {len(row)} fields, the header {len(header)}"
    else:
        bad = next((c for c in COLUMNS if c not in TEXT_COLUMNS and not _is_number(fields[c])), None)
        bad = bad or next((c for c in WHOLE_COLUMNS if _whole(fields[c]) is None), None)
        if bad is not None:
            wrong = f"row {number}: column {bad!r} holds {fields[bad][:20]!r}"
    return _Record(number, fields, wrong)


def _written(value: Any) -> Any:
    """A summary's value as its rows in ``curves.csv`` hold it (:func:`~sbpbench.files.as_written` for text)."""
    return as_written(value) if isinstance(value, str) else value


def _is_number(text: str) -> bool:
    return text in NUMERIC_NA or _NUMBER.fullmatch(text) is not None


def _whole(text: str | None) -> int | None:
    """The whole number ``text`` writes (``3`` or ``3.0``), or None."""
    if text is None or _NUMBER.fullmatch(text) is None or "inf" in text:
        return None
    value = float(text)
    return int(value) if value.is_integer() else None


def _damage(mine: list[_Record], summary: dict[str, Any]) -> str | None:
    """Why the rows ``mine`` (in file order) are not the complete run of ``summary``, or None."""
    if (wrong := next((r.wrong for r in mine if r.wrong is not None), None)) is not None:
        return wrong
    if len(mine) != summary.get("checkpoints"):
        return f"{len(mine)} rows, its summary counts {summary.get('checkpoints')} checkpoints"
    for k, record in enumerate(mine):
        if _whole(record.fields["checkpoint"]) != k:
            return f"row {record.number} is checkpoint {record.fields['checkpoint']}, {k} expected (out of order)"
        for column in ("status", "solver_name", "params"):
            if column in summary and record.fields[column] != as_written(str(summary[column])):
                return (f"row {record.number}: {column} {record.fields[column][:40]!r}, "
                        f"its summary says {summary[column]!r}")
    if mine:
        last = mine[-1]
        for column, key in TOTALS.items():
            if key in summary and not _same(last.fields[column], summary[key]):
                return f"row {last.number}: {column} {last.fields[column]!r}, its summary says {summary[key]!r}"
    return None


def _same(text: str, value: Any) -> bool:
    """Whether a row's ``text`` writes the summary's number ``value`` (None and NaN: empty)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return text in NUMERIC_NA
    return text not in NUMERIC_NA and float(text) == float(value)


def _typed(path: Path, header: list[str], records: list[_Record]) -> list[dict[str, Any]]:
    """The rows ``records`` read as :func:`~sbpbench.results.store.read_curves` reads a file, as dicts."""
    if not records:
        return []
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([r.fields[c] for c in header] for r in records)
    return parse_curves(io.StringIO(out.getvalue()), path).to_dict("records")
