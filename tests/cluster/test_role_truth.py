"""UG401 held to the real kube-apiserver's RBAC authorizer: for every row of the paired table
(tests/rules/test_role_rules.py), the new rules are bound to a user as a ClusterRole, and
each permission the old rules grant is asked of the apiserver (a SubjectAccessReview, the
question `kubectl auth can-i` asks). A permission UG401 reports removed must be refused,
and every other one allowed: the rule's idea of "covered" is the authorizer's."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from rules.test_role_rules import CASES, role
from testenv import Cluster, wait_for
from upgrade_guard.manifests import Permission, removed_permissions

RBAC = "/apis/rbac.authorization.k8s.io/v1"
REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


def allowed(cluster: Cluster, user: str, wanted: Permission) -> bool:
    spec: dict[str, Any] = {"user": user}
    if wanted.url:
        spec["nonResourceAttributes"] = {"path": wanted.url, "verb": wanted.verb}
    else:
        resource, _, subresource = wanted.resource.partition("/")
        spec["resourceAttributes"] = {
            "verb": wanted.verb, "group": wanted.group, "resource": resource,
            "subresource": subresource, "name": wanted.name or "",
        }  # fmt: skip
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
    return bool(cluster.admin.create(REVIEWS, review)["status"].get("allowed"))


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_removed_is_what_the_authorizer_refuses(
    cluster: Cluster, old: list[dict[str, Any]], new: list[dict[str, Any]], expected: list[str]
) -> None:
    name = f"role-truth-{secrets.token_hex(4)}"
    user = f"user-{name}"
    cluster.admin.create(f"{RBAC}/clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name}, "rules": new,
    })  # fmt: skip
    cluster.admin.create(f"{RBAC}/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    })  # fmt: skip
    # The authorizer reads RBAC from its informers: wait until the binding is seen.
    granted = role(*new).permissions()[0]
    wait_for(lambda: allowed(cluster, user, granted), timeout=30, what="the binding in effect")
    before = role(*old)
    removed = set(removed_permissions(before, role(*new)))
    refused = {p for p in before.permissions() if not allowed(cluster, user, p)}
    assert refused == removed
    assert bool(removed) == bool(expected)
