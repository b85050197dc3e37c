"""Witnesses, rule by rule: a change that has one beside the nearest change that has none.

Each row is (rule, old schema of spec, new schema of spec, path): the first of a pair must
yield a witness of the operation named (the old model accepts it, the new one refuses it or
reads it back changed at the path), the second none. Held to the real apiserver by the
replay suite; here, to the model.
"""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard.apiserver.witness import Builder, Target
from upgrade_guard.findings import Harm

S: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}


def obj(properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **more}


def built(code: str, old: dict[str, Any], new: dict[str, Any], path: tuple[str, ...],
          harm: Harm = Harm.BOTH, rule: str | None = None) -> Any:  # fmt: skip
    builder = Builder(obj({"spec": old}), obj({"spec": new}), (1, 35))
    target = Target("g.example.com", "K", "v1", ("spec", *path), code, None, rule, harm)
    return builder.witness(target)


W, R = Harm.REFUSED_ON_WRITE, Harm.CHANGED_ON_READ
PAIRS: list[
    tuple[str, Harm, dict[str, Any], dict[str, Any], dict[str, Any], tuple[str, ...], str]
] = [
    # rule, harm, old, new with a witness, nearest new without one, path, operation
    ("UG201", R, obj({"x": S}), obj({}), obj({"x": S}), ("x",), "read"),
    (
        "UG202",
        W,
        obj({"x": S}),
        obj({"x": S}, required=["x"]),
        obj({"x": {**S, "default": "d"}}, required=["x"]),
        ("x",),
        "create",
    ),
    (
        "UG202",
        W,
        obj({}),
        obj({"x": S}, required=["x"]),
        obj({"x": {**S, "default": "d"}}, required=["x"]),
        ("x",),
        "create",
    ),  # a field the old schema lacks, now required: absent from every stored object
    ("UG204", W, obj({"x": S}), obj({"x": INT}), obj({"x": S}), ("x",), "create"),
    (
        "UG219",
        R,
        obj({"x": {**S, "default": "a"}}),
        obj({"x": {**S, "default": "b"}}),
        obj({"x": {**S, "default": "a"}}),
        ("x",),
        "create",
    ),  # the old default is written into what is stored: the same CREATE stores another
    (
        "UG205",
        R,
        obj({"x": {**S, "nullable": True}}),
        obj({"x": S}),
        obj({"x": {**S, "nullable": True}}),
        ("x",),
        "read",
    ),
    (
        "UG207",
        W,
        obj({"x": {**S, "enum": ["a", "b"]}}),
        obj({"x": {**S, "enum": ["a"]}}),
        obj({"x": {**S, "enum": ["a", "b", "c"]}}),
        ("x",),
        "create",
    ),
    (
        "UG207",
        W,
        obj({"x": {**S, "allOf": [{"enum": ["a"]}]}}),
        obj({"x": {**S, "enum": ["b"]}}),
        obj({"x": {**S, "enum": ["a"]}}),
        ("x",),
        "create",
    ),
    (
        "UG208",
        W,
        obj({"x": {**INT, "maximum": 10}}),
        obj({"x": {**INT, "maximum": 5}}),
        obj({"x": {**INT, "maximum": 10}}),
        ("x",),
        "create",
    ),
    (
        "UG209",
        W,
        obj({"x": INT}),
        obj({"x": {**INT, "multipleOf": 2}}),
        obj({"x": INT}),
        ("x",),
        "create",
    ),
    (
        "UG210",
        W,
        obj({"x": S}),
        obj({"x": {**S, "format": "uuid"}}),
        obj({"x": {**S, "format": "int32"}}),
        ("x",),
        "create",
    ),
    (
        "UG211",
        W,
        obj({"x": {**S, "pattern": "^[a-z]+$"}}),
        obj({"x": {**S, "pattern": "^[a-c]+$"}}),
        obj({"x": {**S, "pattern": "^[a-z0-9]+$"}}),
        ("x",),
        "create",
    ),
    ("UG212", R, obj({"x": S}), obj({"x": {**S, "default": "d"}}), obj({"x": S}), ("x",), "read"),
    (
        "UG213",
        W,
        obj({"mode": S, "n": INT}),
        obj(
            {"mode": S, "n": INT},
            **{
                "x-kubernetes-validations": [
                    {"rule": "!(has(self.mode) && self.mode == 'DaemonSet' && has(self.n))"}
                ]
            },
        ),
        obj({"mode": S, "n": INT}),
        (),
        "create",
    ),
    (
        "UG214",
        W,
        obj({"l": {"type": "array", "items": S}}),
        obj({"l": {"type": "array", "items": S, "x-kubernetes-list-type": "set"}}),
        obj({"l": {"type": "array", "items": S, "x-kubernetes-list-type": "atomic"}}),
        ("l",),
        "create",
    ),
    (
        "UG216",
        R,
        obj({"p": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}),
        obj({"p": {"type": "object"}}),
        obj({"p": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}),
        ("p",),
        "read",
    ),
]


