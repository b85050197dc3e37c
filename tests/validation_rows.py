"""Disagreements the differential suite found between the validator and kube-apiserver
v1.35.4, kept as fixed rows: each is replayed against the real apiserver by
tests/cluster/test_validation_truth.py and against the validator alone, with the
apiserver's recorded answer, by tests/apiserver/test_regressions.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schema_strategies import Case


def root_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """The root schema every differential case's CRD has around its ``spec`` schema."""
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": {"type": "object", "properties": {"note": {"type": "string"}}},
        },
    }


@dataclass(frozen=True)
class Regression:
    key: str
    old: dict[str, Any]  # spec schemas
    new: dict[str, Any]
    stored: dict[str, Any]  # spec of the object stored under old
    op: str  # "GET", "CREATE copy", "UPDATE label", "UPDATE /status", "CREATE under old"
    refused: bool  # the apiserver's answer (for GET: whether the read-back changed)
    why: str  # what the validator got wrong, and the fix

    def case(self) -> Case:
        return Case(self.old, self.new, [], [self.stored], [self.stored])


_NULLABLE = {"type": "object", "properties": {"beta": {"type": "string", "nullable": True}}}
_NULLABLE_ENUM = {
    "type": "object",
    "properties": {"beta": {"type": "string", "nullable": True, "enum": ["ab", "green"]}},
}


def _atomic_map_rule(rule: str) -> dict[str, Any]:
    """A rule on a property inside an atomic map: the apiserver correlates old and new values
    there as in any map (apiextensions MapIsCorrelatable: unset, granular and atomic)."""
    keyed = {"type": "object", "properties": {"k": {"type": "string"}}}
    inner = {**keyed, "x-kubernetes-validations": [{"rule": rule}]}
    return {
        "type": "object",
        "properties": {
            "m": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"x": inner}}
        },
    }


_PORT = {
    "type": "object",
    "properties": {
        "port": {
            "type": "integer",
            "x-kubernetes-validations": [{"rule": "0 < self && self <= 65535"}],
        }
    },
}


def _field(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": node}}


def _created(key: str, node: dict[str, Any], value: Any, refused: bool, why: str) -> Regression:
    """A CREATE of ``spec.f: value`` under ``spec.f: node`` (issue 22 §2: the value semantics
    the validator shares with the check of CRD defaults)."""
    schema = _field(node)
    return Regression(key, schema, schema, {"f": value}, "CREATE under old", refused, why)


_OBJECT_SET = {
    "type": "array",
    "x-kubernetes-list-type": "set",
    "items": {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {"a": {"type": "number"}},
    },
}
_NUMBER_SET = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}}
_RAW_BACKSLASH = {"type": "string", "x-kubernetes-validations": [{"rule": "self == r'\\'"}]}
_RAW_LINE_BREAK = {
    "type": "string",
    "x-kubernetes-validations": [{"rule": "self == r'''a\\\r\nb'''", "message": "m"}],
}

# An embedded resource that declares its metadata whole (name and generateName as strings):
# rules see the metadata it declares, labels too (apiserver UnstructuredToVal keeps it as
# WithTypeAndObjectMeta does).
_LABELLED = {
    "type": "object",
    "x-kubernetes-embedded-resource": True,
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "generateName": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
    },
    "x-kubernetes-validations": [{"rule": "self.metadata.labels.tier == 'web'"}],
}


def _labelled(tier: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "n", "labels": {"tier": tier}},
    }


