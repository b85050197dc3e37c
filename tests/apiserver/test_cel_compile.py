"""Rules compiled against the schema's types (validation/cel_compile.py): each refusal beside
the nearest rule that compiles. The same rows, asked of kube-apiserver v1.35.4, are in
tests/cluster/test_crd_validation_truth.py."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard.apiserver import cel_compile, cel_reads, cel_types

KUBE_VERSION = (1, 35)
S = {"type": "string"}
INT = {"type": "integer"}
SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer"},
        "ratio": {"type": "number"},
        "name": S,
        "my-name": S,
        "in": S,
        "when": {"type": "string", "format": "date-time"},
        "port": {"x-kubernetes-int-or-string": True},
        "tags": {"type": "array", "items": S},
        "labels": {"type": "object", "additionalProperties": S},
        "matrix": {"type": "array", "items": {"type": "array", "items": S}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "template": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
    },
}

# (rule, the apiserver's detail when it refuses it, else None)
RULES: list[tuple[str, str | None]] = [
    ("self.replicas > 1", None),
    ("self.replica > 1", "undefined field 'replica'"),
    ("self.name == 'a'", None),
    ("self.name == 1", "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self.replicas > 1.5", None),  # cross-type ordering (1.28+)
    ("self.ratio == 1", "found no matching overload for '_==_' applied to '(double, int)'"),
    ("self.my__dash__name == 'a'", None),
    ("self.my_name == 'a'", "undefined field 'my_name'"),
    ("self.__in__ == 'a'", None),
    ("self.when < timestamp('2020-01-01T00:00:00Z')", None),
    ("self.when < '2020-01-01'", "found no matching overload for '_<_'"),
    ("self.port == 1 || self.port == 'a'", None),
    ("self.tags.all(t, t.size() < 3)", None),
    ("self.tags.all(t, t > 3)", "found no matching overload for '_>_'"),
    ("self.labels.a == 'x'", None),
    ("self.labels.a == 1", "found no matching overload for '_==_'"),
    ("self.matrix[0][0] == 'a'", None),
    ("self.free.x == 1", "undefined field 'x'"),
    ("self.template.metadata.name == 'x'", None),
    ("self.template.metadata.labels == {}", "undefined field 'labels'"),
    ("self.replicas == oldSelf.replicas", None),
    ("self.replicas", "cel expression must evaluate to a bool"),
    ("self.replicas +", "Syntax error"),
    # cel-go's literal validators (1.29+), which the C++ checker does not run
    ("duration('1h30m') > duration('-1.5s')", None),
    ("duration('bogus') == duration('1s')", "1:10: invalid duration argument"),
    ("self.when < timestamp('2020-01-01T00:00:00Z')", None),
    ("self.when < timestamp('2020-13-01T00:00:00Z')", "1:23: invalid timestamp argument"),
    ("self.name.matches('^[a-z]+$')", None),
    ("self.name.matches('[a-')", "1:19: invalid matches argument"),
    ("'duration(\\'x\\')' == self.name", None),
    # raw literals ending in a backslash, which cel-cpp misreads (validation/cel_source.py)
    ("self.name == r'\\'", None),
    ("self.name == r'\\''", "1:18: Syntax error: token recognition error at: '''"),
    ("size(br'''\\''') == 1", None),
    ("size(rb'\\') == 1", "Syntax error: token recognition error"),
    ("self.name.matches(r'^a\\\\')", None),
    ("self.name.matches(r'^a\\')", "1:19: invalid matches argument"),
]


@pytest.mark.parametrize(("rule", "refused"), RULES, ids=[r for r, _ in RULES])
def test_rule(rule: str, refused: str | None) -> None:
    declared = cel_types.declare(SPEC)
    assert declared is not None
    self_type = cel_compile.signature(declared)
    compiled = cel_compile.compile_rule({"rule": rule}, self_type, KUBE_VERSION)
    assert compiled.unknown is None
    if refused is None:
        assert compiled.problem is None
    else:
        assert compiled.problem is not None and refused in compiled.problem


@pytest.mark.parametrize(
    "rule",
    ["self.tags.indexOf('a') == 0", "self.labels.all(k, v, v == 'a')", "self.matrix[0][0]"],
)
def test_what_this_runtime_cannot_tell_is_not_refused(rule: str) -> None:
    declared = cel_types.declare(SPEC)
    assert declared is not None
    self_type = cel_compile.signature(declared)
    compiled = cel_compile.compile_rule({"rule": rule}, self_type, KUBE_VERSION)
    assert compiled.problem is None and compiled.unknown is not None


MESSAGES: list[tuple[str, str | None]] = [
    ("'name ' + self.name", None),
    ("self.replicas", "messageExpression must evaluate to a string"),
    ("'x' + self.nam", "messageExpression compilation failed"),
]


@pytest.mark.parametrize(("expression", "refused"), MESSAGES, ids=[m for m, _ in MESSAGES])
def test_message_expression(expression: str, refused: str | None) -> None:
    declared = cel_types.declare(SPEC)
    assert declared is not None
    self_type = cel_compile.signature(declared)
    raw = {"rule": "true", "messageExpression": expression}
    compiled = cel_compile.compile_rule(raw, self_type, KUBE_VERSION)
    assert compiled.problem == refused or (refused and refused in (compiled.problem or ""))


def _problems(root: dict[str, Any]) -> list[tuple[str, str]]:
    sites = cel_reads.sites(root)
    verdicts = cel_compile.verdicts(sites, KUBE_VERSION)
    return [
        (p.keyword, p.detail)
        for p in cel_compile.schema_problems(sites, verdicts, lambda: "openAPIV3Schema")
    ]


def _spec(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": node}}


LIST_ITEM = {"type": "object", "properties": {"k": S}, "required": ["k"]}


def test_old_self_under_a_list_that_is_not_a_map() -> None:
    item = {**LIST_ITEM, "x-kubernetes-validations": [{"rule": "self.k == oldSelf.k"}]}
    atomic = _spec({"type": "array", "items": item})
    assert _problems(atomic) == [
        (
            "x-kubernetes-validations[0].rule",
            'Invalid value: "self.k == oldSelf.k": oldSelf cannot be used on the uncorrelatable'
            " portion of the schema within openAPIV3Schema.properties[spec]",
        )
    ]
    mapped = _spec(
        {
            "type": "array",
            "items": item,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"],
        }
    )
    assert _problems(mapped) == []


def test_optional_old_self_only_with_old_self() -> None:
    def rules(rule: str) -> dict[str, Any]:
        node = {**LIST_ITEM, "x-kubernetes-validations": [{"rule": rule, "optionalOldSelf": True}]}
        return _spec(node)

    assert _problems(rules("oldSelf.hasValue() && oldSelf.value().k == self.k")) == []
    assert _problems(rules("self.k == 'a'")) == [
        (
            "x-kubernetes-validations[0].optionalOldSelf",
            "Invalid value: true: may not be set if oldSelf is not used in rule",
        )
    ]


FIELD_PATHS: list[tuple[str, bool]] = [
    (".k", True),
    (".q", False),
    ("['k']", True),
    ("k", False),
    (".k.x", False),
]


@pytest.mark.parametrize(("path", "valid"), FIELD_PATHS, ids=[p for p, _ in FIELD_PATHS])
def test_field_path(path: str, valid: bool) -> None:
    assert cel_compile.valid_field_path(path, LIST_ITEM) is valid


def test_an_optional_old_self_rule_is_placed_as_written() -> None:
    """It is compiled inside a binding of oldSelf; its issues name the rule's own columns."""
    declared = cel_types.declare(LIST_ITEM)
    assert declared is not None
    self_type = cel_compile.signature(declared)
    raw = {"rule": "oldSelf.value().q == 1", "optionalOldSelf": True}
    compiled = cel_compile.compile_rule(raw, self_type, KUBE_VERSION)
    assert compiled.problem == (
        "compilation failed: ERROR: <input>:1:16: undefined field 'q'\n"
        " | oldSelf.value().q == 1\n"
        " | ...............^"
    )