@pytest.mark.parametrize(("code", "harm", "old", "new", "nearest", "path", "operation"), PAIRS,
                         ids=[row[0] for row in PAIRS])  # fmt: skip
def test_a_change_with_a_witness_beside_the_nearest_without(
    code: str, harm: Harm, old: Any, new: Any, nearest: Any, path: Any, operation: str
) -> None:
    rule = new.get("x-kubernetes-validations", [{}])[0].get("rule")
    found = built(code, old, new, path, harm, rule)
    assert found is not None and found.operation == operation
    assert found.stored["metadata"] == {"name": "witness"}
    assert found.stored["apiVersion"] == "g.example.com/v1"
    assert built(code, old, nearest, path, harm, rule) is None


def test_a_refusal_names_the_path_and_the_apiserver_s_reason() -> None:
    found = built("UG207", obj({"x": {**S, "enum": ["a", "b"]}}),
                  obj({"x": {**S, "enum": ["a"]}}), ("x",), W)  # fmt: skip
    assert found is not None
    assert (found.stored["spec"], found.message) == ({"x": "b"}, "spec.x: Unsupported value")


def test_a_default_removed_the_same_create_stores_without_it() -> None:
    found = built("UG219", obj({"x": {**S, "default": "a"}}), obj({"x": S}), ("x",), R)
    assert found is not None and (found.operation, found.apiserver) == (
        "create",
        "reads back changed",
    )
    assert found.object is not None and found.read_back is not None
    assert (found.object["spec"], found.stored["spec"]) == ({}, {"x": "a"})
    assert (found.read_back["spec"], found.message) == ({}, "remove /spec/x")


def test_a_read_gives_what_a_get_returns_and_the_patch() -> None:
    found = built("UG201", obj({"x": S}), obj({}), ("x",), R)
    assert found is not None and found.apiserver == "reads back changed"
    assert found.message == "remove /spec/x"
    assert found.read_back is not None and found.read_back["spec"] == {}


def test_a_transition_rule_is_witnessed_by_an_update() -> None:
    rule = "self == oldSelf"
    new = obj({"x": {**S, "x-kubernetes-validations": [{"rule": rule}]}})
    found = built("UG213", obj({"x": S}), new, ("x",), W, rule)
    assert found is not None and found.operation == "update" and found.object is not None
    assert found.object["spec"]["x"] != found.stored["spec"]["x"]


def test_an_old_cel_rule_no_candidate_satisfies_leaves_it_unproven() -> None:
    unsatisfiable = obj({"x": S}, **{"x-kubernetes-validations": [{"rule": "self.x.size() == 23"}]})
    new = obj(
        {"x": {**S, "enum": ["a"]}},
        **{"x-kubernetes-validations": [{"rule": "self.x.size() == 23"}]},
    )
    assert built("UG207", unsatisfiable, new, ("x",), W) is None


def test_a_rule_s_harm_decides_the_operation() -> None:
    """A removed property is pruned on read; a refusal rule's witness is never a read."""
    assert built("UG201", obj({"x": S}), obj({}), ("x",), W) is None


def status_witness(code: str, old: dict[str, Any], new: dict[str, Any], harm: Harm,
                   subresource: bool = True) -> Any:  # fmt: skip
    target = Target("g.example.com", "K", "v1", ("status", "x"), code, harm=harm,
                    status_subresource=subresource)  # fmt: skip
    return Builder(obj({"status": old}), obj({"status": new}), (1, 35)).witness(target)


def test_without_the_status_subresource_status_is_created_like_spec() -> None:
    found = status_witness("UG207", obj({"x": {**S, "enum": ["a", "b"]}}),
                           obj({"x": {**S, "enum": ["a"]}}), W, subresource=False)  # fmt: skip
    assert found is not None and found.operation == "create"


