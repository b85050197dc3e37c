"""UG202 required-added

What it flags: a field that becomes required, or a new field that is required, with no
default, inside an object that exists on both sides.

Why it matters: stored objects without the field fail validation on every write, including
the operator's status updates (grafana/grafana-operator#1621). The apiserver never ratchets a
change of the required list, so no Kubernetes version softens this.

Allowed: the same field required with a default (required-added-with-default, info), or a
required field inside an object that is itself new.
"""

from __future__ import annotations

from collections.abc import Iterator

from upgrade_guard import schema
from upgrade_guard.findings import Change, Scope, Severity
from upgrade_guard.rules.base import Rule


def compare(old: schema.Node, new: schema.Node) -> Iterator[Change]:
    for name, has_default in schema.newly_required(old, new):
        if not has_default:
            yield Change((schema.segment(name),), "newly required without a default")


RULE = Rule(
    code="UG202",
    name="required-added",
    severity=Severity.ERROR,
    scope=Scope.PROPERTY,
    summary="A field became required without a default.",
    compare=compare,
    doc=__doc__ or "",
    handles=frozenset({"required"}),
)
