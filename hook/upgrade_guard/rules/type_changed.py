"""UG204 type-changed

What it flags: a value location whose type is declared or changed, other than integer to
number (every integer is a number) and a type dropped (any type accepted).

Why it matters: stored values of the old type no longer validate, so a CREATE with them fails
(updates that leave the value unchanged pass from Kubernetes 1.30), and a controller or client
decoding the field as the new type fails on every object stored with the old one. That second
harm is why this stays an error whatever the cluster version.

Allowed: integer widened to number; the type removed where the schema allows it.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Severity
from upgrade_guard.rules.base import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    before, after = old.get("type"), new.get("type")
    if before == after or after is None or (before, after) == ("integer", "number"):
        return
    if before is None and old.get("x-kubernetes-int-or-string") is True:
        return  # int-or-string-removed explains this change
    yield Change((), f"type changed from {before or 'any'} to {after}", before, after)


RULE = PropertyRule(
    code="UG204",
    name="type-changed",
    severity=Severity.ERROR,
    summary="A field's type changed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"type"}),
    covers_subtree=True,
)
