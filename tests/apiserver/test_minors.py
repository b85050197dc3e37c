"""The apiserver model at each minor of its range: the same CRD accepted at one minor and
refused at another (k8s.io/apiserver ``pkg/cel/environment/base.go``: each library's
IntroducedVersion; apiextensions ``validation.go``: new rules compile at the server's
compatibility version, the minor before its own, rules the replaced CRD held at its own)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from crd_builders import compare, field_crd
from upgrade_guard.apiserver import crd_validation, formats, minors
from upgrade_guard.crd import Crd, Source
from upgrade_guard.load.crds import check_at
from upgrade_guard.load.documents import LoadError

PLAIN = {"rule": "self.size() < 64"}
SEMVER = {"rule": "isSemver(self)"}
SEMVER_MESSAGE = {
    "rule": "self.size() < 64",
    "messageExpression": "'bad: ' + string(isSemver(self))",
}
TWO_VARIABLE = {"rule": "self.all(k, v, v.size() < 8)"}
TRANSFORM = {"rule": "self.transformMap(k, v, v).size() < 8"}
SORTED = {"rule": "self.sort() == self"}


def _string(*rules: dict[str, Any]) -> dict[str, Any]:
    return field_crd({"type": "string", "maxLength": 64, "x-kubernetes-validations": list(rules)})


def _map(*rules: dict[str, Any]) -> dict[str, Any]:
    node = {
        "type": "object",
        "maxProperties": 8,
        "additionalProperties": {"type": "string", "maxLength": 8},
        "x-kubernetes-validations": list(rules),
    }
    return field_crd(node)


def _list(*rules: dict[str, Any]) -> dict[str, Any]:
    node = {
        "type": "array",
        "maxItems": 8,
        "items": {"type": "integer"},
        "x-kubernetes-validations": list(rules),
    }
    return field_crd(node)


def _refused(new: dict[str, Any], old: dict[str, Any] | None, minor: minors.Minor) -> str | None:
    try:
        crd_validation.check_at(new, old, minor)
    except crd_validation.CrdInvalid as invalid:
        return f"{invalid.where}: {invalid.problem}"
    return None


# Each row: the new CRD, the one it replaces (None: created), the minor that refuses it and
# the next, which accepts it.
PAIRS = [
    pytest.param(_string(SEMVER), _string(PLAIN), (1, 33), id="new semver rule: from 1.34"),
    pytest.param(_string(SEMVER), None, (1, 33), id="created with a semver rule: from 1.34"),
    pytest.param(_string(SEMVER), _string(SEMVER), (1, 32), id="semver rule held: from 1.33"),
    pytest.param(
        _string(SEMVER_MESSAGE), _string(PLAIN), (1, 33), id="new semver messageExpression"
    ),
    pytest.param(
        _string(SEMVER_MESSAGE),
        _string({"rule": "self.size() < 64", "messageExpression": "'old'"}),
        (1, 33),
        id="rule held, its messageExpression new: the message compiles as new",
    ),
    pytest.param(
        _string(SEMVER_MESSAGE),
        _string({"rule": "self != ''", "messageExpression": SEMVER_MESSAGE["messageExpression"]}),
        (1, 32),
        id="messageExpression held beside a new rule: from 1.33",
    ),
    pytest.param(_map(TWO_VARIABLE), _map(), (1, 32), id="two-variable all: from 1.33"),
    pytest.param(_map(TRANSFORM), None, (1, 32), id="transformMap: from 1.33"),
    pytest.param(_list(SORTED), _list(), (1, 34), id="lists extension: from 1.35"),
    pytest.param(_list(SORTED), _list(SORTED), (1, 33), id="lists extension held: from 1.34"),
]


@pytest.mark.parametrize(("new", "old", "refusing"), PAIRS)
def test_a_library_arrives_at_its_minor(
    new: dict[str, Any], old: dict[str, Any] | None, refusing: minors.Minor
) -> None:
    accepting = (refusing[0], refusing[1] + 1)
    assert _refused(new, old, refusing) is not None
    assert _refused(new, old, accepting) is None
    assert _refused(new, old, minors.OLDEST) is not None
    assert _refused(new, old, minors.NEWEST) is None


def test_the_refusal_names_the_rule_the_minor_and_when_the_library_arrives() -> None:
    problem = _refused(_string(SEMVER), _string(PLAIN), (1, 32))
    assert problem is not None
    assert problem.startswith(
        "spec.field (x-kubernetes-validations[0].rule): Kubernetes 1.32 does not know isSemver:"
        " the semver library arrives in new CEL rules at 1.34, in rules the CRD held already"
        " at 1.33; Invalid value: "
    )
    assert "undeclared reference to 'isSemver'" in problem


def test_load_error_names_the_file_crd_and_version() -> None:
    new = {"widgets.example.com": Crd(_string(SEMVER), Source("new.yaml", 0))}
    old = {"widgets.example.com": Crd(_string(PLAIN), Source("old.yaml", 0))}
    with pytest.raises(LoadError) as raised:
        check_at(new, old, (1, 32))
    assert str(raised.value).startswith(
        "new.yaml (document 1): CRD widgets.example.com version v1: the apiserver of"
        " Kubernetes 1.32 refuses this CRD: spec.field (x-kubernetes-validations[0].rule):"
        " Kubernetes 1.32 does not know isSemver"
    )
    check_at(new, old, (1, 34))


def test_rules_without_late_libraries_are_not_compiled_again() -> None:
    assert _refused(_string(PLAIN, {"rule": "self.nosuch > 0"}), None, minors.OLDEST) is None


@pytest.mark.parametrize(
    ("given", "judged", "noted"),
    [
        ((1, 30), (1, 32), "Kubernetes 1.30 is older than the oldest minor"),
        ((1, 32), (1, 32), None),
        ((1, 35), (1, 35), None),
        ((1, 36), (1, 35), "Kubernetes 1.36 is newer than the newest minor"),
    ],
)
def test_a_minor_outside_the_range_is_judged_as_the_nearest(
    given: minors.Minor, judged: minors.Minor, noted: str | None
) -> None:
    minor, note = minors.judged_as(given)
    assert minor == judged
    assert (note or "").startswith(noted or "")
    assert (note is None) is (noted is None)


@pytest.mark.parametrize(
    ("minor", "enforced"), [((1, 33), False), ((1, 34), False), ((1, 35), True)]
)
def test_kubernetes_name_formats_hold_from_the_compatibility_version_1_34(
    minor: minors.Minor, enforced: bool
) -> None:
    check = formats.checker("k8s-short-name", minor)
    assert (check is not None) is enforced
    if check is not None:
        assert not check("Not-Short")


@pytest.mark.parametrize(("minor", "flagged"), [((1, 34), False), ((1, 35), True)])
def test_a_kubernetes_name_format_added_is_flagged_from_1_35(
    minor: minors.Minor, flagged: bool
) -> None:
    old = field_crd({"type": "string", "maxLength": 63})
    new = field_crd({"type": "string", "maxLength": 63, "format": "k8s-short-name"})
    codes = [finding.code for finding in compare(old, new, kube_version=minor).findings]
    assert ("UG210" in codes) is flagged


@pytest.mark.parametrize(
    "rule",
    [SEMVER, SEMVER_MESSAGE, TWO_VARIABLE, TRANSFORM, SORTED, {"rule": "self.all(k,\n v, v)"}],
    ids=lambda rule: str(rule),
)
def test_a_file_holding_a_rule_that_uses_a_late_library_is_found_however_written(
    rule: dict[str, Any],
) -> None:
    body = _string(rule)
    assert minors.missing(str(rule.get("messageExpression") or rule["rule"]), (1, 31))
    assert minors.mentions(json.dumps(body).encode())
    assert minors.mentions(yaml.safe_dump(body).encode())


def test_prose_and_one_variable_macros_are_not_taken_for_a_late_library() -> None:
    text = "all of them (a, b, c) sort the list; self.all(x, x > 0) && self.exists(y, y == 1)"
    assert not minors.mentions(text.encode())
