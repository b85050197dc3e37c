"""YAML read the way Kubernetes reads it (sigs.k8s.io/yaml over go-yaml v2), fast.

libyaml (PyYAML's C parser) builds the node graph; scalars are resolved by go-yaml v2's YAML
1.1 rules rather than PyYAML's, and the graph becomes plain dicts, lists and scalars in one
iterative pass. Where the two differ, Kubernetes wins:

- ``on``/``off``/``yes``/``no``/``y``/``n`` (any of their three casings) are booleans;
- integers are Go's ``strconv.ParseInt(s, 0, 64)`` after removing ``_``: ``010`` is 8,
  ``0o10`` and ``0x10`` and ``0b10`` are integers, ``08`` is the float 8.0;
- floats need no dot (``1e3`` is 1000.0), base-60 numbers (``1:30``) stay strings;
- timestamps stay strings (go-yaml v2 keeps them so for untyped targets);
- the bare ``=`` is the string "=" (PyYAML's SafeLoader refuses its "value" tag);
- mapping keys become strings as JSON needs them (``true``, ``1``, ``null``).

Aliases are shared, never copied; an alias cycle and an alias expansion beyond the node
budget are errors, as nesting deeper than MAX_DEPTH is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.cyaml import CParser  # type: ignore[attr-defined]

MAX_DEPTH = 200
MAX_EXPANDED_NODES = 20_000_000

_TAG = "tag:yaml.org,2002:"
_BOOL = re.compile(
    r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE"
    r"|on|On|ON|off|Off|OFF)\Z"
)
_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
# Anything go-yaml v2 may read as a number; _go_number decides which, or a string after all.
_NUMBER = re.compile(r"[-+]?[0-9.][0-9a-zA-Z_.+-]*\Z")
_INTEGER = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_SPECIAL_FLOAT = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z|\.(?:nan|NaN|NAN)\Z")
_INT64 = range(-(2**63), 2**64)
_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})


class YamlError(ValueError):
    """A stream Kubernetes would not read; the message says where."""


class _Resolver(yaml.resolver.BaseResolver):
    pass


for _tag, _pattern, _first in (
    ("bool", _BOOL, "yYnNtTfFoO"),
    ("null", _NULL, ["~", "n", "N", ""]),
    ("float", _SPECIAL_FLOAT, "-+."),
    ("int", _NUMBER, "-+.0123456789"),
    ("merge", re.compile(r"<<\Z"), "<"),
):
    _Resolver.add_implicit_resolver(_TAG + _tag, _pattern, list(_first))


class _Loader(CParser, _Resolver):
    def __init__(self, stream: bytes | str) -> None:
        CParser.__init__(self, stream)
        _Resolver.__init__(self)


def _go_number(text: str) -> int | float | str:
    """go-yaml v2: strconv.ParseInt/ParseUint(s, 0, 64), then its float syntax, else a string."""
    plain = text.replace("_", "")
    if _INTEGER.match(plain):
        sign = -1 if plain.startswith("-") else 1
        digits = plain.lstrip("+-")
        octal = len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()
        value = sign * int(digits, 8 if octal else 0)
        if value in _INT64:
            return value
    if _GO_FLOAT.match(plain):
        return float(plain)
    return text


def _scalar(node: yaml.ScalarNode) -> Any:
    tag, value = node.tag, node.value
    if tag == _TAG + "str" or not tag.startswith(_TAG):
        return value
    kind = tag[len(_TAG) :]
    if kind == "bool":
        return value in _TRUE or value.lower() == "true"
    if kind == "null":
        return None
    if kind == "int":
        return _go_number(value)
    if kind == "float":
        if value.lower() == ".nan":
            return math.nan
        return -math.inf if value.startswith("-") else math.inf
    if kind in ("timestamp", "merge", "value"):
        return value
    if kind == "binary":
        return value.replace("\n", "")
    raise YamlError(f"line {node.start_mark.line + 1}: unsupported tag !!{kind}")


def _key(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    raise TypeError


class _Builder:
    """Turns one document's node graph into plain data without recursion."""

    def __init__(self) -> None:
        self.built: dict[int, Any] = {}
        self.expanded: dict[int, int] = {}

    def build(self, root: yaml.Node) -> Any:
        if isinstance(root, yaml.ScalarNode):
            return _scalar(root)
        on_path: set[int] = set()
        stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
        while stack:
            node, depth, children_done = stack.pop()
            ident = id(node)
            if children_done:
                on_path.discard(ident)
                self._finish(node)
                continue
            if ident in self.built:
                continue
            if ident in on_path:
                raise YamlError(
                    f"line {node.start_mark.line + 1}: alias refers to a node that"
                    " contains it (a cycle)"
                )
            if depth > MAX_DEPTH:
                raise YamlError(
                    f"line {node.start_mark.line + 1}: nested deeper than {MAX_DEPTH} levels"
                )
            on_path.add(ident)
            stack.append((node, depth, True))
            for child in self._child_nodes(node):
                if isinstance(child, yaml.ScalarNode):
                    continue
                stack.append((child, depth + 1, False))
        return self.built[id(root)]

    @staticmethod
    def _child_nodes(node: yaml.Node) -> Iterator[yaml.Node]:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                yield key
                yield value
        else:
            yield from node.value

    def _value(self, node: yaml.Node) -> tuple[Any, int]:
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node), 1
        ident = id(node)
        return self.built[ident], self.expanded[ident]

    def _finish(self, node: yaml.Node) -> None:
        size = 1
        result: Any
        if isinstance(node, yaml.SequenceNode):
            result = []
            for child in node.value:
                value, count = self._value(child)
                result.append(value)
                size += count
        else:
            result = {}
            merged: dict[str, Any] = {}
            for key_node, value_node in node.value:
                value, count = self._value(value_node)
                size += count
                if key_node.tag == _TAG + "merge":
                    for source in value if isinstance(value, list) else [value]:
                        if not isinstance(source, dict):
                            raise YamlError(
                                f"line {key_node.start_mark.line + 1}: << must"
                                " merge a mapping or a list of mappings"
                            )
                        for name, item in source.items():
                            merged.setdefault(name, item)
                    continue
                key, _ = self._value(key_node)
                try:
                    result[_key(key)] = value
                except TypeError:
                    raise YamlError(
                        f"line {key_node.start_mark.line + 1}: a mapping key must be a scalar"
                    ) from None
            for name, item in merged.items():
                result.setdefault(name, item)
        if size > MAX_EXPANDED_NODES:
            raise YamlError(
                f"line {node.start_mark.line + 1}: aliases expand to more than"
                f" {MAX_EXPANDED_NODES} nodes"
            )
        self.built[id(node)] = result
        self.expanded[id(node)] = size


def read_documents(data: bytes | str) -> Iterator[tuple[int, Any]]:
    """(first line, value) for each document of a YAML (or JSON) stream."""
    loader = _Loader(data)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield node.start_mark.line + 1, _Builder().build(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise YamlError(f"{where}{error.problem or error}") from None
    except yaml.YAMLError as error:
        raise YamlError(str(error).splitlines()[0]) from None
    finally:
        loader.dispose()
