"""OpenAPI value validation with the apiserver's semantics (kube-openapi's validator as
apiextensions-apiserver configures it), with ratcheting.

Ratcheting (KEP-4008, on from 1.30): the validator of a node whose new value pairs with an
equal old value (see :mod:`correlation`) drops every error of that node and below it. So
an error survives an UPDATE only where some paired ancestor changed: a changed list that
is not a map list re-validates all its items, changed or not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import formats, regexes, values
from .correlation import Correlation
from .violations import NotEvaluated, Violation

_TYPE_NAMES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


class _Node:
    """One schema node's keywords, read once."""

    __slots__ = (
        "additional",
        "all_of",
        "any_of",
        "checked_format",
        "counted",
        "enum",
        "format",
        "format_name",
        "items",
        "negated",
        "nullable",
        "numeric",
        "one_of",
        "pattern",
        "properties",
        "python_types",
        "required",
        "schema",
        "strings",
        "types",
    )

    def __init__(
        self, schema: values.Schema, kube_version: tuple[int, int], defaults: bool
    ) -> None:
        self.schema = schema
        int_or_string = schema.get("x-kubernetes-int-or-string") and not defaults
        types = ["integer", "string"] if int_or_string else []
        if not types and schema.get("type"):
            types = [schema["type"]]
        self.types = tuple(types)
        self.python_types = tuple(_TYPE_NAMES[t] for t in types if t in _TYPE_NAMES)
        self.nullable = bool(schema.get("nullable"))
        self.enum = schema.get("enum")
        name = schema.get("format")
        self.format_name = name
        self.format = formats.checker(name, kube_version) if isinstance(name, str) else None
        # The format the type check sees: objects' schemas lose the formats the apiserver
        # does not validate; a default is checked by the schema as written.
        kept = name if defaults or self.format is not None else ""
        self.checked_format = kept if isinstance(kept, str) else ""
        self.pattern = schema.get("pattern")
        self.strings = self.format is not None or any(
            k in schema for k in ("maxLength", "minLength", "pattern")
        )
        self.numeric = any(k in schema for k in ("maximum", "minimum", "multipleOf"))
        self.counted = any(
            k in schema for k in ("maxItems", "minItems", "maxProperties", "minProperties")
        )
        self.properties: dict[str, values.Schema] = dict(schema.get("properties") or {})
        self.required: list[str] = list(schema.get("required") or [])
        additional = schema.get("additionalProperties")
        self.additional = (
            additional if isinstance(additional, dict) or additional is False else None
        )
        self.items = values.item_schema(schema)
        self.all_of: list[values.Schema] = list(schema.get("allOf") or [])
        self.any_of: list[values.Schema] = list(schema.get("anyOf") or [])
        self.one_of: list[values.Schema] = list(schema.get("oneOf") or [])
        negated = schema.get("not")
        self.negated = negated if isinstance(negated, dict) else None

    def type_ok(self, value: Any) -> bool:
        if (
            self.python_types
            and not self.checked_format
            and not isinstance(value, bool)
            and isinstance(value, self.python_types)
        ):
            return True
        return values.matches_type(value, self.types, self.checked_format)


# Each schema node's keywords, read once for every validator (a node holds its schema, so
# the ids stay its): the witnesses make two judges and a value synthesis per CRD version.
_COMPILED: dict[tuple[int, tuple[int, int], bool], _Node] = {}


def forget_schemas() -> None:
    _COMPILED.clear()


