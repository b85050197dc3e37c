"""Property-based checks of the engine over generated structural schemas.

- a CRD compared with itself gives no finding, whatever its schema;
- a change that only loosens a schema (drops a constraint, adds an enum value or an optional
  field, widens a bound, edits documentation) never gives an error;
- a property rule finds nothing where no keyword it handles differs (the engine skips it there);
- two schemas differ at the same locations whichever is taken as the old one (the engine walks
  a pair of served versions once for both directions).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crd_builders import compare, crd, flagged, version
from upgrade_guard import rules, schema
from upgrade_guard.findings import Severity
from upgrade_guard.rules.kinds import PropertyRule

NAMES = st.sampled_from(["a", "b", "c", "mode", "size", "items", "x-y", "n1"])


def scalar() -> st.SearchStrategy[dict[str, Any]]:
    strings = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "enum": st.lists(
                st.sampled_from(["A", "B", "C", "D"]), min_size=1, max_size=3, unique=True
            ),
            "maxLength": st.integers(1, 50),
            "minLength": st.integers(0, 5),
            "pattern": st.sampled_from(["^a", "^[a-z]+$"]),
            "format": st.sampled_from(["uuid", "date-time"]),
            "default": st.sampled_from(["A", "B"]),
            "nullable": st.just(True),
            "description": st.text(max_size=10),
            "x-kubernetes-validations": st.just([{"rule": "self.size() < 100"}]),
        },
    )
    integers = st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={
            "minimum": st.integers(-5, 5),
            "maximum": st.integers(6, 100),
            "exclusiveMaximum": st.booleans(),
            "multipleOf": st.sampled_from([1, 2, 4]),
        },
    )
    return st.one_of(
        strings,
        integers,
        st.just({"type": "boolean"}),
        st.just({"x-kubernetes-int-or-string": True}),
    )


def schemas() -> st.SearchStrategy[dict[str, Any]]:
    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        objects = st.dictionaries(NAMES, children, min_size=1, max_size=4).flatmap(
            lambda props: st.fixed_dictionaries(
                {"type": st.just("object"), "properties": st.just(props)},
                optional={
                    "required": st.lists(st.sampled_from(sorted(props)), unique=True, max_size=2),
                    "maxProperties": st.integers(4, 10),
                },
            )
        )
        arrays = st.fixed_dictionaries(
            {"type": st.just("array"), "items": children},
            optional={
                "maxItems": st.integers(1, 10),
                "x-kubernetes-list-type": st.sampled_from(["atomic", "set"]),
            },
        )
        maps = st.builds(lambda value: {"type": "object", "additionalProperties": value}, children)
        return st.one_of(objects, arrays, maps)

    return st.recursive(scalar(), extend, max_leaves=12)


def as_crd(spec: dict[str, Any]) -> dict[str, Any]:
    return crd(version(schema={"type": "object", "properties": {"spec": spec}}))


def nodes(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found, stack = [], [schema]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend((node.get("properties") or {}).values())
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                stack.append(node[key])
    return found


def loosen(node: dict[str, Any], how: int) -> None:
    """One change that accepts at least everything the old node accepted."""
    choices = [
        lambda: node.pop("enum", None),
        lambda: node["enum"].append("ZZ") if "enum" in node else None,
        lambda: node.pop("maxLength", None),
        lambda: node.update(minLength=0) if "minLength" in node else None,
        lambda: node.pop("pattern", None),
        lambda: node.pop("format", None),
        lambda: node.update(maximum=node["maximum"] + 1) if "maximum" in node else None,
        lambda: node.pop("minimum", None),
        lambda: node.pop("exclusiveMaximum", None),
        lambda: node.update(multipleOf=1) if "multipleOf" in node else None,
        lambda: node.pop("required", None),
        lambda: node["properties"].update(zz={"type": "string"}) if "properties" in node else None,
        lambda: node.update(nullable=True) if node.get("type") else None,
        lambda: node.update(description="edited"),
        lambda: node.pop("x-kubernetes-validations", None),
        lambda: node.update(type="number") if node.get("type") == "integer" else None,
        lambda: node.pop("maxItems", None),
        lambda: node.pop("maxProperties", None),
    ]
    choices[how % len(choices)]()


@settings(max_examples=150, deadline=None)
@given(schemas())
def test_a_crd_compared_with_itself_has_no_finding(spec: dict[str, Any]) -> None:
    assert flagged(as_crd(spec), as_crd(copy.deepcopy(spec))) == set()


@settings(max_examples=200, deadline=None)
@given(schemas(), st.data())
def test_loosening_never_gives_an_error(spec: dict[str, Any], data: st.DataObject) -> None:
    new = copy.deepcopy(spec)
    for _ in range(data.draw(st.integers(1, 5), label="changes")):
        targets = nodes(new)
        target = targets[data.draw(st.integers(0, len(targets) - 1), label="node")]
        loosen(target, data.draw(st.integers(0, 100), label="how"))
    errors = [
        f for f in compare(as_crd(spec), as_crd(new)).findings if f.severity is Severity.ERROR
    ]
    assert errors == []


PROPERTY_RULES = [rule for rule in rules.ALL_RULES if isinstance(rule, PropertyRule)]


@settings(max_examples=300, deadline=None)
@given(schemas(), schemas())
def test_a_property_rule_finds_nothing_where_no_keyword_it_handles_differs(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    for at in schema.paired_locations(old, new):
        differing = schema.differing_keywords(at.old, at.new)
        for rule in PROPERTY_RULES:
            if rule.handles.isdisjoint(differing):
                assert list(rule.compare(at)) == [], (rule.code, at.path)


@settings(max_examples=300, deadline=None)
@given(schemas(), schemas())
def test_two_schemas_differ_at_the_same_locations_either_way(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    forth = [at.swapped() for at in schema.paired_locations(first, second)]
    back = list(schema.paired_locations(second, first))
    assert sorted(forth) == sorted(back)


def _location_paths(
    first: dict[str, Any], second: dict[str, Any], known: tuple[Any, Any] | None = None
) -> list[schema.Path]:
    return sorted(at.path for at in schema.paired_locations(first, second, known))


def _object_with(spec: dict[str, Any], other: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": spec, "other": {"type": other}}}


SPEC_FIRST = {"type": "object", "properties": {"x": {"type": "string"}}}
SPEC_SECOND = {"type": "object", "properties": {"x": {"type": "integer"}}}
EVERY_LOCATION = [(), ("other",), ("spec",), ("spec", "x")]


@pytest.mark.parametrize(
    ("known", "paths"),
    [
        # the very objects on both sides: spec and below are skipped
        ((SPEC_FIRST, SPEC_SECOND), [(), ("other",)]),
        # equal copies, or the very object on one side only: nothing is skipped
        ((copy.deepcopy(SPEC_FIRST), copy.deepcopy(SPEC_SECOND)), EVERY_LOCATION),
        ((SPEC_FIRST, copy.deepcopy(SPEC_SECOND)), EVERY_LOCATION),
    ],
    ids=["same objects", "equal copies", "one side the same"],
)
def test_locations_the_known_pair_holds_itself_are_skipped(
    known: tuple[dict[str, Any], dict[str, Any]], paths: list[schema.Path]
) -> None:
    first, second = _object_with(SPEC_FIRST, "string"), _object_with(SPEC_SECOND, "integer")
    known_pair = (_object_with(known[0], "string"), _object_with(known[1], "boolean"))
    assert _location_paths(first, second) == EVERY_LOCATION
    assert _location_paths(first, second, known_pair) == paths
