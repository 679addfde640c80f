"""Declared, typed parameters: one declaration per parameter, read by everything that needs it.

A set of parameters is a frozen dataclass, a subclass of :class:`Params`, with one field per
parameter made by :func:`param`: the field's annotation is the parameter's type (``int``,
``float``, ``bool`` or ``str``; ``float | None`` for one that may be left unset), and
:func:`param` gives its default, one line of doc, the allowed values and a check.
:meth:`Params.declared` reads the declarations back as :class:`Param` objects, and every
instance is checked when it is made.

Every parameter a user sets is declared so, once: the kernel's (``KernelSpec`` in
``sbpbench/kernels/spec.py``), the problem's (``ProblemParams`` in ``sbpbench/problem.py``), the
budget's (``Budget`` in ``sbpbench/solvers/base.py``), the checkpoints' (``Checkpoints`` in
``sbpbench/experiment/config.py``) and each solver's (a ``SolverParams`` subclass). Config
validation, the scikit-learn estimators (their constructors' defaults, ``get_params`` and
docstrings), ``sbpbench solvers`` and the tables of ``docs/`` (``tests/test_docs.py``) read them.

The checks here (:func:`positive`, :func:`non_negative`, :func:`fraction`, ...) are the ones
the declarations name; each returns an error text for a bad value, or None. Each is documented,
with what it accepts and its error text, in ``docs/writing-a-solver.md`` ("Parameters and their
checks"), which ``tests/test_docs.py`` holds to the functions here.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, get_args, get_type_hints

#: A parameter check: an error text for a bad value, or None.
Check = Callable[[Any], str | None]
#: A check of a parameter's value against the training data ``(value, n, d)`` for ``n``
#: examples of ``d`` features: an error text, or None.
DataCheck = Callable[[Any, int, int], str | None]
#: Bytes a parameter's value makes a solver allocate, ``(value, n, d)``.
Footprint = Callable[[Any, int, int], float]

#: The smallest value that a positive parameter or config key accepts: the smallest normal
#: double (``sys.float_info.min``, about 2.2e-308). A smaller positive number is a subnormal,
#: whose reciprocal overflows: always a mistake, never a setting.
SMALLEST_POSITIVE = sys.float_info.min
#: Largest value of a parameter handed to compiled code as a C ``int`` (LIBLINEAR's ``max_iter``).
C_INT_MAX = 2**31 - 1
#: Largest integer a parameter accepts, in a config or an estimator (numpy's int64).
MAX_INT = 2**63 - 1


@dataclass(frozen=True)
class Param:
    """One declared parameter, as config validation, the estimators and the listings read it.

    Parameters
    ----------
    type : type
        ``int``, ``float``, ``bool`` or ``str``.
    default : Any
        Value when it is left out.
    doc : str
        One line for ``sbpbench solvers``, the estimators' docstrings and error messages.
    choices : tuple, optional
        Allowed values.
    check : callable, optional
        Returns an error text for a bad value, or None.
    data_check : callable, optional
        ``(value, n, d)``: an error text for a value the training data (``n`` examples of
        ``d`` features) cannot take (a mini-batch larger than ``n``), or None.
    memory : callable, optional
        ``(value, n, d)``: the bytes the value makes a solver allocate.
    optional : bool
        Whether None is allowed (no limit, not given): declared by a ``float | None``
        annotation.
    keywords : tuple of str
        Words allowed in place of a value, standing for one computed from the data (the
        estimators' ``sigma2='scale'``).
    """

    type: type
    default: Any
    doc: str
    choices: tuple | None = None
    check: Check | None = None
    data_check: DataCheck | None = None
    memory: Footprint | None = None
    optional: bool = False
    keywords: tuple[str, ...] = ()

    def error(self, value: Any) -> str | None:
        """Why ``value`` is not allowed (not one of ``choices``, or refused by ``check``), or None.

        None (for an ``optional`` parameter) and the ``keywords`` are always allowed; the
        value's type is not checked here (config validation and the estimators convert first).
        """
        if (value is None and self.optional) or (isinstance(value, str) and value in self.keywords):
            return None
        if self.choices is not None and value not in self.choices:
            return f"{value!r} is not one of: {', '.join(map(str, self.choices))}"
        return self.check(value) if self.check is not None else None

    def type_name(self, name: str | None = None) -> str:
        """The type as the docs write it (``float``, ``float or None``, ``float or 'scale'``), with
        ``name`` (such as "a finite number") in place of the type's own name when given."""
        extra = [*(repr(word) for word in self.keywords), *(["None"] if self.optional else [])]
        return " or ".join([name or self.type.__name__, *extra])


def param(default: Any, doc: str, *, choices: tuple | None = None, check: Check | None = None,
          data_check: DataCheck | None = None, memory: Footprint | None = None) -> Any:
    """Declare one field of a parameter dataclass (see :class:`Params`).

    Parameters
    ----------
    default : Any
        Value when the parameter is left out.
    doc : str
        One line for ``sbpbench solvers`` and the estimators' docstrings.
    choices : tuple, optional
        Allowed values.
    check : callable, optional
        Returns an error text for a bad value, or None (e.g. :func:`positive`).
    data_check : callable, optional
        ``(value, n, d)``: an error text when the value does not suit training data of ``n``
        examples and ``d`` features (e.g. :func:`at_most_examples`), or None; checked when
        the data are known, before any run (``Solver.refuse_data``).
    memory : callable, optional
        ``(value, n, d)``: bytes the value makes a solver allocate (``Solver.memory_needs``).

    Returns
    -------
    dataclasses.Field
        The field, with ``doc``, ``choices`` and the checks in its metadata.
    """
    return field(default=default, metadata={"doc": doc, "choices": choices, "check": check,
                                            "data_check": data_check, "memory": memory})


#: :meth:`Params.declared` of each class of parameters, once read.
_DECLARED: dict[type, dict[str, Param]] = {}


@dataclass(frozen=True)
class Params:
    """Base of every set of declared parameters: a frozen dataclass, one :func:`param` field each.

    The field's annotation is the parameter's type (``int``, ``float``, ``bool`` or ``str``;
    ``T | None`` for one that may be None). Every instance is checked when it is made (a
    value outside ``choices`` or refused by ``check`` raises :class:`ValueError` naming the
    field), so code handed one can rely on it.
    """

    def __post_init__(self) -> None:
        for name, spec in self.declared().items():
            if (why := spec.error(getattr(self, name))) is not None:
                raise ValueError(f"{name}: {why}")

    @classmethod
    def declared(cls) -> dict[str, Param]:
        """The declared parameters by name, in declaration order (read once per class: every
        instance is checked against them, a fixed cost of each small fit otherwise)."""
        if cls not in _DECLARED:
            _DECLARED[cls] = cls._declare()
        return dict(_DECLARED[cls])

    @classmethod
    def _declare(cls) -> dict[str, Param]:
        """:meth:`declared`, read from the fields and their type hints."""
        hints = get_type_hints(cls)
        found = {}
        for f in fields(cls):
            if "doc" not in f.metadata:
                raise TypeError(f"{cls.__name__}.{f.name}: declare parameters with param()")
            kind, optional = hints[f.name], False
            if isinstance(kind, types.UnionType):  # T | None
                kind, optional = next(t for t in get_args(kind) if t is not type(None)), type(None) in get_args(kind)
            meta = f.metadata
            found[f.name] = Param(kind, f.default, meta["doc"], meta["choices"], meta["check"], meta["data_check"],
                                  meta["memory"], optional)
        return found


def positive(value: float) -> str | None:
    """Check: the value must be positive, at least :data:`SMALLEST_POSITIVE` (1 for an integer); not NaN."""
    if not value > 0:
        return "must be positive"
    if value < SMALLEST_POSITIVE:
        return f"must be at least {SMALLEST_POSITIVE!r} (the smallest normal double)"
    return None


def non_negative(value: float) -> str | None:
    """Check: the value must be 0 or positive as :func:`positive` means it."""
    if not value >= 0:
        return "must be >= 0"
    return positive(value) if value else None


def fraction(value: float) -> str | None:
    """Check: the value must be in [0, 1] (nu, a target test error)."""
    return None if 0 <= value <= 1 else "must be in [0, 1]"


def positive_c_int(value: int) -> str | None:
    """Check: a positive integer that fits a C ``int`` (at most :data:`C_INT_MAX`)."""
    return positive(value) or (None if value <= C_INT_MAX else f"must be at most {C_INT_MAX}")


def at_most_examples(value: int, n: int, d: int) -> str | None:
    """Data check: the value (a number of examples, such as a mini-batch) must be at most ``n``."""
    return None if value <= n else f"{value} is more than the {n} training examples"
