"""Run the ``sbpbench`` command line in-process, as a user would, and return its exit code."""

from __future__ import annotations

import sys

from sbpbench import cli


def sbpbench(monkeypatch, *args) -> int:
    """Run ``sbpbench ARGS...`` in this process; return its exit code (0 when it returns)."""
    monkeypatch.setattr(sys, "argv", ["sbpbench", *map(str, args)])
    try:
        cli.main()
    except SystemExit as exc:
        return exc.code
    return 0
