"""UG205 nullable-removed

What it flags: nullable: true removed from a value location.

Why it matters: the apiserver drops a null it may not keep, on read and on write, and applies
the default if there is one, so stored nulls silently vanish (or turn into the default) and
readers that relied on an explicit null see something else.

Allowed: nullable: true added.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    if old.get("nullable") is True and new.get("nullable") is not True:
        yield Change((), "nullable removed: stored nulls are dropped on read", True, False)


RULE = PropertyRule(
    code="UG205",
    name="nullable-removed",
    severity=Severity.ERROR,
    summary="nullable: true was removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"nullable"}),
    harm=Harm.CHANGED_ON_READ,
)
