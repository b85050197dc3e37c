"""JSON values as Go's unstructured decoding holds them, and the apiserver's field paths.

Equality is Go's ``reflect.DeepEqual`` over decoded JSON: ``1`` and ``1.0`` differ, as do
``true`` and ``1`` (Python's ``==`` says otherwise).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

Schema = Mapping[str, Any]
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def same(a: Any, b: Any) -> bool:
    """Deep equality of two JSON values, with Go's distinction of int, float and bool."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def canonical(value: Any) -> str:
    """Go's json.Marshal of a value, for telling compound values apart (keys sorted)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def scalar_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def child(path: str, key: str) -> str:
    """The path of property ``key``: ``.key``, or ``["key"]`` when not a plain name."""
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def keyed(path: str, key: str) -> str:
    """The path of a map value: ``path["key"]``."""
    return f"{path}[{json.dumps(key)}]"


def indexed(path: str, index: int) -> str:
    return f"{path}[{index}]"


_STEP = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def steps(path: str) -> list[str | int]:
    """A path back to its steps: names and map keys as str, list indices as int."""
    found: list[str | int] = []
    for match in _STEP.finditer(path):
        name, index, quoted = match.groups()
        if name is not None:
            found.append(name)
        elif index is not None:
            found.append(int(index))
        else:
            found.append(str(json.loads(quoted)))
    return found


def property_schema(schema: Schema | None, key: str) -> Schema | None:
    """The schema of ``key`` in an object: its property, else additionalProperties."""
    if schema is None:
        return None
    properties = schema.get("properties") or {}
    if key in properties:
        found: Schema = properties[key]
        return found
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        return additional
    return None


def fields(
    value: Mapping[str, Any], schema: Schema, path: str
) -> Iterator[tuple[Any, Schema, str]]:
    """Each field of an object with its schema (a property, else additionalProperties) and
    its path; fields the schema does not declare are left out."""
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if key in properties:
            yield item, properties[key], child(path, key)
        elif isinstance(additional, Mapping):
            yield item, additional, keyed(path, key)


def item_schema(schema: Schema | None) -> Schema | None:
    if schema is None:
        return None
    items = schema.get("items")
    return items if isinstance(items, Mapping) else None


_USES: dict[tuple[int, str], tuple[Schema, bool]] = {}


def uses(schema: Schema, keyword: str) -> bool:
    """Whether ``keyword`` appears in ``schema`` or under its properties, items or
    additionalProperties (cached per schema object, which the cache keeps alive)."""
    key = (id(schema), keyword)
    found = _USES.get(key)
    if found is None:
        children = [*(schema.get("properties") or {}).values()]
        for name in ("items", "additionalProperties"):
            if isinstance(schema.get(name), Mapping):
                children.append(schema[name])
        result = keyword in schema or any(uses(child, keyword) for child in children)
        found = _USES[key] = (schema, result)
    return found[1]


Memo = dict[tuple[int, int], tuple[Any, list[Any]]]


def walk_remembered(
    value: Any,
    schema: Schema | None,
    path: str,
    memo: Memo | None,
    walk: Callable[[Any, Schema | None, str], Iterable[Any]],
) -> list[Any]:
    """``walk`` over each child of ``value``, remembering each child's result in ``memo`` by
    identity (the memo holds the value, so ids stay its): objects that share subtrees, as
    the writes judged for one stored object do, are walked once."""
    if memo is None or not isinstance(value, dict) or schema is None:
        return list(walk(value, schema, path))
    found: list[Any] = []
    properties = schema.get("properties") or {}
    for key, item in value.items():
        child_schema = property_schema(schema, key)
        where = child(path, key) if key in properties else keyed(path, key)
        remembered = memo.get((id(item), id(child_schema)))
        if remembered is None:
            remembered = (item, list(walk(item, child_schema, where)))
            memo[(id(item), id(child_schema))] = remembered
        found += remembered[1]
    return found
