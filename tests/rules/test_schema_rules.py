"""Each schema rule as a paired table: every refusal beside the nearest change that is allowed.

Cases compare a CRD whose spec.field is OLD with one where it is NEW, and list every
(code, path) the engine reports: an empty set means the change passes without a finding.
"""

from __future__ import annotations

from typing import Any

import pytest

from crd_builders import compare, crd, field_crd, flagged, obj, version

F = "spec.field"
INT = {"type": "integer"}
STR = {"type": "string"}
ANY = {"x-kubernetes-preserve-unknown-fields": True}


def case(old: dict[str, Any], new: dict[str, Any], expected: set[tuple[str, str]], id: str) -> Any:
    return pytest.param(old, new, expected, id=id)


PROPERTY_REMOVED = [
    case(obj(a=STR, b=STR), obj(a=STR), {("UG201", "spec.field.b")}, "property removed: flagged"),
    case(obj(a=STR), obj(a=STR, b=STR), set(), "property added: not flagged"),
    case(
        obj(a=obj(x=STR, y=STR)),
        obj(),
        {("UG201", "spec.field.a")},
        "object removed: one finding, not one per child",
    ),
    case(
        obj(a=STR, b=STR),
        {**obj(a=STR), "x-kubernetes-preserve-unknown-fields": True},
        set(),
        "removed under preserve-unknown-fields: not flagged",
    ),
    case(
        {"type": "object", "additionalProperties": STR},
        {"type": "object"},
        {("UG201", "spec.field.*")},
        "additionalProperties removed: flagged",
    ),
    case(
        {"type": "array", "items": obj(a=STR, b=STR)},
        {"type": "array", "items": obj(a=STR)},
        {("UG201", "spec.field[].b")},
        "array item property removed: flagged",
    ),
]

REQUIRED = [
    case(
        obj(a=STR),
        {**obj(a=STR), "required": ["a"]},
        {("UG202", "spec.field.a")},
        "existing field newly required: flagged",
    ),
    case(
        obj(a=STR),
        {**obj(a={**STR, "default": "x"}), "required": ["a"]},
        {("UG203", "spec.field.a"), ("UG212", "spec.field.a")},
        "newly required with a default: info (and the default is reported)",
    ),
    case(
        obj(),
        {**obj(b=STR), "required": ["b"]},
        {("UG202", "spec.field.b")},
        "new and required: flagged",
    ),
    case(
        obj(),
        {**obj(b={**STR, "default": "x"}), "required": ["b"]},
        {("UG203", "spec.field.b")},
        "new and required with a default: info",
    ),
    case({**obj(a=STR), "required": ["a"]}, obj(a=STR), set(), "required dropped: not flagged"),
]

TYPE = [
    case(STR, INT, {("UG204", F)}, "string to integer: flagged"),
    case(INT, {"type": "number"}, set(), "integer to number: not flagged"),
    case({"type": "number"}, INT, {("UG204", F)}, "number to integer: flagged"),
    case(obj(a=STR), STR, {("UG204", F)}, "object to string: one finding, children not repeated"),
    case(
        STR,
        {**INT, "enum": [1, 2]},
        {("UG204", F)},
        "type changed with an enum introduced: one finding, the type change",
    ),
    case(INT, {**INT, "enum": [1, 2]}, {("UG207", F)}, "enum introduced, type kept: its finding"),
    case(
        obj(a=STR),
        {"type": "array", "items": {**STR, "enum": ["x"]}},
        {("UG204", F)},
        "type changed with an enum below: one finding",
    ),
    case(
        ANY,
        {**INT, "enum": [1, 2]},
        {("UG204", F), ("UG207", F)},
        "type declared where any value was: the enum reaches stored integers too",
    ),
]

NULLABLE_AND_INT_OR_STRING = [
    case({**STR, "nullable": True}, STR, {("UG205", F)}, "nullable removed: flagged"),
    case(STR, {**STR, "nullable": True}, set(), "nullable added: not flagged"),
    case(
        {"x-kubernetes-int-or-string": True}, STR, {("UG206", F)}, "int-or-string removed: flagged"
    ),
    case(STR, {"x-kubernetes-int-or-string": True}, set(), "int-or-string added: not flagged"),
]

