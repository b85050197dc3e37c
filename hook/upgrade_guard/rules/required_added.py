"""UG202 required-added

What it flags: a field that becomes required, or a new field that is required, with no
default, inside an object that exists on both sides.

Why it matters: stored objects without the field can no longer be created as they are, and
their updates fail: before Kubernetes 1.30 every update, from 1.30 (ratcheting) the updates
that change the object holding the required list. On spec or status themselves that is every
update of them: a field newly required in status blocks the operator's status writes
(grafana/grafana-operator#1621).

Allowed: the same field required with a default (required-added-with-default, info), or a
required field inside an object that is itself new.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Harm, Severity
from upgrade_guard.rules.kinds import PropertyRule


def compare(at: schema.Location) -> Iterator[Change]:
    old, new = at.old, at.new
    for name, has_default in schema.newly_required(old, new):
        if not has_default:
            yield Change(
                (schema.segment(name),), "newly required without a default", ratchetable=True
            )


RULE = PropertyRule(
    code="UG202",
    name="required-added",
    severity=Severity.ERROR,
    summary="A field became required without a default.",
    ratcheting="yes",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"required"}),
    harm=Harm.REFUSED_ON_WRITE,
)
