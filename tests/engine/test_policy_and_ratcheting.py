"""How the policy and the cluster version turn rule results into severities, once for all rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from crd_builders import compare, crd, field_crd, flagged, obj, spec_schema, version
from upgrade_guard import rules
from upgrade_guard.findings import Severity
from upgrade_guard.policy import PolicyError, parse_policy

STR = {"type": "string"}
ENUM_LOST = (field_crd({**STR, "enum": ["a", "b"]}), field_crd({**STR, "enum": ["a"]}))
REQUIRED = (
    field_crd({"type": "object", "properties": {"a": STR}}),
    field_crd({"type": "object", "properties": {"a": STR}, "required": ["a"]}),
)
TRANSITION = (
    field_crd(STR),
    field_crd({**STR, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}),
)
CEL = (field_crd(STR), field_crd({**STR, "x-kubernetes-validations": [{"rule": "self != 'x'"}]}))
SPEC_RULE = {"x-kubernetes-validations": [{"rule": "!has(self.field) || self.field != 'x'"}]}
CEL_ON_SPEC = (
    crd(version(schema=spec_schema(field=STR))),
    crd(
        version(
            schema={
                "type": "object",
                "properties": {
                    "spec": {**spec_schema(field=STR)["properties"]["spec"], **SPEC_RULE}
                },
            }
        )
    ),
)
REQUIRED_IN_SPEC = (
    crd(version(schema=spec_schema(field=STR))),
    crd(
        version(
            schema={
                "type": "object",
                "properties": {"spec": {**obj(field=STR), "required": ["field"]}},
            }
        )
    ),
)

TOP_LEVEL_BOUND = tuple(
    crd(version(schema=obj(spec=obj(a=STR), data={"type": "object", **bound})))
    for bound in ({"additionalProperties": STR}, {"additionalProperties": STR, "maxProperties": 1})
)


def _required_where(deep: Any = None, **extra: Any) -> tuple[Any, Any]:
    """required added on spec.field, an object with the given keywords (and a property deep
    of the given schema)."""
    properties = {"a": STR} if deep is None else {"a": STR, "deep": deep}
    node = {"type": "object", "properties": properties, **extra}
    return field_crd(node), field_crd({**node, "required": ["a"]})


KEEPS = {"x-kubernetes-preserve-unknown-fields": True}
MAP_LIST_OF_KEPT = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["k"],
    "items": {"type": "object", "properties": {"k": STR}, "required": ["k"], **KEEPS},
}


def severity(pair: tuple[Any, Any], **kwargs: Any) -> Severity:
    (finding,) = compare(*pair, **kwargs).findings
    return finding.severity


@pytest.mark.parametrize(
    ("pair", "kube", "expected"),
    [
        pytest.param(
            ENUM_LOST, None, Severity.ERROR, id="enum, version unknown: no ratcheting assumed"
        ),
        pytest.param(
            ENUM_LOST, (1, 29), Severity.ERROR, id="enum, 1.29: ratcheting off by default"
        ),
        pytest.param(ENUM_LOST, (1, 30), Severity.WARNING, id="enum, 1.30: ratcheted, warning"),
        pytest.param(
            CEL, (1, 33), Severity.WARNING, id="CEL rule without oldSelf, 1.33: ratcheted"
        ),
        pytest.param(
            TRANSITION, (1, 33), Severity.ERROR, id="CEL transition rule: never ratcheted"
        ),
        pytest.param(REQUIRED, (1, 33), Severity.WARNING, id="required below spec: ratcheted"),
        pytest.param(REQUIRED, (1, 29), Severity.ERROR, id="required below spec, 1.29: error"),
        pytest.param(
            REQUIRED_IN_SPEC,
            (1, 33),
            Severity.ERROR,
            id="required on spec itself: every spec update changes spec, error",
        ),
        pytest.param(
            CEL_ON_SPEC,
            (1, 33),
            Severity.ERROR,
            id="CEL rule on spec itself: every spec update changes spec, error",
        ),
        pytest.param(
            TOP_LEVEL_BOUND,
            (1, 33),
            Severity.WARNING,
            id="bound on a sibling of spec: a spec update leaves it unchanged, ratcheted",
        ),
    ],
)
def test_ratcheting_by_cluster_version(pair: Any, kube: Any, expected: Severity) -> None:
    assert severity(pair, kube_version=kube) is expected


@pytest.mark.parametrize(
    ("pair", "expected"),
    [
        pytest.param(_required_where(), Severity.WARNING, id="declared fields only: ratcheted"),
        pytest.param(
            _required_where(**KEEPS), Severity.ERROR, id="keeps unknown fields: never unchanged"
        ),
        pytest.param(
            _required_where(additionalProperties=True),
            Severity.ERROR,
            id="additionalProperties true: its keys have no schema, never unchanged",
        ),
        pytest.param(
            _required_where(**{"x-kubernetes-embedded-resource": True}),
            Severity.ERROR,
            id="embedded resource: its metadata fields have no schema, never unchanged",
        ),
        pytest.param(
            _required_where(deep={"type": "object", "properties": {"x": STR}, **KEEPS}),
            Severity.ERROR,
            id="unknown fields kept deeper: never unchanged",
        ),
        pytest.param(
            _required_where(
                deep={"type": "array", "items": {"type": "object", **KEEPS}},
            ),
            Severity.WARNING,
            id="unknown fields in items of an atomic list: the list compares whole, ratcheted",
        ),
        pytest.param(
            _required_where(deep=MAP_LIST_OF_KEPT),
            Severity.ERROR,
            id="unknown fields in items of a map list: items pair by key, never unchanged",
        ),
    ],
)
def test_ratcheting_needs_every_field_paired(pair: Any, expected: Severity) -> None:
    """The apiserver pairs old and new values field by field through the schema; a field no
    schema declares does not pair, so its object never counts as unchanged."""
    assert severity(pair, kube_version=(1, 35)) is expected


def _without_status(pair: tuple[Any, Any]) -> tuple[Any, Any]:
    for side in pair:
        for entry in side["spec"]["versions"]:
            entry.pop("subresources", None)
    return pair


def _status_bound() -> tuple[Any, Any]:
    status = ({"type": "integer"}, {"type": "integer", "maximum": 5})
    return tuple(crd(version(schema=obj(spec=obj(a=STR), status=obj(n=n)))) for n in status)


def _spec_bound() -> tuple[Any, Any]:
    spec = ({"type": "integer"}, {"type": "integer", "maximum": 5})
    return tuple(crd(version(schema=obj(spec=obj(n=n), status=obj(a=STR)))) for n in spec)


@pytest.mark.parametrize(
    ("pair", "kube", "expected"),
    [
        pytest.param(CEL, (1, 32), Severity.ERROR, id="CEL rule, 1.32: a /status write runs it"),
        pytest.param(CEL, (1, 33), Severity.WARNING, id="CEL rule, 1.33: /status ratcheted"),
        pytest.param(
            _without_status(copy.deepcopy(CEL)),
            (1, 32),
            Severity.WARNING,
            id="CEL rule, 1.32, no status subresource: updates only, ratcheted",
        ),
        pytest.param(
            _status_bound(), (1, 32), Severity.ERROR, id="bound under status, 1.32: not ratcheted"
        ),
        pytest.param(_status_bound(), (1, 33), Severity.WARNING, id="under status, 1.33"),
        pytest.param(
            _spec_bound(),
            (1, 32),
            Severity.WARNING,
            id="bound under spec, 1.32: a /status write does not check spec's schema",
        ),
    ],
)
def test_status_writes_are_not_ratcheted_before_1_33(
    pair: Any, kube: Any, expected: Severity
) -> None:
    """apiextensions status_strategy.go before kubernetes#129506 (1.33): a /status write
    validates status against its schema and runs every CEL rule of the object, unratcheted."""
    (finding,) = compare(*pair, kube_version=kube).findings
    assert finding.severity is expected
    if expected is Severity.ERROR:
        assert any(
            note.startswith("not ratcheted on a /status write on Kubernetes 1.32")
            and "kubernetes#129506" in note
            for note in finding.notes
        ), finding.notes


def test_ratcheted_finding_says_why() -> None:
    (finding,) = compare(*ENUM_LOST, kube_version=(1, 31)).findings
    assert any("ratcheted on Kubernetes 1.31" in note for note in finding.notes)


def test_strict_profile_ignores_ratcheting_and_refuses_warnings() -> None:
    strict = parse_policy({"profile": "strict"}, "policy.yaml")
    assert severity(ENUM_LOST, kube_version=(1, 31), policy=strict) is Severity.ERROR
    assert not compare(*ENUM_LOST, kube_version=(1, 31), policy=strict).safe


@pytest.mark.parametrize("rule", rules.ALL_RULES, ids=lambda rule: rule.code)
def test_policy_overrides_apply_to_every_rule_by_code_and_by_name(rule: rules.Rule) -> None:
    for key in (rule.code, rule.name, rule.code.lower()):
        policy = parse_policy({"rules": {key: "warning"}}, "policy.yaml")
        assert policy.severity_of(rule.code, rule.severity) is Severity.WARNING
    ignored = parse_policy({"rules": {rule.code: "ignore"}}, "policy.yaml")
    assert ignored.severity_of(rule.code, rule.severity) is None


def test_ignored_rule_drops_its_findings_and_a_warning_does_not_refuse() -> None:
    assert flagged(*ENUM_LOST, policy=parse_policy({"rules": {"UG207": "ignore"}}, "p")) == set()
    outcome = compare(
        *ENUM_LOST, policy=parse_policy({"rules": {"enum-restricted": "warning"}}, "p")
    )
    assert outcome.safe and outcome.findings[0].severity is Severity.WARNING


BREAK = {
    "crd": "widgets.example.com",
    "rule": "UG207",
    "path": "spec.field",
    "reason": "b was never used",
}


def test_declared_break_excuses_its_finding_and_keeps_it_in_the_report() -> None:
    outcome = compare(*ENUM_LOST, policy=parse_policy({"declared-breaks": [BREAK]}, "p"))
    (finding,) = outcome.findings
    assert outcome.safe and finding.excused == "b was never used"


@pytest.mark.parametrize(
    "declared",
    [
        pytest.param({**BREAK, "path": "spec.other"}, id="other path"),
        pytest.param({**BREAK, "rule": "UG208"}, id="other rule"),
        pytest.param({**BREAK, "version": "v2"}, id="other version"),
        pytest.param({**BREAK, "crd": "gadgets.example.com"}, id="other CRD"),
    ],
)
def test_declared_break_that_matches_nothing_is_itself_refused(declared: dict[str, str]) -> None:
    outcome = compare(*ENUM_LOST, policy=parse_policy({"declared-breaks": [declared]}, "p"))
    codes = {f.code for f in outcome.findings if f.excused is None}
    assert codes == {"UG207", "UG902"} and not outcome.safe


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param([], "must be a mapping", id="not a mapping"),
        pytest.param({"rulez": {}}, "unknown key 'rulez'", id="unknown key"),
        pytest.param({"rules": {"UG999": "error"}}, "unknown rule 'UG999'", id="unknown rule"),
        pytest.param(
            {"rules": {"UG207": "fatal"}}, "rules.UG207: must be one of", id="bad severity"
        ),
        pytest.param({"rules": ["UG207"]}, "rules: must be a mapping", id="rules as a list"),
        pytest.param({"profile": "paranoid"}, "profile: must be one of default", id="bad profile"),
        pytest.param(
            {"declared-breaks": [{"crd": "x", "rule": "UG201"}]},
            "declared-breaks[0]: reason is required",
            id="break without reason",
        ),
        pytest.param(
            {"declared-breaks": [{**BREAK, "scope": "x"}]},
            "unknown key 'scope'",
            id="break with unknown key",
        ),
    ],
)
def test_bad_policy_is_a_clear_error(raw: Any, message: str) -> None:
    with pytest.raises(PolicyError, match=None) as caught:
        parse_policy(raw, "policy.yaml")
    assert str(caught.value).startswith("policy.yaml: ") and message in str(caught.value)
