"""JSON values as Go's unstructured decoding holds them, the apiserver's checks of numbers
and enums on them (kube-openapi's validators), and the apiserver's field paths.

The apiserver decodes a JSON integer as an int64 and any other number as a float64
(apimachinery ``util/json``); Python's ``json`` gives int and float the same way. Equality is
Go's ``reflect.DeepEqual`` (:func:`upgrade_guard.schema.deep_equal`): ``1`` and ``1.0``
differ, as do ``true`` and ``1``. Every check here is held to kube-apiserver v1.35.4 by
``tests/cluster/test_crd_validation_truth.py`` (defaults) and the differential suite.
"""

from __future__ import annotations

import json
import marshal
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from upgrade_guard import schema as schemas

Schema = Mapping[str, Any]
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT64_MIN, _INT64_END = -(2**63), 2**63
_JSON_INTEGER_MAX = float(2**53 - 1)


def is_int64(value: Any) -> bool:
    """Whether Go holds the JSON number as an int64 (else a float64)."""
    return value.__class__ is int and _INT64_MIN <= value < _INT64_END


def go_type(value: Any) -> str:
    """The JSON type kube-openapi's type check sees: an int64 is an integer, a float64 a
    number, whatever its value."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "integer" if is_int64(value) else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _int64(value: float) -> int:
    """Go's int64(value) on amd64: toward zero, and the minimum where it does not fit."""
    if math.isfinite(value) and _INT64_MIN <= math.trunc(value) < _INT64_END:
        return math.trunc(value)
    return _INT64_MIN


def is_json_integer(value: float) -> bool:
    """go-openapi swag's IsFloat64AJSONInteger (v0.23.0), as kube-openapi uses it for the
    integer type and multipleOf: within 2^53, and an integer up to a relative error of 1e-9
    from above. Below zero only exact integers count: Go's uint64() of a negative float64
    is far from it (amd64), so the relative error is about 1."""
    if not math.isfinite(value) or abs(value) > _JSON_INTEGER_MAX:
        return False
    whole = math.trunc(value)
    if value == whole:
        return True
    if value < 0 or whole == 0:
        return False
    return (value - whole) / min(value + whole, sys.float_info.max) < 1e-9


def matches_type(value: Any, types: tuple[str, ...], format_name: str) -> bool:
    """kube-openapi's type check of a value that is not null: ``types`` as the validator has
    them, ``format_name`` the format it kept ("" for none). A float64 that is a JSON integer
    passes as an integer, an int64 as a number; a string or a list passes a schema with a
    format and no numeric type."""
    if not types and not format_name:
        return True
    found = go_type(value)
    float_int = found == "number" and "integer" in types and is_json_integer(value)
    int_float = found == "integer" and "number" in types
    is_text = isinstance(value, str | list)
    if not is_text and format_name:
        own_format = {"integer": "int64", "number": "float64"}.get(found)
        if not (found in types or own_format == format_name or float_int or int_float):
            return False
    if format_name and is_text and "number" not in types and "integer" not in types:
        return True
    return found in types or float_int or int_float


def in_enum(value: Any, enum: Iterable[Any]) -> bool:
    """kube-openapi's enum check: the value converted to each member's Go type, then
    DeepEqual. So a float64 member matches an int64 of its value, an int64 member matches a
    float64 cut toward zero (1.5 is in [1]), a string member matches an int64 read as a
    code point (97 is in ["a"]); null is in no enum."""
    if value is None:
        return False
    for member in enum:
        if member is None:
            continue
        if isinstance(value, bool) or isinstance(member, bool):
            if value.__class__ is member.__class__ and value == member:
                return True
        elif isinstance(member, int | float) and isinstance(value, int | float):
            if is_int64(member):
                if (value if is_int64(value) else _int64(float(value))) == member:
                    return True
            elif float(value) == float(member):
                return True
        elif isinstance(member, str) and is_int64(value):
            if _code_point(value) == member:
                return True
        elif schemas.deep_equal(value, member):
            return True
    return False


