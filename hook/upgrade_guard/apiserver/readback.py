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


def coerce(obj: dict[str, Any], schema: values.Schema) -> tuple[dict[str, Any], list[Operation]]:
    """``obj`` as decoded under ``schema`` (what a GET returns for a stored object, what a
    write's body becomes before validation) and the RFC 6902 patch from ``obj`` to it."""
    decoding = _Decoding()
    result = decoding.object(obj, schema, "", root=True)
    return result, decoding.ops


def operations(patch: list[Operation]) -> list[tuple[str, str]]:
    """A patch as (op, path) pairs: never the values."""
    return [(str(op["op"]), str(op["path"])) for op in patch]


def _pointer(base: str, key: str | int) -> str:
    return f"{base}/{str(key).replace('~', '~0').replace('/', '~1')}"


class _Decoding:
    """One pass over an object: the operations it makes, and the subtrees found unchanged
    under a schema node, which a value shared at several places (a witness's thousand
    items) need not be walked again for (it cannot change while the pass reads it)."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []
        self._unchanged: set[tuple[int, int]] = set()

    def value(self, value: Any, schema: values.Schema, where: str) -> Any:
        if not isinstance(value, dict | list):
            return value
        key = (id(value), id(schema))
        if key in self._unchanged:
            return value
        made = len(self.ops)
        if isinstance(value, dict):
            result: Any = self.object(value, schema, where)
        else:
            result = self.list(value, schema, where)
        if result is value and len(self.ops) == made:
            self._unchanged.add(key)
        return result

    def inner(self, item: Any, schema: values.Schema, where: str, key: str | int) -> Any:
        """``item``, at ``key`` below ``where``, decoded: its pointer made only where it has
        fields or items to walk (most values are scalars)."""
        if not isinstance(item, dict | list):
            return item
        return self.value(item, schema, _pointer(where, key))

    def object(
        self, value: dict[str, Any], schema: values.Schema, where: str, root: bool = False
    ) -> dict[str, Any]:
        ops = self.ops
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        additional = additional if isinstance(additional, dict) else None
        preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
        result: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            if embedded and key in _META_FIELDS:
                if key == "metadata" and not root and isinstance(item, dict):
                    item = _embedded_metadata(item, _pointer(where, key), ops)
                    changed = changed or item is not value[key]
                result[key] = item
                continue
            child = properties.get(key, additional)
            if child is None:
                if preserve:
                    result[key] = item
                else:
                    ops.append({"op": "remove", "path": _pointer(where, key)})
                    changed = True
                continue
            if item is None and not child.get("nullable") and "default" not in child:
                ops.append({"op": "remove", "path": _pointer(where, key)})
                changed = True
                continue
            coerced = self.inner(item, child, where, key)
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
            filled = _filled(default, prop, here)
            ops.append({"op": "replace" if present else "add", "path": here, "value": filled})
            result[key] = filled
            changed = True
        if additional is not None and "default" in additional and not additional.get("nullable"):
            for key, item in result.items():
                if item is None and key not in properties:
                    here = _pointer(where, key)
                    filled = _filled(additional["default"], additional, here)
                    ops.append({"op": "replace", "path": here, "value": filled})
                    result[key] = filled
                    changed = True
        return result if changed else value

    def list(self, value: list[Any], schema: values.Schema, where: str) -> list[Any]:
        items = values.item_schema(schema)
        if items is None:
            return value
        result = []
        changed = False
        for i, item in enumerate(value):
            if item is None and not items.get("nullable") and items.get("default") is not None:
                here = _pointer(where, i)
                filled = _filled(items["default"], items, here)
                self.ops.append({"op": "replace", "path": here, "value": filled})
                result.append(filled)
                changed = True
                continue
            coerced = self.inner(item, items, where, i)
            changed = changed or coerced is not item
            result.append(coerced)
        return result if changed else value


def _filled(default: Any, schema: values.Schema, where: str) -> Any:
    """A default as it fills a field or item: a copy of its own, itself decoded (what that
    decoding would prune or fill is part of the default, not an operation of its own)."""
    return _Decoding().value(copy.deepcopy(default), schema, where)


def _embedded_metadata(meta: dict[str, Any], where: str, ops: list[Operation]) -> dict[str, Any]:
    unknown = [key for key in meta if key not in _OBJECT_META_FIELDS]
    if not unknown:
        return meta
    for key in unknown:
        ops.append({"op": "remove", "path": _pointer(where, key)})
    return {k: v for k, v in meta.items() if k in _OBJECT_META_FIELDS}