ENUM = [
    case(
        {**STR, "enum": ["a", "b"]},
        {**STR, "enum": ["a"]},
        {("UG207", F)},
        "value removed: flagged",
    ),
    case({**STR, "enum": ["a"]}, {**STR, "enum": ["a", "b"]}, set(), "value added: not flagged"),
    case(STR, {**STR, "enum": ["a"]}, {("UG207", F)}, "enum introduced: flagged"),
    case({**STR, "enum": ["a"]}, STR, set(), "enum removed: not flagged"),
    case(
        {**STR, "allOf": [{"enum": ["a", "b"]}]},
        {**STR, "enum": ["a", "b"]},
        set(),
        "enum moved from allOf to the node: the same values, not flagged",
    ),
    case(
        {**STR, "allOf": [{"enum": ["a", "b"]}]},
        {**STR, "enum": ["a"]},
        {("UG207", F)},
        "enum moved from allOf to the node, a value lost: flagged",
    ),
    case(
        {**INT, "enum": [1, 2]},
        {**INT, "enum": [2.0, 1.0]},
        set(),
        "same values as floats: not flagged",
    ),
]

BOUNDS = [
    case({**INT, "maximum": 10}, {**INT, "maximum": 5}, {("UG208", F)}, "maximum lowered: flagged"),
    case({**INT, "maximum": 5}, {**INT, "maximum": 10}, set(), "maximum raised: not flagged"),
    case({**INT, "minimum": 0}, {**INT, "minimum": 1}, {("UG208", F)}, "minimum raised: flagged"),
    case({**INT, "minimum": 1}, {**INT, "minimum": 0}, set(), "minimum lowered: not flagged"),
    case(
        {**INT, "minimum": 1},
        {**INT, "minimum": 1, "exclusiveMinimum": True},
        {("UG208", F)},
        "minimum made exclusive: flagged",
    ),
    case(
        {**INT, "minimum": 1, "exclusiveMinimum": True},
        {**INT, "minimum": 1},
        set(),
        "exclusiveMinimum dropped: not flagged",
    ),
    case(INT, {**INT, "maximum": 3}, {("UG208", F)}, "maximum introduced: flagged"),
    case({**INT, "maximum": 3}, INT, set(), "maximum removed: not flagged"),
    case(
        {**STR, "maxLength": 10},
        {**STR, "maxLength": 5},
        {("UG208", F)},
        "maxLength lowered: flagged",
    ),
    case({**STR, "minLength": 1}, {**STR, "minLength": 0}, set(), "minLength lowered: not flagged"),
    case(
        {"type": "array", "items": STR},
        {"type": "array", "items": STR, "minItems": 1},
        {("UG208", F)},
        "minItems introduced: flagged",
    ),
    case(
        {"type": "object", "maxProperties": 3},
        {"type": "object", "maxProperties": 4},
        set(),
        "maxProperties raised: not flagged",
    ),
]

MULTIPLE_FORMAT_PATTERN = [
    case(
        {**INT, "multipleOf": 2},
        {**INT, "multipleOf": 4},
        {("UG209", F)},
        "multipleOf 2 -> 4: flagged",
    ),
    case(
        {**INT, "multipleOf": 4}, {**INT, "multipleOf": 2}, set(), "multipleOf 4 -> 2: not flagged"
    ),
    case(
        {"type": "number", "multipleOf": 0.5},
        {"type": "number", "multipleOf": 0.25},
        set(),
        "multipleOf 0.5 -> 0.25: not flagged",
    ),
    case(STR, {**STR, "format": "uuid"}, {("UG210", F)}, "format added: flagged"),
    case({**STR, "format": "uuid"}, STR, set(), "format removed: not flagged"),
    case(STR, {**STR, "pattern": "^a"}, {("UG211", F)}, "pattern added: flagged"),
    case(STR, {**STR, "pattern": ".*"}, set(), "pattern added, accepting any string: not flagged"),
    case(
        {**STR, "pattern": "^(a|b)"},
        {**STR, "pattern": "^a"},
        {("UG211", F)},
        "pattern narrowed: flagged",
    ),
    case(
        {**STR, "pattern": "^a"},
        {**STR, "pattern": "^(a|b)"},
        set(),
        "pattern widened: not flagged (tests/rules/test_pattern_changed.py)",
    ),
    case({**STR, "pattern": "^a"}, STR, set(), "pattern removed: not flagged"),
]

