"""Shared by the benchmark scripts: machine facts and updating one section of BENCHMARKS.md."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
from importlib import metadata
from pathlib import Path


def machine_facts() -> str:
    """One line naming the machine, the date and the library versions of this run."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "numba", "scipy", "scikit-learn"))
    return (f"Measured {_dt.date.today().isoformat()} on {cpu}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, {versions}.")


def update_section(path: str | Path, title: str, body: str) -> None:
    """Replace (or append) the section ``## title`` of a Markdown file with ``body``."""
    path = Path(path)
    header = "# Benchmarks\n\nWritten by `make bench`; every number comes from the script named in its section.\n"
    text = path.read_text() if path.exists() else header
    section = f"## {title}\n\n{body.rstrip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip() + "\n\n" + section
    path.write_text(text.rstrip() + "\n")


def load_average() -> float:
    """The machine's 1-minute load average (NaN where the OS does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")
