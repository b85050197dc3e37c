"""The schema digest: ``sha256:`` + 64 lowercase hex digits of a CRD's normalized spec.

The digest covers ``spec`` only (never ``metadata``, so the annotations that carry it do not
feed it, and never ``status``). It is meant to be reproduced by other tools; this docstring is
the definition, and ``tests/counters/test_counters_digest.py`` pins it with literal values.

1. Input. The CRD document as Kubernetes reads it (YAML 1.1 scalars as sigs.k8s.io/yaml
   resolves them: ``on`` is true, ``010`` is 8; JSON files as JSON). Take its ``spec``
   mapping.

2. Kubernetes' own defaulting of an ``apiextensions.k8s.io/v1`` spec (``SetDefaults_*`` in
   ``apiextensions-apiserver/pkg/apis/apiextensions/v1/defaults.go``) and the effect of its
   Go types on a round trip (fields without ``omitempty`` always present, ``omitempty``
   zero values never present). First, every mapping entry whose value is ``null`` is
   removed (Go reads null as "not set"), everywhere except inside the values of ``default``
   and ``enum``, which are data and kept as written. "Empty" below means absent, ``""``,
   ``false``, ``0``, ``[]`` or ``{}`` as the field's type allows.

   spec
     - ``conversion`` absent → ``{"strategy": "None"}``;
     - ``conversion.webhook.clientConfig.service.port`` absent while ``service`` is
       present → ``443``;
     - ``names.singular`` empty → ``names.kind`` lower-cased (Go ``strings.ToLower``);
     - ``names.listKind`` empty while ``names.kind`` is not → ``names.kind + "List"``;
     - ``names.shortNames``, ``names.categories`` empty → removed;
     - ``preserveUnknownFields: false`` → removed.
   each entry of ``spec.versions`` (list order is kept)
     - ``served`` and ``storage`` absent → ``false`` (both always present);
     - ``deprecated: false`` → removed;
     - ``additionalPrinterColumns`` and ``selectableFields`` empty → removed; in each
       printer column, ``priority: 0`` → removed;
     - ``schema.openAPIV3Schema``: normalized as in 3.

3. Schema normalization, applied at every schema position: the root, each value of
   ``properties``, ``items``, ``additionalProperties`` when it is a mapping, ``not``, and
   each member of ``allOf``, ``anyOf``, ``oneOf``. The values of ``default`` and ``enum``
   are data, kept as written; the values of other keywords only lose their nulls (step 2).
   At each position:
     - ``description``, ``title``, ``example``, ``externalDocs`` → removed (documentation,
       ``upgrade_guard.schema.without_documentation``);
     - ``nullable``, ``uniqueItems``, ``exclusiveMinimum``, ``exclusiveMaximum``,
       ``x-kubernetes-embedded-resource``, ``x-kubernetes-int-or-string`` equal to
       ``false`` → removed (``omitempty`` booleans);
     - ``required``, ``enum``, ``properties``, ``allOf``, ``anyOf``, ``oneOf``,
       ``x-kubernetes-list-map-keys``, ``x-kubernetes-validations`` empty → removed.
   Everything else stays, including ``x-kubernetes-preserve-unknown-fields: false`` (a
   pointer in Go: false and absent differ) and printer-column descriptions.

4. Canonical JSON of the result, encoded as UTF-8:
     - objects with keys sorted by Unicode code point, no whitespace anywhere
       (separators ``,`` and ``:``); lists in their order;
     - strings in double quotes, escaping ``"`` as ``\\"``, ``\\`` as ``\\\\``, the
       control characters U+0008, U+0009, U+000A, U+000C, U+000D as ``\\b \\t \\n \\f \\r``
       and any other character below U+0020 as ``\\u00xx`` (lowercase hex); every other
       character is written as itself;
     - ``true``, ``false``, ``null``;
     - numbers as a JSON reader in Go or JavaScript gives them, an IEEE-754 double, written
       as Go's ``encoding/json`` and JavaScript's ``JSON.stringify`` write a double: the
       shortest digits that read back as the same double; positional when
       1e-6 ≤ |x| < 1e21 (``1``, not ``1.0``; ``0.5``; ``100000``), otherwise
       ``d[.ddd]e±x`` with no leading zero in the exponent (``1e-7``, ``1.5e+21``);
       negative zero as ``0``. So ``1``, ``1.0`` and ``1e0`` are the same number, as they
       are to the apiserver. NaN and infinities cannot be stored and are refused.

5. ``sha256:`` followed by the lowercase hex SHA-256 of those bytes.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from upgrade_guard import schema

PREFIX = "sha256:"
_EMPTY: tuple[Any, ...] = (None, "", False, 0, (), [], {})
_FALSE_DROPPED = (
    "nullable",
    "uniqueItems",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
)
_EMPTY_DROPPED = (
    "required",
    "enum",
    "properties",
    "allOf",
    "anyOf",
    "oneOf",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
)
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}
_ESCAPES["\r"] = "\\r"


class DigestError(ValueError):
    """A spec that cannot be digested (a value JSON cannot hold)."""


def _is_empty(value: Any) -> bool:
    if isinstance(value, bool):
        return value is False
    if isinstance(value, int | float):
        return value == 0
    return value is None or (isinstance(value, str | list | tuple | Mapping) and not value)


def _drop_empty(mapping: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if key in mapping and _is_empty(mapping[key]):
            del mapping[key]


def _without_nulls(value: Any) -> Any:
    """value with every null-valued mapping entry removed, at every depth."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


