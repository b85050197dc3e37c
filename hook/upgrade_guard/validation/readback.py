"""What the apiserver does to an object before validating it and when reading it back:
pruning of undeclared fields, dropping of nulls the schema may not hold, coercion of
embedded resources' metadata, defaulting (apiextensions-apiserver
``pkg/apiserver/schema/pruning/algorithm.go``, ``defaulting/algorithm.go``,
``defaulting/prunenulls.go``, ``customresource_handler.go``).

Every function works on a copy: the input is never modified.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from . import values

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})
_OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


def coerce(obj: dict[str, Any], schema: values.Schema) -> dict[str, Any]:
    """``obj`` as decoded under ``schema`` (pruned, nulls dropped, defaulted): what a GET
    returns for a stored object and what a write's body becomes before validation."""
    result = copy.deepcopy(obj)
    _prune(result, schema, root=True)
    _drop_nulls(result, schema)
    _coerce_embedded_metadata(result, schema, root=True)
    _default(result, schema)
    return result


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str]]:
    """The RFC 6902 operations turning ``before`` into ``after``, as (op, path) pairs:
    never the values."""
    patch = jsonpatch.make_patch(before, after)
    return [(str(op["op"]), str(op["path"])) for op in patch]


def _is_embedded(schema: values.Schema | None, root: bool) -> bool:
    return root or bool(schema and schema.get("x-kubernetes-embedded-resource"))


def _prune(value: Any, schema: values.Schema | None, root: bool = False) -> None:
    if schema is not None and schema.get("x-kubernetes-preserve-unknown-fields"):
        _skip_prune(value, schema, root)
        return
    if isinstance(value, dict):
        embedded = _is_embedded(schema, root)
        for key in list(value):
            if embedded and key in _META_FIELDS:
                continue
            child = values.property_schema(schema, key)
            if child is not None:
                _prune(value[key], child)
            else:
                del value[key]
    elif isinstance(value, list):
        items = values.item_schema(schema)
        for item in value:
            _prune(item, items)


def _skip_prune(value: Any, schema: values.Schema, root: bool) -> None:
    if isinstance(value, dict):
        embedded = _is_embedded(schema, root)
        for key, item in value.items():
            if embedded and key in _META_FIELDS:
                continue
            child = values.property_schema(schema, key)
            if child is not None:
                _prune(item, child)
    elif isinstance(value, list):
        items = values.item_schema(schema)
        if items is not None:
            for item in value:
                _skip_prune(item, items, False)


def _drop_nulls(value: Any, schema: values.Schema | None) -> None:
    if isinstance(value, dict):
        for key in list(value):
            child = values.property_schema(schema, key)
            if (
                value[key] is None
                and child is not None
                and not child.get("nullable")
                and "default" not in child
            ):
                del value[key]
            else:
                _drop_nulls(value[key], child)
    elif isinstance(value, list):
        items = values.item_schema(schema)
        for item in value:
            _drop_nulls(item, items)


def _coerce_embedded_metadata(value: Any, schema: values.Schema | None, root: bool) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        if not root and schema.get("x-kubernetes-embedded-resource"):
            meta = value.get("metadata")
            if isinstance(meta, dict):
                for key in [k for k in meta if k not in _OBJECT_META_FIELDS]:
                    del meta[key]
        for key, item in value.items():
            if root and key in _META_FIELDS:
                continue
            _coerce_embedded_metadata(item, values.property_schema(schema, key), False)
    elif isinstance(value, list):
        items = values.item_schema(schema)
        for item in value:
            _coerce_embedded_metadata(item, items, False)


def _non_nullable_null(value: Any, schema: values.Schema | None) -> bool:
    return value is None and schema is not None and not schema.get("nullable")


def _default(value: Any, schema: values.Schema | None) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, prop in properties.items():
            if "default" not in prop or prop["default"] is None:
                continue
            if key not in value or _non_nullable_null(value[key], prop):
                value[key] = copy.deepcopy(prop["default"])
        additional = schema.get("additionalProperties")
        for key in list(value):
            if key in properties:
                _default(value[key], properties[key])
            elif isinstance(additional, dict):
                if _non_nullable_null(value[key], additional) and "default" in additional:
                    value[key] = copy.deepcopy(additional["default"])
                _default(value[key], additional)
    elif isinstance(value, list):
        items = values.item_schema(schema)
        for i in range(len(value)):
            if _non_nullable_null(value[i], items) and items and "default" in items:
                value[i] = copy.deepcopy(items["default"])
            _default(value[i], items)
