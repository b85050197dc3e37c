"""Pure walking of OpenAPI v3 schemas: every place a stored value can sit, by one path syntax.

A path is a tuple of display segments. Property names are segments as they are (quoted when
they could be mistaken for syntax), array items are ``[]`` and additionalProperties values are
``*``. ``render_path`` joins them: ``spec.containers[].ports[].name``, ``spec.labels.*``. The
schema root renders as ``.``.
"""

from __future__ import annotations

import functools
import json
import marshal
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

Path = tuple[str, ...]
Node = Mapping[str, Any]

ITEMS = "[]"
ADDITIONAL = "*"
VALUE_KEYWORDS = ("properties", "items", "additionalProperties")
JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
_POSITION_KEYWORDS = VALUE_KEYWORDS + JUNCTORS
SUBSCHEMA_KEYWORDS = frozenset(_POSITION_KEYWORDS)
DOCUMENTATION_KEYWORDS = frozenset({"description", "title", "example", "externalDocs"})
_BRANCH_LISTS = ("allOf", "anyOf", "oneOf")
_SEGMENTS = {"items": ITEMS, "additionalProperties": ADDITIONAL}

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_$@-][A-Za-z0-9_$@/-]*\Z")


@functools.cache
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


class Position(NamedTuple):
    """One schema position directly inside a node: ``keyword``, then ``key`` (the property
    name under properties, the index under allOf/anyOf/oneOf, else None) and the schema
    there, as written."""

    keyword: str
    key: str | int | None
    schema: Any

    @property
    def segment(self) -> str | None:
        """The path segment of a value location; None for a branch of allOf/anyOf/oneOf/not,
        which constrains the node's own value."""
        if self.keyword == "properties":
            return segment(str(self.key))
        return _SEGMENTS.get(self.keyword)


def subschemas(node: Node) -> list[Position]:
    """Every schema position directly inside node: the one walker all schema code uses.

    The positions are each value of ``properties``, ``items``, ``additionalProperties``,
    ``not`` and each member of ``allOf``, ``anyOf``, ``oneOf``. A keyword whose value is null
    is absent, as Go reads it. Positions come as written, whatever they hold (a property set
    to null is an empty schema to the apiserver, without a type, so the loader refuses it):
    ``additionalProperties`` may be ``true`` (any value, read with an empty schema, so objects
    inside are pruned) or ``false`` (no value); judging anything else that is not a mapping
    is the caller's. A ``properties`` that is not a mapping, or a combinator that is not a
    list, holds no positions (the loader refuses it).
    """
    positions: list[Position] = []
    if SUBSCHEMA_KEYWORDS.isdisjoint(node):  # most nodes: a leaf
        return positions
    for keyword in _POSITION_KEYWORDS:
        value = node.get(keyword)
        if value is None:
            continue
        if keyword == "properties":
            if type(value) is dict or isinstance(value, Mapping):
                for name, child in value.items():
                    key = name if name.__class__ is str else str(name)
                    positions.append(_new_position(Position, (keyword, key, child)))
        elif keyword in _BRANCH_LISTS:
            if isinstance(value, list):
                for index, child in enumerate(value):
                    positions.append(_new_position(Position, (keyword, index, child)))
        else:
            positions.append(_new_position(Position, (keyword, None, value)))
    return positions


# A Position made without NamedTuple's __new__ (a Python function): there is one per node.
_new_position = tuple.__new__


def children(node: Node) -> dict[str, Node]:
    """The schemas of the values directly inside node, by path segment.

    ``additionalProperties: true`` is the empty schema here, as the apiserver prunes with it.
    """
    found: dict[str, Node] = {}
    for keyword, key, child in subschemas(node):
        part = segment(str(key)) if keyword == "properties" else _SEGMENTS.get(keyword)
        if part is None:  # a branch of allOf/anyOf/oneOf/not
            continue
        if type(child) is dict or isinstance(child, Mapping):
            found[part] = child
        elif child is True and part == ADDITIONAL:
            found[part] = {}
    return found


def rebuilt(node: Node, rebuild: Callable[[Any], Any]) -> dict[str, Any]:
    """A copy of node with each schema position directly inside it replaced by
    ``rebuild(position)`` and null positions left out; node itself is not modified."""
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            result[key] = {}
        elif key in _BRANCH_LISTS and isinstance(value, list):
            result[key] = []
        elif value is not None or key not in SUBSCHEMA_KEYWORDS:
            result[key] = value
    for keyword, name_or_index, child in subschemas(node):
        if child is None:
            continue
        if name_or_index is None:
            result[keyword] = rebuild(child)
        elif isinstance(name_or_index, str):
            result[keyword][name_or_index] = rebuild(child)
        else:
            result[keyword].append(rebuild(child))
    return result


