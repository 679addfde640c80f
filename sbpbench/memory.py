"""What the machine can hold: estimates of data-sized memory, checked before it is allocated.

Every allocation whose size the data or a parameter decides (feature storage, the kernel's row
cache and scratch vectors, mini-batch draws, a solver's vectors) is estimated where it is
made (:func:`sbpbench.kernels.memory_needs`, :meth:`sbpbench.solvers.base.Solver.memory_needs`)
and checked here, once, against the machine's memory before anything is allocated
(:func:`sbpbench.experiment.assemble.check_sizes`). So a LIBSVM index near 2^31, a
``dataset.n_features`` of a billion or a huge mini-batch ends in one line naming what would
not fit, never in numpy's ``MemoryError`` minutes later.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from sbpbench.errors import UserError, amount, soft_limit

#: Parts of an estimate named in a refusal (the largest ones).
SHOWN_PARTS = 4


class TooLarge(UserError, MemoryError):
    """An estimate larger than the machine's memory: a user mistake (exit 2) and a ``MemoryError``."""


def machine_memory() -> tuple[int | None, int | None]:
    """The machine's physical memory and the part available now, in bytes (None: not known).

    The total from :func:`os.sysconf` (``SC_PHYS_PAGES`` times ``SC_PAGE_SIZE``, POSIX); what is
    available from Linux's ``MemAvailable`` (free memory plus the caches the kernel can drop),
    else ``SC_AVPHYS_PAGES`` (free pages only). On a system that says neither (Windows), both
    are None and nothing is refused.
    """
    total = _pages("SC_PHYS_PAGES")
    available = _mem_available()
    if available is None:
        available = _pages("SC_AVPHYS_PAGES")
    return total, available


def _pages(name: str) -> int | None:
    """``sysconf(name) * sysconf("SC_PAGE_SIZE")`` in bytes, None where the system has no such value."""
    try:
        pages, size = os.sysconf(name), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows), or not this name
        return None
    return pages * size if pages > 0 and size > 0 else None


def _mem_available() -> int | None:
    """Linux's ``MemAvailable`` from ``/proc/meminfo``, in bytes, or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def require(needs: Mapping[str, float], purpose: str) -> None:
    """Refuse, with one line, an estimate larger than the machine's memory.

    Parameters
    ----------
    needs : mapping of str to float
        Bytes by what they hold (``{"kernel row cache": ..., "feature scratch vector": ...}``),
        estimated before any of it is allocated.
    purpose : str
        What needs them, starting the message (``"x.yaml: 300 training examples of 123 features"``).

    Raises
    ------
    TooLarge
        ``PURPOSE: needs about X of memory (the largest parts); this machine has N`` when the sum is
        more than the machine's physical memory, ``...; this process may use L of address space
        (ulimit -v): raise that limit`` when it is more than the process's limit on its address
        space (which the libraries' own mappings share, so an estimate below it may still fail).
        An estimate above what is available now but within the total is let through: other
        programs may free it, and swap may hold it.
    """
    total, available = machine_memory()
    limit = soft_limit("RLIMIT_AS")
    need = float(sum(needs.values()))
    if (total is None or need <= total) and (limit is None or need <= limit):
        return
    parts = sorted(needs.items(), key=lambda item: -item[1])[:SHOWN_PARTS]
    shown = ", ".join(f"{what} {amount(size)}" for what, size in parts if size >= 0.01 * need)
    if total is not None and need > total:
        now = f", {amount(available)} available now" if available is not None else ""
        raise TooLarge(f"{purpose}: needs about {amount(need)} of memory ({shown}); "
                       f"this machine has {amount(total)}{now}")
    raise TooLarge(f"{purpose}: needs about {amount(need)} of memory ({shown}); this process may use "
                   f"{amount(limit or 0)} of address space (ulimit -v): raise that limit")


def out_of_memory(exc: MemoryError) -> str:
    """What a :class:`MemoryError` that no estimate foresaw means, as one message: what was asked
    (numpy's says the size and shape of the array), what the process may have, what to change.

    Parameters
    ----------
    exc : MemoryError
        An allocation that failed (the machine's memory, or a limit such as ``ulimit -v``).

    Returns
    -------
    str
    """
    asked = " ".join(str(exc).split()) or "an allocation failed"
    total, available = machine_memory()
    has = f"; this machine has {amount(total)}" if total is not None else ""
    has += f", {amount(available)} available now" if available is not None and total is not None else ""
    limit = soft_limit("RLIMIT_AS")
    limited = f"; this process may use {amount(limit)} of address space (ulimit -v)" if limit is not None else ""
    change = "raise that limit, " if limit is not None else "free memory, "
    return (f"out of memory: {asked}{has}{limited}; {change}or use smaller data (fewer examples or "
            f"features), a smaller kernel cache_mb or fewer --jobs")