_VALUE_SEMANTICS = (
    _created(
        "re2-dollar-before-final-newline",
        {"type": "string", "pattern": "^abc$"},
        "abc\n",
        True,
        "RE2's $ matches only at the end of the text",
    ),
    _created(
        "re2-dollar-at-end",
        {"type": "string", "pattern": "^abc$"},
        "abc",
        False,
        "the allowed side of the row above",
    ),
    _created(
        "multiple-of-tenth",
        {"type": "number", "multipleOf": 0.1},
        0.3,
        False,
        "kube-openapi multiplies by 1/0.1 and allows a relative error of 1e-9",
    ),
    _created(
        "not-multiple-of-tenth",
        {"type": "number", "multipleOf": 0.1},
        0.35,
        True,
        "the refused side of the row above",
    ),
    _created(
        "negative-near-multiple",
        {"type": "number", "multipleOf": 0.1},
        -0.30000000000000004,
        True,
        "below zero only exact integers count (swag)",
    ),
    _created(
        "integer-under-fractional-factor",
        {"type": "number", "multipleOf": 0.5},
        3,
        True,
        "an int64 is checked against the factor cut to an int64: 0 is not positive",
    ),
    _created(
        "float-under-fractional-factor",
        {"type": "number", "multipleOf": 0.5},
        3.0,
        False,
        "a float64 is divided: the allowed side of the row above",
    ),
    _created(
        "integer-under-cut-minimum",
        {"type": "number", "minimum": 1.5},
        1,
        False,
        "an int64 is checked against the minimum cut to an int64",
    ),
    _created(
        "float-under-minimum",
        {"type": "number", "minimum": 1.5},
        1.0,
        True,
        "a float64 is checked against the float64: the refused side of the row above",
    ),
    _created(
        "float-in-integer-enum",
        {"type": "number", "enum": [1]},
        1.5,
        False,
        "the value is converted to the member's type (int64(1.5) is 1)",
    ),
    _created(
        "float-not-in-integer-enum",
        {"type": "number", "enum": [1]},
        2.5,
        True,
        "the refused side of the row above",
    ),
    _created(
        "nested-float-not-integer-enum",
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "enum": [{"a": 1}]},
        {"a": 1.0},
        True,
        "compound members compare by DeepEqual: 1.0 is not 1",
    ),
    _created(
        "nested-integer-enum",
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "enum": [{"a": 1}]},
        {"a": 1},
        False,
        "the allowed side of the row above",
    ),
    _created(
        "int-or-string-object-with-format",
        {"x-kubernetes-int-or-string": True, "format": "date"},
        5,
        False,
        "an object's int-or-string node is typed integer or string (a default's is not)",
    ),
    _created(
        "untyped-node-with-format",
        {"x-kubernetes-preserve-unknown-fields": True, "format": "date"},
        5,
        True,
        "a format on a node without a type refuses numbers",
    ),
    _created(
        "near-integer-is-integer",
        {"type": "integer"},
        3.0000000001,
        False,
        "a float64 within 1e-9 above an integer passes the integer type",
    ),
    _created(
        "integer-beyond-2-53",
        {"type": "integer"},
        1e16,
        True,
        "a float64 beyond 2^53 is no JSON integer",
    ),
    _created(
        "set-objects-one-when-marshaled",
        _OBJECT_SET,
        [{"a": 1}, {"a": 1.0}],
        True,
        "set items that are objects compare as Go's json.Marshal writes them: 1.0 as 1",
    ),
    _created(
        "set-objects-distinct",
        _OBJECT_SET,
        [{"a": 1}, {"a": 2}],
        False,
        "the allowed side of the row above",
    ),
    _created(
        "set-scalars-int-and-float",
        _NUMBER_SET,
        [1, 1.0],
        False,
        "scalar set items compare as Go values: an int64 and a float64 differ",
    ),
    _created(
        "set-scalars-repeated", _NUMBER_SET, [1, 1], True, "the refused side of the row above"
    ),
    _created(
        "raw-string-ending-in-a-backslash",
        _RAW_BACKSLASH,
        "\\",
        False,
        "cel-go reads r'\\' as one backslash; the C++ runtime refused to compile it, so the"
        " rule went unevaluated (apiserver/cel_source.py gives it '\\\\')",
    ),
    _created(
        "raw-string-ending-in-a-backslash-not-matched",
        _RAW_BACKSLASH,
        "\\\\",
        True,
        "the refused side of the row above",
    ),
    _created(
        "raw-string-line-break-after-a-backslash",
        _RAW_LINE_BREAK,
        "a\\\nb",
        False,
        "cel-go makes every line break in a literal \\n, even after a backslash in a raw one;"
        " the C++ runtime kept the \\r\\n there",
    ),
    _created(
        "raw-string-line-break-kept",
        _RAW_LINE_BREAK,
        "a\\\r\nb",
        True,
        "the refused side of the row above",
    ),
    _created(
        "embedded-resource-metadata-declared-whole",
        _LABELLED,
        _labelled("web"),
        False,
        "a rule reads the labels an embedded resource declares: the validator showed it"
        " metadata's name and generateName alone, so the rule failed to evaluate",
    ),
    _created(
        "embedded-resource-metadata-declared-whole-refused",
        _LABELLED,
        _labelled("db"),
        True,
        "the refused side of the row above",
    ),
)

REGRESSIONS: tuple[Regression, ...] = (
    *_VALUE_SEMANTICS,
    Regression(
        "old-self-inside-an-atomic-map",
        old=_atomic_map_rule("self.k != oldSelf.k"),
        new=_atomic_map_rule("self.k != oldSelf.k"),
        stored={"m": {"x": {"k": "a"}}},
        op="UPDATE label",
        refused=True,
        why="a transition rule inside an atomic map runs on UPDATE (issue 22 §4, read in"
        " apiextensions validation.go): the validator paired no old value there",
    ),
    Regression(
        "old-self-inside-an-atomic-map-holding",
        old=_atomic_map_rule("self.k == oldSelf.k"),
        new=_atomic_map_rule("self.k == oldSelf.k"),
        stored={"m": {"x": {"k": "a"}}},
        op="UPDATE label",
        refused=False,
        why="the allowed side of the row above",
    ),
    Regression(
        "integral-float-in-integer-read-by-a-rule",
        old=_PORT,
        new=_PORT,
        stored={"port": 4.0},
        op="CREATE under old",
        refused=True,
        why="4.0 passes OpenAPI's integer check, but a rule reading it fails ('invalid data,"
        " expected int, got float64'; seed 20261130, an istio port rule): the validator"
        " converted it to 4",
    ),
    Regression(
        "integer-read-by-a-rule",
        old=_PORT,
        new=_PORT,
        stored={"port": 4},
        op="CREATE under old",
        refused=False,
        why="the allowed side of the row above",
    ),
    Regression(
        "null-in-nullable",
        old=_NULLABLE,
        new=_NULLABLE,
        stored={"beta": None},
        op="CREATE under old",
        refused=False,
        why="the allowed side of the rows below: a null where nullable holds and no enum",
    ),
    Regression(
        "null-in-nullable-enum",
        old=_NULLABLE_ENUM,
        new=_NULLABLE_ENUM,
        stored={"beta": None},
        op="CREATE under old",
        refused=True,
        why="nullable lets null pass the type check, not the enum: the apiserver refuses"
        " null (seed 7); the validator skipped every check on null",
    ),
    Regression(
        "null-in-nullable-enum-listed",
        old={
            "type": "object",
            "properties": {"beta": {**_NULLABLE_ENUM["properties"]["beta"], "enum": ["ab", None]}},
        },
        new=_NULLABLE_ENUM,
        stored={"beta": None},
        op="CREATE under old",
        refused=True,
        why='null listed in the enum is refused all the same (\'supported values: "ab",'
        ' "null"\'; seed 11): the validator took the listed null as allowed',
    ),
)