class OpenAPIValidator:
    """Validates values against one schema tree for one Kubernetes version. With
    ``defaults``, as the apiserver validates a CRD's defaults (structural ``ToKubeOpenAPI``):
    an x-kubernetes-int-or-string node has no type, and formats are kept as written."""

    def __init__(self, kube_version: tuple[int, int], defaults: bool = False) -> None:
        self.kube_version = kube_version
        self.defaults = defaults
        # Patterns Python's re cannot read, checked nowhere: never counted as matched.
        self.unchecked: list[NotEvaluated] = []
        # Within one validation: the (value, node) pairs found valid, by identity. A value
        # shared at several places (a witness's thousand items) is checked once; it cannot
        # change while the validation reads it.
        self._valid_pairs: set[tuple[int, int]] = set()

    def validate(
        self, value: Any, schema: values.Schema, path: str, old: Correlation | None = None
    ) -> list[Violation]:
        """Violations of ``value`` (at ``path``) under ``schema``; with ``old``, an UPDATE
        ratcheted against the paired old value."""
        found: list[Violation] = []
        try:
            self._node(value, self._compiled(schema), path, old, found)
        finally:
            self._valid_pairs.clear()
        return found

    def _compiled(self, schema: values.Schema) -> _Node:
        key = (id(schema), self.kube_version, self.defaults)
        node = _COMPILED.get(key)
        if node is None or node.schema is not schema:
            node = _COMPILED[key] = _Node(schema, self.kube_version, self.defaults)
        return node

    def _node(
        self, value: Any, node: _Node, path: str, old: Correlation | None, found: list[Violation]
    ) -> None:
        if old is not None and old.equal():
            return
        shared = old is None
        if shared and (id(value), id(node)) in self._valid_pairs:
            return
        errors, unchecked = len(found), len(self.unchecked)
        self._keywords(value, node, path, found)
        if isinstance(value, dict):
            self._object(value, node, path, old, found)
        elif isinstance(value, list) and node.items is not None:
            items = self._compiled(node.items)
            valid_pairs = self._valid_pairs if old is None else ()
            for i, item in enumerate(value):
                if (id(item), id(items)) in valid_pairs:
                    continue
                where = values.indexed(path, i)
                self._node(item, items, where, old.index(i) if old else None, found)
        if node.all_of or node.any_of or node.one_of or node.negated is not None:
            self._combinators(value, node, path, found)
        if shared and len(found) == errors and len(self.unchecked) == unchecked:
            self._valid_pairs.add((id(value), id(node)))

    def _object(
        self,
        value: dict[str, Any],
        node: _Node,
        path: str,
        old: Correlation | None,
        found: list[Violation],
    ) -> None:
        for name in node.required:
            if name not in value:
                found.append(Violation(values.child(path, name), "required", "Required value"))
        properties = node.properties
        additional = node.additional
        valid_pairs = self._valid_pairs if old is None else ()
        for key, item in value.items():
            child = properties.get(key)
            if child is not None:
                compiled = self._compiled(child)
                if (id(item), id(compiled)) in valid_pairs:
                    continue
                where = values.child(path, key)
            elif isinstance(additional, dict):
                compiled = self._compiled(additional)
                if (id(item), id(compiled)) in valid_pairs:
                    continue
                where = values.keyed(path, key)
            else:
                if additional is False:
                    where = values.child(path, key)
                    found.append(Violation(where, "additionalProperties", "not allowed"))
                continue
            self._node(item, compiled, where, old.key(key) if old else None, found)

    def _combinators(self, value: Any, node: _Node, path: str, found: list[Violation]) -> None:
        for branch in node.all_of:
            self._node(value, self._compiled(branch), path, None, found)
        if node.any_of and not any(self._valid(value, b, path) for b in node.any_of):
            found.append(Violation(path, "anyOf", "must validate at least one schema (anyOf)"))
        if node.one_of:
            matched = sum(1 for b in node.one_of if self._valid(value, b, path))
            if matched != 1:
                found.append(
                    Violation(path, "oneOf", f"must validate exactly one schema; {matched} do")
                )
        if node.negated is not None and self._valid(value, node.negated, path):
            found.append(Violation(path, "not", "must not validate the schema (not)"))

    def _valid(self, value: Any, schema: values.Schema, path: str) -> bool:
        found: list[Violation] = []
        self._node(value, self._compiled(schema), path, None, found)
        return not found

    def _keywords(self, value: Any, node: _Node, path: str, found: list[Violation]) -> None:
        types = node.types
        if value is None:
            if types and not node.nullable:
                found.append(Violation(path, "type", f"must be of type {' or '.join(types)}"))
            elif node.enum is not None:  # even a null the enum lists (v1.35.4 refuses it)
                found.append(Violation(path, "enum", "Unsupported value: not in the enum"))
            return
        if not node.type_ok(value):
            expected = " or ".join(types) or node.checked_format
            found.append(Violation(path, "type", f"must be of type {expected}"))
            return
        if node.enum is not None and not values.in_enum(value, node.enum):
            found.append(Violation(path, "enum", "Unsupported value: not in the enum"))
        if isinstance(value, str):
            if node.strings:
                self._string(value, node, path, found)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if node.numeric:
                found.extend(_number(value, node.schema, path))
        elif node.counted:
            if isinstance(value, list):
                found.extend(_counted(len(value), node.schema, path, "Items", "items"))
            elif isinstance(value, dict):
                found.extend(_counted(len(value), node.schema, path, "Properties", "properties"))

    def _string(self, value: str, node: _Node, path: str, found: list[Violation]) -> None:
        schema = node.schema
        length = len(value)
        if "maxLength" in schema and length > schema["maxLength"]:
            found.append(Violation(path, "maxLength", f"longer than {schema['maxLength']}"))
        if "minLength" in schema and length < schema["minLength"]:
            found.append(Violation(path, "minLength", f"shorter than {schema['minLength']}"))
        if node.pattern is not None:
            compiled = regexes.compiled(node.pattern)
            if compiled is None:
                self.unchecked.append(
                    NotEvaluated(path, node.pattern, "pattern not readable by Python's re")
                )
            elif not compiled.search(value):
                found.append(Violation(path, "pattern", f"should match '{node.pattern}'"))
        if node.format is not None and not node.format(value):
            found.append(Violation(path, "format", f"must be of type {node.format_name}"))


def _number(value: float, schema: values.Schema, path: str) -> Iterator[Violation]:
    maximum = schema.get("maximum")
    if maximum is not None:
        exclusive = bool(schema.get("exclusiveMaximum"))
        if values.above_maximum(value, maximum, exclusive):
            bound = "less than" if exclusive else "less than or equal to"
            yield Violation(path, "maximum", f"should be {bound} {maximum}")
    minimum = schema.get("minimum")
    if minimum is not None:
        exclusive = bool(schema.get("exclusiveMinimum"))
        if values.below_minimum(value, minimum, exclusive):
            bound = "greater than" if exclusive else "greater than or equal to"
            yield Violation(path, "minimum", f"should be {bound} {minimum}")
    factor = schema.get("multipleOf")
    if factor is not None and not values.is_multiple(value, factor):
        yield Violation(path, "multipleOf", f"should be a multiple of {factor}")


def _counted(
    count: int, schema: values.Schema, path: str, noun: str, what: str
) -> Iterator[Violation]:
    most = schema.get(f"max{noun}")
    if most is not None and count > most:
        yield Violation(path, f"max{noun}", f"must have at most {most} {what}")
    least = schema.get(f"min{noun}")
    if least is not None and count < least:
        yield Violation(path, f"min{noun}", f"should have at least {least} {what}")