# (rule, kube-apiserver v1.35.4's issues): the issues of a rule given to the runtime
# rewritten (validation/cel_source.py), placed in the rule as written
PLACED = [
    (
        "self.f == r'\\\\\\' && self.g == 1",
        "ERROR: <input>:1:25: undefined field 'g'\n"
        " | self.f == r'\\\\\\' && self.g == 1\n"
        " | ........................^",
    ),
    (
        "self.f == 'é' + r'\\\\\\' && self.g",
        "ERROR: <input>:1:31: undefined field 'g'\n"
        " | self.f == 'é' + r'\\\\\\' && self.g\n"
        " | ...........．..................^",
    ),
    (
        "self.f == r'\\' r'\\'",
        "ERROR: <input>:1:16: Syntax error: extraneous input 'r'\\'' expecting <EOF>\n"
        " | self.f == r'\\' r'\\'\n"
        " | ...............^",
    ),
    (
        "self.f == r'''a\\\nb\\''' && self.n == 'x'",
        "ERROR: <input>:2:17: found no matching overload for '_==_' applied to '(int, string)'\n"
        " | b\\''' && self.n == 'x'\n"
        " | ................^",
    ),
    (
        "self.f == '\\q r'\\''",
        "ERROR: <input>:1:11: Syntax error: token recognition error at: ''\\q'\n"
        " | self.f == '\\q r'\\''\n"
        " | ..........^\n"
        "ERROR: <input>:1:19: Syntax error: token recognition error at: '''\n"
        " | self.f == '\\q r'\\''\n"
        " | ..................^",
    ),
]


@pytest.mark.parametrize(("rule", "issues"), PLACED, ids=[r for r, _ in PLACED])
def test_issues_beside_a_raw_literal_are_the_apiservers(rule: str, issues: str) -> None:
    declared = cel_types.declare({"type": "object", "properties": {"f": S, "n": INT}})
    assert declared is not None
    self_type = cel_compile.signature(declared)
    compiled = cel_compile.compile_rule({"rule": rule, "message": "m"}, self_type, KUBE_VERSION)
    assert compiled.problem == f"compilation failed: {issues}"


def test_a_field_named_like_a_map_entry_leaves_the_types_whole() -> None:
    """protobuf names a map field's entry after it (foo: FooEntry) in the scope of the fields:
    a field of that name would make the whole type fail to load."""
    labels = {"type": "object", "additionalProperties": S}
    declared = cel_types.declare({"type": "object", "properties": {"foo": labels, "FooEntry": S}})
    assert declared is not None
    self_type = cel_compile.signature(declared)
    compiled = cel_compile.compile_rule({"rule": "self.bar == 1"}, self_type, KUBE_VERSION)
    assert compiled.problem is not None and "undefined field 'bar'" in compiled.problem
