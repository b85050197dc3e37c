"""A CRD checked as the apiserver checks one before it accepts it (kube-apiserver v1.35).

Three layers, in the apiserver's order; the first problem found is reported, in the
apiserver's own words where it has them:

1. Decoding: every field must have the JSON type of its Go field (``type: [string,
   integer]`` cannot become a string; ``maxLength: 1.5`` cannot become an int64). Unknown
   fields are dropped by the apiserver, so they are not problems.
2. The CRD spec (apiextensions ``validation.go``): group, names, scope, versions, exactly one
   storage version, conversion, ``preserveUnknownFields``.
3. Every version's schema: the keyword rules of ``validation.go`` and the structural-schema
   rules of ``pkg/apiserver/schema`` (types, junctors, list and map types, list-map keys,
   embedded resources, root and metadata), and every default validated against its own
   node as the apiserver validates it: pruned already (no unknown fields), then by the
   validator of stored objects (validation/openapi.py) in its mode for defaults, so both
   share one implementation of the apiserver's value semantics (regular expressions,
   formats, numbers, enums: validation/values.py and validation/regexes.py).

CEL rules are compiled as the apiserver compiles them (validation/cel_compile.py) and held to
its cost budgets (validation/cel_cost.py): :func:`check` compiles them as the newest minor
(:mod:`minors`) does in a CRD it creates; :func:`check_at`, what differs at an older minor.
Not reproduced: CEL rules run on defaults. Not judged, on purpose: object metadata other
than the name (labels, annotations) and the conversion webhook's client config (URL,
service, CA bundle): charts fill them in when they render, and
chart sources are often read unrendered (the corpus' cert-manager CRDs carry
``{{ .Release.Name }}`` labels), while the schema contract is the same. Every other
refusal is held to the real apiserver by ``tests/cluster/test_crd_validation_truth.py``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from upgrade_guard import schema
from upgrade_guard.apiserver import minors, regexes, values
from upgrade_guard.apiserver.openapi import OpenAPIValidator

if TYPE_CHECKING:
    from upgrade_guard.apiserver import cel_compile, cel_cost

_INT64 = (-(2**63), 2**63 - 1)
_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_TYPE_NAMES = frozenset(_TYPES)
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*\Z")
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with"
    " an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or"
    " 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1123_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-'"
    " or '.', and must start and end with an alphanumeric character (e.g. 'example.com',"
    " regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


class CrdInvalid(ValueError):
    """What the apiserver refuses: where (version, schema path or CRD field) and why."""

    def __init__(self, where: str, problem: str, version: str | None = None) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem
        self.version = version


def _fail(where: str, problem: str) -> NoReturn:
    raise CrdInvalid(where, problem)


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


# 1. Decoding ---------------------------------------------------------------------------------
_JSON_KIND = {dict: "object", list: "array", str: "string", bool: "bool"}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {_number_text(value)}"
    return _JSON_KIND.get(type(value), type(value).__name__)


def _number_text(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return json.dumps(value)


def _cannot(value: Any, where: str, go_type: str) -> NoReturn:
    _fail(where, f"json: cannot unmarshal {_kind_of(value)} into a field of type {go_type}")


def _string(value: Any, where: str) -> None:
    if value is not None and not isinstance(value, str):
        _cannot(value, where, "string")


def _bool(value: Any, where: str) -> None:
    if value is not None and not isinstance(value, bool):
        _cannot(value, where, "bool")


def _number(value: Any, where: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        _cannot(value, where, "float64")


def _integer(value: Any, where: str, bits: int = 64) -> None:
    """An integer field. A float without a fraction passes: kubectl and helm turn YAML into
    JSON with Go, which writes 1.0 as 1."""
    if value is None:
        return
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not low <= value <= high:
        _cannot(value, where, f"int{bits}")


def _strings(value: Any, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        _cannot(value, where, "[]string")
    for index, item in enumerate(value):
        _string(item, f"{where}[{index}]")


def _mapping(value: Any, where: str, go_type: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        _cannot(value, where, go_type)
    return value


def _list(value: Any, where: str, go_type: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        _cannot(value, where, go_type)
    return value


_STR, _NUM, _INT, _BOOL, _STRS, _LIST, _MAP, _SCHEMAS, _SCHEMA_MAP, _RULES, _DOCS = range(11)
# Each JSONSchemaProps field by the shape Go decodes it into; schema-valued fields (items,
# not, additionalProperties...) are walked as children.
_SCHEMA_FIELDS: dict[str, int] = {
    **dict.fromkeys(
        (
            "id",
            "$schema",
            "$ref",
            "description",
            "type",
            "format",
            "title",
            "pattern",
            "x-kubernetes-list-type",
            "x-kubernetes-map-type",
        ),
        _STR,
    ),
    **dict.fromkeys(("maximum", "minimum", "multipleOf"), _NUM),
    **dict.fromkeys(
        ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"),
        _INT,
    ),
    **dict.fromkeys(
        (
            "exclusiveMaximum",
            "exclusiveMinimum",
            "uniqueItems",
            "nullable",
            "x-kubernetes-preserve-unknown-fields",
            "x-kubernetes-embedded-resource",
            "x-kubernetes-int-or-string",
        ),
        _BOOL,
    ),
    **dict.fromkeys(("required", "x-kubernetes-list-map-keys"), _STRS),
    "enum": _LIST,
    "externalDocs": _DOCS,
    "x-kubernetes-validations": _RULES,
    **dict.fromkeys(("properties", "patternProperties", "definitions"), _SCHEMA_MAP),
    **dict.fromkeys(("allOf", "anyOf", "oneOf"), _SCHEMAS),
}
_GO_TYPES = {
    _STR: "string",
    _NUM: "float64",
    _INT: "int64",
    _BOOL: "bool",
    _STRS: "[]string",
    _LIST: "[]v1.JSON",
    _MAP: "map",
    _SCHEMAS: "[]v1.JSONSchemaProps",
    _SCHEMA_MAP: "map[string]v1.JSONSchemaProps",
    _RULES: "v1.ValidationRules",
    _DOCS: "v1.ExternalDocumentation",
}
_RULE_STRINGS = ("rule", "message", "messageExpression", "reason", "fieldPath")


def _decode_node(node: dict[str, Any]) -> None:
    """The JSONSchemaProps decoding of one node's own fields. Only the fields present are
    looked at; children are decoded as nodes of their own."""
    for key, value in node.items():
        if value is None:
            continue
        kind = _SCHEMA_FIELDS.get(key)
        if kind is None:
            cls = value.__class__
            # items that are neither a schema nor a list decode as no items at all
            # (JSONSchemaPropsOrArray.UnmarshalJSON ignores them).
            if key in _SCHEMA_OR_BOOL and cls is not dict and cls is not bool:
                _cannot(value, key, "v1.JSONSchemaPropsOrBool")
            elif key == "not" and cls is not dict:
                _cannot(value, key, "v1.JSONSchemaProps")
        elif kind == _STR:
            if value.__class__ is not str:
                _cannot(value, key, "string")
        elif kind == _SCHEMA_MAP:
            if value.__class__ is not dict:
                _cannot(value, key, _GO_TYPES[kind])
            for name, child in value.items():
                if child is not None and child.__class__ is not dict:
                    _cannot(child, f"{key}[{name}]", "v1.JSONSchemaProps")
        elif kind == _SCHEMAS:
            if value.__class__ is not list:
                _cannot(value, key, _GO_TYPES[kind])
            for index, branch in enumerate(value):
                if branch is not None and branch.__class__ is not dict:
                    _cannot(branch, f"{key}[{index}]", "v1.JSONSchemaProps")
        elif not _decodes(kind, value):
            _decode_field(kind, value, key)


_SCHEMA_OR_BOOL = ("additionalProperties", "additionalItems")


def _decodes(kind: int, value: Any) -> bool:
    """The common cases, without spelling out a path; the rest go to _decode_field."""
    cls = value.__class__
    if kind == _BOOL:
        return cls is bool
    if kind == _INT:
        return cls is int and _INT64[0] <= value <= _INT64[1]
    if kind == _NUM:
        return cls is int or cls is float
    if kind == _STRS:
        return cls is list and all(item.__class__ is str for item in value)
    return kind == _LIST and cls is list


def _decode_field(kind: int, value: Any, at: str) -> None:
    if kind == _NUM:
        _number(value, at)
    elif kind == _INT:
        _integer(value, at)
    elif kind == _BOOL:
        _bool(value, at)
    elif kind == _STRS:
        _strings(value, at)
    elif kind == _LIST:
        _list(value, at, _GO_TYPES[kind])
    elif kind == _DOCS:
        docs = _mapping(value, at, _GO_TYPES[kind])
        for key in ("description", "url"):
            _string(docs.get(key), f"{at}.{key}")
    elif kind == _RULES:
        for index, rule in enumerate(_list(value, at, _GO_TYPES[kind])):
            rule_at = f"{at}[{index}]"
            rule = _mapping(rule, rule_at, "v1.ValidationRule")
            for key in _RULE_STRINGS:
                _string(rule.get(key), f"{rule_at}.{key}")
            _bool(rule.get("optionalOldSelf"), f"{rule_at}.optionalOldSelf")


def _decode_spec(spec: Any) -> None:
    spec = _mapping(spec, "spec", "v1.CustomResourceDefinitionSpec")
    for key in ("group", "scope"):
        _string(spec.get(key), f"spec.{key}")
    _bool(spec.get("preserveUnknownFields"), "spec.preserveUnknownFields")
    names = _mapping(spec.get("names"), "spec.names", "v1.CustomResourceDefinitionNames")
    for key in ("plural", "singular", "kind", "listKind"):
        _string(names.get(key), f"spec.names.{key}")
    for key in ("shortNames", "categories"):
        _strings(names.get(key), f"spec.names.{key}")
    conversion = _mapping(spec.get("conversion"), "spec.conversion", "v1.CustomResourceConversion")
    _string(conversion.get("strategy"), "spec.conversion.strategy")
    webhook = _mapping(conversion.get("webhook"), "spec.conversion.webhook", "v1.WebhookConversion")
    _strings(
        webhook.get("conversionReviewVersions"), "spec.conversion.webhook.conversionReviewVersions"
    )
    client = _mapping(
        webhook.get("clientConfig"),
        "spec.conversion.webhook.clientConfig",
        "v1.WebhookClientConfig",
    )
    for key in ("url", "caBundle"):
        _string(client.get(key), f"spec.conversion.webhook.clientConfig.{key}")
    service = _mapping(
        client.get("service"), "spec.conversion.webhook.clientConfig.service", "v1.ServiceReference"
    )
    for key in ("namespace", "name", "path"):
        _string(service.get(key), f"spec.conversion.webhook.clientConfig.service.{key}")
    _integer(service.get("port"), "spec.conversion.webhook.clientConfig.service.port", 32)
    versions = _list(spec.get("versions"), "spec.versions", "[]v1.CustomResourceDefinitionVersion")
    for index, version in enumerate(versions):
        at = f"spec.versions[{index}]"
        version = _mapping(version, at, "v1.CustomResourceDefinitionVersion")
        for key in ("name", "deprecationWarning"):
            _string(version.get(key), f"{at}.{key}")
        for key in ("served", "storage", "deprecated"):
            _bool(version.get(key), f"{at}.{key}")
        _mapping(version.get("schema"), f"{at}.schema", "v1.CustomResourceValidation")
        subresources = _mapping(
            version.get("subresources"), f"{at}.subresources", "v1.CustomResourceSubresources"
        )
        _mapping(
            subresources.get("status"),
            f"{at}.subresources.status",
            "v1.CustomResourceSubresourceStatus",
        )
        scale = _mapping(
            subresources.get("scale"),
            f"{at}.subresources.scale",
            "v1.CustomResourceSubresourceScale",
        )
        for key in ("specReplicasPath", "statusReplicasPath", "labelSelectorPath"):
            _string(scale.get(key), f"{at}.subresources.scale.{key}")
        columns = _list(
            version.get("additionalPrinterColumns"),
            f"{at}.additionalPrinterColumns",
            "[]v1.CustomResourceColumnDefinition",
        )
        for column_index, column in enumerate(columns):
            column_at = f"{at}.additionalPrinterColumns[{column_index}]"
            column = _mapping(column, column_at, "v1.CustomResourceColumnDefinition")
            for key in ("name", "type", "format", "description", "jsonPath"):
                _string(column.get(key), f"{column_at}.{key}")
            _integer(column.get("priority"), f"{column_at}.priority", 32)
        fields = _list(
            version.get("selectableFields"), f"{at}.selectableFields", "[]v1.SelectableField"
        )
        for field_index, field in enumerate(fields):
            field_at = f"{at}.selectableFields[{field_index}]"
            _string(
                _mapping(field, field_at, "v1.SelectableField").get("jsonPath"),
                f"{field_at}.jsonPath",
            )


# 2. The spec ---------------------------------------------------------------------------------
def _dns1035(value: str) -> list[str]:
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _DNS1035.match(value):
        problems.append(_DNS1035_MESSAGE)
    return problems


def _check_spec(name: str, spec: Mapping[str, Any]) -> None:
    group = spec.get("group") or ""
    names = spec.get("names") or {}
    plural = names.get("plural") or ""
    if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        _fail("metadata.name", f"Invalid value: {_show(name)}: {_DNS1123_MESSAGE}")
    if name != f"{plural}.{group}":
        _fail(
            "metadata.name",
            f'Invalid value: {_show(name)}: must be spec.names.plural+"."+spec.group',
        )
    if not group:
        _fail("spec.group", "Required value")
    if len(group) > 253 or not _DNS1123_SUBDOMAIN.match(group):
        _fail("spec.group", f"Invalid value: {_show(group)}: {_DNS1123_MESSAGE}")
    if "." not in group:
        _fail(
            "spec.group", f"Invalid value: {_show(group)}: should be a domain with at least one dot"
        )
    scope = spec.get("scope") or ""
    if not scope:
        _fail("spec.scope", "Required value")
    if scope not in ("Cluster", "Namespaced"):
        _fail(
            "spec.scope",
            f'Unsupported value: {_show(scope)}: supported values: "Cluster", "Namespaced"',
        )
    _check_names(names)
    versions = spec.get("versions") or []
    seen: set[str] = set()
    for index, version in enumerate(versions):
        version_name = (version or {}).get("name") or ""
        if version_name in seen:
            _fail("spec.versions", "Invalid value: must contain unique version names")
        seen.add(version_name)
        problems = _dns1035(version_name)
        if problems:
            _fail(
                f"spec.versions[{index}].name",
                f"Invalid value: {_show(version_name)}: {','.join(problems)}",
            )
    if sum(1 for version in versions if (version or {}).get("storage") is True) != 1:
        _fail(
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        )
    if spec.get("preserveUnknownFields") is True:
        _fail(
            "spec.preserveUnknownFields",
            "Invalid value: true: cannot set to true, set"
            " x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        )
    _check_conversion(spec.get("conversion") or {})


def _check_names(names: Mapping[str, Any]) -> None:
    kind = names.get("kind") or ""
    list_kind = names.get("listKind") or (f"{kind}List" if kind else "")
    if not names.get("plural"):
        _fail("spec.names.plural", "Required value")
    if not kind:
        _fail("spec.names.kind", "Required value")
    for key, value in (("plural", names.get("plural")), ("singular", names.get("singular"))):
        problems = _dns1035(value) if value else []
        if problems:
            _fail(f"spec.names.{key}", f"Invalid value: {_show(value)}: {','.join(problems)}")
    for key, value in (("kind", kind), ("listKind", list_kind)):
        problems = _dns1035(value.lower())
        if problems:
            _fail(
                f"spec.names.{key}",
                f"Invalid value: {_show(value)}: may have mixed case, but"
                f" should otherwise match: {','.join(problems)}",
            )
    if kind == list_kind:
        _fail(
            "spec.names.listKind",
            f"Invalid value: {_show(list_kind)}: kind and listKind may not be the same",
        )
    for key in ("shortNames", "categories"):
        for index, value in enumerate(names.get(key) or []):
            problems = _dns1035(value or "")
            if problems:
                _fail(
                    f"spec.names.{key}[{index}]",
                    f"Invalid value: {_show(value)}: {','.join(problems)}",
                )


def _check_conversion(conversion: Mapping[str, Any]) -> None:
    strategy = conversion.get("strategy") or "None"
    webhook = conversion.get("webhook") or {}
    if strategy not in ("None", "Webhook"):
        _fail(
            "spec.conversion.strategy",
            f'Unsupported value: {_show(strategy)}: supported values: "None", "Webhook"',
        )
    if strategy == "None":
        if webhook.get("conversionReviewVersions"):
            _fail(
                "spec.conversion.conversionReviewVersions",
                "Forbidden: should not be set when strategy is not set to Webhook",
            )
        if webhook.get("clientConfig"):
            _fail(
                "spec.conversion.webhookClientConfig",
                "Forbidden: should not be set when strategy is not set to Webhook",
            )
        return
    if not webhook.get("clientConfig"):
        _fail(
            "spec.conversion.webhookClientConfig",
            "Required value: required when strategy is set to Webhook",
        )
    if not webhook.get("conversionReviewVersions"):
        _fail("spec.conversion.conversionReviewVersions", "Required value")


# 3. Schemas ----------------------------------------------------------------------------------
class _NodeProblem(Exception):
    """A problem of one schema node, before its path is spelled out."""

    def __init__(self, keyword: str, problem: str) -> None:
        super().__init__(problem)
        self.keyword = keyword
        self.problem = problem


def _node_fail(keyword: str, problem: str) -> NoReturn:
    raise _NodeProblem(keyword, problem)


# With a status subresource the root may hold only these (apiextensions validation.go).
_ROOT_WITH_STATUS = frozenset(
    {
        "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
        "uniqueItems", "multipleOf", "required", "items", "properties", "externalDocs",
        "example", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations",
    }
)  # fmt: skip
_ROOT_WITH_STATUS_MESSAGE = (
    "Invalid value: only [Description Type Format Title Maximum ExclusiveMaximum Minimum"
    " ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf"
    " Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]"
    " fields are allowed at the root of the schema if the status subresource is enabled"
)
# The root's implicit fields, for its default: an object of its own.
_ROOT_IMPLICIT = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}


# Fields Go decodes into pointers: set even at false (numbers are all pointers).
_POINTER_BOOLS = frozenset({"x-kubernetes-preserve-unknown-fields"})


def _specified(key: str, value: Any, empty_is_set: bool = True) -> bool:
    """Whether Go sees the keyword as set: null, false (for plain bools) and "" are its zero
    values; a number, even 0, is a pointer and always set. An empty list or map is set in
    the decoded CRD, but not in the structural schema's value validations (metadata's)."""
    if value is None or (value is False and key not in _POINTER_BOOLS):
        return False
    if isinstance(value, list | dict) and not value:
        return empty_is_set
    return not (isinstance(value, str) and not value)


class Passed(set[tuple[str, bool, bool, bytes]]):
    """Schema subtrees without rules that passed the check, each as what it was judged by: the
    keyword holding it, whether it is inside a junctor, whether defaults are checked there, and
    a digest of its content as written (marshal's bytes keep true and 1, 1 and 1.0 apart). Its
    path only names it in a failure.

    And ``places``: the rule places of each version schema checked, by the schema (kept, so
    that its id is its own), where the other side of a diff finds the rules of the subtrees it
    takes over unwalked. Held as long as the CRDs checked together, and no longer.

    ``minor``: the apiserver whose cost estimator the rules are costed by (the other checks
    are the newest's; :func:`check_at` adds what an older minor refuses besides)."""

    def __init__(self, minor: minors.Minor = minors.NEWEST) -> None:
        super().__init__()
        self.places: dict[int, tuple[Mapping[str, Any], Places]] = {}
        self.minor = minor


# A subtree's key costs a serialization of it. Near the root subtrees are large and rarely
# repeat; from three levels down (spec.forProvider.x) they repeat across versions and CRDs,
# so keys are made from there, and two levels down for nodes of a few subschemas (a
# reference, a selector, a list of conditions), which the CRDs of one generator all repeat.
_KEYED_FROM_DEPTH = 3
_FEW_SUBSCHEMAS = 4
_RULES_KEY = b"x-kubernetes-validations"
_SUBTREE_DONE = object()


def _keyed(node: dict[str, Any], depth: int) -> bool:
    """Whether a subtree with children at this depth is worth its key."""
    if depth >= _KEYED_FROM_DEPTH:
        return True
    if depth != _KEYED_FROM_DEPTH - 1:
        return False
    properties = node.get("properties")
    if properties.__class__ is dict and len(properties) > _FEW_SUBSCHEMAS:
        return False  # (told without listing them)
    return len(schema.subschemas(node)) <= _FEW_SUBSCHEMAS


def _passed_key(
    node: dict[str, Any], location: str, in_junctor: bool, defaults: bool
) -> tuple[str, bool, bool, bytes]:
    # SHA-256, which the CPU computes (x86 SHA extensions, ARMv8 SHA2) through Python's
    # OpenSSL: faster here than blake2b.
    digest = hashlib.sha256(marshal.dumps(node, 2)).digest()
    return (location, in_junctor, defaults, digest)


class _RulesAt(NamedTuple):
    """Where a version schema's rules may be, as its check walked it: the nodes holding
    rules, and the subtrees taken over from ``checked`` (unwalked; a subtree that passed
    already holds none). Paths of property names as strings, ``schema.ITEMS``,
    ``schema.ADDITIONAL``. ``taken_from``: the places of ``checked``."""

    nodes: list[tuple[str, ...]]
    taken_over: list[tuple[tuple[str, ...], Any]]
    taken_from: _Remembered


def _check_schema(
    root: Mapping[str, Any], status_enabled: bool, passed: Passed, checked: Any = None
) -> _RulesAt:
    """One version's openAPIV3Schema; failures name the node in our schema path syntax and
    the keyword in parentheses. Returns where its rules may be.

    A subtree with children, three levels down or deeper (two for a small one: ``_keyed``),
    is added to ``passed`` once all of it passed, where nothing in it may hold rules, and is
    not walked again where it comes back (in the same CRD, another or the other side of a
    diff). Failures still come in walking order: a skipped subtree has none.

    ``checked`` is the same version's schema in a CRD that passed already: a subtree
    identical to the one at the same place there is not checked again, and root takes that
    one over, so that the two are held once. Only properties, items and additionalProperties
    are followed, where what a node is judged by (its path, the keyword holding it) is the
    same on both sides."""
    if not isinstance(root, dict):
        _cannot(root, ".", "v1.JSONSchemaProps")
    try:
        _decode_node(root)
    except CrdInvalid as undecodable:
        _fail(f". ({undecodable.where})", undecodable.problem)
    root_type = root.get("type") or ""
    if not root_type:
        _fail(". (type)", "Required value: must not be empty at the root")
    if root_type != "object":
        _fail(". (type)", f"Invalid value: {_show(root_type)}: must be object at the root")
    if root.get("nullable") is True:
        _fail(". (nullable)", "Forbidden: nullable cannot be true at the root")
    if root.get("additionalProperties") is not None:
        _fail(". (additionalProperties)", "Forbidden: must not be used at the root")
    if status_enabled:
        for key, value in root.items():
            if key not in _ROOT_WITH_STATUS and _specified(key, value):
                _fail(f". ({key})", _ROOT_WITH_STATUS_MESSAGE)
    properties = root.get("properties") or {}
    default = root.get("default")
    if isinstance(default, dict):  # the root is an object of its own: apiVersion and kind
        for key in ("apiVersion", "kind"):
            if key not in default:
                _fail(". (default)", f"default.{key}: Required value")
    for keyword in ("allOf", "anyOf", "oneOf"):
        for index, branch in enumerate(root.get(keyword) or []):
            for name in (branch or {}).get("properties") or {}:
                if name not in properties:
                    _fail(
                        schema.segment(name),
                        f"Required value: because it is defined in {keyword}[{index}]"
                        f".properties[{name}]",
                    )
    metadata = properties.get("metadata")
    if isinstance(metadata, dict):
        names = metadata.get("properties") or {}
        # keywords at their zero value (an empty enum) are not specified, as Go reads them
        specified = {
            key for key, value in metadata.items() if _specified(key, value, empty_is_set=False)
        }
        restricted = specified - {"type", "properties"} or set(names) - {"name", "generateName"}
        if restricted or (metadata.get("type") not in (None, "object")):
            _fail(
                "metadata",
                "Forbidden: must not specify anything other than name and"
                " generateName, but metadata is implicitly specified",
            )
    for key in ("apiVersion", "kind"):
        child = properties.get(key)
        if isinstance(child, dict) and child.get("type") not in (None, "string"):
            _fail(f"{key} (type)", f"Invalid value: {_show(child.get('type'))}: must be string")
    # (path parts, node, inside a junctor, what holds it: root, property, items,
    # additionalProperties, junctor, int-or-string: a junctor branch of such a node,
    # the node at the same place in ``checked`` or None, the mapping holding node under key);
    # once a keyed subtree is walked: (..., the rule places found before it, _SUBTREE_DONE,
    # its key)
    stack: list[tuple[tuple[str, ...], Any, bool, str, Any, Any, Any]] = [
        ((), root, False, "root", checked, None, None)
    ]
    taken_from = _remembered(checked, passed.places)
    rules_at = _RulesAt([], [], taken_from)
    while stack:
        parts, node, in_junctor, location, beside, holder, key = stack.pop()
        if holder is _SUBTREE_DONE:
            found_nodes, found_taken_over = beside
            if len(rules_at.nodes) == found_nodes and not any(
                taken_from.may_hold(at) for at, _ in rules_at.taken_over[found_taken_over:]
            ):  # no rules in it
                passed.add(key)
            continue
        if node is None:
            node = {}  # Go decodes null into an empty schema
        elif beside is not None and parts and schema.deep_equal(node, beside):
            holder[key] = beside
            rules_at.taken_over.append((parts, beside))
            continue
        if beside.__class__ is not dict:
            beside = None
        # Defaults at or below additionalProperties are not validated by the apiserver.
        defaults = schema.ADDITIONAL not in parts
        inner = not schema.SUBSCHEMA_KEYWORDS.isdisjoint(node)
        if inner and _keyed(node, len(parts)):
            subtree = _passed_key(node, location, in_junctor, defaults)
            if subtree in passed:
                continue
            found = (len(rules_at.nodes), len(rules_at.taken_over))
            stack.append((parts, node, in_junctor, location, found, _SUBTREE_DONE, subtree))
        try:
            _decode_node(node)
            _check_node(node, in_junctor, location, defaults)
        except CrdInvalid as undecodable:
            _fail(f"{_schema_path(parts)} ({undecodable.where})", undecodable.problem)
        except _NodeProblem as problem:
            _fail(f"{_schema_path(parts)} ({problem.keyword})", problem.problem)
        if "x-kubernetes-validations" in node:
            rules_at.nodes.append(parts)
        if not inner:
            continue
        twins = None if beside is None else beside.get("properties") or {}
        for keyword, key, child in schema.subschemas(node):
            if keyword == "properties":
                twin = None if twins is None else twins.get(key)
                at = parts + (str(key),)
                stack.append((at, child, in_junctor, "property", twin, node[keyword], key))
            elif keyword in _VALUE_SEGMENTS:
                if isinstance(child, dict):
                    twin = None if beside is None else beside.get(keyword)
                    at = parts + (_VALUE_SEGMENTS[keyword],)
                    stack.append((at, child, in_junctor, keyword, twin, node, keyword))
            elif keyword == "not":
                stack.append((parts + ("(not)",), child, True, "junctor", None, None, None))
            else:
                held = _branch_location(node, keyword, int(key or 0), location)
                at = parts + (f"({keyword}[{key}])",)
                stack.append((at, child, True, held, None, None, None))
    return rules_at


_VALUE_SEGMENTS = {"items": schema.ITEMS, "additionalProperties": schema.ADDITIONAL}


_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def _branch_location(node: dict[str, Any], keyword: str, index: int, location: str) -> str:
    """How a junctor branch is judged. The int-or-string pattern (apiextensions
    isIntOrStringAnyOfPattern): an x-kubernetes-int-or-string node's anyOf of exactly
    ``[{type: integer}, {type: string}]``, or the same as the anyOf of its first allOf, may
    name those types."""
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    if keyword == "anyOf" and (int_or_string or location == "int-or-string-allOf"):
        return "int-or-string" if _is_int_or_string_any_of(node.get("anyOf")) else "junctor"
    if keyword == "allOf" and index == 0 and int_or_string:
        first = (node.get("allOf") or [{}])[0] or {}
        if _is_int_or_string_any_of(first.get("anyOf")):
            return "int-or-string-allOf"
    return "junctor"


def _is_int_or_string_any_of(branches: Any) -> bool:
    """Go compares the decoded structs: keywords at their zero value do not count."""
    if not isinstance(branches, list) or len(branches) != 2:
        return False
    set_keywords = [
        {key: value for key, value in (branch or {}).items() if _specified(key, value)}
        for branch in branches
    ]
    return set_keywords == _INT_OR_STRING_ANY_OF


def _schema_path(parts: tuple[str, ...]) -> str:
    """Our path syntax, with junctor branches as ``(anyOf[1])`` after the node they are in."""
    rendered, branch = [], []
    for part in parts:
        if part.startswith("("):
            branch.append(part)
            continue
        if branch:
            rendered.append(" ".join(branch))
            branch = []
        rendered.append(part)
    names = [part for part in rendered if not part.startswith("(")]
    text = schema.render_path(
        tuple(
            part if part in (schema.ITEMS, schema.ADDITIONAL) else schema.segment(part)
            for part in names
        )
    )
    return " ".join([text, *branch]) if branch else text


# Keywords most nodes lack: their checks run only where one is present.
_RARE = frozenset(
    {
        "$ref",
        "additionalItems",
        "patternProperties",
        "dependencies",
        "definitions",
        "id",
        "$schema",
        "uniqueItems",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-map-type",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-validations",
        "default",
        "nullable",
        "additionalProperties",
        "pattern",
    }
)
_UNSUPPORTED = (
    ("$ref", "Forbidden: $ref is not supported"),
    ("additionalItems", "Forbidden: additionalItems is not supported"),
    ("patternProperties", "Forbidden: patternProperties is not supported"),
    ("dependencies", "Forbidden: dependencies is not supported"),
    ("definitions", "Forbidden: definitions is not supported"),
    ("id", "Forbidden: id is not supported"),
    ("$schema", "Forbidden: $schema is not supported"),
)


def _check_node(
    node: dict[str, Any], in_junctor: bool, location: str, check_default: bool = True
) -> None:
    declared = node.get("type") or ""
    if declared and declared not in _TYPE_NAMES:
        _node_fail(
            "type",
            f"Unsupported value: {_show(declared)}: supported values: "
            + ", ".join(f'"{t}"' for t in _TYPES),
        )
    items = node.get("items")
    if items.__class__ is not dict and items.__class__ is not list:
        items = None
    if items.__class__ is list:
        _node_fail("items", "Forbidden: items must be a schema object and not an array")
    rare = not node.keys().isdisjoint(_RARE)
    if rare:
        _check_rare_keywords(node)
    if in_junctor:
        _check_junctor_node(node, location, rare)
        return
    if (
        not declared
        and location != "root"
        and node.get("x-kubernetes-int-or-string") is not True
        and node.get("x-kubernetes-preserve-unknown-fields") is not True
    ):
        what = "array items" if location == "items" else "object fields"
        _node_fail("type", f"Required value: must not be empty for specified {what}")
    if declared == "array" and items is None:
        _node_fail("items", "Required value: must be specified")
    if rare:
        _check_structural_node(node, declared, location, check_default)


def _check_rare_keywords(node: dict[str, Any]) -> None:
    for keyword, message in _UNSUPPORTED:
        if node.get(keyword) not in (None, "", {}, []):
            _node_fail(keyword, message)
    if node.get("uniqueItems") is True:
        _node_fail(
            "uniqueItems",
            "Forbidden: uniqueItems cannot be set to true since the"
            " runtime complexity becomes quadratic",
        )
    additional = node.get("additionalProperties")
    if node.get("properties") and (additional is False or isinstance(additional, dict)):
        _node_fail(
            "additionalProperties",
            "Forbidden: additionalProperties and properties are mutual exclusive",
        )
    pattern = node.get("pattern")
    if pattern:
        problem = regexes.problem(pattern)
        if problem:
            _node_fail(
                "pattern",
                f"Invalid value: {_show(pattern)}: must be a valid regular"
                f" expression, but isn't: {problem}",
            )
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        _node_fail(
            "x-kubernetes-preserve-unknown-fields",
            "Invalid value: false: must be true or undefined",
        )


def _check_junctor_node(node: dict[str, Any], location: str, rare: bool) -> None:
    declared = node.get("type")
    if declared and not (location == "int-or-string" and declared in ("integer", "string")):
        _node_fail("type", "Forbidden: must be empty to be structural")
    if not rare:
        return
    if node.get("default") is not None:
        _node_fail("default", "Forbidden: must be undefined to be structural")
    for keyword in (
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ):
        if node.get(keyword) is True:
            _node_fail(keyword, "Forbidden: must be false to be structural")
    for keyword in ("x-kubernetes-validations", "x-kubernetes-list-map-keys"):
        if node.get(keyword):
            _node_fail(keyword, "Forbidden: must be empty to be structural")
    for keyword in ("x-kubernetes-list-type", "x-kubernetes-map-type"):
        if node.get(keyword):
            _node_fail(keyword, "Forbidden: must be undefined to be structural")
    if node.get("additionalProperties") is not None:
        _node_fail("additionalProperties", "Forbidden: must be undefined to be structural")


def _check_structural_node(
    node: dict[str, Any], declared: str, location: str, check_default: bool
) -> None:
    preserves = node.get("x-kubernetes-preserve-unknown-fields") is True
    if preserves and node.get("x-kubernetes-int-or-string") is True:
        _node_fail(
            "x-kubernetes-preserve-unknown-fields",
            "Invalid value: true: must be false if x-kubernetes-int-or-string is true",
        )
    if node.get("x-kubernetes-embedded-resource") is True:
        if declared != "object":
            _node_fail(
                "type",
                f"Invalid value: {_show(declared)}: must be object if"
                " x-kubernetes-embedded-resource is true",
            )
        if not node.get("properties") and not preserves:
            _node_fail(
                "properties",
                "Required value: must not be empty if"
                " x-kubernetes-embedded-resource is true without"
                " x-kubernetes-preserve-unknown-fields",
            )
    map_type = node.get("x-kubernetes-map-type")
    if map_type:
        if map_type not in ("granular", "atomic"):
            _node_fail(
                "x-kubernetes-map-type",
                f'Unsupported value: {_show(map_type)}: supported values: "atomic", "granular"',
            )
        if declared != "object":
            _node_fail(
                "type",
                f"Invalid value: {_show(declared)}: must be object if"
                " x-kubernetes-map-type is specified",
            )
    _check_list_type(node, declared)
    if check_default and node.get("default") is not None:
        if location == "root":
            node = {**node, "properties": {**_ROOT_IMPLICIT, **(node.get("properties") or {})}}
        problem = default_problem(node["default"], node)
        if problem is not None:
            _node_fail("default", problem)


def _check_list_type(node: dict[str, Any], declared: str) -> None:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys") or []
    if list_type:
        if list_type not in ("atomic", "set", "map"):
            _node_fail(
                "x-kubernetes-list-type",
                f'Unsupported value: {_show(list_type)}: supported values: "atomic", "set", "map"',
            )
        if declared != "array":
            _node_fail(
                "type",
                f"Invalid value: {_show(declared)}: must be array if"
                " x-kubernetes-list-type is specified",
            )
    if keys and list_type != "map":
        _node_fail(
            "x-kubernetes-list-type",
            "Required value: must be map if x-kubernetes-list-map-keys is non-empty",
        )
    items = node.get("items")
    if not isinstance(items, dict):
        return
    item_type = items.get("type") or ""
    if list_type == "map":
        if not keys:
            _node_fail(
                "x-kubernetes-list-map-keys",
                "Required value: must not be empty if x-kubernetes-list-type is map",
            )
        if item_type != "object":
            _node_fail(
                "[] type",
                f"Invalid value: {_show(item_type)}: must be object if parent"
                " array's x-kubernetes-list-type is map",
            )
        if len(set(keys)) != len(keys):
            _node_fail(
                "x-kubernetes-list-map-keys",
                f"Invalid value: {_show(keys)}: must not contain duplicate entries",
            )
        item_properties = items.get("properties") or {}
        if any(key not in item_properties for key in keys):
            _node_fail(
                "x-kubernetes-list-map-keys",
                f"Invalid value: {_show(keys)}: entries must all be names of item properties",
            )
        required = set(items.get("required") or [])
        for key in keys:
            key_node = item_properties[key] or {}
            if (key_node.get("type") or "") not in ("string", "integer", "number", "boolean"):
                _node_fail(
                    f"[].{key} type",
                    f"Invalid value: {_show(key_node.get('type') or '')}:"
                    " must be a scalar type if parent array's x-kubernetes-list-type is map",
                )
            if key_node.get("nullable") is True:
                _node_fail(
                    f"[].{key} nullable",
                    "Forbidden: this property is in"
                    " x-kubernetes-list-map-keys, so it cannot be nullable",
                )
            if key not in required and key_node.get("default") is None:
                _node_fail(
                    f"[].{key} default",
                    "Required value: this property is in"
                    " x-kubernetes-list-map-keys, so it must have a default or be a"
                    " required property",
                )
    if (
        list_type == "set"
        and item_type == "object"
        and items.get("x-kubernetes-map-type") != "atomic"
    ):
        _node_fail(
            "[] x-kubernetes-map-type",
            f"Invalid value: {_show(items.get('x-kubernetes-map-type'))}: must be"
            " atomic as item of a list with x-kubernetes-list-type=set",
        )


def _check_selectable_fields(fields: list[Any], root: Mapping[str, Any]) -> None:
    if len(fields) > 8:
        _fail("selectableFields", f"Too many: {len(fields)}: must have at most 8 items")
    seen: set[str] = set()
    for index, field in enumerate(fields):
        path = (field or {}).get("jsonPath") or ""
        where = f"selectableFields[{index}].jsonPath"
        if not path:
            _fail(where, "Required value")
        if path in seen:
            _fail(where, f"Duplicate value: {_show(path)}")
        seen.add(path)
        invalid = f"Invalid value: {_show(path)}: is an invalid path"
        if not path.startswith("."):
            _fail(where, f"{invalid}: expected [ or . but got: {path.split('.')[0]}")
        if "[" in path:
            _fail(where, f"{invalid}: array notation is not allowed")
        node: Any = root
        for name in path[1:].split("."):
            properties = node.get("properties") or {}
            if name in properties:
                node = properties[name] or {}
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                _fail(where, f"{invalid}: does not refer to a valid field")
        if node.get("type") not in ("string", "boolean", "integer"):
            _fail(
                where,
                f"Invalid value: {_show(path)}: must point to a field of type string,"
                " boolean or integer. Enum string fields and strings with formats are allowed.",
            )


Places = tuple[list[tuple[str, ...]], list[tuple[str, ...]]]
"""Where a version schema's rules may be: the nodes holding rules, and the subtrees not
walked whose serialization holds some (paths as :class:`_RulesAt` spells them)."""


class _Remembered(NamedTuple):
    """The places of a schema checked before, with the ways to them."""

    nodes: list[tuple[str, ...]]
    regions: list[tuple[str, ...]]
    ways: set[tuple[str, ...]]

    def may_hold(self, at: tuple[str, ...]) -> bool:
        """Whether its subtree at ``at`` may hold rules."""
        return at in self.ways or self.unwalked(at)

    def unwalked(self, at: tuple[str, ...]) -> bool:
        return any(at[: len(region)] == region for region in self.regions)


def _remembered(schema_root: Any, places: Mapping[int, tuple[Any, Places]]) -> _Remembered:
    """The places of a schema checked before; where not remembered, all of it may hold
    rules."""
    everywhere: Places = ([], [()])
    nodes, regions = places.get(id(schema_root), (schema_root, everywhere))[1]
    ways = {place[:depth] for place in (*nodes, *regions) for depth in range(len(place) + 1)}
    return _Remembered(nodes, regions, ways)


def _rule_places(root: Mapping[str, Any], rules_at: _RulesAt, passed: Passed) -> Places:
    """Where root's rules may be, remembered in ``passed`` for the other side of a diff."""
    nodes: list[tuple[str, ...]] = list(rules_at.nodes)
    regions: list[tuple[str, ...]] = []
    known = rules_at.taken_from
    for at, subtree in rules_at.taken_over:
        if known.unwalked(at):
            if _may_hold_rules(subtree):
                regions.append(at)
        elif at in known.ways:
            nodes += [node for node in known.nodes if node[: len(at)] == at]
            regions += [region for region in known.regions if region[: len(at)] == at]
    passed.places[id(root)] = (root, (nodes, regions))
    return nodes, regions


def forget(body: Mapping[str, Any], passed: Passed) -> None:
    """Let go of the places ``check`` remembered of body's schemas, where its caller keeps
    another body in its place (the hook keeps its CRDs normalized): they serve no other side,
    and would keep those schemas alive."""
    for version in body["spec"].get("versions") or []:
        passed.places.pop(id(version["schema"]["openAPIV3Schema"]), None)


def _may_hold_rules(subtree: Any) -> bool:
    """Whether a subtree may hold rules, told from its serialization, in C (a Python walk of
    a large subtree without rules costs more than all its other checks)."""
    try:
        return _RULES_KEY in marshal.dumps(subtree)
    except ValueError:  # a value marshal cannot write: the rules' own walk tells
        return True


def _schema_field_path(versions: list[Any], index: int) -> str:
    """The apiserver's path of a version's schema: one every version shares is held once."""
    schemas = [((version or {}).get("schema") or {}).get("openAPIV3Schema") for version in versions]
    if all(schema.deep_equal(other, schemas[0]) for other in schemas[1:]):
        return "spec.validation.openAPIV3Schema"
    return f"spec.versions[{index}].schema.openAPIV3Schema"


def import_rule_checks() -> None:
    """Import the CEL checks' code (protobuf and the CEL runtime) now, not at the first
    schema holding rules."""
    from upgrade_guard.apiserver import cel_compile  # noqa: F401


def _check_rules(
    root: Mapping[str, Any],
    prefix: Callable[[], str],
    holding: list[tuple[str, ...]],
    unwalked: list[tuple[str, ...]],
    minor: minors.Minor,
) -> None:
    """The schema's CEL rules (:func:`cel_reads.sites`: ``holding`` and ``unwalked`` say
    where they may be), compiled as the apiserver compiles them (once the schema passed
    every other check: it compiles rules only then), and their estimated cost, as the
    apiserver of ``minor`` estimates it, within the apiserver's budgets."""
    # (protobuf and the CEL runtime)
    from upgrade_guard.apiserver import cel_compile, cel_cost, cel_reads

    sites = cel_reads.sites(root, holding, unwalked)
    verdicts = cel_compile.verdicts(sites, minors.compatibility(_APISERVER_VERSION), server=minor)
    for refused in cel_compile.schema_problems(sites, verdicts, prefix):
        _fail(f"{_schema_path(refused.parts)} ({refused.keyword})", refused.detail)
    for problem in cel_cost.budget_problems(sites, cel_compile.estimates(verdicts))[:1]:
        if problem.field:
            _fail(_cost_where(problem), f"Forbidden: {problem.message}: {problem.expression}")
        costliest = "; ".join(f"{_cost_where(c)}: {c.expression}" for c in problem.contributors)
        _fail(".", f"Forbidden: {problem.message} (costliest: {costliest})")


def _cost_where(problem: cel_cost.OverBudget) -> str:
    return f"{_schema_path(problem.parts)} ({problem.field})"


# Defaults ------------------------------------------------------------------------------------
# The apiserver whose acceptance of a CRD is reproduced (formats by Kubernetes version).
_APISERVER_VERSION = minors.NEWEST


def default_problem(value: Any, node: Mapping[str, Any]) -> str | None:
    """Why the apiserver refuses ``value`` as the default of ``node``, or None: it must be
    pruned already (no unknown fields), then pass the node's schema with the apiserver's
    value semantics (the validator of stored objects, in its mode for defaults)."""
    unknown = _unknown_fields(value, node, "default")
    if unknown is not None:
        return unknown
    found = OpenAPIValidator(_APISERVER_VERSION, defaults=True).validate(value, node, "")
    if not found:
        return None
    first = found[0]
    where = "default" + (first.path if first.path[:1] in ("", "[") else f".{first.path}")
    if first.check == "required":
        return f"{where}: Required value"
    at = _value_at(value, first.path)
    if first.check == "enum":
        supported = ", ".join(
            _show(allowed) for allowed in _node_at(node, first.path).get("enum") or []
        )
        return f"{where}: Unsupported value: {_show(at)}: supported values: {supported}"
    if first.check == "type" and at is not None:
        got = values.go_type(at)
        return f'{where}: Invalid value: "{got}": in body {first.detail}: "{got}"'
    return f"{where}: Invalid value: {_show(at)}: in body {first.detail}"


def _value_at(value: Any, path: str) -> Any:
    for step in values.steps(path):
        value = value[step]
    return value


def _node_at(node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    """The schema of the value at ``path`` below node (the validator found it there)."""
    for step in values.steps(path):
        child = values.item_schema(node) if isinstance(step, int) else None
        node = child or values.property_schema(node, str(step)) or {}
    return node


def _unknown_fields(value: Any, node: Mapping[str, Any], where: str) -> str | None:
    """A default must be pruned: no field that pruning would drop, at any depth."""
    if isinstance(value, list):
        items = node.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                problem = _unknown_fields(item, items, f"{where}[{index}]")
                if problem is not None:
                    return problem
    if not isinstance(value, Mapping):
        return None
    properties = node.get("properties") or {}
    additional = node.get("additionalProperties")
    for name, child in value.items():
        if name in properties:
            child_schema = properties[name] or {}
        elif isinstance(additional, Mapping):
            child_schema = additional
        elif additional is True or node.get("x-kubernetes-preserve-unknown-fields") is True:
            continue
        else:
            return f"{where}: Invalid value: {_show(dict(value))}: must not have unknown fields"
        problem = _unknown_fields(child, child_schema, f"{where}.{name}")
        if problem is not None:
            return problem
    return None


# The whole CRD -------------------------------------------------------------------------------
def check(
    body: Mapping[str, Any], checked: Mapping[str, Any] | None, passed: Passed, stored: bool = False
) -> None:
    """Raise CrdInvalid for the first problem the apiserver would refuse body for.

    ``passed`` holds schema subtrees that passed already (in CRDs loaded with this one); it
    is added to.

    ``checked`` is a CRD of the same name that passed this check already (the other side
    of a diff): schema subtrees identical to its own are not walked again, and body takes
    them over (the two sides of a diff hold what they share once).

    ``stored``: body is a CRD the apiserver holds (the old side of a diff), whose CEL rules
    are not compiled or costed. The apiserver compiles and costs the rules of the CRD it is
    given, never again those of the one it holds (an update validates the new object), and
    an older apiserver may have accepted rules that this one would refuse in a new CRD."""
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        _fail("metadata.name", "Required value: name or generateName is required")
    spec = body.get("spec")
    if not isinstance(spec, Mapping):
        _fail("spec", "Required value")
    _decode_spec(spec)
    _check_spec(name, spec)
    checked_schemas = {
        version.get("name"): (version.get("schema") or {}).get("openAPIV3Schema")
        for version in ((checked or {}).get("spec") or {}).get("versions") or []
    }
    versions = spec.get("versions") or []
    for index, version in enumerate(versions):
        validation = (version or {}).get("schema") or {}
        root = validation.get("openAPIV3Schema")
        if root is None:
            raise CrdInvalid(
                "schema.openAPIV3Schema", "Required value", (version or {}).get("name")
            )
        status_enabled = ((version or {}).get("subresources") or {}).get("status") is not None
        try:
            beside = checked_schemas.get((version or {}).get("name"))
            rules_at = _check_schema(root, status_enabled, passed, beside)
            _check_selectable_fields((version or {}).get("selectableFields") or [], root)
            if stored:
                continue
            nodes, regions = _rule_places(root, rules_at, passed)
            # A schema without rules has none to compile or cost, and its run imports no CEL code.
            if nodes or regions:
                prefix = functools.partial(_schema_field_path, versions, index)
                _check_rules(root, prefix, nodes, regions, passed.minor)
        except CrdInvalid as invalid:
            raise CrdInvalid(invalid.where, invalid.problem, version.get("name")) from None


# At an older minor ------------------------------------------------------------------------------
_RULE_AT = re.compile(r"x-kubernetes-validations\[(\d+)\]\.(rule|messageExpression)")


def check_at(body: Mapping[str, Any], old: Mapping[str, Any] | None, minor: minors.Minor) -> None:
    """Raise CrdInvalid for the first rule of body, a CRD that passed :func:`check`, that the
    apiserver of ``minor`` does not compile when it replaces ``old`` with body (creates body,
    without): where that minor's environments lack a library the rule uses (the only
    difference in the range). The rules and messageExpressions old holds compile in the
    environment of stored expressions, the others in that of new expressions."""
    new_env = minors.compatibility(minor)
    if minor >= minors.NEWEST or not _may_hold_rules(body.get("spec")):
        return
    # (protobuf and the CEL runtime)
    from upgrade_guard.apiserver import cel_compile, cel_reads

    # The nodes with a rule using a library new expressions lack: the only ones that can
    # differ (stored expressions have more). Most CRDs have none, and old is not walked.
    nodes = [
        [
            site
            for site in cel_reads.sites(root)
            if any(_lacking(raw, new_env) for raw in site.rules)
        ]
        for root in _schemas(body)
    ]
    if not any(nodes):
        return
    held = [rule for version in _schemas(old) for rule in _rules_in(version)]
    stored = cel_compile.Stored(
        minor,
        frozenset(str(raw.get("rule") or "") for raw in held),
        frozenset(str(raw.get("messageExpression") or "") for raw in held),
    )
    versions = body["spec"].get("versions") or []
    for index, found_at in enumerate(nodes):
        sites = [
            site for site in found_at if any(_lacking(raw, new_env, stored) for raw in site.rules)
        ]
        checked = cel_compile.verdicts(sites, new_env, stored, minor)
        prefix = functools.partial(_schema_field_path, versions, index)
        for refused in cel_compile.schema_problems(sites, checked, prefix):
            site = next(site for site in sites if site.parts == refused.parts)
            found = _RULE_AT.search(refused.keyword)
            raw = site.rules[int(found[1])] if found else {}
            text = str(raw.get(found[2]) if found else "")
            stored_text = text in (
                stored.rules if found and found[2] == "rule" else stored.messages
            )
            why = minors.unknown_to(minor, text, stored_text)
            raise CrdInvalid(
                f"{_schema_path(refused.parts)} ({refused.keyword})",
                f"{why}; {refused.detail}" if why else refused.detail,
                versions[index].get("name"),
            )


def _schemas(crd: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """Each version's schema root, in order."""
    versions = ((crd or {}).get("spec") or {}).get("versions") or []
    return [((v or {}).get("schema") or {}).get("openAPIV3Schema") or {} for v in versions]


def _rules_in(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every rule entry of a schema, in every subschema (apiextensions ``SchemaHas``)."""
    if not isinstance(node, Mapping):
        return
    rules = node.get("x-kubernetes-validations")
    if isinstance(rules, list):
        yield from (raw for raw in rules if isinstance(raw, Mapping))
    for key in _SCHEMA_MAPS:
        children = node.get(key)
        if isinstance(children, Mapping):
            for child in children.values():
                yield from _rules_in(child)
    for key in _SUBSCHEMAS:
        child = node.get(key)
        for item in child if isinstance(child, list) else [child]:
            yield from _rules_in(item)


_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SUBSCHEMAS = ("items", "additionalProperties", "additionalItems", "not", "allOf", "anyOf", "oneOf")


def _lacking(raw: Any, new_env: minors.Minor, stored: cel_compile.Stored | None = None) -> bool:
    """Whether a rule entry uses a library the environment it compiles in lacks (that of
    new expressions, without ``stored``)."""
    if not isinstance(raw, Mapping):
        return False
    rule, message = str(raw.get("rule") or ""), str(raw.get("messageExpression") or "")
    rules, messages = (stored.rules, stored.messages) if stored else ((), ())
    return bool(
        minors.missing(rule, stored.version if stored and rule in rules else new_env)
        or minors.missing(message, stored.version if stored and message in messages else new_env)
    )
