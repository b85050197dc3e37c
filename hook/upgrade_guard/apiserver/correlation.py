"""Old and new values paired node by node, as the apiserver pairs them for ratcheting
(k8s.io/apiserver ``pkg/cel/common/equality.go``, ``CorrelatedObject``).

Object fields pair by name (when both sides hold the field and the schema declares it),
items of ``x-kubernetes-list-type: map`` lists by their keys; items of any other list do
not pair at all: such a list ratchets only as a whole.
"""

from __future__ import annotations

import json
from typing import Any

from upgrade_guard.schema import deep_equal

from . import values


def map_list_key(item: Any, keys: list[str]) -> Any:
    """The key the apiserver pairs a map-list item by (``pkg/cel/common/maplist.go``), or
    None where it pairs none: an item lacking a key or holding a non-scalar one. One key is
    its value as Go holds it (1 and 1.0 differ); several are printed with %t, %f (six
    decimals: 1.0000001 and 1.0000002 are one key), %d and %q."""
    if not isinstance(item, dict) or any(k not in item for k in keys):
        return None
    found = [item[k] for k in keys]
    if not all(isinstance(v, bool | int | float | str) for v in found):
        return None
    if len(found) == 1:
        return values.scalar_key(found[0])
    return tuple(_printed(v) for v in found)


def _printed(value: bool | float | str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if values.is_int64(value):
        return str(value)
    if isinstance(value, int | float):
        return f"{float(value):f}"
    return json.dumps(value)


def old_map_list_item(schema: values.Schema, old: list[Any], new_item: Any) -> Any:
    """The old item with ``new_item``'s map keys, or None."""
    keys = list(schema.get("x-kubernetes-list-map-keys") or [])
    wanted = map_list_key(new_item, keys)
    if wanted is None:
        return None
    for item in old:
        if map_list_key(item, keys) == wanted:
            return item
    return None


class Correlation:
    """A new value, the old value it pairs with, and the schema of that node."""

    __slots__ = ("_children", "_equal", "new", "old", "schema")

    def __init__(self, new: Any, old: Any, schema: values.Schema | None) -> None:
        self.new = new
        self.old = old
        self.schema = schema
        self._equal: bool | None = None
        self._children: dict[str | int, Correlation | None] = {}

    def key(self, name: str) -> Correlation | None:
        if name not in self._children:
            self._children[name] = self._key(name)
        return self._children[name]

    def index(self, i: int) -> Correlation | None:
        if i not in self._children:
            self._children[i] = self._index(i)
        return self._children[i]

    def _key(self, name: str) -> Correlation | None:
        if self.schema is None:
            return None
        if not isinstance(self.new, dict) or not isinstance(self.old, dict):
            return None
        if name not in self.new or name not in self.old:
            return None
        schema = values.property_schema(self.schema, name)
        if schema is None:
            return None
        return Correlation(self.new[name], self.old[name], schema)

    def _index(self, i: int) -> Correlation | None:
        if self.schema is None or self.schema.get("x-kubernetes-list-type") != "map":
            return None
        if not isinstance(self.new, list) or not isinstance(self.old, list) or i >= len(self.new):
            return None
        old_item = old_map_list_item(self.schema, self.old, self.new[i])
        items = values.item_schema(self.schema)
        if old_item is None or items is None:
            return None
        return Correlation(self.new[i], old_item, items)

    def equal(self) -> bool:
        """Go's CachedDeepEqual: map lists compare item by key, other lists as a whole."""
        if self._equal is None:
            self._equal = self._compare()
        return self._equal

    def _compare(self) -> bool:
        new, old = self.new, self.old
        if new is None or old is None:
            return new is None and old is None
        if isinstance(new, list) and isinstance(old, list):
            if len(new) != len(old):
                return False
            if self.schema is None or self.schema.get("x-kubernetes-list-type") != "map":
                return deep_equal(new, old)
            for i in range(len(new)):
                item = self.index(i)
                if item is None or not item.equal():
                    return False
            return True
        if isinstance(new, dict) and isinstance(old, dict):
            if len(new) != len(old):
                return False
            for name in new:
                field = self.key(name)
                if field is None or not field.equal():
                    return False
            return True
        if isinstance(new, list | dict) or isinstance(old, list | dict):
            return False
        return deep_equal(new, old)
