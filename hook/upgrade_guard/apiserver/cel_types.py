"""How kube-apiserver types a structural schema for CEL: the one model that compiling
(:mod:`cel_compile`), costing (:mod:`cel_cost`) and evaluating (:mod:`cel_rules`)
``x-kubernetes-validations`` rules read.

Ported from apiserver ``pkg/cel/common/schemas.go`` (``SchemaDeclType``),
``pkg/cel/escaping.go`` (``Escape``) and apiextensions-apiserver
``pkg/apiserver/schema/cel/model`` (``WithTypeAndObjectMeta``):

- a node's type (:func:`declare`): an object is a type with its declared properties as
  fields, under their escaped names (:func:`escape`; a property CEL cannot name is no
  field); ``additionalProperties`` a map of strings to its type, ``items`` a list,
  int-or-string ``dyn``, ``date``/``date-time`` a timestamp, ``duration`` a duration,
  ``byte`` bytes, ``number`` a double. A node that has no such type (untyped, without
  int-or-string; a list or map of such) is no field of its parent
  (:func:`has_type` tells so without declaring it). ``x-kubernetes-preserve-unknown-fields``
  adds no field: rules see only what the schema declares;
- resource roots (the schema's root and ``x-kubernetes-embedded-resource`` nodes) also have
  ``kind``, ``apiVersion`` and ``metadata`` with ``name`` and ``generateName``, all strings,
  unless they declare those themselves (:func:`with_type_and_object_meta`); a root without
  a type is taken as an object;
- each type's size bounds, as the cost estimator reads them: the most elements a value can
  have (rune-bytes of a string: ``maxLength`` times 4; items of a list; entries of a map;
  where unbounded, what fits in a 3 MiB request) and the smallest JSON it can be written as.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache, cached_property
from typing import Any

MAX_REQUEST_BYTES = 3 * 1024 * 1024
RESOURCE_FIELDS = ("kind", "apiVersion", "metadata")
"""What a resource root is typed with beside its declared properties."""

_RESERVED = frozenset(
    {
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for"),
        *("function", "if", "import", "let", "loop", "package", "namespace", "return"),
        *("var", "void", "while"),
    }
)
_ESCAPABLE = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")


@cache
def escape(name: str) -> str | None:
    """The CEL name of a property, or None when CEL cannot name it."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