STATUS_PAIRS = [
    # rule, harm, old, new with a witness, nearest new without one, apiserver
    ("UG207", W, obj({"x": {**S, "enum": ["a", "b"]}}), obj({"x": {**S, "enum": ["a"]}}),
     obj({"x": {**S, "enum": ["b", "a"]}}), "refuses"),
    ("UG204", W, obj({"x": S}), obj({"x": INT}), obj({"x": S}), "refuses"),
    ("UG205", R, obj({"x": {**S, "nullable": True}}), obj({"x": S}),
     obj({"x": {**S, "nullable": True}}), "reads back changed"),
    ("UG216", R, obj({"x": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}),
     obj({"x": {"type": "object"}}),
     obj({"x": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}),
     "reads back changed"),
]  # fmt: skip


@pytest.mark.parametrize(("code", "harm", "old", "new", "nearest", "apiserver"), STATUS_PAIRS,
                         ids=[row[0] for row in STATUS_PAIRS])  # fmt: skip
def test_under_the_status_subresource_a_status_write_witnesses(
    code: str, harm: Harm, old: Any, new: Any, nearest: Any, apiserver: str
) -> None:
    """A CREATE drops status: the minimal object is created without, then its status
    written through /status (the old CRD accepts it); the new CRD refuses that write, or
    reads back changed what it stored."""
    found = status_witness(code, old, new, harm)
    assert found is not None and (found.operation, found.apiserver) == ("status", apiserver)
    assert "status" not in found.stored and found.object is not None
    assert "x" in found.object["status"]
    if apiserver == "refuses":
        assert found.message.startswith("status.x: ") and found.read_back is None
    else:
        assert found.message.startswith("remove /status/x") and found.read_back is not None
        assert found.read_back["status"] != found.object["status"]
    assert status_witness(code, old, nearest, harm) is None


def test_a_one_of_many_object_holds_the_changed_field_alone() -> None:
    """external-secrets' provider: minProperties and maxProperties 1; the minimal object's
    first provider makes way for the one the change is in."""
    provider = {"type": "object", "minProperties": 1, "maxProperties": 1}
    old = obj({"provider": {**provider, "properties": {"a": obj({}), "fake": obj({"x": S})}}})
    new = obj({"provider": {**provider, "properties": {"a": obj({}), "fake": obj({})}}})
    found = built("UG201", old, new, ("provider", "fake", "x"), R)
    assert found is not None and found.stored["spec"] == {"provider": {"fake": {"x": "a"}}}


def test_the_fields_an_old_rule_tests_with_has_are_set() -> None:
    """upjet: ``... || has(self.forProvider.name)``, a required parameter in a CEL rule."""
    rule = {"rule": "has(self.forProvider.name) || has(self.initProvider)"}
    old = obj({"forProvider": obj({"name": S, "x": S})}, **{"x-kubernetes-validations": [rule]})
    new = obj({"forProvider": obj({"name": S})}, **{"x-kubernetes-validations": [rule]})
    found = built("UG201", old, new, ("forProvider", "x"), R)
    assert found is not None and found.stored["spec"]["forProvider"]["name"] == "a"


@pytest.mark.parametrize(("field", "name", "witnessed"), [
    ("namespace", "__namespace__", True),  # a CEL reserved word, escaped
    ("namespace", "namespace", False),  # no such CEL name: the rule cannot hold
])  # fmt: skip
def test_a_field_an_old_rule_tests_by_its_escaped_name_is_set(
    field: str, name: str, witnessed: bool
) -> None:
    """upjet: ``has(self.forProvider.__namespace__)`` tests the property ``namespace``."""
    rule = {"rule": f"has(self.forProvider.{name})"}
    old = obj({"forProvider": obj({field: S, "x": S})}, **{"x-kubernetes-validations": [rule]})
    new = obj({"forProvider": obj({field: S})}, **{"x-kubernetes-validations": [rule]})
    found = built("UG201", old, new, ("forProvider", "x"), R)
    assert (found is not None) is witnessed
    if found is not None:
        assert found.stored["spec"]["forProvider"][field] == "a"


def test_a_map_key_a_rule_quotes() -> None:
    rule = "self.all(key, !key.contains('*'))"
    labels = {"type": "object", "additionalProperties": S}
    new = obj({"labels": {**labels, "x-kubernetes-validations": [{"rule": rule}]}})
    found = built("UG213", obj({"labels": labels}), new, ("labels",), W, rule)
    assert found is not None and found.stored["spec"] == {"labels": {"*": "a"}}


