"""Solvers defined outside the package: a Python file a config names, or an installed entry point.

A solver file is imported once per process under a module name of its own
(``sbpbench_external_<hash of its path>``), and every :class:`~sbpbench.solvers.base.Solver`
subclass it defines with a ``name`` is registered in :data:`~sbpbench.solvers.base.SOLVERS`
(whether or not the file decorates it with ``@register``). A config names the file in the
solver entry's ``path`` key; the path travels with the run's task, so that a worker process
(``--jobs``, Dask) imports the file itself before the run (:func:`load_file` is idempotent).

An installed package offers solvers through the entry point group :data:`ENTRY_POINT_GROUP`
(each entry point naming a ``Solver`` subclass); they are registered when
:mod:`sbpbench.solvers` is imported, in every process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import warnings
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from sbpbench.errors import UserError
from sbpbench.solvers.base import SOLVERS, Solver, misnamed

#: The entry point group an installed package declares its solvers in.
ENTRY_POINT_GROUP = "sbpbench.solvers"

#: Where each solver that did not come with the package was found: its file, or ``entry point NAME (VALUE)``.
ORIGINS: dict[str, str] = {}
#: The file of each solver :func:`load_file` registered (absolute path).
FILES: dict[str, str] = {}


def load_file(path: str | Path) -> list[str]:
    """Import the solver file at ``path`` (once per process) and register the solvers it defines.

    Returns
    -------
    list of str
        The names of the solvers the file defines, in the order it defines them.

    Raises
    ------
    UserError
        The file does not exist, does not import (whatever it raises, ``sys.exit`` included;
        Ctrl-C propagates), defines no solver, or defines one whose
        name another solver already has. The message names the file.
    """
    path = Path(path).resolve()
    module_name = f"sbpbench_external_{hashlib.sha256(str(path).encode()).hexdigest()[:16]}"
    module = sys.modules.get(module_name)
    if module is None:
        if not path.is_file():
            raise UserError(f"{path}: no such solver file (a Python file defining a Solver subclass expected)")
        module = _import(path, module_name)
    defined = [cls for cls in vars(module).values()
               if isinstance(cls, type) and issubclass(cls, Solver) and cls.__module__ == module_name
               and isinstance(vars(cls).get("name"), str)]
    if not defined:
        raise UserError(f"{path}: defines no Solver subclass with a 'name' (see docs/writing-a-solver.md)")
    for cls in defined:
        _register(cls, str(path))
        FILES[cls.name] = str(path)
    return [cls.name for cls in defined]


def _import(path: Path, module_name: str) -> Any:
    """Execute the file at ``path`` as module ``module_name`` (kept in :data:`sys.modules`, for pickling)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"{path}: not a Python file (a .py file defining a Solver subclass expected)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickle look the module up while it runs
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # the user's code: any error, sys.exit too, is one line naming the file
        del sys.modules[module_name]
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C while it imports (or the file raising it): interrupted
            raise
        raise UserError(f"{path}: cannot import the solver file ({' '.join(f'{type(exc).__name__}: {exc}'.split())})"
                        ) from None
    return module


def _register(cls: type[Solver[Any]], origin: str) -> None:
    """Add ``cls`` to :data:`SOLVERS` (again: nothing), refusing a name another solver has and a
    parameter with a reserved name (:func:`~sbpbench.solvers.base.misnamed`)."""
    known = SOLVERS.get(cls.name)
    if known is cls:
        ORIGINS.setdefault(cls.name, origin)
        return
    if known is not None:
        where = ORIGINS.get(cls.name, "sbpbench")
        raise UserError(f"{origin}: solver {cls.name!r} is already defined (by {where}); give it another name")
    if (why := misnamed(cls)) is not None:
        raise UserError(f"{origin}: {why}")
    SOLVERS[cls.name] = cls
    ORIGINS[cls.name] = origin


def load_entry_points() -> None:
    """Register the solvers of every installed entry point of :data:`ENTRY_POINT_GROUP`.

    One that does not load, is not a ``Solver`` subclass or takes a name already taken is
    left out with a warning, so that a broken plugin never stops sbpbench itself.
    """
    for point in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {point.name} ({point.value})"
        try:
            cls = point.load()
            if not (isinstance(cls, type) and issubclass(cls, Solver) and isinstance(vars(cls).get("name"), str)):
                raise UserError(f"{origin}: not a Solver subclass with a 'name'")
            _register(cls, origin)
        except (Exception, SystemExit) as exc:  # a plugin's error (sys.exit too) is the plugin's, never sbpbench's
            warnings.warn(f"sbpbench: solver {origin} left out: {' '.join(str(exc).split())}", stacklevel=2)
