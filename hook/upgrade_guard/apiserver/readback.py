"""What the apiserver does to an object before validating it and when reading it back:
pruning of undeclared fields, dropping of nulls the schema may not hold, coercion of
embedded resources' metadata, defaulting (apiextensions-apiserver
``pkg/apiserver/schema/pruning/algorithm.go``, ``defaulting/prunenulls.go``,
``defaulting/algorithm.go``, ``customresource_handler.go``).

One pass builds the result and the RFC 6902 patch from the input to it. The input is
never modified; the result shares unchanged subtrees with it, so treat both as read-only.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from . import values

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})
_OBJECT_META_FIELDS = frozenset(
    {
        *("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion"),
        *("generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"),
        *("labels", "annotations", "ownerReferences", "finalizers", "managedFields"),
    }
)
Operation = dict[str, Any]


def coerce(
    obj: dict[str, Any], schema: values.Schema
) -> tuple[dict[str, Any], jsonpatch.JsonPatch]:
    """``obj`` as decoded under ``schema`` (what a GET returns for a stored object, what a
    write's body becomes before validation) and the patch from ``obj`` to it."""
    operations: list[Operation] = []
    result = _object(obj, schema, "", operations, root=True)
    return result, jsonpatch.JsonPatch(operations)


def operations(patch: jsonpatch.JsonPatch) -> list[tuple[str, str]]:
    """A patch as (op, path) pairs: never the values."""
    return [(str(op["op"]), str(op["path"])) for op in patch.patch]


def _pointer(base: str, key: str | int) -> str:
    return f"{base}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _value(value: Any, schema: values.Schema | None, where: str, ops: list[Operation]) -> Any:
    if schema is None:
        return value
    if isinstance(value, dict):
        return _object(value, schema, where, ops)
    if isinstance(value, list):
        return _list(value, schema, where, ops)
    return value


def _object(
    value: dict[str, Any],
    schema: values.Schema,
    where: str,
    ops: list[Operation],
    root: bool = False,
) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    additional = additional if isinstance(additional, dict) else None
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
    result: dict[str, Any] = {}
    changed = False
    for key, item in value.items():
        here = _pointer(where, key)
        if embedded and key in _META_FIELDS:
            if key == "metadata" and not root and isinstance(item, dict):
                item = _embedded_metadata(item, here, ops)
                changed = changed or item is not value[key]
            result[key] = item
            continue
        child = properties.get(key, additional)
        if child is None:
            if preserve:
                result[key] = item
            else:
                ops.append({"op": "remove", "path": here})
                changed = True
            continue
        if item is None and not child.get("nullable") and "default" not in child:
            ops.append({"op": "remove", "path": here})
            changed = True
            continue
        coerced = _value(item, child, here, ops)
        changed = changed or coerced is not item
        result[key] = coerced
    for key, prop in properties.items():
        default = prop.get("default")
        if default is None:
            continue
        present = key in result
        if present and not (result[key] is None and not prop.get("nullable")):
            continue
        here = _pointer(where, key)
        filled = _value(copy.deepcopy(default), prop, here, [])
        ops.append({"op": "replace" if present else "add", "path": here, "value": filled})
        result[key] = filled
        changed = True
    if additional is not None and "default" in additional and not additional.get("nullable"):
        for key, item in result.items():
            if item is None and key not in properties:
                here = _pointer(where, key)
                filled = _value(copy.deepcopy(additional["default"]), additional, here, [])
                ops.append({"op": "replace", "path": here, "value": filled})
                result[key] = filled
                changed = True
    return result if changed else value


def _list(value: list[Any], schema: values.Schema, where: str, ops: list[Operation]) -> list[Any]:
    items = values.item_schema(schema)
    if items is None:
        return value
    result = []
    changed = False
    for i, item in enumerate(value):
        here = _pointer(where, i)
        if item is None and not items.get("nullable") and items.get("default") is not None:
            filled = _value(copy.deepcopy(items["default"]), items, here, [])
            ops.append({"op": "replace", "path": here, "value": filled})
            result.append(filled)
            changed = True
            continue
        coerced = _value(item, items, here, ops)
        changed = changed or coerced is not item
        result.append(coerced)
    return result if changed else value


def _embedded_metadata(meta: dict[str, Any], where: str, ops: list[Operation]) -> dict[str, Any]:
    unknown = [key for key in meta if key not in _OBJECT_META_FIELDS]
    if not unknown:
        return meta
    for key in unknown:
        ops.append({"op": "remove", "path": _pointer(where, key)})
    return {k: v for k, v in meta.items() if k in _OBJECT_META_FIELDS}
