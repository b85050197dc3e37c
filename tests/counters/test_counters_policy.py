"""The policy keys the counters add: schema-version on breaks, restarts, counters, prefix."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard.policy import Counter, PolicyError, canonical_number, parse_policy

DIGEST = "sha256:" + "0" * 64
BREAK = {"crd": "w.example.com", "rule": "UG201", "path": "spec.a", "reason": "unused"}


def test_the_counter_keys_parse() -> None:
    policy = parse_policy(
        {
            "annotation-prefix": "ops.example.com/",
            "declared-breaks": [{**BREAK, "schema-version": 4}],
            "restarts": [
                {"schema-version": "5", "digests": {"w.example.com": DIGEST}, "reason": "r"}
            ],
            "counters": [
                {"name": "controller-state-version", "rule": "monotonic"},
                {
                    "name": "admission",
                    "rule": "equal-when-unchanged",
                    "files": ["webhooks/**"],
                    "annotation": "other.io/admission",
                },
            ],
        },
        "policy.yaml",
    )
    assert policy.declared_breaks[0].schema_version == 4
    assert policy.restarts[0].schema_version == 5
    assert policy.annotation("crd-schema-version") == "ops.example.com/crd-schema-version"
    assert policy.annotation("admission") == "other.io/admission"
    assert policy.counters[0] == Counter(
        "controller-state-version", "monotonic", "ops.example.com/controller-state-version"
    )


def test_defaults() -> None:
    policy = parse_policy({}, "p")
    assert policy.annotation("crd-schema-digest") == "upgrade-guard.io/crd-schema-digest"
    assert policy.restarts == () and policy.counters == ()


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"declared-breaks": [{**BREAK, "schema-version": "04"}]}, "canonical"),
        ({"declared-breaks": [{**BREAK, "schema-version": 0}]}, "canonical"),
        ({"declared-breaks": [{**BREAK, "schema-version": True}]}, "canonical"),
        ({"restarts": [{"digests": {"a": DIGEST}, "reason": "r"}]}, "schema-version"),
        ({"restarts": [{"schema-version": 1, "digests": {"a": "sha1:x"}, "reason": "r"}]}, "hex"),
        ({"restarts": [{"schema-version": 1, "digests": {}, "reason": "r"}]}, "digests"),
        ({"restarts": [{"schema-version": 1, "digests": {"a": DIGEST}}]}, "reason"),
        ({"counters": [{"name": "s", "rule": "sometimes"}]}, "monotonic"),
        ({"counters": [{"name": "s", "rule": "equal-when-unchanged"}]}, "files"),
        ({"counters": [{"name": "s", "rule": "monotonic", "files": ["x"]}]}, "files"),
        ({"counters": [{"name": "crd-schema-version", "rule": "monotonic"}]}, "cannot name"),
        ({"counters": [{"name": "a b", "rule": "monotonic"}]}, "counter name"),
        ({"counters": [{"name": "s", "rule": "monotonic"}] * 2}, "twice"),
        ({"counters": [{"name": "s", "rule": "monotonic", "extra": 1}]}, "unknown key"),
        ({"annotation-prefix": "Upgrade_Guard/"}, "annotation-prefix"),
        ({"annotation-prefix": "upgrade-guard.io"}, "annotation-prefix"),
    ],
)
def test_bad_counter_keys_name_the_entry(raw: dict[str, Any], words: str) -> None:
    with pytest.raises(PolicyError, match=words) as raised:
        parse_policy(raw, "policy.yaml")
    assert str(raised.value).startswith("policy.yaml: ")


@pytest.mark.parametrize(
    ("value", "number"),
    [("1", 1), ("12", 12), (3, 3), ("0", None), ("01", None), ("+1", None), ("1.0", None)]
    + [(0, None), (-2, None), (True, None), (1.0, None), (None, None), ("", None)],
)
def test_canonical_number(value: Any, number: int | None) -> None:
    assert canonical_number(value) == number