DEFAULTS = [
    case(STR, {**STR, "default": "x"}, {("UG212", F)}, "default added: flagged"),
    case(
        {**STR, "default": "x"}, {**STR, "default": "y"}, {("UG219", F)}, "default changed: flagged"
    ),
    case({**STR, "default": "x"}, STR, {("UG219", F)}, "default removed: flagged"),
    case(
        {**INT, "default": 1},
        {**INT, "default": 1.0},
        set(),
        "same default as a float: not flagged",
    ),
    case(
        {"type": "object", "default": {"a": 1, "b": 2}},
        {"type": "object", "default": {"b": 2, "a": 1}},
        set(),
        "same default, other key order: not flagged",
    ),
    case(obj(), obj(a={**STR, "default": "x"}), set(), "default on a new field: not flagged"),
    case(
        obj(a={**ANY, "default": True}),
        obj(a={**ANY, "default": 1}),
        {("UG219", F + ".a")},
        "default true -> 1 (equal under ==): flagged",
    ),
    case(
        obj(a={**ANY, "default": 1}),
        obj(a={**ANY, "default": 1.0}),
        set(),
        "default 1 -> 1.0 (the same JSON number): not flagged",
    ),
]

RULE_A = {"rule": "self.size() < 10", "message": "too long"}
TRANSITION = {"rule": "self == oldSelf", "message": "immutable"}

CEL = [
    case(STR, {**STR, "x-kubernetes-validations": [RULE_A]}, {("UG213", F)}, "rule added: flagged"),
    case({**STR, "x-kubernetes-validations": [RULE_A]}, STR, set(), "rule removed: not flagged"),
    case(
        {**STR, "x-kubernetes-validations": [RULE_A]},
        {**STR, "x-kubernetes-validations": [{**RULE_A, "message": "shorter please"}]},
        set(),
        "message only changed: not flagged",
    ),
    case(
        {**STR, "x-kubernetes-validations": [RULE_A]},
        {**STR, "x-kubernetes-validations": [{"rule": "self.size() < 5"}]},
        {("UG213", F)},
        "rule changed: flagged",
    ),
    case(
        STR,
        {**STR, "x-kubernetes-validations": [TRANSITION]},
        {("UG213", F)},
        "transition rule added: flagged",
    ),
    case(
        {**STR, "x-kubernetes-validations": [{"rule": "!self.contains('*')"}]},
        {**STR, "x-kubernetes-validations": [{"rule": '!self.contains("*")'}]},
        set(),
        "rule rewritten with other quotes (the same syntax tree): not flagged",
    ),
    case(
        {**STR, "x-kubernetes-validations": [{"rule": "!self.contains('*')"}]},
        {**STR, "x-kubernetes-validations": [{"rule": '!self.contains("?")'}]},
        {("UG213", F)},
        "rule rewritten with another literal: flagged",
    ),
]

ROLE = {"roleArn": STR}


def rule_at(node: dict[str, Any], rule: str) -> dict[str, Any]:
    return {**node, "x-kubernetes-validations": [{"rule": rule}]}


@pytest.mark.parametrize(
    ("old", "rule", "expected"),
    [
        pytest.param(
            obj(**ROLE),
            "!has(self.externalId) || has(self.roleArn)",
            "info",
            id="tests with has() only a field the old schema lacks: info",
        ),
        pytest.param(
            obj(**ROLE, externalId=STR),
            "!has(self.externalId) || has(self.roleArn)",
            "error",
            id="the same rule where the old schema has the field: error",
        ),
        pytest.param(
            obj(**ROLE),
            "!has(self.roleArn) || has(self.externalId)",
            "error",
            id="the field the old schema has decides: error",
        ),
        pytest.param(
            obj(**ROLE),
            "(has(self.roleArn) ? 1 : 0) + (has(self.externalId) ? 1 : 0) <= 1",
            "info",
            id="at most one of two, one not in the old schema: info",
        ),
        pytest.param(
            obj(**ROLE, externalId=STR),
            "(has(self.roleArn) ? 1 : 0) + (has(self.externalId) ? 1 : 0) <= 1",
            "error",
            id="at most one of two, both in the old schema: error",
        ),
        pytest.param(
            {**obj(**ROLE), "x-kubernetes-preserve-unknown-fields": True},
            "!has(self.externalId) || has(self.roleArn)",
            "error",
            id="the old schema keeps unknown fields (externalId may be stored): error",
        ),
    ],
)
def test_rule_added_that_old_objects_cannot_fail(
    old: dict[str, Any], rule: str, expected: str
) -> None:
    new = rule_at({**old, "properties": {**old["properties"], "externalId": STR}}, rule)
    found = compare(field_crd(old), field_crd(new)).findings
    assert [(f.code, f.path, f.severity.name.lower()) for f in found if f.code == "UG213"] == [
        ("UG213", F, expected)
    ]


