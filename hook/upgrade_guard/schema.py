"""Pure walking of OpenAPI v3 schemas: every place a stored value can sit, by one path syntax.

A path is a tuple of display segments. Property names are segments as they are (quoted when
they could be mistaken for syntax), array items are ``[]`` and additionalProperties values are
``*``. ``render_path`` joins them: ``spec.containers[].ports[].name``, ``spec.labels.*``. The
schema root renders as ``.``.
"""

from __future__ import annotations

import json
import marshal
import re
from collections.abc import Iterator, Mapping
from typing import Any

Path = tuple[str, ...]
Node = Mapping[str, Any]

ITEMS = "[]"
ADDITIONAL = "*"
JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
DOCUMENTATION_KEYWORDS = frozenset({"description", "title", "example", "externalDocs"})
CHILD_KEYWORDS = frozenset({"properties", "items", "additionalProperties"})

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_$@-][A-Za-z0-9_$@/-]*\Z")


def segment(name: str) -> str:
    """The path segment of a property name; quoted unless it is a plain identifier."""
    if _PLAIN_NAME.match(name):
        return name
    return "[" + json.dumps(name) + "]"


def render_path(path: Path) -> str:
    if not path:
        return "."
    parts: list[str] = []
    for part in path:
        if part == ITEMS or part.startswith("["):
            parts.append(part)
        else:
            if parts:
                parts.append(".")
            parts.append(part)
    return "".join(parts)


def is_below(path: Path, ancestor: Path) -> bool:
    """True when path lies strictly inside ancestor."""
    return len(path) > len(ancestor) and path[: len(ancestor)] == ancestor


def children(node: Node) -> Iterator[tuple[str, Node]]:
    """The schemas of the values directly inside node, with their path segments."""
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        for name, child in properties.items():
            if isinstance(child, Mapping):
                yield segment(str(name)), child
    items = node.get("items")
    if isinstance(items, Mapping):
        yield ITEMS, items
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        yield ADDITIONAL, additional
    elif additional is True:
        yield ADDITIONAL, {}


def paired_locations(old: Node, new: Node) -> Iterator[tuple[Path, Node, Node]]:
    """The value locations present on both sides whose subtrees differ, parents first.

    Identical subtrees are skipped whole, which is what keeps large CRD sets fast: most of a
    schema does not change between releases.
    """
    stack: list[tuple[Path, Node, Node]] = [((), old, new)]
    while stack:
        path, old_node, new_node = stack.pop()
        if _identical(old_node, new_node):
            continue
        yield path, old_node, new_node
        new_children = dict(children(new_node))
        pairs = [
            (path + (part,), old_child, new_children[part])
            for part, old_child in children(old_node)
            if part in new_children
        ]
        stack.extend(reversed(pairs))


def _identical(old: Any, new: Any) -> bool:
    """Equal as JSON values. == alone takes true for 1; marshal's bytes keep booleans apart
    and are quick to compare, and where they differ only in key order or 1 against 1.0,
    same_value decides."""
    return bool(old == new) and (
        marshal.dumps(old, 2) == marshal.dumps(new, 2) or same_value(old, new)
    )


def own_keywords(node: Node) -> dict[str, Any]:
    """The keywords that constrain this node itself: no children, no documentation."""
    return {
        key: value
        for key, value in node.items()
        if key not in CHILD_KEYWORDS and key not in DOCUMENTATION_KEYWORDS
    }


def without_documentation(schema: Any) -> Any:
    """A schema with description, title, example and externalDocs removed at every level.

    Only schema positions are touched: a property named ``description`` and the contents of
    ``default`` or ``enum`` are data and stay as they are.
    """
    if not isinstance(schema, Mapping):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DOCUMENTATION_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, Mapping):
            result[key] = {name: without_documentation(child) for name, child in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            result[key] = without_documentation(value)
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            result[key] = [without_documentation(child) for child in value]
        else:
            result[key] = value
    return result


def preserves_unknown_fields(node: Node) -> bool:
    return node.get("x-kubernetes-preserve-unknown-fields") is True


def uses_old_self(rule: str) -> bool:
    return re.search(r"\boldSelf\b", rule) is not None


def same_value(old: Any, new: Any) -> bool:
    """JSON value equality: 1 equals 1.0, but true never equals 1 and key order never counts."""
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool) and old == new
    if isinstance(old, int | float) and isinstance(new, int | float):
        return old == new
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return old.keys() == new.keys() and all(same_value(old[key], new[key]) for key in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(map(same_value, old, new))
    return type(old) is type(new) and bool(old == new)


def short(value: Any, limit: int = 60) -> str:
    """A value as compact JSON, cut to limit characters, for messages."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def newly_required(old: Node, new: Node) -> list[tuple[str, bool]]:
    """Names required by new but not by old, each with whether new gives it a default."""
    before = set(old.get("required") or [])
    properties = new.get("properties") or {}
    return [
        (name, "default" in (properties.get(name) or {}))
        for name in new.get("required") or []
        if name not in before
    ]
