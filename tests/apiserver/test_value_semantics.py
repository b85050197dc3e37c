"""The apiserver's value semantics, one implementation for CRD defaults and stored objects
(issue 22 §2). Each row beside its nearest neighbour with the other answer; every answer
here is what kube-apiserver v1.35.4 said (tests/cluster/test_crd_validation_truth.py and
tests/validation_rows.py hold the same values against it)."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard import schema
from upgrade_guard.apiserver import correlation, regexes, values
from upgrade_guard.apiserver.crd_validation import default_problem


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^abc$", "abc\n", False),  # RE2's $ is the end of the text
        ("^abc$", "abc", True),
        ("^a\\z", "a\n", False),
        ("(?m)^a$", "a\n", True),  # with m, a line end
        ("^\\d$", "\u0663", False),  # ASCII classes
        ("^\\d$", "3", True),
        ("^[\\d]$", "\u0663", False),
        ("^\\s$", "\v", False),  # no vertical tab
        ("^\\s$", "\t", True),
        ("\\b\u00e9", "\u00e9", False),  # an ASCII word boundary
        ("^(?i)k$", "\u212a", True),  # Unicode case folding
        ("^[[:alpha:]]+$", "ab", True),
        ("^[[:alpha:]]+$", "\u00e9", False),
        ("^a{,3}$", "a{,3}", True),  # a brace that starts no repeat
        ("^a{,3}$", "aa", False),
        ("(a(?i)b)c", "aBc", True),  # a flag group holds to the end of its group
        ("(a(?i)b)c", "aBC", False),
        ("^\\Q.*\\E$", ".*", True),
        ("^\\Q.*\\E$", "ab", False),
    ],
)
def test_patterns_read_as_go_reads_them(pattern: str, text: str, matches: bool) -> None:
    compiled = regexes.compiled(pattern)
    assert compiled is not None
    assert bool(compiled.search(text)) is matches


@pytest.mark.parametrize("pattern", ["\\pL", "[[:^alpha:]]", "(?U)a*"])
def test_patterns_python_cannot_read_the_same_are_none(pattern: str) -> None:
    assert regexes.compiled(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "refused"),
    [("a*+", True), ("a+?", False), ("[*+]", False), ("a{2}+", True), ("a\\Z", True)],
)
def test_go_refuses_what_python_reads_otherwise(pattern: str, refused: bool) -> None:
    assert (regexes.problem(pattern) is not None) is refused


@pytest.mark.parametrize(
    ("value", "factor", "multiple"),
    [
        (0.3, 0.1, True),
        (0.35, 0.1, False),
        (0.30000000000000004, 0.1, True),
        (-0.30000000000000004, 0.1, False),
        (-0.5, 0.1, True),
        (3, 0.5, False),  # int64 against int64(0.5) == 0
        (3.0, 0.5, True),
        (4, 2.5, True),  # int64 against int64(2.5) == 2
        (5, 2.5, False),
        (9, 3, True),
        (10, 3, False),
        (1.5, 0, False),
        (1e16, 1, False),  # beyond 2^53
    ],
)
def test_multiple_of(value: float, factor: float, multiple: bool) -> None:
    assert values.is_multiple(value, factor) is multiple


@pytest.mark.parametrize(
    ("value", "bound", "exclusive", "above"),
    [
        (2, 2.5, True, True),
        (2.0, 2.5, True, False),
        (-1, -1.5, False, False),
        (2, 1.5, False, True),
    ],
)
def test_maximum_cuts_the_bound_for_integers(
    value: float, bound: float, exclusive: bool, above: bool
) -> None:
    assert values.above_maximum(value, bound, exclusive) is above


@pytest.mark.parametrize(
    ("value", "bound", "below"), [(1, 1.5, False), (1.0, 1.5, True), (-2, -1.5, True)]
)
def test_minimum_cuts_the_bound_for_integers(value: float, bound: float, below: bool) -> None:
    assert values.below_minimum(value, bound, False) is below


@pytest.mark.parametrize(
    ("value", "enum", "member"),
    [
        (1.5, [1], True),  # converted to the member's int64
        (2.5, [1], False),
        (1, [1.5], False),
        (1, [1.0], True),
        (97, ["a"], True),  # an int64 as a code point
        (98, ["a"], False),
        ({"a": 1.0}, [{"a": 1}], False),  # compound members by DeepEqual
        ({"a": 1}, [{"a": 1}], True),
        (True, [1], False),
        (None, [None], False),
    ],
)
def test_enum_membership(value: Any, enum: list[Any], member: bool) -> None:
    assert values.in_enum(value, enum) is member


@pytest.mark.parametrize(
    ("value", "integer"),
    [(3.0000000001, True), (2.9999999999, False), (-3.0, True), (-3.0000000001, False),
     (1e16, False), (0.5, False)],
)  # fmt: skip
def test_json_integers(value: float, integer: bool) -> None:
    assert values.is_json_integer(value) is integer


@pytest.mark.parametrize(
    ("a", "b", "deep_equal", "same_value"),
    [
        (1, 1.0, False, True),  # decoded: int64 and float64; sent by helm: both 1
        (1, 1, True, True),
        (True, 1, False, False),
        ({"a": 1, "b": [2]}, {"b": [2], "a": 1}, True, True),
        ({"a": [1.0]}, {"a": [1]}, False, True),
        (1.5, 1, False, False),
    ],
)
def test_equality(a: Any, b: Any, deep_equal: bool, same_value: bool) -> None:
    assert schema.deep_equal(a, b) is deep_equal
    assert schema.same_value(a, b) is same_value


STRING = {"type": "string"}
OBJECT_AB = {"type": "object", "properties": {"a": STRING, "b": STRING}}


@pytest.mark.parametrize(
    ("node", "default", "refused"),
    [
        ({"type": "string", "pattern": "^abc$"}, "abc\n", True),
        ({"type": "string", "pattern": "^abc$"}, "abc", False),
        ({"type": "number", "multipleOf": 0.1}, 0.3, False),
        ({"type": "number", "multipleOf": 0.1}, 0.35, True),
        ({"x-kubernetes-int-or-string": True}, True, False),  # a default's has no type
        ({"x-kubernetes-int-or-string": True, "format": "int32"}, 5, True),
        ({"type": "string", "format": "date"}, "x", True),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, {"b": "x"}, True),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": "x"}, False),
        ({"type": "object", "properties": {"a": STRING}, "required": ["a"]}, {}, True),
        ({"type": "object", "properties": {"a": STRING}, "required": ["a"]}, {"a": "x"}, False),
        ({"type": "object", "properties": {"a": {**STRING, "enum": ["y"]}}}, {"a": "x"}, True),
        ({**OBJECT_AB, "anyOf": [{"required": ["b"]}]}, {"a": "x"}, True),  # junctors too
        ({**OBJECT_AB, "anyOf": [{"required": ["b"]}]}, {"b": "x"}, False),
    ],
)
def test_defaults_are_checked_by_the_same_semantics(
    node: dict[str, Any], default: Any, refused: bool
) -> None:
    assert (default_problem(default, node) is not None) is refused


@pytest.mark.parametrize(
    ("a", "b", "one"),
    [({"a": 1.0}, {"a": 1}, True), ({"a": 1.5}, {"a": 1}, False), ([1e21], [10**21], False)],
)
def test_compound_values_compare_as_go_marshals_them(a: Any, b: Any, one: bool) -> None:
    assert (values.canonical(a) == values.canonical(b)) is one


@pytest.mark.parametrize(
    ("keys", "a", "b", "paired"),
    [
        (["k"], {"k": 1}, {"k": 1}, True),
        (["k"], {"k": 1}, {"k": 1.0}, False),  # one key: the Go value, int64 or float64
        (["k"], {}, {}, False),  # an item without its key pairs with nothing
        (["k"], {"k": {"x": 1}}, {"k": {"x": 1}}, False),  # nor one with a compound key
        (["k", "n"], {"k": "a", "n": 1.0000001}, {"k": "a", "n": 1.0000002}, True),  # %f
        (["k", "n"], {"k": "a", "n": 1}, {"k": "a", "n": 1.0}, False),  # %d against %f
    ],
)
def test_map_list_items_pair_by_the_apiservers_keys(
    keys: list[str], a: Any, b: Any, paired: bool
) -> None:
    key_a, key_b = correlation.map_list_key(a, keys), correlation.map_list_key(b, keys)
    assert (key_a is not None and key_a == key_b) is paired
