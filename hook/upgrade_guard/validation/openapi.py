"""OpenAPI value validation with the apiserver's semantics (kube-openapi's validator as
apiextensions-apiserver configures it), with ratcheting.

Ratcheting (KEP-4008, on from 1.30): the validator of a node whose new value pairs with an
equal old value (see :mod:`correlation`) drops every error of that node and below it. So
an error survives an UPDATE only where some paired ancestor changed: a changed list that
is not a map list re-validates all its items, changed or not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from . import formats, values
from .correlation import Correlation
from .violations import Violation

_TYPE_NAMES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


@lru_cache(maxsize=4096)
def _pattern(pattern: str) -> re.Pattern[str] | None:
    """ECMA/RE2 pattern as Python's re reads it; None when Python cannot read it (the
    value is then reported unchecked by the caller)."""
    try:
        return re.compile(pattern)
    except re.error:
        return None


def type_matches(value: Any, type_name: str) -> bool:
    if type_name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if type_name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    expected = _TYPE_NAMES.get(type_name)
    return expected is not None and isinstance(value, expected)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class OpenAPIValidator:
    """Validates values against one schema tree for one Kubernetes version."""

    def __init__(self, kube_version: tuple[int, int]) -> None:
        self.kube_version = kube_version
        self.unchecked_patterns: set[str] = set()

    def validate(
        self, value: Any, schema: values.Schema, path: str, old: Correlation | None = None
    ) -> list[Violation]:
        """Violations of ``value`` (at ``path``) under ``schema``; with ``old``, an UPDATE
        ratcheted against the paired old value."""
        return list(self._node(value, schema, path, old))

    def _node(
        self, value: Any, schema: values.Schema, path: str, old: Correlation | None
    ) -> Iterator[Violation]:
        if old is not None and old.equal():
            return
        yield from self._keywords(value, schema, path)
        if isinstance(value, dict):
            yield from self._object(value, schema, path, old)
        elif isinstance(value, list):
            items = values.item_schema(schema)
            if items is not None:
                for i, item in enumerate(value):
                    yield from self._node(
                        item, items, values.indexed(path, i), old.index(i) if old else None
                    )
        yield from self._combinators(value, schema, path)

    def _object(
        self, value: dict[str, Any], schema: values.Schema, path: str, old: Correlation | None
    ) -> Iterator[Violation]:
        properties = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                yield Violation(values.child(path, name), "required", "Required value")
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                yield from self._node(
                    item, properties[key], values.child(path, key), old.key(key) if old else None
                )
            elif isinstance(additional, dict):
                yield from self._node(
                    item, additional, values.keyed(path, key), old.key(key) if old else None
                )
            elif additional is False:
                yield Violation(values.child(path, key), "additionalProperties", "not allowed")

    def _combinators(self, value: Any, schema: values.Schema, path: str) -> Iterator[Violation]:
        for branch in schema.get("allOf") or []:
            yield from self._node(value, branch, path, None)
        branches = schema.get("anyOf")
        if branches and not any(self._valid(value, b, path) for b in branches):
            yield Violation(path, "anyOf", "must validate at least one schema (anyOf)")
        branches = schema.get("oneOf")
        if branches:
            matched = sum(1 for b in branches if self._valid(value, b, path))
            if matched != 1:
                yield Violation(
                    path,
                    "oneOf",
                    f"must validate one and only one schema (oneOf); {matched} matched",
                )
        negated = schema.get("not")
        if isinstance(negated, dict) and self._valid(value, negated, path):
            yield Violation(path, "not", "must not validate the schema (not)")

    def _valid(self, value: Any, schema: values.Schema, path: str) -> bool:
        return next(iter(self._node(value, schema, path, None)), None) is None

    def _keywords(self, value: Any, schema: values.Schema, path: str) -> Iterator[Violation]:
        types = ["integer", "string"] if schema.get("x-kubernetes-int-or-string") else []
        if not types and schema.get("type"):
            types = [schema["type"]]
        if value is None:
            if types and not schema.get("nullable"):
                yield Violation(path, "type", f"must be of type {' or '.join(types)}")
            return
        if (
            types
            and not any(type_matches(value, t) for t in types)
            and not self._format_pass(value, types, schema)
        ):
            yield Violation(path, "type", f"must be of type {' or '.join(types)}")
            return
        enum = schema.get("enum")
        if enum is not None and not any(
            values.same(value, e) or _numbers_equal(value, e) for e in enum
        ):
            yield Violation(path, "enum", "Unsupported value: not in the enum")
        if isinstance(value, str):
            yield from self._string(value, schema, path)
        elif _is_number(value):
            yield from _number(value, schema, path)
        elif isinstance(value, list):
            yield from _counted(len(value), schema, path, "Items", "items")
        elif isinstance(value, dict):
            yield from _counted(len(value), schema, path, "Properties", "properties")

    def _string(self, value: str, schema: values.Schema, path: str) -> Iterator[Violation]:
        length = len(value)
        if "maxLength" in schema and length > schema["maxLength"]:
            yield Violation(
                path, "maxLength", f"may not be more than {schema['maxLength']} characters"
            )
        if "minLength" in schema and length < schema["minLength"]:
            yield Violation(
                path, "minLength", f"should be at least {schema['minLength']} chars long"
            )
        pattern = schema.get("pattern")
        if pattern is not None:
            compiled = _pattern(pattern)
            if compiled is None:
                self.unchecked_patterns.add(pattern)
            elif not compiled.search(value):
                yield Violation(path, "pattern", f"should match '{pattern}'")
        check = self._format(schema)
        if check is not None and not check(value):
            yield Violation(path, "format", f"must be of type {schema['format']}")

    def _format_pass(self, value: Any, types: list[str], schema: values.Schema) -> bool:
        """kube-openapi lets any string or list pass the type check of a non-numeric
        schema with a (supported) format."""
        return (
            isinstance(value, str | list)
            and "integer" not in types
            and "number" not in types
            and self._format(schema) is not None
        )

    def _format(self, schema: values.Schema) -> Callable[[str], bool] | None:
        name = schema.get("format")
        return formats.checker(name, self.kube_version) if isinstance(name, str) else None


def _numbers_equal(a: Any, b: Any) -> bool:
    return _is_number(a) and _is_number(b) and float(a) == float(b)


def _number(value: float, schema: values.Schema, path: str) -> Iterator[Violation]:
    maximum = schema.get("maximum")
    if maximum is not None:
        if schema.get("exclusiveMaximum") and value >= maximum:
            yield Violation(path, "maximum", f"should be less than {maximum}")
        elif value > maximum:
            yield Violation(path, "maximum", f"should be less than or equal to {maximum}")
    minimum = schema.get("minimum")
    if minimum is not None:
        if schema.get("exclusiveMinimum") and value <= minimum:
            yield Violation(path, "minimum", f"should be greater than {minimum}")
        elif value < minimum:
            yield Violation(path, "minimum", f"should be greater than or equal to {minimum}")
    factor = schema.get("multipleOf")
    if factor and not _is_multiple(value, factor):
        yield Violation(path, "multipleOf", f"should be a multiple of {factor}")


def _is_multiple(value: float, factor: float) -> bool:
    if isinstance(value, int) and isinstance(factor, int):
        return value % factor == 0
    quotient = value / factor
    return math.isfinite(quotient) and quotient == math.floor(quotient)


def _counted(
    count: int, schema: values.Schema, path: str, noun: str, what: str
) -> Iterator[Violation]:
    most = schema.get(f"max{noun}")
    if most is not None and count > most:
        yield Violation(path, f"max{noun}", f"must have at most {most} {what}")
    least = schema.get(f"min{noun}")
    if least is not None and count < least:
        yield Violation(path, f"min{noun}", f"should have at least {least} {what}")
