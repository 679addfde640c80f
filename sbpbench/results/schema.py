"""The shape of a ``meta.json``: the one check every reader of a run folder relies on.

:func:`check_meta` is called by :func:`sbpbench.results.store.read_meta`, through which
``run --resume``, ``page``, ``plot``, ``check``, ``figures`` and ``report`` read a run's
metadata, so that a hand-edited or damaged file is refused in one line naming the key and
what it should hold, not met later as a ``TypeError`` deep in a reader.

Every key sbpbench writes is checked for its type where it is present; none is required
here (a reader that needs a key says so itself, e.g.
:func:`sbpbench.results.lookup.find_experiment` for ``resolved``), so that results written
before a key existed stay readable. Other keys are allowed (a later version may add some).
Nesting is bounded by :data:`MAX_DEPTH` (the deepest config a YAML file may hold, plus the
levels around it), which keeps every reader's recursion (comparing, YAML dumps) far from
Python's limit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sbpbench.errors import UserError, shown
from sbpbench.experiment.yamlfile import MAX_DEPTH as CONFIG_DEPTH

#: Deepest nesting of lists and objects a ``meta.json`` may hold: a config's (stored as written
#: under ``config``) and the few levels around it.
MAX_DEPTH = CONFIG_DEPTH + 8


@dataclass(frozen=True)
class Kind:
    """What a value must be: ``test`` says whether it is, ``what`` says it in a message."""

    what: str
    test: Callable[[Any], bool]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


TEXT = Kind("a string", lambda v: isinstance(v, str))
TEXT_OR_NULL = Kind("a string or null", lambda v: v is None or isinstance(v, str))
FLAG = Kind("true or false", lambda v: isinstance(v, bool))
FLAG_OR_NULL = Kind("true, false or null", lambda v: v is None or isinstance(v, bool))
NUMBER = Kind("a number", _number)
NUMBER_OR_NULL = Kind("a number or null", lambda v: v is None or _number(v))
COUNT = Kind("an integer >= 0", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0)
POSITIVE = Kind("an integer >= 1", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1)
COUNT_OR_NULL = Kind("an integer >= 0 or null", lambda v: v is None or COUNT.test(v))
INTEGER = Kind("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
OBJECT = Kind("an object", lambda v: isinstance(v, dict))
SHA256 = Kind("a sha256 (64 hexadecimal digits)",
              lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) is not None)
FINITE_OR_NULL = Kind("a finite number or null", lambda v: v is None or (_number(v) and math.isfinite(v)))

#: A schema: for each key, the kind of its value or the schema of the object it holds.
Schema = Mapping[str, "Kind | Mapping[str, Any] | ListOf | ObjectOf"]


@dataclass(frozen=True)
class ListOf:
    """A list whose items each follow ``item`` (a :class:`Kind` or a schema)."""

    item: Any


@dataclass(frozen=True)
class ObjectOf:
    """An object whose values (any keys) each follow ``value`` (a :class:`Kind` or a schema)."""

    value: Any


#: Each run's summary under ``runs`` (:func:`sbpbench.execution.loop.failed_result` and the others).
RUN: Schema = {
    "experiment": TEXT, "solver": TEXT, "solver_name": TEXT, "params": TEXT, "run": COUNT, "status": TEXT,
    "checkpoints": COUNT, "iterations": NUMBER, "kernel_evals": NUMBER, "train_time_s": NUMBER,
    "test_error": NUMBER_OR_NULL, "wall_time_s": NUMBER,
}

#: A data file the runs were computed from (:mod:`sbpbench.results.datafiles`).
DATA_FILE: Schema = {"path": TEXT, "sha256": SHA256}

#: ``resolved.dataset`` (:func:`sbpbench.experiment.assemble.prepare`).
DATASET: Schema = {
    "name": TEXT_OR_NULL, "path": TEXT_OR_NULL, "test_path": TEXT_OR_NULL, "n_train": COUNT_OR_NULL,
    "n_test": COUNT_OR_NULL, "n_features": COUNT_OR_NULL, "positive": NUMBER_OR_NULL, "zero_based": FLAG,
    "positives_train": COUNT, "positives_test": COUNT, "files": ObjectOf(DATA_FILE),
}

#: A problem's resolved parameters (:func:`sbpbench.experiment.assemble.resolve`).
PROBLEM: Schema = {"lambda": FINITE_OR_NULL, "nu": Kind("a number, a string or null", lambda v: v is None or
                                                         isinstance(v, str) or _number(v)),
                   "bias": FLAG, "optimum": OBJECT}

#: ``resolved.kernel``.
KERNEL: Schema = {"name": TEXT}

#: An entry of ``resolved.solvers``.
SOLVER: Schema = {"name": TEXT, "label": TEXT, "params": OBJECT, "path": TEXT, "kernel": KERNEL,
                  "problem": PROBLEM}

#: ``resolved`` (:func:`sbpbench.experiment.assemble.resolved_config`).
RESOLVED: Schema = {
    "dataset": DATASET, "kernel": KERNEL, "problem": PROBLEM, "solvers": ListOf(SOLVER), "budget": OBJECT,
    "checkpoints": OBJECT, "runs": POSITIVE, "repeat_deterministic": FLAG, "seed": INTEGER,
}

#: A ``meta.json`` (:func:`sbpbench.execution.sweep.run_experiments` writes it).
META: Schema = {
    "experiment": TEXT, "config_file": TEXT_OR_NULL, "config": OBJECT, "resolved": RESOLVED,
    "executor": TEXT_OR_NULL, "jobs": COUNT_OR_NULL, "solver_traits": ObjectOf(ObjectOf(FLAG_OR_NULL)),
    "solver_streams": ObjectOf(TEXT), "runs_once": ListOf(TEXT),
    "versions": ObjectOf(TEXT_OR_NULL), "python": TEXT_OR_NULL, "git_commit": TEXT_OR_NULL,
    "git_dirty": FLAG_OR_NULL, "host": OBJECT, "dataset_copy": TEXT_OR_NULL, "started": TEXT, "finished": TEXT,
    "interrupted": FLAG, "run_id": TEXT, "source": TEXT, "runs": ListOf(RUN), "resumes": ListOf(OBJECT),
    "redos": ListOf(OBJECT),
}


def check_meta(meta: Any, path: str | Path) -> dict[str, Any]:
    """Check that ``meta`` (a parsed ``meta.json``) has the shape sbpbench writes; return it.

    Parameters
    ----------
    meta : Any
        The parsed file.
    path : str or pathlib.Path
        The file, for the message.

    Returns
    -------
    dict
        ``meta``, unchanged.

    Raises
    ------
    UserError
        ``PATH: not a sbpbench meta.json: ...``: not an object, nested deeper than
        :data:`MAX_DEPTH`, or a key sbpbench writes holding a value of another kind (the
        first such key, dotted, e.g. ``'runs[2].status'``).
    """
    def refuse(why: str) -> UserError:
        return UserError(f"{path}: not a sbpbench meta.json ({why})")

    if not isinstance(meta, dict):
        raise refuse(f"a JSON object expected, found a {type(meta).__name__}")
    if _depth(meta) > MAX_DEPTH:
        raise refuse(f"lists and objects nested deeper than {MAX_DEPTH} levels")
    if (wrong := _first_wrong(meta, META, "")) is not None:
        key, value, what = wrong
        raise refuse(f"key {key!r} holds {shown(value)}, {what} expected")
    return meta


def _depth(value: Any) -> int:
    """The nesting depth of lists and objects in ``value`` (0 for a scalar), without recursion;
    counted up to ``MAX_DEPTH + 1`` only (deeper is refused anyway)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_DEPTH:
            stack.extend((child, level + 1) for child in children)
    return deepest


