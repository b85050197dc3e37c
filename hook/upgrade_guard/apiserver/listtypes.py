"""``x-kubernetes-list-type`` set and map invariants over a whole object, as
apiextensions-apiserver ``pkg/apiserver/schema/listtype/validation.go`` checks them.

The walk follows properties, additionalProperties and items only (not combinators). On
UPDATE the apiserver checks them only when the old object had no such violation at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import values
from .violations import Violation

Memo = values.Memo


def violations(
    value: Any, schema: values.Schema | None, path: str = "", memo: Memo | None = None
) -> list[Violation]:
    """Violations in ``value``; ``memo``: see :func:`values.walk_remembered`."""
    if schema is None or not values.uses(schema, "x-kubernetes-list-type"):
        return []
    return values.walk_remembered(value, schema, path, memo, _walk)


def _walk(value: Any, schema: values.Schema | None, path: str) -> Iterator[Violation]:
    if schema is None or not values.uses(schema, "x-kubernetes-list-type"):
        return
    if isinstance(value, dict):
        for item, item_schema, item_path in values.fields(value, schema, path):
            yield from _walk(item, item_schema, item_path)
    elif isinstance(value, list):
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set":
            for i in _repeated(value):
                yield Violation(values.indexed(path, i), "duplicate", "Duplicate value")
        elif list_type == "map":
            yield from _map_list(value, schema, path)
        items = values.item_schema(schema)
        for i, item in enumerate(value):
            yield from _walk(item, items, values.indexed(path, i))


def _repeated(items: list[Any]) -> list[int]:
    """Indices of the second occurrence of each repeated item (Go's validateListSet)."""
    seen: dict[Any, int] = {}
    repeated = []
    for i, item in enumerate(items):
        key: Any = (
            ("compound", values.canonical(item))
            if isinstance(item, dict | list)
            else values.scalar_key(item)
        )
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            repeated.append(i)
    return repeated


def _map_list(items: list[Any], schema: values.Schema, path: str) -> Iterator[Violation]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            yield Violation(
                values.indexed(path, i), "type", "must be an object for an array of list-type map"
            )
            return
    keys = list(schema.get("x-kubernetes-list-map-keys") or [])
    if len(items) <= 1:
        return
    if len(keys) == 1:
        absent = object()
        found: list[Any] = [
            absent if item is None or keys[0] not in item else item[keys[0]] for item in items
        ]
        marked = [("absent",) if f is absent else f for f in found]
        for i in _repeated(marked):
            yield Violation(values.indexed(path, i), "duplicate", "Duplicate value")
        return
    tuples = [{k: item[k] for k in keys if k in item} if item else {} for item in items]
    for i in _repeated(tuples):
        yield Violation(values.indexed(path, i), "duplicate", "Duplicate value")