LISTS_AND_MAPS = [
    case(
        {"type": "array", "items": STR},
        {"type": "array", "items": STR, "x-kubernetes-list-type": "set"},
        {("UG214", F)},
        "atomic (absent) to set: flagged",
    ),
    case(
        {"type": "array", "items": STR},
        {"type": "array", "items": STR, "x-kubernetes-list-type": "atomic"},
        set(),
        "absent to atomic: the same, not flagged",
    ),
    case(
        {
            "type": "array",
            "items": obj(k=STR),
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"],
        },
        {
            "type": "array",
            "items": obj(k=STR, j=STR),
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k", "j"],
        },
        {("UG214", F)},
        "map keys changed: flagged",
    ),
    case(
        {"type": "object", "additionalProperties": STR},
        {"type": "object", "additionalProperties": STR, "x-kubernetes-map-type": "atomic"},
        {("UG215", F)},
        "granular (absent) to atomic map: flagged",
    ),
    case(
        {"type": "object", "additionalProperties": STR},
        {"type": "object", "additionalProperties": STR, "x-kubernetes-map-type": "granular"},
        set(),
        "absent to granular: the same, not flagged",
    ),
]

EXTENSIONS = [
    case(
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        {"type": "object"},
        {("UG216", F)},
        "preserve-unknown-fields removed: flagged",
    ),
    case(
        {"type": "object"},
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        set(),
        "preserve-unknown-fields added: not flagged",
    ),
    case(
        {"type": "object"},
        {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
        {("UG217", F)},
        "embedded-resource turned on: flagged",
    ),
]

IOS = {"x-kubernetes-int-or-string": True}
COMBINATORS = [
    case(
        STR,
        {**IOS, "anyOf": [INT, STR]},
        set(),
        "string to int-or-string with the anyOf that restates it: not flagged",
    ),
    case(
        {**IOS, "anyOf": [INT, STR]},
        {**IOS, "anyOf": [INT, {**STR, "pattern": "^[a-z]+$"}]},
        {("UG218", F)},
        "a pattern inside the int-or-string anyOf: flagged",
    ),
    case(
        obj(a=STR, b=STR),
        {**obj(a=STR, b=STR), "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {("UG218", F)},
        "oneOf added: flagged",
    ),
    case(
        {**obj(a=STR, b=STR), "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        obj(a=STR, b=STR),
        set(),
        "oneOf removed: not flagged",
    ),
    case(
        {**obj(a=STR), "not": {"required": ["a"]}},
        {**obj(a=STR), "not": {"required": ["a"], "description": "no a"}},
        set(),
        "description inside not changed: not flagged",
    ),
    case(
        {**obj(a=STR), "anyOf": [{"required": ["a"], "description": "old"}]},
        {**obj(a=STR), "anyOf": [{"required": ["a"], "description": "new"}]},
        set(),
        "description inside an anyOf branch changed: not flagged",
    ),
    case(
        {**obj(a=STR), "anyOf": [{"required": ["a"], "description": "old"}]},
        {**obj(a=STR), "anyOf": [{"required": ["b"], "description": "old"}]},
        {("UG218", F)},
        "requirement inside an anyOf branch changed: flagged",
    ),
]

# Below x-kubernetes-preserve-unknown-fields stored objects can hold any value (null too), so a
# field declared there for the first time is judged as a change from "any value".
KEPT = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
LOOSE = {**ANY, "nullable": True}  # what a preserved node held: any value, null included


def kept(**properties: Any) -> dict[str, Any]:
    return {**KEPT, "properties": properties}


def nullable(node: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**node, "nullable": True, **extra}


G = F + ".g"
DECLARED_WHERE_KEPT = [
    case(
        KEPT,
        kept(g=obj(a=STR)),
        {("UG204", G), ("UG205", G), ("UG216", G)},
        "object declared where kept: typed, nulls dropped, its other fields pruned",
    ),
    case(
        KEPT,
        kept(g={**KEPT, "nullable": True, "properties": {"a": STR}}),
        {("UG204", G)},
        "object declared where kept, keeping unknown fields and nulls: typed only",
    ),
    case(KEPT, kept(g=LOOSE), set(), "any value, null included, declared: not flagged"),
    case(KEPT, kept(g=ANY), {("UG205", G)}, "any value but null declared: nulls dropped"),
    case(KEPT, kept(g=INT), {("UG204", G), ("UG205", G)}, "type declared: flagged"),
    case(
        KEPT,
        kept(g=nullable({"x-kubernetes-int-or-string": True})),
        {("UG204", G)},
        "int-or-string declared: a type, flagged",
    ),
    case(KEPT, kept(g=nullable(STR, enum=["a"])), {("UG204", G), ("UG207", G)}, "enum declared"),
    case(KEPT, kept(g=nullable(INT, maximum=5)), {("UG204", G), ("UG208", G)}, "bound declared"),
    case(
        KEPT,
        kept(g=nullable(STR, pattern="^a$")),
        {("UG204", G), ("UG211", G)},
        "pattern declared",
    ),
    case(
        KEPT,
        kept(g=nullable(STR, format="uuid")),
        {("UG204", G), ("UG210", G)},
        "format declared",
    ),
    case(
        KEPT,
        kept(g=nullable(LOOSE, **{"x-kubernetes-validations": [RULE_A]})),
        {("UG213", G)},
        "CEL rule declared",
    ),
    case(
        KEPT,
        kept(g=nullable(LOOSE, **{"x-kubernetes-validations": [TRANSITION]})),
        {("UG213", G)},
        "CEL transition rule declared",
    ),
    case(KEPT, kept(g=nullable(LOOSE, default=1)), {("UG212", G)}, "default declared"),
    case(
        KEPT,
        kept(g=nullable({"type": "array", "items": STR, "x-kubernetes-list-type": "set"})),
        {("UG204", G), ("UG214", G), ("UG216", G)},
        "set list declared",
    ),
    case(
        KEPT,
        kept(g={**LOOSE, "properties": {"a": LOOSE}, "required": ["a"]}),
        {("UG202", G + ".a")},
        "required field declared inside",
    ),
    case(
        KEPT,
        kept(g={**LOOSE, "properties": {"a": STR}}),
        {("UG204", G + ".a"), ("UG205", G + ".a")},
        "a field declared deeper, below a declared node that keeps unknown fields",
    ),
    case(
        kept(g=nullable(STR, default="x")),
        KEPT,
        {("UG219", G)},
        "declared field with a default undeclared, still kept: the default is gone",
    ),
    case(kept(g=STR), KEPT, set(), "declared field undeclared, still kept: not flagged"),
    case(obj(), obj(g=INT), set(), "field declared where unknown fields were pruned: new"),
    case(
        {"type": "object", "additionalProperties": STR},
        obj(g={**STR, "pattern": "^a$"}),
        {("UG201", F + ".*"), ("UG211", G)},
        "additionalProperties to a declared property: its other keys pruned, the value tightened",
    ),
    case(
        {"type": "object", "additionalProperties": STR},
        obj(g=STR),
        {("UG201", F + ".*")},
        "additionalProperties to the same schema, declared: its other keys pruned",
    ),
    case(
        obj(g=STR, h=INT),
        {"type": "object", "additionalProperties": {**STR, "pattern": "^a$"}},
        {("UG211", G), ("UG204", F + ".h")},
        "declared properties to additionalProperties: each value judged by the new schema"
        " (h's type change covers its pattern)",
    ),
    case(
        obj(g=STR),
        {"type": "object", "additionalProperties": STR},
        set(),
        "declared properties to the same additionalProperties: not flagged",
    ),
    case(
        {"type": "object", "additionalProperties": True},
        obj(g=obj(a=INT)),
        {("UG201", F + ".*"), ("UG204", G)},
        "additionalProperties true to a declared object: typed",
    ),
    case(
        {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"a": STR}},
        {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"a": STR, "kind": {**STR, "enum": ["ConfigMap"]}},
        },
        {("UG207", F + ".kind")},
        "an embedded resource's kind declared with an enum: stored kinds are strings",
    ),
    case(
        {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"a": STR}},
        {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"a": STR, "apiVersion": STR, "kind": STR, "metadata": obj()},
        },
        set(),
        "an embedded resource's implicit fields declared as they are: not flagged",
    ),
]