class Location(NamedTuple):
    """A value location where both sides hold a schema: its path, the schema there on each
    side, and on each side the schemas of the values directly inside it by path segment
    (children)."""

    path: Path
    old: Node
    new: Node
    old_children: dict[str, Node]
    new_children: dict[str, Node]

    def swapped(self) -> Location:
        """The same location with the sides exchanged, as pairing new with old yields it."""
        return Location(self.path, self.new, self.old, self.new_children, self.old_children)


def paired_locations(
    old: Node, new: Node, known: tuple[Node, Node] | None = None
) -> Iterator[Location]:
    """The value locations where both sides hold a schema and the subtrees differ, parents
    first.

    A location is paired where each side declares it, or governs it otherwise: a property
    one side does not declare is held by that side's additionalProperties, by the implicit
    fields of a resource (``RESOURCE_FIELDS``), or, below x-kubernetes-preserve-unknown-fields,
    by ``ANY_VALUE``, because stored objects can hold anything there (a field declared there
    for the first time constrains stored values, it is not new).

    Identical subtrees are skipped whole, which is what keeps large CRD sets fast: most of a
    schema does not change between releases. ``known`` is another pair of schemas: where it
    holds the very same two subtrees as old and new (the objects, as the two sides of a diff
    share them), the location and all below it are skipped too: what differs there differed
    between the known pair already.
    """
    known_old, known_new = known or (None, None)
    stack: list[tuple[Path, Node, Node, Node | None, Node | None]] = (
        [] if same_value(old, new) else [((), old, new, known_old, known_new)]
    )
    while stack:
        path, old_node, new_node, known_old, known_new = stack.pop()
        if old_node is known_old and new_node is known_new:
            continue
        old_children, new_children = children(old_node), children(new_node)
        yield Location(path, old_node, new_node, old_children, new_children)
        # children() holds only schemas, so a known node is one or None; below a known pair
        # that lacks a side, nothing can be skipped
        if known_old is None or known_new is None:
            known_old_children = known_new_children = {}
        else:
            known_old_children, known_new_children = children(known_old), children(known_new)
        # a resource on both sides: turning x-kubernetes-embedded-resource on or off is
        # embedded-resource-changed's to explain
        resource = not path or (is_embedded_resource(old_node) and is_embedded_resource(new_node))
        differing = []
        for part in _parts(old_children, new_children):
            old_child = _governing(old_node, old_children, part, resource)
            if old_child is None:
                continue
            new_child = _governing(new_node, new_children, part, resource)
            if new_child is None or same_value(old_child, new_child):
                continue
            differing.append(
                (
                    path + (part,),
                    old_child,
                    new_child,
                    None
                    if known_old is None
                    else _governing(known_old, known_old_children, part, resource),
                    None
                    if known_new is None
                    else _governing(known_new, known_new_children, part, resource),
                )
            )
        stack.extend(reversed(differing))


# What stored objects can hold below x-kubernetes-preserve-unknown-fields where the schema
# declares nothing: any value, null included (a field declared there without nullable has
# its stored nulls dropped on read, as measured on v1.35.4). Never modified.
ANY_VALUE: Node = {"x-kubernetes-preserve-unknown-fields": True, "nullable": True}
# The fields every resource (the root, an x-kubernetes-embedded-resource) holds whether or
# not its schema declares them; metadata is pruned by ObjectMeta's rules, not by the schema,
# so what a schema declares in it only adds constraints to the fields ObjectMeta holds.
_STRING: Node = {"type": "string"}
_STRING_MAP: Node = {"type": "object", "additionalProperties": _STRING}
OBJECT_META_FIELDS: Mapping[str, Node] = {
    "name": _STRING,
    "generateName": _STRING,
    "namespace": _STRING,
    "labels": _STRING_MAP,
    "annotations": _STRING_MAP,
}
RESOURCE_FIELDS: Mapping[str, Node] = {
    "apiVersion": _STRING,
    "kind": _STRING,
    "metadata": {"type": "object", "properties": OBJECT_META_FIELDS},
}


def _parts(old_children: dict[str, Node], new_children: dict[str, Node]) -> list[str]:
    """The segments of both sides, old ones first, each once."""
    if new_children.keys() <= old_children.keys():
        return list(old_children)
    return [*old_children, *(part for part in new_children if part not in old_children)]


def is_embedded_resource(node: Node) -> bool:
    return node.get("x-kubernetes-embedded-resource") is True


def _governing(node: Node, found: dict[str, Node], part: str, resource: bool) -> Node | None:
    """The schema node (with found, its children) applies to the value at segment part, or
    None where the apiserver prunes that value (nothing can be stored there); resource:
    whether node is the root or an embedded resource, which hold RESOURCE_FIELDS."""
    child = found.get(part)
    if part == "metadata" and resource:
        return _object_meta(child)
    if child is not None:
        return child
    if part not in (ITEMS, ADDITIONAL):
        child = found.get(ADDITIONAL)
        if child is not None:
            return child
        if resource:
            child = RESOURCE_FIELDS.get(part)
            if child is not None:
                return child
    return ANY_VALUE if preserves_unknown_fields(node) else None