def embedded(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` is an embedded resource: a resource root of its own."""
    return node.get("x-kubernetes-embedded-resource") is True


def with_type_and_object_meta(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """A resource root as CEL sees it: ``node`` itself where it declares ``kind``,
    ``apiVersion``, ``metadata.name`` and ``metadata.generateName`` as strings (its
    ``metadata`` then whole), else with those (and ``metadata`` with only them) put in."""
    properties = node.get("properties") or {}
    metadata = properties.get("metadata") or {}
    meta_properties = metadata.get("properties") or {}
    if (
        all((properties.get(key) or {}).get("type") == "string" for key in ("kind", "apiVersion"))
        and metadata.get("type") == "object"
        and all(
            (meta_properties.get(key) or {}).get("type") == "string"
            for key in ("name", "generateName")
        )
    ):
        return node
    string = {"type": "string"}
    return {
        **node,
        "properties": {
            **properties,
            "kind": string,
            "apiVersion": string,
            "metadata": {"type": "object", "properties": {"name": string, "generateName": string}},
        },
    }


def node_type(node: Mapping[str, Any], resource_root: bool = False) -> Any:
    """A node's type; a resource root without one is taken as an object."""
    kind = node.get("type")
    return kind or "object" if resource_root else kind


def has_type(node: Mapping[str, Any], resource_root: bool = False) -> bool:
    """Whether CEL gives ``node`` a type (:func:`declare` is not None), told without
    declaring it: a node without one is no field of its object, and rules on it are refused."""
    while node.get("x-kubernetes-int-or-string") is not True:
        kind = node_type(node, resource_root)
        if kind == "array":
            below = node.get("items")
        elif kind == "object":
            below = node.get("additionalProperties")
            if not isinstance(below, Mapping):
                return True
        else:
            return kind in ("string", "integer", "number", "boolean")
        if not isinstance(below, Mapping):
            return False
        node, resource_root = below, embedded(below)
    return True


class DeclType:
    """apiserver ``DeclType``: a type (``kind``: object, list, map, dyn or a scalar kind:
    string, bytes, bool, int, double, timestamp, duration), the most elements a value of it
    can have (0 for scalars and objects) and the smallest JSON it can be written as. A list's
    or a map's ``elem`` is declared with it, an object's fields when first read: a rule
    reads few of a large schema's."""

    def __init__(
        self,
        kind: str,
        max_elements: int = 0,
        min_size: int = 1,
        *,
        elem: DeclType | None = None,
        key: DeclType | None = None,
        properties: Mapping[str, Any] | None = None,
        fields: dict[str, DeclType | None] | None = None,
    ) -> None:
        self.kind = kind
        self.max_elements = max_elements
        self.min_size = min_size
        self.elem = elem
        self.key = key
        self._properties = properties or {}
        self._fields = fields or {}

    @cached_property
    def _names(self) -> dict[str, str]:
        """Each property's name as CEL writes it (escaped), to its name in the schema."""
        escaped = ((escape(name), name) for name in self._properties)
        return {cel_name: name for cel_name, name in escaped if cel_name is not None}

    @property
    def field_names(self) -> Iterable[str]:
        """The names CEL may select of an object (a field may yet have no type)."""
        return self._names.keys()

    def field(self, cel_name: str) -> DeclType | None:
        """The declaration of a field, or None where the object has no such field."""
        if cel_name not in self._fields:
            name = self._names.get(cel_name)
            self._fields[cel_name] = (
                None if name is None else _declare_child(self._properties[name])
            )
        return self._fields[cel_name]


def _declare_child(child: Any) -> DeclType | None:
    if not isinstance(child, Mapping):
        return None
    return declare(child, embedded(child))


_STRING_KEY = DeclType("string", 0, 2)  # map keys: apiserver's shared StringType, MaxElements 0


def non_negative(value: Any) -> int:
    """A bound as the apiserver reads it (zeroIfNegative)."""
    return max(int(value), 0)


def _contained(
    node: Mapping[str, Any], keyword: str, bound_keyword: str, overhead: int
) -> tuple[DeclType, int] | None:
    """The declaration of a list's items or a map's values, and how many there can be: the
    bound, else as many of the smallest as fit in a request (with ``overhead`` bytes each:
    a comma; quotes, key, colon and comma)."""
    elem = _declare_child(node.get(keyword))
    if elem is None:
        return None
    bound = node.get(bound_keyword)
    if bound is None:
        return elem, (MAX_REQUEST_BYTES - 2) // (elem.min_size + overhead)
    return elem, non_negative(bound)


def declare(node: Mapping[str, Any] | None, resource_root: bool = False) -> DeclType | None:
    """The type the apiserver gives a value of ``node`` in CEL (``SchemaDeclType``), or None
    where it gives none; ``resource_root``: the schema's root or an embedded resource."""
    if node is None:
        return None
    string_room = MAX_REQUEST_BYTES - 2
    if node.get("x-kubernetes-int-or-string") is True:
        max_length = node.get("maxLength")
        room = string_room if max_length is None else non_negative(max_length) * 4
        return DeclType("dyn", room, 1)
    kind = node_type(node, resource_root)
    if resource_root:
        node = with_type_and_object_meta(node)
    if kind == "array":
        contained = _contained(node, "items", "maxItems", 1)
        return None if contained is None else DeclType("list", contained[1], 2, elem=contained[0])
    if kind == "object":
        if isinstance(node.get("additionalProperties"), Mapping):
            contained = _contained(node, "additionalProperties", "maxProperties", 6)
            if contained is None:
                return None
            return DeclType("map", contained[1], 2, elem=contained[0], key=_STRING_KEY)
        return _object(node)
    if kind == "string":
        return _string(node, string_room)
    return {
        "boolean": DeclType("bool", 0, 4),
        "number": DeclType("double", 0, 1),
        "integer": DeclType("int", 0, 1),
    }.get(str(kind))


def _object(node: Mapping[str, Any]) -> DeclType:
    """An object: at least ``{}``, and each required property without a default, written
    at its smallest. Those are declared now, and kept as the object's fields."""
    properties = node.get("properties") or {}
    min_size = 2
    fields: dict[str, DeclType | None] = {}
    for name in node.get("required") or ():
        child = properties.get(name)
        if not isinstance(child, Mapping) or child.get("default") is not None:
            continue
        child_decl = _declare_child(child)
        cel_name = escape(name) if isinstance(name, str) else None
        if cel_name is not None:
            fields[cel_name] = child_decl
        if child_decl is not None:
            min_size += len(str(name).encode()) + child_decl.min_size + 4
    return DeclType("object", 0, min_size, properties=properties, fields=fields)


def _string(node: Mapping[str, Any], room: int) -> DeclType:
    max_length = node.get("maxLength")
    form = node.get("format")
    if form == "byte":
        return DeclType("bytes", room if max_length is None else non_negative(max_length), 2)
    if form == "duration":
        return DeclType("duration", 32, 3)
    if form == "date":
        return DeclType("timestamp", 12, 12)
    if form == "date-time":
        return DeclType("timestamp", 32, 21)
    if max_length is not None:
        return DeclType("string", non_negative(max_length) * 4, 2)
    enum = node.get("enum")
    if enum:
        longest = max((len(v.encode()) for v in enum if isinstance(v, str)), default=0)
        return DeclType("string", longest, 2)
    return DeclType("string", room, 2)