def _code_point(value: int) -> str:
    """Go's string(rune): an invalid code point is U+FFFD."""
    valid = 0 <= value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF
    return chr(value) if valid else "\ufffd"


def above_maximum(value: float, maximum: float, exclusive: bool) -> bool:
    """kube-openapi's maximum check: an int64 against the maximum cut to an int64 (2 is not
    below an exclusive 2.5), a float64 against the float64."""
    if is_int64(value):
        bound: float = _int64(float(maximum))
    else:
        value, bound = float(value), float(maximum)
    return value >= bound if exclusive else value > bound


def below_minimum(value: float, minimum: float, exclusive: bool) -> bool:
    """kube-openapi's minimum check, the mirror of :func:`above_maximum` (1 passes 1.5)."""
    if is_int64(value):
        bound: float = _int64(float(minimum))
    else:
        value, bound = float(value), float(minimum)
    return value <= bound if exclusive else value < bound


def is_multiple(value: float, factor: float) -> bool:
    """kube-openapi's multipleOf: an int64 against the factor cut to an int64 (which must
    be positive: no int64 is a multiple of 0.5), a float64 by dividing (multiplying by
    1/factor below 1) and asking :func:`is_json_integer` (0.3 is a multiple of 0.1)."""
    if is_int64(value):
        whole = _int64(float(factor))
        return whole > 0 and value % whole == 0
    factor = float(factor)
    if factor <= 0:
        return False
    quotient = 1 / factor * float(value) if factor < 1 else float(value) / factor
    return is_json_integer(quotient)


def canonical(value: Any) -> str:
    """Go's json.Marshal of a value, for telling compound values apart (keys sorted): it
    writes a float64 without a fraction below 1e21 as an integer, so ``{"a": 1.0}`` and
    ``{"a": 1}`` are one value to list-type set uniqueness."""
    return json.dumps(_marshaled(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _marshaled(value: Any) -> Any:
    if value.__class__ is float and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {key: _marshaled(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_marshaled(item) for item in value]
    return value


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


# The keywords the value checks ask ``uses`` of, found at once in a schema's marshaled bytes
# (C speed): a walk of every node below the root, for each of them, is most of what judging
# a small object against a large schema costs. A keyword's name met elsewhere (a property
# so named, a description) only makes a check look further, never changes what it finds.
_TRACKED = tuple(
    (keyword, keyword.encode())
    for keyword in (
        "x-kubernetes-validations",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-list-type",
    )
)
_USES: dict[tuple[int, str], tuple[Schema, bool]] = {}
_TRACKED_IN: dict[int, tuple[Schema, frozenset[str] | None]] = {}


def uses(schema: Schema, keyword: str) -> bool:
    """Whether ``keyword`` appears in ``schema`` or in any schema inside it (by the one walker,
    :func:`upgrade_guard.schema.subschemas`; cached per schema object, which the cache keeps
    alive); for the tracked keywords, possibly also where it appears otherwise."""
    known = _TRACKED_IN.get(id(schema))
    if known is None:
        known = _TRACKED_IN[id(schema)] = (schema, _tracked_in(schema))
    if known[1] is not None and any(keyword == name for name, _ in _TRACKED):
        return keyword in known[1]
    key = (id(schema), keyword)
    found = _USES.get(key)
    if found is None:
        result = keyword in schema or any(
            isinstance(position.schema, Mapping) and uses(position.schema, keyword)
            for position in schemas.subschemas(schema)
        )
        found = _USES[key] = (schema, result)
    return found[1]


def forget_schemas() -> None:
    _USES.clear()
    _TRACKED_IN.clear()


def _tracked_in(schema: Schema) -> frozenset[str] | None:
    """The tracked keywords whose names ``schema``'s bytes hold; None where marshal cannot
    write it (not plain dicts and lists): then each is walked for."""
    try:
        blob = marshal.dumps(dict(schema))
    except ValueError:
        return None
    return frozenset(name for name, data in _TRACKED if data in blob)


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
