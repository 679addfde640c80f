"""Running the ``sbpbench`` command line as a user would, in this process or in a new one, and
reading what it says when it refuses bad input."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import pytest

from sbpbench import cli

#: The checkout: what a new process must import ``sbpbench`` (and ``tests``) from.
ROOT = Path(__file__).resolve().parents[1]
#: Longest error line accepted (the command line cuts the values it shows well below this).
MAX_LINE = 2000


def sbpbench(monkeypatch, *args) -> int:
    """Run ``sbpbench ARGS...`` in this process; return its exit code (0 when it returns).

    Its output goes to this process's standard output and error (``capsys`` reads them).
    """
    monkeypatch.setattr(sys, "argv", ["sbpbench", *map(str, args)])
    try:
        cli.main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0


def invoke(*args) -> tuple[int, str]:
    """:func:`sbpbench` where no fixture is at hand (Hypothesis tests): (exit code, standard error).

    Any exception other than the command line's own exit propagates and fails the test.
    """
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stderr(err), \
            contextlib.redirect_stdout(io.StringIO()):
        code = sbpbench(monkeypatch, *args)
    return code, err.getvalue()


def one_error_line(stderr: str, *needles: str) -> str:
    """The line that ends the standard error of a command refused on bad input, checked: one line
    ``sbpbench: error: ...`` of at most :data:`MAX_LINE` characters holding every needle, after
    nothing but notes (``sbpbench: note: ...``), so with no traceback. Returned without its newline."""
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("sbpbench: note: ")]
    assert len(lines) == 1 and lines[0].startswith("sbpbench: error: "), stderr[-2000:]
    assert len(lines[0]) <= MAX_LINE, lines[0][:200]
    assert all(needle in lines[0] for needle in needles), (needles, lines[0])
    return lines[0]


def interruption(lines: list[str], experiment: str) -> tuple[tuple[int, ...], str, str]:
    """What ``sbpbench run`` said of ``experiment`` on standard error (``lines``) after Ctrl-C: its
    numbers of runs finished, interrupted and not started, the run folder it named, and the command
    that finishes the runs (the last line, alone so that it can be copied)."""
    said = " ".join(" ".join(lines).split())  # a long line may continue on the next
    start = f"sbpbench: interrupted: {experiment}: "
    line = said[said.index(start) + len(start):].split(" sbpbench: ")[0]
    counts, _, folder = line.rpartition(" (")
    return tuple(int(n) for n in re.findall(r"\d+", counts)), folder.removesuffix(")"), lines[-1]


def validate_text(monkeypatch, capsys, folder: Path, text: str | bytes, *args) -> str:
    """Write ``text`` to ``folder/exp.yaml``, check that ``sbpbench validate`` refuses it (exit 2), and
    return its :func:`one_error_line`."""
    path = folder / "exp.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert sbpbench(monkeypatch, "validate", path, *args) == 2
    return one_error_line(capsys.readouterr().err)


def command(*args) -> list[str]:
    """The command line of ``sbpbench ARGS...`` in a new Python process (with :func:`environment`)."""
    return [sys.executable, "-m", "sbpbench", *map(str, args)]


def environment(**changes: str) -> dict[str, str]:
    """This process's environment, with the checkout first on ``PYTHONPATH`` and ``changes`` made."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **changes}