def test_a_map_value_s_path_is_printed_as_the_apiserver_prints_it() -> None:
    """kube-openapi names a map key as a field (``spec.labels.a``, replayed on kube-apiserver
    v1.35.4); a CEL rule's field error puts it in brackets (``spec.labels[a]``)."""
    old = obj({"labels": {"type": "object", "additionalProperties": {**S, "enum": ["a", "b"]}}})
    new = obj({"labels": {"type": "object", "additionalProperties": {**S, "enum": ["a"]}}})
    found = built("UG207", old, new, ("labels", "*"), W)
    assert found is not None and found.message == "spec.labels.a: Unsupported value"
    rule = "self != 'b'"
    ruled = obj({"labels": {"type": "object", "additionalProperties": {
        **S, "x-kubernetes-validations": [{"rule": rule}]}}})  # fmt: skip
    found = built("UG213", obj({"labels": {"type": "object", "additionalProperties": S}}), ruled,
                  ("labels", "*"), W, rule)  # fmt: skip
    assert found is not None and found.message == "spec.labels[a]: Invalid value"


ONE_OF = obj({"a": S, "b": S}, oneOf=[{"required": ["a"]}, {"required": ["b"]}])


def test_a_combinator_s_refusal_is_worded_as_the_apiserver_words_it() -> None:
    """No field error of its own: the path quoted, within what was validated (the object, or
    the status of a /status write), as replayed on kube-apiserver v1.35.4."""
    found = built("UG218", obj({"o": obj({"a": S, "b": S})}), obj({"o": ONE_OF}), ("o",), W)
    assert found is not None
    assert found.message == '"spec.o" must validate one and only one schema (oneOf)'
    target = Target("g.example.com", "K", "v1", ("status", "o"), "UG218", harm=W,
                    status_subresource=True)  # fmt: skip
    builder = Builder(obj({"status": obj({"o": obj({"a": S, "b": S})})}),
                      obj({"status": obj({"o": ONE_OF})}), (1, 35))  # fmt: skip
    found = builder.witness(target)
    assert found is not None and found.operation == "status"
    assert found.message == '"o" must validate one and only one schema (oneOf)'


@pytest.mark.parametrize(
    ("rule", "witnessed"), [("self.size() == 0", True), ("self.size() >= 0", False)]
)
def test_a_field_the_new_schema_requires_elsewhere_is_set(rule: str, witnessed: bool) -> None:
    """istio's targetRef: kind and name newly required beside namespace's new rule; a
    required field missing keeps CEL rules from running, so it is set to try the rule."""
    old = obj({"ref": obj({"namespace": S, "kind": S})})
    checked = {**S, "x-kubernetes-validations": [{"rule": rule}]}
    new = obj({"ref": obj({"namespace": checked, "kind": S}, required=["kind"])})
    found = built("UG213", old, new, ("ref", "namespace"), W, rule)
    assert (found is not None) is witnessed
    if found is not None:
        assert found.stored["spec"]["ref"] == {"namespace": "a", "kind": "a"}
        assert found.message == "spec.ref.namespace: Invalid value"


@pytest.mark.parametrize(
    ("banned", "witnessed"), [(["any", "all"], True), (["any", "none"], False)]
)
def test_a_not_added_is_tried_with_the_fields_it_bans_together(
    banned: list[str], witnessed: bool
) -> None:
    """kyverno's exclude: ``not: {required: [any, all]}``; a field the old schema lacks
    ("none") is never stored, so nothing the old schema stores is refused."""
    old = obj({"ex": obj({"any": {"type": "array"}, "all": {"type": "array"}})})
    new = obj({"ex": obj({"any": {"type": "array"}, "all": {"type": "array"}},
                         **{"not": {"required": banned}})})  # fmt: skip
    found = built("UG218", old, new, ("ex",), W)
    assert (found is not None) is witnessed
    if found is not None:
        assert found.stored["spec"]["ex"] == {"any": [], "all": []}
        assert found.message == '"spec.ex" must not validate the schema (not)'


@pytest.mark.parametrize(("storage", "witnessed"), [(obj({"x": S, "y": S}), True),
                                                    (obj({"x": S}), False)])  # fmt: skip
def test_a_write_at_another_version_is_stored_as_the_storage_version(
    storage: dict[str, Any], witnessed: bool
) -> None:
    """A write at v2 is stored as v1 (conversion None) and pruned by v1's schema too: where
    v1 lacks y, no object stored through v2 holds it (replayed: provider-upjet-aws
    directoryconfigs, written at v1beta2, stored as v1beta1)."""
    old, new = obj({"spec": obj({"x": S, "y": S})}), obj({"spec": obj({"x": S})})
    builder = Builder(old, new, (1, 35), obj({"spec": storage}))
    found = builder.witness(Target("g.example.com", "K", "v2", ("spec", "y"), "UG201", harm=R))
    assert (found is not None) is witnessed
