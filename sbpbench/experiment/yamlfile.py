"""Reading YAML for configs and ``--set`` values: safe, strict, and bounded.

A document that would silently lose a value (a duplicate key) or exhaust the machine (alias
expansion, deep nesting, an integer of thousands of digits) is refused with one line naming
the file and the place.
"""

from __future__ import annotations

from typing import Any

import yaml

from sbpbench.errors import UserError, cut, shown

#: Most values (scalars, lists and mappings) a YAML document may hold with its aliases expanded.
MAX_VALUES = 100_000

#: Deepest nesting of lists and mappings in a YAML document.
MAX_DEPTH = 100

#: Most characters of a YAML parser's complaint shown in an error.
MAX_PROBLEM_CHARS = 200


class _Refused(yaml.MarkedYAMLError):
    """A document :class:`ConfigLoader` refuses; its problem is shown without "invalid YAML"."""


class ConfigLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing what would silently lose a value or exhaust the machine.

    Refused: a key given twice in one mapping (YAML would keep the last), an integer of
    more than 4300 digits (Python cannot read it), lists and mappings nested deeper than
    :data:`MAX_DEPTH`, and aliases that expand to more than :data:`MAX_VALUES` values (an
    alias bomb) or refer to a list or mapping that contains them. The checks run on the
    composed nodes, before any value is built, in time linear in the document's size.
    """

    def compose_document(self):
        node = super().compose_document()
        _check_expansion(node)
        return node

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # '<<' merges are meant to be overridden
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:
                    continue  # unhashable: the base loader refuses it
                if duplicate:
                    raise _Refused(problem=f"duplicate key {shown(key)}", problem_mark=key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node, deep=False):
        """PyYAML's construction, with a value its constructor cannot build (a date such as
        ``2020-99-99``, ``!!float x``) refused at its place instead of raising Python's error."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, OverflowError, KeyError) as exc:  # KeyError: !!bool x
            if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int" and len(node.value) > 4300:
                problem = f"an integer of {len(node.value)} characters is too long"  # Python reads at most 4300 digits
            else:
                tag = node.tag.rpartition(":")[2] if node.tag.startswith("tag:yaml.org,2002:") else node.tag
                problem = f"cannot read {shown(node.value)} as {tag} ({exc})"
            raise _Refused(problem=problem, problem_mark=node.start_mark) from None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_expansion(root: yaml.Node | None) -> None:
    """Refuse a composed document that expands to more than :data:`MAX_VALUES` values, nests
    deeper than :data:`MAX_DEPTH` or contains itself (an alias is one node reached twice)."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    started: set[int] = set()
    stack = [(root, False)] if root is not None else []
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            children = _children(node)
            size[key] = 1 + sum(size[id(c)] for c in children)
            height[key] = 1 + max((height[id(c)] for c in children), default=0)
            if size[key] > MAX_VALUES:
                raise _Refused(problem=f"aliases expand to more than {MAX_VALUES} values",
                               problem_mark=node.start_mark)
            if height[key] > MAX_DEPTH:
                raise _Refused(problem=f"lists and mappings nested deeper than {MAX_DEPTH} levels",
                               problem_mark=node.start_mark)
        elif key not in size:
            if key in started:
                raise _Refused(problem="an alias refers to a list or mapping that contains it",
                               problem_mark=node.start_mark)
            started.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))


def load_yaml(text: str, source: str) -> Any:
    """Parse one YAML document with :class:`ConfigLoader`.

    Parameters
    ----------
    text : str
        The document.
    source : str
        What it came from, for error messages (a file name, or ``--set ...``).

    Returns
    -------
    Any
        The document's value.

    Raises
    ------
    UserError
        One line ``SOURCE[:LINE]: ...`` for invalid or refused YAML.
    """
    try:
        loader = ConfigLoader(text)  # its reader refuses control characters here, before parsing
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise UserError(f"{source}:{line}: invalid YAML: character U+{code:04X} in column {column} is not "
                        "allowed (YAML allows no control character but tab and line breaks)") from None
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or "not valid YAML"
        kind = "" if isinstance(exc, _Refused) else "invalid YAML: "
        raise UserError(f"{where}: {kind}{cut(problem, MAX_PROBLEM_CHARS)}") from None
    except RecursionError:  # the composer recurses once per level, before the depth check
        raise UserError(f"{source}: lists and mappings nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


# ----------------------------------------------------------------------------- overrides and files


def apply_overrides(data: Any, overrides: list[str], source: str) -> Any:
    """Apply ``KEY=VALUE`` overrides (dotted keys, YAML values) to a config mapping.

    For example ``budget.epochs=3`` or ``solvers=[sbp]``. Intermediate mappings are created
    as needed; the result is validated like the file itself.
    """
    if not overrides:
        return data
    data = dict(data) if isinstance(data, dict) else {}
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UserError(f"--set {shown(item)}: expected KEY=VALUE, for example budget.epochs=3")
        value = load_yaml(text, f"--set {shown(item)}")
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            child = dict(child) if isinstance(child, dict) else {}
            node[part] = child
            node = child
        node[parts[-1]] = value
    return data
