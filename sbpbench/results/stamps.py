"""The times a run records and the names of its folders, safe when the wall clock steps.

- **Durations** (``wall_time_s``, ``train_time_s``, the time a dataset took to prepare) come from
  the monotonic clock (:func:`time.perf_counter`) only, never from the wall clock, which NTP or
  a user may step by any amount while a run goes on.
- **Timestamps** (``started``, ``finished`` and each resume's ``time`` in ``meta.json``) are the
  wall clock read in UTC, written in ISO 8601 with their offset (``2026-11-29T00:46:03+00:00``).
  ``finished`` is the writer's start plus the monotonic time since (:class:`Stopwatch`), never
  before ``started``; no duration is computed from two timestamps.
- **Run folder names** are the start in UTC, ``YYYYmmddTHHMMSSZ``, with ``-k`` (k = 1, 2, ...)
  when that name is taken: the same in every time zone and across a daylight-saving change.
  Folders named before (``YYYYmmdd-HHMMSS[-k]``, the local time of the machine that made them)
  are still read; :func:`~sbpbench.results.lookup.run_folders` orders both kinds by the instant
  each was started (docs/results.md, "Run folders").
"""

from __future__ import annotations

import datetime as _dt
import re
import time
from typing import NamedTuple

#: A run folder's name: the start in UTC (``20261129T004603Z``), or as named before that, in the
#: local time of the machine that made it (``20261129-004603``); either with ``-k`` when taken.
_UTC_NAME = re.compile(r"(\d{8}T\d{6})Z(?:-(\d+))?")
_LOCAL_NAME = re.compile(r"(\d{8}-\d{6})(?:-(\d+))?")


def utc_now() -> _dt.datetime:
    """The wall clock (:func:`time.time`) as an aware UTC time."""
    return _dt.datetime.fromtimestamp(time.time(), _dt.UTC)


def timestamp(when: _dt.datetime) -> str:
    """``when`` in UTC, ISO 8601 with its offset, to the second (``2026-11-29T00:46:03+00:00``)."""
    return when.astimezone(_dt.UTC).isoformat(timespec="seconds")


def now() -> str:
    """The wall clock now as a :func:`timestamp`."""
    return timestamp(utc_now())


def parse_timestamp(text: object) -> _dt.datetime | None:
    """A timestamp as ``meta.json`` holds it, as an aware time; None for anything else (not text,
    not ISO 8601, or without an offset, whose instant is unknown)."""
    if not isinstance(text, str):
        return None
    try:
        when = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.utcoffset() is not None else None


class Stopwatch:
    """The wall clock read once at its start, and the monotonic clock since.

    Its :meth:`now` is the start plus the monotonic time elapsed, so a timestamp taken from it
    never precedes its start, whatever the wall clock does meanwhile.
    """

    def __init__(self) -> None:
        self.started = utc_now()
        self._t0 = time.perf_counter()

    def elapsed(self) -> float:
        """Seconds since the start, by the monotonic clock."""
        return time.perf_counter() - self._t0

    def now(self) -> _dt.datetime:
        """The start plus :meth:`elapsed`, in UTC."""
        return self.started + _dt.timedelta(seconds=self.elapsed())

    def end(self, started: object) -> str:
        """The :func:`timestamp` that ends a record begun at ``started`` (a timestamp, possibly from
        an earlier process: a resumed run folder's): :meth:`now`, or ``started`` if that is later."""
        begun = parse_timestamp(started)
        return timestamp(max(self.now(), begun) if begun is not None else self.now())


def folder_name(when: _dt.datetime, k: int = 0) -> str:
    """A run folder's name for a start at ``when``: ``YYYYmmddTHHMMSSZ`` in UTC, ``-k`` after it for k > 0."""
    name = when.astimezone(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{name}-{k}" if k else name


class FolderStamp(NamedTuple):
    """What a run folder's name says of its start."""

    #: The time in the name, aware: UTC for a name in UTC; for an older name, its local time read
    #: as if it were UTC (its zone is unknown: :func:`~sbpbench.results.lookup.run_folders` prefers
    #: the ``started`` of its ``meta.json``).
    when: _dt.datetime
    #: The ``-k`` of a name that was taken (0 without).
    k: int
    #: Whether the name is in UTC (``...Z``), not in a local time.
    utc: bool


def folder_stamp(name: str) -> FolderStamp | None:
    """The :class:`FolderStamp` of a run folder's name, or None if the name is not one (nor a real date)."""
    for pattern, fmt, utc in ((_UTC_NAME, "%Y%m%dT%H%M%S", True), (_LOCAL_NAME, "%Y%m%d-%H%M%S", False)):
        if match := pattern.fullmatch(name):
            try:
                when = _dt.datetime.strptime(match[1], fmt).replace(tzinfo=_dt.UTC)
            except ValueError:  # 20261399-...: digits, no date
                return None
            return FolderStamp(when, int(match[2] or 0), utc)
    return None