DOCUMENTATION_AND_UNCLASSIFIED = [
    case(
        {**STR, "description": "old"},
        {**STR, "description": "new", "title": "t", "example": "e"},
        set(),
        "documentation only: not flagged",
    ),
    case(
        {"type": "array", "items": STR},
        {"type": "array", "items": STR, "uniqueItems": True},
        {("UG901", F)},
        "uniqueItems added: no rule explains it, unclassified",
    ),
]

ALL_CASES = (
    PROPERTY_REMOVED
    + REQUIRED
    + TYPE
    + NULLABLE_AND_INT_OR_STRING
    + ENUM
    + BOUNDS
    + MULTIPLE_FORMAT_PATTERN
    + DEFAULTS
    + CEL
    + LISTS_AND_MAPS
    + EXTENSIONS
    + COMBINATORS
    + DECLARED_WHERE_KEPT
    + DOCUMENTATION_AND_UNCLASSIFIED
)


@pytest.mark.parametrize(("old", "new", "expected"), ALL_CASES)
def test_schema_change(
    old: dict[str, Any], new: dict[str, Any], expected: set[tuple[str, str]]
) -> None:
    assert flagged(field_crd(old), field_crd(new)) == expected


MAP = {"type": "object", "additionalProperties": STR}
ATOMIC_MAP = {**MAP, "x-kubernetes-map-type": "atomic"}
KEYED = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}


