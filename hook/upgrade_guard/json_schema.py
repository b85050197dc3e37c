"""The part of JSON Schema (2020-12) the published schemas use, checked in the tool's own
words: the first problem as "where: what", where a dotted path names the entry.

A ``description`` says what a value should be ("a canonical positive decimal, such as 4"):
the error for a pattern or a set of alternatives names it. Keywords: type, enum, const,
properties, additionalProperties, required, propertyNames, items, anyOf, minimum,
minLength, maxLength, pattern, minItems, minProperties."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

Schema = Mapping[str, Any]

_TYPES: dict[str, tuple[str, Any]] = {
    "object": ("a mapping", lambda v: isinstance(v, Mapping)),
    "array": ("a list", lambda v: isinstance(v, list)),
    "string": ("a string", lambda v: isinstance(v, str)),
    "integer": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "number": ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    "boolean": ("true or false", lambda v: isinstance(v, bool)),
    "null": ("null", lambda v: v is None),
}


def did_you_mean(wrong: Any, known: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for the nearest known spelling, or "" when nothing is near."""
    near = difflib.get_close_matches(str(wrong), sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _at(where: str, what: str) -> str:
    return f"{where}: {what}" if where else what


def _within(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _words(values: list[Any]) -> str:
    return ", ".join(str(value) for value in values)


def problem(value: Any, schema: Schema, where: str = "") -> str | None:
    """The first way value breaks schema, as "where: what" (where is empty at the root,
    then dotted: ``declared-breaks[0].rule``), or None."""
    expected = schema.get("description", "")
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES[name][1](value) for name in names):
            return _at(where, f"must be {_TYPES[names[0]][0]}")
    if "const" in schema and value != schema["const"]:
        return _at(where, f"must be {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        choices = [str(choice) for choice in schema["enum"]]
        if len(choices) > 6:
            return _at(
                where, f"unknown {expected or 'value'} {value!r}{did_you_mean(value, choices)}"
            )
        return _at(where, f"must be one of {_words(choices)}, not {value!r}")
    if "anyOf" in schema and all(problem(value, each, where) for each in schema["anyOf"]):
        return _at(where, f"expected {expected}, not {value!r}")
    if isinstance(value, str):
        return _string(value, schema, where, expected)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and "minimum" in schema and value < schema["minimum"]:
        return _at(where, f"must be {schema['minimum']} or more")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return _at(where, "must not be empty")
        for index, item in enumerate(value):
            found = problem(item, schema.get("items", {}), f"{where}[{index}]")
            if found:
                return found
    if isinstance(value, Mapping):
        return _mapping(value, schema, where)
    return None


def _string(value: str, schema: Schema, where: str, expected: str) -> str | None:
    if len(value.strip()) < schema.get("minLength", 0):
        return _at(where, "must be a non-empty string")
    if len(value) > schema.get("maxLength", len(value)):
        return _at(where, f"expected {expected}: at most {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        return _at(where, f"expected {expected}, not {value!r}")
    return None


def _mapping(value: Mapping[str, Any], schema: Schema, where: str) -> str | None:
    if len(value) < schema.get("minProperties", 0):
        return _at(where, "must not be empty")
    for key in schema.get("required", ()):
        if key not in value:
            return _at(where, f"{key} is required")
    properties = schema.get("properties", {})
    others = schema.get("additionalProperties", True)
    for key, item in value.items():
        if "propertyNames" in schema:
            found = problem(key, schema["propertyNames"], where)
            if found:
                return found
        if key in properties:
            found = problem(item, properties[key], _within(where, key))
        elif others is False:
            hint = did_you_mean(key, properties) or f" (expected {_words(list(properties))})"
            return _at(where, f"unknown key {key!r}{hint}")
        else:
            found = problem(
                item, others if isinstance(others, Mapping) else {}, _within(where, key)
            )
        if found:
            return found
    return None
