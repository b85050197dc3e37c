"""The validator on the rule-truth table's rows: each refusal beside the nearest allowed
change. The answers are the ones kube-apiserver v1.35.4 gave
(tests/cluster/test_rule_truth.py); the differential suite holds the rest."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard.apiserver import judge

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
KUBE = (1, 35)


def root(spec: dict[str, Any], **spec_extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"touch": STR, **spec}, **spec_extra},
            "status": {"type": "object", "properties": {"note": STR}},
        },
    }


def stored(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "g.io/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": spec}


def cel(rule: str, **extra: Any) -> dict[str, Any]:
    return {"x-kubernetes-validations": [{"rule": rule, **extra}]}


# (id, new spec properties, spec-node keywords, stored spec, refused on CREATE,
#  refused on UPDATE of a label, read-back operations)
ROWS: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], bool, bool, list[str]]] = [
    ("property-removed", {}, {}, {"legacy": "x"}, False, False, ["remove /spec/legacy"]),
    ("property-kept", {"legacy": STR}, {}, {"legacy": "x"}, False, False, []),
    # A label UPDATE leaves spec unchanged: constraints on spec ratchet (the rule-truth
    # table's UPDATE changed spec.touch, so there they refuse).
    ("required-added", {"max": INT}, {"required": ["max"]}, {}, True, False, []),
    ("required-met", {"max": INT}, {"required": ["max"]}, {"max": 1}, False, False, []),
    ("type-changed", {"size": INT}, {}, {"size": "8"}, True, False, []),
    ("type-kept", {"size": STR}, {}, {"size": "8"}, False, False, []),
    ("enum-value-removed", {"c": {**STR, "enum": ["red"]}}, {}, {"c": "blue"}, True, False, []),
    ("enum-value-kept", {"c": {**STR, "enum": ["red"]}}, {}, {"c": "red"}, False, False, []),
    ("maximum-tightened", {"r": {**INT, "maximum": 5}}, {}, {"r": 8}, True, False, []),
    ("maximum-met", {"r": {**INT, "maximum": 5}}, {}, {"r": 5}, False, False, []),
    ("format-uuid", {"u": {**STR, "format": "uuid"}}, {}, {"u": "nope"}, True, False, []),
    (
        "format-int32-stripped",
        {"s": {**INT, "format": "int32"}},
        {},
        {"s": 2**40},
        False,
        False,
        [],
    ),
    ("pattern-added", {"s": {**STR, "pattern": "^[a-z]+$"}}, {}, {"s": "ABC"}, True, False, []),
    ("pattern-met", {"s": {**STR, "pattern": "^[a-z]+$"}}, {}, {"s": "abc"}, False, False, []),
    (
        "default-added",
        {"a": {"type": "object", "properties": {"mode": {**STR, "default": "fast"}}}},
        {},
        {"a": {}},
        False,
        False,
        ["add /spec/a/mode"],
    ),
    (
        "default-on-set-field",
        {"m": {**STR, "default": "fast"}},
        {},
        {"m": "slow"},
        False,
        False,
        [],
    ),
    ("nullable-removed", {"o": STR}, {}, {"o": None}, False, False, ["remove /spec/o"]),
    ("nullable-kept", {"o": {**STR, "nullable": True}}, {}, {"o": None}, False, False, []),
    ("rule-added", {"r": {**INT, **cel("self <= 5")}}, {}, {"r": 8}, True, False, []),
    ("rule-met", {"r": {**INT, **cel("self <= 5")}}, {}, {"r": 5}, False, False, []),
    (
        "transition-rule",
        {"l": {**INT, **cel("self <= 5 && self >= oldSelf")}},
        {},
        {"l": 8},
        False,
        True,
        [],
    ),
    (
        "transition-rule-met",
        {"l": {**INT, **cel("self >= oldSelf")}},
        {},
        {"l": 8},
        False,
        False,
        [],
    ),
    (
        "rule-on-spec",
        {"cap": INT},
        cel("!has(self.cap) || self.cap <= 5"),
        {"cap": 8},
        True,
        False,
        [],
    ),
    (
        "set-duplicates",
        {"t": {"type": "array", "items": STR, "x-kubernetes-list-type": "set"}},
        {},
        {"t": ["a", "a"]},
        True,
        False,
        [],
    ),
    (
        "set-unique",
        {"t": {"type": "array", "items": STR, "x-kubernetes-list-type": "set"}},
        {},
        {"t": ["a", "b"]},
        False,
        False,
        [],
    ),
    (
        "embedded-without-kind",
        {
            "e": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-embedded-resource": True,
            }
        },
        {},
        {"e": {"foo": "bar"}},
        True,
        True,
        [],
    ),
    (
        "embedded-with-kind",
        {
            "e": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-embedded-resource": True,
            }
        },
        {},
        {"e": {"apiVersion": "v1", "kind": "ConfigMap"}},
        False,
        False,
        [],
    ),
    (
        "anyof-added",
        {"a": INT, "b": INT},
        {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {},
        True,
        False,
        [],
    ),
    (
        "anyof-met",
        {"a": INT, "b": INT},
        {"anyOf": [{"required": ["a"]}]},
        {"a": 1},
        False,
        False,
        [],
    ),
]


@pytest.mark.parametrize(
    ("spec", "keywords", "value", "create", "update", "read"),
    [pytest.param(*row[1:], id=row[0]) for row in ROWS],
)
def test_judgement(
    spec: dict[str, Any],
    keywords: dict[str, Any],
    value: dict[str, Any],
    create: bool,
    update: bool,
    read: list[str],
) -> None:
    found = judge.Judge(root(spec, **keywords), KUBE).judge(stored(value))
    assert found.create.refused is create, found.create
    assert found.update.refused is update, found.update
    assert [f"{op} {path}" for op, path in found.read_changes] == read


def test_status_write_meets_spec_transition_rule() -> None:
    """CEL rules see the whole object on /status: a spec transition rule blocks it."""
    schema = root({"l": INT}, **cel("!has(self.l) || self.l <= 5 || self.l < oldSelf.l"))
    found = judge.Judge(schema, KUBE).judge(stored({"l": 8}))
    assert found.status.refused
    assert [v.path for v in found.status.violations] == ["spec"]


def test_status_write_not_ratcheted_before_1_33() -> None:
    """kubernetes#129506 (1.33): before it, a /status write runs every CEL rule of the object
    and validates status against its schema without ratcheting, unchanged values or not."""
    schema = root({"r": INT}, **cel("self.r <= 5"))
    schema["properties"]["status"] = {"type": "object", "properties": {"n": {**INT, "maximum": 5}}}
    obj = {**stored({"r": 8}), "status": {"n": 8}}
    old_minor = judge.Judge(schema, (1, 32)).judge(obj)
    assert [v.path for v in old_minor.status.violations] == ["spec", "status.n"]
    assert not old_minor.update.refused
    assert not judge.Judge(schema, (1, 33)).judge(obj).status.refused


def test_no_ratcheting_before_1_30() -> None:
    schema = root({"r": {**INT, "maximum": 5}})
    assert judge.Judge(schema, (1, 29)).judge(stored({"r": 8})).update.refused
    assert not judge.Judge(schema, (1, 30)).judge(stored({"r": 8})).update.refused


def test_unavailable_function_is_not_evaluated() -> None:
    """IP/CIDR arrive in 1.30: a 1.29 cluster's rule using them is not evaluated, never
    passed."""
    schema = root({"ip": {**STR, "maxLength": 40, **cel("isIP(self)")}})
    older = judge.Judge(schema, (1, 29)).judge(stored({"ip": "nope"}))
    assert not older.create.refused
    assert [n.rule for n in older.create.not_evaluated] == ["isIP(self)"]
    newer = judge.Judge(schema, (1, 30)).judge(stored({"ip": "nope"}))
    assert newer.create.refused and not newer.create.not_evaluated


def test_rule_message_reason_and_field_path() -> None:
    rule = {
        "rule": "self.a <= 5",
        "messageExpression": "'a is ' + string(self.a)",
        "reason": "FieldValueForbidden",
        "fieldPath": ".a",
    }
    schema = root({"a": INT}, **{"x-kubernetes-validations": [rule]})
    (violation,) = judge.Judge(schema, KUBE).judge(stored({"a": 8})).create.violations
    assert (violation.path, violation.reason, violation.message) == (
        "spec.a",
        "FieldValueForbidden",
        "a is 8",
    )
    assert "8" not in violation.detail


def test_one_value_at_several_places_is_judged_at_each() -> None:
    """The validator and the read-back remember, by identity, a value found valid or
    unchanged (a witness's thousand items are one object); a value found otherwise is
    answered at every place it stands, beside a valid one shared the same way."""
    item = {"type": "object", "properties": {"n": INT}}
    schema = root({"items": {"type": "array", "items": item}})
    valid, refused = {"n": 1}, {"n": "one", "extra": 1}
    judgement = judge.Judge(schema, KUBE).judge(stored({"items": [valid, refused] * 2}))
    assert judgement.read_changes == (
        ("remove", "/spec/items/1/extra"),
        ("remove", "/spec/items/3/extra"),
    )
    assert [v.path for v in judgement.create.violations] == ["spec.items[1].n", "spec.items[3].n"]


def test_input_is_never_modified() -> None:
    value = stored({"legacy": "x", "o": None})
    before = repr(value)
    judge.Judge(root({}), KUBE).judge(value)
    assert repr(value) == before


def test_pattern_python_cannot_read_is_not_evaluated() -> None:
    """RE2 syntax Python's re refuses (Unicode classes) is reported, never taken as matched."""
    schema = root({"s": {**STR, "pattern": "^\\p{L}+$"}, "t": {**STR, "pattern": "^a"}})
    found = judge.Judge(schema, KUBE).judge(stored({"s": "abc", "t": "abc"}))
    assert [(n.path, n.rule) for n in found.create.not_evaluated] == [("spec.s", "^\\p{L}+$")]


@pytest.mark.parametrize(
    ("pattern", "value", "refused"),
    [
        ("^[[:alpha:]]+$", "abc", False),  # a POSIX class, as RE2 reads it
        ("^[[:alpha:]]+$", "ab1", True),
        ("^[a-z]+$", "abc", False),
        ("^[a-z]+$", "abc\n", True),  # RE2's $ is the end of the text, not of a line
    ],
)
def test_patterns_read_as_re2(pattern: str, value: str, refused: bool) -> None:
    schema = root({"s": {**STR, "pattern": pattern}})
    assert judge.Judge(schema, KUBE).judge(stored({"s": value})).create.refused is refused
