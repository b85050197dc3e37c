"""UG205 nullable-removed

What it flags: nullable: true removed from a value location.

Why it matters: stored null values there are no longer accepted as null: the apiserver drops
a null it may not keep (applying the default, if any) or refuses the write, so readers that
relied on an explicit null see something else.

Allowed: nullable: true added.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule
from upgrade_guard.schema import Node


def compare(old: Node, new: Node) -> Iterator[Change]:
    if old.get("nullable") is True and new.get("nullable") is not True:
        yield Change((), "nullable removed: stored null values are no longer valid", True, False)


RULE = Rule(
    code="UG205",
    name="nullable-removed",
    severity=Severity.ERROR,
    scope=Scope.PROPERTY,
    summary="nullable: true was removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"nullable"}),
)