_SCALARS = (str, bool, int, float)
_DATA = frozenset({"default", "enum"})
_BRANCH_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_SKIPPED = schema.DOCUMENTATION_KEYWORDS
_FALSE_DROPPED_SET = frozenset(_FALSE_DROPPED)
_EMPTY_DROPPED_SET = frozenset(_EMPTY_DROPPED)


def normalized_schema(node: Any) -> Any:
    """Step 3 of the module docstring, on one schema and everything below it.

    One pass over the node's own keys, then one over its positions: every CRD of a chart
    and of the cluster goes through here (schema.rebuilt says the same, more slowly)."""
    if not isinstance(node, Mapping):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if value is None or key in _SKIPPED:
            continue
        if value.__class__ in _SCALARS:
            if value is False and key in _FALSE_DROPPED_SET:
                continue
        elif key in schema.SUBSCHEMA_KEYWORDS:
            # filled in below; a value that holds no positions stays as written
            if key == "properties" and isinstance(value, Mapping):
                value = {}
            elif key in _BRANCH_LISTS and isinstance(value, list):
                value = []
        elif key not in _DATA:
            value = _without_nulls(value)
        result[key] = value
    for keyword, key, child in schema.subschemas(node):
        if child is None:
            continue
        if key is None:
            result[keyword] = normalized_schema(child)
        elif isinstance(key, str):
            result[keyword][key] = normalized_schema(child)
        else:
            result[keyword].append(normalized_schema(child))
    for key in _EMPTY_DROPPED_SET.intersection(result):
        if _is_empty(result[key]):
            del result[key]
    return result


def _normalized_version(version: Any) -> Any:
    if not isinstance(version, Mapping):
        return version
    validation = version.get("schema")
    result: dict[str, Any] = _without_nulls({k: v for k, v in version.items() if k != "schema"})
    if validation is not None:
        result["schema"] = validation
    result.setdefault("served", False)
    result.setdefault("storage", False)
    if result.get("deprecated") is False:
        del result["deprecated"]
    _drop_empty(result, "additionalPrinterColumns", "selectableFields")
    columns = result.get("additionalPrinterColumns")
    if isinstance(columns, list):
        result["additionalPrinterColumns"] = [
            {k: v for k, v in column.items() if not (k == "priority" and _is_empty(v))}
            if isinstance(column, Mapping)
            else column
            for column in columns
        ]
    if isinstance(validation, Mapping):
        result["schema"] = {
            k: normalized_schema(v) if k == "openAPIV3Schema" else _without_nulls(v)
            for k, v in validation.items()
            if v is not None
        }
    return result