@pytest.mark.parametrize(
    ("old", "new", "severity"),
    [
        pytest.param(obj(m=MAP), obj(m=ATOMIC_MAP), "error", id="a field: error"),
        pytest.param(
            {"type": "array", "items": obj(k=STR, m=MAP), **KEYED},
            {"type": "array", "items": obj(k=STR, m=ATOMIC_MAP), **KEYED},
            "error",
            id="in a map list's items, merged by key: error",
        ),
        pytest.param(
            {"type": "array", "items": obj(k=STR, m=MAP)},
            {"type": "array", "items": obj(k=STR, m=ATOMIC_MAP)},
            "info",
            id="in an atomic list's items, owned whole: info",
        ),
        pytest.param(
            {**obj(m=ATOMIC_MAP), "x-kubernetes-map-type": "atomic"},
            {**obj(m=MAP), "x-kubernetes-map-type": "atomic"},
            "info",
            id="in an atomic map: info",
        ),
        pytest.param(
            {"type": "array", "items": obj(k=STR, m=MAP)},
            {"type": "array", "items": obj(k=STR, m=ATOMIC_MAP), **KEYED},
            "error",
            id="in a list made a map list: error",
        ),
    ],
)
def test_map_type_changed_below_what_apply_owns_whole(
    old: dict[str, Any], new: dict[str, Any], severity: str
) -> None:
    """tests/cluster/test_map_type_truth.py: inside a list or map that server-side apply
    owns whole on both sides, the map type changes nothing."""
    found = [f for f in compare(field_crd(old), field_crd(new)).findings if f.code == "UG215"]
    assert [str(f.severity) for f in found] == [severity]


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        pytest.param(obj(name=STR), set(), id="name declared as a string: not flagged"),
        pytest.param(
            obj(name={**STR, "maxLength": 20}),
            {("UG208", "metadata.name")},
            id="name declared with maxLength: every stored name is judged",
        ),
        pytest.param(
            obj(labels={"type": "object", "additionalProperties": STR}),
            set(),
            id="labels declared as they are held: not flagged",
        ),
    ],
)
def test_root_metadata_holds_object_meta_whatever_is_declared(
    metadata: dict[str, Any], expected: set[tuple[str, str]]
) -> None:
    old = crd(version(schema=obj(spec=obj(a=STR))))
    new = crd(version(schema=obj(metadata=metadata, spec=obj(a=STR))))
    assert flagged(old, new) == expected
    assert flagged(new, old) == set()  # dropping the declaration prunes nothing


def test_root_that_kept_unknown_fields_judges_spec_not_the_resource_fields() -> None:
    """A root schema that kept everything, then declared: apiVersion, kind and metadata are
    always there as strings and an object, so only spec's declaration is judged."""
    old = crd(version(schema=KEPT))
    spec = {**LOOSE, "properties": {"a": nullable(STR)}}
    new_root = kept(apiVersion=STR, kind=STR, metadata={"type": "object"}, spec=spec)
    assert flagged(old, crd(version(schema=new_root))) == {("UG204", "spec.a")}