def _first_wrong(value: Any, rule: Any, key: str) -> tuple[str, Any, str] | None:
    """The first ``(dotted key, value, what was expected)`` in ``value`` that breaks ``rule``, or None."""
    if isinstance(rule, Kind):
        return None if rule.test(value) else (key, value, rule.what)
    if isinstance(rule, ListOf):
        if not isinstance(value, list):
            return key, value, "a list"
        items = ((f"{key}[{i}]", item, rule.item) for i, item in enumerate(value))
    elif isinstance(rule, ObjectOf):
        if not isinstance(value, dict):
            return key, value, "an object"
        items = ((_dotted(key, k), v, rule.value) for k, v in value.items())
    else:  # a schema
        if not isinstance(value, dict):
            return key, value, "an object"
        items = ((_dotted(key, k), value[k], sub) for k, sub in rule.items() if k in value)
    return next((found for sub_key, item, sub_rule in items
                 if (found := _first_wrong(item, sub_rule, sub_key)) is not None), None)


def _dotted(key: str, name: str) -> str:
    return f"{key}.{name}" if key else str(name)


def require(meta: dict[str, Any], path: str | Path, keys: tuple[str, ...]) -> None:
    """Refuse a checked ``meta`` (:func:`check_meta`) that lacks one of ``keys`` (dotted), which a
    reader needs.

    Raises
    ------
    UserError
        ``PATH: not a sbpbench meta.json (no key 'resolved.dataset.n_train', which ... reads)``.
    """
    for key in keys:
        node: Any = meta
        for part in key.split("."):
            if not isinstance(node, dict) or node.get(part) is None:
                raise UserError(f"{path}: not a sbpbench meta.json (no key {key!r}; "
                                "not written by this sbpbench, or edited)")
            node = node[part]

