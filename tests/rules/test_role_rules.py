"""UG401 as a paired table: each removal beside the nearest change that removes nothing, with
permissions matched as the apiserver's RBAC authorizer matches them."""

from __future__ import annotations

from typing import Any

import pytest

from upgrade_guard import engine
from upgrade_guard.crd import Source
from upgrade_guard.judging import judge
from upgrade_guard.manifests import PolicyRule, Role
from upgrade_guard.policy import parse_policy
from upgrade_guard.rules import role_permission_removed
from upgrade_guard.subjects import RoleSubject

BASE = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}


def role(*rules: dict[str, Any], kind: str = "ClusterRole", aggregated: bool = False) -> Role:
    return Role(
        kind=kind,
        name="operator",
        namespace="ops" if kind == "Role" else "",
        rules=tuple(
            PolicyRule(
                verbs=tuple(r.get("verbs", ())),
                api_groups=tuple(r.get("apiGroups", ())),
                resources=tuple(r.get("resources", ())),
                resource_names=tuple(r.get("resourceNames", ())),
                non_resource_urls=tuple(r.get("nonResourceURLs", ())),
            )
            for r in rules
        ),
        aggregated=aggregated,
        source=Source("test"),
    )


def removed(old: Role, new: Role | None) -> list[str]:
    after = {} if new is None else {new.key: new}
    changes = list(role_permission_removed.check(RoleSubject(after, {old.key: old})))
    return [grant for _, change in changes for grant in change.old]


CASES = [
    # (old rules, new rules, grants removed)
    pytest.param([BASE], [{**BASE, "verbs": ["get"]}], ["list widgets.example.com"], id="verb"),
    pytest.param([BASE], [{**BASE, "verbs": ["list", "get", "watch"]}], [], id="verb added"),
    pytest.param([BASE], [{**BASE, "verbs": ["*"]}], [], id="verbs into *"),
    pytest.param(
        [{**BASE, "verbs": ["*"]}],
        [{**BASE, "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}],
        ["* widgets.example.com"],
        id="* into a list",
    ),
    pytest.param(
        [BASE, {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}],
        [BASE],
        ["create events"],
        id="rule",
    ),
    pytest.param(
        [BASE, {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}],
        [{"apiGroups": ["", "example.com"], "resources": ["events", "widgets"], "verbs": ["*"]}],
        [],
        id="rules merged",
    ),
    pytest.param(
        [{**BASE, "resources": ["widgets", "widgets/status"]}],
        [BASE],
        ["get, list widgets.example.com/status"],
        id="subresource",
    ),
    pytest.param(
        [{**BASE, "resources": ["widgets", "widgets/status"]}],
        [{**BASE, "resources": ["widgets", "*/status"]}],
        [],
        id="subresource into */status",
    ),
    pytest.param(
        [BASE],
        [{**BASE, "resourceNames": ["a"]}],
        ["get, list widgets.example.com"],
        id="names narrowed",
    ),
    pytest.param(
        [{**BASE, "resourceNames": ["a"]}],
        [BASE],
        [],
        id="names widened",
    ),
    pytest.param(
        [{**BASE, "resourceNames": ["a", "b"]}],
        [{**BASE, "resourceNames": ["b"]}],
        ["get, list widgets.example.com 'a'"],
        id="a name",
    ),
    pytest.param(
        [BASE],
        [{**BASE, "apiGroups": ["other.example.com"]}],
        ["get, list widgets.example.com"],
        id="group",
    ),
    pytest.param([BASE], [{**BASE, "apiGroups": ["*"]}], [], id="group into *"),
    pytest.param(
        [{"nonResourceURLs": ["/metrics", "/healthz"], "verbs": ["get"]}],
        [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        ["get /healthz"],
        id="url",
    ),
    pytest.param(
        [{"nonResourceURLs": ["/metrics", "/healthz"], "verbs": ["get"]}],
        [{"nonResourceURLs": ["/*"], "verbs": ["get"]}],
        [],
        id="url into a prefix",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_removed_permissions(
    old: list[dict[str, Any]], new: list[dict[str, Any]], expected: list[str]
) -> None:
    assert removed(role(*old), role(*new)) == expected


def test_a_dropped_role_removes_every_grant() -> None:
    assert removed(role(BASE), None) == ["get, list widgets.example.com"]


def test_a_role_kept_removes_nothing() -> None:
    assert removed(role(BASE), role(BASE)) == []


LIVE_PINNED = role({**BASE, "verbs": ["get", "list", "watch"]})


@pytest.mark.parametrize(
    ("live", "expected"),
    [
        pytest.param(LIVE_PINNED, [("the live ClusterRole", ["watch widgets.example.com"])]),
        pytest.param(role(BASE), [], id="live as released: reported once, by the release"),
    ],
)
def test_the_live_clusterrole_is_compared_too(
    live: Role, expected: list[tuple[str, list[str]]]
) -> None:
    subject = RoleSubject({"ClusterRole operator": role(BASE)}, {}, "OLD", {live.key: live})
    found = [
        (c.message.split(" removed")[0], c.old) for _, c in role_permission_removed.check(subject)
    ]
    assert [(f"1 grant(s) of {label}", grants) for label, grants in expected] == found


def test_an_aggregated_role_is_not_compared() -> None:
    assert removed(LIVE_PINNED, role(aggregated=True)) == []


@pytest.mark.parametrize(
    ("policy", "severity", "refuses"),
    [
        pytest.param({}, "warning", False, id="seed policy: a warning"),
        pytest.param(
            {"rules": {"UG401": "error"}}, "error", True, id="the policy makes it an error"
        ),
    ],
)
def test_severity_comes_from_the_policy(
    policy: dict[str, Any], severity: str, refuses: bool
) -> None:
    subject = RoleSubject({}, {"ClusterRole operator": role(BASE)})
    outcome = judge(engine.role_changes(subject), parse_policy(policy, "test"))
    assert [(f.code, f.crd, str(f.severity)) for f in outcome.findings] == [
        ("UG401", "ClusterRole operator", severity)
    ]
    assert outcome.safe is not refuses
