"""UG207 enum-restricted

What it flags: an enum introduced on an existing field, or a value removed from its enum.

Why it matters: stored objects holding a value outside the new enum can no longer be created
as they are, and without validation ratcheting (before Kubernetes 1.30) any update of them
fails, even one that does not touch the field. The apiserver ratchets this check from 1.30:
unchanged values survive updates.

Allowed: a value added to the enum, or the enum removed; an enum moved from a branch of
allOf to the node itself (the values allowed are the same).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule


def compare(at: schema.Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before, after = _allowed(old), new.get("enum")
    if after is None:
        return
    if before is None:
        yield Change((), f"enum introduced: {schema.short(after)}", None, after, ratchetable=True)
        return
    removed = [
        value for value in before if not any(schema.same_value(value, kept) for kept in after)
    ]
    if removed:
        yield Change(
            (), f"enum values removed: {schema.short(removed)}", before, after, ratchetable=True
        )


def _allowed(node: schema.Node) -> list[Any] | None:
    """The values the node's enums allow: its own enum, less what an enum in a branch of its
    allOf leaves out (the apiserver checks every branch); None where no enum holds."""
    allowed = node.get("enum")
    for branch in node.get("allOf") or []:
        if isinstance(branch, dict) and isinstance(branch.get("enum"), list):
            if allowed is None:
                allowed = list(branch["enum"])
            else:
                allowed = [
                    v for v in allowed if any(schema.same_value(v, b) for b in branch["enum"])
                ]
    return allowed


RULE = PropertyRule(
    code="UG207",
    name="enum-restricted",
    severity=Severity.ERROR,
    summary="An enum was introduced or lost values.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"enum"}),
    harm=Harm.REFUSED_ON_WRITE,
)