def _object_meta(declared: Node | None) -> Node:
    """A resource's metadata as the apiserver holds it: ObjectMeta's fields, with what the
    schema declares for them."""
    if declared is None:
        return RESOURCE_FIELDS["metadata"]
    properties = declared.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    return {**declared, "properties": {**OBJECT_META_FIELDS, **properties}}


def differing_keywords(old: Node, new: Node) -> frozenset[str]:
    """The keywords two nodes may differ in: those set on one side only or to different
    values, less documentation; the value keywords (properties, items, additionalProperties)
    count wherever set, as what they hold is compared at the locations inside."""
    return frozenset(
        keyword
        for keyword in old.keys() | new.keys()
        if keyword in VALUE_KEYWORDS
        or (
            keyword not in DOCUMENTATION_KEYWORDS
            and not (keyword in old and keyword in new and same_value(old[keyword], new[keyword]))
        )
    )


def without_documentation(node: Any) -> Any:
    """A schema with description, title, example and externalDocs removed at every position.

    Only schema positions are touched: a property named ``description`` and the contents of
    ``default`` or ``enum`` are data and stay as they are.
    """
    if not isinstance(node, Mapping):
        return node
    return {
        key: value
        for key, value in rebuilt(node, without_documentation).items()
        if key not in DOCUMENTATION_KEYWORDS
    }


def preserves_unknown_fields(node: Node) -> bool:
    return node.get("x-kubernetes-preserve-unknown-fields") is True


def holds_undeclared_fields(node: Node) -> bool:
    """Whether a value at node can hold a field no schema declares, anywhere the apiserver
    pairs old and new values (properties, additionalProperties, items of map lists): below
    x-kubernetes-preserve-unknown-fields, in ``additionalProperties: true``, or in an
    embedded resource (apiVersion, kind and metadata's ObjectMeta fields, which a schema
    rarely declares all of). Ratcheting never finds such a value unchanged, as a field
    without a schema does not pair (k8s.io/apiserver pkg/cel/common/equality.go,
    ``CorrelatedObject.Key``; measured on v1.35.4)."""
    if (
        preserves_unknown_fields(node)
        or node.get("additionalProperties") is True
        or is_embedded_resource(node)
    ):
        return True
    for keyword, _, child in subschemas(node):
        if not isinstance(child, Mapping) or keyword in JUNCTORS:
            continue
        if keyword == "items" and node.get("x-kubernetes-list-type") != "map":
            continue
        if holds_undeclared_fields(child):
            return True
    return False


def uses_old_self(rule: str) -> bool:
    return re.search(r"\boldSelf\b", rule) is not None


def deep_equal(a: Any, b: Any) -> bool:
    """Go's ``reflect.DeepEqual`` over JSON as the apiserver decodes it (apimachinery's
    ``util/json``): an integer is an int64 and any other number a float64, so ``1`` never
    equals ``1.0``, nor ``true`` ``1``; key order never counts. The apiserver's equality of
    stored and written values (ratcheting, pruned defaults, compound enum members)."""
    return a is b or (
        a == b  # implied by DeepEqual, and quick where they differ
        and (marshal.dumps(a, 2) == marshal.dumps(b, 2) or _equal(a, b, _decoded))
    )


def same_value(old: Any, new: Any) -> bool:
    """Whether two values of CRD documents reach the apiserver as one value. A Go client
    (helm, kubectl) reads YAML or JSON into float64 and int64 and writes a float64 without a
    fraction as an integer, which the apiserver decodes as an int64: deep_equal of what it
    sends, so 1 equals 1.0, true never equals 1 and key order never counts."""
    return old is new or (
        old == new and (marshal.dumps(old, 2) == marshal.dumps(new, 2) or _equal(old, new, _sent))
    )


def _decoded(value: Any) -> Any:
    return value


def _sent(value: Any) -> Any:
    if value.__class__ is float and value.is_integer() and -(2**63) <= value < 2**63:
        return int(value)
    return value


def _equal(a: Any, b: Any, scalar: Callable[[Any], Any]) -> bool:
    a, b = scalar(a), scalar(b)
    if a.__class__ is not b.__class__:
        return False
    if a.__class__ is dict:
        return a.keys() == b.keys() and all(_equal(a[k], b[k], scalar) for k in a)
    if a.__class__ is list:
        return len(a) == len(b) and all(_equal(x, y, scalar) for x, y in zip(a, b, strict=True))
    return bool(a == b)


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
