"""UG210 format-changed

What it flags: a format added to a field or changed to another.

Why it matters: the apiserver validates string formats it knows (date-time, uuid, ipv4,
hostname, ...), so stored values that do not match can no longer be created as they are and
fail every update before Kubernetes 1.30 (ratcheted from 1.30).

Allowed: the format removed.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule
from upgrade_guard.schema import Node


def compare(old: Node, new: Node) -> Iterator[Change]:
    before, after = old.get("format"), new.get("format")
    if after is not None and before != after:
        yield Change(
            (), f"format changed: {before or 'none'} -> {after}", before, after, ratchetable=True
        )


RULE = Rule(
    code="UG210",
    name="format-changed",
    severity=Severity.ERROR,
    scope=Scope.PROPERTY,
    summary="A format was added or changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"format"}),
)
