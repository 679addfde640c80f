"""Shared by the benchmark scripts: machine facts, updating one section of BENCHMARKS.md, and
its table of targets (one row per target, each written by the script that measures it)."""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
from importlib import metadata
from pathlib import Path


def positive(kind: type):
    """An argparse ``type``: ``kind`` of the text, refused (one line, exit 2) unless above zero."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got {text!r}")
        return value
    return parse


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
    text = path.read_text(encoding="utf-8") if path.exists() else header
    section = f"## {title}\n\n{body.rstrip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip() + "\n\n" + section
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def load_average() -> float:
    """The machine's 1-minute load average (NaN where the OS does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")


#: The speed targets of issue #28 (measured as ratios in one run on 2 cores), in the order of
#: the targets table, by key: what the target is and the script that measures it.
TARGETS = {
    "sbp-iteration": ("unbiased SBP iteration on full Adult at most 0.13 ms, within 2x of its memory bound",
                      "bench_sbp_iteration.py"),
    "sbp-iteration-bias": ("biased SBP iteration on full Adult at most 0.12 ms", "bench_sbp_iteration.py"),
    "sbp-vs-libsvm": ("SBP with bias reaches LIBSVM's test error + 0.1 pp in at most 1/50 of LIBSVM's time "
                      "(medians of 3 runs)", "bench_vs_libsvm.py"),
    "smo-vs-libsvm": ("our SMO reaches LIBSVM's objective in at most 1.0x LIBSVM's time (medians of 3 runs)",
                      "bench_vs_libsvm.py"),
    "mnist-row": ("a full-MNIST Gaussian row at least 70% of its storage's bandwidth bound", "bench_kernels.py"),
    "mnist-figure2": ("the whole SBP Figure 2 on full MNIST under 1 hour on 2 cores", "bench_figure2.py"),
}
TARGETS_TITLE = "Targets (issue #28)"


def update_target(path: str | Path, key: str, measured: str, met: bool) -> None:
    """Write target ``key``'s row (of :data:`TARGETS`) into the targets section of ``path``:
    what was measured (with the load average), met or missed, and the date; the other rows are
    kept as their scripts last wrote them, a target never measured says so."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found = re.search(rf"^## {re.escape(TARGETS_TITLE)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    rows = {}
    for line in (found.group(1) if found else "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] in {what for what, _ in TARGETS.values()}:
            rows[cells[0]] = line
    what, script = TARGETS[key]
    rows[what] = (f"| {what} | {measured} | {'met' if met else 'missed'} | {script} | "
                  f"{_dt.date.today().isoformat()} |")
    table = ["| target | measured (load average, 1 min) | verdict | script | date |", "|---|---|---|---|---|"]
    table += [rows.get(w, f"| {w} | not measured yet | - | {s} | - |") for w, s in TARGETS.values()]
    body = ("Every target of issue #28, as the script named last measured it (`make bench` runs them all); "
            "each ratio is against its reference timed in the same process run.\n\n" + "\n".join(table))
    if not found and (first := re.search(r"^## ", text, re.M)):  # first written: before every other section
        text = text[:first.start()] + f"## {TARGETS_TITLE}\n\n(to be written)\n\n" + text[first.start():]
        path.write_text(text, encoding="utf-8")
    update_section(path, TARGETS_TITLE, body)
