"""UG401 role-permission-removed

What it flags: a permission (a verb on a resource, on every object or on named ones, or on a
non-resource URL) that one of the operator's ClusterRoles or Roles granted in the previous
release and no longer grants: a verb or a rule removed, resourceNames narrowed, a wildcard
replaced by a list, or the whole role dropped from the chart. `diff` compares the roles of
two rendered charts (`helm template` streams); the hook compares this release's roles with
those of the release Helm replaces, and each ClusterRole with the live one of the same name.
Permissions are matched as the apiserver's RBAC authorizer matches a request: `*` covers
every verb, group or resource, `*/status` every resource's status, no resourceNames every
name, so moving a verb into a wildcard removes nothing (`tests/cluster/test_role_truth.py`
asks kube-apiserver v1.35.4 each permission of every row of the rule's table).

Why it matters: what the role granted is a contract too (Hermes: "removing an RBAC verb from
the operator's ClusterRole will break GitOps workflows that pin the role"). Whoever pinned
the role, or bound it to their own subjects, loses the permission, and a controller of an
older release still running against the new role is refused. The default is a warning: a
narrower role is often the point of the release. Make it an error in the policy
(`rules: {UG401: error}`) where the role is a published contract; declare a break for a
removal you mean. A ClusterRole with an aggregationRule is not compared with the live one:
the controller-manager fills its rules.

Allowed: permissions added; rules reordered, split or merged; a verb or resource moved into
a wildcard that covers it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.manifests import Permission, Role, removed_permissions
from upgrade_guard.rules.kinds import RoleCheck, listed
from upgrade_guard.subjects import RoleSubject

LIVE = "the live ClusterRole"


def described(permissions: Iterable[Permission]) -> list[str]:
    """Permissions as a person reads them: the verbs on each resource (and names) together."""
    verbs: dict[str, list[str]] = {}
    for permission in permissions:
        target = str(permission).partition(" ")[2]
        verbs.setdefault(target, []).append(permission.verb)
    return [f"{', '.join(found)} {target}" for target, found in verbs.items()]


def _compared(old: Role, new: Role | None, against: str) -> Iterator[Change]:
    if new is None:
        granted = described(old.permissions())
        yield Change(
            None,
            f"{old.kind} {old.name} is no longer in this release; {against} has it, granting"
            f" {listed(granted)}",
            old=granted,
        )
        return
    if new.aggregated:
        return
    removed = described(removed_permissions(old, new))
    if removed:
        yield Change(
            None,
            f"{len(removed)} grant(s) of {against} removed: {listed(removed)}",
            old=removed,
        )


def check(subject: RoleSubject) -> Iterator[tuple[str, Change]]:
    for key, old in sorted(subject.before.items()):
        for change in _compared(old, subject.after.get(key), subject.before_label):
            yield key, change
    for key, live in sorted(subject.live.items()):
        released = subject.before.get(key)
        new = subject.after.get(key)
        if new is None or (
            released is not None and set(released.permissions()) == set(live.permissions())
        ):
            continue  # what the release comparison found already
        for change in _compared(live, new, LIVE):
            yield key, change


RULE = RoleCheck(
    code="UG401",
    name="role-permission-removed",
    severity=Severity.WARNING,
    summary="A ClusterRole or Role of the operator no longer grants a permission.",
    doc=__doc__ or "",
    check=check,
    way_out=(
        "nothing stored is at risk: grant the permission again where a pinned role or a"
        " binding of your own needs it, or accept it"
    ),
    author="keep the permission, or declare the removal as a break in the policy",
)
