"""UG206 int-or-string-removed

What it flags: x-kubernetes-int-or-string: true removed from a value location.

Why it matters: stored values of whichever of the two types the new schema no longer accepts
fail validation (a port stored as "http" under a new type: integer; updates that leave it
unchanged pass from Kubernetes 1.30), and a controller decoding the field as one type fails on
objects stored with the other, which is why this stays an error whatever the cluster version.

Allowed: x-kubernetes-int-or-string: true added.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule
from upgrade_guard.schema import Location


def compare(at: Location) -> Iterator[Change]:
    old, new = at.old, at.new
    if (
        old.get("x-kubernetes-int-or-string") is True
        and new.get("x-kubernetes-int-or-string") is not True
    ):
        yield Change(
            (),
            f"x-kubernetes-int-or-string removed (type now {new.get('type') or 'any'})",
            True,
            new.get("type"),
        )


RULE = PropertyRule(
    code="UG206",
    name="int-or-string-removed",
    severity=Severity.ERROR,
    summary="x-kubernetes-int-or-string was removed.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"x-kubernetes-int-or-string"}),
    harm=Harm.REFUSED_ON_WRITE,
)
