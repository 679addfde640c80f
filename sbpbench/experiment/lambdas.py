"""lambda as a config gives it: a number or an arithmetic expression in n.

The papers set lambda relative to the training size (the SBP paper's ``1/(100 n)``, the SGD
paper's ``1/(C n)``), so a config may write it as an expression in ``n``. The expression is
evaluated safely (no Python ``eval``), in double precision, and checked to be a finite
positive number at the real ``n``.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

from sbpbench.errors import shown
from sbpbench.params import positive

_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos,
}

#: Longest lambda expression (characters) and most nodes of its syntax tree.
MAX_EXPRESSION_CHARS = 200
MAX_EXPRESSION_NODES = 64

_HOW = "use a number or an expression in n such as 1/n or 1/(100*n)"


def eval_lambda(expr: str | float, n: int) -> float:
    """Evaluate lambda given as a number or an arithmetic expression in ``n`` (e.g. ``1/(100*n)``).

    The expression (at most :data:`MAX_EXPRESSION_CHARS` characters and
    :data:`MAX_EXPRESSION_NODES` syntax nodes; numbers, ``n``, ``+ - * / **`` and
    parentheses) is evaluated in double precision, so it takes time proportional to its
    length: ``n**n**n`` overflows at once. While every integer involved stays below 2**53
    (as in every shipped config) the result is the double that Python's integer arithmetic
    gave before.

    Parameters
    ----------
    expr : str or float
        The value from the config.
    n : int
        Number of training examples.

    Returns
    -------
    float
        The value; it may be negative, zero, infinite or NaN (:func:`lambda_value` checks it).

    Raises
    ------
    ValueError
        When the expression is not allowed, overflows, divides by zero or is not real.
    """
    if isinstance(expr, (int, float)):
        return float(expr)
    text = str(expr)
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"expression longer than {MAX_EXPRESSION_CHARS} characters; {_HOW}")

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id == "n":
            return float(n)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.operand))
        raise ValueError(_HOW)

    try:
        tree = ast.parse(text, mode="eval")
        if sum(1 for _ in ast.walk(tree)) > MAX_EXPRESSION_NODES:
            raise ValueError(f"more than {MAX_EXPRESSION_NODES} terms; {_HOW}")
        value = walk(tree)
    except (SyntaxError, ValueError, TypeError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, ValueError) else _HOW
        raise ValueError(f"cannot evaluate {shown(expr)}: {reason}") from None
    except ZeroDivisionError:
        raise ValueError(f"cannot evaluate {shown(expr)} at n = {n}: division by zero") from None
    except OverflowError:
        raise ValueError(f"cannot evaluate {shown(expr)} at n = {n}: too large for a double") from None
    if isinstance(value, complex):
        raise ValueError(f"cannot evaluate {shown(expr)} at n = {n}: not a real number")
    return value


def lambda_value(expr: str | float, n: int, fail: Callable[[str], None]) -> float:
    """lambda at ``n`` training examples, checked: finite and positive as
    :func:`~sbpbench.params.positive` means it (at least the smallest normal double).

    Parameters
    ----------
    expr : str or float
        A number or an expression in ``n`` (see :func:`eval_lambda`).
    n : int
        Number of training examples.
    fail : callable
        Called with the error text when lambda is not acceptable; it must raise.

    Returns
    -------
    float
    """
    try:
        value = eval_lambda(expr, n)
    except ValueError as exc:
        fail(str(exc))
    at = f" at n = {n}" if isinstance(expr, str) else ""
    if not math.isfinite(value):
        fail(f"gives lambda = {value}{at}: expected a finite number")
    if msg := positive(value):
        fail(f"gives lambda = {value!r}{at}: {msg}")
    return value