def _normalized_conversion(conversion: Any) -> Any:
    if conversion is None:
        return {"strategy": "None"}
    if not isinstance(conversion, Mapping):
        return conversion
    result = dict(conversion)
    webhook = result.get("webhook")
    if isinstance(webhook, Mapping):
        config = webhook.get("clientConfig")
        if isinstance(config, Mapping) and isinstance(config.get("service"), Mapping):
            service = dict(config["service"])
            if service.get("port") is None:
                service["port"] = 443
            result["webhook"] = {**webhook, "clientConfig": {**config, "service": service}}
    return result


def normalized_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Steps 2 and 3 of the module docstring: the spec as the apiserver would store it,
    without documentation. The input is not modified."""
    result: dict[str, Any] = _without_nulls({k: v for k, v in spec.items() if k != "versions"})
    if spec.get("versions") is not None:
        result["versions"] = spec["versions"]
    result["conversion"] = _normalized_conversion(result.get("conversion"))
    names = result.get("names")
    if isinstance(names, Mapping):
        names = dict(names)
        kind = names.get("kind")
        if isinstance(kind, str):
            if _is_empty(names.get("singular")):
                names["singular"] = kind.lower()
            if _is_empty(names.get("listKind")) and kind:
                names["listKind"] = kind + "List"
        _drop_empty(names, "shortNames", "categories")
        result["names"] = names
    if result.get("preserveUnknownFields") is False:
        del result["preserveUnknownFields"]
    versions = result.get("versions")
    if isinstance(versions, list):
        result["versions"] = [_normalized_version(version) for version in versions]
    return result


def _number(value: int | float) -> str:
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise DigestError(f"{value!r} cannot be stored by Kubernetes (JSON has no such number)")
    if number == 0:
        return "0"
    if 1e-6 <= abs(number) < 1e21:
        text = format(Decimal(repr(number)), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    mantissa, exponent = repr(number).split("e")
    sign = "-" if exponent.startswith("-") else "+"
    return f"{mantissa.removesuffix('.0')}e{sign}{int(exponent.lstrip('+-'))}"


def _string(text: str) -> str:
    parts = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            parts.append(escaped)
        elif char < " ":
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def canonical_json(value: Any) -> str:
    """Step 4 of the module docstring."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Literal):
            out.append(item.text)
        elif item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, str):
            out.append(_string(item))
        elif isinstance(item, int | float):
            out.append(_number(item))
        elif isinstance(item, Mapping):
            keys = sorted(item)
            pending: list[Any] = [_Literal("{")]
            for index, key in enumerate(keys):
                if not isinstance(key, str):
                    raise DigestError(f"mapping key {key!r} is not a string")
                prefix = "," if index else ""
                pending.append(_Literal(prefix + _string(key) + ":"))
                pending.append(item[key])
            pending.append(_Literal("}"))
            stack.extend(reversed(pending))
        elif isinstance(item, list | tuple):
            pending = [_Literal("[")]
            for index, element in enumerate(item):
                if index:
                    pending.append(_Literal(","))
                pending.append(element)
            pending.append(_Literal("]"))
            stack.extend(reversed(pending))
        else:
            raise DigestError(f"{type(item).__name__} values cannot be stored by Kubernetes")
    return "".join(out)


class _Literal:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def spec_digest(spec: Mapping[str, Any]) -> str:
    """``sha256:`` + hex of the canonical JSON of the normalized spec (steps 1 to 5)."""
    encoded = canonical_json(normalized_spec(spec)).encode("utf-8")
    return PREFIX + hashlib.sha256(encoded).hexdigest()


def files_digest(contents: Mapping[str, bytes]) -> str:
    """One digest of a set of files: each path with the SHA-256 of its bytes, in path order."""
    listing = "".join(
        f"{path}\0{hashlib.sha256(data).hexdigest()}\n" for path, data in sorted(contents.items())
    )
    return hashlib.sha256(listing.encode()).hexdigest()
